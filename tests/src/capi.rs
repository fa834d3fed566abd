//! This project's `libpmix.so.2` (the `capi` crate) for the tests: built by cargo in the
//! tests' own profile and put under the file name the loader looks for, in a folder a test
//! puts first on `LD_LIBRARY_PATH` so that a program linked against OpenPMIx loads it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::missing_panics_doc)] // test helpers fail loudly by design

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::launch::{root, target_dir};

/// The folder holding `libpmix.so.2`, built once per test process (cargo answers at once
/// when it is up to date).
pub fn library_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let target = target_dir();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args(["build", "--quiet", "--package", "pmix-capi", "--target-dir"])
            .arg(target.parent().unwrap())
            .current_dir(root());
        if target.ends_with("release") {
            build.arg("--release");
        }
        let out = build.output().expect("cargo runs");
        assert!(
            out.status.success(),
            "building pmix-capi: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = target.join("capi");
        std::fs::create_dir_all(&dir).unwrap();
        // Copied under a name of this process, then renamed: tests in other processes may
        // be loading the previous copy.
        let fresh = dir.join(format!("libpmix.so.2.{}", std::process::id()));
        std::fs::copy(target.join("libpmix_capi.so"), &fresh).unwrap();
        std::fs::rename(&fresh, dir.join("libpmix.so.2")).unwrap();
        dir
    })
}

/// The library's path.
pub fn library() -> PathBuf {
    library_dir().join("libpmix.so.2")
}

/// Make `cmd` (and the processes it starts) load this library instead of OpenPMIx's.
pub fn on_our_library(cmd: &mut Command) -> &mut Command {
    let mut path = library_dir().as_os_str().to_owned();
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        path.push(":");
        path.push(old);
    }
    cmd.env("LD_LIBRARY_PATH", path)
}
