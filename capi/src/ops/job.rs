//! Job management: allocation requests (`PMIx_Allocation_request`), job control
//! (`PMIx_Job_control`) and process monitoring (`PMIx_Process_monitor`), each with its `_nb` form.

use std::ffi::c_void;

use pmix::client::blocking::Client;
use pmix::model::{AllocDirective, Info, Proc, Status};

use super::{Outcome, blocking_infos, nb_infos, status_of};
use crate::args::{Array, In, Out};
use crate::boundary::guard;
use crate::types::{CInfo, CProc, CStatus, InfoCb};

/// A call with results in its two forms: the blocking one hands them out through `results`
/// and `nresults`, the `_nb` one lends them to `cbfunc`. Both read their C arguments with
/// `$read` into `$args`, and make the call `$body` with them.
macro_rules! infos_call {
    (
        $(#[doc = $doc:literal])*
        $blocking:ident, $nb:ident ($($arg:ident: $ty:ty),* $(,)?);
        let $args:pat = $read:expr;
        |$c:ident| $body:expr $(,)?
    ) => {
        $(#[doc = $doc])*
        #[unsafe(no_mangle)]
        pub extern "C" fn $blocking(
            $($arg: $ty,)*
            results: Out<'_, *mut CInfo>,
            nresults: Out<'_, usize>,
        ) -> CStatus {
            guard(stringify!($blocking), || {
                let $args = $read;
                let body = |$c: &Client| $body;
                blocking_infos(body, results, nresults)
            })
        }

        #[doc = concat!(
            "`", stringify!($nb), "`: as `", stringify!($blocking), "`, the results lent to ",
            "`cbfunc`."
        )]
        #[unsafe(no_mangle)]
        pub extern "C" fn $nb(
            $($arg: $ty,)*
            cbfunc: Option<InfoCb>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                let $args = $read;
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
    PMIx_Allocation_request, PMIx_Allocation_request_nb(
        directive: u8,
        info: Array<'_, CInfo>,
        ninfo: usize,
    );
    let info = info.infos(ninfo)?;
    |c| allocate(c, directive, &info)
}

fn job_control(c: &Client, targets: &[Proc], directives: &[Info]) -> Outcome {
    let got = c.job_control(targets, directives).map_err(status_of)?;
    Ok((Status::SUCCESS, got))
}

infos_call! {
    /// `PMIx_Job_control`.
    PMIx_Job_control, PMIx_Job_control_nb(
        targets: Array<'_, CProc>,
        ntargets: usize,
        directives: Array<'_, CInfo>,
        ndirs: usize,
    );
    let (targets, directives) = (targets.procs(ntargets)?, directives.infos(ndirs)?);
    |c| job_control(c, &targets, &directives)
}

fn monitor(c: &Client, monitor: &[Info], error: CStatus, directives: &[Info]) -> Outcome {
    let monitor = monitor.first().ok_or(Status::ERR_BAD_PARAM)?;
    let got = (c.process_monitor(monitor, Status(error), directives)).map_err(status_of)?;
    Ok((Status::SUCCESS, got))
}

infos_call! {
    /// `PMIx_Process_monitor`.
    PMIx_Process_monitor, PMIx_Process_monitor_nb(
        monitor_info: In<'_, CInfo>,
        error: CStatus,
        directives: Array<'_, CInfo>,
        ndirs: usize,
    );
    let (m, directives) = (monitor_info.info()?, directives.infos(ndirs)?);
    |c| monitor(c, &m, error, &directives)
}
