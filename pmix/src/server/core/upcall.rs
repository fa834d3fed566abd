//! The host upcalls as messages: each call the core asks its driver to make of the host
//! ([`HostCall`]), the host's answer ([`HostResult`]), and their byte form.
//!
//! This is the one message form of the `Host` trait's upcalls. The driver turns a call into
//! the trait's method (`HostCall::call`); a host in another process (the conformance
//! harness behind a C library's server) receives the bytes of [`HostCall::to_bytes`] and
//! answers with those of [`HostResult::to_bytes`]. The bytes are this crate's codec,
//! non-described; they are not a message of the PMIx protocol.

use crate::Error;
use crate::codec::{BufferType, Codec, DataBuffer};
use crate::model::{
    AllocDirective, App, DataRange, FabricOperation, GroupOperation, Info, IofChannel, Nspace,
    PData, Proc, Query, Status,
};
use crate::wire::fields::{malformed, one, pack_list, unpack_list};

/// An upcall of the server to its host: one variant per method of the `Host` trait, with
/// the same arguments.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum HostCall {
    /// `client_connected2`: a registered client completed its handshake.
    ClientConnected { proc: Proc },
    /// `client_finalized`: a local client called `PMIx_Finalize`.
    ClientFinalized { proc: Proc },
    /// A local client's connection ended before it finalized ([`crate::host::Host::client_lost`]).
    ClientLost { proc: Proc },
    /// `abort`: `proc` asks the host to abort `procs` (none: its whole namespace).
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
    DirectModex { proc: Proc, info: Vec<Info> },
    /// `publish`: what `proc` publishes, with its directives.
    Publish { proc: Proc, info: Vec<Info> },
    /// `lookup`: the keys `proc` looks up.
    Lookup {
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    },
    /// `unpublish`: the keys `proc` withdraws (none: all of its own).
    Unpublish {
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    },
    /// `tool_connected`: a tool or launcher is connecting; answer with its identifier.
    ToolConnected { info: Vec<Info> },
    /// `register_events`: watch environmental or non-standard event codes a local client
    /// registered for, none of which the host was asked before (§17.3.14); `info` is the
    /// client's, with its `PMIX_USERID` and `PMIX_GRPID`.
    RegisterEvents { codes: Vec<Status>, info: Vec<Info> },
    /// `deregister_events`: stop watching codes no local client is registered for any more
    /// (§17.3.15).
    DeregisterEvents { codes: Vec<Status> },
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
    Connect { procs: Vec<Proc>, info: Vec<Info> },
    /// `disconnect`: a disconnect whose participants span several nodes.
    Disconnect { procs: Vec<Proc>, info: Vec<Info> },
    /// `group`: construct or destruct a group whose members span several nodes, or ask for
    /// a context id.
    Group {
        op: GroupOperation,
        group: String,
        procs: Vec<Proc>,
        directives: Vec<Info>,
    },
    /// `fabric`: a client's fabric registration or update.
    Fabric {
        proc: Proc,
        op: FabricOperation,
        directives: Vec<Info>,
    },
    /// `query`: the keys of a client's queries the server could not answer itself.
    Query { proc: Proc, queries: Vec<Query> },
    /// `get_credential`: a credential for a client, from the host's security system.
    GetCredential { proc: Proc, info: Vec<Info> },
    /// `validate_credential`: check a credential a client presents.
    ValidateCredential {
        proc: Proc,
        credential: Vec<u8>,
        directives: Vec<Info>,
    },
    /// `iof_pull`: forward the output of `procs` on `channels` to this server, as a client's
    /// or tool's `PMIx_IOF_pull` asks (§18.5.7); [`crate::host::IOF_STOP`] in `directives`:
    /// the puller deregistered, stop (§18.5.8).
    IofPull {
        procs: Vec<Proc>,
        directives: Vec<Info>,
        channels: IofChannel,
    },
    /// `push_stdin`: `source`'s `PMIx_IOF_push` of `data` to the standard input of
    /// `targets` (§18.5.9); no data: only directives (`PMIX_IOF_COMPLETE`, …).
    PushStdin {
        source: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
        data: Option<Vec<u8>>,
    },
}

/// The host's answer to a [`HostCall`], by the kind of data the call wants.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum HostResult {
    /// The answer of a call that wants no data.
    Status(Status),
    /// A fence's exchanged data, or a direct modex's.
    Data(Result<Vec<u8>, Status>),
    /// What a lookup found.
    Lookup(Result<Vec<PData>, Status>),
    /// A connecting tool's identifier.
    Proc(Result<Proc, Status>),
    /// The infos of a query, allocation, job control, monitor, fabric, group or credential
    /// validation.
    Infos(Result<Vec<Info>, Status>),
    /// A spawned job's namespace.
    Nspace(Result<Nspace, Status>),
    /// A credential and the information that describes it.
    Credential(Result<(Vec<u8>, Vec<Info>), Status>),
}

impl HostResult {
    /// The answer's status: its error, the status of an answer that is one, or
    /// `PMIX_SUCCESS` for data.
    pub fn status(&self) -> Status {
        match self {
            HostResult::Status(s)
            | HostResult::Data(Err(s))
            | HostResult::Lookup(Err(s))
            | HostResult::Proc(Err(s))
            | HostResult::Infos(Err(s))
            | HostResult::Nspace(Err(s))
            | HostResult::Credential(Err(s)) => *s,
            HostResult::Data(Ok(_))
            | HostResult::Lookup(Ok(_))
            | HostResult::Proc(Ok(_))
            | HostResult::Infos(Ok(_))
            | HostResult::Nspace(Ok(_))
            | HostResult::Credential(Ok(_)) => Status::SUCCESS,
        }
    }

    /// The status of an answer that is not the data the call wanted: its error, or
    /// `PMIX_ERR_BAD_PARAM` for data of another kind.
    pub(crate) fn failure(self) -> Status {
        match self {
            HostResult::Data(Ok(_))
            | HostResult::Lookup(Ok(_))
            | HostResult::Proc(Ok(_))
            | HostResult::Infos(Ok(_))
            | HostResult::Nspace(Ok(_))
            | HostResult::Credential(Ok(_)) => Status::ERR_BAD_PARAM,
            other => other.status(),
        }
    }
}

/// A buffer the byte form is written into.
struct Out(DataBuffer);

impl Out {
    fn new(code: u8) -> Result<Self, Error> {
        let mut out = Out(DataBuffer::with_type(BufferType::NonDescribed));
        out.one(&code)?;
        Ok(out)
    }

    fn one<T: Codec>(&mut self, value: &T) -> Result<(), Error> {
        self.0.pack(std::slice::from_ref(value))
    }

    fn list<T: Codec>(&mut self, values: &[T]) -> Result<(), Error> {
        pack_list(&mut self.0, values)
    }

    /// An answer's outcome: a flag, then the status of a failure (the data follows a
    /// success).
    fn outcome<'a, T>(&mut self, result: &'a Result<T, Status>) -> Result<Option<&'a T>, Error> {
        self.one(&result.is_ok())?;
        match result {
            Ok(value) => Ok(Some(value)),
            Err(status) => self.one(status).map(|()| None),
        }
    }

    fn bytes(mut self) -> Vec<u8> {
        self.0.unload()
    }
}

/// A buffer the byte form is read from.
struct In(DataBuffer);

impl In {
    fn new(bytes: &[u8]) -> Self {
        In(DataBuffer::load(bytes.to_vec(), BufferType::NonDescribed))
    }

    fn one<T: Codec>(&mut self, what: &str) -> Result<T, Error> {
        one(&mut self.0, what)
    }

    fn list<T: Codec>(&mut self, what: &str) -> Result<Vec<T>, Error> {
        unpack_list(&mut self.0, what)
    }

    fn proc(&mut self) -> Result<Proc, Error> {
        self.one("proc")
    }

    fn procs(&mut self) -> Result<Vec<Proc>, Error> {
        self.list("procs")
    }

    fn info(&mut self) -> Result<Vec<Info>, Error> {
        self.list("info")
    }

    fn keys(&mut self) -> Result<Vec<String>, Error> {
        self.list("keys")
    }

    /// What [`Out::outcome`] wrote, with `data` reading the data of a success.
    fn outcome<T>(
        &mut self,
        data: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<Result<T, Status>, Error> {
        if self.one::<bool>("outcome")? {
            data(self).map(Ok)
        } else {
            self.one("status").map(Err)
        }
    }

    /// The end of a message: bytes left over mean it was not what its code said.
    fn end<T>(self, value: T) -> Result<T, Error> {
        if self.0.unread().is_empty() {
            Ok(value)
        } else {
            Err(malformed("bytes after the end of a host upcall"))
        }
    }
}

impl HostCall {
    /// The call as bytes, for a host in another process.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out;
        match self {
            HostCall::ClientConnected { proc } => {
                out = Out::new(0)?;
                out.one(proc)?;
            }
            HostCall::ClientFinalized { proc } => {
                out = Out::new(1)?;
                out.one(proc)?;
            }
            HostCall::ClientLost { proc } => {
                out = Out::new(26)?;
                out.one(proc)?;
            }
            HostCall::Abort {
                proc,
                status,
                message,
                procs,
            } => {
                out = Out::new(2)?;
                out.one(proc)?;
                out.one(status)?;
                out.one(message)?;
                out.list(procs)?;
            }
            HostCall::Fence { procs, info, data } => {
                out = Out::new(3)?;
                out.list(procs)?;
                out.list(info)?;
                out.list(data)?;
            }
            HostCall::DirectModex { proc, info } => {
                out = Out::new(4)?;
                out.one(proc)?;
                out.list(info)?;
            }
            HostCall::Publish { proc, info } => {
                out = Out::new(5)?;
                out.one(proc)?;
                out.list(info)?;
            }
            HostCall::Lookup { proc, keys, info } => {
                out = Out::new(6)?;
                out.one(proc)?;
                out.list(keys)?;
                out.list(info)?;
            }
            HostCall::Unpublish { proc, keys, info } => {
                out = Out::new(7)?;
                out.one(proc)?;
                out.list(keys)?;
                out.list(info)?;
            }
            HostCall::ToolConnected { info } => {
                out = Out::new(8)?;
                out.list(info)?;
            }
            HostCall::RegisterEvents { codes, info } => {
                out = Out::new(9)?;
                out.list(codes)?;
                out.list(info)?;
            }
            HostCall::DeregisterEvents { codes } => {
                out = Out::new(10)?;
                out.list(codes)?;
            }
            HostCall::NotifyEvent {
                status,
                source,
                range,
                info,
            } => {
                out = Out::new(11)?;
                out.one(status)?;
                out.one(source)?;
                out.one(range)?;
                out.list(info)?;
            }
            HostCall::Spawn {
                proc,
                job_info,
                apps,
            } => {
                out = Out::new(12)?;
                out.one(proc)?;
                out.list(job_info)?;
                out.list(apps)?;
            }
            HostCall::Log {
                proc,
                timestamp,
                data,
                directives,
            } => {
                out = Out::new(13)?;
                out.one(proc)?;
                out.one(timestamp)?;
                out.list(data)?;
                out.list(directives)?;
            }
            HostCall::Allocate {
                proc,
                directive,
                info,
            } => {
                out = Out::new(14)?;
                out.one(proc)?;
                out.one(directive)?;
                out.list(info)?;
            }
            HostCall::JobControl {
                proc,
                targets,
                directives,
            } => {
                out = Out::new(15)?;
                out.one(proc)?;
                out.list(targets)?;
                out.list(directives)?;
            }
            HostCall::Monitor {
                proc,
                monitor,
                error,
                directives,
            } => {
                out = Out::new(16)?;
                out.one(proc)?;
                out.one(monitor)?;
                out.one(error)?;
                out.list(directives)?;
            }
            HostCall::Connect { procs, info } => {
                out = Out::new(17)?;
                out.list(procs)?;
                out.list(info)?;
            }
            HostCall::Disconnect { procs, info } => {
                out = Out::new(18)?;
                out.list(procs)?;
                out.list(info)?;
            }
            HostCall::Group {
                op,
                group,
                procs,
                directives,
            } => {
                out = Out::new(19)?;
                out.one(&op.0)?;
                out.one(group)?;
                out.list(procs)?;
                out.list(directives)?;
            }
            HostCall::Fabric {
                proc,
                op,
                directives,
            } => {
                out = Out::new(20)?;
                out.one(proc)?;
                out.one(&op.0)?;
                out.list(directives)?;
            }
            HostCall::Query { proc, queries } => {
                out = Out::new(21)?;
                out.one(proc)?;
                out.list(queries)?;
            }
            HostCall::GetCredential { proc, info } => {
                out = Out::new(22)?;
                out.one(proc)?;
                out.list(info)?;
            }
            HostCall::ValidateCredential {
                proc,
                credential,
                directives,
            } => {
                out = Out::new(23)?;
                out.one(proc)?;
                out.list(credential)?;
                out.list(directives)?;
            }
            HostCall::IofPull {
                procs,
                directives,
                channels,
            } => {
                out = Out::new(24)?;
                out.list(procs)?;
                out.list(directives)?;
                out.one(channels)?;
            }
            HostCall::PushStdin {
                source,
                targets,
                directives,
                data,
            } => {
                out = Out::new(25)?;
                out.one(source)?;
                out.list(targets)?;
                out.list(directives)?;
                out.one(&data.is_some())?;
                if let Some(data) = data {
                    out.list(data)?;
                }
            }
        }
        Ok(out.bytes())
    }

    /// Read what [`HostCall::to_bytes`] wrote. Bytes from another process are not trusted: a
    /// malformed message is an error, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = In::new(bytes);
        let call = match r.one::<u8>("upcall code")? {
            0 => HostCall::ClientConnected { proc: r.proc()? },
            1 => HostCall::ClientFinalized { proc: r.proc()? },
            26 => HostCall::ClientLost { proc: r.proc()? },
            2 => HostCall::Abort {
                proc: r.proc()?,
                status: r.one("status")?,
                message: r.one("message")?,
                procs: r.procs()?,
            },
            3 => HostCall::Fence {
                procs: r.procs()?,
                info: r.info()?,
                data: r.list("data")?,
            },
            4 => HostCall::DirectModex {
                proc: r.proc()?,
                info: r.info()?,
            },
            5 => HostCall::Publish {
                proc: r.proc()?,
                info: r.info()?,
            },
            6 => HostCall::Lookup {
                proc: r.proc()?,
                keys: r.keys()?,
                info: r.info()?,
            },
            7 => HostCall::Unpublish {
                proc: r.proc()?,
                keys: r.keys()?,
                info: r.info()?,
            },
            8 => HostCall::ToolConnected { info: r.info()? },
            9 => HostCall::RegisterEvents {
                codes: r.list("codes")?,
                info: r.info()?,
            },
            10 => HostCall::DeregisterEvents {
                codes: r.list("codes")?,
            },
            11 => HostCall::NotifyEvent {
                status: r.one("status")?,
                source: r.proc()?,
                range: r.one("range")?,
                info: r.info()?,
            },
            12 => HostCall::Spawn {
                proc: r.proc()?,
                job_info: r.info()?,
                apps: r.list("apps")?,
            },
            13 => HostCall::Log {
                proc: r.proc()?,
                timestamp: r.one("timestamp")?,
                data: r.info()?,
                directives: r.info()?,
            },
            14 => HostCall::Allocate {
                proc: r.proc()?,
                directive: r.one("directive")?,
                info: r.info()?,
            },
            15 => HostCall::JobControl {
                proc: r.proc()?,
                targets: r.procs()?,
                directives: r.info()?,
            },
            16 => HostCall::Monitor {
                proc: r.proc()?,
                monitor: r.one("monitor")?,
                error: r.one("error")?,
                directives: r.info()?,
            },
            17 => HostCall::Connect {
                procs: r.procs()?,
                info: r.info()?,
            },
            18 => HostCall::Disconnect {
                procs: r.procs()?,
                info: r.info()?,
            },
            19 => HostCall::Group {
                op: GroupOperation(r.one("operation")?),
                group: r.one("group")?,
                procs: r.procs()?,
                directives: r.info()?,
            },
            20 => HostCall::Fabric {
                proc: r.proc()?,
                op: FabricOperation(r.one("operation")?),
                directives: r.info()?,
            },
            21 => HostCall::Query {
                proc: r.proc()?,
                queries: r.list("queries")?,
            },
            22 => HostCall::GetCredential {
                proc: r.proc()?,
                info: r.info()?,
            },
            23 => HostCall::ValidateCredential {
                proc: r.proc()?,
                credential: r.list("credential")?,
                directives: r.info()?,
            },
            24 => HostCall::IofPull {
                procs: r.procs()?,
                directives: r.info()?,
                channels: r.one("channels")?,
            },
            25 => HostCall::PushStdin {
                source: r.proc()?,
                targets: r.procs()?,
                directives: r.info()?,
                data: if r.one::<bool>("data given")? {
                    Some(r.list("data")?)
                } else {
                    None
                },
            },
            code => return Err(malformed(&format!("no host upcall has code {code}"))),
        };
        r.end(call)
    }
}

impl HostResult {
    /// The answer as bytes, for the server whose host runs in another process.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out;
        match self {
            HostResult::Status(status) => {
                out = Out::new(0)?;
                out.one(status)?;
            }
            HostResult::Data(r) => {
                out = Out::new(1)?;
                if let Some(data) = out.outcome(r)? {
                    out.list(data)?;
                }
            }
            HostResult::Lookup(r) => {
                out = Out::new(2)?;
                if let Some(found) = out.outcome(r)? {
                    out.list(found)?;
                }
            }
            HostResult::Proc(r) => {
                out = Out::new(3)?;
                if let Some(proc) = out.outcome(r)? {
                    out.one(proc)?;
                }
            }
            HostResult::Infos(r) => {
                out = Out::new(4)?;
                if let Some(info) = out.outcome(r)? {
                    out.list(info)?;
                }
            }
            HostResult::Nspace(r) => {
                out = Out::new(5)?;
                if let Some(nspace) = out.outcome(r)? {
                    out.one(nspace)?;
                }
            }
            HostResult::Credential(r) => {
                out = Out::new(6)?;
                if let Some((credential, info)) = out.outcome(r)? {
                    out.list(credential)?;
                    out.list(info)?;
                }
            }
        }
        Ok(out.bytes())
    }

    /// Read what [`HostResult::to_bytes`] wrote; a malformed message is an error.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = In::new(bytes);
        let answer = match r.one::<u8>("answer code")? {
            0 => HostResult::Status(r.one("status")?),
            1 => HostResult::Data(r.outcome(|r| r.list("data"))?),
            2 => HostResult::Lookup(r.outcome(|r| r.list("found"))?),
            3 => HostResult::Proc(r.outcome(In::proc)?),
            4 => HostResult::Infos(r.outcome(In::info)?),
            5 => HostResult::Nspace(r.outcome(|r| r.one("namespace"))?),
            6 => HostResult::Credential(r.outcome(|r| Ok((r.list("credential")?, r.info()?)))?),
            code => return Err(malformed(&format!("no host answer has code {code}"))),
        };
        r.end(answer)
    }
}

#[cfg(test)]
mod tests;
