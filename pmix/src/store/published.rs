//! Published data (PMIx v5.0 ch. 9) as a host keeps it: ranges, persistence, duplicates and
//! access permissions, sans-IO, so that every host (`pmixrun`, the conformance harness, the
//! simulator) publishes and looks up the same way. Waiting (`PMIX_WAIT`) and timeouts are
//! the host's: it retries [`Published::lookup`] when data is published.
//!
//! - **Publish** (§9.1): the infos whose keys are not the standard's (`pmix.` prefix) are
//!   the data; `PMIX_RANGE` (default `SESSION`), `PMIX_PERSISTENCE` (default `APP`),
//!   the processes of a custom range (v5.0 names no publish attribute for them: the list
//!   is read from `PMIX_EVENT_CUSTOM_RANGE`), `PMIX_ACCESS_PERMISSIONS` and the publisher's `PMIX_USERID` /
//!   `PMIX_GRPID` (added by the server) describe them. A key already published on the same
//!   range is `PMIX_ERR_DUPLICATE_KEY`, and then nothing is published.
//! - **Lookup** (§9.8): the publisher must fall within the lookup's `PMIX_RANGE` around the
//!   requester (default `SESSION`, §9.6; the processes of a custom one are read as for a
//!   publish); then the key must match, the requester must be inside the publisher's range,
//!   and the access permissions must admit the requester. One relation serves both ranges
//!   (§9.5.1): `PROC_LOCAL` is the process itself, `LOCAL` its node, `NAMESPACE` its job,
//!   `SESSION` and `GLOBAL` everyone this host serves (it knows one session), `CUSTOM` the
//!   listed processes, and `RM` the host environment, which is no process that publishes or
//!   looks up here. All keys found: `PMIX_SUCCESS`; some:
//!   `PMIX_ERR_PARTIAL_SUCCESS`; none: `PMIX_ERR_NOT_FOUND`; found but none permitted:
//!   `PMIX_ERR_NO_PERMISSIONS`. Data published with `PMIX_PERSIST_FIRST_READ` is gone once
//!   looked up.
//! - **Unpublish** (§9.3): the requester's own data of `keys` (all of it when none) on
//!   `PMIX_RANGE` (default `SESSION`).
//! - **Persistence**: `PMIX_PERSIST_PROC` data goes when its publisher ends
//!   ([`Published::process_ended`]), `PMIX_PERSIST_APP` when its job ends
//!   ([`Published::job_ended`]); session and indefinite data stay as long as the host.

mod quota;

pub use quota::PublishLimits;

use crate::model::{DataRange, Info, PData, Persistence, Proc, Status, Value, attr};

/// One published value.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    data: PData,
    range: DataRange,
    persistence: Persistence,
    /// The processes of a `PMIX_RANGE_CUSTOM` range.
    custom: Vec<Proc>,
    /// Readers admitted by `PMIX_ACCESS_PERMISSIONS`: users and groups (none: everyone).
    uids: Vec<u32>,
    gids: Vec<u32>,
    restricted: bool,
    /// What it costs in memory ([`PublishLimits`]).
    cost: usize,
}

/// Where the requester stands relative to a publisher, for ranges the store cannot judge
/// from identifiers alone.
pub trait Topology {
    /// Whether two processes run on the same node (`PMIX_RANGE_LOCAL`).
    fn same_node(&self, a: &Proc, b: &Proc) -> bool;
}

/// A host's published data.
#[derive(Clone, Debug, Default)]
pub struct Published {
    entries: Vec<Entry>,
    quota: quota::Quota,
}

fn find<'a>(info: &'a [Info], key: &str) -> Option<&'a Value> {
    info.iter()
        .find(|i| i.key.as_str() == key)
        .map(|i| &i.value)
}

fn range_of(info: &[Info]) -> DataRange {
    match find(info, attr::RANGE.wire_key()) {
        Some(Value::DataRange(r)) if *r != DataRange::UNDEF => *r,
        _ => DataRange::SESSION,
    }
}

/// The processes of a `PMIX_RANGE_CUSTOM` range.
fn custom_of(info: &[Info]) -> Vec<Proc> {
    match find(info, attr::EVENT_CUSTOM_RANGE.wire_key()) {
        Some(Value::DataArray(a)) => a
            .elements
            .iter()
            .filter_map(|v| v.as_proc().cloned())
            .collect(),
        Some(Value::Proc(p)) => vec![p.clone()],
        _ => Vec::new(),
    }
}

/// Whether `other` falls within `range` around `of` (v5.0 §9.5.1): for a publish, `of` is the
/// publisher and `other` the requester; for a lookup, the other way round.
fn within(
    range: DataRange,
    custom: &[Proc],
    of: &Proc,
    other: &Proc,
    topology: &impl Topology,
) -> bool {
    match range {
        DataRange::PROC_LOCAL => of == other,
        DataRange::LOCAL => topology.same_node(of, other),
        DataRange::NAMESPACE => of.nspace == other.nspace,
        DataRange::CUSTOM => custom.iter().any(|p| p.matches(other)),
        // Meant for the host environment, or published by it: no process here.
        DataRange::RM => false,
        _ => true,
    }
}

fn ids(v: Option<&Value>) -> Vec<u32> {
    match v {
        Some(Value::DataArray(a)) => a
            .elements
            .iter()
            .filter_map(|e| e.to_u64().and_then(|u| u32::try_from(u).ok()))
            .collect(),
        Some(other) => other
            .to_u64()
            .and_then(|u| u32::try_from(u).ok())
            .into_iter()
            .collect(),
        None => Vec::new(),
    }
}

impl Published {
    /// An empty store that keeps at most what `limits` allow (the default's are
    /// [`PublishLimits::default`]).
    pub fn with_limits(limits: PublishLimits) -> Self {
        Published {
            entries: Vec::new(),
            quota: quota::Quota::new(limits),
        }
    }

    /// `publish` by `proc` (see the module doc); past a [`PublishLimits`],
    /// `PMIX_ERR_OUT_OF_RESOURCE`.
    pub fn publish(&mut self, proc: &Proc, info: &[Info]) -> Result<(), Status> {
        let range = range_of(info);
        let persistence = match find(info, attr::PERSISTENCE.wire_key()) {
            Some(Value::Persist(p)) => *p,
            _ => Persistence::APP,
        };
        let custom = custom_of(info);
        let (mut uids, mut gids, mut restricted) = (Vec::new(), Vec::new(), false);
        if let Some(Value::DataArray(perms)) = find(info, attr::ACCESS_PERMISSIONS.wire_key()) {
            restricted = true;
            let inner: Vec<Info> = perms
                .infos()
                .map(|it| it.cloned().collect())
                .unwrap_or_default();
            uids = ids(find(&inner, attr::ACCESS_USERIDS.wire_key()));
            gids = ids(find(&inner, attr::ACCESS_GRPIDS.wire_key()));
            // The publisher may always read its own data.
            uids.extend(ids(find(info, attr::USERID.wire_key())));
        }
        let data: Vec<&Info> = info
            .iter()
            .filter(|i| !i.key.as_str().starts_with("pmix."))
            .collect();
        if data.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // All or nothing: a key already on this range publishes none of them.
        if data.iter().any(|d| {
            self.entries
                .iter()
                .any(|e| e.data.key == d.key && e.range == range)
        }) {
            return Err(Status::ERR_DUPLICATE_KEY);
        }
        let new: Vec<Entry> = data
            .into_iter()
            .map(|d| {
                let mut entry = Entry {
                    data: PData {
                        proc: proc.clone(),
                        key: d.key.clone(),
                        value: d.value.clone(),
                    },
                    range,
                    persistence,
                    custom: custom.clone(),
                    uids: uids.clone(),
                    gids: gids.clone(),
                    restricted,
                    cost: 0,
                };
                let size = std::mem::size_of::<Entry>();
                entry.cost = quota::cost(&entry.data, &custom, &uids, &gids, size);
                entry
            })
            .collect();
        let adding = new.iter().map(|e| e.cost).sum();
        let held = self.entries.iter().map(|e| (&e.data.proc, e.cost));
        if !self.quota.admits(proc, adding, held) {
            return Err(Status::ERR_OUT_OF_RESOURCE);
        }
        self.entries.extend(new);
        Ok(())
    }

    /// `lookup` of `keys` by `requester` (see the module doc). `Ok` holds what was found,
    /// for a complete or partial success.
    pub fn lookup(
        &mut self,
        requester: &Proc,
        keys: &[String],
        info: &[Info],
        topology: &impl Topology,
    ) -> Result<Vec<PData>, Status> {
        let (range, custom) = (range_of(info), custom_of(info));
        let uid = ids(find(info, attr::USERID.wire_key())).first().copied();
        let gid = ids(find(info, attr::GRPID.wire_key())).first().copied();
        // §9.8 step 1: the publisher within the lookup's range; step 3: the requester within
        // the publisher's.
        let searched = |e: &Entry| within(range, &custom, requester, &e.data.proc, topology);
        let reaches = |e: &Entry| within(e.range, &e.custom, &e.data.proc, requester, topology);
        let permitted = |e: &Entry| {
            !e.restricted
                || uid.is_some_and(|u| e.uids.contains(&u))
                || gid.is_some_and(|g| e.gids.contains(&g))
        };
        let mut found = Vec::new();
        let mut refused = false;
        let mut taken = Vec::new();
        for key in keys {
            let hit = self.entries.iter().enumerate().find(|(_, e)| {
                searched(e) && e.data.key.as_str() == key.as_str() && reaches(e) && {
                    let ok = permitted(e);
                    refused |= !ok;
                    ok
                }
            });
            if let Some((i, e)) = hit {
                found.push(e.data.clone());
                if e.persistence == Persistence::FIRST_READ {
                    taken.push(i);
                }
            }
        }
        taken.sort_unstable();
        taken.dedup();
        for i in taken.into_iter().rev() {
            self.entries.remove(i);
        }
        if found.is_empty() {
            return Err(if refused {
                Status::ERR_NO_PERMISSIONS
            } else {
                Status::ERR_NOT_FOUND
            });
        }
        Ok(found)
    }

    /// A lookup that may wait: with `PMIX_WAIT` in `info`, `None` until every key is found
    /// (nothing is consumed meanwhile); otherwise the lookup's answer. The host calls it again
    /// whenever data is published, and ends the wait at `PMIX_TIMEOUT`.
    pub fn try_lookup(
        &mut self,
        requester: &Proc,
        keys: &[String],
        info: &[Info],
        topology: &impl Topology,
    ) -> Option<Result<Vec<PData>, Status>> {
        let wait = find(info, attr::WAIT.wire_key()).is_some();
        if wait {
            let mut trial = self.clone();
            match trial.lookup(requester, keys, info, topology) {
                Ok(found) if found.len() == keys.len() => {}
                _ => return None,
            }
        }
        Some(self.lookup(requester, keys, info, topology))
    }

    /// `unpublish` of `keys` (all of the requester's when empty) on the range `info` names.
    pub fn unpublish(&mut self, proc: &Proc, keys: &[String], info: &[Info]) {
        let range = range_of(info);
        self.entries.retain(|e| {
            e.data.proc != *proc
                || e.range != range
                || !(keys.is_empty() || keys.iter().any(|k| k.as_str() == e.data.key.as_str()))
        });
    }

    /// `proc` ended: its `PMIX_PERSIST_PROC` data goes.
    pub fn process_ended(&mut self, proc: &Proc) {
        self.entries
            .retain(|e| !(e.persistence == Persistence::PROC && e.data.proc == *proc));
    }

    /// The job `nspace` ended: its processes' `PMIX_PERSIST_APP` and `PMIX_PERSIST_PROC` data
    /// goes.
    pub fn job_ended(&mut self, nspace: &crate::model::Nspace) {
        self.entries.retain(|e| {
            !(matches!(e.persistence, Persistence::APP | Persistence::PROC)
                && e.data.proc.nspace == *nspace)
        });
    }
}

#[cfg(test)]
mod tests;
