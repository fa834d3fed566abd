//! A node's host daemon: the `Host` of the node's PMIx server, talking to the other nodes'
//! daemons over turmoil TCP.
//!
//! **Collectives** run as a tree allgather ([`crate::cluster::Tree`]): each daemon waits for
//! its own server's contribution and its children's, sends the concatenation to its parent,
//! and the root sends the outcome back down. A collective is named by the signature of its
//! process set and how many collectives of that set came before it on this node, which every
//! participant counts alike because the PMIx standard orders collectives of one set.
//!
//! **Failures.** The root decides every collective's outcome, so that all live participants
//! see the same one:
//!
//! - a daemon whose child is down (or has a terminated process among the participants) and
//!   whose contribution never came sends an error up instead of data, and ends the
//!   collective for its own subtree at once: the root cannot succeed without that data;
//! - a daemon whose parent goes down after it sent its part up asks the root for the outcome
//!   (and, when the root itself is down, the root's other children, which either received
//!   it or never will): the parent may have passed the data on before it failed;
//! - a server that lost one of its own participants joins anyway, with
//!   `PMIX_LOCAL_COLLECTIVE_STATUS` set to the loss, and its daemon sends the error up at
//!   once (at the root: ends the collective); when every participant on the root's node
//!   is dead before any entered, a participant tells the root, which ends it;
//! - `PMIX_TIMEOUT` bounds a collective (fence, connect, disconnect) at every daemon, as it
//!   does at every server.
//!
//! Group operations with `PMIX_GROUP_NOTIFY_TERMINATION` run apart, as a star that goes on
//! without lost members and moves its root when the root fails ([`tolerant`]).
//!
//! One failure per collective is always resolved this way; two at once (a parent and the
//! root, say) may leave a subtree with an error where the rest succeeded, which the run's
//! invariants then report.
//!
//! **Liveness.** Daemons send heartbeats along the job's tree. A neighbour silent for
//! `reconnect_after` gets a fresh connection (a partition loses TCP segments and turmoil never
//! resends them, so the old stream is stuck for good); silent for `suspect_after`, it is
//! declared down, and the daemon that noticed tells every other node. A connection from a
//! peer that ends declares the peer down at once (daemons never close a working link, so only
//! a crash ends one). When a neighbour goes down, its own neighbours in the tree are watched
//! in its place, so that every node of a crashed rack is noticed. A node declared down stays down: its
//! messages are ignored from then on, as a fail-stop model wants. Each node down and each
//! terminated process is raised to the local clients as `PMIX_EVENT_NODE_DOWN` and
//! `PMIX_EVENT_PROC_TERMINATED`.
//!
//! **Requests** to one daemon (fetch, publish, lookup, unpublish, launch, go, halt, event) go
//! again on a new connection every `reconnect_after` until the reply comes or the node is
//! declared down; the node asked serves each once and repeats its reply.
//!
//! **Events** a server raises for processes of other nodes (its clients' events whose range
//! goes beyond the node, and the group events that carry invitations between servers) go as
//! requests to the nodes in range, whose servers deliver them; a node that is down is passed
//! over, since the node-down event already reports its processes.
//!
//! **Published data** lives at the data server, the last node's daemon, in the library's
//! `PublishBoard`; other daemons forward `publish`, `lookup` and `unpublish` to it. It is lost
//! when that node restarts; a request to it while it is down is `PMIX_ERR_LOST_CONNECTION`.
//!
//! **Link faults** (drops and delays between two nodes, slow nodes) are applied here, in the
//! daemon's own transport, because connections inside one turmoil host ignore turmoil's
//! network settings.
//!
//! Deterministic (DESIGN §4): ordered maps only, simulated time only, no threads.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use pmix::codec::{BufferType, DataBuffer};
use pmix::host::fabric::FabricName;
use pmix::host::publish::PublishBoard;
use pmix::model::{
    App, DataArray, DataRange, FabricOperation, GroupOperation, Info, Nspace, PData, Proc, Rank,
    Status, attr,
};
use pmix::server::{Host, Server};
use pmix::store::published::Topology;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use turmoil::net::{TcpListener, TcpStream};

use crate::cluster::{Layout, Tree};
use crate::trace::fnv;
use crate::{LinkFaults, Liveness, Observer, now};

mod collective;
mod links;
mod liveness;
mod services;
mod tolerant;
mod wire;

use services::DataOp;
use wire::{Body, Msg};
use wire::{
    pack_event, pack_keys, pack_launch, pack_procs, unpack_event, unpack_launch, unpack_procs,
};

/// The largest daemon message accepted (a fence's data of the whole cluster fits).
const MAX_MESSAGE: u32 = 1 << 30;

/// The status a collective ends with when a participant is lost: the one the library's
/// server uses for a local participant that disconnects.
pub(crate) const LOST: Status = Status::ERR_LOST_CONNECTION;

/// Where an outcome (data, or the status that ended it) is awaited.
type Waiter = oneshot::Sender<Result<Vec<u8>, Status>>;
type Awaited = oneshot::Receiver<Result<Vec<u8>, Status>>;

/// Which collective operation a collective is: each kind counts its collectives of a process
/// set apart, so a connect never matches a fence of the same processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Fence = 1,
    Connect = 2,
    Disconnect = 3,
    GroupConstruct = 4,
    GroupDestruct = 5,
}

/// What a link task is told.
enum Out {
    Msg(Msg),
    /// Drop the connection; the next message opens a new one.
    Reset,
}

/// One collective in progress at this node.
#[derive(Debug, Default)]
struct Collective {
    /// Set when this node's own server joined.
    joined: Option<Joined>,
    /// Contributions of the children's subtrees: status and data, by child.
    got: BTreeMap<u32, (i32, Vec<u8>)>,
    /// Nodes that asked this node (as the root) for the outcome.
    askers: BTreeSet<u32>,
    /// Nodes that asked this node (as a child of a root that is down) for the outcome, not
    /// answered yet because this node has not seen the root go down itself.
    peer_askers: BTreeSet<u32>,
    /// Nodes this orphan asked for the outcome, and those still to answer.
    asked: BTreeSet<u32>,
    asking: BTreeSet<u32>,
    /// At the root, before its server joined: the processes of the collective, from a node
    /// that found every participant here dead.
    lost_here: Option<Vec<Proc>>,
    /// At a participant: it told the root that the root's participants are all dead.
    told_root: bool,
}

#[derive(Debug)]
struct Joined {
    parent: Option<u32>,
    children: Vec<u32>,
    root: u32,
    root_children: Vec<u32>,
    procs: Vec<Proc>,
    data: Vec<u8>,
    /// The node's own part failed (`PMIX_LOCAL_COLLECTIVE_STATUS` from its server).
    status: i32,
    waiter: Option<Waiter>,
    sent_up: bool,
}

/// A reply's status and data.
type Answer = (i32, Vec<u8>);

#[derive(Debug, Default)]
struct State {
    /// Collectives started per process-set signature.
    seq: BTreeMap<u64, u64>,
    collectives: BTreeMap<u64, Collective>,
    /// The outcome of every collective this node saw end.
    finished: BTreeMap<u64, (i32, Vec<u8>)>,
    /// Requests sent to other daemons (direct modex, publish, lookup, unpublish), by number:
    /// the node asked, and the waiter.
    calls: BTreeMap<u64, (u32, Waiter)>,
    next_call: u64,
    /// Requests of other daemons, by node and number: `None` while being served, then the
    /// reply, so that a request sent again is answered again but served only once.
    served: BTreeMap<(u32, u64), Option<Answer>>,
    /// Nodes known to be down (with the incarnation that went down), the latest incarnation
    /// heard of each node, and processes known to have terminated.
    down: BTreeMap<u32, u32>,
    incarnation: BTreeMap<u32, u32>,
    dead_ranks: BTreeSet<u32>,
    /// When each tree neighbour was last heard from, and when its link was last renewed.
    heard: BTreeMap<u32, Duration>,
    renewed: BTreeMap<u32, Duration>,
    /// Group collectives that go on without lost members, in progress; and for those that
    /// ended here, their participant nodes and root.
    tolerant: BTreeMap<u64, tolerant::Tolerant>,
    tolerant_done: BTreeMap<u64, (Vec<u32>, u32)>,
    /// Spawned jobs this node knows of: the node of each rank; the parent of those spawned
    /// here; and those registered with this node's server.
    jobs: BTreeMap<Nspace, Vec<u32>>,
    parents: BTreeMap<Nspace, Proc>,
    registered: BTreeSet<Nspace>,
    /// Spawned jobs whose launch failed: a late launch order for one is refused.
    halted: BTreeSet<Nspace>,
    spawned: u32,
}

/// What a daemon needs to know of the cluster.
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    pub node: u32,
    pub layout: Layout,
    /// The tree of the whole job (every node), shared by all daemons: heartbeats follow it.
    pub job_tree: Arc<Tree>,
    /// Whether collectives run around a ring rather than up and down a tree, and the
    /// whole job's ring.
    pub ring: Option<Arc<Tree>>,
    pub nspace: Nspace,
    pub observer: Arc<Observer>,
    pub direct_modex: bool,
    pub liveness: Liveness,
    pub faults: Arc<Mutex<LinkFaults>>,
    /// How many times this node restarted before this daemon.
    pub incarnation: u32,
    /// The node whose daemon keeps published data.
    pub data_server: u32,
}

/// A node's daemon, shared by its server (as its host) and its network tasks.
#[derive(Clone, Debug)]
pub(crate) struct Daemon(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    setup: Setup,
    state: Mutex<State>,
    links: Mutex<BTreeMap<u32, mpsc::UnboundedSender<Out>>>,
    /// This node's server, which answers the other nodes' direct-modex requests and raises
    /// events to the local clients. Weak: the server holds the daemon as its host.
    server: Mutex<Weak<Server>>,
    /// The daemon's tasks, aborted in the order they started when the node crashes (an
    /// ordered list: waking many waiters of one channel instead is not replayable).
    tasks: Mutex<Vec<AbortHandle>>,
    crashed: std::sync::atomic::AtomicBool,
    /// Published data, when this node is the data server (lost when it restarts).
    board: PublishBoard,
    /// Where launches of spawned jobs' processes go: the node's agent.
    launcher: Mutex<Option<mpsc::UnboundedSender<Launch>>>,
}

/// An order to the node's agent about a spawned job's local processes.
#[derive(Debug)]
pub(crate) enum Launch {
    /// Register the job with the server and make its local ranks `ranks` ready to run,
    /// answering when they are.
    Start {
        nspace: Nspace,
        parent: Proc,
        placement: Vec<u32>,
        ranks: Vec<u32>,
        done: oneshot::Sender<Result<(), Status>>,
    },
    /// Let the job's local processes run: every node launched its part.
    Go(Nspace),
    /// Kill the job's local processes (or forget them, if they never ran).
    Halt(Nspace),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Daemon {
    /// The daemon of `setup.node`.
    pub(crate) fn new(setup: Setup) -> Daemon {
        Daemon(Arc::new(Inner {
            setup,
            state: Mutex::new(State::default()),
            links: Mutex::new(BTreeMap::new()),
            server: Mutex::new(Weak::new()),
            tasks: Mutex::new(Vec::new()),
            crashed: std::sync::atomic::AtomicBool::new(false),
            board: PublishBoard::default(),
            launcher: Mutex::new(None),
        }))
    }

    /// The node crashed: every task of the daemon ends.
    pub(crate) fn crash(&self) {
        self.0.crashed.store(true, Ordering::Relaxed);
        let tasks = std::mem::take(&mut *lock(&self.0.tasks));
        for t in tasks {
            t.abort();
        }
    }

    fn me(&self) -> u32 {
        self.0.setup.node
    }

    fn layout(&self) -> &Layout {
        &self.0.setup.layout
    }

    pub(crate) fn set_launcher(&self, launcher: mpsc::UnboundedSender<Launch>) {
        *lock(&self.0.launcher) = Some(launcher);
    }

    pub(crate) fn set_server(&self, server: &Arc<Server>) {
        *lock(&self.0.server) = Arc::downgrade(server);
    }

    /// Run `task` on this rack until it ends or the node crashes.
    pub(crate) fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        if self.0.crashed.load(Ordering::Relaxed) {
            return;
        }
        let handle = tokio::spawn(task).abort_handle();
        let mut tasks = lock(&self.0.tasks);
        // Forget the tasks that ended, now and then, so the list stays short.
        if tasks.len() >= 64 && tasks.len().is_power_of_two() {
            tasks.retain(|t| !t.is_finished());
        }
        tasks.push(handle);
    }

    /// Start listening and, when heartbeats are on, beating. A daemon that restarted tells
    /// every node it is back.
    pub(crate) fn start(&self) {
        self.spawn(self.clone().listen());
        if !self.0.setup.liveness.heartbeat.is_zero() {
            self.spawn(self.clone().heartbeat());
        }
        if self.0.setup.incarnation > 0 {
            for n in (0..self.layout().nodes).filter(|n| *n != self.me()) {
                self.send(n, Body::Heartbeat);
            }
        }
    }

    pub(crate) fn is_crashed(&self) -> bool {
        self.0.crashed.load(Ordering::Relaxed)
    }

    /// The nodes this daemon holds to be down.
    pub(crate) fn down(&self) -> Vec<u32> {
        lock(&self.0.state).down.keys().copied().collect()
    }

    fn note(&self, what: &[u8]) {
        self.0.setup.observer.record(self.me(), what);
    }

    /// A message from another daemon.
    fn received(&self, m: Msg) {
        let from = m.from;
        let mut state = lock(&self.0.state);
        let known = state.incarnation.get(&from).copied().unwrap_or(0);
        let down = state.down.get(&from).copied();
        if m.incarnation < known || down.is_some_and(|d| m.incarnation <= d) {
            return; // an incarnation that is gone stays gone
        }
        if m.incarnation > known {
            // The node restarted: the incarnation before is gone, whether or not this daemon
            // noticed; the new one is up.
            drop(state);
            if down.is_none() {
                self.node_down(from, true);
            }
            state = lock(&self.0.state);
            state.down.remove(&from);
            state.incarnation.insert(from, m.incarnation);
            // The new incarnation numbers its requests from the start again.
            state.served.retain(|(n, _), _| *n != from);
            state.heard.insert(from, now());
            drop(state);
            self.note(format!("node {from} back as incarnation {}", m.incarnation).as_bytes());
            self.link(from, Out::Reset);
            state = lock(&self.0.state);
        }
        if let Some(t) = state.heard.get_mut(&from) {
            *t = now();
        }
        if let Some(key) = m.body.request_key() {
            match state.served.get(&(from, key)) {
                Some(None) => return, // sent again while it is being served
                Some(Some((status, data))) => {
                    // Sent again because the reply was lost: the same reply again, on a new
                    // connection (the one that lost it may be stuck for good).
                    let (status, data) = (*status, data.clone());
                    drop(state);
                    self.note(format!("reply {key} to {from} again").as_bytes());
                    self.link(from, Out::Reset);
                    self.send(from, Body::Reply { key, status, data });
                    return;
                }
                None => {
                    state.served.insert((from, key), None);
                }
            }
        }
        match m.body {
            Body::Contrib { key, status, data } => {
                self.note(format!("contrib {key:016x} from {from}: {status}").as_bytes());
                if let Some((s, d)) = state.finished.get(&key).cloned() {
                    drop(state);
                    let (status, data) = (s, d);
                    self.send(from, Body::Release { key, status, data });
                    return;
                }
                let c = state.collectives.entry(key).or_default();
                c.got.insert(from, (status, data));
                if self.0.setup.incarnation > 0 {
                    // This node restarted without the job's processes: a collective whose tree
                    // runs through it counts them and can never complete.
                    self.finish(&mut state, key, LOST.0, Vec::new());
                    return;
                }
                self.progress(&mut state, key);
            }
            Body::Release { key, status, data } => {
                self.note(format!("release {key:016x} {status}").as_bytes());
                if !state.finished.contains_key(&key) {
                    self.finish(&mut state, key, status, data);
                }
            }
            Body::RootLost { key, data } => {
                self.note(format!("root lost {key:016x} by {from}").as_bytes());
                if let Some((status, data)) = state.finished.get(&key).cloned() {
                    drop(state);
                    self.send(from, Body::Release { key, status, data });
                    return;
                }
                if let Some(procs) = unpack_procs(data) {
                    let c = state.collectives.entry(key).or_default();
                    c.askers.insert(from);
                    if c.joined.is_none() {
                        c.lost_here = Some(procs);
                    }
                    self.root_check(&mut state, key);
                }
            }
            Body::AskRoot { key } => {
                self.note(format!("asked {key:016x} by {from}").as_bytes());
                if let Some((status, data)) = state.finished.get(&key).cloned() {
                    drop(state);
                    self.send(from, Body::Release { key, status, data });
                } else {
                    let c = state.collectives.entry(key).or_default();
                    c.askers.insert(from);
                }
            }
            Body::AskPeer { key } => {
                self.note(format!("asked {key:016x} by {from} as a peer").as_bytes());
                if let Some((status, data)) = state.finished.get(&key).cloned() {
                    drop(state);
                    self.send(from, Body::Release { key, status, data });
                    return;
                }
                let root_down = state
                    .collectives
                    .get(&key)
                    .and_then(|c| c.joined.as_ref())
                    .is_none_or(|j| state.down.contains_key(&j.root));
                if root_down {
                    drop(state);
                    self.send(from, Body::Unknown { key });
                } else if let Some(c) = state.collectives.get_mut(&key) {
                    c.peer_askers.insert(from);
                }
            }
            Body::Unknown { key } => {
                self.note(format!("unknown {key:016x} at {from}").as_bytes());
                let Some(c) = state.collectives.get_mut(&key) else {
                    return;
                };
                if c.asking.remove(&from) && c.asking.is_empty() {
                    self.ask(&mut state, key);
                }
            }
            Body::Part { key, data } => {
                self.note(format!("part {key:016x} from {from}").as_bytes());
                self.part_received(&mut state, key, from, data);
            }
            Body::Outcome { key, status, data } => {
                self.note(format!("outcome {key:016x} from {from}: {status}").as_bytes());
                self.outcome_received(&mut state, key, status, data);
            }
            Body::Publish { key, rank, data } => {
                drop(state);
                self.serve(key, from, rank, DataOp::Publish, data);
            }
            Body::Lookup { key, rank, data } => {
                drop(state);
                self.serve(key, from, rank, DataOp::Lookup, data);
            }
            Body::Unpublish { key, rank, data } => {
                drop(state);
                self.serve(key, from, rank, DataOp::Unpublish, data);
            }
            Body::Launch { key, data } => {
                drop(state);
                self.note(format!("launch {key} for {from}").as_bytes());
                let d = self.clone();
                self.spawn(async move { d.serve_launch(key, from, data).await });
            }
            Body::Halt { key, data } => {
                drop(state);
                let nspace = String::from_utf8_lossy(&data).into_owned();
                self.note(format!("halt {nspace}").as_bytes());
                if let Ok(ns) = Nspace::new(&nspace) {
                    self.halt(&ns);
                }
                self.reply(from, key, 0, Vec::new());
            }
            Body::Go { key, data } => {
                drop(state);
                let nspace = String::from_utf8_lossy(&data).into_owned();
                self.note(format!("go {nspace}").as_bytes());
                if let (Ok(ns), Some(l)) = (Nspace::new(&nspace), lock(&self.0.launcher).as_ref()) {
                    let _ = l.send(Launch::Go(ns));
                }
                self.reply(from, key, 0, Vec::new());
            }
            Body::Event { key, status, data } => {
                drop(state);
                self.note(format!("event {status} from {from}").as_bytes());
                let d = self.clone();
                self.spawn(async move { d.serve_event(key, from, Status(status), data).await });
            }
            Body::Fetch { key, rank } => {
                drop(state);
                self.note(format!("fetch {key} of rank {rank} for {from}").as_bytes());
                let d = self.clone();
                self.spawn(async move { d.serve_fetch(key, from, rank).await });
            }
            Body::Reply { key, status, data } => {
                self.note(format!("fetched {key} {status}").as_bytes());
                if let Some((_, waiter)) = state.calls.remove(&key) {
                    let r = if status == 0 {
                        Ok(data)
                    } else {
                        Err(Status(status))
                    };
                    let _ = waiter.send(r);
                }
            }
            Body::Heartbeat => {}
            Body::NodeDown { node, incarnation } => {
                let latest = state.incarnation.get(&node).copied().unwrap_or(0);
                drop(state);
                if incarnation == latest && node < self.layout().nodes {
                    self.node_down(node, false);
                }
            }
            Body::ProcDown { rank } => {
                drop(state);
                if rank < self.layout().job_size() {
                    self.proc_down(rank);
                }
            }
        }
    }

    /// What is still in progress at this daemon, described (empty when nothing is).
    pub(crate) fn pending(&self) -> Vec<String> {
        let state = lock(&self.0.state);
        let me = self.me();
        let mut out: Vec<String> = state
            .collectives
            .iter()
            .map(|(key, c)| {
                format!(
                    "node {me}: collective {key:016x} still open (joined: {}, contributions from {:?}, asking {:?})",
                    c.joined.is_some(),
                    c.got.keys().collect::<Vec<_>>(),
                    c.asking
                )
            })
            .collect();
        for key in state.tolerant.keys() {
            out.push(format!("node {me}: group collective {key:016x} still open"));
        }
        for (key, (to, _)) in &state.calls {
            out.push(format!("node {me}: request {key} to node {to} unanswered"));
        }
        out
    }
}

impl Host for Daemon {
    fn supports_direct_modex(&self) -> bool {
        self.0.setup.direct_modex
    }

    /// Logged into the run's trace, stamped with simulated time (the library's default
    /// would read the wall clock and write to the terminal).
    async fn log(
        &self,
        proc: Proc,
        timestamp: i64,
        data: Vec<Info>,
        _directives: Vec<Info>,
    ) -> Result<(), Status> {
        if data.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let at = if timestamp != 0 {
            timestamp
        } else {
            i64::try_from(now().as_secs()).unwrap_or(i64::MAX)
        };
        for i in &data {
            self.note(format!("log {proc} at {at}: {} = {:?}", i.key.as_str(), i.value).as_bytes());
        }
        Ok(())
    }

    async fn direct_modex(&self, proc: Proc, _info: Vec<Info>) -> Result<Vec<u8>, Status> {
        let layout = self.layout();
        if proc.nspace != self.0.setup.nspace || proc.rank.0 >= layout.job_size() {
            return Err(Status::ERR_NOT_FOUND);
        }
        let owner = layout.node_of_rank(proc.rank.0);
        let rank = proc.rank.0;
        self.call(owner, |key| Body::Fetch { key, rank }).await
    }

    async fn publish(&self, proc: Proc, info: Vec<Info>) -> Result<(), Status> {
        let mut b = DataBuffer::new();
        b.pack(&info).map_err(|_| Status::ERR_BAD_PARAM)?;
        let (data, rank) = (b.unload(), proc.rank.0);
        let to = self.0.setup.data_server;
        self.call(to, |key| Body::Publish { key, rank, data })
            .await
            .map(|_| ())
    }

    async fn lookup(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<Vec<PData>, Status> {
        let data = pack_keys(&keys, &info)?;
        let rank = proc.rank.0;
        let to = self.0.setup.data_server;
        let found = self
            .call(to, |key| Body::Lookup { key, rank, data })
            .await?;
        let mut b = DataBuffer::load(found, BufferType::NonDescribed);
        b.unpack::<PData>(usize::MAX)
            .map_err(|_| Status::ERR_UNPACK_FAILURE)
    }

    async fn unpublish(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let data = pack_keys(&keys, &info)?;
        let rank = proc.rank.0;
        let to = self.0.setup.data_server;
        self.call(to, |key| Body::Unpublish { key, rank, data })
            .await
            .map(|_| ())
    }

    /// Place one process per node on the nodes after the requester's, in order, skipping
    /// nodes known to be down, and launch in two phases: every node makes its processes
    /// ready, then all are let run. If any node fails to get ready, the others forget theirs
    /// and the spawn fails with `PMIX_ERR_JOB_FAILED_TO_LAUNCH`, with none of the job's
    /// processes having run: a node can fail after it got ready and before its answer
    /// arrives, and a job that had already run there could not be called unlaunched.
    async fn spawn(
        &self,
        proc: Proc,
        _job_info: Vec<Info>,
        apps: Vec<App>,
    ) -> Result<Nspace, Status> {
        // At most a million processes: the placement is a list of their nodes.
        let size = apps
            .iter()
            .try_fold(0u32, |sum, a| {
                sum.checked_add(u32::try_from(a.maxprocs).ok()?)
            })
            .filter(|s| *s <= 1 << 20)
            .ok_or(Status::ERR_BAD_PARAM)?;
        let nodes = self.layout().nodes;
        let (nspace, placement) = {
            let mut state = lock(&self.0.state);
            // Nodes down, and nodes that restarted (a collective through one fails: see
            // `received`), get no processes.
            let live: Vec<u32> = (1..=nodes)
                .map(|i| (self.me() + i) % nodes)
                .filter(|n| !state.down.contains_key(n))
                .filter(|n| state.incarnation.get(n).is_none_or(|i| *i == 0))
                .collect();
            if size == 0 || live.is_empty() {
                return Err(Status::ERR_BAD_PARAM);
            }
            let placement: Vec<u32> = (0..size as usize).map(|r| live[r % live.len()]).collect();
            state.spawned += 1;
            let name = format!(
                "{}.spawn.{}.{}",
                self.0.setup.nspace.as_str(),
                self.me(),
                state.spawned
            );
            let nspace = Nspace::new(&name).map_err(|_| Status::ERR_BAD_PARAM)?;
            state.jobs.insert(nspace.clone(), placement.clone());
            state.parents.insert(nspace.clone(), proc.clone());
            (nspace, placement)
        };
        self.note(format!("spawn {} on {placement:?}", nspace.as_str()).as_bytes());
        let mut targets: Vec<u32> = placement.clone();
        targets.sort_unstable();
        targets.dedup();
        let order = pack_launch(&nspace, &proc, &placement);
        // Every node is asked at once; the answers are awaited in order.
        let mut launches = Vec::new();
        for &t in &targets {
            let data = order.clone();
            launches.push((t, self.request(t, |key| Body::Launch { key, data })));
        }
        let mut failed = false;
        for (t, launch) in launches {
            let result = match launch {
                Ok(rx) => rx.await.unwrap_or(Err(LOST)),
                Err(s) => Err(s),
            };
            if let Err(s) = result {
                self.note(format!("launch on {t} failed: {}", s.0).as_bytes());
                failed = true;
            }
        }
        // Sent as requests, so that they go again until each node has them; nobody waits
        // for the answers (a node that goes down meanwhile takes its part with it).
        let name = nspace.as_str().as_bytes().to_vec();
        for t in targets {
            let data = name.clone();
            let _ = self.request(t, |key| {
                if failed {
                    Body::Halt { key, data }
                } else {
                    Body::Go { key, data }
                }
            });
        }
        if failed {
            return Err(Status::ERR_JOB_FAILED_TO_LAUNCH);
        }
        Ok(nspace)
    }

    /// Carry an event raised here to the other nodes whose processes are in its range (a
    /// custom range's nodes; every node for a wider range), whose servers deliver it
    /// (`Server::notify_event`). Sent as requests, so that each goes again until its node has
    /// it. A node that is down is passed over: its processes are gone, and the
    /// `PMIX_EVENT_NODE_DOWN` raised everywhere says so.
    async fn notify_event(
        &self,
        status: Status,
        source: Proc,
        range: DataRange,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let every = || (0..self.layout().nodes).collect::<Vec<u32>>();
        let nodes = if range == DataRange::CUSTOM {
            let event = pmix::events::Event {
                status,
                source: source.clone(),
                range,
                info: info.clone(),
            };
            let procs = event.custom_range().unwrap_or_default();
            self.nodes_of(&procs).unwrap_or_else(|_| every())
        } else {
            every()
        };
        let data = pack_event(&source, range, &info)?;
        let mut sent = Vec::new();
        for n in nodes.into_iter().filter(|n| *n != self.me()) {
            let data = data.clone();
            let status = status.0;
            if let Ok(rx) = self.request(n, |key| Body::Event { key, status, data }) {
                sent.push(rx);
            }
        }
        for rx in sent {
            match rx.await.unwrap_or(Err(LOST)) {
                Ok(_) | Err(LOST) => {}
                Err(s) => return Err(s),
            }
        }
        Ok(())
    }

    /// A connect is a collective of the nodes involved; once it succeeds, the spawned jobs
    /// among `procs` that this node's server does not hold are registered with it, so that
    /// the server answers the connect with their job information (§12.3.1).
    async fn connect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        let (key, rx) = self.join(Kind::Connect, &procs, &info, Vec::new())?;
        self.bound(key, &info);
        rx.await.unwrap_or(Err(LOST))?;
        self.share_jobs(&procs).await;
        Ok(())
    }

    async fn disconnect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        let (key, rx) = self.join(Kind::Disconnect, &procs, &info, Vec::new())?;
        self.bound(key, &info);
        rx.await.unwrap_or(Err(LOST)).map(|_| ())
    }

    /// The cluster's fabric ([`crate::fabric`]), the same from every daemon.
    async fn fabric(
        &self,
        _proc: Proc,
        op: FabricOperation,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let name = FabricName {
            index: 0,
            identifier: crate::fabric::FABRIC,
            vendor: Some(crate::fabric::VENDOR),
            plane: None,
        };
        if name.asked_by(op, &directives) {
            Ok(crate::fabric::describe(self.layout()))
        } else {
            Err(Status::ERR_NOT_FOUND)
        }
    }

    /// A group operation is a collective of its members' nodes, named by the group as well
    /// as its members; once formed, the members' spawned jobs are registered here as at a
    /// connect (§14.2.6). A construction that asks for a context id gets the collective's key,
    /// a hash of its signature and generation that every member's node computes alike. With
    /// `PMIX_GROUP_NOTIFY_TERMINATION` it goes on without members that terminate
    /// ([`tolerant`]) and answers with `PMIX_GROUP_MEMBERSHIP`, those still in.
    async fn group(
        &self,
        op: GroupOperation,
        group: String,
        procs: Vec<Proc>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let kind = if op == GroupOperation::CONSTRUCT {
            Kind::GroupConstruct
        } else {
            Kind::GroupDestruct
        };
        let mut answer = Vec::new();
        let key = if self.tolerates_losses(&procs, &directives) {
            // Goes on without members lost ([`tolerant`]), and names those still in.
            let key = self.next_key(kind as u8 | 0x80, &group, &procs);
            self.note(format!("join tolerant {key:016x}").as_bytes());
            let (tx, rx) = oneshot::channel();
            self.join_tolerant(key, &procs, tx)?;
            self.bound(key, &directives);
            let outcome = rx.await.unwrap_or(Err(LOST))?;
            let members = DataArray::of_procs(self.members_of(outcome));
            answer.push(Info::new(attr::GROUP_MEMBERSHIP, members));
            key
        } else {
            let (key, rx) = self.join_named(kind, &group, &procs, &directives, Vec::new())?;
            self.bound(key, &directives);
            rx.await.unwrap_or(Err(LOST))?;
            key
        };
        if kind == Kind::GroupConstruct {
            self.share_jobs(&procs).await;
        }
        let wants_id = Info::flag(&directives, attr::GROUP_ASSIGN_CONTEXT_ID);
        if kind == Kind::GroupConstruct && wants_id {
            let id = usize::try_from(key).unwrap_or(usize::MAX);
            answer.push(Info::new(attr::GROUP_CONTEXT_ID, id));
        }
        Ok(answer)
    }

    async fn fence_nb(
        &self,
        procs: Vec<Proc>,
        info: Vec<Info>,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, Status> {
        let (key, rx) = self.join(Kind::Fence, &procs, &info, data)?;
        self.bound(key, &info);
        rx.await.unwrap_or(Err(LOST))
    }
}
