//! Group collectives that go on without lost members: a construction or destruct whose
//! directives carry `PMIX_GROUP_NOTIFY_TERMINATION` (v5.0 §14.2.6) or
//! `PMIX_GROUP_FT_COLLECTIVE` (§14.2.5) completes with the members still alive instead of
//! failing when one terminates.
//!
//! They run as a star, not a tree, so that a node that fails takes only its own part with
//! it: every participant node sends its part (its live participant ranks) straight to the
//! *root*, the lowest participant node not known to be down. The root completes once every
//! participant node has sent its part, is down, or has no live participant left (its
//! server will never join), and sends the outcome, the members alive in its view, to every
//! participant node. The servers then form the group of those members.
//!
//! When the root goes down, each daemon takes the next live participant node as the root
//! and sends its part again; a daemon that had received the outcome from the old root
//! passes it to the new one instead, so that the new root ends the collective with the
//! outcome some members may already hold. Only processes of the job itself take part this
//! way (a group with members of a spawned job runs as an ordinary collective).

use super::*;

/// Such a collective in progress at this node.
#[derive(Debug, Default)]
pub(super) struct Tolerant {
    /// Its participants and their nodes (sorted), once known from the server's join or a
    /// part received.
    procs: Vec<Proc>,
    nodes: Vec<u32>,
    /// The root in this node's view.
    root: u32,
    /// This node's part, once its server joined: its live participant ranks.
    mine: Option<Vec<u32>>,
    /// The root this node sent its part to.
    sent_to: Option<u32>,
    /// Parts received (as the root, or as the next one).
    got: BTreeMap<u32, Vec<u32>>,
    waiter: Option<Waiter>,
}

/// A part or an outcome: the collective's processes, and ranks.
fn pack_part(procs: &[Proc], ranks: &[u32]) -> Vec<u8> {
    let mut b = DataBuffer::new();
    // Packing procs and integers into memory cannot fail.
    let _ = b.pack(procs);
    let _ = b.pack(ranks);
    b.unload()
}

fn unpack_part(data: Vec<u8>) -> Option<(Vec<Proc>, Vec<u32>)> {
    let mut b = DataBuffer::load(data, BufferType::NonDescribed);
    let procs = b.unpack::<Proc>(usize::MAX).ok()?;
    let ranks = b.unpack::<u32>(usize::MAX).ok()?;
    Some((procs, ranks))
}

impl Daemon {
    /// Whether a group operation over `procs` with `directives` runs this way.
    pub(super) fn tolerates_losses(&self, procs: &[Proc], directives: &[Info]) -> bool {
        let asked = Info::flag(directives, attr::GROUP_NOTIFY_TERMINATION)
            || Info::flag(directives, attr::GROUP_FT_COLLECTIVE);
        asked && procs.iter().all(|p| p.nspace == self.0.setup.nspace)
    }

    /// The ranks of `procs` (a wildcard: the whole job) on `node`.
    fn ranks_on(&self, node: u32, procs: &[Proc]) -> Vec<u32> {
        (self.layout().ranks_of(node))
            .filter(|r| self.involves(procs, *r))
            .collect()
    }

    /// The lowest of `nodes` not known to be down.
    fn root_of(state: &State, nodes: &[u32]) -> Option<u32> {
        nodes.iter().copied().find(|n| !state.down.contains_key(n))
    }

    /// This node's server joins the collective `key` over `procs`: its outcome, the members
    /// alive, comes to `waiter`.
    pub(super) fn join_tolerant(
        &self,
        key: u64,
        procs: &[Proc],
        waiter: Waiter,
    ) -> Result<(), Status> {
        let nodes = self.nodes_of(procs)?;
        let mut state = lock(&self.0.state);
        if let Some((status, data)) = state.finished.get(&key).cloned() {
            drop(state);
            self.answer(key, waiter, status, data);
            return Ok(());
        }
        let me = self.me();
        let live: Vec<u32> = (self.ranks_on(me, procs).into_iter())
            .filter(|r| !state.dead_ranks.contains(r))
            .collect();
        let root = Self::root_of(&state, &nodes).unwrap_or(me);
        let t = state.tolerant.entry(key).or_default();
        t.procs = procs.to_vec();
        t.nodes = nodes;
        t.root = root;
        t.mine = Some(live);
        t.waiter = Some(waiter);
        self.tolerant_progress(&mut state, key);
        Ok(())
    }

    /// A part of collective `key` from `from`.
    pub(super) fn part_received(&self, state: &mut State, key: u64, from: u32, data: Vec<u8>) {
        if let Some((status, data)) = state.finished.get(&key).cloned() {
            self.send(from, Body::Outcome { key, status, data });
            return;
        }
        let Some((procs, ranks)) = unpack_part(data) else {
            return;
        };
        let Ok(nodes) = self.nodes_of(&procs) else {
            return;
        };
        let root = Self::root_of(state, &nodes).unwrap_or(self.me());
        let t = state.tolerant.entry(key).or_default();
        if t.procs.is_empty() {
            t.procs = procs;
            t.nodes = nodes;
            t.root = root;
        }
        t.got.insert(from, ranks);
        self.tolerant_progress(state, key);
    }

    /// The outcome of collective `key`, from its root (or from a node that had it, when the
    /// root went down): end it here, and, as the root now, at every participant node.
    pub(super) fn outcome_received(&self, state: &mut State, key: u64, status: i32, data: Vec<u8>) {
        if state.finished.contains_key(&key) {
            return;
        }
        let me = self.me();
        let rooted = state.tolerant.get(&key).is_some_and(|t| t.root == me);
        self.tolerant_finish(state, key, status, data, rooted);
    }

    /// Move collective `key` on: send this node's part to the root, or, at the root, end it
    /// once every participant node sent its part or never will.
    pub(super) fn tolerant_progress(&self, state: &mut State, key: u64) {
        let me = self.me();
        let Some(t) = state.tolerant.get(&key) else {
            return;
        };
        if t.procs.is_empty() {
            return;
        }
        if t.root != me {
            if let Some(mine) = t.mine.as_ref().filter(|_| t.sent_to != Some(t.root)) {
                let (root, data) = (t.root, pack_part(&t.procs, mine));
                if let Some(t) = state.tolerant.get_mut(&key) {
                    t.sent_to = Some(root);
                }
                self.send(root, Body::Part { key, data });
            }
            return;
        }
        let ready = t.nodes.iter().all(|&n| {
            let part = if n == me {
                t.mine.is_some()
            } else {
                t.got.contains_key(&n) || state.down.contains_key(&n)
            };
            part || self.never_joins(state, n, &t.procs)
        });
        if !ready {
            return;
        }
        let mut members: BTreeSet<u32> = t.got.values().flatten().copied().collect();
        members.extend(t.mine.iter().flatten());
        let members: Vec<u32> = (members.into_iter())
            .filter(|r| !state.dead_ranks.contains(r))
            .collect();
        let data = pack_part(&t.procs, &members);
        self.tolerant_finish(state, key, 0, data, true);
    }

    /// End collective `key` here with `status` and `data`; `spread`: pass it on to every
    /// participant node.
    pub(super) fn tolerant_finish(
        &self,
        state: &mut State,
        key: u64,
        status: i32,
        data: Vec<u8>,
        spread: bool,
    ) {
        state.finished.insert(key, (status, data.clone()));
        let t = state.tolerant.remove(&key).unwrap_or_default();
        state.tolerant_done.insert(key, (t.nodes.clone(), t.root));
        if spread {
            for &n in t.nodes.iter().filter(|n| **n != self.me()) {
                if !state.down.contains_key(&n) {
                    let data = data.clone();
                    self.send(n, Body::Outcome { key, status, data });
                }
            }
        }
        self.note(format!("tolerant {key:016x} ends: {status}").as_bytes());
        if let Some(w) = t.waiter {
            self.answer(key, w, status, data);
        }
    }

    /// `node` went down: collectives rooted there move to the next live participant node,
    /// and those that ended here are passed to it, as it may not have the outcome.
    pub(super) fn tolerant_node_down(&self, state: &mut State, node: u32) {
        let keys: Vec<u64> = state.tolerant.keys().copied().collect();
        for key in keys {
            let next = state
                .tolerant
                .get(&key)
                .and_then(|t| Self::root_of(state, &t.nodes));
            if let (Some(t), Some(next)) = (state.tolerant.get_mut(&key), next) {
                t.root = next;
            }
            self.tolerant_progress(state, key);
        }
        let moved: Vec<(u64, u32)> = (state.tolerant_done.iter())
            .filter(|(_, (_, root))| *root == node)
            .filter_map(|(key, (nodes, _))| Some((*key, Self::root_of(state, nodes)?)))
            .collect();
        for (key, next) in moved {
            if let Some(entry) = state.tolerant_done.get_mut(&key) {
                entry.1 = next;
            }
            if next == self.me() {
                continue;
            }
            if let Some((status, data)) = state.finished.get(&key).cloned() {
                self.send(next, Body::Outcome { key, status, data });
            }
        }
    }

    /// The members an outcome names, as processes of the job.
    pub(super) fn members_of(&self, data: Vec<u8>) -> Vec<Proc> {
        let ranks = unpack_part(data).map(|(_, r)| r).unwrap_or_default();
        (ranks.into_iter())
            .map(|r| Proc::new(self.0.setup.nspace.clone(), Rank(r)))
            .collect()
    }
}
