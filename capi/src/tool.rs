//! The tool calls of `pmix_tool.h` (v5.0 ch. 18) over the crate's `Tool`
//! (`pmix::client::tool`): a tool finds its server by the attributes it gives, connects with
//! the tool handshake, and may attach to more servers and choose its primary one.
//!
//! One tool per process, as in C. Between `PMIx_tool_init` and `PMIx_tool_finalize`, the
//! client calls (`PMIx_Query_info`, `PMIx_Get`, `PMIx_Notify_event`, …) go to the primary
//! server: `crate::state::client::client` falls back to it when the process has no client of its own.

use pmix::client::tool::Tool;
use pmix::model::{Info, Status, attr};

use crate::args::{Array, In, Out};
use crate::boundary::{c_array, guard};
use crate::state::tool::tool;
use crate::types::{CInfo, CProc, CStatus};
use crate::values::c_proc;

fn status_of(e: pmix::Error) -> Status {
    tracing::debug!("tool call: {e}");
    e.status()
}

/// Write `p` to `out` when it is not NULL.
///
fn write_proc(out: Out<'_, CProc>, p: &pmix::model::Proc) {
    out.set(c_proc(p));
}

/// `PMIx_tool_init`: find the server `info` names and connect to it (not with
/// `PMIX_TOOL_DO_NOT_CONNECT`), and write the tool's identifier to `proc`. A second call
/// before `PMIx_tool_finalize` only writes the identifier.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_tool_init(
    proc: Out<'_, CProc>,
    info: Array<'_, CInfo>,
    ninfo: usize,
) -> CStatus {
    crate::boundary::init_logging();
    guard("PMIx_tool_init", || {
        let info = info.infos(ninfo)?;
        let mut state = tool();
        if state.is_none() {
            *state = Some(Tool::init(&info).map_err(status_of)?);
        }
        if let Some(t) = state.as_ref() {
            write_proc(proc, t.proc());
        }
        Ok(())
    })
}

/// `PMIx_tool_finalize`: end the tool's connections.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_tool_finalize() -> CStatus {
    guard("PMIx_tool_finalize", || {
        let t = tool().take().ok_or(Status::ERR_INIT)?;
        t.finalize().map_err(status_of)
    })
}

/// `PMIx_tool_attach_to_server`: connect to the server `info` names as well; write the
/// tool's identifier to `myproc` and the server's to `server`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_tool_attach_to_server(
    myproc: Out<'_, CProc>,
    server: Out<'_, CProc>,
    info: Array<'_, CInfo>,
    ninfo: usize,
) -> CStatus {
    guard("PMIx_tool_attach_to_server", || {
        let info = info.infos(ninfo)?;
        let mut state = tool();
        let t = state.as_mut().ok_or(Status::ERR_INIT)?;
        let attached = t.attach(&info).map_err(status_of)?;
        write_proc(myproc, t.proc());
        write_proc(server, &attached);
        Ok(())
    })
}

/// `PMIx_tool_connect_to_server` (v4, deprecated in v5.0 for attach and set): connect to the
/// server `info` names and make it the primary server; write the tool's identifier to
/// `proc`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_tool_connect_to_server(
    proc: Out<'_, CProc>,
    info: Array<'_, CInfo>,
    ninfo: usize,
) -> CStatus {
    guard("PMIx_tool_connect_to_server", || {
        let mut info = info.infos(ninfo)?;
        info.push(Info::new(attr::PRIMARY_SERVER, true));
        let mut state = tool();
        let t = state.as_mut().ok_or(Status::ERR_INIT)?;
        t.attach(&info).map_err(status_of)?;
        write_proc(proc, t.proc());
        Ok(())
    })
}

/// `PMIx_tool_set_server`: make `server`, which the tool is attached to, its primary.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_tool_set_server(
    server: In<'_, CProc>,
    info: Array<'_, CInfo>,
    ninfo: usize,
) -> CStatus {
    guard("PMIx_tool_set_server", || {
        // `PMIX_WAIT_FOR_CONNECTION` and `PMIX_TIMEOUT` ask nothing more here: a server is
        // attached (connected) before it can be chosen.
        let (server, _directives) = (server.proc()?, info.infos(ninfo)?);
        let mut state = tool();
        let t = state.as_mut().ok_or(Status::ERR_INIT)?;
        t.set_server(&server).map_err(status_of)
    })
}

/// `PMIx_tool_disconnect`: end the connection to `server`; the tool stays initialised.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_tool_disconnect(server: In<'_, CProc>) -> CStatus {
    guard("PMIx_tool_disconnect", || {
        let server = server.proc()?;
        let mut state = tool();
        let t = state.as_mut().ok_or(Status::ERR_INIT)?;
        t.disconnect(&server).map_err(status_of)
    })
}

/// `PMIx_tool_get_servers`: the servers the tool is attached to, in an array from libc's
/// allocator (`PMIX_PROC_FREE` releases it; NULL when there are none).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_tool_get_servers(
    servers: Out<'_, *mut CProc>,
    nservers: Out<'_, usize>,
) -> CStatus {
    guard("PMIx_tool_get_servers", || {
        if servers.is_null() || nservers.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let list = tool().as_ref().ok_or(Status::ERR_INIT)?.servers();
        servers.set(c_array(list.iter().map(c_proc).collect())?);
        nservers.set(list.len());
        Ok(())
    })
}
