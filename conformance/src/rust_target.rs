//! The `rust` target: a vector run in-process against this project's `pmix` crate.
//!
//! Each node of the vector gets its own [`Server`]; a [`crate::cluster::ClusterHost`] per node plays the
//! resource manager between them (fences across nodes, direct modex to the owning node's
//! server, a shared publish/lookup table), so multi-node retrieval rules run for real. Each
//! started rank is an async [`Client`] connected to its node's server over the in-memory
//! transport, with the uid and gid of this process. The vector's tool, if it has one, is
//! this crate's tool in a process of its own (`conformance __rust-tool`): the servers then
//! listen on TCP too and leave their rendezvous files where it looks for them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use pmix::client::{Client, ClientConfig, Pending};
use pmix::model::{PData, Proc, Status, Value};
use pmix::server::Server;
use pmix::transport::{MemoryConnector, PeerCred, memory};

use crate::api::RustProc;
use crate::cluster::{Shared, start_rust_servers};
use crate::libpmix_target::{TempDir, ToolProcess};
use crate::outcome::has_expected_upcalls;
use crate::prepare::{Prepared, get_args, prepare};
use crate::step::{Observed, Problem, StepResult, lock};
use crate::upcall_log::HostUpcall;
use crate::vector::{Call, Saved, Step, Vector, node_presets, record_saved, run_presets};

/// Run the vector's steps, calling `check` after each with what the callers got and the
/// upcalls the host received during the step; stops at the first step `check` rejects.
/// Errors are failures of the harness or the target to set the job up.
pub async fn run<F>(v: &Vector, mut check: F) -> Result<(), Problem>
where
    F: FnMut(usize, &Step, &StepResult, &[HostUpcall]) -> bool,
{
    let cluster = Cluster::start(v).await?;
    let clients = Arc::new(Ranks::default());
    let mut procs: BTreeMap<u32, Arc<RustProc>> = BTreeMap::new();
    for r in v.started() {
        clients.insert(r, cluster.connect(v, r).await?);
        procs.insert(r, Arc::default());
    }
    cluster.shared.set_ender(clients.clone());
    // A started call's handle, its caller, and where the host's log stood at its start.
    let mut handles: BTreeMap<String, (u32, Started, usize)> = BTreeMap::new();
    // Without a tool the servers have no URI (they are reached in memory).
    let mut saved = Saved::new();
    for (node, server) in v.setup.nodes.iter().zip(&cluster.servers) {
        let (uri, dir) = match &cluster.tool_dirs {
            Some(t) => (server.uri().unwrap_or_default(), t.0.join(&node.name)),
            None => (String::new(), std::env::temp_dir()),
        };
        let dir = dir.display().to_string();
        saved.extend(node_presets(&node.name, &uri, &dir, std::process::id()));
    }
    let mut tool = ToolProcess::default();
    saved.extend(run_presets());
    for (n, written) in v.steps.iter().enumerate() {
        let step = &written.with_saved(&saved)?;
        if step.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(step.delay_ms)).await;
        }
        let callers = v.callers(step);
        let mut mark = cluster.shared.upcalls.mark();
        let result = match &step.call {
            // The tool is this crate's, in a process of its own (`conformance __rust-tool`).
            call if v.by_tool(step) => {
                let exe = std::env::current_exe()
                    .map_err(|e| format!("cannot find the conformance binary: {e}"))?;
                let args = vec!["__rust-tool".to_owned()];
                let got = tool.call(&exe, args, call, &v.setup.nspace).await?;
                callers.iter().map(|c| (*c, got.clone())).collect()
            }
            _ if v.server_of(step).is_some() => {
                let server = &cluster.servers[v.server_of(step).unwrap_or(0)];
                let o = crate::server_api::run_step(server, &step.call, &v.setup.nspace).await?;
                callers.iter().map(|c| (*c, o.clone())).collect()
            }
            Call::Init => {
                let r = callers.first().copied().unwrap_or(0);
                let o = match cluster.init(v, r).await? {
                    Ok(c) => {
                        clients.insert(r, c);
                        procs.insert(r, Arc::default());
                        Observed::status(Status::SUCCESS)
                    }
                    Err(e) => Observed::status(e.status()),
                };
                vec![(r, o)]
            }
            _ if step.start.is_some() => {
                let r = callers.first().copied().unwrap_or(0);
                let c = clients.get(r)?;
                let h = step.start.clone().unwrap_or_default();
                let p = procs.get(&r).cloned().unwrap_or_default();
                let started = tokio::spawn(one_call(v, step, r, c, p));
                clients.under_way(r, &started);
                handles.insert(h, (r, started, mark));
                Vec::new()
            }
            Call::Get {
                handle: Some(h), ..
            } => {
                let r = callers.first().copied().unwrap_or(0);
                let c = clients.get(r)?;
                let (target, key, info) = get_args(v, step, r)?;
                let pending: Pending<Value> = c.get_nb(target.as_ref(), &key, &info);
                let get = tokio::spawn(async move { Ok(observe_value(pending.await)) });
                clients.under_way(r, &get);
                handles.insert(h.clone(), (r, get, mark));
                Vec::new()
            }
            Call::Await { handle } => {
                let (r, started, at_start) = handles
                    .remove(handle)
                    .ok_or(format!("handle {handle} is not pending"))?;
                mark = at_start;
                match started.await {
                    Ok(o) => vec![(r, o?)],
                    Err(e) if e.is_cancelled() => {
                        return Err(format!("rank {r} was ended before {handle} completed").into());
                    }
                    Err(e) => std::panic::resume_unwind(e.into_panic()),
                }
            }
            Call::Vanish => {
                for r in &callers {
                    clients.remove(*r);
                    cluster.shared.rank_gone(*r);
                }
                handles.retain(|_, (r, _, _)| !callers.contains(r));
                // Let the servers see the connections close.
                tokio::time::sleep(Duration::from_millis(20)).await;
                Vec::new()
            }
            _ => {
                let mut calls = Vec::new();
                for r in &callers {
                    let c = clients.get(*r)?;
                    let p = procs.get(r).cloned().unwrap_or_default();
                    calls.push(one_call(v, step, *r, c, p));
                }
                let mut out = Vec::new();
                for (r, f) in callers.iter().zip(join_all(calls).await) {
                    out.push((*r, f?));
                }
                out
            }
        };
        record_saved(step, &result, &mut saved);
        let me = callers.first().copied().unwrap_or(0);
        let upcalls = (cluster.shared.upcalls)
            .window(mark, has_expected_upcalls(step, &v.setup.nspace, me))
            .await;
        if !check(n, step, &result, &upcalls) {
            break;
        }
    }
    clients.clear();
    tool.kill().await;
    cluster.stop();
    Ok(())
}

/// The clients of the started ranks, which the host ends by dropping them: the connection
/// closes as a process's would when it dies.
#[derive(Default)]
struct Ranks(std::sync::Mutex<RankTable>);

#[derive(Default)]
struct RankTable {
    clients: BTreeMap<u32, Client>,
    /// The calls each rank started and has not collected: each holds the rank's connection
    /// open, so they end with the rank.
    under_way: BTreeMap<u32, Vec<tokio::task::AbortHandle>>,
}

impl Ranks {
    fn insert(&self, rank: u32, client: Client) {
        lock(&self.0).clients.insert(rank, client);
    }

    fn get(&self, rank: u32) -> Result<Client, String> {
        (lock(&self.0).clients.get(&rank).cloned())
            .ok_or(format!("rank {rank} has vanished or was ended"))
    }

    fn under_way<T>(&self, rank: u32, call: &tokio::task::JoinHandle<T>) {
        let mut table = lock(&self.0);
        let calls = table.under_way.entry(rank).or_default();
        calls.retain(|c| !c.is_finished());
        calls.push(call.abort_handle());
    }

    /// End `rank`: its client and the calls it has under way.
    fn remove(&self, rank: u32) -> Option<Client> {
        let mut table = lock(&self.0);
        for call in table.under_way.remove(&rank).unwrap_or_default() {
            call.abort();
        }
        table.clients.remove(&rank)
    }

    fn clear(&self) {
        let mut table = lock(&self.0);
        table.clients.clear();
        table.under_way.clear();
    }
}

/// A rank here is a task of the harness, which no signal reaches: whatever the signal, it
/// ends as a killed process would, its connection closing (once no call of it is running).
impl crate::cluster::RankEnder for Ranks {
    fn end(
        &self,
        rank: u32,
        _signal: i32,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send>> {
        let ended = self.remove(rank).is_some();
        Box::pin(async move {
            // Let its server see the connection close.
            tokio::time::sleep(Duration::from_millis(20)).await;
            ended
        })
    }
}

/// A call started without waiting (a get_nb or a step's `start`).
type Started = tokio::task::JoinHandle<Result<Observed, String>>;

/// Run a list of futures concurrently and collect their outputs in order.
async fn join_all<F: std::future::Future + Send + 'static>(futures: Vec<F>) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        match h.await {
            Ok(o) => out.push(o),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    out
}

fn observe_value(r: Result<Value, pmix::Error>) -> Observed {
    match r {
        Ok(v) => Observed {
            value: Some(v),
            ..Observed::status(Status::SUCCESS)
        },
        Err(s) => Observed::status(s),
    }
}

fn observe_unit(r: Result<(), pmix::Error>) -> Observed {
    Observed::status(r.err().map_or(Status::SUCCESS, |e| e.status()))
}

/// One caller's call, as a `'static` future so that callers run at the same time.
fn one_call(
    v: &Vector,
    step: &Step,
    rank: u32,
    c: Client,
    me: Arc<RustProc>,
) -> impl std::future::Future<Output = Result<Observed, String>> + Send + 'static {
    let prepared = prepare(v, step, rank);
    async move {
        let p = prepared?;
        Ok(match p {
            Prepared::Put(scope, key, value) => observe_unit(c.put(scope, &key, value)),
            Prepared::StoreInternal(target, key, value) => {
                observe_unit(c.store_internal(&target, &key, value))
            }
            Prepared::Commit => observe_unit(c.commit().await),
            Prepared::Fence(procs, info) => observe_unit(c.fence(&procs, &info).await),
            // The crate's values are always the caller's: there is no storage to give.
            Prepared::Get(target, key, info, _) => {
                observe_value(c.get(target.as_ref(), &key, &info).await)
            }
            Prepared::Publish(info) => observe_unit(c.publish(&info).await),
            Prepared::Lookup(keys, info) => {
                let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                match c.lookup(&keys, &info).await {
                    // The crate returns what it found; the C API's status says how much.
                    Ok(data) => {
                        let status = PData::lookup_status(&keys, &data);
                        Observed {
                            data,
                            ..Observed::status(status)
                        }
                    }
                    Err(s) => Observed::status(s),
                }
            }
            Prepared::Unpublish(keys, info) => {
                let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                observe_unit(c.unpublish(&keys, &info).await)
            }
            Prepared::Finalize => observe_unit(c.finalize().await),
            Prepared::Api(call) => crate::api::run_rust(&c, &me, call).await,
        })
    }
}

// ---- the job: one server per node, a host between them ----

struct Cluster {
    shared: Arc<Shared>,
    servers: Vec<Arc<Server>>,
    connectors: Vec<MemoryConnector>,
    node_of: BTreeMap<u32, usize>,
    /// For a vector with a tool: the nodes' directories, where their servers leave their
    /// rendezvous files.
    tool_dirs: Option<TempDir>,
}

impl Cluster {
    async fn start(v: &Vector) -> Result<Cluster, Problem> {
        let shared = Arc::new(Shared::new(v));
        // The ranks reach their servers in memory. A tool is a process of its own: with one,
        // the servers listen on TCP too, and leave their rendezvous files in a directory
        // of the node's.
        let tool_dirs = if v.steps.iter().any(|s| v.by_tool(s)) {
            Some(TempDir::new()?)
        } else {
            None
        };
        let dir = |node: &str| match &tool_dirs {
            Some(t) => {
                let d = t.0.join(node);
                std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
                Ok(d)
            }
            None => Ok(std::env::temp_dir()),
        };
        let servers = start_rust_servers(v, &shared, dir, tool_dirs.is_some()).await?;
        let connectors = servers
            .iter()
            .map(|server| {
                let (acceptor, connector) = memory();
                server.serve(acceptor);
                connector
            })
            .collect();
        let node_of = v
            .setup
            .nodes
            .iter()
            .enumerate()
            .flat_map(|(i, n)| n.ranks.iter().map(move |r| (*r, i)))
            .collect();
        Ok(Cluster {
            shared,
            servers,
            connectors,
            node_of,
            tool_dirs,
        })
    }

    /// A rank started with the job: its init failing is the target's refusal of the setup.
    async fn connect(&self, v: &Vector, rank: u32) -> Result<Client, Problem> {
        self.init(v, rank)
            .await?
            .map_err(|e| Problem::Refused(format!("rank {rank} cannot init: {e}")))
    }

    /// Connect `rank` to its node's server (its `PMIx_Init`); the outer error is the
    /// harness's, the inner the client's.
    async fn init(&self, v: &Vector, rank: u32) -> Result<Result<Client, pmix::Error>, Problem> {
        let node = *self.node_of.get(&rank).ok_or("rank on no node")?;
        let (uid, gid) = v.credentials(rank);
        let stream = self.connectors[node]
            .connect(Some(PeerCred::new(uid, gid)))
            .map_err(|e| e.to_string())?;
        // The client learns who it is from the environment its server sets up for a forked
        // process, as a launched process would (only its connection is in memory).
        let proc = Proc::try_new(&v.setup.nspace, rank).map_err(|e| e.to_string())?;
        let env: BTreeMap<String, String> =
            self.servers[node].setup_fork(&proc).into_iter().collect();
        let config = ClientConfig::from_vars(|k| env.get(k).cloned())
            .map_err(|e| format!("rank {rank}: the server's setup_fork environment: {e}"))?;
        Ok(Client::init_over_as(stream, config.proc, config.buffer_type, (uid, gid)).await)
    }

    fn stop(self) {
        for s in &self.servers {
            s.shutdown();
        }
    }
}
