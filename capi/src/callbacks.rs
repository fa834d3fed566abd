//! Calling the C caller's functions: the data it passes with a callback, carried to the
//! thread that calls back; op, info, value, lookup, spawn, credential, validation,
//! registration, device distance, direct-modex and setup-application callbacks; I/O
//! forwarding handlers; and event handlers, each called with what its turn lends it (the
//! event's source, infos and the results of the handlers before it) and ended by the
//! completion function it is handed (`notification_done`), from inside the handler or later
//! from any thread.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex, PoisonError};

use pmix::client::IofOutput;
use pmix::model::{DeviceDistance, Info, PData, Status, Value};

use crate::boundary::{calloc_array, free, guard_or, write_fixed};
use crate::types::{
    CByteObject, CInfo, CPdata, CProc, CStatus, CredentialCb, DeviceDistCb, DmodexResponseFn,
    HdlrRegCb, InfoCb, IofCb, LookupCb, NotificationFn, OpCb, SetupApplicationCb, SpawnCb,
    ValidationCb, ValueCb,
};
use crate::values::{
    c_proc, destruct_value, free_distances, free_infos, read_infos, undef_value, write_distances,
    write_infos, write_value,
};

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

/// How to release what a callback is lent until it calls the release function it is handed
/// (an array of infos, of distances).
/// Any thread may run it: the caller may call the release function from any of its threads.
type Release = Box<dyn FnOnce() + Send>;

/// The cookie handed with a release function: what [`release_lent`] runs.
fn lend(release: impl FnOnce() + Send + 'static) -> *mut c_void {
    Box::into_raw(Box::new(Box::new(release) as Release)).cast()
}

/// An array of this library's (of libc's allocator) and its length, lent to a callback.
pub(crate) struct LentArray<T>(*mut T, usize);

// SAFETY: the array is this library's, reached only through this value, and released by
// whichever thread runs the release function the caller is handed.
unsafe impl<T> Send for LentArray<T> {}

impl<T> LentArray<T> {
    /// The array and its length (a method, so that a closure takes the whole value).
    fn parts(self) -> (*mut T, usize) {
        (self.0, self.1)
    }
}

/// `infos` as an array of libc's allocator, to lend to a callback.
pub(crate) fn lent_infos(infos: &[Info]) -> Result<LentArray<CInfo>, Status> {
    let (array, n) = write_infos(infos)?;
    Ok(LentArray(array, n))
}

/// `pmix_release_cbfunc_t` for what a callback was lent.
///
/// # Safety
/// `cookie` is one [`lend`] made, released once.
unsafe extern "C" fn release_lent(cookie: *mut c_void) {
    guard_or("release callback", (), || {
        if !cookie.is_null() {
            // SAFETY: the box `lend` made, reclaimed once.
            let release = unsafe { Box::from_raw(cookie.cast::<Release>()) };
            release();
        }
    });
}

/// The cookie that releases `n` infos at `array` (of [`write_infos`]).
fn lend_infos(infos: LentArray<CInfo>) -> *mut c_void {
    lend(move || {
        let (array, n) = infos.parts();
        // SAFETY: the array `write_infos` made, released once, when the callback is done.
        unsafe { free_infos(array, n) }
    })
}

/// Call an info callback with `status` and `infos`, lent until the callback releases them
/// (`pmix_info_cbfunc_t`); no infos if memory runs out, with `PMIX_ERR_NOMEM`.
pub(crate) fn call_info(cbfunc: InfoCb, status: Status, infos: &[Info], cbdata: CbData) {
    let (status, array, n) = match write_infos(infos) {
        Ok((array, n)) => (status, array, n),
        Err(s) => (s, std::ptr::null_mut(), 0),
    };
    let cookie = lend_infos(LentArray(array, n));
    guard_or("info callback", (), || {
        // SAFETY: the caller's callback and data, with infos valid until it releases them.
        unsafe { cbfunc(status.0, array, n, cbdata.ptr(), Some(release_lent), cookie) }
    });
}

/// Call a spawn callback with `status` and the new job's namespace (empty on failure).
pub(crate) fn call_spawn(cbfunc: SpawnCb, status: Status, nspace: &str, cbdata: CbData) {
    let mut field = [0 as c_char; 256];
    write_fixed(&mut field, nspace);
    guard_or("spawn callback", (), || {
        // SAFETY: the caller's callback and data, with a namespace valid for the call.
        unsafe { cbfunc(status.0, field.as_mut_ptr(), cbdata.ptr()) }
    });
}

/// Call a credential callback with `status`, the credential and what describes it, all
/// valid for the call only.
pub(crate) fn call_credential(
    cbfunc: CredentialCb,
    status: Status,
    mut credential: Vec<u8>,
    described: &[Info],
    cbdata: CbData,
) {
    let (array, n) = write_infos(described).unwrap_or((std::ptr::null_mut(), 0));
    let mut cred = CByteObject {
        bytes: credential.as_mut_ptr().cast(),
        size: credential.len(),
    };
    guard_or("credential callback", (), || {
        // SAFETY: the caller's callback and data, with blocks valid for the call.
        unsafe { cbfunc(status.0, &raw mut cred, array, n, cbdata.ptr()) }
    });
    // SAFETY: the array written above, no longer lent.
    unsafe { free_infos(array, n) };
}

/// Call a validation callback with `status` and what the credential proved, valid for the
/// call only.
pub(crate) fn call_validation(
    cbfunc: ValidationCb,
    status: Status,
    proved: &[Info],
    cbdata: CbData,
) {
    let (array, n) = write_infos(proved).unwrap_or((std::ptr::null_mut(), 0));
    guard_or("validation callback", (), || {
        // SAFETY: the caller's callback and data, with infos valid for the call.
        unsafe { cbfunc(status.0, array, n, cbdata.ptr()) }
    });
    // SAFETY: the array written above, no longer lent.
    unsafe { free_infos(array, n) };
}

/// Call a registration callback (`pmix_hdlr_reg_cbfunc_t`) with `status` and the
/// reference of the handler registered.
pub(crate) fn call_registration(cbfunc: HdlrRegCb, status: Status, id: usize, cbdata: CbData) {
    guard_or("registration callback", (), || {
        // SAFETY: the caller's callback and data.
        unsafe { cbfunc(status.0, id, cbdata.ptr()) }
    });
}

/// Call an I/O forwarding handler (`pmix_iof_cbfunc_t`) with `output`, lent for the
/// duration of the call. The bytes end with a NUL past their size: handlers that read them
/// as a C string (python3-pmix's does) stop there.
pub(crate) fn call_iof(handler: IofCb, mut output: IofOutput) {
    let mut source = c_proc(&output.source);
    let size = output.data.len();
    output.data.push(0);
    let mut payload = CByteObject {
        bytes: output.data.as_mut_ptr().cast::<c_char>(),
        size,
    };
    let (info, ninfo) = write_infos(&output.info).unwrap_or((std::ptr::null_mut(), 0));
    let id = usize::try_from(output.handler).unwrap_or(usize::MAX);
    guard_or("I/O forwarding handler", (), || {
        // SAFETY: the caller's handler; the source, the bytes and the infos live until it
        // returns.
        unsafe {
            handler(
                id,
                output.channel.0,
                &raw mut source,
                &raw mut payload,
                info,
                ninfo,
            )
        }
    });
    // SAFETY: the array `write_infos` allocated, released once, after the handler returned.
    unsafe { free_infos(info, ninfo) };
}

/// Call a value callback (`pmix_value_cbfunc_t`, a get's) with its outcome: the value is
/// lent for the call only.
pub(crate) fn call_value(cbfunc: ValueCb, got: Result<Value, Status>, data: CbData) {
    let mut value = undef_value();
    // `value` is ours: written, lent to the callback, then released.
    let status = match got.and_then(|v| write_value(&v, &mut value)) {
        Ok(()) => Status::SUCCESS,
        Err(s) => s,
    };
    let kv = if status == Status::SUCCESS {
        &raw mut value
    } else {
        std::ptr::null_mut()
    };
    guard_or("get callback", (), || {
        // SAFETY: the caller's callback and data, with a value valid for the call.
        unsafe { cbfunc(status.0, kv, data.ptr()) }
    });
    // SAFETY: the value written above, no longer lent.
    unsafe { destruct_value(&mut value) };
}

/// Call a lookup callback (`pmix_lookup_cbfunc_t`) with `found`, lent as a C array
/// released when it returns.
pub(crate) fn call_lookup(cbfunc: LookupCb, status: Status, found: &[PData], data: CbData) {
    let array: Result<*mut CPdata, Status> = calloc_array(found.len());
    let Ok(array) = array else {
        guard_or("lookup callback", (), || {
            // SAFETY: the caller's callback and data.
            unsafe { cbfunc(Status::ERR_NOMEM.0, std::ptr::null_mut(), 0, data.ptr()) }
        });
        return;
    };
    let mut filled = 0;
    let mut status = status;
    for (i, pd) in found.iter().enumerate() {
        // SAFETY: `array` holds `found.len()` zeroed pdata; element `i` is in it.
        let slot = unsafe { &mut *array.add(i) };
        slot.proc = c_proc(&pd.proc);
        write_fixed(&mut slot.key, pd.key.as_str());
        // A zeroed value holds nothing.
        if let Err(s) = write_value(&pd.value, &mut slot.value) {
            status = s;
            break;
        }
        filled += 1;
    }
    guard_or("lookup callback", (), || {
        // SAFETY: the caller's callback and data, with `filled` pdata valid for the call.
        unsafe { cbfunc(status.0, array, filled, data.ptr()) }
    });
    for i in 0..filled {
        // SAFETY: the values written above.
        unsafe { destruct_value(&mut (*array.add(i)).value) };
    }
    // SAFETY: the array allocated above.
    unsafe { free(array) };
}

/// Call a device distance callback (`pmix_device_dist_cbfunc_t`) with `outcome`, the array
/// lent until it releases it.
pub(crate) fn call_distances(
    cbfunc: DeviceDistCb,
    outcome: Result<Vec<DeviceDistance>, Status>,
    data: CbData,
) {
    let (status, array, n) = match outcome.and_then(|found| write_distances(&found)) {
        Ok((array, n)) => (Status::SUCCESS, array, n),
        Err(s) => (s, std::ptr::null_mut(), 0),
    };
    let lent = LentArray(array, n);
    let cookie = lend(move || {
        let (array, n) = lent.parts();
        // SAFETY: the array `write_distances` made, released once, when the callback is done.
        unsafe { free_distances(array, n) }
    });
    guard_or("device distance callback", (), || {
        // SAFETY: the caller's callback and data, with distances valid until it releases
        // them.
        unsafe { cbfunc(status.0, array, n, data.ptr(), Some(release_lent), cookie) }
    });
}

/// `pmix_op_cbfunc_t` releasing what [`call_setup_application`] lent (its status unused).
///
/// # Safety
/// `cookie` is the one `call_setup_application` passed, released once.
unsafe extern "C" fn release_setup(_status: CStatus, cookie: *mut c_void) {
    // SAFETY: the caller's promise, as `release_lent` takes it.
    unsafe { release_lent(cookie) };
}

/// Call a host's setup-application callback (`pmix_setup_application_cbfunc_t`) with
/// `infos` (written before, so that a failure to write them is the call's), lent until it
/// calls the release function it is handed.
pub(crate) fn call_setup_application(
    cbfunc: SetupApplicationCb,
    status: Status,
    infos: LentArray<CInfo>,
    cbdata: CbData,
) {
    let (array, n) = (infos.0, infos.1);
    let cookie = lend_infos(infos);
    guard_or("setup callback", (), || {
        // SAFETY: the host's callback and data, with infos it releases through
        // `release_setup`.
        unsafe {
            cbfunc(
                status.0,
                array,
                n,
                cbdata.ptr(),
                Some(release_setup),
                cookie,
            )
        }
    });
}

/// Call a host's direct-modex callback (`pmix_dmodex_response_fn_t`) with `status` and
/// the data, valid for the call only.
pub(crate) fn call_dmodex(
    cbfunc: DmodexResponseFn,
    status: Status,
    mut data: Vec<u8>,
    cbdata: CbData,
) {
    guard_or("dmodex callback", (), || {
        // SAFETY: the host's callback and data, with bytes valid for the call.
        unsafe { cbfunc(status.0, data.as_mut_ptr().cast(), data.len(), cbdata.ptr()) }
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
