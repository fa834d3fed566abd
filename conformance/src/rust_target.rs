//! The `rust` target: a vector run in-process against this project's `pmix` crate.
//!
//! Each node of the vector gets its own [`Server`]; a [`ClusterHost`] per node plays the
//! resource manager between them (fences across nodes, direct modex to the owning node's
//! server, a shared publish/lookup table), so multi-node retrieval rules run for real. Each
//! started rank is an async [`Client`] connected to its node's server over the in-memory
//! transport, with the uid and gid of this process.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pmix::client::{Client, Pending};
use pmix::codec::BufferType;
use pmix::model::{DataArray, DataType, Info, Nspace, PData, Proc, Rank, Status, Value, attr};
use pmix::server::{Host, Server, ServerConfig};
use pmix::transport::{MemoryConnector, PeerCred, memory};
use tokio::sync::{Notify, oneshot};

use crate::vector::{Call, Step, Vector};

/// What one caller got from one step.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    pub status: Status,
    pub value: Option<Value>,
    pub data: Vec<PData>,
}

impl Observed {
    fn status(status: Status) -> Self {
        Observed {
            status,
            value: None,
            data: Vec::new(),
        }
    }
}

/// A step's observations, one per caller, in caller order.
pub type StepResult = Vec<(u32, Observed)>;

/// Run the vector's steps, calling `check` after each; stops at the first step `check`
/// rejects. Errors are failures of the harness or the target to set the job up.
pub async fn run<F>(v: &Vector, mut check: F) -> Result<(), String>
where
    F: FnMut(usize, &Step, &StepResult) -> bool,
{
    let cluster = Cluster::start(v).await?;
    let mut clients: BTreeMap<u32, Client> = BTreeMap::new();
    for r in v.started() {
        clients.insert(r, cluster.connect(v, r).await?);
    }
    let mut handles: BTreeMap<String, (u32, Pending<Value>)> = BTreeMap::new();
    for (n, step) in v.steps.iter().enumerate() {
        let callers = v.callers(step);
        let result = match &step.call {
            Call::Get {
                handle: Some(h), ..
            } => {
                let r = callers.first().copied().unwrap_or(0);
                let c = clients.get(&r).ok_or(format!("rank {r} has vanished"))?;
                let (target, key, info) = get_args(v, step, r)?;
                handles.insert(h.clone(), (r, c.get_nb(target.as_ref(), &key, &info)));
                Vec::new()
            }
            Call::Await { handle } => {
                let (r, pending) = handles
                    .remove(handle)
                    .ok_or(format!("handle {handle} is not pending"))?;
                vec![(r, observe_value(pending.await))]
            }
            Call::Vanish => {
                for r in &callers {
                    clients.remove(r);
                }
                // Let the servers see the connections close.
                tokio::time::sleep(Duration::from_millis(20)).await;
                Vec::new()
            }
            _ => {
                let mut calls = Vec::new();
                for r in &callers {
                    let c = clients
                        .get(r)
                        .cloned()
                        .ok_or(format!("rank {r} has vanished"))?;
                    calls.push(one_call(v, step, *r, c));
                }
                let mut out = Vec::new();
                for (r, f) in callers.iter().zip(join_all(calls).await) {
                    out.push((*r, f?));
                }
                out
            }
        };
        if !check(n, step, &result) {
            break;
        }
    }
    drop(clients);
    cluster.stop();
    Ok(())
}

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

fn get_args(
    v: &Vector,
    step: &Step,
    rank: u32,
) -> Result<(Option<Proc>, String, Vec<Info>), String> {
    let Call::Get {
        target, key, info, ..
    } = &step.call
    else {
        return Err("not a get".into());
    };
    let ns = &v.setup.nspace;
    let target = target
        .as_ref()
        .map(|t| t.to_proc(ns, Rank(rank)))
        .transpose()?;
    let key = crate::vector::key_string(key)?;
    let info = info
        .iter()
        .map(|i| i.to_info(ns))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((target, key, info))
}

fn observe_value(r: Result<Value, Status>) -> Observed {
    match r {
        Ok(v) => Observed {
            status: Status::SUCCESS,
            value: Some(v),
            data: Vec::new(),
        },
        Err(s) => Observed::status(s),
    }
}

fn observe_unit(r: Result<(), Status>) -> Observed {
    Observed::status(r.err().unwrap_or(Status::SUCCESS))
}

/// One caller's call, as a `'static` future so that callers run at the same time.
fn one_call(
    v: &Vector,
    step: &Step,
    rank: u32,
    c: Client,
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
            Prepared::Get(target, key, info) => {
                observe_value(c.get(target.as_ref(), &key, &info).await)
            }
            Prepared::Publish(info) => observe_unit(c.publish(&info).await),
            Prepared::Lookup(keys, info) => {
                let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                match c.lookup(&keys, &info).await {
                    Ok(data) => Observed {
                        status: Status::SUCCESS,
                        value: None,
                        data,
                    },
                    Err(s) => Observed::status(s),
                }
            }
            Prepared::Unpublish(keys, info) => {
                let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                observe_unit(c.unpublish(&keys, &info).await)
            }
            Prepared::Finalize => observe_unit(c.finalize().await),
        })
    }
}

enum Prepared {
    Put(pmix::model::Scope, String, Value),
    StoreInternal(Proc, String, Value),
    Commit,
    Fence(Vec<Proc>, Vec<Info>),
    Get(Option<Proc>, String, Vec<Info>),
    Publish(Vec<Info>),
    Lookup(Vec<String>, Vec<Info>),
    Unpublish(Vec<String>, Vec<Info>),
    Finalize,
}

fn prepare(v: &Vector, step: &Step, rank: u32) -> Result<Prepared, String> {
    use crate::vector::{key_string, scope_named};
    let ns = &v.setup.nspace;
    let infos = |list: &[crate::vector::InfoSpec]| -> Result<Vec<Info>, String> {
        list.iter().map(|i| i.to_info(ns)).collect()
    };
    let keys = |list: &[String]| -> Result<Vec<String>, String> {
        list.iter().map(|k| key_string(k)).collect()
    };
    Ok(match &step.call {
        Call::Put { scope, key, value } => {
            Prepared::Put(scope_named(scope)?, key_string(key)?, value.to_value(ns)?)
        }
        Call::StoreInternal { target, key, value } => {
            let me = Rank(rank);
            let target = match target {
                Some(t) => t.to_proc(ns, me)?,
                None => Proc::try_new(ns, me).map_err(|e| e.to_string())?,
            };
            Prepared::StoreInternal(target, key_string(key)?, value.to_value(ns)?)
        }
        Call::Commit => Prepared::Commit,
        Call::Fence { procs, info } => {
            let procs = procs
                .iter()
                .map(|p| p.to_proc(ns, Rank(rank)))
                .collect::<Result<Vec<_>, _>>()?;
            Prepared::Fence(procs, infos(info)?)
        }
        Call::Get { .. } => {
            let (t, k, i) = get_args(v, step, rank)?;
            Prepared::Get(t, k, i)
        }
        Call::Publish { info } => Prepared::Publish(infos(info)?),
        Call::Lookup { keys: k, info } => Prepared::Lookup(keys(k)?, infos(info)?),
        Call::Unpublish { keys: k, info } => Prepared::Unpublish(keys(k)?, infos(info)?),
        Call::Finalize => Prepared::Finalize,
        Call::Await { .. } | Call::Vanish => return Err("not a direct call".into()),
    })
}

// ---- the job: one server per node, a host between them ----

struct Cluster {
    servers: Vec<Arc<Server>>,
    connectors: Vec<MemoryConnector>,
    node_of: BTreeMap<u32, usize>,
}

impl Cluster {
    async fn start(v: &Vector) -> Result<Cluster, String> {
        let shared = Arc::new(Shared::new(v));
        let info = registration(v)?;
        let nspace = Nspace::new(&v.setup.nspace).map_err(|e| e.to_string())?;
        let (uid, gid) = uid_gid();
        let mut servers = Vec::new();
        let mut connectors = Vec::new();
        for (i, node) in v.setup.nodes.iter().enumerate() {
            let mut config = ServerConfig::new(std::env::temp_dir(), node.name.clone());
            config.id =
                Proc::try_new(&format!("vserver-{}", node.name), 0).map_err(|e| e.to_string())?;
            config.tcp = false;
            config.unix_socket = false;
            let host = ClusterHost {
                node: i,
                shared: shared.clone(),
            };
            let server = Server::start(config, host)
                .await
                .map_err(|e| format!("server of {}: {e}", node.name))?;
            server
                .register_nspace(nspace.clone(), info.clone())
                .await
                .map_err(|e| format!("register_nspace on {}: {e}", node.name))?;
            for r in &node.ranks {
                server
                    .register_client(Proc::new(nspace.clone(), Rank(*r)), uid, gid)
                    .await
                    .map_err(|e| format!("register_client: {e}"))?;
            }
            let (acceptor, connector) = memory();
            server.serve(acceptor);
            servers.push(Arc::new(server));
            connectors.push(connector);
        }
        *lock(&shared.servers) = servers.clone();
        let node_of = v
            .setup
            .nodes
            .iter()
            .enumerate()
            .flat_map(|(i, n)| n.ranks.iter().map(move |r| (*r, i)))
            .collect();
        Ok(Cluster {
            servers,
            connectors,
            node_of,
        })
    }

    async fn connect(&self, v: &Vector, rank: u32) -> Result<Client, String> {
        let node = *self.node_of.get(&rank).ok_or("rank on no node")?;
        let (uid, gid) = uid_gid();
        let stream = self.connectors[node]
            .connect(Some(PeerCred {
                uid,
                gid,
                pid: None,
            }))
            .map_err(|e| e.to_string())?;
        let proc = Proc::try_new(&v.setup.nspace, rank).map_err(|e| e.to_string())?;
        Client::init_over(stream, proc, BufferType::NonDescribed)
            .await
            .map_err(|e| format!("rank {rank} cannot init: {e}"))
    }

    fn stop(self) {
        for s in &self.servers {
            s.shutdown();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn uid_gid() -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or((0, 0), |m| (m.uid(), m.gid()))
}

/// What every node's host shares: the servers, fences in progress, published data.
struct Shared {
    servers: Mutex<Vec<Arc<Server>>>,
    direct_modex: bool,
    fence: bool,
    publish: bool,
    node_of: BTreeMap<u32, usize>,
    nodes: usize,
    /// Fences in progress, by participant list and round.
    fences: Mutex<BTreeMap<(String, u64), FenceRound>>,
    /// How many fences each node has entered per participant list.
    rounds: Mutex<BTreeMap<(String, usize), u64>>,
    published: Mutex<BTreeMap<String, PData>>,
    published_changed: Notify,
}

#[derive(Default)]
struct FenceRound {
    data: BTreeMap<usize, Vec<u8>>,
    waiters: Vec<oneshot::Sender<Vec<u8>>>,
}

impl Shared {
    fn new(v: &Vector) -> Shared {
        Shared {
            servers: Mutex::new(Vec::new()),
            direct_modex: v.setup.host.direct_modex,
            fence: v.setup.host.fence,
            publish: v.setup.host.publish,
            node_of: v
                .setup
                .nodes
                .iter()
                .enumerate()
                .flat_map(|(i, n)| n.ranks.iter().map(move |r| (*r, i)))
                .collect(),
            nodes: v.setup.nodes.len(),
            fences: Mutex::new(BTreeMap::new()),
            rounds: Mutex::new(BTreeMap::new()),
            published: Mutex::new(BTreeMap::new()),
            published_changed: Notify::new(),
        }
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
struct ClusterHost {
    node: usize,
    shared: Arc<Shared>,
}

impl Host for ClusterHost {
    fn supports_direct_modex(&self) -> bool {
        self.shared.direct_modex
    }

    async fn fence_nb(
        &self,
        procs: Vec<Proc>,
        _info: Vec<Info>,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, Status> {
        if !self.shared.fence {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let mut sorted = procs.clone();
        sorted.sort();
        let key = format!("{sorted:?}");
        let expected = self.shared.nodes_of(&procs);
        let rx = {
            let round = {
                let mut rounds = lock(&self.shared.rounds);
                let r = rounds.entry((key.clone(), self.node)).or_insert(0);
                *r += 1;
                *r
            };
            let mut fences = lock(&self.shared.fences);
            let f = fences.entry((key.clone(), round)).or_default();
            f.data.insert(self.node, data);
            let (tx, rx) = oneshot::channel();
            f.waiters.push(tx);
            if expected.iter().all(|n| f.data.contains_key(n)) {
                let all: Vec<u8> = f.data.values().flatten().copied().collect();
                if let Some(done) = fences.remove(&(key, round)) {
                    for w in done.waiters {
                        let _ = w.send(all.clone());
                    }
                }
            }
            rx
        };
        rx.await.map_err(|_| Status::ERR_LOST_CONNECTION)
    }

    async fn direct_modex(&self, proc: Proc, info: Vec<Info>) -> Result<Vec<u8>, Status> {
        if !self.shared.direct_modex {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let node = *self
            .shared
            .node_of
            .get(&proc.rank.0)
            .ok_or(Status::ERR_NOT_FOUND)?;
        let server = lock(&self.shared.servers)
            .get(node)
            .cloned()
            .ok_or(Status::ERR_NOT_FOUND)?;
        server.dmodex_request(proc, info).await
    }

    async fn publish(&self, proc: Proc, info: Vec<Info>) -> Result<(), Status> {
        if !self.shared.publish {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let mut table = lock(&self.shared.published);
        let data: Vec<Info> = info
            .into_iter()
            .filter(|i| !i.key.as_str().starts_with("pmix."))
            .collect();
        if data.iter().any(|i| table.contains_key(i.key.as_str())) {
            return Err(Status::ERR_DUPLICATE_KEY);
        }
        for i in data {
            table.insert(
                i.key.as_str().to_owned(),
                PData {
                    proc: proc.clone(),
                    key: i.key.clone(),
                    value: i.value.clone(),
                },
            );
        }
        drop(table);
        self.shared.published_changed.notify_waiters();
        Ok(())
    }

    async fn lookup(
        &self,
        _proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<Vec<PData>, Status> {
        if !self.shared.publish {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let wait = info.iter().any(|i| i.key.as_str() == attr::WAIT.wire_key());
        let timeout = info
            .iter()
            .find(|i| i.key.as_str() == attr::TIMEOUT.wire_key())
            .and_then(|i| i.value.to_u64())
            .filter(|t| *t > 0);
        let search = async {
            loop {
                let notified = self.shared.published_changed.notified();
                {
                    let table = lock(&self.shared.published);
                    let found: Vec<PData> =
                        keys.iter().filter_map(|k| table.get(k).cloned()).collect();
                    if found.len() == keys.len() || (!wait && !found.is_empty()) {
                        return Ok(found);
                    }
                    if !wait {
                        return Err(Status::ERR_NOT_FOUND);
                    }
                }
                notified.await;
            }
        };
        match timeout {
            Some(t) => tokio::time::timeout(Duration::from_secs(t), search)
                .await
                .unwrap_or(Err(Status::ERR_TIMEOUT)),
            None => search.await,
        }
    }

    async fn unpublish(
        &self,
        proc: Proc,
        keys: Vec<String>,
        _info: Vec<Info>,
    ) -> Result<(), Status> {
        if !self.shared.publish {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let mut table = lock(&self.shared.published);
        table.retain(|k, d| d.proc != proc || !(keys.is_empty() || keys.contains(k)));
        Ok(())
    }
}

// ---- what the host registers ----

fn info(key: &str, value: Value) -> Info {
    Info::with_key(key, value).unwrap_or_else(|_| Info::new(attr::JOB_SIZE, 0u32))
}

fn array(infos: Vec<Info>) -> Value {
    let elements = infos
        .into_iter()
        .map(|i| Value::Info(Box::new(i)))
        .collect();
    match DataArray::new(DataType::INFO, elements) {
        Ok(a) => Value::DataArray(Box::new(a)),
        Err(_) => Value::Bool(false),
    }
}

/// The standard information (when asked for) and the vector's own, in that order.
fn registration(v: &Vector) -> Result<Vec<Info>, String> {
    let mut out = Vec::new();
    if v.setup.standard_info {
        out.extend(standard_info(v));
    }
    for i in &v.setup.info {
        out.push(i.to_info(&v.setup.nspace)?);
    }
    Ok(out)
}

/// What a launcher registers for a job laid out as the vector's nodes: one application.
fn standard_info(v: &Vector) -> Vec<Info> {
    let ranks = v.ranks();
    let n = u32::try_from(ranks.len()).unwrap_or(u32::MAX);
    let hosts: Vec<&str> = v.setup.nodes.iter().map(|n| n.name.as_str()).collect();
    let num_nodes = u32::try_from(hosts.len()).unwrap_or(u32::MAX);
    let mut out = vec![
        info(
            attr::SESSION_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::SESSION_ID.wire_key(), Value::Uint32(1)),
                info(attr::UNIV_SIZE.wire_key(), Value::Uint32(n)),
            ]),
        ),
        info(
            attr::JOBID.wire_key(),
            Value::string(v.setup.nspace.clone()),
        ),
        info(attr::JOB_SIZE.wire_key(), Value::Uint32(n)),
        info(attr::MAX_PROCS.wire_key(), Value::Uint32(n)),
        info(attr::JOB_NUM_APPS.wire_key(), Value::Uint32(1)),
        info(attr::NUM_NODES.wire_key(), Value::Uint32(num_nodes)),
        info(attr::NODE_LIST.wire_key(), Value::string(hosts.join(","))),
        info(
            attr::APP_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::APPNUM.wire_key(), Value::Uint32(0)),
                info(attr::APP_SIZE.wire_key(), Value::Uint32(n)),
                info(attr::APPLDR.wire_key(), Value::Rank(Rank(0))),
            ]),
        ),
    ];
    for (id, node) in v.setup.nodes.iter().enumerate() {
        let mut local = node.ranks.clone();
        local.sort_unstable();
        let peers: Vec<String> = local.iter().map(u32::to_string).collect();
        let size = u32::try_from(local.len()).unwrap_or(u32::MAX);
        let nodeid = u32::try_from(id).unwrap_or(u32::MAX);
        out.push(info(
            attr::NODE_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::HOSTNAME.wire_key(), Value::string(node.name.clone())),
                info(attr::NODEID.wire_key(), Value::Uint32(nodeid)),
                info(attr::NODE_SIZE.wire_key(), Value::Uint32(size)),
                info(attr::LOCAL_PEERS.wire_key(), Value::string(peers.join(","))),
                info(attr::LOCAL_SIZE.wire_key(), Value::Uint32(size)),
                info(
                    attr::LOCALLDR.wire_key(),
                    Value::Rank(Rank(local.first().copied().unwrap_or(0))),
                ),
            ]),
        ));
        for (place, r) in local.iter().enumerate() {
            let place = u16::try_from(place).unwrap_or(u16::MAX);
            out.push(info(
                attr::PROC_INFO_ARRAY.wire_key(),
                array(vec![
                    info(attr::RANK.wire_key(), Value::Rank(Rank(*r))),
                    info(attr::LOCAL_RANK.wire_key(), Value::Uint16(place)),
                    info(attr::NODE_RANK.wire_key(), Value::Uint16(place)),
                    info(attr::APPNUM.wire_key(), Value::Uint32(0)),
                    info(attr::APP_RANK.wire_key(), Value::Rank(Rank(*r))),
                    info(attr::GLOBAL_RANK.wire_key(), Value::Rank(Rank(*r))),
                    info(attr::HOSTNAME.wire_key(), Value::string(node.name.clone())),
                    info(attr::NODEID.wire_key(), Value::Uint32(nodeid)),
                ]),
            ));
        }
    }
    out
}
