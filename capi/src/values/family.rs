//! Each C structure's empty form and how to release what it holds (the "support
//! functions" of draft §3.2: construct, create, destruct, free), for the helpers that
//! OpenPMIx 5.0 and 6.1 export and their headers' macros call.

use std::ffi::c_void;
use std::ptr;

use pmix::model::{DataType, Rank};

use super::basic::{DEVICE, object_size, undef_value};
use super::release::{destruct_array, destruct_object, destruct_value};
use crate::boundary::{calloc_array, free, plausible};
use crate::types::{
    CApp, CByteObject, CCoord, CDataArray, CDataBuffer, CDevice, CDeviceDistance, CDiskStats,
    CEndpoint, CEnvar, CFabric, CGeometry, CInfo, CNetStats, CNodePid, CNodeStats, CPdata, CProc,
    CProcInfo, CProcStats, CQuery, CRegattr, CResourceUnit, CSourced, CValue,
};

/// `pmix_info_t`'s flag that keeps `PMIx_Info_destruct` off its value.
pub(crate) const INFO_PERSISTENT: u32 = 0x10;
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
pub struct CTopology(CSourced);

impl Family for CTopology {
    fn empty() -> Self {
        CTopology(zeroed())
    }
    unsafe fn release(&mut self) {
        // SAFETY: the caller's promise.
        unsafe { destruct_object(DataType::TOPO, ptr::from_mut(&mut self.0).cast()) };
        *self = Self::empty();
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

impl Family for CDataArray {
    fn empty() -> Self {
        zeroed()
    }
    unsafe fn release(&mut self) {
        // SAFETY: the caller's promise.
        unsafe { destruct_array(self) };
    }
}

/// An empty `pmix_fabric_t`: no name, the index `SIZE_MAX` (none yet), no information.
pub(crate) fn empty_fabric() -> CFabric {
    CFabric {
        index: usize::MAX,
        ..zeroed()
    }
}

/// `num` empty elements of `t`, each as its type's construct leaves it; NULL (and no
/// elements) for a type whose elements this library does not know, or for none.
pub(crate) fn elements(t: DataType, num: usize) -> *mut c_void {
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

/// `number` coordinates of `dims` zeroed values each, from libc; NULL for none or when
/// memory runs out.
pub(crate) fn coords(dims: usize, number: usize) -> *mut CCoord {
    let array = create::<CCoord>(number);
    if array.is_null() {
        return array;
    }
    for i in 0..number {
        // SAFETY: `array` holds `number` coordinates.
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
}

/// One data array from libc of `n` empty elements of `t` (none for a type whose elements this
/// library does not know); NULL when memory runs out. The array itself is made first, so
/// that running out leaves nothing behind.
pub(crate) fn create_data_array(n: usize, t: DataType) -> *mut CDataArray {
    let Ok(p) = calloc_array::<CDataArray>(1) else {
        return ptr::null_mut();
    };
    let array = elements(t, n);
    let size = if array.is_null() { 0 } else { n };
    // SAFETY: `p` is one data array of ours.
    unsafe {
        p.write(CDataArray {
            type_: t.0,
            size,
            array,
        });
    }
    p
}
