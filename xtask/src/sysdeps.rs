//! System packages the commands need, installed on demand.
//!
//! One list per command of the README, each the whole of what that command needs on a fresh
//! Debian machine that has Rust and nothing more. As root (CI, a fresh container) the missing
//! packages are installed with `apt-get`; otherwise the exact command is printed and the
//! command fails, naming the packages, before cargo gets to fail on a linker message.
//!
//! The lists are checked against what the programs really link (`linked`, a test run by
//! `cargo xtask test`): a library that no listed package provides fails it.

#[cfg(test)]
mod linked;

use std::path::Path;
use std::process::Command;

/// `cargo xtask build-pmixrun`: `pmixrun` reads the machine's topology through `hwlocality`,
/// whose build script asks pkg-config for hwloc's static link line (`-lhwloc -lm -ludev
/// -lpthread`), so udev's development files are needed as much as hwloc's.
pub(crate) const PMIXRUN: &[&str] = &["pkg-config", "libhwloc-dev", "libudev-dev"];

/// `cargo xtask conformance`, the main job: the runner links the `pmix` crate with its
/// topology, as `pmixrun` does, and runs the vectors on the OpenPMIx peer as well
/// (`libpmix.so.2`, its headers and tools). Nothing of it compiles C.
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
/// peers' sources; `binutils` (`nm`, `readelf`) and `valgrind` for the checks of this
/// project's `libpmix.so.2`; Slurm's controller, node daemon and `srun`, as a host.
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
    "binutils",
    "valgrind",
    "dpkg-dev",
    "slurmctld",
    "slurmd",
    "slurm-client",
];

/// `slurm`: a Slurm cluster whose servers are OpenPMIx's or this project's library.
pub(crate) const SLURM: &[&str] = &[
    "pkg-config",
    "libhwloc-dev",
    "libudev-dev",
    "libpmix-dev",
    "slurmctld",
    "slurmd",
    "slurm-client",
];

/// Packages of the C toolchain itself, which no list names: every Rust program on Linux is
/// linked by `cc`, so a machine that built `cargo xtask` has them. `libc6-dev` holds libc,
/// libm, libpthread, libdl and librt; `libgcc-<version>-dev` holds libgcc and libgcc_s.
/// (Only the link check asks.)
#[cfg(test)]
pub(crate) fn is_toolchain(package: &str) -> bool {
    package == "libc6-dev"
        || package
            .strip_prefix("libgcc-")
            .and_then(|rest| rest.strip_suffix("-dev"))
            .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit()))
}

/// Where [`ensure_deb_src`] writes its entry.
const DEB_SRC_FILE: &str = "/etc/apt/sources.list.d/debian-src.sources";

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

/// Make sure apt knows a source repository, so that `apt-get source` works: as root, add one
/// for this Debian release's main archive when no `deb-src` entry exists; otherwise fail with
/// the commands that would.
pub(crate) fn ensure_deb_src() -> Result<(), String> {
    let apt = Path::new("/etc/apt");
    if !apt.is_dir() {
        eprintln!("note: not a Debian system; `apt-get source` needs a deb-src entry");
        return Ok(());
    }
    if has_deb_src(apt) {
        return Ok(());
    }
    let codename = debian_codename().ok_or(
        "apt has no deb-src entry and this is not Debian: add one so that `apt-get source` works",
    )?;
    let entry = deb_src_entry(&codename);
    if !is_root() {
        return Err(format!(
            "apt has no deb-src entry, which `apt-get source` needs; add one with:\n  \
             sudo tee {DEB_SRC_FILE} >/dev/null <<'EOF'\n{entry}EOF\n  sudo apt-get update"
        ));
    }
    println!("adding a deb-src entry for `apt-get source`: {DEB_SRC_FILE}");
    std::fs::write(DEB_SRC_FILE, entry).map_err(|e| format!("{DEB_SRC_FILE}: {e}"))?;
    apt_get(&["update"])
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

pub(crate) fn is_root() -> bool {
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

/// Whether any of apt's source files (one-line `.list` or deb822 `.sources`) has an enabled
/// `deb-src` entry.
fn has_deb_src(apt: &Path) -> bool {
    let mut files = vec![apt.join("sources.list")];
    if let Ok(entries) = std::fs::read_dir(apt.join("sources.list.d")) {
        files.extend(entries.flatten().map(|e| e.path()));
    }
    files.iter().any(|path| {
        let name = path.to_string_lossy();
        std::fs::read_to_string(path).is_ok_and(|text| lists_deb_src(&name, &text))
    })
}

/// Whether the text of the source file `name` has an enabled `deb-src` entry. apt reads only
/// files named `*.list` (one entry a line) and `*.sources` (deb822 stanzas with `Types:`).
fn lists_deb_src(name: &str, text: &str) -> bool {
    let lines = || text.lines().map(str::trim).filter(|l| !l.starts_with('#'));
    if name.ends_with(".list") {
        return lines().any(|l| l.split_whitespace().next() == Some("deb-src"));
    }
    if !name.ends_with(".sources") {
        return false;
    }
    let mut stanzas = vec![Vec::new()];
    for line in lines() {
        match stanzas.last_mut() {
            Some(stanza) if !line.is_empty() => stanza.push(line),
            _ => stanzas.push(Vec::new()),
        }
    }
    let field = |stanza: &[&str], name: &str| {
        stanza.iter().find_map(|l| {
            let (key, value) = l.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    };
    stanzas.iter().any(|stanza| {
        field(stanza, "Types").is_some_and(|t| t.split_whitespace().any(|t| t == "deb-src"))
            && field(stanza, "Enabled").is_none_or(|e| !e.eq_ignore_ascii_case("no"))
    })
}

/// This Debian release's codename (`bookworm`), or `None` elsewhere.
fn debian_codename() -> Option<String> {
    let release = std::fs::read_to_string("/etc/os-release").ok()?;
    let value = |key: &str| {
        release.lines().find_map(|l| {
            l.strip_prefix(key)?
                .strip_prefix('=')
                .map(|v| v.trim_matches('"').to_owned())
        })
    };
    (value("ID")? == "debian")
        .then(|| value("VERSION_CODENAME"))
        .flatten()
}

/// The deb822 entry for the sources of a Debian release's main archive, as Debian's own
/// `debian.sources` names its binaries.
fn deb_src_entry(codename: &str) -> String {
    format!(
        "Types: deb-src\n\
         URIs: http://deb.debian.org/debian\n\
         Suites: {codename} {codename}-updates\n\
         Components: main\n\
         Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_needs_everything_the_one_before_it_does() {
        for (smaller, larger, name) in [
            (PMIXRUN, CONFORMANCE, "CONFORMANCE"),
            (CONFORMANCE, TESTS, "TESTS"),
        ] {
            for package in smaller {
                assert!(larger.contains(package), "{name} lacks {package}");
            }
        }
    }

    #[test]
    fn toolchain_is_libc_and_libgcc_development_files_only() {
        assert!(is_toolchain("libc6-dev"));
        assert!(is_toolchain("libgcc-12-dev"));
        assert!(!is_toolchain("libgcc-s1"));
        assert!(!is_toolchain("libudev-dev"));
    }

    #[test]
    fn pmixruns_page_gives_the_command_that_installs_what_it_needs() {
        let page = std::fs::read_to_string(crate::workspace_root().join("docs/pmixrun.md"))
            .expect("the workspace documents pmixrun");
        let command = format!(
            "apt-get install -y --no-install-recommends {}",
            PMIXRUN.join(" ")
        );
        assert!(
            page.contains(&command),
            "docs/pmixrun.md should give `{command}`"
        );
    }

    #[test]
    fn one_line_deb_src_counts_unless_commented() {
        assert!(lists_deb_src(
            "sources.list",
            "deb http://deb.debian.org/debian bookworm main\n\
             deb-src http://deb.debian.org/debian bookworm main\n"
        ));
        assert!(!lists_deb_src(
            "sources.list",
            "# deb-src http://deb.debian.org/debian bookworm main\n"
        ));
    }

    #[test]
    fn deb822_deb_src_counts_unless_disabled() {
        let binaries = "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n";
        assert!(!lists_deb_src("debian.sources", binaries));
        let both = format!("{binaries}\nTypes: deb deb-src\nSuites: bookworm\n");
        assert!(lists_deb_src("debian.sources", &both));
        let disabled = format!("{}Enabled: no\n", deb_src_entry("bookworm"));
        assert!(!lists_deb_src("debian.sources", &disabled));
        assert!(lists_deb_src("x.sources", &deb_src_entry("bookworm")));
    }

    #[test]
    fn files_apt_does_not_read_never_count() {
        assert!(!lists_deb_src(
            "x.sources.disabled",
            &deb_src_entry("bookworm")
        ));
    }
}
