//! The server's handling of the requests of `wire::ops` (v5.0 ch. 7, 10, 12, 13, 16): each
//! goes to the chapter that serves it (queries, connect, events' deregistration, process
//! groups, I/O forwarding) or is relayed to the host with the requester's ids (spawn, log,
//! allocation, job control, monitoring, credentials, fabric registrations and updates; see
//! [`super::relayed`]); the peers and nodes OpenPMIx 5.0 clients ask their server to
//! resolve, and the cache refreshes of their gets, are answered from the store
//! ([`super::resolve`]). Requests of chapters not served yet (device distances, 6.1's
//! session control) are refused with `PMIX_ERR_NOT_SUPPORTED`, the bare status OpenPMIx
//! sends for a request it refuses.

use crate::model::{FabricOperation, Info, Proc, Status, attr};
use crate::wire::ops::Op;
use crate::wire::{Reply, Tag};

use super::iof::PullRequest;
use super::relayed::{self, Answer};
use super::{ConnId, HostCall, ServerCore, connect};

impl ServerCore {
    pub(super) fn handle_op(&mut self, conn: ConnId, me: &Proc, tag: Tag, op: Op) {
        match op {
            // Deregistration expects no answer (OpenPMIx 4.2 clients send it without a callback).
            Op::DeregisterEvents { codes } => {
                self.events.deregister(&mut self.cx, conn, &codes);
            }
            Op::Query { queries } => {
                self.query(conn, tag, me, queries);
            }
            Op::Spawn { job_info, apps } => {
                if apps.is_empty() || apps.iter().any(|a| a.maxprocs <= 0) {
                    relayed::spawned(&mut self.cx, conn, tag, Err(Status::ERR_BAD_PARAM));
                    return;
                }
                // v5.0 §17.3.11: the requester's ids, whether it is a tool or a client, and
                // that the new processes are spawned with the requester as their parent.
                let mut job_info = self.cx.with_ids(conn, job_info);
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
                self.relay(conn, tag, call, Answer::Spawn);
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
                let directives = self.cx.with_ids(conn, directives);
                let call = HostCall::Log {
                    proc: me.clone(),
                    timestamp: timestamp.0,
                    data,
                    directives,
                };
                self.relay(conn, tag, call, Answer::Status);
            }
            Op::Alloc { directive, info } => {
                let info = self.cx.with_ids(conn, info);
                let call = HostCall::Allocate {
                    proc: me.clone(),
                    directive,
                    info,
                };
                let command = crate::wire::Command::ALLOC;
                self.relay(conn, tag, call, Answer::Infos { command });
            }
            Op::JobControl {
                targets,
                directives,
            } => {
                let directives = self.cx.with_ids(conn, directives);
                let call = HostCall::JobControl {
                    proc: me.clone(),
                    targets,
                    directives,
                };
                let command = crate::wire::Command::JOB_CONTROL;
                self.relay(conn, tag, call, Answer::Infos { command });
            }
            Op::Monitor {
                monitor,
                error,
                directives,
            } => {
                let directives = self.cx.with_ids(conn, directives);
                let call = HostCall::Monitor {
                    proc: me.clone(),
                    monitor,
                    error,
                    directives,
                };
                let command = crate::wire::Command::MONITOR;
                self.relay(conn, tag, call, Answer::Infos { command });
            }
            Op::GetCredential { info } => {
                let info = self.cx.with_ids(conn, info);
                let call = HostCall::GetCredential {
                    proc: me.clone(),
                    info,
                };
                let proc = me.clone();
                self.relay(conn, tag, call, Answer::Credential { proc });
            }
            Op::ValidateCredential {
                credential,
                directives,
            } => {
                let directives = self.cx.with_ids(conn, directives);
                let call = HostCall::ValidateCredential {
                    proc: me.clone(),
                    credential: credential.0.clone(),
                    directives,
                };
                let proc = me.clone();
                let credential = credential.0;
                self.relay(conn, tag, call, Answer::Validate { proc, credential });
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
                self.groups_at()
                    .group_construct(conn, me, tag, group, procs, &info);
            }
            // The members a 5.0 or later client lists are those this server recorded when the
            // group formed; its own record decides.
            Op::GroupDestruct { group, info, .. } => {
                self.groups_at().group_destruct(conn, me, tag, group, &info);
            }
            Op::GroupInvite { group, procs, info } => {
                self.groups_at()
                    .group_invite(conn, me, tag, group, procs, info);
            }
            Op::GroupJoin { group, procs, info } => {
                self.groups_at()
                    .group_join(conn, me, tag, group, procs, &info);
            }
            Op::GroupLeave { group, .. } => self.groups_at().group_leave(conn, me, tag, group),
            // Fabrics are the host's to describe (§15.4); the server only carries the request.
            Op::FabricRegister { directives } => {
                let call = HostCall::Fabric {
                    proc: me.clone(),
                    op: FabricOperation::REQUEST_INFO,
                    directives: self.cx.with_ids(conn, directives),
                };
                let command = crate::wire::Command::FABRIC_REGISTER;
                self.relay(conn, tag, call, Answer::Infos { command });
            }
            Op::FabricUpdate { index } => {
                let index = usize::try_from(index).unwrap_or(usize::MAX);
                let call = HostCall::Fabric {
                    proc: me.clone(),
                    op: FabricOperation::UPDATE_INFO,
                    directives: vec![Info::new(attr::FABRIC_INDEX, index)],
                };
                let command = crate::wire::Command::FABRIC_UPDATE;
                self.relay(conn, tag, call, Answer::Infos { command });
            }
            Op::IofPull {
                procs,
                directives,
                channel,
                local_id,
            } => {
                let pull = PullRequest {
                    procs,
                    directives,
                    channels: channel,
                    their_id: local_id,
                };
                self.iof.pull(&mut self.cx, (conn, me, tag), pull);
            }
            // The host is told to stop forwarding what the pull wanted; its status is the
            // answer.
            Op::IofDeregister {
                directives,
                remote_id,
            } => match self
                .iof
                .deregister(&mut self.cx, conn, directives, remote_id)
            {
                Ok(call) => self.relay(conn, tag, call, Answer::Status),
                Err(status) => self.send(conn, tag, &Reply::Status(status)),
            },
            // Standard input goes to the host, with the pusher as its source.
            Op::IofPush {
                targets,
                directives,
                data,
            } => {
                let call = HostCall::PushStdin {
                    source: me.clone(),
                    targets,
                    directives: self.cx.with_ids(conn, directives),
                    data: data.map(|d| d.0),
                };
                self.relay(conn, tag, call, Answer::Status);
            }
            Op::RefreshCache { nspace, rank } => self.refresh_cache(conn, tag, &nspace, rank),
            Op::ResolvePeers { node, nspace } => self.resolve_peers(conn, tag, node, nspace),
            Op::ResolveNode { nspace } => self.resolve_node(conn, tag, nspace),
            // A session belongs to the host's scheduler, and `Host` has no upcall for it.
            Op::SessionControl { session_id, .. } => {
                tracing::debug!("{me}: control of session {session_id} is not supported");
                self.send(conn, tag, &Reply::Status(Status::ERR_NOT_SUPPORTED));
            }
            Op::ComputeDeviceDistances { .. } => {
                tracing::debug!("{me}: device distances are not computed by this server");
                self.send(conn, tag, &Reply::Status(Status::ERR_NOT_SUPPORTED));
            }
        }
    }

    /// Hand `call` to the host for the request `tag` of `conn` ([`relayed`]).
    pub(super) fn relay(&mut self, conn: ConnId, tag: Tag, call: HostCall, answer: Answer) {
        (self.relayed).relay(&mut self.cx, conn, tag, call, answer);
    }
}
