//! Deterministic simulation of PMIx clusters (DESIGN §4).
//!
//! The simulator runs the real `pmix` server and client code under `turmoil`: a virtual
//! cluster of racks (turmoil hosts), each holding many nodes (each node its own PMIx server,
//! its host daemon on a port of its own, and its client processes), so that thousands of
//! nodes cost what a few dozen turmoil hosts cost. Every run is reproducible from its seed: the
//! events it observes fold into one trace hash ([`trace::Trace`]) that two runs of the same
//! seed must agree on.
//!
//! What runs today is the wire-up of a whole job (init, put, commit, fence, get of a remote
//! rank's value, finalize) with fences as a tree allgather among the daemons and gets of
//! other nodes' data either from the fence's data or by direct modex ([`Modex`]); the run's
//! invariants are checked on its [`Report`]. Faults, scenarios and the other
//! collectives follow (issue 6).
//!
//! Determinism rules for every sim-reachable module:
//!
//! - no iteration over `HashMap`/`HashSet` with random state (`clippy.toml` bans them);
//! - no `std::time`: simulated time comes from turmoil;
//! - no threads, randomness only from the seed;
//! - `select!` with `biased;`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub mod cluster;
mod daemon;
mod node;
pub mod trace;

use cluster::Layout;
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

/// What a run is.
#[derive(Clone, Debug)]
pub struct Config {
    pub layout: Layout,
    pub seed: u64,
    pub modex: Modex,
    /// The simulated time after which a run that has not finished is a failure.
    pub limit: Duration,
    /// Report on stderr, every simulated 100 ms, how many clients have finished.
    pub progress: bool,
}

/// What a run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub seed: u64,
    pub nodes: u32,
    pub racks: u32,
    pub clients: u32,
    /// Messages and bytes the daemons sent each other.
    pub messages: u64,
    pub bytes: u64,
    /// Simulated time until the last client finished (or the limit).
    pub simulated: Duration,
    pub trace_hash: u64,
    pub trace_events: u64,
    /// Clients that completed the whole wire-up.
    pub completed: u32,
    /// What broke an invariant, in the order it was seen.
    pub violations: Vec<String>,
}

impl Report {
    /// Whether every invariant held.
    pub fn passed(&self) -> bool {
        self.violations.is_empty() && self.completed == self.nodes * self.clients
    }
}

/// What the simulation observes, shared by every rack (one process, one thread: turmoil runs
/// the racks in turn).
#[derive(Debug, Default)]
pub struct Observer {
    state: Mutex<Observed>,
}

#[derive(Debug, Default)]
struct Observed {
    trace: Trace,
    messages: u64,
    bytes: u64,
    finished: u32,
    completed: u32,
    last_done: Duration,
    violations: Vec<String>,
}

fn now() -> Duration {
    turmoil::sim_elapsed().unwrap_or_default()
}

impl Observer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Observed> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Fold an event of `node` into the trace.
    pub(crate) fn record(&self, node: u32, what: &[u8]) {
        self.lock().trace.record(now().as_nanos(), node, what);
    }

    pub(crate) fn step(&self, node: u32, rank: u32, step: Step) {
        self.record(node, format!("rank {rank} {step:?}").as_bytes());
    }

    pub(crate) fn count_message(&self, bytes: usize) {
        let mut s = self.lock();
        s.messages += 1;
        s.bytes += bytes as u64;
    }

    pub(crate) fn violation(&self, what: String) {
        let mut s = self.lock();
        s.trace.record(
            now().as_nanos(),
            u32::MAX,
            format!("violation {what}").as_bytes(),
        );
        s.violations.push(what);
    }

    /// A client ended its wire-up, completed or not.
    pub(crate) fn client_done(&self, rank: u32, outcome: Result<(), String>) {
        let mut s = self.lock();
        s.finished += 1;
        s.last_done = now();
        match outcome {
            Ok(()) => s.completed += 1,
            Err(e) => {
                s.trace
                    .record(now().as_nanos(), rank, format!("failed {e}").as_bytes());
                s.violations.push(e);
            }
        }
    }

    fn finished(&self) -> u32 {
        self.lock().finished
    }
}

/// Run one simulation to its end: every client finished, or the time limit passed.
pub fn run(config: &Config) -> Report {
    let layout = config.layout.clone();
    let observer = Arc::new(Observer::default());
    let nspace = pmix::model::Nspace::new("simjob").unwrap_or_default();
    let mut sim = turmoil::Builder::new()
        .simulation_duration(config.limit)
        .rng_seed(config.seed)
        .build();
    for rack in 0..layout.used_racks() {
        let (l, ns, obs, seed, modex) = (
            layout.clone(),
            nspace.clone(),
            observer.clone(),
            config.seed,
            config.modex,
        );
        sim.host(Layout::rack_name(rack), move || {
            let (l, ns, obs) = (l.clone(), ns.clone(), obs.clone());
            async move {
                let mut servers = Vec::new();
                for node in l.nodes_of(rack) {
                    match node::start(node, l.clone(), ns.clone(), seed, modex, obs.clone()).await {
                        Ok(s) => servers.push(s),
                        Err(e) => obs.violation(e),
                    }
                }
                // The rack runs until the simulation ends; its servers with it.
                std::future::pending::<()>().await;
                drop(servers);
                Ok(())
            }
        });
    }
    let total = layout.job_size();
    let obs = observer.clone();
    sim.client("observer", async move {
        while obs.finished() < total {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Ok(())
    });
    let mut reported = Duration::ZERO;
    loop {
        match sim.step() {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => {
                observer.violation(format!("the run did not end cleanly: {e}"));
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
    let s = observer.lock();
    Report {
        seed: config.seed,
        nodes: layout.nodes,
        racks: layout.used_racks(),
        clients: layout.clients,
        messages: s.messages,
        bytes: s.bytes,
        simulated: s.last_done,
        trace_hash: s.trace.hash(),
        trace_events: s.trace.events(),
        completed: s.completed,
        violations: s.violations.clone(),
    }
}
