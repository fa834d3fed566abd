//! `cargo xtask bench slurm`: a job's wire-up over a Slurm cluster of 4 nodes on this machine
//! (`pmix_tests::slurm`), once with this project's library as every node's PMIx server and
//! once with OpenPMIx's, the ranks on OpenPMIx's client library both times.
//!
//! Each run is `srun --mpi=pmix -N 4 -n 8` of `tests/interop/c/wireup.c` (init, put, commit,
//! fence with data, a get of every rank's key); its wall time is the whole `srun`, Slurm's
//! launch included, which is the same for both servers. Each node's first rank reads the
//! peak and current resident memory of its parent, the `slurmstepd` that hosts the node's
//! server, before anyone finalizes. After one run to warm up, `--runs N` (7) runs of each;
//! printed: the median and the spread (least to most), and the ratios. Needs root.

#![allow(clippy::disallowed_methods)] // wall time of whole runs, outside anything sim reaches

use std::process::ExitCode;
use std::time::Instant;

use pmix_tests::launch::build_c;
use pmix_tests::slurm::{Cluster, Server};

const NODES: usize = 4;
const RANKS: usize = 8;

/// What one server's runs measured.
struct Measured {
    wall_ms: Vec<f64>,
    hwm_kb: Vec<f64>,
    rss_kb: Vec<f64>,
}

fn main() -> ExitCode {
    let mut runs = 7;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next().and_then(|n| n.parse().ok())) {
            ("--runs", Some(n)) if n > 0 => runs = n,
            _ => {
                eprintln!("usage: slurm_bench [--runs N]");
                return ExitCode::FAILURE;
            }
        }
    }
    let program = build_c("wireup");
    let mut results = Vec::new();
    for server in [Server::ThisProject, Server::OpenPmix] {
        let dir = std::path::PathBuf::from(format!("/tmp/pmix-bench-slurm-{}", std::process::id()));
        let cluster = match Cluster::start(NODES, server, &dir) {
            Ok(c) => c,
            Err(why) => {
                eprintln!("slurm_bench: the cluster did not come up: {why}");
                return ExitCode::FAILURE;
            }
        };
        let mut m = Measured {
            wall_ms: Vec::new(),
            hwm_kb: Vec::new(),
            rss_kb: Vec::new(),
        };
        for run in 0..=runs {
            let mut cmd = cluster.srun(NODES, RANKS, &program, &[]);
            let started = Instant::now();
            let out = match cmd.output() {
                Ok(out) => out,
                Err(e) => {
                    eprintln!("slurm_bench: cannot run srun: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let wall = started.elapsed().as_secs_f64() * 1e3;
            let stdout = String::from_utf8_lossy(&out.stdout);
            let ok = stdout
                .lines()
                .filter(|l| l.starts_with("ok wireup"))
                .count();
            let servers: Vec<(f64, f64)> = stdout.lines().filter_map(server_memory).collect();
            if !out.status.success() || ok != RANKS || servers.len() != NODES {
                eprintln!(
                    "slurm_bench: a run failed on {server:?}'s servers ({}, {ok} ranks wired up, \
                     {} servers read)\n{stdout}\n{}\n{}",
                    out.status,
                    servers.len(),
                    String::from_utf8_lossy(&out.stderr),
                    cluster.logs()
                );
                return ExitCode::FAILURE;
            }
            if run == 0 {
                continue;
            }
            m.wall_ms.push(wall);
            for (hwm, rss) in servers {
                m.hwm_kb.push(hwm);
                m.rss_kb.push(rss);
            }
        }
        drop(cluster);
        results.push((server, m));
    }
    println!(
        "srun --mpi=pmix -N {NODES} -n {RANKS} of a wire-up, {runs} runs after one to warm up; \
         median (least–most)\n"
    );
    println!(
        "| every node's server | wall time of srun, ms | slurmstepd peak RSS, KiB | slurmstepd RSS, KiB |"
    );
    println!("|---|---:|---:|---:|");
    for (server, m) in &results {
        let name = match server {
            Server::ThisProject => "this library",
            Server::OpenPmix => "OpenPMIx 4.2",
        };
        println!(
            "| {name} | {} | {} | {} |",
            spread(&m.wall_ms),
            spread(&m.hwm_kb),
            spread(&m.rss_kb)
        );
    }
    if let [(_, ours), (_, theirs)] = &results[..] {
        println!(
            "\nthis library / OpenPMIx: wall time {:.2}, peak RSS {:.2}, RSS {:.2}",
            median(&ours.wall_ms) / median(&theirs.wall_ms),
            median(&ours.hwm_kb) / median(&theirs.hwm_kb),
            median(&ours.rss_kb) / median(&theirs.rss_kb)
        );
    }
    ExitCode::SUCCESS
}

/// `server node=NAME hwm_kb=PEAK rss_kb=NOW`: the peak and the current RSS.
fn server_memory(line: &str) -> Option<(f64, f64)> {
    let rest = line.strip_prefix("server ")?;
    let field = |name: &str| {
        rest.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.parse::<f64>().ok())
            .filter(|kb| *kb > 0.0)
    };
    Some((field("hwm_kb=")?, field("rss_kb=")?))
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn spread(values: &[f64]) -> String {
    let least = values.iter().copied().fold(f64::INFINITY, f64::min);
    let most = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{:.0} ({least:.0}–{most:.0})", median(values))
}
