//! What a server knows: the realms of each registered namespace, the committed data of
//! processes, the values processes posted for their groups, and which processes are its
//! local clients. Sans-IO.

pub mod modex;
pub mod published;
pub mod qualified;
pub mod realm;

use std::collections::{BTreeMap, BTreeSet};

pub use modex::{Found, ModexStore};
pub use qualified::GroupValues;
pub use realm::{JobRealms, Qualifiers, Realm, default_realm, is_reserved};

use crate::model::{Nspace, Proc};

/// The server's data: namespaces, committed values, local clients.
#[derive(Clone, Debug, Default)]
pub struct ServerStore {
    pub namespaces: BTreeMap<Nspace, JobRealms>,
    pub modex: ModexStore,
    /// What processes posted for the groups they constructed, by context id.
    pub group_values: GroupValues,
    /// The processes on this node: registered as clients (`PMIx_server_register_client`) or
    /// listed in their namespace's `PMIX_LOCAL_PEERS` for this node. A fence waits for all of
    /// them, even for those whose client registration has not happened yet.
    pub local: BTreeSet<Proc>,
    /// Local clients that finalized or disconnected: they will post nothing more.
    pub gone: BTreeSet<Proc>,
    /// The name of the node this server runs on.
    pub hostname: Option<String>,
}

impl ServerStore {
    pub fn realms(&self, nspace: &str) -> Option<&JobRealms> {
        self.namespaces
            .iter()
            .find(|(n, _)| n.as_str() == nspace)
            .map(|(_, r)| r)
    }

    /// Whether a process is a client of this server (on this node).
    pub fn is_local(&self, proc: &Proc) -> bool {
        self.local.contains(proc)
    }

    /// Record the local peers a namespace's registration lists for this node.
    pub fn add_registered_local_peers(&mut self, nspace: &Nspace) {
        let Some(realms) = self.namespaces.get(nspace) else {
            return;
        };
        let peers = realms.lookup(
            crate::model::attr::LOCAL_PEERS.wire_key(),
            crate::model::Rank::WILDCARD,
            &Qualifiers::default(),
            None,
            self.hostname.as_deref(),
        );
        let Some(list) = peers.and_then(crate::model::Value::as_str) else {
            return;
        };
        let ranks: Vec<u32> = list
            .split(',')
            .filter_map(|r| r.trim().parse().ok())
            .collect();
        for r in ranks {
            self.local
                .insert(Proc::new(nspace.clone(), crate::model::Rank(r)));
        }
    }

    /// The local processes of a namespace, in rank order.
    pub fn local_ranks(&self, nspace: &str) -> Vec<Proc> {
        self.local
            .iter()
            .filter(|p| p.nspace.as_str() == nspace)
            .cloned()
            .collect()
    }
}
