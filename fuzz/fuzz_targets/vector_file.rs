//! A conformance vector file of arbitrary bytes, loaded and resolved as the runners do; the
//! steps live in `conformance::fuzzing::vector_file`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    conformance::fuzzing::vector_file(data);
});
