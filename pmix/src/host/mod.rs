//! The host's side of the server: the [`Host`] trait, one async method per upcall of the
//! standard's `pmix_server_module_t` (PMIx v5.0 §17.3), each defaulting to
//! `PMIX_ERR_NOT_SUPPORTED`; and the kit a host reuses to implement them: starting a job on
//! one node ([`launch`]), job control and monitoring requests read into actions, with who may
//! ask for them ([`control`]), the library's own logging channels ([`log`]), published data
//! with waiting lookups ([`publish`]), and fabric names ([`fabric`]).
//!
//! A resource manager implements the upcalls it supports. The server calls them from its own
//! tasks, never while holding its state, so an upcall may take as long as it needs (a fence
//! across thousands of nodes) without stopping the server from serving other clients.
//! Upcalls of later chapters (spawn, connect, events, query, groups, fabric, …) are declared
//! here as they are wired into the server.

pub mod control;
pub mod fabric;
pub mod launch;
pub mod log;
pub mod publish;

use std::future::Future;

use crate::model::{
    AllocDirective, App, DataRange, FabricOperation, GroupOperation, Info, IofChannel, Nspace,
    PData, Proc, Query, Status,
};

use crate::server::{HostCall, HostResult};

/// The resource manager's upcalls.
pub trait Host: Send + Sync + 'static {
    /// `client_connected2`: a registered client completed its handshake.
    fn client_connected(&self, proc: Proc) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = proc;
        async { Ok(()) }
    }

    /// `client_finalized`: a client called `PMIx_Finalize`.
    fn client_finalized(&self, proc: Proc) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = proc;
        async { Ok(()) }
    }

    /// A local client's connection ended before it called `PMIx_Finalize`: the process
    /// crashed, was killed, or closed its socket. No upcall of `pmix_server_module_t` says
    /// so; OpenPMIx tells its host by raising `PMIX_ERR_LOST_CONNECTION` (source: the
    /// process) to the handlers the host registered in its own process, which a resource
    /// manager takes as the job's failure (Slurm's `mpi/pmix` cancels the step). Nothing by
    /// default; the answer is not waited for.
    fn client_lost(&self, proc: Proc) -> impl Future<Output = ()> + Send {
        let _ = proc;
        async {}
    }

    /// `abort`: `proc` asks to abort `procs` (all of its namespace when empty).
    fn abort(
        &self,
        proc: Proc,
        status: Status,
        message: Option<String>,
        procs: Vec<Proc>,
    ) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = (proc, status, message, procs);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `fence_nb`: complete a fence whose participants span several nodes. `data` is this
    /// node's contribution (opaque); return the concatenation of every node's contribution.
    fn fence_nb(
        &self,
        procs: Vec<Proc>,
        info: Vec<Info>,
        data: Vec<u8>,
    ) -> impl Future<Output = Result<Vec<u8>, Status>> + Send {
        let _ = (procs, info, data);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// Whether [`Host::direct_modex`] is implemented (rules N-08, N-09, R-05, R-07).
    fn supports_direct_modex(&self) -> bool {
        false
    }

    /// `direct_modex`: fetch the data posted by `proc`, which runs on another node, from that
    /// node's server (`PMIx_server_dmodex_request` there).
    fn direct_modex(
        &self,
        proc: Proc,
        info: Vec<Info>,
    ) -> impl Future<Output = Result<Vec<u8>, Status>> + Send {
        let _ = (proc, info);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `publish`: store `info` published by `proc` (range and persistence are in `info`).
    fn publish(
        &self,
        proc: Proc,
        info: Vec<Info>,
    ) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = (proc, info);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `lookup`: find published data (`PMIX_WAIT` in `info` asks to wait for it).
    fn lookup(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> impl Future<Output = Result<Vec<PData>, Status>> + Send {
        let _ = (proc, keys, info);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `unpublish`: remove data `proc` published.
    fn unpublish(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = (proc, keys, info);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `notify_event`: a local client raised an event whose range reaches beyond this node
    /// (§10.1.8, §17.3). Deliver it to the other nodes' servers in range (their
    /// [`crate::server::Server::notify_event`]); this server already delivered it locally.
    fn notify_event(
        &self,
        status: Status,
        source: Proc,
        range: DataRange,
        info: Vec<Info>,
    ) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = (status, source, range, info);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `register_events`: watch `codes` and send this server their events
    /// ([`crate::server::Server::notify_event`]) (§17.3.14). The server asks once per code,
    /// and only for environmental codes (`PMIX_EVENT_SYS_BASE` to `PMIX_EVENT_SYS_OTHER`) and
    /// codes outside the standard's range, the first time a local client registers for one;
    /// `info` holds the client's directives with its `PMIX_USERID` and `PMIX_GRPID`. The
    /// events of a job's own processes are the host's to send unasked. An error fails the
    /// client's registration; the default, `PMIX_ERR_NOT_SUPPORTED`, says the host watches
    /// no codes on request, and the library serves the registration alone.
    fn register_events(
        &self,
        codes: Vec<Status>,
        info: Vec<Info>,
    ) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = (codes, info);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `deregister_events`: stop watching `codes`, for which no local client is registered
    /// any more (§17.3.15). The server ignores the answer.
    fn deregister_events(
        &self,
        codes: Vec<Status>,
    ) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = codes;
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `spawn`: start the job `proc` asks for (§12.2, §17.3): `job_info` holds the job-level
    /// directives (with what the library adds, §17.3.11: the requester's `PMIX_USERID` and
    /// `PMIX_GRPID`, `PMIX_REQUESTOR_IS_TOOL`, `PMIX_REQUESTOR_IS_CLIENT`, `PMIX_SPAWNED` and
    /// `PMIX_PARENT_ID`), each app its command, arguments, environment, working directory,
    /// number of processes and directives. Register the new namespace with the servers of the nodes it
    /// runs on (with `PMIX_PARENT_ID` and, per process, `PMIX_SPAWNED`) before answering with
    /// it, so the requester receives its job information. [`crate::host::launch`] checks a
    /// request and builds that information for a job on one node. A request that cannot start
    /// fails with the standard's job status (`PMIX_ERR_JOB_EXE_NOT_FOUND`, …).
    fn spawn(
        &self,
        proc: Proc,
        job_info: Vec<Info>,
        apps: Vec<App>,
    ) -> impl Future<Output = Result<Nspace, Status>> + Send {
        let _ = (proc, job_info, apps);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `log`: log `data` (each info a channel and its message) for `proc` as `directives`
    /// say (§12.4.1); `timestamp` is the request's (0: none). The default is this library's
    /// own logging to the local channels (stderr, stdout, syslog; see
    /// [`crate::host::log`]); a host with channels of its own (a job record, a global
    /// syslog, email) implements it.
    fn log(
        &self,
        proc: Proc,
        timestamp: i64,
        data: Vec<Info>,
        directives: Vec<Info>,
    ) -> impl Future<Output = Result<(), Status>> + Send {
        async move { log::write_local_now(&proc, timestamp, &data, &directives) }
    }

    /// `allocate`: a request of `proc` for a new allocation, or to extend, release or reacquire
    /// one (`directive`), with its attributes (`PMIX_ALLOC_NUM_NODES`, `PMIX_ALLOC_TIME`, …)
    /// and the requester's ids in `info` (§13.1.1). Return what the request produced
    /// (`PMIX_ALLOC_ID`, …).
    fn allocate(
        &self,
        proc: Proc,
        directive: AllocDirective,
        info: Vec<Info>,
    ) -> impl Future<Output = Result<Vec<Info>, Status>> + Send {
        let _ = (proc, directive, info);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `job_control`: act on `targets` (none: the requester's namespace) as `directives` say:
    /// signal, pause, resume, kill, terminate, checkpoint, cleanup registrations, … (§13.2.1).
    fn job_control(
        &self,
        proc: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
    ) -> impl Future<Output = Result<Vec<Info>, Status>> + Send {
        let _ = (proc, targets, directives);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `monitor`: watch what `monitor` names for `proc` (`PMIX_MONITOR_HEARTBEAT`, a file, …)
    /// and raise `error` when it fails; `PMIX_SEND_HEARTBEAT` is a heartbeat of `proc`, and
    /// `PMIX_MONITOR_CANCEL` in `directives` ends a monitor (§13.3.1).
    fn monitor(
        &self,
        proc: Proc,
        monitor: Info,
        error: Status,
        directives: Vec<Info>,
    ) -> impl Future<Output = Result<Vec<Info>, Status>> + Send {
        let _ = (proc, monitor, error, directives);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `connect`: complete a connect of `procs`, which span several nodes, once every node's
    /// servers have seen all their local participants call it (§12.3.1, §17.3): a collective
    /// among the nodes involved, as `fence_nb` is, without data. Afterwards the processes of
    /// each namespace may read the others' job information, which the servers involved must
    /// hold (registered there, or delivered by the host).
    fn connect(
        &self,
        procs: Vec<Proc>,
        info: Vec<Info>,
    ) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = (procs, info);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `group`: construct or destruct (`op`) the process group `group` of `procs` across
    /// the nodes involved, once this node's members have all called it (§17.3.27): a
    /// collective, as `connect` is. The server translates group ids into their members
    /// before the host sees them. Answer with what the group gets: `PMIX_GROUP_CONTEXT_ID`
    /// when `directives` ask for `PMIX_GROUP_ASSIGN_CONTEXT_ID`. A directive of
    /// `PMIX_LOCAL_COLLECTIVE_STATUS` means a local member was lost: end it with an error
    /// everywhere. With `PMIX_GROUP_NOTIFY_TERMINATION` or `PMIX_GROUP_FT_COLLECTIVE`, a host
    /// may instead go on without members that terminate (`procs` still names them all) and
    /// answer with `PMIX_GROUP_MEMBERSHIP`, the members still in, the same at every node.
    fn group(
        &self,
        op: GroupOperation,
        group: String,
        procs: Vec<Proc>,
        directives: Vec<Info>,
    ) -> impl Future<Output = Result<Vec<Info>, Status>> + Send {
        let _ = (op, group, procs, directives);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `fabric`: describe a fabric for `proc` (§15.4, §17.3.28): `op` is
    /// `PMIX_FABRIC_REQUEST_INFO` for a registration, whose `directives` may name the fabric
    /// (`PMIX_FABRIC_IDENTIFIER`, `PMIX_FABRIC_VENDOR`, `PMIX_FABRIC_PLANE`), or
    /// `PMIX_FABRIC_UPDATE_INFO` with the `PMIX_FABRIC_INDEX` the registration returned.
    /// Answer with the fabric's information: its `PMIX_FABRIC_INDEX` and
    /// `PMIX_FABRIC_IDENTIFIER`, and what else the host knows of it (vendor, devices, …); a
    /// fabric the host does not know is `PMIX_ERR_NOT_FOUND`.
    fn fabric(
        &self,
        proc: Proc,
        op: FabricOperation,
        directives: Vec<Info>,
    ) -> impl Future<Output = Result<Vec<Info>, Status>> + Send {
        let _ = (proc, op, directives);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `disconnect`: the collective that ends a connection of `procs` (§12.3.3).
    fn disconnect(
        &self,
        procs: Vec<Proc>,
        info: Vec<Info>,
    ) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = (procs, info);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `query`: answer the keys of `proc`'s queries the server could not answer from what it
    /// holds (§7.1, §17.3). Each query's qualifiers end with the requester's `PMIX_USERID`
    /// and `PMIX_GRPID`. Return one info per key answered, keyed by the query key, in query
    /// order; keys left out are reported as not found. `PMIX_QUERY_NAMESPACES` left out is
    /// answered by the server with the namespaces registered with it.
    fn query(
        &self,
        proc: Proc,
        queries: Vec<Query>,
    ) -> impl Future<Output = Result<Vec<Info>, Status>> + Send {
        let _ = (proc, queries);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `get_credential`: a credential for `proc` from the host's security system (munge, a
    /// site service, …) as `info` asks (§16.1, §17.3), with what describes it
    /// (`PMIX_CRED_TYPE`, …). A host without one (the default) leaves the library to vouch
    /// for the identity it verified itself ([`crate::server::credential`]).
    fn get_credential(
        &self,
        proc: Proc,
        info: Vec<Info>,
    ) -> impl Future<Output = Result<(Vec<u8>, Vec<Info>), Status>> + Send {
        let _ = (proc, info);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `validate_credential`: check `credential`, presented by `proc`, with the host's
    /// security system (§16.2, §17.3) and return what it proves (`PMIX_USERID`,
    /// `PMIX_GRPID`, …), or `PMIX_ERR_INVALID_CRED`. The default leaves validation to the
    /// library, which validates the credentials it sealed.
    fn validate_credential(
        &self,
        proc: Proc,
        credential: Vec<u8>,
        directives: Vec<Info>,
    ) -> impl Future<Output = Result<Vec<Info>, Status>> + Send {
        let _ = (proc, credential, directives);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `tool_connected`: a tool or launcher connected. `info` holds what it sent with its
    /// connect message and `PMIX_VERSION_INFO`, `PMIX_USERID`, `PMIX_GRPID`, plus
    /// `PMIX_NSPACE` and `PMIX_RANK` when it brought its own identifier. Return the
    /// identifier it is to use (its own, or a new one when it asked for one), or refuse it.
    ///
    /// A host without tool support (the default) leaves tools that bring their own
    /// identifier to the server alone and refuses those that need one.
    fn tool_connected(&self, info: Vec<Info>) -> impl Future<Output = Result<Proc, Status>> + Send {
        let _ = info;
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `iof_pull`: a client or tool pulls the output of `procs` on `channels` (§18.5.7,
    /// §17.3.21): forward that output, wherever it is produced, to this server with
    /// [`crate::server::Server::iof_deliver`], which hands it to every puller that asked for
    /// it. `directives` are the puller's (buffering, `PMIX_IOF_TAG_OUTPUT`, …) with its
    /// `PMIX_USERID` and `PMIX_GRPID`. When the puller deregisters, the call comes again for
    /// the same processes and channels with [`IOF_STOP`] in `directives`.
    fn iof_pull(
        &self,
        procs: Vec<Proc>,
        directives: Vec<Info>,
        channels: IofChannel,
    ) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = (procs, directives, channels);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }

    /// `push_stdin`: `source` (a tool or client) pushes `data` to the standard input of
    /// `targets` (§18.5.9, §17.3.22); `directives` hold the pusher's ids and its attributes
    /// (`PMIX_IOF_COMPLETE`: the input has ended). No data: directives only.
    fn push_stdin(
        &self,
        source: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
        data: Option<Vec<u8>>,
    ) -> impl Future<Output = Result<(), Status>> + Send {
        let _ = (source, targets, directives, data);
        async { Err(Status::ERR_NOT_SUPPORTED) }
    }
}

pub use crate::wire::ops::IOF_STOP;

impl HostCall {
    /// Make this upcall of `host`: the method of the same name with the call's arguments.
    pub async fn call<H: Host>(self, host: &H) -> HostResult {
        let status = |r: Result<(), Status>| HostResult::Status(r.err().unwrap_or(Status::SUCCESS));
        match self {
            HostCall::ClientConnected { proc: p } => status(host.client_connected(p).await),
            HostCall::ClientFinalized { proc: p } => status(host.client_finalized(p).await),
            HostCall::ClientLost { proc: p } => {
                host.client_lost(p).await;
                HostResult::Status(Status::SUCCESS)
            }
            HostCall::Abort {
                proc,
                status: s,
                message,
                procs,
            } => status(host.abort(proc, s, message, procs).await),
            HostCall::Fence { procs, info, data } => {
                HostResult::Data(host.fence_nb(procs, info, data).await)
            }
            HostCall::DirectModex { proc, info } => {
                HostResult::Data(host.direct_modex(proc, info).await)
            }
            HostCall::Publish { proc, info } => status(host.publish(proc, info).await),
            HostCall::Lookup { proc, keys, info } => {
                HostResult::Lookup(host.lookup(proc, keys, info).await)
            }
            HostCall::Unpublish { proc, keys, info } => {
                status(host.unpublish(proc, keys, info).await)
            }
            HostCall::ToolConnected { info } => HostResult::Proc(host.tool_connected(info).await),
            HostCall::NotifyEvent {
                status: s,
                source,
                range,
                info,
            } => status(host.notify_event(s, source, range, info).await),
            HostCall::RegisterEvents { codes, info } => {
                status(host.register_events(codes, info).await)
            }
            HostCall::DeregisterEvents { codes } => status(host.deregister_events(codes).await),
            HostCall::Query { proc, queries } => HostResult::Infos(host.query(proc, queries).await),
            HostCall::Spawn {
                proc,
                job_info,
                apps,
            } => HostResult::Nspace(host.spawn(proc, job_info, apps).await),
            HostCall::Log {
                proc,
                timestamp,
                data,
                directives,
            } => status(host.log(proc, timestamp, data, directives).await),
            HostCall::Allocate {
                proc,
                directive,
                info,
            } => HostResult::Infos(host.allocate(proc, directive, info).await),
            HostCall::JobControl {
                proc,
                targets,
                directives,
            } => HostResult::Infos(host.job_control(proc, targets, directives).await),
            HostCall::Monitor {
                proc,
                monitor,
                error,
                directives,
            } => HostResult::Infos(host.monitor(proc, monitor, error, directives).await),
            HostCall::Connect { procs, info } => status(host.connect(procs, info).await),
            HostCall::Disconnect { procs, info } => status(host.disconnect(procs, info).await),
            HostCall::Fabric {
                proc,
                op,
                directives,
            } => HostResult::Infos(host.fabric(proc, op, directives).await),
            HostCall::Group {
                op,
                group,
                procs,
                directives,
            } => HostResult::Infos(host.group(op, group, procs, directives).await),
            HostCall::GetCredential { proc, info } => {
                HostResult::Credential(host.get_credential(proc, info).await)
            }
            HostCall::ValidateCredential {
                proc,
                credential,
                directives,
            } => HostResult::Infos(host.validate_credential(proc, credential, directives).await),
            HostCall::IofPull {
                procs,
                directives,
                channels,
            } => status(host.iof_pull(procs, directives, channels).await),
            HostCall::PushStdin {
                source,
                targets,
                directives,
                data,
            } => status(host.push_stdin(source, targets, directives, data).await),
        }
    }
}

/// A host that supports nothing: every upcall answers `PMIX_ERR_NOT_SUPPORTED` (a server for
/// a single node, with fences completed locally).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHost;

impl Host for NoHost {}
