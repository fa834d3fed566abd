//! This project's `libpmix.so.2` (issue 32): it exports OpenPMIx 4.2.2's functions under
//! its SONAME, lays its structs out as OpenPMIx's headers do, and real C programs compiled
//! against OpenPMIx's headers run on it unchanged (the project's C interop programs under
//! `pmixrun`, with the library's folder first on `LD_LIBRARY_PATH`), and Open MPI's own
//! `mpirun` hosts its server.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use std::collections::{BTreeMap, BTreeSet};
use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::{Command, Stdio};

use pmix_capi::types::{
    CApp, CByteObject, CCoord, CDataArray, CDataBuffer, CDevice, CDeviceDistance, CDiskStats,
    CEndpoint, CEnvar, CFabric, CGeometry, CInfo, CNetStats, CNodePid, CNodeStats, CPdata, CProc,
    CProcInfo, CProcStats, CQuery, CRegattr, CResourceUnit, CServerModule, CSourced, CValue,
};
use pmix_tests::capi::{library, on_our_library};
use pmix_tests::launch::{
    assert_passed, build_c, build_c_program, build_dir, build_mpi, check, check_says, pmixrun,
    root, under_pmixrun,
};
use pmix_tests::openpmix::build_against;

fn tool_output(program: &str, args: &[&str], file: &Path) -> String {
    let out = Command::new(program)
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} ({e}): install binutils"));
    assert!(out.status.success(), "{program} failed: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_function_of_openpmix_4_2_5_0_and_6_1_is_exported_and_no_other() {
    // The union: a program built against any of the three releases' headers loads this
    // library (capi/abi/README.md says how each list was read off the release's library).
    let mut expected = BTreeSet::new();
    for (release, count) in [("4.2.2", 141), ("5.0.9", 289), ("6.1.0", 300)] {
        let path = root().join(format!("capi/abi/openpmix-{release}_PMIx_symbols.txt"));
        let listed = std::fs::read_to_string(path).unwrap();
        let names: Vec<String> = listed
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        assert_eq!(names.len(), count, "OpenPMIx {release}'s list");
        expected.extend(names);
    }
    assert_eq!(expected.len(), 316);
    let nm = tool_output("nm", &["-D", "--defined-only"], &library());
    let exported: BTreeSet<String> = nm
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|s| s.starts_with("PMIx_"))
        .map(String::from)
        .collect();
    let missing: Vec<_> = expected.difference(&exported).collect();
    let extra: Vec<_> = exported.difference(&expected).collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
    assert!(extra.is_empty(), "exported, and not OpenPMIx's: {extra:?}");
}

#[test]
fn the_soname_is_libpmix_so_2() {
    let dynamic = tool_output("readelf", &["-d"], &library());
    assert!(
        dynamic
            .lines()
            .any(|l| l.contains("(SONAME)") && l.contains("[libpmix.so.2]")),
        "no SONAME libpmix.so.2 in:\n{dynamic}"
    );
}

/// Each struct's size and field offsets, as the C compiler reads OpenPMIx's headers, against
/// the library's `repr(C)` declarations.
#[test]
fn the_structs_are_laid_out_as_openpmix_headers_say() {
    // (C type, field or "" for the size, the library's number)
    let ours: &[(&str, &str, usize)] = &[
        ("pmix_proc_t", "", size_of::<CProc>()),
        ("pmix_proc_t", "rank", offset_of!(CProc, rank)),
        ("pmix_byte_object_t", "", size_of::<CByteObject>()),
        ("pmix_byte_object_t", "size", offset_of!(CByteObject, size)),
        ("pmix_envar_t", "", size_of::<CEnvar>()),
        ("pmix_envar_t", "value", offset_of!(CEnvar, value)),
        ("pmix_envar_t", "separator", offset_of!(CEnvar, separator)),
        ("pmix_data_array_t", "", size_of::<CDataArray>()),
        ("pmix_data_array_t", "size", offset_of!(CDataArray, size)),
        ("pmix_data_array_t", "array", offset_of!(CDataArray, array)),
        ("pmix_value_t", "", size_of::<CValue>()),
        ("pmix_value_t", "data", offset_of!(CValue, data)),
        ("pmix_info_t", "", size_of::<CInfo>()),
        ("pmix_info_t", "flags", offset_of!(CInfo, flags)),
        ("pmix_info_t", "value", offset_of!(CInfo, value)),
        ("pmix_pdata_t", "", size_of::<CPdata>()),
        ("pmix_pdata_t", "key", offset_of!(CPdata, key)),
        ("pmix_pdata_t", "value", offset_of!(CPdata, value)),
        ("pmix_app_t", "", size_of::<CApp>()),
        ("pmix_app_t", "argv", offset_of!(CApp, argv)),
        ("pmix_app_t", "env", offset_of!(CApp, env)),
        ("pmix_app_t", "cwd", offset_of!(CApp, cwd)),
        ("pmix_app_t", "maxprocs", offset_of!(CApp, maxprocs)),
        ("pmix_app_t", "info", offset_of!(CApp, info)),
        ("pmix_app_t", "ninfo", offset_of!(CApp, ninfo)),
        ("pmix_query_t", "", size_of::<CQuery>()),
        ("pmix_query_t", "qualifiers", offset_of!(CQuery, qualifiers)),
        ("pmix_query_t", "nqual", offset_of!(CQuery, nqual)),
        ("pmix_proc_info_t", "", size_of::<CProcInfo>()),
        (
            "pmix_proc_info_t",
            "hostname",
            offset_of!(CProcInfo, hostname),
        ),
        (
            "pmix_proc_info_t",
            "executable_name",
            offset_of!(CProcInfo, executable_name),
        ),
        ("pmix_proc_info_t", "pid", offset_of!(CProcInfo, pid)),
        (
            "pmix_proc_info_t",
            "exit_code",
            offset_of!(CProcInfo, exit_code),
        ),
        ("pmix_proc_info_t", "state", offset_of!(CProcInfo, state)),
        ("pmix_data_buffer_t", "", size_of::<CDataBuffer>()),
        (
            "pmix_data_buffer_t",
            "pack_ptr",
            offset_of!(CDataBuffer, pack_ptr),
        ),
        (
            "pmix_data_buffer_t",
            "unpack_ptr",
            offset_of!(CDataBuffer, unpack_ptr),
        ),
        (
            "pmix_data_buffer_t",
            "bytes_allocated",
            offset_of!(CDataBuffer, bytes_allocated),
        ),
        (
            "pmix_data_buffer_t",
            "bytes_used",
            offset_of!(CDataBuffer, bytes_used),
        ),
        ("pmix_fabric_t", "", size_of::<CFabric>()),
        ("pmix_fabric_t", "index", offset_of!(CFabric, index)),
        ("pmix_fabric_t", "info", offset_of!(CFabric, info)),
        ("pmix_fabric_t", "ninfo", offset_of!(CFabric, ninfo)),
        ("pmix_fabric_t", "module", offset_of!(CFabric, module)),
        ("pmix_cpuset_t", "", size_of::<CSourced>()),
        ("pmix_cpuset_t", "bitmap", offset_of!(CSourced, object)),
        ("pmix_topology_t", "", size_of::<CSourced>()),
        ("pmix_topology_t", "topology", offset_of!(CSourced, object)),
        ("pmix_coord_t", "", size_of::<CCoord>()),
        ("pmix_coord_t", "coord", offset_of!(CCoord, coord)),
        ("pmix_coord_t", "dims", offset_of!(CCoord, dims)),
        ("pmix_geometry_t", "", size_of::<CGeometry>()),
        ("pmix_geometry_t", "uuid", offset_of!(CGeometry, uuid)),
        ("pmix_geometry_t", "osname", offset_of!(CGeometry, osname)),
        (
            "pmix_geometry_t",
            "coordinates",
            offset_of!(CGeometry, coordinates),
        ),
        ("pmix_geometry_t", "ncoords", offset_of!(CGeometry, ncoords)),
        ("pmix_device_distance_t", "", size_of::<CDeviceDistance>()),
        (
            "pmix_device_distance_t",
            "osname",
            offset_of!(CDeviceDistance, osname),
        ),
        (
            "pmix_device_distance_t",
            "type",
            offset_of!(CDeviceDistance, type_),
        ),
        (
            "pmix_device_distance_t",
            "mindist",
            offset_of!(CDeviceDistance, mindist),
        ),
        (
            "pmix_device_distance_t",
            "maxdist",
            offset_of!(CDeviceDistance, maxdist),
        ),
        ("pmix_endpoint_t", "", size_of::<CEndpoint>()),
        ("pmix_endpoint_t", "osname", offset_of!(CEndpoint, osname)),
        ("pmix_endpoint_t", "endpt", offset_of!(CEndpoint, endpt)),
        ("pmix_regattr_t", "", size_of::<CRegattr>()),
        ("pmix_regattr_t", "string", offset_of!(CRegattr, string)),
        ("pmix_regattr_t", "type", offset_of!(CRegattr, type_)),
        (
            "pmix_regattr_t",
            "description",
            offset_of!(CRegattr, description),
        ),
        ("pmix_proc_stats_t", "", size_of::<CProcStats>()),
        ("pmix_proc_stats_t", "proc", offset_of!(CProcStats, proc)),
        ("pmix_proc_stats_t", "pid", offset_of!(CProcStats, pid)),
        ("pmix_proc_stats_t", "cmd", offset_of!(CProcStats, cmd)),
        ("pmix_proc_stats_t", "state", offset_of!(CProcStats, state)),
        ("pmix_proc_stats_t", "time", offset_of!(CProcStats, time)),
        (
            "pmix_proc_stats_t",
            "percent_cpu",
            offset_of!(CProcStats, percent_cpu),
        ),
        (
            "pmix_proc_stats_t",
            "priority",
            offset_of!(CProcStats, priority),
        ),
        (
            "pmix_proc_stats_t",
            "num_threads",
            offset_of!(CProcStats, num_threads),
        ),
        ("pmix_proc_stats_t", "pss", offset_of!(CProcStats, pss)),
        ("pmix_proc_stats_t", "vsize", offset_of!(CProcStats, vsize)),
        ("pmix_proc_stats_t", "rss", offset_of!(CProcStats, rss)),
        (
            "pmix_proc_stats_t",
            "peak_vsize",
            offset_of!(CProcStats, peak_vsize),
        ),
        (
            "pmix_proc_stats_t",
            "processor",
            offset_of!(CProcStats, processor),
        ),
        (
            "pmix_proc_stats_t",
            "sample_time",
            offset_of!(CProcStats, sample_time),
        ),
        ("pmix_disk_stats_t", "", size_of::<CDiskStats>()),
        (
            "pmix_disk_stats_t",
            "num_reads_completed",
            offset_of!(CDiskStats, num_reads_completed),
        ),
        (
            "pmix_disk_stats_t",
            "milliseconds_reading",
            offset_of!(CDiskStats, milliseconds_reading),
        ),
        (
            "pmix_disk_stats_t",
            "num_ios_in_progress",
            offset_of!(CDiskStats, num_ios_in_progress),
        ),
        (
            "pmix_disk_stats_t",
            "weighted_milliseconds_io",
            offset_of!(CDiskStats, weighted_milliseconds_io),
        ),
        ("pmix_net_stats_t", "", size_of::<CNetStats>()),
        (
            "pmix_net_stats_t",
            "num_bytes_recvd",
            offset_of!(CNetStats, num_bytes_recvd),
        ),
        (
            "pmix_net_stats_t",
            "num_bytes_sent",
            offset_of!(CNetStats, num_bytes_sent),
        ),
        (
            "pmix_net_stats_t",
            "num_send_errs",
            offset_of!(CNetStats, num_send_errs),
        ),
        ("pmix_node_stats_t", "", size_of::<CNodeStats>()),
        ("pmix_node_stats_t", "la", offset_of!(CNodeStats, la)),
        ("pmix_node_stats_t", "la15", offset_of!(CNodeStats, la15)),
        (
            "pmix_node_stats_t",
            "total_mem",
            offset_of!(CNodeStats, total_mem),
        ),
        (
            "pmix_node_stats_t",
            "mapped",
            offset_of!(CNodeStats, mapped),
        ),
        (
            "pmix_node_stats_t",
            "sample_time",
            offset_of!(CNodeStats, sample_time),
        ),
        (
            "pmix_node_stats_t",
            "diskstats",
            offset_of!(CNodeStats, diskstats),
        ),
        (
            "pmix_node_stats_t",
            "ndiskstats",
            offset_of!(CNodeStats, ndiskstats),
        ),
        (
            "pmix_node_stats_t",
            "netstats",
            offset_of!(CNodeStats, netstats),
        ),
        (
            "pmix_node_stats_t",
            "nnetstats",
            offset_of!(CNodeStats, nnetstats),
        ),
        // The host's upcalls: a slot out of place calls the wrong function.
        ("pmix_server_module_t", "", size_of::<CServerModule>()),
        (
            "pmix_server_module_t",
            "fence_nb",
            offset_of!(CServerModule, fence_nb),
        ),
        (
            "pmix_server_module_t",
            "listener",
            offset_of!(CServerModule, listener),
        ),
        (
            "pmix_server_module_t",
            "tool_connected",
            offset_of!(CServerModule, tool_connected),
        ),
        (
            "pmix_server_module_t",
            "iof_pull",
            offset_of!(CServerModule, iof_pull),
        ),
        (
            "pmix_server_module_t",
            "client_connected2",
            offset_of!(CServerModule, client_connected2),
        ),
    ];
    let exe = layouts_program(ours, "capi_layouts", |src, out| {
        build_c_program(src, out, &["-Wall"])
    });
    assert_laid_out_as(ours, Command::new(&exe));
}

/// A C program printing, for each of `ours`, the compiler's size or offset, built from its
/// source `name.c` by `build` (against one release's headers or another's).
fn layouts_program(
    ours: &[(&str, &str, usize)],
    name: &str,
    build: impl FnOnce(&Path, &Path) -> std::path::PathBuf,
) -> std::path::PathBuf {
    let mut c = String::from(
        "#include <pmix_server.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void) {\n",
    );
    for (ty, field, _) in ours {
        if field.is_empty() {
            c += &format!("    printf(\"{ty} . %zu\\n\", sizeof({ty}));\n");
        } else {
            c += &format!("    printf(\"{ty} {field} %zu\\n\", offsetof({ty}, {field}));\n");
        }
    }
    c += "    return 0;\n}\n";
    let src = build_dir().join(format!("{name}.c"));
    std::fs::write(&src, c).unwrap();
    build(&src, &build_dir().join(name))
}

/// The numbers `program` prints (of [`layouts_program`]) are the library's, `ours`.
fn assert_laid_out_as(ours: &[(&str, &str, usize)], mut program: Command) {
    let out = program.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let theirs: BTreeMap<(String, String), usize> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            let (ty, field, n) = (w.next().unwrap(), w.next().unwrap(), w.next().unwrap());
            let field = if field == "." { "" } else { field };
            ((ty.to_owned(), field.to_owned()), n.parse().unwrap())
        })
        .collect();
    assert_eq!(theirs.len(), ours.len());
    for (ty, field, n) in ours {
        assert_eq!(
            theirs[&((*ty).to_owned(), (*field).to_owned())],
            *n,
            "{ty} {}",
            if field.is_empty() { "size" } else { field }
        );
    }
}

/// The structs OpenPMIx 6.1's headers add, and those every release shares that its new
/// functions take, as the C compiler reads 6.1.0's headers (the 4.2 layouts are checked
/// above; `ctypes/` keeps one definition for all three releases).
#[test]
fn the_structs_are_laid_out_as_openpmix_6_1_headers_say() {
    let ours: &[(&str, &str, usize)] = &[
        ("pmix_value_t", "", size_of::<CValue>()),
        ("pmix_value_t", "data", offset_of!(CValue, data)),
        ("pmix_info_t", "", size_of::<CInfo>()),
        ("pmix_info_t", "value", offset_of!(CInfo, value)),
        ("pmix_proc_t", "", size_of::<CProc>()),
        ("pmix_pdata_t", "", size_of::<CPdata>()),
        ("pmix_app_t", "", size_of::<CApp>()),
        ("pmix_query_t", "", size_of::<CQuery>()),
        ("pmix_regattr_t", "", size_of::<CRegattr>()),
        ("pmix_envar_t", "", size_of::<CEnvar>()),
        ("pmix_coord_t", "", size_of::<CCoord>()),
        ("pmix_geometry_t", "", size_of::<CGeometry>()),
        ("pmix_endpoint_t", "", size_of::<CEndpoint>()),
        ("pmix_device_distance_t", "", size_of::<CDeviceDistance>()),
        ("pmix_data_buffer_t", "", size_of::<CDataBuffer>()),
        ("pmix_fabric_t", "", size_of::<CFabric>()),
        ("pmix_device_t", "", size_of::<CDevice>()),
        ("pmix_device_t", "osname", offset_of!(CDevice, osname)),
        ("pmix_device_t", "type", offset_of!(CDevice, type_)),
        ("pmix_resource_unit_t", "", size_of::<CResourceUnit>()),
        (
            "pmix_resource_unit_t",
            "count",
            offset_of!(CResourceUnit, count),
        ),
        ("pmix_node_pid_t", "", size_of::<CNodePid>()),
        ("pmix_node_pid_t", "nodeid", offset_of!(CNodePid, nodeid)),
        ("pmix_node_pid_t", "pid", offset_of!(CNodePid, pid)),
    ];
    let exe = layouts_program(ours, "capi_layouts_6_1", |src, out| {
        build_against("6.1.0", src, out, &["-Wall"])
    });
    let mut run = Command::new(&exe);
    run.env(
        "LD_LIBRARY_PATH",
        pmix_tests::openpmix::library_dir("6.1.0"),
    );
    assert_laid_out_as(ours, run);
}

/// The loader of a program under `LD_LIBRARY_PATH` resolves `libpmix.so.2` to this library.
fn loads_our_library(program: &Path) {
    let mut ldd = Command::new("ldd");
    ldd.arg(program);
    let out = on_our_library(&mut ldd).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("libpmix.so.2"))
        .unwrap_or_else(|| panic!("{} does not link libpmix.so.2:\n{text}", program.display()));
    assert!(
        line.contains(library().to_str().unwrap()),
        "libpmix.so.2 resolves elsewhere: {line}"
    );
}

#[test]
fn the_openpmix_c_client_runs_on_this_library_under_pmixrun() {
    let client = build_c("client_check");
    loads_our_library(&client);
    for n in [1, 2, 4] {
        let mut cmd = under_pmixrun(n, &client, &["--fences", "5"]);
        on_our_library(&mut cmd);
        check(
            cmd,
            n,
            "C client on this project's libpmix.so.2 under pmixrun",
        );
    }
}

#[test]
fn two_runtimes_in_a_c_process_hear_each_others_programming_model() {
    // PMIx_Init twice, with two models: each handler for PMIX_MODEL_DECLARED hears every
    // declaration, those made before it was registered included (tests/interop/c/model_check.c).
    let client = build_c("model_check");
    let mut cmd = under_pmixrun(2, &client, &[]);
    on_our_library(&mut cmd);
    let says = Some("ok both-declarations MPI,OpenMP");
    check_says(cmd, 2, "C model declarations on this library", says);
}

#[test]
fn the_c_benchmark_client_runs_on_this_library_under_pmixrun() {
    let client = build_c("bench_client");
    let mut cmd = under_pmixrun(2, &client, &["20"]);
    on_our_library(&mut cmd);
    check(cmd, 2, "C benchmark client on this project's libpmix.so.2");
}

#[test]
fn python3_pmix_clients_run_on_this_library_under_pmixrun() {
    // python3-pmix's Cython module links libpmix.so.2: the loader gives it this library.
    let python = Path::new("/usr/bin/python3");
    for (script, n, says) in [
        ("client_check", 2, None),
        (
            "event_check",
            3,
            Some("ok events 2 terminations and hello=True"),
        ),
        ("query_check", 3, None),
        ("group_check", 4, None),
    ] {
        let mut cmd = under_pmixrun(n, python, &[]);
        cmd.arg(root().join(format!("tests/interop/python/{script}.py")));
        on_our_library(&mut cmd);
        check_says(
            cmd,
            n,
            &format!("python3-pmix {script} on this library"),
            says,
        );
    }
}

#[test]
fn a_python3_pmix_tool_pushes_input_to_a_rank_of_pmixrun_on_this_library() {
    // Rank 1 reads the launcher's input (`--stdin 1`), which stays open and empty: what it
    // reads is what rank 0, as a tool, pushes (tests/interop/python/stdin_check.py).
    // OpenPMIx 4.2's blocking PMIx_IOF_push frees the record its caller waits on when the
    // answer comes, so the same script hangs on OpenPMIx's library: this library's only.
    let script = root().join("tests/interop/python/stdin_check.py");
    let mut cmd = Command::new(pmixrun());
    cmd.args(["-n", "2", "--stdin", "1", "--timeout", "120", "--"])
        .arg("/usr/bin/python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    on_our_library(&mut cmd);
    let mut launcher = cmd.spawn().unwrap();
    let held_open = launcher.stdin.take();
    let out = launcher.wait_with_output().unwrap();
    drop(held_open);
    let what = "python3-pmix tool pushing input on this library";
    assert_passed(&out, 2, what, Some("ok stdin-read 'pushed!\\n'"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok iof-push"));
}

#[test]
fn with_pmix_rs_strict_python3_pmix_queries_get_the_standards_form() {
    // PMIX_RS_STRICT=1 turns off the flat answers OpenPMIx 4.2 gives (docs/capi.md): one
    // PMIX_QUERY_RESULTS per query reaches the binding, and what they hold is checked.
    let mut cmd = under_pmixrun(2, Path::new("/usr/bin/python3"), &[]);
    cmd.arg(root().join("tests/interop/python/query_check.py"))
        .arg("standard")
        .env("PMIX_RS_STRICT", "1");
    on_our_library(&mut cmd);
    let says = Some("ok standard form: 2 PMIX_QUERY_RESULTS");
    check_says(
        cmd,
        2,
        "python3-pmix queries, strict, on this library",
        says,
    );
}

#[test]
fn tools_on_this_library_attach_to_pmixrun_by_uri_and_by_pid() {
    // Each rank forgets it is a client and connects again as a self-started tool, which
    // the server gives an identifier: the project's C tool and python3-pmix's PMIxTool.
    let c_tool = build_c("tool_check");
    let script = root().join("tests/interop/python/tool_check.py");
    for mode in ["uri", "pid"] {
        let mut cmd = under_pmixrun(2, &c_tool, &[mode]);
        on_our_library(&mut cmd);
        check(cmd, 2, &format!("C tool on this library, by {mode}"));
        let mut cmd = under_pmixrun(2, Path::new("/usr/bin/python3"), &[]);
        cmd.arg(&script).arg(mode);
        on_our_library(&mut cmd);
        let says = Some("ok tool-finalize");
        check_says(
            cmd,
            2,
            &format!("python3-pmix tool on this library, by {mode}"),
            says,
        );
    }
}

#[test]
fn a_python3_pmix_tool_pulls_a_jobs_output_on_this_library() {
    // The output pmixrun relays reaches the tool's pull through this library's client side.
    let mut cmd = under_pmixrun(2, Path::new("/usr/bin/python3"), &[]);
    cmd.arg(root().join("tests/interop/python/iof_check.py"));
    on_our_library(&mut cmd);
    let says = Some("ok iof-output");
    check_says(
        cmd,
        2,
        "python3-pmix tool pulling output on this library",
        says,
    );
}

#[test]
fn a_python3_pmix_host_serves_its_clients_on_this_library() {
    // The host's server and its two clients all load this library through the binding.
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg(root().join("tests/interop/python/server_check.py"));
    on_our_library(&mut cmd);
    let says = Some("ok host-init pmix-rs");
    check_says(cmd, 2, "python3-pmix host on this library", says);
}

#[test]
fn an_open_mpi_program_runs_on_this_library_under_pmixrun() {
    // Open MPI 4.1's PMIx component (mca_pmix_ext3x) links libpmix.so.2.
    let ring = build_mpi("ring");
    let mut cmd = under_pmixrun(4, &ring, &[]);
    on_our_library(&mut cmd);
    check(cmd, 4, "Open MPI ring on this project's libpmix.so.2");
}

#[test]
fn an_open_mpi_program_runs_on_this_library_under_open_mpis_mpirun() {
    // mpirun's ORTE embeds this library's server through the C server API (server init,
    // registrations, setup_fork, its own event handler and stored values), and each rank is
    // this library's client. The loader's trace shows which libpmix.so.2 each process runs.
    let ring = build_mpi("ring");
    let mut cmd = Command::new("mpirun");
    cmd.args(["--oversubscribe", "--timeout", "120", "-n", "4"])
        .arg(&ring)
        .env("LD_DEBUG", "files")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("CHECK_EXPECTED_SIZE", "4");
    on_our_library(&mut cmd);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ours = format!("calling init: {}", library().display());
    let loaded = stderr.lines().filter(|l| l.ends_with(&ours)).count();
    let ranks = stdout
        .lines()
        .filter(|l| l.starts_with("ok mpi rank"))
        .count();
    assert!(
        out.status.success() && !stdout.contains("FAIL") && ranks == 4 && loaded == 5,
        "Open MPI ring under mpirun on this library: {:?}, {ranks} ranks ok, {loaded} of 5 \
         processes on this library\n--- stdout\n{stdout}\n--- stderr (loader lines left out)\n{}",
        out.status,
        stderr
            .lines()
            .filter(|l| !l
                .trim_start()
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit()))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn two_mpirun_jobs_meet_through_ompi_server_with_this_library_as_their_server() {
    // MPI_Publish_name, MPI_Lookup_name, accept/connect and disconnect between two jobs,
    // each mpirun's ORTE hosting this library's server, the names kept by ompi-server. The
    // disconnect is a fence across both jobs, whose data OpenPMIx's server gives the host
    // (ORTE frees it): both mpiruns crashed on free() before this library gave it too.
    let program = build_mpi("connect_check");
    let dir = build_dir().join(format!("ompi-server-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let uri = dir.join("uri");
    let mut server = Command::new("ompi-server")
        .args(["--no-daemonize", "--report-uri"])
        .arg(&uri)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .spawn()
        .expect("ompi-server runs (openmpi-bin)");
    let reported = (0..600).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        std::fs::read_to_string(&uri).is_ok_and(|s| {
            s.trim_end()
                .ends_with(|c: char| c.is_ascii_digit() || c == ']')
        })
    });
    let job = |side: &str| {
        let mut cmd = Command::new("mpirun");
        cmd.args(["--timeout", "120", "--ompi-server"])
            .arg(format!("file:{}", uri.display()))
            .args(["-n", "1"])
            .arg(&program)
            .arg(side)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        on_our_library(&mut cmd);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.spawn().unwrap()
    };
    let outcome = if reported {
        let accept = job("accept");
        let connect = job("connect");
        Some((
            accept.wait_with_output().unwrap(),
            connect.wait_with_output().unwrap(),
        ))
    } else {
        None
    };
    let _ = server.kill();
    let _ = server.wait();
    let (accept, connect) = outcome.expect("ompi-server reported its URI");
    for (side, out) in [("accept", &accept), ("connect", &connect)] {
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("ok {side}")),
            "the {side} job on this library: {:?}\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_c_programs_run_clean_under_valgrind_on_this_library() {
    // memcheck over both sides of the C API: the C client (each rank under valgrind, under
    // pmixrun) and the C host embedding this library's server, with its C clients. Any
    // memory error or definite leak ends valgrind with status 99, which fails the run.
    const MEMCHECK: [&str; 4] = [
        "-q",
        "--leak-check=full",
        "--errors-for-leak-kinds=definite",
        "--error-exitcode=99",
    ];
    let client = build_c("client_check");
    let mut cmd = under_pmixrun(2, Path::new("valgrind"), &MEMCHECK);
    cmd.arg(&client);
    on_our_library(&mut cmd);
    check(cmd, 2, "the C client under valgrind on this library");
    let host = build_c("host");
    let mut cmd = Command::new("valgrind");
    cmd.args(MEMCHECK)
        .arg(&host)
        .args(["-n", "2", "--"])
        .arg(&client)
        .env("HOST_TIMEOUT", "120");
    on_our_library(&mut cmd);
    check(cmd, 2, "the C host under valgrind on this library");
}

#[test]
fn the_c_host_embeds_this_librarys_server_for_c_and_rust_clients() {
    // host.c embeds the server through PMIx_server_init and answers its upcalls (fence,
    // publish, lookup, …); on this library, its clients are this library's too.
    let host = build_c("host");
    let c_client = build_c("client_check");
    let rust_client = std::path::PathBuf::from(env!("CARGO_BIN_EXE_rust_client_check"));
    for (client, n) in [(&c_client, 1), (&c_client, 4), (&rust_client, 4)] {
        let mut cmd = Command::new(&host);
        cmd.env("HOST_TIMEOUT", "120")
            .args(["-n", &n.to_string(), "--"])
            .arg(client)
            .args(["--fences", "10"]);
        on_our_library(&mut cmd);
        check(cmd, n, "the C host on this project's libpmix.so.2");
    }
}

#[test]
fn strings_in_another_encoding_cross_byte_for_byte_between_both_libraries() {
    // Each rank puts Latin-1 and bytes no UTF-8 reader accepts, short and long (OpenPMIx's
    // client compresses the long one), and a PMIX_ENVAR of such bytes, and gets every rank's
    // back; both servers, with each library's clients and with one rank on each library.
    // Each rank also packs and unpacks a pmix_app_t of such strings.
    let program = build_c("bytes_check");
    let ours = pmix_tests::capi::library_dir().to_str().unwrap().to_owned();
    for server in ["pmixrun", "the OpenPMIx host"] {
        for (clients, ranks) in [
            ("OpenPMIx's", "none"),
            ("this library's", "0|1"),
            ("mixed", "1"),
        ] {
            // The ranks listed load this library; the others OpenPMIx's.
            let wrapper = format!(
                "case \"$PMIX_RANK\" in ({ranks}) export LD_LIBRARY_PATH={ours};; esac; \
                 exec \"$0\""
            );
            let mut cmd = if server == "pmixrun" {
                let mut cmd = Command::new(pmixrun());
                cmd.args(["-n", "2", "--timeout", "120", "--"]);
                cmd
            } else {
                let mut cmd = Command::new(build_c("host"));
                cmd.env("HOST_TIMEOUT", "120").args(["-n", "2", "--"]);
                cmd
            };
            cmd.args(["sh", "-c", &wrapper]).arg(&program);
            let what = format!("{clients} clients under {server}");
            let out = cmd.output().unwrap();
            let says = "ok get bytes.long of rank 1: 6000 bytes as put";
            assert_passed(&out, 2, &what, Some(says));
            let stdout = String::from_utf8_lossy(&out.stdout);
            let on = |lib: &str| stdout.lines().filter(|l| l.contains(lib)).count();
            assert_eq!(
                (
                    on("ok get bytes.envar of rank 1: name and value as put"),
                    on("ok app pack and unpack keep its strings' bytes")
                ),
                (2, 2),
                "{what}: the structs' strings\n{stdout}"
            );
            let on_ours = ranks
                .split('|')
                .filter(|r| r.parse::<u32>().is_ok())
                .count();
            assert_eq!(
                (on("runs on pmix-rs"), on("runs on OpenPMIx")),
                (on_ours, 2 - on_ours),
                "{what}: the ranks did not load the libraries meant\n{stdout}"
            );
        }
    }
}
