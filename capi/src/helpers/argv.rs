//! NULL-terminated string arrays (draft §3.2.14, "argument array functions") and
//! environments: every array and string they hand back is libc's, released with
//! `PMIx_Argv_free` (or `free()`).

use std::ffi::{CStr, c_char, c_int};
use std::ptr;

use pmix::model::Status;

use crate::boundary::{c_bytes, free, guard, guard_or};
use crate::types::CStatus;

/// The entries of `argv` before its NULL (none for a NULL array).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of C strings.
unsafe fn entries<'a>(argv: *const *mut c_char) -> &'a [*mut c_char] {
    if argv.is_null() {
        return &[];
    }
    let mut n = 0;
    // SAFETY: the caller's promise: readable up to its NULL.
    while !unsafe { *argv.add(n) }.is_null() {
        n += 1;
    }
    // SAFETY: the `n` entries just read.
    unsafe { std::slice::from_raw_parts(argv, n) }
}

/// A copy of `s` with its NUL, from libc.
fn c_string(s: &[u8]) -> Result<*mut c_char, Status> {
    let mut with_nul = Vec::with_capacity(s.len() + 1);
    with_nul.extend_from_slice(s);
    with_nul.push(0);
    c_bytes(&with_nul)
}

/// A NULL-terminated array of copies of `items`, from libc; on failure nothing is left.
fn c_argv<'a>(items: impl IntoIterator<Item = &'a [u8]>) -> Result<*mut *mut c_char, Status> {
    let items: Vec<&[u8]> = items.into_iter().collect();
    let array: *mut *mut c_char = crate::boundary::calloc_array(items.len() + 1)?;
    for (i, item) in items.iter().enumerate() {
        match c_string(item) {
            // SAFETY: `array` has `items.len() + 1` slots.
            Ok(s) => unsafe { *array.add(i) = s },
            Err(e) => {
                // SAFETY: the slots written so far and the array, all ours.
                unsafe { PMIx_Argv_free(array) };
                return Err(e);
            }
        }
    }
    Ok(array)
}

/// The bytes of each entry of `argv`.
///
/// # Safety
/// As [`entries`].
unsafe fn bytes_of<'a>(argv: *const *mut c_char) -> Vec<&'a [u8]> {
    // SAFETY: the caller's promise; each entry is a C string.
    unsafe { entries(argv) }
        .iter()
        .map(|s| unsafe { CStr::from_ptr(*s) }.to_bytes())
        .collect()
}

/// Put `arg` at `at` (0 or the end) of `*argv`, growing it; `*argv` may be NULL.
///
/// # Safety
/// `argv` is writable; `*argv` NULL or an array of this family; `arg` a C string.
unsafe fn insert(argv: *mut *mut *mut c_char, arg: *const c_char, at_front: bool) -> CStatus {
    guard("PMIx_Argv_append", || {
        if argv.is_null() || arg.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let old = unsafe { *argv };
        // SAFETY: as above.
        let n = unsafe { entries(old) }.len();
        // SAFETY: `arg` is a C string.
        let copy = c_string(unsafe { CStr::from_ptr(arg) }.to_bytes())?;
        // SAFETY: `old` is NULL or libc's; realloc keeps its entries.
        let grown = unsafe { libc::realloc(old.cast(), (n + 2) * size_of::<*mut c_char>()) }
            .cast::<*mut c_char>();
        if grown.is_null() {
            // SAFETY: the copy is ours; `old` is untouched.
            unsafe { free(copy) };
            return Err(Status::ERR_OUT_OF_RESOURCE);
        }
        // SAFETY: `grown` has `n + 2` slots, its first `n` the old entries.
        unsafe {
            if at_front {
                ptr::copy(grown, grown.add(1), n);
                *grown = copy;
            } else {
                *grown.add(n) = copy;
            }
            *grown.add(n + 1) = ptr::null_mut();
            *argv = grown;
        }
        Ok(())
    })
}

/// `PMIx_Argv_append_nosize`: a copy of `arg` at the end of `*argv` (made when NULL).
///
/// # Safety
/// `argv` is writable; `*argv` NULL or an array of this family; `arg` a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Argv_append_nosize(
    argv: *mut *mut *mut c_char,
    arg: *const c_char,
) -> CStatus {
    // SAFETY: the caller's promise.
    unsafe { insert(argv, arg, false) }
}

/// `PMIx_Argv_prepend_nosize`: a copy of `arg` at the front of `*argv`.
///
/// # Safety
/// As `PMIx_Argv_append_nosize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Argv_prepend_nosize(
    argv: *mut *mut *mut c_char,
    arg: *const c_char,
) -> CStatus {
    // SAFETY: the caller's promise.
    unsafe { insert(argv, arg, true) }
}

/// `PMIx_Argv_append_unique_nosize`: as `PMIx_Argv_append_nosize`, unless `*argv` holds
/// `arg` already (success, and nothing changes).
///
/// # Safety
/// As `PMIx_Argv_append_nosize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Argv_append_unique_nosize(
    argv: *mut *mut *mut c_char,
    arg: *const c_char,
) -> CStatus {
    if !argv.is_null() && !arg.is_null() {
        // SAFETY: the caller's promise.
        let (present, wanted) = unsafe { (bytes_of(*argv), CStr::from_ptr(arg).to_bytes()) };
        if present.contains(&wanted) {
            return Status::SUCCESS.0;
        }
    }
    // SAFETY: the caller's promise.
    unsafe { insert(argv, arg, false) }
}

/// `PMIx_Argv_free`: every entry and the array (NULL is allowed).
///
/// # Safety
/// `argv` is NULL or an array of this family, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Argv_free(argv: *mut *mut c_char) {
    guard_or("PMIx_Argv_free", (), || {
        // SAFETY: the caller's promise: libc's entries and array.
        unsafe {
            for entry in entries(argv) {
                free(*entry);
            }
            free(argv);
        }
    });
}

/// `PMIx_Argv_count`: the entries before the NULL (0 for a NULL array).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Argv_count(argv: *mut *mut c_char) -> c_int {
    // SAFETY: the caller's promise.
    guard_or("PMIx_Argv_count", 0, || unsafe {
        c_int::try_from(entries(argv).len()).unwrap_or(c_int::MAX)
    })
}

/// `PMIx_Argv_split_inter`: the pieces of `src` between `delimiter`s; with `include_empty`
/// the empty pieces between two delimiters too (never one after a trailing delimiter). NULL
/// for a NULL or empty string.
///
/// # Safety
/// `src` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Argv_split_inter(
    src: *const c_char,
    delimiter: c_int,
    include_empty: bool,
) -> *mut *mut c_char {
    guard_or("PMIx_Argv_split_inter", ptr::null_mut(), || {
        if src.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: the caller's promise.
        let text = unsafe { CStr::from_ptr(src) }.to_bytes();
        if text.is_empty() {
            return ptr::null_mut();
        }
        // C's `int` delimiter is compared as a `char`.
        let delimiter = delimiter as u8;
        let mut pieces: Vec<&[u8]> = text.split(|b| *b == delimiter).collect();
        if text.ends_with(&[delimiter]) {
            pieces.pop();
        }
        pieces.retain(|p| include_empty || !p.is_empty());
        c_argv(pieces).unwrap_or(ptr::null_mut())
    })
}

/// `PMIx_Argv_split`: `PMIx_Argv_split_inter` without the empty pieces.
///
/// # Safety
/// `src` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Argv_split(src: *const c_char, delimiter: c_int) -> *mut *mut c_char {
    // SAFETY: the caller's promise.
    unsafe { PMIx_Argv_split_inter(src, delimiter, false) }
}

/// `PMIx_Argv_split_with_empty`: `PMIx_Argv_split_inter` with the empty pieces.
///
/// # Safety
/// `src` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Argv_split_with_empty(
    src: *const c_char,
    delimiter: c_int,
) -> *mut *mut c_char {
    // SAFETY: the caller's promise.
    unsafe { PMIx_Argv_split_inter(src, delimiter, true) }
}

/// `PMIx_Argv_join`: the entries joined by `delimiter` (an empty string for none).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of C strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Argv_join(argv: *mut *mut c_char, delimiter: c_int) -> *mut c_char {
    guard_or("PMIx_Argv_join", ptr::null_mut(), || {
        // SAFETY: the caller's promise.
        let joined = unsafe { bytes_of(argv) }.join(&(delimiter as u8));
        c_string(&joined).unwrap_or(ptr::null_mut())
    })
}

/// `PMIx_Argv_copy`: a deep copy (NULL for NULL).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of C strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Argv_copy(argv: *mut *mut c_char) -> *mut *mut c_char {
    guard_or("PMIx_Argv_copy", ptr::null_mut(), || {
        if argv.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: the caller's promise.
        c_argv(unsafe { bytes_of(argv) }).unwrap_or(ptr::null_mut())
    })
}

unsafe extern "C" {
    /// The process's environment, as `setenv` and `unsetenv` change it.
    static mut environ: *mut *mut c_char;
}

/// `PMIx_Setenv`: `name=value` in the environment `*env` (the process's own when `*env` is
/// `environ`, through `setenv`/`unsetenv`); an existing `name` is replaced only with
/// `overwrite` (`PMIX_ERR_EXISTS` otherwise). A NULL value sets `name=` (or, in the
/// process's environment, unsets it).
///
/// # Safety
/// `name` is a C string; `value` NULL or one; `env` writable, `*env` NULL, `environ` or an
/// array of this family.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Setenv(
    name: *const c_char,
    value: *const c_char,
    overwrite: bool,
    env: *mut *mut *mut c_char,
) -> CStatus {
    guard("PMIx_Setenv", || {
        if name.is_null() || env.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: reading the address of the process's environment, not through it.
        let process_env = unsafe { *env == environ };
        if process_env {
            // SAFETY: C strings (the caller's promise); the process's own environment.
            let rc = unsafe {
                if value.is_null() {
                    libc::unsetenv(name)
                } else {
                    libc::setenv(name, value, c_int::from(overwrite))
                }
            };
            return if rc == 0 {
                Ok(())
            } else {
                Err(Status::ERR_BAD_PARAM)
            };
        }
        // SAFETY: C strings (the caller's promise).
        let (name, value) = unsafe {
            (
                CStr::from_ptr(name).to_bytes(),
                if value.is_null() {
                    &[][..]
                } else {
                    CStr::from_ptr(value).to_bytes()
                },
            )
        };
        let mut entry = name.to_vec();
        entry.push(b'=');
        entry.extend_from_slice(value);
        // SAFETY: the caller's promise.
        let existing = unsafe { entries(*env) }.iter().position(|e| {
            // SAFETY: entries are C strings.
            let e = unsafe { CStr::from_ptr(*e) }.to_bytes();
            e.len() > name.len() && e.starts_with(name) && e[name.len()] == b'='
        });
        match existing {
            Some(_) if !overwrite => Err(Status::ERR_EXISTS),
            Some(at) => {
                let fresh = c_string(&entry)?;
                // SAFETY: the entry at `at` is libc's (this family's arrays are).
                unsafe {
                    let slot = (*env).add(at);
                    free(*slot);
                    *slot = fresh;
                }
                Ok(())
            }
            None => {
                let fresh = c_string(&entry)?;
                // SAFETY: `fresh` is a C string; `env` as the caller promised.
                let rc = unsafe { insert(env, fresh, false) };
                // SAFETY: `insert` copied it.
                unsafe { free(fresh) };
                if rc == Status::SUCCESS.0 {
                    Ok(())
                } else {
                    Err(Status(rc))
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    /// The entries of an array of this family, as Rust strings.
    fn strings(argv: *mut *mut c_char) -> Vec<String> {
        // SAFETY: an array this family made.
        unsafe { bytes_of(argv) }
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    }

    #[test]
    fn split_keeps_or_drops_the_empty_pieces_and_join_undoes_it() {
        let src = CString::new("a,,b,").unwrap();
        // SAFETY: C strings of this test; each array is released once.
        unsafe {
            let plain = PMIx_Argv_split(src.as_ptr(), c_int::from(b','));
            assert_eq!(strings(plain), ["a", "b"]);
            let with_empty = PMIx_Argv_split_with_empty(src.as_ptr(), c_int::from(b','));
            assert_eq!(strings(with_empty), ["a", "", "b"]);
            assert_eq!(PMIx_Argv_count(with_empty), 3);
            let joined = PMIx_Argv_join(with_empty, c_int::from(b':'));
            assert_eq!(CStr::from_ptr(joined).to_bytes(), b"a::b");
            free(joined);
            let copy = PMIx_Argv_copy(plain);
            assert_eq!(strings(copy), ["a", "b"]);
            PMIx_Argv_free(plain);
            PMIx_Argv_free(with_empty);
            PMIx_Argv_free(copy);
            let empty = CString::new("").unwrap();
            assert!(PMIx_Argv_split(empty.as_ptr(), c_int::from(b',')).is_null());
        }
    }

    #[test]
    fn append_prepend_and_unique_grow_a_null_array() {
        let mut argv: *mut *mut c_char = ptr::null_mut();
        let (b, a) = (CString::new("b").unwrap(), CString::new("a").unwrap());
        // SAFETY: an array of this family and C strings of this test.
        unsafe {
            assert_eq!(PMIx_Argv_append_nosize(&mut argv, b.as_ptr()), 0);
            assert_eq!(PMIx_Argv_prepend_nosize(&mut argv, a.as_ptr()), 0);
            assert_eq!(PMIx_Argv_append_unique_nosize(&mut argv, b.as_ptr()), 0);
            assert_eq!(strings(argv), ["a", "b"]);
            PMIx_Argv_free(argv);
        }
    }

    #[test]
    fn setenv_replaces_only_when_asked() {
        let mut env: *mut *mut c_char = ptr::null_mut();
        let (name, one, two) = (
            CString::new("K").unwrap(),
            CString::new("1").unwrap(),
            CString::new("2").unwrap(),
        );
        // SAFETY: an environment array of this family and C strings of this test.
        unsafe {
            assert_eq!(PMIx_Setenv(name.as_ptr(), one.as_ptr(), false, &mut env), 0);
            assert_eq!(
                PMIx_Setenv(name.as_ptr(), two.as_ptr(), false, &mut env),
                Status::ERR_EXISTS.0
            );
            assert_eq!(strings(env), ["K=1"]);
            assert_eq!(PMIx_Setenv(name.as_ptr(), two.as_ptr(), true, &mut env), 0);
            assert_eq!(strings(env), ["K=2"]);
            PMIx_Argv_free(env);
        }
    }
}
