//! The destructors: what a C object of a data type holds is released ([`destruct_object`]),
//! whether this library or a C caller (with libc's allocator) put it there.

use std::ffi::{c_char, c_void};
use std::ptr;

use pmix::model::DataType;

use crate::boundary::free;
use crate::types::{
    CApp, CByteObject, CCoord, CDataArray, CDataBuffer, CDevice, CDeviceDistance, CDiskStats,
    CEndpoint, CEnvar, CGeometry, CInfo, CNetStats, CNodePid, CNodeStats, CPdata, CProcInfo,
    CProcStats, CQuery, CRegattr, CSourced, CValue,
};

use super::basic::{DEVICE, by_pointer, get, object_size, put, undef_value};
use super::fabric::{
    destruct_coord, destruct_device_distance, destruct_endpoint, destruct_geometry,
};
use super::hwloc::{destruct_cpuset, destruct_topology};
use super::records::{destruct_data_buffer, destruct_regattr, free_argv};
use super::stats::{
    destruct_disk_stats, destruct_net_stats, destruct_node_stats, destruct_proc_stats,
};

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

/// # Safety
/// As [`destruct_object`].
pub(super) unsafe fn destruct_app(a: &mut CApp) {
    // SAFETY: the caller's promise.
    unsafe {
        free(a.cmd);
        free_argv(a.argv);
        free_argv(a.env);
        free(a.cwd);
        free_infos(a.info, a.ninfo);
    }
    a.cmd = ptr::null_mut();
    a.argv = ptr::null_mut();
    a.env = ptr::null_mut();
    a.cwd = ptr::null_mut();
    a.info = ptr::null_mut();
    a.ninfo = 0;
}
