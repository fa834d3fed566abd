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

use crate::args::{Array, Block, Data, In, InOut, Objects, Out, Str};
use crate::boundary::{c_bytes, c_strdup, guard, guard_or};
use crate::types::{CByteObject, CDataBuffer, CProc, CStatus};
use crate::values::object_size;

/// The buffer type of a buffer packed for `target`: every peer of this library reads and
/// writes the non-described form, as OpenPMIx's release builds do.
const BUFFER_TYPE: BufferType = BufferType::NonDescribed;

/// The value a `pmix_value_t` object holds.
fn unwrap_value(v: Value) -> Value {
    match v {
        Value::Value(inner) => *inner,
        other => other,
    }
}

/// `PMIx_Data_pack`: pack `num_vals` objects of type `type_` from `src` (for strings, an
/// array of `char *`) at the end of the buffer.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_pack(
    target: In<'_, CProc>,
    mut buffer: InOut<'_, CDataBuffer>,
    src: Objects<'_>,
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
        object_size(t).ok_or(Status::ERR_UNKNOWN_DATA_TYPE)?;
        let values = src.read(t, n)?;
        // The codec packs `pmix_value_t`s from the values they hold.
        let values: Vec<Value> = if t == DataType::VALUE {
            values.into_iter().map(unwrap_value).collect()
        } else {
            values
        };
        let mut packed = DataBuffer::with_type(BUFFER_TYPE);
        packed.pack_values(t, &values).map_err(|e| e.status())?;
        buffer.append(packed.bytes())
    })
}

/// `PMIx_Data_unpack`: unpack the next pack call's objects of type `type_` into `dest`,
/// which has room for `*max_num_values` of them; `*max_num_values` becomes their number.
/// When the pack call holds more, the first `*max_num_values` are written and the answer
/// is `PMIX_ERR_UNPACK_INADEQUATE_SPACE`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_unpack(
    source: In<'_, CProc>,
    mut buffer: InOut<'_, CDataBuffer>,
    dest: Objects<'_>,
    max_num_values: InOut<'_, i32>,
    type_: u16,
) -> CStatus {
    guard("PMIx_Data_unpack", || {
        let _ = source;
        if buffer.is_null() || dest.is_null() || max_num_values.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let max_num_values = max_num_values.get()?;
        let max = usize::try_from(*max_num_values).map_err(|_| Status::ERR_BAD_PARAM)?;
        let t = DataType(type_);
        object_size(t).ok_or(Status::ERR_UNKNOWN_DATA_TYPE)?;
        let bytes = buffer.unread()?;
        if bytes.is_empty() {
            return Err(Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        }
        let mut packed = DataBuffer::load(bytes.clone(), BUFFER_TYPE);
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
        // `dest` has room for `max >= values.len()` objects.
        dest.write(t, &values)?;
        buffer.consume(consumed)?;
        *max_num_values = i32::try_from(values.len()).unwrap_or(i32::MAX);
        if all {
            Ok(())
        } else {
            Err(Status::ERR_UNPACK_INADEQUATE_SPACE)
        }
    })
}

/// `PMIx_Data_load`: the buffer takes over the payload's bytes (and the payload is left
/// empty), to unpack from the start.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_load(
    buffer: InOut<'_, CDataBuffer>,
    payload: InOut<'_, CByteObject>,
) -> CStatus {
    guard("PMIx_Data_load", || {
        if buffer.is_null() || payload.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        buffer.load(payload)
    })
}

/// `PMIx_Data_unload`: the bytes not yet unpacked, in a new block the payload owns; the
/// buffer is left empty.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_unload(
    buffer: InOut<'_, CDataBuffer>,
    payload: Out<'_, CByteObject>,
) -> CStatus {
    guard("PMIx_Data_unload", || {
        if buffer.is_null() || payload.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        payload.set(unload(buffer)?);
        Ok(())
    })
}

/// The bytes of the buffer not yet unpacked, in a new block (NULL for none); the buffer is
/// left empty.
fn unload(mut buffer: InOut<'_, CDataBuffer>) -> Result<CByteObject, Status> {
    let bytes = buffer.unread()?;
    // Copied before the buffer lets go of them: out of memory, the buffer keeps them.
    let out = if bytes.is_empty() {
        CByteObject {
            bytes: ptr::null_mut(),
            size: 0,
        }
    } else {
        CByteObject {
            bytes: c_bytes(&bytes)?,
            size: bytes.len(),
        }
    };
    buffer.release()?;
    Ok(out)
}

/// The bytes of the buffer not yet unpacked; the buffer is left empty.
fn take_unread(mut buffer: InOut<'_, CDataBuffer>) -> Result<Vec<u8>, Status> {
    let bytes = buffer.unread()?;
    buffer.release()?;
    Ok(bytes)
}

/// `PMIx_Data_buffer_load`: `bytes` as the buffer's payload, taken over (`PMIx_Data_load`).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_buffer_load(b: InOut<'_, CDataBuffer>, bytes: Block, sz: usize) {
    guard_or("PMIx_Data_buffer_load", (), || {
        let _ = b.load_block(bytes, sz);
    });
}

/// `PMIx_Data_buffer_unload`: the buffer's unread payload into `*bytes` and `*sz` (the
/// caller's to free; NULL and 0 when there is none or the unload fails), the buffer emptied.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_buffer_unload(
    b: InOut<'_, CDataBuffer>,
    bytes: Out<'_, *mut c_char>,
    sz: Out<'_, usize>,
) {
    guard_or("PMIx_Data_buffer_unload", (), || {
        let (block, size) = if bytes.is_null() {
            // Nowhere to hand a block: the buffer is emptied all the same, and the size
            // says what it held.
            (ptr::null_mut(), take_unread(b).map_or(0, |u| u.len()))
        } else {
            unload(b).map_or((ptr::null_mut(), 0), |p| (p.bytes, p.size))
        };
        bytes.set(block);
        sz.set(size);
    });
}

/// `PMIx_Data_embed`: a copy of the payload's bytes becomes the buffer's content.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_embed(
    mut buffer: InOut<'_, CDataBuffer>,
    payload: In<'_, CByteObject>,
) -> CStatus {
    guard("PMIx_Data_embed", || {
        if buffer.is_null() || payload.get().is_none() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let bytes = payload.bytes()?;
        buffer.release()?;
        buffer.append(&bytes)
    })
}

/// `PMIx_Data_copy_payload`: append the bytes `src` has not unpacked to `dest`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_copy_payload(
    mut dest: InOut<'_, CDataBuffer>,
    src: In<'_, CDataBuffer>,
) -> CStatus {
    guard("PMIx_Data_copy_payload", || {
        if dest.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // Copied first: they may be the same buffer.
        let bytes = src.unread()?;
        dest.append(&bytes)
    })
}

/// `PMIx_Data_copy`: a deep copy of the object `src` of type `type_`, in a block of libc's
/// allocator (a string's copy is the `char *` itself; a cpuset's bitmap and a topology are
/// duplicated by hwloc).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_copy(dest: Out<'_, *mut c_void>, src: Data<'_>, type_: u16) -> CStatus {
    guard("PMIx_Data_copy", || {
        if dest.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        dest.set(src.copy(DataType(type_))?);
        Ok(())
    })
}

/// `PMIx_Data_print`: the object as text (the codec's printing), in a string of libc's
/// allocator.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_print(
    output: Out<'_, *mut c_char>,
    prefix: Str<'_>,
    src: Data<'_>,
    type_: u16,
) -> CStatus {
    guard("PMIx_Data_print", || {
        if output.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let prefix = prefix.text().unwrap_or_default();
        let text = src.print(&prefix, DataType(type_))?;
        output.set(c_strdup(&text)?);
        Ok(())
    })
}

/// Compress or decompress the `size` bytes of `inbytes` into a new block: `true` when done.
fn transform(
    inbytes: Array<'_, u8>,
    size: usize,
    outbytes: Out<'_, *mut u8>,
    nbytes: Out<'_, usize>,
    f: fn(&[u8]) -> Option<Vec<u8>>,
) -> bool {
    if inbytes.is_null() || size == 0 || outbytes.is_null() || nbytes.is_null() {
        return false;
    }
    let Ok(input) = inbytes.slice(size) else {
        return false;
    };
    let Some(out) = f(input) else {
        return false;
    };
    let Ok(block) = c_bytes(&out) else {
        return false;
    };
    outbytes.set(block.cast());
    nbytes.set(out.len());
    true
}

/// `PMIx_Data_compress`: the bytes compressed (OpenPMIx's zlib form), or `false` when they
/// are too few to gain from it.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_compress(
    inbytes: Array<'_, u8>,
    size: usize,
    outbytes: Out<'_, *mut u8>,
    nbytes: Out<'_, usize>,
) -> bool {
    guard_or("PMIx_Data_compress", false, || {
        transform(inbytes, size, outbytes, nbytes, compress)
    })
}

/// `PMIx_Data_decompress`: bytes of `PMIx_Data_compress` back, or `false`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_decompress(
    inbytes: Array<'_, u8>,
    size: usize,
    outbytes: Out<'_, *mut u8>,
    nbytes: Out<'_, usize>,
) -> bool {
    guard_or("PMIx_Data_decompress", false, || {
        transform(inbytes, size, outbytes, nbytes, decompress)
    })
}
