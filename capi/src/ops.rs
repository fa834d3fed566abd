//! The client calls beyond data exchange: spawn, connect and disconnect, queries, logging,
//! allocation, job control, monitoring, credentials and process groups, each in its blocking
//! and its `_nb` form. Both share one body, run on the calling thread or on one of the
//! client's threads (`nb.rs`).
//!
//! Results a blocking call returns (`pmix_info_t **results`) are arrays of libc's
//! allocator, released by the caller (`PMIX_INFO_FREE`). Results handed to an `_nb` callback
//! come with a release function the callback calls when it is done with them, as
//! `pmix_info_cbfunc_t` says.
//!
//! Each chapter is a file of its own (`spawn`, `connect`, `query`, `log`, `job`,
//! `credentials`, `groups`); this module keeps what they share: the callback types and the
//! bodies of the two forms.

use std::ffi::c_void;

use pmix::client::blocking::Client;
use pmix::model::{Info, Status};

use crate::args::Out;
use crate::callbacks::{CbData, call_info, call_op};
use crate::state::client::client;
use crate::state::threads::detached;
use crate::types::{CInfo, InfoCb, OpCb};
use crate::values::write_infos;

mod connect;
mod credentials;
mod groups;
mod job;
mod log;
mod query;
mod spawn;

pub use connect::{PMIx_Connect, PMIx_Connect_nb, PMIx_Disconnect, PMIx_Disconnect_nb};
pub use credentials::{
    PMIx_Get_credential, PMIx_Get_credential_nb, PMIx_Validate_credential,
    PMIx_Validate_credential_nb,
};
pub use groups::{
    PMIx_Group_construct, PMIx_Group_construct_nb, PMIx_Group_destruct, PMIx_Group_destruct_nb,
    PMIx_Group_invite, PMIx_Group_invite_nb, PMIx_Group_join, PMIx_Group_join_nb, PMIx_Group_leave,
    PMIx_Group_leave_nb,
};
pub use job::{
    PMIx_Allocation_request, PMIx_Allocation_request_nb, PMIx_Job_control, PMIx_Job_control_nb,
    PMIx_Process_monitor, PMIx_Process_monitor_nb,
};
pub use log::{PMIx_Log, PMIx_Log_nb};
pub use query::{PMIx_Query_info, PMIx_Query_info_nb};
pub use spawn::{PMIx_Spawn, PMIx_Spawn_nb};

/// What a call with results answers: its status (`PMIX_SUCCESS`, or a partial success that
/// comes with results) and the results.
type Outcome = Result<(Status, Vec<Info>), Status>;

/// Call an info callback with `outcome`.
fn deliver_infos(cbfunc: InfoCb, outcome: Outcome, data: CbData) {
    let (status, infos) = outcome.unwrap_or_else(|s| (s, Vec::new()));
    call_info(cbfunc, status, &infos, data);
}

/// The outcome of a call without results, for an op callback.
fn op_status(r: Result<(), Status>) -> Status {
    r.err().unwrap_or(Status::SUCCESS)
}

/// Run `body` on the calling thread, its results through `results` (the blocking form).
fn blocking_infos(
    body: impl FnOnce(&Client) -> Outcome,
    results: Out<'_, *mut CInfo>,
    nresults: Out<'_, usize>,
) -> Result<(), Status> {
    let (status, infos) = body(&*client()?)?;
    hand_out(&infos, results, nresults)?;
    if status == Status::SUCCESS {
        Ok(())
    } else {
        Err(status)
    }
}

/// The `_nb` form of a call with results.
fn nb_infos(
    body: impl FnOnce(&Client) -> Outcome + Send + 'static,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> Result<(), Status> {
    let data = CbData(cbdata);
    detached(move |c| {
        let outcome = body(c);
        if let Some(f) = cbfunc {
            deliver_infos(f, outcome, data);
        }
    })
}

/// The `_nb` form of a call without results.
fn nb_op(
    body: impl FnOnce(&Client) -> Result<(), Status> + Send + 'static,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> Result<(), Status> {
    let data = CbData(cbdata);
    detached(move |c| {
        let status = op_status(body(c));
        if let Some(f) = cbfunc {
            call_op(f, status, data);
        }
    })
}

fn status_of(e: pmix::Error) -> Status {
    e.status()
}

/// Hand `infos` to the caller through `results` and `nresults` (NULL and 0 for none).
fn hand_out(
    infos: &[Info],
    results: Out<'_, *mut CInfo>,
    nresults: Out<'_, usize>,
) -> Result<(), Status> {
    if results.is_null() || nresults.is_null() {
        return Ok(());
    }
    let (array, n) = if infos.is_empty() {
        (std::ptr::null_mut(), 0)
    } else {
        write_infos(infos)?
    };
    results.set(array);
    nresults.set(n);
    Ok(())
}
