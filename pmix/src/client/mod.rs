//! The client side: what an application or runtime uses to talk to its local PMIx server.
//!
//! [`Client`] is async (tokio); [`blocking::Client`] wraps it for plain threads, as C callers
//! expect. Both work against this crate's server and against OpenPMIx 4.2 servers: the client
//! speaks OpenPMIx's protocol and asks for the `hash` store.
//!
//! Gets follow the retrieval rules (`crate::retrieval`): values the client holds — its job's
//! information from the job-info reply, values it fetched before, its own puts — are answered
//! from its cache without a round trip; everything else goes to the server. Commits send only
//! the values put since the previous commit.

pub mod blocking;
mod connection;
mod events;

pub use connection::ClientConfig;
pub use events::{EventCompletion, EventHandler, EventNotice};

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::Error;
use crate::codec::BufferType;
use crate::codec::compress::decompress_string;
use crate::events::{Event, HandlerId, Registration};
use crate::model::{
    AllocDirective, App, ByteObject, DataRange, Info, Key, Kval, Nspace, PData, Proc, Query, Rank,
    Scope, Status, Value, attr,
};
use crate::query;
use crate::retrieval::{ClientCache, ClientStep, Directives, client_get};
use crate::server::jobinfo::realms_from_kvals;
use crate::store::JobRealms;
use crate::wire::op_reply::OpReply;
use crate::wire::ops::Op;
use crate::wire::{CommitBucket, Reply, Request};

use connection::Connection;
use events::Events;

/// The version this library reports (`PMIx_Get_version`).
pub const VERSION: &str = concat!(
    "pmix-rs ",
    env!("CARGO_PKG_VERSION"),
    " (PMIx Standard 5.0, wire-compatible with OpenPMIx 4.2)"
);

/// The result of a non-blocking call, already under way: await it for the outcome.
#[derive(Debug)]
pub struct Pending<T>(tokio::task::JoinHandle<Result<T, Status>>);

impl<T> std::future::Future for Pending<T> {
    type Output = Result<T, Status>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx).map(|joined| {
            // The task ends only by finishing or by its runtime shutting down.
            joined.unwrap_or(Err(Status::ERR_LOST_CONNECTION))
        })
    }
}

/// A connected PMIx client.
#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    me: Proc,
    conn: Connection,
    events: Events,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    cache: ClientCache,
    /// Values put and not yet committed, by scope.
    staged: Vec<(Scope, Kval)>,
    finalized: bool,
}

impl Client {
    /// `PMIx_Init` for a process launched by a PMIx server: read `PMIX_NAMESPACE`,
    /// `PMIX_RANK` and the server's address from the environment, connect, and fetch the job's
    /// information.
    pub async fn init() -> Result<Client, Error> {
        Client::init_with(&ClientConfig::from_env()?).await
    }

    /// `PMIx_Init` with an explicit configuration instead of the environment.
    pub async fn init_with(config: &ClientConfig) -> Result<Client, Error> {
        let events = Events::start(config.proc.clone());
        let conn = Connection::connect(config, events.sender()).await?;
        Client::start(conn, events, config.proc.clone()).await
    }

    /// `PMIx_Init` over a stream already connected to the server (any transport, e.g.
    /// [`crate::transport::memory`]).
    pub async fn init_over(
        stream: crate::transport::BoxStream,
        proc: Proc,
        buffer_type: BufferType,
    ) -> Result<Client, Error> {
        let events = Events::start(proc.clone());
        let conn = Connection::handshake(stream, &proc, buffer_type, events.sender()).await?;
        Client::start(conn, events, proc).await
    }

    async fn start(conn: Connection, events: Events, me: Proc) -> Result<Client, Error> {
        let client = Client {
            inner: Arc::new(Inner {
                me,
                conn,
                events,
                state: Mutex::new(State::default()),
            }),
        };
        client.fetch_job_info().await?;
        Ok(client)
    }

    async fn fetch_job_info(&self) -> Result<(), Error> {
        let reply = self.inner.conn.request(&Request::JobInfo).await?;
        let Reply::JobInfo { nspace, kvals } = reply else {
            return Err(Error::Status(
                Status::ERR_UNPACK_FAILURE,
                "unexpected job-info reply".into(),
            ));
        };
        let mut realms = JobRealms::new(nspace.clone());
        realms_from_kvals(&mut realms, &kvals, self.inner.conn.buffer_type())?;
        self.state().cache.realms.insert(nspace, realms);
        Ok(())
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state is plain data; a panic elsewhere cannot leave it half-updated.
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// This process's identifier.
    pub fn proc(&self) -> &Proc {
        &self.inner.me
    }

    /// `PMIx_Initialized`.
    pub fn initialized(&self) -> bool {
        !self.state().finalized
    }

    /// `PMIx_Get_version`.
    pub fn version() -> &'static str {
        VERSION
    }

    /// `PMIx_Get`: a value of `proc` (this process when `None`, rule G-01).
    pub async fn get(
        &self,
        proc: Option<&Proc>,
        key: &str,
        info: &[Info],
    ) -> Result<Value, Status> {
        let me = self.inner.me.clone();
        let target = crate::retrieval::get_target(proc, &me);
        if Key::new(key).is_err() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let d = Directives::from_info(info);
        let step = client_get(&self.state().cache, &me, &target, key, &d);
        let add_immediate = match step {
            ClientStep::Done(r) => return r.map(inflate),
            ClientStep::AskServer { add_immediate } => add_immediate,
        };
        let mut info = info.to_vec();
        if add_immediate && !d.immediate {
            info.push(Info::new(attr::IMMEDIATE, true));
        }
        let req = Request::Get {
            nspace: target.nspace.as_str().to_owned(),
            rank: target.rank,
            info,
            key: Some(key.to_owned()),
        };
        let reply = self
            .inner
            .conn
            .request(&req)
            .await
            .map_err(|e| e.status())?;
        let Reply::Get { status, data } = reply else {
            return Err(Status::ERR_UNPACK_FAILURE);
        };
        if status != Status::SUCCESS {
            return Err(status);
        }
        let mut state = self.state();
        let mut found = None;
        for d in data {
            if found.is_none() {
                found = d
                    .kvals
                    .iter()
                    .find(|k| k.key.as_str() == key)
                    .map(|k| k.value.clone());
            }
            state.cache.store(&d.proc, d.kvals);
        }
        found.map(inflate).ok_or(Status::ERR_NOT_FOUND)
    }

    /// `PMIx_Resolve_peers`: the processes of `nspace` on `node` (this node when `None`),
    /// from the job's `PMIX_LOCAL_PEERS` for that node; empty when the node hosts none.
    /// Every namespace at once (a NULL `nspace` in C) is
    /// [`Client::resolve_peers_of_every_job`].
    pub async fn resolve_peers(
        &self,
        node: Option<&str>,
        nspace: &Nspace,
    ) -> Result<Vec<Proc>, Status> {
        let job = Proc::new(nspace.clone(), Rank::WILDCARD);
        let info: Vec<Info> = node
            .map(|n| Info::new(attr::HOSTNAME, n.to_owned()))
            .into_iter()
            .collect();
        let peers = match self
            .get(Some(&job), attr::LOCAL_PEERS.wire_key(), &info)
            .await
        {
            Ok(Value::String(Some(s))) => s,
            Ok(_) => return Err(Status::ERR_TYPE_MISMATCH),
            Err(Status::ERR_NOT_FOUND) => return Ok(Vec::new()),
            Err(s) => return Err(s),
        };
        peers
            .split(',')
            .filter(|r| !r.is_empty())
            .map(|r| {
                let rank = r.trim().parse().map_err(|_| Status::ERR_BAD_PARAM)?;
                Ok(Proc::new(nspace.clone(), Rank(rank)))
            })
            .collect()
    }

    /// `PMIx_Resolve_peers` with a NULL namespace: the processes of every namespace on
    /// `node`, job by job: the active namespaces `PMIX_QUERY_NAMESPACES` lists, and those
    /// this client holds the information of (its own, those it spawned or connected to),
    /// which is all there is when the server cannot answer the query.
    pub async fn resolve_peers_of_every_job(
        &self,
        node: Option<&str>,
    ) -> Result<Vec<Proc>, Status> {
        let namespaces = Query {
            keys: vec![Some(attr::QUERY_NAMESPACES.wire_key().to_owned())],
            qualifiers: Vec::new(),
        };
        let listed = match self.query(&[namespaces]).await {
            Ok(answered) => answered
                .results
                .iter()
                .flat_map(query::answers_in)
                .find_map(|i| i.value.as_str().map(str::to_owned))
                .unwrap_or_default(),
            Err(s) => {
                tracing::debug!("no namespaces from the server ({s:?}): those known here");
                String::new()
            }
        };
        let mut names: std::collections::BTreeSet<Nspace> = listed
            .split(',')
            .filter(|n| !n.is_empty())
            .filter_map(|n| Nspace::new(n).ok())
            .collect();
        names.extend(self.state().cache.realms.keys().cloned());
        let mut out = Vec::new();
        for nspace in names {
            match self.resolve_peers(node, &nspace).await {
                Ok(procs) => out.extend(procs),
                // A namespace the server lists but holds no map of has no peers to give.
                Err(Status::ERR_NOT_FOUND) => {}
                Err(s) => return Err(s),
            }
        }
        Ok(out)
    }

    /// `PMIx_Resolve_nodes`: the comma-separated names of the nodes hosting `nspace`'s
    /// processes (the job's `PMIX_NODE_LIST`).
    pub async fn resolve_nodes(&self, nspace: &Nspace) -> Result<String, Status> {
        let job = Proc::new(nspace.clone(), Rank::WILDCARD);
        match self
            .get(Some(&job), attr::NODE_LIST.wire_key(), &[])
            .await?
        {
            Value::String(Some(s)) => Ok(s),
            _ => Err(Status::ERR_TYPE_MISMATCH),
        }
    }

    /// `PMIx_Spawn`: ask the host to start a job of `apps` with the job-level directives
    /// `job_info` (v5.0 §12.2.1); the new job's namespace. Its job information comes with the
    /// answer and is kept, so gets of it are answered locally. A job that cannot start fails
    /// with the standard's status (`PMIX_ERR_JOB_EXE_NOT_FOUND`, …).
    pub async fn spawn(&self, job_info: &[Info], apps: &[App]) -> Result<Nspace, Status> {
        if apps.is_empty() || apps.iter().any(|a| a.maxprocs <= 0) {
            return Err(Status::ERR_BAD_PARAM);
        }
        let req = Request::Op(Op::Spawn {
            job_info: job_info.to_vec(),
            apps: apps.to_vec(),
        });
        match self
            .inner
            .conn
            .request(&req)
            .await
            .map_err(|e| e.status())?
        {
            Reply::Op(OpReply::Spawn {
                status,
                nspace: Some(ns),
                job_info,
            }) if status == Status::SUCCESS => {
                let nspace = Nspace::new(ns).map_err(|_| Status::ERR_BAD_PARAM)?;
                if !job_info.is_empty() {
                    self.keep_job_info(&nspace, &job_info)?;
                }
                Ok(nspace)
            }
            Reply::Op(OpReply::Spawn { status, .. }) | Reply::Status(status) => {
                Err(if status == Status::SUCCESS {
                    Status::ERR_BAD_PARAM
                } else {
                    status
                })
            }
            _ => Err(Status::ERR_UNPACK_FAILURE),
        }
    }

    /// `PMIx_Spawn_nb`: start the spawn now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn spawn_nb(&self, job_info: &[Info], apps: &[App]) -> Pending<Nspace> {
        let (client, job_info, apps) = (self.clone(), job_info.to_vec(), apps.to_vec());
        Pending(tokio::spawn(
            async move { client.spawn(&job_info, &apps).await },
        ))
    }

    /// Keep another job's information (from a spawn or a connect) for local gets.
    fn keep_job_info(&self, nspace: &Nspace, kvals: &[Kval]) -> Result<(), Status> {
        let mut realms = JobRealms::new(nspace.clone());
        realms_from_kvals(&mut realms, kvals, self.inner.conn.buffer_type())
            .map_err(|e| e.status())?;
        self.state().cache.realms.insert(nspace.clone(), realms);
        Ok(())
    }

    /// `PMIx_Log`: log `data` (each info a channel, such as `PMIX_LOG_STDERR`, and its
    /// message) as `directives` say, through the server and its host (v5.0 §12.4.1). The
    /// request carries `PMIX_LOG_TIMESTAMP` when the directives give one.
    pub async fn log(&self, data: &[Info], directives: &[Info]) -> Result<(), Status> {
        if data.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let timestamp = directives
            .iter()
            .find(|i| i.key.as_str() == attr::LOG_TIMESTAMP.wire_key())
            .and_then(|i| i.value.to_i64())
            .unwrap_or(0);
        let req = Request::Op(Op::Log {
            timestamp: crate::model::Time(timestamp),
            data: data.to_vec(),
            directives: directives.to_vec(),
        });
        match self
            .inner
            .conn
            .request(&req)
            .await
            .map_err(|e| e.status())?
        {
            Reply::Op(OpReply::Status { status, .. }) | Reply::Status(status) => {
                if status == Status::SUCCESS {
                    Ok(())
                } else {
                    Err(status)
                }
            }
            _ => Err(Status::ERR_UNPACK_FAILURE),
        }
    }

    /// `PMIx_Log_nb`: start the log request now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn log_nb(&self, data: &[Info], directives: &[Info]) -> Pending<()> {
        let (client, data, directives) = (self.clone(), data.to_vec(), directives.to_vec());
        Pending(tokio::spawn(
            async move { client.log(&data, &directives).await },
        ))
    }

    /// `PMIx_Allocation_request`: ask the host for a new allocation, or to extend, release or
    /// reacquire one (v5.0 §13.1.1); what the host answered (`PMIX_ALLOC_ID`, …).
    pub async fn allocation_request(
        &self,
        directive: AllocDirective,
        info: &[Info],
    ) -> Result<Vec<Info>, Status> {
        self.infos_of(&Request::Op(Op::Alloc {
            directive,
            info: info.to_vec(),
        }))
        .await
    }

    /// `PMIx_Job_control`: ask the host to act on `targets` (none: this process's namespace)
    /// as `directives` say: signal, pause, resume, kill, terminate, cleanup, … (§13.2.1).
    pub async fn job_control(
        &self,
        targets: &[Proc],
        directives: &[Info],
    ) -> Result<Vec<Info>, Status> {
        self.infos_of(&Request::Op(Op::JobControl {
            targets: targets.to_vec(),
            directives: directives.to_vec(),
        }))
        .await
    }

    /// `PMIx_Process_monitor`: ask the host to watch what `monitor` names and raise `error`
    /// when it fails (§13.3.1). `PMIX_SEND_HEARTBEAT` is [`Client::heartbeat`].
    pub async fn process_monitor(
        &self,
        monitor: &Info,
        error: Status,
        directives: &[Info],
    ) -> Result<Vec<Info>, Status> {
        if monitor.key.as_str() == attr::SEND_HEARTBEAT.wire_key() {
            return self.heartbeat().await.map(|()| Vec::new());
        }
        self.infos_of(&Request::Op(Op::Monitor {
            monitor: monitor.clone(),
            error,
            directives: directives.to_vec(),
        }))
        .await
    }

    /// `PMIx_Heartbeat`: one heartbeat for a `PMIX_MONITOR_HEARTBEAT` monitor of this process
    /// (the standard's macro: `PMIx_Process_monitor_nb` with `PMIX_SEND_HEARTBEAT`). Sent
    /// one way, as OpenPMIx's clients do: an empty message under the heartbeat tag.
    pub async fn heartbeat(&self) -> Result<(), Status> {
        self.inner.conn.heartbeat().await.map_err(|e| e.status())
    }

    /// `PMIx_Allocation_request_nb` (see [`Client::get_nb`]).
    pub fn allocation_request_nb(
        &self,
        directive: AllocDirective,
        info: &[Info],
    ) -> Pending<Vec<Info>> {
        let (client, info) = (self.clone(), info.to_vec());
        Pending(tokio::spawn(async move {
            client.allocation_request(directive, &info).await
        }))
    }

    /// `PMIx_Job_control_nb` (see [`Client::get_nb`]).
    pub fn job_control_nb(&self, targets: &[Proc], directives: &[Info]) -> Pending<Vec<Info>> {
        let (client, targets, directives) = (self.clone(), targets.to_vec(), directives.to_vec());
        Pending(tokio::spawn(async move {
            client.job_control(&targets, &directives).await
        }))
    }

    /// `PMIx_Process_monitor_nb` (see [`Client::get_nb`]).
    pub fn process_monitor_nb(
        &self,
        monitor: &Info,
        error: Status,
        directives: &[Info],
    ) -> Pending<Vec<Info>> {
        let (client, monitor, directives) = (self.clone(), monitor.clone(), directives.to_vec());
        Pending(tokio::spawn(async move {
            client.process_monitor(&monitor, error, &directives).await
        }))
    }

    /// `PMIx_Get_credential`: a credential vouching for this process, and what comes with it
    /// (`PMIX_CRED_TYPE`, …) (v5.0 §16.1.1). This crate's server seals its own (see
    /// [`crate::server::credential`]).
    pub async fn get_credential(&self, info: &[Info]) -> Result<(ByteObject, Vec<Info>), Status> {
        let req = Request::Op(Op::GetCredential {
            info: info.to_vec(),
        });
        match self
            .inner
            .conn
            .request(&req)
            .await
            .map_err(|e| e.status())?
        {
            Reply::Op(OpReply::Credential {
                status,
                credential: Some(c),
                info,
            }) if status == Status::SUCCESS => Ok((c, info)),
            Reply::Op(OpReply::Credential { status, .. }) | Reply::Status(status) => {
                Err(if status == Status::SUCCESS {
                    Status::ERR_UNPACK_FAILURE
                } else {
                    status
                })
            }
            _ => Err(Status::ERR_UNPACK_FAILURE),
        }
    }

    /// `PMIx_Validate_credential`: whether `credential` is valid, and what it states (the
    /// user, group and process it vouches for) (§16.2.1). One that is not is
    /// `PMIX_ERR_INVALID_CRED`.
    pub async fn validate_credential(
        &self,
        credential: &[u8],
        directives: &[Info],
    ) -> Result<Vec<Info>, Status> {
        self.infos_of(&Request::Op(Op::ValidateCredential {
            credential: ByteObject(credential.to_vec()),
            directives: directives.to_vec(),
        }))
        .await
    }

    /// `PMIx_Get_credential_nb` (see [`Client::get_nb`]).
    pub fn get_credential_nb(&self, info: &[Info]) -> Pending<(ByteObject, Vec<Info>)> {
        let (client, info) = (self.clone(), info.to_vec());
        Pending(tokio::spawn(
            async move { client.get_credential(&info).await },
        ))
    }

    /// `PMIx_Validate_credential_nb` (see [`Client::get_nb`]).
    pub fn validate_credential_nb(
        &self,
        credential: &[u8],
        directives: &[Info],
    ) -> Pending<Vec<Info>> {
        let (client, credential, directives) =
            (self.clone(), credential.to_vec(), directives.to_vec());
        Pending(tokio::spawn(async move {
            client.validate_credential(&credential, &directives).await
        }))
    }

    /// A request answered by a status and infos.
    async fn infos_of(&self, req: &Request) -> Result<Vec<Info>, Status> {
        match self.inner.conn.request(req).await.map_err(|e| e.status())? {
            Reply::Op(OpReply::Infos { status, info, .. }) => {
                if status == Status::SUCCESS || status == Status::ERR_PARTIAL_SUCCESS {
                    Ok(info)
                } else {
                    Err(status)
                }
            }
            Reply::Status(s) if s != Status::SUCCESS => Err(s),
            _ => Err(Status::ERR_UNPACK_FAILURE),
        }
    }

    /// `PMIx_Connect`: connect this process with `procs` (v5.0 §12.3.1), a collective: it
    /// completes when every process of the set has called it. The job information of the
    /// other namespaces in the set comes back with the answer and is kept, so gets of it are
    /// answered locally.
    pub async fn connect(&self, procs: &[Proc], info: &[Info]) -> Result<(), Status> {
        let req = Request::Op(Op::Connect {
            procs: procs.to_vec(),
            info: info.to_vec(),
        });
        match self
            .inner
            .conn
            .request(&req)
            .await
            .map_err(|e| e.status())?
        {
            Reply::Op(OpReply::Connect { status, jobs }) if status == Status::SUCCESS => {
                for job in jobs {
                    if let Ok(nspace) = Nspace::new(&job.nspace) {
                        self.keep_job_info(&nspace, &job.kvals)?;
                    }
                }
                Ok(())
            }
            Reply::Op(OpReply::Connect { status, .. }) | Reply::Status(status) => Err(status),
            _ => Err(Status::ERR_UNPACK_FAILURE),
        }
    }

    /// `PMIx_Disconnect`: end the connection of `procs` made by [`Client::connect`]
    /// (§12.3.3), a collective as well. Processes never connected are
    /// `PMIX_ERR_INVALID_OPERATION`.
    pub async fn disconnect(&self, procs: &[Proc], info: &[Info]) -> Result<(), Status> {
        let req = Request::Op(Op::Disconnect {
            procs: procs.to_vec(),
            info: info.to_vec(),
        });
        match self
            .inner
            .conn
            .request(&req)
            .await
            .map_err(|e| e.status())?
        {
            Reply::Op(OpReply::Status { status, .. }) | Reply::Status(status) => {
                if status == Status::SUCCESS {
                    Ok(())
                } else {
                    Err(status)
                }
            }
            _ => Err(Status::ERR_UNPACK_FAILURE),
        }
    }

    /// `PMIx_Connect_nb`: start the connect now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn connect_nb(&self, procs: &[Proc], info: &[Info]) -> Pending<()> {
        let (client, procs, info) = (self.clone(), procs.to_vec(), info.to_vec());
        Pending(tokio::spawn(
            async move { client.connect(&procs, &info).await },
        ))
    }

    /// `PMIx_Disconnect_nb`: start the disconnect now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn disconnect_nb(&self, procs: &[Proc], info: &[Info]) -> Pending<()> {
        let (client, procs, info) = (self.clone(), procs.to_vec(), info.to_vec());
        Pending(tokio::spawn(async move {
            client.disconnect(&procs, &info).await
        }))
    }

    /// `PMIx_Query_info`: answer `queries` (v5.0 §7.1.2) with one `PMIX_QUERY_RESULTS` per
    /// query (see [`crate::query`]). Queries that pair `PMIX_PROCID` with `PMIX_NSPACE` or
    /// `PMIX_RANK` are refused here with `PMIX_ERR_BAD_PARAM`. The client and tool levels of
    /// attribute support are answered by this library; everything else goes to the server,
    /// which answers what it holds and asks its host for the rest. Answers are not cached, so
    /// every query is fresh, as `PMIX_QUERY_REFRESH_CACHE` asks.
    pub async fn query(&self, queries: &[Query]) -> Result<query::Answered, Status> {
        query::check(queries)?;
        let mut answers: Vec<Vec<Info>> = queries
            .iter()
            .map(|q| {
                if query::is_attribute_support(q) {
                    query::attribute_support(q, query::client_support)
                } else {
                    Vec::new()
                }
            })
            .collect();
        let (sent, forwarded): (Vec<usize>, Vec<Query>) = queries
            .iter()
            .enumerate()
            .filter_map(|(i, q)| query::for_server(q).map(|f| (i, f)))
            .unzip();
        let mut server_error = None;
        if !forwarded.is_empty() {
            let req = Request::Op(Op::Query {
                queries: forwarded.clone(),
            });
            let (status, flat) = match self.inner.conn.request(&req).await {
                Ok(Reply::Op(OpReply::Infos { status, info, .. })) => (status, info),
                Ok(Reply::Status(s)) => (s, Vec::new()),
                Ok(_) => (Status::ERR_UNPACK_FAILURE, Vec::new()),
                Err(e) => (e.status(), Vec::new()),
            };
            if status != Status::SUCCESS
                && status != Status::ERR_PARTIAL_SUCCESS
                && status != Status::ERR_NOT_FOUND
            {
                server_error = Some(status);
            }
            let theirs = if query::is_shaped(&flat) {
                flat.iter()
                    .map(|r| query::answers_in(r).into_iter().cloned().collect())
                    .collect()
            } else {
                query::group(&forwarded, flat)
            };
            for (i, got) in sent.into_iter().zip(theirs) {
                let mine = std::mem::take(&mut answers[i]);
                answers[i] = if query::is_attribute_support(&queries[i]) {
                    query::merge_support(mine, got)
                } else {
                    mine.into_iter().chain(got).collect()
                };
            }
        }
        match query::status_of(queries, &answers) {
            Status::ERR_NOT_FOUND => Err(server_error.unwrap_or(Status::ERR_NOT_FOUND)),
            status => Ok(query::Answered {
                status,
                results: query::results(queries, answers),
            }),
        }
    }

    /// `PMIx_Query_info_nb`: start the query now and return its eventual result (see
    /// [`Client::get_nb`]). Bad queries are refused before anything starts.
    pub fn query_nb(&self, queries: &[Query]) -> Result<Pending<query::Answered>, Status> {
        query::check(queries)?;
        let (client, queries) = (self.clone(), queries.to_vec());
        Ok(Pending(tokio::spawn(async move {
            client.query(&queries).await
        })))
    }

    /// `PMIx_Put`: stage a value for the next commit (rules P-01..P-03).
    pub fn put(&self, scope: Scope, key: &str, value: Value) -> Result<(), Status> {
        let key = crate::retrieval::check_put(scope, key)?;
        let kv = Kval { key, value };
        let mut state = self.state();
        let me = self.inner.me.clone();
        state.cache.store(&me, vec![kv.clone()]);
        if scope != Scope::INTERNAL {
            state.staged.retain(|(_, k)| k.key != kv.key);
            state.staged.push((scope, kv));
        }
        Ok(())
    }

    /// `PMIx_Store_internal`: cache a value for this process only (rule P-08).
    pub fn store_internal(&self, proc: &Proc, key: &str, value: Value) -> Result<(), Status> {
        let key = Key::new(key).map_err(|_| Status::ERR_BAD_PARAM)?;
        self.state().cache.store(proc, vec![Kval { key, value }]);
        Ok(())
    }

    /// `PMIx_Commit`: send the values put since the last commit.
    pub async fn commit(&self) -> Result<(), Status> {
        let staged = std::mem::take(&mut self.state().staged);
        if staged.is_empty() {
            return Ok(());
        }
        let mut local = Vec::new();
        let mut remote = Vec::new();
        for (scope, kv) in staged {
            if scope != Scope::REMOTE {
                local.push(kv.clone());
            }
            if scope != Scope::LOCAL {
                remote.push(kv);
            }
        }
        let mut buckets = Vec::new();
        if !local.is_empty() {
            buckets.push(CommitBucket {
                scope: Scope::LOCAL,
                kvals: local,
            });
        }
        if !remote.is_empty() {
            buckets.push(CommitBucket {
                scope: Scope::REMOTE,
                kvals: remote,
            });
        }
        self.status_of(&Request::Commit { buckets }).await
    }

    /// `PMIx_Fence` over `procs` (this process's whole namespace when empty).
    pub async fn fence(&self, procs: &[Proc], info: &[Info]) -> Result<(), Status> {
        let procs = if procs.is_empty() {
            vec![Proc::new(self.inner.me.nspace.clone(), Rank::WILDCARD)]
        } else {
            procs.to_vec()
        };
        self.status_of(&Request::Fence {
            procs,
            info: info.to_vec(),
        })
        .await
    }

    /// `PMIx_Publish`.
    pub async fn publish(&self, info: &[Info]) -> Result<(), Status> {
        self.status_of(&Request::Publish {
            uid: self.inner.conn.uid(),
            info: info.to_vec(),
        })
        .await
    }

    /// `PMIx_Lookup`: the published data of `keys`. When only some keys are published the
    /// result holds those (v5.0 §9.6's `PMIX_ERR_PARTIAL_SUCCESS`; see
    /// [`PData::lookup_status`]); an OpenPMIx 4.2 server reports a partial success without
    /// its data, which comes back as `Err(PMIX_ERR_PARTIAL_SUCCESS)`.
    pub async fn lookup(&self, keys: &[&str], info: &[Info]) -> Result<Vec<PData>, Status> {
        let req = Request::Lookup {
            uid: self.inner.conn.uid(),
            keys: keys.iter().map(|k| (*k).to_owned()).collect(),
            info: info.to_vec(),
        };
        match self
            .inner
            .conn
            .request(&req)
            .await
            .map_err(|e| e.status())?
        {
            Reply::Lookup { status, data }
                if status == Status::SUCCESS
                    || (status == Status::ERR_PARTIAL_SUCCESS && !data.is_empty()) =>
            {
                Ok(data)
            }
            Reply::Lookup { status, .. } | Reply::Status(status) => Err(status),
            _ => Err(Status::ERR_UNPACK_FAILURE),
        }
    }

    /// `PMIx_Unpublish`.
    pub async fn unpublish(&self, keys: &[&str], info: &[Info]) -> Result<(), Status> {
        self.status_of(&Request::Unpublish {
            uid: self.inner.conn.uid(),
            keys: keys.iter().map(|k| (*k).to_owned()).collect(),
            info: info.to_vec(),
        })
        .await
    }

    /// `PMIx_Abort`: ask the host to abort `procs` (this process's namespace when empty).
    pub async fn abort(&self, status: Status, message: &str, procs: &[Proc]) -> Result<(), Status> {
        self.status_of(&Request::Abort {
            status,
            message: Some(message.to_owned()),
            procs: procs.to_vec(),
        })
        .await
    }

    /// `PMIx_Get_nb`: start the get now, on the client's runtime, and return its eventual
    /// result. The request is sent whether or not the result is awaited; dropping the
    /// [`Pending`] only discards the answer. Must be called within a tokio runtime.
    pub fn get_nb(&self, proc: Option<&Proc>, key: &str, info: &[Info]) -> Pending<Value> {
        let (client, proc, key, info) =
            (self.clone(), proc.cloned(), key.to_owned(), info.to_vec());
        Pending(tokio::spawn(async move {
            client.get(proc.as_ref(), &key, &info).await
        }))
    }

    /// `PMIx_Fence_nb`: start the fence now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn fence_nb(&self, procs: &[Proc], info: &[Info]) -> Pending<()> {
        let (client, procs, info) = (self.clone(), procs.to_vec(), info.to_vec());
        Pending(tokio::spawn(
            async move { client.fence(&procs, &info).await },
        ))
    }

    /// `PMIx_Publish_nb`: start the publish now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn publish_nb(&self, info: &[Info]) -> Pending<()> {
        let (client, info) = (self.clone(), info.to_vec());
        Pending(tokio::spawn(async move { client.publish(&info).await }))
    }

    /// `PMIx_Lookup_nb`: start the lookup now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn lookup_nb(&self, keys: &[&str], info: &[Info]) -> Pending<Vec<PData>> {
        let keys: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
        let (client, info) = (self.clone(), info.to_vec());
        Pending(tokio::spawn(async move {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            client.lookup(&keys, &info).await
        }))
    }

    /// `PMIx_Unpublish_nb`: start the unpublish now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn unpublish_nb(&self, keys: &[&str], info: &[Info]) -> Pending<()> {
        let keys: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
        let (client, info) = (self.clone(), info.to_vec());
        Pending(tokio::spawn(async move {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            client.unpublish(&keys, &info).await
        }))
    }

    /// `PMIx_Register_event_handler`: call `handler` for events of `codes` (every code when
    /// empty: a default handler), placed and filtered as `info` asks (see [`crate::events`]).
    /// The server is told, so that events of other processes reach this one.
    ///
    /// The handler is in place before the server is asked, so an event the server replays
    /// from its cache right after accepting reaches it; when the server refuses, the handler
    /// is removed again and never called.
    pub async fn register_event_handler<F>(
        &self,
        codes: &[Status],
        info: &[Info],
        handler: F,
    ) -> Result<HandlerId, Status>
    where
        F: Fn(EventNotice, EventCompletion) + Send + Sync + 'static,
    {
        let reg = Registration::new(codes, info)?;
        let id = self.inner.events.register(reg, Arc::new(handler))?;
        let req = Request::RegisterEvents {
            codes: codes.to_vec(),
            info: info.to_vec(),
        };
        if let Err(s) = self.status_of(&req).await {
            let _ = self.inner.events.deregister(id);
            return Err(s);
        }
        Ok(id)
    }

    /// `PMIx_Deregister_event_handler`: the handler is not called again; an identifier this
    /// process does not hold is `PMIX_ERR_BAD_PARAM` (§10.1.7).
    pub async fn deregister_event_handler(&self, id: HandlerId) -> Result<(), Status> {
        let reg = self.inner.events.deregister(id)?;
        // The server answers nothing (as OpenPMIx 4.2 servers do not): a lost connection
        // only means there is nothing left to tell.
        let _ = self
            .inner
            .conn
            .send(&Request::Op(Op::DeregisterEvents { codes: reg.codes }))
            .await;
        Ok(())
    }

    /// `PMIx_Notify_event`: raise `status` to the processes of `range` (§10.1.8), this
    /// process's own handlers included when the range holds it. `source` defaults to this
    /// process. `PMIX_RANGE_PROC_LOCAL` stays in the process; every other range also goes to
    /// the server, which passes it on.
    pub async fn notify_event(
        &self,
        status: Status,
        source: Option<&Proc>,
        range: DataRange,
        info: &[Info],
    ) -> Result<(), Status> {
        let event = Event {
            status,
            source: source.cloned().unwrap_or_else(|| self.inner.me.clone()),
            range,
            info: info.to_vec(),
        };
        event.check()?;
        if range != DataRange::PROC_LOCAL {
            self.status_of(&Request::Notify {
                status,
                range,
                info: info.to_vec(),
            })
            .await?;
        }
        if range == DataRange::PROC_LOCAL || event.reaches(&self.inner.me) {
            self.inner.events.deliver(event);
        }
        Ok(())
    }

    /// `PMIx_Progress`: the connection progresses in its own task; nothing to do.
    pub fn progress(&self) {}

    /// `PMIx_Finalize`: tell the server, then close the connection.
    pub async fn finalize(&self) -> Result<(), Status> {
        if self.state().finalized {
            return Ok(());
        }
        let r = self.status_of(&Request::Finalize).await;
        self.state().finalized = true;
        self.inner.conn.close();
        self.inner.events.clear();
        r
    }

    async fn status_of(&self, req: &Request) -> Result<(), Status> {
        match self.inner.conn.request(req).await.map_err(|e| e.status())? {
            Reply::Status(s) if s == Status::SUCCESS => Ok(()),
            Reply::Status(s) => Err(s),
            _ => Err(Status::ERR_UNPACK_FAILURE),
        }
    }

    /// The namespace's realms as received at init (for inspection and tests).
    pub fn job_realms(&self) -> Option<JobRealms> {
        self.state()
            .cache
            .realms(self.inner.me.nspace.as_str())
            .cloned()
    }

    /// The buffer type the connection uses.
    pub fn buffer_type(&self) -> BufferType {
        self.inner.conn.buffer_type()
    }

    /// This process's namespace.
    pub fn nspace(&self) -> &Nspace {
        &self.inner.me.nspace
    }
}

/// OpenPMIx clients compress long strings on put; hand them back as strings.
fn inflate(v: Value) -> Value {
    match v {
        Value::CompressedString(bo) => decompress_string(&bo.0)
            .map(|s| Value::String(Some(s)))
            .unwrap_or(Value::CompressedString(bo)),
        other => other,
    }
}
