//! The client calls of `pmix.h` (v5.0 chapters 4, 5 and 9) over the crate's blocking client.
//!
//! One client per process, as in C: `PMIx_Init` connects on its first call and counts the
//! later ones; `PMIx_Finalize` disconnects when the count returns to zero. A call holds the
//! process-wide lock only to find the client, so calls from several threads run at once (the
//! blocking client shares its socket between them).

use std::ffi::{CString, c_char, c_int};
use std::sync::{Arc, OnceLock};

use pmix::client::blocking::Client;
use pmix::model::{Nspace, PData, Scope, Status, attr};

use crate::args::{Argv, Array, ArrayMut, In, Out, Str, ValueOut};
use crate::boundary::{c_array, guard, guard_or, read_fixed};
use crate::state::client::{Connected, client, connected};
use crate::state::server::Caller;
use crate::types::{CInfo, CPdata, CProc, CStatus, CValue};
use crate::values::{c_proc, read_proc, write_value};

fn status_of(e: pmix::Error) -> Status {
    e.status()
}

/// `PMIx_Init`: connect to the server named by the environment the server's launcher set,
/// and write this process's name to `proc` (when not NULL). Programming-model attributes
/// among `info` raise `PMIX_MODEL_DECLARED` at the process's own handlers, at every init
/// (`Client::declare_model`).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Init(proc: Out<'_, CProc>, info: Array<'_, CInfo>, ninfo: usize) -> CStatus {
    crate::boundary::init_logging();
    guard("PMIx_Init", || {
        let directives = info.infos(ninfo)?;
        let mut state = connected();
        let client = match state.as_mut() {
            Some(c) => {
                c.inits += 1;
                c.client.clone()
            }
            None => {
                let mut config = pmix::client::ClientConfig::from_env().map_err(|e| {
                    tracing::warn!("PMIx_Init: {e}");
                    e.status()
                })?;
                // Programs written for OpenPMIx put attributes, whose keys are reserved (Open
                // MPI puts `pmix.hname`): accepted, as OpenPMIx accepts them, unless the
                // standard's behaviour was asked for (`departures`).
                config.accept_reserved_puts = !crate::departures::strict();
                let client = Client::init_with(&config).map_err(|e| {
                    tracing::warn!("PMIx_Init: {e}");
                    e.status()
                })?;
                let client = Arc::new(client);
                *state = Some(Connected {
                    client: client.clone(),
                    inits: 1,
                });
                client
            }
        };
        drop(state);
        // Each init that names a programming model declares it to the process's handlers
        // (a second runtime in the process initialises again with its own).
        if let Err(e) = client.declare_model(&directives) {
            tracing::warn!("PMIx_Init: the model could not be declared: {e}");
        }
        proc.set(c_proc(client.proc()));
        Ok(())
    })
}

/// `PMIx_Initialized`: 1 between `PMIx_Init` and the last `PMIx_Finalize` (or between
/// `PMIx_tool_init` and `PMIx_tool_finalize`), else 0.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Initialized() -> c_int {
    guard_or("PMIx_Initialized", 0, || {
        c_int::from(connected().is_some() || crate::state::tool::initialized())
    })
}

/// `PMIx_Finalize`: the last of the process's `PMIx_Init` calls ends the connection.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Finalize(info: Array<'_, CInfo>, ninfo: usize) -> CStatus {
    guard("PMIx_Finalize", || {
        let directives = info.infos(ninfo)?;
        let last = {
            let mut state = connected();
            let c = state.as_mut().ok_or(Status::ERR_INIT)?;
            c.inits -= 1;
            if c.inits > 0 {
                return Ok(());
            }
            state.take().map(|c| c.client)
        };
        let Some(client) = last else {
            return Ok(());
        };
        let r = client.finalize_with(&directives).map_err(status_of);
        // The runtime goes with the last reference, once no callback runs any more. From
        // inside a callback, that is after this one returns: a thread of its own waits.
        if crate::state::threads::on_client_thread() {
            std::thread::spawn(move || {
                crate::state::threads::wait_idle();
                drop(client);
            });
        } else {
            crate::state::threads::wait_idle();
            drop(client);
        }
        r
    })
}

/// `PMIx_Abort`: ask the host to end `procs` (the whole job when none).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Abort(
    status: c_int,
    msg: Str<'_>,
    procs: Array<'_, CProc>,
    nprocs: usize,
) -> CStatus {
    guard("PMIx_Abort", || {
        let (msg, procs) = (msg.text().unwrap_or_default(), procs.procs(nprocs)?);
        client()?
            .abort(Status(status), &msg, &procs)
            .map_err(status_of)
    })
}

/// `PMIx_Put`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Put(scope: u8, key: Str<'_>, val: In<'_, CValue>) -> CStatus {
    guard("PMIx_Put", || {
        let (key, value) = (key.required()?, val.value()?);
        client()?.put(Scope(scope), &key, value).map_err(status_of)
    })
}

/// `PMIx_Store_internal`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Store_internal(
    proc: In<'_, CProc>,
    key: Str<'_>,
    val: In<'_, CValue>,
) -> CStatus {
    guard("PMIx_Store_internal", || {
        let (proc, key, value) = (proc.proc()?, key.required()?, val.value()?);
        match crate::state::server::caller()? {
            Caller::Client(c) => c.store_internal(&proc, &key, value).map_err(status_of),
            Caller::Host => crate::state::server::host_store(proc, &key, value),
        }
    })
}

/// `PMIx_Commit`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Commit() -> CStatus {
    guard("PMIx_Commit", || client()?.commit().map_err(status_of))
}

/// `PMIx_Fence`: `procs` NULL (or none) is the whole namespace of this process.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Fence(
    procs: Array<'_, CProc>,
    nprocs: usize,
    info: Array<'_, CInfo>,
    ninfo: usize,
) -> CStatus {
    guard("PMIx_Fence", || {
        let (procs, info) = (procs.procs(nprocs)?, info.infos(ninfo)?);
        client()?.fence(&procs, &info).map_err(status_of)
    })
}

/// `PMIx_Get`: the value, in a `pmix_value_t` from libc's allocator that the caller releases
/// (`PMIX_VALUE_RELEASE`). With `PMIX_GET_STATIC_VALUES` the caller's own `*val` is filled
/// instead. `proc` NULL is this process.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Get(
    proc: In<'_, CProc>,
    key: Str<'_>,
    info: Array<'_, CInfo>,
    ninfo: usize,
    val: ValueOut<'_>,
) -> CStatus {
    guard("PMIx_Get", || {
        if val.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let (key, info) = (key.required()?, info.infos(ninfo)?);
        let target = proc.get().map(read_proc).transpose()?;
        let static_values = info
            .iter()
            .any(|i| i.is(attr::GET_STATIC_VALUES) && i.value.as_bool().unwrap_or(true));
        let value = match crate::state::server::caller()? {
            Caller::Client(c) => c.get(target.as_ref(), &key, &info).map_err(status_of)?,
            Caller::Host => crate::state::server::host_get(target, &key)?,
        };
        val.value(&value, static_values)
    })
}

/// `PMIx_Publish`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Publish(info: Array<'_, CInfo>, ninfo: usize) -> CStatus {
    guard("PMIx_Publish", || {
        let client = client()?;
        // Nothing to publish is refused at once, as OpenPMIx's library does, before any
        // message to the server.
        if info.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let info = info.infos(ninfo)?;
        client.publish(&info).map_err(status_of)
    })
}

/// `PMIx_Lookup`: each of `data` names a key; those found get the publisher and the value
/// (`PMIX_ERR_PARTIAL_SUCCESS` when only some are).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Lookup(
    data: ArrayMut<'_, CPdata>,
    ndata: usize,
    info: Array<'_, CInfo>,
    ninfo: usize,
) -> CStatus {
    guard("PMIx_Lookup", || {
        if ndata == 0 || data.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let info = info.infos(ninfo)?;
        let wanted = data.slice(ndata)?;
        let keys: Vec<String> = wanted.iter().map(|d| read_fixed(&d.key)).collect();
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let found = client()?.lookup(&refs, &info).map_err(status_of)?;
        for (slot, key) in wanted.iter_mut().zip(&keys) {
            if let Some(pd) = found.iter().find(|d| d.key.as_str() == key) {
                slot.proc = c_proc(&pd.proc);
                write_value(&pd.value, &mut slot.value)?;
            }
        }
        match PData::lookup_status(&keys, &found) {
            Status::SUCCESS => Ok(()),
            s => Err(s),
        }
    })
}

/// `PMIx_Unpublish`: `keys` NULL is every key this process published.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Unpublish(keys: Argv<'_>, info: Array<'_, CInfo>, ninfo: usize) -> CStatus {
    guard("PMIx_Unpublish", || {
        let (keys, info) = (keys.texts(), info.infos(ninfo)?);
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        client()?.unpublish(&refs, &info).map_err(status_of)
    })
}

/// `PMIx_Progress`: the library progresses on its own threads; nothing to do.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Progress() {}

/// `PMIx_Get_version`: this library's version string (static), marked `strict` when it
/// follows the standard where OpenPMIx 4.2 does not (`departures`).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Get_version() -> *const c_char {
    static VERSION: OnceLock<CString> = OnceLock::new();
    guard_or("PMIx_Get_version", std::ptr::null(), || {
        VERSION
            .get_or_init(|| {
                CString::new(crate::departures::version(crate::departures::strict()))
                    .unwrap_or_default()
            })
            .as_ptr()
    })
}

/// `PMIx_Resolve_peers`: the processes of `nspace` (every job's when NULL or empty) on
/// `nodename` (this node when NULL), in a `pmix_proc_t` array the caller releases
/// (`PMIX_PROC_FREE`); none found is `PMIX_ERR_NOT_FOUND`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Resolve_peers(
    nodename: Str<'_>,
    nspace: Str<'_>,
    procs: Out<'_, *mut CProc>,
    nprocs: Out<'_, usize>,
) -> CStatus {
    guard("PMIx_Resolve_peers", || {
        if procs.is_null() || nprocs.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let (node, job) = (nodename.text(), nspace.text());
        let c = client()?;
        let found = match job.filter(|j| !j.is_empty()) {
            Some(j) => {
                let job = Nspace::new(j).map_err(status_of)?;
                c.block_on(c.as_async().resolve_peers(node.as_deref(), &job))
            }
            None => c.block_on(c.as_async().resolve_peers_of_every_job(node.as_deref())),
        }
        .map_err(status_of)?;
        if found.is_empty() {
            return Err(Status::ERR_NOT_FOUND);
        }
        procs.set(c_array(found.iter().map(c_proc).collect())?);
        nprocs.set(found.len());
        Ok(())
    })
}

/// `PMIx_Resolve_nodes`: the comma-separated names of the nodes hosting `nspace`, a string
/// the caller frees.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Resolve_nodes(nspace: Str<'_>, nodelist: Out<'_, *mut c_char>) -> CStatus {
    guard("PMIx_Resolve_nodes", || {
        if nodelist.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let job = nspace.required()?;
        let job = Nspace::new(job).map_err(status_of)?;
        let c = client()?;
        let nodes = c
            .block_on(c.as_async().resolve_nodes(&job))
            .map_err(status_of)?;
        nodelist.set(crate::boundary::c_strdup(&nodes)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_over_a_count_no_job_can_have_is_a_bad_param_not_a_crash() {
        let one = std::mem::MaybeUninit::<CProc>::zeroed();
        // SAFETY: a zeroed proc is a valid one (empty namespace, rank 0); the count is refused
        // before any proc past it is read.
        let procs = unsafe { Array::new(one.as_ptr()) };
        let status = PMIx_Fence(procs, 1 << 40, Array::null(), 0);
        assert_eq!(status, Status::ERR_BAD_PARAM.0);
    }
}
