//! The values members post for the group they construct (latest draft §14.2.5, provisional):
//! `PMIX_GROUP_LOCAL_CID` "provided in the `pmix_info_t` directives when the process calls
//! construct", "returned to all participants with the collected data at completion of
//! construct", and "retrieved via the `PMIx_Get` API using the process ID of the process that
//! posted the value".
//!
//! - **In**: each local member's construct call. Its values are the entries of
//!   [`GROUP_INFO`] (an array of infos, which is how OpenPMIx 4.2 clients post them) and a
//!   `PMIX_GROUP_LOCAL_CID` given as a directive itself (the standard's own form). They are
//!   kept per member until the construction ends; the construction's tracker keeps only the
//!   first caller's directives, as the standard lets it (they must agree), but these differ
//!   by member.
//! - **Out**: a construction that ends with a context id stores them in the server's store
//!   under each poster, qualified by that id ([`crate::store::qualified`]), where gets find
//!   them, after the group's destruct as well. Without a context id there is nothing to tell
//!   one group's values from another's, and they are dropped (OpenPMIx does the same).
//!
//! **Not done: members on other nodes.** Only the values of the members this server serves
//! are stored here; a construction the host completes across nodes would have to carry each
//! server's values to the others (OpenPMIx packs them into the `PMIX_GROUP_ENDPT_DATA` blob
//! its host gathers and hands back, in a layout keyed by its internal key indices). Until the
//! host interface carries them, a get of a remote member's value is `PMIX_ERR_NOT_FOUND`.
//! Bootstrap constructions (whose members' calls are replayed with the leaders' directives)
//! post nothing either.
//!
//! **Not done: a get without the group's context id.** The draft says a get under the
//! poster's process ID retrieves the value; a client answers a reserved key it does not hold
//! with `PMIX_ERR_NOT_FOUND` without asking its server (rule R-02: reserved keys are there
//! from the start), so only a get qualified by `PMIX_GROUP_CONTEXT_ID` reaches the values
//! stored here. The construct's results would have to carry the members' values to each
//! client's cache.

use crate::model::{Info, Proc, attr};

use super::state::GroupsAt;

/// OpenPMIx 4.2's key (`PMIX_GROUP_INFO`) of the values a member posts for its group in a
/// construct call: an array of infos. Not a key of the standard.
pub(in crate::server::core) const GROUP_INFO: &str = "pmix.grp.info";

/// The values a construct call's directives `info` post for the group.
pub(in crate::server::core) fn posted_values(info: &[Info]) -> Vec<Info> {
    let mut out = Vec::new();
    for i in info {
        if i.key.as_str() == GROUP_INFO {
            let entries = (i.value.as_data_array()).and_then(|a| a.infos());
            out.extend(entries.into_iter().flatten().cloned());
        } else if i.is(attr::GROUP_LOCAL_CID) {
            out.push(i.clone());
        }
    }
    // A peer's unset info (an empty key) posts nothing.
    out.retain(|i| !i.key.as_str().is_empty());
    out
}

impl GroupsAt<'_> {
    /// Keep what `me`'s construct call of `group` posts, until the construction ends.
    pub(in crate::server::core) fn keep_posted_values(
        &mut self,
        group: &str,
        me: &Proc,
        info: &[Info],
    ) {
        let values = posted_values(info);
        if values.is_empty() {
            return;
        }
        (self.groups.posted.entry(group.to_owned()).or_default()).insert(me.clone(), values);
    }

    /// The construction of `group` ended, with `context_id` if it formed the group with one:
    /// store what its members posted under that id, else drop it.
    pub(in crate::server::core) fn store_posted_values(
        &mut self,
        group: &str,
        context_id: Option<u64>,
    ) {
        let Some(posted) = self.groups.posted.remove(group) else {
            return;
        };
        let Some(id) = context_id else {
            return;
        };
        for (proc, values) in posted {
            self.cx.store.group_values.post(&proc, id, &values);
        }
    }
}
