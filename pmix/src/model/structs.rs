//! The standard's structures that hold no value (PMIx v5.0 chapter 3 and the chapters that
//! declare them); those that hold values or infos are defined with [`Value`](super::Value),
//! which holds them in turn (`value.rs`).
//!
//! Field names follow the C structs so a reader of the standard finds them; C pointers that
//! may be NULL are `Option`s, counted arrays are `Vec`s.

use super::{DataType, Proc, ProcState, Text};

/// `pmix_byte_object_t`: an opaque run of bytes (PMIx v5.0 §3.2.12).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteObject(pub Vec<u8>);

impl From<Vec<u8>> for ByteObject {
    fn from(v: Vec<u8>) -> Self {
        ByteObject(v)
    }
}

impl From<&[u8]> for ByteObject {
    fn from(v: &[u8]) -> Self {
        ByteObject(v.to_vec())
    }
}

/// `struct timeval`: seconds and microseconds (`PMIX_TIMEVAL`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timeval {
    pub sec: i64,
    pub usec: i64,
}

/// `time_t`: seconds since the epoch (`PMIX_TIME`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub i64);

/// `void *` (`PMIX_POINTER`): an address meaningful only inside one process. It has no wire
/// form; OpenPMIx packs a placeholder byte and unpacks a NULL pointer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pointer(pub usize);

/// `pmix_envar_t`: an environment variable to set, prepend or append to (PMIx v5.0 §3.2.11).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Envar {
    pub envar: Option<Text>,
    pub value: Option<Text>,
    /// The separator used when prepending or appending; `0` when unset.
    pub separator: u8,
}

impl Envar {
    pub fn new(envar: &str, value: &str, separator: char) -> Self {
        Envar {
            envar: Some(envar.into()),
            value: Some(value.into()),
            separator: u8::try_from(separator).unwrap_or(b':'),
        }
    }
}

/// `pmix_proc_info_t`: what is known of a process (PMIx v5.0 §3.2.6).
///
/// OpenPMIx 4.2 does not put `exit_code` on the wire; it decodes as 0.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProcInfo {
    pub proc: Proc,
    pub hostname: Option<Text>,
    pub executable_name: Option<Text>,
    pub pid: i32,
    pub exit_code: i32,
    pub state: ProcState,
}

/// `pmix_regattr_t`: an attribute supported by an API, for `PMIx_Register_attributes` and
/// queries of supported attributes (PMIx v5.0 §17.2.12.2).
#[derive(Clone, Debug, Default, PartialEq, PartialOrd)]
pub struct RegAttr {
    pub name: Option<String>,
    pub string: Option<String>,
    pub data_type: DataType,
    pub description: Vec<Option<String>>,
}

/// `pmix_data_buffer_t` carried as a value (`PMIX_DATA_BUFFER`) or the deprecated internal
/// buffer (`PMIX_BUFFER`): the packed bytes, and for `PMIX_BUFFER` the buffer type byte.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Buffer {
    pub buffer_type: u8,
    pub bytes: Vec<u8>,
}
