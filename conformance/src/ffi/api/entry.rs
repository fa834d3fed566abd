//! The C side of [`super`]: the entry points, each looked up when first used (the structs
//! the calls build and the callback types they take are `pmix-ctypes`').

use super::*;

/// `(procs, nprocs, info, ninfo)`, the shape of connect and disconnect.
pub(super) type ProcsInfoFn = unsafe extern "C" fn(*const CProc, usize, *const CInfo, usize) -> i32;
pub(super) type ProcsInfoNbFn =
    unsafe extern "C" fn(*const CProc, usize, *const CInfo, usize, OpCb, *mut c_void) -> i32;

/// `(group, procs, nprocs, info, ninfo, results, nresults)`: group construct and invite.
pub(super) type GroupProcsFn = unsafe extern "C" fn(
    *const c_char,
    *const CProc,
    usize,
    *const CInfo,
    usize,
    *mut *mut CInfo,
    *mut usize,
) -> i32;
pub(super) type GroupProcsNbFn = unsafe extern "C" fn(
    *const c_char,
    *const CProc,
    usize,
    *const CInfo,
    usize,
    InfoCb,
    *mut c_void,
) -> i32;

/// The entry points of this module, each present or not.
pub(super) struct Syms {
    pub(super) fence_nb: Option<ProcsInfoNbFn>,
    pub(super) publish_nb:
        Option<unsafe extern "C" fn(*const CInfo, usize, OpCb, *mut c_void) -> i32>,
    pub(super) lookup_nb: Option<
        unsafe extern "C" fn(*mut *mut c_char, *const CInfo, usize, LookupCb, *mut c_void) -> i32,
    >,
    pub(super) unpublish_nb: Option<
        unsafe extern "C" fn(*mut *mut c_char, *const CInfo, usize, OpCb, *mut c_void) -> i32,
    >,
    pub(super) initialized: Option<unsafe extern "C" fn() -> i32>,
    pub(super) progress: Option<unsafe extern "C" fn()>,
    pub(super) abort: Option<unsafe extern "C" fn(i32, *const c_char, *const CProc, usize) -> i32>,
    pub(super) register_event: Option<
        unsafe extern "C" fn(
            *const i32,
            usize,
            *const CInfo,
            usize,
            NotificationFn,
            Option<HdlrRegCb>,
            *mut c_void,
        ) -> i32,
    >,
    pub(super) deregister_event:
        Option<unsafe extern "C" fn(usize, Option<OpCb>, *mut c_void) -> i32>,
    pub(super) notify: Option<
        unsafe extern "C" fn(
            i32,
            *const CProc,
            u8,
            *const CInfo,
            usize,
            Option<OpCb>,
            *mut c_void,
        ) -> i32,
    >,
    pub(super) log: Option<unsafe extern "C" fn(*const CInfo, usize, *const CInfo, usize) -> i32>,
    pub(super) log_nb: Option<
        unsafe extern "C" fn(*const CInfo, usize, *const CInfo, usize, OpCb, *mut c_void) -> i32,
    >,
    pub(super) query:
        Option<unsafe extern "C" fn(*mut CQuery, usize, *mut *mut CInfo, *mut usize) -> i32>,
    pub(super) query_nb:
        Option<unsafe extern "C" fn(*mut CQuery, usize, InfoCb, *mut c_void) -> i32>,
    pub(super) spawn:
        Option<unsafe extern "C" fn(*const CInfo, usize, *const CApp, usize, *mut c_char) -> i32>,
    pub(super) spawn_nb: Option<
        unsafe extern "C" fn(*const CInfo, usize, *const CApp, usize, SpawnCb, *mut c_void) -> i32,
    >,
    pub(super) connect: Option<ProcsInfoFn>,
    pub(super) connect_nb: Option<ProcsInfoNbFn>,
    pub(super) disconnect: Option<ProcsInfoFn>,
    pub(super) disconnect_nb: Option<ProcsInfoNbFn>,
    pub(super) resolve_peers: Option<
        unsafe extern "C" fn(*const c_char, *const c_char, *mut *mut CProc, *mut usize) -> i32,
    >,
    pub(super) resolve_nodes: Option<unsafe extern "C" fn(*const c_char, *mut *mut c_char) -> i32>,
    pub(super) alloc:
        Option<unsafe extern "C" fn(u8, *const CInfo, usize, *mut *mut CInfo, *mut usize) -> i32>,
    pub(super) alloc_nb:
        Option<unsafe extern "C" fn(u8, *const CInfo, usize, InfoCb, *mut c_void) -> i32>,
    pub(super) job_control: Option<
        unsafe extern "C" fn(
            *const CProc,
            usize,
            *const CInfo,
            usize,
            *mut *mut CInfo,
            *mut usize,
        ) -> i32,
    >,
    pub(super) job_control_nb: Option<
        unsafe extern "C" fn(*const CProc, usize, *const CInfo, usize, InfoCb, *mut c_void) -> i32,
    >,
    pub(super) monitor: Option<
        unsafe extern "C" fn(
            *const CInfo,
            i32,
            *const CInfo,
            usize,
            *mut *mut CInfo,
            *mut usize,
        ) -> i32,
    >,
    pub(super) monitor_nb: Option<
        unsafe extern "C" fn(*const CInfo, i32, *const CInfo, usize, InfoCb, *mut c_void) -> i32,
    >,
    pub(super) get_cred: Option<unsafe extern "C" fn(*const CInfo, usize, *mut CByteObject) -> i32>,
    pub(super) get_cred_nb:
        Option<unsafe extern "C" fn(*const CInfo, usize, CredentialCb, *mut c_void) -> i32>,
    pub(super) validate: Option<
        unsafe extern "C" fn(
            *const CByteObject,
            *const CInfo,
            usize,
            *mut *mut CInfo,
            *mut usize,
        ) -> i32,
    >,
    pub(super) validate_nb: Option<
        unsafe extern "C" fn(
            *const CByteObject,
            *const CInfo,
            usize,
            ValidationCb,
            *mut c_void,
        ) -> i32,
    >,
    pub(super) group_construct: Option<GroupProcsFn>,
    pub(super) group_construct_nb: Option<GroupProcsNbFn>,
    pub(super) group_invite: Option<GroupProcsFn>,
    pub(super) group_invite_nb: Option<GroupProcsNbFn>,
    pub(super) group_join: Option<
        unsafe extern "C" fn(
            *const c_char,
            *const CProc,
            i32,
            *const CInfo,
            usize,
            *mut *mut CInfo,
            *mut usize,
        ) -> i32,
    >,
    pub(super) group_join_nb: Option<
        unsafe extern "C" fn(
            *const c_char,
            *const CProc,
            i32,
            *const CInfo,
            usize,
            InfoCb,
            *mut c_void,
        ) -> i32,
    >,
    pub(super) group_leave: Option<unsafe extern "C" fn(*const c_char, *const CInfo, usize) -> i32>,
    pub(super) group_leave_nb:
        Option<unsafe extern "C" fn(*const c_char, *const CInfo, usize, OpCb, *mut c_void) -> i32>,
    pub(super) group_destruct:
        Option<unsafe extern "C" fn(*const c_char, *const CInfo, usize) -> i32>,
    pub(super) group_destruct_nb:
        Option<unsafe extern "C" fn(*const c_char, *const CInfo, usize, OpCb, *mut c_void) -> i32>,
    pub(super) iof_pull: Option<
        unsafe extern "C" fn(
            *const CProc,
            usize,
            *const CInfo,
            usize,
            u16,
            IofCb,
            Option<HdlrRegCb>,
            *mut c_void,
        ) -> i32,
    >,
    pub(super) iof_deregister:
        Option<unsafe extern "C" fn(usize, *const CInfo, usize, Option<OpCb>, *mut c_void) -> i32>,
    pub(super) iof_push: Option<
        unsafe extern "C" fn(
            *const CProc,
            usize,
            *mut CByteObject,
            *const CInfo,
            usize,
            Option<OpCb>,
            *mut c_void,
        ) -> i32,
    >,
    pub(super) fabric_register:
        Option<unsafe extern "C" fn(*mut CFabric, *const CInfo, usize) -> i32>,
    pub(super) fabric_register_nb:
        Option<unsafe extern "C" fn(*mut CFabric, *const CInfo, usize, OpCb, *mut c_void) -> i32>,
    pub(super) fabric_update: Option<unsafe extern "C" fn(*mut CFabric) -> i32>,
    pub(super) fabric_update_nb:
        Option<unsafe extern "C" fn(*mut CFabric, OpCb, *mut c_void) -> i32>,
    pub(super) fabric_deregister: Option<unsafe extern "C" fn(*mut CFabric) -> i32>,
    pub(super) fabric_deregister_nb:
        Option<unsafe extern "C" fn(*mut CFabric, OpCb, *mut c_void) -> i32>,
    pub(super) get_cpuset: Option<unsafe extern "C" fn(*mut CSourced, u8) -> i32>,
    pub(super) relative_locality:
        Option<unsafe extern "C" fn(*const c_char, *const c_char, *mut u16) -> i32>,
    pub(super) load_topology: Option<unsafe extern "C" fn(*mut CSourced) -> i32>,
    pub(super) distances: Option<
        unsafe extern "C" fn(
            *mut CSourced,
            *mut CSourced,
            *const CInfo,
            usize,
            *mut *mut CDeviceDistance,
            *mut usize,
        ) -> i32,
    >,
    pub(super) distances_nb: Option<
        unsafe extern "C" fn(
            *mut CSourced,
            *mut CSourced,
            *const CInfo,
            usize,
            DeviceDistCb,
            *mut c_void,
        ) -> i32,
    >,
}

static SYMS: OnceLock<Syms> = OnceLock::new();

pub(super) fn syms(l: &'static Lib) -> &'static Syms {
    SYMS.get_or_init(|| {
        macro_rules! opt {
            ($name:literal) => {
                // SAFETY: the symbol, when present, has the C signature of the field it is
                // stored in, as declared in OpenPMIx 4.2's pmix.h / pmix_tool.h (the
                // standard's signatures).
                unsafe { l.optional(concat!($name, "\0")) }
            };
        }
        Syms {
            fence_nb: opt!("PMIx_Fence_nb"),
            publish_nb: opt!("PMIx_Publish_nb"),
            lookup_nb: opt!("PMIx_Lookup_nb"),
            unpublish_nb: opt!("PMIx_Unpublish_nb"),
            initialized: opt!("PMIx_Initialized"),
            progress: opt!("PMIx_Progress"),
            abort: opt!("PMIx_Abort"),
            register_event: opt!("PMIx_Register_event_handler"),
            deregister_event: opt!("PMIx_Deregister_event_handler"),
            notify: opt!("PMIx_Notify_event"),
            log: opt!("PMIx_Log"),
            log_nb: opt!("PMIx_Log_nb"),
            query: opt!("PMIx_Query_info"),
            query_nb: opt!("PMIx_Query_info_nb"),
            spawn: opt!("PMIx_Spawn"),
            spawn_nb: opt!("PMIx_Spawn_nb"),
            connect: opt!("PMIx_Connect"),
            connect_nb: opt!("PMIx_Connect_nb"),
            disconnect: opt!("PMIx_Disconnect"),
            disconnect_nb: opt!("PMIx_Disconnect_nb"),
            resolve_peers: opt!("PMIx_Resolve_peers"),
            resolve_nodes: opt!("PMIx_Resolve_nodes"),
            alloc: opt!("PMIx_Allocation_request"),
            alloc_nb: opt!("PMIx_Allocation_request_nb"),
            job_control: opt!("PMIx_Job_control"),
            job_control_nb: opt!("PMIx_Job_control_nb"),
            monitor: opt!("PMIx_Process_monitor"),
            monitor_nb: opt!("PMIx_Process_monitor_nb"),
            get_cred: opt!("PMIx_Get_credential"),
            get_cred_nb: opt!("PMIx_Get_credential_nb"),
            validate: opt!("PMIx_Validate_credential"),
            validate_nb: opt!("PMIx_Validate_credential_nb"),
            group_construct: opt!("PMIx_Group_construct"),
            group_construct_nb: opt!("PMIx_Group_construct_nb"),
            group_invite: opt!("PMIx_Group_invite"),
            group_invite_nb: opt!("PMIx_Group_invite_nb"),
            group_join: opt!("PMIx_Group_join"),
            group_join_nb: opt!("PMIx_Group_join_nb"),
            group_leave: opt!("PMIx_Group_leave"),
            group_leave_nb: opt!("PMIx_Group_leave_nb"),
            group_destruct: opt!("PMIx_Group_destruct"),
            group_destruct_nb: opt!("PMIx_Group_destruct_nb"),
            iof_pull: opt!("PMIx_IOF_pull"),
            iof_deregister: opt!("PMIx_IOF_deregister"),
            iof_push: opt!("PMIx_IOF_push"),
            fabric_register: opt!("PMIx_Fabric_register"),
            fabric_register_nb: opt!("PMIx_Fabric_register_nb"),
            fabric_update: opt!("PMIx_Fabric_update"),
            fabric_update_nb: opt!("PMIx_Fabric_update_nb"),
            fabric_deregister: opt!("PMIx_Fabric_deregister"),
            fabric_deregister_nb: opt!("PMIx_Fabric_deregister_nb"),
            get_cpuset: opt!("PMIx_Get_cpuset"),
            relative_locality: opt!("PMIx_Get_relative_locality"),
            load_topology: opt!("PMIx_Load_topology"),
            distances: opt!("PMIx_Compute_distances"),
            distances_nb: opt!("PMIx_Compute_distances_nb"),
        }
    })
}
