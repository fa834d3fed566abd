//! An independent implementation of the PMIx Standard (v5.0), wire-compatible with OpenPMIx
//! 4.2, 5.0 and 6.1.
//!
//! The crate is built in layers; dependencies point down only, and each layer is testable
//! without the ones above it:
//!
//! ```text
//!   drivers    server::Server, client::Client     async, tokio   -- feature `runtime`
//!              host (the Host trait and its kit),
//!              transport (TCP, Unix, in-memory)
//!   state      server::ServerCore (fences,        sans-IO        -- `server`, `retrieval`,
//!              held gets, direct modex),                            `store`
//!              retrieval (the get rules), store
//!   wire       framing, handshake, commands       sans-IO        -- `wire`
//!   codec      the PMIx_Data_* buffer             sans-IO        -- `codec`
//!   model      the standard's data types          sans-IO        -- `model`
//! ```
//!
//! The drivers only move bytes and time: every decision (accept a connection, complete a
//! fence, answer or hold a get, call the host) is made by the sans-IO state and handed to the
//! driver as an action, which is what lets the simulator run the same code.
//!
//! `cargo check -p pmix --no-default-features` builds the sans-IO layers alone: no tokio, no
//! sockets, no clocks.
//!
//! ```
//! use pmix::codec::DataBuffer;
//! use pmix::model::{attr, Info};
//!
//! let mut buf = DataBuffer::new();
//! buf.pack(&[Info::new(attr::JOB_SIZE, 4)])?;
//! let infos: Vec<Info> = buf.unpack(1)?;
//! assert_eq!(infos[0].value.to_u64(), Some(4));
//! # Ok::<(), pmix::Error>(())
//! ```
//!
//! A host embeds the server ([`server::Server`], its upcalls a [`server::Host`]), registers
//! a job and its processes, and each process's application uses the client
//! ([`client::Client`], or [`client::blocking::Client`] on plain threads). A process the host
//! launches finds its server through the environment `Server::setup_fork` gives it
//! (`Client::init()`); here the client is in the same program, over the in-memory transport:
//!
//! ```
//! use pmix::client::Client;
//! use pmix::codec::BufferType;
//! use pmix::model::{Info, Nspace, Proc, Rank, Scope, Value, attr};
//! use pmix::server::{NoHost, Server, ServerConfig};
//! use pmix::transport::{PeerCred, memory, uid_gid};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! // The host: a server for this node, without a socket, and a job of two processes.
//! let dir = std::env::temp_dir().join(format!("pmix-doc-{}", std::process::id()));
//! let config = ServerConfig::new(dir, "node0".into()).tcp(false).unix_socket(false);
//! let server = Server::start(config, NoHost).await?;
//! let job = Nspace::new("job")?;
//! let info = vec![Info::new(attr::JOB_SIZE, 2), Info::new(attr::LOCAL_PEERS, "0,1".into())];
//! server.register_nspace(job.clone(), info).await?;
//! let (uid, gid) = uid_gid();
//! let (acceptor, connector) = memory();
//! server.serve(acceptor);
//!
//! // Each process: connect, put, commit, fence, get.
//! let mut clients = Vec::new();
//! for rank in 0..2 {
//!     let me = Proc::new(job.clone(), Rank(rank));
//!     server.register_client(me.clone(), uid, gid).await?;
//!     let stream = connector.connect(Some(PeerCred::new(uid, gid)))?;
//!     let client = Client::init_over(stream, me, BufferType::NonDescribed).await?;
//!     client.put(Scope::GLOBAL, "endpoint", Value::string(format!("ep-{rank}")))?;
//!     client.commit().await?;
//!     clients.push(client);
//! }
//! let fences: Vec<_> = clients.iter().map(|c| c.fence_nb(&[], &[])).collect();
//! for f in fences {
//!     f.await?;
//! }
//! let peer = Proc::new(job.clone(), Rank(1));
//! let endpoint = clients[0].get(Some(&peer), "endpoint", &[]).await?;
//! assert_eq!(endpoint, Value::string("ep-1"));
//! let everyone = Proc::new(job, Rank::WILDCARD);
//! let size: u32 = clients[1].get_attr(Some(&everyone), attr::JOB_SIZE, &[]).await?;
//! assert_eq!(size, 2);
//! for c in &clients {
//!     c.finalize().await?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })
//! # }
//! ```

#![forbid(unsafe_code)]
// Without the drivers (`--no-default-features`) the sans-IO layers are built to show they
// need nothing above them; their crate-internal items then have no caller in the build.
#![cfg_attr(not(feature = "runtime"), allow(dead_code, unreachable_pub))]

#[cfg(feature = "runtime")]
pub mod client;
pub mod codec;
mod error;
pub mod events;
pub mod fuzzing;
#[cfg(feature = "runtime")]
pub mod host;
pub mod model;
pub mod query;
pub(crate) mod retrieval;
pub mod server;
pub mod store;
#[cfg(feature = "topology")]
pub mod topology;
#[cfg(feature = "runtime")]
pub mod transport;
pub mod wire;

pub use error::Error;
pub use model::Status;

/// The README's examples, compiled and run as doctests so they cannot drift (STYLE 19).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
