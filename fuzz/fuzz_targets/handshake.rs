//! The `handshake` parser(s) on arbitrary bytes; the checks live in `pmix::fuzzing::handshake`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pmix::fuzzing::handshake(data);
});
