//! One test per retrieval rule the engine decides, named after the rule.

use super::*;
use crate::model::{Key, Scope};
use crate::store::realm::{info, info_array};
use crate::wire::CommitBucket;

fn p(ns: &str, r: u32) -> Proc {
    Proc::try_new(ns, r).unwrap()
}

fn kv(k: &str, v: Value) -> Kval {
    Kval {
        key: Key::new(k).unwrap(),
        value: v,
    }
}

/// A namespace "job" of 4 ranks on nodes n0 (ranks 0,1) and n1 (ranks 2,3), two apps.
fn realms() -> JobRealms {
    let mut r = JobRealms::new(Nspace::new("job").unwrap());
    let mut reg = vec![
        info(attr::JOB_SIZE.wire_key(), Value::Uint32(4)),
        info(attr::NUM_NODES.wire_key(), Value::Uint32(2)),
        info(attr::UNIV_SIZE.wire_key(), Value::Uint32(8)),
        info(
            attr::SESSION_INFO_ARRAY.wire_key(),
            info_array(vec![
                info(attr::SESSION_ID.wire_key(), Value::Uint32(7)),
                info(attr::NUM_NODES.wire_key(), Value::Uint32(16)),
            ]),
        ),
    ];
    for app in 0..2u32 {
        reg.push(info(
            attr::APP_INFO_ARRAY.wire_key(),
            info_array(vec![
                info(attr::APPNUM.wire_key(), Value::Uint32(app)),
                info(attr::APP_SIZE.wire_key(), Value::Uint32(2)),
                info(attr::NUM_NODES.wire_key(), Value::Uint32(1)),
            ]),
        ));
    }
    for node in 0..2u32 {
        reg.push(info(
            attr::NODE_INFO_ARRAY.wire_key(),
            info_array(vec![
                info(attr::HOSTNAME.wire_key(), Value::string(format!("n{node}"))),
                info(attr::NODEID.wire_key(), Value::Uint32(node)),
                info(attr::NODE_SIZE.wire_key(), Value::Uint32(2 + node)),
            ]),
        ));
    }
    for rank in 0..4u32 {
        reg.push(info(
            attr::PROC_INFO_ARRAY.wire_key(),
            info_array(vec![
                info(attr::RANK.wire_key(), Value::Rank(Rank(rank))),
                info(attr::APPNUM.wire_key(), Value::Uint32(rank / 2)),
                info(
                    attr::LOCAL_RANK.wire_key(),
                    Value::Uint16((rank % 2) as u16),
                ),
                info(
                    attr::HOSTNAME.wire_key(),
                    Value::string(format!("n{}", rank / 2)),
                ),
            ]),
        ));
    }
    r.register(&reg);
    r
}

fn store() -> ServerStore {
    let mut s = ServerStore {
        hostname: Some("n0".into()),
        ..ServerStore::default()
    };
    s.namespaces.insert(Nspace::new("job").unwrap(), realms());
    s.local.insert(p("job", 0));
    s.local.insert(p("job", 1));
    s
}

fn commit(s: &mut ServerStore, proc: &Proc, scope: Scope, k: &str, v: Value) {
    s.modex.commit(
        proc,
        vec![CommitBucket {
            scope,
            kvals: vec![kv(k, v)],
        }],
    );
}

fn dir(info: &[Info]) -> Directives {
    Directives::from_info(info)
}

fn reply_value(step: ServerStep, key: &str) -> Result<Value, Status> {
    match step {
        ServerStep::Reply { status, data } if status == Status::SUCCESS => data
            .iter()
            .flat_map(|d| d.kvals.iter())
            .find(|k| k.key.as_str() == key)
            .map(|k| k.value.clone())
            .ok_or(Status::ERR_NOT_FOUND),
        ServerStep::Reply { status, .. } => Err(status),
        other => panic!("expected a reply, got {other:?}"),
    }
}

fn get_reserved(key: &str, rank: Rank, info: &[Info]) -> Option<Value> {
    let s = store();
    let step = server_get(
        &s,
        &p("job", 0),
        &Proc::try_new("job", rank).unwrap(),
        Some(key),
        &dir(info),
        false,
    );
    reply_value(step, key).ok()
}

#[test]
fn r_01_reserved_key_in_client_cache_is_returned_without_server() {
    let mut c = ClientCache::default();
    c.realms.insert(Nspace::new("job").unwrap(), realms());
    let me = p("job", 1);
    let step = client_get(
        &c,
        &me,
        &Proc::try_new("job", Rank::WILDCARD).unwrap(),
        attr::JOB_SIZE.wire_key(),
        &dir(&[]),
    );
    assert_eq!(step, ClientStep::Done(Ok(Value::Uint32(4))));
}

#[test]
fn r_02_missing_reserved_key_of_own_namespace_is_not_found_immediately() {
    let mut c = ClientCache::default();
    c.realms.insert(Nspace::new("job").unwrap(), realms());
    let step = client_get(&c, &p("job", 1), &p("job", 1), "pmix.no.such", &dir(&[]));
    assert_eq!(step, ClientStep::Done(Err(Status::ERR_NOT_FOUND)));
}

#[test]
fn r_03_reserved_key_of_another_namespace_goes_to_the_server() {
    let c = ClientCache::default();
    let step = client_get(
        &c,
        &p("mine", 0),
        &p("job", 2),
        attr::LOCAL_RANK.wire_key(),
        &dir(&[]),
    );
    assert_eq!(
        step,
        ClientStep::AskServer {
            add_immediate: false
        }
    );
    let s = store();
    let v = reply_value(
        server_get(
            &s,
            &p("mine", 0),
            &p("job", 2),
            Some(attr::LOCAL_RANK.wire_key()),
            &dir(&[]),
            false,
        ),
        attr::LOCAL_RANK.wire_key(),
    );
    assert_eq!(v, Ok(Value::Uint16(0)));
}

#[test]
fn r_04_unknown_namespace_with_immediate_is_not_found() {
    let s = store();
    let d = dir(&[Info::new(attr::IMMEDIATE, true)]);
    let step = server_get(
        &s,
        &p("job", 0),
        &p("other", 0),
        Some("pmix.job.size"),
        &d,
        true,
    );
    assert_eq!(
        reply_value(step, "pmix.job.size"),
        Err(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn r_05_unknown_namespace_goes_to_a_host_with_direct_modex() {
    let s = store();
    let step = server_get(
        &s,
        &p("job", 0),
        &p("other", 0),
        Some("pmix.job.size"),
        &dir(&[]),
        true,
    );
    assert_eq!(step, ServerStep::AskHost);
}

#[test]
fn r_07_unknown_namespace_without_direct_modex_is_not_found() {
    let s = store();
    let step = server_get(
        &s,
        &p("job", 0),
        &p("other", 0),
        Some("pmix.job.size"),
        &dir(&[]),
        false,
    );
    assert_eq!(
        reply_value(step, "pmix.job.size"),
        Err(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn r_08_reserved_keys_never_wait() {
    let s = store();
    let step = server_get(
        &s,
        &p("job", 0),
        &p("job", 1),
        Some("pmix.not.provided"),
        &dir(&[]),
        true,
    );
    assert_eq!(
        reply_value(step, "pmix.not.provided"),
        Err(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn r_09_key_the_host_did_not_provide_is_not_found() {
    assert_eq!(get_reserved(attr::SPAWNED.wire_key(), Rank(1), &[]), None);
}

#[test]
fn rg_01_multi_realm_key_defaults_to_the_job_realm() {
    assert_eq!(
        get_reserved(attr::NUM_NODES.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(2))
    );
}

#[test]
fn rg_02_realm_directive_selects_the_realm() {
    let v = get_reserved(
        attr::NUM_NODES.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::SESSION_INFO, true)],
    );
    assert_eq!(v, Some(Value::Uint32(16)));
}

#[test]
fn rg_03_process_level_value_wins_for_a_real_rank() {
    assert_eq!(
        get_reserved(attr::APPNUM.wire_key(), Rank(3), &[]),
        Some(Value::Uint32(1))
    );
}

#[test]
fn rs_01_session_key_answers_the_callers_session() {
    assert_eq!(
        get_reserved(attr::UNIV_SIZE.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(8))
    );
}

#[test]
fn rs_02_session_request_ignores_the_proc() {
    let a = get_reserved(attr::UNIV_SIZE.wire_key(), Rank(2), &[]);
    let b = get_reserved(attr::UNIV_SIZE.wire_key(), Rank::WILDCARD, &[]);
    assert_eq!(a, b);
}

#[test]
fn rs_05_num_nodes_of_session_differs_from_job() {
    let session = get_reserved(
        attr::NUM_NODES.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::SESSION_INFO, true)],
    );
    let job = get_reserved(attr::NUM_NODES.wire_key(), Rank::WILDCARD, &[]);
    assert_ne!(session, job);
}

#[test]
fn rj_01_job_key_with_wildcard_answers_the_job() {
    assert_eq!(
        get_reserved(attr::JOB_SIZE.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(4))
    );
}

#[test]
fn ra_01_app_key_with_appnum_qualifier() {
    let v = get_reserved(
        attr::APP_SIZE.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::APPNUM, 1)],
    );
    assert_eq!(v, Some(Value::Uint32(2)));
}

#[test]
fn ra_02_app_key_with_real_rank_answers_its_application() {
    let s = store();
    let r = s.realms("job").unwrap();
    assert!(
        r.lookup(
            attr::APP_SIZE.wire_key(),
            Rank(3),
            &Qualifiers::default(),
            None,
            None
        )
        .is_some()
    );
    assert_eq!(r.appnum_of(3), Some(1));
}

#[test]
fn ra_03_wildcard_app_request_uses_the_callers_app() {
    let mut r = realms();
    r.apps
        .get_mut(&1)
        .unwrap()
        .push(info(attr::APP_ARGV.wire_key(), Value::string("b")));
    let v = r.lookup(
        attr::APP_ARGV.wire_key(),
        Rank::WILDCARD,
        &Qualifiers::default(),
        Some(Rank(2)),
        None,
    );
    assert_eq!(v, Some(&Value::string("b")));
}

#[test]
fn ra_04_wildcard_app_request_for_another_job_uses_app_zero() {
    let mut r = realms();
    r.apps
        .get_mut(&0)
        .unwrap()
        .push(info(attr::APP_ARGV.wire_key(), Value::string("a")));
    let v = r.lookup(
        attr::APP_ARGV.wire_key(),
        Rank::WILDCARD,
        &Qualifiers::default(),
        None,
        None,
    );
    assert_eq!(v, Some(&Value::string("a")));
}

#[test]
fn ra_05_app_info_directive_gives_the_application_value() {
    let v = get_reserved(
        attr::NUM_NODES.wire_key(),
        Rank(0),
        &[Info::new(attr::APP_INFO, true)],
    );
    assert_eq!(v, Some(Value::Uint32(1)));
}

#[test]
fn rp_01_process_key_answers_the_process() {
    assert_eq!(
        get_reserved(attr::LOCAL_RANK.wire_key(), Rank(3), &[]),
        Some(Value::Uint16(1))
    );
}

#[test]
fn rp_02_procid_ignores_the_proc() {
    let c = ClientCache::default();
    let me = p("job", 2);
    let step = client_get(&c, &me, &p("job", 0), attr::PROCID.wire_key(), &dir(&[]));
    assert_eq!(step, ClientStep::Done(Ok(Value::Proc(me))));
}

#[test]
fn rp_06_spawned_for_a_process_not_spawned_is_not_found() {
    assert_eq!(get_reserved(attr::SPAWNED.wire_key(), Rank(0), &[]), None);
}

#[test]
fn rn_01_node_key_without_qualifier_answers_the_targets_node() {
    assert_eq!(
        get_reserved(attr::NODE_SIZE.wire_key(), Rank(3), &[]),
        Some(Value::Uint32(3))
    );
    assert_eq!(
        get_reserved(attr::NODE_SIZE.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(2))
    );
}

#[test]
fn rn_02_node_qualifier_selects_the_node() {
    let v = get_reserved(
        attr::NODE_SIZE.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::HOSTNAME, "n1".to_string())],
    );
    assert_eq!(v, Some(Value::Uint32(3)));
    let v = get_reserved(
        attr::NODE_SIZE.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::NODEID, 1)],
    );
    assert_eq!(v, Some(Value::Uint32(3)));
}

#[test]
fn rn_04_local_job_keys_registered_per_node_answer_for_the_callers_node() {
    // OpenPMIx (the v4.x placement) registers PMIX_LOCAL_SIZE and PMIX_LOCAL_PEERS only inside
    // the node arrays; a job-level request answers with the caller's node.
    let mut r = realms();
    for (node, size, peers) in [(0u32, 2u32, "0,1"), (1, 3, "2,3,4")] {
        r.register(&[info(
            attr::NODE_INFO_ARRAY.wire_key(),
            info_array(vec![
                info(attr::HOSTNAME.wire_key(), Value::string(format!("n{node}"))),
                info(attr::LOCAL_SIZE.wire_key(), Value::Uint32(size)),
                info(attr::LOCAL_PEERS.wire_key(), Value::string(peers)),
            ]),
        )]);
    }
    let q = Qualifiers::default();
    let local_size = |caller: u32| {
        r.lookup(
            attr::LOCAL_SIZE.wire_key(),
            Rank::WILDCARD,
            &q,
            Some(Rank(caller)),
            None,
        )
        .cloned()
    };
    assert_eq!(local_size(0), Some(Value::Uint32(2)));
    assert_eq!(local_size(2), Some(Value::Uint32(3)));
    // Without a caller of this job, the node this lookup runs on answers.
    let peers = r.lookup(
        attr::LOCAL_PEERS.wire_key(),
        Rank::WILDCARD,
        &q,
        None,
        Some("n1"),
    );
    assert_eq!(peers, Some(&Value::string("2,3,4")));
    // Other job keys do not fall back to a node's value.
    r.register(&[info(
        attr::NODE_INFO_ARRAY.wire_key(),
        info_array(vec![
            info(attr::HOSTNAME.wire_key(), Value::string("n0")),
            info(attr::MAX_PROCS.wire_key(), Value::Uint32(9)),
        ]),
    )]);
    assert_eq!(
        r.lookup(
            attr::MAX_PROCS.wire_key(),
            Rank::WILDCARD,
            &q,
            Some(Rank(0)),
            None
        ),
        None
    );
}

#[test]
fn rn_06_nodeid_is_the_index_of_the_node() {
    assert_eq!(
        get_reserved(attr::NODEID.wire_key(), Rank(2), &[]),
        Some(Value::Uint32(1))
    );
}

#[test]
fn n_01_refresh_cache_asks_the_server_without_waiting() {
    let mut c = ClientCache::default();
    c.store(&p("job", 1), vec![kv("k", Value::Int32(1))]);
    let d = dir(&[Info::new(attr::GET_REFRESH_CACHE, true)]);
    assert_eq!(
        client_get(&c, &p("job", 0), &p("job", 1), "k", &d),
        ClientStep::AskServer {
            add_immediate: true
        }
    );
}

#[test]
fn n_02_cached_non_reserved_key_is_returned_locally() {
    let mut c = ClientCache::default();
    c.store(&p("job", 1), vec![kv("k", Value::Int32(1))]);
    assert_eq!(
        client_get(&c, &p("job", 0), &p("job", 1), "k", &dir(&[])),
        ClientStep::Done(Ok(Value::Int32(1)))
    );
}

#[test]
fn n_03_optional_stops_at_the_cache() {
    let c = ClientCache::default();
    let d = dir(&[Info::new(attr::OPTIONAL, true)]);
    assert_eq!(
        client_get(&c, &p("job", 0), &p("job", 1), "k", &d),
        ClientStep::Done(Err(Status::ERR_NOT_FOUND))
    );
}

#[test]
fn n_04_server_returns_committed_value_with_all_of_the_targets_data() {
    let mut s = store();
    commit(&mut s, &p("job", 1), Scope::GLOBAL, "k", Value::Int32(5));
    commit(
        &mut s,
        &p("job", 1),
        Scope::GLOBAL,
        "other",
        Value::Int32(6),
    );
    let step = server_get(&s, &p("job", 0), &p("job", 1), Some("k"), &dir(&[]), false);
    let ServerStep::Reply { status, data } = step else {
        panic!()
    };
    assert_eq!(status, Status::SUCCESS);
    assert_eq!(data[0].kvals.len(), 2);
}

#[test]
fn n_05_immediate_missing_key_is_not_found() {
    let s = store();
    let d = dir(&[Info::new(attr::IMMEDIATE, true)]);
    let step = server_get(&s, &p("job", 0), &p("job", 1), Some("k"), &d, true);
    assert_eq!(reply_value(step, "k"), Err(Status::ERR_NOT_FOUND));
}

#[test]
fn n_06_undef_rank_waits_until_some_process_posts_the_key() {
    let mut s = store();
    let target = Proc::try_new("job", Rank::UNDEF).unwrap();
    assert_eq!(
        server_get(&s, &p("job", 0), &target, Some("uniq"), &dir(&[]), false),
        ServerStep::Wait
    );
    commit(&mut s, &p("job", 1), Scope::GLOBAL, "uniq", Value::Int32(9));
    let step = server_get(&s, &p("job", 0), &target, Some("uniq"), &dir(&[]), false);
    assert_eq!(reply_value(step, "uniq"), Ok(Value::Int32(9)));
}

#[test]
fn n_07_local_target_that_has_not_committed_is_waited_for() {
    let mut s = store();
    assert_eq!(
        server_get(&s, &p("job", 0), &p("job", 1), Some("k"), &dir(&[]), false),
        ServerStep::Wait
    );
    // ... but not once the target has finalized without posting it.
    s.gone.insert(p("job", 1));
    let step = server_get(&s, &p("job", 0), &p("job", 1), Some("k"), &dir(&[]), false);
    assert_eq!(reply_value(step, "k"), Err(Status::ERR_NOT_FOUND));
}

#[test]
fn n_08_remote_target_goes_to_a_host_with_direct_modex() {
    let s = store();
    assert_eq!(
        server_get(&s, &p("job", 0), &p("job", 3), Some("k"), &dir(&[]), true),
        ServerStep::AskHost
    );
}

#[test]
fn n_09_remote_target_without_direct_modex_is_not_found() {
    let s = store();
    let step = server_get(&s, &p("job", 0), &p("job", 3), Some("k"), &dir(&[]), false);
    assert_eq!(reply_value(step, "k"), Err(Status::ERR_NOT_FOUND));
}

#[test]
fn n_12_data_exchanged_by_fence_is_served_for_remote_processes() {
    let mut s = store();
    let mut other = ServerStore::default();
    commit(
        &mut other,
        &p("job", 3),
        Scope::GLOBAL,
        "k",
        Value::Int32(3),
    );
    let blob = other.modex.encode_blob(&[p("job", 3)]).unwrap();
    s.modex.store_blob(&blob, |_| false).unwrap();
    let step = server_get(&s, &p("job", 0), &p("job", 3), Some("k"), &dir(&[]), false);
    assert_eq!(reply_value(step, "k"), Ok(Value::Int32(3)));
}

#[test]
fn sc_01_local_scope_is_visible_on_the_same_node() {
    let mut s = store();
    commit(&mut s, &p("job", 1), Scope::LOCAL, "k", Value::Int32(1));
    let step = server_get(&s, &p("job", 0), &p("job", 1), Some("k"), &dir(&[]), false);
    assert_eq!(reply_value(step, "k"), Ok(Value::Int32(1)));
}

#[test]
fn sc_03_remote_scope_is_outside_scope_on_the_same_node() {
    let mut s = store();
    commit(&mut s, &p("job", 1), Scope::REMOTE, "k", Value::Int32(1));
    let step = server_get(&s, &p("job", 0), &p("job", 1), Some("k"), &dir(&[]), false);
    assert_eq!(
        reply_value(step, "k"),
        Err(Status::ERR_EXISTS_OUTSIDE_SCOPE)
    );
}

#[test]
fn sc_02_local_scope_is_never_sent_to_other_nodes() {
    let mut s = store();
    commit(&mut s, &p("job", 1), Scope::LOCAL, "k", Value::Int32(1));
    let blob = s.modex.encode_blob(&[p("job", 1)]).unwrap();
    let mut remote = ServerStore::default();
    remote.modex.store_blob(&blob, |_| false).unwrap();
    assert_eq!(remote.modex.find(&p("job", 1), "k", false), Found::Missing);
}

#[test]
fn p_05_a_key_posted_again_takes_its_new_value() {
    let mut s = store();
    commit(&mut s, &p("job", 1), Scope::GLOBAL, "k", Value::Int32(1));
    commit(&mut s, &p("job", 1), Scope::GLOBAL, "k", Value::Int32(2));
    assert_eq!(
        s.modex.find(&p("job", 1), "k", true),
        Found::Value(Value::Int32(2))
    );
}

#[test]
fn g_11_timeout_zero_means_none() {
    assert_eq!(dir(&[Info::new(attr::TIMEOUT, 0)]).timeout_s, None);
    assert_eq!(dir(&[Info::new(attr::TIMEOUT, 5)]).timeout_s, Some(5));
}

#[test]
fn dm_05_nested_registration_arrays_are_retrievable() {
    let r = realms();
    assert_eq!(r.job_size(), Some(4));
    assert_eq!(r.session_id, Some(7));
    assert_eq!(r.nodes.len(), 2);
    assert_eq!(r.procs.len(), 4);
}
