//! The server's replies to the commands beyond the core set, typed one variant per layout.
//!
//! Layouts are those OpenPMIx 4.2.2's server packs in its reply callbacks and its client
//! unpacks (read from its source). Every reply starts with a `PMIX_STATUS`. When a server
//! refuses a request before doing anything (an unsupported command, a malformed request) the
//! reply is that status alone, so every decoder below accepts a reply that ends after a
//! non-success status.
//!
//! | commands | fields after the status |
//! |---|---|
//! | `SPAWNNB` | STRING new namespace (NULL on failure), then on success KVAL... its job information until the end |
//! | `CONNECTNB` | on success, BYTE_OBJECT... until the end, one per other namespace: STRING namespace, KVAL... its job information |
//! | `QUERY`, `ALLOC`, `JOB_CONTROL`, `MONITOR`, `VALIDATE_CRED`, `FABRIC_REGISTER`, `FABRIC_UPDATE`, and the group invite and join this library adds | SIZE n, INFO\[n\] (packed whatever the status; an invitation's and a join's are the group formed, `PMIX_GROUP_MEMBERSHIP` and any `PMIX_GROUP_CONTEXT_ID`) |
//! | `GET_CREDENTIAL` | on success: BYTE_OBJECT credential, SIZE n, INFO\[n\] (a list that does not unpack is dropped and the credential kept: see the decoder) |
//! | `IOF_PULL` | on success: SIZE the server's id of the registration |
//! | `GROUP_CONSTRUCT` to a 4.x client | SIZE context id (OpenPMIx packs it whatever the status; its client reads it if present) |
//! | `GROUP_CONSTRUCT` to a 5.0 client, on success | SIZE n, PROC\[n\], SIZE context id (OpenPMIx's server then adds a BYTE_OBJECT of job information per other namespace, which its client does not read) |
//! | `GROUP_CONSTRUCT` to a 6.x client, on success | SIZE n, PROC\[n\], BOOL context id given, \[SIZE context id\], SIZE ninfo, ninfo INFO (one pack call each: `PMIX_GROUP_INFO` arrays) |
//! | `COMPUTE_DEVICE_DISTANCES` | SIZE n, DEVICE_DIST\[n\] |
//! | `DISCONNECTNB`, `LOG`, `IOF_PUSH`, `IOF_DEREG`, `GROUP_DESTRUCT`, and the group leave this library adds | nothing |
//! | `REFRESH_CACHE` (5.0) | KVAL... the process's values, one pack call each, until the end |
//! | `SESSION_CTRL` (6.1) | on success, SIZE n, INFO\[n\] (this library packs the count whatever the status, as for the other lists of infos) |
//! | `RESOLVE_PEERS` (5.0) | on success, SIZE n, PROC\[n\] |
//! | `RESOLVE_NODE` (5.0) | on success, STRING the comma-separated node names |
//! | `RESBLK`, `REQ_SYSINFO` (6.1) | nothing (this library refuses both) |
//! | `DEREGEVENTS` | no reply is sent |

use crate::Error;
use crate::codec::{BufferType, DataBuffer, Size};
use crate::model::{ByteObject, DeviceDistance, Info, Kval, Proc, Status, Value};

use super::command::Command;
use super::fields::{
    count, one, pack_info_list, pack_list, retain_counted, unpack_info_list, unpack_list,
};
use super::version::Dialect;

/// The job information of one namespace, as a connect reply carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct JobData {
    pub nspace: String,
    pub kvals: Vec<Kval>,
}

/// A typed reply to one of the commands beyond the core set.
#[derive(Clone, Debug, PartialEq)]
pub enum OpReply {
    /// `SPAWNNB`: the namespace of the spawned job and its job-level information.
    Spawn {
        status: Status,
        nspace: Option<String>,
        job_info: Vec<Kval>,
    },
    /// `CONNECTNB`: the job information of every other namespace taking part.
    Connect { status: Status, jobs: Vec<JobData> },
    /// `QUERY`, `ALLOC`, `JOB_CONTROL`, `MONITOR`, `VALIDATE_CRED`, `FABRIC_REGISTER`,
    /// `FABRIC_UPDATE`, `GROUP_INVITE` and `GROUP_JOIN`: results as a list of infos.
    Infos {
        command: Command,
        status: Status,
        info: Vec<Info>,
    },
    /// `GET_CREDENTIAL`: the credential and any information about it.
    Credential {
        status: Status,
        credential: Option<ByteObject>,
        info: Vec<Info>,
    },
    /// `IOF_PULL`: the server's reference for the registration, needed to deregister it.
    IofPull {
        status: Status,
        remote_id: Option<u64>,
    },
    /// `GROUP_CONSTRUCT`: the group's context id, when the host assigned one, and its
    /// members, which travel only to and from 5.0 and later peers (their clients keep them
    /// for the destruct) and only with a success.
    GroupConstruct {
        status: Status,
        context_id: Option<u64>,
        members: Vec<Proc>,
    },
    /// `COMPUTE_DEVICE_DISTANCES`: the distances from the caller's cpuset to each device.
    DeviceDistances {
        status: Status,
        distances: Vec<DeviceDistance>,
    },
    /// `REFRESH_CACHE`: the values of the process the server holds now.
    RefreshCache { status: Status, kvals: Vec<Kval> },
    /// `RESOLVE_PEERS`: the processes on the node asked about.
    ResolvedPeers { status: Status, procs: Vec<Proc> },
    /// `RESOLVE_NODE`: the nodes, comma-separated (`None`: a NULL string).
    ResolvedNode {
        status: Status,
        nodes: Option<String>,
    },
    /// The commands answered by a status alone.
    Status { command: Command, status: Status },
}

/// Commands whose reply carries data besides the status, or whose reply this module types.
const INFO_REPLIES: [Command; 10] = [
    Command::QUERY,
    Command::ALLOC,
    Command::JOB_CONTROL,
    Command::MONITOR,
    Command::VALIDATE_CRED,
    Command::FABRIC_REGISTER,
    Command::FABRIC_UPDATE,
    Command::GROUP_INVITE,
    Command::GROUP_JOIN,
    Command::SESSION_CTRL,
];

const STATUS_REPLIES: [Command; 8] = [
    Command::DISCONNECTNB,
    Command::LOG,
    Command::IOF_PUSH,
    Command::IOF_DEREG,
    Command::GROUP_DESTRUCT,
    Command::GROUP_LEAVE,
    Command::RESBLK,
    Command::REQ_SYSINFO,
];

impl OpReply {
    /// The command this reply answers.
    pub fn command(&self) -> Command {
        match self {
            OpReply::Spawn { .. } => Command::SPAWNNB,
            OpReply::Connect { .. } => Command::CONNECTNB,
            OpReply::Infos { command, .. } | OpReply::Status { command, .. } => *command,
            OpReply::Credential { .. } => Command::GET_CREDENTIAL,
            OpReply::IofPull { .. } => Command::IOF_PULL,
            OpReply::GroupConstruct { .. } => Command::GROUP_CONSTRUCT,
            OpReply::DeviceDistances { .. } => Command::COMPUTE_DEVICE_DISTANCES,
            OpReply::RefreshCache { .. } => Command::REFRESH_CACHE,
            OpReply::ResolvedPeers { .. } => Command::RESOLVE_PEERS,
            OpReply::ResolvedNode { .. } => Command::RESOLVE_NODE,
        }
    }

    /// The reply's status.
    pub fn status(&self) -> Status {
        match self {
            OpReply::Spawn { status, .. }
            | OpReply::Connect { status, .. }
            | OpReply::Infos { status, .. }
            | OpReply::Credential { status, .. }
            | OpReply::IofPull { status, .. }
            | OpReply::GroupConstruct { status, .. }
            | OpReply::DeviceDistances { status, .. }
            | OpReply::RefreshCache { status, .. }
            | OpReply::ResolvedPeers { status, .. }
            | OpReply::ResolvedNode { status, .. }
            | OpReply::Status { status, .. } => *status,
        }
    }

    /// Whether `command` is answered by one of these replies (every command beyond the core
    /// set except `DEREGEVENTS`, which has no reply).
    pub fn answers(command: Command) -> bool {
        matches!(
            command,
            Command::SPAWNNB
                | Command::CONNECTNB
                | Command::GET_CREDENTIAL
                | Command::IOF_PULL
                | Command::GROUP_CONSTRUCT
                | Command::COMPUTE_DEVICE_DISTANCES
                | Command::REFRESH_CACHE
                | Command::RESOLVE_PEERS
                | Command::RESOLVE_NODE
        ) || INFO_REPLIES.contains(&command)
            || STATUS_REPLIES.contains(&command)
    }

    /// Whether a value the reply carries (nested ones included) is one `pred` picks.
    pub fn any_value(&self, pred: &dyn Fn(&Value) -> bool) -> bool {
        let in_kvals = |kvals: &[Kval]| kvals.iter().any(|kv| pred(&kv.value));
        match self {
            OpReply::Spawn { job_info, .. } => in_kvals(job_info),
            OpReply::Connect { jobs, .. } => jobs.iter().any(|j| in_kvals(&j.kvals)),
            OpReply::RefreshCache { kvals, .. } => in_kvals(kvals),
            OpReply::Infos { info, .. } | OpReply::Credential { info, .. } => {
                info.iter().any(|i| pred(&i.value))
            }
            _ => false,
        }
    }

    /// Leave out the key-value pairs and infos whose value `keep` refuses; how many were left
    /// out.
    pub fn retain_values(&mut self, keep: &dyn Fn(&Value) -> bool) -> usize {
        let kept = |kv: &Kval| keep(&kv.value);
        match self {
            OpReply::Spawn { job_info, .. } => retain_counted(job_info, kept),
            OpReply::Connect { jobs, .. } => (jobs.iter_mut())
                .map(|j| retain_counted(&mut j.kvals, kept))
                .sum(),
            OpReply::RefreshCache { kvals, .. } => retain_counted(kvals, kept),
            OpReply::Infos { info, .. } | OpReply::Credential { info, .. } => {
                retain_counted(info, |i| keep(&i.value))
            }
            _ => 0,
        }
    }

    /// A reply to `command` with `status` and no data: what a server sends when it refuses or
    /// fails a request, in the layout the requester expects.
    pub fn failure(command: Command, status: Status) -> OpReply {
        match command {
            Command::SPAWNNB => OpReply::Spawn {
                status,
                nspace: None,
                job_info: Vec::new(),
            },
            Command::CONNECTNB => OpReply::Connect {
                status,
                jobs: Vec::new(),
            },
            Command::GET_CREDENTIAL => OpReply::Credential {
                status,
                credential: None,
                info: Vec::new(),
            },
            Command::IOF_PULL => OpReply::IofPull {
                status,
                remote_id: None,
            },
            Command::GROUP_CONSTRUCT => OpReply::GroupConstruct {
                status,
                context_id: None,
                members: Vec::new(),
            },
            Command::COMPUTE_DEVICE_DISTANCES => OpReply::DeviceDistances {
                status,
                distances: Vec::new(),
            },
            Command::REFRESH_CACHE => OpReply::RefreshCache {
                status,
                kvals: Vec::new(),
            },
            Command::RESOLVE_PEERS => OpReply::ResolvedPeers {
                status,
                procs: Vec::new(),
            },
            Command::RESOLVE_NODE => OpReply::ResolvedNode {
                status,
                nodes: None,
            },
            c if INFO_REPLIES.contains(&c) => OpReply::Infos {
                command: c,
                status,
                info: Vec::new(),
            },
            c => OpReply::Status { command: c, status },
        }
    }

    /// The reply in the 4.x layouts.
    pub fn encode(&self, buffer_type: BufferType) -> Result<Vec<u8>, Error> {
        self.encode_for(buffer_type, Dialect::V4)
    }

    /// The reply in the layouts of a client that speaks `dialect`.
    pub fn encode_for(&self, buffer_type: BufferType, dialect: Dialect) -> Result<Vec<u8>, Error> {
        let mut b = DataBuffer::with_type(buffer_type);
        b.pack(&[self.status()])?;
        let ok = self.status() == Status::SUCCESS;
        match self {
            OpReply::Spawn {
                nspace, job_info, ..
            } => {
                b.pack(std::slice::from_ref(nspace))?;
                if ok {
                    pack_each(&mut b, job_info)?;
                }
            }
            OpReply::Connect { jobs, .. } => {
                if ok {
                    for job in jobs {
                        let mut inner = DataBuffer::with_type(buffer_type);
                        inner.pack(std::slice::from_ref(&job.nspace))?;
                        pack_each(&mut inner, &job.kvals)?;
                        b.pack(&[ByteObject(inner.unload())])?;
                    }
                }
            }
            OpReply::Infos { info, .. } => pack_info_list(&mut b, info)?,
            OpReply::Credential {
                credential, info, ..
            } => {
                if ok {
                    let credential = credential.clone().unwrap_or(ByteObject(Vec::new()));
                    b.pack(&[credential])?;
                    pack_info_list(&mut b, info)?;
                }
            }
            OpReply::IofPull { remote_id, .. } => {
                if let (true, Some(id)) = (ok, remote_id) {
                    b.pack(&[Size(*id)])?;
                }
            }
            OpReply::GroupConstruct {
                context_id,
                members,
                ..
            } => match dialect {
                Dialect::V4 => {
                    if let Some(id) = context_id {
                        b.pack(&[Size(*id)])?;
                    }
                }
                // 5.0 and 6.1 clients read members only after a success (6.1 returns at
                // any other status; 5.0 would take a context id for a member count).
                _ if !ok => {}
                Dialect::V5 => {
                    pack_list(&mut b, members)?;
                    // A 5.0 server sends SIZE_MAX when no id was assigned, which its
                    // client then reports as one; leaving the field out tells it "none"
                    // (5.0 `client/pmix_client_group.c:1126-1135` reads it optionally).
                    if let Some(id) = context_id {
                        b.pack(&[Size(*id)])?;
                    }
                }
                Dialect::V6 => {
                    pack_list(&mut b, members)?;
                    b.pack(&[context_id.is_some()])?;
                    if let Some(id) = context_id {
                        b.pack(&[Size(*id)])?;
                    }
                    // The values members posted for the group are served by gets from the
                    // server's store (`store::qualified`), so none travel here.
                    b.pack(&[Size(0)])?;
                }
            },
            OpReply::DeviceDistances { distances, .. } => {
                b.pack(&[Size(distances.len() as u64)])?;
                if !distances.is_empty() {
                    b.pack(distances)?;
                }
            }
            // 6.1's server packs whatever it found after any status; its client stores each
            // one until the buffer ends (6.1 `server/pmix_server_ops.c:2757-2782`).
            OpReply::RefreshCache { kvals, .. } => pack_each(&mut b, kvals)?,
            OpReply::ResolvedPeers { procs, .. } => {
                if ok {
                    pack_list(&mut b, procs)?;
                }
            }
            OpReply::ResolvedNode { nodes, .. } => {
                if ok {
                    b.pack(std::slice::from_ref(nodes))?;
                }
            }
            OpReply::Status { .. } => {}
        }
        Ok(b.unload())
    }

    /// Parse a reply to `command` in the 4.x layouts, or `None` when `command` is not one
    /// of [`Self::answers`].
    pub fn decode(
        command: Command,
        payload: &[u8],
        buffer_type: BufferType,
    ) -> Result<Option<OpReply>, Error> {
        Self::decode_for(command, payload, buffer_type, Dialect::V4)
    }

    /// Parse a reply to `command` from a server that speaks `dialect`, or `None` when
    /// `command` is not one of [`Self::answers`].
    pub fn decode_for(
        command: Command,
        payload: &[u8],
        buffer_type: BufferType,
        dialect: Dialect,
    ) -> Result<Option<OpReply>, Error> {
        if !Self::answers(command) {
            return Ok(None);
        }
        let mut b = DataBuffer::load(payload.to_vec(), buffer_type);
        let status: Status = one(&mut b, "reply status")?;
        let mut reply = Self::failure(command, status);
        // A refusal is the status alone, whatever the command.
        if b.is_exhausted() {
            return Ok(Some(reply));
        }
        match &mut reply {
            OpReply::Spawn {
                nspace, job_info, ..
            } => {
                *nspace = one(&mut b, "spawned namespace")?;
                *job_info = unpack_to_end(&mut b)?;
            }
            OpReply::Connect { jobs, .. } => {
                while !b.is_exhausted() {
                    let bo: ByteObject = one(&mut b, "connect job data")?;
                    let mut inner = DataBuffer::load(bo.0, buffer_type);
                    let nspace = one(&mut inner, "connect namespace")?;
                    let kvals = unpack_to_end(&mut inner)?;
                    jobs.push(JobData { nspace, kvals });
                }
            }
            OpReply::Infos { info, .. } => *info = unpack_info_list(&mut b)?,
            OpReply::Credential {
                credential, info, ..
            } => {
                *credential = Some(one(&mut b, "credential")?);
                // OpenPMIx 6.1's server packs the host's infos after the host's callback
                // has returned and may have released them (server/pmix_server.c:
                // cred_cbfunc keeps the pointer), so the list can be freed memory. The
                // credential before it is whole: keep it and drop the list, as 6.1's own
                // client does (it logs the unpack error and returns the credential).
                *info = match unpack_info_list(&mut b) {
                    Ok(info) => info,
                    Err(e) => {
                        tracing::warn!(
                            "the infos of a credential reply do not unpack ({e}); the credential is kept without them"
                        );
                        // What is left of the list is not read.
                        b = DataBuffer::load(Vec::new(), buffer_type);
                        Vec::new()
                    }
                };
            }
            OpReply::IofPull { remote_id, .. } => {
                *remote_id = Some(one::<Size>(&mut b, "iof registration id")?.0);
            }
            OpReply::GroupConstruct {
                context_id,
                members,
                ..
            } => match dialect {
                Dialect::V4 => *context_id = Some(one::<Size>(&mut b, "group context id")?.0),
                Dialect::V5 => {
                    *members = unpack_list(&mut b, "group members")?;
                    if !b.is_exhausted() {
                        let id = one::<Size>(&mut b, "group context id")?.0;
                        // SIZE_MAX: the server had none to give.
                        *context_id = (id != u64::MAX).then_some(id);
                    }
                    // The job information of the other namespaces, which 5.0's own client
                    // does not read either.
                    while !b.is_exhausted() {
                        one::<ByteObject>(&mut b, "group job information")?;
                    }
                }
                Dialect::V6 => {
                    *members = unpack_list(&mut b, "group members")?;
                    if one::<bool>(&mut b, "group context id given")? {
                        *context_id = Some(one::<Size>(&mut b, "group context id")?.0);
                    }
                    // Values the members posted for the group: this client gets them from
                    // the server when asked, so they are read past.
                    let n = count(&mut b, "group info count")?;
                    for _ in 0..n {
                        one::<Info>(&mut b, "group info")?;
                    }
                }
            },
            OpReply::DeviceDistances { distances, .. } => {
                let n: Size = one(&mut b, "distance count")?;
                let n = usize::try_from(n.0).unwrap_or(usize::MAX);
                if n > b.unread().len() {
                    return Err(Error::decode(
                        Status::ERR_UNPACK_READ_PAST_END_OF_BUFFER,
                        format!("{n} device distances exceed the bytes left"),
                    ));
                }
                if n > 0 {
                    *distances = b.unpack(n)?;
                }
            }
            OpReply::RefreshCache { kvals, .. } => *kvals = unpack_to_end(&mut b)?,
            OpReply::ResolvedPeers { procs, .. } => *procs = unpack_list(&mut b, "peers")?,
            OpReply::ResolvedNode { nodes, .. } => *nodes = one(&mut b, "node list")?,
            OpReply::Status { .. } => {}
        }
        if !b.is_exhausted() {
            return Err(Error::decode(
                Status::ERR_UNPACK_FAILURE,
                format!(
                    "{} bytes left after the reply to {command:?}",
                    b.unread().len()
                ),
            ));
        }
        Ok(Some(reply))
    }
}

/// Pack values one pack call each, as OpenPMIx packs the key-value pairs of job information.
fn pack_each(b: &mut DataBuffer, kvals: &[Kval]) -> Result<(), Error> {
    for kv in kvals {
        b.pack(std::slice::from_ref(kv))?;
    }
    Ok(())
}

fn unpack_to_end(b: &mut DataBuffer) -> Result<Vec<Kval>, Error> {
    let mut kvals = Vec::new();
    while !b.is_exhausted() {
        kvals.push(one(b, "job information")?);
    }
    Ok(kvals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DeviceType, Key, Value, attr};

    fn kvals() -> Vec<Kval> {
        vec![
            Kval {
                key: Key::new("pmix.job.size").unwrap(),
                value: Value::Uint32(4),
            },
            Kval {
                key: Key::new("pmix.nsdir").unwrap(),
                value: Value::String(Some("/tmp/x".into())),
            },
        ]
    }

    fn infos() -> Vec<Info> {
        vec![
            Info::new(attr::TIMEOUT, 5),
            Info::new(attr::NSPACE, "x".to_string()),
        ]
    }

    fn every_reply() -> Vec<OpReply> {
        let mut all = vec![
            OpReply::Spawn {
                status: Status::SUCCESS,
                nspace: Some("child".into()),
                job_info: kvals(),
            },
            OpReply::Connect {
                status: Status::SUCCESS,
                jobs: vec![
                    JobData {
                        nspace: "a".into(),
                        kvals: kvals(),
                    },
                    JobData {
                        nspace: "b".into(),
                        kvals: vec![],
                    },
                ],
            },
            OpReply::Credential {
                status: Status::SUCCESS,
                credential: Some(ByteObject(vec![9, 8, 7])),
                info: infos(),
            },
            OpReply::IofPull {
                status: Status::SUCCESS,
                remote_id: Some(3),
            },
            OpReply::GroupConstruct {
                status: Status::SUCCESS,
                context_id: Some(42),
                members: vec![],
            },
            OpReply::DeviceDistances {
                status: Status::SUCCESS,
                distances: vec![DeviceDistance {
                    uuid: Some("ib0".into()),
                    osname: Some("mlx5_0".into()),
                    device_type: DeviceType(0x20),
                    mindist: 1,
                    maxdist: 10,
                }],
            },
            OpReply::RefreshCache {
                status: Status::SUCCESS,
                kvals: kvals(),
            },
            OpReply::ResolvedPeers {
                status: Status::SUCCESS,
                procs: members(),
            },
            OpReply::ResolvedNode {
                status: Status::SUCCESS,
                nodes: Some("n0,n1".into()),
            },
        ];
        for c in INFO_REPLIES {
            all.push(OpReply::Infos {
                command: c,
                status: Status::SUCCESS,
                info: infos(),
            });
        }
        for c in STATUS_REPLIES {
            all.push(OpReply::Status {
                command: c,
                status: Status::SUCCESS,
            });
        }
        // Every command also as a failure.
        let failures: Vec<OpReply> = all
            .iter()
            .map(|r| OpReply::failure(r.command(), Status::ERR_NOT_SUPPORTED))
            .collect();
        all.extend(failures);
        all
    }

    #[test]
    fn every_reply_round_trips_in_both_buffer_types() {
        for bt in [BufferType::NonDescribed, BufferType::FullyDescribed] {
            for r in every_reply() {
                let bytes = r.encode(bt).unwrap();
                let back = OpReply::decode(r.command(), &bytes, bt).unwrap();
                assert_eq!(back.as_ref(), Some(&r), "{bt:?}");
            }
        }
    }

    #[test]
    fn every_command_beyond_the_core_set_has_a_typed_reply_except_deregevents() {
        let core = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 13];
        for c in Command::ALL {
            let expected = !core.contains(&c.0) && *c != Command::DEREGEVENTS;
            assert_eq!(OpReply::answers(*c), expected, "{c:?}");
        }
    }

    #[test]
    fn a_bare_status_decodes_as_a_failure_of_any_command() {
        let bt = BufferType::NonDescribed;
        let mut b = DataBuffer::with_type(bt);
        b.pack(&[Status::ERR_NOT_SUPPORTED]).unwrap();
        let bytes = b.unload();
        for c in Command::ALL.iter().filter(|c| OpReply::answers(**c)) {
            let r = OpReply::decode(*c, &bytes, bt).unwrap().unwrap();
            assert_eq!(r, OpReply::failure(*c, Status::ERR_NOT_SUPPORTED));
        }
    }

    /// The reply OpenPMIx 6.1's server sends when it packs infos the host has released: a
    /// whole credential, a count of one and an info cut short.
    #[test]
    fn a_credential_whose_infos_do_not_unpack_is_kept_without_them() {
        let bt = BufferType::NonDescribed;
        let mut b = DataBuffer::with_type(bt);
        b.pack(&[Status::SUCCESS]).unwrap();
        b.pack(&[ByteObject(vec![1, 2, 3])]).unwrap();
        b.pack(&[Size(1)]).unwrap();
        let mut bytes = b.unload();
        // A key that announces 14 bytes and ends after 3.
        bytes.extend([14, 0xd5, 0xe2, 0x05]);
        let r = OpReply::decode(Command::GET_CREDENTIAL, &bytes, bt).unwrap();
        assert_eq!(
            r,
            Some(OpReply::Credential {
                status: Status::SUCCESS,
                credential: Some(ByteObject(vec![1, 2, 3])),
                info: vec![],
            })
        );
    }

    /// The layouts, built by hand in the order OpenPMIx's server packs them.
    #[test]
    fn fields_are_packed_in_openpmix_order() {
        let bt = BufferType::NonDescribed;
        let check = |r: OpReply, build: &dyn Fn(&mut DataBuffer)| {
            let mut expected = DataBuffer::with_type(bt);
            build(&mut expected);
            assert_eq!(r.encode(bt).unwrap(), expected.unload(), "{r:?}");
        };
        // Query: the count is packed even when the query failed.
        check(
            OpReply::failure(Command::QUERY, Status::ERR_NOT_FOUND),
            &|b| {
                b.pack(&[Status::ERR_NOT_FOUND]).unwrap();
                b.pack(&[Size(0)]).unwrap();
            },
        );
        // Spawn: the namespace is packed (NULL) on failure, job information only on success.
        check(
            OpReply::failure(Command::SPAWNNB, Status::ERR_NOT_SUPPORTED),
            &|b| {
                b.pack(&[Status::ERR_NOT_SUPPORTED]).unwrap();
                b.pack(&[None::<String>]).unwrap();
            },
        );
        check(
            OpReply::Spawn {
                status: Status::SUCCESS,
                nspace: Some("c".into()),
                job_info: kvals(),
            },
            &|b| {
                b.pack(&[Status::SUCCESS]).unwrap();
                b.pack(&[Some("c".to_string())]).unwrap();
                b.pack(&kvals()[..1]).unwrap();
                b.pack(&kvals()[1..]).unwrap();
            },
        );
        // Connect: one byte object per namespace holding its name and job information.
        check(
            OpReply::Connect {
                status: Status::SUCCESS,
                jobs: vec![JobData {
                    nspace: "a".into(),
                    kvals: kvals()[..1].to_vec(),
                }],
            },
            &|b| {
                b.pack(&[Status::SUCCESS]).unwrap();
                let mut inner = DataBuffer::with_type(bt);
                inner.pack(&["a".to_string()]).unwrap();
                inner.pack(&kvals()[..1]).unwrap();
                b.pack(&[ByteObject(inner.unload())]).unwrap();
            },
        );
        check(
            OpReply::IofPull {
                status: Status::SUCCESS,
                remote_id: Some(5),
            },
            &|b| {
                b.pack(&[Status::SUCCESS]).unwrap();
                b.pack(&[Size(5)]).unwrap();
            },
        );
        check(
            OpReply::GroupConstruct {
                status: Status::ERR_TIMEOUT,
                context_id: Some(0),
                members: vec![],
            },
            &|b| {
                b.pack(&[Status::ERR_TIMEOUT]).unwrap();
                b.pack(&[Size(0)]).unwrap();
            },
        );
    }

    fn members() -> Vec<Proc> {
        vec![
            Proc::try_new("job", 0).unwrap(),
            Proc::try_new("job", 1).unwrap(),
        ]
    }

    /// A construction's reply as 5.0's and 6.1's servers pack it, and as their clients read
    /// it: the members first, then the context id (6.1: behind a flag), then 6.1's group
    /// information.
    #[test]
    fn a_construction_names_its_members_to_5_0_and_6_1_clients() {
        let bt = BufferType::NonDescribed;
        let formed = |context_id| OpReply::GroupConstruct {
            status: Status::SUCCESS,
            context_id,
            members: members(),
        };
        let build = |f: &dyn Fn(&mut DataBuffer)| {
            let mut b = DataBuffer::with_type(bt);
            b.pack(&[Status::SUCCESS]).unwrap();
            b.pack(&[Size(2)]).unwrap();
            b.pack(&members()).unwrap();
            f(&mut b);
            b.unload()
        };
        let five = build(&|b| b.pack(&[Size(7)]).unwrap());
        let six = build(&|b| {
            b.pack(&[true]).unwrap();
            b.pack(&[Size(7)]).unwrap();
            b.pack(&[Size(0)]).unwrap();
        });
        let six_without = build(&|b| {
            b.pack(&[false]).unwrap();
            b.pack(&[Size(0)]).unwrap();
        });
        assert_eq!(formed(Some(7)).encode_for(bt, Dialect::V5).unwrap(), five);
        assert_eq!(formed(Some(7)).encode_for(bt, Dialect::V6).unwrap(), six);
        assert_eq!(
            formed(None).encode_for(bt, Dialect::V6).unwrap(),
            six_without
        );
        // No id: 5.0's field is left out, which its client reads as none.
        assert_eq!(
            formed(None).encode_for(bt, Dialect::V5).unwrap(),
            build(&|_| {})
        );
        for (bytes, dialect) in [(&five, Dialect::V5), (&six, Dialect::V6)] {
            let back = OpReply::decode_for(Command::GROUP_CONSTRUCT, bytes, bt, dialect);
            assert_eq!(back.unwrap(), Some(formed(Some(7))), "{dialect:?}");
        }
        // 4.x: the id alone, never the members.
        assert_eq!(
            formed(Some(7)).encode(bt).unwrap(),
            OpReply::GroupConstruct {
                status: Status::SUCCESS,
                context_id: Some(7),
                members: vec![],
            }
            .encode(bt)
            .unwrap()
        );
        // A failure is the status alone in every dialect.
        let failed = OpReply::failure(Command::GROUP_CONSTRUCT, Status::ERR_TIMEOUT);
        for dialect in [Dialect::V5, Dialect::V6] {
            let bytes = failed.encode_for(bt, dialect).unwrap();
            assert_eq!(bytes, failed.encode(bt).unwrap());
            let back = OpReply::decode_for(Command::GROUP_CONSTRUCT, &bytes, bt, dialect);
            assert_eq!(back.unwrap(), Some(failed.clone()));
        }
    }

    /// What a real 5.0 server adds (SIZE_MAX for no id, job information of the other
    /// namespaces) and 6.1's group information are read past.
    #[test]
    fn what_5_0_and_6_1_servers_add_is_read_past() {
        let bt = BufferType::FullyDescribed;
        let mut b = DataBuffer::with_type(bt);
        b.pack(&[Status::SUCCESS]).unwrap();
        b.pack(&[Size(2)]).unwrap();
        b.pack(&members()).unwrap();
        b.pack(&[Size(u64::MAX)]).unwrap();
        b.pack(&[ByteObject(vec![1, 2, 3])]).unwrap();
        let five = b.unload();
        let want = OpReply::GroupConstruct {
            status: Status::SUCCESS,
            context_id: None,
            members: members(),
        };
        let back = OpReply::decode_for(Command::GROUP_CONSTRUCT, &five, bt, Dialect::V5);
        assert_eq!(back.unwrap(), Some(want.clone()));
        let mut b = DataBuffer::with_type(bt);
        b.pack(&[Status::SUCCESS]).unwrap();
        b.pack(&[Size(2)]).unwrap();
        b.pack(&members()).unwrap();
        b.pack(&[false]).unwrap();
        b.pack(&[Size(2)]).unwrap();
        b.pack(&[Info::new(attr::TIMEOUT, 1)]).unwrap();
        b.pack(&[Info::new(attr::TIMEOUT, 2)]).unwrap();
        let six = b.unload();
        let back = OpReply::decode_for(Command::GROUP_CONSTRUCT, &six, bt, Dialect::V6);
        assert_eq!(back.unwrap(), Some(want));
        for cut in 0..six.len() {
            let _ = OpReply::decode_for(Command::GROUP_CONSTRUCT, &six[..cut], bt, Dialect::V6);
        }
    }

    #[test]
    fn truncated_or_overlong_replies_are_errors_not_panics() {
        for bt in [BufferType::NonDescribed, BufferType::FullyDescribed] {
            for r in every_reply() {
                let bytes = r.encode(bt).unwrap();
                let mut bare = DataBuffer::with_type(bt);
                bare.pack(&[r.status()]).unwrap();
                let bare = bare.unload().len();
                for cut in 0..bytes.len() {
                    // A failure cut to its bare status is, by design, the same failure.
                    if r.status() != Status::SUCCESS && cut == bare {
                        continue;
                    }
                    if let Ok(Some(got)) = OpReply::decode(r.command(), &bytes[..cut], bt) {
                        assert_ne!(got, r, "{r:?} cut at {cut}");
                    }
                }
                let mut longer = bytes.clone();
                longer.extend_from_slice(&[0xff; 3]);
                // Trailing garbage is never silently accepted as the same reply.
                if let Ok(Some(got)) = OpReply::decode(r.command(), &longer, bt) {
                    assert_ne!(got, r, "{r:?} with trailing bytes");
                }
            }
        }
    }
}
