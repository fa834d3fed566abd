//! The host upcalls as messages: each call the core asks its driver to make of the host, and
//! the host's answer.

use crate::model::{
    AllocDirective, App, DataRange, FabricOperation, GroupOperation, Info, Nspace, PData, Proc,
    Query, Status,
};

/// An upcall the driver must make to the host.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum HostCall {
    ClientConnected(Proc),
    ClientFinalized(Proc),
    Abort {
        proc: Proc,
        status: Status,
        message: Option<String>,
        procs: Vec<Proc>,
    },
    /// `fence_nb`: the local data of the participants, to be exchanged with the other nodes.
    Fence {
        procs: Vec<Proc>,
        info: Vec<Info>,
        data: Vec<u8>,
    },
    /// `direct_modex`: fetch the data of a process on another node.
    DirectModex {
        proc: Proc,
        info: Vec<Info>,
    },
    Publish {
        proc: Proc,
        info: Vec<Info>,
    },
    Lookup {
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    },
    Unpublish {
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    },
    /// `tool_connected`: a tool or launcher is connecting; answer with its identifier.
    ToolConnected {
        info: Vec<Info>,
    },
    /// `register_events`: watch environmental or non-standard event codes a local client
    /// registered for, none of which the host was asked before (§17.3.14); `info` is the
    /// client's, with its `PMIX_USERID` and `PMIX_GRPID`.
    RegisterEvents {
        codes: Vec<Status>,
        info: Vec<Info>,
    },
    /// `deregister_events`: stop watching codes no local client is registered for any more
    /// (§17.3.15).
    DeregisterEvents {
        codes: Vec<Status>,
    },
    /// `notify_event`: an event of a local client whose range reaches beyond this node.
    NotifyEvent {
        status: Status,
        source: Proc,
        range: DataRange,
        info: Vec<Info>,
    },
    /// `spawn`: start a job for `proc`; answer with the new namespace, registered with this
    /// server before the answer.
    Spawn {
        proc: Proc,
        job_info: Vec<Info>,
        apps: Vec<App>,
    },
    /// `log`: a client's `PMIx_Log`, with its `PMIX_USERID` and `PMIX_GRPID` added to the
    /// directives (§12.4.1).
    Log {
        proc: Proc,
        timestamp: i64,
        data: Vec<Info>,
        directives: Vec<Info>,
    },
    /// `allocate`: a client's `PMIx_Allocation_request` (§13.1.1).
    Allocate {
        proc: Proc,
        directive: AllocDirective,
        info: Vec<Info>,
    },
    /// `job_control`: a client's `PMIx_Job_control` (§13.2.1); no targets: its namespace.
    JobControl {
        proc: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
    },
    /// `monitor`: a client's `PMIx_Process_monitor` (§13.3.1), or its heartbeat.
    Monitor {
        proc: Proc,
        monitor: Info,
        error: Status,
        directives: Vec<Info>,
    },
    /// `connect`: a connect whose participants span several nodes.
    Connect {
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    /// `disconnect`: a disconnect whose participants span several nodes.
    Disconnect {
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    /// `group`: construct or destruct a group whose members span several nodes, or ask for
    /// a context id.
    Group {
        op: GroupOperation,
        group: String,
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    /// `fabric`: a client's fabric registration or update.
    Fabric {
        proc: Proc,
        op: FabricOperation,
        directives: Vec<Info>,
    },
    /// `query`: the keys of a client's queries the server could not answer itself.
    Query {
        proc: Proc,
        queries: Vec<Query>,
    },
    /// `get_credential`: a credential for a client, from the host's security system.
    GetCredential {
        proc: Proc,
        info: Vec<Info>,
    },
    /// `validate_credential`: check a credential a client presents.
    ValidateCredential {
        proc: Proc,
        credential: Vec<u8>,
        directives: Vec<Info>,
    },
}

/// The host's answer to a [`HostCall`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum HostResult {
    Status(Status),
    Data(Result<Vec<u8>, Status>),
    Lookup(Result<Vec<PData>, Status>),
    Proc(Result<Proc, Status>),
    Infos(Result<Vec<Info>, Status>),
    Nspace(Result<Nspace, Status>),
    /// A credential and the information that describes it.
    Credential(Result<(Vec<u8>, Vec<Info>), Status>),
}

impl HostResult {
    /// The status of an answer that is not the data the call wanted: its error, or
    /// `PMIX_ERR_BAD_PARAM` for data of another kind.
    pub(super) fn failure(self) -> Status {
        match self {
            HostResult::Status(s)
            | HostResult::Data(Err(s))
            | HostResult::Lookup(Err(s))
            | HostResult::Proc(Err(s))
            | HostResult::Infos(Err(s))
            | HostResult::Nspace(Err(s))
            | HostResult::Credential(Err(s)) => s,
            HostResult::Data(Ok(_))
            | HostResult::Lookup(Ok(_))
            | HostResult::Proc(Ok(_))
            | HostResult::Infos(Ok(_))
            | HostResult::Nspace(Ok(_))
            | HostResult::Credential(Ok(_)) => Status::ERR_BAD_PARAM,
        }
    }
}
