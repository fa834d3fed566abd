//! A simulator scenario file of arbitrary bytes, read by `sim::scenario::Scenario::parse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = sim::scenario::Scenario::parse(text);
    }
});
