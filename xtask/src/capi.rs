//! `cargo xtask capi`: this project's `libpmix.so.2` (the `capi` crate) in
//! `target/release/capi/`, under the file names C programs and pkg-config look for.
//!
//! Not in `target/release/` itself: `cargo run` puts that folder on the loader's path, so a
//! `libpmix.so.2` there would replace OpenPMIx's in every program cargo runs (the
//! conformance runner's `--target libpmix.so.2` included).

use std::path::{Path, PathBuf};

/// Build the library; its path (`target/release/capi/libpmix.so.2`).
pub(crate) fn run(root: &Path) -> Result<PathBuf, String> {
    crate::run_cmd(
        root,
        "cargo",
        &["build", "--quiet", "--release", "--package", "pmix-capi"],
    )?;
    let release = root.join("target/release");
    let dir = release.join("capi");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    install(&release.join("libpmix_capi.so"), &dir)?;
    let lib = dir.join("libpmix.so.2");
    println!("{}", lib.display());
    println!(
        "Run a program on it: LD_LIBRARY_PATH={} <program>",
        dir.display()
    );
    Ok(lib)
}

/// Put the cdylib cargo `built` into `dir` under the names a C program's loader
/// (`libpmix.so.2`, the SONAME) and its linker (`libpmix.so`) ask for, and write `pmix.pc`
/// beside them.
fn install(built: &Path, dir: &Path) -> Result<(), String> {
    let lib = dir.join("libpmix.so.2");
    // Through a temporary name, so that a program running on the old copy keeps it.
    let fresh = dir.join("libpmix.so.2.tmp");
    std::fs::copy(built, &fresh).map_err(|e| format!("copying {}: {e}", built.display()))?;
    std::fs::rename(&fresh, &lib).map_err(|e| format!("writing {}: {e}", lib.display()))?;
    let link = dir.join("libpmix.so");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("libpmix.so.2", &link)
        .map_err(|e| format!("linking {}: {e}", link.display()))?;
    let pc = pkg_config_file(dir);
    std::fs::write(dir.join("pmix.pc"), pc).map_err(|e| format!("writing pmix.pc: {e}"))
}

/// `pmix.pc`: link against this library; compile against OpenPMIx's headers (the C API's
/// declarations, which this library implements), found through OpenPMIx's own `pmix.pc`.
fn pkg_config_file(libdir: &Path) -> String {
    let includedir = std::process::Command::new("pkg-config")
        .args(["--variable=includedir", "pmix"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "/usr/include".to_owned());
    format!(
        "libdir={}\nincludedir={includedir}\n\nName: pmix\n\
         Description: the PMIx Standard's C API, built from the pmix crate (OpenPMIx 4.2 ABI)\n\
         Version: 4.2.2\nLibs: -L${{libdir}} -lpmix\nCflags: -I${{includedir}}\n",
        libdir.display()
    )
}
