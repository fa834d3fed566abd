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

use crate::args::{Argv, ArgvMut, Array, In, Out, Str};
use crate::boundary::{c_strdup, guard};
use crate::callbacks::{CbData, call_dmodex, call_op, call_setup_application, lent_infos};
use crate::state::server::{Running, ServerObjects, running, server};
use crate::types::{
    CByteObject, CInfo, CProc, CServerModule, CStatus, DmodexResponseFn, OpCb, SetupApplicationCb,
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
        call_op(f, status, data);
    });
    Ok(())
}

fn status_of(e: pmix::Error) -> Status {
    e.status()
}

/// A namespace argument (a `pmix_nspace_t`, or any string up to its 255 bytes); NULL is
/// `PMIX_ERR_BAD_PARAM`.
fn nspace_arg(nspace: Str<'_>) -> Result<Nspace, Status> {
    if nspace.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    let text = String::from_utf8_lossy(nspace.bytes_within(256)).into_owned();
    Nspace::new(text).map_err(|e| e.status())
}

/// Infos of `PMIx_server_init`, without those of types this library does not carry (a
/// topology object, …), which are left out with a warning instead of failing the start.
fn init_infos(info: Array<'_, CInfo>, ninfo: usize) -> Result<Vec<Info>, Status> {
    let mut out = Vec::new();
    for (key, read) in info.each_info(ninfo)? {
        match read {
            Ok(mut one) => out.append(&mut one),
            Err(Status::ERR_NOT_SUPPORTED) => tracing::warn!(
                "PMIx_server_init: {key} has a type this library does not carry; left out"
            ),
            Err(s) => return Err(s),
        }
    }
    Ok(out)
}

/// `PMIx_server_init`: start the server with the host's upcalls (`module`, NULL for none).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_init(
    module: In<'_, CServerModule>,
    info: Array<'_, CInfo>,
    ninfo: usize,
) -> CStatus {
    crate::boundary::init_logging();
    guard("PMIx_server_init", || {
        let info = init_infos(info, ninfo)?;
        let mut state = running();
        if state.is_some() {
            return Ok(());
        }
        // NULL: a module of no upcalls.
        let module = module.get().copied().unwrap_or_default();
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
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_register_nspace(
    nspace: Str<'_>,
    nlocalprocs: c_int,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_register_nspace", || {
        let _ = nlocalprocs;
        let (nspace, info) = (nspace_arg(nspace)?, info.infos(ninfo)?);
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
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_deregister_nspace(
    nspace: Str<'_>,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) {
    let rc = guard("PMIx_server_deregister_nspace", || {
        let nspace = nspace_arg(nspace)?;
        let (server, handle, _) = server()?;
        let work = async move { server.deregister_nspace(nspace).await.map_err(status_of) };
        run_op(work, &handle, cbfunc, cbdata)
    });
    if rc != Status::SUCCESS.0
        && let Some(f) = cbfunc
    {
        // Refused before it started: the callback still hears of it (the call has no status).
        call_op(f, Status(rc), CbData(cbdata));
    }
}

/// `PMIx_server_register_client`: a process of a registered job that may connect, with the
/// user and group it must run as; `server_object` comes back in the upcalls about it.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_register_client(
    proc: In<'_, CProc>,
    uid: u32,
    gid: u32,
    server_object: *mut c_void,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_register_client", || {
        let proc = proc.proc()?;
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
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_deregister_client(
    proc: In<'_, CProc>,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) {
    let rc = guard("PMIx_server_deregister_client", || {
        let proc = proc.proc()?;
        let (server, handle, objects) = server()?;
        (objects.lock().unwrap_or_else(PoisonError::into_inner)).remove(&proc);
        let work = async move { server.deregister_client(proc).await.map_err(status_of) };
        run_op(work, &handle, cbfunc, cbdata)
    });
    if rc != Status::SUCCESS.0
        && let Some(f) = cbfunc
    {
        call_op(f, Status(rc), CbData(cbdata));
    }
}

/// Set `key=value` in the NULL-terminated environment `*env` (from libc's allocator, grown
/// with `realloc`), replacing an earlier value of the key.
fn set_env(env: &mut ArgvMut<'_>, key: &str, value: &str) -> Result<(), Status> {
    let entry = format!("{key}={value}");
    let prefix = format!("{key}=");
    let existing = env
        .entries()?
        .iter()
        .position(|e| e.starts_with(prefix.as_bytes()));
    let set = match existing {
        Some(at) => env.replace(at, entry.as_bytes()),
        None => env.insert(entry.as_bytes(), false),
    };
    // An array that cannot grow is out of memory, as this call has always said.
    set.map_err(|s| match s {
        Status::ERR_OUT_OF_RESOURCE => Status::ERR_NOMEM,
        other => other,
    })
}

/// `PMIx_server_setup_fork`: add to `*env` what the client process `proc` needs to connect.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_setup_fork(proc: In<'_, CProc>, mut env: ArgvMut<'_>) -> CStatus {
    guard("PMIx_server_setup_fork", || {
        if proc.get().is_none() || env.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let proc = proc.proc()?;
        let (server, _, _) = server()?;
        for (k, v) in server.setup_fork(&proc) {
            set_env(&mut env, &k, &v)?;
        }
        Ok(())
    })
}

/// `PMIx_server_dmodex_request`: the data the local client `proc` committed, for another
/// node's server; `cbfunc` receives it (the bytes are the library's, valid for the call).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_dmodex_request(
    proc: In<'_, CProc>,
    cbfunc: Option<DmodexResponseFn>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_dmodex_request", || {
        let f = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        let proc = proc.proc()?;
        let (server, handle, _) = server()?;
        let data = CbData(cbdata);
        let inner = handle.clone();
        handle.spawn_blocking(move || {
            let got = inner.block_on(server.dmodex_request(proc, Vec::new()));
            let (status, bytes) = match got {
                Ok(b) => (Status::SUCCESS, b),
                Err(e) => (e.status(), Vec::new()),
            };
            call_dmodex(f, status, bytes, data);
        });
        Ok(())
    })
}

/// `PMIx_server_setup_application`: what the library contributes to launching `nspace`
/// (this library has no fabric or environment components: nothing), for `cbfunc`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_setup_application(
    nspace: Str<'_>,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<SetupApplicationCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_setup_application", || {
        let f = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        let (nspace, info) = (nspace_arg(nspace)?, info.infos(ninfo)?);
        let (server, handle, _) = server()?;
        let answer = server
            .setup_application(&nspace, &info)
            .map_err(status_of)?;
        let lent = lent_infos(&answer)?;
        let data = CbData(cbdata);
        handle.spawn_blocking(move || call_setup_application(f, Status::SUCCESS, lent, data));
        Ok(())
    })
}

/// `PMIx_server_setup_local_support`: prepare this node for `nspace` (nothing to prepare
/// without fabric or environment components).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_setup_local_support(
    nspace: Str<'_>,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_setup_local_support", || {
        let (nspace, info) = (nspace_arg(nspace)?, info.infos(ninfo)?);
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
fn hand_string(out: Out<'_, *mut c_char>, s: &str) -> Result<(), Status> {
    if out.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    out.set(c_strdup(s)?);
    Ok(())
}

/// `PMIx_generate_regex`: the node map of a comma-separated list of host names.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_generate_regex(input: Str<'_>, regex: Out<'_, *mut c_char>) -> CStatus {
    guard("PMIx_generate_regex", || {
        let input = input.required()?;
        let map = pmix::model::regex::generate_regex(&input)?;
        hand_string(regex, &map)
    })
}

/// `PMIx_generate_ppn`: the process map of a `;`-separated list of each node's ranks.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_generate_ppn(input: Str<'_>, ppn: Out<'_, *mut c_char>) -> CStatus {
    guard("PMIx_generate_ppn", || {
        let input = input.required()?;
        let map = pmix::model::regex::generate_ppn(&input)?;
        hand_string(ppn, &map)
    })
}

/// `PMIx_server_IOF_deliver`: output of the local process `source` on `channel`, which the
/// host captured, for the clients and tools that pulled it (v5.0 §17.2.14); output no one
/// pulled yet is kept for those that will. With `cbfunc` the call completes on the library's
/// thread; without, it blocks.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_IOF_deliver(
    source: In<'_, CProc>,
    channel: u16,
    bo: In<'_, CByteObject>,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_IOF_deliver", || {
        let source = source.proc()?;
        // Copied before the call returns.
        let data = bo.bytes()?;
        let info = info.infos(ninfo)?;
        let (server, handle, _) = server()?;
        let channel = IofChannel(channel);
        let work = async move {
            (server.iof_deliver(source, channel, data, info).await).map_err(status_of)
        };
        run_op(work, &handle, cbfunc, cbdata)
    })
}

/// `PMIx_server_define_process_set`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_define_process_set(
    members: Array<'_, CProc>,
    nmembers: usize,
    pset_name: Str<'_>,
) -> CStatus {
    guard("PMIx_server_define_process_set", || {
        let (members, name) = (members.procs(nmembers)?, pset_name.required()?);
        let (server, handle, _) = server()?;
        (handle.block_on(server.define_process_set(&name, members))).map_err(status_of)
    })
}

/// `PMIx_server_delete_process_set`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_delete_process_set(pset_name: Str<'_>) -> CStatus {
    guard("PMIx_server_delete_process_set", || {
        let name = pset_name.required()?;
        let (server, handle, _) = server()?;
        (handle.block_on(server.delete_process_set(&name))).map_err(status_of)
    })
}

/// `PMIx_Register_attributes` in OpenPMIx 4.2's form (the v4.0 one: `char *attrs[]`, the
/// attributes' C names, NULL-terminated; v5.0 passes `pmix_regattr_t`s instead): the host
/// supports these attributes for `function`, and queries of the host's attributes answer
/// with them. Each name the standard knows carries its key (as `pmix_common.h` spells it)
/// and type; another name is kept by name alone, as OpenPMIx keeps what the host gives it.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Register_attributes(function: Str<'_>, attrs: Argv<'_>) -> CStatus {
    guard("PMIx_Register_attributes", || {
        let function = function.required()?;
        let attrs = attrs.texts().into_iter().map(registration).collect();
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
