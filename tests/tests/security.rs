//! Who may enter a `pmixrun` job, and what a process of it may have the launcher do.
//!
//! A second, unprivileged local user tries every way into a running job, over its loopback
//! TCP port and over its Unix socket: a tool with security mode `none` and no credential, a
//! tool that claims root, a tool that replays the owner's `native` credential, and clients
//! claiming a rank as root or as themselves. All are refused, whatever they state, because
//! the server asks the kernel who they are. The owner itself cannot take over a rank that is
//! connected (`PMIX_ERR_EXISTS`), the ranks go on working, and the owner's tools still
//! connect. Then a job may only clean up what its user owns and cannot signal the job that
//! spawned it.
//!
//! These tests create a user (`pmixrs-intruder`) and so need root: they are `#[ignore]`d,
//! and `cargo xtask test` runs them when it runs as root, as CI does.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use pmix_tests::launch::pmixrun;

const INTRUDER: &str = "pmixrs-intruder";

/// The second user's uid and gid, created on first use.
fn second_user() -> (u32, u32) {
    let id = |flag: &str| {
        let out = Command::new("id").args([flag, INTRUDER]).output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<u32>()
            .ok()
    };
    if id("-u").is_none() {
        let made = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
            ])
            .arg(INTRUDER)
            .status()
            .expect("useradd (from Debian's passwd package)");
        assert!(made.success(), "useradd {INTRUDER} failed: {made}");
    }
    (id("-u").unwrap(), id("-g").unwrap())
}

/// A directory every user may enter, removed when the test ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("{name}.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The intruder program, copied where the second user can run it.
fn intruder_in(dir: &Path) -> PathBuf {
    let to = dir.join("pmix_intruder");
    std::fs::copy(env!("CARGO_BIN_EXE_pmix_intruder"), &to).unwrap();
    std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
    to
}

/// Run the intruder as `as_user` (`None`: as this process's user); its one-line verdict.
fn attempt(intruder: &Path, as_user: Option<(u32, u32)>, args: &[&str]) -> String {
    let mut cmd = match as_user {
        Some((uid, gid)) => {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={gid}"))
                .arg("--clear-groups")
                .arg("--")
                .arg(intruder);
            c
        }
        None => Command::new(intruder),
    };
    let out = cmd.args(args).output().unwrap();
    let verdict = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        out.status.success(),
        "the intruder could not try {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    verdict
}

/// The owner's uid and gid.
fn owner() -> (u32, u32) {
    pmix::transport::uid_gid()
}

/// Read the launcher's stdout until `n` lines start with `prefix`.
fn wait_for_lines(lines: &std::sync::mpsc::Receiver<String>, prefix: &str, n: usize) {
    // Each line within two minutes; the launcher's own --timeout bounds the whole.
    let mut seen = 0;
    while seen < n {
        let line = lines
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("the job never said {prefix:?} {n} times"));
        seen += usize::from(line.starts_with(prefix));
    }
}

/// The URI and the Unix socket of the `pmixrun` of `pid` whose `$TMPDIR` is `tmp`.
fn server_addresses(tmp: &Path, pid: u32) -> (String, PathBuf) {
    let dir = tmp.join(format!("pmixrun.{pid}"));
    let rendezvous = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("pmix.") && name.ends_with(&format!(".tool.{pid}"))
        })
        .expect("pmixrun's tool rendezvous file");
    let uri = std::fs::read_to_string(rendezvous).unwrap();
    let uri = uri.lines().next().unwrap();
    let address = uri.split("tcp4://").nth(1).expect("a tcp4 URI").to_owned();
    (address, dir.join(format!("pmix-rs.{pid}.sock")))
}

#[test]
#[ignore = "needs root: creates a second user (cargo xtask test runs it as root)"]
fn a_second_user_cannot_enter_a_job_and_no_connection_takes_over_a_rank() {
    let intruder_ids = second_user();
    let (uid, gid) = owner();
    let scratch = Scratch::new("pmixrs-security");
    let intruder = intruder_in(&scratch.0);
    let marker = scratch.0.join("go");
    let mut launcher = Command::new(pmixrun())
        .args(["-n", "2", "--timeout", "180", "--"])
        .arg(env!("CARGO_BIN_EXE_rust_hold_check"))
        .arg(&marker)
        .env("TMPDIR", &scratch.0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    let stdout = launcher.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            all.push_str(&line);
            all.push('\n');
            let _ = tx.send(line);
        }
        all
    });
    wait_for_lines(&lines, "ready", 2);
    let (tcp, socket) = server_addresses(&scratch.0, launcher.id());
    let nspace = format!("job.{}", launcher.id());
    let (iu, ig) = (intruder_ids.0.to_string(), intruder_ids.1.to_string());
    let (ou, og) = (uid.to_string(), gid.to_string());
    let attempts: [Vec<&str>; 6] = [
        vec!["tool-none", &iu, &ig],
        vec!["tool-native", "0", "0"],
        // The owner's native credential, replayed: the same bytes the owner's tool sends.
        vec!["tool-native", &ou, &og],
        vec!["client", &nspace, "0", "0", "0"],
        vec!["client", &nspace, "1", &ou, &og],
        vec!["client", &nspace, "1", &iu, &ig],
    ];
    let socket_arg = socket.display().to_string();
    let mut verdicts = Vec::new();
    for transport in [["--tcp", tcp.as_str()], ["--unix", socket_arg.as_str()]] {
        for a in &attempts {
            let args: Vec<&str> = transport.iter().copied().chain(a.iter().copied()).collect();
            verdicts.push((
                args.join(" "),
                attempt(&intruder, Some(intruder_ids), &args),
            ));
        }
    }
    // The socket's permissions may already keep the second user out: open it to everyone,
    // so that the server itself must refuse.
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(
        socket.parent().unwrap(),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    for a in &attempts {
        let args: Vec<&str> = ["--unix", socket_arg.as_str()]
            .into_iter()
            .chain(a.iter().copied())
            .collect();
        let verdict = attempt(&intruder, Some(intruder_ids), &args);
        assert!(
            verdict.starts_with("refused"),
            "with the socket open to all, {args:?} got {verdict:?}"
        );
        verdicts.push((args.join(" "), verdict));
    }
    for (args, verdict) in &verdicts {
        assert!(
            verdict.starts_with("refused") || verdict.starts_with("unreachable"),
            "the second user got in with {args}: {verdict}"
        );
    }
    // The owner: a rank that is connected cannot be taken over, by TCP or the socket...
    let exists = format!("refused {}", pmix::model::Status::ERR_EXISTS.0);
    for transport in [["--tcp", tcp.as_str()], ["--unix", socket_arg.as_str()]] {
        let args: Vec<&str> = transport
            .iter()
            .copied()
            .chain(["client", nspace.as_str(), "0", ou.as_str(), og.as_str()])
            .collect();
        assert_eq!(attempt(&intruder, None, &args), exists, "{args:?}");
    }
    // ...while the owner's tools still connect.
    let tool = ["--tcp", tcp.as_str(), "tool-none", ou.as_str(), og.as_str()];
    assert_eq!(attempt(&intruder, None, &tool), "accepted");
    std::fs::write(&marker, b"go").unwrap();
    let status = launcher.wait().unwrap();
    let stdout = reader.join().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut launcher.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        status.success() && stdout.matches("ok after intruders").count() == 2,
        "the job did not survive the intruders ({status})\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(
        stderr.contains("refused connection") && stderr.contains("already connected"),
        "refusals are logged with their reasons:\n{stderr}"
    );
}

#[test]
#[ignore = "needs root: creates a second user (cargo xtask test runs it as root)"]
fn a_job_cleans_up_only_what_its_user_owns_and_cannot_signal_its_parent() {
    let (iu, ig) = second_user();
    let scratch = Scratch::new("pmixrs-authority");
    let mine = scratch.0.join("mine");
    let theirs = scratch.0.join("theirs");
    std::fs::write(&mine, b"mine").unwrap();
    std::fs::write(&theirs, b"theirs").unwrap();
    std::os::unix::fs::chown(&theirs, Some(iu), Some(ig)).unwrap();
    let out = Command::new(pmixrun())
        .args(["-n", "1", "--timeout", "120", "--"])
        .arg(env!("CARGO_BIN_EXE_rust_authority_check"))
        .arg(&mine)
        .arg(&theirs)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let wanted = [
        "ok cleanup of my own file",
        "ok cleanup of another user's file refused",
        "ok child may not terminate its parent's job",
        "ok spawned job ended, parent untouched",
    ];
    assert!(
        out.status.success() && wanted.iter().all(|w| stdout.contains(w)),
        "authority checks failed ({:?})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    assert!(!mine.exists(), "the job's own cleanup was not carried out");
    assert!(theirs.exists(), "another user's file was removed");
}
