//! Every type this library carries crosses into a C value and back unchanged, in a value's
//! union, behind its pointer and as the elements of a data array; what is written is
//! released by the destructors (checked for leaks under valgrind by the interop tests).
//! Cpusets and topologies cross as hwloc objects: a bitmap and a topology hwloc reads.
//! Fabric coordinates, geometries, endpoints and device distances cross as their structs,
//! and so do statistics and data buffers.

#![allow(clippy::unwrap_used)] // a test fails loudly

use hwlocality_sys as hwloc;
use pmix::model::topology::cpuset_list;
use pmix::model::{
    App, Buffer, ByteObject, Coord, CoordView, Cpuset, DataArray, DataRange, DataType,
    DeviceDistance, DeviceType, DiskStats, Endpoint, Envar, Geometry, Info, InfoDirectives, Key,
    NetStats, NodeStats, Nspace, PData, Pointer, Proc, ProcInfo, ProcState, ProcStats, Query, Rank,
    RegAttr, Scope, Status, Time, Timeval, Topology, Value, attr,
};

use std::ffi::{c_char, c_void};
use std::ptr;

use super::records::empty_data_buffer;
use super::stats::c_node_stats;
use super::*;
use crate::boundary::{free, read_cstr, read_fixed, slice_of};
use crate::test_fixtures::ONE_PU;
use crate::types::{
    CByteObject, CCoord, CDataArray, CDataBuffer, CDeviceDistance, CDiskStats, CEndpoint,
    CGeometry, CNetStats, CNodeStats, CProcStats, CRegattr, CSourced, CValue,
};

fn proc(rank: u32) -> Proc {
    Proc::try_new("job-1", rank).unwrap()
}

fn samples() -> Vec<Value> {
    let info = Info::new(attr::JOB_SIZE, 4u32);
    vec![
        Value::Bool(true),
        Value::Byte(7),
        Value::String(Some("a string".into())),
        Value::String(None),
        Value::Size(1 << 40),
        Value::Pid(4242),
        Value::Int(-3),
        Value::Int8(-8),
        Value::Int16(-16),
        Value::Int32(-32),
        Value::Int64(-64),
        Value::Uint(3),
        Value::Uint8(8),
        Value::Uint16(16),
        Value::Uint32(32),
        Value::Uint64(u64::MAX),
        Value::Float(1.5),
        Value::Double(-2.25),
        Value::Timeval(Timeval { sec: 5, usec: 6 }),
        Value::Time(Time(1_700_000_000)),
        Value::Status(Status::ERR_NOT_FOUND),
        Value::Proc(proc(3)),
        Value::ByteObject(ByteObject(vec![0, 1, 2, 255])),
        Value::ByteObject(ByteObject(Vec::new())),
        Value::Pointer(Pointer(0x1000)),
        Value::Scope(Scope::GLOBAL),
        Value::DataRange(DataRange::SESSION),
        Value::InfoDirectives(InfoDirectives(0x1)),
        Value::DataType(DataType::UINT32),
        Value::ProcState(ProcState(5)),
        Value::ProcInfo(Box::new(ProcInfo {
            proc: proc(1),
            hostname: Some("node1".into()),
            executable_name: None,
            pid: 99,
            exit_code: 0,
            state: ProcState(5),
        })),
        Value::Rank(Rank::WILDCARD),
        Value::Envar(Box::new(Envar {
            envar: Some("PATH".into()),
            value: Some("/bin".into()),
            separator: b':',
        })),
        Value::ProcNspace(Nspace::new("job-2").unwrap()),
        Value::StorMedium(pmix::model::StorageMedium(4)),
        Value::StorAccessType(pmix::model::StorageAccessType(2)),
        Value::DataArray(Box::new(DataArray::of_infos(vec![info.clone(), info]))),
        Value::DataArray(Box::new(DataArray::of_procs(vec![proc(0), proc(1)]))),
        Value::DataArray(Box::new(
            DataArray::new(
                DataType::STRING,
                vec![
                    Value::String(Some("x".into())),
                    Value::String(Some("y".into())),
                ],
            )
            .unwrap(),
        )),
        Value::DataArray(Box::new(
            DataArray::new(DataType::UINT32, vec![Value::Uint32(1), Value::Uint32(2)]).unwrap(),
        )),
    ]
}

#[test]
fn each_value_crosses_a_c_value_and_back() {
    for v in samples() {
        let mut c = undef_value();
        // SAFETY: `c` is a fresh value of this test, destructed once.
        unsafe {
            write_value(&v, &mut c).unwrap();
            assert_eq!(c.type_, v.data_type().0, "{v:?}");
            assert_eq!(read_value(&c).unwrap(), v);
            destruct_value(&mut c);
        }
        assert_eq!(c.type_, DataType::UNDEF.0);
    }
}

#[test]
fn structs_only_arrays_hold_cross_as_array_elements() {
    let elements = vec![
        Value::App(Box::new(App {
            cmd: Some("hostname".into()),
            argv: vec![Some("hostname".into()), Some("-s".into())],
            env: vec![Some("A=1".into())],
            cwd: None,
            maxprocs: 2,
            info: vec![Info::new(attr::JOB_SIZE, 2u32)],
        })),
        Value::App(Box::default()),
    ];
    let apps = Value::DataArray(Box::new(DataArray::new(DataType::APP, elements).unwrap()));
    let query = Value::DataArray(Box::new(
        DataArray::new(
            DataType::QUERY,
            vec![Value::Query(Box::new(Query {
                keys: vec![Some("pmix.qry.ns".into())],
                qualifiers: vec![Info::new(attr::NSPACE, "job".to_owned())],
            }))],
        )
        .unwrap(),
    ));
    let pdata = Value::DataArray(Box::new(
        DataArray::new(
            DataType::PDATA,
            vec![Value::PData(Box::new(PData {
                proc: proc(0),
                key: Key::new("k").unwrap(),
                value: Value::Uint8(1),
            }))],
        )
        .unwrap(),
    ));
    let values = Value::DataArray(Box::new(
        DataArray::new(
            DataType::VALUE,
            vec![Value::Value(Box::new(Value::String(Some("v".into()))))],
        )
        .unwrap(),
    ));
    for v in [apps, query, pdata, values] {
        let mut c = undef_value();
        // SAFETY: as above.
        unsafe {
            write_value(&v, &mut c).unwrap();
            assert_eq!(read_value(&c).unwrap(), v);
            destruct_value(&mut c);
        }
    }
}

#[test]
fn infos_are_written_with_the_array_end_flag_on_the_last() {
    let infos = vec![
        Info::new(attr::JOB_SIZE, 2u32),
        Info::new(attr::NSPACE, "job".to_owned()),
    ];
    let (array, n) = write_infos(&infos).unwrap();
    // SAFETY: `array` holds `n` infos of ours, released once.
    unsafe {
        assert_eq!(read_infos(array, n).unwrap(), infos);
        assert_eq!((*array).flags & crate::types::INFO_ARRAY_END, 0);
        assert_ne!((*array.add(1)).flags & crate::types::INFO_ARRAY_END, 0);
        free_infos(array, n);
    }
}

#[test]
fn malformed_c_values_are_refused_not_read() {
    // A pointer type with a NULL pointer, an unknown type, a deprecated type this library
    // does not carry, an array whose elements are missing and one whose count no array can
    // have.
    let mut proc_null = undef_value();
    proc_null.type_ = DataType::PROC.0;
    let mut unknown = undef_value();
    unknown.type_ = 4000;
    let mut buffer = undef_value();
    buffer.type_ = DataType::BUFFER.0;
    let mut array = CDataArray {
        type_: DataType::UINT32.0,
        size: 3,
        array: ptr::null_mut(),
    };
    let mut holey = undef_value();
    holey.type_ = DataType::DATA_ARRAY.0;
    holey.data.darray = &raw mut array;
    let mut one = 7u32;
    let mut endless = CDataArray {
        type_: DataType::UINT32.0,
        size: 1 << 40,
        array: (&raw mut one).cast(),
    };
    let mut miscounted = undef_value();
    miscounted.type_ = DataType::DATA_ARRAY.0;
    miscounted.data.darray = &raw mut endless;
    // SAFETY: each value is well formed as C memory; only its contents are wrong.
    unsafe {
        assert_eq!(read_value(&miscounted), Err(Status::ERR_BAD_PARAM));
        assert_eq!(read_value(&proc_null), Err(Status::ERR_BAD_PARAM));
        assert_eq!(read_value(&unknown), Err(Status::ERR_NOT_SUPPORTED));
        assert_eq!(read_value(&buffer), Err(Status::ERR_NOT_SUPPORTED));
        assert_eq!(read_value(&holey), Err(Status::ERR_BAD_PARAM));
    }
}

fn cpuset(list: &str) -> Cpuset {
    Cpuset {
        source: Some("hwloc".into()),
        bitmap: Some(list.into()),
    }
}

fn topology(xml: &str) -> Topology {
    Topology {
        source: Some("hwloc".into()),
        topology: Some(xml.into()),
    }
}

/// The `pmix_cpuset_t` or `pmix_topology_t` a value of those types points to.
///
/// # Safety
/// `c` holds a cpuset or a topology.
unsafe fn sourced(c: &CValue) -> CSourced {
    // SAFETY: the caller's promise: the union holds a pointer to one.
    unsafe { *c.data.ptr.cast::<CSourced>() }
}

#[test]
fn a_cpuset_crosses_as_an_hwloc_bitmap() {
    for list in ["0-3,8", "5", ""] {
        let v = Value::ProcCpuset(Box::new(cpuset(list)));
        let mut c = undef_value();
        // SAFETY: a fresh value of this test, destructed once.
        unsafe {
            write_value(&v, &mut c).unwrap();
            assert_eq!(c.type_, DataType::PROC_CPUSET.0);
            let held = sourced(&c);
            assert_eq!(read_cstr(held.source).as_deref(), Some("hwloc"));
            let weight = hwloc::hwloc_bitmap_weight(held.object.cast_const().cast());
            let expected = cpuset_list(&cpuset(list))
                .unwrap()
                .ranges()
                .iter()
                .map(|(a, b)| b - a + 1)
                .sum::<u32>();
            assert_eq!(u32::try_from(weight).unwrap(), expected, "{list}");
            assert_eq!(read_value(&c).unwrap(), v);
            destruct_value(&mut c);
        }
        assert_eq!(c.type_, DataType::UNDEF.0);
    }
}

#[test]
fn a_topology_crosses_as_an_hwloc_topology() {
    let v = Value::Topo(Box::new(topology(ONE_PU)));
    let mut c = undef_value();
    // SAFETY: fresh values of this test, each destructed once.
    unsafe {
        write_value(&v, &mut c).unwrap();
        assert_eq!(c.type_, DataType::TOPO.0);
        let held = sourced(&c);
        let topo: hwloc::hwloc_const_topology_t = held.object.cast_const().cast();
        let pus = hwloc::hwloc_get_nbobjs_by_depth(
            topo,
            hwloc::hwloc_get_type_depth(topo, hwloc::HWLOC_OBJ_PU),
        );
        assert_eq!(pus, 1);
        // hwloc exports the topology in its own words; read again, they stay the same.
        let Value::Topo(exported) = read_value(&c).unwrap() else {
            panic!("not a topology");
        };
        assert_eq!(exported.source.as_deref(), Some("hwloc"));
        assert!(
            exported
                .topology
                .as_deref()
                .unwrap()
                .contains(r#"type="PU""#)
        );
        let mut again = undef_value();
        write_value(&Value::Topo(exported.clone()), &mut again).unwrap();
        assert_eq!(read_value(&again).unwrap(), Value::Topo(exported));
        destruct_value(&mut again);
        destruct_value(&mut c);
    }
}

#[test]
fn cpusets_and_topologies_cross_without_an_object_and_in_arrays() {
    let empty_cpuset = Value::ProcCpuset(Box::default());
    let empty_topology = Value::Topo(Box::default());
    let cpusets = Value::DataArray(Box::new(
        DataArray::new(
            DataType::PROC_CPUSET,
            vec![
                Value::ProcCpuset(Box::new(cpuset("0-1"))),
                Value::ProcCpuset(Box::new(cpuset("2,4-5"))),
            ],
        )
        .unwrap(),
    ));
    for v in [empty_cpuset, empty_topology, cpusets] {
        let mut c = undef_value();
        // SAFETY: a fresh value of this test, destructed once.
        unsafe {
            write_value(&v, &mut c).unwrap();
            assert_eq!(read_value(&c).unwrap(), v);
            destruct_value(&mut c);
        }
    }
}

#[test]
fn a_copy_duplicates_the_hwloc_object() {
    for v in [
        Value::ProcCpuset(Box::new(cpuset("1-2"))),
        Value::Topo(Box::new(topology(ONE_PU))),
    ] {
        let t = v.data_type();
        let mut c = undef_value();
        // SAFETY: fresh objects of this test: the copy is destructed and freed once, the
        // value destructed once.
        unsafe {
            write_value(&v, &mut c).unwrap();
            let copy = copy_object(t, c.data.ptr).unwrap();
            let (held, copied) = (sourced(&c), *copy.cast::<CSourced>());
            assert_ne!(copied.object, held.object);
            assert_ne!(copied.source, held.source);
            assert_eq!(read_object(t, copy).unwrap(), read_value(&c).unwrap());
            destruct_object(t, copy);
            let released = *copy.cast::<CSourced>();
            assert!(released.source.is_null() && released.object.is_null());
            free(copy);
            destruct_value(&mut c);
        }
    }
}

#[test]
fn only_hwloc_objects_are_read() {
    // A bitmap from a source this library does not know, a source with no object (carried
    // as it is), and a topology never loaded (hwloc refuses to export it).
    let mut other = std::ffi::CString::new("other")
        .unwrap()
        .into_bytes_with_nul();
    let mut object = 0u64;
    let foreign = CSourced {
        source: other.as_mut_ptr().cast(),
        object: (&raw mut object).cast(),
    };
    let bare = CSourced {
        source: other.as_mut_ptr().cast(),
        object: ptr::null_mut(),
    };
    // SAFETY: C objects of this test; the topology is destroyed once.
    unsafe {
        assert_eq!(read_cpuset(&foreign), Err(Status::ERR_NOT_SUPPORTED));
        assert_eq!(read_topology(&foreign), Err(Status::ERR_NOT_SUPPORTED));
        assert_eq!(
            read_cpuset(&bare),
            Ok(Cpuset {
                source: Some("other".into()),
                bitmap: None
            })
        );
        let mut unloaded: hwloc::hwloc_topology_t = ptr::null_mut();
        assert_eq!(hwloc::hwloc_topology_init(&mut unloaded), 0);
        let never_loaded = CSourced {
            source: ptr::null_mut(),
            object: unloaded.cast(),
        };
        assert_eq!(read_topology(&never_loaded), Err(Status::ERROR));
        hwloc::hwloc_topology_destroy(unloaded);
    }
    // The model's side: a bitmap or a description of another source, a list that is not one.
    let foreign_bitmap = Cpuset {
        source: Some("other".into()),
        bitmap: Some("0".into()),
    };
    let foreign_xml = Topology {
        source: Some("other".into()),
        topology: Some(ONE_PU.into()),
    };
    assert_eq!(
        c_cpuset(&foreign_bitmap).err(),
        Some(Status::ERR_NOT_SUPPORTED)
    );
    assert_eq!(
        c_topology(&foreign_xml).err(),
        Some(Status::ERR_NOT_SUPPORTED)
    );
    assert_eq!(c_cpuset(&cpuset("3-x")).err(), Some(Status::ERR_BAD_PARAM));
    assert_eq!(c_topology(&topology("<not xml")).err(), Some(Status::ERROR));
}

fn coord(view: CoordView, values: &[u32]) -> Coord {
    Coord {
        view,
        coord: values.to_vec(),
    }
}

fn geometry() -> Geometry {
    Geometry {
        fabric: 3,
        uuid: Some("fab-uuid".into()),
        osname: Some("mlx5_0".into()),
        coordinates: vec![
            coord(CoordView::LOGICAL_VIEW, &[1, 2, 3]),
            coord(CoordView::PHYSICAL_VIEW, &[]),
        ],
    }
}

fn device_distance(osname: &str) -> DeviceDistance {
    DeviceDistance {
        uuid: Some(format!("uuid-{osname}")),
        osname: Some(osname.into()),
        device_type: DeviceType::NETWORK,
        mindist: 2,
        maxdist: 7,
    }
}

fn endpoint() -> Endpoint {
    Endpoint {
        uuid: Some("ep-uuid".into()),
        osname: None,
        endpt: ByteObject(vec![9, 0, 8]),
    }
}

#[test]
fn fabric_structs_cross_in_values_and_arrays() {
    let values = vec![
        Value::Coord(Box::new(coord(CoordView::LOGICAL_VIEW, &[4, 5]))),
        Value::Coord(Box::default()),
        Value::Geometry(Box::new(geometry())),
        Value::Geometry(Box::default()),
        Value::DeviceDist(Box::new(device_distance("eth0"))),
        Value::DeviceDist(Box::default()),
        Value::Endpoint(Box::new(endpoint())),
        Value::Endpoint(Box::default()),
        Value::DataArray(Box::new(
            DataArray::new(
                DataType::DEVICE_DIST,
                vec![
                    Value::DeviceDist(Box::new(device_distance("eth0"))),
                    Value::DeviceDist(Box::new(device_distance("ib0"))),
                ],
            )
            .unwrap(),
        )),
        Value::DataArray(Box::new(
            DataArray::new(
                DataType::GEOMETRY,
                vec![
                    Value::Geometry(Box::new(geometry())),
                    Value::Geometry(Box::default()),
                ],
            )
            .unwrap(),
        )),
        Value::DataArray(Box::new(
            DataArray::new(
                DataType::ENDPOINT,
                vec![Value::Endpoint(Box::new(endpoint()))],
            )
            .unwrap(),
        )),
        Value::DataArray(Box::new(
            DataArray::new(
                DataType::COORD,
                vec![Value::Coord(Box::new(coord(
                    CoordView::PHYSICAL_VIEW,
                    &[0],
                )))],
            )
            .unwrap(),
        )),
    ];
    for v in values {
        let mut c = undef_value();
        // SAFETY: a fresh value of this test, destructed once.
        unsafe {
            write_value(&v, &mut c).unwrap();
            assert_eq!(c.type_, v.data_type().0, "{v:?}");
            assert!(!c.data.ptr.is_null(), "{v:?}");
            assert_eq!(read_value(&c).unwrap(), v);
            destruct_value(&mut c);
        }
        assert_eq!(c.type_, DataType::UNDEF.0);
    }
}

#[test]
fn fabric_structs_are_laid_out_as_c_reads_them() {
    let mut c = undef_value();
    // SAFETY: fresh values of this test, each destructed once; the structs read are the
    // ones their types say.
    unsafe {
        write_value(&Value::Geometry(Box::new(geometry())), &mut c).unwrap();
        let g = *c.data.geometry;
        assert_eq!(g.fabric, 3);
        assert_eq!(read_cstr(g.osname).as_deref(), Some("mlx5_0"));
        assert_eq!(g.ncoords, 2);
        let (first, second) = (*g.coordinates, *g.coordinates.add(1));
        assert_eq!(first.view, CoordView::LOGICAL_VIEW.0);
        assert_eq!(
            std::slice::from_raw_parts(first.coord, first.dims),
            [1, 2, 3]
        );
        assert!(second.coord.is_null() && second.dims == 0);
        destruct_value(&mut c);

        write_value(&Value::DeviceDist(Box::new(device_distance("ib0"))), &mut c).unwrap();
        let d = *c.data.devdist;
        assert_eq!(read_cstr(d.uuid).as_deref(), Some("uuid-ib0"));
        assert_eq!(
            (d.type_, d.mindist, d.maxdist),
            (DeviceType::NETWORK.0, 2, 7)
        );
        destruct_value(&mut c);

        write_value(&Value::Endpoint(Box::new(endpoint())), &mut c).unwrap();
        let e = *c.data.endpoint;
        assert!(e.osname.is_null());
        assert_eq!(
            super::basic::read_bytes(&e.endpt).unwrap(),
            ByteObject(vec![9, 0, 8])
        );
        destruct_value(&mut c);
    }
}

#[test]
fn a_copy_of_a_fabric_struct_is_deep_and_its_destruct_releases_it() {
    for v in [
        Value::Geometry(Box::new(geometry())),
        Value::DeviceDist(Box::new(device_distance("eth1"))),
        Value::Endpoint(Box::new(endpoint())),
        Value::Coord(Box::new(coord(CoordView::LOGICAL_VIEW, &[7]))),
    ] {
        let t = v.data_type();
        let mut c = undef_value();
        // SAFETY: fresh objects of this test: the copy is destructed and freed once, the
        // value destructed once.
        unsafe {
            write_value(&v, &mut c).unwrap();
            let copy = copy_object(t, c.data.ptr).unwrap();
            assert_ne!(copy, c.data.ptr);
            assert_eq!(read_object(t, copy).unwrap(), v);
            destruct_object(t, copy);
            // Everything the copy held is released and its pointers cleared.
            match t {
                DataType::GEOMETRY => {
                    let g = *copy.cast::<CGeometry>();
                    assert!(g.uuid.is_null() && g.osname.is_null() && g.coordinates.is_null());
                    assert_eq!(g.ncoords, 0);
                }
                DataType::DEVICE_DIST => {
                    let d = *copy.cast::<CDeviceDistance>();
                    assert!(d.uuid.is_null() && d.osname.is_null());
                }
                DataType::ENDPOINT => {
                    let e = *copy.cast::<CEndpoint>();
                    assert!(e.uuid.is_null() && e.endpt.bytes.is_null() && e.endpt.size == 0);
                }
                _ => {
                    let k = *copy.cast::<CCoord>();
                    assert!(k.coord.is_null() && k.dims == 0);
                }
            }
            free(copy);
            // The original is untouched by the copy's release.
            assert_eq!(read_value(&c).unwrap(), v);
            destruct_value(&mut c);
        }
    }
}

#[test]
fn malformed_fabric_structs_are_refused_not_read() {
    // Counts without their arrays, at each level, and a NULL struct behind a value.
    let missing_values = CCoord {
        view: 1,
        coord: ptr::null_mut(),
        dims: 3,
    };
    let mut holey = [missing_values];
    let missing_coordinates = CGeometry {
        fabric: 0,
        uuid: ptr::null_mut(),
        osname: ptr::null_mut(),
        coordinates: ptr::null_mut(),
        ncoords: 2,
    };
    let holey_coordinate = CGeometry {
        coordinates: holey.as_mut_ptr(),
        ncoords: 1,
        ..missing_coordinates
    };
    let missing_bytes = CEndpoint {
        uuid: ptr::null_mut(),
        osname: ptr::null_mut(),
        endpt: CByteObject {
            bytes: ptr::null_mut(),
            size: 16,
        },
    };
    let mut null_distance = undef_value();
    null_distance.type_ = DataType::DEVICE_DIST.0;
    // SAFETY: each object is well formed as C memory; only its counts are wrong.
    unsafe {
        let bad = Err(Status::ERR_BAD_PARAM);
        let read = |t: DataType, p: *const c_void| read_object(t, p).map(|_| ());
        assert_eq!(
            read(DataType::COORD, (&raw const missing_values).cast()),
            bad
        );
        assert_eq!(
            read(DataType::GEOMETRY, (&raw const missing_coordinates).cast()),
            bad
        );
        assert_eq!(
            read(DataType::GEOMETRY, (&raw const holey_coordinate).cast()),
            bad
        );
        assert_eq!(
            read(DataType::ENDPOINT, (&raw const missing_bytes).cast()),
            bad
        );
        assert_eq!(read_value(&null_distance).map(|_| ()), bad);
    }
    // A fabric index is a `size_t`: on this 64-bit ABI every one fits.
    let mut c = undef_value();
    let wide = Value::Geometry(Box::new(Geometry {
        fabric: u64::MAX,
        ..Geometry::default()
    }));
    // SAFETY: a fresh value of this test, destructed once.
    unsafe {
        write_value(&wide, &mut c).unwrap();
        assert_eq!(read_value(&c).unwrap(), wide);
        destruct_value(&mut c);
    }
}

fn regattr(name: &str) -> RegAttr {
    RegAttr {
        name: Some(name.to_uppercase()),
        string: Some(format!("pmix.{name}")),
        data_type: DataType::UINT32,
        description: vec![Some("first line".into()), Some("second".into())],
    }
}

#[test]
fn attribute_registrations_cross_as_regattr_structs() {
    let values = [
        Value::RegAttr(Box::new(regattr("alloc.nnodes"))),
        Value::RegAttr(Box::default()),
        Value::DataArray(Box::new(
            DataArray::new(
                DataType::REGATTR,
                vec![
                    Value::RegAttr(Box::new(regattr("a"))),
                    Value::RegAttr(Box::new(regattr("b"))),
                ],
            )
            .unwrap(),
        )),
    ];
    for v in values {
        let mut c = undef_value();
        // SAFETY: a fresh value of this test, destructed once; a regattr value holds a
        // `pmix_regattr_t` behind its pointer.
        unsafe {
            write_value(&v, &mut c).unwrap();
            assert_eq!(c.type_, v.data_type().0, "{v:?}");
            assert_eq!(read_value(&c).unwrap(), v);
            if let Value::RegAttr(r) = &v
                && r.name.is_some()
            {
                let laid = *c.data.ptr.cast::<CRegattr>();
                assert_eq!(read_cstr(laid.name).as_deref(), Some("ALLOC.NNODES"));
                assert_eq!(read_fixed(&laid.string), "pmix.alloc.nnodes");
                assert_eq!(laid.type_, DataType::UINT32.0);
                assert_eq!(read_argv(laid.description).len(), 2);
                assert!((*laid.description.add(2)).is_null());
            }
            destruct_value(&mut c);
        }
        assert_eq!(c.type_, DataType::UNDEF.0);
    }
}

fn proc_stats() -> ProcStats {
    ProcStats {
        node: Some("node7".into()),
        proc: proc(2),
        pid: 4321,
        cmd: Some("a.out".into()),
        state: b'R',
        time: Timeval { sec: 12, usec: 34 },
        percent_cpu: 87.5,
        priority: 20,
        num_threads: 4,
        pss: 1.5,
        vsize: 200.25,
        rss: 100.5,
        peak_vsize: 256.0,
        processor: 3,
        sample_time: Timeval {
            sec: 1_700_000_000,
            usec: 5,
        },
    }
}

/// A disk's sample whose counters are `first`, `first + 1`, … in the C struct's order.
fn disk_stats(disk: &str, first: u64) -> DiskStats {
    DiskStats {
        disk: Some(disk.into()),
        num_reads_completed: first,
        num_reads_merged: first + 1,
        num_sectors_read: first + 2,
        milliseconds_reading: first + 3,
        num_writes_completed: first + 4,
        num_writes_merged: first + 5,
        num_sectors_written: first + 6,
        milliseconds_writing: first + 7,
        num_ios_in_progress: first + 8,
        milliseconds_io: first + 9,
        weighted_milliseconds_io: first + 10,
    }
}

/// An interface's sample whose counters are `first`, `first + 1`, … in the C struct's order.
fn net_stats(interface: &str, first: u64) -> NetStats {
    NetStats {
        net_interface: Some(interface.into()),
        num_bytes_recvd: first,
        num_packets_recvd: first + 1,
        num_recv_errs: first + 2,
        num_bytes_sent: first + 3,
        num_packets_sent: first + 4,
        num_send_errs: first + 5,
    }
}

fn node_stats() -> NodeStats {
    NodeStats {
        node: Some("node7".into()),
        la: 0.5,
        la5: 0.75,
        la15: 1.25,
        total_mem: 64_000.0,
        free_mem: 32_000.0,
        buffers: 10.0,
        cached: 20.0,
        swap_cached: 1.0,
        swap_total: 2048.0,
        swap_free: 1024.0,
        mapped: 42.0,
        sample_time: Timeval { sec: 99, usec: 1 },
        diskstats: vec![disk_stats("sda", 100), disk_stats("nvme0n1", 200)],
        netstats: vec![net_stats("eth0", 300)],
    }
}

fn data_buffer(bytes: &[u8]) -> Buffer {
    Buffer {
        buffer_type: 0,
        bytes: bytes.to_vec(),
    }
}

fn array_of(t: DataType, elements: Vec<Value>) -> Value {
    Value::DataArray(Box::new(DataArray::new(t, elements).unwrap()))
}

#[test]
fn statistics_and_data_buffers_cross_in_values_and_arrays() {
    let values = vec![
        Value::ProcStats(Box::new(proc_stats())),
        Value::ProcStats(Box::default()),
        Value::DiskStats(Box::new(disk_stats("sda", 1))),
        Value::DiskStats(Box::default()),
        Value::NetStats(Box::new(net_stats("ib0", 1))),
        Value::NetStats(Box::default()),
        Value::NodeStats(Box::new(node_stats())),
        Value::NodeStats(Box::default()),
        Value::DataBuffer(Box::new(data_buffer(&[1, 0, 2, 255]))),
        Value::DataBuffer(Box::default()),
        array_of(
            DataType::PROC_STATS,
            vec![
                Value::ProcStats(Box::new(proc_stats())),
                // A state letter beyond ASCII survives C's signed `char`.
                Value::ProcStats(Box::new(ProcStats {
                    state: 0xE9,
                    ..ProcStats::default()
                })),
            ],
        ),
        array_of(
            DataType::DISK_STATS,
            vec![
                Value::DiskStats(Box::new(disk_stats("sda", 1))),
                Value::DiskStats(Box::new(disk_stats("sdb", 50))),
            ],
        ),
        array_of(
            DataType::NET_STATS,
            vec![Value::NetStats(Box::new(net_stats("eth0", 7)))],
        ),
        array_of(
            DataType::NODE_STATS,
            vec![
                Value::NodeStats(Box::new(node_stats())),
                Value::NodeStats(Box::default()),
            ],
        ),
        array_of(
            DataType::DATA_BUFFER,
            vec![
                Value::DataBuffer(Box::new(data_buffer(b"packed"))),
                Value::DataBuffer(Box::default()),
            ],
        ),
    ];
    for v in values {
        let mut c = undef_value();
        // SAFETY: a fresh value of this test, destructed once.
        unsafe {
            write_value(&v, &mut c).unwrap();
            assert_eq!(c.type_, v.data_type().0, "{v:?}");
            assert!(!c.data.ptr.is_null(), "{v:?}");
            assert_eq!(read_value(&c).unwrap(), v);
            destruct_value(&mut c);
        }
        assert_eq!(c.type_, DataType::UNDEF.0);
    }
}

#[test]
fn statistics_and_data_buffers_are_laid_out_as_c_reads_them() {
    let mut c = undef_value();
    // SAFETY: fresh values of this test, each destructed once; the structs read are the
    // ones their types say.
    unsafe {
        write_value(&Value::ProcStats(Box::new(proc_stats())), &mut c).unwrap();
        let s = *c.data.pstats;
        assert_eq!(read_proc(&s.proc).unwrap(), proc(2));
        assert_eq!((s.pid, s.state), (4321, b'R' as c_char));
        assert_eq!(read_cstr(s.cmd).as_deref(), Some("a.out"));
        assert_eq!((s.num_threads, s.processor), (4, 3));
        assert_eq!((s.sample_time.sec, s.sample_time.usec), (1_700_000_000, 5));
        destruct_value(&mut c);

        write_value(&Value::DiskStats(Box::new(disk_stats("sda", 1))), &mut c).unwrap();
        let d = *c.data.dkstats;
        assert_eq!(read_cstr(d.disk).as_deref(), Some("sda"));
        assert_eq!((d.num_reads_completed, d.weighted_milliseconds_io), (1, 11));
        destruct_value(&mut c);

        write_value(&Value::NetStats(Box::new(net_stats("eth0", 1))), &mut c).unwrap();
        let n = *c.data.netstats;
        assert_eq!(read_cstr(n.net_interface).as_deref(), Some("eth0"));
        assert_eq!((n.num_bytes_recvd, n.num_send_errs), (1, 6));
        destruct_value(&mut c);

        write_value(&Value::NodeStats(Box::new(node_stats())), &mut c).unwrap();
        let node = *c.data.ndstats;
        assert_eq!((node.la15, node.mapped), (1.25, 42.0));
        assert_eq!((node.ndiskstats, node.nnetstats), (2, 1));
        let second_disk = *node.diskstats.add(1);
        assert_eq!(read_cstr(second_disk.disk).as_deref(), Some("nvme0n1"));
        assert_eq!(second_disk.weighted_milliseconds_io, 210);
        assert_eq!((*node.netstats).num_send_errs, 305);
        destruct_value(&mut c);

        write_value(&Value::NodeStats(Box::default()), &mut c).unwrap();
        let empty_node = *c.data.ndstats;
        assert!(empty_node.diskstats.is_null() && empty_node.netstats.is_null());
        destruct_value(&mut c);

        write_value(&Value::DataBuffer(Box::new(data_buffer(b"abc"))), &mut c).unwrap();
        let b = *c.data.dbuf;
        assert_eq!(
            slice_of(b.base_ptr.cast::<u8>(), b.bytes_used).unwrap(),
            b"abc"
        );
        assert_eq!((b.bytes_allocated, b.bytes_used), (3, 3));
        assert_eq!(b.unpack_ptr, b.base_ptr);
        assert_eq!(b.pack_ptr, b.base_ptr.add(3));
        destruct_value(&mut c);

        write_value(&Value::DataBuffer(Box::default()), &mut c).unwrap();
        let empty = *c.data.dbuf;
        assert!(empty.base_ptr.is_null() && empty.pack_ptr.is_null());
        assert!(empty.unpack_ptr.is_null());
        assert_eq!((empty.bytes_allocated, empty.bytes_used), (0, 0));
        destruct_value(&mut c);
    }
}

#[test]
fn destructs_of_statistics_and_data_buffers_leave_their_pointers_null() {
    for v in [
        Value::ProcStats(Box::new(proc_stats())),
        Value::DiskStats(Box::new(disk_stats("sda", 1))),
        Value::NetStats(Box::new(net_stats("eth0", 1))),
        Value::NodeStats(Box::new(node_stats())),
        Value::DataBuffer(Box::new(data_buffer(b"xyz"))),
    ] {
        let t = v.data_type();
        let mut c = undef_value();
        // SAFETY: fresh objects of this test: the copy is destructed and freed once, the
        // value destructed once.
        unsafe {
            write_value(&v, &mut c).unwrap();
            let copy = copy_object(t, c.data.ptr).unwrap();
            assert_ne!(copy, c.data.ptr);
            assert_eq!(read_object(t, copy).unwrap(), v);
            destruct_object(t, copy);
            match t {
                DataType::PROC_STATS => {
                    let s = *copy.cast::<CProcStats>();
                    assert!(s.node.is_null() && s.cmd.is_null());
                }
                DataType::DISK_STATS => assert!((*copy.cast::<CDiskStats>()).disk.is_null()),
                DataType::NET_STATS => {
                    assert!((*copy.cast::<CNetStats>()).net_interface.is_null());
                }
                DataType::NODE_STATS => {
                    let n = *copy.cast::<CNodeStats>();
                    assert!(n.node.is_null() && n.diskstats.is_null() && n.netstats.is_null());
                    assert_eq!((n.ndiskstats, n.nnetstats), (0, 0));
                }
                _ => {
                    let b = *copy.cast::<CDataBuffer>();
                    assert!(b.base_ptr.is_null() && b.pack_ptr.is_null());
                    assert!(b.unpack_ptr.is_null());
                    assert_eq!((b.bytes_allocated, b.bytes_used), (0, 0));
                }
            }
            free(copy);
            // The original is untouched by the copy's release.
            assert_eq!(read_value(&c).unwrap(), v);
            destruct_value(&mut c);
        }
        assert_eq!(c.type_, DataType::UNDEF.0);
    }
}

#[test]
fn malformed_statistics_and_data_buffers_are_refused_not_read() {
    // Counts without their arrays or bytes, and a NULL struct behind a value.
    let missing_disks = CNodeStats {
        ndiskstats: 2,
        ..c_node_stats(&NodeStats::default()).unwrap()
    };
    let missing_interfaces = CNodeStats {
        nnetstats: 1,
        ..c_node_stats(&NodeStats::default()).unwrap()
    };
    let missing_bytes = CDataBuffer {
        bytes_used: 8,
        ..empty_data_buffer()
    };
    let mut null_stats = undef_value();
    null_stats.type_ = DataType::PROC_STATS.0;
    // The deprecated internal buffer stays refused, both ways.
    let mut c = undef_value();
    let deprecated = Value::Buffer(Box::new(data_buffer(b"old")));
    // SAFETY: each object is well formed as C memory; only its counts are wrong. `c` is a
    // fresh value left `PMIX_UNDEF` by the refused write.
    unsafe {
        let bad = Err(Status::ERR_BAD_PARAM);
        let read = |t: DataType, p: *const c_void| read_object(t, p).map(|_| ());
        assert_eq!(
            read(DataType::NODE_STATS, (&raw const missing_disks).cast()),
            bad
        );
        assert_eq!(
            read(DataType::NODE_STATS, (&raw const missing_interfaces).cast()),
            bad
        );
        assert_eq!(
            read(DataType::DATA_BUFFER, (&raw const missing_bytes).cast()),
            bad
        );
        assert_eq!(read_value(&null_stats).map(|_| ()), bad);
        assert_eq!(
            write_value(&deprecated, &mut c),
            Err(Status::ERR_NOT_SUPPORTED)
        );
        assert_eq!(c.type_, DataType::UNDEF.0);
    }
}
