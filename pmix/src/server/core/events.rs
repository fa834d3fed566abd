//! The server's part in event notification (PMIx v5.0 §10.1): which connected processes an
//! event goes to, the cache that hands past events to processes registering later, and what
//! goes to the host.
//!
//! - A client's registration tells the server the codes it wants (all codes for a default
//!   handler); the server forwards an event only to processes in its range that asked for
//!   its code, and never back to its source (the source's own library delivered it already).
//! - Every event is kept (up to [`CACHE_LIMIT`], oldest dropped first) unless it carries
//!   `PMIX_EVENT_DO_NOT_CACHE`; a process that registers later receives the kept events it
//!   has not seen, in the order they were raised (§10.1.8: "servers must cache events").
//! - A client's event whose range reaches beyond this node (`RM`, `NAMESPACE`, `SESSION`,
//!   `GLOBAL`, `CUSTOM`) also goes to the host's `notify_event`; an event the host injected
//!   ([`ServerCore::notify_event`]) is never sent back to it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::events::Event;
use crate::model::{DataRange, Info, Proc, Status};
use crate::wire::{Notification, Reply, Tag};

use super::{Action, ConnId, HostCall, Pending, ServerCore};

/// How many past events the server keeps for later registrants.
pub(crate) const CACHE_LIMIT: usize = 256;

/// The server's event state.
#[derive(Debug, Default)]
pub(super) struct ServerEvents {
    /// The code lists each connection registered (an empty list: every code).
    registrations: BTreeMap<ConnId, Vec<Vec<Status>>>,
    cache: VecDeque<Cached>,
}

#[derive(Debug)]
struct Cached {
    event: Event,
    /// The processes it was already sent to.
    delivered: BTreeSet<Proc>,
}

impl ServerEvents {
    fn wants(&self, conn: ConnId, event: &Event) -> bool {
        self.registrations.get(&conn).is_some_and(|regs| {
            regs.iter().any(|codes| {
                if codes.is_empty() {
                    !event.non_default()
                } else {
                    codes.contains(&event.status)
                }
            })
        })
    }

    pub(super) fn forget(&mut self, conn: ConnId) {
        self.registrations.remove(&conn);
    }
}

/// A code list in the one form registrations are compared in: sorted, each code once (as
/// the client's own registry keeps them).
fn normal_form(mut codes: Vec<Status>) -> Vec<Status> {
    codes.sort_unstable_by_key(|c| c.0);
    codes.dedup();
    codes
}

impl ServerCore {
    /// `REGEVENTS`: note the codes, accept, then replay the cached events the new
    /// registration wants.
    pub(super) fn register_events(&mut self, conn: ConnId, tag: Tag, codes: Vec<Status>) {
        self.events
            .registrations
            .entry(conn)
            .or_default()
            .push(normal_form(codes));
        self.send(conn, tag, &Reply::Status(Status::SUCCESS));
        let Some(me) = self.conns.get(&conn).map(|c| c.proc.clone()) else {
            return;
        };
        let wanted: Vec<usize> = (0..self.events.cache.len())
            .filter(|&i| {
                let c = &self.events.cache[i];
                !c.delivered.contains(&me)
                    && c.event.source != me
                    && c.event.reaches(&me)
                    && self.events.wants(conn, &c.event)
            })
            .collect();
        for i in wanted {
            let event = self.events.cache[i].event.clone();
            self.push_event(conn, &event);
            self.events.cache[i].delivered.insert(me.clone());
        }
    }

    /// `DEREGEVENTS`: one registration of exactly these codes is gone.
    pub(super) fn deregister_events(&mut self, conn: ConnId, codes: &[Status]) {
        let codes = normal_form(codes.to_vec());
        if let Some(regs) = self.events.registrations.get_mut(&conn)
            && let Some(at) = regs.iter().position(|r| *r == codes)
        {
            regs.remove(at);
        }
    }

    /// `NOTIFY` from client `me`: accept (or refuse a malformed range), pass it to the local
    /// processes in range and, when the range goes beyond this node, to the host. A
    /// `PMIX_GROUP_CONSTRUCT_COMPLETE` also makes its group known here.
    pub(super) fn client_notify(
        &mut self,
        conn: ConnId,
        tag: Tag,
        me: &Proc,
        status: Status,
        range: DataRange,
        info: Vec<Info>,
    ) {
        let event = Event {
            status,
            source: me.clone(),
            range,
            info,
        };
        if let Err(s) = event.check() {
            self.send(conn, tag, &Reply::Status(s));
            return;
        }
        self.send(conn, tag, &Reply::Status(Status::SUCCESS));
        // An inviting process announces the group it assembled ([`super::announced`]).
        self.group_announced(&event);
        let beyond_node = !matches!(
            range,
            DataRange::LOCAL | DataRange::PROC_LOCAL | DataRange::UNDEF
        );
        if beyond_node {
            let call = HostCall::NotifyEvent {
                status,
                source: me.clone(),
                range,
                info: event.info.clone(),
            };
            self.call_host(Pending::Ignore, call);
        }
        self.distribute(event);
    }

    /// `PMIx_Notify_event` in the server (the host injecting an event, or relaying one from
    /// another node): to the local processes in range that registered for it. A malformed
    /// range is `PMIX_ERR_BAD_PARAM`.
    ///
    /// A group event another server raised, and the host's word that processes terminated
    /// elsewhere, also move this server's groups and invitations on
    /// ([`ServerCore::relayed_group_event`]).
    pub fn notify_event(&mut self, event: Event) -> Result<(), Status> {
        event.check()?;
        self.distribute(event.clone());
        self.relayed_group_event(&event);
        Ok(())
    }

    pub(super) fn distribute(&mut self, event: Event) {
        let targets: Vec<(ConnId, Proc)> = self
            .conns
            .iter()
            .filter(|(_, c)| c.proc != event.source && event.reaches(&c.proc))
            .filter(|(id, _)| self.events.wants(**id, &event))
            .map(|(id, c)| (*id, c.proc.clone()))
            .collect();
        let mut delivered = BTreeSet::new();
        for (conn, proc) in targets {
            self.push_event(conn, &event);
            delivered.insert(proc);
        }
        if !event.do_not_cache() {
            if self.events.cache.len() == CACHE_LIMIT {
                self.events.cache.pop_front();
            }
            self.events.cache.push_back(Cached { event, delivered });
        }
    }

    fn push_event(&mut self, conn: ConnId, event: &Event) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        match Notification::from(event).encode(c.buffer_type) {
            Ok(payload) => self.actions.push_back(Action::Send {
                conn,
                tag: Tag::NOTIFY,
                payload,
            }),
            Err(e) => tracing::warn!("cannot encode an event for connection {conn}: {e}"),
        }
    }
}
