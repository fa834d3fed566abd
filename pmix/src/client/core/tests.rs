//! The client's rules and protocol without a server: each test plays the server's part by
//! reading the frames the core writes and feeding it the bytes of a reply.

use super::*;
use crate::store::jobinfo::{get_reply_job_data, job_info_kvals};
use crate::wire::frame::HEADER_LEN;
use crate::wire::ops::Op;
use crate::wire::{Header, ProcData};

const BT: BufferType = BufferType::NonDescribed;
const PINDEX: i32 = 7;

fn me() -> Proc {
    Proc::try_new("job", 0).unwrap()
}

fn peer(rank: u32) -> Proc {
    Proc::try_new("job", rank).unwrap()
}

fn core() -> ClientCore {
    ClientCore::new(me(), BT, PINDEX)
}

/// The request a frame the core wrote carries, with the frame's header.
fn written(frame: &[u8]) -> (Header, Request) {
    let header = Header::decode(frame[..HEADER_LEN].try_into().unwrap());
    assert_eq!(header.nbytes as usize, frame.len() - HEADER_LEN);
    let req = Request::decode(&frame[HEADER_LEN..], BT).expect("the core writes requests");
    (header, req)
}

/// The bytes of the server's reply under `tag`.
fn reply_bytes(tag: Tag, reply: &Reply) -> Vec<u8> {
    let payload = reply.encode(BT).unwrap();
    Frame {
        pindex: 0,
        tag,
        payload,
    }
    .encode()
    .unwrap()
}

fn kval(key: &str, value: Value) -> Kval {
    Kval {
        key: Key::new(key).unwrap(),
        value,
    }
}

/// Send `req` and answer it with `reply`: the reply the core completes.
fn round_trip(core: &mut ClientCore, req: &Request, reply: &Reply) -> Result<Reply, Status> {
    let tag = core.send_request(req).unwrap();
    assert!(core.poll_transmit().is_some());
    core.handle_bytes(&reply_bytes(tag, reply));
    let (done, r) = core.poll_reply().expect("the reply completes its request");
    assert_eq!(done, tag);
    r
}

#[test]
fn a_put_is_read_back_without_asking_the_server() {
    let mut c = core();
    c.put(Scope::GLOBAL, "mine", Value::Uint32(5)).unwrap();
    match c.get_start(&me(), "mine", &[]) {
        GetStart::Done(r) => assert_eq!(r, Ok(Value::Uint32(5))),
        GetStart::Ask(req) => panic!("asked the server: {req:?}"),
    }
    assert!(c.poll_transmit().is_none());
}

#[test]
fn a_commit_sends_only_what_was_put_since_the_last() {
    let mut c = core();
    c.put(Scope::LOCAL, "l", Value::Uint32(1)).unwrap();
    c.put(Scope::REMOTE, "r", Value::Uint32(2)).unwrap();
    c.put(Scope::GLOBAL, "g", Value::Uint32(3)).unwrap();
    c.put(Scope::INTERNAL, "i", Value::Uint32(4)).unwrap();
    let Some(Request::Commit { buckets }) = c.take_commit() else {
        panic!("a commit of what was put");
    };
    let keys = |scope: Scope| -> Vec<String> {
        let bucket = buckets.iter().find(|b| b.scope == scope).unwrap();
        bucket
            .kvals
            .iter()
            .map(|k| k.key.as_str().to_owned())
            .collect()
    };
    // A global value goes in both buckets; an internal one in none.
    assert_eq!(keys(Scope::LOCAL), ["l", "g"]);
    assert_eq!(keys(Scope::REMOTE), ["r", "g"]);
    assert!(c.take_commit().is_none(), "nothing new to commit");
    c.put(Scope::REMOTE, "later", Value::Uint32(5)).unwrap();
    let Some(Request::Commit { buckets }) = c.take_commit() else {
        panic!("a commit of the new value");
    };
    assert_eq!(buckets.len(), 1);
    assert_eq!(buckets[0].kvals, [kval("later", Value::Uint32(5))]);
}

#[test]
fn a_value_put_twice_is_committed_once_with_its_last_value() {
    let mut c = core();
    c.put(Scope::GLOBAL, "k", Value::Uint32(1)).unwrap();
    c.put(Scope::GLOBAL, "k", Value::Uint32(2)).unwrap();
    let Some(Request::Commit { buckets }) = c.take_commit() else {
        panic!("a commit");
    };
    for b in &buckets {
        assert_eq!(b.kvals, [kval("k", Value::Uint32(2))]);
    }
}

#[test]
fn reserved_and_invalid_keys_are_refused_before_any_request() {
    let mut c = core();
    assert_eq!(
        c.put(Scope::GLOBAL, "pmix.mine", Value::Uint32(1)),
        Err(Status::ERR_BAD_PARAM)
    );
    let long = "k".repeat(600);
    assert!(matches!(
        c.get_start(&peer(1), &long, &[]),
        GetStart::Done(Err(Status::ERR_BAD_PARAM))
    ));
    assert!(c.poll_transmit().is_none());
}

#[test]
fn a_request_is_framed_with_the_index_and_a_tag_of_its_own() {
    let mut c = core();
    let fence = Request::Fence {
        procs: vec![Proc::new(me().nspace, crate::model::Rank::WILDCARD)],
        info: Vec::new(),
    };
    let t1 = c.send_request(&fence).unwrap();
    let t2 = c.send_request(&fence).unwrap();
    assert_ne!(t1, t2);
    assert!(t1.is_dynamic() && t2.is_dynamic());
    for tag in [t1, t2] {
        let (header, req) = written(&c.poll_transmit().unwrap());
        assert_eq!((header.pindex, header.tag), (PINDEX, tag));
        assert_eq!(req, fence);
    }
    assert!(c.poll_transmit().is_none());
}

#[test]
fn a_reply_completes_its_request_once_all_its_bytes_are_in() {
    let mut c = core();
    let tag = c.send_request(&Request::Finalize).unwrap();
    let bytes = reply_bytes(tag, &Reply::Status(Status::SUCCESS));
    let (first, rest) = bytes.split_at(HEADER_LEN + 1);
    c.handle_bytes(first);
    assert!(c.poll_reply().is_none(), "half a frame completes nothing");
    c.handle_bytes(rest);
    assert_eq!(
        c.poll_reply(),
        Some((tag, Ok(Reply::Status(Status::SUCCESS))))
    );
}

#[test]
fn a_reply_under_a_tag_no_request_waits_for_is_dropped() {
    let mut c = core();
    c.handle_bytes(&reply_bytes(Tag(4242), &Reply::Status(Status::SUCCESS)));
    assert!(c.poll_reply().is_none());
    assert!(!c.is_lost());
}

#[test]
fn tags_start_again_above_the_reserved_ones_and_skip_those_in_use() {
    let mut c = core();
    let first = c.send_request(&Request::Finalize).unwrap();
    assert_eq!(first, Tag::FIRST_DYNAMIC);
    c.next_tag = u32::MAX;
    assert_eq!(c.send_request(&Request::Finalize).unwrap(), Tag(u32::MAX));
    // Past the last tag: back to the first dynamic one, which is still waiting.
    assert_eq!(
        c.send_request(&Request::Finalize).unwrap(),
        Tag(Tag::FIRST_DYNAMIC.0 + 1)
    );
}

#[test]
fn a_get_answer_is_kept_for_the_next_get() {
    let mut c = core();
    let GetStart::Ask(req) = c.get_start(&peer(1), "k", &[]) else {
        panic!("a value of another process is asked for");
    };
    let answer = Reply::Get {
        status: Status::SUCCESS,
        data: vec![ProcData {
            proc: peer(1),
            kvals: vec![kval("k", Value::Uint32(1)), kval("other", Value::Uint32(2))],
        }],
    };
    let reply = round_trip(&mut c, &req, &answer);
    assert_eq!(c.get_finish("k", &[], reply), Ok(Value::Uint32(1)));
    // The server sent all of the process's values: the next get is answered here.
    match c.get_start(&peer(1), "other", &[]) {
        GetStart::Done(r) => assert_eq!(r, Ok(Value::Uint32(2))),
        GetStart::Ask(req) => panic!("asked again: {req:?}"),
    }
}

#[test]
fn a_get_the_server_refuses_returns_its_status() {
    let mut c = core();
    let GetStart::Ask(req) = c.get_start(&peer(1), "k", &[]) else {
        panic!("asked");
    };
    let answer = Reply::Get {
        status: Status::ERR_NOT_FOUND,
        data: Vec::new(),
    };
    let reply = round_trip(&mut c, &req, &answer);
    assert_eq!(c.get_finish("k", &[], reply), Err(Status::ERR_NOT_FOUND));
}

#[test]
fn the_job_information_is_filed_into_realms() {
    let mut realms = JobRealms::new(me().nspace);
    realms.register(&[Info::new(attr::JOB_SIZE, 4)]);
    let kvals = job_info_kvals(&realms, BT, "test").unwrap();
    let mut c = core();
    let reply = Reply::JobInfo {
        nspace: me().nspace,
        kvals,
    };
    c.job_info_received(reply).unwrap();
    let job = Proc::new(me().nspace, crate::model::Rank::WILDCARD);
    match c.get_start(&job, attr::JOB_SIZE.wire_key(), &[]) {
        GetStart::Done(r) => assert_eq!(r, Ok(Value::Uint32(4))),
        GetStart::Ask(req) => panic!("a reserved key of this job asked for: {req:?}"),
    }
    // A reserved key this job's information lacks is not found, without asking (R-02).
    match c.get_start(&job, attr::UNIV_SIZE.wire_key(), &[]) {
        GetStart::Done(r) => assert_eq!(r, Err(Status::ERR_NOT_FOUND)),
        GetStart::Ask(req) => panic!("asked: {req:?}"),
    }
}

#[test]
fn another_jobs_information_in_a_get_answer_is_kept() {
    let other = Nspace::new("other").unwrap();
    let mut realms = JobRealms::new(other.clone());
    realms.register(&[Info::new(attr::JOB_SIZE, 9)]);
    let mut c = core();
    let target = Proc::new(other.clone(), crate::model::Rank(0));
    let GetStart::Ask(req) = c.get_start(&target, "k", &[]) else {
        panic!("asked");
    };
    let answer = Reply::Get {
        status: Status::SUCCESS,
        data: vec![
            get_reply_job_data(&realms),
            ProcData {
                proc: target.clone(),
                kvals: vec![kval("k", Value::Uint32(1))],
            },
        ],
    };
    let reply = round_trip(&mut c, &req, &answer);
    assert_eq!(c.get_finish("k", &[], reply), Ok(Value::Uint32(1)));
    assert!(c.job_realms("other").is_some());
    let job = Proc::new(other, crate::model::Rank::WILDCARD);
    match c.get_start(&job, attr::JOB_SIZE.wire_key(), &[]) {
        GetStart::Done(r) => assert_eq!(r, Ok(Value::Uint32(9))),
        GetStart::Ask(req) => panic!("asked: {req:?}"),
    }
}

#[test]
fn a_lost_connection_fails_every_waiting_request_and_raises_the_event() {
    let mut c = core();
    let t1 = c.send_request(&Request::Finalize).unwrap();
    let t2 = c.send_request(&Request::JobInfo).unwrap();
    c.handle_lost();
    let mut failed: Vec<(Tag, Result<Reply, Status>)> =
        std::iter::from_fn(|| c.poll_reply()).collect();
    failed.sort_by_key(|(t, _)| t.0);
    assert_eq!(
        failed,
        [
            (t1, Err(Status::ERR_LOST_CONNECTION)),
            (t2, Err(Status::ERR_LOST_CONNECTION))
        ]
    );
    let event = c.poll_event().expect("the process hears of it");
    assert_eq!(event.status, Status::ERR_LOST_CONNECTION);
    assert_eq!(event.range, DataRange::PROC_LOCAL);
    assert!(c.poll_transmit().is_none(), "nothing left to write");
    assert_eq!(
        c.send_request(&Request::Finalize),
        Err(Status::ERR_LOST_CONNECTION)
    );
    c.handle_lost();
    assert!(c.poll_event().is_none(), "the loss is raised once");
}

#[test]
fn an_event_the_server_pushes_is_queued() {
    let mut c = core();
    let n = Notification {
        status: Status::ERR_PROC_ABORTED,
        source: peer(3),
        info: vec![Info::new(attr::EXIT_CODE, 2)],
        range: DataRange::SESSION,
    };
    let bytes = Frame {
        pindex: 0,
        tag: Tag::NOTIFY,
        payload: n.encode(BT).unwrap(),
    }
    .encode()
    .unwrap();
    c.handle_bytes(&bytes);
    let event = c.poll_event().expect("an event");
    assert_eq!(
        (event.status, event.source, event.range),
        (Status::ERR_PROC_ABORTED, peer(3), DataRange::SESSION)
    );
    assert_eq!(event.info, n.info);
}

#[test]
fn a_notification_that_does_not_decode_is_dropped_and_the_connection_stays() {
    let mut c = core();
    let bytes = Frame {
        pindex: 0,
        tag: Tag::NOTIFY,
        payload: vec![0xff; 3],
    }
    .encode()
    .unwrap();
    c.handle_bytes(&bytes);
    assert!(c.poll_event().is_none());
    assert!(!c.is_lost());
}

#[test]
fn a_stream_that_does_not_frame_ends_the_connection() {
    let mut c = core();
    let tag = c.send_request(&Request::Finalize).unwrap();
    // A header announcing more than any frame may hold.
    let header = Header {
        pindex: 0,
        tag,
        nbytes: u32::MAX,
    };
    c.handle_bytes(&header.encode());
    assert!(c.is_lost());
    assert_eq!(
        c.poll_reply(),
        Some((tag, Err(Status::ERR_LOST_CONNECTION)))
    );
}

#[test]
fn a_heartbeat_is_an_empty_frame_under_its_tag() {
    let mut c = core();
    c.send_heartbeat().unwrap();
    let frame = c.poll_transmit().unwrap();
    let header = Header::decode(frame[..HEADER_LEN].try_into().unwrap());
    assert_eq!((header.tag, header.nbytes), (Tag::HEARTBEAT, 0));
}

// --- event handlers ---

/// The identifiers of the chain `event` walks, in order.
fn chain_ids(c: &ClientCore, event: Event) -> Vec<crate::events::HandlerId> {
    let mut chain = c.event_chain(event);
    std::iter::from_fn(|| chain.next_handler()).collect()
}

fn event(status: Status, source: Proc, range: DataRange) -> Event {
    Event {
        status,
        source,
        range,
        info: Vec::new(),
    }
}

#[test]
fn a_registration_is_placed_and_tells_the_server() {
    let mut c = core();
    let info = [Info::new(attr::EVENT_HDLR_NAME, "mine".to_owned())];
    let (id, req) = c
        .register_events(&[Status::ERR_PROC_ABORTED], &info)
        .unwrap();
    assert_eq!(
        req,
        Request::RegisterEvents {
            codes: vec![Status::ERR_PROC_ABORTED],
            info: info.to_vec()
        }
    );
    assert_eq!(c.handler_name(id), Some(Some("mine")));
    let aborted = event(Status::ERR_PROC_ABORTED, peer(1), DataRange::SESSION);
    assert_eq!(chain_ids(&c, aborted), [id]);
    let other = event(Status::ERR_TIMEOUT, peer(1), DataRange::SESSION);
    assert!(chain_ids(&c, other).is_empty(), "a code it did not ask for");
}

#[test]
fn contradictory_placements_are_refused_and_nothing_is_registered() {
    let mut c = core();
    let info = [
        Info::new(attr::EVENT_HDLR_FIRST, true),
        Info::new(attr::EVENT_HDLR_LAST, true),
    ];
    assert_eq!(
        c.register_events(&[], &info).map(|(id, _)| id),
        Err(Status::ERR_BAD_PARAM)
    );
    let any = event(Status::ERR_PROC_ABORTED, peer(1), DataRange::SESSION);
    assert!(chain_ids(&c, any).is_empty());
}

#[test]
fn a_refused_or_deregistered_handler_leaves_the_chain() {
    let mut c = core();
    let (refused, _) = c.register_events(&[], &[]).unwrap();
    let (kept, _) = c.register_events(&[], &[]).unwrap();
    c.registration_refused(refused);
    let any = || event(Status::ERR_PROC_ABORTED, peer(1), DataRange::SESSION);
    assert_eq!(chain_ids(&c, any()), [kept]);
    assert_eq!(c.handler_name(refused), None);
    let req = c.deregister_events(kept).unwrap();
    assert_eq!(req, Request::Op(Op::DeregisterEvents { codes: Vec::new() }));
    assert!(chain_ids(&c, any()).is_empty());
    // An identifier this process does not hold (§10.1.7).
    assert_eq!(c.deregister_events(kept), Err(Status::ERR_BAD_PARAM));
}

#[test]
fn the_chain_runs_single_code_then_multi_code_then_default_handlers() {
    let mut c = core();
    let (default, _) = c.register_events(&[], &[]).unwrap();
    let codes = [Status::ERR_PROC_ABORTED, Status::ERR_TIMEOUT];
    let (multi, _) = c.register_events(&codes, &[]).unwrap();
    let (single, _) = c.register_events(&[Status::ERR_PROC_ABORTED], &[]).unwrap();
    let aborted = event(Status::ERR_PROC_ABORTED, peer(1), DataRange::SESSION);
    assert_eq!(chain_ids(&c, aborted), [single, multi, default]);
    c.clear_handlers();
    let aborted = event(Status::ERR_PROC_ABORTED, peer(1), DataRange::SESSION);
    assert!(chain_ids(&c, aborted).is_empty(), "finalize forgets them");
}

#[test]
fn a_proc_local_notification_stays_in_the_process() {
    let mut c = core();
    let plan = c
        .notify(Status::ERR_PROC_ABORTED, None, DataRange::PROC_LOCAL, &[])
        .unwrap();
    assert_eq!(plan.request, None);
    let local = plan.local.expect("this process's own handlers hear it");
    assert_eq!(local.source, me());
}

#[test]
fn a_wider_notification_goes_to_the_server_and_to_this_process_when_in_range() {
    let mut c = core();
    let plan = c
        .notify(Status::ERR_PROC_ABORTED, None, DataRange::NAMESPACE, &[])
        .unwrap();
    assert!(matches!(plan.request, Some(Request::Notify { .. })));
    assert!(plan.local.is_some(), "this process is in its own namespace");
    // From a process of another job, to that job's namespace: not this process.
    let stranger = Proc::try_new("other", 0).unwrap();
    let plan = c
        .notify(
            Status::ERR_PROC_ABORTED,
            Some(&stranger),
            DataRange::NAMESPACE,
            &[],
        )
        .unwrap();
    assert!(plan.request.is_some());
    assert_eq!(plan.local, None);
    // An unknown range is refused before anything is sent.
    assert_eq!(
        c.notify(Status::ERR_PROC_ABORTED, None, DataRange::INVALID, &[]),
        Err(Status::ERR_BAD_PARAM)
    );
}

#[test]
fn a_handler_registered_later_is_handed_the_processs_own_events_it_accepts() {
    let mut c = core();
    let raise = |c: &mut ClientCore, status: Status, info: &[Info]| {
        let plan = c.notify(status, None, DataRange::PROC_LOCAL, info);
        plan.unwrap().local.expect("heard here")
    };
    let declared = raise(&mut c, Status::MODEL_DECLARED, &[]);
    raise(&mut c, Status::ERR_TIMEOUT, &[]);
    let unkept = [Info::new(attr::EVENT_DO_NOT_CACHE, true)];
    raise(&mut c, Status::MODEL_DECLARED, &unkept);
    // From another process, through the server: the server's cache is the one for those.
    let theirs = event(Status::MODEL_DECLARED, peer(1), DataRange::SESSION);
    c.events.push_back(theirs);
    let (id, _) = c.register_events(&[Status::MODEL_DECLARED], &[]).unwrap();
    assert_eq!(c.kept_events_for(id), std::slice::from_ref(&declared));
    assert!(c.kept_events_for(id).is_empty(), "handed once");
    // Every later registration is handed them, not only the first.
    let (again, _) = c.register_events(&[Status::MODEL_DECLARED], &[]).unwrap();
    assert_eq!(c.kept_events_for(again), std::slice::from_ref(&declared));
    // An event raised after a registration is that handler's at once, and not again.
    let plan = c.notify(Status::MODEL_DECLARED, None, DataRange::PROC_LOCAL, &[]);
    assert_eq!(plan.unwrap().handlers, [id, again]);
    assert!(c.kept_events_for(id).is_empty());
}

#[test]
fn only_the_newest_of_a_processs_own_events_are_kept() {
    let mut c = core();
    for n in 0..=KEPT_EVENTS {
        let info = [Info::new(attr::EVENT_TEXT_MESSAGE, format!("n{n}"))];
        c.notify(Status::ERR_TIMEOUT, None, DataRange::PROC_LOCAL, &info)
            .unwrap();
    }
    let (id, _) = c.register_events(&[], &[]).unwrap();
    let kept = c.kept_events_for(id);
    assert_eq!(kept.len(), KEPT_EVENTS);
    let first = kept[0].info[0].value.as_str().map(str::to_owned);
    assert_eq!(first.as_deref(), Some("n1"), "the oldest was dropped");
}

#[test]
fn a_reserved_key_is_put_only_when_the_client_accepts_them_as_openpmix_does() {
    let mut c = core();
    let hostname = || Value::String(Some("node1".into()));
    assert_eq!(
        c.put(Scope::LOCAL, "pmix.hname", hostname()),
        Err(Status::ERR_BAD_PARAM),
        "rule P-01"
    );
    c.accept_reserved_puts(true);
    c.put(Scope::LOCAL, "pmix.hname", hostname()).unwrap();
    let Some(Request::Commit { buckets }) = c.take_commit() else {
        panic!("a commit of the reserved key");
    };
    assert_eq!(buckets[0].kvals, [kval("pmix.hname", hostname())]);
    // The scope is still checked (P-02).
    assert_eq!(
        c.put(Scope(9), "pmix.hname", hostname()),
        Err(Status::ERR_NOT_SUPPORTED)
    );
}
