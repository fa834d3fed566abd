//! System packages the commands need, installed on demand.
//!
//! One list per command of the README, each the whole of what that command needs on a fresh
//! Debian machine that has Rust and nothing more. As root (CI, a fresh container) the missing
//! packages are installed with `apt-get`; otherwise the exact command is printed and the
//! command fails, naming the packages, before cargo gets to fail on a linker message.

use std::process::Command;

/// `cargo xtask conformance`, the main job: the runner links the `pmix` crate with its
/// topology, read through `hwlocality`, whose build script asks pkg-config for hwloc's
/// static link line (`-lhwloc -lm -ludev -lpthread`), so udev's development files are needed
/// as much as hwloc's; it runs the vectors on the OpenPMIx peer as well (`libpmix.so.2`, its
/// headers and tools). Nothing of it compiles C.
pub(crate) const CONFORMANCE: &[&str] = &[
    "pkg-config",
    "libhwloc-dev",
    "libudev-dev",
    "libpmix-dev",
    "libpmix-bin",
];

/// `cargo xtask test`: everything the conformance runner needs, and the real peers the tests
/// build and run: C programs against OpenPMIx (a C compiler), Open MPI with its compiler
/// wrapper, python3-pmix and mpi4py as clients; `dpkg-dev` for `apt-get source` of the
/// peers' sources.
pub(crate) const TESTS: &[&str] = &[
    "pkg-config",
    "libhwloc-dev",
    "libudev-dev",
    "libpmix-dev",
    "libpmix-bin",
    "python3-pmix",
    "openmpi-bin",
    "libopenmpi-dev",
    "python3-mpi4py",
    "gcc",
    "dpkg-dev",
];

/// Make sure every package is installed: as root, install the missing ones; otherwise fail
/// with the command that would.
pub(crate) fn ensure(packages: &[&str]) -> Result<(), String> {
    if crate::which("dpkg-query").is_none() {
        eprintln!(
            "note: not a Debian system; make sure these are installed: {}",
            packages.join(" ")
        );
        return Ok(());
    }
    let missing = uninstalled(packages);
    if missing.is_empty() {
        return Ok(());
    }
    let names = missing.join(" ");
    if !is_root() {
        let update = if package_lists_present() {
            ""
        } else {
            "sudo apt-get update && "
        };
        return Err(format!(
            "missing system packages: {names}\ninstall them with:\n  \
             {update}sudo apt-get install -y --no-install-recommends {names}"
        ));
    }
    println!("installing missing system packages: {names}");
    apt_install(&missing)?;
    let left = uninstalled(&missing);
    if left.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "apt-get succeeded but these packages are still missing: {}",
            left.join(" ")
        ))
    }
}

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

fn uninstalled<'a>(packages: &[&'a str]) -> Vec<&'a str> {
    packages.iter().copied().filter(|p| !installed(p)).collect()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Whether apt has fetched its package lists (a fresh container's are usually deleted).
fn package_lists_present() -> bool {
    std::fs::read_dir("/var/lib/apt/lists").is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains("_Packages"))
    })
}

/// Install the packages, fetching the package lists first only when there are none, or
/// when the install fails on lists that may be stale.
fn apt_install(packages: &[&str]) -> Result<(), String> {
    let fetched = !package_lists_present();
    if fetched {
        apt_get(&["update"])?;
    }
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend(packages);
    let first = apt_get(&install);
    if first.is_ok() || fetched {
        return first.map_err(|e| format!("cannot install {}: {e}", packages.join(" ")));
    }
    apt_get(&["update"])?;
    apt_get(&install).map_err(|e| format!("cannot install {}: {e}", packages.join(" ")))
}

fn apt_get(args: &[&str]) -> Result<(), String> {
    println!("+ apt-get {}", args.join(" "));
    let status = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| format!("cannot run apt-get: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`apt-get {}` failed: {status}", args.join(" ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_needs_everything_the_one_before_it_does() {
        for package in CONFORMANCE {
            assert!(TESTS.contains(package), "TESTS lacks {package}");
        }
    }
}
