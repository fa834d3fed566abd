//! OpenPMIx 5.0.9 and 6.1.0, the later releases the project builds as peers (`cargo xtask
//! openpmix`, which `cargo xtask test` runs first): where each is installed, and C programs
//! compiled against its own headers. And OpenPMIx 4.2's examples, from Debian's source
//! package, built against the installed headers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::missing_panics_doc)] // test helpers fail loudly by design

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::launch::{build_c_program, build_dir, outside_holding, run_tool};

/// The releases, as `cargo xtask openpmix` names and installs them.
pub const RELEASES: [&str; 2] = ["5.0.9", "6.1.0"];

/// Where `cargo xtask openpmix` installs `version` (the same rule as its `cache_dir`).
pub fn prefix(version: &str) -> PathBuf {
    let cache = std::env::var_os("PMIX_RS_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("pmix-rs")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/pmix-rs")))
        .expect("HOME is set");
    let prefix = cache.join(format!("openpmix-{version}"));
    assert!(
        prefix.join("pmix-rs-build.txt").exists(),
        "OpenPMIx {version} is not built in {}: `cargo xtask openpmix` builds it (`cargo xtask \
         test` does first)",
        prefix.display()
    );
    prefix
}

/// The release's own `libpmix.so.2`.
pub fn library_dir(version: &str) -> PathBuf {
    prefix(version).join("lib")
}

/// Compile `src` against the headers of OpenPMIx `version` into `out`, linked against its
/// library without a run path: the program loads whichever `libpmix.so.2` comes first on
/// `LD_LIBRARY_PATH` (the release's own, or this project's).
pub fn build_against(version: &str, src: &Path, out: &Path, flags: &[&str]) -> PathBuf {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap();
    let prefix = prefix(version);
    let fresh = out.with_extension(format!("building-{}", std::process::id()));
    let mut cmd = Command::new("cc");
    cmd.args(flags)
        .args(["-O1", "-o"])
        .arg(&fresh)
        .arg(src)
        .arg(format!("-I{}", prefix.join("include").display()))
        .arg(format!("-L{}", prefix.join("lib").display()))
        .args(["-lpmix", "-lpthread"]);
    let o = run_tool(&mut cmd, "a C compiler (gcc)");
    assert!(
        o.status.success(),
        "building {} against OpenPMIx {version}: {}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::rename(&fresh, out).unwrap();
    out.to_path_buf()
}

/// One of the release's own `examples/`, compiled against its headers (once per test
/// process and release).
pub fn example(version: &str, name: &str) -> PathBuf {
    let src = prefix(version)
        .join("examples-src")
        .join(format!("{name}.c"));
    let dir = build_dir().join(format!("openpmix-{version}"));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(name);
    if out.exists() {
        return out;
    }
    build_against(version, &src, &out, &["-w"])
}

/// The examples' folder in OpenPMIx 4.2's source as Debian ships it (fetched by `cargo xtask
/// test`).
pub fn examples_4_2() -> PathBuf {
    outside_holding("debian", "examples/hello.c").join("examples")
}

/// Where the 4.2 examples are built, under their own names (`dynamic` spawns `./client`).
pub fn examples_4_2_bin_dir() -> PathBuf {
    let dir = build_dir().join("openpmix-examples");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Build OpenPMIx 4.2's example `name` as OpenPMIx's own build would (no extra warnings
/// demanded), against the installed headers.
pub fn example_4_2(name: &str) -> PathBuf {
    let src = examples_4_2().join(format!("{name}.c"));
    build_c_program(&src, &examples_4_2_bin_dir().join(name), &[])
}
