//! Keys, namespaces, ranks and process identifiers (draft §3.2.1 to §3.2.4): loading them
//! into their fixed-size fields, comparing them as the standard compares them (a NULL or
//! empty namespace and `PMIX_RANK_WILDCARD` match anything), and checking them.

use std::ffi::c_char;

use pmix::model::Rank;

use crate::boundary::guard_or;
use crate::types::CProc;

/// The bytes of the C string at `p`, at most `max` of them, before its NUL; empty for NULL.
///
/// # Safety
/// `p` is NULL, or readable up to its NUL or `max` bytes, whichever comes first.
unsafe fn bytes_of<'a>(p: *const c_char, max: usize) -> &'a [u8] {
    if p.is_null() {
        return &[];
    }
    let mut len = 0;
    // SAFETY: the caller's promise: readable until the NUL or `max`.
    while len < max && unsafe { *p.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: the `len` bytes just read.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
}

/// Write `src` (cut to leave room for the NUL) into the fixed field at `dst` of `room`
/// bytes, zeroing the rest.
///
/// # Safety
/// `dst` is writable for `room` bytes.
unsafe fn load_fixed(dst: *mut c_char, room: usize, src: &[u8]) {
    let n = src.len().min(room.saturating_sub(1));
    // SAFETY: the caller's promise; `n < room`.
    unsafe {
        std::ptr::write_bytes(dst, 0, room);
        std::ptr::copy_nonoverlapping(src.as_ptr().cast::<c_char>(), dst, n);
    }
}

const KEY_ROOM: usize = 512;
const NSPACE_ROOM: usize = 256;

/// `PMIx_Check_key`: whether `key` is `str` (compared over a key's 511 bytes).
///
/// # Safety
/// Each is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Check_key(key: *const c_char, str: *const c_char) -> bool {
    guard_or("PMIx_Check_key", false, || {
        if key.is_null() || str.is_null() {
            return false;
        }
        // SAFETY: the caller's promise.
        unsafe { bytes_of(key, KEY_ROOM - 1) == bytes_of(str, KEY_ROOM - 1) }
    })
}

/// `PMIx_Check_reserved_key`: whether `key` is in the standard's reserved `pmix` prefix.
///
/// # Safety
/// `key` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Check_reserved_key(key: *const c_char) -> bool {
    guard_or("PMIx_Check_reserved_key", false, || {
        // SAFETY: the caller's promise.
        unsafe { bytes_of(key, KEY_ROOM - 1) }.starts_with(b"pmix")
    })
}

/// `PMIx_Load_key`: `src` into the key `key` (NULL leaves it empty).
///
/// # Safety
/// `key` is NULL or a `pmix_key_t`; `src` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Load_key(key: *mut c_char, src: *const c_char) {
    guard_or("PMIx_Load_key", (), || {
        if !key.is_null() {
            // SAFETY: the caller's promise: a key has 512 bytes.
            unsafe { load_fixed(key, KEY_ROOM, bytes_of(src, KEY_ROOM - 1)) };
        }
    });
}

/// `PMIx_Check_nspace`: whether two namespaces match; a NULL or empty one matches any.
///
/// # Safety
/// Each is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Check_nspace(a: *const c_char, b: *const c_char) -> bool {
    guard_or("PMIx_Check_nspace", false, || {
        // SAFETY: the caller's promise.
        let (a, b) = unsafe { (bytes_of(a, NSPACE_ROOM - 1), bytes_of(b, NSPACE_ROOM - 1)) };
        a.is_empty() || b.is_empty() || a == b
    })
}

/// `PMIx_Nspace_invalid`: whether a namespace is NULL or empty.
///
/// # Safety
/// `nspace` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Nspace_invalid(nspace: *const c_char) -> bool {
    // SAFETY: the caller's promise.
    guard_or("PMIx_Nspace_invalid", true, || unsafe {
        bytes_of(nspace, NSPACE_ROOM - 1).is_empty()
    })
}

/// `PMIx_Load_nspace`: `str` into the namespace `nspace` (NULL leaves it empty).
///
/// # Safety
/// `nspace` is NULL or a `pmix_nspace_t`; `str` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Load_nspace(nspace: *mut c_char, str: *const c_char) {
    guard_or("PMIx_Load_nspace", (), || {
        if !nspace.is_null() {
            // SAFETY: the caller's promise: a namespace has 256 bytes.
            unsafe { load_fixed(nspace, NSPACE_ROOM, bytes_of(str, NSPACE_ROOM - 1)) };
        }
    });
}

/// `PMIx_Check_rank`: whether two ranks match; `PMIX_RANK_WILDCARD` matches any.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Check_rank(a: u32, b: u32) -> bool {
    a == b || a == Rank::WILDCARD.0 || b == Rank::WILDCARD.0
}

/// `PMIx_Rank_valid`: whether a rank is an ordinary one, not a special value.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Rank_valid(a: u32) -> bool {
    Rank(a).is_valid()
}

/// `PMIx_Check_procid`: whether two processes match, namespace and rank as above.
///
/// # Safety
/// Each is NULL or a process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Check_procid(a: *const CProc, b: *const CProc) -> bool {
    guard_or("PMIx_Check_procid", false, || {
        // SAFETY: the caller's promise.
        let (Some(a), Some(b)) = (unsafe { a.as_ref() }, unsafe { b.as_ref() }) else {
            return false;
        };
        // SAFETY: the namespaces are fields of the processes, 256 bytes each.
        let same_nspace = unsafe { PMIx_Check_nspace(a.nspace.as_ptr(), b.nspace.as_ptr()) };
        same_nspace && PMIx_Check_rank(a.rank, b.rank)
    })
}

/// `PMIx_Procid_invalid`: whether a process has no namespace or the rank
/// `PMIX_RANK_INVALID` (a NULL process is invalid).
///
/// # Safety
/// `p` is NULL or a process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Procid_invalid(p: *const CProc) -> bool {
    guard_or("PMIx_Procid_invalid", true, || {
        // SAFETY: the caller's promise.
        let Some(p) = (unsafe { p.as_ref() }) else {
            return true;
        };
        // SAFETY: the namespace is a field of the process.
        let no_nspace = unsafe { PMIx_Nspace_invalid(p.nspace.as_ptr()) };
        no_nspace || p.rank == Rank::INVALID.0
    })
}

/// `PMIx_Load_procid`: `nspace` and `rank` into `p`.
///
/// # Safety
/// `p` is NULL or a writable process; `nspace` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Load_procid(p: *mut CProc, nspace: *const c_char, rank: u32) {
    guard_or("PMIx_Load_procid", (), || {
        // SAFETY: the caller's promise.
        if let Some(p) = unsafe { p.as_mut() } {
            // SAFETY: the namespace field, 256 bytes.
            unsafe { PMIx_Load_nspace(p.nspace.as_mut_ptr(), nspace) };
            p.rank = rank;
        }
    });
}

/// `PMIx_Xfer_procid`: a copy of `src` into `dst`.
///
/// # Safety
/// `dst` is NULL or a writable process; `src` NULL or a process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Xfer_procid(dst: *mut CProc, src: *const CProc) {
    guard_or("PMIx_Xfer_procid", (), || {
        // SAFETY: the caller's promise.
        if let (Some(dst), Some(src)) = unsafe { (dst.as_mut(), src.as_ref()) } {
            *dst = *src;
        }
    });
}

/// `PMIx_Multicluster_nspace_construct`: `cluster:nspace` into `target`, which is left
/// empty when the two do not fit.
///
/// # Safety
/// `target` is NULL or a writable namespace; the others NULL or C strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Multicluster_nspace_construct(
    target: *mut c_char,
    cluster: *const c_char,
    nspace: *const c_char,
) {
    guard_or("PMIx_Multicluster_nspace_construct", (), || {
        if target.is_null() {
            return;
        }
        // SAFETY: the caller's promise.
        let (cluster, nspace) = unsafe {
            (
                bytes_of(cluster, NSPACE_ROOM - 1),
                bytes_of(nspace, NSPACE_ROOM - 1),
            )
        };
        let mut joined = Vec::with_capacity(cluster.len() + 1 + nspace.len());
        if cluster.len() + nspace.len() < NSPACE_ROOM - 1 {
            joined.extend_from_slice(cluster);
            joined.push(b':');
            joined.extend_from_slice(nspace);
        }
        // SAFETY: the caller's promise: a namespace has 256 bytes.
        unsafe { load_fixed(target, NSPACE_ROOM, &joined) };
    });
}

/// `PMIx_Multicluster_nspace_parse`: `target`'s cluster (before the first `:`) into
/// `cluster`, and the rest into `nspace`.
///
/// # Safety
/// `target` is NULL or a C string; the others NULL or writable namespaces.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Multicluster_nspace_parse(
    target: *const c_char,
    cluster: *mut c_char,
    nspace: *mut c_char,
) {
    guard_or("PMIx_Multicluster_nspace_parse", (), || {
        // SAFETY: the caller's promise.
        let whole = unsafe { bytes_of(target, NSPACE_ROOM - 1) };
        let (before, after) = match whole.iter().position(|b| *b == b':') {
            Some(at) => (&whole[..at], &whole[at + 1..]),
            None => (whole, &[][..]),
        };
        // SAFETY: the caller's promise: namespaces of 256 bytes each.
        unsafe {
            if !cluster.is_null() {
                load_fixed(cluster, NSPACE_ROOM, before);
            }
            if !nspace.is_null() {
                load_fixed(nspace, NSPACE_ROOM, after);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    fn proc(ns: &str, rank: u32) -> CProc {
        let mut p = CProc::zeroed();
        let ns = CString::new(ns).unwrap();
        // SAFETY: a process of this test and a C string.
        unsafe { PMIx_Load_procid(&mut p, ns.as_ptr(), rank) };
        p
    }

    #[test]
    fn namespaces_and_ranks_match_as_the_standard_compares_them() {
        let (a, b, any) = (proc("job", 3), proc("job", 3), proc("", Rank::WILDCARD.0));
        // SAFETY: processes of this test.
        unsafe {
            assert!(PMIx_Check_procid(&a, &b));
            assert!(PMIx_Check_procid(&a, &any));
            assert!(!PMIx_Check_procid(&a, &proc("job", 4)));
            assert!(!PMIx_Check_procid(&a, &proc("other", 3)));
            assert!(!PMIx_Procid_invalid(&a));
            assert!(PMIx_Procid_invalid(&proc("job", Rank::INVALID.0)));
            assert!(PMIx_Procid_invalid(&proc("", 0)));
            assert!(PMIx_Procid_invalid(std::ptr::null()));
        }
        assert!(PMIx_Rank_valid(0) && !PMIx_Rank_valid(Rank::WILDCARD.0));
    }

    #[test]
    fn a_long_namespace_is_cut_to_its_field_and_a_multicluster_name_splits_back() {
        let long = CString::new("n".repeat(400)).unwrap();
        let mut ns = [1 as c_char; 256];
        // SAFETY: a namespace of this test and a C string.
        unsafe { PMIx_Load_nspace(ns.as_mut_ptr(), long.as_ptr()) };
        assert_eq!(ns.iter().position(|c| *c == 0), Some(255));
        let (cluster, job) = (CString::new("east").unwrap(), CString::new("job7").unwrap());
        let mut joined = [0 as c_char; 256];
        let (mut c, mut j) = ([0 as c_char; 256], [0 as c_char; 256]);
        // SAFETY: namespaces of this test and C strings.
        unsafe {
            PMIx_Multicluster_nspace_construct(joined.as_mut_ptr(), cluster.as_ptr(), job.as_ptr());
            PMIx_Multicluster_nspace_parse(joined.as_ptr(), c.as_mut_ptr(), j.as_mut_ptr());
        }
        assert_eq!(crate::boundary::read_fixed(&joined), "east:job7");
        assert_eq!(crate::boundary::read_fixed(&c), "east");
        assert_eq!(crate::boundary::read_fixed(&j), "job7");
    }
}
