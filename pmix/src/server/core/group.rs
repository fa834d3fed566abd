//! What a process group is to the server (v5.0 §14.2): its members, context id and roles,
//! and the readings of a group operation's directives that the construction, invitation,
//! bootstrap and announcement paths share.

use std::collections::BTreeSet;

use crate::model::{Info, Proc, attr};

/// A group that exists on this server.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Group {
    /// In group-rank order, as the construction listed them (ranks may be wildcards).
    pub(super) members: Vec<Proc>,
    pub(super) context_id: Option<u64>,
    pub(super) roles: Roles,
}

/// Who leads a group and who hears of its members' failures (v5.0 §14.2.6).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Roles {
    /// The member that declared itself leader (`PMIX_GROUP_LEADER`), or was selected when
    /// the leader failed.
    pub(super) leader: Option<Proc>,
    /// `PMIX_GROUP_NOTIFY_TERMINATION`: a member that terminates is reported
    /// (`PMIX_GROUP_MEMBER_FAILED`, …).
    pub(super) notify: bool,
    /// A member that terminates is left out and the operation goes on without it, instead of
    /// failing: with `PMIX_GROUP_NOTIFY_TERMINATION`, or `PMIX_GROUP_FT_COLLECTIVE` (which
    /// adjusts the tracking without reporting).
    pub(super) tolerant: bool,
    /// Members left out of the construction because they terminated.
    pub(super) excused: Vec<Proc>,
}

/// A construct or a destruct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Construct,
    Destruct,
}

pub(super) fn has_duplicates(procs: &[Proc]) -> bool {
    let set: BTreeSet<&Proc> = procs.iter().collect();
    set.len() != procs.len()
}

/// Whether a group operation's directives ask it to go on without members that terminate
/// (`PMIX_GROUP_NOTIFY_TERMINATION` or `PMIX_GROUP_FT_COLLECTIVE`).
pub(super) fn tolerates_losses(info: &[Info]) -> bool {
    Info::flag(info, attr::GROUP_NOTIFY_TERMINATION) || Info::flag(info, attr::GROUP_FT_COLLECTIVE)
}

pub(super) fn context_id_of(info: &[Info]) -> Option<u64> {
    info.iter()
        .find(|i| i.key.as_str() == attr::GROUP_CONTEXT_ID.wire_key())
        .and_then(|i| i.value.to_u64())
}
