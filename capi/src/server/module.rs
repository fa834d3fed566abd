//! `pmix_server_module_t`: the host's upcalls as OpenPMIx 4.2's `pmix_server.h` declares them.

use std::ffi::{c_char, c_int, c_void};

use crate::types::{CApp, CInfo, CPdata, CProc, CQuery, CStatus};

/// `pmix_op_cbfunc_t`.
pub(super) type OpCb = unsafe extern "C" fn(CStatus, *mut c_void);
/// `pmix_release_cbfunc_t`.
pub(super) type ReleaseCb = unsafe extern "C" fn(*mut c_void);
/// `pmix_modex_cbfunc_t`.
pub(super) type ModexCb = unsafe extern "C" fn(
    CStatus,
    *const c_char,
    usize,
    *mut c_void,
    Option<ReleaseCb>,
    *mut c_void,
);
/// `pmix_lookup_cbfunc_t`.
pub(super) type LookupCb = unsafe extern "C" fn(CStatus, *mut CPdata, usize, *mut c_void);
/// `pmix_spawn_cbfunc_t`.
pub(super) type SpawnCb = unsafe extern "C" fn(CStatus, *mut c_char, *mut c_void);
/// `pmix_info_cbfunc_t`.
pub(super) type InfoCb =
    unsafe extern "C" fn(CStatus, *mut CInfo, usize, *mut c_void, Option<ReleaseCb>, *mut c_void);

pub(super) type ConnectedFn =
    unsafe extern "C" fn(*const CProc, *mut c_void, OpCb, *mut c_void) -> CStatus;
pub(super) type Connected2Fn = unsafe extern "C" fn(
    *const CProc,
    *mut c_void,
    *mut CInfo,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;
pub(super) type AbortFn = unsafe extern "C" fn(
    *const CProc,
    *mut c_void,
    c_int,
    *const c_char,
    *mut CProc,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;
pub(super) type FenceFn = unsafe extern "C" fn(
    *const CProc,
    usize,
    *const CInfo,
    usize,
    *mut c_char,
    usize,
    ModexCb,
    *mut c_void,
) -> CStatus;
pub(super) type DmodexFn =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, ModexCb, *mut c_void) -> CStatus;
pub(super) type PublishFn =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, OpCb, *mut c_void) -> CStatus;
pub(super) type LookupFn = unsafe extern "C" fn(
    *const CProc,
    *mut *mut c_char,
    *const CInfo,
    usize,
    LookupCb,
    *mut c_void,
) -> CStatus;
pub(super) type UnpublishFn = unsafe extern "C" fn(
    *const CProc,
    *mut *mut c_char,
    *const CInfo,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;
pub(super) type SpawnFn = unsafe extern "C" fn(
    *const CProc,
    *const CInfo,
    usize,
    *const CApp,
    usize,
    SpawnCb,
    *mut c_void,
) -> CStatus;
pub(super) type ConnectFn =
    unsafe extern "C" fn(*const CProc, usize, *const CInfo, usize, OpCb, *mut c_void) -> CStatus;
pub(super) type RegisterEventsFn =
    unsafe extern "C" fn(*mut CStatus, usize, *const CInfo, usize, OpCb, *mut c_void) -> CStatus;
pub(super) type DeregisterEventsFn =
    unsafe extern "C" fn(*mut CStatus, usize, OpCb, *mut c_void) -> CStatus;
pub(super) type NotifyFn = unsafe extern "C" fn(
    CStatus,
    *const CProc,
    u8,
    *mut CInfo,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;
pub(super) type QueryFn =
    unsafe extern "C" fn(*mut CProc, *mut CQuery, usize, InfoCb, *mut c_void) -> CStatus;
pub(super) type LogFn =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, *const CInfo, usize, OpCb, *mut c_void);
pub(super) type JobControlFn = unsafe extern "C" fn(
    *const CProc,
    *const CProc,
    usize,
    *const CInfo,
    usize,
    InfoCb,
    *mut c_void,
) -> CStatus;

/// A slot this library does not call yet: only its address is kept.
pub(super) type Unused = Option<unsafe extern "C" fn()>;

/// `pmix_server_module_t` (OpenPMIx 4.2's 28 slots, in their order).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CServerModule {
    pub client_connected: Option<ConnectedFn>,
    pub client_finalized: Option<ConnectedFn>,
    pub abort: Option<AbortFn>,
    pub fence_nb: Option<FenceFn>,
    pub direct_modex: Option<DmodexFn>,
    pub publish: Option<PublishFn>,
    pub lookup: Option<LookupFn>,
    pub unpublish: Option<UnpublishFn>,
    pub spawn: Option<SpawnFn>,
    pub connect: Option<ConnectFn>,
    pub disconnect: Option<ConnectFn>,
    pub register_events: Option<RegisterEventsFn>,
    pub deregister_events: Option<DeregisterEventsFn>,
    pub listener: Unused,
    pub notify_event: Option<NotifyFn>,
    pub query: Option<QueryFn>,
    pub tool_connected: Unused,
    pub log: Option<LogFn>,
    pub allocate: Unused,
    pub job_control: Option<JobControlFn>,
    pub monitor: Unused,
    pub get_credential: Unused,
    pub validate_credential: Unused,
    pub iof_pull: Unused,
    pub push_stdin: Unused,
    pub group: Unused,
    pub fabric: Unused,
    pub client_connected2: Option<Connected2Fn>,
}

const _: () = assert!(size_of::<CServerModule>() == 224);
