//! Fences at the server: gather the local participants, bound the wait by `PMIX_TIMEOUT`,
//! hand the rest to the host and answer everyone with one status.

use std::collections::BTreeMap;

use crate::model::{Info, Proc, Status};
use crate::retrieval::Directives;
use crate::wire::{Reply, Tag};

use super::collective::{FenceStep, Fences, LOST_PARTICIPANT, Waiter};
use super::interface::ConnId;
use super::shared::Shared;
use super::upcall::{HostCall, HostResult};

/// This server's fences, each tracked by generation ([`Fences`]), and those at the host.
#[derive(Debug, Default)]
pub(super) struct Fencing {
    fences: Fences,
    /// The fences the host is completing across nodes, by the op of its call.
    at_host: BTreeMap<u64, u64>,
}

impl Fencing {
    /// A client's `PMIx_Fence` over `procs`, with group ids already read as their members.
    #[allow(clippy::too_many_arguments)] // the request's fields, as the wire gives them
    pub(super) fn request(
        &mut self,
        cx: &mut Shared,
        conn: ConnId,
        me: &Proc,
        tag: Tag,
        procs: Vec<Proc>,
        info: &[Info],
    ) {
        let local = cx.store.local_participants(&procs);
        if !local.contains(me) {
            cx.send(conn, tag, &Reply::Status(Status::ERR_BAD_PARAM));
            return;
        }
        let waiter = Waiter { conn, tag: tag.0 };
        let step = self.fences.contribute(&procs, local, me, waiter, info);
        let (FenceStep::LocallyComplete(id) | FenceStep::Pending(id)) = step;
        self.start_timer(cx, id, info);
        match step {
            FenceStep::LocallyComplete(id) => self.complete(cx, id),
            FenceStep::Pending(_) => {
                // A participant that is already gone can never contribute.
                let gone: Vec<Proc> = cx.store.gone.iter().cloned().collect();
                for g in gone {
                    self.lost(cx, &g);
                }
            }
        }
    }

    /// Bound fence `id` by the `PMIX_TIMEOUT` of a contribution's `info` (v5.0 §8.2.1), once:
    /// the first timeout given counts.
    fn start_timer(&mut self, cx: &mut Shared, id: u64, info: &[Info]) {
        let Some(after_s) = Directives::from_info(info).timeout_s else {
            return;
        };
        let Some(t) = self.fences.get_mut(id) else {
            return;
        };
        if t.timer.is_none() {
            t.timer = Some(cx.timer(after_s));
        }
    }

    /// `proc` will never contribute: complete the fences waiting for it.
    pub(super) fn lost(&mut self, cx: &mut Shared, proc: &Proc) {
        for id in self.fences.lose(proc, LOST_PARTICIPANT) {
            self.complete(cx, id);
        }
    }

    /// The fences of a closed connection answer nobody there.
    pub(super) fn conn_closed(&mut self, conn: ConnId) {
        self.fences.drop_conn(conn);
    }

    /// The timer `op` bounded a fence: fail it. Whether it did. Whatever the host still
    /// answers for it finds no tracker and is dropped.
    pub(super) fn timed_out(&mut self, cx: &mut Shared, op: u64) -> bool {
        let Some(id) = self.fences.by_timer(op) else {
            return false;
        };
        self.finish(cx, id, Status::ERR_TIMEOUT);
        true
    }

    /// All local participants are in, or one was lost: complete here, or hand the fence to
    /// the host (with the local failure, so that it ends the fence everywhere).
    fn complete(&mut self, cx: &mut Shared, id: u64) {
        let Some(t) = self.fences.get_mut(id) else {
            return;
        };
        let procs = t.procs.clone();
        let lost = t.lost;
        if cx.store.all_local(&procs) {
            self.finish(cx, id, lost.unwrap_or(Status::SUCCESS));
            return;
        }
        let Some(t) = self.fences.get_mut(id) else {
            return;
        };
        t.at_host = true;
        let info = t.host_info();
        let local: Vec<Proc> = t.local.iter().cloned().collect();
        let data = if t.collect && lost.is_none() {
            cx.store.modex.encode_blob(&local).unwrap_or_default()
        } else {
            Vec::new()
        };
        let op = cx.call_host(HostCall::Fence { procs, info, data });
        self.at_host.insert(op, id);
    }

    fn finish(&mut self, cx: &mut Shared, id: u64, status: Status) {
        let Some((t, next)) = self.fences.finish(id) else {
            return;
        };
        for w in t.contributed.values() {
            cx.send(w.conn, Tag(w.tag), &Reply::Status(status));
        }
        if let Some(next) = next {
            self.complete(cx, next);
        }
    }

    /// Whether the host call `op` is one of these fences'.
    pub(super) fn awaits_host(&self, op: u64) -> bool {
        self.at_host.contains_key(&op)
    }

    /// The host ended a fence across nodes: store the data it brought and answer the local
    /// participants. The held gets are then decided again by the caller.
    pub(super) fn host_answered(&mut self, cx: &mut Shared, op: u64, result: HostResult) {
        let Some(id) = self.at_host.remove(&op) else {
            return;
        };
        let lost = self.fences.get_mut(id).and_then(|t| t.lost);
        let status = match result.output::<Vec<u8>>() {
            // A local participant was lost: the fence failed, whatever came back.
            Ok(blob) => match lost {
                Some(lost) => lost,
                None => {
                    let local = cx.store.local.clone();
                    match cx.store.modex.store_blob(&blob, |p| local.contains(p)) {
                        Ok(()) => Status::SUCCESS,
                        Err(e) => e.status(),
                    }
                }
            },
            Err(s) => s,
        };
        self.finish(cx, id, status);
    }
}
