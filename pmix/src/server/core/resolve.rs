//! The requests OpenPMIx 5.0 clients added, answered from what the server already holds:
//! `PMIx_Resolve_peers` and `PMIx_Resolve_nodes` (v5.0 §5.4.1, §5.4.2), which 5.0 and 6.1
//! clients ask their server before resolving locally, and the cache refresh of a
//! `PMIx_Get` with `PMIX_GET_REFRESH_CACHE` (§5.3.1).
//!
//! Peers and nodes come from the namespaces the host registered: a job's `PMIX_LOCAL_PEERS`
//! on the node named (`PMIX_HOSTNAME` as a qualifier) and its `PMIX_NODE_LIST`, as the
//! client would read them from its job information. Any status but success sends an OpenPMIx
//! client to its own local resolution (6.1 `client/pmix_client_resolve.c:526-547,824-842`),
//! so what this server cannot tell (a namespace it does not know, a node none of its jobs
//! registered peers for) is `PMIX_ERR_NOT_FOUND`, never a guess. The
//! host is not asked (`PMIX_QUERY_RESOLVE_PEERS`, as OpenPMIx 6.1's server does first): a
//! host's queries of those keys are the client's to make.
//!
//! A refresh answers with the values the server holds of the process now, those the
//! requester may see: the data it committed (its node's scopes for a process on this node),
//! or what arrived from its node. OpenPMIx's client stores them and goes on with the get,
//! which asks the server again for anything still missing (and so reaches a direct modex).

use crate::model::{Info, Nspace, Proc, Rank, Status, Value, attr};
use crate::store::{JobRealms, Qualifiers};
use crate::wire::{OpReply, Reply, Tag};

use super::{ConnId, ServerCore};

impl ServerCore {
    /// `RESOLVE_PEERS`: the processes of `nspace` (every namespace's when it is empty) on
    /// `node` (this server's node when the client named none).
    pub(super) fn resolve_peers(
        &mut self,
        conn: ConnId,
        tag: Tag,
        node: Option<String>,
        nspace: Option<String>,
    ) {
        let reply = match self.peers_on(node, nspace) {
            Ok(procs) => OpReply::ResolvedPeers {
                status: Status::SUCCESS,
                procs,
            },
            Err((status, why)) => {
                tracing::debug!("resolve peers: {why}: {status:?}");
                OpReply::failure(crate::wire::Command::RESOLVE_PEERS, status)
            }
        };
        self.send(conn, tag, &Reply::Op(reply));
    }

    fn peers_on(
        &self,
        node: Option<String>,
        nspace: Option<String>,
    ) -> Result<Vec<Proc>, (Status, String)> {
        let store = &self.cx.store;
        let node = (node.filter(|n| !n.is_empty()))
            .or_else(|| store.hostname.clone())
            .ok_or((Status::ERR_BAD_PARAM, "no node named".to_owned()))?;
        let on_node = Qualifiers::from_info(&[Info::new(attr::HOSTNAME, node.clone())]);
        // `None`: the job registered no peers on that node.
        let peers = |realms: &JobRealms| -> Result<Option<Vec<Proc>>, (Status, String)> {
            let here = store.hostname.as_deref();
            let found = realms.lookup(
                attr::LOCAL_PEERS.wire_key(),
                Rank::WILDCARD,
                &on_node,
                None,
                here,
            );
            let ranks = match found {
                None => return Ok(None),
                Some(Value::String(None)) => return Ok(Some(Vec::new())),
                Some(Value::String(Some(ranks))) => ranks,
                Some(other) => {
                    let why = format!("{}'s local peers are {other:?}", realms.nspace);
                    return Err((Status::ERR_INVALID_VAL, why));
                }
            };
            let Ok(ranks) = ranks.as_str() else {
                let why = format!("{}'s local peers are {ranks:?}", realms.nspace);
                return Err((Status::ERR_INVALID_VAL, why));
            };
            (ranks.split(',').map(str::trim).filter(|r| !r.is_empty()))
                .map(|r| match r.parse() {
                    Ok(rank) => Ok(Proc::new(realms.nspace.clone(), Rank(rank))),
                    Err(_) => {
                        let why = format!("{}'s local peers hold {r:?}", realms.nspace);
                        Err((Status::ERR_INVALID_VAL, why))
                    }
                })
                .collect::<Result<Vec<Proc>, _>>()
                .map(Some)
        };
        let unknown = |what: String| (Status::ERR_NOT_FOUND, what);
        match nspace.filter(|n| !n.is_empty()) {
            Some(ns) => {
                let realms =
                    (store.job_view(&ns)).ok_or_else(|| unknown(format!("no namespace {ns:?}")))?;
                peers(&realms)?
                    .ok_or_else(|| unknown(format!("{ns:?} registered no peers on {node:?}")))
            }
            None => {
                let mut all: Option<Vec<Proc>> = None;
                for ns in store.namespaces.keys() {
                    if let Some(realms) = store.job_view(ns.as_str())
                        && let Some(procs) = peers(&realms)?
                    {
                        all.get_or_insert_with(Vec::new).extend(procs);
                    }
                }
                all.ok_or_else(|| unknown(format!("no job registered peers on {node:?}")))
            }
        }
    }

    /// `RESOLVE_NODE`: the nodes `nspace` runs on (every namespace's, each named once, when
    /// it is empty), comma-separated.
    pub(super) fn resolve_node(&mut self, conn: ConnId, tag: Tag, nspace: Option<String>) {
        let reply = match self.nodes_of(nspace) {
            Ok(nodes) => OpReply::ResolvedNode {
                status: Status::SUCCESS,
                nodes: Some(nodes),
            },
            Err((status, why)) => {
                tracing::debug!("resolve nodes: {why}: {status:?}");
                OpReply::failure(crate::wire::Command::RESOLVE_NODE, status)
            }
        };
        self.send(conn, tag, &Reply::Op(reply));
    }

    fn nodes_of(&self, nspace: Option<String>) -> Result<String, (Status, String)> {
        let store = &self.cx.store;
        let list = |ns: &str| -> Option<String> {
            let realms = store.job_view(ns)?;
            let here = store.hostname.as_deref();
            let none = Qualifiers::from_info(&[]);
            let found = realms.lookup(
                attr::NODE_LIST.wire_key(),
                Rank::WILDCARD,
                &none,
                None,
                here,
            );
            found.and_then(Value::as_str).map(str::to_owned)
        };
        match nspace.filter(|n| !n.is_empty()) {
            Some(ns) => {
                if store.job_view(&ns).is_none() {
                    return Err((Status::ERR_NOT_FOUND, format!("no namespace {ns:?}")));
                }
                list(&ns).ok_or_else(|| {
                    let why = format!("namespace {ns:?} was registered with no node list");
                    (Status::ERR_NOT_FOUND, why)
                })
            }
            None => {
                let mut nodes: Vec<String> = Vec::new();
                for ns in store.namespaces.keys().map(Nspace::as_str) {
                    for node in list(ns).unwrap_or_default().split(',') {
                        let node = node.trim();
                        if !node.is_empty() && !nodes.iter().any(|n| n == node) {
                            nodes.push(node.to_owned());
                        }
                    }
                }
                if nodes.is_empty() {
                    return Err((Status::ERR_NOT_FOUND, "no job registered nodes".to_owned()));
                }
                Ok(nodes.join(","))
            }
        }
    }

    /// `REFRESH_CACHE`: the values of `nspace`'s `rank` the server holds now, as the
    /// requester may see them.
    pub(super) fn refresh_cache(&mut self, conn: ConnId, tag: Tag, nspace: &str, rank: Rank) {
        let store = &self.cx.store;
        let reply = match Proc::try_new(nspace, rank) {
            Err(e) => {
                tracing::debug!("refresh of an invalid process {nspace:?}: {e}");
                OpReply::failure(crate::wire::Command::REFRESH_CACHE, Status::ERR_BAD_PARAM)
            }
            Ok(target) => {
                // The requester runs here: a process here shows it its node's scopes.
                match store.modex.visible(&target, store.is_local(&target)) {
                    Some(kvals) => OpReply::RefreshCache {
                        status: Status::SUCCESS,
                        kvals: kvals.to_vec(),
                    },
                    None => {
                        tracing::debug!("refresh of {target}: it has posted nothing here");
                        OpReply::failure(crate::wire::Command::REFRESH_CACHE, Status::ERR_NOT_FOUND)
                    }
                }
            }
        };
        self.send(conn, tag, &Reply::Op(reply));
    }
}
