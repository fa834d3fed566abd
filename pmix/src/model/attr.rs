//! Every attribute of the standard as a typed constant.
//!
//! An attribute is a reserved key with a declared value type, for example
//! `PMIX_JOB_SIZE` = `"pmix.job.size"`, `uint32_t`. [`Attr<T>`] carries the key and, in `T`,
//! the Rust type of its value, so `Info::new(attr::JOB_SIZE, 4)` type-checks and
//! `Info::new(attr::JOB_SIZE, "four")` does not. The constants are generated from the
//! inventory of the standard (459 in v5.0 in [`V5_0`], 526 in the 5.1 draft in [`DRAFT`]).
//!
//! Seven attributes have a different key string in OpenPMIx 4.2 than in the standard's text
//! (for example `PMIX_FABRIC_COORDINATES`: `pmix.fab.coords` in the standard, `pmix.fab.coord`
//! in OpenPMIx). [`AttrDef::key`] is the standard's; [`AttrDef::openpmix_key`] records
//! OpenPMIx's where it differs, for the layers that talk to OpenPMIx peers.

use std::marker::PhantomData;

use super::{DataType, Key};

pub use super::generated::attributes::*;

/// Whether an attribute is part of the standard's stable text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrStatus {
    Active,
    Provisional,
    Deprecated,
}

/// In which versions of the standard an attribute is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    Both,
    V5_0Only,
    DraftOnly,
}

/// What the inventory says of one attribute.
#[derive(Debug, PartialEq, Eq)]
pub struct AttrDef {
    /// The C macro name (`PMIX_JOB_SIZE`).
    pub name: &'static str,
    /// The key string in the standard's text (`pmix.job.size`).
    pub key: &'static str,
    /// OpenPMIx 4.2's key string, when it differs from the standard's.
    pub openpmix_key: Option<&'static str>,
    /// The declared value type; `None` for presence-only flags and types that vary by use.
    pub data_type: Option<DataType>,
    /// The type the 5.1 draft declares, when it differs from v5.0's (five attributes, for
    /// example `PMIX_LOG_MSG`: a byte object in v5.0, a string in the draft). The Rust type
    /// of the constant follows v5.0, the baseline (DESIGN §2).
    pub draft_data_type: Option<Option<DataType>>,
    pub status: AttrStatus,
    /// The section of the standard that declares it (v5.0 numbering when in v5.0).
    pub section: &'static str,
    pub presence: Presence,
}

impl AttrDef {
    pub fn in_v5_0(&self) -> bool {
        matches!(self.presence, Presence::Both | Presence::V5_0Only)
    }

    pub fn in_draft(&self) -> bool {
        matches!(self.presence, Presence::Both | Presence::DraftOnly)
    }

    /// The declared type in the 5.1 draft.
    pub fn data_type_in_draft(&self) -> Option<DataType> {
        self.draft_data_type.unwrap_or(self.data_type)
    }
}

/// A standard attribute whose value has Rust type `T`.
pub struct Attr<T> {
    def: &'static AttrDef,
    _type: PhantomData<fn() -> T>,
}

impl<T> Attr<T> {
    pub const fn new(def: &'static AttrDef) -> Self {
        Attr {
            def,
            _type: PhantomData,
        }
    }

    pub const fn def(&self) -> &'static AttrDef {
        self.def
    }

    pub const fn name(&self) -> &'static str {
        self.def.name
    }

    /// The key string as it goes on the wire to OpenPMIx 4.2 peers (its spelling where it
    /// differs from the standard's).
    pub const fn wire_key(&self) -> &'static str {
        match self.def.openpmix_key {
            Some(k) => k,
            None => self.def.key,
        }
    }

    /// The key as a [`Key`]; the inventory's keys are all valid.
    pub fn key(&self) -> Key {
        Key::from_checked(self.def.key.to_string())
    }
}

impl<T> Clone for Attr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Attr<T> {}

impl<T> std::fmt::Debug for Attr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({:?})", self.def.name, self.def.key)
    }
}

/// The attribute with the given key string (the standard's or OpenPMIx's spelling).
pub fn by_key(key: &str) -> Option<&'static AttrDef> {
    V5_0.iter()
        .chain(DRAFT)
        .copied()
        .find(|d| d.key == key || d.openpmix_key == Some(key))
}

/// The attribute with the given C name (`PMIX_JOB_SIZE`).
pub fn by_name(name: &str) -> Option<&'static AttrDef> {
    V5_0.iter().chain(DRAFT).copied().find(|d| d.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventory_counts_match_the_standard() {
        assert_eq!(V5_0.len(), 459);
        assert_eq!(DRAFT.len(), 526);
    }

    #[test]
    fn attributes_are_found_by_either_key_spelling() {
        assert_eq!(
            by_key("pmix.job.size").map(|d| d.name),
            Some("PMIX_JOB_SIZE")
        );
        assert_eq!(
            by_key("pmix.fab.coord").map(|d| d.name),
            Some("PMIX_FABRIC_COORDINATES")
        );
        assert_eq!(
            by_name("PMIX_JOB_SIZE").and_then(|d| d.data_type),
            Some(DataType::UINT32)
        );
    }
}
