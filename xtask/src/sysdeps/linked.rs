//! What the programs of each command link, and which Debian package provides each library's
//! link-time file: the check that each list of `sysdeps` holds them.
//!
//! A library reaches a link line in two ways here: a build script's `cargo:rustc-link-lib`
//! (`hwlocality-sys` forwards pkg-config's static line for hwloc, `-lhwloc -lm -ludev
//! -lpthread`), and the flags of the C peers the tests compile (`pkg-config --libs pmix`,
//! `mpicc --showme:link`). Each library is looked up as the linker looks it up —
//! `lib<name>.so`, then `lib<name>.a`, in the `-L` directories that came with it, then in
//! those of `cc -print-search-dirs` — and `dpkg -S` of the file found names its package.
//!
//! Not looked at: libraries named by `#[link]` attributes in Rust code. On Linux only the
//! `libc` crate has them (libc, libm, librt, libpthread, libdl, libutil), all the toolchain's.
//!
//! The check builds what each command builds, with `--message-format=json` to hear the build
//! scripts; under `cargo xtask test` that build is already done and the packages installed.
//! Off Debian there are no packages to name and the check says so and passes.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{CONFORMANCE, PMIXRUN, TESTS, is_toolchain};

/// A library asked of the linker, and who asked.
#[derive(Debug, Clone)]
struct Linked {
    /// The name given to `-l`: `udev` for `libudev.so`.
    name: String,
    /// Only the static archive will do (`static=` in a build script).
    static_only: bool,
    /// The `-L` directories that came with it, searched before the compiler's.
    dirs: Vec<PathBuf>,
    /// The crate whose build script, or the program whose flags, put it there.
    by: String,
}

/// The libraries the build scripts of `cargo <args>` ask for, and how the build failed if it
/// did (a missing library fails the link after the build scripts have spoken).
fn cargo_build(args: &[&str]) -> (Vec<Linked>, Option<String>) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        .arg("--message-format=json")
        .current_dir(crate::workspace_root())
        .output()
        .expect("cargo runs");
    let failure = (!out.status.success()).then(|| {
        format!(
            "`cargo {}` failed:\n{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut linked = Vec::new();
    let mut scripts = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if message["reason"] != "build-script-executed" {
            continue;
        }
        scripts += 1;
        let strings = |key: &str| -> Vec<String> {
            message[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let dirs: Vec<PathBuf> = strings("linked_paths")
            .iter()
            .map(|p| search_dir(p))
            .collect();
        let by = crate_name(message["package_id"].as_str().unwrap_or("?"));
        for spec in strings("linked_libs") {
            let (name, static_only) = link_lib(&spec);
            linked.push(Linked {
                name,
                static_only,
                dirs: dirs.clone(),
                by: by.clone(),
            });
        }
    }
    // Every build here runs the `libc` crate's build script: none heard means cargo's
    // messages changed, and the check would pass on nothing.
    assert!(
        scripts > 0,
        "`cargo {}` reported no build script",
        args.join(" ")
    );
    (linked, failure)
}

/// The libraries in the link flags a program prints (`pkg-config --libs pmix`).
fn program_flags(program: &str, args: &[&str]) -> Vec<Linked> {
    let by = format!("`{program} {}`", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {by}: {e}"));
    assert!(out.status.success(), "{by} failed");
    link_flags(&String::from_utf8_lossy(&out.stdout), &by)
}

/// The `-l` libraries of a link line, each with the line's `-L` directories.
fn link_flags(line: &str, by: &str) -> Vec<Linked> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let dirs: Vec<PathBuf> = words
        .iter()
        .filter_map(|w| w.strip_prefix("-L"))
        .map(PathBuf::from)
        .collect();
    words
        .iter()
        .filter_map(|w| w.strip_prefix("-l"))
        .map(|name| Linked {
            name: name.to_owned(),
            static_only: false,
            dirs: dirs.clone(),
            by: by.to_owned(),
        })
        .collect()
}

/// A build script's `rustc-link-lib` value, `[KIND[:MODIFIERS]=]NAME[:RENAME]`, as the name
/// the linker searches and whether only its static archive will do.
fn link_lib(spec: &str) -> (String, bool) {
    let (kind, name) = spec.split_once('=').unwrap_or(("dylib", spec));
    let kind = kind.split(':').next().unwrap_or(kind);
    let name = name.split(':').next().unwrap_or(name);
    (name.to_owned(), kind == "static")
}

/// A build script's `rustc-link-search` value, `[KIND=]PATH`, as the directory.
fn search_dir(spec: &str) -> PathBuf {
    let kinds = ["native", "crate", "dependency", "framework", "all"];
    match spec.split_once('=') {
        Some((kind, path)) if kinds.contains(&kind) => PathBuf::from(path),
        _ => PathBuf::from(spec),
    }
}

/// The crate's name in a cargo package id (`registry+…#hwlocality-sys@0.7.2`, or
/// `path+file:///…/pmix#0.1.0` when the folder has the crate's name).
fn crate_name(package_id: &str) -> String {
    let Some((source, fragment)) = package_id.split_once('#') else {
        return package_id
            .split(' ')
            .next()
            .unwrap_or(package_id)
            .to_owned();
    };
    match fragment.split_once('@') {
        Some((name, _)) => name.to_owned(),
        None => source.rsplit('/').next().unwrap_or(source).to_owned(),
    }
}

/// The directories the C compiler, which links every Rust program, searches for `-l`.
fn compiler_dirs() -> Vec<PathBuf> {
    let out = Command::new("cc")
        .arg("-print-search-dirs")
        .output()
        .expect("cc runs: it links every Rust program");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("libraries: ="))
        .map(|dirs| std::env::split_paths(dirs).collect())
        .unwrap_or_default()
}

/// The file the linker takes for `lib`: in each directory in turn, the shared object, then
/// the static archive.
fn link_time_file(lib: &Linked, compiler_dirs: &[PathBuf]) -> Option<PathBuf> {
    let shared = format!("lib{}.so", lib.name);
    let archive = format!("lib{}.a", lib.name);
    let names = if lib.static_only {
        vec![archive]
    } else {
        vec![shared, archive]
    };
    lib.dirs.iter().chain(compiler_dirs).find_map(|dir| {
        names
            .iter()
            .map(|name| lexically_normal(&dir.join(name)))
            .find(|file| file.exists())
    })
}

/// The path with `.` and `..` folded away, as dpkg registers files
/// (`…/gcc/x86_64-linux-gnu/12/../../../x86_64-linux-gnu/libm.so`).
fn lexically_normal(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal
}

/// The packages that own a file (`dpkg -S`). With /usr merged, a file found under `/lib` may
/// be registered under `/usr/lib` and the other way round, so both are asked.
fn owners(file: &Path) -> Vec<String> {
    let text = file.to_string_lossy();
    let merged = match (text.strip_prefix("/usr/lib/"), text.strip_prefix("/lib/")) {
        (Some(rest), _) => Some(format!("/lib/{rest}")),
        (_, Some(rest)) => Some(format!("/usr/lib/{rest}")),
        _ => None,
    };
    for path in std::iter::once(text.to_string()).chain(merged) {
        let Ok(out) = Command::new("dpkg").arg("-S").arg(&path).output() else {
            continue;
        };
        if out.status.success() {
            return dpkg_owners(&String::from_utf8_lossy(&out.stdout));
        }
    }
    Vec::new()
}

/// The package names of `dpkg -S` output (`libudev-dev:amd64: /usr/lib/…/libudev.so`, several
/// owners separated by commas), without architectures, diversions skipped.
fn dpkg_owners(output: &str) -> Vec<String> {
    output
        .lines()
        .filter(|l| !l.starts_with("diversion by"))
        .filter_map(|l| l.split_once(": ").map(|(owners, _)| owners))
        .flat_map(|owners| owners.split(", "))
        .map(|owner| owner.split(':').next().unwrap_or(owner).to_owned())
        .collect()
}

/// One sentence for each library in `linked` that no package of `list` (nor the toolchain)
/// provides, naming the package that does.
fn uncovered(linked: &[Linked], list: &[&str], list_name: &str) -> BTreeSet<String> {
    let compiler_dirs = compiler_dirs();
    let mut problems = BTreeSet::new();
    for lib in linked {
        let asked = format!("{} links `-l{}`", lib.by, lib.name);
        let Some(file) = link_time_file(lib, &compiler_dirs) else {
            problems.insert(format!(
                "{asked}, but no library directory holds lib{0}.so or lib{0}.a: install \
                 the package that has it (`apt-file search lib{0}.so`) and add it to \
                 sysdeps::{list_name}",
                lib.name
            ));
            continue;
        };
        let owners = owners(&file);
        if owners.is_empty() {
            problems.insert(format!(
                "{asked}: {} belongs to no Debian package",
                file.display()
            ));
        } else if !owners
            .iter()
            .any(|o| list.contains(&o.as_str()) || is_toolchain(o))
        {
            problems.insert(format!(
                "{asked}: {} is in the package {}, which sysdeps::{list_name} lacks",
                file.display(),
                owners.join(" or ")
            ));
        }
    }
    problems
}

/// Check the libraries `collect` finds against a list, then that the build it ran passed;
/// off Debian, say why not.
fn assert_covered(
    list_name: &str,
    list: &[&str],
    collect: impl FnOnce() -> (Vec<Linked>, Option<String>),
) {
    if crate::which("dpkg").is_none() {
        eprintln!("note: not a Debian system; sysdeps::{list_name} not checked");
        return;
    }
    let (linked, failure) = collect();
    let problems = uncovered(&linked, list, list_name);
    assert!(
        problems.is_empty(),
        "sysdeps::{list_name} lacks what the programs link:\n  {}",
        problems.into_iter().collect::<Vec<_>>().join("\n  ")
    );
    if let Some(failure) = failure {
        panic!("{failure}");
    }
}

#[test]
fn pmixrun_links_only_libraries_of_its_list() {
    assert_covered("PMIXRUN", PMIXRUN, || {
        cargo_build(&["build", "-p", "pmix", "--bins"])
    });
}

#[test]
fn conformance_runner_links_only_libraries_of_its_list() {
    assert_covered("CONFORMANCE", CONFORMANCE, || {
        cargo_build(&["build", "-p", "conformance", "--lib", "--bins"])
    });
}

#[test]
fn tests_link_only_libraries_of_their_list() {
    assert_covered("TESTS", TESTS, || {
        // What nextest builds, then the C peers of `tests/tests/interop.rs`.
        let (mut linked, failure) = cargo_build(&["test", "--no-run", "--workspace"]);
        linked.extend(program_flags("pkg-config", &["--libs", "pmix"]));
        linked.extend(program_flags("mpicc", &["--showme:link"]));
        (linked, failure)
    });
}

#[test]
fn build_script_link_values_parse_as_the_linker_reads_them() {
    assert_eq!(link_lib("udev"), ("udev".to_owned(), false));
    assert_eq!(link_lib("static=hwloc"), ("hwloc".to_owned(), true));
    assert_eq!(
        link_lib("static:+whole-archive=foo:bar"),
        ("foo".to_owned(), true)
    );
    assert_eq!(search_dir("native=/opt/lib"), PathBuf::from("/opt/lib"));
    assert_eq!(search_dir("/opt/lib"), PathBuf::from("/opt/lib"));
}

#[test]
fn crate_names_come_out_of_both_package_id_forms() {
    assert_eq!(
        crate_name("registry+https://github.com/rust-lang/crates.io-index#hwlocality-sys@0.7.2"),
        "hwlocality-sys"
    );
    assert_eq!(crate_name("path+file:///src/pmix#0.1.0"), "pmix");
}

#[test]
fn link_flags_carry_their_directories() {
    let linked = link_flags("-L/opt/mpi/lib -Wl,-rpath -Wl,/opt/mpi/lib -lmpi", "mpicc");
    assert_eq!(linked.len(), 1);
    assert_eq!(linked[0].name, "mpi");
    assert_eq!(linked[0].dirs, [PathBuf::from("/opt/mpi/lib")]);
}

#[test]
fn dpkg_owners_drop_architectures_and_diversions() {
    assert_eq!(
        dpkg_owners("libudev-dev:amd64: /usr/lib/x86_64-linux-gnu/libudev.so\n"),
        ["libudev-dev"]
    );
    assert_eq!(
        dpkg_owners("diversion by x from: /a\nlibc6-dev:amd64, libc6-dev:i386: /a\n"),
        ["libc6-dev", "libc6-dev"]
    );
}

#[test]
fn paths_fold_parent_directories() {
    assert_eq!(
        lexically_normal(Path::new("/usr/lib/gcc/x/12/../../../x/libm.so")),
        PathBuf::from("/usr/lib/x/libm.so")
    );
}
