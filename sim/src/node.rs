//! One virtual node: its PMIx server (the real `pmix::server::Server`), its daemon as the
//! server's host, and its client processes (real `pmix::client::Client`s) connected through
//! the library's in-memory transport.
//!
//! Each client runs the wire-up every PMIx application starts with: init, put a value only it
//! knows, commit, fence (collecting everyone's data, or not, as [`Modex`] says), get the value
//! of a rank on another node (from the fence's data, or from its node by direct modex), check
//! it is exactly what that rank put, finalize.

use std::path::PathBuf;
use std::sync::Arc;

use pmix::client::Client;
use pmix::codec::BufferType;
use pmix::model::{DataArray, Info, Nspace, Proc, Rank, Scope, Value, attr};
use pmix::server::{CredentialKey, Server, ServerConfig};
use pmix::transport::{MemoryConnector, PeerCred, uid_gid};

use crate::cluster::Layout;
use crate::daemon::Daemon;
use crate::{Modex, Observer, Step};

/// The key every rank puts.
pub(crate) const KEY: &str = "sim.wireup";

/// The value rank `rank` puts: derived from the run's seed, so a wrong or stale value cannot
/// pass for it.
pub(crate) fn value_of(seed: u64, rank: u32) -> String {
    format!("seed{seed:x}.rank{rank}")
}

/// Start node `node`: daemon, server, job registration, clients. Returns the server (which
/// stops when dropped) once its clients are running; the tasks live on the rack's runtime.
pub(crate) async fn start(
    node: u32,
    layout: Layout,
    nspace: Nspace,
    seed: u64,
    modex: Modex,
    observer: Arc<Observer>,
) -> Result<Arc<Server>, String> {
    let direct = modex == Modex::Direct;
    let (daemon, outbox) = Daemon::new(
        node,
        layout.clone(),
        nspace.clone(),
        observer.clone(),
        direct,
    );
    tokio::spawn(daemon.clone().listen());
    tokio::spawn(daemon.clone().send_loop(outbox));

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
    daemon.set_server(server.clone());
    let (acceptor, connector) = pmix::transport::memory();
    server.serve(acceptor);
    server
        .register_nspace(nspace.clone(), job_info(&layout, node))
        .await
        .map_err(|e| format!("node {node}: register_nspace: {e}"))?;
    let (uid, gid) = uid_gid();
    for rank in layout.ranks_of(node) {
        let proc = Proc::new(nspace.clone(), Rank(rank));
        server
            .register_client(proc, uid, gid)
            .await
            .map_err(|e| format!("node {node}: register_client: {e}"))?;
    }
    let connector = Arc::new(connector);
    for rank in layout.ranks_of(node) {
        let proc = Proc::new(nspace.clone(), Rank(rank));
        let c = connector.clone();
        let obs = observer.clone();
        let l = layout.clone();
        tokio::spawn(async move {
            let outcome = wire_up(&c, proc.clone(), &l, seed, modex, (uid, gid), &obs).await;
            obs.client_done(proc.rank.0, outcome);
        });
    }
    Ok(server)
}

/// The job's information as this node's server holds it: job-level facts, this node's, and
/// its own processes'.
fn job_info(layout: &Layout, node: u32) -> Vec<Info> {
    let size = layout.job_size();
    let local: Vec<String> = layout.ranks_of(node).map(|r| r.to_string()).collect();
    let hostname = Layout::hostname(node);
    let mut out = vec![
        Info::new(attr::JOB_SIZE, size),
        Info::new(attr::MAX_PROCS, size),
        Info::new(attr::NUM_NODES, layout.nodes),
        Info::new(attr::JOB_NUM_APPS, 1u32),
        Info::new(
            attr::NODE_INFO_ARRAY,
            DataArray::of_infos(vec![
                Info::new(attr::HOSTNAME, hostname.clone()),
                Info::new(attr::NODEID, node),
                Info::new(attr::LOCAL_PEERS, local.join(",")),
                Info::new(attr::LOCAL_SIZE, layout.clients),
                Info::new(attr::NODE_SIZE, layout.clients),
                Info::new(attr::LOCALLDR, Rank(layout.ranks_of(node).start)),
            ]),
        ),
    ];
    for (place, rank) in layout.ranks_of(node).enumerate() {
        let place = u16::try_from(place).unwrap_or(u16::MAX);
        out.push(Info::new(
            attr::PROC_INFO_ARRAY,
            DataArray::of_infos(vec![
                Info::new(attr::RANK, Rank(rank)),
                Info::new(attr::LOCAL_RANK, place),
                Info::new(attr::NODE_RANK, place),
                Info::new(attr::HOSTNAME, hostname.clone()),
                Info::new(attr::NODEID, node),
            ]),
        ));
    }
    out
}

/// The rank whose value `rank` reads after the fence: the same place on the next node (its
/// own node when there is only one).
pub(crate) fn peer_of(layout: &Layout, rank: u32) -> u32 {
    (rank + layout.clients) % layout.job_size()
}

async fn wire_up(
    connector: &MemoryConnector,
    me: Proc,
    layout: &Layout,
    seed: u64,
    modex: Modex,
    (uid, gid): (u32, u32),
    observer: &Observer,
) -> Result<(), String> {
    let rank = me.rank.0;
    let node = layout.node_of_rank(rank);
    let fail = |step: Step, e: String| format!("rank {rank}: {step:?}: {e}");
    let stream = connector
        .connect(Some(PeerCred {
            uid,
            gid,
            pid: None,
        }))
        .map_err(|e| fail(Step::Init, e.to_string()))?;
    let client = Client::init_over(stream, me.clone(), BufferType::NonDescribed)
        .await
        .map_err(|e| fail(Step::Init, e.to_string()))?;
    observer.step(node, rank, Step::Init);
    client
        .put(Scope::GLOBAL, KEY, Value::string(value_of(seed, rank)))
        .map_err(|s| fail(Step::Put, format!("{s:?}")))?;
    client
        .commit()
        .await
        .map_err(|s| fail(Step::Commit, format!("{s:?}")))?;
    observer.step(node, rank, Step::Commit);
    let collect = [Info::new(attr::COLLECT_DATA, modex == Modex::Full)];
    client
        .fence(&[], &collect)
        .await
        .map_err(|s| fail(Step::Fence, format!("{s:?}")))?;
    observer.step(node, rank, Step::Fence);
    let peer = Proc::new(me.nspace.clone(), Rank(peer_of(layout, rank)));
    let got = client
        .get(Some(&peer), KEY, &[])
        .await
        .map_err(|s| fail(Step::Get, format!("{s:?}")))?;
    let want = value_of(seed, peer.rank.0);
    if got.as_str() != Some(want.as_str()) {
        return Err(fail(
            Step::Get,
            format!("rank {} holds {got:?}, not {want:?}", peer.rank.0),
        ));
    }
    observer.step(node, rank, Step::Get);
    client
        .finalize()
        .await
        .map_err(|s| fail(Step::Finalize, format!("{s:?}")))?;
    observer.step(node, rank, Step::Finalize);
    Ok(())
}
