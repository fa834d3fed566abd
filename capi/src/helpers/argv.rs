//! NULL-terminated string arrays (draft §3.2.14, "argument array functions") and
//! environments: every array and string they hand back is libc's, released with
//! `PMIx_Argv_free` (or `free()`).

use std::ffi::{c_char, c_int};
use std::ptr;

use pmix::model::Status;

use crate::args::{Argv, ArgvMut, ArgvOwned, Str};
use crate::boundary::{c_strdup, guard, guard_or, process_setenv};
use crate::types::CStatus;
use crate::values::write_argv;

/// A NULL-terminated array of copies of `items`, from libc; on failure nothing is left.
fn c_argv(items: &[&[u8]]) -> Result<*mut *mut c_char, Status> {
    let items: Vec<Option<&[u8]>> = items.iter().copied().map(Some).collect();
    write_argv(&items)
}

/// Put a copy of `arg` at the front or the end of `*argv`, growing it; `*argv` may be NULL.
fn insert(mut argv: ArgvMut<'_>, arg: Str<'_>, at_front: bool) -> CStatus {
    guard("PMIx_Argv_append", || {
        let arg = arg.bytes().ok_or(Status::ERR_BAD_PARAM)?;
        if argv.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        argv.insert(arg, at_front)
    })
}

/// `PMIx_Argv_append_nosize`: a copy of `arg` at the end of `*argv` (made when NULL).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Argv_append_nosize(argv: ArgvMut<'_>, arg: Str<'_>) -> CStatus {
    insert(argv, arg, false)
}

/// `PMIx_Argv_prepend_nosize`: a copy of `arg` at the front of `*argv`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Argv_prepend_nosize(argv: ArgvMut<'_>, arg: Str<'_>) -> CStatus {
    insert(argv, arg, true)
}

/// `PMIx_Argv_append_unique_nosize`: as `PMIx_Argv_append_nosize`, unless `*argv` holds
/// `arg` already (success, and nothing changes).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Argv_append_unique_nosize(argv: ArgvMut<'_>, arg: Str<'_>) -> CStatus {
    if let (Ok(present), Some(wanted)) = (argv.entries(), arg.bytes())
        && present.iter().any(|e| e == wanted)
    {
        return Status::SUCCESS.0;
    }
    insert(argv, arg, false)
}

/// `PMIx_Argv_free`: every entry and the array (NULL is allowed).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Argv_free(argv: ArgvOwned) {
    guard_or("PMIx_Argv_free", (), || argv.free());
}

/// `PMIx_Argv_count`: the entries before the NULL (0 for a NULL array).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Argv_count(argv: Argv<'_>) -> c_int {
    guard_or("PMIx_Argv_count", 0, || {
        c_int::try_from(argv.bytes().len()).unwrap_or(c_int::MAX)
    })
}

/// `PMIx_Argv_split_inter`: the pieces of `src` between `delimiter`s; with `include_empty`
/// the empty pieces between two delimiters too (never one after a trailing delimiter). NULL
/// for a NULL or empty string.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Argv_split_inter(
    src: Str<'_>,
    delimiter: c_int,
    include_empty: bool,
) -> *mut *mut c_char {
    guard_or("PMIx_Argv_split_inter", ptr::null_mut(), || {
        let Some(text) = src.bytes().filter(|t| !t.is_empty()) else {
            return ptr::null_mut();
        };
        // C's `int` delimiter is compared as a `char`.
        let delimiter = delimiter as u8;
        let mut pieces: Vec<&[u8]> = text.split(|b| *b == delimiter).collect();
        if text.ends_with(&[delimiter]) {
            pieces.pop();
        }
        pieces.retain(|p| include_empty || !p.is_empty());
        c_argv(&pieces).unwrap_or(ptr::null_mut())
    })
}

/// `PMIx_Argv_split`: `PMIx_Argv_split_inter` without the empty pieces.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Argv_split(src: Str<'_>, delimiter: c_int) -> *mut *mut c_char {
    PMIx_Argv_split_inter(src, delimiter, false)
}

/// `PMIx_Argv_split_with_empty`: `PMIx_Argv_split_inter` with the empty pieces.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Argv_split_with_empty(src: Str<'_>, delimiter: c_int) -> *mut *mut c_char {
    PMIx_Argv_split_inter(src, delimiter, true)
}

/// `PMIx_Argv_join`: the entries joined by `delimiter` (an empty string for none).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Argv_join(argv: Argv<'_>, delimiter: c_int) -> *mut c_char {
    guard_or("PMIx_Argv_join", ptr::null_mut(), || {
        let joined = argv.bytes().join(&(delimiter as u8));
        c_strdup(&joined).unwrap_or(ptr::null_mut())
    })
}

/// `PMIx_Argv_copy`: a deep copy (NULL for NULL).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Argv_copy(argv: Argv<'_>) -> *mut *mut c_char {
    guard_or("PMIx_Argv_copy", ptr::null_mut(), || {
        if argv.is_null() {
            return ptr::null_mut();
        }
        c_argv(&argv.bytes()).unwrap_or(ptr::null_mut())
    })
}

/// `PMIx_Setenv`: `name=value` in the environment `*env` (the process's own when `*env` is
/// `environ`, through `setenv`/`unsetenv`); an existing `name` is replaced only with
/// `overwrite` (`PMIX_ERR_EXISTS` otherwise). A NULL value sets `name=` (or, in the
/// process's environment, unsets it).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Setenv(
    name: Str<'_>,
    value: Str<'_>,
    overwrite: bool,
    mut env: ArgvMut<'_>,
) -> CStatus {
    guard("PMIx_Setenv", || {
        let name = name.bytes().ok_or(Status::ERR_BAD_PARAM)?;
        if env.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        if env.is_process_env()? {
            return process_setenv(name, value.bytes(), overwrite);
        }
        let mut entry = name.to_vec();
        entry.push(b'=');
        entry.extend_from_slice(value.bytes().unwrap_or_default());
        let existing = env
            .entries()?
            .iter()
            .position(|e| e.len() > name.len() && e.starts_with(name) && e[name.len()] == b'=');
        match existing {
            Some(_) if !overwrite => Err(Status::ERR_EXISTS),
            Some(at) => env.replace(at, &entry),
            None => env.insert(&entry, false),
        }
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::{CStr, CString};

    use super::*;
    use crate::values::argv_bytes;

    /// The entries of an array of this family, as Rust strings.
    fn strings(argv: *mut *mut c_char) -> Vec<String> {
        // SAFETY: an array this family made.
        unsafe { argv_bytes(argv) }
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    }

    /// An array of this family as an argument.
    fn arg(argv: *mut *mut c_char) -> Argv<'static> {
        // SAFETY: an array this family made, alive while the test uses it.
        unsafe { Argv::new(argv) }
    }

    #[test]
    fn split_keeps_or_drops_the_empty_pieces_and_join_undoes_it() {
        let src = CString::new("a,,b,").unwrap();
        // SAFETY: C strings of this test; each array is released once.
        unsafe {
            let src = Str::new(src.as_ptr());
            let plain = PMIx_Argv_split(src, c_int::from(b','));
            assert_eq!(strings(plain), ["a", "b"]);
            let with_empty = PMIx_Argv_split_with_empty(src, c_int::from(b','));
            assert_eq!(strings(with_empty), ["a", "", "b"]);
            assert_eq!(PMIx_Argv_count(arg(with_empty)), 3);
            let joined = PMIx_Argv_join(arg(with_empty), c_int::from(b':'));
            assert_eq!(CStr::from_ptr(joined).to_bytes(), b"a::b");
            crate::boundary::free(joined);
            let copy = PMIx_Argv_copy(arg(plain));
            assert_eq!(strings(copy), ["a", "b"]);
            PMIx_Argv_free(ArgvOwned::new(plain));
            PMIx_Argv_free(ArgvOwned::new(with_empty));
            PMIx_Argv_free(ArgvOwned::new(copy));
            let empty = CString::new("").unwrap();
            assert!(PMIx_Argv_split(Str::new(empty.as_ptr()), c_int::from(b',')).is_null());
        }
    }

    #[test]
    fn append_prepend_and_unique_grow_a_null_array() {
        let mut argv: *mut *mut c_char = ptr::null_mut();
        let (b, a) = (CString::new("b").unwrap(), CString::new("a").unwrap());
        // SAFETY: an array of this family and C strings of this test.
        unsafe {
            let (b, a) = (Str::new(b.as_ptr()), Str::new(a.as_ptr()));
            assert_eq!(PMIx_Argv_append_nosize(ArgvMut::new(&raw mut argv), b), 0);
            assert_eq!(PMIx_Argv_prepend_nosize(ArgvMut::new(&raw mut argv), a), 0);
            assert_eq!(
                PMIx_Argv_append_unique_nosize(ArgvMut::new(&raw mut argv), b),
                0
            );
            assert_eq!(strings(argv), ["a", "b"]);
            PMIx_Argv_free(ArgvOwned::new(argv));
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
            let (name, one, two) = (
                Str::new(name.as_ptr()),
                Str::new(one.as_ptr()),
                Str::new(two.as_ptr()),
            );
            assert_eq!(PMIx_Setenv(name, one, false, ArgvMut::new(&raw mut env)), 0);
            assert_eq!(
                PMIx_Setenv(name, two, false, ArgvMut::new(&raw mut env)),
                Status::ERR_EXISTS.0
            );
            assert_eq!(strings(env), ["K=1"]);
            assert_eq!(PMIx_Setenv(name, two, true, ArgvMut::new(&raw mut env)), 0);
            assert_eq!(strings(env), ["K=2"]);
            PMIx_Argv_free(ArgvOwned::new(env));
        }
    }
}
