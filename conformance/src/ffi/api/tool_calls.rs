//! The tool APIs of a vector's tool (see [`crate::tool_api`]) through the C API, in the
//! tool's own process. `PMIx_tool_init` comes first and its infos are built by hand (the
//! library cannot unpack before it is initialised); the other calls follow the rules of
//! [`super`]. The process remembers the server it attached to last, which `set_server` and
//! `disconnect` act on (the first of `PMIx_tool_get_servers` before any attach).

use super::*;
use crate::ffi::server::plain_infos;
use crate::tool_api::ToolCall;

type ProcInfoFn = unsafe extern "C" fn(*mut CProc, *const CInfo, usize) -> i32;

/// The entry points of this module, each present or not.
struct ToolSyms {
    init: Option<ProcInfoFn>,
    finalize: Option<unsafe extern "C" fn() -> i32>,
    connect: Option<ProcInfoFn>,
    attach: Option<unsafe extern "C" fn(*mut CProc, *mut CProc, *const CInfo, usize) -> i32>,
    set_server: Option<unsafe extern "C" fn(*const CProc, *const CInfo, usize) -> i32>,
    get_servers: Option<unsafe extern "C" fn(*mut *mut CProc, *mut usize) -> i32>,
    disconnect: Option<unsafe extern "C" fn(*const CProc) -> i32>,
}

static TOOL_SYMS: OnceLock<ToolSyms> = OnceLock::new();

fn tool_syms(l: &'static Lib) -> &'static ToolSyms {
    TOOL_SYMS.get_or_init(|| {
        macro_rules! opt {
            ($name:literal) => {
                // SAFETY: the symbol, when present, has the C signature of the field it is
                // stored in, as the standard (v5.0 chapter 18) and OpenPMIx 4.2's pmix_tool.h
                // and pmix_deprecated.h declare it.
                unsafe { l.optional(concat!($name, "\0")) }
            };
        }
        ToolSyms {
            init: opt!("PMIx_tool_init"),
            finalize: opt!("PMIx_tool_finalize"),
            connect: opt!("PMIx_tool_connect_to_server"),
            attach: opt!("PMIx_tool_attach_to_server"),
            set_server: opt!("PMIx_tool_set_server"),
            get_servers: opt!("PMIx_tool_get_servers"),
            disconnect: opt!("PMIx_tool_disconnect"),
        }
    })
}

/// The server the tool attached to last.
static SERVER: Mutex<Option<Proc>> = Mutex::new(None);

/// Run a tool step's call through the library of this tool process.
pub fn run_tool(call: ToolCall) -> ApiOutput {
    let l = match lib() {
        Ok(l) => l,
        Err(_) => return ApiOutput::status(Status::ERR_INIT),
    };
    let s = tool_syms(l);
    let r = match call {
        ToolCall::Init { info } => init(l, s, &info),
        ToolCall::Client(call) => return super::run_api(call),
        other => ready().and_then(|l| run(l, s, other)),
    };
    r.unwrap_or_else(ApiOutput::status)
}

fn init(l: &'static Lib, s: &ToolSyms, info: &[Info]) -> Result<ApiOutput, Status> {
    let (_strings, ci) = plain_infos(info)?;
    let mut me = CProc::zeroed();
    let ptr = if ci.is_empty() {
        std::ptr::null()
    } else {
        ci.as_ptr()
    };
    // SAFETY: a pmix_proc_t the library fills, and hand-built infos whose strings `_strings`
    // owns, alive for the call (the library copies what it keeps).
    check(unsafe { need(s.init)?(&mut me, ptr, ci.len()) })?;
    set_buffer_type(l.probe_buffer_type());
    // The identifier the tool was given: a library that fills `proc` with no valid
    // namespace is seen as giving none.
    Ok(match proc_of(me) {
        Ok(me) => ApiOutput::value(Ok(Value::Proc(me))),
        Err(_) => ApiOutput::status(Status::SUCCESS),
    })
}

/// The server `set_server` and `disconnect` act on.
fn current_server(s: &ToolSyms) -> Result<Proc, Status> {
    if let Some(p) = lock(&SERVER).clone() {
        return Ok(p);
    }
    servers(s)?.into_iter().next().ok_or(Status::ERR_NOT_FOUND)
}

fn servers(s: &ToolSyms) -> Result<Vec<Proc>, Status> {
    let mut p: *mut CProc = std::ptr::null_mut();
    let mut n = 0usize;
    // SAFETY: the library sets an array of `n` identifiers it allocated for the caller.
    check(unsafe { need(s.get_servers)?(&mut p, &mut n) })?;
    if p.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: `n` identifiers at `p`, read before they are freed.
    let out = unsafe { std::slice::from_raw_parts(p, n) }
        .iter()
        .map(|c| proc_of(*c))
        .collect();
    // SAFETY: the array was malloc'd for the caller (PMIX_PROC_CREATE).
    unsafe { free(p.cast()) };
    out
}

fn run(l: &'static Lib, s: &ToolSyms, call: ToolCall) -> Result<ApiOutput, Status> {
    Ok(match call {
        ToolCall::Init { .. } | ToolCall::Client(_) => return Err(Status::ERR_BAD_PARAM),
        ToolCall::Finalize => {
            // SAFETY: no arguments.
            status_of(unsafe { need(s.finalize)?() })
        }
        ToolCall::ConnectToServer { info } => {
            let ci = l.infos_to_c(&info)?;
            let mut me = CProc::zeroed();
            // SAFETY: a pmix_proc_t the library fills and infos alive for the call.
            status_of(unsafe { need(s.connect)?(&mut me, ci.ptr(), ci.v.len()) })
        }
        ToolCall::AttachToServer { info } => {
            let ci = l.infos_to_c(&info)?;
            let (mut me, mut server) = (CProc::zeroed(), CProc::zeroed());
            // SAFETY: two pmix_proc_t the library fills and infos alive for the call.
            check(unsafe { need(s.attach)?(&mut me, &mut server, ci.ptr(), ci.v.len()) })?;
            let server = proc_of(server)?;
            *lock(&SERVER) = Some(server.clone());
            ApiOutput::value(Ok(Value::Proc(server)))
        }
        ToolCall::SetServer { info } => {
            let ci = l.infos_to_c(&info)?;
            let server = c_proc(&current_server(s)?);
            // SAFETY: an identifier and infos alive for the call.
            status_of(unsafe { need(s.set_server)?(&server, ci.ptr(), ci.v.len()) })
        }
        ToolCall::GetServers => ApiOutput::value(servers(s).map(sorted_procs)),
        ToolCall::Disconnect => {
            let server = c_proc(&current_server(s)?);
            // SAFETY: an identifier alive for the call.
            status_of(unsafe { need(s.disconnect)?(&server) })
        }
    })
}
