//! Security (v5.0 chapter 16): `PMIx_Get_credential` and `PMIx_Validate_credential`.

use super::*;

/// Run `call`, a call of this chapter, through the library; any other is not one it
/// carries ([`NO_SUCH_CALL`]).
pub(super) fn run(l: &'static Lib, s: &Syms, call: ApiCall) -> Result<ApiOutput, Status> {
    Ok(match call {
        ApiCall::GetCredential { info, nb } => {
            let ci = l.infos_to_c(&info)?;
            let (st, bytes) = if nb {
                let f = need(s.get_cred_nb)?;
                let slot = Slot::<(Status, Vec<u8>)>::new();
                let cbdata = give(&slot);
                // SAFETY: infos of their length; credential_done frees the slot.
                let rc = unsafe { f(ci.ptr(), ci.v.len(), credential_done, cbdata) };
                start_and_wait(&slot, cbdata, rc, |s| (s, Vec::new()))
            } else {
                let mut bo = CByteObject {
                    bytes: std::ptr::null_mut(),
                    size: 0,
                };
                // SAFETY: infos of their length; the library fills the byte object with
                // malloc'd bytes, freed below.
                let rc = unsafe { need(s.get_cred)?(ci.ptr(), ci.v.len(), &mut bo) };
                // SAFETY: the byte object as the library filled it.
                let bytes = unsafe { bytes_of(&bo) };
                // SAFETY: malloc'd by the library (or NULL).
                unsafe { free(bo.bytes.cast()) };
                (Status(rc), bytes)
            };
            if st != Status::SUCCESS {
                return Ok(ApiOutput::status(st));
            }
            lock(&state().0).credential = Some(bytes.clone());
            ApiOutput::value(Ok(Value::ByteObject(bytes.into())))
        }
        ApiCall::ValidateCredential {
            credential,
            altered,
            info,
            nb,
        } => {
            let mut bytes = match credential {
                Some(b) => b,
                None => lock(&state().0)
                    .credential
                    .clone()
                    .ok_or(Status::ERR_BAD_PARAM)?,
            };
            if altered {
                crate::api::alter(&mut bytes);
            }
            let bo = CByteObject {
                bytes: bytes.as_mut_ptr().cast(),
                size: bytes.len(),
            };
            let ci = l.infos_to_c(&info)?;
            if nb {
                let f = need(s.validate_nb)?;
                let slot = Slot::<ApiOutput>::new();
                let cbdata = give(&slot);
                // SAFETY: a byte object over `bytes` and infos, alive until the callback
                // has run; validated frees the slot.
                let rc = unsafe { f(&bo, ci.ptr(), ci.v.len(), validated, cbdata) };
                start_and_wait(&slot, cbdata, rc, ApiOutput::status)
            } else {
                let f = need(s.validate)?;
                // SAFETY: as above; results released by results_of.
                results_of(l, |p, n| unsafe { f(&bo, ci.ptr(), ci.v.len(), p, n) })
            }
        }
        _ => return Err(NO_SUCH_CALL),
    })
}
