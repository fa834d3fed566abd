//! A peer's connect message: clients are checked against their registration and answered at
//! once; tools and launchers wait for the host's `tool_connected`.

use crate::model::{Info, Proc, Status, attr};
use crate::wire::handshake::{ToolReply, encode_client_reply};
use crate::wire::{ConnectRequest, PeerType};

use super::{Action, Conn, ConnId, ConnectingTool, HostCall, Pending, ServerCore};

impl ServerCore {
    /// A peer's connect message, of any peer type: answered by an [`Action::Handshake`], at
    /// once for clients and after the host's `tool_connected` for tools and launchers.
    /// `peer_cred` is the uid and gid the operating system vouches for (Unix sockets).
    pub fn handle_hello(
        &mut self,
        conn: ConnId,
        req: &ConnectRequest,
        peer_cred: Option<(u32, u32)>,
    ) {
        if req.peer_type.gets_tool_reply() {
            if let Err((status, why)) = self.tool_hello(conn, req, peer_cred) {
                self.refuse(conn, status, why);
            }
            return;
        }
        match self.handle_connect(conn, req, peer_cred) {
            Ok(pindex) => self.actions.push_back(Action::Handshake {
                conn,
                reply: encode_client_reply(Status::SUCCESS, pindex).to_vec(),
                refused: None,
            }),
            Err(status) => {
                let why = format!("client {:?} refused", req.proc);
                self.refuse(conn, status, why);
            }
        }
    }

    /// A tool's or launcher's connect message: check its credential, then ask the host.
    fn tool_hello(
        &mut self,
        conn: ConnId,
        req: &ConnectRequest,
        peer_cred: Option<(u32, u32)>,
    ) -> Result<(), (Status, String)> {
        let (uid, gid) = req
            .uid_gid
            .ok_or((Status::ERR_BAD_PARAM, "tool sent no uid and gid".to_owned()))?;
        // As for clients: the kernel's word, else the native credential, must match the
        // identity the tool declared; psec none proves nothing and claims nothing.
        match peer_cred.or_else(|| req.native_uid_gid()) {
            Some(c) if c == (uid, gid) => {}
            Some(c) => {
                let why = format!("tool declares uid/gid {uid}/{gid}, credential says {c:?}");
                return Err((Status::ERR_INVALID_CRED, why));
            }
            None if req.psec == "none" => {}
            None => {
                let why = format!("no usable credential from psec {:?}", req.psec);
                return Err((Status::ERR_INVALID_CRED, why));
            }
        }
        let mut info = req.info.clone();
        info.push(Info::new(attr::VERSION_INFO, req.version.clone()));
        info.push(Info::new(attr::USERID, uid));
        info.push(Info::new(attr::GRPID, gid));
        if let Some(p) = &req.proc {
            info.push(Info::new(attr::NSPACE, p.nspace.as_str().to_owned()));
            info.push(Info::new(attr::RANK, p.rank));
        }
        let tool = ConnectingTool {
            conn,
            peer_type: req.peer_type,
            proc: req.proc.clone(),
            buffer_type: req.buffer_type,
        };
        self.call_host(
            Pending::ToolConnected(tool),
            HostCall::ToolConnected { info },
        );
        Ok(())
    }

    /// The host answered `tool_connected`: accept the tool under its identifier or refuse it.
    pub(super) fn tool_answered(&mut self, tool: ConnectingTool, result: Result<Proc, Status>) {
        let proc = match (result, &tool.proc) {
            (Ok(p), _) => p,
            // A host without tool support: a tool that brought its identifier keeps it.
            (Err(Status::ERR_NOT_SUPPORTED), Some(own)) => own.clone(),
            (Err(s), _) => {
                let why = format!("host refused {:?} peer {:?}", tool.peer_type, tool.proc);
                self.refuse(tool.conn, s, why);
                return;
            }
        };
        let reply = ToolReply {
            status: Status::SUCCESS,
            assigned: tool.peer_type.needs_id().then(|| proc.clone()),
            server: self.id.clone(),
            security_status: Status::SUCCESS,
        };
        self.actions.push_back(Action::Handshake {
            conn: tool.conn,
            reply: reply.encode(),
            refused: None,
        });
        self.conns.insert(
            tool.conn,
            Conn {
                proc,
                buffer_type: tool.buffer_type,
                tool: true,
            },
        );
    }

    /// Refuse a connection: the status word alone, then close (both reply forms start so).
    fn refuse(&mut self, conn: ConnId, status: Status, why: String) {
        let status = if status == Status::SUCCESS {
            Status::ERR_UNREACH
        } else {
            status
        };
        self.actions.push_back(Action::Handshake {
            conn,
            reply: encode_client_reply(status, 0)[..4].to_vec(),
            refused: Some(format!("{why}: {status:?}")),
        });
    }

    /// A simple client's connect message: accept it (returning its peer index) or refuse it
    /// with a status. Drivers call [`ServerCore::handle_hello`], which answers every peer.
    pub fn handle_connect(
        &mut self,
        conn: ConnId,
        req: &ConnectRequest,
        peer_cred: Option<(u32, u32)>,
    ) -> Result<u32, Status> {
        if req.peer_type != PeerType::SIMPLE_CLIENT {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let proc = req.proc.clone().ok_or(Status::ERR_BAD_PARAM)?;
        let reg = self.clients.get(&proc).ok_or(Status::ERR_NOT_FOUND)?;
        // The kernel's word wins over the peer's claim; psec none proves nothing.
        let claimed = peer_cred.or_else(|| req.native_uid_gid());
        match claimed {
            Some((uid, gid)) if uid == reg.uid && gid == reg.gid => {}
            Some(_) => return Err(Status::ERR_INVALID_CRED),
            None if req.psec == "none" => {}
            None => return Err(Status::ERR_INVALID_CRED),
        }
        if let Some(old) = reg.conn {
            // A process that reconnects (re-init after finalize) replaces its old connection.
            self.conns.remove(&old);
        }
        if let Some(r) = self.clients.get_mut(&proc) {
            r.conn = Some(conn);
        }
        self.store.gone.remove(&proc);
        self.conns.insert(
            conn,
            Conn {
                proc: proc.clone(),
                buffer_type: req.buffer_type,
                tool: false,
            },
        );
        let pindex = self.next_pindex;
        self.next_pindex = self.next_pindex.wrapping_add(1);
        self.call_host(Pending::Ignore, HostCall::ClientConnected(proc));
        Ok(pindex)
    }
}
