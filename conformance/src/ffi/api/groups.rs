//! Process groups (v5.0 chapter 14): `PMIx_Group_construct`, `_invite`, `_join`, `_leave`
//! and `_destruct`.

use super::*;

/// Run `call`, a call of this chapter, through the library; any other is not one it
/// carries ([`NO_SUCH_CALL`]).
pub(super) fn run(l: &'static Lib, s: &Syms, call: ApiCall) -> Result<ApiOutput, Status> {
    Ok(match call {
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
        _ => return Err(NO_SUCH_CALL),
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
