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
//! - The host is asked to watch a code (`register_events`, v5.0 §17.3.14) the first time a
//!   client registers for it, when it is an environmental code (`PMIX_EVENT_SYS_BASE` down to
//!   `PMIX_EVENT_SYS_OTHER`) or lies outside the standard's codes (positive, or below
//!   `PMIX_EXTERNAL_ERR_BASE`): the host sends the other events of a job unasked. The
//!   client's registration is answered once the host has answered; a host that does not
//!   watch codes (`PMIX_ERR_NOT_SUPPORTED`, the default) leaves the library serving the
//!   registration alone, another error fails it and leaves nothing registered. When no
//!   client is registered for such a code any more (deregistered, or gone), the host is told
//!   (`deregister_events`, §17.3.15). A default handler names no code and asks nothing of the
//!   host.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::events::Event;
use crate::model::{Info, Proc, Status};
use crate::wire::{Notification, Reply, Tag};

use super::interface::{Action, ConnId};
use super::shared::Shared;
use super::upcall::{HostCall, HostResult};

/// How many past events the server keeps for later registrants.
pub(crate) const CACHE_LIMIT: usize = 256;

/// The server's event state.
#[derive(Debug, Default)]
pub(super) struct ServerEvents {
    /// The code lists each connection registered (an empty list: every code).
    registrations: BTreeMap<ConnId, Vec<Vec<Status>>>,
    cache: VecDeque<Cached>,
    /// The codes the host was asked to watch and not yet told to forget (§17.3.14: "only
    /// once a given unique code value").
    host_codes: BTreeSet<Status>,
    /// The registrations waiting for the host's `register_events`, by the op of its call.
    at_host: BTreeMap<u64, HeldRegistration>,
}

/// A registration waiting for the host to answer `register_events`.
#[derive(Clone, Debug)]
struct HeldRegistration {
    conn: ConnId,
    tag: Tag,
    /// The client's codes, in normal form.
    codes: Vec<Status>,
    /// The codes this registration asked the host for.
    asked: Vec<Status>,
}

/// Whether the host must be asked to watch `code` (v5.0 §17.3.14): an environmental code,
/// or one outside the standard's range of constants.
pub(crate) fn host_watches(code: Status) -> bool {
    let environmental = (Status::EVENT_SYS_OTHER.0..=Status::EVENT_SYS_BASE.0).contains(&code.0);
    let outside = code.0 > 0 || code.0 < Status::EXTERNAL_ERR_BASE.0;
    environmental || outside
}

#[derive(Debug)]
struct Cached {
    event: Event,
    /// The processes it was already sent to.
    delivered: BTreeSet<Proc>,
}

/// A code list in the one form registrations are compared in: sorted, each code once (as
/// the client's own registry keeps them).
fn normal_form(mut codes: Vec<Status>) -> Vec<Status> {
    codes.sort_unstable_by_key(|c| c.0);
    codes.dedup();
    codes
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

    /// `REGEVENTS`: ask the host to watch the codes it must and does not yet watch, with
    /// the client's infos and ids (§17.3.14); then, or at once when there are none, note the
    /// codes, accept, and replay the cached events the new registration wants.
    pub(super) fn register(
        &mut self,
        cx: &mut Shared,
        conn: ConnId,
        tag: Tag,
        codes: Vec<Status>,
        info: Vec<Info>,
    ) {
        let codes = normal_form(codes);
        let asked: Vec<Status> = codes
            .iter()
            .copied()
            .filter(|c| host_watches(*c) && !self.host_codes.contains(c))
            .collect();
        if asked.is_empty() {
            self.registered(cx, conn, tag, codes);
            return;
        }
        self.host_codes.extend(asked.iter().copied());
        let call = HostCall::RegisterEvents {
            codes: asked.clone(),
            info: cx.with_ids(conn, info),
        };
        let held = HeldRegistration {
            conn,
            tag,
            codes,
            asked,
        };
        let op = cx.call_host(call);
        self.at_host.insert(op, held);
    }

    /// Whether the host call `op` is a registration's.
    pub(super) fn awaits_host(&self, op: u64) -> bool {
        self.at_host.contains_key(&op)
    }

    /// The host answered `register_events`: success, or no support for watching codes,
    /// registers the client; another error fails its registration and forgets the codes
    /// asked, so that a later registration asks again.
    pub(super) fn host_answered(&mut self, cx: &mut Shared, op: u64, result: HostResult) {
        let Some(held) = self.at_host.remove(&op) else {
            return;
        };
        let status = result.output::<()>().err().unwrap_or(Status::SUCCESS);
        if status.is_success() || status == Status::ERR_NOT_SUPPORTED {
            if cx.conns.contains_key(&held.conn) {
                self.registered(cx, held.conn, held.tag, held.codes);
            } else {
                // The client left while the host was asked.
                self.release_host_codes(cx);
            }
        } else {
            for c in &held.asked {
                self.host_codes.remove(c);
            }
            cx.send(held.conn, held.tag, &Reply::Status(status));
        }
    }

    /// Note `codes` for `conn`, accept, then replay the cached events they want.
    fn registered(&mut self, cx: &mut Shared, conn: ConnId, tag: Tag, codes: Vec<Status>) {
        self.registrations.entry(conn).or_default().push(codes);
        cx.send(conn, tag, &Reply::Status(Status::SUCCESS));
        let Some(me) = cx.conns.get(&conn).map(|c| c.proc.clone()) else {
            return;
        };
        let wanted: Vec<usize> = (0..self.cache.len())
            .filter(|&i| {
                let c = &self.cache[i];
                !c.delivered.contains(&me)
                    && c.event.source != me
                    && c.event.reaches(&me)
                    && self.wants(conn, &c.event)
            })
            .collect();
        for i in wanted {
            push_event(cx, conn, &self.cache[i].event);
            self.cache[i].delivered.insert(me.clone());
        }
    }

    /// `DEREGEVENTS`: one registration of exactly these codes is gone.
    pub(super) fn deregister(&mut self, cx: &mut Shared, conn: ConnId, codes: &[Status]) {
        let codes = normal_form(codes.to_vec());
        if let Some(regs) = self.registrations.get_mut(&conn)
            && let Some(at) = regs.iter().position(|r| *r == codes)
        {
            regs.remove(at);
        }
        self.release_host_codes(cx);
    }

    /// The connection is gone: so are its registrations.
    pub(super) fn conn_closed(&mut self, cx: &mut Shared, conn: ConnId) {
        self.registrations.remove(&conn);
        self.release_host_codes(cx);
    }

    /// Tell the host to stop watching the codes no client is registered for any more, nor
    /// waits to be (§17.3.15: only when no registration against a code remains).
    fn release_host_codes(&mut self, cx: &mut Shared) {
        let mut held: BTreeSet<Status> = (self.registrations.values())
            .flatten()
            .flatten()
            .copied()
            .collect();
        for r in self.at_host.values() {
            held.extend(r.codes.iter().copied());
        }
        let released: Vec<Status> = (self.host_codes.iter())
            .copied()
            .filter(|c| !held.contains(c))
            .collect();
        if released.is_empty() {
            return;
        }
        for c in &released {
            self.host_codes.remove(c);
        }
        // Nothing waits on the answer.
        cx.call_host(HostCall::DeregisterEvents { codes: released });
    }

    /// Send `event` to the local processes in its range that registered for it, and keep
    /// it for later registrants unless it says not to.
    pub(super) fn distribute(&mut self, cx: &mut Shared, event: Event) {
        let targets: Vec<(ConnId, Proc)> = (cx.conns.iter())
            .filter(|(_, c)| c.proc != event.source && event.reaches(&c.proc))
            .filter(|(id, _)| self.wants(**id, &event))
            .map(|(id, c)| (*id, c.proc.clone()))
            .collect();
        let mut delivered = BTreeSet::new();
        for (conn, proc) in targets {
            push_event(cx, conn, &event);
            delivered.insert(proc);
        }
        if !event.do_not_cache() {
            if self.cache.len() == CACHE_LIMIT {
                self.cache.pop_front();
            }
            self.cache.push_back(Cached { event, delivered });
        }
    }
}

fn push_event(cx: &mut Shared, conn: ConnId, event: &Event) {
    let Some(c) = cx.conns.get(&conn) else {
        return;
    };
    let mut notification = Notification::from(event);
    let dialect = c.version.dialect();
    // A value the client cannot decode would lose it the whole event (6.1: statistics).
    notification.info.retain(|i| dialect.can_read(&i.value));
    match notification.encode(c.buffer_type) {
        Ok(payload) => cx.push(Action::Send {
            conn,
            tag: Tag::NOTIFY,
            payload,
        }),
        Err(e) => tracing::warn!("cannot encode an event for connection {conn}: {e}"),
    }
}
