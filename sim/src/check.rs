//! The invariants every run is held to, checked on what the [`Observer`](crate::Observer)
//! saw once the run ended (issue 6):
//!
//! - every client that is alive at the end finished: nothing is left pending, at the clients
//!   or at the daemons, once the liveness phase after the faults is over;
//! - the fence either succeeded at every live client or failed at every one, with the
//!   standard's status (`PMIX_ERR_LOST_CONNECTION` for a lost participant,
//!   `PMIX_ERR_TIMEOUT` past its `PMIX_TIMEOUT`) and within that timeout; it fails only when
//!   a fault happened;
//! - every node's server got the same outcome of each collective, with the same data;
//! - every get after a successful fence returned exactly the value its owner put (checked as
//!   it happens), or, with direct modex, failed because the owner is gone;
//! - every lookup found exactly the value its peer published (checked as it happens), or
//!   failed with the standard's status because the data server went down after the publish;
//! - every failure reached the handlers registered for it: each live client heard of each
//!   crashed node (`PMIX_EVENT_NODE_DOWN`) and each killed process
//!   (`PMIX_EVENT_PROC_TERMINATED`) that failed long enough before it finalized;
//! - a spawned job runs to its end with one fence outcome at its live processes; a failed
//!   spawn (only after a fault, with `PMIX_ERR_JOB_FAILED_TO_LAUNCH`) leaves none of its
//!   processes completed or running;
//! - a connect (and disconnect) between a parent and its spawned job ends alike for every
//!   live party;
//! - a node started again is up in the view of every live daemon;
//! - nothing panicked (counted in `run`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use pmix::model::Status;

use crate::{Config, Modex, Observed};

/// The slack allowed past a timeout: the servers' and daemons' timers, and a step of the
/// simulation.
const TIMER_SLACK: Duration = Duration::from_millis(20);

/// At most this many violations of one kind are listed; the rest are counted.
const LISTED: usize = 5;

/// `views`: each live daemon's nodes held to be down.
pub(crate) fn check(
    config: &Config,
    s: &Observed,
    pending: Vec<String>,
    views: &BTreeMap<u32, Vec<u32>>,
) -> Vec<String> {
    let layout = &config.layout;
    let mut out = Vec::new();
    let dead_node = |n: u32| s.crashed.contains_key(&n);
    let live = |rank: u32| {
        !dead_node(layout.node_of_rank(rank))
            && s.ranks.get(rank as usize).is_some_and(|r| !r.killed)
    };
    let faulted = !s.faults.is_empty();

    // Nothing left pending.
    let stuck: Vec<u32> = (0..layout.job_size())
        .filter(|&r| live(r) && !s.ranks[r as usize].done)
        .collect();
    list(&mut out, "live clients never finished", &stuck);
    out.extend(pending.into_iter().take(LISTED));
    for &n in &s.restarted {
        let unaware: Vec<u32> = views
            .iter()
            .filter(|(_, down)| down.contains(&n))
            .map(|(d, _)| *d)
            .collect();
        if !unaware.is_empty() {
            out.push(format!(
                "node {n} started again, but nodes {} still hold it down",
                few(&unaware)
            ));
        }
    }

    // The fence: one outcome for every live client, the standard's, within its timeout.
    let mut succeeded = Vec::new();
    let mut failed: BTreeMap<i32, Vec<u32>> = BTreeMap::new();
    let mut late = Vec::new();
    let mut before_any_fault = Vec::new();
    for (rank, r) in s.ranks.iter().enumerate() {
        let rank = u32::try_from(rank).unwrap_or(u32::MAX);
        if !live(rank) {
            continue;
        }
        match &r.fence {
            Some((_, _, Ok(()))) => succeeded.push(rank),
            Some((start, end, Err(e))) => {
                failed.entry(e.0).or_default().push(rank);
                if s.first_fault.is_none_or(|f| f > *end) {
                    before_any_fault.push(rank);
                }
                if let Some(t) = config.workload.fence_timeout_s
                    && *end > *start + Duration::from_secs(u64::from(t)) + TIMER_SLACK
                {
                    late.push(rank);
                }
            }
            None => {}
        }
    }
    if !failed.is_empty() {
        if !succeeded.is_empty() {
            out.push(format!(
                "the fence succeeded at ranks {} but failed at {}",
                few(&succeeded),
                failed
                    .iter()
                    .map(|(s, r)| format!("{} ({s})", few(r)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        list(
            &mut out,
            "the fence failed before any fault",
            &before_any_fault,
        );
        for (status, ranks) in &failed {
            if ![Status::ERR_LOST_CONNECTION.0, Status::ERR_TIMEOUT.0].contains(status) {
                out.push(format!(
                    "the fence failed with status {status}, not the standard's, at ranks {}",
                    few(ranks)
                ));
            }
        }
        list(&mut out, "fence failures came after its timeout", &late);
    }

    // One outcome per collective at every live node's server.
    for (key, at) in &s.outcomes {
        let outcomes: BTreeSet<(bool, u64)> = at
            .iter()
            .filter(|(n, _)| !dead_node(**n))
            .map(|(_, (status, hash))| {
                if *status == 0 {
                    (true, *hash)
                } else {
                    (false, 0)
                }
            })
            .collect();
        if outcomes.len() > 1 {
            out.push(format!(
                "collective {key:016x} ended differently at the live nodes: {:?}",
                at.iter()
                    .filter(|(n, _)| !dead_node(**n))
                    .map(|(n, (st, h))| (n, st, format!("{h:016x}")))
                    .take(8)
                    .collect::<Vec<_>>()
            ));
        }
    }

    // Gets: exact values (checked by the client), failures only from gone owners.
    let mut bad_gets = Vec::new();
    for (rank, r) in s.ranks.iter().enumerate() {
        let rank = u32::try_from(rank).unwrap_or(u32::MAX);
        if let (true, Some(Err(e))) = (live(rank), &r.get) {
            let peer = crate::node::peer_of(layout, rank);
            let owner_gone = !live(peer);
            if !(config.modex == Modex::Direct && owner_gone) {
                bad_gets.push(format!("{rank} ({})", e.0));
            }
        }
    }
    if !bad_gets.is_empty() {
        out.push(format!(
            "gets failed though their owners live or the data came with the fence: ranks {}",
            bad_gets
                .iter()
                .take(LISTED)
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }

    // Lookups: the value published, or an error only when the data server lost it (it went
    // down after the peer published, or the publish itself failed).
    let ds = layout.data_server();
    let ds_crashed = |from: Duration, to: Duration| {
        s.crash_log
            .iter()
            .any(|(n, t)| *n == ds && *t >= from && *t <= to)
    };
    let mut bad_lookups = Vec::new();
    for (rank, r) in s.ranks.iter().enumerate() {
        let rank = u32::try_from(rank).unwrap_or(u32::MAX);
        if !live(rank) {
            continue;
        }
        if let Some((at, Err(e))) = &r.published
            && !ds_crashed(Duration::ZERO, *at)
        {
            bad_lookups.push(format!("{rank} published ({})", e.0));
        }
        if let Some((_, end, Err(e))) = &r.looked_up {
            let peer = &s.ranks[crate::node::peer_of(layout, rank) as usize];
            let lost = match &peer.published {
                Some((at, Ok(()))) => ds_crashed(*at, *end),
                _ => true,
            };
            let standard = [
                Status::ERR_NOT_FOUND.0,
                Status::ERR_LOST_CONNECTION.0,
                Status::ERR_TIMEOUT.0,
            ]
            .contains(&e.0);
            if !(lost && standard) {
                bad_lookups.push(format!("{rank} looked up ({})", e.0));
            }
        }
    }
    if !bad_lookups.is_empty() {
        out.push(format!(
            "publish or lookup failed though the data server kept the data: ranks {}",
            bad_lookups
                .iter()
                .take(LISTED)
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }

    // Spawns: a job spawned runs at every process on a node that stays up, all with one
    // fence outcome; a spawn fails only after a fault, with the standard's job status, and
    // leaves no process of its job completed or still running.
    let spawned_ok: BTreeSet<&str> = s
        .spawns
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok().map(String::as_str))
        .collect();
    for (rank, r) in &s.spawns {
        if let Err(e) = r
            && (!faulted || *e != Status::ERR_JOB_FAILED_TO_LAUNCH)
        {
            out.push(format!("rank {rank}'s spawn failed with {}", e.0));
        }
    }
    let mut jobs: BTreeMap<&str, Vec<(u32, &crate::ChildRecord)>> = BTreeMap::new();
    for ((ns, rank), c) in &s.children {
        jobs.entry(ns.as_str()).or_default().push((*rank, c));
    }
    for (ns, kids) in jobs {
        let live: Vec<&(u32, &crate::ChildRecord)> = kids
            .iter()
            .filter(|(_, c)| !c.killed && !dead_node(c.node))
            .collect();
        let running: Vec<u32> = live
            .iter()
            .filter(|(_, c)| !c.done)
            .map(|(r, _)| *r)
            .collect();
        if spawned_ok.contains(ns) {
            list(
                &mut out,
                &format!("processes of spawned job {ns} never finished"),
                &running,
            );
            let outcomes: BTreeSet<Option<i32>> = live
                .iter()
                .filter_map(|(_, c)| c.fence.map(|f| f.err().map(|e| e.0)))
                .collect();
            let ok = outcomes.contains(&None);
            let errors: Vec<i32> = outcomes.iter().flatten().copied().collect();
            if ok && !errors.is_empty() {
                out.push(format!("spawned job {ns}'s fence succeeded at some processes, failed at others ({errors:?})"));
            }
            if !errors.is_empty()
                && (!faulted
                    || errors.iter().any(|e| {
                        ![Status::ERR_LOST_CONNECTION.0, Status::ERR_TIMEOUT.0].contains(e)
                    }))
            {
                out.push(format!("spawned job {ns}'s fence failed with {errors:?}"));
            }
        } else {
            list(
                &mut out,
                &format!("processes of failed spawn {ns} still run"),
                &running,
            );
            let completed: Vec<u32> = live
                .iter()
                .filter(|(_, c)| c.fence == Some(Ok(())))
                .map(|(r, _)| *r)
                .collect();
            list(
                &mut out,
                &format!("processes of failed spawn {ns} completed"),
                &completed,
            );
        }
    }

    // Connects between a parent and its spawned job: one outcome for every live party.
    for ((job, op), parties) in &s.connects {
        let live: Vec<&crate::PartyOutcome> = parties
            .iter()
            .filter(|(who, _)| match who {
                crate::node::Party::Parent(r) => live(*r),
                crate::node::Party::Child(r) => s
                    .children
                    .get(&(job.clone(), *r))
                    .is_some_and(|c| !c.killed && !dead_node(c.node)),
            })
            .collect();
        let ok = live.iter().any(|(_, r)| r.is_ok());
        let errors: BTreeSet<i32> = live
            .iter()
            .filter_map(|(_, r)| r.as_ref().err().map(|e| e.0))
            .collect();
        if ok && !errors.is_empty() {
            out.push(format!(
                "{op} of {job} succeeded for some parties, failed for others ({errors:?})"
            ));
        }
        // A connected parent holds the spawned job's information from the connect's answer.
        if *op == "job info" && !errors.is_empty() {
            out.push(format!(
                "the parent of {job} could not read its job size once connected ({errors:?})"
            ));
        }
        let allowed = [Status::ERR_LOST_CONNECTION.0, Status::ERR_TIMEOUT.0];
        if !errors.is_empty() && (!faulted || errors.iter().any(|e| !allowed.contains(e))) {
            out.push(format!("{op} of {job} failed with {errors:?}"));
        }
    }

    // Group operations: one outcome for every live member, the same context id everywhere,
    // and a failure only after a fault, with the standard's status.
    for (op, outcomes) in &s.groups {
        let live: Vec<&crate::GroupOutcome> = outcomes.iter().filter(|(r, _)| live(*r)).collect();
        let ids: BTreeSet<Option<u64>> = live
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok().copied())
            .collect();
        let errors: BTreeSet<i32> = live
            .iter()
            .filter_map(|(_, r)| r.as_ref().err().map(|e| e.0))
            .collect();
        if !ids.is_empty() && !errors.is_empty() {
            out.push(format!(
                "group {op} succeeded at some live members, failed at others ({errors:?})"
            ));
        }
        if ids.len() > 1 {
            out.push(format!("group {op} gave different context ids: {ids:?}"));
        }
        if *op == "construct" && ids.contains(&None) {
            out.push("a group construction asked for a context id and got none".to_owned());
        }
        // After a fault: a lost participant, a timeout, an invitation aborted because its
        // leader's node went down, and a join that came after that abort.
        let mut allowed = vec![
            Status::ERR_LOST_CONNECTION.0,
            Status::ERR_TIMEOUT.0,
            Status::GROUP_CONSTRUCT_ABORT.0,
        ];
        if *op == "join" {
            allowed.push(Status::ERR_NOT_FOUND.0);
        }
        // A construction that asked to go on without lost members never fails.
        let tolerant = config.workload.group_notify || config.workload.group_ft;
        if *op == "construct" && tolerant && !errors.is_empty() {
            out.push(format!(
                "group construct that goes on without lost members failed with {errors:?}"
            ));
        }
        if !errors.is_empty() && (!faulted || errors.iter().any(|e| !allowed.contains(e))) {
            out.push(format!("group {op} failed with {errors:?}"));
        }
    }

    // Failure events reached the live clients that stayed long enough to hear them.
    // A crashed node is noticed by its neighbours, and the nodes below it one level of the
    // job tree per liveness timeout (a crashed rack's inner nodes have no live neighbour).
    let l = &config.liveness;
    let all: Vec<u32> = (0..layout.nodes).collect();
    let tree = layout.tree(&all);
    let depth = (0..layout.nodes)
        .map(|n| std::iter::successors(Some(n), |&m| tree.parent(m)).count())
        .max()
        .unwrap_or(1);
    let levels = u32::try_from(depth).unwrap_or(u32::MAX);
    let hearing = (l.suspect_after + 2 * l.heartbeat) * levels + Duration::from_millis(300);
    let failures = s
        .crashed
        .iter()
        .map(|(n, t)| (Status::EVENT_NODE_DOWN.0, *n, *t))
        .chain(
            s.killed_alone
                .iter()
                .filter(|(r, _)| !dead_node(layout.node_of_rank(**r)))
                .map(|(r, t)| (Status::EVENT_PROC_TERMINATED.0, *r, *t)),
        );
    for (status, subject, at) in failures {
        let deaf: Vec<u32> = (0..layout.job_size())
            .filter(|&r| live(r))
            .filter(|&r| {
                let rec = &s.ranks[r as usize];
                rec.done && rec.done_at > at + hearing && !rec.events.contains(&(status, subject))
            })
            .collect();
        let what = if status == Status::EVENT_NODE_DOWN.0 {
            format!("never heard that node {subject} went down")
        } else {
            format!("never heard that rank {subject} terminated")
        };
        list(&mut out, &format!("live clients {what}"), &deaf);
    }
    out
}

fn few(ranks: &[u32]) -> String {
    let mut s: Vec<String> = ranks.iter().take(LISTED).map(u32::to_string).collect();
    if ranks.len() > LISTED {
        s.push(format!("and {} more", ranks.len() - LISTED));
    }
    s.join(" ")
}

fn list(out: &mut Vec<String>, what: &str, ranks: &[u32]) {
    if !ranks.is_empty() {
        out.push(format!("{what}: ranks {}", few(ranks)));
    }
}
