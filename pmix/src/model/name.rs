//! Names of things: namespaces, ranks, processes and keys (PMIx v5.0 §3.2.1–3.2.4).
//!
//! The C types are fixed-size arrays (`pmix_nspace_t` is `char[256]`, `pmix_key_t` is
//! `char[512]`); here they are strings whose constructors enforce the same limits, so a value
//! that exists can always be handed to C or put on the wire.

use std::fmt;

use super::generated::constants::{MAX_KEYLEN, MAX_NSLEN};
use crate::Error;

/// Check a C-string-like name: at most `max` bytes and no NUL.
fn check_name(what: &str, s: &str, max: u32) -> Result<(), Error> {
    if s.len() > max as usize {
        return Err(Error::BadParam(format!(
            "{what} of {} bytes exceeds the limit of {max}",
            s.len()
        )));
    }
    if s.contains('\0') {
        return Err(Error::BadParam(format!("{what} {s:?} contains a NUL byte")));
    }
    Ok(())
}

/// A namespace: at most `PMIX_MAX_NSLEN` (255) bytes, no NUL. The empty namespace is the
/// "not yet set" value of a zeroed `pmix_proc_t`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Nspace(String);

impl Nspace {
    /// A namespace from a string, or `BadParam` if it is too long or holds a NUL.
    pub fn new(s: impl Into<String>) -> Result<Self, Error> {
        let s = s.into();
        check_name("namespace", &s, MAX_NSLEN)?;
        Ok(Nspace(s))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A namespace from decoded bytes that the decoder already bounded; over-long names from
    /// a peer are an error there, not here.
    pub(crate) fn from_checked(s: String) -> Self {
        Nspace(s)
    }
}

impl fmt::Debug for Nspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Nspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<&str> for Nspace {
    type Error = Error;
    fn try_from(s: &str) -> Result<Self, Error> {
        Nspace::new(s)
    }
}

impl PartialEq<str> for Nspace {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Nspace {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// A key: at most `PMIX_MAX_KEYLEN` (511) bytes, no NUL, not empty.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(String);

impl Key {
    /// A key from a string, or `BadParam` if it is empty, too long or holds a NUL.
    pub fn new(s: impl Into<String>) -> Result<Self, Error> {
        let s = s.into();
        if s.is_empty() {
            return Err(Error::BadParam("empty key".into()));
        }
        check_name("key", &s, MAX_KEYLEN)?;
        Ok(Key(s))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Keys starting with `pmix` are reserved for the standard's attributes (PMIx v5.0 §6.1);
    /// the `PMIX_CHECK_RESERVED_KEY` macro.
    pub fn is_reserved(&self) -> bool {
        self.0.starts_with("pmix")
    }

    /// The empty key of a zeroed `pmix_info_t` or `pmix_pdata_t`: a peer may pack one, and
    /// the codec keeps it, so a C caller's is kept too.
    pub fn unset() -> Self {
        Key(String::new())
    }

    /// A key that the codec decoded: the length bound is checked there. An empty key from a
    /// peer is kept (OpenPMIx packs the zeroed key of an unset `pmix_info_t` as "").
    pub(crate) fn from_checked(s: String) -> Self {
        Key(s)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<&str> for Key {
    type Error = Error;
    fn try_from(s: &str) -> Result<Self, Error> {
        Key::new(s)
    }
}

impl PartialEq<str> for Key {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Key {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// `pmix_rank_t`: a process rank within its namespace, or one of the special ranks.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Rank(pub u32);

impl Rank {
    /// Whether this is an ordinary rank (below `PMIX_RANK_VALID`), not a special value.
    pub fn is_valid(self) -> bool {
        self.0 <= Rank::VALID.0
    }

    /// The C name of a special rank (`PMIX_RANK_WILDCARD`, …), `None` for ordinary ranks.
    pub fn special_name(self) -> Option<&'static str> {
        if self.is_valid() {
            return None;
        }
        Self::NAMES
            .iter()
            .find(|(_, v, _)| *v == self)
            .map(|(n, _, _)| *n)
    }
}

impl fmt::Debug for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.special_name() {
            Some(n) => f.write_str(n),
            None => write!(f, "{}", self.0),
        }
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl From<u32> for Rank {
    fn from(r: u32) -> Self {
        Rank(r)
    }
}

/// `pmix_proc_t`: a process, named by its namespace and rank.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Proc {
    pub nspace: Nspace,
    pub rank: Rank,
}

impl Proc {
    pub fn new(nspace: Nspace, rank: impl Into<Rank>) -> Self {
        Proc {
            nspace,
            rank: rank.into(),
        }
    }

    /// A process from a namespace string, or `BadParam` if the namespace is invalid.
    pub fn try_new(nspace: &str, rank: impl Into<Rank>) -> Result<Self, Error> {
        Ok(Proc {
            nspace: Nspace::new(nspace)?,
            rank: rank.into(),
        })
    }

    /// Whether the two names denote the same process, a wildcard rank on either side
    /// matching any rank of its namespace.
    pub fn matches(&self, other: &Proc) -> bool {
        self.nspace == other.nspace
            && (self.rank == other.rank
                || self.rank == Rank::WILDCARD
                || other.rank == Rank::WILDCARD)
    }
}

impl fmt::Debug for Proc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.nspace, self.rank)
    }
}

impl fmt::Display for Proc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nspace_of_255_bytes_is_accepted_and_256_rejected() {
        assert!(Nspace::new("n".repeat(255)).is_ok());
        let err = Nspace::new("n".repeat(256)).unwrap_err();
        assert_eq!(err.status(), crate::Status::ERR_BAD_PARAM);
    }

    #[test]
    fn key_limits_are_511_bytes_no_nul_not_empty() {
        assert!(Key::new("k".repeat(511)).is_ok());
        assert!(Key::new("k".repeat(512)).is_err());
        assert!(Key::new("a\0b").is_err());
        assert!(Key::new("").is_err());
    }

    #[test]
    fn special_ranks_have_their_openpmix_values() {
        assert_eq!(Rank::UNDEF.0, u32::MAX);
        assert_eq!(Rank::WILDCARD.0, u32::MAX - 1);
        assert_eq!(Rank::LOCAL_NODE.0, u32::MAX - 2);
        assert_eq!(Rank::INVALID.0, u32::MAX - 3);
        assert_eq!(Rank::LOCAL_PEERS.0, u32::MAX - 4);
        assert!(Rank(7).is_valid());
        assert!(!Rank::WILDCARD.is_valid());
        assert_eq!(format!("{:?}", Rank::WILDCARD), "PMIX_RANK_WILDCARD");
    }

    #[test]
    fn reserved_keys_start_with_pmix() {
        assert!(Key::new("pmix.job.size").unwrap().is_reserved());
        assert!(!Key::new("my.key").unwrap().is_reserved());
    }
}
