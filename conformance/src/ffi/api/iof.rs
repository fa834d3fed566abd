//! I/O forwarding (v5.0 §18.5): `PMIx_IOF_pull`, `PMIx_IOF_deregister`, `PMIx_IOF_push`,
//! and the output a pull has been handed.

use std::time::Duration;

use super::*;

/// Run `call`, a call of this chapter, through the library; any other is not one it
/// carries ([`NO_SUCH_CALL`]).
pub(super) fn run(l: &'static Lib, s: &Syms, call: ApiCall) -> Result<ApiOutput, Status> {
    Ok(match call {
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
        _ => return Err(NO_SUCH_CALL),
    })
}
