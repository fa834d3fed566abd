//! `cargo xtask bench [codec] [--quick]`: micro-benchmarks beside OpenPMIx.
//!
//! Each benchmark measures our implementation and OpenPMIx's `libpmix.so.2` on the same data
//! in the same run and prints both with their ratio (DESIGN §7). OpenPMIx is installed on
//! demand (`libpmix-dev`); without it the OpenPMIx column stays empty.

use std::path::Path;

const BENCHES: &[&str] = &["codec"];

pub(crate) fn run(root: &Path, args: &[String]) -> Result<(), String> {
    crate::sysdeps::ensure(crate::sysdeps::CONFORMANCE)?;
    let quick = args.iter().any(|a| a == "--quick");
    let chosen: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if let Some(unknown) = chosen.iter().find(|b| !BENCHES.contains(b)) {
        return Err(format!(
            "unknown benchmark `{unknown}`; available: {}",
            BENCHES.join(", ")
        ));
    }
    let selected = if chosen.is_empty() {
        BENCHES.to_vec()
    } else {
        chosen
    };
    for bench in selected {
        let mut cargo = vec!["bench", "--quiet", "--package", "pmix", "--bench", bench];
        if quick {
            cargo.extend(["--", "--quick"]);
        }
        crate::run_cmd(root, "cargo", &cargo)?;
    }
    Ok(())
}
