//! Logging: `PMIx_Log` and `PMIx_Log_nb`.

use std::ffi::c_void;

use super::{nb_op, status_of};
use crate::args::Array;
use crate::boundary::guard;
use crate::state::client::client;
use crate::types::{CInfo, CStatus, OpCb};

/// `PMIx_Log`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Log(
    data: Array<'_, CInfo>,
    ndata: usize,
    directives: Array<'_, CInfo>,
    ndirs: usize,
) -> CStatus {
    guard("PMIx_Log", || {
        let (data, directives) = (data.infos(ndata)?, directives.infos(ndirs)?);
        client()?.log(&data, &directives).map_err(status_of)
    })
}

/// `PMIx_Log_nb`: as `PMIx_Log`, its outcome to `cbfunc`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Log_nb(
    data: Array<'_, CInfo>,
    ndata: usize,
    directives: Array<'_, CInfo>,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Log_nb", || {
        let (data, directives) = (data.infos(ndata)?, directives.infos(ndirs)?);
        nb_op(
            move |c| c.log(&data, &directives).map_err(status_of),
            cbfunc,
            cbdata,
        )
    })
}
