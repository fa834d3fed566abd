//! The support calls of `pmix.h` that need no server: the `*_string` calls, values and
//! infos (`PMIx_Value_*`, `PMIx_Info_*`), and data arrays. The info lists are in
//! `info_list.rs`.

use std::ffi::{c_char, c_int};
use std::ptr;

use pmix::model::strings;
use pmix::model::{
    AllocDirective, DataRange, DataType, DeviceType, InfoDirectives, IofChannel, JobState,
    LinkState, Persistence, ProcState, Scope, Status, Value,
};

use crate::args::{Data, In, InOut, Out, Str, Unloaded};
use crate::boundary::{c_strdup, guard, guard_or, interned};
use crate::types::{CDataArray, CInfo, CStatus, CValue};
use crate::values::{empty_info, write_value};

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
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Get_attribute_string(attribute: Str<'_>) -> *const c_char {
    guard_or("PMIx_Get_attribute_string", ptr::null(), || {
        let name = attribute.text();
        name.and_then(|n| strings::attribute_string(&n))
            .map_or(ptr::null(), interned)
    })
}

/// `PMIx_Get_attribute_name`: the name of the attribute whose key is `attrstring`, or NULL.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Get_attribute_name(attrstring: Str<'_>) -> *const c_char {
    guard_or("PMIx_Get_attribute_name", ptr::null(), || {
        let key = attrstring.text();
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
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Value_string(value: In<'_, CValue>) -> *mut c_char {
    guard_or("PMIx_Value_string", ptr::null_mut(), || {
        match value.value() {
            Ok(v) => c_strdup(value_text(&v)).unwrap_or(ptr::null_mut()),
            Err(_) => ptr::null_mut(),
        }
    })
}

/// `PMIx_Info_string`: the info as text (this library's wording), from libc's allocator.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_string(info: In<'_, CInfo>) -> *mut c_char {
    guard_or("PMIx_Info_string", ptr::null_mut(), || match info.one() {
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
    })
}

fn value_text(v: &Value) -> String {
    format!("{}: {v:?}", strings::data_type_string(v.data_type()))
}

/// `PMIx_Value_load`: a copy of `data`, of type `type_`, into `val` (its old contents are not
/// released).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Value_load(val: Out<'_, CValue>, data: Data<'_>, type_: u16) -> CStatus {
    guard("PMIx_Value_load", || {
        if val.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let v = data.value(DataType(type_))?;
        val.set_value(&v)
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
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Value_unload(
    val: In<'_, CValue>,
    data: Unloaded<'_>,
    sz: Out<'_, usize>,
) -> CStatus {
    guard("PMIx_Value_unload", || {
        data.unload(val, sz, crate::departures::strict())
    })
}

/// `PMIx_Value_destruct`: release what the value holds; it is left `PMIX_UNDEF`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Value_destruct(val: InOut<'_, CValue>) {
    guard_or("PMIx_Value_destruct", (), || val.destruct_value());
}

/// `PMIx_Value_xfer`: a deep copy of `src` into `dest`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Value_xfer(dest: Out<'_, CValue>, src: In<'_, CValue>) -> CStatus {
    guard("PMIx_Value_xfer", || {
        if dest.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        dest.set_value(&src.value()?)
    })
}

/// `PMIx_Value_compare`: `PMIX_EQUAL` (0), `PMIX_VALUE1_GREATER` (1), `PMIX_VALUE2_GREATER`
/// (2), `PMIX_VALUE_TYPE_DIFFERENT` (3), or `PMIX_VALUE_COMPARISON_NOT_AVAIL` (5).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Value_compare(v1: In<'_, CValue>, v2: In<'_, CValue>) -> c_int {
    const NOT_AVAILABLE: c_int = 5;
    guard_or("PMIx_Value_compare", NOT_AVAILABLE, || {
        let (Ok(a), Ok(b)) = (v1.value(), v2.value()) else {
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
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_array_destruct(d: InOut<'_, CDataArray>) {
    guard_or("PMIx_Data_array_destruct", (), || d.destruct_array());
}

/// `PMIx_Info_load`: `key` and a copy of `data` (as `PMIx_Value_load` takes it) into `info`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_load(
    info: Out<'_, CInfo>,
    key: Str<'_>,
    data: Data<'_>,
    type_: u16,
) -> CStatus {
    guard("PMIx_Info_load", || {
        if info.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let key = key.required()?;
        let value = data.value(DataType(type_))?;
        info.load(&key, &value)
    })
}

/// `PMIx_Info_xfer`: a deep copy of `src` (key, flags and value) into `dest`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_xfer(dest: Out<'_, CInfo>, src: In<'_, CInfo>) -> CStatus {
    guard("PMIx_Info_xfer", || {
        if dest.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let (value, src) = (src.value()?, src.required()?);
        let mut copy = empty_info();
        // A key that fills its array without a NUL is cut to leave room for one, so the
        // copy is always a C string.
        copy.key = src.key;
        if let Some(last) = copy.key.last_mut() {
            *last = 0;
        }
        copy.flags = src.flags;
        // On failure the key and flags are copied and the value left `PMIX_UNDEF`.
        let outcome = write_value(&value, &mut copy.value);
        dest.set(copy);
        outcome
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
            let status = PMIx_Info_xfer(Out::new(dest.as_mut_ptr()), In::new(src.as_ptr()));
            (status, (*dest.as_ptr()).key)
        };
        assert_eq!(status, Status::SUCCESS.0);
        let (last, before) = key.split_last().unwrap();
        assert_eq!(*last, 0);
        assert!(before.iter().all(|c| *c == b'k' as std::ffi::c_char));
    }
}
