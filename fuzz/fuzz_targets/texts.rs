//! The `texts` parser(s) on arbitrary bytes; the checks live in `pmix::fuzzing::texts`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pmix::fuzzing::texts(data);
});
