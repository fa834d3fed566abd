//! What every entry point shares: the panic boundary, the log of a refused call, memory
//! from libc's allocator (C callers release what the library hands them with `free()`,
//! `openpmix/ABI.md` §2.1), C strings and fixed-size string fields, the process's own
//! environment (`environ`, `setenv`), and the strings C callers may keep for the life of the
//! process ([`interned`]).

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::{Mutex, PoisonError};

use pmix::model::{Status, Text};

use crate::types::CStatus;

/// Send this library's log to stderr when `PMIX_RS_LOG` asks for it (`warn`, `info` or
/// `debug`): why a call was refused, what a peer sent that did not decode. Silent otherwise,
/// as a library a program loads should be. With `PMIX_RS_LOG_FILE` the lines are appended
/// to that file instead (`%p` in its name is the process's id): a host such as
/// `slurmstepd` sends its stderr nowhere. Called by the init calls; once is enough.
pub(crate) fn init_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let level = match std::env::var("PMIX_RS_LOG").as_deref() {
            Ok("debug") => tracing::Level::DEBUG,
            Ok("info") => tracing::Level::INFO,
            Ok("warn") => tracing::Level::WARN,
            _ => return,
        };
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(level)
            .with_ansi(false);
        let file = std::env::var_os("PMIX_RS_LOG_FILE").and_then(|name| {
            let name = name
                .to_string_lossy()
                .replace("%p", &std::process::id().to_string());
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(name)
                .ok()
        });
        // A program that set up its own subscriber keeps it.
        let _ = match file {
            Some(f) => subscriber.with_writer(std::sync::Mutex::new(f)).try_init(),
            None => subscriber.with_writer(std::io::stderr).try_init(),
        };
    });
}

/// Run the body of an entry point that answers a status. A panic never crosses into C: it
/// is logged and answered with `PMIX_ERROR`.
pub(crate) fn guard(name: &str, body: impl FnOnce() -> Result<(), Status>) -> CStatus {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => Status::SUCCESS.0,
        Ok(Err(status)) => {
            tracing::debug!("{name}: {status:?}");
            status.0
        }
        Err(_) => {
            tracing::error!("{name}: an internal error (a panic) was caught at the C boundary");
            Status::ERROR.0
        }
    }
}

/// Run the body of an entry point that answers something else than a status: `fallback`
/// when it panics.
pub(crate) fn guard_or<T>(name: &str, fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        tracing::error!("{name}: an internal error (a panic) was caught at the C boundary");
        fallback
    })
}

/// `n` zeroed elements of `T` from libc (`calloc`), or `PMIX_ERR_NOMEM`. Never NULL, even
/// for `n == 0`, so a caller can always `free()` it.
pub(crate) fn calloc_array<T>(n: usize) -> Result<*mut T, Status> {
    // SAFETY: calloc takes any sizes and returns zeroed memory or NULL (checked).
    let p = unsafe { libc::calloc(n.max(1), size_of::<T>().max(1)) };
    if p.is_null() {
        return Err(Status::ERR_NOMEM);
    }
    Ok(p.cast())
}

/// `items` in an array from libc's allocator, NULL for none: what a caller receives as
/// `pmix_proc_t **procs, size_t *nprocs` and releases with `free()`.
pub(crate) fn c_array<T>(items: Vec<T>) -> Result<*mut T, Status> {
    if items.is_empty() {
        return Ok(std::ptr::null_mut());
    }
    let array: *mut T = calloc_array(items.len())?;
    for (i, item) in items.into_iter().enumerate() {
        // SAFETY: `array` has room for every item.
        unsafe { array.add(i).write(item) };
    }
    Ok(array)
}

/// `s` as a NUL-terminated string from libc's allocator. A NUL inside `s` ends it there, as
/// C would read it.
pub(crate) fn c_strdup(s: impl AsRef<[u8]>) -> Result<*mut c_char, Status> {
    let bytes = s.as_ref();
    let len = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    let p: *mut u8 = calloc_array(len + 1)?;
    // SAFETY: `p` holds `len + 1` zeroed bytes and `bytes` at least `len`; the last stays 0.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, len) };
    Ok(p.cast())
}

/// A copy of `bytes` from libc's allocator.
pub(crate) fn c_bytes(bytes: &[u8]) -> Result<*mut c_char, Status> {
    let p: *mut u8 = calloc_array(bytes.len())?;
    // SAFETY: `p` holds at least `bytes.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    Ok(p.cast())
}

/// Release a block of libc's allocator (NULL is allowed).
///
/// # Safety
/// `p` is NULL or a block from `malloc`/`calloc` not yet freed.
pub(crate) unsafe fn free<T>(p: *mut T) {
    // SAFETY: the caller's promise.
    unsafe { libc::free(p.cast::<c_void>()) }
}

/// The string at `p`, `None` for NULL. Bytes that are not UTF-8 are replaced: for names
/// this crate reads as text (keys, namespaces, commands); data goes through [`read_text`].
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn read_cstr(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller's promise.
    let s = unsafe { CStr::from_ptr(p) };
    Some(s.to_string_lossy().into_owned())
}

/// The bytes of the string at `p` as they are, in whatever encoding; `None` for NULL.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn read_text(p: *const c_char) -> Option<Text> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller's promise.
    let s = unsafe { CStr::from_ptr(p) };
    Some(Text::from(s.to_bytes()))
}

/// The bytes of a fixed-size C string field before its first NUL (all of them without one).
pub(crate) fn fixed_bytes(field: &[c_char]) -> &[u8] {
    let len = field.iter().position(|c| *c == 0).unwrap_or(field.len());
    // SAFETY: `c_char` and `u8` have the same size and alignment; `len` is within the field.
    unsafe { std::slice::from_raw_parts(field.as_ptr().cast::<u8>(), len) }
}

/// A fixed-size C string field (`pmix_key_t`, `pmix_nspace_t`): up to its first NUL.
pub(crate) fn read_fixed(field: &[c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Write `s` into a fixed-size C string field, cut to leave room for the NUL.
pub(crate) fn write_fixed(field: &mut [c_char], s: impl AsRef<[u8]>) {
    field.fill(0);
    let room = field.len().saturating_sub(1);
    for (dst, src) in field.iter_mut().zip(s.as_ref().iter().take(room)) {
        *dst = *src as c_char;
    }
}

/// The most bytes a C array handed to this library may span.
///
/// A frame's length is a `u32` on the wire, so no array larger than this can ever be sent, and
/// a count past it is a caller's mistake (an uninitialised or negative count): it is answered
/// with `PMIX_ERR_BAD_PARAM` instead of being read until the process faults.
pub(crate) const MAX_ARRAY_BYTES: usize = u32::MAX as usize;

/// Whether `n` elements of `T` at `p` are a plausible array: not NULL, at most
/// [`MAX_ARRAY_BYTES`], and not running past the end of the address space.
pub(crate) fn plausible<T>(p: *const T, n: usize) -> Result<(), Status> {
    if p.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    let bytes = n
        .checked_mul(std::mem::size_of::<T>())
        .filter(|b| *b <= MAX_ARRAY_BYTES)
        .ok_or(Status::ERR_BAD_PARAM)?;
    (p as usize)
        .checked_add(bytes)
        .filter(|end| *end <= isize::MAX as usize)
        .map(|_| ())
        .ok_or(Status::ERR_BAD_PARAM)
}

/// The slice of `n` elements at `p`; empty for `n == 0` whatever `p` is.
///
/// # Safety
/// When `n > 0`, `p` points to `n` initialised elements that outlive the slice.
pub(crate) unsafe fn slice_of<'a, T>(p: *const T, n: usize) -> Result<&'a [T], Status> {
    if n == 0 {
        return Ok(&[]);
    }
    plausible(p, n)?;
    // SAFETY: the caller's promise, and `p` is not NULL.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// The mutable slice of `n` elements at `p`; empty for `n == 0` whatever `p` is.
///
/// # Safety
/// When `n > 0`, `p` points to `n` initialised elements, not otherwise borrowed, that
/// outlive the slice.
pub(crate) unsafe fn slice_of_mut<'a, T>(p: *mut T, n: usize) -> Result<&'a mut [T], Status> {
    if n == 0 {
        return Ok(&mut []);
    }
    plausible(p.cast_const(), n)?;
    // SAFETY: the caller's promise, and `p` is not NULL.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

unsafe extern "C" {
    /// The process's environment, as `setenv` and `unsetenv` change it.
    static mut environ: *mut *mut c_char;
}

/// Whether `env` is the process's own environment (`environ`), compared by address.
pub(crate) fn is_process_env(env: *const *mut c_char) -> bool {
    // SAFETY: reading the address the static holds, not through it.
    let process = unsafe { environ };
    ptr::eq(env, process)
}

/// `name=value` in the process's own environment (`setenv`; a NULL value unsets it); an
/// existing `name` replaced only with `overwrite`. A name or value with a NUL inside, or one
/// libc refuses, is `PMIX_ERR_BAD_PARAM`.
pub(crate) fn process_setenv(
    name: &[u8],
    value: Option<&[u8]>,
    overwrite: bool,
) -> Result<(), Status> {
    let name = CString::new(name).map_err(|_| Status::ERR_BAD_PARAM)?;
    let rc = match value {
        // SAFETY: a C string; libc changes the process's environment.
        None => unsafe { libc::unsetenv(name.as_ptr()) },
        Some(v) => {
            let v = CString::new(v).map_err(|_| Status::ERR_BAD_PARAM)?;
            // SAFETY: C strings; libc changes the process's environment.
            unsafe { libc::setenv(name.as_ptr(), v.as_ptr(), c_int::from(overwrite)) }
        }
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(Status::ERR_BAD_PARAM)
    }
}

/// A string C callers may keep for the life of the process: each distinct text is made
/// once (the set of texts is small and bounded: the standard's names and messages).
pub(crate) fn interned(text: &str) -> *const c_char {
    static TEXTS: Mutex<BTreeMap<String, &'static CStr>> = Mutex::new(BTreeMap::new());
    let mut texts = TEXTS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(s) = texts.get(text) {
        return s.as_ptr();
    }
    let c: &'static CStr = Box::leak(
        CString::new(text.replace('\0', ""))
            .unwrap_or_default()
            .into_boxed_c_str(),
    );
    texts.insert(text.to_owned(), c);
    c.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_past_what_the_wire_can_carry_or_the_address_space_holds_is_a_bad_param() {
        let procs = [0u64; 2];
        // SAFETY: both arrays are refused before anything is read.
        unsafe {
            assert_eq!(
                slice_of(procs.as_ptr(), 1 << 40).err(),
                Some(Status::ERR_BAD_PARAM)
            );
            assert_eq!(
                slice_of(procs.as_ptr(), usize::MAX).err(),
                Some(Status::ERR_BAD_PARAM)
            );
            let near_the_end = (isize::MAX as usize - 8) as *const u64;
            assert_eq!(slice_of(near_the_end, 2).err(), Some(Status::ERR_BAD_PARAM));
        }
        // SAFETY: `procs` holds two procs.
        let read = unsafe { slice_of(procs.as_ptr(), 2) };
        assert_eq!(read.map(<[_]>::len), Ok(2));
        let mut bytes = [0u8; 4];
        // SAFETY: `bytes` holds four bytes, refused past them.
        unsafe {
            assert_eq!(slice_of_mut(bytes.as_mut_ptr(), 4).map(|s| s.len()), Ok(4));
            assert_eq!(
                slice_of_mut(bytes.as_mut_ptr(), MAX_ARRAY_BYTES + 1).err(),
                Some(Status::ERR_BAD_PARAM)
            );
        }
    }
}
