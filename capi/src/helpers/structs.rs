//! Each structure's construct, create, destruct and free (draft §3.2, the "support
//! functions" of each structure), and the load and transfer calls some of them have.
//!
//! One shape for all: `X_construct(p)` writes the empty structure (whatever `p` held is not
//! released); `X_create(n)` is `n` constructed structures from libc (NULL for none);
//! `X_destruct(p)` releases what `p` holds and leaves it empty; `X_free(p, n)` destructs `n`
//! and frees the array (also for `n == 0`). A NULL pointer is ignored.

use std::ffi::{c_char, c_void};
use std::ptr;

use pmix::model::{DataType, Rank};

use crate::args::{InOut, Out, Str};
use crate::boundary::{c_strdup, calloc_array, free, guard_or, plausible, read_cstr};
use crate::types::{
    CApp, CByteObject, CCoord, CDataArray, CDataBuffer, CDevice, CDeviceDistance, CDiskStats,
    CEndpoint, CEnvar, CFabric, CGeometry, CInfo, CNetStats, CNodePid, CNodeStats, CPdata, CProc,
    CProcInfo, CProcStats, CQuery, CRegattr, CResourceUnit, CSourced, CValue,
};
use crate::values::{
    DEVICE, destruct_object, destruct_value, loaded, object_size, read_value, undef_value,
    write_value,
};

/// `pmix_info_t`'s flag that keeps `PMIx_Info_destruct` off its value.
const INFO_PERSISTENT: u32 = 0x10;
/// `PMIX_DEVTYPE_UNKNOWN`.
const DEVTYPE_UNKNOWN: u64 = 0;

/// A C structure of this family: its empty form and how to release what it holds.
pub trait Family: Sized {
    /// What `X_construct` writes.
    fn empty() -> Self;
    /// Release what the structure holds (not the structure itself), leaving it empty.
    ///
    /// # Safety
    /// Its pointers are NULL or blocks of libc's allocator that nothing else releases.
    unsafe fn release(&mut self);
}

/// The structure all of whose bytes are zero: a NULL pointer, a zero, an empty string.
fn zeroed<T>() -> T {
    // SAFETY: used only for the `repr(C)` structures of `pmix-ctypes`, whose fields are
    // integers, floats, raw pointers, C character arrays and unions of those: all-zero bytes
    // are a valid value of each.
    unsafe { std::mem::zeroed() }
}

/// A family whose release is [`destruct_object`]'s for its data type.
macro_rules! released_as {
    ($ty:ty, $t:expr, $empty:expr) => {
        impl Family for $ty {
            fn empty() -> Self {
                $empty
            }
            unsafe fn release(&mut self) {
                // SAFETY: an object of this type, as the caller promised.
                unsafe { destruct_object($t, ptr::from_mut(self).cast::<c_void>()) };
                *self = Self::empty();
            }
        }
    };
}

released_as!(CApp, DataType::APP, zeroed());
released_as!(CByteObject, DataType::BYTE_OBJECT, zeroed());
released_as!(CCoord, DataType::COORD, zeroed());
released_as!(CSourced, DataType::PROC_CPUSET, zeroed());
released_as!(CDataBuffer, DataType::DATA_BUFFER, CDataBuffer::zeroed());
released_as!(
    CDevice,
    DEVICE,
    CDevice {
        type_: DEVTYPE_UNKNOWN,
        ..zeroed()
    }
);
released_as!(
    CDeviceDistance,
    DataType::DEVICE_DIST,
    CDeviceDistance {
        type_: DEVTYPE_UNKNOWN,
        mindist: u16::MAX,
        maxdist: u16::MAX,
        ..zeroed()
    }
);
released_as!(CEndpoint, DataType::ENDPOINT, zeroed());
released_as!(CEnvar, DataType::ENVAR, zeroed());
released_as!(CGeometry, DataType::GEOMETRY, zeroed());
released_as!(
    CNodePid,
    DataType::NODE_PID,
    CNodePid {
        hostname: ptr::null_mut(),
        nodeid: u32::MAX,
        pid: -1,
    }
);
released_as!(CPdata, DataType::PDATA, CPdata::zeroed());
released_as!(CProcInfo, DataType::PROC_INFO, zeroed());
released_as!(CQuery, DataType::QUERY, zeroed());
released_as!(CRegattr, DataType::REGATTR, zeroed());
released_as!(CProcStats, DataType::PROC_STATS, zeroed());
released_as!(CDiskStats, DataType::DISK_STATS, zeroed());
released_as!(CNetStats, DataType::NET_STATS, zeroed());
released_as!(CNodeStats, DataType::NODE_STATS, zeroed());

impl Family for CValue {
    fn empty() -> Self {
        undef_value()
    }
    unsafe fn release(&mut self) {
        // SAFETY: the caller's promise.
        unsafe { destruct_value(self) };
    }
}

impl Family for CInfo {
    fn empty() -> Self {
        CInfo::zeroed()
    }
    unsafe fn release(&mut self) {
        // An info marked persistent does not own its value (`PMIX_INFO_PERSISTENT`).
        if self.flags & INFO_PERSISTENT == 0 {
            // SAFETY: the caller's promise.
            unsafe { destruct_value(&mut self.value) };
        }
    }
}

impl Family for CProc {
    /// OpenPMIx 5.0 and 6.1 construct a process with the rank `PMIX_RANK_UNDEF` (4.2's
    /// macro left it 0).
    fn empty() -> Self {
        CProc {
            rank: Rank::UNDEF.0,
            ..CProc::zeroed()
        }
    }
    unsafe fn release(&mut self) {
        *self = Self::empty();
    }
}

impl Family for CResourceUnit {
    fn empty() -> Self {
        CResourceUnit {
            type_: DEVTYPE_UNKNOWN,
            count: 0,
        }
    }
    unsafe fn release(&mut self) {
        *self = Self::empty();
    }
}

/// `pmix_topology_t`: a cpuset's shape (`CSourced`), released as a topology.
#[repr(transparent)]
#[derive(Debug)]
pub struct Topology(CSourced);

impl Family for Topology {
    fn empty() -> Self {
        Topology(zeroed())
    }
    unsafe fn release(&mut self) {
        // SAFETY: the caller's promise.
        unsafe { destruct_object(DataType::TOPO, ptr::from_mut(&mut self.0).cast()) };
        *self = Self::empty();
    }
}

/// `X_construct`.
///
/// # Safety
/// `p` is NULL or writable.
pub(crate) unsafe fn construct<T: Family>(p: *mut T) {
    // SAFETY: the caller's promise.
    if let Some(p) = unsafe { p.as_mut() } {
        // SAFETY: writable (the caller's promise). The old bytes are overwritten, not
        // released: C's construct does not read them either.
        unsafe { ptr::write(p, T::empty()) };
    }
}

/// `X_create`: `n` constructed structures from libc, NULL for none (or no memory).
pub(crate) fn create<T: Family>(n: usize) -> *mut T {
    if n == 0 {
        return ptr::null_mut();
    }
    let Ok(array) = calloc_array::<T>(n) else {
        return ptr::null_mut();
    };
    for i in 0..n {
        // SAFETY: `array` holds `n` elements.
        unsafe { ptr::write(array.add(i), T::empty()) };
    }
    array
}

/// `X_destruct`.
///
/// # Safety
/// `p` is NULL or a structure of the family as [`Family::release`] requires.
pub(crate) unsafe fn destruct<T: Family>(p: *mut T) {
    // SAFETY: the caller's promise.
    if let Some(p) = unsafe { p.as_mut() } {
        // SAFETY: as above.
        unsafe { p.release() };
    }
}

/// `X_free`: destruct `n` structures and free their array.
///
/// # Safety
/// `p` is NULL or an array of libc's of at least `n` structures, released once.
pub(crate) unsafe fn free_array<T: Family>(p: *mut T, n: usize) {
    // An array past any this library hands out is a caller's mistake: left alone (leaked)
    // rather than released past its end.
    if p.is_null() || plausible(p.cast_const(), n).is_err() {
        return;
    }
    for i in 0..n {
        // SAFETY: the caller's promise.
        unsafe { (*p.add(i)).release() };
    }
    // SAFETY: the caller's promise.
    unsafe { free(p) };
}

/// The exported calls of one family: construct, create, destruct and free, each named as
/// given (a family whose destruct came with OpenPMIx 4.2 names none).
macro_rules! family_calls {
    ($ty:ty: $construct:ident, $create:ident, $destruct:ident, $free:ident) => {
        family_calls!($ty: $construct, $create, $free);

        #[doc = concat!("`", stringify!($destruct), "`: release what `p` holds.")]
        ///
        /// # Safety
        /// `p` is NULL or a structure whose blocks are libc's and released once.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $destruct(p: *mut $ty) {
            // SAFETY: the caller's promise.
            guard_or(stringify!($destruct), (), || unsafe { destruct(p) });
        }
    };
    ($ty:ty: $construct:ident, $create:ident, $free:ident) => {
        #[doc = concat!("`", stringify!($construct), "`: the empty structure into `p`.")]
        ///
        /// # Safety
        /// `p` is NULL or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $construct(p: *mut $ty) {
            // SAFETY: the caller's promise.
            guard_or(stringify!($construct), (), || unsafe { construct(p) });
        }

        #[doc = concat!("`", stringify!($create), "`: `n` empty structures from libc, NULL for none.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $create(n: usize) -> *mut $ty {
            guard_or(stringify!($create), ptr::null_mut(), || create(n))
        }

        #[doc = concat!("`", stringify!($free), "`: destruct `n` structures and free the array.")]
        ///
        /// # Safety
        /// `p` is NULL or an array from libc of at least `n` structures, released once.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $free(p: *mut $ty, n: usize) {
            // SAFETY: the caller's promise.
            guard_or(stringify!($free), (), || unsafe { free_array(p, n) });
        }
    };
}

family_calls!(CApp: PMIx_App_construct, PMIx_App_create, PMIx_App_destruct, PMIx_App_free);
family_calls!(CByteObject: PMIx_Byte_object_construct, PMIx_Byte_object_create,
    PMIx_Byte_object_destruct, PMIx_Byte_object_free);
family_calls!(CSourced: PMIx_Cpuset_construct, PMIx_Cpuset_create, PMIx_Cpuset_free);
family_calls!(Topology: PMIx_Topology_construct, PMIx_Topology_create, PMIx_Topology_free);
family_calls!(CDevice: PMIx_Device_construct, PMIx_Device_create, PMIx_Device_destruct,
    PMIx_Device_free);
family_calls!(CDeviceDistance: PMIx_Device_distance_construct, PMIx_Device_distance_create,
    PMIx_Device_distance_destruct, PMIx_Device_distance_free);
family_calls!(CEndpoint: PMIx_Endpoint_construct, PMIx_Endpoint_create,
    PMIx_Endpoint_destruct, PMIx_Endpoint_free);
family_calls!(CEnvar: PMIx_Envar_construct, PMIx_Envar_create, PMIx_Envar_destruct,
    PMIx_Envar_free);
family_calls!(CGeometry: PMIx_Geometry_construct, PMIx_Geometry_create,
    PMIx_Geometry_destruct, PMIx_Geometry_free);
family_calls!(CNodePid: PMIx_Node_pid_construct, PMIx_Node_pid_create, PMIx_Node_pid_destruct,
    PMIx_Node_pid_free);
family_calls!(CPdata: PMIx_Pdata_construct, PMIx_Pdata_create, PMIx_Pdata_destruct,
    PMIx_Pdata_free);
family_calls!(CProc: PMIx_Proc_construct, PMIx_Proc_create, PMIx_Proc_destruct,
    PMIx_Proc_free);
family_calls!(CProcInfo: PMIx_Proc_info_construct, PMIx_Proc_info_create,
    PMIx_Proc_info_destruct, PMIx_Proc_info_free);
family_calls!(CQuery: PMIx_Query_construct, PMIx_Query_create, PMIx_Query_destruct,
    PMIx_Query_free);
family_calls!(CRegattr: PMIx_Regattr_construct, PMIx_Regattr_create, PMIx_Regattr_destruct,
    PMIx_Regattr_free);
family_calls!(CResourceUnit: PMIx_Resource_unit_construct, PMIx_Resource_unit_create,
    PMIx_Resource_unit_destruct, PMIx_Resource_unit_free);
family_calls!(CValue: PMIx_Value_construct, PMIx_Value_create, PMIx_Value_free);
family_calls!(CInfo: PMIx_Info_construct, PMIx_Info_create, PMIx_Info_destruct,
    PMIx_Info_free);
// OpenPMIx 5.0's statistics structures (6.1 replaced them with attribute arrays).
family_calls!(CProcStats: PMIx_Proc_stats_construct, PMIx_Proc_stats_create,
    PMIx_Proc_stats_destruct, PMIx_Proc_stats_free);
family_calls!(CDiskStats: PMIx_Disk_stats_construct, PMIx_Disk_stats_create,
    PMIx_Disk_stats_destruct, PMIx_Disk_stats_free);
family_calls!(CNetStats: PMIx_Net_stats_construct, PMIx_Net_stats_create,
    PMIx_Net_stats_destruct, PMIx_Net_stats_free);
family_calls!(CNodeStats: PMIx_Node_stats_construct, PMIx_Node_stats_create,
    PMIx_Node_stats_destruct, PMIx_Node_stats_free);

/// `PMIx_Coord_construct`.
///
/// # Safety
/// `m` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Coord_construct(m: *mut CCoord) {
    // SAFETY: the caller's promise.
    guard_or("PMIx_Coord_construct", (), || unsafe { construct(m) });
}

/// `PMIx_Coord_destruct`.
///
/// # Safety
/// `m` is NULL or a coordinate whose values are libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Coord_destruct(m: *mut CCoord) {
    // SAFETY: the caller's promise.
    guard_or("PMIx_Coord_destruct", (), || unsafe { destruct(m) });
}

/// `PMIx_Coord_create`: `number` coordinates of `dims` zeroed values each (note the order
/// of the arguments, the header's).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Coord_create(dims: usize, number: usize) -> *mut CCoord {
    guard_or("PMIx_Coord_create", ptr::null_mut(), || {
        let array = create::<CCoord>(number);
        if array.is_null() {
            return array;
        }
        for i in 0..number {
            // SAFETY: `array` holds `number` coordinates (a NULL array has none).
            let c = unsafe { &mut *array.add(i) };
            c.dims = dims;
            if dims > 0 {
                match calloc_array::<u32>(dims) {
                    Ok(values) => c.coord = values,
                    Err(_) => {
                        // SAFETY: the coordinates made so far, and the array, all ours.
                        unsafe { free_array(array, number) };
                        return ptr::null_mut();
                    }
                }
            }
        }
        array
    })
}

/// `PMIx_Coord_free`.
///
/// # Safety
/// `m` is NULL or an array from libc of at least `number` coordinates, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Coord_free(m: *mut CCoord, number: usize) {
    // SAFETY: the caller's promise.
    guard_or("PMIx_Coord_free", (), || unsafe { free_array(m, number) });
}

/// `PMIx_Fabric_construct`: no name, the index `SIZE_MAX` (none yet), no information.
///
/// # Safety
/// `p` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Fabric_construct(p: *mut CFabric) {
    guard_or("PMIx_Fabric_construct", (), || {
        // SAFETY: the caller's promise.
        if let Some(p) = unsafe { p.as_mut() } {
            *p = CFabric {
                index: usize::MAX,
                ..zeroed()
            };
        }
    });
}

/// `n` empty infos from libc and their count (none when there is no memory).
fn new_infos(n: usize) -> (*mut CInfo, usize) {
    let infos = create::<CInfo>(n);
    (infos, if infos.is_null() { 0 } else { n })
}

/// `PMIx_App_info_create`: `n` empty infos as the application's.
///
/// # Safety
/// `p` is NULL or a writable application.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_App_info_create(p: *mut CApp, n: usize) {
    guard_or("PMIx_App_info_create", (), || {
        // SAFETY: the caller's promise.
        if let Some(app) = unsafe { p.as_mut() } {
            (app.info, app.ninfo) = new_infos(n);
        }
    });
}

/// `PMIx_App_release`: destruct one application and free it.
///
/// # Safety
/// `p` is NULL or one application from libc, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_App_release(p: *mut CApp) {
    // SAFETY: the caller's promise.
    guard_or("PMIx_App_release", (), || unsafe { free_array(p, 1) });
}

/// `PMIx_Query_qualifiers_create`: `n` empty infos as the query's qualifiers.
///
/// # Safety
/// `p` is NULL or a writable query.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Query_qualifiers_create(p: *mut CQuery, n: usize) {
    guard_or("PMIx_Query_qualifiers_create", (), || {
        // SAFETY: the caller's promise.
        if let Some(q) = unsafe { p.as_mut() } {
            (q.qualifiers, q.nqual) = new_infos(n);
        }
    });
}

/// `PMIx_Query_release`: destruct one query and free it.
///
/// # Safety
/// `p` is NULL or one query from libc, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Query_release(p: *mut CQuery) {
    // SAFETY: the caller's promise.
    guard_or("PMIx_Query_release", (), || unsafe { free_array(p, 1) });
}

/// `PMIx_Proc_load`: `PMIx_Proc_construct` and then `PMIx_Load_procid`.
///
/// # Safety
/// As `PMIx_Load_procid`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Proc_load(p: *mut CProc, nspace: *const c_char, rank: u32) {
    // SAFETY: the caller's promise, passed on.
    unsafe {
        PMIx_Proc_construct(p);
        super::names::PMIx_Load_procid(InOut::new(p), Str::new(nspace), rank);
    }
}

/// `PMIx_Byte_object_load`: `d` and `sz` into `b`, which takes `d` over (no copy).
///
/// # Safety
/// `b` is NULL or writable; `d` NULL or a block of libc's of `sz` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Byte_object_load(b: *mut CByteObject, d: *mut c_char, sz: usize) {
    guard_or("PMIx_Byte_object_load", (), || {
        // SAFETY: the caller's promise.
        if let Some(b) = unsafe { b.as_mut() } {
            b.bytes = d;
            b.size = sz;
        }
    });
}

/// A copy of the C string at `p` from libc, NULL for NULL.
///
/// # Safety
/// `p` is NULL or a C string.
unsafe fn dup(p: *const c_char) -> *mut c_char {
    // SAFETY: the caller's promise.
    match unsafe { read_cstr(p) } {
        Some(s) => c_strdup(&s).unwrap_or(ptr::null_mut()),
        None => ptr::null_mut(),
    }
}

/// `PMIx_Envar_load`: copies of `var` and `value`, and `separator`, into `e` (what `e` held
/// is not released).
///
/// # Safety
/// `e` is NULL or writable; `var` and `value` NULL or C strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Envar_load(
    e: *mut CEnvar,
    var: *const c_char,
    value: *const c_char,
    separator: c_char,
) {
    guard_or("PMIx_Envar_load", (), || {
        // SAFETY: the caller's promise.
        if let Some(e) = unsafe { e.as_mut() } {
            // SAFETY: as above.
            unsafe {
                e.envar = dup(var);
                e.value = dup(value);
            }
            e.separator = separator;
        }
    });
}

/// `PMIx_Pdata_load`: `p`, `key` and a copy of `data` (as `PMIx_Value_load` takes it)
/// into `dest`.
///
/// # Safety
/// `dest` is NULL or writable; `p` NULL or a process; `key` a C string; `data` as
/// `PMIx_Value_load` reads it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Pdata_load(
    dest: *mut CPdata,
    p: *const CProc,
    key: *const c_char,
    data: *const c_void,
    type_: u16,
) {
    guard_or("PMIx_Pdata_load", (), || {
        // SAFETY: the caller's promise.
        let Some(dest) = (unsafe { dest.as_mut() }) else {
            return;
        };
        *dest = CPdata::zeroed();
        // SAFETY: the caller's promise.
        if let Some(p) = unsafe { p.as_ref() } {
            dest.proc = *p;
        }
        // SAFETY: the key field and the caller's key and data.
        unsafe {
            super::names::PMIx_Load_key(Out::new(dest.key.as_mut_ptr()), Str::new(key));
            // As `PMIx_Value_load` loads it; a value that cannot be read stays undefined.
            if let Ok(v) = loaded(data, DataType(type_)) {
                let _ = write_value(&v, &mut dest.value);
            }
        }
    });
}

/// `PMIx_Pdata_xfer`: a deep copy of `src` into `dest`.
///
/// # Safety
/// `dest` is NULL or writable; `src` NULL or published data.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Pdata_xfer(dest: *mut CPdata, src: *const CPdata) {
    guard_or("PMIx_Pdata_xfer", (), || {
        // SAFETY: the caller's promise.
        let (Some(dest), Some(src)) = (unsafe { dest.as_mut() }, unsafe { src.as_ref() }) else {
            return;
        };
        *dest = CPdata {
            proc: src.proc,
            key: src.key,
            value: undef_value(),
        };
        // SAFETY: a value of the caller's into a fresh one (as `PMIx_Value_xfer` copies it).
        if let Ok(v) = unsafe { read_value(&src.value) } {
            // Into the fresh value above.
            let _ = write_value(&v, &mut dest.value);
        }
    });
}

/// `PMIx_Regattr_load`: copies of `name`, `key` and `description` (as its first line), and
/// `type_`, into `info` (what it held is not released).
///
/// # Safety
/// `info` is NULL or writable; the strings NULL or C strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Regattr_load(
    info: *mut CRegattr,
    name: *const c_char,
    key: *const c_char,
    type_: u16,
    description: *const c_char,
) {
    guard_or("PMIx_Regattr_load", (), || {
        // SAFETY: the caller's promise.
        let Some(r) = (unsafe { info.as_mut() }) else {
            return;
        };
        // SAFETY: the caller's strings, and the key field.
        unsafe {
            if !name.is_null() {
                r.name = dup(name);
            }
            if !key.is_null() {
                super::names::PMIx_Load_key(Out::new(r.string.as_mut_ptr()), Str::new(key));
            }
            r.type_ = type_;
            if !description.is_null() {
                super::argv::PMIx_Argv_append_nosize(&mut r.description, description);
            }
        }
    });
}

/// `PMIx_Regattr_xfer`: a deep copy of `src` into `dest`.
///
/// # Safety
/// `dest` is NULL or writable; `src` NULL or a registration.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Regattr_xfer(dest: *mut CRegattr, src: *const CRegattr) {
    guard_or("PMIx_Regattr_xfer", (), || {
        // SAFETY: the caller's promise.
        let (Some(dest), Some(src)) = (unsafe { dest.as_mut() }, unsafe { src.as_ref() }) else {
            return;
        };
        // SAFETY: the caller's registration's strings and list.
        *dest = unsafe {
            CRegattr {
                name: dup(src.name),
                string: src.string,
                type_: src.type_,
                description: super::argv::PMIx_Argv_copy(src.description),
            }
        };
    });
}

/// `PMIx_Data_array_init`: an empty array of `type_`.
///
/// # Safety
/// `p` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_array_init(p: *mut CDataArray, type_: u16) {
    guard_or("PMIx_Data_array_init", (), || {
        // SAFETY: the caller's promise.
        if let Some(p) = unsafe { p.as_mut() } {
            *p = CDataArray {
                type_,
                size: 0,
                array: ptr::null_mut(),
            };
        }
    });
}

/// `num` empty elements of `t`, each as its type's construct leaves it; NULL (and no
/// elements) for a type whose elements this library does not know, or for none.
fn elements(t: DataType, num: usize) -> *mut c_void {
    if num == 0 {
        return ptr::null_mut();
    }
    match t {
        DataType::PROC => create::<CProc>(num).cast(),
        DataType::DEVICE_DIST => create::<CDeviceDistance>(num).cast(),
        DataType::NODE_PID => create::<CNodePid>(num).cast(),
        DEVICE => create::<CDevice>(num).cast(),
        _ => match object_size(t) {
            // Zero is every other type's empty element (UNDEF values, NULL pointers).
            Some(size) => calloc_array::<u8>(num * size).map_or(ptr::null_mut(), |p| p.cast()),
            None => ptr::null_mut(),
        },
    }
}

/// `PMIx_Data_array_construct`: `num` empty elements of `type_` in `p`.
///
/// # Safety
/// `p` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_array_construct(p: *mut CDataArray, num: usize, type_: u16) {
    guard_or("PMIx_Data_array_construct", (), || {
        // SAFETY: the caller's promise.
        if let Some(p) = unsafe { p.as_mut() } {
            let array = elements(DataType(type_), num);
            *p = CDataArray {
                type_,
                size: if array.is_null() { 0 } else { num },
                array,
            };
        }
    });
}

/// `PMIx_Data_array_create`: one data array (from libc) of `n` empty elements of `type_`;
/// NULL for none.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_array_create(n: usize, type_: u16) -> *mut CDataArray {
    guard_or("PMIx_Data_array_create", ptr::null_mut(), || {
        if n == 0 {
            return ptr::null_mut();
        }
        let Ok(p) = calloc_array::<CDataArray>(1) else {
            return ptr::null_mut();
        };
        // SAFETY: `p` is one data array of ours.
        unsafe { PMIx_Data_array_construct(p, n, type_) };
        p
    })
}

/// `PMIx_Data_array_free`: destruct one data array and free it.
///
/// # Safety
/// `p` is NULL or one data array from libc, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_array_free(p: *mut CDataArray) {
    guard_or("PMIx_Data_array_free", (), || {
        if !p.is_null() {
            // SAFETY: the caller's promise.
            unsafe {
                crate::values::destruct_array(&mut *p);
                free(p);
            }
        }
    });
}

/// `PMIx_Data_buffer_construct`.
///
/// # Safety
/// `b` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_buffer_construct(b: *mut CDataBuffer) {
    // SAFETY: the caller's promise.
    guard_or("PMIx_Data_buffer_construct", (), || unsafe { construct(b) });
}

/// `PMIx_Data_buffer_create`: one empty buffer from libc.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_buffer_create() -> *mut CDataBuffer {
    guard_or("PMIx_Data_buffer_create", ptr::null_mut(), || create(1))
}

/// `PMIx_Data_buffer_destruct`: release the buffer's payload.
///
/// # Safety
/// `b` is NULL or a buffer whose payload is libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_buffer_destruct(b: *mut CDataBuffer) {
    // SAFETY: the caller's promise.
    guard_or("PMIx_Data_buffer_destruct", (), || unsafe { destruct(b) });
}

/// `PMIx_Data_buffer_release`: destruct one buffer and free it.
///
/// # Safety
/// `b` is NULL or one buffer from libc, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Data_buffer_release(b: *mut CDataBuffer) {
    // SAFETY: the caller's promise.
    guard_or("PMIx_Data_buffer_release", (), || unsafe {
        free_array(b, 1)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::c_strdup;

    #[test]
    fn created_structures_are_constructed_and_free_releases_what_they_hold() {
        let procs = PMIx_Proc_create(3);
        // SAFETY: three processes of ours.
        unsafe {
            assert!((0..3).all(|i| (*procs.add(i)).rank == Rank::UNDEF.0));
            PMIx_Proc_free(procs, 3);
        }
        assert!(PMIx_Info_create(0).is_null());
        let envars = PMIx_Envar_create(2);
        // SAFETY: two environment variables of ours, their strings libc's.
        unsafe {
            (*envars).envar = c_strdup("PATH").unwrap();
            (*envars.add(1)).value = c_strdup("/bin").unwrap();
            PMIx_Envar_free(envars, 2);
        }
        let distances = PMIx_Device_distance_create(1);
        // SAFETY: one device distance of ours.
        unsafe {
            assert_eq!((*distances).mindist, u16::MAX);
            PMIx_Device_distance_free(distances, 1);
        }
    }

    #[test]
    fn a_persistent_info_keeps_its_value_through_destruct() {
        let mut info = CInfo::zeroed();
        let text = std::ffi::CString::new("kept").unwrap();
        let key = std::ffi::CString::new("k").unwrap();
        // SAFETY: an info of this test; the string is loaded as a copy.
        unsafe {
            crate::support::PMIx_Info_load(
                crate::args::Out::new(&raw mut info),
                crate::args::Str::new(key.as_ptr()),
                crate::args::Data::new(text.as_ptr().cast()),
                DataType::STRING.0,
            );
            info.flags |= INFO_PERSISTENT;
            PMIx_Info_destruct(&mut info);
            assert_eq!(info.value.type_, DataType::STRING.0);
            info.flags = 0;
            PMIx_Info_destruct(&mut info);
            assert_eq!(info.value.type_, 0);
        }
    }

    #[test]
    fn a_data_array_of_procs_is_made_of_constructed_procs() {
        let array = PMIx_Data_array_create(2, DataType::PROC.0);
        // SAFETY: one data array of ours.
        unsafe {
            assert_eq!((*array).size, 2);
            let procs = (*array).array.cast::<CProc>();
            assert_eq!((*procs.add(1)).rank, Rank::UNDEF.0);
            PMIx_Data_array_free(array);
        }
        let coords = PMIx_Coord_create(3, 2);
        // SAFETY: two coordinates of ours.
        unsafe {
            assert_eq!((*coords.add(1)).dims, 3);
            assert_eq!(*(*coords.add(1)).coord.add(2), 0);
            PMIx_Coord_free(coords, 2);
        }
        // More coordinates than memory holds: NULL, not a crash.
        assert!(PMIx_Coord_create(3, usize::MAX / 2).is_null());
    }
}
