//! Developer commands for the workspace, run as `cargo xtask <command>`.
//!
//! | command | what it does |
//! |---|---|
//! | `conformance [ARGS]` | the main job: runs the conformance runner (Rust target by default) |
//! | `test [--ci]` | the test suite through `cargo nextest` (the `ci` profile writes JUnit), after fetching the outside programs it runs (`outside`) and building OpenPMIx 5.0 and 6.1 when the cache lacks them (`openpmix`); as root also the tests that need root |
//! | `build-pmixrun` | builds `target/release/pmixrun` |
//! | `capi` | builds this project's C library, `target/release/capi/libpmix.so.2` (with `pmix.pc`) |
//! | `vectors [--check]` | regenerates the inventory, the code's tables and the attribute-type vectors from `../shared` |
//! | `bench [codec\\|core\\|accept\\|load\\|slurm] [--pmixrun PATH]` | benchmarks beside OpenPMIx's `libpmix.so.2` (codec; client/server operations); `accept`: what a loopback connect costs `pmixrun` idle, with sockets in `TIME_WAIT` and under a connect flood; `slurm` (as root, only when named): a wire-up over a 4-node Slurm cluster, each library as the servers |
//! | `fuzz [TARGET\\|all] [SECONDS]` | runs a fuzz target, or each in turn, briefly with `cargo fuzz` |
//! | `matrix [--slice-of-commit N] [--parallel N]` | the vectors on OpenPMIx 4.2, 5.0 and 6.1 and this crate paired with each over the wire, both directions (CI runs one slice per commit) |
//! | `openpmix [RELEASE...]` | builds OpenPMIx 5.0.9 and 6.1.0 as peers into a cache outside the clone, once per machine (`openpmix.rs`) |
//! | `mutants [--planted \| --shard K/N \| --sample-of-commit N \| --survivors \| --unmeasured [--only TEXT]... \| --score \| --record] [--jobs N]` | mutation testing of the modules that implement the standard's behaviour with `cargo-mutants`, the `rust` target's vectors as the test, each outcome kept in `spec-vectors/mutation.tsv` (`--score` reads it); `--planted`: the planted bugs the main job must catch (`mutants.rs`) |
//! | `slurm [--nodes N] [--server ours\|openpmix]` | a Slurm cluster of N nodes (4) on this machine, each `slurmd` in namespaces of its own and each node's PMIx server this project's library (or OpenPMIx's), up until Enter is pressed; as root (`tests/src/slurm.rs`) |
//! | `layers [--crate NAME] [--imports]` | the import graph of each crate with layer rules (`pmix`, `capi`): imports from a layer above, across sides (`capi`: across chapters), and files that import each other, each finding known (written down in `layers/<crate>.txt`) or new; fails on a new one or a written-down one that is gone; `--crate` checks one crate (another crate: its circles) (`layers.rs`) |
//!
//! Commands that need system packages install them when run as root and print the exact
//! `apt-get` command otherwise (`sysdeps`, one list per command).

mod attribute_vectors;
mod bench;
mod bench_accept;
mod bench_load;
mod capi;
mod layers;
mod mutants;
mod openpmix;
mod outside;
mod sysdeps;
mod tables;
mod vectors;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::{Parser, Subcommand};

/// Developer commands for the workspace.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", version)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// The main job: run the conformance vectors (the Rust target by default) and report.
    /// Its options are the runner's: `cargo xtask conformance -- --help`.
    Conformance {
        /// Passed to the conformance runner (--target, --pairing, --filter, --report, ...).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<String>,
    },
    /// The test suite through cargo nextest, after fetching the outside programs it runs; as
    /// root also the tests that need root.
    Test {
        /// The `ci` profile (JUnit); also when CI is set in the environment.
        #[arg(long)]
        ci: bool,
        /// Passed to cargo nextest (a filter, ...).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "NEXTEST_ARGS"
        )]
        nextest: Vec<String>,
    },
    /// Build target/release/pmixrun (installing hwloc's packages as root).
    BuildPmixrun,
    /// Build this project's C library, target/release/capi/libpmix.so.2, a drop-in for
    /// OpenPMIx's (docs/capi.md), with pmix.pc beside it.
    Capi,
    /// Regenerate spec-vectors/inventory, the code's tables and the attribute-type vectors
    /// from the reference material.
    Vectors {
        /// Fail on stale files instead of writing them.
        #[arg(long)]
        check: bool,
        /// The reference material (default: $PMIX_SHARED_DIR, or ../shared).
        #[arg(long, value_name = "DIR")]
        shared: Option<PathBuf>,
    },
    /// Benchmarks beside OpenPMIx's libpmix.so.2 (docs/benchmarks.md).
    Bench {
        /// Which benchmarks (all but `slurm` when none is named).
        #[arg(value_parser = ["codec", "core", "accept", "load", "slurm"])]
        which: Vec<String>,
        /// A short run, to see that they work.
        #[arg(long)]
        quick: bool,
        /// For `accept` and `load`: the `pmixrun` to measure (default: this workspace's release build).
        #[arg(long, value_name = "PATH")]
        pmixrun: Option<PathBuf>,
    },
    /// Run a fuzz target briefly with cargo fuzz (--sanitizer none), seeded from the golden
    /// vectors.
    Fuzz {
        /// The fuzz target, or `all` for each in turn.
        #[arg(default_value = "unpack")]
        target: String,
        /// How long to run (each target, for `all`).
        #[arg(default_value_t = 30)]
        seconds: u64,
    },
    /// The deterministic cluster simulation: prints the run (or a sweep's failing seeds) with
    /// its trace hash and the command that replays it. Its options are the simulator's:
    /// `cargo xtask sim -- --help`.
    Sim {
        /// Check that a seed sweep catches the simulator's planted bug and that the printed
        /// command replays it.
        #[arg(long, exclusive = true)]
        check_planted_bug: bool,
        /// Build the simulator with its planted bug.
        #[arg(long)]
        planted_bug: bool,
        /// Passed to the simulator (--scenario, --nodes, --seeds, ...).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<String>,
    },
    /// The cross-release matrix: the vectors on OpenPMIx 4.2, 5.0 and 6.1, and this crate
    /// paired with each over the wire in both directions (its servers with their clients,
    /// their servers with its clients), each against its committed baseline.
    Matrix {
        /// Run one of N slices of the vectors, chosen by the commit checked out (CI's form:
        /// each commit checks another part; the whole takes about an hour on 2 cores).
        #[arg(long, value_name = "N")]
        slice_of_commit: Option<usize>,
        /// How many vectors run at once on each target (the runner's `--parallel`; most of
        /// a vector's time on OpenPMIx's libraries is waiting for a timeout or a peer).
        #[arg(long, value_name = "N", default_value_t = 1)]
        parallel: usize,
    },
    /// Build OpenPMIx releases as peers (5.0.9, 6.1.0) from the reference material's
    /// tarballs into a cache outside the clone, once per machine, and print where each is.
    Openpmix {
        /// The releases (`5.0`, `6.1`); all when none is named.
        releases: Vec<String>,
    },
    /// Does a broken implementation fail the vectors? Mutation testing (cargo-mutants) of the
    /// modules of pmix that implement the standard's behaviour, with the `rust` target's
    /// vectors as the test: lists the mutants that survive and fails on one that
    /// spec-vectors/mutants.tsv does not explain. Or the planted bugs, each of which must make
    /// the main job fail.
    Mutants {
        /// Plant each of this project's bugs in a copy of the workspace instead; the main job
        /// must fail on every one.
        #[arg(long, conflicts_with_all = ["shard", "sample_of_commit", "record", "score"])]
        planted: bool,
        /// Record the last run's outcomes (target/mutants) in spec-vectors/mutation.tsv, as
        /// every run does when it ends.
        #[arg(long, conflicts_with_all = ["shard", "sample_of_commit", "score"])]
        record: bool,
        /// Print the score of spec-vectors/mutation.tsv: the mutants measured so far, in any
        /// shard, against the sources checked out, and the survivors not explained.
        #[arg(long, conflicts_with_all = ["shard", "sample_of_commit"])]
        score: bool,
        /// Run again the mutants the ledger has as survivors (after adding vectors meant to
        /// kill them), and record what they do now.
        #[arg(long, conflicts_with_all = ["shard", "sample_of_commit", "score", "record"])]
        survivors: bool,
        /// Run only the mutants the ledger has no outcome for yet (the rest of a run that was
        /// stopped, or mutants of code added since), and record what they do.
        #[arg(long, conflicts_with_all = ["shard", "sample_of_commit", "score", "record", "survivors"])]
        unmeasured: bool,
        /// With --survivors or --unmeasured: only the mutants whose name holds this text (a
        /// file, `groups/`, a function); repeat for any of several.
        #[arg(long, value_name = "TEXT")]
        only: Vec<String>,
        /// Run one shard of the whole (`2/8`; round-robin).
        #[arg(long, value_name = "K/N", conflicts_with = "sample_of_commit")]
        shard: Option<String>,
        /// Run about N mutants, picked by the commit checked out (what CI runs), and only
        /// report their survivors.
        #[arg(long, value_name = "N")]
        sample_of_commit: Option<usize>,
        /// Test this many mutants at once, each in a build folder of its own (2 is about 1.5
        /// times as fast on 2 cores: one builds while another's vectors wait).
        #[arg(long, value_name = "N", default_value_t = 1)]
        jobs: usize,
    },
    /// Start a Slurm cluster of several nodes on this machine, each slurmd in namespaces of
    /// its own, each node's PMIx server this project's library (or OpenPMIx's); it stays up
    /// until Enter is pressed. Needs root.
    Slurm {
        /// How many nodes.
        #[arg(long, default_value_t = 4)]
        nodes: u32,
        /// Whose library the nodes' servers are: `ours` or `openpmix`.
        #[arg(long, default_value = "ours")]
        server: String,
    },
    /// Check each crate with layer rules (pmix, capi) for files that import from a layer
    /// above them, from another side or import each other, against the findings written
    /// down for it; fail on a new finding or a written-down one that is gone.
    Layers {
        /// The crate's folder: check only it (a crate without rules: its circles).
        #[arg(long = "crate", value_name = "NAME")]
        krate: Option<String>,
        /// List every import of the crate (pmix without `--crate`) instead.
        #[arg(long)]
        imports: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = workspace_root();
    let (name, result) = match cli.command {
        Cmd::Conformance { args } => ("conformance", conformance(&root, &args)),
        Cmd::Test { ci, nextest } => ("test", test(&root, ci, &nextest)),
        Cmd::BuildPmixrun => ("build-pmixrun", build_pmixrun(&root)),
        Cmd::Capi => ("capi", capi::run(&root).map(|_| ())),
        Cmd::Vectors { check, shared } => ("vectors", vectors::run(&root, check, shared)),
        Cmd::Bench {
            which,
            quick,
            pmixrun,
        } => ("bench", bench::run(&root, &which, quick, pmixrun)),
        Cmd::Fuzz { target, seconds } => ("fuzz", fuzz(&root, &target, seconds)),
        Cmd::Sim {
            check_planted_bug: true,
            ..
        } => ("sim", sim_planted_check(&root)),
        Cmd::Sim {
            planted_bug, args, ..
        } => ("sim", sim(&root, planted_bug, &args)),
        Cmd::Openpmix { releases } => ("openpmix", openpmix::run(&root, &releases)),
        Cmd::Matrix {
            slice_of_commit,
            parallel,
        } => ("matrix", matrix(&root, slice_of_commit, parallel)),
        Cmd::Slurm { nodes, server } => ("slurm", slurm(&root, nodes, &server)),
        Cmd::Layers { krate, imports } => ("layers", layers::run(&root, krate.as_deref(), imports)),
        Cmd::Mutants {
            planted,
            record,
            score,
            survivors,
            unmeasured,
            only,
            shard,
            sample_of_commit,
            jobs,
        } => {
            let what = match (planted, shard, sample_of_commit) {
                _ if survivors => mutants::Run::Survivors(only),
                _ if unmeasured => mutants::Run::Unmeasured(only),
                _ if record => mutants::Run::Record,
                _ if score => mutants::Run::Score,
                (true, _, _) => mutants::Run::Planted,
                (_, Some(s), _) => mutants::Run::Shard(s),
                (_, _, Some(n)) => mutants::Run::SampleOfCommit(n),
                _ => mutants::Run::All,
            };
            ("mutants", mutants::run(&root, what, jobs))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask {name}: {message}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

/// Run a command in the workspace root, failing with its exit status.
pub(crate) fn run_cmd(root: &Path, program: &str, args: &[&str]) -> Result<(), String> {
    println!("+ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed: {status}", args.join(" ")))
    }
}

fn conformance(root: &Path, args: &[String]) -> Result<(), String> {
    sysdeps::ensure(sysdeps::CONFORMANCE)?;
    let args = library_shorthands(root, args)?;
    let mut cargo_args = vec![
        "run",
        "--quiet",
        "--release",
        "--package",
        "conformance",
        "--",
    ];
    cargo_args.extend(args.iter().map(String::as_str));
    run_cmd(root, "cargo", &cargo_args)
}

/// The runner's arguments with the libraries of `--target` and `--library` given by short
/// name made into paths, each built first when it is not yet: `openpmix-5.0` and
/// `openpmix-6.1` (OpenPMIx from the reference material's sources, `cargo xtask openpmix`),
/// `openpmix-4.2` (Debian's library, for the dynamic loader) and `pmix-rs` (this project's,
/// `cargo xtask capi`). Anything else passes unchanged.
fn library_shorthands(root: &Path, args: &[String]) -> Result<Vec<String>, String> {
    let resolve = |name: &str| -> Result<Option<String>, String> {
        if name == "openpmix-4.2" {
            return Ok(Some("libpmix.so.2".into()));
        }
        if name == "pmix-rs" {
            return capi::run(root).map(|p| Some(p.display().to_string()));
        }
        match name.strip_prefix("openpmix-").and_then(openpmix::release) {
            Some(release) => {
                let prefix = openpmix::ensure(root, release)?;
                Ok(Some(prefix.join("lib/libpmix.so.2").display().to_string()))
            }
            None => Ok(None),
        }
    };
    let mut out = Vec::with_capacity(args.len());
    let mut takes_library = false;
    for arg in args {
        if takes_library {
            takes_library = false;
            out.push(resolve(arg)?.unwrap_or_else(|| arg.clone()));
            continue;
        }
        let joined = ["--target=", "--library="]
            .iter()
            .find_map(|flag| arg.strip_prefix(flag).map(|value| (flag, value)));
        match joined {
            Some((flag, value)) => match resolve(value)? {
                Some(path) => out.push(format!("{flag}{path}")),
                None => out.push(arg.clone()),
            },
            None => {
                takes_library = arg == "--target" || arg == "--library";
                out.push(arg.clone());
            }
        }
    }
    Ok(out)
}

/// The commit checked out, and its first 32 bits as a number: what picks CI's part of a long
/// run (`matrix --slice-of-commit`, `mutants --sample-of-commit`).
pub(crate) fn head_commit(root: &Path) -> Result<(String, u64), String> {
    let out = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let head = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let number = u64::from_str_radix(head.get(..8).unwrap_or("0"), 16).unwrap_or(0);
    Ok((head, number))
}

/// `cargo xtask matrix`: the three OpenPMIx releases as targets, then each paired with this
/// crate in both directions, each run judged against its baseline; all runs are made, and
/// the command fails if any failed.
fn matrix(root: &Path, slice_of_commit: Option<usize>, parallel: usize) -> Result<(), String> {
    let slice = match slice_of_commit {
        Some(0) => return Err("--slice-of-commit needs at least one slice".into()),
        Some(n) => {
            let (head, number) = head_commit(root)?;
            let k = number % n as u64;
            println!("the commit {head} runs slice {k} of {n}");
            Some(format!("{k}/{n}"))
        }
        None => None,
    };
    let releases = ["openpmix-4.2", "openpmix-5.0", "openpmix-6.1"];
    let mut runs: Vec<Vec<String>> = vec![
        releases
            .iter()
            .flat_map(|r| ["--target".to_owned(), (*r).to_owned()])
            .collect(),
    ];
    for r in releases {
        runs.push(
            [
                "--pairing",
                "rust-server:c-client",
                "--pairing",
                "c-server:rust-client",
                "--library",
                r,
            ]
            .map(str::to_owned)
            .to_vec(),
        );
    }
    let mut failed = Vec::new();
    for mut args in runs {
        if let Some(s) = &slice {
            args.extend(["--slice".to_owned(), s.clone()]);
        }
        args.extend(["--parallel".to_owned(), parallel.max(1).to_string()]);
        if let Err(e) = conformance(root, &args) {
            failed.push(e);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("\n"))
    }
}

/// The cargo arguments that run the simulator, built with its planted bug or not (in a
/// target directory of its own, so that neither build undoes the other).
fn sim_cargo(planted: bool) -> Vec<&'static str> {
    let mut args = vec!["run", "--quiet", "--release", "--package", "sim"];
    if planted {
        args.extend([
            "--features",
            "planted-bug",
            "--target-dir",
            "target/planted-bug",
        ]);
    }
    args.push("--");
    args
}

fn sim(root: &Path, planted: bool, args: &[String]) -> Result<(), String> {
    // `--planted-bug` chooses the build, wherever it is written.
    let planted = planted || args.iter().any(|a| a == "--planted-bug");
    let mut cargo_args = sim_cargo(planted);
    cargo_args.extend(
        args.iter()
            .map(String::as_str)
            .filter(|a| *a != "--planted-bug"),
    );
    run_cmd(root, "cargo", &cargo_args)
}

/// The check that the seed sweep catches a bug: a build whose daemons count a dead child's
/// contribution as in (the planted bug) must fail some seeds of the node-crash scenario, and
/// the command printed for the first failing seed must replay it: fail again, with the same
/// trace hash.
fn sim_planted_check(root: &Path) -> Result<(), String> {
    let scenario = "sim/scenarios/node-crash-during-fence.toml";
    let capture = |args: &[&str]| -> Result<(bool, String), String> {
        let mut all = sim_cargo(true);
        all.extend(args);
        println!("+ cargo {}", all.join(" "));
        let out = std::process::Command::new("cargo")
            .args(&all)
            .current_dir(root)
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        Ok((
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ))
    };
    let (passed, sweep) = capture(&["--scenario", scenario, "--seeds", "1..101"])?;
    print!(
        "{}",
        sweep
            .lines()
            .last()
            .map(|l| format!("{l}\n"))
            .unwrap_or_default()
    );
    if passed {
        return Err("the seed sweep did not catch the planted bug".into());
    }
    let replay = sweep
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: "))
        .ok_or("a failing seed printed no replay command")?;
    let hash_of = |text: &str| {
        text.lines()
            .find_map(|l| l.split(", trace ").nth(1))
            .and_then(|t| t.split_whitespace().next())
            .map(str::to_owned)
    };
    let first = hash_of(&sweep).ok_or("the failing seed printed no trace hash")?;
    let rest = replay
        .strip_prefix("cargo xtask sim --planted-bug ")
        .ok_or(format!(
            "the replay command does not name the planted bug: {replay}"
        ))?;
    let args: Vec<&str> = rest.split_whitespace().collect();
    let (passed, again) = capture(&args)?;
    let second = hash_of(&again).ok_or("the replay printed no trace hash")?;
    if passed || second != first {
        return Err(format!(
            "`{replay}` did not replay the failure: {} with trace {second}, the sweep had {first}",
            if passed { "passed" } else { "failed" }
        ));
    }
    println!("the sweep caught the planted bug; `{replay}` replays it (trace {first})");
    Ok(())
}

/// `pmixrun` for use, with the packages it needs to build (`cargo build -p pmix --bins`
/// alone fails to link on a machine without them).
fn build_pmixrun(root: &Path) -> Result<(), String> {
    sysdeps::ensure(sysdeps::PMIXRUN)?;
    run_cmd(
        root,
        "cargo",
        &["build", "--release", "-p", "pmix", "--bins"],
    )
}

fn test(root: &Path, ci: bool, passthrough: &[String]) -> Result<(), String> {
    sysdeps::ensure(sysdeps::TESTS)?;
    sysdeps::ensure_deb_src()?;
    outside::fetch(root)?;
    // The later OpenPMIx releases, whose examples and headers the tests build against: once
    // per machine (`cargo xtask openpmix`).
    for release in openpmix::RELEASES {
        openpmix::ensure(root, release)?;
    }
    let ci = ci || std::env::var_os("CI").is_some();
    let profile = if ci { "ci" } else { "default" };
    if which("cargo-nextest").is_none() {
        return Err(
            "cargo-nextest is not installed: run `cargo install cargo-nextest --locked`".into(),
        );
    }
    // The interoperability tests launch programs through `pmixrun`, a binary of `pmix`:
    // nextest builds test targets only, so build the binaries of the same profile first.
    run_cmd(root, "cargo", &["build", "-p", "pmix", "--bins"])?;
    let mut nextest = vec!["nextest", "run", "--workspace", "--profile", profile];
    // The tests that need root (they create a second user, or a Slurm cluster in namespaces)
    // are ignored otherwise.
    if sysdeps::is_root() {
        nextest.extend(["--run-ignored", "all"]);
    }
    nextest.extend(passthrough.iter().map(String::as_str));
    run_cmd(root, "cargo", &nextest)?;
    // Doctests are not run by nextest.
    run_cmd(root, "cargo", &["test", "--workspace", "--doc", "--quiet"])
}

/// `cargo xtask slurm`: the tests' multi-node cluster for a person (`tests/src/bin/slurm_cluster.rs`).
fn slurm(root: &Path, nodes: u32, server: &str) -> Result<(), String> {
    if !sysdeps::is_root() {
        return Err("a cluster of namespaces and mounts needs root: run it as root".into());
    }
    sysdeps::ensure(sysdeps::SLURM)?;
    let nodes = nodes.to_string();
    run_cmd(
        root,
        "cargo",
        &[
            "run",
            "--quiet",
            "-p",
            "pmix-tests",
            "--bin",
            "slurm_cluster",
            "--",
            "--nodes",
            &nodes,
            "--server",
            server,
        ],
    )
}

/// The fuzz targets of `fuzz/`, each a shell over `pmix::fuzzing` (or the codec's
/// `unpack`).
const FUZZ_TARGETS: &[&str] = &[
    "unpack",
    "frames",
    "handshake",
    "request",
    "reply",
    "pushed",
    "texts",
    "credential",
    "server_core",
    "client_core",
    "c_entry_points",
    "vector_file",
    "scenario_file",
];

fn fuzz(root: &Path, target: &str, seconds: u64) -> Result<(), String> {
    if which("cargo-fuzz").is_none() {
        return Err("cargo-fuzz is not installed: run `cargo install cargo-fuzz --locked`".into());
    }
    let targets: Vec<&str> = match target {
        "all" => FUZZ_TARGETS.to_vec(),
        t if FUZZ_TARGETS.contains(&t) => vec![t],
        t => {
            return Err(format!(
                "unknown fuzz target `{t}`; available: all, {}",
                FUZZ_TARGETS.join(", ")
            ));
        }
    };
    let captured = captured_messages(root)?;
    std::fs::create_dir_all(root.join("target")).map_err(|e| e.to_string())?;
    let write_dict = |name: &str, text: String| {
        let dict = root.join("target").join(name);
        std::fs::write(&dict, text).map_err(|e| format!("{}: {e}", dict.display()))?;
        Ok::<PathBuf, String>(dict)
    };
    let wire_dict = write_dict("fuzz-wire.dict", dictionary(&captured))?;
    for target in targets {
        let corpus = root.join("fuzz/corpus").join(target);
        std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
        let mut dict = wire_dict.clone();
        let seeds = match target {
            "unpack" => fuzz_seeds(root)?,
            "c_entry_points" => c_entry_seeds(&fuzz_seeds(root)?),
            "vector_file" | "scenario_file" => {
                let dir = if target == "vector_file" {
                    "spec-vectors/vectors"
                } else {
                    "sim/scenarios"
                };
                let files = toml_files(&root.join(dir))?;
                dict = write_dict(&format!("fuzz-{target}.dict"), toml_dictionary(&files))?;
                files
            }
            _ => capture_seeds(target, &captured),
        };
        for (name, bytes) in &seeds {
            std::fs::write(corpus.join(name), bytes).map_err(|e| format!("{name}: {e}"))?;
        }
        println!("{target}: seeded {} inputs", seeds.len());
        let max_time = format!("-max_total_time={seconds}");
        let dict_arg = format!("-dict={}", dict.display());
        let corpus = format!("corpus/{target}");
        run_cmd(
            &root.join("fuzz"),
            "cargo",
            &[
                "fuzz",
                "run",
                "--sanitizer",
                "none",
                target,
                &corpus,
                "--",
                &max_time,
                &dict_arg,
                "-rss_limit_mb=2048",
            ],
        )?;
    }
    Ok(())
}

/// The messages of the captures in `pmix/tests/data/captures` (OpenPMIx 4.2's client and
/// server over a socket, as strace printed them): each string a call wrote or read.
fn captured_messages(root: &Path) -> Result<Vec<Vec<u8>>, String> {
    let dir = root.join("pmix/tests/data/captures");
    let mut messages = Vec::new();
    for name in ["basic_n2_socket.txt", "basic_n2_hash_socket.txt"] {
        let path = dir.join(name);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        for line in text.lines() {
            // Every quoted string of `\xNN` escapes on the line.
            for quoted in line.split('"').skip(1).step_by(2) {
                let bytes: Option<Vec<u8>> = quoted
                    .split("\\x")
                    .skip(1)
                    .map(|h| u8::from_str_radix(h.get(..2)?, 16).ok())
                    .collect();
                if let Some(bytes) = bytes.filter(|b| !b.is_empty()) {
                    messages.push(bytes);
                }
            }
        }
    }
    messages.sort();
    messages.dedup();
    Ok(messages)
}

/// The seeds of a target other than `unpack`: each captured message in the target's
/// layout (`pmix::fuzzing`: a flags byte first, for replies a command byte too; frames as
/// the stream of every message in turn).
fn capture_seeds(target: &str, captured: &[Vec<u8>]) -> Vec<(String, Vec<u8>)> {
    let mut seeds = Vec::new();
    match target {
        "frames" => {
            let mut stream = vec![15];
            stream.extend(captured.iter().flatten());
            seeds.push(("captured-stream".to_owned(), stream));
        }
        "server_core" => {
            // Steps of `pmix::fuzzing::server_core`: two ranks connect, each sends the
            // message as a request, the host answers and a timer expires; and the job's four
            // ranks commit, fence and get through the templates.
            for (i, m) in captured.iter().enumerate() {
                let len = u16::try_from(m.len()).unwrap_or(u16::MAX).to_le_bytes();
                let mut seed = vec![0, 0, 0, 0, 1, 1];
                for conn in [0, 1] {
                    seed.extend([2, conn, len[0], len[1]]);
                    seed.extend(m.iter().take(usize::from(u16::MAX)));
                }
                seed.extend([5, 0, 2, 0, 6, 0]);
                seeds.push((format!("captured-{i:03}"), seed));
            }
            let mut job = Vec::new();
            for r in 0..4 {
                job.extend([0, r, 0]);
            }
            for c in 0..4 {
                job.extend([3, c, 1, c, 3, c, 0, 1]);
            }
            job.extend([5, 0, 2, 0, 3, 0, 2, 2, 3, 1, 2, 0x83, 6, 0]);
            seeds.push(("templates".to_owned(), job));
        }
        "client_core" => {
            // Steps of `pmix::fuzzing::client_core`: a put, a commit and a get, then the
            // message as the server's reply to it, and as bytes of the server's stream.
            for (i, m) in captured.iter().enumerate() {
                let len = u16::try_from(m.len()).unwrap_or(u16::MAX).to_le_bytes();
                let mut seed = vec![3, 1, 4, 0, 6, 4, 2, 0, len[0], len[1]];
                seed.extend(m.iter().take(usize::from(u16::MAX)));
                seed.extend([1, 0, len[0], len[1]]);
                seed.extend(m.iter().take(usize::from(u16::MAX)));
                seeds.push((format!("captured-{i:03}"), seed));
            }
        }
        "handshake" | "texts" | "credential" => {
            for (i, m) in captured.iter().enumerate() {
                seeds.push((format!("captured-{i:03}"), m.clone()));
            }
        }
        _ => {
            // The commands the captured requests start with.
            let commands: std::collections::BTreeSet<u8> =
                captured.iter().filter_map(|m| m.first().copied()).collect();
            for (i, m) in captured.iter().enumerate() {
                for flags in [0u8, 1] {
                    if target == "reply" {
                        for c in &commands {
                            let mut seed = vec![flags, *c];
                            seed.extend_from_slice(m);
                            seeds.push((format!("captured-{i:03}-{flags}-{c}"), seed));
                        }
                    } else {
                        let mut seed = vec![flags];
                        seed.extend_from_slice(m);
                        seeds.push((format!("captured-{i:03}-{flags}"), seed));
                    }
                }
            }
        }
    }
    seeds
}

/// The seeds of `c_entry_points` (`pmix_capi::fuzzing`): each golden vector's bytes to
/// unpack as its type (step 0) and as a value (step 1), then its bytes as codes to name
/// (step 2) and to compress (step 3).
fn c_entry_seeds(golden: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    golden
        .iter()
        .filter_map(|(name, seed)| {
            let [t, _flag, bytes @ ..] = seed.as_slice() else {
                return None;
            };
            let mut unpack = vec![*t, 0];
            unpack.extend_from_slice(bytes);
            let mut steps = Vec::new();
            for (kind, arg) in [(0u8, &unpack[..]), (1, bytes), (2, bytes), (3, bytes)] {
                let words = arg.len().div_ceil(4).min(255);
                steps.extend([kind, words as u8]);
                steps.extend(arg.iter().take(words * 4));
                steps.extend(std::iter::repeat_n(0, words * 4 - arg.len().min(words * 4)));
            }
            Some((name.clone(), steps))
        })
        .collect()
}

/// The seeds of a target over files: every `*.toml` under `dir`, named by its path there.
fn toml_files(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "toml") {
                let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                let name = path.strip_prefix(dir).unwrap_or(&path).to_string_lossy();
                files.push((name.replace('/', "--"), bytes));
            }
        }
    }
    files.sort();
    Ok(files)
}

/// A libFuzzer dictionary of the words of TOML files: every name (of a field, a call, an
/// attribute, a status) and every table header, so that mutations stay close to files that
/// load.
fn toml_dictionary(files: &[(String, Vec<u8>)]) -> String {
    let mut words = std::collections::BTreeSet::new();
    for (_, bytes) in files {
        let text = String::from_utf8_lossy(bytes);
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('[') && !line.contains('"') && !line.contains('\\') {
                words.insert(line.to_owned());
            }
        }
        let is_word = |c: char| c.is_ascii_alphanumeric() || "_.:-".contains(c);
        for word in text.split(|c: char| !is_word(c)) {
            if word.len() >= 3 {
                words.insert(word.to_owned());
            }
        }
    }
    words.iter().map(|w| format!("\"{w}\"\n")).collect()
}

/// A libFuzzer dictionary of the wire's strings: every run of four or more printable bytes
/// in the captured messages (keys, security and buffer modes, versions).
fn dictionary(captured: &[Vec<u8>]) -> String {
    let mut words = std::collections::BTreeSet::new();
    for m in captured {
        for run in m.split(|b| !(b.is_ascii_graphic())) {
            if run.len() >= 4 {
                words.insert(String::from_utf8_lossy(run).into_owned());
            }
        }
    }
    words
        .iter()
        .filter(|w| !w.contains('"') && !w.contains('\\'))
        .map(|w| format!("\"{w}\"\n"))
        .collect()
}

/// The seed corpus of the `unpack` target: every golden vector, in the layout of
/// `pmix::codec::fuzzing::unpack` (type code, buffer-type flag, bytes).
fn fuzz_seeds(root: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let consts = read(&root.join("spec-vectors/inventory/openpmix-4.2/constants.tsv"))?;
    let code = |name: &str| {
        consts.lines().find_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c.len() == 4 && c[0] == name && c[2] == "DataType")
                .then(|| c[1].parse::<u8>().ok())
                .flatten()
        })
    };
    let mut seeds = Vec::new();
    for (file, flag) in [
        ("wire_vectors_nondesc.tsv", 0u8),
        ("wire_vectors_fullydesc.tsv", 1),
    ] {
        let text = read(&root.join("pmix/tests/data/wire-vectors").join(file))?;
        for (i, line) in text.lines().enumerate() {
            let cells: Vec<&str> = line.split('\t').collect();
            let (Some(t), Some(hex)) = (code(cells[0]), cells.get(2)) else {
                continue;
            };
            let mut bytes = vec![t, flag];
            for k in (0..hex.len()).step_by(2) {
                bytes.push(
                    u8::from_str_radix(&hex[k..k + 2], 16)
                        .map_err(|e| format!("{file}:{}: {e}", i + 1))?,
                );
            }
            seeds.push((format!("golden-{flag}-{i:03}"), bytes));
        }
    }
    Ok(seeds)
}

pub(crate) fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}
