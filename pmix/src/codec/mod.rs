//! The `PMIx_Data_*` buffer in OpenPMIx 4.2's v41 encoding (DESIGN §3.2).
//!
//! | module | contents |
//! |---|---|
//! | [`primitive`] | varints (flex128), zigzag, strings, floats as text |
//! | [`types`] | the [`Codec`] of every data type, and the dynamic payload codec of [`Value`](crate::model::Value) |
//! | [`buffer`] | [`DataBuffer`]: pack, unpack, load, unload, copy_payload, both buffer types |
//! | [`compress`] | `PMIx_Data_compress` / `decompress` and the compressed value types |
//! | `print` | `PMIx_Data_print`: values as text |
//!
//! Byte-exactness is checked against the golden vectors that OpenPMIx 4.2.2 produced
//! (`tests/golden.rs`). Decoding never panics and never allocates more than the input could
//! describe (`fuzz/fuzz_targets/unpack.rs`).

pub mod buffer;
pub mod compress;
#[doc(hidden)]
pub mod fuzzing;
pub mod primitive;
pub mod print;
mod regex;
mod structs;
pub mod types;

pub use buffer::{BufferType, DataBuffer};
pub use primitive::FloatFormat;
pub use types::{Codec, Size};

/// A copy of a value (`PMIx_Data_copy`): Rust values own their data, so this is a clone; it
/// exists to give the standard's operation a name.
pub fn copy(value: &crate::model::Value) -> crate::model::Value {
    value.clone()
}

/// Decode bytes as a sequence of pack calls of type `t` until the buffer is empty; the fuzz
/// targets and golden tests use it. Returns the values of each call.
pub fn unpack_all(
    bytes: &[u8],
    buffer_type: BufferType,
    t: crate::model::DataType,
) -> Result<Vec<Vec<crate::model::Value>>, crate::Error> {
    let mut buf = DataBuffer::load(bytes.to_vec(), buffer_type);
    let mut calls = Vec::new();
    while !buf.unread().is_empty() {
        calls.push(buf.unpack_values(t, usize::MAX)?);
    }
    Ok(calls)
}
