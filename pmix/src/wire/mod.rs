//! The wire layer: OpenPMIx 4.2's framing, connect handshake and typed messages, with the
//! few layouts 5.0 and 6.1 changed. No I/O.
//!
//! The PMIx Standard defines no wire protocol; this one is OpenPMIx's, described from
//! observation in `WIRE.md` and checked byte for byte against captured traffic
//! (`tests/wire_captures.rs`). The drivers feed socket bytes in and write the bytes these types
//! produce; nothing here touches a socket or a clock.
//!
//! - [`frame`]: the 16-byte header and a stream splitter;
//! - [`handshake`]: the connect message (host-order header) and the server's answers;
//! - [`command`]: the 39 command codes;
//! - [`message`]: the typed core requests, the replies, and server-pushed notifications;
//! - [`ops`]: the typed requests of every other command and the pushed I/O-forwarding message;
//! - [`op_reply`]: the typed replies to those commands;
//! - [`version`]: a peer's version, and the layouts that depend on it ([`Dialect`]).

pub mod command;
pub mod fields;
pub mod frame;
pub mod handshake;
pub mod message;
pub mod op_reply;
pub mod ops;
pub mod uri;
pub mod version;

pub use command::Command;
pub use frame::{Frame, FrameDecoder, Header, Tag};
pub use handshake::{ConnectRequest, PeerType};
pub use message::{CommitBucket, Notification, ProcData, Reply, Request};
pub use op_reply::{JobData, OpReply};
pub use ops::{IofDelivery, Op};
pub use version::{Dialect, PeerVersion};
