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

use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::Arc;

use hwlocality_sys as hwloc;
use pmix::client::blocking::Client;
use pmix::model::topology::{parse_cpuset_string, relative_locality};
use pmix::model::{Cpuset, DeviceDistance, Info, Status, Topology};
use pmix::topology::Machine;

use crate::boundary::{c_strdup, calloc_array, free, guard, guard_or, read_cstr};
use crate::callbacks::CbData;
use crate::state::client::client;
use crate::state::threads::detached;
use crate::types::{CDeviceDistance, CInfo, CSourced, CStatus, DeviceDistCb};
use crate::values::{
    c_cpuset, c_device_distance, destruct_cpuset, destruct_device_distance, destruct_topology,
    hwloc_topology, is_hwloc, read_cpuset, read_infos, read_topology,
};

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
///
/// # Safety
/// `topo` is a `pmix_topology_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Load_topology(topo: *mut CSourced) -> CStatus {
    guard("PMIx_Load_topology", || {
        if topo.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's topology.
        let t = unsafe { &mut *topo };
        // SAFETY: its source is NULL or a string.
        if !is_hwloc(unsafe { read_cstr(t.source) }.as_deref()) {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let loaded = hwloc_topology(&machine_xml()?)?;
        let source = match c_strdup("hwloc") {
            Ok(s) => s,
            Err(s) => {
                // SAFETY: the topology made above, not handed out.
                unsafe { hwloc::hwloc_topology_destroy(loaded) };
                return Err(s);
            }
        };
        // SAFETY: the old source is the caller's to keep or ours to replace: OpenPMIx's
        // construct leaves it NULL; a source the caller set is a string it owns.
        t.source = source;
        t.object = loaded.cast();
        Ok(())
    })
}

/// `PMIx_Topology_destruct`: release the hwloc topology and the source.
///
/// # Safety
/// `topo` is NULL or a topology of this library (or one a C caller made of hwloc's).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Topology_destruct(topo: *mut CSourced) {
    guard_or("PMIx_Topology_destruct", (), || {
        if !topo.is_null() {
            // SAFETY: the caller's topology.
            unsafe { destruct_topology(&mut *topo) };
        }
    });
}

/// `PMIx_Get_cpuset`: the binding of this process (`PMIX_CPUBIND_PROCESS`) or thread
/// (`PMIX_CPUBIND_THREAD`).
///
/// # Safety
/// `cpuset` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Get_cpuset(cpuset: *mut CSourced, reference: u8) -> CStatus {
    guard("PMIx_Get_cpuset", || {
        if cpuset.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let bound = (client()?)
            .get_cpuset(reference == CPUBIND_THREAD)
            .map_err(|e| e.status())?;
        let written = c_cpuset(&bound)?;
        // SAFETY: the caller's cpuset, writable; its old contents are the caller's.
        unsafe { *cpuset = written };
        Ok(())
    })
}

/// `PMIx_Parse_cpuset_string`: a cpuset string (`hwloc:0-3`) as a cpuset.
///
/// # Safety
/// `cpuset_string` is a string; `cpuset` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Parse_cpuset_string(
    cpuset_string: *const c_char,
    cpuset: *mut CSourced,
) -> CStatus {
    guard("PMIx_Parse_cpuset_string", || {
        if cpuset.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let text = unsafe { read_cstr(cpuset_string) }.ok_or(Status::ERR_BAD_PARAM)?;
        let parsed = parse_cpuset_string(&text).map_err(|e| e.status())?;
        let written = c_cpuset(&parsed)?;
        // SAFETY: the caller's cpuset, writable; its old contents are the caller's.
        unsafe { *cpuset = written };
        Ok(())
    })
}

/// `PMIx_server_generate_cpuset`: the cpuset a `PMIX_CPUSET` string (`hwloc:0-3`) names,
/// in a process that runs a server (`PMIX_ERR_INIT` otherwise).
///
/// # Safety
/// `cpuset_string` is a C string; `cpuset` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_server_generate_cpuset(
    cpuset_string: *const c_char,
    cpuset: *mut CSourced,
) -> CStatus {
    let running = matches!(
        crate::state::server::caller(),
        Ok(crate::state::server::Caller::Host)
    );
    if !running {
        return Status::ERR_INIT.0;
    }
    // SAFETY: the caller's promise, passed on.
    unsafe { PMIx_Parse_cpuset_string(cpuset_string, cpuset) }
}

/// `PMIx_Cpuset_destruct`: release the hwloc bitmap and the source.
///
/// # Safety
/// `cpuset` is NULL or a cpuset of this library (or one a C caller made of hwloc's).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Cpuset_destruct(cpuset: *mut CSourced) {
    guard_or("PMIx_Cpuset_destruct", (), || {
        if !cpuset.is_null() {
            // SAFETY: the caller's cpuset.
            unsafe { destruct_cpuset(&mut *cpuset) };
        }
    });
}

/// `PMIx_Get_relative_locality`: how two processes' locality strings (`PMIX_LOCALITY_STRING`)
/// share the machine.
///
/// # Safety
/// `locality1` and `locality2` are strings; `locality` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Get_relative_locality(
    locality1: *const c_char,
    locality2: *const c_char,
    locality: *mut u16,
) -> CStatus {
    guard("PMIx_Get_relative_locality", || {
        if locality.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let (a, b) = unsafe { (read_cstr(locality1), read_cstr(locality2)) };
        let (a, b) = (
            a.ok_or(Status::ERR_BAD_PARAM)?,
            b.ok_or(Status::ERR_BAD_PARAM)?,
        );
        let shared = relative_locality(&a, &b).map_err(|e| e.status())?;
        // SAFETY: writable (the caller's promise).
        unsafe { *locality = shared.0 };
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
///
/// # Safety
/// `topo` and `cpuset` are NULL or, as [`read_topology`] and [`read_cpuset`] read them, a
/// topology and a cpuset.
unsafe fn read_origin(topo: *const CSourced, cpuset: *const CSourced) -> Result<Origin, Status> {
    // SAFETY: the caller's promise.
    let topology = match unsafe { topo.as_ref() } {
        // SAFETY: as above.
        Some(t) => Some(unsafe { read_topology(t)? }).filter(|t| t.topology.is_some()),
        None => None,
    };
    // SAFETY: the caller's promise.
    let cpuset = match unsafe { cpuset.as_ref() } {
        // SAFETY: as above.
        Some(c) => Some(unsafe { read_cpuset(c)? }).filter(|c| c.bitmap.is_some()),
        None => None,
    };
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

/// `found` as a C array of libc's allocator, and its length (NULL and 0 for none).
fn write_distances(found: &[DeviceDistance]) -> Result<(*mut CDeviceDistance, usize), Status> {
    if found.is_empty() {
        return Ok((ptr::null_mut(), 0));
    }
    let array: *mut CDeviceDistance = calloc_array(found.len())?;
    for (i, d) in found.iter().enumerate() {
        match c_device_distance(d) {
            // SAFETY: the array has `found.len()` slots; slot `i` is in it.
            Ok(written) => unsafe { array.add(i).write(written) },
            Err(s) => {
                // SAFETY: the array and the first `i` distances written above.
                unsafe { free_distances(array, i) };
                return Err(s);
            }
        }
    }
    Ok((array, found.len()))
}

/// Release `n` distances at `array` and the array (`PMIX_DEVICE_DIST_FREE`).
///
/// # Safety
/// `array` is NULL or an array of `n` distances of libc's allocator, their strings too.
unsafe fn free_distances(array: *mut CDeviceDistance, n: usize) {
    if array.is_null() {
        return;
    }
    for i in 0..n {
        // SAFETY: distance `i` is in the array (the caller's promise).
        unsafe { destruct_device_distance(&mut *array.add(i)) };
    }
    // SAFETY: the caller's promise.
    unsafe { free(array) };
}

/// `PMIx_Compute_distances`: the distances from `cpuset` to the devices of `topo` that the
/// directives choose (`PMIX_DEVICE_TYPE`, `PMIX_DEVICE_ID`; none: every device), in an
/// array of libc's allocator the caller releases (`PMIX_DEVICE_DIST_FREE`). A NULL
/// topology (or one without an object) is the client's own (this machine's before
/// `PMIx_Init`), a NULL cpuset (or one without a bitmap) this process's binding.
///
/// # Safety
/// `topo` and `cpuset` are NULL or a topology and a cpuset; `info` holds `ninfo` infos;
/// `distances` and `ndist` are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Compute_distances(
    topo: *mut CSourced,
    cpuset: *mut CSourced,
    info: *const CInfo,
    ninfo: usize,
    distances_out: *mut *mut CDeviceDistance,
    ndist: *mut usize,
) -> CStatus {
    guard("PMIx_Compute_distances", || {
        if distances_out.is_null() || ndist.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let (origin, directives) =
            unsafe { (read_origin(topo, cpuset)?, read_infos(info, ninfo)?) };
        let client = client().ok();
        let found = distances(client.as_deref(), origin, &directives)?;
        let (array, n) = write_distances(&found)?;
        // SAFETY: writable (the caller's promise).
        unsafe {
            *distances_out = array;
            *ndist = n;
        }
        Ok(())
    })
}

/// The distances lent to a callback until it calls the release function.
struct Lent(*mut CDeviceDistance, usize);

/// `pmix_release_cbfunc_t` for what [`deliver_distances`] lent.
///
/// # Safety
/// `cookie` is the one [`deliver_distances`] passed, released once.
unsafe extern "C" fn release_lent(cookie: *mut c_void) {
    guard_or("release callback", (), || {
        if !cookie.is_null() {
            // SAFETY: the box `deliver_distances` made, reclaimed once.
            let lent = unsafe { Box::from_raw(cookie.cast::<Lent>()) };
            // SAFETY: the array `deliver_distances` wrote.
            unsafe { free_distances(lent.0, lent.1) };
        }
    });
}

/// Call a distances callback with `outcome`, the array lent until it releases it.
fn deliver_distances(
    cbfunc: DeviceDistCb,
    outcome: Result<Vec<DeviceDistance>, Status>,
    data: CbData,
) {
    let (status, array, n) = match outcome.and_then(|found| write_distances(&found)) {
        Ok((array, n)) => (Status::SUCCESS, array, n),
        Err(s) => (s, ptr::null_mut(), 0),
    };
    let cookie = Box::into_raw(Box::new(Lent(array, n))).cast::<c_void>();
    guard_or("device distance callback", (), || {
        // SAFETY: the caller's callback and data, with distances valid until it releases
        // them.
        unsafe { cbfunc(status.0, array, n, data.ptr(), Some(release_lent), cookie) }
    });
}

/// `PMIx_Compute_distances_nb`: as `PMIx_Compute_distances`, measured on one of the client's
/// threads, which calls `cbfunc` with the distances (the library's until the callback calls
/// the release function it is given). The topology, the cpuset and the infos are read
/// before the call returns. Before `PMIx_Init` it answers `PMIX_ERR_INIT`.
///
/// # Safety
/// As `PMIx_Compute_distances`; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Compute_distances_nb(
    topo: *mut CSourced,
    cpuset: *mut CSourced,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<DeviceDistCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Compute_distances_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        let (origin, directives) =
            unsafe { (read_origin(topo, cpuset)?, read_infos(info, ninfo)?) };
        let data = CbData(cbdata);
        detached(move |c| {
            let outcome = distances(Some(c), origin, &directives);
            deliver_distances(cbfunc, outcome, data);
        })
    })
}

#[cfg(test)]
mod tests {
    //! Distances measured through the C calls, from a topology and a cpuset the caller
    //! passes (no client needed), and the arguments they refuse.

    #![allow(clippy::unwrap_used)] // a test fails loudly

    use super::*;
    use crate::test_fixtures::TWO_NICS;
    use crate::types::ReleaseCb;
    use crate::values::c_topology;

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

    #[test]
    fn distances_to_every_device_of_the_topology_given() {
        let (mut topo, mut cpuset) = origin();
        let mut array: *mut CDeviceDistance = ptr::null_mut();
        let mut n = 0;
        // SAFETY: C objects of this test, each released once; the array is the library's
        // to hand out and this test's to free.
        unsafe {
            let rc =
                PMIx_Compute_distances(&mut topo, &mut cpuset, ptr::null(), 0, &mut array, &mut n);
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
        let mut array: *mut CDeviceDistance = ptr::null_mut();
        let mut n = 0;
        // SAFETY: C objects of this test, each released once.
        unsafe {
            // Nowhere to put the distances.
            let rc = PMIx_Compute_distances(
                &mut topo,
                &mut cpuset,
                ptr::null(),
                0,
                ptr::null_mut(),
                &mut n,
            );
            assert_eq!(rc, Status::ERR_BAD_PARAM.0);
            // Infos counted but missing.
            let rc =
                PMIx_Compute_distances(&mut topo, &mut cpuset, ptr::null(), 2, &mut array, &mut n);
            assert_eq!(rc, Status::ERR_BAD_PARAM.0);
            assert!(array.is_null() && n == 0);
            // No callback, and no client for one.
            let rc = PMIx_Compute_distances_nb(
                &mut topo,
                &mut cpuset,
                ptr::null(),
                0,
                None,
                ptr::null_mut(),
            );
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
            let rc = PMIx_Compute_distances_nb(
                &mut topo,
                &mut cpuset,
                ptr::null(),
                0,
                Some(ignored),
                ptr::null_mut(),
            );
            assert_eq!(rc, Status::ERR_INIT.0);
            destruct_topology(&mut topo);
            destruct_cpuset(&mut cpuset);
        }
    }
}
