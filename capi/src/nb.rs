//! The non-blocking forms of the client's data calls (`PMIx_Fence_nb`, `PMIx_Get_nb`, …),
//! run on the client's threads (`crate::state::threads`).
//!
//! Each reads its arguments before it returns (the caller may reuse them at once), then runs
//! the call on one of the client's own threads, which calls the C callback with the outcome:
//! OpenPMIx's callbacks also run on a thread of the library, and may call back into it. What
//! the library hands a callback (a value, published data) is the library's, released when
//! the callback returns. A call refused before it starts returns its error and calls no
//! callback.

use std::ffi::{c_char, c_void};

use pmix::model::{PData, Status};

use crate::boundary::{calloc_array, guard, read_cstr};
use crate::callbacks::{CbData, call_op};
use crate::state::client::client;
use crate::state::server::Caller;
use crate::state::threads::{detached, detached_on};
use crate::types::{CInfo, CPdata, CProc, CStatus, LookupCb, OpCb, ValueCb};
use crate::values::{
    c_proc, destruct_value, read_argv, read_infos, read_proc, read_procs, undef_value, write_value,
};

fn outcome(r: Result<(), pmix::Error>) -> Status {
    r.map_or_else(|e| e.status(), |()| Status::SUCCESS)
}

/// `PMIx_Fence_nb`.
///
/// # Safety
/// As `PMIx_Fence`; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Fence_nb(
    procs: *const CProc,
    nprocs: usize,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Fence_nb", || {
        // SAFETY: the caller's promise.
        let (procs, info) = unsafe { (read_procs(procs, nprocs)?, read_infos(info, ninfo)?) };
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
///
/// # Safety
/// As `PMIx_Get`; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Get_nb(
    proc: *const CProc,
    key: *const c_char,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<ValueCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Get_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        let (key, info) = unsafe {
            (
                read_cstr(key).ok_or(Status::ERR_BAD_PARAM)?,
                read_infos(info, ninfo)?,
            )
        };
        let target = if proc.is_null() {
            None
        } else {
            // SAFETY: the caller's promise.
            Some(read_proc(unsafe { &*proc })?)
        };
        let data = CbData(cbdata);
        match crate::state::server::caller()? {
            Caller::Client(c) => {
                detached_on(c, move |c| {
                    let got = c.get(target.as_ref(), &key, &info).map_err(|e| e.status());
                    answer_get(cbfunc, got, data);
                });
                Ok(())
            }
            Caller::Host => crate::state::host_events::on_server_thread(move || {
                answer_get(cbfunc, crate::state::server::host_get(target, &key), data);
            }),
        }
    })
}

/// Hand a get's outcome to its callback: the value is lent for the call only.
fn answer_get(cbfunc: ValueCb, got: Result<pmix::model::Value, Status>, data: CbData) {
    let mut value = undef_value();
    // SAFETY: `value` is ours; written, lent to the callback, then released.
    let status = match got.and_then(|v| unsafe { write_value(&v, &mut value) }) {
        Ok(()) => Status::SUCCESS,
        Err(s) => s,
    };
    let kv = if status == Status::SUCCESS {
        &raw mut value
    } else {
        std::ptr::null_mut()
    };
    crate::boundary::guard_or("get callback", (), || {
        // SAFETY: the caller's callback and data, with a value valid for the call.
        unsafe { cbfunc(status.0, kv, data.ptr()) }
    });
    // SAFETY: the value written above, no longer lent.
    unsafe { destruct_value(&mut value) };
}

/// `PMIx_Publish_nb`.
///
/// # Safety
/// As `PMIx_Publish`; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Publish_nb(
    info: *const CInfo,
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
        // SAFETY: the caller's promise.
        let info = unsafe { read_infos(info, ninfo)? };
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
///
/// # Safety
/// `keys` is a NULL-terminated array of strings; as `PMIx_Lookup` otherwise.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Lookup_nb(
    keys: *mut *mut c_char,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<LookupCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Lookup_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        let (keys, info) = unsafe { (read_argv(keys), read_infos(info, ninfo)?) };
        let keys: Vec<String> = keys.into_iter().flatten().collect();
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
            deliver_pdata(cbfunc, status, &found, data);
        })
    })
}

/// Lend `found` to a lookup callback as a C array, released when it returns.
fn deliver_pdata(cbfunc: LookupCb, status: Status, found: &[PData], data: CbData) {
    let array: Result<*mut CPdata, Status> = calloc_array(found.len());
    let Ok(array) = array else {
        crate::boundary::guard_or("lookup callback", (), || {
            // SAFETY: the caller's callback and data.
            unsafe { cbfunc(Status::ERR_NOMEM.0, std::ptr::null_mut(), 0, data.ptr()) }
        });
        return;
    };
    let mut filled = 0;
    let mut status = status;
    for (i, pd) in found.iter().enumerate() {
        // SAFETY: `array` holds `found.len()` zeroed pdata; element `i` is in it.
        let slot = unsafe { &mut *array.add(i) };
        slot.proc = c_proc(&pd.proc);
        crate::boundary::write_fixed(&mut slot.key, pd.key.as_str());
        // SAFETY: a zeroed value holds nothing.
        if let Err(s) = unsafe { write_value(&pd.value, &mut slot.value) } {
            status = s;
            break;
        }
        filled += 1;
    }
    crate::boundary::guard_or("lookup callback", (), || {
        // SAFETY: the caller's callback and data, with `filled` pdata valid for the call.
        unsafe { cbfunc(status.0, array, filled, data.ptr()) }
    });
    for i in 0..filled {
        // SAFETY: the values written above.
        unsafe { destruct_value(&mut (*array.add(i)).value) };
    }
    // SAFETY: the array allocated above.
    unsafe { crate::boundary::free(array) };
}

/// `PMIx_Unpublish_nb`.
///
/// # Safety
/// As `PMIx_Unpublish`; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Unpublish_nb(
    keys: *mut *mut c_char,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Unpublish_nb", || {
        // SAFETY: the caller's promise.
        let (keys, info) = unsafe { (read_argv(keys), read_infos(info, ninfo)?) };
        let keys: Vec<String> = keys.into_iter().flatten().collect();
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
