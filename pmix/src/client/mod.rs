//! The client side: what an application or runtime uses to talk to its local PMIx server.
//!
//! [`Client`] is async (tokio); [`blocking::Client`] wraps it for plain threads, as C callers
//! expect. Both work against this crate's server and against OpenPMIx 4.2 servers: the client
//! speaks OpenPMIx's protocol and asks for the `hash` store.
//!
//! The client's state and rules live in its sans-IO core ([`core::ClientCore`]); `Client`
//! drives it over a connection. Gets follow the retrieval rules (`crate::retrieval`): values
//! the client holds — its job's information from the job-info reply, values it fetched
//! before, its own puts — are answered from its cache without a round trip; everything else
//! goes to the server. Commits send only the values put since the previous commit. Spawn,
//! connect, query, logging, job management and credentials are in `ops.rs`.

pub mod blocking;
mod blocking_io;
mod connection;
pub mod core;
mod events;
mod fabric;
mod groups;
mod iof;
mod ops;
pub mod tool;
#[cfg(feature = "topology")]
mod topology;

pub use groups::{GroupAnswer, GroupConstructed};

pub use connection::ClientConfig;
pub use events::{EventCompletion, EventHandler, EventNotice, IofHandler, IofOutput};

#[cfg(feature = "topology")]
use std::sync::Mutex;
use std::sync::{Arc, MutexGuard};

use crate::Error;
use crate::codec::BufferType;
use crate::events::HandlerId;
use crate::model::attr::Attr;
use crate::model::value::FromValue;
use crate::model::{
    DataRange, Info, Nspace, PData, Proc, Query, Rank, Scope, Status, Text, Value, attr,
};
use crate::query;
use crate::store::JobRealms;
use crate::wire::{Reply, Request};

use self::core::{ClientCore, GetStart};
use connection::Connection;
use events::{EventQueue, Events};

/// The version this library reports (`PMIx_Get_version`): the standard it implements, the
/// OpenPMIx releases whose C API (`libpmix.so.2`) and wire it is compatible with. (Its
/// handshake says `4.2.2`, the protocol level it speaks; the layouts later releases changed
/// are read and written by the peer's release, `wire::version`.)
pub const VERSION: &str = concat!(
    "pmix-rs ",
    env!("CARGO_PKG_VERSION"),
    " (PMIx Standard 5.0, C API and wire of OpenPMIx 4.2 to 6.1)"
);

/// Whether `key` is one of the programming-model attributes `PMIx_Init` takes (v5.0
/// §4.3.2.2), which a `PMIX_MODEL_DECLARED` carries ([`Client::declare_model`]).
fn is_model_attribute(key: &str) -> bool {
    [
        attr::PROGRAMMING_MODEL.wire_key(),
        attr::MODEL_LIBRARY_NAME.wire_key(),
        attr::MODEL_LIBRARY_VERSION.wire_key(),
        attr::THREADING_MODEL.wire_key(),
        attr::MODEL_NUM_THREADS.wire_key(),
        attr::MODEL_NUM_CPUS.wire_key(),
        attr::MODEL_CPU_TYPE.wire_key(),
        attr::MODEL_AFFINITY_POLICY.wire_key(),
    ]
    .contains(&key)
}

/// The result of a non-blocking call, already under way: await it for the outcome.
#[derive(Debug)]
pub struct Pending<T>(tokio::task::JoinHandle<Result<T, Error>>);

impl<T> std::future::Future for Pending<T> {
    type Output = Result<T, Error>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx).map(|joined| {
            // The task ends only by finishing or by its runtime shutting down.
            joined.unwrap_or(Err(Status::ERR_LOST_CONNECTION.into()))
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
    /// The runtime the client was made in, where the `_nb` calls run: they may be called
    /// from any thread, in a runtime or not.
    runtime: tokio::runtime::Handle,
    /// The machine's topology, once loaded (`PMIx_Load_topology`).
    #[cfg(feature = "topology")]
    machine: Mutex<Option<Arc<crate::topology::Machine>>>,
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
        let (queue, rx) = events::queue();
        let conn = Connection::connect(config, queue.clone()).await?;
        Client::start(conn, (queue, rx), config.proc.clone()).await
    }

    /// `PMIx_Init` over a stream already connected to the server (any transport, e.g.
    /// [`crate::transport::memory`]).
    pub async fn init_over(
        stream: crate::transport::BoxStream,
        proc: Proc,
        buffer_type: BufferType,
    ) -> Result<Client, Error> {
        Client::init_over_as(stream, proc, buffer_type, crate::transport::uid_gid()).await
    }

    /// [`Client::init_over`] for a process that runs as the user and group `ids`, which a
    /// transport without a kernel (in memory) cannot tell: what the client states in its
    /// handshake, which the server checks against the credentials the transport reports.
    pub async fn init_over_as(
        stream: crate::transport::BoxStream,
        proc: Proc,
        buffer_type: BufferType,
        ids: (u32, u32),
    ) -> Result<Client, Error> {
        let (queue, rx) = events::queue();
        let conn = Connection::handshake(stream, &proc, buffer_type, ids, queue.clone()).await?;
        Client::start(conn, (queue, rx), proc).await
    }

    /// `PMIx_Init` for the blocking client: its calls do their own I/O on the calling thread
    /// (`blocking_io.rs`).
    pub(crate) async fn init_blocking_io(config: &ClientConfig) -> Result<Client, Error> {
        let (queue, rx) = events::queue();
        let conn = Connection::connect_blocking(config, queue.clone())?;
        Client::start(conn, (queue, rx), config.proc.clone()).await
    }

    /// A tool's connection to the server at `uri` (see [`tool`]): the client, and the
    /// server's identifier. A tool has no job of its own to fetch information for.
    pub(crate) async fn init_tool_blocking_io(
        uri: &str,
        version: Option<crate::wire::PeerVersion>,
        proc: Option<&Proc>,
        buffer_type: BufferType,
    ) -> Result<(Client, Proc), Error> {
        let (queue, rx) = events::queue();
        let (conn, me, server) =
            Connection::connect_tool_blocking(uri, version, proc, buffer_type, queue.clone())?;
        Ok((Client::started(conn, (queue, rx), me), server))
    }

    async fn start(conn: Connection, queue: EventQueue, me: Proc) -> Result<Client, Error> {
        let client = Client::started(conn, queue, me);
        client.fetch_job_info().await?;
        Ok(client)
    }

    /// The client over a connection that completed its handshake.
    fn started(conn: Connection, queue: EventQueue, me: Proc) -> Client {
        let events = Events::start(conn.shared_core(), queue);
        Client {
            inner: Arc::new(Inner {
                me,
                conn,
                events,
                runtime: tokio::runtime::Handle::current(),
                #[cfg(feature = "topology")]
                machine: Mutex::new(None),
            }),
        }
    }

    async fn fetch_job_info(&self) -> Result<(), Error> {
        let reply = self.inner.conn.request(&Request::JobInfo).await?;
        self.state().job_info_received(reply)
    }

    /// Run `call` on the client's runtime: the task of a non-blocking call.
    fn run_nb<T, F>(&self, call: F) -> tokio::task::JoinHandle<Result<T, Error>>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T, Error>> + Send + 'static,
    {
        if self.inner.conn.is_blocking() {
            // Its I/O blocks the thread it runs on: not one of the runtime's workers.
            let runtime = self.inner.runtime.clone();
            return self
                .inner
                .runtime
                .spawn_blocking(move || runtime.block_on(call));
        }
        self.inner.runtime.spawn(call)
    }

    /// The client's core: its state and the standard's client-side rules.
    fn state(&self) -> MutexGuard<'_, ClientCore> {
        self.inner.conn.core()
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
    pub async fn get(&self, proc: Option<&Proc>, key: &str, info: &[Info]) -> Result<Value, Error> {
        let target = crate::retrieval::get_target(proc, &self.inner.me);
        let req = match self.state().get_start(&target, key, info) {
            GetStart::Done(r) => return Ok(r?),
            GetStart::Ask(req) => req,
        };
        let reply = (self.inner.conn.request(&req).await).map_err(|e| e.status());
        Ok(self.state().get_finish(key, info, reply)?)
    }

    /// `PMIx_Get` of a standard attribute, in the attribute's declared type:
    /// `get_attr(Some(&job), attr::JOB_SIZE, &[])` is a `u32`. A value of another type is
    /// `PMIX_ERR_TYPE_MISMATCH`.
    pub async fn get_attr<T: FromValue>(
        &self,
        proc: Option<&Proc>,
        attr: Attr<T>,
        info: &[Info],
    ) -> Result<T, Error> {
        let value = self.get(proc, attr.wire_key(), info).await?;
        T::from_value(&value).ok_or_else(|| Error::TypeMismatch {
            expected: std::any::type_name::<T>().to_owned(),
            found: crate::model::strings::data_type_string(value.data_type()).to_owned(),
        })
    }

    /// `PMIx_Resolve_peers`: the processes of `nspace` on `node` (this node when `None`),
    /// from the job's `PMIX_LOCAL_PEERS` for that node; empty when the node hosts none.
    /// Every namespace at once (a NULL `nspace` in C) is
    /// [`Client::resolve_peers_of_every_job`].
    pub async fn resolve_peers(
        &self,
        node: Option<&str>,
        nspace: &Nspace,
    ) -> Result<Vec<Proc>, Error> {
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
            Ok(_) => return Err(Status::ERR_TYPE_MISMATCH.into()),
            Err(e) if e.status() == Status::ERR_NOT_FOUND => return Ok(Vec::new()),
            Err(s) => return Err(s),
        };
        peers
            .to_utf8()?
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
    pub async fn resolve_peers_of_every_job(&self, node: Option<&str>) -> Result<Vec<Proc>, Error> {
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
                Err(e) if e.status() == Status::ERR_NOT_FOUND => {}
                Err(s) => return Err(s),
            }
        }
        Ok(out)
    }

    /// `PMIx_Resolve_nodes`: the comma-separated names of the nodes hosting `nspace`'s
    /// processes (the job's `PMIX_NODE_LIST`), as bytes: a host name need not be UTF-8.
    pub async fn resolve_nodes(&self, nspace: &Nspace) -> Result<Text, Error> {
        if nspace.as_str().is_empty() {
            return self.resolve_all_nodes().await;
        }
        let job = Proc::new(nspace.clone(), Rank::WILDCARD);
        match self
            .get(Some(&job), attr::NODE_LIST.wire_key(), &[])
            .await?
        {
            Value::String(Some(s)) => Ok(s),
            _ => Err(Status::ERR_TYPE_MISMATCH.into()),
        }
    }

    /// `PMIx_Resolve_nodes` of an empty namespace: the nodes of every namespace this client
    /// knows, each once, in the order first met. The standard is silent; OpenPMIx's clients
    /// (5.0, 6.1) answer so, and 6.1's `resolve` example asks before any spawn.
    async fn resolve_all_nodes(&self) -> Result<Text, Error> {
        let known: Vec<Nspace> = self.state().cache.realms.keys().cloned().collect();
        let mut nodes: Vec<&[u8]> = Vec::new();
        let mut lists = Vec::new();
        for nspace in known {
            let job = Proc::new(nspace, Rank::WILDCARD);
            if let Ok(Value::String(Some(list))) =
                self.get(Some(&job), attr::NODE_LIST.wire_key(), &[]).await
            {
                lists.push(list);
            }
        }
        for node in lists
            .iter()
            .flat_map(|l| l.as_bytes().split(|&b| b == b','))
        {
            if !node.is_empty() && !nodes.contains(&node) {
                nodes.push(node);
            }
        }
        Ok(Text::from(nodes.join(&b',')))
    }

    /// `PMIx_Put`: stage a value for the next commit (rules P-01..P-03).
    pub fn put(&self, scope: Scope, key: &str, value: Value) -> Result<(), Error> {
        Ok(self.state().put(scope, key, value)?)
    }

    /// `PMIx_Store_internal`: cache a value for this process only (rule P-08).
    pub fn store_internal(&self, proc: &Proc, key: &str, value: Value) -> Result<(), Error> {
        Ok(self.state().store_internal(proc, key, value)?)
    }

    /// `PMIx_Commit`: send the values put since the last commit.
    pub async fn commit(&self) -> Result<(), Error> {
        let commit = self.state().take_commit();
        match commit {
            Some(req) => self.status_of(&req).await,
            None => Ok(()),
        }
    }

    /// `PMIx_Fence` over `procs` (this process's whole namespace when empty).
    pub async fn fence(&self, procs: &[Proc], info: &[Info]) -> Result<(), Error> {
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
    pub async fn publish(&self, info: &[Info]) -> Result<(), Error> {
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
    pub async fn lookup(&self, keys: &[&str], info: &[Info]) -> Result<Vec<PData>, Error> {
        let req = Request::Lookup {
            uid: self.inner.conn.uid(),
            keys: keys.iter().map(|k| (*k).to_owned()).collect(),
            info: info.to_vec(),
        };
        match self.inner.conn.request(&req).await? {
            Reply::Lookup { status, data }
                if status == Status::SUCCESS
                    || (status == Status::ERR_PARTIAL_SUCCESS && !data.is_empty()) =>
            {
                Ok(data)
            }
            Reply::Lookup { status, .. } | Reply::Status(status) => Err(status.into()),
            _ => Err(Status::ERR_UNPACK_FAILURE.into()),
        }
    }

    /// `PMIx_Unpublish`.
    pub async fn unpublish(&self, keys: &[&str], info: &[Info]) -> Result<(), Error> {
        self.status_of(&Request::Unpublish {
            uid: self.inner.conn.uid(),
            keys: keys.iter().map(|k| (*k).to_owned()).collect(),
            info: info.to_vec(),
        })
        .await
    }

    /// `PMIx_Abort`: ask the host to abort `procs` (this process's namespace when empty).
    pub async fn abort(&self, status: Status, message: &str, procs: &[Proc]) -> Result<(), Error> {
        self.status_of(&Request::Abort {
            status,
            message: Some(message.to_owned()),
            procs: procs.to_vec(),
        })
        .await
    }

    /// `PMIx_Get_nb`: start the get now, on the client's runtime, and return its eventual
    /// result. The request is sent whether or not the result is awaited; dropping the
    /// [`Pending`] only discards the answer. It may be called from any thread, inside a
    /// runtime or not.
    pub fn get_nb(&self, proc: Option<&Proc>, key: &str, info: &[Info]) -> Pending<Value> {
        let (client, proc, key, info) =
            (self.clone(), proc.cloned(), key.to_owned(), info.to_vec());
        Pending(self.run_nb(async move { client.get(proc.as_ref(), &key, &info).await }))
    }

    /// `PMIx_Fence_nb`: start the fence now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn fence_nb(&self, procs: &[Proc], info: &[Info]) -> Pending<()> {
        let (client, procs, info) = (self.clone(), procs.to_vec(), info.to_vec());
        Pending(self.run_nb(async move { client.fence(&procs, &info).await }))
    }

    /// `PMIx_Publish_nb`: start the publish now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn publish_nb(&self, info: &[Info]) -> Pending<()> {
        let (client, info) = (self.clone(), info.to_vec());
        Pending(self.run_nb(async move { client.publish(&info).await }))
    }

    /// `PMIx_Lookup_nb`: start the lookup now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn lookup_nb(&self, keys: &[&str], info: &[Info]) -> Pending<Vec<PData>> {
        let keys: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
        let (client, info) = (self.clone(), info.to_vec());
        Pending(self.run_nb(async move {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            client.lookup(&keys, &info).await
        }))
    }

    /// `PMIx_Unpublish_nb`: start the unpublish now and return its eventual result (see
    /// [`Client::get_nb`]).
    pub fn unpublish_nb(&self, keys: &[&str], info: &[Info]) -> Pending<()> {
        let keys: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
        let (client, info) = (self.clone(), info.to_vec());
        Pending(self.run_nb(async move {
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
    ) -> Result<HandlerId, Error>
    where
        F: Fn(EventNotice, EventCompletion) + Send + Sync + 'static,
    {
        let (id, req) = self.inner.events.register(codes, info, Arc::new(handler))?;
        if let Err(s) = self.status_of(&req).await {
            self.inner.events.refused(id);
            return Err(s);
        }
        self.inner.events.hand_kept_events(id);
        Ok(id)
    }

    /// `PMIx_Deregister_event_handler`: the handler is not called again; an identifier this
    /// process does not hold is `PMIX_ERR_BAD_PARAM` (§10.1.7).
    pub async fn deregister_event_handler(&self, id: HandlerId) -> Result<(), Error> {
        let req = self.inner.events.deregister(id)?;
        // The server answers nothing (as OpenPMIx 4.2 servers do not): a lost connection
        // only means there is nothing left to tell.
        let _ = self.inner.conn.send(&req).await;
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
    ) -> Result<(), Error> {
        let plan = self.state().notify(status, source, range, info)?;
        if let Some(req) = plan.request {
            self.status_of(&req).await?;
        }
        if let Some(event) = plan.local {
            // The process's own handlers have run as far as they go at once before the call
            // returns (see `Events::deliver_own`).
            let walked = self.inner.events.deliver_own(event, plan.handlers);
            let _ = walked.await;
        }
        Ok(())
    }

    /// What `PMIx_Init`'s programming-model attributes do (v5.0 §4.3.2.2, §B.3.2): when
    /// `info` holds any (`PMIX_PROGRAMMING_MODEL`, `PMIX_MODEL_LIBRARY_NAME`, …), this
    /// process's handlers hear `PMIX_MODEL_DECLARED` with them, in `PMIX_RANGE_PROC_LOCAL`
    /// and never at a default handler (`PMIX_EVENT_NON_DEFAULT`), as OpenPMIx's library
    /// raises it. A handler registered later still hears it (`core/events.rs`), so a runtime
    /// that initialises second learns of the first. Whether anything was declared.
    pub async fn declare_model(&self, info: &[Info]) -> Result<bool, Error> {
        let mut declared: Vec<Info> = info
            .iter()
            .filter(|i| is_model_attribute(i.key.as_str()))
            .cloned()
            .collect();
        if declared.is_empty() {
            return Ok(false);
        }
        declared.push(Info::new(attr::EVENT_NON_DEFAULT, true));
        let range = DataRange::PROC_LOCAL;
        self.notify_event(Status::MODEL_DECLARED, None, range, &declared)
            .await?;
        Ok(true)
    }

    /// `PMIx_Progress`: the connection progresses in its own task; nothing to do.
    pub fn progress(&self) {}

    /// `PMIx_Finalize`: tell the server, then close the connection.
    pub async fn finalize(&self) -> Result<(), Error> {
        self.finalize_with(&[]).await
    }

    /// `PMIx_Finalize` with directives. `PMIX_EMBED_BARRIER` makes it fence with the whole
    /// job first (v5.0 §4.4.1: finalize has no barrier by default); a failed fence fails the
    /// finalize, which then leaves the connection open.
    pub async fn finalize_with(&self, info: &[Info]) -> Result<(), Error> {
        if self.state().finalized {
            return Ok(());
        }
        let barrier = info
            .iter()
            .any(|i| i.is(attr::EMBED_BARRIER) && i.value.as_bool().unwrap_or(true));
        if barrier {
            self.fence(&[], &[]).await?;
        }
        let r = self.status_of(&Request::Finalize).await;
        self.state().finalized = true;
        self.inner.conn.finish().await;
        self.inner.events.clear();
        r
    }

    /// A request answered by a status alone (typed as an op's status for the commands of
    /// `wire::ops`, such as `LOG` and `DISCONNECTNB`).
    async fn status_of(&self, req: &Request) -> Result<(), Error> {
        core::replies::status(self.inner.conn.request(req).await?)
    }

    /// The namespace's realms as received at init (for inspection and tests).
    pub fn job_realms(&self) -> Option<JobRealms> {
        let nspace = self.inner.me.nspace.as_str();
        self.state().job_realms(nspace).cloned()
    }

    /// The buffer type the connection uses.
    pub fn buffer_type(&self) -> BufferType {
        self.state().buffer_type()
    }

    /// This process's namespace.
    pub fn nspace(&self) -> &Nspace {
        &self.inner.me.nspace
    }
}
