//! Credentials: getting one (`PMIx_Get_credential`) and validating one
//! (`PMIx_Validate_credential`), each with its `_nb` form.

use std::ffi::c_void;

use pmix::client::blocking::Client;
use pmix::model::{Info, Status};

use super::{Outcome, blocking_infos, status_of};
use crate::args::{Array, In, Out};
use crate::boundary::{c_bytes, guard};
use crate::callbacks::{CbData, call_credential, call_validation};
use crate::state::client::client;
use crate::state::threads::detached;
use crate::types::{CByteObject, CInfo, CStatus, CredentialCb, ValidationCb};

/// `PMIx_Get_credential`: the credential's bytes, in a block of libc's allocator the caller
/// releases (`PMIX_BYTE_OBJECT_DESTRUCT`).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Get_credential(
    info: Array<'_, CInfo>,
    ninfo: usize,
    credential: Out<'_, CByteObject>,
) -> CStatus {
    guard("PMIx_Get_credential", || {
        if credential.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let info = info.infos(ninfo)?;
        let (cred, _) = client()?.get_credential(&info).map_err(status_of)?;
        let bytes = c_bytes(&cred.0)?;
        credential.set(CByteObject {
            bytes,
            size: cred.0.len(),
        });
        Ok(())
    })
}

/// `PMIx_Get_credential_nb`: the callback is lent the credential and what describes it.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Get_credential_nb(
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<CredentialCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Get_credential_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        let info = info.infos(ninfo)?;
        let data = CbData(cbdata);
        detached(move |c| {
            let (status, bytes, described) = match c.get_credential(&info) {
                Ok((cred, described)) => (Status::SUCCESS, cred.0, described),
                Err(e) => (e.status(), Vec::new(), Vec::new()),
            };
            call_credential(cbfunc, status, bytes, &described, data);
        })
    })
}

fn validate(c: &Client, cred: &[u8], info: &[Info]) -> Outcome {
    let got = c.validate_credential(cred, info).map_err(status_of)?;
    Ok((Status::SUCCESS, got))
}

/// `PMIx_Validate_credential`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Validate_credential(
    cred: In<'_, CByteObject>,
    info: Array<'_, CInfo>,
    ninfo: usize,
    results: Out<'_, *mut CInfo>,
    nresults: Out<'_, usize>,
) -> CStatus {
    guard("PMIx_Validate_credential", || {
        let (bytes, info) = (cred.bytes()?, info.infos(ninfo)?);
        blocking_infos(|c| validate(c, &bytes, &info), results, nresults)
    })
}

/// `PMIx_Validate_credential_nb`: the callback is lent what the credential proves.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Validate_credential_nb(
    cred: In<'_, CByteObject>,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<ValidationCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Validate_credential_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        let (bytes, info) = (cred.bytes()?, info.infos(ninfo)?);
        let data = CbData(cbdata);
        detached(move |c| {
            let (status, proved) = validate(c, &bytes, &info).unwrap_or_else(|s| (s, Vec::new()));
            call_validation(cbfunc, status, &proved, data);
        })
    })
}
