//! The exported calls this library does not implement yet. Each answers
//! `PMIX_ERR_NOT_SUPPORTED` (or the C equivalent for calls without a status) and calls no
//! callback, which is how the standard says an implementation declines a call. The list
//! shrinks as calls move to the modules that implement them; `tests/symbols.rs` checks that
//! together they export every `PMIx_*` function of OpenPMIx 4.2.

#![allow(unused_variables)] // the arguments document the C signature

use std::ffi::{c_char, c_int, c_void};

use pmix::model::Status;

use crate::types::{CApp, CByteObject, CDataBuffer, CInfo, CPdata, CProc, CQuery, CStatus, CValue};

/// A C callback this module never calls: only its address crosses.
type Callback = *const c_void;
/// `pmix_op_cbfunc_t`.
type OpCallback = Option<unsafe extern "C" fn(CStatus, *mut c_void)>;
/// Opaque structs passed by address (topologies, cpusets, fabrics, distances).
type Opaque = *mut c_void;

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
    PMIx_Fence_nb(procs: *const CProc, nprocs: usize, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Get_nb(proc: *const CProc, key: *const c_char, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Publish_nb(info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Lookup_nb(keys: *mut *mut c_char, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Unpublish_nb(keys: *mut *mut c_char, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Spawn(job_info: *const CInfo, ninfo: usize, apps: *const CApp, napps: usize, nspace: *mut c_char);
    PMIx_Spawn_nb(job_info: *const CInfo, ninfo: usize, apps: *const CApp, napps: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Connect(procs: *const CProc, nprocs: usize, info: *const CInfo, ninfo: usize);
    PMIx_Connect_nb(procs: *const CProc, nprocs: usize, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Disconnect(procs: *const CProc, nprocs: usize, info: *const CInfo, ninfo: usize);
    PMIx_Disconnect_nb(procs: *const CProc, nprocs: usize, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Resolve_peers(nodename: *const c_char, nspace: *const c_char, procs: *mut *mut CProc, nprocs: *mut usize);
    PMIx_Resolve_nodes(nspace: *const c_char, nodelist: *mut *mut c_char);
    PMIx_Query_info(queries: *mut CQuery, nqueries: usize, results: *mut *mut CInfo, nresults: *mut usize);
    PMIx_Query_info_nb(queries: *mut CQuery, nqueries: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Log(data: *const CInfo, ndata: usize, directives: *const CInfo, ndirs: usize);
    PMIx_Log_nb(data: *const CInfo, ndata: usize, directives: *const CInfo, ndirs: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Allocation_request(directive: u8, info: *mut CInfo, ninfo: usize, results: *mut *mut CInfo, nresults: *mut usize);
    PMIx_Allocation_request_nb(directive: u8, info: *mut CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Job_control(targets: *const CProc, ntargets: usize, directives: *const CInfo, ndirs: usize, results: *mut *mut CInfo, nresults: *mut usize);
    PMIx_Job_control_nb(targets: *const CProc, ntargets: usize, directives: *const CInfo, ndirs: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Process_monitor(monitor: *const CInfo, error: CStatus, directives: *const CInfo, ndirs: usize, results: *mut *mut CInfo, nresults: *mut usize);
    PMIx_Process_monitor_nb(monitor: *const CInfo, error: CStatus, directives: *const CInfo, ndirs: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Get_credential(info: *const CInfo, ninfo: usize, credential: *mut CByteObject);
    PMIx_Get_credential_nb(info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Validate_credential(cred: *const CByteObject, info: *const CInfo, ninfo: usize, results: *mut *mut CInfo, nresults: *mut usize);
    PMIx_Validate_credential_nb(cred: *const CByteObject, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Group_construct(grp: *const c_char, procs: *const CProc, nprocs: usize, directives: *const CInfo, ndirs: usize, results: *mut *mut CInfo, nresults: *mut usize);
    PMIx_Group_construct_nb(grp: *const c_char, procs: *const CProc, nprocs: usize, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Group_invite(grp: *const c_char, procs: *const CProc, nprocs: usize, info: *const CInfo, ninfo: usize, results: *mut *mut CInfo, nresult: *mut usize);
    PMIx_Group_invite_nb(grp: *const c_char, procs: *const CProc, nprocs: usize, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Group_join(grp: *const c_char, leader: *const CProc, opt: c_int, info: *const CInfo, ninfo: usize, results: *mut *mut CInfo, nresult: *mut usize);
    PMIx_Group_join_nb(grp: *const c_char, leader: *const CProc, opt: c_int, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Group_leave(grp: *const c_char, info: *const CInfo, ninfo: usize);
    PMIx_Group_leave_nb(grp: *const c_char, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Group_destruct(grp: *const c_char, info: *const CInfo, ninfo: usize);
    PMIx_Group_destruct_nb(grp: *const c_char, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Register_event_handler(codes: *mut CStatus, ncodes: usize, info: *mut CInfo, ninfo: usize, evhdlr: Callback, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Deregister_event_handler(evhdlr_ref: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Notify_event(status: CStatus, source: *const CProc, range: u8, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Fabric_register(fabric: Opaque, directives: *const CInfo, ndirs: usize);
    PMIx_Fabric_register_nb(fabric: Opaque, directives: *const CInfo, ndirs: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Fabric_update(fabric: Opaque);
    PMIx_Fabric_update_nb(fabric: Opaque, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Fabric_deregister(fabric: Opaque);
    PMIx_Fabric_deregister_nb(fabric: Opaque, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Compute_distances(topo: Opaque, cpuset: Opaque, info: *mut CInfo, ninfo: usize, distances: *mut Opaque, ndist: *mut usize);
    PMIx_Compute_distances_nb(topo: Opaque, cpuset: Opaque, info: *mut CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_Load_topology(topo: Opaque);
    PMIx_Parse_cpuset_string(cpuset_string: *const c_char, cpuset: Opaque);
    PMIx_Get_cpuset(cpuset: Opaque, reference: u8);
    PMIx_Get_relative_locality(locality1: *const c_char, locality2: *const c_char, locality: *mut u16);
    PMIx_Data_pack(target: *const CProc, buffer: *mut CDataBuffer, src: *mut c_void, num_vals: i32, type_: u16);
    PMIx_Data_unpack(source: *const CProc, buffer: *mut CDataBuffer, dest: *mut c_void, max_num_values: *mut i32, type_: u16);
    PMIx_Data_copy(dest: *mut *mut c_void, src: *mut c_void, type_: u16);
    PMIx_Data_print(output: *mut *mut c_char, prefix: *mut c_char, src: *mut c_void, type_: u16);
    PMIx_Data_copy_payload(dest: *mut CDataBuffer, src: *mut CDataBuffer);
    PMIx_Data_unload(buffer: *mut CDataBuffer, payload: *mut CByteObject);
    PMIx_Data_load(buffer: *mut CDataBuffer, payload: *mut CByteObject);
    PMIx_Data_embed(buffer: *mut CDataBuffer, payload: *const CByteObject);
    PMIx_Register_attributes(function: *mut c_char, attrs: *mut *mut c_char);
    PMIx_server_init(module: Opaque, info: *mut CInfo, ninfo: usize);
    PMIx_server_finalize();
    PMIx_generate_regex(input: *const c_char, regex: *mut *mut c_char);
    PMIx_generate_ppn(input: *const c_char, ppn: *mut *mut c_char);
    PMIx_server_register_nspace(nspace: *const c_char, nlocalprocs: c_int, info: *mut CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_server_register_client(proc: *const CProc, uid: u32, gid: u32, server_object: *mut c_void, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_server_setup_fork(proc: *const CProc, env: *mut *mut *mut c_char);
    PMIx_server_dmodex_request(proc: *const CProc, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_server_setup_application(nspace: *const c_char, info: *mut CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_server_setup_local_support(nspace: *const c_char, info: *mut CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_server_IOF_deliver(source: *const CProc, channel: u16, bo: *const CByteObject, info: *const CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_server_collect_inventory(directives: *mut CInfo, ndirs: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_server_deliver_inventory(info: *mut CInfo, ninfo: usize, directives: *mut CInfo, ndirs: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_server_generate_locality_string(cpuset: Opaque, locality: *mut *mut c_char);
    PMIx_server_generate_cpuset_string(cpuset: Opaque, cpuset_string: *mut *mut c_char);
    PMIx_server_define_process_set(members: *const CProc, nmembers: usize, pset_name: *const c_char);
    PMIx_server_delete_process_set(pset_name: *mut c_char);
    PMIx_server_register_resources(info: *mut CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_server_deregister_resources(info: *mut CInfo, ninfo: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_tool_init(proc: *mut CProc, info: *mut CInfo, ninfo: usize);
    PMIx_tool_finalize();
    PMIx_tool_attach_to_server(myproc: *mut CProc, server: *mut CProc, info: *mut CInfo, ninfo: usize);
    PMIx_tool_disconnect(server: *const CProc);
    PMIx_tool_connect_to_server(proc: *mut CProc, info: *mut CInfo, ninfo: usize);
    PMIx_tool_get_servers(servers: *mut *mut CProc, nservers: *mut usize);
    PMIx_tool_set_server(server: *const CProc, info: *mut CInfo, ninfo: usize);
    PMIx_IOF_pull(procs: *const CProc, nprocs: usize, directives: *const CInfo, ndirs: usize, channel: u16, cbfunc: Callback, regcbfunc: Callback, regcbdata: *mut c_void);
    PMIx_IOF_deregister(iofhdlr: usize, directives: *const CInfo, ndirs: usize, cbfunc: Callback, cbdata: *mut c_void);
    PMIx_IOF_push(targets: *const CProc, ntargets: usize, bo: *mut CByteObject, directives: *const CInfo, ndirs: usize, cbfunc: Callback, cbdata: *mut c_void);
}

/// `PMIx_Topology_destruct`: nothing this library made to release yet.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Topology_destruct(topo: Opaque) {}

/// `PMIx_Cpuset_destruct`: nothing this library made to release yet.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Cpuset_destruct(cpuset: Opaque) {}

/// `PMIx_Data_compress`: not implemented yet (`false`, nothing written).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_compress(
    inbytes: *const u8,
    size: usize,
    outbytes: *mut *mut u8,
    nbytes: *mut usize,
) -> bool {
    false
}

/// `PMIx_Data_decompress`: not implemented yet (`false`, nothing written).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_decompress(
    inbytes: *const u8,
    size: usize,
    outbytes: *mut *mut u8,
    nbytes: *mut usize,
) -> bool {
    false
}

/// `PMIx_server_deregister_nspace`: not implemented yet; the callback hears
/// `PMIX_ERR_NOT_SUPPORTED` so a caller waiting on it is not left hanging.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_deregister_nspace(
    nspace: *const c_char,
    cbfunc: OpCallback,
    cbdata: *mut c_void,
) {
    call_op(cbfunc, cbdata);
}

/// `PMIx_server_deregister_client`: as `PMIx_server_deregister_nspace`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_deregister_client(
    proc: *const CProc,
    cbfunc: OpCallback,
    cbdata: *mut c_void,
) {
    call_op(cbfunc, cbdata);
}

fn call_op(cbfunc: OpCallback, cbdata: *mut c_void) {
    if let Some(f) = cbfunc {
        crate::boundary::guard_or("op callback", (), || {
            // SAFETY: the caller passed this callback and its data for this call's outcome.
            unsafe { f(Status::ERR_NOT_SUPPORTED.0, cbdata) }
        });
    }
}

// Types only the signatures above name.
const _: Option<(CPdata, CValue)> = None;
