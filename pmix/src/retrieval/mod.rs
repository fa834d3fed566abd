//! The retrieval rules of `PMIx_Get` (PMIx v5.0 §5.3, §6.2): who answers a get, and when.
//!
//! Two decision functions, one per side, each a pure function of the data at hand:
//!
//! - [`client_get`]: the client's step — its cache (rules, N-01..N-03), or a
//!   request to its server;
//! - [`server_get`]: the server's step — its store (N-04, R-03), an immediate
//!   `PMIX_ERR_NOT_FOUND` (N-05, N-09, R-04, R-07), holding the request until the target
//!   commits (N-06, N-07), or a direct-modex request to the host (N-08, R-05; and for a
//!   remote process whenever the get asks for a refresh, N-01).
//!
//! The drivers act on the decisions; a held request is decided again whenever its target
//! commits, and ends with `PMIX_ERR_TIMEOUT` when its `PMIX_TIMEOUT` expires (G-11).
//! Rule ids are those of `spec-vectors/inventory/retrieval_rules.tsv`; each has a unit test
//! below named after it.

use std::collections::BTreeMap;

use crate::model::{
    Info, InfoDirectives, Key, Kval, Nspace, Proc, Rank, Scope, Status, Value, attr,
};
use crate::store::modex::KvList;
use crate::store::{Found, JobRealms, Qualifiers, ServerStore, is_reserved};
use crate::wire::ProcData;

/// The directives of a get's info array that change where the search stops.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Directives {
    /// `PMIX_OPTIONAL`: stop after the client's cache (N-03).
    pub optional: bool,
    /// `PMIX_IMMEDIATE`: stop after the local server (N-05, R-04).
    pub immediate: bool,
    /// `PMIX_GET_REFRESH_CACHE`: ask the server first, then stop (N-01).
    pub refresh_cache: bool,
    /// `PMIX_TIMEOUT` in seconds; 0 or absent means none (G-11).
    pub timeout_s: Option<u32>,
    /// `PMIX_DATA_SCOPE`: only values posted in this scope (SC-07).
    pub scope: Option<Scope>,
    /// The realm directives and qualifiers.
    pub qualifiers: Qualifiers,
    /// The key of an info marked `PMIX_INFO_REQD` that a get does not support (G-13).
    pub unsupported_required: Option<String>,
}

/// The info keys a get understands (G-12). `PMIX_GET_STATIC_VALUES` and
/// `PMIX_GET_POINTER_VALUES` are about C memory: the C ABI honours them, the Rust API always
/// returns owned values. `PMIX_WAIT` is passed on to the host.
const GET_DIRECTIVES: &[&str] = &[
    attr::OPTIONAL.wire_key(),
    attr::IMMEDIATE.wire_key(),
    attr::GET_REFRESH_CACHE.wire_key(),
    attr::TIMEOUT.wire_key(),
    attr::DATA_SCOPE.wire_key(),
    attr::SESSION_INFO.wire_key(),
    attr::JOB_INFO.wire_key(),
    attr::APP_INFO.wire_key(),
    attr::NODE_INFO.wire_key(),
    attr::PROC_INFO.wire_key(),
    attr::SESSION_ID.wire_key(),
    attr::APPNUM.wire_key(),
    attr::HOSTNAME.wire_key(),
    attr::NODEID.wire_key(),
    attr::GET_STATIC_VALUES.wire_key(),
    attr::GET_POINTER_VALUES.wire_key(),
    attr::WAIT.wire_key(),
    attr::GROUP_CONTEXT_ID.wire_key(),
    attr::DEVICE_TYPE.wire_key(),
    attr::DEVICE_ID.wire_key(),
];

impl Directives {
    pub(crate) fn from_info(info: &[Info]) -> Directives {
        let mut d = Directives {
            qualifiers: Qualifiers::from_info(info),
            ..Directives::default()
        };
        for i in info {
            let k = i.key.as_str();
            let on = || i.value.as_bool().unwrap_or(true);
            if k == attr::OPTIONAL.wire_key() {
                d.optional = on();
            } else if k == attr::IMMEDIATE.wire_key() {
                d.immediate = on();
            } else if k == attr::GET_REFRESH_CACHE.wire_key() {
                d.refresh_cache = on();
            } else if k == attr::TIMEOUT.wire_key() {
                d.timeout_s = i
                    .value
                    .to_i64()
                    .filter(|t| *t > 0)
                    .and_then(|t| u32::try_from(t).ok());
            } else if k == attr::DATA_SCOPE.wire_key()
                && let Value::Scope(s) = i.value
            {
                d.scope = Some(s);
            }
            if i.flags.contains(InfoDirectives::REQD)
                && !GET_DIRECTIVES.contains(&k)
                && d.unsupported_required.is_none()
            {
                d.unsupported_required = Some(k.to_owned());
            }
        }
        d
    }
}

/// The client's decision.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ClientStep {
    /// The get completes here.
    Done(Result<Value, Status>),
    /// Ask the server; `add_immediate` when the server must not wait (N-01).
    AskServer { add_immediate: bool },
}

/// What a client holds locally: the realms of namespaces it received, the values of other
/// processes it fetched, and its own posted and internal values.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClientCache {
    pub realms: BTreeMap<Nspace, JobRealms>,
    /// Indexed by key once a process has many (a peer that posted a thousand keys is still
    /// searched in O(log n) on every cached get).
    pub procs: BTreeMap<Proc, KvList>,
}

/// The registration a reserved key is searched in: the target's namespace, or with a
/// `PMIX_SESSION_ID` qualifier the session it names (RS-03, RS-06); a namespace of another
/// session than the one named is not searched (RJ-03, RP-04).
pub(crate) fn realms_for<'a>(
    all: &'a BTreeMap<Nspace, JobRealms>,
    nspace: &str,
    key: &str,
    q: &Qualifiers,
) -> Option<&'a JobRealms> {
    let of_ns = all
        .iter()
        .find(|(n, _)| n.as_str() == nspace)
        .map(|(_, r)| r);
    let Some(sid) = q.session_id else {
        return of_ns;
    };
    let in_session = |r: &&JobRealms| r.session_id.is_none_or(|s| s == sid);
    let realm = q.realm.unwrap_or_else(|| crate::store::default_realm(key));
    if realm == crate::store::Realm::Session {
        // Any namespace of that session knows the session's values.
        of_ns
            .filter(|r| r.session_id == Some(sid))
            .or_else(|| all.values().find(|r| r.session_id == Some(sid)))
            .or(of_ns.filter(in_session))
    } else {
        of_ns.filter(in_session)
    }
}

/// Check a `PMIx_Put` (P-01, P-02): a reserved key is refused, a scope this library does not
/// know is not supported.
pub(crate) fn check_put(scope: Scope, key: &str) -> Result<Key, Status> {
    let key = Key::new(key).map_err(|_| Status::ERR_BAD_PARAM)?;
    if is_reserved(key.as_str()) {
        return Err(Status::ERR_BAD_PARAM); // P-01
    }
    check_put_scope(scope)?;
    Ok(key)
}

/// [`check_put`] for a client that accepts the puts programs written for OpenPMIx 4.2 make
/// (`ClientConfig::accept_reserved_puts`): a reserved key the standard or OpenPMIx defines as
/// an attribute is accepted, as OpenPMIx 4.2 accepts it (Open MPI 4.1 puts `pmix.hname` and
/// `pmix.cpuset`); any other reserved key is still refused (P-01), since no program can mean
/// an attribute that does not exist.
pub(crate) fn check_put_defined_allowed(scope: Scope, key: &str) -> Result<Key, Status> {
    let key = Key::new(key).map_err(|_| Status::ERR_BAD_PARAM)?;
    if is_reserved(key.as_str()) && crate::model::attr::by_key(key.as_str()).is_none() {
        return Err(Status::ERR_BAD_PARAM); // P-01
    }
    check_put_scope(scope)?;
    Ok(key)
}

fn check_put_scope(scope: Scope) -> Result<(), Status> {
    if !matches!(
        scope,
        Scope::LOCAL | Scope::REMOTE | Scope::GLOBAL | Scope::INTERNAL
    ) {
        return Err(Status::ERR_NOT_SUPPORTED); // P-02
    }
    Ok(())
}

/// The target of a get: `proc`, or the caller itself when none is given (G-01).
pub(crate) fn get_target(proc: Option<&Proc>, me: &Proc) -> Proc {
    proc.cloned().unwrap_or_else(|| me.clone())
}

impl ClientCache {
    pub(crate) fn realms(&self, nspace: &str) -> Option<&JobRealms> {
        self.realms
            .iter()
            .find(|(n, _)| n.as_str() == nspace)
            .map(|(_, r)| r)
    }

    /// Store (or replace) values of a process.
    pub(crate) fn store(&mut self, proc: &Proc, kvals: Vec<Kval>) {
        let slot = self.procs.entry(proc.clone()).or_default();
        for kv in kvals {
            slot.upsert(kv);
        }
    }

    /// Keep what the server answered to a get of `key` (the values of each process it
    /// sent). The answer to a get that narrows it (`q`: a realm, a target within one, some
    /// devices) need not be the key's value for the process named: kept under the process,
    /// it would answer later gets of other realms (an application other than the one asked
    /// for, RA-01..RA-04), so it is not kept.
    pub(crate) fn store_answer(
        &mut self,
        proc: &Proc,
        mut kvals: Vec<Kval>,
        key: &str,
        q: &Qualifiers,
    ) {
        if q.narrows() {
            kvals.retain(|k| k.key.as_str() != key);
        }
        self.store(proc, kvals);
    }

    fn find_value(&self, proc: &Proc, key: &str) -> Option<&Value> {
        self.procs
            .get(proc)
            .and_then(|kv| kv.get(key))
            .map(|k| &k.value)
    }

    /// Search a reserved key by the realm rules.
    pub(crate) fn find_reserved(
        &self,
        me: &Proc,
        target: &Proc,
        key: &str,
        q: &Qualifiers,
    ) -> Option<Value> {
        // A value the server sent for this process or namespace, unless the get narrows its
        // answer: the plain value need not be the answer.
        if !q.narrows()
            && let Some(v) = self.find_value(target, key)
        {
            return Some(v.clone());
        }
        let realms = realms_for(&self.realms, target.nspace.as_str(), key, q)?;
        let caller = (me.nspace == target.nspace).then_some(me.rank);
        let host = self
            .realms(me.nspace.as_str())
            .and_then(|r| r.procs.get(&me.rank.0))
            .and_then(|p| {
                p.iter()
                    .find(|i| i.key.as_str() == attr::HOSTNAME.wire_key())
            })
            .and_then(|i| i.value.as_str());
        let found = realms.lookup(key, target.rank, q, caller, host)?;
        Some(q.answer(key, found.clone()))
    }
}

/// The client's step of a get of `key` from `target` by `me` (v5.0 §5.3 steps 1–2, §6.2).
pub(crate) fn client_get(
    cache: &ClientCache,
    me: &Proc,
    target: &Proc,
    key: &str,
    d: &Directives,
) -> ClientStep {
    if d.unsupported_required.is_some() {
        return ClientStep::Done(Err(Status::ERR_NOT_SUPPORTED)); // G-13
    }
    // RP-02: PMIX_PROCID ignores the proc and answers the caller's identifier.
    if key == attr::PROCID.wire_key() {
        return ClientStep::Done(Ok(Value::Proc(me.clone())));
    }
    // RP-03: the namespace and rank of a process are in its name.
    if key == attr::NSPACE.wire_key() && target.nspace == me.nspace {
        return ClientStep::Done(Ok(Value::string(target.nspace.as_str())));
    }
    if key == attr::RANK.wire_key() && target.rank.is_valid() && target.nspace == me.nspace {
        return ClientStep::Done(Ok(Value::Rank(target.rank)));
    }
    // The standard is silent on `PMIX_RANK` of the caller's namespace with the rank
    // `PMIX_RANK_INVALID`; OpenPMIx's clients (4.2 to 6.1) answer the caller's own rank, and
    // 6.1's examples ask for it so.
    if key == attr::RANK.wire_key() && target.rank == Rank::INVALID && target.nspace == me.nspace {
        return ClientStep::Done(Ok(Value::Rank(me.rank)));
    }
    // v5.0 §14.2.5: the groups a process belongs to change after it started; its server
    // tracks them, and has them or not.
    if key == attr::GROUP_NAMES.wire_key() {
        return ClientStep::AskServer {
            add_immediate: true,
        };
    }
    // Latest draft §14.2.5: a value posted for a group is kept by the server with the
    // group's context id (the cache keeps no qualifiers); it is there or it is not.
    if d.qualifiers.context_id.is_some() {
        return ClientStep::AskServer {
            add_immediate: true,
        };
    }
    // SC-07: a scope-restricted get is decided by the server, which knows the scopes.
    if d.scope.is_some() && !is_reserved(key) && target != me {
        return ClientStep::AskServer {
            add_immediate: false,
        };
    }
    if is_reserved(key) || target.rank == Rank::WILDCARD {
        if d.refresh_cache {
            return ClientStep::AskServer {
                add_immediate: true,
            };
        }
        if let Some(v) = cache.find_reserved(me, target, key, &d.qualifiers) {
            return ClientStep::Done(Ok(v));
        }
        if target.nspace == me.nspace {
            return ClientStep::Done(Err(Status::ERR_NOT_FOUND));
        }
        return ClientStep::AskServer {
            add_immediate: false,
        };
    }
    if d.refresh_cache {
        // N-01: the server decides afresh, fetching a remote process's values again from
        // the host (§5.4.2), so the cache is not consulted and the host not ruled out; the
        // server holds no refresh for a key that is missing.
        return ClientStep::AskServer {
            add_immediate: false,
        };
    }
    if let Some(v) = cache.find_value(target, key) {
        return ClientStep::Done(Ok(v.clone())); // N-02
    }
    if d.optional {
        return ClientStep::Done(Err(Status::ERR_NOT_FOUND)); // N-03
    }
    ClientStep::AskServer {
        add_immediate: false,
    }
}

/// The server's decision.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ServerStep {
    /// Answer now.
    Reply { status: Status, data: Vec<ProcData> },
    /// Hold the request until the target posts data, or until the timeout (N-06, N-07).
    Wait,
    /// Ask the host for the target's data (direct modex: N-08, R-05, a refresh N-01); the
    /// server decides again with what it brings, without asking twice.
    AskHost,
}

impl ServerStep {
    fn status(status: Status) -> ServerStep {
        ServerStep::Reply {
            status,
            data: Vec::new(),
        }
    }
}

/// The server's step of a get sent by the local client `requester` for `key` (or for all data,
/// with `None`) of `target` (v5.0 §5.3 step 3, §6.2).
///
/// A value `target` posted for a group (latest draft §14.2.5, [`crate::store::qualified`]) is
/// found by a get qualified with the group's `PMIX_GROUP_CONTEXT_ID`, which looks nowhere
/// else and never waits, or by an unqualified get that finds the key nowhere else.
pub(crate) fn server_get(
    store: &ServerStore,
    requester: &Proc,
    target: &Proc,
    key: Option<&str>,
    d: &Directives,
    host_has_dmodex: bool,
) -> ServerStep {
    if d.unsupported_required.is_some() {
        return ServerStep::status(Status::ERR_NOT_SUPPORTED); // G-13
    }
    let posted = |context_id| {
        let value = store.group_values.find(target, key?, context_id)?;
        Some(ServerStep::Reply {
            status: Status::SUCCESS,
            data: vec![ProcData {
                proc: target.clone(),
                kvals: vec![value.to_kval()],
            }],
        })
    };
    if let Some(id) = d.qualifiers.context_id {
        return posted(Some(id)).unwrap_or(ServerStep::status(Status::ERR_NOT_FOUND));
    }
    match unqualified_get(store, requester, target, key, d, host_has_dmodex) {
        ServerStep::Reply { status, .. } if status == Status::ERR_NOT_FOUND => {
            posted(None).unwrap_or(ServerStep::status(status))
        }
        step => step,
    }
}

/// [`server_get`] of the values of no group.
fn unqualified_get(
    store: &ServerStore,
    requester: &Proc,
    target: &Proc,
    key: Option<&str>,
    d: &Directives,
    host_has_dmodex: bool,
) -> ServerStep {
    let ns = target.nspace.as_str();
    let reserved = key.is_some_and(is_reserved) || target.rank == Rank::WILDCARD;
    if reserved {
        let Some(key) = key else {
            return ServerStep::status(Status::ERR_BAD_PARAM);
        };
        let Some(realms) = realms_for(&store.namespaces, ns, key, &d.qualifiers) else {
            // a namespace this server has never seen.
            return if d.immediate || !host_has_dmodex {
                ServerStep::status(Status::ERR_NOT_FOUND)
            } else {
                ServerStep::AskHost
            };
        };
        let caller = (requester.nspace == target.nspace).then_some(requester.rank);
        let answer = |r: &JobRealms| {
            r.lookup(
                key,
                target.rank,
                &d.qualifiers,
                caller,
                store.hostname.as_deref(),
            )
            .map(|v| d.qualifiers.answer(key, v.clone()))
        };
        // Resources registered apart from any namespace are every job's, unless its own
        // registration says otherwise (v5.0 §17.2.5); a non-reserved key with a wildcard
        // rank may have been posted by the host.
        let found = answer(realms)
            .or_else(|| {
                (!store.resources.is_empty())
                    .then(|| answer(&store.resource_realms(realms.nspace.clone())))
                    .flatten()
            })
            .or_else(|| {
                store
                    .modex
                    .visible(target, true)
                    .and_then(|kv| kv.iter().find(|k| k.key.as_str() == key))
                    .map(|k| k.value.clone())
            });
        return match found {
            Some(value) => ServerStep::Reply {
                status: Status::SUCCESS,
                data: vec![ProcData {
                    proc: target.clone(),
                    kvals: vec![Kval {
                        key: crate::model::Key::from_checked(key.to_owned()),
                        value,
                    }],
                }],
            },
            None => ServerStep::status(Status::ERR_NOT_FOUND),
        };
    }
    // N-06: a globally unique key whose owner is unknown.
    if target.rank == Rank::UNDEF {
        if let Some((owner, _)) = key.and_then(|k| store.modex.owner_of(ns, k, true)) {
            return reply_with_data(store, &owner, true);
        }
        return if d.immediate {
            ServerStep::status(Status::ERR_NOT_FOUND)
        } else {
            ServerStep::Wait
        };
    }
    let same_node = store.is_local(target);
    // N-01, §5.4.2 (PMIX_GET_REFRESH_CACHE): a remote process's values are fetched again,
    // whatever copy is here, since it may have committed new ones; a local process's are
    // current already. PMIX_IMMEDIATE rules the host out.
    if d.refresh_cache && !same_node && host_has_dmodex && !d.immediate {
        return ServerStep::AskHost;
    }
    let found = match key {
        Some(k) if d.scope.is_some() => match store.modex.find(target, k, same_node) {
            // SC-07: only values posted with the requested scope are searched; a value posted
            // in another scope is not waited for.
            Found::Value(v) if store.modex.posted_scope(target, k) == d.scope => Found::Value(v),
            Found::Value(_) => return ServerStep::status(Status::ERR_NOT_FOUND),
            other => other,
        },
        Some(k) => store.modex.find(target, k, same_node),
        None if store.modex.has_data(target) => Found::Value(Value::Undef),
        None => Found::Missing,
    };
    match found {
        Found::Value(_) => reply_with_data(store, target, same_node), // N-04
        Found::OutsideScope => ServerStep::status(Status::ERR_EXISTS_OUTSIDE_SCOPE), // SC-06
        Found::Missing if d.immediate => ServerStep::status(Status::ERR_NOT_FOUND), // N-05
        // N-01: a refresh updates the client's cache from what is here (or what the host
        // just brought); it never waits.
        Found::Missing if d.refresh_cache => ServerStep::status(Status::ERR_NOT_FOUND),
        Found::Missing if same_node => {
            if store.gone.contains(target) {
                // The target finalized: it will never post the key.
                ServerStep::status(Status::ERR_NOT_FOUND)
            } else {
                ServerStep::Wait // N-07
            }
        }
        Found::Missing if host_has_dmodex => ServerStep::AskHost, // N-08
        Found::Missing => ServerStep::status(Status::ERR_NOT_FOUND), // N-09
    }
}

/// Every value of `proc` the requester may see, so that its client caches them all.
fn reply_with_data(store: &ServerStore, proc: &Proc, same_node: bool) -> ServerStep {
    let kvals = store
        .modex
        .visible(proc, same_node)
        .unwrap_or_default()
        .to_vec();
    ServerStep::Reply {
        status: Status::SUCCESS,
        data: vec![ProcData {
            proc: proc.clone(),
            kvals,
        }],
    }
}

#[cfg(test)]
mod tests;
