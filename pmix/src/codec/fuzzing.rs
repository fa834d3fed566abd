//! Entry points for the fuzz targets in `fuzz/` (STYLE 17: targets are thin shells).
//!
//! Input layout of [`unpack`]: byte 0 is the data type code, bit 0 of byte 1 selects a fully
//! described buffer, the rest is the buffer. The seed corpus (`cargo xtask fuzz`) is made
//! from the golden vectors in that layout.

use super::{BufferType, DataBuffer};
use crate::model::DataType;

/// Decode `data` as pack calls of one type. Whatever decodes must re-encode and decode again
/// to the same values; nothing may panic.
pub fn unpack(data: &[u8]) {
    let [t, flags, payload @ ..] = data else {
        return;
    };
    let buffer_type = if flags & 1 == 1 {
        BufferType::FullyDescribed
    } else {
        BufferType::NonDescribed
    };
    let t = DataType(u16::from(*t));
    let mut buf = DataBuffer::load(payload.to_vec(), buffer_type);
    while let Ok(values) = buf.unpack_values(t, usize::MAX) {
        let mut again =
            DataBuffer::with_type(buffer_type).with_float_format(super::FloatFormat::RoundTrip);
        again
            .pack_values(t, &values)
            .expect("decoded values re-encode");
        let back = again
            .unpack_values(t, usize::MAX)
            .expect("re-encoded values decode");
        // NaN is the one value not equal to itself; compare the texts instead.
        assert_eq!(
            format!("{back:?}"),
            format!("{values:?}"),
            "round trip changed values"
        );
        if buf.unread().is_empty() {
            break;
        }
    }
}

/// The fuzz input that holds one golden vector.
pub fn seed(t: DataType, buffer_type: BufferType, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![
        t.0 as u8,
        u8::from(buffer_type == BufferType::FullyDescribed),
    ];
    out.extend_from_slice(bytes);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fuzz_entry_survives_odd_inputs() {
        for input in [
            &[][..],
            &[3],
            &[3, 0, 0x7f],
            &[21, 1, 9, 2, 21, 21, 21],
            &[39, 0, 2, 39, 0xff, 0xff],
        ] {
            super::unpack(input);
        }
    }
}
