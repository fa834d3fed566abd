//! I/O forwarding at a client or tool (v5.0 §18.5): pull the output of other processes,
//! stop pulling it, push data to their standard input.
//!
//! A pull gets an id of this process, which the server writes in every delivery it forwards
//! (tag 2), so the delivery task (`events.rs`, which keeps the pulls) hands each one to the
//! pull's handler. The server answers a pull with an id of its own, kept there to
//! deregister it.

use crate::Error;
use crate::model::{ByteObject, Info, IofChannel, Proc, Status, attr};
use crate::wire::ops::Op;
use crate::wire::{OpReply, Reply, Request};

use super::Client;
use super::events::{IofHandler, lock_pulls};

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
        let id = lock_pulls(pulls).add(handler);
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
                if let Some(pull) = lock_pulls(pulls).by_id.get_mut(&id) {
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
        lock_pulls(pulls).by_id.remove(&id);
        Err(status)
    }

    /// Number this connection's pulls from past `base`: a tool attached to several servers
    /// gives each connection its own range, so that pull references stay unique in it.
    pub(crate) fn number_pulls_from(&self, base: u64) {
        lock_pulls(&self.inner.events.pulls).start_after(base);
    }

    /// `PMIx_IOF_deregister`: end the pull `id` (v5.0 §18.5.8); an id this process does not
    /// hold is `PMIX_ERR_BAD_PARAM`. Its handler is not called again: output already on its
    /// way is dropped.
    pub async fn iof_deregister(&self, id: u64, directives: &[Info]) -> Result<(), Error> {
        let removed = lock_pulls(&self.inner.events.pulls).by_id.remove(&id);
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
