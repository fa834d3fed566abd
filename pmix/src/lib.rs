//! An independent implementation of the PMIx Standard (v5.0), wire-compatible with OpenPMIx 4.2.
//!
//! The crate is built in layers; dependencies point down only, and each layer is testable
//! without the ones above it:
//!
//! ```text
//!   drivers    server::Server, client::Client     async, tokio   -- feature `runtime`
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

#![forbid(unsafe_code)]

#[cfg(feature = "runtime")]
pub mod client;
pub mod codec;
mod error;
pub mod events;
pub mod model;
pub mod query;
pub mod retrieval;
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
