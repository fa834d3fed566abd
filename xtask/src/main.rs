//! Developer commands for the workspace, run as `cargo xtask <command>`.
//!
//! | command | what it does |
//! |---|---|
//! | `conformance [ARGS]` | the main job: runs the conformance runner (Rust target by default) |
//! | `test [--ci]` | the test suite through `cargo nextest` (the `ci` profile writes JUnit), after fetching the outside programs it runs (`outside`); as root also the tests that need root |
//! | `build-pmixrun` | builds `target/release/pmixrun` |
//! | `vectors [--check]` | regenerates the inventory, the code's tables and the attribute-type vectors from `../shared` |
//! | `bench [codec\\|core]` | benchmarks beside OpenPMIx's `libpmix.so.2` (codec; client/server operations) |
//! | `fuzz [TARGET] [SECONDS]` | runs fuzz targets briefly with `cargo fuzz` |
//! | `layers` | the import graph of `pmix`'s files: imports from a layer above, and files that import each other (`layers.rs`) |
//!
//! Commands that need system packages install them when run as root and print the exact
//! `apt-get` command otherwise (`sysdeps`, one list per command).

mod attribute_vectors;
mod bench;
mod layers;
mod outside;
mod sysdeps;
mod vectors;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    let (cmd, rest) = match args.split_first() {
        Some((c, r)) => (c.as_str(), r),
        None => ("help", &[][..]),
    };
    let result = match cmd {
        "conformance" => conformance(&root, rest),
        "test" => test(&root, rest),
        "build-pmixrun" => build_pmixrun(&root),
        "vectors" => vectors::run(&root, rest),
        "bench" => bench::run(&root, rest),
        "fuzz" => fuzz(&root, rest),
        "sim" => sim(&root, rest),
        "layers" => layers::run(&root, rest),
        "help" | "--help" | "-h" => {
            println!("{}", HELP);
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n\n{HELP}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask {cmd}: {message}");
            ExitCode::FAILURE
        }
    }
}

const HELP: &str = "usage: cargo xtask <command>

  conformance [--target rust|LIBPMIX]... [--pairing rust-server:c-client|c-server:rust-client]...
              [--library LIBPMIX] [--filter GLOB] [--vectors DIR] [--report DIR] [--json PATH]
              [--update-baseline]
                       run the conformance vectors (Rust target by default; LIBPMIX is any
                       libpmix.so, e.g. libpmix.so.2)
  test [--ci]          run the test suite with cargo nextest
  build-pmixrun        build target/release/pmixrun
  vectors [--check]    regenerate spec-vectors/inventory, the code's tables and the
                       attribute-type vectors
  bench [codec|core]   benchmarks beside OpenPMIx (libpmix.so.2)
  fuzz [TARGET] [SECS] run fuzz targets briefly (cargo fuzz, --sanitizer none)
  layers [--crate NAME] [--imports]
                       list pmix's files that import from a layer above them or import
                       each other (another crate's: the circles); --imports lists every import
  sim [--scenario F] [--nodes N] [--racks R] [--clients C] [--seed S | --seeds A..B]
      [--fanout K] [--modex full|direct] [--collective tree|ring] [--limit-s T]
      [--json PATH] [--record PATH | --replay PATH] [--planted-bug]
                       the deterministic cluster simulation: prints the run (or the failing
                       seeds of a sweep) with its trace hash and the command that replays it
  sim --check-planted-bug
                       check that a seed sweep catches the simulator's planted bug and that
                       the printed command replays it";

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

fn sim(root: &Path, args: &[String]) -> Result<(), String> {
    if args.first().is_some_and(|a| a == "--check-planted-bug") {
        return sim_planted_check(root);
    }
    let planted = args.iter().any(|a| a == "--planted-bug");
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

fn test(root: &Path, args: &[String]) -> Result<(), String> {
    sysdeps::ensure(sysdeps::TESTS)?;
    sysdeps::ensure_deb_src()?;
    outside::fetch(root)?;
    let ci = args.iter().any(|a| a == "--ci") || std::env::var_os("CI").is_some();
    let profile = if ci { "ci" } else { "default" };
    if which("cargo-nextest").is_none() {
        return Err(
            "cargo-nextest is not installed: run `cargo install cargo-nextest --locked`".into(),
        );
    }
    let passthrough: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--ci")
        .collect();
    // The interoperability tests launch programs through `pmixrun`, a binary of `pmix`:
    // nextest builds test targets only, so build the binaries of the same profile first.
    run_cmd(root, "cargo", &["build", "-p", "pmix", "--bins"])?;
    let mut nextest = vec!["nextest", "run", "--workspace", "--profile", profile];
    // The tests that need root (they create a second user) are ignored otherwise.
    if sysdeps::is_root() {
        nextest.extend(["--run-ignored", "all"]);
    }
    nextest.extend(passthrough);
    run_cmd(root, "cargo", &nextest)?;
    // Doctests are not run by nextest.
    run_cmd(root, "cargo", &["test", "--workspace", "--doc", "--quiet"])
}

fn fuzz(root: &Path, args: &[String]) -> Result<(), String> {
    let target = args.first().map_or("unpack", String::as_str);
    let seconds = args.get(1).map_or("30", String::as_str);
    if which("cargo-fuzz").is_none() {
        return Err("cargo-fuzz is not installed: run `cargo install cargo-fuzz --locked`".into());
    }
    let corpus = root.join("fuzz/corpus").join(target);
    std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    let seeds = fuzz_seeds(root)?;
    for (name, bytes) in &seeds {
        std::fs::write(corpus.join(name), bytes).map_err(|e| format!("{name}: {e}"))?;
    }
    println!("seeded {} inputs from the golden vectors", seeds.len());
    let max_time = format!("-max_total_time={seconds}");
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
        ],
    )
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
