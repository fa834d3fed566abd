//! Running vectors on a target, each under its timeout: a hung or failed target is a failed
//! vector, never a hung run.

use std::path::PathBuf;

use crate::step::Problem;
pub use crate::step::Side;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::outcome::{Outcome, Seen, judge};
use crate::vector::Vector;

/// The targets a run can use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// This project's `pmix` crate, in-process.
    Rust,
    /// Servers and clients in child processes: a `libpmix.so` through its C API on both
    /// sides, or a pairing of this crate on one side with a library on the other.
    Processes {
        servers: Side,
        clients: Side,
        /// `openpmix-4.2` for a library on both sides; `rust-server+openpmix-4.2-client` or
        /// `openpmix-4.2-server+rust-client` for a pairing.
        name: String,
        /// The library's version string.
        version: String,
        /// The conformance binary, which hosts the child processes.
        exe: PathBuf,
    },
}

impl Target {
    /// The name used in reports, baselines and vectors' `expected_failure` tables.
    pub fn name(&self) -> &str {
        match self {
            Target::Rust => "rust",
            Target::Processes { name, .. } => name,
        }
    }
}

/// Run one vector on `target` and judge it.
pub async fn run(v: &Vector, target: &Target) -> Outcome {
    let done = AtomicUsize::new(0);
    let mut verdict = None;
    let outcome = {
        let check = |n: usize, step: &crate::vector::Step, result: &_, upcalls: &[_]| {
            done.store(n + 1, Ordering::Relaxed);
            match judge(n, step, result, upcalls, &v.setup.nspace) {
                Some(o) => {
                    verdict = Some(o);
                    false
                }
                None => true,
            }
        };
        let limit = Duration::from_secs(v.timeout_s);
        match target {
            Target::Rust => tokio::time::timeout(limit, crate::rust_target::run(v, check)).await,
            Target::Processes {
                servers,
                clients,
                exe,
                ..
            } => {
                let run = crate::libpmix_target::run(v, exe, servers, clients, check);
                tokio::time::timeout(limit, run).await
            }
        }
    };
    let outcome = match outcome {
        Err(_) => {
            let step = done.load(Ordering::Relaxed) + 1;
            let call = v
                .steps
                .get(step - 1)
                .map_or("?", |s| s.call.api().unwrap_or(s.call.name()));
            Outcome::Fail {
                step,
                seen: format!(
                    "{}: {call} incomplete after {} s",
                    Seen::TIMEOUT,
                    v.timeout_s
                ),
                diff: format!(
                    "step {step} ({call}) did not complete within the vector's {} s",
                    v.timeout_s
                ),
            }
        }
        Ok(Err(Problem::Harness(message))) => Outcome::Error { message },
        Ok(Err(Problem::Crashed(how))) => Outcome::Fail {
            step: done.load(Ordering::Relaxed) + 1,
            seen: format!("{}: {how}", Seen::CRASHED),
            diff: format!("during the step, {how}"),
        },
        Ok(Err(Problem::Refused(what))) => Outcome::Fail {
            step: 0,
            seen: format!("{}: {what}", Seen::REFUSED),
            diff: format!("setup: {what}"),
        },
        Ok(Ok(())) => verdict.unwrap_or(Outcome::Pass),
    };
    outcome.against_expectation(v, target.name())
}

/// Run every vector of `vectors` on `target`, `parallel` at once on this thread (most of a
/// vector's time is waiting), and give each outcome in the order of `vectors`.
pub async fn run_many(vectors: &[Vector], target: &Target, parallel: usize) -> Vec<Outcome> {
    run_many_reporting(vectors, target, parallel, |_, _| {}).await
}

/// As [`run_many`], telling `done` of each outcome (with its vector's index) as it comes,
/// in the order the vectors end.
pub async fn run_many_reporting(
    vectors: &[Vector],
    target: &Target,
    parallel: usize,
    mut done: impl FnMut(usize, &Outcome),
) -> Vec<Outcome> {
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let local = tokio::task::LocalSet::new();
    let mut tasks = Vec::new();
    for (i, v) in vectors.iter().enumerate() {
        let (limit, target, v, tx) = (limit.clone(), target.clone(), v.clone(), tx.clone());
        tasks.push(local.spawn_local(async move {
            let _permit = limit.acquire().await;
            let outcome = run(&v, &target).await;
            // The receiver lives until every task has ended.
            let _ = tx.send(i);
            outcome
        }));
    }
    drop(tx);
    local
        .run_until(async move {
            let mut out: Vec<Option<Outcome>> = vec![None; vectors.len()];
            let mut handles: Vec<Option<_>> = tasks.into_iter().map(Some).collect();
            // A task that ends abnormally sends nothing: the channel closes once every task
            // has ended either way, and the handles left are awaited for their errors.
            while let Some(i) = rx.recv().await {
                let Some(handle) = handles[i].take() else {
                    continue;
                };
                let outcome = handle.await.unwrap_or_else(aborted);
                done(i, &outcome);
                out[i] = Some(outcome);
            }
            for (i, handle) in handles.into_iter().enumerate() {
                if let Some(handle) = handle {
                    let outcome = handle.await.unwrap_or_else(aborted);
                    done(i, &outcome);
                    out[i] = Some(outcome);
                }
            }
            out.into_iter()
                .map(|o| o.unwrap_or_else(|| aborted_text("no outcome")))
                .collect()
        })
        .await
}

fn aborted(e: tokio::task::JoinError) -> Outcome {
    aborted_text(&e.to_string())
}

fn aborted_text(why: &str) -> Outcome {
    Outcome::Error {
        message: format!("the run of the vector ended abnormally: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(text: &str) -> Vector {
        use std::sync::atomic::AtomicU32;
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("runner-test-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let f = dir.join("v.toml");
        std::fs::write(&f, text).expect("write vector");
        crate::vector::load_file(&f, "v").expect("vector loads")
    }

    fn run_one(v: &Vector) -> Outcome {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        rt.block_on(run(v, &Target::Rust))
    }

    const JOB_SIZE: &str = r#"
summary = "s"
section = "x"
[[step]]
proc = 0
call = "get"
target = { rank = "wildcard" }
key = "PMIX_JOB_SIZE"
"#;

    #[test]
    fn a_wrong_expectation_fails_with_a_diff() {
        let v = vector(&format!("{JOB_SIZE}expect.value = {{ uint32 = 3 }}\n"));
        match run_one(&v) {
            Outcome::Fail {
                step: 1,
                seen,
                diff,
            } => {
                // What was seen is named, not only that it was another value.
                assert_eq!(seen, "value: Uint32(2)");
                assert!(diff.contains("-  value: Uint32(3)"), "{diff}");
                assert!(diff.contains("+  value: Uint32(2)"), "{diff}");
            }
            other => panic!("{other:?}"),
        }
        let v = vector(&format!("{JOB_SIZE}expect.value = {{ uint32 = 2 }}\n"));
        assert_eq!(run_one(&v), Outcome::Pass);
    }

    #[test]
    fn a_registration_the_target_refuses_fails_the_setup_and_can_be_expected() {
        // A process map that is not text: the server refuses the registration.
        let setup = "summary = \"s\"\nsection = \"x\"\n[[setup.info]]\nkey = \"PMIX_PROC_MAP\"\nvalue = { uint32 = 1 }\n[[step]]\nproc = 0\ncall = \"commit\"\n";
        let seen = match run_one(&vector(setup)) {
            Outcome::Fail {
                step: 0,
                seen,
                diff,
            } => {
                assert!(seen.starts_with("refused: "), "{seen}");
                assert!(diff.starts_with("setup: "), "{diff}");
                seen
            }
            other => panic!("{other:?}"),
        };
        let expected = setup.replace(
            "[[setup.info]]",
            &format!(
                "[expected_failure]\nrust = {{ step = 0, seen = {seen:?}, reason = \"refuses\" }}\n[[setup.info]]"
            ),
        );
        assert_eq!(
            run_one(&vector(&expected)),
            Outcome::ExpectedFailure {
                step: 0,
                seen,
                kind: crate::vector::FailureKind::Departure,
                reason: "refuses".into()
            }
        );
    }

    #[test]
    fn a_hung_step_fails_the_vector_instead_of_the_run() {
        // Nobody ever commits "never": the get is held until the vector's time runs out.
        let v = vector(
            "summary = \"s\"\nsection = \"x\"\ntimeout_s = 1\n[[step]]\nproc = 0\ncall = \"get\"\ntarget = { rank = 1 }\nkey = \"never\"\n",
        );
        match run_one(&v) {
            Outcome::Fail {
                step: 1,
                diff,
                seen,
            } => {
                assert!(diff.contains("did not complete"), "{diff}");
                assert_eq!(seen, "timeout: PMIx_Get incomplete after 1 s");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_step_waits_its_delay_before_the_call() {
        // The delay outlasts the vector's time, so the step never makes its call.
        let delayed = |ms: u64| {
            vector(&format!(
                "summary = \"s\"\nsection = \"x\"\ntimeout_s = 1\n[[step]]\nproc = 0\ncall = \"commit\"\n[[step]]\nproc = 0\ncall = \"commit\"\ndelay_ms = {ms}\n"
            ))
        };
        match run_one(&delayed(3000)) {
            Outcome::Fail { step: 2, diff, .. } => {
                assert!(diff.contains("did not complete"), "{diff}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(run_one(&delayed(0)), Outcome::Pass);
    }

    #[test]
    fn expected_failures_are_reported_and_stale_ones_break_the_run() {
        let listed = |size: &str, seen: &str| {
            format!(
                "summary = \"s\"\nsection = \"x\"\n[expected_failure]\n\
                 rust = {{ step = 1, seen = \"{seen}\", kind = \"unimplemented\", reason = \"because\" }}\n\
                 [[step]]\nproc = 0\ncall = \"get\"\ntarget = {{ rank = \"wildcard\" }}\n\
                 key = \"PMIX_JOB_SIZE\"\nexpect.value = {size}\n"
            )
        };
        assert_eq!(
            run_one(&vector(&listed("{ uint32 = 3 }", "value: Uint32(2)"))),
            Outcome::ExpectedFailure {
                step: 1,
                seen: "value: Uint32(2)".into(),
                kind: crate::vector::FailureKind::Unimplemented,
                reason: "because".into()
            }
        );
        let stale = run_one(&vector(&listed("{ uint32 = 2 }", "value: Uint32(2)")));
        assert!(matches!(stale, Outcome::UnexpectedPass { .. }) && stale.is_bad());
        // Failing another way than listed is a failure of its own.
        let other = run_one(&vector(&listed("{ uint32 = 3 }", "PMIX_ERR_NOT_FOUND")));
        match &other {
            Outcome::Fail {
                step: 1,
                seen,
                diff,
            } => {
                assert_eq!(seen, "value: Uint32(2)");
                assert!(
                    diff.starts_with("listed to fail at step 1 seeing PMIX_ERR_NOT_FOUND"),
                    "{diff}"
                );
            }
            o => panic!("{o:?}"),
        }
        assert!(other.is_bad());
    }

    /// A listed failure that comes in some runs only: both outcomes are accepted, and the
    /// baseline records neither.
    #[test]
    fn an_intermittent_failure_accepts_a_pass_and_the_baseline_names_it() {
        let listed = |size: &str| {
            format!(
                "summary = \"s\"\nsection = \"x\"\n[expected_failure]\n\
                 rust = {{ step = 1, seen = \"value: Uint32(2)\", reason = \"a race\", intermittent = true }}\n\
                 [[step]]\nproc = 0\ncall = \"get\"\ntarget = {{ rank = \"wildcard\" }}\n\
                 key = \"PMIX_JOB_SIZE\"\nexpect.value = {size}\n"
            )
        };
        let failed = run_one(&vector(&listed("{ uint32 = 3 }")));
        assert!(
            matches!(failed, Outcome::ExpectedFailure { step: 1, .. }),
            "{failed:?}"
        );
        let passed = run_one(&vector(&listed("{ uint32 = 2 }")));
        assert_eq!(passed, Outcome::Pass);
        // The race may strike a later step that repeats the operation, never an earlier one.
        let two_gets = |listed_step: usize, first: &str, second: &str| {
            let get = |size: &str| {
                format!(
                    "[[step]]\nproc = 0\ncall = \"get\"\ntarget = {{ rank = \"wildcard\" }}\n\
                     key = \"PMIX_JOB_SIZE\"\nexpect.value = {size}\n"
                )
            };
            format!(
                "summary = \"s\"\nsection = \"x\"\n[expected_failure]\n\
                 rust = {{ step = {listed_step}, seen = \"value: Uint32(2)\", reason = \"a race\", intermittent = true }}\n{}{}",
                get(first),
                get(second)
            )
        };
        let later = run_one(&vector(&two_gets(1, "{ uint32 = 2 }", "{ uint32 = 3 }")));
        assert!(
            matches!(later, Outcome::ExpectedFailure { step: 2, .. }),
            "{later:?}"
        );
        let earlier = run_one(&vector(&two_gets(2, "{ uint32 = 3 }", "{ uint32 = 2 }")));
        assert!(earlier.is_bad(), "{earlier:?}");
        let row = |outcome| crate::outcome::Row {
            id: "v".into(),
            section: String::new(),
            rules: Vec::new(),
            target: "rust".into(),
            outcome,
        };
        let intermittent = ["v"].into_iter().collect();
        for outcome in [failed, passed] {
            let base = crate::report::baseline(&[row(outcome)], &intermittent);
            assert!(base.ends_with("v\tintermittent\n"), "{base}");
        }
    }
}
