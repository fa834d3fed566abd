//! Event handlers and notifications (v5.0 §10.1) for C callers: `PMIx_Register_event_handler`,
//! `PMIx_Deregister_event_handler`, `PMIx_Notify_event`.
//!
//! In a process that runs a server and no client, the three calls are the host's
//! (`state/host_events.rs`, which holds its handlers).
//!
//! A C handler runs on one of the client's threads, one at a time along the chain. It is
//! lent the event's source, infos and the results of the handlers before it, and ends its
//! turn by calling the completion function it is given, from inside the handler or later
//! from any thread; the chain goes on then (`crate::callbacks` calls it).

use std::ffi::c_void;

use pmix::model::{DataRange, Info, Status, attr};

use crate::args::{Array, In};
use crate::boundary::guard;
use crate::callbacks::{CbData, Completion, Delivery, call_op, call_registration, run_handler};
use crate::state::client::with_client;
use crate::state::host_events as server_events;
use crate::state::server::Caller;
use crate::state::threads::{detached_on, run_counted};
use crate::types::{CInfo, CProc, CStatus, HdlrRegCb, NotificationFn, OpCb};
use crate::values::read_proc;

/// `PMIx_Register_event_handler`: with `cbfunc`, the registration completes on the library's
/// thread and `cbfunc` receives its reference; without, the call blocks and returns the
/// reference (non-negative) or an error.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Register_event_handler(
    codes: Array<'_, CStatus>,
    ncodes: usize,
    info: Array<'_, CInfo>,
    ninfo: usize,
    evhdlr: Option<NotificationFn>,
    cbfunc: Option<HdlrRegCb>,
    cbdata: *mut c_void,
) -> CStatus {
    let mut reference: CStatus = 0;
    let rc = guard("PMIx_Register_event_handler", || {
        let handler = evhdlr.ok_or(Status::ERR_BAD_PARAM)?;
        let (codes, info) = (codes.slice(ncodes)?, info.infos(ninfo)?);
        let codes: Vec<Status> = codes.iter().map(|c| Status(*c)).collect();
        let returned = (info.iter())
            .find(|i| i.is(attr::EVENT_RETURN_OBJECT))
            .cloned();
        let c = match crate::state::server::caller()? {
            Caller::Client(c) => c,
            Caller::Host => {
                let id = server_events::register(&codes, &info, handler, returned)?;
                let Some(done) = cbfunc else {
                    reference = CStatus::try_from(id).map_err(|_| Status::ERR_OUT_OF_RESOURCE)?;
                    return Ok(());
                };
                let data = CbData(cbdata);
                return server_events::on_server_thread(move || {
                    call_registration(done, Status::SUCCESS, id, data);
                });
            }
        };
        let register = move |c: &pmix::client::blocking::Client| {
            c.register_event_handler(&codes, &info, move |notice, mut completion| {
                // On one of the client's threads, where a C handler may block and call the
                // library (the chain waits for its completion, not for its return; but a
                // process's own notification waits for the handler's return).
                let returned = returned.clone();
                let in_call = completion.in_call();
                let turn = move || {
                    let event = Delivery {
                        handler: notice.handler,
                        status: notice.status,
                        source: &notice.source,
                        info: &notice.info,
                        results: &notice.results,
                    };
                    let done: Completion = Box::new(move |s, r| completion.complete(s, r));
                    run_handler(handler, returned.as_ref(), &event, done);
                    drop(in_call);
                };
                // Through the lock, not a reference of its own: this runs on the client's
                // runtime, where the client must never be dropped.
                let mut turn = Some(turn);
                let _ = with_client(|c| {
                    if let Some(t) = turn.take() {
                        run_counted(c, t);
                    }
                });
                if let Some(t) = turn {
                    t();
                }
            })
            .map_err(|e| e.status())
        };
        match cbfunc {
            Some(done) => {
                let data = CbData(cbdata);
                detached_on(c, move |c| {
                    let (status, id) = match register(c) {
                        Ok(id) => (Status::SUCCESS, id),
                        Err(s) => (s, 0),
                    };
                    call_registration(done, status, id, data);
                });
                Ok(())
            }
            None => {
                let id = register(&c)?;
                reference = CStatus::try_from(id).map_err(|_| Status::ERR_OUT_OF_RESOURCE)?;
                Ok(())
            }
        }
    });
    if rc == Status::SUCCESS.0 {
        reference
    } else {
        rc
    }
}

/// `PMIx_Deregister_event_handler`: the handler is not called again.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Deregister_event_handler(
    evhdlr_ref: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Deregister_event_handler", || {
        let c = match crate::state::server::caller()? {
            Caller::Client(c) => c,
            Caller::Host => {
                let r = server_events::deregister(evhdlr_ref);
                let Some(f) = cbfunc else {
                    return r;
                };
                let (status, data) = (r.err().unwrap_or(Status::SUCCESS), CbData(cbdata));
                return server_events::on_server_thread(move || call_op(f, status, data));
            }
        };
        let r = c
            .deregister_event_handler(evhdlr_ref)
            .map_err(|e| e.status());
        // A reference the client does not know: the standard refuses it (v5.0 §10.1.7,
        // PMIX_ERR_BAD_PARAM); OpenPMIx's library answers success, and programs written
        // for it deregister handlers twice (`departures.rs`).
        let r = match r {
            Err(Status::ERR_BAD_PARAM) if !crate::departures::strict() => Ok(()),
            other => other,
        };
        if let Some(f) = cbfunc {
            let status = r.err().unwrap_or(Status::SUCCESS);
            let data = CbData(cbdata);
            detached_on(c, move |_| call_op(f, status, data));
            return Ok(());
        }
        r
    })
}

/// `PMIx_Notify_event`: raise `status` to `range` (the caller when `source` is NULL). With
/// `cbfunc` the call completes on the library's thread; without, it blocks.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Notify_event(
    status: CStatus,
    source: In<'_, CProc>,
    range: u8,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Notify_event", || {
        let info: Vec<Info> = info.infos(ninfo)?;
        let source = source.get().map(read_proc).transpose()?;
        let c = match crate::state::server::caller()? {
            Caller::Client(c) => c,
            Caller::Host => {
                let notify =
                    move || server_events::notify(Status(status), source, DataRange(range), info);
                let Some(f) = cbfunc else {
                    return notify();
                };
                let data = CbData(cbdata);
                return server_events::on_server_thread(move || {
                    call_op(f, notify().err().unwrap_or(Status::SUCCESS), data);
                });
            }
        };
        let notify = move |c: &pmix::client::blocking::Client| {
            c.notify_event(Status(status), source.as_ref(), DataRange(range), &info)
                .map_err(|e| e.status())
        };
        match cbfunc {
            Some(f) => {
                let data = CbData(cbdata);
                detached_on(c, move |c| {
                    let outcome = notify(c).err().unwrap_or(Status::SUCCESS);
                    call_op(f, outcome, data);
                });
                Ok(())
            }
            None => notify(&c),
        }
    })
}
