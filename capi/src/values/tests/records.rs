//! Registered attributes, statistics and data buffers cross as their structs.

use super::*;

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
