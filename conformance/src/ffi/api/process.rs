//! Process management (v5.0 chapter 12): `PMIx_Abort`, `PMIx_Spawn`,
//! `PMIx_Connect`/`PMIx_Disconnect`, and the locality calls of §12.4 (`PMIx_Get_cpuset`,
//! `PMIx_Get_relative_locality`, `PMIx_Compute_distances`).

use pmix::model::{Cpuset, Locality, Text};

use super::*;

/// Run `call`, a call of this chapter, through the library; any other is not one it
/// carries ([`NO_SUCH_CALL`]).
#[allow(clippy::too_many_lines)]
pub(super) fn run(l: &'static Lib, s: &Syms, call: ApiCall) -> Result<ApiOutput, Status> {
    Ok(match call {
        ApiCall::Abort {
            status,
            message,
            procs,
        } => {
            let msg = cstring(&message)?;
            let cp = procs_c(&procs);
            // SAFETY: a message string and a proc array of its length (or NULL).
            status_of(unsafe { need(s.abort)?(status.0, msg.as_ptr(), procs_ptr(&cp), cp.len()) })
        }
        ApiCall::Spawn { job_info, apps, nb } => {
            let cj = l.infos_to_c(&job_info)?;
            let mut owned = Vec::new();
            for a in &apps {
                let cmd = cstring(a.cmd.as_ref().map_or(&b""[..], Text::as_bytes))?;
                let argv = Argv::new(&a.argv.iter().flatten().collect::<Vec<_>>())?;
                let env = Argv::new(&a.env.iter().flatten().collect::<Vec<_>>())?;
                let cwd = a.cwd.as_ref().map(cstring).transpose()?;
                let info = l.infos_to_c(&a.info)?;
                owned.push((cmd, argv, env, cwd, info, a.maxprocs));
            }
            let capps: Vec<CApp> = owned
                .iter_mut()
                .map(|(cmd, argv, env, cwd, info, maxprocs)| CApp {
                    cmd: cmd.as_ptr().cast_mut(),
                    argv: argv.ptr(),
                    env: env.ptr(),
                    cwd: cwd
                        .as_ref()
                        .map_or(std::ptr::null_mut(), |c| c.as_ptr().cast_mut()),
                    maxprocs: *maxprocs,
                    info: info.ptr().cast_mut(),
                    ninfo: info.v.len(),
                })
                .collect();
            let (st, ns) = if nb {
                let f = need(s.spawn_nb)?;
                let slot = Slot::<(Status, String)>::new();
                let cbdata = give(&slot);
                // SAFETY: job info and apps built above, alive until the callback has run.
                let rc = unsafe {
                    f(
                        cj.ptr(),
                        cj.v.len(),
                        capps.as_ptr(),
                        capps.len(),
                        spawned,
                        cbdata,
                    )
                };
                start_and_wait(&slot, cbdata, rc, |s| (s, String::new()))
            } else {
                let mut ns = [0 as c_char; 256];
                // SAFETY: as above; `ns` is a pmix_nspace_t the library fills.
                let rc = unsafe {
                    need(s.spawn)?(
                        cj.ptr(),
                        cj.v.len(),
                        capps.as_ptr(),
                        capps.len(),
                        ns.as_mut_ptr(),
                    )
                };
                // SAFETY: NUL-terminated within its 256 bytes (zeroed, at most 255 written).
                let text = unsafe { CStr::from_ptr(ns.as_ptr()) };
                (Status(rc), text.to_string_lossy().into_owned())
            };
            if st == Status::SUCCESS {
                ApiOutput::value(Ok(Value::string(ns)))
            } else {
                ApiOutput::status(st)
            }
        }
        ApiCall::Connect { procs, info, nb } => {
            procs_info(l, s.connect, s.connect_nb, &procs, &info, nb)?
        }
        ApiCall::Disconnect { procs, info, nb } => {
            procs_info(l, s.disconnect, s.disconnect_nb, &procs, &info, nb)?
        }
        ApiCall::GetCpuset { thread } => {
            let mut cs = CSourced {
                source: std::ptr::null_mut(),
                object: std::ptr::null_mut(),
            };
            // SAFETY: a zeroed pmix_cpuset_t the library fills; PMIX_CPUBIND_PROCESS = 0,
            // PMIX_CPUBIND_THREAD = 1.
            check(unsafe { need(s.get_cpuset)?(&mut cs, u8::from(thread)) })?;
            let value = l
                .packed((&raw const cs).cast(), 1, DataType::PROC_CPUSET)
                .and_then(|b| l.decode::<Cpuset>(b, 1))
                .and_then(|mut v| v.pop().ok_or(Status::ERR_UNPACK_FAILURE));
            ApiOutput::value(value.map(|c| Value::ProcCpuset(Box::new(c))))
        }
        ApiCall::GetRelativeLocality {
            locality1,
            locality2,
        } => {
            let (a, b) = (cstring(&locality1)?, cstring(&locality2)?);
            let mut loc = 0u16;
            // SAFETY: two NUL-terminated strings and a pmix_locality_t to fill.
            check(unsafe { need(s.relative_locality)?(a.as_ptr(), b.as_ptr(), &mut loc) })?;
            ApiOutput::value(Ok(Value::LocType(Locality(loc))))
        }
        ApiCall::ComputeDistances { from, info, nb } => {
            let ci = l.infos_to_c(&info)?;
            let mut topo = CSourced {
                source: std::ptr::null_mut(),
                object: std::ptr::null_mut(),
            };
            let mut cs = CSourced {
                source: std::ptr::null_mut(),
                object: std::ptr::null_mut(),
            };
            // SAFETY: zeroed pmix_topology_t / pmix_cpuset_t the library fills (kept for the
            // process's life: the library may cache the topology).
            unsafe { check(need(s.load_topology)?(&mut topo))? };
            match from {
                Some(c) => {
                    let bytes = l.encode(&[c])?;
                    let rc = l.unpack_into(&bytes, (&raw mut cs).cast(), 1, DataType::PROC_CPUSET);
                    check(rc.0)?;
                }
                // SAFETY: as above.
                None => unsafe { check(need(s.get_cpuset)?(&mut cs, 0))? },
            }
            let (st, n) = if nb {
                let f = need(s.distances_nb)?;
                let slot = Slot::<(Status, usize)>::new();
                let cbdata = give(&slot);
                // SAFETY: the topology, cpuset and infos above; distances_done frees the slot.
                let rc = unsafe {
                    f(
                        &mut topo,
                        &mut cs,
                        ci.ptr(),
                        ci.v.len(),
                        distances_done,
                        cbdata,
                    )
                };
                start_and_wait(&slot, cbdata, rc, |s| (s, 0))
            } else {
                let mut d: *mut CDeviceDistance = std::ptr::null_mut();
                let mut n = 0usize;
                // SAFETY: as above; the array the library returns is freed below.
                let rc = unsafe {
                    need(s.distances)?(&mut topo, &mut cs, ci.ptr(), ci.v.len(), &mut d, &mut n)
                };
                if !d.is_null() {
                    for i in 0..n {
                        // SAFETY: `d` holds `n` distances whose strings are malloc'd.
                        unsafe {
                            free((*d.add(i)).uuid.cast());
                            free((*d.add(i)).osname.cast());
                        }
                    }
                    // SAFETY: the array itself, malloc'd by the library.
                    unsafe { free(d.cast()) };
                }
                (Status(rc), n)
            };
            check(st.0)?;
            ApiOutput::value(Ok(Value::Size(n as u64)))
        }
        _ => return Err(NO_SUCH_CALL),
    })
}

/// Connect and disconnect: `(procs, info)`, blocking or with an op callback.
fn procs_info(
    l: &'static Lib,
    blocking: Option<ProcsInfoFn>,
    non_blocking: Option<ProcsInfoNbFn>,
    procs: &[Proc],
    info: &[Info],
    nb: bool,
) -> Result<ApiOutput, Status> {
    let cp = procs_c(procs);
    let ci = l.infos_to_c(info)?;
    let (pp, np) = (procs_ptr(&cp), cp.len());
    Ok(if nb {
        let f = need(non_blocking)?;
        // SAFETY: procs and infos of their lengths, alive until the callback has run.
        op_nb(|cb, d| unsafe { f(pp, np, ci.ptr(), ci.v.len(), cb, d) })
    } else {
        // SAFETY: as above.
        status_of(unsafe { need(blocking)?(pp, np, ci.ptr(), ci.v.len()) })
    })
}
