//! Byte-stream transports: how peers connect and accept (DESIGN §3.6).
//!
//! The drivers speak to any [`Stream`] (`AsyncRead + AsyncWrite`). An [`Acceptor`] yields
//! accepted streams with the peer's credentials when the operating system can vouch for them;
//! the server checks them against the registration and refuses a peer with none (identity is
//! the transport's business, never the peer's word):
//!
//! - [`TcpAcceptor`]: TCP, what OpenPMIx 4.2 clients use. They state a uid and gid in their
//!   connect message, which proves nothing; on loopback the acceptor reads the owner of the
//!   peer's socket from the kernel's socket table ([`socket_table`]), and a peer elsewhere
//!   has no credentials;
//! - [`UnixAcceptor`]: a Unix socket; the kernel reports the peer's uid, gid and pid
//!   (`SO_PEERCRED`);
//! - [`memory`]: an in-process duplex pair, for tests and embedding: the connecting side
//!   states the credentials, so only code inside the process can use it.
//!
//! A host that must accept peers from other machines brings an [`Acceptor`] of its own that
//! authenticates them (a tunnel, a security service) and reports who they are. The simulator
//! brings its own acceptor over turmoil's network.

mod sock_diag;
pub mod socket_table;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::sync::mpsc;

/// The uid and gid this process runs as (read from `/proc`, so no libc call is needed): what
/// a client asserts in its handshake, and what a launcher registers its children with.
pub fn uid_gid() -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or((0, 0), |m| (m.uid(), m.gid()))
}

/// Where this machine's rendezvous files go by default: `$TMPDIR` when set to an absolute
/// path, else `/tmp` (a server writes them there, a tool looks there).
pub(crate) fn default_tmpdir() -> PathBuf {
    match std::env::var_os("TMPDIR").map(PathBuf::from) {
        Some(p) if p.is_absolute() => p,
        _ => PathBuf::from("/tmp"),
    }
}

/// The kernel's host name, or `localhost` when it cannot be read.
pub(crate) fn kernel_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// A bidirectional byte stream.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Stream for T {}

/// A boxed stream.
pub type BoxStream = Box<dyn Stream>;

pub use crate::server::core::PeerCred;

/// An accepted connection.
pub struct Accepted {
    pub stream: BoxStream,
    pub peer: Option<PeerCred>,
}

impl std::fmt::Debug for Accepted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accepted")
            .field("peer", &self.peer)
            .finish()
    }
}

/// A source of incoming connections.
pub trait Acceptor: Send + 'static {
    fn accept(&mut self) -> impl Future<Output = io::Result<Accepted>> + Send;
}

/// TCP connections.
#[derive(Debug)]
pub struct TcpAcceptor(pub TcpListener);

impl TcpAcceptor {
    /// Listen on `addr` (port 0 for an ephemeral port).
    pub async fn bind(addr: SocketAddr) -> io::Result<Self> {
        Ok(TcpAcceptor(TcpListener::bind(addr).await?))
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

impl Acceptor for TcpAcceptor {
    async fn accept(&mut self) -> io::Result<Accepted> {
        let (stream, peer_addr) = self.0.accept().await?;
        // Small request/reply messages: never wait to coalesce them. Failing to set the
        // option only costs latency, so the connection is kept either way.
        let _ = stream.set_nodelay(true);
        // Read at once, while the peer's socket is surely still open: a peer that closed
        // would leave no owner to find (and no one to serve).
        let peer = match stream.local_addr() {
            Ok(ours) => match socket_table::loopback_peer_uid(ours, peer_addr) {
                Ok(uid) => uid.map(|uid| PeerCred {
                    uid,
                    gid: None,
                    pid: None,
                }),
                Err(e) => {
                    tracing::warn!("cannot read the socket table for {peer_addr}: {e}");
                    None
                }
            },
            Err(_) => None,
        };
        Ok(Accepted {
            stream: Box::new(stream),
            peer,
        })
    }
}

/// Unix-socket connections, with the peer's kernel-verified credentials.
#[derive(Debug)]
pub struct UnixAcceptor(pub UnixListener);

impl UnixAcceptor {
    pub fn bind(path: &Path) -> io::Result<Self> {
        Ok(UnixAcceptor(UnixListener::bind(path)?))
    }
}

impl Acceptor for UnixAcceptor {
    async fn accept(&mut self) -> io::Result<Accepted> {
        let (stream, _) = self.0.accept().await?;
        let peer = stream.peer_cred().ok().map(|c| PeerCred {
            uid: c.uid(),
            gid: Some(c.gid()),
            pid: c.pid(),
        });
        Ok(Accepted {
            stream: Box::new(stream),
            peer,
        })
    }
}

/// Connect over TCP.
pub async fn connect_tcp(addr: SocketAddr) -> io::Result<BoxStream> {
    let stream = TcpStream::connect(addr).await?;
    // Requests and replies are small and answered one by one: never wait to coalesce them.
    stream.set_nodelay(true)?;
    Ok(Box::new(stream))
}

/// Connect over a Unix socket.
pub async fn connect_unix(path: &Path) -> io::Result<BoxStream> {
    Ok(Box::new(UnixStream::connect(path).await?))
}

/// The accepting end of an in-memory transport.
#[derive(Debug)]
pub struct MemoryAcceptor {
    incoming: mpsc::UnboundedReceiver<Accepted>,
}

impl Acceptor for MemoryAcceptor {
    async fn accept(&mut self) -> io::Result<Accepted> {
        self.incoming
            .recv()
            .await
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "connector dropped"))
    }
}

/// The connecting end of an in-memory transport.
#[derive(Clone, Debug)]
pub struct MemoryConnector {
    outgoing: mpsc::UnboundedSender<Accepted>,
}

impl MemoryConnector {
    /// Open a connection; `peer` is what the acceptor will report as the peer's credentials.
    pub fn connect(&self, peer: Option<PeerCred>) -> io::Result<BoxStream> {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        self.outgoing
            .send(Accepted {
                stream: Box::new(theirs),
                peer,
            })
            .map_err(|_| io::Error::new(io::ErrorKind::ConnectionRefused, "acceptor dropped"))?;
        Ok(Box::new(ours))
    }
}

/// An in-memory transport: connections made with the connector arrive at the acceptor.
pub fn memory() -> (MemoryAcceptor, MemoryConnector) {
    let (tx, rx) = mpsc::unbounded_channel();
    (
        MemoryAcceptor { incoming: rx },
        MemoryConnector { outgoing: tx },
    )
}
