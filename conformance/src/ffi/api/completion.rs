//! How results come back from the library: the slots a non-blocking call waits on and the
//! callbacks that fill them, the event and I/O handlers, and the per-process state later steps
//! read (event handlers and what they saw, I/O registrations, the fabric, the credential).

use std::sync::Condvar;

use super::*;
use crate::api::SeenEvent;

// ---- completions of the non-blocking forms ----

/// A callback's result, handed from the library's thread to the caller's.
pub(super) struct Slot<T>(Mutex<Option<T>>, Condvar);

impl<T> Slot<T> {
    pub(super) fn new() -> Arc<Slot<T>> {
        Arc::new(Slot(Mutex::new(None), Condvar::new()))
    }

    pub(super) fn put(&self, t: T) {
        *lock(&self.0) = Some(t);
        self.1.notify_all();
    }

    pub(super) fn wait(&self) -> T {
        let mut g = lock(&self.0);
        loop {
            if let Some(t) = g.take() {
                return t;
            }
            g = self
                .1
                .wait(g)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}

/// Hand `slot` to the library as `cbdata`; the callback takes it back with [`take`].
pub(super) fn give<T>(slot: &Arc<Slot<T>>) -> *mut c_void {
    Arc::into_raw(slot.clone()).cast_mut().cast()
}

/// Take back a slot given with [`give`].
///
/// # Safety
/// `cbdata` came from `give::<T>` and is taken back once.
pub(super) unsafe fn take<T>(cbdata: *mut c_void) -> Arc<Slot<T>> {
    // SAFETY: per the contract, an Arc leaked by `give` with this T.
    unsafe { Arc::from_raw(cbdata.cast_const().cast::<Slot<T>>()) }
}

/// Start a non-blocking call with `cbdata` and wait for its callback; an error at the start
/// is the result, and `PMIX_OPERATION_SUCCEEDED` (done at once, the standard's "no callback
/// will come") is a success (the callback will not run, so the slot's reference is
/// reclaimed).
pub(super) fn start_and_wait<T>(
    slot: &Arc<Slot<T>>,
    cbdata: *mut c_void,
    rc: i32,
    on_error: impl FnOnce(Status) -> T,
) -> T {
    if rc != PMIX_SUCCESS {
        // SAFETY: the library refused the call or completed it at once
        // (PMIX_OPERATION_SUCCEEDED), so it never calls back with `cbdata`.
        drop(unsafe { take::<T>(cbdata) });
        let status = if Status(rc) == Status::OPERATION_SUCCEEDED {
            Status::SUCCESS
        } else {
            Status(rc)
        };
        return on_error(status);
    }
    slot.wait()
}

pub(super) unsafe extern "C" fn op_done(status: i32, cbdata: *mut c_void) {
    // SAFETY: cbdata is a Slot<Status> given to the library for this callback.
    unsafe { take::<Status>(cbdata) }.put(Status(status));
}

pub(super) unsafe extern "C" fn lookup_done(
    status: i32,
    data: *mut CPdata,
    ndata: usize,
    cbdata: *mut c_void,
) {
    let found = if data.is_null() || ndata == 0 {
        Ok(Vec::new())
    } else {
        ready().and_then(|l| l.pdata_from_c(data, ndata))
    };
    let status = Status(status);
    let with_data = status == Status::SUCCESS || status == Status::ERR_PARTIAL_SUCCESS;
    let out = match found {
        Ok(data) if with_data => ApiOutput {
            data,
            ..ApiOutput::status(status)
        },
        Err(e) if with_data => ApiOutput::status(e),
        _ => ApiOutput::status(status),
    };
    // SAFETY: cbdata is a Slot<ApiOutput> given to the library for this callback.
    unsafe { take::<ApiOutput>(cbdata) }.put(out);
}

pub(super) unsafe extern "C" fn info_done(
    status: i32,
    info: *mut CInfo,
    ninfo: usize,
    cbdata: *mut c_void,
    release: Option<ReleaseCb>,
    release_cbdata: *mut c_void,
) {
    finish_info(status, info, ninfo, cbdata, || {
        if let Some(r) = release {
            // SAFETY: the library's release callback with its own data, once.
            unsafe { r(release_cbdata) };
        }
    });
}

/// The callback of `PMIx_server_setup_application` (`pmix_setup_application_cbfunc_t`): like
/// [`info_done`], but the library's release function is a `pmix_op_cbfunc_t`.
pub(super) unsafe extern "C" fn setup_app_done(
    status: i32,
    info: *mut CInfo,
    ninfo: usize,
    cbdata: *mut c_void,
    release: Option<OpCb>,
    release_cbdata: *mut c_void,
) {
    finish_info(status, info, ninfo, cbdata, || {
        if let Some(r) = release {
            // SAFETY: the library's release callback with its own data, once.
            unsafe { r(PMIX_SUCCESS, release_cbdata) };
        }
    });
}

/// Read the infos a callback was handed, let the library release them, and fill the
/// waiting caller's slot (`cbdata`, a `Slot<ApiOutput>`).
fn finish_info(
    status: i32,
    info: *mut CInfo,
    ninfo: usize,
    cbdata: *mut c_void,
    release: impl FnOnce(),
) {
    let results = ready().and_then(|l| l.infos_from_c(info, ninfo));
    release();
    // SAFETY: cbdata is a Slot<ApiOutput> given to the library for this callback.
    let slot = unsafe { take::<ApiOutput>(cbdata) };
    slot.put(with_results(Status(status), results));
}

pub(super) fn with_results(status: Status, results: Result<Vec<Info>, Status>) -> ApiOutput {
    match results {
        Ok(results) => ApiOutput {
            status,
            results,
            ..ApiOutput::default()
        },
        Err(s) => ApiOutput::status(if status == Status::SUCCESS { s } else { status }),
    }
}

/// Read and release a results array the library allocated.
pub(super) fn take_results(l: &Lib, p: *mut CInfo, n: usize) -> Result<Vec<Info>, Status> {
    if p.is_null() {
        return Ok(Vec::new());
    }
    let out = l.infos_from_c(p, n);
    for i in 0..n {
        // SAFETY: `p` holds `n` infos the library filled; each value is destructed once,
        // then the array itself is freed (PMIX_INFO_FREE).
        unsafe { (l.value_destruct)(&raw mut (*p.add(i)).value) };
    }
    // SAFETY: as above.
    unsafe { free(p.cast()) };
    out
}

// ---- per-process state: event handlers, IOF registrations, the fabric, the credential ----

#[derive(Default)]
pub(super) struct State {
    pub(super) handlers: BTreeMap<String, usize>,
    pub(super) seen: BTreeMap<usize, Vec<SeenEvent>>,
    /// How each handler ends its turn: a status and the results it hands on.
    pub(super) replies: BTreeMap<usize, (Status, Vec<Info>)>,
    pub(super) iof: BTreeMap<String, usize>,
    /// The output each pull was handed, in order, by the library's id of the pull.
    pub(super) output: BTreeMap<usize, Vec<u8>>,
    pub(super) credential: Option<Vec<u8>>,
}

pub(super) static STATE: OnceLock<(Mutex<State>, Condvar)> = OnceLock::new();

pub(super) fn state() -> &'static (Mutex<State>, Condvar) {
    STATE.get_or_init(|| (Mutex::new(State::default()), Condvar::new()))
}

/// The process's registered fabric (the library keeps pointers into it until deregistered).
pub(super) static FABRIC: Mutex<Option<Box<SendFabric>>> = Mutex::new(None);

#[derive(Debug)]
pub(super) struct SendFabric(pub(super) CFabric);

// SAFETY: the fabric is only touched under the FABRIC lock, by one call at a time.
unsafe impl Send for SendFabric {}

pub(super) unsafe extern "C" fn on_event(
    id: usize,
    status: i32,
    source: *const CProc,
    info: *mut CInfo,
    ninfo: usize,
    results: *mut CInfo,
    nresults: usize,
    done: Option<EventNotificationCb>,
    cbdata: *mut c_void,
) {
    let source = if source.is_null() {
        None
    } else {
        // SAFETY: a valid pmix_proc_t for the duration of the callback.
        proc_of(unsafe { *source }).ok()
    };
    let lib = lib().ok();
    // Information and results the library cannot hand over are recorded as none.
    let carried = lib
        .and_then(|l| l.infos_from_c(info, ninfo).ok())
        .unwrap_or_default();
    let given = lib
        .and_then(|l| l.infos_from_c(results, nresults).ok())
        .unwrap_or_default();
    let (m, cv) = state();
    let reply = {
        let mut st = lock(m);
        st.seen.entry(id).or_default().push(SeenEvent {
            status: Status(status),
            source,
            info: carried,
            results: given,
        });
        st.replies.get(&id).cloned()
    };
    cv.notify_all();
    let (end, mine) = reply.unwrap_or((Status::SUCCESS, Vec::new()));
    // The results stay alive until the library releases them through `results_released`.
    let handed = lib.and_then(|l| l.infos_to_c(&mine).ok()).map(Box::new);
    let (ptr, n) = handed.as_ref().map_or((std::ptr::null_mut(), 0), |c| {
        (c.ptr().cast_mut(), c.v.len())
    });
    let (release, keep): (Option<OpCb>, *mut c_void) = match handed {
        Some(b) if n > 0 => (Some(results_released), Box::into_raw(b).cast()),
        _ => (None, std::ptr::null_mut()),
    };
    if let Some(done) = done {
        // SAFETY: the chain goes on (or ends) as the vector asked; the results array lives
        // until the library calls `results_released` with `keep`.
        unsafe { done(end.0, ptr, n, release, keep, cbdata) };
    }
}

/// The library is done with a handler's results: free them.
unsafe extern "C" fn results_released(_status: i32, cbdata: *mut c_void) {
    if !cbdata.is_null() {
        // SAFETY: cbdata is the Box<CInfos> on_event leaked for this release.
        drop(unsafe { Box::from_raw(cbdata.cast::<CInfos>()) });
    }
}

pub(super) unsafe extern "C" fn registered(status: i32, id: usize, cbdata: *mut c_void) {
    // SAFETY: cbdata is a Slot<(Status, usize)> given for this callback.
    unsafe { take::<(Status, usize)>(cbdata) }.put((Status(status), id));
}

pub(super) unsafe extern "C" fn on_iof(
    id: usize,
    _channel: u16,
    _source: *mut CProc,
    payload: *mut CByteObject,
    _info: *mut CInfo,
    _ninfo: usize,
) {
    // SAFETY: the library's byte object for the duration of the callback, or NULL.
    let Some(bo) = (unsafe { payload.as_ref() }) else {
        return;
    };
    let bytes = if bo.bytes.is_null() || bo.size == 0 {
        &[][..]
    } else {
        // SAFETY: `size` bytes at `bytes`, the library's, alive during the callback.
        unsafe { std::slice::from_raw_parts(bo.bytes.cast::<u8>(), bo.size) }
    };
    let (m, cv) = state();
    lock(m)
        .output
        .entry(id)
        .or_default()
        .extend_from_slice(bytes);
    cv.notify_all();
}

pub(super) unsafe extern "C" fn spawned(status: i32, nspace: *mut c_char, cbdata: *mut c_void) {
    let ns = if nspace.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated pmix_nspace_t for the duration of the callback.
        unsafe { CStr::from_ptr(nspace) }
            .to_string_lossy()
            .into_owned()
    };
    // SAFETY: cbdata is a Slot<(Status, String)> given for this callback.
    unsafe { take::<(Status, String)>(cbdata) }.put((Status(status), ns));
}

pub(super) unsafe extern "C" fn credential_done(
    status: i32,
    cred: *mut CByteObject,
    _info: *mut CInfo,
    _ninfo: usize,
    cbdata: *mut c_void,
) {
    let bytes = if cred.is_null() {
        Vec::new()
    } else {
        // SAFETY: a valid byte object for the duration of the callback.
        unsafe { bytes_of(&*cred) }
    };
    // SAFETY: cbdata is a Slot<(Status, Vec<u8>)> given for this callback.
    unsafe { take::<(Status, Vec<u8>)>(cbdata) }.put((Status(status), bytes));
}

pub(super) unsafe extern "C" fn validated(
    status: i32,
    info: *mut CInfo,
    ninfo: usize,
    cbdata: *mut c_void,
) {
    let results = ready().and_then(|l| l.infos_from_c(info, ninfo));
    // SAFETY: cbdata is a Slot<ApiOutput> given for this callback.
    unsafe { take::<ApiOutput>(cbdata) }.put(with_results(Status(status), results));
}

pub(super) unsafe extern "C" fn distances_done(
    status: i32,
    _dist: *mut CDeviceDistance,
    ndist: usize,
    cbdata: *mut c_void,
    release: Option<ReleaseCb>,
    release_cbdata: *mut c_void,
) {
    if let Some(r) = release {
        // SAFETY: the library's release callback with its own data, once.
        unsafe { r(release_cbdata) };
    }
    // SAFETY: cbdata is a Slot<(Status, usize)> given for this callback.
    unsafe { take::<(Status, usize)>(cbdata) }.put((Status(status), ndist));
}

/// The bytes of a byte object.
///
/// # Safety
/// `b.bytes` points to `b.size` readable bytes (or is NULL).
pub(super) unsafe fn bytes_of(b: &CByteObject) -> Vec<u8> {
    if b.bytes.is_null() || b.size == 0 {
        return Vec::new();
    }
    // SAFETY: per the contract.
    unsafe { std::slice::from_raw_parts(b.bytes.cast::<u8>(), b.size) }.to_vec()
}
