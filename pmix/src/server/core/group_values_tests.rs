//! The values members post for the group they construct, driven by hand: kept per member
//! until the construction ends, stored with the group's context id, and answered in
//! OpenPMIx's qualified form to gets by the poster's id.

use super::groups::values::GROUP_INFO;
use super::tests::{connect, core_with, p, replies, send};
use super::*;
use crate::model::{DataArray, Value, attr};
use crate::store::qualified::GroupValue;
use crate::wire::Command;
use crate::wire::ops::Op;

fn construct(info: Vec<Info>) -> Request {
    Request::Op(Op::GroupConstruct {
        group: "g".into(),
        procs: vec![p(0), p(1)],
        info,
    })
}

/// Rank 0 posts as OpenPMIx 4.2 clients do (an entry of `PMIX_GROUP_INFO`), rank 1 as the
/// standard says (a `PMIX_GROUP_LOCAL_CID` directive).
fn posted_by(rank: u32) -> Info {
    let cid = Info::new(attr::GROUP_LOCAL_CID, 1234 + rank as usize);
    if rank == 0 {
        Info::with_key(GROUP_INFO, DataArray::of_infos(vec![cid])).unwrap()
    } else {
        cid
    }
}

/// Ranks 0 and 1 construct "g" with `also`; the host answers with context id 42 when asked.
fn constructed(also: &[Info]) -> (ServerCore, [ConnId; 2]) {
    let mut c = core_with(2);
    let conns = [connect(&mut c, 0), connect(&mut c, 1)];
    while c.poll_action().is_some() {}
    for (rank, &conn) in conns.iter().enumerate() {
        let mut info = also.to_vec();
        info.push(posted_by(rank as u32));
        send(&mut c, conn, 110, &construct(info));
    }
    let actions: Vec<Action> = std::iter::from_fn(|| c.poll_action()).collect();
    let asked = actions.iter().find_map(|a| match a {
        Action::Host {
            op,
            call: HostCall::Group { .. },
        } => Some(*op),
        _ => None,
    });
    let answered = match asked {
        Some(op) => {
            let id = vec![Info::new(attr::GROUP_CONTEXT_ID, 42usize)];
            c.handle_host(op, HostResult::Infos(Ok(id)));
            replies(&mut c, Command::GROUP_CONSTRUCT).len()
        }
        // Completed here, with no context id.
        None => (actions.iter())
            .filter(|a| matches!(a, Action::Send { .. }))
            .count(),
    };
    assert_eq!(answered, 2, "both constructed");
    (c, conns)
}

/// What `conn` gets for `pmix.grp.lclid` of rank `target` with `info`.
fn get(c: &mut ServerCore, conn: ConnId, target: u32, info: Vec<Info>) -> Reply {
    let req = Request::Get {
        nspace: "job".into(),
        rank: Rank(target),
        info,
        key: Some(attr::GROUP_LOCAL_CID.wire_key().into()),
    };
    send(c, conn, 120, &req);
    let mut r = replies(c, Command::GETNB);
    assert_eq!(r.len(), 1, "answered at once");
    r.remove(0).2
}

fn of_group(id: usize) -> Info {
    Info::new(attr::GROUP_CONTEXT_ID, id).qualifier()
}

/// The answer carrying `rank`'s local id for the group of context id 42.
fn found(rank: u32) -> Reply {
    let value = GroupValue {
        key: attr::GROUP_LOCAL_CID.key(),
        value: Value::Size(1234 + u64::from(rank)),
        context_id: 42,
    };
    Reply::Get {
        status: Status::SUCCESS,
        data: vec![crate::wire::ProcData {
            proc: p(rank),
            kvals: vec![value.to_kval()],
        }],
    }
}

fn not_found() -> Reply {
    Reply::Get {
        status: Status::ERR_NOT_FOUND,
        data: vec![],
    }
}

#[test]
fn each_members_posted_value_is_found_by_its_id_and_the_groups_context_id_after_destruct() {
    let assign = [Info::new(attr::GROUP_ASSIGN_CONTEXT_ID, true)];
    let (mut c, conns) = constructed(&assign);
    let destruct = Request::Op(Op::GroupDestruct {
        group: "g".into(),
        members: vec![],
        info: vec![],
    });
    for &conn in &conns {
        send(&mut c, conn, 111, &destruct);
    }
    assert_eq!(replies(&mut c, Command::GROUP_DESTRUCT).len(), 2);
    for target in 0..2 {
        for &conn in &conns {
            let timeout = Info::new(attr::TIMEOUT, 600);
            let answer = get(&mut c, conn, target, vec![of_group(42), timeout]);
            assert_eq!(answer, found(target), "rank {target}'s value");
        }
    }
    // Another group's id finds nothing, and waits for nothing.
    assert_eq!(get(&mut c, conns[0], 1, vec![of_group(41)]), not_found());
    // Unqualified, the latest value rank 1 posted for any group.
    assert_eq!(get(&mut c, conns[0], 1, vec![]), found(1));
}

#[test]
fn values_posted_for_a_group_formed_without_a_context_id_are_dropped() {
    let (mut c, conns) = constructed(&[]);
    assert_eq!(get(&mut c, conns[0], 1, vec![]), not_found());
    assert!(c.groups.posted.is_empty());
}

#[test]
fn values_posted_for_a_construction_that_fails_are_dropped() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    while c.poll_action().is_some() {}
    let info = vec![Info::new(attr::GROUP_ASSIGN_CONTEXT_ID, true), posted_by(0)];
    send(&mut c, a, 110, &construct(info));
    assert_eq!(
        c.groups.posted["g"].len(),
        1,
        "kept until the construction ends"
    );
    // Rank 1 terminates before it took part.
    c.process_gone(&p(1));
    let r = replies(&mut c, Command::GROUP_CONSTRUCT);
    assert_eq!(r.len(), 1);
    assert!(c.groups.posted.is_empty());
    assert_eq!(get(&mut c, a, 0, vec![]), not_found());
}

#[test]
fn a_deregistered_namespace_takes_its_posted_values_with_it() {
    let assign = [Info::new(attr::GROUP_ASSIGN_CONTEXT_ID, true)];
    let (mut c, _) = constructed(&assign);
    c.deregister_nspace("job");
    let key = attr::GROUP_LOCAL_CID.wire_key();
    assert!(c.cx.store.group_values.find(&p(0), key, None).is_none());
}
