//! Unpack arbitrary bytes as any data type, in either buffer type.
//! The checks live in `pmix::codec::fuzzing::unpack`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pmix::codec::fuzzing::unpack(data);
});
