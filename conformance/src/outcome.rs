//! Judging a run: each step's observations against the vector's expectations, and the
//! vector's outcome on a target (pass, fail with a diff, not supported, expected failure).

use std::fmt::Write as _;

use pmix::model::Status;
use serde::Serialize;

use crate::step::{Observed, StepResult};
use crate::upcall_log::HostUpcall;
use crate::vector::{FailureKind, Step, SupportSpec, UpcallSpec, Vector, status_named};

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

impl Row {
    /// The row of vector `id` passing on `target`, with no section or rules (for the tests).
    #[cfg(test)]
    pub(crate) fn passing(id: &str, target: &str) -> Row {
        Row {
            id: id.to_owned(),
            section: String::new(),
            rules: Vec::new(),
            target: target.to_owned(),
            outcome: Outcome::Pass,
        }
    }
}

/// A vector's outcome on one target.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    /// A step departed from the standard: which, what it saw (see [`Seen`]), and expected
    /// against actual.
    Fail {
        step: usize,
        seen: String,
        diff: String,
    },
    /// A step answered `PMIX_ERR_NOT_SUPPORTED` where the standard requires behaviour, or
    /// the target has no function for the call at all (`seen` says which).
    NotSupported {
        step: usize,
        api: String,
        seen: String,
    },
    /// Failed at the step and with what the vector lists for this target.
    ExpectedFailure {
        step: usize,
        seen: String,
        kind: FailureKind,
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

    /// Where a failing outcome failed: its step and what that step saw.
    pub fn failed_at(&self) -> Option<(usize, &str)> {
        match self {
            Outcome::Fail { step, seen, .. }
            | Outcome::NotSupported { step, seen, .. }
            | Outcome::ExpectedFailure { step, seen, .. } => Some((*step, seen)),
            _ => None,
        }
    }

    /// Apply the vector's expected-failure entry for `target`: a failure at the listed step
    /// that sees what is listed is expected; any other failure is a failure, with the listing
    /// it missed in its diff. A pass is stale listing, unless the entry is intermittent.
    pub fn against_expectation(self, v: &Vector, target: &str) -> Outcome {
        let Some(listed) = v.expected_failure.get(target) else {
            return self;
        };
        let Some((step, seen)) = self.failed_at().map(|(s, x)| (s, x.to_owned())) else {
            return match self {
                Outcome::Pass if listed.intermittent => Outcome::Pass,
                Outcome::Pass => Outcome::UnexpectedPass {
                    reason: listed.reason.clone(),
                },
                o => o,
            };
        };
        // A race can strike the listed step or any later one that repeats the operation.
        let at_listed_step = listed.step == step || (listed.intermittent && step > listed.step);
        if at_listed_step && listed.sees(&seen) {
            return Outcome::ExpectedFailure {
                step,
                seen,
                kind: listed.kind,
                reason: listed.reason.clone(),
            };
        }
        let detail = match &self {
            Outcome::Fail { diff, .. } => diff.clone(),
            Outcome::NotSupported { api, .. } => format!("{api}: {seen}"),
            _ => String::new(),
        };
        Outcome::Fail {
            step,
            diff: format!(
                "listed to fail at step {} seeing {} ({}), it fails at step {step} seeing {seen}\n{detail}",
                listed.step, listed.seen, listed.reason
            ),
            seen,
        }
    }
}

/// The words a failure's `seen` uses besides a status name.
#[derive(Debug)]
pub struct Seen;

impl Seen {
    /// The status the standard allows, with another value, data or results: `value: ` and
    /// what came.
    pub const VALUE: &'static str = "value";
    /// The step did not complete within the vector's time: `timeout: ` and which call, after
    /// how long.
    pub const TIMEOUT: &'static str = "timeout";
    /// Listed only: the target returns an uninitialized status at the step (`uninitialized: `
    /// and where, in the target's source), so any status other than success is what it is
    /// seen to return, the value varying with what the memory held.
    pub const UNINITIALIZED: &'static str = "uninitialized";
    /// A process of the target died during the step: `crashed: `, which one and how it ended
    /// (`rank 1 killed by SIGSEGV`).
    pub const CRASHED: &'static str = "crashed";
    /// The target refused to set the job up (step 0): `refused: ` and what refused, with the
    /// status it answered.
    pub const REFUSED: &'static str = "refused";
    /// The target has no function for the call.
    pub const NO_SUCH_CALL: &'static str = "no such call";
    /// The host was not handed the upcalls the step expects: `upcalls: ` and, for each, that
    /// it is missing or what the closest one of its name lacked.
    pub const UPCALLS: &'static str = "upcalls";
    /// The words a listed `seen` follows with `: ` and what was seen.
    pub const DETAILED: [&'static str; 6] = [
        Seen::VALUE,
        Seen::TIMEOUT,
        Seen::UNINITIALIZED,
        Seen::CRASHED,
        Seen::REFUSED,
        Seen::UPCALLS,
    ];
}

/// A status as a failure's `seen` names it.
pub fn status_word(s: Status) -> String {
    s.name().map_or_else(|| s.0.to_string(), str::to_owned)
}

/// Judge one step of a vector whose job is `nspace`: `None` when every caller got what the
/// standard requires and the host received the upcalls the step expects (`upcalls`: what it
/// received during the step).
pub fn judge(
    n: usize,
    step: &Step,
    result: &StepResult,
    upcalls: &[HostUpcall],
    nspace: &str,
) -> Option<Outcome> {
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
        if got.no_such_call {
            return Some(Outcome::NotSupported {
                step: n + 1,
                api: step.call.api().unwrap_or(step.call.name()).to_owned(),
                seen: Seen::NO_SUCH_CALL.to_owned(),
            });
        }
        let any_error =
            step.expect.any_error && got.status.0 < 0 && got.status != Status::ERR_NOT_SUPPORTED;
        let ok_status = allowed.contains(&got.status) || any_error;
        if !ok_status && got.status == Status::ERR_NOT_SUPPORTED {
            return Some(Outcome::NotSupported {
                step: n + 1,
                api: step.call.api().unwrap_or(step.call.name()).to_owned(),
                seen: status_word(got.status),
            });
        }
        let value_ok = !ok_status || !carries_data(got.status) || value_matches(step, got, nspace);
        if !ok_status || !value_ok {
            return Some(Outcome::Fail {
                step: n + 1,
                seen: if ok_status {
                    observed_value(step, got, nspace)
                } else {
                    status_word(got.status)
                },
                diff: diff(
                    &expected_text(step, *rank, &allowed, nspace),
                    &actual_text(step, *rank, got),
                ),
            });
        }
    }
    let me = result.first().map_or(0, |(r, _)| *r);
    let missing = missing_upcalls(&step.expect.upcalls, upcalls, nspace, me);
    if !missing.is_empty() {
        let mut expected = String::from("the host received:\n");
        for u in &missing {
            expected.push_str(&upcall_text(u, nspace, me));
        }
        let mut actual = String::from("the host received:\n");
        if upcalls.is_empty() {
            actual.push_str("  (no upcall)\n");
        }
        for u in upcalls {
            let _ = writeln!(actual, "  {}", u.describe());
        }
        return Some(Outcome::Fail {
            step: n + 1,
            seen: observed_upcalls(&missing, upcalls, nspace, me),
            diff: diff(&expected, &actual),
        });
    }
    None
}

/// Whether the upcalls seen hold every one `step` expects, its processes written `self`
/// being the caller `self_rank`'s: what a step's window of upcalls waits for.
pub fn has_expected_upcalls<'a>(
    step: &'a Step,
    job: &'a str,
    self_rank: u32,
) -> impl Fn(&[HostUpcall]) -> bool + 'a {
    move |seen| missing_upcalls(&step.expect.upcalls, seen, job, self_rank).is_empty()
}

/// The expected upcalls no received one matches: an upcall of that name carrying the process
/// and every process, info, info key and asked key the expectation lists (others may come
/// too). Processes written `self` are the caller `self_rank`'s.
pub fn missing_upcalls<'a>(
    want: &'a [UpcallSpec],
    seen: &[HostUpcall],
    job: &str,
    self_rank: u32,
) -> Vec<&'a UpcallSpec> {
    want.iter()
        .filter(|w| {
            !seen
                .iter()
                .any(|u| w.upcall == u.upcall && lacks(w, u, job, self_rank).is_empty())
        })
        .collect()
}

/// How the received upcall `u` (of the same name) departs from the expectation `w`, each
/// part naming what came (`proc vjob:0`, `PMIX_COLLECT_DATA = Bool(false)`) or what did not
/// (`without PMIX_USERID`, `not asking PMIX_QUERY_NAMESPACES`, `without code ...`); empty when
/// `u` is one `w` expects.
fn lacks(w: &UpcallSpec, u: &HostUpcall, job: &str, self_rank: u32) -> Vec<String> {
    let me = pmix::model::Rank(self_rank);
    let mut out = Vec::new();
    if let Some(p) = &w.proc
        && !p
            .to_proc(job, me)
            .is_ok_and(|p| u.proc.as_ref() == Some(&p))
    {
        out.push(
            u.proc
                .as_ref()
                .map_or("no proc".to_owned(), |p| format!("proc {p:?}")),
        );
    }
    for p in &w.procs {
        match p.to_proc(job, me) {
            Ok(p) if u.procs.contains(&p) => {}
            Ok(p) => out.push(format!("without proc {p:?}")),
            Err(e) => out.push(format!("without proc ({e})")),
        }
    }
    for i in &w.info {
        if holds_infos(std::slice::from_ref(i), &u.info, job) {
            continue;
        }
        let key = crate::vector::key_string(&i.key).unwrap_or_default();
        match u.info.iter().find(|got| got.key.as_str() == key) {
            Some(got) => out.push(format!("{} = {:?}", i.key, got.value)),
            None => out.push(format!("without {}", i.key)),
        }
    }
    for k in &w.keys {
        if !crate::vector::key_string(k).is_ok_and(|k| u.info.iter().any(|i| i.key.as_str() == k)) {
            out.push(format!("without {k}"));
        }
    }
    for k in &w.asked {
        if !crate::vector::key_string(k).is_ok_and(|k| u.asked.contains(&k)) {
            out.push(format!("not asking {k}"));
        }
    }
    for c in &w.codes {
        if !crate::vector::status_named(c).is_ok_and(|c| u.codes.contains(&c)) {
            out.push(format!("without code {c}"));
        }
    }
    out
}

/// The expected upcalls the host was not handed, as a failure's `seen` names them: `upcalls: `
/// and, for each, `<upcall> missing` when none of its name came, else the upcall's name and
/// how the closest one of that name departs (see [`lacks`]); at most [`SEEN_MAX`] characters.
fn observed_upcalls(
    missing: &[&UpcallSpec],
    seen: &[HostUpcall],
    job: &str,
    self_rank: u32,
) -> String {
    let parts: Vec<String> = missing
        .iter()
        .map(|w| {
            let closest = (seen.iter())
                .filter(|u| u.upcall == w.upcall)
                .map(|u| lacks(w, u, job, self_rank))
                .min_by_key(Vec::len);
            match closest {
                None => format!("{} missing", w.upcall),
                Some(l) => format!("{} {}", w.upcall, l.join(", ")),
            }
        })
        .collect();
    shortened(format!("{}: {}", Seen::UPCALLS, parts.join("; ")))
}

/// An expected upcall as the diff shows it.
fn upcall_text(u: &UpcallSpec, job: &str, self_rank: u32) -> String {
    let me = pmix::model::Rank(self_rank);
    let mut out = format!("  {}", u.upcall);
    if let Some(p) = &u.proc {
        match p.to_proc(job, me) {
            Ok(p) => {
                let _ = write!(out, " proc {p:?}");
            }
            Err(e) => {
                let _ = write!(out, " proc ({e})");
            }
        }
    }
    if !u.procs.is_empty() {
        let procs: Vec<String> = u
            .procs
            .iter()
            .map(|p| p.to_proc(job, me).map_or_else(|e| e, |p| format!("{p:?}")))
            .collect();
        let _ = write!(out, " procs [{}]", procs.join(", "));
    }
    out.push('\n');
    for i in &u.info {
        let _ = writeln!(out, "    info: {} = {}", i.key, spec_text(&i.value, job));
    }
    for k in &u.keys {
        let _ = writeln!(out, "    info: {k} = (any value)");
    }
    for k in &u.asked {
        let _ = writeln!(out, "    asking: {k}");
    }
    for c in &u.codes {
        let _ = writeln!(out, "    code: {c}");
    }
    out
}

/// Whether a call ending with `status` returns a value or data: a success does, and so does a
/// partial success (what a lookup or a query found, the final membership of a group
/// construction with optional members).
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
    if let Some(start) = &e.starts_with {
        let Some(pmix::model::Value::String(Some(text))) = &got.value else {
            return false;
        };
        if !text.as_bytes().starts_with(start.as_bytes()) || text.len() == start.len() {
            return false;
        }
    }
    if !e.bits_set.is_empty() {
        let Some(pmix::model::Value::LocType(l)) = &got.value else {
            return false;
        };
        let want = locality_bits(&e.bits_set);
        if want.is_none_or(|w| l.0 & w != w) {
            return false;
        }
    }
    if !holds_infos(&e.results, &got.results, job) {
        return false;
    }
    // v5.0 §7.1.2: a query's answers sit in one PMIX_QUERY_RESULTS per query; the other
    // calls return their results as a flat list.
    if !value_matches_result_keys(step, got) || !missing_support(step, got).is_empty() {
        return false;
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

/// The mask of the locality bits `names` name; `None` if one names none (loading refuses it).
fn locality_bits(names: &[String]) -> Option<u16> {
    names.iter().try_fold(0u16, |mask, n| {
        pmix::model::Locality::from_name(n).map(|l| mask | l.0)
    })
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
        if let Some(start) = &e.starts_with {
            let _ = writeln!(out, "  value: a string beginning {start:?}, and longer");
        }
        if !e.bits_set.is_empty() {
            let _ = writeln!(
                out,
                "  value: a PMIX_LOCTYPE with at least {} set",
                e.bits_set.join(" | ")
            );
        }
        for r in &e.results {
            let _ = writeln!(out, "  result: {} = {}", r.key, spec_text(&r.value, job));
        }
        for k in &e.result_keys {
            let _ = writeln!(out, "  result: {k}");
        }
        for sp in &e.supports {
            let _ = writeln!(
                out,
                "  result: {} at {} lists {}",
                sp.function,
                sp.level,
                sp.attributes.join(", ")
            );
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
        if e.value.is_some()
            || !e.value_any.is_empty()
            || e.starts_with.is_some()
            || !e.bits_set.is_empty()
        {
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

/// What a step that got an allowed status observed where its expectation differs, as a
/// failure's `seen` names it: `value: ` and, for each part the expectation compares and that
/// differs, what came (a value, a datum, a result, the events' statuses), at most
/// [`SEEN_MAX`] characters.
fn observed_value(step: &Step, got: &Observed, job: &str) -> String {
    let e = &step.expect;
    let mut parts: Vec<String> = Vec::new();
    let value = || match &got.value {
        Some(v) => format!("{v:?}"),
        None => "no value".to_owned(),
    };
    let want: Vec<_> = e.value.iter().chain(&e.value_any).collect();
    let value_differs = !want.is_empty()
        && !(got.value.as_ref()).is_some_and(|v| {
            want.iter()
                .any(|w| w.to_value(job).ok().as_ref() == Some(v))
        });
    let type_differs = e.value_type.as_ref().is_some_and(|t| {
        got.value.as_ref().map(pmix::model::Value::data_type) != pmix::model::DataType::from_name(t)
    });
    if value_differs || type_differs || e.starts_with.is_some() || !e.bits_set.is_empty() {
        parts.push(value());
    }
    for d in &e.data {
        let key = crate::vector::key_string(&d.key).unwrap_or_default();
        match got.data.iter().find(|p| p.key.as_str() == key) {
            None => parts.push(format!("{} missing", d.key)),
            Some(p) => {
                let same = d.value.to_value(job).ok().as_ref() == Some(&p.value)
                    && d.publisher.is_none_or(|r| r == p.proc.rank.0);
                if !same {
                    parts.push(format!(
                        "{} = {:?} from rank {}",
                        d.key, p.value, p.proc.rank.0
                    ));
                }
            }
        }
    }
    for r in &e.results {
        if holds_infos(std::slice::from_ref(r), &got.results, job) {
            continue;
        }
        let key = crate::vector::key_string(&r.key).unwrap_or_default();
        match got.results.iter().find(|i| i.key.as_str() == key) {
            Some(i) => parts.push(format!("{} = {:?}", r.key, i.value)),
            None => parts.push(format!("{} missing", r.key)),
        }
    }
    if !e.result_keys.is_empty() && !value_matches_result_keys(step, got) {
        parts.push(format!(
            "results [{}]",
            (got.results.iter())
                .map(|i| i.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for (sp, missing) in missing_support(step, got) {
        parts.push(format!(
            "{} at {} lacks {}",
            sp.function,
            sp.level,
            missing.join(", ")
        ));
    }
    if e.events.is_some() {
        let statuses: Vec<String> = got.events.iter().map(|ev| status_word(ev.status)).collect();
        let expected: Vec<&str> = e
            .events
            .iter()
            .flatten()
            .map(|ev| ev.status.as_str())
            .collect();
        if statuses != expected {
            parts.push(format!("events [{}]", statuses.join(", ")));
        } else {
            parts.push("events with other sources or information".to_owned());
        }
    }
    if parts.is_empty() {
        parts.push(value());
    }
    shortened(format!("{}: {}", Seen::VALUE, parts.join("; ")))
}

/// `text` cut to [`SEEN_MAX`] characters, the last one an ellipsis where it was cut.
fn shortened(text: String) -> String {
    if text.chars().count() > SEEN_MAX {
        text.chars().take(SEEN_MAX - 1).collect::<String>() + "…"
    } else {
        text
    }
}

/// The longest `seen` a failure names: enough for a value, a few results or a list of events.
pub const SEEN_MAX: usize = 200;

/// Whether every key of `result_keys` was answered (see [`value_matches`]).
fn value_matches_result_keys(step: &Step, got: &Observed) -> bool {
    step.expect.result_keys.iter().all(|k| {
        let Ok(key) = crate::vector::key_string(k) else {
            return false;
        };
        if matches!(step.call, crate::vector::Call::Query { .. }) {
            got.results
                .iter()
                .filter(|r| r.key.as_str() == pmix::model::attr::QUERY_RESULTS.wire_key())
                .flat_map(pmix::query::answers_in)
                .any(|i| i.key.as_str() == key)
        } else {
            got.results.iter().any(|i| i.key.as_str() == key)
        }
    })
}

/// The attributes each of `expect.supports` names that the query's answer does not list at
/// its function's level (see [`crate::vector::SupportSpec`]); empty when all are there.
/// The answer is walked here, not through the library's own reading of it.
fn missing_support<'s>(step: &'s Step, got: &Observed) -> Vec<(&'s SupportSpec, Vec<&'s str>)> {
    use pmix::model::Value;
    fn infos(v: &Value) -> impl Iterator<Item = &pmix::model::Info> {
        let elements = match v {
            Value::DataArray(a) => &a.elements[..],
            _ => &[],
        };
        elements.iter().filter_map(|e| match e {
            Value::Info(i) => Some(&**i),
            _ => None,
        })
    }
    let answers = || {
        (got.results.iter())
            .filter(|r| r.key.as_str() == pmix::model::attr::QUERY_RESULTS.wire_key())
            .flat_map(|r| infos(&r.value))
    };
    let mut out = Vec::new();
    for sp in &step.expect.supports {
        let level = crate::vector::key_string(&sp.level).unwrap_or_default();
        let listed: Vec<&str> = answers()
            .filter(|a| a.key.as_str() == sp.function)
            .flat_map(|a| infos(&a.value))
            .filter(|l| l.key.as_str() == level)
            .flat_map(|l| match &l.value {
                Value::DataArray(a) => &a.elements[..],
                _ => &[],
            })
            .filter_map(|r| match r {
                Value::RegAttr(r) => r.name.as_deref(),
                _ => None,
            })
            .collect();
        let missing: Vec<&str> = (sp.attributes.iter())
            .map(String::as_str)
            .filter(|a| !listed.contains(a))
            .collect();
        if !missing.is_empty() {
            out.push((sp, missing));
        }
    }
    out
}

/// Whether `got` holds every info `want` names, with its value.
fn holds_infos(want: &[crate::vector::InfoSpec], got: &[pmix::model::Info], job: &str) -> bool {
    want.iter().all(|w| {
        w.to_info(job).is_ok_and(|w| {
            got.iter()
                .any(|i| i.key == w.key && same_result(&i.value, &w.value))
        })
    })
}

/// Result values compare equal, except that an array of processes (a group's membership,
/// for one) is a set: the standard fixes no order of its members.
fn same_result(got: &pmix::model::Value, want: &pmix::model::Value) -> bool {
    use pmix::model::{DataType, Value};
    fn procs(v: &Value) -> Option<Vec<&pmix::model::Proc>> {
        let Value::DataArray(a) = v else {
            return None;
        };
        let mut p: Vec<_> = a.elements.iter().filter_map(Value::as_proc).collect();
        (a.data_type == DataType::PROC && p.len() == a.elements.len()).then(|| {
            p.sort();
            p
        })
    }
    match (procs(got), procs(want)) {
        (Some(g), Some(w)) => g == w,
        _ => got == want,
    }
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
    use crate::step::Observed;

    fn step(expect: &str) -> Step {
        let text = format!(
            "summary = \"s\"\nsection = \"v5.0 §9.6\"\n[[step]]\nproc = 0\ncall = \"lookup\"\nkeys = [\"k\", \"gone\"]\n{expect}"
        );
        let v: Vector = toml::from_str(&text).expect("a step");
        v.steps[0].clone()
    }

    fn judged(expect: &str, got: Observed) -> Option<Outcome> {
        judge(0, &step(expect), &vec![(0, got)], &[], "vjob")
    }

    fn vjob(rank: u32) -> pmix::model::Proc {
        pmix::model::Proc::new(pmix::model::Nspace::new("vjob").expect("a namespace"), rank)
    }

    fn fence_step(expect: &str) -> Step {
        let text = format!(
            "summary = \"s\"\nsection = \"v5.0 §5.2.1\"\n[[step]]\nproc = 1\ncall = \"fence\"\n{expect}"
        );
        let v: Vector = toml::from_str(&text).expect("a step");
        v.steps[0].clone()
    }

    #[test]
    fn an_expected_registration_needs_each_code_it_names() {
        use pmix::model::Status;
        let step = fence_step(
            "expect.upcalls = [{ upcall = \"pmix_server_register_events_fn_t\", codes = [\"PMIX_EVENT_NODE_DOWN\"] }]\n",
        );
        let want = &step.expect.upcalls;
        let seen = HostUpcall::new(0, "pmix_server_register_events_fn_t");
        let with = seen
            .clone()
            .codes(&[Status::EVENT_NODE_OFFLINE, Status::EVENT_NODE_DOWN]);
        assert!(missing_upcalls(want, &[with], "vjob", 1).is_empty());
        let without = seen.codes(&[Status::EVENT_NODE_OFFLINE]);
        assert_eq!(missing_upcalls(want, &[without], "vjob", 1).len(), 1);
    }

    #[test]
    fn an_expected_upcall_needs_its_name_processes_infos_and_keys() {
        use pmix::model::{Info, Rank, attr};
        let step = fence_step(
            "expect.upcalls = [{ upcall = \"pmix_server_fencenb_fn_t\", proc = { rank = \"self\" }, procs = [{ rank = \"wildcard\" }], info = [{ key = \"PMIX_COLLECT_DATA\", value = { bool = true } }], keys = [\"PMIX_USERID\"] }]\n",
        );
        let want = &step.expect.upcalls;
        let all = vec![pmix::model::Proc::new(
            pmix::model::Nspace::new("vjob").expect("a namespace"),
            Rank::WILDCARD,
        )];
        let full = HostUpcall::new(0, "pmix_server_fencenb_fn_t")
            .proc(&vjob(1))
            .procs(&all)
            .info(&[
                Info::new(attr::COLLECT_DATA, true),
                Info::new(attr::USERID, 1000u32),
            ]);
        assert!(missing_upcalls(want, std::slice::from_ref(&full), "vjob", 1).is_empty());
        // More infos and more processes than asked for are fine.
        let more = full
            .clone()
            .procs(&[all[0].clone(), vjob(3)])
            .info(&[Info::new(attr::TIMEOUT, 5i32)]);
        assert!(missing_upcalls(want, &[more], "vjob", 1).is_empty());
        let departures = [
            HostUpcall {
                upcall: "pmix_server_connect_fn_t",
                ..full.clone()
            },
            HostUpcall {
                proc: Some(vjob(0)),
                ..full.clone()
            },
            HostUpcall {
                procs: vec![vjob(1)],
                ..full.clone()
            },
            HostUpcall {
                info: vec![Info::new(attr::USERID, 1000u32)],
                ..full.clone()
            },
            HostUpcall {
                info: vec![
                    Info::new(attr::COLLECT_DATA, false),
                    Info::new(attr::USERID, 1u32),
                ],
                ..full.clone()
            },
            HostUpcall {
                info: vec![Info::new(attr::COLLECT_DATA, true)],
                ..full.clone()
            },
        ];
        let lacking = [
            "pmix_server_fencenb_fn_t missing",
            "pmix_server_fencenb_fn_t proc vjob:0",
            "pmix_server_fencenb_fn_t without proc vjob:PMIX_RANK_WILDCARD",
            "pmix_server_fencenb_fn_t without PMIX_COLLECT_DATA",
            "pmix_server_fencenb_fn_t PMIX_COLLECT_DATA = Bool(false)",
            "pmix_server_fencenb_fn_t without PMIX_USERID",
        ];
        for (d, lacks) in departures.into_iter().zip(lacking) {
            let missing = missing_upcalls(want, std::slice::from_ref(&d), "vjob", 1);
            assert_eq!(missing.len(), 1, "{d:?}");
            assert_eq!(
                observed_upcalls(&missing, std::slice::from_ref(&d), "vjob", 1),
                format!("upcalls: {lacks}")
            );
            // Any one matching upcall of the window satisfies the expectation.
            assert!(missing_upcalls(want, &[d, full.clone()], "vjob", 1).is_empty());
        }
    }

    #[test]
    fn an_expected_upcall_needs_the_keys_it_asks_about() {
        let step = fence_step(
            "expect.upcalls = [{ upcall = \"pmix_server_query_fn_t\", asked = [\"PMIX_QUERY_QUEUE_LIST\", \"vjob.key\"] }]\n",
        );
        let want = &step.expect.upcalls;
        let query = HostUpcall::new(0, "pmix_server_query_fn_t");
        let both = query
            .clone()
            .asked(&["pmix.qry.qlst", "pmix.qry.ns", "vjob.key"]);
        assert!(missing_upcalls(want, &[both], "vjob", 0).is_empty());
        let one = query.clone().asked(&["pmix.qry.qlst"]);
        let missing = missing_upcalls(want, std::slice::from_ref(&one), "vjob", 0);
        assert_eq!(missing.len(), 1);
        assert_eq!(
            observed_upcalls(&missing, &[one], "vjob", 0),
            "upcalls: pmix_server_query_fn_t not asking vjob.key"
        );
        // A key carried as an info is not a key asked about.
        let as_info = query.asked(&["vjob.key"]).info(&[pmix::model::Info::new(
            pmix::model::attr::QUERY_QUEUE_LIST,
            "q".to_owned(),
        )]);
        assert_eq!(missing_upcalls(want, &[as_info], "vjob", 0).len(), 1);
    }

    #[test]
    fn a_missing_upcall_fails_the_step_with_what_the_host_saw() {
        let step = fence_step(
            "expect.upcalls = [{ upcall = \"pmix_server_fencenb_fn_t\" }, { upcall = \"pmix_server_publish_fn_t\" }]\n",
        );
        let ok = vec![(1, Observed::status(Status::SUCCESS))];
        let fence = HostUpcall::new(1, "pmix_server_fencenb_fn_t").detail("0 bytes of data");
        let publish = HostUpcall::new(0, "pmix_server_publish_fn_t");
        assert_eq!(
            judge(0, &step, &ok, &[fence.clone(), publish], "vjob"),
            None
        );
        match judge(2, &step, &ok, std::slice::from_ref(&fence), "vjob") {
            Some(Outcome::Fail {
                step: 3,
                seen,
                diff,
            }) => {
                assert_eq!(seen, "upcalls: pmix_server_publish_fn_t missing");
                assert!(diff.contains("-  pmix_server_publish_fn_t"), "{diff}");
                assert!(
                    diff.contains("+  pmix_server_fencenb_fn_t (node #1) 0 bytes of data"),
                    "{diff}"
                );
                assert!(!diff.contains("-  pmix_server_fencenb_fn_t"), "{diff}");
            }
            other => panic!("{other:?}"),
        }
        match judge(0, &step, &ok, &[], "vjob") {
            Some(Outcome::Fail { seen, diff, .. }) => {
                assert_eq!(
                    seen,
                    "upcalls: pmix_server_fencenb_fn_t missing; pmix_server_publish_fn_t missing"
                );
                assert!(diff.contains("+  (no upcall)"), "{diff}");
            }
            other => panic!("{other:?}"),
        }
        // A step that departs on its status is judged on that first.
        let refused = vec![(1, Observed::status(Status::ERR_TIMEOUT))];
        match judge(0, &step, &refused, &[], "vjob") {
            Some(Outcome::Fail { diff, .. }) => assert!(
                diff.contains("PMIX_ERR_TIMEOUT") || diff.contains("ERR_TIMEOUT"),
                "{diff}"
            ),
            other => panic!("{other:?}"),
        }
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
    fn an_array_of_processes_in_the_results_is_compared_in_any_order() {
        use pmix::model::{DataArray, Nspace, Proc, Value};
        let of = |ranks: &[u32]| {
            let ns = Nspace::new("vjob").expect("a namespace");
            let procs = ranks.iter().map(|r| Proc::new(ns.clone(), *r)).collect();
            Value::DataArray(Box::new(DataArray::of_procs(procs)))
        };
        assert!(same_result(&of(&[1, 0]), &of(&[0, 1])));
        assert!(!same_result(&of(&[0, 2]), &of(&[0, 1])));
        assert!(!same_result(&of(&[0]), &of(&[0, 1])));
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

    #[test]
    fn supports_asks_for_the_attributes_listed_at_the_functions_level() {
        use pmix::model::{DataArray, DataType, Info, RegAttr, Value, attr};
        let text = "summary = \"s\"\nsection = \"v5.0 §7.4\"\n[[step]]\nproc = 0\ncall = \"query\"\nqueries = [{ keys = [\"PMIX_QUERY_ATTRIBUTE_SUPPORT\", \"PMIx_Get\"] }]\nexpect.supports = [{ function = \"PMIx_Get\", level = \"PMIX_CLIENT_ATTRIBUTES\", attributes = [\"PMIX_OPTIONAL\", \"PMIX_IMMEDIATE\"] }]\n";
        let v: Vector = toml::from_str(text).expect("a step");
        let array = |data_type, elements| {
            Value::DataArray(Box::new(DataArray {
                data_type,
                elements,
            }))
        };
        let answer = |level: &str, names: &[&str]| {
            let regattrs = (names.iter())
                .map(|n| {
                    Value::RegAttr(Box::new(RegAttr {
                        name: Some((*n).to_owned()),
                        string: None,
                        data_type: DataType::BOOL,
                        description: Vec::new(),
                    }))
                })
                .collect();
            let info = |k: &str, v| Info::with_key(k, v).expect("a key");
            let entry = info(level, array(DataType::REGATTR, regattrs));
            let function = info(
                "PMIx_Get",
                array(DataType::INFO, vec![Value::Info(Box::new(entry))]),
            );
            let results = array(DataType::INFO, vec![Value::Info(Box::new(function))]);
            let o = Observed {
                results: vec![info(attr::QUERY_RESULTS.wire_key(), results)],
                ..Observed::status(Status::SUCCESS)
            };
            judge(0, &v.steps[0], &vec![(0, o)], &[], "vjob")
        };
        let client = attr::CLIENT_ATTRIBUTES.wire_key();
        assert!(answer(client, &["PMIX_TIMEOUT", "PMIX_IMMEDIATE", "PMIX_OPTIONAL"]).is_none());
        assert!(
            answer(client, &["PMIX_OPTIONAL"]).is_some(),
            "one is missing"
        );
        let elsewhere = attr::SERVER_ATTRIBUTES.wire_key();
        assert!(
            answer(elsewhere, &["PMIX_IMMEDIATE", "PMIX_OPTIONAL"]).is_some(),
            "another level"
        );
    }

    #[test]
    fn starts_with_asks_for_a_longer_string_beginning_so() {
        let text = "summary = \"s\"\nsection = \"v5.0 §3.5\"\n[[step]]\nproc = 0\ncall = \"string\"\nfunction = \"PMIx_Scope_string\"\narg = \"PMIX_LOCAL\"\nexpect.starts_with = \"ab\"\n";
        let v: Vector = toml::from_str(text).expect("a step");
        let got = |value: Option<pmix::model::Value>| {
            let o = Observed {
                value,
                ..Observed::status(Status::SUCCESS)
            };
            judge(0, &v.steps[0], &vec![(0, o)], &[], "vjob")
        };
        let string = |s: &str| Some(pmix::model::Value::String(Some(s.into())));
        assert!(got(string("abc")).is_none());
        assert!(got(string("ab")).is_some(), "nothing after the beginning");
        assert!(got(string("xab")).is_some());
        assert!(got(Some(pmix::model::Value::String(None))).is_some());
        assert!(got(Some(pmix::model::Value::Uint8(1))).is_some());
        assert!(got(None).is_some());
    }

    #[test]
    fn bits_set_asks_for_a_locality_with_at_least_those_bits() {
        let text = "summary = \"s\"\nsection = \"v5.0 §12.4.2\"\n[[step]]\nproc = 0\ncall = \"get_relative_locality\"\nlocality1 = \"a\"\nlocality2 = \"a\"\nexpect.bits_set = [\"PMIX_LOCALITY_SHARE_NODE\", \"PMIX_LOCALITY_SHARE_CORE\"]\n";
        let v: Vector = toml::from_str(text).expect("a step");
        let got = |value: Option<pmix::model::Value>| {
            let o = Observed {
                value,
                ..Observed::status(Status::SUCCESS)
            };
            judge(0, &v.steps[0], &vec![(0, o)], &[], "vjob")
        };
        let loc = |bits: u16| Some(pmix::model::Value::LocType(pmix::model::Locality(bits)));
        assert!(got(loc(0x4002)).is_none());
        assert!(
            got(loc(0x4000 | 0x0002 | 0x0001 | 0x0010)).is_none(),
            "more may be set"
        );
        assert!(got(loc(0x4000)).is_some(), "the core is missing");
        assert!(got(loc(0)).is_some());
        assert!(
            got(Some(pmix::model::Value::Uint16(0x4002))).is_some(),
            "not a PMIX_LOCTYPE"
        );
        assert!(got(None).is_some());
    }
}
