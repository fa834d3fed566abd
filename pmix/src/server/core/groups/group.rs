//! What a process group is to the server (v5.0 §14.2): its members, context id and roles,
//! and the readings of a group operation's directives that the construction, invitation,
//! bootstrap and announcement paths share.

use std::collections::BTreeSet;

use crate::model::{Info, Proc, attr};

/// A group that exists on this server.
#[derive(Clone, Debug, PartialEq)]
pub(in crate::server::core) struct Group {
    /// In group-rank order, as the construction listed them (ranks may be wildcards).
    pub(in crate::server::core) members: Vec<Proc>,
    pub(in crate::server::core) context_id: Option<u64>,
    pub(in crate::server::core) roles: Roles,
}

/// Who leads a group and who hears of its members' failures (v5.0 §14.2.6).
#[derive(Clone, Debug, Default, PartialEq)]
pub(in crate::server::core) struct Roles {
    /// The member that declared itself leader (`PMIX_GROUP_LEADER`), or was selected when
    /// the leader failed.
    pub(in crate::server::core) leader: Option<Proc>,
    /// `PMIX_GROUP_NOTIFY_TERMINATION`: a member that terminates is reported
    /// (`PMIX_GROUP_MEMBER_FAILED`, …).
    pub(in crate::server::core) notify: bool,
    /// A member that terminates is left out and the operation goes on without it, instead of
    /// failing: with `PMIX_GROUP_NOTIFY_TERMINATION`, or `PMIX_GROUP_FT_COLLECTIVE` (which
    /// adjusts the tracking without reporting).
    pub(in crate::server::core) tolerant: bool,
    /// Members left out of the construction because they terminated.
    pub(in crate::server::core) excused: Vec<Proc>,
}

/// A construct or a destruct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::server::core) enum Kind {
    Construct,
    Destruct,
}

pub(in crate::server::core) fn has_duplicates(procs: &[Proc]) -> bool {
    let set: BTreeSet<&Proc> = procs.iter().collect();
    set.len() != procs.len()
}

/// Whether a group operation's directives ask it to go on without members that terminate
/// (`PMIX_GROUP_NOTIFY_TERMINATION` or `PMIX_GROUP_FT_COLLECTIVE`).
pub(in crate::server::core) fn tolerates_losses(info: &[Info]) -> bool {
    Info::flag(info, attr::GROUP_NOTIFY_TERMINATION) || Info::flag(info, attr::GROUP_FT_COLLECTIVE)
}

pub(in crate::server::core) fn context_id_of(info: &[Info]) -> Option<u64> {
    info.iter()
        .find(|i| i.key.as_str() == attr::GROUP_CONTEXT_ID.wire_key())
        .and_then(|i| i.value.to_u64())
}
