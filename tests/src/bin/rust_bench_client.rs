//! The Rust client's side of `cargo xtask bench core`: the same loop as
//! `interop/c/bench_client.c`, through `pmix::client::blocking::Client`; rank 0 prints one line
//! of averages in microseconds.

// A benchmark reads the clock; it is a separate program, never reachable from `sim`.
#![allow(clippy::disallowed_methods)]

use std::process::ExitCode;
use std::time::Instant;

use pmix::client::blocking::Client;
use pmix::model::{Info, Proc, Rank, Scope, Value, attr};

fn put_commit(c: &Client, first: u32, count: u32) -> Result<f64, String> {
    let t0 = Instant::now();
    for i in first..first + count {
        c.put(Scope::GLOBAL, &format!("bench.k{i}"), Value::Uint32(i))
            .map_err(|s| format!("put: {s:?}"))?;
        c.commit().map_err(|s| format!("commit: {s:?}"))?;
    }
    Ok(t0.elapsed().as_secs_f64() * 1e6 / f64::from(count))
}

fn run() -> Result<(), String> {
    let iters: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let c = Client::init().map_err(|e| e.to_string())?;
    let me = c.proc().clone();
    let wild = Proc::new(me.nspace.clone(), Rank::WILDCARD);
    let key = attr::JOB_SIZE.wire_key();
    let n = c
        .get(Some(&wild), key, &[])
        .ok()
        .and_then(|v| v.to_u64())
        .ok_or("job size")? as u32;
    let t0 = Instant::now();
    for _ in 0..iters {
        c.get(Some(&wild), key, &[])
            .map_err(|s| format!("get job: {s:?}"))?;
    }
    let get_job = t0.elapsed().as_secs_f64() * 1e6 / f64::from(iters);
    let commit1 = put_commit(&c, 0, 100)?;
    put_commit(&c, 100, 1000)?;
    let commit1000 = put_commit(&c, 1100, 100)?;
    let collect = [Info::new(attr::COLLECT_DATA, true)];
    let fences = (iters / 5).max(1);
    let t0 = Instant::now();
    for _ in 0..fences {
        c.fence(&[], &collect)
            .map_err(|s| format!("fence: {s:?}"))?;
    }
    let fence = t0.elapsed().as_secs_f64() * 1e6 / f64::from(fences);
    // The first get of a peer's key fetches the peer's data from the server (the client's
    // cache is filled on demand); the gets after it are answered from the cache.
    let peer = Proc::new(me.nspace.clone(), Rank((me.rank.0 + 1) % n));
    let t0 = Instant::now();
    c.get(Some(&peer), "bench.k0", &[])
        .map_err(|s| format!("first get peer: {s:?}"))?;
    let first_peer = t0.elapsed().as_secs_f64() * 1e6;
    let t0 = Instant::now();
    for _ in 0..iters {
        c.get(Some(&peer), "bench.k0", &[])
            .map_err(|s| format!("get peer: {s:?}"))?;
    }
    let get_peer = t0.elapsed().as_secs_f64() * 1e6 / f64::from(iters);
    c.fence(&[], &[]).map_err(|s| format!("fence: {s:?}"))?;
    if me.rank.0 == 0 {
        println!(
            "result get_job_us={get_job:.3} first_peer_us={first_peer:.3} get_peer_us={get_peer:.3} commit1_us={commit1:.3} commit1000_us={commit1000:.3} fence_us={fence:.3}"
        );
    }
    c.finalize().map_err(|s| format!("finalize: {s:?}"))
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            println!("FAIL {why}");
            ExitCode::FAILURE
        }
    }
}
