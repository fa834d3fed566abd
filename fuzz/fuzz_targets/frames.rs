//! The `frames` parser(s) on arbitrary bytes; the checks live in `pmix::fuzzing::frames`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pmix::fuzzing::frames(data);
});
