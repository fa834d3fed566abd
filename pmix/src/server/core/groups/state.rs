//! The groups chapter's state: the groups of one server, the constructions, invitations
//! and bootstraps in progress, the host calls they wait on, and [`GroupsAt`], the view
//! through which the chapter's files work on it with the state they share with the core.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Info, Proc, Status};
use crate::wire::{Reply, Tag};

use super::super::collective::{Fences, Waiter};
use super::super::events::ServerEvents;
use super::super::interface::ConnId;
use super::super::shared::Shared;
use super::super::upcall::{HostCall, HostResult};
use super::group::{Group, Kind, Roles};

/// The groups of one server.
#[derive(Debug, Default)]
pub(in crate::server::core) struct Groups {
    pub(in crate::server::core) live: BTreeMap<String, Group>,
    pub(super) constructs: Fences,
    pub(super) destructs: Fences,
    pub(in crate::server::core) invitations: BTreeMap<String, Invitation>,
    /// Invitations whose home is another node's server, to invitees here.
    pub(in crate::server::core) remote_invitations: BTreeMap<String, RemoteInvitation>,
    /// The roles of the constructions in progress, by group.
    pub(in crate::server::core) roles: BTreeMap<String, Roles>,
    /// Processes of other nodes the host told us terminated.
    pub(in crate::server::core) gone_elsewhere: BTreeSet<Proc>,
    /// Constructions by bootstrap gathering their membership.
    pub(in crate::server::core) bootstraps: BTreeMap<String, Bootstrap>,
    /// What the local members of the constructions in progress posted for their group, by
    /// group and member ([`values`]).
    pub(in crate::server::core) posted: BTreeMap<String, BTreeMap<Proc, Vec<Info>>>,
    /// The host calls of the groups still to be answered, by op.
    at_host: BTreeMap<u64, Pending>,
}

/// What a host call of the groups was for.
#[derive(Clone, Debug)]
pub(in crate::server::core) enum Pending {
    Group(Kind, u64),
    /// The context id for the group an invitation formed.
    Invitation(String),
    /// A group event the host carries to the servers of `targets`.
    GroupRelay {
        group: String,
        status: Status,
        source: Proc,
        targets: Vec<Proc>,
    },
}

/// The groups chapter at work for one input: its state, with the shared state and the
/// event chapter it raises group events through, borrowed from the core.
pub(in crate::server::core) struct GroupsAt<'a> {
    pub(in crate::server::core) groups: &'a mut Groups,
    pub(in crate::server::core) cx: &'a mut Shared,
    pub(in crate::server::core) events: &'a mut ServerEvents,
}

impl GroupsAt<'_> {
    pub(in crate::server::core) fn send(&mut self, conn: ConnId, tag: Tag, reply: &Reply) {
        self.cx.send(conn, tag, reply);
    }

    pub(in crate::server::core) fn op(&mut self) -> u64 {
        self.cx.op()
    }

    pub(in crate::server::core) fn call_host(&mut self, pending: Pending, call: HostCall) {
        let op = self.cx.call_host(call);
        self.groups.at_host.insert(op, pending);
    }

    /// The host answered the groups' call `op`.
    pub(in crate::server::core) fn host_answered(&mut self, op: u64, result: HostResult) {
        let Some(pending) = self.groups.at_host.remove(&op) else {
            return;
        };
        match pending {
            Pending::Group(kind, id) => self.host_answered_group(kind, id, result),
            Pending::Invitation(group) => self.host_answered_invitation(&group, result),
            Pending::GroupRelay {
                group,
                status,
                source,
                targets,
            } => {
                if let Err(failure) = result.output::<()>() {
                    self.group_relay_failed(&group, status, &source, &targets, failure);
                }
            }
        }
    }
}

/// A bootstrap construction gathering its membership.
#[derive(Debug, Default)]
pub(in crate::server::core) struct Bootstrap {
    /// How many leaders there are (`PMIX_GROUP_BOOTSTRAP`), once a leader said.
    pub(super) leaders_expected: Option<usize>,
    pub(super) leaders: BTreeMap<Proc, Waiter>,
    /// The members the leaders listed (`PMIX_GROUP_ADD_MEMBERS`), and those who called.
    pub(super) listed: BTreeSet<Proc>,
    pub(super) added: BTreeMap<Proc, Waiter>,
    /// The first leader's directives: the construction's.
    pub(super) info: Vec<Info>,
    pub(super) timer: Option<u64>,
}

impl Bootstrap {
    pub(super) fn waiters(&self) -> impl Iterator<Item = &Waiter> {
        self.leaders.values().chain(self.added.values())
    }
}

/// An invitation in progress.
#[derive(Debug)]
pub(in crate::server::core) struct Invitation {
    pub(super) leader: Proc,
    /// The leader's invite call, to answer (none once the inviting leader failed).
    pub(super) waiter: Option<Waiter>,
    pub(super) invited: Vec<Proc>,
    pub(super) info: Vec<Info>,
    /// Who accepted, with the join to answer when it was made at this server.
    pub(super) accepted: BTreeMap<Proc, Option<Waiter>>,
    /// Who refused: declined, failed, or did not answer before the timeout.
    pub(super) refused: BTreeSet<Proc>,
    /// Who declined with a join (here or elsewhere): a server elsewhere forgot the
    /// invitation for them when they answered.
    pub(super) declined: BTreeSet<Proc>,
    pub(super) timer: Option<u64>,
    /// Its `PMIX_TIMEOUT` passed before every invitee answered.
    pub(super) timed_out: bool,
    /// An invitee terminated, or could not be told of it, before answering.
    pub(super) lost: bool,
    /// Asked the host for a context id: the invitation is complete otherwise.
    pub(super) at_host: bool,
}

impl Invitation {
    /// The group it forms: the leader, then those who accepted, in the order invited (a
    /// leader selected from the invitees comes first only).
    pub(super) fn members(&self) -> Vec<Proc> {
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

/// An invitation whose home is another node's server, as the server of some of its
/// invitees knows it from the `PMIX_GROUP_INVITED` the host relayed.
#[derive(Debug)]
pub(in crate::server::core) struct RemoteInvitation {
    /// Who leads it now.
    pub(super) leader: Proc,
    /// The leader that issued it: its server keeps the invitation.
    pub(super) home: Proc,
    /// The invitees this server serves that have not answered.
    pub(super) waiting: BTreeSet<Proc>,
    /// Those that accepted, waiting for the group to form.
    pub(super) joined: BTreeMap<Proc, Waiter>,
    /// The group is to report its members' terminations (`PMIX_GROUP_NOTIFY_TERMINATION`),
    /// and to go on without them (that, or `PMIX_GROUP_FT_COLLECTIVE`).
    pub(super) notify: bool,
    pub(super) tolerant: bool,
}
