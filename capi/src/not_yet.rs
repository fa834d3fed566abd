//! The exported calls this library does not implement yet. Each answers
//! `PMIX_ERR_NOT_SUPPORTED` (or the C equivalent for calls without a status) and calls no
//! callback, which is how the standard says an implementation declines a call. The list
//! shrinks as calls move to the modules that implement them; `tests/symbols.rs` checks that
//! together they export every `PMIx_*` function of OpenPMIx 4.2.

#![allow(unused_variables)] // the arguments document the C signature

use std::ffi::c_void;

use pmix::model::Status;

use crate::types::{CByteObject, CInfo, CProc, CStatus};

/// A C callback this module never calls: only its address crosses.
type Callback = *const c_void;

macro_rules! not_yet {
    ($($c_name:ident($($arg:ident: $t:ty),* $(,)?);)*) => {$(
        #[doc = concat!("`", stringify!($c_name), "`: not implemented yet.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $c_name($($arg: $t),*) -> CStatus {
            tracing::debug!(concat!(stringify!($c_name), ": not implemented"));
            Status::ERR_NOT_SUPPORTED.0
        }
    )*};
}

not_yet! {
    PMIx_server_IOF_deliver(
        source: *const CProc,
        channel: u16,
        bo: *const CByteObject,
        info: *const CInfo,
        ninfo: usize,
        cbfunc: Callback,
        cbdata: *mut c_void,
    );
    PMIx_IOF_pull(
        procs: *const CProc,
        nprocs: usize,
        directives: *const CInfo,
        ndirs: usize,
        channel: u16,
        cbfunc: Callback,
        regcbfunc: Callback,
        regcbdata: *mut c_void,
    );
    PMIx_IOF_deregister(
        iofhdlr: usize,
        directives: *const CInfo,
        ndirs: usize,
        cbfunc: Callback,
        cbdata: *mut c_void,
    );
    PMIx_IOF_push(
        targets: *const CProc,
        ntargets: usize,
        bo: *mut CByteObject,
        directives: *const CInfo,
        ndirs: usize,
        cbfunc: Callback,
        cbdata: *mut c_void,
    );
}
