use super::*;
use crate::model::{DataArray, DataType};

const A: Status = Status(1001);
const B: Status = Status(1002);

fn me() -> Proc {
    Proc::try_new("job", 0).unwrap()
}

fn peer(rank: u32) -> Proc {
    Proc::try_new("job", rank).unwrap()
}

fn event(status: Status, info: Vec<Info>) -> Event {
    Event {
        status,
        source: peer(1),
        range: DataRange::NAMESPACE,
        info,
    }
}

fn named(name: &str) -> Info {
    Info::new(attr::EVENT_HDLR_NAME, name.to_owned())
}

fn procs(list: &[Proc]) -> DataArray {
    DataArray {
        data_type: DataType::PROC,
        elements: list.iter().cloned().map(Value::from).collect(),
    }
}

/// Register `name` for `codes` with extra infos; panics on refusal.
fn add(r: &mut Registry, name: &str, codes: &[Status], mut info: Vec<Info>) -> HandlerId {
    info.push(named(name));
    r.register(Registration::new(codes, &info).unwrap())
        .unwrap()
}

fn names(r: &Registry, chain: &[HandlerId]) -> Vec<String> {
    chain
        .iter()
        .map(|id| r.get(*id).unwrap().name.clone().unwrap())
        .collect()
}

#[test]
fn categories_run_single_then_multi_then_default_between_global_first_and_last() {
    let mut r = Registry::new();
    add(&mut r, "default", &[], vec![]);
    add(
        &mut r,
        "last",
        &[A],
        vec![Info::new(attr::EVENT_HDLR_LAST, true)],
    );
    add(&mut r, "multi", &[A, B], vec![]);
    add(&mut r, "single", &[A], vec![]);
    add(
        &mut r,
        "first",
        &[],
        vec![Info::new(attr::EVENT_HDLR_FIRST, true)],
    );
    let chain = r.chain(&me(), &event(A, vec![]));
    assert_eq!(
        names(&r, &chain),
        ["first", "single", "multi", "default", "last"]
    );
    // B reaches neither the single-code handler nor the global last (registered for A).
    let chain = r.chain(&me(), &event(B, vec![]));
    assert_eq!(names(&r, &chain), ["first", "multi", "default"]);
}

#[test]
fn placement_within_a_category() {
    let mut r = Registry::new();
    add(&mut r, "mid", &[A], vec![]);
    add(
        &mut r,
        "append",
        &[A],
        vec![Info::new(attr::EVENT_HDLR_APPEND, true)],
    );
    add(
        &mut r,
        "prepend",
        &[A],
        vec![Info::new(attr::EVENT_HDLR_PREPEND, true)],
    );
    let lastcat = Info::new(attr::EVENT_HDLR_LAST_IN_CATEGORY, true);
    add(&mut r, "lastcat", &[A], vec![lastcat]);
    let firstcat = Info::new(attr::EVENT_HDLR_FIRST_IN_CATEGORY, true);
    add(&mut r, "firstcat", &[A], vec![firstcat]);
    let before = Info::new(attr::EVENT_HDLR_BEFORE, "mid".to_owned());
    add(&mut r, "before", &[A], vec![before]);
    let after = Info::new(attr::EVENT_HDLR_AFTER, "mid".to_owned());
    add(&mut r, "after", &[A], vec![after]);
    let chain = r.chain(&me(), &event(A, vec![]));
    assert_eq!(
        names(&r, &chain),
        [
            "firstcat", "prepend", "before", "mid", "after", "append", "lastcat"
        ]
    );
}

#[test]
fn before_the_category_last_and_after_its_first() {
    let mut r = Registry::new();
    let lastcat = Info::new(attr::EVENT_HDLR_LAST_IN_CATEGORY, true);
    add(&mut r, "z", &[A], vec![lastcat]);
    let firstcat = Info::new(attr::EVENT_HDLR_FIRST_IN_CATEGORY, true);
    add(&mut r, "a", &[A], vec![firstcat]);
    add(&mut r, "m", &[A], vec![]);
    add(
        &mut r,
        "y",
        &[A],
        vec![Info::new(attr::EVENT_HDLR_BEFORE, "z".to_owned())],
    );
    add(
        &mut r,
        "b",
        &[A],
        vec![Info::new(attr::EVENT_HDLR_AFTER, "a".to_owned())],
    );
    let chain = r.chain(&me(), &event(A, vec![]));
    assert_eq!(names(&r, &chain), ["a", "b", "m", "y", "z"]);
}

#[test]
fn after_the_chains_first_and_before_its_last() {
    // OpenPMIx's hybrid test: a handler registered after the one that claimed the chain's
    // first place runs right after it.
    let mut r = Registry::new();
    add(
        &mut r,
        "f",
        &[A],
        vec![Info::new(attr::EVENT_HDLR_FIRST, true)],
    );
    add(
        &mut r,
        "l",
        &[A],
        vec![Info::new(attr::EVENT_HDLR_LAST, true)],
    );
    add(&mut r, "m", &[A], vec![]);
    add(
        &mut r,
        "after_f",
        &[A],
        vec![Info::new(attr::EVENT_HDLR_AFTER, "f".to_owned())],
    );
    add(
        &mut r,
        "before_l",
        &[A],
        vec![Info::new(attr::EVENT_HDLR_BEFORE, "l".to_owned())],
    );
    let chain = r.chain(&me(), &event(A, vec![]));
    assert_eq!(names(&r, &chain), ["f", "after_f", "m", "before_l", "l"]);
}

#[test]
fn second_claims_and_unknown_neighbours_are_refused_without_change() {
    let mut r = Registry::new();
    let first = || vec![Info::new(attr::EVENT_HDLR_FIRST, true), named("f")];
    r.register(Registration::new(&[A], &first()).unwrap())
        .unwrap();
    let again = r.register(Registration::new(&[B], &first()).unwrap());
    assert_eq!(again, Err(Status::ERR_EVENT_REGISTRATION));
    let cat = || vec![Info::new(attr::EVENT_HDLR_LAST_IN_CATEGORY, true)];
    r.register(Registration::new(&[A], &cat()).unwrap())
        .unwrap();
    let again = r.register(Registration::new(&[B], &cat()).unwrap());
    assert_eq!(again, Err(Status::ERR_EVENT_REGISTRATION));
    // A multi-code handler's category has no last yet.
    r.register(Registration::new(&[A, B], &cat()).unwrap())
        .unwrap();
    let nobody = vec![Info::new(attr::EVENT_HDLR_BEFORE, "nobody".to_owned())];
    let refused = r.register(Registration::new(&[A], &nobody).unwrap());
    assert_eq!(refused, Err(Status::ERR_EVENT_REGISTRATION));
    assert_eq!(r.chain(&me(), &event(A, vec![])).len(), 3);
}

#[test]
fn deregistration_frees_the_slot_and_refuses_an_unknown_id() {
    let mut r = Registry::new();
    let first = || vec![Info::new(attr::EVENT_HDLR_FIRST, true)];
    let id = r
        .register(Registration::new(&[A], &first()).unwrap())
        .unwrap();
    assert!(r.deregister(id).is_ok());
    assert_eq!(r.deregister(id), Err(Status::ERR_BAD_PARAM));
    assert!(r.chain(&me(), &event(A, vec![])).is_empty());
    let again = r.register(Registration::new(&[A], &first()).unwrap());
    assert!(again.is_ok_and(|new| new != id));
}

#[test]
fn contradictory_placements_are_a_bad_param() {
    let info = [
        Info::new(attr::EVENT_HDLR_FIRST, true),
        Info::new(attr::EVENT_HDLR_LAST, true),
    ];
    assert_eq!(Registration::new(&[A], &info), Err(Status::ERR_BAD_PARAM));
    // A flag set to false asks for nothing.
    let info = [
        Info::new(attr::EVENT_HDLR_FIRST, false),
        Info::new(attr::EVENT_HDLR_LAST, true),
    ];
    assert_eq!(
        Registration::new(&[A], &info).map(|r| r.placement),
        Ok(Placement::Last)
    );
}

#[test]
fn non_default_events_skip_default_handlers() {
    let mut r = Registry::new();
    add(&mut r, "default", &[], vec![]);
    add(&mut r, "single", &[A], vec![]);
    let e = event(A, vec![Info::new(attr::EVENT_NON_DEFAULT, true)]);
    assert_eq!(names(&r, &r.chain(&me(), &e)), ["single"]);
}

#[test]
fn affected_and_source_filters() {
    let mut r = Registry::new();
    let one = Info::new(attr::EVENT_AFFECTED_PROC, peer(2));
    add(&mut r, "affects-2", &[A], vec![one]);
    let many = Info::new(attr::EVENT_AFFECTED_PROCS, procs(&[peer(3), peer(4)]));
    add(&mut r, "affects-3-or-4", &[A], vec![many]);
    let from = Info::new(attr::EVENT_CUSTOM_RANGE, procs(&[peer(1)]));
    add(&mut r, "from-1", &[A], vec![from]);
    let wildcard = Proc::new(me().nspace, crate::model::Rank::WILDCARD);
    let job = Info::new(attr::EVENT_AFFECTED_PROC, wildcard);
    add(&mut r, "affects-job", &[A], vec![job]);

    let about = |p: Proc| event(A, vec![Info::new(attr::EVENT_AFFECTED_PROC, p)]);
    assert_eq!(
        names(&r, &r.chain(&me(), &about(peer(2)))),
        ["affects-2", "from-1", "affects-job"]
    );
    let list = Info::new(attr::EVENT_AFFECTED_PROCS, procs(&[peer(9), peer(4)]));
    assert_eq!(
        names(&r, &r.chain(&me(), &event(A, vec![list]))),
        ["affects-3-or-4", "from-1", "affects-job"]
    );
    // An event naming no affected process passes only the unfiltered handler.
    let mut e = event(A, vec![]);
    assert_eq!(names(&r, &r.chain(&me(), &e)), ["from-1"]);
    e.source = peer(5);
    assert!(r.chain(&me(), &e).is_empty());
}

#[test]
fn registration_range_limits_the_sources() {
    let mut r = Registry::new();
    let ns = Info::new(attr::RANGE, DataRange::NAMESPACE);
    add(&mut r, "namespace", &[A], vec![ns]);
    let local = Info::new(attr::RANGE, DataRange::PROC_LOCAL);
    add(&mut r, "own", &[A], vec![local]);
    let mut e = event(A, vec![]);
    assert_eq!(names(&r, &r.chain(&me(), &e)), ["namespace"]);
    e.source = me();
    assert_eq!(names(&r, &r.chain(&me(), &e)), ["namespace", "own"]);
    e.source = Proc::try_new("other", 0).unwrap();
    assert!(r.chain(&me(), &e).is_empty());
}

#[test]
fn ranges_reach_their_processes() {
    let mut e = event(A, vec![]);
    let other = Proc::try_new("other", 0).unwrap();
    assert!(e.reaches(&me()) && !e.reaches(&other));
    e.range = DataRange::SESSION;
    assert!(e.reaches(&other));
    e.range = DataRange::PROC_LOCAL;
    assert!(e.reaches(&peer(1)) && !e.reaches(&me()));
    e.range = DataRange::RM;
    assert!(!e.reaches(&peer(1)));
    e.range = DataRange::CUSTOM;
    assert_eq!(e.check(), Err(Status::ERR_BAD_PARAM));
    e.info = vec![Info::new(
        attr::EVENT_CUSTOM_RANGE,
        procs(std::slice::from_ref(&other)),
    )];
    assert_eq!(e.check(), Ok(()));
    assert!(e.reaches(&other) && !e.reaches(&me()));
    e.range = DataRange(42);
    assert_eq!(e.check(), Err(Status::ERR_BAD_PARAM));
}

#[test]
fn the_chain_accumulates_results_and_stops_on_action_complete() {
    let e = event(A, vec![]);
    let mut chain = Chain::new(e, vec![7, 8, 9]);
    assert_eq!(chain.next_handler(), Some(7));
    chain.handler_done(Status::SUCCESS, vec![named("from-7")]);
    assert_eq!(chain.next_handler(), Some(8));
    assert_eq!(chain.results, vec![named("from-7")]);
    chain.handler_done(Status::EVENT_ACTION_COMPLETE, vec![named("from-8")]);
    assert_eq!(chain.next_handler(), None);
    assert_eq!(chain.results.len(), 2);
}

#[test]
fn an_accepted_invitation_is_the_librarys_and_reaches_only_a_handler_registered_for_it() {
    let mut r = Registry::new();
    add(&mut r, "default", &[], vec![]);
    let accepted = Status::GROUP_INVITE_ACCEPTED;
    assert!(r.chain(&me(), &event(accepted, vec![])).is_empty());
    add(&mut r, "mine", &[accepted], vec![]);
    let chain = r.chain(&me(), &event(accepted, vec![]));
    assert_eq!(names(&r, &chain), ["mine"]);
}
