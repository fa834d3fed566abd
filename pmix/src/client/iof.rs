//! I/O forwarding at a client or tool (v5.0 §18.5): pull the output of other processes,
//! stop pulling it, push data to their standard input.
//!
//! A pull gets an id of this process, which the server writes in every delivery it forwards
//! (tag 2), so the delivery task (`events.rs`) hands each one to the pull's handler. The
//! server answers a pull with an id of its own, kept here to deregister it. Output that
//! names no pull of this process (a pull deregistered while output was on its way) is
//! written to this process's own stdout or stderr, as OpenPMIx's library does.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use crate::Error;
use crate::model::{ByteObject, Info, IofChannel, Proc, Status, attr};
use crate::wire::ops::{IofDelivery, Op};
use crate::wire::{OpReply, Reply, Request};

use super::Client;

/// Output forwarded to a pull.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct IofOutput {
    /// The id [`Client::iof_pull`] returned.
    pub handler: u64,
    /// The process that wrote it.
    pub source: Proc,
    /// The one channel it was written on.
    pub channel: IofChannel,
    /// What came with it (`PMIX_IOF_COMPLETE` at its end, …).
    pub info: Vec<Info>,
    pub data: Vec<u8>,
}

/// A pull's handler (`pmix_iof_cbfunc_t`): called on the client's runtime, one at a time
/// with the event handlers, in the order the output arrived; it must not block.
pub type IofHandler = Arc<dyn Fn(IofOutput) + Send + Sync>;

/// The process's pulls: each one's handler and the server's id for it.
#[derive(Default)]
pub(crate) struct Pulls {
    next: u64,
    by_id: BTreeMap<u64, (IofHandler, Option<u64>)>,
}

impl Pulls {
    fn add(&mut self, handler: IofHandler) -> u64 {
        // Id 0 is OpenPMIx's default handler's: pulls start at 1.
        self.next += 1;
        self.by_id.insert(self.next, (handler, None));
        self.next
    }
}

fn lock(pulls: &Mutex<Pulls>) -> std::sync::MutexGuard<'_, Pulls> {
    pulls.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Hand `output` to the pull it names, or write it out when none does.
pub(super) fn hand_over(pulls: &Mutex<Pulls>, output: IofDelivery) {
    let handler = lock(pulls)
        .by_id
        .get(&output.remote_id)
        .map(|(h, _)| h.clone());
    let Some(handler) = handler else {
        let written = if output.channel.0 & IofChannel::STDOUT_CHANNEL.0 != 0 {
            std::io::stdout().write_all(&output.data.0)
        } else {
            std::io::stderr().write_all(&output.data.0)
        };
        if let Err(e) = written {
            tracing::debug!("cannot write forwarded output: {e}");
        }
        return;
    };
    let out = IofOutput {
        handler: output.remote_id,
        source: output.source,
        channel: output.channel,
        info: output.info,
        data: output.data.0,
    };
    // A handler that panics has seen its output; later output still flows.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(out)));
}

impl Client {
    /// `PMIx_IOF_pull`: have the output of `procs` (a wildcard rank: all of a namespace) on
    /// `channels` forwarded to `handler` (v5.0 §18.5.7); the pull's id, for
    /// [`Client::iof_deregister`]. Standard input cannot be pulled
    /// (`PMIX_ERR_NOT_SUPPORTED`). The server's host must agree to forward the output; the
    /// output the server kept for lack of a puller comes first.
    pub async fn iof_pull(
        &self,
        procs: &[Proc],
        channels: IofChannel,
        directives: &[Info],
        handler: IofHandler,
    ) -> Result<u64, Error> {
        if channels.0 & IofChannel::STDIN_CHANNEL.0 != 0 {
            return Err(Error::Status(
                Status::ERR_NOT_SUPPORTED,
                "standard input is pushed, not pulled".into(),
            ));
        }
        if procs.is_empty() || channels.0 == 0 {
            return Err(Status::ERR_BAD_PARAM.into());
        }
        let pulls = &self.inner.events.pulls;
        let id = lock(pulls).add(handler);
        let req = Request::Op(Op::IofPull {
            procs: procs.to_vec(),
            directives: directives.to_vec(),
            channel: channels,
            local_id: id,
        });
        let reply = self.inner.conn.request(&req).await;
        let status = match reply {
            Ok(Reply::Op(OpReply::IofPull {
                status: Status::SUCCESS,
                remote_id: Some(remote),
            })) => {
                if let Some(pull) = lock(pulls).by_id.get_mut(&id) {
                    pull.1 = Some(remote);
                }
                return Ok(id);
            }
            Ok(Reply::Op(OpReply::IofPull { status, .. })) if status != Status::SUCCESS => {
                Error::from(status)
            }
            Ok(_) => Error::Status(Status::ERR_UNPACK_FAILURE, "an unexpected reply".into()),
            Err(e) => e,
        };
        lock(pulls).by_id.remove(&id);
        Err(status)
    }

    /// `PMIx_IOF_deregister`: end the pull `id` (v5.0 §18.5.8); an id this process does not
    /// hold is `PMIX_ERR_BAD_PARAM`. Output already on its way goes to this process's own
    /// stdout or stderr.
    pub async fn iof_deregister(&self, id: u64, directives: &[Info]) -> Result<(), Error> {
        let removed = lock(&self.inner.events.pulls).by_id.remove(&id);
        let Some((_, Some(remote_id))) = removed else {
            return Err(Status::ERR_BAD_PARAM.into());
        };
        let req = Request::Op(Op::IofDeregister {
            directives: directives.to_vec(),
            remote_id,
        });
        self.status_of(&req).await
    }

    /// `PMIx_IOF_push`: send `data` to the standard input of `targets` (v5.0 §18.5.9),
    /// through the server and its host; no data: `directives` alone (`PMIX_IOF_COMPLETE`
    /// ends the input). Forwarding this process's own standard input
    /// (`PMIX_IOF_PUSH_STDIN`) is not supported.
    pub async fn iof_push(
        &self,
        targets: &[Proc],
        data: Option<&[u8]>,
        directives: &[Info],
    ) -> Result<(), Error> {
        if data.is_none() && Info::flag(directives, attr::IOF_PUSH_STDIN) {
            return Err(Error::Status(
                Status::ERR_NOT_SUPPORTED,
                "forwarding this process's own standard input".into(),
            ));
        }
        let req = Request::Op(Op::IofPush {
            targets: targets.to_vec(),
            directives: directives.to_vec(),
            data: data.map(|d| ByteObject(d.to_vec())),
        });
        self.status_of(&req).await
    }
}
