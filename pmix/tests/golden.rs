//! Byte-exact agreement with OpenPMIx 4.2.2's `PMIx_Data_pack`.
//!
//! Every row of the golden vector files is one pack call made by OpenPMIx: we decode it as
//! the named type, check that nothing is left over, re-encode the values and compare the
//! bytes.

use std::path::Path;

use pmix::codec::{BufferType, DataBuffer};
use pmix::model::{DataType, Value};

struct Vector {
    file: String,
    line: usize,
    type_name: String,
    description: String,
    buffer_type: BufferType,
    bytes: Vec<u8>,
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("golden hex"))
        .collect()
}

/// Rows of the copied `openpmix/wire-vectors/*.tsv`: `type  sample  hex  (size)`.
fn wire_vectors() -> Vec<Vector> {
    read_vectors(
        "tests/data/wire-vectors",
        &[
            ("wire_vectors_nondesc.tsv", BufferType::NonDescribed),
            ("wire_vectors_fullydesc.tsv", BufferType::FullyDescribed),
        ],
    )
}

/// Rows of `golden/golden_v41_extra.tsv`: the types the shared vectors lack, captured from
/// OpenPMIx 4.2.2 by `golden/capture_golden.py`, in the same layout.
fn extra_vectors() -> Vec<Vector> {
    read_vectors(
        "tests/data/golden",
        &[("golden_v41_extra.tsv", BufferType::NonDescribed)],
    )
}

fn read_vectors(dir: &str, files: &[(&str, BufferType)]) -> Vec<Vector> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out = Vec::new();
    for &(name, buffer_type) in files {
        let text = std::fs::read_to_string(dir.join(name)).expect("golden file");
        for (i, line) in text.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let cells: Vec<&str> = line.split('\t').collect();
            out.push(Vector {
                file: name.to_string(),
                line: i + 1,
                type_name: cells[0].to_string(),
                description: cells[1].to_string(),
                buffer_type,
                bytes: hex(cells[2]),
            });
        }
    }
    out
}

fn check_round_trip(v: &Vector) -> Result<Vec<Value>, String> {
    let where_ = format!("{}:{} {} {}", v.file, v.line, v.type_name, v.description);
    let t = DataType::from_name(&v.type_name).ok_or_else(|| format!("{where_}: unknown type"))?;
    let mut buf = DataBuffer::load(v.bytes.clone(), v.buffer_type);
    let values = buf
        .unpack_values(t, usize::MAX)
        .map_err(|e| format!("{where_}: decode: {e}"))?;
    if !buf.unread().is_empty() {
        return Err(format!("{where_}: {} bytes left over", buf.unread().len()));
    }
    let mut again = DataBuffer::with_type(v.buffer_type);
    again
        .pack_values(t, &values)
        .map_err(|e| format!("{where_}: encode: {e}"))?;
    if again.bytes() != v.bytes.as_slice() {
        return Err(format!(
            "{where_}: re-encoded {:02x?}, OpenPMIx wrote {:02x?}",
            again.bytes(),
            v.bytes
        ));
    }
    Ok(values)
}

#[test]
fn every_openpmix_wire_vector_decodes_and_reencodes_byte_exact() {
    let vectors = wire_vectors();
    assert_eq!(vectors.len(), 96, "both files, 48 rows each");
    let failures: Vec<String> = vectors
        .iter()
        .filter_map(|v| check_round_trip(v).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} vectors failed:\n{}",
        failures.len(),
        vectors.len(),
        failures.join("\n")
    );
}

#[test]
fn every_extra_openpmix_vector_decodes_and_reencodes_byte_exact() {
    let vectors = extra_vectors();
    assert_eq!(vectors.len(), 20);
    let failures: Vec<String> = vectors
        .iter()
        .filter_map(|v| check_round_trip(v).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn extra_vectors_decode_to_the_values_they_describe() {
    use pmix::model::{Coord, CoordView, DeviceDistance, DeviceType, Geometry};
    let get = |ty: &str| {
        let v = extra_vectors()
            .into_iter()
            .find(|v| v.type_name == ty)
            .expect("vector present");
        check_round_trip(&v).expect("round trip").remove(0)
    };
    let coord = Coord {
        view: CoordView::LOGICAL_VIEW,
        coord: vec![3, 300],
    };
    assert_eq!(get("PMIX_COORD"), Value::Coord(Box::new(coord.clone())));
    assert_eq!(
        get("PMIX_GEOMETRY"),
        Value::Geometry(Box::new(Geometry {
            fabric: 7,
            uuid: Some("u".into()),
            osname: Some("o".into()),
            coordinates: vec![coord],
        }))
    );
    assert_eq!(
        get("PMIX_DEVICE_DIST"),
        Value::DeviceDist(Box::new(DeviceDistance {
            uuid: Some("u".into()),
            osname: Some("o".into()),
            device_type: DeviceType::GPU,
            mindist: 5,
            maxdist: 300,
        }))
    );
}

#[test]
fn cpusets_travel_as_hwloc_list_strings() {
    use pmix::model::Cpuset;
    let cpusets: Vec<Value> = extra_vectors()
        .iter()
        .filter(|v| v.type_name == "PMIX_PROC_CPUSET")
        .map(|v| check_round_trip(v).expect("round trip").remove(0))
        .collect();
    let hwloc = |bitmap: Option<&str>| {
        Value::ProcCpuset(Box::new(Cpuset {
            source: Some("hwloc".into()),
            bitmap: bitmap.map(String::from),
        }))
    };
    assert_eq!(cpusets, [hwloc(None), hwloc(Some(""))]);
    // Only hwloc's cpusets have a wire form.
    let other = Value::ProcCpuset(Box::new(Cpuset {
        source: Some("other".into()),
        bitmap: Some("0-1".into()),
    }));
    let mut buf = DataBuffer::with_type(BufferType::NonDescribed);
    assert!(buf.pack_values(DataType::PROC_CPUSET, &[other]).is_err());
    assert!(
        buf.bytes().is_empty(),
        "a refused pack leaves the buffer as it was"
    );
}

#[test]
fn wire_vectors_decode_to_the_values_they_describe() {
    let by_desc = |ty: &str, desc: &str| -> Vec<Value> {
        let v = wire_vectors()
            .into_iter()
            .find(|v| {
                v.type_name == ty
                    && v.description == desc
                    && v.buffer_type == BufferType::NonDescribed
            })
            .expect("vector present");
        check_round_trip(&v).expect("round trip")
    };
    assert_eq!(by_desc("PMIX_UINT64", "2^64-1"), [Value::Uint64(u64::MAX)]);
    assert_eq!(
        by_desc("PMIX_INT64", "-5000000000"),
        [Value::Int64(-5_000_000_000)]
    );
    assert_eq!(by_desc("PMIX_UINT", "7"), [Value::Uint(7)]);
    assert_eq!(by_desc("PMIX_PID", "1234"), [Value::Pid(1234)]);
    assert_eq!(by_desc("PMIX_DOUBLE", "2.25"), [Value::Double(2.25)]);
    assert_eq!(by_desc("PMIX_STRING", "NULL"), [Value::String(None)]);
    assert_eq!(
        by_desc("PMIX_STRING", "3 strings a,'',xyz"),
        [Value::from("a"), Value::from(""), Value::from("xyz")]
    );
    let info = &by_desc("PMIX_INFO", "{pmix.collect, flags REQD, bool true}")[0];
    let Value::Info(info) = info else {
        panic!("not an info: {info:?}")
    };
    assert_eq!(info.key, "pmix.collect");
    assert!(info.is_required());
    assert_eq!(info.value, Value::Bool(true));
}
