//! The C host's upcalls (`pmix_server_module_t`) as the crate's `Host`: each upcall is made
//! on a thread of the server's runtime's blocking pool (the host may block in it, or call
//! the library's server calls from it), with arguments that stay valid until the host
//! answers through the callback, from inside the upcall or later from any thread. A NULL
//! slot is an upcall the host does not support (`PMIX_ERR_NOT_SUPPORTED`, as the trait's
//! defaults answer).

use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex, PoisonError};

use pmix::host::Host;
use pmix::model::{App, DataRange, Info, Nspace, PData, Proc, Query, Status, Value};
use tokio::sync::oneshot;

use crate::boundary::{c_strdup, calloc_array, guard_or, read_cstr, slice_of};
use crate::types::{CApp, CInfo, CPdata, CProc, CQuery, CStatus};
use crate::values::{
    c_proc, destruct_object, free_argv, free_infos, read_infos, read_key, read_proc, read_value,
    write_infos, write_object,
};

/// `pmix_op_cbfunc_t`.
type OpCb = unsafe extern "C" fn(CStatus, *mut c_void);
/// `pmix_release_cbfunc_t`.
type ReleaseCb = unsafe extern "C" fn(*mut c_void);
/// `pmix_modex_cbfunc_t`.
type ModexCb = unsafe extern "C" fn(
    CStatus,
    *const c_char,
    usize,
    *mut c_void,
    Option<ReleaseCb>,
    *mut c_void,
);
/// `pmix_lookup_cbfunc_t`.
type LookupCb = unsafe extern "C" fn(CStatus, *mut CPdata, usize, *mut c_void);
/// `pmix_spawn_cbfunc_t`.
type SpawnCb = unsafe extern "C" fn(CStatus, *mut c_char, *mut c_void);
/// `pmix_info_cbfunc_t`.
type InfoCb =
    unsafe extern "C" fn(CStatus, *mut CInfo, usize, *mut c_void, Option<ReleaseCb>, *mut c_void);

type ConnectedFn = unsafe extern "C" fn(*const CProc, *mut c_void, OpCb, *mut c_void) -> CStatus;
type Connected2Fn = unsafe extern "C" fn(
    *const CProc,
    *mut c_void,
    *mut CInfo,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;
type AbortFn = unsafe extern "C" fn(
    *const CProc,
    *mut c_void,
    c_int,
    *const c_char,
    *mut CProc,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;
type FenceFn = unsafe extern "C" fn(
    *const CProc,
    usize,
    *const CInfo,
    usize,
    *mut c_char,
    usize,
    ModexCb,
    *mut c_void,
) -> CStatus;
type DmodexFn =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, ModexCb, *mut c_void) -> CStatus;
type PublishFn =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, OpCb, *mut c_void) -> CStatus;
type LookupFn = unsafe extern "C" fn(
    *const CProc,
    *mut *mut c_char,
    *const CInfo,
    usize,
    LookupCb,
    *mut c_void,
) -> CStatus;
type UnpublishFn = unsafe extern "C" fn(
    *const CProc,
    *mut *mut c_char,
    *const CInfo,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;
type SpawnFn = unsafe extern "C" fn(
    *const CProc,
    *const CInfo,
    usize,
    *const CApp,
    usize,
    SpawnCb,
    *mut c_void,
) -> CStatus;
type ConnectFn =
    unsafe extern "C" fn(*const CProc, usize, *const CInfo, usize, OpCb, *mut c_void) -> CStatus;
type RegisterEventsFn =
    unsafe extern "C" fn(*mut CStatus, usize, *const CInfo, usize, OpCb, *mut c_void) -> CStatus;
type DeregisterEventsFn = unsafe extern "C" fn(*mut CStatus, usize, OpCb, *mut c_void) -> CStatus;
type NotifyFn = unsafe extern "C" fn(
    CStatus,
    *const CProc,
    u8,
    *mut CInfo,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;
type QueryFn = unsafe extern "C" fn(*mut CProc, *mut CQuery, usize, InfoCb, *mut c_void) -> CStatus;
type LogFn =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, *const CInfo, usize, OpCb, *mut c_void);
type JobControlFn = unsafe extern "C" fn(
    *const CProc,
    *const CProc,
    usize,
    *const CInfo,
    usize,
    InfoCb,
    *mut c_void,
) -> CStatus;

/// A slot this library does not call yet: only its address is kept.
type Unused = Option<unsafe extern "C" fn()>;

/// `pmix_server_module_t` (OpenPMIx 4.2's 28 slots, in their order).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CServerModule {
    pub client_connected: Option<ConnectedFn>,
    pub client_finalized: Option<ConnectedFn>,
    pub abort: Option<AbortFn>,
    pub fence_nb: Option<FenceFn>,
    pub direct_modex: Option<DmodexFn>,
    pub publish: Option<PublishFn>,
    pub lookup: Option<LookupFn>,
    pub unpublish: Option<UnpublishFn>,
    pub spawn: Option<SpawnFn>,
    pub connect: Option<ConnectFn>,
    pub disconnect: Option<ConnectFn>,
    pub register_events: Option<RegisterEventsFn>,
    pub deregister_events: Option<DeregisterEventsFn>,
    pub listener: Unused,
    pub notify_event: Option<NotifyFn>,
    pub query: Option<QueryFn>,
    pub tool_connected: Unused,
    pub log: Option<LogFn>,
    pub allocate: Unused,
    pub job_control: Option<JobControlFn>,
    pub monitor: Unused,
    pub get_credential: Unused,
    pub validate_credential: Unused,
    pub iof_pull: Unused,
    pub push_stdin: Unused,
    pub group: Unused,
    pub fabric: Unused,
    pub client_connected2: Option<Connected2Fn>,
}

const _: () = assert!(size_of::<CServerModule>() == 224);

/// What the host gave `PMIx_server_register_client` for each client, handed back in the
/// upcalls about it.
pub(crate) type ServerObjects = Arc<Mutex<std::collections::BTreeMap<Proc, usize>>>;

/// The C host behind the crate's server.
#[derive(Clone, Debug)]
pub(crate) struct CHost {
    pub(crate) module: CServerModule,
    pub(crate) objects: ServerObjects,
}

/// A pointer that crosses to the blocking thread making the upcall.
#[derive(Clone, Copy)]
struct Sent(*mut c_void);

// SAFETY: the pointers are the library's own blocks (or the host's objects), kept alive by
// the upcall's future while the host may use them.
unsafe impl Send for Sent {}

impl Sent {
    /// The pointer (a method: a closure then captures the `Send` wrapper, not its field).
    fn get(self) -> *mut c_void {
        self.0
    }
}

/// The answer an upcall's callback sends back.
type Answer<T> = oneshot::Sender<Result<T, Status>>;

/// Make an upcall: `call` runs on a blocking thread with the callback's data; the answer
/// comes when the host calls back. `PMIX_OPERATION_SUCCEEDED` from the upcall itself is the
/// answer `done` without a callback; any other error is the answer.
async fn upcall<T: Send + 'static>(
    done: impl FnOnce() -> Result<T, Status> + Send + 'static,
    call: impl FnOnce(*mut c_void) -> CStatus + Send + 'static,
) -> Result<T, Status> {
    let (tx, rx) = oneshot::channel::<Result<T, Status>>();
    let cookie = Sent(Box::into_raw(Box::new(tx)).cast());
    let rc = tokio::task::spawn_blocking(move || {
        let cookie = cookie;
        guard_or("host upcall", Status::ERROR.0, || call(cookie.0))
    })
    .await
    .unwrap_or(Status::ERROR.0);
    if rc != Status::SUCCESS.0 {
        // SAFETY: the host declined (or answered at once): the callback will not run, and
        // the box is still ours.
        drop(unsafe { Box::from_raw(cookie.0.cast::<Answer<T>>()) });
        return if rc == Status::OPERATION_SUCCEEDED.0 {
            done()
        } else {
            Err(Status(rc))
        };
    }
    rx.await.unwrap_or(Err(Status::ERR_LOST_CONNECTION))
}

/// Send `answer` to the upcall whose callback data is `cbdata`.
///
/// # Safety
/// `cbdata` is the box `upcall` made for an answer of `T`, taken once.
unsafe fn answer<T>(cbdata: *mut c_void, answer: Result<T, Status>) {
    if cbdata.is_null() {
        return;
    }
    // SAFETY: the caller's promise.
    let tx = unsafe { Box::from_raw(cbdata.cast::<Answer<T>>()) };
    let _ = tx.send(answer);
}

fn result(status: CStatus) -> Result<(), Status> {
    if status == Status::SUCCESS.0 {
        Ok(())
    } else {
        Err(Status(status))
    }
}

unsafe extern "C" fn op_done(status: CStatus, cbdata: *mut c_void) {
    // SAFETY: the callback data of an upcall answered by a status.
    guard_or("op callback", (), || unsafe {
        answer::<()>(cbdata, result(status))
    });
}

unsafe extern "C" fn modex_done(
    status: CStatus,
    data: *const c_char,
    ndata: usize,
    cbdata: *mut c_void,
    release: Option<ReleaseCb>,
    release_cbdata: *mut c_void,
) {
    guard_or("modex callback", (), || {
        // SAFETY: `data` holds `ndata` bytes for the duration of the call.
        let bytes = unsafe { slice_of(data.cast::<u8>(), ndata) }.map(<[u8]>::to_vec);
        let got = result(status).and(bytes);
        // SAFETY: the callback data of an upcall answered by bytes.
        unsafe { answer::<Vec<u8>>(cbdata, got) };
        if let Some(f) = release {
            // SAFETY: the host's release function, called once we are done with the bytes.
            unsafe { f(release_cbdata) };
        }
    });
}

unsafe extern "C" fn lookup_done(
    status: CStatus,
    data: *mut CPdata,
    ndata: usize,
    cbdata: *mut c_void,
) {
    guard_or("lookup callback", (), || {
        let read = || -> Result<Vec<PData>, Status> {
            // Some keys found: the data found is the answer (the server works out the
            // partial success from the keys asked).
            if status != Status::ERR_PARTIAL_SUCCESS.0 {
                result(status)?;
            }
            // SAFETY: `data` holds `ndata` pdata for the duration of the call.
            let found = unsafe { slice_of(data, ndata)? };
            found
                .iter()
                .map(|d| {
                    Ok(PData {
                        proc: read_proc(&d.proc)?,
                        key: read_key(&d.key)?,
                        // SAFETY: a pdata's value.
                        value: unsafe { read_value(&d.value)? },
                    })
                })
                .collect()
        };
        // SAFETY: the callback data of a lookup.
        unsafe { answer::<Vec<PData>>(cbdata, read()) };
    });
}

unsafe extern "C" fn spawn_done(status: CStatus, nspace: *mut c_char, cbdata: *mut c_void) {
    guard_or("spawn callback", (), || {
        let read = || -> Result<Nspace, Status> {
            result(status)?;
            // SAFETY: a namespace string for the duration of the call.
            let ns = unsafe { read_cstr(nspace) }.ok_or(Status::ERR_BAD_PARAM)?;
            Nspace::new(ns).map_err(|e| e.status())
        };
        // SAFETY: the callback data of a spawn.
        unsafe { answer::<Nspace>(cbdata, read()) };
    });
}

unsafe extern "C" fn info_done(
    status: CStatus,
    info: *mut CInfo,
    ninfo: usize,
    cbdata: *mut c_void,
    release: Option<ReleaseCb>,
    release_cbdata: *mut c_void,
) {
    guard_or("info callback", (), || {
        let got = if status == Status::SUCCESS.0 || status == Status::ERR_PARTIAL_SUCCESS.0 {
            // SAFETY: `info` holds `ninfo` infos for the duration of the call.
            unsafe { read_infos(info, ninfo) }
        } else {
            Err(Status(status))
        };
        // SAFETY: the callback data of an upcall answered by infos.
        unsafe { answer::<Vec<Info>>(cbdata, got) };
        if let Some(f) = release {
            // SAFETY: the host's release function, called once we are done with the infos.
            unsafe { f(release_cbdata) };
        }
    });
}

/// Arrays lent to the host for one upcall, released when it has answered.
struct Lent {
    infos: Vec<(*mut CInfo, usize)>,
    procs: Vec<*mut CProc>,
    argvs: Vec<*mut *mut c_char>,
    strings: Vec<*mut c_char>,
    apps: Option<(*mut CApp, usize)>,
    queries: Option<(*mut CQuery, usize)>,
}

// SAFETY: the blocks are the library's, used by the host until it answers; the future that
// owns this value outlives that.
unsafe impl Send for Lent {}

impl Lent {
    fn new() -> Lent {
        Lent {
            infos: Vec::new(),
            procs: Vec::new(),
            argvs: Vec::new(),
            strings: Vec::new(),
            apps: None,
            queries: None,
        }
    }

    fn infos(&mut self, infos: &[Info]) -> Result<(Sent, usize), Status> {
        let (p, n) = write_infos(infos)?;
        self.infos.push((p, n));
        Ok((Sent(p.cast()), n))
    }

    fn procs(&mut self, procs: &[Proc]) -> Result<(Sent, usize), Status> {
        let p: *mut CProc = calloc_array(procs.len())?;
        self.procs.push(p);
        for (i, proc) in procs.iter().enumerate() {
            // SAFETY: the array has room for every proc.
            unsafe { *p.add(i) = c_proc(proc) };
        }
        Ok((Sent(p.cast()), procs.len()))
    }

    fn argv(&mut self, list: &[String]) -> Result<Sent, Status> {
        let argv: *mut *mut c_char = calloc_array(list.len() + 1)?;
        self.argvs.push(argv);
        for (i, s) in list.iter().enumerate() {
            // SAFETY: the array has room for every string and the NULL after them.
            unsafe { *argv.add(i) = c_strdup(s)? };
        }
        Ok(Sent(argv.cast()))
    }

    fn string(&mut self, s: &str) -> Result<Sent, Status> {
        let p = c_strdup(s)?;
        self.strings.push(p);
        Ok(Sent(p.cast()))
    }

    fn objects<T>(
        &mut self,
        values: Vec<Value>,
        t: pmix::model::DataType,
    ) -> Result<(*mut T, usize), Status> {
        let p: *mut T = calloc_array(values.len())?;
        for (i, v) in values.iter().enumerate() {
            // SAFETY: the array has room for every object; a failure leaves the earlier
            // ones, released by `Drop` through the array kept below.
            if let Err(s) = unsafe { write_object(v, p.add(i).cast()) } {
                for j in 0..i {
                    // SAFETY: written above.
                    unsafe { destruct_object(t, p.add(j).cast()) };
                }
                // SAFETY: ours.
                unsafe { crate::boundary::free(p) };
                return Err(s);
            }
        }
        Ok((p, values.len()))
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        // SAFETY: every block was made by this value and is released once.
        unsafe {
            for (p, n) in self.infos.drain(..) {
                free_infos(p, n);
            }
            for p in self.procs.drain(..) {
                crate::boundary::free(p);
            }
            for a in self.argvs.drain(..) {
                free_argv(a);
            }
            for s in self.strings.drain(..) {
                crate::boundary::free(s);
            }
            if let Some((p, n)) = self.apps.take() {
                for i in 0..n {
                    destruct_object(pmix::model::DataType::APP, p.add(i).cast());
                }
                crate::boundary::free(p);
            }
            if let Some((p, n)) = self.queries.take() {
                for i in 0..n {
                    destruct_object(pmix::model::DataType::QUERY, p.add(i).cast());
                }
                crate::boundary::free(p);
            }
        }
    }
}

impl CHost {
    fn object_of(&self, proc: &Proc) -> Sent {
        let objects = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        Sent(objects.get(proc).copied().unwrap_or(0) as *mut c_void)
    }
}

impl Host for CHost {
    async fn client_connected(&self, proc: Proc) -> Result<(), Status> {
        let object = self.object_of(&proc);
        let mut lent = Lent::new();
        let (p, _) = lent.procs(std::slice::from_ref(&proc))?;
        if let Some(f) = self.module.client_connected2 {
            let (info, n) = lent.infos(&[])?;
            let r = upcall(
                || Ok(()),
                move |cb| {
                    // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                    unsafe {
                        f(
                            p.get().cast(),
                            object.get(),
                            info.get().cast(),
                            n,
                            op_done,
                            cb,
                        )
                    }
                },
            );
            return r.await;
        }
        let Some(f) = self.module.client_connected else {
            return Ok(());
        };
        upcall(
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), object.get(), op_done, cb) }
            },
        )
        .await
    }

    async fn client_finalized(&self, proc: Proc) -> Result<(), Status> {
        let Some(f) = self.module.client_finalized else {
            return Ok(());
        };
        let object = self.object_of(&proc);
        let mut lent = Lent::new();
        let (p, _) = lent.procs(std::slice::from_ref(&proc))?;
        upcall(
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), object.get(), op_done, cb) }
            },
        )
        .await
    }

    async fn abort(
        &self,
        proc: Proc,
        status: Status,
        message: Option<String>,
        procs: Vec<Proc>,
    ) -> Result<(), Status> {
        let f = self.module.abort.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let object = self.object_of(&proc);
        let mut lent = Lent::new();
        let (me, _) = lent.procs(std::slice::from_ref(&proc))?;
        let (targets, n) = lent.procs(&procs)?;
        let msg = match message {
            Some(m) => lent.string(&m)?,
            None => Sent(std::ptr::null_mut()),
        };
        let targets = if n == 0 {
            Sent(std::ptr::null_mut())
        } else {
            targets
        };
        let r = upcall(
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        me.get().cast(),
                        object.get(),
                        status.0,
                        msg.get().cast(),
                        targets.get().cast(),
                        n,
                        op_done,
                        cb,
                    )
                }
            },
        );
        r.await
    }

    async fn fence_nb(
        &self,
        procs: Vec<Proc>,
        info: Vec<Info>,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, Status> {
        let f = self.module.fence_nb.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut lent = Lent::new();
        let (p, np) = lent.procs(&procs)?;
        let (i, ni) = lent.infos(&info)?;
        let mut data = data;
        let (d, nd) = (Sent(data.as_mut_ptr().cast()), data.len());
        let r = upcall(
            || Ok(Vec::new()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        np,
                        i.get().cast(),
                        ni,
                        d.get().cast(),
                        nd,
                        modex_done,
                        cb,
                    )
                }
            },
        );
        let out = r.await;
        drop(data);
        out
    }

    fn supports_direct_modex(&self) -> bool {
        self.module.direct_modex.is_some()
    }

    async fn direct_modex(&self, proc: Proc, info: Vec<Info>) -> Result<Vec<u8>, Status> {
        let f = self.module.direct_modex.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut lent = Lent::new();
        let (p, _) = lent.procs(std::slice::from_ref(&proc))?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            || Ok(Vec::new()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), i.get().cast(), ni, modex_done, cb) }
            },
        )
        .await
    }

    async fn publish(&self, proc: Proc, info: Vec<Info>) -> Result<(), Status> {
        let f = self.module.publish.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut lent = Lent::new();
        let (p, _) = lent.procs(std::slice::from_ref(&proc))?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), i.get().cast(), ni, op_done, cb) }
            },
        )
        .await
    }

    async fn lookup(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<Vec<PData>, Status> {
        let f = self.module.lookup.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut lent = Lent::new();
        let (p, _) = lent.procs(std::slice::from_ref(&proc))?;
        let k = lent.argv(&keys)?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            || Ok(Vec::new()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        k.get().cast(),
                        i.get().cast(),
                        ni,
                        lookup_done,
                        cb,
                    )
                }
            },
        )
        .await
    }

    async fn unpublish(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let f = self.module.unpublish.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut lent = Lent::new();
        let (p, _) = lent.procs(std::slice::from_ref(&proc))?;
        let k = lent.argv(&keys)?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        k.get().cast(),
                        i.get().cast(),
                        ni,
                        op_done,
                        cb,
                    )
                }
            },
        )
        .await
    }

    async fn notify_event(
        &self,
        status: Status,
        source: Proc,
        range: DataRange,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let f = self.module.notify_event.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut lent = Lent::new();
        let (p, _) = lent.procs(std::slice::from_ref(&source))?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        status.0,
                        p.get().cast(),
                        range.0,
                        i.get().cast(),
                        ni,
                        op_done,
                        cb,
                    )
                }
            },
        )
        .await
    }

    async fn register_events(&self, codes: Vec<Status>, info: Vec<Info>) -> Result<(), Status> {
        let f = self
            .module
            .register_events
            .ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut lent = Lent::new();
        let (i, ni) = lent.infos(&info)?;
        let mut codes: Vec<CStatus> = codes.iter().map(|code| code.0).collect();
        let (c, nc) = (Sent(codes.as_mut_ptr().cast()), codes.len());
        let r = upcall(
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(c.get().cast(), nc, i.get().cast(), ni, op_done, cb) }
            },
        );
        let out = r.await;
        drop(codes);
        out
    }

    async fn deregister_events(&self, codes: Vec<Status>) -> Result<(), Status> {
        let f = self
            .module
            .deregister_events
            .ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut codes: Vec<CStatus> = codes.iter().map(|code| code.0).collect();
        let (c, nc) = (Sent(codes.as_mut_ptr().cast()), codes.len());
        let r = upcall(
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(c.get().cast(), nc, op_done, cb) }
            },
        );
        let out = r.await;
        drop(codes);
        out
    }

    async fn spawn(
        &self,
        proc: Proc,
        job_info: Vec<Info>,
        apps: Vec<App>,
    ) -> Result<Nspace, Status> {
        let f = self.module.spawn.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut lent = Lent::new();
        let (p, _) = lent.procs(std::slice::from_ref(&proc))?;
        let (i, ni) = lent.infos(&job_info)?;
        let values = apps.into_iter().map(|a| Value::App(Box::new(a))).collect();
        let (a, na) = lent.objects::<CApp>(values, pmix::model::DataType::APP)?;
        lent.apps = Some((a, na));
        let a = Sent(a.cast());
        // Answered at once, a spawn names no namespace: not one the server can use.
        let r = upcall(
            || Err(Status::ERR_BAD_PARAM),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        i.get().cast(),
                        ni,
                        a.get().cast(),
                        na,
                        spawn_done,
                        cb,
                    )
                }
            },
        );
        r.await
    }

    async fn connect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        let f = self.module.connect.ok_or(Status::ERR_NOT_SUPPORTED)?;
        self.collective(f, procs, info).await
    }

    async fn disconnect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        let f = self.module.disconnect.ok_or(Status::ERR_NOT_SUPPORTED)?;
        self.collective(f, procs, info).await
    }

    async fn query(&self, proc: Proc, queries: Vec<Query>) -> Result<Vec<Info>, Status> {
        let f = self.module.query.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut lent = Lent::new();
        let (p, _) = lent.procs(std::slice::from_ref(&proc))?;
        let values = queries
            .into_iter()
            .map(|q| Value::Query(Box::new(q)))
            .collect();
        let (q, nq) = lent.objects::<CQuery>(values, pmix::model::DataType::QUERY)?;
        lent.queries = Some((q, nq));
        let q = Sent(q.cast());
        upcall(
            || Ok(Vec::new()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), q.get().cast(), nq, info_done, cb) }
            },
        )
        .await
    }

    async fn log(
        &self,
        proc: Proc,
        timestamp: i64,
        data: Vec<Info>,
        directives: Vec<Info>,
    ) -> Result<(), Status> {
        let _ = timestamp;
        let f = self.module.log.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut lent = Lent::new();
        let (p, _) = lent.procs(std::slice::from_ref(&proc))?;
        let (d, nd) = lent.infos(&data)?;
        let (i, ni) = lent.infos(&directives)?;
        upcall(
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        d.get().cast(),
                        nd,
                        i.get().cast(),
                        ni,
                        op_done,
                        cb,
                    );
                    Status::SUCCESS.0
                }
            },
        )
        .await
    }

    async fn job_control(
        &self,
        proc: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let f = self.module.job_control.ok_or(Status::ERR_NOT_SUPPORTED)?;
        let mut lent = Lent::new();
        let (p, _) = lent.procs(std::slice::from_ref(&proc))?;
        let (t, nt) = lent.procs(&targets)?;
        let (i, ni) = lent.infos(&directives)?;
        upcall(
            || Ok(Vec::new()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe {
                    f(
                        p.get().cast(),
                        t.get().cast(),
                        nt,
                        i.get().cast(),
                        ni,
                        info_done,
                        cb,
                    )
                }
            },
        )
        .await
    }
}

impl CHost {
    /// A connect or a disconnect: the collective of `procs`.
    async fn collective(
        &self,
        f: ConnectFn,
        procs: Vec<Proc>,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let mut lent = Lent::new();
        let (p, np) = lent.procs(&procs)?;
        let (i, ni) = lent.infos(&info)?;
        upcall(
            || Ok(()),
            move |cb| {
                // SAFETY: the host's upcall (pmix_server.h); its arguments live until it answers.
                unsafe { f(p.get().cast(), np, i.get().cast(), ni, op_done, cb) }
            },
        )
        .await
    }
}
