//! What the fabric and distance calls hand their callers: the `pmix_fabric_t` a
//! registration fills and an update and a deregistration read back, and arrays of device
//! distances.

use std::ptr;

use pmix::model::{DeviceDistance, Fabric, Status};

use super::fabric::{c_device_distance, destruct_device_distance};
use super::read::read_infos;
use super::release::free_infos;
use super::write::write_infos;
use crate::boundary::{c_strdup, calloc_array, free, read_cstr};
use crate::types::{CDeviceDistance, CFabric};

/// The fabric a struct of this library describes.
///
/// # Safety
/// `f` was filled by this library (or zeroed by the caller).
pub(crate) unsafe fn read_fabric(f: &CFabric) -> Result<Fabric, Status> {
    Ok(Fabric {
        // SAFETY: NULL or a string of ours.
        name: unsafe { read_cstr(f.name) },
        index: f.index as u64,
        // SAFETY: `ninfo` infos of ours.
        info: unsafe { read_infos(f.info, f.ninfo)? },
    })
}

/// Release what a fabric struct holds and clear it.
///
/// # Safety
/// `f` was filled by this library, or zeroed.
pub(crate) unsafe fn clear_fabric(f: &mut CFabric) {
    // SAFETY: blocks of ours, released once: the pointers are cleared below.
    unsafe {
        free(f.name);
        free_infos(f.info, f.ninfo);
    }
    *f = CFabric {
        name: ptr::null_mut(),
        index: 0,
        info: ptr::null_mut(),
        ninfo: 0,
        module: ptr::null_mut(),
    };
}

/// Fill a fabric struct with `fabric`, releasing what it held when `release` says it is ours (a
/// registration overwrites whatever the caller's struct held, as it may not be constructed).
///
/// # Safety
/// With `release`, `f` was filled by this library, or zeroed.
pub(crate) unsafe fn write_fabric(
    fabric: &Fabric,
    f: &mut CFabric,
    release: bool,
) -> Result<(), Status> {
    let index = usize::try_from(fabric.index).map_err(|_| Status::ERR_BAD_PARAM)?;
    let name = match fabric.name.as_deref() {
        Some(n) => c_strdup(n)?,
        None => ptr::null_mut(),
    };
    let (info, ninfo) = match write_infos(&fabric.info) {
        Ok(written) => written,
        Err(s) => {
            // SAFETY: the string made above.
            unsafe { free(name) };
            return Err(s);
        }
    };
    if release {
        // SAFETY: the caller's promise.
        unsafe { clear_fabric(f) };
    }
    *f = CFabric {
        name,
        index,
        info,
        ninfo,
        module: ptr::null_mut(),
    };
    Ok(())
}

/// `found` as a C array of libc's allocator, and its length (NULL and 0 for none).
pub(crate) fn write_distances(
    found: &[DeviceDistance],
) -> Result<(*mut CDeviceDistance, usize), Status> {
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
pub(crate) unsafe fn free_distances(array: *mut CDeviceDistance, n: usize) {
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
