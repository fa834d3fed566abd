//! Job management and reporting (v5.0 chapter 13): `PMIx_Allocation_request`,
//! `PMIx_Job_control`, `PMIx_Process_monitor` and `PMIx_Log`.

use super::*;

/// Run `call`, a call of this chapter, through the library; any other is not one it
/// carries ([`NO_SUCH_CALL`]).
pub(super) fn run(l: &'static Lib, s: &Syms, call: ApiCall) -> Result<ApiOutput, Status> {
    Ok(match call {
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
        _ => return Err(NO_SUCH_CALL),
    })
}
