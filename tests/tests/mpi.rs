//! MPI programs as users run them under `pmixrun`, with Debian's Open MPI 4.1 and mpi4py:
//!
//! - dynamic processes: a parent that spawns three times in a row, and one that works on after
//!   its children have ended (a launcher that raises an orderly end to Open MPI's default
//!   event handler has the parent aborted);
//! - an oversubscribed job: more processes than processors must make Open MPI yield when
//!   idle instead of busy-polling (checked through the MPI tool interface, not by timing);
//! - a name no job published: the lookup fails at once and an accept without a peer ends at
//!   its timeout;
//! - mpi4py's own test suite (from its source release, fetched by `cargo xtask test`), spawn
//!   tests included, at one and two processes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use std::path::PathBuf;
use std::process::Command;

use pmix_tests::launch::{build_mpi, check_says, outside_holding, under_pmixrun};

#[test]
fn a_parent_spawns_three_times_in_a_row() {
    let program = build_mpi("spawn_check");
    for n in [1, 2] {
        check_says(
            under_pmixrun(n, &program, &["thrice"]),
            n,
            "MPI_Comm_spawn three times",
            Some("ok spawn 3"),
        );
    }
}

#[test]
fn a_parent_works_on_after_its_children_end() {
    let program = build_mpi("spawn_check");
    for n in [1, 2] {
        check_says(
            under_pmixrun(n, &program, &["outlive"]),
            n,
            "work after the spawned children ended",
            Some("ok worked on after the children ended"),
        );
    }
}

/// The processors `pmixrun` may run processes on: the same count this process sees.
fn processors() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(1))
}

#[test]
fn an_oversubscribed_job_yields_when_idle_and_one_that_fits_polls() {
    let program = build_mpi("yield_check");
    let over = processors() + 1;
    check_says(
        under_pmixrun(over, &program, &[]),
        over,
        "an oversubscribed job",
        Some("yield when idle: 1"),
    );
    check_says(
        under_pmixrun(1, &program, &[]),
        1,
        "a job that fits",
        Some("yield when idle: 0"),
    );
}

#[test]
fn a_name_no_one_published_fails_at_once_and_a_lonely_accept_ends() {
    let program = build_mpi("lookup_check");
    let mut cmd = under_pmixrun(1, &program, &[]);
    cmd.env("OMPI_MCA_pmix_base_exchange_timeout", "3");
    check_says(
        cmd,
        1,
        "lookup and accept without a peer",
        Some("ok accept with no peer ends"),
    );
}

/// mpi4py's test suite of the installed version.
fn mpi4py_suite() -> PathBuf {
    outside_holding("mpi4py", "test/runtests.py")
}

/// mpi4py's whole suite under `pmixrun` at `n` processes, its spawn tests included: every
/// rank's summary reports success, with this project's library in the ranks when `ours`.
fn mpi4py_suite_passes(n: u32, ours: bool) {
    let suite = mpi4py_suite();
    let mut cmd = Command::new(pmix_tests::launch::pmixrun());
    cmd.args(["-n", &n.to_string(), "--timeout", "1200", "--"])
        .arg("/usr/bin/python3")
        .arg(suite.join("test/runtests.py"))
        .args(["--no-builddir", "--verbose"])
        .current_dir(&suite)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    if ours {
        pmix_tests::capi::on_our_library(&mut cmd);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // unittest reports on stderr, one summary per rank (the ranks' lines may mix); a rank
    // with a failed test exits non-zero, and so does pmixrun.
    let summaries = stderr.matches("Ran ").count();
    let spawned = stderr.matches("test_spawn.TestSpawnWorld").count();
    let library = if ours {
        "this library"
    } else {
        "OpenPMIx's library"
    };
    assert!(
        out.status.success() && summaries == n as usize && spawned > 0,
        "mpi4py's suite at n = {n} on {library} ({:?}): {summaries} summaries, {spawned} spawn \
         tests\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
}

#[test]
fn mpi4py_test_suite_passes_with_its_spawn_tests() {
    for n in [1, 2] {
        mpi4py_suite_passes(n, false);
    }
}

#[test]
fn mpi4py_test_suite_passes_with_its_spawn_tests_on_this_library() {
    // The spawned children of the first spawns clean the folder the server's socket is in
    // when they finalize; the next spawn's children join through the server's TCP URI.
    for n in [1, 2, 4] {
        mpi4py_suite_passes(n, true);
    }
}
