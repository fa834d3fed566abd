//! `pmix_data_buffer_t` as the `PMIx_Data_*` calls use it: a block of libc's allocator
//! that packing appends to and unpacking reads from the front of; the payloads loaded into
//! one and unloaded from it; and the objects those calls pack, unpack, copy and print, laid
//! out side by side as C holds them.

use std::ffi::c_void;
use std::ptr;

use pmix::model::{DataType, Status, Value};

use super::basic::object_size;
use super::read::read_object;
use super::release::destruct_object;
use super::write::write_object;
use crate::boundary::{free, read_text, slice_of};
use crate::types::{CByteObject, CDataArray, CDataBuffer};

/// The bytes of `b` not yet unpacked.
///
/// # Safety
/// `b` is a buffer of this library (or zeroed): `base_ptr` holds `bytes_used` bytes and
/// `unpack_ptr` points within them.
pub(crate) unsafe fn unread(b: &CDataBuffer) -> Result<&[u8], Status> {
    if b.base_ptr.is_null() {
        return Ok(&[]);
    }
    let start = if b.unpack_ptr.is_null() {
        0
    } else {
        // SAFETY: both point into the same block (the caller's promise).
        usize::try_from(unsafe { b.unpack_ptr.offset_from(b.base_ptr) })
            .map_err(|_| Status::ERR_BAD_PARAM)?
    };
    if start > b.bytes_used {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: the block holds `bytes_used` bytes.
    let all = unsafe { slice_of(b.base_ptr.cast::<u8>(), b.bytes_used)? };
    Ok(&all[start..])
}

/// Append `bytes` to the buffer, growing its block with `realloc`.
///
/// # Safety
/// As [`unread`].
pub(crate) unsafe fn append(b: &mut CDataBuffer, bytes: &[u8]) -> Result<(), Status> {
    let read = if b.unpack_ptr.is_null() || b.base_ptr.is_null() {
        0
    } else {
        // SAFETY: both point into the same block.
        usize::try_from(unsafe { b.unpack_ptr.offset_from(b.base_ptr) }).unwrap_or(0)
    };
    let used = b.bytes_used + bytes.len();
    if used > b.bytes_allocated || b.base_ptr.is_null() {
        let size = used.max(b.bytes_allocated * 2).max(64);
        // SAFETY: `base_ptr` is NULL or a block of libc's allocator (the caller's promise).
        let grown = unsafe { libc::realloc(b.base_ptr.cast(), size) };
        if grown.is_null() {
            return Err(Status::ERR_NOMEM);
        }
        b.base_ptr = grown.cast();
        b.bytes_allocated = size;
    }
    // SAFETY: the block has room for `used` bytes; the new ones go after the old.
    unsafe {
        ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            b.base_ptr.cast::<u8>().add(b.bytes_used),
            bytes.len(),
        );
        b.bytes_used = used;
        b.pack_ptr = b.base_ptr.add(used);
        b.unpack_ptr = b.base_ptr.add(read);
    }
    Ok(())
}

/// Empty the buffer and release its block.
///
/// # Safety
/// As [`unread`].
pub(crate) unsafe fn release_buffer(b: &mut CDataBuffer) {
    // SAFETY: the caller's promise.
    unsafe { free(b.base_ptr) };
    *b = CDataBuffer {
        base_ptr: ptr::null_mut(),
        pack_ptr: ptr::null_mut(),
        unpack_ptr: ptr::null_mut(),
        bytes_allocated: 0,
        bytes_used: 0,
    };
}

/// Hand the payload's bytes over to the buffer, emptied first, to unpack from the start; the
/// payload is left empty.
///
/// # Safety
/// `b` as [`unread`]; `p.bytes` NULL or a block of libc's allocator of `p.size` bytes.
pub(crate) unsafe fn take_payload(b: &mut CDataBuffer, p: &mut CByteObject) {
    // SAFETY: the caller's promise; the payload's block becomes the buffer's.
    unsafe {
        release_buffer(b);
        if !p.bytes.is_null() && p.size > 0 {
            b.base_ptr = p.bytes;
            b.bytes_allocated = p.size;
            b.bytes_used = p.size;
            b.pack_ptr = p.bytes.add(p.size);
            b.unpack_ptr = p.bytes;
        } else {
            free(p.bytes);
        }
    }
    p.bytes = ptr::null_mut();
    p.size = 0;
}

/// Mark `consumed` more of the buffer's bytes as unpacked.
///
/// # Safety
/// As [`unread`], with at least `consumed` bytes unread.
pub(crate) unsafe fn consume(b: &mut CDataBuffer, consumed: usize) {
    // SAFETY: the caller's promise: the new position stays within the block.
    b.unpack_ptr = unsafe {
        if b.unpack_ptr.is_null() {
            b.base_ptr.add(consumed)
        } else {
            b.unpack_ptr.add(consumed)
        }
    };
}

/// The `n` objects of type `t` side by side at `src` (for strings, `char *`s).
///
/// # Safety
/// `src` holds `n` objects of type `t`.
pub(crate) unsafe fn read_objects(
    t: DataType,
    src: *const c_void,
    n: usize,
) -> Result<Vec<Value>, Status> {
    let size = object_size(t).ok_or(Status::ERR_UNKNOWN_DATA_TYPE)?;
    (0..n)
        // SAFETY: object `i` is at `i * size` (the caller's promise).
        .map(|i| unsafe { read_object(t, src.cast::<u8>().add(i * size).cast()) })
        .collect()
}

/// Write `values`, of type `t`, side by side at `dest`; on failure none stays written.
///
/// # Safety
/// `dest` has room for `values.len()` objects of type `t`.
pub(crate) unsafe fn write_objects(
    t: DataType,
    values: &[Value],
    dest: *mut c_void,
) -> Result<(), Status> {
    let size = object_size(t).ok_or(Status::ERR_UNKNOWN_DATA_TYPE)?;
    for (i, v) in values.iter().enumerate() {
        // SAFETY: `dest` has room for object `i` (the caller's promise).
        let slot = unsafe { dest.cast::<u8>().add(i * size) };
        // SAFETY: as above.
        if let Err(s) = unsafe { write_object(v, slot.cast()) } {
            for j in 0..i {
                // SAFETY: the objects before `i` were written here.
                unsafe { destruct_object(t, dest.cast::<u8>().add(j * size).cast()) };
            }
            return Err(s);
        }
    }
    Ok(())
}

/// Read the object `src` of type `t` as `PMIx_Data_copy` and `PMIx_Data_print` take it: a
/// string is the `char *` itself.
///
/// # Safety
/// `src` is a C object of type `t` (for a string, a string).
pub(crate) unsafe fn source(src: *const c_void, t: DataType) -> Result<Value, Status> {
    if src.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    if t == DataType::STRING {
        // SAFETY: the caller's promise.
        return Ok(Value::String(unsafe { read_text(src.cast()) }));
    }
    // SAFETY: the caller's promise.
    unsafe { read_object(t, src) }
}

/// The object `src` of type `t` as `PMIx_Data_print` prints it, after `prefix`: a data
/// array as its type and size only, without reading its elements (OpenPMIx prints no more,
/// and programs hand it a value's address as the array's).
///
/// # Safety
/// `src` as [`source`] reads it; for a data array, NULL or at least a data array's header.
pub(crate) unsafe fn print_object(
    prefix: &str,
    src: *const c_void,
    t: DataType,
) -> Result<String, Status> {
    if t == DataType::DATA_ARRAY && !src.is_null() {
        // SAFETY: the caller's promise.
        let a: CDataArray = unsafe { ptr::read_unaligned(src.cast()) };
        return Ok(format!(
            "{prefix}Data array of {}: {} elements",
            pmix::model::strings::data_type_string(DataType(a.type_)),
            a.size
        ));
    }
    // SAFETY: the caller's promise.
    let v = unsafe { source(src, t)? };
    Ok(pmix::codec::print::print(prefix, &v))
}
