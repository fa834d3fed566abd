//! `cargo xtask bench load [--quick] [--pmixrun PATH]`: a job of many legitimate clients
//! beside hundreds of hostile connections, on one `pmixrun`.
//!
//! The job's first N ranks (1024; 64 with `--quick`) are `rust_load_client`: each connects,
//! puts 256 bytes, commits, fences with the data collected over the N ranks, gets the next
//! rank's value and fences again. The run is made twice: alone, then with
//!
//! - H more ranks of the same job (100; 10) that never read: each, accepted as itself, writes
//!   8 MiB of requests for 30 s without reading a reply (`pmix_intruder client-flood`);
//! - S connections of this command (300; 30) that announce a 64 KiB connect message and
//!   dribble one byte a second (the server closes each after its 10 s for a connect
//!   message; it connects again);
//! - two threads connecting and closing as fast as they can for the job's whole run.
//!
//! It prints the legitimate ranks' latencies (median, 99th percentile and maximum of init,
//! fence, get and the second fence), the job's wall time, the connects the flood made and
//! the server's peak resident memory (`VmHWM`), for both runs side by side.

// A benchmark reads the clock; no simulator reaches it.
#![allow(clippy::disallowed_methods)]

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

struct Sizes {
    clients: u32,
    non_readers: u32,
    slow: usize,
}

pub(crate) fn run(root: &Path, quick: bool, pmixrun: Option<PathBuf>) -> Result<(), String> {
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
    crate::run_cmd(
        root,
        "cargo",
        &[
            "build",
            "--release",
            "--quiet",
            "-p",
            "pmix-tests",
            "--bins",
        ],
    )?;
    let release = root.join("target/release");
    let pmixrun = pmixrun.unwrap_or_else(|| release.join("pmixrun"));
    let sizes = if quick {
        Sizes {
            clients: 64,
            non_readers: 10,
            slow: 30,
        }
    } else {
        Sizes {
            clients: 1024,
            non_readers: 100,
            slow: 300,
        }
    };
    println!(
        "load: {} clients of one job; hostile: {} non-reading ranks, {} slow connections, \
         a connect flood ({})",
        sizes.clients,
        sizes.non_readers,
        sizes.slow,
        pmixrun.display()
    );
    let alone = job(&pmixrun, &release, &sizes, false)?;
    let hostile = job(&pmixrun, &release, &sizes, true)?;
    println!(
        "{:<34} {:>24} {:>24}",
        "", "alone", "beside the hostile ones"
    );
    for (i, name) in ["init", "fence with data", "get of a peer", "fence"]
        .iter()
        .enumerate()
    {
        println!(
            "{:<34} {:>24} {:>24}",
            format!("{name} (p50/p99/max ms)"),
            alone.quantiles(i),
            hostile.quantiles(i)
        );
    }
    let row = |name: &str, a: String, h: String| println!("{name:<34} {a:>24} {h:>24}");
    row(
        "job wall time (s)",
        format!("{:.1}", alone.wall.as_secs_f64()),
        format!("{:.1}", hostile.wall.as_secs_f64()),
    );
    row(
        "server peak memory (MiB)",
        format!("{:.0}", alone.peak_kib as f64 / 1024.0),
        format!("{:.0}", hostile.peak_kib as f64 / 1024.0),
    );
    row(
        "connects of the flood",
        "-".into(),
        hostile.flooded.to_string(),
    );
    Ok(())
}

/// What one run of the job measured.
struct Run {
    /// Per legitimate rank: init, fence, get, barrier, in microseconds.
    ranks: Vec<[u64; 4]>,
    wall: Duration,
    peak_kib: u64,
    flooded: u64,
}

impl Run {
    fn quantiles(&self, metric: usize) -> String {
        let mut v: Vec<u64> = self.ranks.iter().map(|r| r[metric]).collect();
        v.sort_unstable();
        let at = |q: f64| v[((v.len() - 1) as f64 * q) as usize] as f64 / 1000.0;
        format!("{:.1} / {:.1} / {:.1}", at(0.5), at(0.99), at(1.0))
    }
}

fn job(pmixrun: &Path, release: &Path, sizes: &Sizes, hostile: bool) -> Result<Run, String> {
    let tmp = std::env::temp_dir().join(format!("pmix-bench-load-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let extra = if hostile { sizes.non_readers } else { 0 };
    let load = release.join("rust_load_client");
    let intruder = release.join("pmix_intruder");
    // This user's ids, for the non-readers' connect messages.
    let (uid, gid) = ids()?;
    let script = format!(
        "if [ \"$PMIX_RANK\" -lt {n} ]; then exec {load} {n}; fi; \
         exec {intruder} --tcp \"${{PMIX_SERVER_URI41##*tcp4://}}\" client-flood \
         \"$PMIX_NAMESPACE\" \"$PMIX_RANK\" {uid} {gid} 8 30",
        n = sizes.clients,
        load = load.display(),
        intruder = intruder.display(),
    );
    let total = sizes.clients + extra;
    let start = Instant::now();
    let mut child = Command::new(pmixrun)
        .args([
            "-n",
            &total.to_string(),
            "--timeout",
            "900",
            "--enable-recovery",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .env("TMPDIR", &tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", pmixrun.display()))?;
    let pid = child.id();
    let stop = Arc::new(AtomicBool::new(false));
    let flooded = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    if hostile {
        let address = match wait_for_address(&tmp, pid) {
            Ok(a) => a,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        let slow = sizes.slow;
        let s = stop.clone();
        threads.push(std::thread::spawn(move || slow_frames(address, slow, &s)));
        for _ in 0..2 {
            let (s, f) = (stop.clone(), flooded.clone());
            threads.push(std::thread::spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    if TcpStream::connect(address).is_ok() {
                        f.fetch_add(1, Ordering::Relaxed);
                    } else {
                        // Out of ports or refused: do not spin.
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }));
        }
    }
    let peak = Arc::new(AtomicU64::new(0));
    let watcher = {
        let (s, peak) = (stop.clone(), peak.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if let Some(kib) = vm_hwm(pid) {
                    peak.fetch_max(kib, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let lines = child.stdout.take().map(read_lines).unwrap_or_default();
    let status = child.wait().map_err(|e| e.to_string())?;
    let wall = start.elapsed();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    let _ = watcher.join();
    let _ = std::fs::remove_dir_all(&tmp);
    let mut ranks = Vec::new();
    for line in &lines {
        if let Some(fail) = line.strip_prefix("FAIL") {
            return Err(format!("a legitimate rank failed:{fail}"));
        }
        let f: Vec<u64> = line
            .strip_prefix("load ")
            .map(|rest| rest.split(' ').filter_map(|x| x.parse().ok()).collect())
            .unwrap_or_default();
        if let [_, init, fence, get, barrier] = f[..] {
            ranks.push([init, fence, get, barrier]);
        }
    }
    if ranks.len() != sizes.clients as usize {
        return Err(format!(
            "{} of {} legitimate ranks reported ({status})",
            ranks.len(),
            sizes.clients
        ));
    }
    Ok(Run {
        ranks,
        wall,
        peak_kib: peak.load(Ordering::Relaxed),
        flooded: flooded.load(Ordering::Relaxed),
    })
}

fn read_lines(stdout: impl std::io::Read) -> Vec<String> {
    use std::io::BufRead;
    std::io::BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .collect()
}

/// `slow` connections that announce a 64 KiB connect message (within the server's bound
/// for one) and send a byte of it a second; one the server closes is opened again.
fn slow_frames(address: SocketAddr, slow: usize, stop: &AtomicBool) {
    let mut header = [0u8; 16];
    header[8..12].copy_from_slice(&(64u32 << 10).to_ne_bytes());
    let open_one = || {
        let mut s = TcpStream::connect(address).ok()?;
        s.write_all(&header).ok()?;
        Some(s)
    };
    let mut open: Vec<Option<TcpStream>> = (0..slow).map(|_| open_one()).collect();
    while !stop.load(Ordering::Relaxed) {
        for s in &mut open {
            let alive = s.as_mut().is_some_and(|s| s.write_all(&[0]).is_ok());
            if !alive {
                *s = open_one();
            }
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The peak resident memory of process `pid`, in KiB.
fn vm_hwm(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// This process's uid and gid, from `/proc/self/status`.
fn ids() -> Result<(u32, u32), String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    let first = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .ok_or(format!("no {key} in /proc/self/status"))
    };
    Ok((first("Uid:")?, first("Gid:")?))
}

fn wait_for_address(tmp: &Path, pid: u32) -> Result<SocketAddr, String> {
    for _ in 0..600 {
        if let Some(address) = crate::bench_accept::find_address(tmp, pid) {
            return Ok(address);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err("pmixrun wrote no rendezvous file within 30 s".into())
}
