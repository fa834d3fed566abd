//! Slurm past one machine: jobs of 8 ranks over a cluster of 4 nodes (`pmix_tests::slurm`),
//! each node's `slurmd` in namespaces of its own, so that Slurm's `mpi/pmix` plugin does
//! what it does between real nodes: its fences over its ring and tree between the steps'
//! daemons, and the job's data from other nodes.
//!
//! What each run checks, with every node's server this library's and, in turn, each library
//! in the ranks: the C client check (a fence with data across nodes, a get of every rank's
//! key, `PMIX_LOCAL_PEERS` and the node's values on every node) and Open MPI's ring; and this
//! project's Rust client check and library under OpenPMIx's servers; and first, on each
//! cluster, a rank that crashes after init ends its step at once. Needs root (namespaces,
//! mounts): `cargo xtask test` runs these when it runs as root, as CI does.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use std::path::{Path, PathBuf};
use std::process::Command;

use pmix_tests::capi::on_our_library;
use pmix_tests::launch::{assert_passed, build_c, build_mpi};
use pmix_tests::slurm::{Cluster, Server};

const NODES: usize = 4;
const RANKS: usize = 8;

fn cluster(server: Server) -> Cluster {
    let dir = PathBuf::from(format!("/tmp/pmix-nodes-{}-{server:?}", std::process::id()));
    Cluster::start(NODES, server, &dir).unwrap_or_else(|why| panic!("{why}"))
}

/// Run `cmd` (an `srun` of the cluster's) and check every rank passed, each node's two ranks
/// told they are each other's local peers.
fn ranks_pass(cluster: &Cluster, cmd: &mut Command, what: &str, says: &str) {
    let out = cmd.output().unwrap();
    if !out.status.success() {
        eprintln!("{}", cluster.logs());
    }
    assert_passed(&out, RANKS as u32, what, Some(says));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let count = |line: &str| stdout.lines().filter(|l| l.contains(line)).count();
    assert_eq!(
        count(says),
        RANKS,
        "{what}: every rank says {says:?}\n{stdout}"
    );
}

/// The C client check across the nodes: the data of all 8 ranks after one fence, each
/// node's local peers (ranks 2i and 2i+1 on node i) and its host name.
fn client_check_passes(cluster: &Cluster, ours: bool, what: &str) {
    let mut cmd = cluster.srun(
        NODES,
        RANKS,
        &build_c("client_check"),
        &["--no-publish-upcall"],
    );
    cmd.env("CHECK_EXPECTED_SIZE", RANKS.to_string());
    if ours {
        on_our_library(&mut cmd);
    }
    let out = cmd.output().unwrap();
    assert_passed(&out, RANKS as u32, what, Some("ok finalize"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for node in 0..NODES {
        let peers = format!("hostname=node{node} peers={},{}", 2 * node, 2 * node + 1);
        let on_node = stdout.lines().filter(|l| l.contains(&peers)).count();
        assert_eq!(on_node, 2, "{what}: node{node}'s ranks and peers\n{stdout}");
    }
    let got_all = stdout
        .lines()
        .filter(|l| l.contains(&format!("ok get_global ranks={RANKS}")))
        .count();
    assert_eq!(
        got_all, RANKS,
        "{what}: every rank got every rank's key\n{stdout}"
    );
}

fn ring_passes(cluster: &Cluster, ours: bool, what: &str) {
    let mut cmd = cluster.srun(NODES, RANKS, &build_mpi("ring"), &[]);
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    if ours {
        on_our_library(&mut cmd);
    }
    let says = format!("of {RANKS}");
    ranks_pass(cluster, &mut cmd, what, &says);
}

/// A job of 8 ranks where rank 1 crashes right after init while the others sleep for two
/// minutes: the servers tell Slurm's plugin of the lost connection, which cancels the step,
/// long before the survivors wake (`docs/slurm.md` has the times of both libraries).
fn a_lost_rank_ends_the_step(cluster: &Cluster, ours: bool, what: &str) {
    let mut cmd = cluster.srun_within(300, NODES, RANKS, &build_c("lost_rank"), &["120"]);
    if ours {
        on_our_library(&mut cmd);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let context = || {
        format!(
            "{what}\nstdout:\n{stdout}\nstderr:\n{stderr}\n{}",
            cluster.logs()
        )
    };
    assert!(!out.status.success(), "the step failed: {}", context());
    assert!(
        stderr.contains("task 1: Segmentation fault"),
        "srun names the crashed rank: {}",
        context()
    );
    // A step that nobody cancelled ends when its survivors wake and say so.
    assert!(
        !stdout.contains("ok slept"),
        "no rank slept out: {}",
        context()
    );
}

#[test]
#[ignore = "needs root: namespaces and mounts for each node (cargo xtask test runs it as root)"]
fn jobs_cross_four_nodes_whose_servers_are_this_library() {
    let cluster = cluster(Server::ThisProject);
    a_lost_rank_ends_the_step(&cluster, false, "OpenPMIx's ranks, this library's servers");
    a_lost_rank_ends_the_step(&cluster, true, "this library as ranks and servers");
    client_check_passes(
        &cluster,
        false,
        "OpenPMIx's clients on this library's servers",
    );
    client_check_passes(&cluster, true, "this library's clients and servers");
    ring_passes(
        &cluster,
        false,
        "Open MPI on OpenPMIx's clients, this library's servers",
    );
    ring_passes(
        &cluster,
        true,
        "Open MPI on this library's clients and servers",
    );
}

#[test]
#[ignore = "needs root: namespaces for each node (cargo xtask test runs it as root)"]
fn this_projects_clients_cross_four_nodes_whose_servers_are_openpmix() {
    let cluster = cluster(Server::OpenPmix);
    a_lost_rank_ends_the_step(&cluster, true, "this library's ranks, OpenPMIx's servers");
    client_check_passes(
        &cluster,
        true,
        "this library's clients on OpenPMIx's servers",
    );
    let rust = Path::new(env!("CARGO_BIN_EXE_rust_client_check"));
    let mut cmd = cluster.srun(NODES, RANKS, rust, &["--no-publish-upcall"]);
    cmd.env("CHECK_EXPECTED_SIZE", RANKS.to_string());
    ranks_pass(
        &cluster,
        &mut cmd,
        "this crate's Rust client on OpenPMIx's servers",
        "ok finalize",
    );
}
