//! A value's data handed out as `PMIx_Value_unload` does: the standard's form, a copy from
//! libc's allocator, and OpenPMIx 4.2's, which copies some types into the caller's storage
//! and hands out others' own blocks.

use std::ffi::{CStr, c_char, c_void};
use std::ptr;

use pmix::model::{DataType, Status, Text, Value};

use super::basic::{by_pointer, object_size};
use super::read::read_value;
use super::write::write_object;
use crate::boundary::{c_strdup, calloc_array, free, read_text};
use crate::types::CValue;

/// The standard's `PMIx_Value_unload`: a copy of the value's object in a block from
/// libc's allocator, and its size (a string's with its NUL).
///
/// # Safety
/// `val` is a value.
pub(crate) unsafe fn unload_allocated(
    val: &CValue,
    data: &mut *mut c_void,
    sz: &mut Option<usize>,
) -> Result<(), Status> {
    // SAFETY: the caller's promise.
    let v = unsafe { read_value(val)? };
    let (block, size): (*mut c_void, usize) = match &v {
        Value::Undef => (ptr::null_mut(), 0),
        Value::String(s) => {
            let s = s.as_ref().map_or(&[][..], Text::as_bytes);
            (c_strdup(s)?.cast(), s.len() + 1)
        }
        // The address itself, as it was loaded.
        Value::Pointer(p) => (p.0 as *mut c_void, size_of::<*mut c_void>()),
        other => (
            allocated_copy(other)?,
            object_size(other.data_type()).unwrap_or(0),
        ),
    };
    *data = block;
    *sz = Some(size);
    Ok(())
}

/// A copy of `v`'s object in a block of libc's allocator.
fn allocated_copy(v: &Value) -> Result<*mut c_void, Status> {
    let size = object_size(v.data_type()).ok_or(Status::ERR_NOT_SUPPORTED)?;
    let p: *mut u8 = calloc_array(size)?;
    // SAFETY: `p` has room for one object of the type.
    if let Err(s) = unsafe { write_object(v, p.cast()) } {
        // SAFETY: `p` is ours.
        unsafe { free(p) };
        return Err(s);
    }
    Ok(p.cast())
}

/// OpenPMIx's `PMIx_Value_unload` (`crate::support::PMIx_Value_unload` says what it hands
/// out).
///
/// # Safety
/// `val` is a value; `*data`, for the types copied into it, has room for the type's object.
pub(crate) unsafe fn unload_as_openpmix(
    val: &CValue,
    data: &mut *mut c_void,
    sz: &mut Option<usize>,
) -> Result<(), Status> {
    let t = DataType(val.type_);
    let byte_like = matches!(
        t,
        DataType::BYTE_OBJECT
            | DataType::COMPRESSED_STRING
            | DataType::COMPRESSED_BYTE_OBJECT
            | DataType::REGEX
    );
    // The caller's storage is only read for the types copied into it.
    if t != DataType::STRING && !byte_like && data.is_null() {
        // The caller's storage is where the data goes (or, for a structure, a pointer the
        // library replaces): none given.
        return Err(Status::ERR_BAD_PARAM);
    }
    // The union is the value's, of type `t` (the caller's promise).
    let union = &val.data;
    match t {
        DataType::UNDEF => Err(Status::ERR_UNKNOWN_DATA_TYPE),
        DataType::STRING => {
            // SAFETY: a string value holds NULL or a C string.
            if let Some(s) = unsafe { read_text(union.string) } {
                *data = c_strdup(&s)?.cast();
                *sz = Some(s.len());
            }
            Ok(())
        }
        _ if byte_like => {
            // SAFETY: a byte-object value holds one in place.
            let bo = unsafe { union.bo };
            (*data, *sz) = if bo.bytes.is_null() || bo.size == 0 {
                (ptr::null_mut(), Some(0))
            } else {
                (bo.bytes.cast(), Some(bo.size))
            };
            Ok(())
        }
        DataType::POINTER => {
            // SAFETY: a pointer value holds it.
            *data = unsafe { union.ptr };
            *sz = Some(size_of::<*mut c_void>());
            Ok(())
        }
        DataType::PROC_NSPACE | DataType::PROC => {
            // SAFETY: a value of either type points to its object.
            let src = unsafe { union.ptr };
            if src.is_null() {
                return Err(Status::ERR_BAD_PARAM);
            }
            let size = object_size(t).ok_or(Status::ERR_NOT_SUPPORTED)?;
            // SAFETY: `src` holds one object of `size` bytes; `*data` has room for one
            // (the caller's promise).
            unsafe { ptr::copy_nonoverlapping(src.cast::<u8>(), data.cast::<u8>(), size) };
            *sz = Some(if t == DataType::PROC {
                size
            } else {
                // SAFETY: a namespace is NUL-terminated within its 256 bytes.
                unsafe { CStr::from_ptr(data.cast::<c_char>()) }
                    .to_bytes()
                    .len()
            });
            Ok(())
        }
        _ if !by_pointer(t) && t != DataType::ENVAR => {
            // A number, a code or a time: copied into the caller's storage.
            let size = object_size(t).ok_or(Status::ERROR)?;
            // SAFETY: the union holds `size` bytes of the type in place; `*data` has room
            // for them (the caller's promise).
            unsafe {
                ptr::copy_nonoverlapping(
                    ptr::from_ref(union).cast::<u8>(),
                    data.cast::<u8>(),
                    size,
                );
            }
            *sz = Some(size);
            Ok(())
        }
        _ => {
            // A structure: a copy, whose address replaces the caller's pointer.
            // SAFETY: the caller's promise.
            let v = unsafe { read_value(val)? };
            *data = allocated_copy(&v)?;
            *sz = Some(object_size(t).unwrap_or(0));
            Ok(())
        }
    }
}
