//! Interoperability with OpenPMIx 4.2 and Open MPI, across processes (issue 3, item 7):
//!
//! (a) a C client built against OpenPMIx's headers and library, under `pmixrun`; and a C
//!     tool of OpenPMIx attaching to `pmixrun`'s server by URI and by pid;
//! (b) the Rust client under a C host embedding OpenPMIx's server;
//! (c) a python3-pmix client under `pmixrun`;
//! (d) an Open MPI program (`MPI_Init`, `MPI_Allreduce`, a ring of `MPI_Sendrecv`) under
//!     `pmixrun -n 4`.
//!
//! The peer programs live in `tests/interop/`; they are compiled here with `cc` (flags from
//! `pkg-config pmix`) and `mpicc`. The packages they need (`libpmix-dev python3-pmix
//! openmpi-bin libopenmpi-dev`) are installed by `cargo xtask test`; a missing tool is a test
//! failure that names the package, never a silent skip.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use pmix_tests::launch::{build_c, build_mpi, check, check_says, pmixrun, root, under_pmixrun};

fn rust_client() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rust_client_check"))
}

#[test]
fn a_openpmix_c_client_runs_under_pmixrun() {
    let client = build_c("client_check");
    for n in [1, 2, 4, 8] {
        check(
            under_pmixrun(n, &client, &["--fences", "20"]),
            n,
            "C client under pmixrun",
        );
    }
}

#[test]
fn b_rust_client_runs_under_an_openpmix_server() {
    let host = build_c("host");
    for n in [1, 2, 4, 8] {
        let mut cmd = Command::new(&host);
        cmd.env("HOST_TIMEOUT", "120")
            .args(["-n", &n.to_string(), "--"])
            .arg(rust_client())
            .args(["--fences", "20"]);
        check(cmd, n, "Rust client under the OpenPMIx host");
    }
}

#[test]
fn b_openpmix_c_client_runs_under_the_openpmix_host_as_a_baseline() {
    let host = build_c("host");
    let client = build_c("client_check");
    let mut cmd = Command::new(&host);
    cmd.env("HOST_TIMEOUT", "120")
        .args(["-n", "2", "--"])
        .arg(client);
    check(cmd, 2, "C client under the OpenPMIx host");
}

#[test]
fn a_openpmix_tool_attaches_to_pmixrun_by_uri_and_by_pid() {
    // Each rank becomes a self-started tool: pmixrun assigns it an identifier, and it reads
    // the job's size by namespace. `pid` finds the server through its rendezvous file.
    let tool = build_c("tool_check");
    for mode in ["uri", "pid"] {
        check(
            under_pmixrun(2, &tool, &[mode]),
            2,
            &format!("OpenPMIx tool attaching by {mode}"),
        );
    }
}

#[test]
fn rust_client_runs_under_pmixrun() {
    for n in [1, 2, 4, 8] {
        check(
            under_pmixrun(n, &rust_client(), &["--fences", "20"]),
            n,
            "Rust client under pmixrun",
        );
    }
}

#[test]
fn rust_clients_hear_of_terminations_and_each_other_under_pmixrun() {
    let program = PathBuf::from(env!("CARGO_BIN_EXE_rust_event_check"));
    let says = Some("ok events 2 terminations and hello=true");
    check_says(
        under_pmixrun(3, &program, &[]),
        3,
        "events under pmixrun",
        says,
    );
}

#[test]
fn python3_pmix_clients_hear_of_terminations_and_each_other_under_pmixrun() {
    let script = root().join("tests/interop/python/event_check.py");
    let mut cmd = under_pmixrun(3, Path::new("/usr/bin/python3"), &[]);
    cmd.arg(script);
    let says = Some("ok events 2 terminations and hello=True");
    check_says(cmd, 3, "python3-pmix events under pmixrun", says);
}

#[test]
fn rust_clients_build_groups_and_fence_by_their_ids_under_pmixrun() {
    let program = PathBuf::from(env!("CARGO_BIN_EXE_rust_group_check"));
    let mut cmd = Command::new(pmixrun());
    cmd.args(["-n", "4", "--timeout", "120", "--pset", "quadset", "--"])
        .arg(&program);
    check_says(cmd, 4, "groups under pmixrun", Some("ok fence by group id"));
}

#[test]
fn a_rust_client_registers_the_machines_fabric_under_pmixrun() {
    let program = PathBuf::from(env!("CARGO_BIN_EXE_rust_fabric_check"));
    check_says(
        under_pmixrun(1, &program, &[]),
        1,
        "fabric under pmixrun",
        Some("ok deregister"),
    );
}

#[test]
fn rust_clients_bound_by_pmixrun_read_their_cpusets_and_localities() {
    let program = PathBuf::from(env!("CARGO_BIN_EXE_rust_topology_check"));
    let mut cmd = Command::new(pmixrun());
    cmd.args(["-n", "2", "--timeout", "120", "--bind-to", "hwthread", "--"])
        .arg(&program);
    check_says(
        cmd,
        2,
        "topology under pmixrun",
        Some("ok device distances"),
    );
}

#[test]
fn rust_clients_query_namespaces_and_the_proc_table_under_pmixrun() {
    let program = PathBuf::from(env!("CARGO_BIN_EXE_rust_query_check"));
    let says = Some("ok proc table of 3 with my pid");
    check_says(
        under_pmixrun(3, &program, &[]),
        3,
        "queries under pmixrun",
        says,
    );
}

#[test]
fn python3_pmix_clients_query_namespaces_and_the_proc_table_under_pmixrun() {
    let script = root().join("tests/interop/python/query_check.py");
    let mut cmd = under_pmixrun(3, Path::new("/usr/bin/python3"), &[]);
    cmd.arg(script);
    let says = Some("ok proc table of 3 with my pid");
    check_says(cmd, 3, "python3-pmix queries under pmixrun", says);
}

#[test]
fn python3_pmix_clients_connect_and_disconnect_under_pmixrun() {
    let script = root().join("tests/interop/python/connect_check.py");
    let mut cmd = under_pmixrun(3, Path::new("/usr/bin/python3"), &[]);
    cmd.arg(script);
    let says = Some("ok second disconnect refused");
    check_says(cmd, 3, "python3-pmix connect under pmixrun", says);
}

#[test]
fn a_python3_pmix_client_publishing_past_its_limit_is_refused_and_keeps_its_data() {
    let script = root().join("tests/interop/python/publish_limit_check.py");
    let mut cmd = under_pmixrun(1, Path::new("/usr/bin/python3"), &[]);
    cmd.arg(script);
    let says = Some("ok second found");
    check_says(cmd, 1, "python3-pmix publishing past its limit", says);
}

#[test]
fn python3_pmix_clients_build_a_group_with_one_context_id_under_pmixrun() {
    let script = root().join("tests/interop/python/group_check.py");
    let mut cmd = under_pmixrun(4, Path::new("/usr/bin/python3"), &[]);
    cmd.arg(&script);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ids: BTreeSet<&str> = (stdout.lines())
        .filter_map(|l| l.strip_prefix("ok construct with context id "))
        .collect();
    let steps = |step: &str| stdout.lines().filter(|l| *l == step).count();
    assert!(
        out.status.success()
            && !stdout.contains("FAIL")
            && ids.len() == 1
            && steps("ok fence by group id") == 4
            && steps("ok destruct") == 4,
        "python3-pmix groups: one context id at all 4 ranks, a fence by the group's id and \
         a destruct ({:?})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
}

#[test]
fn python3_pmix_client_spawns_a_job_under_pmixrun() {
    let script = root().join("tests/interop/python/spawn_check.py");
    let mut cmd = under_pmixrun(2, Path::new("/usr/bin/python3"), &[]);
    cmd.arg(&script);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The parent's steps and both children of the spawned job, each found by its parent.
    let wanted = [
        "of 2",
        "ok missing executable refused",
        "ok child 0 of",
        "ok child 1 of",
    ];
    assert!(
        out.status.success()
            && !stdout.contains("FAIL")
            && wanted.iter().all(|w| stdout.contains(w)),
        "python3-pmix spawn under pmixrun failed ({:?})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
}

#[test]
fn python3_pmix_clients_log_allocate_and_terminate_a_peer_under_pmixrun() {
    let script = root().join("tests/interop/python/job_check.py");
    let mut cmd = under_pmixrun(2, Path::new("/usr/bin/python3"), &[]);
    cmd.arg(script);
    let says = Some("ok terminated by the host");
    check_says(cmd, 2, "python3-pmix job management under pmixrun", says);
}

#[test]
fn a_silent_rust_client_and_an_untouched_file_get_alerts_under_pmixrun() {
    let program = PathBuf::from(env!("CARGO_BIN_EXE_rust_monitor_check"));
    let says = Some("ok alert for an untouched file");
    check_says(
        under_pmixrun(2, &program, &[]),
        2,
        "monitoring under pmixrun",
        says,
    );
}

#[test]
fn a_rust_client_checkpoints_cancels_and_hears_its_spawned_job_end_under_pmixrun() {
    let program = PathBuf::from(env!("CARGO_BIN_EXE_rust_job_check"));
    let keep = std::env::temp_dir().join(format!("rust-job-check.{}", std::process::id()));
    let keep_arg = keep.display().to_string();
    check_says(
        under_pmixrun(1, &program, &[&keep_arg]),
        1,
        "job control under pmixrun",
        Some("ok queries"),
    );
    // The cleanup of this file was cancelled: the launcher left it in place.
    let kept = keep.exists();
    let _ = std::fs::remove_file(&keep);
    assert!(
        kept,
        "a cancelled cleanup request removed {}",
        keep.display()
    );
}

#[test]
fn openpmix_c_clients_get_and_validate_credentials_under_pmixrun() {
    let check = build_c("credential_check");
    let says = Some("ok altered credential refused");
    check_says(
        under_pmixrun(2, &check, &[]),
        2,
        "C credentials under pmixrun",
        says,
    );
}

#[test]
fn a_python3_pmix_tool_attaches_to_pmixrun_by_uri_and_by_pid() {
    let script = root().join("tests/interop/python/tool_check.py");
    for mode in ["uri", "pid"] {
        let mut cmd = under_pmixrun(2, Path::new("/usr/bin/python3"), &[]);
        cmd.arg(&script).arg(mode);
        let says = Some("ok tool-finalize");
        check_says(cmd, 2, &format!("python3-pmix tool by {mode}"), says);
    }
}

#[test]
fn a_python3_pmix_tool_pulls_the_output_of_a_pmixrun_job() {
    // pmixrun relays its processes' output to the server; the tool (rank 0, attached by
    // pmixrun's pid) pulls every process's stdout and stderr and must be handed rank 1's.
    let mut cmd = under_pmixrun(2, Path::new("/usr/bin/python3"), &[]);
    cmd.arg(root().join("tests/interop/python/iof_check.py"));
    let says = Some("ok iof-output");
    check_says(cmd, 2, "python3-pmix tool pulling output", says);
}

#[test]
fn a_python3_pmix_host_serves_its_own_clients() {
    // OpenPMIx's library on both sides: what the same script checks on this project's
    // library (tests/capi.rs) holds of OpenPMIx's.
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg(root().join("tests/interop/python/server_check.py"));
    let says = Some("ok client-exit both clients passed");
    check_says(cmd, 2, "python3-pmix host", says);
}

#[test]
fn c_python3_pmix_client_runs_under_pmixrun() {
    let script = root().join("tests/interop/python/client_check.py");
    let python = Path::new("/usr/bin/python3");
    assert!(
        python.exists(),
        "/usr/bin/python3 is missing: install python3-pmix"
    );
    let mut cmd = under_pmixrun(2, python, &[]);
    cmd.arg(script);
    check(cmd, 2, "python3-pmix client under pmixrun");
}

#[test]
fn d_open_mpi_ring_runs_under_pmixrun() {
    let ring = build_mpi("ring");
    check(
        under_pmixrun(4, &ring, &[]),
        4,
        "Open MPI ring under pmixrun",
    );
}
