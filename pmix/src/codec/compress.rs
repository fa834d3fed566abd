//! `PMIx_Data_compress` / `PMIx_Data_decompress` and the compressed value types.
//!
//! OpenPMIx's zlib module frames a compressed block as the uncompressed length (4 bytes, in
//! the host's byte order: little-endian on every platform we build for) followed by a zlib
//! stream. `PMIX_COMPRESSED_STRING` and `PMIX_COMPRESSED_BYTE_OBJECT` values carry such a
//! block; OpenPMIx's `PMIx_Put` turns strings over 4096 bytes into compressed strings, so a
//! reader must inflate them (`decompress_string`).
//!
//! Decompression is bounded: the declared length is checked against the actual output and
//! capped at [`MAX_INFLATED`], so a forged header cannot make us allocate gigabytes.

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;

use crate::Error;
use crate::model::{ByteObject, Status, Text, Value};

/// The largest block we inflate (1 GiB), whatever a header claims.
pub const MAX_INFLATED: usize = 1 << 30;

/// Strings longer than this are sent compressed by OpenPMIx's `PMIx_Put`
/// (`pcompress_base_compress_limit`).
pub const OPENPMIX_COMPRESS_LIMIT: usize = 4096;

/// `PMIx_Data_compress`: `input` compressed into OpenPMIx's framing. `None` ("not
/// compressed") when the input is empty, longer than the 4-byte length field can describe,
/// or when the block would not be smaller than the input: v5.0 §11.3.8 has the function
/// answer false then, so a caller keeps its bytes as they are.
pub fn compress(input: &[u8]) -> Option<Vec<u8>> {
    if input.is_empty() {
        return None;
    }
    let declared = u32::try_from(input.len()).ok()?;
    let mut out = declared.to_le_bytes().to_vec();
    let mut encoder = ZlibEncoder::new(&mut out, Compression::best());
    encoder.write_all(input).ok()?;
    encoder.finish().ok()?;
    (out.len() < input.len()).then_some(out)
}

/// `PMIx_Data_decompress`: inflate a block made by [`compress`] (or by OpenPMIx). `None` if it is malformed, its
/// output does not match the declared length, or the length exceeds [`MAX_INFLATED`].
pub fn decompress(block: &[u8]) -> Option<Vec<u8>> {
    let (header, stream) = block.split_first_chunk::<4>()?;
    let declared = u32::from_le_bytes(*header) as usize;
    if declared > MAX_INFLATED {
        return None;
    }
    let mut out = Vec::with_capacity(declared.min(stream.len().saturating_mul(64)));
    ZlibDecoder::new(stream)
        .take(declared as u64 + 1)
        .read_to_end(&mut out)
        .ok()?;
    (out.len() == declared).then_some(out)
}

/// A `PMIX_COMPRESSED_STRING` value holding `s`; `None` where [`compress`] declines (the
/// string is then sent as it is).
pub fn compressed_string(s: &[u8]) -> Option<Value> {
    compress(s).map(|b| Value::CompressedString(ByteObject(b)))
}

/// The string inside a `PMIX_COMPRESSED_STRING` block. OpenPMIx compresses the terminating
/// NUL with the string; it is removed here.
pub fn decompress_string(block: &[u8]) -> Result<Text, Error> {
    let mut bytes = decompress(block).ok_or_else(|| {
        Error::decode(
            Status::ERR_UNPACK_FAILURE,
            "compressed string does not inflate",
        )
    })?;
    if bytes.last() == Some(&0) {
        bytes.pop();
    }
    Ok(Text::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compress_round_trips_and_frames_the_length() {
        let input = b"pmix".repeat(1000);
        let block = compress(&input).unwrap();
        assert_eq!(&block[..4], &4000u32.to_le_bytes());
        assert!(block.len() < input.len());
        assert_eq!(decompress(&block).unwrap(), input);
    }

    #[test]
    fn input_that_would_not_shrink_is_not_compressed() {
        assert_eq!(compress(b"hello"), None);
        assert_eq!(compress(b""), None);
        let noise: Vec<u8> = (0..64u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        assert_eq!(compress(&noise), None);
    }

    #[test]
    fn a_lying_length_is_refused() {
        let mut block = compress(&b"hello".repeat(20)).unwrap();
        block[..4].copy_from_slice(&4u32.to_le_bytes());
        assert_eq!(decompress(&block), None);
        block[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(decompress(&block), None);
        assert_eq!(decompress(&[1, 2]), None);
    }
}
