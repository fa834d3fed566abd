//! The client's connection to its server: rendezvous, handshake, and requests matched to
//! replies by tag.
//!
//! One task reads frames and hands each reply to the request waiting for its tag, and each
//! event notification (tag 0) to the client's event queue; requests are written under a lock
//! so frames never interleave. A lost connection completes every waiting request with
//! `PMIX_ERR_LOST_CONNECTION` and raises that event in the process (PMIx v5.0 §10.1).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt, WriteHalf};
use tokio::sync::{mpsc, oneshot};

use crate::Error;
use crate::codec::BufferType;
use crate::events::Event;
use crate::model::{DataRange, Proc, Rank, Status};
use crate::transport::{BoxStream, connect_tcp, connect_unix, uid_gid};
use crate::wire::handshake::{ConnectRequest, decode_status};
use crate::wire::uri::parse_uri;
use crate::wire::{Command, Frame, FrameDecoder, Notification, Reply, Request, Tag};

/// Where a client finds its server: what the launcher put in the environment.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// This process's identifier (`PMIX_NAMESPACE`, `PMIX_RANK`).
    pub proc: Proc,
    /// The server's URI (`PMIX_SERVER_URI41` …).
    pub uri: Option<String>,
    /// The server's Unix socket (`PMIX_RS_SERVER_USOCK`), preferred when present.
    pub unix_socket: Option<PathBuf>,
    pub buffer_type: BufferType,
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
        })
    }
}

type Waiters = Arc<Mutex<BTreeMap<u32, oneshot::Sender<Vec<u8>>>>>;

/// A connection to a server.
pub(crate) struct Connection {
    writer: tokio::sync::Mutex<WriteHalf<BoxStream>>,
    waiters: Waiters,
    next_tag: AtomicU32,
    pindex: i32,
    buffer_type: BufferType,
    uid: u32,
    reader: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("pindex", &self.pindex)
            .finish()
    }
}

fn lost(why: impl std::fmt::Display) -> Error {
    Error::Status(Status::ERR_LOST_CONNECTION, why.to_string())
}

impl Connection {
    /// Connect to the server named by `env` (its Unix socket when it has one) and handshake;
    /// events the server pushes go to `events`.
    pub(crate) async fn connect(
        env: &ClientConfig,
        events: mpsc::UnboundedSender<Event>,
    ) -> Result<Self, Error> {
        let unreachable = |e: std::io::Error| Error::Status(Status::ERR_UNREACH, e.to_string());
        let stream = match (&env.unix_socket, &env.uri) {
            (Some(path), _) => connect_unix(path).await.map_err(unreachable)?,
            (None, Some(uri)) => {
                let (_, addr) = parse_uri(uri).ok_or_else(|| {
                    Error::Status(Status::ERR_INIT, format!("cannot parse server URI {uri:?}"))
                })?;
                connect_tcp(addr).await.map_err(unreachable)?
            }
            (None, None) => {
                return Err(Error::Status(
                    Status::ERR_INIT,
                    "no PMIX_SERVER_URI* in the environment".into(),
                ));
            }
        };
        Self::handshake(stream, &env.proc, env.buffer_type, events).await
    }

    /// Handshake over an already connected stream.
    pub(crate) async fn handshake(
        mut stream: BoxStream,
        proc: &Proc,
        buffer_type: BufferType,
        events: mpsc::UnboundedSender<Event>,
    ) -> Result<Self, Error> {
        let (uid, gid) = uid_gid();
        let hello = ConnectRequest::simple_client(proc.clone(), uid, gid, buffer_type).encode()?;
        stream.write_all(&hello).await.map_err(lost)?;
        let mut word = [0u8; 4];
        stream.read_exact(&mut word).await.map_err(lost)?;
        let status = decode_status(word);
        if status != Status::SUCCESS {
            return Err(Error::Status(
                status,
                "the server refused the connection".into(),
            ));
        }
        stream.read_exact(&mut word).await.map_err(lost)?;
        let pindex = u32::from_be_bytes(word) as i32;
        let (mut reader, writer) = tokio::io::split(stream);
        let waiters: Waiters = Arc::default();
        let w = waiters.clone();
        let me = proc.clone();
        let reader = tokio::spawn(async move {
            let mut decoder = FrameDecoder::default();
            let mut chunk = vec![0u8; 64 * 1024];
            loop {
                let n = match reader.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                decoder.handle_bytes(&chunk[..n]);
                while let Ok(Some(frame)) = decoder.next_frame() {
                    if frame.tag.is_dynamic() {
                        let waiter = w
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .remove(&frame.tag.0);
                        if let Some(tx) = waiter {
                            let _ = tx.send(frame.payload);
                        }
                    } else if frame.tag == Tag::NOTIFY {
                        // A notification that does not decode is dropped: the server's bug
                        // must not end the connection.
                        if let Ok(n) = Notification::decode(&frame.payload, buffer_type) {
                            let _ = events.send(n.into());
                        }
                    }
                }
            }
            // Lost: wake every waiter with an empty reply, and tell the process.
            w.lock().unwrap_or_else(PoisonError::into_inner).clear();
            let _ = events.send(Event {
                status: Status::ERR_LOST_CONNECTION,
                source: me.clone(),
                range: DataRange::PROC_LOCAL,
                info: Vec::new(),
            });
        });
        Ok(Connection {
            writer: tokio::sync::Mutex::new(writer),
            waiters,
            next_tag: AtomicU32::new(Tag::FIRST_DYNAMIC.0),
            pindex,
            buffer_type,
            uid,
            reader,
        })
    }

    pub(crate) fn buffer_type(&self) -> BufferType {
        self.buffer_type
    }

    pub(crate) fn uid(&self) -> u32 {
        self.uid
    }

    fn tag(&self) -> Tag {
        loop {
            let t = self.next_tag.fetch_add(1, Ordering::Relaxed);
            if Tag(t).is_dynamic() {
                return Tag(t);
            }
            // Wrapped around: start again above the reserved tags.
            let _ = self.next_tag.compare_exchange(
                t.wrapping_add(1),
                Tag::FIRST_DYNAMIC.0,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
    }

    /// Send a request and wait for its reply.
    pub(crate) async fn request(&self, req: &Request) -> Result<Reply, Error> {
        let tag = self.tag();
        let (tx, rx) = oneshot::channel();
        self.waiters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(tag.0, tx);
        self.write(tag, req).await?;
        let payload = rx
            .await
            .map_err(|_| lost("the server closed the connection"))?;
        let command: Command = req.command();
        Reply::decode(command, &payload, self.buffer_type)
    }

    /// Send a request that has no reply.
    pub(crate) async fn send(&self, req: &Request) -> Result<(), Error> {
        self.write(self.tag(), req).await
    }

    /// A heartbeat: an empty frame under `PMIX_PTL_TAG_HEARTBEAT`, as OpenPMIx's clients send
    /// it and its servers' heartbeat sensor reads it. No reply.
    pub(crate) async fn heartbeat(&self) -> Result<(), Error> {
        self.write_payload(Tag::HEARTBEAT, Vec::new()).await
    }

    /// Frame `req` under `tag` and write it whole.
    async fn write(&self, tag: Tag, req: &Request) -> Result<(), Error> {
        self.write_payload(tag, req.encode(self.buffer_type)?).await
    }

    async fn write_payload(&self, tag: Tag, payload: Vec<u8>) -> Result<(), Error> {
        let frame = Frame {
            pindex: self.pindex,
            tag,
            payload,
        }
        .encode()?;
        let mut w = self.writer.lock().await;
        w.write_all(&frame).await.map_err(lost)
    }

    /// Stop reading; the server sees the connection close.
    pub(crate) fn close(&self) {
        self.reader.abort();
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}
