//! The main job's run on the `rust` target as one test: the conformance binary runs every
//! vector of `spec-vectors/vectors/` on this crate and judges it as the main job does (no
//! failure, no stale expected failure, no vector that passed in the committed baseline and no
//! longer does).
//!
//! `cargo xtask conformance` already runs this; the test exists for `cargo xtask mutants`,
//! which builds the crate with one planted change at a time and runs this test against it: a
//! mutant the vectors do not notice survives. It is ignored in the ordinary test run.

use std::process::Command;

#[test]
#[ignore = "the main job runs the vectors; `cargo xtask mutants` runs this against each mutant"]
fn every_vector_on_rust_is_as_its_baseline() {
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["--target", "rust", "--ablate", "none", "--parallel", "8"])
        .output()
        .expect("the conformance binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // What went wrong: the failures and regressions the run lists, and each bad vector's
    // account (`<id> on rust: FAIL` and the step's diff below it, up to a blank line).
    let mut accounts = Vec::new();
    let mut in_account = false;
    for l in stdout.lines() {
        if l.contains(" on rust: ") {
            in_account = true;
        } else if l.trim().is_empty() {
            in_account = false;
        }
        if in_account {
            accounts.push(l);
        }
    }
    let wrong: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .filter(|l| l.contains(" FAIL ") || l.contains("ERROR") || l.contains("UNEXPECTED"))
        .chain(stderr.lines().filter(|l| l.starts_with("  ")))
        .chain(accounts)
        .collect();
    assert!(
        out.status.success(),
        "the vectors on rust differ from the main job's:\n{}",
        wrong.join("\n")
    );
}
