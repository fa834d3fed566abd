//! Process groups: constructing, inviting to, joining, leaving and destructing a group
//! (`PMIx_Group_*`), each with its `_nb` form.

use std::ffi::{c_char, c_int, c_void};

use pmix::client::blocking::Client;
use pmix::client::{GroupAnswer, GroupConstructed};
use pmix::model::{Info, Proc, Status};

use super::{Outcome, blocking_infos, nb_infos, nb_op, status_of};
use crate::boundary::{guard, read_cstr};
use crate::state::client::client;
use crate::types::{CInfo, CProc, CStatus, InfoCb, OpCb};
use crate::values::{read_infos, read_proc, read_procs};

/// A group call's outcome: a partial success is the call's answer, with its results.
fn group_outcome(r: Result<GroupConstructed, pmix::Error>) -> Outcome {
    let done = r.map_err(status_of)?;
    Ok((done.status, done.results))
}

/// # Safety
/// `grp` is NULL or a string.
unsafe fn group_name(grp: *const c_char) -> Result<String, Status> {
    // SAFETY: the caller's promise.
    unsafe { read_cstr(grp) }.ok_or(Status::ERR_BAD_PARAM)
}

macro_rules! group_of_procs {
    ($blocking:ident, $nb:ident, $method:ident) => {
        #[doc = concat!("`", stringify!($blocking), "`: its results, with the group's members and")]
        /// any context id, through `results`.
        ///
        /// # Safety
        /// `grp` is a string; `procs` holds `nprocs` procs and `info` `ninfo` infos;
        /// `results` and `nresults` are NULL or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $blocking(
            grp: *const c_char,
            procs: *const CProc,
            nprocs: usize,
            info: *const CInfo,
            ninfo: usize,
            results: *mut *mut CInfo,
            nresults: *mut usize,
        ) -> CStatus {
            guard(stringify!($blocking), || {
                // SAFETY: the caller's promise.
                unsafe {
                    let (grp, procs, info) = group_args(grp, procs, nprocs, info, ninfo)?;
                    let body = |c: &Client| group_outcome(c.$method(&grp, &procs, &info));
                    blocking_infos(body, results, nresults)
                }
            })
        }

        #[doc = concat!("`", stringify!($nb), "`.")]
        ///
        /// # Safety
        /// As the blocking form; `cbfunc` is NULL or callable with `cbdata`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $nb(
            grp: *const c_char,
            procs: *const CProc,
            nprocs: usize,
            info: *const CInfo,
            ninfo: usize,
            cbfunc: Option<InfoCb>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                // SAFETY: the caller's promise.
                let (grp, procs, info) = unsafe { group_args(grp, procs, nprocs, info, ninfo)? };
                let body = move |c: &Client| group_outcome(c.$method(&grp, &procs, &info));
                nb_infos(body, cbfunc, cbdata)
            })
        }
    };
}

/// The arguments of a group call naming its processes.
///
/// # Safety
/// `grp` is NULL or a string; `procs` holds `nprocs` procs and `info` `ninfo` infos.
unsafe fn group_args(
    grp: *const c_char,
    procs: *const CProc,
    nprocs: usize,
    info: *const CInfo,
    ninfo: usize,
) -> Result<(String, Vec<Proc>, Vec<Info>), Status> {
    // SAFETY: the caller's promise.
    unsafe {
        Ok((
            group_name(grp)?,
            read_procs(procs, nprocs)?,
            read_infos(info, ninfo)?,
        ))
    }
}

group_of_procs!(
    PMIx_Group_construct,
    PMIx_Group_construct_nb,
    group_construct
);
group_of_procs!(PMIx_Group_invite, PMIx_Group_invite_nb, group_invite);

/// The answer of `PMIx_Group_join`: `PMIX_GROUP_ACCEPT` (1) or `PMIX_GROUP_DECLINE` (0).
fn join_answer(opt: c_int) -> Result<GroupAnswer, Status> {
    match opt {
        0 => Ok(GroupAnswer::Decline),
        1 => Ok(GroupAnswer::Accept),
        _ => Err(Status::ERR_BAD_PARAM),
    }
}

/// # Safety
/// `leader` is NULL or a proc.
unsafe fn leader_of(leader: *const CProc) -> Result<Proc, Status> {
    if leader.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: the caller's promise.
    read_proc(unsafe { &*leader })
}

/// `PMIx_Group_join`.
///
/// # Safety
/// `grp` is a string; `leader` a proc; `info` holds `ninfo` infos; `results` and `nresult`
/// are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Group_join(
    grp: *const c_char,
    leader: *const CProc,
    opt: c_int,
    info: *const CInfo,
    ninfo: usize,
    results: *mut *mut CInfo,
    nresult: *mut usize,
) -> CStatus {
    guard("PMIx_Group_join", || {
        let answer = join_answer(opt)?;
        // SAFETY: the caller's promise.
        unsafe {
            let (grp, leader, info) = (
                group_name(grp)?,
                leader_of(leader)?,
                read_infos(info, ninfo)?,
            );
            let body = |c: &Client| group_outcome(c.group_join(&grp, &leader, answer, &info));
            blocking_infos(body, results, nresult)
        }
    })
}

/// `PMIx_Group_join_nb`.
///
/// # Safety
/// As `PMIx_Group_join`; `cbfunc` is NULL or callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Group_join_nb(
    grp: *const c_char,
    leader: *const CProc,
    opt: c_int,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Group_join_nb", || {
        let answer = join_answer(opt)?;
        // SAFETY: the caller's promise.
        let (grp, leader, info) = unsafe {
            (
                group_name(grp)?,
                leader_of(leader)?,
                read_infos(info, ninfo)?,
            )
        };
        let body = move |c: &Client| group_outcome(c.group_join(&grp, &leader, answer, &info));
        nb_infos(body, cbfunc, cbdata)
    })
}

macro_rules! group_end {
    ($blocking:ident, $nb:ident, $method:ident) => {
        #[doc = concat!("`", stringify!($blocking), "`.")]
        ///
        /// # Safety
        /// `grp` is a string; `info` holds `ninfo` infos.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $blocking(
            grp: *const c_char,
            info: *const CInfo,
            ninfo: usize,
        ) -> CStatus {
            guard(stringify!($blocking), || {
                // SAFETY: the caller's promise.
                let (grp, info) = unsafe { (group_name(grp)?, read_infos(info, ninfo)?) };
                client()?.$method(&grp, &info).map_err(status_of)
            })
        }

        #[doc = concat!("`", stringify!($nb), "`.")]
        ///
        /// # Safety
        /// As the blocking form; `cbfunc` is NULL or callable with `cbdata`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $nb(
            grp: *const c_char,
            info: *const CInfo,
            ninfo: usize,
            cbfunc: Option<OpCb>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                // SAFETY: the caller's promise.
                let (grp, info) = unsafe { (group_name(grp)?, read_infos(info, ninfo)?) };
                nb_op(
                    move |c| c.$method(&grp, &info).map_err(status_of),
                    cbfunc,
                    cbdata,
                )
            })
        }
    };
}

group_end!(PMIx_Group_leave, PMIx_Group_leave_nb, group_leave);
group_end!(PMIx_Group_destruct, PMIx_Group_destruct_nb, group_destruct);
