//! `cargo xtask conformance`: check the inventory against the code's tables, run the
//! behavioural vectors of `spec-vectors/vectors/` on a target, and report.
//!
//! Targets: `rust` (this crate, in-process, the default) and `--target LIB` for any
//! `libpmix.so` (a path, or a name such as `libpmix.so.2` for the dynamic loader), whose node
//! servers and ranks run as child processes of this binary (the hidden `__libpmix-*`
//! subcommands). `--pairing rust-server:c-client` and `--pairing c-server:rust-client` run
//! the same vectors with this crate on one side and the library (`--library`, default
//! `libpmix.so.2`) on the other, checking the two interoperate over the wire.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};

use conformance::inventory::{Inventory, Version};
use conformance::outcome::{Outcome, Row};
use conformance::runner::{self, Side, Target};
use conformance::{report, vector};

/// Check the PMIx Standard's inventory against the `pmix` crate's tables, run the behavioural
/// vectors of `spec-vectors/vectors/` on one or more targets, and report what each verifiably
/// does.
#[derive(Debug, Parser)]
#[command(name = "conformance", version)]
struct Options {
    /// A target to run the vectors on: `rust` (this crate, in process) or any libpmix.so (a
    /// path, or a name such as libpmix.so.2 for the dynamic loader). Repeat for a matrix;
    /// `rust` when neither a target nor a pairing is given.
    #[arg(long = "target", value_name = "rust|LIBPMIX")]
    targets: Vec<String>,
    /// This crate on one side and the library (`--library`) on the other, run after the
    /// targets. Repeat for both.
    #[arg(long = "pairing", value_enum, value_name = "PAIRING")]
    pairings: Vec<Pairing>,
    /// The C library of the pairings.
    #[arg(long, value_name = "LIBPMIX", default_value = "libpmix.so.2")]
    library: String,
    /// Run only the vectors whose id matches (`*` matches any run of characters); repeat
    /// for several.
    #[arg(long, value_name = "GLOB")]
    filter: Vec<String>,
    /// Run only the K-th of N slices of the vectors (`2/8`: every eighth vector, starting
    /// with the third, in id order): a part of a long matrix, as CI runs one per commit.
    #[arg(long, value_name = "K/N", value_parser = parse_slice)]
    slice: Option<(usize, usize)>,
    /// Another folder of vectors, judged without the baselines: any vector that does not
    /// pass makes the exit status non-zero.
    #[arg(long, value_name = "DIR")]
    vectors: Option<PathBuf>,
    /// Write the Markdown and HTML matrix and JUnit here.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Write the results and coverage as JSON here.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Write each target's results as its committed baseline (spec-vectors/baseline/).
    #[arg(long)]
    update_baseline: bool,
    /// The targets whose passing vectors are run again without each attribute they use, to
    /// prove which attributes they verify (`rust`, `all` or `none`): a target not ablated
    /// has no verified attributes in the report.
    #[arg(long, value_name = "rust|all|none", default_value = "rust")]
    ablate: String,
    /// How many copies of vectors the ablation runs at once.
    #[arg(long, value_name = "N", default_value_t = 4)]
    ablate_parallel: usize,
    /// How many vectors run at once on each target (most of a vector's time is waiting for
    /// a timeout to pass or a peer to answer). The lines then come in the order the vectors
    /// end; the report is in id order either way.
    #[arg(long, value_name = "N", default_value_t = 1)]
    parallel: usize,
}

/// The two ways of pairing this crate with a library.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Pairing {
    /// This crate's servers, the library's clients.
    #[value(name = "rust-server:c-client")]
    RustServer,
    /// The library's servers, this crate's clients.
    #[value(name = "c-server:rust-client")]
    CServer,
}

impl Options {
    /// The targets and then the pairings, by the names `resolve_target` reads.
    fn all_targets(&self) -> Vec<String> {
        let mut all = self.targets.clone();
        all.extend(self.pairings.iter().map(|p| match p {
            Pairing::RustServer => "rust-server:c-client".to_owned(),
            Pairing::CServer => "c-server:rust-client".to_owned(),
        }));
        if all.is_empty() {
            all.push("rust".into());
        }
        all
    }
}

/// `K/N` with `K < N`.
fn parse_slice(text: &str) -> Result<(usize, usize), String> {
    let (k, n) = text
        .split_once('/')
        .ok_or_else(|| format!("{text:?} is not K/N"))?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|e| format!("{k:?}: {e}"))?,
        n.trim().parse().map_err(|e| format!("{n:?}: {e}"))?,
    );
    if n == 0 || k >= n {
        return Err(format!("{text:?}: K must be below N, and N above 0"));
    }
    Ok((k, n))
}

/// `*` matches any run of characters; everything else matches itself.
fn glob(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let mut rest = s;
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(p) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(p);
        } else {
            let Some(at) = rest.find(p) else {
                return false;
            };
            rest = &rest[at + p.len()..];
        }
    }
    true
}

fn main() -> ExitCode {
    // The child processes of the libpmix target.
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("__rust-client") => return conformance::libpmix_child::rust_client_main(),
        Some("__rust-tool") => return conformance::libpmix_child::rust_tool_main(),
        _ => {}
    }
    if let [_, sub, lib] = args.as_slice() {
        match sub.as_str() {
            "__libpmix-version" => return conformance::libpmix_child::version_main(lib),
            "__libpmix-node" => return conformance::libpmix_child::node_main(lib),
            "__libpmix-client" => return conformance::libpmix_child::client_main(lib),
            "__libpmix-tool" => return conformance::libpmix_child::tool_main(lib),
            _ => {}
        }
    }
    let opts = Options::parse();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = root.join("spec-vectors/inventory");
    let inventory = match Inventory::load(&dir) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("conformance: bad inventory: {e}");
            return ExitCode::FAILURE;
        }
    };
    let problems = check_against_code(&inventory);
    for version in Version::ALL {
        let s = inventory.standard(version);
        println!(
            "inventory {version}: {} APIs, {} attributes, {} constants, {} structs, {} retrieval rules",
            s.apis.len(),
            s.attributes.len(),
            s.constants.len(),
            s.structs.len(),
            inventory.rules(version).count()
        );
    }
    if !problems.is_empty() {
        eprintln!("\nthe pmix crate's tables disagree with the inventory:");
        for p in &problems {
            eprintln!("  {p}");
        }
        return ExitCode::FAILURE;
    }
    println!("the pmix crate's tables agree with the inventory\n");

    let vector_dir = opts
        .vectors
        .clone()
        .unwrap_or_else(|| root.join("spec-vectors/vectors"));
    let all = match vector::load_dir(&vector_dir) {
        Ok(v) => v,
        Err(errors) => {
            for e in errors {
                eprintln!("conformance: {e}");
            }
            return ExitCode::FAILURE;
        }
    };
    let mut miscited = false;
    for v in &all {
        for p in vector::check_citations(v, &inventory) {
            eprintln!(
                "conformance: {}: {p}",
                vector_dir.join(format!("{}.toml", v.id)).display()
            );
            miscited = true;
        }
    }
    if miscited {
        return ExitCode::FAILURE;
    }
    let vectors: Vec<_> = all
        .into_iter()
        .filter(|v| opts.filter.is_empty() || opts.filter.iter().any(|f| glob(f, &v.id)))
        .enumerate()
        .filter(|(i, _)| opts.slice.is_none_or(|(k, n)| i % n == k))
        .map(|(_, v)| v)
        .collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("conformance: cannot start a runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut targets = Vec::new();
    for t in &opts.all_targets() {
        match resolve_target(&runtime, t, &opts.library) {
            Ok(target) => targets.push(target),
            Err(e) => {
                eprintln!("conformance: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let mut rows = Vec::new();
    let total = vectors.len();
    for target in &targets {
        if let Target::Processes {
            servers,
            clients,
            version,
            ..
        } = target
        {
            if servers == clients {
                println!("target {}: {servers} ({version})", target.name());
            } else {
                println!(
                    "target {}: servers {servers}, clients {clients} ({version})",
                    target.name()
                );
            }
        }
        let bar = progress(total);
        let mut ended = 0;
        let outcomes = runtime.block_on(runner::run_many_reporting(
            &vectors,
            target,
            opts.parallel,
            |i, outcome| {
                ended += 1;
                let line = format!(
                    "{ended:>3}/{total} {:<16} {:<14} {}",
                    outcome.label(),
                    target.name(),
                    vectors[i].id
                );
                if bar.is_hidden() {
                    println!("{line}");
                } else {
                    bar.println(line);
                }
                bar.inc(1);
            },
        ));
        for (v, outcome) in vectors.iter().zip(outcomes) {
            rows.push(Row {
                id: v.id.clone(),
                section: v.section.clone(),
                rules: v.rules.clone(),
                target: target.name().to_owned(),
                outcome,
            });
        }
        bar.finish_and_clear();
    }
    let mut proofs = std::collections::BTreeMap::new();
    for target in &targets {
        let ablated = match opts.ablate.as_str() {
            "all" => true,
            "rust" => *target == Target::Rust,
            _ => false,
        };
        if !ablated {
            continue;
        }
        println!(
            "ablation on {}: each passing vector again without each attribute it uses",
            target.name()
        );
        let proof = runtime.block_on(conformance::ablation::prove(
            &vectors,
            &rows,
            target,
            opts.ablate_parallel,
        ));
        println!(
            "  {} copies run, {} attributes proven",
            proof.runs,
            proof.attributes.len()
        );
        proofs.insert(target.name().to_owned(), proof);
    }
    runtime.shutdown_background();
    let mutation = match conformance::mutation::Mutation::load(&root.join("spec-vectors")) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("conformance: the mutation ledger: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "mutation ledger: {} mutants measured (cargo xtask mutants); {} of {} attributed APIs \
         and rules proven",
        mutation.measured,
        mutation.items.values().filter(|i| i.proven()).count(),
        mutation.attributed.len()
    );
    let evidence = conformance::coverage::Evidence {
        ablation: proofs,
        mutation,
    };

    let md = report::markdown(&rows, &inventory, &vectors, &evidence);
    let summary = md
        .split("\n## Matrix")
        .next()
        .unwrap_or_default()
        .trim_start_matches("# Conformance report\n\n");
    println!("\n{summary}");
    // The parts of the departure table, as the report has them.
    if let (Some(from), Some(to)) = (
        md.find("## Where each target departs from the standard"),
        md.find("\n## Departures, expected failures and unsupported calls")
            .or_else(|| md.find("\n## Coverage")),
    ) && from < to
    {
        println!("{}\n", md[from..to].trim_end());
    }
    for r in rows.iter().filter(|r| r.outcome.is_bad()) {
        println!("{} on {}: {}", r.id, r.target, r.outcome.label());
        match &r.outcome {
            Outcome::Fail { diff, .. } => println!("{diff}"),
            Outcome::Error { message } => println!("  {message}"),
            Outcome::UnexpectedPass { reason } => {
                println!("  passes, but is listed as an expected failure: {reason}");
            }
            _ => {}
        }
    }
    if let Some(at) = md.find("## Coverage") {
        print!("{}", &md[at..]);
    }

    let mut ok = rows.iter().all(|r| !r.outcome.is_bad());
    // A folder of one's own vectors has no expected failures to lean on: every vector that
    // does not pass is a failure of the run.
    if opts.vectors.is_some() {
        let short: Vec<&Row> = rows
            .iter()
            .filter(|r| !matches!(r.outcome, Outcome::Pass))
            .collect();
        for r in &short {
            eprintln!("{} on {}: {}", r.id, r.target, r.outcome.label());
        }
        ok &= short.is_empty();
    }
    if let Some(dir) = &opts.report {
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(dir.join("report.md"), &md))
            .and_then(|()| std::fs::write(dir.join("report.html"), report::html(&rows)))
            .and_then(|()| std::fs::write(dir.join("junit.xml"), report::junit(&rows)?));
        match written {
            Ok(()) => println!("\nreport written to {}", dir.display()),
            Err(e) => {
                eprintln!("conformance: cannot write the report: {e}");
                ok = false;
            }
        }
    }
    if let Some(path) = &opts.json
        && let Err(e) = std::fs::write(path, report::json(&rows, &inventory, &vectors, &evidence))
    {
        eprintln!("conformance: cannot write {}: {e}", path.display());
        ok = false;
    }
    if opts.update_baseline
        && (!opts.filter.is_empty() || opts.vectors.is_some() || opts.slice.is_some())
    {
        eprintln!(
            "conformance: --update-baseline needs the whole set (no --filter, --slice or --vectors)"
        );
        return ExitCode::from(2);
    }
    for target in &targets {
        let name = target.name();
        let mine: Vec<Row> = rows.iter().filter(|r| r.target == name).cloned().collect();
        let baseline_path = root.join(format!("spec-vectors/baseline/{name}.tsv"));
        if opts.update_baseline {
            let intermittent = (vectors.iter())
                .filter(|v| (v.expected_failure.get(name)).is_some_and(|e| e.intermittent))
                .map(|v| v.id.as_str())
                .collect();
            let written =
                std::fs::create_dir_all(root.join("spec-vectors/baseline")).and_then(|()| {
                    std::fs::write(&baseline_path, report::baseline(&mine, &intermittent))
                });
            if let Err(e) = written {
                eprintln!("conformance: cannot write the baseline: {e}");
                return ExitCode::FAILURE;
            }
            println!("baseline updated: {}", baseline_path.display());
        } else if opts.vectors.is_some() {
            // The baselines are of the project's vectors; others are only reported.
        } else if let Ok(base) = std::fs::read_to_string(&baseline_path) {
            let regressed = report::regressions(&mine, &base);
            if !regressed.is_empty() {
                eprintln!("\nregressions against {}:", baseline_path.display());
                for r in &regressed {
                    eprintln!("  {r}");
                }
                ok = false;
            }
        } else {
            println!("(no baseline for {name} yet: {})", baseline_path.display());
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `rust`, a library for the dynamic loader (or a path) identified by its version, or a
/// pairing (`rust-server:c-client`, `c-server:rust-client`) with the library `lib`.
fn resolve_target(runtime: &tokio::runtime::Runtime, t: &str, lib: &str) -> Result<Target, String> {
    if t == "rust" {
        return Ok(Target::Rust);
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let (servers, clients, path) = match t {
        "rust-server:c-client" => (Side::Rust, Side::Library(lib.to_owned()), lib),
        "c-server:rust-client" => (Side::Library(lib.to_owned()), Side::Rust, lib),
        _ => (Side::Library(t.to_owned()), Side::Library(t.to_owned()), t),
    };
    let (library, version) = runtime.block_on(conformance::libpmix_target::identify(&exe, path))?;
    let name = match (&servers, &clients) {
        (Side::Rust, _) => format!("rust-server+{library}-client"),
        (_, Side::Rust) => format!("{library}-server+rust-client"),
        _ => library,
    };
    Ok(Target::Processes {
        servers,
        clients,
        name,
        version,
        exe,
    })
}

/// A bar of the vectors done, drawn on a terminal; hidden when the output goes to a file or
/// a pipe (as in CI), where each vector's line is the progress.
fn progress(total: usize) -> indicatif::ProgressBar {
    let target = indicatif::ProgressDrawTarget::stdout();
    let bar = indicatif::ProgressBar::with_draw_target(Some(total as u64), target);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("[{bar:20}] {pos:>3}/{len} {wide_msg}")
    {
        bar.set_style(style.progress_chars("#."));
    }
    bar
}

/// Compare the attribute and constant tables compiled into `pmix` with the inventory.
fn check_against_code(inventory: &Inventory) -> Vec<String> {
    use pmix::model::attr;
    let mut problems = Vec::new();
    for (version, table) in [(Version::V5_0, attr::V5_0), (Version::Draft, attr::DRAFT)] {
        let rows = &inventory.standard(version).attributes;
        if rows.len() != table.len() {
            problems.push(format!(
                "{version}: {} attributes in the inventory, {} in pmix",
                rows.len(),
                table.len()
            ));
        }
        for r in rows {
            match attr::by_name(r.get("name")) {
                Some(d) if d.key == r.get("key") => {}
                Some(d) => problems.push(format!(
                    "{}: key {} in pmix, {} in the inventory",
                    d.name,
                    d.key,
                    r.get("key")
                )),
                None => problems.push(format!("{version}: {} missing from pmix", r.get("name"))),
            }
        }
    }
    for r in &inventory.openpmix_constants {
        if r.get("rust_type") == "Status" {
            let want: i64 = r.get("value").parse().unwrap_or(i64::MIN);
            match pmix::model::Status::from_name(r.get("name")) {
                Some(s) if i64::from(s.0) == want => {}
                other => problems.push(format!(
                    "{}: {other:?} in pmix, {want} in the inventory",
                    r.get("name")
                )),
            }
        }
    }
    problems
}
