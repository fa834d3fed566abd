//! What the core and its driver exchange: the actions the driver carries out, among them the
//! host upcalls of `upcall.rs`.

use crate::model::Status;
use crate::wire::Tag;

use super::upcall::HostCall;

/// A connection, numbered by the driver.
pub(crate) type ConnId = u64;

/// Who a connecting peer is, as the operating system vouches for it, never as the peer says:
/// the uid always; the gid and pid where the transport can tell (a Unix socket's
/// `SO_PEERCRED`; on TCP loopback the kernel's socket table gives the uid alone). A peer
/// whose transport can vouch for nothing is refused (DESIGN §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerCred {
    pub uid: u32,
    pub gid: Option<u32>,
    pub pid: Option<i32>,
}

impl PeerCred {
    /// A peer whose uid and gid are both known.
    pub fn new(uid: u32, gid: u32) -> Self {
        PeerCred {
            uid,
            gid: Some(gid),
            pid: None,
        }
    }
}

/// What the driver must do.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Action {
    /// Answer a peer's connect message with `reply`, raw bytes written before any frame. When
    /// `refused` gives a reason, close the connection after writing.
    Handshake {
        conn: ConnId,
        reply: Vec<u8>,
        refused: Option<String>,
    },
    /// The answer to the host's direct-modex request `op` (see [`super::ServerCore::dmodex_request`]).
    DmodexReply {
        op: u64,
        result: Result<Vec<u8>, Status>,
    },
    Send {
        conn: ConnId,
        tag: Tag,
        payload: Vec<u8>,
    },
    Close {
        conn: ConnId,
        reason: String,
    },
    /// Call the host; answer with [`super::ServerCore::handle_host`] and the same `op`.
    Host {
        op: u64,
        call: HostCall,
    },
    /// Call [`super::ServerCore::handle_timeout`] with `op` after `after_s` seconds.
    Timer {
        op: u64,
        after_s: u32,
    },
}
