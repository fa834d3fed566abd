//! Reports of a run: the Markdown and HTML matrix of vectors × targets, failures with their
//! diffs, the coverage table, JUnit XML for CI and a JSON summary for machines.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;

use crate::coverage::{self, Covered};
use crate::inventory::Inventory;
use crate::outcome::Outcome;
use crate::vector::Vector;

/// One vector's result on one target.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub id: String,
    pub section: String,
    pub rules: Vec<String>,
    pub target: String,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What the vectors cover: the APIs their calls make (and name), the attributes they use
/// as keys and directives, the rules they name.
pub fn covered(vectors: &[Vector]) -> Covered {
    let mut c = Covered::default();
    for v in vectors {
        c.rules.extend(v.rules.iter().cloned());
        c.apis.extend(v.apis.iter().cloned());
        for s in &v.steps {
            let used = s.call.attributes();
            if let Some(api) = s.call.api() {
                c.apis.insert(api.to_owned());
                for a in &used {
                    c.pairs.insert((api.to_owned(), a.clone()));
                }
            }
            c.attributes.extend(used);
        }
        let mut registered = Vec::new();
        if let Ok(infos) = crate::cluster::registration(v) {
            registered.extend(infos);
        }
        for job in &v.setup.jobs {
            registered.extend(job.info.iter().filter_map(|i| i.to_info(&job.nspace).ok()));
        }
        for name in nested_names(&registered) {
            c.pairs
                .insert(("PMIx_server_register_nspace".to_owned(), name.to_owned()));
        }
        // Every node's server is initialised with the harness's infos and the vector's.
        if let Ok(infos) = crate::cluster::server_init_info(v, "n", std::path::Path::new("/")) {
            for name in nested_names(&infos) {
                c.pairs
                    .insert(("PMIx_server_init".to_owned(), name.to_owned()));
                c.attributes.insert(name.to_owned());
            }
        }
        let jobs = v.setup.jobs.iter().flat_map(|j| &j.info);
        for i in v.setup.info.iter().chain(jobs) {
            if pmix::model::attr::by_name(&i.key).is_some() {
                c.attributes.insert(i.key.clone());
            }
        }
    }
    c
}

/// The attribute names of `infos` and of the infos nested in their arrays.
fn nested_names(infos: &[pmix::model::Info]) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut stack: Vec<&pmix::model::Info> = infos.iter().collect();
    while let Some(i) = stack.pop() {
        if let Some(d) = pmix::model::attr::by_key(i.key.as_str()) {
            out.push(d.name);
        }
        if let pmix::model::Value::DataArray(a) = &i.value {
            for e in &a.elements {
                if let pmix::model::Value::Info(inner) = e {
                    stack.push(inner);
                }
            }
        }
    }
    out
}

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
pub fn markdown(rows: &[Row], inventory: &Inventory, vectors: &[Vector]) -> String {
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
    if !departed.is_empty() {
        out.push_str(
            "\n## Where each target departs from the standard\n\n\
             | target | vector | rules | departure |\n|---|---|---|---|\n",
        );
        for (r, what) in &departed {
            let _ = writeln!(
                out,
                "| `{}` | `{}` | {} | {} |",
                r.target,
                r.id,
                r.rules.join(", "),
                what.replace('|', "\\|").replace('\n', " ")
            );
        }
    }
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
                Outcome::Fail { step, diff } => {
                    let _ = writeln!(out, "Step {step}:\n\n```diff\n{}\n```", diff.trim_end());
                }
                Outcome::NotSupported { step, api } => {
                    let _ = writeln!(
                        out,
                        "Step {step}: `{api}` answered `PMIX_ERR_NOT_SUPPORTED`."
                    );
                }
                Outcome::ExpectedFailure { reason } | Outcome::UnexpectedPass { reason } => {
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
    let c = covered(vectors);
    out.push_str(&coverage::markdown(&coverage::table(inventory, &c)));
    let std = inventory.standard(crate::inventory::Version::V5_0);
    let (hit, all) = coverage::required_pairs(std, &c);
    let missing: Vec<String> = all
        .difference(&hit)
        .map(|(api, a)| format!("`{api}` + `{a}`"))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(
            out,
            "\nRequired attributes of v5.0 not yet passed to their API by any vector: {}.",
            missing.join(", ")
        );
    }
    out
}

/// The rows where a target departs from the standard (failures, expected failures, calls it
/// does not support), each with a one-line description.
pub fn departures(rows: &[Row]) -> Vec<(&Row, String)> {
    rows.iter()
        .filter_map(|r| {
            let what = match &r.outcome {
                Outcome::ExpectedFailure { reason } => reason.clone(),
                Outcome::Fail { step, diff } => {
                    let changed: Vec<&str> = diff
                        .lines()
                        .filter(|l| l.starts_with(['-', '+']) && !l.starts_with("---"))
                        .filter(|l| !l.starts_with("+++"))
                        .map(str::trim)
                        .collect();
                    format!("step {step}: {} (not yet explained)", changed.join("; "))
                }
                Outcome::NotSupported { step, api } => {
                    format!("step {step}: {api} answers PMIX_ERR_NOT_SUPPORTED")
                }
                _ => return None,
            };
            Some((r, what))
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
    if !departed.is_empty() {
        out.push_str(
            "<h2>Where each target departs from the standard</h2>\n<table>\n\
             <tr><th>target</th><th>vector</th><th>rules</th><th>departure</th></tr>\n",
        );
        for (r, what) in departed {
            let _ = writeln!(
                out,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                class(&r.outcome),
                escape(&r.target),
                escape(&r.id),
                escape(&r.rules.join(", ")),
                escape(&what)
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
        Outcome::NotSupported { step, api } => format!("step {step}: {api}"),
        Outcome::ExpectedFailure { reason } | Outcome::UnexpectedPass { reason } => reason.clone(),
        Outcome::Error { message } => message.clone(),
        Outcome::Pass => String::new(),
    }
}

/// JUnit XML: one test case per vector and target; failures and errors carry their detail,
/// expected failures and unsupported calls are skipped with their reason.
pub fn junit(rows: &[Row]) -> String {
    let failures = rows.iter().filter(|r| r.outcome.is_bad()).count();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"conformance\" tests=\"{}\" failures=\"{failures}\">\n",
        rows.len()
    );
    for r in rows {
        let _ = write!(
            out,
            "  <testcase classname=\"{}\" name=\"{}\"",
            escape(&r.target),
            escape(&r.id)
        );
        let body = match &r.outcome {
            Outcome::Pass => None,
            Outcome::Fail { diff, .. } => Some(format!(
                "<failure message=\"departs from the standard\">{}</failure>",
                escape(diff)
            )),
            Outcome::UnexpectedPass { reason } => Some(format!(
                "<failure message=\"passed but listed as an expected failure\">{}</failure>",
                escape(reason)
            )),
            Outcome::Error { message } => Some(format!("<error message=\"{}\"/>", escape(message))),
            Outcome::NotSupported { api, .. } => Some(format!(
                "<skipped message=\"{} not supported\"/>",
                escape(api)
            )),
            Outcome::ExpectedFailure { reason } => {
                Some(format!("<skipped message=\"{}\"/>", escape(reason)))
            }
        };
        match body {
            None => out.push_str("/>\n"),
            Some(b) => {
                let _ = writeln!(out, ">{b}</testcase>");
            }
        }
    }
    out.push_str("</testsuite>\n");
    out
}

/// The JSON summary.
pub fn json(rows: &[Row], vectors: &[Vector]) -> String {
    #[derive(Serialize)]
    struct Summary<'a> {
        counts: Vec<(&'static str, usize)>,
        covered_rules: Vec<String>,
        covered_apis: Vec<String>,
        covered_attributes: Vec<String>,
        /// (API, attribute): an attribute passed to an API.
        covered_pairs: Vec<(String, String)>,
        results: &'a [Row],
    }
    let c = covered(vectors);
    serde_json::to_string_pretty(&Summary {
        counts: counts(rows),
        covered_rules: c.rules.into_iter().collect(),
        covered_apis: c.apis.into_iter().collect(),
        covered_attributes: c.attributes.into_iter().collect(),
        covered_pairs: c.pairs.into_iter().collect(),
        results: rows,
    })
    .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// The committed baseline of a target: `id<TAB>outcome label`, one per line.
pub fn baseline(rows: &[Row]) -> String {
    let mut out =
        String::from("# id\toutcome (regenerate: cargo xtask conformance --update-baseline)\n");
    for r in rows {
        let _ = writeln!(out, "{}\t{}", r.id, r.outcome.label());
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
