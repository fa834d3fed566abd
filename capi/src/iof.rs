//! I/O forwarding for C callers (v5.0 §18.5): `PMIx_IOF_pull`, `PMIx_IOF_deregister`,
//! `PMIx_IOF_push`, made by a client or a tool of its server. The host's side,
//! `PMIx_server_IOF_deliver` and the `iof_pull`/`push_stdin` upcalls, is the server's
//! (`server/`).
//!
//! A pull's C handler (`pmix_iof_cbfunc_t`) is called on one of the client's threads, where
//! it may block and call the library, one output at a time and in the order the output
//! arrived: output joins one queue, drained by one thread at a time. The handler is lent the
//! source, the bytes and the infos until it returns. A pull without a handler has its output
//! written to this process's stdout or stderr, as OpenPMIx's library does.
//!
//! A host (a process that runs a server and no client) cannot pull or push through these
//! calls yet: they answer `PMIX_ERR_NOT_SUPPORTED` there.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pmix::client::IofOutput;
use pmix::model::{IofChannel, Status};

use crate::args::{Array, In};
use crate::boundary::guard;
use crate::callbacks::{CbData, call_iof, call_op, call_registration};
use crate::state::client::with_client;
use crate::state::server::Caller;
use crate::state::threads::{detached_on, run_counted};
use crate::types::{CByteObject, CInfo, CProc, CStatus, HdlrRegCb, IofCb, OpCb};

/// Output waiting for its handler, and whether a thread is handing it over.
#[derive(Default)]
struct Queue {
    waiting: VecDeque<(Option<IofCb>, IofOutput)>,
    draining: bool,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    waiting: VecDeque::new(),
    draining: false,
});

fn queue() -> MutexGuard<'static, Queue> {
    // Each change is made in one step: a panic elsewhere cannot tear it.
    QUEUE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Queue `output` for `handler`; start a thread that hands the queue over if none does.
fn arrived(handler: Option<IofCb>, output: IofOutput) {
    let mut q = queue();
    q.waiting.push_back((handler, output));
    if q.draining {
        return;
    }
    q.draining = true;
    drop(q);
    // Through the lock, not a reference of its own: this runs on the client's runtime,
    // where the client must never be dropped. Finalized meanwhile: the output is dropped.
    let started = with_client(|c| run_counted(c, drain));
    if started.is_err() {
        *queue() = Queue::default();
    }
}

/// Hand over queued output, in order, until none is left.
fn drain() {
    loop {
        let next = {
            let mut q = queue();
            let next = q.waiting.pop_front();
            if next.is_none() {
                q.draining = false;
            }
            next
        };
        let Some((handler, output)) = next else {
            return;
        };
        match handler {
            Some(f) => call_iof(f, output),
            None => write_out(&output),
        }
    }
}

/// Output of a pull without a handler: to this process's own stdout, or stderr.
fn write_out(output: &IofOutput) {
    let written = if output.channel.0 & IofChannel::STDOUT_CHANNEL.0 != 0 {
        std::io::stdout().write_all(&output.data)
    } else {
        std::io::stderr().write_all(&output.data)
    };
    if let Err(e) = written {
        tracing::debug!("cannot write forwarded output: {e}");
    }
}

/// `PMIx_IOF_pull`: have the output of `procs` on `channel` handed to `cbfunc`. With
/// `regcbfunc` the registration completes on the library's thread and `regcbfunc` receives
/// the pull's id; without, the call blocks and returns the id (non-negative) or an error.
/// Standard input cannot be pulled (`PMIX_ERR_NOT_SUPPORTED`).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)] // the C signature
pub extern "C" fn PMIx_IOF_pull(
    procs: Array<'_, CProc>,
    nprocs: usize,
    directives: Array<'_, CInfo>,
    ndirs: usize,
    channel: u16,
    cbfunc: Option<IofCb>,
    regcbfunc: Option<HdlrRegCb>,
    regcbdata: *mut c_void,
) -> CStatus {
    let mut reference: CStatus = 0;
    let rc = guard("PMIx_IOF_pull", || {
        let Caller::Client(c) = crate::state::server::caller()? else {
            return Err(Status::ERR_NOT_SUPPORTED);
        };
        if channel & IofChannel::STDIN_CHANNEL.0 != 0 {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let (procs, directives) = (procs.procs(nprocs)?, directives.infos(ndirs)?);
        let handler = Arc::new(move |o: IofOutput| arrived(cbfunc, o));
        let pull = move |c: &pmix::client::blocking::Client| {
            (c.iof_pull(&procs, IofChannel(channel), &directives, handler))
                .map_err(|e| e.status())
                .and_then(|id| usize::try_from(id).map_err(|_| Status::ERR_OUT_OF_RESOURCE))
        };
        let Some(done) = regcbfunc else {
            let id = pull(&c)?;
            reference = CStatus::try_from(id).map_err(|_| Status::ERR_OUT_OF_RESOURCE)?;
            return Ok(());
        };
        let data = CbData(regcbdata);
        detached_on(c, move |c| {
            let (status, id) = match pull(c) {
                Ok(id) => (Status::SUCCESS, id),
                Err(s) => (s, 0),
            };
            call_registration(done, status, id, data);
        });
        Ok(())
    });
    if rc == Status::SUCCESS.0 {
        reference
    } else {
        rc
    }
}

/// `PMIx_IOF_deregister`: end the pull `iofhdlr`. With `cbfunc` the call completes on the
/// library's thread; without, it blocks.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_IOF_deregister(
    iofhdlr: usize,
    directives: Array<'_, CInfo>,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_IOF_deregister", || {
        let Caller::Client(c) = crate::state::server::caller()? else {
            return Err(Status::ERR_NOT_SUPPORTED);
        };
        let directives = directives.infos(ndirs)?;
        let id = iofhdlr as u64;
        let deregister = move |c: &pmix::client::blocking::Client| {
            c.iof_deregister(id, &directives).map_err(|e| e.status())
        };
        let Some(f) = cbfunc else {
            return deregister(&c);
        };
        let data = CbData(cbdata);
        detached_on(c, move |c| {
            let status = deregister(c).err().unwrap_or(Status::SUCCESS);
            call_op(f, status, data);
        });
        Ok(())
    })
}

/// `PMIx_IOF_push`: send the bytes of `bo` to the standard input of `targets` (NULL: the
/// directives alone, `PMIX_IOF_COMPLETE` closing the input). With `cbfunc` the call completes
/// on the library's thread; without, it blocks. Forwarding this process's own standard input
/// (`PMIX_IOF_PUSH_STDIN`) is not supported.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_IOF_push(
    targets: Array<'_, CProc>,
    ntargets: usize,
    bo: In<'_, CByteObject>,
    directives: Array<'_, CInfo>,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_IOF_push", || {
        let Caller::Client(c) = crate::state::server::caller()? else {
            return Err(Status::ERR_NOT_SUPPORTED);
        };
        let (targets, directives) = (targets.procs(ntargets)?, directives.infos(ndirs)?);
        // Read now: the caller may reuse the byte object at once.
        let data = if bo.get().is_some() {
            Some(bo.bytes()?)
        } else {
            None
        };
        let push = move |c: &pmix::client::blocking::Client| {
            (c.iof_push(&targets, data.as_deref(), &directives)).map_err(|e| e.status())
        };
        let Some(f) = cbfunc else {
            return push(&c);
        };
        let data = CbData(cbdata);
        detached_on(c, move |c| {
            let status = push(c).err().unwrap_or(Status::SUCCESS);
            call_op(f, status, data);
        });
        Ok(())
    })
}
