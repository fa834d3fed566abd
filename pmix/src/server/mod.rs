//! The server side: what a resource manager embeds to serve its local clients.
//!
//! The logic is the sans-IO `ServerCore` of `server/core.rs`, internal to the crate
//! (connections, requests, fences, held gets); [`Server`] is the tokio driver that owns the
//! sockets, timers and host upcalls and feeds the core one event at a time from a single
//! task, so the core needs no locks.
//!
//! ```text
//!   accept loops ──► connection tasks ──(handshake, frames)──► driver task ──► ServerCore
//!                           ▲                                      │  actions
//!                           └──────────── frames to send ◄─────────┤
//!                                  host upcalls (spawned) ◄────────┤
//!                                  timers (spawned)       ◄────────┘
//! ```

#[cfg(feature = "runtime")]
mod config;
pub(crate) mod core;
pub mod credential;
pub(crate) mod env;

#[cfg(feature = "runtime")]
mod budget;
#[cfg(feature = "runtime")]
mod driver;
#[cfg(feature = "runtime")]
mod inventory;
pub mod limits;
#[cfg(all(feature = "runtime", feature = "topology"))]
mod topology;

#[cfg(feature = "runtime")]
pub use crate::host::{Host, NoHost};
#[cfg(feature = "runtime")]
pub use config::{CredentialKey, Roles, ServerConfig};
#[cfg(feature = "runtime")]
pub use driver::{SERVER_VERSION, Server};
pub use limits::{Held, Limits};
// The upcalls as messages, for a host in another process.
#[cfg(feature = "runtime")]
pub(crate) use core::IntoHost;
pub use core::{HostCall, HostResult};
pub use env::inherited_server_vars;
