//! OpenPMIx 4.2.2's own example programs (its `examples/`, from Debian's source package,
//! fetched by `cargo xtask test` and never committed), unmodified, under `pmixrun` at two and
//! four processes. Each must behave as the standard says: the clients run to the end with no
//! error from the PMIx library, and the programs whose first rank fails are ended by the
//! launcher with that rank's status after the others heard of it.
//!
//! Each runs twice: on OpenPMIx's `libpmix.so.2`, which the programs were built against, and
//! unchanged on this project's (`capi/`, first on `LD_LIBRARY_PATH`).
//!
//! Beside them, the programs of its `test/simple/` that use the standard's API alone
//! (`doubleget`, `get_put_example`, `hybrid`); the others include OpenPMIx's internal
//! headers, and `test_pmix` fails its own type assertion on OpenPMIx's library too.
//!
//! Not run, because they need what one machine under `pmixrun` cannot give:
//!
//! - `alloc` beyond one process: its other ranks wait for `PMIX_NOTIFY_ALLOC_COMPLETE`, an
//!   event v5.0 removed (Appendix C.8.7) and no launcher raises (Open MPI's `mpirun` hangs
//!   the same); its rank 0, run alone, does its part;
//! - `debugger`: it asks a launcher to co-spawn debugger daemons (`PMIX_DEBUGGER_DAEMONS`,
//!   `PMIX_DEBUG_STOP_IN_INIT`), which `pmixrun` does not act on (its
//!   `PMIX_QUERY_DEBUG_SUPPORT` is empty);
//! - `launcher`: it needs a system-level server (`PMIX_CONNECT_TO_SYSTEM`), which `pmixrun`
//!   is not;
//! - `server`: it is a host embedding OpenPMIx's server, not a program to launch;
//! - `pmi1client`: the PMI-1 header is not in Debian's `libpmix-dev`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use std::path::PathBuf;
use std::process::Command;

use pmix_tests::capi::on_our_library;
use pmix_tests::launch::{build_c_program, error_lines, pkg_config, pmixrun};
use pmix_tests::openpmix::{example_4_2, examples_4_2, examples_4_2_bin_dir};

/// The PMIx library a run loads.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Library {
    OpenPmix,
    ThisProject,
}

/// Every program runs on both.
const LIBRARIES: [Library; 2] = [Library::OpenPmix, Library::ThisProject];

/// OpenPMIx's `test/simple` programs that use the standard's API alone (the others include
/// OpenPMIx's internal headers), built the same way. They include `"include/pmix.h"`, a path
/// from the root of OpenPMIx's tree: the installed headers' parent folder stands in for it.
fn simple_test(name: &str) -> PathBuf {
    let src = examples_4_2().join(format!("../test/simple/{name}.c"));
    let includedir = pkg_config(&["--variable=includedir"]).join("");
    let root = PathBuf::from(includedir).join("..");
    let flag = format!("-I{}", root.display());
    build_c_program(&src, &examples_4_2_bin_dir().join(name), &[&flag])
}

/// The program `name`: an example, or else a `test/simple` program.
fn program(name: &str) -> PathBuf {
    if examples_4_2().join(format!("{name}.c")).exists() {
        example_4_2(name)
    } else {
        simple_test(name)
    }
}

/// What one run printed and how it ended.
struct Run {
    code: Option<i32>,
    output: String,
}

fn run(name: &str, n: u32, library: Library) -> Run {
    let program = program(name);
    let mut cmd = Command::new(pmixrun());
    cmd.args(["-n", &n.to_string(), "--timeout", "60", "--"])
        .arg(&program)
        .current_dir(examples_4_2_bin_dir());
    if library == Library::ThisProject {
        on_our_library(&mut cmd);
    }
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// The example ran to its end at `n`: status 0, and no error from OpenPMIx's library or the
/// program (lines holding `allowed` excepted).
fn passes(name: &str, n: u32, allowed: &[&str]) {
    for library in LIBRARIES {
        passes_on(name, n, allowed, library);
    }
}

fn passes_on(name: &str, n: u32, allowed: &[&str], library: Library) {
    let r = run(name, n, library);
    let errors = error_lines(&r.output, allowed);
    assert!(
        r.code == Some(0) && errors.is_empty(),
        "{name} at n = {n} on {library:?}'s library ended with {:?}, errors {errors:?}\n{}",
        r.code,
        r.output
    );
}

macro_rules! runs_to_its_end {
    ($($test:ident: $name:literal at $($n:literal),+;)*) => {$(
        #[test]
        fn $test() {
            for n in [$($n),+] {
                passes($name, n, &[]);
            }
        }
    )*};
}

runs_to_its_end! {
    hello_queries_and_prints_the_process_sets: "hello" at 2, 4;
    client_puts_commits_fences_and_gets: "client" at 2, 4;
    client2_exchanges_data_arrays: "client2" at 2, 4;
    dmodex_gets_data_on_demand: "dmodex" at 2, 4;
    group_constructs_and_destructs: "group" at 2, 4;
    group_dmodex_reads_members_data_after_a_construct: "group_dmodex" at 2, 4;
    group_lcl_cid_reads_each_members_local_context_id: "group_lcl_cid" at 2, 4;
    asyncgroup_invites_and_fences_by_the_groups_id: "asyncgroup" at 4;
    jctrl_asks_for_job_control: "jctrl" at 2, 4;
    log_logs: "log" at 2, 4;
    pub_publishes_and_looks_up: "pub" at 2, 4;
    pubi_publishes_and_looks_up_info: "pubi" at 2, 4;
    abi_no_init_uses_the_library_without_init: "abi_no_init" at 2, 4;
    abi_with_init_uses_the_library_after_init: "abi_with_init" at 2, 4;
    debuggerd_starts_as_a_debugger_daemon: "debuggerd" at 2, 4;
    tool_attaches_and_queries_the_namespaces: "tool" at 2, 4;
    alloc_rank_0_is_granted_an_allocation: "alloc" at 1;
    doubleget_gets_a_value_twice_around_fences: "doubleget" at 2, 4;
    get_put_example_exchanges_a_value: "get_put_example" at 2, 4;
    hybrid_orders_two_models_handlers_and_completes_the_notification: "hybrid" at 1, 2;
}

#[test]
fn hybrid_runs_the_handler_placed_after_the_first_one() {
    // OpenPMIx's test registers the MPI handler after the OpenMP one, which claimed the
    // chain's first place; the notification walks both, in that order.
    for library in LIBRARIES {
        let r = run("hybrid", 1, library);
        let omp = r.output.find("Entered parallel_region_OMP_cb");
        let mpi = r.output.find("Entered parallel_region_MPI_cb");
        assert!(
            r.code == Some(0) && omp.is_some() && omp < mpi,
            "hybrid on {library:?}'s library: {:?}\n{}",
            r.code,
            r.output
        );
    }
}

#[test]
fn dynamic_spawns_the_client_example_and_connects_to_it() {
    example_4_2("client");
    for n in [2, 4] {
        passes("dynamic", n, &[]);
    }
}

#[test]
fn nodeinfo_reads_the_nodes_but_no_fabric_coordinates_on_one_machine() {
    // One machine has no fabric with coordinates: that Get is PMIX_ERR_NOT_FOUND.
    for n in [2, 4] {
        passes("nodeinfo", n, &["coordinates"]);
    }
}

/// A program whose rank 0 exits with status 1 without finalizing: the launcher reports it and
/// ends the job with its status; where the others wait for the news (`heard`), each of them
/// says `heard` and ends by itself before the launcher would stop it.
fn first_rank_fails(name: &str, n: u32, heard: Option<&str>) {
    for library in LIBRARIES {
        first_rank_fails_on(name, n, heard, library);
    }
}

fn first_rank_fails_on(name: &str, n: u32, heard: Option<&str>, library: Library) {
    let r = run(name, n, library);
    let finished = heard.map_or(n as usize - 1, |h| r.output.matches(h).count());
    assert!(
        r.code == Some(1)
            && r.output
                .contains("exited with status 1 without calling PMIx_Finalize")
            && finished == n as usize - 1,
        "{name} at n = {n} on {library:?}'s library: wanted status 1, the failure reported \
         and {} ranks saying {heard:?}; got {:?} and {finished}\n{}",
        n - 1,
        r.code,
        r.output
    );
}

#[test]
fn fault_ends_when_rank_0_fails_and_the_others_hear_of_it() {
    for n in [2, 4] {
        first_rank_fails("fault", n, Some("PMIx_Finalize successfully completed"));
    }
}

#[test]
fn bad_exit_ends_with_the_failed_ranks_status() {
    // Its other ranks only sleep and finalize: the launcher may stop them first.
    for n in [2, 4] {
        first_rank_fails("bad_exit", n, None);
    }
}
