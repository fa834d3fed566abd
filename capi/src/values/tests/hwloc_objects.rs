//! Cpusets and topologies cross as hwloc objects: a bitmap and a topology hwloc reads.

use super::*;

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
