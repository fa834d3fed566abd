//! The server's core driven by arbitrary sequences of connects, frames, disconnects, host
//! answers, timeouts and host calls; the steps and checks live in
//! `pmix::fuzzing::server_core`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pmix::fuzzing::server_core(data);
});
