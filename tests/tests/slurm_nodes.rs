//! Slurm past one machine: jobs of 8 ranks over a cluster of 4 nodes (`pmix_tests::slurm`),
//! each node's `slurmd` in namespaces of its own, so that Slurm's `mpi/pmix` plugin does
//! what it does between real nodes: its fences over its ring and tree between the steps'
//! daemons, and the job's data from other nodes.
//!
//! What each run checks, with every node's server this library's and, in turn, each library
//! in the ranks: the C client check (a fence with data across nodes, a get of every rank's
//! key, `PMIX_LOCAL_PEERS` and the node's values on every node), Open MPI's ring and
//! mpi4py's own test suite; and this project's Rust client check and library under
//! OpenPMIx's servers; and first, on each cluster, a rank that crashes after init ends its
//! step at once. Needs root (namespaces, mounts): `cargo xtask test` runs these when it runs
//! as root, as CI does.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pmix_tests::capi::on_our_library;
use pmix_tests::launch::{assert_passed, build_c, build_mpi, error_lines, outside_holding};
use pmix_tests::openpmix::example_4_2;
use pmix_tests::slurm::{Cluster, Server, processes_in};

const NODES: usize = 4;
const RANKS: usize = 8;

/// The cluster, each of its nodes' servers checked to be `server`'s library: the plugin
/// opened the library mounted over OpenPMIx's on each node, or OpenPMIx's own.
fn cluster(server: Server) -> Cluster {
    let dir = PathBuf::from(format!("/tmp/pmix-nodes-{}-{server:?}", std::process::id()));
    let cluster = Cluster::start(NODES, server, &dir).unwrap_or_else(|why| panic!("{why}"));
    let uris = cluster.server_uris().unwrap_or_else(|why| panic!("{why}"));
    assert_eq!(uris.len(), NODES, "a URI from each node: {uris:?}");
    for uri in &uris {
        let ours = uri.starts_with("pmix-rs-server-");
        assert!(
            !uri.is_empty() && ours == (server == Server::ThisProject),
            "each node's server is {server:?}'s: PMIX_SERVER_URI41 {uris:?}"
        );
    }
    cluster
}

/// Stop `cluster` and check it left nothing: no process in any namespace it created (so no
/// namespace, and none of its addresses or mounts, which lived only in them), and no folder.
fn stops_leaving_nothing(cluster: Cluster) {
    let namespaces = cluster.namespaces();
    let dir = cluster.dir().to_owned();
    // Its daemons' network, UTS, mount and process namespaces, and the bridge's.
    assert!(
        namespaces.len() > 2 * NODES,
        "the cluster's namespaces are found: {namespaces:?}"
    );
    drop(cluster);
    // The kernel ends a process namespace's other processes once its first one is killed:
    // give it a moment.
    let mut left = processes_in(&namespaces);
    for _ in 0..50 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        left = processes_in(&namespaces);
    }
    assert!(
        left.is_empty(),
        "processes left in the cluster's namespaces: {left:?}"
    );
    assert!(!dir.exists(), "{} is removed", dir.display());
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

/// A fence without data holds every rank of every node until the last one entered it
/// (`tests/interop/c/barrier_check.c`).
fn a_fence_without_data_holds_every_node(cluster: &Cluster, ours: bool, what: &str) {
    let marker = cluster.dir().join("last-rank-entered");
    let _ = std::fs::remove_file(&marker);
    let mut cmd = cluster.srun(
        NODES,
        RANKS,
        &build_c("barrier_check"),
        &[marker.to_str().unwrap()],
    );
    if ours {
        on_our_library(&mut cmd);
    }
    let says = "ok the fence held until the last rank entered";
    ranks_pass(cluster, &mut cmd, what, says);
}

/// OpenPMIx 4.2's own `client` (put, commit, fence with data, then a get of every rank's
/// keys, each checked) and `dmodex` (gets of data never fenced, which the servers fetch from
/// the other nodes through the plugin's direct modex), unmodified: they end well, nothing
/// reports an error, and the ranks that say they finalized (every rank of `client`, rank 0 of
/// `dmodex`) say so.
fn examples_pass(cluster: &Cluster, ours: bool, what: &str) {
    for (name, saying) in [("client", RANKS), ("dmodex", 1)] {
        let mut cmd = cluster.srun(NODES, RANKS, &example_4_2(name), &[]);
        if ours {
            on_our_library(&mut cmd);
        }
        let out = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let errors = error_lines(&text, &[]);
        let finalized = text
            .lines()
            .filter(|l| l.contains("PMIx_Finalize successfully completed"))
            .count();
        assert!(
            out.status.success() && errors.is_empty() && finalized == saying,
            "{name}, {what}: {:?}, {finalized} of {saying} said they finalized, errors \
             {errors:?}\n{text}\n{}",
            out.status,
            cluster.logs()
        );
    }
}

/// The modules of mpi4py's suite left out (`-e` patterns of its `runtests.py`), each for a
/// reason outside PMIx: Slurm's plugin answers spawn, publish and lookup
/// `PMIX_ERR_NOT_SUPPORTED`, so Open MPI refuses `MPI_Comm_spawn`, `MPI_Comm_accept` and
/// `MPI_Comm_connect` (`test_spawn`, `test_dynproc`); and Debian's Open MPI 4.1 cannot make
/// a one-sided window between nodes over TCP (`MPI_ERR_WIN: invalid window` in 19 of
/// `test_win`'s tests on every rank, with OpenPMIx's servers as with this library's).
const MPI4PY_LEFT_OUT: [&str; 3] = ["test_spawn", "test_dynproc", "test_win"];

/// mpi4py's own test suite (of the installed version, fetched by `cargo xtask test`) at 4
/// nodes x 2 ranks, but the modules of [`MPI4PY_LEFT_OUT`]: its communicators,
/// point-to-point, collective and I/O operations cross the nodes. Every rank's summary must
/// report success over the whole suite (1,282 tests on each rank with mpi4py 3.1.4). About
/// four minutes on an idle 2-core machine (Open MPI's ranks yield when idle, as 8 of them
/// poll), six and a half beside other work.
fn mpi4py_suite_passes(cluster: &Cluster, ours: bool, what: &str) {
    let suite = outside_holding("mpi4py", "test/runtests.py");
    let python = Path::new("/usr/bin/python3");
    let runtests = suite.join("test/runtests.py");
    let mut args = vec![runtests.to_str().unwrap(), "--no-builddir"];
    for module in MPI4PY_LEFT_OUT {
        args.extend(["-e", module]);
    }
    let mut cmd = cluster.srun_within(900, NODES, RANKS, python, &args);
    cmd.current_dir(&suite)
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    if ours {
        on_our_library(&mut cmd);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // unittest reports on stderr, one summary per rank; a rank with a failed test exits
    // non-zero, and so does srun.
    let ran: Vec<usize> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("Ran ")?.split(' ').next()?.parse().ok())
        .collect();
    let ok = stderr.lines().filter(|l| l.starts_with("OK")).count();
    assert!(
        out.status.success() && ran.len() == RANKS && ok == RANKS,
        "mpi4py's suite, {what} ({:?}): {} summaries, {ok} OK\n{stderr}",
        out.status,
        ran.len()
    );
    // The whole suite ran, not a few modules of it.
    assert!(
        ran.iter().all(|&n| n >= 1000),
        "mpi4py's suite, {what}: tests run on each rank {ran:?}"
    );
}

/// A node lost mid-job: every rank is ready, node 3's ranks stay out of a fence with data
/// that the others enter, and node 3 is lost (its daemons and ranks killed at once, its network
/// gone). Every survivor's fence must fail (Slurm's plugin gives up on the node after
/// `PMIxTimeout`), the step must end with Slurm naming the node's failure, and no rank may be
/// left. Last on its cluster: the node does not come back.
fn a_lost_node_ends_the_job(cluster: &mut Cluster, ours: bool, what: &str) {
    let out_file = std::env::temp_dir().join(format!("node-lost-{}.out", std::process::id()));
    let program = build_c("node_lost");
    // A word of this job's own on its command line: the test's other cluster may be running
    // the same program.
    let mark = format!("job-of-test-{}", std::process::id());
    let mut cmd = cluster.srun_within(300, NODES, RANKS, &program, &["node3", &mark]);
    cmd.stdout(std::fs::File::create(&out_file).unwrap());
    if ours {
        on_our_library(&mut cmd);
    }
    let srun = cmd.stderr(Stdio::piped()).spawn().unwrap();
    let ready = || {
        let text = std::fs::read_to_string(&out_file).unwrap_or_default();
        text.lines().filter(|l| l.starts_with("ready")).count()
    };
    for _ in 0..600 {
        if ready() == RANKS {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        ready(),
        RANKS,
        "{what}: every rank ready\n{}",
        cluster.logs()
    );
    cluster.lose_node(3);
    let out = srun.wait_with_output().unwrap();
    let stdout = std::fs::read_to_string(&out_file).unwrap();
    let _ = std::fs::remove_file(&out_file);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let context = format!("{what}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!out.status.success(), "the step failed: {context}");
    assert!(
        stderr.contains("Node failure on node3"),
        "Slurm names the lost node: {context}"
    );
    for rank in 0..6 {
        let line = format!("fence rank {rank}: ");
        let fence = stdout.lines().find(|l| l.starts_with(&line));
        assert!(
            fence.is_some_and(|l| !l.contains("SUCCESS")),
            "survivor {rank}'s fence fails: {context}"
        );
    }
    let left = Command::new("pgrep")
        .arg("-f")
        .arg(format!("{} node3 {mark}", program.display()))
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "no rank is left: {}\n{context}",
        String::from_utf8_lossy(&left.stdout)
    );
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
    let mut cluster = cluster(Server::ThisProject);
    a_lost_rank_ends_the_step(&cluster, false, "OpenPMIx's ranks, this library's servers");
    a_lost_rank_ends_the_step(&cluster, true, "this library as ranks and servers");
    client_check_passes(
        &cluster,
        false,
        "OpenPMIx's clients on this library's servers",
    );
    client_check_passes(&cluster, true, "this library's clients and servers");
    a_fence_without_data_holds_every_node(
        &cluster,
        false,
        "OpenPMIx's clients on this library's servers",
    );
    a_fence_without_data_holds_every_node(&cluster, true, "this library's clients and servers");
    examples_pass(
        &cluster,
        false,
        "OpenPMIx's clients on this library's servers",
    );
    examples_pass(&cluster, true, "this library's clients and servers");
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
    mpi4py_suite_passes(
        &cluster,
        false,
        "Open MPI on OpenPMIx's clients, this library's servers",
    );
    mpi4py_suite_passes(
        &cluster,
        true,
        "Open MPI on this library's clients and servers",
    );
    a_lost_node_ends_the_job(
        &mut cluster,
        false,
        "OpenPMIx's ranks, this library's servers",
    );
    stops_leaving_nothing(cluster);
}

#[test]
#[ignore = "needs root: namespaces for each node (cargo xtask test runs it as root)"]
fn this_projects_clients_cross_four_nodes_whose_servers_are_openpmix() {
    let mut cluster = cluster(Server::OpenPmix);
    a_lost_rank_ends_the_step(&cluster, true, "this library's ranks, OpenPMIx's servers");
    client_check_passes(
        &cluster,
        true,
        "this library's clients on OpenPMIx's servers",
    );
    a_fence_without_data_holds_every_node(
        &cluster,
        true,
        "this library's clients on OpenPMIx's servers",
    );
    examples_pass(
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
    a_lost_node_ends_the_job(
        &mut cluster,
        true,
        "this library's ranks, OpenPMIx's servers",
    );
    stops_leaving_nothing(cluster);
}
