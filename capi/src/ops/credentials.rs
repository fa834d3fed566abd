//! Credentials: getting one (`PMIx_Get_credential`) and validating one
//! (`PMIx_Validate_credential`), each with its `_nb` form.

use std::ffi::c_void;

use pmix::client::blocking::Client;
use pmix::model::{Info, Status};

use super::{Outcome, blocking_infos, status_of};
use crate::boundary::{c_bytes, guard, guard_or};
use crate::callbacks::CbData;
use crate::state::client::client;
use crate::state::threads::detached;
use crate::types::{CByteObject, CInfo, CStatus, CredentialCb, ValidationCb};
use crate::values::{free_infos, read_infos, read_required_bytes, write_infos};

/// `PMIx_Get_credential`: the credential's bytes, in a block of libc's allocator the caller
/// releases (`PMIX_BYTE_OBJECT_DESTRUCT`).
///
/// # Safety
/// `info` holds `ninfo` infos; `credential` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Get_credential(
    info: *const CInfo,
    ninfo: usize,
    credential: *mut CByteObject,
) -> CStatus {
    guard("PMIx_Get_credential", || {
        if credential.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let info = unsafe { read_infos(info, ninfo)? };
        let (cred, _) = client()?.get_credential(&info).map_err(status_of)?;
        let bytes = c_bytes(&cred.0)?;
        // SAFETY: writable (the caller's promise).
        unsafe {
            *credential = CByteObject {
                bytes,
                size: cred.0.len(),
            };
        }
        Ok(())
    })
}

/// `PMIx_Get_credential_nb`: the callback is lent the credential and what describes it.
///
/// # Safety
/// `info` holds `ninfo` infos; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Get_credential_nb(
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<CredentialCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Get_credential_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        let info = unsafe { read_infos(info, ninfo)? };
        let data = CbData(cbdata);
        detached(move |c| {
            let (status, mut bytes, described) = match c.get_credential(&info) {
                Ok((cred, described)) => (Status::SUCCESS, cred.0, described),
                Err(e) => (e.status(), Vec::new(), Vec::new()),
            };
            let (array, n) = write_infos(&described).unwrap_or((std::ptr::null_mut(), 0));
            let mut cred = CByteObject {
                bytes: bytes.as_mut_ptr().cast(),
                size: bytes.len(),
            };
            guard_or("credential callback", (), || {
                // SAFETY: the caller's callback and data, with blocks valid for the call.
                unsafe { cbfunc(status.0, &raw mut cred, array, n, data.ptr()) }
            });
            // SAFETY: the array written above, no longer lent.
            unsafe { free_infos(array, n) };
        })
    })
}

fn validate(c: &Client, cred: &[u8], info: &[Info]) -> Outcome {
    let got = c.validate_credential(cred, info).map_err(status_of)?;
    Ok((Status::SUCCESS, got))
}

/// `PMIx_Validate_credential`.
///
/// # Safety
/// `cred` is a byte object; `info` holds `ninfo` infos; `results` and `nresults` are NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Validate_credential(
    cred: *const CByteObject,
    info: *const CInfo,
    ninfo: usize,
    results: *mut *mut CInfo,
    nresults: *mut usize,
) -> CStatus {
    guard("PMIx_Validate_credential", || {
        // SAFETY: the caller's promise.
        unsafe {
            let (bytes, info) = (read_required_bytes(cred)?, read_infos(info, ninfo)?);
            blocking_infos(|c| validate(c, &bytes, &info), results, nresults)
        }
    })
}

/// `PMIx_Validate_credential_nb`: the callback is lent what the credential proves.
///
/// # Safety
/// As `PMIx_Validate_credential`; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Validate_credential_nb(
    cred: *const CByteObject,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<ValidationCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Validate_credential_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        let (bytes, info) = unsafe { (read_required_bytes(cred)?, read_infos(info, ninfo)?) };
        let data = CbData(cbdata);
        detached(move |c| {
            let (status, proved) = validate(c, &bytes, &info).unwrap_or_else(|s| (s, Vec::new()));
            let (array, n) = write_infos(&proved).unwrap_or((std::ptr::null_mut(), 0));
            guard_or("validation callback", (), || {
                // SAFETY: the caller's callback and data, with infos valid for the call.
                unsafe { cbfunc(status.0, array, n, data.ptr()) }
            });
            // SAFETY: the array written above, no longer lent.
            unsafe { free_infos(array, n) };
        })
    })
}
