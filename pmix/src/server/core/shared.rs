//! What every chapter of the server's core shares: the store, the connections and the
//! clients the host registered, and the outbox of actions for the driver.

use std::collections::{BTreeMap, VecDeque};

use crate::codec::BufferType;
use crate::model::{Info, Nspace, Proc, Rank, attr};
use crate::store::ServerStore;

use crate::wire::{PeerVersion, Reply, Tag};

use super::interface::{Action, ConnId};
use super::upcall::HostCall;

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
    /// The library version its connect message stated: which layouts it reads and writes
    /// (`wire::version`).
    pub(super) version: PeerVersion,
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
    /// The server's own identifier: sent to tools, the source of its group events.
    pub(super) id: Proc,
    actions: VecDeque<Action>,
    next_op: u64,
    /// Connections closed while an input was handled, whose state the chapters have yet to
    /// forget ([`Shared::take_closed`]).
    closed: Vec<ConnId>,
}

impl Shared {
    pub(super) fn new(store: ServerStore, version: &str) -> Self {
        Shared {
            store,
            conns: BTreeMap::new(),
            clients: BTreeMap::new(),
            version: version.to_owned(),
            id: Proc {
                nspace: Nspace::new("pmix-rs-server").expect("a short ASCII namespace is valid"),
                rank: Rank(0),
            },
            actions: VecDeque::new(),
            next_op: 0,
            closed: Vec::new(),
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

    /// Ask the host for `call`; its answer comes back with the returned op.
    pub(super) fn call_host(&mut self, call: HostCall) -> u64 {
        let op = self.op();
        self.push(Action::Host { op, call });
        op
    }

    /// Arm a timer of `after_s` seconds; it expires with the returned op.
    pub(super) fn timer(&mut self, after_s: u32) -> u64 {
        let op = self.op();
        self.push(Action::Timer { op, after_s });
        op
    }

    /// Send `reply` to the request `tag` of `conn`, encoded as that peer reads: in its
    /// buffer type and its version's layouts. A peer gone is not answered; a reply that
    /// cannot be encoded closes the connection.
    pub(super) fn send(&mut self, conn: ConnId, tag: Tag, reply: &Reply) {
        let Some(c) = self.conns.get(&conn) else {
            return; // the requester is gone; nothing to answer
        };
        let dialect = c.version.dialect();
        let readable;
        let reply = if reply.any_value(&|v| !dialect.can_read(v)) {
            // OpenPMIx 6.1 fails a whole message holding a type it no longer has (the
            // statistics 61–64): leave those values out, so the rest arrives.
            let mut trimmed = reply.clone();
            let left_out = trimmed.retain_values(&|v| dialect.can_read(v));
            tracing::warn!(
                "{}: {left_out} value(s) of types OpenPMIx {} cannot read left out of a reply",
                c.proc,
                c.version
            );
            readable = trimmed;
            &readable
        } else {
            reply
        };
        match reply.encode_for(c.buffer_type, dialect) {
            Ok(payload) => self.push(Action::Send { conn, tag, payload }),
            Err(e) => self.close(conn, format!("cannot encode a reply: {e}")),
        }
    }

    /// Close `conn`. The chapters forget it once the current input is handled.
    pub(super) fn close(&mut self, conn: ConnId, reason: String) {
        self.push(Action::Close { conn, reason });
        self.closed.push(conn);
    }

    /// A connection closed by [`Shared::close`] that the chapters have not forgotten yet.
    pub(super) fn take_closed(&mut self) -> Option<ConnId> {
        self.closed.pop()
    }

    /// `info` with the `PMIX_USERID` and `PMIX_GRPID` of the requester on `conn` added, as
    /// the standard requires of the library for requests it passes to the host (§12.4.1,
    /// §13): the identity the kernel vouched for at connect (a tool's gid only where the
    /// transport told it), so that hosts can decide what the requester may do.
    /// Ids the requester wrote itself are dropped: they would be claims.
    pub(super) fn with_ids(&self, conn: ConnId, mut info: Vec<Info>) -> Vec<Info> {
        info.retain(|i| !i.is(attr::USERID) && !i.is(attr::GRPID));
        if let Some(c) = self.conns.get(&conn) {
            info.push(Info::new(attr::USERID, c.uid));
            if let Some(gid) = c.gid {
                info.push(Info::new(attr::GRPID, gid));
            }
        }
        info
    }

    /// The next action to perform, in order.
    pub(super) fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }
}
