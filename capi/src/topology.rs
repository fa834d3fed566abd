//! Topologies, cpusets and locality for C callers (v5.0 §12.4). A `pmix_topology_t` and a
//! `pmix_cpuset_t` from `"hwloc"` hold hwloc objects C programs use with hwloc's own calls:
//! an `hwloc_topology_t` loaded from the description the client reads (the server's shared
//! topology, or this machine's), and an `hwloc_bitmap_t`. Each belongs to the caller until
//! `PMIx_Topology_destruct` or `PMIx_Cpuset_destruct` releases it.

use std::ffi::{CString, c_char, c_int, c_uint, c_void};
use std::ptr;

use hwlocality_sys as hwloc;
use pmix::model::topology::{cpuset_list, parse_cpuset_string, relative_locality};
use pmix::model::{Cpuset, Status};
use pmix::topology::Machine;

use crate::boundary::{c_strdup, free, guard, guard_or, read_cstr};
use crate::client::client;
use crate::types::CStatus;

/// `pmix_topology_t` and `pmix_cpuset_t`: a source (`"hwloc"`) and the source's object.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CSourced {
    pub source: *mut c_char,
    pub object: *mut c_void,
}

const _: () = assert!(size_of::<CSourced>() == 16);

/// `PMIX_CPUBIND_THREAD`: the calling thread's binding, not the process's.
const CPUBIND_THREAD: u8 = 1;

fn is_hwloc(source: Option<&str>) -> bool {
    source.is_none_or(|s| s.eq_ignore_ascii_case("hwloc"))
}

/// An hwloc topology loaded from hwloc's XML as this machine's, I/O devices kept.
fn hwloc_topology(xml: &str) -> Result<hwloc::hwloc_topology_t, Status> {
    let text = CString::new(xml).map_err(|_| Status::ERR_BAD_PARAM)?;
    let len = i32::try_from(text.as_bytes_with_nul().len()).map_err(|_| Status::ERR_BAD_PARAM)?;
    let mut topo: hwloc::hwloc_topology_t = ptr::null_mut();
    // SAFETY: hwloc's documented sequence: init a topology, configure it, load it; on a
    // failure after init it is destroyed. `text` outlives the load, which copies it.
    unsafe {
        if hwloc::hwloc_topology_init(&mut topo) != 0 {
            return Err(Status::ERR_NOMEM);
        }
        let loaded =
            hwloc::hwloc_topology_set_io_types_filter(topo, hwloc::HWLOC_TYPE_FILTER_KEEP_ALL) == 0
                && hwloc::hwloc_topology_set_flags(topo, hwloc::HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM)
                    == 0
                && hwloc::hwloc_topology_set_xmlbuffer(topo, text.as_ptr(), len) == 0
                && hwloc::hwloc_topology_load(topo) == 0;
        if !loaded {
            hwloc::hwloc_topology_destroy(topo);
            return Err(Status::ERROR);
        }
    }
    Ok(topo)
}

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
/// `topo` is NULL or a topology of `PMIx_Load_topology`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Topology_destruct(topo: *mut CSourced) {
    guard_or("PMIx_Topology_destruct", (), || {
        if topo.is_null() {
            return;
        }
        // SAFETY: the caller's topology, made by PMIx_Load_topology.
        unsafe {
            let t = &mut *topo;
            if !t.object.is_null() && is_hwloc(read_cstr(t.source).as_deref()) {
                hwloc::hwloc_topology_destroy(t.object.cast());
            }
            free(t.source);
            t.source = ptr::null_mut();
            t.object = ptr::null_mut();
        }
    });
}

/// Write `cpuset` into the C cpuset `out` as an hwloc bitmap.
///
/// # Safety
/// `out` is writable.
unsafe fn write_cpuset(cpuset: &Cpuset, out: &mut CSourced) -> Result<(), Status> {
    let list = cpuset_list(cpuset).map_err(|e| e.status())?;
    // SAFETY: a fresh bitmap, filled range by range, freed on failure.
    let bitmap = unsafe {
        let bitmap = hwloc::hwloc_bitmap_alloc();
        if bitmap.is_null() {
            return Err(Status::ERR_NOMEM);
        }
        for &(first, last) in list.ranges() {
            let (Ok(first), Ok(last)) = (c_uint::try_from(first), c_int::try_from(last)) else {
                hwloc::hwloc_bitmap_free(bitmap);
                return Err(Status::ERR_BAD_PARAM);
            };
            if hwloc::hwloc_bitmap_set_range(bitmap, first, last) != 0 {
                hwloc::hwloc_bitmap_free(bitmap);
                return Err(Status::ERR_NOMEM);
            }
        }
        bitmap
    };
    let source = match c_strdup("hwloc") {
        Ok(s) => s,
        Err(s) => {
            // SAFETY: the bitmap made above.
            unsafe { hwloc::hwloc_bitmap_free(bitmap) };
            return Err(s);
        }
    };
    out.source = source;
    out.object = bitmap.cast();
    Ok(())
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
        // SAFETY: the caller's cpuset.
        unsafe { write_cpuset(&bound, &mut *cpuset) }
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
        // SAFETY: the caller's cpuset.
        unsafe { write_cpuset(&parsed, &mut *cpuset) }
    })
}

/// `PMIx_Cpuset_destruct`: release the hwloc bitmap and the source.
///
/// # Safety
/// `cpuset` is NULL or a cpuset of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Cpuset_destruct(cpuset: *mut CSourced) {
    guard_or("PMIx_Cpuset_destruct", (), || {
        if cpuset.is_null() {
            return;
        }
        // SAFETY: the caller's cpuset, made by this library.
        unsafe {
            let c = &mut *cpuset;
            if !c.object.is_null() && is_hwloc(read_cstr(c.source).as_deref()) {
                hwloc::hwloc_bitmap_free(c.object.cast());
            }
            free(c.source);
            c.source = ptr::null_mut();
            c.object = ptr::null_mut();
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
