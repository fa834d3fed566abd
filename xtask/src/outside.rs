//! Programs and test suites from outside the project that the tests run, fetched at test time
//! into `target/outside/` and never committed (DESIGN §9):
//!
//! - `debian/pmix-*/`: OpenPMIx's source as Debian ships it (`apt-get source pmix`), for its
//!   `examples/`;
//! - `mpi4py/mpi4py-<version>/`: mpi4py's own test suite, from the source release (PyPI) of
//!   the version of Debian's `python3-mpi4py`, which the tests run it with.
//!
//! What is there already is kept, so that only the first run needs the network.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Fetch whatever of the outside material is missing.
pub(crate) fn fetch(root: &Path) -> Result<(), String> {
    let dir = root.join("target/outside");
    openpmix_source(&dir.join("debian"))?;
    mpi4py_suite(&dir.join("mpi4py"))
}

fn fresh_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// The first folder in `dir` that holds `inside`.
fn holding(dir: &Path, inside: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.join(inside).exists())
}

/// OpenPMIx's Debian source package, unpacked (`dpkg-source` comes with `dpkg-dev`).
fn openpmix_source(dir: &Path) -> Result<(), String> {
    if holding(dir, "examples/hello.c").is_some() {
        return Ok(());
    }
    fresh_dir(dir)?;
    crate::run_cmd(dir, "apt-get", &["source", "pmix"]).map_err(|e| {
        format!(
            "{e}\nOpenPMIx's examples come from Debian's source package: `apt-get source pmix` \
             needs a deb-src entry and dpkg-dev (as root, `cargo xtask test` adds both)"
        )
    })?;
    holding(dir, "examples/hello.c").map(|_| ()).ok_or_else(|| {
        format!(
            "`apt-get source pmix` left no pmix-*/examples in {}",
            dir.display()
        )
    })
}

/// The upstream version of an installed Debian package: `3.1.4-2+b2` is 3.1.4.
fn upstream_version(package: &str) -> Result<String, String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Version}", package])
        .output()
        .map_err(|e| format!("cannot run dpkg-query: {e}"))?;
    let full = String::from_utf8_lossy(&out.stdout);
    let version = upstream(full.trim());
    if !out.status.success() || version.is_empty() {
        return Err(format!("{package} is not installed"));
    }
    Ok(version.to_owned())
}

/// A Debian version without its epoch and revision.
fn upstream(full: &str) -> &str {
    let no_epoch = full.split_once(':').map_or(full, |(_, v)| v);
    no_epoch.rsplit_once('-').map_or(no_epoch, |(v, _)| v)
}

/// mpi4py's source release of the installed version, unpacked.
fn mpi4py_suite(dir: &Path) -> Result<(), String> {
    let version = upstream_version("python3-mpi4py")?;
    let name = format!("mpi4py-{version}");
    if dir.join(&name).join("test/runtests.py").exists() {
        return Ok(());
    }
    fresh_dir(dir)?;
    let pinned = format!("mpi4py=={version}");
    let download = [
        "-m",
        "pip",
        "download",
        &pinned,
        "--no-deps",
        "--no-binary",
        ":all:",
        "-d",
        ".",
    ];
    // Debian's own python3 may lack pip; the machine's may have it.
    crate::run_cmd(dir, "python3", &download)
        .or_else(|_| crate::run_cmd(dir, "/usr/bin/python3", &download))
        .map_err(|e| {
            format!("{e}\nmpi4py's test suite comes from PyPI: `pip download {pinned}`")
        })?;
    crate::run_cmd(dir, "tar", &["xzf", &format!("{name}.tar.gz")])?;
    if dir.join(&name).join("test/runtests.py").exists() {
        Ok(())
    } else {
        Err(format!("{name}.tar.gz holds no test/runtests.py"))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_upstream_version_drops_epoch_and_debian_revision() {
        assert_eq!(super::upstream("3.1.4-2+b2"), "3.1.4");
        assert_eq!(super::upstream("1:4.2.2-1+deb12u1"), "4.2.2");
        assert_eq!(super::upstream("2.0"), "2.0");
    }
}
