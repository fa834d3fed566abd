//! Process groups: constructing, inviting to, joining, leaving and destructing a group
//! (`PMIx_Group_*`), each with its `_nb` form.

use std::ffi::{c_int, c_void};

use pmix::client::blocking::Client;
use pmix::client::{GroupAnswer, GroupConstructed};
use pmix::model::Status;

use super::{Outcome, blocking_infos, nb_infos, nb_op, status_of};
use crate::args::{Array, In, Out, Str};
use crate::boundary::guard;
use crate::state::client::client;
use crate::types::{CInfo, CProc, CStatus, InfoCb, OpCb};

/// A group call's outcome: a partial success is the call's answer, with its results.
fn group_outcome(r: Result<GroupConstructed, pmix::Error>) -> Outcome {
    let done = r.map_err(status_of)?;
    Ok((done.status, done.results))
}

macro_rules! group_of_procs {
    ($blocking:ident, $nb:ident, $method:ident) => {
        #[doc = concat!("`", stringify!($blocking), "`: its results, with the group's members and")]
        /// any context id, through `results`.
        #[unsafe(no_mangle)]
        pub extern "C" fn $blocking(
            grp: Str<'_>,
            procs: Array<'_, CProc>,
            nprocs: usize,
            info: Array<'_, CInfo>,
            ninfo: usize,
            results: Out<'_, *mut CInfo>,
            nresults: Out<'_, usize>,
        ) -> CStatus {
            guard(stringify!($blocking), || {
                let (grp, procs, info) =
                    (grp.required()?, procs.procs(nprocs)?, info.infos(ninfo)?);
                let body = |c: &Client| group_outcome(c.$method(&grp, &procs, &info));
                blocking_infos(body, results, nresults)
            })
        }

        #[doc = concat!("`", stringify!($nb), "`: as the blocking form, its outcome to `cbfunc`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $nb(
            grp: Str<'_>,
            procs: Array<'_, CProc>,
            nprocs: usize,
            info: Array<'_, CInfo>,
            ninfo: usize,
            cbfunc: Option<InfoCb>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                let (grp, procs, info) =
                    (grp.required()?, procs.procs(nprocs)?, info.infos(ninfo)?);
                let body = move |c: &Client| group_outcome(c.$method(&grp, &procs, &info));
                nb_infos(body, cbfunc, cbdata)
            })
        }
    };
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

/// `PMIx_Group_join`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Group_join(
    grp: Str<'_>,
    leader: In<'_, CProc>,
    opt: c_int,
    info: Array<'_, CInfo>,
    ninfo: usize,
    results: Out<'_, *mut CInfo>,
    nresult: Out<'_, usize>,
) -> CStatus {
    guard("PMIx_Group_join", || {
        let answer = join_answer(opt)?;
        let (grp, leader, info) = (grp.required()?, leader.proc()?, info.infos(ninfo)?);
        let body = |c: &Client| group_outcome(c.group_join(&grp, &leader, answer, &info));
        blocking_infos(body, results, nresult)
    })
}

/// `PMIx_Group_join_nb`: as `PMIx_Group_join`, its outcome to `cbfunc`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Group_join_nb(
    grp: Str<'_>,
    leader: In<'_, CProc>,
    opt: c_int,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Group_join_nb", || {
        let answer = join_answer(opt)?;
        let (grp, leader, info) = (grp.required()?, leader.proc()?, info.infos(ninfo)?);
        let body = move |c: &Client| group_outcome(c.group_join(&grp, &leader, answer, &info));
        nb_infos(body, cbfunc, cbdata)
    })
}

macro_rules! group_end {
    ($blocking:ident, $nb:ident, $method:ident) => {
        #[doc = concat!("`", stringify!($blocking), "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $blocking(grp: Str<'_>, info: Array<'_, CInfo>, ninfo: usize) -> CStatus {
            guard(stringify!($blocking), || {
                let (grp, info) = (grp.required()?, info.infos(ninfo)?);
                client()?.$method(&grp, &info).map_err(status_of)
            })
        }

        #[doc = concat!("`", stringify!($nb), "`: as the blocking form, its outcome to `cbfunc`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $nb(
            grp: Str<'_>,
            info: Array<'_, CInfo>,
            ninfo: usize,
            cbfunc: Option<OpCb>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                let (grp, info) = (grp.required()?, info.infos(ninfo)?);
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
