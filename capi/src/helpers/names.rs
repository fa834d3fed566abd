//! Keys, namespaces, ranks and process identifiers (draft §3.2.1 to §3.2.4): loading them
//! into their fixed-size fields, comparing them as the standard compares them (a NULL or
//! empty namespace and `PMIX_RANK_WILDCARD` match anything), and checking them.

use pmix::model::Rank;

use crate::args::{In, InOut, KeyOut, NspaceOut, Out, Str};
use crate::boundary::{fixed_bytes, guard_or};
use crate::types::CProc;

const KEY_ROOM: usize = 512;
const NSPACE_ROOM: usize = 256;

/// Whether two namespaces match: a NULL or empty one matches any.
fn nspaces_match(a: &[u8], b: &[u8]) -> bool {
    a.is_empty() || b.is_empty() || a == b
}

/// `PMIx_Check_key`: whether `key` is `str` (compared over a key's 511 bytes).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Check_key(key: Str<'_>, str: Str<'_>) -> bool {
    guard_or("PMIx_Check_key", false, || {
        if key.is_null() || str.is_null() {
            return false;
        }
        key.bytes_within(KEY_ROOM - 1) == str.bytes_within(KEY_ROOM - 1)
    })
}

/// `PMIx_Check_reserved_key`: whether `key` is in the standard's reserved `pmix` prefix.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Check_reserved_key(key: Str<'_>) -> bool {
    guard_or("PMIx_Check_reserved_key", false, || {
        key.bytes_within(KEY_ROOM - 1).starts_with(b"pmix")
    })
}

/// `PMIx_Load_key`: `src` into the key `key` (NULL leaves it empty).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Load_key(key: KeyOut<'_>, src: Str<'_>) {
    guard_or("PMIx_Load_key", (), || {
        key.fixed(src.bytes_within(KEY_ROOM - 1));
    });
}

/// `PMIx_Check_nspace`: whether two namespaces match; a NULL or empty one matches any.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Check_nspace(a: Str<'_>, b: Str<'_>) -> bool {
    guard_or("PMIx_Check_nspace", false, || {
        nspaces_match(
            a.bytes_within(NSPACE_ROOM - 1),
            b.bytes_within(NSPACE_ROOM - 1),
        )
    })
}

/// `PMIx_Nspace_invalid`: whether a namespace is NULL or empty.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Nspace_invalid(nspace: Str<'_>) -> bool {
    guard_or("PMIx_Nspace_invalid", true, || {
        nspace.bytes_within(NSPACE_ROOM - 1).is_empty()
    })
}

/// `PMIx_Load_nspace`: `str` into the namespace `nspace` (NULL leaves it empty).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Load_nspace(nspace: NspaceOut<'_>, str: Str<'_>) {
    guard_or("PMIx_Load_nspace", (), || {
        nspace.fixed(str.bytes_within(NSPACE_ROOM - 1));
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
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Check_procid(a: In<'_, CProc>, b: In<'_, CProc>) -> bool {
    guard_or("PMIx_Check_procid", false, || {
        let (Some(a), Some(b)) = (a.get(), b.get()) else {
            return false;
        };
        let same_nspace = nspaces_match(fixed_bytes(&a.nspace), fixed_bytes(&b.nspace));
        same_nspace && PMIx_Check_rank(a.rank, b.rank)
    })
}

/// `PMIx_Procid_invalid`: whether a process has no namespace or the rank
/// `PMIX_RANK_INVALID` (a NULL process is invalid).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Procid_invalid(p: In<'_, CProc>) -> bool {
    guard_or("PMIx_Procid_invalid", true, || {
        let Some(p) = p.get() else {
            return true;
        };
        fixed_bytes(&p.nspace).is_empty() || p.rank == Rank::INVALID.0
    })
}

/// `PMIx_Load_procid`: `nspace` and `rank` into `p`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Load_procid(p: InOut<'_, CProc>, nspace: Str<'_>, rank: u32) {
    guard_or("PMIx_Load_procid", (), || {
        if let Ok(p) = p.get() {
            crate::boundary::write_fixed(&mut p.nspace, nspace.bytes_within(NSPACE_ROOM - 1));
            p.rank = rank;
        }
    });
}

/// `PMIx_Xfer_procid`: a copy of `src` into `dst`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Xfer_procid(dst: Out<'_, CProc>, src: In<'_, CProc>) {
    guard_or("PMIx_Xfer_procid", (), || {
        if let Some(src) = src.get() {
            dst.set(*src);
        }
    });
}

/// `PMIx_Multicluster_nspace_construct`: `cluster:nspace` into `target`, which is left
/// empty when the two do not fit.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Multicluster_nspace_construct(
    target: NspaceOut<'_>,
    cluster: Str<'_>,
    nspace: Str<'_>,
) {
    guard_or("PMIx_Multicluster_nspace_construct", (), || {
        if target.is_null() {
            return;
        }
        let cluster = cluster.bytes_within(NSPACE_ROOM - 1);
        let nspace = nspace.bytes_within(NSPACE_ROOM - 1);
        let mut joined = Vec::with_capacity(cluster.len() + 1 + nspace.len());
        if cluster.len() + nspace.len() < NSPACE_ROOM - 1 {
            joined.extend_from_slice(cluster);
            joined.push(b':');
            joined.extend_from_slice(nspace);
        }
        target.fixed(&joined);
    });
}

/// `PMIx_Multicluster_nspace_parse`: `target`'s cluster (before the first `:`) into
/// `cluster`, and the rest into `nspace`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Multicluster_nspace_parse(
    target: Str<'_>,
    cluster: NspaceOut<'_>,
    nspace: NspaceOut<'_>,
) {
    guard_or("PMIx_Multicluster_nspace_parse", (), || {
        let whole = target.bytes_within(NSPACE_ROOM - 1);
        let (before, after) = match whole.iter().position(|b| *b == b':') {
            Some(at) => (&whole[..at], &whole[at + 1..]),
            None => (whole, &[][..]),
        };
        cluster.fixed(before);
        nspace.fixed(after);
    });
}

#[cfg(test)]
mod tests {
    use std::ffi::{CString, c_char};

    use super::*;

    fn proc(ns: &str, rank: u32) -> CProc {
        let mut p = CProc::zeroed();
        let ns = CString::new(ns).unwrap();
        // SAFETY: a process of this test and a C string.
        unsafe { PMIx_Load_procid(InOut::new(&raw mut p), Str::new(ns.as_ptr()), rank) };
        p
    }

    /// The process as an argument.
    fn arg(p: &CProc) -> In<'_, CProc> {
        // SAFETY: a process of this test, outliving the argument.
        unsafe { In::new(p) }
    }

    #[test]
    fn namespaces_and_ranks_match_as_the_standard_compares_them() {
        let (a, b, any) = (proc("job", 3), proc("job", 3), proc("", Rank::WILDCARD.0));
        assert!(PMIx_Check_procid(arg(&a), arg(&b)));
        assert!(PMIx_Check_procid(arg(&a), arg(&any)));
        assert!(!PMIx_Check_procid(arg(&a), arg(&proc("job", 4))));
        assert!(!PMIx_Check_procid(arg(&a), arg(&proc("other", 3))));
        assert!(!PMIx_Procid_invalid(arg(&a)));
        assert!(PMIx_Procid_invalid(arg(&proc("job", Rank::INVALID.0))));
        assert!(PMIx_Procid_invalid(arg(&proc("", 0))));
        assert!(PMIx_Procid_invalid(In::null()));
        assert!(PMIx_Rank_valid(0) && !PMIx_Rank_valid(Rank::WILDCARD.0));
    }

    #[test]
    fn a_long_namespace_is_cut_to_its_field_and_a_multicluster_name_splits_back() {
        let long = CString::new("n".repeat(400)).unwrap();
        let mut ns = [1 as c_char; 256];
        // SAFETY: a namespace of this test and a C string.
        unsafe { PMIx_Load_nspace(Out::new(&raw mut ns), Str::new(long.as_ptr())) };
        assert_eq!(ns.iter().position(|c| *c == 0), Some(255));
        let (cluster, job) = (CString::new("east").unwrap(), CString::new("job7").unwrap());
        let mut joined = [0 as c_char; 256];
        let (mut c, mut j) = ([0 as c_char; 256], [0 as c_char; 256]);
        // SAFETY: namespaces of this test and C strings.
        unsafe {
            let (cluster, job) = (Str::new(cluster.as_ptr()), Str::new(job.as_ptr()));
            PMIx_Multicluster_nspace_construct(Out::new(&raw mut joined), cluster, job);
            let (c_out, j_out) = (Out::new(&raw mut c), Out::new(&raw mut j));
            PMIx_Multicluster_nspace_parse(Str::new(joined.as_ptr()), c_out, j_out);
        }
        assert_eq!(crate::boundary::read_fixed(&joined), "east:job7");
        assert_eq!(crate::boundary::read_fixed(&c), "east");
        assert_eq!(crate::boundary::read_fixed(&j), "job7");
    }
}
