//! The server core driven by hand: connects, requests and failures, checked on the actions.

use super::*;
use crate::model::{Key, Kval, Scope, Value, attr};
use crate::store::realm::info;
use crate::wire::{Command, CommitBucket};

const UID: u32 = 1000;

fn p(r: u32) -> Proc {
    Proc::try_new("job", r).unwrap()
}

fn core_with(n: u32) -> ServerCore {
    let mut c = ServerCore::new(Some("n0".into()), false, "4.2.2");
    c.register_nspace(
        Nspace::new("job").unwrap(),
        &[info(attr::JOB_SIZE.wire_key(), Value::Uint32(n))],
    );
    for r in 0..n {
        c.register_client(p(r), UID, UID);
    }
    c
}

fn connect(c: &mut ServerCore, r: u32) -> ConnId {
    let conn = ConnId::from(r) + 100;
    let req = ConnectRequest::simple_client(p(r), UID, UID, BufferType::NonDescribed);
    c.handle_connect(conn, &req, None)
        .expect("registered client connects");
    conn
}

fn send(c: &mut ServerCore, conn: ConnId, tag: u32, req: &Request) {
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
fn replies(c: &mut ServerCore, command: Command) -> Vec<(ConnId, u32, Reply)> {
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

fn fence() -> Request {
    Request::Fence {
        procs: vec![],
        info: vec![Info::new(attr::COLLECT_DATA, true)],
    }
}

#[test]
fn unregistered_process_is_refused() {
    let mut c = core_with(1);
    let req = ConnectRequest::simple_client(p(5), UID, UID, BufferType::NonDescribed);
    assert_eq!(c.handle_connect(1, &req, None), Err(Status::ERR_NOT_FOUND));
    let other = ConnectRequest::simple_client(
        Proc::try_new("nope", 0).unwrap(),
        UID,
        UID,
        BufferType::NonDescribed,
    );
    assert_eq!(
        c.handle_connect(2, &other, None),
        Err(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn uid_that_does_not_match_the_registration_is_refused() {
    let mut c = core_with(1);
    let req = ConnectRequest::simple_client(p(0), UID + 1, UID, BufferType::NonDescribed);
    assert_eq!(
        c.handle_connect(1, &req, None),
        Err(Status::ERR_INVALID_CRED)
    );
    // The kernel's word wins over the claim.
    let req = ConnectRequest::simple_client(p(0), UID, UID, BufferType::NonDescribed);
    assert_eq!(
        c.handle_connect(1, &req, Some((0, 0))),
        Err(Status::ERR_INVALID_CRED)
    );
}

#[test]
fn fence_of_all_local_clients_completes_and_answers_everyone() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    replies(&mut c, Command::FENCENB);
    send(&mut c, a, 101, &fence());
    assert!(replies(&mut c, Command::FENCENB).is_empty());
    send(&mut c, b, 101, &fence());
    let r = replies(&mut c, Command::FENCENB);
    assert_eq!(r.len(), 2);
    assert!(
        r.iter()
            .all(|(_, _, rep)| *rep == Reply::Status(Status::SUCCESS))
    );
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
    let timer = std::iter::from_fn(|| c.poll_action())
        .find_map(|a| match a {
            Action::Timer { op, after_s: 2 } => Some(op),
            _ => None,
        })
        .expect("a timer is armed");
    c.handle_timeout(timer);
    let r = replies(&mut c, Command::GETNB);
    let expected = Reply::Get {
        status: Status::ERR_TIMEOUT,
        data: vec![],
    };
    assert_eq!(r[0].2, expected);
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
        &Request::Other {
            command: Command::QUERY,
            body: vec![],
        },
    );
    assert_eq!(
        replies(&mut c, Command::QUERY)[0].2,
        Reply::Status(Status::ERR_NOT_SUPPORTED)
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
