//! Fabric coordinates, geometries, endpoints and device distances cross as their structs.

use super::*;

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
