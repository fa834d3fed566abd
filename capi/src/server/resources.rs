//! What a C host tells its server of the machine, apart from any job (v5.0 §17.2.5, §17.2.6,
//! §17.2.9, §17.2.10): resources (`PMIx_server_register_resources`, and their
//! deregistration), and the node inventory it collects here and delivers elsewhere
//! (`PMIx_server_collect_inventory`, `PMIx_server_deliver_inventory`), and the strings it
//! generates about a cpuset of this machine (§17.2.17, §17.2.18).

use std::ffi::{c_char, c_void};

use pmix::model::{Cpuset, Status};

use super::{run_op, server, status_of};
use crate::boundary::{c_strdup, guard, guard_or};
use crate::callbacks::CbData;
use crate::types::{CInfo, CSourced, CStatus, InfoCb, OpCb};
use crate::values::read_cpuset;
use crate::values::{free_infos, read_infos, write_infos};

/// `PMIx_server_register_resources`: information not tied to a job (nodes, fabrics, …), part
/// of every job's information where the job's own registration does not say otherwise.
///
/// # Safety
/// `info` holds `ninfo` infos; `cbfunc` is NULL (the call blocks) or callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_register_resources(
    info: *mut CInfo,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_register_resources", || {
        // SAFETY: the caller's promise.
        let info = unsafe { read_infos(info, ninfo)? };
        let (server, handle, _) = server()?;
        let work = async move { server.register_resources(info).await.map_err(status_of) };
        run_op(work, &handle, cbfunc, cbdata)
    })
}

/// `PMIx_server_deregister_resources`: forget the resources `info` names.
///
/// # Safety
/// As `PMIx_server_register_resources`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_deregister_resources(
    info: *mut CInfo,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_deregister_resources", || {
        // SAFETY: the caller's promise.
        let info = unsafe { read_infos(info, ninfo)? };
        let (server, handle, _) = server()?;
        let work = async move { server.deregister_resources(info).await.map_err(status_of) };
        run_op(work, &handle, cbfunc, cbdata)
    })
}

/// The release function handed with a collected inventory: frees the infos.
unsafe extern "C" fn release_inventory(cookie: *mut c_void) {
    guard_or("release callback", (), || {
        if !cookie.is_null() {
            // SAFETY: the box `PMIx_server_collect_inventory` made, taken once.
            let lent = unsafe { Box::from_raw(cookie.cast::<(*mut CInfo, usize)>()) };
            // SAFETY: the array it holds, ours.
            unsafe { free_infos(lent.0, lent.1) };
        }
    });
}

/// `PMIx_server_collect_inventory`: this node's inventory (its name, memory and topology),
/// handed to `cbfunc` on one of the server's threads; the infos are lent until the host
/// calls the release function it is given.
///
/// # Safety
/// `directives` holds `ndirs` infos; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_collect_inventory(
    directives: *mut CInfo,
    ndirs: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_collect_inventory", || {
        let f = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        let directives = unsafe { read_infos(directives, ndirs)? };
        let (server, handle, _) = server()?;
        let data = CbData(cbdata);
        handle.spawn_blocking(move || {
            let inventory = server.collect_inventory(&directives);
            let (status, array, n) = match write_infos(&inventory) {
                Ok((array, n)) => (Status::SUCCESS, array, n),
                Err(s) => (s, std::ptr::null_mut(), 0),
            };
            let cookie = Box::into_raw(Box::new((array, n))).cast::<c_void>();
            guard_or("inventory callback", (), || {
                // SAFETY: the host's callback and data, with infos it releases through
                // `release_inventory`.
                unsafe {
                    f(
                        status.0,
                        array,
                        n,
                        data.ptr(),
                        Some(release_inventory),
                        cookie,
                    )
                }
            });
        });
        Ok(())
    })
}

/// `PMIx_server_deliver_inventory`: an inventory collected on another node becomes that
/// node's information here.
///
/// # Safety
/// `info` holds `ninfo` infos and `directives` `ndirs`; `cbfunc` is NULL (the call blocks)
/// or callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_deliver_inventory(
    info: *mut CInfo,
    ninfo: usize,
    directives: *mut CInfo,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_deliver_inventory", || {
        // SAFETY: the caller's promise.
        let (info, directives) =
            unsafe { (read_infos(info, ninfo)?, read_infos(directives, ndirs)?) };
        let (server, handle, _) = server()?;
        let work =
            async move { (server.deliver_inventory(info, &directives).await).map_err(status_of) };
        run_op(work, &handle, cbfunc, cbdata)
    })
}

/// A string of this server's about `cpuset`, in a block the host frees.
///
/// # Safety
/// `cpuset` is NULL or a `pmix_cpuset_t`; `out` NULL or writable.
unsafe fn cpuset_text(
    name: &str,
    cpuset: *const CSourced,
    out: *mut *mut c_char,
    make: impl FnOnce(&pmix::server::Server, &Cpuset) -> Result<String, pmix::Error>,
) -> CStatus {
    guard(name, || {
        if out.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let c = unsafe { cpuset.as_ref() }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: a cpuset of the caller's.
        let cpuset = unsafe { read_cpuset(c)? };
        let (server, _, _) = server()?;
        let text = make(&server, &cpuset).map_err(status_of)?;
        let copy = c_strdup(&text)?;
        // SAFETY: writable (the caller's promise).
        unsafe { *out = copy };
        Ok(())
    })
}

/// `PMIx_server_generate_locality_string`: the locality string (`PMIX_LOCALITY_STRING`) of
/// a process bound to `cpuset` on this machine.
///
/// # Safety
/// `cpuset` is a `pmix_cpuset_t`; `locality` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_generate_locality_string(
    cpuset: *const CSourced,
    locality: *mut *mut c_char,
) -> CStatus {
    // SAFETY: the caller's promise.
    unsafe {
        cpuset_text(
            "PMIx_server_generate_locality_string",
            cpuset,
            locality,
            |s, c| s.generate_locality_string(c),
        )
    }
}

/// `PMIx_server_generate_cpuset_string`: `cpuset` as a `PMIX_CPUSET` string (`hwloc:0-3`).
///
/// # Safety
/// `cpuset` is a `pmix_cpuset_t`; `cpuset_string` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_generate_cpuset_string(
    cpuset: *const CSourced,
    cpuset_string: *mut *mut c_char,
) -> CStatus {
    // SAFETY: the caller's promise.
    unsafe {
        cpuset_text(
            "PMIx_server_generate_cpuset_string",
            cpuset,
            cpuset_string,
            |s, c| s.generate_cpuset_string(c),
        )
    }
}
