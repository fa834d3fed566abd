//! The callback types of OpenPMIx 4.2's `pmix_common.h` and `pmix_server.h` on x86-64, defined
//! once for the project: the answers through which a host completes an upcall and a library
//! completes a non-blocking call, the handlers a caller registers (events, output), and the
//! functions that end a handler's turn or release lent data.
//!
//! A callback the other side may leave NULL is an `Option` where it is passed (a release
//! function handed back with data, the function an event handler's completion takes); one
//! that is always given is a plain function pointer.

use std::ffi::{c_char, c_void};

use crate::{CByteObject, CDeviceDistance, CInfo, CPdata, CProc, CStatus, CValue};

// ---- answers: a host's to an upcall, a library's to a call ----

/// `pmix_op_cbfunc_t`: the outcome of an operation that returns nothing but a status, and
/// the cookie the caller gave with the callback.
pub type OpCb = unsafe extern "C" fn(CStatus, *mut c_void);

/// `pmix_release_cbfunc_t`: called with its cookie once the receiver of some data is done
/// with it, so that whoever lent the data can free it.
pub type ReleaseCb = unsafe extern "C" fn(*mut c_void);

/// `pmix_modex_cbfunc_t`: the answer to a fence or a direct modex, a block of bytes: the
/// status, the bytes and their length, the upcall's cookie, then the function (or NULL)
/// that releases the bytes and its cookie.
pub type ModexCb = unsafe extern "C" fn(
    CStatus,
    *const c_char,
    usize,
    *mut c_void,
    Option<ReleaseCb>,
    *mut c_void,
);

/// `pmix_lookup_cbfunc_t`: the answer to a lookup: the status, the published data found and
/// how many, the cookie.
pub type LookupCb = unsafe extern "C" fn(CStatus, *mut CPdata, usize, *mut c_void);

/// `pmix_spawn_cbfunc_t`: the answer to a spawn: the status, the new job's namespace, the
/// cookie.
pub type SpawnCb = unsafe extern "C" fn(CStatus, *mut c_char, *mut c_void);

/// `pmix_info_cbfunc_t`: an answer made of infos: the status, the infos and how many, the
/// cookie, then the function (or NULL) that releases the infos and its cookie.
pub type InfoCb =
    unsafe extern "C" fn(CStatus, *mut CInfo, usize, *mut c_void, Option<ReleaseCb>, *mut c_void);

/// `pmix_tool_connection_cbfunc_t`: the answer to a tool's connection: the status, the
/// identifier the tool is given, the cookie.
pub type ToolConnectionCb = unsafe extern "C" fn(CStatus, *mut CProc, *mut c_void);

/// `pmix_credential_cbfunc_t`: the answer to a credential request: the status, the
/// credential, the infos describing it and how many, the cookie. The receiver copies what
/// it keeps during the call.
pub type CredentialCb =
    unsafe extern "C" fn(CStatus, *mut CByteObject, *mut CInfo, usize, *mut c_void);

/// `pmix_validation_cbfunc_t`: the answer to a credential's validation: the status, the
/// infos saying what the credential grants and how many, the cookie.
pub type ValidationCb = unsafe extern "C" fn(CStatus, *mut CInfo, usize, *mut c_void);

/// `pmix_value_cbfunc_t`: the answer to `PMIx_Get_nb`: the status, the value (the library's,
/// valid during the call), the cookie.
pub type ValueCb = unsafe extern "C" fn(CStatus, *mut CValue, *mut c_void);

/// `pmix_dmodex_response_fn_t`: the answer to `PMIx_server_dmodex_request`: the status, the
/// process's data blob and its length, the cookie.
pub type DmodexResponseFn = unsafe extern "C" fn(CStatus, *mut c_char, usize, *mut c_void);

/// `pmix_setup_application_cbfunc_t`: the answer to `PMIx_server_setup_application`: the
/// status, the infos for the application and how many, the caller's cookie, then the
/// function (or NULL) that releases the infos and its cookie.
pub type SetupApplicationCb =
    unsafe extern "C" fn(CStatus, *mut CInfo, usize, *mut c_void, Option<OpCb>, *mut c_void);

/// `pmix_device_dist_cbfunc_t`: the answer to `PMIx_Compute_distances_nb`: the status, the
/// distances and how many, the cookie, then the function (or NULL) that releases them and
/// its cookie.
pub type DeviceDistCb = unsafe extern "C" fn(
    CStatus,
    *mut CDeviceDistance,
    usize,
    *mut c_void,
    Option<ReleaseCb>,
    *mut c_void,
);

// ---- handlers, and how their turn ends ----

/// `pmix_hdlr_reg_cbfunc_t` (and the deprecated `pmix_evhdlr_reg_cbfunc_t`): the outcome of
/// a handler's registration: the status, the handler's reference, the cookie.
pub type HdlrRegCb = unsafe extern "C" fn(CStatus, usize, *mut c_void);

/// `pmix_event_notification_cbfunc_fn_t`: how an event handler ends its turn: its status
/// (`PMIX_EVENT_ACTION_COMPLETE` ends the chain), its results and how many, the function
/// (or NULL) the library calls once it has read them and that function's cookie, then the
/// cookie the handler was given.
pub type EventNotificationCb =
    unsafe extern "C" fn(CStatus, *mut CInfo, usize, Option<OpCb>, *mut c_void, *mut c_void);

/// `pmix_notification_fn_t`: an event handler: its registration's reference, the event's
/// status, its source, its infos and how many, the results of the handlers before it and
/// how many, the function that ends its turn and that function's cookie.
pub type NotificationFn = unsafe extern "C" fn(
    usize,
    CStatus,
    *const CProc,
    *mut CInfo,
    usize,
    *mut CInfo,
    usize,
    Option<EventNotificationCb>,
    *mut c_void,
);

/// `pmix_iof_cbfunc_t`: a handler of forwarded output: the pull's reference, the channel
/// (`pmix_iof_channel_t`), the source, the bytes, infos and how many.
pub type IofCb = unsafe extern "C" fn(usize, u16, *mut CProc, *mut CByteObject, *mut CInfo, usize);
