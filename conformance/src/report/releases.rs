//! What changed between OpenPMIx releases: when a run's targets include more than one
//! OpenPMIx release (`openpmix-4.2`, `openpmix-5.0`, `openpmix-6.1`: library targets named
//! from `PMIx_Get_version`, not the pairings), the vectors that pass on one release and not
//! on another, each with its outcome per release and the reason each expected failure
//! gives. It is written for OpenPMIx's developers, as a regression check between their
//! releases: what an older release passed and a newer one fails comes first, then what a
//! newer release fixed. Vectors whose outcome is the same on every release (all pass, or
//! all fail) are left out; the departure tables list the latter.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::outcome::{Outcome, Row};

/// The (major, minor) release of an OpenPMIx library target (`openpmix-6.1`), `None` for
/// any other target, a pairing (`openpmix-4.2-server+rust-client`) or a library's mode
/// (`…-strict`).
fn release(target: &str) -> Option<(u32, u32)> {
    let version = target.strip_prefix("openpmix-")?;
    let (major, minor) = version.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Whether the target's implementation did what the vector checks (an unexpected pass did).
fn passed(o: &Outcome) -> bool {
    matches!(o, Outcome::Pass | Outcome::UnexpectedPass { .. })
}

/// The outcome in a cell: its label, and where a failure failed.
fn cell(o: Option<&Outcome>) -> String {
    match o {
        None => "(not run)".to_owned(),
        Some(o) => match o.failed_at() {
            Some((step, seen)) => format!("{} at step {step}: {seen}", o.label()),
            None => o.label().to_owned(),
        },
    }
}

/// Why a release fails the vector: its expected failure's reason, or what the report says
/// of an unexplained failure.
fn why(o: &Outcome) -> Option<String> {
    match o {
        Outcome::ExpectedFailure { reason, .. } => Some(reason.clone()),
        Outcome::Fail { .. } => Some("not yet explained (a FAIL of the run)".to_owned()),
        Outcome::NotSupported { api, seen, .. } => Some(super::not_supported_text(api, seen)),
        Outcome::Error { message } => Some(format!("the harness could not run it: {message}")),
        Outcome::Pass | Outcome::UnexpectedPass { .. } => None,
    }
}

/// The section, or nothing when the run has fewer than two OpenPMIx releases.
pub(super) fn markdown(rows: &[Row]) -> String {
    let mut releases: Vec<((u32, u32), &str)> = rows
        .iter()
        .filter_map(|r| Some((release(&r.target)?, r.target.as_str())))
        .collect();
    releases.sort_unstable();
    releases.dedup();
    if releases.len() < 2 {
        return String::new();
    }
    let targets: Vec<&str> = releases.iter().map(|(_, t)| *t).collect();

    // Each vector's section and its outcome on each release, in release order.
    let mut vectors: BTreeMap<&str, (&str, Vec<Option<&Outcome>>)> = BTreeMap::new();
    for r in rows {
        let Some(i) = targets.iter().position(|t| *t == r.target) else {
            continue;
        };
        let entry = vectors
            .entry(r.id.as_str())
            .or_insert_with(|| (r.section.as_str(), vec![None; targets.len()]));
        entry.1[i] = Some(&r.outcome);
    }

    let mut out = String::from("\n## What changed between releases\n\n");
    let totals: Vec<String> = targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let run = vectors.values().filter(|(_, o)| o[i].is_some()).count();
            let pass = vectors
                .values()
                .filter(|(_, o)| o[i].is_some_and(passed))
                .count();
            format!("`{t}`: {pass} of {run} pass")
        })
        .collect();
    let _ = writeln!(out, "{}.\n", totals.join(", "));
    out.push_str(
        "The vectors that pass on one OpenPMIx release of this run and not on another. Each \
         cell is the release's outcome, with the step that fails and what it sees there; the \
         last column is the reason each release's expected failure gives (releases that give \
         the same reason together). A vector whose outcome is the same on every release is \
         not listed.\n",
    );

    // Passed on an older release and failed on a newer one: a regression; otherwise a newer
    // release passes what an older one failed.
    let mut regressed = Vec::new();
    let mut fixed = Vec::new();
    for (id, (section, outcomes)) in &vectors {
        let run: Vec<(usize, bool)> = outcomes
            .iter()
            .enumerate()
            .filter_map(|(i, o)| Some((i, passed((*o)?))))
            .collect();
        if run.iter().all(|(_, p)| *p) || run.iter().all(|(_, p)| !*p) {
            continue;
        }
        let regression = run
            .iter()
            .enumerate()
            .any(|(n, (_, p))| *p && run[n + 1..].iter().any(|(_, later)| !*later));
        let row = (*id, *section, outcomes);
        if regression {
            regressed.push(row);
        } else {
            fixed.push(row);
        }
    }
    for (title, part) in [
        (
            "Passes on an earlier release, fails on a later one",
            &regressed,
        ),
        ("Fails on an earlier release, passes on a later one", &fixed),
    ] {
        let _ = writeln!(out, "\n### {title} ({})\n", part.len());
        if part.is_empty() {
            out.push_str("None.\n");
            continue;
        }
        out.push_str("| vector | section |");
        for t in &targets {
            let _ = write!(out, " `{t}` |");
        }
        out.push_str(" why |\n|---|---|");
        for _ in &targets {
            out.push_str("---|");
        }
        out.push_str("---|\n");
        for (id, section, outcomes) in part {
            let _ = write!(out, "| `{id}` | {section} |");
            for o in outcomes.iter() {
                let _ = write!(out, " {} |", cell(*o));
            }
            let _ = writeln!(out, " {} |", reasons(&targets, outcomes));
        }
    }
    out
}

/// The reasons of the releases that fail, each once, with the releases that give it.
fn reasons(targets: &[&str], outcomes: &[Option<&Outcome>]) -> String {
    let mut by_reason: Vec<(String, Vec<&str>)> = Vec::new();
    for (t, o) in targets.iter().zip(outcomes) {
        let Some(reason) = o.and_then(why) else {
            continue;
        };
        let release = t.strip_prefix("openpmix-").unwrap_or(t);
        match by_reason.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, releases)) => releases.push(release),
            None => by_reason.push((reason, vec![release])),
        }
    }
    by_reason
        .iter()
        .map(|(reason, releases)| {
            format!(
                "**{}**: {}",
                releases.join(", "),
                reason.replace('|', "\\|").replace('\n', " ")
            )
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::FailureKind;

    fn row(id: &str, target: &str, outcome: Outcome) -> Row {
        Row {
            id: id.into(),
            section: "v5.0 §1".into(),
            rules: Vec::new(),
            target: target.into(),
            outcome,
        }
    }

    fn expected(step: usize, reason: &str) -> Outcome {
        Outcome::ExpectedFailure {
            step,
            seen: "PMIX_ERR_NOT_FOUND".into(),
            kind: FailureKind::Departure,
            reason: reason.into(),
        }
    }

    #[test]
    fn only_openpmix_releases_count_as_releases() {
        assert_eq!(release("openpmix-6.1"), Some((6, 1)));
        assert_eq!(release("openpmix-10.0"), Some((10, 0)));
        assert_eq!(release("openpmix-4.2-server+rust-client"), None);
        assert_eq!(release("rust"), None);
        assert_eq!(release("pmix-rs-0.1"), None);
    }

    #[test]
    fn a_run_with_one_release_has_no_section() {
        let rows = [
            row("a", "openpmix-4.2", Outcome::Pass),
            row("a", "rust", expected(1, "r")),
        ];
        assert_eq!(markdown(&rows), "");
    }

    #[test]
    fn regressions_come_first_in_release_order_with_shared_reasons_merged() {
        let rows = [
            // Listed in the run's order, not the releases': 6.1 before 4.2.
            row("g/regressed", "openpmix-6.1", expected(2, "gone | lost")),
            row("g/regressed", "openpmix-4.2", Outcome::Pass),
            row("g/regressed", "openpmix-5.0", expected(2, "gone | lost")),
            row("g/fixed", "openpmix-4.2", expected(1, "old")),
            row("g/fixed", "openpmix-5.0", Outcome::Pass),
            row("g/fixed", "openpmix-6.1", Outcome::Pass),
            row("g/same", "openpmix-4.2", expected(1, "always")),
            row("g/same", "openpmix-5.0", expected(1, "always")),
            row("g/same", "openpmix-6.1", expected(1, "always")),
            row("g/same", "rust", Outcome::Pass),
        ];
        let md = markdown(&rows);
        assert!(
            md.contains("`openpmix-4.2`: 1 of 3 pass, `openpmix-5.0`: 1 of 3 pass"),
            "{md}"
        );
        let regressed = md.find("### Passes on an earlier release, fails on a later one (1)");
        let fixed = md.find("### Fails on an earlier release, passes on a later one (1)");
        assert!(regressed.is_some() && regressed < fixed, "{md}");
        assert!(
            md.contains(
                "| `g/regressed` | v5.0 §1 | pass | expected failure at step 2: \
                 PMIX_ERR_NOT_FOUND | expected failure at step 2: PMIX_ERR_NOT_FOUND | \
                 **5.0, 6.1**: gone \\| lost |"
            ),
            "{md}"
        );
        assert!(md.contains("| `g/fixed` |"), "{md}");
        assert!(!md.contains("g/same"), "{md}");
    }
}
