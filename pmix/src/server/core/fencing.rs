//! Fences at the server: gather the local participants, bound the wait by `PMIX_TIMEOUT`,
//! hand the rest to the host and answer everyone with one status.

use crate::model::{Info, Proc, Rank, Status};
use crate::retrieval::Directives;
use crate::wire::{Reply, Tag};

use super::super::fence::{FenceStep, LOST_PARTICIPANT, Waiter};
use super::{Action, ConnId, HostCall, HostResult, Pending, ServerCore};

impl ServerCore {
    pub(super) fn fence(
        &mut self,
        conn: ConnId,
        me: &Proc,
        tag: Tag,
        procs: Vec<Proc>,
        info: &[Info],
    ) {
        let procs = if procs.is_empty() {
            vec![Proc::new(me.nspace.clone(), Rank::WILDCARD)]
        } else {
            // A group id stands for the group's members (§14.2).
            self.expand_groups(&procs)
        };
        let local = self.cx.store.local_participants(&procs);
        if !local.contains(me) {
            self.send(conn, tag, &Reply::Status(Status::ERR_BAD_PARAM));
            return;
        }
        let waiter = Waiter { conn, tag: tag.0 };
        let step = self.fences.contribute(&procs, local, me, waiter, info);
        let (FenceStep::LocallyComplete(id) | FenceStep::Pending(id)) = step;
        self.start_fence_timer(id, info);
        match step {
            FenceStep::LocallyComplete(id) => self.complete_fence(id),
            FenceStep::Pending(_) => {
                // A participant that is already gone can never contribute.
                let gone: Vec<Proc> = self.cx.store.gone.iter().cloned().collect();
                for g in gone {
                    for id in self.fences.lose(&g, LOST_PARTICIPANT) {
                        self.complete_fence(id);
                    }
                }
            }
        }
    }

    /// Bound fence `id` by the `PMIX_TIMEOUT` of a contribution's `info` (v5.0 §8.2.1), once:
    /// the first timeout given counts.
    pub(super) fn start_fence_timer(&mut self, id: u64, info: &[Info]) {
        let Some(after_s) = Directives::from_info(info).timeout_s else {
            return;
        };
        if self.fences.get_mut(id).is_none_or(|t| t.timer.is_some()) {
            return;
        }
        let op = self.op();
        if let Some(t) = self.fences.get_mut(id) {
            t.timer = Some(op);
        }
        self.cx.push(Action::Timer { op, after_s });
    }

    /// All local participants are in, or one was lost: complete here, or hand the fence to
    /// the host (with the local failure, so that it ends the fence everywhere).
    pub(super) fn complete_fence(&mut self, id: u64) {
        let Some(t) = self.fences.get_mut(id) else {
            return;
        };
        let procs = t.procs.clone();
        let lost = t.lost;
        if self.cx.store.all_local(&procs) {
            self.finish_fence(id, lost.unwrap_or(Status::SUCCESS));
            return;
        }
        let Some(t) = self.fences.get_mut(id) else {
            return;
        };
        t.at_host = true;
        let info = t.host_info();
        let local: Vec<Proc> = t.local.iter().cloned().collect();
        let data = if t.collect && lost.is_none() {
            self.cx.store.modex.encode_blob(&local).unwrap_or_default()
        } else {
            Vec::new()
        };
        self.call_host(Pending::Fence(id), HostCall::Fence { procs, info, data });
    }

    pub(super) fn finish_fence(&mut self, id: u64, status: Status) {
        let Some((t, next)) = self.fences.finish(id) else {
            return;
        };
        for w in t.contributed.values() {
            self.send(w.conn, Tag(w.tag), &Reply::Status(status));
        }
        if let Some(next) = next {
            self.complete_fence(next);
        }
    }

    /// The host ended fence `id` across nodes: store the data it brought and answer the
    /// local participants.
    pub(super) fn fence_answered(&mut self, id: u64, result: HostResult) {
        let lost = self.fences.get_mut(id).and_then(|t| t.lost);
        let status = match result {
            // A local participant was lost: the fence failed, whatever came back.
            HostResult::Data(Ok(blob)) => match lost {
                Some(lost) => lost,
                None => {
                    let local = self.cx.store.local.clone();
                    match self.cx.store.modex.store_blob(&blob, |p| local.contains(p)) {
                        Ok(()) => Status::SUCCESS,
                        Err(e) => e.status(),
                    }
                }
            },
            other => other.failure(),
        };
        self.finish_fence(id, status);
        self.gets.wake_all(&mut self.cx);
    }
}
