//! The server's state machine, sans-IO: connections, requests, fences, held gets and calls to
//! the host, with bytes and completions in and actions out.
//!
//! Inputs (`handle_*`): a peer's connect message, a frame, a closed connection, the host's
//! answer to a call, an expired timer; and the host's own API calls (`register_nspace`,
//! `register_client`, …). Outputs: drain [`ServerCore::poll_action`] after each input — frames
//! to send, connections to close, host upcalls to make and timers to arm. The core never
//! blocks, reads a clock or touches a socket, so the whole server logic runs the same under
//! tokio, under the simulator and in unit tests.
//!
//! The core is a router over one sub-machine per chapter, each in its own file (the groups
//! in their own folder) and owning its state and the host calls it waits on:
//!
//! | chapter | sub-machine |
//! |---|---|
//! | who may connect, tools waiting for the host | `hello::Admission` |
//! | fences | `fencing::Fencing` |
//! | gets that wait, direct modex both ways | `gets::Gets` |
//! | event registrations, the cache, events to the host | `events::ServerEvents` |
//! | queries, the host's registered attributes | `query::Queries` |
//! | connect and disconnect | `connect::Connects` |
//! | process groups, invitations, bootstrap | `groups::Groups` (worked on through `GroupsAt`) |
//! | requests relayed to the host, credentials | `relayed::Relayed` |
//! | process sets | `psets::ProcessSets` |
//! | peers and nodes resolved, cache refreshes (OpenPMIx 5.0's requests) | `resolve`, over the store |
//! | I/O forwarding: pulls, output delivered, input pushed | `iof::Iof` |
//!
//! What they all read and write (the store, the connections, the registered clients, the
//! outbox of actions) is [`shared::Shared`], which each takes as an argument. A host answer
//! or an expired timer goes to the chapter that recognises its op.

use crate::events::Event;
use crate::model::{
    DataRange, Info, Key, Kval, Nspace, Proc, Query, Rank, RegAttr, Status, Value, attr,
};
use crate::store::{Found, JobRealms, Qualifiers, ServerStore, is_reserved};
use crate::wire::{ConnectRequest, Frame, Reply, Request, Tag};

use crate::store::jobinfo::job_info_kvals;

pub(crate) use interface::{Action, ConnId};
use shared::{Conn, Registration, Shared};
#[cfg(feature = "runtime")]
pub(crate) use upcall::IntoHost;
pub use upcall::{HostCall, HostResult};
// What the kernel reports of a peer; hosts and drivers see it as `transport::PeerCred`.
pub use interface::PeerCred;

/// The server's state: the part every chapter shares, and one sub-machine per chapter,
/// each owning its state and the host calls it waits on.
#[derive(Debug)]
pub(crate) struct ServerCore {
    /// What every chapter reads and writes: the store, connections, clients, the outbox.
    cx: Shared,
    /// Who may connect; tools waiting for the host ([`hello`]).
    admission: hello::Admission,
    /// Fences ([`fencing`]).
    fencing: fencing::Fencing,
    /// Gets that wait, and direct modex both ways ([`gets`]).
    gets: gets::Gets,
    /// Registrations, the event cache and what goes to the host ([`events`]).
    events: events::ServerEvents,
    /// The attributes the host registered, and queries at the host ([`query`]).
    queries: query::Queries,
    /// Connect and disconnect ([`connect`]).
    connects: connect::Connects,
    /// Process groups and invitations ([`groups`]).
    groups: groups::Groups,
    /// Requests relayed to the host, with the key that seals credentials ([`relayed`]).
    relayed: relayed::Relayed,
    /// The process sets the host defined ([`psets`]).
    psets: psets::ProcessSets,
    /// Pulls of output, output not yet pulled, input pushed ([`iof`]).
    iof: iof::Iof,
}

impl ServerCore {
    /// A server on `hostname`, whose host does (or does not) answer direct-modex requests.
    pub(crate) fn new(hostname: Option<String>, host_has_dmodex: bool, version: &str) -> Self {
        ServerCore {
            cx: Shared::new(
                ServerStore {
                    hostname,
                    ..ServerStore::default()
                },
                version,
            ),
            admission: hello::Admission::default(),
            fencing: fencing::Fencing::default(),
            gets: gets::Gets::new(host_has_dmodex),
            events: events::ServerEvents::default(),
            queries: query::Queries::default(),
            connects: connect::Connects::default(),
            groups: groups::Groups::default(),
            relayed: relayed::Relayed::default(),
            psets: psets::ProcessSets::default(),
            iof: iof::Iof::default(),
        }
    }

    /// Name the server (tools receive its identifier in the handshake reply).
    pub(crate) fn with_id(mut self, id: Proc) -> Self {
        self.cx.id = id;
        self
    }

    /// Seal this server's credentials with `key` (the driver draws it from the operating
    /// system's randomness; without it, credentials are sealed with zeros and prove nothing).
    pub(crate) fn with_credential_key(mut self, key: [u8; 32]) -> Self {
        self.relayed = relayed::Relayed::with_credential_key(key);
        self
    }

    /// Let each connection have at most `limit` gets waiting (`Limits::held_gets`).
    pub(crate) fn with_held_gets(mut self, limit: usize) -> Self {
        self.gets.limit = wait_limit::WaitLimit::new(limit);
        self
    }

    /// Admit tools and launchers that run as one of `uids` (none are admitted otherwise):
    /// a tool can spawn, signal and query, so only the users the host trusts may connect one.
    pub(crate) fn with_tool_uids(mut self, uids: Vec<u32>) -> Self {
        self.admission.tool_uids = uids;
        self
    }

    /// A peer's connect message, of any peer type: answered by an [`Action::Handshake`], at
    /// once for clients and after the host's `tool_connected` for tools and launchers.
    /// `peer` is who the operating system says the peer is (`None`: it cannot say). The
    /// rules are in [`hello`].
    pub(crate) fn handle_hello(
        &mut self,
        conn: ConnId,
        req: &ConnectRequest,
        peer: Option<PeerCred>,
    ) {
        self.admission.hello(&mut self.cx, conn, req, peer);
    }

    /// The groups chapter at work, with the shared state and the events it raises.
    fn groups_at(&mut self) -> groups::GroupsAt<'_> {
        groups::GroupsAt {
            groups: &mut self.groups,
            cx: &mut self.cx,
            events: &mut self.events,
        }
    }

    /// The next action to perform, in order.
    pub(crate) fn poll_action(&mut self) -> Option<Action> {
        self.forget_closed();
        self.cx.poll_action()
    }

    // ---- the host's API ----

    /// `PMIx_server_register_nspace`: record the namespace's information (rule DM-05), and
    /// what its `PMIX_NODE_MAP` and `PMIX_PROC_MAP` imply where nothing explicit was given
    /// ([`JobRealms::apply_maps`]). A map that does not parse, or maps that disagree, are
    /// `PMIX_ERR_BAD_PARAM` and register nothing.
    pub(crate) fn register_nspace(&mut self, nspace: Nspace, info: &[Info]) -> Result<(), Status> {
        let map = |a: &str| {
            info.iter()
                .find(|i| i.key.as_str() == a)
                .map(|i| map_text(&i.value).ok_or(Status::ERR_BAD_PARAM))
                .transpose()
        };
        let maps = match (
            map(attr::NODE_MAP.wire_key())?,
            map(attr::PROC_MAP.wire_key())?,
        ) {
            (Some(nodes), Some(procs)) => {
                let bad = |_| Status::ERR_BAD_PARAM;
                Some((
                    crate::model::regex::parse_regex(&nodes).map_err(bad)?,
                    crate::model::regex::parse_ppn(&procs).map_err(bad)?,
                ))
            }
            _ => None,
        };
        let mut realms = self
            .cx
            .store
            .namespaces
            .get(&nspace)
            .cloned()
            .unwrap_or_else(|| JobRealms::new(nspace.clone()));
        realms.register(info);
        if let Some(host) = &self.cx.store.hostname {
            realms.name_local_node(host);
        }
        if let Some((nodes, ppn)) = maps {
            realms.apply_maps(&nodes, &ppn)?;
        }
        self.cx.store.namespaces.insert(nspace.clone(), realms);
        self.cx.store.add_registered_local_peers(&nspace);
        Ok(())
    }

    /// `PMIx_server_register_resources`: information not tied to a namespace, which every
    /// job's processes then find among their job's information (v5.0 §17.2.5).
    pub(crate) fn register_resources(&mut self, info: &[Info]) {
        self.cx.store.register_resources(info);
    }

    /// `PMIx_server_deregister_resources`: the keys named are no longer any job's (v5.0
    /// §17.2.6).
    pub(crate) fn deregister_resources(&mut self, info: &[Info]) {
        self.cx.store.deregister_resources(info);
    }

    /// `PMIx_server_deregister_nspace`.
    pub(crate) fn deregister_nspace(&mut self, nspace: &str) {
        self.cx.store.namespaces.retain(|n, _| n.as_str() != nspace);
        self.cx.store.modex.remove_nspace(nspace);
        self.cx
            .store
            .internal
            .retain(|p, _| p.nspace.as_str() != nspace);
        self.cx.store.group_values.remove_nspace(nspace);
        self.cx.clients.retain(|p, _| p.nspace.as_str() != nspace);
        self.cx.store.local.retain(|p| p.nspace.as_str() != nspace);
        self.cx.store.gone.retain(|p| p.nspace.as_str() != nspace);
        (self.groups.gone_elsewhere).retain(|p| p.nspace.as_str() != nspace);
    }

    /// `PMIx_server_register_client`: `proc` may connect, with this uid and gid.
    pub(crate) fn register_client(&mut self, proc: Proc, uid: u32, gid: u32) {
        self.cx.store.local.insert(proc.clone());
        self.cx.clients.insert(
            proc,
            Registration {
                uid,
                gid,
                conn: None,
            },
        );
    }

    /// `PMIx_server_deregister_client`: `proc` may no longer connect, and the data it posted
    /// is purged (v5.0 §17.2.8), so a later direct-modex request for it finds nothing.
    pub(crate) fn deregister_client(&mut self, proc: &Proc) {
        self.cx.clients.remove(proc);
        self.cx.store.local.remove(proc);
        self.cx.store.gone.remove(proc);
        self.cx.store.modex.remove_proc(proc);
        self.cx.store.group_values.remove_proc(proc);
    }

    /// `PMIx_server_dmodex_request`: the data the local client `proc` committed, as the blob
    /// other servers store. Answered by an [`Action::DmodexReply`] with the returned op: at
    /// once when the data (and the `PMIX_REQUIRED_KEY` of `info`, if any) is there, else when
    /// `proc` commits it (DM-01, DM-03); `PMIX_ERR_TIMEOUT` after `PMIX_TIMEOUT`;
    /// `PMIX_ERR_NOT_FOUND` for a process that is not a local client or that ends without
    /// posting it, and with `PMIX_IMMEDIATE` (a refresh: N-01) for one that has posted
    /// nothing yet.
    pub(crate) fn dmodex_request(&mut self, proc: Proc, info: &[Info]) -> u64 {
        self.gets.dmodex_request(&mut self.cx, proc, info)
    }

    /// The local clients that have ended.
    pub(crate) fn gone(&self) -> Vec<Proc> {
        self.cx.store.gone.iter().cloned().collect()
    }

    /// Whether every registered client of `nspace` has finalized or disconnected.
    pub(crate) fn all_gone(&self, nspace: &str) -> bool {
        self.cx
            .clients
            .keys()
            .filter(|p| p.nspace.as_str() == nspace)
            .all(|p| self.cx.store.gone.contains(p))
    }

    // ---- inputs from peers ----

    /// A frame from a connected peer.
    pub(crate) fn handle_frame(&mut self, conn: ConnId, frame: Frame) {
        let Some(c) = self.cx.conns.get(&conn).cloned() else {
            return;
        };
        if frame.tag == Tag::HEARTBEAT {
            // OpenPMIx's heartbeat: an empty one-way message under its own tag.
            let call = HostCall::Monitor {
                proc: c.proc.clone(),
                monitor: Info::new(attr::SEND_HEARTBEAT, crate::model::Value::Undef),
                error: Status::SUCCESS,
                directives: Vec::new(),
            };
            // Nothing waits on the answer.
            self.cx.call_host(call);
            return;
        }
        let request = match Request::decode_for(&frame.payload, c.buffer_type, c.version.dialect())
        {
            Ok(r) => r,
            Err(e) => {
                self.close(conn, format!("malformed request from {:?}: {e}", c.proc));
                return;
            }
        };
        self.handle_request(conn, &c, frame.tag, request);
    }

    /// The connection closed (or was closed for an error).
    pub(crate) fn handle_closed(&mut self, conn: ConnId) {
        let Some(c) = self.cx.conns.remove(&conn) else {
            return;
        };
        let mut was_its_connection = false;
        if let Some(r) = self.cx.clients.get_mut(&c.proc)
            && r.conn == Some(conn)
        {
            r.conn = None;
            was_its_connection = true;
        }
        // A registered client gone without finalizing: the host hears of it (as OpenPMIx's
        // does through a local event), so that it can end the job.
        let lost = !c.tool
            && was_its_connection
            && self.cx.store.local.contains(&c.proc)
            && !self.cx.store.gone.contains(&c.proc);
        if lost {
            tracing::info!(proc = %c.proc, "a client's connection ended before it finalized");
            self.cx.call_host(HostCall::ClientLost {
                proc: c.proc.clone(),
            });
        }
        self.gets.conn_closed(conn);
        self.events.conn_closed(&mut self.cx, conn);
        self.fencing.conn_closed(conn);
        self.connects.conn_closed(conn);
        self.iof.conn_closed(conn);
        self.groups_at().groups_conn_closed(conn);
        // A tool may carry a process's identifier; its going is not that process's.
        if !c.tool {
            self.process_gone(&c.proc);
        }
    }

    /// The host answered the call `op`.
    pub(crate) fn handle_host(&mut self, op: u64, result: HostResult) {
        if self.fencing.awaits_host(op) {
            self.fencing.host_answered(&mut self.cx, op, result);
            self.gets.wake_all(&mut self.cx);
            return;
        }
        if self.admission.awaits_host(op) {
            self.admission.host_answered(&mut self.cx, op, result);
            return;
        }
        if self.events.awaits_host(op) {
            self.events.host_answered(&mut self.cx, op, result);
            return;
        }
        if self.relayed.awaits_host(op) {
            self.relayed.host_answered(&mut self.cx, op, result);
            return;
        }
        if self.queries.awaits_host(op) {
            self.queries.host_answered(&mut self.cx, op, result);
            return;
        }
        if self.gets.awaits_host(op) {
            self.gets.host_answered(&mut self.cx, op, result);
            return;
        }
        if self.connects.awaits_host(op) {
            self.connects.host_answered(&mut self.cx, op, result);
            return;
        }
        if self.iof.awaits_host(op) {
            self.iof.host_answered(&mut self.cx, op, result);
            return;
        }
        self.groups_at().host_answered(op, result);
    }

    /// The timer `op` expired.
    pub(crate) fn handle_timeout(&mut self, op: u64) {
        if self.gets.timed_out(&mut self.cx, op) {
            return;
        }
        if self.fencing.timed_out(&mut self.cx, op) {
            return;
        }
        if self.groups_at().group_timed_out(op) {
            return;
        }
        self.connects.timed_out(&mut self.cx, op);
    }

    // ---- requests ----

    fn handle_request(&mut self, conn: ConnId, c: &Conn, tag: Tag, request: Request) {
        let me = &c.proc;
        if let Some(key) = unknown_required(&request) {
            // v5.0 §1.3.1: a required directive nobody here can honour fails the call.
            tracing::debug!("{me}: required directive {key:?} is not supported");
            let status = Status::ERR_NOT_SUPPORTED;
            let reply = match request {
                Request::Lookup { .. } => Reply::Lookup {
                    status,
                    data: Vec::new(),
                },
                _ => Reply::Status(status),
            };
            self.send(conn, tag, &reply);
            return;
        }
        match request {
            Request::JobInfo => {
                let reply = match self.cx.store.job_view(me.nspace.as_str()) {
                    Some(realms) => {
                        match job_info_kvals(&realms, c.buffer_type, &self.cx.version) {
                            Ok(kvals) => Reply::JobInfo {
                                nspace: me.nspace.clone(),
                                kvals,
                            },
                            Err(e) => {
                                self.close(conn, format!("cannot encode job info: {e}"));
                                return;
                            }
                        }
                    }
                    None => Reply::JobInfo {
                        nspace: me.nspace.clone(),
                        kvals: Vec::new(),
                    },
                };
                self.send(conn, tag, &reply);
            }
            Request::Commit { buckets } => {
                self.cx.store.modex.commit(me, buckets);
                self.send(conn, tag, &Reply::Status(Status::SUCCESS));
                self.gets.wake(&mut self.cx, me);
            }
            Request::Fence { procs, info } => {
                let procs = if procs.is_empty() {
                    vec![Proc::new(me.nspace.clone(), Rank::WILDCARD)]
                } else {
                    // A group id stands for the group's members (§14.2).
                    self.groups_at().expand_groups(&procs)
                };
                (self.fencing).request(&mut self.cx, conn, me, tag, procs, &info);
            }
            Request::Get {
                nspace,
                rank,
                info,
                key,
            } => {
                let Ok(target) = Proc::try_new(&nspace, rank) else {
                    self.send(conn, tag, &Reply::Status(Status::ERR_BAD_PARAM));
                    return;
                };
                if key.as_deref().is_some_and(|k| Key::new(k).is_err()) {
                    // Longer than PMIX_MAX_KEYLEN (or empty): no process can have posted it.
                    tracing::debug!("get of an invalid key from {me}");
                    self.send(conn, tag, &Reply::Status(Status::ERR_BAD_PARAM));
                    return;
                }
                let get = gets::HeldGet::new(conn, tag, me.clone(), target, key, &info);
                // §14.2.5: the groups a process belongs to change as groups form and end;
                // they are answered from those the server tracks before its store.
                if get.key.as_deref() == Some(attr::GROUP_NAMES.wire_key())
                    && get.directives.unsupported_required.is_none()
                    && let Some(step) = self.groups_at().group_names_of(&get.target)
                {
                    self.gets.answer(&mut self.cx, get, step);
                    return;
                }
                self.gets.request(&mut self.cx, get);
            }
            // `client_finalized` is the upcall of registered clients only. Their finalize
            // returns once the host has heard it, as OpenPMIx's does: a host that then sees
            // the process exit knows it finalized first (Open MPI's ORTE counts on it).
            Request::Finalize if c.tool => self.send(conn, tag, &Reply::Status(Status::SUCCESS)),
            Request::Finalize => {
                let call = HostCall::ClientFinalized { proc: me.clone() };
                self.relay(conn, tag, call, relayed::Answer::Finalized);
                self.process_gone(me);
            }
            // The library adds the requester's ids for the host (v5.0 §9.1, §9.2, §9.3).
            Request::Publish { info, .. } => {
                let call = HostCall::Publish {
                    proc: me.clone(),
                    info: self.cx.with_ids(conn, info),
                };
                self.relay(conn, tag, call, relayed::Answer::Status);
            }
            Request::Lookup { keys, info, .. } => {
                let call = HostCall::Lookup {
                    proc: me.clone(),
                    keys: keys.clone(),
                    info: self.cx.with_ids(conn, info),
                };
                self.relay(conn, tag, call, relayed::Answer::Lookup { keys });
            }
            Request::Unpublish { keys, info, .. } => {
                let call = HostCall::Unpublish {
                    proc: me.clone(),
                    keys,
                    info: self.cx.with_ids(conn, info),
                };
                self.relay(conn, tag, call, relayed::Answer::Status);
            }
            Request::Abort {
                status,
                message,
                procs,
            } => {
                let call = HostCall::Abort {
                    proc: me.clone(),
                    status,
                    message,
                    procs,
                };
                self.relay(conn, tag, call, relayed::Answer::Status);
            }
            Request::RegisterEvents { codes, info } => {
                self.events.register(&mut self.cx, conn, tag, codes, info);
            }
            Request::Notify {
                status,
                range,
                info,
            } => self.client_notify(conn, tag, me, status, range, info),
            Request::Op(op) => self.handle_op(conn, me, tag, op),
            // A command this server does not serve (6.1's `RESBLK`, a newer peer's): the bare
            // status every OpenPMIx client reads for a refusal (`wire::command`).
            Request::Other { command, .. } => {
                tracing::debug!("{me}: command {command:?} is not supported");
                self.send(conn, tag, &Reply::Status(Status::ERR_NOT_SUPPORTED));
            }
        }
    }

    fn process_gone(&mut self, proc: &Proc) {
        if !self.cx.store.local.contains(proc) {
            return;
        }
        self.cx.store.gone.insert(proc.clone());
        self.fencing.lost(&mut self.cx, proc);
        self.connects.lost(&mut self.cx, proc);
        self.groups_at().group_lost(proc);
        self.gets.wake(&mut self.cx, proc);
    }

    // ---- outputs ----

    fn send(&mut self, conn: ConnId, tag: Tag, reply: &Reply) {
        self.cx.send(conn, tag, reply);
    }

    fn close(&mut self, conn: ConnId, reason: String) {
        self.cx.close(conn, reason);
        self.forget_closed();
    }

    /// Let every chapter forget the connections closed while an input was handled.
    fn forget_closed(&mut self) {
        while let Some(conn) = self.cx.take_closed() {
            self.handle_closed(conn);
        }
    }
}

/// The entry points whose work spans chapters: each hands every chapter involved its part.
impl ServerCore {
    /// `NOTIFY` from client `me`: accept (or refuse a malformed range), pass it to the local
    /// processes in range and, when the range goes beyond this node, to the host. A
    /// `PMIX_GROUP_CONSTRUCT_COMPLETE` also makes its group known here.
    fn client_notify(
        &mut self,
        conn: ConnId,
        tag: Tag,
        me: &Proc,
        status: Status,
        range: DataRange,
        info: Vec<Info>,
    ) {
        let event = Event {
            status,
            source: me.clone(),
            range,
            info,
        };
        if let Err(s) = event.check() {
            self.send(conn, tag, &Reply::Status(s));
            return;
        }
        self.send(conn, tag, &Reply::Status(Status::SUCCESS));
        // An inviting process announces the group it assembled ([`super::announced`]).
        self.groups_at().group_announced(&event);
        let beyond_node = !matches!(
            range,
            DataRange::LOCAL | DataRange::PROC_LOCAL | DataRange::UNDEF
        );
        if beyond_node {
            let call = HostCall::NotifyEvent {
                status,
                source: me.clone(),
                range,
                info: event.info.clone(),
            };
            // Nothing waits on the answer.
            self.cx.call_host(call);
        }
        self.events.distribute(&mut self.cx, event);
    }

    /// `PMIx_Notify_event` in the server (the host injecting an event, or relaying one from
    /// another node): to the local processes in range that registered for it. A malformed
    /// range is `PMIX_ERR_BAD_PARAM`.
    ///
    /// A group event another server raised, and the host's word that processes terminated
    /// elsewhere, also move this server's groups and invitations on
    /// (`GroupsAt::relayed_group_event`).
    pub(crate) fn notify_event(&mut self, event: Event) -> Result<(), Status> {
        event.check()?;
        if !groups::for_servers_only(&event) {
            self.events.distribute(&mut self.cx, event.clone());
        }
        self.groups_at().relayed_group_event(&event);
        Ok(())
    }

    /// `PMIx_Store_internal` in the host's process: `value` as `proc`'s `key`, for the host's
    /// own gets ([`Self::host_get`]; a daemon's contact information, for example). It stays
    /// in the server: no client's get and no other node sees it, and it does not count as a
    /// commit of `proc`.
    pub(crate) fn store_internal(&mut self, proc: Proc, key: Key, value: Value) {
        let kval = Kval { key, value };
        self.cx.store.internal.entry(proc).or_default().upsert(kval);
    }

    /// `PMIx_Get` in the host's process: what this server holds of `proc`'s `key`, from what
    /// the host stored, the data `proc` committed, then its namespace's registration (the
    /// realm rules without qualifiers). Nothing is waited for: what is missing is
    /// `PMIX_ERR_NOT_FOUND`.
    pub(crate) fn host_get(&self, proc: &Proc, key: &str) -> Result<Value, Status> {
        let stored = self.cx.store.internal.get(proc).and_then(|kv| kv.get(key));
        if let Some(kv) = stored {
            return Ok(kv.value.clone());
        }
        if let Found::Value(v) = self.cx.store.modex.find(proc, key, true) {
            return Ok(v);
        }
        let realms = (self.cx.store.job_view(proc.nspace.as_str())).ok_or(Status::ERR_NOT_FOUND)?;
        let hostname = self.cx.store.hostname.as_deref();
        realms
            .lookup(key, proc.rank, &Qualifiers::from_info(&[]), None, hostname)
            .cloned()
            .ok_or(Status::ERR_NOT_FOUND)
    }

    /// `PMIx_server_IOF_deliver`: output of `source` on `channel` for the clients and tools
    /// that pulled it ([`iof`]).
    pub(crate) fn iof_deliver(
        &mut self,
        source: Proc,
        channel: crate::model::IofChannel,
        data: Vec<u8>,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        self.iof.deliver(&mut self.cx, source, channel, data, info)
    }

    /// `PMIx_server_define_process_set`: an empty name or member list is
    /// `PMIX_ERR_BAD_PARAM`; a name already defined is `PMIX_ERR_EXISTS` (sets are immutable:
    /// delete it first).
    pub(crate) fn define_process_set(
        &mut self,
        name: &str,
        members: Vec<Proc>,
    ) -> Result<(), Status> {
        let info = self.psets.define(name, members)?;
        self.announce(Status::PROCESS_SET_DEFINE, info)
    }

    /// `PMIx_server_delete_process_set`: a name not defined is `PMIX_ERR_NOT_FOUND`.
    pub(crate) fn delete_process_set(&mut self, name: &str) -> Result<(), Status> {
        let info = self.psets.delete(name)?;
        self.announce(Status::PROCESS_SET_DELETE, info)
    }

    /// Raise a process-set event from the host to the local clients.
    fn announce(&mut self, status: Status, info: Vec<Info>) -> Result<(), Status> {
        let event = Event {
            status,
            source: Proc::new(Nspace::default(), Rank::UNDEF),
            range: DataRange::SESSION,
            info,
        };
        self.notify_event(event)
    }

    /// `PMIx_Register_attributes`: see `query::Queries::register_attributes`.
    pub(crate) fn register_attributes(
        &mut self,
        function: &str,
        attrs: Vec<RegAttr>,
    ) -> Result<(), Status> {
        self.queries.register_attributes(function, attrs)
    }

    /// A client's `PMIx_Query_info`: what the process sets and groups answer, then the rest.
    fn query(&mut self, conn: ConnId, tag: Tag, me: &Proc, queries: Vec<Query>) {
        let others: Vec<Vec<Info>> = (queries.iter())
            .map(|query| {
                let mut out = self.psets.answers(query);
                out.extend(self.groups_at().group_answers(query));
                out
            })
            .collect();
        (self.queries).request(&mut self.cx, conn, tag, me, queries, others);
    }
}

/// The text of a node or proc map, registered as a string or as a `PMIX_REGEX` byte object
/// (NUL-terminated in OpenPMIx).
fn map_text(v: &crate::model::Value) -> Option<String> {
    match v {
        crate::model::Value::Regex(b) => {
            let bytes = &b.0;
            let end = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
            std::str::from_utf8(&bytes[..end]).ok().map(str::to_owned)
        }
        other => other.as_str().map(str::to_owned),
    }
}

/// The key of a directive marked required (`PMIX_INFO_REQD`) in a fence, publish, lookup or
/// unpublish that is no attribute of the standard. It is refused here rather than passed to
/// the host, since no host can declare attributes of its own yet (`PMIx_Register_attributes`,
/// issue 5). A publish's infos with keys outside the reserved `pmix` prefix are its data, not
/// directives. Gets decide their own (G-13).
fn unknown_required(request: &Request) -> Option<String> {
    let (info, data_too) = match request {
        Request::Publish { info, .. } => (info, true),
        Request::Fence { info, .. }
        | Request::Lookup { info, .. }
        | Request::Unpublish { info, .. } => (info, false),
        _ => return None,
    };
    info.iter()
        .filter(|i| i.is_required())
        .map(|i| i.key.as_str())
        .filter(|k| !data_too || is_reserved(k))
        .find(|k| attr::by_key(k).is_none())
        .map(str::to_owned)
}

#[cfg(test)]
mod across_nodes_tests;
#[cfg(test)]
mod announced_tests;
mod collective;
mod connect;
mod events;
#[cfg(test)]
mod events_tests;
mod fencing;
mod gets;
#[cfg(test)]
mod group_values_tests;
mod groups;
#[cfg(test)]
mod groups_tests;
mod hello;
#[cfg(test)]
mod host_tests;
mod interface;
mod iof;
#[cfg(test)]
mod iof_tests;
mod ops;
mod psets;
mod query;
mod relayed;
mod resolve;
mod shared;
#[cfg(test)]
mod tests;
mod upcall;
#[cfg(test)]
mod versions_tests;
mod wait_limit;

pub(crate) use wait_limit::HELD_GETS;
