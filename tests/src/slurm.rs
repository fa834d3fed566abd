//! A Slurm cluster of several nodes on one machine, each node a host of its own.
//!
//! Every `slurmd` runs in namespaces this module creates: its own network namespace (an
//! address on a bridge of the cluster's own), UTS namespace (its host name is its node
//! name), mount namespace (its own spool and `tmp` folders mounted over the configured
//! ones, and, when this project's library is the server, a copy of OpenPMIx's library
//! folder whose `libpmix.so` is this project's, mounted over the system's: the plugin opens
//! it by that path) and process namespace (ending its first process ends every step it
//! started). `slurmctld` has a network and UTS namespace of its own on the same bridge, and
//! the commands (`srun`, `sinfo`) run in its network namespace. The bridge sits in a network
//! namespace of its own too: the private addresses exist only inside namespaces the cluster
//! created, and they go when its processes end. Nothing of the machine's is changed.
//!
//! Mounting and namespaces need root. The cluster trusts any local user (`AuthType=auth/none`)
//! and its files are in a folder of its own under `/tmp`, removed when it stops.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::capi::library;
use crate::launch::pkg_config;

/// How long the plugin's collectives wait for a node, and the cluster for a silent node's
/// daemon, before giving up on it (`PMIxTimeout`, `SlurmdTimeout`), in seconds.
pub const LOSS_TIMEOUT_S: u32 = 20;

/// The cluster's network: the nodes are `.1` to `.N`, `slurmctld` is `.254`.
const NET: &str = "10.213.7";

/// Which library the plugin's servers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    OpenPmix,
    ThisProject,
}

/// A running cluster; stopped (every process ended, its folder removed) when dropped.
#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    nodes: usize,
    /// The process holding the bridge's network namespace.
    fabric: Child,
    /// `unshare` of `slurmctld`'s namespaces (its child is `slurmctld`), once started.
    ctld: Option<Child>,
    /// `unshare` of each node's namespaces (its child, the first process of the node's
    /// process namespace, is `slurmd`).
    slurmds: Vec<Child>,
    /// The nodes lost ([`Cluster::lose_node`]): already ended.
    lost: Vec<usize>,
}

impl Cluster {
    /// A cluster of `nodes` nodes (1 to 253) taking jobs, its servers `server`'s library.
    pub fn start(nodes: usize, server: Server, dir: &Path) -> Result<Cluster, String> {
        assert!((1..=253).contains(&nodes), "1 to 253 nodes");
        let _ = std::fs::remove_dir_all(dir);
        for sub in ["state", "spool", "log", "tmp"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
        }
        std::fs::write(dir.join("plugstack.conf"), "").map_err(|e| e.to_string())?;
        // Slurm's default tree width (50) makes the plugin's tree hold each node alone, so that
        // a fence without data would not cross the nodes (with either library as the servers):
        // a width of 2 gives the 4 nodes a tree of two levels. The plugin's collectives give
        // up after this long (300 s by default), as the
        // cluster declares a silent node down (`SlurmdTimeout`): a lost node ends a job in
        // well under a minute.
        std::fs::write(
            dir.join("mpi.conf"),
            format!("PMIxTimeout={LOSS_TIMEOUT_S}\n"),
        )
        .map_err(|e| e.to_string())?;
        let conf = dir.join("slurm.conf");
        std::fs::write(&conf, slurm_conf(dir, nodes)).map_err(|e| e.to_string())?;
        let fabric = spawn(
            Command::new("unshare").args(["--net", "sleep", "infinity"]),
            dir,
            "fabric",
        )?;
        let mut cluster = Cluster {
            dir: dir.to_owned(),
            conf,
            nodes,
            fabric,
            ctld: None,
            slurmds: Vec::new(),
            lost: Vec::new(),
        };
        cluster.wait_own_netns(cluster.fabric.id())?;
        let fab = cluster.fabric.id();
        for args in [
            &["link", "set", "lo", "up"][..],
            &["link", "add", "br0", "type", "bridge"],
            &["link", "set", "br0", "up"],
        ] {
            ip(fab, args)?;
        }
        let d = dir.display();
        let ready = |name: &str| format!("while [ ! -e '{d}/{name}.net' ]; do sleep 0.05; done");
        let ctld = spawn(
            Command::new("unshare")
                .args(["--net", "--uts", "sh", "-c"])
                .arg(format!(
                    "hostname ctl && {} && exec slurmctld -D -f '{d}/slurm.conf'",
                    ready("ctl")
                )),
            dir,
            "slurmctld",
        )?;
        let ctld_pid = ctld.id();
        cluster.ctld = Some(ctld);
        cluster.attach(ctld_pid, "ctl", 254)?;
        let libmount = match server {
            Server::OpenPmix => String::new(),
            Server::ThisProject => {
                let system = PathBuf::from(pkg_config(&["--variable=libdir"]).join(""));
                let copy = dir.join("pmixlib");
                let cp = Command::new("cp")
                    .arg("-a")
                    .arg(system.join("."))
                    .arg(&copy)
                    .status()
                    .map_err(|e| e.to_string())?;
                if !cp.success() {
                    return Err(format!("cannot copy {}", system.display()));
                }
                let ours = copy.join("libpmix.so");
                std::fs::remove_file(&ours).map_err(|e| e.to_string())?;
                std::os::unix::fs::symlink(library(), &ours).map_err(|e| e.to_string())?;
                format!(
                    "mount --bind '{}' '{}' && ",
                    copy.display(),
                    system.display()
                )
            }
        };
        for i in 0..nodes {
            let name = format!("node{i}");
            for sub in ["spool", "tmp"] {
                std::fs::create_dir_all(dir.join(&name).join(sub)).map_err(|e| e.to_string())?;
            }
            let script = format!(
                "hostname {name} && \
                 mount --bind '{d}/{name}/spool' '{d}/spool' && \
                 mount --bind '{d}/{name}/tmp' '{d}/tmp' && {libmount}{} && \
                 exec slurmd -D -f '{d}/slurm.conf'",
                ready(&name)
            );
            let slurmd = spawn(
                Command::new("unshare")
                    .args(["--net", "--uts", "--mount", "--propagation", "private"])
                    .args(["--pid", "--fork", "--mount-proc", "sh", "-c"])
                    .arg(script)
                    .env("PMIX_RS_LOG", "warn")
                    .env(
                        "PMIX_RS_LOG_FILE",
                        dir.join("log").join(format!("pmix-{name}.%p.log")),
                    ),
                dir,
                &name,
            )?;
            let pid = slurmd.id();
            cluster.slurmds.push(slurmd);
            cluster.attach(pid, &name, i + 1)?;
        }
        cluster.wait_until_idle()?;
        Ok(cluster)
    }

    /// Give the namespace of `pid` the address `NET.host` on the bridge, as `name`, and tell
    /// its process to go on.
    fn attach(&self, pid: u32, name: &str, host: usize) -> Result<(), String> {
        self.wait_own_netns(pid)?;
        let fab = self.fabric.id();
        let veth = format!("v{name}");
        let pid_s = pid.to_string();
        ip(
            fab,
            &[
                "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &pid_s,
            ],
        )?;
        ip(fab, &["link", "set", &veth, "master", "br0", "up"])?;
        ip(pid, &["link", "set", "lo", "up"])?;
        ip(
            pid,
            &["addr", "add", &format!("{NET}.{host}/24"), "dev", "eth0"],
        )?;
        ip(pid, &["link", "set", "eth0", "up"])?;
        std::fs::write(self.dir.join(format!("{name}.net")), "").map_err(|e| e.to_string())
    }

    /// Until `pid` is in a network namespace other than this process's (`unshare` has made
    /// it), within ten seconds.
    #[allow(clippy::disallowed_methods)] // a real process's deadline: no simulator reaches it
    fn wait_own_netns(&self, pid: u32) -> Result<(), String> {
        let ns = |p: &str| std::fs::read_link(format!("/proc/{p}/ns/net")).ok();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if ns(&pid.to_string()).is_some_and(|theirs| Some(theirs) != ns("self")) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(format!(
            "process {pid} has no network namespace of its own:\n{}",
            self.logs()
        ))
    }

    /// Until every node is idle and a step runs on all of them, within two minutes.
    #[allow(clippy::disallowed_methods)] // a real cluster's deadline: no simulator reaches it
    fn wait_until_idle(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Some(why) = self.ended() {
                return Err(format!("{why} while the cluster came up:\n{}", self.logs()));
            }
            let mut sinfo = self.command("timeout");
            sinfo.args(["-s", "KILL", "10", "sinfo", "-h", "-o", "%T %D"]);
            let idle = sinfo.output().is_ok_and(|o| {
                String::from_utf8_lossy(&o.stdout).trim() == format!("idle {}", self.nodes)
            });
            if idle {
                let mut step = self.srun_within(30, self.nodes, self.nodes, Path::new("true"), &[]);
                if step.status().is_ok_and(|s| s.success()) {
                    return Ok(());
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(format!(
            "the cluster took no job within two minutes:\n{}",
            self.logs()
        ))
    }

    /// Which daemon has ended, and how, if one has.
    fn ended(&mut self) -> Option<String> {
        let mut daemons: Vec<(String, &mut Child)> = Vec::new();
        if let Some(ctld) = &mut self.ctld {
            daemons.push(("slurmctld".to_owned(), ctld));
        }
        for (i, d) in self.slurmds.iter_mut().enumerate() {
            if self.lost.contains(&i) {
                continue;
            }
            daemons.push((format!("slurmd of node{i}"), d));
        }
        daemons.into_iter().find_map(|(name, daemon)| {
            let status = daemon.try_wait().ok()??;
            Some(format!("{name} ended ({status})"))
        })
    }

    /// A command of the cluster's (`sinfo`, `srun`, or `timeout` of one), run where
    /// `slurmctld` runs.
    pub fn command(&self, program: &str) -> Command {
        let ctld = self.ctld.as_ref().map_or(0, Child::id);
        let mut cmd = Command::new("nsenter");
        cmd.arg("-t")
            .arg(ctld.to_string())
            .args(["-n", "--"])
            .arg(program)
            .env("SLURM_CONF", &self.conf);
        cmd
    }

    /// A shell script that runs its arguments as a command of the cluster's (as
    /// [`Cluster::command`] does), for a person at a terminal.
    pub fn run_script(&self) -> String {
        let ctld = self.ctld.as_ref().map_or(0, Child::id);
        format!(
            "#!/bin/sh
             # Runs a command in the Slurm cluster of this folder, where slurmctld runs.
             export SLURM_CONF='{}' SLURM_PMIX_TMPDIR='{}'
             exec nsenter -t {ctld} -n -- \"$@\"\n",
            self.conf.display(),
            self.dir.join("tmp").display()
        )
    }

    /// `srun --mpi=pmix` of `program` on `n` tasks over `nodes` nodes, ended after a minute
    /// at most.
    pub fn srun(&self, nodes: usize, n: usize, program: &Path, args: &[&str]) -> Command {
        self.srun_within(60, nodes, n, program, args)
    }

    /// `srun --mpi=pmix` of `program` on `n` tasks over `nodes` nodes, ended after `seconds`
    /// (the step's time limit is a minute more).
    pub fn srun_within(
        &self,
        seconds: u32,
        nodes: usize,
        n: usize,
        program: &Path,
        args: &[&str],
    ) -> Command {
        let mut cmd = self.command("timeout");
        cmd.args([
            "-s",
            "KILL",
            &seconds.to_string(),
            "srun",
            "--mpi=pmix",
            "-t",
            &(seconds.div_ceil(60) + 1).to_string(),
        ])
        .arg(format!("--nodes={nodes}"))
        .arg(format!("--ntasks={n}"))
        .arg(program)
        .args(args)
        // The plugin's folder for the clients: each node's own, mounted over this path.
        .env("SLURM_PMIX_TMPDIR", self.dir.join("tmp"))
        .stdin(Stdio::null());
        cmd
    }

    /// The servers' URIs as one rank on each node is told them (`PMIX_SERVER_URI41`), in
    /// node order: this project's servers name themselves `pmix-rs-server-...`.
    pub fn server_uris(&self) -> Result<Vec<String>, String> {
        let n = self.nodes - self.lost.len();
        let out = self
            .srun(
                n,
                n,
                Path::new("sh"),
                &["-c", "echo \"$SLURM_NODEID $PMIX_SERVER_URI41\""],
            )
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "srun of sh: {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let mut lines: Vec<(usize, String)> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let (node, uri) = l.split_once(' ')?;
                Some((node.parse().ok()?, uri.to_owned()))
            })
            .collect();
        lines.sort();
        Ok(lines.into_iter().map(|(_, uri)| uri).collect())
    }

    /// Lose node `i` as a machine is lost: its `slurmd` and every process it started (the
    /// steps' daemons, their PMIx servers, the ranks) end at once, without a word to anyone,
    /// and its network goes with them.
    pub fn lose_node(&mut self, i: usize) {
        if let Some(node) = self.slurmds.get_mut(i)
            && !self.lost.contains(&i)
        {
            end_with_children(node);
            self.lost.push(i);
        }
    }

    /// The cluster's folder (removed when it stops).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The namespaces the cluster created (network, UTS, mount and process ones, as
    /// `/proc/PID/ns` names them: `net:[4026532297]`), read from its daemons.
    pub fn namespaces(&self) -> Vec<String> {
        let mut pids = vec![self.fabric.id()];
        pids.extend(self.ctld.iter().map(Child::id));
        pids.extend(self.slurmds.iter().map(Child::id));
        // `unshare --fork` runs in the namespaces it made but its process one: that one is
        // its child's.
        let children: Vec<u32> = (pids.iter())
            .flat_map(|p| std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")))
            .flat_map(|c| c.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .filter_map(|c| c.parse().ok())
            .collect();
        pids.extend(children);
        let mut found: Vec<String> = namespaces_of_processes(&pids)
            .into_iter()
            .filter(|ns| !namespaces_of_processes(&[std::process::id()]).contains(ns))
            .collect();
        found.sort();
        found.dedup();
        found
    }

    /// The last lines of the daemons' logs and of this library's, for a failure's message.
    pub fn logs(&self) -> String {
        let Ok(entries) = std::fs::read_dir(self.dir.join("log")) else {
            return String::new();
        };
        let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        files
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(f).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(20).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                format!("--- {}\n{}", f.display(), tail.join("\n"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let lost = &self.lost;
        let nodes = (self.slurmds.iter_mut().enumerate())
            .filter(|(i, _)| !lost.contains(i))
            .map(|(_, d)| d);
        for daemon in nodes.chain(&mut self.ctld).chain([&mut self.fabric]) {
            end_with_children(daemon);
        }
        if std::thread::panicking() {
            eprintln!("the Slurm cluster's logs:\n{}", self.logs());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The network, UTS, mount and process namespaces of `pids`.
fn namespaces_of_processes(pids: &[u32]) -> Vec<String> {
    let mut found = Vec::new();
    for pid in pids {
        for kind in ["net", "uts", "mnt", "pid"] {
            if let Ok(ns) = std::fs::read_link(format!("/proc/{pid}/ns/{kind}")) {
                found.push(ns.to_string_lossy().into_owned());
            }
        }
    }
    found
}

/// Every process of this machine in one of `namespaces` (as [`Cluster::namespaces`] names
/// them), with its command line: what a stopped cluster left behind.
pub fn processes_in(namespaces: &[String]) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let pids: Vec<u32> = (entries.flatten())
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    pids.into_iter()
        .filter(|pid| (namespaces_of_processes(&[*pid]).iter()).any(|ns| namespaces.contains(ns)))
        .map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmd).replace('\0', " ")
            )
        })
        .collect()
}

/// End `daemon` and its children: a node's first process (`unshare`'s child) ends every
/// process of its namespace with it.
fn end_with_children(daemon: &mut Child) {
    let children = format!("/proc/{0}/task/{0}/children", daemon.id());
    if let Ok(pids) = std::fs::read_to_string(children) {
        for pid in pids.split_whitespace() {
            let _ = Command::new("kill").args(["-KILL", pid]).status();
        }
    }
    let _ = daemon.kill();
    let _ = daemon.wait();
}

/// Run `args` of `ip` in the network namespace of `pid`.
fn ip(pid: u32, args: &[&str]) -> Result<(), String> {
    let out = Command::new("nsenter")
        .args(["-t", &pid.to_string(), "-n", "ip"])
        .args(args)
        .output()
        .map_err(|e| format!("nsenter runs (util-linux): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {} in the namespace of {pid}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Start `cmd` with its output in the cluster's log folder.
fn spawn(cmd: &mut Command, dir: &Path, name: &str) -> Result<Child, String> {
    let log = |ext: &str| std::fs::File::create(dir.join("log").join(format!("{name}.{ext}")));
    let (out, err) = (log("out"), log("err"));
    let (Ok(out), Ok(err)) = (out, err) else {
        return Err(format!("cannot create the logs of {name}"));
    };
    cmd.stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {name}: {e}"))
}

/// The cluster's `slurm.conf`: `nodes` nodes at `NET.1..`, `slurmctld` at `NET.254`.
fn slurm_conf(dir: &Path, nodes: usize) -> String {
    let d = dir.display();
    let last = nodes - 1;
    let list = if nodes == 1 {
        "node0".to_owned()
    } else {
        format!("node[0-{last}]")
    };
    let addrs = if nodes == 1 {
        format!("{NET}.1")
    } else {
        format!("{NET}.[1-{nodes}]")
    };
    format!(
        "ClusterName=pmixnodes\n\
         SlurmctldHost=ctl({NET}.254)\n\
         AuthType=auth/none\n\
         CredType=cred/none\n\
         SlurmUser=root\n\
         SlurmdUser=root\n\
         StateSaveLocation={d}/state\n\
         SlurmdSpoolDir={d}/spool\n\
         SlurmctldPidFile={d}/slurmctld.pid\n\
         SlurmdPidFile={d}/spool/slurmd.pid\n\
         SlurmctldLogFile={d}/log/slurmctld.log\n\
         SlurmdLogFile={d}/log/slurmd.%n.log\n\
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
         SlurmdTimeout={LOSS_TIMEOUT_S}\n\
         TreeWidth=2\n\
         NodeName={list} NodeAddr={addrs} CPUs=2 State=UNKNOWN\n\
         PartitionName=debug Nodes={list} Default=YES MaxTime=INFINITE State=UP\n"
    )
}
