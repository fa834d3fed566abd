//! Deterministic simulation of PMIx clusters (DESIGN §4).
//!
//! The simulator runs the real `pmix` server and client code under `turmoil`: a virtual
//! cluster of racks (turmoil hosts), each holding many nodes (each node its own PMIx server,
//! its host daemon on a port of its own, and its client processes), so that thousands of
//! nodes cost what a few dozen turmoil hosts cost. Every run is reproducible from its seed: the
//! events it observes fold into one trace hash ([`trace::Trace`]) that two runs of the same
//! seed must agree on.
//!
//! What runs is the wire-up of a whole job (init, put, commit, fence, get of a remote rank's
//! value, finalize) with fences as a tree allgather among the daemons and gets of other
//! nodes' data either from the fence's data or by direct modex ([`Modex`]), under the faults a
//! scenario schedules ([`scenario`], [`faults`]): crashed nodes and racks, killed clients,
//! partitions, held, dropped and delayed links, slow nodes. The run's invariants
//! (`check.rs`) are checked on what the [`Observer`] saw, into the [`Report`].
//!
//! Determinism rules for every sim-reachable module:
//!
//! - no iteration over `HashMap`/`HashSet` with random state (`clippy.toml` bans them);
//! - no `std::time`: simulated time comes from turmoil;
//! - no threads, randomness only from the seed;
//! - `select!` with `biased;`.

#![forbid(unsafe_code)]

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pmix::model::Status;
use tokio::sync::mpsc;

mod check;
pub mod cluster;
mod daemon;
pub mod fabric;
pub mod faults;
mod node;
pub mod scenario;
pub mod trace;

use cluster::Layout;
pub use faults::{Fault, FaultKind, LinkFaults, Pick};
use trace::Trace;

/// The steps of a client's wire-up, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Init,
    Put,
    Commit,
    Fence,
    Get,
    Finalize,
}

/// How the job's data reaches the nodes that read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modex {
    /// The fence collects every process's data (`PMIX_COLLECT_DATA`) and every node's server
    /// stores all of it: the classic wire-up, whose memory grows with nodes × processes, and
    /// here with all nodes in one process, with their square.
    Full,
    /// The fence only synchronises; a get of another node's data asks the owning node's daemon
    /// (direct modex, what PMIx offers for wire-up at scale).
    Direct,
}

/// How the daemons run a collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    /// Up and down a k-ary tree, rack-aware (`cluster::Tree`): latency grows with the
    /// tree's depth.
    Tree,
    /// Around a ring of the participants (`cluster::Tree::ring`): each talks to its two
    /// neighbours only; latency grows with their number.
    Ring,
}

/// How daemons watch each other (see the daemon's module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Liveness {
    /// Between heartbeats to the job tree's neighbours; zero turns heartbeats off (a crashed
    /// node is then noticed only when a connection from it ends).
    pub heartbeat: Duration,
    /// A neighbour silent this long gets a new connection.
    pub reconnect_after: Duration,
    /// A neighbour silent this long is declared down.
    pub suspect_after: Duration,
    /// How long a connection attempt may take.
    pub connect_timeout: Duration,
}

impl Default for Liveness {
    fn default() -> Self {
        Liveness {
            heartbeat: Duration::from_millis(100),
            reconnect_after: Duration::from_millis(400),
            suspect_after: Duration::from_millis(1500),
            connect_timeout: Duration::from_millis(500),
        }
    }
}

/// When each client does what, in simulated time: a step waits for its time if the client
/// gets there earlier (zero: at once).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workload {
    pub fence_at: Duration,
    /// The fence's `PMIX_TIMEOUT`, in seconds.
    pub fence_timeout_s: Option<u32>,
    pub get_at: Duration,
    /// Clients stay until then (to hear of failures), then finalize.
    pub finalize_at: Duration,
    /// When set, each client publishes a value after its commit and, at this time, looks up
    /// the value its peer published (through the data server).
    pub lookup_at: Option<Duration>,
    /// When set, rank 0 spawns a job of `spawn_procs` processes at this time, placed one per
    /// node in turn on the nodes after its own (wrapping round when there are more processes
    /// than other nodes); each runs init, put, commit, fence, get, finalize.
    pub spawn_at: Option<Duration>,
    pub spawn_procs: u32,
    /// With a spawn: rank 0 and the spawned processes connect (`PMIx_Connect`) once the
    /// spawn returns and their fence is over, then disconnect.
    pub connect: bool,
    /// When set, every rank constructs the group `GROUP` of the whole job at this time
    /// (with `PMIX_GROUP_ASSIGN_CONTEXT_ID`), fences by the group's id, and destructs it.
    pub group_at: Option<Duration>,
    /// The group construction's `PMIX_TIMEOUT`, in seconds.
    pub group_timeout_s: Option<u32>,
    /// The rank that declares itself the group's leader (`PMIX_GROUP_LEADER`).
    pub group_leader: Option<u32>,
    /// The group is constructed with `PMIX_GROUP_NOTIFY_TERMINATION`, naming every rank
    /// (not the wildcard): a member that terminates is left out instead of failing it.
    pub group_notify: bool,
    /// The group is constructed with `PMIX_GROUP_FT_COLLECTIVE`, naming the whole job (the
    /// wildcard rank): a member that terminates is left out, not reported.
    pub group_ft: bool,
    /// When set, rank 0 invites every other rank into the group `INVITED` at this time
    /// (`PMIx_Group_invite`, with `group_timeout_s` as its `PMIX_TIMEOUT`, 10 s when unset);
    /// each accepts once `PMIX_GROUP_INVITED` reaches it. The members then fence by the
    /// group's id and destruct it.
    pub invite_at: Option<Duration>,
    /// When set, every rank registers the cluster's fabric at this time and checks what its
    /// node's daemon describes ([`fabric::check`]).
    pub fabric_at: Option<Duration>,
}

/// The name of the group of the workload.
pub const GROUP: &str = "simgroup";

/// The name of the group the workload's invitation forms.
pub const INVITED: &str = "siminvited";

/// What a run is.
#[derive(Clone, Debug)]
pub struct Config {
    pub layout: Layout,
    pub seed: u64,
    pub modex: Modex,
    pub collective: Collective,
    /// The simulated time after which a run that has not finished is a failure.
    pub limit: Duration,
    /// Report on stderr, every simulated 100 ms, how many clients have finished.
    pub progress: bool,
    pub liveness: Liveness,
    pub workload: Workload,
    pub faults: Vec<Fault>,
    /// Keep every trace event as a line of text in the report (for `--record`/`--replay`).
    pub record: bool,
}

impl Config {
    /// A fault-free wire-up of `layout`, with the default liveness settings.
    pub fn new(layout: Layout, seed: u64, modex: Modex) -> Config {
        Config {
            layout,
            seed,
            modex,
            collective: Collective::Tree,
            limit: Duration::from_secs(600),
            progress: false,
            liveness: Liveness::default(),
            workload: Workload::default(),
            faults: Vec::new(),
            record: false,
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub seed: u64,
    pub nodes: u32,
    pub racks: u32,
    pub clients: u32,
    /// Messages and bytes the daemons sent each other, heartbeats apart.
    pub messages: u64,
    pub bytes: u64,
    pub heartbeats: u64,
    /// Simulated time until the last client finished (or the limit).
    pub simulated: Duration,
    pub trace_hash: u64,
    pub trace_events: u64,
    /// Clients that completed the whole wire-up.
    pub completed: u32,
    /// The faults as they were carried out: time and what.
    pub faults: Vec<String>,
    /// What broke an invariant.
    pub violations: Vec<String>,
    /// Every trace event as text, when the run was recorded.
    pub trace: Vec<String>,
}

impl Report {
    /// Whether every invariant held.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

/// What one client did, as the observer saw it.
#[derive(Clone, Debug, Default)]
struct RankRecord {
    done: bool,
    /// When it finished (finalized, or failed a step).
    done_at: Duration,
    killed: bool,
    /// When its fence started and ended, and how.
    fence: Option<(Duration, Duration, Result<(), Status>)>,
    get: Option<Result<(), Status>>,
    /// When its publish ended, and how; when its lookup started and ended, and how.
    published: Option<(Duration, Result<(), Status>)>,
    looked_up: Option<(Duration, Duration, Result<(), Status>)>,
    /// The failure events its handler received: status and the node or rank concerned.
    events: BTreeSet<(i32, u32)>,
}

/// A rank's group operation and how it ended: with the context id a construction got.
type GroupOutcome = (u32, Result<Option<u64>, Status>);

/// A party to a connect or disconnect, and how it ended for it.
type PartyOutcome = (node::Party, Result<(), Status>);

/// What a process of a spawned job did.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChildRecord {
    node: u32,
    done: bool,
    killed: bool,
    /// How its fence ended, once it ran its course.
    fence: Option<Result<(), Status>>,
}

/// What the simulation observes, shared by every rack (one process, one thread: turmoil runs
/// the racks in turn), and the handles the fault schedule acts through.
#[derive(Debug, Default)]
pub struct Observer {
    state: Mutex<Observed>,
    daemons: Mutex<BTreeMap<u32, daemon::Daemon>>,
    controls: Mutex<BTreeMap<u32, mpsc::UnboundedSender<node::Control>>>,
    /// Each rack's channel of nodes to start again.
    starts: Mutex<BTreeMap<u32, mpsc::UnboundedSender<u32>>>,
    links: Arc<Mutex<LinkFaults>>,
}

#[derive(Debug, Default)]
struct Observed {
    trace: Trace,
    lines: Option<Vec<String>>,
    messages: u64,
    bytes: u64,
    heartbeats: u64,
    finished: u32,
    completed: u32,
    last_done: Duration,
    violations: Vec<String>,
    ranks: Vec<RankRecord>,
    /// Each collective's outcome at each node's server: status and a hash of the data.
    outcomes: BTreeMap<u64, BTreeMap<u32, (i32, u64)>>,
    /// Crashed nodes and ranks killed alone, with when; nodes started again.
    crashed: BTreeMap<u32, Duration>,
    restarted: BTreeSet<u32>,
    /// Every crash of a node, in order.
    crash_log: Vec<(u32, Duration)>,
    /// When the first fault was carried out.
    first_fault: Option<Duration>,
    /// What each spawn request returned, by requesting rank.
    spawns: Vec<(u32, Result<String, Status>)>,
    /// Processes of spawned jobs, by namespace and rank.
    children: BTreeMap<(String, u32), ChildRecord>,
    /// Connects and disconnects between a parent and its spawned job: by job and operation,
    /// each party's outcome.
    connects: BTreeMap<(String, &'static str), Vec<PartyOutcome>>,
    /// The group operations of the job's ranks (construct, fence, destruct): each rank's
    /// outcome, with the context id a construction got.
    groups: BTreeMap<&'static str, Vec<GroupOutcome>>,
    killed_alone: BTreeMap<u32, Duration>,
    faults: Vec<String>,
}

fn now() -> Duration {
    turmoil::sim_elapsed().unwrap_or_default()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Observer {
    fn new(ranks: u32, record: bool) -> Observer {
        let o = Observer::default();
        {
            let mut s = lock(&o.state);
            s.ranks = vec![RankRecord::default(); ranks as usize];
            s.lines = record.then(Vec::new);
        }
        o
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Observed> {
        lock(&self.state)
    }

    fn rank(s: &mut Observed, rank: u32) -> Option<&mut RankRecord> {
        s.ranks.get_mut(rank as usize)
    }

    /// Fold an event of `node` into the trace.
    pub(crate) fn record(&self, node: u32, what: &[u8]) {
        let mut s = self.lock();
        let at = now().as_nanos();
        s.trace.record(at, node, what);
        if let Some(lines) = s.lines.as_mut() {
            lines.push(format!("{at} {node} {}", String::from_utf8_lossy(what)));
        }
    }

    pub(crate) fn step(&self, node: u32, rank: u32, step: Step) {
        self.record(node, format!("rank {rank} {step:?}").as_bytes());
    }

    pub(crate) fn count_message(&self, bytes: usize, heartbeat: bool) {
        let mut s = self.lock();
        if heartbeat {
            s.heartbeats += 1;
        } else {
            s.messages += 1;
            s.bytes += bytes as u64;
        }
    }

    pub(crate) fn violation(&self, what: String) {
        self.record(u32::MAX, format!("violation {what}").as_bytes());
        self.lock().violations.push(what);
    }

    /// A client ended its wire-up, completed or not.
    pub(crate) fn client_done(&self, rank: u32, outcome: Result<(), String>) {
        {
            let mut s = self.lock();
            let Some(r) = Observer::rank(&mut s, rank) else {
                return;
            };
            if r.done || r.killed {
                return;
            }
            r.done = true;
            r.done_at = now();
            s.finished += 1;
            s.last_done = now();
            if outcome.is_ok() {
                s.completed += 1;
            }
        }
        if let Err(e) = outcome {
            self.violation(e);
        }
    }

    /// A client was killed: alone, or with its node.
    pub(crate) fn killed(&self, rank: u32, alone: bool) {
        let mut s = self.lock();
        let Some(r) = Observer::rank(&mut s, rank) else {
            return;
        };
        if r.done || r.killed {
            return;
        }
        r.killed = true;
        s.finished += 1;
        if alone {
            s.killed_alone.insert(rank, now());
        }
    }

    pub(crate) fn node_crashed(&self, node: u32) {
        let mut s = self.lock();
        s.crashed.entry(node).or_insert_with(now);
        s.crash_log.push((node, now()));
    }

    pub(crate) fn fenced(
        &self,
        rank: u32,
        started: Duration,
        result: Result<(), impl Into<Status>>,
    ) {
        let result = result.map_err(Into::into);
        let status = result.err().unwrap_or(Status::SUCCESS).0;
        self.record(u32::MAX, format!("rank {rank} fenced {status}").as_bytes());
        let mut s = self.lock();
        if let Some(r) = Observer::rank(&mut s, rank) {
            r.fence = Some((started, now(), result));
        }
    }

    pub(crate) fn got(&self, rank: u32, result: Result<(), impl Into<Status>>) {
        let result = result.map_err(Into::into);
        let status = result.err().unwrap_or(Status::SUCCESS).0;
        self.record(u32::MAX, format!("rank {rank} got {status}").as_bytes());
        let mut s = self.lock();
        if let Some(r) = Observer::rank(&mut s, rank) {
            r.get = Some(result);
        }
    }

    pub(crate) fn published(&self, rank: u32, result: Result<(), impl Into<Status>>) {
        let result = result.map_err(Into::into);
        let status = result.err().unwrap_or(Status::SUCCESS).0;
        self.record(
            u32::MAX,
            format!("rank {rank} published {status}").as_bytes(),
        );
        let mut s = self.lock();
        if let Some(r) = Observer::rank(&mut s, rank) {
            r.published = Some((now(), result));
        }
    }

    pub(crate) fn looked_up(
        &self,
        rank: u32,
        started: Duration,
        result: Result<(), impl Into<Status>>,
    ) {
        let result = result.map_err(Into::into);
        let status = result.err().unwrap_or(Status::SUCCESS).0;
        self.record(
            u32::MAX,
            format!("rank {rank} looked up {status}").as_bytes(),
        );
        let mut s = self.lock();
        if let Some(r) = Observer::rank(&mut s, rank) {
            r.looked_up = Some((started, now(), result));
        }
    }

    pub(crate) fn spawned(
        &self,
        rank: u32,
        result: Result<pmix::model::Nspace, impl Into<Status>>,
    ) {
        let result = result.map(|ns| ns.as_str().to_owned()).map_err(Into::into);
        let what = match &result {
            Ok(ns) => format!("rank {rank} spawned {ns}"),
            Err(s) => format!("rank {rank} spawn failed {}", s.0),
        };
        self.record(u32::MAX, what.as_bytes());
        self.lock().spawns.push((rank, result));
    }

    pub(crate) fn connected(
        &self,
        job: &pmix::model::Nspace,
        who: node::Party,
        op: &'static str,
        result: Result<(), impl Into<Status>>,
    ) {
        let result = result.map_err(Into::into);
        let status = result.err().unwrap_or(Status::SUCCESS).0;
        let what = format!("{who:?} {op} {} {status}", job.as_str());
        self.record(u32::MAX, what.as_bytes());
        self.lock()
            .connects
            .entry((job.as_str().to_owned(), op))
            .or_default()
            .push((who, result));
    }

    pub(crate) fn grouped(
        &self,
        rank: u32,
        op: &'static str,
        result: Result<Option<u64>, impl Into<Status>>,
    ) {
        let result = result.map_err(Into::into);
        let what = match &result {
            Ok(cid) => format!("rank {rank} group {op} ok {cid:?}"),
            Err(s) => format!("rank {rank} group {op} failed {}", s.0),
        };
        self.record(u32::MAX, what.as_bytes());
        self.lock()
            .groups
            .entry(op)
            .or_default()
            .push((rank, result));
    }

    pub(crate) fn child_started(&self, nspace: &pmix::model::Nspace, rank: u32, node: u32) {
        self.record(node, format!("start {}.{rank}", nspace.as_str()).as_bytes());
        let key = (nspace.as_str().to_owned(), rank);
        self.lock().children.insert(
            key,
            ChildRecord {
                node,
                ..ChildRecord::default()
            },
        );
    }

    /// A spawned process ended: its fence's status (`None`: it completed), or what must
    /// never happen.
    pub(crate) fn child_done(
        &self,
        nspace: &pmix::model::Nspace,
        rank: u32,
        outcome: Result<Option<Status>, String>,
    ) {
        let key = (nspace.as_str().to_owned(), rank);
        if let Ok(fenced) = &outcome {
            let status = fenced.map_or(0, |s| s.0);
            let what = format!("{}.{rank} done, fence {status}", nspace.as_str());
            self.record(u32::MAX, what.as_bytes());
        }
        {
            let mut s = self.lock();
            let Some(c) = s.children.get_mut(&key) else {
                return;
            };
            if c.done || c.killed {
                return;
            }
            c.done = true;
            c.fence = match &outcome {
                Ok(None) => Some(Ok(())),
                Ok(Some(st)) => Some(Err(*st)),
                Err(_) => None,
            };
        }
        if let Err(e) = outcome {
            self.violation(e);
        }
    }

    pub(crate) fn child_killed(&self, nspace: &pmix::model::Nspace, rank: u32) {
        let key = (nspace.as_str().to_owned(), rank);
        if let Some(c) = self.lock().children.get_mut(&key)
            && !c.done
        {
            c.killed = true;
        }
    }

    pub(crate) fn event(&self, rank: u32, status: Status, subject: u32) {
        self.record(
            u32::MAX,
            format!("rank {rank} event {} about {subject}", status.0).as_bytes(),
        );
        let mut s = self.lock();
        if let Some(r) = Observer::rank(&mut s, rank)
            && !r.killed
        {
            r.events.insert((status.0, subject));
        }
    }

    pub(crate) fn outcome(&self, node: u32, key: u64, status: i32, hash: u64) {
        self.lock()
            .outcomes
            .entry(key)
            .or_default()
            .insert(node, (status, hash));
    }

    pub(crate) fn add_daemon(&self, node: u32, d: daemon::Daemon) {
        lock(&self.daemons).insert(node, d);
    }

    fn finished(&self) -> u32 {
        self.lock().finished
    }

    /// Carry out one action of the fault schedule.
    fn apply(&self, layout: &Layout, action: &faults::Action) {
        use faults::Action;
        self.record(u32::MAX, format!("fault {action}").as_bytes());
        let mut s = self.lock();
        s.faults
            .push(format!("{:.3} s: {action}", now().as_secs_f64()));
        s.first_fault.get_or_insert_with(now);
        drop(s);
        let control = |node: u32, c: node::Control| {
            if let Some(tx) = lock(&self.controls).get(&node) {
                let _ = tx.send(c);
            }
        };
        let racks = |a: u32, b: u32| (Layout::rack_name(a), Layout::rack_name(b));
        match action {
            Action::CrashNode(n) => {
                self.lock().restarted.remove(n);
                control(*n, node::Control::Crash);
            }
            Action::StartNode(n) => {
                self.lock().restarted.insert(*n);
                if let Some(tx) = lock(&self.starts).get(&layout.rack_of(*n)) {
                    let _ = tx.send(*n);
                }
            }
            Action::KillClient(r) => control(layout.node_of_rank(*r), node::Control::Kill(*r)),
            Action::Partition(a, b) => {
                let (a, b) = racks(*a, *b);
                turmoil::partition(a, b);
            }
            Action::Repair(a, b) => {
                let (a, b) = racks(*a, *b);
                turmoil::repair(a, b);
            }
            Action::Hold(a, b) => {
                let (a, b) = racks(*a, *b);
                turmoil::hold(a, b);
            }
            Action::Release(a, b) => {
                let (a, b) = racks(*a, *b);
                turmoil::release(a, b);
            }
            Action::SetRule(a, b, rule) => lock(&self.links).set(*a, *b, rule.clone()),
            Action::ClearRule(a, b) => lock(&self.links).clear(*a, *b),
        }
    }
}

thread_local! {
    /// Panics on this thread (the simulation's only one) since the hook was installed.
    static PANICS: Cell<u64> = const { Cell::new(0) };
}

/// Count every panic (tokio catches those of tasks; the count still sees them).
fn count_panics() -> u64 {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|p| p.set(p.get() + 1));
            previous(info);
        }));
    });
    PANICS.with(Cell::get)
}

/// Run one simulation to its end: every client finished (or was killed), or the time limit
/// passed; then check the invariants.
pub fn run(config: &Config) -> Report {
    let panics_before = count_panics();
    let layout = config.layout.clone();
    let observer = Arc::new(Observer::new(layout.job_size(), config.record));
    let nspace = pmix::model::Nspace::new("simjob").unwrap_or_default();
    let all: Vec<u32> = (0..layout.nodes).collect();
    let job_tree = Arc::new(layout.tree(&all));
    let ring = (config.collective == Collective::Ring).then(|| Arc::new(cluster::Tree::ring(&all)));
    let actions = faults::resolve(&config.faults, &layout, config.seed);
    let mut sim = turmoil::Builder::new()
        .simulation_duration(config.limit)
        .rng_seed(config.seed)
        .build();
    for rack in 0..layout.used_racks() {
        let base = daemon::Setup {
            node: 0,
            layout: layout.clone(),
            job_tree: job_tree.clone(),
            ring: ring.clone(),
            nspace: nspace.clone(),
            observer: observer.clone(),
            direct_modex: config.modex == Modex::Direct,
            liveness: config.liveness.clone(),
            faults: observer.links.clone(),
            incarnation: 0,
            data_server: layout.data_server(),
        };
        let (seed, workload) = (config.seed, config.workload.clone());
        let (start_tx, start_rx) = mpsc::unbounded_channel();
        lock(&observer.starts).insert(rack, start_tx);
        let start_rx = Arc::new(tokio::sync::Mutex::new(start_rx));
        sim.host(Layout::rack_name(rack), move || {
            let (base, workload, start_rx) = (base.clone(), workload.clone(), start_rx.clone());
            async move {
                let start = |node: u32, incarnation: u32| {
                    let (tx, rx) = mpsc::unbounded_channel();
                    lock(&base.observer.controls).insert(node, tx);
                    let setup = daemon::Setup {
                        node,
                        incarnation,
                        ..base.clone()
                    };
                    node::start(setup, seed, workload.clone(), rx)
                };
                for node in base.layout.nodes_of(rack) {
                    if let Err(e) = start(node, 0).await {
                        base.observer.violation(e);
                    }
                }
                // The rack runs until the simulation ends, starting again the nodes the
                // fault schedule restarts.
                let mut incarnations: BTreeMap<u32, u32> = BTreeMap::new();
                let mut starts = start_rx.lock().await;
                while let Some(node) = starts.recv().await {
                    let inc = incarnations.entry(node).or_insert(0);
                    *inc += 1;
                    if let Err(e) = start(node, *inc).await {
                        base.observer.violation(e);
                    }
                }
                std::future::pending::<()>().await;
                Ok(())
            }
        });
    }
    let total = layout.job_size();
    let (obs, l) = (observer.clone(), layout.clone());
    sim.client("observer", async move {
        for (at, action) in &actions {
            let t = now();
            if *at > t {
                tokio::time::sleep(*at - t).await;
            }
            obs.apply(&l, action);
        }
        while obs.finished() < total {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Ok(())
    });
    let mut reported = Duration::ZERO;
    let mut ended = Ok(());
    loop {
        match sim.step() {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => {
                ended = Err(format!("the run did not end cleanly: {e}"));
                break;
            }
        }
        if config.progress && sim.elapsed() >= reported + Duration::from_millis(100) {
            reported = sim.elapsed();
            eprintln!(
                "  simulated {:.1} s: {} of {total} clients finished",
                reported.as_secs_f64(),
                observer.finished()
            );
        }
    }
    if let Err(e) = ended {
        observer.violation(e);
    }
    let panics = PANICS.with(Cell::get) - panics_before;
    if panics > 0 {
        observer.violation(format!("{panics} panics"));
    }
    let (pending, views) = {
        let daemons = lock(&observer.daemons);
        let live = daemons.iter().filter(|(_, d)| !d.is_crashed());
        let pending: Vec<String> = live.clone().flat_map(|(_, d)| d.pending()).collect();
        let views: BTreeMap<u32, Vec<u32>> = live.map(|(n, d)| (*n, d.down())).collect();
        (pending, views)
    };
    let found = check::check(config, &observer.lock(), pending, &views);
    for v in found {
        observer.violation(v);
    }
    drop(sim);
    // The daemons hold the observer and the observer holds them: break the cycle, or every
    // run of a sweep would keep its daemons.
    lock(&observer.daemons).clear();
    lock(&observer.controls).clear();
    lock(&observer.starts).clear();
    let s = observer.lock();
    Report {
        seed: config.seed,
        nodes: layout.nodes,
        racks: layout.used_racks(),
        clients: layout.clients,
        messages: s.messages,
        bytes: s.bytes,
        heartbeats: s.heartbeats,
        simulated: s.last_done,
        trace_hash: s.trace.hash(),
        trace_events: s.trace.events(),
        completed: s.completed,
        faults: s.faults.clone(),
        violations: s.violations.clone(),
        trace: s.lines.clone().unwrap_or_default(),
    }
}
