//! `pmixrun -n N [--timeout SECONDS] [--pset NAME] [--bind-to none|core|hwthread]
//! [--stdin RANK|all|none] [--] PROGRAM [ARGS...]`: run N copies of a program on this machine under a PMIx server of this
//! crate.
//!
//! It starts a server, registers one job with complete job, node, application and process
//! information (with `--pset`, the process set the processes form, defined before they
//! start and listed in each one's `PMIX_PSET_NAMES`; each process's `PMIX_CPUSET`,
//! `PMIX_LOCALITY_STRING` and `PMIX_DEVICE_DISTANCES`; the machine's topology, shared so that no process rediscovers it),
//! forks the processes with the environment their PMIx client needs (and what MPI runtimes
//! look for to recognise a direct launch), with `--bind-to` each bound to one core or hardware
//! thread, round robin, relays their output (to its own stdout and stderr, and to the tools
//! that pull it: `output.rs`) and its own input to the ranks `--stdin` names (rank 0 by
//! default; tools push input there too: `input.rs`), and returns the worst exit status. A process that connects but exits without `PMIx_Finalize` is
//! reported and fails the run.
//!
//! As the host (`host.rs`) it:
//! - starts the jobs its processes spawn (`PMIx_Spawn`: checked and described by
//!   `pmix::host::launch`, registered, forked and watched like the first job; `pmixrun`
//!   ends when every job has);
//! - answers publish/lookup/unpublish, abort (the job, or only the processes listed) and
//!   queries (`PMIX_QUERY_NAMESPACES`, `PMIX_QUERY_JOB_STATUS`, the process table with real
//!   pids, states and exit codes);
//! - describes the machine's network interfaces as a fabric (`PMIx_Fabric_register`);
//! - assigns process groups their context ids (the server completes the groups: every member
//!   runs here);
//! - signals processes for job control, removes registered cleanup paths at the end, grants
//!   one-node allocations and watches heartbeats;
//! - raises events: `PMIX_EVENT_PROC_TERMINATED` (and `PMIX_ERR_PROC_TERM_WO_SYNC` for a
//!   process that never finalized) as each process ends, `PMIX_MONITOR_HEARTBEAT_ALERT` for a
//!   silent one, `PMIX_EVENT_JOB_END` when the job is over.

#![forbid(unsafe_code)]

mod ending;
mod host;
mod input;
mod output;

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use clap::Parser;

use pmix::host::launch::{self, JobLaunch, Placement};
use pmix::model::{
    App, Cpuset, DataArray, DataRange, Info, IofChannel, Nspace, Proc, Rank, Status, Text, Time,
    attr,
};
use pmix::server::{Server, ServerConfig, inherited_server_vars};
use pmix::topology::Machine;
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot};

use ending::Ending;
use host::{HostEvent, RunHost, lock};
use input::StdinTarget;
use nix::sys::signal::Signal;
use pmix::host::control::Authority;
use pmix::transport::uid_gid;

/// Run N copies of a program on this machine under a PMIx server: one job, with complete job,
/// node, application and process information; the run ends with the worst exit status.
#[derive(Debug, Parser)]
#[command(name = "pmixrun", version)]
struct Options {
    /// How many processes (`-np` and `--np` are read as `-n`).
    #[arg(short = 'n', value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    n: u32,
    /// End a job that runs longer than this (exit status 124).
    #[arg(long = "timeout", value_name = "SECONDS")]
    timeout_s: Option<u64>,
    /// The process set the job's processes form (in each one's PMIX_PSET_NAMES).
    #[arg(long, value_name = "NAME", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pset: Option<String>,
    /// Bind each process to one core or hardware thread, round robin.
    #[arg(long = "bind-to", value_name = "none|core|hwthread", value_parser = binding, default_value = "none")]
    bind: Binding,
    /// A failed process does not end the job (for fault-tolerant jobs).
    #[arg(long = "enable-recovery")]
    recover: bool,
    /// Which ranks read the launcher's standard input; the others read an empty input.
    #[arg(long = "stdin", value_name = "RANK|all|none", value_parser = input::stdin_target, default_value = "0")]
    stdin: StdinTarget,
    /// The program, then its arguments (everything after the program is its own).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM"
    )]
    command: Vec<String>,
}

/// Bind each process to one core (`Some(false)`) or hardware thread (`Some(true)`).
#[derive(Clone, Copy, Debug)]
struct Binding(Option<bool>);

fn binding(v: &str) -> Result<Binding, String> {
    match v {
        "none" => Ok(Binding(None)),
        "core" => Ok(Binding(Some(false))),
        "hwthread" => Ok(Binding(Some(true))),
        other => Err(format!("none, core or hwthread, not {other}")),
    }
}

impl Options {
    /// The command line, with mpirun's `-np N` read as `-n N`.
    fn from_args() -> Options {
        let args = std::env::args().enumerate().map(|(i, a)| {
            if i > 0 && (a == "-np" || a == "--np") {
                "-n".to_owned()
            } else {
                a
            }
        });
        Options::parse_from(args)
    }

    fn program(&self) -> &str {
        &self.command[0]
    }

    fn args(&self) -> &[String] {
        &self.command[1..]
    }
}

/// Variables MPI runtimes check to decide they were direct-launched by a resource manager,
/// and how to behave on this node.
///
/// Debian's Open MPI 4.1 starts as a singleton unless one of its launch-detection components
/// recognises the environment; its Flux detection needs only `FLUX_JOB_ID`, and then it takes
/// everything else (rank, size, peers, locality) from the PMIx server. Measured: without it,
/// every rank is rank 0 of 1; with it alone, a 4-rank ring runs.
///
/// Open MPI 4.1 busy-polls unless told the node is oversubscribed, and it reads that from its
/// own variable only (`mpi_oversubscribe`, which sets `mpi_yield_when_idle`), not from
/// `PMIX_NODE_OVERSUBSCRIBED` (Open MPI 5 reads that): an oversubscribed job gets
/// `OMPI_MCA_mpi_oversubscribe=1`, as `mpirun` exports, unless the user set it. Measured on 2
/// cores, 4 ranks of mpi4py's collective tests: 104 s polling, 2 s yielding.
fn launcher_env(nspace: &Nspace, oversubscribed: bool) -> Vec<(String, String)> {
    let mut env = vec![("FLUX_JOB_ID".into(), nspace.as_str().to_owned())];
    let oversubscribe = "OMPI_MCA_mpi_oversubscribe";
    if oversubscribed && std::env::var_os(oversubscribe).is_none() {
        env.push((oversubscribe.into(), "1".into()));
    }
    env
}

/// A spawn request from a client, handed by the host to the launcher's loop.
pub(crate) struct SpawnRequest {
    pub(crate) parent: Proc,
    pub(crate) job_info: Vec<Info>,
    pub(crate) apps: Vec<App>,
    pub(crate) answer: oneshot::Sender<Result<Nspace, Status>>,
}

/// How a process ended, as its waiter reports it.
type Exit = (Proc, std::io::Result<std::process::ExitStatus>);

/// What the launcher needs to start a job.
struct Launcher<'a> {
    server: &'a Server,
    host: &'a RunHost,
    exits: mpsc::UnboundedSender<Exit>,
    /// The processes' output, for the server (`output.rs`).
    outputs: mpsc::UnboundedSender<output::Output>,
    /// `--bind-to`: one core (`false`) or hardware thread (`true`) per process.
    bind: Option<bool>,
}

impl Launcher<'_> {
    /// Register `job` with the server and fork its processes, each watched until it exits;
    /// the ranks `stdin` names read an input the launcher writes (`input.rs`).
    async fn start(&self, job: &JobLaunch, stdin: StdinTarget) -> Result<(), Status> {
        let (bindings, placement) = self.placement(job.size());
        let oversubscribed = self.host.running_count() + job.size() > self.processors();
        let job = &JobLaunch {
            placement,
            oversubscribed,
            ..job.clone()
        };
        self.server
            .register_nspace(job.nspace.clone(), launch::job_info(job))
            .await
            .map_err(|e| e.status())?;
        // Sets named by the job's apps exist before any of their processes starts.
        for (name, members) in job.psets() {
            self.server.define_process_set(&name, members).await?;
        }
        let (uid, gid) = uid_gid();
        for (proc, app) in job.procs() {
            let app = &job.apps[app];
            self.server
                .register_client(proc.clone(), uid, gid)
                .await
                .map_err(|e| e.status())?;
            let mut cmd = Command::new(&app.exe);
            if let Some((first, rest)) = app.argv.split_first() {
                cmd.arg0(first).args(rest);
            }
            let server_env = self.server.setup_fork(&proc);
            // An outer server's URIs (pmixrun run under another launcher) must not reach the
            // process: OpenPMIx 6.1 would take its URI61 before this server's URI41.
            let own: Vec<String> = std::env::vars_os()
                .filter_map(|(k, _)| k.into_string().ok())
                .collect();
            for stale in inherited_server_vars(own.iter().map(String::as_str), &server_env) {
                cmd.env_remove(stale);
            }
            cmd.envs(app.env_pairs())
                .envs(server_env)
                .envs(launcher_env(&job.nspace, job.oversubscribed))
                .stdin(if stdin.takes(proc.rank) {
                    Stdio::piped()
                } else {
                    Stdio::null()
                })
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true);
            if let Some(dir) = &app.cwd {
                cmd.current_dir(dir);
            }
            let spawned = match (bindings.get(proc.rank.0 as usize), &self.machine()) {
                (Some(unit), Some(machine)) => bound_spawn(machine, unit, &mut cmd),
                _ => cmd.spawn(),
            };
            let mut child = spawned.map_err(|e| {
                eprintln!("pmixrun: cannot start {}: {e}", app.exe.display());
                Status::ERR_JOB_FAILED_TO_LAUNCH
            })?;
            if let Some(pipe) = child.stdin.take() {
                self.host.inputs.add(proc.clone(), pipe);
            }
            let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
            let exe = Text::from(app.exe.as_os_str().as_bytes());
            self.host
                .started(proc.clone(), pid, (exe, app.command_line()), &job.hostname);
            let relays: Vec<_> = [
                (child.stdout.take().map(boxed), IofChannel::STDOUT_CHANNEL),
                (child.stderr.take().map(boxed), IofChannel::STDERR_CHANNEL),
            ]
            .into_iter()
            .filter_map(|(pipe, channel)| {
                output::relay(pipe, proc.clone(), channel, self.outputs.clone())
            })
            .collect();
            let tx = self.exits.clone();
            tokio::spawn(async move {
                let status = child.wait().await;
                output::drained(relays).await;
                let _ = tx.send((proc, status));
            });
        }
        Ok(())
    }

    /// How many processes this machine runs without oversubscribing it: one per unit
    /// `--bind-to` binds to, else one per processor `pmixrun` may run on.
    fn processors(&self) -> u32 {
        let units = match (self.bind, self.machine()) {
            (Some(per_thread), Some(machine)) => machine.units(per_thread).len(),
            _ => 0,
        };
        let usable = match units {
            0 => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            k => k,
        };
        u32::try_from(usable).unwrap_or(u32::MAX)
    }

    /// The machine's topology, or `None` when it cannot be loaded (the server logs why):
    /// the processes then run unbound and undescribed.
    fn machine(&self) -> Option<std::sync::Arc<Machine>> {
        self.server.topology().ok()
    }

    /// The cpuset each of `n` processes is bound to (empty without `--bind-to`) and where
    /// each one runs, by rank. Without binding, a process runs where `pmixrun` may.
    fn placement(&self, n: u32) -> (Vec<Cpuset>, Vec<Placement>) {
        let Some(machine) = self.machine() else {
            return (Vec::new(), Vec::new());
        };
        let units = match self.bind {
            Some(per_thread) => machine.units(per_thread),
            None => Vec::new(),
        };
        let inherited = machine.binding(false).unwrap_or_else(|_| machine.all());
        let bindings: Vec<Cpuset> = match units.len() {
            0 => Vec::new(),
            k => (0..n as usize).map(|r| units[r % k].clone()).collect(),
        };
        let placement = (0..n as usize)
            .map(|r| {
                let cpuset = bindings.get(r).unwrap_or(&inherited);
                Placement {
                    cpuset: self
                        .server
                        .generate_cpuset_string(cpuset)
                        .unwrap_or_default(),
                    locality: self
                        .server
                        .generate_locality_string(cpuset)
                        .unwrap_or_default(),
                    distances: machine
                        .distances(cpuset, pmix::model::DeviceType::UNKNOWN, &[])
                        .unwrap_or_default(),
                }
            })
            .collect();
        (bindings, placement)
    }
}

/// A pipe of a child, as the relays read it.
fn boxed<R: tokio::io::AsyncRead + Unpin + Send + 'static>(
    pipe: R,
) -> Box<dyn tokio::io::AsyncRead + Unpin + Send> {
    Box::new(pipe)
}

/// Start `cmd` bound to `unit`: the calling thread is bound while it forks, so the child
/// starts with the binding (no thread of it ever runs elsewhere), then unbound again.
fn bound_spawn(
    machine: &Machine,
    unit: &Cpuset,
    cmd: &mut Command,
) -> std::io::Result<tokio::process::Child> {
    let before = machine.binding(true).unwrap_or_else(|_| machine.all());
    if let Err(e) = machine.bind_this_thread(unit) {
        eprintln!("pmixrun: cannot bind to {:?}: {e}", unit.bitmap);
    }
    let child = cmd.spawn();
    if let Err(e) = machine.bind_this_thread(&before) {
        eprintln!("pmixrun: cannot restore the launcher's binding: {e}");
    }
    child
}

/// The launcher's own directory under `$TMPDIR` (the server's socket and tool rendezvous
/// files), removed however the run ends: normally, on an error, or on a signal.
struct TmpDir(std::path::PathBuf);

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Why the launcher is ending a job that has not ended by itself, and the status it exits
/// with.
struct Stop {
    code: u8,
    term: Status,
}

/// How long processes get to end on their own after the job's end is announced, then after
/// SIGTERM, before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

async fn run(opts: Options) -> Result<u8, String> {
    let pid = std::process::id();
    let tmpdir = TmpDir(std::env::temp_dir().join(format!("pmixrun.{pid}")));
    std::fs::create_dir_all(&tmpdir.0)
        .map_err(|e| format!("cannot create {}: {e}", tmpdir.0.display()))?;
    let host = RunHost::default();
    let (spawn_tx, mut spawns) = mpsc::unbounded_channel::<SpawnRequest>();
    *lock(&host.spawner) = Some(spawn_tx);
    let (event_tx, mut host_events) = mpsc::unbounded_channel::<HostEvent>();
    *lock(&host.events) = Some(event_tx);
    // The server's own defaults otherwise: its pid-named identity, the kernel's host name.
    let tmp = tmpdir.0.display().to_string();
    let init = [Info::new(attr::SERVER_TMPDIR, tmp.clone())];
    let mut config =
        ServerConfig::from_info(&init).map_err(|(_, e)| format!("server configuration: {e}"))?;
    let host_name = config.hostname.clone();
    // Tools attach with `--pid <pmixrun's pid>` or `--uri`: this user's, and root's.
    config.tool_rendezvous = true;
    config.tool_uids = vec![uid_gid().0, 0];
    // Processes load the machine's topology from the server instead of rediscovering it.
    config.share_topology = true;
    let server = Server::start(config, host.clone())
        .await
        .map_err(|e| format!("cannot start the PMIx server: {e}"))?;
    // OpenPMIx treats every key that starts with "pmix" as reserved, and programs name their
    // keys after their namespace: the namespace must not start so.
    let nspace = Nspace::new(format!("job.{pid}")).map_err(|e| e.to_string())?;
    *lock(&host.nspace) = Some(nspace.clone());
    let app = App {
        cmd: Some(opts.program().into()),
        argv: std::iter::once(opts.program())
            .chain(opts.args().iter().map(String::as_str))
            .map(|a| Some(a.into()))
            .collect(),
        maxprocs: i32::try_from(opts.n).map_err(|_| "-n is too large")?,
        info: opts
            .pset
            .iter()
            .map(|name| Info::new(attr::PSET_NAME, name.clone()))
            .collect(),
        ..App::default()
    };
    let job = launch::plan(nspace.clone(), &host_name, None, &[], &[app], &tmp)
        .map_err(|s| format!("cannot start {}: {s:?}", opts.program()))?;

    // Each process's exit arrives as it happens, so the others hear of it at once.
    let (exits_tx, mut exits) = mpsc::unbounded_channel::<Exit>();
    let (outputs_tx, mut outputs) = mpsc::unbounded_channel::<output::Output>();
    let launcher = Launcher {
        server: &server,
        host: &host,
        exits: exits_tx,
        outputs: outputs_tx,
        bind: opts.bind.0,
    };
    launcher
        .start(&job, opts.stdin)
        .await
        .map_err(|s| format!("cannot start the job: {s:?}"))?;
    let readers: Vec<Proc> = job
        .procs()
        .into_iter()
        .map(|(proc, _)| proc)
        .filter(|p| opts.stdin.takes(p.rank))
        .collect();
    if !readers.is_empty() {
        input::forward_own_input(host.inputs.clone(), readers);
    }
    let mut jobs_spawned = 0u32;
    // The jobs spawned so far, with what their requesters asked to hear of them.
    let mut spawned: BTreeMap<Nspace, Spawned> = BTreeMap::new();
    let deadline = async {
        match opts.timeout_s {
            Some(t) => tokio::time::sleep(Duration::from_secs(t)).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let mut signals = Signals::new().map_err(|e| format!("cannot watch signals: {e}"))?;
    let mut worst: u8 = 0;
    let mut first_failure: Option<(Proc, i32)> = None;
    // The job's PMIX_JOB_TERM_STATUS: what ended it first.
    let mut term = Status::SUCCESS;
    // Set once the launcher ends the job: the status it exits with; and the next step of
    // the ending (SIGTERM, then SIGKILL) with its time.
    let mut stopping: Option<Stop> = None;
    let mut next_kill: Option<(tokio::time::Instant, Signal)> = None;
    // Processes still running, of the job and of the jobs it spawned.
    let mut left = job.size();
    while left > 0 {
        let kill_timer = async {
            match next_kill {
                Some((at, _)) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let mut stop = None;
        tokio::select! {
            biased;
            signal = signals.recv() => {
                if stopping.is_some() {
                    eprintln!("pmixrun: {} again; killing the job", signal.as_str());
                    host.signal_all(Signal::SIGKILL);
                } else {
                    eprintln!("pmixrun: {}; ending the job", signal.as_str());
                    let code = u8::try_from(128 + signal as i32).unwrap_or(255);
                    stop = Some(Stop { code, term: Status::ERR_JOB_CANCELED });
                }
            }
            () = host.abort_requested.notified() => {
                let (proc, status, message) = lock(&host.abort).clone().unwrap_or((Proc::new(nspace.clone(), Rank(0)), Status(1), None));
                eprintln!(
                    "pmixrun: {proc} called PMIx_Abort with status {}{}",
                    status.0,
                    message.map(|m| format!(": {m}")).unwrap_or_default()
                );
                first_failure.get_or_insert((proc, status.0));
                let code = u8::try_from(status.0.unsigned_abs().clamp(1, 255)).unwrap_or(1);
                stop = Some(Stop { code, term: Status::ERR_JOB_ABORTED });
            }
            Some(e) = host_events.recv() => {
                if let Some(report) = &e.report {
                    eprintln!("pmixrun: {report}");
                }
                if let Err(s) = server.notify_event(e.status, None, e.range, e.info).await {
                    eprintln!("pmixrun: cannot raise {:?}: {s:?}", e.status);
                }
            }
            Some(req) = spawns.recv() => {
                if stopping.is_some() {
                    let _ = req.answer.send(Err(Status::ERR_JOB_CANCELED));
                    continue;
                }
                jobs_spawned += 1;
                let watch = Spawned::asked(&req.parent, &req.job_info);
                let started = match Nspace::new(format!("{}.{jobs_spawned}", nspace.as_str())) {
                    Ok(child) => match launch::plan(child, &host_name, Some(req.parent.clone()), &req.job_info, &req.apps, &tmp) {
                        Ok(job) => {
                            lock(&host.authority).spawned(job.nspace.clone(), req.parent.nspace.clone());
                            launcher.start(&job, StdinTarget::None).await.map(|()| job)
                        }
                        Err(s) => Err(s),
                    },
                    Err(_) => Err(Status::ERR_BAD_PARAM),
                };
                if let Ok(job) = &started {
                    left += job.size();
                    if watch.job_events {
                        watch.announce(&server, Status::EVENT_JOB_START, &job.nspace, Vec::new()).await;
                        watch.announce(&server, Status::LAUNCH_COMPLETE, &job.nspace, Vec::new()).await;
                    }
                    spawned.insert(job.nspace.clone(), watch);
                }
                let _ = req.answer.send(started.map(|j| j.nspace));
            }
            Some((proc, channel, data)) = outputs.recv() => {
                if let Err(e) = server.iof_deliver(proc, channel, data, Vec::new()).await {
                    tracing::debug!("cannot hand output to the server: {e}");
                }
            }
            exit = exits.recv() => {
                let Some((proc, status)) = exit else { break };
                left -= 1;
                let unsynced = lock(&host.connected).contains(&proc)
                    && !lock(&host.finalized).contains(&proc);
                let ending = Ending::of(&status, unsynced);
                let asked = host.was_sent(&proc, ending.signal);
                let ending = ending.by_request(asked);
                let code = i32::from(ending.code);
                // Once the launcher ends the job, the processes it stops are not news.
                let news = ending.failed() && stopping.is_none();
                if news {
                    eprintln!("pmixrun: {proc} {}", ending.describe());
                    first_failure.get_or_insert((proc.clone(), code));
                    // The job's status is its own processes'; a spawned job's failures reach
                    // its parent through their events and the exit status.
                    if proc.nspace == nspace && term == Status::SUCCESS {
                        term = if ending.code != 0 {
                            Status::ERR_JOB_NON_ZERO_TERM
                        } else {
                            Status::ERR_JOB_TERM_WO_SYNC
                        };
                    }
                    worst = worst.max(ending.code.max(1));
                }
                let job_over = host.ended(&proc, code, unsynced);
                let mut audience = vec![Proc::new(proc.nspace.clone(), Rank::WILDCARD)];
                audience.extend(host.tools());
                ending::announce(&server, &proc, &audience, ending.events(&proc)).await;
                if let Some(watch) = spawned.get_mut(&proc.nspace) {
                    if watch.hears_of(&ending) {
                        let to_parent = [watch.parent.clone()];
                        let events = ending.events(&proc).into_iter().take(1);
                        ending::announce(&server, &proc, &to_parent, events).await;
                    }
                    watch.ended(&proc, code, unsynced);
                    if job_over && (watch.completion || watch.job_events) {
                        let info = watch.end_info();
                        watch.announce(&server, Status::EVENT_JOB_END, &proc.nspace, info).await;
                    }
                }
                // A failed process ends the run, as `mpirun` does, unless the job recovers.
                if news && !opts.recover {
                    eprintln!("pmixrun: ending the job (--enable-recovery keeps it running)");
                    stop = Some(Stop { code: ending.code.max(1), term });
                }
            }
            () = &mut deadline, if stopping.is_none() => {
                eprintln!("pmixrun: timed out after {} s; ending the job", opts.timeout_s.unwrap_or(0));
                first_failure.get_or_insert((Proc::new(nspace.clone(), Rank::WILDCARD), 124));
                stop = Some(Stop { code: 124, term: Status::ERR_TIMEOUT });
            }
            () = kill_timer => {
                if let Some((_, signal)) = next_kill.take() {
                    host.signal_all(signal);
                    if signal == Signal::SIGTERM {
                        next_kill = Some((tokio::time::Instant::now() + GRACE, Signal::SIGKILL));
                    }
                }
            }
        }
        // The job's end is announced once (processes may end by themselves on hearing it, as
        // OpenPMIx programs that wait for PMIX_ERR_JOB_TERMINATED do), then the rest are
        // stopped: SIGTERM after a grace period, SIGKILL after another.
        if let Some(stop) = stop
            && stopping.is_none()
        {
            if term == Status::SUCCESS {
                term = stop.term;
            }
            announce_job_end(&server, &nspace, term, first_failure.clone()).await;
            next_kill = Some((tokio::time::Instant::now() + GRACE, Signal::SIGTERM));
            stopping = Some(stop);
        }
    }
    while let Ok((proc, channel, data)) = outputs.try_recv() {
        let _ = server.iof_deliver(proc, channel, data, Vec::new()).await;
    }
    if stopping.is_none() {
        announce_job_end(&server, &nspace, term, first_failure).await;
    }
    server.shutdown();
    let cleanups = std::mem::take(&mut *lock(&host.cleanups));
    for (request, c) in &cleanups {
        clean_up(c, request.uid);
    }
    drop(tmpdir);
    Ok(stopping.map_or(worst, |s| s.code))
}

/// The signals that end `pmixrun` (SIGTERM, SIGINT, SIGHUP), caught so that it ends its job
/// and removes its files first.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    async fn recv(&mut self) -> Signal {
        tokio::select! {
            biased;
            _ = self.term.recv() => Signal::SIGTERM,
            _ = self.int.recv() => Signal::SIGINT,
            _ = self.hup.recv() => Signal::SIGHUP,
        }
    }
}

/// Remove a path registered with `PMIX_REGISTER_CLEANUP` or `PMIX_REGISTER_CLEANUP_DIR`
/// (v5.0 §13.2.5), leaving what `PMIX_CLEANUP_IGNORE` names, and only what the requester's
/// uid owns (`Authority::may_remove`): the path may have changed hands since it was
/// registered, and a directory may hold other users' files. Symbolic links are removed, never
/// followed. Failures are reported, never fatal: the job is over.
fn clean_up(c: &pmix::host::control::Cleanup, uid: Option<u32>) {
    let path = std::path::Path::new(&c.path);
    let Some(owner) = host::owner_uid(&c.path) else {
        return;
    };
    if !Authority::may_remove(uid, owner) {
        eprintln!(
            "pmixrun: {} belongs to uid {owner}, not to the requester's {uid:?}: left in place",
            c.path
        );
        return;
    }
    let is_dir = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
    let result = if c.dir && is_dir {
        remove_dir(path, c, uid, true)
    } else {
        std::fs::remove_file(path)
    };
    if let Err(e) = result
        && e.kind() != std::io::ErrorKind::NotFound
    {
        eprintln!("pmixrun: cannot clean up {}: {e}", c.path);
    }
}

fn remove_dir(
    dir: &std::path::Path,
    c: &pmix::host::control::Cleanup,
    uid: Option<u32>,
    top: bool,
) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    if c.recursive {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if pmix::host::control::ignored(&name, &c.ignore) {
                continue;
            }
            // Another user's entry stays, and with it the directories above it.
            if !Authority::may_remove(uid, entry.metadata()?.uid()) {
                continue;
            }
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                remove_dir(&path, c, uid, false)?;
            } else if !c.empty_only {
                std::fs::remove_file(&path)?;
            }
        }
    }
    if top && c.leave_topdir {
        return Ok(());
    }
    // Only an empty directory goes; one that still holds what was left is kept.
    match std::fs::remove_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty => Ok(()),
        other => other,
    }
}

/// A spawned job's lifecycle events (v5.0 §12.2.4): `PMIX_NOTIFY_JOB_EVENTS` asks for
/// `PMIX_EVENT_JOB_START`, `PMIX_LAUNCH_COMPLETE` and `PMIX_EVENT_JOB_END`,
/// `PMIX_NOTIFY_COMPLETION` for the end alone; each goes to the requester, with the job's
/// namespace and a timestamp, the end with the job's status and its first failed process.
struct Spawned {
    parent: Proc,
    job_events: bool,
    completion: bool,
    /// `PMIX_NOTIFY_PROC_TERMINATION`: every end of the job's processes.
    proc_ends: bool,
    /// `PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION`: their failures.
    proc_failures: bool,
    term: Status,
    first_failure: Option<(Proc, i32)>,
}

impl Spawned {
    fn asked(parent: &Proc, job_info: &[Info]) -> Spawned {
        let flag = |a: attr::Attr<bool>| {
            job_info
                .iter()
                .any(|i| i.is(a) && i.value.as_bool().unwrap_or(true))
        };
        Spawned {
            parent: parent.clone(),
            job_events: flag(attr::NOTIFY_JOB_EVENTS),
            completion: flag(attr::NOTIFY_COMPLETION),
            proc_ends: flag(attr::NOTIFY_PROC_TERMINATION),
            proc_failures: flag(attr::NOTIFY_PROC_ABNORMAL_TERMINATION),
            term: Status::SUCCESS,
            first_failure: None,
        }
    }

    /// Whether the requester asked to hear of this end of one of the job's processes.
    fn hears_of(&self, ending: &Ending) -> bool {
        self.proc_ends || (self.proc_failures && ending.failed())
    }

    fn ended(&mut self, proc: &Proc, code: i32, unsynced: bool) {
        if code == 0 && !unsynced {
            return;
        }
        self.first_failure.get_or_insert((proc.clone(), code));
        if self.term == Status::SUCCESS {
            self.term = if unsynced {
                Status::ERR_JOB_TERM_WO_SYNC
            } else {
                Status::ERR_JOB_NON_ZERO_TERM
            };
        }
    }

    fn end_info(&self) -> Vec<Info> {
        let mut info = vec![Info::new(attr::JOB_TERM_STATUS, self.term)];
        if let Some((proc, code)) = &self.first_failure {
            info.push(Info::new(attr::PROCID, proc.clone()));
            info.push(Info::new(attr::EXIT_CODE, *code));
        }
        info
    }

    async fn announce(&self, server: &Server, status: Status, job: &Nspace, mut info: Vec<Info>) {
        info.extend([
            Info::new(
                attr::EVENT_CUSTOM_RANGE,
                DataArray::of_procs(vec![self.parent.clone()]),
            ),
            Info::new(
                attr::EVENT_AFFECTED_PROC,
                Proc::new(job.clone(), Rank::WILDCARD),
            ),
            Info::new(attr::NSPACE, job.as_str().to_owned()),
            Info::new(attr::EVENT_TIMESTAMP, now()),
        ]);
        if let Err(s) = server
            .notify_event(status, None, DataRange::CUSTOM, info)
            .await
        {
            eprintln!("pmixrun: cannot tell {} of {job}: {s:?}", self.parent);
        }
    }
}

/// The time of day for event timestamps.
fn now() -> Time {
    // The launcher runs under the tokio driver only, never under the simulator.
    #[allow(clippy::disallowed_methods)]
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    Time(since.map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX)))
}

/// `PMIX_EVENT_JOB_END` for whoever is still listening (tools, and processes that registered
/// for it, as OpenPMIx programs waiting for `PMIX_ERR_JOB_TERMINATED` do): the job's status
/// and, when a process failed, the first one and its exit code. Not for default handlers:
/// Open MPI's would turn it into an abort of a process the launcher is about to stop anyway.
async fn announce_job_end(
    server: &Server,
    nspace: &Nspace,
    status: Status,
    first_failure: Option<(Proc, i32)>,
) {
    let mut info = vec![
        Info::new(
            attr::EVENT_AFFECTED_PROC,
            Proc::new(nspace.clone(), Rank::WILDCARD),
        ),
        Info::new(attr::JOB_TERM_STATUS, status),
        Info::new(attr::EVENT_TIMESTAMP, now()),
        Info::new(attr::EVENT_NON_DEFAULT, true),
    ];
    if let Some((proc, code)) = first_failure {
        info.push(Info::new(attr::PROCID, proc));
        info.push(Info::new(attr::EXIT_CODE, code));
    }
    let sent = server
        .notify_event(Status::EVENT_JOB_END, None, DataRange::SESSION, info)
        .await;
    if let Err(s) = sent {
        eprintln!("pmixrun: cannot announce the end of the job: {s:?}");
    }
}

fn main() -> ExitCode {
    let opts = Options::from_args();
    // Warnings (refused or closed connections) always go to stderr; PMIXRUN_LOG=debug says more.
    let level = match std::env::var("PMIXRUN_LOG").as_deref() {
        Ok("debug") => tracing::Level::DEBUG,
        Ok("info") => tracing::Level::INFO,
        _ => tracing::Level::WARN,
    };
    // Colours for a terminal only: logs kept in files are read as text.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_target(false)
        .with_ansi(colour)
        .init();
    // One thread: a request crosses reader, core and writer tasks, and on one thread those
    // hand-offs cost no cross-thread wake-ups (measured by `cargo xtask bench core`).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("pmixrun: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(opts)) {
        Ok(code) => ExitCode::from(code),
        Err(msg) => {
            eprintln!("pmixrun: {msg}");
            ExitCode::from(1)
        }
    }
}
