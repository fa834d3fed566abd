//! Peers of OpenPMIx 5.0 and 6.1: the version each connection states, and the layouts it
//! chooses (`wire::version`), checked in bytes.

use super::tests::{KERNEL, UID, core_with, handshake, host_call, p, tool_hello};
use super::*;
use crate::codec::{BufferType, DataBuffer, Size};
use crate::wire::handshake::{ToolReply, decode_status};
use crate::wire::{Command, ConnectRequest, Dialect, Op, OpReply, PeerType, PeerVersion};

const ND: BufferType = BufferType::NonDescribed;

/// Rank `r`'s connect message as a client of OpenPMIx `version` sends it.
fn client_hello(r: u32, version: &str) -> ConnectRequest {
    ConnectRequest {
        version: version.into(),
        ..ConnectRequest::simple_client(p(r), UID, UID, ND)
    }
}

/// Connect rank `r` as a client of `version`; its connection is `100 + r`.
fn connect_as(c: &mut ServerCore, r: u32, version: &str) -> ConnId {
    let conn = ConnId::from(r) + 100;
    c.handle_hello(conn, &client_hello(r, version), KERNEL);
    let (reply, refused) = handshake(c, conn);
    assert!(!refused, "rank {r} refused: {reply:?}");
    conn
}

/// Send `req` from `conn` as a peer of `dialect` writes it.
fn send_as(c: &mut ServerCore, conn: ConnId, tag: u32, req: &Request, dialect: Dialect) {
    let payload = req.encode_for(ND, dialect).unwrap();
    c.handle_frame(
        conn,
        Frame {
            pindex: 0,
            tag: Tag(tag),
            payload,
        },
    );
}

/// The payloads sent since the last drain, with their connection and tag; no connection
/// may have been closed.
fn sent(c: &mut ServerCore) -> Vec<(ConnId, u32, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some(a) = c.poll_action() {
        match a {
            Action::Send { conn, tag, payload } => out.push((conn, tag.0, payload)),
            Action::Close { conn, reason } => panic!("closed {conn}: {reason}"),
            _ => {}
        }
    }
    out
}

#[test]
fn each_connection_keeps_the_version_its_peer_stated() {
    let mut c = core_with(3);
    let a = connect_as(&mut c, 0, "5.0.9a1");
    let b = connect_as(&mut c, 1, "6.1.0");
    let d = connect_as(&mut c, 2, "4.2.2rc2");
    let version = |c: &ServerCore, conn| c.cx.conns[&conn].version;
    assert_eq!(version(&c, a), PeerVersion::parse("5.0.9"));
    assert_eq!(version(&c, b).dialect(), Dialect::V6);
    assert_eq!(version(&c, d), PeerVersion::OPENPMIX_4_2);
    // A tool's too, once the host admitted it.
    let mut tool = tool_hello(
        PeerType::TOOL_GIVEN_ID,
        Some(Proc::try_new("t", 0).unwrap()),
        UID,
    );
    tool.version = "6.1.0".into();
    c.handle_hello(9, &tool, KERNEL);
    let (op, _) = host_call(&mut c);
    c.handle_host(op, HostResult::Proc(Err(Status::ERR_NOT_SUPPORTED)));
    assert!(!handshake(&mut c, 9).1);
    assert_eq!(version(&c, 9).dialect(), Dialect::V6);
}

/// A singleton of 5.0 or later reads a status and its peer index (the client form); one of
/// 4.2 the tool form. Both are admitted as tools are.
#[test]
fn a_singleton_is_answered_in_the_form_its_version_reads() {
    let mut c = core_with(1).with_id(Proc::try_new("srv", 0).unwrap());
    let me = Proc::try_new("singleton.vm.42", 0).unwrap();
    for (conn, version) in [(1, "6.1.0"), (2, "5.0.9a1"), (3, "4.2.2rc2")] {
        let mut hello = tool_hello(PeerType::SINGLETON_CLIENT, Some(me.clone()), UID);
        hello.version = version.into();
        c.handle_hello(conn, &hello, KERNEL);
        let (op, call) = host_call(&mut c);
        assert!(matches!(call, HostCall::ToolConnected { .. }), "{call:?}");
        c.handle_host(op, HostResult::Proc(Err(Status::ERR_NOT_SUPPORTED)));
        let (reply, refused) = handshake(&mut c, conn);
        assert!(!refused);
        if version.starts_with('4') {
            assert_eq!(reply.len(), ToolReply::encoded_len(false));
            let r = ToolReply::decode(&reply, false).unwrap();
            assert_eq!(r.server, Proc::try_new("srv", 0).unwrap());
        } else {
            assert_eq!(reply.len(), 8, "{version}");
            assert_eq!(
                decode_status(reply[..4].try_into().unwrap()),
                Status::SUCCESS
            );
        }
    }
    // 6.1 singletons then ask for their job's information, under their own namespace.
    send_as(&mut c, 1, 101, &Request::JobInfo, Dialect::V6);
    let (_, tag, payload) = sent(&mut c).remove(0);
    assert_eq!(tag, 101);
    let reply = Reply::decode_for(Command::REQ, &payload, ND, Dialect::V6).unwrap();
    assert!(matches!(reply, Reply::JobInfo { nspace, .. } if nspace == me.nspace));
}

/// `v51` and `v61` encode what this server reads as `v41` does; an older encoding is
/// refused with a status before anything else, and a 6.1 scheduler is admitted as a tool.
#[test]
fn encodings_of_5_0_and_6_1_are_spoken_and_older_ones_refused() {
    let mut c = core_with(3);
    let mut old = client_hello(0, "2.1.4");
    old.bfrops = "v21".into();
    c.handle_hello(1, &old, KERNEL);
    let (reply, refused) = handshake(&mut c, 1);
    assert!(refused && reply.len() == 4);
    assert_eq!(
        decode_status(reply[..4].try_into().unwrap()),
        Status::ERR_NOT_SUPPORTED
    );
    for (r, bfrops) in [(0, "v61"), (1, "v51"), (2, "v4,v41")] {
        let mut hello = client_hello(r, "6.1.0");
        hello.bfrops = bfrops.into();
        c.handle_hello(10 + ConnId::from(r), &hello, KERNEL);
        assert!(!handshake(&mut c, 10 + ConnId::from(r)).1, "{bfrops}");
    }
    let sched = Proc::try_new("sched", 0).unwrap();
    let mut hello = tool_hello(PeerType::SCHEDULER_WITH_ID, Some(sched.clone()), UID);
    (hello.version, hello.bfrops) = ("6.1.0".into(), "v61".into());
    c.handle_hello(20, &hello, KERNEL);
    let (op, call) = host_call(&mut c);
    let HostCall::ToolConnected { info } = call else {
        panic!("{call:?}");
    };
    assert!(info.iter().any(|i| i.is(attr::NSPACE)));
    c.handle_host(op, HostResult::Proc(Err(Status::ERR_NOT_SUPPORTED)));
    let (reply, refused) = handshake(&mut c, 20);
    assert!(!refused);
    assert_eq!(
        ToolReply::decode(&reply, false).unwrap().status,
        Status::SUCCESS
    );
    assert_eq!(c.cx.conns[&20].proc, sched);
}

/// Three 6.1 clients (and a 5.0 one) build a group: each reply names the members in its
/// client's layout, and the destructs that list them back are served.
#[test]
fn groups_of_5_0_and_6_1_clients_form_and_end_in_their_layouts() {
    let mut c = core_with(3);
    let versions = ["6.1.0", "6.1.0", "5.0.9a1"];
    let conns: Vec<ConnId> = (0..3)
        .map(|r| connect_as(&mut c, r, versions[r as usize]))
        .collect();
    drain(&mut c);
    let members = vec![p(0), p(1), p(2)];
    let construct = Request::Op(Op::GroupConstruct {
        group: "g".into(),
        procs: members.clone(),
        info: vec![],
    });
    for (r, &conn) in conns.iter().enumerate() {
        let dialect = Dialect::of(versions[r]);
        send_as(&mut c, conn, 110, &construct, dialect);
    }
    let replies = sent(&mut c);
    assert_eq!(replies.len(), 3);
    for (conn, tag, payload) in replies {
        assert_eq!(tag, 110);
        let dialect = if conn == conns[2] {
            Dialect::V5
        } else {
            Dialect::V6
        };
        // The bytes, as 6.1's and 5.0's own servers pack them.
        let mut want = DataBuffer::with_type(ND);
        want.pack(&[Status::SUCCESS]).unwrap();
        want.pack(&[Size(3)]).unwrap();
        want.pack(&members).unwrap();
        if dialect == Dialect::V6 {
            want.pack(&[false]).unwrap();
            want.pack(&[Size(0)]).unwrap();
        }
        assert_eq!(payload, want.unload(), "{dialect:?}");
        let reply = Reply::decode_for(Command::GROUP_CONSTRUCT, &payload, ND, dialect);
        let Ok(Reply::Op(OpReply::GroupConstruct { members: got, .. })) = reply else {
            panic!("{reply:?}");
        };
        assert_eq!(got, members);
    }
    let destruct = Request::Op(Op::GroupDestruct {
        group: "g".into(),
        members: members.clone(),
        info: vec![],
    });
    for (r, &conn) in conns.iter().enumerate() {
        send_as(&mut c, conn, 111, &destruct, Dialect::of(versions[r]));
    }
    let replies = sent(&mut c);
    assert_eq!(replies.len(), 3);
    for (_, tag, payload) in replies {
        assert_eq!(tag, 111);
        let reply = Reply::decode(Command::GROUP_DESTRUCT, &payload, ND).unwrap();
        assert_eq!(
            reply,
            super::groups_tests::plain(Command::GROUP_DESTRUCT, Status::SUCCESS)
        );
    }
    assert!(c.groups.live.is_empty());
}

fn drain(c: &mut ServerCore) {
    while c.poll_action().is_some() {}
}

/// Ranks 0 and 2 of "job" on this server's node n0, rank 1 on n1, from the maps alone; ranks
/// 0 and 2 connected as 6.1 clients.
fn mapped_job() -> (ServerCore, ConnId, ConnId) {
    use crate::store::realm::info;
    let mut c = ServerCore::new(Some("n0".into()), false, "4.2.2").with_tool_uids(vec![UID]);
    c.register_nspace(
        Nspace::new("job").unwrap(),
        &[
            info(attr::NODE_MAP.wire_key(), Value::string("n0,n1")),
            info(attr::PROC_MAP.wire_key(), Value::string("0,2;1")),
        ],
    )
    .unwrap();
    c.register_client(p(0), UID, UID);
    c.register_client(p(2), UID, UID);
    let a = connect_as(&mut c, 0, "6.1.0");
    let b = connect_as(&mut c, 2, "6.1.0");
    drain(&mut c);
    (c, a, b)
}

/// The one reply `req` from `conn` gets, decoded as a 6.1 client reads it.
fn ask(c: &mut ServerCore, conn: ConnId, req: Op) -> Reply {
    let command = req.command();
    send_as(c, conn, 120, &Request::Op(req), Dialect::V6);
    let mut replies = sent(c);
    assert_eq!(replies.len(), 1, "{command:?}");
    let (_, tag, payload) = replies.remove(0);
    assert_eq!(tag, 120);
    Reply::decode_for(command, &payload, ND, Dialect::V6).unwrap()
}

#[test]
fn peers_and_nodes_are_resolved_from_the_registered_maps() {
    let (mut c, a, _) = mapped_job();
    let peers = |c: &mut ServerCore, node: Option<&str>, nspace: Option<&str>| match ask(
        c,
        a,
        Op::ResolvePeers {
            node: node.map(str::to_owned),
            nspace: nspace.map(str::to_owned),
        },
    ) {
        Reply::Op(OpReply::ResolvedPeers { status, procs }) => (status, procs),
        other => panic!("{other:?}"),
    };
    let ok = Status::SUCCESS;
    assert_eq!(
        peers(&mut c, Some("n0"), Some("job")),
        (ok, vec![p(0), p(2)])
    );
    assert_eq!(peers(&mut c, Some("n1"), Some("job")), (ok, vec![p(1)]));
    // Every namespace; no node: the server's own.
    assert_eq!(peers(&mut c, None, Some("")), (ok, vec![p(0), p(2)]));
    // What this server cannot tell sends the client to its own resolution.
    let unknown = (Status::ERR_NOT_FOUND, vec![]);
    assert_eq!(peers(&mut c, Some("n9"), Some("job")), unknown);
    assert_eq!(peers(&mut c, Some("n0"), Some("nope")), unknown);
    let nodes = |c: &mut ServerCore, nspace: Option<&str>| match ask(
        c,
        a,
        Op::ResolveNode {
            nspace: nspace.map(str::to_owned),
        },
    ) {
        Reply::Op(OpReply::ResolvedNode { status, nodes }) => (status, nodes),
        other => panic!("{other:?}"),
    };
    assert_eq!(nodes(&mut c, Some("job")), (ok, Some("n0,n1".to_owned())));
    assert_eq!(nodes(&mut c, None), (ok, Some("n0,n1".to_owned())));
    assert_eq!(nodes(&mut c, Some("nope")), (Status::ERR_NOT_FOUND, None));
}

#[test]
fn a_refresh_returns_what_the_process_committed() {
    use crate::model::Scope;
    use crate::wire::CommitBucket;
    let (mut c, a, b) = mapped_job();
    let kv = Kval {
        key: Key::new("ep").unwrap(),
        value: Value::Uint32(7),
    };
    let commit = Request::Commit {
        buckets: vec![CommitBucket {
            scope: Scope::GLOBAL,
            kvals: vec![kv.clone()],
        }],
    };
    send_as(&mut c, b, 110, &commit, Dialect::V6);
    drain(&mut c);
    let refresh = |c: &mut ServerCore, rank| {
        ask(
            c,
            a,
            Op::RefreshCache {
                nspace: "job".into(),
                rank: Rank(rank),
            },
        )
    };
    let want = Reply::Op(OpReply::RefreshCache {
        status: Status::SUCCESS,
        kvals: vec![kv],
    });
    assert_eq!(refresh(&mut c, 2), want);
    let none = OpReply::failure(Command::REFRESH_CACHE, Status::ERR_NOT_FOUND);
    assert_eq!(refresh(&mut c, 1), Reply::Op(none));
}

/// 6.1's session control and resource blocks, and a command no release has yet, are
/// refused with the bare status on their tag: the connection stays.
#[test]
fn commands_this_server_does_not_serve_are_refused_on_their_tag() {
    let (mut c, a, _) = mapped_job();
    let mut bare = DataBuffer::with_type(ND);
    bare.pack(&[Status::ERR_NOT_SUPPORTED]).unwrap();
    let bare = bare.unload();
    let session = Request::Op(Op::SessionControl {
        session_id: 3,
        directives: vec![],
    });
    send_as(&mut c, a, 130, &session, Dialect::V6);
    assert_eq!(sent(&mut c), vec![(a, 130, bare.clone())]);
    for command in [Command::RESBLK, Command::REQ_SYSINFO, Command(200)] {
        // A body this server cannot read (RESBLK's is in v61 types): kept, not read.
        let mut b = DataBuffer::with_type(ND);
        b.pack(&[command]).unwrap();
        let mut payload = b.unload();
        payload.extend_from_slice(&[0x47, 0xff, 0x00]);
        c.handle_frame(
            a,
            Frame {
                pindex: 0,
                tag: Tag(131),
                payload,
            },
        );
        assert_eq!(sent(&mut c), vec![(a, 131, bare.clone())], "{command:?}");
    }
    assert!(c.cx.conns.contains_key(&a));
}

/// A statistics value (types 61–64, gone in 6.1) that a 4.2 client posted reaches the other
/// 4.2 client, and is left out of what a 6.1 client is sent, which would otherwise fail to
/// read the whole reply.
#[test]
fn a_6_1_client_is_never_sent_the_statistics_types() {
    use crate::model::Scope;
    use crate::wire::CommitBucket;
    let mut c = core_with(3);
    let poster = connect_as(&mut c, 0, "4.2.2rc2");
    let old = connect_as(&mut c, 1, "4.2.2rc2");
    let new = connect_as(&mut c, 2, "6.1.0");
    drain(&mut c);
    let stats = Kval {
        key: Key::new("st").unwrap(),
        value: Value::ProcStats(Box::default()),
    };
    let plain = Kval {
        key: Key::new("ep").unwrap(),
        value: Value::Uint32(7),
    };
    let commit = Request::Commit {
        buckets: vec![CommitBucket {
            scope: Scope::GLOBAL,
            kvals: vec![stats.clone(), plain.clone()],
        }],
    };
    send_as(&mut c, poster, 110, &commit, Dialect::V4);
    drain(&mut c);
    let refresh = Op::RefreshCache {
        nspace: "job".into(),
        rank: Rank(0),
    };
    let kvals_of = |reply: Reply| match reply {
        Reply::Op(OpReply::RefreshCache { kvals, .. }) => kvals,
        other => panic!("{other:?}"),
    };
    send_as(&mut c, old, 120, &Request::Op(refresh.clone()), Dialect::V4);
    let (_, _, payload) = sent(&mut c).remove(0);
    let reply = Reply::decode(Command::REFRESH_CACHE, &payload, ND).unwrap();
    assert_eq!(kvals_of(reply), vec![stats, plain.clone()]);
    send_as(&mut c, new, 121, &Request::Op(refresh), Dialect::V6);
    let (_, _, payload) = sent(&mut c).remove(0);
    let reply = Reply::decode_for(Command::REFRESH_CACHE, &payload, ND, Dialect::V6).unwrap();
    assert_eq!(kvals_of(reply), vec![plain]);
}
