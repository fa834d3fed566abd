//! A peer's connect message: clients are checked against their registration and answered at
//! once; tools and launchers wait for the host's `tool_connected`.
//!
//! Who a peer is comes from its transport ([`PeerCred`]: the kernel's word), never from the
//! message: the uid and gid it states, and a `native` credential (the same two numbers), are
//! claims anyone can write. The rules, in order:
//!
//! 1. a peer whose transport vouches for no one is refused (DESIGN §6);
//! 2. a stated uid or gid that contradicts the kernel's is refused;
//! 3. a client must run as the uid (and, where the kernel tells, the gid) its host registered
//!    for its rank; a tool or launcher as one of the users whose tools the host admits
//!    ([`ServerCore::with_tool_uids`]; `pmixrun` and [`crate::server::Server`]: the server's
//!    own user);
//! 4. a rank that already has a live connection keeps it: a second connection for it is
//!    refused with `PMIX_ERR_EXISTS`. A process that finalized, or whose connection closed,
//!    may connect again.
//!
//! A tool may bring its own identifier, even that of a process of a job served here (a
//! launched process that calls `PMIx_tool_init` keeps the identity its environment gives):
//! it is of a user the host admitted, and its connection ending is not that process ending.
//!
//! Each refusal is logged with its reason by the driver ([`Action::Handshake`]'s `refused`).
//!
//! A peer must encode as `v41` does (`wire::handshake::speaks_v41`: 4.2's, and 5.0's and
//! 6.1's `v51` and `v61`, which differ only in types 4.2 does not know); one that names an
//! older encoding is refused with `PMIX_ERR_NOT_SUPPORTED` before anything else. A 5.0 or
//! 6.1 scheduler (flag 10) is admitted as a tool that brings its identifier.
//!
//! Every accepted connection keeps the version its peer stated, which chooses the layouts
//! of the few messages OpenPMIx 5.0 and 6.1 changed (`wire::version`). The first of them is
//! the answer to a singleton (flag 9): a 4.x singleton reads the tool form, a 5.0 or later
//! one the client form (status and peer index), since those serve singletons on their client
//! path. Either way it is admitted as a tool is (rule 3 and the host's `tool_connected`):
//! its namespace was registered by no host.

use std::collections::BTreeMap;

use crate::codec::BufferType;
use crate::model::{Info, Proc, Status, attr};
use crate::wire::handshake::{ToolReply, encode_client_reply, speaks_v41};
use crate::wire::{ConnectRequest, PeerType, PeerVersion};

use super::interface::{Action, ConnId, PeerCred};
use super::shared::{Conn, Shared};
use super::upcall::{HostCall, HostResult};

/// A refusal: the status the peer reads and the reason the server logs.
type Refusal = (Status, String);

/// A tool or launcher whose connection waits for the host's `tool_connected`.
#[derive(Clone, Debug)]
struct ConnectingTool {
    conn: ConnId,
    peer_type: PeerType,
    /// The identifier it brought, if any.
    proc: Option<Proc>,
    buffer_type: BufferType,
    /// Who the kernel says it is.
    peer: PeerCred,
    /// The library version it stated.
    version: PeerVersion,
}

/// Who may connect, and the tools waiting for the host to admit them.
#[derive(Debug, Default)]
pub(super) struct Admission {
    /// The users whose tools and launchers may connect.
    pub(super) tool_uids: Vec<u32>,
    /// The next client's peer index.
    next_pindex: u32,
    /// The tools waiting for the host's `tool_connected`, by the op of its call.
    at_host: BTreeMap<u64, ConnectingTool>,
}

impl Admission {
    /// A peer's connect message: see `ServerCore::handle_hello`.
    pub(super) fn hello(
        &mut self,
        cx: &mut Shared,
        conn: ConnId,
        req: &ConnectRequest,
        peer: Option<PeerCred>,
    ) {
        let version = PeerVersion::parse(&req.version);
        tracing::debug!(
            "connection {conn}: {:?} peer of OpenPMIx {version} ({:?}, {})",
            req.peer_type,
            req.version,
            req.bfrops
        );
        let encoding = if speaks_v41(&req.bfrops) {
            Ok(())
        } else {
            let why = format!(
                "{:?} peer of OpenPMIx {version} encodes as {:?}; this server speaks v41",
                req.peer_type, req.bfrops
            );
            Err((Status::ERR_NOT_SUPPORTED, why))
        };
        let checked = encoding
            .and_then(|()| Self::verified(req, peer))
            .and_then(|peer| {
                if req.peer_type.gets_tool_reply() {
                    self.tool_hello(cx, conn, req, peer)
                } else {
                    self.client(cx, conn, req, peer).map(|pindex| {
                        cx.push(Action::Handshake {
                            conn,
                            reply: encode_client_reply(Status::SUCCESS, pindex).to_vec(),
                            refused: None,
                        })
                    })
                }
            });
        if let Err((status, why)) = checked {
            refuse(cx, conn, status, why);
        }
    }

    /// Rules 1 and 2: the kernel's identity of the peer, if it vouches for one that agrees
    /// with what the message states.
    fn verified(req: &ConnectRequest, peer: Option<PeerCred>) -> Result<PeerCred, Refusal> {
        let who = match &req.proc {
            Some(p) => format!("{:?} peer {p}", req.peer_type),
            None => format!("{:?} peer", req.peer_type),
        };
        let Some(peer) = peer else {
            let why = format!("{who}: its transport cannot tell who it is");
            return Err((Status::ERR_INVALID_CRED, why));
        };
        let stated = req.uid_gid.or_else(|| req.native_uid_gid());
        if let Some((uid, gid)) = stated
            && (uid != peer.uid || peer.gid.is_some_and(|g| g != gid))
        {
            let why = format!(
                "{who} states uid/gid {uid}/{gid}, the kernel says uid {} gid {:?}",
                peer.uid, peer.gid
            );
            return Err((Status::ERR_INVALID_CRED, why));
        }
        Ok(peer)
    }

    /// A tool's or launcher's connect message: check who it is, then ask the host.
    fn tool_hello(
        &mut self,
        cx: &mut Shared,
        conn: ConnId,
        req: &ConnectRequest,
        peer: PeerCred,
    ) -> Result<(), Refusal> {
        if !self.tool_uids.contains(&peer.uid) {
            let why = format!(
                "{:?} peer of uid {}: this server admits tools of uids {:?}",
                req.peer_type, peer.uid, self.tool_uids
            );
            return Err((Status::ERR_NO_PERMISSIONS, why));
        }
        let mut info = req.info.clone();
        info.push(Info::new(attr::VERSION_INFO, req.version.clone()));
        // The identity the kernel gave, for the host's own decisions (§16.3.19.2).
        info.push(Info::new(attr::USERID, peer.uid));
        if let Some(gid) = peer.gid {
            info.push(Info::new(attr::GRPID, gid));
        }
        if let Some(p) = &req.proc {
            info.push(Info::new(attr::NSPACE, p.nspace.as_str().to_owned()));
            info.push(Info::new(attr::RANK, p.rank));
        }
        let tool = ConnectingTool {
            conn,
            peer_type: req.peer_type,
            proc: req.proc.clone(),
            buffer_type: req.buffer_type,
            peer,
            version: PeerVersion::parse(&req.version),
        };
        let op = cx.call_host(HostCall::ToolConnected { info });
        self.at_host.insert(op, tool);
        Ok(())
    }

    /// Whether the host call `op` is a tool's `tool_connected`.
    pub(super) fn awaits_host(&self, op: u64) -> bool {
        self.at_host.contains_key(&op)
    }

    /// The host answered `tool_connected`: accept the tool under its identifier or refuse it.
    pub(super) fn host_answered(&mut self, cx: &mut Shared, op: u64, result: HostResult) {
        let Some(tool) = self.at_host.remove(&op) else {
            return;
        };
        let proc = match (result.output::<Proc>(), &tool.proc) {
            (Ok(p), _) => p,
            // A host without tool support: a tool that brought its identifier keeps it.
            (Err(Status::ERR_NOT_SUPPORTED), Some(own)) => own.clone(),
            (Err(s), _) => {
                let why = format!("host refused {:?} peer {:?}", tool.peer_type, tool.proc);
                refuse(cx, tool.conn, s, why);
                return;
            }
        };
        let singleton = tool.peer_type == PeerType::SINGLETON_CLIENT;
        let reply = if singleton && tool.version.dialect().singleton_reads_client_reply() {
            encode_client_reply(Status::SUCCESS, self.pindex()).to_vec()
        } else {
            let reply = ToolReply {
                status: Status::SUCCESS,
                assigned: tool.peer_type.needs_id().then(|| proc.clone()),
                server: cx.id.clone(),
                security_status: Status::SUCCESS,
            };
            reply.encode()
        };
        cx.push(Action::Handshake {
            conn: tool.conn,
            reply,
            refused: None,
        });
        cx.conns.insert(
            tool.conn,
            Conn {
                proc,
                buffer_type: tool.buffer_type,
                tool: true,
                uid: tool.peer.uid,
                gid: tool.peer.gid,
                version: tool.version,
            },
        );
    }

    /// The next client's peer index.
    fn pindex(&mut self) -> u32 {
        let pindex = self.next_pindex;
        self.next_pindex = self.next_pindex.wrapping_add(1);
        pindex
    }

    /// A simple client's connect message from a peer the kernel vouches for: accept it
    /// (returning its peer index) or refuse it (rules 3 and 4 of the module's doc). Drivers
    /// call `ServerCore::handle_hello`, which answers every peer.
    pub(super) fn client(
        &mut self,
        cx: &mut Shared,
        conn: ConnId,
        req: &ConnectRequest,
        peer: PeerCred,
    ) -> Result<u32, Refusal> {
        if req.peer_type != PeerType::SIMPLE_CLIENT {
            let why = format!("{:?} peers are not served", req.peer_type);
            return Err((Status::ERR_NOT_SUPPORTED, why));
        }
        let proc = (req.proc.clone()).ok_or((
            Status::ERR_BAD_PARAM,
            "a client connect message names no process".to_owned(),
        ))?;
        let reg = cx.clients.get(&proc).ok_or_else(|| {
            let why = format!("client {proc} is not registered here");
            (Status::ERR_NOT_FOUND, why)
        })?;
        if peer.uid != reg.uid || peer.gid.is_some_and(|g| g != reg.gid) {
            let why = format!(
                "client {proc} runs as uid {} gid {:?}, registered as {}/{}",
                peer.uid, peer.gid, reg.uid, reg.gid
            );
            return Err((Status::ERR_INVALID_CRED, why));
        }
        // A finalized process is in `gone` while its connection is still open.
        if let Some(old) = reg.conn
            && cx.conns.contains_key(&old)
            && !cx.store.gone.contains(&proc)
        {
            let why = format!("client {proc} is already connected (connection {old})");
            return Err((Status::ERR_EXISTS, why));
        }
        let gid = Some(reg.gid);
        if let Some(old) = reg.conn {
            // A process that re-inits after finalize replaces its old connection.
            cx.conns.remove(&old);
        }
        if let Some(r) = cx.clients.get_mut(&proc) {
            r.conn = Some(conn);
        }
        cx.store.gone.remove(&proc);
        cx.conns.insert(
            conn,
            Conn {
                proc: proc.clone(),
                buffer_type: req.buffer_type,
                tool: false,
                uid: peer.uid,
                gid,
                version: PeerVersion::parse(&req.version),
            },
        );
        let pindex = self.pindex();
        // Nothing waits on the answer.
        cx.call_host(HostCall::ClientConnected { proc });
        Ok(pindex)
    }
}

/// Refuse a connection: the status word alone, then close (both reply forms start so).
fn refuse(cx: &mut Shared, conn: ConnId, status: Status, why: String) {
    let status = if status == Status::SUCCESS {
        Status::ERR_UNREACH
    } else {
        status
    };
    cx.push(Action::Handshake {
        conn,
        reply: encode_client_reply(status, 0)[..4].to_vec(),
        refused: Some(format!("{why}: {status:?}")),
    });
}
