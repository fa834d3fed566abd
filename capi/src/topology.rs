//! Topologies, cpusets and locality for C callers (v5.0 §12.4). A `pmix_topology_t` and a
//! `pmix_cpuset_t` from `"hwloc"` hold hwloc objects C programs use with hwloc's own calls:
//! an `hwloc_topology_t` loaded from the description the client reads (the server's shared
//! topology, or this machine's), and an `hwloc_bitmap_t`. Each belongs to the caller until
//! `PMIx_Topology_destruct` or `PMIx_Cpuset_destruct` releases it.
//!
//! The same C structs cross values as the model's text forms (`crate::values`' `hwloc`
//! module: conversions, copies and destructors of hwloc's objects).
//!
//! `PMIx_Compute_distances` measures from a cpuset to the devices of a topology, both read
//! as the model's text forms; its blocking form hands the caller an array of libc's
//! allocator (released with `PMIX_DEVICE_DIST_FREE`), its `_nb` form lends the array to the
//! callback until it calls the release function.

use std::ffi::c_void;
use std::sync::Arc;

use pmix::client::blocking::Client;
use pmix::model::topology::{parse_cpuset_string, relative_locality};
use pmix::model::{Cpuset, DeviceDistance, Info, Status, Topology};
use pmix::topology::Machine;

use crate::args::{Array, In, InOut, Out, Str};
use crate::boundary::{guard, guard_or};
use crate::callbacks::{CbData, call_distances};
use crate::state::client::client;
use crate::state::threads::detached;
use crate::types::{CDeviceDistance, CInfo, CSourced, CStatus, DeviceDistCb};
use crate::values::{c_cpuset, is_hwloc, load_topology_into, write_distances};

/// `PMIX_CPUBIND_THREAD`: the calling thread's binding, not the process's.
const CPUBIND_THREAD: u8 = 1;

/// The machine's description: the client's (the server's shared topology, else discovered),
/// or this machine's before `PMIx_Init`.
fn machine_xml() -> Result<String, Status> {
    let machine = match client() {
        Ok(c) => c.load_topology().map_err(|e| e.status())?,
        Err(_) => std::sync::Arc::new(Machine::discover().map_err(|e| e.status())?),
    };
    let topology = machine.to_topology().map_err(|e| e.status())?;
    topology.topology.ok_or(Status::ERR_NOT_FOUND)
}

/// `PMIx_Load_topology`: an hwloc topology of this machine in `topo`. A source other than
/// hwloc's is `PMIX_ERR_NOT_SUPPORTED`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Load_topology(topo: InOut<'_, CSourced>) -> CStatus {
    guard("PMIx_Load_topology", || {
        if !is_hwloc(topo.source()?.as_deref()) {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        load_topology_into(topo.get()?, &machine_xml()?)
    })
}

/// `PMIx_Topology_destruct`: release the hwloc topology and the source.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Topology_destruct(topo: InOut<'_, CSourced>) {
    guard_or("PMIx_Topology_destruct", (), || topo.destruct_topology());
}

/// `PMIx_Get_cpuset`: the binding of this process (`PMIX_CPUBIND_PROCESS`) or thread
/// (`PMIX_CPUBIND_THREAD`).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Get_cpuset(cpuset: Out<'_, CSourced>, reference: u8) -> CStatus {
    guard("PMIx_Get_cpuset", || {
        if cpuset.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let bound = (client()?)
            .get_cpuset(reference == CPUBIND_THREAD)
            .map_err(|e| e.status())?;
        // The old contents are the caller's.
        cpuset.set(c_cpuset(&bound)?);
        Ok(())
    })
}

/// `PMIx_Parse_cpuset_string`: a cpuset string (`hwloc:0-3`) as a cpuset.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Parse_cpuset_string(
    cpuset_string: Str<'_>,
    cpuset: Out<'_, CSourced>,
) -> CStatus {
    guard("PMIx_Parse_cpuset_string", || {
        if cpuset.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let text = cpuset_string.required()?;
        let parsed = parse_cpuset_string(&text).map_err(|e| e.status())?;
        // The old contents are the caller's.
        cpuset.set(c_cpuset(&parsed)?);
        Ok(())
    })
}

/// `PMIx_server_generate_cpuset`: the cpuset a `PMIX_CPUSET` string (`hwloc:0-3`) names,
/// in a process that runs a server (`PMIX_ERR_INIT` otherwise).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_generate_cpuset(
    cpuset_string: Str<'_>,
    cpuset: Out<'_, CSourced>,
) -> CStatus {
    let running = matches!(
        crate::state::server::caller(),
        Ok(crate::state::server::Caller::Host)
    );
    if !running {
        return Status::ERR_INIT.0;
    }
    PMIx_Parse_cpuset_string(cpuset_string, cpuset)
}

/// `PMIx_Cpuset_destruct`: release the hwloc bitmap and the source.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Cpuset_destruct(cpuset: InOut<'_, CSourced>) {
    guard_or("PMIx_Cpuset_destruct", (), || cpuset.destruct_cpuset());
}

/// `PMIx_Get_relative_locality`: how two processes' locality strings (`PMIX_LOCALITY_STRING`)
/// share the machine.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Get_relative_locality(
    locality1: Str<'_>,
    locality2: Str<'_>,
    locality: Out<'_, u16>,
) -> CStatus {
    guard("PMIx_Get_relative_locality", || {
        if locality.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let (a, b) = (locality1.required()?, locality2.required()?);
        let shared = relative_locality(&a, &b).map_err(|e| e.status())?;
        locality.set(shared.0);
        Ok(())
    })
}

/// What a distance computation measures from, read from the caller's arguments: a topology
/// (`None`: the client's own) and a cpuset (`None`: this process's binding).
struct Origin {
    topology: Option<Topology>,
    cpuset: Option<Cpuset>,
}

/// The topology and the cpuset a caller passed to `PMIx_Compute_distances`. A NULL one, or
/// one without its hwloc object, is left for [`distances`] to fill in.
fn read_origin(topo: In<'_, CSourced>, cpuset: In<'_, CSourced>) -> Result<Origin, Status> {
    let topology = topo.topology()?.filter(|t| t.topology.is_some());
    let cpuset = cpuset.cpuset()?.filter(|c| c.bitmap.is_some());
    Ok(Origin { topology, cpuset })
}

/// The machine of the client (the server's shared topology, else discovered), or this
/// machine discovered before `PMIx_Init`.
fn own_machine(client: Option<&Client>) -> Result<Arc<Machine>, Status> {
    match client {
        Some(c) => c.load_topology().map_err(|e| e.status()),
        None => Ok(Arc::new(Machine::discover().map_err(|e| e.status())?)),
    }
}

/// The distances from the origin's cpuset to the devices of its topology that `directives`
/// choose (`PMIX_DEVICE_TYPE`, `PMIX_DEVICE_ID`; none: every device).
fn distances(
    client: Option<&Client>,
    origin: Origin,
    directives: &[Info],
) -> Result<Vec<DeviceDistance>, Status> {
    let machine = match &origin.topology {
        Some(t) => Arc::new(Machine::from_topology(t).map_err(|e| e.status())?),
        None => own_machine(client)?,
    };
    let cpuset = match origin.cpuset {
        Some(c) => c,
        // This process's binding: the client's, or before init as the measured topology
        // reads it (this machine's when none was given).
        None => match client {
            Some(c) => c.get_cpuset(false).map_err(|e| e.status())?,
            None => machine.binding(false).map_err(|e| e.status())?,
        },
    };
    pmix::client::Client::compute_distances(&machine, &cpuset, directives).map_err(|e| e.status())
}

/// `PMIx_Compute_distances`: the distances from `cpuset` to the devices of `topo` that the
/// directives choose (`PMIX_DEVICE_TYPE`, `PMIX_DEVICE_ID`; none: every device), in an
/// array of libc's allocator the caller releases (`PMIX_DEVICE_DIST_FREE`). A NULL
/// topology (or one without an object) is the client's own (this machine's before
/// `PMIx_Init`), a NULL cpuset (or one without a bitmap) this process's binding.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Compute_distances(
    topo: In<'_, CSourced>,
    cpuset: In<'_, CSourced>,
    info: Array<'_, CInfo>,
    ninfo: usize,
    distances_out: Out<'_, *mut CDeviceDistance>,
    ndist: Out<'_, usize>,
) -> CStatus {
    guard("PMIx_Compute_distances", || {
        if distances_out.is_null() || ndist.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let (origin, directives) = (read_origin(topo, cpuset)?, info.infos(ninfo)?);
        let client = client().ok();
        let found = distances(client.as_deref(), origin, &directives)?;
        let (array, n) = write_distances(&found)?;
        distances_out.set(array);
        ndist.set(n);
        Ok(())
    })
}

/// `PMIx_Compute_distances_nb`: as `PMIx_Compute_distances`, measured on one of the client's
/// threads, which calls `cbfunc` with the distances (the library's until the callback calls
/// the release function it is given). The topology, the cpuset and the infos are read
/// before the call returns. Before `PMIx_Init` it answers `PMIX_ERR_INIT`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Compute_distances_nb(
    topo: In<'_, CSourced>,
    cpuset: In<'_, CSourced>,
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<DeviceDistCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Compute_distances_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        let (origin, directives) = (read_origin(topo, cpuset)?, info.infos(ninfo)?);
        let data = CbData(cbdata);
        detached(move |c| {
            let outcome = distances(Some(c), origin, &directives);
            call_distances(cbfunc, outcome, data);
        })
    })
}

#[cfg(test)]
mod tests {
    //! Distances measured through the C calls, from a topology and a cpuset the caller
    //! passes (no client needed), and the arguments they refuse.

    #![allow(clippy::unwrap_used)] // a test fails loudly

    use super::*;
    use crate::boundary::read_cstr;
    use crate::test_fixtures::TWO_NICS;
    use crate::types::ReleaseCb;
    use crate::values::{c_topology, destruct_cpuset, destruct_topology, free_distances};

    fn origin() -> (CSourced, CSourced) {
        let topo = c_topology(&Topology {
            source: Some("hwloc".into()),
            topology: Some(TWO_NICS.into()),
        })
        .unwrap();
        let cpuset = c_cpuset(&Cpuset {
            source: Some("hwloc".into()),
            bitmap: Some("0".into()),
        })
        .unwrap();
        (topo, cpuset)
    }

    /// The arguments of a distance computation from `topo` and `cpuset`.
    ///
    /// # Safety
    /// Both outlive the arguments.
    unsafe fn from<'a>(
        topo: &'a CSourced,
        cpuset: &'a CSourced,
    ) -> (In<'a, CSourced>, In<'a, CSourced>) {
        // SAFETY: the caller's promise; both are C objects this test made.
        unsafe { (In::new(topo), In::new(cpuset)) }
    }

    #[test]
    fn distances_to_every_device_of_the_topology_given() {
        let (mut topo, mut cpuset) = origin();
        let mut array: *mut CDeviceDistance = std::ptr::null_mut();
        let mut n = 0;
        // SAFETY: C objects of this test, each released once; the array is the library's
        // to hand out and this test's to free.
        unsafe {
            let (t, c) = from(&topo, &cpuset);
            let (out, nout) = (Out::new(&raw mut array), Out::new(&raw mut n));
            let rc = PMIx_Compute_distances(t, c, Array::null(), 0, out, nout);
            assert_eq!(rc, Status::SUCCESS.0);
            assert_eq!(n, 2);
            let names: Vec<_> = (0..n).map(|i| read_cstr((*array.add(i)).osname)).collect();
            assert_eq!(names, [Some("vnet0".into()), Some("vnet1".into())]);
            for i in 0..n {
                let d = *array.add(i);
                assert_eq!(d.type_, pmix::model::DeviceType::NETWORK.0);
                assert!(!d.uuid.is_null() && d.mindist <= d.maxdist);
            }
            free_distances(array, n);
            destruct_topology(&mut topo);
            destruct_cpuset(&mut cpuset);
        }
    }

    #[test]
    fn bad_arguments_are_refused() {
        let (mut topo, mut cpuset) = origin();
        let mut array: *mut CDeviceDistance = std::ptr::null_mut();
        let mut n = 0;
        // SAFETY: C objects of this test, each released once.
        unsafe {
            let (t, c) = from(&topo, &cpuset);
            // Nowhere to put the distances.
            let rc =
                PMIx_Compute_distances(t, c, Array::null(), 0, Out::null(), Out::new(&raw mut n));
            assert_eq!(rc, Status::ERR_BAD_PARAM.0);
            // Infos counted but missing.
            let (out, nout) = (Out::new(&raw mut array), Out::new(&raw mut n));
            let rc = PMIx_Compute_distances(t, c, Array::null(), 2, out, nout);
            assert_eq!(rc, Status::ERR_BAD_PARAM.0);
            assert!(array.is_null() && n == 0);
            // No callback, and no client for one.
            let none = std::ptr::null_mut();
            let rc = PMIx_Compute_distances_nb(t, c, Array::null(), 0, None, none);
            assert_eq!(rc, Status::ERR_BAD_PARAM.0);
            unsafe extern "C" fn ignored(
                _: CStatus,
                _: *mut CDeviceDistance,
                _: usize,
                _: *mut c_void,
                _: Option<ReleaseCb>,
                _: *mut c_void,
            ) {
            }
            let rc = PMIx_Compute_distances_nb(t, c, Array::null(), 0, Some(ignored), none);
            assert_eq!(rc, Status::ERR_INIT.0);
            destruct_topology(&mut topo);
            destruct_cpuset(&mut cpuset);
        }
    }
}
