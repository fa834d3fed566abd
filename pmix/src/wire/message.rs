//! One typed message per command: what a client sends and what the server answers.
//!
//! Each request is the payload of one frame: the command code, then the command's fields, each
//! field one pack call in the peer's buffer type (WIRE.md §5.5). The layouts are OpenPMIx
//! 4.2's, confirmed against `captures/` for the core set; the other commands are typed in
//! [`super::ops`]. Unknown command codes are kept as [`Request::Other`] with their raw body, so
//! the server can answer them with `PMIX_ERR_NOT_SUPPORTED` rather than closing the connection.
//!
//! Replies start with a `PMIX_STATUS` (except the job-info reply, which starts with the
//! namespace), followed by command-specific data; the replies to the other commands are typed
//! in [`super::op_reply`].

use crate::Error;
use crate::codec::{BufferType, DataBuffer, Size};
use crate::model::{
    Buffer, ByteObject, DataRange, DataType, Info, Kval, Nspace, PData, Proc, Rank, Scope, Status,
    Value,
};

use super::command::Command;
use super::fields::{count, malformed, one, pack_info_list, retain_counted, unpack_info_list};
use super::op_reply::OpReply;
use super::ops::Op;
use super::version::Dialect;

/// A request from a client (or tool) to its server.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// `REQ`: the job information of the client's namespace, sent right after the handshake.
    JobInfo,
    /// `ABORT`: `PMIx_Abort(status, msg, procs)`.
    Abort {
        status: Status,
        message: Option<String>,
        procs: Vec<Proc>,
    },
    /// `COMMIT`: the values put since init, in one bucket per scope.
    Commit { buckets: Vec<CommitBucket> },
    /// `FENCENB`: `PMIx_Fence(procs, info)`.
    Fence { procs: Vec<Proc>, info: Vec<Info> },
    /// `GETNB`: a value of another process (or of a namespace, with a wildcard rank).
    Get {
        nspace: String,
        rank: Rank,
        info: Vec<Info>,
        key: Option<String>,
    },
    /// `FINALIZE`: the client is terminating normally.
    Finalize,
    /// `PUBLISHNB`: `PMIx_Publish(info)` by the user `uid`.
    Publish { uid: u32, info: Vec<Info> },
    /// `LOOKUPNB`: `PMIx_Lookup(keys, info)`.
    Lookup {
        uid: u32,
        keys: Vec<String>,
        info: Vec<Info>,
    },
    /// `UNPUBLISHNB`: `PMIx_Unpublish(keys, info)`.
    Unpublish {
        uid: u32,
        keys: Vec<String>,
        info: Vec<Info>,
    },
    /// `REGEVENTS`: the client registered a handler for `codes` (all codes when empty).
    RegisterEvents { codes: Vec<Status>, info: Vec<Info> },
    /// `NOTIFY`: `PMIx_Notify_event` of an event to a range beyond the process itself.
    Notify {
        status: Status,
        range: DataRange,
        info: Vec<Info>,
    },
    /// The typed requests beyond the core set (spawn, query, groups, I/O forwarding, ...).
    Op(Op),
    /// A command code this library does not know: its code and the rest of the payload.
    Other { command: Command, body: Vec<u8> },
}

/// The values committed in one scope: their scope and their key-value pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct CommitBucket {
    pub scope: Scope,
    pub kvals: Vec<Kval>,
}

impl Request {
    /// The request's command code.
    pub fn command(&self) -> Command {
        match self {
            Request::JobInfo => Command::REQ,
            Request::Abort { .. } => Command::ABORT,
            Request::Commit { .. } => Command::COMMIT,
            Request::Fence { .. } => Command::FENCENB,
            Request::Get { .. } => Command::GETNB,
            Request::Finalize => Command::FINALIZE,
            Request::Publish { .. } => Command::PUBLISHNB,
            Request::Lookup { .. } => Command::LOOKUPNB,
            Request::Unpublish { .. } => Command::UNPUBLISHNB,
            Request::RegisterEvents { .. } => Command::REGEVENTS,
            Request::Notify { .. } => Command::NOTIFY,
            Request::Op(op) => op.command(),
            Request::Other { command, .. } => *command,
        }
    }

    /// The request's payload in the given buffer type, in the 4.x layouts.
    pub fn encode(&self, buffer_type: BufferType) -> Result<Vec<u8>, Error> {
        self.encode_for(buffer_type, Dialect::V4)
    }

    /// The request's payload in the given buffer type, in the layouts of a server that
    /// speaks `dialect`.
    pub fn encode_for(&self, buffer_type: BufferType, dialect: Dialect) -> Result<Vec<u8>, Error> {
        let mut b = DataBuffer::with_type(buffer_type);
        b.pack(&[self.command()])?;
        match self {
            Request::JobInfo | Request::Finalize => {}
            Request::Abort {
                status,
                message,
                procs,
            } => {
                b.pack(&[*status])?;
                b.pack(std::slice::from_ref(message))?;
                b.pack(&[Size(procs.len() as u64)])?;
                if !procs.is_empty() {
                    b.pack(procs)?;
                }
            }
            Request::Commit { buckets } => {
                for bucket in buckets {
                    b.pack(&[bucket.scope])?;
                    let mut inner = DataBuffer::with_type(buffer_type);
                    for kv in &bucket.kvals {
                        inner.pack(std::slice::from_ref(kv))?;
                    }
                    let buffer = Buffer {
                        buffer_type: buffer_type.wire_value(),
                        bytes: inner.unload(),
                    };
                    b.pack_values(DataType::BUFFER, &[Value::Buffer(Box::new(buffer))])?;
                }
            }
            Request::Fence { procs, info } => {
                b.pack(&[Size(procs.len() as u64)])?;
                b.pack(procs)?;
                pack_info_list(&mut b, info)?;
            }
            Request::Get {
                nspace,
                rank,
                info,
                key,
            } => {
                b.pack(std::slice::from_ref(nspace))?;
                b.pack(&[*rank])?;
                pack_info_list(&mut b, info)?;
                if let Some(key) = key {
                    b.pack(std::slice::from_ref(key))?;
                }
            }
            Request::Publish { uid, info } => {
                b.pack(&[*uid])?;
                pack_info_list(&mut b, info)?;
            }
            Request::Lookup { uid, keys, info } | Request::Unpublish { uid, keys, info } => {
                b.pack(&[*uid])?;
                b.pack(&[Size(keys.len() as u64)])?;
                for k in keys {
                    b.pack(std::slice::from_ref(k))?;
                }
                pack_info_list(&mut b, info)?;
            }
            Request::RegisterEvents { codes, info } => {
                b.pack(&[Size(codes.len() as u64)])?;
                if !codes.is_empty() {
                    b.pack(codes)?;
                }
                pack_info_list(&mut b, info)?;
            }
            Request::Notify {
                status,
                range,
                info,
            } => {
                b.pack(&[*status])?;
                b.pack(&[*range])?;
                pack_info_list(&mut b, info)?;
            }
            Request::Op(op) => op.encode_fields(&mut b, dialect)?,
            Request::Other { body, .. } => {
                let mut bytes = b.unload();
                bytes.extend_from_slice(body);
                return Ok(bytes);
            }
        }
        Ok(b.unload())
    }

    /// Parse a request payload sent in the given buffer type, in the 4.x layouts.
    pub fn decode(payload: &[u8], buffer_type: BufferType) -> Result<Request, Error> {
        Self::decode_for(payload, buffer_type, Dialect::V4)
    }

    /// Parse a request payload sent in the given buffer type by a client that speaks
    /// `dialect`.
    pub fn decode_for(
        payload: &[u8],
        buffer_type: BufferType,
        dialect: Dialect,
    ) -> Result<Request, Error> {
        let mut b = DataBuffer::load(payload.to_vec(), buffer_type);
        let command: Command = one(&mut b, "command")?;
        let request = match command {
            Command::REQ => Request::JobInfo,
            Command::FINALIZE => Request::Finalize,
            Command::ABORT => {
                let status = one(&mut b, "abort status")?;
                let message: Option<String> = one(&mut b, "abort message")?;
                let n = count(&mut b, "abort procs")?;
                let procs = if n > 0 { b.unpack(n)? } else { Vec::new() };
                Request::Abort {
                    status,
                    message,
                    procs,
                }
            }
            Command::COMMIT => {
                let mut buckets = Vec::new();
                while !b.is_exhausted() {
                    let scope: Scope = one(&mut b, "commit scope")?;
                    let v = b.unpack_values(DataType::BUFFER, 1)?;
                    let Some(Value::Buffer(inner)) = v.into_iter().next() else {
                        return Err(malformed("commit bucket is not a buffer"));
                    };
                    let inner_type =
                        BufferType::from_wire(inner.buffer_type).unwrap_or(buffer_type);
                    let mut ib = DataBuffer::load(inner.bytes, inner_type);
                    let mut kvals = Vec::new();
                    while !ib.is_exhausted() {
                        kvals.extend(ib.unpack::<Kval>(usize::MAX)?);
                    }
                    buckets.push(CommitBucket { scope, kvals });
                }
                Request::Commit { buckets }
            }
            Command::FENCENB => {
                let n = count(&mut b, "fence procs")?;
                let procs = b.unpack(n)?;
                let info = unpack_info_list(&mut b)?;
                Request::Fence { procs, info }
            }
            Command::GETNB => {
                let nspace: String = one(&mut b, "get namespace")?;
                let rank = one(&mut b, "get rank")?;
                let info = unpack_info_list(&mut b)?;
                let key = if b.is_exhausted() {
                    None
                } else {
                    Some(one::<String>(&mut b, "get key")?)
                };
                Request::Get {
                    nspace,
                    rank,
                    info,
                    key,
                }
            }
            Command::PUBLISHNB => {
                let uid = one(&mut b, "publish uid")?;
                let info = unpack_info_list(&mut b)?;
                Request::Publish { uid, info }
            }
            Command::LOOKUPNB | Command::UNPUBLISHNB => {
                let uid = one(&mut b, "uid")?;
                let n = count(&mut b, "key count")?;
                let mut keys = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    keys.push(one::<String>(&mut b, "key")?);
                }
                let info = unpack_info_list(&mut b)?;
                if command == Command::LOOKUPNB {
                    Request::Lookup { uid, keys, info }
                } else {
                    Request::Unpublish { uid, keys, info }
                }
            }
            Command::REGEVENTS => {
                let n = count(&mut b, "event code count")?;
                let codes = if n > 0 { b.unpack(n)? } else { Vec::new() };
                let info = unpack_info_list(&mut b)?;
                Request::RegisterEvents { codes, info }
            }
            Command::NOTIFY => {
                let status = one(&mut b, "event status")?;
                let range = one(&mut b, "event range")?;
                let info = unpack_info_list(&mut b)?;
                Request::Notify {
                    status,
                    range,
                    info,
                }
            }
            _ => match Op::decode_fields(command, &mut b, dialect)? {
                Some(op) => Request::Op(op),
                None => Request::Other {
                    command,
                    body: b.unread().to_vec(),
                },
            },
        };
        Ok(request)
    }
}

/// The data of one process in a get reply: its identifier and values.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcData {
    pub proc: Proc,
    pub kvals: Vec<Kval>,
}

/// A server's reply payload.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// The job information answering [`Request::JobInfo`].
    JobInfo { nspace: Nspace, kvals: Vec<Kval> },
    /// A bare status (commit, fence, finalize, publish, unpublish, abort, and any failure).
    Status(Status),
    /// The answer to a get: a status and, on success, the data of each process concerned.
    Get { status: Status, data: Vec<ProcData> },
    /// The answer to a lookup.
    Lookup { status: Status, data: Vec<PData> },
    /// The answer to a command beyond the core set.
    Op(OpReply),
}

impl Reply {
    /// The reply's payload in the given buffer type, in the 4.x layouts.
    pub fn encode(&self, buffer_type: BufferType) -> Result<Vec<u8>, Error> {
        self.encode_for(buffer_type, Dialect::V4)
    }

    /// The reply's payload in the given buffer type, in the layouts of a client that speaks
    /// `dialect`.
    pub fn encode_for(&self, buffer_type: BufferType, dialect: Dialect) -> Result<Vec<u8>, Error> {
        let mut b = DataBuffer::with_type(buffer_type);
        match self {
            Reply::JobInfo { nspace, kvals } => {
                b.pack(&[nspace.as_str().to_owned()])?;
                for kv in kvals {
                    b.pack(std::slice::from_ref(kv))?;
                }
            }
            Reply::Status(s) => b.pack(&[*s])?,
            Reply::Get { status, data } => {
                b.pack(&[*status])?;
                for d in data {
                    let mut inner = DataBuffer::with_type(buffer_type);
                    inner.pack(std::slice::from_ref(&d.proc))?;
                    for kv in &d.kvals {
                        inner.pack(std::slice::from_ref(kv))?;
                    }
                    b.pack(&[ByteObject(inner.unload())])?;
                }
            }
            Reply::Op(op) => return op.encode_for(buffer_type, dialect),
            Reply::Lookup { status, data } => {
                b.pack(&[*status])?;
                // OpenPMIx 4.2 sends data with PMIX_SUCCESS only, and its client reads nothing
                // after another status; a partial success carries what was found here too, as
                // v5.0 §9.6 wants, and costs an OpenPMIx client nothing.
                if *status == Status::SUCCESS || *status == Status::ERR_PARTIAL_SUCCESS {
                    b.pack(&[Size(data.len() as u64)])?;
                    if !data.is_empty() {
                        b.pack(data)?;
                    }
                }
            }
        }
        Ok(b.unload())
    }

    /// Whether a value the reply carries (nested ones included) is one `pred` picks.
    pub fn any_value(&self, pred: &dyn Fn(&Value) -> bool) -> bool {
        match self {
            Reply::JobInfo { kvals, .. } => kvals.iter().any(|kv| pred(&kv.value)),
            Reply::Get { data, .. } => (data.iter())
                .flat_map(|d| &d.kvals)
                .any(|kv| pred(&kv.value)),
            Reply::Lookup { data, .. } => data.iter().any(|d| pred(&d.value)),
            Reply::Status(_) => false,
            Reply::Op(op) => op.any_value(pred),
        }
    }

    /// Leave out of the reply the key-value pairs, infos and published data whose value
    /// `keep` refuses; how many were left out.
    pub fn retain_values(&mut self, keep: &dyn Fn(&Value) -> bool) -> usize {
        match self {
            Reply::JobInfo { kvals, .. } => retain_counted(kvals, |kv| keep(&kv.value)),
            Reply::Get { data, .. } => (data.iter_mut())
                .map(|d| retain_counted(&mut d.kvals, |kv| keep(&kv.value)))
                .sum(),
            Reply::Lookup { data, .. } => retain_counted(data, |d| keep(&d.value)),
            Reply::Status(_) => 0,
            Reply::Op(op) => op.retain_values(keep),
        }
    }

    /// Parse a reply to a request of the given command, in the 4.x layouts.
    pub fn decode(
        command: Command,
        payload: &[u8],
        buffer_type: BufferType,
    ) -> Result<Reply, Error> {
        Self::decode_for(command, payload, buffer_type, Dialect::V4)
    }

    /// Parse a reply to a request of the given command from a server that speaks `dialect`.
    pub fn decode_for(
        command: Command,
        payload: &[u8],
        buffer_type: BufferType,
        dialect: Dialect,
    ) -> Result<Reply, Error> {
        if let Some(op) = OpReply::decode_for(command, payload, buffer_type, dialect)? {
            return Ok(Reply::Op(op));
        }
        let mut b = DataBuffer::load(payload.to_vec(), buffer_type);
        match command {
            Command::REQ => {
                let ns: String = one(&mut b, "job-info namespace")?;
                let nspace = Nspace::new(ns).map_err(|e| malformed(&e.to_string()))?;
                let mut kvals = Vec::new();
                while !b.is_exhausted() {
                    kvals.extend(b.unpack::<Kval>(usize::MAX)?);
                }
                Ok(Reply::JobInfo { nspace, kvals })
            }
            Command::GETNB => {
                let status = one(&mut b, "get status")?;
                let mut data = Vec::new();
                while !b.is_exhausted() {
                    for bo in b.unpack::<ByteObject>(usize::MAX)? {
                        let mut inner = DataBuffer::load(bo.0, buffer_type);
                        let proc: Proc = one(&mut inner, "get reply process")?;
                        let mut kvals = Vec::new();
                        while !inner.is_exhausted() {
                            kvals.extend(inner.unpack::<Kval>(usize::MAX)?);
                        }
                        data.push(ProcData { proc, kvals });
                    }
                }
                Ok(Reply::Get { status, data })
            }
            Command::LOOKUPNB => {
                let status = one(&mut b, "lookup status")?;
                let mut data = Vec::new();
                let with_data = status == Status::SUCCESS || status == Status::ERR_PARTIAL_SUCCESS;
                if with_data && !b.is_exhausted() {
                    let n = count(&mut b, "lookup count")?;
                    if n > 0 {
                        data = b.unpack(n)?;
                    }
                }
                Ok(Reply::Lookup { status, data })
            }
            _ => Ok(Reply::Status(one(&mut b, "status")?)),
        }
    }
}

/// A server-pushed event notification (tag 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    pub status: Status,
    pub source: Proc,
    pub info: Vec<Info>,
    pub range: DataRange,
}

impl Notification {
    pub fn encode(&self, buffer_type: BufferType) -> Result<Vec<u8>, Error> {
        let mut b = DataBuffer::with_type(buffer_type);
        b.pack(&[Command::NOTIFY])?;
        b.pack(&[self.status])?;
        b.pack(std::slice::from_ref(&self.source))?;
        pack_info_list(&mut b, &self.info)?;
        b.pack(&[self.range])?;
        Ok(b.unload())
    }

    pub fn decode(payload: &[u8], buffer_type: BufferType) -> Result<Self, Error> {
        let mut b = DataBuffer::load(payload.to_vec(), buffer_type);
        let command: Command = one(&mut b, "command")?;
        if command != Command::NOTIFY {
            return Err(malformed("a notification must carry the NOTIFY command"));
        }
        let status = one(&mut b, "event status")?;
        let source = one(&mut b, "event source")?;
        let info = unpack_info_list(&mut b)?;
        let range = if b.is_exhausted() {
            DataRange::UNDEF
        } else {
            one(&mut b, "event range")?
        };
        Ok(Notification {
            status,
            source,
            info,
            range,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::attr;

    fn nd() -> BufferType {
        BufferType::NonDescribed
    }

    #[test]
    fn every_typed_request_round_trips_in_both_buffer_types() {
        let p = Proc::try_new("job", 1).unwrap();
        let requests = vec![
            Request::JobInfo,
            Request::Finalize,
            Request::Abort {
                status: Status(-1),
                message: Some("bye".into()),
                procs: vec![p.clone()],
            },
            Request::Commit {
                buckets: vec![CommitBucket {
                    scope: Scope::GLOBAL,
                    kvals: vec![Kval {
                        key: crate::model::Key::new("k").unwrap(),
                        value: Value::Int32(3),
                    }],
                }],
            },
            Request::Fence {
                procs: vec![p.clone()],
                info: vec![Info::new(attr::COLLECT_DATA, true)],
            },
            Request::Get {
                nspace: "job".into(),
                rank: Rank(1),
                info: vec![],
                key: Some("k".into()),
            },
            Request::Publish {
                uid: 1000,
                info: vec![Info::with_key("svc", "x").unwrap()],
            },
            Request::Lookup {
                uid: 0,
                keys: vec!["a".into(), "b".into()],
                info: vec![],
            },
            Request::Unpublish {
                uid: 0,
                keys: vec!["a".into()],
                info: vec![],
            },
            Request::RegisterEvents {
                codes: vec![Status(-1), Status(-25)],
                info: vec![],
            },
            Request::Notify {
                status: Status(-61),
                range: DataRange::NAMESPACE,
                info: vec![Info::with_key("x", 1u32).unwrap()],
            },
            // An unknown command code keeps its body.
            Request::Other {
                command: Command(200),
                body: vec![1, 2, 3],
            },
        ];
        for bt in [BufferType::NonDescribed, BufferType::FullyDescribed] {
            for r in &requests {
                let bytes = r.encode(bt).unwrap();
                let back = Request::decode(&bytes, bt);
                assert_eq!(back.as_ref().ok(), Some(r), "{bt:?} {back:?}");
            }
        }
    }

    #[test]
    fn truncations_of_a_request_never_panic() {
        let r = Request::Fence {
            procs: vec![Proc::try_new("job", Rank::WILDCARD).unwrap()],
            info: vec![Info::new(attr::COLLECT_DATA, true)],
        };
        let bytes = r.encode(nd()).unwrap();
        for cut in 0..bytes.len() {
            let _ = Request::decode(&bytes[..cut], nd());
        }
    }
}
