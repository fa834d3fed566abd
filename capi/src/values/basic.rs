//! What every C value is made of: the sizes of the types' C objects and which a
//! `pmix_value_t` holds behind a pointer, unaligned reads and writes, and the small structs
//! (processes, keys, byte objects) the others hold.

use std::ffi::{c_char, c_void};
use std::ptr;

use pmix::model::{ByteObject, DataType, Key, Proc, Rank, Status};

use crate::boundary::{c_bytes, c_strdup, read_fixed, slice_of, write_fixed};
use crate::types::{
    CApp, CByteObject, CCoord, CDataArray, CDataBuffer, CDevice, CDeviceDistance, CDiskStats,
    CEndpoint, CEnvar, CGeometry, CInfo, CNetStats, CNodePid, CNodeStats, CPdata, CProc, CProcInfo,
    CProcStats, CQuery, CRegattr, CResourceUnit, CSourced, CValue, CValueData,
};

/// OpenPMIx 6.1's `PMIX_DEVICE` (`pmix_device_t`), unknown to the standard's v5.0 and to
/// the crate's model: its C objects are made, released and copied here, never read.
pub(crate) const DEVICE: DataType = DataType(70);

/// OpenPMIx 6.1's `PMIX_RESBLOCK_DIRECTIVE` (`pmix_resource_block_directive_t`, a byte).
pub(super) const RESBLOCK_DIRECTIVE: DataType = DataType(71);

/// OpenPMIx 6.1's `PMIX_RESOURCE_UNIT` (`pmix_resource_unit_t`).
pub(super) const RESOURCE_UNIT: DataType = DataType(72);

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
pub(super) unsafe fn get<T: Copy>(src: *const c_void) -> T {
    // SAFETY: the caller's promise.
    unsafe { ptr::read_unaligned(src.cast::<T>()) }
}

/// Write `v` at `dst` (which may be unaligned).
///
/// # Safety
/// `dst` points to room for a `T`.
pub(super) unsafe fn put<T>(dst: *mut c_void, v: T) {
    // SAFETY: the caller's promise.
    unsafe { ptr::write_unaligned(dst.cast::<T>(), v) }
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

pub(super) fn c_byte_object(bytes: &[u8]) -> Result<CByteObject, Status> {
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
