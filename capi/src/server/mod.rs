//! The server calls of `pmix_server.h` (v5.0 ch. 17) for C hosts: `PMIx_server_init` starts
//! the crate's server on a runtime of its own, with the host's `pmix_server_module_t`
//! (`pmix-ctypes`' [`CServerModule`], with the types of its upcalls and their callbacks) as
//! its `Host` (`upcalls.rs`, with what an upcall lends the host and the callbacks that answer
//! it in `lend.rs`); the other calls reach that server from any thread of the host, its
//! upcalls included.
//!
//! A call with a callback completes on one of the library's threads and calls it there; a
//! call without one blocks until done, as OpenPMIx's do.

mod lend;
pub mod resources;
mod upcalls;

use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, PoisonError};

use pmix::model::{DataType, Info, IofChannel, Nspace, RegAttr, Status};
use pmix::server::{Server, ServerConfig};

use crate::boundary::{c_strdup, guard, guard_or, read_cstr, read_fixed, slice_of};
use crate::callbacks::CbData;
use crate::state::server::{Running, ServerObjects, running, server};
use crate::types::{
    CByteObject, CInfo, CProc, CServerModule, CStatus, DmodexResponseFn, OpCb, SetupApplicationCb,
};
use crate::values::{
    read_argv, read_infos, read_proc, read_procs, read_required_bytes, write_infos,
};

use upcalls::CHost;

/// Run `work` to its end: on the calling thread without `cbfunc`, or on one of the
/// server's threads, which then calls `cbfunc` with the status.
fn run_op(
    work: impl std::future::Future<Output = Result<(), Status>> + Send + 'static,
    handle: &tokio::runtime::Handle,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> Result<(), Status> {
    let Some(f) = cbfunc else {
        return handle.block_on(work);
    };
    let data = CbData(cbdata);
    let inner = handle.clone();
    handle.spawn_blocking(move || {
        let status = inner.block_on(work).err().unwrap_or(Status::SUCCESS);
        guard_or("op callback", (), || {
            // SAFETY: the host's callback and data for this call's outcome.
            unsafe { f(status.0, data.ptr()) }
        });
    });
    Ok(())
}

fn status_of(e: pmix::Error) -> Status {
    e.status()
}

/// # Safety
/// `nspace` is NULL or a `pmix_nspace_t`.
unsafe fn nspace_arg(nspace: *const c_char) -> Result<Nspace, Status> {
    if nspace.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: a `pmix_nspace_t` holds 256 bytes (the caller's promise).
    let field = unsafe { std::slice::from_raw_parts(nspace, 256) };
    Nspace::new(read_fixed(field)).map_err(|e| e.status())
}

/// Infos of `PMIx_server_init`, without those of types this library does not carry (a
/// topology object, …), which are left out with a warning instead of failing the start.
///
/// # Safety
/// `info` holds `ninfo` infos.
unsafe fn init_infos(info: *const CInfo, ninfo: usize) -> Result<Vec<Info>, Status> {
    // SAFETY: the caller's promise.
    let all = unsafe { slice_of(info, ninfo)? };
    let mut out = Vec::new();
    for i in all {
        // SAFETY: one info of the caller's array.
        match unsafe { read_infos(i, 1) } {
            Ok(mut one) => out.append(&mut one),
            Err(Status::ERR_NOT_SUPPORTED) => tracing::warn!(
                "PMIx_server_init: {} has a type this library does not carry; left out",
                read_fixed(&i.key)
            ),
            Err(s) => return Err(s),
        }
    }
    Ok(out)
}

/// `PMIx_server_init`: start the server with the host's upcalls (`module`, NULL for none).
///
/// # Safety
/// `module` is NULL or a `pmix_server_module_t` that outlives the server; `info` holds
/// `ninfo` infos.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_init(
    module: *mut CServerModule,
    info: *mut CInfo,
    ninfo: usize,
) -> CStatus {
    crate::boundary::init_logging();
    guard("PMIx_server_init", || {
        // SAFETY: the caller's promise.
        let info = unsafe { init_infos(info, ninfo)? };
        let mut state = running();
        if state.is_some() {
            return Ok(());
        }
        let module = if module.is_null() {
            // SAFETY: all slots NULL: a module of no upcalls.
            unsafe { std::mem::zeroed::<CServerModule>() }
        } else {
            // SAFETY: the caller's module.
            unsafe { *module }
        };
        let config = ServerConfig::from_info(&info).map_err(|(s, why)| {
            tracing::warn!("PMIx_server_init: {why}");
            s
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("pmix-server")
            .enable_all()
            .build()
            .map_err(|_| Status::ERR_INIT)?;
        let objects: ServerObjects = Arc::default();
        let host = CHost {
            module,
            objects: objects.clone(),
        };
        let server = runtime.block_on(Server::start(config, host)).map_err(|e| {
            tracing::warn!("PMIx_server_init: {e}");
            e.status()
        })?;
        *state = Some(Running {
            runtime,
            server: Arc::new(server),
            objects,
        });
        Ok(())
    })
}

/// `PMIx_server_finalize`: stop the server.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_finalize() -> CStatus {
    guard("PMIx_server_finalize", || {
        let Some(r) = running().take() else {
            return Err(Status::ERR_INIT);
        };
        r.server.shutdown();
        drop(r.server);
        crate::state::host_events::clear();
        r.runtime
            .shutdown_timeout(std::time::Duration::from_secs(5));
        Ok(())
    })
}

/// `PMIx_server_register_nspace`: the job's information, for its local clients.
///
/// # Safety
/// `nspace` is a `pmix_nspace_t`; `info` holds `ninfo` infos; `cbfunc` is NULL or callable
/// with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_register_nspace(
    nspace: *const c_char,
    nlocalprocs: c_int,
    info: *mut CInfo,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_register_nspace", || {
        let _ = nlocalprocs;
        // SAFETY: the caller's promise.
        let (nspace, info) = unsafe { (nspace_arg(nspace)?, read_infos(info, ninfo)?) };
        let (server, handle, _) = server()?;
        let work = async move {
            server
                .register_nspace(nspace, info)
                .await
                .map_err(status_of)
        };
        run_op(work, &handle, cbfunc, cbdata)
    })
}

/// `PMIx_server_deregister_nspace`.
///
/// # Safety
/// As `PMIx_server_register_nspace`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_deregister_nspace(
    nspace: *const c_char,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) {
    let rc = guard("PMIx_server_deregister_nspace", || {
        // SAFETY: the caller's promise.
        let nspace = unsafe { nspace_arg(nspace)? };
        let (server, handle, _) = server()?;
        let work = async move { server.deregister_nspace(nspace).await.map_err(status_of) };
        run_op(work, &handle, cbfunc, cbdata)
    });
    if rc != Status::SUCCESS.0
        && let Some(f) = cbfunc
    {
        // Refused before it started: the callback still hears of it (the call has no status).
        // SAFETY: the host's callback and data.
        guard_or("op callback", (), || unsafe { f(rc, cbdata) });
    }
}

/// `PMIx_server_register_client`: a process of a registered job that may connect, with the
/// user and group it must run as; `server_object` comes back in the upcalls about it.
///
/// # Safety
/// `proc` is a proc; `cbfunc` is NULL or callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_register_client(
    proc: *const CProc,
    uid: u32,
    gid: u32,
    server_object: *mut c_void,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_register_client", || {
        if proc.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's proc.
        let proc = read_proc(unsafe { &*proc })?;
        let (server, handle, objects) = server()?;
        (objects.lock().unwrap_or_else(PoisonError::into_inner))
            .insert(proc.clone(), server_object as usize);
        let work = async move {
            server
                .register_client(proc, uid, gid)
                .await
                .map_err(status_of)
        };
        run_op(work, &handle, cbfunc, cbdata)
    })
}

/// `PMIx_server_deregister_client`.
///
/// # Safety
/// `proc` is a proc; `cbfunc` is NULL or callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_deregister_client(
    proc: *const CProc,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) {
    let rc = guard("PMIx_server_deregister_client", || {
        if proc.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's proc.
        let proc = read_proc(unsafe { &*proc })?;
        let (server, handle, objects) = server()?;
        (objects.lock().unwrap_or_else(PoisonError::into_inner)).remove(&proc);
        let work = async move { server.deregister_client(proc).await.map_err(status_of) };
        run_op(work, &handle, cbfunc, cbdata)
    });
    if rc != Status::SUCCESS.0
        && let Some(f) = cbfunc
    {
        // SAFETY: the host's callback and data.
        guard_or("op callback", (), || unsafe { f(rc, cbdata) });
    }
}

/// Set `key=value` in the NULL-terminated environment `*env` (from libc's allocator, grown
/// with `realloc`), replacing an earlier value of the key.
///
/// # Safety
/// `env` points to NULL or to such an array.
unsafe fn set_env(env: *mut *mut *mut c_char, key: &str, value: &str) -> Result<(), Status> {
    let entry = c_strdup(format!("{key}={value}"))?;
    let prefix = format!("{key}=");
    // SAFETY: the caller's promise: `*env` is NULL or a NULL-terminated array of strings.
    unsafe {
        let mut n = 0;
        let array = *env;
        if !array.is_null() {
            while !(*array.add(n)).is_null() {
                let s = read_cstr(*array.add(n)).unwrap_or_default();
                if s.starts_with(&prefix) {
                    crate::boundary::free(*array.add(n));
                    *array.add(n) = entry;
                    return Ok(());
                }
                n += 1;
            }
        }
        let grown = libc::realloc(array.cast(), (n + 2) * size_of::<*mut c_char>());
        if grown.is_null() {
            crate::boundary::free(entry);
            return Err(Status::ERR_NOMEM);
        }
        let grown = grown.cast::<*mut c_char>();
        *grown.add(n) = entry;
        *grown.add(n + 1) = std::ptr::null_mut();
        *env = grown;
    }
    Ok(())
}

/// `PMIx_server_setup_fork`: add to `*env` what the client process `proc` needs to connect.
///
/// # Safety
/// `proc` is a proc; `env` points to NULL or a NULL-terminated environment of libc's
/// allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_setup_fork(
    proc: *const CProc,
    env: *mut *mut *mut c_char,
) -> CStatus {
    guard("PMIx_server_setup_fork", || {
        if proc.is_null() || env.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's proc.
        let proc = read_proc(unsafe { &*proc })?;
        let (server, _, _) = server()?;
        for (k, v) in server.setup_fork(&proc) {
            // SAFETY: the caller's environment.
            unsafe { set_env(env, &k, &v)? };
        }
        Ok(())
    })
}

/// `PMIx_server_dmodex_request`: the data the local client `proc` committed, for another
/// node's server; `cbfunc` receives it (the bytes are the library's, valid for the call).
///
/// # Safety
/// `proc` is a proc; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_dmodex_request(
    proc: *const CProc,
    cbfunc: Option<DmodexResponseFn>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_dmodex_request", || {
        let f = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        if proc.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's proc.
        let proc = read_proc(unsafe { &*proc })?;
        let (server, handle, _) = server()?;
        let data = CbData(cbdata);
        let inner = handle.clone();
        handle.spawn_blocking(move || {
            let got = inner.block_on(server.dmodex_request(proc, Vec::new()));
            let (status, mut bytes) = match got {
                Ok(b) => (Status::SUCCESS, b),
                Err(e) => (e.status(), Vec::new()),
            };
            guard_or("dmodex callback", (), || {
                // SAFETY: the host's callback and data, with bytes valid for the call.
                unsafe { f(status.0, bytes.as_mut_ptr().cast(), bytes.len(), data.ptr()) }
            });
        });
        Ok(())
    })
}

unsafe extern "C" fn release_setup(status: CStatus, cookie: *mut c_void) {
    let _ = status;
    guard_or("release callback", (), || {
        if !cookie.is_null() {
            // SAFETY: the box `PMIx_server_setup_application` made, taken once.
            let lent = unsafe { Box::from_raw(cookie.cast::<(*mut CInfo, usize)>()) };
            // SAFETY: the array it holds.
            unsafe { crate::values::free_infos(lent.0, lent.1) };
        }
    });
}

/// `PMIx_server_setup_application`: what the library contributes to launching `nspace`
/// (this library has no fabric or environment components: nothing), for `cbfunc`.
///
/// # Safety
/// `nspace` is a `pmix_nspace_t`; `info` holds `ninfo` infos; `cbfunc` is callable with
/// `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_setup_application(
    nspace: *const c_char,
    info: *mut CInfo,
    ninfo: usize,
    cbfunc: Option<SetupApplicationCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_setup_application", || {
        let f = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        let (nspace, info) = unsafe { (nspace_arg(nspace)?, read_infos(info, ninfo)?) };
        let (server, handle, _) = server()?;
        let answer = server
            .setup_application(&nspace, &info)
            .map_err(status_of)?;
        let (array, n) = write_infos(&answer)?;
        let cookie = CbData(Box::into_raw(Box::new((array, n))).cast::<c_void>());
        let data = CbData(cbdata);
        let lent = CbData(array.cast());
        handle.spawn_blocking(move || {
            guard_or("setup callback", (), || {
                // SAFETY: the host's callback and data, with infos it releases through
                // `release_setup`.
                unsafe {
                    f(
                        Status::SUCCESS.0,
                        lent.ptr().cast(),
                        n,
                        data.ptr(),
                        Some(release_setup),
                        cookie.ptr(),
                    )
                }
            });
        });
        Ok(())
    })
}

/// `PMIx_server_setup_local_support`: prepare this node for `nspace` (nothing to prepare
/// without fabric or environment components).
///
/// # Safety
/// As `PMIx_server_register_nspace`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_setup_local_support(
    nspace: *const c_char,
    info: *mut CInfo,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_setup_local_support", || {
        // SAFETY: the caller's promise.
        let (nspace, info) = unsafe { (nspace_arg(nspace)?, read_infos(info, ninfo)?) };
        let (server, handle, _) = server()?;
        let work = async move {
            server
                .setup_local_support(&nspace, &info)
                .map_err(status_of)
        };
        run_op(work, &handle, cbfunc, cbdata)
    })
}

/// A string of the library in `*out` (libc's allocator).
///
/// # Safety
/// `out` is writable.
unsafe fn hand_string(out: *mut *mut c_char, s: &str) -> Result<(), Status> {
    if out.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    let p = c_strdup(s)?;
    // SAFETY: the caller's promise.
    unsafe { *out = p };
    Ok(())
}

/// `PMIx_generate_regex`: the node map of a comma-separated list of host names.
///
/// # Safety
/// `input` is a string; `regex` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_generate_regex(
    input: *const c_char,
    regex: *mut *mut c_char,
) -> CStatus {
    guard("PMIx_generate_regex", || {
        // SAFETY: the caller's promise.
        let input = unsafe { read_cstr(input) }.ok_or(Status::ERR_BAD_PARAM)?;
        let map = pmix::model::regex::generate_regex(&input)?;
        // SAFETY: the caller's promise.
        unsafe { hand_string(regex, &map) }
    })
}

/// `PMIx_generate_ppn`: the process map of a `;`-separated list of each node's ranks.
///
/// # Safety
/// `input` is a string; `ppn` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_generate_ppn(input: *const c_char, ppn: *mut *mut c_char) -> CStatus {
    guard("PMIx_generate_ppn", || {
        // SAFETY: the caller's promise.
        let input = unsafe { read_cstr(input) }.ok_or(Status::ERR_BAD_PARAM)?;
        let map = pmix::model::regex::generate_ppn(&input)?;
        // SAFETY: the caller's promise.
        unsafe { hand_string(ppn, &map) }
    })
}

/// `PMIx_server_IOF_deliver`: output of the local process `source` on `channel`, which the
/// host captured, for the clients and tools that pulled it (v5.0 §17.2.14); output no one
/// pulled yet is kept for those that will. With `cbfunc` the call completes on the library's
/// thread; without, it blocks.
///
/// # Safety
/// `source` is a proc; `bo` a byte object; `info` holds `ninfo` infos; `cbfunc` is NULL or
/// callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_IOF_deliver(
    source: *const CProc,
    channel: u16,
    bo: *const CByteObject,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_IOF_deliver", || {
        // SAFETY: the caller's promise.
        let source = unsafe { source.as_ref() }.ok_or(Status::ERR_BAD_PARAM)?;
        let source = read_proc(source)?;
        // SAFETY: the caller's promise; the bytes are copied before the call returns.
        let data = unsafe { read_required_bytes(bo)? };
        // SAFETY: the caller's promise.
        let info = unsafe { read_infos(info, ninfo)? };
        let (server, handle, _) = server()?;
        let channel = IofChannel(channel);
        let work = async move {
            (server.iof_deliver(source, channel, data, info).await).map_err(status_of)
        };
        run_op(work, &handle, cbfunc, cbdata)
    })
}

/// `PMIx_server_define_process_set`.
///
/// # Safety
/// `members` holds `nmembers` procs; `pset_name` is a string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_define_process_set(
    members: *const CProc,
    nmembers: usize,
    pset_name: *const c_char,
) -> CStatus {
    guard("PMIx_server_define_process_set", || {
        // SAFETY: the caller's promise.
        let (members, name) = unsafe { (read_procs(members, nmembers)?, read_cstr(pset_name)) };
        let name = name.ok_or(Status::ERR_BAD_PARAM)?;
        let (server, handle, _) = server()?;
        (handle.block_on(server.define_process_set(&name, members))).map_err(status_of)
    })
}

/// `PMIx_server_delete_process_set`.
///
/// # Safety
/// `pset_name` is a string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_delete_process_set(pset_name: *mut c_char) -> CStatus {
    guard("PMIx_server_delete_process_set", || {
        // SAFETY: the caller's promise.
        let name = unsafe { read_cstr(pset_name) }.ok_or(Status::ERR_BAD_PARAM)?;
        let (server, handle, _) = server()?;
        (handle.block_on(server.delete_process_set(&name))).map_err(status_of)
    })
}

/// `PMIx_Register_attributes` in OpenPMIx 4.2's form (the v4.0 one: `char *attrs[]`, the
/// attributes' C names, NULL-terminated; v5.0 passes `pmix_regattr_t`s instead): the host
/// supports these attributes for `function`, and queries of the host's attributes answer
/// with them. Each name the standard knows carries its key (as `pmix_common.h` spells it)
/// and type; another name is kept by name alone, as OpenPMIx keeps what the host gives it.
///
/// # Safety
/// `function` is a string; `attrs` is NULL or a NULL-terminated array of strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Register_attributes(
    function: *mut c_char,
    attrs: *mut *mut c_char,
) -> CStatus {
    guard("PMIx_Register_attributes", || {
        // SAFETY: the caller's promise.
        let (function, names) = unsafe { (read_cstr(function), read_argv(attrs)) };
        let function = function.ok_or(Status::ERR_BAD_PARAM)?;
        let attrs = names.into_iter().flatten().map(registration).collect();
        let (server, handle, _) = server()?;
        (handle.block_on(server.register_attributes(&function, attrs))).map_err(status_of)
    })
}

/// The registration of the attribute named `name` (`PMIX_ALLOC_NUM_NODES`).
fn registration(name: String) -> RegAttr {
    match pmix::model::attr::by_name(&name) {
        Some(def) => RegAttr {
            name: Some(name),
            string: Some(def.openpmix_key.unwrap_or(def.key).to_owned()),
            data_type: def.data_type.unwrap_or(DataType::UNDEF),
            description: Vec::new(),
        },
        None => RegAttr {
            name: Some(name),
            ..RegAttr::default()
        },
    }
}
