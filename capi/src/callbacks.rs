//! Calling the C caller's functions: the data it passes with a callback, carried to the
//! thread that calls back; op callbacks; and event handlers, each called with what its turn
//! lends it (the event's source, infos and the results of the handlers before it) and ended
//! by the completion function it is handed (`notification_done`), from inside the handler or
//! later from any thread.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, PoisonError};

use pmix::model::{Info, Status};

use crate::boundary::guard_or;
use crate::types::{CInfo, CProc, CStatus, NotificationFn, OpCb};
use crate::values::{c_proc, free_infos, read_infos, write_infos};

/// A caller's callback data, carried to the thread that calls the callback. The library
/// never reads it; only the callback does, as the caller arranged.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CbData(pub(crate) *mut c_void);

// SAFETY: the pointer is only handed back to the caller's callback, which the standard lets
// run on any thread of the library.
unsafe impl Send for CbData {}

impl CbData {
    /// The pointer, for the callback (a method, so that a closure captures the whole
    /// `CbData`, which is `Send`, not its field).
    pub(crate) fn ptr(self) -> *mut c_void {
        self.0
    }
}

/// Call an op callback with `status` (inside the panic boundary, as every callback).
pub(crate) fn call_op(cbfunc: OpCb, status: Status, cbdata: CbData) {
    crate::boundary::guard_or("op callback", (), || {
        // SAFETY: the callback and its data the caller passed for this call's outcome.
        unsafe { cbfunc(status.0, cbdata.ptr()) }
    });
}

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
    handler: NotificationFn,
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
                Some(notification_done),
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
    cbfunc: Option<OpCb>,
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
