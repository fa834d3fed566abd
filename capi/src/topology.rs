//! Topologies, cpusets and locality for C callers (v5.0 §12.4). A `pmix_topology_t` and a
//! `pmix_cpuset_t` from `"hwloc"` hold hwloc objects C programs use with hwloc's own calls:
//! an `hwloc_topology_t` loaded from the description the client reads (the server's shared
//! topology, or this machine's), and an `hwloc_bitmap_t`. Each belongs to the caller until
//! `PMIx_Topology_destruct` or `PMIx_Cpuset_destruct` releases it.
//!
//! The same C structs cross values (`crate::values`) as the model's text forms: a bitmap
//! as hwloc's list (`0-3,8`, `read_cpuset`, `c_cpuset`) and a topology as hwloc's XML
//! (`read_topology`, `c_topology`). A copy of a C object duplicates its hwloc object
//! (`copy_cpuset`, `copy_topology`); the destructors release it (`destruct_cpuset`,
//! `destruct_topology`). Only hwloc's objects are understood: a source not hwloc's (a
//! NULL source is read as hwloc's, as on the wire) is `PMIX_ERR_NOT_SUPPORTED` when an
//! object comes with it.
//!
//! `PMIx_Compute_distances` measures from a cpuset to the devices of a topology, both read
//! as the model's text forms; its blocking form hands the caller an array of libc's
//! allocator (released with `PMIX_DEVICE_DIST_FREE`), its `_nb` form lends the array to the
//! callback until it calls the release function.

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::ptr;
use std::sync::Arc;

use hwlocality_sys as hwloc;
use pmix::client::blocking::Client;
use pmix::model::topology::{cpuset_list, parse_cpuset_string, relative_locality};
use pmix::model::{Cpuset, DeviceDistance, Info, Status, Topology};
use pmix::topology::Machine;

use crate::boundary::{c_strdup, calloc_array, free, guard, guard_or, read_cstr};
use crate::client::client;
use crate::nb::{CbData, detached};
use crate::types::{CDeviceDistance, CInfo, CSourced, CStatus};
use crate::values::{c_device_distance, destruct_device_distance, read_infos};

/// `pmix_release_cbfunc_t`.
type ReleaseCallback = unsafe extern "C" fn(*mut c_void);
/// `pmix_device_dist_cbfunc_t`.
type DistancesCallback = unsafe extern "C" fn(
    CStatus,
    *mut CDeviceDistance,
    usize,
    *mut c_void,
    Option<ReleaseCallback>,
    *mut c_void,
);

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

/// A fresh hwloc bitmap of the processing units of `cpuset`, which the caller frees. A
/// cpuset of another source than hwloc's is `PMIX_ERR_NOT_SUPPORTED`, a list that does not
/// parse `PMIX_ERR_BAD_PARAM`.
fn hwloc_bitmap(cpuset: &Cpuset) -> Result<hwloc::hwloc_bitmap_t, Status> {
    let list = cpuset_list(cpuset).map_err(|e| e.status())?;
    // SAFETY: a fresh bitmap, filled range by range, freed on failure.
    unsafe {
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
        Ok(bitmap)
    }
}

/// The hwloc object a `pmix_cpuset_t` or a `pmix_topology_t` holds.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// An `hwloc_bitmap_t`.
    Bitmap,
    /// An `hwloc_topology_t`.
    Topology,
}

impl Kind {
    /// A duplicate of the object `object`, which the caller releases.
    ///
    /// # Safety
    /// `object` is an hwloc object of this kind (a topology loaded).
    unsafe fn duplicate(self, object: *mut c_void) -> Result<*mut c_void, Status> {
        match self {
            Kind::Bitmap => {
                // SAFETY: a bitmap (the caller's promise).
                let copy = unsafe { hwloc::hwloc_bitmap_dup(object.cast_const().cast()) };
                if copy.is_null() {
                    return Err(Status::ERR_NOMEM);
                }
                Ok(copy.cast())
            }
            Kind::Topology => {
                let mut copy: hwloc::hwloc_topology_t = ptr::null_mut();
                // SAFETY: a topology (the caller's promise); hwloc refuses one not loaded.
                if unsafe { hwloc::hwloc_topology_dup(&mut copy, object.cast_const().cast()) } != 0
                    || copy.is_null()
                {
                    return Err(Status::ERROR);
                }
                Ok(copy.cast())
            }
        }
    }

    /// Release the object `object`.
    ///
    /// # Safety
    /// `object` is an hwloc object of this kind that nothing else releases.
    unsafe fn release(self, object: *mut c_void) {
        // SAFETY: the caller's promise.
        unsafe {
            match self {
                Kind::Bitmap => hwloc::hwloc_bitmap_free(object.cast()),
                Kind::Topology => hwloc::hwloc_topology_destroy(object.cast()),
            }
        }
    }
}

/// The source of a C object written with `has_object`: `source`, or hwloc's when it names
/// none but an object comes with it (no source is hwloc's, as on the wire).
fn c_source(source: Option<&str>, has_object: bool) -> Result<*mut c_char, Status> {
    match source {
        Some(s) => c_strdup(s),
        None if has_object => c_strdup("hwloc"),
        None => Ok(ptr::null_mut()),
    }
}

/// The C object of `source` and the hwloc `object` of `kind` (NULL for none), which it now
/// owns; on a failure the object is released.
///
/// # Safety
/// `object` is NULL or an hwloc object of `kind` that nothing else releases.
unsafe fn c_sourced(
    kind: Kind,
    source: Option<&str>,
    object: *mut c_void,
) -> Result<CSourced, Status> {
    match c_source(source, !object.is_null()) {
        Ok(source) => Ok(CSourced { source, object }),
        Err(s) => {
            if !object.is_null() {
                // SAFETY: the caller's object, handed to this function (its promise).
                unsafe { kind.release(object) };
            }
            Err(s)
        }
    }
}

/// The source of the C object `c` and whether its object, if it has one, is hwloc's (a
/// NULL source counts as hwloc's): another source's object is `PMIX_ERR_NOT_SUPPORTED`.
///
/// # Safety
/// `c.source` is NULL or a string.
unsafe fn hwloc_source(c: &CSourced) -> Result<Option<String>, Status> {
    // SAFETY: the caller's promise.
    let source = unsafe { read_cstr(c.source) };
    if !c.object.is_null() && !is_hwloc(source.as_deref()) {
        return Err(Status::ERR_NOT_SUPPORTED);
    }
    Ok(source)
}

/// A deep copy of the C object `c` of `kind`: its source and a duplicate of its object.
///
/// # Safety
/// `c.source` is NULL or a string; `c.object` NULL or an hwloc object of `kind` when the
/// source is hwloc's.
unsafe fn copy_sourced(kind: Kind, c: &CSourced) -> Result<CSourced, Status> {
    // SAFETY: the caller's promise.
    let source = unsafe { hwloc_source(c)? };
    let object = if c.object.is_null() {
        ptr::null_mut()
    } else {
        // SAFETY: an hwloc object of `kind` (the caller's promise).
        unsafe { kind.duplicate(c.object)? }
    };
    // SAFETY: the duplicate made above, or NULL.
    unsafe { c_sourced(kind, source.as_deref(), object) }
}

/// Release what the C object `c` of `kind` holds (its hwloc object, when the source is
/// hwloc's, and its source) and leave it empty.
///
/// # Safety
/// `c.source` is NULL or a block of libc's allocator; `c.object` NULL or, when the source
/// is hwloc's, an hwloc object of `kind`; nothing else releases them.
unsafe fn destruct_sourced(kind: Kind, c: &mut CSourced) {
    // SAFETY: the caller's promise.
    unsafe {
        if !c.object.is_null() && is_hwloc(read_cstr(c.source).as_deref()) {
            kind.release(c.object);
        }
        free(c.source);
    }
    c.source = ptr::null_mut();
    c.object = ptr::null_mut();
}

/// The C cpuset of `cpuset`: its source and a fresh hwloc bitmap of its list (NULL when it
/// has no bitmap), both the caller's to release ([`destruct_cpuset`]). A bitmap of another
/// source than hwloc's is `PMIX_ERR_NOT_SUPPORTED`, a list that does not parse
/// `PMIX_ERR_BAD_PARAM`.
pub(crate) fn c_cpuset(cpuset: &Cpuset) -> Result<CSourced, Status> {
    let bitmap = match cpuset.bitmap {
        Some(_) => hwloc_bitmap(cpuset)?.cast(),
        None => ptr::null_mut(),
    };
    // SAFETY: the bitmap made above, or NULL.
    unsafe { c_sourced(Kind::Bitmap, cpuset.source.as_deref(), bitmap) }
}

/// The C cpuset `c` as the model's: its bitmap in hwloc's list form (`0-3,8`); a cpuset
/// without a bitmap is one without.
///
/// # Safety
/// `c.source` is NULL or a string; `c.object` NULL or, when the source is hwloc's, an
/// hwloc bitmap.
pub(crate) unsafe fn read_cpuset(c: &CSourced) -> Result<Cpuset, Status> {
    // SAFETY: the caller's promise.
    let source = unsafe { hwloc_source(c)? };
    if c.object.is_null() {
        return Ok(Cpuset {
            source,
            bitmap: None,
        });
    }
    let bitmap: hwloc::hwloc_const_bitmap_t = c.object.cast_const().cast();
    // SAFETY: an hwloc bitmap; given no room, hwloc counts the list's characters.
    let len = unsafe { hwloc::hwloc_bitmap_list_snprintf(ptr::null_mut(), 0, bitmap) };
    let len = usize::try_from(len).map_err(|_| Status::ERROR)?;
    let mut text = vec![0u8; len + 1];
    // SAFETY: `text` has room for the list and its NUL.
    let written =
        unsafe { hwloc::hwloc_bitmap_list_snprintf(text.as_mut_ptr().cast(), text.len(), bitmap) };
    if usize::try_from(written) != Ok(len) {
        return Err(Status::ERROR);
    }
    text.truncate(len);
    let list = String::from_utf8(text).map_err(|_| Status::ERROR)?;
    Ok(Cpuset {
        source: source.or_else(|| Some("hwloc".into())),
        bitmap: Some(list),
    })
}

/// A deep copy of the C cpuset `c`, its bitmap duplicated (`hwloc_bitmap_dup`).
///
/// # Safety
/// As [`read_cpuset`].
pub(crate) unsafe fn copy_cpuset(c: &CSourced) -> Result<CSourced, Status> {
    // SAFETY: the caller's promise.
    unsafe { copy_sourced(Kind::Bitmap, c) }
}

/// Release the bitmap and the source of the C cpuset `c` and leave it empty.
///
/// # Safety
/// `c` is a cpuset of this library, or one a C caller made of hwloc's bitmap and a source
/// from libc's allocator, that nothing else releases.
pub(crate) unsafe fn destruct_cpuset(c: &mut CSourced) {
    // SAFETY: the caller's promise.
    unsafe { destruct_sourced(Kind::Bitmap, c) }
}

/// The C topology of `topology`: its source and an hwloc topology loaded from its XML (NULL
/// when it has none), both the caller's to release ([`destruct_topology`]). A description
/// of another source than hwloc's is `PMIX_ERR_NOT_SUPPORTED`.
pub(crate) fn c_topology(topology: &Topology) -> Result<CSourced, Status> {
    let loaded = match &topology.topology {
        Some(xml) => {
            if !is_hwloc(topology.source.as_deref()) {
                return Err(Status::ERR_NOT_SUPPORTED);
            }
            hwloc_topology(xml)?.cast()
        }
        None => ptr::null_mut(),
    };
    // SAFETY: the topology loaded above, or NULL.
    unsafe { c_sourced(Kind::Topology, topology.source.as_deref(), loaded) }
}

/// The C topology `c` as the model's: its hwloc topology exported as XML; a topology
/// without an object is one without a description.
///
/// # Safety
/// `c.source` is NULL or a string; `c.object` NULL or, when the source is hwloc's, an
/// hwloc topology.
pub(crate) unsafe fn read_topology(c: &CSourced) -> Result<Topology, Status> {
    // SAFETY: the caller's promise.
    let source = unsafe { hwloc_source(c)? };
    if c.object.is_null() {
        return Ok(Topology {
            source,
            topology: None,
        });
    }
    let topo: hwloc::hwloc_const_topology_t = c.object.cast_const().cast();
    let mut xml: *mut c_char = ptr::null_mut();
    let mut len: c_int = 0;
    // SAFETY: an hwloc topology (hwloc refuses one not loaded); `xml` receives a buffer of
    // hwloc's, released below with hwloc's call.
    if unsafe { hwloc::hwloc_topology_export_xmlbuffer(topo, &mut xml, &mut len, 0) } != 0
        || xml.is_null()
    {
        return Err(Status::ERROR);
    }
    // SAFETY: hwloc's buffer is a NUL-terminated text.
    let text = unsafe { CStr::from_ptr(xml) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: the buffer the export made, read above and not used again.
    unsafe { hwloc::hwloc_free_xmlbuffer(topo, xml) };
    Ok(Topology {
        source: source.or_else(|| Some("hwloc".into())),
        topology: Some(text),
    })
}

/// A deep copy of the C topology `c`, its topology duplicated (`hwloc_topology_dup`).
///
/// # Safety
/// As [`read_topology`].
pub(crate) unsafe fn copy_topology(c: &CSourced) -> Result<CSourced, Status> {
    // SAFETY: the caller's promise.
    unsafe { copy_sourced(Kind::Topology, c) }
}

/// Release the topology and the source of the C topology `c` and leave it empty.
///
/// # Safety
/// `c` is a topology of this library, or one a C caller made of hwloc's topology and a
/// source from libc's allocator, that nothing else releases.
pub(crate) unsafe fn destruct_topology(c: &mut CSourced) {
    // SAFETY: the caller's promise.
    unsafe { destruct_sourced(Kind::Topology, c) }
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
    cbfunc: DistancesCallback,
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
    cbfunc: Option<DistancesCallback>,
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
                _: Option<ReleaseCallback>,
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
