//! Event handlers and notifications (v5.0 §10.1) for C callers: `PMIx_Register_event_handler`,
//! `PMIx_Deregister_event_handler`, `PMIx_Notify_event`.
//!
//! In a process that runs a server and no client, the three calls are the host's
//! (`server/events.rs`).
//!
//! A C handler runs on one of the client's threads, one at a time along the chain. It is
//! lent the event's source, infos and the results of the handlers before it, and ends its
//! turn by calling the completion function it is given (`notification_done`), from inside
//! the handler or later from any thread; the chain goes on then.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, PoisonError};

use pmix::model::{DataRange, Info, Status, attr};

use crate::boundary::{guard, guard_or, slice_of};
use crate::client::with_client;
use crate::nb::{CbData, OpCallback, call_op, detached_on, run_counted};
use crate::server::Caller;
use crate::server::events as server_events;
use crate::types::{CInfo, CProc, CStatus};
use crate::values::{c_proc, free_infos, read_infos, read_proc, write_infos};

/// `pmix_event_notification_cbfunc_fn_t`: how a handler ends its turn.
type NotificationDone =
    unsafe extern "C" fn(CStatus, *mut CInfo, usize, Option<OpCallback>, *mut c_void, *mut c_void);

/// `pmix_notification_fn_t`: a C event handler.
pub(crate) type CHandler = unsafe extern "C" fn(
    usize,
    CStatus,
    *const CProc,
    *mut CInfo,
    usize,
    *mut CInfo,
    usize,
    NotificationDone,
    *mut c_void,
);

/// `pmix_hdlr_reg_cbfunc_t`.
pub(crate) type RegistrationDone = unsafe extern "C" fn(CStatus, usize, *mut c_void);

/// What a C handler's turn lends it: the event's source, infos and the results before it.
/// They stay valid until the handler has both returned and called its completion, in
/// either order: a handler may complete first and still read them before it returns.
struct Lent {
    source: Box<CProc>,
    info: (*mut CInfo, usize),
    results: (*mut CInfo, usize),
}

// SAFETY: the arrays are this library's, read by the handler and released by whichever
// thread ends the turn last; nothing else refers to them.
unsafe impl Send for Lent {}

// SAFETY: shared between the handler's call and its completion, which only read the
// pointers; the one release is `Drop`'s, when the last holder lets go.
unsafe impl Sync for Lent {}

impl Drop for Lent {
    fn drop(&mut self) {
        // SAFETY: the arrays `run_handler` wrote, released once.
        unsafe {
            free_infos(self.info.0, self.info.1);
            free_infos(self.results.0, self.results.1);
        }
    }
}

/// How a handler's turn ends: its status and its results, handed to the chain.
pub(crate) type Completion = Box<dyn FnOnce(Status, Vec<Info>) + Send>;

/// One handler's turn, shared by the handler's call and its completion.
struct Turn {
    completion: Mutex<Option<Completion>>,
    lent: Lent,
}

/// One event as a handler's turn hands it over.
pub(crate) struct Delivery<'a> {
    /// The handler's registration reference.
    pub(crate) handler: usize,
    pub(crate) status: Status,
    pub(crate) source: &'a pmix::model::Proc,
    pub(crate) info: &'a [Info],
    /// What the handlers before it in the chain returned.
    pub(crate) results: &'a [Info],
}

/// Call the C handler `handler` for `event`, with the registration's
/// `PMIX_EVENT_RETURN_OBJECT` (if it gave one) at the end of the event's infos, as OpenPMIx
/// hands it back. `completion` receives the handler's end of turn.
pub(crate) fn run_handler(
    handler: CHandler,
    returned: Option<&Info>,
    event: &Delivery<'_>,
    completion: Completion,
) {
    tracing::debug!(
        "event {:?} from {:?} to handler {}",
        event.status,
        event.source,
        event.handler
    );
    let mut info = event.info.to_vec();
    info.extend(returned.cloned());
    let lent = write_infos(&info).and_then(|i| Ok((i, write_infos(event.results)?)));
    let Ok((info, results)) = lent else {
        // Memory ran out: the chain goes on without this handler's results.
        completion(Status::SUCCESS, Vec::new());
        return;
    };
    let turn = Arc::new(Turn {
        completion: Mutex::new(Some(completion)),
        lent: Lent {
            source: Box::new(c_proc(event.source)),
            info,
            results,
        },
    });
    let source = &raw const *turn.lent.source;
    // The completion's reference, handed back to `notification_done`.
    let cookie = Arc::into_raw(Arc::clone(&turn)).cast_mut().cast::<c_void>();
    guard_or("event handler", (), || {
        // SAFETY: the handler the caller registered, with what `turn` lends, which lives
        // until this call has returned and the completion has run.
        unsafe {
            handler(
                event.handler,
                event.status.0,
                source,
                info.0,
                info.1,
                results.0,
                results.1,
                notification_done,
                cookie,
            )
        }
    });
    drop(turn);
}

/// A handler's end of turn: `status` (`PMIX_EVENT_ACTION_COMPLETE` ends the chain) and its
/// results for the handlers after it.
///
/// # Safety
/// `cookie` is the one `run_handler` passed, used once; `results` holds `nresults` infos.
unsafe extern "C" fn notification_done(
    status: CStatus,
    results: *mut CInfo,
    nresults: usize,
    cbfunc: Option<OpCallback>,
    thiscbdata: *mut c_void,
    cookie: *mut c_void,
) {
    guard_or("event handler completion", (), || {
        if cookie.is_null() {
            return;
        }
        tracing::debug!("handler completed with {status}, {nresults} results");
        // SAFETY: the handler's results, as it hands them.
        let added = unsafe { read_infos(results, nresults) }.unwrap_or_default();
        // SAFETY: the reference `run_handler` made for this call, taken back once.
        let turn = unsafe { Arc::from_raw(cookie.cast_const().cast::<Turn>()) };
        let completion = turn
            .completion
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(c) = completion {
            c(Status(status), added);
        }
        if let Some(f) = cbfunc {
            // The handler's results have been read: it may release them.
            call_op(f, Status::SUCCESS, CbData(thiscbdata));
        }
    });
}

/// `PMIx_Register_event_handler`: with `cbfunc`, the registration completes on the library's
/// thread and `cbfunc` receives its reference; without, the call blocks and returns the
/// reference (non-negative) or an error.
///
/// # Safety
/// `codes` holds `ncodes` codes and `info` `ninfo` infos; `evhdlr` is a handler; `cbfunc`
/// is NULL or callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Register_event_handler(
    codes: *mut CStatus,
    ncodes: usize,
    info: *mut CInfo,
    ninfo: usize,
    evhdlr: Option<CHandler>,
    cbfunc: Option<RegistrationDone>,
    cbdata: *mut c_void,
) -> CStatus {
    let mut reference: CStatus = 0;
    let rc = guard("PMIx_Register_event_handler", || {
        let handler = evhdlr.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        let (codes, info) = unsafe { (slice_of(codes, ncodes)?, read_infos(info, ninfo)?) };
        let codes: Vec<Status> = codes.iter().map(|c| Status(*c)).collect();
        let returned = (info.iter())
            .find(|i| i.is(attr::EVENT_RETURN_OBJECT))
            .cloned();
        let c = match crate::server::caller()? {
            Caller::Client(c) => c,
            Caller::Host => {
                let id = server_events::register(&codes, &info, handler, returned)?;
                let Some(done) = cbfunc else {
                    reference = CStatus::try_from(id).map_err(|_| Status::ERR_OUT_OF_RESOURCE)?;
                    return Ok(());
                };
                let data = CbData(cbdata);
                return server_events::on_server_thread(move || {
                    guard_or("registration callback", (), || {
                        // SAFETY: the caller's callback and data.
                        unsafe { done(Status::SUCCESS.0, id, data.ptr()) }
                    });
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
                    guard_or("registration callback", (), || {
                        // SAFETY: the caller's callback and data.
                        unsafe { done(status.0, id, data.ptr()) }
                    });
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
///
/// # Safety
/// `cbfunc` is NULL or callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Deregister_event_handler(
    evhdlr_ref: usize,
    cbfunc: Option<OpCallback>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Deregister_event_handler", || {
        let c = match crate::server::caller()? {
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
///
/// # Safety
/// `source` is NULL or a proc; `info` holds `ninfo` infos; `cbfunc` is NULL or callable with
/// `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Notify_event(
    status: CStatus,
    source: *const CProc,
    range: u8,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<OpCallback>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Notify_event", || {
        // SAFETY: the caller's promise.
        let info: Vec<Info> = unsafe { read_infos(info, ninfo)? };
        let source = if source.is_null() {
            None
        } else {
            // SAFETY: the caller's promise.
            Some(read_proc(unsafe { &*source })?)
        };
        let c = match crate::server::caller()? {
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
