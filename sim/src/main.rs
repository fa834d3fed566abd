//! `sim [--scenario F] [--nodes N] [--racks R] [--clients C] [--seed S | --seeds A..B]
//! [--fanout K] [--modex full|direct] [--limit-s T] [--json PATH] [--record PATH |
//! --replay PATH]`: run a virtual cluster (a scenario file's, or a fault-free wire-up of the
//! size given) and report it (see the crate's docs and `docs/simulation.md`). A failed
//! invariant prints the seed and the command that replays it, and exits non-zero.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use std::time::Duration;

use sim::cluster::Layout;
use sim::scenario::{Scenario, default_modex, default_racks};
use sim::{Collective, Config, Modex, Report};

/// Run a virtual cluster under turmoil (a scenario file's, or a fault-free wire-up of the size
/// given) and report it; a failed invariant prints the seed and the command that replays it,
/// and exits non-zero. See docs/simulation.md.
#[derive(Debug, Parser)]
#[command(name = "sim", version)]
struct Options {
    /// A scenario file (sim/scenarios/*.toml): its cluster, faults and checks.
    #[arg(long, value_name = "FILE")]
    scenario: Option<String>,
    /// Virtual nodes (a scenario's own by default, else 64).
    #[arg(long, value_name = "N")]
    nodes: Option<u32>,
    /// Racks the nodes are spread over.
    #[arg(long, value_name = "R")]
    racks: Option<u32>,
    /// Clients per node.
    #[arg(long, value_name = "C")]
    clients: Option<u32>,
    /// The run's seed: every run is reproducible from it.
    #[arg(long, value_name = "S", conflicts_with = "seeds")]
    seed: Option<u64>,
    /// A sweep of seeds (A..B, B excluded): the failing seeds are listed.
    #[arg(long, value_name = "A..B", value_parser = seed_range)]
    seeds: Option<std::ops::Range<u64>>,
    /// The fan-out of the collective tree.
    #[arg(long, value_name = "K")]
    fanout: Option<u32>,
    /// How the job's data is exchanged.
    #[arg(long, value_name = "full|direct", value_parser = modex)]
    modex: Option<Modex>,
    /// How collectives travel between the nodes' daemons.
    #[arg(long, value_name = "tree|ring", value_parser = collective)]
    collective: Option<Collective>,
    /// Stop the simulation after this many virtual seconds.
    #[arg(long, value_name = "T")]
    limit_s: Option<u64>,
    /// Write the run's report as JSON here.
    #[arg(long, value_name = "PATH")]
    json: Option<String>,
    /// Record the run's trace here (one seed).
    #[arg(long, value_name = "PATH", conflicts_with = "replay")]
    record: Option<String>,
    /// Replay a recorded trace and report the first divergence (one seed).
    #[arg(long, value_name = "PATH")]
    replay: Option<String>,
    /// Run with the simulator's deliberate bug (only in a build with the `planted-bug`
    /// feature: `cargo xtask sim --planted-bug`).
    #[arg(long)]
    planted_bug: bool,
}

fn seed_range(v: &str) -> Result<std::ops::Range<u64>, String> {
    let (a, b) = v.split_once("..").ok_or(format!("A..B, not {v}"))?;
    let number = |n: &str| n.parse::<u64>().map_err(|_| format!("not a number: {n}"));
    Ok(number(a)?..number(b)?)
}

fn modex(v: &str) -> Result<Modex, String> {
    match v {
        "full" => Ok(Modex::Full),
        "direct" => Ok(Modex::Direct),
        other => Err(format!("full or direct, not {other}")),
    }
}

fn collective(v: &str) -> Result<Collective, String> {
    match v {
        "tree" => Ok(Collective::Tree),
        "ring" => Ok(Collective::Ring),
        other => Err(format!("tree or ring, not {other}")),
    }
}

impl Options {
    /// The seeds to run: `--seed`, `--seeds`, or seed 1.
    fn seeds(&self) -> std::ops::Range<u64> {
        match (&self.seeds, self.seed) {
            (Some(r), _) => r.clone(),
            (None, Some(s)) => s..s.saturating_add(1),
            (None, None) => 1..2,
        }
    }
}

/// The options, with the checks clap does not make.
fn parse() -> Result<Options, String> {
    let o = Options::parse();
    if o.planted_bug && !cfg!(feature = "planted-bug") {
        return Err("this build has no planted bug: run `cargo xtask sim --planted-bug`".into());
    }
    let seeds = o.seeds();
    if (o.record.is_some() || o.replay.is_some()) && seeds.end - seeds.start != 1 {
        return Err("--record and --replay take one seed".to_owned());
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
    let seeds = o.seeds();
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
