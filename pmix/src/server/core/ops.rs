//! The server's handling of the requests of `wire::ops` (v5.0 ch. 7, 10, 12, 13, 16): each
//! is answered here (queries, connect, events' deregistration) or handed to the host with the
//! requester's ids (spawn, log, allocation, job control, monitoring, credentials, which the
//! library mints and validates itself when the host has no security system of its own).
//! Process groups are served by [`super::groups`]; fabric registrations and updates go to the
//! host. Requests of chapters not served yet (I/O forwarding, device distances)
//! are refused with `PMIX_ERR_NOT_SUPPORTED`, the bare status OpenPMIx sends.

use crate::model::{FabricOperation, Info, Nspace, Proc, Status, attr};
use crate::server::credential;
use crate::wire::ops::Op;
use crate::wire::{Reply, Tag};

use super::{ConnId, HostCall, HostResult, Pending, ServerCore, connect};
use crate::store::jobinfo::job_info_kvals;

impl ServerCore {
    pub(super) fn handle_op(&mut self, conn: ConnId, me: &Proc, tag: Tag, op: Op) {
        match op {
            // Deregistration expects no answer (OpenPMIx 4.2 clients send it without a callback).
            Op::DeregisterEvents { codes } => {
                self.deregister_events(conn, &codes);
            }
            Op::Query { queries } => {
                self.query(conn, tag, me, queries);
            }
            Op::Spawn { job_info, apps } => {
                if apps.is_empty() || apps.iter().any(|a| a.maxprocs <= 0) {
                    self.spawned(conn, tag, Err(Status::ERR_BAD_PARAM));
                    return;
                }
                // v5.0 §17.3.11: the requester's ids, whether it is a tool or a client, and
                // that the new processes are spawned with the requester as their parent.
                let mut job_info = self.with_ids(conn, job_info);
                let tool = self.cx.conns.get(&conn).is_some_and(|c| c.tool);
                job_info.push(Info::new(attr::REQUESTOR_IS_TOOL, tool));
                job_info.push(Info::new(attr::REQUESTOR_IS_CLIENT, !tool));
                job_info.push(Info::new(attr::SPAWNED, true));
                job_info.push(Info::new(attr::PARENT_ID, me.clone()));
                let call = HostCall::Spawn {
                    proc: me.clone(),
                    job_info,
                    apps,
                };
                self.call_host(Pending::Spawn { conn, tag }, call);
            }
            Op::Log {
                timestamp,
                data,
                directives,
            } => {
                if data.is_empty() {
                    self.send(conn, tag, &Reply::Status(Status::ERR_BAD_PARAM));
                    return;
                }
                let directives = self.with_ids(conn, directives);
                let call = HostCall::Log {
                    proc: me.clone(),
                    timestamp: timestamp.0,
                    data,
                    directives,
                };
                self.call_host(Pending::Reply { conn, tag }, call);
            }
            Op::Alloc { directive, info } => {
                let info = self.with_ids(conn, info);
                let call = HostCall::Allocate {
                    proc: me.clone(),
                    directive,
                    info,
                };
                let command = crate::wire::Command::ALLOC;
                self.call_host(Pending::Infos { conn, tag, command }, call);
            }
            Op::JobControl {
                targets,
                directives,
            } => {
                let directives = self.with_ids(conn, directives);
                let call = HostCall::JobControl {
                    proc: me.clone(),
                    targets,
                    directives,
                };
                let command = crate::wire::Command::JOB_CONTROL;
                self.call_host(Pending::Infos { conn, tag, command }, call);
            }
            Op::Monitor {
                monitor,
                error,
                directives,
            } => {
                let directives = self.with_ids(conn, directives);
                let call = HostCall::Monitor {
                    proc: me.clone(),
                    monitor,
                    error,
                    directives,
                };
                let command = crate::wire::Command::MONITOR;
                self.call_host(Pending::Infos { conn, tag, command }, call);
            }
            Op::GetCredential { info } => {
                let info = self.with_ids(conn, info);
                let call = HostCall::GetCredential {
                    proc: me.clone(),
                    info,
                };
                let proc = me.clone();
                self.call_host(Pending::Credential { conn, tag, proc }, call);
            }
            Op::ValidateCredential {
                credential,
                directives,
            } => {
                let directives = self.with_ids(conn, directives);
                let call = HostCall::ValidateCredential {
                    proc: me.clone(),
                    credential: credential.0.clone(),
                    directives,
                };
                let pending = Pending::Validate {
                    conn,
                    tag,
                    proc: me.clone(),
                    credential: credential.0,
                };
                self.call_host(pending, call);
            }
            Op::Connect { procs, info } => {
                (self.connects).request(
                    &mut self.cx,
                    connect::Kind::Connect,
                    conn,
                    me,
                    tag,
                    procs,
                    &info,
                );
            }
            Op::Disconnect { procs, info } => {
                (self.connects).request(
                    &mut self.cx,
                    connect::Kind::Disconnect,
                    conn,
                    me,
                    tag,
                    procs,
                    &info,
                );
            }
            Op::GroupConstruct { group, procs, info } => {
                self.group_construct(conn, me, tag, group, procs, &info);
            }
            Op::GroupDestruct { group, info } => {
                self.group_destruct(conn, me, tag, group, &info);
            }
            Op::GroupInvite { group, procs, info } => {
                self.group_invite(conn, me, tag, group, procs, info);
            }
            Op::GroupJoin { group, procs, info } => {
                self.group_join(conn, me, tag, group, procs, &info);
            }
            Op::GroupLeave { group, .. } => self.group_leave(conn, me, tag, group),
            // Fabrics are the host's to describe (§15.4); the server only carries the request.
            Op::FabricRegister { directives } => {
                let call = HostCall::Fabric {
                    proc: me.clone(),
                    op: FabricOperation::REQUEST_INFO,
                    directives: self.with_ids(conn, directives),
                };
                let command = crate::wire::Command::FABRIC_REGISTER;
                self.call_host(Pending::Infos { conn, tag, command }, call);
            }
            Op::FabricUpdate { index } => {
                let index = usize::try_from(index).unwrap_or(usize::MAX);
                let call = HostCall::Fabric {
                    proc: me.clone(),
                    op: FabricOperation::UPDATE_INFO,
                    directives: vec![Info::new(attr::FABRIC_INDEX, index)],
                };
                let command = crate::wire::Command::FABRIC_UPDATE;
                self.call_host(Pending::Infos { conn, tag, command }, call);
            }
            _ => self.send(conn, tag, &Reply::Status(Status::ERR_NOT_SUPPORTED)),
        }
    }

    /// The host answered a request for `proc`'s credential: its credential, or, when the host
    /// has no security system of its own, one this library seals for the identity it verified
    /// (registration and the socket's peer credentials).
    pub(super) fn credential_answered(
        &mut self,
        conn: ConnId,
        tag: Tag,
        proc: &Proc,
        result: HostResult,
    ) {
        let result = match result {
            HostResult::Credential(Err(Status::ERR_NOT_SUPPORTED)) => self.own_credential(proc),
            HostResult::Credential(r) => r,
            other => Err(other.failure()),
        };
        let reply = match result {
            Ok((bytes, info)) => crate::wire::OpReply::Credential {
                status: Status::SUCCESS,
                credential: Some(crate::model::ByteObject(bytes)),
                info,
            },
            Err(status) => crate::wire::OpReply::Credential {
                status,
                credential: None,
                info: Vec::new(),
            },
        };
        self.send(conn, tag, &Reply::Op(reply));
    }

    fn own_credential(&self, proc: &Proc) -> Result<(Vec<u8>, Vec<Info>), Status> {
        // A tool's identity is not registered: nothing to vouch for.
        let r = self.cx.clients.get(proc).ok_or(Status::ERR_NOT_SUPPORTED)?;
        let who = credential::Identity {
            proc: proc.clone(),
            uid: r.uid,
            gid: r.gid,
        };
        let bytes = credential::mint(&self.credential_key, &who)?;
        let info = vec![Info::new(attr::CRED_TYPE, credential::CRED_TYPE.to_owned())];
        Ok((bytes, info))
    }

    /// The host answered a validation: what it proves, or, when the host validates nothing
    /// itself, this library's check of a credential it sealed.
    pub(super) fn validation_answered(
        &mut self,
        conn: ConnId,
        tag: Tag,
        proc: &Proc,
        cred: &[u8],
        result: HostResult,
    ) {
        let result = match result {
            HostResult::Infos(Err(Status::ERR_NOT_SUPPORTED)) => {
                credential::validate(&self.credential_key, cred)
                    .map(|who| credential::validated_info(&who))
            }
            HostResult::Infos(r) => r,
            other => Err(other.failure()),
        };
        let (status, info) = match result {
            Ok(info) => (Status::SUCCESS, info),
            Err(s) => {
                tracing::debug!(
                    "{proc}: a credential of {} bytes did not validate",
                    cred.len()
                );
                (s, Vec::new())
            }
        };
        let reply = crate::wire::OpReply::Infos {
            command: crate::wire::Command::VALIDATE_CRED,
            status,
            info,
        };
        self.send(conn, tag, &Reply::Op(reply));
    }

    /// `info` with the `PMIX_USERID` and `PMIX_GRPID` of the requester on `conn` added, as
    /// the standard requires of the library for requests it passes to the host (§12.4.1,
    /// §13): the identity the kernel vouched for at connect (a tool's gid only where the
    /// transport told it), so that hosts can decide what the requester may do.
    /// Ids the requester wrote itself are dropped: they would be claims.
    pub(super) fn with_ids(&self, conn: ConnId, mut info: Vec<Info>) -> Vec<Info> {
        info.retain(|i| !i.is(attr::USERID) && !i.is(attr::GRPID));
        if let Some(c) = self.cx.conns.get(&conn) {
            info.push(Info::new(attr::USERID, c.uid));
            if let Some(gid) = c.gid {
                info.push(Info::new(attr::GRPID, gid));
            }
        }
        info
    }

    /// Answer a spawn: the new namespace and its job information as registered here.
    pub(super) fn spawned(&mut self, conn: ConnId, tag: Tag, result: Result<Nspace, Status>) {
        let reply = match result {
            Ok(nspace) => {
                let buffer_type = self.cx.conns.get(&conn).map(|c| c.buffer_type);
                let job_info = self
                    .cx
                    .store
                    .job_view(nspace.as_str())
                    .zip(buffer_type)
                    .and_then(|(r, b)| job_info_kvals(&r, b, &self.cx.version).ok())
                    .unwrap_or_default();
                crate::wire::OpReply::Spawn {
                    status: Status::SUCCESS,
                    nspace: Some(nspace.as_str().to_owned()),
                    job_info,
                }
            }
            Err(status) => crate::wire::OpReply::Spawn {
                status,
                nspace: None,
                job_info: Vec::new(),
            },
        };
        self.send(conn, tag, &Reply::Op(reply));
    }
}
