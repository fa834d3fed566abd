//! Fabric support (v5.0 chapter 15): `PMIx_Fabric_register`, `PMIx_Fabric_update` and
//! `PMIx_Fabric_deregister`.

use super::*;

/// Run `call`, a call of this chapter, through the library; any other is not one it
/// carries ([`NO_SUCH_CALL`]).
pub(super) fn run(l: &'static Lib, s: &Syms, call: ApiCall) -> Result<ApiOutput, Status> {
    Ok(match call {
        ApiCall::FabricRegister { info, nb } => {
            let ci = l.infos_to_c(&info)?;
            let mut guard = lock(&FABRIC);
            let fabric = guard.insert(Box::new(SendFabric(CFabric {
                name: std::ptr::null_mut(),
                index: 0,
                info: std::ptr::null_mut(),
                ninfo: 0,
                module: std::ptr::null_mut(),
            })));
            let fp: *mut CFabric = &raw mut fabric.0;
            let mut out = if nb {
                let f = need(s.fabric_register_nb)?;
                // SAFETY: a zeroed pmix_fabric_t that stays in FABRIC until deregistered.
                op_nb(|cb, d| unsafe { f(fp, ci.ptr(), ci.v.len(), cb, d) })
            } else {
                // SAFETY: as above.
                status_of(unsafe { need(s.fabric_register)?(fp, ci.ptr(), ci.v.len()) })
            };
            if out.status == Status::SUCCESS {
                // The fabric's information, as the library filled it in.
                out.results = l.infos_from_c(fabric.0.info, fabric.0.ninfo)?;
            }
            out
        }
        ApiCall::FabricUpdate { nb } => {
            let mut guard = lock(&FABRIC);
            let fabric = guard.as_mut().ok_or(Status::ERR_BAD_PARAM)?;
            let fp: *mut CFabric = &raw mut fabric.0;
            let mut out = if nb {
                let f = need(s.fabric_update_nb)?;
                // SAFETY: the fabric the library registered.
                op_nb(|cb, d| unsafe { f(fp, cb, d) })
            } else {
                // SAFETY: as above.
                status_of(unsafe { need(s.fabric_update)?(fp) })
            };
            if out.status == Status::SUCCESS {
                out.results = l.infos_from_c(fabric.0.info, fabric.0.ninfo)?;
            }
            out
        }
        ApiCall::FabricDeregister { nb } => {
            let mut guard = lock(&FABRIC);
            let fabric = guard.as_mut().ok_or(Status::ERR_BAD_PARAM)?;
            let fp: *mut CFabric = &raw mut fabric.0;
            let out = if nb {
                let f = need(s.fabric_deregister_nb)?;
                // SAFETY: the fabric the library registered.
                op_nb(|cb, d| unsafe { f(fp, cb, d) })
            } else {
                // SAFETY: as above.
                status_of(unsafe { need(s.fabric_deregister)?(fp) })
            };
            if out.status == Status::SUCCESS {
                // What the library hung on the struct is its own; forget the struct.
                if let Some(f) = guard.take() {
                    std::mem::forget(f);
                }
            }
            out
        }
        _ => return Err(NO_SUCH_CALL),
    })
}
