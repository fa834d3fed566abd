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

use crate::args::{Data, Handle, In, Out, Str};
use crate::boundary::{guard, guard_or, read_fixed, write_fixed};
use crate::types::{CDataArray, CInfo, CStatus, CValue};
use crate::values::OwnedInfo;

/// The list behind the `void *` of `PMIx_Info_list_start` (opaque to C callers).
#[derive(Default)]
// Boxed: `PMIx_Info_list_get_info` hands out the infos' addresses, which must not move
// when the list grows.
#[allow(clippy::vec_box)]
pub struct InfoList(Vec<Box<OwnedInfo>>);

impl InfoList {
    /// The info of `key`, compared as `PMIX_CHECK_KEY` compares.
    fn find(&mut self, key: &[c_char]) -> Option<&mut OwnedInfo> {
        let wanted = read_fixed(key);
        self.0
            .iter_mut()
            .find(|i| read_fixed(i.key()) == wanted)
            .map(|b| &mut **b)
    }
}

impl std::fmt::Debug for InfoList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InfoList({} infos)", self.0.len())
    }
}

/// The list a caller passes.
type List<'a> = Handle<'a, InfoList>;

/// A key from the caller's C string, in `pmix_key_t` form; NULL is `PMIX_ERR_BAD_PARAM`.
fn c_key(key: Str<'_>) -> Result<[c_char; 512], Status> {
    let key = key.required()?;
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
            existing.set_value(value)?;
        }
        return Ok(());
    }
    let info = Box::new(OwnedInfo::new(key, 0, value)?);
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
        List::make(InfoList::default())
    })
}

/// `PMIx_Info_list_add`: an info of `key` and a copy of `value` (as `PMIx_Value_load` takes
/// it) at the end of the list.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_add(
    ptr: List<'_>,
    key: Str<'_>,
    value: Data<'_>,
    type_: u16,
) -> CStatus {
    guard("PMIx_Info_list_add", || {
        let (list, key) = (ptr.get()?, c_key(key)?);
        add(list, key, &value.value(DataType(type_))?, Place::End, None)
    })
}

/// `PMIx_Info_list_prepend`: as `PMIx_Info_list_add`, at the front of the list.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_prepend(
    ptr: List<'_>,
    key: Str<'_>,
    value: Data<'_>,
    type_: u16,
) -> CStatus {
    guard("PMIx_Info_list_prepend", || {
        let value = value.value(DataType(type_))?;
        add(ptr.get()?, c_key(key)?, &value, Place::Front, None)
    })
}

/// `PMIx_Info_list_add_unique`: as `PMIx_Info_list_add`, unless the list has an info of
/// `key` already: then its value is replaced with `overwrite`, and kept otherwise (both a
/// success).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_add_unique(
    ptr: List<'_>,
    key: Str<'_>,
    value: Data<'_>,
    type_: u16,
    overwrite: bool,
) -> CStatus {
    guard("PMIx_Info_list_add_unique", || {
        let value = value.value(DataType(type_))?;
        add(ptr.get()?, c_key(key)?, &value, Place::End, Some(overwrite))
    })
}

/// `PMIx_Info_list_add_value`: an info of `key` and a copy of the value `value`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_add_value(
    ptr: List<'_>,
    key: Str<'_>,
    value: In<'_, CValue>,
) -> CStatus {
    guard("PMIx_Info_list_add_value", || {
        let value = value.value()?;
        add(ptr.get()?, c_key(key)?, &value, Place::End, None)
    })
}

/// `PMIx_Info_list_add_value_unique`: `PMIx_Info_list_add_value` with the rule of
/// `PMIx_Info_list_add_unique`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_add_value_unique(
    ptr: List<'_>,
    key: Str<'_>,
    value: In<'_, CValue>,
    overwrite: bool,
) -> CStatus {
    guard("PMIx_Info_list_add_value_unique", || {
        let value = value.value()?;
        add(ptr.get()?, c_key(key)?, &value, Place::End, Some(overwrite))
    })
}

/// `PMIx_Info_list_insert`: a copy of `info` at the end of the list.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_insert(ptr: List<'_>, info: In<'_, CInfo>) -> CStatus {
    PMIx_Info_list_xfer(ptr, info)
}

/// `PMIx_Info_list_xfer`: a copy of `info` (key, flags and value) at the end of the list.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_xfer(ptr: List<'_>, info: In<'_, CInfo>) -> CStatus {
    guard("PMIx_Info_list_xfer", || {
        let (value, info) = (info.value()?, info.required()?);
        let list = ptr.get()?;
        list.0
            .push(Box::new(OwnedInfo::new(info.key, info.flags, &value)?));
        Ok(())
    })
}

/// `PMIx_Info_list_xfer_unique`: as `PMIx_Info_list_xfer`, unless the list has an info of
/// its key: then that info's value is replaced with `overwrite` (its flags kept), and kept
/// otherwise.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_xfer_unique(
    ptr: List<'_>,
    info: In<'_, CInfo>,
    overwrite: bool,
) -> CStatus {
    guard("PMIx_Info_list_xfer_unique", || {
        let (value, info) = (info.value()?, info.required()?);
        let list = ptr.get()?;
        if list.find(&info.key).is_some() {
            return add(list, info.key, &value, Place::End, Some(overwrite));
        }
        list.0
            .push(Box::new(OwnedInfo::new(info.key, info.flags, &value)?));
        Ok(())
    })
}

/// `PMIx_Info_list_get_info`: walk the list. With `prev` NULL, its first info; otherwise
/// `prev` is the info to return (the `*next` of the call before). `*next` is set to the info
/// after the one returned, NULL after the last. The info is the list's, not a copy; NULL
/// for an empty list.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_get_info(
    ptr: List<'_>,
    prev: *mut c_void,
    next: Out<'_, *mut c_void>,
) -> *mut CInfo {
    guard_or("PMIx_Info_list_get_info", ptr::null_mut(), || {
        let Ok(list) = ptr.get() else {
            return ptr::null_mut();
        };
        // Only compared with the list's infos, never read.
        let at = if prev.is_null() {
            (!list.0.is_empty()).then_some(0)
        } else {
            list.0
                .iter()
                .position(|i| ptr::eq(i.as_ptr(), prev.cast::<CInfo>()))
        };
        let Some(at) = at else {
            return ptr::null_mut();
        };
        let after = list
            .0
            .get_mut(at + 1)
            .map_or(ptr::null_mut(), |i| i.as_mut_ptr().cast::<c_void>());
        next.set(after);
        list.0[at].as_mut_ptr()
    })
}

/// `PMIx_Info_list_get_size`: how many infos the list holds (0 for NULL).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_get_size(ptr: List<'_>) -> usize {
    guard_or("PMIx_Info_list_get_size", 0, || {
        ptr.get().map_or(0, |l| l.0.len())
    })
}

/// `PMIx_Info_list_convert`: the list as a data array of infos (from libc's allocator);
/// `PMIX_ERR_EMPTY` for an empty list.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_convert(ptr: List<'_>, par: Out<'_, CDataArray>) -> CStatus {
    guard("PMIx_Info_list_convert", || {
        if par.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let list = ptr.get()?;
        if list.0.is_empty() {
            return Err(Status::ERR_EMPTY);
        }
        let infos = list
            .0
            .iter()
            .map(|i| i.info())
            .collect::<Result<Vec<_>, _>>()?;
        par.set_array(DataArray::of_infos(infos))
    })
}

/// `PMIx_Info_list_release`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Info_list_release(ptr: List<'_>) {
    guard_or("PMIx_Info_list_release", (), || ptr.release());
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
            let l = || List::new(list);
            let (a, b) = (Str::new(a.as_ptr()), Str::new(b.as_ptr()));
            let number = |n: &u32| Data::new((&raw const *n).cast());
            PMIx_Info_list_add(l(), b, number(&two), DataType::UINT32.0);
            PMIx_Info_list_prepend(l(), a, number(&one), 14);
            PMIx_Info_list_add_unique(l(), a, number(&three), 14, false);
            assert_eq!(PMIx_Info_list_get_size(l()), 2);
            PMIx_Info_list_add_unique(l(), b, number(&three), 14, true);
            let mut next = ptr::null_mut();
            let first = PMIx_Info_list_get_info(l(), ptr::null_mut(), Out::new(&raw mut next));
            assert_eq!(read_fixed(&(*first).key), "a");
            assert_eq!((*first).value.data.uint32, 1);
            let second = PMIx_Info_list_get_info(l(), next, Out::new(&raw mut next));
            assert_eq!(read_fixed(&(*second).key), "b");
            assert_eq!((*second).value.data.uint32, 3);
            assert!(next.is_null());
            let mut array = CDataArray {
                type_: 0,
                size: 0,
                array: ptr::null_mut(),
            };
            assert_eq!(PMIx_Info_list_convert(l(), Out::new(&raw mut array)), 0);
            assert_eq!(array.size, 2);
            crate::values::destruct_array(&mut array);
            PMIx_Info_list_release(l());
            let empty = PMIx_Info_list_start();
            let out = Out::new(&raw mut next);
            assert!(PMIx_Info_list_get_info(List::new(empty), ptr::null_mut(), out).is_null());
            PMIx_Info_list_release(List::new(empty));
        }
    }
}
