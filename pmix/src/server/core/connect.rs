//! Connect and disconnect (PMIx v5.0 §12.3) as collectives of the server.
//!
//! Each is a collective over its process set, tracked as a fence is ([`super::super::fence`]):
//! generations per set, completed locally when every participant runs on this node, through
//! the host's `connect` / `disconnect` upcall otherwise, and failed when a participant is
//! lost or the first `PMIX_TIMEOUT` given expires. A local loss in a set that spans nodes
//! still goes to the host, with `PMIX_LOCAL_COLLECTIVE_STATUS`, so it ends everywhere.
//!
//! - A completed connect records its set as connected and answers each caller with the job
//!   information of the other namespaces in the set, so that their processes can read it
//!   (§12.3.1).
//! - A disconnect of a set that was never connected here is `PMIX_ERR_INVALID_OPERATION`
//!   (§12.3.3, §17.3.13); a completed disconnect forgets the set.
//! - A connect or disconnect whose caller is not in its set is `PMIX_ERR_BAD_PARAM`.

use std::collections::BTreeSet;

use crate::model::{Info, Proc, Status};
use crate::retrieval::Directives;
use crate::wire::op_reply::{JobData, OpReply};
use crate::wire::{Command, Reply, Tag};

use super::super::fence::{FenceStep, LOST_PARTICIPANT, Tracker, Waiter};
use super::{Action, ConnId, HostCall, Pending, ServerCore};
use crate::store::jobinfo::job_info_kvals;

/// Which of the two collectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Connect,
    Disconnect,
}

impl ServerCore {
    pub(super) fn connect(
        &mut self,
        kind: Kind,
        conn: ConnId,
        me: &Proc,
        tag: Tag,
        procs: Vec<Proc>,
        info: &[Info],
    ) {
        if procs.is_empty() {
            self.reply_connect(kind, conn, tag, Status::ERR_BAD_PARAM, Vec::new());
            return;
        }
        let mut key = procs.clone();
        key.sort();
        key.dedup();
        if kind == Kind::Disconnect && !self.connected.contains(&key) {
            tracing::debug!("{me}: disconnect of processes never connected");
            self.reply_connect(kind, conn, tag, Status::ERR_INVALID_OPERATION, Vec::new());
            return;
        }
        let local = self.cx.store.local_participants(&procs);
        if !local.contains(me) {
            self.reply_connect(kind, conn, tag, Status::ERR_BAD_PARAM, Vec::new());
            return;
        }
        let waiter = Waiter { conn, tag: tag.0 };
        let step = self
            .collective(kind)
            .contribute(&procs, local, me, waiter, info);
        let (FenceStep::LocallyComplete(id) | FenceStep::Pending(id)) = step;
        self.start_connect_timer(kind, id, info);
        match step {
            FenceStep::LocallyComplete(id) => self.complete_connect(kind, id),
            FenceStep::Pending(_) => {
                let gone: Vec<Proc> = self.cx.store.gone.iter().cloned().collect();
                for g in gone {
                    for id in self.collective(kind).lose(&g, LOST_PARTICIPANT) {
                        self.complete_connect(kind, id);
                    }
                }
            }
        }
    }

    fn collective(&mut self, kind: Kind) -> &mut super::super::fence::Fences {
        match kind {
            Kind::Connect => &mut self.connects,
            Kind::Disconnect => &mut self.disconnects,
        }
    }

    fn start_connect_timer(&mut self, kind: Kind, id: u64, info: &[Info]) {
        let Some(after_s) = Directives::from_info(info).timeout_s else {
            return;
        };
        if self
            .collective(kind)
            .get_mut(id)
            .is_none_or(|t| t.timer.is_some())
        {
            return;
        }
        let op = self.op();
        if let Some(t) = self.collective(kind).get_mut(id) {
            t.timer = Some(op);
        }
        self.cx.push(Action::Timer { op, after_s });
    }

    /// The timer `op` bounded a connect or disconnect: fail it. Whether it did.
    pub(super) fn connect_timed_out(&mut self, op: u64) -> bool {
        for kind in [Kind::Connect, Kind::Disconnect] {
            if let Some(id) = self.collective(kind).by_timer(op) {
                self.finish_connect(kind, id, Status::ERR_TIMEOUT);
                return true;
            }
        }
        false
    }

    /// `proc` will never contribute: fail the collectives waiting for it.
    pub(super) fn connect_lost(&mut self, proc: &Proc) {
        for kind in [Kind::Connect, Kind::Disconnect] {
            for id in self.collective(kind).lose(proc, LOST_PARTICIPANT) {
                self.complete_connect(kind, id);
            }
        }
    }

    pub(super) fn connect_conn_closed(&mut self, conn: ConnId) {
        self.connects.drop_conn(conn);
        self.disconnects.drop_conn(conn);
    }

    fn complete_connect(&mut self, kind: Kind, id: u64) {
        let Some((procs, lost)) = self
            .collective(kind)
            .get_mut(id)
            .map(|t| (t.procs.clone(), t.lost))
        else {
            return;
        };
        if self.cx.store.all_local(&procs) {
            self.finish_connect(kind, id, lost.unwrap_or(Status::SUCCESS));
            return;
        }
        let Some(t) = self.collective(kind).get_mut(id) else {
            return;
        };
        t.at_host = true;
        let info = t.host_info();
        let call = match kind {
            Kind::Connect => HostCall::Connect { procs, info },
            Kind::Disconnect => HostCall::Disconnect { procs, info },
        };
        self.call_host(Pending::Connect(kind, id), call);
    }

    /// The host answered the collective `id`.
    pub(super) fn host_answered_connect(&mut self, kind: Kind, id: u64, status: Status) {
        let status = match self.collective(kind).get_mut(id) {
            Some(t) => t.outcome(status),
            None => status,
        };
        self.finish_connect(kind, id, status);
    }

    fn finish_connect(&mut self, kind: Kind, id: u64, status: Status) {
        let Some((t, next)) = self.collective(kind).finish(id) else {
            return;
        };
        if status == Status::SUCCESS {
            match kind {
                Kind::Connect => {
                    self.connected.insert(t.procs.clone());
                }
                Kind::Disconnect => {
                    self.connected.remove(&t.procs);
                }
            }
        }
        for (proc, w) in &t.contributed {
            let jobs = if kind == Kind::Connect && status == Status::SUCCESS {
                self.other_jobs(&t, proc, w.conn)
            } else {
                Vec::new()
            };
            self.reply_connect(kind, w.conn, Tag(w.tag), status, jobs);
        }
        if let Some(next) = next {
            self.complete_connect(kind, next);
        }
    }

    /// The job information of the namespaces in the set other than `proc`'s, encoded for the
    /// connection `conn`.
    fn other_jobs(&self, t: &Tracker, proc: &Proc, conn: ConnId) -> Vec<JobData> {
        let Some(c) = self.cx.conns.get(&conn) else {
            return Vec::new();
        };
        let namespaces: BTreeSet<&str> = t
            .procs
            .iter()
            .map(|p| p.nspace.as_str())
            .filter(|n| *n != proc.nspace.as_str())
            .collect();
        namespaces
            .into_iter()
            .filter_map(|n| {
                let realms = self.cx.store.job_view(n)?;
                let kvals = job_info_kvals(&realms, c.buffer_type, &self.cx.version).ok()?;
                Some(JobData {
                    nspace: n.to_owned(),
                    kvals,
                })
            })
            .collect()
    }

    fn reply_connect(
        &mut self,
        kind: Kind,
        conn: ConnId,
        tag: Tag,
        status: Status,
        jobs: Vec<JobData>,
    ) {
        let reply = match kind {
            Kind::Connect => OpReply::Connect { status, jobs },
            Kind::Disconnect => OpReply::Status {
                command: Command::DISCONNECTNB,
                status,
            },
        };
        self.send(conn, tag, &Reply::Op(reply));
    }
}
