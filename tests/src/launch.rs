//! Helpers of the cross-process tests (`tests/tests/`): where the workspace and its built
//! programs are, building the C and MPI peer programs, and running programs under `pmixrun`
//! with a check of what every rank printed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::missing_panics_doc)] // test helpers fail loudly by design

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The workspace's target directory for this profile (where `pmixrun` is built).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap();
    // A test runs from the profile's `deps`, a binary of this crate from the profile's own.
    if dir.ends_with("deps") {
        dir.parent().unwrap().to_path_buf()
    } else {
        dir.to_path_buf()
    }
}

pub fn pmixrun() -> PathBuf {
    let p = target_dir().join("pmixrun");
    assert!(
        p.exists(),
        "{} is missing: build it with `cargo build -p pmix --bins`",
        p.display()
    );
    p
}

pub fn run_tool(cmd: &mut Command, package: &str) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?} ({e}): install {package}"))
}

/// Where the peer programs are built, once per test process.
pub fn build_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = target_dir().join("interop");
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

pub fn pkg_config(args: &[&str]) -> Vec<String> {
    let out = run_tool(
        Command::new("pkg-config").args(args).arg("pmix"),
        "pkg-config libpmix-dev",
    );
    assert!(
        out.status.success(),
        "pkg-config pmix failed: install libpmix-dev"
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Compile a C peer against OpenPMIx (once per process).
pub fn build_c(name: &str) -> PathBuf {
    let src = root().join(format!("tests/interop/c/{name}.c"));
    let out = build_dir().join(name);
    build_c_program(&src, &out, &["-Wall", "-Wextra", "-Werror"])
}

/// Compile the C program `src` against OpenPMIx into `out` (with `flags`). Tests run in
/// processes of their own and may build the same program while another runs it: the
/// compiler writes a file of this process, which then replaces `out` in one rename (a
/// running copy keeps its own file).
pub fn build_c_program(src: &Path, out: &Path, flags: &[&str]) -> PathBuf {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap();
    let name = out.display();
    let fresh = out.with_extension(format!("building-{}", std::process::id()));
    let libdir = pkg_config(&["--variable=libdir"]).join("");
    let mut cmd = Command::new("cc");
    cmd.args(flags)
        .args(["-O1", "-o"])
        .arg(&fresh)
        .arg(src)
        .args(pkg_config(&["--cflags", "--libs"]))
        .arg(format!("-Wl,-rpath,{libdir}"))
        .arg("-lpthread");
    let o = run_tool(&mut cmd, "a C compiler (gcc) and libpmix-dev");
    assert!(
        o.status.success(),
        "building {name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::rename(&fresh, out).unwrap();
    out.to_path_buf()
}

/// A program or test suite from outside the project, which `cargo xtask test` fetches into
/// `target/outside/` (never committed): `relative` below that folder.
pub fn outside(relative: &str) -> PathBuf {
    let path = target_dir().join("../outside").join(relative);
    assert!(
        path.exists(),
        "{} is missing: `cargo xtask test` fetches it (as root it also adds the deb-src \
         entry `apt-get source` needs)",
        path.display()
    );
    path
}

/// The folder under [`outside`]`(relative)` that holds `inside`: a fetched source's own
/// folder, whose name carries its version (`pmix-4.2.2`, `mpi4py-3.1.4`).
pub fn outside_holding(relative: &str, inside: &str) -> PathBuf {
    let dir = outside(relative);
    std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.join(inside).exists())
        .unwrap_or_else(|| panic!("no folder holding {inside} in {}", dir.display()))
}

pub fn build_mpi(name: &str) -> PathBuf {
    let out = build_dir().join(name);
    let src = root().join(format!("tests/interop/mpi/{name}.c"));
    // As `build_c_program`: another test may be running `out`.
    let fresh = out.with_extension(format!("building-{}", std::process::id()));
    let o = run_tool(
        Command::new("mpicc").arg("-o").arg(&fresh).arg(&src),
        "libopenmpi-dev",
    );
    assert!(
        o.status.success(),
        "building {name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::rename(&fresh, &out).unwrap();
    out
}

/// Run a launcher command and check every rank passed.
pub fn check(cmd: Command, n: u32, what: &str) {
    check_says(cmd, n, what, None);
}

/// Like [`check`], and the output must also hold the line `says` (a check's own verdict).
pub fn check_says(mut cmd: Command, n: u32, what: &str, says: Option<&str>) {
    cmd.env("CHECK_EXPECTED_SIZE", n.to_string())
        // Open MPI refuses to run as root unless told it is fine (CI runs as root).
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    let out = cmd.output().unwrap();
    assert_passed(&out, n, what, says);
}

/// The lines of an example's output that report an error (`error` or `fail`, in any case),
/// but those holding one of `allowed` (what the example itself says is an expected refusal).
pub fn error_lines<'a>(output: &'a str, allowed: &[&str]) -> Vec<&'a str> {
    output
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains("fail")
        })
        .filter(|l| !allowed.iter().any(|a| l.contains(a)))
        .collect()
}

/// A launcher's run passed: it succeeded, no rank printed a `FAIL` line, and its output holds
/// the line `says` if given.
pub fn assert_passed(out: &std::process::Output, n: u32, what: &str, says: Option<&str>) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success()
            && !stdout.contains("FAIL")
            && says.is_none_or(|line| stdout.contains(line)),
        "{what} with N={n} failed ({:?})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
}

pub fn under_pmixrun(n: u32, program: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(pmixrun());
    cmd.args(["-n", &n.to_string(), "--timeout", "120", "--"])
        .arg(program)
        .args(args);
    cmd
}
