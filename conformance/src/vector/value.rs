//! Typed values as vectors write them (`{ uint32 = 4 }`, `{ array = { of = "PMIX_PROC", … } }`)
//! and their conversion to the model's values.

use pmix::model::{
    ByteObject, Coord, CoordView, Cpuset, DataArray, DataRange, DataType, DeviceDistance,
    DeviceType, Envar, Geometry, LinkState, Persistence, Pointer, Proc, ProcState, Rank, RegAttr,
    StorageAccessType, StorageAccessibility, StorageMedium, StoragePersistence, Time, Timeval,
    Topology, Value,
};
use serde::{Deserialize, Serialize};

use super::{InfoSpec, RankSpec, scope_named, status_named};

/// A typed value.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ValueSpec {
    Bool(bool),
    Uint8(u8),
    Uint16(u16),
    Uint32(NumberSpec<u32>),
    Uint64(u64),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Size(u64),
    String(String),
    /// A `PMIX_STRING` of any bytes but NUL, as hex: a C string need not be UTF-8.
    StringBytes(String),
    /// A rank: a number, `"wildcard"`, `"undef"` or `"local_peers"`.
    Rank(RankSpec),
    /// A process: `[nspace, rank]`; an empty namespace is the job's.
    Proc((String, RankSpec)),
    /// A byte object, as hex.
    Bytes(String),
    /// A status by name.
    Status(String),
    /// A scope by name (`local`, `remote`, `global`, `internal`, `undef`).
    Scope(String),
    /// An array of infos (`PMIX_DATA_ARRAY` of `PMIX_INFO`).
    InfoArray(Vec<InfoSpec>),
    /// `PMIX_BYTE`.
    Byte(u8),
    /// `PMIX_INT` (C `int`).
    Int(i32),
    /// `PMIX_UINT` (C `unsigned int`).
    Uint(u32),
    Float(f32),
    Double(f64),
    Pid(NumberSpec<i32>),
    /// `PMIX_TIME`: seconds since the epoch.
    Time(i64),
    /// `PMIX_TIMEVAL`: `[seconds, microseconds]`.
    Timeval((i64, i64)),
    /// The code sets, by their C names (`PMIX_PROC_STATE_RUNNING`, `PMIX_RANGE_SESSION`, …).
    ProcState(String),
    DataRange(String),
    Persist(String),
    LinkState(String),
    /// `PMIX_DEVTYPE`: a `PMIX_DEVTYPE_*` name.
    Devtype(String),
    StorMedium(String),
    StorAccess(String),
    StorPersist(String),
    StorAccessType(String),
    /// `PMIX_ENVAR`: a variable, its value and the separator for prepend/append.
    Envar(EnvarSpec),
    /// `PMIX_PROC_CPUSET`: a source (`"hwloc"`) and its bitmap text.
    Cpuset(CpusetSpec),
    /// `PMIX_GEOMETRY`.
    Geometry(GeometrySpec),
    /// `PMIX_DEVICE_DIST`: a device and its distances from a process.
    DeviceDistance(DeviceDistanceSpec),
    /// `PMIX_DATA_ARRAY` of any type: the element type by its C name and the elements.
    Array(ArraySpec),
    /// `PMIX_TOPO`: a source (`"hwloc"`) and the topology in its exchange form (hwloc's XML).
    Topology(TopologySpec),
    /// `PMIX_POINTER`: an address, meaningful only inside the process that holds it. No
    /// address crosses processes (the pack of a pointer is a placeholder that unpacks as
    /// NULL), so the harness hands a library's process NULL whatever is written; vectors
    /// write 0 and check the type that comes back.
    Pointer(usize),
    /// `PMIX_UNDEF`: no value (`{ undef = true }`).
    Undef(bool),
    /// `PMIX_REGATTR`: an attribute as a library registers it.
    Regattr(RegattrSpec),
}

/// `pmix_regattr_t` as written: `{ name = "PMIX_TIMEOUT", string = "pmix.timeout", type =
/// "PMIX_INT", description = ["…"] }` (no description: none).
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RegattrSpec {
    pub name: String,
    pub string: String,
    #[serde(rename = "type")]
    pub data_type: String,
    #[serde(default)]
    pub description: Vec<String>,
}

/// `pmix_topology_t` as written: `{ source = "hwloc", xml = "<topology …>" }`.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    pub source: String,
    pub xml: String,
}

/// `pmix_envar_t` as written: `{ name = "PATH", value = "/bin", separator = ":" }`.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EnvarSpec {
    pub name: String,
    pub value: String,
    #[serde(default)]
    pub separator: Option<char>,
}

/// `pmix_cpuset_t` as written: `{ source = "hwloc", bitmap = "0-3" }`.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CpusetSpec {
    pub source: String,
    pub bitmap: String,
}

/// `pmix_geometry_t` as written; each coordinate is a view (`PMIX_COORD_LOGICAL_VIEW`…)
/// and its numbers.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GeometrySpec {
    pub fabric: u64,
    #[serde(default)]
    pub uuid: Option<String>,
    #[serde(default)]
    pub osname: Option<String>,
    #[serde(default)]
    pub coordinates: Vec<(String, Vec<u32>)>,
}

/// `pmix_device_distance_t` as written: `{ uuid = "…", osname = "eth0", type =
/// "PMIX_DEVTYPE_NETWORK", mindist = 1, maxdist = 2 }`.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceDistanceSpec {
    #[serde(default)]
    pub uuid: Option<String>,
    #[serde(default)]
    pub osname: Option<String>,
    #[serde(rename = "type")]
    pub device_type: String,
    pub mindist: u16,
    pub maxdist: u16,
}

/// A data array as written: `{ of = "PMIX_PROC", items = [{ proc = ["", 0] }] }`.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ArraySpec {
    pub of: String,
    #[serde(default)]
    pub items: Vec<ValueSpec>,
}

/// A number, or a saved one (`"$pid_NODE"`, the pid of a node's server; `"$uid"`, the ranks'
/// user id), which the runner puts in its place before the step runs.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(untagged)]
pub enum NumberSpec<T> {
    Number(T),
    Saved(String),
}

impl<T: Copy> NumberSpec<T> {
    fn number(&self, what: &str) -> Result<T, String> {
        match self {
            NumberSpec::Number(v) => Ok(*v),
            NumberSpec::Saved(s) => Err(format!("{what} {s:?}: not a number nor a saved value")),
        }
    }
}

impl ValueSpec {
    /// The value; an empty namespace in a `proc` is the job's.
    pub fn to_value(&self, nspace: &str) -> Result<Value, String> {
        Ok(match self {
            ValueSpec::Bool(b) => Value::Bool(*b),
            ValueSpec::Uint8(v) => Value::Uint8(*v),
            ValueSpec::Uint16(v) => Value::Uint16(*v),
            ValueSpec::Uint32(v) => Value::Uint32(v.number("uint32")?),
            ValueSpec::Uint64(v) => Value::Uint64(*v),
            ValueSpec::Int8(v) => Value::Int8(*v),
            ValueSpec::Int16(v) => Value::Int16(*v),
            ValueSpec::Int32(v) => Value::Int32(*v),
            ValueSpec::Int64(v) => Value::Int64(*v),
            ValueSpec::Size(v) => Value::Size(*v),
            ValueSpec::String(s) => Value::string(s.clone()),
            ValueSpec::StringBytes(hex) => {
                let bytes = from_hex(hex)?;
                if bytes.contains(&0) {
                    return Err(format!("string_bytes {hex}: a C string holds no NUL"));
                }
                Value::string(bytes)
            }
            ValueSpec::Rank(r) => Value::Rank(r.to_rank(Rank::UNDEF)?),
            ValueSpec::Proc((ns, r)) => {
                let ns = if ns.is_empty() { nspace } else { ns };
                Value::Proc(Proc::try_new(ns, r.to_rank(Rank::UNDEF)?).map_err(|e| e.to_string())?)
            }
            ValueSpec::Bytes(hex) => Value::ByteObject(ByteObject(from_hex(hex)?)),
            ValueSpec::Status(name) => Value::Status(status_named(name)?),
            ValueSpec::Scope(name) => Value::Scope(scope_named(name)?),
            ValueSpec::InfoArray(list) => {
                let mut elements = Vec::new();
                for i in list {
                    elements.push(Value::Info(Box::new(i.to_info(nspace)?)));
                }
                Value::DataArray(Box::new(
                    DataArray::new(DataType::INFO, elements).map_err(|e| e.to_string())?,
                ))
            }
            ValueSpec::Byte(v) => Value::Byte(*v),
            ValueSpec::Int(v) => Value::Int(*v),
            ValueSpec::Uint(v) => Value::Uint(*v),
            ValueSpec::Float(v) => Value::Float(*v),
            ValueSpec::Double(v) => Value::Double(*v),
            ValueSpec::Pid(v) => Value::Pid(v.number("pid")?),
            ValueSpec::Time(v) => Value::Time(Time(*v)),
            ValueSpec::Timeval((sec, usec)) => Value::Timeval(Timeval {
                sec: *sec,
                usec: *usec,
            }),
            ValueSpec::ProcState(n) => Value::ProcState(code(n, ProcState::from_name)?),
            ValueSpec::DataRange(n) => Value::DataRange(code(n, DataRange::from_name)?),
            ValueSpec::Persist(n) => Value::Persist(code(n, Persistence::from_name)?),
            ValueSpec::LinkState(n) => Value::LinkState(code(n, LinkState::from_name)?),
            ValueSpec::Devtype(n) => Value::DevType(code(n, DeviceType::from_name)?),
            ValueSpec::StorMedium(n) => Value::StorMedium(code(n, StorageMedium::from_name)?),
            ValueSpec::StorAccess(n) => {
                Value::StorAccess(code(n, StorageAccessibility::from_name)?)
            }
            ValueSpec::StorPersist(n) => {
                Value::StorPersist(code(n, StoragePersistence::from_name)?)
            }
            ValueSpec::StorAccessType(n) => {
                Value::StorAccessType(code(n, StorageAccessType::from_name)?)
            }
            ValueSpec::Envar(e) => Value::Envar(Box::new(Envar {
                envar: Some(e.name.as_str().into()),
                value: Some(e.value.as_str().into()),
                separator: match e.separator {
                    None => 0,
                    Some(c) if c.is_ascii() => c as u8,
                    Some(c) => return Err(format!("separator '{c}' is not one ASCII byte")),
                },
            })),
            ValueSpec::Cpuset(c) => Value::ProcCpuset(Box::new(Cpuset {
                source: Some(c.source.clone()),
                bitmap: Some(c.bitmap.clone()),
            })),
            ValueSpec::Geometry(g) => {
                let mut coordinates = Vec::new();
                for (view, coord) in &g.coordinates {
                    coordinates.push(Coord {
                        view: code(view, CoordView::from_name)?,
                        coord: coord.clone(),
                    });
                }
                Value::Geometry(Box::new(Geometry {
                    fabric: g.fabric,
                    uuid: g.uuid.clone(),
                    osname: g.osname.clone(),
                    coordinates,
                }))
            }
            ValueSpec::DeviceDistance(d) => Value::DeviceDist(Box::new(DeviceDistance {
                uuid: d.uuid.clone(),
                osname: d.osname.clone(),
                device_type: code(&d.device_type, DeviceType::from_name)?,
                mindist: d.mindist,
                maxdist: d.maxdist,
            })),
            ValueSpec::Topology(t) => Value::Topo(Box::new(Topology {
                source: Some(t.source.clone()),
                topology: Some(t.xml.clone()),
            })),
            ValueSpec::Pointer(address) => Value::Pointer(Pointer(*address)),
            ValueSpec::Undef(_) => Value::Undef,
            ValueSpec::Regattr(r) => Value::RegAttr(Box::new(RegAttr {
                name: Some(r.name.clone()),
                string: Some(r.string.clone()),
                data_type: code(&r.data_type, DataType::from_name)?,
                description: r.description.iter().cloned().map(Some).collect(),
            })),
            ValueSpec::Array(a) => {
                let of = code(&a.of, DataType::from_name)?;
                let mut elements = Vec::new();
                for item in &a.items {
                    elements.push(item.to_value(nspace)?);
                }
                Value::DataArray(Box::new(
                    DataArray::new(of, elements).map_err(|e| e.to_string())?,
                ))
            }
        })
    }
}

/// A code of a code set by its C name.
fn code<T>(name: &str, from_name: fn(&str) -> Option<T>) -> Result<T, String> {
    from_name(name).ok_or_else(|| format!("no constant of this type is named {name}"))
}

/// Bytes from hex text; whitespace between the digits is ignored.
pub(crate) fn from_hex(s: &str) -> Result<Vec<u8>, String> {
    let s: String = s.split_whitespace().collect();
    if !s.len().is_multiple_of(2) {
        return Err(format!("\"{s}\" is not hex: odd length"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
                .ok_or_else(|| format!("\"{s}\" is not hex"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_convert_to_the_models_types() {
        let v = ValueSpec::Proc((String::new(), RankSpec::Name("wildcard".into())));
        assert_eq!(
            v.to_value("job").unwrap(),
            Value::Proc(Proc::try_new("job", Rank::WILDCARD).unwrap())
        );
        assert_eq!(
            ValueSpec::StringBytes("63e9".into()).to_value("j").unwrap(),
            Value::string(&b"c\xe9"[..])
        );
        assert!(ValueSpec::StringBytes("6300".into()).to_value("j").is_err());
        assert_eq!(
            ValueSpec::Bytes("00ff".into()).to_value("j").unwrap(),
            Value::ByteObject(ByteObject(vec![0, 255]))
        );
        assert!(ValueSpec::Bytes("0".into()).to_value("j").is_err());
        let procs = ValueSpec::Array(ArraySpec {
            of: "PMIX_PROC".into(),
            items: vec![ValueSpec::Proc((String::new(), RankSpec::Number(1)))],
        });
        assert_eq!(
            procs.to_value("job").unwrap(),
            Value::DataArray(Box::new(
                DataArray::new(
                    DataType::PROC,
                    vec![Value::Proc(Proc::try_new("job", 1).unwrap())]
                )
                .unwrap()
            ))
        );
        let mixed = ValueSpec::Array(ArraySpec {
            of: "PMIX_STRING".into(),
            items: vec![ValueSpec::Uint32(NumberSpec::Number(1))],
        });
        assert!(
            mixed.to_value("j").is_err(),
            "elements must have the array's type"
        );
        assert_eq!(
            ValueSpec::ProcState("PMIX_PROC_STATE_RUNNING".into())
                .to_value("j")
                .unwrap()
                .data_type(),
            DataType::PROC_STATE
        );
        assert!(
            ValueSpec::DataRange("PMIX_RANGE_NOWHERE".into())
                .to_value("j")
                .is_err()
        );
        let distance = ValueSpec::DeviceDistance(DeviceDistanceSpec {
            uuid: Some("gpu-1".into()),
            osname: None,
            device_type: "PMIX_DEVTYPE_GPU".into(),
            mindist: 1,
            maxdist: 2,
        });
        assert_eq!(
            distance.to_value("j").unwrap(),
            Value::DeviceDist(Box::new(DeviceDistance {
                uuid: Some("gpu-1".into()),
                osname: None,
                device_type: DeviceType::GPU,
                mindist: 1,
                maxdist: 2,
            }))
        );
        let envar = ValueSpec::Envar(EnvarSpec {
            name: "PATH".into(),
            value: "/bin".into(),
            separator: Some(':'),
        });
        assert_eq!(
            envar.to_value("j").unwrap(),
            Value::Envar(Box::new(Envar::new("PATH", "/bin", ':')))
        );
        assert!(
            ValueSpec::Rank(RankSpec::Name("many".into()))
                .to_value("j")
                .is_err()
        );
    }
}
