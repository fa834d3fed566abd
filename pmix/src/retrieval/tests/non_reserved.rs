//! The non-reserved keys (N-*): the cache, the server, held requests and refreshes.

use super::*;

#[test]
fn n_01_refresh_cache_asks_the_server_past_a_cached_value() {
    let mut c = ClientCache::default();
    c.store(&p("job", 1), vec![kv("k", Value::Int32(1))]);
    let d = dir(&[Info::new(attr::GET_REFRESH_CACHE, true)]);
    // Not PMIX_IMMEDIATE: the server may have to fetch a remote process's values again.
    assert_eq!(
        client_get(&c, &p("job", 0), &p("job", 1), "k", &d),
        ClientStep::AskServer {
            add_immediate: false
        }
    );
}

#[test]
fn n_01_refresh_of_a_remote_process_fetches_again_past_the_servers_copy() {
    let mut s = store();
    let mut owner = ServerStore::default();
    commit(
        &mut owner,
        &p("job", 3),
        Scope::GLOBAL,
        "k",
        Value::Int32(1),
    );
    let blob = owner.modex.encode_blob(&[p("job", 3)]).unwrap();
    s.modex.store_blob(&blob, |_| false).unwrap();
    let refresh = dir(&[Info::new(attr::GET_REFRESH_CACHE, true)]);
    assert_eq!(
        server_get(&s, &p("job", 0), &p("job", 3), Some("k"), &refresh, true),
        ServerStep::AskHost
    );
    // Without the directive the copy answers (N-04); with PMIX_IMMEDIATE the host is out.
    let step = server_get(&s, &p("job", 0), &p("job", 3), Some("k"), &dir(&[]), true);
    assert_eq!(reply_value(step, "k"), Ok(Value::Int32(1)));
    let immediate = dir(&[
        Info::new(attr::GET_REFRESH_CACHE, true),
        Info::new(attr::IMMEDIATE, true),
    ]);
    let step = server_get(&s, &p("job", 0), &p("job", 3), Some("k"), &immediate, true);
    assert_eq!(reply_value(step, "k"), Ok(Value::Int32(1)));
    // What the host brings is what the refresh answers (the server asks it only once).
    commit(
        &mut owner,
        &p("job", 3),
        Scope::GLOBAL,
        "k",
        Value::Int32(2),
    );
    let blob = owner.modex.encode_blob(&[p("job", 3)]).unwrap();
    s.modex.store_blob(&blob, |_| false).unwrap();
    let step = server_get(&s, &p("job", 0), &p("job", 3), Some("k"), &refresh, false);
    assert_eq!(reply_value(step, "k"), Ok(Value::Int32(2)));
}

#[test]
fn n_01_refresh_of_a_local_process_answers_from_the_server() {
    let mut s = store();
    commit(&mut s, &p("job", 1), Scope::GLOBAL, "k", Value::Int32(2));
    let refresh = dir(&[Info::new(attr::GET_REFRESH_CACHE, true)]);
    let step = server_get(&s, &p("job", 0), &p("job", 1), Some("k"), &refresh, true);
    assert_eq!(reply_value(step, "k"), Ok(Value::Int32(2)));
}

#[test]
fn n_01_the_server_does_not_hold_a_refresh_of_a_missing_key() {
    // A client that sends the refresh as is (OpenPMIx's) is answered from what the server has.
    let s = store();
    let d = dir(&[Info::new(attr::GET_REFRESH_CACHE, true)]);
    let step = server_get(&s, &p("job", 0), &p("job", 1), Some("k"), &d, false);
    assert_eq!(reply_value(step, "k"), Err(Status::ERR_NOT_FOUND));
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

#[test]
fn n_11_wildcard_get_of_a_non_reserved_key_answers_the_hosts_job_level_value() {
    // The standard does not say in what form "the value from every rank" comes back
    // (SPEC_NOTES, N-11): this implementation answers with the value the host posted for the
    // namespace, and does not merge the ranks' own values.
    let mut r = realms();
    r.register(&[info("site.mode", Value::string("fast"))]);
    let mut s = store();
    s.namespaces.insert(Nspace::new("job").unwrap(), r);
    commit(
        &mut s,
        &p("job", 1),
        Scope::GLOBAL,
        "site.mode",
        Value::string("rank1"),
    );
    let step = server_get(
        &s,
        &p("job", 0),
        &job_wild(),
        Some("site.mode"),
        &dir(&[]),
        false,
    );
    assert_eq!(reply_value(step, "site.mode"), Ok(Value::string("fast")));
    let step = server_get(
        &s,
        &p("job", 0),
        &job_wild(),
        Some("only.ranks"),
        &dir(&[]),
        false,
    );
    assert_eq!(reply_value(step, "only.ranks"), Err(Status::ERR_NOT_FOUND));
}

#[test]
fn n_13_a_get_without_key_returns_all_of_the_targets_values() {
    let mut s = store();
    commit(&mut s, &p("job", 1), Scope::GLOBAL, "a", Value::Uint8(1));
    commit(&mut s, &p("job", 1), Scope::GLOBAL, "b", Value::Uint8(2));
    let step = server_get(
        &s,
        &p("job", 0),
        &p("job", 1),
        None,
        &dir(&[Info::new(attr::GET_REFRESH_CACHE, true)]),
        false,
    );
    assert_eq!(reply_value(step.clone(), "a"), Ok(Value::Uint8(1)));
    assert_eq!(reply_value(step, "b"), Ok(Value::Uint8(2)));
}
