//! Connecting and disconnecting processes: `PMIx_Connect`, `PMIx_Disconnect` and their `_nb`
//! forms.

use std::ffi::c_void;

use super::{nb_op, status_of};
use crate::boundary::guard;
use crate::state::client::client;
use crate::types::{CInfo, CProc, CStatus, OpCb};
use crate::values::{read_infos, read_procs};

macro_rules! procs_call {
    ($blocking:ident, $nb:ident, $method:ident) => {
        #[doc = concat!("`", stringify!($blocking), "`.")]
        ///
        /// # Safety
        /// `procs` holds `nprocs` procs and `info` `ninfo` infos.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $blocking(
            procs: *const CProc,
            nprocs: usize,
            info: *const CInfo,
            ninfo: usize,
        ) -> CStatus {
            guard(stringify!($blocking), || {
                // SAFETY: the caller's promise.
                let procs = unsafe { read_procs(procs, nprocs)? };
                // SAFETY: the caller's promise.
                let info = unsafe { read_infos(info, ninfo)? };
                client()?.$method(&procs, &info).map_err(status_of)
            })
        }

        #[doc = concat!("`", stringify!($nb), "`.")]
        ///
        /// # Safety
        /// As the blocking form; `cbfunc` is callable with `cbdata`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $nb(
            procs: *const CProc,
            nprocs: usize,
            info: *const CInfo,
            ninfo: usize,
            cbfunc: Option<OpCb>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                // SAFETY: the caller's promise.
                let procs = unsafe { read_procs(procs, nprocs)? };
                // SAFETY: the caller's promise.
                let info = unsafe { read_infos(info, ninfo)? };
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
