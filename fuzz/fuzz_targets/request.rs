//! The `request` parser(s) on arbitrary bytes; the checks live in `pmix::fuzzing::request`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pmix::fuzzing::request(data);
});
