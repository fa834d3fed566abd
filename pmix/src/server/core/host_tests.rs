//! The server core with a host behind it, driven by hand: direct modex, fences and connects
//! across nodes, lookups, required directives, events, heartbeats, credentials and process
//! sets, checked on the upcalls and the replies.

use super::collective::LOST_PARTICIPANT;
use super::tests::*;
use super::*;
use crate::codec::BufferType;
use crate::model::PData;
use crate::model::{DataRange, Key, Kval, Query, Scope, Value, attr};
use crate::store::realm::info;
use crate::wire::{Command, CommitBucket, OpReply};

/// A job of 4 ranks of which 0 and 1 are on this node (n0), with a host that supports
/// direct modex and fences.
pub(super) fn two_nodes() -> ServerCore {
    let mut c = ServerCore::new(Some("n0".into()), true, "4.2.2");
    c.register_nspace(
        Nspace::new("job").unwrap(),
        &[
            info(attr::JOB_SIZE.wire_key(), Value::Uint32(4)),
            info(attr::LOCAL_PEERS.wire_key(), Value::string("0,1")),
        ],
    )
    .unwrap();
    for r in 0..2 {
        c.register_client(p(r), UID, UID);
    }
    c
}

fn commit_of(pairs: &[(&str, i32)]) -> Request {
    Request::Commit {
        buckets: vec![CommitBucket {
            scope: Scope::GLOBAL,
            kvals: pairs
                .iter()
                .map(|(k, v)| Kval {
                    key: Key::new(*k).unwrap(),
                    value: Value::Int32(*v),
                })
                .collect(),
        }],
    }
}

fn dmodex_replies(c: &mut ServerCore) -> Vec<(u64, Result<Vec<u8>, Status>)> {
    std::iter::from_fn(|| c.poll_action())
        .filter_map(|a| match a {
            Action::DmodexReply { op, result } => Some((op, result)),
            _ => None,
        })
        .collect()
}

fn blob_has(blob: &[u8], proc: &Proc, key: &str) -> bool {
    let mut m = crate::store::ModexStore::default();
    m.store_blob(blob, |_| false).unwrap();
    matches!(m.find(proc, key, false), crate::store::Found::Value(_))
}

#[test]
fn dmodex_request_waits_for_the_commit() {
    let mut c = core_with(2);
    let b = connect(&mut c, 1);
    while c.poll_action().is_some() {}
    let op = c.dmodex_request(p(1), &[]);
    assert!(
        dmodex_replies(&mut c).is_empty(),
        "parked until rank 1 commits"
    );
    send(&mut c, b, 101, &commit_of(&[("k", 1)]));
    let r = dmodex_replies(&mut c);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].0, op);
    assert!(blob_has(r[0].1.as_ref().unwrap(), &p(1), "k"));
    // Not a client of this server: nothing to wait for.
    let op = c.dmodex_request(Proc::try_new("elsewhere", 0).unwrap(), &[]);
    assert_eq!(
        dmodex_replies(&mut c),
        vec![(op, Err(Status::ERR_NOT_FOUND))]
    );
}

#[test]
fn a_deregistered_client_leaves_no_data_for_direct_modex() {
    let mut c = core_with(2);
    let b = connect(&mut c, 1);
    send(&mut c, b, 101, &commit_of(&[("k", 1)]));
    while c.poll_action().is_some() {}
    let op = c.dmodex_request(p(1), &[]);
    assert!(matches!(&dmodex_replies(&mut c)[..], [(o, Ok(_))] if *o == op));
    // v5.0 §17.2.8: the server purges all data relating to the client.
    c.deregister_client(&p(1));
    let op = c.dmodex_request(p(1), &[]);
    assert_eq!(
        dmodex_replies(&mut c),
        vec![(op, Err(Status::ERR_NOT_FOUND))]
    );
}

#[test]
fn dmodex_request_with_a_required_key_waits_for_that_key() {
    let mut c = core_with(2);
    let b = connect(&mut c, 1);
    send(&mut c, b, 101, &commit_of(&[("a", 1)]));
    while c.poll_action().is_some() {}
    let op = c.dmodex_request(p(1), &[Info::new(attr::REQUIRED_KEY, "b".to_string())]);
    assert!(
        dmodex_replies(&mut c).is_empty(),
        "data is there, but not the key"
    );
    send(&mut c, b, 102, &commit_of(&[("b", 2)]));
    let r = dmodex_replies(&mut c);
    assert_eq!(r[0].0, op);
    assert!(blob_has(r[0].1.as_ref().unwrap(), &p(1), "b"));
    // With a timeout, a key that never comes ends in PMIX_ERR_TIMEOUT.
    let op = c.dmodex_request(
        p(1),
        &[
            Info::new(attr::REQUIRED_KEY, "never".to_string()),
            Info::new(attr::TIMEOUT, 3),
        ],
    );
    let timer = armed_timer(&mut c, 3);
    assert_eq!(timer, op, "the timer is the request's");
    c.handle_timeout(timer);
    assert_eq!(dmodex_replies(&mut c), vec![(op, Err(Status::ERR_TIMEOUT))]);
}

#[test]
fn dmodex_request_marked_immediate_answers_with_what_is_there() {
    let mut c = core_with(2);
    let b = connect(&mut c, 1);
    while c.poll_action().is_some() {}
    let immediate = [Info::new(attr::IMMEDIATE, true)];
    // Nothing posted yet: not held.
    let op = c.dmodex_request(p(1), &immediate);
    assert_eq!(
        dmodex_replies(&mut c),
        vec![(op, Err(Status::ERR_NOT_FOUND))]
    );
    send(&mut c, b, 101, &commit_of(&[("k", 1)]));
    while c.poll_action().is_some() {}
    let op = c.dmodex_request(p(1), &immediate);
    let r = dmodex_replies(&mut c);
    assert_eq!(r[0].0, op);
    assert!(blob_has(r[0].1.as_ref().unwrap(), &p(1), "k"));
}

#[test]
fn refresh_of_a_remote_key_the_server_holds_asks_the_host_again() {
    let mut c = two_nodes();
    let a = connect(&mut c, 0);
    while c.poll_action().is_some() {}
    let get = |refresh: bool| Request::Get {
        nspace: "job".into(),
        rank: Rank(2),
        info: if refresh {
            vec![Info::new(attr::GET_REFRESH_CACHE, true)]
        } else {
            vec![]
        },
        key: Some("k".into()),
    };
    let dmodex = |c: &mut ServerCore| {
        std::iter::from_fn(|| c.poll_action()).find_map(|a| match a {
            Action::Host {
                op,
                call: HostCall::DirectModex { proc, info },
            } if proc == p(2) => Some((op, info)),
            _ => None,
        })
    };
    let blob_of = |v: i32| {
        let mut remote = crate::store::ModexStore::default();
        remote.commit(
            &p(2),
            vec![CommitBucket {
                scope: Scope::GLOBAL,
                kvals: vec![Kval {
                    key: Key::new("k").unwrap(),
                    value: Value::Int32(v),
                }],
            }],
        );
        remote.encode_blob(&[p(2)]).unwrap()
    };
    let answer = |c: &mut ServerCore| {
        let r = replies(c, Command::GETNB);
        let Reply::Get { status, data } = &r[0].2 else {
            panic!("{r:?}")
        };
        assert_eq!(*status, Status::SUCCESS);
        data[0].kvals[0].value.clone()
    };
    send(&mut c, a, 102, &get(false));
    let (op, _) = dmodex(&mut c).expect("the first get fetches");
    c.handle_host(op, HostResult::Data(Ok(blob_of(1))));
    assert_eq!(answer(&mut c), Value::Int32(1));
    // The copy answers a plain get; a refresh fetches again, taking what the owner has now.
    send(&mut c, a, 103, &get(false));
    assert_eq!(answer(&mut c), Value::Int32(1));
    send(&mut c, a, 104, &get(true));
    let (op, info) = dmodex(&mut c).expect("a refresh fetches again");
    assert!(
        info.iter()
            .any(|i| i.key.as_str() == attr::IMMEDIATE.wire_key())
    );
    assert!(
        !info
            .iter()
            .any(|i| i.key.as_str() == attr::REQUIRED_KEY.wire_key())
    );
    c.handle_host(op, HostResult::Data(Ok(blob_of(2))));
    assert_eq!(answer(&mut c), Value::Int32(2));
}

#[test]
fn direct_modex_the_host_cannot_answer_ends_the_get_with_its_status() {
    for host_says in [
        Status::ERR_NOT_FOUND,
        Status::ERR_NOT_SUPPORTED,
        Status::ERR_TIMEOUT,
    ] {
        let mut c = two_nodes();
        let a = connect(&mut c, 0);
        while c.poll_action().is_some() {}
        let get = Request::Get {
            nspace: "job".into(),
            rank: Rank(2),
            info: vec![],
            key: Some("k".into()),
        };
        send(&mut c, a, 102, &get);
        let (op, info) = std::iter::from_fn(|| c.poll_action())
            .find_map(|a| match a {
                Action::Host {
                    op,
                    call: HostCall::DirectModex { proc, info },
                } if proc == p(2) => Some((op, info)),
                _ => None,
            })
            .expect("rank 2 is remote: the host is asked");
        // DM-03: the owning server is told which key to wait for.
        assert!(
            info.iter()
                .any(|i| i.key.as_str() == attr::REQUIRED_KEY.wire_key()
                    && i.value.as_str() == Some("k"))
        );
        c.handle_host(op, HostResult::Data(Err(host_says)));
        let r = replies(&mut c, Command::GETNB);
        assert_eq!(
            r[0].2,
            Reply::Get {
                status: host_says,
                data: vec![]
            }
        );
    }
}

#[test]
fn fence_with_remote_participants_goes_to_the_host_once_with_the_local_data() {
    let mut c = two_nodes();
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    send(&mut c, a, 101, &commit_of(&[("k0", 0)]));
    send(&mut c, b, 101, &commit_of(&[("k1", 1)]));
    while c.poll_action().is_some() {}
    send(&mut c, a, 102, &fence());
    assert!(
        std::iter::from_fn(|| c.poll_action()).next().is_none(),
        "waits for rank 1"
    );
    send(&mut c, b, 102, &fence());
    let calls: Vec<(u64, Vec<u8>)> = std::iter::from_fn(|| c.poll_action())
        .filter_map(|a| match a {
            Action::Host {
                op,
                call: HostCall::Fence { data, .. },
            } => Some((op, data)),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1, "one host fence per collective");
    let (op, data) = &calls[0];
    assert!(blob_has(data, &p(0), "k0") && blob_has(data, &p(1), "k1"));
    // The host brings the other node's data; everyone is answered, and rank 2's key is then
    // served without asking the host again.
    let mut remote = crate::store::ModexStore::default();
    remote.commit(
        &p(2),
        vec![CommitBucket {
            scope: Scope::GLOBAL,
            kvals: vec![Kval {
                key: Key::new("k2").unwrap(),
                value: Value::Int32(2),
            }],
        }],
    );
    let blob = remote.encode_blob(&[p(2)]).unwrap();
    c.handle_host(*op, HostResult::Data(Ok(blob)));
    let r = replies(&mut c, Command::FENCENB);
    assert_eq!(r.len(), 2);
    assert!(
        r.iter()
            .all(|(_, _, rep)| *rep == Reply::Status(Status::SUCCESS))
    );
    let get = Request::Get {
        nspace: "job".into(),
        rank: Rank(2),
        info: vec![],
        key: Some("k2".into()),
    };
    send(&mut c, a, 103, &get);
    let r = replies(&mut c, Command::GETNB);
    let Reply::Get { status, data } = &r[0].2 else {
        panic!("{r:?}")
    };
    assert_eq!(*status, Status::SUCCESS);
    assert_eq!(data[0].kvals[0].value, Value::Int32(2));
}

#[test]
fn a_local_participant_lost_mid_fence_hands_the_failure_to_the_host() {
    // The other servers wait for this one: failing only here would hang them (v5.0 §17.3.6).
    let mut c = two_nodes();
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    while c.poll_action().is_some() {}
    send(&mut c, a, 102, &fence());
    assert!(std::iter::from_fn(|| c.poll_action()).next().is_none());
    c.handle_closed(b);
    let calls: Vec<(u64, Vec<Info>, Vec<u8>)> = std::iter::from_fn(|| c.poll_action())
        .filter_map(|a| match a {
            Action::Host {
                op,
                call: HostCall::Fence { info, data, .. },
            } => Some((op, info, data)),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1, "the host is told once");
    let (op, info, data) = &calls[0];
    let local = info
        .iter()
        .find_map(|i| i.get(attr::LOCAL_COLLECTIVE_STATUS));
    assert_eq!(local, Some(LOST_PARTICIPANT));
    assert!(data.is_empty(), "a failed fence carries no data");
    // Rank 0 waits for the host's word, which a host ignoring the status cannot turn into
    // success.
    assert!(replies(&mut c, Command::FENCENB).is_empty());
    c.handle_host(*op, HostResult::Data(Ok(Vec::new())));
    let r = replies(&mut c, Command::FENCENB);
    assert_eq!(r, vec![(a, 102, Reply::Status(LOST_PARTICIPANT))]);
    // A participant already gone when the fence starts is handed over the same way.
    send(&mut c, a, 103, &fence());
    let told = std::iter::from_fn(|| c.poll_action()).any(|a| {
        matches!(a, Action::Host { call: HostCall::Fence { info, .. }, .. }
            if info.iter().any(|i| i.get(attr::LOCAL_COLLECTIVE_STATUS).is_some()))
    });
    assert!(told);
}

#[test]
fn lookup_finding_some_keys_is_a_partial_success_with_the_data_found() {
    let mut c = core_with(1);
    let a = connect(&mut c, 0);
    while c.poll_action().is_some() {}
    let lookup = Request::Lookup {
        uid: UID,
        keys: vec!["here".into(), "not-here".into()],
        info: vec![],
    };
    send(&mut c, a, 101, &lookup);
    let op = std::iter::from_fn(|| c.poll_action())
        .find_map(|a| match a {
            Action::Host {
                op,
                call: HostCall::Lookup { .. },
            } => Some(op),
            _ => None,
        })
        .expect("the host is asked");
    let found = vec![PData {
        proc: p(0),
        key: Key::new("here").unwrap(),
        value: Value::Uint32(7),
    }];
    c.handle_host(op, HostResult::Lookup(Ok(found.clone())));
    let r = replies(&mut c, Command::LOOKUPNB);
    assert_eq!(
        r[0].2,
        Reply::Lookup {
            status: Status::ERR_PARTIAL_SUCCESS,
            data: found,
        }
    );
}

#[test]
fn a_required_directive_nobody_knows_fails_fence_publish_lookup_and_unpublish() {
    let mut c = core_with(1);
    let a = connect(&mut c, 0);
    while c.poll_action().is_some() {}
    let unknown = || {
        Info::with_key("pmix.nobody.knows.this", true)
            .unwrap()
            .required()
    };
    let requests = [
        (
            Command::FENCENB,
            Request::Fence {
                procs: vec![],
                info: vec![unknown()],
            },
        ),
        (
            Command::PUBLISHNB,
            Request::Publish {
                uid: UID,
                info: vec![Info::with_key("service", "x").unwrap(), unknown()],
            },
        ),
        (
            Command::LOOKUPNB,
            Request::Lookup {
                uid: UID,
                keys: vec!["service".into()],
                info: vec![unknown()],
            },
        ),
        (
            Command::UNPUBLISHNB,
            Request::Unpublish {
                uid: UID,
                keys: vec!["service".into()],
                info: vec![unknown()],
            },
        ),
    ];
    for (i, (command, request)) in requests.into_iter().enumerate() {
        send(&mut c, a, 101 + i as u32, &request);
        let actions: Vec<Action> = std::iter::from_fn(|| c.poll_action()).collect();
        assert!(
            !actions.iter().any(|a| matches!(a, Action::Host { .. })),
            "{command:?} is not passed to the host"
        );
        let status = actions.iter().find_map(|a| match a {
            Action::Send { payload, .. } => {
                match Reply::decode(command, payload, BufferType::NonDescribed) {
                    Ok(Reply::Status(s) | Reply::Lookup { status: s, .. }) => Some(s),
                    _ => None,
                }
            }
            _ => None,
        });
        assert_eq!(status, Some(Status::ERR_NOT_SUPPORTED), "{command:?}");
    }
    // A required directive the standard defines is passed on.
    let known = Request::Lookup {
        uid: UID,
        keys: vec!["service".into()],
        info: vec![Info::new(attr::TIMEOUT, 1).required()],
    };
    send(&mut c, a, 200, &known);
    assert!(std::iter::from_fn(|| c.poll_action()).any(|a| matches!(
        a,
        Action::Host {
            call: HostCall::Lookup { .. },
            ..
        }
    )));
}

/// The connections that received a tag-0 notification since the last drain.
fn notified(c: &mut ServerCore) -> Vec<ConnId> {
    let mut out = Vec::new();
    while let Some(a) = c.poll_action() {
        if let Action::Send { conn, tag, .. } = a
            && tag == Tag::NOTIFY
        {
            out.push(conn);
        }
    }
    out
}

#[test]
fn events_go_to_registrants_in_range_until_they_deregister() {
    let mut c = core_with(3);
    let conns: Vec<ConnId> = (0..3).map(|r| connect(&mut c, r)).collect();
    // Codes of a job's own processes: the host is not asked to watch them.
    let code = Status::ERR_PROC_ABORTED;
    let register = |codes: Vec<Status>| Request::RegisterEvents {
        codes,
        info: vec![],
    };
    // Rank 1 registers with the code twice over, rank 2 for another code only.
    send(&mut c, conns[1], 101, &register(vec![code, code]));
    send(
        &mut c,
        conns[2],
        101,
        &register(vec![Status::ERR_PROC_ABORTING]),
    );
    let notify = Request::Notify {
        status: code,
        range: DataRange::NAMESPACE,
        info: vec![],
    };
    send(&mut c, conns[0], 102, &notify);
    assert_eq!(notified(&mut c), vec![conns[1]]);
    // The client names its codes once each when it deregisters.
    let dereg = Request::Op(crate::wire::ops::Op::DeregisterEvents { codes: vec![code] });
    send(&mut c, conns[1], 103, &dereg);
    send(&mut c, conns[0], 104, &notify);
    assert_eq!(notified(&mut c), Vec::<ConnId>::new());
}

fn connect_op(procs: &[Proc], disconnect: bool) -> Request {
    let (procs, info) = (procs.to_vec(), Vec::new());
    Request::Op(if disconnect {
        crate::wire::ops::Op::Disconnect { procs, info }
    } else {
        crate::wire::ops::Op::Connect { procs, info }
    })
}

/// A job spawned onto other nodes is not registered here; connecting to all of it (as
/// `MPI_Comm_spawn` does) must go to the host, not complete as if it were local. Found by the
/// simulator, where the parent's connect returned at once and the spawned processes waited
/// for it forever.
#[test]
fn connect_to_a_namespace_this_server_does_not_hold_goes_to_the_host() {
    let mut c = core_with(1);
    let a = connect(&mut c, 0);
    while c.poll_action().is_some() {}
    let elsewhere = Proc::new(Nspace::new("spawned").unwrap(), Rank::WILDCARD);
    send(&mut c, a, 101, &connect_op(&[p(0), elsewhere], false));
    let (_, call) = host_call(&mut c);
    assert!(matches!(call, HostCall::Connect { ref procs, .. } if procs.len() == 2));
    // A fence with it goes to the host as well.
    let elsewhere = Proc::new(Nspace::new("spawned").unwrap(), Rank::WILDCARD);
    let fence = Request::Fence {
        procs: vec![p(0), elsewhere],
        info: Vec::new(),
    };
    send(&mut c, a, 102, &fence);
    let (_, call) = host_call(&mut c);
    assert!(matches!(call, HostCall::Fence { .. }), "{call:?}");
}

#[test]
fn connect_across_nodes_goes_to_the_host_once_and_disconnect_needs_a_connect() {
    let mut c = two_nodes();
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    let set = [p(0), p(1), p(2)];
    // Never connected: refused at once, with the standard's status.
    send(&mut c, a, 101, &connect_op(&set, true));
    let r = replies(&mut c, Command::DISCONNECTNB);
    assert_eq!(
        r[0].2,
        Reply::Op(OpReply::Status {
            command: Command::DISCONNECTNB,
            status: Status::ERR_INVALID_OPERATION
        })
    );
    send(&mut c, a, 102, &connect_op(&set, false));
    assert!(
        std::iter::from_fn(|| c.poll_action()).next().is_none(),
        "waits for rank 1"
    );
    send(&mut c, b, 102, &connect_op(&set, false));
    let (op, call) = host_call(&mut c);
    assert!(matches!(call, HostCall::Connect { ref procs, .. } if procs.len() == 3));
    c.handle_host(op, HostResult::Status(Status::SUCCESS));
    let r = replies(&mut c, Command::CONNECTNB);
    assert_eq!(r.len(), 2);
    // One namespace only: no other job's information to hand over.
    assert!(r.iter().all(|(_, _, rep)| *rep
        == Reply::Op(OpReply::Connect {
            status: Status::SUCCESS,
            jobs: Vec::new()
        })));
    // Now the disconnect is a collective through the host too; afterwards the set is gone.
    send(&mut c, a, 103, &connect_op(&set, true));
    send(&mut c, b, 103, &connect_op(&set, true));
    let (op, call) = host_call(&mut c);
    assert!(matches!(call, HostCall::Disconnect { .. }));
    c.handle_host(op, HostResult::Status(Status::SUCCESS));
    assert_eq!(replies(&mut c, Command::DISCONNECTNB).len(), 2);
    send(&mut c, a, 104, &connect_op(&set, true));
    let r = replies(&mut c, Command::DISCONNECTNB);
    assert!(matches!(
        r[0].2,
        Reply::Op(OpReply::Status {
            status: Status::ERR_INVALID_OPERATION,
            ..
        })
    ));
}

#[test]
fn a_participant_lost_mid_connect_fails_it_for_the_others() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    send(&mut c, a, 101, &connect_op(&[p(0), p(1)], false));
    while c.poll_action().is_some() {}
    c.handle_closed(b);
    let r = replies(&mut c, Command::CONNECTNB);
    assert_eq!(r.len(), 1);
    assert!(matches!(
        r[0].2,
        Reply::Op(OpReply::Connect { status, .. }) if status == Status::ERR_LOST_CONNECTION
    ));
}

#[test]
fn an_openpmix_heartbeat_goes_to_the_host_without_a_reply() {
    let mut c = core_with(1);
    let a = connect(&mut c, 0);
    while c.poll_action().is_some() {}
    // OpenPMIx's clients send an empty message under the heartbeat tag.
    c.handle_frame(
        a,
        Frame {
            pindex: 0,
            tag: Tag::HEARTBEAT,
            payload: Vec::new(),
        },
    );
    let (_, call) = host_call(&mut c);
    assert!(matches!(
        call,
        HostCall::Monitor { ref proc, ref monitor, .. }
            if *proc == p(0) && monitor.key.as_str() == attr::SEND_HEARTBEAT.wire_key()
    ));
    // The connection stays open, and nothing is sent back: a finalize is answered once the
    // host has heard it.
    send(&mut c, a, 101, &Request::Finalize);
    let (op, call) = host_call(&mut c);
    assert!(matches!(call, HostCall::ClientFinalized { ref proc } if *proc == p(0)));
    c.handle_host(op, HostResult::Status(Status::SUCCESS));
    assert_eq!(replies(&mut c, Command::FINALIZE).len(), 1);
}

#[test]
fn a_finalize_returns_once_the_host_has_heard_it_whatever_it_answers() {
    let mut c = core_with(1);
    let a = connect(&mut c, 0);
    while c.poll_action().is_some() {}
    send(&mut c, a, 7, &Request::Finalize);
    let (op, call) = host_call(&mut c);
    assert!(matches!(call, HostCall::ClientFinalized { ref proc } if *proc == p(0)));
    // Nothing before the host answers.
    assert!(replies(&mut c, Command::FINALIZE).is_empty());
    c.handle_host(op, HostResult::Status(Status::ERR_NOT_SUPPORTED));
    assert_eq!(
        replies(&mut c, Command::FINALIZE),
        [(a, 7, Reply::Status(Status::SUCCESS))]
    );
}

#[test]
fn a_client_gone_without_finalizing_is_reported_to_the_host_once_and_a_finalized_one_not() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    let b = connect(&mut c, 1);
    while c.poll_action().is_some() {}
    // Rank 0 crashes: its connection ends with no finalize.
    c.handle_closed(a);
    let (op, call) = host_call(&mut c);
    assert_eq!(call, HostCall::ClientLost { proc: p(0) });
    // The host's answer is not waited for, and changes nothing.
    c.handle_host(op, HostResult::Status(Status::SUCCESS));
    c.handle_closed(a);
    assert!(!std::iter::from_fn(|| c.poll_action()).any(|a| matches!(a, Action::Host { .. })));
    // Rank 1 finalizes, then its connection ends: only the finalize reaches the host.
    send(&mut c, b, 9, &Request::Finalize);
    let (op, call) = host_call(&mut c);
    assert_eq!(call, HostCall::ClientFinalized { proc: p(1) });
    c.handle_host(op, HostResult::Status(Status::SUCCESS));
    c.handle_closed(b);
    let calls: Vec<_> = std::iter::from_fn(|| c.poll_action())
        .filter(|a| matches!(a, Action::Host { .. }))
        .collect();
    assert!(calls.is_empty(), "{calls:?}");
}

#[test]
fn credentials_come_from_the_host_or_else_from_the_library() {
    use crate::model::ByteObject;
    use crate::wire::ops::Op;
    let mut c = core_with(1);
    let a = connect(&mut c, 0);
    while c.poll_action().is_some() {}
    let get = Request::Op(Op::GetCredential { info: vec![] });
    let credential_of = |r: Reply| match r {
        Reply::Op(OpReply::Credential {
            status, credential, ..
        }) => (status, credential.map(|b| b.0)),
        other => panic!("not a credential reply: {other:?}"),
    };

    // A host with a security system of its own answers with its credential, and sees the
    // requester's ids.
    send(&mut c, a, 11, &get);
    let (op, call) = host_call(&mut c);
    assert!(matches!(
        &call,
        HostCall::GetCredential { proc, info }
            if *proc == p(0) && info.iter().any(|i| i.is(attr::USERID))
    ));
    c.handle_host(
        op,
        HostResult::Credential(Ok((b"munge:xyz".to_vec(), vec![]))),
    );
    let (_, _, r) = replies(&mut c, Command::GET_CREDENTIAL).remove(0);
    assert_eq!(
        credential_of(r),
        (Status::SUCCESS, Some(b"munge:xyz".to_vec()))
    );

    // A host without one: the library seals the identity it verified.
    send(&mut c, a, 12, &get);
    let (op, _) = host_call(&mut c);
    c.handle_host(op, HostResult::Credential(Err(Status::ERR_NOT_SUPPORTED)));
    let (_, _, r) = replies(&mut c, Command::GET_CREDENTIAL).remove(0);
    let (status, sealed) = credential_of(r);
    assert_eq!(status, Status::SUCCESS);
    let sealed = sealed.expect("a sealed credential");

    // Validation likewise: the host's verdict when it gives one, the library's otherwise.
    let validate = |cred: &[u8]| {
        Request::Op(Op::ValidateCredential {
            credential: ByteObject(cred.to_vec()),
            directives: vec![],
        })
    };
    let verdict = |r: Reply| match r {
        Reply::Op(OpReply::Infos { status, info, .. }) => (status, info),
        other => panic!("not a validation reply: {other:?}"),
    };
    send(&mut c, a, 13, &validate(b"munge:xyz"));
    let (op, _) = host_call(&mut c);
    c.handle_host(op, HostResult::Infos(Err(Status::ERR_INVALID_CRED)));
    let (status, _) = verdict(replies(&mut c, Command::VALIDATE_CRED).remove(0).2);
    assert_eq!(status, Status::ERR_INVALID_CRED);

    send(&mut c, a, 14, &validate(&sealed));
    let (op, _) = host_call(&mut c);
    c.handle_host(op, HostResult::Infos(Err(Status::ERR_NOT_SUPPORTED)));
    let (status, info) = verdict(replies(&mut c, Command::VALIDATE_CRED).remove(0).2);
    assert_eq!(status, Status::SUCCESS);
    assert!(
        info.iter()
            .any(|i| i.is(attr::USERID) && i.value.to_u64() == Some(u64::from(UID)))
    );

    let mut altered = sealed.clone();
    *altered.last_mut().unwrap() ^= 1;
    send(&mut c, a, 15, &validate(&altered));
    let (op, _) = host_call(&mut c);
    c.handle_host(op, HostResult::Infos(Err(Status::ERR_NOT_SUPPORTED)));
    let (status, _) = verdict(replies(&mut c, Command::VALIDATE_CRED).remove(0).2);
    assert_eq!(status, Status::ERR_INVALID_CRED);
}

#[test]
fn process_sets_are_defined_once_answered_in_queries_and_deleted() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    while c.poll_action().is_some() {}
    assert_eq!(
        c.define_process_set("", vec![p(0)]),
        Err(Status::ERR_BAD_PARAM)
    );
    assert_eq!(
        c.define_process_set("evens", vec![]),
        Err(Status::ERR_BAD_PARAM)
    );
    assert_eq!(c.define_process_set("evens", vec![p(0)]), Ok(()));
    assert_eq!(
        c.define_process_set("evens", vec![p(1)]),
        Err(Status::ERR_EXISTS)
    );
    let query = |keys: &[&str], qualifiers: Vec<Info>| {
        Request::Op(crate::wire::Op::Query {
            queries: vec![Query {
                keys: keys.iter().map(|k| Some((*k).to_owned())).collect(),
                qualifiers,
            }],
        })
    };
    let keys = [
        attr::QUERY_NUM_PSETS.wire_key(),
        attr::QUERY_PSET_NAMES.wire_key(),
        attr::QUERY_PSET_MEMBERSHIP.wire_key(),
    ];
    let named = vec![Info::new(attr::PSET_NAME, "evens".to_owned())];
    send(&mut c, a, 101, &query(&keys, named.clone()));
    let r = replies(&mut c, Command::QUERY);
    let Reply::Op(OpReply::Infos { status, info, .. }) = &r[0].2 else {
        panic!("{r:?}");
    };
    assert_eq!(*status, Status::SUCCESS);
    let get = |key: &str| {
        info.iter()
            .find(|i| i.key.as_str() == key)
            .map(|i| i.value.clone())
    };
    assert_eq!(get(keys[0]), Some(Value::Size(1)));
    // On the wire in OpenPMIx's form; the client gives its caller the standard's.
    assert_eq!(get(keys[1]), Some(Value::string("evens".to_owned())));
    let names = crate::query::standard_form(info[1].clone());
    let Value::DataArray(names) = names.value else {
        panic!("{names:?}");
    };
    assert_eq!(names.elements, vec![Value::string("evens".to_owned())]);
    let Some(Value::DataArray(members)) = get(keys[2]) else {
        panic!("{info:?}");
    };
    assert_eq!(members.elements, vec![Value::Proc(p(0))]);
    assert_eq!(c.delete_process_set("evens"), Ok(()));
    assert_eq!(c.delete_process_set("evens"), Err(Status::ERR_NOT_FOUND));
    // Gone from the answers: no sets, and no membership of the deleted one.
    send(&mut c, a, 102, &query(&keys[..1], Vec::new()));
    let r = replies(&mut c, Command::QUERY);
    let Reply::Op(OpReply::Infos { info, .. }) = &r[0].2 else {
        panic!("{r:?}");
    };
    assert_eq!(info[0].value, Value::Size(0));
}
