//! The server core driven by hand: connects, requests and failures, checked on the actions.

use super::collective::LOST_PARTICIPANT;
use super::*;
use crate::codec::BufferType;
use crate::model::{Key, Kval, Scope, Value, attr};
use crate::store::realm::info;
use crate::wire::PeerType;
use crate::wire::handshake::ToolReply;
use crate::wire::{Command, CommitBucket, ConnectRequest};

pub(super) const UID: u32 = 1000;

pub(super) fn p(r: u32) -> Proc {
    Proc::try_new("job", r).unwrap()
}

/// Who the kernel says this test's processes are.
pub(super) const KERNEL: Option<PeerCred> = Some(PeerCred {
    uid: UID,
    gid: Some(UID),
    pid: None,
});

pub(super) fn core_with(n: u32) -> ServerCore {
    let mut c = ServerCore::new(Some("n0".into()), false, "4.2.2").with_tool_uids(vec![UID]);
    c.register_nspace(
        Nspace::new("job").unwrap(),
        &[info(attr::JOB_SIZE.wire_key(), Value::Uint32(n))],
    )
    .unwrap();
    for r in 0..n {
        c.register_client(p(r), UID, UID);
    }
    c
}

pub(super) fn connect(c: &mut ServerCore, r: u32) -> ConnId {
    let conn = ConnId::from(r) + 100;
    let req = ConnectRequest::simple_client(p(r), UID, UID, BufferType::NonDescribed);
    c.admission
        .client(&mut c.cx, conn, &req, PeerCred::new(UID, UID))
        .expect("registered client connects");
    conn
}

pub(super) fn send(c: &mut ServerCore, conn: ConnId, tag: u32, req: &Request) {
    let payload = req.encode(BufferType::NonDescribed).unwrap();
    c.handle_frame(
        conn,
        Frame {
            pindex: 0,
            tag: Tag(tag),
            payload,
        },
    );
}

/// The replies sent to `conn` since the last drain, decoded for `command`.
pub(super) fn replies(c: &mut ServerCore, command: Command) -> Vec<(ConnId, u32, Reply)> {
    let mut out = Vec::new();
    while let Some(a) = c.poll_action() {
        if let Action::Send { conn, tag, payload } = a {
            out.push((
                conn,
                tag.0,
                Reply::decode(command, &payload, BufferType::NonDescribed).unwrap(),
            ));
        }
    }
    out
}

/// The op of the first timer of `after_s` seconds the core asked for since the last drain.
pub(super) fn armed_timer(c: &mut ServerCore, after_s: u32) -> u64 {
    std::iter::from_fn(|| c.poll_action())
        .find_map(|a| match a {
            Action::Timer { op, after_s: s } if s == after_s => Some(op),
            _ => None,
        })
        .expect("a timer is armed")
}

pub(super) fn fence() -> Request {
    Request::Fence {
        procs: vec![],
        info: vec![Info::new(attr::COLLECT_DATA, true)],
    }
}

#[test]
fn unregistered_process_is_refused() {
    let mut c = core_with(1);
    let kernel = PeerCred::new(UID, UID);
    let req = ConnectRequest::simple_client(p(5), UID, UID, BufferType::NonDescribed);
    let status = c
        .admission
        .client(&mut c.cx, 1, &req, kernel)
        .map_err(|(s, _)| s);
    assert_eq!(status, Err(Status::ERR_NOT_FOUND));
    let other = Proc::try_new("nope", 0).unwrap();
    let other = ConnectRequest::simple_client(other, UID, UID, BufferType::NonDescribed);
    let status = c
        .admission
        .client(&mut c.cx, 2, &other, kernel)
        .map_err(|(s, _)| s);
    assert_eq!(status, Err(Status::ERR_NOT_FOUND));
}

/// The status of `conn`'s handshake answer, `None` when it was accepted.
fn refusal(c: &mut ServerCore, conn: ConnId) -> Option<Status> {
    let (reply, refused) = handshake(c, conn);
    refused.then(|| {
        crate::wire::handshake::decode_status(reply[..4].try_into().expect("a status word"))
    })
}

#[test]
fn a_peer_whose_transport_vouches_for_no_one_is_refused() {
    let mut c = core_with(1);
    let req = ConnectRequest::simple_client(p(0), UID, UID, BufferType::NonDescribed);
    c.handle_hello(1, &req, None);
    assert_eq!(refusal(&mut c, 1), Some(Status::ERR_INVALID_CRED));
    c.handle_hello(2, &tool_hello(PeerType::TOOL_NEEDS_ID, None, UID), None);
    assert_eq!(refusal(&mut c, 2), Some(Status::ERR_INVALID_CRED));
}

#[test]
fn a_client_of_another_user_is_refused_whatever_it_states() {
    let mut c = core_with(1);
    // It states the registered user; the kernel says root.
    let req = ConnectRequest::simple_client(p(0), UID, UID, BufferType::NonDescribed);
    c.handle_hello(1, &req, Some(PeerCred::new(0, 0)));
    assert_eq!(refusal(&mut c, 1), Some(Status::ERR_INVALID_CRED));
    // It states the truth, and the truth is not the registration.
    let other = UID + 1;
    let req = ConnectRequest::simple_client(p(0), other, other, BufferType::NonDescribed);
    c.handle_hello(2, &req, Some(PeerCred::new(other, other)));
    assert_eq!(refusal(&mut c, 2), Some(Status::ERR_INVALID_CRED));
    // The registered user, over TCP (no gid from the kernel), with psec none: accepted.
    let mut req = ConnectRequest::simple_client(p(0), UID, UID, BufferType::NonDescribed);
    req.psec = "none".into();
    req.credential.clear();
    let tcp = PeerCred {
        uid: UID,
        gid: None,
        pid: None,
    };
    c.handle_hello(3, &req, Some(tcp));
    assert_eq!(refusal(&mut c, 3), None);
}

#[test]
fn the_kernels_gid_must_match_the_registration_where_it_is_known() {
    let mut c = core_with(1);
    let req = ConnectRequest::simple_client(p(0), UID, UID + 1, BufferType::NonDescribed);
    c.handle_hello(1, &req, Some(PeerCred::new(UID, UID + 1)));
    assert_eq!(refusal(&mut c, 1), Some(Status::ERR_INVALID_CRED));
}

#[test]
fn a_second_connection_for_a_live_rank_is_refused_and_the_first_keeps_working() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    drain(&mut c);
    let req = ConnectRequest::simple_client(p(0), UID, UID, BufferType::NonDescribed);
    c.handle_hello(7, &req, KERNEL);
    assert_eq!(refusal(&mut c, 7), Some(Status::ERR_EXISTS));
    // The intruder's connection closes; the rank it named is still there.
    c.handle_closed(7);
    fence_completes(&mut c, a, b);
}

#[test]
fn a_rank_that_finalized_or_closed_may_connect_again() {
    let mut c = core_with(1);
    let a = connect(&mut c, 0);
    send(&mut c, a, 5, &Request::Finalize);
    drain(&mut c);
    // Re-init after finalize, before its old connection closed.
    let req = ConnectRequest::simple_client(p(0), UID, UID, BufferType::NonDescribed);
    c.handle_hello(8, &req, KERNEL);
    assert_eq!(refusal(&mut c, 8), None);
    c.handle_closed(8);
    // A restarted process after its old connection is gone.
    c.handle_hello(9, &req, KERNEL);
    assert_eq!(refusal(&mut c, 9), None);
}

#[test]
fn tools_of_users_the_host_did_not_admit_are_refused_before_the_host() {
    let mut c = core_with(1);
    let other = UID + 1;
    let mut req = tool_hello(PeerType::TOOL_NEEDS_ID, None, other);
    req.uid_gid = Some((other, other));
    c.handle_hello(1, &req, Some(PeerCred::new(other, other)));
    assert_eq!(refusal(&mut c, 1), Some(Status::ERR_NO_PERMISSIONS));
    // A tool that claims root, or says nothing of itself, is who the kernel says.
    let mut req = tool_hello(PeerType::TOOL_NEEDS_ID, None, 0);
    req.uid_gid = Some((0, 0));
    c.handle_hello(2, &req, Some(PeerCred::new(other, other)));
    assert_eq!(refusal(&mut c, 2), Some(Status::ERR_INVALID_CRED));
    let mut req = tool_hello(PeerType::TOOL_NEEDS_ID, None, 0);
    (req.psec, req.credential, req.uid_gid) = ("none".into(), Vec::new(), None);
    c.handle_hello(3, &req, Some(PeerCred::new(other, other)));
    assert_eq!(refusal(&mut c, 3), Some(Status::ERR_NO_PERMISSIONS));
    assert!(
        !std::iter::from_fn(|| c.poll_action()).any(|a| matches!(a, Action::Host { .. })),
        "the host heard of a refused tool"
    );
}

#[test]
fn the_host_hears_the_kernels_ids_of_tools_and_requesters() {
    let mut c = core_with(1);
    let mut req = tool_hello(PeerType::TOOL_NEEDS_ID, None, UID);
    (req.psec, req.credential, req.uid_gid) = ("none".into(), Vec::new(), None);
    let tcp = PeerCred {
        uid: UID,
        gid: None,
        pid: None,
    };
    c.handle_hello(1, &req, Some(tcp));
    let (_, call) = host_call(&mut c);
    let HostCall::ToolConnected { info } = call else {
        panic!("{call:?}");
    };
    let uid = info.iter().find(|i| i.is(attr::USERID)).map(|i| &i.value);
    assert_eq!(uid, Some(&Value::Uint32(UID)));
    assert!(!info.iter().any(|i| i.is(attr::GRPID)), "no gid was known");
    // A client's spawn carries its ids, says it is a client and names it the parent of
    // spawned processes (v5.0 §17.3.11).
    let a = connect(&mut c, 0);
    drain(&mut c);
    let apps = vec![crate::model::App {
        cmd: Some("true".into()),
        maxprocs: 1,
        ..Default::default()
    }];
    let op = crate::wire::ops::Op::Spawn {
        job_info: vec![],
        apps,
    };
    send(&mut c, a, 9, &Request::Op(op));
    let (_, call) = host_call(&mut c);
    let HostCall::Spawn { job_info, .. } = call else {
        panic!("{call:?}");
    };
    let get = |a: &str| {
        job_info
            .iter()
            .find(|i| i.key.as_str() == a)
            .map(|i| &i.value)
    };
    assert_eq!(get(attr::USERID.wire_key()), Some(&Value::Uint32(UID)));
    assert_eq!(get(attr::GRPID.wire_key()), Some(&Value::Uint32(UID)));
    assert_eq!(
        get(attr::REQUESTOR_IS_CLIENT.wire_key()),
        Some(&Value::Bool(true))
    );
    assert_eq!(
        get(attr::REQUESTOR_IS_TOOL.wire_key()),
        Some(&Value::Bool(false))
    );
    assert_eq!(get(attr::SPAWNED.wire_key()), Some(&Value::Bool(true)));
    assert_eq!(get(attr::PARENT_ID.wire_key()), Some(&Value::Proc(p(0))));
}

/// `first` and `second` fence together (in that order) and both are answered with success.
fn fence_completes(c: &mut ServerCore, first: ConnId, second: ConnId) {
    send(c, first, 101, &fence());
    assert!(replies(c, Command::FENCENB).is_empty());
    send(c, second, 101, &fence());
    let r = replies(c, Command::FENCENB);
    assert_eq!(r.len(), 2);
    assert!(
        r.iter()
            .all(|(_, _, rep)| *rep == Reply::Status(Status::SUCCESS))
    );
}

/// Drop the actions pending.
pub(super) fn drain(c: &mut ServerCore) {
    while c.poll_action().is_some() {}
}

pub(super) fn tool_hello(peer_type: PeerType, proc: Option<Proc>, uid: u32) -> ConnectRequest {
    ConnectRequest {
        psec: "native".into(),
        credential: crate::wire::handshake::native_credential(uid, UID),
        peer_type,
        uid_gid: Some((UID, UID)),
        proc,
        version: "4.2.2rc2".into(),
        bfrops: "v41".into(),
        buffer_type: BufferType::NonDescribed,
        gds: "hash".into(),
        info: vec![],
    }
}

/// The one host call pending, with its op.
pub(super) fn host_call(c: &mut ServerCore) -> (u64, HostCall) {
    let mut calls = Vec::new();
    while let Some(a) = c.poll_action() {
        if let Action::Host { op, call } = a {
            calls.push((op, call));
        }
    }
    assert_eq!(calls.len(), 1, "{calls:?}");
    calls.remove(0)
}

/// The handshake answer for `conn`: the raw reply and whether it was refused.
pub(super) fn handshake(c: &mut ServerCore, want: ConnId) -> (Vec<u8>, bool) {
    while let Some(a) = c.poll_action() {
        if let Action::Handshake {
            conn,
            reply,
            refused,
        } = a
            && conn == want
        {
            return (reply, refused.is_some());
        }
    }
    panic!("no handshake answer for {want}");
}

#[test]
fn tool_that_needs_an_identifier_gets_the_hosts() {
    let mut c = core_with(1).with_id(Proc::try_new("srv", 0).unwrap());
    c.handle_hello(7, &tool_hello(PeerType::TOOL_NEEDS_ID, None, UID), KERNEL);
    let (op, call) = host_call(&mut c);
    let HostCall::ToolConnected { info } = call else {
        panic!("{call:?}");
    };
    let has = |k: &str| info.iter().any(|i| i.key.as_str() == k);
    assert!(has(attr::USERID.wire_key()) && has(attr::GRPID.wire_key()));
    assert!(has(attr::VERSION_INFO.wire_key()) && !has(attr::NSPACE.wire_key()));
    let assigned = Proc::try_new("job.tool.1", 0).unwrap();
    c.handle_host(op, HostResult::Proc(Ok(assigned.clone())));
    let (reply, refused) = handshake(&mut c, 7);
    assert!(!refused);
    let r = ToolReply::decode(&reply, true).unwrap();
    assert_eq!(r.status, Status::SUCCESS);
    assert_eq!(r.assigned, Some(assigned));
    assert_eq!(r.server, Proc::try_new("srv", 0).unwrap());
    // Now a connected peer: it can ask for job information like a client.
    send(&mut c, 7, 101, &Request::JobInfo);
    let r = replies(&mut c, Command::REQ);
    assert_eq!(r.len(), 1);
    assert!(matches!(&r[0].2, Reply::JobInfo { kvals, .. } if kvals.is_empty()));
    // Its finalize is not a client's: no client_finalized upcall.
    send(&mut c, 7, 102, &Request::Finalize);
    while let Some(a) = c.poll_action() {
        assert!(
            !matches!(a, Action::Host { .. }),
            "tool finalize called the host: {a:?}"
        );
    }
}

#[test]
fn tool_without_host_support_keeps_its_own_identifier_or_is_refused() {
    let mut c = core_with(1);
    let own = Proc::try_new("mytool", 0).unwrap();
    c.handle_hello(
        1,
        &tool_hello(PeerType::TOOL_GIVEN_ID, Some(own.clone()), UID),
        KERNEL,
    );
    let (op, _) = host_call(&mut c);
    c.handle_host(op, HostResult::Proc(Err(Status::ERR_NOT_SUPPORTED)));
    let (reply, refused) = handshake(&mut c, 1);
    assert!(!refused);
    let r = ToolReply::decode(&reply, false).unwrap();
    assert_eq!(r.status, Status::SUCCESS);

    // One that needs an identifier cannot get one.
    c.handle_hello(2, &tool_hello(PeerType::TOOL_NEEDS_ID, None, UID), KERNEL);
    let (op, _) = host_call(&mut c);
    c.handle_host(op, HostResult::Proc(Err(Status::ERR_NOT_SUPPORTED)));
    let (reply, refused) = handshake(&mut c, 2);
    assert!(refused);
    assert_eq!(
        crate::wire::handshake::decode_status(reply[..4].try_into().unwrap()),
        Status::ERR_NOT_SUPPORTED
    );
}

#[test]
fn a_tool_under_a_ranks_identifier_leaves_the_rank_alone_when_it_goes() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    drain(&mut c);
    c.handle_hello(
        1,
        &tool_hello(PeerType::TOOL_GIVEN_ID, Some(p(0)), UID),
        KERNEL,
    );
    let (op, _) = host_call(&mut c);
    c.handle_host(op, HostResult::Proc(Ok(p(0))));
    assert_eq!(refusal(&mut c, 1), None);
    send(&mut c, 1, 3, &Request::Finalize);
    c.handle_closed(1);
    drain(&mut c);
    // Rank 0 itself is still in the job: the fence waits for it and completes.
    fence_completes(&mut c, b, a);
    // A simple client's refusal goes through the same answer: the status word alone.
    let req = ConnectRequest::simple_client(p(9), UID, UID, BufferType::NonDescribed);
    c.handle_hello(5, &req, KERNEL);
    let (reply, refused) = handshake(&mut c, 5);
    assert!(refused && reply.len() == 4);
}

#[test]
fn fence_of_all_local_clients_completes_and_answers_everyone() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    replies(&mut c, Command::FENCENB);
    fence_completes(&mut c, a, b);
}

#[test]
fn get_is_held_until_the_target_commits() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    replies(&mut c, Command::GETNB);
    let get = Request::Get {
        nspace: "job".into(),
        rank: Rank(1),
        info: vec![],
        key: Some("k".into()),
    };
    send(&mut c, a, 102, &get);
    assert!(replies(&mut c, Command::GETNB).is_empty(), "held");
    let commit = Request::Commit {
        buckets: vec![CommitBucket {
            scope: Scope::GLOBAL,
            kvals: vec![Kval {
                key: Key::new("k").unwrap(),
                value: Value::Int32(7),
            }],
        }],
    };
    send(&mut c, b, 101, &commit);
    let r = replies(&mut c, Command::GETNB);
    let (_, tag, Reply::Get { status, data }) = &r[1] else {
        panic!("{r:?}")
    };
    assert_eq!((*tag, *status), (102, Status::SUCCESS));
    assert_eq!(data[0].kvals[0].value, Value::Int32(7));
}

#[test]
fn a_connection_past_its_waiting_gets_is_refused_more_and_others_still_wait() {
    let mut c = core_with(2).with_held_gets(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    replies(&mut c, Command::GETNB);
    let get = |key: &str| Request::Get {
        nspace: "job".into(),
        rank: Rank(1),
        info: vec![],
        key: Some(key.into()),
    };
    send(&mut c, a, 102, &get("k1"));
    send(&mut c, a, 103, &get("k2"));
    assert!(replies(&mut c, Command::GETNB).is_empty(), "both held");
    send(&mut c, a, 104, &get("k3"));
    let refused = Reply::Get {
        status: Status::ERR_OUT_OF_RESOURCE,
        data: vec![],
    };
    assert_eq!(replies(&mut c, Command::GETNB), [(a, 104, refused)]);
    // The limit is the connection's: another rank's get still waits.
    send(
        &mut c,
        b,
        105,
        &Request::Get {
            nspace: "job".into(),
            rank: Rank(0),
            info: vec![],
            key: Some("k".into()),
        },
    );
    assert!(replies(&mut c, Command::GETNB).is_empty(), "held");
}

#[test]
fn held_get_with_timeout_ends_in_timeout() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    connect(&mut c, 1);
    replies(&mut c, Command::GETNB);
    let get = Request::Get {
        nspace: "job".into(),
        rank: Rank(1),
        info: vec![Info::new(attr::TIMEOUT, 2)],
        key: Some("k".into()),
    };
    send(&mut c, a, 102, &get);
    let timer = armed_timer(&mut c, 2);
    c.handle_timeout(timer);
    let r = replies(&mut c, Command::GETNB);
    let expected = Reply::Get {
        status: Status::ERR_TIMEOUT,
        data: vec![],
    };
    assert_eq!(r[0].2, expected);
}

#[test]
fn fence_a_participant_never_enters_ends_in_timeout_and_the_next_one_completes() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    while c.poll_action().is_some() {}
    let timed = Request::Fence {
        procs: vec![],
        info: vec![Info::new(attr::TIMEOUT, 2)],
    };
    send(&mut c, a, 101, &timed);
    let timer = armed_timer(&mut c, 2);
    c.handle_timeout(timer);
    let r = replies(&mut c, Command::FENCENB);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].2, Reply::Status(Status::ERR_TIMEOUT));
    // The timed-out fence is gone: both ranks can fence again.
    send(&mut c, a, 102, &fence());
    send(&mut c, b, 102, &fence());
    let r = replies(&mut c, Command::FENCENB);
    assert_eq!(r.len(), 2);
    assert!(
        r.iter()
            .all(|(_, _, rep)| *rep == Reply::Status(Status::SUCCESS))
    );
    // A stale timer changes nothing.
    c.handle_timeout(timer);
    assert!(replies(&mut c, Command::FENCENB).is_empty());
}

#[test]
fn client_disconnecting_mid_fence_fails_the_fence_for_the_others() {
    let mut c = core_with(3);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    let z = connect(&mut c, 2);
    send(&mut c, a, 101, &fence());
    send(&mut c, b, 101, &fence());
    replies(&mut c, Command::FENCENB);
    c.handle_closed(z);
    let r = replies(&mut c, Command::FENCENB);
    assert_eq!(r.len(), 2);
    assert!(
        r.iter()
            .all(|(_, _, rep)| *rep == Reply::Status(LOST_PARTICIPANT))
    );
    // The server keeps serving: a new fence of the survivors' namespace fails fast too
    // (rank 2 can never join), instead of hanging.
    send(&mut c, a, 102, &fence());
    assert_eq!(
        replies(&mut c, Command::FENCENB)[0].2,
        Reply::Status(LOST_PARTICIPANT)
    );
}

#[test]
fn malformed_request_closes_only_that_connection() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    while c.poll_action().is_some() {}
    c.handle_frame(
        a,
        Frame {
            pindex: 0,
            tag: Tag(101),
            payload: vec![2, 3, 0xff],
        },
    );
    let closed: Vec<_> = std::iter::from_fn(|| c.poll_action())
        .filter(|a| matches!(a, Action::Close { .. }))
        .collect();
    assert_eq!(closed.len(), 1);
    send(
        &mut c,
        b,
        101,
        &Request::Op(crate::wire::Op::Query { queries: vec![] }),
    );
    // The other connection is still served: an empty query is refused as a bad parameter.
    assert_eq!(
        replies(&mut c, Command::QUERY)[0].2,
        Reply::Op(crate::wire::OpReply::failure(
            Command::QUERY,
            Status::ERR_BAD_PARAM
        ))
    );
}

#[test]
fn repeated_fences_never_deadlock() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    for round in 0..50u32 {
        send(&mut c, a, 200 + round, &fence());
        send(&mut c, b, 200 + round, &fence());
        assert_eq!(replies(&mut c, Command::FENCENB).len(), 2, "round {round}");
    }
}

// ---- registration from node and proc maps ----

#[test]
fn node_and_proc_maps_alone_give_node_and_process_information() {
    use crate::model::ByteObject;
    use crate::store::Qualifiers;
    let nodes = crate::model::regex::generate_regex("n0,n1").unwrap();
    let procs = crate::model::regex::generate_ppn("0,2;1,3,4").unwrap();
    let mut c = ServerCore::new(Some("n0".into()), false, "4.2.2");
    let mut regex = nodes.into_bytes();
    regex.push(0);
    c.register_nspace(
        Nspace::new("job").unwrap(),
        &[
            // OpenPMIx hosts register the node map as PMIX_REGEX bytes, ours as a string.
            info(attr::NODE_MAP.wire_key(), Value::Regex(ByteObject(regex))),
            info(attr::PROC_MAP.wire_key(), Value::string(procs)),
            // An explicit value wins over a derived one.
            info(attr::NUM_NODES.wire_key(), Value::Uint32(7)),
        ],
    )
    .unwrap();
    let realms = c.cx.store.realms("job").unwrap();
    let q = Qualifiers::default();
    let get =
        |key: &str, rank: Rank, host: &str| realms.lookup(key, rank, &q, None, Some(host)).cloned();
    let w = Rank::WILDCARD;
    assert_eq!(
        get(attr::JOB_SIZE.wire_key(), w, "n0"),
        Some(Value::Uint32(5))
    );
    assert_eq!(
        get(attr::NUM_NODES.wire_key(), w, "n0"),
        Some(Value::Uint32(7))
    );
    assert_eq!(
        get(attr::NODE_LIST.wire_key(), w, "n0"),
        Some(Value::string("n0,n1"))
    );
    assert_eq!(
        get(attr::LOCAL_PEERS.wire_key(), w, "n0"),
        Some(Value::string("0,2"))
    );
    assert_eq!(
        get(attr::LOCAL_PEERS.wire_key(), w, "n1"),
        Some(Value::string("1,3,4"))
    );
    assert_eq!(
        get(attr::LOCAL_SIZE.wire_key(), w, "n1"),
        Some(Value::Uint32(3))
    );
    assert_eq!(
        get(attr::LOCALLDR.wire_key(), w, "n1"),
        Some(Value::Rank(Rank(1)))
    );
    assert_eq!(
        get(attr::HOSTNAME.wire_key(), Rank(3), "n0"),
        Some(Value::string("n1"))
    );
    assert_eq!(
        get(attr::NODEID.wire_key(), Rank(3), "n0"),
        Some(Value::Uint32(1))
    );
    assert_eq!(
        get(attr::LOCAL_RANK.wire_key(), Rank(4), "n0"),
        Some(Value::Uint16(2))
    );
    assert_eq!(
        get(attr::NODE_RANK.wire_key(), Rank(2), "n0"),
        Some(Value::Uint16(1))
    );
    // The server's own node's peers are local: fences among them complete here.
    assert_eq!(c.cx.store.local_ranks("job"), vec![p(0), p(2)]);
}

#[test]
fn maps_that_do_not_parse_or_disagree_register_nothing() {
    let mut c = ServerCore::new(Some("n0".into()), false, "4.2.2");
    let ns = || Nspace::new("job").unwrap();
    let bad = [
        ("pmix[n[1:5-2]]", "pmix[0-1]"),
        ("n0,n1", "pmix[0-1]"),
        ("n0,n1", "0;0"),
        ("n0", "not a map"),
    ];
    for (nodes, procs) in bad {
        let r = c.register_nspace(
            ns(),
            &[
                info(attr::NODE_MAP.wire_key(), Value::string(nodes)),
                info(attr::PROC_MAP.wire_key(), Value::string(procs)),
            ],
        );
        assert_eq!(r, Err(Status::ERR_BAD_PARAM), "{nodes} / {procs}");
        assert!(c.cx.store.realms("job").is_none());
    }
}

/// The namespace "mapped": three ranks, one on each of the nodes n0, n1 and n2.
fn register_mapped(c: &mut ServerCore) {
    c.register_nspace(
        Nspace::new("mapped").unwrap(),
        &[
            info(attr::NODE_MAP.wire_key(), Value::string("n0,n1,n2")),
            info(attr::PROC_MAP.wire_key(), Value::string("0;1;2")),
        ],
    )
    .unwrap();
}

fn get_of(nspace: &str, rank: Rank, key: &str) -> Request {
    Request::Get {
        nspace: nspace.into(),
        rank,
        info: vec![],
        key: Some(key.into()),
    }
}

#[test]
fn get_of_reserved_key_in_foreign_nspace_carries_the_whole_nspace() {
    use crate::store::jobinfo::{is_job_data, realms_from_kvals};
    use crate::store::{JobRealms, Qualifiers};
    let mut c = core_with(1);
    let a = connect(&mut c, 0);
    register_mapped(&mut c);
    drain(&mut c);
    send(
        &mut c,
        a,
        102,
        &get_of("mapped", Rank::WILDCARD, attr::NODE_LIST.wire_key()),
    );
    let r = replies(&mut c, Command::GETNB);
    let [(_, 102, Reply::Get { status, data })] = &r[..] else {
        panic!("{r:?}")
    };
    assert_eq!(*status, Status::SUCCESS);
    // The job information first, the answer last (an OpenPMIx client keeps the last value
    // it files for a key).
    let [job, answer] = &data[..] else {
        panic!("{data:?}")
    };
    let wildcard = Proc::try_new("mapped", Rank::WILDCARD.0).unwrap();
    assert_eq!(job.proc, wildcard);
    assert!(is_job_data(job));
    assert!(!is_job_data(answer));
    assert_eq!(answer.proc, wildcard);
    assert_eq!(answer.kvals[0].value, Value::string("n0,n1,n2"));
    // Every process's values travel as `pmix.pdata`, never as an opaque `pmix.pblob`.
    let per_process = |key: &str| job.kvals.iter().filter(|k| k.key.as_str() == key).count();
    assert_eq!(per_process(attr::PROC_INFO_ARRAY.wire_key()), 3);
    assert_eq!(per_process(crate::store::jobinfo::PROC_BLOB_KEY), 0);
    // What a client rebuilds from it says where rank 2 runs.
    let mut realms = JobRealms::new(Nspace::new("mapped").unwrap());
    realms_from_kvals(&mut realms, &job.kvals, BufferType::NonDescribed).unwrap();
    let q = Qualifiers::default();
    let host = realms.lookup(attr::HOSTNAME.wire_key(), Rank(2), &q, None, Some("n0"));
    assert_eq!(host, Some(&Value::string("n2")));
}

#[test]
fn get_in_own_nspace_or_not_found_carries_no_job_information() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    register_mapped(&mut c);
    drain(&mut c);
    // Its own namespace's information a client received when it connected.
    send(
        &mut c,
        a,
        102,
        &get_of("job", Rank::WILDCARD, attr::JOB_SIZE.wire_key()),
    );
    // A failed get carries nothing (an OpenPMIx client reads nothing after the status).
    send(
        &mut c,
        a,
        103,
        &get_of("mapped", Rank::WILDCARD, "pmix.nothing"),
    );
    let r = replies(&mut c, Command::GETNB);
    let [(_, 102, Reply::Get { status, data }), (_, 103, failed)] = &r[..] else {
        panic!("{r:?}")
    };
    assert_eq!(*status, Status::SUCCESS);
    assert_eq!(data.len(), 1);
    assert_eq!(data[0].kvals[0].value, Value::Uint32(2));
    assert!(matches!(
        failed,
        Reply::Get { status, data } if *status == Status::ERR_NOT_FOUND && data.is_empty()
    ));
}

#[test]
fn the_host_reads_what_it_stored_and_what_its_jobs_registered() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    replies(&mut c, Command::GETNB);
    // A client waiting for rank 1's key is not answered by the host's store: what the host
    // stores stays in the server, and is no commit of rank 1.
    let get = Request::Get {
        nspace: "job".into(),
        rank: Rank(1),
        info: vec![],
        key: Some("daemon.uri".into()),
    };
    send(&mut c, a, 102, &get);
    let key = Key::new("daemon.uri").unwrap();
    c.store_internal(p(1), key, Value::string("tcp://n0:1"));
    assert!(replies(&mut c, Command::GETNB).is_empty(), "still held");
    assert!(!c.cx.store.modex.has_data(&p(1)));
    // The host reads it back, and its job's registration; nothing else is there.
    assert_eq!(
        c.host_get(&p(1), "daemon.uri"),
        Ok(Value::string("tcp://n0:1"))
    );
    let wildcard = Proc::try_new("job", Rank::WILDCARD.0).unwrap();
    assert_eq!(
        c.host_get(&wildcard, attr::JOB_SIZE.wire_key()),
        Ok(Value::Uint32(2))
    );
    assert_eq!(c.host_get(&p(0), "daemon.uri"), Err(Status::ERR_NOT_FOUND));
    let other = Proc::try_new("other", 0).unwrap();
    assert_eq!(c.host_get(&other, "daemon.uri"), Err(Status::ERR_NOT_FOUND));
}
