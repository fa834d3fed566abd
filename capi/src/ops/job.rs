//! Job management: allocation requests (`PMIx_Allocation_request`), job control
//! (`PMIx_Job_control`) and process monitoring (`PMIx_Process_monitor`), each with its `_nb` form.

use std::ffi::c_void;

use pmix::client::blocking::Client;
use pmix::model::{AllocDirective, Info, Proc, Status};

use super::{Outcome, blocking_infos, nb_infos, status_of};
use crate::boundary::guard;
use crate::types::{CInfo, CProc, CStatus, InfoCb};
use crate::values::{read_infos, read_procs};

/// A call with results in its two forms: the blocking one hands them out through `results`
/// and `nresults`, the `_nb` one lends them to `cbfunc`. Both read their C arguments with
/// `$read` (under the caller's promise) into `$args`, and make the call `$body` with them.
macro_rules! infos_call {
    (
        $(#[doc = $doc:literal])*
        $blocking:ident, $nb:ident ($($arg:ident: $ty:ty),* $(,)?);
        let $args:pat = $read:expr;
        |$c:ident| $body:expr $(,)?
    ) => {
        $(#[doc = $doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $blocking(
            $($arg: $ty,)*
            results: *mut *mut CInfo,
            nresults: *mut usize,
        ) -> CStatus {
            guard(stringify!($blocking), || {
                // SAFETY: the caller's promise.
                let $args = unsafe { $read };
                let body = |$c: &Client| $body;
                // SAFETY: the caller's promise.
                unsafe { blocking_infos(body, results, nresults) }
            })
        }

        #[doc = concat!("`", stringify!($nb), "`.")]
        ///
        /// # Safety
        #[doc = concat!(
            "As `", stringify!($blocking), "`; `cbfunc` is NULL or callable with `cbdata`."
        )]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $nb(
            $($arg: $ty,)*
            cbfunc: Option<InfoCb>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                // SAFETY: the caller's promise.
                let $args = unsafe { $read };
                nb_infos(move |$c: &Client| $body, cbfunc, cbdata)
            })
        }
    };
}

fn allocate(c: &Client, directive: u8, info: &[Info]) -> Outcome {
    let got = (c.allocation_request(AllocDirective(directive), info)).map_err(status_of)?;
    Ok((Status::SUCCESS, got))
}

infos_call! {
    /// `PMIx_Allocation_request`.
    ///
    /// # Safety
    /// `info` holds `ninfo` infos; `results` and `nresults` are NULL or writable.
    PMIx_Allocation_request, PMIx_Allocation_request_nb(
        directive: u8,
        info: *mut CInfo,
        ninfo: usize,
    );
    let info = read_infos(info, ninfo)?;
    |c| allocate(c, directive, &info)
}

fn job_control(c: &Client, targets: &[Proc], directives: &[Info]) -> Outcome {
    let got = c.job_control(targets, directives).map_err(status_of)?;
    Ok((Status::SUCCESS, got))
}

infos_call! {
    /// `PMIx_Job_control`.
    ///
    /// # Safety
    /// `targets` holds `ntargets` procs, `directives` `ndirs` infos; `results` and `nresults`
    /// are NULL or writable.
    PMIx_Job_control, PMIx_Job_control_nb(
        targets: *const CProc,
        ntargets: usize,
        directives: *const CInfo,
        ndirs: usize,
    );
    let (targets, directives) = (read_procs(targets, ntargets)?, read_infos(directives, ndirs)?);
    |c| job_control(c, &targets, &directives)
}

fn monitor(c: &Client, monitor: &[Info], error: CStatus, directives: &[Info]) -> Outcome {
    let monitor = monitor.first().ok_or(Status::ERR_BAD_PARAM)?;
    let got = (c.process_monitor(monitor, Status(error), directives)).map_err(status_of)?;
    Ok((Status::SUCCESS, got))
}

/// The arguments of a monitoring request.
///
/// # Safety
/// `monitor` is NULL or an info; `directives` holds `ndirs` infos.
unsafe fn monitor_args(
    monitor: *const CInfo,
    directives: *const CInfo,
    ndirs: usize,
) -> Result<(Vec<Info>, Vec<Info>), Status> {
    if monitor.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: the caller's promise.
    unsafe { Ok((read_infos(monitor, 1)?, read_infos(directives, ndirs)?)) }
}

infos_call! {
    /// `PMIx_Process_monitor`.
    ///
    /// # Safety
    /// `monitor` is an info; `directives` holds `ndirs` infos; `results` and `nresults` are
    /// NULL or writable.
    PMIx_Process_monitor, PMIx_Process_monitor_nb(
        monitor_info: *const CInfo,
        error: CStatus,
        directives: *const CInfo,
        ndirs: usize,
    );
    let (m, directives) = monitor_args(monitor_info, directives, ndirs)?;
    |c| monitor(c, &m, error, &directives)
}
