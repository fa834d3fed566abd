//! The `PMIx_Data_*` calls (v5.0 ch. 11): the caller's `pmix_data_buffer_t` holds bytes of
//! this crate's codec (OpenPMIx 4.2's encoding, non-described as its release builds write)
//! in a block of libc's allocator, so the header macros that release a buffer free it.
//!
//! A C buffer's fields: `base_ptr` the block, `bytes_allocated` its size, `bytes_used` the
//! bytes packed, `pack_ptr` their end, `unpack_ptr` the next byte to unpack.

use std::ffi::{c_char, c_void};
use std::ptr;

use pmix::codec::compress::{compress, decompress};
use pmix::codec::{BufferType, DataBuffer};
use pmix::model::{DataType, Status, Value};

use crate::boundary::{c_bytes, c_strdup, free, guard, guard_or, read_cstr, read_text, slice_of};
use crate::types::{CByteObject, CDataArray, CDataBuffer, CProc, CStatus};
use crate::values::{copy_object, destruct_object, object_size, read_object, write_object};

/// The buffer type of a buffer packed for `target`: every peer of this library reads and
/// writes the non-described form, as OpenPMIx's release builds do.
const BUFFER_TYPE: BufferType = BufferType::NonDescribed;

/// The bytes of `b` not yet unpacked.
///
/// # Safety
/// `b` is a buffer of this library (or zeroed): `base_ptr` holds `bytes_used` bytes and
/// `unpack_ptr` points within them.
unsafe fn unread(b: &CDataBuffer) -> Result<&[u8], Status> {
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

/// The value a `pmix_value_t` object holds.
fn unwrap_value(v: Value) -> Value {
    match v {
        Value::Value(inner) => *inner,
        other => other,
    }
}

/// Append `bytes` to the buffer, growing its block with `realloc`.
///
/// # Safety
/// As [`unread`].
unsafe fn append(b: &mut CDataBuffer, bytes: &[u8]) -> Result<(), Status> {
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
unsafe fn release(b: &mut CDataBuffer) {
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

/// `PMIx_Data_pack`: pack `num_vals` objects of type `type_` from `src` (for strings, an
/// array of `char *`) at the end of the buffer.
///
/// # Safety
/// `buffer` is a buffer; `src` holds `num_vals` objects of the type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_pack(
    target: *const CProc,
    buffer: *mut CDataBuffer,
    src: *mut c_void,
    num_vals: i32,
    type_: u16,
) -> CStatus {
    guard("PMIx_Data_pack", || {
        let _ = target;
        let n = usize::try_from(num_vals).map_err(|_| Status::ERR_BAD_PARAM)?;
        if buffer.is_null() || (n > 0 && src.is_null()) {
            return Err(Status::ERR_BAD_PARAM);
        }
        let t = DataType(type_);
        let size = object_size(t).ok_or(Status::ERR_UNKNOWN_DATA_TYPE)?;
        let values = (0..n)
            // SAFETY: object `i` is at `i * size` in `src` (the caller's promise).
            .map(|i| unsafe { read_object(t, src.cast::<u8>().add(i * size).cast()) })
            .collect::<Result<Vec<_>, _>>()?;
        // The codec packs `pmix_value_t`s from the values they hold.
        let values: Vec<Value> = if t == DataType::VALUE {
            values.into_iter().map(unwrap_value).collect()
        } else {
            values
        };
        let mut packed = DataBuffer::with_type(BUFFER_TYPE);
        packed.pack_values(t, &values).map_err(|e| e.status())?;
        // SAFETY: the caller's buffer.
        unsafe { append(&mut *buffer, packed.bytes()) }
    })
}

/// `PMIx_Data_unpack`: unpack the next pack call's objects of type `type_` into `dest`,
/// which has room for `*max_num_values` of them; `*max_num_values` becomes their number.
/// When the pack call holds more, the first `*max_num_values` are written and the answer
/// is `PMIX_ERR_UNPACK_INADEQUATE_SPACE`.
///
/// # Safety
/// `buffer` is a buffer; `dest` has room for `*max_num_values` objects of the type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_unpack(
    source: *const CProc,
    buffer: *mut CDataBuffer,
    dest: *mut c_void,
    max_num_values: *mut i32,
    type_: u16,
) -> CStatus {
    guard("PMIx_Data_unpack", || {
        let _ = source;
        if buffer.is_null() || dest.is_null() || max_num_values.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's pointers.
        let (b, max) = unsafe { (&mut *buffer, *max_num_values) };
        let max = usize::try_from(max).map_err(|_| Status::ERR_BAD_PARAM)?;
        let t = DataType(type_);
        let size = object_size(t).ok_or(Status::ERR_UNKNOWN_DATA_TYPE)?;
        // SAFETY: the caller's buffer.
        let bytes = unsafe { unread(b)? };
        if bytes.is_empty() {
            return Err(Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        }
        let mut packed = DataBuffer::load(bytes.to_vec(), BUFFER_TYPE);
        // Too little room: the values that fit are written, and the call says the rest was
        // not read (as OpenPMIx's library does; the standard leaves their fate open).
        let (mut values, all) = packed.unpack_values_up_to(t, max).map_err(|e| e.status())?;
        if t == DataType::VALUE {
            // Each is written as a `pmix_value_t` holding it.
            values = values
                .into_iter()
                .map(|v| Value::Value(Box::new(v)))
                .collect();
        }
        let consumed = bytes.len() - packed.unread().len();
        for (i, v) in values.iter().enumerate() {
            // SAFETY: `dest` has room for `max >= values.len()` objects.
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
        // SAFETY: `consumed` bytes of the unread ones were read; the caller's count.
        unsafe {
            b.unpack_ptr = if b.unpack_ptr.is_null() {
                b.base_ptr.add(consumed)
            } else {
                b.unpack_ptr.add(consumed)
            };
            *max_num_values = i32::try_from(values.len()).unwrap_or(i32::MAX);
        }
        if all {
            Ok(())
        } else {
            Err(Status::ERR_UNPACK_INADEQUATE_SPACE)
        }
    })
}

/// `PMIx_Data_load`: the buffer takes over the payload's bytes (and the payload is left
/// empty), to unpack from the start.
///
/// # Safety
/// `buffer` is a buffer; `payload` a byte object whose bytes come from libc's allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_load(
    buffer: *mut CDataBuffer,
    payload: *mut CByteObject,
) -> CStatus {
    guard("PMIx_Data_load", || {
        if buffer.is_null() || payload.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's pointers; the payload's block becomes the buffer's.
        unsafe {
            let (b, p) = (&mut *buffer, &mut *payload);
            release(b);
            if !p.bytes.is_null() && p.size > 0 {
                b.base_ptr = p.bytes;
                b.bytes_allocated = p.size;
                b.bytes_used = p.size;
                b.pack_ptr = p.bytes.add(p.size);
                b.unpack_ptr = p.bytes;
            } else {
                free(p.bytes);
            }
            p.bytes = ptr::null_mut();
            p.size = 0;
        }
        Ok(())
    })
}

/// `PMIx_Data_unload`: the bytes not yet unpacked, in a new block the payload owns; the
/// buffer is left empty.
///
/// # Safety
/// `buffer` is a buffer; `payload` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_unload(
    buffer: *mut CDataBuffer,
    payload: *mut CByteObject,
) -> CStatus {
    guard("PMIx_Data_unload", || {
        if buffer.is_null() || payload.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's pointers.
        unsafe {
            let b = &mut *buffer;
            let bytes = unread(b)?;
            let out = if bytes.is_empty() {
                CByteObject {
                    bytes: ptr::null_mut(),
                    size: 0,
                }
            } else {
                CByteObject {
                    bytes: c_bytes(bytes)?,
                    size: bytes.len(),
                }
            };
            release(b);
            *payload = out;
        }
        Ok(())
    })
}

/// `PMIx_Data_buffer_load`: `bytes` as the buffer's payload, taken over (`PMIx_Data_load`).
///
/// # Safety
/// `b` is NULL or a buffer; `bytes` NULL or a block of libc's of `sz` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_buffer_load(b: *mut CDataBuffer, bytes: *mut c_char, sz: usize) {
    guard_or("PMIx_Data_buffer_load", (), || {
        let mut payload = CByteObject { bytes, size: sz };
        // SAFETY: the caller's promise, passed on.
        unsafe { PMIx_Data_load(b, &mut payload) };
    });
}

/// `PMIx_Data_buffer_unload`: the buffer's unread payload into `*bytes` and `*sz` (the
/// caller's to free; NULL and 0 when there is none or the unload fails), the buffer emptied.
///
/// # Safety
/// `b` is NULL or a buffer; `bytes` and `sz` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_buffer_unload(
    b: *mut CDataBuffer,
    bytes: *mut *mut c_char,
    sz: *mut usize,
) {
    guard_or("PMIx_Data_buffer_unload", (), || {
        let mut payload = CByteObject {
            bytes: ptr::null_mut(),
            size: 0,
        };
        // SAFETY: the caller's promise, passed on.
        let rc = unsafe { PMIx_Data_unload(b, &mut payload) };
        if rc != 0 {
            payload = CByteObject {
                bytes: ptr::null_mut(),
                size: 0,
            };
        }
        // SAFETY: the caller's promise.
        unsafe {
            if let Some(out) = bytes.as_mut() {
                *out = payload.bytes;
            } else {
                free(payload.bytes);
            }
            if let Some(out) = sz.as_mut() {
                *out = payload.size;
            }
        }
    });
}

/// `PMIx_Data_embed`: a copy of the payload's bytes becomes the buffer's content.
///
/// # Safety
/// `buffer` is a buffer; `payload` a byte object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_embed(
    buffer: *mut CDataBuffer,
    payload: *const CByteObject,
) -> CStatus {
    guard("PMIx_Data_embed", || {
        if buffer.is_null() || payload.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's pointers.
        unsafe {
            let (b, p) = (&mut *buffer, &*payload);
            let bytes = slice_of(p.bytes.cast::<u8>(), p.size)?.to_vec();
            release(b);
            append(b, &bytes)
        }
    })
}

/// `PMIx_Data_copy_payload`: append the bytes `src` has not unpacked to `dest`.
///
/// # Safety
/// Both are buffers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_copy_payload(
    dest: *mut CDataBuffer,
    src: *mut CDataBuffer,
) -> CStatus {
    guard("PMIx_Data_copy_payload", || {
        if dest.is_null() || src.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's buffers (copied first: they may be the same one).
        unsafe {
            let bytes = unread(&*src)?.to_vec();
            append(&mut *dest, &bytes)
        }
    })
}

/// Read the object `src` of type `t` as `PMIx_Data_copy` and `PMIx_Data_print` take it: a
/// string is the `char *` itself.
///
/// # Safety
/// `src` is a C object of type `t` (for a string, a string).
unsafe fn source(src: *const c_void, t: DataType) -> Result<Value, Status> {
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

/// `PMIx_Data_copy`: a deep copy of the object `src` of type `type_`, in a block of libc's
/// allocator (a string's copy is the `char *` itself; a cpuset's bitmap and a topology are
/// duplicated by hwloc).
///
/// # Safety
/// `dest` is writable; `src` as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_copy(
    dest: *mut *mut c_void,
    src: *mut c_void,
    type_: u16,
) -> CStatus {
    guard("PMIx_Data_copy", || {
        if dest.is_null() || src.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let t = DataType(type_);
        let copy: *mut c_void = if t == DataType::STRING {
            // SAFETY: a string, not NULL (the caller's promise).
            c_strdup(unsafe { read_text(src.cast()) }.unwrap_or_default())?.cast()
        } else {
            // SAFETY: an object of the type (the caller's promise).
            unsafe { copy_object(t, src)? }
        };
        // SAFETY: writable (the caller's promise).
        unsafe { *dest = copy };
        Ok(())
    })
}

/// `PMIx_Data_print`: the object as text (the codec's printing), in a string of libc's
/// allocator.
///
/// # Safety
/// `output` is writable; `prefix` NULL or a string; `src` as `PMIx_Data_copy` reads it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_print(
    output: *mut *mut c_char,
    prefix: *mut c_char,
    src: *mut c_void,
    type_: u16,
) -> CStatus {
    guard("PMIx_Data_print", || {
        if output.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let prefix = unsafe { read_cstr(prefix).unwrap_or_default() };
        let t = DataType(type_);
        let text = if t == DataType::DATA_ARRAY && !src.is_null() {
            // The array's type and size, without reading its elements: OpenPMIx prints no
            // more, and programs hand it a value's address as the array's.
            // SAFETY: `src` holds at least a data array's header (the caller's promise).
            let a: CDataArray = unsafe { ptr::read_unaligned(src.cast()) };
            format!(
                "{prefix}Data array of {}: {} elements",
                pmix::model::strings::data_type_string(DataType(a.type_)),
                a.size
            )
        } else {
            // SAFETY: the caller's promise.
            let v = unsafe { source(src, t)? };
            pmix::codec::print::print(&prefix, &v)
        };
        let text = c_strdup(&text)?;
        // SAFETY: writable (the caller's promise).
        unsafe { *output = text };
        Ok(())
    })
}

/// Compress or decompress `size` bytes at `inbytes` into a new block: `true` when done.
///
/// # Safety
/// `inbytes` holds `size` bytes; `outbytes` and `nbytes` are writable.
unsafe fn transform(
    inbytes: *const u8,
    size: usize,
    outbytes: *mut *mut u8,
    nbytes: *mut usize,
    f: fn(&[u8]) -> Option<Vec<u8>>,
) -> bool {
    if inbytes.is_null() || size == 0 || outbytes.is_null() || nbytes.is_null() {
        return false;
    }
    // SAFETY: the caller's promise.
    let Ok(input) = (unsafe { slice_of(inbytes, size) }) else {
        return false;
    };
    let Some(out) = f(input) else {
        return false;
    };
    let Ok(block) = c_bytes(&out) else {
        return false;
    };
    // SAFETY: writable (the caller's promise).
    unsafe {
        *outbytes = block.cast();
        *nbytes = out.len();
    }
    true
}

/// `PMIx_Data_compress`: the bytes compressed (OpenPMIx's zlib form), or `false` when they
/// are too few to gain from it.
///
/// # Safety
/// As `transform`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_compress(
    inbytes: *const u8,
    size: usize,
    outbytes: *mut *mut u8,
    nbytes: *mut usize,
) -> bool {
    guard_or("PMIx_Data_compress", false, || {
        // SAFETY: the caller's promise.
        unsafe { transform(inbytes, size, outbytes, nbytes, compress) }
    })
}

/// `PMIx_Data_decompress`: bytes of `PMIx_Data_compress` back, or `false`.
///
/// # Safety
/// As `transform`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_decompress(
    inbytes: *const u8,
    size: usize,
    outbytes: *mut *mut u8,
    nbytes: *mut usize,
) -> bool {
    guard_or("PMIx_Data_decompress", false, || {
        // SAFETY: the caller's promise.
        unsafe { transform(inbytes, size, outbytes, nbytes, decompress) }
    })
}
