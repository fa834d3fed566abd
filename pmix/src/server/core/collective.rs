//! Collective trackers: collect the local participants' contributions to a fence (PMIx v5.0
//! §8.2), a connect or disconnect (§12.3) or a group's construction or destruction (§14.2),
//! then complete locally or through the host. Each chapter's requests and answers are its
//! own (`fencing.rs`, `connect.rs`, `groups/`); this is what they share.
//!
//! A fence is identified by its participant set. The same set can be fenced again and again,
//! so trackers of one set are kept in generation order: a process contributes to the oldest
//! generation it has not yet contributed to. A process that fences twice in a row therefore
//! lands in the next generation instead of completing the current one twice, and processes that
//! init, fence and finalize repeatedly can never deadlock a later fence.
//!
//! ```text
//!   Collecting --(last local participant)--> Complete            (all participants local)
//!   Collecting --(last local participant)--> WaitingForHost --(host answers)--> Complete
//!   Collecting --(a local participant is lost)--> Failed                (all participants local)
//!   Collecting --(a local participant is lost)--> WaitingForHost, with
//!                 PMIX_LOCAL_COLLECTIVE_STATUS set to the loss --(host answers)--> Failed
//!   Collecting/WaitingForHost --(PMIX_TIMEOUT of a contribution expires)--> Failed
//! ```
//!
//! A fence with participants elsewhere never fails only locally: the other servers are
//! waiting for this one, so the host is told of the local failure (v5.0 §17.3.6, which hosts
//! must support) and ends the fence everywhere. A tracker that lost a participant counts as
//! locally complete, so generations still go to the host in order.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Info, Proc, Status, attr};

/// Identifies one contribution: the connection and the request tag to answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Waiter {
    pub conn: u64,
    pub tag: u32,
}

/// One generation of a fence over one participant set.
#[derive(Clone, Debug)]
pub(crate) struct Tracker {
    pub id: u64,
    /// The collective's name besides its set (a group's; empty otherwise).
    pub label: String,
    /// The participants as requested (ranks may be wildcards), sorted: the collective's
    /// name, alike at every server whatever order each caller listed them in.
    pub procs: Vec<Proc>,
    /// The participants in the order the first caller listed them: a group's ranks are
    /// positions in that list (v5.0 §14.2.1).
    pub order: Vec<Proc>,
    /// The local processes that must contribute.
    pub local: BTreeSet<Proc>,
    pub contributed: BTreeMap<Proc, Waiter>,
    pub info: Vec<Info>,
    pub collect: bool,
    /// Whether the host was asked to complete it.
    pub at_host: bool,
    /// The server's timer for the first `PMIX_TIMEOUT` a contribution carried.
    pub timer: Option<u64>,
    /// Why a local participant will never contribute, once one is lost.
    pub lost: Option<Status>,
    /// Participants that terminated and were excused ([`Fences::excuse`]): still in `procs`,
    /// which names the collective alike at every server, but no longer awaited.
    pub excused: BTreeSet<Proc>,
}

impl Tracker {
    /// The participants not excused, in the first caller's order.
    pub(crate) fn still_in(&self) -> Vec<Proc> {
        (self.order.iter())
            .filter(|p| !self.excused.contains(*p))
            .cloned()
            .collect()
    }

    pub(crate) fn is_locally_complete(&self) -> bool {
        self.lost.is_some() || self.local.iter().all(|p| self.contributed.contains_key(p))
    }
}

/// What a contribution led to.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FenceStep {
    /// Still waiting for local participants of the tracker.
    Pending(u64),
    /// All local participants are in: complete, or hand over to the host.
    LocallyComplete(u64),
}

/// All fences in progress on a server.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fences {
    next_id: u64,
    /// Trackers by label (a group's name; empty for fences, connects and disconnects) and
    /// participant set, oldest generation first.
    sets: BTreeMap<(String, Vec<Proc>), Vec<Tracker>>,
}

impl Fences {
    /// Record `proc`'s contribution to a fence over `procs`, whose local members are `local`.
    pub(crate) fn contribute(
        &mut self,
        procs: &[Proc],
        local: BTreeSet<Proc>,
        proc: &Proc,
        waiter: Waiter,
        info: &[Info],
    ) -> FenceStep {
        self.contribute_to("", procs, local, proc, waiter, info)
    }

    /// As [`Fences::contribute`], to a collective named `label` as well as by its set (a
    /// group's construction is matched by the group's name).
    pub(crate) fn contribute_to(
        &mut self,
        label: &str,
        procs: &[Proc],
        local: BTreeSet<Proc>,
        proc: &Proc,
        waiter: Waiter,
        info: &[Info],
    ) -> FenceStep {
        let mut seen = BTreeSet::new();
        let order: Vec<Proc> = (procs.iter())
            .filter(|p| seen.insert((*p).clone()))
            .cloned()
            .collect();
        let key: Vec<Proc> = seen.into_iter().collect();
        let gens = self
            .sets
            .entry((label.to_owned(), key.clone()))
            .or_default();
        let idx = match gens.iter().position(|t| !t.contributed.contains_key(proc)) {
            Some(i) => i,
            None => {
                self.next_id += 1;
                gens.push(Tracker {
                    id: self.next_id,
                    label: label.to_owned(),
                    procs: key,
                    order,
                    local,
                    contributed: BTreeMap::new(),
                    info: info.to_vec(),
                    collect: false,
                    at_host: false,
                    timer: None,
                    lost: None,
                    excused: BTreeSet::new(),
                });
                gens.len() - 1
            }
        };
        let t = &mut gens[idx];
        t.contributed.insert(proc.clone(), waiter);
        t.collect |= Info::flag(info, attr::COLLECT_DATA);
        // Only the oldest generation may complete: later ones wait for it.
        if idx == 0 && t.is_locally_complete() && !t.at_host {
            FenceStep::LocallyComplete(t.id)
        } else {
            FenceStep::Pending(t.id)
        }
    }

    /// The tracker whose timer is `op`.
    pub(crate) fn by_timer(&self, op: u64) -> Option<u64> {
        self.sets
            .values()
            .flat_map(|g| g.iter())
            .find(|t| t.timer == Some(op))
            .map(|t| t.id)
    }

    pub(crate) fn get_mut(&mut self, id: u64) -> Option<&mut Tracker> {
        self.sets
            .values_mut()
            .flat_map(|g| g.iter_mut())
            .find(|t| t.id == id)
    }

    /// Remove a finished tracker and return it, with the id of the next generation of the same
    /// set if that one is now locally complete.
    pub(crate) fn finish(&mut self, id: u64) -> Option<(Tracker, Option<u64>)> {
        for gens in self.sets.values_mut() {
            if let Some(i) = gens.iter().position(|t| t.id == id) {
                let t = gens.remove(i);
                let next = gens
                    .first()
                    .filter(|n| n.is_locally_complete() && !n.at_host)
                    .map(|n| n.id);
                self.sets.retain(|_, g| !g.is_empty());
                return Some((t, next));
            }
        }
        None
    }

    /// `proc` is gone: every tracker still waiting for it fails with `status`. Returns the
    /// ones that may now complete (the oldest generation of their set). A tracker already at
    /// the host has every local contribution, `proc`'s included, and goes on.
    pub(crate) fn lose(&mut self, proc: &Proc, status: Status) -> Vec<u64> {
        let mut ready = Vec::new();
        for gens in self.sets.values_mut() {
            for (i, t) in gens.iter_mut().enumerate() {
                if t.local.contains(proc) && !t.contributed.contains_key(proc) && !t.at_host {
                    t.lost.get_or_insert(status);
                    if i == 0 {
                        ready.push(t.id);
                    }
                }
            }
        }
        ready
    }

    /// `proc` is gone from the collectives named `label` that wait for it, and they go on
    /// without it (a group built with `PMIX_GROUP_NOTIFY_TERMINATION`, v5.0 §14.2.6): it is
    /// excused, no longer awaited. It stays among the participants the collective is named
    /// by, so that the host matches it with the other servers' part. Returns the ones that
    /// may now complete, and the participants still in of the oldest one `proc` was in
    /// (`None`: none was waiting for it). A tracker already at the host goes on unchanged.
    pub(crate) fn excuse(&mut self, label: &str, proc: &Proc) -> (Vec<u64>, Option<Vec<Proc>>) {
        let (mut ready, mut left) = (Vec::new(), None);
        for ((l, _), gens) in self.sets.iter_mut() {
            if l != label {
                continue;
            }
            for (i, t) in gens.iter_mut().enumerate() {
                let named = (t.procs.iter()).any(|p| {
                    p == proc || (p.nspace == proc.nspace && p.rank == crate::model::Rank::WILDCARD)
                });
                if t.at_host || !named || t.excused.contains(proc) {
                    continue;
                }
                t.excused.insert(proc.clone());
                t.local.remove(proc);
                t.contributed.remove(proc);
                left.get_or_insert_with(|| t.still_in());
                if i == 0 && t.is_locally_complete() && !t.contributed.is_empty() {
                    ready.push(t.id);
                }
            }
        }
        (ready, left)
    }

    /// Forget a connection's contributions (it closed); returns nothing to answer.
    pub(crate) fn drop_conn(&mut self, conn: u64) {
        for gens in self.sets.values_mut() {
            for t in gens.iter_mut() {
                t.contributed.retain(|_, w| w.conn != conn);
            }
        }
    }

    /// How many fences are open, over every set of participants (for the tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.sets.values().map(Vec::len).sum()
    }

    /// Whether no fence is open (for the tests).
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }
}

/// The status a fence ends with when a participant is lost.
pub(crate) const LOST_PARTICIPANT: Status = Status::ERR_LOST_CONNECTION;

impl Tracker {
    /// The information for the host: the contributions' own, and the local failure if any.
    pub(crate) fn host_info(&self) -> Vec<Info> {
        let mut info = self.info.clone();
        if let Some(status) = self.lost {
            info.retain(|i| i.key.as_str() != attr::LOCAL_COLLECTIVE_STATUS.wire_key());
            info.push(Info::new(attr::LOCAL_COLLECTIVE_STATUS, status));
        }
        info
    }

    /// How the collective ends once the host answered `host`: a local failure stands even if
    /// the host ignored it.
    pub(crate) fn outcome(&self, host: Status) -> Status {
        match self.lost {
            Some(lost) if host == Status::SUCCESS => lost,
            _ => host,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Rank;

    fn p(r: u32) -> Proc {
        Proc::try_new("job", r).unwrap()
    }

    fn all() -> Vec<Proc> {
        vec![Proc::try_new("job", Rank::WILDCARD).unwrap()]
    }

    fn local(n: u32) -> BTreeSet<Proc> {
        (0..n).map(p).collect()
    }

    #[test]
    fn fence_completes_when_the_last_local_participant_arrives() {
        let mut f = Fences::default();
        let w = |c| Waiter { conn: c, tag: 101 };
        assert_eq!(
            f.contribute(&all(), local(2), &p(0), w(0), &[]),
            FenceStep::Pending(1)
        );
        let FenceStep::LocallyComplete(id) = f.contribute(&all(), local(2), &p(1), w(1), &[])
        else {
            panic!("should complete")
        };
        let (t, next) = f.finish(id).unwrap();
        assert_eq!(t.contributed.len(), 2);
        assert_eq!(next, None);
        assert!(f.is_empty());
    }

    #[test]
    fn a_process_fencing_twice_lands_in_the_next_generation() {
        let mut f = Fences::default();
        let w = |c, t| Waiter { conn: c, tag: t };
        assert_eq!(
            f.contribute(&all(), local(2), &p(0), w(0, 101), &[]),
            FenceStep::Pending(1)
        );
        // Rank 0 fences again before rank 1 arrived for the first: a second generation.
        assert_eq!(
            f.contribute(&all(), local(2), &p(0), w(0, 102), &[]),
            FenceStep::Pending(2)
        );
        assert_eq!(f.len(), 2);
        let FenceStep::LocallyComplete(first) =
            f.contribute(&all(), local(2), &p(1), w(1, 101), &[])
        else {
            panic!()
        };
        let (t, next) = f.finish(first).unwrap();
        assert_eq!(t.contributed[&p(0)].tag, 101);
        assert_eq!(
            next, None,
            "rank 1 has not entered the second generation yet"
        );
        let FenceStep::LocallyComplete(second) =
            f.contribute(&all(), local(2), &p(1), w(1, 102), &[])
        else {
            panic!()
        };
        assert_eq!(f.finish(second).unwrap().0.contributed[&p(0)].tag, 102);
    }

    #[test]
    fn a_lost_participant_completes_only_the_oldest_generation_and_tells_the_host() {
        let mut f = Fences::default();
        let w = |c, t| Waiter { conn: c, tag: t };
        let others = vec![p(0), Proc::try_new("elsewhere", 0).unwrap()];
        f.contribute(&all(), local(3), &p(0), w(0, 1), &[]);
        f.contribute(&all(), local(3), &p(0), w(0, 2), &[]);
        let FenceStep::LocallyComplete(other) =
            f.contribute(&others, local(1), &p(0), w(0, 3), &[])
        else {
            panic!()
        };
        // Rank 0 contributed everywhere: losing it changes nothing.
        assert!(f.lose(&p(0), LOST_PARTICIPANT).is_empty());
        // Rank 2 never came: both generations fail, the first one may end now.
        let ready = f.lose(&p(2), LOST_PARTICIPANT);
        assert_eq!(ready, vec![1]);
        let first = f.get_mut(1).unwrap();
        assert!(first.is_locally_complete());
        let info = first.host_info();
        let status = info
            .iter()
            .find_map(|i| i.get(attr::LOCAL_COLLECTIVE_STATUS));
        assert_eq!(status, Some(LOST_PARTICIPANT));
        assert_eq!(first.outcome(Status::SUCCESS), LOST_PARTICIPANT);
        assert_eq!(first.outcome(Status::ERR_TIMEOUT), Status::ERR_TIMEOUT);
        let (_, next) = f.finish(1).unwrap();
        assert_eq!(next, Some(2), "the second generation follows in order");
        assert!(f.get_mut(other).unwrap().lost.is_none());
        assert!(f.get_mut(other).unwrap().host_info().is_empty());
    }

    #[test]
    fn collect_data_is_remembered() {
        let mut f = Fences::default();
        let info = [Info::new(attr::COLLECT_DATA, true)];
        let FenceStep::LocallyComplete(id) =
            f.contribute(&all(), local(1), &p(0), Waiter { conn: 0, tag: 1 }, &info)
        else {
            panic!()
        };
        assert!(f.get_mut(id).unwrap().collect);
    }
}
