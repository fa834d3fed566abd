//! `pmix_data_buffer_t` and the `PMIx_Data_*` operations on it (PMIx v5.0 chapter 11).
//!
//! Every pack call writes a count (`INT32`) and then the values. In a fully described buffer
//! the count is preceded by the `PMIX_INT32` type code and the values by their type code, so
//! the reader can check what it reads; in a non-described buffer (OpenPMIx's default) nothing
//! is tagged and the reader must know the schema. Fields nested inside a value are untagged
//! in both.
//!
//! Unpacking is all-or-nothing: a call that fails leaves the read position where it was.

use super::primitive::{FloatFormat, Reader, Writer};
use super::types::{Codec, decode_payload, encode_payload};
use crate::Error;
use crate::model::{DataType, Status, Value};

/// The two buffer types of OpenPMIx (`pmix_bfrop_buffer_type_t`), with their wire values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BufferType {
    /// `PMIX_BFROP_BUFFER_NON_DESC` (1): no type tags (release builds of OpenPMIx).
    #[default]
    NonDescribed,
    /// `PMIX_BFROP_BUFFER_FULLY_DESC` (2): a type tag before every count and value group.
    FullyDescribed,
}

impl BufferType {
    /// The value announced in the connect handshake and `PMIX_BFROP_BUFFER_TYPE`.
    pub fn wire_value(self) -> u8 {
        match self {
            BufferType::NonDescribed => 1,
            BufferType::FullyDescribed => 2,
        }
    }

    pub fn from_wire(v: u8) -> Option<Self> {
        match v {
            1 => Some(BufferType::NonDescribed),
            2 => Some(BufferType::FullyDescribed),
            _ => None,
        }
    }
}

/// A buffer of packed values: bytes, a read position and a buffer type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataBuffer {
    bytes: Vec<u8>,
    read: usize,
    buffer_type: BufferType,
    float_format: FloatFormat,
}

impl DataBuffer {
    /// An empty non-described buffer, as `PMIx_Data_buffer_create` makes.
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_type(buffer_type: BufferType) -> Self {
        DataBuffer {
            buffer_type,
            ..Self::default()
        }
    }

    /// How floats are written (OpenPMIx's `%f` by default).
    #[must_use]
    pub fn with_float_format(mut self, float_format: FloatFormat) -> Self {
        self.float_format = float_format;
        self
    }

    /// A buffer holding `bytes`, to unpack from the start (`PMIx_Data_load`).
    pub fn load(bytes: Vec<u8>, buffer_type: BufferType) -> Self {
        DataBuffer {
            bytes,
            read: 0,
            buffer_type,
            float_format: FloatFormat::default(),
        }
    }

    /// Replace the buffer's content with a copy of `payload`, to unpack from the start
    /// (`PMIx_Data_embed`; unlike [`DataBuffer::load`] the caller keeps its bytes).
    pub fn embed(&mut self, payload: &[u8]) {
        self.bytes = payload.to_vec();
        self.read = 0;
    }

    /// The bytes not yet unpacked, leaving the buffer empty (`PMIx_Data_unload`).
    pub fn unload(&mut self) -> Vec<u8> {
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.drain(..self.read);
        self.read = 0;
        bytes
    }

    /// Append the bytes `src` has not yet unpacked (`PMIx_Data_copy_payload`); the source is
    /// left as it is. Buffers of different types do not mix (`PMIX_ERR_BAD_PARAM`).
    pub fn copy_payload(&mut self, src: &DataBuffer) -> Result<(), Error> {
        if src.buffer_type != self.buffer_type {
            return Err(Error::BadParam(
                "cannot copy a payload between buffers of different types".into(),
            ));
        }
        self.bytes.extend_from_slice(src.unread());
        Ok(())
    }

    pub fn buffer_type(&self) -> BufferType {
        self.buffer_type
    }

    /// All bytes packed so far, read or not.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes not yet unpacked.
    pub fn unread(&self) -> &[u8] {
        &self.bytes[self.read..]
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Whether every packed byte has been unpacked.
    pub fn is_exhausted(&self) -> bool {
        self.read >= self.bytes.len()
    }

    fn writer(&mut self) -> Writer {
        Writer {
            bytes: std::mem::take(&mut self.bytes),
            float_format: self.float_format,
        }
    }

    fn write_header(&self, w: &mut Writer, n: usize, t: DataType) -> Result<(), Error> {
        let described = self.buffer_type == BufferType::FullyDescribed;
        if described {
            w.data_type(DataType::INT32);
        }
        w.length(n)?;
        if described {
            w.data_type(t);
        }
        Ok(())
    }

    /// Run a pack step; on failure the buffer is left as it was.
    fn packing(
        &mut self,
        f: impl FnOnce(&Self, &mut Writer) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut w = self.writer();
        let mark = w.bytes.len();
        let result = f(self, &mut w);
        if result.is_err() {
            w.bytes.truncate(mark);
        }
        self.bytes = w.bytes;
        result
    }

    /// Pack `values` in one call (`PMIx_Data_pack` with the type of `T`).
    pub fn pack<T: Codec>(&mut self, values: &[T]) -> Result<(), Error> {
        self.packing(|this, w| {
            this.write_header(w, values.len(), T::DATA_TYPE)?;
            values.iter().try_for_each(|v| v.encode(w))
        })
    }

    /// Pack `values` as type `t` in one call, the dynamic form of [`DataBuffer::pack`] that
    /// `PMIx_Data_pack` needs: every value must have type `t`. A type this codec does not
    /// know is `PMIX_ERR_UNKNOWN_DATA_TYPE` whatever the values (v5.0 §11.3.1), checked
    /// before the values' types.
    pub fn pack_values(&mut self, t: DataType, values: &[Value]) -> Result<(), Error> {
        if t == DataType::VALUE {
            return self.pack(values);
        }
        if !t.is_packable() {
            return Err(Error::Encode {
                status: Status::ERR_UNKNOWN_DATA_TYPE,
                reason: format!("data type {} cannot be packed", t.0),
            });
        }
        if let Some(v) = values.iter().find(|v| v.data_type() != t) {
            return Err(Error::TypeMismatch {
                expected: format!("data type {}", t.0),
                found: format!("data type {}", v.data_type().0),
            });
        }
        self.packing(|this, w| {
            this.write_header(w, values.len(), t)?;
            values.iter().try_for_each(|v| encode_payload(w, v))
        })
    }

    /// Read the header of the next pack call, check it against `t`, and return the count.
    fn read_header(&self, r: &mut Reader<'_>, t: DataType) -> Result<usize, Error> {
        let described = self.buffer_type == BufferType::FullyDescribed;
        if described {
            expect_tag(r, DataType::INT32)?;
        }
        let n = r.count("pack count", 0)?;
        if described {
            expect_tag(r, t)?;
        }
        Ok(n)
    }

    /// Run an unpack step; on failure the read position is left as it was.
    fn unpacking<R>(
        &mut self,
        f: impl FnOnce(&Self, &mut Reader<'_>) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let mut r = Reader::new(&self.bytes[self.read..]);
        let out = f(self, &mut r)?;
        self.read += r.position();
        Ok(out)
    }

    /// Unpack the values of the next pack call, which must hold at most `max` values
    /// (`PMIx_Data_unpack`). More than `max` is `PMIX_ERR_UNPACK_INADEQUATE_SPACE`.
    pub fn unpack<T: Codec>(&mut self, max: usize) -> Result<Vec<T>, Error> {
        self.unpacking(|this, r| {
            let n = this.read_header(r, T::DATA_TYPE)?;
            check_space(n, max)?;
            collect_n(n, || T::decode(r, 0))
        })
    }

    /// Unpack the next pack call's values as type `t` (the dynamic form of
    /// [`DataBuffer::unpack`]).
    pub fn unpack_values(&mut self, t: DataType, max: usize) -> Result<Vec<Value>, Error> {
        if t == DataType::VALUE {
            return self.unpack(max);
        }
        if !t.is_packable() {
            return Err(Error::decode(
                Status::ERR_UNKNOWN_DATA_TYPE,
                format!("data type {}", t.0),
            ));
        }
        self.unpacking(|this, r| {
            let n = this.read_header(r, t)?;
            check_space(n, max)?;
            collect_n(n, || decode_payload(r, t, 0))
        })
    }

    /// As [`DataBuffer::unpack_values`], with OpenPMIx's C form of too little room: when the
    /// next pack call holds more than `max` values, its first `max` are read and returned
    /// with `false` (not all were read: the rest of that pack call is left where no later
    /// unpack can read it as a whole), `true` otherwise. What `PMIx_Data_unpack` of the
    /// library hands a C caller, who gets the values that fit and
    /// `PMIX_ERR_UNPACK_INADEQUATE_SPACE`.
    pub fn unpack_values_up_to(
        &mut self,
        t: DataType,
        max: usize,
    ) -> Result<(Vec<Value>, bool), Error> {
        if t != DataType::VALUE && !t.is_packable() {
            return Err(Error::decode(
                Status::ERR_UNKNOWN_DATA_TYPE,
                format!("data type {}", t.0),
            ));
        }
        self.unpacking(|this, r| {
            let n = this.read_header(r, t)?;
            let taken = n.min(max);
            let values = if t == DataType::VALUE {
                collect_n(taken, || Value::decode(r, 0))?
            } else {
                collect_n(taken, || decode_payload(r, t, 0))?
            };
            Ok((values, taken == n))
        })
    }

    /// In a fully described buffer, the type of the next pack call's values.
    pub fn peek_type(&self) -> Result<DataType, Error> {
        if self.buffer_type != BufferType::FullyDescribed {
            return Err(Error::NotSupported(
                "a non-described buffer carries no types".into(),
            ));
        }
        let mut r = Reader::new(self.unread());
        expect_tag(&mut r, DataType::INT32)?;
        r.count("pack count", 0)?;
        r.data_type("type tag")
    }
}

fn expect_tag(r: &mut Reader<'_>, want: DataType) -> Result<(), Error> {
    let got = r.data_type("type tag")?;
    if got == want {
        Ok(())
    } else {
        Err(Error::decode(
            Status::ERR_PACK_MISMATCH,
            format!("expected type {}, buffer holds type {}", want.0, got.0),
        ))
    }
}

/// `n` results of `f` in a vector allocated once (`n` is already bounded by the input size).
fn collect_n<T>(n: usize, mut f: impl FnMut() -> Result<T, Error>) -> Result<Vec<T>, Error> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(f()?);
    }
    Ok(out)
}

fn check_space(n: usize, max: usize) -> Result<(), Error> {
    if n > max {
        return Err(Error::decode(
            Status::ERR_UNPACK_INADEQUATE_SPACE,
            format!("{n} values packed, room for {max}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpacking_into_too_little_room_reads_the_values_that_fit() {
        let mut buf = DataBuffer::new();
        buf.pack(&[1u32, 2, 3]).expect("pack");
        let (values, all) = buf
            .unpack_values_up_to(DataType::UINT32, 2)
            .expect("partial");
        assert_eq!(values, [Value::Uint32(1), Value::Uint32(2)]);
        assert!(!all);
        let mut buf = DataBuffer::new();
        buf.pack(&[4u32]).expect("pack");
        let (values, all) = buf.unpack_values_up_to(DataType::UINT32, 2).expect("whole");
        assert_eq!((values, all), (vec![Value::Uint32(4)], true));
    }

    #[test]
    fn unload_returns_only_the_unread_bytes_and_embed_restarts() {
        let mut buf = DataBuffer::new();
        buf.pack(&[1u8]).expect("pack");
        buf.pack(&[2u8]).expect("pack");
        assert_eq!(buf.unpack::<u8>(1).expect("first"), [1]);
        let rest = buf.unload();
        assert_eq!(rest, [0x02, 0x02]);
        assert!(buf.is_empty());
        buf.embed(&rest);
        assert_eq!(buf.unpack::<u8>(1).expect("second"), [2]);
    }

    #[test]
    fn copy_payload_appends_unread_bytes_of_the_same_buffer_type_only() {
        let mut src = DataBuffer::new();
        src.pack(&[7u32]).expect("pack");
        let mut dst = DataBuffer::new();
        dst.copy_payload(&src).expect("same type");
        assert_eq!(dst.unpack::<u32>(1).expect("copied"), [7]);
        assert_eq!(src.unread().len(), 2, "source left intact");
        let mut described = DataBuffer::with_type(BufferType::FullyDescribed);
        assert_eq!(
            described.copy_payload(&src).expect_err("mixed").status(),
            Status::ERR_BAD_PARAM
        );
    }

    #[test]
    fn an_unknown_type_is_refused_as_unknown_before_the_values_are_looked_at() {
        let mut buf = DataBuffer::new();
        let err = buf
            .pack_values(DataType(400), &[Value::Uint32(1)])
            .expect_err("unknown type");
        assert_eq!(err.status(), Status::ERR_UNKNOWN_DATA_TYPE);
        assert!(buf.is_empty(), "nothing packed");
        let err = buf
            .pack_values(DataType::STRING, &[Value::Uint32(1)])
            .expect_err("mismatch");
        assert_eq!(err.status(), Status::ERR_TYPE_MISMATCH);
    }
}
