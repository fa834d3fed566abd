//! Process groups (PMIx v5.0 ch. 14): built collectively or by invitation, used by their id
//! in later collectives, destructed collectively, left one member at a time.
//!
//! - **Construct and destruct** are collectives of the members, tracked as fences are
//!   ([`super::super::fence`]) but matched by the group's name as well as its members:
//!   completed here when every member runs on this node (or `PMIX_GROUP_LOCAL_ONLY` says
//!   so), through the host's `group` upcall otherwise, or to have the host assign a context
//!   id (`PMIX_GROUP_ASSIGN_CONTEXT_ID`). A member lost before it took part fails the
//!   operation everywhere (`PMIX_LOCAL_COLLECTIVE_STATUS` to the host). With
//!   `PMIX_GROUP_OPTIONAL`, a construction whose `PMIX_TIMEOUT` passes forms the group of
//!   those who took part and answers `PMIX_ERR_PARTIAL_SUCCESS` (§14.2.5); without it,
//!   `PMIX_ERR_TIMEOUT`.
//! - **Bootstrap** (the latest draft, provisional; kept in [`super::bootstrap`]): leaders
//!   name only themselves with `PMIX_GROUP_BOOTSTRAP` and may add members
//!   (`PMIX_GROUP_ADD_MEMBERS`), who call with no processes; once all have called, the
//!   construction goes on as a collective of the whole group. Within one server.
//! - **Invite and join** (kept in [`super::invitations`]): the leader's invitation raises `PMIX_GROUP_INVITED` at each
//!   invitee; each join raises `PMIX_GROUP_INVITE_ACCEPTED` or `PMIX_GROUP_INVITE_DECLINED`
//!   at the leader, and an invitee that terminates first raises `PMIX_GROUP_INVITE_FAILED`.
//!   Once all have answered the group is the leader and those who accepted; every member
//!   then hears `PMIX_GROUP_CONSTRUCT_COMPLETE` with `PMIX_GROUP_MEMBERSHIP`, and the leader
//!   and the joiners are answered with `PMIX_SUCCESS` (the standard leaves decliners to the
//!   leader's handlers; here they are simply left out). When the invitation's `PMIX_TIMEOUT`
//!   passes first, it forms the group of those who accepted and answers
//!   `PMIX_ERR_PARTIAL_SUCCESS` with `PMIX_GROUP_OPTIONAL`, and fails with
//!   `PMIX_ERR_TIMEOUT` without; a failed invitation raises `PMIX_GROUP_CONSTRUCT_ABORT` at
//!   the invitees still in. Invitees on other nodes are reached through the host's
//!   `notify_event` (see [`super::invitations`]); the servers of those that never answered
//!   hear the end too, without an event to them, and stop holding it. Invitations that clients run by events
//!   alone (OpenPMIx 4.2's) reach the server only as those events; the leader's
//!   `PMIX_GROUP_CONSTRUCT_COMPLETE` makes their group known (see [`super::announced`]).
//! - **Context ids**: a group formed with one raises `PMIX_GROUP_CONTEXT_ID_ASSIGNED`, with
//!   `PMIX_GROUP_CONTEXT_ID`, at the members each server serves; the values its members
//!   posted for it (`PMIX_GROUP_LOCAL_CID`) are kept under that id (see
//!   [`values`]).
//! - **Leave** takes the caller out at once and raises `PMIX_GROUP_LEFT` at the other
//!   members; a server left with no member of the group drops it (the others' destruct
//!   runs where they are). A destruct started before a member's server has heard of a leave
//!   elsewhere still waits for the one that left.
//! - **Leaders and terminations** (§14.2.6): a member constructing with `PMIX_GROUP_LEADER`
//!   leads the group. With `PMIX_GROUP_NOTIFY_TERMINATION`, a member that terminates is
//!   reported instead of failing the operation: `PMIX_GROUP_MEMBER_FAILED` goes to the
//!   leader (to every member when none was declared), the construction or destruct goes on
//!   without it, and a construction that lost members ends with `PMIX_GROUP_MEMBERSHIP_UPDATE`
//!   naming who is in; `PMIX_GROUP_FT_COLLECTIVE` goes on the same way without the failure
//!   and leader events. A leader that terminates (of a construction, a group, or an
//!   invitation) raises `PMIX_GROUP_LEADER_FAILED` at the others, and the first of them in the
//!   group's order leads on, announced by `PMIX_GROUP_LEADER_SELECTED` with the new leader as
//!   `PMIX_EVENT_AFFECTED_PROC`. The library selects: the standard lets a member claim the
//!   role from its handler's results, which do not travel back to the server. An invitation
//!   whose leader fails before anyone accepted is aborted (`PMIX_GROUP_CONSTRUCT_ABORT`).
//!   Each server tells the members it serves, of terminations it sees and of those the host
//!   reports from other nodes (`PMIX_EVENT_PROC_TERMINATED`, `PMIX_EVENT_NODE_DOWN`), so
//!   that every member hears once and all servers select the same leader. A construction
//!   that spans nodes is decided by the host: the members it excused stay in the list the
//!   host is given, which names the collective alike at every server, and a host that goes
//!   on without lost members answers with `PMIX_GROUP_MEMBERSHIP`, the group it formed
//!   (members then hear `PMIX_GROUP_MEMBERSHIP_UPDATE`). A destruct of such a group passes
//!   `PMIX_GROUP_NOTIFY_TERMINATION` to the host as well.
//! - **What members ask** (§14.2.5): the queries `PMIX_QUERY_GROUP_NAMES` and
//!   `PMIX_QUERY_GROUP_MEMBERSHIP`, and a get of a process's `PMIX_GROUP_NAMES`, are
//!   answered from the groups this server tracks (a get of a process in none of them goes
//!   on to what the host registered).
//! - **Group ids in collectives**: a fence over `(group, PMIX_RANK_WILDCARD)` is a fence
//!   over the members, and `(group, r)` stands for its `r`-th member (§14.2: group ranks are
//!   positions in the construction's list).
//!
//! Bad input is `PMIX_ERR_BAD_PARAM` (an empty name or member list, duplicate members, a
//! caller that is not a member), an unknown group `PMIX_ERR_NOT_FOUND`, and a name in use
//! `PMIX_ERR_EXISTS`; a destructed group's name can be used again.

use crate::events::Event;
use crate::model::{DataArray, DataRange, GroupOperation, Info, Proc, Rank, Status, Value, attr};
use crate::retrieval::{Directives, ServerStep};
use crate::wire::ops::GROUP_SERVER_EVENT;
use crate::wire::{Command, OpReply, ProcData, Reply, Tag};

use super::collective::{FenceStep, Fences, LOST_PARTICIPANT, Waiter};
use super::interface::{Action, ConnId};
use super::upcall::{HostCall, HostResult};
use group::{Group, Kind, Roles, context_id_of, has_duplicates, tolerates_losses};
use state::Pending;

pub(super) use state::{Groups, GroupsAt};

impl GroupsAt<'_> {
    /// The processes `procs` stand for, with group ids replaced by their members.
    pub(super) fn expand_groups(&self, procs: &[Proc]) -> Vec<Proc> {
        let mut out = Vec::new();
        for p in procs {
            match self.groups.live.get(p.nspace.as_str()) {
                Some(g) if p.rank == Rank::WILDCARD => out.extend(g.members.iter().cloned()),
                Some(g) => {
                    if let Some(m) = g.members.get(p.rank.0 as usize) {
                        out.push(m.clone());
                    }
                }
                None => out.push(p.clone()),
            }
        }
        out
    }

    fn groups_of(&mut self, kind: Kind) -> &mut Fences {
        match kind {
            Kind::Construct => &mut self.groups.constructs,
            Kind::Destruct => &mut self.groups.destructs,
        }
    }

    /// Answer a construct or destruct: with the members of the group formed (which the
    /// reply carries to 5.0 and later clients) and its context id, if any.
    pub(super) fn group_reply(
        &mut self,
        kind: Kind,
        conn: ConnId,
        tag: Tag,
        status: Status,
        formed: (&[Proc], Option<u64>),
    ) {
        let (members, cid) = formed;
        let reply = match kind {
            Kind::Construct => OpReply::GroupConstruct {
                status,
                context_id: cid,
                members: members.to_vec(),
            },
            Kind::Destruct => OpReply::Status {
                command: Command::GROUP_DESTRUCT,
                status,
            },
        };
        self.send(conn, tag, &Reply::Op(reply));
    }

    pub(super) fn plain_reply(&mut self, command: Command, conn: ConnId, tag: Tag, status: Status) {
        self.send(conn, tag, &Reply::Op(OpReply::Status { command, status }));
    }

    /// `PMIx_Group_construct` from `me`.
    pub(super) fn group_construct(
        &mut self,
        conn: ConnId,
        me: &Proc,
        tag: Tag,
        group: String,
        procs: Vec<Proc>,
        info: &[Info],
    ) {
        if self.is_bootstrap(&group, &procs, info) {
            self.bootstrap_construct(conn, me, tag, group, procs, info);
            return;
        }
        let local = self.cx.store.local_participants(&procs);
        let bad =
            group.is_empty() || procs.is_empty() || has_duplicates(&procs) || !local.contains(me);
        let status = if bad {
            Status::ERR_BAD_PARAM
        } else if self.group_name_taken(&group) || self.groups.bootstraps.contains_key(&group) {
            Status::ERR_EXISTS
        } else {
            Status::SUCCESS
        };
        if status != Status::SUCCESS {
            tracing::debug!("{me}: group construct of {group:?} refused: {status:?}");
            self.group_reply(Kind::Construct, conn, tag, status, (&[], None));
            return;
        }
        let roles = self.groups.roles.entry(group.clone()).or_default();
        if Info::flag(info, attr::GROUP_LEADER) {
            roles.leader.get_or_insert_with(|| me.clone());
        }
        let optional = Info::flag(info, attr::GROUP_OPTIONAL);
        roles.notify |= Info::flag(info, attr::GROUP_NOTIFY_TERMINATION) && !optional;
        roles.tolerant |= tolerates_losses(info) && !optional;
        self.keep_posted_values(&group, me, info);
        let waiter = Waiter { conn, tag: tag.0 };
        self.group_contribute(Kind::Construct, me, waiter, &group, &procs, info);
    }

    /// `PMIx_Group_destruct` from `me`.
    pub(super) fn group_destruct(
        &mut self,
        conn: ConnId,
        me: &Proc,
        tag: Tag,
        group: String,
        info: &[Info],
    ) {
        let Some(g) = self.groups.live.get(&group) else {
            self.group_reply(
                Kind::Destruct,
                conn,
                tag,
                Status::ERR_NOT_FOUND,
                (&[], None),
            );
            return;
        };
        let procs = g.members.clone();
        let local = self.cx.store.local_participants(&procs);
        if !local.contains(me) {
            self.group_reply(
                Kind::Destruct,
                conn,
                tag,
                Status::ERR_BAD_PARAM,
                (&[], None),
            );
            return;
        }
        let waiter = Waiter { conn, tag: tag.0 };
        self.group_contribute(Kind::Destruct, me, waiter, &group, &procs, info);
    }

    /// `me`'s part in the construct or destruct of `group` by `procs`, answered at `waiter`.
    pub(super) fn group_contribute(
        &mut self,
        kind: Kind,
        me: &Proc,
        waiter: Waiter,
        group: &str,
        procs: &[Proc],
        info: &[Info],
    ) {
        let local = self.cx.store.local_participants(procs);
        let step = self
            .groups_of(kind)
            .contribute_to(group, procs, local, me, waiter, info);
        let (FenceStep::LocallyComplete(id) | FenceStep::Pending(id)) = step;
        if let Some(after_s) = Directives::from_info(info).timeout_s
            && self
                .groups_of(kind)
                .get_mut(id)
                .is_some_and(|t| t.timer.is_none())
        {
            let op = self.op();
            if let Some(t) = self.groups_of(kind).get_mut(id) {
                t.timer = Some(op);
            }
            self.cx.push(Action::Timer { op, after_s });
        }
        match step {
            FenceStep::LocallyComplete(id) => self.complete_group(kind, id),
            FenceStep::Pending(_) => {
                // Members already gone: left out if the group asked to be told, else lost.
                let gone: Vec<Proc> = self.cx.store.gone.iter().cloned().collect();
                let told = match kind {
                    Kind::Construct => self.groups.roles.get(group).is_some_and(|r| r.tolerant),
                    Kind::Destruct => self
                        .groups
                        .live
                        .get(group)
                        .is_some_and(|g| g.roles.tolerant),
                };
                for g in gone {
                    if told && kind == Kind::Construct {
                        self.excuse_from_constructions(&g);
                    } else if told {
                        let (ready, _) = self.groups.destructs.excuse(group, &g);
                        for id in ready {
                            self.complete_group(kind, id);
                        }
                    }
                    for id in self.groups_of(kind).lose(&g, LOST_PARTICIPANT) {
                        self.complete_group(kind, id);
                    }
                }
            }
        }
    }

    /// Every local member took part (or one was lost): finish here, or through the host.
    fn complete_group(&mut self, kind: Kind, id: u64) {
        let Some(t) = self.groups_of(kind).get_mut(id) else {
            return;
        };
        let (procs, lost, label) = (t.procs.clone(), t.lost, t.label.clone());
        let mut info = t.host_info();
        // A destruct goes on without members lost, as the group asked when it formed.
        let tolerant = (self.groups.live.get(&label)).is_some_and(|g| g.roles.tolerant);
        if kind == Kind::Destruct && tolerant && !tolerates_losses(&info) {
            info.push(Info::new(attr::GROUP_FT_COLLECTIVE, true));
        }
        let local_only = Info::flag(&info, attr::GROUP_LOCAL_ONLY);
        let wants_id = kind == Kind::Construct && Info::flag(&info, attr::GROUP_ASSIGN_CONTEXT_ID);
        let here = self.cx.store.all_local(&procs) || local_only;
        if here && (lost.is_some() || !wants_id) {
            self.finish_group(kind, id, lost.unwrap_or(Status::SUCCESS), None);
            return;
        }
        if let Some(t) = self.groups_of(kind).get_mut(id) {
            t.at_host = true;
        }
        let op = match kind {
            Kind::Construct => GroupOperation::CONSTRUCT,
            Kind::Destruct => GroupOperation::DESTRUCT,
        };
        let call = HostCall::Group {
            op,
            group: label,
            procs,
            directives: info,
        };
        self.call_host(Pending::Group(kind, id), call);
    }

    /// The host answered the group operation `id`.
    pub(super) fn host_answered_group(&mut self, kind: Kind, id: u64, result: HostResult) {
        let (status, cid, members) = match result.output::<Vec<Info>>() {
            Ok(info) => {
                let members = (info.iter())
                    .find(|i| i.is(attr::GROUP_MEMBERSHIP))
                    .map(|i| crate::events::procs_of(&i.value));
                (Status::SUCCESS, context_id_of(&info), members)
            }
            Err(s) => (s, None, None),
        };
        let status = match self.groups_of(kind).get_mut(id) {
            Some(t) => t.outcome(status),
            None => status,
        };
        self.finish_group_of(kind, id, status, cid, members);
    }

    fn finish_group(&mut self, kind: Kind, id: u64, status: Status, cid: Option<u64>) {
        self.finish_group_of(kind, id, status, cid, None);
    }

    /// End group operation `id` with `status`; a construction's host may have named the
    /// members still in (`PMIX_GROUP_MEMBERSHIP`, when it went on without some).
    fn finish_group_of(
        &mut self,
        kind: Kind,
        id: u64,
        status: Status,
        cid: Option<u64>,
        told_members: Option<Vec<Proc>>,
    ) {
        let Some((t, next)) = self.groups_of(kind).finish(id) else {
            return;
        };
        let formed = status == Status::SUCCESS || status == Status::ERR_PARTIAL_SUCCESS;
        let roles = match kind {
            Kind::Construct => {
                let id = cid.filter(|_| formed);
                self.store_posted_values(&t.label, id);
                self.groups.roles.remove(&t.label).unwrap_or_default()
            }
            Kind::Destruct => Roles::default(),
        };
        match kind {
            Kind::Construct if formed => {
                let still_in = t.still_in();
                let members: Vec<Proc> = match told_members {
                    Some(m) if status == Status::SUCCESS => m,
                    // A wildcard member lost some of its ranks: the others, by name.
                    _ if status == Status::SUCCESS && !t.excused.is_empty() => {
                        (self.spelled_out(&still_in).into_iter())
                            .filter(|p| !t.excused.contains(p))
                            .collect()
                    }
                    _ if status == Status::SUCCESS => still_in.clone(),
                    _ => t.contributed.keys().cloned().collect(),
                };
                // Members that terminated were left out: the others hear who is in. A
                // wildcard counts as the ranks it stands for (the host may name them).
                let fewer = status == Status::SUCCESS
                    && self.spelled_out(&members).len() < self.spelled_out(&still_in).len();
                if !roles.excused.is_empty() || fewer {
                    let info = vec![Info::new(
                        attr::GROUP_MEMBERSHIP,
                        DataArray::of_procs(members.clone()),
                    )];
                    // From the server (an event never reaches its source), to the
                    // members it serves.
                    let source = self.cx.id.clone();
                    let here: Vec<Proc> = (members.iter())
                        .filter(|m| self.cx.store.is_local(m))
                        .cloned()
                        .collect();
                    self.group_event(
                        Status::GROUP_MEMBERSHIP_UPDATE,
                        &source,
                        &here,
                        &t.label,
                        info,
                    );
                }
                if let Some(id) = cid {
                    self.context_id_assigned(&t.label, &members, id);
                }
                let group = Group {
                    members,
                    context_id: cid,
                    roles,
                };
                self.groups.live.insert(t.label.clone(), group);
            }
            Kind::Destruct if status == Status::SUCCESS => {
                self.groups.live.remove(&t.label);
            }
            _ => {}
        }
        let members = match kind {
            Kind::Construct => (self.groups.live.get(&t.label))
                .map(|g| g.members.clone())
                .unwrap_or_default(),
            Kind::Destruct => Vec::new(),
        };
        for w in t.contributed.values() {
            self.group_reply(kind, w.conn, Tag(w.tag), status, (&members, cid));
        }
        if let Some(next) = next {
            self.complete_group(kind, next);
        }
    }

    /// The timer `op` bounded a group operation or an invitation: end it. Whether it did.
    pub(super) fn group_timed_out(&mut self, op: u64) -> bool {
        if let Some(id) = self.groups.constructs.by_timer(op) {
            // Optional members that never came are left out (§14.2.5).
            let partial = self.groups.constructs.get_mut(id).is_some_and(|t| {
                Info::flag(&t.info, attr::GROUP_OPTIONAL) && !t.at_host && t.lost.is_none()
            });
            let status = if partial {
                Status::ERR_PARTIAL_SUCCESS
            } else {
                Status::ERR_TIMEOUT
            };
            self.finish_group(Kind::Construct, id, status, None);
            return true;
        }
        if let Some(id) = self.groups.destructs.by_timer(op) {
            self.finish_group(Kind::Destruct, id, Status::ERR_TIMEOUT, None);
            return true;
        }
        self.invitation_timed_out(op) || self.bootstrap_timed_out(op)
    }

    /// `proc` terminated: group operations waiting for it fail, unless their group asked
    /// to be told (`PMIX_GROUP_NOTIFY_TERMINATION`: they go on without it), and an
    /// invitation counts it as having failed to answer. A leader that terminates is
    /// replaced (see [`GroupsAt::announce_loss`]).
    pub(super) fn group_lost(&mut self, proc: &Proc) {
        self.excuse_from_constructions(proc);
        self.live_member_lost(proc);
        self.inviting_leader_lost(proc);
        for kind in [Kind::Construct, Kind::Destruct] {
            for id in self.groups_of(kind).lose(proc, LOST_PARTICIPANT) {
                self.complete_group(kind, id);
            }
        }
        self.invitee_lost(proc);
        self.bootstrap_lost(proc);
    }

    /// `procs` with each wildcard rank spelled out: every rank of its job when this server
    /// knows the job's size, else its ranks here; in rank order.
    pub(super) fn spelled_out(&self, procs: &[Proc]) -> Vec<Proc> {
        let mut out = Vec::new();
        for p in procs {
            if p.rank != Rank::WILDCARD {
                out.push(p.clone());
                continue;
            }
            let size = (self.cx.store.realms(p.nspace.as_str())).and_then(|r| r.job_size());
            match size {
                Some(n) => out.extend((0..n).map(|r| Proc::new(p.nspace.clone(), Rank(r)))),
                None => out.extend(self.cx.store.local_ranks(p.nspace.as_str())),
            }
        }
        out
    }

    /// Whether `group` names a group here, or an invitation in progress.
    pub(super) fn group_name_taken(&self, group: &str) -> bool {
        self.groups.live.contains_key(group)
            || self.groups.invitations.contains_key(group)
            || self.groups.remote_invitations.contains_key(group)
    }

    /// `proc`, a member elsewhere, terminated (the host told): the groups and constructions
    /// here that asked to be told of terminations report it to the members this server
    /// serves. A construction that spans nodes is decided by the host all the same.
    pub(super) fn group_lost_elsewhere(&mut self, proc: &Proc) {
        self.excuse_from_constructions(proc);
        self.live_member_lost(proc);
    }

    /// Constructions that asked to be told of terminations go on without `proc`.
    fn excuse_from_constructions(&mut self, proc: &Proc) {
        let told: Vec<String> = (self.groups.roles.iter())
            .filter(|(_, r)| r.tolerant)
            .map(|(g, _)| g.clone())
            .collect();
        for group in told {
            let (ready, left) = self.groups.constructs.excuse(&group, proc);
            let Some(left) = left else {
                continue;
            };
            let left = self.spelled_out(&left);
            let roles = self.groups.roles.remove(&group).unwrap_or_default();
            let mut roles = if roles.notify {
                self.announce_loss(&group, proc, &left, roles)
            } else {
                roles
            };
            roles.excused.push(proc.clone());
            self.groups.roles.insert(group, roles);
            for id in ready {
                self.complete_group(Kind::Construct, id);
            }
        }
    }

    /// Groups that asked to be told of terminations hear that `proc` is gone; a destruct in
    /// progress goes on without it (§14.2.8).
    fn live_member_lost(&mut self, proc: &Proc) {
        let told: Vec<(String, Vec<Proc>)> = (self.groups.live.iter())
            .filter(|(_, g)| g.roles.tolerant && self.spelled_out(&g.members).contains(proc))
            .map(|(name, g)| (name.clone(), g.members.clone()))
            .collect();
        for (group, members) in told {
            let left: Vec<Proc> = (self.spelled_out(&members).into_iter())
                .filter(|m| m != proc)
                .collect();
            let roles = (self.groups.live.get(&group))
                .map(|g| g.roles.clone())
                .unwrap_or_default();
            let roles = if roles.notify {
                self.announce_loss(&group, proc, &left, roles)
            } else {
                roles
            };
            if let Some(g) = self.groups.live.get_mut(&group) {
                g.roles = roles;
            }
            let (ready, _) = self.groups.destructs.excuse(&group, proc);
            for id in ready {
                self.complete_group(Kind::Destruct, id);
            }
        }
    }

    /// Tell the members of `group` still alive (`left` but those gone) that `lost`
    /// terminated: `PMIX_GROUP_MEMBER_FAILED` to the leader, or to all when none was declared
    /// (§14.2.6). When `lost` led the group, all hear `PMIX_GROUP_LEADER_FAILED`, and the first
    /// of them in the group's order becomes the leader: `PMIX_GROUP_LEADER_SELECTED`, naming it
    /// as `PMIX_EVENT_AFFECTED_PROC` (the library selects, where the standard lets a member's
    /// handler claim the role; handler results do not reach the server). The roles after.
    fn announce_loss(
        &mut self,
        group: &str,
        lost: &Proc,
        left: &[Proc],
        mut roles: Roles,
    ) -> Roles {
        let alive: Vec<Proc> = (left.iter())
            .filter(|p| *p != lost && !self.is_gone(p))
            .cloned()
            .collect();
        let Some(next) = alive.first().cloned() else {
            return roles;
        };
        // Every member's server hears of the loss (from its host when it happened
        // elsewhere) and tells the members it serves.
        let here = |to: Vec<Proc>| -> Vec<Proc> {
            to.into_iter()
                .filter(|p| self.cx.store.is_local(p))
                .collect()
        };
        if roles.leader.as_ref() != Some(lost) {
            let to = here(match &roles.leader {
                Some(leader) => vec![leader.clone()],
                None => alive,
            });
            if !to.is_empty() {
                self.group_event(Status::GROUP_MEMBER_FAILED, lost, &to, group, Vec::new());
            }
            return roles;
        }
        let to = here(alive);
        if !to.is_empty() {
            self.group_event(Status::GROUP_LEADER_FAILED, lost, &to, group, Vec::new());
            let info = vec![Info::new(attr::EVENT_AFFECTED_PROC, next.clone())];
            self.group_event(Status::GROUP_LEADER_SELECTED, lost, &to, group, info);
        }
        roles.leader = Some(next);
        roles
    }

    /// Whether `proc` is known to have terminated: here, or elsewhere as the host told.
    pub(super) fn is_gone(&self, proc: &Proc) -> bool {
        self.cx.store.gone.contains(proc) || self.groups.gone_elsewhere.contains(proc)
    }

    /// `PMIX_GROUP_CONTEXT_ID_ASSIGNED` (§14.2.4) at the members of `group` this server
    /// serves (every member's server raises it for its own), with the id.
    pub(super) fn context_id_assigned(&mut self, group: &str, members: &[Proc], id: u64) {
        // A member given as a job's wildcard stands for each of its ranks here.
        let here: Vec<Proc> = (self.spelled_out(members).into_iter())
            .filter(|m| self.cx.store.is_local(m))
            .collect();
        if here.is_empty() {
            return;
        }
        let info = vec![Info::new(attr::GROUP_CONTEXT_ID, id as usize)];
        let source = self.cx.id.clone();
        self.group_event(
            Status::GROUP_CONTEXT_ID_ASSIGNED,
            &source,
            &here,
            group,
            info,
        );
    }

    /// The answers to the group keys of `query` (§14.2.5): `PMIX_QUERY_GROUP_NAMES`, the
    /// groups with a member on this server, and `PMIX_QUERY_GROUP_MEMBERSHIP`, the members of
    /// the group the qualifier `PMIX_GROUP_ID` names (left open when it names none known).
    pub(super) fn group_answers(&self, query: &crate::model::Query) -> Vec<Info> {
        let mut out = Vec::new();
        for key in crate::query::asked(query) {
            if key == attr::QUERY_GROUP_NAMES.wire_key() {
                let names = crate::model::DataArray {
                    data_type: crate::model::DataType::STRING,
                    elements: (self.groups.live.keys())
                        .map(|n| crate::model::Value::string(n.clone()))
                        .collect(),
                };
                out.push(Info::new(attr::QUERY_GROUP_NAMES, names));
            } else if key == attr::QUERY_GROUP_MEMBERSHIP.wire_key() {
                let group = (query.qualifiers.iter())
                    .find_map(|i| i.get(attr::GROUP_ID))
                    .and_then(|name| self.groups.live.get(&name));
                if let Some(g) = group {
                    let members = DataArray::of_procs(g.members.clone());
                    out.push(Info::new(attr::QUERY_GROUP_MEMBERSHIP, members));
                }
            }
        }
        out
    }

    /// The answer to a get of `PMIX_GROUP_NAMES` for `proc` (§14.2.5): the names of the
    /// groups this server tracks that it is a member of. `None` for a whole namespace and
    /// for a process in none of them, whose get goes the way of any reserved key (what the
    /// host registered, or `PMIX_ERR_NOT_FOUND`). This server tracks every group of a
    /// process it serves; of another process, the groups it shares with this node's.
    pub(super) fn group_names_of(&self, proc: &Proc) -> Option<ServerStep> {
        if proc.rank == Rank::WILDCARD {
            return None;
        }
        let names: Vec<Value> = (self.groups.live.iter())
            .filter(|(_, g)| (g.members.iter()).any(|m| m.matches(proc)))
            .map(|(name, _)| Value::string(name.clone()))
            .collect();
        if names.is_empty() {
            return None;
        }
        let names = DataArray {
            data_type: crate::model::DataType::STRING,
            elements: names,
        };
        Some(ServerStep::Reply {
            status: Status::SUCCESS,
            data: vec![ProcData {
                proc: proc.clone(),
                kvals: vec![crate::model::Kval {
                    key: crate::model::Key::from_checked(attr::GROUP_NAMES.wire_key().to_owned()),
                    value: Value::DataArray(Box::new(names)),
                }],
            }],
        })
    }

    pub(super) fn groups_conn_closed(&mut self, conn: ConnId) {
        self.groups.constructs.drop_conn(conn);
        self.groups.destructs.drop_conn(conn);
    }

    /// Raise group event `status` from `source` at `targets`, naming `group`: at those this
    /// server serves, and through the host's `notify_event` at the others (their servers
    /// act on the events of invitations and departures: see [`GroupsAt::relayed_group_event`]).
    pub(super) fn group_event(
        &mut self,
        status: Status,
        source: &Proc,
        targets: &[Proc],
        group: &str,
        mut info: Vec<Info>,
    ) {
        info.push(Info::new(attr::GROUP_ID, group.to_owned()));
        info.push(Info::new(
            attr::EVENT_CUSTOM_RANGE,
            DataArray::of_procs(targets.to_vec()),
        ));
        let elsewhere: Vec<Proc> = (targets.iter())
            .filter(|p| !self.cx.store.is_local(p))
            .cloned()
            .collect();
        if !elsewhere.is_empty() {
            let mut relayed = info.clone();
            relayed.extend(Info::with_key(GROUP_SERVER_EVENT, Value::Bool(true)));
            let call = HostCall::NotifyEvent {
                status,
                source: source.clone(),
                range: DataRange::CUSTOM,
                info: relayed,
            };
            let pending = Pending::GroupRelay {
                group: group.to_owned(),
                status,
                source: source.clone(),
                targets: elsewhere,
            };
            self.call_host(pending, call);
        }
        let event = Event {
            status,
            source: source.clone(),
            range: DataRange::CUSTOM,
            info,
        };
        if let Err(s) = event.check() {
            tracing::debug!("group event {status:?} for {group:?} not raised: {s:?}");
            return;
        }
        self.events.distribute(self.cx, event);
    }

    /// `PMIx_Group_leave` from `me`: out of the group at once; the others hear of it. A
    /// group formed over a job's wildcard rank is its ranks, so it is spelled out first.
    pub(super) fn group_leave(&mut self, conn: ConnId, me: &Proc, tag: Tag, group: String) {
        let members = (self.groups.live.get(&group)).map(|g| self.spelled_out(&g.members));
        let status = match (members, self.groups.live.get_mut(&group)) {
            (Some(members), Some(g)) if members.contains(me) => {
                g.members = members.into_iter().filter(|m| m != me).collect();
                Status::SUCCESS
            }
            (_, Some(_)) => Status::ERR_BAD_PARAM,
            (_, None) => Status::ERR_NOT_FOUND,
        };
        self.plain_reply(Command::GROUP_LEAVE, conn, tag, status);
        if status != Status::SUCCESS {
            return;
        }
        let rest = self
            .groups
            .live
            .get(&group)
            .map(|g| g.members.clone())
            .unwrap_or_default();
        if !rest.is_empty() {
            self.group_event(Status::GROUP_LEFT, me, &rest, &group, Vec::new());
        }
        // A group with no member here is no longer this server's to keep: its destruct runs
        // where its members are, and would not reach this record.
        if !rest.iter().any(|m| self.cx.store.is_local(m)) {
            self.groups.live.remove(&group);
        }
    }
}

mod announced;
mod bootstrap;
pub(super) mod group;
mod invitations;
pub(in crate::server::core) use invitations::for_servers_only;
mod state;
pub(super) mod values;
