//! The library's calls into its host (`pmix_server_module_t`): each upcall read into the
//! crate's [`HostCall`] for the host, and the [`Completion`] through which the host's
//! [`HostResult`] goes back to the library.

use super::*;
use pmix::model::{AllocDirective, DataRange, FabricOperation, GroupOperation, Query};
use pmix::server::{HostCall, HostResult};

/// How to tell the library an upcall is done: its callback and cookie.
#[derive(Debug)]
pub struct Completion {
    kind: CompletionKind,
    cbdata: usize,
}

#[derive(Debug)]
enum CompletionKind {
    Op(OpCb),
    Modex(ModexCb),
    /// A lookup, with the keys it asked for: the library is told how many were found.
    Lookup(LookupCb, Vec<String>),
    Info(InfoCb),
    Credential(CredentialCb),
    Validation(ValidationCb),
    Spawn(SpawnCb),
}

unsafe extern "C" fn release_infos(cbdata: *mut c_void) {
    // SAFETY: cbdata is the Box<CInfos> leaked by `Completion::finish`, released once.
    drop(unsafe { Box::from_raw(cbdata.cast::<CInfos>()) });
}

unsafe extern "C" fn release_bytes(cbdata: *mut c_void) {
    // SAFETY: cbdata is the Box<Vec<u8>> leaked by `Completion::finish`, released once.
    drop(unsafe { Box::from_raw(cbdata.cast::<Vec<u8>>()) });
}

/// The status of an answer that does not carry what the upcall wants: its error, or
/// `PMIX_ERR_BAD_PARAM` for data of another kind.
fn failure(answer: &HostResult) -> Status {
    match answer.status() {
        Status::SUCCESS => Status::ERR_BAD_PARAM,
        s => s,
    }
}

/// The infos of an answer that carries infos, or its status.
fn into_infos(answer: HostResult) -> Result<Vec<Info>, Status> {
    match answer {
        HostResult::Infos(r) => r,
        other => Err(failure(&other)),
    }
}

impl Completion {
    /// Call the library back with the host's answer (from any thread: the library
    /// thread-shifts its callbacks).
    pub fn finish(self, answer: HostResult) {
        let cbdata = self.cbdata as *mut c_void;
        match (self.kind, answer) {
            (CompletionKind::Op(cb), a) => {
                let s = a.status();
                // SAFETY: the library's op callback with the cookie it gave.
                unsafe { cb(s.0, cbdata) };
            }
            (CompletionKind::Modex(cb), a) => {
                let r = match a {
                    HostResult::Data(r) => r,
                    other => Err(failure(&other)),
                };
                match r {
                    Ok(bytes) => {
                        let data = Box::new(bytes);
                        let (ptr, len) = (data.as_ptr().cast::<c_char>(), data.len());
                        let keep = Box::into_raw(data).cast::<c_void>();
                        // SAFETY: `ptr` stays valid until the library calls release_bytes.
                        unsafe { cb(PMIX_SUCCESS, ptr, len, cbdata, Some(release_bytes), keep) };
                    }
                    Err(s) => {
                        let keep = Box::into_raw(Box::new(Vec::<u8>::new())).cast::<c_void>();
                        // SAFETY: no data; the release function frees the empty box.
                        unsafe { cb(s.0, std::ptr::null(), 0, cbdata, Some(release_bytes), keep) };
                    }
                }
            }
            (CompletionKind::Lookup(cb, keys), a) => {
                let r = match a {
                    // The host tells the library how much it found (v5.0 §9.6).
                    HostResult::Lookup(Ok(found)) => {
                        Ok((PData::lookup_status(&keys, &found), found))
                    }
                    other => Err(failure(&other)),
                };
                let converted = r.and_then(|(s, found)| Ok((s, pdata_to_c(&found)?)));
                match converted {
                    Ok((s, mut pd)) => {
                        // SAFETY: the library copies the array during the callback.
                        unsafe { cb(s.0, pd.v.as_mut_ptr(), pd.v.len(), cbdata) };
                    }
                    // SAFETY: no data with a failure.
                    Err(s) => unsafe { cb(s.0, std::ptr::null_mut(), 0, cbdata) },
                }
            }
            (CompletionKind::Info(cb), a) => {
                let r = into_infos(a);
                let converted = r.and_then(|info| ready()?.infos_to_c(&info));
                match converted {
                    Ok(infos) => {
                        let mut infos = Box::new(infos);
                        let (ptr, n) = (infos.v.as_mut_ptr(), infos.v.len());
                        let ptr = if n == 0 { std::ptr::null_mut() } else { ptr };
                        let keep = Box::into_raw(infos).cast::<c_void>();
                        // SAFETY: the infos stay valid until the library calls release_infos.
                        unsafe { cb(PMIX_SUCCESS, ptr, n, cbdata, Some(release_infos), keep) };
                    }
                    Err(s) => {
                        let none = ready().and_then(|l| l.infos_to_c(&[]));
                        match none {
                            Ok(empty) => {
                                let keep = Box::into_raw(Box::new(empty)).cast::<c_void>();
                                // SAFETY: no infos; the release function frees the empty box.
                                unsafe {
                                    cb(
                                        s.0,
                                        std::ptr::null_mut(),
                                        0,
                                        cbdata,
                                        Some(release_infos),
                                        keep,
                                    )
                                };
                            }
                            Err(_) => {
                                // SAFETY: no infos and nothing to release.
                                unsafe {
                                    cb(
                                        s.0,
                                        std::ptr::null_mut(),
                                        0,
                                        cbdata,
                                        Some(release_noop),
                                        cbdata,
                                    )
                                };
                            }
                        }
                    }
                }
            }
            (CompletionKind::Credential(cb), a) => {
                let r = match a {
                    HostResult::Credential(r) => r,
                    other => Err(failure(&other)),
                };
                let converted =
                    r.and_then(|(bytes, info)| Ok((bytes, ready()?.infos_to_c(&info)?)));
                match converted {
                    Ok((mut bytes, mut infos)) => {
                        let mut cred = CByteObject {
                            bytes: bytes.as_mut_ptr().cast::<c_char>(),
                            size: bytes.len(),
                        };
                        let (ptr, n) = (infos.v.as_mut_ptr(), infos.v.len());
                        let ptr = if n == 0 { std::ptr::null_mut() } else { ptr };
                        // SAFETY: the credential and the infos outlive the call, during which
                        // the library copies them (it is given no release function).
                        unsafe { cb(PMIX_SUCCESS, &mut cred, ptr, n, cbdata) };
                    }
                    // SAFETY: no credential with a failure.
                    Err(s) => unsafe {
                        cb(s.0, std::ptr::null_mut(), std::ptr::null_mut(), 0, cbdata)
                    },
                }
            }
            (CompletionKind::Spawn(cb), a) => {
                let r = match a {
                    HostResult::Nspace(r) => r,
                    other => Err(failure(&other)),
                };
                match r.and_then(|ns| CString::new(ns.as_str()).map_err(|_| Status::ERR_BAD_PARAM))
                {
                    Ok(ns) => {
                        // SAFETY: the namespace outlives the call, during which the library
                        // copies it.
                        unsafe { cb(PMIX_SUCCESS, ns.as_ptr().cast_mut(), cbdata) };
                    }
                    // SAFETY: no namespace with a failure.
                    Err(s) => unsafe { cb(s.0, std::ptr::null_mut(), cbdata) },
                }
            }
            (CompletionKind::Validation(cb), a) => {
                let r = into_infos(a);
                match r.and_then(|info| ready()?.infos_to_c(&info)) {
                    Ok(mut infos) => {
                        let (ptr, n) = (infos.v.as_mut_ptr(), infos.v.len());
                        let ptr = if n == 0 { std::ptr::null_mut() } else { ptr };
                        // SAFETY: the infos outlive the call, during which the library copies
                        // them (it is given no release function).
                        unsafe { cb(PMIX_SUCCESS, ptr, n, cbdata) };
                    }
                    // SAFETY: no infos with a failure.
                    Err(s) => unsafe { cb(s.0, std::ptr::null_mut(), 0, cbdata) },
                }
            }
        }
    }
}

unsafe extern "C" fn release_noop(_cbdata: *mut c_void) {}

struct CPdatas {
    lib: &'static Lib,
    v: Vec<CPdata>,
}

impl Drop for CPdatas {
    fn drop(&mut self) {
        for p in &mut self.v {
            // SAFETY: as for `CInfos`.
            unsafe { (self.lib.value_destruct)(&mut p.value) };
        }
    }
}

fn pdata_to_c(found: &[PData]) -> Result<CPdatas, Status> {
    let l = ready()?;
    let mut out = CPdatas {
        lib: l,
        v: found.iter().map(|_| CPdata::zeroed()).collect(),
    };
    if !found.is_empty() {
        let bytes = l.encode(found)?;
        let rc = l.unpack_into(
            &bytes,
            out.v.as_mut_ptr().cast(),
            found.len(),
            DataType::PDATA,
        );
        if rc != Status::SUCCESS {
            out.v.iter_mut().for_each(|p| p.value.type_ = 0);
            return Err(rc);
        }
    }
    Ok(out)
}

/// The host: receives every upcall with the completion to call when done.
pub type HostFn = Box<dyn Fn(HostCall, Completion) + Send + Sync>;

static HOST: OnceLock<HostFn> = OnceLock::new();

/// Hand an upcall to the host with the callback that completes it; the library is told
/// `PMIX_SUCCESS` (the callback will run) or why the upcall was refused.
fn up(upcall: Result<HostCall, Status>, kind: CompletionKind, cbdata: *mut c_void) -> i32 {
    match (upcall, HOST.get()) {
        (Ok(u), Some(host)) => {
            host(
                u,
                Completion {
                    kind,
                    cbdata: cbdata as usize,
                },
            );
            PMIX_SUCCESS
        }
        (Err(s), _) => s.0,
        (_, None) => Status::ERR_NOT_SUPPORTED.0,
    }
}

fn procs_from_c(p: *const CProc, n: usize) -> Result<Vec<Proc>, Status> {
    if p.is_null() || n == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the library passes an array of `n` procs.
    let s = unsafe { std::slice::from_raw_parts(p, n) };
    s.iter().map(|c| proc_of(*c)).collect()
}

fn proc_from_c(p: *const CProc) -> Result<Proc, Status> {
    procs_from_c(p, 1)?.pop().ok_or(Status::ERR_BAD_PARAM)
}

fn keys_from_c(keys: *mut *mut c_char) -> Vec<String> {
    let mut out = Vec::new();
    if keys.is_null() {
        return out;
    }
    for i in 0.. {
        // SAFETY: a NULL-terminated argv array from the library.
        let k = unsafe { *keys.add(i) };
        if k.is_null() {
            break;
        }
        // SAFETY: each entry is a NUL-terminated string.
        out.push(unsafe { CStr::from_ptr(k) }.to_string_lossy().into_owned());
    }
    out
}

/// A copy of the `n` bytes the library passes at `data` (none when NULL).
fn bytes_from_c(data: *const c_char, n: usize) -> Vec<u8> {
    if data.is_null() || n == 0 {
        return Vec::new();
    }
    // SAFETY: the library passes `n` bytes at `data`.
    unsafe { std::slice::from_raw_parts(data.cast::<u8>(), n) }.to_vec()
}

fn infos_in(info: *const CInfo, n: usize) -> Result<Vec<Info>, Status> {
    ready()?.infos_from_c(info, n)
}

unsafe extern "C" fn up_fence(
    procs: *const CProc,
    nprocs: usize,
    info: *const CInfo,
    ninfo: usize,
    data: *mut c_char,
    ndata: usize,
    cbfunc: ModexCb,
    cbdata: *mut c_void,
) -> i32 {
    let bytes = bytes_from_c(data.cast_const(), ndata);
    let upcall = (|| {
        Ok(HostCall::Fence {
            procs: procs_from_c(procs, nprocs)?,
            info: infos_in(info, ninfo)?,
            data: bytes,
        })
    })();
    up(upcall, CompletionKind::Modex(cbfunc), cbdata)
}

unsafe extern "C" fn up_dmodex(
    proc: *const CProc,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: ModexCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::DirectModex {
            proc: proc_from_c(proc)?,
            info: infos_in(info, ninfo)?,
        })
    })();
    up(upcall, CompletionKind::Modex(cbfunc), cbdata)
}

unsafe extern "C" fn up_publish(
    proc: *const CProc,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::Publish {
            proc: proc_from_c(proc)?,
            info: infos_in(info, ninfo)?,
        })
    })();
    up(upcall, CompletionKind::Op(cbfunc), cbdata)
}

unsafe extern "C" fn up_lookup(
    proc: *const CProc,
    keys: *mut *mut c_char,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: LookupCb,
    cbdata: *mut c_void,
) -> i32 {
    let keys = keys_from_c(keys);
    let asked = keys.clone();
    let upcall = (|| {
        Ok(HostCall::Lookup {
            proc: proc_from_c(proc)?,
            keys,
            info: infos_in(info, ninfo)?,
        })
    })();
    up(upcall, CompletionKind::Lookup(cbfunc, asked), cbdata)
}

unsafe extern "C" fn up_unpublish(
    proc: *const CProc,
    keys: *mut *mut c_char,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::Unpublish {
            proc: proc_from_c(proc)?,
            keys: keys_from_c(keys),
            info: infos_in(info, ninfo)?,
        })
    })();
    up(upcall, CompletionKind::Op(cbfunc), cbdata)
}

unsafe extern "C" fn up_group(
    op: i32,
    grp: *mut c_char,
    procs: *const CProc,
    nprocs: usize,
    directives: *const CInfo,
    ndirs: usize,
    cbfunc: InfoCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        if grp.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the library passes the group's NUL-terminated name.
        let group = unsafe { CStr::from_ptr(grp) }
            .to_string_lossy()
            .into_owned();
        Ok(HostCall::Group {
            op: GroupOperation(op),
            group,
            procs: procs_from_c(procs, nprocs)?,
            directives: infos_in(directives, ndirs)?,
        })
    })();
    up(upcall, CompletionKind::Info(cbfunc), cbdata)
}

unsafe extern "C" fn up_fabric(
    requestor: *const CProc,
    op: i32,
    directives: *const CInfo,
    ndirs: usize,
    cbfunc: InfoCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::Fabric {
            proc: proc_from_c(requestor)?,
            op: FabricOperation(op),
            directives: infos_in(directives, ndirs)?,
        })
    })();
    up(upcall, CompletionKind::Info(cbfunc), cbdata)
}

/// A client's event for the host to carry: taken over at once (`PMIX_OPERATION_SUCCEEDED`,
/// so the library never waits on a callback) and relayed in the background. Completed
/// through its callback instead, from the harness's thread, OpenPMIx 4.2's server corrupted
/// its heap (measured: `malloc(): unaligned tcache chunk detected`, and the notifying
/// client's request lost).
unsafe extern "C" fn up_notify_event(
    code: i32,
    source: *const CProc,
    range: u8,
    info: *mut CInfo,
    ninfo: usize,
    _cbfunc: OpCb,
    _cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::NotifyEvent {
            status: Status(code),
            source: proc_from_c(source)?,
            range: DataRange(range),
            info: infos_in(info, ninfo)?,
        })
    })();
    match up(upcall, CompletionKind::Op(release_op), std::ptr::null_mut()) {
        PMIX_SUCCESS => Status::OPERATION_SUCCEEDED.0,
        refused => refused,
    }
}

/// The completion of an upcall the library no longer waits on.
unsafe extern "C" fn release_op(_status: i32, _cbdata: *mut c_void) {}

unsafe extern "C" fn up_connect(
    procs: *const CProc,
    nprocs: usize,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::Connect {
            procs: procs_from_c(procs, nprocs)?,
            info: infos_in(info, ninfo)?,
        })
    })();
    up(upcall, CompletionKind::Op(cbfunc), cbdata)
}

unsafe extern "C" fn up_disconnect(
    procs: *const CProc,
    nprocs: usize,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::Disconnect {
            procs: procs_from_c(procs, nprocs)?,
            info: infos_in(info, ninfo)?,
        })
    })();
    up(upcall, CompletionKind::Op(cbfunc), cbdata)
}

unsafe extern "C" fn up_allocate(
    requestor: *const CProc,
    directive: u8,
    data: *const CInfo,
    ndata: usize,
    cbfunc: InfoCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::Allocate {
            proc: proc_from_c(requestor)?,
            directive: AllocDirective(directive),
            info: infos_in(data, ndata)?,
        })
    })();
    up(upcall, CompletionKind::Info(cbfunc), cbdata)
}

unsafe extern "C" fn up_spawn(
    requestor: *const CProc,
    job_info: *const CInfo,
    ninfo: usize,
    apps: *const CApp,
    napps: usize,
    cbfunc: SpawnCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::Spawn {
            proc: proc_from_c(requestor)?,
            job_info: infos_in(job_info, ninfo)?,
            apps: ready()?.apps_from_c(apps, napps)?,
        })
    })();
    up(upcall, CompletionKind::Spawn(cbfunc), cbdata)
}

unsafe extern "C" fn up_log(
    requestor: *const CProc,
    data: *const CInfo,
    ndata: usize,
    directives: *const CInfo,
    ndirs: usize,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) {
    let upcall = (|| {
        Ok(HostCall::Log {
            proc: proc_from_c(requestor)?,
            // The C upcall has no timestamp of its own: a request's is among the directives
            // (PMIX_LOG_TIMESTAMP).
            timestamp: 0,
            data: infos_in(data, ndata)?,
            directives: infos_in(directives, ndirs)?,
        })
    })();
    let rc = up(upcall, CompletionKind::Op(cbfunc), cbdata);
    if rc != PMIX_SUCCESS {
        // SAFETY: the library's callback for this request, called once: the host did not
        // take the request.
        unsafe { cbfunc(rc, cbdata) };
    }
}

unsafe extern "C" fn up_job_control(
    requestor: *const CProc,
    targets: *const CProc,
    ntargets: usize,
    directives: *const CInfo,
    ndirs: usize,
    cbfunc: InfoCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::JobControl {
            proc: proc_from_c(requestor)?,
            targets: procs_from_c(targets, ntargets)?,
            directives: infos_in(directives, ndirs)?,
        })
    })();
    up(upcall, CompletionKind::Info(cbfunc), cbdata)
}

unsafe extern "C" fn up_monitor(
    requestor: *const CProc,
    monitor: *const CInfo,
    error: i32,
    directives: *const CInfo,
    ndirs: usize,
    cbfunc: InfoCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        if monitor.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let monitor = infos_in(monitor, 1)?.pop().ok_or(Status::ERR_BAD_PARAM)?;
        Ok(HostCall::Monitor {
            proc: proc_from_c(requestor)?,
            monitor,
            error: Status(error),
            directives: infos_in(directives, ndirs)?,
        })
    })();
    up(upcall, CompletionKind::Info(cbfunc), cbdata)
}

unsafe extern "C" fn up_query(
    requestor: *mut CProc,
    queries: *mut CQuery,
    nqueries: usize,
    cbfunc: InfoCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        let cq: &[CQuery] = if queries.is_null() || nqueries == 0 {
            &[]
        } else {
            // SAFETY: the library passes an array of `nqueries` queries.
            unsafe { std::slice::from_raw_parts(queries, nqueries) }
        };
        let queries = cq
            .iter()
            .map(|q| {
                Ok(Query {
                    keys: keys_from_c(q.keys).into_iter().map(Some).collect(),
                    qualifiers: infos_in(q.qualifiers, q.nqual)?,
                })
            })
            .collect::<Result<Vec<_>, Status>>()?;
        Ok(HostCall::Query {
            proc: proc_from_c(requestor)?,
            queries,
        })
    })();
    up(upcall, CompletionKind::Info(cbfunc), cbdata)
}

/// A copy of the `n` codes the library passes at `codes` (none when NULL).
fn codes_from_c(codes: *const i32, n: usize) -> Vec<Status> {
    if codes.is_null() || n == 0 {
        return Vec::new();
    }
    // SAFETY: the library passes an array of `n` status codes.
    let s = unsafe { std::slice::from_raw_parts(codes, n) };
    s.iter().map(|c| Status(*c)).collect()
}

/// A client's connection, taken over at once (`PMIX_OPERATION_SUCCEEDED`: the host accepts
/// every client) and recorded in the background. Completed through its callback instead,
/// OpenPMIx 4.2's server made the client's `PMIx_Init` answer `PMIX_ERROR` (measured). The
/// host's `client_connected` takes the client alone: the infos the library adds are not read.
unsafe extern "C" fn up_client_connected2(
    client: *const CProc,
    _server_object: *mut c_void,
    _info: *mut CInfo,
    _ninfo: usize,
    _cbfunc: OpCb,
    _cbdata: *mut c_void,
) -> i32 {
    let upcall = proc_from_c(client).map(|proc| HostCall::ClientConnected { proc });
    match up(upcall, CompletionKind::Op(release_op), std::ptr::null_mut()) {
        PMIX_SUCCESS => Status::OPERATION_SUCCEEDED.0,
        refused => refused,
    }
}

unsafe extern "C" fn up_register_events(
    codes: *mut i32,
    ncodes: usize,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::RegisterEvents {
            codes: codes_from_c(codes, ncodes),
            info: infos_in(info, ninfo)?,
        })
    })();
    up(upcall, CompletionKind::Op(cbfunc), cbdata)
}

unsafe extern "C" fn up_deregister_events(
    codes: *mut i32,
    ncodes: usize,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = Ok(HostCall::DeregisterEvents {
        codes: codes_from_c(codes, ncodes),
    });
    up(upcall, CompletionKind::Op(cbfunc), cbdata)
}

unsafe extern "C" fn up_client_finalized(
    client: *const CProc,
    _server_object: *mut c_void,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = proc_from_c(client).map(|proc| HostCall::ClientFinalized { proc });
    up(upcall, CompletionKind::Op(cbfunc), cbdata)
}

unsafe extern "C" fn up_abort(
    requestor: *const CProc,
    _server_object: *mut c_void,
    status: i32,
    msg: *const c_char,
    procs: *mut CProc,
    nprocs: usize,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    let message = (!msg.is_null()).then(|| {
        // SAFETY: a NUL-terminated message from the library.
        unsafe { CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned()
    });
    let upcall = (|| {
        Ok(HostCall::Abort {
            proc: proc_from_c(requestor)?,
            status: Status(status),
            message,
            procs: procs_from_c(procs, nprocs)?,
        })
    })();
    up(upcall, CompletionKind::Op(cbfunc), cbdata)
}

unsafe extern "C" fn up_get_credential(
    requestor: *const CProc,
    directives: *const CInfo,
    ndirs: usize,
    cbfunc: CredentialCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::GetCredential {
            proc: proc_from_c(requestor)?,
            info: infos_in(directives, ndirs)?,
        })
    })();
    up(upcall, CompletionKind::Credential(cbfunc), cbdata)
}

unsafe extern "C" fn up_validate_credential(
    requestor: *const CProc,
    cred: *const CByteObject,
    directives: *const CInfo,
    ndirs: usize,
    cbfunc: ValidationCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        // SAFETY: a NULL credential is refused; otherwise the library's byte object.
        let cred = unsafe { cred.as_ref() }.ok_or(Status::ERR_BAD_PARAM)?;
        let credential = bytes_from_c(cred.bytes, cred.size);
        Ok(HostCall::ValidateCredential {
            proc: proc_from_c(requestor)?,
            credential,
            directives: infos_in(directives, ndirs)?,
        })
    })();
    up(upcall, CompletionKind::Validation(cbfunc), cbdata)
}

/// Which upcalls the host provides: the others are NULL in the module, which is how a C host
/// says it does not support them.
#[derive(Clone, Copy, Debug)]
pub struct HostCaps {
    pub fence: bool,
    pub direct_modex: bool,
    pub publish: bool,
}

unsafe extern "C" fn up_iof_pull(
    procs: *const CProc,
    nprocs: usize,
    directives: *const CInfo,
    ndirs: usize,
    channels: u16,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    let upcall = (|| {
        Ok(HostCall::IofPull {
            procs: procs_from_c(procs, nprocs)?,
            directives: infos_in(directives, ndirs)?,
            channels: pmix::model::IofChannel(channels),
        })
    })();
    up(upcall, CompletionKind::Op(cbfunc), cbdata)
}

#[allow(clippy::too_many_arguments)] // the C upcall's signature
unsafe extern "C" fn up_push_stdin(
    source: *const CProc,
    targets: *const CProc,
    ntargets: usize,
    directives: *const CInfo,
    ndirs: usize,
    bo: *const CByteObject,
    cbfunc: OpCb,
    cbdata: *mut c_void,
) -> i32 {
    // SAFETY: the library's byte object for the duration of the call, or NULL.
    let data = unsafe { bo.as_ref() }.map(|b| bytes_from_c(b.bytes, b.size));
    let upcall = (|| {
        Ok(HostCall::PushStdin {
            source: proc_from_c(source)?,
            targets: procs_from_c(targets, ntargets)?,
            directives: infos_in(directives, ndirs)?,
            data,
        })
    })();
    up(upcall, CompletionKind::Op(cbfunc), cbdata)
}

/// `pmix_server_module_t` as long as the longest release's: OpenPMIx 4.2's 28 slots, then
/// the slots later releases appended, every one NULL. `PMIx_server_init` copies as many
/// bytes as its own header's struct holds: 224 in 4.2, 232 in 5.0 (`session_control`),
/// 256 in 6.1 (`tool_connected2`, `log2`, `session_control`, `resource_block`). Handed
/// 4.2's struct alone, 5.0 and 6.1 read the bytes past it as upcalls, and 6.1 called
/// whatever the stack held there as `tool_connected2` when a tool connected (measured: the
/// server closed every tool's connection, `PMIx_tool_init` answered `PMIX_ERR_UNREACH`).
/// The host provides none of the later upcalls, so each release answers those requests
/// as a host without them would have it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(super) struct LibraryModule {
    slots: CServerModule,
    later: [Option<unsafe extern "C" fn()>; 4],
}

// OpenPMIx 6.1's `pmix_server.h`: 32 pointers.
const _: () = assert!(size_of::<LibraryModule>() == 256);

/// The module for `PMIx_server_init`: the callbacks `caps` asks for and those this host
/// always provides, the others NULL; `host` receives every upcall.
pub(super) fn module(caps: HostCaps, host: HostFn) -> LibraryModule {
    let _ = HOST.set(host);
    slots(caps)
}

/// The module's slots for `caps`.
fn slots(caps: HostCaps) -> LibraryModule {
    let slots = CServerModule {
        client_connected: None,
        client_finalized: Some(up_client_finalized),
        abort: Some(up_abort),
        fence_nb: caps.fence.then_some(up_fence as pmix_ctypes::FenceFn),
        direct_modex: caps
            .direct_modex
            .then_some(up_dmodex as pmix_ctypes::DmodexFn),
        publish: caps.publish.then_some(up_publish as pmix_ctypes::PublishFn),
        lookup: caps.publish.then_some(up_lookup as pmix_ctypes::LookupFn),
        unpublish: caps
            .publish
            .then_some(up_unpublish as pmix_ctypes::UnpublishFn),
        spawn: Some(up_spawn),
        connect: Some(up_connect),
        disconnect: Some(up_disconnect),
        register_events: Some(up_register_events),
        deregister_events: Some(up_deregister_events),
        listener: None,
        notify_event: Some(up_notify_event),
        query: Some(up_query),
        tool_connected: None,
        log: Some(up_log),
        allocate: Some(up_allocate),
        job_control: Some(up_job_control),
        monitor: Some(up_monitor),
        get_credential: Some(up_get_credential),
        validate_credential: Some(up_validate_credential),
        iof_pull: Some(up_iof_pull),
        push_stdin: Some(up_push_stdin),
        group: Some(up_group),
        fabric: Some(up_fabric),
        client_connected2: Some(up_client_connected2),
    };
    LibraryModule {
        slots,
        later: [None; 4],
    }
}

#[cfg(test)]
mod tests;
