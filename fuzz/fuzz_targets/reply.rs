//! The `reply` parser(s) on arbitrary bytes; the checks live in `pmix::fuzzing::reply`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pmix::fuzzing::reply(data);
});
