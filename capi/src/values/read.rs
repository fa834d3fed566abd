//! C values read into the model: an object of a data type at an address ([`read_object`]),
//! a `pmix_value_t`, infos, and the structs that hold infos (applications, queries).

use std::ffi::{c_char, c_void};
use std::fmt::Write;
use std::ptr;

use pmix::model::{
    AllocDirective, App, DataArray, DataRange, DataType, DeviceType, Envar, Info, InfoDirectives,
    IofChannel, JobState, LinkState, Locality, Nspace, PData, Persistence, Pointer, ProcInfo,
    ProcState, Query, Rank, Scope, Status, StorageAccessType, StorageAccessibility, StorageMedium,
    StoragePersistence, Time, Timeval, Value,
};

use crate::boundary::{read_cstr, read_fixed, read_text, slice_of};
use crate::types::{
    CApp, CDataArray, CEnvar, CInfo, CPdata, CProc, CProcInfo, CQuery, CTimeval, CValue, CValueData,
};

use super::basic::{by_pointer, get, object_size, read_bytes, read_key, read_proc};
use super::fabric::{read_coord, read_device_distance, read_endpoint, read_geometry};
use super::hwloc::{read_cpuset, read_topology};
use super::records::{read_argv, read_argv_text, read_data_buffer, read_regattr};
use super::stats::{read_disk_stats, read_net_stats, read_node_stats, read_proc_stats};

/// The C object of type `t` at `src`.
///
/// # Safety
/// `src` points to an initialised C object of type `t`, whose pointers are NULL or valid.
pub(crate) unsafe fn read_object(t: DataType, src: *const c_void) -> Result<Value, Status> {
    // SAFETY: for every read below, `src` holds an object of type `t`, so of the C type read.
    unsafe {
        Ok(match t {
            DataType::BOOL => Value::Bool(get::<u8>(src) != 0),
            DataType::BYTE => Value::Byte(get(src)),
            DataType::STRING => Value::String(read_text(get::<*const c_char>(src))),
            DataType::SIZE => Value::Size(get::<usize>(src) as u64),
            DataType::PID => Value::Pid(get(src)),
            DataType::INT => Value::Int(get(src)),
            DataType::INT8 => Value::Int8(get(src)),
            DataType::INT16 => Value::Int16(get(src)),
            DataType::INT32 => Value::Int32(get(src)),
            DataType::INT64 => Value::Int64(get(src)),
            DataType::UINT => Value::Uint(get(src)),
            DataType::UINT8 => Value::Uint8(get(src)),
            DataType::UINT16 => Value::Uint16(get(src)),
            DataType::UINT32 => Value::Uint32(get(src)),
            DataType::UINT64 => Value::Uint64(get(src)),
            DataType::FLOAT => Value::Float(get(src)),
            DataType::DOUBLE => Value::Double(get(src)),
            DataType::TIMEVAL => {
                let tv: CTimeval = get(src);
                Value::Timeval(Timeval {
                    sec: tv.sec,
                    usec: tv.usec,
                })
            }
            DataType::TIME => Value::Time(Time(get(src))),
            DataType::STATUS => Value::Status(Status(get(src))),
            DataType::VALUE => Value::Value(Box::new(read_value(&get::<CValue>(src))?)),
            DataType::PROC => Value::Proc(read_proc(&get::<CProc>(src))?),
            DataType::APP => Value::App(Box::new(read_app(&get::<CApp>(src))?)),
            DataType::INFO => Value::Info(Box::new(read_info(&get::<CInfo>(src))?)),
            DataType::PDATA => {
                let pd: CPdata = get(src);
                Value::PData(Box::new(PData {
                    proc: read_proc(&pd.proc)?,
                    key: read_key(&pd.key)?,
                    value: read_value(&pd.value)?,
                }))
            }
            DataType::BYTE_OBJECT => Value::ByteObject(read_bytes(&get(src))?),
            DataType::COMPRESSED_STRING => Value::CompressedString(read_bytes(&get(src))?),
            DataType::REGEX => Value::Regex(read_bytes(&get(src))?),
            DataType::COMPRESSED_BYTE_OBJECT => Value::CompressedByteObject(read_bytes(&get(src))?),
            DataType::PERSIST => Value::Persist(Persistence(get(src))),
            DataType::POINTER => Value::Pointer(Pointer(get::<usize>(src))),
            DataType::SCOPE => Value::Scope(Scope(get(src))),
            DataType::DATA_RANGE => Value::DataRange(DataRange(get(src))),
            DataType::COMMAND => Value::Command(get(src)),
            DataType::INFO_DIRECTIVES => Value::InfoDirectives(InfoDirectives(get(src))),
            DataType::DATA_TYPE => Value::DataType(DataType(get(src))),
            DataType::PROC_STATE => Value::ProcState(ProcState(get(src))),
            DataType::PROC_INFO => {
                let pi: CProcInfo = get(src);
                Value::ProcInfo(Box::new(ProcInfo {
                    proc: read_proc(&pi.proc)?,
                    hostname: read_text(pi.hostname),
                    executable_name: read_text(pi.executable_name),
                    pid: pi.pid,
                    exit_code: pi.exit_code,
                    state: ProcState(pi.state),
                }))
            }
            DataType::DATA_ARRAY => Value::DataArray(Box::new(read_array(&get(src))?)),
            DataType::PROC_RANK => Value::Rank(Rank(get(src))),
            DataType::QUERY => Value::Query(Box::new(read_query(&get(src))?)),
            DataType::ALLOC_DIRECTIVE => Value::AllocDirective(AllocDirective(get(src))),
            DataType::IOF_CHANNEL => Value::IofChannel(IofChannel(get(src))),
            DataType::ENVAR => {
                let e: CEnvar = get(src);
                Value::Envar(Box::new(Envar {
                    envar: read_text(e.envar),
                    value: read_text(e.value),
                    separator: e.separator as u8,
                }))
            }
            DataType::JOB_STATE => Value::JobState(JobState(get(src))),
            DataType::LINK_STATE => Value::LinkState(LinkState(get(src))),
            DataType::DEVTYPE => Value::DevType(DeviceType(get(src))),
            DataType::LOCTYPE => Value::LocType(Locality(get(src))),
            DataType::STOR_MEDIUM => Value::StorMedium(StorageMedium(get(src))),
            DataType::STOR_ACCESS => Value::StorAccess(StorageAccessibility(get(src))),
            DataType::STOR_PERSIST => Value::StorPersist(StoragePersistence(get(src))),
            DataType::STOR_ACCESS_TYPE => Value::StorAccessType(StorageAccessType(get(src))),
            DataType::PROC_NSPACE => {
                let ns: [c_char; 256] = get(src);
                Value::ProcNspace(Nspace::new(read_fixed(&ns)).map_err(|e| e.status())?)
            }
            DataType::PROC_CPUSET => Value::ProcCpuset(Box::new(read_cpuset(&get(src))?)),
            DataType::TOPO => Value::Topo(Box::new(read_topology(&get(src))?)),
            DataType::COORD => Value::Coord(Box::new(read_coord(&get(src))?)),
            DataType::GEOMETRY => Value::Geometry(Box::new(read_geometry(&get(src))?)),
            DataType::DEVICE_DIST => Value::DeviceDist(Box::new(read_device_distance(&get(src)))),
            DataType::ENDPOINT => Value::Endpoint(Box::new(read_endpoint(&get(src))?)),
            DataType::REGATTR => Value::RegAttr(Box::new(read_regattr(&get(src)))),
            DataType::PROC_STATS => Value::ProcStats(Box::new(read_proc_stats(&get(src))?)),
            DataType::DISK_STATS => Value::DiskStats(Box::new(read_disk_stats(&get(src)))),
            DataType::NET_STATS => Value::NetStats(Box::new(read_net_stats(&get(src)))),
            DataType::NODE_STATS => Value::NodeStats(Box::new(read_node_stats(&get(src))?)),
            DataType::DATA_BUFFER => Value::DataBuffer(Box::new(read_data_buffer(&get(src))?)),
            DataType::UNDEF => Value::Undef,
            _ => return Err(Status::ERR_NOT_SUPPORTED),
        })
    }
}

/// A `pmix_value_t`'s value.
///
/// # Safety
/// `v` is a value of its type, whose pointers are NULL or valid.
pub(crate) unsafe fn read_value(v: &CValue) -> Result<Value, Status> {
    let t = DataType(v.type_);
    if t == DataType::UNDEF {
        return Ok(Value::Undef);
    }
    let data = ptr::from_ref(&v.data).cast::<c_void>();
    if by_pointer(t) {
        // SAFETY: a value of a pointer type holds a pointer in its union.
        let p = unsafe { v.data.ptr };
        if p.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: that pointer is to an object of type `t` (the caller's promise).
        return unsafe { read_object(t, p) };
    }
    if t == DataType::VALUE || object_size(t).is_none_or(|n| n > size_of::<CValueData>()) {
        return Err(Status::ERR_NOT_SUPPORTED);
    }
    // SAFETY: the union holds an object of type `t` in place.
    unsafe { read_object(t, data) }
}

/// A `pmix_info_t`. The `PMIX_INFO_ARRAY_END` flag marks the end of a C array only; the
/// info read does not keep it.
///
/// # Safety
/// As [`read_value`], for its value.
pub(crate) unsafe fn read_info(i: &CInfo) -> Result<Info, Status> {
    Ok(Info {
        key: read_key(&i.key)?,
        flags: InfoDirectives(i.flags & !crate::types::INFO_ARRAY_END),
        // SAFETY: the caller's promise.
        value: unsafe { read_value(&i.value)? },
    })
}

/// `n` infos at `p`.
///
/// # Safety
/// When `n > 0`, `p` points to `n` initialised infos.
pub(crate) unsafe fn read_infos(p: *const CInfo, n: usize) -> Result<Vec<Info>, Status> {
    // SAFETY: the caller's promise.
    let infos = unsafe { slice_of(p, n)? };
    infos
        .iter()
        // An info left as `PMIX_INFO_CREATE` made it (no key, no value) says nothing; C
        // programs pass such arrays, and OpenPMIx carries them without complaint.
        .filter(|i| i.key[0] != 0 || i.value.type_ != DataType::UNDEF.0)
        // SAFETY: each is an initialised info.
        .map(|i| unsafe { read_info(i) })
        .collect()
}

/// # Safety
/// `a.array` holds `a.size` objects of `a.type_`.
pub(super) unsafe fn read_array(a: &CDataArray) -> Result<DataArray, Status> {
    let t = DataType(a.type_);
    let size = object_size(t).ok_or(Status::ERR_NOT_SUPPORTED)?;
    let base = a.array.cast::<u8>();
    // SAFETY: the caller's promise; only the array's extent is checked here.
    unsafe { slice_of(base, a.size.checked_mul(size).ok_or(Status::ERR_BAD_PARAM)?)? };
    let elements = (0..a.size)
        // SAFETY: element `i` is at `i * size` within the array.
        .map(|i| unsafe { read_object(t, base.add(i * size).cast()) })
        .collect::<Result<Vec<_>, _>>()?;
    DataArray::new(t, elements).map_err(|e| e.status())
}

/// # Safety
/// As [`read_object`], for its fields.
pub(super) unsafe fn read_app(a: &CApp) -> Result<App, Status> {
    // SAFETY: the caller's promise, field by field.
    unsafe {
        Ok(App {
            cmd: read_text(a.cmd),
            argv: read_argv_text(a.argv),
            env: read_argv_text(a.env),
            cwd: read_text(a.cwd),
            maxprocs: a.maxprocs,
            info: read_infos(a.info, a.ninfo)?,
        })
    }
}

/// # Safety
/// As [`read_object`], for its fields.
pub(super) unsafe fn read_query(q: &CQuery) -> Result<Query, Status> {
    // SAFETY: the caller's promise, field by field.
    unsafe {
        Ok(Query {
            keys: read_argv(q.keys),
            qualifiers: read_infos(q.qualifiers, q.nqual)?,
        })
    }
}

/// Read the C object `data` of type `t` as `PMIx_Value_load` takes it: a string or a regex
/// is the `char *` itself, a pointer the address itself, every other type the address of
/// its object.
///
/// # Safety
/// `data` is as described, for type `t`.
pub(crate) unsafe fn loaded(data: *const c_void, t: DataType) -> Result<Value, Status> {
    if data.is_null() {
        // No data: a boolean is true (`PMIX_INFO_LOAD(&i, PMIX_COLLECT_DATA, NULL, PMIX_BOOL)`
        // asks for the directive), any other type its zero (a NULL string, an empty array).
        if t == DataType::BOOL {
            return Ok(Value::Bool(true));
        }
        let zeros = [0u64; 128];
        debug_assert!(object_size(t).is_none_or(|n| n <= size_of_val(&zeros)));
        // SAFETY: a zeroed block larger than any object is a valid object of every type
        // this library reads (integers 0, pointers NULL, counts 0).
        return unsafe { read_object(t, zeros.as_ptr().cast()) };
    }
    if t == DataType::STRING {
        let slot = data;
        // SAFETY: `slot` is the address of a local `char *` that holds the string.
        return unsafe { read_object(t, ptr::from_ref(&slot).cast()) };
    }
    if t == DataType::REGEX {
        // A regex is loaded from its text (`PMIx_generate_regex`'s), kept with its NUL as
        // OpenPMIx keeps it.
        // SAFETY: the caller's promise: the regex's text.
        let text = unsafe { std::ffi::CStr::from_ptr(data.cast()) };
        return Ok(Value::Regex(pmix::model::ByteObject(
            text.to_bytes_with_nul().to_vec(),
        )));
    }
    if t == DataType::POINTER {
        // The address is the value (`PMIX_INFO_LOAD(&i, key, &object, PMIX_POINTER)` keeps
        // `&object`).
        return Ok(Value::Pointer(pmix::model::Pointer(data as usize)));
    }
    // SAFETY: the caller's promise.
    unsafe { read_object(t, data) }
}

/// An application as `PMIx_App_string` prints it: command, arguments, environment, working
/// directory, process count and information, on several lines.
///
/// # Safety
/// `app` is an application: its strings NULL or strings, its lists NULL or NULL-terminated
/// lists of strings, `info` holding `ninfo` infos.
pub(crate) unsafe fn app_text(app: &CApp) -> String {
    let mut text = String::new();
    let list = |items: Vec<Option<String>>| -> String {
        if items.is_empty() {
            return "        (none)\n".to_owned();
        }
        items
            .iter()
            .enumerate()
            .map(|(i, s)| format!("        [{i}] {}\n", s.as_deref().unwrap_or("")))
            .collect()
    };
    // SAFETY: the application's strings, lists and infos (the caller's promise).
    unsafe {
        let _ = writeln!(text, "CMD: {}", read_cstr(app.cmd).unwrap_or_default());
        text.push_str("    ARGV:\n");
        text.push_str(&list(read_argv(app.argv)));
        text.push_str("    ENV:\n");
        text.push_str(&list(read_argv(app.env)));
        let _ = writeln!(text, "    CWD: {}", read_cstr(app.cwd).unwrap_or_default());
        let _ = writeln!(text, "    MAXPROCS: {}", app.maxprocs);
        text.push_str("    INFO:");
        match read_infos(app.info, app.ninfo) {
            Ok(infos) if infos.is_empty() => text.push_str(" (none)"),
            Ok(infos) => {
                for i in infos {
                    let _ = write!(text, "\n        {}: {:?}", i.key, i.value);
                }
            }
            Err(_) => text.push_str(" (unreadable)"),
        }
    }
    text
}
