//! The tokio driver of [`ServerCore`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use super::budget::{Budget, LimitKind, Queue, frame_cost};
use super::config::ServerConfig;
use super::core::{Action, ConnId, HostResult, PeerCred, ServerCore};
use super::env;
use crate::Error;
use crate::host::Host;
use crate::model::{DataRange, Info, IofChannel, Key, Nspace, Proc, Rank, Status, Value};
use crate::transport::{Accepted, Acceptor, BoxStream, TcpAcceptor, UnixAcceptor};
use crate::wire::frame::{Frame, FrameDecoder, HEADER_LEN};
use crate::wire::handshake::ConnectRequest;

/// The version this server reports to clients (OpenPMIx clients parse it as major.minor.release).
pub const SERVER_VERSION: &str = "4.2.2";

/// How many frames the driver handles in a row before it lets the other tasks of its thread
/// (readers, writers, accepts, timers) run.
const FRAMES_PER_YIELD: usize = 32;

/// How long a new connection may take to send its connect message.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

enum Event {
    Connect {
        req: Box<ConnectRequest>,
        peer: Option<PeerCred>,
        writer: Writer,
        answer: oneshot::Sender<Hello>,
    },
    /// The connection has frames to take from its queue (it was not on the list).
    Ready(ConnId, Arc<Queue>),
    Closed(ConnId),
    Host(u64, HostResult),
    Timeout(u64),
    Api(Box<dyn FnOnce(&mut ServerCore) + Send>),
    Dmodex {
        proc: Proc,
        info: Vec<Info>,
        answer: oneshot::Sender<Result<Vec<u8>, Status>>,
    },
    Shutdown,
}

/// The driver's answer to a connection's connect message.
struct Hello {
    conn: ConnId,
    /// The handshake reply, written raw before any frame.
    reply: Vec<u8>,
    accepted: bool,
}

/// A connection waiting for its handshake to be answered.
struct Connecting {
    writer: Writer,
    answer: oneshot::Sender<Hello>,
}

enum Out {
    Bytes(Vec<u8>),
    Close,
}

/// The driver's end of a connection's output: the queue to its writer task and what that
/// queue holds.
struct Writer {
    tx: mpsc::UnboundedSender<Out>,
    queue: Arc<Queue>,
}

impl Writer {
    /// Queue `bytes` for the peer, unless the peer has stopped reading past the limits: then
    /// the connection is closed (false).
    fn send(&self, conn: ConnId, bytes: Vec<u8>, budget: &Budget) -> bool {
        let limits = &budget.limits;
        let backlog = self.queue.bytes();
        let over = if backlog > limits.backlog {
            Some(format!(
                "{backlog} bytes unread, past the limit of {}",
                limits.backlog
            ))
        } else if backlog > limits.pause_at && budget.queued() > limits.total_backlog {
            Some(format!(
                "{backlog} bytes unread while all connections hold {}, past the limit of {}",
                budget.queued(),
                limits.total_backlog
            ))
        } else {
            None
        };
        if let Some(why) = over {
            budget.limit_hit(
                LimitKind::Backlog,
                &format!("closing connection {conn}, which does not read its output: {why}"),
            );
            let _ = self.tx.send(Out::Close);
            return false;
        }
        let n = bytes.len();
        self.queue.push(budget, n);
        if self.tx.send(Out::Bytes(bytes)).is_err() {
            self.queue.pop(budget, n);
        }
        true
    }
}

/// A running PMIx server.
#[derive(Debug)]
pub struct Server {
    events: mpsc::UnboundedSender<Event>,
    budget: Arc<Budget>,
    pub(super) config: ServerConfig,
    tcp_addr: Option<SocketAddr>,
    unix_path: Option<PathBuf>,
    rendezvous: Vec<PathBuf>,
    /// The machine's topology, loaded when first needed.
    #[cfg(feature = "topology")]
    pub(super) machine: std::sync::OnceLock<Result<Arc<crate::topology::Machine>, Error>>,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Event")
    }
}

impl Server {
    /// Start serving: bind the listeners and spawn the driver on the current tokio runtime.
    pub async fn start<H: Host>(config: ServerConfig, host: H) -> Result<Server, Error> {
        let io_err = |e: io::Error| Error::Status(Status::ERR_INIT, e.to_string());
        let (tx, rx) = mpsc::unbounded_channel();
        let host = Arc::new(host);
        let core = ServerCore::new(
            Some(config.hostname.clone()),
            host.supports_direct_modex(),
            SERVER_VERSION,
        )
        .with_id(config.id.clone())
        .with_tool_uids(config.tool_uids.clone())
        .with_held_gets(config.limits.held_gets)
        .with_credential_key(match config.credential_key {
            Some(k) => k.0,
            None => credential_key()?,
        });
        let budget = Arc::new(Budget::new(config.limits.clone()));
        tokio::spawn(drive(core, rx, tx.clone(), host, budget.clone()));
        let mut server = Server {
            events: tx,
            budget,
            config,
            tcp_addr: None,
            unix_path: None,
            rendezvous: Vec::new(),
            #[cfg(feature = "topology")]
            machine: std::sync::OnceLock::new(),
        };
        if server.config.tcp {
            let acceptor = TcpAcceptor::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
                .await
                .map_err(io_err)?;
            server.tcp_addr = Some(acceptor.local_addr().map_err(io_err)?);
            server.serve(acceptor);
        }
        if server.config.unix_socket {
            let path = server
                .config
                .tmpdir
                .join(format!("pmix-rs.{}.sock", std::process::id()));
            let _ = std::fs::remove_file(&path);
            let acceptor = UnixAcceptor::bind(&path).map_err(io_err)?;
            server.unix_path = Some(path);
            server.serve(acceptor);
        }
        if server.config.tool_rendezvous
            && let Some(uri) = server.uri()
        {
            for host in rendezvous_hosts(&server.config.hostname) {
                let names = [
                    format!("pmix.{host}.tool.{}", std::process::id()),
                    format!("pmix.{host}.tool.{}", server.config.id.nspace.as_str()),
                ];
                for name in names {
                    let path = server.config.tmpdir.join(name);
                    write_rendezvous(&path, &uri).map_err(io_err)?;
                    server.rendezvous.push(path);
                }
            }
        }
        if server.config.system_rendezvous
            && let Some(uri) = server.uri()
        {
            for host in rendezvous_hosts(&server.config.hostname) {
                let path = (server.config.system_tmpdir).join(format!("pmix.sys.{host}"));
                write_rendezvous(&path, &uri).map_err(io_err)?;
                server.rendezvous.push(path);
            }
        }
        Ok(server)
    }

    /// Accept connections from another transport as well.
    pub fn serve<A: Acceptor>(&self, mut acceptor: A) {
        let events = self.events.clone();
        let budget = self.budget.clone();
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    biased;
                    // The driver has stopped: close the listening socket.
                    () = events.closed() => return,
                    a = acceptor.accept() => a,
                };
                match accepted {
                    Ok(accepted) => {
                        tokio::spawn(connection(accepted, events.clone(), budget.clone()));
                    }
                    Err(e) => {
                        // Out of descriptors, a connection reset before it was accepted, ...:
                        // transient. Back off briefly so a persistent error does not spin.
                        tracing::warn!("accept failed: {e}; retrying");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
        });
    }

    /// What the server's connections hold of its memory now (see [`super::Limits`]).
    pub fn held(&self) -> super::limits::Held {
        self.budget.held()
    }

    /// The server's own identifier (`PMIX_SERVER_NSPACE`, `PMIX_SERVER_RANK`).
    pub fn id(&self) -> &Proc {
        &self.config.id
    }

    /// The URI clients connect to (`<nspace>.<rank>;tcp4://127.0.0.1:<port>`).
    pub fn uri(&self) -> Option<String> {
        self.tcp_addr
            .map(|a| crate::wire::uri::server_uri(&self.config.id, a))
    }

    /// The Unix socket's path, if the server listens on one.
    pub fn unix_socket(&self) -> Option<&Path> {
        self.unix_path.as_deref()
    }

    async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut ServerCore) -> R + Send + 'static,
    ) -> Result<R, Error> {
        let (tx, rx) = oneshot::channel();
        self.events
            .send(Event::Api(Box::new(move |core| {
                let _ = tx.send(f(core));
            })))
            .map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())
    }

    /// `PMIx_server_register_nspace`. A server that shares its topology
    /// ([`ServerConfig::share_topology`]) adds its hwloc XML to the job's information.
    pub async fn register_nspace(&self, nspace: Nspace, info: Vec<Info>) -> Result<(), Error> {
        #[cfg(feature = "topology")]
        let info = self.with_shared_topology(info);
        let registered = self
            .call(move |core| core.register_nspace(nspace, &info))
            .await?;
        registered.map_err(|s| Error::Status(s, "the node or proc map does not parse".into()))
    }

    /// `PMIx_server_deregister_nspace`.
    pub async fn deregister_nspace(&self, nspace: Nspace) -> Result<(), Error> {
        self.call(move |core| core.deregister_nspace(nspace.as_str()))
            .await
    }

    /// `PMIx_server_register_resources`.
    pub async fn register_resources(&self, info: Vec<Info>) -> Result<(), Error> {
        self.call(move |core| core.register_resources(&info)).await
    }

    /// `PMIx_server_deregister_resources`.
    pub async fn deregister_resources(&self, info: Vec<Info>) -> Result<(), Error> {
        self.call(move |core| core.deregister_resources(&info))
            .await
    }

    /// `PMIx_server_register_client`.
    pub async fn register_client(&self, proc: Proc, uid: u32, gid: u32) -> Result<(), Error> {
        self.call(move |core| core.register_client(proc, uid, gid))
            .await
    }

    /// `PMIx_server_deregister_client`.
    pub async fn deregister_client(&self, proc: Proc) -> Result<(), Error> {
        self.call(move |core| core.deregister_client(&proc)).await
    }

    /// Whether every registered client of `nspace` has finalized or disconnected.
    pub async fn all_gone(&self, nspace: Nspace) -> Result<bool, Error> {
        self.call(move |core| core.all_gone(nspace.as_str())).await
    }

    /// The processes of `nspace` that are gone without finalizing cleanly are not tracked
    /// separately yet; this returns the set of gone processes.
    pub async fn gone(&self) -> Result<Vec<Proc>, Error> {
        self.call(|core| core.gone()).await
    }

    /// `PMIx_Notify_event` in the server: raise `status` to the local clients in `range`
    /// that registered for it (the host's own events, or events relayed from other nodes).
    /// `source` is the process it concerns or, for the host itself, `None`: an empty
    /// namespace and `PMIX_RANK_UNDEF` (§10.1.8). The host is not told again.
    pub async fn notify_event(
        &self,
        status: Status,
        source: Option<Proc>,
        range: DataRange,
        info: Vec<Info>,
    ) -> Result<(), Error> {
        let event = crate::events::Event {
            status,
            source: source.unwrap_or_else(|| Proc::new(Nspace::default(), Rank::UNDEF)),
            range,
            info,
        };
        Ok(self.call(move |core| core.notify_event(event)).await??)
    }

    /// `PMIx_Store_internal` in the host's process: `value` as `proc`'s `key`, for the host's
    /// own gets ([`Server::get`]); no client and no other node sees it.
    pub async fn store_internal(&self, proc: Proc, key: Key, value: Value) -> Result<(), Error> {
        self.call(move |core| core.store_internal(proc, key, value))
            .await
    }

    /// `PMIx_Get` in the host's process: what this server holds of `proc`'s `key` (stored
    /// with [`Server::store_internal`], committed by a client, or registered for its
    /// namespace). It does not wait: what is missing is `PMIX_ERR_NOT_FOUND`.
    pub async fn get(&self, proc: Proc, key: &str) -> Result<Value, Error> {
        let key = key.to_owned();
        Ok(self.call(move |core| core.host_get(&proc, &key)).await??)
    }

    /// `PMIx_server_IOF_deliver`: output of the local process `source` on `channel` (one of
    /// stdout, stderr, stddiag), which the host captured, for the clients and tools that
    /// pulled it (v5.0 §17.2.14). Output no one pulled yet is kept for those that will, up to
    /// a bound, the oldest dropped first. `info` goes with the output to its pullers.
    pub async fn iof_deliver(
        &self,
        source: Proc,
        channel: IofChannel,
        data: Vec<u8>,
        info: Vec<Info>,
    ) -> Result<(), Error> {
        Ok(self
            .call(move |core| core.iof_deliver(source, channel, data, info))
            .await??)
    }

    /// `PMIx_server_define_process_set`: define the process set `name` of `members` and
    /// announce it to the local clients (`ServerCore::define_process_set`).
    pub async fn define_process_set(&self, name: &str, members: Vec<Proc>) -> Result<(), Error> {
        let name = name.to_owned();
        Ok(self
            .call(move |core| core.define_process_set(&name, members))
            .await??)
    }

    /// `PMIx_server_delete_process_set`: delete the process set `name` and announce it.
    pub async fn delete_process_set(&self, name: &str) -> Result<(), Error> {
        let name = name.to_owned();
        Ok(self
            .call(move |core| core.delete_process_set(&name))
            .await??)
    }

    /// `PMIx_Register_attributes`: declare the attributes the host's `function` (a
    /// server-module function, e.g. `"allocate"`) supports, for queries of attribute support
    /// at the host level. A second registration for a function is
    /// `PMIX_ERR_REPEAT_ATTR_REGISTRATION`.
    pub async fn register_attributes(
        &self,
        function: &str,
        attrs: Vec<crate::model::RegAttr>,
    ) -> Result<(), Error> {
        let function = function.to_owned();
        Ok(self
            .call(move |core| core.register_attributes(&function, attrs))
            .await??)
    }

    /// `PMIx_server_setup_fork`: the environment a client process needs. A launcher also
    /// removes from the process's environment what [`super::inherited_server_vars`] names,
    /// or an outer server's URIs could take it elsewhere.
    pub fn setup_fork(&self, proc: &Proc) -> Vec<(String, String)> {
        env::client_env(
            proc,
            &self.uri().unwrap_or_default(),
            self.unix_path.as_deref(),
            &self.config.tmpdir,
            &self.config.hostname,
            SERVER_VERSION,
        )
    }

    /// `PMIx_server_dmodex_request`: the data the local client `proc` committed, as the blob
    /// other servers store, once it has committed it (rule DM-01) and, with
    /// `PMIX_REQUIRED_KEY` in `info`, once that key is there (DM-03). `PMIX_TIMEOUT` bounds the
    /// wait; a process that is not a local client, or ends without posting, is
    /// `PMIX_ERR_NOT_FOUND`.
    pub async fn dmodex_request(&self, proc: Proc, info: Vec<Info>) -> Result<Vec<u8>, Error> {
        let (answer, rx) = oneshot::channel();
        self.events
            .send(Event::Dmodex { proc, info, answer })
            .map_err(|_| stopped())?;
        Ok(rx.await.map_err(|_| stopped())??)
    }

    /// `PMIx_server_setup_application`: the information the library's fabric and
    /// environment components contribute for launching `nspace`'s processes, to be passed to
    /// `setup_local_support` on every node. This library has no such components (no fabric
    /// plugin assigns endpoints or security keys), so the answer is empty; the directives
    /// (`PMIX_SETUP_APP_ENVARS`, …) select among contributions there are none of.
    pub fn setup_application(&self, nspace: &Nspace, info: &[Info]) -> Result<Vec<Info>, Error> {
        let _ = (nspace, info);
        Ok(Vec::new())
    }

    /// `PMIx_server_setup_local_support`: prepare this node for `nspace`'s processes with what
    /// `setup_application` returned. With no fabric or environment components there is
    /// nothing to prepare.
    pub fn setup_local_support(&self, nspace: &Nspace, info: &[Info]) -> Result<(), Error> {
        let _ = (nspace, info);
        Ok(())
    }

    /// Stop the server: its driver ends and connections close.
    pub fn shutdown(&self) {
        let _ = self.events.send(Event::Shutdown);
        for p in self.unix_path.iter().chain(&self.rendezvous) {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The node names in the rendezvous files' names: the server's (`PMIX_HOSTNAME`, else the
/// kernel's), and for a name with a domain the name without it too. Tools search by the
/// name they compute: OpenPMIx 4.2 strips the domain from `gethostname()`, 5.0 and 6.1 keep
/// it (5.0.9 and 6.1.0 `runtime/pmix_init.c:436-450`), and all take `PMIX_HOSTNAME` when it
/// is set. Both files hold the same URI, which OpenPMIx's search accepts.
fn rendezvous_hosts(hostname: &str) -> Vec<&str> {
    let mut hosts = vec![hostname];
    // An IPv4 address is no name with a domain (4.2 keeps those whole too).
    if let Some((short, _)) = hostname.split_once('.')
        && !short.is_empty()
        && short.parse::<u8>().is_err()
    {
        hosts.push(short);
    }
    hosts
}

/// Write a tool rendezvous file at `path` (mode 0640): the server's URI, its version, this
/// process's pid and its `uid:gid`, one per line. OpenPMIx tools read the first two lines;
/// OpenPMIx's own server adds the start time as a fifth, which the library, free of clocks,
/// leaves out.
fn write_rendezvous(path: &Path, uri: &str) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let (uid, gid) = crate::transport::uid_gid();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o640)
        .open(path)?;
    let pid = std::process::id();
    writeln!(f, "{uri}\n{SERVER_VERSION}\n{pid}\n{uid}:{gid}")
}

/// The driver task: the only owner of the core.
async fn drive<H: Host>(
    mut core: ServerCore,
    mut events: mpsc::UnboundedReceiver<Event>,
    tx: mpsc::UnboundedSender<Event>,
    host: Arc<H>,
    budget: Arc<Budget>,
) {
    let mut writers: BTreeMap<ConnId, Writer> = BTreeMap::new();
    let mut connecting: BTreeMap<ConnId, Connecting> = BTreeMap::new();
    let mut next_conn: ConnId = 0;
    let mut dmodex_waiters: BTreeMap<u64, oneshot::Sender<Result<Vec<u8>, Status>>> =
        BTreeMap::new();
    // The connections with frames to handle, each taking its turn for one frame; those of
    // them that closed, closed once their last frame is handled; the frames handled since
    // the driver last let the other tasks run.
    let mut ready: VecDeque<(ConnId, Arc<Queue>)> = VecDeque::new();
    let mut closing: BTreeSet<ConnId> = BTreeSet::new();
    let mut since_yield = 0;
    loop {
        let event = if ready.is_empty() {
            since_yield = 0;
            match events.recv().await {
                Some(event) => Some(event),
                None => break,
            }
        } else {
            if since_yield >= FRAMES_PER_YIELD {
                // Readers, writers and the accept loop share this thread.
                tokio::task::yield_now().await;
                since_yield = 0;
            }
            match events.try_recv() {
                Ok(event) => Some(event),
                Err(mpsc::error::TryRecvError::Empty) => None,
                Err(mpsc::error::TryRecvError::Disconnected) => break,
            }
        };
        match event {
            None => {}
            Some(Event::Connect {
                req,
                peer,
                writer,
                answer,
            }) => {
                next_conn += 1;
                let conn = next_conn;
                connecting.insert(conn, Connecting { writer, answer });
                core.handle_hello(conn, &req, peer);
            }
            Some(Event::Ready(conn, queue)) => ready.push_back((conn, queue)),
            Some(Event::Closed(conn)) => {
                // What it sent before it closed is handled first, in its turns (a finalize).
                if ready.iter().any(|(c, _)| *c == conn) {
                    closing.insert(conn);
                } else {
                    writers.remove(&conn);
                    core.handle_closed(conn);
                }
            }
            Some(Event::Host(op, result)) => core.handle_host(op, result),
            Some(Event::Timeout(op)) => core.handle_timeout(op),
            Some(Event::Api(f)) => f(&mut core),
            Some(Event::Dmodex { proc, info, answer }) => {
                let op = core.dmodex_request(proc, &info);
                dmodex_waiters.insert(op, answer);
            }
            Some(Event::Shutdown) => break,
        }
        // One frame of the connection whose turn it is.
        if let Some((conn, queue)) = ready.pop_front()
            && let Some((frame, more)) = queue.take()
        {
            let n = frame_cost(&frame);
            core.handle_frame(conn, frame);
            queue.handled(&budget, n);
            since_yield += 1;
            if more {
                ready.push_back((conn, queue));
            } else if closing.remove(&conn) {
                writers.remove(&conn);
                core.handle_closed(conn);
            }
        }
        while let Some(action) = core.poll_action() {
            match action {
                Action::Handshake {
                    conn,
                    reply,
                    refused,
                } => {
                    let Some(c) = connecting.remove(&conn) else {
                        continue;
                    };
                    let accepted = match refused {
                        Some(why) => {
                            tracing::warn!("refused connection {conn}: {why}");
                            false
                        }
                        None => {
                            writers.insert(conn, c.writer);
                            true
                        }
                    };
                    let _ = c.answer.send(Hello {
                        conn,
                        reply,
                        accepted,
                    });
                }
                Action::Send { conn, tag, payload } => {
                    let Some(w) = writers.get(&conn) else {
                        continue;
                    };
                    let frame = Frame {
                        pindex: 0,
                        tag,
                        payload,
                    };
                    match frame.encode() {
                        Ok(bytes) => {
                            if !w.send(conn, bytes, &budget) {
                                writers.remove(&conn);
                            }
                        }
                        Err(e) => tracing::warn!("cannot frame a reply: {e}"),
                    }
                }
                Action::Close { conn, reason } => {
                    tracing::warn!("closing connection {conn}: {reason}");
                    if let Some(w) = writers.remove(&conn) {
                        let _ = w.tx.send(Out::Close);
                    }
                }
                Action::DmodexReply { op, result } => {
                    if let Some(answer) = dmodex_waiters.remove(&op) {
                        let _ = answer.send(result);
                    }
                }
                Action::Host { op, call } => {
                    let host = host.clone();
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        let result = call.call(&*host).await;
                        let _ = tx.send(Event::Host(op, result));
                    });
                }
                Action::Timer { op, after_s } => {
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_secs(u64::from(after_s))).await;
                        let _ = tx.send(Event::Timeout(op));
                    });
                }
            }
        }
    }
    for w in writers.values() {
        let _ = w.tx.send(Out::Close);
    }
}

/// A fresh key for the server's credentials, from the operating system's randomness.
fn credential_key() -> Result<[u8; 32], Error> {
    use std::io::Read;
    let mut key = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut key))
        .map_err(|e| {
            Error::Status(
                Status::ERR_INIT,
                format!("no randomness for credentials: {e}"),
            )
        })?;
    Ok(key)
}

/// One connection: handshake, then frames in and out until either side closes, within the
/// server's [`Limits`](super::Limits): a peer that leaves its output unread stops being read,
/// and a frame that arrives too slowly or passes the total of partial frames closes it.
async fn connection(accepted: Accepted, events: mpsc::UnboundedSender<Event>, budget: Arc<Budget>) {
    let Accepted { mut stream, peer } = accepted;
    let req = match tokio::time::timeout(HANDSHAKE_TIMEOUT, read_connect(&mut stream)).await {
        Ok(Ok(req)) => req,
        Ok(Err(e)) => {
            tracing::warn!("dropping a connection with a bad connect message: {e}");
            return;
        }
        Err(_) => {
            tracing::warn!("dropping a connection that sent no connect message in time");
            return;
        }
    };
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let queue = Arc::new(Queue::default());
    let (answer_tx, answer_rx) = oneshot::channel();
    let connect = Event::Connect {
        req: Box::new(req),
        peer,
        writer: Writer {
            tx: out_tx,
            queue: queue.clone(),
        },
        answer: answer_tx,
    };
    if events.send(connect).is_err() {
        return;
    }
    let Ok(Hello {
        conn,
        reply,
        accepted,
    }) = answer_rx.await
    else {
        return;
    };
    if !accepted {
        let _ = stream.write_all(&reply).await;
        let _ = stream.shutdown().await;
        return;
    }
    if stream.write_all(&reply).await.is_err() {
        let _ = events.send(Event::Closed(conn));
        return;
    }
    let (reader, writer) = tokio::io::split(stream);
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let (closed_tx, closed_rx) = oneshot::channel::<()>();
    let writer_task = tokio::spawn(write_out(
        writer,
        out_rx,
        queue.clone(),
        budget.clone(),
        stop_rx,
        closed_tx,
    ));
    let why = read_in(conn, reader, &events, &queue, &budget, closed_rx).await;
    if let Some(why) = why {
        budget.limit_hit(why.0, &format!("closing connection {conn}: {}", why.1));
    }
    let _ = events.send(Event::Closed(conn));
    let _ = stop_tx.send(());
    let _ = writer_task.await;
}

/// Read a connection's frames and hand them to the driver until the peer closes, the writer
/// ends, or a limit is hit (returned, with its reason).
async fn read_in(
    conn: ConnId,
    mut reader: tokio::io::ReadHalf<BoxStream>,
    events: &mpsc::UnboundedSender<Event>,
    queue: &Arc<Queue>,
    budget: &Budget,
    mut closed_rx: oneshot::Receiver<()>,
) -> Option<(LimitKind, String)> {
    let limits = &budget.limits;
    let mut decoder = FrameDecoder::new(limits.max_frame);
    let mut chunk = vec![0u8; 64 * 1024];
    // When the frame now arriving must be whole, from the read that started it.
    let mut deadline: Option<tokio::time::Instant> = None;
    let mut held = 0;
    let why = 'read: loop {
        if queue.held() > limits.pause_at {
            budget.limit_hit(
                LimitKind::Paused,
                &format!(
                    "connection {conn} is not read while it holds {} bytes (its output unread, \
                     its requests not yet handled)",
                    queue.held()
                ),
            );
            tokio::select! {
                biased;
                _ = &mut closed_rx => break 'read None,
                () = queue.drained(budget) => {}
            }
        }
        let late = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = &mut closed_rx => break 'read None,
            () = late => {
                break 'read Some((
                    LimitKind::SlowFrame,
                    format!("a frame did not arrive in time ({} bytes of it in)", decoder.pending()),
                ));
            }
            n = reader.read(&mut chunk) => {
                let n = match n {
                    Ok(0) | Err(_) => break 'read None,
                    Ok(n) => n,
                };
                decoder.handle_bytes(&chunk[..n]);
                let mut whole = false;
                loop {
                    match decoder.next_frame() {
                        Ok(Some(frame)) => {
                            whole = true;
                            if queue.offer(budget, frame)
                                && events.send(Event::Ready(conn, queue.clone())).is_err()
                            {
                                break 'read None;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => break 'read Some((LimitKind::Partial, e.to_string())),
                    }
                }
                let pending = decoder.pending();
                let within = budget.hold_partial(held, pending);
                held = pending;
                if !within {
                    break 'read Some((
                        LimitKind::Partial,
                        format!(
                            "partial frames of all connections hold {} bytes, past the limit of {}",
                            budget.partial(),
                            limits.total_partial
                        ),
                    ));
                }
                deadline = match (pending, whole, deadline) {
                    (0, _, _) => None,
                    (_, false, Some(at)) => Some(at),
                    _ => {
                        let len = decoder.expected().unwrap_or(0);
                        Some(tokio::time::Instant::now() + limits.frame_time(len))
                    }
                };
            }
        }
    };
    budget.hold_partial(held, 0);
    why
}

/// Write what the driver queues for a connection until it says close, the peer stops
/// taking bytes, or the reader has ended (`stop`); then give back what is left unwritten.
async fn write_out(
    mut writer: tokio::io::WriteHalf<BoxStream>,
    mut out_rx: mpsc::UnboundedReceiver<Out>,
    queue: Arc<Queue>,
    budget: Arc<Budget>,
    mut stop: oneshot::Receiver<()>,
    closed: oneshot::Sender<()>,
) {
    loop {
        let out = tokio::select! {
            biased;
            _ = &mut stop => break,
            out = out_rx.recv() => out,
        };
        match out {
            Some(Out::Bytes(b)) => {
                let written = tokio::select! {
                    biased;
                    _ = &mut stop => false,
                    w = writer.write_all(&b) => w.is_ok(),
                };
                queue.pop(&budget, b.len());
                if !written {
                    break;
                }
            }
            Some(Out::Close) | None => break,
        }
    }
    let _ = closed.send(());
    out_rx.close();
    while let Ok(out) = out_rx.try_recv() {
        if let Out::Bytes(b) = out {
            queue.pop(&budget, b.len());
        }
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), writer.shutdown()).await;
}

async fn read_connect(stream: &mut BoxStream) -> Result<ConnectRequest, Error> {
    let io_err = |e: io::Error| Error::Status(Status::ERR_UNREACH, e.to_string());
    let mut header = [0u8; HEADER_LEN];
    stream.read_exact(&mut header).await.map_err(io_err)?;
    let n = ConnectRequest::payload_len(&header)?;
    let mut payload = vec![0u8; n];
    stream.read_exact(&mut payload).await.map_err(io_err)?;
    ConnectRequest::decode(&payload)
}

/// A call made after the server's event loop has ended.
fn stopped() -> Error {
    Error::Status(Status::ERR_INIT, "the server has stopped".into())
}

#[cfg(test)]
mod tests {
    use super::rendezvous_hosts;

    #[test]
    fn rendezvous_files_are_named_for_tools_that_keep_the_domain_and_those_that_strip_it() {
        assert_eq!(rendezvous_hosts("vm"), ["vm"]);
        assert_eq!(rendezvous_hosts("n1.cluster.org"), ["n1.cluster.org", "n1"]);
        assert_eq!(rendezvous_hosts("10.0.0.7"), ["10.0.0.7"]);
    }
}
