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
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use pmix::events::Event;
use pmix::host::fabric::FabricName;
use pmix::host::publish::PublishBoard;
use pmix::host::{Host, control, launch};
use pmix::model::{
    AllocDirective, App, DataArray, DataRange, DataType, FabricOperation, GroupOperation, Info,
    Nspace, PData, Proc, Query, Rank, Status, Value, attr,
};
use pmix::server::{Server, credential};
use pmix::store::published::Topology;
use tokio::sync::oneshot;

use crate::step::{Problem, lock};
use crate::upcall_log::{HostUpcall, UpcallLog};
use crate::vector::Vector;

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

#[derive(Default)]
struct FenceRound {
    data: BTreeMap<usize, Vec<u8>>,
    waiters: Vec<oneshot::Sender<Vec<u8>>>,
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

impl Host for ClusterHost {
    fn supports_direct_modex(&self) -> bool {
        self.shared.direct_modex
    }

    async fn client_connected(&self, proc: Proc) -> Result<(), Status> {
        self.record(
            self.upcall("pmix_server_client_connected2_fn_t")
                .proc(&proc),
        );
        Ok(())
    }

    async fn client_finalized(&self, proc: Proc) -> Result<(), Status> {
        self.record(self.upcall("pmix_server_client_finalized_fn_t").proc(&proc));
        Ok(())
    }

    /// The listed processes of the vector's job are ended (SIGKILL) before the request is
    /// answered, and their termination announced (`ClusterHost::end`). A request that
    /// includes the requester (no processes: its whole job) is accepted without ending it:
    /// the harness must see its call return to judge it. Other jobs' processes run nowhere.
    async fn abort(
        &self,
        proc: Proc,
        status: Status,
        message: Option<String>,
        procs: Vec<Proc>,
    ) -> Result<(), Status> {
        let detail = format!("status {status:?} message {message:?}");
        self.record(
            self.upcall("pmix_server_abort_fn_t")
                .proc(&proc)
                .procs(&procs)
                .detail(detail),
        );
        let includes_requester = procs.is_empty()
            || procs.iter().any(|p| {
                p.nspace == proc.nspace && (p.rank == proc.rank || p.rank == Rank::WILDCARD)
            });
        if includes_requester {
            return Ok(());
        }
        self.end(&proc, &procs, SIGKILL).await
    }

    async fn fence_nb(
        &self,
        procs: Vec<Proc>,
        info: Vec<Info>,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, Status> {
        let detail = format!("{} bytes of data", data.len());
        self.record(
            self.upcall("pmix_server_fencenb_fn_t")
                .procs(&procs)
                .info(&info)
                .detail(detail),
        );
        if !self.shared.fence {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        self.collective("fence", &procs, data).await
    }

    /// Start the job on the requester's node: checked and described by
    /// `pmix::host::launch`, registered with that node's server, its processes forked and
    /// reaped (they are not PMIx clients of the vector).
    async fn spawn(
        &self,
        proc: Proc,
        job_info: Vec<Info>,
        apps: Vec<App>,
    ) -> Result<Nspace, Status> {
        let mut seen = self
            .upcall("pmix_server_spawn_fn_t")
            .proc(&proc)
            .info(&job_info);
        for app in &apps {
            seen = seen.info(&app.info);
        }
        let cmds: Vec<_> = apps.iter().map(|a| (a.cmd.clone(), a.maxprocs)).collect();
        self.record(seen.detail(format!("apps {cmds:?}")));
        let host = self
            .shared
            .node_names
            .get(self.node)
            .cloned()
            .ok_or(Status::ERR_JOB_FAILED_TO_MAP)?;
        let k = {
            let mut n = lock(&self.shared.spawned);
            *n += 1;
            *n
        };
        let nspace = Nspace::new(format!("{}.spawn{k}", self.shared.nspace))
            .map_err(|_| Status::ERR_BAD_PARAM)?;
        let tmp = std::env::temp_dir().display().to_string();
        let job = launch::plan(nspace.clone(), &host, Some(proc), &job_info, &apps, &tmp)?;
        let server = lock(&self.shared.servers)
            .get(self.node)
            .cloned()
            .ok_or(Status::ERR_JOB_FAILED_TO_LAUNCH)?;
        server
            .register_job(nspace.clone(), launch::job_info(&job))
            .await?;
        lock(&self.shared.spawned_jobs).insert(nspace.as_str().to_owned());
        for (_, app) in job.procs() {
            let app = &job.apps[app];
            let mut cmd = tokio::process::Command::new(&app.exe);
            cmd.args(app.argv.iter().skip(1))
                .envs(app.env.iter().filter_map(|e| e.split_once('=')))
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null());
            if let Some(dir) = &app.cwd {
                cmd.current_dir(dir);
            }
            let mut child = cmd.spawn().map_err(|_| Status::ERR_JOB_FAILED_TO_LAUNCH)?;
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
        }
        Ok(nspace)
    }

    /// The security service's credential for `proc`: the user and group of the harness,
    /// whose processes all are.
    async fn get_credential(
        &self,
        proc: Proc,
        info: Vec<Info>,
    ) -> Result<(Vec<u8>, Vec<Info>), Status> {
        use std::os::unix::fs::MetadataExt;
        self.record(
            self.upcall("pmix_server_get_cred_fn_t")
                .proc(&proc)
                .info(&info),
        );
        let key = self
            .shared
            .credential_key
            .ok_or(Status::ERR_NOT_SUPPORTED)?;
        let me = std::fs::metadata("/proc/self").map_err(|_| Status::ERR_NOT_SUPPORTED)?;
        let who = credential::Identity {
            proc,
            uid: me.uid(),
            gid: me.gid(),
        };
        let info = vec![Info::new(attr::CRED_TYPE, credential::CRED_TYPE.to_owned())];
        Ok((credential::mint(&key, &who)?, info))
    }

    /// The security service checks a credential it minted.
    async fn validate_credential(
        &self,
        proc: Proc,
        cred: Vec<u8>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let seen = self.upcall("pmix_server_validate_cred_fn_t").proc(&proc);
        let detail = format!("{} bytes of credential", cred.len());
        self.record(seen.info(&directives).detail(detail));
        let key = self
            .shared
            .credential_key
            .ok_or(Status::ERR_NOT_SUPPORTED)?;
        let who = credential::validate(&key, &cred)?;
        Ok(credential::validated_info(&who))
    }

    /// The cluster answers the namespaces it registered (the vector's job, its other jobs,
    /// the jobs spawned so far), in name order; it knows nothing else a query may ask.
    async fn query(&self, proc: Proc, queries: Vec<Query>) -> Result<Vec<Info>, Status> {
        let mut seen = self.upcall("pmix_server_query_fn_t").proc(&proc);
        for q in &queries {
            seen = seen.info(&q.qualifiers);
        }
        let keys: Vec<&str> = queries
            .iter()
            .flat_map(|q| q.keys.iter().flatten())
            .map(String::as_str)
            .collect();
        self.record(seen.asked(&keys));
        let namespaces = attr::QUERY_NAMESPACES.wire_key();
        let mut names: BTreeSet<String> = lock(&self.shared.spawned_jobs).clone();
        names.insert(self.shared.nspace.clone());
        names.extend(self.shared.other_jobs.keys().cloned());
        let list = names.into_iter().collect::<Vec<_>>().join(",");
        // One answer per query that asks, in query order.
        let answers: Vec<Info> = queries
            .iter()
            .filter(|q| q.keys.iter().flatten().any(|k| k == namespaces))
            .map(|_| Info::new(attr::QUERY_NAMESPACES, list.clone()))
            .collect();
        if answers.is_empty() {
            return Err(Status::ERR_NOT_FOUND);
        }
        Ok(answers)
    }

    /// The cluster is the vector's nodes: a new allocation of at most that many nodes is
    /// granted an id; extending, releasing or reacquiring names a granted one.
    async fn allocate(
        &self,
        proc: Proc,
        directive: AllocDirective,
        info: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let seen = self
            .upcall("pmix_server_alloc_fn_t")
            .proc(&proc)
            .info(&info);
        self.record(seen.detail(format!("directive {}", directive.0)));
        let capacity = control::Capacity {
            nodes: self.shared.nodes as u64,
            cpus: None,
        };
        lock(&self.shared.allocations).request(&self.shared.nspace, capacity, directive, &info)
    }

    /// A request the standard's directives allow, for ranks of the job, is accepted: a kill
    /// (SIGKILL), a termination (SIGTERM) or either signal asked for by number ends the
    /// targets other than the requester (`ClusterHost::end`); a checkpoint without a
    /// signal is the `PMIX_JCTRL_CHECKPOINT` event to its targets; other signals, pausing,
    /// resuming and cleanups are accepted and not carried out. Restarting from a checkpoint
    /// and provisioning need what the harness does not have.
    async fn job_control(
        &self,
        proc: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        use control::Control;
        let seen = self.upcall("pmix_server_job_control_fn_t").proc(&proc);
        self.record(seen.procs(&targets).info(&directives));
        let actions = control::job_control(&directives)?;
        if actions
            .iter()
            .any(|a| matches!(a, Control::Restart(_) | Control::Provision { .. }))
        {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let known = |p: &Proc| {
            p.nspace.as_str() == self.shared.nspace
                && (p.rank == Rank::WILDCARD || self.shared.node_of.contains_key(&p.rank.0))
        };
        if !targets.iter().all(known) {
            return Err(Status::ERR_NOT_FOUND);
        }
        let targets = if targets.is_empty() {
            vec![Proc::new(proc.nspace.clone(), Rank::WILDCARD)]
        } else {
            targets
        };
        for action in &actions {
            let signal = match action {
                Control::Kill => SIGKILL,
                Control::Terminate => SIGTERM,
                Control::Signal(s) if *s == SIGKILL || *s == SIGTERM => *s,
                _ => continue,
            };
            self.end(&proc, &targets, signal).await?;
        }
        for id in actions.iter().filter_map(Control::checkpoint_by_event) {
            let info = control::checkpoint_event(targets.clone(), id);
            let servers: Vec<Arc<dyn NodeServer>> = lock(&self.shared.servers).clone();
            for server in servers {
                let event = Event {
                    status: Status::JCTRL_CHECKPOINT,
                    source: Proc::new(Nspace::default(), Rank::UNDEF),
                    range: DataRange::CUSTOM,
                    info: info.clone(),
                };
                server.notify(event).await?;
            }
        }
        Ok(Vec::new())
    }

    /// Heartbeat monitors are watched (`ClusterHost::watch`) and beats counted; file
    /// monitors are accepted and not carried out.
    async fn monitor(
        &self,
        proc: Proc,
        monitor: Info,
        error: Status,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let seen = self.upcall("pmix_server_monitor_fn_t").proc(&proc);
        let seen = seen.info(std::slice::from_ref(&monitor)).info(&directives);
        self.record(seen.detail(format!("error {error:?}")));
        let mut beats = lock(&self.shared.heartbeats);
        match control::monitor(&monitor, &directives)? {
            control::Monitor::Heartbeat { period_s, drops } => {
                let watch = beats.entry(proc.clone()).or_insert((0, 0));
                watch.1 += 1;
                let generation = watch.1;
                let host = ClusterHost {
                    node: self.node,
                    shared: self.shared.clone(),
                };
                tokio::spawn(async move {
                    host.watch(proc, generation, period_s, drops, error).await;
                });
            }
            control::Monitor::Beat => {
                beats.get_mut(&proc).ok_or(Status::ERR_NOT_FOUND)?.0 += 1;
            }
            control::Monitor::Cancel(_) => {
                beats.remove(&proc);
            }
            // Accepted: the harness watches no files (`pmixrun` does).
            control::Monitor::File(_) => {}
        }
        Ok(Vec::new())
    }

    /// A collective of the participants' nodes; the set is then connected.
    async fn connect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        self.record(
            self.upcall("pmix_server_connect_fn_t")
                .procs(&procs)
                .info(&info),
        );
        self.collective("connect", &procs, Vec::new()).await?;
        lock(&self.shared.connected).insert(sorted(procs));
        Ok(())
    }

    /// A collective of the participants' nodes, for a set connected before: the host
    /// refuses any other with `PMIX_ERR_INVALID_OPERATION` (v5.0 §12.3.3), as a library
    /// that leaves the check to its host (OpenPMIx 4.2) needs.
    async fn disconnect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        self.record(
            self.upcall("pmix_server_disconnect_fn_t")
                .procs(&procs)
                .info(&info),
        );
        let set = sorted(procs);
        if !lock(&self.shared.connected).contains(&set) {
            return Err(Status::ERR_INVALID_OPERATION);
        }
        self.collective("disconnect", &set, Vec::new()).await?;
        lock(&self.shared.connected).remove(&set);
        Ok(())
    }

    /// The harness's one fabric: `vfabric` of vendor `vvendor` on plane `10.0.0.0/8`, index
    /// 0, one device per node (`vnic` on each). A registration that names another fabric is
    /// `PMIX_ERR_NOT_FOUND`, as is an update of another index.
    async fn fabric(
        &self,
        proc: Proc,
        op: FabricOperation,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let seen = self
            .upcall("pmix_server_fabric_fn_t")
            .proc(&proc)
            .info(&directives);
        self.record(seen.detail(format!("operation {}", op.0)));
        const ID: &str = "vfabric";
        const VENDOR: &str = "vvendor";
        const PLANE: &str = "10.0.0.0/8";
        let name = FabricName {
            index: 0,
            identifier: ID,
            vendor: Some(VENDOR),
            plane: Some(PLANE),
        };
        let known = name.asked_by(op, &directives);
        if !known {
            return Err(Status::ERR_NOT_FOUND);
        }
        // Each device is a PMIX_FABRIC_DEVICE info of its own attributes (§15.3).
        let devices: Vec<Info> = self
            .shared
            .node_names
            .iter()
            .enumerate()
            .map(|(i, node)| {
                let device = vec![
                    Info::new(attr::FABRIC_DEVICE_NAME, "vnic".to_owned()),
                    Info::new(attr::FABRIC_DEVICE_INDEX, u32::try_from(i).unwrap_or(0)),
                    Info::new(attr::HOSTNAME, node.clone()),
                ];
                Info::new(attr::FABRIC_DEVICE, DataArray::of_infos(device))
            })
            .collect();
        Ok(vec![
            Info::new(attr::FABRIC_INDEX, 0usize),
            Info::new(attr::FABRIC_IDENTIFIER, ID.to_owned()),
            Info::new(attr::FABRIC_VENDOR, VENDOR.to_owned()),
            Info::new(attr::FABRIC_PLANE, PLANE.to_owned()),
            Info::new(attr::FABRIC_NUM_DEVICES, devices.len()),
            Info::new(attr::FABRIC_DEVICES, DataArray::of_infos(devices)),
        ])
    }

    /// A group operation is a collective of its members' nodes; a construction that asks for
    /// a context id gets the next one, the same at every node (forgotten at destruct, so a
    /// name used again gets a new one).
    async fn group(
        &self,
        op: GroupOperation,
        group: String,
        procs: Vec<Proc>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let seen = self
            .upcall("pmix_server_grp_fn_t")
            .procs(&procs)
            .info(&directives);
        self.record(seen.detail(format!("operation {} group {group}", op.0)));
        let kind = format!("group {} {group}", op.0);
        self.collective(&kind, &procs, Vec::new()).await?;
        let wants_id = Info::flag(&directives, attr::GROUP_ASSIGN_CONTEXT_ID);
        let mut ids = lock(&self.shared.context_ids);
        if op == GroupOperation::DESTRUCT {
            ids.1.remove(&group);
            return Ok(Vec::new());
        }
        if !wants_id {
            return Ok(Vec::new());
        }
        let next = ids.0 + 1;
        let id = *ids.1.entry(group).or_insert(next);
        ids.0 = ids.0.max(id);
        Ok(vec![Info::new(attr::GROUP_CONTEXT_ID, id)])
    }

    async fn direct_modex(&self, proc: Proc, info: Vec<Info>) -> Result<Vec<u8>, Status> {
        self.record(
            self.upcall("pmix_server_dmodex_req_fn_t")
                .proc(&proc)
                .info(&info),
        );
        if !self.shared.direct_modex {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        if proc.nspace.as_str() != self.shared.nspace {
            // Another job's information (rule R-05): registered with this node's server,
            // which then answers from it. Its processes run nowhere: no data of theirs to
            // fetch (rule R-06).
            let info = (self.shared.other_jobs.get(proc.nspace.as_str()))
                .filter(|_| proc.rank == Rank::WILDCARD)
                .ok_or(Status::ERR_NOT_FOUND)?;
            let server = lock(&self.shared.servers)
                .get(self.node)
                .cloned()
                .ok_or(Status::ERR_NOT_FOUND)?;
            server
                .register_job(proc.nspace.clone(), info.clone())
                .await?;
            return Ok(Vec::new());
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
        server.dmodex(proc, info).await
    }

    /// Accepted: the cluster raises the environmental events it knows of (a process's
    /// termination) to every job whatever was asked, and records the request.
    async fn register_events(&self, codes: Vec<Status>, info: Vec<Info>) -> Result<(), Status> {
        let seen = self.upcall("pmix_server_register_events_fn_t");
        self.record(seen.codes(&codes).info(&info));
        Ok(())
    }

    async fn deregister_events(&self, codes: Vec<Status>) -> Result<(), Status> {
        self.record(
            self.upcall("pmix_server_deregister_events_fn_t")
                .codes(&codes),
        );
        Ok(())
    }

    /// Relay a local process's event to every other node; each node's server picks the
    /// processes in range.
    async fn notify_event(
        &self,
        status: Status,
        source: Proc,
        range: DataRange,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let seen = self
            .upcall("pmix_server_notify_event_fn_t")
            .proc(&source)
            .info(&info);
        self.record(seen.detail(format!("status {status:?} range {}", range.0)));
        let others: Vec<Arc<dyn NodeServer>> = lock(&self.shared.servers)
            .iter()
            .enumerate()
            .filter(|(n, _)| *n != self.node)
            .map(|(_, s)| s.clone())
            .collect();
        for server in others {
            let event = Event {
                status,
                source: source.clone(),
                range,
                info: info.clone(),
            };
            server.notify(event).await?;
        }
        Ok(())
    }

    /// The library's own logging to the local channels, as a host without channels of its
    /// own has it.
    async fn log(
        &self,
        proc: Proc,
        timestamp: i64,
        data: Vec<Info>,
        directives: Vec<Info>,
    ) -> Result<(), Status> {
        let seen = self.upcall("pmix_server_log_fn_t").proc(&proc).info(&data);
        self.record(
            seen.info(&directives)
                .detail(format!("timestamp {timestamp}")),
        );
        // The harness runs under tokio, never under the simulator.
        #[allow(clippy::disallowed_methods)]
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        pmix::host::log::write_local(&proc, timestamp, now, &data, &directives)
    }

    /// The cluster has no tool support: tools that bring their own identifier are left to
    /// the server, the others refused.
    async fn tool_connected(&self, info: Vec<Info>) -> Result<Proc, Status> {
        self.record(self.upcall("pmix_server_tool_connection_fn_t").info(&info));
        Err(Status::ERR_NOT_SUPPORTED)
    }

    async fn publish(&self, proc: Proc, info: Vec<Info>) -> Result<(), Status> {
        self.record(
            self.upcall("pmix_server_publish_fn_t")
                .proc(&proc)
                .info(&info),
        );
        if !self.shared.publish {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        self.shared.published.publish(&proc, &info)
    }

    async fn lookup(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<Vec<PData>, Status> {
        let seen = self
            .upcall("pmix_server_lookup_fn_t")
            .proc(&proc)
            .info(&info);
        self.record(seen.asked(&keys));
        if !self.shared.publish {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let topology = self.shared.as_ref();
        self.shared
            .published
            .lookup(&proc, &keys, &info, topology)
            .await
    }

    async fn unpublish(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let seen = self
            .upcall("pmix_server_unpublish_fn_t")
            .proc(&proc)
            .info(&info);
        self.record(seen.asked(&keys));
        if !self.shared.publish {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        self.shared.published.unpublish(&proc, &keys, &info);
        Ok(())
    }
}

/// The signals the host carries out (their numbers are the same on every Unix).
const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;

impl ClusterHost {
    /// An upcall of this node, to describe and [`ClusterHost::record`].
    fn upcall(&self, name: &'static str) -> HostUpcall {
        HostUpcall::new(self.node, name)
    }

    fn record(&self, upcall: HostUpcall) {
        self.shared.upcalls.record(upcall);
    }

    /// End the ranks of the vector's job that `targets` name (a wildcard: every rank), other
    /// than `requester`, with `signal`, each before the next; then announce each end to the
    /// job: `PMIX_EVENT_PROC_TERMINATED` naming it as `PMIX_EVENT_AFFECTED_PROC`, from the
    /// host, at every node (v5.0 §18.4.4.1: the event is the host's to give; this one gives it
    /// unasked). Ranks not running (never started, ended before) are left as they are.
    async fn end(&self, requester: &Proc, targets: &[Proc], signal: i32) -> Result<(), Status> {
        let job = Nspace::new(&self.shared.nspace).map_err(|_| Status::ERR_BAD_PARAM)?;
        let mut ranks = BTreeSet::new();
        for t in targets.iter().filter(|t| t.nspace == job) {
            if t.rank == Rank::WILDCARD {
                ranks.extend(self.shared.node_of.keys().copied());
            } else {
                ranks.insert(t.rank.0);
            }
        }
        if requester.nspace == job {
            ranks.remove(&requester.rank.0);
        }
        let Some(ender) = lock(&self.shared.ender).clone() else {
            return Ok(());
        };
        for rank in ranks {
            if !ender.end(rank, signal).await {
                continue;
            }
            let ended = Proc::new(job.clone(), Rank(rank));
            let audience = DataArray::of_procs(vec![Proc::new(job.clone(), Rank::WILDCARD)]);
            let info = vec![
                Info::new(attr::EVENT_CUSTOM_RANGE, audience),
                Info::new(attr::EVENT_AFFECTED_PROC, ended),
            ];
            let servers: Vec<Arc<dyn NodeServer>> = lock(&self.shared.servers).clone();
            for server in servers {
                let event = Event {
                    status: Status::EVENT_PROC_TERMINATED,
                    source: Proc::new(Nspace::default(), Rank::UNDEF),
                    range: DataRange::CUSTOM,
                    info: info.clone(),
                };
                server.notify(event).await?;
            }
        }
        Ok(())
    }

    /// Watch `proc`'s heartbeat under the request `generation`: every `period_s` seconds,
    /// look for a beat since the last look; after `drops` looks in a row without one (at
    /// least one), raise `error`, the request's status, to the job with the silent process as
    /// `PMIX_EVENT_AFFECTED_PROC` (v5.0 §13.3.1, §13.3.4), once. The watch ends then, or when
    /// it is cancelled or replaced.
    async fn watch(&self, proc: Proc, generation: u64, period_s: u32, drops: u32, error: Status) {
        let period = std::time::Duration::from_secs(u64::from(period_s.max(1)));
        let mut seen = 0;
        let mut missed = 0;
        while missed < drops.max(1) {
            tokio::time::sleep(period).await;
            let beats = match lock(&self.shared.heartbeats).get(&proc) {
                Some((beats, g)) if *g == generation => *beats,
                _ => return,
            };
            if beats > seen {
                seen = beats;
                missed = 0;
            } else {
                missed += 1;
            }
        }
        let audience = DataArray::of_procs(vec![Proc::new(proc.nspace.clone(), Rank::WILDCARD)]);
        let info = vec![
            Info::new(attr::EVENT_CUSTOM_RANGE, audience),
            Info::new(attr::EVENT_AFFECTED_PROC, proc.clone()),
        ];
        let servers: Vec<Arc<dyn NodeServer>> = lock(&self.shared.servers).clone();
        for server in servers {
            let event = Event {
                status: error,
                source: Proc::new(Nspace::default(), Rank::UNDEF),
                range: DataRange::CUSTOM,
                info: info.clone(),
            };
            if server.notify(event).await.is_err() {
                return;
            }
        }
    }

    /// One round of a collective among the nodes hosting `procs`: each node brings `data`,
    /// and all get every node's data, in node order. Rounds are counted per kind and set.
    async fn collective(
        &self,
        kind: &str,
        procs: &[Proc],
        data: Vec<u8>,
    ) -> Result<Vec<u8>, Status> {
        let mut sorted = procs.to_vec();
        sorted.sort();
        let key = format!("{kind} {sorted:?}");
        let expected = self.shared.nodes_of(procs);
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
}

/// What the host passes `node`'s `PMIx_server_init`: the harness's own server identity
/// (`vserver-NODE`, rank 0), its temporary directory `tmpdir` as both the server's and the
/// system's, the node's name as `PMIX_HOSTNAME`, then the vector's `setup.server_info` (a key
/// given there replaces the harness's).
pub fn server_init_info(v: &Vector, node: &str, tmpdir: &Path) -> Result<Vec<Info>, String> {
    let tmpdir = tmpdir.display().to_string();
    let mut out = vec![
        info(
            attr::SERVER_TMPDIR.wire_key(),
            Value::string(tmpdir.clone()),
        ),
        info(attr::SYSTEM_TMPDIR.wire_key(), Value::string(tmpdir)),
        info(
            attr::SERVER_NSPACE.wire_key(),
            Value::string(format!("vserver-{node}")),
        ),
        info(attr::SERVER_RANK.wire_key(), Value::Rank(Rank(0))),
        info(attr::HOSTNAME.wire_key(), Value::string(node.to_owned())),
    ];
    for i in &v.setup.server_info {
        let i = i.to_info(&v.setup.nspace)?;
        out.retain(|o| o.key != i.key);
        out.push(i);
    }
    Ok(out)
}

/// Start this crate's server for every node of the vector, in this process, with the job and
/// its ranks registered, and make them the cluster's node servers. `dir` gives a node's
/// temporary directory; `tcp` makes each listen on TCP loopback (what OpenPMIx clients use).
pub async fn start_rust_servers(
    v: &Vector,
    shared: &Arc<Shared>,
    dir: impl Fn(&str) -> Result<std::path::PathBuf, String>,
    tcp: bool,
) -> Result<Vec<Arc<Server>>, Problem> {
    use pmix::model::Nspace;
    use pmix::server::ServerConfig;
    let info = registration(v)?;
    let nspace = Nspace::new(&v.setup.nspace).map_err(|e| e.to_string())?;
    let (uid, gid) = pmix::transport::uid_gid();
    let mut servers = Vec::new();
    for (i, node) in v.setup.nodes.iter().enumerate() {
        let init = server_init_info(v, &node.name, &dir(&node.name)?)?;
        let mut config = ServerConfig::from_info(&init).map_err(|(status, e)| {
            Problem::Refused(format!("server of {} ({status:?}): {e}", node.name))
        })?;
        config.tcp = tcp;
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
            .map_err(|e| Problem::Refused(format!("register_nspace on {}: {e}", node.name)))?;
        for r in &node.ranks {
            server
                .register_client(Proc::new(nspace.clone(), Rank(*r)), uid, gid)
                .await
                .map_err(|e| Problem::Refused(format!("register_client: {e}")))?;
        }
        for (other, info) in v.jobs_on(&node.name)? {
            let other = Nspace::new(&other).map_err(|e| e.to_string())?;
            server.register_nspace(other, info).await.map_err(|e| {
                Problem::Refused(format!(
                    "register_nspace of another job on {}: {e}",
                    node.name
                ))
            })?;
        }
        servers.push(Arc::new(server));
    }
    *lock(&shared.servers) = servers
        .iter()
        .map(|s| Arc::new(s.clone()) as Arc<dyn NodeServer>)
        .collect();
    Ok(servers)
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
pub fn registration(v: &Vector) -> Result<Vec<Info>, String> {
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

/// `procs` in order, the form a connected set is recorded in.
fn sorted(mut procs: Vec<Proc>) -> Vec<Proc> {
    procs.sort();
    procs
}
