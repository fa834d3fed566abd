//! A rank of `cargo xtask bench load`: one of the first N ranks of a job whose other ranks
//! are hostile. It connects, puts 256 bytes, commits, fences with the data collected over the
//! N ranks (named: the hostile ranks never fence), gets the next rank's value, fences again
//! without data, and prints one line: `load RANK init_us fence_us get_us barrier_us`.
//!
//! `rust_load_client N`

// A benchmark reads the clock; it is a separate program, never reachable from `sim`.
#![allow(clippy::disallowed_methods)]

use std::process::ExitCode;
use std::time::Instant;

use pmix::client::blocking::Client;
use pmix::model::{Info, Proc, Rank, Scope, Value, attr};

fn micros(t0: Instant) -> u128 {
    t0.elapsed().as_micros()
}

fn run() -> Result<String, String> {
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .ok_or("usage: rust_load_client N")?;
    let t0 = Instant::now();
    let c = Client::init().map_err(|e| format!("init: {e}"))?;
    let init = micros(t0);
    let me = c.proc().clone();
    let ours: Vec<Proc> = (0..n)
        .map(|r| Proc::new(me.nspace.clone(), Rank(r)))
        .collect();
    let value = Value::string(format!("{:0>256}", me.rank.0));
    c.put(Scope::GLOBAL, "load.value", value)
        .map_err(|s| format!("put: {s:?}"))?;
    c.commit().map_err(|s| format!("commit: {s:?}"))?;
    let t0 = Instant::now();
    c.fence(&ours, &[Info::new(attr::COLLECT_DATA, true)])
        .map_err(|s| format!("fence: {s:?}"))?;
    let fence = micros(t0);
    let peer = &ours[((me.rank.0 + 1) % n) as usize];
    let t0 = Instant::now();
    let got = c
        .get(Some(peer), "load.value", &[])
        .map_err(|s| format!("get: {s:?}"))?;
    let get = micros(t0);
    if got.as_str() != Some(format!("{:0>256}", peer.rank.0).as_str()) {
        return Err(format!("get of {peer}: {got:?}"));
    }
    let t0 = Instant::now();
    c.fence(&ours, &[]).map_err(|s| format!("barrier: {s:?}"))?;
    let barrier = micros(t0);
    c.finalize().map_err(|s| format!("finalize: {s:?}"))?;
    Ok(format!("load {} {init} {fence} {get} {barrier}", me.rank.0))
}

fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            println!("FAIL {why}");
            ExitCode::FAILURE
        }
    }
}
