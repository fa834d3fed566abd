//! I/O forwarding (v5.0 §18.5, §17.2.14, §17.3.21–22): who pulled which output, the output
//! the host delivers routed to them, and standard input pushed on to the host.
//!
//! A client or tool pulls the output of some processes on some channels (`IOF_PULL`): the
//! host is asked to forward that output here (`iof_pull` upcall) and, once it agrees, the
//! pull is registered under an id of this server, which the puller needs to deregister it.
//! The host then hands output to the server ([`Iof::deliver`], `PMIx_server_IOF_deliver`);
//! each pull whose processes and channels match receives it (tag 2, `PMIX_PTL_TAG_IOF`),
//! marked with the id the puller chose, so its library knows which of its handlers to call.
//! Output that no pull matches is kept, up to [`CACHE_LIMIT`] deliveries and
//! [`CACHE_BYTES`] bytes (the oldest dropped first), and goes to the first pull that matches
//! it, right after that pull's reply: a tool that attaches late still sees what the job wrote
//! before. A deregistration
//! ends the pull here and is relayed to the host; standard input a client or tool pushes
//! (`IOF_PUSH`) is only relayed (`push_stdin` upcall, the pusher as its source): both are
//! answered with the host's status, by [`super::relayed`].
//!
//! As in OpenPMIx 4.2: output never goes back to the process that produced it, a
//! deregistration tells the host with `PMIX_IOF_STOP` ([`IOF_STOP`]), and a
//! pull of standard input is refused (stdin is pushed, never pulled). Unlike OpenPMIx 4.2,
//! the host told of a deregistration also learns which processes and channels it concerned,
//! and a puller may deregister only its own pulls.

use std::collections::{BTreeMap, VecDeque};

use crate::model::{ByteObject, Info, IofChannel, Proc, Status};
use crate::wire::ops::{IOF_STOP, IofDelivery};
use crate::wire::{OpReply, Reply, Tag};

use super::interface::{Action, ConnId};
use super::shared::Shared;
use super::upcall::{HostCall, HostResult};

/// How many deliveries no pull wanted are kept for pulls to come.
pub(super) const CACHE_LIMIT: usize = 1024;
/// How many bytes of them, at most.
pub(super) const CACHE_BYTES: usize = 16 << 20;

/// One registered pull.
#[derive(Clone, Debug)]
struct Pull {
    conn: ConnId,
    puller: Proc,
    procs: Vec<Proc>,
    channels: IofChannel,
    /// The id the puller chose, written in each delivery.
    their_id: u64,
    /// The host agreed to forward its output (until then, nothing is routed to it).
    active: bool,
}

/// Output delivered by the host.
#[derive(Clone, Debug)]
struct Output {
    source: Proc,
    channel: IofChannel,
    data: Vec<u8>,
    info: Vec<Info>,
}

/// A pull waiting for the host's answer: registered under `id`, answered to the request
/// `tag` of `conn`.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    conn: ConnId,
    tag: Tag,
    id: u64,
}

/// The pulls, the output no one has pulled yet, and the pulls the host has yet to agree to.
#[derive(Debug, Default)]
pub(super) struct Iof {
    pulls: BTreeMap<u64, Pull>,
    next_id: u64,
    cache: VecDeque<Output>,
    /// The bytes of output the cache holds.
    cached_bytes: usize,
    at_host: BTreeMap<u64, Waiting>,
}

/// What an `IOF_PULL` asks.
pub(super) struct PullRequest {
    /// The processes whose output is wanted.
    pub procs: Vec<Proc>,
    /// The pull's directives, for the host.
    pub directives: Vec<Info>,
    /// The channels wanted.
    pub channels: IofChannel,
    /// The puller's own id of the pull, which the deliveries carry back.
    pub their_id: u64,
}

impl Iof {
    /// `IOF_PULL` of `me`: ask the host to forward the output of `procs` on `channels`.
    pub(super) fn pull(
        &mut self,
        cx: &mut Shared,
        (conn, me, tag): (ConnId, &Proc, Tag),
        request: PullRequest,
    ) {
        let PullRequest {
            procs,
            directives,
            channels,
            their_id,
        } = request;
        let refuse = |cx: &mut Shared, status: Status| {
            let reply = OpReply::IofPull {
                status,
                remote_id: None,
            };
            cx.send(conn, tag, &Reply::Op(reply));
        };
        if channels.0 & IofChannel::STDIN_CHANNEL.0 != 0 {
            return refuse(cx, Status::ERR_NOT_SUPPORTED);
        }
        if procs.is_empty() || channels.0 == 0 {
            return refuse(cx, Status::ERR_BAD_PARAM);
        }
        self.next_id += 1;
        let id = self.next_id;
        let pull = Pull {
            conn,
            puller: me.clone(),
            procs: procs.clone(),
            channels,
            their_id,
            active: false,
        };
        self.pulls.insert(id, pull);
        let directives = cx.with_ids(conn, directives);
        let op = cx.call_host(HostCall::IofPull {
            procs,
            directives,
            channels,
        });
        self.at_host.insert(op, Waiting { conn, tag, id });
    }

    /// `IOF_DEREG` of the pull `id` (this server's) by `conn`: the pull ends, and the host
    /// call that tells the host to stop forwarding what it wanted.
    pub(super) fn deregister(
        &mut self,
        cx: &mut Shared,
        conn: ConnId,
        directives: Vec<Info>,
        id: u64,
    ) -> Result<HostCall, Status> {
        let pull = (self.pulls.get(&id))
            .filter(|p| p.conn == conn)
            .ok_or(Status::ERR_NOT_FOUND)?;
        let (procs, channels) = (pull.procs.clone(), pull.channels);
        self.pulls.remove(&id);
        let mut directives = cx.with_ids(conn, directives);
        directives.extend(Info::with_key(IOF_STOP, true));
        Ok(HostCall::IofPull {
            procs,
            directives,
            channels,
        })
    }

    /// Whether the host call `op` is one of this chapter's.
    pub(super) fn awaits_host(&self, op: u64) -> bool {
        self.at_host.contains_key(&op)
    }

    /// The host answered the pull `op`: answer the puller; a pull the host agreed to starts
    /// receiving output, the cached output it matches first.
    pub(super) fn host_answered(&mut self, cx: &mut Shared, op: u64, result: HostResult) {
        let Some(Waiting { conn, tag, id }) = self.at_host.remove(&op) else {
            return;
        };
        let status = result.output::<()>().err().unwrap_or(Status::SUCCESS);
        let agreed = status == Status::SUCCESS;
        let remote_id = match self.pulls.get_mut(&id) {
            Some(p) if agreed => {
                p.active = true;
                Some(id)
            }
            _ => None,
        };
        if remote_id.is_none() {
            self.pulls.remove(&id);
        }
        let status = if agreed && remote_id.is_none() {
            // The puller went away while the host answered.
            Status::ERR_LOST_CONNECTION
        } else {
            status
        };
        let reply = OpReply::IofPull { status, remote_id };
        cx.send(conn, tag, &Reply::Op(reply));
        if remote_id.is_some() {
            self.flush_cache(cx, id);
        }
    }

    /// `PMIx_server_IOF_deliver`: `data` of `source` on `channel`, for every pull that wants
    /// it; kept for pulls to come when none does.
    pub(super) fn deliver(
        &mut self,
        cx: &mut Shared,
        source: Proc,
        channel: IofChannel,
        data: Vec<u8>,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        if channel.0 == 0 || channel.0 & IofChannel::STDIN_CHANNEL.0 != 0 {
            return Err(Status::ERR_BAD_PARAM);
        }
        let output = Output {
            source,
            channel,
            data,
            info,
        };
        let ids: Vec<u64> = self.pulls.keys().copied().collect();
        let mut taken = false;
        for id in ids {
            taken |= self.forward(cx, id, &output);
        }
        if !taken {
            self.keep(output);
        }
        Ok(())
    }

    /// Send `output` to the pull `id` if it wants it; whether it did.
    fn forward(&self, cx: &mut Shared, id: u64, output: &Output) -> bool {
        let Some(pull) = self.pulls.get(&id) else {
            return false;
        };
        let wanted = pull.active
            && pull.channels.0 & output.channel.0 != 0
            && pull.procs.iter().any(|p| p.matches(&output.source))
            && pull.puller != output.source;
        if !wanted {
            return false;
        }
        let Some(c) = cx.conns.get(&pull.conn) else {
            return false;
        };
        let dialect = c.version.dialect();
        let delivery = IofDelivery {
            source: output.source.clone(),
            channel: output.channel,
            remote_id: pull.their_id,
            // A value the puller cannot decode would lose it the output (6.1: statistics).
            info: (output.info.iter())
                .filter(|i| dialect.can_read(&i.value))
                .cloned()
                .collect(),
            data: ByteObject(output.data.clone()),
        };
        match delivery.encode(c.buffer_type) {
            Ok(payload) => {
                cx.push(Action::Send {
                    conn: pull.conn,
                    tag: Tag::IOF,
                    payload,
                });
                true
            }
            Err(e) => {
                tracing::warn!("cannot encode forwarded output for {:?}: {e}", pull.puller);
                false
            }
        }
    }

    /// Keep `output` for pulls to come, dropping the oldest beyond the cache's bounds.
    fn keep(&mut self, output: Output) {
        self.cached_bytes += output.data.len();
        self.cache.push_back(output);
        while self.cache.len() > CACHE_LIMIT || self.cached_bytes > CACHE_BYTES {
            let Some(oldest) = self.cache.pop_front() else {
                break;
            };
            self.cached_bytes -= oldest.data.len();
        }
    }

    /// Hand the pull `id` the cached output it wants, which then leaves the cache.
    fn flush_cache(&mut self, cx: &mut Shared, id: u64) {
        let cache = std::mem::take(&mut self.cache);
        self.cached_bytes = 0;
        for output in cache {
            if !self.forward(cx, id, &output) {
                self.cached_bytes += output.data.len();
                self.cache.push_back(output);
            }
        }
    }

    /// `conn` closed: its pulls end (the host is not told: it may forward to other pullers).
    pub(super) fn conn_closed(&mut self, conn: ConnId) {
        self.pulls.retain(|_, p| p.conn != conn);
    }
}
