//! The C entry points called with arbitrary arguments, for the `c_entry_points` fuzz target
//! (a thin shell over [`c_entry_points`]). Arguments are arbitrary where a C caller may pass
//! anything and be answered with a status: the bytes of a buffer, type codes, counts (up to
//! the storage given, or past any sane bound), codes to name, keys and namespaces of any
//! length, calls before `PMIx_Init`. Pointers are always to storage of the size the function
//! is told: a lying pointer is the caller's undefined behaviour, in C as here.
//!
//! Checks beyond "no crash": what unpacks packs again; a value read from the wire transfers
//! to an equal copy; a compressed block decompresses to its input; a key or namespace loaded
//! from any string ends within its array; every `*_string` function answers a string; calls
//! that need a connection fail before one.

use std::ffi::{CStr, c_char, c_void};
use std::ptr;

use pmix::model::{DataType, Status};

use crate::args::{Array, Data, In, InOut, Objects, Out, Str, ValueOut};
use crate::boundary::{c_bytes, free};
use crate::data::{
    PMIx_Data_compress, PMIx_Data_copy, PMIx_Data_decompress, PMIx_Data_load, PMIx_Data_pack,
    PMIx_Data_unpack,
};
use crate::support::{
    PMIx_Data_range_string, PMIx_Data_type_string, PMIx_Error_string, PMIx_Info_load,
    PMIx_Persistence_string, PMIx_Proc_state_string, PMIx_Scope_string, PMIx_Value_compare,
    PMIx_Value_destruct, PMIx_Value_xfer,
};
use crate::types::{CByteObject, CDataBuffer, CInfo, CProc, CValue};
use crate::values::{destruct_object, object_size, read_value};

/// The bytes of the input, read front to back.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*first)
    }

    fn take(&mut self, n: usize) -> &[u8] {
        let (taken, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        taken
    }
}

/// Call C entry points as the steps of `data` say; see the module's text.
pub fn c_entry_points(data: &[u8]) {
    let mut input = Input(data);
    while let Some(kind) = input.byte() {
        let Some(len) = input.byte() else { return };
        let arg = input.take(usize::from(len) * 4).to_vec();
        match kind % 6 {
            0 => drop(unpack_any(&arg)),
            1 => value_from_wire(&arg),
            2 => names_of_codes(&arg),
            3 => drop(compress_round_trip(&arg)),
            4 => drop(keys_of_any_length(&arg)),
            _ => before_init(&arg),
        }
    }
}

/// A buffer holding `bytes`, for the library to unpack.
struct Buffer(CDataBuffer);

impl Buffer {
    fn holding(bytes: &[u8]) -> Option<Buffer> {
        let mut b = Buffer(CDataBuffer::zeroed());
        if bytes.is_empty() {
            return Some(b);
        }
        let mut payload = CByteObject {
            bytes: c_bytes(bytes).ok()?,
            size: bytes.len(),
        };
        // SAFETY: a zeroed buffer and a byte object whose block is libc's.
        let (buffer, payload) = unsafe { (InOut::new(&raw mut b.0), InOut::new(&raw mut payload)) };
        let rc = PMIx_Data_load(buffer, payload);
        assert_eq!(rc, Status::SUCCESS.0, "a buffer loads any bytes");
        Some(b)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the buffer's block is libc's or NULL; nothing else holds it.
        unsafe { free(self.0.base_ptr) };
    }
}

/// Storage for `n` objects of `size` bytes, aligned for any of them.
fn storage(n: usize, size: usize) -> Vec<u64> {
    vec![0u64; (n * size).div_ceil(8).max(1)]
}

/// Unpack objects of the type of byte 0, as many as byte 1 says (1–4), from the rest; what
/// unpacks must pack again. The number of objects unpacked.
fn unpack_any(arg: &[u8]) -> usize {
    let [t, n, bytes @ ..] = arg else { return 0 };
    let t = DataType(u16::from(*t));
    let Some(size) = object_size(t) else { return 0 };
    let n = usize::from(n % 4) + 1;
    let Some(mut buffer) = Buffer::holding(bytes) else {
        return 0;
    };
    let mut dest = storage(n, size);
    let mut count = n as i32;
    // SAFETY: `dest` has room for `count` objects of the type; the buffer is loaded.
    let (b, objects, count_arg) = unsafe {
        (
            InOut::new(&raw mut buffer.0),
            Objects::new(dest.as_mut_ptr().cast()),
            InOut::new(&raw mut count),
        )
    };
    let rc = PMIx_Data_unpack(In::null(), b, objects, count_arg, t.0);
    let unpacked = usize::try_from(count).unwrap_or(0);
    assert!(
        unpacked <= n,
        "{unpacked} objects unpacked into room for {n}"
    );
    if rc != Status::SUCCESS.0 {
        // Too little room: the objects that fit were written, and are the caller's.
        if rc == Status::ERR_UNPACK_INADEQUATE_SPACE.0 {
            release(t, &mut dest, size, unpacked);
        }
        return 0;
    }
    let mut again = Buffer(CDataBuffer::zeroed());
    // SAFETY: `dest` holds `unpacked` objects of the type, as the library wrote them.
    let (b, objects) = unsafe {
        (
            InOut::new(&raw mut again.0),
            Objects::new(dest.as_mut_ptr().cast()),
        )
    };
    let rc = PMIx_Data_pack(In::null(), b, objects, unpacked as i32, t.0);
    assert_eq!(rc, Status::SUCCESS.0, "what unpacked as {t:?} packs again");
    release(t, &mut dest, size, unpacked);
    unpacked
}

/// Release the first `n` objects of type `t` (of `size` bytes each) the library wrote into
/// `dest`.
fn release(t: DataType, dest: &mut [u64], size: usize, n: usize) {
    for i in 0..n {
        // SAFETY: each object was written by an unpack and is released once.
        unsafe { destruct_object(t, dest.as_mut_ptr().cast::<u8>().add(i * size).cast()) };
    }
}

/// A `pmix_value_t` unpacked from the bytes: transferred, compared and copied.
fn value_from_wire(arg: &[u8]) {
    let Some(mut buffer) = Buffer::holding(arg) else {
        return;
    };
    let mut value = CValue::zeroed();
    let mut count = 1;
    // SAFETY: room for one value.
    let (b, objects, count_arg) = unsafe {
        (
            InOut::new(&raw mut buffer.0),
            Objects::new((&raw mut value).cast()),
            InOut::new(&raw mut count),
        )
    };
    let rc = PMIx_Data_unpack(In::null(), b, objects, count_arg, DataType::VALUE.0);
    if rc == Status::ERR_UNPACK_INADEQUATE_SPACE.0 && count == 1 {
        // SAFETY: the one value that fit is the caller's, released once.
        PMIx_Value_destruct(unsafe { InOut::new(&raw mut value) });
    }
    if rc != Status::SUCCESS.0 {
        return;
    }
    let mut copy = CValue::zeroed();
    // SAFETY: a value the library wrote; a zeroed destination.
    let rc = PMIx_Value_xfer(unsafe { Out::new(&raw mut copy) }, unsafe {
        In::new(&raw const value)
    });
    if rc == Status::SUCCESS.0 {
        // SAFETY: two values the library wrote.
        let (a, b) = unsafe { (In::new(&raw const value), In::new(&raw const copy)) };
        let order = PMIx_Value_compare(a, b);
        // A float's NaN is not equal to itself, at any depth; anything else is.
        // SAFETY: a value the library wrote.
        let floats = unsafe { read_value(&value) }.map_or(true, |v| {
            v.holds_type(&|t| t == DataType::FLOAT || t == DataType::DOUBLE)
        });
        assert!(
            order == 0 || floats,
            "a value and its transfer compare as {order}"
        );
        // SAFETY: the copy is the caller's and released once.
        PMIx_Value_destruct(unsafe { InOut::new(&raw mut copy) });
    }
    let mut dup: *mut c_void = ptr::null_mut();
    // SAFETY: a value the library wrote; `dup` receives a block of libc's.
    let (out, src) = unsafe { (Out::new(&raw mut dup), Data::new((&raw const value).cast())) };
    if PMIx_Data_copy(out, src, DataType::VALUE.0) == Status::SUCCESS.0 {
        // SAFETY: a value the copy allocated, released once with its block.
        unsafe {
            PMIx_Value_destruct(InOut::new(dup.cast()));
            free(dup);
        }
    }
    // SAFETY: the unpacked value is released once.
    PMIx_Value_destruct(unsafe { InOut::new(&raw mut value) });
}

/// Every code of the bytes named by the `*_string` functions: a string each time.
fn names_of_codes(arg: &[u8]) {
    for word in arg.chunks(4) {
        let mut w = [0u8; 4];
        w[..word.len()].copy_from_slice(word);
        let n = u32::from_le_bytes(w);
        let texts = [
            PMIx_Error_string(n as i32),
            PMIx_Proc_state_string(w[0]),
            PMIx_Scope_string(w[1]),
            PMIx_Persistence_string(w[2]),
            PMIx_Data_range_string(w[3]),
            PMIx_Data_type_string(n as u16),
        ];
        for p in texts {
            assert!(!p.is_null(), "a *_string function answered NULL for {n}");
            // SAFETY: the library's static, NUL-terminated text.
            let _ = unsafe { CStr::from_ptr(p) };
        }
    }
}

/// Compressed, the bytes decompress to themselves. Whether the library compressed them.
fn compress_round_trip(arg: &[u8]) -> bool {
    let (mut packed, mut packed_len): (*mut u8, usize) = (ptr::null_mut(), 0);
    // SAFETY: `arg` holds `arg.len()` bytes; the outputs are writable.
    let (input, to, n) = unsafe {
        (
            Array::new(arg.as_ptr()),
            Out::new(&raw mut packed),
            Out::new(&raw mut packed_len),
        )
    };
    if !PMIx_Data_compress(input, arg.len(), to, n) {
        return false;
    }
    let (mut out, mut out_len): (*mut u8, usize) = (ptr::null_mut(), 0);
    // SAFETY: the block the compression allocated, of its length.
    let (input, to, n) = unsafe {
        (
            Array::new(packed.cast_const()),
            Out::new(&raw mut out),
            Out::new(&raw mut out_len),
        )
    };
    let ok = PMIx_Data_decompress(input, packed_len, to, n);
    assert!(ok, "a compressed block decompresses");
    // SAFETY: `out` holds `out_len` bytes the library allocated.
    let back = unsafe { std::slice::from_raw_parts(out, out_len) };
    assert_eq!(back, arg, "the bytes come back from compression");
    // SAFETY: both blocks are libc's and released once.
    unsafe {
        free(out);
        free(packed);
    }
    true
}

/// Keys and namespaces loaded from strings of any length end within their arrays. Whether
/// the info took the key.
fn keys_of_any_length(arg: &[u8]) -> bool {
    let text: Vec<u8> = arg
        .iter()
        .map(|b| b.max(&1))
        .copied()
        .cycle()
        .take(arg.len() * 4)
        .chain([0])
        .collect();
    let key = text.as_ptr().cast::<c_char>();
    let mut info = CInfo::zeroed();
    let mut byte = 7u8;
    // SAFETY: a NUL-terminated key and a byte to load.
    let (out, key_arg, data) = unsafe {
        (
            Out::new(&raw mut info),
            Str::new(key),
            Data::new((&raw mut byte).cast()),
        )
    };
    let rc = PMIx_Info_load(out, key_arg, data, DataType::UINT8.0);
    let loaded = rc == Status::SUCCESS.0;
    if loaded {
        assert!(info.key.contains(&0), "a key loaded past its 512 bytes");
    }
    // SAFETY: the info is released once.
    PMIx_Value_destruct(unsafe { InOut::new(&raw mut info.value) });
    let mut proc = CProc::zeroed();
    // SAFETY: a NUL-terminated namespace into a proc.
    unsafe { crate::helpers::names::PMIx_Load_procid(InOut::new(&raw mut proc), Str::new(key), 0) };
    assert!(
        proc.nspace.contains(&0),
        "a namespace loaded past its 256 bytes"
    );
    loaded
}

/// Calls that need the server fail before `PMIx_Init`, whatever their arguments; counts past
/// any sane bound are refused before a slice is made of them.
fn before_init(arg: &[u8]) {
    let key: Vec<u8> = arg.iter().map(|b| *b.max(&1)).chain([0]).collect();
    let mut out: *mut CValue = ptr::null_mut();
    // SAFETY: a NUL-terminated key; `out` is writable.
    let (key, out) = unsafe { (Str::new(key.as_ptr().cast()), ValueOut::new(&raw mut out)) };
    let rc = crate::client::PMIx_Get(In::null(), key, Array::null(), 0, out);
    assert_ne!(rc, Status::SUCCESS.0, "a get answered without a server");
    // Valid processes, so that what refuses the fence is the missing server.
    let mut procs = [CProc::zeroed(); 2];
    for (rank, p) in procs.iter_mut().enumerate() {
        // SAFETY: a proc to fill and a NUL-terminated namespace.
        let (p, job) = unsafe { (InOut::new(p), Str::new(c"job".as_ptr())) };
        crate::helpers::names::PMIx_Load_procid(p, job, rank as u32);
    }
    let count = arg.first().map_or(2, |b| {
        if b & 1 == 0 {
            usize::from(b % 3)
        } else {
            1 << (32 + usize::from(b % 16))
        }
    });
    // SAFETY: `procs` holds 2; a larger count is one no allocation can back.
    let array = unsafe { Array::new(procs.as_ptr()) };
    let rc = crate::client::PMIx_Fence(array, count, Array::null(), 0);
    assert_ne!(
        rc,
        Status::SUCCESS.0,
        "a fence of {count} completed without a server"
    );
    if count <= 2 {
        assert_eq!(rc, Status::ERR_INIT.0, "a fence of {count} before init");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_takes_odd_arguments_without_a_panic() {
        let step = |kind: u8, len: u8, fill: u8, n: usize| {
            let mut v = vec![kind, len];
            v.extend(std::iter::repeat_n(fill, n));
            v
        };
        let inputs = [
            Vec::new(),
            vec![0, 2, 14, 1, 4, 0, 0, 0, 9, 9, 9],
            step(1, 3, 0xff, 20),
            vec![2, 4, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4],
            step(3, 8, b'x', 40),
            step(4, 200, b'k', 900),
            vec![5, 2, 1, 2, 3, 4, 5, 6, 7, 8],
            // A fence of two valid processes before init: PMIX_ERR_INIT.
            vec![5, 1, 2, b'k', b'e', b'y'],
        ];
        for input in inputs {
            c_entry_points(&input);
        }
    }

    #[test]
    fn what_unpacks_packs_again_and_compression_round_trips() {
        let mut packed = Buffer(CDataBuffer::zeroed());
        let values = [5u32, 77];
        // SAFETY: two u32 objects.
        let (b, objects) = unsafe {
            (
                InOut::new(&raw mut packed.0),
                Objects::new(values.as_ptr().cast_mut().cast()),
            )
        };
        let rc = PMIx_Data_pack(In::null(), b, objects, 2, DataType::UINT32.0);
        assert_eq!(rc, Status::SUCCESS.0);
        // SAFETY: the buffer's bytes, as the library wrote them.
        let bytes = unsafe {
            std::slice::from_raw_parts(packed.0.base_ptr.cast::<u8>(), packed.0.bytes_used)
        }
        .to_vec();
        let mut arg = vec![DataType::UINT32.0 as u8, 1];
        arg.extend(&bytes);
        assert_eq!(unpack_any(&arg), 2, "both numbers unpack");
        assert!(compress_round_trip(&b"pmix".repeat(300)));
        // 2,800 bytes of key: loaded, and cut to end within the array.
        assert!(keys_of_any_length(&[b'a'; 700]));
        // Found by the target: a pdata with an empty key (a zeroed struct's, as OpenPMIx
        // packs it) unpacked, then did not pack again.
        let empty_key = [2, 6, b'n', b'k', 0, 0, 0, 4, b's', 3, 4, b'v', 0, 0];
        let mut arg = vec![DataType::PDATA.0 as u8, 0];
        arg.extend(empty_key);
        assert_eq!(unpack_any(&arg), 1, "the pdata unpacks and packs again");
    }
}
