//! Connecting and disconnecting processes: `PMIx_Connect`, `PMIx_Disconnect` and their `_nb`
//! forms.

use std::ffi::c_void;

use super::{nb_op, status_of};
use crate::args::Array;
use crate::boundary::guard;
use crate::state::client::client;
use crate::types::{CInfo, CProc, CStatus, OpCb};

macro_rules! procs_call {
    ($blocking:ident, $nb:ident, $method:ident) => {
        #[doc = concat!("`", stringify!($blocking), "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $blocking(
            procs: Array<'_, CProc>,
            nprocs: usize,
            info: Array<'_, CInfo>,
            ninfo: usize,
        ) -> CStatus {
            guard(stringify!($blocking), || {
                let (procs, info) = (procs.procs(nprocs)?, info.infos(ninfo)?);
                client()?.$method(&procs, &info).map_err(status_of)
            })
        }

        #[doc = concat!("`", stringify!($nb), "`: as the blocking form, its outcome to `cbfunc`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $nb(
            procs: Array<'_, CProc>,
            nprocs: usize,
            info: Array<'_, CInfo>,
            ninfo: usize,
            cbfunc: Option<OpCb>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                let (procs, info) = (procs.procs(nprocs)?, info.infos(ninfo)?);
                nb_op(
                    move |c| c.$method(&procs, &info).map_err(status_of),
                    cbfunc,
                    cbdata,
                )
            })
        }
    };
}

procs_call!(PMIx_Connect, PMIx_Connect_nb, connect);
procs_call!(PMIx_Disconnect, PMIx_Disconnect_nb, disconnect);
