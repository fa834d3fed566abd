//! The server's upcalls to its host, written once.
//!
//! [`for_each_upcall!`](crate::for_each_upcall) holds one row per upcall; each place that
//! needs the list expands it with a macro of its own: the message form ([`super::HostCall`]
//! and its bytes, in `upcall.rs`), the `Host` trait with its defaults and `HostCall::call`
//! (in `host/mod.rs`), and the C host adapter in the C library. Adding an upcall is adding a
//! row; the compiler then asks each of those places for what only it can say.

/// Calls `$callback! { rows }` with one row per upcall of the server to its host (PMIx v5.0
/// §17.3, `pmix_server_module_t`). A row is
///
/// ```text
/// /// docs
/// code Variant method(arg: Type, ...) -> Output [slot field "C type"] default { body }
/// ```
///
/// - `code`: the upcall's byte in the message form ([`crate::server::HostCall::to_bytes`]);
/// - `Variant`: its [`crate::server::HostCall`] variant, whose fields are the arguments;
/// - `method(args) -> Output`: its `Host` method (the output's `Ok` type decides the kind of
///   [`crate::server::HostResult`] it answers with);
/// - `[slot field "C type"]`: the field of `pmix_server_module_t` the C library's server
///   calls for it, and that field's type in `pmix_server.h`; `[]`: no C slot;
/// - `default { body }`: what a host that does not implement it answers (the `Host` trait's
///   default, and the C library's for a NULL slot).
///
/// Names in a row (types, and `write_local_now` of [`crate::host::log`] in a default)
/// resolve where the callback expands, which imports them; the table itself imports nothing,
/// so it stands below every layer that expands it.
#[macro_export]
macro_rules! for_each_upcall {
    ($callback:ident) => {
        $callback! {
            /// `client_connected2`: a registered client completed its handshake.
            0 ClientConnected client_connected(proc: Proc) -> Result<(), Status>
                [slot client_connected2 "pmix_server_client_connected2_fn_t"]
                default { Ok(()) }

            /// `client_finalized`: a client called `PMIx_Finalize`.
            1 ClientFinalized client_finalized(proc: Proc) -> Result<(), Status>
                [slot client_finalized "pmix_server_client_finalized_fn_t"]
                default { Ok(()) }

            /// A local client's connection ended before it called `PMIx_Finalize`: the process
            /// crashed, was killed, or closed its socket. No upcall of `pmix_server_module_t`
            /// says so; OpenPMIx tells its host by raising `PMIX_ERR_LOST_CONNECTION` (source:
            /// the process) to the handlers the host registered in its own process, which a
            /// resource manager takes as the job's failure (Slurm's `mpi/pmix` cancels the
            /// step). Nothing by default; the answer is not waited for.
            26 ClientLost client_lost(proc: Proc) -> ()
                []
                default {}

            /// `abort`: `proc` asks to abort `procs` (all of its namespace when empty).
            2 Abort abort(proc: Proc, status: Status, message: Option<String>, procs: Vec<Proc>)
                -> Result<(), Status>
                [slot abort "pmix_server_abort_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `fence_nb`: complete a fence whose participants span several nodes. `data` is
            /// this node's contribution (opaque); return the concatenation of every node's
            /// contribution.
            3 Fence fence_nb(procs: Vec<Proc>, info: Vec<Info>, data: Vec<u8>)
                -> Result<Vec<u8>, Status>
                [slot fence_nb "pmix_server_fencenb_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `direct_modex`: fetch the data posted by `proc`, which runs on another node,
            /// from that node's server (`PMIx_server_dmodex_request` there).
            4 DirectModex direct_modex(proc: Proc, info: Vec<Info>) -> Result<Vec<u8>, Status>
                [slot direct_modex "pmix_server_dmodex_req_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `publish`: store `info` published by `proc` (range and persistence are in
            /// `info`).
            5 Publish publish(proc: Proc, info: Vec<Info>) -> Result<(), Status>
                [slot publish "pmix_server_publish_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `lookup`: find published data (`PMIX_WAIT` in `info` asks to wait for it).
            6 Lookup lookup(proc: Proc, keys: Vec<String>, info: Vec<Info>)
                -> Result<Vec<PData>, Status>
                [slot lookup "pmix_server_lookup_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `unpublish`: remove data `proc` published (no keys: all of its own).
            7 Unpublish unpublish(proc: Proc, keys: Vec<String>, info: Vec<Info>)
                -> Result<(), Status>
                [slot unpublish "pmix_server_unpublish_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `tool_connected`: a tool or launcher connected. `info` holds what it sent with
            /// its connect message and `PMIX_VERSION_INFO`, `PMIX_USERID`, `PMIX_GRPID`, plus
            /// `PMIX_NSPACE` and `PMIX_RANK` when it brought its own identifier. Return the
            /// identifier it is to use (its own, or a new one when it asked for one), or
            /// refuse it.
            ///
            /// A host without tool support (the default) leaves tools that bring their own
            /// identifier to the server alone and refuses those that need one.
            8 ToolConnected tool_connected(info: Vec<Info>) -> Result<Proc, Status>
                [slot tool_connected "pmix_server_tool_connection_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `register_events`: watch `codes` and send this server their events
            /// ([`crate::server::Server::notify_event`]) (§17.3.14). The server asks once per
            /// code, and only for environmental codes (`PMIX_EVENT_SYS_BASE` to
            /// `PMIX_EVENT_SYS_OTHER`) and codes outside the standard's range, the first time a
            /// local client registers for one; `info` holds the client's directives with its
            /// `PMIX_USERID` and `PMIX_GRPID`. The events of a job's own processes are the
            /// host's to send unasked. An error fails the client's registration; the default,
            /// `PMIX_ERR_NOT_SUPPORTED`, says the host watches no codes on request, and the
            /// library serves the registration alone.
            9 RegisterEvents register_events(codes: Vec<Status>, info: Vec<Info>)
                -> Result<(), Status>
                [slot register_events "pmix_server_register_events_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `deregister_events`: stop watching `codes`, for which no local client is
            /// registered any more (§17.3.15). The server ignores the answer.
            10 DeregisterEvents deregister_events(codes: Vec<Status>) -> Result<(), Status>
                [slot deregister_events "pmix_server_deregister_events_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `notify_event`: a local client raised an event whose range reaches beyond this
            /// node (§10.1.8, §17.3). Deliver it to the other nodes' servers in range (their
            /// [`crate::server::Server::notify_event`]); this server already delivered it
            /// locally.
            11 NotifyEvent notify_event(status: Status, source: Proc, range: DataRange, info: Vec<Info>)
                -> Result<(), Status>
                [slot notify_event "pmix_server_notify_event_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `spawn`: start the job `proc` asks for (§12.2, §17.3): `job_info` holds the
            /// job-level directives (with what the library adds, §17.3.11: the requester's
            /// `PMIX_USERID` and `PMIX_GRPID`, `PMIX_REQUESTOR_IS_TOOL`,
            /// `PMIX_REQUESTOR_IS_CLIENT`, `PMIX_SPAWNED` and `PMIX_PARENT_ID`), each app its
            /// command, arguments, environment, working directory, number of processes and
            /// directives. Register the new namespace with the servers of the nodes it runs on
            /// (with `PMIX_PARENT_ID` and, per process, `PMIX_SPAWNED`) before answering with
            /// it, so the requester receives its job information. [`crate::host::launch`]
            /// checks a request and builds that information for a job on one node. A request
            /// that cannot start fails with the standard's job status
            /// (`PMIX_ERR_JOB_EXE_NOT_FOUND`, …).
            12 Spawn spawn(proc: Proc, job_info: Vec<Info>, apps: Vec<App>) -> Result<Nspace, Status>
                [slot spawn "pmix_server_spawn_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `log`: log `data` (each info a channel and its message) for `proc` as
            /// `directives` say (§12.4.1; the server adds the requester's `PMIX_USERID` and
            /// `PMIX_GRPID` to them); `timestamp` is the request's (0: none). The default is
            /// this library's own logging to the local channels (stderr, stdout, syslog; see
            /// [`crate::host::log`]); a host with channels of its own (a job record, a global
            /// syslog, email) implements it.
            13 Log log(proc: Proc, timestamp: i64, data: Vec<Info>, directives: Vec<Info>)
                -> Result<(), Status>
                [slot log "pmix_server_log_fn_t"]
                default { write_local_now(&proc, timestamp, &data, &directives) }

            /// `allocate`: a request of `proc` for a new allocation, or to extend, release or
            /// reacquire one (`directive`), with its attributes (`PMIX_ALLOC_NUM_NODES`,
            /// `PMIX_ALLOC_TIME`, …) and the requester's ids in `info` (§13.1.1). Return what
            /// the request produced (`PMIX_ALLOC_ID`, …).
            14 Allocate allocate(proc: Proc, directive: AllocDirective, info: Vec<Info>)
                -> Result<Vec<Info>, Status>
                [slot allocate "pmix_server_alloc_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `job_control`: act on `targets` (none: the requester's namespace) as
            /// `directives` say: signal, pause, resume, kill, terminate, checkpoint, cleanup
            /// registrations, … (§13.2.1).
            15 JobControl job_control(proc: Proc, targets: Vec<Proc>, directives: Vec<Info>)
                -> Result<Vec<Info>, Status>
                [slot job_control "pmix_server_job_control_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `monitor`: watch what `monitor` names for `proc` (`PMIX_MONITOR_HEARTBEAT`, a
            /// file, …) and raise `error` when it fails; `PMIX_SEND_HEARTBEAT` is a heartbeat
            /// of `proc`, and `PMIX_MONITOR_CANCEL` in `directives` ends a monitor (§13.3.1).
            16 Monitor monitor(proc: Proc, monitor: Info, error: Status, directives: Vec<Info>)
                -> Result<Vec<Info>, Status>
                [slot monitor "pmix_server_monitor_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `connect`: complete a connect of `procs`, which span several nodes, once every
            /// node's servers have seen all their local participants call it (§12.3.1, §17.3):
            /// a collective among the nodes involved, as `fence_nb` is, without data.
            /// Afterwards the processes of each namespace may read the others' job
            /// information, which the servers involved must hold (registered there, or
            /// delivered by the host).
            17 Connect connect(procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status>
                [slot connect "pmix_server_connect_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `disconnect`: the collective that ends a connection of `procs` (§12.3.3).
            18 Disconnect disconnect(procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status>
                [slot disconnect "pmix_server_disconnect_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `group`: construct or destruct (`op`) the process group `group` of `procs`
            /// across the nodes involved, once this node's members have all called it
            /// (§17.3.27): a collective, as `connect` is. The server translates group ids into
            /// their members before the host sees them. Answer with what the group gets:
            /// `PMIX_GROUP_CONTEXT_ID` when `directives` ask for
            /// `PMIX_GROUP_ASSIGN_CONTEXT_ID`. A directive of `PMIX_LOCAL_COLLECTIVE_STATUS`
            /// means a local member was lost: end it with an error everywhere. With
            /// `PMIX_GROUP_NOTIFY_TERMINATION` or `PMIX_GROUP_FT_COLLECTIVE`, a host may
            /// instead go on without members that terminate (`procs` still names them all) and
            /// answer with `PMIX_GROUP_MEMBERSHIP`, the members still in, the same at every
            /// node.
            19 Group group(op: GroupOperation, group: String, procs: Vec<Proc>, directives: Vec<Info>)
                -> Result<Vec<Info>, Status>
                [slot group "pmix_server_grp_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `fabric`: describe a fabric for `proc` (§15.4, §17.3.28): `op` is
            /// `PMIX_FABRIC_REQUEST_INFO` for a registration, whose `directives` may name the
            /// fabric (`PMIX_FABRIC_IDENTIFIER`, `PMIX_FABRIC_VENDOR`, `PMIX_FABRIC_PLANE`), or
            /// `PMIX_FABRIC_UPDATE_INFO` with the `PMIX_FABRIC_INDEX` the registration
            /// returned. Answer with the fabric's information: its `PMIX_FABRIC_INDEX` and
            /// `PMIX_FABRIC_IDENTIFIER`, and what else the host knows of it (vendor, devices,
            /// …); a fabric the host does not know is `PMIX_ERR_NOT_FOUND`.
            20 Fabric fabric(proc: Proc, op: FabricOperation, directives: Vec<Info>)
                -> Result<Vec<Info>, Status>
                [slot fabric "pmix_server_fabric_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `query`: answer the keys of `proc`'s queries the server could not answer from
            /// what it holds (§7.1, §17.3). Each query's qualifiers end with the requester's
            /// `PMIX_USERID` and `PMIX_GRPID`. Return one info per key answered, keyed by the
            /// query key, in query order; keys left out are reported as not found.
            /// `PMIX_QUERY_NAMESPACES` left out is answered by the server with the namespaces
            /// registered with it.
            21 Query query(proc: Proc, queries: Vec<Query>) -> Result<Vec<Info>, Status>
                [slot query "pmix_server_query_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `get_credential`: a credential for `proc` from the host's security system
            /// (munge, a site service, …) as `info` asks (§16.1, §17.3), with what describes
            /// it (`PMIX_CRED_TYPE`, …). A host without one (the default) leaves the library
            /// to vouch for the identity it verified itself ([`crate::server::credential`]).
            22 GetCredential get_credential(proc: Proc, info: Vec<Info>)
                -> Result<(Vec<u8>, Vec<Info>), Status>
                [slot get_credential "pmix_server_get_cred_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `validate_credential`: check `credential`, presented by `proc`, with the host's
            /// security system (§16.2, §17.3) and return what it proves (`PMIX_USERID`,
            /// `PMIX_GRPID`, …), or `PMIX_ERR_INVALID_CRED`. The default leaves validation to
            /// the library, which validates the credentials it sealed.
            23 ValidateCredential validate_credential(proc: Proc, credential: Vec<u8>, directives: Vec<Info>)
                -> Result<Vec<Info>, Status>
                [slot validate_credential "pmix_server_validate_cred_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `iof_pull`: a client or tool pulls the output of `procs` on `channels`
            /// (§18.5.7, §17.3.21): forward that output, wherever it is produced, to this
            /// server with [`crate::server::Server::iof_deliver`], which hands it to every
            /// puller that asked for it. `directives` are the puller's (buffering,
            /// `PMIX_IOF_TAG_OUTPUT`, …) with its `PMIX_USERID` and `PMIX_GRPID`. When the
            /// puller deregisters, the call comes again for the same processes and channels
            /// with [`crate::host::IOF_STOP`] in `directives`.
            24 IofPull iof_pull(procs: Vec<Proc>, directives: Vec<Info>, channels: IofChannel)
                -> Result<(), Status>
                [slot iof_pull "pmix_server_iof_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }

            /// `push_stdin`: `source` (a tool or client) pushes `data` to the standard input of
            /// `targets` (§18.5.9, §17.3.22); `directives` hold the pusher's ids and its
            /// attributes (`PMIX_IOF_COMPLETE`: the input has ended). No data: directives only.
            25 PushStdin push_stdin(source: Proc, targets: Vec<Proc>, directives: Vec<Info>, data: Option<Vec<u8>>)
                -> Result<(), Status>
                [slot push_stdin "pmix_server_stdin_fn_t"]
                default { Err(Status::ERR_NOT_SUPPORTED) }
        }
    };
}
