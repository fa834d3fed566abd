//! Spawning applications: `PMIx_Spawn` and `PMIx_Spawn_nb`, the new namespace written for
//! the caller or handed to its callback.

use std::ffi::c_void;

use pmix::model::Status;

use super::status_of;
use crate::args::{Array, NspaceOut};
use crate::boundary::guard;
use crate::callbacks::{CbData, call_spawn};
use crate::state::client::client;
use crate::state::threads::detached;
use crate::types::{CApp, CInfo, CStatus, SpawnCb};

/// `PMIx_Spawn`: start the applications; the new namespace is written to `nspace` (a
/// `pmix_nspace_t`, when not NULL).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Spawn(
    job_info: Array<'_, CInfo>,
    ninfo: usize,
    apps: Array<'_, CApp>,
    napps: usize,
    nspace: NspaceOut<'_>,
) -> CStatus {
    guard("PMIx_Spawn", || {
        let (job_info, apps) = (job_info.infos(ninfo)?, apps.apps(napps)?);
        let spawned = client()?.spawn(&job_info, &apps).map_err(status_of)?;
        nspace.fixed(spawned.as_str());
        Ok(())
    })
}

/// `PMIx_Spawn_nb`: the callback receives the new namespace.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Spawn_nb(
    job_info: Array<'_, CInfo>,
    ninfo: usize,
    apps: Array<'_, CApp>,
    napps: usize,
    cbfunc: Option<SpawnCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Spawn_nb", || {
        let (job_info, apps) = (job_info.infos(ninfo)?, apps.apps(napps)?);
        let data = CbData(cbdata);
        detached(move |c| {
            let (status, nspace) = match c.spawn(&job_info, &apps) {
                Ok(ns) => (Status::SUCCESS, ns.as_str().to_owned()),
                Err(e) => (e.status(), String::new()),
            };
            if let Some(f) = cbfunc {
                call_spawn(f, status, &nspace, data);
            }
        })
    })
}
