//! Faults: what a scenario schedules (or the seed draws), resolved into timed actions on the
//! cluster, and the link faults the daemons' transport applies.
//!
//! A fault's time may carry jitter and its target may be `random`; both are drawn from the
//! run's seed ([`SeedRng`]), so a sweep over seeds moves the fault across the run while any
//! one seed replays exactly.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::cluster::Layout;

/// A node, rank or rack named by a fault: a fixed one, or one drawn from the seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    Fixed(u32),
    Random,
}

/// What goes wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// A node stops: its daemon, server and clients.
    CrashNode(Pick),
    /// Every node of a rack stops at once.
    CrashRack(Pick),
    /// A node stops, and its daemon starts again `after` later (without the job's processes,
    /// which died with it).
    RestartNode { node: Pick, after: Duration },
    /// One client process dies.
    KillClient(Pick),
    /// Nothing passes between two racks for a while (turmoil drops it).
    Partition { racks: (u32, u32), span: Duration },
    /// Everything between two racks waits for a while, then arrives (turmoil holds it).
    Hold { racks: (u32, u32), span: Duration },
    /// The daemons of two nodes lose what they send each other for a while.
    Drop { nodes: (Pick, Pick), span: Duration },
    /// What the daemons of two nodes send each other is late by `by` for a while.
    Delay {
        nodes: (Pick, Pick),
        by: Duration,
        span: Duration,
    },
    /// Everything a node's daemon sends is late by `by` for a while.
    SlowNode {
        node: Pick,
        by: Duration,
        span: Duration,
    },
}

/// A fault at a simulated time, plus up to `jitter` drawn from the seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub at: Duration,
    pub jitter: Duration,
    pub kind: FaultKind,
}

/// One thing done to the cluster at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    CrashNode(u32),
    StartNode(u32),
    KillClient(u32),
    Partition(u32, u32),
    Repair(u32, u32),
    Hold(u32, u32),
    Release(u32, u32),
    SetRule(u32, u32, Rule),
    ClearRule(u32, u32),
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::CrashNode(n) => write!(f, "crash node {n}"),
            Action::StartNode(n) => write!(f, "start node {n} again"),
            Action::KillClient(r) => write!(f, "kill rank {r}"),
            Action::Partition(a, b) => write!(f, "partition racks {a} and {b}"),
            Action::Repair(a, b) => write!(f, "repair racks {a} and {b}"),
            Action::Hold(a, b) => write!(f, "hold racks {a} and {b}"),
            Action::Release(a, b) => write!(f, "release racks {a} and {b}"),
            Action::SetRule(a, b, r) if r.drop => write!(f, "drop from node {a} to node {b}"),
            Action::SetRule(a, b, r) => {
                write!(f, "delay from node {a} to node {b} by {:?}", r.delay)
            }
            Action::ClearRule(a, b) => write!(f, "heal from node {a} to node {b}"),
        }
    }
}

/// The seed's random numbers (SplitMix64: tiny, fixed, the same everywhere).
#[derive(Clone, Debug)]
pub struct SeedRng(u64);

impl SeedRng {
    pub fn new(seed: u64) -> SeedRng {
        SeedRng(seed ^ 0x5eed_5eed_5eed_5eed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }
}

/// Turn `faults` into timed actions for `layout`, drawing jitter and random targets from
/// `seed`. Random nodes and racks avoid node 0, where the job's collectives are rooted (as
/// a resource manager's head node is: losing it ends the job, not a collective); a random
/// rank is any rank of the job, those on node 0 included. Sorted by time, in schedule order
/// for equal times.
pub fn resolve(faults: &[Fault], layout: &Layout, seed: u64) -> Vec<(Duration, Action)> {
    let mut rng = SeedRng::new(seed);
    let mut out = Vec::new();
    let node = |rng: &mut SeedRng, p: Pick| match p {
        Pick::Fixed(n) => n.min(layout.nodes - 1),
        Pick::Random if layout.nodes > 1 => {
            1 + u32::try_from(rng.below(u64::from(layout.nodes - 1))).unwrap_or(0)
        }
        Pick::Random => 0,
    };
    for f in faults {
        let jitter =
            Duration::from_nanos(rng.below(u64::try_from(f.jitter.as_nanos()).unwrap_or(u64::MAX)));
        let at = f.at + jitter;
        match &f.kind {
            FaultKind::CrashNode(p) => out.push((at, Action::CrashNode(node(&mut rng, *p)))),
            FaultKind::RestartNode { node: p, after } => {
                let n = node(&mut rng, *p);
                out.push((at, Action::CrashNode(n)));
                out.push((at + *after, Action::StartNode(n)));
            }
            FaultKind::CrashRack(p) => {
                let rack = match *p {
                    Pick::Fixed(r) => r.min(layout.used_racks() - 1),
                    Pick::Random if layout.used_racks() > 1 => {
                        1 + u32::try_from(rng.below(u64::from(layout.used_racks() - 1)))
                            .unwrap_or(0)
                    }
                    Pick::Random => 0,
                };
                for n in layout.nodes_of(rack) {
                    out.push((at, Action::CrashNode(n)));
                }
            }
            FaultKind::KillClient(p) => {
                let rank = match *p {
                    Pick::Fixed(r) => r.min(layout.job_size() - 1),
                    Pick::Random => {
                        u32::try_from(rng.below(u64::from(layout.job_size()))).unwrap_or(0)
                    }
                };
                out.push((at, Action::KillClient(rank)));
            }
            FaultKind::Partition {
                racks: (a, b),
                span,
            } => {
                out.push((at, Action::Partition(*a, *b)));
                out.push((at + *span, Action::Repair(*a, *b)));
            }
            FaultKind::Hold {
                racks: (a, b),
                span,
            } => {
                out.push((at, Action::Hold(*a, *b)));
                out.push((at + *span, Action::Release(*a, *b)));
            }
            FaultKind::Drop { nodes, span } | FaultKind::Delay { nodes, span, .. } => {
                let a = node(&mut rng, nodes.0);
                let b = node(&mut rng, nodes.1);
                let rule = match &f.kind {
                    FaultKind::Delay { by, .. } => Rule {
                        drop: false,
                        delay: *by,
                    },
                    _ => Rule {
                        drop: true,
                        delay: Duration::ZERO,
                    },
                };
                for (x, y) in [(a, b), (b, a)] {
                    out.push((at, Action::SetRule(x, y, rule.clone())));
                    out.push((at + *span, Action::ClearRule(x, y)));
                }
            }
            FaultKind::SlowNode { node: p, by, span } => {
                let n = node(&mut rng, *p);
                let rule = Rule {
                    drop: false,
                    delay: *by,
                };
                out.push((at, Action::SetRule(n, ALL, rule)));
                out.push((at + *span, Action::ClearRule(n, ALL)));
            }
        }
    }
    out.sort_by_key(|(t, _)| *t);
    out
}

/// A rule's destination meaning every node.
pub const ALL: u32 = u32::MAX;

/// What happens to a daemon's message on one link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rule {
    pub drop: bool,
    pub delay: Duration,
}

/// The link faults in force, by (from, to) node; `to` may be [`ALL`].
#[derive(Debug, Default)]
pub struct LinkFaults {
    rules: BTreeMap<(u32, u32), Rule>,
}

impl LinkFaults {
    pub fn set(&mut self, from: u32, to: u32, rule: Rule) {
        self.rules.insert((from, to), rule);
    }

    pub fn clear(&mut self, from: u32, to: u32) {
        self.rules.remove(&(from, to));
    }

    /// The rule for a message from `from` to `to`: the link's own and the sender's, combined.
    pub fn rule(&self, from: u32, to: u32) -> Rule {
        if self.rules.is_empty() {
            return Rule::default();
        }
        let mut r = Rule::default();
        for key in [(from, to), (from, ALL)] {
            if let Some(x) = self.rules.get(&key) {
                r.drop |= x.drop;
                r.delay += x.delay;
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_resolve_from_the_seed_alone() {
        let layout = Layout::new(8, 2, 2, 2).unwrap();
        let faults = vec![
            Fault {
                at: Duration::from_millis(100),
                jitter: Duration::from_millis(50),
                kind: FaultKind::CrashNode(Pick::Random),
            },
            Fault {
                at: Duration::from_millis(10),
                jitter: Duration::ZERO,
                kind: FaultKind::Partition {
                    racks: (0, 1),
                    span: Duration::from_millis(500),
                },
            },
            Fault {
                at: Duration::ZERO,
                jitter: Duration::ZERO,
                kind: FaultKind::CrashRack(Pick::Fixed(1)),
            },
        ];
        let a = resolve(&faults, &layout, 7);
        assert_eq!(a, resolve(&faults, &layout, 7));
        // The rack's four nodes first, then the partition, the crash, the repair.
        assert_eq!(a.len(), 7);
        assert_eq!(a[0], (Duration::ZERO, Action::CrashNode(4)));
        assert_eq!(a[4], (Duration::from_millis(10), Action::Partition(0, 1)));
        let (t, crash) = &a[5];
        assert!(*t >= Duration::from_millis(100) && *t < Duration::from_millis(150));
        assert!(matches!(crash, Action::CrashNode(n) if (1..8).contains(n)));
        assert_eq!(a[6], (Duration::from_millis(510), Action::Repair(0, 1)));
        // Some other seed draws another node or another time.
        assert!((1..40).any(|s| resolve(&faults, &layout, s) != a));
    }

    #[test]
    fn a_link_s_rule_adds_the_sender_s() {
        let mut f = LinkFaults::default();
        assert_eq!(f.rule(1, 2), Rule::default());
        let ms = Duration::from_millis;
        f.set(
            1,
            ALL,
            Rule {
                drop: false,
                delay: ms(5),
            },
        );
        f.set(
            1,
            2,
            Rule {
                drop: true,
                delay: ms(1),
            },
        );
        assert_eq!(
            f.rule(1, 2),
            Rule {
                drop: true,
                delay: ms(6)
            }
        );
        assert_eq!(
            f.rule(1, 3),
            Rule {
                drop: false,
                delay: ms(5)
            }
        );
        f.clear(1, 2);
        assert_eq!(
            f.rule(1, 2),
            Rule {
                drop: false,
                delay: ms(5)
            }
        );
        assert_eq!(f.rule(2, 1), Rule::default());
    }
}
