//! Requests between daemons: direct modex, the data server (publish, lookup, unpublish), and
//! the two-phase launch of spawned jobs.

use super::*;

/// What a daemon does as the data server.
#[derive(Clone, Copy, Debug)]
pub(super) enum DataOp {
    Publish,
    Lookup,
    Unpublish,
}

/// `PMIX_RANGE_LOCAL` for the data server: two ranks of the job on one node.
pub(super) struct SameNode(pub(super) Layout);

impl Topology for SameNode {
    fn same_node(&self, a: &Proc, b: &Proc) -> bool {
        a.nspace == b.nspace && self.0.node_of_rank(a.rank.0) == self.0.node_of_rank(b.rank.0)
    }
}

impl Daemon {
    /// Ask node `to` something (`body` given the request's number) and wait for its reply;
    /// a node that is down, or goes down first, is `PMIX_ERR_LOST_CONNECTION`.
    pub(super) async fn call(
        &self,
        to: u32,
        body: impl FnOnce(u64) -> Body,
    ) -> Result<Vec<u8>, Status> {
        self.request(to, body)?.await.unwrap_or(Err(LOST))
    }

    /// Send a request to node `to` and return where its reply will arrive. Until the reply
    /// comes, or `to` is declared down, the request goes again every `reconnect_after` on a
    /// new connection: a partition too short to declare anyone down still loses what it
    /// carried, and turmoil never sends it again. The server answers a repeat with the reply
    /// it already gave, so nothing is served twice.
    pub(super) fn request(
        &self,
        to: u32,
        body: impl FnOnce(u64) -> Body,
    ) -> Result<Awaited, Status> {
        let (tx, rx) = oneshot::channel();
        let key = {
            let mut state = lock(&self.0.state);
            if state.down.contains_key(&to) {
                return Err(LOST);
            }
            state.next_call += 1;
            let key = state.next_call;
            state.calls.insert(key, (to, tx));
            key
        };
        let body = body(key);
        self.send(to, body.clone());
        let d = self.clone();
        self.spawn(async move { d.send_again(to, key, body).await });
        Ok(rx)
    }

    /// Send request `key` to `to` again while it stays unanswered.
    async fn send_again(&self, to: u32, key: u64, body: Body) {
        let every = self.0.setup.liveness.reconnect_after;
        if every.is_zero() {
            return;
        }
        loop {
            tokio::time::sleep(every).await;
            if !lock(&self.0.state).calls.contains_key(&key) {
                return;
            }
            self.note(format!("request {key} to {to} again").as_bytes());
            self.link(to, Out::Reset);
            self.send(to, body.clone());
        }
    }

    /// Answer request `key` of node `from`, and keep the answer for a repeat of the request.
    pub(super) fn reply(&self, from: u32, key: u64, status: i32, data: Vec<u8>) {
        if let Some(slot) = lock(&self.0.state).served.get_mut(&(from, key)) {
            *slot = Some((status, data.clone()));
        }
        self.send(from, Body::Reply { key, status, data });
    }

    /// As the data server: serve request `key` of node `from` in a task of its own (a lookup
    /// with `PMIX_WAIT` waits).
    pub(super) fn serve(&self, key: u64, from: u32, rank: u32, op: DataOp, data: Vec<u8>) {
        self.note(format!("{op:?} {key} for rank {rank} of {from}").as_bytes());
        let d = self.clone();
        self.spawn(async move { d.serve_data(key, from, rank, op, data).await });
    }

    /// As the data server: publish, look up or unpublish for rank `rank` of node `from`.
    pub(super) async fn serve_data(
        &self,
        key: u64,
        from: u32,
        rank: u32,
        op: DataOp,
        data: Vec<u8>,
    ) {
        let proc = Proc::new(self.0.setup.nspace.clone(), Rank(rank));
        let board = &self.0.board;
        let mut b = DataBuffer::load(data, BufferType::NonDescribed);
        let result = match op {
            DataOp::Publish => match b.unpack::<Info>(usize::MAX) {
                Ok(info) => board.publish(&proc, &info).map(|()| Vec::new()),
                Err(_) => Err(Status::ERR_UNPACK_FAILURE),
            },
            DataOp::Lookup | DataOp::Unpublish => {
                let keys = b.unpack::<String>(usize::MAX);
                let info = b.unpack::<Info>(usize::MAX);
                match (keys, info, op) {
                    (Ok(keys), Ok(info), DataOp::Lookup) => {
                        let topology = SameNode(self.layout().clone());
                        match board.lookup(&proc, &keys, &info, &topology).await {
                            Ok(found) => {
                                let mut out = DataBuffer::new();
                                out.pack(&found)
                                    .map(|()| out.unload())
                                    .map_err(|_| Status::ERR_PACK_FAILURE)
                            }
                            Err(s) => Err(s),
                        }
                    }
                    (Ok(keys), Ok(info), _) => {
                        board.unpublish(&proc, &keys, &info);
                        Ok(Vec::new())
                    }
                    _ => Err(Status::ERR_UNPACK_FAILURE),
                }
            }
        };
        let (status, data) = match result {
            Ok(d) => (0, d),
            Err(s) => (s.0, Vec::new()),
        };
        self.reply(from, key, status, data);
    }

    /// Start this node's processes of a spawned job, and answer when they run.
    pub(super) async fn serve_launch(&self, key: u64, from: u32, data: Vec<u8>) {
        let nodes = self.layout().nodes;
        let launch = unpack_launch(data).filter(|(_, _, p)| p.iter().all(|n| *n < nodes));
        let result = match launch {
            Some((nspace, parent, placement)) => {
                let ranks: Vec<u32> = (0..)
                    .zip(&placement)
                    .filter(|(_, n)| **n == self.me())
                    .map(|(r, _)| r)
                    .collect();
                {
                    let mut state = lock(&self.0.state);
                    if state.halted.contains(&nspace) {
                        drop(state);
                        let status = Status::ERR_JOB_FAILED_TO_LAUNCH.0;
                        self.reply(from, key, status, Vec::new());
                        return;
                    }
                    state.jobs.insert(nspace.clone(), placement.clone());
                    state.registered.insert(nspace.clone());
                }
                let (done, answer) = oneshot::channel();
                let order = Launch::Start {
                    nspace,
                    parent,
                    placement,
                    ranks,
                    done,
                };
                let sent = lock(&self.0.launcher).as_ref().map(|l| l.send(order));
                match sent {
                    Some(Ok(())) => answer
                        .await
                        .unwrap_or(Err(Status::ERR_JOB_FAILED_TO_LAUNCH)),
                    _ => Err(Status::ERR_JOB_FAILED_TO_LAUNCH),
                }
            }
            None => Err(Status::ERR_UNPACK_FAILURE),
        };
        let status = result.err().map_or(0, |s| s.0);
        self.reply(from, key, status, Vec::new());
    }

    pub(super) fn halt(&self, nspace: &Nspace) {
        lock(&self.0.state).halted.insert(nspace.clone());
        if let Some(l) = lock(&self.0.launcher).as_ref() {
            let _ = l.send(Launch::Halt(nspace.clone()));
        }
    }

    /// Answer another node's direct-modex request from this node's server (which waits for
    /// the rank's commit if it has not come yet).
    pub(super) async fn serve_fetch(&self, key: u64, from: u32, rank: u32) {
        let proc = Proc::new(self.0.setup.nspace.clone(), Rank(rank));
        let server = lock(&self.0.server).upgrade();
        let result = match server {
            Some(s) => s
                .dmodex_request(proc, Vec::new())
                .await
                .map_err(Status::from),
            None => Err(Status::ERR_INIT),
        };
        let (status, data) = match result {
            Ok(d) => (0, d),
            Err(s) => (s.0, Vec::new()),
        };
        self.reply(from, key, status, data);
    }

    /// Deliver an event another node raised to this node's processes in its range.
    pub(super) async fn serve_event(&self, key: u64, from: u32, status: Status, data: Vec<u8>) {
        let server = lock(&self.0.server).upgrade();
        let result = match (unpack_event(&data), server) {
            (None, _) => Err(Status::ERR_UNPACK_FAILURE),
            (Some(_), None) => Err(Status::ERR_INIT),
            (Some((source, range, info)), Some(s)) => {
                (s.notify_event(status, Some(source), range, info).await).map_err(Status::from)
            }
        };
        self.reply(from, key, result.err().map_or(0, |s| s.0), Vec::new());
    }

    /// Register with this node's server the spawned jobs among `procs` it does not hold and
    /// this node knows (it spawned them), with no local processes: its clients can then read
    /// their job information. A job spawned elsewhere and run elsewhere stays unknown here.
    pub(super) async fn share_jobs(&self, procs: &[Proc]) {
        let me = self.me();
        let wanted: Vec<(Nspace, Vec<u32>, Proc)> = {
            let mut state = lock(&self.0.state);
            let names: BTreeSet<Nspace> = (procs.iter())
                .map(|p| p.nspace.clone())
                .filter(|n| *n != self.0.setup.nspace && !state.registered.contains(n))
                .collect();
            let mut wanted = Vec::new();
            for n in names {
                if let (Some(placement), Some(parent)) = (state.jobs.get(&n), state.parents.get(&n))
                {
                    wanted.push((n.clone(), placement.clone(), parent.clone()));
                    state.registered.insert(n);
                }
            }
            wanted
        };
        let Some(server) = lock(&self.0.server).upgrade() else {
            return;
        };
        for (nspace, placement, parent) in wanted {
            let mut nodes = placement.clone();
            nodes.sort_unstable();
            nodes.dedup();
            let size = u32::try_from(placement.len()).unwrap_or(u32::MAX);
            let count = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
            let info = crate::node::job_info(me, size, count, &[], Some(&parent));
            self.note(format!("register {} for its job information", nspace.as_str()).as_bytes());
            if let Err(s) = server.register_nspace(nspace, info).await {
                self.note(format!("register failed: {s:?}").as_bytes());
            }
        }
    }
}
