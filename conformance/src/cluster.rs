//! The resource manager between the nodes of a vector's job, shared by every target: fences
//! across nodes (each node's data, concatenated in node order, handed back to every node),
//! direct modex routed to the node that owns the process, a publish/lookup table, the job
//! information a launcher registers, and the processes' lives: it ends the ranks an abort or
//! a job-control request names (through the target's [`RankEnder`]) and watches heartbeats,
//! raising the standard's events for both.
//!
//! Every upcall the host receives is recorded in [`Shared::upcalls`] before it is served, so
//! that a step can check what the host was handed.
//!
//! The host logic is target-independent: a node's server is anything that can answer a direct
//! modex request for one of its processes ([`NodeServer`]), whether this crate's [`Server`]
//! in-process or another implementation's server in a child process.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use pmix::events::Event;
use pmix::host::control;
use pmix::host::publish::PublishBoard;
use pmix::model::{Info, Nspace, Proc, Rank, Status};
use pmix::server::Server;
use pmix::store::published::Topology;
use tokio::sync::oneshot;

use crate::step::lock;
use crate::upcall_log::UpcallLog;
use crate::vector::Vector;

mod host;
mod setup;

pub use setup::{registration, server_init_info, start_rust_servers};

/// A boxed future answering a direct modex: the process's packed data or a status.
pub type ModexFuture = Pin<Box<dyn Future<Output = Result<Vec<u8>, Status>> + Send>>;

/// A node's server as the host sees it.
pub trait NodeServer: Send + Sync {
    /// The data a local process committed, for a host serving another node's request.
    fn dmodex(&self, proc: Proc, info: Vec<Info>) -> ModexFuture;

    /// Register a job the host started (a spawn) or learned of (another job's information)
    /// with this node's server.
    fn register_job(&self, nspace: Nspace, info: Vec<Info>) -> StatusFuture;

    /// Raise an event another node's process notified, or the host's own, at this node's
    /// processes in its range.
    fn notify(&self, event: Event) -> StatusFuture;
}

/// A boxed future answering with a status.
pub type StatusFuture = Pin<Box<dyn Future<Output = Result<(), Status>> + Send>>;

/// How the host ends one of the vector's ranks: the target that runs them knows how (a
/// child process gets the signal; a rank in the harness's own process has its connection
/// closed, as its death would).
pub trait RankEnder: Send + Sync {
    /// End `rank` with `signal` and wait until it has ended: `false` when it was not running
    /// (never started, or ended or vanished before).
    fn end(&self, rank: u32, signal: i32) -> Pin<Box<dyn Future<Output = bool> + Send>>;
}

impl NodeServer for Arc<Server> {
    fn register_job(&self, nspace: Nspace, info: Vec<Info>) -> StatusFuture {
        let server = self.clone();
        Box::pin(async move {
            server
                .register_nspace(nspace, info)
                .await
                .map_err(|e| e.status())
        })
    }

    fn dmodex(&self, proc: Proc, info: Vec<Info>) -> ModexFuture {
        let server = self.clone();
        Box::pin(async move {
            server
                .dmodex_request(proc, info)
                .await
                .map_err(Status::from)
        })
    }

    fn notify(&self, e: Event) -> StatusFuture {
        let server = self.clone();
        Box::pin(async move {
            server
                .notify_event(e.status, Some(e.source), e.range, e.info)
                .await
                .map_err(Status::from)
        })
    }
}

/// What every node's host shares: the servers, fences in progress, published data.
pub struct Shared {
    pub servers: Mutex<Vec<Arc<dyn NodeServer>>>,
    /// The vector's job.
    nspace: String,
    /// What is registered for the other jobs of the vector, wherever their servers are.
    other_jobs: BTreeMap<String, Vec<Info>>,
    direct_modex: bool,
    fence: bool,
    publish: bool,
    /// Event codes the host does not carry between nodes.
    unrelayed: Vec<Status>,
    /// Upcalls the host refuses, with the status it answers.
    refused: BTreeMap<&'static str, Status>,
    /// The host names the members of the groups it constructs.
    group_membership: bool,
    /// The ranks of the job the host knows have ended: those it ended, and those that
    /// vanished (a resource manager sees its processes exit).
    gone: Mutex<BTreeSet<u32>>,
    node_of: BTreeMap<u32, usize>,
    nodes: usize,
    node_names: Vec<String>,
    /// Jobs spawned so far, and the namespaces of those registered with a server.
    spawned: Mutex<u32>,
    spawned_jobs: Mutex<BTreeSet<String>>,
    allocations: Mutex<control::Allocations>,
    /// Processes whose heartbeat is watched: the beats received, and which request's watch
    /// counts them (a new request replaces the watch).
    heartbeats: Mutex<BTreeMap<Proc, (u64, u64)>>,
    /// Fences in progress, by participant list and round.
    fences: Mutex<BTreeMap<(String, u64), FenceRound>>,
    /// How many fences each node has entered per participant list.
    rounds: Mutex<BTreeMap<(String, usize), u64>>,
    published: PublishBoard,
    /// The last context id given, and the id of each group that has one.
    context_ids: Mutex<(usize, BTreeMap<String, usize>)>,
    /// The process sets connected and not yet disconnected, each sorted.
    connected: Mutex<BTreeSet<Vec<Proc>>>,
    /// The key of the cluster's security service, when it has one (see
    /// [`Shared::with_security_service`]).
    credential_key: Option<[u8; 32]>,
    /// Every upcall the nodes' hosts received, in arrival order.
    pub upcalls: UpcallLog,
    /// How the host ends a rank, once the target has started them.
    ender: Mutex<Option<Arc<dyn RankEnder>>>,
}

/// One collective in progress: each node's part, and the first local failure a node's server
/// reported (`PMIX_LOCAL_COLLECTIVE_STATUS`), which every node's answer then carries.
#[derive(Default)]
struct FenceRound {
    data: BTreeMap<usize, Vec<u8>>,
    failed: Option<pmix::model::Status>,
    waiters: Vec<oneshot::Sender<Result<Vec<u8>, pmix::model::Status>>>,
}

/// The vector's job runs on its nodes; other jobs' processes run nowhere, so share no node.
impl Topology for Shared {
    fn same_node(&self, a: &Proc, b: &Proc) -> bool {
        let node = |p: &Proc| {
            (p.nspace.as_str() == self.nspace)
                .then(|| self.node_of.get(&p.rank.0))
                .flatten()
        };
        node(a).is_some() && node(a) == node(b)
    }
}

impl Shared {
    pub fn new(v: &Vector) -> Shared {
        Shared {
            servers: Mutex::new(Vec::new()),
            nspace: v.setup.nspace.clone(),
            other_jobs: (v.setup.jobs.iter())
                .filter_map(|j| {
                    let info = j.info.iter().map(|i| i.to_info(&j.nspace));
                    Some((j.nspace.clone(), info.collect::<Result<Vec<_>, _>>().ok()?))
                })
                .collect(),
            direct_modex: v.setup.host.direct_modex,
            fence: v.setup.host.fence,
            publish: v.setup.host.publish,
            // Checked when the vector was loaded.
            unrelayed: (v.setup.host.unrelayed.iter())
                .filter_map(|c| crate::vector::status_named(c).ok())
                .collect(),
            refused: (crate::vector::REFUSABLE.iter())
                .filter_map(|u| {
                    let status = v.setup.host.refuse.get(*u)?;
                    Some((*u, crate::vector::status_named(status).ok()?))
                })
                .collect(),
            group_membership: v.setup.host.group_membership,
            gone: Mutex::default(),
            node_of: v
                .setup
                .nodes
                .iter()
                .enumerate()
                .flat_map(|(i, n)| n.ranks.iter().map(move |r| (*r, i)))
                .collect(),
            nodes: v.setup.nodes.len(),
            node_names: v.setup.nodes.iter().map(|n| n.name.clone()).collect(),
            spawned: Mutex::new(0),
            spawned_jobs: Mutex::default(),
            allocations: Mutex::new(control::Allocations::default()),
            heartbeats: Mutex::new(BTreeMap::new()),
            fences: Mutex::new(BTreeMap::new()),
            rounds: Mutex::new(BTreeMap::new()),
            published: PublishBoard::default(),
            context_ids: Mutex::default(),
            connected: Mutex::default(),
            credential_key: None,
            upcalls: UpcallLog::default(),
            ender: Mutex::new(None),
        }
    }

    /// Rank `rank` of the job ended: the host knows it, and so does its publish board, as a
    /// resource manager's would (§9.1: `PMIX_PERSIST_PROC` data goes with its publisher,
    /// `PMIX_PERSIST_APP` data with the last process of its job).
    pub fn rank_gone(&self, rank: u32) {
        let all_gone = {
            let mut gone = lock(&self.gone);
            gone.insert(rank);
            self.node_of.keys().all(|r| gone.contains(r))
        };
        let Ok(job) = Nspace::new(&self.nspace) else {
            return;
        };
        self.published
            .process_ended(&Proc::new(job.clone(), Rank(rank)));
        if all_gone {
            self.published.job_ended(&job);
        }
    }

    /// The target's way of ending its ranks, for aborts and job control.
    pub fn set_ender(&self, ender: Arc<dyn RankEnder>) {
        *lock(&self.ender) = Some(ender);
    }

    /// The cluster gets a security service: its hosts mint credentials for their processes
    /// (in this crate's format, sealed with a key of the service's own) and validate them.
    /// A library server without host support has no credentials to give (OpenPMIx 4.2
    /// answers `PMIX_ERR_NOT_SUPPORTED`); this crate's servers vouch for their clients
    /// themselves, and are tested doing so, so only library servers get the service. Without
    /// the system's randomness for a key, there is no service.
    pub fn with_security_service(mut self) -> Shared {
        let mut key = [0u8; 32];
        let read = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut key));
        match read {
            Ok(()) => self.credential_key = Some(key),
            Err(e) => eprintln!("conformance: no security service: no key from /dev/urandom: {e}"),
        }
        self
    }

    /// The nodes hosting any of `procs` (a wildcard: every rank of the job).
    fn nodes_of(&self, procs: &[Proc]) -> Vec<usize> {
        let mut out: Vec<usize> = procs
            .iter()
            .flat_map(|p| {
                if p.rank == Rank::WILDCARD {
                    (0..self.nodes).collect::<Vec<_>>()
                } else {
                    self.node_of.get(&p.rank.0).copied().into_iter().collect()
                }
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The resource manager of one node.
pub struct ClusterHost {
    pub node: usize,
    pub shared: Arc<Shared>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("nodes", &self.nodes)
            .field("direct_modex", &self.direct_modex)
            .field("fence", &self.fence)
            .field("publish", &self.publish)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for ClusterHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterHost")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}
