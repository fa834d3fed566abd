//! Groups across two nodes, driven by hand: each node's server core, and a host that
//! carries the group events one core hands to `notify_event` to the other (as a resource
//! manager's daemons would), or fails to; and constructions the host completes without
//! members that terminated.

use super::groups_tests::{invite, join};
use super::tests::{connect, p, send};
use super::*;
use crate::codec::BufferType;
use crate::events::Event;
use crate::model::{DataArray, DataRange, Info, Value, attr};
use crate::wire::ops::{GROUP_FOR_SERVERS, GROUP_SERVER_EVENT, Op};
use crate::wire::{Command, Notification, OpReply};

const UID: u32 = 1000;
const INVITE: u32 = 130;
const JOIN: u32 = 131;

/// A node of a job of 4 ranks, serving `ranks`, each connected and listening for every event.
fn node(name: &str, ranks: [u32; 2]) -> (ServerCore, Vec<ConnId>) {
    let mut c = ServerCore::new(Some(name.into()), true, "4.2.2");
    let peers = format!("{},{}", ranks[0], ranks[1]);
    c.register_nspace(
        Nspace::new("job").unwrap(),
        &[
            Info::new(attr::JOB_SIZE, 4u32),
            Info::new(attr::LOCAL_PEERS, peers),
        ],
    )
    .unwrap();
    let mut conns = Vec::new();
    for r in ranks {
        c.register_client(p(r), UID, UID);
        let conn = connect(&mut c, r);
        let all = Request::RegisterEvents {
            codes: vec![],
            info: vec![],
        };
        send(&mut c, conn, 190, &all);
        conns.push(conn);
    }
    while c.poll_action().is_some() {}
    (c, conns)
}

/// What the processes of one node were sent.
#[derive(Debug, Default)]
struct Seen {
    /// (connection, tag, status) of the invite and join replies.
    replies: Vec<(ConnId, u32, Status)>,
    /// (connection, tag, members) of the replies that carry the group formed.
    formed: Vec<(ConnId, u32, Vec<Proc>)>,
    /// (connection, event, source).
    events: Vec<(ConnId, Status, Proc)>,
}

impl Seen {
    fn heard(&self, conn: ConnId, status: Status) -> Vec<Proc> {
        (self.events.iter())
            .filter(|(c, s, _)| *c == conn && *s == status)
            .map(|(_, _, src)| src.clone())
            .collect()
    }

    fn formed(&self, conn: ConnId, tag: u32) -> Option<Vec<Proc>> {
        (self.formed.iter())
            .find(|(c, t, _)| *c == conn && *t == tag)
            .map(|(_, _, m)| m.clone())
    }

    fn answer(&self, conn: ConnId, tag: u32) -> Option<Status> {
        (self.replies.iter())
            .find(|(c, t, _)| *c == conn && *t == tag)
            .map(|(_, _, s)| *s)
    }
}

/// Run both nodes until neither has anything left to do, the host carrying each node's
/// events to the other and answering with `host`.
fn settle(a: &mut ServerCore, b: &mut ServerCore, host: Status) -> (Seen, Seen) {
    let mut seen = (Seen::default(), Seen::default());
    loop {
        let moved = step(a, b, &mut seen.0, host) | step(b, a, &mut seen.1, host);
        if !moved {
            return seen;
        }
    }
}

fn step(from: &mut ServerCore, to: &mut ServerCore, seen: &mut Seen, host: Status) -> bool {
    let mut moved = false;
    while let Some(action) = from.poll_action() {
        moved = true;
        match action {
            Action::Send { conn, tag, payload } if tag == Tag::NOTIFY => {
                let n = Notification::decode(&payload, BufferType::NonDescribed).unwrap();
                seen.events.push((conn, n.status, n.source));
            }
            Action::Send { conn, tag, payload } => {
                let command = if tag.0 == INVITE {
                    Command::GROUP_INVITE
                } else {
                    Command::GROUP_JOIN
                };
                let (status, info) =
                    match Reply::decode(command, &payload, BufferType::NonDescribed) {
                        Ok(Reply::Op(OpReply::Infos { status, info, .. })) => (status, info),
                        other => panic!("unexpected reply {other:?}"),
                    };
                seen.replies.push((conn, tag.0, status));
                if let Some(m) = super::groups_tests::membership(&info) {
                    seen.formed.push((conn, tag.0, m));
                }
            }
            Action::Host {
                op,
                call:
                    HostCall::NotifyEvent {
                        status,
                        source,
                        range,
                        info,
                    },
            } => {
                if host == Status::SUCCESS {
                    let event = Event {
                        status,
                        source,
                        range,
                        info,
                    };
                    to.notify_event(event).unwrap();
                }
                from.handle_host(op, HostResult::Status(host));
            }
            _ => {}
        }
    }
    moved
}

/// The host's word that `ranks` terminated with their node.
fn node_down(ranks: &[u32]) -> Event {
    let procs = ranks.iter().map(|r| p(*r)).collect();
    Event {
        status: Status::EVENT_NODE_DOWN,
        source: Proc::new(Nspace::default(), Rank::UNDEF),
        range: DataRange::SESSION,
        info: vec![Info::new(
            attr::EVENT_AFFECTED_PROCS,
            DataArray::of_procs(procs),
        )],
    }
}

fn members(c: &ServerCore) -> Option<Vec<Proc>> {
    c.groups.live.get("inv").map(|g| g.members.clone())
}

#[test]
fn invitees_on_another_node_join_and_the_group_forms_on_both() {
    let (mut a, ca) = node("a", [0, 1]);
    let (mut b, cb) = node("b", [2, 3]);
    send(&mut a, ca[0], INVITE, &invite(&[1, 2, 3], vec![]));
    let (sa, sb) = settle(&mut a, &mut b, Status::SUCCESS);
    assert_eq!(sa.heard(ca[1], Status::GROUP_INVITED), vec![p(0)]);
    for &conn in &cb {
        assert_eq!(sb.heard(conn, Status::GROUP_INVITED), vec![p(0)]);
    }
    send(&mut a, ca[1], JOIN, &join(false));
    send(&mut b, cb[0], JOIN, &join(false));
    send(&mut b, cb[1], JOIN, &join(true));
    let (sa, sb) = settle(&mut a, &mut b, Status::SUCCESS);
    let accepted = sa.heard(ca[0], Status::GROUP_INVITE_ACCEPTED);
    assert_eq!(accepted, vec![p(1), p(2)]);
    assert_eq!(sa.heard(ca[0], Status::GROUP_INVITE_DECLINED), vec![p(3)]);
    assert_eq!(sa.answer(ca[0], INVITE), Some(Status::SUCCESS));
    assert_eq!(sa.answer(ca[1], JOIN), Some(Status::SUCCESS));
    assert_eq!(sb.answer(cb[0], JOIN), Some(Status::SUCCESS));
    assert_eq!(sb.answer(cb[1], JOIN), Some(Status::SUCCESS), "a decline");
    assert_eq!(
        sa.heard(ca[1], Status::GROUP_CONSTRUCT_COMPLETE),
        vec![p(0)]
    );
    assert_eq!(
        sb.heard(cb[0], Status::GROUP_CONSTRUCT_COMPLETE),
        vec![p(0)]
    );
    assert!(sb.heard(cb[1], Status::GROUP_CONSTRUCT_COMPLETE).is_empty());
    assert!(
        sb.heard(cb[0], Status::GROUP_INVITED).is_empty(),
        "invited once"
    );
    let group = vec![p(0), p(1), p(2)];
    // The leader and each joiner, here and elsewhere, are handed the group formed; the
    // decliner is not.
    assert_eq!(sa.formed(ca[0], INVITE).as_ref(), Some(&group));
    assert_eq!(sa.formed(ca[1], JOIN).as_ref(), Some(&group));
    assert_eq!(sb.formed(cb[0], JOIN).as_ref(), Some(&group));
    assert_eq!(sb.formed(cb[1], JOIN), None);
    assert_eq!(members(&a).as_ref(), Some(&group));
    assert_eq!(members(&b).as_ref(), Some(&group));
    assert!(b.groups.remote_invitations.is_empty());
    // A member leaving on one node leaves on the other too.
    let leave = Request::Op(Op::GroupLeave {
        group: "inv".into(),
        info: vec![],
    });
    send(&mut b, cb[0], 132, &leave);
    let (sa, _) = settle(&mut a, &mut b, Status::SUCCESS);
    assert_eq!(sa.heard(ca[0], Status::GROUP_LEFT), vec![p(2)]);
    assert_eq!(members(&a), Some(vec![p(0), p(1)]));
}

#[test]
fn an_invitee_terminating_elsewhere_fails_to_answer_and_the_group_of_optional_members_forms_without_it()
 {
    let (mut a, ca) = node("a", [0, 1]);
    let (mut b, _cb) = node("b", [2, 3]);
    let optional = vec![Info::new(attr::GROUP_OPTIONAL, true)];
    send(&mut a, ca[0], INVITE, &invite(&[1, 2], optional));
    send(&mut a, ca[1], JOIN, &join(false));
    settle(&mut a, &mut b, Status::SUCCESS);
    let terminated = terminated(2);
    a.notify_event(terminated).unwrap();
    let (sa, _) = settle(&mut a, &mut b, Status::SUCCESS);
    assert_eq!(sa.heard(ca[0], Status::GROUP_INVITE_FAILED), vec![p(2)]);
    assert_eq!(sa.answer(ca[0], INVITE), Some(Status::ERR_PARTIAL_SUCCESS));
    assert_eq!(sa.answer(ca[1], JOIN), Some(Status::SUCCESS));
    assert_eq!(members(&a), Some(vec![p(0), p(1)]));
}

#[test]
fn an_invitee_terminating_elsewhere_fails_an_invitation_whose_members_are_not_optional() {
    let (mut a, ca) = node("a", [0, 1]);
    let (mut b, _cb) = node("b", [2, 3]);
    send(&mut a, ca[0], INVITE, &invite(&[1, 2], vec![]));
    send(&mut a, ca[1], JOIN, &join(false));
    settle(&mut a, &mut b, Status::SUCCESS);
    let terminated = terminated(2);
    a.notify_event(terminated).unwrap();
    let (sa, _) = settle(&mut a, &mut b, Status::SUCCESS);
    assert_eq!(sa.heard(ca[0], Status::GROUP_INVITE_FAILED), vec![p(2)]);
    assert_eq!(sa.answer(ca[0], INVITE), Some(Status::ERR_LOST_CONNECTION));
    assert_eq!(sa.answer(ca[1], JOIN), Some(Status::ERR_LOST_CONNECTION));
    assert_eq!(sa.heard(ca[1], Status::GROUP_CONSTRUCT_ABORT), vec![p(0)]);
    assert!(members(&a).is_none());
}

#[test]
fn a_join_elsewhere_ends_when_the_leaders_node_goes_down_and_the_name_is_free_again() {
    let (mut a, ca) = node("a", [0, 1]);
    let (mut b, cb) = node("b", [2, 3]);
    send(&mut a, ca[0], INVITE, &invite(&[2, 3], vec![]));
    settle(&mut a, &mut b, Status::SUCCESS);
    send(&mut b, cb[0], JOIN, &join(false));
    settle(&mut a, &mut b, Status::SUCCESS);
    // Node a is gone: its server with it; b's host says so.
    b.notify_event(node_down(&[0, 1])).unwrap();
    let (_, sb) = settle(
        &mut ServerCore::new(None, true, "4.2.2"),
        &mut b,
        Status::SUCCESS,
    );
    assert_eq!(sb.answer(cb[0], JOIN), Some(Status::GROUP_CONSTRUCT_ABORT));
    for &conn in &cb {
        assert_eq!(sb.heard(conn, Status::GROUP_LEADER_FAILED), vec![p(0)]);
        assert_eq!(sb.heard(conn, Status::GROUP_CONSTRUCT_ABORT), vec![p(0)]);
    }
    assert!(b.groups.remote_invitations.is_empty());
    assert!(!b.groups_at().group_name_taken("inv"));
}

#[test]
fn an_invitation_timing_out_at_home_ends_the_joins_elsewhere_with_its_status() {
    let (mut a, ca) = node("a", [0, 1]);
    let (mut b, cb) = node("b", [2, 3]);
    let timeout = vec![Info::new(attr::TIMEOUT, 5i32)];
    send(&mut a, ca[0], INVITE, &invite(&[2, 3], timeout));
    let timer = std::iter::from_fn(|| a.poll_action())
        .find_map(|x| match x {
            Action::Timer { op, after_s: 5 } => Some(op),
            _ => None,
        })
        .expect("the invitation's timer");
    // The relay of the invitation was in the actions drained above: carry it by hand.
    let invited = Event {
        status: Status::GROUP_INVITED,
        source: p(0),
        range: DataRange::CUSTOM,
        info: vec![
            Info::new(attr::GROUP_ID, "inv".to_owned()),
            Info::new(
                attr::EVENT_CUSTOM_RANGE,
                DataArray::of_procs(vec![p(2), p(3)]),
            ),
        ],
    };
    // As a client of node a could raise it itself: delivered, but no invitation here.
    b.notify_event(invited.clone()).unwrap();
    assert!(b.groups.remote_invitations.is_empty());
    let mut invited = invited;
    invited
        .info
        .extend(Info::with_key(GROUP_SERVER_EVENT, Value::Bool(true)));
    b.notify_event(invited).unwrap();
    send(&mut b, cb[0], JOIN, &join(false));
    settle(&mut a, &mut b, Status::SUCCESS);
    a.handle_timeout(timer);
    let (sa, sb) = settle(&mut a, &mut b, Status::SUCCESS);
    assert_eq!(sa.answer(ca[0], INVITE), Some(Status::ERR_TIMEOUT));
    assert_eq!(sb.answer(cb[0], JOIN), Some(Status::ERR_TIMEOUT));
    assert_eq!(sb.heard(cb[0], Status::GROUP_CONSTRUCT_ABORT), vec![p(0)]);
    assert!(members(&a).is_none() && members(&b).is_none());
    assert!(b.groups.remote_invitations.is_empty());
}

#[test]
fn invitees_the_host_cannot_reach_count_as_failed() {
    let (mut a, ca) = node("a", [0, 1]);
    let (mut b, _cb) = node("b", [2, 3]);
    let optional = vec![Info::new(attr::GROUP_OPTIONAL, true)];
    send(&mut a, ca[0], INVITE, &invite(&[1, 2], optional));
    send(&mut a, ca[1], JOIN, &join(false));
    let (sa, _) = settle(&mut a, &mut b, Status::ERR_NOT_SUPPORTED);
    assert_eq!(sa.heard(ca[0], Status::GROUP_INVITE_FAILED), vec![p(2)]);
    assert_eq!(sa.answer(ca[0], INVITE), Some(Status::ERR_PARTIAL_SUCCESS));
    assert_eq!(members(&a), Some(vec![p(0), p(1)]));
}

#[test]
fn a_leader_lost_is_reported_once_to_each_member_by_its_own_server() {
    let (mut a, ca) = node("a", [0, 1]);
    let (mut b, cb) = node("b", [2, 3]);
    let told = vec![Info::new(attr::GROUP_NOTIFY_TERMINATION, true)];
    send(&mut a, ca[0], INVITE, &invite(&[1, 2], told));
    settle(&mut a, &mut b, Status::SUCCESS);
    send(&mut a, ca[1], JOIN, &join(false));
    send(&mut b, cb[0], JOIN, &join(false));
    settle(&mut a, &mut b, Status::SUCCESS);
    assert_eq!(members(&b), Some(vec![p(0), p(1), p(2)]));
    // Rank 0 terminates: its server sees it, and b's host tells b.
    a.handle_closed(ca[0]);
    let terminated = terminated(0);
    b.notify_event(terminated).unwrap();
    let (sa, sb) = settle(&mut a, &mut b, Status::SUCCESS);
    assert_eq!(sa.heard(ca[1], Status::GROUP_LEADER_FAILED), vec![p(0)]);
    assert_eq!(sb.heard(cb[0], Status::GROUP_LEADER_FAILED), vec![p(0)]);
    assert_eq!(sb.heard(cb[0], Status::GROUP_LEADER_SELECTED), vec![p(0)]);
    assert!(
        sb.heard(cb[1], Status::GROUP_LEADER_FAILED).is_empty(),
        "not a member"
    );
    for c in [&a, &b] {
        let leader = c
            .groups
            .live
            .get("inv")
            .and_then(|g| g.roles.leader.clone());
        assert_eq!(leader, Some(p(1)), "both servers select the same leader");
    }
}

#[test]
fn a_construction_the_host_completes_without_a_lost_member_forms_the_group_it_names() {
    let (mut a, ca) = node("a", [0, 1]);
    let told = vec![Info::new(attr::GROUP_NOTIFY_TERMINATION, true)];
    let construct = |info: Vec<Info>| {
        Request::Op(Op::GroupConstruct {
            group: "g".into(),
            procs: (0..4).map(p).collect(),
            info,
        })
    };
    for &conn in &ca {
        send(&mut a, conn, 140, &construct(told.clone()));
    }
    let host_op = |c: &mut ServerCore| {
        std::iter::from_fn(|| c.poll_action()).find_map(|x| match x {
            Action::Host {
                op,
                call:
                    HostCall::Group {
                        procs,
                        directives: info,
                        ..
                    },
            } => Some((op, procs, info)),
            _ => None,
        })
    };
    let (op, procs, _) = host_op(&mut a).expect("the construction goes to the host");
    assert_eq!(procs.len(), 4, "named by every member");
    // The host went on without rank 3, which terminated on the other node.
    let members = DataArray::of_procs(vec![p(0), p(1), p(2)]);
    a.handle_host(
        op,
        HostResult::Infos(Ok(vec![Info::new(attr::GROUP_MEMBERSHIP, members)])),
    );
    let mut updates = Vec::new();
    while let Some(x) = a.poll_action() {
        if let Action::Send { conn, tag, payload } = x
            && tag == Tag::NOTIFY
        {
            let n = Notification::decode(&payload, BufferType::NonDescribed).unwrap();
            updates.push((conn, n.status));
        }
    }
    let update = Status::GROUP_MEMBERSHIP_UPDATE;
    assert_eq!(updates, vec![(ca[0], update), (ca[1], update)]);
    assert_eq!(
        a.groups.live.get("g").map(|g| g.members.clone()),
        Some(vec![p(0), p(1), p(2)])
    );
    // Its destruct asks the host to go on without lost members too.
    for &conn in &ca {
        let destruct = Request::Op(Op::GroupDestruct {
            group: "g".into(),
            members: vec![],
            info: vec![],
        });
        send(&mut a, conn, 141, &destruct);
    }
    let (_, procs, info) = host_op(&mut a).expect("the destruct goes to the host");
    assert_eq!(procs.len(), 3);
    assert!(super::groups::group::tolerates_losses(&info));
}

/// The host's `PMIX_EVENT_PROC_TERMINATED` for rank `r`, as a host relays it from elsewhere.
fn terminated(r: u32) -> Event {
    Event {
        status: Status::EVENT_PROC_TERMINATED,
        source: p(r),
        range: DataRange::SESSION,
        info: vec![Info::new(attr::EVENT_AFFECTED_PROC, p(r))],
    }
}

/// An invitee on another node that declined was forgotten there when it answered: the home
/// server, forming the group without it, sends its server no word of the invitation's end
/// (relayed late, such a word ended a newer invitation to the same name there, and the
/// invitee's join to it failed).
#[test]
fn a_decline_from_another_node_is_not_followed_by_a_word_of_the_end() {
    let (mut a, ca) = node("a", [0, 1]);
    let (mut b, cb) = node("b", [2, 3]);
    send(&mut a, ca[0], INVITE, &invite(&[2], vec![]));
    let (_, sb) = settle(&mut a, &mut b, Status::SUCCESS);
    assert_eq!(sb.heard(cb[0], Status::GROUP_INVITED), vec![p(0)]);
    send(&mut b, cb[0], JOIN, &join(true));
    // The decline reaches the home server, which forms the group of its leader alone.
    let mut seen = Seen::default();
    assert!(step(&mut b, &mut a, &mut seen, Status::SUCCESS));
    assert_eq!(seen.answer(cb[0], JOIN), Some(Status::SUCCESS), "a decline");
    let mut invite_answered = false;
    let mut for_servers = Vec::new();
    while let Some(action) = a.poll_action() {
        match action {
            Action::Send { conn, tag, .. } if conn == ca[0] && tag.0 == INVITE => {
                invite_answered = true;
            }
            Action::Host {
                op,
                call: HostCall::NotifyEvent { status, info, .. },
            } => {
                if info.iter().any(|i| i.key.as_str() == GROUP_FOR_SERVERS) {
                    for_servers.push(status);
                }
                a.handle_host(op, HostResult::Status(Status::SUCCESS));
            }
            _ => {}
        }
    }
    assert!(
        invite_answered,
        "the invitation ends once its one invitee declined"
    );
    assert!(for_servers.is_empty(), "words for servers: {for_servers:?}");
    assert_eq!(members(&a), Some(vec![p(0)]));
}
