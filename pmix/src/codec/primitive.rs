//! The primitive encodings of bfrops v41 with psquash flex128 (OpenPMIx 4.2's defaults).
//!
//! - **Integers** are varints: 7 bits per byte, least significant group first, `0x80` marks
//!   a continuation; the 9th byte, when reached, carries a full 8 bits, so any `u64` fits in
//!   at most 9 bytes (this is not LEB128, which would need 10).
//! - **Signed integers** are zigzag-mapped first: `n >= 0` → `2n`, `n < 0` → `2|n| - 1`.
//! - **Strings** are an `INT32` length that counts the terminating NUL (0 for a NULL
//!   pointer), then the bytes and the NUL.
//! - **Type codes** (`pmix_data_type_t`) are `u16` varints.
//!
//! [`Writer`] appends to a `Vec<u8>` and cannot fail. [`Reader`] never reads past its slice,
//! never allocates more than the bytes that remain could describe, and reports the standard's
//! unpack statuses.

use crate::Error;
use crate::model::{Status, Text};

/// How `PMIX_FLOAT` and `PMIX_DOUBLE` are written. Both are decimal text, which OpenPMIx
/// parses with `strtod`; they differ in precision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FloatFormat {
    /// `printf("%f")`: six decimals, byte-identical to OpenPMIx and lossy (DESIGN §2).
    #[default]
    OpenPmix,
    /// The shortest text that reads back to the same number: exact between Rust peers and
    /// still readable by OpenPMIx.
    RoundTrip,
}

/// Appends encoded values to a byte vector.
#[derive(Debug, Default)]
pub struct Writer {
    pub(crate) bytes: Vec<u8>,
    pub(crate) float_format: FloatFormat,
}

impl Writer {
    pub fn new(float_format: FloatFormat) -> Self {
        Writer {
            bytes: Vec::new(),
            float_format,
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    pub fn byte(&mut self, b: u8) {
        self.bytes.push(b);
    }

    pub fn raw(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
    }

    /// An unsigned varint (flex128).
    pub fn varint(&mut self, mut v: u64) {
        for _ in 0..8 {
            if v < 0x80 {
                self.bytes.push(v as u8);
                return;
            }
            self.bytes.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        // Eight groups of seven bits are out; the ninth byte holds the last eight bits.
        self.bytes.push(v as u8);
    }

    /// A signed varint, zigzag-mapped.
    pub fn zigzag(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    /// `PMIX_INT32` (also the count prefix of every pack call).
    pub fn int32(&mut self, v: i32) {
        self.zigzag(i64::from(v));
    }

    /// `PMIX_SIZE`: an unsigned varint.
    pub fn size(&mut self, v: u64) {
        self.varint(v);
    }

    /// A `pmix_data_type_t`.
    pub fn data_type(&mut self, t: crate::model::DataType) {
        self.varint(u64::from(t.0));
    }

    /// A length as an `INT32`; lengths beyond `i32::MAX` cannot be encoded.
    pub fn length(&mut self, n: usize) -> Result<(), Error> {
        let n = i32::try_from(n).map_err(|_| Error::Encode {
            status: Status::ERR_PACK_FAILURE,
            reason: format!("length {n} does not fit the INT32 length field"),
        })?;
        self.int32(n);
        Ok(())
    }

    /// A `PMIX_STRING`; `None` is the NULL pointer.
    pub fn string(&mut self, s: Option<&str>) -> Result<(), Error> {
        self.text(s.map(str::as_bytes))
    }

    /// A `PMIX_STRING` of any bytes (a C string need not be UTF-8); `None` is the NULL
    /// pointer.
    pub fn text(&mut self, s: Option<&[u8]>) -> Result<(), Error> {
        match s {
            None => self.bytes.push(0),
            Some(s) => {
                self.length(s.len() + 1)?;
                self.bytes.extend_from_slice(s);
                self.bytes.push(0);
            }
        }
        Ok(())
    }

    /// A NUL-terminated byte string without a length prefix (`PMIX_REGEX`, native form).
    pub fn cstr_bytes(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
        self.bytes.push(0);
    }

    /// A `PMIX_SIZE` length, then the bytes (`PMIX_BYTE_OBJECT` and friends).
    pub fn sized_bytes(&mut self, b: &[u8]) {
        self.size(b.len() as u64);
        self.bytes.extend_from_slice(b);
    }

    /// `PMIX_FLOAT` / `PMIX_DOUBLE` as decimal text.
    pub fn float(&mut self, v: f64, single: bool) -> Result<(), Error> {
        let text = match self.float_format {
            FloatFormat::OpenPmix => printf_f(v),
            FloatFormat::RoundTrip if single => {
                #[allow(clippy::cast_possible_truncation)] // the value came from an f32
                let f = v as f32;
                format!("{f:?}")
            }
            FloatFormat::RoundTrip => format!("{v:?}"),
        };
        self.string(Some(&text))
    }
}

/// C's `printf("%f", v)`: fixed notation with six decimals; `inf`, `-inf`, `nan`, `-nan`.
pub fn printf_f(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    format!("{v:.6}")
}

/// Reads encoded values from a byte slice.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The bytes not yet read, without reading them.
    pub fn unread(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }

    pub fn byte(&mut self, what: &str) -> Result<u8, Error> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| Error::read_past_end(what))?;
        self.pos += 1;
        Ok(b)
    }

    pub fn raw(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        if n > self.remaining() {
            return Err(Error::read_past_end(what));
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    #[inline]
    pub fn varint(&mut self, what: &str) -> Result<u64, Error> {
        // Most integers on the wire (counts, lengths, small values) fit in one byte.
        if let Some(&b) = self.bytes.get(self.pos)
            && b < 0x80
        {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        let mut v = 0u64;
        for i in 0..8 {
            let b = self.byte(what)?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        let last = self.byte(what)?;
        Ok(v | (u64::from(last) << 56))
    }

    pub fn zigzag(&mut self, what: &str) -> Result<i64, Error> {
        let u = self.varint(what)?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    pub fn int32(&mut self, what: &str) -> Result<i32, Error> {
        let v = self.zigzag(what)?;
        i32::try_from(v).map_err(|_| out_of_range(what, v))
    }

    pub fn int16(&mut self, what: &str) -> Result<i16, Error> {
        let v = self.zigzag(what)?;
        i16::try_from(v).map_err(|_| out_of_range(what, v))
    }

    pub fn uint32(&mut self, what: &str) -> Result<u32, Error> {
        let v = self.varint(what)?;
        u32::try_from(v).map_err(|_| out_of_range(what, v))
    }

    pub fn uint16(&mut self, what: &str) -> Result<u16, Error> {
        let v = self.varint(what)?;
        u16::try_from(v).map_err(|_| out_of_range(what, v))
    }

    pub fn data_type(&mut self, what: &str) -> Result<crate::model::DataType, Error> {
        Ok(crate::model::DataType(self.uint16(what)?))
    }

    /// A non-negative count or length as `INT32`, bounded by what the remaining bytes could
    /// hold at `min_size` bytes per item, so a forged count cannot cause a huge allocation.
    pub fn count(&mut self, what: &str, min_size: usize) -> Result<usize, Error> {
        let n = self.int32(what)?;
        self.check_count(what, i64::from(n), min_size)
    }

    /// A count as `PMIX_SIZE`, bounded as [`Reader::count`].
    pub fn size_count(&mut self, what: &str, min_size: usize) -> Result<usize, Error> {
        let n = self.varint(what)?;
        self.check_count(what, i64::try_from(n).unwrap_or(i64::MAX), min_size)
    }

    fn check_count(&self, what: &str, n: i64, min_size: usize) -> Result<usize, Error> {
        let n = usize::try_from(n).map_err(|_| {
            Error::decode(
                Status::ERR_UNPACK_FAILURE,
                format!("{what}: negative count {n}"),
            )
        })?;
        if n.saturating_mul(min_size.max(1)) > self.remaining() {
            return Err(Error::decode(
                Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER,
                format!(
                    "{what}: count {n} exceeds the {} bytes left",
                    self.remaining()
                ),
            ));
        }
        Ok(n)
    }

    /// A `PMIX_STRING` that names something this crate reads as text (a key, a namespace,
    /// an attribute's name); a zero length is a NULL string.
    ///
    /// The bytes must be UTF-8; a string holding a NUL before its end is cut there, which is
    /// what a C reader of the same bytes sees. Data, which may be in any encoding, is read
    /// with [`Reader::text`].
    pub fn string(&mut self, what: &str) -> Result<Option<String>, Error> {
        let Some(bytes) = self.c_string(what)? else {
            return Ok(None);
        };
        let text = std::str::from_utf8(bytes).map_err(|e| {
            Error::decode(
                Status::ERR_UNPACK_FAILURE,
                format!("{what}: string is not UTF-8 ({e})"),
            )
        })?;
        Ok(Some(text.to_string()))
    }

    /// A `PMIX_STRING` of any bytes but NUL, kept as they came; a zero length is a NULL
    /// string, and a NUL before the end cuts the string there, as in [`Reader::string`].
    pub fn text(&mut self, what: &str) -> Result<Option<Text>, Error> {
        Ok(self.c_string(what)?.map(Text::from))
    }

    /// The bytes of a length-prefixed C string before its first NUL.
    fn c_string(&mut self, what: &str) -> Result<Option<&'a [u8]>, Error> {
        let n = self.count(what, 1)?;
        if n == 0 {
            return Ok(None);
        }
        let raw = self.raw(n, what)?;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        if end == raw.len() {
            return Err(Error::decode(
                Status::ERR_UNPACK_FAILURE,
                format!("{what}: string of {n} bytes has no terminating NUL"),
            ));
        }
        Ok(Some(&raw[..end]))
    }

    /// A NUL-terminated byte string without length prefix; returns the bytes before the NUL.
    pub fn cstr_bytes(&mut self, what: &str) -> Result<Vec<u8>, Error> {
        let rest = &self.bytes[self.pos..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| Error::read_past_end(what))?;
        self.pos += end + 1;
        Ok(rest[..end].to_vec())
    }

    /// A `PMIX_SIZE` length and that many bytes.
    pub fn sized_bytes(&mut self, what: &str) -> Result<Vec<u8>, Error> {
        let n = self.size_count(what, 1)?;
        Ok(self.raw(n, what)?.to_vec())
    }

    /// A float or double written as decimal text.
    pub fn float(&mut self, what: &str) -> Result<f64, Error> {
        let text = self.string(what)?.unwrap_or_default();
        parse_c_float(&text).ok_or_else(|| {
            Error::decode(
                Status::ERR_UNPACK_FAILURE,
                format!("{what}: {text:?} is not a number"),
            )
        })
    }
}

fn out_of_range(what: &str, v: impl std::fmt::Display) -> Error {
    Error::decode(
        Status::ERR_UNPACK_FAILURE,
        format!("{what}: value {v} out of range"),
    )
}

/// Parse what C's `%f` (or Rust's `{:?}`) wrote, including `nan`, `-nan`, `inf`, `-inf`.
fn parse_c_float(text: &str) -> Option<f64> {
    let t = text.trim();
    let (negative, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let magnitude = match body.to_ascii_lowercase().as_str() {
        "nan" => f64::NAN,
        "inf" | "infinity" => f64::INFINITY,
        _ => body.parse::<f64>().ok()?,
    };
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: impl FnOnce(&mut Writer)) -> Vec<u8> {
        let mut w = Writer::new(FloatFormat::OpenPmix);
        f(&mut w);
        w.into_bytes()
    }

    #[test]
    fn varint_uses_a_full_ninth_byte() {
        assert_eq!(
            enc(|w| w.varint(1 << 63)),
            [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80]
        );
        assert_eq!(enc(|w| w.varint(u64::MAX)), [0xff; 9]);
        assert_eq!(enc(|w| w.varint(300)), [0xac, 0x02]);
        for v in [
            0,
            1,
            127,
            128,
            u64::from(u32::MAX),
            1 << 56,
            (1 << 56) - 1,
            u64::MAX,
        ] {
            let bytes = enc(|w| w.varint(v));
            assert_eq!(Reader::new(&bytes).varint("t").unwrap(), v);
        }
    }

    #[test]
    fn zigzag_matches_openpmix_vectors() {
        assert_eq!(enc(|w| w.zigzag(-1)), [0x01]);
        assert_eq!(enc(|w| w.zigzag(-70000)), [0xdf, 0xc5, 0x08]);
        assert_eq!(
            enc(|w| w.zigzag(-5_000_000_000)),
            [0xff, 0xc7, 0xaf, 0xa0, 0x25]
        );
        for v in [i64::MIN, -1, 0, 1, i64::MAX] {
            let bytes = enc(|w| w.zigzag(v));
            assert_eq!(Reader::new(&bytes).zigzag("t").unwrap(), v);
        }
    }

    #[test]
    fn huge_claimed_length_is_an_error_not_an_allocation() {
        // A string claiming 2^31-1 bytes in a 10-byte buffer.
        let mut bytes = enc(|w| w.int32(i32::MAX));
        bytes.extend_from_slice(&[0; 5]);
        let err = Reader::new(&bytes).string("s").unwrap_err();
        assert_eq!(err.status(), Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        let bytes = enc(|w| w.varint(4 << 30));
        let err = Reader::new(&bytes).sized_bytes("b").unwrap_err();
        assert_eq!(err.status(), Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    }

    #[test]
    fn floats_print_like_c_and_parse_back() {
        assert_eq!(printf_f(1.5), "1.500000");
        assert_eq!(printf_f(-0.0000001), "-0.000000");
        assert_eq!(printf_f(f64::NEG_INFINITY), "-inf");
        assert_eq!(parse_c_float("-nan").map(f64::is_nan), Some(true));
        assert_eq!(parse_c_float("2.250000"), Some(2.25));
        assert_eq!(parse_c_float("abc"), None);
    }
}
