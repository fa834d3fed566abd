//! Event notification (v5.0 chapter 10): registering and deregistering a handler, the events
//! it saw, and `PMIx_Notify_event`.

use std::time::Duration;

use super::*;

/// Run `call`, a call of this chapter, through the library; any other is not one it
/// carries ([`NO_SUCH_CALL`]).
pub(super) fn run(l: &'static Lib, s: &Syms, call: ApiCall) -> Result<ApiOutput, Status> {
    Ok(match call {
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
        ApiCall::NotifyEvent {
            status,
            range,
            info,
        } => notify(l, status, None, range, &info)?,
        _ => return Err(NO_SUCH_CALL),
    })
}

/// `PMIx_Notify_event` of `status` from `source` (with none, the calling process, or the
/// server's own in a server), waited for until its callback.
pub(super) fn notify(
    l: &'static Lib,
    status: Status,
    source: Option<&Proc>,
    range: pmix::model::DataRange,
    info: &[Info],
) -> Result<ApiOutput, Status> {
    let ci = l.infos_to_c(info)?;
    let notify = need(syms(l).notify)?;
    let src = source.map(c_proc);
    let src_ptr = src.as_ref().map_or(std::ptr::null(), |p| &raw const *p);
    // SAFETY: the source (or NULL) and the infos of their length outlive the call, which
    // op_nb waits for; op_done frees the slot.
    Ok(op_nb(|cb, cbdata| unsafe {
        notify(
            status.0,
            src_ptr,
            range.0,
            ci.ptr(),
            ci.v.len(),
            Some(cb),
            cbdata,
        )
    }))
}
