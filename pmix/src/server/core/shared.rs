//! What every chapter of the server's core shares: the store, the connections and the
//! clients the host registered, and the outbox of actions for the driver.

use std::collections::{BTreeMap, VecDeque};

use crate::codec::BufferType;
use crate::model::Proc;
use crate::store::ServerStore;

use super::interface::{Action, ConnId};

#[derive(Clone, Debug)]
pub(super) struct Conn {
    pub(super) proc: Proc,
    pub(super) buffer_type: BufferType,
    /// A tool or launcher rather than a registered client.
    pub(super) tool: bool,
    /// Who the peer is: the uid the kernel vouched for, the gid it vouched for or the host
    /// registered (a tool's over TCP is unknown).
    pub(super) uid: u32,
    pub(super) gid: Option<u32>,
}

#[derive(Clone, Debug)]
pub(super) struct Registration {
    pub(super) uid: u32,
    pub(super) gid: u32,
    pub(super) conn: Option<ConnId>,
}

/// The state the chapters share.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) store: ServerStore,
    pub(super) conns: BTreeMap<ConnId, Conn>,
    pub(super) clients: BTreeMap<Proc, Registration>,
    /// This library's version, sent in job information.
    pub(super) version: String,
    actions: VecDeque<Action>,
    next_op: u64,
}

impl Shared {
    pub(super) fn new(store: ServerStore, version: &str) -> Self {
        Shared {
            store,
            conns: BTreeMap::new(),
            clients: BTreeMap::new(),
            version: version.to_owned(),
            actions: VecDeque::new(),
            next_op: 0,
        }
    }

    /// A new operation number: for a host call, a timer or a direct-modex request.
    pub(super) fn op(&mut self) -> u64 {
        self.next_op += 1;
        self.next_op
    }

    /// Queue an action for the driver.
    pub(super) fn push(&mut self, action: Action) {
        self.actions.push_back(action);
    }

    /// The next action to perform, in order.
    pub(super) fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }
}
