//! Byte-stream transports: how peers connect and accept (DESIGN §3.6).
//!
//! The drivers speak to any [`Stream`] (`AsyncRead + AsyncWrite`). An [`Acceptor`] yields
//! accepted streams with the peer's credentials when the operating system can vouch for them:
//!
//! - [`TcpAcceptor`]: TCP on loopback, what OpenPMIx 4.2 clients use (they assert their
//!   uid/gid in the handshake; nothing verifies it);
//! - [`UnixAcceptor`]: a Unix socket; the kernel reports the peer's uid, gid and pid
//!   (`SO_PEERCRED`), which the server checks against the registration;
//! - [`memory`]: an in-process duplex pair, for tests and embedding.
//!
//! The simulator brings its own acceptor over turmoil's network.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::Path;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::sync::mpsc;

/// The uid and gid this process runs as (read from `/proc`, so no libc call is needed): what
/// a client asserts in its handshake, and what a launcher registers its children with.
pub fn uid_gid() -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or((0, 0), |m| (m.uid(), m.gid()))
}

/// A bidirectional byte stream.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Stream for T {}

/// A boxed stream.
pub type BoxStream = Box<dyn Stream>;

/// Credentials of a peer, as the operating system reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerCred {
    pub uid: u32,
    pub gid: u32,
    pub pid: Option<i32>,
}

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
        let (stream, _) = self.0.accept().await?;
        // Small request/reply messages: never wait to coalesce them. Failing to set the
        // option only costs latency, so the connection is kept either way.
        let _ = stream.set_nodelay(true);
        Ok(Accepted {
            stream: Box::new(stream),
            peer: None,
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
            gid: c.gid(),
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
