//! `cargo xtask mutants`: does a broken implementation fail the vectors?
//!
//! Two checks, both with the `rust` target's vectors as the test (the main job's run as one
//! test, `conformance/tests/rust_vectors.rs`):
//!
//! - **Mutation testing** with `cargo-mutants` over the modules of `pmix` that implement the
//!   standard's behaviour ([`MODULES`]): each mutant is the crate with one small change (a
//!   function that returns a default, an operator swapped, a match arm deleted), built and run
//!   against the vectors. A mutant no vector notices *survives*: the behaviour it changes is
//!   not observed, or the change is equivalent. Survivors are explained, one per line, in
//!   `spec-vectors/mutants.tsv`; the whole run reports the others and fails on them. The
//!   whole run takes hours (about 20 s a mutant on 2 cores), so `--shard K/N` runs a part and
//!   `--sample-of-commit N` about N mutants picked by the commit checked out (what CI runs:
//!   it reports the survivors it meets).
//! - **Planted bugs** ([`PLANTED`]): changes of this project's choosing, each a behaviour
//!   the standard requires, planted one at a time in a copy of the workspace; the main job
//!   must fail on every one.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The files of `pmix` that implement the standard's behaviour: retrieval rules and the
/// stores behind them, events, groups, process sets, queries, fences and modex,
/// publish/lookup, I/O forwarding, tools.
pub(crate) const MODULES: &[&str] = &[
    "pmix/src/retrieval/mod.rs",
    "pmix/src/store/*.rs",
    "pmix/src/events.rs",
    "pmix/src/client/events.rs",
    "pmix/src/client/core/events.rs",
    "pmix/src/server/core/events.rs",
    "pmix/src/server/core/groups/*.rs",
    "pmix/src/client/groups.rs",
    "pmix/src/server/core/psets.rs",
    "pmix/src/query.rs",
    "pmix/src/query/support.rs",
    "pmix/src/server/core/query.rs",
    "pmix/src/server/core/collective.rs",
    "pmix/src/server/core/fencing.rs",
    "pmix/src/server/core/gets.rs",
    "pmix/src/host/publish.rs",
    "pmix/src/server/core/iof.rs",
    "pmix/src/client/iof.rs",
    "pmix/src/client/tool.rs",
];

/// The version of cargo-mutants the command installs when it is missing.
const CARGO_MUTANTS: &str = "27.1.0";

/// One planted bug: in `file`, the text `find` (which must be there once) becomes `plant`.
pub(crate) struct Planted {
    what: &'static str,
    file: &'static str,
    find: &'static str,
    plant: &'static str,
}

/// The planted bugs: each breaks a behaviour the standard requires, and the main job must
/// fail on each.
pub(crate) const PLANTED: &[Planted] = &[
    Planted {
        what: "PMIX_GET_REFRESH_CACHE ignored: a get for a key not yet posted waits instead of \
               answering from what the server holds (v5.0 §5.4.2)",
        file: "pmix/src/retrieval/mod.rs",
        find: "Found::Missing if d.refresh_cache => ServerStep::status(Status::ERR_NOT_FOUND),",
        plant: "Found::Missing if false && d.refresh_cache => {\n            ServerStep::status(Status::ERR_NOT_FOUND)\n        }",
    },
    Planted {
        what: "a publish with PMIX_RANGE_LOCAL is found by processes of other nodes (v5.0 \
               §9.4)",
        file: "pmix/src/store/published.rs",
        find: "DataRange::LOCAL => topology.same_node(of, other),",
        plant: "DataRange::LOCAL => true,",
    },
    Planted {
        what: "PMIX_COLLECT_DATA ignored: a fence never collects the participants' data \
               (v5.0 §8.2.1)",
        file: "pmix/src/server/core/collective.rs",
        find: "t.collect |= Info::flag(info, attr::COLLECT_DATA);",
        plant: "t.collect |= false && Info::flag(info, attr::COLLECT_DATA);",
    },
    Planted {
        what: "a handler registered for PMIX_EVENT_AFFECTED_PROC(S) also hears events that \
               affect other processes (v5.0 §10.1.5)",
        file: "pmix/src/events.rs",
        find: "let affected = self.affected.as_ref().is_none_or(|mine| {",
        plant: "let affected = true || self.affected.as_ref().is_none_or(|mine| {",
    },
    Planted {
        what: "a process set's membership answer misses its first member (v5.0 §14.1.2)",
        file: "pmix/src/server/core/psets.rs",
        find: "let m = DataArray::of_procs(m.clone());",
        plant: "let m = DataArray::of_procs(m.iter().skip(1).cloned().collect());",
    },
];

/// What the command was asked to run.
pub(crate) enum Run {
    /// Every mutant of [`MODULES`].
    All,
    /// One shard, `K/N`.
    Shard(String),
    /// About this many mutants, picked by the commit checked out.
    SampleOfCommit(usize),
    /// The planted bugs.
    Planted,
    /// The mutants the ledger has as survivors, again (after vectors meant to kill them);
    /// with texts, only those whose name holds one of them.
    Survivors(Vec<String>),
    /// The mutants the ledger has no outcome for (with texts, as for `Survivors`).
    Unmeasured(Vec<String>),
    /// Record the last run's outcomes in the ledger (what every run does when it ends).
    Record,
    /// The score of the ledger against the mutants of the sources checked out.
    Score,
}

/// Run `what`; cargo-mutants tests `jobs` mutants at once (each in a build folder of its
/// own: one's build overlaps another's vectors, which mostly wait).
pub(crate) fn run(root: &Path, what: Run, jobs: usize) -> Result<(), String> {
    match what {
        Run::Planted => planted(root),
        Run::Record => record(root).map(|_| ()),
        Run::Score => score(root),
        Run::All => mutants(root, Pick::All, true, jobs),
        Run::Shard(shard) => mutants(root, Pick::Shard(shard), true, jobs),
        Run::Survivors(only) => {
            let names = only_with(
                in_ledger(root, |m| m.is_some_and(|m| m.outcome == "missed"))?,
                &only,
            );
            if names.is_empty() {
                println!("the ledger has no survivor to run again");
                return Ok(());
            }
            println!("running the ledger's {} survivors again", names.len());
            mutants(root, Pick::Named(names), true, jobs)
        }
        Run::Unmeasured(only) => {
            let names = only_with(in_ledger(root, |m| m.is_none())?, &only);
            if names.is_empty() {
                println!("the ledger has an outcome for every mutant");
                return Ok(());
            }
            println!(
                "running the {} mutants the ledger has not measured",
                names.len()
            );
            mutants(root, Pick::Named(names), true, jobs)
        }
        Run::SampleOfCommit(n) => {
            let total = list(root)?.len();
            let shards = total.div_ceil(n.max(1)).max(1);
            let k = crate::head_commit(root)?.1 % shards as u64;
            println!("the commit picks shard {k} of {shards} ({total} mutants in all)");
            mutants(root, Pick::Shard(format!("{k}/{shards}")), false, jobs)
        }
    }
}

/// Install cargo-mutants when it is missing.
fn ensure_cargo_mutants() -> Result<(), String> {
    let present = Command::new("cargo")
        .args(["mutants", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if present {
        return Ok(());
    }
    println!("installing cargo-mutants {CARGO_MUTANTS} (cargo install)");
    crate::run_cmd(
        Path::new("."),
        "cargo",
        &[
            "install",
            "cargo-mutants",
            "--locked",
            "--version",
            CARGO_MUTANTS,
        ],
    )
}

/// The arguments that select the mutants of [`MODULES`].
fn selection() -> Vec<String> {
    let mut args = vec!["--package".to_owned(), "pmix".to_owned()];
    for m in MODULES {
        args.extend(["--file".to_owned(), (*m).to_owned()]);
    }
    // Unit tests' files are not the behaviour.
    args.extend(["--exclude".to_owned(), "*tests*".to_owned()]);
    args
}

/// Every mutant's name (`file:line:col: description`).
fn list(root: &Path) -> Result<Vec<String>, String> {
    ensure_cargo_mutants()?;
    let mut args = vec!["mutants".to_owned(), "--list".to_owned()];
    args.extend(selection());
    let out = Command::new("cargo")
        .args(&args)
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo mutants: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo mutants --list failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect())
}

/// A mutant's name without its line and column: what `spec-vectors/mutants.tsv` keys on, so
/// that an explanation survives edits above it.
fn without_position(name: &str) -> String {
    let mut parts = name.splitn(4, ':');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(file), Some(_line), Some(_col), Some(rest)) => format!("{file}:{rest}"),
        _ => name.to_owned(),
    }
}

/// The names of the last run's mutants of one outcome (`caught.txt`, `missed.txt`,
/// `timeout.txt`, `unviable.txt`).
fn last_run(root: &Path, list: &str) -> Vec<String> {
    std::fs::read_to_string(root.join("target/mutants/mutants.out").join(list))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The list of every mutant as the last run started.
fn last_run_list(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.join("target/mutants").join(LIST))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Where a run keeps the list of every mutant as it starts (in `target/mutants/`).
const LIST: &str = "list.txt";

/// Where a run keeps the commit it started from (in `target/mutants/`).
const COMMIT: &str = "commit.txt";

/// The ledger of mutation outcomes, committed: the whole run takes hours, so it is run in
/// shards, across sessions, and each shard's outcomes are kept here.
const LEDGER: &str = "spec-vectors/mutation.tsv";

/// What identifies a mutant across edits: its name without line and column, and which
/// occurrence of that name it is in the file (the same change can apply at several places of
/// one function).
type Key = (String, usize);

/// Each mutant of `names` (in cargo-mutants' order: by file, then position) with its key.
fn keyed(names: &[String]) -> Vec<(Key, &String)> {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    names
        .iter()
        .map(|name| {
            let bare = without_position(name);
            let n = seen.entry(bare.clone()).or_default();
            *n += 1;
            ((bare, *n), name)
        })
        .collect()
}

/// One line of the ledger: the outcome and the commit it was measured at.
#[derive(Clone, Debug, PartialEq)]
struct Measured {
    outcome: String,
    commit: String,
}

fn read_ledger(root: &Path) -> Result<std::collections::BTreeMap<Key, Measured>, String> {
    let path = root.join(LEDGER);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut out = std::collections::BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [outcome, commit, bare, n, _position] = cols.as_slice() else {
            return Err(format!("{LEDGER}:{}: not five columns", i + 1));
        };
        let n: usize = n
            .parse()
            .map_err(|e| format!("{LEDGER}:{}: occurrence {n:?}: {e}", i + 1))?;
        out.insert(
            ((*bare).to_owned(), n),
            Measured {
                outcome: (*outcome).to_owned(),
                commit: (*commit).to_owned(),
            },
        );
    }
    Ok(out)
}

/// Merge the last run's outcomes into the ledger, drop what no longer names a mutant of the
/// sources, and write it in the sources' order. Gives how many outcomes it recorded.
fn record(root: &Path) -> Result<usize, String> {
    let current = match last_run_list(root) {
        started if !started.is_empty() => started,
        _ => list(root)?,
    };
    let keys = keyed(&current);
    // The commit the run started from (the sources may be committed to while it runs).
    let commit = match std::fs::read_to_string(root.join("target/mutants").join(COMMIT)) {
        Ok(text) if !text.trim().is_empty() => text.trim().to_owned(),
        _ => crate::head_commit(root)?.0,
    };
    let short = commit.get(..12).unwrap_or(&commit).to_owned();
    let mut ledger = read_ledger(root)?;
    let mut recorded = 0;
    for outcome in ["caught", "missed", "timeout", "unviable"] {
        for name in last_run(root, &format!("{outcome}.txt")) {
            let Some((key, _)) = keys.iter().find(|(_, n)| **n == name) else {
                return Err(format!(
                    "the last run's mutant {name:?} is not in target/mutants/{LIST}, the list \
                     its run started from: the run is not recorded"
                ));
            };
            ledger.insert(
                key.clone(),
                Measured {
                    outcome: outcome.to_owned(),
                    commit: short.clone(),
                },
            );
            recorded += 1;
        }
    }
    let mut text = String::from(
        "# The outcome of each mutant `cargo xtask mutants` has run, kept across runs: the whole\n\
         # run takes hours, so it is run in shards (`--shard K/N`). Columns: the outcome\n\
         # (caught, missed = survived, timeout = caught by a vector that did not finish,\n\
         # unviable = did not build), the commit it was measured at, the mutant's file and\n\
         # description, which occurrence of that description in the file it is, and its\n\
         # position then. Written by the command; `cargo xtask mutants --score` reads it.\n",
    );
    for (key, name) in &keys {
        if let Some(m) = ledger.get(key) {
            let position = name.split(": ").next().unwrap_or_default();
            text.push_str(&format!(
                "{}\t{}\t{}\t{}\t{position}\n",
                m.outcome, m.commit, key.0, key.1
            ));
        }
    }
    std::fs::write(root.join(LEDGER), text).map_err(|e| format!("cannot write {LEDGER}: {e}"))?;
    println!("{recorded} outcomes recorded in {LEDGER}");
    Ok(recorded)
}

/// The ledger's score against the mutants of the sources checked out, with every survivor
/// `spec-vectors/mutants.tsv` does not explain and how many mutants are not yet measured.
fn score(root: &Path) -> Result<(), String> {
    let current = list(root)?;
    let keys = keyed(&current);
    let ledger = read_ledger(root)?;
    let why = explained(root)?;
    let mut count = std::collections::BTreeMap::<&str, usize>::new();
    let mut commits = std::collections::BTreeSet::new();
    let mut unexplained = Vec::new();
    let mut explained_n = 0;
    let mut by_kind = std::collections::BTreeMap::<&str, usize>::new();
    let mut contradicted = Vec::new();
    for (key, name) in &keys {
        let Some(m) = ledger.get(key) else {
            *count.entry("untested").or_default() += 1;
            continue;
        };
        commits.insert(m.commit.as_str());
        *count.entry(m.outcome.as_str()).or_default() += 1;
        let explanation = why.iter().find(|e| e.covers(key));
        match (m.outcome.as_str(), explanation) {
            ("missed", Some(e)) => {
                explained_n += 1;
                *by_kind.entry(e.kind).or_default() += 1;
            }
            ("missed", None) => unexplained.push(*name),
            ("caught" | "timeout", Some(_)) => contradicted.push(*name),
            _ => {}
        }
    }
    let get = |k: &str| count.get(k).copied().unwrap_or(0);
    let caught = get("caught") + get("timeout");
    let viable = caught + get("missed");
    println!(
        "{} mutants in the modules; measured {} (at {} commits), {} not yet",
        current.len(),
        current.len() - get("untested"),
        commits.len(),
        get("untested")
    );
    println!(
        "{} caught ({} by a timeout), {} unviable, {} survived ({explained_n} explained)",
        caught,
        get("timeout"),
        get("unviable"),
        get("missed")
    );
    if viable > 0 {
        println!(
            "mutation score: {:.1} % of the viable mutants measured ({caught} of {viable}); \
             counting the explained survivors as caught: {:.1} %",
            100.0 * caught as f64 / viable as f64,
            100.0 * (caught + explained_n) as f64 / viable as f64
        );
    }
    if !by_kind.is_empty() {
        let kinds: Vec<String> = (by_kind.iter()).map(|(k, n)| format!("{n} {k}")).collect();
        println!("explained survivors by kind: {}", kinds.join(", "));
    }
    for name in &unexplained {
        println!("  survived: {name}");
    }
    for name in &contradicted {
        println!("  caught, yet spec-vectors/mutants.tsv explains it: {name}");
    }
    Ok(())
}

/// The current names of the mutants whose entry in the ledger (none when it has no outcome for
/// one) passes `pick`: its survivors (`missed`), or what it has not measured.
fn in_ledger(root: &Path, pick: impl Fn(Option<&Measured>) -> bool) -> Result<Vec<String>, String> {
    let current = list(root)?;
    let ledger = read_ledger(root)?;
    Ok(keyed(&current)
        .into_iter()
        .filter(|(key, _)| pick(ledger.get(key)))
        .map(|(_, name)| name.clone())
        .collect())
}

/// The names that hold one of the texts of `only`, or all of them when it has none.
fn only_with(names: Vec<String>, only: &[String]) -> Vec<String> {
    if only.is_empty() {
        return names;
    }
    (names.into_iter())
        .filter(|n| only.iter().any(|text| n.contains(text.as_str())))
        .collect()
}

/// `text` as a regular expression that matches it alone.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One explanation of `spec-vectors/mutants.tsv`: the mutant's file and description, which
/// occurrence of it in the file (`None`: every one), and why it survives.
struct Explanation {
    bare: String,
    occurrence: Option<usize>,
    /// One of [`KINDS`], without its colon.
    kind: &'static str,
    why: String,
}

impl Explanation {
    fn covers(&self, key: &Key) -> bool {
        self.bare == key.0 && self.occurrence.is_none_or(|n| n == key.1)
    }
}

/// A mutant column of `spec-vectors/mutants.tsv`: `file: description`, optionally followed by
/// ` #N` for its N-th occurrence in the file alone.
fn parse_explained_mutant(column: &str) -> (String, Option<usize>) {
    match column.rsplit_once(" #") {
        Some((bare, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (bare.to_owned(), n.parse().ok())
        }
        _ => (column.to_owned(), None),
    }
}

/// The kinds of reason an explanation may give, each its first word (see the header of
/// `spec-vectors/mutants.tsv`).
const KINDS: [&str; 4] = ["equivalent:", "undefined:", "redundant:", "peer:"];

/// The explained survivors. A line that is not `mutant<TAB>kind: reason` is an error.
fn explained(root: &Path) -> Result<Vec<Explanation>, String> {
    let path = root.join("spec-vectors/mutants.tsv");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_explanations(&text).map_err(|e| format!("{}:{e}", path.display()))
}

/// The explanations of `spec-vectors/mutants.tsv`'s text; an error names the bad line.
fn parse_explanations(text: &str) -> Result<Vec<Explanation>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| format!("{}: {what}", n + 1);
        let (m, why) = line
            .split_once('\t')
            .ok_or_else(|| bad("no tab between the mutant and the reason"))?;
        let kind = (KINDS.iter().find(|k| why.starts_with(**k))).ok_or_else(|| {
            bad(&format!(
                "the reason must begin with one of {}",
                KINDS.join(" ")
            ))
        })?;
        let (bare, occurrence) = parse_explained_mutant(m);
        out.push(Explanation {
            bare,
            occurrence,
            kind: kind.trim_end_matches(':'),
            why: why.to_owned(),
        });
    }
    Ok(out)
}

/// Which mutants a run tests.
enum Pick {
    All,
    /// `K/N`, round-robin.
    Shard(String),
    /// These, by their names as `cargo mutants --list` gives them.
    Named(Vec<String>),
}

/// Run cargo-mutants (all of [`MODULES`], one shard, or the mutants named), then list the
/// survivors; with `strict`, fail on a survivor `spec-vectors/mutants.tsv` does not explain
/// and on an explained mutant that a vector caught (its explanation is wrong).
fn mutants(root: &Path, pick: Pick, strict: bool, jobs: usize) -> Result<(), String> {
    ensure_cargo_mutants()?;
    let out_dir = root.join("target/mutants");
    // The whole list as the run starts: the ledger keys each mutant by its place in it, and
    // the sources may change while a long run goes on.
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create target/mutants: {e}"))?;
    std::fs::write(out_dir.join(LIST), list(root)?.join("\n"))
        .map_err(|e| format!("cannot write target/mutants/{LIST}: {e}"))?;
    std::fs::write(out_dir.join(COMMIT), crate::head_commit(root)?.0)
        .map_err(|e| format!("cannot write target/mutants/{COMMIT}: {e}"))?;
    let mut args = vec!["mutants".to_owned()];
    args.extend(selection());
    args.extend(
        [
            "--test-package",
            "conformance",
            "--baseline",
            "skip",
            // Cargo.toml's profile without debug information: quicker builds and links.
            "--profile",
            "mutation",
            // A mutant that makes a vector hang is ended by the vector's own timeout; this
            // bounds a mutant that hangs the harness.
            "--timeout",
            "180",
            "--output",
        ]
        .map(str::to_owned),
    );
    args.push(out_dir.display().to_string());
    args.extend(["--jobs".to_owned(), jobs.max(1).to_string()]);
    if let Pick::Named(names) = &pick {
        for name in names {
            args.extend(["--re".to_owned(), format!("^{}$", regex_escape(name))]);
        }
    }
    if let Pick::Shard(s) = pick {
        args.extend([
            "--shard".to_owned(),
            s,
            "--sharding".to_owned(),
            "round-robin".to_owned(),
        ]);
    }
    args.extend(["--", "--test", "rust_vectors", "--", "--ignored"].map(str::to_owned));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    // cargo-mutants exits non-zero when a mutant survives: the lists below judge.
    let status = Command::new("cargo")
        .args(&refs)
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run cargo mutants: {e}"))?;
    let read = |name: &str| last_run(root, name);
    let (caught, missed, timeout, unviable) = (
        read("caught.txt"),
        read("missed.txt"),
        read("timeout.txt"),
        read("unviable.txt"),
    );
    if caught.len() + missed.len() + timeout.len() + unviable.len() == 0 {
        return Err(format!("cargo mutants tested nothing ({status})"));
    }
    record(root)?;
    let why = explained(root)?;
    let mut unexplained = Vec::new();
    println!(
        "\n{} caught, {} timed out (caught: a vector did not finish), {} unviable (did not \
         build), {} survived",
        caught.len(),
        timeout.len(),
        unviable.len(),
        missed.len()
    );
    let list = last_run_list(root);
    let keys = keyed(&list);
    let key_of = |m: &String| match keys.iter().find(|(_, name)| *name == m) {
        Some((key, _)) => key.clone(),
        None => (without_position(m), 1),
    };
    for m in &missed {
        match why.iter().find(|e| e.covers(&key_of(m))) {
            Some(e) => println!("  survived, explained: {m}: {}", e.why),
            None => {
                println!("  survived: {m}");
                unexplained.push(m.clone());
            }
        }
    }
    // An explained mutant that a vector caught: the explanation said no vector could.
    let contradicted: Vec<&String> = (caught.iter().chain(&timeout))
        .filter(|m| why.iter().any(|e| e.covers(&key_of(m))))
        .collect();
    for m in &contradicted {
        println!("  caught, yet spec-vectors/mutants.tsv explains it: {m}");
    }
    let tested = caught.len() + timeout.len() + missed.len();
    if tested > 0 {
        println!(
            "mutation score: {:.0} % ({} of {tested} viable mutants caught)",
            100.0 * (caught.len() + timeout.len()) as f64 / tested as f64,
            caught.len() + timeout.len()
        );
    }
    if strict && !unexplained.is_empty() {
        return Err(format!(
            "{} mutants survive that spec-vectors/mutants.tsv does not explain: kill each with \
             a vector that observes the behaviour, or explain it there",
            unexplained.len()
        ));
    }
    if strict && !contradicted.is_empty() {
        return Err(format!(
            "{} mutants that spec-vectors/mutants.tsv explains were caught: remove their \
             explanations",
            contradicted.len()
        ));
    }
    Ok(())
}

/// Plant each bug of [`PLANTED`] in a copy of the workspace and require the main job's run
/// on `rust` to fail.
fn planted(root: &Path) -> Result<(), String> {
    let scratch = root.join("target/planted");
    let tree = scratch.join("tree");
    let _ = std::fs::remove_dir_all(&tree);
    copy_tree(root, &tree).map_err(|e| format!("cannot copy the workspace: {e}"))?;
    let target_dir = scratch.join("target");
    let mut missed = Vec::new();
    for (i, bug) in PLANTED.iter().enumerate() {
        println!(
            "\n=== planted bug {} of {}: {}",
            i + 1,
            PLANTED.len(),
            bug.what
        );
        let file = tree.join(bug.file);
        let original =
            std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", bug.file))?;
        if original.matches(bug.find).count() != 1 {
            return Err(format!(
                "{}: the text to replace is no longer there once; update PLANTED in \
                 xtask/src/mutants.rs: {}",
                bug.file, bug.find
            ));
        }
        std::fs::write(&file, original.replacen(bug.find, bug.plant, 1))
            .map_err(|e| format!("cannot write {}: {e}", bug.file))?;
        let status = Command::new("cargo")
            .args([
                "test",
                "--quiet",
                "-p",
                "conformance",
                "--test",
                "rust_vectors",
            ])
            .args(["--", "--ignored"])
            .env("CARGO_TARGET_DIR", &target_dir)
            .current_dir(&tree)
            .status()
            .map_err(|e| format!("cannot run cargo test: {e}"))?;
        std::fs::write(&file, original).map_err(|e| format!("cannot restore {}: {e}", bug.file))?;
        if status.success() {
            println!("NOT CAUGHT: the vectors pass with this bug");
            missed.push(bug.what);
        } else {
            println!("caught: the main job fails with this bug");
        }
    }
    if missed.is_empty() {
        println!("\nevery planted bug is caught");
        Ok(())
    } else {
        Err(format!(
            "the main job passes with {} planted bugs:\n  {}",
            missed.len(),
            missed.join("\n  ")
        ))
    }
}

/// Copy the workspace's sources (not `target/`, not `.git`) to `to`.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        let dest: PathBuf = to.join(&name);
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_keeps_the_names_that_hold_any_text_given() {
        let names = || vec!["a/x.rs:1:1: m".to_owned(), "b/y.rs:2:2: n".to_owned()];
        assert_eq!(only_with(names(), &[]), names());
        assert_eq!(only_with(names(), &["b/".to_owned()]), ["b/y.rs:2:2: n"]);
        let both = ["x.rs".to_owned(), "y.rs".to_owned()];
        assert_eq!(only_with(names(), &both), names());
    }

    #[test]
    fn an_explanation_keys_on_the_mutant_without_its_position() {
        assert_eq!(
            without_position(
                "pmix/src/events.rs:54:9: replace Event::affected -> Vec<Proc> with vec![]"
            ),
            "pmix/src/events.rs: replace Event::affected -> Vec<Proc> with vec![]"
        );
    }

    #[test]
    fn an_explanation_may_name_one_occurrence() {
        let (bare, n) = parse_explained_mutant("a.rs: replace == with != in f #2");
        assert_eq!(
            (bare.as_str(), n),
            ("a.rs: replace == with != in f", Some(2))
        );
        let (bare, n) = parse_explained_mutant("a.rs: replace f -> u64 with 0");
        assert_eq!((bare.as_str(), n), ("a.rs: replace f -> u64 with 0", None));
        let one = Explanation {
            bare: bare.clone(),
            occurrence: Some(2),
            kind: "equivalent",
            why: String::new(),
        };
        assert!(one.covers(&(bare.clone(), 2)));
        assert!(!one.covers(&(bare.clone(), 1)));
        let every = Explanation {
            occurrence: None,
            ..one
        };
        assert!(every.covers(&(bare, 1)));
    }

    #[test]
    fn an_explanation_must_say_its_kind() {
        let text = "# header\n\na.rs: replace f with ()\tpeer: only OpenPMIx reaches it\n\
                    b.rs: delete ! in g #2\tundefined: the standard names no status\n";
        let got = parse_explanations(text).expect("two good lines");
        let kinds: Vec<(&str, &str, Option<usize>)> = (got.iter())
            .map(|e| (e.bare.as_str(), e.kind, e.occurrence))
            .collect();
        assert_eq!(
            kinds,
            [
                ("a.rs: replace f with ()", "peer", None),
                ("b.rs: delete ! in g", "undefined", Some(2)),
            ]
        );
        let unkinded = parse_explanations("a.rs: m\tno vector reaches it\n");
        assert!(unkinded.is_err_and(|e| e.starts_with("1: the reason must begin with")));
        let untabbed = parse_explanations("# h\na.rs: m equivalent: x\n");
        assert!(untabbed.is_err_and(|e| e.starts_with("2: no tab")));
    }

    #[test]
    fn a_name_escaped_as_a_regex_matches_only_itself() {
        assert_eq!(
            regex_escape("a.rs:3:9: replace == with != in S<'_>::f (x)"),
            "a\\.rs:3:9: replace == with != in S<'_>::f \\(x\\)"
        );
    }

    #[test]
    fn a_mutant_keys_on_its_occurrence_of_a_name_in_its_file() {
        let names = [
            "a.rs:1:5: replace == with != in f".to_owned(),
            "a.rs:3:9: replace == with != in f".to_owned(),
            "b.rs:3:9: replace == with != in f".to_owned(),
        ];
        let keys: Vec<Key> = keyed(&names).into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            [
                ("a.rs: replace == with != in f".to_owned(), 1),
                ("a.rs: replace == with != in f".to_owned(), 2),
                ("b.rs: replace == with != in f".to_owned(), 1),
            ]
        );
    }

    /// Every planted bug's text is in the workspace once, so that the check plants it.
    #[test]
    fn every_planted_bug_finds_its_text() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for bug in PLANTED {
            let text = std::fs::read_to_string(root.join(bug.file)).expect("the file");
            assert_eq!(
                text.matches(bug.find).count(),
                1,
                "{}: {}",
                bug.file,
                bug.find
            );
        }
    }
}
