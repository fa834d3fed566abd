//! The server APIs of a host's steps (see [`crate::server_api`]) through the C API, in a
//! node's server process. Each entry point is looked up when first used; a library without
//! it has no such call (see [`super::outcome`]). The calls with a callback are
//! made in their callback form and waited for.

use pmix::model::{Cpuset, DataRange};

use super::*;
use crate::server_api::ServerCall;

type StringOutFn = unsafe extern "C" fn(*const c_char, *mut *mut c_char) -> i32;
type CpusetOutFn = unsafe extern "C" fn(*const CSourced, *mut *mut c_char) -> i32;
type InfoOpFn = unsafe extern "C" fn(*const CInfo, usize, OpCb, *mut c_void) -> i32;
type NspaceInfoOpFn =
    unsafe extern "C" fn(*const c_char, *const CInfo, usize, OpCb, *mut c_void) -> i32;

/// The entry points of this module, each present or not.
struct ServerSyms {
    finalize: Option<unsafe extern "C" fn() -> i32>,
    deregister_nspace: Option<unsafe extern "C" fn(*const c_char, OpCb, *mut c_void)>,
    deregister_client: Option<unsafe extern "C" fn(*const CProc, OpCb, *mut c_void)>,
    setup_application: Option<
        unsafe extern "C" fn(
            *const c_char,
            *const CInfo,
            usize,
            SetupApplicationCb,
            *mut c_void,
        ) -> i32,
    >,
    setup_local_support: Option<NspaceInfoOpFn>,
    iof_deliver: Option<
        unsafe extern "C" fn(
            *const CProc,
            u16,
            *const CByteObject,
            *const CInfo,
            usize,
            OpCb,
            *mut c_void,
        ) -> i32,
    >,
    collect_inventory:
        Option<unsafe extern "C" fn(*const CInfo, usize, InfoCb, *mut c_void) -> i32>,
    deliver_inventory: Option<
        unsafe extern "C" fn(*const CInfo, usize, *const CInfo, usize, OpCb, *mut c_void) -> i32,
    >,
    define_pset: Option<unsafe extern "C" fn(*const CProc, usize, *const c_char) -> i32>,
    delete_pset: Option<unsafe extern "C" fn(*const c_char) -> i32>,
    register_resources: Option<InfoOpFn>,
    deregister_resources: Option<InfoOpFn>,
    generate_regex: Option<StringOutFn>,
    generate_ppn: Option<StringOutFn>,
    locality_string: Option<CpusetOutFn>,
    cpuset_string: Option<CpusetOutFn>,
    cpuset_destruct: Option<unsafe extern "C" fn(*mut CSourced)>,
    /// OpenPMIx 4.2's form (v4.0): the function and a NULL-terminated array of attribute
    /// names.
    register_attributes: Option<unsafe extern "C" fn(*const c_char, *const *const c_char) -> i32>,
}

static SERVER_SYMS: OnceLock<ServerSyms> = OnceLock::new();

fn server_syms(l: &'static Lib) -> &'static ServerSyms {
    SERVER_SYMS.get_or_init(|| {
        macro_rules! opt {
            ($name:literal) => {
                // SAFETY: the symbol, when present, has the C signature of the field it is
                // stored in, as the standard (v5.0 chapter 16) and OpenPMIx 4.2's
                // pmix_server.h declare it.
                unsafe { l.optional(concat!($name, "\0")) }
            };
        }
        ServerSyms {
            finalize: opt!("PMIx_server_finalize"),
            deregister_nspace: opt!("PMIx_server_deregister_nspace"),
            deregister_client: opt!("PMIx_server_deregister_client"),
            setup_application: opt!("PMIx_server_setup_application"),
            setup_local_support: opt!("PMIx_server_setup_local_support"),
            iof_deliver: opt!("PMIx_server_IOF_deliver"),
            collect_inventory: opt!("PMIx_server_collect_inventory"),
            deliver_inventory: opt!("PMIx_server_deliver_inventory"),
            define_pset: opt!("PMIx_server_define_process_set"),
            delete_pset: opt!("PMIx_server_delete_process_set"),
            register_resources: opt!("PMIx_server_register_resources"),
            deregister_resources: opt!("PMIx_server_deregister_resources"),
            generate_regex: opt!("PMIx_generate_regex"),
            generate_ppn: opt!("PMIx_generate_ppn"),
            locality_string: opt!("PMIx_server_generate_locality_string"),
            cpuset_string: opt!("PMIx_server_generate_cpuset_string"),
            cpuset_destruct: opt!("PMIx_Cpuset_destruct"),
            register_attributes: opt!("PMIx_Register_attributes"),
        }
    })
}

/// Run a server step's call through the library of this node's server.
pub fn run_server(call: ServerCall) -> ApiOutput {
    let l = match ready() {
        Ok(l) => l,
        Err(s) => return ApiOutput::status(s),
    };
    outcome(run(l, server_syms(l), call))
}

/// A string the library allocated into `out`, taken and freed: its bytes as they are.
fn take_string(out: *mut c_char) -> Option<pmix::model::Text> {
    if out.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string the library malloc'd for the caller.
    let s = pmix::model::Text::from(unsafe { CStr::from_ptr(out) }.to_bytes());
    // SAFETY: the caller owns it now.
    unsafe { free(out.cast()) };
    Some(s)
}

/// A call that fills a string: its value, or its status.
fn string_out(rc: i32, out: *mut c_char) -> ApiOutput {
    let s = take_string(out);
    if rc != PMIX_SUCCESS {
        return ApiOutput::status(Status(rc));
    }
    ApiOutput::value(s.map(Value::string).ok_or(Status::ERR_BAD_PARAM))
}

/// `generate` (the locality or the cpuset string) of the processing units `cpus`.
fn cpuset_string(
    l: &'static Lib,
    generate: CpusetOutFn,
    s: &ServerSyms,
    cpus: &str,
) -> Result<ApiOutput, Status> {
    let mut cs = cpuset_c(l, cpus)?;
    let mut out: *mut c_char = std::ptr::null_mut();
    // SAFETY: a cpuset the library built, and a pointer it sets to a malloc'd string.
    let rc = unsafe { generate(&cs, &mut out) };
    if let Some(destruct) = s.cpuset_destruct {
        // SAFETY: the cpuset the library's unpack built, released once.
        unsafe { destruct(&mut cs) };
    }
    Ok(string_out(rc, out))
}

/// An hwloc cpuset of the processing units `cpus`, built by the library's own unpack of a
/// packed `PMIX_PROC_CPUSET` (so the harness needs no hwloc of its own).
fn cpuset_c(l: &'static Lib, cpus: &str) -> Result<CSourced, Status> {
    let bytes = l.encode(&[Cpuset {
        source: Some("hwloc".into()),
        bitmap: Some(cpus.to_owned()),
    }])?;
    let mut cs = CSourced {
        source: std::ptr::null_mut(),
        object: std::ptr::null_mut(),
    };
    let rc = l.unpack_into(&bytes, (&raw mut cs).cast(), 1, DataType::PROC_CPUSET);
    if rc != Status::SUCCESS {
        return Err(rc);
    }
    Ok(cs)
}

fn run(l: &'static Lib, s: &ServerSyms, call: ServerCall) -> Result<ApiOutput, Status> {
    let ns = |n: &str| cstring(n);
    let unit = |r: Result<(), Status>| ApiOutput::status(r.err().unwrap_or(Status::SUCCESS));
    Ok(match call {
        ServerCall::RegisterNspace {
            nspace,
            nlocal,
            info,
        } => unit(register_nspace(&nspace, nlocal, &info)),
        ServerCall::DeregisterNspace { nspace } => {
            let n = ns(&nspace)?;
            let f = need(s.deregister_nspace)?;
            op_nb(|cb, d| {
                // SAFETY: a NUL-terminated namespace; the callback comes after the return
                // (the standard forbids it before), and op_nb waits for it.
                unsafe { f(n.as_ptr(), cb, d) };
                PMIX_SUCCESS
            })
        }
        ServerCall::RegisterClient { proc } => {
            let (uid, gid) = pmix::transport::uid_gid();
            unit(register_client(&proc, uid, gid))
        }
        ServerCall::DeregisterClient { proc } => {
            let p = c_proc(&proc);
            let f = need(s.deregister_client)?;
            op_nb(|cb, d| {
                // SAFETY: a process identifier alive until the callback, which op_nb waits for.
                unsafe { f(&p, cb, d) };
                PMIX_SUCCESS
            })
        }
        ServerCall::SetupFork { proc } => ApiOutput::results(setup_fork(&proc).and_then(|env| {
            env.into_iter()
                .map(|(k, v)| Info::with_key(&k, v).map_err(|_| Status::ERR_BAD_PARAM))
                .collect()
        })),
        ServerCall::DmodexRequest { proc } => {
            ApiOutput::value(dmodex_request(&proc).map(|d| Value::ByteObject(d.into())))
        }
        ServerCall::SetupApplication { nspace, info } => {
            let (n, ci) = (ns(&nspace)?, l.infos_to_c(&info)?);
            let f = need(s.setup_application)?;
            let slot = Slot::<ApiOutput>::new();
            let cbdata = give(&slot);
            // SAFETY: namespace and infos alive until the callback, which this waits for.
            let rc = unsafe { f(n.as_ptr(), ci.ptr(), ci.v.len(), setup_app_done, cbdata) };
            start_and_wait(&slot, cbdata, rc, ApiOutput::status)
        }
        ServerCall::SetupLocalSupport { nspace, info } => {
            let (n, ci) = (ns(&nspace)?, l.infos_to_c(&info)?);
            let f = need(s.setup_local_support)?;
            // SAFETY: as for setup_application, with an op callback.
            op_nb(|cb, d| unsafe { f(n.as_ptr(), ci.ptr(), ci.v.len(), cb, d) })
        }
        ServerCall::IofDeliver {
            source,
            channel,
            mut data,
            info,
        } => {
            let p = c_proc(&source);
            let ci = l.infos_to_c(&info)?;
            let bo = CByteObject {
                bytes: data.as_mut_ptr().cast(),
                size: data.len(),
            };
            let f = need(s.iof_deliver)?;
            // SAFETY: source, payload and infos alive until the callback, which op_nb waits
            // for; the library copies the payload.
            op_nb(|cb, d| unsafe { f(&p, channel.0, &bo, ci.ptr(), ci.v.len(), cb, d) })
        }
        ServerCall::CollectInventory { info } => {
            let ci = l.infos_to_c(&info)?;
            let f = need(s.collect_inventory)?;
            // SAFETY: directives alive until the callback, which info_nb waits for.
            info_nb(|cb, d| unsafe { f(ci.ptr(), ci.v.len(), cb, d) })
        }
        ServerCall::DeliverInventory { info } => {
            let ci = l.infos_to_c(&info)?;
            let f = need(s.deliver_inventory)?;
            // SAFETY: the inventory alive until the callback; no directives.
            op_nb(|cb, d| unsafe { f(ci.ptr(), ci.v.len(), std::ptr::null(), 0, cb, d) })
        }
        ServerCall::DefineProcessSet { name, members } => {
            let (n, cp) = (cstring(&name)?, procs_c(&members));
            // SAFETY: the member array of its length and a NUL-terminated name.
            status_of(unsafe { need(s.define_pset)?(procs_ptr(&cp), cp.len(), n.as_ptr()) })
        }
        ServerCall::DeleteProcessSet { name } => {
            let n = cstring(&name)?;
            // SAFETY: a NUL-terminated name (the library does not write through it).
            status_of(unsafe { need(s.delete_pset)?(n.as_ptr()) })
        }
        ServerCall::NotifyEvent {
            status,
            range,
            info,
        } => super::events::notify(l, status, None, range, &info)?,
        ServerCall::RegisterResources { info } => {
            let ci = l.infos_to_c(&info)?;
            let f = need(s.register_resources)?;
            // SAFETY: infos alive until the callback, which op_nb waits for.
            op_nb(|cb, d| unsafe { f(ci.ptr(), ci.v.len(), cb, d) })
        }
        ServerCall::DeregisterResources { info } => {
            let ci = l.infos_to_c(&info)?;
            let f = need(s.deregister_resources)?;
            // SAFETY: as for register_resources.
            op_nb(|cb, d| unsafe { f(ci.ptr(), ci.v.len(), cb, d) })
        }
        ServerCall::GenerateRegex { input } => {
            let i = cstring(&input)?;
            let mut out: *mut c_char = std::ptr::null_mut();
            // SAFETY: a NUL-terminated input and a pointer the library sets to a malloc'd
            // string.
            let rc = unsafe { need(s.generate_regex)?(i.as_ptr(), &mut out) };
            string_out(rc, out)
        }
        ServerCall::GeneratePpn { input } => {
            let i = cstring(&input)?;
            let mut out: *mut c_char = std::ptr::null_mut();
            // SAFETY: as for generate_regex.
            let rc = unsafe { need(s.generate_ppn)?(i.as_ptr(), &mut out) };
            string_out(rc, out)
        }
        ServerCall::GenerateLocalityString { cpus } => {
            cpuset_string(l, need(s.locality_string)?, s, &cpus)?
        }
        ServerCall::GenerateCpusetString { cpus } => {
            cpuset_string(l, need(s.cpuset_string)?, s, &cpus)?
        }
        ServerCall::RegisterAttributes {
            function,
            attributes,
        } => {
            // OpenPMIx 4.2's pmix_server.h declares the v4.0 form, `(char *function, char
            // *attrs[])`, the attributes by name: the form of every library of this ABI
            // (v5.0 passes an array of pmix_regattr_t and its count).
            let f = cstring(&function)?;
            let names: Vec<CString> = attributes
                .iter()
                .map(|(n, _, _)| cstring(n))
                .collect::<Result<_, _>>()?;
            let argv: Vec<*const c_char> = (names.iter().map(|n| n.as_ptr()))
                .chain(std::iter::once(std::ptr::null()))
                .collect();
            // SAFETY: a NUL-terminated function name and a NULL-terminated array of names
            // that `names` owns, alive for the call; the library copies what it keeps.
            status_of(unsafe { need(s.register_attributes)?(f.as_ptr(), argv.as_ptr()) })
        }
        ServerCall::Finalize => {
            // SAFETY: no arguments.
            status_of(unsafe { need(s.finalize)?() })
        }
    })
}

/// `PMIx_Notify_event` in a server's process, on its host's behalf: an event a process on
/// another node raised, for this node's processes in `range`.
pub fn notify_for_host(
    status: Status,
    source: &Proc,
    range: DataRange,
    info: &[Info],
) -> Result<(), Status> {
    let o = super::events::notify(ready()?, status, Some(source), range, info)?;
    match o.status {
        Status::SUCCESS => Ok(()),
        s => Err(s),
    }
}
