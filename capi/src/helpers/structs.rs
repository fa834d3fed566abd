//! Each structure's construct, create, destruct and free (draft §3.2, the "support
//! functions" of each structure), and the load and transfer calls some of them have.
//!
//! One shape for all: `X_construct(p)` writes the empty structure (whatever `p` held is not
//! released); `X_create(n)` is `n` constructed structures from libc (NULL for none);
//! `X_destruct(p)` releases what `p` holds and leaves it empty; `X_free(p, n)` destructs `n`
//! and frees the array (also for `n == 0`). A NULL pointer is ignored. Each structure's empty
//! form and release are `crate::values`' (`Family`).

use std::ffi::c_char;
use std::ptr;

use pmix::model::DataType;

use crate::args::{Block, Data, In, InOut, Out, Owned, Str};
use crate::boundary::{c_strdup, guard_or, write_fixed};
use crate::types::{
    CApp, CByteObject, CCoord, CDataArray, CDataBuffer, CDevice, CDeviceDistance, CDiskStats,
    CEndpoint, CEnvar, CFabric, CGeometry, CInfo, CNetStats, CNodePid, CNodeStats, CPdata, CProc,
    CProcInfo, CProcStats, CQuery, CRegattr, CResourceUnit, CSourced, CValue,
};
use crate::values::{
    CTopology, Family, coords, create, create_data_array, elements, empty_fabric, write_value,
};

/// The exported calls of one family: construct, create, destruct and free, each named as
/// given (a family whose destruct came with OpenPMIx 4.2 names none).
macro_rules! family_calls {
    ($ty:ty: $construct:ident, $create:ident, $destruct:ident, $free:ident) => {
        family_calls!($ty: $construct, $create, $free);

        #[doc = concat!("`", stringify!($destruct), "`: release what `p` holds.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $destruct(p: InOut<'_, $ty>) {
            guard_or(stringify!($destruct), (), || p.destruct());
        }
    };
    ($ty:ty: $construct:ident, $create:ident, $free:ident) => {
        #[doc = concat!("`", stringify!($construct), "`: the empty structure into `p`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $construct(p: Out<'_, $ty>) {
            guard_or(stringify!($construct), (), || p.construct());
        }

        #[doc = concat!("`", stringify!($create), "`: `n` empty structures from libc, NULL for none.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $create(n: usize) -> *mut $ty {
            guard_or(stringify!($create), ptr::null_mut(), || create(n))
        }

        #[doc = concat!("`", stringify!($free), "`: destruct `n` structures and free the array.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $free(p: Owned<$ty>, n: usize) {
            guard_or(stringify!($free), (), || p.free(n));
        }
    };
}

family_calls!(CApp: PMIx_App_construct, PMIx_App_create, PMIx_App_destruct, PMIx_App_free);
family_calls!(CByteObject: PMIx_Byte_object_construct, PMIx_Byte_object_create,
    PMIx_Byte_object_destruct, PMIx_Byte_object_free);
family_calls!(CSourced: PMIx_Cpuset_construct, PMIx_Cpuset_create, PMIx_Cpuset_free);
family_calls!(CTopology: PMIx_Topology_construct, PMIx_Topology_create, PMIx_Topology_free);
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
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Coord_construct(m: Out<'_, CCoord>) {
    guard_or("PMIx_Coord_construct", (), || m.construct());
}

/// `PMIx_Coord_destruct`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Coord_destruct(m: InOut<'_, CCoord>) {
    guard_or("PMIx_Coord_destruct", (), || m.destruct());
}

/// `PMIx_Coord_create`: `number` coordinates of `dims` zeroed values each (note the order
/// of the arguments, the header's).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Coord_create(dims: usize, number: usize) -> *mut CCoord {
    guard_or("PMIx_Coord_create", ptr::null_mut(), || {
        coords(dims, number)
    })
}

/// `PMIx_Coord_free`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Coord_free(m: Owned<CCoord>, number: usize) {
    guard_or("PMIx_Coord_free", (), || m.free(number));
}

/// `PMIx_Fabric_construct`: no name, the index `SIZE_MAX` (none yet), no information.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Fabric_construct(p: Out<'_, CFabric>) {
    guard_or("PMIx_Fabric_construct", (), || {
        p.set(empty_fabric());
    });
}

/// `n` empty infos from libc and their count (none when there is no memory).
fn new_infos(n: usize) -> (*mut CInfo, usize) {
    let infos = create::<CInfo>(n);
    (infos, if infos.is_null() { 0 } else { n })
}

/// `PMIx_App_info_create`: `n` empty infos as the application's.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_App_info_create(p: InOut<'_, CApp>, n: usize) {
    guard_or("PMIx_App_info_create", (), || {
        if let Ok(app) = p.get() {
            (app.info, app.ninfo) = new_infos(n);
        }
    });
}

/// `PMIx_App_release`: destruct one application and free it.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_App_release(p: Owned<CApp>) {
    guard_or("PMIx_App_release", (), || p.free(1));
}

/// `PMIx_Query_qualifiers_create`: `n` empty infos as the query's qualifiers.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Query_qualifiers_create(p: InOut<'_, CQuery>, n: usize) {
    guard_or("PMIx_Query_qualifiers_create", (), || {
        if let Ok(q) = p.get() {
            (q.qualifiers, q.nqual) = new_infos(n);
        }
    });
}

/// `PMIx_Query_release`: destruct one query and free it.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Query_release(p: Owned<CQuery>) {
    guard_or("PMIx_Query_release", (), || p.free(1));
}

/// `PMIx_Proc_load`: `PMIx_Proc_construct` and then `PMIx_Load_procid`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Proc_load(p: Out<'_, CProc>, nspace: Str<'_>, rank: u32) {
    guard_or("PMIx_Proc_load", (), || {
        let mut proc = CProc::empty();
        write_fixed(&mut proc.nspace, nspace.bytes_within(255));
        proc.rank = rank;
        p.set(proc);
    });
}

/// `PMIx_Byte_object_load`: `d` and `sz` into `b`, which takes `d` over (no copy).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Byte_object_load(b: Out<'_, CByteObject>, d: Block, sz: usize) {
    guard_or("PMIx_Byte_object_load", (), || {
        b.set(CByteObject {
            bytes: d.into_raw(),
            size: sz,
        });
    });
}

/// A copy of the string from libc, byte for byte, NULL for NULL.
fn dup(s: Str<'_>) -> *mut c_char {
    match s.bytes() {
        Some(bytes) => c_strdup(bytes).unwrap_or(ptr::null_mut()),
        None => ptr::null_mut(),
    }
}

/// `PMIx_Envar_load`: copies of `var` and `value`, and `separator`, into `e` (what `e` held
/// is not released).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Envar_load(
    e: Out<'_, CEnvar>,
    var: Str<'_>,
    value: Str<'_>,
    separator: c_char,
) {
    guard_or("PMIx_Envar_load", (), || {
        if e.is_null() {
            return;
        }
        e.set(CEnvar {
            envar: dup(var),
            value: dup(value),
            separator,
        });
    });
}

/// `PMIx_Pdata_load`: `p`, `key` and a copy of `data` (as `PMIx_Value_load` takes it)
/// into `dest`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Pdata_load(
    dest: Out<'_, CPdata>,
    p: In<'_, CProc>,
    key: Str<'_>,
    data: Data<'_>,
    type_: u16,
) {
    guard_or("PMIx_Pdata_load", (), || {
        if dest.is_null() {
            return;
        }
        let mut loaded = CPdata::zeroed();
        if let Some(p) = p.get() {
            loaded.proc = *p;
        }
        write_fixed(&mut loaded.key, key.bytes_within(511));
        // As `PMIx_Value_load` loads it; a value that cannot be read stays undefined.
        if let Ok(v) = data.value(DataType(type_)) {
            let _ = write_value(&v, &mut loaded.value);
        }
        dest.set(loaded);
    });
}

/// `PMIx_Pdata_xfer`: a deep copy of `src` into `dest`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Pdata_xfer(dest: Out<'_, CPdata>, src: In<'_, CPdata>) {
    guard_or("PMIx_Pdata_xfer", (), || {
        let Some(from) = src.get() else {
            return;
        };
        if dest.is_null() {
            return;
        }
        let mut copy = CPdata {
            proc: from.proc,
            key: from.key,
            value: CValue::empty(),
        };
        // As `PMIx_Value_xfer` copies it; a value that cannot be read stays undefined.
        if let Ok(v) = src.value() {
            let _ = write_value(&v, &mut copy.value);
        }
        dest.set(copy);
    });
}

/// `PMIx_Regattr_load`: copies of `name`, `key` and `description` (as its first line), and
/// `type_`, into `info` (what it held is not released).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Regattr_load(
    info: InOut<'_, CRegattr>,
    name: Str<'_>,
    key: Str<'_>,
    type_: u16,
    description: Str<'_>,
) {
    guard_or("PMIx_Regattr_load", (), || {
        let mut info = info;
        if let Some(line) = description.bytes() {
            let _ = info.append_description(line);
        }
        let Ok(r) = info.get() else {
            return;
        };
        if !name.is_null() {
            r.name = dup(name);
        }
        if !key.is_null() {
            write_fixed(&mut r.string, key.bytes_within(511));
        }
        r.type_ = type_;
    });
}

/// `PMIx_Regattr_xfer`: a deep copy of `src` into `dest`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Regattr_xfer(dest: Out<'_, CRegattr>, src: In<'_, CRegattr>) {
    guard_or("PMIx_Regattr_xfer", (), || {
        if dest.is_null() {
            return;
        }
        if let Ok(copy) = src.copy() {
            dest.set(copy);
        }
    });
}

/// `PMIx_Data_array_init`: an empty array of `type_`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_array_init(p: Out<'_, CDataArray>, type_: u16) {
    guard_or("PMIx_Data_array_init", (), || {
        p.set(CDataArray {
            type_,
            size: 0,
            array: ptr::null_mut(),
        });
    });
}

/// A data array of `num` empty elements of `type_` (none for a type whose elements this
/// library does not know).
fn data_array(num: usize, type_: u16) -> CDataArray {
    let array = elements(DataType(type_), num);
    CDataArray {
        type_,
        size: if array.is_null() { 0 } else { num },
        array,
    }
}

/// `PMIx_Data_array_construct`: `num` empty elements of `type_` in `p`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_array_construct(p: Out<'_, CDataArray>, num: usize, type_: u16) {
    guard_or("PMIx_Data_array_construct", (), || {
        if !p.is_null() {
            p.set(data_array(num, type_));
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
        create_data_array(n, DataType(type_))
    })
}

/// `PMIx_Data_array_free`: destruct one data array and free it.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_array_free(p: Owned<CDataArray>) {
    guard_or("PMIx_Data_array_free", (), || p.free(1));
}

/// `PMIx_Data_buffer_construct`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_buffer_construct(b: Out<'_, CDataBuffer>) {
    guard_or("PMIx_Data_buffer_construct", (), || b.construct());
}

/// `PMIx_Data_buffer_create`: one empty buffer from libc.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_buffer_create() -> *mut CDataBuffer {
    guard_or("PMIx_Data_buffer_create", ptr::null_mut(), || create(1))
}

/// `PMIx_Data_buffer_destruct`: release the buffer's payload.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_buffer_destruct(b: InOut<'_, CDataBuffer>) {
    guard_or("PMIx_Data_buffer_destruct", (), || b.destruct());
}

/// `PMIx_Data_buffer_release`: destruct one buffer and free it.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Data_buffer_release(b: Owned<CDataBuffer>) {
    guard_or("PMIx_Data_buffer_release", (), || b.free(1));
}

#[cfg(test)]
mod tests {
    use pmix::model::Rank;

    use super::*;
    use crate::boundary::c_strdup;
    use crate::values::INFO_PERSISTENT;

    #[test]
    fn created_structures_are_constructed_and_free_releases_what_they_hold() {
        let procs = PMIx_Proc_create(3);
        // SAFETY: three processes of ours.
        unsafe {
            assert!((0..3).all(|i| (*procs.add(i)).rank == Rank::UNDEF.0));
            PMIx_Proc_free(Owned::new(procs), 3);
        }
        assert!(PMIx_Info_create(0).is_null());
        let envars = PMIx_Envar_create(2);
        // SAFETY: two environment variables of ours, their strings libc's.
        unsafe {
            (*envars).envar = c_strdup("PATH").unwrap();
            (*envars.add(1)).value = c_strdup("/bin").unwrap();
            PMIx_Envar_free(Owned::new(envars), 2);
        }
        let distances = PMIx_Device_distance_create(1);
        // SAFETY: one device distance of ours.
        unsafe {
            assert_eq!((*distances).mindist, u16::MAX);
            PMIx_Device_distance_free(Owned::new(distances), 1);
        }
    }

    #[test]
    fn a_loaded_envar_holds_its_strings_byte_for_byte() {
        let mut e = CEnvar {
            envar: ptr::null_mut(),
            value: ptr::null_mut(),
            separator: 0,
        };
        let var = std::ffi::CString::new(b"CAF\xc9".to_vec()).unwrap();
        let value = std::ffi::CString::new(b"caf\xe9:\xff".to_vec()).unwrap();
        // SAFETY: an envar of this test; the strings are NUL-terminated and copied.
        unsafe {
            PMIx_Envar_load(
                Out::new(&mut e),
                Str::new(var.as_ptr()),
                Str::new(value.as_ptr()),
                b':' as c_char,
            );
            assert_eq!(std::ffi::CStr::from_ptr(e.envar).to_bytes(), var.as_bytes());
            assert_eq!(
                std::ffi::CStr::from_ptr(e.value).to_bytes(),
                value.as_bytes()
            );
            PMIx_Envar_destruct(InOut::new(&mut e));
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
            PMIx_Info_destruct(InOut::new(&raw mut info));
            assert_eq!(info.value.type_, DataType::STRING.0);
            info.flags = 0;
            PMIx_Info_destruct(InOut::new(&raw mut info));
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
            PMIx_Data_array_free(Owned::new(array));
        }
        let coords = PMIx_Coord_create(3, 2);
        // SAFETY: two coordinates of ours.
        unsafe {
            assert_eq!((*coords.add(1)).dims, 3);
            assert_eq!(*(*coords.add(1)).coord.add(2), 0);
            PMIx_Coord_free(Owned::new(coords), 2);
        }
        // More coordinates than memory holds: NULL, not a crash.
        assert!(PMIx_Coord_create(3, usize::MAX / 2).is_null());
    }
}
