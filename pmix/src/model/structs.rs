//! The standard's structures (PMIx v5.0 chapter 3 and the chapters that declare them).
//!
//! Field names follow the C structs so a reader of the standard finds them; C pointers that
//! may be NULL are `Option`s, counted arrays are `Vec`s.

use super::{DataType, Info, Key, Proc, ProcState, Value};

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
    pub envar: Option<String>,
    pub value: Option<String>,
    /// The separator used when prepending or appending; `0` when unset.
    pub separator: u8,
}

impl Envar {
    pub fn new(envar: &str, value: &str, separator: char) -> Self {
        Envar {
            envar: Some(envar.to_string()),
            value: Some(value.to_string()),
            separator: u8::try_from(separator).unwrap_or(b':'),
        }
    }
}

/// `pmix_data_array_t`: a typed array of values (PMIx v5.0 §3.2.13).
///
/// Every element has the array's type; [`DataArray::new`] checks it, and the codec refuses
/// arrays whose elements disagree with their declared type.
#[derive(Clone, Debug, PartialEq, PartialOrd)]
pub struct DataArray {
    pub data_type: DataType,
    pub elements: Vec<Value>,
}

impl DataArray {
    /// An array of `data_type`, or `TypeMismatch` if an element has another type.
    pub fn new(data_type: DataType, elements: Vec<Value>) -> Result<Self, crate::Error> {
        if let Some(bad) = elements.iter().find(|v| v.data_type() != data_type) {
            return Err(crate::Error::TypeMismatch {
                expected: super::strings::data_type_string(data_type).to_string(),
                found: super::strings::data_type_string(bad.data_type()).to_string(),
            });
        }
        Ok(DataArray {
            data_type,
            elements,
        })
    }

    /// An array of `Info`s, the most common kind.
    pub fn of_infos(infos: Vec<Info>) -> Self {
        DataArray {
            data_type: DataType::INFO,
            elements: infos
                .into_iter()
                .map(|i| Value::Info(Box::new(i)))
                .collect(),
        }
    }

    /// An array of process names (custom ranges, affected processes, group members).
    pub fn of_procs(procs: Vec<Proc>) -> Self {
        DataArray {
            data_type: DataType::PROC,
            elements: procs.into_iter().map(Value::Proc).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.elements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// The elements as `Info`s, if this is an array of `PMIX_INFO`.
    pub fn infos(&self) -> Option<impl Iterator<Item = &Info>> {
        (self.data_type == DataType::INFO).then(|| {
            self.elements.iter().filter_map(|v| match v {
                Value::Info(i) => Some(&**i),
                _ => None,
            })
        })
    }
}

/// `pmix_app_t`: one application of a spawn request (PMIx v5.0 §12.2.5).
#[derive(Clone, Debug, Default, PartialEq, PartialOrd)]
pub struct App {
    pub cmd: Option<String>,
    pub argv: Vec<Option<String>>,
    pub env: Vec<Option<String>>,
    pub cwd: Option<String>,
    pub maxprocs: i32,
    pub info: Vec<Info>,
}

/// `pmix_query_t`: a query for the keys, with qualifiers (PMIx v5.0 §7.1.1).
#[derive(Clone, Debug, Default, PartialEq, PartialOrd)]
pub struct Query {
    pub keys: Vec<Option<String>>,
    pub qualifiers: Vec<Info>,
}

/// `pmix_pdata_t`: published data: who published it, its key and value (PMIx v5.0 §9.7.1).
#[derive(Clone, Debug, PartialEq, PartialOrd)]
pub struct PData {
    pub proc: Proc,
    pub key: Key,
    pub value: Value,
}

impl PData {
    /// The status of a lookup of `keys` that found `found` (v5.0 §9.6): `PMIX_SUCCESS` when
    /// every key was found, `PMIX_ERR_PARTIAL_SUCCESS` when some were, `PMIX_ERR_NOT_FOUND`
    /// when none were.
    pub fn lookup_status<K: AsRef<str>>(keys: &[K], found: &[PData]) -> super::Status {
        let hit = |k: &K| found.iter().any(|d| d.key.as_str() == k.as_ref());
        match keys.iter().filter(|k| hit(k)).count() {
            0 => super::Status::ERR_NOT_FOUND,
            n if n < keys.len() => super::Status::ERR_PARTIAL_SUCCESS,
            _ => super::Status::SUCCESS,
        }
    }
}

/// `pmix_kval_t` (OpenPMIx internal, `PMIX_KVAL`): a key and a value, as stored and sent by
/// the key-value store.
#[derive(Clone, Debug, PartialEq, PartialOrd)]
pub struct Kval {
    pub key: Key,
    pub value: Value,
}

/// `pmix_proc_info_t`: what is known of a process (PMIx v5.0 §3.2.6).
///
/// OpenPMIx 4.2 does not put `exit_code` on the wire; it decodes as 0.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProcInfo {
    pub proc: Proc,
    pub hostname: Option<String>,
    pub executable_name: Option<String>,
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

/// `pmix_fabric_t`: a handle on a fabric and what is known of it (PMIx v5.0 §15.2.10).
/// The `module` pointer of the C struct is the implementation's business and is not kept.
#[derive(Clone, Debug, Default, PartialEq, PartialOrd)]
pub struct Fabric {
    pub name: Option<String>,
    pub index: u64,
    pub info: Vec<Info>,
}

/// `pmix_data_buffer_t` carried as a value (`PMIX_DATA_BUFFER`) or the deprecated internal
/// buffer (`PMIX_BUFFER`): the packed bytes, and for `PMIX_BUFFER` the buffer type byte.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Buffer {
    pub buffer_type: u8,
    pub bytes: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Nspace, Status};

    #[test]
    fn a_lookup_finding_some_keys_is_a_partial_success() {
        let found = vec![PData {
            proc: Proc::new(Nspace::new("job").expect("a namespace"), 0),
            key: Key::new("a").expect("a key"),
            value: Value::Uint32(1),
        }];
        assert_eq!(PData::lookup_status(&["a"], &found), Status::SUCCESS);
        assert_eq!(
            PData::lookup_status(&["a", "b"], &found),
            Status::ERR_PARTIAL_SUCCESS
        );
        assert_eq!(PData::lookup_status(&["b"], &found), Status::ERR_NOT_FOUND);
        assert_eq!(PData::lookup_status(&["b"], &[]), Status::ERR_NOT_FOUND);
    }
}
