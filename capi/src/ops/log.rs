//! Logging: `PMIx_Log` and `PMIx_Log_nb`.

use std::ffi::c_void;

use super::{nb_op, status_of};
use crate::boundary::guard;
use crate::state::client::client;
use crate::types::{CInfo, CStatus, OpCb};
use crate::values::read_infos;

/// `PMIx_Log`.
///
/// # Safety
/// `data` holds `ndata` infos and `directives` `ndirs`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Log(
    data: *const CInfo,
    ndata: usize,
    directives: *const CInfo,
    ndirs: usize,
) -> CStatus {
    guard("PMIx_Log", || {
        // SAFETY: the caller's promise.
        let (data, directives) =
            unsafe { (read_infos(data, ndata)?, read_infos(directives, ndirs)?) };
        client()?.log(&data, &directives).map_err(status_of)
    })
}

/// `PMIx_Log_nb`.
///
/// # Safety
/// As `PMIx_Log`; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Log_nb(
    data: *const CInfo,
    ndata: usize,
    directives: *const CInfo,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Log_nb", || {
        // SAFETY: the caller's promise.
        let (data, directives) =
            unsafe { (read_infos(data, ndata)?, read_infos(directives, ndirs)?) };
        nb_op(
            move |c| c.log(&data, &directives).map_err(status_of),
            cbfunc,
            cbdata,
        )
    })
}
