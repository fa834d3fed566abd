//! `pmix_value_t`: a value of any of the standard's data types (PMIx v5.0 §3.2.8), and the
//! structures that hold values or infos and are held by values in turn: [`Info`] (its
//! methods in `info.rs`), [`DataArray`], [`App`], [`Query`], [`PData`], [`Kval`], and
//! [`Fabric`]. The type is recursive, so they are defined in one place.
//!
//! [`Value`] has one variant per `PMIX_*` data type code that can be packed, so it is also
//! what the codec produces when it decodes a type known only at run time, and what a
//! [`DataArray`] holds. Large variants are boxed to keep a `Value` at 40 bytes.
//!
//! Accessors come in two kinds:
//! - typed (`as_str`, `as_proc`, …) return the content only if the value has that type;
//! - numeric (`to_u64`, `to_i64`, `to_f64`) convert between the integer and floating types
//!   when the number fits, as `PMIx_Value_get_number` does, and return `None` otherwise.

use super::{
    AllocDirective, Buffer, ByteObject, Coord, Cpuset, DataRange, DataType, DeviceDistance,
    DeviceType, DiskStats, Endpoint, Envar, Geometry, InfoDirectives, IofChannel, JobState, Key,
    LinkState, Locality, NetStats, NodeStats, Nspace, Persistence, Pointer, Proc, ProcInfo,
    ProcState, ProcStats, Rank, RegAttr, Scope, Status, StorageAccessType, StorageAccessibility,
    StorageMedium, StoragePersistence, Text, Time, Timeval, Topology,
};

/// `pid_t`: a process id (`PMIX_PID`).
pub type Pid = i32;

/// A value of one of the standard's data types.
#[derive(Clone, Debug, Default, PartialEq, PartialOrd)]
pub enum Value {
    /// `PMIX_UNDEF`: no value.
    #[default]
    Undef,
    Bool(bool),
    Byte(u8),
    /// `PMIX_STRING`: the bytes of a C string, in any encoding; `None` is a NULL `char *`.
    String(Option<Text>),
    /// `PMIX_SIZE` (`size_t`).
    Size(u64),
    Pid(Pid),
    /// `PMIX_INT` (C `int`).
    Int(i32),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    /// `PMIX_UINT` (C `unsigned int`).
    Uint(u32),
    Uint8(u8),
    Uint16(u16),
    Uint32(u32),
    Uint64(u64),
    Float(f32),
    Double(f64),
    Timeval(Timeval),
    Time(Time),
    Status(Status),
    /// `PMIX_VALUE`: a value inside a value (packed as its type then its payload).
    Value(Box<Value>),
    Proc(Proc),
    App(Box<App>),
    Info(Box<Info>),
    PData(Box<PData>),
    /// `PMIX_BUFFER` (26, deprecated internal buffer).
    Buffer(Box<Buffer>),
    ByteObject(ByteObject),
    /// `PMIX_KVAL` (OpenPMIx internal).
    Kval(Box<Kval>),
    Persist(Persistence),
    Pointer(Pointer),
    Scope(Scope),
    DataRange(DataRange),
    /// `PMIX_COMMAND`: a wire command code (`pmix_cmd_t`).
    Command(u8),
    InfoDirectives(InfoDirectives),
    DataType(DataType),
    ProcState(ProcState),
    ProcInfo(Box<ProcInfo>),
    DataArray(Box<DataArray>),
    /// `PMIX_PROC_RANK`.
    Rank(Rank),
    Query(Box<Query>),
    /// `PMIX_COMPRESSED_STRING`: a zlib stream as OpenPMIx sends it (a 4-byte host-order
    /// length, then the deflated string). See `codec::compress`.
    CompressedString(ByteObject),
    AllocDirective(AllocDirective),
    IofChannel(IofChannel),
    Envar(Box<Envar>),
    Coord(Box<Coord>),
    RegAttr(Box<RegAttr>),
    /// `PMIX_REGEX`: a node or process regex, in the generating module's form (may hold NULs).
    Regex(ByteObject),
    JobState(JobState),
    LinkState(LinkState),
    ProcCpuset(Box<Cpuset>),
    Geometry(Box<Geometry>),
    DeviceDist(Box<DeviceDistance>),
    Endpoint(Box<Endpoint>),
    Topo(Box<Topology>),
    DevType(DeviceType),
    LocType(Locality),
    /// `PMIX_COMPRESSED_BYTE_OBJECT`: as [`Value::CompressedString`], for bytes.
    CompressedByteObject(ByteObject),
    ProcNspace(Nspace),
    ProcStats(Box<ProcStats>),
    DiskStats(Box<DiskStats>),
    NetStats(Box<NetStats>),
    NodeStats(Box<NodeStats>),
    /// `PMIX_DATA_BUFFER`: a packed buffer carried as a value.
    DataBuffer(Box<Buffer>),
    StorMedium(StorageMedium),
    StorAccess(StorageAccessibility),
    StorPersist(StoragePersistence),
    StorAccessType(StorageAccessType),
}

impl Value {
    /// The `PMIX_*` type code of this value.
    pub fn data_type(&self) -> DataType {
        match self {
            Value::Undef => DataType::UNDEF,
            Value::Bool(_) => DataType::BOOL,
            Value::Byte(_) => DataType::BYTE,
            Value::String(_) => DataType::STRING,
            Value::Size(_) => DataType::SIZE,
            Value::Pid(_) => DataType::PID,
            Value::Int(_) => DataType::INT,
            Value::Int8(_) => DataType::INT8,
            Value::Int16(_) => DataType::INT16,
            Value::Int32(_) => DataType::INT32,
            Value::Int64(_) => DataType::INT64,
            Value::Uint(_) => DataType::UINT,
            Value::Uint8(_) => DataType::UINT8,
            Value::Uint16(_) => DataType::UINT16,
            Value::Uint32(_) => DataType::UINT32,
            Value::Uint64(_) => DataType::UINT64,
            Value::Float(_) => DataType::FLOAT,
            Value::Double(_) => DataType::DOUBLE,
            Value::Timeval(_) => DataType::TIMEVAL,
            Value::Time(_) => DataType::TIME,
            Value::Status(_) => DataType::STATUS,
            Value::Value(_) => DataType::VALUE,
            Value::Proc(_) => DataType::PROC,
            Value::App(_) => DataType::APP,
            Value::Info(_) => DataType::INFO,
            Value::PData(_) => DataType::PDATA,
            Value::Buffer(_) => DataType::BUFFER,
            Value::ByteObject(_) => DataType::BYTE_OBJECT,
            Value::Kval(_) => DataType::KVAL,
            Value::Persist(_) => DataType::PERSIST,
            Value::Pointer(_) => DataType::POINTER,
            Value::Scope(_) => DataType::SCOPE,
            Value::DataRange(_) => DataType::DATA_RANGE,
            Value::Command(_) => DataType::COMMAND,
            Value::InfoDirectives(_) => DataType::INFO_DIRECTIVES,
            Value::DataType(_) => DataType::DATA_TYPE,
            Value::ProcState(_) => DataType::PROC_STATE,
            Value::ProcInfo(_) => DataType::PROC_INFO,
            Value::DataArray(_) => DataType::DATA_ARRAY,
            Value::Rank(_) => DataType::PROC_RANK,
            Value::Query(_) => DataType::QUERY,
            Value::CompressedString(_) => DataType::COMPRESSED_STRING,
            Value::AllocDirective(_) => DataType::ALLOC_DIRECTIVE,
            Value::IofChannel(_) => DataType::IOF_CHANNEL,
            Value::Envar(_) => DataType::ENVAR,
            Value::Coord(_) => DataType::COORD,
            Value::RegAttr(_) => DataType::REGATTR,
            Value::Regex(_) => DataType::REGEX,
            Value::JobState(_) => DataType::JOB_STATE,
            Value::LinkState(_) => DataType::LINK_STATE,
            Value::ProcCpuset(_) => DataType::PROC_CPUSET,
            Value::Geometry(_) => DataType::GEOMETRY,
            Value::DeviceDist(_) => DataType::DEVICE_DIST,
            Value::Endpoint(_) => DataType::ENDPOINT,
            Value::Topo(_) => DataType::TOPO,
            Value::DevType(_) => DataType::DEVTYPE,
            Value::LocType(_) => DataType::LOCTYPE,
            Value::CompressedByteObject(_) => DataType::COMPRESSED_BYTE_OBJECT,
            Value::ProcNspace(_) => DataType::PROC_NSPACE,
            Value::ProcStats(_) => DataType::PROC_STATS,
            Value::DiskStats(_) => DataType::DISK_STATS,
            Value::NetStats(_) => DataType::NET_STATS,
            Value::NodeStats(_) => DataType::NODE_STATS,
            Value::DataBuffer(_) => DataType::DATA_BUFFER,
            Value::StorMedium(_) => DataType::STOR_MEDIUM,
            Value::StorAccess(_) => DataType::STOR_ACCESS,
            Value::StorPersist(_) => DataType::STOR_PERSIST,
            Value::StorAccessType(_) => DataType::STOR_ACCESS_TYPE,
        }
    }

    /// Whether this value, or one nested in it (an info's, a key-value pair's, published
    /// data's, a data array's elements or declared type, an application's or a query's
    /// infos), is of a type `pred` picks: what a peer that cannot decode such a type would
    /// choke on.
    pub fn holds_type(&self, pred: &dyn Fn(DataType) -> bool) -> bool {
        if pred(self.data_type()) {
            return true;
        }
        let in_infos = |infos: &[Info]| infos.iter().any(|i| i.value.holds_type(pred));
        match self {
            Value::Value(v) => v.holds_type(pred),
            Value::Info(i) => i.value.holds_type(pred),
            Value::PData(p) => p.value.holds_type(pred),
            Value::Kval(k) => k.value.holds_type(pred),
            Value::App(a) => in_infos(&a.info),
            Value::Query(q) => in_infos(&q.qualifiers),
            Value::DataArray(d) => {
                pred(d.data_type) || d.elements.iter().any(|v| v.holds_type(pred))
            }
            _ => false,
        }
    }

    /// A `PMIX_STRING` value.
    pub fn string(s: impl Into<Text>) -> Self {
        Value::String(Some(s.into()))
    }

    /// The string of a `PMIX_STRING` value if it is UTF-8 (`None` also for a NULL string
    /// and for bytes in another encoding: [`Value::as_text`] tells them apart).
    pub fn as_str(&self) -> Option<&str> {
        self.as_text().and_then(|t| t.as_str().ok())
    }

    /// The string of a `PMIX_STRING` value as a name to match (a host's, a device's): bytes
    /// that are not UTF-8 become U+FFFD, the same on every side, so names still match.
    pub fn to_name_lossy(&self) -> Option<String> {
        self.as_text().map(|t| t.to_str_lossy().into_owned())
    }

    /// The bytes of a `PMIX_STRING` value, whatever their encoding (`None` also for a NULL
    /// string).
    pub fn as_text(&self) -> Option<&Text> {
        match self {
            Value::String(Some(s)) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_proc(&self) -> Option<&Proc> {
        match self {
            Value::Proc(p) => Some(p),
            _ => None,
        }
    }

    pub fn as_rank(&self) -> Option<Rank> {
        match self {
            Value::Rank(r) => Some(*r),
            _ => None,
        }
    }

    pub fn as_status(&self) -> Option<Status> {
        match self {
            Value::Status(s) => Some(*s),
            _ => None,
        }
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::ByteObject(b) => Some(&b.0),
            _ => None,
        }
    }

    pub fn as_data_array(&self) -> Option<&DataArray> {
        match self {
            Value::DataArray(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_envar(&self) -> Option<&Envar> {
        match self {
            Value::Envar(e) => Some(e),
            _ => None,
        }
    }

    /// The value as a signed integer, if it is an integer type (or a rank, status, size,
    /// pid) whose value fits in `i64`. Floating values are not converted.
    pub fn to_i64(&self) -> Option<i64> {
        Some(match *self {
            Value::Int(v) | Value::Int32(v) | Value::Pid(v) => i64::from(v),
            Value::Int8(v) => i64::from(v),
            Value::Int16(v) => i64::from(v),
            Value::Int64(v) => v,
            Value::Byte(v) | Value::Uint8(v) => i64::from(v),
            Value::Uint16(v) => i64::from(v),
            Value::Uint(v) | Value::Uint32(v) => i64::from(v),
            Value::Uint64(v) | Value::Size(v) => i64::try_from(v).ok()?,
            Value::Rank(r) => i64::from(r.0),
            Value::Status(s) => i64::from(s.0),
            Value::Time(t) => t.0,
            _ => return None,
        })
    }

    /// The value as an unsigned integer, if it is an integer type with a non-negative value.
    pub fn to_u64(&self) -> Option<u64> {
        match *self {
            Value::Uint64(v) | Value::Size(v) => Some(v),
            _ => u64::try_from(self.to_i64()?).ok(),
        }
    }

    /// The value as a double: any integer type (exactly when it fits in 53 bits) and the
    /// two floating types.
    pub fn to_f64(&self) -> Option<f64> {
        const EXACT: u64 = 1 << 53;
        match *self {
            Value::Float(v) => Some(f64::from(v)),
            Value::Double(v) => Some(v),
            _ => {
                if let Some(u) = self.to_u64() {
                    #[allow(clippy::cast_precision_loss)] // checked: below 2^53 is exact
                    return (u <= EXACT).then_some(u as f64);
                }
                let i = self.to_i64()?;
                #[allow(clippy::cast_precision_loss)] // checked: |i| <= 2^53 is exact
                (i.unsigned_abs() <= EXACT).then_some(i as f64)
            }
        }
    }

    /// Convert a numeric value to `target`, an integer or floating type, when the number fits
    /// exactly. This is what `PMIx_Value_get_number` and the attribute accessors rely on.
    pub fn convert_number(&self, target: DataType) -> Option<Value> {
        if self.data_type() == target {
            return Some(self.clone());
        }
        let i = || self.to_i64();
        let u = || self.to_u64();
        Some(match target {
            DataType::INT => Value::Int(i32::try_from(i()?).ok()?),
            DataType::INT8 => Value::Int8(i8::try_from(i()?).ok()?),
            DataType::INT16 => Value::Int16(i16::try_from(i()?).ok()?),
            DataType::INT32 => Value::Int32(i32::try_from(i()?).ok()?),
            DataType::INT64 => Value::Int64(i()?),
            DataType::UINT => Value::Uint(u32::try_from(u()?).ok()?),
            DataType::UINT8 => Value::Uint8(u8::try_from(u()?).ok()?),
            DataType::UINT16 => Value::Uint16(u16::try_from(u()?).ok()?),
            DataType::UINT32 => Value::Uint32(u32::try_from(u()?).ok()?),
            DataType::UINT64 => Value::Uint64(u()?),
            DataType::SIZE => Value::Size(u()?),
            DataType::PID => Value::Pid(i32::try_from(i()?).ok()?),
            DataType::PROC_RANK => Value::Rank(super::Rank(u32::try_from(u()?).ok()?)),
            DataType::DOUBLE => Value::Double(self.to_f64()?),
            DataType::FLOAT => {
                let d = self.to_f64()?;
                #[allow(clippy::cast_possible_truncation)] // checked below: exact round trip
                let f = d as f32;
                (f64::from(f) == d || d.is_nan()).then_some(Value::Float(f))?
            }
            _ => return None,
        })
    }
}

macro_rules! value_from {
    ($($t:ty => $variant:ident),* $(,)?) => {
        $(impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Value::$variant(v.into())
            }
        })*
    };
}

value_from! {
    bool => Bool, i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
    u8 => Uint8, u16 => Uint16, u32 => Uint32, u64 => Uint64, f32 => Float, f64 => Double,
    Status => Status, Proc => Proc, Rank => Rank, ByteObject => ByteObject, Timeval => Timeval,
    Time => Time, Scope => Scope, DataRange => DataRange, Persistence => Persist,
    ProcState => ProcState, JobState => JobState, DataArray => DataArray, Envar => Envar,
    Info => Info, App => App, Query => Query, PData => PData, ProcInfo => ProcInfo,
    Cpuset => ProcCpuset, Topology => Topo, Geometry => Geometry, Coord => Coord,
    Endpoint => Endpoint, DeviceDistance => DeviceDist, DeviceType => DevType,
    LinkState => LinkState, Locality => LocType, AllocDirective => AllocDirective,
    IofChannel => IofChannel, InfoDirectives => InfoDirectives, DataType => DataType,
    RegAttr => RegAttr, ProcStats => ProcStats, DiskStats => DiskStats, NetStats => NetStats,
    NodeStats => NodeStats, StorageMedium => StorMedium, StorageAccessibility => StorAccess,
    StoragePersistence => StorPersist, StorageAccessType => StorAccessType, Pointer => Pointer,
    Nspace => ProcNspace, Kval => Kval,
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::string(s)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::string(s)
    }
}

impl From<Text> for Value {
    fn from(s: Text) -> Self {
        Value::String(Some(s))
    }
}

impl From<usize> for Value {
    fn from(v: usize) -> Self {
        Value::Size(v as u64)
    }
}

/// Typed extraction from a [`Value`], used by [`Attr`](super::attr::Attr) and callers that
/// know what type they expect. Numeric types convert when the number fits.
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> Option<Self>;
}

macro_rules! from_value_number {
    ($($t:ty => $dt:ident / $variant:ident),* $(,)?) => {
        $(impl FromValue for $t {
            fn from_value(v: &Value) -> Option<Self> {
                match v.convert_number(DataType::$dt)? {
                    Value::$variant(x) => Some(x),
                    _ => None,
                }
            }
        })*
    };
}

from_value_number! {
    i8 => INT8 / Int8, i16 => INT16 / Int16, i32 => INT32 / Int32, i64 => INT64 / Int64,
    u8 => UINT8 / Uint8, u16 => UINT16 / Uint16, u32 => UINT32 / Uint32, u64 => UINT64 / Uint64,
    f32 => FLOAT / Float, f64 => DOUBLE / Double, Rank => PROC_RANK / Rank,
}

impl FromValue for usize {
    fn from_value(v: &Value) -> Option<Self> {
        usize::try_from(v.to_u64()?).ok()
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Option<Self> {
        v.as_bool()
    }
}

impl FromValue for Text {
    fn from_value(v: &Value) -> Option<Self> {
        v.as_text().cloned()
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Option<Self> {
        v.as_str().map(str::to_string)
    }
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Option<Self> {
        Some(v.clone())
    }
}

macro_rules! from_value_variant {
    ($($t:ty => $variant:ident),* $(,)?) => {
        $(impl FromValue for $t {
            fn from_value(v: &Value) -> Option<Self> {
                match v {
                    Value::$variant(x) => Some((*x).clone().into()),
                    _ => None,
                }
            }
        })*
    };
}

from_value_variant! {
    Status => Status, Proc => Proc, ByteObject => ByteObject, Timeval => Timeval, Time => Time,
    Scope => Scope, DataRange => DataRange, Persistence => Persist, ProcState => ProcState,
    DeviceType => DevType, LinkState => LinkState, Pointer => Pointer,
    StorageMedium => StorMedium, StorageAccessibility => StorAccess,
    StoragePersistence => StorPersist, StorageAccessType => StorAccessType,
}

macro_rules! from_value_boxed {
    ($($t:ty => $variant:ident),* $(,)?) => {
        $(impl FromValue for $t {
            fn from_value(v: &Value) -> Option<Self> {
                match v {
                    Value::$variant(x) => Some((**x).clone()),
                    _ => None,
                }
            }
        })*
    };
}

from_value_boxed! {
    DataArray => DataArray, Envar => Envar, Cpuset => ProcCpuset, Topology => Topo,
    Geometry => Geometry,
}

// --- the structures that hold values or infos: pmix_value_t is recursive, so they are
// defined with it ---

/// A key, directive flags and a value.
#[derive(Clone, Debug, PartialEq, PartialOrd)]
pub struct Info {
    pub key: Key,
    pub flags: InfoDirectives,
    pub value: Value,
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
    pub cmd: Option<Text>,
    pub argv: Vec<Option<Text>>,
    pub env: Vec<Option<Text>>,
    pub cwd: Option<Text>,
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

/// `pmix_fabric_t`: a handle on a fabric and what is known of it (PMIx v5.0 §15.2.10).
/// The `module` pointer of the C struct is the implementation's business and is not kept.
#[derive(Clone, Debug, Default, PartialEq, PartialOrd)]
pub struct Fabric {
    pub name: Option<String>,
    pub index: u64,
    pub info: Vec<Info>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_stays_small() {
        assert!(
            std::mem::size_of::<Value>() <= 40,
            "{}",
            std::mem::size_of::<Value>()
        );
    }

    #[test]
    fn numbers_convert_only_when_they_fit() {
        assert_eq!(
            Value::Uint32(7).convert_number(DataType::INT8),
            Some(Value::Int8(7))
        );
        assert_eq!(Value::Uint32(300).convert_number(DataType::UINT8), None);
        assert_eq!(Value::Int32(-1).convert_number(DataType::UINT64), None);
        assert_eq!(
            Value::Size(5).convert_number(DataType::DOUBLE),
            Some(Value::Double(5.0))
        );
        assert_eq!(Value::Uint64(1 << 60).to_f64(), None);
        assert_eq!(Value::Double(0.1).convert_number(DataType::FLOAT), None);
        assert_eq!(
            Value::Double(0.5).convert_number(DataType::FLOAT),
            Some(Value::Float(0.5))
        );
        assert_eq!(Value::string("x").to_i64(), None);
    }

    #[test]
    fn from_value_reads_typed_content() {
        assert_eq!(u32::from_value(&Value::Uint16(4)), Some(4));
        assert_eq!(
            String::from_value(&Value::from("abc")).as_deref(),
            Some("abc")
        );
        assert_eq!(bool::from_value(&Value::Uint8(1)), None);
    }

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
