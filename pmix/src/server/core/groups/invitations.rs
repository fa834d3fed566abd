//! Invitations (PMIx v5.0 §14.2.10, §14.2.11): a leader invites processes into a group, each
//! answers with a join (accept or decline), and the group forms of the leader and those who
//! accepted once all have answered, or at the invitation's `PMIX_TIMEOUT`. See
//! [`super::groups`] for the events raised and the leader's failover.
//!
//! **Across nodes**, the invitation lives at the server of the leader that issued it (its
//! *home*), and the standard's own events carry it between servers through the host's
//! `notify_event` (which relays custom-range events to the servers of the processes named):
//!
//! - `PMIX_GROUP_INVITED` tells an invitee's server of the invitation
//!   ([`RemoteInvitation`]), so that its invitees can join there;
//! - a join there raises `PMIX_GROUP_INVITE_ACCEPTED` or `PMIX_GROUP_INVITE_DECLINED` at the
//!   leader and at the home server, which counts the answer;
//! - the home server ends the invitation with `PMIX_GROUP_CONSTRUCT_COMPLETE` (carrying
//!   `PMIX_GROUP_MEMBERSHIP` and the context id) or `PMIX_GROUP_CONSTRUCT_ABORT` (carrying
//!   the status it ended with under [`GROUP_OUTCOME`]) at the invitees still in, and their
//!   servers answer the joins with it;
//! - `PMIX_GROUP_LEADER_SELECTED` moves the role of leader at every server.
//!
//! The home server learns of invitees that terminated elsewhere from the host's
//! `PMIX_EVENT_PROC_TERMINATED` and `PMIX_EVENT_NODE_DOWN`. When the home node itself goes
//! down the invitation is lost with it: the invitees' servers abort it
//! (`PMIX_GROUP_LEADER_FAILED`, then `PMIX_GROUP_CONSTRUCT_ABORT`). An invitation the host
//! cannot carry (its `notify_event` fails) counts the invitees it could not reach as failed.

use std::collections::{BTreeMap, BTreeSet};

use crate::events::{Event, procs_of};
use crate::model::{DataArray, GroupOperation, Info, Proc, Rank, Status, Value, attr};
use crate::retrieval::Directives;
use crate::wire::op_reply::OpReply;
use crate::wire::ops::{GROUP_FOR_SERVERS, GROUP_JOIN_DECLINES, GROUP_OUTCOME, GROUP_SERVER_EVENT};
use crate::wire::{Command, Reply, Tag};

use super::super::collective::{LOST_PARTICIPANT, Waiter};
use super::super::interface::{Action, ConnId};
use super::super::upcall::{HostCall, HostResult};
use super::group::{Group, Roles, context_id_of, has_duplicates, tolerates_losses};
use super::state::{GroupsAt, Invitation, Pending, RemoteInvitation};

impl GroupsAt<'_> {
    /// The timer `op` bounded an invitation: those who did not answer count as refusing.
    /// Whether it did.
    pub(in crate::server::core) fn invitation_timed_out(&mut self, op: u64) -> bool {
        let invitation = self
            .groups
            .invitations
            .iter()
            .find(|(_, i)| i.timer == Some(op) && !i.at_host)
            .map(|(g, _)| g.clone());
        if let Some(group) = invitation {
            if let Some(inv) = self.groups.invitations.get_mut(&group) {
                let silent: Vec<Proc> = inv
                    .invited
                    .iter()
                    .filter(|p| !inv.accepted.contains_key(*p) && !inv.refused.contains(*p))
                    .cloned()
                    .collect();
                inv.refused.extend(silent);
                inv.timed_out = true;
            }
            self.conclude_invitation(&group);
            return true;
        }
        false
    }

    /// `proc` terminated: an invitation it had not answered counts it as failed
    /// (`PMIX_GROUP_INVITE_FAILED` at the leader), and fails unless its members are optional
    /// (see [`GroupsAt::conclude_invitation`]).
    pub(in crate::server::core) fn invitee_lost(&mut self, proc: &Proc) {
        self.remote_invitee_lost(proc);
        let waiting: Vec<(String, Proc)> = self
            .groups
            .invitations
            .iter()
            .filter(|(_, i)| {
                i.invited.contains(proc)
                    && !i.accepted.contains_key(proc)
                    && !i.refused.contains(proc)
            })
            .map(|(g, i)| (g.clone(), i.leader.clone()))
            .collect();
        for (group, leader) in waiting {
            if let Some(inv) = self.groups.invitations.get_mut(&group) {
                inv.refused.insert(proc.clone());
                inv.lost = true;
            }
            self.group_event(
                Status::GROUP_INVITE_FAILED,
                proc,
                &[leader],
                &group,
                Vec::new(),
            );
            self.conclude_invitation(&group);
        }
    }

    /// The leader of an invitation terminated: the invitees still in hear
    /// `PMIX_GROUP_LEADER_FAILED` (§14.2.10). The first who accepted leads on
    /// (`PMIX_GROUP_LEADER_SELECTED`); with none, the construction is aborted
    /// (`PMIX_GROUP_CONSTRUCT_ABORT`) and those who accepted are answered with it.
    pub(in crate::server::core) fn inviting_leader_lost(&mut self, proc: &Proc) {
        let led: Vec<String> = (self.groups.invitations.iter())
            .filter(|(_, i)| i.leader == *proc)
            .map(|(g, _)| g.clone())
            .collect();
        for group in led {
            let Some(inv) = self.groups.invitations.get_mut(&group) else {
                continue;
            };
            inv.waiter = None;
            let (invited, accepted, refused) = (
                inv.invited.clone(),
                inv.accepted.keys().cloned().collect::<BTreeSet<_>>(),
                inv.refused.clone(),
            );
            let still: Vec<Proc> = (invited.iter())
                .filter(|p| !refused.contains(*p) && !self.is_gone(p))
                .cloned()
                .collect();
            let next = (invited.iter())
                .find(|p| accepted.contains(*p) && !self.is_gone(p))
                .cloned();
            self.group_event(
                Status::GROUP_LEADER_FAILED,
                proc,
                &still,
                &group,
                Vec::new(),
            );
            match next {
                Some(next) => {
                    if let Some(inv) = self.groups.invitations.get_mut(&group) {
                        inv.leader = next.clone();
                    }
                    let info = vec![Info::new(attr::EVENT_AFFECTED_PROC, next)];
                    self.group_event(Status::GROUP_LEADER_SELECTED, proc, &still, &group, info);
                    self.conclude_invitation(&group);
                }
                None => self.form_invited_group(&group, Err(Status::GROUP_CONSTRUCT_ABORT)),
            }
        }
    }

    /// `PMIx_Group_invite` from the leader `me`.
    pub(in crate::server::core) fn group_invite(
        &mut self,
        conn: ConnId,
        me: &Proc,
        tag: Tag,
        group: String,
        procs: Vec<Proc>,
        info: Vec<Info>,
    ) {
        // The caller leads the group by its role: listed among the invited (as OpenPMIx's
        // own examples list it), it is not sent an invitation of its own.
        let procs: Vec<Proc> = procs.into_iter().filter(|p| p != me).collect();
        let status = if group.is_empty()
            || procs.is_empty()
            || has_duplicates(&procs)
            || procs.iter().any(|p| p.rank == Rank::WILDCARD)
        {
            Status::ERR_BAD_PARAM
        } else if self.group_name_taken(&group) {
            Status::ERR_EXISTS
        } else {
            Status::SUCCESS
        };
        if status != Status::SUCCESS {
            self.plain_reply(Command::GROUP_INVITE, conn, tag, status);
            return;
        }
        let timer = Directives::from_info(&info).timeout_s.map(|after_s| {
            let op = self.op();
            self.cx.push(Action::Timer { op, after_s });
            op
        });
        let gone: Vec<Proc> = procs.iter().filter(|p| self.is_gone(p)).cloned().collect();
        // The invitees' servers elsewhere learn from it whether the group reports
        // terminations.
        let mut told = Vec::new();
        for flag in [attr::GROUP_NOTIFY_TERMINATION, attr::GROUP_FT_COLLECTIVE] {
            if Info::flag(&info, flag) {
                told.push(Info::new(flag, true));
            }
        }
        let invitation = Invitation {
            leader: me.clone(),
            waiter: Some(Waiter { conn, tag: tag.0 }),
            invited: procs.clone(),
            info,
            accepted: BTreeMap::new(),
            refused: gone.iter().cloned().collect(),
            declined: BTreeSet::new(),
            timer,
            timed_out: false,
            lost: !gone.is_empty(),
            at_host: false,
        };
        self.groups.invitations.insert(group.clone(), invitation);
        let reachable: Vec<Proc> = procs.into_iter().filter(|p| !gone.contains(p)).collect();
        if !reachable.is_empty() {
            self.group_event(Status::GROUP_INVITED, me, &reachable, &group, told);
        }
        for g in gone {
            self.group_event(
                Status::GROUP_INVITE_FAILED,
                &g,
                std::slice::from_ref(me),
                &group,
                Vec::new(),
            );
        }
        self.conclude_invitation(&group);
    }

    /// `PMIx_Group_join` from `me`, answering `leader`'s invitation.
    pub(in crate::server::core) fn group_join(
        &mut self,
        conn: ConnId,
        me: &Proc,
        tag: Tag,
        group: String,
        procs: Vec<Proc>,
        info: &[Info],
    ) {
        let declines = info
            .iter()
            .any(|i| i.key.as_str() == GROUP_JOIN_DECLINES && i.value.as_bool() == Some(true));
        if !self.groups.invitations.contains_key(&group) {
            self.join_elsewhere(conn, me, tag, group, procs, declines);
            return;
        }
        let status = match self.groups.invitations.get(&group) {
            None => Status::ERR_NOT_FOUND,
            Some(inv) if !inv.invited.contains(me) => Status::ERR_BAD_PARAM,
            // The leader it was invited by, or the one that replaced it (§14.2.10).
            Some(inv)
                if procs
                    .first()
                    .is_some_and(|l| *l != inv.leader && !self.is_gone(l)) =>
            {
                Status::ERR_BAD_PARAM
            }
            Some(inv) if inv.accepted.contains_key(me) || inv.refused.contains(me) => {
                Status::ERR_EXISTS
            }
            Some(_) => Status::SUCCESS,
        };
        if status != Status::SUCCESS {
            self.plain_reply(Command::GROUP_JOIN, conn, tag, status);
            return;
        }
        let Some(inv) = self.groups.invitations.get_mut(&group) else {
            return;
        };
        let leader = inv.leader.clone();
        let event = if declines {
            inv.refused.insert(me.clone());
            inv.declined.insert(me.clone());
            Status::GROUP_INVITE_DECLINED
        } else {
            inv.accepted
                .insert(me.clone(), Some(Waiter { conn, tag: tag.0 }));
            Status::GROUP_INVITE_ACCEPTED
        };
        if declines {
            self.plain_reply(Command::GROUP_JOIN, conn, tag, Status::SUCCESS);
        }
        self.group_event(event, me, &[leader], &group, Vec::new());
        self.conclude_invitation(&group);
    }

    /// Every invitee of `group` answered (or failed to): form the group, asking the host for
    /// a context id first if the leader wanted one. An invitee that failed to answer (it
    /// terminated, or the timeout passed) fails the invitation unless the leader made its
    /// members optional (v5.0 §14.2.10 `PMIX_GROUP_OPTIONAL`, `PMIX_TIMEOUT`); then the group
    /// forms without it, a partial success (§14.2.11).
    fn conclude_invitation(&mut self, group: &str) {
        let Some(inv) = self.groups.invitations.get_mut(group) else {
            return;
        };
        let answered = inv.accepted.len() + inv.refused.len();
        if answered < inv.invited.len() || inv.at_host {
            return;
        }
        if !Info::flag(&inv.info, attr::GROUP_OPTIONAL) {
            let failure = if inv.timed_out {
                Some(Status::ERR_TIMEOUT)
            } else {
                inv.lost.then_some(LOST_PARTICIPANT)
            };
            if let Some(failure) = failure {
                self.form_invited_group(group, Err(failure));
                return;
            }
        }
        let members = inv.members();
        if Info::flag(&inv.info, attr::GROUP_ASSIGN_CONTEXT_ID) {
            inv.at_host = true;
            let call = HostCall::Group {
                op: GroupOperation::CONSTRUCT,
                group: group.to_owned(),
                procs: members,
                directives: inv.info.clone(),
            };
            self.call_host(Pending::Invitation(group.to_owned()), call);
            return;
        }
        self.form_invited_group(group, Ok(None));
    }

    /// The host answered the context-id request of the invitation to `group`.
    pub(in crate::server::core) fn host_answered_invitation(
        &mut self,
        group: &str,
        result: HostResult,
    ) {
        let cid = result
            .output::<Vec<Info>>()
            .map(|info| context_id_of(&info));
        self.form_invited_group(group, cid);
    }

    fn form_invited_group(&mut self, group: &str, cid: Result<Option<u64>, Status>) {
        let Some(inv) = self.groups.invitations.remove(group) else {
            return;
        };
        let members = inv.members();
        let leader = inv.leader.clone();
        // The invitation's status and results, the invitees its event reaches, and how it
        // ended for the invitees it did not count.
        let outcome = match cid {
            Ok(cid) => {
                let g = Group {
                    members: members.clone(),
                    context_id: cid,
                    roles: Roles {
                        leader: Some(leader.clone()),
                        notify: Info::flag(&inv.info, attr::GROUP_NOTIFY_TERMINATION),
                        tolerant: tolerates_losses(&inv.info),
                        excused: Vec::new(),
                    },
                };
                self.groups.live.insert(group.to_owned(), g);
                let info = formed_results(&members, cid);
                if let Some(c) = cid {
                    self.context_id_assigned(group, &members, c);
                }
                let status = if inv.timed_out || inv.lost {
                    Status::ERR_PARTIAL_SUCCESS
                } else {
                    Status::SUCCESS
                };
                self.group_event(
                    Status::GROUP_CONSTRUCT_COMPLETE,
                    &leader,
                    &members,
                    group,
                    info.clone(),
                );
                (status, info, members, Status::ERR_TIMEOUT)
            }
            Err(s) => {
                // Every invitee still in hears of it, and their servers answer their joins.
                let still: Vec<Proc> = (inv.invited.iter())
                    .filter(|p| !inv.refused.contains(*p) && !self.is_gone(p))
                    .cloned()
                    .collect();
                if !still.is_empty() {
                    let info: Vec<Info> = Info::with_key(GROUP_OUTCOME, Value::Status(s))
                        .into_iter()
                        .collect();
                    let abort = Status::GROUP_CONSTRUCT_ABORT;
                    self.group_event(abort, &leader, &still, group, info);
                }
                (s, Vec::new(), still, s)
            }
        };
        // The servers elsewhere of invitees that never answered and hear neither event drop
        // the invitation they hold for them: a join there would otherwise wait for ever, and
        // the name would stay taken. A join of theirs still on its way ends as the invitation
        // did for them: with its failure, or else its timeout, which a group formed without
        // some invitees' answers passed. Not those who declined: their servers forgot the
        // invitation when they answered, and a word of its end, relayed late, would end a
        // newer invitation to the same name there.
        let (status, results, heard, ended) = outcome;
        let unheard: Vec<Proc> = (inv.invited.iter())
            .filter(|p| {
                !heard.contains(p)
                    && !inv.declined.contains(*p)
                    && !self.cx.store.is_local(p)
                    && !self.is_gone(p)
            })
            .cloned()
            .collect();
        if !unheard.is_empty() {
            let info = [
                Info::with_key(GROUP_FOR_SERVERS, Value::Bool(true)),
                Info::with_key(GROUP_OUTCOME, Value::Status(ended)),
            ]
            .into_iter()
            .flatten()
            .collect();
            let abort = Status::GROUP_CONSTRUCT_ABORT;
            self.group_event(abort, &leader, &unheard, group, info);
        }
        // The leader and the joiners are handed the group formed (§14.2.10, §14.2.12).
        let joined = joined_status(status);
        for w in inv.accepted.values().flatten() {
            self.formed_reply(Command::GROUP_JOIN, w, joined, results.clone());
        }
        if let Some(w) = &inv.waiter {
            self.formed_reply(Command::GROUP_INVITE, w, status, results);
        }
    }

    /// Answer an invitation or a join with its status and the group formed.
    fn formed_reply(&mut self, command: Command, w: &Waiter, status: Status, info: Vec<Info>) {
        let reply = OpReply::Infos {
            command,
            status,
            info,
        };
        self.send(w.conn, Tag(w.tag), &Reply::Op(reply));
    }
}

/// What an invitation and its joins return once the group formed: the final membership
/// (v5.0 §14.2.2: the final list of participants goes to each member; §14.2.10: the
/// completion's information is returned in the results; §14.2.13: a join's callback carries
/// the membership) and the context id the host assigned, as `PMIX_GROUP_CONSTRUCT_COMPLETE`
/// carries them.
fn formed_results(members: &[Proc], cid: Option<u64>) -> Vec<Info> {
    let mut info = vec![Info::new(
        attr::GROUP_MEMBERSHIP,
        DataArray::of_procs(members.to_vec()),
    )];
    if let Some(c) = cid {
        info.push(Info::new(attr::GROUP_CONTEXT_ID, c as usize));
    }
    info
}

/// A joiner's answer once its invitation ended: the invitation's own, but a group formed
/// short of some invitees (`PMIX_ERR_PARTIAL_SUCCESS` for the leader) is a success to those
/// in it.
fn joined_status(status: Status) -> Status {
    if status == Status::ERR_PARTIAL_SUCCESS {
        Status::SUCCESS
    } else {
        status
    }
}

/// The group an event names (`PMIX_GROUP_ID`).
fn group_of(event: &Event) -> Option<String> {
    event.info.iter().find_map(|i| i.get(attr::GROUP_ID))
}

/// Whether a server raised `event` for the servers that receive it, not their processes
/// ([`GROUP_FOR_SERVERS`]).
pub(in crate::server::core) fn for_servers_only(event: &Event) -> bool {
    (event.info.iter())
        .any(|i| i.key.as_str() == GROUP_FOR_SERVERS && i.value.as_bool() == Some(true))
}

impl GroupsAt<'_> {
    /// `PMIx_Group_join` from `me`, for an invitation whose home is elsewhere: counted there,
    /// through the `PMIX_GROUP_INVITE_ACCEPTED` or `PMIX_GROUP_INVITE_DECLINED` it raises.
    fn join_elsewhere(
        &mut self,
        conn: ConnId,
        me: &Proc,
        tag: Tag,
        group: String,
        procs: Vec<Proc>,
        declines: bool,
    ) {
        let status = match self.groups.remote_invitations.get(&group) {
            None => Status::ERR_NOT_FOUND,
            Some(inv) if inv.joined.contains_key(me) => Status::ERR_EXISTS,
            Some(inv) if !inv.waiting.contains(me) => Status::ERR_BAD_PARAM,
            Some(inv)
                if procs
                    .first()
                    .is_some_and(|l| *l != inv.leader && *l != inv.home && !self.is_gone(l)) =>
            {
                Status::ERR_BAD_PARAM
            }
            Some(_) => Status::SUCCESS,
        };
        if status != Status::SUCCESS {
            self.plain_reply(Command::GROUP_JOIN, conn, tag, status);
            return;
        }
        let Some(inv) = self.groups.remote_invitations.get_mut(&group) else {
            return;
        };
        inv.waiting.remove(me);
        let mut to = vec![inv.leader.clone()];
        if inv.home != inv.leader {
            to.push(inv.home.clone());
        }
        let event = if declines {
            Status::GROUP_INVITE_DECLINED
        } else {
            inv.joined.insert(me.clone(), Waiter { conn, tag: tag.0 });
            Status::GROUP_INVITE_ACCEPTED
        };
        if declines {
            self.plain_reply(Command::GROUP_JOIN, conn, tag, Status::SUCCESS);
        }
        self.group_event(event, me, &to, &group, Vec::new());
        self.forget_answered_invitation(&group);
    }

    /// Drop the record of an invitation from elsewhere once nobody here waits on it.
    fn forget_answered_invitation(&mut self, group: &str) {
        if (self.groups.remote_invitations.get(group))
            .is_some_and(|i| i.waiting.is_empty() && i.joined.is_empty())
        {
            self.groups.remote_invitations.remove(group);
        }
    }

    /// An event the host delivered: a group event another node's server raised (marked
    /// [`GROUP_SERVER_EVENT`]) moves invitations and memberships here; of a client's own
    /// group events only the announcement of a group it assembled counts
    /// ([`super::announced`]); and the host's word of terminations elsewhere reaches the
    /// groups (the processes in range have the event already).
    pub(in crate::server::core) fn relayed_group_event(&mut self, event: &Event) {
        let status = event.status;
        if status == Status::EVENT_PROC_TERMINATED || status == Status::EVENT_NODE_DOWN {
            let node_down = status == Status::EVENT_NODE_DOWN;
            let mut lost = event.affected();
            if lost.is_empty() && !node_down && !event.source.nspace.is_empty() {
                lost.push(event.source.clone());
            }
            for proc in lost {
                self.lost_elsewhere(&proc, node_down);
            }
            return;
        }
        let from_server = (event.info.iter())
            .any(|i| i.key.as_str() == GROUP_SERVER_EVENT && i.value.as_bool() == Some(true));
        if !from_server {
            // Another node's client announcing the group it assembled.
            self.group_announced(event);
            return;
        }
        let Some(group) = group_of(event) else {
            return;
        };
        if for_servers_only(event) {
            let outcome = (event.info.iter())
                .find(|i| i.key.as_str() == GROUP_OUTCOME)
                .and_then(|i| i.value.as_status())
                .unwrap_or(Status::ERR_TIMEOUT);
            let invitees = event.custom_range().unwrap_or_default();
            self.invitation_over_for(&group, invitees, outcome);
            return;
        }
        let source = &event.source;
        match status {
            Status::GROUP_INVITED => self.invited_from_elsewhere(&group, event),
            Status::GROUP_INVITE_ACCEPTED | Status::GROUP_INVITE_DECLINED => {
                self.answered_elsewhere(&group, source, status == Status::GROUP_INVITE_ACCEPTED);
            }
            Status::GROUP_CONSTRUCT_COMPLETE => {
                let members = (event.info.iter())
                    .find(|i| i.is(attr::GROUP_MEMBERSHIP))
                    .map(|i| procs_of(&i.value))
                    .unwrap_or_default();
                let cid = context_id_of(&event.info);
                self.invited_group_formed(&group, source, members, cid);
            }
            Status::GROUP_CONSTRUCT_ABORT => {
                let outcome = (event.info.iter())
                    .find(|i| i.key.as_str() == GROUP_OUTCOME)
                    .and_then(|i| i.value.as_status())
                    .unwrap_or(Status::GROUP_CONSTRUCT_ABORT);
                self.invitation_ended_elsewhere(&group, outcome);
            }
            Status::GROUP_LEADER_SELECTED => {
                let next = event.affected().into_iter().next();
                if let (Some(inv), Some(next)) =
                    (self.groups.remote_invitations.get_mut(&group), next)
                {
                    inv.leader = next;
                }
            }
            Status::GROUP_LEFT => {
                if let Some(g) = self.groups.live.get_mut(&group) {
                    g.members.retain(|m| m != source);
                    if g.members.is_empty() {
                        self.groups.live.remove(&group);
                    }
                }
            }
            _ => {}
        }
    }

    /// `PMIX_GROUP_INVITED` from elsewhere: the invitees here may join.
    fn invited_from_elsewhere(&mut self, group: &str, event: &Event) {
        let here: BTreeSet<Proc> = (event.custom_range().unwrap_or_default().into_iter())
            .filter(|p| self.cx.store.is_local(p) && !self.is_gone(p))
            .collect();
        if here.is_empty() {
            return;
        }
        if self.groups.live.contains_key(group) || self.groups.invitations.contains_key(group) {
            tracing::debug!("invitation to {group:?} from elsewhere: the name is in use here");
            return;
        }
        let inv = (self.groups.remote_invitations)
            .entry(group.to_owned())
            .or_insert_with(|| RemoteInvitation {
                leader: event.source.clone(),
                home: event.source.clone(),
                waiting: BTreeSet::new(),
                joined: BTreeMap::new(),
                notify: Info::flag(&event.info, attr::GROUP_NOTIFY_TERMINATION),
                tolerant: tolerates_losses(&event.info),
            });
        inv.waiting.extend(here);
    }

    /// At the home server: invitee `who` answered from elsewhere.
    fn answered_elsewhere(&mut self, group: &str, who: &Proc, accepts: bool) {
        let Some(inv) = self.groups.invitations.get_mut(group) else {
            return;
        };
        if !inv.invited.contains(who) || inv.accepted.contains_key(who) || inv.refused.contains(who)
        {
            return;
        }
        if accepts {
            inv.accepted.insert(who.clone(), None);
        } else {
            inv.refused.insert(who.clone());
            inv.declined.insert(who.clone());
        }
        self.conclude_invitation(group);
    }

    /// The invitation to `group` from elsewhere formed the group of `members`, led by
    /// `leader`: it exists here too, and the joins here succeed.
    fn invited_group_formed(
        &mut self,
        group: &str,
        leader: &Proc,
        members: Vec<Proc>,
        cid: Option<u64>,
    ) {
        let Some(inv) = self.groups.remote_invitations.remove(group) else {
            return;
        };
        if let Some(c) = cid {
            self.context_id_assigned(group, &members, c);
        }
        let g = Group {
            members,
            context_id: cid,
            roles: Roles {
                leader: Some(leader.clone()),
                notify: inv.notify,
                tolerant: inv.tolerant,
                excused: Vec::new(),
            },
        };
        let results = formed_results(&g.members, cid);
        self.groups.live.insert(group.to_owned(), g);
        for w in inv.joined.values() {
            self.formed_reply(Command::GROUP_JOIN, w, Status::SUCCESS, results.clone());
        }
    }

    /// The invitation to `group` from elsewhere ended with `status`: the joins here end with it.
    fn invitation_ended_elsewhere(&mut self, group: &str, status: Status) {
        let Some(inv) = self.groups.remote_invitations.remove(group) else {
            return;
        };
        let status = joined_status(status);
        for w in inv.joined.values() {
            self.plain_reply(Command::GROUP_JOIN, w.conn, Tag(w.tag), status);
        }
    }

    /// The invitation to `group` from elsewhere ended with `outcome` for `invitees`, whose
    /// answers it did not count: those here no longer wait on it (a later join of theirs finds
    /// no invitation), and a join of theirs already made ends with `outcome`.
    fn invitation_over_for(&mut self, group: &str, invitees: Vec<Proc>, outcome: Status) {
        let Some(inv) = self.groups.remote_invitations.get_mut(group) else {
            return;
        };
        let mut ended = Vec::new();
        for p in &invitees {
            inv.waiting.remove(p);
            ended.extend(inv.joined.remove(p));
        }
        for w in ended {
            self.plain_reply(Command::GROUP_JOIN, w.conn, Tag(w.tag), outcome);
        }
        self.forget_answered_invitation(group);
    }

    /// An invitee here terminated: it no longer waits on an invitation from elsewhere.
    fn remote_invitee_lost(&mut self, proc: &Proc) {
        let groups: Vec<String> = (self.groups.remote_invitations.iter_mut())
            .filter_map(|(g, i)| {
                let was = i.waiting.remove(proc) | i.joined.remove(proc).is_some();
                was.then(|| g.clone())
            })
            .collect();
        for g in groups {
            self.forget_answered_invitation(&g);
        }
    }

    /// The host tells of `proc`'s termination elsewhere (with its node, when `node_down`): the
    /// groups and invitations here hear of it as of a local one. An invitation whose home
    /// was on a node that went down is lost: its invitees here hear
    /// `PMIX_GROUP_LEADER_FAILED` and `PMIX_GROUP_CONSTRUCT_ABORT`, and their joins end.
    pub(in crate::server::core) fn lost_elsewhere(&mut self, proc: &Proc, node_down: bool) {
        if self.cx.store.is_local(proc) || !self.groups.gone_elsewhere.insert(proc.clone()) {
            return;
        }
        self.group_lost_elsewhere(proc);
        self.invitee_lost(proc);
        self.inviting_leader_lost(proc);
        if !node_down {
            return; // the home server lives, and leads on
        }
        let homeless: Vec<String> = (self.groups.remote_invitations.iter())
            .filter(|(_, i)| i.home == *proc)
            .map(|(g, _)| g.clone())
            .collect();
        for group in homeless {
            let Some(inv) = self.groups.remote_invitations.get(&group) else {
                continue;
            };
            let here: Vec<Proc> = inv
                .waiting
                .iter()
                .chain(inv.joined.keys())
                .cloned()
                .collect();
            self.group_event(Status::GROUP_LEADER_FAILED, proc, &here, &group, Vec::new());
            let abort = Status::GROUP_CONSTRUCT_ABORT;
            self.group_event(abort, proc, &here, &group, Vec::new());
            self.invitation_ended_elsewhere(&group, abort);
        }
    }

    /// The host could not carry group event `status` from `source` to `targets` elsewhere
    /// (its `notify_event` failed with `failure`): an invitation counts those invitees as
    /// failed, and a join that could not reach the invitation's home ends with the failure.
    pub(in crate::server::core) fn group_relay_failed(
        &mut self,
        group: &str,
        status: Status,
        source: &Proc,
        targets: &[Proc],
        failure: Status,
    ) {
        tracing::warn!("the host did not carry group event {status:?} of {group:?}: {failure:?}");
        if status == Status::GROUP_INVITED {
            for t in targets {
                self.unreachable_invitee(group, t);
            }
        } else if status == Status::GROUP_INVITE_ACCEPTED
            && let Some(inv) = self.groups.remote_invitations.get_mut(group)
            && let Some(w) = inv.joined.remove(source)
        {
            self.plain_reply(Command::GROUP_JOIN, w.conn, Tag(w.tag), failure);
            self.forget_answered_invitation(group);
        }
    }

    /// Invitee `proc` of the invitation to `group` could not be told of it: it failed to
    /// answer (`PMIX_GROUP_INVITE_FAILED` at the leader).
    fn unreachable_invitee(&mut self, group: &str, proc: &Proc) {
        let Some(inv) = self.groups.invitations.get_mut(group) else {
            return;
        };
        if inv.accepted.contains_key(proc) || !inv.refused.insert(proc.clone()) {
            return;
        }
        inv.lost = true;
        let leader = inv.leader.clone();
        let failed = Status::GROUP_INVITE_FAILED;
        self.group_event(failed, proc, &[leader], group, Vec::new());
        self.conclude_invitation(group);
    }
}
