//! The classes of bug OpenPMIx's fuzzing of its unpackers found in 2026, each as a test on
//! this crate's decoders (the hostile-input issue): a short message claiming 2^40 elements,
//! sizes taken from the wire without a check, a 3-byte buffer driving a read past its end,
//! and a value whose type the peer chose. Each must end in an error status, at once: an
//! allocation sized from the claim would abort the test process.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use pmix::codec::primitive::Writer;
use pmix::codec::{BufferType, DataBuffer, FloatFormat};
use pmix::model::{DataType, Status};
use pmix::wire::Command;
use pmix::wire::message::{Reply, Request};

const BOTH: [BufferType; 2] = [BufferType::NonDescribed, BufferType::FullyDescribed];

fn unpack(bytes: Vec<u8>, t: DataType, bt: BufferType) -> Result<usize, Status> {
    let mut buffer = DataBuffer::load(bytes, bt);
    buffer
        .unpack_values(t, 1)
        .map(|v| v.len())
        .map_err(|e| e.status())
}

/// One pack call of one value of type `t` whose payload `body` writes: the call's count,
/// and in the described form the count's type and the values' type before them.
fn described(t: DataType, bt: BufferType, body: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let mut w = Writer::new(FloatFormat::default());
    if bt == BufferType::FullyDescribed {
        w.data_type(DataType::INT32);
    }
    w.length(1).unwrap();
    if bt == BufferType::FullyDescribed {
        w.data_type(t);
    }
    body(&mut w);
    w.into_bytes()
}

#[test]
fn a_short_message_claiming_2_40_elements_is_refused_without_allocating_them() {
    for bt in BOTH {
        // An array of 2^40 UINT64s in 20 bytes.
        let bytes = described(DataType::DATA_ARRAY, bt, |w| {
            w.data_type(DataType::UINT64);
            w.size(1 << 40);
            w.raw(&[0; 8]);
        });
        assert!(bytes.len() <= 24, "{} bytes", bytes.len());
        let got = unpack(bytes, DataType::DATA_ARRAY, bt);
        assert!(got.is_err(), "{bt:?}: {got:?}");
    }
    // A fence request naming 2^40 processes.
    let mut w = Writer::new(FloatFormat::default());
    w.byte(Command::FENCENB.0);
    w.size(1 << 40);
    w.raw(&[0; 8]);
    let payload = w.into_bytes();
    assert!(Request::decode(&payload, BufferType::NonDescribed).is_err());
}

#[test]
fn sizes_from_the_wire_are_checked_against_the_bytes_that_follow() {
    for bt in BOTH {
        // Each type with a size claimed far past the three bytes that follow.
        let claims = [
            (DataType::BYTE_OBJECT, 1u64 << 40),
            (DataType::STRING, i32::MAX as u64),
            (DataType::COMPRESSED_STRING, u64::MAX),
            (DataType::REGEX, 1 << 33),
        ];
        for (t, claim) in claims {
            let bytes = described(t, bt, |w| {
                if t == DataType::STRING {
                    w.int32(claim as i32);
                } else {
                    w.size(claim);
                }
                w.raw(b"abc");
            });
            let got = unpack(bytes, t, bt);
            assert!(got.is_err(), "{t:?} in {bt:?}: {got:?}");
        }
    }
    // A reply whose count of returned infos is the largest size.
    let mut w = Writer::new(FloatFormat::default());
    w.int32(0);
    w.size(u64::MAX);
    assert!(Reply::decode(Command::QUERY, &w.into_bytes(), BufferType::NonDescribed).is_err());
}

#[test]
fn three_bytes_read_as_any_type_end_at_the_buffer_not_past_it() {
    for bt in BOTH {
        let mut read = 0;
        for code in 0..=u16::from(u8::MAX) {
            let t = DataType(code);
            // A pack call of one value, of which three bytes are there.
            let bytes = described(t, bt, |w| w.raw(&[0x7f, 0xff, 0x80]));
            let Ok(values) = DataBuffer::load(bytes.clone(), bt).unpack_values(t, 1) else {
                continue;
            };
            // What was read packs again within the bytes that were there.
            let mut again = DataBuffer::with_type(bt);
            again.pack_values(t, &values).unwrap();
            assert!(
                again.bytes().len() <= bytes.len(),
                "{t:?}: {values:?} takes {} bytes, {} were there",
                again.bytes().len(),
                bytes.len()
            );
            read += 1;
        }
        assert!(read >= 10, "{read} types read from 3 bytes in {bt:?}");
    }
}

#[test]
fn a_value_of_a_type_the_peer_chose_is_read_as_that_type_or_refused() {
    // PMIX_VALUE carries its own type code: every code, with a payload of junk.
    for bt in BOTH {
        let mut read = 0;
        for code in 0..=u16::from(u8::MAX) {
            let bytes = described(DataType::VALUE, bt, |w| {
                w.data_type(DataType(code));
                w.raw(&[0xff; 12]);
            });
            if let Ok(mut values) = DataBuffer::load(bytes, bt).unpack_values(DataType::VALUE, 1) {
                // The value read is of the type its code names, nothing else.
                let v = values.pop().expect("one value");
                assert_eq!(v.data_type(), DataType(code), "{v:?}");
                read += 1;
            }
        }
        // Most fixed-size types read from twelve bytes; the rest are refused.
        assert!(read >= 20, "{read} of 256 codes read in {bt:?}");
        // A described buffer whose tag is not the type asked for is a mismatch, not a read
        // of one type's bytes as another's.
        let bytes = described(DataType::INFO, BufferType::FullyDescribed, |w| {
            w.raw(&[0xff; 12])
        });
        let got = unpack(bytes, DataType::UINT8, BufferType::FullyDescribed);
        assert_eq!(got, Err(Status::ERR_PACK_MISMATCH));
    }
}
