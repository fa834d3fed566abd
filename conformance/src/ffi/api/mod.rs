//! The client APIs of the other chapters (see [`crate::api`]) through the C API.
//!
//! Each entry point is looked up when first used; for a library without it, that call is
//! reported as one the target has no function for ([`ApiOutput::no_such_call`]): the harness
//! never answers a status in the library's place. A step with `nb` calls the `_nb` form and
//! waits for its callback. Arguments are built in memory this module owns (the library copies
//! what it keeps); results the library allocates are read, then released with its value
//! destructor and `free`.
//!
//! - this file: building the arguments, the shapes of call they share, and the dispatch of
//!   each call to its chapter's module: [`data`] (synchronization, publish/lookup),
//!   [`query`] (initialization state, queries), [`events`], [`process`] (process management
//!   and locality), [`jobs`] (job management and reporting), [`groups`], [`security`],
//!   [`iof`] (I/O forwarding) and [`fabric`];
//! - [`entry`]: the C structs, callback types and the looked-up entry points;
//! - [`completion`]: the callbacks, the slots they fill, and the per-process state that
//!   later steps read (event handlers, I/O registrations, the fabric, the credential);
//! - [`support`]: the support functions (strings, buffers, structure helpers, topology).

mod completion;
mod data;
mod entry;
mod events;
mod fabric;
mod groups;
mod iof;
mod jobs;
mod process;
mod query;
mod security;
mod server_calls;
mod support;
mod tool_calls;

pub use server_calls::{notify_for_host, run_server};
pub use tool_calls::run_tool;

use super::*;
use crate::api::{ApiCall, ApiOutput, sorted_procs};
use completion::*;
use entry::*;

// ---- argument building ----

/// NUL-terminated strings and the NULL-terminated `argv` pointing into them.
struct Argv {
    _owned: Vec<CString>,
    ptrs: Vec<*mut c_char>,
}

impl Argv {
    fn new<S: AsRef<[u8]>>(items: &[S]) -> Result<Argv, Status> {
        let owned: Vec<CString> = items
            .iter()
            .map(|s| CString::new(s.as_ref()).map_err(|_| Status::ERR_BAD_PARAM))
            .collect::<Result<_, _>>()?;
        let mut ptrs: Vec<*mut c_char> = owned.iter().map(|s| s.as_ptr().cast_mut()).collect();
        ptrs.push(std::ptr::null_mut());
        Ok(Argv {
            _owned: owned,
            ptrs,
        })
    }

    fn ptr(&mut self) -> *mut *mut c_char {
        self.ptrs.as_mut_ptr()
    }
}

fn cstring(s: impl AsRef<[u8]>) -> Result<CString, Status> {
    CString::new(s.as_ref()).map_err(|_| Status::ERR_BAD_PARAM)
}

fn procs_c(procs: &[Proc]) -> Vec<CProc> {
    procs.iter().map(c_proc).collect()
}

fn procs_ptr(p: &[CProc]) -> *const CProc {
    if p.is_empty() {
        std::ptr::null()
    } else {
        p.as_ptr()
    }
}

// ---- the calls ----

/// Run `call` through the library.
pub fn run_api(call: ApiCall) -> ApiOutput {
    let l = match ready() {
        Ok(l) => l,
        Err(s) => return ApiOutput::status(s),
    };
    outcome(run(l, syms(l), call))
}

/// Stands, inside this module only, for "the library has no such entry point": never a
/// status a library returns (PMIx's are small negative numbers).
pub(super) const NO_SUCH_CALL: Status = Status(i32::MIN);

/// A call's output, or the status it failed with.
pub(super) fn outcome(r: Result<ApiOutput, Status>) -> ApiOutput {
    match r {
        Ok(o) => o,
        Err(NO_SUCH_CALL) => ApiOutput::no_such_call(),
        Err(s) => ApiOutput::status(s),
    }
}

/// An entry point, or [`NO_SUCH_CALL`] when the library lacks it.
fn need<T: Copy>(f: Option<T>) -> Result<T, Status> {
    f.ok_or(NO_SUCH_CALL)
}

/// A blocking call with a results array.
fn results_of(l: &Lib, call: impl FnOnce(*mut *mut CInfo, *mut usize) -> i32) -> ApiOutput {
    let mut p: *mut CInfo = std::ptr::null_mut();
    let mut n = 0usize;
    let rc = call(&raw mut p, &raw mut n);
    with_results(Status(rc), take_results(l, p, n))
}

/// A non-blocking call whose callback is a `pmix_info_cbfunc_t`.
fn info_nb(call: impl FnOnce(InfoCb, *mut c_void) -> i32) -> ApiOutput {
    let slot = Slot::<ApiOutput>::new();
    let cbdata = give(&slot);
    let rc = call(info_done, cbdata);
    start_and_wait(&slot, cbdata, rc, ApiOutput::status)
}

/// A non-blocking call whose callback is a `pmix_op_cbfunc_t`.
fn op_nb(call: impl FnOnce(OpCb, *mut c_void) -> i32) -> ApiOutput {
    let slot = Slot::<Status>::new();
    let cbdata = give(&slot);
    let rc = call(op_done, cbdata);
    ApiOutput::status(start_and_wait(&slot, cbdata, rc, |s| s))
}

fn status_of(rc: i32) -> ApiOutput {
    ApiOutput::status(Status(rc))
}

/// Run `call` through the library: each chapter's calls in its module.
fn run(l: &'static Lib, s: &Syms, call: ApiCall) -> Result<ApiOutput, Status> {
    match call {
        call @ (ApiCall::FenceNb { .. }
        | ApiCall::PublishNb { .. }
        | ApiCall::LookupNb { .. }
        | ApiCall::UnpublishNb { .. }) => data::run(l, s, call),
        call @ (ApiCall::Initialized
        | ApiCall::GetVersion
        | ApiCall::Progress
        | ApiCall::Query { .. }
        | ApiCall::ResolvePeers { .. }
        | ApiCall::ResolveNodes { .. }) => query::run(l, s, call),
        call @ (ApiCall::RegisterEventHandler { .. }
        | ApiCall::DeregisterEventHandler { .. }
        | ApiCall::Events { .. }
        | ApiCall::NotifyEvent { .. }) => events::run(l, s, call),
        call @ (ApiCall::Abort { .. }
        | ApiCall::Spawn { .. }
        | ApiCall::Connect { .. }
        | ApiCall::Disconnect { .. }
        | ApiCall::GetCpuset { .. }
        | ApiCall::GetRelativeLocality { .. }
        | ApiCall::ComputeDistances { .. }) => process::run(l, s, call),
        call @ (ApiCall::Log { .. }
        | ApiCall::AllocationRequest { .. }
        | ApiCall::JobControl { .. }
        | ApiCall::ProcessMonitor { .. }) => jobs::run(l, s, call),
        call @ (ApiCall::GetCredential { .. } | ApiCall::ValidateCredential { .. }) => {
            security::run(l, s, call)
        }
        call @ (ApiCall::GroupConstruct { .. }
        | ApiCall::GroupInvite { .. }
        | ApiCall::GroupJoin { .. }
        | ApiCall::GroupLeave { .. }
        | ApiCall::GroupDestruct { .. }) => groups::run(l, s, call),
        call @ (ApiCall::IofPull { .. }
        | ApiCall::IofDeregister { .. }
        | ApiCall::IofOutput { .. }
        | ApiCall::IofPush { .. }) => iof::run(l, s, call),
        call @ (ApiCall::FabricRegister { .. }
        | ApiCall::FabricUpdate { .. }
        | ApiCall::FabricDeregister { .. }) => fabric::run(l, s, call),
        ApiCall::Support(call) => support::run(l, s, call),
    }
}
