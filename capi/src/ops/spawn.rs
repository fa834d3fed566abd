//! Spawning applications: `PMIx_Spawn` and `PMIx_Spawn_nb`, the new namespace written for
//! the caller or handed to its callback.

use std::ffi::{c_char, c_void};

use pmix::model::{App, Status};

use super::status_of;
use crate::boundary::{guard, guard_or, slice_of, write_fixed};
use crate::callbacks::CbData;
use crate::state::client::client;
use crate::state::threads::detached;
use crate::types::{CApp, CInfo, CStatus, SpawnCb};
use crate::values::{read_infos, read_object};

/// # Safety
/// `apps` holds `napps` apps.
unsafe fn read_apps(apps: *const CApp, napps: usize) -> Result<Vec<App>, Status> {
    // SAFETY: the caller's promise.
    let apps = unsafe { slice_of(apps, napps)? };
    let mut out = Vec::with_capacity(apps.len());
    for a in apps {
        // SAFETY: each is an app.
        match unsafe { read_object(pmix::model::DataType::APP, (&raw const *a).cast()) }? {
            pmix::model::Value::App(app) => out.push(*app),
            _ => return Err(Status::ERR_BAD_PARAM),
        }
    }
    Ok(out)
}

/// `PMIx_Spawn`: start the applications; the new namespace is written to `nspace` (a
/// `pmix_nspace_t`, when not NULL).
///
/// # Safety
/// `job_info` holds `ninfo` infos, `apps` `napps` apps; `nspace` is NULL or 256 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Spawn(
    job_info: *const CInfo,
    ninfo: usize,
    apps: *const CApp,
    napps: usize,
    nspace: *mut c_char,
) -> CStatus {
    guard("PMIx_Spawn", || {
        // SAFETY: the caller's promise.
        let (job_info, apps) = unsafe { (read_infos(job_info, ninfo)?, read_apps(apps, napps)?) };
        let spawned = client()?.spawn(&job_info, &apps).map_err(status_of)?;
        if !nspace.is_null() {
            // SAFETY: `nspace` has room for a `pmix_nspace_t` (the caller's promise).
            let field = unsafe { std::slice::from_raw_parts_mut(nspace, 256) };
            write_fixed(field, spawned.as_str());
        }
        Ok(())
    })
}

/// `PMIx_Spawn_nb`: the callback receives the new namespace.
///
/// # Safety
/// As `PMIx_Spawn`; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Spawn_nb(
    job_info: *const CInfo,
    ninfo: usize,
    apps: *const CApp,
    napps: usize,
    cbfunc: Option<SpawnCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Spawn_nb", || {
        // SAFETY: the caller's promise.
        let (job_info, apps) = unsafe { (read_infos(job_info, ninfo)?, read_apps(apps, napps)?) };
        let data = CbData(cbdata);
        detached(move |c| {
            let (status, mut nspace) = match c.spawn(&job_info, &apps) {
                Ok(ns) => {
                    let mut field = [0 as c_char; 256];
                    write_fixed(&mut field, ns.as_str());
                    (Status::SUCCESS, field)
                }
                Err(e) => (e.status(), [0 as c_char; 256]),
            };
            if let Some(f) = cbfunc {
                guard_or("spawn callback", (), || {
                    // SAFETY: the caller's callback and data, with a namespace valid for it.
                    unsafe { f(status.0, nspace.as_mut_ptr(), data.ptr()) }
                });
            }
        })
    })
}
