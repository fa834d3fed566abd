//! OpenPMIx releases as peers: 5.0.9 and 6.1.0, built from the source tarballs of the
//! reference material (`openpmix/src/`) into a cache outside the clone, once per machine.
//!
//! Debian bookworm ships OpenPMIx 4.2.2 only; the two later release lines are what users of
//! Open MPI 5, PRRTE 3 and 4 and Slurm master run. Each build is checked against the tarball's
//! SHA-256 committed here, configured with the flags below, and installed with `DESTDIR` into a
//! staging folder that is renamed into place only when the whole install succeeded: a cache
//! entry either is complete or does not exist, and a second command that finds a build under
//! way waits for it (a lock folder holding the builder's process id).
//!
//! The cache: `$PMIX_RS_CACHE_DIR`, else `$XDG_CACHE_HOME/pmix-rs`, else `~/.cache/pmix-rs`;
//! each release in `openpmix-<version>/` (`lib/libpmix.so.2`, `include/`, `bin/`), with the
//! release's `examples/` sources beside it in `examples-src/`, for the tests that build them
//! against that release's headers.
//!
//! Nothing of these trees is committed or copied into the project: they are peers to measure
//! against, like Debian's `libpmix.so.2`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A release the project builds as a peer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Release {
    /// The short name targets use (`openpmix-6.1`) is `openpmix-` and this.
    pub(crate) series: &'static str,
    /// The full version, as in the tarball's name.
    pub(crate) version: &'static str,
    /// SHA-256 of `openpmix-<version>.tar.gz`, so that a changed tarball is rebuilt, not reused.
    sha256: &'static str,
}

/// The releases of `openpmix/src/`.
pub(crate) const RELEASES: &[Release] = &[
    Release {
        series: "5.0",
        version: "5.0.9",
        sha256: "86c8efd065fc7c7173e8b364733a3faaa4757bd849e42e06b0f32b475f24c390",
    },
    Release {
        series: "6.1",
        version: "6.1.0",
        sha256: "ebe3f9decdbcdf9b7a16e38ce9bd1b296e76aeeafe25705e7ee36019636f3cbb",
    },
];

/// Build dependencies of every release: libevent, hwloc and zlib, and flex for its lexers.
pub(crate) const BUILD_PACKAGES: &[&str] = &[
    "gcc",
    "make",
    "libevent-dev",
    "libhwloc-dev",
    "zlib1g-dev",
    "flex",
];

/// `configure`'s flags: no man pages and no Sphinx (neither tool is on a fresh machine).
const CONFIGURE_FLAGS: &[&str] = &["--disable-man-pages", "--disable-sphinx"];

/// What the stamp file of a finished build says; a build whose stamp differs is redone.
fn stamp(release: &Release) -> String {
    format!(
        "openpmix {}\nsha256 {}\nconfigure {}\n",
        release.version,
        release.sha256,
        CONFIGURE_FLAGS.join(" ")
    )
}

const STAMP_FILE: &str = "pmix-rs-build.txt";

/// The release named by `name`: `5.0`, `6.1`, `5.0.9`, `openpmix-6.1`, ...
pub(crate) fn release(name: &str) -> Option<&'static Release> {
    let bare = name.strip_prefix("openpmix-").unwrap_or(name);
    RELEASES
        .iter()
        .find(|r| r.series == bare || r.version == bare)
}

/// The cache folder of all builds.
pub(crate) fn cache_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("PMIX_RS_CACHE_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Ok(PathBuf::from(dir).join("pmix-rs"));
    }
    std::env::var_os("HOME")
        .map(|home| PathBuf::from(home).join(".cache/pmix-rs"))
        .ok_or_else(|| "neither PMIX_RS_CACHE_DIR, XDG_CACHE_HOME nor HOME is set".into())
}

/// Where `release` is installed (whether or not it is yet).
pub(crate) fn prefix(release: &Release) -> Result<PathBuf, String> {
    Ok(cache_dir()?.join(format!("openpmix-{}", release.version)))
}

/// The installed library of `release`, building it first when the cache lacks it.
pub(crate) fn ensure(root: &Path, release: &Release) -> Result<PathBuf, String> {
    let prefix = prefix(release)?;
    if is_built(release, &prefix) {
        return Ok(prefix);
    }
    let cache = cache_dir()?;
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let _lock = Lock::take(&cache.join(format!("openpmix-{}.lock", release.version)))?;
    // Another command may have finished it while this one waited.
    if is_built(release, &prefix) {
        return Ok(prefix);
    }
    crate::sysdeps::ensure(BUILD_PACKAGES)?;
    build(root, release, &cache, &prefix)?;
    Ok(prefix)
}

fn is_built(release: &Release, prefix: &Path) -> bool {
    prefix.join("lib/libpmix.so.2").exists()
        && std::fs::read_to_string(prefix.join(STAMP_FILE)).is_ok_and(|s| s == stamp(release))
}

/// Unpack, configure, make and install into staging, then move into place.
fn build(root: &Path, release: &Release, cache: &Path, prefix: &Path) -> Result<(), String> {
    let shared = crate::vectors::shared_dir(root, None)?;
    let tarball = shared
        .join("openpmix/src")
        .join(format!("openpmix-{}.tar.gz", release.version));
    let digest = sha256_of(&tarball)?;
    if digest != release.sha256 {
        return Err(format!(
            "{} has SHA-256 {digest}, not the {} this project knows (xtask/src/openpmix.rs)",
            tarball.display(),
            release.sha256
        ));
    }
    let work = cache.join(format!("build-{}", release.version));
    let staging = cache.join(format!("staging-{}", release.version));
    for dir in [&work, &staging] {
        remove_if_there(dir)?;
    }
    remove_if_there(prefix)?;
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let tarball_arg = tarball.to_string_lossy();
    crate::run_cmd(&work, "tar", &["xzf", &tarball_arg])?;
    let source = work.join(format!("openpmix-{}", release.version));
    if !source.join("configure").exists() {
        return Err(format!(
            "{} holds no openpmix-{}/configure",
            tarball.display(),
            release.version
        ));
    }
    let prefix_arg = format!("--prefix={}", prefix.display());
    let mut configure = vec![prefix_arg.as_str()];
    configure.extend(CONFIGURE_FLAGS);
    println!(
        "building OpenPMIx {} into {} (6 to 13 minutes on 2 cores; once per machine)",
        release.version,
        prefix.display()
    );
    crate::run_cmd(&source, "./configure", &configure)?;
    let jobs = format!(
        "-j{}",
        std::thread::available_parallelism().map_or(2, |n| n.get())
    );
    crate::run_cmd(&source, "make", &[&jobs])?;
    let destdir = format!("DESTDIR={}", staging.display());
    crate::run_cmd(&source, "make", &["install", &destdir])?;
    // DESTDIR puts the tree under the staging folder at the full prefix's path.
    let relative = prefix.strip_prefix("/").unwrap_or(prefix);
    let installed = staging.join(relative);
    copy_tree(&source.join("examples"), &installed.join("examples-src"))?;
    std::fs::write(installed.join(STAMP_FILE), stamp(release))
        .map_err(|e| format!("cannot write the stamp: {e}"))?;
    std::fs::rename(&installed, prefix).map_err(|e| {
        format!(
            "cannot move {} to {}: {e}",
            installed.display(),
            prefix.display()
        )
    })?;
    remove_if_there(&staging)?;
    remove_if_there(&work)?;
    println!("OpenPMIx {} is in {}", release.version, prefix.display());
    Ok(())
}

fn remove_if_there(dir: &Path) -> Result<(), String> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot remove {}: {e}", dir.display())),
    }
}

/// The examples' sources (plain files; the folder has no subfolders that matter).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_file() {
            std::fs::copy(&path, to.join(entry.file_name()))
                .map_err(|e| format!("cannot copy {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn sha256_of(path: &Path) -> Result<String, String> {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run sha256sum: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "sha256sum {}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .map(str::to_owned)
        .ok_or_else(|| format!("sha256sum printed nothing for {}", path.display()))
}

/// A lock folder holding the builder's process id: taken by creating it (atomic), waited on
/// while its holder lives, taken over when its holder is gone.
struct Lock(PathBuf);

impl Lock {
    fn take(path: &Path) -> Result<Lock, String> {
        let mut said = false;
        let mut empty_for = 0;
        loop {
            match std::fs::create_dir(path) {
                Ok(()) => {
                    std::fs::write(path.join("pid"), std::process::id().to_string())
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                    return Ok(Lock(path.to_owned()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(path.join("pid")).unwrap_or_default();
                    // An empty pid file is a lock being taken right now, or one whose taker
                    // died before it wrote its id: a minute tells the two apart.
                    empty_for = if holder.is_empty() { empty_for + 1 } else { 0 };
                    let gone = if holder.is_empty() {
                        empty_for > 30
                    } else {
                        !Path::new("/proc").join(holder.trim()).exists()
                    };
                    if gone {
                        remove_if_there(path)?;
                        continue;
                    }
                    if !said {
                        println!(
                            "waiting for the build that holds {} (process {})",
                            path.display(),
                            holder.trim()
                        );
                        said = true;
                    }
                    std::thread::sleep(std::time::Duration::from_secs(2));
                }
                Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `cargo xtask openpmix [RELEASE...]`: build the named releases (all when none is named)
/// and print where each is.
pub(crate) fn run(root: &Path, names: &[String]) -> Result<(), String> {
    let chosen: Vec<&Release> = if names.is_empty() {
        RELEASES.iter().collect()
    } else {
        names
            .iter()
            .map(|n| {
                release(n).ok_or_else(|| {
                    let known: Vec<&str> = RELEASES.iter().map(|r| r.series).collect();
                    format!("no OpenPMIx release {n}; known: {}", known.join(", "))
                })
            })
            .collect::<Result<_, _>>()?
    };
    for release in chosen {
        let prefix = ensure(root, release)?;
        println!(
            "openpmix-{}: {}",
            release.series,
            prefix.join("lib/libpmix.so.2").display()
        );
    }
    Ok(())
}
