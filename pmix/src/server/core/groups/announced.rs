//! Groups a client announces: the `PMIX_GROUP_CONSTRUCT_COMPLETE` an inviting process raises
//! once the group it invited is assembled (PMIx v5.0 §14.2.10: "the inviting process is
//! required to provide a `PMIX_GROUP_CONSTRUCT_COMPLETE` event once the group has been fully
//! assembled").
//!
//! OpenPMIx 4.2 clients run invitations by events alone: the leader's `PMIx_Group_invite`
//! raises `PMIX_GROUP_INVITED`, each `PMIx_Group_join` raises `PMIX_GROUP_INVITE_ACCEPTED` at
//! the leader, and the leader's library then raises `PMIX_GROUP_CONSTRUCT_COMPLETE` with
//! range `CUSTOM` over the members (in the order invited), `PMIX_EVENT_NON_DEFAULT` and
//! `PMIX_GROUP_ID`. No group command reaches the server, so that event is how it learns of
//! the group, which members then use by its id in a fence (§14.2) and destruct.
//!
//! - **In**: such an event from a local client ([`ServerCore::client_notify`]), or relayed by
//!   the host from another node's client ([`ServerCore::notify_event`]). The members are its
//!   `PMIX_GROUP_MEMBERSHIP` when it carries one (the standard's "final membership"), else its
//!   custom range; the source leads the group when it is a member; a
//!   `PMIX_GROUP_CONTEXT_ID` it carries is the group's.
//! - **Out**: the group, live at this server. The event itself is delivered as any other.
//! - **Left alone**: a name already in use here (a live group, an invitation or a construction
//!   in progress): the server's own invitations ([`super::invitations`]) form their groups
//!   before raising the same event, from the server. An event without a group id or with an
//!   empty or repeating member list announces nothing.

use crate::events::{Event, procs_of};
use crate::model::{Status, attr};

use super::group::{Group, Roles, context_id_of, has_duplicates};
use super::state::GroupsAt;

impl GroupsAt<'_> {
    /// `event`, raised by a client, announces a group (see the module doc): record it unless
    /// its name is in use here.
    pub(in crate::server::core) fn group_announced(&mut self, event: &Event) {
        if event.status != Status::GROUP_CONSTRUCT_COMPLETE {
            return;
        }
        let Some(group) = event.info.iter().find_map(|i| i.get(attr::GROUP_ID)) else {
            return;
        };
        let membership = (event.info.iter())
            .find(|i| i.is(attr::GROUP_MEMBERSHIP))
            .map(|i| procs_of(&i.value))
            .filter(|m| !m.is_empty());
        let members = membership
            .or_else(|| event.custom_range())
            .unwrap_or_default();
        if group.is_empty() || members.is_empty() || has_duplicates(&members) {
            tracing::debug!("{}: announced group {group:?} is malformed", event.source);
            return;
        }
        let in_use = self.group_name_taken(&group)
            || self.groups.bootstraps.contains_key(&group)
            || self.groups.roles.contains_key(&group);
        if in_use {
            return;
        }
        let leader = members
            .contains(&event.source)
            .then(|| event.source.clone());
        let formed = Group {
            members,
            context_id: context_id_of(&event.info),
            roles: Roles {
                leader,
                ..Roles::default()
            },
        };
        self.groups.live.insert(group, formed);
    }
}
