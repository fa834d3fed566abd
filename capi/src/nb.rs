//! The non-blocking forms of the client's data calls (`PMIx_Fence_nb`, `PMIx_Get_nb`, …),
//! run on the client's threads (`crate::state::threads`).
//!
//! Each reads its arguments before it returns (the caller may reuse them at once), then runs
//! the call on one of the client's own threads, which calls the C callback with the outcome:
//! OpenPMIx's callbacks also run on a thread of the library, and may call back into it. What
//! the library hands a callback (a value, published data) is the library's, released when
//! the callback returns. A call refused before it starts returns its error and calls no
//! callback.

use std::ffi::c_void;

use pmix::model::{PData, Status};

use crate::args::{Argv, Array, In, Str};
use crate::boundary::guard;
use crate::callbacks::{CbData, call_lookup, call_op, call_value};
use crate::state::client::client;
use crate::state::server::Caller;
use crate::state::threads::{detached, detached_on};
use crate::types::{CInfo, CProc, CStatus, LookupCb, OpCb, ValueCb};
use crate::values::read_proc;

fn outcome(r: Result<(), pmix::Error>) -> Status {
    r.map_or_else(|e| e.status(), |()| Status::SUCCESS)
}

/// `PMIx_Fence_nb`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Fence_nb(
    procs: Array<'_, CProc>,
    nprocs: usize,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Fence_nb", || {
        let (procs, info) = (procs.procs(nprocs)?, info.infos(ninfo)?);
        let data = CbData(cbdata);
        detached(move |c| {
            let status = outcome(c.fence(&procs, &info));
            if let Some(f) = cbfunc {
                call_op(f, status, data);
            }
        })
    })
}

/// `PMIx_Get_nb`: the callback receives the value, which stays the library's.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Get_nb(
    proc: In<'_, CProc>,
    key: Str<'_>,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<ValueCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Get_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        let (key, info) = (key.required()?, info.infos(ninfo)?);
        let target = proc.get().map(read_proc).transpose()?;
        let data = CbData(cbdata);
        match crate::state::server::caller()? {
            Caller::Client(c) => {
                detached_on(c, move |c| {
                    let got = c.get(target.as_ref(), &key, &info).map_err(|e| e.status());
                    call_value(cbfunc, got, data);
                });
                Ok(())
            }
            Caller::Host => crate::state::host_events::on_server_thread(move || {
                call_value(cbfunc, crate::state::server::host_get(target, &key), data);
            }),
        }
    })
}

/// `PMIx_Publish_nb`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Publish_nb(
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Publish_nb", || {
        let c = client()?;
        // As `PMIx_Publish`: refused at once, the callback never called.
        if info.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let info = info.infos(ninfo)?;
        let data = CbData(cbdata);
        detached_on(c, move |c| {
            let status = outcome(c.publish(&info));
            if let Some(f) = cbfunc {
                call_op(f, status, data);
            }
        });
        Ok(())
    })
}

/// `PMIx_Lookup_nb`: the callback receives the data found (the library's).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Lookup_nb(
    keys: Argv<'_>,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<LookupCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Lookup_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        let (keys, info) = (keys.texts(), info.infos(ninfo)?);
        if keys.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let data = CbData(cbdata);
        detached(move |c| {
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            let (status, found) = match c.lookup(&refs, &info) {
                Ok(found) => (PData::lookup_status(&keys, &found), found),
                Err(e) => (e.status(), Vec::new()),
            };
            call_lookup(cbfunc, status, &found, data);
        })
    })
}

/// `PMIx_Unpublish_nb`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Unpublish_nb(
    keys: Argv<'_>,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Unpublish_nb", || {
        let (keys, info) = (keys.texts(), info.infos(ninfo)?);
        let data = CbData(cbdata);
        detached(move |c| {
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            let status = outcome(c.unpublish(&refs, &info));
            if let Some(f) = cbfunc {
                call_op(f, status, data);
            }
        })
    })
}
