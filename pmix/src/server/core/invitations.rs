//! Invitations (PMIx v5.0 §14.2.10, §14.2.11): a leader invites processes into a group, each
//! answers with a join (accept or decline), and the group forms of the leader and those who
//! accepted once all have answered, or at the invitation's `PMIX_TIMEOUT`. See
//! [`super::groups`] for the events raised and the leader's failover.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{DataArray, GroupOperation, Info, Proc, Rank, Status, attr};
use crate::retrieval::Directives;
use crate::wire::ops::GROUP_JOIN_DECLINES;
use crate::wire::{Command, Tag};

use super::super::fence::Waiter;
use super::groups::{Group, Roles, context_id_of, has_duplicates};
use super::{Action, ConnId, HostCall, HostResult, Pending, ServerCore};

/// An invitation in progress.
#[derive(Debug)]
pub(super) struct Invitation {
    leader: Proc,
    /// The leader's invite call, to answer (none once the inviting leader failed).
    waiter: Option<Waiter>,
    invited: Vec<Proc>,
    info: Vec<Info>,
    accepted: BTreeMap<Proc, Waiter>,
    refused: BTreeSet<Proc>,
    timer: Option<u64>,
    /// Its `PMIX_TIMEOUT` passed before every invitee answered.
    timed_out: bool,
    /// Asked the host for a context id: the invitation is complete otherwise.
    at_host: bool,
}

impl Invitation {
    /// The group it forms: the leader, then those who accepted, in the order invited (a
    /// leader selected from the invitees comes first only).
    fn members(&self) -> Vec<Proc> {
        let mut members = vec![self.leader.clone()];
        members.extend(
            self.invited
                .iter()
                .filter(|p| self.accepted.contains_key(*p) && **p != self.leader)
                .cloned(),
        );
        members
    }
}

impl ServerCore {
    /// The timer `op` bounded an invitation: those who did not answer count as refusing.
    /// Whether it did.
    pub(super) fn invitation_timed_out(&mut self, op: u64) -> bool {
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
    /// (`PMIX_GROUP_INVITE_FAILED` at the leader).
    pub(super) fn invitee_lost(&mut self, proc: &Proc) {
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
    pub(super) fn inviting_leader_lost(&mut self, proc: &Proc) {
        let led: Vec<String> = (self.groups.invitations.iter())
            .filter(|(_, i)| i.leader == *proc)
            .map(|(g, _)| g.clone())
            .collect();
        for group in led {
            let Some(inv) = self.groups.invitations.get_mut(&group) else {
                continue;
            };
            inv.waiter = None;
            let still: Vec<Proc> = (inv.invited.iter())
                .filter(|p| !inv.refused.contains(*p) && !self.store.gone.contains(*p))
                .cloned()
                .collect();
            let next = (inv.invited.iter())
                .find(|p| inv.accepted.contains_key(*p) && !self.store.gone.contains(*p))
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
                None => {
                    let status = Status::GROUP_CONSTRUCT_ABORT;
                    self.group_event(status, proc, &still, &group, Vec::new());
                    self.form_invited_group(&group, Err(status));
                }
            }
        }
    }

    /// `PMIx_Group_invite` from the leader `me`.
    pub(super) fn group_invite(
        &mut self,
        conn: ConnId,
        me: &Proc,
        tag: Tag,
        group: String,
        procs: Vec<Proc>,
        info: Vec<Info>,
    ) {
        let status = if group.is_empty()
            || procs.is_empty()
            || has_duplicates(&procs)
            || procs.contains(me)
            || procs.iter().any(|p| p.rank == Rank::WILDCARD)
        {
            Status::ERR_BAD_PARAM
        } else if self.groups.live.contains_key(&group)
            || self.groups.invitations.contains_key(&group)
        {
            Status::ERR_EXISTS
        } else if !procs.iter().all(|p| self.store.is_local(p)) {
            tracing::debug!("{me}: invitation to {group:?} reaches beyond this node");
            Status::ERR_NOT_SUPPORTED
        } else {
            Status::SUCCESS
        };
        if status != Status::SUCCESS {
            self.plain_reply(Command::GROUP_INVITE, conn, tag, status);
            return;
        }
        let timer = Directives::from_info(&info).timeout_s.map(|after_s| {
            let op = self.op();
            self.actions.push_back(Action::Timer { op, after_s });
            op
        });
        let gone: Vec<Proc> = procs
            .iter()
            .filter(|p| self.store.gone.contains(*p))
            .cloned()
            .collect();
        let invitation = Invitation {
            leader: me.clone(),
            waiter: Some(Waiter { conn, tag: tag.0 }),
            invited: procs.clone(),
            info,
            accepted: BTreeMap::new(),
            refused: gone.iter().cloned().collect(),
            timer,
            timed_out: false,
            at_host: false,
        };
        self.groups.invitations.insert(group.clone(), invitation);
        let reachable: Vec<Proc> = procs.into_iter().filter(|p| !gone.contains(p)).collect();
        if !reachable.is_empty() {
            self.group_event(Status::GROUP_INVITED, me, &reachable, &group, Vec::new());
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
    pub(super) fn group_join(
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
        let status = match self.groups.invitations.get(&group) {
            None => Status::ERR_NOT_FOUND,
            Some(inv) if !inv.invited.contains(me) => Status::ERR_BAD_PARAM,
            // The leader it was invited by, or the one that replaced it (§14.2.10).
            Some(inv)
                if procs
                    .first()
                    .is_some_and(|l| *l != inv.leader && !self.store.gone.contains(l)) =>
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
            Status::GROUP_INVITE_DECLINED
        } else {
            inv.accepted.insert(me.clone(), Waiter { conn, tag: tag.0 });
            Status::GROUP_INVITE_ACCEPTED
        };
        if declines {
            self.plain_reply(Command::GROUP_JOIN, conn, tag, Status::SUCCESS);
        }
        self.group_event(event, me, &[leader], &group, Vec::new());
        self.conclude_invitation(&group);
    }

    /// Every invitee of `group` answered (or failed to): form the group, asking the host for
    /// a context id first if the leader wanted one.
    fn conclude_invitation(&mut self, group: &str) {
        let Some(inv) = self.groups.invitations.get_mut(group) else {
            return;
        };
        let answered = inv.accepted.len() + inv.refused.len();
        if answered < inv.invited.len() || inv.at_host {
            return;
        }
        if inv.timed_out && !Info::flag(&inv.info, attr::GROUP_OPTIONAL) {
            self.form_invited_group(group, Err(Status::ERR_TIMEOUT));
            return;
        }
        let members = inv.members();
        if Info::flag(&inv.info, attr::GROUP_ASSIGN_CONTEXT_ID) {
            inv.at_host = true;
            let call = HostCall::Group {
                op: GroupOperation::CONSTRUCT,
                group: group.to_owned(),
                procs: members,
                info: inv.info.clone(),
            };
            self.call_host(Pending::Invitation(group.to_owned()), call);
            return;
        }
        self.form_invited_group(group, Ok(None));
    }

    /// The host answered the context-id request of the invitation to `group`.
    pub(super) fn host_answered_invitation(&mut self, group: &str, result: HostResult) {
        let result = match result {
            HostResult::Infos(Ok(info)) => Ok(context_id_of(&info)),
            other => Err(other.failure()),
        };
        self.form_invited_group(group, result);
    }

    fn form_invited_group(&mut self, group: &str, cid: Result<Option<u64>, Status>) {
        let Some(inv) = self.groups.invitations.remove(group) else {
            return;
        };
        let members = inv.members();
        let status = match cid {
            Ok(cid) => {
                let g = Group {
                    members: members.clone(),
                    context_id: cid,
                    roles: Roles {
                        leader: Some(inv.leader.clone()),
                        notify: Info::flag(&inv.info, attr::GROUP_NOTIFY_TERMINATION),
                        excused: Vec::new(),
                    },
                };
                self.groups.live.insert(group.to_owned(), g);
                let mut info = vec![Info::new(
                    attr::GROUP_MEMBERSHIP,
                    DataArray::of_procs(members.clone()),
                )];
                if let Some(c) = cid {
                    info.push(Info::new(attr::GROUP_CONTEXT_ID, c as usize));
                    self.context_id_assigned(group, &members, c);
                }
                let leader = inv.leader.clone();
                self.group_event(
                    Status::GROUP_CONSTRUCT_COMPLETE,
                    &leader,
                    &members,
                    group,
                    info,
                );
                if inv.timed_out {
                    Status::ERR_PARTIAL_SUCCESS
                } else {
                    Status::SUCCESS
                }
            }
            Err(s) => s,
        };
        let joined = if status == Status::ERR_PARTIAL_SUCCESS {
            Status::SUCCESS
        } else {
            status
        };
        for w in inv.accepted.values() {
            self.plain_reply(Command::GROUP_JOIN, w.conn, Tag(w.tag), joined);
        }
        if let Some(w) = inv.waiter {
            self.plain_reply(Command::GROUP_INVITE, w.conn, Tag(w.tag), status);
        }
    }
}
