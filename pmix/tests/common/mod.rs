//! What the integration tests share: a server with one job registered, and clients of it
//! over the in-memory transport.

#![allow(clippy::unwrap_used, dead_code)] // test helpers fail loudly; not every test uses all

use pmix::client::Client;
use pmix::codec::BufferType;
use pmix::model::{Info, Nspace, Proc, Rank, Value, attr};
use pmix::server::{Host, NoHost, Server, ServerConfig};
pub(crate) use pmix::transport::uid_gid;
use pmix::transport::{PeerCred, memory};

pub(crate) fn job_info(n: u32) -> Vec<Info> {
    vec![
        Info::new(attr::JOB_SIZE, n),
        Info::new(attr::NODE_LIST, "testhost".to_owned()),
        Info::with_key(
            attr::LOCAL_PEERS.wire_key(),
            Value::string((0..n).map(|r| r.to_string()).collect::<Vec<_>>().join(",")),
        )
        .unwrap(),
    ]
}

pub(crate) async fn server(tcp: bool, n: u32) -> (Server, Nspace) {
    server_with(NoHost, tcp, n).await
}

/// [`server`] with a host of the test's own.
pub(crate) async fn server_with<H: Host>(host: H, tcp: bool, n: u32) -> (Server, Nspace) {
    server_configured(host, tcp, n, |_| {}).await
}

/// [`server_with`], its configuration changed by `configure` before it starts.
pub(crate) async fn server_configured<H: Host>(
    host: H,
    tcp: bool,
    n: u32,
    configure: impl FnOnce(&mut ServerConfig),
) -> (Server, Nspace) {
    let dir = std::env::temp_dir().join(format!(
        "pmix-test-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut config = ServerConfig::new(dir, "testhost".into())
        .tcp(tcp)
        .unix_socket(false);
    configure(&mut config);
    let server = Server::start(config, host).await.unwrap();
    let ns = Nspace::new("testjob").unwrap();
    server
        .register_nspace(ns.clone(), job_info(n))
        .await
        .unwrap();
    let (uid, gid) = uid_gid();
    for r in 0..n {
        server
            .register_client(Proc::new(ns.clone(), Rank(r)), uid, gid)
            .await
            .unwrap();
    }
    (server, ns)
}

pub(crate) fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

pub(crate) async fn memory_clients(server: &Server, ns: &Nspace, n: u32) -> Vec<Client> {
    let (acceptor, connector) = memory();
    server.serve(acceptor);
    let (uid, gid) = uid_gid();
    let mut out = Vec::new();
    for r in 0..n {
        let stream = connector.connect(Some(PeerCred::new(uid, gid))).unwrap();
        out.push(
            Client::init_over(
                stream,
                Proc::new(ns.clone(), Rank(r)),
                BufferType::NonDescribed,
            )
            .await
            .unwrap(),
        );
    }
    out
}
