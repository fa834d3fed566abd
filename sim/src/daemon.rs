//! A node's host daemon: the `Host` of the node's PMIx server, talking to the other nodes'
//! daemons over turmoil TCP.
//!
//! Fences run as a tree allgather ([`crate::cluster::Tree`]): each daemon waits for its own
//! server's contribution and its children's, sends the concatenation to its parent, and the
//! root sends the whole back down. A collective is named by the signature of its node set and
//! how many collectives of that set came before it on this node, which every participant
//! counts alike because the PMIx standard orders collectives of one set.
//!
//! Deterministic (DESIGN §4): ordered maps only, simulated time only, no threads.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use pmix::model::{Info, Nspace, Proc, Rank, Status};
use pmix::server::Host;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use turmoil::net::{TcpListener, TcpStream};

use crate::Observer;
use crate::cluster::Layout;
use crate::trace::fnv;

/// The largest daemon message accepted (a fence's data of the whole cluster fits).
const MAX_MESSAGE: u32 = 1 << 30;

/// A message between daemons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Msg {
    /// A subtree's contribution to collective `key`, from the subtree's root `from`.
    Contrib { key: u64, from: u32, data: Vec<u8> },
    /// The outcome of collective `key`, sent down the tree.
    Release {
        key: u64,
        status: i32,
        data: Vec<u8>,
    },
    /// Direct modex: node `from` asks for the data rank `rank` committed (request `key`).
    Fetch { key: u64, from: u32, rank: u32 },
    /// The answer to fetch request `key`.
    Fetched {
        key: u64,
        status: i32,
        data: Vec<u8>,
    },
}

impl Msg {
    fn encode(&self) -> Vec<u8> {
        let rank_bytes;
        let (kind, key, word, data) = match self {
            Msg::Contrib { key, from, data } => (1u8, *key, *from, data.as_slice()),
            Msg::Release { key, status, data } => (2, *key, status.cast_unsigned(), &data[..]),
            Msg::Fetch { key, from, rank } => {
                rank_bytes = rank.to_le_bytes();
                (3, *key, *from, &rank_bytes[..])
            }
            Msg::Fetched { key, status, data } => (4, *key, status.cast_unsigned(), &data[..]),
        };
        let mut out = Vec::with_capacity(17 + data.len());
        out.push(kind);
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&word.to_le_bytes());
        out.extend_from_slice(data);
        out
    }

    fn decode(b: &[u8]) -> Option<Msg> {
        let kind = *b.first()?;
        let key = u64::from_le_bytes(b.get(1..9)?.try_into().ok()?);
        let word = u32::from_le_bytes(b.get(9..13)?.try_into().ok()?);
        let data = b.get(13..)?.to_vec();
        match kind {
            1 => Some(Msg::Contrib {
                key,
                from: word,
                data,
            }),
            2 => Some(Msg::Release {
                key,
                status: word.cast_signed(),
                data,
            }),
            3 => Some(Msg::Fetch {
                key,
                from: word,
                rank: u32::from_le_bytes(data.get(..4)?.try_into().ok()?),
            }),
            4 => Some(Msg::Fetched {
                key,
                status: word.cast_signed(),
                data,
            }),
            _ => None,
        }
    }

    fn key(&self) -> u64 {
        match self {
            Msg::Contrib { key, .. }
            | Msg::Release { key, .. }
            | Msg::Fetch { key, .. }
            | Msg::Fetched { key, .. } => *key,
        }
    }
}

/// One collective in progress at this node.
#[derive(Debug, Default)]
struct Collective {
    /// Set when this node's own server joined: its place in the tree, its data, its waiter.
    joined: Option<Joined>,
    /// Contributions of the children's subtrees, by child.
    got: BTreeMap<u32, Vec<u8>>,
}

#[derive(Debug)]
struct Joined {
    parent: Option<u32>,
    children: Vec<u32>,
    data: Vec<u8>,
    waiter: oneshot::Sender<Result<Vec<u8>, Status>>,
    sent_up: bool,
}

#[derive(Debug, Default)]
struct State {
    /// Collectives started per node-set signature.
    seq: BTreeMap<u64, u64>,
    collectives: BTreeMap<u64, Collective>,
    /// Direct-modex requests sent, by request number.
    fetches: BTreeMap<u64, oneshot::Sender<Result<Vec<u8>, Status>>>,
    next_fetch: u64,
}

/// A node's daemon, shared by its server (as its host) and its network tasks.
#[derive(Clone, Debug)]
pub(crate) struct Daemon(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    node: u32,
    layout: Layout,
    nspace: Nspace,
    state: Mutex<State>,
    outbox: mpsc::UnboundedSender<(u32, Msg)>,
    observer: Arc<Observer>,
    /// This node's server, which answers the other nodes' direct-modex requests.
    server: std::sync::OnceLock<Arc<pmix::server::Server>>,
    /// Whether gets of other nodes' data go to their owners (direct modex) rather than
    /// arriving with the fence.
    direct_modex: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Daemon {
    /// The daemon of `node`, with the receiving end of its outbox for [`Daemon::send_loop`].
    pub(crate) fn new(
        node: u32,
        layout: Layout,
        nspace: Nspace,
        observer: Arc<Observer>,
        direct_modex: bool,
    ) -> (Daemon, mpsc::UnboundedReceiver<(u32, Msg)>) {
        let (outbox, rx) = mpsc::unbounded_channel();
        let inner = Inner {
            node,
            layout,
            nspace,
            state: Mutex::new(State::default()),
            outbox,
            observer,
            server: std::sync::OnceLock::new(),
            direct_modex,
        };
        (Daemon(Arc::new(inner)), rx)
    }

    /// The node's server, once started.
    pub(crate) fn set_server(&self, server: Arc<pmix::server::Server>) {
        let _ = self.0.server.set(server);
    }

    /// Accept the other daemons' connections and handle what they send.
    pub(crate) async fn listen(self) {
        let port = self.0.layout.port_of(self.0.node);
        let listener = match TcpListener::bind(("0.0.0.0", port)).await {
            Ok(l) => l,
            Err(e) => {
                self.0
                    .observer
                    .violation(format!("node {} cannot listen: {e}", self.0.node));
                return;
            }
        };
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let d = self.clone();
            tokio::spawn(async move { d.read_from(stream).await });
        }
    }

    async fn read_from(&self, mut stream: TcpStream) {
        loop {
            let mut len = [0u8; 4];
            if stream.read_exact(&mut len).await.is_err() {
                return;
            }
            let len = u32::from_le_bytes(len);
            if len > MAX_MESSAGE {
                return;
            }
            let mut body = vec![0u8; len as usize];
            if stream.read_exact(&mut body).await.is_err() {
                return;
            }
            match Msg::decode(&body) {
                Some(m) => self.received(m),
                None => return,
            }
        }
    }

    /// Send what the daemon queued, one connection per peer, opened on first use.
    pub(crate) async fn send_loop(self, mut outbox: mpsc::UnboundedReceiver<(u32, Msg)>) {
        let mut links: BTreeMap<u32, TcpStream> = BTreeMap::new();
        while let Some((to, msg)) = outbox.recv().await {
            if let std::collections::btree_map::Entry::Vacant(slot) = links.entry(to) {
                let rack = Layout::rack_name(self.0.layout.rack_of(to));
                match TcpStream::connect((rack.as_str(), self.0.layout.port_of(to))).await {
                    Ok(s) => {
                        slot.insert(s);
                    }
                    Err(e) => {
                        self.note(format!("cannot reach node {to}: {e}").as_bytes());
                        continue;
                    }
                }
            }
            let body = msg.encode();
            let mut frame = Vec::with_capacity(4 + body.len());
            frame.extend_from_slice(&u32::try_from(body.len()).unwrap_or(u32::MAX).to_le_bytes());
            frame.extend_from_slice(&body);
            self.0.observer.count_message(frame.len());
            let sent = match links.get_mut(&to) {
                Some(s) => s.write_all(&frame).await,
                None => continue,
            };
            if sent.is_err() {
                links.remove(&to);
                self.note(format!("lost the link to node {to}").as_bytes());
            }
        }
    }

    fn note(&self, what: &[u8]) {
        self.0.observer.record(self.0.node, what);
    }

    /// The nodes `procs` run on (a wildcard rank: every node of the job), sorted.
    fn nodes_of(&self, procs: &[Proc]) -> Result<Vec<u32>, Status> {
        let l = &self.0.layout;
        let mut nodes = Vec::new();
        for p in procs {
            if p.nspace != self.0.nspace {
                return Err(Status::ERR_NOT_FOUND);
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

    /// This node's server joins a collective of `procs` with `data`.
    fn join(
        &self,
        procs: &[Proc],
        data: Vec<u8>,
    ) -> Result<oneshot::Receiver<Result<Vec<u8>, Status>>, Status> {
        let nodes = self.nodes_of(procs)?;
        let tree = self.0.layout.tree(&nodes);
        let me = self.0.node;
        let signature: Vec<u8> = nodes.iter().flat_map(|n| n.to_le_bytes()).collect();
        let (tx, rx) = oneshot::channel();
        let mut state = lock(&self.0.state);
        let sig = fnv(&signature);
        let seq = state.seq.entry(sig).or_insert(0);
        *seq += 1;
        let key = fnv(&[sig.to_le_bytes(), seq.to_le_bytes()].concat());
        let c = state.collectives.entry(key).or_default();
        c.joined = Some(Joined {
            parent: tree.parent(me),
            children: tree.children(me).to_vec(),
            data,
            waiter: tx,
            sent_up: false,
        });
        self.progress(&mut state, key);
        drop(state);
        self.note(format!("join {key:016x}").as_bytes());
        Ok(rx)
    }

    /// A message from another daemon.
    fn received(&self, m: Msg) {
        let key = m.key();
        let mut state = lock(&self.0.state);
        match m {
            Msg::Contrib { from, data, .. } => {
                self.note(format!("contrib {key:016x} from {from}").as_bytes());
                state
                    .collectives
                    .entry(key)
                    .or_default()
                    .got
                    .insert(from, data);
                self.progress(&mut state, key);
            }
            Msg::Release { status, data, .. } => {
                self.note(format!("release {key:016x} {status}").as_bytes());
                let Some(c) = state.collectives.remove(&key) else {
                    return;
                };
                self.finish(key, c, Status(status), data);
            }
            Msg::Fetch { from, rank, .. } => {
                drop(state);
                self.note(format!("fetch {key} of rank {rank} for {from}").as_bytes());
                let d = self.clone();
                tokio::spawn(async move { d.serve_fetch(key, from, rank).await });
            }
            Msg::Fetched { status, data, .. } => {
                self.note(format!("fetched {key} {status}").as_bytes());
                if let Some(waiter) = state.fetches.remove(&key) {
                    let r = if status == 0 {
                        Ok(data)
                    } else {
                        Err(Status(status))
                    };
                    let _ = waiter.send(r);
                }
            }
        }
    }

    /// Answer another node's direct-modex request from this node's server (which waits for
    /// the rank's commit if it has not come yet).
    async fn serve_fetch(&self, key: u64, from: u32, rank: u32) {
        let proc = Proc::new(self.0.nspace.clone(), Rank(rank));
        let result = match self.0.server.get() {
            Some(s) => s.clone().dmodex_request(proc, Vec::new()).await,
            None => Err(Status::ERR_INIT),
        };
        let (status, data) = match result {
            Ok(d) => (0, d),
            Err(s) => (s.0, Vec::new()),
        };
        let _ = self
            .0
            .outbox
            .send((from, Msg::Fetched { key, status, data }));
    }

    /// Move collective `key` on if it can: up once the node and all its children are in, or,
    /// at the root, down to everyone.
    fn progress(&self, state: &mut State, key: u64) {
        let Some(c) = state.collectives.get_mut(&key) else {
            return;
        };
        let Some(j) = c.joined.as_mut() else {
            return;
        };
        if j.sent_up || !j.children.iter().all(|ch| c.got.contains_key(ch)) {
            return;
        }
        let mut all = j.data.clone();
        for ch in &j.children {
            if let Some(d) = c.got.get(ch) {
                all.extend_from_slice(d);
            }
        }
        match j.parent {
            Some(p) => {
                j.sent_up = true;
                let msg = Msg::Contrib {
                    key,
                    from: self.0.node,
                    data: all,
                };
                let _ = self.0.outbox.send((p, msg));
            }
            None => {
                if let Some(c) = state.collectives.remove(&key) {
                    self.finish(key, c, Status::SUCCESS, all);
                }
            }
        }
    }

    /// Hand the outcome to this node's server and to the children.
    fn finish(&self, key: u64, c: Collective, status: Status, data: Vec<u8>) {
        let Some(j) = c.joined else {
            return;
        };
        for &ch in &j.children {
            let msg = Msg::Release {
                key,
                status: status.0,
                data: data.clone(),
            };
            let _ = self.0.outbox.send((ch, msg));
        }
        let result = if status == Status::SUCCESS {
            Ok(data)
        } else {
            Err(status)
        };
        let _ = j.waiter.send(result);
    }
}

impl Host for Daemon {
    fn supports_direct_modex(&self) -> bool {
        self.0.direct_modex
    }

    async fn direct_modex(&self, proc: Proc, _info: Vec<Info>) -> Result<Vec<u8>, Status> {
        if proc.nspace != self.0.nspace || proc.rank.0 >= self.0.layout.job_size() {
            return Err(Status::ERR_NOT_FOUND);
        }
        let owner = self.0.layout.node_of_rank(proc.rank.0);
        let (tx, rx) = oneshot::channel();
        let key = {
            let mut state = lock(&self.0.state);
            state.next_fetch += 1;
            let key = state.next_fetch;
            state.fetches.insert(key, tx);
            key
        };
        let msg = Msg::Fetch {
            key,
            from: self.0.node,
            rank: proc.rank.0,
        };
        let _ = self.0.outbox.send((owner, msg));
        rx.await.unwrap_or(Err(Status::ERR_LOST_CONNECTION))
    }

    async fn fence_nb(
        &self,
        procs: Vec<Proc>,
        _info: Vec<Info>,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, Status> {
        let rx = self.join(&procs, data)?;
        rx.await.unwrap_or(Err(Status::ERR_LOST_CONNECTION))
    }
}
