//! `cargo xtask bench accept [--pmixrun PATH]`: what a loopback TCP connect costs
//! `pmixrun`'s server, on an idle machine, with many sockets in `TIME_WAIT`, and while
//! connects flood it.
//!
//! The server learns who a loopback peer is from the kernel on each accept (DESIGN §6), so
//! the cost of that lookup is paid by every connect, and a flood of connects from anyone
//! delays the legitimate ones. Each probe connects, sends a header announcing a frame past
//! any limit, and waits for the server to close: accept, identity, one read, close. Three
//! rounds:
//!
//! 1. idle: probes one after another;
//! 2. `TIME_WAIT`: the same after this command leaves many sockets in `TIME_WAIT` (closed
//!    connections to a listener of its own), which the kernel keeps for a minute;
//! 3. flood: the probes while two threads connect and close to the server as fast as they
//!    can.
//!
//! It prints the probes' latency (median, 99th percentile, max), the probes per second and
//! the server's CPU time per accept (its threads' `schedstat`, all accepts counted). With
//! `--pmixrun` it measures another build, e.g. an older commit's, for a before-and-after.

// A benchmark reads the clock; no simulator reaches it.
#![allow(clippy::disallowed_methods)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Run the three rounds against `pmixrun` (default: this workspace's release build).
pub(crate) fn run(root: &Path, quick: bool, pmixrun: Option<PathBuf>) -> Result<(), String> {
    let pmixrun = match pmixrun {
        Some(p) => p,
        None => {
            crate::run_cmd(
                root,
                "cargo",
                &[
                    "build",
                    "--release",
                    "--quiet",
                    "-p",
                    "pmix",
                    "--bin",
                    "pmixrun",
                ],
            )?;
            root.join("target/release/pmixrun")
        }
    };
    let (probes, time_wait) = if quick { (100, 2_000) } else { (1_000, 20_000) };
    let job = Job::start(&pmixrun)?;
    println!("accept: {} ({probes} probes a round)", pmixrun.display());
    println!(
        "{:<28} {:>10} {:>10} {:>10} {:>10} {:>14}",
        "round", "p50 µs", "p99 µs", "max µs", "probes/s", "CPU/accept µs"
    );
    let idle = round(&job, probes, None)?;
    idle.print("idle");
    leave_in_time_wait(time_wait)?;
    let waiting = round(&job, probes, None)?;
    waiting.print(&format!("{time_wait} sockets in TIME_WAIT"));
    let flood = round(&job, probes, Some(2))?;
    flood.print("flood of 2 connecting threads");
    Ok(())
}

/// A `pmixrun` whose one rank sleeps, and the address its server listens on.
struct Job {
    child: Child,
    address: SocketAddr,
    tmp: TempDir,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Job {
    fn start(pmixrun: &Path) -> Result<Job, String> {
        let tmp = std::env::temp_dir().join(format!("pmix-bench-accept-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
        let tmp = TempDir(tmp);
        let child = Command::new(pmixrun)
            .args(["-n", "1", "sleep", "3600"])
            .env("TMPDIR", &tmp.0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", pmixrun.display()))?;
        let pid = child.id();
        let mut job = Job {
            child,
            address: SocketAddr::from(([127, 0, 0, 1], 0)),
            tmp,
        };
        for _ in 0..600 {
            if let Some(address) = find_address(&job.tmp.0, pid) {
                job.address = address;
                return Ok(job);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err("pmixrun wrote no rendezvous file within 30 s".into())
    }

    /// The server's CPU time so far, in nanoseconds: the sum over its threads of the first
    /// field of `/proc/PID/task/TID/schedstat`.
    fn cpu_ns(&self) -> Result<u64, String> {
        let tasks = format!("/proc/{}/task", self.child.id());
        let mut ns = 0;
        for task in std::fs::read_dir(&tasks).map_err(|e| format!("{tasks}: {e}"))? {
            let path = task.map_err(|e| e.to_string())?.path().join("schedstat");
            // A thread that ended meanwhile has no file any more.
            if let Ok(text) = std::fs::read_to_string(path) {
                ns += text
                    .split_whitespace()
                    .next()
                    .and_then(|f| f.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        Ok(ns)
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server address in `pmixrun`'s tool rendezvous file.
pub(crate) fn find_address(tmp: &Path, pid: u32) -> Option<SocketAddr> {
    let dir = tmp.join(format!("pmixrun.{pid}"));
    let file = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("pmix.") && name.ends_with(&format!(".tool.{pid}"))
        })?;
    let text = std::fs::read_to_string(file.path()).ok()?;
    text.lines().next()?.split("tcp4://").nth(1)?.parse().ok()
}

/// One probe: connect, announce an oversized connect message, wait for the close.
fn probe(address: SocketAddr) -> Result<Duration, String> {
    let start = Instant::now();
    let mut s = TcpStream::connect(address).map_err(|e| e.to_string())?;
    let mut header = [0u8; 16];
    header[8..12].copy_from_slice(&u32::MAX.to_ne_bytes());
    s.write_all(&header).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .map_err(|e| e.to_string())?;
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    Ok(start.elapsed())
}

struct Round {
    latencies: Vec<Duration>,
    wall: Duration,
    accepts: u64,
    cpu_ns: u64,
}

impl Round {
    fn print(&self, name: &str) {
        let mut l = self.latencies.clone();
        l.sort();
        let at = |q: f64| l[((l.len() - 1) as f64 * q) as usize].as_micros();
        let per_s = l.len() as f64 / self.wall.as_secs_f64();
        let cpu_us = self.cpu_ns as f64 / 1000.0 / self.accepts.max(1) as f64;
        println!(
            "{name:<28} {:>10} {:>10} {:>10} {per_s:>10.0} {cpu_us:>14.1}",
            at(0.5),
            at(0.99),
            at(1.0)
        );
    }
}

/// `probes` probes, with `flooders` threads connecting meanwhile.
fn round(job: &Job, probes: usize, flooders: Option<usize>) -> Result<Round, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let flooded = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..flooders.unwrap_or(0))
        .map(|_| {
            let (stop, flooded, address) = (stop.clone(), flooded.clone(), job.address);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if TcpStream::connect(address).is_ok() {
                        flooded.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    let cpu = job.cpu_ns()?;
    let start = Instant::now();
    let mut latencies = Vec::with_capacity(probes);
    for _ in 0..probes {
        latencies.push(probe(job.address)?);
    }
    let wall = start.elapsed();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    // Let the server finish the flood's accepts before reading its CPU time.
    std::thread::sleep(Duration::from_millis(500));
    Ok(Round {
        latencies,
        wall,
        accepts: probes as u64 + flooded.load(Ordering::Relaxed),
        cpu_ns: job.cpu_ns()?.saturating_sub(cpu),
    })
}

/// Leave `n` sockets in `TIME_WAIT`: connections to a listener of this process, closed by
/// their connecting side first.
fn leave_in_time_wait(n: usize) -> Result<(), String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    for _ in 0..n {
        let client = TcpStream::connect(address).map_err(|e| e.to_string())?;
        let (server, _) = listener.accept().map_err(|e| e.to_string())?;
        drop(client);
        drop(server);
    }
    Ok(())
}
