//! The client APIs of the other chapters (see [`crate::api`]) through the C API.
//!
//! Each entry point is looked up when first used; for a library without it, that call is
//! reported as one the target has no function for ([`ApiOutput::no_such_call`]): the harness
//! never answers a status in the library's place. A step with `nb` calls the `_nb` form and
//! waits for its callback. Arguments are built in memory this module owns (the library copies
//! what it keeps); results the library allocates are read, then released with its value
//! destructor and `free`.
//!
//! - this file: building the arguments and making each call;
//! - [`entry`]: the C structs, callback types and the looked-up entry points;
//! - [`completion`]: the callbacks, the slots they fill, and the per-process state that
//!   later steps read (event handlers, I/O registrations, the fabric, the credential);
//! - [`support`]: the support functions (strings, buffers, structure helpers, topology).

use std::time::Duration;

use pmix::model::{Cpuset, Locality};

mod completion;
mod entry;
mod server_calls;
mod support;
mod tool_calls;

pub use server_calls::{notify_for_host, run_server};
pub use tool_calls::run_tool;

use super::*;
use crate::api::{ApiCall, ApiOutput, sorted_nodes, sorted_procs};
use completion::*;
use entry::*;

// ---- argument building ----

/// NUL-terminated strings and the NULL-terminated `argv` pointing into them.
struct Argv {
    _owned: Vec<CString>,
    ptrs: Vec<*mut c_char>,
}

impl Argv {
    fn new(items: &[String]) -> Result<Argv, Status> {
        let owned: Vec<CString> = items
            .iter()
            .map(|s| CString::new(s.as_str()).map_err(|_| Status::ERR_BAD_PARAM))
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

fn cstring(s: &str) -> Result<CString, Status> {
    CString::new(s).map_err(|_| Status::ERR_BAD_PARAM)
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

#[allow(clippy::too_many_lines)]
fn run(l: &'static Lib, s: &Syms, call: ApiCall) -> Result<ApiOutput, Status> {
    Ok(match call {
        ApiCall::FenceNb { procs, info } => {
            let cp = procs_c(&procs);
            let ci = l.infos_to_c(&info)?;
            let f = need(s.fence_nb)?;
            // SAFETY: proc and info arrays of their lengths (or NULL), alive until the
            // callback, which op_nb waits for.
            op_nb(|cb, d| unsafe { f(procs_ptr(&cp), cp.len(), ci.ptr(), ci.v.len(), cb, d) })
        }
        ApiCall::PublishNb { info } => {
            let ci = l.infos_to_c(&info)?;
            let f = need(s.publish_nb)?;
            // SAFETY: an info array of its length, alive until the callback.
            op_nb(|cb, d| unsafe { f(ci.ptr(), ci.v.len(), cb, d) })
        }
        ApiCall::LookupNb { keys, info } => {
            let mut argv = Argv::new(&keys)?;
            let ci = l.infos_to_c(&info)?;
            let f = need(s.lookup_nb)?;
            let slot = Slot::<ApiOutput>::new();
            let cbdata = give(&slot);
            // SAFETY: a NULL-terminated key array and infos, alive until the callback, which
            // this call waits for.
            let rc = unsafe { f(argv.ptr(), ci.ptr(), ci.v.len(), lookup_done, cbdata) };
            start_and_wait(&slot, cbdata, rc, ApiOutput::status)
        }
        ApiCall::UnpublishNb { keys, info } => {
            let mut argv = Argv::new(&keys)?;
            let ci = l.infos_to_c(&info)?;
            let f = need(s.unpublish_nb)?;
            let kp = if keys.is_empty() {
                std::ptr::null_mut()
            } else {
                argv.ptr()
            };
            // SAFETY: a NULL-terminated key array (or NULL) and infos, alive until the
            // callback.
            op_nb(|cb, d| unsafe { f(kp, ci.ptr(), ci.v.len(), cb, d) })
        }
        ApiCall::Initialized => {
            // SAFETY: no arguments.
            let yes = unsafe { need(s.initialized)?() } != 0;
            ApiOutput::value(Ok(Value::Bool(yes)))
        }
        ApiCall::GetVersion => ApiOutput::value(Ok(Value::String(Some(l.version())))),
        ApiCall::Progress => {
            // SAFETY: no arguments.
            unsafe { need(s.progress)?() };
            ApiOutput::status(Status::SUCCESS)
        }
        ApiCall::Abort {
            status,
            message,
            procs,
        } => {
            let msg = cstring(&message)?;
            let cp = procs_c(&procs);
            // SAFETY: a message string and a proc array of its length (or NULL).
            status_of(unsafe { need(s.abort)?(status.0, msg.as_ptr(), procs_ptr(&cp), cp.len()) })
        }
        ApiCall::RegisterEventHandler {
            handler,
            codes,
            info,
            complete,
            results,
        } => {
            let ci = l.infos_to_c(&info)?;
            let codes: Vec<i32> = codes.iter().map(|c| c.0).collect();
            let cp = if codes.is_empty() {
                std::ptr::null()
            } else {
                codes.as_ptr()
            };
            let slot = Slot::<(Status, usize)>::new();
            let cbdata = give(&slot);
            // SAFETY: codes and infos of their lengths; the handler and the registration
            // callback are functions of this module; cbdata is the slot given above.
            let rc = unsafe {
                need(s.register_event)?(
                    cp,
                    codes.len(),
                    ci.ptr(),
                    ci.v.len(),
                    on_event,
                    Some(registered),
                    cbdata,
                )
            };
            let (st, id) = start_and_wait(&slot, cbdata, rc, |s| (s, 0));
            if st == Status::SUCCESS {
                let mut g = lock(&state().0);
                g.handlers.insert(handler, id);
                g.replies.insert(id, (complete, results));
            }
            ApiOutput::status(st)
        }
        ApiCall::DeregisterEventHandler { handler } => {
            // The name keeps its reference: a second deregistration hands the library a
            // reference it no longer knows, and the events step still reads what it saw.
            let id = *lock(&state().0)
                .handlers
                .get(&handler)
                .ok_or(Status::ERR_BAD_PARAM)?;
            let dereg = need(s.deregister_event)?;
            // SAFETY: a reference the library gave at registration; op_done frees the slot.
            op_nb(|cb, cbdata| unsafe { dereg(id, Some(cb), cbdata) })
        }
        ApiCall::Events {
            handler,
            count,
            wait_ms,
        } => {
            let (m, cv) = state();
            let id = *lock(m)
                .handlers
                .get(&handler)
                .ok_or(Status::ERR_BAD_PARAM)?;
            let (g, _) = cv
                .wait_timeout_while(lock(m), Duration::from_millis(wait_ms), |st| {
                    st.seen.get(&id).map_or(0, Vec::len) < count
                })
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            ApiOutput {
                events: g.seen.get(&id).cloned().unwrap_or_default(),
                ..ApiOutput::status(Status::SUCCESS)
            }
        }
        ApiCall::IofOutput {
            handler,
            bytes,
            wait_ms,
        } => {
            let (m, cv) = state();
            let id = *lock(m).iof.get(&handler).ok_or(Status::ERR_BAD_PARAM)?;
            let (g, _) = cv
                .wait_timeout_while(lock(m), Duration::from_millis(wait_ms), |st| {
                    st.output.get(&id).map_or(0, Vec::len) < bytes
                })
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let got = g.output.get(&id).cloned().unwrap_or_default();
            ApiOutput::value(Ok(Value::ByteObject(pmix::model::ByteObject(got))))
        }
        ApiCall::NotifyEvent {
            status,
            range,
            info,
        } => {
            let ci = l.infos_to_c(&info)?;
            let notify = need(s.notify)?;
            // SAFETY: infos of their length; the source is NULL (the caller); op_done frees
            // the slot.
            op_nb(|cb, cbdata| unsafe {
                notify(
                    status.0,
                    std::ptr::null(),
                    range.0,
                    ci.ptr(),
                    ci.v.len(),
                    Some(cb),
                    cbdata,
                )
            })
        }
        ApiCall::Log {
            data,
            directives,
            nb,
        } => {
            let cd = l.infos_to_c(&data)?;
            let cr = l.infos_to_c(&directives)?;
            if nb {
                let f = need(s.log_nb)?;
                // SAFETY: two info arrays of their lengths.
                op_nb(|cb, d| unsafe { f(cd.ptr(), cd.v.len(), cr.ptr(), cr.v.len(), cb, d) })
            } else {
                // SAFETY: as above.
                status_of(unsafe { need(s.log)?(cd.ptr(), cd.v.len(), cr.ptr(), cr.v.len()) })
            }
        }
        ApiCall::Query { queries, nb } => {
            let mut keys: Vec<Argv> = queries
                .iter()
                .map(|q| {
                    let k: Vec<String> = q.keys.iter().flatten().cloned().collect();
                    Argv::new(&k)
                })
                .collect::<Result<_, _>>()?;
            let quals: Vec<CInfos> = queries
                .iter()
                .map(|q| l.infos_to_c(&q.qualifiers))
                .collect::<Result<_, _>>()?;
            let mut cq: Vec<CQuery> = keys
                .iter_mut()
                .zip(&quals)
                .map(|(k, q)| CQuery {
                    keys: k.ptr(),
                    qualifiers: q.ptr().cast_mut(),
                    nqual: q.v.len(),
                })
                .collect();
            let (qp, n) = (cq.as_mut_ptr(), cq.len());
            if nb {
                let f = need(s.query_nb)?;
                // SAFETY: queries built above, alive until the callback has run.
                info_nb(|cb, d| unsafe { f(qp, n, cb, d) })
            } else {
                let f = need(s.query)?;
                // SAFETY: as above; the results are released by results_of.
                results_of(l, |rp, rn| unsafe { f(qp, n, rp, rn) })
            }
        }
        ApiCall::Spawn { job_info, apps, nb } => {
            let cj = l.infos_to_c(&job_info)?;
            let mut owned = Vec::new();
            for a in &apps {
                let cmd = cstring(a.cmd.as_deref().unwrap_or(""))?;
                let argv = Argv::new(&a.argv.iter().flatten().cloned().collect::<Vec<_>>())?;
                let env = Argv::new(&a.env.iter().flatten().cloned().collect::<Vec<_>>())?;
                let cwd = a.cwd.as_deref().map(cstring).transpose()?;
                let info = l.infos_to_c(&a.info)?;
                owned.push((cmd, argv, env, cwd, info, a.maxprocs));
            }
            let capps: Vec<CApp> = owned
                .iter_mut()
                .map(|(cmd, argv, env, cwd, info, maxprocs)| CApp {
                    cmd: cmd.as_ptr().cast_mut(),
                    argv: argv.ptr(),
                    env: env.ptr(),
                    cwd: cwd
                        .as_ref()
                        .map_or(std::ptr::null_mut(), |c| c.as_ptr().cast_mut()),
                    maxprocs: *maxprocs,
                    info: info.ptr().cast_mut(),
                    ninfo: info.v.len(),
                })
                .collect();
            let (st, ns) = if nb {
                let f = need(s.spawn_nb)?;
                let slot = Slot::<(Status, String)>::new();
                let cbdata = give(&slot);
                // SAFETY: job info and apps built above, alive until the callback has run.
                let rc = unsafe {
                    f(
                        cj.ptr(),
                        cj.v.len(),
                        capps.as_ptr(),
                        capps.len(),
                        spawned,
                        cbdata,
                    )
                };
                start_and_wait(&slot, cbdata, rc, |s| (s, String::new()))
            } else {
                let mut ns = [0 as c_char; 256];
                // SAFETY: as above; `ns` is a pmix_nspace_t the library fills.
                let rc = unsafe {
                    need(s.spawn)?(
                        cj.ptr(),
                        cj.v.len(),
                        capps.as_ptr(),
                        capps.len(),
                        ns.as_mut_ptr(),
                    )
                };
                // SAFETY: NUL-terminated within its 256 bytes (zeroed, at most 255 written).
                let text = unsafe { CStr::from_ptr(ns.as_ptr()) };
                (Status(rc), text.to_string_lossy().into_owned())
            };
            if st == Status::SUCCESS {
                ApiOutput::value(Ok(Value::String(Some(ns))))
            } else {
                ApiOutput::status(st)
            }
        }
        ApiCall::Connect { procs, info, nb } => {
            procs_info(l, s.connect, s.connect_nb, &procs, &info, nb)?
        }
        ApiCall::Disconnect { procs, info, nb } => {
            procs_info(l, s.disconnect, s.disconnect_nb, &procs, &info, nb)?
        }
        ApiCall::ResolvePeers { node, nspace } => {
            let node = cstring(&node)?;
            let ns = cstring(&nspace)?;
            let nsp = if nspace.is_empty() {
                std::ptr::null()
            } else {
                ns.as_ptr()
            };
            let mut p: *mut CProc = std::ptr::null_mut();
            let mut n = 0usize;
            // SAFETY: NUL-terminated node and namespace (or NULL); the library allocates the
            // array it returns, freed below.
            let rc = unsafe { need(s.resolve_peers)?(node.as_ptr(), nsp, &mut p, &mut n) };
            let mut procs = Vec::new();
            if !p.is_null() {
                for i in 0..n {
                    // SAFETY: `p` holds `n` procs.
                    if let Ok(q) = proc_of(unsafe { *p.add(i) }) {
                        procs.push(q);
                    }
                }
                // SAFETY: the array came from the library's malloc (PMIX_PROC_FREE).
                unsafe { free(p.cast()) };
            }
            check(rc)?;
            ApiOutput::value(Ok(sorted_procs(procs)))
        }
        ApiCall::ResolveNodes { nspace } => {
            let ns = cstring(&nspace)?;
            let mut list: *mut c_char = std::ptr::null_mut();
            // SAFETY: a NUL-terminated namespace; the library mallocs the list, freed below.
            let rc = unsafe { need(s.resolve_nodes)?(ns.as_ptr(), &mut list) };
            let text = if list.is_null() {
                String::new()
            } else {
                // SAFETY: a NUL-terminated string from the library's malloc.
                let t = unsafe { CStr::from_ptr(list) }
                    .to_string_lossy()
                    .into_owned();
                // SAFETY: as above.
                unsafe { free(list.cast()) };
                t
            };
            check(rc)?;
            ApiOutput::value(Ok(sorted_nodes(&text)))
        }
        ApiCall::AllocationRequest {
            directive,
            info,
            nb,
        } => {
            let ci = l.infos_to_c(&info)?;
            if nb {
                let f = need(s.alloc_nb)?;
                // SAFETY: infos of their length, alive until the callback has run.
                info_nb(|cb, d| unsafe { f(directive.0, ci.ptr(), ci.v.len(), cb, d) })
            } else {
                let f = need(s.alloc)?;
                // SAFETY: as above; results released by results_of.
                results_of(l, |p, n| unsafe {
                    f(directive.0, ci.ptr(), ci.v.len(), p, n)
                })
            }
        }
        ApiCall::JobControl {
            targets,
            directives,
            nb,
        } => {
            let cp = procs_c(&targets);
            let ci = l.infos_to_c(&directives)?;
            let (pp, np) = (procs_ptr(&cp), cp.len());
            if nb {
                let f = need(s.job_control_nb)?;
                // SAFETY: procs and infos of their lengths, alive until the callback has run.
                info_nb(|cb, d| unsafe { f(pp, np, ci.ptr(), ci.v.len(), cb, d) })
            } else {
                let f = need(s.job_control)?;
                // SAFETY: as above; results released by results_of.
                results_of(l, |p, n| unsafe { f(pp, np, ci.ptr(), ci.v.len(), p, n) })
            }
        }
        ApiCall::ProcessMonitor {
            monitor,
            error,
            directives,
            nb,
        } => {
            let cm = l.infos_to_c(std::slice::from_ref(&monitor))?;
            let ci = l.infos_to_c(&directives)?;
            if nb {
                let f = need(s.monitor_nb)?;
                // SAFETY: one monitor info and directives, alive until the callback has run.
                info_nb(|cb, d| unsafe { f(cm.ptr(), error.0, ci.ptr(), ci.v.len(), cb, d) })
            } else {
                let f = need(s.monitor)?;
                // SAFETY: as above; results released by results_of.
                results_of(l, |p, n| unsafe {
                    f(cm.ptr(), error.0, ci.ptr(), ci.v.len(), p, n)
                })
            }
        }
        ApiCall::GetCredential { info, nb } => {
            let ci = l.infos_to_c(&info)?;
            let (st, bytes) = if nb {
                let f = need(s.get_cred_nb)?;
                let slot = Slot::<(Status, Vec<u8>)>::new();
                let cbdata = give(&slot);
                // SAFETY: infos of their length; credential_done frees the slot.
                let rc = unsafe { f(ci.ptr(), ci.v.len(), credential_done, cbdata) };
                start_and_wait(&slot, cbdata, rc, |s| (s, Vec::new()))
            } else {
                let mut bo = CByteObject {
                    bytes: std::ptr::null_mut(),
                    size: 0,
                };
                // SAFETY: infos of their length; the library fills the byte object with
                // malloc'd bytes, freed below.
                let rc = unsafe { need(s.get_cred)?(ci.ptr(), ci.v.len(), &mut bo) };
                // SAFETY: the byte object as the library filled it.
                let bytes = unsafe { bytes_of(&bo) };
                // SAFETY: malloc'd by the library (or NULL).
                unsafe { free(bo.bytes.cast()) };
                (Status(rc), bytes)
            };
            if st != Status::SUCCESS {
                return Ok(ApiOutput::status(st));
            }
            lock(&state().0).credential = Some(bytes.clone());
            ApiOutput::value(Ok(Value::ByteObject(bytes.into())))
        }
        ApiCall::ValidateCredential {
            credential,
            altered,
            info,
            nb,
        } => {
            let mut bytes = match credential {
                Some(b) => b,
                None => lock(&state().0)
                    .credential
                    .clone()
                    .ok_or(Status::ERR_BAD_PARAM)?,
            };
            if altered {
                crate::api::alter(&mut bytes);
            }
            let bo = CByteObject {
                bytes: bytes.as_mut_ptr().cast(),
                size: bytes.len(),
            };
            let ci = l.infos_to_c(&info)?;
            if nb {
                let f = need(s.validate_nb)?;
                let slot = Slot::<ApiOutput>::new();
                let cbdata = give(&slot);
                // SAFETY: a byte object over `bytes` and infos, alive until the callback
                // has run; validated frees the slot.
                let rc = unsafe { f(&bo, ci.ptr(), ci.v.len(), validated, cbdata) };
                start_and_wait(&slot, cbdata, rc, ApiOutput::status)
            } else {
                let f = need(s.validate)?;
                // SAFETY: as above; results released by results_of.
                results_of(l, |p, n| unsafe { f(&bo, ci.ptr(), ci.v.len(), p, n) })
            }
        }
        ApiCall::GroupConstruct {
            group,
            procs,
            info,
            nb,
        } => group_procs(
            l,
            s.group_construct,
            s.group_construct_nb,
            &group,
            &procs,
            &info,
            nb,
        )?,
        ApiCall::GroupInvite {
            group,
            procs,
            info,
            nb,
        } => group_procs(
            l,
            s.group_invite,
            s.group_invite_nb,
            &group,
            &procs,
            &info,
            nb,
        )?,
        ApiCall::GroupJoin {
            group,
            leader,
            accept,
            info,
            nb,
        } => {
            let (g, ci) = (cstring(&group)?, l.infos_to_c(&info)?);
            let leader = c_proc(&leader);
            // pmix_group_opt_t: PMIX_GROUP_DECLINE = 0, PMIX_GROUP_ACCEPT = 1.
            let opt = i32::from(accept);
            if nb {
                let f = need(s.group_join_nb)?;
                // SAFETY: a group name, the leader and infos, alive until the callback has run.
                info_nb(|cb, d| unsafe { f(g.as_ptr(), &leader, opt, ci.ptr(), ci.v.len(), cb, d) })
            } else {
                let f = need(s.group_join)?;
                // SAFETY: as above; results released by results_of.
                results_of(l, |p, n| unsafe {
                    f(g.as_ptr(), &leader, opt, ci.ptr(), ci.v.len(), p, n)
                })
            }
        }
        ApiCall::GroupLeave { group, info, nb } => {
            group_op(l, s.group_leave, s.group_leave_nb, &group, &info, nb)?
        }
        ApiCall::GroupDestruct { group, info, nb } => {
            group_op(l, s.group_destruct, s.group_destruct_nb, &group, &info, nb)?
        }
        ApiCall::IofPull {
            handler,
            procs,
            channels,
            info,
        } => {
            let (cp, ci) = (procs_c(&procs), l.infos_to_c(&info)?);
            let slot = Slot::<(Status, usize)>::new();
            let cbdata = give(&slot);
            // SAFETY: procs and infos of their lengths; on_iof and registered are functions of
            // this module; registered frees the slot.
            let rc = unsafe {
                need(s.iof_pull)?(
                    procs_ptr(&cp),
                    cp.len(),
                    ci.ptr(),
                    ci.v.len(),
                    channels.0,
                    on_iof,
                    Some(registered),
                    cbdata,
                )
            };
            let (st, id) = start_and_wait(&slot, cbdata, rc, |s| (s, 0));
            if st == Status::SUCCESS {
                lock(&state().0).iof.insert(handler, id);
            }
            ApiOutput::status(st)
        }
        // The name keeps its id: a second deregistration asks the library about an id it no
        // longer holds, and the output step still reads what the pull was handed.
        ApiCall::IofDeregister { handler } => {
            let id = *lock(&state().0)
                .iof
                .get(&handler)
                .ok_or(Status::ERR_BAD_PARAM)?;
            let f = need(s.iof_deregister)?;
            // SAFETY: a reference the library gave at registration; no directives.
            op_nb(|cb, d| unsafe { f(id, std::ptr::null(), 0, Some(cb), d) })
        }
        ApiCall::IofPush {
            targets,
            data,
            info,
        } => {
            let (cp, ci) = (procs_c(&targets), l.infos_to_c(&info)?);
            let mut bytes = data.unwrap_or_default();
            let mut bo = CByteObject {
                bytes: bytes.as_mut_ptr().cast(),
                size: bytes.len(),
            };
            let bop: *mut CByteObject = if bytes.is_empty() {
                std::ptr::null_mut()
            } else {
                &raw mut bo
            };
            let f = need(s.iof_push)?;
            // SAFETY: targets, the payload (or NULL: close stdin) and infos, alive until the
            // callback has run.
            op_nb(|cb, d| unsafe {
                f(
                    procs_ptr(&cp),
                    cp.len(),
                    bop,
                    ci.ptr(),
                    ci.v.len(),
                    Some(cb),
                    d,
                )
            })
        }
        ApiCall::FabricRegister { info, nb } => {
            let ci = l.infos_to_c(&info)?;
            let mut guard = lock(&FABRIC);
            let fabric = guard.insert(Box::new(SendFabric(CFabric {
                name: std::ptr::null_mut(),
                index: 0,
                info: std::ptr::null_mut(),
                ninfo: 0,
                module: std::ptr::null_mut(),
            })));
            let fp: *mut CFabric = &raw mut fabric.0;
            let mut out = if nb {
                let f = need(s.fabric_register_nb)?;
                // SAFETY: a zeroed pmix_fabric_t that stays in FABRIC until deregistered.
                op_nb(|cb, d| unsafe { f(fp, ci.ptr(), ci.v.len(), cb, d) })
            } else {
                // SAFETY: as above.
                status_of(unsafe { need(s.fabric_register)?(fp, ci.ptr(), ci.v.len()) })
            };
            if out.status == Status::SUCCESS {
                // The fabric's information, as the library filled it in.
                out.results = l.infos_from_c(fabric.0.info, fabric.0.ninfo)?;
            }
            out
        }
        ApiCall::FabricUpdate { nb } => {
            let mut guard = lock(&FABRIC);
            let fabric = guard.as_mut().ok_or(Status::ERR_BAD_PARAM)?;
            let fp: *mut CFabric = &raw mut fabric.0;
            let mut out = if nb {
                let f = need(s.fabric_update_nb)?;
                // SAFETY: the fabric the library registered.
                op_nb(|cb, d| unsafe { f(fp, cb, d) })
            } else {
                // SAFETY: as above.
                status_of(unsafe { need(s.fabric_update)?(fp) })
            };
            if out.status == Status::SUCCESS {
                out.results = l.infos_from_c(fabric.0.info, fabric.0.ninfo)?;
            }
            out
        }
        ApiCall::FabricDeregister { nb } => {
            let mut guard = lock(&FABRIC);
            let fabric = guard.as_mut().ok_or(Status::ERR_BAD_PARAM)?;
            let fp: *mut CFabric = &raw mut fabric.0;
            let out = if nb {
                let f = need(s.fabric_deregister_nb)?;
                // SAFETY: the fabric the library registered.
                op_nb(|cb, d| unsafe { f(fp, cb, d) })
            } else {
                // SAFETY: as above.
                status_of(unsafe { need(s.fabric_deregister)?(fp) })
            };
            if out.status == Status::SUCCESS {
                // What the library hung on the struct is its own; forget the struct.
                if let Some(f) = guard.take() {
                    std::mem::forget(f);
                }
            }
            out
        }
        ApiCall::GetCpuset { thread } => {
            let mut cs = CSourced {
                source: std::ptr::null_mut(),
                object: std::ptr::null_mut(),
            };
            // SAFETY: a zeroed pmix_cpuset_t the library fills; PMIX_CPUBIND_PROCESS = 0,
            // PMIX_CPUBIND_THREAD = 1.
            check(unsafe { need(s.get_cpuset)?(&mut cs, u8::from(thread)) })?;
            let value = l
                .packed((&raw const cs).cast(), 1, DataType::PROC_CPUSET)
                .and_then(|b| l.decode::<Cpuset>(b, 1))
                .and_then(|mut v| v.pop().ok_or(Status::ERR_UNPACK_FAILURE));
            ApiOutput::value(value.map(|c| Value::ProcCpuset(Box::new(c))))
        }
        ApiCall::GetRelativeLocality {
            locality1,
            locality2,
        } => {
            let (a, b) = (cstring(&locality1)?, cstring(&locality2)?);
            let mut loc = 0u16;
            // SAFETY: two NUL-terminated strings and a pmix_locality_t to fill.
            check(unsafe { need(s.relative_locality)?(a.as_ptr(), b.as_ptr(), &mut loc) })?;
            ApiOutput::value(Ok(Value::LocType(Locality(loc))))
        }
        ApiCall::Support(call) => support::run(l, s, call)?,
        ApiCall::ComputeDistances { from, info, nb } => {
            let ci = l.infos_to_c(&info)?;
            let mut topo = CSourced {
                source: std::ptr::null_mut(),
                object: std::ptr::null_mut(),
            };
            let mut cs = CSourced {
                source: std::ptr::null_mut(),
                object: std::ptr::null_mut(),
            };
            // SAFETY: zeroed pmix_topology_t / pmix_cpuset_t the library fills (kept for the
            // process's life: the library may cache the topology).
            unsafe { check(need(s.load_topology)?(&mut topo))? };
            match from {
                Some(c) => {
                    let bytes = l.encode(&[c])?;
                    let rc = l.unpack_into(&bytes, (&raw mut cs).cast(), 1, DataType::PROC_CPUSET);
                    check(rc.0)?;
                }
                // SAFETY: as above.
                None => unsafe { check(need(s.get_cpuset)?(&mut cs, 0))? },
            }
            let (st, n) = if nb {
                let f = need(s.distances_nb)?;
                let slot = Slot::<(Status, usize)>::new();
                let cbdata = give(&slot);
                // SAFETY: the topology, cpuset and infos above; distances_done frees the slot.
                let rc = unsafe {
                    f(
                        &mut topo,
                        &mut cs,
                        ci.ptr(),
                        ci.v.len(),
                        distances_done,
                        cbdata,
                    )
                };
                start_and_wait(&slot, cbdata, rc, |s| (s, 0))
            } else {
                let mut d: *mut CDeviceDistance = std::ptr::null_mut();
                let mut n = 0usize;
                // SAFETY: as above; the array the library returns is freed below.
                let rc = unsafe {
                    need(s.distances)?(&mut topo, &mut cs, ci.ptr(), ci.v.len(), &mut d, &mut n)
                };
                if !d.is_null() {
                    for i in 0..n {
                        // SAFETY: `d` holds `n` distances whose strings are malloc'd.
                        unsafe {
                            free((*d.add(i)).uuid.cast());
                            free((*d.add(i)).osname.cast());
                        }
                    }
                    // SAFETY: the array itself, malloc'd by the library.
                    unsafe { free(d.cast()) };
                }
                (Status(rc), n)
            };
            check(st.0)?;
            ApiOutput::value(Ok(Value::Size(n as u64)))
        }
    })
}

/// Group construct and invite: `(group, procs, info)`, with results or an info callback.
fn group_procs(
    l: &'static Lib,
    blocking: Option<GroupProcsFn>,
    non_blocking: Option<GroupProcsNbFn>,
    group: &str,
    procs: &[Proc],
    info: &[Info],
    nb: bool,
) -> Result<ApiOutput, Status> {
    let (g, cp, ci) = (cstring(group)?, procs_c(procs), l.infos_to_c(info)?);
    let (pp, np) = (procs_ptr(&cp), cp.len());
    Ok(if nb {
        let f = need(non_blocking)?;
        // SAFETY: a group name, procs and infos, alive until the callback has run.
        info_nb(|cb, d| unsafe { f(g.as_ptr(), pp, np, ci.ptr(), ci.v.len(), cb, d) })
    } else {
        let f = need(blocking)?;
        // SAFETY: as above; results released by results_of.
        results_of(l, |p, n| unsafe {
            f(g.as_ptr(), pp, np, ci.ptr(), ci.v.len(), p, n)
        })
    })
}

/// Group leave and destruct: `(group, info)`, blocking or with an op callback.
fn group_op(
    l: &'static Lib,
    blocking: Option<unsafe extern "C" fn(*const c_char, *const CInfo, usize) -> i32>,
    non_blocking: Option<
        unsafe extern "C" fn(*const c_char, *const CInfo, usize, OpCb, *mut c_void) -> i32,
    >,
    group: &str,
    info: &[Info],
    nb: bool,
) -> Result<ApiOutput, Status> {
    let (g, ci) = (cstring(group)?, l.infos_to_c(info)?);
    Ok(if nb {
        let f = need(non_blocking)?;
        // SAFETY: a group name and infos, alive until the callback has run.
        op_nb(|cb, d| unsafe { f(g.as_ptr(), ci.ptr(), ci.v.len(), cb, d) })
    } else {
        // SAFETY: as above.
        status_of(unsafe { need(blocking)?(g.as_ptr(), ci.ptr(), ci.v.len()) })
    })
}

/// Connect and disconnect: `(procs, info)`, blocking or with an op callback.
fn procs_info(
    l: &'static Lib,
    blocking: Option<ProcsInfoFn>,
    non_blocking: Option<ProcsInfoNbFn>,
    procs: &[Proc],
    info: &[Info],
    nb: bool,
) -> Result<ApiOutput, Status> {
    let cp = procs_c(procs);
    let ci = l.infos_to_c(info)?;
    let (pp, np) = (procs_ptr(&cp), cp.len());
    Ok(if nb {
        let f = need(non_blocking)?;
        // SAFETY: procs and infos of their lengths, alive until the callback has run.
        op_nb(|cb, d| unsafe { f(pp, np, ci.ptr(), ci.v.len(), cb, d) })
    } else {
        // SAFETY: as above.
        status_of(unsafe { need(blocking)?(pp, np, ci.ptr(), ci.v.len()) })
    })
}
