//! Slurm as the host: Debian's Slurm 22.05 (`slurmctld`, `slurmd`), whose `mpi/pmix` plugin
//! embeds a PMIx server in each job step's `slurmstepd`, runs `srun --mpi=pmix` jobs on a
//! one-node cluster each test starts and stops.
//!
//! The plugin opens OpenPMIx's library by a fixed path (`libpmix.so` in OpenPMIx's library
//! folder, `pkg-config --variable=libdir pmix`), so `LD_LIBRARY_PATH` cannot replace it. To
//! have it host this project's server, `slurmd` runs in a mount namespace of its own, where
//! a copy of that folder, whose `libpmix.so` is this project's library, is mounted over it:
//! the system's files are not touched, and the job's processes, which inherit the
//! namespace, still load OpenPMIx's `libpmix.so.2` unless a test puts this project's first
//! on `LD_LIBRARY_PATH`. `slurmd` is also the first process of a process namespace of its
//! own, so that stopping it ends every step it started.
//!
//! The cluster trusts any local user (`AuthType=auth/none`, no munge) and listens on two
//! free ports of the loopback address only; its files are in a folder of its own under
//! `/tmp` (the step's socket paths must stay short). Mounting needs root: the tests are
//! `#[ignore]`d, and `cargo xtask test` runs them when it runs as root, as CI does.
//!
//! What each run checks: the client check (`tests/interop/c/client_check.c`; Slurm has no
//! publish upcall, so publish and lookup must answer `PMIX_ERR_NOT_SUPPORTED`) and Open MPI's
//! ring (`tests/interop/mpi/ring.c`), on this project's server with OpenPMIx's clients and
//! with this project's, and on OpenPMIx's server with this project's clients.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly by design

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pmix_tests::capi::{library, on_our_library};
use pmix_tests::launch::{build_c, build_mpi, check_says, pkg_config};

/// Which library the plugin's server is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Server {
    OpenPmix,
    ThisProject,
}

/// Why a cluster did not come up, with its logs.
enum Down {
    /// One of its daemons ended.
    Ended(String),
    /// Its daemons run, but it took no job in time.
    NotIdle(String),
}

/// A one-node Slurm cluster, stopped when dropped.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    slurmctld: Child,
    /// `unshare`, whose child is `slurmd`, the first process of its process namespace.
    slurmd: Child,
}

impl Cluster {
    /// The cluster, taking jobs. A daemon that ends while the cluster comes up is most
    /// likely one whose port another program took between `free_ports` and its bind: the
    /// cluster is started again on other ports, three times at most.
    fn start(server: Server) -> Cluster {
        let mut attempt = 1;
        loop {
            let mut cluster = Cluster::launch(server);
            match cluster.wait_until_idle() {
                Ok(()) => return cluster,
                Err(Down::Ended(why)) if attempt < 3 => {
                    eprintln!("the Slurm cluster is started again: {why}");
                    attempt += 1;
                }
                Err(Down::Ended(why) | Down::NotIdle(why)) => panic!("{why}"),
            }
        }
    }

    /// Starts `slurmctld` and `slurmd` on two free ports.
    fn launch(server: Server) -> Cluster {
        let dir = PathBuf::from(format!("/tmp/pmix-slurm-{}-{server:?}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["state", "spool", "log", "tmp"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        std::fs::write(dir.join("plugstack.conf"), "").unwrap();
        let host = short_hostname();
        let [ctld_port, slurmd_port] = free_ports();
        let d = dir.display();
        let conf = dir.join("slurm.conf");
        std::fs::write(
            &conf,
            format!(
                "ClusterName=pmixtest\n\
                 SlurmctldHost={host}(127.0.0.1)\n\
                 SlurmctldPort={ctld_port}\n\
                 SlurmdPort={slurmd_port}\n\
                 AuthType=auth/none\n\
                 CredType=cred/none\n\
                 SlurmUser=root\n\
                 SlurmdUser=root\n\
                 StateSaveLocation={d}/state\n\
                 SlurmdSpoolDir={d}/spool\n\
                 SlurmctldPidFile={d}/slurmctld.pid\n\
                 SlurmdPidFile={d}/slurmd.pid\n\
                 SlurmctldLogFile={d}/log/slurmctld.log\n\
                 SlurmdLogFile={d}/log/slurmd.log\n\
                 SlurmdDebug=debug\n\
                 PlugStackConfig={d}/plugstack.conf\n\
                 MailProg=/bin/true\n\
                 ProctrackType=proctrack/linuxproc\n\
                 TaskPlugin=task/none\n\
                 JobAcctGatherType=jobacct_gather/none\n\
                 AccountingStorageType=accounting_storage/none\n\
                 JobCompType=jobcomp/none\n\
                 SelectType=select/cons_tres\n\
                 SelectTypeParameters=CR_CPU\n\
                 SchedulerType=sched/builtin\n\
                 MpiDefault=none\n\
                 ReturnToService=2\n\
                 InactiveLimit=0\n\
                 KillWait=2\n\
                 NodeName={host} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n\
                 PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP\n"
            ),
        )
        .unwrap();
        let slurmctld = Command::new("slurmctld")
            .args(["-D", "-f"])
            .arg(&conf)
            .stdout(log_file(&dir, "slurmctld.out"))
            .stderr(log_file(&dir, "slurmctld.err"))
            .spawn()
            .expect("slurmctld runs: install slurmctld");
        let mut mounts = String::new();
        if server == Server::ThisProject {
            let system = PathBuf::from(pkg_config(&["--variable=libdir"]).join(""));
            let copy = dir.join("pmixlib");
            let cp = Command::new("cp")
                .arg("-a")
                .arg(system.join("."))
                .arg(&copy)
                .status()
                .unwrap();
            assert!(cp.success(), "copying {}", system.display());
            let ours = copy.join("libpmix.so");
            std::fs::remove_file(&ours).unwrap();
            std::os::unix::fs::symlink(library(), &ours).unwrap();
            mounts = format!(
                "mount --bind '{}' '{}' && ",
                copy.display(),
                system.display()
            );
        }
        let slurmd = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "--pid", "--fork"])
            .args(["--mount-proc", "sh", "-c"])
            .arg(format!("{mounts}exec slurmd -D -f '{}'", conf.display()))
            .stdout(log_file(&dir, "slurmd.out"))
            .stderr(log_file(&dir, "slurmd.err"))
            .spawn()
            .expect("unshare runs (util-linux)");
        Cluster {
            dir,
            conf,
            slurmctld,
            slurmd,
        }
    }

    /// Until the node takes jobs: `sinfo` says it is idle and a step runs, within two
    /// minutes; every command it runs is bounded, so that a cluster that does not come up
    /// fails the test with its logs before the test runner ends it without them.
    #[allow(clippy::disallowed_methods)] // a real cluster's deadline: no simulator reaches it
    fn wait_until_idle(&mut self) -> Result<(), Down> {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Some(why) = self.ended() {
                return Err(Down::Ended(format!(
                    "{why} while the cluster in {} came up:\n{}",
                    self.dir.display(),
                    self.logs()
                )));
            }
            let mut sinfo = self.command("timeout");
            sinfo.args(["-s", "KILL", "10", "sinfo", "-h", "-o", "%T"]);
            let idle = sinfo
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle");
            if idle
                && self
                    .srun_within(30, 1, Path::new("true"), &[])
                    .status()
                    .unwrap()
                    .success()
            {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(Down::NotIdle(format!(
            "the Slurm cluster in {} did not take a job within two minutes:\n{}",
            self.dir.display(),
            self.logs()
        )))
    }

    /// Which daemon has ended, and how, if one has.
    fn ended(&mut self) -> Option<String> {
        let daemons = [
            ("slurmctld", &mut self.slurmctld),
            ("slurmd", &mut self.slurmd),
        ];
        daemons.into_iter().find_map(|(name, daemon)| {
            let status = daemon.try_wait().ok()??;
            Some(format!("{name} ended ({status})"))
        })
    }

    /// A Slurm command for this cluster.
    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", &self.conf);
        cmd
    }

    /// `srun --mpi=pmix` of `program` on `n` tasks, ended after a minute at most (a test's
    /// few steps then end well within the test runner's limit).
    fn srun(&self, n: u32, program: &Path, args: &[&str]) -> Command {
        self.srun_within(60, n, program, args)
    }

    /// `srun --mpi=pmix` of `program` on `n` tasks, ended after `seconds` at most.
    fn srun_within(&self, seconds: u32, n: u32, program: &Path, args: &[&str]) -> Command {
        let mut cmd = self.command("timeout");
        cmd.args([
            "-s",
            "KILL",
            &seconds.to_string(),
            "srun",
            "--mpi=pmix",
            "-t",
            "2",
        ])
        .arg(format!("--ntasks={n}"))
        .arg(program)
        .args(args)
        // The plugin's folder for the clients, per cluster.
        .env("SLURM_PMIX_TMPDIR", self.dir.join("tmp"))
        .stdin(Stdio::null());
        cmd
    }

    /// The server's URI as the step's processes are told it.
    fn server_uri(&self) -> String {
        let out = self
            .srun(1, Path::new("printenv"), &["PMIX_SERVER_URI41"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn logs(&self) -> String {
        ["log/slurmctld.log", "log/slurmd.log", "slurmd.err"]
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(30).collect();
                format!(
                    "--- {f}\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // `slurmd` is the first process of its namespace: ending it ends the steps too.
        let children = format!("/proc/{0}/task/{0}/children", self.slurmd.id());
        if let Ok(pids) = std::fs::read_to_string(children) {
            for pid in pids.split_whitespace() {
                let _ = Command::new("kill").args(["-KILL", pid]).status();
            }
        }
        let _ = self.slurmd.kill();
        let _ = self.slurmd.wait();
        let _ = self.slurmctld.kill();
        let _ = self.slurmctld.wait();
        if std::thread::panicking() {
            eprintln!("the Slurm cluster's logs:\n{}", self.logs());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn log_file(dir: &Path, name: &str) -> std::fs::File {
    std::fs::File::create(dir.join("log").join(name)).unwrap()
}

/// The node's name as Slurm compares it: the kernel's host name up to its first dot.
fn short_hostname() -> String {
    let full = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    full.trim().split('.').next().unwrap().to_owned()
}

/// Two different TCP ports of the loopback address no one listens on now (both are held
/// until both are chosen, so the kernel cannot hand out the same one twice).
fn free_ports() -> [u16; 2] {
    let bind = || std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (first, second) = (bind(), bind());
    [first, second].map(|l| l.local_addr().unwrap().port())
}

/// The client check and the ring on `n` tasks, on OpenPMIx's clients or this project's.
fn clients_pass(cluster: &Cluster, ours: bool, what: &str) {
    let n = 2;
    let mut check = cluster.srun(n, &build_c("client_check"), &["--no-publish-upcall"]);
    let mut ring = cluster.srun(n, &build_mpi("ring"), &[]);
    if ours {
        on_our_library(&mut check);
        on_our_library(&mut ring);
    }
    check_says(
        check,
        n,
        &format!("client_check ({what})"),
        Some("ok finalize"),
    );
    check_says(
        ring,
        n,
        &format!("ring ({what})"),
        Some("ok mpi rank 1 of 2"),
    );
}

#[test]
#[ignore = "needs root: mounts this library over OpenPMIx's in slurmd's namespace (cargo xtask test runs it as root)"]
fn srun_runs_openpmix_and_this_librarys_clients_on_this_librarys_server() {
    let cluster = Cluster::start(Server::ThisProject);
    let uri = cluster.server_uri();
    assert!(
        uri.starts_with("pmix-rs-server-"),
        "the step's server is not this library's: PMIX_SERVER_URI41={uri:?}"
    );
    clients_pass(&cluster, false, "OpenPMIx's clients, this library's server");
    clients_pass(&cluster, true, "this library's clients and server");
}

#[test]
#[ignore = "needs root: runs a Slurm cluster as root (cargo xtask test runs it as root)"]
fn srun_runs_this_librarys_clients_on_openpmixs_server() {
    let cluster = Cluster::start(Server::OpenPmix);
    let uri = cluster.server_uri();
    assert!(
        !uri.is_empty() && !uri.starts_with("pmix-rs-server-"),
        "the step's server is not OpenPMIx's: PMIX_SERVER_URI41={uri:?}"
    );
    clients_pass(&cluster, true, "this library's clients, OpenPMIx's server");
}
