//! What the host hears of clients' event registrations (v5.0 §17.3.14, §17.3.15): which codes
//! it is asked to watch, when, with what, and when it is told to forget them.

use super::tests::*;
use super::*;
use crate::codec::BufferType;
use crate::model::{DataRange, attr};
use crate::wire::Command;
use crate::wire::ops::Op;

fn register(c: &mut ServerCore, conn: ConnId, tag: u32, codes: &[Status], info: Vec<Info>) {
    let req = Request::RegisterEvents {
        codes: codes.to_vec(),
        info,
    };
    send(c, conn, tag, &req);
}

fn deregister(c: &mut ServerCore, conn: ConnId, codes: &[Status]) {
    let req = Request::Op(Op::DeregisterEvents {
        codes: codes.to_vec(),
    });
    send(c, conn, 300, &req);
}

/// A registration's reply: to whom, under which tag, with what status.
type Answer = (ConnId, u32, Status);

/// The host calls and the registration replies pending, in order.
fn outputs(c: &mut ServerCore) -> (Vec<(u64, HostCall)>, Vec<Answer>) {
    let (mut calls, mut replies) = (Vec::new(), Vec::new());
    while let Some(a) = c.poll_action() {
        match a {
            Action::Host { op, call } => calls.push((op, call)),
            Action::Send { conn, tag, payload } => {
                let r = Reply::decode(Command::REGEVENTS, &payload, BufferType::NonDescribed);
                if let Ok(Reply::Status(s)) = r {
                    replies.push((conn, tag.0, s));
                }
            }
            _ => {}
        }
    }
    (calls, replies)
}

const NODE_DOWN: Status = Status::EVENT_NODE_DOWN;
const USER_CODE: Status = Status(-3005);

#[test]
fn an_environmental_code_is_asked_of_the_host_with_the_clients_info_and_ids() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    let tag_info = Info::new(attr::EVENT_HDLR_NAME, "watcher".to_string());
    register(&mut c, a, 107, &[NODE_DOWN], vec![tag_info.clone()]);
    let (calls, replies) = outputs(&mut c);
    assert!(
        replies.is_empty(),
        "answered once the host has: {replies:?}"
    );
    let [(op, HostCall::RegisterEvents { codes, info })] = &calls[..] else {
        panic!("one register_events: {calls:?}");
    };
    assert_eq!(codes, &[NODE_DOWN]);
    assert!(info.contains(&tag_info), "{info:?}");
    assert!(info.contains(&Info::new(attr::USERID, UID)), "{info:?}");
    assert!(info.contains(&Info::new(attr::GRPID, UID)), "{info:?}");
    c.handle_host(*op, HostResult::Status(Status::SUCCESS));
    assert_eq!(outputs(&mut c).1, vec![(a, 107, Status::SUCCESS)]);
}

#[test]
fn each_code_is_asked_once_and_standard_job_codes_and_default_handlers_never() {
    let mut c = core_with(2);
    let (a, b) = (connect(&mut c, 0), connect(&mut c, 1));
    drain(&mut c);
    register(&mut c, a, 101, &[NODE_DOWN, USER_CODE], vec![]);
    let (calls, _) = outputs(&mut c);
    let [(op, HostCall::RegisterEvents { codes, .. })] = &calls[..] else {
        panic!("{calls:?}");
    };
    assert_eq!(codes, &[USER_CODE, NODE_DOWN], "both codes, in one call");
    c.handle_host(*op, HostResult::Status(Status::SUCCESS));
    drain(&mut c);
    // Already watched, a job's own code, a positive code's first time, a default handler.
    register(&mut c, b, 102, &[NODE_DOWN], vec![]);
    register(&mut c, b, 103, &[Status::ERR_PROC_ABORTED], vec![]);
    register(&mut c, b, 104, &[], vec![]);
    let (calls, replies) = outputs(&mut c);
    assert!(calls.is_empty(), "{calls:?}");
    assert_eq!(
        replies,
        vec![
            (b, 102, Status::SUCCESS),
            (b, 103, Status::SUCCESS),
            (b, 104, Status::SUCCESS)
        ]
    );
    register(&mut c, b, 105, &[Status(12)], vec![]);
    let (calls, _) = outputs(&mut c);
    assert!(
        matches!(&calls[..], [(_, HostCall::RegisterEvents { codes, .. })] if codes == &[Status(12)]),
        "a positive code lies outside the standard's: {calls:?}"
    );
}

#[test]
fn a_host_without_the_upcall_leaves_the_registration_to_the_library() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    register(&mut c, a, 101, &[NODE_DOWN], vec![]);
    let (op, _) = host_call(&mut c);
    c.handle_host(op, HostResult::Status(Status::ERR_NOT_SUPPORTED));
    assert_eq!(outputs(&mut c).1, vec![(a, 101, Status::SUCCESS)]);
    // The client gets the host's events of that code.
    let event = crate::events::Event {
        status: NODE_DOWN,
        source: Proc::try_new("", crate::model::Rank::UNDEF).unwrap(),
        range: DataRange::GLOBAL,
        info: vec![],
    };
    c.notify_event(event).unwrap();
    let sent = std::iter::from_fn(|| c.poll_action())
        .filter(|x| matches!(x, Action::Send { conn, tag: Tag::NOTIFY, .. } if *conn == a))
        .count();
    assert_eq!(sent, 1);
}

#[test]
fn a_host_refusal_fails_the_registration_and_the_next_one_asks_again() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    register(&mut c, a, 101, &[NODE_DOWN], vec![]);
    let (op, _) = host_call(&mut c);
    c.handle_host(op, HostResult::Status(Status::ERR_NO_PERMISSIONS));
    assert_eq!(
        outputs(&mut c).1,
        vec![(a, 101, Status::ERR_NO_PERMISSIONS)]
    );
    register(&mut c, a, 102, &[NODE_DOWN], vec![]);
    let (_, call) = host_call(&mut c);
    assert!(matches!(call, HostCall::RegisterEvents { .. }), "{call:?}");
}

#[test]
fn the_host_forgets_a_code_when_its_last_registration_goes() {
    let mut c = core_with(2);
    let (a, b) = (connect(&mut c, 0), connect(&mut c, 1));
    drain(&mut c);
    register(&mut c, a, 101, &[NODE_DOWN, USER_CODE], vec![]);
    let (op, _) = host_call(&mut c);
    c.handle_host(op, HostResult::Status(Status::SUCCESS));
    register(&mut c, b, 102, &[NODE_DOWN], vec![]);
    drain(&mut c);
    // Rank 0 drops both codes; rank 1 still holds NODE_DOWN.
    deregister(&mut c, a, &[USER_CODE, NODE_DOWN]);
    let (calls, _) = outputs(&mut c);
    assert!(
        matches!(&calls[..], [(_, HostCall::DeregisterEvents { codes })] if codes == &[USER_CODE]),
        "{calls:?}"
    );
    // Rank 1's connection closes: its registration goes with it.
    c.handle_closed(b);
    let calls: Vec<HostCall> = std::iter::from_fn(|| c.poll_action())
        .filter_map(|x| match x {
            Action::Host { call, .. } => Some(call),
            _ => None,
        })
        .filter(|call| matches!(call, HostCall::DeregisterEvents { .. }))
        .collect();
    assert_eq!(
        calls,
        vec![HostCall::DeregisterEvents {
            codes: vec![NODE_DOWN]
        }]
    );
}

#[test]
fn a_code_asked_for_a_client_that_left_meanwhile_is_forgotten() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    register(&mut c, a, 101, &[NODE_DOWN], vec![]);
    let (op, _) = host_call(&mut c);
    c.handle_closed(a);
    // The host hears the client is lost; the registration's answer is still awaited.
    let (calls, _) = outputs(&mut c);
    assert!(
        matches!(&calls[..], [(_, HostCall::ClientLost { proc })] if *proc == p(0)),
        "{calls:?}"
    );
    c.handle_host(op, HostResult::Status(Status::SUCCESS));
    let (calls, replies) = outputs(&mut c);
    assert!(replies.is_empty());
    assert!(
        matches!(&calls[..], [(_, HostCall::DeregisterEvents { codes })] if codes == &[NODE_DOWN]),
        "{calls:?}"
    );
}
