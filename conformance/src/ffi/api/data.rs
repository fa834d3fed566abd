//! Synchronization and publish/lookup (v5.0 chapters 8 and 9): the non-blocking forms
//! `PMIx_Fence_nb`, `PMIx_Publish_nb`, `PMIx_Lookup_nb` and `PMIx_Unpublish_nb` (the blocking
//! data-access calls have their own path).

use super::*;

/// Run `call`, a call of this chapter, through the library; any other is not one it
/// carries ([`NO_SUCH_CALL`]).
pub(super) fn run(l: &'static Lib, s: &Syms, call: ApiCall) -> Result<ApiOutput, Status> {
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
        _ => return Err(NO_SUCH_CALL),
    })
}
