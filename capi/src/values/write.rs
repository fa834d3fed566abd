//! The model written as C values, every block from libc's allocator: an object of a data
//! type at an address ([`write_object`]), a `pmix_value_t`, infos, applications; and deep
//! copies of C objects ([`copy_object`]). What a write leaves half done is released.

use std::ffi::{c_char, c_void};
use std::ptr;

use pmix::model::{App, DataArray, DataType, Info, Status, Value};

use crate::boundary::{c_strdup, calloc_array, free, write_fixed};
use crate::types::{
    CApp, CDataArray, CEnvar, CInfo, CPdata, CProcInfo, CQuery, CSourced, CTimeval, CValue,
    CValueData,
};

use super::basic::{
    by_pointer, c_byte_object, c_proc, empty_info, get, object_size, opt_strdup, put, undef_value,
};
use super::fabric::{c_coord, c_device_distance, c_endpoint, c_geometry};
use super::hwloc::{c_cpuset, c_topology, copy_cpuset, copy_topology};
use super::read::{read_info, read_object};
use super::records::{c_data_buffer, c_regattr, free_argv, write_argv};
use super::release::{destruct_app, destruct_object, destruct_value, free_infos};
use super::stats::{c_disk_stats, c_net_stats, c_node_stats, c_proc_stats};

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
pub(super) unsafe fn copy_sourced_object(
    t: DataType,
    src: *const c_void,
) -> Result<*mut c_void, Status> {
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

/// Write `v` into the value `out`. Its old contents are not released (destruct it first):
/// what it pointed to would leak, which is safe.
pub(crate) fn write_value(v: &Value, out: &mut CValue) -> Result<(), Status> {
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
pub(super) fn write_info(info: &Info, out: &mut CInfo) -> Result<(), Status> {
    write_fixed(&mut out.key, info.key.as_str());
    out.flags = info.flags.0;
    write_value(&info.value, &mut out.value)
}

/// `infos` as a C array from libc's allocator, and its length. The last element carries
/// `PMIX_INFO_ARRAY_END`, as `PMIX_INFO_CREATE` sets it.
pub(crate) fn write_infos(infos: &[Info]) -> Result<(*mut CInfo, usize), Status> {
    let array: *mut CInfo = calloc_array(infos.len())?;
    for (i, info) in infos.iter().enumerate() {
        // SAFETY: `array` has room for `infos.len()` zeroed infos; element `i` is in it.
        let slot = unsafe { &mut *array.add(i) };
        // A zeroed info holds no pointer; on failure the earlier ones are released.
        if let Err(s) = write_info(info, slot) {
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

pub(super) fn write_array(a: &DataArray) -> Result<CDataArray, Status> {
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

/// # Safety
/// None; `unsafe` for the blocks it hands out.
pub(super) unsafe fn write_app(app: &App) -> Result<CApp, Status> {
    let mut c = CApp {
        cmd: ptr::null_mut(),
        argv: ptr::null_mut(),
        env: ptr::null_mut(),
        cwd: ptr::null_mut(),
        maxprocs: app.maxprocs,
        info: ptr::null_mut(),
        ninfo: 0,
    };
    let filled = (|| {
        c.cmd = opt_strdup(app.cmd.as_ref())?;
        c.argv = write_argv(&app.argv)?;
        c.env = write_argv(&app.env)?;
        c.cwd = opt_strdup(app.cwd.as_ref())?;
        (c.info, c.ninfo) = write_infos(&app.info)?;
        Ok(())
    })();
    if let Err(s) = filled {
        // SAFETY: every pointer of `c` is NULL or a block written above.
        unsafe { destruct_app(&mut c) };
        return Err(s);
    }
    Ok(c)
}

/// An info in C form this library wrote (its blocks from libc's allocator), released when
/// dropped: an info list's.
pub(crate) struct OwnedInfo(CInfo);

impl OwnedInfo {
    /// An info of `key`, `flags` and a copy of `value`.
    pub(crate) fn new(key: [c_char; 512], flags: u32, value: &Value) -> Result<Self, Status> {
        let mut info = Self(empty_info());
        info.0.key = key;
        info.0.flags = flags;
        write_value(value, &mut info.0.value)?;
        Ok(info)
    }

    pub(crate) fn key(&self) -> &[c_char] {
        &self.0.key
    }

    /// The info in the model's form.
    pub(crate) fn info(&self) -> Result<Info, Status> {
        // SAFETY: written by this library.
        unsafe { read_info(&self.0) }
    }

    /// Replace the value with a copy of `value`.
    pub(crate) fn set_value(&mut self, value: &Value) -> Result<(), Status> {
        let mut fresh = undef_value();
        write_value(value, &mut fresh)?;
        // SAFETY: the old value is this library's, released once.
        unsafe { destruct_value(&mut self.0.value) };
        self.0.value = fresh;
        Ok(())
    }

    /// The info's address, which the owner keeps still while it is handed out.
    pub(crate) fn as_ptr(&self) -> *const CInfo {
        &raw const self.0
    }

    /// As [`as_ptr`](Self::as_ptr), for a caller that may change it.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut CInfo {
        &raw mut self.0
    }
}

impl Drop for OwnedInfo {
    fn drop(&mut self) {
        // SAFETY: the value was written by this library from libc's memory (a caller handed
        // the info may have changed it, as the C API allows: then it is the caller's
        // value, its blocks libc's as the header macros make them).
        unsafe { destruct_value(&mut self.0.value) };
    }
}
