//! The `credential` parser(s) on arbitrary bytes; the checks live in `pmix::fuzzing::credential`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pmix::fuzzing::credential(data);
});
