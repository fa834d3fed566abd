//! `sim [--scenario F] [--nodes N] [--racks R] [--clients C] [--seed S | --seeds A..B]
//! [--fanout K] [--modex full|direct] [--limit-s T] [--json PATH] [--record PATH |
//! --replay PATH]`: run a virtual cluster (a scenario file's, or a fault-free wire-up of the
//! size given) and report it (see the crate's docs and `docs/simulation.md`). A failed
//! invariant prints the seed and the command that replays it, and exits non-zero.

#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::Duration;

use sim::cluster::Layout;
use sim::scenario::{Scenario, default_modex, default_racks};
use sim::{Collective, Config, Modex, Report};

#[derive(Default)]
struct Options {
    scenario: Option<String>,
    nodes: Option<u32>,
    racks: Option<u32>,
    clients: Option<u32>,
    fanout: Option<u32>,
    seeds: Option<std::ops::Range<u64>>,
    limit_s: Option<u64>,
    json: Option<String>,
    modex: Option<Modex>,
    collective: Option<Collective>,
    record: Option<String>,
    replay: Option<String>,
}

const USAGE: &str = "usage: sim [--scenario FILE] [--nodes N] [--racks R] [--clients C] \
                     [--seed S | --seeds A..B] [--fanout K] [--modex full|direct] [--collective tree|ring] \
                     [--limit-s T] [--json PATH] [--record PATH | --replay PATH] [--planted-bug]";

fn parse() -> Result<Options, String> {
    let mut o = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value\n{USAGE}"));
        let number = |v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{a}: not a number: {v}"))
        };
        let small = |v: u64| u32::try_from(v).map_err(|_| format!("{a}: too large"));
        match a.as_str() {
            "--scenario" => o.scenario = Some(value()?),
            "--nodes" => o.nodes = Some(small(number(value()?)?)?),
            "--racks" => o.racks = Some(small(number(value()?)?)?),
            "--clients" => o.clients = Some(small(number(value()?)?)?),
            "--fanout" => o.fanout = Some(small(number(value()?)?)?),
            "--seed" => {
                let s = number(value()?)?;
                o.seeds = Some(s..s.saturating_add(1));
            }
            "--seeds" => {
                let v = value()?;
                let (a, b) = v
                    .split_once("..")
                    .ok_or(format!("--seeds takes A..B, not {v}"))?;
                o.seeds = Some(number(a.to_owned())?..number(b.to_owned())?);
            }
            "--limit-s" => o.limit_s = Some(number(value()?)?),
            "--json" => o.json = Some(value()?),
            "--record" => o.record = Some(value()?),
            "--replay" => o.replay = Some(value()?),
            "--modex" => {
                o.modex = Some(match value()?.as_str() {
                    "full" => Modex::Full,
                    "direct" => Modex::Direct,
                    other => return Err(format!("--modex takes full or direct, not {other}")),
                });
            }
            "--planted-bug" if cfg!(feature = "planted-bug") => {}
            "--planted-bug" => {
                return Err(
                    "this build has no planted bug: run `cargo xtask sim --planted-bug`".into(),
                );
            }
            "--collective" => {
                o.collective = Some(match value()?.as_str() {
                    "tree" => Collective::Tree,
                    "ring" => Collective::Ring,
                    other => return Err(format!("--collective takes tree or ring, not {other}")),
                });
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    let seeds = o.seeds.clone().unwrap_or(1..2);
    if (o.record.is_some() || o.replay.is_some()) && seeds.end - seeds.start != 1 {
        return Err("--record and --replay take one seed".to_owned());
    }
    if o.record.is_some() && o.replay.is_some() {
        return Err("--record or --replay, not both".to_owned());
    }
    Ok(o)
}

/// The run the options describe (for seed 1; each seed is set in turn), and its name.
fn base(o: &Options) -> Result<(Config, String), String> {
    let (mut config, name) = match &o.scenario {
        Some(path) => {
            let s = Scenario::load(std::path::Path::new(path))?;
            (s.config, s.name)
        }
        None => {
            let nodes = o.nodes.unwrap_or(64);
            let layout = Layout::new(nodes, default_racks(nodes), 4, 8)?;
            let modex = default_modex(&layout);
            (Config::new(layout, 1, modex), "wire-up".to_owned())
        }
    };
    let l = &config.layout;
    let nodes = o.nodes.unwrap_or(l.nodes);
    let racks = o.racks.unwrap_or(if o.nodes.is_some() {
        default_racks(nodes)
    } else {
        l.racks
    });
    let layout = Layout::new(
        nodes,
        racks,
        o.clients.unwrap_or(l.clients),
        o.fanout.unwrap_or(l.fanout),
    )?;
    if layout != config.layout {
        if o.modex.is_none() && o.scenario.is_none() {
            config.modex = default_modex(&layout);
        }
        config.layout = layout;
    }
    if let Some(m) = o.modex {
        config.modex = m;
    }
    if let Some(c) = o.collective {
        config.collective = c;
    }
    if let Some(t) = o.limit_s {
        config.limit = Duration::from_secs(t);
    }
    Ok((config, name))
}

fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? / 1024)
}

fn json(r: &Report, wall: Duration, rss: Option<u64>) -> String {
    format!(
        "{{\"seed\":{},\"nodes\":{},\"racks\":{},\"clients_per_node\":{},\"messages\":{},\"bytes\":{},\"heartbeats\":{},\"simulated_ms\":{},\"wall_ms\":{},\"peak_rss_mb\":{},\"trace_hash\":\"{:016x}\",\"trace_events\":{},\"completed\":{},\"faults\":{},\"violations\":{}}}",
        r.seed,
        r.nodes,
        r.racks,
        r.clients,
        r.messages,
        r.bytes,
        r.heartbeats,
        r.simulated.as_millis(),
        wall.as_millis(),
        rss.map_or("null".to_owned(), |m| m.to_string()),
        r.trace_hash,
        r.trace_events,
        r.completed,
        r.faults.len(),
        r.violations.len()
    )
}

/// The command that replays `seed` of this run.
fn replay_command(o: &Options, config: &Config, seed: u64) -> String {
    let l = &config.layout;
    let modex = if config.modex == Modex::Full {
        "full"
    } else {
        "direct"
    };
    let xtask = if cfg!(feature = "planted-bug") {
        "cargo xtask sim --planted-bug"
    } else {
        "cargo xtask sim"
    };
    match &o.scenario {
        Some(path) => {
            let mut cmd = format!("{xtask} --scenario {path}");
            for (flag, v) in [
                ("--nodes", o.nodes),
                ("--racks", o.racks),
                ("--clients", o.clients),
                ("--fanout", o.fanout),
            ] {
                if let Some(v) = v {
                    cmd.push_str(&format!(" {flag} {v}"));
                }
            }
            if o.modex.is_some() {
                cmd.push_str(&format!(" --modex {modex}"));
            }
            if o.collective == Some(Collective::Ring) {
                cmd.push_str(" --collective ring");
            }
            format!("{cmd} --seed {seed}")
        }
        None => format!(
            "{xtask} --nodes {} --racks {} --clients {} --fanout {} --modex {modex}{} --seed {seed}",
            l.nodes,
            l.racks,
            l.clients,
            l.fanout,
            if config.collective == Collective::Ring {
                " --collective ring"
            } else {
                ""
            }
        ),
    }
}

/// Compare a run's trace with a recorded one: the first event that differs, if any.
fn first_divergence(recorded: &str, now: &[String]) -> Option<String> {
    let old: Vec<&str> = recorded.lines().collect();
    for (i, (a, b)) in old.iter().zip(now).enumerate() {
        if *a != b.as_str() {
            return Some(format!("event {}: recorded `{a}`, replayed `{b}`", i + 1));
        }
    }
    match old.len().cmp(&now.len()) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(format!(
            "the replay ended after {} events; the recording goes on with `{}`",
            now.len(),
            old[now.len()]
        )),
        std::cmp::Ordering::Less => Some(format!(
            "the recording ended after {} events; the replay goes on with `{}`",
            old.len(),
            now[old.len()]
        )),
    }
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let (base, name) = match base(&o) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("sim: {e}");
            return ExitCode::from(2);
        }
    };
    let recorded = match &o.replay {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("sim: cannot read {path}: {e}");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let seeds = o.seeds.clone().unwrap_or(1..2);
    let sweep = seeds.end - seeds.start > 1;
    let mut failing = Vec::new();
    let mut lines = Vec::new();
    let mut diverged = false;
    for seed in seeds.clone() {
        let mut config = base.clone();
        config.seed = seed;
        // Progress is for long runs: a single run of a large cluster.
        config.progress = !sweep && config.layout.nodes >= 1024;
        config.record = o.record.is_some() || recorded.is_some();
        // Wall time is reported, never fed back into the simulation.
        #[allow(clippy::disallowed_methods)]
        let started = std::time::Instant::now();
        let r = sim::run(&config);
        let wall = started.elapsed();
        let rss = peak_rss_mb();
        let modex = format!("{:?}", config.modex).to_lowercase();
        if !sweep || !r.passed() {
            println!(
                "{name} seed {seed}: {} nodes on {} racks x {} clients, {modex} modex: {} of {} completed, {} messages ({} bytes) and {} heartbeats, simulated {:.3} s, wall {:.2} s, peak {} MB, trace {:016x} ({} events)",
                r.nodes,
                r.racks,
                r.clients,
                r.completed,
                r.nodes * r.clients,
                r.messages,
                r.bytes,
                r.heartbeats,
                r.simulated.as_secs_f64(),
                wall.as_secs_f64(),
                rss.map_or("?".to_owned(), |m| m.to_string()),
                r.trace_hash,
                r.trace_events,
            );
            for f in &r.faults {
                println!("  fault at {f}");
            }
        }
        if !r.passed() {
            for v in r.violations.iter().take(12) {
                println!("  violation: {v}");
            }
            println!("  replay: {}", replay_command(&o, &config, seed));
            failing.push(seed);
        }
        if let Some(path) = &o.record {
            let mut text = r.trace.join("\n");
            text.push('\n');
            if let Err(e) = std::fs::write(path, text) {
                eprintln!("sim: cannot write {path}: {e}");
                return ExitCode::FAILURE;
            }
            println!("  recorded {} events in {path}", r.trace.len());
        }
        if let Some(old) = &recorded {
            match first_divergence(old, &r.trace) {
                None => println!("  replayed: the same {} events", r.trace.len()),
                Some(d) => {
                    println!("  replay diverged at {d}");
                    diverged = true;
                }
            }
        }
        lines.push(json(&r, wall, rss));
    }
    if sweep {
        let n = seeds.end - seeds.start;
        let list: Vec<String> = failing.iter().map(u64::to_string).collect();
        if failing.is_empty() {
            println!("{name}: 0 of {n} seeds failed");
        } else {
            println!(
                "{name}: {} of {n} seeds failed: {}",
                failing.len(),
                list.join(" ")
            );
        }
    }
    if let Some(path) = o.json {
        let body = format!("[{}]\n", lines.join(",\n"));
        if let Err(e) = std::fs::write(&path, body) {
            eprintln!("sim: cannot write {path}: {e}");
            return ExitCode::FAILURE;
        }
    }
    if failing.is_empty() && !diverged {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
