//! Blocking forms of the client API, for plain threads (what C callers and simple programs
//! expect). Each call runs the async form on the calling thread, which also performs the
//! call's socket I/O (`blocking_io.rs`): no thread hand-off between the caller and the
//! server's answer. The client's runtime runs the event handlers and the `_nb` calls.

use super::{EventCompletion, EventNotice};
use crate::Error;
use crate::events::HandlerId;
use crate::model::{
    AllocDirective, App, DataRange, Info, IofChannel, Nspace, PData, Proc, Query, Scope, Status,
    Value,
};

/// A client whose calls block the calling thread.
#[derive(Debug)]
pub struct Client {
    runtime: tokio::runtime::Runtime,
    inner: super::Client,
}

impl Client {
    /// `PMIx_Init` for a process launched by a PMIx server (see [`super::Client::init`]).
    pub fn init() -> Result<Client, Error> {
        Client::init_with(&super::ClientConfig::from_env()?)
    }

    /// `PMIx_Init` with an explicit configuration instead of the environment. Call it
    /// outside any tokio runtime: the client brings its own.
    pub fn init_with(config: &super::ClientConfig) -> Result<Client, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| Error::Status(Status::ERR_INIT, e.to_string()))?;
        let inner = runtime.block_on(super::Client::init_blocking_io(config))?;
        Ok(Client { runtime, inner })
    }

    /// A tool's connection to the server at `uri` (`PMIx_tool_init`, `PMIx_tool_attach_to_server`;
    /// [`super::tool::Tool`] keeps a tool's connections): under `proc` when the tool brings
    /// its identifier, else under the one the server assigns. Returns the client and the
    /// server's identifier. Call it outside any tokio runtime.
    pub fn connect_tool(
        uri: &str,
        proc: Option<&Proc>,
        buffer_type: crate::codec::BufferType,
    ) -> Result<(Client, Proc), Error> {
        Self::connect_tool_at(uri, None, proc, buffer_type)
    }

    /// [`Client::connect_tool`] to a server whose version is known (its rendezvous file's
    /// second line), so that the tool speaks that version's layouts.
    pub(crate) fn connect_tool_at(
        uri: &str,
        version: Option<crate::wire::PeerVersion>,
        proc: Option<&Proc>,
        buffer_type: crate::codec::BufferType,
    ) -> Result<(Client, Proc), Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| Error::Status(Status::ERR_INIT, e.to_string()))?;
        let (inner, server) = runtime.block_on(super::Client::init_tool_blocking_io(
            uri,
            version,
            proc,
            buffer_type,
        ))?;
        Ok((Client { runtime, inner }, server))
    }

    /// The async client, for use from async code.
    pub fn as_async(&self) -> &super::Client {
        &self.inner
    }

    /// Run a future (typically a call of [`Client::as_async`]) on this client's runtime.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.runtime.block_on(f)
    }

    /// Run a non-blocking call's work on a thread of the runtime's blocking pool: its I/O
    /// blocks that thread, not the caller's and not a worker's.
    fn run_nb(&self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        let runtime = self.runtime.handle().clone();
        self.runtime.spawn_blocking(move || runtime.block_on(work));
    }

    /// Run `work` on one of the client's own threads (its runtime's blocking pool), where it
    /// may block and call the client: where a C library runs the callbacks of its
    /// non-blocking calls.
    pub fn run_detached(&self, work: impl FnOnce() + Send + 'static) {
        self.runtime.spawn_blocking(work);
    }

    pub fn proc(&self) -> &Proc {
        self.inner.proc()
    }

    pub fn initialized(&self) -> bool {
        self.inner.initialized()
    }

    pub fn get(&self, proc: Option<&Proc>, key: &str, info: &[Info]) -> Result<Value, Error> {
        self.runtime.block_on(self.inner.get(proc, key, info))
    }

    /// `PMIx_Get` of a standard attribute, in its declared type (see
    /// [`super::Client::get_attr`]).
    pub fn get_attr<T: crate::model::value::FromValue>(
        &self,
        proc: Option<&Proc>,
        attr: crate::model::attr::Attr<T>,
        info: &[Info],
    ) -> Result<T, Error> {
        self.runtime.block_on(self.inner.get_attr(proc, attr, info))
    }

    /// `PMIx_Get_nb`: the callback runs on the client's runtime when the value is known.
    pub fn get_nb(
        &self,
        proc: Option<&Proc>,
        key: &str,
        info: &[Info],
        callback: impl FnOnce(Result<Value, Error>) + Send + 'static,
    ) {
        let (client, proc, key, info) = (
            self.inner.clone(),
            proc.cloned(),
            key.to_owned(),
            info.to_vec(),
        );
        self.run_nb(async move {
            callback(client.get(proc.as_ref(), &key, &info).await);
        });
    }

    pub fn put(&self, scope: Scope, key: &str, value: Value) -> Result<(), Error> {
        self.inner.put(scope, key, value)
    }

    pub fn store_internal(&self, proc: &Proc, key: &str, value: Value) -> Result<(), Error> {
        self.inner.store_internal(proc, key, value)
    }

    pub fn commit(&self) -> Result<(), Error> {
        self.runtime.block_on(self.inner.commit())
    }

    pub fn fence(&self, procs: &[Proc], info: &[Info]) -> Result<(), Error> {
        self.runtime.block_on(self.inner.fence(procs, info))
    }

    /// `PMIx_Fence_nb`: the callback runs when the fence completes.
    pub fn fence_nb(
        &self,
        procs: &[Proc],
        info: &[Info],
        callback: impl FnOnce(Result<(), Error>) + Send + 'static,
    ) {
        let (client, procs, info) = (self.inner.clone(), procs.to_vec(), info.to_vec());
        self.run_nb(async move {
            callback(client.fence(&procs, &info).await);
        });
    }

    pub fn publish(&self, info: &[Info]) -> Result<(), Error> {
        self.runtime.block_on(self.inner.publish(info))
    }

    pub fn lookup(&self, keys: &[&str], info: &[Info]) -> Result<Vec<PData>, Error> {
        self.runtime.block_on(self.inner.lookup(keys, info))
    }

    pub fn unpublish(&self, keys: &[&str], info: &[Info]) -> Result<(), Error> {
        self.runtime.block_on(self.inner.unpublish(keys, info))
    }

    pub fn abort(&self, status: Status, message: &str, procs: &[Proc]) -> Result<(), Error> {
        self.runtime
            .block_on(self.inner.abort(status, message, procs))
    }

    /// `PMIx_Register_event_handler`; the handler runs on the client's runtime (see
    /// [`super::Client::register_event_handler`]).
    pub fn register_event_handler<F>(
        &self,
        codes: &[Status],
        info: &[Info],
        handler: F,
    ) -> Result<HandlerId, Error>
    where
        F: Fn(EventNotice, EventCompletion) + Send + Sync + 'static,
    {
        self.runtime
            .block_on(self.inner.register_event_handler(codes, info, handler))
    }

    pub fn deregister_event_handler(&self, id: HandlerId) -> Result<(), Error> {
        self.runtime
            .block_on(self.inner.deregister_event_handler(id))
    }

    /// What `PMIx_Init`'s programming-model attributes do (see the async
    /// [`super::Client::declare_model`]).
    pub fn declare_model(&self, info: &[Info]) -> Result<bool, Error> {
        self.runtime.block_on(self.inner.declare_model(info))
    }

    pub fn notify_event(
        &self,
        status: Status,
        source: Option<&Proc>,
        range: DataRange,
        info: &[Info],
    ) -> Result<(), Error> {
        self.runtime
            .block_on(self.inner.notify_event(status, source, range, info))
    }

    /// `PMIx_Spawn` (see [`super::Client::spawn`]).
    pub fn spawn(&self, job_info: &[Info], apps: &[App]) -> Result<Nspace, Error> {
        self.runtime.block_on(self.inner.spawn(job_info, apps))
    }

    /// `PMIx_Allocation_request` (see [`super::Client::allocation_request`]).
    pub fn allocation_request(
        &self,
        directive: AllocDirective,
        info: &[Info],
    ) -> Result<Vec<Info>, Error> {
        self.runtime
            .block_on(self.inner.allocation_request(directive, info))
    }

    /// `PMIx_Job_control` (see [`super::Client::job_control`]).
    pub fn job_control(&self, targets: &[Proc], directives: &[Info]) -> Result<Vec<Info>, Error> {
        self.runtime
            .block_on(self.inner.job_control(targets, directives))
    }

    /// `PMIx_Process_monitor` (see [`super::Client::process_monitor`]).
    pub fn process_monitor(
        &self,
        monitor: &Info,
        error: Status,
        directives: &[Info],
    ) -> Result<Vec<Info>, Error> {
        self.runtime
            .block_on(self.inner.process_monitor(monitor, error, directives))
    }

    /// `PMIx_IOF_pull` (see [`super::Client::iof_pull`]).
    pub fn iof_pull(
        &self,
        procs: &[Proc],
        channels: IofChannel,
        directives: &[Info],
        handler: super::IofHandler,
    ) -> Result<u64, Error> {
        self.runtime
            .block_on(self.inner.iof_pull(procs, channels, directives, handler))
    }

    /// `PMIx_IOF_deregister` (see [`super::Client::iof_deregister`]).
    pub fn iof_deregister(&self, id: u64, directives: &[Info]) -> Result<(), Error> {
        self.runtime
            .block_on(self.inner.iof_deregister(id, directives))
    }

    /// `PMIx_IOF_push` (see [`super::Client::iof_push`]).
    pub fn iof_push(
        &self,
        targets: &[Proc],
        data: Option<&[u8]>,
        directives: &[Info],
    ) -> Result<(), Error> {
        self.runtime
            .block_on(self.inner.iof_push(targets, data, directives))
    }

    /// `PMIx_Heartbeat` (see [`super::Client::heartbeat`]).
    pub fn heartbeat(&self) -> Result<(), Error> {
        self.runtime.block_on(self.inner.heartbeat())
    }

    /// `PMIx_Get_credential` (see [`super::Client::get_credential`]).
    pub fn get_credential(
        &self,
        info: &[Info],
    ) -> Result<(crate::model::ByteObject, Vec<Info>), Error> {
        self.runtime.block_on(self.inner.get_credential(info))
    }

    /// `PMIx_Validate_credential` (see [`super::Client::validate_credential`]).
    pub fn validate_credential(
        &self,
        credential: &[u8],
        directives: &[Info],
    ) -> Result<Vec<Info>, Error> {
        self.runtime
            .block_on(self.inner.validate_credential(credential, directives))
    }

    /// `PMIx_Log` (see [`super::Client::log`]).
    pub fn log(&self, data: &[Info], directives: &[Info]) -> Result<(), Error> {
        self.runtime.block_on(self.inner.log(data, directives))
    }

    /// `PMIx_Connect` (see [`super::Client::connect`]).
    pub fn connect(&self, procs: &[Proc], info: &[Info]) -> Result<(), Error> {
        self.runtime.block_on(self.inner.connect(procs, info))
    }

    /// `PMIx_Disconnect` (see [`super::Client::disconnect`]).
    pub fn disconnect(&self, procs: &[Proc], info: &[Info]) -> Result<(), Error> {
        self.runtime.block_on(self.inner.disconnect(procs, info))
    }

    /// `PMIx_Load_topology` (see [`super::Client::load_topology`]).
    #[cfg(feature = "topology")]
    pub fn load_topology(&self) -> Result<std::sync::Arc<crate::topology::Machine>, Error> {
        self.runtime.block_on(self.inner.load_topology())
    }

    /// `PMIx_Load_topology` of a named source (see [`super::Client::load_topology_of`]).
    #[cfg(feature = "topology")]
    pub fn load_topology_of(
        &self,
        source: &str,
    ) -> Result<std::sync::Arc<crate::topology::Machine>, Error> {
        self.runtime.block_on(self.inner.load_topology_of(source))
    }

    /// `PMIx_Get_cpuset` (see [`super::Client::get_cpuset`]).
    #[cfg(feature = "topology")]
    pub fn get_cpuset(&self, thread: bool) -> Result<crate::model::Cpuset, Error> {
        self.runtime.block_on(self.inner.get_cpuset(thread))
    }

    /// `PMIx_Fabric_register` (see [`super::Client::fabric_register`]).
    pub fn fabric_register(&self, directives: &[Info]) -> Result<crate::model::Fabric, Error> {
        self.runtime
            .block_on(self.inner.fabric_register(directives))
    }

    /// `PMIx_Fabric_update` (see [`super::Client::fabric_update`]).
    pub fn fabric_update(&self, fabric: &mut crate::model::Fabric) -> Result<(), Error> {
        self.runtime.block_on(self.inner.fabric_update(fabric))
    }

    /// `PMIx_Fabric_deregister` (see [`super::Client::fabric_deregister`]).
    pub fn fabric_deregister(&self, fabric: &mut crate::model::Fabric) -> Result<(), Error> {
        self.runtime.block_on(self.inner.fabric_deregister(fabric))
    }

    /// `PMIx_Group_construct` (see [`super::Client::group_construct`]).
    pub fn group_construct(
        &self,
        group: &str,
        procs: &[Proc],
        info: &[Info],
    ) -> Result<super::GroupConstructed, Error> {
        self.runtime
            .block_on(self.inner.group_construct(group, procs, info))
    }

    /// `PMIx_Group_destruct` (see [`super::Client::group_destruct`]).
    pub fn group_destruct(&self, group: &str, info: &[Info]) -> Result<(), Error> {
        self.runtime
            .block_on(self.inner.group_destruct(group, info))
    }

    /// `PMIx_Group_invite` (see [`super::Client::group_invite`]).
    pub fn group_invite(
        &self,
        group: &str,
        procs: &[Proc],
        info: &[Info],
    ) -> Result<super::GroupConstructed, Error> {
        self.runtime
            .block_on(self.inner.group_invite(group, procs, info))
    }

    /// `PMIx_Group_join` (see [`super::Client::group_join`]).
    pub fn group_join(
        &self,
        group: &str,
        leader: &Proc,
        answer: super::GroupAnswer,
        info: &[Info],
    ) -> Result<super::GroupConstructed, Error> {
        self.runtime
            .block_on(self.inner.group_join(group, leader, answer, info))
    }

    /// `PMIx_Group_leave` (see [`super::Client::group_leave`]).
    pub fn group_leave(&self, group: &str, info: &[Info]) -> Result<(), Error> {
        self.runtime.block_on(self.inner.group_leave(group, info))
    }

    /// `PMIx_Query_info` (see [`super::Client::query`]).
    pub fn query(&self, queries: &[Query]) -> Result<crate::query::Answered, Error> {
        self.runtime.block_on(self.inner.query(queries))
    }

    pub fn progress(&self) {}

    pub fn finalize(&self) -> Result<(), Error> {
        self.runtime.block_on(self.inner.finalize())
    }

    /// `PMIx_Finalize` with directives (`PMIX_EMBED_BARRIER`).
    pub fn finalize_with(&self, info: &[Info]) -> Result<(), Error> {
        self.runtime.block_on(self.inner.finalize_with(info))
    }
}
