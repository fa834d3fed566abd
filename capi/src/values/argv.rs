//! The NULL-terminated string arrays of the argv helpers (`char **`, an environment among
//! them) as callers hold them: arrays and strings of libc's allocator that the helpers read,
//! grow with `realloc`, and change an entry of in place. Making and releasing a whole array
//! is `records`' (`write_argv`, `free_argv`).

use std::ffi::{CStr, c_char};
use std::ptr;

use pmix::model::Status;

use crate::boundary::{c_strdup, free};

/// The bytes of each entry of `argv`, before its NULL (none for a NULL array).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of C strings that outlive the result.
pub(crate) unsafe fn argv_bytes<'a>(argv: *const *mut c_char) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    if argv.is_null() {
        return out;
    }
    // SAFETY: the caller's promise: readable up to its NULL, each entry a C string.
    unsafe {
        let mut i = 0;
        while !(*argv.add(i)).is_null() {
            out.push(CStr::from_ptr(*argv.add(i)).to_bytes());
            i += 1;
        }
    }
    out
}

/// Put a copy of `arg` at the front or the end of `*argv`, growing the array (made when
/// `*argv` is NULL).
///
/// # Safety
/// `*argv` is NULL or a NULL-terminated array of libc's allocator.
pub(crate) unsafe fn argv_insert(
    argv: &mut *mut *mut c_char,
    arg: &[u8],
    at_front: bool,
) -> Result<(), Status> {
    // SAFETY: the caller's promise.
    let n = unsafe { argv_bytes(*argv) }.len();
    let copy = c_strdup(arg)?;
    // SAFETY: `*argv` is NULL or libc's; realloc keeps its entries.
    let grown = unsafe { libc::realloc((*argv).cast(), (n + 2) * size_of::<*mut c_char>()) }
        .cast::<*mut c_char>();
    if grown.is_null() {
        // SAFETY: the copy is ours; `*argv` is untouched.
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
    }
    *argv = grown;
    Ok(())
}

/// Replace entry `at` of `argv` with a copy of `entry`, releasing the old one.
///
/// # Safety
/// `argv` is a NULL-terminated array of libc's allocator with more than `at` entries.
pub(crate) unsafe fn argv_replace(
    argv: *mut *mut c_char,
    at: usize,
    entry: &[u8],
) -> Result<(), Status> {
    let fresh = c_strdup(entry)?;
    // SAFETY: the caller's promise: the entry at `at` is libc's.
    unsafe {
        let slot = argv.add(at);
        free(*slot);
        *slot = fresh;
    }
    Ok(())
}
