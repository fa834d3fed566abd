//! `sim --nodes N --racks R --clients C --seed S [--seeds A..B] [--fanout K] [--limit-s T]
//! [--json PATH]`: run the wire-up of a virtual cluster and report it (see the crate's docs).
//! A failed invariant prints the seed and the command that replays it, and exits non-zero.

use std::process::ExitCode;
use std::time::Duration;

use sim::cluster::Layout;
use sim::{Config, Modex, Report};

struct Options {
    nodes: u32,
    racks: Option<u32>,
    clients: u32,
    fanout: u32,
    seeds: std::ops::Range<u64>,
    limit_s: u64,
    json: Option<String>,
    modex: Option<Modex>,
}

const USAGE: &str = "usage: sim [--nodes N] [--racks R] [--clients C] [--seed S | --seeds A..B] \
                     [--fanout K] [--modex full|direct] [--limit-s T] [--json PATH]";

fn parse() -> Result<Options, String> {
    let mut o = Options {
        nodes: 64,
        racks: None,
        clients: 4,
        fanout: 8,
        seeds: 1..2,
        limit_s: 600,
        json: None,
        modex: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value\n{USAGE}"));
        let number = |v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{a}: not a number: {v}"))
        };
        let small = |v: u64| u32::try_from(v).map_err(|_| format!("{a}: too large"));
        match a.as_str() {
            "--nodes" => o.nodes = small(number(value()?)?)?,
            "--racks" => o.racks = Some(small(number(value()?)?)?),
            "--clients" => o.clients = small(number(value()?)?)?,
            "--fanout" => o.fanout = small(number(value()?)?)?,
            "--seed" => {
                let s = number(value()?)?;
                o.seeds = s..s + 1;
            }
            "--seeds" => {
                let v = value()?;
                let (a, b) = v
                    .split_once("..")
                    .ok_or(format!("--seeds takes A..B, not {v}"))?;
                o.seeds = number(a.to_owned())?..number(b.to_owned())?;
            }
            "--limit-s" => o.limit_s = number(value()?)?,
            "--json" => o.json = Some(value()?),
            "--modex" => {
                o.modex = Some(match value()?.as_str() {
                    "full" => Modex::Full,
                    "direct" => Modex::Direct,
                    other => return Err(format!("--modex takes full or direct, not {other}")),
                });
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(o)
}

/// Racks for `nodes` when none are given: 64 nodes per rack, as DESIGN §4 measured.
fn default_racks(nodes: u32) -> u32 {
    nodes.div_ceil(64).max(1)
}

fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? / 1024)
}

fn json(r: &Report, wall: Duration, rss: Option<u64>) -> String {
    format!(
        "{{\"seed\":{},\"nodes\":{},\"racks\":{},\"clients_per_node\":{},\"messages\":{},\"bytes\":{},\"simulated_ms\":{},\"wall_ms\":{},\"peak_rss_mb\":{},\"trace_hash\":\"{:016x}\",\"trace_events\":{},\"completed\":{},\"violations\":{}}}",
        r.seed,
        r.nodes,
        r.racks,
        r.clients,
        r.messages,
        r.bytes,
        r.simulated.as_millis(),
        wall.as_millis(),
        rss.map_or("null".to_owned(), |m| m.to_string()),
        r.trace_hash,
        r.trace_events,
        r.completed,
        r.violations.len()
    )
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let racks = o.racks.unwrap_or_else(|| default_racks(o.nodes));
    let layout = match Layout::new(o.nodes, racks, o.clients, o.fanout) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("sim: {e}");
            return ExitCode::from(2);
        }
    };
    // Every node holding every process's data costs nodes x processes in one process: from a
    // million (node, process) pairs the wire-up fetches by direct modex unless told otherwise.
    let modex = o
        .modex
        .unwrap_or(if layout.nodes * layout.job_size() >= 1 << 20 {
            Modex::Direct
        } else {
            Modex::Full
        });
    let mut failing = Vec::new();
    let mut lines = Vec::new();
    let sweep = o.seeds.end - o.seeds.start > 1;
    for seed in o.seeds.clone() {
        let config = Config {
            layout: layout.clone(),
            seed,
            modex,
            limit: Duration::from_secs(o.limit_s),
            progress: !sweep,
        };
        // Wall time is reported, never fed back into the simulation.
        #[allow(clippy::disallowed_methods)]
        let started = std::time::Instant::now();
        let r = sim::run(&config);
        let wall = started.elapsed();
        let rss = peak_rss_mb();
        if !sweep || !r.passed() {
            println!(
                "seed {seed}: {} nodes on {} racks x {} clients, {modex:?} modex: {} of {} completed, {} messages ({} bytes), simulated {:.3} s, wall {:.2} s, peak {} MB, trace {:016x} ({} events)",
                r.nodes,
                r.racks,
                r.clients,
                r.completed,
                r.nodes * r.clients,
                r.messages,
                r.bytes,
                r.simulated.as_secs_f64(),
                wall.as_secs_f64(),
                rss.map_or("?".to_owned(), |m| m.to_string()),
                r.trace_hash,
                r.trace_events,
            );
        }
        if !r.passed() {
            for v in r.violations.iter().take(10) {
                println!("  violation: {v}");
            }
            println!(
                "  replay: cargo xtask sim --nodes {} --racks {} --clients {} --fanout {} --modex {} --seed {seed}",
                o.nodes,
                racks,
                o.clients,
                o.fanout,
                if modex == Modex::Full {
                    "full"
                } else {
                    "direct"
                }
            );
            failing.push(seed);
        }
        lines.push(json(&r, wall, rss));
    }
    if sweep {
        let n = o.seeds.end - o.seeds.start;
        println!(
            "{} of {n} seeds failed{}",
            failing.len(),
            if failing.is_empty() {
                String::new()
            } else {
                format!(
                    ": {}",
                    failing
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            }
        );
    }
    if let Some(path) = o.json {
        let body = format!("[{}]\n", lines.join(",\n"));
        if let Err(e) = std::fs::write(&path, body) {
            eprintln!("sim: cannot write {path}: {e}");
            return ExitCode::FAILURE;
        }
    }
    if failing.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
