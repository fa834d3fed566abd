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

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Info, Proc, Status};
use crate::retrieval::Directives;
use crate::store::jobinfo::job_info_kvals;
use crate::wire::op_reply::{JobData, OpReply};
use crate::wire::{Command, Reply, Tag};

use super::collective::{FenceStep, Fences, LOST_PARTICIPANT, Tracker, Waiter};
use super::interface::ConnId;
use super::shared::Shared;
use super::upcall::{HostCall, HostResult};

/// Which of the two collectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Connect,
    Disconnect,
}

/// The connects and disconnects of this server's clients, and the sets they connected.
#[derive(Debug, Default)]
pub(super) struct Connects {
    connects: Fences,
    disconnects: Fences,
    /// The process sets connected here and not yet disconnected.
    connected: BTreeSet<Vec<Proc>>,
    /// The collectives the host is completing, by the op of its call.
    at_host: BTreeMap<u64, (Kind, u64)>,
}

impl Connects {
    /// A client's `PMIx_Connect` or `PMIx_Disconnect` of `procs`.
    #[allow(clippy::too_many_arguments)] // the request's fields, as the wire gives them
    pub(super) fn request(
        &mut self,
        cx: &mut Shared,
        kind: Kind,
        conn: ConnId,
        me: &Proc,
        tag: Tag,
        procs: Vec<Proc>,
        info: &[Info],
    ) {
        if procs.is_empty() {
            reply(cx, kind, conn, tag, Status::ERR_BAD_PARAM, Vec::new());
            return;
        }
        let mut key = procs.clone();
        key.sort();
        key.dedup();
        if kind == Kind::Disconnect && !self.connected.contains(&key) {
            tracing::debug!("{me}: disconnect of processes never connected");
            reply(
                cx,
                kind,
                conn,
                tag,
                Status::ERR_INVALID_OPERATION,
                Vec::new(),
            );
            return;
        }
        let local = cx.store.local_participants(&procs);
        if !local.contains(me) {
            reply(cx, kind, conn, tag, Status::ERR_BAD_PARAM, Vec::new());
            return;
        }
        let waiter = Waiter { conn, tag: tag.0 };
        let step = self
            .collective(kind)
            .contribute(&procs, local, me, waiter, info);
        let (FenceStep::LocallyComplete(id) | FenceStep::Pending(id)) = step;
        self.start_timer(cx, kind, id, info);
        match step {
            FenceStep::LocallyComplete(id) => self.complete(cx, kind, id),
            FenceStep::Pending(_) => {
                let gone: Vec<Proc> = cx.store.gone.iter().cloned().collect();
                for g in gone {
                    for id in self.collective(kind).lose(&g, LOST_PARTICIPANT) {
                        self.complete(cx, kind, id);
                    }
                }
            }
        }
    }

    fn collective(&mut self, kind: Kind) -> &mut Fences {
        match kind {
            Kind::Connect => &mut self.connects,
            Kind::Disconnect => &mut self.disconnects,
        }
    }

    fn start_timer(&mut self, cx: &mut Shared, kind: Kind, id: u64, info: &[Info]) {
        let Some(after_s) = Directives::from_info(info).timeout_s else {
            return;
        };
        let Some(t) = self.collective(kind).get_mut(id) else {
            return;
        };
        if t.timer.is_none() {
            t.timer = Some(cx.timer(after_s));
        }
    }

    /// The timer `op` bounded a connect or disconnect: fail it. Whether it did.
    pub(super) fn timed_out(&mut self, cx: &mut Shared, op: u64) -> bool {
        for kind in [Kind::Connect, Kind::Disconnect] {
            if let Some(id) = self.collective(kind).by_timer(op) {
                self.finish(cx, kind, id, Status::ERR_TIMEOUT);
                return true;
            }
        }
        false
    }

    /// `proc` will never contribute: fail the collectives waiting for it.
    pub(super) fn lost(&mut self, cx: &mut Shared, proc: &Proc) {
        for kind in [Kind::Connect, Kind::Disconnect] {
            for id in self.collective(kind).lose(proc, LOST_PARTICIPANT) {
                self.complete(cx, kind, id);
            }
        }
    }

    pub(super) fn conn_closed(&mut self, conn: ConnId) {
        self.connects.drop_conn(conn);
        self.disconnects.drop_conn(conn);
    }

    fn complete(&mut self, cx: &mut Shared, kind: Kind, id: u64) {
        let Some((procs, lost)) = self
            .collective(kind)
            .get_mut(id)
            .map(|t| (t.procs.clone(), t.lost))
        else {
            return;
        };
        if cx.store.all_local(&procs) {
            self.finish(cx, kind, id, lost.unwrap_or(Status::SUCCESS));
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
        let op = cx.call_host(call);
        self.at_host.insert(op, (kind, id));
    }

    /// Whether the host call `op` is one of these collectives'.
    pub(super) fn awaits_host(&self, op: u64) -> bool {
        self.at_host.contains_key(&op)
    }

    /// The host answered the call `op`: its status is the collective's.
    pub(super) fn host_answered(&mut self, cx: &mut Shared, op: u64, result: HostResult) {
        let Some((kind, id)) = self.at_host.remove(&op) else {
            return;
        };
        let status = result.output::<()>().err().unwrap_or(Status::SUCCESS);
        let status = match self.collective(kind).get_mut(id) {
            Some(t) => t.outcome(status),
            None => status,
        };
        self.finish(cx, kind, id, status);
    }

    fn finish(&mut self, cx: &mut Shared, kind: Kind, id: u64, status: Status) {
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
                other_jobs(cx, &t, proc, w.conn)
            } else {
                Vec::new()
            };
            reply(cx, kind, w.conn, Tag(w.tag), status, jobs);
        }
        if let Some(next) = next {
            self.complete(cx, kind, next);
        }
    }
}

/// The job information of the namespaces in the set other than `proc`'s, encoded for the
/// connection `conn`.
fn other_jobs(cx: &Shared, t: &Tracker, proc: &Proc, conn: ConnId) -> Vec<JobData> {
    let Some(c) = cx.conns.get(&conn) else {
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
            let realms = cx.store.job_view(n)?;
            let kvals = job_info_kvals(&realms, c.buffer_type, &cx.version).ok()?;
            Some(JobData {
                nspace: n.to_owned(),
                kvals,
            })
        })
        .collect()
}

fn reply(cx: &mut Shared, kind: Kind, conn: ConnId, tag: Tag, status: Status, jobs: Vec<JobData>) {
    let reply = match kind {
        Kind::Connect => OpReply::Connect { status, jobs },
        Kind::Disconnect => OpReply::Status {
            command: Command::DISCONNECTNB,
            status,
        },
    };
    cx.send(conn, tag, &Reply::Op(reply));
}
