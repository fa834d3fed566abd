//! `cargo xtask bench [codec|core|accept] [--quick]`: benchmarks beside OpenPMIx (and, for
//! `accept`, beside a build of this project's own: see [`crate::bench_accept`]).
//!
//! Each benchmark measures our implementation and OpenPMIx's `libpmix.so.2` on the same data
//! in the same run and prints both with their ratio (DESIGN §7). OpenPMIx is installed on
//! demand (`libpmix-dev`).
//!
//! - `slurm` (only when named, as root): `srun -N 4 -n 8` of a wire-up over a Slurm cluster
//!   on this machine, every node's server this library and then OpenPMIx's: wall time and
//!   each node's `slurmstepd` memory;
//! - `codec`: pack/unpack (criterion-style micro-benchmark in `pmix/benches/codec.rs`);
//! - `core`: the client/server operations — get of a job-level key, the first get of a
//!   peer's key (which may fetch its data) and the gets after it,
//!   put+commit of one key (first, and after 1000 keys), fence with data at N = 2, 4, 8, 16 —
//!   for Rust clients on our server, OpenPMIx clients on our server, OpenPMIx clients on
//!   OpenPMIx's server (`tests/interop/c/host.c`), and the same C client on this project's
//!   `libpmix.so.2` (built by `cargo xtask capi`) on our server, each a separate set of real
//!   processes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const BENCHES: &[&str] = &["codec", "core", "accept", "load", "slurm"];

/// Run only when named: it needs root (a cluster of namespaces).
const ONLY_WHEN_NAMED: &[&str] = &["slurm"];

pub(crate) fn run(
    root: &Path,
    which: &[String],
    quick: bool,
    pmixrun: Option<PathBuf>,
) -> Result<(), String> {
    crate::sysdeps::ensure(crate::sysdeps::CONFORMANCE)?;
    let chosen: Vec<&str> = which.iter().map(String::as_str).collect();
    if let Some(unknown) = chosen.iter().find(|b| !BENCHES.contains(b)) {
        return Err(format!(
            "unknown benchmark `{unknown}`; available: {}",
            BENCHES.join(", ")
        ));
    }
    let selected = if chosen.is_empty() {
        (BENCHES.iter().copied())
            .filter(|b| !ONLY_WHEN_NAMED.contains(b))
            .collect()
    } else {
        chosen
    };
    for bench in selected {
        if bench == "core" {
            core(root, quick)?;
            continue;
        }
        if bench == "accept" {
            crate::bench_accept::run(root, quick, pmixrun.clone())?;
            continue;
        }
        if bench == "load" {
            crate::bench_load::run(root, quick, pmixrun.clone())?;
            continue;
        }
        if bench == "slurm" {
            slurm(root, quick)?;
            continue;
        }
        let mut cargo = vec!["bench", "--quiet", "--package", "pmix", "--bench", bench];
        if quick {
            cargo.extend(["--", "--quick"]);
        }
        crate::run_cmd(root, "cargo", &cargo)?;
    }
    Ok(())
}

/// `slurm`: a wire-up over a Slurm cluster of 4 nodes, this library's servers against
/// OpenPMIx's (`tests/src/bin/slurm_bench.rs`); as root.
fn slurm(root: &Path, quick: bool) -> Result<(), String> {
    if !crate::sysdeps::is_root() {
        return Err(
            "`bench slurm` starts a cluster of namespaces and mounts: run it as root".into(),
        );
    }
    crate::sysdeps::ensure(crate::sysdeps::SLURM)?;
    let runs = if quick { "2" } else { "7" };
    crate::run_cmd(
        root,
        "cargo",
        &[
            "run",
            "--quiet",
            "--release",
            "-p",
            "pmix-tests",
            "--bin",
            "slurm_bench",
            "--",
            "--runs",
            runs,
        ],
    )
}

/// Compile a C peer program against OpenPMIx.
fn build_c(root: &Path, out_dir: &Path, name: &str) -> Result<PathBuf, String> {
    let pkg = |args: &[&str]| -> Result<String, String> {
        let o = Command::new("pkg-config")
            .args(args)
            .arg("pmix")
            .output()
            .map_err(|e| format!("pkg-config: {e}"))?;
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let flags = pkg(&["--cflags", "--libs"])?;
    let libdir = pkg(&["--variable=libdir"])?;
    let out = out_dir.join(name);
    let status = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&out)
        .arg(root.join(format!("tests/interop/c/{name}.c")))
        .args(flags.split_whitespace())
        .arg(format!("-Wl,-rpath,{libdir}"))
        .status()
        .map_err(|e| format!("cc: {e}"))?;
    if !status.success() {
        return Err(format!("building {name} failed"));
    }
    Ok(out)
}

/// Run one launcher command and parse rank 0's `result k=v ...` line.
fn measure(cmd: &mut Command) -> Result<BTreeMap<String, f64>, String> {
    let out = cmd
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .output()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("result "))
        .ok_or_else(|| {
            format!(
                "{cmd:?} printed no result:\n{stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    Ok(line
        .split_whitespace()
        .skip(1)
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| Some((k.to_owned(), v.parse().ok()?)))
        .collect())
}

/// A metric over several runs: the median, and the lowest and highest value.
#[derive(Clone, Copy, Debug)]
struct Spread {
    median: f64,
    low: f64,
    high: f64,
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.low == self.high {
            return write!(f, "{:.2}", self.median);
        }
        write!(f, "{:.2} ({:.2}–{:.2})", self.median, self.low, self.high)
    }
}

/// Run `f` `rounds` times and keep, for every metric, the median and the spread.
fn median_of(
    rounds: usize,
    mut f: impl FnMut() -> Result<BTreeMap<String, f64>, String>,
) -> Result<BTreeMap<String, Spread>, String> {
    let mut all: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for _ in 0..rounds {
        for (k, v) in f()? {
            all.entry(k).or_default().push(v);
        }
    }
    Ok(all
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, mut v)| {
            v.sort_by(f64::total_cmp);
            let spread = Spread {
                median: v[v.len() / 2],
                low: v[0],
                high: v[v.len() - 1],
            };
            (k, spread)
        })
        .collect())
}

fn core(root: &Path, quick: bool) -> Result<(), String> {
    crate::sysdeps::ensure(crate::sysdeps::TESTS)?;
    crate::run_cmd(
        root,
        "cargo",
        &["build", "--quiet", "--release", "-p", "pmix", "--bins"],
    )?;
    crate::run_cmd(
        root,
        "cargo",
        &[
            "build",
            "--quiet",
            "--release",
            "-p",
            "pmix-tests",
            "--bins",
        ],
    )?;
    // This project's libpmix.so.2, for the C client's runs on it.
    crate::capi::run(root)?;
    let release = root.join("target/release");
    let out_dir = release.join("interop");
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    let c_client = build_c(root, &out_dir, "bench_client")?;
    let host = build_c(root, &out_dir, "host")?;
    let pmixrun = release.join("pmixrun");
    let rust_client = release.join("rust_bench_client");
    let iters = if quick { "200" } else { "2000" };
    let sizes: &[u32] = if quick { &[2, 4] } else { &[2, 4, 8, 16] };
    let metrics = [
        ("get_job_us", "get of a job-level key"),
        (
            "first_peer_us",
            "first get of a peer's key (fetches the peer's data)",
        ),
        (
            "get_peer_us",
            "get of a peer's committed key, after the first",
        ),
        ("commit1_us", "put+commit of 1 key"),
        ("commit1000_us", "put+commit of 1 key after 1000 keys"),
        ("fence_us", "fence with data"),
    ];
    // Runs on a shared machine vary a lot (OpenPMIx's progress threads compete for the
    // cores): each configuration runs `rounds` times and the table shows the median, with
    // the lowest and highest value in parentheses; the ratios are of the medians.
    let rounds = if quick { 1 } else { 5 };
    println!(
        "| operation | N | Rust client, our server (µs) | OpenPMIx client, our server (µs) | OpenPMIx client, OpenPMIx server (µs) | C client on this libpmix.so.2, our server (µs) | Rust/ours vs OpenPMIx/OpenPMIx | same OpenPMIx client: our server vs theirs | same C client on our server: this libpmix.so.2 vs OpenPMIx's |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for &n in sizes {
        let n_s = n.to_string();
        let ours_rust = median_of(rounds, || {
            measure(
                Command::new(&pmixrun)
                    .args(["-n", &n_s, "--timeout", "600"])
                    .arg(&rust_client)
                    .arg(iters),
            )
        })?;
        let ours_c = median_of(rounds, || {
            measure(
                Command::new(&pmixrun)
                    .args(["-n", &n_s, "--timeout", "600"])
                    .arg(&c_client)
                    .arg(iters),
            )
        })?;
        // The same C client, loading this project's library instead of OpenPMIx's.
        let ours_capi = median_of(rounds, || {
            measure(
                Command::new(&pmixrun)
                    .env("LD_LIBRARY_PATH", release.join("capi"))
                    .args(["-n", &n_s, "--timeout", "600"])
                    .arg(&c_client)
                    .arg(iters),
            )
        })?;
        let theirs = median_of(rounds, || {
            measure(
                Command::new(&host)
                    .env("HOST_TIMEOUT", "600")
                    .args(["-n", &n_s, "--"])
                    .arg(&c_client)
                    .arg(iters),
            )
        })?;
        for (key, label) in metrics {
            // The per-process operations do not depend on N; show them once.
            if key != "fence_us" && n != sizes[0] {
                continue;
            }
            let get = |m: &BTreeMap<String, Spread>| {
                m.get(key)
                    .copied()
                    .ok_or_else(|| format!("no {key} in the benchmark output"))
            };
            let (a, b, c) = (get(&ours_rust)?, get(&ours_c)?, get(&theirs)?);
            let d = get(&ours_capi)?;
            println!(
                "| {label} | {n} | {a} | {b} | {c} | {d} | {:.1}× | {:.1}× | {:.1}× |",
                c.median / a.median.max(1e-9),
                c.median / b.median.max(1e-9),
                b.median / d.median.max(1e-9)
            );
        }
    }
    Ok(())
}
