//! One virtual node: its PMIx server (the real `pmix::server::Server`), its daemon as the
//! server's host, and its client processes (real `pmix::client::Client`s) connected through
//! the library's in-memory transport.
//!
//! Each client runs the wire-up every PMIx application starts with, in the phases of the
//! run's [`Workload`]: init (and register for failure events), put a value only it knows,
//! commit, fence (collecting everyone's data, or not, as [`Modex`] says), get the value of a
//! rank on another node and check it is exactly what that rank put, stay until the
//! workload's end to hear of failures, finalize. What each step gave is recorded on the
//! [`Observer`]; the run's invariants are checked on that record (`crate::check`).
//!
//! A node crashes as a whole (daemon, server and clients end at once) and a client can be
//! killed alone; both come from the fault schedule through [`Control`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pmix::client::Client;
use pmix::codec::BufferType;
use pmix::model::{App, DataArray, Info, Nspace, Proc, Rank, Scope, Status, Value, attr};
use pmix::server::{CredentialKey, Server, ServerConfig};
use pmix::transport::{MemoryConnector, PeerCred, uid_gid};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::cluster::Layout;
use crate::daemon::{Daemon, Launch, Setup};
use crate::{Modex, Observer, Step, Workload, now};

/// The key every rank puts.
pub(crate) const KEY: &str = "sim.wireup";

/// The key rank `rank` publishes.
pub(crate) fn published_key(rank: u32) -> String {
    format!("sim.pub.{rank}")
}

/// The value rank `rank` puts: derived from the run's seed, so a wrong or stale value cannot
/// pass for it.
pub(crate) fn value_of(seed: u64, rank: u32) -> String {
    format!("seed{seed:x}.rank{rank}")
}

/// What the fault schedule does to a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Control {
    /// The whole node stops: daemon, server, clients.
    Crash,
    /// One client process dies; its daemon sees it go.
    Kill(u32),
}

/// Start node `setup.node`: daemon, server, job registration, clients, and the agent that
/// carries out [`Control`]s. Everything runs on the rack's runtime until the node crashes. A
/// node that restarts (`setup.incarnation` above 0) comes back without the job's processes,
/// which died with it: its server knows the job but has no clients.
pub(crate) async fn start(
    setup: Setup,
    seed: u64,
    workload: Workload,
    controls: mpsc::UnboundedReceiver<Control>,
) -> Result<(), String> {
    let node = setup.node;
    let setup_incarnation = setup.incarnation;
    let (layout, nspace, observer) = (
        setup.layout.clone(),
        setup.nspace.clone(),
        setup.observer.clone(),
    );
    let modex = if setup.direct_modex {
        Modex::Direct
    } else {
        Modex::Full
    };
    let daemon = Daemon::new(setup);
    daemon.start();
    observer.add_daemon(node, daemon.clone());

    let hostname = Layout::hostname(node);
    let mut config = ServerConfig::new(PathBuf::from("/nonexistent/pmix-sim"), hostname.clone());
    config.id = Proc::try_new(&format!("pmix-sim.{hostname}"), 0).map_err(|e| e.to_string())?;
    config.tcp = false;
    config.unix_socket = false;
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..12].copy_from_slice(&node.to_le_bytes());
    config.credential_key = Some(CredentialKey(key));
    let server = Server::start(config, daemon.clone())
        .await
        .map_err(|e| format!("node {node}: server: {e}"))?;
    let server = Arc::new(server);
    daemon.set_server(&server);
    let (acceptor, connector) = pmix::transport::memory();
    server.serve(acceptor);
    server
        .register_nspace(
            nspace.clone(),
            job_info(
                node,
                layout.job_size(),
                layout.nodes,
                &ranks_here(&layout, node, setup_incarnation).collect::<Vec<_>>(),
                None,
            ),
        )
        .await
        .map_err(|e| format!("node {node}: register_nspace: {e}"))?;
    let (uid, gid) = uid_gid();
    let ranks = ranks_here(&layout, node, setup_incarnation);
    for rank in ranks.clone() {
        let proc = Proc::new(nspace.clone(), Rank(rank));
        server
            .register_client(proc, uid, gid)
            .await
            .map_err(|e| format!("node {node}: register_client: {e}"))?;
    }
    let connector = Arc::new(connector);
    let mut clients = BTreeMap::new();
    for rank in ranks {
        let proc = Proc::new(nspace.clone(), Rank(rank));
        let c = connector.clone();
        let obs = observer.clone();
        let (l, w) = (layout.clone(), workload.clone());
        let task = tokio::spawn(async move {
            let outcome = wire_up(&c, proc.clone(), &l, seed, modex, &w, (uid, gid), &obs).await;
            obs.client_done(proc.rank.0, outcome);
        });
        clients.insert(rank, task.abort_handle());
    }
    let (launcher, launches) = mpsc::unbounded_channel();
    daemon.set_launcher(launcher);
    let agent = Agent {
        node,
        daemon,
        server: Some(server),
        connector,
        seed,
        clients,
        children: BTreeMap::new(),
        ready: BTreeMap::new(),
        connect: workload.connect,
        observer,
    };
    tokio::spawn(agent.run(controls, launches));
    Ok(())
}

/// Carries out the fault schedule's orders for one node, and starts and stops the processes
/// of spawned jobs (the node's launcher).
struct Agent {
    node: u32,
    daemon: Daemon,
    server: Option<Arc<Server>>,
    connector: Arc<MemoryConnector>,
    seed: u64,
    clients: BTreeMap<u32, AbortHandle>,
    /// Processes of spawned jobs, by namespace and rank: running, or ready and waiting for
    /// the word to run (with their job's size).
    children: BTreeMap<(Nspace, u32), AbortHandle>,
    ready: BTreeMap<Nspace, (Proc, Vec<u32>, u32)>,
    /// Whether spawned processes connect to their parent.
    connect: bool,
    observer: Arc<Observer>,
}

impl Agent {
    async fn run(
        mut self,
        mut controls: mpsc::UnboundedReceiver<Control>,
        mut launches: mpsc::UnboundedReceiver<Launch>,
    ) {
        loop {
            let c = tokio::select! {
                biased;
                c = controls.recv() => c,
                l = launches.recv() => {
                    if let Some(l) = l {
                        self.launch(l).await;
                    }
                    continue;
                }
            };
            let Some(c) = c else {
                return;
            };
            match c {
                Control::Crash => {
                    self.observer.record(self.node, b"crash");
                    self.observer.node_crashed(self.node);
                    self.daemon.crash();
                    for (rank, client) in std::mem::take(&mut self.clients) {
                        client.abort();
                        self.observer.killed(rank, false);
                    }
                    for ((nspace, rank), child) in std::mem::take(&mut self.children) {
                        child.abort();
                        self.observer.child_killed(&nspace, rank);
                    }
                    // The server's driver stops when its last handle goes.
                    self.server = None;
                    return;
                }
                Control::Kill(rank) => {
                    let Some(client) = self.clients.remove(&rank) else {
                        continue;
                    };
                    self.observer
                        .record(self.node, format!("kill {rank}").as_bytes());
                    client.abort();
                    self.observer.killed(rank, true);
                    self.daemon.local_proc_died(rank);
                }
            }
        }
    }
}

impl Agent {
    /// Start (registered with the server, then running) or stop a spawned job's local
    /// processes.
    async fn launch(&mut self, order: Launch) {
        match order {
            Launch::Go(nspace) => {
                if let Some((parent, ranks, size)) = self.ready.remove(&nspace) {
                    self.run_children(&nspace, &parent, &ranks, size);
                }
            }
            Launch::Halt(nspace) => {
                self.ready.remove(&nspace);
                let mine: Vec<(Nspace, u32)> = self
                    .children
                    .keys()
                    .filter(|(ns, _)| *ns == nspace)
                    .cloned()
                    .collect();
                for key in mine {
                    if let Some(child) = self.children.remove(&key) {
                        child.abort();
                        self.observer.child_killed(&key.0, key.1);
                    }
                }
            }
            Launch::Start {
                nspace,
                parent,
                placement,
                ranks,
                done,
            } => {
                let started = self
                    .start_children(&nspace, &parent, &placement, &ranks)
                    .await;
                let _ = done.send(started);
            }
        }
    }

    async fn start_children(
        &mut self,
        nspace: &Nspace,
        parent: &Proc,
        placement: &[u32],
        ranks: &[u32],
    ) -> Result<(), Status> {
        let server = self
            .server
            .clone()
            .ok_or(Status::ERR_JOB_FAILED_TO_LAUNCH)?;
        let mut nodes = placement.to_vec();
        nodes.sort_unstable();
        nodes.dedup();
        let size = u32::try_from(placement.len()).unwrap_or(u32::MAX);
        let count = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
        let info = job_info(self.node, size, count, ranks, Some(parent));
        server
            .register_nspace(nspace.clone(), info)
            .await
            .map_err(|_| Status::ERR_JOB_FAILED_TO_LAUNCH)?;
        let (uid, gid) = uid_gid();
        for &rank in ranks {
            let proc = Proc::new(nspace.clone(), Rank(rank));
            server
                .register_client(proc, uid, gid)
                .await
                .map_err(|_| Status::ERR_JOB_FAILED_TO_LAUNCH)?;
        }
        let size = u32::try_from(placement.len()).unwrap_or(u32::MAX);
        self.ready
            .insert(nspace.clone(), (parent.clone(), ranks.to_vec(), size));
        Ok(())
    }

    fn run_children(&mut self, nspace: &Nspace, parent: &Proc, ranks: &[u32], size: u32) {
        let (uid, gid) = uid_gid();
        for &rank in ranks {
            let proc = Proc::new(nspace.clone(), Rank(rank));
            self.observer.child_started(nspace, rank, self.node);
            let (c, obs, seed) = (self.connector.clone(), self.observer.clone(), self.seed);
            let parent = self.connect.then(|| parent.clone());
            let task = tokio::spawn(async move {
                let outcome = child(&c, proc.clone(), size, seed, (uid, gid), parent, &obs).await;
                obs.child_done(&proc.nspace, rank, outcome);
            });
            self.children
                .insert((nspace.clone(), rank), task.abort_handle());
        }
    }
}

/// The group step of the workload: construct the group of the whole job with a context id
/// (and, when asked, termination notices), fence by its id, destruct it; record each
/// outcome.
async fn group_work(
    client: &Client,
    me: &Proc,
    size: u32,
    workload: &Workload,
    observer: &Observer,
) {
    let rank = me.rank.0;
    // Named rank by rank with termination notices, as the whole job otherwise.
    let everyone: Vec<Proc> = if workload.group_notify {
        (0..size)
            .map(|r| Proc::new(me.nspace.clone(), Rank(r)))
            .collect()
    } else {
        vec![Proc::new(me.nspace.clone(), Rank::WILDCARD)]
    };
    let mut info = vec![Info::new(attr::GROUP_ASSIGN_CONTEXT_ID, true)];
    if let Some(t) = workload.group_timeout_s {
        info.push(Info::new(
            attr::TIMEOUT,
            i32::try_from(t).unwrap_or(i32::MAX),
        ));
    }
    let mut asked = info.clone();
    if workload.group_notify {
        asked.push(Info::new(attr::GROUP_NOTIFY_TERMINATION, true));
    }
    if workload.group_ft {
        asked.push(Info::new(attr::GROUP_FT_COLLECTIVE, true));
    }
    if workload.group_leader == Some(rank) {
        asked.push(Info::new(attr::GROUP_LEADER, true));
    }
    let built = client
        .group_construct(crate::GROUP, &everyone, &asked)
        .await;
    let cid = |r: &[Info]| {
        r.iter()
            .find_map(|i| i.get(attr::GROUP_CONTEXT_ID))
            .and_then(|c| u64::try_from(c).ok())
    };
    let built = built.map(|formed| cid(&formed.results));
    observer.grouped(rank, "construct", built.clone());
    if built.is_err() {
        return;
    }
    let Ok(id) = Proc::try_new(crate::GROUP, Rank::WILDCARD) else {
        return;
    };
    let fenced = client.fence(&[id], &info[1..]).await;
    observer.grouped(rank, "fence", fenced.map(|()| None));
    let destructed = client.group_destruct(crate::GROUP, &info[1..]).await;
    observer.grouped(rank, "destruct", destructed.map(|()| None));
}

/// The invitation step of the workload: rank 0 invites the others into `INVITED`, each
/// accepts once invited (an invitation that never comes counts as `PMIX_ERR_TIMEOUT`); the
/// members fence by the group's id and destruct it. Each outcome is recorded.
async fn invitation_work(
    client: &Client,
    me: &Proc,
    size: u32,
    workload: &Workload,
    observer: &Observer,
    invitations: Option<mpsc::UnboundedReceiver<Proc>>,
) {
    let rank = me.rank.0;
    let timeout_s = workload.group_timeout_s.unwrap_or(10);
    let formed = match invitations {
        None => {
            let others: Vec<Proc> = (1..size)
                .map(|r| Proc::new(me.nspace.clone(), Rank(r)))
                .collect();
            let timeout = i32::try_from(timeout_s).unwrap_or(i32::MAX);
            let info = [Info::new(attr::TIMEOUT, timeout)];
            let invited =
                (client.group_invite(crate::INVITED, &others, &info).await).and_then(whole_group);
            observer.grouped(rank, "invite", invited.clone().map(|()| None));
            invited
        }
        Some(mut rx) => {
            let wait = Duration::from_secs(u64::from(timeout_s));
            let joined = match tokio::time::timeout(wait, rx.recv()).await {
                Ok(Some(leader)) => {
                    let accept = pmix::client::GroupAnswer::Accept;
                    (client
                        .group_join(crate::INVITED, &leader, accept, &[])
                        .await)
                        .and_then(whole_group)
                }
                _ => Err(Status::ERR_TIMEOUT.into()),
            };
            observer.grouped(rank, "join", joined.clone().map(|()| None));
            joined
        }
    };
    if formed.is_err() {
        return;
    }
    let Ok(id) = Proc::try_new(crate::INVITED, Rank::WILDCARD) else {
        return;
    };
    let fenced = client.fence(&[id], &[]).await;
    observer.grouped(rank, "invited fence", fenced.map(|()| None));
    let destructed = client.group_destruct(crate::INVITED, &[]).await;
    observer.grouped(rank, "invited destruct", destructed.map(|()| None));
}

/// An invitation or a join that formed the group of every process invited; one formed
/// short of some (`PMIX_ERR_PARTIAL_SUCCESS`) ends the workload's group phase as an error.
fn whole_group(formed: pmix::client::GroupConstructed) -> Result<(), pmix::Error> {
    if formed.status == Status::SUCCESS {
        Ok(())
    } else {
        Err(formed.status.into())
    }
}

/// Who takes part in a connect between a parent and the job it spawned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Party {
    Parent(u32),
    Child(u32),
}

/// Connect `parent` and the spawned job `job` (`PMIx_Connect`, the way `MPI_Comm_spawn`
/// joins the two), then, if that worked, disconnect them; record both outcomes. The
/// parent, which knows the job's size (`size`), reads it as job information once connected.
async fn connect_to(
    client: &Client,
    parent: &Proc,
    job: &Nspace,
    who: Party,
    size: Option<u32>,
    observer: &Observer,
) {
    let procs = [parent.clone(), Proc::new(job.clone(), Rank::WILDCARD)];
    let connected = client.connect(&procs, &[]).await;
    observer.connected(job, who, "connect", connected.clone());
    if let (Ok(()), Some(want)) = (&connected, size) {
        // Connected, the parent reads the job information of the job it spawned (§12.3.1).
        let size = client
            .get(Some(&procs[1]), attr::JOB_SIZE.wire_key(), &[])
            .await;
        let read = match size.map(|v| v.to_u64()) {
            Ok(Some(n)) if n == u64::from(want) => Ok(()),
            Ok(_) => Err(Status::ERR_BAD_PARAM),
            Err(e) => Err(e.status()),
        };
        observer.connected(job, who, "job info", read);
    }
    if connected.is_ok() {
        let disconnected = client.disconnect(&procs, &[]).await;
        observer.connected(job, who, "disconnect", disconnected);
    }
}

/// The value a spawned process puts.
fn child_value(seed: u64, nspace: &Nspace, rank: u32) -> String {
    format!("seed{seed:x}.{}.rank{rank}", nspace.as_str())
}

/// What a spawned process runs: init, put, commit, fence over its job with the job's data,
/// get the next rank's value (checked), finalize. `Err` only for what must never happen
/// (a wrong value, a failed init); a failed fence is recorded for the invariants.
async fn child(
    connector: &MemoryConnector,
    me: Proc,
    size: u32,
    seed: u64,
    (uid, gid): (u32, u32),
    parent: Option<Proc>,
    observer: &Observer,
) -> Result<Option<Status>, String> {
    let rank = me.rank.0;
    let who = format!("{}.{rank}", me.nspace.as_str());
    let client = init(connector, &me, (uid, gid))
        .await
        .map_err(|e| format!("{who}: init: {e}"))?;
    client
        .put(
            Scope::GLOBAL,
            KEY,
            Value::string(child_value(seed, &me.nspace, rank)),
        )
        .map_err(|s| format!("{who}: put: {s:?}"))?;
    client
        .commit()
        .await
        .map_err(|s| format!("{who}: commit: {s:?}"))?;
    let collect = [Info::new(attr::COLLECT_DATA, true)];
    if let Err(s) = client.fence(&[], &collect).await {
        observer.record(
            u32::MAX,
            format!("{who} fenced {}", s.status().0).as_bytes(),
        );
        if let Some(parent) = parent {
            // Still join the connect, as the parent does: it fails everywhere alike.
            connect_to(
                &client,
                &parent,
                &me.nspace,
                Party::Child(rank),
                None,
                observer,
            )
            .await;
        }
        let _ = client.finalize().await;
        return Ok(Some(s.status()));
    }
    if let Some(parent) = &parent {
        connect_to(
            &client,
            parent,
            &me.nspace,
            Party::Child(rank),
            None,
            observer,
        )
        .await;
    }
    let peer = Proc::new(me.nspace.clone(), Rank((rank + 1) % size));
    let got = client
        .get(Some(&peer), KEY, &[])
        .await
        .map_err(|s| format!("{who}: get: {s:?}"))?;
    let want = child_value(seed, &me.nspace, peer.rank.0);
    if got.as_str() != Some(want.as_str()) {
        return Err(format!(
            "{who}: rank {} holds {got:?}, not {want:?}",
            peer.rank.0
        ));
    }
    client
        .finalize()
        .await
        .map_err(|s| format!("{who}: finalize: {s:?}"))?;
    Ok(None)
}

/// The job's processes on `node` in its `incarnation`: those the layout puts there, until the
/// node restarts without them.
fn ranks_here(layout: &Layout, node: u32, incarnation: u32) -> std::ops::Range<u32> {
    if incarnation == 0 {
        layout.ranks_of(node)
    } else {
        0..0
    }
}

/// A job's information as one node's server holds it: job-level facts, this node's, and
/// those of its processes of the job (`ranks`); a spawned job's names its `parent`
/// (`PMIX_PARENT_ID`, and `PMIX_SPAWNED` for each process).
pub(crate) fn job_info(
    node: u32,
    size: u32,
    nodes: u32,
    ranks: &[u32],
    parent: Option<&Proc>,
) -> Vec<Info> {
    let local: Vec<String> = ranks.iter().map(u32::to_string).collect();
    let local_size = u32::try_from(local.len()).unwrap_or(u32::MAX);
    let hostname = Layout::hostname(node);
    let mut node_info = vec![
        Info::new(attr::HOSTNAME, hostname.clone()),
        Info::new(attr::NODEID, node),
        Info::new(attr::LOCAL_PEERS, local.join(",")),
        Info::new(attr::LOCAL_SIZE, local_size),
        Info::new(attr::NODE_SIZE, local_size),
    ];
    if let Some(&first) = ranks.first() {
        node_info.push(Info::new(attr::LOCALLDR, Rank(first)));
    }
    let mut out = vec![
        Info::new(attr::JOB_SIZE, size),
        Info::new(attr::MAX_PROCS, size),
        Info::new(attr::NUM_NODES, nodes),
        Info::new(attr::JOB_NUM_APPS, 1u32),
        Info::new(attr::NODE_INFO_ARRAY, DataArray::of_infos(node_info)),
    ];
    if let Some(p) = parent {
        out.push(Info::new(attr::PARENT_ID, p.clone()));
    }
    for (place, &rank) in ranks.iter().enumerate() {
        let place = u16::try_from(place).unwrap_or(u16::MAX);
        let mut proc_info = vec![
            Info::new(attr::RANK, Rank(rank)),
            Info::new(attr::LOCAL_RANK, place),
            Info::new(attr::NODE_RANK, place),
            Info::new(attr::HOSTNAME, hostname.clone()),
            Info::new(attr::NODEID, node),
        ];
        if let Some(p) = parent {
            proc_info.push(Info::new(attr::SPAWNED, true));
            proc_info.push(Info::new(attr::PARENT_ID, p.clone()));
        }
        out.push(Info::new(
            attr::PROC_INFO_ARRAY,
            DataArray::of_infos(proc_info),
        ));
    }
    out
}

/// The rank whose value `rank` reads after the fence: the same place on the next node (its
/// own node when there is only one).
pub(crate) fn peer_of(layout: &Layout, rank: u32) -> u32 {
    (rank + layout.clients) % layout.job_size()
}

/// A process of this node connects to its server (`PMIx_Init`).
async fn init(
    connector: &MemoryConnector,
    me: &Proc,
    (uid, gid): (u32, u32),
) -> Result<Client, String> {
    let peer = PeerCred::new(uid, gid);
    let stream = connector.connect(Some(peer)).map_err(|e| e.to_string())?;
    Client::init_over(stream, me.clone(), BufferType::NonDescribed)
        .await
        .map_err(|e| e.to_string())
}

/// Sleep until simulated time `at` (at once if it has passed).
async fn until(at: Duration) {
    let t = now();
    if at > t {
        tokio::time::sleep(at - t).await;
    }
}

/// An event a client's handler received: its status and the node or rank it concerns.
pub(crate) fn event_subject(status: Status, info: &[Info]) -> Option<u32> {
    if status == Status::EVENT_NODE_DOWN {
        info.iter().find_map(|i| i.get(attr::NODEID))
    } else {
        info.iter()
            .find_map(|i| i.get(attr::EVENT_AFFECTED_PROC))
            .map(|p| p.rank.0)
    }
}

#[allow(clippy::too_many_arguments)]
async fn wire_up(
    connector: &MemoryConnector,
    me: Proc,
    layout: &Layout,
    seed: u64,
    modex: Modex,
    workload: &Workload,
    (uid, gid): (u32, u32),
    observer: &Arc<Observer>,
) -> Result<(), String> {
    let rank = me.rank.0;
    let node = layout.node_of_rank(rank);
    let fail = |step: Step, e: String| format!("rank {rank}: {step:?}: {e}");
    let client = init(connector, &me, (uid, gid))
        .await
        .map_err(|e| fail(Step::Init, e))?;
    let obs = observer.clone();
    client
        .register_event_handler(
            &[Status::EVENT_NODE_DOWN, Status::EVENT_PROC_TERMINATED],
            &[],
            move |notice, done| {
                if let Some(subject) = event_subject(notice.status, &notice.info) {
                    obs.event(rank, notice.status, subject);
                }
                done.complete(Status::EVENT_ACTION_COMPLETE, Vec::new());
            },
        )
        .await
        .map_err(|s| fail(Step::Init, format!("register_event_handler: {s:?}")))?;
    // The invitees hear of the invitation before they answer it.
    let invitations = if workload.invite_at.is_some() && rank != 0 {
        let (tx, rx) = mpsc::unbounded_channel();
        client
            .register_event_handler(&[Status::GROUP_INVITED], &[], move |notice, done| {
                let _ = tx.send(notice.source.clone());
                done.complete(Status::SUCCESS, Vec::new());
            })
            .await
            .map_err(|s| fail(Step::Init, format!("register_event_handler: {s:?}")))?;
        Some(rx)
    } else {
        None
    };
    observer.step(node, rank, Step::Init);
    client
        .put(Scope::GLOBAL, KEY, Value::string(value_of(seed, rank)))
        .map_err(|s| fail(Step::Put, format!("{s:?}")))?;
    client
        .commit()
        .await
        .map_err(|s| fail(Step::Commit, format!("{s:?}")))?;
    observer.step(node, rank, Step::Commit);
    if workload.lookup_at.is_some() {
        let value = Info::with_key(&published_key(rank), Value::string(value_of(seed, rank)))
            .map_err(|e| fail(Step::Commit, e.to_string()))?;
        observer.published(rank, client.publish(&[value]).await);
    }

    until(workload.fence_at).await;
    let mut directives = vec![Info::new(attr::COLLECT_DATA, modex == Modex::Full)];
    if let Some(t) = workload.fence_timeout_s {
        directives.push(Info::new(
            attr::TIMEOUT,
            i32::try_from(t).unwrap_or(i32::MAX),
        ));
    }
    let started = now();
    let fenced = client.fence(&[], &directives).await;
    observer.fenced(rank, started, fenced.clone());
    observer.step(node, rank, Step::Fence);

    if fenced.is_ok() {
        until(workload.get_at).await;
        let peer = Proc::new(me.nspace.clone(), Rank(peer_of(layout, rank)));
        let got = client.get(Some(&peer), KEY, &[]).await;
        let want = value_of(seed, peer.rank.0);
        let outcome = match got {
            Ok(v) if v.as_str() == Some(want.as_str()) => Ok(()),
            Ok(v) => {
                return Err(fail(
                    Step::Get,
                    format!("rank {} holds {v:?}, not {want:?}", peer.rank.0),
                ));
            }
            Err(s) => Err(s),
        };
        observer.got(rank, outcome);
        observer.step(node, rank, Step::Get);
    }

    if let Some(at) = workload.lookup_at {
        until(at).await;
        let peer = peer_of(layout, rank);
        let key = published_key(peer);
        let started = now();
        let found = client.lookup(&[key.as_str()], &[]).await;
        let want = value_of(seed, peer);
        let outcome = match found {
            Ok(data) => match data.first() {
                Some(d) if d.value.as_str() == Some(want.as_str()) => Ok(()),
                other => {
                    return Err(format!(
                        "rank {rank}: lookup of {key} found {other:?}, not {want:?}"
                    ));
                }
            },
            Err(s) => Err(s),
        };
        observer.looked_up(rank, started, outcome);
    }

    if let Some(at) = workload.group_at {
        until(at).await;
        group_work(&client, &me, layout.job_size(), workload, observer).await;
    }

    if let Some(at) = workload.invite_at {
        until(at).await;
        let size = layout.job_size();
        invitation_work(&client, &me, size, workload, observer, invitations).await;
    }

    // The fabric its daemon describes is the cluster's, seen from this rank's node.
    if let Some(at) = workload.fabric_at {
        until(at).await;
        match client.fabric_register(&[]).await {
            Ok(fabric) => {
                if let Some(wrong) = crate::fabric::check(layout, node, &fabric.info) {
                    return Err(format!("rank {rank}: fabric: {wrong}"));
                }
            }
            Err(e) if e.status() == Status::ERR_LOST_CONNECTION => {}
            Err(e) => return Err(format!("rank {rank}: fabric registration failed: {e}")),
        }
    }

    if let Some(at) = workload.spawn_at
        && rank == 0
    {
        until(at).await;
        let app = App {
            cmd: Some("sim-child".into()),
            maxprocs: i32::try_from(workload.spawn_procs).unwrap_or(i32::MAX),
            ..App::default()
        };
        let spawned = client.spawn(&[], &[app]).await;
        observer.spawned(rank, spawned.clone());
        if let (Ok(job), true) = (&spawned, workload.connect) {
            let size = Some(workload.spawn_procs);
            connect_to(&client, &me, job, Party::Parent(rank), size, observer).await;
        }
    }

    until(workload.finalize_at).await;
    client
        .finalize()
        .await
        .map_err(|s| fail(Step::Finalize, format!("{s:?}")))?;
    observer.step(node, rank, Step::Finalize);
    Ok(())
}
