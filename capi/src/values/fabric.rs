//! The fabric's and devices' structs as C objects: coordinates, geometries, device
//! distances and endpoints. Each is a struct of strings, arrays and byte objects, held behind
//! a pointer in a value and side by side in a data array; an array inside one (a
//! coordinate's values, a geometry's coordinates) is NULL when empty.

use std::ptr;

use pmix::model::{Coord, CoordView, DeviceDistance, DeviceType, Endpoint, Geometry, Status};

use super::basic::{c_byte_object, opt_strdup, read_bytes};
use crate::boundary::{calloc_array, free, read_cstr, slice_of};
use crate::types::{CByteObject, CCoord, CDeviceDistance, CEndpoint, CGeometry};

/// A `pmix_coord_t`.
///
/// # Safety
/// `c.coord` points to `c.dims` values (or `dims` is 0).
pub(super) unsafe fn read_coord(c: &CCoord) -> Result<Coord, Status> {
    // SAFETY: the caller's promise.
    let values = unsafe { slice_of(c.coord.cast_const(), c.dims)? };
    Ok(Coord {
        view: CoordView(c.view),
        coord: values.to_vec(),
    })
}

/// A `pmix_geometry_t`.
///
/// # Safety
/// Its strings are NULL or strings; `g.coordinates` holds `g.ncoords` coordinates (or
/// `ncoords` is 0), each as [`read_coord`] reads it.
pub(super) unsafe fn read_geometry(g: &CGeometry) -> Result<Geometry, Status> {
    // SAFETY: the caller's promise.
    let coordinates = unsafe { slice_of(g.coordinates.cast_const(), g.ncoords)? };
    Ok(Geometry {
        fabric: g.fabric as u64,
        // SAFETY: the caller's promise, field by field.
        uuid: unsafe { read_cstr(g.uuid) },
        // SAFETY: as above.
        osname: unsafe { read_cstr(g.osname) },
        coordinates: coordinates
            .iter()
            // SAFETY: as above, for each coordinate.
            .map(|c| unsafe { read_coord(c) })
            .collect::<Result<_, _>>()?,
    })
}

/// A `pmix_device_distance_t`.
///
/// # Safety
/// Its strings are NULL or strings.
pub(super) unsafe fn read_device_distance(d: &CDeviceDistance) -> DeviceDistance {
    DeviceDistance {
        // SAFETY: the caller's promise, field by field.
        uuid: unsafe { read_cstr(d.uuid) },
        // SAFETY: as above.
        osname: unsafe { read_cstr(d.osname) },
        device_type: DeviceType(d.type_),
        mindist: d.mindist,
        maxdist: d.maxdist,
    }
}

/// A `pmix_endpoint_t`.
///
/// # Safety
/// Its strings are NULL or strings; its byte object as [`read_bytes`] reads it.
pub(super) unsafe fn read_endpoint(e: &CEndpoint) -> Result<Endpoint, Status> {
    // SAFETY: the caller's promise, field by field.
    unsafe {
        Ok(Endpoint {
            uuid: read_cstr(e.uuid),
            osname: read_cstr(e.osname),
            endpt: read_bytes(&e.endpt)?,
        })
    }
}

/// A `pmix_coord_t` of `c`, its values in a block of libc's allocator (NULL when there are
/// none).
pub(super) fn c_coord(c: &Coord) -> Result<CCoord, Status> {
    let values = if c.coord.is_empty() {
        ptr::null_mut()
    } else {
        let p: *mut u32 = calloc_array(c.coord.len())?;
        // SAFETY: `p` has room for the values.
        unsafe { ptr::copy_nonoverlapping(c.coord.as_ptr(), p, c.coord.len()) };
        p
    };
    Ok(CCoord {
        view: c.view.0,
        coord: values,
        dims: c.coord.len(),
    })
}

/// A `pmix_geometry_t` of `g`, its strings and coordinates in blocks of libc's allocator
/// (the coordinates NULL when there are none). A fabric index wider than `size_t` is
/// `PMIX_ERR_BAD_PARAM`.
pub(super) fn c_geometry(g: &Geometry) -> Result<CGeometry, Status> {
    let mut c = CGeometry {
        fabric: usize::try_from(g.fabric).map_err(|_| Status::ERR_BAD_PARAM)?,
        uuid: ptr::null_mut(),
        osname: ptr::null_mut(),
        coordinates: ptr::null_mut(),
        ncoords: 0,
    };
    let filled = (|| {
        c.uuid = opt_strdup(g.uuid.as_deref())?;
        c.osname = opt_strdup(g.osname.as_deref())?;
        if !g.coordinates.is_empty() {
            c.coordinates = calloc_array(g.coordinates.len())?;
            // Zeroed coordinates hold nothing, so the whole array can be released.
            c.ncoords = g.coordinates.len();
            for (i, coord) in g.coordinates.iter().enumerate() {
                let written = c_coord(coord)?;
                // SAFETY: the array has `ncoords` slots; slot `i` is in it.
                unsafe { c.coordinates.add(i).write(written) };
            }
        }
        Ok(())
    })();
    if let Err(s) = filled {
        // SAFETY: every pointer of `c` is NULL or a block written above.
        unsafe { destruct_geometry(&mut c) };
        return Err(s);
    }
    Ok(c)
}

/// A `pmix_device_distance_t` of `d`, its strings in blocks of libc's allocator.
pub(crate) fn c_device_distance(d: &DeviceDistance) -> Result<CDeviceDistance, Status> {
    let uuid = opt_strdup(d.uuid.as_deref())?;
    let osname = match opt_strdup(d.osname.as_deref()) {
        Ok(p) => p,
        Err(s) => {
            // SAFETY: the string made above.
            unsafe { free(uuid) };
            return Err(s);
        }
    };
    Ok(CDeviceDistance {
        uuid,
        osname,
        type_: d.device_type.0,
        mindist: d.mindist,
        maxdist: d.maxdist,
    })
}

/// A `pmix_endpoint_t` of `e`, its strings and bytes in blocks of libc's allocator.
pub(super) fn c_endpoint(e: &Endpoint) -> Result<CEndpoint, Status> {
    let mut c = CEndpoint {
        uuid: ptr::null_mut(),
        osname: ptr::null_mut(),
        endpt: CByteObject {
            bytes: ptr::null_mut(),
            size: 0,
        },
    };
    let filled = (|| {
        c.uuid = opt_strdup(e.uuid.as_deref())?;
        c.osname = opt_strdup(e.osname.as_deref())?;
        c.endpt = c_byte_object(&e.endpt.0)?;
        Ok(())
    })();
    if let Err(s) = filled {
        // SAFETY: every pointer of `c` is NULL or a block written above.
        unsafe { destruct_endpoint(&mut c) };
        return Err(s);
    }
    Ok(c)
}

/// # Safety
/// As [`super::destruct_object`].
pub(super) unsafe fn destruct_coord(c: &mut CCoord) {
    // SAFETY: the caller's promise.
    unsafe { free(c.coord) };
    c.coord = ptr::null_mut();
    c.dims = 0;
}

/// # Safety
/// As [`super::destruct_object`], for the geometry's coordinates too.
pub(super) unsafe fn destruct_geometry(g: &mut CGeometry) {
    // SAFETY: the caller's promise.
    unsafe {
        free(g.uuid);
        free(g.osname);
        if !g.coordinates.is_null() {
            for i in 0..g.ncoords {
                destruct_coord(&mut *g.coordinates.add(i));
            }
            free(g.coordinates);
        }
    }
    g.uuid = ptr::null_mut();
    g.osname = ptr::null_mut();
    g.coordinates = ptr::null_mut();
    g.ncoords = 0;
}

/// Release the strings of a device distance and leave them NULL (`PMIX_DEVICE_DIST_DESTRUCT`).
///
/// # Safety
/// As [`super::destruct_object`].
pub(crate) unsafe fn destruct_device_distance(d: &mut CDeviceDistance) {
    // SAFETY: the caller's promise.
    unsafe {
        free(d.uuid);
        free(d.osname);
    }
    d.uuid = ptr::null_mut();
    d.osname = ptr::null_mut();
}

/// # Safety
/// As [`super::destruct_object`].
pub(super) unsafe fn destruct_endpoint(e: &mut CEndpoint) {
    // SAFETY: the caller's promise.
    unsafe {
        free(e.uuid);
        free(e.osname);
        free(e.endpt.bytes);
    }
    e.uuid = ptr::null_mut();
    e.osname = ptr::null_mut();
    e.endpt = CByteObject {
        bytes: ptr::null_mut(),
        size: 0,
    };
}
