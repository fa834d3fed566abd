//! What a server knows: the realms of each registered namespace, the committed data of
//! processes, and which processes are its local clients. Sans-IO.

pub mod modex;
pub mod realm;

use std::collections::{BTreeMap, BTreeSet};

pub use modex::{Found, ModexStore};
pub use realm::{JobRealms, Qualifiers, Realm, default_realm, is_reserved};

use crate::model::{Nspace, Proc};

/// The server's data: namespaces, committed values, local clients.
#[derive(Clone, Debug, Default)]
pub struct ServerStore {
    pub namespaces: BTreeMap<Nspace, JobRealms>,
    pub modex: ModexStore,
    /// Processes registered as clients of this server (`PMIx_server_register_client`).
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

    /// The local clients of a namespace, in rank order.
    pub fn local_ranks(&self, nspace: &str) -> Vec<Proc> {
        self.local
            .iter()
            .filter(|p| p.nspace.as_str() == nspace)
            .cloned()
            .collect()
    }
}
