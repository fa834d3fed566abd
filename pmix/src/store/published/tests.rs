use super::*;
use crate::model::{DataArray, DataType, Nspace};

fn p(ns: &str, r: u32) -> Proc {
    Proc::try_new(ns, r).unwrap()
}

fn datum(key: &str) -> Info {
    Info::with_key(key, Value::Uint32(7)).unwrap()
}

fn keys(k: &[&str]) -> Vec<String> {
    k.iter().map(|s| (*s).to_owned()).collect()
}

/// Every process on one node.
struct OneNode;

impl Topology for OneNode {
    fn same_node(&self, _: &Proc, _: &Proc) -> bool {
        true
    }
}

/// Processes of namespace "a" on node 0, the others on node 1.
struct TwoNodes;

impl Topology for TwoNodes {
    fn same_node(&self, a: &Proc, b: &Proc) -> bool {
        (a.nspace.as_str() == "a") == (b.nspace.as_str() == "a")
    }
}

#[test]
fn ranges_decide_who_finds_the_data() {
    let mut s = Published::default();
    let publish = |s: &mut Published, key: &str, range: DataRange| {
        s.publish(&p("a", 0), &[datum(key), Info::new(attr::RANGE, range)])
    };
    publish(&mut s, "own", DataRange::PROC_LOCAL).unwrap();
    publish(&mut s, "node", DataRange::LOCAL).unwrap();
    publish(&mut s, "job", DataRange::NAMESPACE).unwrap();
    publish(&mut s, "all", DataRange::SESSION).unwrap();
    let found = |s: &mut Published, who: Proc| -> Vec<String> {
        s.lookup(&who, &keys(&["own", "node", "job", "all"]), &[], &TwoNodes)
            .map(|d| d.into_iter().map(|x| x.key.as_str().to_owned()).collect())
            .unwrap_or_default()
    };
    assert_eq!(found(&mut s, p("a", 0)), ["own", "node", "job", "all"]);
    assert_eq!(found(&mut s, p("a", 1)), ["node", "job", "all"]);
    assert_eq!(found(&mut s, p("b", 0)), ["all"]);
}

#[test]
fn a_lookup_range_constrains_where_the_publisher_is_not_how_widely_it_published() {
    // v5.0 §9.8 step 1: the publisher must fall within the lookup's range; step 3 still
    // requires the requester to fall within the publisher's.
    let mut s = Published::default();
    let publish = |s: &mut Published, key: &str, range: DataRange| {
        s.publish(&p("a", 0), &[datum(key), Info::new(attr::RANGE, range)])
    };
    publish(&mut s, "own", DataRange::PROC_LOCAL).unwrap();
    publish(&mut s, "job", DataRange::NAMESPACE).unwrap();
    publish(&mut s, "all", DataRange::SESSION).unwrap();
    publish(&mut s, "everywhere", DataRange::GLOBAL).unwrap();
    let found = |s: &mut Published, who: Proc, range: DataRange| -> Vec<String> {
        let info = [Info::new(attr::RANGE, range)];
        let all = keys(&["own", "job", "all", "everywhere"]);
        s.lookup(&who, &all, &info, &TwoNodes)
            .map(|d| d.into_iter().map(|x| x.key.as_str().to_owned()).collect())
            .unwrap_or_default()
    };
    let of_a0 = ["own", "job", "all", "everywhere"];
    let seen_by_a1 = ["job", "all", "everywhere"];
    assert_eq!(found(&mut s, p("a", 0), DataRange::PROC_LOCAL), of_a0);
    assert_eq!(found(&mut s, p("a", 0), DataRange::LOCAL), of_a0);
    assert_eq!(found(&mut s, p("a", 1), DataRange::LOCAL), seen_by_a1);
    assert_eq!(found(&mut s, p("a", 1), DataRange::NAMESPACE), seen_by_a1);
    assert_eq!(found(&mut s, p("a", 1), DataRange::SESSION), seen_by_a1);
    assert_eq!(found(&mut s, p("a", 1), DataRange::GLOBAL), seen_by_a1);
    // The publisher is not the requester, nor on its node, nor in its job.
    assert!(found(&mut s, p("a", 1), DataRange::PROC_LOCAL).is_empty());
    assert!(found(&mut s, p("b", 0), DataRange::LOCAL).is_empty());
    assert!(found(&mut s, p("b", 0), DataRange::NAMESPACE).is_empty());
    assert_eq!(
        found(&mut s, p("b", 0), DataRange::SESSION),
        ["all", "everywhere"]
    );
    // Only the host environment publishes on PMIX_RANGE_RM.
    assert!(found(&mut s, p("a", 0), DataRange::RM).is_empty());
}

#[test]
fn a_custom_lookup_range_searches_the_listed_publishers() {
    let mut s = Published::default();
    s.publish(&p("a", 0), &[datum("k")]).unwrap();
    let custom = |listed: Proc| {
        [
            Info::new(attr::RANGE, DataRange::CUSTOM),
            Info::with_key(attr::EVENT_CUSTOM_RANGE.wire_key(), Value::Proc(listed)).unwrap(),
        ]
    };
    assert!(
        s.lookup(&p("b", 0), &keys(&["k"]), &custom(p("a", 0)), &OneNode)
            .is_ok()
    );
    assert_eq!(
        s.lookup(&p("b", 0), &keys(&["k"]), &custom(p("a", 1)), &OneNode)
            .err(),
        Some(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn data_for_the_host_environment_is_not_found_by_processes() {
    let mut s = Published::default();
    s.publish(
        &p("a", 0),
        &[datum("k"), Info::new(attr::RANGE, DataRange::RM)],
    )
    .unwrap();
    assert_eq!(
        s.lookup(&p("a", 0), &keys(&["k"]), &[], &OneNode).err(),
        Some(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn custom_range_admits_the_listed_processes() {
    let mut s = Published::default();
    let listed = DataArray {
        data_type: DataType::PROC,
        elements: vec![Value::Proc(Proc::new(
            Nspace::new("b").unwrap(),
            crate::model::Rank::WILDCARD,
        ))],
    };
    s.publish(
        &p("a", 0),
        &[
            datum("k"),
            Info::new(attr::RANGE, DataRange::CUSTOM),
            Info::with_key(
                attr::EVENT_CUSTOM_RANGE.wire_key(),
                Value::DataArray(Box::new(listed)),
            )
            .unwrap(),
        ],
    )
    .unwrap();
    assert!(s.lookup(&p("b", 3), &keys(&["k"]), &[], &OneNode).is_ok());
    assert_eq!(
        s.lookup(&p("c", 0), &keys(&["k"]), &[], &OneNode).err(),
        Some(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn duplicates_are_per_range_and_publish_all_or_nothing() {
    let mut s = Published::default();
    s.publish(&p("a", 0), &[datum("k")]).unwrap();
    assert_eq!(
        s.publish(&p("a", 1), &[datum("new"), datum("k")]),
        Err(Status::ERR_DUPLICATE_KEY)
    );
    assert_eq!(
        s.lookup(&p("a", 0), &keys(&["new"]), &[], &OneNode).err(),
        Some(Status::ERR_NOT_FOUND)
    );
    // The same key on another range is another datum.
    let local = Info::new(attr::RANGE, DataRange::LOCAL);
    s.publish(&p("a", 1), &[datum("k"), local.clone()]).unwrap();
    // Unpublish touches the requester's data on the range it names (default SESSION).
    s.unpublish(&p("a", 1), &keys(&["k"]), &[]);
    assert_eq!(
        s.lookup(&p("a", 0), &keys(&["k"]), &[], &OneNode)
            .unwrap()
            .len(),
        1
    );
    s.unpublish(&p("a", 1), &[], std::slice::from_ref(&local));
    s.unpublish(&p("a", 0), &[], &[]);
    assert!(s.lookup(&p("a", 0), &keys(&["k"]), &[], &OneNode).is_err());
}

#[test]
fn persistence_decides_how_long_data_stays() {
    let mut s = Published::default();
    let with = |p: Persistence| Info::new(attr::PERSISTENCE, p);
    s.publish(&p("a", 0), &[datum("once"), with(Persistence::FIRST_READ)])
        .unwrap();
    s.publish(&p("a", 0), &[datum("proc"), with(Persistence::PROC)])
        .unwrap();
    s.publish(&p("a", 0), &[datum("app")]).unwrap();
    s.publish(&p("a", 0), &[datum("session"), with(Persistence::SESSION)])
        .unwrap();
    assert!(
        s.lookup(&p("a", 1), &keys(&["once"]), &[], &OneNode)
            .is_ok()
    );
    assert!(
        s.lookup(&p("a", 1), &keys(&["once"]), &[], &OneNode)
            .is_err()
    );
    s.process_ended(&p("a", 0));
    assert!(
        s.lookup(&p("a", 1), &keys(&["proc"]), &[], &OneNode)
            .is_err()
    );
    assert!(s.lookup(&p("a", 1), &keys(&["app"]), &[], &OneNode).is_ok());
    s.job_ended(&Nspace::new("a").unwrap());
    assert!(
        s.lookup(&p("b", 0), &keys(&["app"]), &[], &OneNode)
            .is_err()
    );
    assert!(
        s.lookup(&p("b", 0), &keys(&["session"]), &[], &OneNode)
            .is_ok()
    );
}

#[test]
fn access_permissions_admit_the_listed_users_and_the_publisher() {
    let mut s = Published::default();
    let perms = DataArray {
        data_type: DataType::INFO,
        elements: vec![Value::Info(Box::new(
            Info::with_key(
                attr::ACCESS_USERIDS.wire_key(),
                Value::DataArray(Box::new(DataArray {
                    data_type: DataType::UINT32,
                    elements: vec![Value::Uint32(2000)],
                })),
            )
            .unwrap(),
        ))],
    };
    s.publish(
        &p("a", 0),
        &[
            datum("k"),
            Info::with_key(
                attr::ACCESS_PERMISSIONS.wire_key(),
                Value::DataArray(Box::new(perms)),
            )
            .unwrap(),
            Info::new(attr::USERID, 1000u32),
        ],
    )
    .unwrap();
    let as_user = |u: u32| [Info::new(attr::USERID, u)];
    assert!(
        s.lookup(&p("a", 1), &keys(&["k"]), &as_user(2000), &OneNode)
            .is_ok()
    );
    assert!(
        s.lookup(&p("a", 1), &keys(&["k"]), &as_user(1000), &OneNode)
            .is_ok()
    );
    assert_eq!(
        s.lookup(&p("a", 1), &keys(&["k"]), &as_user(3000), &OneNode)
            .err(),
        Some(Status::ERR_NO_PERMISSIONS)
    );
}

#[test]
fn a_waiting_lookup_consumes_nothing_until_every_key_is_there() {
    let mut s = Published::default();
    let once = Info::new(attr::PERSISTENCE, Persistence::FIRST_READ);
    s.publish(&p("a", 0), &[datum("x"), once]).unwrap();
    let wait = [Info::new(attr::WAIT, 0)];
    let both = keys(&["x", "y"]);
    assert!(s.try_lookup(&p("a", 1), &both, &wait, &OneNode).is_none());
    s.publish(&p("a", 0), &[datum("y")]).unwrap();
    let got = s
        .try_lookup(&p("a", 1), &both, &wait, &OneNode)
        .unwrap()
        .unwrap();
    assert_eq!(got.len(), 2);
    // Without a wait, an answer at once: here a partial one.
    let partial = s
        .try_lookup(&p("a", 1), &both, &[], &OneNode)
        .unwrap()
        .unwrap();
    assert_eq!(partial.len(), 1);
}

#[test]
fn a_publish_past_a_limit_is_refused_whole_and_what_goes_frees_its_room() {
    // What one of the entries below costs (each a u32 under a two-letter key).
    let one = {
        let mut probe = Published::default();
        probe.publish(&p("a", 0), &[datum("k0")]).unwrap();
        probe.entries[0].cost
    };
    let mut s = Published::with_limits(PublishLimits {
        per_publisher: 2 * one,
        total: 3 * one,
    });
    let publish = |s: &mut Published, who: Proc, keys: &[&str]| {
        let info: Vec<Info> = keys.iter().map(|k| datum(k)).collect();
        s.publish(&who, &info)
    };
    assert_eq!(
        publish(&mut s, p("a", 0), &["k0", "k1", "k2"]),
        Err(Status::ERR_OUT_OF_RESOURCE)
    );
    assert_eq!(s.entries.len(), 0, "nothing of a refused publish is kept");
    publish(&mut s, p("a", 0), &["k0", "k1"]).unwrap();
    assert_eq!(
        publish(&mut s, p("a", 0), &["k2"]),
        Err(Status::ERR_OUT_OF_RESOURCE)
    );
    publish(&mut s, p("a", 1), &["k3"]).unwrap();
    assert_eq!(
        publish(&mut s, p("a", 2), &["k4"]),
        Err(Status::ERR_OUT_OF_RESOURCE),
        "the total is reached"
    );
    s.unpublish(&p("a", 0), &keys(&["k0"]), &[]);
    publish(&mut s, p("a", 2), &["k4"]).unwrap();
    let info = [datum("k5"), Info::new(attr::PERSISTENCE, Persistence::PROC)];
    assert_eq!(
        s.publish(&p("a", 3), &info),
        Err(Status::ERR_OUT_OF_RESOURCE)
    );
    s.job_ended(&Nspace::new("a").unwrap());
    assert!(s.entries.is_empty());
    s.publish(&p("a", 3), &info).unwrap();
    s.process_ended(&p("a", 3));
    assert!(s.entries.is_empty());
}
