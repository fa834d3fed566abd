//! The launcher itself, as a user meets it: how it reports a process killed by a signal and
//! ends the job, what it leaves behind when it is itself told to stop, and where its input
//! goes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use std::process::{Command, Stdio};
use std::time::Duration;

use pmix_tests::launch::pmixrun;

#[test]
fn a_rank_killed_by_a_signal_is_named_and_ends_the_job() {
    // Rank 0 dies of SIGSEGV; rank 1 would sleep for a minute if the job went on.
    let script = r#"if [ "$PMIX_RANK" = 0 ]; then kill -SEGV $$; else exec sleep 60; fi"#;
    let out = Command::new(pmixrun())
        .args(["-n", "2", "--timeout", "120", "--", "/bin/sh", "-c", script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(139), "{stderr}");
    assert!(
        stderr.contains(":0 was killed by signal 11 (SIGSEGV)")
            && stderr.contains("ending the job"),
        "{stderr}"
    );
    // The other rank was stopped, not left to finish: it is not reported as failing.
    assert!(!stderr.contains(":1 "), "{stderr}");
}

#[test]
fn sigterm_to_pmixrun_ends_the_job_and_removes_its_directory() {
    let tmp = std::env::temp_dir().join(format!("pmixrun-sigterm.{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut launcher = Command::new(pmixrun())
        .args(["-n", "2", "--timeout", "120", "--", "/bin/sleep", "60"])
        .env("TMPDIR", &tmp)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let own = tmp.join(format!("pmixrun.{}", launcher.id()));
    // Its directory appears once the server runs; the processes start right after.
    for _ in 0..600 {
        if own.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(own.exists(), "pmixrun never made {}", own.display());
    std::thread::sleep(Duration::from_millis(500));
    let pid = launcher.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let status = launcher.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut launcher.stderr.take().unwrap(), &mut stderr).unwrap();
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("SIGTERM; ending the job"), "{stderr}");
    assert!(left.is_empty(), "pmixrun left {left:?} behind");
}

#[test]
fn the_launchers_input_goes_to_the_ranks_stdin_names() {
    // Each rank counts the lines of its input: rank 0's by default, everyone's with `all`,
    // nobody's with `none` (the others read an empty input).
    let script = r#"echo "rank $PMIX_RANK read $(wc -l) lines""#;
    for (stdin, readers) in [
        (None, vec![0]),
        (Some("all"), vec![0, 1]),
        (Some("none"), vec![]),
    ] {
        let mut cmd = Command::new(pmixrun());
        cmd.args(["-n", "2", "--timeout", "120"]);
        if let Some(s) = stdin {
            cmd.args(["--stdin", s]);
        }
        let mut launcher = cmd
            .args(["--", "/bin/sh", "-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = launcher.stdin.take().unwrap();
        std::io::Write::write_all(&mut input, b"one\ntwo\nthree\n").unwrap();
        drop(input);
        let out = launcher.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        for rank in 0..2 {
            let lines = if readers.contains(&rank) { 3 } else { 0 };
            let line = format!("rank {rank} read {lines} lines");
            assert!(
                stdout.contains(&line),
                "--stdin {stdin:?}: no {line:?} in {stdout}"
            );
        }
    }
}
