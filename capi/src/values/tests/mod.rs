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

mod fabric;
mod hwloc_objects;
mod records;

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
