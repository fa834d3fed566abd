//! Judging a run: each step's observations against the vector's expectations, and the
//! vector's outcome on a target (pass, fail with a diff, not supported, expected failure).

use std::fmt::Write as _;

use pmix::model::Status;
use serde::Serialize;

use crate::rust_target::{Observed, StepResult};
use crate::vector::{Step, Vector, status_named};

/// A vector's outcome on one target.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    /// A step departed from the standard: which, and expected against actual.
    Fail {
        step: usize,
        diff: String,
    },
    /// A step answered `PMIX_ERR_NOT_SUPPORTED` where the standard requires behaviour.
    NotSupported {
        step: usize,
        api: String,
    },
    /// Failed as the vector says it does on this target.
    ExpectedFailure {
        reason: String,
    },
    /// Listed as an expected failure, but passed: the list is out of date.
    UnexpectedPass {
        reason: String,
    },
    /// The harness could not run the vector (setup failed, timed out).
    Error {
        message: String,
    },
}

impl Outcome {
    /// Short label for tables.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail { .. } => "FAIL",
            Outcome::NotSupported { .. } => "not supported",
            Outcome::ExpectedFailure { .. } => "expected failure",
            Outcome::UnexpectedPass { .. } => "UNEXPECTED PASS",
            Outcome::Error { .. } => "ERROR",
        }
    }

    /// Whether this outcome breaks the run (CI fails on it).
    pub fn is_bad(&self) -> bool {
        matches!(
            self,
            Outcome::Fail { .. } | Outcome::UnexpectedPass { .. } | Outcome::Error { .. }
        )
    }

    /// Apply the vector's expected-failure entry for `target`.
    pub fn against_expectation(self, v: &Vector, target: &str) -> Outcome {
        match (v.expected_failure.get(target), self) {
            (None, o) => o,
            (Some(reason), Outcome::Pass) => Outcome::UnexpectedPass {
                reason: reason.clone(),
            },
            (Some(reason), Outcome::Fail { .. } | Outcome::NotSupported { .. }) => {
                Outcome::ExpectedFailure {
                    reason: reason.clone(),
                }
            }
            (Some(_), o) => o,
        }
    }
}

/// Judge one step of a vector whose job is `nspace`: `None` when every caller got what the
/// standard requires.
pub fn judge(n: usize, step: &Step, result: &StepResult, nspace: &str) -> Option<Outcome> {
    let allowed: Vec<Status> = match &step.expect.status {
        Some(s) => s
            .to_vec()
            .iter()
            .filter_map(|name| status_named(name).ok())
            .collect(),
        None if step.expect.any_error => Vec::new(),
        None => vec![Status::SUCCESS],
    };
    for (rank, got) in result {
        let any_error =
            step.expect.any_error && got.status.0 < 0 && got.status != Status::ERR_NOT_SUPPORTED;
        let ok_status = allowed.contains(&got.status) || any_error;
        if !ok_status && got.status == Status::ERR_NOT_SUPPORTED {
            return Some(Outcome::NotSupported {
                step: n + 1,
                api: step.call.api().unwrap_or(step.call.name()).to_owned(),
            });
        }
        let value_ok = !ok_status || !carries_data(got.status) || value_matches(step, got, nspace);
        if !ok_status || !value_ok {
            return Some(Outcome::Fail {
                step: n + 1,
                diff: diff(
                    &expected_text(step, *rank, &allowed, nspace),
                    &actual_text(step, *rank, got),
                ),
            });
        }
    }
    None
}

/// Whether a call ending with `status` returns a value or data: a success does, and so does a
/// partial success (what a lookup found).
fn carries_data(status: Status) -> bool {
    status == Status::SUCCESS || status == Status::ERR_PARTIAL_SUCCESS
}

/// Values are compared as the model's types; a `proc` with an empty namespace stands for the
/// job's.
fn value_matches(step: &Step, got: &Observed, job: &str) -> bool {
    let e = &step.expect;
    let want: Vec<_> = e.value.iter().chain(&e.value_any).collect();
    if !want.is_empty() {
        let Some(v) = &got.value else {
            return false;
        };
        if !want.iter().any(|w| w.to_value(job).is_ok_and(|w| &w == v)) {
            return false;
        }
    }
    for d in &e.data {
        let Ok(key) = crate::vector::key_string(&d.key) else {
            return false;
        };
        let found = got.data.iter().find(|p| p.key.as_str() == key);
        let Some(p) = found else {
            return false;
        };
        if d.value.to_value(job).ok().as_ref() != Some(&p.value) {
            return false;
        }
        if d.publisher.is_some_and(|r| r != p.proc.rank.0) {
            return false;
        }
    }
    if let Some(t) = &e.value_type {
        let want = pmix::model::DataType::from_name(t);
        if got.value.as_ref().map(pmix::model::Value::data_type) != want {
            return false;
        }
    }
    if !holds_infos(&e.results, &got.results, job) {
        return false;
    }
    for k in &e.result_keys {
        let Ok(key) = crate::vector::key_string(k) else {
            return false;
        };
        // v5.0 §7.1.2: a query's answers sit in one PMIX_QUERY_RESULTS per query; the other
        // calls return their results as a flat list.
        let answered = if matches!(step.call, crate::vector::Call::Query { .. }) {
            got.results
                .iter()
                .filter(|r| r.key.as_str() == pmix::model::attr::QUERY_RESULTS.wire_key())
                .flat_map(pmix::query::answers_in)
                .any(|i| i.key.as_str() == key)
        } else {
            got.results.iter().any(|i| i.key.as_str() == key)
        };
        if !answered {
            return false;
        }
    }
    if let Some(events) = &e.events {
        if events.len() != got.events.len() {
            return false;
        }
        for (want, seen) in events.iter().zip(&got.events) {
            if status_named(&want.status).ok() != Some(seen.status) {
                return false;
            }
            if let Some(src) = &want.source
                && src.to_proc(job, pmix::model::Rank(0)).ok() != seen.source
            {
                return false;
            }
            if !holds_infos(&want.info, &seen.info, job)
                || !holds_infos(&want.results, &seen.results, job)
            {
                return false;
            }
        }
    }
    true
}

fn expected_text(step: &Step, rank: u32, allowed: &[Status], job: &str) -> String {
    let mut out = format!(
        "{}: {}\n",
        crate::vector::caller_name(rank),
        step.call.api().unwrap_or(step.call.name())
    );
    let mut names: Vec<String> = allowed.iter().map(|s| format!("{s:?}")).collect();
    if step.expect.any_error {
        names.push("any error".into());
    }
    let _ = writeln!(out, "  status: {}", names.join(" | "));
    let e = &step.expect;
    if allowed.iter().any(|s| carries_data(*s)) {
        for v in e.value.iter().chain(&e.value_any) {
            let _ = writeln!(out, "  value: {}", spec_text(v, job));
        }
        for d in &e.data {
            let _ = writeln!(out, "  data: {} = {}", d.key, spec_text(&d.value, job));
        }
        if let Some(t) = &e.value_type {
            let _ = writeln!(out, "  value type: {t}");
        }
        for r in &e.results {
            let _ = writeln!(out, "  result: {} = {}", r.key, spec_text(&r.value, job));
        }
        for k in &e.result_keys {
            let _ = writeln!(out, "  result: {k}");
        }
        for ev in e.events.iter().flatten() {
            let src = ev
                .source
                .as_ref()
                .and_then(|t| t.to_proc(job, pmix::model::Rank(0)).ok());
            let _ = writeln!(out, "  event: {} from {src:?}", ev.status);
            for i in &ev.info {
                let _ = writeln!(out, "    with: {} = {}", i.key, spec_text(&i.value, job));
            }
            for r in &ev.results {
                let _ = writeln!(out, "    given: {} = {}", r.key, spec_text(&r.value, job));
            }
        }
    }
    out
}

fn actual_text(step: &Step, rank: u32, got: &Observed) -> String {
    let mut out = format!(
        "{}: {}\n",
        crate::vector::caller_name(rank),
        step.call.api().unwrap_or(step.call.name())
    );
    let _ = writeln!(out, "  status: {:?}", got.status);
    let e = &step.expect;
    if carries_data(got.status) {
        if e.value.is_some() || !e.value_any.is_empty() {
            match &got.value {
                Some(v) => {
                    let _ = writeln!(out, "  value: {v:?}");
                }
                None => out.push_str("  value: (none)\n"),
            }
        }
        if !e.data.is_empty() {
            for d in &got.data {
                let _ = writeln!(out, "  data: {} = {:?}", d.key.as_str(), d.value);
            }
        }
        if e.value_type.is_some() {
            let t = got.value.as_ref().map(pmix::model::Value::data_type);
            let _ = writeln!(
                out,
                "  value type: {}",
                t.map_or("(none)".into(), type_name)
            );
        }
        for r in &got.results {
            let _ = writeln!(out, "  result: {} = {:?}", r.key.as_str(), r.value);
        }
        if e.events.is_some() {
            for ev in &got.events {
                let _ = writeln!(out, "  event: {:?} from {:?}", ev.status, ev.source);
                for i in &ev.info {
                    let _ = writeln!(out, "    with: {} = {:?}", i.key.as_str(), i.value);
                }
                for r in &ev.results {
                    let _ = writeln!(out, "    given: {} = {:?}", r.key.as_str(), r.value);
                }
            }
        }
    }
    out
}

/// Whether `got` holds every info `want` names, with its value.
fn holds_infos(want: &[crate::vector::InfoSpec], got: &[pmix::model::Info], job: &str) -> bool {
    want.iter().all(|w| {
        w.to_info(job)
            .is_ok_and(|w| got.iter().any(|i| i.key == w.key && i.value == w.value))
    })
}

fn type_name(t: pmix::model::DataType) -> String {
    t.name().map_or_else(|| t.0.to_string(), str::to_owned)
}

/// A value as written in a vector, rendered the way the model's values print.
fn spec_text(v: &crate::vector::ValueSpec, job: &str) -> String {
    match v.to_value(job) {
        Ok(v) => format!("{v:?}"),
        Err(_) => format!("{v:?}"),
    }
}

/// A unified diff of expected against actual.
pub fn diff(expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .header("expected (the standard)", "actual")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rust_target::Observed;

    fn step(expect: &str) -> Step {
        let text = format!(
            "summary = \"s\"\nsection = \"v5.0 §9.6\"\n[[step]]\nproc = 0\ncall = \"lookup\"\nkeys = [\"k\", \"gone\"]\n{expect}"
        );
        let v: Vector = toml::from_str(&text).expect("a step");
        v.steps[0].clone()
    }

    fn judged(expect: &str, got: Observed) -> Option<Outcome> {
        judge(0, &step(expect), &vec![(0, got)], "vjob")
    }

    #[test]
    fn any_error_takes_every_error_but_not_success_or_not_supported() {
        let any = "expect.any_error = true\n";
        assert!(judged(any, Observed::status(Status::ERR_BAD_PARAM)).is_none());
        assert!(judged(any, Observed::status(Status::ERROR)).is_none());
        assert!(matches!(
            judged(any, Observed::status(Status::SUCCESS)),
            Some(Outcome::Fail { .. })
        ));
        assert!(matches!(
            judged(any, Observed::status(Status::ERR_NOT_SUPPORTED)),
            Some(Outcome::NotSupported { .. })
        ));
    }

    #[test]
    fn a_partial_success_is_judged_on_its_data_too() {
        let expect = "expect.status = \"PMIX_ERR_PARTIAL_SUCCESS\"\nexpect.data = [{ key = \"k\", value = { uint32 = 1 } }]\n";
        let data = |v: u32| Observed {
            data: vec![pmix::model::PData {
                proc: pmix::model::Proc::new(
                    pmix::model::Nspace::new("vjob").expect("a namespace"),
                    0,
                ),
                key: pmix::model::Key::new("k").expect("a key"),
                value: pmix::model::Value::Uint32(v),
            }],
            ..Observed::status(Status::ERR_PARTIAL_SUCCESS)
        };
        assert!(judged(expect, data(1)).is_none());
        assert!(matches!(
            judged(expect, data(2)),
            Some(Outcome::Fail { .. })
        ));
    }
}
