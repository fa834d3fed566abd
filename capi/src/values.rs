//! C values to the crate's model and back.
//!
//! A C object of a data type is read from its address ([`read_object`]) and written to one
//! ([`write_object`]); a `pmix_value_t` holds scalars, strings, byte objects and environment
//! variables in its union and the larger structs behind a pointer ([`by_pointer`]). Every
//! block written for a caller comes from libc's allocator, and [`destruct_object`] releases
//! what [`write_object`] (or a C caller, with the same allocator) put there.
//!
//! Cpusets and topologies are hwloc objects in C and text in the model: a bitmap in hwloc's
//! list form, a topology in hwloc's XML ([`crate::topology`] converts them). Reading one
//! prints or exports its hwloc object; writing one makes a fresh hwloc object, which
//! [`destruct_object`] releases. Only hwloc's are understood: another source's object is
//! `PMIX_ERR_NOT_SUPPORTED`.
//!
//! Fabric coordinates, geometries and endpoints and device distances are in [`fabric`];
//! process, disk, network and node statistics in [`stats`]; argv lists, applications,
//! queries, attribute registrations and data buffers in [`records`]. A data buffer inside a value
//! (`PMIX_DATA_BUFFER`) carries its packed bytes, not where unpacking had got to: the copy
//! written for a caller is packed to its end and unpacks from its start.
//!
//! The deprecated internal buffer (`PMIX_BUFFER`) is not carried: it is refused with
//! `PMIX_ERR_NOT_SUPPORTED`, as is any type this library does not know.

use std::ffi::{c_char, c_void};
use std::ptr;

use pmix::model::{
    AllocDirective, ByteObject, DataArray, DataRange, DataType, DeviceType, Envar, Info,
    InfoDirectives, IofChannel, JobState, Key, LinkState, Locality, Nspace, PData, Persistence,
    Pointer, Proc, ProcInfo, ProcState, Rank, Scope, Status, StorageAccessType,
    StorageAccessibility, StorageMedium, StoragePersistence, Time, Timeval, Value,
};

mod fabric;
mod hwloc;
mod records;
mod stats;

use fabric::{
    c_coord, c_endpoint, c_geometry, destruct_coord, destruct_endpoint, destruct_geometry,
    read_coord, read_device_distance, read_endpoint, read_geometry,
};
pub(crate) use fabric::{c_device_distance, destruct_device_distance};
use records::{
    c_data_buffer, c_regattr, destruct_app, destruct_data_buffer, destruct_regattr, read_app,
    read_data_buffer, read_query, read_regattr, write_app, write_argv,
};
pub(crate) use records::{free_argv, read_argv};
use stats::{
    c_disk_stats, c_net_stats, c_node_stats, c_proc_stats, destruct_disk_stats, destruct_net_stats,
    destruct_node_stats, destruct_proc_stats, read_disk_stats, read_net_stats, read_node_stats,
    read_proc_stats,
};

use crate::boundary::{
    c_bytes, c_strdup, calloc_array, free, read_fixed, read_text, slice_of, write_fixed,
};
use crate::types::{
    CApp, CByteObject, CCoord, CDataArray, CDataBuffer, CDevice, CDeviceDistance, CDiskStats,
    CEndpoint, CEnvar, CGeometry, CInfo, CNetStats, CNodePid, CNodeStats, CPdata, CProc, CProcInfo,
    CProcStats, CQuery, CRegattr, CResourceUnit, CSourced, CTimeval, CValue, CValueData,
};
pub(crate) use hwloc::{
    c_cpuset, c_topology, copy_cpuset, copy_topology, destruct_cpuset, destruct_topology,
    hwloc_topology, is_hwloc, read_cpuset, read_topology,
};

/// OpenPMIx 6.1's `PMIX_DEVICE` (`pmix_device_t`), unknown to the standard's v5.0 and to
/// the crate's model: its C objects are made, released and copied here, never read.
pub(crate) const DEVICE: DataType = DataType(70);
/// OpenPMIx 6.1's `PMIX_RESBLOCK_DIRECTIVE` (`pmix_resource_block_directive_t`, a byte).
pub(crate) const RESBLOCK_DIRECTIVE: DataType = DataType(71);
/// OpenPMIx 6.1's `PMIX_RESOURCE_UNIT` (`pmix_resource_unit_t`).
pub(crate) const RESOURCE_UNIT: DataType = DataType(72);

/// The size of one C object of type `t` (an element of a `pmix_data_array_t`), for the types
/// this library carries.
pub(crate) fn object_size(t: DataType) -> Option<usize> {
    Some(match t {
        RESBLOCK_DIRECTIVE => 1,
        DEVICE => size_of::<CDevice>(),
        RESOURCE_UNIT => size_of::<CResourceUnit>(),
        DataType::NODE_PID => size_of::<CNodePid>(),
        DataType::BOOL
        | DataType::BYTE
        | DataType::INT8
        | DataType::UINT8
        | DataType::PERSIST
        | DataType::SCOPE
        | DataType::DATA_RANGE
        | DataType::COMMAND
        | DataType::PROC_STATE
        | DataType::ALLOC_DIRECTIVE
        | DataType::JOB_STATE
        | DataType::LINK_STATE => 1,
        DataType::INT16
        | DataType::UINT16
        | DataType::DATA_TYPE
        | DataType::IOF_CHANNEL
        | DataType::LOCTYPE
        | DataType::STOR_ACCESS_TYPE => 2,
        DataType::PID
        | DataType::INT
        | DataType::INT32
        | DataType::UINT
        | DataType::UINT32
        | DataType::FLOAT
        | DataType::STATUS
        | DataType::INFO_DIRECTIVES
        | DataType::PROC_RANK => 4,
        DataType::STRING
        | DataType::SIZE
        | DataType::INT64
        | DataType::UINT64
        | DataType::DOUBLE
        | DataType::TIME
        | DataType::POINTER
        | DataType::DEVTYPE
        | DataType::STOR_MEDIUM
        | DataType::STOR_ACCESS
        | DataType::STOR_PERSIST => 8,
        DataType::TIMEVAL
        | DataType::BYTE_OBJECT
        | DataType::COMPRESSED_STRING
        | DataType::REGEX
        | DataType::COMPRESSED_BYTE_OBJECT => size_of::<CByteObject>(),
        DataType::VALUE => size_of::<CValue>(),
        DataType::PROC => size_of::<CProc>(),
        DataType::APP => size_of::<CApp>(),
        DataType::INFO => size_of::<CInfo>(),
        DataType::PDATA => size_of::<CPdata>(),
        DataType::PROC_INFO => size_of::<CProcInfo>(),
        DataType::DATA_ARRAY => size_of::<CDataArray>(),
        DataType::QUERY => size_of::<CQuery>(),
        DataType::ENVAR => size_of::<CEnvar>(),
        DataType::PROC_CPUSET | DataType::TOPO => size_of::<CSourced>(),
        DataType::COORD => size_of::<CCoord>(),
        DataType::GEOMETRY => size_of::<CGeometry>(),
        DataType::DEVICE_DIST => size_of::<CDeviceDistance>(),
        DataType::ENDPOINT => size_of::<CEndpoint>(),
        DataType::PROC_NSPACE => 256,
        DataType::REGATTR => size_of::<CRegattr>(),
        DataType::PROC_STATS => size_of::<CProcStats>(),
        DataType::DISK_STATS => size_of::<CDiskStats>(),
        DataType::NET_STATS => size_of::<CNetStats>(),
        DataType::NODE_STATS => size_of::<CNodeStats>(),
        DataType::DATA_BUFFER => size_of::<CDataBuffer>(),
        _ => return None,
    })
}

/// Whether a `pmix_value_t` of type `t` holds its object behind a pointer in the union.
pub(crate) fn by_pointer(t: DataType) -> bool {
    matches!(
        t,
        DataType::PROC
            | DataType::PROC_INFO
            | DataType::DATA_ARRAY
            | DataType::PROC_NSPACE
            | DataType::PROC_CPUSET
            | DataType::TOPO
            | DataType::COORD
            | DataType::GEOMETRY
            | DataType::DEVICE_DIST
            | DataType::ENDPOINT
            | DataType::REGATTR
            | DataType::PROC_STATS
            | DataType::DISK_STATS
            | DataType::NET_STATS
            | DataType::NODE_STATS
            | DataType::DATA_BUFFER
            | DEVICE
            | RESOURCE_UNIT
            | DataType::NODE_PID
    )
}

/// Read a `T` at `src` (which may be unaligned).
///
/// # Safety
/// `src` points to an initialised `T`.
unsafe fn get<T: Copy>(src: *const c_void) -> T {
    // SAFETY: the caller's promise.
    unsafe { ptr::read_unaligned(src.cast::<T>()) }
}

/// Write `v` at `dst` (which may be unaligned).
///
/// # Safety
/// `dst` points to room for a `T`.
unsafe fn put<T>(dst: *mut c_void, v: T) {
    // SAFETY: the caller's promise.
    unsafe { ptr::write_unaligned(dst.cast::<T>(), v) }
}

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

/// A `pmix_proc_t`.
pub(crate) fn read_proc(p: &CProc) -> Result<Proc, Status> {
    Proc::try_new(&read_fixed(&p.nspace), Rank(p.rank)).map_err(|e| e.status())
}

/// A `pmix_key_t`. An empty one (a zeroed struct's) is kept as the codec keeps a peer's,
/// so that what `PMIx_Data_unpack` gives packs again.
pub(crate) fn read_key(k: &[c_char]) -> Result<Key, Status> {
    let text = read_fixed(k);
    if text.is_empty() {
        return Ok(Key::unset());
    }
    Key::new(text).map_err(|e| e.status())
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

/// `n` procs at `p`.
///
/// # Safety
/// When `n > 0`, `p` points to `n` procs.
pub(crate) unsafe fn read_procs(p: *const CProc, n: usize) -> Result<Vec<Proc>, Status> {
    // SAFETY: the caller's promise.
    let procs = unsafe { slice_of(p, n)? };
    procs.iter().map(read_proc).collect()
}

/// # Safety
/// `bo.bytes` points to `bo.size` bytes (or `size` is 0).
pub(crate) unsafe fn read_bytes(bo: &CByteObject) -> Result<ByteObject, Status> {
    // SAFETY: the caller's promise.
    let bytes = unsafe { slice_of(bo.bytes.cast::<u8>(), bo.size)? };
    Ok(ByteObject(bytes.to_vec()))
}

/// The bytes of a byte object the caller must give (a credential, output to deliver): NULL
/// is `PMIX_ERR_BAD_PARAM`.
///
/// # Safety
/// `bo` is NULL or a byte object whose `bytes` points to `size` bytes (or `size` is 0).
pub(crate) unsafe fn read_required_bytes(bo: *const CByteObject) -> Result<Vec<u8>, Status> {
    // SAFETY: the caller's promise.
    let bo = unsafe { bo.as_ref() }.ok_or(Status::ERR_BAD_PARAM)?;
    // SAFETY: as above.
    Ok(unsafe { read_bytes(bo)? }.0)
}

/// # Safety
/// `a.array` holds `a.size` objects of `a.type_`.
unsafe fn read_array(a: &CDataArray) -> Result<DataArray, Status> {
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

/// Write `v` as a C object at `dst`, its inner blocks from libc's allocator. On an error
/// nothing is left allocated and `dst` holds no pointer of this call.
///
/// # Safety
/// `dst` points to room for a C object of `v`'s type.
pub(crate) unsafe fn write_object(v: &Value, dst: *mut c_void) -> Result<(), Status> {
    // SAFETY: for every write below, `dst` has room for an object of `v`'s type.
    unsafe {
        match v {
            Value::Bool(b) => put(dst, u8::from(*b)),
            Value::Byte(x) | Value::Uint8(x) | Value::Command(x) => put(dst, *x),
            Value::String(s) => put(dst, s.as_ref().map_or(Ok(ptr::null_mut()), c_strdup)?),
            Value::Size(x) => put(dst, *x as usize),
            Value::Pid(p) => put(dst, *p),
            Value::Int(x) | Value::Int32(x) => put(dst, *x),
            Value::Int8(x) => put(dst, *x),
            Value::Int16(x) => put(dst, *x),
            Value::Int64(x) => put(dst, *x),
            Value::Uint(x) | Value::Uint32(x) => put(dst, *x),
            Value::Uint16(x) => put(dst, *x),
            Value::Uint64(x) => put(dst, *x),
            Value::Float(x) => put(dst, *x),
            Value::Double(x) => put(dst, *x),
            Value::Timeval(tv) => put(
                dst,
                CTimeval {
                    sec: tv.sec,
                    usec: tv.usec,
                },
            ),
            Value::Time(t) => put(dst, t.0),
            Value::Status(s) => put(dst, s.0),
            Value::Value(inner) => {
                let mut cv = undef_value();
                write_value(inner, &mut cv)?;
                put(dst, cv);
            }
            Value::Proc(p) => put(dst, c_proc(p)),
            Value::App(app) => put(dst, write_app(app)?),
            Value::Info(info) => {
                let mut ci = empty_info();
                write_info(info, &mut ci)?;
                put(dst, ci);
            }
            Value::PData(pd) => {
                let mut cp = CPdata {
                    proc: c_proc(&pd.proc),
                    key: [0; 512],
                    value: undef_value(),
                };
                write_fixed(&mut cp.key, pd.key.as_str());
                write_value(&pd.value, &mut cp.value)?;
                put(dst, cp);
            }
            Value::ByteObject(bo)
            | Value::CompressedString(bo)
            | Value::Regex(bo)
            | Value::CompressedByteObject(bo) => put(dst, c_byte_object(&bo.0)?),
            Value::Persist(x) => put(dst, x.0),
            Value::Pointer(p) => put(dst, p.0),
            Value::Scope(x) => put(dst, x.0),
            Value::DataRange(x) => put(dst, x.0),
            Value::InfoDirectives(x) => put(dst, x.0),
            Value::DataType(x) => put(dst, x.0),
            Value::ProcState(x) => put(dst, x.0),
            Value::ProcInfo(pi) => {
                let hostname = opt_strdup(pi.hostname.as_ref())?;
                let executable_name = match opt_strdup(pi.executable_name.as_ref()) {
                    Ok(p) => p,
                    Err(s) => {
                        free(hostname);
                        return Err(s);
                    }
                };
                put(
                    dst,
                    CProcInfo {
                        proc: c_proc(&pi.proc),
                        hostname,
                        executable_name,
                        pid: pi.pid,
                        exit_code: pi.exit_code,
                        state: pi.state.0,
                    },
                );
            }
            Value::DataArray(a) => put(dst, write_array(a)?),
            Value::Rank(r) => put(dst, r.0),
            Value::Query(q) => {
                let keys = write_argv(&q.keys)?;
                let (qualifiers, nqual) = match write_infos(&q.qualifiers) {
                    Ok(x) => x,
                    Err(s) => {
                        free_argv(keys);
                        return Err(s);
                    }
                };
                put(
                    dst,
                    CQuery {
                        keys,
                        qualifiers,
                        nqual,
                    },
                );
            }
            Value::AllocDirective(x) => put(dst, x.0),
            Value::IofChannel(x) => put(dst, x.0),
            Value::Envar(e) => {
                let envar = opt_strdup(e.envar.as_ref())?;
                let value = match opt_strdup(e.value.as_ref()) {
                    Ok(p) => p,
                    Err(s) => {
                        free(envar);
                        return Err(s);
                    }
                };
                put(
                    dst,
                    CEnvar {
                        envar,
                        value,
                        separator: e.separator as c_char,
                    },
                );
            }
            Value::JobState(x) => put(dst, x.0),
            Value::LinkState(x) => put(dst, x.0),
            Value::DevType(x) => put(dst, x.0),
            Value::LocType(x) => put(dst, x.0),
            Value::StorMedium(x) => put(dst, x.0),
            Value::StorAccess(x) => put(dst, x.0),
            Value::StorPersist(x) => put(dst, x.0),
            Value::StorAccessType(x) => put(dst, x.0),
            Value::ProcNspace(ns) => {
                let mut field = [0 as c_char; 256];
                write_fixed(&mut field, ns.as_str());
                put(dst, field);
            }
            Value::ProcCpuset(c) => put(dst, c_cpuset(c)?),
            Value::Topo(t) => put(dst, c_topology(t)?),
            Value::Coord(c) => put(dst, c_coord(c)?),
            Value::Geometry(g) => put(dst, c_geometry(g)?),
            Value::DeviceDist(d) => put(dst, c_device_distance(d)?),
            Value::Endpoint(e) => put(dst, c_endpoint(e)?),
            Value::RegAttr(r) => put(dst, c_regattr(r)?),
            Value::ProcStats(s) => put(dst, c_proc_stats(s)?),
            Value::DiskStats(d) => put(dst, c_disk_stats(d)?),
            Value::NetStats(n) => put(dst, c_net_stats(n)?),
            Value::NodeStats(n) => put(dst, c_node_stats(n)?),
            Value::DataBuffer(b) => put(dst, c_data_buffer(b)?),
            Value::Undef => {}
            _ => return Err(Status::ERR_NOT_SUPPORTED),
        }
    }
    Ok(())
}

/// A deep copy of the C object of type `t` at `src`, in a block of libc's allocator
/// (`PMIx_Data_copy`). The hwloc object of a cpuset or a topology is duplicated as hwloc
/// copies it ([`copy_sourced_object`]); every other type is read into the model and written
/// anew.
///
/// # Safety
/// As [`read_object`].
pub(crate) unsafe fn copy_object(t: DataType, src: *const c_void) -> Result<*mut c_void, Status> {
    if matches!(t, DataType::PROC_CPUSET | DataType::TOPO) {
        // SAFETY: the caller's promise.
        return unsafe { copy_sourced_object(t, src) };
    }
    // SAFETY: the caller's promise.
    let v = unsafe { read_object(t, src)? };
    let size = object_size(t).ok_or(Status::ERR_UNKNOWN_DATA_TYPE)?;
    let block: *mut u8 = calloc_array(size)?;
    // SAFETY: `block` has room for one object of the type.
    if let Err(s) = unsafe { write_object(&v, block.cast()) } {
        // SAFETY: ours, holding nothing.
        unsafe { free(block) };
        return Err(s);
    }
    Ok(block.cast())
}

/// A copy of the cpuset or topology (`t`) at `src` in a block of libc's allocator, its hwloc
/// object duplicated.
///
/// # Safety
/// `src` points to a cpuset or a topology as `t` says, readable as [`read_object`] reads it.
unsafe fn copy_sourced_object(t: DataType, src: *const c_void) -> Result<*mut c_void, Status> {
    // SAFETY: the caller's promise.
    let original: CSourced = unsafe { get(src) };
    let mut copy = if t == DataType::TOPO {
        // SAFETY: a topology (the caller's promise).
        unsafe { copy_topology(&original)? }
    } else {
        // SAFETY: a cpuset (the caller's promise).
        unsafe { copy_cpuset(&original)? }
    };
    match calloc_array::<CSourced>(1) {
        Ok(block) => {
            // SAFETY: `block` has room for one.
            unsafe { block.write(copy) };
            Ok(block.cast())
        }
        Err(s) => {
            // SAFETY: the copy made above, handed out to no one.
            unsafe { destruct_object(t, ptr::from_mut(&mut copy).cast()) };
            Err(s)
        }
    }
}

/// A `pmix_value_t` of type `PMIX_UNDEF`.
pub(crate) fn undef_value() -> CValue {
    CValue {
        type_: DataType::UNDEF.0,
        data: CValueData { uint64: 0 },
    }
}

/// A zeroed `pmix_info_t`.
pub(crate) fn empty_info() -> CInfo {
    CInfo {
        key: [0; 512],
        flags: 0,
        value: undef_value(),
    }
}

/// Write `v` into the value `out` (whose old contents are not released: destruct it first).
///
/// # Safety
/// None beyond `out` being writable; kept `unsafe` because it writes pointers C will free.
pub(crate) unsafe fn write_value(v: &Value, out: &mut CValue) -> Result<(), Status> {
    let t = v.data_type();
    *out = undef_value();
    if t == DataType::UNDEF {
        return Ok(());
    }
    let size = object_size(t).ok_or(Status::ERR_NOT_SUPPORTED)?;
    if by_pointer(t) {
        let p: *mut u8 = calloc_array(size)?;
        // SAFETY: `p` has room for one object of type `t`.
        if let Err(s) = unsafe { write_object(v, p.cast()) } {
            // SAFETY: `p` is ours and holds nothing allocated.
            unsafe { free(p) };
            return Err(s);
        }
        out.data.ptr = p.cast();
    } else {
        if t == DataType::VALUE || size > size_of::<CValueData>() {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        // SAFETY: the union has room for an in-place object of type `t`.
        unsafe { write_object(v, ptr::from_mut(&mut out.data).cast())? };
    }
    out.type_ = t.0;
    Ok(())
}

/// Write `info` into `out` (whose old value is not released).
///
/// # Safety
/// As [`write_value`].
pub(crate) unsafe fn write_info(info: &Info, out: &mut CInfo) -> Result<(), Status> {
    write_fixed(&mut out.key, info.key.as_str());
    out.flags = info.flags.0;
    // SAFETY: as this function.
    unsafe { write_value(&info.value, &mut out.value) }
}

/// `infos` as a C array from libc's allocator, and its length. The last element carries
/// `PMIX_INFO_ARRAY_END`, as `PMIX_INFO_CREATE` sets it.
pub(crate) fn write_infos(infos: &[Info]) -> Result<(*mut CInfo, usize), Status> {
    let array: *mut CInfo = calloc_array(infos.len())?;
    for (i, info) in infos.iter().enumerate() {
        // SAFETY: `array` has room for `infos.len()` zeroed infos; element `i` is in it.
        let slot = unsafe { &mut *array.add(i) };
        // SAFETY: a zeroed info holds no pointer; on failure the earlier ones are released.
        if let Err(s) = unsafe { write_info(info, slot) } {
            // SAFETY: the first `i` infos were written by this function.
            unsafe { free_infos(array, i) };
            return Err(s);
        }
        if i + 1 == infos.len() {
            slot.flags |= crate::types::INFO_ARRAY_END;
        }
    }
    Ok((array, infos.len()))
}

pub(super) fn opt_strdup(s: Option<impl AsRef<[u8]>>) -> Result<*mut c_char, Status> {
    s.map_or(Ok(ptr::null_mut()), c_strdup)
}

/// A `pmix_proc_t` of `p`.
pub(crate) fn c_proc(p: &Proc) -> CProc {
    let mut c = CProc {
        nspace: [0; 256],
        rank: p.rank.0,
    };
    write_fixed(&mut c.nspace, p.nspace.as_str());
    c
}

fn c_byte_object(bytes: &[u8]) -> Result<CByteObject, Status> {
    if bytes.is_empty() {
        return Ok(CByteObject {
            bytes: ptr::null_mut(),
            size: 0,
        });
    }
    Ok(CByteObject {
        bytes: c_bytes(bytes)?,
        size: bytes.len(),
    })
}

fn write_array(a: &DataArray) -> Result<CDataArray, Status> {
    let size = object_size(a.data_type).ok_or(Status::ERR_NOT_SUPPORTED)?;
    let base: *mut u8 = calloc_array(size * a.elements.len())?;
    for (i, e) in a.elements.iter().enumerate() {
        // SAFETY: element `i` fits in the block.
        if let Err(s) = unsafe { write_object(e, base.add(i * size).cast()) } {
            for j in 0..i {
                // SAFETY: elements before `i` were written here.
                unsafe { destruct_object(a.data_type, base.add(j * size).cast()) };
            }
            // SAFETY: `base` is ours.
            unsafe { free(base) };
            return Err(s);
        }
    }
    Ok(CDataArray {
        type_: a.data_type.0,
        size: a.elements.len(),
        array: base.cast(),
    })
}

/// Release what a C object of type `t` at `p` holds (not `p` itself).
///
/// # Safety
/// `p` points to an object of type `t` whose pointers are NULL or blocks of libc's
/// allocator that nothing else releases.
pub(crate) unsafe fn destruct_object(t: DataType, p: *mut c_void) {
    // SAFETY: for every access below, the caller's promise.
    unsafe {
        match t {
            DataType::STRING => {
                free(get::<*mut c_char>(p));
                put(p, ptr::null_mut::<c_char>());
            }
            DataType::VALUE => destruct_value(&mut *p.cast::<CValue>()),
            DataType::APP => destruct_app(&mut *p.cast::<CApp>()),
            DataType::INFO => destruct_value(&mut (*p.cast::<CInfo>()).value),
            DataType::PDATA => destruct_value(&mut (*p.cast::<CPdata>()).value),
            DataType::BYTE_OBJECT
            | DataType::COMPRESSED_STRING
            | DataType::REGEX
            | DataType::COMPRESSED_BYTE_OBJECT => {
                let bo = &mut *p.cast::<CByteObject>();
                free(bo.bytes);
                bo.bytes = ptr::null_mut();
                bo.size = 0;
            }
            DataType::PROC_INFO => {
                let pi = &mut *p.cast::<CProcInfo>();
                free(pi.hostname);
                free(pi.executable_name);
                pi.hostname = ptr::null_mut();
                pi.executable_name = ptr::null_mut();
            }
            DataType::DATA_ARRAY => {
                let a = &mut *p.cast::<CDataArray>();
                destruct_array(a);
            }
            DataType::QUERY => {
                let q = &mut *p.cast::<CQuery>();
                free_argv(q.keys);
                free_infos(q.qualifiers, q.nqual);
                q.keys = ptr::null_mut();
                q.qualifiers = ptr::null_mut();
                q.nqual = 0;
            }
            DataType::ENVAR => {
                let e = &mut *p.cast::<CEnvar>();
                free(e.envar);
                free(e.value);
                e.envar = ptr::null_mut();
                e.value = ptr::null_mut();
            }
            DataType::PROC_CPUSET => destruct_cpuset(&mut *p.cast::<CSourced>()),
            DataType::TOPO => destruct_topology(&mut *p.cast::<CSourced>()),
            DataType::COORD => destruct_coord(&mut *p.cast::<CCoord>()),
            DataType::GEOMETRY => destruct_geometry(&mut *p.cast::<CGeometry>()),
            DataType::DEVICE_DIST => destruct_device_distance(&mut *p.cast::<CDeviceDistance>()),
            DataType::ENDPOINT => destruct_endpoint(&mut *p.cast::<CEndpoint>()),
            DataType::REGATTR => destruct_regattr(&mut *p.cast::<CRegattr>()),
            DataType::PROC_STATS => destruct_proc_stats(&mut *p.cast::<CProcStats>()),
            DataType::DISK_STATS => destruct_disk_stats(&mut *p.cast::<CDiskStats>()),
            DataType::NET_STATS => destruct_net_stats(&mut *p.cast::<CNetStats>()),
            DataType::NODE_STATS => destruct_node_stats(&mut *p.cast::<CNodeStats>()),
            DataType::DATA_BUFFER => destruct_data_buffer(&mut *p.cast::<CDataBuffer>()),
            DEVICE => {
                let d = &mut *p.cast::<CDevice>();
                free(d.uuid);
                free(d.osname);
                d.uuid = ptr::null_mut();
                d.osname = ptr::null_mut();
            }
            DataType::NODE_PID => {
                let n = &mut *p.cast::<CNodePid>();
                free(n.hostname);
                n.hostname = ptr::null_mut();
            }
            _ => {}
        }
    }
}

/// Release what a data array holds, and its elements' block.
///
/// # Safety
/// As [`destruct_object`].
pub(crate) unsafe fn destruct_array(a: &mut CDataArray) {
    let t = DataType(a.type_);
    if let Some(size) = object_size(t) {
        let base = a.array.cast::<u8>();
        if !base.is_null() {
            for i in 0..a.size {
                // SAFETY: element `i` is in the block.
                unsafe { destruct_object(t, base.add(i * size).cast()) };
            }
        }
    }
    // SAFETY: the caller's promise.
    unsafe { free(a.array) };
    a.array = ptr::null_mut();
    a.size = 0;
}

/// `PMIx_Value_destruct`: release what the value holds and leave it `PMIX_UNDEF`.
///
/// # Safety
/// As [`destruct_object`], for the value's type.
pub(crate) unsafe fn destruct_value(v: &mut CValue) {
    let t = DataType(v.type_);
    if by_pointer(t) {
        // SAFETY: a value of a pointer type holds a block of libc's allocator.
        unsafe {
            let p = v.data.ptr;
            if !p.is_null() {
                destruct_object(t, p);
                free(p);
            }
        }
    } else {
        // SAFETY: the union holds an object of type `t` in place.
        unsafe { destruct_object(t, ptr::from_mut(&mut v.data).cast()) };
    }
    *v = undef_value();
}

/// Release `n` infos at `p` and the array (`PMIX_INFO_FREE`).
///
/// # Safety
/// `p` is NULL or an array of `n` infos from libc's allocator.
pub(crate) unsafe fn free_infos(p: *mut CInfo, n: usize) {
    if p.is_null() {
        return;
    }
    for i in 0..n {
        // SAFETY: info `i` is in the array.
        unsafe { destruct_value(&mut (*p.add(i)).value) };
    }
    // SAFETY: the caller's promise.
    unsafe { free(p) };
}

#[cfg(test)]
mod tests;
