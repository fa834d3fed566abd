//! The requests beyond the core set: spawn, connect, events, query, logging, job control,
//! credentials, I/O forwarding, groups, fabric and device distances, typed one variant per
//! command, and the server-pushed I/O-forwarding message.
//!
//! Field order and types are those OpenPMIx 4.2.2's client packs (read from its source; each
//! line below is one pack call). A count of zero is followed by nothing: the array is packed
//! only when non-empty.
//!
//! | command | fields after the command code |
//! |---|---|
//! | `SPAWNNB` | SIZE njob, INFO\[njob\], SIZE napps, APP\[napps\] |
//! | `CONNECTNB`, `DISCONNECTNB` | SIZE nprocs, PROC\[nprocs\], SIZE ninfo, INFO\[ninfo\] |
//! | `DEREGEVENTS` | STATUS per event code removed, no count, until the end |
//! | `QUERY` | SIZE nqueries, QUERY\[nqueries\] |
//! | `LOG` | TIME timestamp, SIZE ndata, INFO\[ndata\], SIZE ndirs, INFO\[ndirs\] |
//! | `ALLOC` | ALLOC_DIRECTIVE, SIZE ninfo, INFO\[ninfo\] |
//! | `JOB_CONTROL` | SIZE ntargets, PROC\[ntargets\], SIZE ndirs, INFO\[ndirs\] |
//! | `MONITOR` | INFO monitor, STATUS error, SIZE ndirs, INFO\[ndirs\] |
//! | `GET_CREDENTIAL` | SIZE ninfo, INFO\[ninfo\] |
//! | `VALIDATE_CRED` | BYTE_OBJECT credential, SIZE ndirs, INFO\[ndirs\] |
//! | `IOF_PULL` | SIZE nprocs, PROC\[nprocs\], SIZE ndirs, INFO\[ndirs\], IOF_CHANNEL, SIZE local id |
//! | `IOF_PUSH` | SIZE ntargets, PROC\[ntargets\], SIZE ndirs, INFO\[ndirs\], optional BYTE_OBJECT |
//! | `IOF_DEREG` | SIZE ndirs, INFO\[ndirs\], SIZE remote id |
//! | `GROUP_CONSTRUCT` | STRING group, SIZE nprocs, PROC\[nprocs\], SIZE ninfo, INFO\[ninfo\] |
//! | `GROUP_INVITE`, `GROUP_JOIN` | not sent by OpenPMIx 4.2; this library uses the construct layout (a join's procs: the leader; a decline: [`GROUP_JOIN_DECLINES`] in its info) |
//! | `GROUP_LEAVE`, and `GROUP_DESTRUCT` to or from a 4.x peer | STRING group, SIZE ninfo, INFO\[ninfo\] |
//! | `GROUP_DESTRUCT` to or from a 5.0 or later peer ([`Dialect::destruct_lists_members`]) | STRING group, SIZE nmembers, PROC\[nmembers\] (packed even when empty), SIZE ninfo, INFO\[ninfo\] |
//! | `FABRIC_REGISTER` | SIZE ndirs, INFO\[ndirs\] |
//! | `FABRIC_UPDATE` | SIZE fabric index |
//! | `COMPUTE_DEVICE_DISTANCES` | TOPO, PROC_CPUSET, SIZE ninfo, INFO\[ninfo\] |
//! | `REFRESH_CACHE` (5.0) | STRING nspace, PROC_RANK rank |
//! | `SESSION_CTRL` (6.1) | UINT32 session id, SIZE ndirs, INFO\[ndirs\] |
//! | `RESOLVE_PEERS` (5.0) | STRING node (the caller's own when it gave none), STRING nspace (NULL or empty: every namespace) |
//! | `RESOLVE_NODE` (5.0) | STRING nspace (NULL or empty: every namespace) |
//!
//! Those of 5.0 and 6.1 are read from their clients' sources (5.0.9, 6.1.0
//! `client/pmix_client_get.c` `refresh_cache`, `client/pmix_client_resolve.c`,
//! `common/pmix_session.c`). Two commands stay untyped ([`UNTYPED`]): `RESBLK`, whose
//! request holds the resource types of the `v51` and `v61` encodings, and `REQ_SYSINFO`,
//! which no OpenPMIx release sends.
//!
//! The I/O-forwarding message a server pushes to a client or tool that pulled output (tag 2)
//! is: PROC source, IOF_CHANNEL, SIZE the puller's id, SIZE ninfo, INFO\[ninfo\], BYTE_OBJECT
//! the bytes.

use crate::Error;
use crate::codec::{DataBuffer, Size};
use crate::model::{
    AllocDirective, App, ByteObject, Cpuset, Info, IofChannel, Proc, Query, Rank, Status, Time,
    Topology,
};

use super::command::Command;
use super::fields::{count, one, pack_info_list, pack_list, unpack_info_list, unpack_list};
use super::version::Dialect;

/// The key, in a `GROUP_JOIN`'s information, of the joiner's answer: `true` declines the
/// invitation. This library's own (OpenPMIx 4.2 sends no `GROUP_JOIN`, and `PMIx_Group_join`'s
/// `opt` argument has no attribute in the standard).
pub const GROUP_JOIN_DECLINES: &str = "pmix.rs.grp.decline";

/// The key, in a `PMIX_GROUP_CONSTRUCT_ABORT` a server raises, of the status the invitation
/// ended with (`pmix_status_t`): the servers of invitees on other nodes answer their joins
/// with it. This library's own; the standard's abort event carries no reason.
pub const GROUP_OUTCOME: &str = "pmix.rs.grp.outcome";

/// The key, in a group event a server hands its host for the servers of other nodes, that
/// marks it as the server's (`true`): only such events move invitations and memberships at
/// the servers that receive them, never a client's own event of the same code. This
/// library's own.
pub const GROUP_SERVER_EVENT: &str = "pmix.rs.grp.server";

/// The key, in a group event a server hands its host for the servers of other nodes, that
/// keeps the event from their processes (`true`): the end of an invitation told to the
/// servers of invitees that never answered it and are not in its outcome, so that they stop
/// holding it for them. This library's own.
pub const GROUP_FOR_SERVERS: &str = "pmix.rs.grp.servers";

/// The key (`PMIX_IOF_STOP`, OpenPMIx's, not in the standard) that a server adds to the
/// directives of an `iof_pull` upcall to say the puller deregistered (`Host::iof_pull`), as
/// OpenPMIx 4.2's server does.
pub const IOF_STOP: &str = "pmix.iof.stop";

/// The commands beyond the core set without a typed request: they decode as
/// `Request::Other` and the server refuses them with a bare status.
pub const UNTYPED: [Command; 2] = [Command::RESBLK, Command::REQ_SYSINFO];

/// A typed request of the commands beyond the core set.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Spawn {
        job_info: Vec<Info>,
        apps: Vec<App>,
    },
    Connect {
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    Disconnect {
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    /// Handlers for these codes were removed (an empty list: a handler for all codes).
    DeregisterEvents {
        codes: Vec<Status>,
    },
    Query {
        queries: Vec<Query>,
    },
    Log {
        timestamp: Time,
        data: Vec<Info>,
        directives: Vec<Info>,
    },
    Alloc {
        directive: AllocDirective,
        info: Vec<Info>,
    },
    JobControl {
        targets: Vec<Proc>,
        directives: Vec<Info>,
    },
    Monitor {
        monitor: Info,
        error: Status,
        directives: Vec<Info>,
    },
    GetCredential {
        info: Vec<Info>,
    },
    ValidateCredential {
        credential: ByteObject,
        directives: Vec<Info>,
    },
    IofPull {
        procs: Vec<Proc>,
        directives: Vec<Info>,
        channel: IofChannel,
        local_id: u64,
    },
    IofPush {
        targets: Vec<Proc>,
        directives: Vec<Info>,
        data: Option<ByteObject>,
    },
    IofDeregister {
        directives: Vec<Info>,
        remote_id: u64,
    },
    GroupConstruct {
        group: String,
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    GroupInvite {
        group: String,
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    GroupJoin {
        group: String,
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    GroupLeave {
        group: String,
        info: Vec<Info>,
    },
    /// `members` travel only to and from 5.0 and later peers, whose servers do not keep a
    /// group's members; from a 4.x peer they are empty.
    GroupDestruct {
        group: String,
        members: Vec<Proc>,
        info: Vec<Info>,
    },
    FabricRegister {
        directives: Vec<Info>,
    },
    FabricUpdate {
        index: u64,
    },
    ComputeDeviceDistances {
        topology: Topology,
        cpuset: Cpuset,
        info: Vec<Info>,
    },
    /// `PMIx_Get` with `PMIX_GET_REFRESH_CACHE`: what the server holds of this process now.
    RefreshCache {
        nspace: String,
        rank: Rank,
    },
    /// `PMIx_Session_control`.
    SessionControl {
        session_id: u32,
        directives: Vec<Info>,
    },
    /// `PMIx_Resolve_peers`: the processes on `node` of `nspace` (of every namespace when
    /// it is `None` or empty).
    ResolvePeers {
        node: Option<String>,
        nspace: Option<String>,
    },
    /// `PMIx_Resolve_nodes`: the nodes `nspace` runs on (every namespace's when it is
    /// `None` or empty).
    ResolveNode {
        nspace: Option<String>,
    },
}

impl Op {
    pub fn command(&self) -> Command {
        match self {
            Op::Spawn { .. } => Command::SPAWNNB,
            Op::Connect { .. } => Command::CONNECTNB,
            Op::Disconnect { .. } => Command::DISCONNECTNB,
            Op::DeregisterEvents { .. } => Command::DEREGEVENTS,
            Op::Query { .. } => Command::QUERY,
            Op::Log { .. } => Command::LOG,
            Op::Alloc { .. } => Command::ALLOC,
            Op::JobControl { .. } => Command::JOB_CONTROL,
            Op::Monitor { .. } => Command::MONITOR,
            Op::GetCredential { .. } => Command::GET_CREDENTIAL,
            Op::ValidateCredential { .. } => Command::VALIDATE_CRED,
            Op::IofPull { .. } => Command::IOF_PULL,
            Op::IofPush { .. } => Command::IOF_PUSH,
            Op::IofDeregister { .. } => Command::IOF_DEREG,
            Op::GroupConstruct { .. } => Command::GROUP_CONSTRUCT,
            Op::GroupInvite { .. } => Command::GROUP_INVITE,
            Op::GroupJoin { .. } => Command::GROUP_JOIN,
            Op::GroupLeave { .. } => Command::GROUP_LEAVE,
            Op::GroupDestruct { .. } => Command::GROUP_DESTRUCT,
            Op::FabricRegister { .. } => Command::FABRIC_REGISTER,
            Op::FabricUpdate { .. } => Command::FABRIC_UPDATE,
            Op::ComputeDeviceDistances { .. } => Command::COMPUTE_DEVICE_DISTANCES,
            Op::RefreshCache { .. } => Command::REFRESH_CACHE,
            Op::SessionControl { .. } => Command::SESSION_CTRL,
            Op::ResolvePeers { .. } => Command::RESOLVE_PEERS,
            Op::ResolveNode { .. } => Command::RESOLVE_NODE,
        }
    }

    /// Pack the fields (the command code is already in `b`) in the layouts of `dialect`.
    pub(super) fn encode_fields(&self, b: &mut DataBuffer, dialect: Dialect) -> Result<(), Error> {
        match self {
            Op::Spawn { job_info, apps } => {
                pack_info_list(b, job_info)?;
                pack_list(b, apps)?;
            }
            Op::Connect { procs, info } | Op::Disconnect { procs, info } => {
                pack_list(b, procs)?;
                pack_info_list(b, info)?;
            }
            Op::DeregisterEvents { codes } => {
                for c in codes {
                    b.pack(&[*c])?;
                }
            }
            Op::Query { queries } => pack_list(b, queries)?,
            Op::Log {
                timestamp,
                data,
                directives,
            } => {
                b.pack(&[*timestamp])?;
                pack_info_list(b, data)?;
                pack_info_list(b, directives)?;
            }
            Op::Alloc { directive, info } => {
                b.pack(&[*directive])?;
                pack_info_list(b, info)?;
            }
            Op::JobControl {
                targets,
                directives,
            } => {
                pack_list(b, targets)?;
                pack_info_list(b, directives)?;
            }
            Op::Monitor {
                monitor,
                error,
                directives,
            } => {
                b.pack(std::slice::from_ref(monitor))?;
                b.pack(&[*error])?;
                pack_info_list(b, directives)?;
            }
            Op::GetCredential { info } => pack_info_list(b, info)?,
            Op::ValidateCredential {
                credential,
                directives,
            } => {
                b.pack(std::slice::from_ref(credential))?;
                pack_info_list(b, directives)?;
            }
            Op::IofPull {
                procs,
                directives,
                channel,
                local_id,
            } => {
                pack_list(b, procs)?;
                pack_info_list(b, directives)?;
                b.pack(&[*channel])?;
                b.pack(&[Size(*local_id)])?;
            }
            Op::IofPush {
                targets,
                directives,
                data,
            } => {
                pack_list(b, targets)?;
                pack_info_list(b, directives)?;
                if let Some(d) = data {
                    b.pack(std::slice::from_ref(d))?;
                }
            }
            Op::IofDeregister {
                directives,
                remote_id,
            } => {
                pack_info_list(b, directives)?;
                b.pack(&[Size(*remote_id)])?;
            }
            Op::GroupConstruct { group, procs, info }
            | Op::GroupInvite { group, procs, info }
            | Op::GroupJoin { group, procs, info } => {
                b.pack(std::slice::from_ref(group))?;
                pack_list(b, procs)?;
                pack_info_list(b, info)?;
            }
            Op::GroupLeave { group, info } => {
                b.pack(std::slice::from_ref(group))?;
                pack_info_list(b, info)?;
            }
            Op::GroupDestruct {
                group,
                members,
                info,
            } => {
                b.pack(std::slice::from_ref(group))?;
                if dialect.destruct_lists_members() {
                    // OpenPMIx 5.0 and 6.1 pack the member array whatever its length
                    // (6.1 `client/pmix_client_group.c:496-507`): an empty one is a count
                    // of zero.
                    b.pack(&[Size(members.len() as u64)])?;
                    b.pack(members)?;
                }
                pack_info_list(b, info)?;
            }
            Op::FabricRegister { directives } => pack_info_list(b, directives)?,
            Op::FabricUpdate { index } => b.pack(&[Size(*index)])?,
            Op::ComputeDeviceDistances {
                topology,
                cpuset,
                info,
            } => {
                b.pack(std::slice::from_ref(topology))?;
                b.pack(std::slice::from_ref(cpuset))?;
                pack_info_list(b, info)?;
            }
            Op::RefreshCache { nspace, rank } => {
                b.pack(std::slice::from_ref(nspace))?;
                b.pack(&[*rank])?;
            }
            Op::SessionControl {
                session_id,
                directives,
            } => {
                b.pack(&[*session_id])?;
                pack_info_list(b, directives)?;
            }
            Op::ResolvePeers { node, nspace } => {
                b.pack(std::slice::from_ref(node))?;
                b.pack(std::slice::from_ref(nspace))?;
            }
            Op::ResolveNode { nspace } => b.pack(std::slice::from_ref(nspace))?,
        }
        Ok(())
    }

    /// Unpack the fields of `command` in the layouts of `dialect`, or `None` for a command
    /// this enum does not cover.
    pub(super) fn decode_fields(
        command: Command,
        b: &mut DataBuffer,
        dialect: Dialect,
    ) -> Result<Option<Op>, Error> {
        let op = match command {
            Command::SPAWNNB => Op::Spawn {
                job_info: unpack_info_list(b)?,
                apps: unpack_list(b, "spawn apps")?,
            },
            Command::CONNECTNB => Op::Connect {
                procs: unpack_list(b, "connect procs")?,
                info: unpack_info_list(b)?,
            },
            Command::DISCONNECTNB => Op::Disconnect {
                procs: unpack_list(b, "disconnect procs")?,
                info: unpack_info_list(b)?,
            },
            Command::DEREGEVENTS => {
                let mut codes = Vec::new();
                while !b.is_exhausted() {
                    codes.push(one(b, "event code")?);
                }
                Op::DeregisterEvents { codes }
            }
            Command::QUERY => Op::Query {
                queries: unpack_list(b, "queries")?,
            },
            Command::LOG => Op::Log {
                timestamp: one(b, "log timestamp")?,
                data: unpack_info_list(b)?,
                directives: unpack_info_list(b)?,
            },
            Command::ALLOC => Op::Alloc {
                directive: one(b, "allocation directive")?,
                info: unpack_info_list(b)?,
            },
            Command::JOB_CONTROL => Op::JobControl {
                targets: unpack_list(b, "job control targets")?,
                directives: unpack_info_list(b)?,
            },
            Command::MONITOR => Op::Monitor {
                monitor: one(b, "monitor")?,
                error: one(b, "monitor error")?,
                directives: unpack_info_list(b)?,
            },
            Command::GET_CREDENTIAL => Op::GetCredential {
                info: unpack_info_list(b)?,
            },
            Command::VALIDATE_CRED => Op::ValidateCredential {
                credential: one(b, "credential")?,
                directives: unpack_info_list(b)?,
            },
            Command::IOF_PULL => Op::IofPull {
                procs: unpack_list(b, "iof procs")?,
                directives: unpack_info_list(b)?,
                channel: one(b, "iof channel")?,
                local_id: one::<Size>(b, "iof local id")?.0,
            },
            Command::IOF_PUSH => Op::IofPush {
                targets: unpack_list(b, "iof targets")?,
                directives: unpack_info_list(b)?,
                data: if b.is_exhausted() {
                    None
                } else {
                    Some(one(b, "iof data")?)
                },
            },
            Command::IOF_DEREG => Op::IofDeregister {
                directives: unpack_info_list(b)?,
                remote_id: one::<Size>(b, "iof remote id")?.0,
            },
            Command::GROUP_CONSTRUCT | Command::GROUP_INVITE | Command::GROUP_JOIN => {
                let group = one(b, "group id")?;
                let procs = unpack_list(b, "group members")?;
                let info = unpack_info_list(b)?;
                match command {
                    Command::GROUP_CONSTRUCT => Op::GroupConstruct { group, procs, info },
                    Command::GROUP_INVITE => Op::GroupInvite { group, procs, info },
                    _ => Op::GroupJoin { group, procs, info },
                }
            }
            Command::GROUP_LEAVE => Op::GroupLeave {
                group: one(b, "group id")?,
                info: unpack_info_list(b)?,
            },
            Command::GROUP_DESTRUCT => {
                let group = one(b, "group id")?;
                let members = if dialect.destruct_lists_members() {
                    let n = count(b, "group members")?;
                    b.unpack(n)?
                } else {
                    Vec::new()
                };
                Op::GroupDestruct {
                    group,
                    members,
                    info: unpack_info_list(b)?,
                }
            }
            Command::FABRIC_REGISTER => Op::FabricRegister {
                directives: unpack_info_list(b)?,
            },
            Command::FABRIC_UPDATE => Op::FabricUpdate {
                index: one::<Size>(b, "fabric index")?.0,
            },
            Command::COMPUTE_DEVICE_DISTANCES => Op::ComputeDeviceDistances {
                topology: one(b, "topology")?,
                cpuset: one(b, "cpuset")?,
                info: unpack_info_list(b)?,
            },
            Command::REFRESH_CACHE => Op::RefreshCache {
                nspace: one(b, "refresh namespace")?,
                rank: one(b, "refresh rank")?,
            },
            Command::SESSION_CTRL => Op::SessionControl {
                session_id: one(b, "session id")?,
                directives: unpack_info_list(b)?,
            },
            Command::RESOLVE_PEERS => Op::ResolvePeers {
                node: one(b, "node name")?,
                nspace: one(b, "namespace")?,
            },
            Command::RESOLVE_NODE => Op::ResolveNode {
                nspace: one(b, "namespace")?,
            },
            _ => return Ok(None),
        };
        Ok(Some(op))
    }
}

/// Output forwarded to a client or tool that pulled it (`PMIX_PTL_TAG_IOF`, tag 2).
#[derive(Clone, Debug, PartialEq)]
pub struct IofDelivery {
    pub source: Proc,
    pub channel: IofChannel,
    /// The id the puller gave in its `IOF_PULL`.
    pub remote_id: u64,
    pub info: Vec<Info>,
    pub data: ByteObject,
}

impl IofDelivery {
    pub fn encode(&self, buffer_type: crate::codec::BufferType) -> Result<Vec<u8>, Error> {
        let mut b = DataBuffer::with_type(buffer_type);
        b.pack(std::slice::from_ref(&self.source))?;
        b.pack(&[self.channel])?;
        b.pack(&[Size(self.remote_id)])?;
        pack_info_list(&mut b, &self.info)?;
        b.pack(std::slice::from_ref(&self.data))?;
        Ok(b.unload())
    }

    pub fn decode(payload: &[u8], buffer_type: crate::codec::BufferType) -> Result<Self, Error> {
        let mut b = DataBuffer::load(payload.to_vec(), buffer_type);
        Ok(IofDelivery {
            source: one(&mut b, "iof source")?,
            channel: one(&mut b, "iof channel")?,
            remote_id: one::<Size>(&mut b, "iof id")?.0,
            info: unpack_info_list(&mut b)?,
            data: one(&mut b, "iof data")?,
        })
    }
}

/// A `PMIX_SIZE` count and, when non-empty, the values.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::BufferType;
    use crate::model::attr;
    use crate::wire::Request;

    fn procs() -> Vec<Proc> {
        vec![
            Proc::try_new("job", 0).unwrap(),
            Proc::try_new("job", 3).unwrap(),
        ]
    }

    fn infos() -> Vec<Info> {
        vec![
            Info::new(attr::TIMEOUT, 5),
            Info::new(attr::NSPACE, "x".to_string()),
        ]
    }

    /// One value of every operation, with non-empty arrays, and some with empty ones.
    fn every_op() -> Vec<Op> {
        let app = App {
            cmd: Some("hostname".into()),
            argv: vec![Some("hostname".into()), Some("-s".into())],
            env: vec![Some("A=1".into())],
            cwd: Some("/tmp".into()),
            maxprocs: 2,
            info: infos(),
        };
        let query = Query {
            keys: vec![Some("pmix.qry.ns".into())],
            qualifiers: infos(),
        };
        vec![
            Op::Spawn {
                job_info: infos(),
                apps: vec![app],
            },
            Op::Spawn {
                job_info: vec![],
                apps: vec![],
            },
            Op::Connect {
                procs: procs(),
                info: infos(),
            },
            Op::Disconnect {
                procs: procs(),
                info: vec![],
            },
            Op::DeregisterEvents {
                codes: vec![Status(-61), Status(-1)],
            },
            Op::DeregisterEvents { codes: vec![] },
            Op::Query {
                queries: vec![query],
            },
            Op::Log {
                timestamp: Time(1_700_000_000),
                data: infos(),
                directives: vec![],
            },
            Op::Alloc {
                directive: AllocDirective(1),
                info: infos(),
            },
            Op::JobControl {
                targets: vec![],
                directives: infos(),
            },
            Op::Monitor {
                monitor: Info::new(attr::TIMEOUT, 1),
                error: Status(-1),
                directives: infos(),
            },
            Op::GetCredential { info: vec![] },
            Op::ValidateCredential {
                credential: ByteObject(vec![1, 2, 3]),
                directives: infos(),
            },
            Op::IofPull {
                procs: procs(),
                directives: infos(),
                channel: IofChannel(0x3),
                local_id: 7,
            },
            Op::IofPush {
                targets: procs(),
                directives: vec![],
                data: Some(ByteObject(b"hello\n".to_vec())),
            },
            Op::IofPush {
                targets: vec![],
                directives: vec![],
                data: None,
            },
            Op::IofDeregister {
                directives: vec![],
                remote_id: 9,
            },
            Op::GroupConstruct {
                group: "g".into(),
                procs: procs(),
                info: infos(),
            },
            Op::GroupInvite {
                group: "g".into(),
                procs: procs(),
                info: vec![],
            },
            Op::GroupJoin {
                group: "g".into(),
                procs: procs(),
                info: vec![],
            },
            Op::GroupLeave {
                group: "g".into(),
                info: infos(),
            },
            // A 4.x peer's destruct names no members (the 5.0 layout: its own test).
            Op::GroupDestruct {
                group: "g".into(),
                members: vec![],
                info: vec![],
            },
            Op::FabricRegister {
                directives: infos(),
            },
            Op::FabricUpdate { index: 4 },
            Op::ComputeDeviceDistances {
                topology: Topology {
                    source: Some("hwloc".into()),
                    topology: Some("<topology/>".into()),
                },
                cpuset: Cpuset {
                    source: Some("hwloc".into()),
                    bitmap: Some("0-3".into()),
                },
                info: vec![],
            },
            Op::RefreshCache {
                nspace: "job".into(),
                rank: Rank(3),
            },
            Op::SessionControl {
                session_id: 7,
                directives: infos(),
            },
            Op::ResolvePeers {
                node: Some("n0".into()),
                nspace: None,
            },
            Op::ResolveNode {
                nspace: Some("job".into()),
            },
        ]
    }

    #[test]
    fn every_operation_round_trips_in_both_buffer_types() {
        for bt in [BufferType::NonDescribed, BufferType::FullyDescribed] {
            for op in every_op() {
                let req = Request::Op(op.clone());
                let bytes = req.encode(bt).unwrap();
                assert_eq!(
                    Request::decode(&bytes, bt).unwrap(),
                    req,
                    "{op:?} in {bt:?}"
                );
            }
        }
    }

    #[test]
    fn every_command_beyond_the_core_set_has_a_typed_operation() {
        let typed: Vec<Command> = every_op().iter().map(Op::command).collect();
        let core = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 13];
        for c in Command::ALL {
            assert!(
                core.contains(&c.0) || typed.contains(c) || UNTYPED.contains(c),
                "{c:?} has no typed operation"
            );
        }
        // The untyped ones keep their bodies, for the server to refuse.
        let bt = BufferType::NonDescribed;
        let mut b = DataBuffer::with_type(bt);
        b.pack(&[Command::RESBLK]).unwrap();
        b.pack(&[7u8]).unwrap();
        let bytes = b.unload();
        let decoded = Request::decode(&bytes, bt).unwrap();
        assert!(matches!(
            decoded,
            Request::Other {
                command: Command::RESBLK,
                ..
            }
        ));
    }

    /// The layouts, built by hand in OpenPMIx's pack order.
    #[test]
    fn fields_are_packed_in_openpmix_order() {
        let bt = BufferType::NonDescribed;
        let check = |op: Op, build: &dyn Fn(&mut DataBuffer)| {
            let mut expected = DataBuffer::with_type(bt);
            expected.pack(&[op.command()]).unwrap();
            build(&mut expected);
            assert_eq!(
                Request::Op(op.clone()).encode(bt).unwrap(),
                expected.unload(),
                "{op:?}"
            );
        };
        check(
            Op::Log {
                timestamp: Time(5),
                data: infos(),
                directives: vec![],
            },
            &|b| {
                b.pack(&[Time(5)]).unwrap();
                b.pack(&[Size(2)]).unwrap();
                b.pack(&infos()).unwrap();
                b.pack(&[Size(0)]).unwrap();
            },
        );
        check(
            Op::Monitor {
                monitor: Info::new(attr::TIMEOUT, 1),
                error: Status(-1),
                directives: vec![],
            },
            &|b| {
                b.pack(&[Info::new(attr::TIMEOUT, 1)]).unwrap();
                b.pack(&[Status(-1)]).unwrap();
                b.pack(&[Size(0)]).unwrap();
            },
        );
        check(
            Op::IofPull {
                procs: procs(),
                directives: vec![],
                channel: IofChannel(2),
                local_id: 7,
            },
            &|b| {
                b.pack(&[Size(2)]).unwrap();
                b.pack(&procs()).unwrap();
                b.pack(&[Size(0)]).unwrap();
                b.pack(&[IofChannel(2)]).unwrap();
                b.pack(&[Size(7)]).unwrap();
            },
        );
        check(
            Op::GroupConstruct {
                group: "g".into(),
                procs: procs(),
                info: vec![],
            },
            &|b| {
                b.pack(&["g".to_string()]).unwrap();
                b.pack(&[Size(2)]).unwrap();
                b.pack(&procs()).unwrap();
                b.pack(&[Size(0)]).unwrap();
            },
        );
        check(
            Op::DeregisterEvents {
                codes: vec![Status(-61), Status(-1)],
            },
            &|b| {
                b.pack(&[Status(-61)]).unwrap();
                b.pack(&[Status(-1)]).unwrap();
            },
        );
        check(Op::FabricUpdate { index: 4 }, &|b| {
            b.pack(&[Size(4)]).unwrap()
        });
        // 5.0 and 6.1: a NULL node or namespace is a NULL string.
        check(
            Op::ResolvePeers {
                node: Some("n0".into()),
                nspace: None,
            },
            &|b| {
                b.pack(&[Some("n0".to_string())]).unwrap();
                b.pack(&[None::<String>]).unwrap();
            },
        );
        check(
            Op::RefreshCache {
                nspace: "job".into(),
                rank: Rank(3),
            },
            &|b| {
                b.pack(&["job".to_string()]).unwrap();
                b.pack(&[Rank(3)]).unwrap();
            },
        );
        check(
            Op::SessionControl {
                session_id: 7,
                directives: vec![],
            },
            &|b| {
                b.pack(&[7u32]).unwrap();
                b.pack(&[Size(0)]).unwrap();
            },
        );
    }

    /// OpenPMIx 5.0 and 6.1 clients send the members they learned at construction; 4.2's
    /// send none, and a 4.x server must not see them.
    #[test]
    fn a_destruct_lists_its_members_from_5_0_on() {
        let bt = BufferType::NonDescribed;
        let destruct = |members: Vec<Proc>| {
            Request::Op(Op::GroupDestruct {
                group: "g".into(),
                members,
                info: infos(),
            })
        };
        let mut five = DataBuffer::with_type(bt);
        five.pack(&[Command::GROUP_DESTRUCT]).unwrap();
        five.pack(&["g".to_string()]).unwrap();
        five.pack(&[Size(2)]).unwrap();
        five.pack(&procs()).unwrap();
        five.pack(&[Size(2)]).unwrap();
        five.pack(&infos()).unwrap();
        let five = five.unload();
        for dialect in [Dialect::V5, Dialect::V6] {
            let req = destruct(procs());
            assert_eq!(req.encode_for(bt, dialect).unwrap(), five);
            assert_eq!(Request::decode_for(&five, bt, dialect).unwrap(), req);
        }
        // Read as 4.x, the member count would be taken for the info count.
        assert!(Request::decode(&five, bt).is_err());
        let four = destruct(procs()).encode(bt).unwrap();
        assert_eq!(Request::decode(&four, bt).unwrap(), destruct(vec![]));
        // An empty member array is still one pack call: a count of zero, then nothing.
        let mut empty = DataBuffer::with_type(bt);
        empty.pack(&[Command::GROUP_DESTRUCT]).unwrap();
        empty.pack(&["g".to_string()]).unwrap();
        empty.pack(&[Size(0)]).unwrap();
        empty.pack::<Proc>(&[]).unwrap();
        empty.pack(&[Size(0)]).unwrap();
        let empty = empty.unload();
        let req = Request::Op(Op::GroupDestruct {
            group: "g".into(),
            members: vec![],
            info: vec![],
        });
        for bt in [BufferType::NonDescribed, BufferType::FullyDescribed] {
            let bytes = req.encode_for(bt, Dialect::V6).unwrap();
            assert_eq!(Request::decode_for(&bytes, bt, Dialect::V6).unwrap(), req);
        }
        assert_eq!(req.encode_for(bt, Dialect::V6).unwrap(), empty);
    }

    #[test]
    fn truncated_operations_are_errors_not_panics() {
        for bt in [BufferType::NonDescribed, BufferType::FullyDescribed] {
            for op in every_op() {
                let bytes = Request::Op(op.clone()).encode(bt).unwrap();
                for cut in 1..bytes.len() {
                    // Some prefixes are themselves valid (an optional trailing field, or codes
                    // read until the end); none may panic, and a prefix that decodes must not
                    // claim to be the whole operation.
                    if let Ok(Request::Op(got)) = Request::decode(&bytes[..cut], bt) {
                        assert_ne!(got, op, "{op:?} cut at {cut}");
                    }
                }
            }
        }
    }

    #[test]
    fn iof_delivery_round_trips() {
        let d = IofDelivery {
            source: Proc::try_new("job", 1).unwrap(),
            channel: IofChannel(2),
            remote_id: 3,
            info: infos(),
            data: ByteObject(b"out".to_vec()),
        };
        for bt in [BufferType::NonDescribed, BufferType::FullyDescribed] {
            let bytes = d.encode(bt).unwrap();
            assert_eq!(IofDelivery::decode(&bytes, bt).unwrap(), d);
            for cut in 0..bytes.len() {
                assert!(IofDelivery::decode(&bytes[..cut], bt).is_err());
            }
        }
    }
}
