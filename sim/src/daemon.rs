//! A node's host daemon: the `Host` of the node's PMIx server, talking to the other nodes'
//! daemons over turmoil TCP.
//!
//! **Collectives** run as a tree allgather ([`crate::cluster::Tree`]): each daemon waits for
//! its own server's contribution and its children's, sends the concatenation to its parent,
//! and the root sends the outcome back down. A collective is named by the signature of its
//! node set and how many collectives of that set came before it on this node, which every
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
//! - `PMIX_TIMEOUT` bounds a collective (fence, connect, disconnect) at every daemon, as it
//!   does at every server.
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
use pmix::model::{App, DataArray, DataRange, Info, Nspace, PData, Proc, Rank, Status, attr};
use pmix::server::publish::PublishBoard;
use pmix::server::{Host, Server};
use pmix::store::published::Topology;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use turmoil::net::{TcpListener, TcpStream};

use crate::cluster::{Layout, Tree};
use crate::trace::fnv;
use crate::{LinkFaults, Liveness, Observer, now};

/// The largest daemon message accepted (a fence's data of the whole cluster fits).
const MAX_MESSAGE: u32 = 1 << 30;

/// The status a collective ends with when a participant is lost: the one the library's
/// server uses for a local participant that disconnects.
pub(crate) const LOST: Status = Status::ERR_LOST_CONNECTION;

/// Where an outcome (data, or the status that ended it) is awaited.
type Waiter = oneshot::Sender<Result<Vec<u8>, Status>>;
type Awaited = oneshot::Receiver<Result<Vec<u8>, Status>>;

/// What one daemon tells another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Body {
    /// A subtree's contribution to collective `key`: its data, or the error that makes the
    /// collective fail.
    Contrib {
        key: u64,
        status: i32,
        data: Vec<u8>,
    },
    /// The outcome of collective `key`.
    Release {
        key: u64,
        status: i32,
        data: Vec<u8>,
    },
    /// To the root: the sender lost its parent after sending its part up; send it the outcome.
    AskRoot {
        key: u64,
    },
    /// To a child of a root that is down: the outcome, if it reached you.
    AskPeer {
        key: u64,
    },
    /// The answer to `AskPeer` from a node the outcome never reached.
    Unknown {
        key: u64,
    },
    /// Direct modex: the data rank `rank` committed (request `key`).
    Fetch {
        key: u64,
        rank: u32,
    },
    /// To the data server: rank `rank` publishes the packed infos in `data`.
    Publish {
        key: u64,
        rank: u32,
        data: Vec<u8>,
    },
    /// To the data server: rank `rank` looks up the packed keys and directives in `data`.
    Lookup {
        key: u64,
        rank: u32,
        data: Vec<u8>,
    },
    /// To the data server: rank `rank` unpublishes the packed keys and directives in `data`.
    Unpublish {
        key: u64,
        rank: u32,
        data: Vec<u8>,
    },
    /// Start the local processes of a spawned job (request `key`): `data` packs its
    /// namespace, the requester and the node of each of its ranks.
    Launch {
        key: u64,
        data: Vec<u8>,
    },
    /// Stop the local processes of the spawned job named in `data` (its launch failed).
    Halt {
        data: Vec<u8>,
    },
    /// Let the local processes of the spawned job named in `data` run (every node launched).
    Go {
        data: Vec<u8>,
    },
    /// The answer to request `key` (a fetch, publish, lookup, unpublish or launch).
    Reply {
        key: u64,
        status: i32,
        data: Vec<u8>,
    },
    Heartbeat,
    /// Incarnation `incarnation` of node `node` is down.
    NodeDown {
        node: u32,
        incarnation: u32,
    },
    ProcDown {
        rank: u32,
    },
}

/// A message, the node that sent it and that node's incarnation (0 until it restarts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Msg {
    pub from: u32,
    pub incarnation: u32,
    pub body: Body,
}

impl Msg {
    fn encode(&self) -> Vec<u8> {
        let (kind, key, word, data): (u8, u64, u32, &[u8]) = match &self.body {
            Body::Contrib { key, status, data } => (1, *key, status.cast_unsigned(), data),
            Body::Release { key, status, data } => (2, *key, status.cast_unsigned(), data),
            Body::AskRoot { key } => (3, *key, 0, &[]),
            Body::AskPeer { key } => (4, *key, 0, &[]),
            Body::Unknown { key } => (5, *key, 0, &[]),
            Body::Fetch { key, rank } => (6, *key, *rank, &[]),
            Body::Reply { key, status, data } => (7, *key, status.cast_unsigned(), data),
            Body::Publish { key, rank, data } => (11, *key, *rank, data),
            Body::Lookup { key, rank, data } => (12, *key, *rank, data),
            Body::Unpublish { key, rank, data } => (13, *key, *rank, data),
            Body::Launch { key, data } => (14, *key, 0, data),
            Body::Halt { data } => (15, 0, 0, data),
            Body::Go { data } => (16, 0, 0, data),
            Body::Heartbeat => (8, 0, 0, &[]),
            Body::NodeDown { node, incarnation } => (9, u64::from(*incarnation), *node, &[]),
            Body::ProcDown { rank } => (10, 0, *rank, &[]),
        };
        let mut out = Vec::with_capacity(21 + data.len());
        out.push(kind);
        out.extend_from_slice(&self.from.to_le_bytes());
        out.extend_from_slice(&self.incarnation.to_le_bytes());
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&word.to_le_bytes());
        out.extend_from_slice(data);
        out
    }

    fn decode(b: &[u8]) -> Option<Msg> {
        let kind = *b.first()?;
        let from = u32::from_le_bytes(b.get(1..5)?.try_into().ok()?);
        let incarnation = u32::from_le_bytes(b.get(5..9)?.try_into().ok()?);
        let key = u64::from_le_bytes(b.get(9..17)?.try_into().ok()?);
        let word = u32::from_le_bytes(b.get(17..21)?.try_into().ok()?);
        let data = b.get(21..)?.to_vec();
        let status = word.cast_signed();
        let body = match kind {
            1 => Body::Contrib { key, status, data },
            2 => Body::Release { key, status, data },
            3 => Body::AskRoot { key },
            4 => Body::AskPeer { key },
            5 => Body::Unknown { key },
            6 => Body::Fetch { key, rank: word },
            7 => Body::Reply { key, status, data },
            11 => Body::Publish {
                key,
                rank: word,
                data,
            },
            12 => Body::Lookup {
                key,
                rank: word,
                data,
            },
            13 => Body::Unpublish {
                key,
                rank: word,
                data,
            },
            14 => Body::Launch { key, data },
            15 => Body::Halt { data },
            16 => Body::Go { data },
            8 => Body::Heartbeat,
            9 => Body::NodeDown {
                node: word,
                incarnation: u32::try_from(key).ok()?,
            },
            10 => Body::ProcDown { rank: word },
            _ => return None,
        };
        Some(Msg {
            from,
            incarnation,
            body,
        })
    }
}

/// What a link task is told.
/// Which collective operation a collective is: each kind counts its collectives of a node set
/// apart, so a connect never matches a fence of the same nodes.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Fence = 1,
    Connect = 2,
    Disconnect = 3,
}

/// What a daemon does as the data server.
#[derive(Clone, Copy, Debug)]
enum DataOp {
    Publish,
    Lookup,
    Unpublish,
}

/// `PMIX_RANGE_LOCAL` for the data server: two ranks of the job on one node.
struct SameNode(Layout);

impl Topology for SameNode {
    fn same_node(&self, a: &Proc, b: &Proc) -> bool {
        a.nspace == b.nspace && self.0.node_of_rank(a.rank.0) == self.0.node_of_rank(b.rank.0)
    }
}

/// A spawned job's launch order: its namespace, the requester, the node of each rank.
fn pack_launch(nspace: &Nspace, parent: &Proc, placement: &[u32]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in [nspace.as_str(), parent.nspace.as_str()] {
        out.extend_from_slice(&u32::try_from(s.len()).unwrap_or(0).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(&parent.rank.0.to_le_bytes());
    for n in placement {
        out.extend_from_slice(&n.to_le_bytes());
    }
    out
}

fn unpack_launch(b: Vec<u8>) -> Option<(Nspace, Proc, Vec<u32>)> {
    fn word(b: &[u8], at: &mut usize) -> Option<u32> {
        let w = u32::from_le_bytes(b.get(*at..at.checked_add(4)?)?.try_into().ok()?);
        *at += 4;
        Some(w)
    }
    let mut at = 0usize;
    let mut names = Vec::new();
    for _ in 0..2 {
        let len = word(&b, &mut at)? as usize;
        let s = std::str::from_utf8(b.get(at..at.checked_add(len)?)?).ok()?;
        at += len;
        names.push(Nspace::new(s).ok()?);
    }
    let rank = word(&b, &mut at)?;
    let mut placement = Vec::new();
    while at < b.len() {
        placement.push(word(&b, &mut at)?);
    }
    let parent = Proc::new(names.pop()?, Rank(rank));
    Some((names.pop()?, parent, placement))
}

/// Keys and directives of a lookup or unpublish, packed for the data server.
fn pack_keys(keys: &[String], info: &[Info]) -> Result<Vec<u8>, Status> {
    let mut b = DataBuffer::new();
    b.pack(keys).map_err(|_| Status::ERR_BAD_PARAM)?;
    b.pack(info).map_err(|_| Status::ERR_BAD_PARAM)?;
    Ok(b.unload())
}

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
}

#[derive(Debug)]
struct Joined {
    parent: Option<u32>,
    children: Vec<u32>,
    root: u32,
    root_children: Vec<u32>,
    procs: Vec<Proc>,
    data: Vec<u8>,
    waiter: Option<Waiter>,
    sent_up: bool,
}

#[derive(Debug, Default)]
struct State {
    /// Collectives started per node-set signature.
    seq: BTreeMap<u64, u64>,
    collectives: BTreeMap<u64, Collective>,
    /// The outcome of every collective this node saw end.
    finished: BTreeMap<u64, (i32, Vec<u8>)>,
    /// Requests sent to other daemons (direct modex, publish, lookup, unpublish), by number:
    /// the node asked, and the waiter.
    calls: BTreeMap<u64, (u32, Waiter)>,
    next_call: u64,
    /// Nodes known to be down (with the incarnation that went down), the latest incarnation
    /// heard of each node, and processes known to have terminated.
    down: BTreeMap<u32, u32>,
    incarnation: BTreeMap<u32, u32>,
    dead_ranks: BTreeSet<u32>,
    /// When each tree neighbour was last heard from, and when its link was last renewed.
    heard: BTreeMap<u32, Duration>,
    renewed: BTreeMap<u32, Duration>,
    /// Spawned jobs this node knows of: the node of each rank.
    jobs: BTreeMap<Nspace, Vec<u32>>,
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

    async fn listen(self) {
        let port = self.layout().port_of(self.me());
        let listener = match TcpListener::bind(("0.0.0.0", port)).await {
            Ok(l) => l,
            Err(e) => {
                let what = format!("node {} cannot listen: {e}", self.me());
                self.0.setup.observer.violation(what);
                return;
            }
        };
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let d = self.clone();
            self.spawn(async move { d.read_from(stream).await });
        }
    }

    /// Handle what one connection brings. The end of a connection from a known peer means
    /// its daemon is gone: daemons never close a working link (a renewed one is kept open, not
    /// closed), so only a crash sends the end; a partition sends nothing at all.
    async fn read_from(&self, mut stream: TcpStream) {
        let mut peer = None;
        loop {
            let mut len = [0u8; 4];
            let mut body = Vec::new();
            let read = match stream.read_exact(&mut len).await {
                Ok(_) => {
                    let n = u32::from_le_bytes(len);
                    if n > MAX_MESSAGE {
                        return;
                    }
                    body.resize(n as usize, 0);
                    stream.read_exact(&mut body).await.map(|_| ())
                }
                Err(e) => Err(e),
            };
            if read.is_err() {
                if let Some((p, incarnation)) = peer {
                    self.incarnation_down(p, incarnation);
                }
                return;
            }
            match Msg::decode(&body) {
                Some(m) => {
                    peer = Some((m.from, m.incarnation));
                    self.received(m);
                }
                None => return,
            }
        }
    }

    /// Queue `body` for node `to`, through that node's link task (started on first use).
    fn send(&self, to: u32, body: Body) {
        let msg = Msg {
            from: self.me(),
            incarnation: self.0.setup.incarnation,
            body,
        };
        self.link(to, Out::Msg(msg));
    }

    fn link(&self, to: u32, out: Out) {
        let mut links = lock(&self.0.links);
        let tx = links.entry(to).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let d = self.clone();
            self.spawn(async move { d.link_task(to, rx).await });
            tx
        });
        let _ = tx.send(out);
    }

    /// Carry messages to `to` in order over one connection, opened when needed; apply the
    /// link's faults. A message that finds no connection (turmoil refuses a connection across
    /// a partition just as to a port nobody listens on) is lost, as a partition loses it.
    async fn link_task(self, to: u32, mut rx: mpsc::UnboundedReceiver<Out>) {
        let mut stream: Option<TcpStream> = None;
        // Renewed links stay open: closing one would tell the peer this daemon is gone.
        let mut renewed = Vec::new();
        while let Some(out) = rx.recv().await {
            let msg = match out {
                Out::Reset => {
                    renewed.extend(stream.take());
                    continue;
                }
                Out::Msg(m) => m,
            };
            let rule = lock(&self.0.setup.faults).rule(self.me(), to);
            if rule.drop {
                self.note(format!("dropped a message to {to}").as_bytes());
                continue;
            }
            if !rule.delay.is_zero() {
                tokio::time::sleep(rule.delay).await;
            }
            let heartbeat = msg.body == Body::Heartbeat;
            let body = msg.encode();
            let mut frame = Vec::with_capacity(4 + body.len());
            frame.extend_from_slice(&u32::try_from(body.len()).unwrap_or(u32::MAX).to_le_bytes());
            frame.extend_from_slice(&body);
            // A write error means the stream broke (the peer's socket is gone): one new
            // connection is tried before the message counts as lost.
            for _attempt in 0..2 {
                if stream.is_none() {
                    match self.connect(to).await {
                        Some(s) => stream = Some(s),
                        None => {
                            self.note(format!("cannot reach node {to}").as_bytes());
                            break;
                        }
                    }
                }
                let Some(s) = stream.as_mut() else {
                    break;
                };
                if s.write_all(&frame).await.is_ok() {
                    self.0.setup.observer.count_message(frame.len(), heartbeat);
                    break;
                }
                stream = None;
            }
        }
    }

    /// Connect to `to`'s daemon, trying again every 10 ms for up to `connect_timeout`: the
    /// peer may not listen yet (racks start their nodes one after another), or be cut off.
    async fn connect(&self, to: u32) -> Option<TcpStream> {
        let rack = Layout::rack_name(self.layout().rack_of(to));
        let port = self.layout().port_of(to);
        let give_up = now() + self.0.setup.liveness.connect_timeout;
        loop {
            let left = give_up.saturating_sub(now());
            if let Ok(Ok(s)) =
                tokio::time::timeout(left, TcpStream::connect((rack.as_str(), port))).await
            {
                return Some(s);
            }
            if now() >= give_up {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn note(&self, what: &[u8]) {
        self.0.setup.observer.record(self.me(), what);
    }

    /// The nodes `procs` run on (a wildcard rank: every node of the job), sorted.
    fn nodes_of(&self, procs: &[Proc]) -> Result<Vec<u32>, Status> {
        let l = self.layout();
        let mut nodes = Vec::new();
        for p in procs {
            if p.nspace != self.0.setup.nspace {
                // A spawned job: its placement came with its launch.
                let state = lock(&self.0.state);
                let placement = state.jobs.get(&p.nspace).ok_or(Status::ERR_NOT_FOUND)?;
                if p.rank == Rank::WILDCARD {
                    nodes.extend_from_slice(placement);
                } else {
                    let n = placement
                        .get(p.rank.0 as usize)
                        .ok_or(Status::ERR_BAD_PARAM)?;
                    nodes.push(*n);
                }
                continue;
            }
            if p.rank == Rank::WILDCARD {
                nodes.extend(0..l.nodes);
            } else if p.rank.0 < l.job_size() {
                nodes.push(l.node_of_rank(p.rank.0));
            } else {
                return Err(Status::ERR_BAD_PARAM);
            }
        }
        nodes.sort_unstable();
        nodes.dedup();
        Ok(nodes)
    }

    /// Whether rank `rank` of the job is among `procs`.
    fn involves(&self, procs: &[Proc], rank: u32) -> bool {
        procs.iter().any(|p| {
            p.nspace == self.0.setup.nspace && (p.rank == Rank::WILDCARD || p.rank.0 == rank)
        })
    }

    /// This node's server joins a collective of `procs` with `data`: its key and the waiter
    /// of its outcome.
    fn join(&self, kind: Kind, procs: &[Proc], data: Vec<u8>) -> Result<(u64, Awaited), Status> {
        let nodes = self.nodes_of(procs)?;
        let whole_job = nodes.len() == self.layout().nodes as usize;
        let tree = match (&self.0.setup.ring, whole_job) {
            (Some(ring), true) => ring.clone(),
            (Some(_), false) => Arc::new(Tree::ring(&nodes)),
            (None, true) => self.0.setup.job_tree.clone(),
            (None, false) => Arc::new(self.layout().tree(&nodes)),
        };
        let me = self.me();
        let mut signature = vec![kind as u8];
        signature.extend(nodes.iter().flat_map(|n| n.to_le_bytes()));
        let (tx, rx) = oneshot::channel();
        let mut state = lock(&self.0.state);
        let sig = fnv(&signature);
        let seq = state.seq.entry(sig).or_insert(0);
        *seq += 1;
        let key = fnv(&[sig.to_le_bytes(), seq.to_le_bytes()].concat());
        drop(state);
        self.note(format!("join {key:016x}").as_bytes());
        let mut state = lock(&self.0.state);
        if let Some((status, data)) = state.finished.get(&key).cloned() {
            // The collective ended before this node's server joined (a subtree failed).
            drop(state);
            self.answer(key, tx, status, data);
            return Ok((key, rx));
        }
        let root = tree.root().unwrap_or(me);
        let c = state.collectives.entry(key).or_default();
        c.joined = Some(Joined {
            parent: tree.parent(me),
            children: tree.children(me).to_vec(),
            root,
            root_children: tree.children(root).to_vec(),
            procs: procs.to_vec(),
            data,
            waiter: Some(tx),
            sent_up: false,
        });
        self.progress(&mut state, key);
        Ok((key, rx))
    }

    /// Give this node's server the outcome of `key`.
    fn answer(&self, key: u64, waiter: Waiter, status: i32, data: Vec<u8>) {
        self.0
            .setup
            .observer
            .outcome(self.me(), key, status, fnv(&data));
        let result = if status == 0 {
            Ok(data)
        } else {
            Err(Status(status))
        };
        let _ = waiter.send(result);
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
            state.heard.insert(from, now());
            drop(state);
            self.note(format!("node {from} back as incarnation {}", m.incarnation).as_bytes());
            self.link(from, Out::Reset);
            state = lock(&self.0.state);
        }
        if let Some(t) = state.heard.get_mut(&from) {
            *t = now();
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
            Body::Halt { data } => {
                drop(state);
                let nspace = String::from_utf8_lossy(&data).into_owned();
                self.note(format!("halt {nspace}").as_bytes());
                if let Ok(ns) = Nspace::new(&nspace) {
                    self.halt(&ns);
                }
            }
            Body::Go { data } => {
                drop(state);
                let nspace = String::from_utf8_lossy(&data).into_owned();
                self.note(format!("go {nspace}").as_bytes());
                if let (Ok(ns), Some(l)) = (Nspace::new(&nspace), lock(&self.0.launcher).as_ref()) {
                    let _ = l.send(Launch::Go(ns));
                }
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

    /// Ask node `to` something (`body` given the request's number) and wait for its reply;
    /// a node that is down, or goes down first, is `PMIX_ERR_LOST_CONNECTION`.
    async fn call(&self, to: u32, body: impl FnOnce(u64) -> Body) -> Result<Vec<u8>, Status> {
        self.request(to, body)?.await.unwrap_or(Err(LOST))
    }

    /// Send a request to node `to` and return where its reply will arrive.
    fn request(&self, to: u32, body: impl FnOnce(u64) -> Body) -> Result<Awaited, Status> {
        let (tx, rx) = oneshot::channel();
        let key = {
            let mut state = lock(&self.0.state);
            if state.down.contains_key(&to) {
                return Err(LOST);
            }
            state.next_call += 1;
            let key = state.next_call;
            state.calls.insert(key, (to, tx));
            key
        };
        self.send(to, body(key));
        Ok(rx)
    }

    /// As the data server: serve request `key` of node `from` in a task of its own (a lookup
    /// with `PMIX_WAIT` waits).
    fn serve(&self, key: u64, from: u32, rank: u32, op: DataOp, data: Vec<u8>) {
        self.note(format!("{op:?} {key} for rank {rank} of {from}").as_bytes());
        let d = self.clone();
        self.spawn(async move { d.serve_data(key, from, rank, op, data).await });
    }

    /// As the data server: publish, look up or unpublish for rank `rank` of node `from`.
    async fn serve_data(&self, key: u64, from: u32, rank: u32, op: DataOp, data: Vec<u8>) {
        let proc = Proc::new(self.0.setup.nspace.clone(), Rank(rank));
        let board = &self.0.board;
        let mut b = DataBuffer::load(data, BufferType::NonDescribed);
        let result = match op {
            DataOp::Publish => match b.unpack::<Info>(usize::MAX) {
                Ok(info) => board.publish(&proc, &info).map(|()| Vec::new()),
                Err(_) => Err(Status::ERR_UNPACK_FAILURE),
            },
            DataOp::Lookup | DataOp::Unpublish => {
                let keys = b.unpack::<String>(usize::MAX);
                let info = b.unpack::<Info>(usize::MAX);
                match (keys, info, op) {
                    (Ok(keys), Ok(info), DataOp::Lookup) => {
                        let topology = SameNode(self.layout().clone());
                        match board.lookup(&proc, &keys, &info, &topology).await {
                            Ok(found) => {
                                let mut out = DataBuffer::new();
                                out.pack(&found)
                                    .map(|()| out.unload())
                                    .map_err(|_| Status::ERR_PACK_FAILURE)
                            }
                            Err(s) => Err(s),
                        }
                    }
                    (Ok(keys), Ok(info), _) => {
                        board.unpublish(&proc, &keys, &info);
                        Ok(Vec::new())
                    }
                    _ => Err(Status::ERR_UNPACK_FAILURE),
                }
            }
        };
        let (status, data) = match result {
            Ok(d) => (0, d),
            Err(s) => (s.0, Vec::new()),
        };
        self.send(from, Body::Reply { key, status, data });
    }

    /// Start this node's processes of a spawned job, and answer when they run.
    async fn serve_launch(&self, key: u64, from: u32, data: Vec<u8>) {
        let nodes = self.layout().nodes;
        let launch = unpack_launch(data).filter(|(_, _, p)| p.iter().all(|n| *n < nodes));
        let result = match launch {
            Some((nspace, parent, placement)) => {
                let ranks: Vec<u32> = (0..)
                    .zip(&placement)
                    .filter(|(_, n)| **n == self.me())
                    .map(|(r, _)| r)
                    .collect();
                {
                    let mut state = lock(&self.0.state);
                    if state.halted.contains(&nspace) {
                        drop(state);
                        let data = Vec::new();
                        let status = Status::ERR_JOB_FAILED_TO_LAUNCH.0;
                        self.send(from, Body::Reply { key, status, data });
                        return;
                    }
                    state.jobs.insert(nspace.clone(), placement.clone());
                }
                let (done, answer) = oneshot::channel();
                let order = Launch::Start {
                    nspace,
                    parent,
                    placement,
                    ranks,
                    done,
                };
                let sent = lock(&self.0.launcher).as_ref().map(|l| l.send(order));
                match sent {
                    Some(Ok(())) => answer
                        .await
                        .unwrap_or(Err(Status::ERR_JOB_FAILED_TO_LAUNCH)),
                    _ => Err(Status::ERR_JOB_FAILED_TO_LAUNCH),
                }
            }
            None => Err(Status::ERR_UNPACK_FAILURE),
        };
        let status = result.err().map_or(0, |s| s.0);
        self.send(
            from,
            Body::Reply {
                key,
                status,
                data: Vec::new(),
            },
        );
    }

    fn halt(&self, nspace: &Nspace) {
        lock(&self.0.state).halted.insert(nspace.clone());
        if let Some(l) = lock(&self.0.launcher).as_ref() {
            let _ = l.send(Launch::Halt(nspace.clone()));
        }
    }

    /// Answer another node's direct-modex request from this node's server (which waits for
    /// the rank's commit if it has not come yet).
    async fn serve_fetch(&self, key: u64, from: u32, rank: u32) {
        let proc = Proc::new(self.0.setup.nspace.clone(), Rank(rank));
        let server = lock(&self.0.server).upgrade();
        let result = match server {
            Some(s) => s.dmodex_request(proc, Vec::new()).await,
            None => Err(Status::ERR_INIT),
        };
        let (status, data) = match result {
            Ok(d) => (0, d),
            Err(s) => (s.0, Vec::new()),
        };
        self.send(from, Body::Reply { key, status, data });
    }

    /// Move collective `key` on if it can: up once the node and all its children are in (or
    /// an error once one of them never will be), or, at the root, down to everyone.
    fn progress(&self, state: &mut State, key: u64) {
        let Some(c) = state.collectives.get(&key) else {
            return;
        };
        let Some(j) = c.joined.as_ref() else {
            return;
        };
        if j.sent_up {
            return;
        }
        let mut status = 0;
        for ch in &j.children {
            match c.got.get(ch) {
                Some((s, _)) => {
                    if status == 0 {
                        status = *s;
                    }
                }
                None => {
                    let down = state.down.contains_key(ch);
                    // The planted bug of the test build: a child that is down counts as in.
                    if cfg!(feature = "planted-bug") && down {
                        continue;
                    }
                    let lost_rank = state.dead_ranks.iter().any(|&r| {
                        self.layout().node_of_rank(r) == *ch && self.involves(&j.procs, r)
                    });
                    if !(down || lost_rank) {
                        return; // still to come
                    }
                    if status == 0 {
                        status = LOST.0;
                    }
                }
            }
        }
        let parent = j.parent;
        if status == 0 && parent.is_some_and(|p| state.down.contains_key(&p)) {
            // The parent went down before this part reached it: the root cannot have it.
            status = LOST.0;
        }
        let mut all = Vec::new();
        if status == 0 {
            all.extend_from_slice(&j.data);
            for ch in &j.children {
                if let Some((_, d)) = c.got.get(ch) {
                    all.extend_from_slice(d);
                }
            }
        }
        match parent {
            Some(p) if status == 0 => {
                if let Some(j) = state
                    .collectives
                    .get_mut(&key)
                    .and_then(|c| c.joined.as_mut())
                {
                    j.sent_up = true;
                }
                let data = all;
                self.send(p, Body::Contrib { key, status, data });
            }
            Some(p) => {
                // Tell the root why it cannot succeed, and end the subtree's part now.
                if !state.down.contains_key(&p) {
                    let data = Vec::new();
                    self.send(p, Body::Contrib { key, status, data });
                }
                self.finish(state, key, status, Vec::new());
            }
            None => self.finish(state, key, status, all),
        }
    }

    /// Collective `key` ended with `status`: record it, give it to this node's server, and
    /// pass it on to the children, the contributors and whoever asked.
    fn finish(&self, state: &mut State, key: u64, status: i32, data: Vec<u8>) {
        state.finished.insert(key, (status, data.clone()));
        let Some(c) = state.collectives.remove(&key) else {
            return;
        };
        let mut targets: BTreeSet<u32> = c.got.keys().copied().collect();
        targets.extend(&c.askers);
        targets.extend(&c.peer_askers);
        let mut waiter = None;
        if let Some(j) = c.joined {
            targets.extend(&j.children);
            waiter = j.waiter;
        }
        targets.remove(&self.me());
        for t in targets {
            if !state.down.contains_key(&t) {
                let data = data.clone();
                self.send(t, Body::Release { key, status, data });
            }
        }
        if let Some(w) = waiter {
            self.answer(key, w, status, data);
        }
    }

    /// This orphan (its parent went down after it sent its part up) asks for the outcome: the
    /// root if it lives, else the root's other children; with nobody left to ask, the
    /// collective failed.
    fn ask(&self, state: &mut State, key: u64) {
        let me = self.me();
        let Some(c) = state.collectives.get_mut(&key) else {
            return;
        };
        let Some(j) = c.joined.as_ref() else {
            return;
        };
        let targets: Vec<u32> = if !state.down.contains_key(&j.root) && !c.asked.contains(&j.root) {
            vec![j.root]
        } else {
            j.root_children
                .iter()
                .copied()
                .filter(|n| *n != me && !state.down.contains_key(n) && !c.asked.contains(n))
                .collect()
        };
        if targets.is_empty() {
            self.finish(state, key, LOST.0, Vec::new());
            return;
        }
        let to_root = targets == [j.root];
        for &t in &targets {
            c.asked.insert(t);
            c.asking.insert(t);
        }
        for t in targets {
            let body = if to_root {
                Body::AskRoot { key }
            } else {
                Body::AskPeer { key }
            };
            self.send(t, body);
        }
    }

    /// Incarnation `incarnation` of `node` is seen gone: the node is down unless it already
    /// came back as a later one (the end of an old incarnation's connection can arrive after
    /// the new one said hello).
    fn incarnation_down(&self, node: u32, incarnation: u32) {
        let latest = lock(&self.0.state)
            .incarnation
            .get(&node)
            .copied()
            .unwrap_or(0);
        if incarnation == latest {
            self.node_down(node, true);
        }
    }

    /// The latest incarnation of `node` this daemon knows is down: seen here (`detected`,
    /// then every other node is told) or told. Its processes are gone for good: a node that
    /// restarts comes back without them.
    pub(crate) fn node_down(&self, node: u32, detected: bool) {
        let me = self.me();
        let mut state = lock(&self.0.state);
        let incarnation = state.incarnation.get(&node).copied().unwrap_or(0);
        if node == me || state.down.contains_key(&node) {
            return;
        }
        state.down.insert(node, incarnation);
        let ranks = self.layout().ranks_of(node);
        state.dead_ranks.extend(ranks);
        self.note(format!("node {node} down (detected: {detected})").as_bytes());
        if detected {
            let others: Vec<u32> = (0..self.layout().nodes)
                .filter(|n| *n != me && *n != node && !state.down.contains_key(n))
                .collect();
            for n in others {
                self.send(n, Body::NodeDown { node, incarnation });
            }
        }
        let lost: Vec<u64> = state
            .calls
            .iter()
            .filter(|(_, (owner, _))| *owner == node)
            .map(|(k, _)| *k)
            .collect();
        for k in lost {
            if let Some((_, w)) = state.calls.remove(&k) {
                let _ = w.send(Err(LOST));
            }
        }
        let keys: Vec<u64> = state.collectives.keys().copied().collect();
        for key in keys {
            let Some(c) = state.collectives.get_mut(&key) else {
                continue;
            };
            c.askers.remove(&node);
            let Some(j) = c.joined.as_ref() else {
                continue;
            };
            if j.root == node && !c.peer_askers.is_empty() {
                let peers = std::mem::take(&mut c.peer_askers);
                for p in peers {
                    self.send(p, Body::Unknown { key });
                }
            }
            let Some(c) = state.collectives.get_mut(&key) else {
                continue;
            };
            let Some(j) = c.joined.as_ref() else {
                continue;
            };
            if j.sent_up {
                let orphaned = j.parent == Some(node) && c.asked.is_empty();
                let lost_answer = c.asking.remove(&node) && c.asking.is_empty();
                if orphaned || lost_answer {
                    self.ask(&mut state, key);
                }
            } else {
                self.progress(&mut state, key);
            }
        }
        let ranks: Vec<Proc> = self
            .layout()
            .ranks_of(node)
            .map(|r| Proc::new(self.0.setup.nspace.clone(), Rank(r)))
            .collect();
        drop(state);
        let info = vec![
            Info::new(attr::HOSTNAME, Layout::hostname(node)),
            Info::new(attr::NODEID, node),
            Info::new(attr::EVENT_AFFECTED_PROCS, DataArray::of_procs(ranks)),
        ];
        self.raise(Status::EVENT_NODE_DOWN, None, info);
    }

    /// Process `rank` of the job terminated (told by its node's daemon).
    fn proc_down(&self, rank: u32) {
        let mut state = lock(&self.0.state);
        if !state.dead_ranks.insert(rank) {
            return;
        }
        self.note(format!("rank {rank} terminated").as_bytes());
        let keys: Vec<u64> = state.collectives.keys().copied().collect();
        for key in keys {
            self.progress(&mut state, key);
        }
        drop(state);
        let proc = Proc::new(self.0.setup.nspace.clone(), Rank(rank));
        let info = vec![Info::new(attr::EVENT_AFFECTED_PROC, proc.clone())];
        self.raise(Status::EVENT_PROC_TERMINATED, Some(proc), info);
    }

    /// A process of this node terminated (its daemon saw it exit): tell every node.
    pub(crate) fn local_proc_died(&self, rank: u32) {
        let me = self.me();
        let others: Vec<u32> = {
            let state = lock(&self.0.state);
            (0..self.layout().nodes)
                .filter(|n| *n != me && !state.down.contains_key(n))
                .collect()
        };
        for n in others {
            self.send(n, Body::ProcDown { rank });
        }
        self.proc_down(rank);
    }

    /// Raise an event to this node's clients.
    fn raise(&self, status: Status, source: Option<Proc>, info: Vec<Info>) {
        let Some(server) = lock(&self.0.server).upgrade() else {
            return;
        };
        self.spawn(async move {
            let _ = server
                .notify_event(status, source, DataRange::SESSION, info)
                .await;
        });
    }

    /// End collective `key` at this node when the `PMIX_TIMEOUT` of `info` passes, if any.
    fn bound(&self, key: u64, info: &[Info]) {
        let timeout = info
            .iter()
            .find_map(|i| i.get(attr::TIMEOUT))
            .and_then(|s| u64::try_from(s).ok())
            .filter(|s| *s > 0);
        if let Some(s) = timeout {
            let d = self.clone();
            self.spawn(async move {
                tokio::time::sleep(Duration::from_secs(s)).await;
                d.timed_out(key);
            });
        }
    }

    /// A collective's `PMIX_TIMEOUT` passed at this node.
    fn timed_out(&self, key: u64) {
        let mut state = lock(&self.0.state);
        if state.collectives.contains_key(&key) && !state.finished.contains_key(&key) {
            self.note(format!("timeout {key:016x}").as_bytes());
            self.finish(&mut state, key, Status::ERR_TIMEOUT.0, Vec::new());
        }
    }

    /// The nodes this one watches: its nearest live ancestor in the job tree, and its
    /// nearest live descendants (a child that is down is watched through its children).
    fn watched(&self, state: &State) -> Vec<u32> {
        let tree = &self.0.setup.job_tree;
        let mut out = Vec::new();
        let mut up = tree.parent(self.me());
        while let Some(p) = up {
            if !state.down.contains_key(&p) {
                out.push(p);
                break;
            }
            up = tree.parent(p);
        }
        let mut below: Vec<u32> = tree.children(self.me()).to_vec();
        while let Some(c) = below.pop() {
            if state.down.contains_key(&c) {
                below.extend_from_slice(tree.children(c));
            } else {
                out.push(c);
            }
        }
        out.sort_unstable();
        out
    }

    /// Beat to the watched nodes; renew the link to a quiet one, declare a silent one down.
    async fn heartbeat(self) {
        let l = self.0.setup.liveness.clone();
        loop {
            tokio::time::sleep(l.heartbeat).await;
            let t = now();
            let mut silent = Vec::new();
            let mut renew = Vec::new();
            let watched = {
                let mut state = lock(&self.0.state);
                let watched = self.watched(&state);
                for &n in &watched {
                    let heard = *state.heard.entry(n).or_insert(t);
                    let quiet = t.saturating_sub(heard);
                    let renewed = state.renewed.get(&n).copied().unwrap_or_default();
                    if quiet > l.suspect_after {
                        silent.push(n);
                    } else if quiet > l.reconnect_after
                        && t.saturating_sub(renewed) > l.reconnect_after
                    {
                        state.renewed.insert(n, t);
                        renew.push(n);
                    }
                }
                watched
            };
            for n in renew {
                self.note(format!("renew the link to {n}").as_bytes());
                self.link(n, Out::Reset);
            }
            for &n in &silent {
                self.node_down(n, true);
            }
            for n in watched {
                if !silent.contains(&n) {
                    self.send(n, Body::Heartbeat);
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
        let name = nspace.as_str().as_bytes().to_vec();
        for t in targets {
            let data = name.clone();
            let body = if failed {
                Body::Halt { data }
            } else {
                Body::Go { data }
            };
            self.send(t, body);
        }
        if failed {
            return Err(Status::ERR_JOB_FAILED_TO_LAUNCH);
        }
        Ok(nspace)
    }

    async fn connect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        let (key, rx) = self.join(Kind::Connect, &procs, Vec::new())?;
        self.bound(key, &info);
        rx.await.unwrap_or(Err(LOST)).map(|_| ())
    }

    async fn disconnect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        let (key, rx) = self.join(Kind::Disconnect, &procs, Vec::new())?;
        self.bound(key, &info);
        rx.await.unwrap_or(Err(LOST)).map(|_| ())
    }

    async fn fence_nb(
        &self,
        procs: Vec<Proc>,
        info: Vec<Info>,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, Status> {
        let (key, rx) = self.join(Kind::Fence, &procs, data)?;
        self.bound(key, &info);
        rx.await.unwrap_or(Err(LOST))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_survives_its_encoding() {
        let bodies = [
            Body::Contrib {
                key: 7,
                status: -61,
                data: b"abc".to_vec(),
            },
            Body::Release {
                key: u64::MAX,
                status: 0,
                data: Vec::new(),
            },
            Body::AskRoot { key: 1 },
            Body::AskPeer { key: 2 },
            Body::Unknown { key: 3 },
            Body::Fetch { key: 4, rank: 9 },
            Body::Reply {
                key: 5,
                status: -46,
                data: vec![0; 3],
            },
            Body::Publish {
                key: 8,
                rank: 1,
                data: vec![1, 2],
            },
            Body::Lookup {
                key: 9,
                rank: 2,
                data: Vec::new(),
            },
            Body::Unpublish {
                key: 10,
                rank: 3,
                data: vec![9],
            },
            Body::Launch {
                key: 11,
                data: vec![1],
            },
            Body::Halt { data: vec![2, 3] },
            Body::Go { data: vec![4] },
            Body::Heartbeat,
            Body::NodeDown {
                node: 12,
                incarnation: 1,
            },
            Body::ProcDown { rank: 40 },
        ];
        for body in bodies {
            let m = Msg {
                from: 3,
                incarnation: 2,
                body,
            };
            assert_eq!(Msg::decode(&m.encode()), Some(m));
        }
        assert_eq!(Msg::decode(&[99; 21]), None);
        let ns = Nspace::new("a.spawn.1").unwrap();
        let parent = Proc::new(Nspace::new("a").unwrap(), Rank(4));
        let order = pack_launch(&ns, &parent, &[3, 5, 3]);
        assert_eq!(
            unpack_launch(order.clone()),
            Some((ns, parent, vec![3, 5, 3]))
        );
        assert_eq!(unpack_launch(order[..order.len() - 2].to_vec()), None);
        assert_eq!(unpack_launch(vec![200, 0, 0, 0, 1]), None);
        assert_eq!(Msg::decode(&[1, 2, 3]), None);
    }
}
