//! hwloc's objects as C values (v5.0 §12.4): a `pmix_cpuset_t` and a `pmix_topology_t` whose
//! source is `"hwloc"` hold an `hwloc_bitmap_t` and an `hwloc_topology_t`, which C programs
//! use with hwloc's own calls. The model carries them as text: a bitmap as hwloc's list
//! (`0-3,8`: [`read_cpuset`], [`c_cpuset`]) and a topology as hwloc's XML ([`read_topology`],
//! [`c_topology`]). A copy duplicates the hwloc object ([`copy_cpuset`], [`copy_topology`]);
//! the destructors release it ([`destruct_cpuset`], [`destruct_topology`]). Only hwloc's
//! objects are understood: another source (a NULL source is read as hwloc's, as on the wire)
//! is `PMIX_ERR_NOT_SUPPORTED` when an object comes with it.

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::ptr;

use hwlocality_sys as hwloc;
use pmix::model::topology::cpuset_list;
use pmix::model::{Cpuset, Status, Topology};

use crate::boundary::{c_strdup, free, read_cstr};
use crate::types::CSourced;

/// Whether `source` names hwloc (a missing source is hwloc's, as on the wire).
pub(crate) fn is_hwloc(source: Option<&str>) -> bool {
    source.is_none_or(|s| s.eq_ignore_ascii_case("hwloc"))
}

/// An hwloc topology loaded from hwloc's XML as this machine's, I/O devices kept.
pub(crate) fn hwloc_topology(xml: &str) -> Result<hwloc::hwloc_topology_t, Status> {
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

/// Fill `t` with an hwloc topology loaded from `xml`, source `"hwloc"`. What `t` held is
/// overwritten, not released: OpenPMIx's construct leaves the source NULL, and a source the
/// caller set is a string it owns.
pub(crate) fn load_topology_into(t: &mut CSourced, xml: &str) -> Result<(), Status> {
    let loaded = hwloc_topology(xml)?;
    let source = match c_strdup("hwloc") {
        Ok(s) => s,
        Err(s) => {
            // SAFETY: the topology made above, not handed out.
            unsafe { hwloc::hwloc_topology_destroy(loaded) };
            return Err(s);
        }
    };
    t.source = source;
    t.object = loaded.cast();
    Ok(())
}

/// The source a C topology or cpuset names, `None` for NULL.
///
/// # Safety
/// `c.source` is NULL or a string.
pub(crate) unsafe fn sourced_source(c: &CSourced) -> Option<String> {
    // SAFETY: the caller's promise.
    unsafe { read_cstr(c.source) }
}
