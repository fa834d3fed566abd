//! Reports of a run: the Markdown and HTML matrix of vectors × targets, what changed between
//! the OpenPMIx releases of a run (`releases`), failures with their diffs, the coverage
//! table, JUnit XML for CI and a JSON summary for machines.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use crate::coverage;

use crate::coverage::Evidence;
use crate::inventory::{Inventory, Version};
use crate::outcome::{Outcome, Row, Seen};
use crate::vector::{FailureKind, Vector};

mod releases;

/// Counts per outcome label, in a fixed order.
pub fn counts(rows: &[Row]) -> Vec<(&'static str, usize)> {
    let labels = [
        "pass",
        "FAIL",
        "not supported",
        "expected failure",
        "UNEXPECTED PASS",
        "ERROR",
    ];
    labels
        .iter()
        .map(|l| (*l, rows.iter().filter(|r| r.outcome.label() == *l).count()))
        .collect()
}

/// The Markdown report: summary, matrix, failures with diffs, coverage.
pub fn markdown(
    rows: &[Row],
    inventory: &Inventory,
    vectors: &[Vector],
    evidence: &Evidence,
) -> String {
    let targets: BTreeSet<&str> = rows.iter().map(|r| r.target.as_str()).collect();
    let mut out = String::from("# Conformance report\n\n");
    for t in &targets {
        let mine: Vec<Row> = rows.iter().filter(|r| r.target == *t).cloned().collect();
        let parts: Vec<String> = counts(&mine)
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(l, n)| format!("{n} {l}"))
            .collect();
        let _ = writeln!(out, "- `{t}`: {} vectors: {}", mine.len(), parts.join(", "));
    }
    out.push_str(&releases::markdown(rows));
    out.push_str("\n## Matrix\n\n| vector | section | rules |");
    for t in &targets {
        let _ = write!(out, " {t} |");
    }
    out.push_str("\n|---|---|---|");
    for _ in &targets {
        out.push_str("---|");
    }
    out.push('\n');
    let ids: BTreeSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    for id in &ids {
        let first = rows.iter().find(|r| r.id == *id);
        let (section, rules) = first.map_or((String::new(), String::new()), |r| {
            (r.section.clone(), r.rules.join(", "))
        });
        let _ = write!(out, "| `{id}` | {section} | {rules} |");
        for t in &targets {
            let cell = rows
                .iter()
                .find(|r| r.id == *id && r.target == *t)
                .map_or("", |r| r.outcome.label());
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    let departed = departures(rows);
    for kind in [
        FailureKind::Departure,
        FailureKind::Allowed,
        FailureKind::Harness,
        FailureKind::Unimplemented,
        FailureKind::Inexpressible,
    ] {
        let part: Vec<_> = departed.iter().filter(|(k, _, _)| *k == kind).collect();
        let _ = write!(out, "\n## {}\n\n", part_title(kind));
        if part.is_empty() {
            out.push_str("None.\n");
            continue;
        }
        out.push_str(
            "| target | vector | step | seen | rules | reason |\n|---|---|---:|---|---|---|\n",
        );
        for (_, r, what) in part {
            let (step, seen) = r.outcome.failed_at().unwrap_or((0, ""));
            let _ = writeln!(
                out,
                "| `{}` | `{}` | {step} | {seen} | {} | {} |",
                r.target,
                r.id,
                r.rules.join(", "),
                what.replace('|', "\\|").replace('\n', " ")
            );
        }
    }
    out.push_str(LIBRARY_NOTE);
    let notable: Vec<&Row> = rows
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::Pass))
        .collect();
    if !notable.is_empty() {
        out.push_str("\n## Departures, expected failures and unsupported calls\n");
        for r in notable {
            let _ = writeln!(
                out,
                "\n### `{}` on `{}`: {}\n",
                r.id,
                r.target,
                r.outcome.label()
            );
            match &r.outcome {
                Outcome::Fail { step, diff, .. } => {
                    let _ = writeln!(out, "Step {step}:\n\n```diff\n{}\n```", diff.trim_end());
                }
                Outcome::NotSupported { step, api, seen } => {
                    let _ = writeln!(out, "Step {step}: {}.", not_supported_text(api, seen));
                }
                Outcome::ExpectedFailure {
                    step, seen, reason, ..
                } => {
                    let _ = writeln!(
                        out,
                        "Fails at step {step} seeing {seen}, as listed: {reason}"
                    );
                }
                Outcome::UnexpectedPass { reason } => {
                    let _ = writeln!(out, "Listed reason: {reason}");
                }
                Outcome::Error { message } => {
                    let _ = writeln!(out, "{message}");
                }
                Outcome::Pass => {}
            }
        }
    }
    out.push_str("\n## Coverage\n\n");
    out.push_str(COVERAGE_NOTE);
    let tally = coverage::tally(vectors, rows, evidence);
    out.push_str(&coverage::markdown(&coverage::table(inventory, &tally)));
    out.push_str("\n### Per chapter of v5.0\n\n");
    out.push_str(&coverage::markdown(&coverage::chapters(inventory, &tally)));
    out.push_str(&unverified(
        inventory,
        &tally,
        rows,
        vectors,
        &evidence.mutation,
    ));
    out
}

/// How to read the coverage table.
const COVERAGE_NOTE: &str = "*Verified*: an attribute (or a required attribute × API pair) \
is verified on a target when a vector that passes there fails once the attribute is taken \
out of its inputs (ablation; *not ablated* where the run did not try); an API, upcall or \
retrieval rule when a passing vector observes its effect (a value, data, results, events, \
the host's upcalls, or a status other than success) and mutation proves it: a mutant of the \
code that implements it was caught and none survives unexplained (`cargo xtask mutants`, \
`spec-vectors/mutation.tsv` and `implemented-by.tsv`). *Forwarded*: a passing vector sees a \
host handed the item (an upcall, an attribute it carries). *Passing*: a passing vector names \
it; *named*: some vector names it. How each is counted: `spec-vectors/README.md`.\n\n";

/// What a library target's column of the publish/lookup chapter measures.
const LIBRARY_NOTE: &str = "\nOn a library target, the data of `PMIx_Publish`, \
`PMIx_Lookup` and `PMIx_Unpublish` is kept by the harness's host, which stores it with this \
crate's own table (`pmix::host::publish`): a library's server hands these requests to its \
host, as the standard has it. The `publish-lookup/` results of a library target therefore \
measure that library's client and server carrying the requests and answers, not a store of \
its own.\n";

fn part_title(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::Departure => "Where each target departs from the standard",
        FailureKind::Harness => "Where the harness cannot yet drive a target",
        FailureKind::Unimplemented => "What this crate does not implement yet",
        FailureKind::Allowed => "Where a target takes another path the standard allows",
        FailureKind::Inexpressible => "What a target's API cannot express",
    }
}

fn not_supported_text(api: &str, seen: &str) -> String {
    if seen == Seen::NO_SUCH_CALL {
        format!("the target has no function for `{api}`")
    } else {
        format!("`{api}` answered `PMIX_ERR_NOT_SUPPORTED`")
    }
}

/// The v5.0 client and server APIs no passing vector verifies on `rust`, each with the
/// reason of an expected failure that names it, and how many attributes are verified.
fn unverified(
    inventory: &Inventory,
    t: &coverage::Tally,
    rows: &[Row],
    vectors: &[Vector],
    mutation: &crate::mutation::Mutation,
) -> String {
    let Some(rust) = t.verified.get("rust") else {
        return String::new();
    };
    let unproven = t.unproven.get("rust").cloned().unwrap_or_default();
    let std = inventory.standard(Version::V5_0);
    let mut out = String::new();
    for (what, kind) in coverage::API_KINDS {
        let missing: Vec<&str> = std
            .apis
            .iter()
            .filter(|r| r.get("kind") == kind && !rust.apis.contains(r.get("name")))
            .map(|r| r.get("name"))
            .collect();
        if missing.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\nv5.0 {what} not yet verified on `rust`:\n");
        for api in missing {
            let naming: Vec<&Vector> = vectors
                .iter()
                .filter(|v| {
                    v.steps.iter().any(|s| s.call.api() == Some(api))
                        || v.apis.iter().any(|a| a == api)
                })
                .collect();
            let on_rust = |v: &Vector| rows.iter().find(|r| r.id == v.id && r.target == "rust");
            // An expected failure explains the gap only where no vector naming the API passes.
            let passes = naming
                .iter()
                .any(|v| on_rust(v).is_some_and(|r| r.outcome == Outcome::Pass));
            if let Some((_, why)) = coverage::NOTHING_DEFINED_TO_OBSERVE
                .iter()
                .find(|(name, _)| *name == api)
            {
                let _ = writeln!(out, "- `{api}` (nothing defined to observe: {why})");
                continue;
            }
            if unproven.apis.contains(api) {
                let why = mutation.why_not(api).unwrap_or_default();
                let _ = writeln!(out, "- `{api}` (observed, not proven by mutation: {why})");
                continue;
            }
            let listed = naming
                .iter()
                .filter(|_| !passes)
                .filter_map(|v| on_rust(v))
                .find_map(|r| match &r.outcome {
                    Outcome::ExpectedFailure { reason, .. } => {
                        Some(format!("`{}`: {reason}", r.id))
                    }
                    Outcome::NotSupported { api, seen, .. } => {
                        Some(format!("`{}`: {}", r.id, not_supported_text(api, seen)))
                    }
                    _ => None,
                });
            let _ = writeln!(
                out,
                "- `{api}`{}",
                listed
                    .map(|l| format!(" (expected failure {l})"))
                    .unwrap_or_default()
            );
        }
    }
    let rules: Vec<&String> = (unproven.rules.iter())
        .filter(|r| {
            inventory
                .rules(Version::V5_0)
                .any(|row| row.get("id") == r.as_str())
        })
        .collect();
    if !rules.is_empty() {
        let _ = writeln!(
            out,
            "\nv5.0 retrieval rules observed on `rust` but not proven by mutation (the ledger \
             has {} mutants measured):\n",
            mutation.measured
        );
        for r in rules {
            let why = mutation.why_not(r).unwrap_or_default();
            let _ = writeln!(out, "- {r}: {why}");
        }
    }
    out
}

/// The rows where a target fails a vector (failures, expected failures, calls it does not
/// support), each with its part of the table and a one-line description.
pub fn departures(rows: &[Row]) -> Vec<(FailureKind, &Row, String)> {
    rows.iter()
        .filter_map(|r| {
            let (kind, what) = match &r.outcome {
                Outcome::ExpectedFailure { reason, kind, .. } => (*kind, reason.clone()),
                Outcome::Fail { step, diff, .. } => {
                    let changed: Vec<&str> = diff
                        .lines()
                        .filter(|l| l.starts_with(['-', '+']) && !l.starts_with("---"))
                        .filter(|l| !l.starts_with("+++"))
                        .map(str::trim)
                        .collect();
                    let what = format!("step {step}: {} (not yet explained)", changed.join("; "));
                    (FailureKind::Departure, what)
                }
                Outcome::NotSupported { api, seen, .. } if seen == Seen::NO_SUCH_CALL => {
                    (FailureKind::Unimplemented, not_supported_text(api, seen))
                }
                Outcome::NotSupported { api, seen, .. } => {
                    (FailureKind::Departure, not_supported_text(api, seen))
                }
                _ => return None,
            };
            Some((kind, r, what))
        })
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The HTML report: the matrix of vectors × targets, the departures, and each outcome's
/// detail.
pub fn html(rows: &[Row]) -> String {
    let targets: BTreeSet<&str> = rows.iter().map(|r| r.target.as_str()).collect();
    let mut out = String::from(
        "<!doctype html>\n<meta charset=\"utf-8\">\n<title>Conformance report</title>\n\
         <style>td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}\
         table{border-collapse:collapse}.pass{background:#dfd}.bad{background:#fdd}\
         .other{background:#ffd}</style>\n<h1>Conformance report</h1>\n<h2>Matrix</h2>\n<table>\n\
         <tr><th>vector</th><th>rules</th>",
    );
    for t in &targets {
        let _ = write!(out, "<th>{}</th>", escape(t));
    }
    out.push_str("</tr>\n");
    let ids: BTreeSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    for id in &ids {
        let rules = rows
            .iter()
            .find(|r| r.id == *id)
            .map(|r| r.rules.join(", "))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td>",
            escape(id),
            escape(&rules)
        );
        for t in &targets {
            match rows.iter().find(|r| r.id == *id && r.target == *t) {
                Some(r) => {
                    let _ = write!(
                        out,
                        "<td class=\"{}\" title=\"{}\">{}</td>",
                        class(&r.outcome),
                        escape(&detail_text(&r.outcome)),
                        r.outcome.label()
                    );
                }
                None => out.push_str("<td></td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    let departed = departures(rows);
    for kind in [
        FailureKind::Departure,
        FailureKind::Allowed,
        FailureKind::Harness,
        FailureKind::Unimplemented,
        FailureKind::Inexpressible,
    ] {
        let _ = write!(
            out,
            "<h2>{}</h2>\n<table>\n<tr><th>target</th><th>vector</th><th>step</th><th>seen</th>\
             <th>rules</th><th>reason</th></tr>\n",
            part_title(kind)
        );
        for (_, r, what) in departed.iter().filter(|(k, _, _)| *k == kind) {
            let (step, seen) = r.outcome.failed_at().unwrap_or((0, ""));
            let _ = writeln!(
                out,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{step}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                class(&r.outcome),
                escape(&r.target),
                escape(&r.id),
                escape(seen),
                escape(&r.rules.join(", ")),
                escape(what)
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str(
        "<h2>Details</h2>\n<table>\n<tr><th>vector</th><th>target</th><th>outcome</th><th>detail</th></tr>\n",
    );
    for r in rows.iter().filter(|r| r.outcome != Outcome::Pass) {
        let detail = match &r.outcome {
            Outcome::Fail { diff, .. } => format!("<pre>{}</pre>", escape(diff)),
            o => escape(&detail_text(o)),
        };
        let _ = writeln!(
            out,
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{detail}</td></tr>",
            class(&r.outcome),
            escape(&r.id),
            escape(&r.target),
            r.outcome.label()
        );
    }
    out.push_str("</table>\n");
    out
}

fn class(o: &Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        o if o.is_bad() => "bad",
        _ => "other",
    }
}

fn detail_text(o: &Outcome) -> String {
    match o {
        Outcome::Fail { diff, .. } => diff.clone(),
        Outcome::NotSupported { step, api, seen } => {
            format!("step {step}: {}", not_supported_text(api, seen))
        }
        Outcome::ExpectedFailure {
            step, seen, reason, ..
        } => format!("step {step}, seeing {seen}: {reason}"),
        Outcome::UnexpectedPass { reason } => reason.clone(),
        Outcome::Error { message } => message.clone(),
        Outcome::Pass => String::new(),
    }
}

/// JUnit XML: a test suite per target, a test case per vector; failures and errors carry
/// their detail, expected failures and unsupported calls are skipped with their reason.
pub fn junit(rows: &[Row]) -> std::io::Result<String> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
    for r in rows {
        let status = match &r.outcome {
            Outcome::Pass => TestCaseStatus::success(),
            Outcome::Fail { diff, .. } => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message("departs from the standard")
                    .set_description(diff.as_str());
                s
            }
            Outcome::UnexpectedPass { reason } => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message("passed but listed as an expected failure")
                    .set_description(reason.as_str());
                s
            }
            Outcome::Error { message } => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_message(message.as_str());
                s
            }
            Outcome::NotSupported { api, .. } => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(format!("{api} not supported"));
                s
            }
            Outcome::ExpectedFailure { reason, .. } => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(reason.as_str());
                s
            }
        };
        let mut case = TestCase::new(r.id.as_str(), status);
        case.set_classname(r.target.as_str());
        (suites.entry(&r.target))
            .or_insert_with(|| TestSuite::new(r.target.as_str()))
            .add_test_case(case);
    }
    let mut report = Report::new("conformance");
    report.add_test_suites(suites.into_values());
    report.to_string().map_err(std::io::Error::other)
}

/// The JSON summary.
pub fn json(
    rows: &[Row],
    inventory: &Inventory,
    vectors: &[Vector],
    evidence: &Evidence,
) -> String {
    /// One line of the coverage table, as counts.
    #[derive(Serialize)]
    struct Count {
        version: String,
        items: String,
        total: usize,
        named: usize,
        /// Per target: verified (absent for attributes on a target not ablated), forwarded,
        /// passing.
        targets: BTreeMap<String, TargetCounts>,
    }
    #[derive(Serialize)]
    struct TargetCounts {
        verified: Option<usize>,
        forwarded: usize,
        passing: usize,
    }
    let counted = |lines: Vec<coverage::Line>| -> Vec<Count> {
        lines
            .into_iter()
            .map(|l| Count {
                version: l.version.to_string(),
                items: l.what,
                total: l.total,
                named: l.named,
                targets: (l.targets.into_iter())
                    .map(|t| {
                        let c = TargetCounts {
                            verified: t.verified,
                            forwarded: t.forwarded,
                            passing: t.passing,
                        };
                        (t.target, c)
                    })
                    .collect(),
            })
            .collect()
    };
    /// Items of the standard: APIs, attributes, rules and (API, attribute) pairs.
    #[derive(Serialize)]
    struct Items {
        apis: Vec<String>,
        attributes: Vec<String>,
        rules: Vec<String>,
        pairs: Vec<(String, String)>,
    }
    impl From<&coverage::Covered> for Items {
        fn from(c: &coverage::Covered) -> Items {
            Items {
                apis: c.apis.iter().cloned().collect(),
                attributes: c.attributes.iter().cloned().collect(),
                rules: c.rules.iter().cloned().collect(),
                pairs: c.pairs.iter().cloned().collect(),
            }
        }
    }
    #[derive(Serialize)]
    struct Summary<'a> {
        counts: Vec<(&'static str, usize)>,
        /// The coverage table: per version and kind of item, then per chapter of v5.0.
        coverage: Vec<Count>,
        chapters: Vec<Count>,
        named: Items,
        /// Per target: the items passing vectors name.
        passing: BTreeMap<String, Items>,
        /// Per target: the items passing vectors see handed to a host.
        forwarded: BTreeMap<String, Items>,
        /// Per target: the items passing vectors observe (attributes and pairs proven by
        /// ablation, on the targets in `ablated`).
        verified: BTreeMap<String, Items>,
        /// The targets the ablation ran on.
        ablated: Vec<String>,
        /// Per ablated target: each verified attribute with the vectors whose copy without it
        /// failed.
        ablation: BTreeMap<String, BTreeMap<String, Vec<String>>>,
        /// The mutation ledger read against the attribution: how many mutants are measured,
        /// and per attributed API or rule the mutants caught, explained and surviving.
        mutation: &'a crate::mutation::Mutation,
        results: &'a [Row],
    }
    let t = coverage::tally(vectors, rows, evidence);
    let per = |m: &BTreeMap<String, coverage::Covered>| {
        m.iter().map(|(k, c)| (k.clone(), Items::from(c))).collect()
    };
    serde_json::to_string_pretty(&Summary {
        counts: counts(rows),
        coverage: counted(coverage::table(inventory, &t)),
        chapters: counted(coverage::chapters(inventory, &t)),
        named: Items::from(&t.named),
        passing: per(&t.passing),
        forwarded: per(&t.forwarded),
        verified: per(&t.verified),
        ablated: t.ablated.iter().cloned().collect(),
        mutation: &evidence.mutation,
        ablation: evidence
            .ablation
            .iter()
            .map(|(target, p)| {
                let attrs = (p.attributes.iter())
                    .map(|(a, ids)| (a.clone(), ids.iter().cloned().collect()))
                    .collect();
                (target.clone(), attrs)
            })
            .collect(),
        results: rows,
    })
    .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// The committed baseline of a target: `id<TAB>outcome label`, one per line; the vectors
/// whose listed failure is intermittent (`intermittent`) are `intermittent` whatever this
/// run saw, so that the file does not change with the race.
pub fn baseline(rows: &[Row], intermittent: &BTreeSet<&str>) -> String {
    let mut out =
        String::from("# id\toutcome (regenerate: cargo xtask conformance --update-baseline)\n");
    for r in rows {
        let label = if intermittent.contains(r.id.as_str()) {
            "intermittent"
        } else {
            r.outcome.label()
        };
        let _ = writeln!(out, "{}\t{label}", r.id);
    }
    out
}

/// Vectors that passed in `baseline` and do not pass now.
pub fn regressions(rows: &[Row], baseline: &str) -> Vec<String> {
    let passed: BTreeSet<&str> = baseline
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .filter(|(_, o)| *o == "pass")
        .map(|(id, _)| id)
        .collect();
    rows.iter()
        .filter(|r| passed.contains(r.id.as_str()) && r.outcome != Outcome::Pass)
        .map(|r| format!("{}: {}", r.id, r.outcome.label()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, target: &str, outcome: Outcome) -> Row {
        Row {
            id: id.into(),
            section: String::new(),
            rules: Vec::new(),
            target: target.into(),
            outcome,
        }
    }

    #[test]
    fn junit_has_a_suite_per_target_and_says_why_a_case_failed_or_was_skipped() {
        let rows = [
            row("a/pass", "rust", Outcome::Pass),
            row(
                "a/fail",
                "rust",
                Outcome::Fail {
                    step: 1,
                    seen: "PMIX_ERR_NOT_FOUND".into(),
                    diff: "expected <42> & saw nothing".into(),
                },
            ),
            row(
                "a/broken",
                "openpmix-4.2",
                Outcome::Error {
                    message: "timed out".into(),
                },
            ),
            row(
                "a/unsupported",
                "openpmix-4.2",
                Outcome::NotSupported {
                    step: 0,
                    api: "PMIx_Fabric_register".into(),
                    seen: "not supported".into(),
                },
            ),
        ];
        let xml = junit(&rows).expect("the report serializes");
        assert!(
            xml.contains(r#"<testsuite name="openpmix-4.2" tests="2""#),
            "{xml}"
        );
        assert!(xml.contains(r#"<testsuite name="rust" tests="2""#), "{xml}");
        assert!(xml.contains(r#"failures="1""#), "{xml}");
        // The detail is escaped, not written raw into the XML.
        assert!(
            xml.contains("expected &lt;42&gt; &amp; saw nothing"),
            "{xml}"
        );
        assert!(xml.contains(r#"<error message="timed out""#), "{xml}");
        assert!(
            xml.contains(r#"<skipped message="PMIx_Fabric_register not supported""#),
            "{xml}"
        );
    }
}
