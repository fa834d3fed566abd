//! OpenPMIx's C structs, defined once for the whole project: the structs of the standard's
//! C API, laid out as OpenPMIx 4.2's headers lay them out on x86-64 (`openpmix/ABI.md`
//! §2.4), with the three that OpenPMIx 6.1's headers add ([`CDevice`], [`CResourceUnit`],
//! [`CNodePid`]; every struct the two share has the same layout in 4.2, 5.0 and 6.1). The library `capi` (`libpmix.so.2`) exports its functions over
//! them, and the conformance harness's FFI calls a C `libpmix.so` with them. The crate
//! depends on nothing, so the harness has the structs without linking the library.
//!
//! `pmix_server_module_t` ([`CServerModule`]) is here too, with the types of its upcalls
//! and of the callbacks that answer them (`server_module.rs`): `capi` calls a C host's
//! upcalls through it, and the harness, a C host of a `libpmix.so`, fills it with its own.
//!
//! The sizes and offsets are asserted at compile time and compared with the C compiler's
//! view of OpenPMIx's headers by the `tests` crate (`tests/tests/capi.rs`).
//!
//! The names are the C ones in Rust's case (`pmix_proc_t` is [`CProc`]). The `zeroed`
//! constructors give a struct as the header's `PMIX_*_CONSTRUCT` macro leaves it.

#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

use std::ffi::{c_char, c_int, c_void};
use std::mem::{offset_of, size_of};

mod callbacks;
mod server_module;

pub use callbacks::*;
pub use server_module::*;

/// `pmix_status_t`.
pub type CStatus = c_int;

/// `pmix_proc_t`: a namespace of at most 255 bytes and a rank.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CProc {
    pub nspace: [c_char; 256],
    pub rank: u32,
}

/// `struct timeval`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CTimeval {
    pub sec: i64,
    pub usec: i64,
}

/// `pmix_byte_object_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CByteObject {
    pub bytes: *mut c_char,
    pub size: usize,
}

/// `pmix_envar_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CEnvar {
    pub envar: *mut c_char,
    pub value: *mut c_char,
    pub separator: c_char,
}

/// `pmix_data_array_t`: `size` elements of `type_`, contiguous at `array`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CDataArray {
    pub type_: u16,
    pub size: usize,
    pub array: *mut c_void,
}

/// The union of `pmix_value_t`. Scalars, strings, byte objects and environment variables are
/// held in place; structs behind a pointer (a proc, a data array, a proc info, …).
#[repr(C)]
#[derive(Clone, Copy)]
pub union CValueData {
    pub flag: bool,
    pub byte: u8,
    pub string: *mut c_char,
    pub size: usize,
    pub pid: i32,
    pub integer: c_int,
    pub int8: i8,
    pub int16: i16,
    pub int32: i32,
    pub int64: i64,
    pub uint: u32,
    pub uint8: u8,
    pub uint16: u16,
    pub uint32: u32,
    pub uint64: u64,
    pub fval: f32,
    pub dval: f64,
    pub tv: CTimeval,
    pub time: i64,
    pub status: c_int,
    pub rank: u32,
    pub nspace: *mut [c_char; 256],
    pub proc: *mut CProc,
    pub bo: CByteObject,
    pub persist: u8,
    pub scope: u8,
    pub range: u8,
    pub state: u8,
    pub pinfo: *mut CProcInfo,
    pub darray: *mut CDataArray,
    pub ptr: *mut c_void,
    pub adir: u8,
    pub envar: CEnvar,
    pub devtype: u64,
    pub locality: u16,
    pub coord: *mut CCoord,
    pub geometry: *mut CGeometry,
    pub devdist: *mut CDeviceDistance,
    pub endpoint: *mut CEndpoint,
    pub dbuf: *mut CDataBuffer,
    pub pstats: *mut CProcStats,
    pub dkstats: *mut CDiskStats,
    pub netstats: *mut CNetStats,
    pub ndstats: *mut CNodeStats,
    /// OpenPMIx 6.1's members, in the union's room (its headers drop the four stats
    /// pointers, whose type codes 61 to 64 they leave unassigned).
    pub rbdir: u8,
    pub device: *mut CDevice,
    pub resunit: *mut CResourceUnit,
    pub nodepid: *mut CNodePid,
}

impl std::fmt::Debug for CValueData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CValueData { .. }")
    }
}

/// `pmix_value_t`: a type code and the union.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CValue {
    pub type_: u16,
    pub data: CValueData,
}

/// `pmix_info_t`: a key of at most 511 bytes, directive flags and a value.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CInfo {
    pub key: [c_char; 512],
    pub flags: u32,
    pub value: CValue,
}

/// `pmix_pdata_t`: published data.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CPdata {
    pub proc: CProc,
    pub key: [c_char; 512],
    pub value: CValue,
}

/// `pmix_app_t`: one application of a spawn.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CApp {
    pub cmd: *mut c_char,
    pub argv: *mut *mut c_char,
    pub env: *mut *mut c_char,
    pub cwd: *mut c_char,
    pub maxprocs: c_int,
    pub info: *mut CInfo,
    pub ninfo: usize,
}

/// `pmix_query_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CQuery {
    pub keys: *mut *mut c_char,
    pub qualifiers: *mut CInfo,
    pub nqual: usize,
}

/// `pmix_proc_info_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CProcInfo {
    pub proc: CProc,
    pub hostname: *mut c_char,
    pub executable_name: *mut c_char,
    pub pid: i32,
    pub exit_code: c_int,
    pub state: u8,
}

/// `pmix_data_buffer_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CDataBuffer {
    pub base_ptr: *mut c_char,
    pub pack_ptr: *mut c_char,
    pub unpack_ptr: *mut c_char,
    pub bytes_allocated: usize,
    pub bytes_used: usize,
}

/// `pmix_coord_t`: a fabric coordinate, `dims` values in one view (`pmix_coord_view_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CCoord {
    pub view: u8,
    pub coord: *mut u32,
    pub dims: usize,
}

/// `pmix_geometry_t`: where a fabric device sits, `ncoords` coordinates in several views.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CGeometry {
    pub fabric: usize,
    pub uuid: *mut c_char,
    pub osname: *mut c_char,
    pub coordinates: *mut CCoord,
    pub ncoords: usize,
}

/// `pmix_device_distance_t`: the least and greatest distance from a process to a device.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CDeviceDistance {
    pub uuid: *mut c_char,
    pub osname: *mut c_char,
    pub type_: u64,
    pub mindist: u16,
    pub maxdist: u16,
}

/// `pmix_endpoint_t`: a device's fabric endpoint.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CEndpoint {
    pub uuid: *mut c_char,
    pub osname: *mut c_char,
    pub endpt: CByteObject,
}

/// `pmix_topology_t` and `pmix_cpuset_t`: a source (`"hwloc"`) and the source's object.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CSourced {
    pub source: *mut c_char,
    pub object: *mut c_void,
}

/// `pmix_fabric_t`: a fabric's name, its index (the host's handle for it), its information,
/// and the module of the library that registered it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CFabric {
    pub name: *mut c_char,
    pub index: usize,
    pub info: *mut CInfo,
    pub ninfo: usize,
    pub module: *mut c_void,
}

/// `pmix_regattr_t`: an attribute a function supports (`PMIx_Register_attributes`, answers
/// to `PMIX_QUERY_ATTRIBUTE_SUPPORT`): its name, key string, data type and description lines
/// (a NULL-terminated `char **`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CRegattr {
    pub name: *mut c_char,
    pub string: [c_char; 512],
    pub type_: u16,
    pub description: *mut *mut c_char,
}

/// `pmix_proc_stats_t`: one sample of a process's resource use (sizes in MBytes); `state`
/// is the letter `ps` shows.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CProcStats {
    pub node: *mut c_char,
    pub proc: CProc,
    pub pid: i32,
    pub cmd: *mut c_char,
    pub state: c_char,
    pub time: CTimeval,
    pub percent_cpu: f32,
    pub priority: i32,
    pub num_threads: u16,
    pub pss: f32,
    pub vsize: f32,
    pub rss: f32,
    pub peak_vsize: f32,
    pub processor: u16,
    pub sample_time: CTimeval,
}

/// `pmix_disk_stats_t`: one sample of a disk's counters.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CDiskStats {
    pub disk: *mut c_char,
    pub num_reads_completed: u64,
    pub num_reads_merged: u64,
    pub num_sectors_read: u64,
    pub milliseconds_reading: u64,
    pub num_writes_completed: u64,
    pub num_writes_merged: u64,
    pub num_sectors_written: u64,
    pub milliseconds_writing: u64,
    pub num_ios_in_progress: u64,
    pub milliseconds_io: u64,
    pub weighted_milliseconds_io: u64,
}

/// `pmix_net_stats_t`: one sample of a network interface's counters.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CNetStats {
    pub net_interface: *mut c_char,
    pub num_bytes_recvd: u64,
    pub num_packets_recvd: u64,
    pub num_recv_errs: u64,
    pub num_bytes_sent: u64,
    pub num_packets_sent: u64,
    pub num_send_errs: u64,
}

/// `pmix_node_stats_t`: one sample of a node's load averages and memory (in MBytes), with
/// `ndiskstats` disk samples and `nnetstats` interface samples in arrays of their own.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CNodeStats {
    pub node: *mut c_char,
    pub la: f32,
    pub la5: f32,
    pub la15: f32,
    pub total_mem: f32,
    pub free_mem: f32,
    pub buffers: f32,
    pub cached: f32,
    pub swap_cached: f32,
    pub swap_total: f32,
    pub swap_free: f32,
    pub mapped: f32,
    pub sample_time: CTimeval,
    pub diskstats: *mut CDiskStats,
    pub ndiskstats: usize,
    pub netstats: *mut CNetStats,
    pub nnetstats: usize,
}

/// `pmix_device_t` (OpenPMIx 6.1, type code 70): a device by its identifiers and type.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CDevice {
    pub uuid: *mut c_char,
    pub osname: *mut c_char,
    pub type_: u64,
}

/// `pmix_resource_unit_t` (OpenPMIx 6.1, type code 72): a count of resources of one type.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CResourceUnit {
    pub type_: u64,
    pub count: usize,
}

/// `pmix_node_pid_t` (OpenPMIx 6.1, type code 73): a process by its node and pid.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CNodePid {
    pub hostname: *mut c_char,
    pub nodeid: u32,
    pub pid: i32,
}

/// `pmix_info_t`'s flag on the last element of an array made by `PMIX_INFO_CREATE`.
pub const INFO_ARRAY_END: u32 = 0x2;

impl CProc {
    /// `PMIX_PROC_CONSTRUCT`: an empty namespace, rank 0.
    pub fn zeroed() -> CProc {
        CProc {
            nspace: [0; 256],
            rank: 0,
        }
    }
}

impl CValueData {
    /// All 24 bytes zero, whichever field is read: a NULL pointer, a zero, `false`.
    pub fn zeroed() -> CValueData {
        // SAFETY: every field of the union is an integer, a float, a `bool`, a raw pointer or
        // a struct of those, and all-zero bytes are a valid value of each.
        unsafe { std::mem::zeroed() }
    }
}

// The structs with a union are zeroed whole, padding included, as the headers' `memset` does.

impl CValue {
    /// `PMIX_VALUE_CONSTRUCT`: `PMIX_UNDEF` (0), the union zeroed.
    pub fn zeroed() -> CValue {
        // SAFETY: a `u16` and the union, for both of which all-zero bytes are a valid value
        // (as in `CValueData::zeroed`).
        unsafe { std::mem::zeroed() }
    }
}

impl CInfo {
    /// `PMIX_INFO_CONSTRUCT`: an empty key, no flags, a `PMIX_UNDEF` value.
    pub fn zeroed() -> CInfo {
        // SAFETY: C characters, a `u32` and a value, for all of which all-zero bytes are a
        // valid value (as in `CValue::zeroed`).
        unsafe { std::mem::zeroed() }
    }
}

impl CPdata {
    /// `PMIX_PDATA_CONSTRUCT`: a zeroed proc, an empty key, a `PMIX_UNDEF` value.
    pub fn zeroed() -> CPdata {
        // SAFETY: a proc (C characters and a `u32`), C characters and a value, for all of
        // which all-zero bytes are a valid value (as in `CValue::zeroed`).
        unsafe { std::mem::zeroed() }
    }
}

impl CDataBuffer {
    /// `PMIX_DATA_BUFFER_CONSTRUCT`: no payload.
    pub fn zeroed() -> CDataBuffer {
        CDataBuffer {
            base_ptr: std::ptr::null_mut(),
            pack_ptr: std::ptr::null_mut(),
            unpack_ptr: std::ptr::null_mut(),
            bytes_allocated: 0,
            bytes_used: 0,
        }
    }
}

// ABI.md §2.4, checked where the code is built.
const _: () = {
    assert!(size_of::<CProc>() == 260 && offset_of!(CProc, rank) == 256);
    assert!(size_of::<CByteObject>() == 16);
    assert!(size_of::<CEnvar>() == 24 && offset_of!(CEnvar, separator) == 16);
    assert!(size_of::<CDataArray>() == 24 && offset_of!(CDataArray, array) == 16);
    assert!(size_of::<CValueData>() == 24);
    assert!(size_of::<CValue>() == 32 && offset_of!(CValue, data) == 8);
    assert!(size_of::<CInfo>() == 552);
    assert!(offset_of!(CInfo, flags) == 512 && offset_of!(CInfo, value) == 520);
    assert!(size_of::<CPdata>() == 808);
    assert!(offset_of!(CPdata, key) == 260 && offset_of!(CPdata, value) == 776);
    assert!(size_of::<CApp>() == 56 && offset_of!(CApp, maxprocs) == 32);
    assert!(offset_of!(CApp, info) == 40 && offset_of!(CApp, ninfo) == 48);
    assert!(size_of::<CQuery>() == 24 && offset_of!(CQuery, nqual) == 16);
    assert!(size_of::<CProcInfo>() == 296 && offset_of!(CProcInfo, hostname) == 264);
    assert!(offset_of!(CProcInfo, pid) == 280 && offset_of!(CProcInfo, state) == 288);
    assert!(size_of::<CDataBuffer>() == 40 && offset_of!(CDataBuffer, bytes_used) == 32);
    assert!(size_of::<CCoord>() == 24 && offset_of!(CCoord, coord) == 8);
    assert!(offset_of!(CCoord, dims) == 16);
    assert!(size_of::<CGeometry>() == 40 && offset_of!(CGeometry, uuid) == 8);
    assert!(offset_of!(CGeometry, osname) == 16 && offset_of!(CGeometry, coordinates) == 24);
    assert!(offset_of!(CGeometry, ncoords) == 32);
    assert!(size_of::<CDeviceDistance>() == 32 && offset_of!(CDeviceDistance, osname) == 8);
    assert!(offset_of!(CDeviceDistance, type_) == 16);
    assert!(offset_of!(CDeviceDistance, mindist) == 24);
    assert!(offset_of!(CDeviceDistance, maxdist) == 26);
    assert!(size_of::<CEndpoint>() == 32 && offset_of!(CEndpoint, osname) == 8);
    assert!(offset_of!(CEndpoint, endpt) == 16);
    assert!(size_of::<CSourced>() == 16 && offset_of!(CSourced, object) == 8);
    assert!(size_of::<CFabric>() == 40 && offset_of!(CFabric, info) == 16);
    assert!(offset_of!(CFabric, module) == 32);
    assert!(size_of::<CRegattr>() == 536 && offset_of!(CRegattr, string) == 8);
    assert!(offset_of!(CRegattr, type_) == 520 && offset_of!(CRegattr, description) == 528);
    assert!(size_of::<CProcStats>() == 352 && offset_of!(CProcStats, proc) == 8);
    assert!(offset_of!(CProcStats, pid) == 268 && offset_of!(CProcStats, cmd) == 272);
    assert!(offset_of!(CProcStats, state) == 280 && offset_of!(CProcStats, time) == 288);
    assert!(offset_of!(CProcStats, percent_cpu) == 304);
    assert!(offset_of!(CProcStats, num_threads) == 312 && offset_of!(CProcStats, pss) == 316);
    assert!(offset_of!(CProcStats, processor) == 332);
    assert!(offset_of!(CProcStats, sample_time) == 336);
    assert!(size_of::<CDiskStats>() == 96 && offset_of!(CDiskStats, num_reads_completed) == 8);
    assert!(offset_of!(CDiskStats, weighted_milliseconds_io) == 88);
    assert!(size_of::<CNetStats>() == 56 && offset_of!(CNetStats, num_bytes_recvd) == 8);
    assert!(offset_of!(CNetStats, num_send_errs) == 48);
    assert!(size_of::<CNodeStats>() == 104 && offset_of!(CNodeStats, la) == 8);
    assert!(offset_of!(CNodeStats, mapped) == 48 && offset_of!(CNodeStats, sample_time) == 56);
    assert!(offset_of!(CNodeStats, diskstats) == 72 && offset_of!(CNodeStats, ndiskstats) == 80);
    assert!(offset_of!(CNodeStats, netstats) == 88 && offset_of!(CNodeStats, nnetstats) == 96);
    // OpenPMIx 6.1.0's headers.
    assert!(size_of::<CDevice>() == 24 && offset_of!(CDevice, type_) == 16);
    assert!(size_of::<CResourceUnit>() == 16 && offset_of!(CResourceUnit, count) == 8);
    assert!(size_of::<CNodePid>() == 16 && offset_of!(CNodePid, nodeid) == 8);
    assert!(offset_of!(CNodePid, pid) == 12);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_structs_read_as_zero_in_every_field() {
        let v = CValue::zeroed();
        assert_eq!(v.type_, 0);
        // SAFETY: the whole union was zeroed, and all-zero bytes are valid for both fields.
        let (bo, envar) = unsafe { (v.data.bo, v.data.envar) };
        assert!(bo.bytes.is_null() && bo.size == 0);
        assert!(envar.envar.is_null() && envar.value.is_null() && envar.separator == 0);
        let i = CInfo::zeroed();
        assert!(i.key.iter().all(|c| *c == 0) && i.flags == 0 && i.value.type_ == 0);
        let p = CPdata::zeroed();
        assert!(p.proc.nspace.iter().all(|c| *c == 0) && p.proc.rank == 0);
        assert!(p.key.iter().all(|c| *c == 0) && p.value.type_ == 0);
        let b = CDataBuffer::zeroed();
        assert!(b.base_ptr.is_null() && b.pack_ptr.is_null() && b.unpack_ptr.is_null());
        assert!(b.bytes_allocated == 0 && b.bytes_used == 0);
    }
}
