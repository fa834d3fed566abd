//! System packages the commands need, installed on demand.
//!
//! As root (CI, a fresh container) missing Debian packages are installed with `apt-get`;
//! otherwise the exact command is printed and the command fails, so nothing half-works.

use std::process::Command;

/// Needed by the conformance runner: the OpenPMIx peer (`libpmix.so.2`, its headers and tools).
pub(crate) const CONFORMANCE: &[&str] = &["pkg-config", "libpmix-dev", "libpmix-bin"];

/// Needed by the tests: the OpenPMIx peer (headers and library for the C peer programs),
/// hwloc for topology, Open MPI and python3-pmix as real clients, a C compiler.
pub(crate) const TESTS: &[&str] = &[
    "pkg-config",
    "libhwloc-dev",
    "libudev-dev",
    "libpmix-dev",
    "libpmix-bin",
    "python3-pmix",
    "openmpi-bin",
    "libopenmpi-dev",
    "gcc",
];

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Make sure every package is installed, or explain how to install it.
pub(crate) fn ensure(packages: &[&str]) -> Result<(), String> {
    if crate::which("dpkg-query").is_none() {
        eprintln!(
            "note: not a Debian system; make sure these are installed: {}",
            packages.join(" ")
        );
        return Ok(());
    }
    let missing: Vec<&str> = packages.iter().copied().filter(|p| !installed(p)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let command = format!(
        "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {}",
        missing.join(" ")
    );
    if !is_root() {
        return Err(format!(
            "missing system packages; install them with:\n  sudo sh -c '{command}'"
        ));
    }
    println!("installing missing system packages: {}", missing.join(" "));
    let status = Command::new("sh")
        .args(["-c", &command])
        .status()
        .map_err(|e| format!("cannot run apt-get: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{command}` failed: {status}"))
    }
}
