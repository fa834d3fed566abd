//! Collectives (fence, connect, disconnect) up and down a tree or around a ring, and the
//! failure protocol that gives every live participant one outcome (see the module docs).

use super::*;

impl Daemon {
    /// The nodes `procs` run on (a wildcard rank: every node of the job), sorted.
    pub(super) fn nodes_of(&self, procs: &[Proc]) -> Result<Vec<u32>, Status> {
        let l = self.layout();
        let mut nodes = Vec::new();
        for p in procs {
            if p.nspace != self.0.setup.nspace {
                // A spawned job: its placement came with its launch.
                let state = lock(&self.0.state);
                let placement = state.jobs.get(&p.nspace).ok_or(Status::ERR_NOT_FOUND)?;
                if p.rank == Rank::WILDCARD {
                    nodes.extend_from_slice(placement);
                } else {
                    let n = placement
                        .get(p.rank.0 as usize)
                        .ok_or(Status::ERR_BAD_PARAM)?;
                    nodes.push(*n);
                }
                continue;
            }
            if p.rank == Rank::WILDCARD {
                nodes.extend(0..l.nodes);
            } else if p.rank.0 < l.job_size() {
                nodes.push(l.node_of_rank(p.rank.0));
            } else {
                return Err(Status::ERR_BAD_PARAM);
            }
        }
        nodes.sort_unstable();
        nodes.dedup();
        Ok(nodes)
    }

    /// Whether rank `rank` of the job is among `procs`.
    pub(super) fn involves(&self, procs: &[Proc], rank: u32) -> bool {
        procs.iter().any(|p| {
            p.nspace == self.0.setup.nspace && (p.rank == Rank::WILDCARD || p.rank.0 == rank)
        })
    }

    /// This node's server joins a collective of `procs` with `data`: its key and the waiter
    /// of its outcome. A server that lost one of its own participants says so in `info`
    /// (`PMIX_LOCAL_COLLECTIVE_STATUS`), and the collective then fails everywhere.
    pub(super) fn join(
        &self,
        kind: Kind,
        procs: &[Proc],
        info: &[Info],
        data: Vec<u8>,
    ) -> Result<(u64, Awaited), Status> {
        self.join_named(kind, "", procs, info, data)
    }

    /// As [`Daemon::join`], for a collective named `name` as well as by its processes (a
    /// group's).
    pub(super) fn join_named(
        &self,
        kind: Kind,
        name: &str,
        procs: &[Proc],
        info: &[Info],
        data: Vec<u8>,
    ) -> Result<(u64, Awaited), Status> {
        let status = info
            .iter()
            .find_map(|i| i.get(attr::LOCAL_COLLECTIVE_STATUS))
            .map_or(0, |s| s.0);
        let nodes = self.nodes_of(procs)?;
        let whole_job = nodes.len() == self.layout().nodes as usize;
        let tree = match (&self.0.setup.ring, whole_job) {
            (Some(ring), true) => ring.clone(),
            (Some(_), false) => Arc::new(Tree::ring(&nodes)),
            (None, true) => self.0.setup.job_tree.clone(),
            (None, false) => Arc::new(self.layout().tree(&nodes)),
        };
        let me = self.me();
        let key = self.next_key(kind as u8, name, procs);
        let (tx, rx) = oneshot::channel();
        self.note(format!("join {key:016x}: {status}").as_bytes());
        let mut state = lock(&self.0.state);
        if let Some((status, data)) = state.finished.get(&key).cloned() {
            // The collective ended before this node's server joined (a subtree failed).
            drop(state);
            self.answer(key, tx, status, data);
            return Ok((key, rx));
        }
        let root = tree.root().unwrap_or(me);
        let c = state.collectives.entry(key).or_default();
        c.joined = Some(Joined {
            parent: tree.parent(me),
            children: tree.children(me).to_vec(),
            root,
            root_children: tree.children(root).to_vec(),
            procs: procs.to_vec(),
            data,
            status,
            waiter: Some(tx),
            sent_up: false,
        });
        self.progress(&mut state, key);
        self.root_check(&mut state, key);
        Ok((key, rx))
    }

    /// The key of the next collective of this kind (`kind`), name and process set at this
    /// node. Named by its process set, as the servers track it: two sets on the same nodes
    /// are two collectives, whatever order they are entered in.
    pub(super) fn next_key(&self, kind: u8, name: &str, procs: &[Proc]) -> u64 {
        let mut set: Vec<&Proc> = procs.iter().collect();
        set.sort();
        set.dedup();
        let mut signature = vec![kind];
        signature.extend_from_slice(name.as_bytes());
        signature.push(0);
        for p in set {
            signature.extend_from_slice(p.nspace.as_str().as_bytes());
            signature.push(0);
            signature.extend_from_slice(&p.rank.0.to_le_bytes());
        }
        let mut state = lock(&self.0.state);
        let sig = fnv(&signature);
        let seq = state.seq.entry(sig).or_insert(0);
        *seq += 1;
        fnv(&[sig.to_le_bytes(), seq.to_le_bytes()].concat())
    }

    /// Whether `node` has participants of `procs` and every one of them is dead: its server
    /// will never join a collective of `procs`.
    pub(super) fn never_joins(&self, state: &State, node: u32, procs: &[Proc]) -> bool {
        let mut involved = self
            .layout()
            .ranks_of(node)
            .filter(|r| self.involves(procs, *r))
            .peekable();
        involved.peek().is_some() && involved.all(|r| state.dead_ranks.contains(&r))
    }

    /// The root's server never joins collective `key` when every participant on the root's
    /// node is dead; nobody else can end it, since the root decides. A participant that sees
    /// it tells the root, which checks against its own view and ends the collective, or waits
    /// for its own word of the deaths (see `proc_down`).
    pub(super) fn root_check(&self, state: &mut State, key: u64) {
        let me = self.me();
        let Some(c) = state.collectives.get(&key) else {
            return;
        };
        if let Some(procs) = c.lost_here.as_ref() {
            if c.joined.is_none() && self.never_joins(state, me, procs) {
                self.note(format!("root lost {key:016x}: ending it").as_bytes());
                self.finish(state, key, LOST.0, Vec::new());
            }
            return;
        }
        let Some(j) = c.joined.as_ref() else {
            return;
        };
        if j.root == me || c.told_root || !self.never_joins(state, j.root, &j.procs) {
            return;
        }
        let (root, data) = (j.root, pack_procs(&j.procs));
        if let Some(c) = state.collectives.get_mut(&key) {
            c.told_root = true;
        }
        self.send(root, Body::RootLost { key, data });
    }

    /// Give this node's server the outcome of `key`.
    pub(super) fn answer(&self, key: u64, waiter: Waiter, status: i32, data: Vec<u8>) {
        self.0
            .setup
            .observer
            .outcome(self.me(), key, status, fnv(&data));
        let result = if status == 0 {
            Ok(data)
        } else {
            Err(Status(status))
        };
        let _ = waiter.send(result);
    }

    /// Move collective `key` on if it can: up once the node and all its children are in (or
    /// an error once one of them never will be), or, at the root, down to everyone.
    pub(super) fn progress(&self, state: &mut State, key: u64) {
        let Some(c) = state.collectives.get(&key) else {
            return;
        };
        let Some(j) = c.joined.as_ref() else {
            return;
        };
        if j.sent_up {
            return;
        }
        // A failed part ends the collective without waiting for the rest.
        let mut status = j.status;
        for ch in j.children.iter().filter(|_| j.status == 0) {
            match c.got.get(ch) {
                Some((s, _)) => {
                    if status == 0 {
                        status = *s;
                    }
                }
                None => {
                    let down = state.down.contains_key(ch);
                    // The planted bug of the test build: a child that is down counts as in.
                    if cfg!(feature = "planted-bug") && down {
                        continue;
                    }
                    let lost_rank = state.dead_ranks.iter().any(|&r| {
                        self.layout().node_of_rank(r) == *ch && self.involves(&j.procs, r)
                    });
                    if !(down || lost_rank) {
                        return; // still to come
                    }
                    if status == 0 {
                        status = LOST.0;
                    }
                }
            }
        }
        let parent = j.parent;
        if status == 0 && parent.is_some_and(|p| state.down.contains_key(&p)) {
            // The parent went down before this part reached it: the root cannot have it.
            status = LOST.0;
        }
        let mut all = Vec::new();
        if status == 0 {
            all.extend_from_slice(&j.data);
            for ch in &j.children {
                if let Some((_, d)) = c.got.get(ch) {
                    all.extend_from_slice(d);
                }
            }
        }
        match parent {
            Some(p) if status == 0 => {
                if let Some(j) = state
                    .collectives
                    .get_mut(&key)
                    .and_then(|c| c.joined.as_mut())
                {
                    j.sent_up = true;
                }
                let data = all;
                self.send(p, Body::Contrib { key, status, data });
            }
            Some(p) => {
                // Tell the root why it cannot succeed, and end the subtree's part now.
                if !state.down.contains_key(&p) {
                    let data = Vec::new();
                    self.send(p, Body::Contrib { key, status, data });
                }
                self.finish(state, key, status, Vec::new());
            }
            None => self.finish(state, key, status, all),
        }
    }

    /// Collective `key` ended with `status`: record it, give it to this node's server, and
    /// pass it on to the children, the contributors and whoever asked.
    pub(super) fn finish(&self, state: &mut State, key: u64, status: i32, data: Vec<u8>) {
        state.finished.insert(key, (status, data.clone()));
        let Some(c) = state.collectives.remove(&key) else {
            return;
        };
        let mut targets: BTreeSet<u32> = c.got.keys().copied().collect();
        targets.extend(&c.askers);
        targets.extend(&c.peer_askers);
        let mut waiter = None;
        if let Some(j) = c.joined {
            targets.extend(&j.children);
            waiter = j.waiter;
        }
        targets.remove(&self.me());
        for t in targets {
            if !state.down.contains_key(&t) {
                let data = data.clone();
                self.send(t, Body::Release { key, status, data });
            }
        }
        if let Some(w) = waiter {
            self.answer(key, w, status, data);
        }
    }

    /// This orphan (its parent went down after it sent its part up) asks for the outcome: the
    /// root if it lives, else the root's other children; with nobody left to ask, the
    /// collective failed.
    pub(super) fn ask(&self, state: &mut State, key: u64) {
        let me = self.me();
        let Some(c) = state.collectives.get_mut(&key) else {
            return;
        };
        let Some(j) = c.joined.as_ref() else {
            return;
        };
        let targets: Vec<u32> = if !state.down.contains_key(&j.root) && !c.asked.contains(&j.root) {
            vec![j.root]
        } else {
            j.root_children
                .iter()
                .copied()
                .filter(|n| *n != me && !state.down.contains_key(n) && !c.asked.contains(n))
                .collect()
        };
        if targets.is_empty() {
            self.finish(state, key, LOST.0, Vec::new());
            return;
        }
        let to_root = targets == [j.root];
        for &t in &targets {
            c.asked.insert(t);
            c.asking.insert(t);
        }
        for t in targets {
            let body = if to_root {
                Body::AskRoot { key }
            } else {
                Body::AskPeer { key }
            };
            self.send(t, body);
        }
    }

    /// End collective `key` at this node when the `PMIX_TIMEOUT` of `info` passes, if any.
    pub(super) fn bound(&self, key: u64, info: &[Info]) {
        let timeout = info
            .iter()
            .find_map(|i| i.get(attr::TIMEOUT))
            .and_then(|s| u64::try_from(s).ok())
            .filter(|s| *s > 0);
        if let Some(s) = timeout {
            let d = self.clone();
            self.spawn(async move {
                tokio::time::sleep(Duration::from_secs(s)).await;
                d.timed_out(key);
            });
        }
    }

    /// A collective's `PMIX_TIMEOUT` passed at this node.
    pub(super) fn timed_out(&self, key: u64) {
        let mut state = lock(&self.0.state);
        if state.collectives.contains_key(&key) && !state.finished.contains_key(&key) {
            self.note(format!("timeout {key:016x}").as_bytes());
            self.finish(&mut state, key, Status::ERR_TIMEOUT.0, Vec::new());
        }
        if state.tolerant.contains_key(&key) {
            self.note(format!("timeout {key:016x}").as_bytes());
            self.tolerant_finish(&mut state, key, Status::ERR_TIMEOUT.0, Vec::new(), false);
        }
    }
}
