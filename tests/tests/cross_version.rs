//! The wire between this project and the later OpenPMIx releases, in both directions, as
//! OpenPMIx's own cross-version CI runs it (every server version against every client
//! version). OpenPMIx 4.2.2 is the peer of `interop.rs` and `openpmix_examples.rs`; here:
//!
//! - this crate's server (`pmixrun`, and the project's C host on this library) serving the
//!   clients and tools of OpenPMIx 5.0.9 and 6.1.0: their own examples, compiled against
//!   their headers and running on their own libraries;
//! - this crate's clients (the Rust client check, and this library's C client check) under
//!   5.0.9's and 6.1.0's servers: the project's C host compiled against each release's
//!   headers, on its own library.
//!
//! What a newer peer negotiates and how this crate answers it is in `docs/pmixrun.md`
//! ("Peers of every release"). The conformance pairings (`cargo xtask conformance --pairing
//! ... --library openpmix-6.1`) run the vectors over the same wires.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use std::path::{Path, PathBuf};
use std::process::Command;

use pmix_tests::capi::library_dir;
use pmix_tests::launch::{build_c, build_dir, check, error_lines, pkg_config, pmixrun, root};
use pmix_tests::openpmix::{RELEASES, build_against, example, library_dir as release_lib};

/// The project's C host, compiled against `version`'s headers (OpenPMIx 4.2.2's, Debian's,
/// for `None`) and bound to the library in `lib` by a run path the loader reads before
/// `LD_LIBRARY_PATH` (`DT_RPATH`), so that its clients may load another library through that
/// variable.
fn host_on(version: Option<&str>, lib: &Path, name: &str) -> PathBuf {
    let src = root().join("tests/interop/c/host.c");
    let out = build_dir().join(name);
    let rpath = format!("-Wl,--disable-new-dtags,-rpath,{}", lib.display());
    if let Some(v) = version {
        return build_against(v, &src, &out, &["-Wall", &rpath]);
    }
    // Not through pmix.pc, whose link flags ask for a DT_RUNPATH.
    let fresh = out.with_extension(format!("building-{}", std::process::id()));
    let mut cc = Command::new("cc");
    cc.args(["-Wall", "-O1", "-o"])
        .arg(&fresh)
        .arg(&src)
        .args(pkg_config(&["--cflags"]))
        .arg(format!("-L{}", lib.display()))
        .args(["-lpmix", "-lpthread", &rpath]);
    let o = cc.output().expect("a C compiler (gcc)");
    assert!(
        o.status.success(),
        "building the host: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::rename(&fresh, &out).unwrap();
    out
}

/// `cmd`'s processes load the library in `dir`.
fn on_library(cmd: &mut Command, dir: &Path) {
    cmd.env("LD_LIBRARY_PATH", dir);
}

/// Run an example of `version` on its own library, `n` processes started by `launcher`;
/// it must end with status 0 and print no error (but the lines holding one of `allowed`).
fn example_passes(version: &str, name: &str, n: u32, launcher: &mut Command, allowed: &[&str]) {
    let program = example(version, name);
    launcher
        .args(["-n", &n.to_string(), "--"])
        .arg(&program)
        .current_dir(program.parent().unwrap());
    on_library(launcher, &release_lib(version));
    let out = launcher.output().unwrap();
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let errors = error_lines(&output, allowed);
    assert!(
        out.status.success() && errors.is_empty(),
        "OpenPMIx {version}'s {name} at n = {n} on its own library: {:?}, errors {errors:?}\n\
         {output}",
        out.status
    );
}

/// The examples whose wire this crate's server must serve for every later release.
const EXAMPLES: &[(&str, u32, &[&str])] = &[
    ("client", 2, &[]),
    ("client2", 2, &[]),
    ("client3", 2, &[]),
    ("client4", 2, &[]),
    ("dmodex", 2, &[]),
    ("jctrl", 2, &[]),
    ("log", 2, &[]),
    ("pub", 2, &[]),
    ("hello", 2, &[]),
    ("pubi", 2, &[]),
    ("simple_resolve", 2, &[]),
    ("nodeinfo", 2, &["coordinates"]),
    ("abi_with_init", 2, &[]),
    ("tool", 2, &[]),
];

#[test]
fn clients_and_tools_of_5_0_and_6_1_on_their_own_libraries_run_under_pmixrun() {
    for version in RELEASES {
        for (name, n, allowed) in EXAMPLES {
            let mut cmd = Command::new(pmixrun());
            cmd.args(["--timeout", "60"]);
            example_passes(version, name, *n, &mut cmd, allowed);
        }
    }
}

#[test]
fn clients_of_5_0_and_6_1_run_under_the_c_host_on_this_library() {
    let host = host_on(None, library_dir(), "host-on-pmix-rs");
    for version in RELEASES {
        // The examples that need no more of their host than the C host answers (no query,
        // no job control, no PMIX_LOCAL_PROCS).
        for name in ["client2", "client4", "dmodex", "pub", "simple_resolve"] {
            let mut cmd = Command::new(&host);
            cmd.env("HOST_TIMEOUT", "60");
            example_passes(version, name, 2, &mut cmd, &[]);
        }
    }
}

#[test]
fn an_openpmix_4_2_client_runs_under_the_c_host_on_this_library() {
    // The host registers its node and process maps as PMIX_REGEX values; this library's
    // server once sent them with a second NUL, and OpenPMIx's clients (4.2 to 6.1) read
    // every value after them wrong and crashed.
    let host = host_on(None, library_dir(), "host-on-pmix-rs");
    let client = build_c("client_check");
    let openpmix = PathBuf::from(pkg_config(&["--variable=libdir"]).join(""));
    for n in [1, 2] {
        let mut cmd = Command::new(&host);
        cmd.env("HOST_TIMEOUT", "60")
            .args(["-n", &n.to_string(), "--"])
            .arg(&client);
        on_library(&mut cmd, &openpmix);
        check(
            cmd,
            n,
            "OpenPMIx 4.2's C client under the C host on this library",
        );
    }
}

#[test]
fn this_crates_clients_run_under_the_servers_of_5_0_and_6_1() {
    let rust_client = PathBuf::from(env!("CARGO_BIN_EXE_rust_client_check"));
    let c_client = build_c("client_check");
    for version in RELEASES {
        let host = host_on(
            Some(version),
            &release_lib(version),
            &format!("host-on-openpmix-{version}"),
        );
        for (client, n) in [(&rust_client, 2), (&rust_client, 4), (&c_client, 2)] {
            let mut cmd = Command::new(&host);
            cmd.env("HOST_TIMEOUT", "120")
                .args(["-n", &n.to_string(), "--"])
                .arg(client)
                .args(["--fences", "5"]);
            // The host's run path binds it to the release's library; its C clients load
            // this project's.
            on_library(&mut cmd, library_dir());
            check(
                cmd,
                n,
                &format!("{} under OpenPMIx {version}'s server", client.display()),
            );
        }
    }
}
