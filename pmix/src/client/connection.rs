//! The client's connection to its server: rendezvous, handshake, and requests matched to
//! replies by tag.
//!
//! The protocol is the client's core's (`core.rs`); this is its I/O. One task reads the
//! socket into the core and hands each reply the core completes to the request waiting for
//! its tag, and each event to the client's event queue; frames are written whole under a
//! lock, so they never interleave. A lost connection completes every waiting request with
//! `PMIX_ERR_LOST_CONNECTION` and raises that event in the process (PMIx v5.0 §10.1).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt, WriteHalf};
use tokio::sync::{mpsc, oneshot};

use crate::Error;
use crate::codec::BufferType;
use crate::model::{Proc, Rank, Status};
use crate::transport::{BoxStream, connect_tcp, connect_unix, uid_gid};
use crate::wire::handshake::{ConnectRequest, ToolReply, decode_status};
use crate::wire::uri::parse_uri;
use crate::wire::{PeerVersion, Reply, Request};

use super::blocking_io::{SyncIo, SyncStream};
use super::core::{ClientCore, Pushed, cannot_send, lock};

/// Where a client finds its server: what the launcher put in the environment.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClientConfig {
    /// This process's identifier (`PMIX_NAMESPACE`, `PMIX_RANK`).
    pub proc: Proc,
    /// The server's URI (`PMIX_SERVER_URI41` …).
    pub uri: Option<String>,
    /// The server's Unix socket (`PMIX_RS_SERVER_USOCK`), preferred when present.
    pub unix_socket: Option<PathBuf>,
    pub buffer_type: BufferType,
    /// The server's library version (`PMIX_VERSION`, which OpenPMIx's servers and this
    /// crate's put in the environment they launch processes with): the layouts of the few
    /// messages OpenPMIx 5.0 and 6.1 changed follow it. `None`: a 4.x server.
    pub server_version: Option<PeerVersion>,
    /// Accept `PMIx_Put` of the standard's own attributes, whose keys are in its reserved
    /// `pmix` namespace, as OpenPMIx 4.2 does: the standard refuses every reserved key
    /// (rule P-01), but Open MPI 4.1 puts `pmix.hname` and `pmix.cpuset`. A reserved key
    /// that names no attribute is still refused. Off by default; this project's
    /// `libpmix.so.2` turns it on, to run what runs on OpenPMIx's.
    pub accept_reserved_puts: bool,
}

impl ClientConfig {
    /// The configuration a launcher gave this process through its environment.
    pub fn from_env() -> Result<Self, Error> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// The configuration in the environment `get` reads, one variable at a time: what a
    /// server's `PMIx_server_setup_fork` hands the host for the process it forks.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let var = |k: &str| get(k).filter(|v| !v.is_empty());
        let nspace = var("PMIX_NAMESPACE").ok_or_else(|| {
            Error::Status(
                Status::ERR_INIT,
                "PMIX_NAMESPACE is not set: not launched by a PMIx server".into(),
            )
        })?;
        let rank: u32 = var("PMIX_RANK")
            .and_then(|r| r.parse().ok())
            .ok_or_else(|| {
                Error::Status(Status::ERR_INIT, "PMIX_RANK is missing or invalid".into())
            })?;
        let proc = Proc::try_new(&nspace, Rank(rank))
            .map_err(|e| Error::Status(Status::ERR_INIT, e.to_string()))?;
        let uri = [
            "PMIX_SERVER_URI41",
            "PMIX_SERVER_URI4",
            "PMIX_SERVER_URI3",
            "PMIX_SERVER_URI21",
            "PMIX_SERVER_URI2",
        ]
        .iter()
        .find_map(|k| var(k));
        let buffer_type = match var("PMIX_BFROP_BUFFER_TYPE").as_deref() {
            Some("PMIX_BFROP_BUFFER_FULLY_DESC") => BufferType::FullyDescribed,
            _ => BufferType::NonDescribed,
        };
        Ok(ClientConfig {
            proc,
            uri,
            unix_socket: var("PMIX_RS_SERVER_USOCK").map(PathBuf::from),
            buffer_type,
            server_version: var("PMIX_VERSION").map(|v| PeerVersion::parse(&v)),
            accept_reserved_puts: false,
        })
    }
}

impl ClientConfig {
    /// The layouts the server speaks.
    fn server_dialect(&self) -> crate::wire::Dialect {
        (self.server_version.map(PeerVersion::dialect)).unwrap_or_default()
    }
}

type Waiters = Arc<Mutex<BTreeMap<u32, oneshot::Sender<Result<Reply, Status>>>>>;

/// A connection to a server: the socket, and the client's core that every byte goes
/// through.
pub(crate) struct Connection {
    core: Arc<Mutex<ClientCore>>,
    io: Io,
    uid: u32,
}

/// Who reads and writes the socket.
enum Io {
    /// Tasks of the runtime: a reader task, and writes awaited by the caller.
    Tasks {
        writer: tokio::sync::Mutex<WriteHalf<BoxStream>>,
        waiters: Waiters,
        reader: tokio::task::JoinHandle<()>,
    },
    /// The calling threads themselves (`blocking_io.rs`).
    Blocking(SyncIo),
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("uid", &self.uid)
            .finish()
    }
}

fn lost(why: impl std::fmt::Display) -> Error {
    Error::Status(Status::ERR_LOST_CONNECTION, why.to_string())
}

/// Where the server listens.
#[derive(Clone, Copy, Debug)]
enum Address<'a> {
    Unix(&'a Path),
    Tcp(SocketAddr),
}

/// The server's addresses from the client's configuration, in the order to try them: its
/// Unix socket when it has one, then the TCP address of its URI. A socket file can vanish
/// while the server still listens on TCP (a process that ends may clean the folder it is
/// in: Open MPI's children of a spawn do), so the URI is kept as the way in that remains.
fn server_addresses(env: &ClientConfig) -> Result<Vec<Address<'_>>, Error> {
    let mut addresses = Vec::new();
    if let Some(path) = &env.unix_socket {
        addresses.push(Address::Unix(path));
    }
    if let Some(uri) = &env.uri {
        match parse_uri(uri) {
            Some((_, addr)) => addresses.push(Address::Tcp(addr)),
            // The socket alone will do; without one, the URI was the only way.
            None if !addresses.is_empty() => {
                tracing::debug!("cannot parse server URI {uri:?}: only the socket is tried");
            }
            None => {
                return Err(Error::Status(
                    Status::ERR_INIT,
                    format!("cannot parse server URI {uri:?}"),
                ));
            }
        }
    }
    if addresses.is_empty() {
        return Err(Error::Status(
            Status::ERR_INIT,
            "no PMIX_SERVER_URI* in the environment".into(),
        ));
    }
    Ok(addresses)
}

/// Try each of `addresses` in turn with `connect`: the first stream, or `PMIX_ERR_UNREACH`
/// naming every address and why it failed.
fn first_reachable<S>(
    addresses: &[Address<'_>],
    mut connect: impl FnMut(Address<'_>) -> std::io::Result<S>,
) -> Result<S, Error> {
    let mut failures = Unreached::default();
    for &address in addresses {
        match connect(address) {
            Ok(stream) => return Ok(stream),
            Err(e) => failures.add(address, &e),
        }
    }
    Err(failures.into_error())
}

/// Connect to `address` from the calling thread.
fn connect_sync(address: Address<'_>) -> std::io::Result<SyncStream> {
    match address {
        Address::Unix(path) => std::os::unix::net::UnixStream::connect(path).map(SyncStream::Unix),
        Address::Tcp(addr) => std::net::TcpStream::connect(addr)
            .and_then(|tcp| tcp.set_nodelay(true).map(|()| SyncStream::Tcp(tcp))),
    }
}

/// [`first_reachable`] for async connects.
async fn first_reachable_async<S>(
    addresses: &[Address<'_>],
    mut connect: impl AsyncFnMut(Address<'_>) -> std::io::Result<S>,
) -> Result<S, Error> {
    let mut failures = Unreached::default();
    for &address in addresses {
        match connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(e) => failures.add(address, &e),
        }
    }
    Err(failures.into_error())
}

/// The addresses tried in vain, and why.
#[derive(Default)]
struct Unreached(Vec<String>);

impl Unreached {
    fn add(&mut self, address: Address<'_>, e: &std::io::Error) {
        tracing::debug!("server at {address:?} unreachable: {e}");
        self.0.push(format!("{address:?}: {e}"));
    }

    fn into_error(self) -> Error {
        Error::Status(Status::ERR_UNREACH, self.0.join("; "))
    }
}

impl Connection {
    /// Connect to the server named by `env` (its Unix socket when it has one) and handshake;
    /// events the server pushes go to `events`.
    pub(crate) async fn connect(
        env: &ClientConfig,
        events: mpsc::UnboundedSender<Pushed>,
    ) -> Result<Self, Error> {
        let stream =
            first_reachable_async(&server_addresses(env)?, async |address| match address {
                Address::Unix(path) => connect_unix(path).await,
                Address::Tcp(addr) => connect_tcp(addr).await,
            })
            .await?;
        let conn = Self::handshake(stream, &env.proc, env.buffer_type, uid_gid(), events).await?;
        conn.core().accept_reserved_puts = env.accept_reserved_puts;
        conn.core().set_server_dialect(env.server_dialect());
        Ok(conn)
    }

    /// Connect and handshake as [`Connection::connect`] does, for a client whose calls do
    /// their own I/O on the calling thread (the blocking client, `blocking_io.rs`).
    pub(crate) fn connect_blocking(
        env: &ClientConfig,
        events: mpsc::UnboundedSender<Pushed>,
    ) -> Result<Self, Error> {
        let stream = first_reachable(&server_addresses(env)?, connect_sync)?;
        let (hello, uid) = hello(&env.proc, env.buffer_type, uid_gid())?;
        stream.write_all(&hello).map_err(lost)?;
        let mut answer = [[0u8; 4]; 2];
        stream.read_exact(&mut answer[0]).map_err(lost)?;
        accepted(answer[0])?;
        stream.read_exact(&mut answer[1]).map_err(lost)?;
        let core = Arc::new(Mutex::new(ClientCore::new(
            env.proc.clone(),
            env.buffer_type,
            pindex(answer[1]),
        )));
        lock(&core).accept_reserved_puts = env.accept_reserved_puts;
        lock(&core).set_server_dialect(env.server_dialect());
        let io = Io::Blocking(SyncIo::start(stream, core.clone(), events)?);
        Ok(Connection { core, io, uid })
    }

    /// Connect to the server at `uri` as a tool, whose calls do their own I/O on the calling
    /// thread: with `proc` when the tool brings its identifier, else under the one the
    /// server assigns. `version` is the server's, when its rendezvous file said (else a 4.x
    /// server's layouts are spoken). Returns the connection, the tool's identifier and the
    /// server's.
    pub(crate) fn connect_tool_blocking(
        uri: &str,
        version: Option<PeerVersion>,
        proc: Option<&Proc>,
        buffer_type: BufferType,
        events: mpsc::UnboundedSender<Pushed>,
    ) -> Result<(Self, Proc, Proc), Error> {
        let (_, addr) = parse_uri(uri).ok_or_else(|| {
            Error::Status(
                Status::ERR_BAD_PARAM,
                format!("cannot parse server URI {uri:?}"),
            )
        })?;
        let stream = first_reachable(&[Address::Tcp(addr)], connect_sync)?;
        let (uid, gid) = uid_gid();
        let hello = ConnectRequest::tool(proc.cloned(), uid, gid, buffer_type).encode()?;
        stream.write_all(&hello).map_err(lost)?;
        let mut reply = vec![0u8; ToolReply::encoded_len(proc.is_none())];
        stream.read_exact(&mut reply[..4]).map_err(lost)?;
        accepted([reply[0], reply[1], reply[2], reply[3]])?;
        stream.read_exact(&mut reply[4..]).map_err(lost)?;
        let answer = ToolReply::decode(&reply, proc.is_none())?;
        let me = match (answer.assigned, proc) {
            (Some(assigned), _) => assigned,
            (None, Some(own)) => own.clone(),
            (None, None) => return Err(lost("the server assigned the tool no identifier")),
        };
        // A server does not read a tool's peer index: its headers carry 0.
        let mut core = ClientCore::new(me.clone(), buffer_type, 0);
        core.set_server_dialect(version.map(PeerVersion::dialect).unwrap_or_default());
        let core = Arc::new(Mutex::new(core));
        let io = Io::Blocking(SyncIo::start(stream, core.clone(), events)?);
        Ok((Connection { core, io, uid }, me, answer.server))
    }

    /// Handshake over an already connected stream, as the user and group `ids`.
    pub(crate) async fn handshake(
        mut stream: BoxStream,
        proc: &Proc,
        buffer_type: BufferType,
        ids: (u32, u32),
        events: mpsc::UnboundedSender<Pushed>,
    ) -> Result<Self, Error> {
        let (hello, uid) = hello(proc, buffer_type, ids)?;
        stream.write_all(&hello).await.map_err(lost)?;
        let mut word = [0u8; 4];
        stream.read_exact(&mut word).await.map_err(lost)?;
        accepted(word)?;
        stream.read_exact(&mut word).await.map_err(lost)?;
        let core = Arc::new(Mutex::new(ClientCore::new(
            proc.clone(),
            buffer_type,
            pindex(word),
        )));
        let (mut reader, writer) = tokio::io::split(stream);
        let waiters: Waiters = Arc::default();
        let (c, w) = (core.clone(), waiters.clone());
        let reader = tokio::spawn(async move {
            let mut chunk = vec![0u8; 64 * 1024];
            loop {
                let n = match reader.read(&mut chunk).await {
                    Ok(0) | Err(_) => 0,
                    Ok(n) => n,
                };
                let mut core = lock(&c);
                if n == 0 {
                    core.handle_lost();
                } else {
                    core.handle_bytes(&chunk[..n]);
                }
                deliver(&mut core, &w, &events);
                if core.is_lost() {
                    break;
                }
            }
        });
        Ok(Connection {
            core,
            io: Io::Tasks {
                writer: tokio::sync::Mutex::new(writer),
                waiters,
                reader,
            },
            uid,
        })
    }

    /// The client's core, for a task of the client that locks it on its own (event delivery).
    pub(crate) fn shared_core(&self) -> Arc<Mutex<ClientCore>> {
        self.core.clone()
    }

    /// The client's core, locked: its state and rules.
    pub(crate) fn core(&self) -> MutexGuard<'_, ClientCore> {
        lock(&self.core)
    }

    pub(crate) fn uid(&self) -> u32 {
        self.uid
    }

    /// Send a request and wait for its reply.
    pub(crate) async fn request(&self, req: &Request) -> Result<Reply, Error> {
        let no_reply = |s| Error::Status(s, format!("no reply to {:?}", req.command()));
        let waiters = match &self.io {
            Io::Tasks { waiters, .. } => waiters,
            Io::Blocking(io) => return io.request(req)?.map_err(no_reply),
        };
        let rx = self
            .queue(|core| {
                let tag = core.send_request(req).map_err(|s| cannot_send(s, req))?;
                let (tx, rx) = oneshot::channel();
                // Registered under the core's lock, which the reader takes to file replies:
                // the reply cannot come before its waiter.
                (waiters.lock().unwrap_or_else(PoisonError::into_inner)).insert(tag.0, tx);
                Ok(rx)
            })
            .await?;
        let reply = rx
            .await
            .map_err(|_| lost("the server closed the connection"))?;
        reply.map_err(no_reply)
    }

    /// Send a request that has no reply.
    pub(crate) async fn send(&self, req: &Request) -> Result<(), Error> {
        self.queue(|core| core.send_oneway(req).map_err(|s| cannot_send(s, req)))
            .await
    }

    /// A heartbeat, which the server does not answer.
    pub(crate) async fn heartbeat(&self) -> Result<(), Error> {
        self.queue(|core| {
            (core.send_heartbeat()).map_err(|s| Error::Status(s, "cannot send a heartbeat".into()))
        })
        .await
    }

    /// Let the core queue frames, under its lock, then write them.
    async fn queue<T>(
        &self,
        queue: impl FnOnce(&mut ClientCore) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let writer = match &self.io {
            Io::Tasks { writer, .. } => writer,
            Io::Blocking(io) => return io.send(queue),
        };
        let (out, frames) = {
            let mut core = self.core();
            let out = queue(&mut core)?;
            (out, core.drain_transmit())
        };
        let mut w = writer.lock().await;
        for f in frames {
            w.write_all(&f).await.map_err(lost)?;
        }
        Ok(out)
    }

    /// Whether calls do their own I/O on the calling thread.
    pub(crate) fn is_blocking(&self) -> bool {
        matches!(self.io, Io::Blocking(_))
    }

    /// End the connection at finalize: stop reading and shut the writing side, so that the
    /// server sees the connection end now, not when the last handle to the client goes (a
    /// finalized process is no longer registered for anything, v5.0 §17.3.15).
    pub(crate) async fn finish(&self) {
        self.close();
        if let Io::Tasks { writer, .. } = &self.io {
            // A connection already lost has nothing left to end.
            let _ = writer.lock().await.shutdown().await;
        }
    }

    /// Stop reading (the writing side ends with the connection, or at [`Self::finish`]).
    pub(crate) fn close(&self) {
        match &self.io {
            Io::Tasks { reader, .. } => reader.abort(),
            Io::Blocking(io) => io.close(),
        }
    }
}

/// The first message of a client of user and group `(uid, gid)`, and the uid it claims (the
/// server checks it against the kernel's peer credentials).
fn hello(
    proc: &Proc,
    buffer_type: BufferType,
    (uid, gid): (u32, u32),
) -> Result<(Vec<u8>, u32), Error> {
    let hello = ConnectRequest::simple_client(proc.clone(), uid, gid, buffer_type).encode()?;
    Ok((hello, uid))
}

/// The server's first word: whether it accepted the connection.
fn accepted(word: [u8; 4]) -> Result<(), Error> {
    match decode_status(word) {
        Status::SUCCESS => Ok(()),
        status => Err(Error::Status(
            status,
            "the server refused the connection".into(),
        )),
    }
}

/// The server's second word: the index it gave this peer.
fn pindex(word: [u8; 4]) -> i32 {
    u32::from_be_bytes(word) as i32
}

/// Hand the core's completed replies to their waiters and its events to the event queue.
fn deliver(core: &mut ClientCore, waiters: &Waiters, events: &mpsc::UnboundedSender<Pushed>) {
    while let Some((tag, reply)) = core.poll_reply() {
        let waiter = (waiters.lock().unwrap_or_else(PoisonError::into_inner)).remove(&tag.0);
        if let Some(tx) = waiter {
            let _ = tx.send(reply);
        }
    }
    for pushed in core.drain_pushed() {
        let _ = events.send(pushed);
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
    }
}
