//! Property tests: every data type survives pack → unpack unchanged, in both buffer types,
//! and malformed input fails with the standard's statuses instead of panicking.

use pmix::codec::{BufferType, DataBuffer, FloatFormat};
use pmix::model::*;
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 .:_é-]{0,12}"
}

fn opt_text() -> impl Strategy<Value = Option<String>> {
    prop::option::of(text())
}

/// A C string's bytes: anything but NUL, UTF-8 or not (Latin-1, cut sequences).
fn c_string() -> impl Strategy<Value = Option<Text>> {
    prop::option::of(prop::collection::vec(1u8..=255, 0..16).prop_map(Text::from_bytes))
}

fn key() -> impl Strategy<Value = Key> {
    "[a-z][a-z0-9.]{0,20}".prop_map(|k| Key::new(k).expect("valid key"))
}

fn proc_() -> impl Strategy<Value = Proc> {
    ("[a-z0-9.-]{0,16}", any::<u32>())
        .prop_map(|(n, r)| Proc::new(Nspace::new(n).expect("valid nspace"), r))
}

fn float32() -> impl Strategy<Value = f32> {
    use proptest::num::f32::*;
    NORMAL | SUBNORMAL | ZERO | INFINITE | POSITIVE | NEGATIVE
}

fn float64() -> impl Strategy<Value = f64> {
    use proptest::num::f64::*;
    NORMAL | SUBNORMAL | ZERO | INFINITE | POSITIVE | NEGATIVE
}

fn timeval() -> impl Strategy<Value = Timeval> {
    (any::<i64>(), any::<i64>()).prop_map(|(sec, usec)| Timeval { sec, usec })
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..24)
}

fn coord() -> impl Strategy<Value = Coord> {
    (any::<u8>(), prop::collection::vec(any::<u32>(), 0..4)).prop_map(|(v, coord)| Coord {
        view: CoordView(v),
        coord,
    })
}

fn disk_stats() -> impl Strategy<Value = DiskStats> {
    (c_string(), prop::array::uniform11(any::<u64>())).prop_map(|(disk, v)| DiskStats {
        disk,
        num_reads_completed: v[0],
        num_reads_merged: v[1],
        num_sectors_read: v[2],
        milliseconds_reading: v[3],
        num_writes_completed: v[4],
        num_writes_merged: v[5],
        num_sectors_written: v[6],
        milliseconds_writing: v[7],
        num_ios_in_progress: v[8],
        milliseconds_io: v[9],
        weighted_milliseconds_io: v[10],
    })
}

fn net_stats() -> impl Strategy<Value = NetStats> {
    (c_string(), prop::array::uniform6(any::<u64>())).prop_map(|(net_interface, v)| NetStats {
        net_interface,
        num_bytes_recvd: v[0],
        num_packets_recvd: v[1],
        num_recv_errs: v[2],
        num_bytes_sent: v[3],
        num_packets_sent: v[4],
        num_send_errs: v[5],
    })
}

/// Values of the types that hold no other values.
fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        any::<u8>().prop_map(Value::Byte),
        c_string().prop_map(Value::String),
        any::<u64>().prop_map(Value::Size),
        any::<i32>().prop_map(Value::Pid),
        any::<i32>().prop_map(Value::Int),
        any::<i8>().prop_map(Value::Int8),
        any::<i16>().prop_map(Value::Int16),
        any::<i32>().prop_map(Value::Int32),
        any::<i64>().prop_map(Value::Int64),
        any::<u32>().prop_map(Value::Uint),
        any::<u8>().prop_map(Value::Uint8),
        any::<u16>().prop_map(Value::Uint16),
        any::<u32>().prop_map(Value::Uint32),
        any::<u64>().prop_map(Value::Uint64),
        float32().prop_map(Value::Float),
        float64().prop_map(Value::Double),
        timeval().prop_map(Value::Timeval),
        any::<i64>().prop_map(|t| Value::Time(Time(t))),
        any::<i32>().prop_map(|s| Value::Status(Status(s))),
        proc_().prop_map(Value::Proc),
        (any::<u8>(), bytes()).prop_map(|(t, b)| Value::Buffer(Box::new(Buffer {
            buffer_type: t,
            bytes: b
        }))),
        bytes().prop_map(|b| Value::ByteObject(ByteObject(b))),
        any::<u8>().prop_map(|v| Value::Persist(Persistence(v))),
        Just(Value::Pointer(Pointer(0))),
        any::<u8>().prop_map(|v| Value::Scope(Scope(v))),
        any::<u8>().prop_map(|v| Value::DataRange(DataRange(v))),
        any::<u8>().prop_map(Value::Command),
        any::<u32>().prop_map(|v| Value::InfoDirectives(InfoDirectives(v))),
        any::<u16>().prop_map(|v| Value::DataType(DataType(v))),
        any::<u8>().prop_map(|v| Value::ProcState(ProcState(v))),
        (proc_(), c_string(), c_string(), any::<i32>(), any::<u8>()).prop_map(
            |(proc, h, e, pid, s)| {
                Value::ProcInfo(Box::new(ProcInfo {
                    proc,
                    hostname: h,
                    executable_name: e,
                    pid,
                    exit_code: 0,
                    state: ProcState(s),
                }))
            }
        ),
        any::<u32>().prop_map(|r| Value::Rank(Rank(r))),
        bytes().prop_map(|b| Value::CompressedString(ByteObject(b))),
        any::<u8>().prop_map(|v| Value::AllocDirective(AllocDirective(v))),
        any::<u16>().prop_map(|v| Value::IofChannel(IofChannel(v))),
        (c_string(), c_string(), any::<u8>()).prop_map(|(e, v, s)| Value::Envar(Box::new(Envar {
            envar: e,
            value: v,
            separator: s
        }))),
        coord().prop_map(|c| Value::Coord(Box::new(c))),
        (
            opt_text(),
            opt_text(),
            any::<u16>(),
            prop::collection::vec(opt_text(), 0..3)
        )
            .prop_map(|(name, string, t, description)| {
                Value::RegAttr(Box::new(RegAttr {
                    name,
                    string,
                    data_type: DataType(t),
                    description,
                }))
            }),
        "[a-z0-9\\[\\],-]{0,16}".prop_map(|s| Value::Regex(ByteObject(s.into_bytes()))),
        any::<u8>().prop_map(|v| Value::JobState(JobState(v))),
        any::<u8>().prop_map(|v| Value::LinkState(LinkState(v))),
        // Only hwloc cpusets have a wire form, and they decode with that source named.
        opt_text().prop_map(|bitmap| Value::ProcCpuset(Box::new(Cpuset {
            source: Some("hwloc".into()),
            bitmap
        }))),
        (
            any::<u64>(),
            opt_text(),
            opt_text(),
            prop::collection::vec(coord(), 0..3)
        )
            .prop_map(|(fabric, uuid, osname, coordinates)| {
                Value::Geometry(Box::new(Geometry {
                    fabric,
                    uuid,
                    osname,
                    coordinates,
                }))
            }),
        (
            opt_text(),
            opt_text(),
            any::<u64>(),
            any::<u16>(),
            any::<u16>()
        )
            .prop_map(|(u, o, t, a, b)| {
                Value::DeviceDist(Box::new(DeviceDistance {
                    uuid: u,
                    osname: o,
                    device_type: DeviceType(t),
                    mindist: a,
                    maxdist: b,
                }))
            }),
        (opt_text(), opt_text(), bytes()).prop_map(|(u, o, b)| {
            Value::Endpoint(Box::new(Endpoint {
                uuid: u,
                osname: o,
                endpt: ByteObject(b),
            }))
        }),
        // Only hwloc topologies have a wire form, and they decode with that source named.
        opt_text().prop_map(|topology| Value::Topo(Box::new(Topology {
            source: Some("hwloc".into()),
            topology
        }))),
        any::<u64>().prop_map(|v| Value::DevType(DeviceType(v))),
        any::<u16>().prop_map(|v| Value::LocType(Locality(v))),
        bytes().prop_map(|b| Value::CompressedByteObject(ByteObject(b))),
        "[a-z0-9.]{0,16}".prop_map(|n| Value::ProcNspace(Nspace::new(n).expect("valid nspace"))),
        (
            (
                c_string(),
                proc_(),
                any::<i32>(),
                c_string(),
                any::<u8>(),
                timeval()
            ),
            (
                float32(),
                any::<i32>(),
                any::<u16>(),
                prop::array::uniform4(float32())
            ),
            (any::<u16>(), timeval()),
        )
            .prop_map(
                |(
                    (node, proc, pid, cmd, state, time),
                    (cpu, priority, threads, m),
                    (processor, sample_time),
                )| {
                    Value::ProcStats(Box::new(ProcStats {
                        node,
                        proc,
                        pid,
                        cmd,
                        state,
                        time,
                        percent_cpu: cpu,
                        priority,
                        num_threads: threads,
                        pss: m[0],
                        vsize: m[1],
                        rss: m[2],
                        peak_vsize: m[3],
                        processor,
                        sample_time,
                    }))
                }
            ),
        disk_stats().prop_map(|d| Value::DiskStats(Box::new(d))),
        net_stats().prop_map(|n| Value::NetStats(Box::new(n))),
        (
            c_string(),
            prop::array::uniform11(float32()),
            timeval(),
            prop::collection::vec(disk_stats(), 0..2),
            prop::collection::vec(net_stats(), 0..2),
        )
            .prop_map(|(node, f, sample_time, diskstats, netstats)| {
                Value::NodeStats(Box::new(NodeStats {
                    node,
                    la: f[0],
                    la5: f[1],
                    la15: f[2],
                    total_mem: f[3],
                    free_mem: f[4],
                    buffers: f[5],
                    cached: f[6],
                    swap_cached: f[7],
                    swap_total: f[8],
                    swap_free: f[9],
                    mapped: f[10],
                    sample_time,
                    diskstats,
                    netstats,
                }))
            }),
        bytes().prop_map(|b| Value::DataBuffer(Box::new(Buffer {
            buffer_type: 0,
            bytes: b
        }))),
        any::<u64>().prop_map(|v| Value::StorMedium(StorageMedium(v))),
        any::<u64>().prop_map(|v| Value::StorAccess(StorageAccessibility(v))),
        any::<u64>().prop_map(|v| Value::StorPersist(StoragePersistence(v))),
        any::<u16>().prop_map(|v| Value::StorAccessType(StorageAccessType(v))),
    ]
}

fn info_of(inner: impl Strategy<Value = Value>) -> impl Strategy<Value = Info> {
    (key(), any::<u32>(), inner).prop_map(|(key, flags, value)| Info {
        key,
        flags: InfoDirectives(flags),
        value,
    })
}

/// Any value, including the types that hold other values, nested a few levels.
fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|v| Value::Value(Box::new(v))),
            info_of(inner.clone()).prop_map(|i| Value::Info(Box::new(i))),
            (proc_(), key(), inner.clone())
                .prop_map(|(proc, key, value)| Value::PData(Box::new(PData { proc, key, value }))),
            (key(), inner.clone())
                .prop_map(|(key, value)| Value::Kval(Box::new(Kval { key, value }))),
            (
                c_string(),
                prop::collection::vec(c_string(), 0..3),
                prop::collection::vec(c_string(), 0..3),
                c_string(),
                any::<i32>(),
                prop::collection::vec(info_of(inner.clone()), 0..3)
            )
                .prop_map(|(cmd, argv, env, cwd, maxprocs, info)| {
                    Value::App(Box::new(App {
                        cmd,
                        argv,
                        env,
                        cwd,
                        maxprocs,
                        info,
                    }))
                }),
            (
                prop::collection::vec(opt_text(), 0..3),
                prop::collection::vec(info_of(inner.clone()), 0..3)
            )
                .prop_map(|(keys, qualifiers)| Value::Query(Box::new(Query { keys, qualifiers }))),
            (inner.clone(), 0usize..4).prop_map(|(v, n)| {
                let t = v.data_type();
                Value::DataArray(Box::new(DataArray {
                    data_type: t,
                    elements: vec![v; n],
                }))
            }),
            prop::collection::vec(info_of(inner), 0..4)
                .prop_map(|infos| Value::DataArray(Box::new(DataArray::of_infos(infos)))),
        ]
    })
}

fn round_trip(buffer_type: BufferType, values: &[Value]) -> Result<(), TestCaseError> {
    let t = values[0].data_type();
    let mut buf = DataBuffer::with_type(buffer_type).with_float_format(FloatFormat::RoundTrip);
    buf.pack_values(t, values)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    // As a typed value too, so that every type also travels inside a PMIX_VALUE.
    buf.pack(values)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut rd = DataBuffer::load(buf.bytes().to_vec(), buffer_type);
    let direct = rd
        .unpack_values(t, values.len())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let wrapped: Vec<Value> = rd
        .unpack(values.len())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&direct, values);
    prop_assert_eq!(&wrapped, values);
    prop_assert!(rd.unread().is_empty());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn every_type_round_trips_non_described(v in value(), n in 1usize..3) {
        round_trip(BufferType::NonDescribed, &vec![v; n])?;
    }

    #[test]
    fn every_type_round_trips_fully_described(v in value(), n in 1usize..3) {
        round_trip(BufferType::FullyDescribed, &vec![v; n])?;
    }

    #[test]
    fn truncated_input_is_an_unpack_error_never_a_panic(v in value(), cut in any::<prop::sample::Index>()) {
        let t = v.data_type();
        let mut buf = DataBuffer::new();
        buf.pack_values(t, std::slice::from_ref(&v)).expect("pack");
        let bytes = buf.bytes();
        let cut = cut.index(bytes.len());
        let mut rd = DataBuffer::load(bytes[..cut].to_vec(), BufferType::NonDescribed);
        let before = rd.clone();
        match rd.unpack_values(t, 1) {
            Ok(_) => {}
            Err(e) => {
                let s = e.status();
                prop_assert!(
                    s == Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER || s == Status::ERR_UNPACK_FAILURE,
                    "unexpected status {s:?}: {e}"
                );
                // A failed unpack leaves the buffer as it was.
                prop_assert_eq!(rd, before);
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64), t in 0u16..72) {
        for buffer_type in [BufferType::NonDescribed, BufferType::FullyDescribed] {
            let _ = pmix::codec::unpack_all(&bytes, buffer_type, DataType(t));
        }
    }
}

#[test]
fn openpmix_float_format_keeps_six_decimals() {
    let mut buf = DataBuffer::new();
    buf.pack(&[1.0f64 / 3.0]).expect("pack");
    let back: Vec<f64> = buf.unpack(1).expect("unpack");
    assert_eq!(back, [0.333333]);
}

#[test]
fn unpacking_more_values_than_room_is_inadequate_space_and_changes_nothing() {
    let mut buf = DataBuffer::new();
    buf.pack(&[1u32, 2, 3]).expect("pack");
    let err = buf
        .unpack::<u32>(2)
        .expect_err("three values, room for two");
    assert_eq!(err.status(), Status::ERR_UNPACK_INADEQUATE_SPACE);
    assert_eq!(buf.unpack::<u32>(3).expect("whole call"), [1, 2, 3]);
}

#[test]
fn a_type_mismatch_in_a_fully_described_buffer_is_detected() {
    let mut buf = DataBuffer::with_type(BufferType::FullyDescribed);
    buf.pack(&[7u32]).expect("pack");
    let err = buf.unpack::<u16>(1).expect_err("uint32 read as uint16");
    assert_eq!(err.status(), Status::ERR_PACK_MISMATCH);
}

#[test]
fn a_length_claiming_4_gib_in_a_10_byte_buffer_is_an_error_not_an_allocation() {
    // A byte object whose SIZE says 4 GiB, then 5 bytes.
    let bytes = vec![0x02, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 2, 3, 4];
    let mut buf = DataBuffer::load(bytes, BufferType::NonDescribed);
    let err = buf
        .unpack_values(DataType::BYTE_OBJECT, 1)
        .expect_err("forged length");
    assert_eq!(err.status(), Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER);
}

#[test]
fn an_unknown_type_code_is_unknown_data_type() {
    let mut buf = DataBuffer::load(vec![0x02, 0xf4, 0x03, 0x00], BufferType::NonDescribed);
    let err = buf.unpack::<Value>(1).expect_err("type 500 has no decoder");
    assert_eq!(err.status(), Status::ERR_UNKNOWN_DATA_TYPE);
}

#[test]
fn deep_nesting_stops_with_an_error() {
    // VALUE(VALUE(VALUE(...))) a thousand deep: type code 21 repeated.
    let mut bytes = vec![0x02];
    bytes.extend(std::iter::repeat_n(21u8, 1000));
    let mut buf = DataBuffer::load(bytes, BufferType::NonDescribed);
    let err = buf.unpack::<Value>(1).expect_err("too deep");
    assert_eq!(err.status(), Status::ERR_UNPACK_FAILURE);
}
