//! Groups announced by the `PMIX_GROUP_CONSTRUCT_COMPLETE` of an inviting client (OpenPMIx
//! 4.2's event-only invitations), driven by hand: from a local client and relayed by the host,
//! used by their id in a fence and destructed, and never in place of a name in use.

use super::groups_tests::{destruct, drain, group_fence, heard, invite, plain};
use super::host_tests::two_nodes;
use super::tests::{connect, core_with, p, send};
use super::*;
use crate::events::Event;
use crate::model::{DataArray, DataRange, attr};
use crate::wire::Command;

/// What an OpenPMIx 4.2 leader raises once its invitees accepted: range `CUSTOM` over the
/// members, `PMIX_EVENT_NON_DEFAULT` and the group's id.
fn announcement(group: &str, members: &[u32]) -> Vec<Info> {
    let members: Vec<Proc> = members.iter().map(|r| p(*r)).collect();
    vec![
        Info::new(attr::EVENT_CUSTOM_RANGE, DataArray::of_procs(members)),
        Info::new(attr::EVENT_NON_DEFAULT, true),
        Info::new(attr::GROUP_ID, group.to_owned()),
    ]
}

fn announce(group: &str, members: &[u32]) -> Request {
    Request::Notify {
        status: Status::GROUP_CONSTRUCT_COMPLETE,
        range: DataRange::CUSTOM,
        info: announcement(group, members),
    }
}

/// Register `conn` for `PMIX_GROUP_CONSTRUCT_COMPLETE` alone (the event is non-default).
fn listen_for_completion(c: &mut ServerCore, conn: ConnId) {
    let codes = Request::RegisterEvents {
        codes: vec![Status::GROUP_CONSTRUCT_COMPLETE],
        info: vec![],
    };
    send(c, conn, 190, &codes);
    while c.poll_action().is_some() {}
}

#[test]
fn a_group_its_inviting_client_announces_fences_by_its_id_and_destructs() {
    let mut c = core_with(4);
    let conns: Vec<ConnId> = (0..4).map(|r| connect(&mut c, r)).collect();
    for &conn in &conns[2..] {
        listen_for_completion(&mut c, conn);
    }
    send(&mut c, conns[0], 101, &announce("ourgroup", &[0, 2, 3]));
    let (r, ev) = drain(&mut c, Command::NOTIFY);
    assert_eq!(r, vec![(conns[0], 101, Reply::Status(Status::SUCCESS))]);
    // Still delivered to the members, as any event.
    let completed = heard(&ev, Status::GROUP_CONSTRUCT_COMPLETE);
    assert_eq!(completed, vec![conns[2], conns[3]]);
    let g = &c.groups.live["ourgroup"];
    assert_eq!(g.members, vec![p(0), p(2), p(3)], "in the order announced");
    assert_eq!(g.roles.leader, Some(p(0)), "the inviting process leads");
    // The group's id stands for its members: rank 1 is not one.
    for r in [0, 2, 3, 1] {
        send(&mut c, conns[r], 102, &group_fence("ourgroup"));
    }
    let (r, _) = drain(&mut c, Command::FENCENB);
    let mut answered: Vec<(ConnId, Reply)> = r.into_iter().map(|(c, _, x)| (c, x)).collect();
    answered.sort_by_key(|(c, _)| *c);
    let ok = Reply::Status(Status::SUCCESS);
    let want = vec![
        (conns[0], ok.clone()),
        (conns[1], Reply::Status(Status::ERR_BAD_PARAM)),
        (conns[2], ok.clone()),
        (conns[3], ok),
    ];
    assert_eq!(answered, want);
    for r in [0, 2, 3] {
        send(&mut c, conns[r], 103, &destruct("ourgroup"));
    }
    let (r, _) = drain(&mut c, Command::GROUP_DESTRUCT);
    assert_eq!(r.len(), 3);
    let done = plain(Command::GROUP_DESTRUCT, Status::SUCCESS);
    assert!(r.iter().all(|(_, _, x)| *x == done));
    assert!(!c.groups.live.contains_key("ourgroup"));
}

#[test]
fn an_announcement_relayed_by_the_host_makes_the_group_known_here_with_its_context_id() {
    let mut c = two_nodes();
    connect(&mut c, 0);
    while c.poll_action().is_some() {}
    // Rank 2, on the other node, led; rank 0 here is a member.
    let mut info = announcement("wide", &[2, 0]);
    info.push(Info::new(attr::GROUP_CONTEXT_ID, 9usize));
    let event = Event {
        status: Status::GROUP_CONSTRUCT_COMPLETE,
        source: p(2),
        range: DataRange::CUSTOM,
        info,
    };
    c.notify_event(event).unwrap();
    let g = &c.groups.live["wide"];
    assert_eq!(g.members, vec![p(2), p(0)]);
    assert_eq!(g.roles.leader, Some(p(2)));
    assert_eq!(g.context_id, Some(9));
}

#[test]
fn an_announcement_names_the_final_membership_when_it_carries_one() {
    let mut c = core_with(3);
    let a = connect(&mut c, 0);
    let mut info = announcement("g", &[0, 1, 2]);
    // Rank 2 declined: the final membership says so.
    let members = DataArray::of_procs(vec![p(0), p(1)]);
    info.push(Info::new(attr::GROUP_MEMBERSHIP, members));
    let req = Request::Notify {
        status: Status::GROUP_CONSTRUCT_COMPLETE,
        range: DataRange::CUSTOM,
        info,
    };
    send(&mut c, a, 101, &req);
    assert_eq!(c.groups.live["g"].members, vec![p(0), p(1)]);
}

#[test]
fn an_announcement_never_takes_a_name_in_use_nor_forms_a_malformed_group() {
    let mut c = core_with(4);
    let conns: Vec<ConnId> = (0..4).map(|r| connect(&mut c, r)).collect();
    // The server's own invitation of "inv" is in progress: a client's word does not replace it.
    send(&mut c, conns[0], 101, &invite(&[1, 2], vec![]));
    send(&mut c, conns[3], 102, &announce("inv", &[3, 1]));
    assert!(!c.groups.live.contains_key("inv"));
    assert!(c.groups.invitations.contains_key("inv"));
    // A live group keeps its members.
    send(&mut c, conns[3], 103, &announce("g", &[3, 0]));
    send(&mut c, conns[1], 104, &announce("g", &[1, 2]));
    assert_eq!(c.groups.live["g"].members, vec![p(3), p(0)]);
    // Repeated members, or no group id, announce nothing.
    send(&mut c, conns[3], 105, &announce("twice", &[3, 3]));
    assert!(!c.groups.live.contains_key("twice"));
    let mut info = announcement("unnamed", &[3, 0]);
    info.retain(|i| !i.is(attr::GROUP_ID));
    let req = Request::Notify {
        status: Status::GROUP_CONSTRUCT_COMPLETE,
        range: DataRange::CUSTOM,
        info,
    };
    send(&mut c, conns[3], 106, &req);
    assert_eq!(c.groups.live.len(), 1, "only g");
    // Another event code announces nothing.
    let left = Request::Notify {
        status: Status::GROUP_LEFT,
        range: DataRange::CUSTOM,
        info: announcement("other", &[3, 0]),
    };
    send(&mut c, conns[3], 107, &left);
    assert!(!c.groups.live.contains_key("other"));
}
