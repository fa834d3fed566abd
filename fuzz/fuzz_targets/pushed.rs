//! The `pushed` parser(s) on arbitrary bytes; the checks live in `pmix::fuzzing::pushed`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pmix::fuzzing::pushed(data);
});
