//! The C structs of the standard's API, laid out as OpenPMIx 4.2's headers lay them out on
//! x86-64 (`openpmix/ABI.md` §2.4). The sizes and offsets are asserted below at compile time
//! and compared with the C compiler's view of OpenPMIx's headers by `tests/layouts.rs`.
//!
//! The names are the C ones in Rust's case (`pmix_proc_t` is [`CProc`]).

use std::ffi::{c_char, c_int, c_void};
use std::mem::{offset_of, size_of};

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

/// `pmix_info_t`'s flag on the last element of an array made by `PMIX_INFO_CREATE`.
pub const INFO_ARRAY_END: u32 = 0x2;

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
    assert!(size_of::<CRegattr>() == 536 && offset_of!(CRegattr, string) == 8);
    assert!(offset_of!(CRegattr, type_) == 520 && offset_of!(CRegattr, description) == 528);
};
