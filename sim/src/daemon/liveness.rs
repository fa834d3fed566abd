//! Heartbeats along the job tree, nodes declared down (and back as new incarnations),
//! terminated processes, and the events that tell the local clients.

use super::*;

impl Daemon {
    /// Incarnation `incarnation` of `node` is seen gone: the node is down unless it already
    /// came back as a later one (the end of an old incarnation's connection can arrive after
    /// the new one said hello).
    pub(super) fn incarnation_down(&self, node: u32, incarnation: u32) {
        let latest = lock(&self.0.state)
            .incarnation
            .get(&node)
            .copied()
            .unwrap_or(0);
        if incarnation == latest {
            self.node_down(node, true);
        }
    }

    /// The latest incarnation of `node` this daemon knows is down: seen here (`detected`,
    /// then every other node is told) or told. Its processes are gone for good: a node that
    /// restarts comes back without them.
    pub(crate) fn node_down(&self, node: u32, detected: bool) {
        let me = self.me();
        let mut state = lock(&self.0.state);
        let incarnation = state.incarnation.get(&node).copied().unwrap_or(0);
        if node == me || state.down.contains_key(&node) {
            return;
        }
        state.down.insert(node, incarnation);
        let ranks = self.layout().ranks_of(node);
        state.dead_ranks.extend(ranks);
        self.note(format!("node {node} down (detected: {detected})").as_bytes());
        if detected {
            let others: Vec<u32> = (0..self.layout().nodes)
                .filter(|n| *n != me && *n != node && !state.down.contains_key(n))
                .collect();
            for n in others {
                self.send(n, Body::NodeDown { node, incarnation });
            }
        }
        let lost: Vec<u64> = state
            .calls
            .iter()
            .filter(|(_, (owner, _))| *owner == node)
            .map(|(k, _)| *k)
            .collect();
        for k in lost {
            if let Some((_, w)) = state.calls.remove(&k) {
                let _ = w.send(Err(LOST));
            }
        }
        let keys: Vec<u64> = state.collectives.keys().copied().collect();
        for key in keys {
            let Some(c) = state.collectives.get_mut(&key) else {
                continue;
            };
            c.askers.remove(&node);
            let Some(j) = c.joined.as_ref() else {
                continue;
            };
            if j.root == node && !c.peer_askers.is_empty() {
                let peers = std::mem::take(&mut c.peer_askers);
                for p in peers {
                    self.send(p, Body::Unknown { key });
                }
            }
            let Some(c) = state.collectives.get_mut(&key) else {
                continue;
            };
            let Some(j) = c.joined.as_ref() else {
                continue;
            };
            if j.sent_up {
                let orphaned = j.parent == Some(node) && c.asked.is_empty();
                let lost_answer = c.asking.remove(&node) && c.asking.is_empty();
                if orphaned || lost_answer {
                    self.ask(&mut state, key);
                }
            } else {
                self.progress(&mut state, key);
            }
        }
        self.tolerant_node_down(&mut state, node);
        let ranks: Vec<Proc> = self
            .layout()
            .ranks_of(node)
            .map(|r| Proc::new(self.0.setup.nspace.clone(), Rank(r)))
            .collect();
        drop(state);
        let info = vec![
            Info::new(attr::HOSTNAME, Layout::hostname(node)),
            Info::new(attr::NODEID, node),
            Info::new(attr::EVENT_AFFECTED_PROCS, DataArray::of_procs(ranks)),
        ];
        self.raise(Status::EVENT_NODE_DOWN, None, info);
    }

    /// Process `rank` of the job terminated (told by its node's daemon).
    pub(super) fn proc_down(&self, rank: u32) {
        let mut state = lock(&self.0.state);
        if !state.dead_ranks.insert(rank) {
            return;
        }
        self.note(format!("rank {rank} terminated").as_bytes());
        let keys: Vec<u64> = state.collectives.keys().copied().collect();
        for key in keys {
            self.progress(&mut state, key);
            self.root_check(&mut state, key);
        }
        let keys: Vec<u64> = state.tolerant.keys().copied().collect();
        for key in keys {
            self.tolerant_progress(&mut state, key);
        }
        drop(state);
        let proc = Proc::new(self.0.setup.nspace.clone(), Rank(rank));
        let info = vec![Info::new(attr::EVENT_AFFECTED_PROC, proc.clone())];
        self.raise(Status::EVENT_PROC_TERMINATED, Some(proc), info);
    }

    /// A process of this node terminated (its daemon saw it exit): tell every node.
    pub(crate) fn local_proc_died(&self, rank: u32) {
        let me = self.me();
        let others: Vec<u32> = {
            let state = lock(&self.0.state);
            (0..self.layout().nodes)
                .filter(|n| *n != me && !state.down.contains_key(n))
                .collect()
        };
        for n in others {
            self.send(n, Body::ProcDown { rank });
        }
        self.proc_down(rank);
    }

    /// Raise an event to this node's clients.
    pub(super) fn raise(&self, status: Status, source: Option<Proc>, info: Vec<Info>) {
        let Some(server) = lock(&self.0.server).upgrade() else {
            return;
        };
        self.spawn(async move {
            let _ = server
                .notify_event(status, source, DataRange::SESSION, info)
                .await;
        });
    }

    /// The nodes this one watches: its nearest live ancestor in the job tree, and its
    /// nearest live descendants (a child that is down is watched through its children).
    pub(super) fn watched(&self, state: &State) -> Vec<u32> {
        let tree = &self.0.setup.job_tree;
        let mut out = Vec::new();
        let mut up = tree.parent(self.me());
        while let Some(p) = up {
            if !state.down.contains_key(&p) {
                out.push(p);
                break;
            }
            up = tree.parent(p);
        }
        let mut below: Vec<u32> = tree.children(self.me()).to_vec();
        while let Some(c) = below.pop() {
            if state.down.contains_key(&c) {
                below.extend_from_slice(tree.children(c));
            } else {
                out.push(c);
            }
        }
        out.sort_unstable();
        out
    }

    /// Beat to the watched nodes; renew the link to a quiet one, declare a silent one down.
    pub(super) async fn heartbeat(self) {
        let l = self.0.setup.liveness.clone();
        loop {
            tokio::time::sleep(l.heartbeat).await;
            let t = now();
            let mut silent = Vec::new();
            let mut renew = Vec::new();
            let watched = {
                let mut state = lock(&self.0.state);
                let watched = self.watched(&state);
                for &n in &watched {
                    let heard = *state.heard.entry(n).or_insert(t);
                    let quiet = t.saturating_sub(heard);
                    let renewed = state.renewed.get(&n).copied().unwrap_or_default();
                    if quiet > l.suspect_after {
                        silent.push(n);
                    } else if quiet > l.reconnect_after
                        && t.saturating_sub(renewed) > l.reconnect_after
                    {
                        state.renewed.insert(n, t);
                        renew.push(n);
                    }
                }
                watched
            };
            for n in renew {
                self.note(format!("renew the link to {n}").as_bytes());
                self.link(n, Out::Reset);
            }
            for &n in &silent {
                self.node_down(n, true);
            }
            for n in watched {
                if !silent.contains(&n) {
                    self.send(n, Body::Heartbeat);
                }
            }
        }
    }
}
