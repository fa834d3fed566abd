//! The calls OpenPMIx 5.0 and 6.1 added that reach a server or the library's own state.
//!
//! What this library does with each (`docs/capi.md` lists them):
//!
//! - `PMIx_Heartbeat` (6.1's function; 4.2's and 5.0's macro of `PMIx_Process_monitor_nb`):
//!   one heartbeat to the server, sent one way, as the macro's form sends it.
//! - `PMIx_tool_is_connected`: whether the tool has a primary server.
//! - `PMIx_server_generate_cpuset`: a cpuset string of `PMIx_server_generate_cpuset_string`
//!   made back into a cpuset, in a process that runs a server.
//! - `PMIx_Progress_thread_stop`: this library has no progress thread shared with the
//!   caller (each client runs its own work until `PMIx_Finalize`), so nothing is stopped;
//!   the call flushes, as 6.1's does by default: it returns once the callbacks under way have
//!   run (not when asked not to flush, nor from one of those callbacks, which would wait for
//!   itself).
//! - `PMIx_Resource_block(_nb)`, `PMIx_Session_control`, `PMIx_server_collect_job_info` and
//!   `PMIx_tool_set_server_module` are not implemented: `PMIX_ERR_NOT_SUPPORTED` (after
//!   `PMIX_ERR_INIT` when the process has not initialised). None of them is in the
//!   standard's v5.0; the server commands of the first two (34, 35) are answered
//!   `PMIX_ERR_NOT_SUPPORTED` by this library's server too.

use std::ffi::{c_char, c_void};

use pmix::model::Status;

use crate::args::Array;
use crate::boundary::{guard, guard_or};
use crate::state::threads::{on_client_thread, wait_idle};
use crate::types::{CDataBuffer, CInfo, CProc, CResourceUnit, CStatus, OpCb};

/// `PMIX_ERR_INIT` unless the process runs a client, a tool or a server.
fn initialized() -> Result<(), Status> {
    crate::state::server::caller().map(|_| ()).or_else(|s| {
        if crate::state::tool::initialized() {
            Ok(())
        } else {
            Err(s)
        }
    })
}

/// `PMIx_Heartbeat`: one heartbeat of this process to its server (nothing before init).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Heartbeat() {
    guard_or("PMIx_Heartbeat", (), || {
        if let Ok(client) = crate::state::client::client()
            && let Err(e) = client.heartbeat()
        {
            tracing::debug!("PMIx_Heartbeat: {e}");
        }
    });
}

/// `PMIx_Progress_thread_stop`: see the module's doc.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Progress_thread_stop(info: Array<'_, CInfo>, ninfo: usize) {
    guard_or("PMIx_Progress_thread_stop", (), || {
        let infos = info.infos(ninfo).unwrap_or_default();
        let flush = infos
            .iter()
            // `PMIX_PROGRESS_THREAD_FLUSH`, OpenPMIx 6.1's (not in the standard's tables).
            .find(|i| i.key.as_str() == "pmix.prog.flush")
            .is_none_or(|i| i.value != pmix::model::Value::Bool(false));
        if flush && !on_client_thread() {
            wait_idle();
        }
    });
}

/// `PMIx_Resource_block`: not supported (see the module's doc).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Resource_block(
    _directive: u8,
    _block: *mut c_char,
    _res: *const CResourceUnit,
    _nres: usize,
    _info: *const CInfo,
    _ninfo: usize,
) -> CStatus {
    guard("PMIx_Resource_block", || {
        initialized()?;
        Err(Status::ERR_NOT_SUPPORTED)
    })
}

/// `PMIx_Resource_block_nb`: not supported; the callback is never called.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Resource_block_nb(
    _directive: u8,
    _block: *mut c_char,
    _res: *const CResourceUnit,
    _nres: usize,
    _info: *const CInfo,
    _ninfo: usize,
    _cbfunc: Option<OpCb>,
    _cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Resource_block_nb", || {
        initialized()?;
        Err(Status::ERR_NOT_SUPPORTED)
    })
}

/// `PMIx_Session_control`: not supported; the callback is never called.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Session_control(
    _session_id: u32,
    _directives: *const CInfo,
    _ndirs: usize,
    _cbfunc: *const c_void,
    _cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Session_control", || {
        initialized()?;
        Err(Status::ERR_NOT_SUPPORTED)
    })
}

/// `PMIx_server_collect_job_info`: not supported.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_collect_job_info(
    _procs: *mut CProc,
    _nprocs: usize,
    _dbuf: *mut CDataBuffer,
) -> CStatus {
    guard("PMIx_server_collect_job_info", || {
        match crate::state::server::caller() {
            Ok(crate::state::server::Caller::Host) => {}
            _ => return Err(Status::ERR_INIT),
        }
        Err(Status::ERR_NOT_SUPPORTED)
    })
}

/// `PMIx_tool_is_connected`: whether this tool has a primary server.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_tool_is_connected() -> bool {
    guard_or("PMIx_tool_is_connected", false, || {
        crate::state::tool::primary().is_ok()
    })
}

/// `PMIx_tool_set_server_module`: not supported (a tool of this library serves nobody).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_tool_set_server_module(_module: *mut c_void) -> CStatus {
    guard("PMIx_tool_set_server_module", || {
        if !crate::state::tool::initialized() {
            return Err(Status::ERR_INIT);
        }
        Err(Status::ERR_NOT_SUPPORTED)
    })
}
