//! `pmix_server_module_t`: the host's upcalls as OpenPMIx 4.2's `pmix_server.h` declares them.

use std::ffi::{c_char, c_int, c_void};

use crate::types::{CApp, CByteObject, CInfo, CPdata, CProc, CQuery, CStatus};

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
/// `pmix_server_iof_fn_t`: the processes, the directives, the channels.
pub(super) type IofPullFn = unsafe extern "C" fn(
    *const CProc,
    usize,
    *const CInfo,
    usize,
    u16,
    OpCb,
    *mut c_void,
) -> CStatus;
/// `pmix_server_stdin_fn_t`: the source, the targets, the directives, the data (or NULL).
pub(super) type PushStdinFn = unsafe extern "C" fn(
    *const CProc,
    *const CProc,
    usize,
    *const CInfo,
    usize,
    *const CByteObject,
    OpCb,
    *mut c_void,
) -> CStatus;
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

/// `pmix_server_tool_connection_fn_t`: a void upcall, answered only through its callback.
pub(super) type ToolConnectedFn =
    unsafe extern "C" fn(*mut CInfo, usize, ToolConnectionCb, *mut c_void);
/// `pmix_tool_connection_cbfunc_t`: the status and the identifier the tool is to use.
pub(super) type ToolConnectionCb = unsafe extern "C" fn(CStatus, *mut CProc, *mut c_void);
/// `pmix_server_alloc_fn_t` (the directive is a `pmix_alloc_directive_t`, one byte).
pub(super) type AllocateFn =
    unsafe extern "C" fn(*const CProc, u8, *const CInfo, usize, InfoCb, *mut c_void) -> CStatus;
/// `pmix_server_monitor_fn_t`: the requester, what to monitor, the error to raise.
pub(super) type MonitorFn = unsafe extern "C" fn(
    *const CProc,
    *const CInfo,
    CStatus,
    *const CInfo,
    usize,
    InfoCb,
    *mut c_void,
) -> CStatus;
/// `pmix_server_get_cred_fn_t`.
pub(super) type GetCredentialFn =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, CredentialCb, *mut c_void) -> CStatus;
/// `pmix_credential_cbfunc_t`: the credential and what describes it.
pub(super) type CredentialCb =
    unsafe extern "C" fn(CStatus, *mut CByteObject, *mut CInfo, usize, *mut c_void);
/// `pmix_server_validate_cred_fn_t`.
pub(super) type ValidateCredentialFn = unsafe extern "C" fn(
    *const CProc,
    *const CByteObject,
    *const CInfo,
    usize,
    ValidationCb,
    *mut c_void,
) -> CStatus;
/// `pmix_validation_cbfunc_t`: what the credential proves.
pub(super) type ValidationCb = unsafe extern "C" fn(CStatus, *mut CInfo, usize, *mut c_void);
/// `pmix_server_grp_fn_t` (the operation is a C enum, an `int`).
pub(super) type GroupFn = unsafe extern "C" fn(
    c_int,
    *mut c_char,
    *const CProc,
    usize,
    *const CInfo,
    usize,
    InfoCb,
    *mut c_void,
) -> CStatus;
/// `pmix_server_fabric_fn_t` (the operation is a C enum, an `int`).
pub(super) type FabricFn =
    unsafe extern "C" fn(*const CProc, c_int, *const CInfo, usize, InfoCb, *mut c_void) -> CStatus;

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
    pub tool_connected: Option<ToolConnectedFn>,
    pub log: Option<LogFn>,
    pub allocate: Option<AllocateFn>,
    pub job_control: Option<JobControlFn>,
    pub monitor: Option<MonitorFn>,
    pub get_credential: Option<GetCredentialFn>,
    pub validate_credential: Option<ValidateCredentialFn>,
    pub iof_pull: Option<IofPullFn>,
    pub push_stdin: Option<PushStdinFn>,
    pub group: Option<GroupFn>,
    pub fabric: Option<FabricFn>,
    pub client_connected2: Option<Connected2Fn>,
}

const _: () = assert!(size_of::<CServerModule>() == 224);
