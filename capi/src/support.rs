//! The support calls of `pmix.h` that need no server: the `*_string` calls, values and
//! infos (`PMIx_Value_*`, `PMIx_Info_*`), and data arrays. The info lists are in
//! `info_list.rs`.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr;

use pmix::model::strings;
use pmix::model::{
    AllocDirective, DataRange, DataType, DeviceType, InfoDirectives, IofChannel, JobState,
    LinkState, Persistence, ProcState, Scope, Status, Text, Value,
};

use crate::boundary::{
    c_strdup, calloc_array, free, guard, guard_or, interned, read_cstr, read_text, write_fixed,
};
use crate::types::{CDataArray, CInfo, CStatus, CValue};
use crate::values::{
    by_pointer, destruct_array, destruct_value, loaded, object_size, read_info, read_value,
    write_object, write_value,
};

macro_rules! static_string {
    ($(#[$doc:meta])* $c_name:ident($t:ty) => $f:expr) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub extern "C" fn $c_name(value: $t) -> *const c_char {
            guard_or(stringify!($c_name), ptr::null(), || interned(&$f(value)))
        }
    };
}

static_string!(
    /// `PMIx_Error_string`.
    PMIx_Error_string(CStatus) => |s| strings::error_string(Status(s))
);
static_string!(
    /// `PMIx_Proc_state_string`.
    PMIx_Proc_state_string(u8) => |s| strings::proc_state_string(ProcState(s))
);
static_string!(
    /// `PMIx_Scope_string`.
    PMIx_Scope_string(u8) => |s| strings::scope_string(Scope(s))
);
static_string!(
    /// `PMIx_Persistence_string`.
    PMIx_Persistence_string(u8) => |s| strings::persistence_string(Persistence(s))
);
static_string!(
    /// `PMIx_Data_range_string`.
    PMIx_Data_range_string(u8) => |s| strings::data_range_string(DataRange(s))
);
static_string!(
    /// `PMIx_Data_type_string`.
    PMIx_Data_type_string(u16) => |s| strings::data_type_string(DataType(s))
);
static_string!(
    /// `PMIx_Alloc_directive_string`.
    PMIx_Alloc_directive_string(u8) => |s| strings::alloc_directive_string(AllocDirective(s))
);
static_string!(
    /// `PMIx_IOF_channel_string`.
    PMIx_IOF_channel_string(u16) => |s| strings::iof_channel_string(IofChannel(s))
);
static_string!(
    /// `PMIx_Job_state_string`.
    PMIx_Job_state_string(u8) => |s| strings::job_state_string(JobState(s))
);
static_string!(
    /// `PMIx_Link_state_string`.
    PMIx_Link_state_string(u8) => |s| strings::link_state_string(LinkState(s))
);
static_string!(
    /// `PMIx_Device_type_string`.
    PMIx_Device_type_string(u64) => |s| strings::device_type_string(DeviceType(s))
);
static_string!(
    /// `PMIx_Value_comparison_string`.
    PMIx_Value_comparison_string(c_int) => |c| match c {
        0 => "EQUAL",
        1 => "VALUE1 GREATER",
        2 => "VALUE2 GREATER",
        3 => "DIFFERENT TYPES",
        4 => "INCOMPATIBLE OBJECTS",
        5 => "COMPARISON NOT AVAILABLE",
        _ => "UNKNOWN VALUE",
    }
);

/// `PMIx_Get_attribute_string`: the key of the attribute named `attribute`
/// (`"PMIX_JOB_SIZE"` → `"pmix.job.size"`), or NULL.
///
/// # Safety
/// `attribute` is NULL or a string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Get_attribute_string(attribute: *const c_char) -> *const c_char {
    guard_or("PMIx_Get_attribute_string", ptr::null(), || {
        // SAFETY: the caller's promise.
        let name = unsafe { read_cstr(attribute) };
        name.and_then(|n| strings::attribute_string(&n))
            .map_or(ptr::null(), interned)
    })
}

/// `PMIx_Get_attribute_name`: the name of the attribute whose key is `attrstring`, or NULL.
///
/// # Safety
/// `attrstring` is NULL or a string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Get_attribute_name(attrstring: *const c_char) -> *const c_char {
    guard_or("PMIx_Get_attribute_name", ptr::null(), || {
        // SAFETY: the caller's promise.
        let key = unsafe { read_cstr(attrstring) };
        key.and_then(|k| strings::attribute_name(&k))
            .map_or(ptr::null(), interned)
    })
}

/// `PMIx_Info_directives_string`: a string from libc's allocator, the caller frees it, as
/// OpenPMIx's library hands it (`char *` in its headers). Under `PMIX_RS_STRICT=1`, the
/// standard's `const char *` (v5.0 §3.5): a string the library keeps, never to be freed.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_directives_string(directives: u32) -> *mut c_char {
    guard_or("PMIx_Info_directives_string", ptr::null_mut(), || {
        let text = strings::info_directives_string(InfoDirectives(directives));
        if crate::departures::strict() {
            return interned(&text).cast_mut();
        }
        c_strdup(&text).unwrap_or(ptr::null_mut())
    })
}

/// `PMIx_Value_string`: the value as text (this library's wording), from libc's allocator.
///
/// # Safety
/// `value` is NULL or a value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Value_string(value: *const CValue) -> *mut c_char {
    guard_or("PMIx_Value_string", ptr::null_mut(), || {
        if value.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: the caller's promise.
        match unsafe { read_value(&*value) } {
            Ok(v) => c_strdup(value_text(&v)).unwrap_or(ptr::null_mut()),
            Err(_) => ptr::null_mut(),
        }
    })
}

/// `PMIx_Info_string`: the info as text (this library's wording), from libc's allocator.
///
/// # Safety
/// `info` is NULL or an info.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_string(info: *const CInfo) -> *mut c_char {
    guard_or("PMIx_Info_string", ptr::null_mut(), || {
        if info.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: the caller's promise.
        match unsafe { read_info(&*info) } {
            Ok(i) => {
                let text = format!(
                    "KEY: {} DIRECTIVES: {} VALUE: {}",
                    i.key.as_str(),
                    strings::info_directives_string(i.flags),
                    value_text(&i.value)
                );
                c_strdup(&text).unwrap_or(ptr::null_mut())
            }
            Err(_) => ptr::null_mut(),
        }
    })
}

fn value_text(v: &Value) -> String {
    format!("{}: {v:?}", strings::data_type_string(v.data_type()))
}

/// `PMIx_Value_load`: a copy of `data`, of type `type_`, into `val` (its old contents are not
/// released).
///
/// # Safety
/// `val` is writable; `data` is as `loaded` reads it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Value_load(
    val: *mut CValue,
    data: *const c_void,
    type_: u16,
) -> CStatus {
    guard("PMIx_Value_load", || {
        if val.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        unsafe {
            let v = loaded(data, DataType(type_))?;
            write_value(&v, &mut *val)
        }
    })
}

/// `PMIx_Value_unload`: the value's data, as OpenPMIx's library hands it (its C callers
/// rely on it; `docs/capi.md`): a number or another fixed-size object is copied into the
/// storage `*data` points to (`PMIX_ERR_BAD_PARAM` when it is NULL), with its size; a
/// string is a copy from libc, its size without the NUL; a byte object (and a compressed
/// one, a regex) is the value's own bytes, not a copy; a process or a namespace is copied
/// into the storage `*data` points to; a pointer is the pointer; every other structure is a
/// copy from libc whose address replaces `*data`. Under `PMIX_RS_STRICT=1`, the standard's
/// form (v5.0 §3.2.8: "memory will be allocated"): every type is a copy from libc.
///
/// # Safety
/// `val` is a value; `data` and `sz` are writable; `*data`, for the types copied into it,
/// has room for the type's object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Value_unload(
    val: *mut CValue,
    data: *mut *mut c_void,
    sz: *mut usize,
) -> CStatus {
    guard("PMIx_Value_unload", || {
        if val.is_null() || data.is_null() || sz.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let (val, data, sz) = unsafe { (&*val, &mut *data, &mut *sz) };
        if crate::departures::strict() {
            // SAFETY: as above.
            return unsafe { unload_allocated(val, data, sz) };
        }
        // SAFETY: as above.
        unsafe { unload_as_openpmix(val, data, sz) }
    })
}

/// The standard's `PMIx_Value_unload`: a copy of the value's object in a block from
/// libc's allocator, and its size (a string's with its NUL).
///
/// # Safety
/// `val` is a value.
unsafe fn unload_allocated(
    val: &CValue,
    data: &mut *mut c_void,
    sz: &mut usize,
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
    *sz = size;
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

/// OpenPMIx's `PMIx_Value_unload` (see [`PMIx_Value_unload`]).
///
/// # Safety
/// As [`PMIx_Value_unload`].
unsafe fn unload_as_openpmix(
    val: &CValue,
    data: &mut *mut c_void,
    sz: &mut usize,
) -> Result<(), Status> {
    let t = DataType(val.type_);
    let byte_like = matches!(
        t,
        DataType::BYTE_OBJECT
            | DataType::COMPRESSED_STRING
            | DataType::COMPRESSED_BYTE_OBJECT
            | DataType::REGEX
    );
    if data.is_null() && t != DataType::STRING && !byte_like {
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
                *sz = s.len();
            }
            Ok(())
        }
        _ if byte_like => {
            // SAFETY: a byte-object value holds one in place.
            let bo = unsafe { union.bo };
            (*data, *sz) = if bo.bytes.is_null() || bo.size == 0 {
                (ptr::null_mut(), 0)
            } else {
                (bo.bytes.cast(), bo.size)
            };
            Ok(())
        }
        DataType::POINTER => {
            // SAFETY: a pointer value holds it.
            *data = unsafe { union.ptr };
            *sz = size_of::<*mut c_void>();
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
            *sz = if t == DataType::PROC {
                size
            } else {
                // SAFETY: a namespace is NUL-terminated within its 256 bytes.
                unsafe { CStr::from_ptr(data.cast::<c_char>()) }
                    .to_bytes()
                    .len()
            };
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
            *sz = size;
            Ok(())
        }
        _ => {
            // A structure: a copy, whose address replaces the caller's pointer.
            // SAFETY: the caller's promise.
            let v = unsafe { read_value(val)? };
            *data = allocated_copy(&v)?;
            *sz = object_size(t).unwrap_or(0);
            Ok(())
        }
    }
}

/// `PMIx_Value_destruct`: release what the value holds; it is left `PMIX_UNDEF`.
///
/// # Safety
/// `val` is NULL or a value whose blocks come from libc's allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Value_destruct(val: *mut CValue) {
    guard_or("PMIx_Value_destruct", (), || {
        if !val.is_null() {
            // SAFETY: the caller's promise.
            unsafe { destruct_value(&mut *val) };
        }
    });
}

/// `PMIx_Value_xfer`: a deep copy of `src` into `dest`.
///
/// # Safety
/// `dest` is writable, `src` a value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Value_xfer(dest: *mut CValue, src: *const CValue) -> CStatus {
    guard("PMIx_Value_xfer", || {
        if dest.is_null() || src.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        unsafe {
            let v = read_value(&*src)?;
            write_value(&v, &mut *dest)
        }
    })
}

/// `PMIx_Value_compare`: `PMIX_EQUAL` (0), `PMIX_VALUE1_GREATER` (1), `PMIX_VALUE2_GREATER`
/// (2), `PMIX_VALUE_TYPE_DIFFERENT` (3), or `PMIX_VALUE_COMPARISON_NOT_AVAIL` (5).
///
/// # Safety
/// `v1` and `v2` are NULL or values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Value_compare(v1: *mut CValue, v2: *mut CValue) -> c_int {
    const NOT_AVAILABLE: c_int = 5;
    guard_or("PMIx_Value_compare", NOT_AVAILABLE, || {
        if v1.is_null() || v2.is_null() {
            return NOT_AVAILABLE;
        }
        // SAFETY: the caller's promise.
        let (a, b) = unsafe { (read_value(&*v1), read_value(&*v2)) };
        let (Ok(a), Ok(b)) = (a, b) else {
            return NOT_AVAILABLE;
        };
        if a.data_type() != b.data_type() {
            return 3;
        }
        match a.partial_cmp(&b) {
            Some(std::cmp::Ordering::Equal) => 0,
            Some(std::cmp::Ordering::Greater) => 1,
            Some(std::cmp::Ordering::Less) => 2,
            None => NOT_AVAILABLE,
        }
    })
}

/// `PMIx_Data_array_destruct`: release the array's elements and their block.
///
/// # Safety
/// `d` is NULL or a data array whose blocks come from libc's allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_array_destruct(d: *mut CDataArray) {
    guard_or("PMIx_Data_array_destruct", (), || {
        if !d.is_null() {
            // SAFETY: the caller's promise.
            unsafe { destruct_array(&mut *d) };
        }
    });
}

/// `PMIx_Info_load`: `key` and a copy of `data` (as `PMIx_Value_load` takes it) into `info`.
///
/// # Safety
/// `info` is writable, `key` a string, `data` as `PMIx_Value_load` reads it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_load(
    info: *mut CInfo,
    key: *const c_char,
    data: *const c_void,
    type_: u16,
) -> CStatus {
    guard("PMIx_Info_load", || {
        if info.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let key = unsafe { read_cstr(key) }.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        unsafe {
            let value = loaded(data, DataType(type_))?;
            let info = &mut *info;
            write_fixed(&mut info.key, &key);
            write_value(&value, &mut info.value)
        }
    })
}

/// `PMIx_Info_xfer`: a deep copy of `src` (key, flags and value) into `dest`.
///
/// # Safety
/// `dest` is writable, `src` an info.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_xfer(dest: *mut CInfo, src: *const CInfo) -> CStatus {
    guard("PMIx_Info_xfer", || {
        if dest.is_null() || src.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        unsafe {
            let src = &*src;
            let value = read_value(&src.value)?;
            let dest = &mut *dest;
            // A key that fills its array without a NUL is cut to leave room for one, so the
            // copy is always a C string.
            dest.key = src.key;
            if let Some(last) = dest.key.last_mut() {
                *last = 0;
            }
            dest.flags = src.flags;
            write_value(&value, &mut dest.value)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transferred_key_that_fills_its_array_is_cut_to_end_in_a_nul() {
        let mut src = std::mem::MaybeUninit::<CInfo>::zeroed();
        let mut dest = std::mem::MaybeUninit::<CInfo>::zeroed();
        // SAFETY: zeroed infos are valid (an undefined value); the source's key is filled
        // with 'k' to its last byte, without a NUL.
        let (status, key) = unsafe {
            (*src.as_mut_ptr()).key.fill(b'k' as std::ffi::c_char);
            let status = PMIx_Info_xfer(dest.as_mut_ptr(), src.as_ptr());
            (status, (*dest.as_ptr()).key)
        };
        assert_eq!(status, Status::SUCCESS.0);
        let (last, before) = key.split_last().unwrap();
        assert_eq!(*last, 0);
        assert!(before.iter().all(|c| *c == b'k' as std::ffi::c_char));
    }
}
