//! The launcher as a PMIx host: what `pmixrun` answers for its job's processes and tools.
//! Its answers to queries are in `queries.rs`, the machine's fabric in `fabric.rs`.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use pmix::host::control::Authority;
use pmix::host::fabric::FabricName;
use pmix::host::publish::PublishBoard;
use pmix::model::{
    AllocDirective, App, DataRange, FabricOperation, GroupOperation, Info, Nspace, PData, Proc,
    ProcState, Query, Status, Text, attr,
};
use pmix::server::Host;
use pmix::store::published::Topology;
use tokio::sync::Notify;

/// The launcher as a PMIx host: published data, finalized processes, abort requests.
#[derive(Clone, Default)]
pub(crate) struct RunHost(std::sync::Arc<HostState>);

impl std::ops::Deref for RunHost {
    type Target = HostState;
    fn deref(&self) -> &HostState {
        &self.0
    }
}

#[derive(Default)]
pub(crate) struct HostState {
    /// The job's namespace; tools are named after it.
    pub(crate) nspace: Mutex<Option<Nspace>>,
    /// Tools connected so far (each gets the next number).
    pub(crate) tools: Mutex<u32>,
    pub(crate) published: PublishBoard,
    pub(crate) finalized: Mutex<Vec<Proc>>,
    pub(crate) connected: Mutex<Vec<Proc>>,
    pub(crate) abort: Mutex<Option<(Proc, Status, Option<String>)>>,
    pub(crate) abort_requested: Notify,
    /// Every process started, by identifier.
    pub(crate) procs: Mutex<BTreeMap<Proc, ProcRecord>>,
    /// Paths to remove when the run ends (`PMIX_REGISTER_CLEANUP`, `…_DIR`), with the request
    /// that registered each (its requester and `PMIX_JOB_CTRL_ID`), which may cancel it.
    pub(crate) cleanups: Mutex<Vec<(Request, pmix::host::control::Cleanup)>>,
    /// Processes marked preemptible (`PMIX_JOB_CTRL_PREEMPTIBLE`), by the request that did.
    /// The launcher never preempts; the mark is kept for queries and cancels.
    pub(crate) preemptible: Mutex<BTreeMap<Proc, Request>>,
    /// Watched heartbeats: beats received so far and the watch's generation (a new monitor
    /// or a cancel ends the previous watch).
    pub(crate) heartbeats: Mutex<BTreeMap<Proc, (u64, u64)>>,
    /// Events the host raises (monitor alerts, checkpoint requests), for the launcher's loop
    /// to send.
    pub(crate) events: Mutex<Option<tokio::sync::mpsc::UnboundedSender<HostEvent>>>,
    /// File monitors by process and path, with the watch's generation.
    pub(crate) file_watches: Mutex<BTreeMap<(Proc, String), u64>>,
    /// Allocations granted.
    pub(crate) allocations: Mutex<pmix::host::control::Allocations>,
    /// Where spawn requests go: the launcher's loop, which starts jobs.
    pub(crate) spawner: Mutex<Option<tokio::sync::mpsc::UnboundedSender<crate::SpawnRequest>>>,
    /// The last group context id given out.
    pub(crate) context_ids: Mutex<usize>,
    /// Who may signal, abort or clean up what: the jobs' lineage and the tools.
    pub(crate) authority: Mutex<pmix::host::control::Authority>,
    /// The signals requests sent each process (job control, an abort listing it): an end by
    /// one of those was asked for, not a failure.
    pub(crate) signalled: Mutex<BTreeMap<Proc, Vec<nix::sys::signal::Signal>>>,
    /// The input pipes of the processes that read the launcher's input (`input.rs`).
    pub(crate) inputs: std::sync::Arc<crate::input::Inputs>,
}

/// A job-control request as a later `PMIX_JOB_CTRL_CANCEL` names it: who asked, under which
/// `PMIX_JOB_CTRL_ID`, and as which user (the uid the kernel vouched for).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Request {
    pub(crate) requester: Proc,
    pub(crate) id: Option<String>,
    pub(crate) uid: Option<u32>,
}

impl Request {
    /// Whether a cancel by `requester` of `id` (`None`: all of its requests) withdraws this.
    fn cancelled_by(&self, requester: &Proc, id: Option<&str>) -> bool {
        self.requester == *requester && id.is_none_or(|id| self.id.as_deref() == Some(id))
    }
}

/// An event the host raises to the job's processes.
#[derive(Clone, Debug)]
pub(crate) struct HostEvent {
    pub(crate) status: Status,
    pub(crate) range: DataRange,
    pub(crate) info: Vec<Info>,
    /// What the launcher reports on its stderr, if anything.
    pub(crate) report: Option<String>,
}

/// What the launcher knows of one process it started.
#[derive(Clone, Debug)]
pub(crate) struct ProcRecord {
    pub(crate) pid: i32,
    /// Its path and command line, as bytes (neither need be UTF-8).
    pub(crate) executable: Text,
    /// The command line it was started with.
    pub(crate) command: Text,
    pub(crate) hostname: String,
    pub(crate) exit_code: i32,
    pub(crate) state: ProcState,
}

impl HostState {
    /// A process was forked.
    pub(crate) fn started(
        &self,
        proc: Proc,
        pid: i32,
        (executable, command): (Text, Text),
        hostname: &str,
    ) {
        let record = ProcRecord {
            pid,
            executable,
            command,
            hostname: hostname.to_owned(),
            exit_code: 0,
            state: ProcState::RUNNING,
        };
        lock(&self.procs).insert(proc, record);
    }

    /// A process ended with `code`; `unsynced` when it connected and never finalized. Answers
    /// whether its job is over.
    pub(crate) fn ended(&self, proc: &Proc, code: i32, unsynced: bool) -> bool {
        self.published.process_ended(proc);
        if let Some(r) = lock(&self.procs).get_mut(proc) {
            r.exit_code = code;
            r.state = if unsynced {
                ProcState::TERM_WO_SYNC
            } else if code != 0 {
                ProcState::TERM_NON_ZERO
            } else {
                ProcState::TERMINATED
            };
        }
        let job_over = !lock(&self.procs)
            .iter()
            .any(|(p, r)| p.nspace == proc.nspace && r.state == ProcState::RUNNING);
        if job_over {
            self.published.job_ended(&proc.nspace);
        }
        job_over
    }
}

impl HostState {
    /// Send `signal` to every process still running, of every job.
    pub(crate) fn signal_all(&self, signal: nix::sys::signal::Signal) {
        let pids: Vec<i32> = lock(&self.procs)
            .values()
            .filter(|r| r.pid > 0 && r.state == ProcState::RUNNING)
            .map(|r| r.pid)
            .collect();
        for pid in pids {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
        }
    }

    /// A request sends `signals` to `procs`.
    fn mark_signalled(&self, procs: &[Proc], signals: &[nix::sys::signal::Signal]) {
        let mut marks = lock(&self.signalled);
        for p in procs {
            marks.entry(p.clone()).or_default().extend(signals);
        }
    }

    /// Whether a request sent `proc` the signal number `signal`.
    pub(crate) fn was_sent(&self, proc: &Proc, signal: Option<i32>) -> bool {
        let sent = lock(&self.signalled);
        let sent = sent.get(proc).map_or(&[][..], Vec::as_slice);
        signal.is_some_and(|n| sent.iter().any(|s| *s as i32 == n))
    }

    /// How many processes are running, of every job.
    pub(crate) fn running_count(&self) -> u32 {
        let n = (lock(&self.procs).values())
            .filter(|r| r.state == ProcState::RUNNING)
            .count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// The tools attached so far.
    pub(crate) fn tools(&self) -> Vec<Proc> {
        lock(&self.authority).tools().to_vec()
    }

    /// The running processes among `targets` (a wildcard rank: all of its namespace), with
    /// their pids.
    fn running(&self, targets: &[Proc]) -> Vec<(Proc, i32)> {
        lock(&self.procs)
            .iter()
            .filter(|(p, r)| {
                r.pid > 0 && r.state == ProcState::RUNNING && targets.iter().any(|t| t.matches(p))
            })
            .map(|(p, r)| (p.clone(), r.pid))
            .collect()
    }
}

impl RunHost {
    /// Hand an event to the launcher's loop, which sends it.
    fn raise(&self, event: HostEvent) -> bool {
        lock(&self.events)
            .as_ref()
            .is_some_and(|tx| tx.send(event).is_ok())
    }

    /// Withdraw what `requester` asked under `id` (all of its requests for `None`) that is
    /// still to happen: cleanup registrations and preemptible marks (everything else a request
    /// asks for is done by the time it is answered). A named request with nothing left to
    /// withdraw is `PMIX_ERR_NOT_FOUND`.
    fn cancel(&self, requester: &Proc, id: Option<&str>) -> Result<(), Status> {
        let mut withdrawn = 0;
        lock(&self.cleanups).retain(|(r, _)| {
            let gone = r.cancelled_by(requester, id);
            withdrawn += usize::from(gone);
            !gone
        });
        lock(&self.preemptible).retain(|_, r| {
            let gone = r.cancelled_by(requester, id);
            withdrawn += usize::from(gone);
            !gone
        });
        if withdrawn == 0 && id.is_some() {
            return Err(Status::ERR_NOT_FOUND);
        }
        Ok(())
    }

    /// Check `proc` for signs of life every `period`: `check` answers whether it saw one
    /// since the last time, or `None` when the watch is over. After `drops` checks in a row
    /// without one, `error` is raised for the process (and counting starts again). The watch
    /// ends with the process too.
    async fn watch_for_life(
        &self,
        proc: Proc,
        period: Duration,
        drops: u32,
        error: Status,
        mut check: impl FnMut() -> Option<bool>,
    ) {
        let mut missed = 0;
        loop {
            tokio::time::sleep(period).await;
            let running = lock(&self.procs)
                .get(&proc)
                .is_some_and(|r| r.state == ProcState::RUNNING);
            let Some(alive) = check().filter(|_| running) else {
                return;
            };
            if alive {
                missed = 0;
                continue;
            }
            missed += 1;
            if missed >= drops {
                missed = 0;
                self.raise(HostEvent {
                    status: error,
                    range: DataRange::NAMESPACE,
                    info: vec![Info::new(attr::EVENT_AFFECTED_PROC, proc.clone())],
                    report: Some(format!("{proc} shows no sign of life ({error:?})")),
                });
            }
        }
    }

    /// Watch a file for `proc` until the watch is replaced or cancelled: each check compares
    /// what the watch looks at (size, access and modification times) with the check before.
    async fn watch_file(
        &self,
        proc: Proc,
        generation: u64,
        watch: pmix::host::control::FileWatch,
        error: Status,
    ) {
        let look = |w: &pmix::host::control::FileWatch| {
            std::fs::metadata(&w.path).ok().map(|m| {
                (
                    w.size.then_some(m.len()),
                    w.access.then(|| m.accessed().ok()).flatten(),
                    w.modify.then(|| m.modified().ok()).flatten(),
                )
            })
        };
        let mut last = look(&watch);
        let key = (proc.clone(), watch.path.clone());
        let period = Duration::from_secs(u64::from(watch.period_s));
        self.watch_for_life(proc, period, watch.drops, error, || {
            if lock(&self.file_watches).get(&key) != Some(&generation) {
                return None;
            }
            let now = look(&watch);
            let changed = now.is_some() && now != last;
            last = now;
            Some(changed)
        })
        .await;
    }

    /// Watch `proc`'s heartbeat until the watch is replaced or cancelled.
    async fn watch(&self, proc: Proc, generation: u64, period_s: u32, drops: u32, error: Status) {
        let mut seen = 0;
        let key = proc.clone();
        let period = Duration::from_secs(u64::from(period_s));
        self.watch_for_life(proc, period, drops, error, || {
            let beats = match lock(&self.heartbeats).get(&key) {
                Some((beats, g)) if *g == generation => *beats,
                _ => return None,
            };
            let beat = beats > seen;
            seen = beats;
            Some(beat)
        })
        .await;
    }
}

/// The uid that owns `path` itself (a symbolic link is not followed), if it exists.
pub(crate) fn owner_uid(path: &str) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| m.uid())
}

impl Host for RunHost {
    /// One fabric: the machine's interfaces (see `machine_fabric`), read again at each
    /// update. A registration naming another identifier, a vendor or a plane is
    /// `PMIX_ERR_NOT_FOUND`, as is an update of another index.
    async fn fabric(
        &self,
        _proc: Proc,
        op: FabricOperation,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let fabric = fabric::machine_fabric();
        let ours = fabric
            .iter()
            .find_map(|i| i.get(attr::FABRIC_IDENTIFIER))
            .unwrap_or_default();
        let name = FabricName {
            index: 0,
            identifier: &ours,
            vendor: None,
            plane: None,
        };
        let known = name.asked_by(op, &directives);
        if known {
            Ok(fabric)
        } else {
            Err(Status::ERR_NOT_FOUND)
        }
    }

    /// Every member runs here, so the server completes groups itself; it comes to the host
    /// only for a context id, which is unique within the run (`PMIX_RANGE_SESSION`, the
    /// default range, is the run here).
    async fn group(
        &self,
        op: GroupOperation,
        _group: String,
        _procs: Vec<Proc>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let wants = Info::flag(&directives, attr::GROUP_ASSIGN_CONTEXT_ID);
        if let Some(lost) = directives
            .iter()
            .find_map(|i| i.get(attr::LOCAL_COLLECTIVE_STATUS))
        {
            return Err(lost);
        }
        if op != GroupOperation::CONSTRUCT || !wants {
            return Ok(Vec::new());
        }
        let mut last = lock(&self.context_ids);
        *last += 1;
        Ok(vec![Info::new(attr::GROUP_CONTEXT_ID, *last)])
    }

    async fn client_connected(&self, proc: Proc) -> Result<(), Status> {
        lock(&self.connected).push(proc);
        Ok(())
    }

    async fn client_finalized(&self, proc: Proc) -> Result<(), Status> {
        lock(&self.finalized).push(proc);
        Ok(())
    }

    /// No processes listed (or a whole job): the run ends, as the job is aborted. Processes
    /// listed one by one: those still running are killed (SIGKILL), and the rest of the
    /// job runs on.
    async fn abort(
        &self,
        proc: Proc,
        status: Status,
        message: Option<String>,
        procs: Vec<Proc>,
    ) -> Result<(), Status> {
        let whole_job = procs.is_empty()
            || procs
                .iter()
                .any(|p| p.rank == pmix::model::Rank::WILDCARD && p.nspace == proc.nspace);
        if !whole_job {
            lock(&self.authority).check(&proc, &procs)?;
            eprintln!(
                "pmixrun: {proc} aborts {} process(es) with status {}{}",
                procs.len(),
                status.0,
                message.map(|m| format!(": {m}")).unwrap_or_default()
            );
            let pids: Vec<i32> = {
                let table = lock(&self.procs);
                procs
                    .iter()
                    .filter_map(|p| table.get(p))
                    .filter(|r| r.pid > 0 && r.state == ProcState::RUNNING)
                    .map(|r| r.pid)
                    .collect()
            };
            self.mark_signalled(&procs, &[nix::sys::signal::Signal::SIGKILL]);
            for pid in pids {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            return Ok(());
        }
        *lock(&self.abort) = Some((proc, status, message));
        self.abort_requested.notify_one();
        Ok(())
    }

    /// Published data lives on a [`PublishBoard`]: ranges, persistence, duplicates and
    /// access permissions as v5.0 ch. 9 says; one machine is one node.
    async fn publish(&self, proc: Proc, info: Vec<Info>) -> Result<(), Status> {
        self.published.publish(&proc, &info)
    }

    async fn lookup(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<Vec<PData>, Status> {
        self.published.lookup(&proc, &keys, &info, &OneNode).await
    }

    async fn unpublish(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        self.published.unpublish(&proc, &keys, &info);
        Ok(())
    }

    /// One machine: the server has delivered the event to every process already.
    async fn notify_event(
        &self,
        _status: Status,
        _source: Proc,
        _range: DataRange,
        _info: Vec<Info>,
    ) -> Result<(), Status> {
        Ok(())
    }

    /// A new job on this machine, started by the launcher's loop (see
    /// [`pmix::host::launch::plan`] for the statuses of a job that cannot start).
    async fn spawn(
        &self,
        proc: Proc,
        job_info: Vec<Info>,
        apps: Vec<App>,
    ) -> Result<Nspace, Status> {
        // Spawned processes run as this launcher's user: only that user may ask for them
        // (the library admits no one else; this holds even if that changes).
        let (uid, _) = pmix::transport::uid_gid();
        if Authority::requester_uid(&job_info) != Some(uid) {
            tracing::warn!("{proc}: a spawn request not of uid {uid} is refused");
            return Err(Status::ERR_NO_PERMISSIONS);
        }
        let (answer, rx) = tokio::sync::oneshot::channel();
        let request = crate::SpawnRequest {
            parent: proc,
            job_info,
            apps,
            answer,
        };
        let sent = lock(&self.spawner)
            .as_ref()
            .is_some_and(|tx| tx.send(request).is_ok());
        if !sent {
            return Err(Status::ERR_JOB_FAILED_TO_LAUNCH);
        }
        rx.await.unwrap_or(Err(Status::ERR_JOB_FAILED_TO_LAUNCH))
    }

    /// One machine is the whole allocation: a new one of one node (and at most its cpus) is
    /// granted an id; extending, releasing or reacquiring names a granted one.
    async fn allocate(
        &self,
        _proc: Proc,
        directive: AllocDirective,
        info: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let capacity = pmix::host::control::Capacity {
            nodes: 1,
            cpus: Some(std::thread::available_parallelism().map_or(1, |n| n.get() as u64)),
        };
        let job = lock(&self.nspace).clone();
        let prefix = job.as_ref().map_or("job", |n| n.as_str());
        lock(&self.allocations).request(prefix, capacity, directive, &info)
    }

    /// Signals for real: pause (SIGSTOP), resume (SIGCONT), kill (SIGKILL), terminate
    /// (SIGTERM) or any signal, to the running processes this launcher started among
    /// `targets` (none: the requester's job). A checkpoint is the signal the request names,
    /// or else the `PMIX_JCTRL_CHECKPOINT` event to the targets with the checkpoint's id.
    /// Cleanup paths are removed when the run ends; preemptible marks are kept (the launcher
    /// never preempts); a cancel withdraws either. Restarting from a checkpoint image and
    /// provisioning nodes are beyond one machine without a checkpoint/restart system or node
    /// images: `PMIX_ERR_NOT_SUPPORTED`.
    /// Every process's output already reaches the server (`output.rs`): a pull needs
    /// nothing more, and its end stops nothing.
    async fn iof_pull(
        &self,
        _procs: Vec<Proc>,
        _directives: Vec<Info>,
        _channels: pmix::model::IofChannel,
    ) -> Result<(), Status> {
        Ok(())
    }

    /// Input pushed by a tool or client (`PMIx_IOF_push`) goes to the processes among
    /// `targets` that read an input from the launcher (`--stdin`); `PMIX_IOF_COMPLETE`
    /// closes it. None of them reading one is `PMIX_ERR_NOT_FOUND`.
    async fn push_stdin(
        &self,
        _source: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
        data: Option<Vec<u8>>,
    ) -> Result<(), Status> {
        let complete = directives.iter().any(|i| {
            i.key.as_str() == attr::IOF_COMPLETE.wire_key() && i.value.as_bool().unwrap_or(true)
        });
        match self.inputs.push(&targets, data.as_deref(), complete) {
            0 => Err(Status::ERR_NOT_FOUND),
            _ => Ok(()),
        }
    }

    async fn job_control(
        &self,
        proc: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        use nix::sys::signal::Signal;
        use pmix::host::control::Control;
        let actions = pmix::host::control::job_control(&directives)?;
        if actions
            .iter()
            .any(|a| matches!(a, Control::Restart(_) | Control::Provision { .. }))
        {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let request = Request {
            requester: proc.clone(),
            id: pmix::host::control::request_id(&directives),
            uid: Authority::requester_uid(&directives),
        };
        let targets = if targets.is_empty() {
            vec![Authority::own_job(&proc)]
        } else {
            targets
        };
        lock(&self.authority).check(&proc, &targets)?;
        let signal = |n: i32| Signal::try_from(n).map_err(|_| Status::ERR_BAD_PARAM);
        let mut signals = Vec::new();
        let mut checkpoints = Vec::new();
        for a in actions {
            if let Some(id) = a.checkpoint_by_event() {
                checkpoints.push(id.to_owned());
                continue;
            }
            let s = match a {
                Control::Cleanup(c) => {
                    // Checked again when the run ends: the path may change hands.
                    if let Some(owner) = owner_uid(&c.path)
                        && !Authority::may_remove(request.uid, owner)
                    {
                        tracing::warn!(
                            "{proc} (uid {:?}) may not have {} (uid {owner}) removed",
                            request.uid,
                            c.path
                        );
                        return Err(Status::ERR_NO_PERMISSIONS);
                    }
                    lock(&self.cleanups).push((request.clone(), c));
                    continue;
                }
                Control::Cancel(id) => {
                    self.cancel(&proc, id.as_deref())?;
                    continue;
                }
                Control::Preemptible(on) => {
                    let mut marks = lock(&self.preemptible);
                    for t in &targets {
                        if on {
                            marks.insert(t.clone(), request.clone());
                        } else {
                            marks.remove(t);
                        }
                    }
                    continue;
                }
                // A checkpoint by event is taken above: this one names its signal.
                Control::Checkpoint {
                    signal: Some(n), ..
                } => signal(n)?,
                Control::Checkpoint { signal: None, .. } => continue,
                Control::Signal(0) => continue,
                Control::Signal(n) => signal(n)?,
                Control::Pause => Signal::SIGSTOP,
                Control::Resume => Signal::SIGCONT,
                Control::Kill => Signal::SIGKILL,
                Control::Terminate => Signal::SIGTERM,
                Control::Restart(_) | Control::Provision { .. } => continue,
            };
            signals.push(s);
        }
        if signals.is_empty() && checkpoints.is_empty() {
            return Ok(Vec::new());
        }
        let running = self.running(&targets);
        if running.is_empty() {
            return Err(Status::ERR_NOT_FOUND);
        }
        for id in checkpoints {
            let procs: Vec<Proc> = running.iter().map(|(p, _)| p.clone()).collect();
            let info = pmix::host::control::checkpoint_event(procs, &id);
            let event = HostEvent {
                status: Status::JCTRL_CHECKPOINT,
                range: DataRange::CUSTOM,
                info,
                report: None,
            };
            if !self.raise(event) {
                return Err(Status::ERR_UNREACH);
            }
        }
        let procs: Vec<Proc> = running.iter().map(|(p, _)| p.clone()).collect();
        self.mark_signalled(&procs, &signals);
        for (_, pid) in running {
            for s in &signals {
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), *s)
                    .map_err(|_| Status::ERR_NO_PERMISSIONS)?;
            }
        }
        Ok(Vec::new())
    }

    /// Heartbeat monitors: a watch wakes every period and raises the monitor's status (the
    /// `error` of the request, `PMIX_MONITOR_HEARTBEAT_ALERT` usually) to the job, with the
    /// silent process as the affected one, once `drops` periods in a row pass without a beat.
    async fn monitor(
        &self,
        proc: Proc,
        monitor: Info,
        error: Status,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        use pmix::host::control::Monitor;
        match pmix::host::control::monitor(&monitor, &directives)? {
            Monitor::Beat => {
                let mut beats = lock(&self.heartbeats);
                let watch = beats.get_mut(&proc).ok_or(Status::ERR_NOT_FOUND)?;
                watch.0 += 1;
            }
            Monitor::Cancel(_) => {
                if let Some(w) = lock(&self.heartbeats).get_mut(&proc) {
                    w.1 += 1;
                }
                lock(&self.file_watches).retain(|(p, _), _| *p != proc);
            }
            Monitor::File(watch) => {
                let generation = {
                    let mut watches = lock(&self.file_watches);
                    let g = watches
                        .entry((proc.clone(), watch.path.clone()))
                        .or_insert(0);
                    *g += 1;
                    *g
                };
                let host = self.clone();
                tokio::spawn(async move {
                    host.watch_file(proc, generation, watch, error).await;
                });
            }
            Monitor::Heartbeat { period_s, drops } => {
                let generation = {
                    let mut beats = lock(&self.heartbeats);
                    let w = beats.entry(proc.clone()).or_insert((0, 0));
                    w.1 += 1;
                    w.1
                };
                let host = self.clone();
                tokio::spawn(async move {
                    host.watch(proc, generation, period_s, drops, error).await;
                });
            }
        }
        Ok(Vec::new())
    }

    /// The job's namespaces, status and process table (one machine: the local table is the
    /// whole table). A query about another namespace than the requester's names it with
    /// `PMIX_NSPACE` or `PMIX_PROCID`.
    async fn query(&self, proc: Proc, queries: Vec<Query>) -> Result<Vec<Info>, Status> {
        let mut out = Vec::new();
        for q in &queries {
            for key in pmix::query::keys(q) {
                if let Some(v) = self.answer(key, q, &proc)
                    && let Ok(i) = Info::with_key(key, v)
                {
                    out.push(i);
                }
            }
        }
        Ok(out)
    }

    async fn tool_connected(&self, info: Vec<Info>) -> Result<Proc, Status> {
        // The library admitted the tool's user already (the kernel's word against
        // `ServerConfig::tool_uids`): this user and root.
        let get = |key: &str| info.iter().find(|i| i.key.as_str() == key);
        let own = get(attr::NSPACE.wire_key()).and_then(|i| i.value.as_str());
        let tool = if let Some(ns) = own {
            let rank = get(attr::RANK.wire_key())
                .and_then(|i| i.value.to_u64())
                .and_then(|r| u32::try_from(r).ok())
                .unwrap_or(0);
            Proc::try_new(ns, rank).map_err(|e| e.status())?
        } else {
            let job = lock(&self.nspace).clone();
            let base = job.as_ref().map_or("job", |n| n.as_str());
            let k = {
                let mut t = lock(&self.tools);
                *t += 1;
                *t
            };
            Proc::try_new(&format!("{base}.tool.{k}"), 0).map_err(|e| e.status())?
        };
        lock(&self.authority).tool(tool.clone());
        Ok(tool)
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means another task panicked while holding plain data.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

mod fabric;
mod queries;
#[cfg(test)]
mod tests;

/// Every process of `pmixrun` runs on its one machine (`PMIX_RANGE_LOCAL` reaches them all).
struct OneNode;

impl Topology for OneNode {
    fn same_node(&self, _: &Proc, _: &Proc) -> bool {
        true
    }
}
