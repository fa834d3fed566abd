//! Info lists (v5.0 §3.2.9.1, and the calls the 5.1 draft and OpenPMIx 5.0 and 6.1 add): a
//! list a caller builds an info at a time and turns into an array (`PMIx_Info_list_convert`).
//!
//! The list behind the caller's `void *` holds each info in C form, in a place of its own
//! that does not move while the list lives, because `PMIx_Info_list_get_info` hands the
//! caller the info itself (not a copy) to walk the list with. What the infos hold is libc's,
//! released with the list (`PMIx_Info_list_release`).

use std::ffi::{c_char, c_void};
use std::ptr;

use pmix::model::{DataArray, DataType, Status, Value};

use crate::boundary::{guard, guard_or, read_fixed, write_fixed};

use crate::types::{CDataArray, CInfo, CStatus, CValue};
use crate::values::{destruct_value, loaded, read_info, read_value, write_object, write_value};

/// The list behind the `void *` of `PMIx_Info_list_start`.
#[derive(Default)]
// Boxed: `PMIx_Info_list_get_info` hands out the infos' addresses, which must not move
// when the list grows.
#[allow(clippy::vec_box)]
struct InfoList(Vec<Box<CInfo>>);

impl Drop for InfoList {
    fn drop(&mut self) {
        for info in &mut self.0 {
            // SAFETY: every value in the list was written by this library from libc's memory.
            unsafe { destruct_value(&mut info.value) };
        }
    }
}

impl InfoList {
    /// The info of `key`, compared as `PMIX_CHECK_KEY` compares.
    fn find(&mut self, key: &[c_char]) -> Option<&mut CInfo> {
        let wanted = read_fixed(key);
        self.0
            .iter_mut()
            .find(|i| read_fixed(&i.key) == wanted)
            .map(|b| &mut **b)
    }
}

/// # Safety
/// `ptr` is NULL or a list of `PMIx_Info_list_start` not yet released.
unsafe fn list<'a>(ptr: *mut c_void) -> Result<&'a mut InfoList, Status> {
    // SAFETY: the caller's promise.
    unsafe { ptr.cast::<InfoList>().as_mut() }.ok_or(Status::ERR_BAD_PARAM)
}

/// An info of `key` and `value` in C form.
///
/// # Safety
/// Nothing beyond the arguments' types.
unsafe fn c_info(key: &[c_char], flags: u32, value: &Value) -> Result<Box<CInfo>, Status> {
    let mut info = Box::new(CInfo::zeroed());
    info.key.copy_from_slice(key);
    info.flags = flags;
    // SAFETY: a fresh value to write into.
    unsafe { write_value(value, &mut info.value)? };
    Ok(info)
}

/// A key from the caller's C string, in `pmix_key_t` form; NULL is `PMIX_ERR_BAD_PARAM`.
///
/// # Safety
/// `key` is NULL or a C string.
unsafe fn c_key(key: *const c_char) -> Result<[c_char; 512], Status> {
    // SAFETY: the caller's promise.
    let key = unsafe { crate::boundary::read_cstr(key) }.ok_or(Status::ERR_BAD_PARAM)?;
    // A key the model refuses (too long) is refused here too.
    pmix::model::Key::new(&key).map_err(|e| e.status())?;
    let mut field = [0; 512];
    write_fixed(&mut field, &key);
    Ok(field)
}

/// Where a new info goes.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    End,
    Front,
}

/// Add an info of `key` and `value` at `place`; with `unique`, an info of the same key is
/// kept (or, with `overwrite`, its value replaced) instead.
fn add(
    list: &mut InfoList,
    key: [c_char; 512],
    value: &Value,
    place: Place,
    unique: Option<bool>,
) -> Result<(), Status> {
    if let Some(overwrite) = unique
        && let Some(existing) = list.find(&key)
    {
        if overwrite {
            let mut fresh = crate::values::undef_value();
            // SAFETY: a fresh value to write into; the old one is the list's.
            unsafe {
                write_value(value, &mut fresh)?;
                destruct_value(&mut existing.value);
            }
            existing.value = fresh;
        }
        return Ok(());
    }
    // SAFETY: the key and value are whole.
    let info = unsafe { c_info(&key, 0, value)? };
    match place {
        Place::End => list.0.push(info),
        Place::Front => list.0.insert(0, info),
    }
    Ok(())
}

/// `PMIx_Info_list_start`: an empty list of infos, released by `PMIx_Info_list_release`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_start() -> *mut c_void {
    guard_or("PMIx_Info_list_start", ptr::null_mut(), || {
        Box::into_raw(Box::<InfoList>::default()).cast()
    })
}

/// `PMIx_Info_list_add`: an info of `key` and a copy of `value` (as `PMIx_Value_load` takes
/// it) at the end of the list.
///
/// # Safety
/// `ptr` is a list; `key` a string; `value` as `PMIx_Value_load` reads it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_add(
    ptr: *mut c_void,
    key: *const c_char,
    value: *const c_void,
    type_: u16,
) -> CStatus {
    guard("PMIx_Info_list_add", || {
        // SAFETY: the caller's promise.
        unsafe {
            add(
                list(ptr)?,
                c_key(key)?,
                &loaded(value, DataType(type_))?,
                Place::End,
                None,
            )
        }
    })
}

/// `PMIx_Info_list_prepend`: as `PMIx_Info_list_add`, at the front of the list.
///
/// # Safety
/// As `PMIx_Info_list_add`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_prepend(
    ptr: *mut c_void,
    key: *const c_char,
    value: *const c_void,
    type_: u16,
) -> CStatus {
    guard("PMIx_Info_list_prepend", || {
        // SAFETY: the caller's promise.
        unsafe {
            let value = loaded(value, DataType(type_))?;
            add(list(ptr)?, c_key(key)?, &value, Place::Front, None)
        }
    })
}

/// `PMIx_Info_list_add_unique`: as `PMIx_Info_list_add`, unless the list has an info of
/// `key` already: then its value is replaced with `overwrite`, and kept otherwise (both a
/// success).
///
/// # Safety
/// As `PMIx_Info_list_add`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_add_unique(
    ptr: *mut c_void,
    key: *const c_char,
    value: *const c_void,
    type_: u16,
    overwrite: bool,
) -> CStatus {
    guard("PMIx_Info_list_add_unique", || {
        // SAFETY: the caller's promise.
        unsafe {
            let value = loaded(value, DataType(type_))?;
            add(list(ptr)?, c_key(key)?, &value, Place::End, Some(overwrite))
        }
    })
}

/// `PMIx_Info_list_add_value`: an info of `key` and a copy of the value `value`.
///
/// # Safety
/// `ptr` is a list; `key` a string; `value` a value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_add_value(
    ptr: *mut c_void,
    key: *const c_char,
    value: *const CValue,
) -> CStatus {
    guard("PMIx_Info_list_add_value", || {
        // SAFETY: the caller's promise.
        unsafe {
            let value = read_value(value.as_ref().ok_or(Status::ERR_BAD_PARAM)?)?;
            add(list(ptr)?, c_key(key)?, &value, Place::End, None)
        }
    })
}

/// `PMIx_Info_list_add_value_unique`: `PMIx_Info_list_add_value` with the rule of
/// `PMIx_Info_list_add_unique`.
///
/// # Safety
/// As `PMIx_Info_list_add_value`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_add_value_unique(
    ptr: *mut c_void,
    key: *const c_char,
    value: *const CValue,
    overwrite: bool,
) -> CStatus {
    guard("PMIx_Info_list_add_value_unique", || {
        // SAFETY: the caller's promise.
        unsafe {
            let value = read_value(value.as_ref().ok_or(Status::ERR_BAD_PARAM)?)?;
            add(list(ptr)?, c_key(key)?, &value, Place::End, Some(overwrite))
        }
    })
}

/// `PMIx_Info_list_insert`: a copy of `info` at the end of the list.
///
/// # Safety
/// `ptr` is a list; `info` an info.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_insert(ptr: *mut c_void, info: *mut CInfo) -> CStatus {
    // SAFETY: as `PMIx_Info_list_xfer`.
    unsafe { PMIx_Info_list_xfer(ptr, info) }
}

/// `PMIx_Info_list_xfer`: a copy of `info` (key, flags and value) at the end of the list.
///
/// # Safety
/// `ptr` is a list; `info` an info.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_xfer(ptr: *mut c_void, info: *const CInfo) -> CStatus {
    guard("PMIx_Info_list_xfer", || {
        // SAFETY: the caller's promise.
        unsafe {
            let info = info.as_ref().ok_or(Status::ERR_BAD_PARAM)?;
            let value = read_value(&info.value)?;
            list(ptr)?.0.push(c_info(&info.key, info.flags, &value)?);
        }
        Ok(())
    })
}

/// `PMIx_Info_list_xfer_unique`: as `PMIx_Info_list_xfer`, unless the list has an info of
/// its key: then that info's value is replaced with `overwrite` (its flags kept), and kept
/// otherwise.
///
/// # Safety
/// As `PMIx_Info_list_xfer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_xfer_unique(
    ptr: *mut c_void,
    info: *const CInfo,
    overwrite: bool,
) -> CStatus {
    guard("PMIx_Info_list_xfer_unique", || {
        // SAFETY: the caller's promise.
        unsafe {
            let info = info.as_ref().ok_or(Status::ERR_BAD_PARAM)?;
            let value = read_value(&info.value)?;
            let list = list(ptr)?;
            if list.find(&info.key).is_some() {
                return add(list, info.key, &value, Place::End, Some(overwrite));
            }
            list.0.push(c_info(&info.key, info.flags, &value)?);
        }
        Ok(())
    })
}

/// `PMIx_Info_list_get_info`: walk the list. With `prev` NULL, its first info; otherwise
/// `prev` is the info to return (the `*next` of the call before). `*next` is set to the info
/// after the one returned, NULL after the last. The info is the list's, not a copy; NULL
/// for an empty list.
///
/// # Safety
/// `ptr` is a list; `prev` NULL or one of its infos; `next` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_get_info(
    ptr: *mut c_void,
    prev: *mut c_void,
    next: *mut *mut c_void,
) -> *mut CInfo {
    guard_or("PMIx_Info_list_get_info", ptr::null_mut(), || {
        // SAFETY: the caller's promise.
        let Ok(list) = (unsafe { list(ptr) }) else {
            return ptr::null_mut();
        };
        let at = if prev.is_null() {
            (!list.0.is_empty()).then_some(0)
        } else {
            list.0
                .iter()
                .position(|i| ptr::eq(&raw const **i, prev.cast::<CInfo>()))
        };
        let Some(at) = at else {
            return ptr::null_mut();
        };
        let after = list
            .0
            .get_mut(at + 1)
            .map_or(ptr::null_mut(), |i| (&raw mut **i).cast::<c_void>());
        // SAFETY: the caller's promise.
        if let Some(next) = unsafe { next.as_mut() } {
            *next = after;
        }
        &raw mut *list.0[at]
    })
}

/// `PMIx_Info_list_get_size`: how many infos the list holds (0 for NULL).
///
/// # Safety
/// `ptr` is NULL or a list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_get_size(ptr: *mut c_void) -> usize {
    // SAFETY: the caller's promise.
    guard_or("PMIx_Info_list_get_size", 0, || unsafe {
        list(ptr).map_or(0, |l| l.0.len())
    })
}

/// `PMIx_Info_list_convert`: the list as a data array of infos (from libc's allocator);
/// `PMIX_ERR_EMPTY` for an empty list.
///
/// # Safety
/// `ptr` is a list; `par` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_convert(ptr: *mut c_void, par: *mut CDataArray) -> CStatus {
    guard("PMIx_Info_list_convert", || {
        if par.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let list = unsafe { list(ptr)? };
        if list.0.is_empty() {
            return Err(Status::ERR_EMPTY);
        }
        let infos = list
            .0
            .iter()
            // SAFETY: the list's infos, in C form.
            .map(|i| unsafe { read_info(i) })
            .collect::<Result<Vec<_>, _>>()?;
        let array = Value::DataArray(Box::new(DataArray::of_infos(infos)));
        // SAFETY: `par` has room for a data array (the caller's promise).
        unsafe { write_object(&array, par.cast()) }
    })
}

/// `PMIx_Info_list_release`.
///
/// # Safety
/// `ptr` is NULL or a list of `PMIx_Info_list_start`, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Info_list_release(ptr: *mut c_void) {
    guard_or("PMIx_Info_list_release", (), || {
        if !ptr.is_null() {
            // SAFETY: the caller's promise: a box of ours, released once.
            drop(unsafe { Box::from_raw(ptr.cast::<InfoList>()) });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    #[test]
    fn a_list_walks_in_order_and_keeps_one_info_per_key_when_asked() {
        let list = PMIx_Info_list_start();
        let (a, b) = (CString::new("a").unwrap(), CString::new("b").unwrap());
        let (one, two, three) = (1u32, 2u32, 3u32);
        // SAFETY: a list of this test, C strings and numbers of the named type.
        unsafe {
            PMIx_Info_list_add(
                list,
                b.as_ptr(),
                (&raw const two).cast(),
                DataType::UINT32.0,
            );
            PMIx_Info_list_prepend(list, a.as_ptr(), (&raw const one).cast(), 14);
            PMIx_Info_list_add_unique(list, a.as_ptr(), (&raw const three).cast(), 14, false);
            assert_eq!(PMIx_Info_list_get_size(list), 2);
            PMIx_Info_list_add_unique(list, b.as_ptr(), (&raw const three).cast(), 14, true);
            let mut next = ptr::null_mut();
            let first = PMIx_Info_list_get_info(list, ptr::null_mut(), &mut next);
            assert_eq!(read_fixed(&(*first).key), "a");
            assert_eq!((*first).value.data.uint32, 1);
            let second = PMIx_Info_list_get_info(list, next, &mut next);
            assert_eq!(read_fixed(&(*second).key), "b");
            assert_eq!((*second).value.data.uint32, 3);
            assert!(next.is_null());
            let mut array = CDataArray {
                type_: 0,
                size: 0,
                array: ptr::null_mut(),
            };
            assert_eq!(PMIx_Info_list_convert(list, &mut array), 0);
            assert_eq!(array.size, 2);
            crate::values::destruct_array(&mut array);
            PMIx_Info_list_release(list);
            let empty = PMIx_Info_list_start();
            assert!(PMIx_Info_list_get_info(empty, ptr::null_mut(), &mut next).is_null());
            PMIx_Info_list_release(empty);
        }
    }
}
