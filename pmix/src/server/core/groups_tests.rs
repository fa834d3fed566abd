//! The group state machine of the server core, driven by hand: collective construction and
//! destruction, group ids in fences, optional members, lost members, and invitations.

use super::collective::LOST_PARTICIPANT;
use super::host_tests::two_nodes;
use super::tests::{armed_timer, connect, core_with, p, send};
use super::*;
use crate::codec::BufferType;
use crate::model::{GroupOperation, Value, attr};
use crate::wire::ops::{GROUP_JOIN_DECLINES, Op};
use crate::wire::{Command, Notification, OpReply};

/// What the core sent since the last drain: replies decoded for `command`, and events as
/// (connection, status, source).
pub(super) type Sent = (Vec<(ConnId, u32, Reply)>, Vec<(ConnId, Status, Proc)>);

pub(super) fn drain(c: &mut ServerCore, command: Command) -> Sent {
    let (mut replies, mut events) = (Vec::new(), Vec::new());
    while let Some(a) = c.poll_action() {
        let Action::Send { conn, tag, payload } = a else {
            continue;
        };
        if tag == Tag::NOTIFY {
            let n = Notification::decode(&payload, BufferType::NonDescribed).unwrap();
            events.push((conn, n.status, n.source));
        } else {
            let r = Reply::decode(command, &payload, BufferType::NonDescribed).unwrap();
            replies.push((conn, tag.0, r));
        }
    }
    (replies, events)
}

/// Register every connection for every event.
fn listen(c: &mut ServerCore, conns: &[ConnId]) {
    for &conn in conns {
        let all = Request::RegisterEvents {
            codes: vec![],
            info: vec![],
        };
        send(c, conn, 190, &all);
    }
    while c.poll_action().is_some() {}
}

fn construct(group: &str, ranks: &[u32], info: Vec<Info>) -> Request {
    Request::Op(Op::GroupConstruct {
        group: group.into(),
        procs: ranks.iter().map(|r| p(*r)).collect(),
        info,
    })
}

pub(super) fn destruct(group: &str) -> Request {
    Request::Op(Op::GroupDestruct {
        group: group.into(),
        members: vec![],
        info: vec![],
    })
}

fn constructed(status: Status) -> Reply {
    Reply::Op(OpReply::GroupConstruct {
        status,
        context_id: None,
        members: vec![],
    })
}

pub(super) fn plain(command: Command, status: Status) -> Reply {
    Reply::Op(OpReply::Status { command, status })
}

/// An invitation's or a join's outcome: its status, and the members of the group formed when
/// the reply carries them.
pub(super) type Formed = (Status, Option<Vec<Proc>>);

/// An invitation's or a join's reply as its requester decodes it.
pub(super) fn formed(reply: &Reply) -> Formed {
    match reply {
        Reply::Op(OpReply::Infos { status, info, .. }) => (*status, membership(info)),
        Reply::Op(OpReply::Status { status, .. }) => (*status, None),
        other => panic!("not an invitation's or a join's reply: {other:?}"),
    }
}

/// The members a `PMIX_GROUP_MEMBERSHIP` among `info` names.
pub(super) fn membership(info: &[Info]) -> Option<Vec<Proc>> {
    let i = info.iter().find(|i| i.is(attr::GROUP_MEMBERSHIP))?;
    match &i.value {
        Value::DataArray(a) => Some(
            (a.elements.iter())
                .filter_map(|e| match e {
                    Value::Proc(p) => Some((*p).clone()),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

pub(super) fn group_fence(group: &str) -> Request {
    Request::Fence {
        procs: vec![Proc::try_new(group, Rank::WILDCARD).unwrap()],
        info: vec![],
    }
}

#[test]
fn a_constructed_group_fences_by_its_id_and_its_name_is_free_after_destruct() {
    let mut c = core_with(3);
    let conns: Vec<ConnId> = (0..3).map(|r| connect(&mut c, r)).collect();
    drain(&mut c, Command::GROUP_CONSTRUCT);
    for round in 0..2 {
        send(&mut c, conns[0], 110, &construct("g", &[0, 1], vec![]));
        assert!(
            drain(&mut c, Command::GROUP_CONSTRUCT).0.is_empty(),
            "waits for rank 1"
        );
        send(&mut c, conns[1], 110, &construct("g", &[0, 1], vec![]));
        let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
        assert_eq!(r.len(), 2, "round {round}");
        assert!(r.iter().all(|(_, _, x)| *x == constructed(Status::SUCCESS)));
        // The group's id stands for ranks 0 and 1 only: rank 2 is not awaited, nor allowed.
        send(&mut c, conns[0], 111, &group_fence("g"));
        send(&mut c, conns[2], 111, &group_fence("g"));
        let (r, _) = drain(&mut c, Command::FENCENB);
        assert_eq!(
            r,
            vec![(conns[2], 111, Reply::Status(Status::ERR_BAD_PARAM))]
        );
        send(&mut c, conns[1], 111, &group_fence("g"));
        let (r, _) = drain(&mut c, Command::FENCENB);
        assert_eq!(r.len(), 2);
        assert!(
            r.iter()
                .all(|(_, _, x)| *x == Reply::Status(Status::SUCCESS))
        );
        for &conn in &conns[..2] {
            send(&mut c, conn, 112, &destruct("g"));
        }
        let (r, _) = drain(&mut c, Command::GROUP_DESTRUCT);
        assert_eq!(r.len(), 2);
        assert!(
            r.iter()
                .all(|(_, _, x)| *x == plain(Command::GROUP_DESTRUCT, Status::SUCCESS))
        );
    }
}

#[test]
fn bad_group_input_is_refused_with_the_standards_status() {
    let mut c = core_with(3);
    let a = connect(&mut c, 0);
    drain(&mut c, Command::GROUP_CONSTRUCT);
    let cases = [
        (construct("", &[0, 1], vec![]), Status::ERR_BAD_PARAM),
        (construct("g", &[], vec![]), Status::ERR_BAD_PARAM),
        (construct("g", &[0, 0], vec![]), Status::ERR_BAD_PARAM),
        (construct("g", &[1, 2], vec![]), Status::ERR_BAD_PARAM),
    ];
    for (req, want) in cases {
        send(&mut c, a, 101, &req);
        let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
        assert_eq!(r, vec![(a, 101, constructed(want))], "{req:?}");
    }
    send(&mut c, a, 102, &destruct("nope"));
    let (r, _) = drain(&mut c, Command::GROUP_DESTRUCT);
    assert_eq!(
        r[0].2,
        plain(Command::GROUP_DESTRUCT, Status::ERR_NOT_FOUND)
    );
    let leave = Request::Op(Op::GroupLeave {
        group: "nope".into(),
        info: vec![],
    });
    send(&mut c, a, 103, &leave);
    let (r, _) = drain(&mut c, Command::GROUP_LEAVE);
    assert_eq!(r[0].2, plain(Command::GROUP_LEAVE, Status::ERR_NOT_FOUND));
}

#[test]
fn optional_members_that_never_come_are_left_out_at_the_timeout() {
    let mut c = core_with(3);
    let conns: Vec<ConnId> = (0..3).map(|r| connect(&mut c, r)).collect();
    drain(&mut c, Command::GROUP_CONSTRUCT);
    let info = || {
        vec![
            Info::new(attr::GROUP_OPTIONAL, true),
            Info::new(attr::TIMEOUT, 2),
        ]
    };
    send(&mut c, conns[0], 105, &construct("opt", &[0, 1, 2], info()));
    let timer = armed_timer(&mut c, 2);
    send(&mut c, conns[1], 105, &construct("opt", &[0, 1, 2], info()));
    assert!(drain(&mut c, Command::GROUP_CONSTRUCT).0.is_empty());
    c.handle_timeout(timer);
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r.len(), 2);
    assert!(
        r.iter()
            .all(|(_, _, x)| *x == constructed(Status::ERR_PARTIAL_SUCCESS))
    );
    // The group is the two who came.
    send(&mut c, conns[0], 106, &group_fence("opt"));
    send(&mut c, conns[1], 106, &group_fence("opt"));
    let (r, _) = drain(&mut c, Command::FENCENB);
    assert_eq!(r.len(), 2);
    // Without PMIX_GROUP_OPTIONAL the timeout fails the construction.
    send(
        &mut c,
        conns[0],
        107,
        &construct("strict", &[0, 2], vec![Info::new(attr::TIMEOUT, 1)]),
    );
    let timer = armed_timer(&mut c, 1);
    c.handle_timeout(timer);
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r, vec![(conns[0], 107, constructed(Status::ERR_TIMEOUT))]);
}

#[test]
fn a_member_lost_during_construction_ends_it_locally_or_through_the_host() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    drain(&mut c, Command::GROUP_CONSTRUCT);
    send(&mut c, a, 105, &construct("g", &[0, 1], vec![]));
    c.handle_closed(b);
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r, vec![(a, 105, constructed(LOST_PARTICIPANT))]);

    // Members on another node: the host is told, and a host that ignores it cannot succeed.
    let mut c = two_nodes();
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    drain(&mut c, Command::GROUP_CONSTRUCT);
    send(&mut c, a, 105, &construct("wide", &[0, 1, 2], vec![]));
    c.handle_closed(b);
    let calls: Vec<(u64, String, Vec<Info>)> = std::iter::from_fn(|| c.poll_action())
        .filter_map(|x| match x {
            Action::Host {
                op,
                call:
                    HostCall::Group {
                        group,
                        directives: info,
                        ..
                    },
            } => Some((op, group, info)),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1);
    let (op, group, info) = &calls[0];
    assert_eq!(group, "wide");
    assert!(
        info.iter()
            .any(|i| i.get(attr::LOCAL_COLLECTIVE_STATUS) == Some(LOST_PARTICIPANT))
    );
    c.handle_host(*op, HostResult::Infos(Ok(vec![])));
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r, vec![(a, 105, constructed(LOST_PARTICIPANT))]);
}

#[test]
fn the_host_assigns_the_context_id_of_a_group_spanning_nodes() {
    let mut c = two_nodes();
    let a = connect(&mut c, 0);
    connect(&mut c, 1);
    listen(&mut c, &[a]);
    let info = vec![Info::new(attr::GROUP_ASSIGN_CONTEXT_ID, true)];
    // Rank 0 is the only member on this node: to the host at once, with the group's members.
    send(&mut c, a, 105, &construct("wide", &[0, 2], info));
    let op = std::iter::from_fn(|| c.poll_action())
        .find_map(|x| match x {
            Action::Host {
                op,
                call:
                    HostCall::Group {
                        op: GroupOperation::CONSTRUCT,
                        procs,
                        ..
                    },
            } if procs == vec![p(0), p(2)] => Some(op),
            _ => None,
        })
        .expect("the host is asked");
    let answer = vec![Info::new(attr::GROUP_CONTEXT_ID, 42usize)];
    c.handle_host(op, HostResult::Infos(Ok(answer)));
    let (r, ev) = drain(&mut c, Command::GROUP_CONSTRUCT);
    let want = Reply::Op(OpReply::GroupConstruct {
        status: Status::SUCCESS,
        context_id: Some(42),
        members: vec![],
    });
    assert_eq!(r, vec![(a, 105, want)]);
    // The member this server serves hears of the id (rank 2's own server tells it).
    assert_eq!(heard(&ev, Status::GROUP_CONTEXT_ID_ASSIGNED), vec![a]);
}

pub(super) fn invite(ranks: &[u32], info: Vec<Info>) -> Request {
    Request::Op(Op::GroupInvite {
        group: "inv".into(),
        procs: ranks.iter().map(|r| p(*r)).collect(),
        info,
    })
}

pub(super) fn join(declines: bool) -> Request {
    let mut info = vec![];
    if declines {
        info.push(Info::with_key(GROUP_JOIN_DECLINES, Value::Bool(true)).unwrap());
    }
    Request::Op(Op::GroupJoin {
        group: "inv".into(),
        procs: vec![p(0)],
        info,
    })
}

#[test]
fn an_invitation_of_optional_members_ends_when_every_invitee_answered_and_forms_the_group_of_those_who_accepted()
 {
    let mut c = core_with(4);
    let conns: Vec<ConnId> = (0..4).map(|r| connect(&mut c, r)).collect();
    listen(&mut c, &conns);
    let optional = vec![Info::new(attr::GROUP_OPTIONAL, true)];
    send(&mut c, conns[0], 101, &invite(&[1, 2, 3], optional));
    let (r, ev) = drain(&mut c, Command::GROUP_INVITE);
    assert!(r.is_empty());
    let invited: Vec<ConnId> = ev
        .iter()
        .filter(|(_, s, src)| *s == Status::GROUP_INVITED && *src == p(0))
        .map(|(conn, _, _)| *conn)
        .collect();
    assert_eq!(invited, conns[1..].to_vec());

    // Rank 1 accepts: the leader hears it; nobody is answered yet.
    send(&mut c, conns[1], 102, &join(false));
    let (r, ev) = drain(&mut c, Command::GROUP_JOIN);
    assert!(r.is_empty());
    assert_eq!(ev, vec![(conns[0], Status::GROUP_INVITE_ACCEPTED, p(1))]);
    // Rank 2 declines: answered at once; the leader hears it.
    send(&mut c, conns[2], 102, &join(true));
    let (r, ev) = drain(&mut c, Command::GROUP_JOIN);
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].0, r[0].1), (conns[2], 102));
    assert_eq!(
        formed(&r[0].2),
        (Status::SUCCESS, None),
        "a decliner joins no group"
    );
    assert_eq!(ev, vec![(conns[0], Status::GROUP_INVITE_DECLINED, p(2))]);
    // Answering twice is refused.
    send(&mut c, conns[2], 103, &join(false));
    let (r, _) = drain(&mut c, Command::GROUP_JOIN);
    assert_eq!(formed(&r[0].2), (Status::ERR_EXISTS, None));
    // Rank 3 terminates before answering: the leader hears it failed, and the group forms.
    c.handle_closed(conns[3]);
    let mut out = Vec::new();
    while let Some(a) = c.poll_action() {
        if let Action::Send { conn, tag, payload } = a {
            out.push((conn, tag, payload));
        }
    }
    let mut events = Vec::new();
    let mut answered = Vec::new();
    for (conn, tag, payload) in out {
        if tag == Tag::NOTIFY {
            let n = Notification::decode(&payload, BufferType::NonDescribed).unwrap();
            events.push((conn, n.status, n.source));
        } else {
            let command = if conn == conns[0] {
                Command::GROUP_INVITE
            } else {
                Command::GROUP_JOIN
            };
            let r = Reply::decode(command, &payload, BufferType::NonDescribed).unwrap();
            answered.push((conn, formed(&r)));
        }
    }
    assert!(events.contains(&(conns[0], Status::GROUP_INVITE_FAILED, p(3))));
    // From the leader to the other members (a source never hears its own event).
    assert!(events.contains(&(conns[1], Status::GROUP_CONSTRUCT_COMPLETE, p(0))));
    assert!(
        !events
            .iter()
            .any(|(conn, s, _)| *conn == conns[2] && *s == Status::GROUP_CONSTRUCT_COMPLETE)
    );
    // The leader and the joiner are handed the group formed: ranks 0 and 1 (for the
    // leader, a partial success: rank 3 never answered).
    let group = Some(vec![p(0), p(1)]);
    let partly = Status::ERR_PARTIAL_SUCCESS;
    assert!(answered.contains(&(conns[0], (partly, group.clone()))));
    assert!(answered.contains(&(conns[1], (Status::SUCCESS, group))));
    // The group is ranks 0 and 1.
    send(&mut c, conns[0], 104, &group_fence("inv"));
    send(&mut c, conns[1], 104, &group_fence("inv"));
    let (r, _) = drain(&mut c, Command::FENCENB);
    assert_eq!(r.len(), 2);
}

#[test]
fn an_invitation_whose_timeout_passes_fails_unless_members_are_optional() {
    for optional in [false, true] {
        let mut c = core_with(3);
        let conns: Vec<ConnId> = (0..3).map(|r| connect(&mut c, r)).collect();
        listen(&mut c, &conns);
        let mut info = vec![Info::new(attr::TIMEOUT, 3)];
        if optional {
            info.push(Info::new(attr::GROUP_OPTIONAL, true));
        }
        send(&mut c, conns[0], 101, &invite(&[1, 2], info));
        let timer = armed_timer(&mut c, 3);
        send(&mut c, conns[1], 102, &join(false));
        drain(&mut c, Command::GROUP_JOIN);
        c.handle_timeout(timer);
        let mut answers = Vec::new();
        while let Some(a) = c.poll_action() {
            if let Action::Send { conn, tag, payload } = a
                && tag != Tag::NOTIFY
            {
                let command = if conn == conns[0] {
                    Command::GROUP_INVITE
                } else {
                    Command::GROUP_JOIN
                };
                let r = Reply::decode(command, &payload, BufferType::NonDescribed).unwrap();
                answers.push((conn, formed(&r)));
            }
        }
        // A partial success hands both the final membership (v5.0 §14.2.11).
        let (leader, joiner) = if optional {
            let group = Some(vec![p(0), p(1)]);
            (
                (Status::ERR_PARTIAL_SUCCESS, group.clone()),
                (Status::SUCCESS, group),
            )
        } else {
            ((Status::ERR_TIMEOUT, None), (Status::ERR_TIMEOUT, None))
        };
        assert!(answers.contains(&(conns[0], leader)));
        assert!(answers.contains(&(conns[1], joiner)));
    }
}

fn told(more: Vec<Info>) -> Vec<Info> {
    let mut info = vec![Info::new(attr::GROUP_NOTIFY_TERMINATION, true)];
    info.extend(more);
    info
}

fn leader() -> Info {
    Info::new(attr::GROUP_LEADER, true)
}

/// A core of `n` connected ranks, each listening for every event.
fn listening(n: u32) -> (ServerCore, Vec<ConnId>) {
    let mut c = core_with(n);
    let conns: Vec<ConnId> = (0..n).map(|r| connect(&mut c, r)).collect();
    listen(&mut c, &conns);
    (c, conns)
}

/// The connections that heard `status`.
pub(super) fn heard(events: &[(ConnId, Status, Proc)], status: Status) -> Vec<ConnId> {
    events
        .iter()
        .filter(|(_, s, _)| *s == status)
        .map(|(conn, _, _)| *conn)
        .collect()
}

#[test]
fn a_member_terminating_before_it_constructs_is_reported_to_the_leader_and_left_out() {
    let (mut c, conns) = listening(3);
    send(
        &mut c,
        conns[0],
        120,
        &construct("g", &[0, 1, 2], told(vec![leader()])),
    );
    send(
        &mut c,
        conns[1],
        120,
        &construct("g", &[0, 1, 2], told(vec![])),
    );
    assert_eq!(drain(&mut c, Command::GROUP_CONSTRUCT), (vec![], vec![]));
    c.handle_closed(conns[2]);
    let (r, ev) = drain(&mut c, Command::GROUP_CONSTRUCT);
    // Only the declared leader hears of the failure; both survivors are answered, and hear
    // the membership the group ended with.
    let failed: Vec<_> = ev
        .iter()
        .filter(|(_, s, _)| *s == Status::GROUP_MEMBER_FAILED)
        .collect();
    assert_eq!(failed, vec![&(conns[0], Status::GROUP_MEMBER_FAILED, p(2))]);
    assert_eq!(
        heard(&ev, Status::GROUP_MEMBERSHIP_UPDATE),
        conns[..2].to_vec()
    );
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|(_, _, x)| *x == constructed(Status::SUCCESS)));
    assert_eq!(c.groups.live["g"].members, vec![p(0), p(1)]);

    // Without a declared leader every member still in hears it.
    let (mut c, conns) = listening(3);
    send(
        &mut c,
        conns[0],
        120,
        &construct("h", &[0, 1, 2], told(vec![])),
    );
    c.handle_closed(conns[2]);
    let (r, ev) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert!(r.is_empty(), "rank 1 has not come yet");
    assert_eq!(heard(&ev, Status::GROUP_MEMBER_FAILED), conns[..2].to_vec());
    assert!(
        ev.iter()
            .all(|(_, s, src)| *s != Status::GROUP_MEMBER_FAILED || *src == p(2))
    );
    send(
        &mut c,
        conns[1],
        120,
        &construct("h", &[0, 1, 2], told(vec![])),
    );
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|(_, _, x)| *x == constructed(Status::SUCCESS)));
}

#[test]
fn a_leader_terminating_mid_construct_is_replaced_by_the_first_member_left() {
    let (mut c, conns) = listening(3);
    send(
        &mut c,
        conns[0],
        121,
        &construct("g", &[0, 1, 2], told(vec![leader()])),
    );
    send(
        &mut c,
        conns[2],
        121,
        &construct("g", &[0, 1, 2], told(vec![])),
    );
    c.handle_closed(conns[0]);
    let (r, ev) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert!(r.is_empty(), "rank 1 has not come yet");
    let seen = |status: Status| -> Vec<ConnId> {
        ev.iter()
            .filter(|(_, s, src)| *s == status && *src == p(0))
            .map(|(conn, _, _)| *conn)
            .collect()
    };
    assert_eq!(seen(Status::GROUP_LEADER_FAILED), vec![conns[1], conns[2]]);
    assert_eq!(
        seen(Status::GROUP_LEADER_SELECTED),
        vec![conns[1], conns[2]]
    );
    assert_eq!(c.groups.roles["g"].leader, Some(p(1)));
    // The new leader is told of the next failure; the group forms of the two left.
    send(
        &mut c,
        conns[1],
        121,
        &construct("g", &[0, 1, 2], told(vec![])),
    );
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|(_, _, x)| *x == constructed(Status::SUCCESS)));
    let g = &c.groups.live["g"];
    assert_eq!(
        (g.members.clone(), g.roles.leader.clone()),
        (vec![p(1), p(2)], Some(p(1)))
    );
}

#[test]
fn a_member_of_a_told_group_terminating_is_reported_and_does_not_block_its_destruct() {
    let (mut c, conns) = listening(3);
    for &conn in &conns {
        send(&mut c, conn, 122, &construct("g", &[0, 1, 2], told(vec![])));
    }
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r.len(), 3);
    send(&mut c, conns[0], 123, &destruct("g"));
    send(&mut c, conns[1], 123, &destruct("g"));
    c.handle_closed(conns[2]);
    let (r, ev) = drain(&mut c, Command::GROUP_DESTRUCT);
    assert_eq!(heard(&ev, Status::GROUP_MEMBER_FAILED), conns[..2].to_vec());
    assert!(
        ev.iter()
            .all(|(_, s, src)| *s != Status::GROUP_MEMBER_FAILED || *src == p(2))
    );
    assert_eq!(r.len(), 2);
    assert!(
        r.iter()
            .all(|(_, _, x)| *x == plain(Command::GROUP_DESTRUCT, Status::SUCCESS))
    );
    assert!(!c.groups.live.contains_key("g"));

    // Not told: the same loss fails the destruct.
    let mut c = core_with(3);
    let conns: Vec<ConnId> = (0..3).map(|r| connect(&mut c, r)).collect();
    for &conn in &conns {
        send(&mut c, conn, 122, &construct("g", &[0, 1, 2], vec![]));
    }
    drain(&mut c, Command::GROUP_CONSTRUCT);
    send(&mut c, conns[0], 123, &destruct("g"));
    c.handle_closed(conns[2]);
    let (r, _) = drain(&mut c, Command::GROUP_DESTRUCT);
    assert_eq!(
        r,
        vec![(
            conns[0],
            123,
            plain(Command::GROUP_DESTRUCT, LOST_PARTICIPANT)
        )]
    );
}

#[test]
fn an_inviting_leader_terminating_hands_the_invitation_to_the_first_who_accepted() {
    let (mut c, conns) = listening(4);
    send(&mut c, conns[0], 124, &invite(&[1, 2, 3], vec![]));
    send(&mut c, conns[2], 125, &join(false));
    drain(&mut c, Command::GROUP_JOIN);
    c.handle_closed(conns[0]);
    let (_, ev) = drain(&mut c, Command::GROUP_JOIN);
    assert_eq!(heard(&ev, Status::GROUP_LEADER_FAILED), conns[1..].to_vec());
    assert_eq!(
        heard(&ev, Status::GROUP_LEADER_SELECTED),
        conns[1..].to_vec()
    );
    // The others answer; the group is the new leader and those who accepted.
    send(&mut c, conns[1], 125, &join(false));
    send(&mut c, conns[3], 125, &join(true));
    let (r, _) = drain(&mut c, Command::GROUP_JOIN);
    let answered: Vec<(ConnId, Formed)> = r
        .into_iter()
        .map(|(conn, _, x)| (conn, formed(&x)))
        .collect();
    let group = Some(vec![p(2), p(1)]);
    assert!(answered.contains(&(conns[1], (Status::SUCCESS, group.clone()))));
    assert!(answered.contains(&(conns[2], (Status::SUCCESS, group))));
    assert_eq!(c.groups.live["inv"].members, vec![p(2), p(1)]);

    // Nobody accepted yet: the construction is aborted.
    let (mut c, conns) = listening(3);
    send(&mut c, conns[0], 124, &invite(&[1, 2], vec![]));
    drain(&mut c, Command::GROUP_INVITE);
    c.handle_closed(conns[0]);
    let (_, ev) = drain(&mut c, Command::GROUP_JOIN);
    assert_eq!(
        heard(&ev, Status::GROUP_CONSTRUCT_ABORT),
        conns[1..].to_vec()
    );
    send(&mut c, conns[1], 125, &join(false));
    let (r, _) = drain(&mut c, Command::GROUP_JOIN);
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].0, r[0].1), (conns[1], 125));
    assert_eq!(formed(&r[0].2), (Status::ERR_NOT_FOUND, None));
}

#[test]
fn queries_name_the_groups_and_their_members() {
    let mut c = core_with(3);
    let conns: Vec<ConnId> = (0..3).map(|r| connect(&mut c, r)).collect();
    for &conn in &conns[..2] {
        send(&mut c, conn, 126, &construct("pair", &[0, 1], vec![]));
    }
    drain(&mut c, Command::GROUP_CONSTRUCT);
    let keys = [
        attr::QUERY_GROUP_NAMES.wire_key(),
        attr::QUERY_GROUP_MEMBERSHIP.wire_key(),
    ];
    let ask = |group: &str| {
        Request::Op(Op::Query {
            queries: vec![crate::model::Query {
                keys: keys.iter().map(|k| Some((*k).to_owned())).collect(),
                qualifiers: vec![Info::new(attr::GROUP_ID, group.to_owned())],
            }],
        })
    };
    send(&mut c, conns[2], 127, &ask("pair"));
    let (r, _) = drain(&mut c, Command::QUERY);
    let Reply::Op(OpReply::Infos { status, info, .. }) = &r[0].2 else {
        panic!("{r:?}");
    };
    assert_eq!(*status, Status::SUCCESS);
    let get = |key: &str| {
        info.iter()
            .find(|i| i.key.as_str() == key)
            .map(|i| i.value.clone())
    };
    let Some(Value::DataArray(names)) = get(keys[0]) else {
        panic!("{info:?}");
    };
    assert_eq!(names.elements, vec![Value::string("pair".to_owned())]);
    let Some(Value::DataArray(members)) = get(keys[1]) else {
        panic!("{info:?}");
    };
    assert_eq!(members.elements, vec![Value::Proc(p(0)), Value::Proc(p(1))]);
    // An unknown group's membership is left open for the host, which knows none: a
    // partial answer.
    send(&mut c, conns[2], 128, &ask("nope"));
    let op = std::iter::from_fn(|| c.poll_action())
        .find_map(|x| match x {
            Action::Host {
                op,
                call: HostCall::Query { .. },
            } => Some(op),
            _ => None,
        })
        .expect("the host is asked");
    c.handle_host(op, HostResult::Infos(Err(Status::ERR_NOT_FOUND)));
    let (r, _) = drain(&mut c, Command::QUERY);
    let Reply::Op(OpReply::Infos { status, .. }) = &r[0].2 else {
        panic!("{r:?}");
    };
    assert_eq!(*status, Status::ERR_PARTIAL_SUCCESS);
}

#[test]
fn a_get_of_group_names_lists_the_groups_of_the_process_asked_about() {
    let mut c = core_with(3);
    let conns: Vec<ConnId> = (0..3).map(|r| connect(&mut c, r)).collect();
    for (group, ranks) in [("a", [0, 1]), ("b", [0, 2])] {
        for r in ranks {
            send(
                &mut c,
                conns[r as usize],
                129,
                &construct(group, &ranks, vec![]),
            );
        }
        drain(&mut c, Command::GROUP_CONSTRUCT);
    }
    let names_of = |c: &mut ServerCore, asker: usize, target: Proc| {
        let get = Request::Get {
            nspace: target.nspace.as_str().to_owned(),
            rank: target.rank,
            info: vec![Info::new(attr::IMMEDIATE, true)],
            key: Some(attr::GROUP_NAMES.wire_key().to_owned()),
        };
        send(c, conns[asker], 130, &get);
        let (r, _) = drain(c, Command::GETNB);
        let Reply::Get { status, data } = &r[0].2 else {
            panic!("{r:?}");
        };
        let names = (data.iter().flat_map(|d| &d.kvals))
            .find(|k| k.key.as_str() == attr::GROUP_NAMES.wire_key())
            .map(|k| match &k.value {
                Value::DataArray(a) => a.elements.clone(),
                other => panic!("{other:?}"),
            });
        (*status, names)
    };
    let s = |n: &str| Value::string(n.to_owned());
    let both = (Status::SUCCESS, Some(vec![s("a"), s("b")]));
    assert_eq!(names_of(&mut c, 0, p(0)), both);
    assert_eq!(names_of(&mut c, 1, p(0)), both);
    assert_eq!(
        names_of(&mut c, 2, p(2)),
        (Status::SUCCESS, Some(vec![s("b")]))
    );
    // Destructed, the group is no longer named; of a process in no group the get goes the
    // way of a reserved key the host did not register.
    for r in [0, 1] {
        send(&mut c, conns[r], 131, &destruct("a"));
    }
    drain(&mut c, Command::GROUP_DESTRUCT);
    assert_eq!(
        names_of(&mut c, 0, p(0)),
        (Status::SUCCESS, Some(vec![s("b")]))
    );
    assert_eq!(names_of(&mut c, 1, p(1)), (Status::ERR_NOT_FOUND, None));
}

#[test]
fn a_fault_tolerant_construction_goes_on_without_a_member_and_reports_nothing() {
    let (mut c, conns) = listening(3);
    let ft = || vec![Info::new(attr::GROUP_FT_COLLECTIVE, true)];
    for &conn in &conns[..2] {
        send(&mut c, conn, 121, &construct("ft", &[0, 1, 2], ft()));
    }
    c.handle_closed(conns[2]);
    let (r, ev) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|(_, _, x)| *x == constructed(Status::SUCCESS)));
    assert!(
        heard(&ev, Status::GROUP_MEMBER_FAILED).is_empty(),
        "no notice asked"
    );
    assert_eq!(c.groups.live["ft"].members, vec![p(0), p(1)]);
    // Without it, the same loss fails the construction.
    let (mut c, conns) = listening(3);
    for &conn in &conns[..2] {
        send(&mut c, conn, 121, &construct("plain", &[0, 1, 2], vec![]));
    }
    c.handle_closed(conns[2]);
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|(_, _, x)| *x != constructed(Status::SUCCESS)));
}

#[test]
fn a_wildcard_member_that_loses_a_rank_names_the_ranks_still_in() {
    let (mut c, conns) = listening(3);
    let whole = Request::Op(Op::GroupConstruct {
        group: "w".into(),
        procs: vec![Proc::try_new("job", Rank::WILDCARD).unwrap()],
        info: told(vec![]),
    });
    send(&mut c, conns[0], 122, &whole);
    c.handle_closed(conns[2]);
    let (_, ev) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(heard(&ev, Status::GROUP_MEMBER_FAILED), conns[..2].to_vec());
    send(&mut c, conns[1], 122, &whole);
    let (r, ev) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|(_, _, x)| *x == constructed(Status::SUCCESS)));
    assert_eq!(
        heard(&ev, Status::GROUP_MEMBERSHIP_UPDATE),
        conns[..2].to_vec()
    );
    assert_eq!(c.groups.live["w"].members, vec![p(0), p(1)]);
}

fn bootstrap(group: &str, me: Option<u32>, leaders: usize, add: &[u32]) -> Request {
    let mut info = vec![Info::new(attr::GROUP_BOOTSTRAP, leaders)];
    if !add.is_empty() {
        let add = crate::model::DataArray::of_procs(add.iter().map(|r| p(*r)).collect());
        info.push(Info::new(attr::GROUP_ADD_MEMBERS, add));
    }
    Request::Op(Op::GroupConstruct {
        group: group.into(),
        procs: me.map(p).into_iter().collect(),
        info,
    })
}

fn added(group: &str) -> Request {
    Request::Op(Op::GroupConstruct {
        group: group.into(),
        procs: vec![],
        info: vec![],
    })
}

#[test]
fn a_bootstrap_forms_the_group_of_its_leaders_and_the_members_they_add() {
    let (mut c, conns) = listening(5);
    // Rank 3 comes before any leader: it says it joins a bootstrap.
    send(&mut c, conns[3], 130, &bootstrap("b", None, 2, &[]));
    send(&mut c, conns[0], 130, &bootstrap("b", Some(0), 2, &[2]));
    send(&mut c, conns[2], 130, &added("b"));
    assert!(
        drain(&mut c, Command::GROUP_CONSTRUCT).0.is_empty(),
        "leader 1 to come"
    );
    send(&mut c, conns[1], 130, &bootstrap("b", Some(1), 2, &[3]));
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r.len(), 4);
    assert!(r.iter().all(|(_, _, x)| *x == constructed(Status::SUCCESS)));
    assert_eq!(c.groups.live["b"].members, vec![p(0), p(1), p(2), p(3)]);
    assert_eq!(c.groups.live["b"].roles.leader, Some(p(0)));
    // Its id fences as any group's does.
    for &conn in &conns[..4] {
        send(&mut c, conn, 131, &group_fence("b"));
    }
    let (r, _) = drain(&mut c, Command::FENCENB);
    assert_eq!(r.len(), 4);

    // A caller no leader listed is not a member; an empty list with no bootstrap in
    // progress is bad input, as ever.
    send(&mut c, conns[4], 132, &added("c"));
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r, vec![(conns[4], 132, constructed(Status::ERR_BAD_PARAM))]);
    send(&mut c, conns[4], 133, &bootstrap("c", None, 1, &[]));
    send(&mut c, conns[0], 133, &bootstrap("c", Some(0), 1, &[]));
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert!(r.contains(&(conns[4], 133, constructed(Status::ERR_BAD_PARAM))));
    assert!(r.contains(&(conns[0], 133, constructed(Status::SUCCESS))));
}

#[test]
fn a_bootstrap_that_cannot_complete_here_ends_with_the_standards_status() {
    // A listed member on another node.
    let mut c = two_nodes();
    let conns: Vec<ConnId> = (0..2).map(|r| connect(&mut c, r)).collect();
    drain(&mut c, Command::GROUP_CONSTRUCT);
    send(&mut c, conns[0], 140, &bootstrap("far", Some(0), 1, &[3]));
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(
        r,
        vec![(conns[0], 140, constructed(Status::ERR_NOT_SUPPORTED))]
    );
    // A leader count that does not match, or of zero.
    let (mut c, conns) = listening(3);
    send(&mut c, conns[0], 141, &bootstrap("n", Some(0), 2, &[]));
    send(&mut c, conns[1], 141, &bootstrap("n", Some(1), 3, &[]));
    send(&mut c, conns[2], 141, &bootstrap("z", Some(2), 0, &[]));
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(
        r,
        vec![
            (conns[1], 141, constructed(Status::ERR_BAD_PARAM)),
            (conns[2], 141, constructed(Status::ERR_BAD_PARAM)),
        ]
    );
    // A member listed after it terminated.
    c.handle_closed(conns[0]);
    send(&mut c, conns[1], 142, &bootstrap("n2", Some(1), 2, &[]));
    send(&mut c, conns[2], 142, &bootstrap("n2", Some(2), 2, &[0]));
    let (r, _) = drain(&mut c, Command::GROUP_CONSTRUCT);
    let lost = constructed(Status::ERR_LOST_CONNECTION);
    assert_eq!(
        r,
        vec![(conns[1], 142, lost.clone()), (conns[2], 142, lost)]
    );
}
