//! The C entry points of `libpmix.so.2` called with arbitrary arguments; the calls and checks
//! live in `pmix_capi::fuzzing::c_entry_points`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pmix_capi::fuzzing::c_entry_points(data);
});
