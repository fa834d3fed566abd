//! I/O forwarding at the server (v5.0 §18.5, §17.2.14): pulls go to the host and are
//! answered with the server's id, delivered output reaches exactly the pulls that match it,
//! output no one pulled waits for the first pull that does, and a deregistration or a push
//! goes to the host.

use super::tests::*;
use super::*;
use crate::codec::BufferType;
use crate::model::{IofChannel, attr};
use crate::wire::Command;
use crate::wire::OpReply;
use crate::wire::ops::{IofDelivery, Op};

const STDOUT: IofChannel = IofChannel::STDOUT_CHANNEL;
const STDERR: IofChannel = IofChannel::STDERR_CHANNEL;
const BOTH: IofChannel = IofChannel(STDOUT.0 | STDERR.0);

fn pull(
    c: &mut ServerCore,
    conn: ConnId,
    tag: u32,
    procs: Vec<Proc>,
    channel: IofChannel,
    id: u64,
) {
    let req = Request::Op(Op::IofPull {
        procs,
        directives: vec![],
        channel,
        local_id: id,
    });
    send(c, conn, tag, &req);
}

/// What the core did: host calls, replies to IOF requests, and deliveries on tag 2.
#[derive(Debug, Default)]
struct Out {
    calls: Vec<(u64, HostCall)>,
    replies: Vec<(ConnId, u32, Reply)>,
    delivered: Vec<(ConnId, IofDelivery)>,
}

fn out(c: &mut ServerCore, command: Command) -> Out {
    let mut o = Out::default();
    while let Some(a) = c.poll_action() {
        match a {
            Action::Host { op, call } => o.calls.push((op, call)),
            Action::Send { conn, tag, payload } if tag == Tag::IOF => {
                let d = IofDelivery::decode(&payload, BufferType::NonDescribed)
                    .expect("a delivery decodes");
                o.delivered.push((conn, d));
            }
            Action::Send { conn, tag, payload } => {
                let r = Reply::decode(command, &payload, BufferType::NonDescribed)
                    .expect("a reply decodes");
                o.replies.push((conn, tag.0, r));
            }
            _ => {}
        }
    }
    o
}

/// A pull of `procs` on `channel` by `conn`, agreed by the host: the server's id for it.
fn agreed_pull(
    c: &mut ServerCore,
    conn: ConnId,
    procs: Vec<Proc>,
    channel: IofChannel,
    id: u64,
) -> u64 {
    pull(c, conn, 120, procs, channel, id);
    let o = out(c, Command::IOF_PULL);
    let [(op, HostCall::IofPull { .. })] = &o.calls[..] else {
        panic!("one iof_pull upcall: {o:?}");
    };
    c.handle_host(*op, HostResult::Status(Status::SUCCESS));
    let o = out(c, Command::IOF_PULL);
    let Some((_, _, Reply::Op(OpReply::IofPull { status, remote_id }))) = o.replies.first() else {
        panic!("a pull reply: {o:?}");
    };
    assert_eq!(*status, Status::SUCCESS);
    remote_id.expect("an id with the success")
}

fn deliver(c: &mut ServerCore, rank: u32, channel: IofChannel, data: &[u8]) {
    c.iof_deliver(p(rank), channel, data.to_vec(), vec![])
        .expect("the output is accepted");
}

#[test]
fn a_pull_goes_to_the_host_with_the_pullers_ids_and_is_answered_once_it_agrees() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    pull(&mut c, a, 120, vec![p(1)], STDOUT, 7);
    let o = out(&mut c, Command::IOF_PULL);
    assert!(o.replies.is_empty(), "answered once the host has: {o:?}");
    let [
        (
            op,
            HostCall::IofPull {
                procs,
                directives,
                channels,
            },
        ),
    ] = &o.calls[..]
    else {
        panic!("one iof_pull upcall: {o:?}");
    };
    assert_eq!((procs, *channels), (&vec![p(1)], STDOUT));
    assert!(
        directives.contains(&Info::new(attr::USERID, UID)),
        "{directives:?}"
    );
    c.handle_host(*op, HostResult::Status(Status::SUCCESS));
    let o = out(&mut c, Command::IOF_PULL);
    let [
        (
            conn,
            120,
            Reply::Op(OpReply::IofPull {
                status: Status::SUCCESS,
                remote_id: Some(_),
            }),
        ),
    ] = &o.replies[..]
    else {
        panic!("the pull's reply with the server's id: {o:?}");
    };
    assert_eq!(*conn, a);
}

#[test]
fn a_pull_the_host_refuses_fails_with_its_status_and_receives_nothing() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    pull(&mut c, a, 120, vec![p(1)], STDOUT, 7);
    let o = out(&mut c, Command::IOF_PULL);
    let [(op, _)] = &o.calls[..] else {
        panic!("one upcall: {o:?}");
    };
    c.handle_host(*op, HostResult::Status(Status::ERR_NOT_SUPPORTED));
    let o = out(&mut c, Command::IOF_PULL);
    assert!(
        matches!(
            &o.replies[..],
            [(
                _,
                120,
                Reply::Op(OpReply::IofPull {
                    status: Status::ERR_NOT_SUPPORTED,
                    remote_id: None
                })
            )]
        ),
        "{o:?}"
    );
    deliver(&mut c, 1, STDOUT, b"nobody");
    assert!(out(&mut c, Command::IOF_PULL).delivered.is_empty());
}

#[test]
fn pulls_of_stdin_or_of_no_process_are_refused_before_the_host() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    pull(&mut c, a, 120, vec![p(1)], IofChannel::STDIN_CHANNEL, 1);
    pull(&mut c, a, 121, vec![], STDOUT, 2);
    let o = out(&mut c, Command::IOF_PULL);
    assert!(o.calls.is_empty(), "{o:?}");
    let statuses: Vec<Status> = (o.replies.iter())
        .map(|(_, _, r)| match r {
            Reply::Op(r) => r.status(),
            other => panic!("a pull reply: {other:?}"),
        })
        .collect();
    assert_eq!(statuses, [Status::ERR_NOT_SUPPORTED, Status::ERR_BAD_PARAM]);
}

#[test]
fn output_reaches_exactly_the_pulls_whose_processes_and_channels_match() {
    let mut c = core_with(3);
    let (a, b) = (connect(&mut c, 0), connect(&mut c, 1));
    drain(&mut c);
    agreed_pull(&mut c, a, vec![p(2)], STDOUT, 7);
    let wildcard = Proc::new(p(0).nspace, Rank::WILDCARD);
    agreed_pull(&mut c, b, vec![wildcard], BOTH, 9);
    deliver(&mut c, 2, STDOUT, b"two out");
    deliver(&mut c, 2, STDERR, b"two err");
    deliver(&mut c, 1, STDOUT, b"one out");
    let got: Vec<(ConnId, u64, Vec<u8>)> = out(&mut c, Command::IOF_PULL)
        .delivered
        .into_iter()
        .map(|(conn, d)| (conn, d.remote_id, d.data.0))
        .collect();
    assert_eq!(
        got,
        [
            (a, 7, b"two out".to_vec()),
            (b, 9, b"two out".to_vec()),
            (b, 9, b"two err".to_vec()),
            // Rank 1's own output never goes back to rank 1.
        ]
    );
}

#[test]
fn output_no_one_pulled_waits_for_the_first_pull_after_its_reply() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    deliver(&mut c, 1, STDOUT, b"early");
    deliver(&mut c, 1, STDERR, b"not asked for");
    pull(&mut c, a, 120, vec![p(1)], STDOUT, 3);
    let o = out(&mut c, Command::IOF_PULL);
    c.handle_host(o.calls[0].0, HostResult::Status(Status::SUCCESS));
    let o = out(&mut c, Command::IOF_PULL);
    assert_eq!(o.replies.len(), 1, "{o:?}");
    let data: Vec<Vec<u8>> = o.delivered.iter().map(|(_, d)| d.data.0.clone()).collect();
    assert_eq!(data, [b"early".to_vec()]);
    // Delivered once: a second pull gets only what is still kept.
    agreed_pull(&mut c, a, vec![p(1)], BOTH, 4);
    let o = out(&mut c, Command::IOF_PULL);
    assert!(o.delivered.is_empty(), "sent with the reply, before: {o:?}");
}

#[test]
fn the_cache_keeps_the_newest_output_up_to_its_bound() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    for i in 0..=iof::CACHE_LIMIT {
        deliver(&mut c, 1, STDOUT, i.to_string().as_bytes());
    }
    pull(&mut c, a, 120, vec![p(1)], STDOUT, 3);
    let o = out(&mut c, Command::IOF_PULL);
    c.handle_host(o.calls[0].0, HostResult::Status(Status::SUCCESS));
    let o = out(&mut c, Command::IOF_PULL);
    assert_eq!(o.delivered.len(), iof::CACHE_LIMIT);
    assert_eq!(o.delivered[0].1.data.0, b"1", "the oldest was dropped");
}

#[test]
fn the_cache_keeps_at_most_its_bytes() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    let big = vec![b'x'; iof::CACHE_BYTES / 2];
    for _ in 0..3 {
        deliver(&mut c, 1, STDOUT, &big);
    }
    deliver(&mut c, 1, STDOUT, b"last");
    pull(&mut c, a, 120, vec![p(1)], STDOUT, 3);
    let o = out(&mut c, Command::IOF_PULL);
    c.handle_host(o.calls[0].0, HostResult::Status(Status::SUCCESS));
    let sizes: Vec<usize> = (out(&mut c, Command::IOF_PULL).delivered.iter())
        .map(|(_, d)| d.data.0.len())
        .collect();
    assert_eq!(sizes, [big.len(), 4], "the two oldest were dropped");
}

#[test]
fn a_deregistered_pull_receives_nothing_more_and_the_host_is_told_to_stop() {
    let mut c = core_with(2);
    let (a, b) = (connect(&mut c, 0), connect(&mut c, 1));
    drain(&mut c);
    let id = agreed_pull(&mut c, a, vec![p(1)], STDOUT, 7);
    // Another process cannot end it.
    let dereg = Request::Op(Op::IofDeregister {
        directives: vec![],
        remote_id: id,
    });
    send(&mut c, b, 130, &dereg);
    let o = out(&mut c, Command::IOF_DEREG);
    assert!(o.calls.is_empty());
    assert!(
        matches!(
            &o.replies[..],
            [(
                _,
                130,
                Reply::Op(OpReply::Status {
                    status: Status::ERR_NOT_FOUND,
                    ..
                })
            )]
        ),
        "{o:?}"
    );
    send(&mut c, a, 131, &dereg);
    let o = out(&mut c, Command::IOF_DEREG);
    let [
        (
            op,
            HostCall::IofPull {
                procs,
                directives,
                channels,
            },
        ),
    ] = &o.calls[..]
    else {
        panic!("the host is told: {o:?}");
    };
    assert_eq!((procs, *channels), (&vec![p(1)], STDOUT));
    assert!(
        directives
            .iter()
            .any(|i| i.key.as_str() == crate::host::IOF_STOP)
    );
    c.handle_host(*op, HostResult::Status(Status::SUCCESS));
    deliver(&mut c, 1, STDOUT, b"after");
    let o = out(&mut c, Command::IOF_DEREG);
    assert!(
        matches!(
            &o.replies[..],
            [(
                _,
                131,
                Reply::Op(OpReply::Status {
                    status: Status::SUCCESS,
                    ..
                })
            )]
        ),
        "{o:?}"
    );
    assert!(o.delivered.is_empty(), "{o:?}");
}

#[test]
fn pushed_input_goes_to_the_host_with_its_source_and_the_hosts_status_comes_back() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    let push = Request::Op(Op::IofPush {
        targets: vec![p(1)],
        directives: vec![],
        data: Some(crate::model::ByteObject(b"input".to_vec())),
    });
    send(&mut c, a, 140, &push);
    let o = out(&mut c, Command::IOF_PUSH);
    let [
        (
            op,
            HostCall::PushStdin {
                source,
                targets,
                data,
                ..
            },
        ),
    ] = &o.calls[..]
    else {
        panic!("one push_stdin: {o:?}");
    };
    assert_eq!(
        (source, targets, data),
        (&p(0), &vec![p(1)], &Some(b"input".to_vec()))
    );
    c.handle_host(*op, HostResult::Status(Status::ERR_NOT_SUPPORTED));
    let o = out(&mut c, Command::IOF_PUSH);
    assert!(
        matches!(
            &o.replies[..],
            [(
                _,
                140,
                Reply::Op(OpReply::Status {
                    status: Status::ERR_NOT_SUPPORTED,
                    ..
                })
            )]
        ),
        "{o:?}"
    );
}

#[test]
fn a_pullers_closed_connection_ends_its_pulls() {
    let mut c = core_with(2);
    let a = connect(&mut c, 0);
    drain(&mut c);
    agreed_pull(&mut c, a, vec![p(1)], STDOUT, 7);
    c.handle_closed(a);
    drain(&mut c);
    deliver(&mut c, 1, STDOUT, b"kept");
    assert!(out(&mut c, Command::IOF_PULL).delivered.is_empty());
    assert_eq!(
        c.iof_deliver(p(1), IofChannel::STDIN_CHANNEL, vec![], vec![]),
        Err(Status::ERR_BAD_PARAM),
        "stdin is not output"
    );
}
