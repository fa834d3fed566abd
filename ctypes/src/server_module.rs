//! `pmix_server_module_t`, the table of upcalls a host hands `PMIx_server_init`, with the
//! types of its 28 slots, as OpenPMIx 4.2's `pmix_server.h` declares them on x86-64 (the
//! callbacks through which a host answers them are in `callbacks.rs`).
//!
//! `capi` (`libpmix.so.2`) reads a C host's module and calls its slots; the conformance
//! harness is such a host for a C `libpmix.so` and fills a module with its own functions.
//! Each slot is an `Option`: a NULL slot is an upcall the host does not provide. The
//! callback the library hands an upcall is always given, so it is a plain function pointer;
//! the release function a host hands back with its data may be NULL, so it is an `Option`.
//!
//! The C enums among the arguments (`pmix_group_operation_t`, `pmix_fabric_operation_t`)
//! are `int`s here; the one-byte and two-byte typedefs (`pmix_data_range_t`,
//! `pmix_alloc_directive_t`, `pmix_iof_channel_t`) are `u8` and `u16`.

use std::ffi::{c_char, c_int, c_void};
use std::mem::size_of;

use crate::{
    CApp, CByteObject, CInfo, CProc, CQuery, CStatus, CredentialCb, InfoCb, LookupCb, ModexCb,
    OpCb, SpawnCb, ToolConnectionCb, ValidationCb,
};

// ---- the slots ----

/// `pmix_server_client_connected_fn_t` and `pmix_server_client_finalized_fn_t`: the client,
/// the object the host registered with it, the callback and its cookie.
pub type ConnectedFn =
    unsafe extern "C" fn(*const CProc, *mut c_void, OpCb, *mut c_void) -> CStatus;

/// `pmix_server_client_connected2_fn_t`: as [`ConnectedFn`], with infos about the client.
pub type Connected2Fn = unsafe extern "C" fn(
    *const CProc,
    *mut c_void,
    *mut CInfo,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_abort_fn_t`: the requester, its server object, the status to exit with, the
/// message (or NULL), the processes to abort (none: the requester's whole job).
pub type AbortFn = unsafe extern "C" fn(
    *const CProc,
    *mut c_void,
    c_int,
    *const c_char,
    *mut CProc,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_fencenb_fn_t`: the participants, the directives, the local data to gather.
pub type FenceFn = unsafe extern "C" fn(
    *const CProc,
    usize,
    *const CInfo,
    usize,
    *mut c_char,
    usize,
    ModexCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_dmodex_req_fn_t`: the process whose data is wanted, the directives.
pub type DmodexFn =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, ModexCb, *mut c_void) -> CStatus;

/// `pmix_server_publish_fn_t`: the publisher, the data to publish with its directives.
pub type PublishFn =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, OpCb, *mut c_void) -> CStatus;

/// `pmix_server_lookup_fn_t`: the requester, the keys (a NULL-terminated array), the
/// directives.
pub type LookupFn = unsafe extern "C" fn(
    *const CProc,
    *mut *mut c_char,
    *const CInfo,
    usize,
    LookupCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_unpublish_fn_t`: the requester, the keys (a NULL-terminated array), the
/// directives.
pub type UnpublishFn = unsafe extern "C" fn(
    *const CProc,
    *mut *mut c_char,
    *const CInfo,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_spawn_fn_t`: the requester, the job's infos, the applications to start.
pub type SpawnFn = unsafe extern "C" fn(
    *const CProc,
    *const CInfo,
    usize,
    *const CApp,
    usize,
    SpawnCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_connect_fn_t` and `pmix_server_disconnect_fn_t`: the processes, the infos.
pub type ConnectFn =
    unsafe extern "C" fn(*const CProc, usize, *const CInfo, usize, OpCb, *mut c_void) -> CStatus;

/// `pmix_server_register_events_fn_t`: the event codes, the directives.
pub type RegisterEventsFn =
    unsafe extern "C" fn(*mut CStatus, usize, *const CInfo, usize, OpCb, *mut c_void) -> CStatus;

/// `pmix_server_deregister_events_fn_t`: the event codes.
pub type DeregisterEventsFn =
    unsafe extern "C" fn(*mut CStatus, usize, OpCb, *mut c_void) -> CStatus;

/// `pmix_server_listener_fn_t`, declared without its parameters: neither the library nor the
/// harness calls a host's listener, so only the slot's width and whether it is NULL matter.
pub type ListenerFn = unsafe extern "C" fn();

/// `pmix_server_notify_event_fn_t`: the event's code, its source, its range (a
/// `pmix_data_range_t`), its infos.
pub type NotifyFn = unsafe extern "C" fn(
    CStatus,
    *const CProc,
    u8,
    *mut CInfo,
    usize,
    OpCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_query_fn_t`: the requester, the queries.
pub type QueryFn =
    unsafe extern "C" fn(*mut CProc, *mut CQuery, usize, InfoCb, *mut c_void) -> CStatus;

/// `pmix_server_tool_connection_fn_t`: the tool's infos. It returns nothing: the host
/// answers through the callback only.
pub type ToolConnectedFn = unsafe extern "C" fn(*mut CInfo, usize, ToolConnectionCb, *mut c_void);

/// `pmix_server_log_fn_t`: the requester, the data to log, the directives. It returns
/// nothing: the host answers through the callback only.
pub type LogFn =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, *const CInfo, usize, OpCb, *mut c_void);

/// `pmix_server_alloc_fn_t`: the requester, the directive (a `pmix_alloc_directive_t`, one
/// byte), the request's infos.
pub type AllocateFn =
    unsafe extern "C" fn(*const CProc, u8, *const CInfo, usize, InfoCb, *mut c_void) -> CStatus;

/// `pmix_server_job_control_fn_t`: the requester, the target processes, the directives.
pub type JobControlFn = unsafe extern "C" fn(
    *const CProc,
    *const CProc,
    usize,
    *const CInfo,
    usize,
    InfoCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_monitor_fn_t`: the requester, the one info saying what to watch, the status
/// to raise when it trips, the directives.
pub type MonitorFn = unsafe extern "C" fn(
    *const CProc,
    *const CInfo,
    CStatus,
    *const CInfo,
    usize,
    InfoCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_get_cred_fn_t`: the requester, the directives.
pub type GetCredentialFn =
    unsafe extern "C" fn(*const CProc, *const CInfo, usize, CredentialCb, *mut c_void) -> CStatus;

/// `pmix_server_validate_cred_fn_t`: the requester, the credential, the directives.
pub type ValidateCredentialFn = unsafe extern "C" fn(
    *const CProc,
    *const CByteObject,
    *const CInfo,
    usize,
    ValidationCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_iof_fn_t`: the processes whose output is wanted, the directives, the channels
/// (a `pmix_iof_channel_t` bit mask).
pub type IofPullFn = unsafe extern "C" fn(
    *const CProc,
    usize,
    *const CInfo,
    usize,
    u16,
    OpCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_stdin_fn_t`: the process the input comes from, the targets, the directives,
/// the data (NULL once the input is closed).
pub type PushStdinFn = unsafe extern "C" fn(
    *const CProc,
    *const CProc,
    usize,
    *const CInfo,
    usize,
    *const CByteObject,
    OpCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_grp_fn_t`: the operation (`pmix_group_operation_t`, an `int`), the group's
/// name, its members, the directives.
pub type GroupFn = unsafe extern "C" fn(
    c_int,
    *mut c_char,
    *const CProc,
    usize,
    *const CInfo,
    usize,
    InfoCb,
    *mut c_void,
) -> CStatus;

/// `pmix_server_fabric_fn_t`: the requester, the operation (`pmix_fabric_operation_t`, an
/// `int`), the directives.
pub type FabricFn =
    unsafe extern "C" fn(*const CProc, c_int, *const CInfo, usize, InfoCb, *mut c_void) -> CStatus;

/// `pmix_server_module_t`: OpenPMIx 4.2's 28 slots, in the header's order (`openpmix/ABI.md`
/// §2.4). A slot left `None` is an upcall the host does not provide.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
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
    pub listener: Option<ListenerFn>,
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

// ABI.md §2.4: 28 pointers, each NULL or a function (an `Option` of a function pointer is one
// pointer wide).
const _: () = assert!(size_of::<CServerModule>() == 224);
