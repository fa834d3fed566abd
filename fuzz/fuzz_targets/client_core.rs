//! The client's core driven by arbitrary sequences of requests, puts, commits, gets, bytes
//! and replies from the server and the connection's loss; the steps and checks live in
//! `pmix::fuzzing::client_core`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pmix::fuzzing::client_core(data);
});
