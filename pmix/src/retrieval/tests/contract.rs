//! The general contract of a get (G-*), keys (K-*) and puts (P-*).

use super::*;

fn with_flags(i: Info, flags: InfoDirectives) -> Info {
    Info { flags, ..i }
}

#[test]
fn g_01_no_proc_means_the_caller() {
    let me = p("job", 1);
    assert_eq!(get_target(None, &me), me);
    assert_eq!(get_target(Some(&p("job", 3)), &me), p("job", 3));
}

#[test]
fn g_08_a_blocking_get_returns_once_the_rules_are_satisfied() {
    let mut s = store();
    let ask =
        |s: &ServerStore| server_get(s, &p("job", 0), &p("job", 1), Some("k"), &dir(&[]), false);
    assert_eq!(ask(&s), ServerStep::Wait);
    commit(&mut s, &p("job", 1), Scope::GLOBAL, "k", Value::Uint8(3));
    assert_eq!(reply_value(ask(&s), "k"), Ok(Value::Uint8(3)));
}

#[test]
fn g_10_every_status_a_get_ends_with_is_one_the_standard_lists() {
    let allowed = [
        Status::SUCCESS,
        Status::ERR_BAD_PARAM,
        Status::ERR_EXISTS_OUTSIDE_SCOPE,
        Status::ERR_NOT_FOUND,
        Status::ERR_NOT_SUPPORTED,
        Status::ERR_TIMEOUT,
    ];
    let mut s = store();
    commit(
        &mut s,
        &p("job", 1),
        Scope::REMOTE,
        "remote.only",
        Value::Uint8(1),
    );
    commit(&mut s, &p("job", 1), Scope::GLOBAL, "k", Value::Uint8(1));
    let infos: Vec<Vec<Info>> = vec![
        vec![],
        vec![Info::new(attr::IMMEDIATE, true)],
        vec![Info::new(attr::OPTIONAL, true)],
        vec![Info::new(attr::GET_REFRESH_CACHE, true)],
        vec![Info::new(attr::DATA_SCOPE, Scope::LOCAL)],
        vec![with_flags(
            Info::new(attr::SPAWNED, true),
            InfoDirectives::REQD,
        )],
    ];
    let keys = [
        "k",
        "remote.only",
        "missing",
        attr::JOB_SIZE.wire_key(),
        "pmix.none",
    ];
    let targets = [p("job", 1), p("job", 2), job_wild(), p("other", 0)];
    let mut seen = 0;
    for info in &infos {
        for key in keys {
            for t in &targets {
                for dmodex in [false, true] {
                    if let ServerStep::Reply { status, .. } =
                        server_get(&s, &p("job", 0), t, Some(key), &dir(info), dmodex)
                    {
                        assert!(
                            allowed.contains(&status),
                            "{key} {t:?} {info:?}: {status:?}"
                        );
                        seen += 1;
                    }
                }
                if let ClientStep::Done(Err(status)) =
                    client_get(&cache(), &p("job", 0), t, key, &dir(info))
                {
                    assert!(
                        allowed.contains(&status),
                        "{key} {t:?} {info:?}: {status:?}"
                    );
                }
            }
        }
    }
    assert!(seen > 50, "the sweep reached the server's answers");
}

#[test]
fn g_12_every_required_get_directive_is_understood() {
    let info = [
        Info::new(attr::OPTIONAL, true),
        Info::new(attr::IMMEDIATE, true),
        Info::new(attr::DATA_SCOPE, Scope::REMOTE),
        Info::new(attr::SESSION_INFO, true),
        Info::new(attr::GET_STATIC_VALUES, true),
        Info::new(attr::GET_POINTER_VALUES, true),
        Info::new(attr::GET_REFRESH_CACHE, true),
        Info::new(attr::TIMEOUT, 5),
    ];
    // Marked required, none of them makes the get unsupported.
    let reqd: Vec<Info> = info
        .iter()
        .cloned()
        .map(|i| with_flags(i, InfoDirectives::REQD))
        .collect();
    let d = dir(&reqd);
    assert_eq!(d.unsupported_required, None);
    assert!(d.optional && d.immediate && d.refresh_cache);
    assert_eq!(d.scope, Some(Scope::REMOTE));
    assert_eq!(d.timeout_s, Some(5));
    assert_eq!(d.qualifiers.realm, Some(crate::store::Realm::Session));
    for realm in [attr::JOB_INFO, attr::APP_INFO, attr::NODE_INFO] {
        assert!(dir(&[Info::new(realm, true)]).qualifiers.realm.is_some());
    }
}

#[test]
fn g_13_an_unsupported_required_directive_fails_the_get() {
    let reqd = [with_flags(
        Info::new(attr::SPAWNED, true),
        InfoDirectives::REQD,
    )];
    let step = client_get(
        &cache(),
        &p("job", 0),
        &job_wild(),
        attr::JOB_SIZE.wire_key(),
        &dir(&reqd),
    );
    assert_eq!(step, ClientStep::Done(Err(Status::ERR_NOT_SUPPORTED)));
    let step = server_get(
        &store(),
        &p("job", 0),
        &p("job", 1),
        Some("k"),
        &dir(&reqd),
        false,
    );
    assert_eq!(reply_value(step, "k"), Err(Status::ERR_NOT_SUPPORTED));
    // Not marked required: ignored.
    let step = client_get(
        &cache(),
        &p("job", 0),
        &job_wild(),
        attr::JOB_SIZE.wire_key(),
        &dir(&[Info::new(attr::SPAWNED, true)]),
    );
    assert_eq!(step, ClientStep::Done(Ok(Value::Uint32(4))));
}

#[test]
fn g_14_keys_and_namespaces_beyond_their_limits_are_bad_parameters() {
    assert!(Key::new("k".repeat(512)).is_err());
    assert!(Nspace::new("n".repeat(256)).is_err());
    assert_eq!(
        check_put(Scope::GLOBAL, &"k".repeat(512)).unwrap_err(),
        Status::ERR_BAD_PARAM
    );
}

#[test]
fn k_01_pmix_prefixed_keys_are_reserved_and_cannot_be_posted() {
    assert!(is_reserved("pmix.anything"));
    assert!(!is_reserved("app.pmix"));
    assert_eq!(
        check_put(Scope::GLOBAL, "pmix.mine").unwrap_err(),
        Status::ERR_BAD_PARAM
    );
}

#[test]
fn a_client_compatible_with_openpmix_may_put_defined_attributes_only() {
    // Open MPI 4.1 puts these two; OpenPMIx 4.2 accepts them.
    for key in ["pmix.hname", "pmix.cpuset"] {
        assert!(
            check_put_defined_allowed(Scope::GLOBAL, key).is_ok(),
            "{key}"
        );
        assert_eq!(
            check_put(Scope::GLOBAL, key).unwrap_err(),
            Status::ERR_BAD_PARAM
        );
    }
    // A reserved key that names no attribute stays refused (P-01).
    assert_eq!(
        check_put_defined_allowed(Scope::GLOBAL, "pmix.mine").unwrap_err(),
        Status::ERR_BAD_PARAM
    );
    assert!(check_put_defined_allowed(Scope::GLOBAL, "app.key").is_ok());
    assert_eq!(
        check_put_defined_allowed(Scope(77), "pmix.hname").unwrap_err(),
        Status::ERR_NOT_SUPPORTED
    );
}

#[test]
fn k_02_other_keys_follow_the_non_reserved_rules() {
    // A non-reserved key of a peer is waited for; a reserved key would be not found at once.
    let s = store();
    let step = server_get(
        &s,
        &p("job", 0),
        &p("job", 1),
        Some("user.key"),
        &dir(&[]),
        false,
    );
    assert_eq!(step, ServerStep::Wait);
    let step = server_get(
        &s,
        &p("job", 0),
        &p("job", 1),
        Some("pmix.user.key"),
        &dir(&[]),
        false,
    );
    assert_eq!(
        reply_value(step, "pmix.user.key"),
        Err(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn k_03_non_standard_pmix_keys_of_the_host_follow_the_reserved_rules() {
    let mut r = realms();
    r.register(&[info("pmix.site.queue", Value::string("batch"))]);
    let mut c = ClientCache::default();
    c.realms.insert(Nspace::new("job").unwrap(), r);
    let me = p("job", 0);
    assert_eq!(
        client_get(&c, &me, &job_wild(), "pmix.site.queue", &dir(&[])),
        ClientStep::Done(Ok(Value::string("batch")))
    );
    // Missing, it is not found at once, never waited for.
    assert_eq!(
        client_get(&c, &me, &job_wild(), "pmix.site.other", &dir(&[])),
        ClientStep::Done(Err(Status::ERR_NOT_FOUND))
    );
}

#[test]
fn k_04_standard_keys_come_back_as_the_host_registered_them() {
    assert_eq!(
        get_reserved(attr::JOB_SIZE.wire_key(), Rank::WILDCARD, &[]),
        Some(Value::Uint32(4))
    );
    assert_eq!(
        get_reserved(attr::LOCAL_RANK.wire_key(), Rank(3), &[]),
        Some(Value::Uint16(1))
    );
}

#[test]
fn k_05_session_id_and_appnum_qualify_and_are_keys_too() {
    let v = get_reserved(
        attr::APP_SIZE.wire_key(),
        Rank::WILDCARD,
        &[Info::new(attr::APPNUM, 1u32)],
    );
    assert_eq!(v, Some(Value::Uint32(2)));
    assert_eq!(
        get_reserved(attr::APPNUM.wire_key(), Rank(3), &[]),
        Some(Value::Uint32(1))
    );
    let v = get_reserved(
        attr::NUM_NODES.wire_key(),
        Rank::WILDCARD,
        &[
            Info::new(attr::SESSION_INFO, true),
            Info::new(attr::SESSION_ID, 7u32),
        ],
    );
    assert_eq!(v, Some(Value::Uint32(16)));
}

#[test]
fn p_01_put_of_a_reserved_key_is_a_bad_parameter() {
    assert_eq!(
        check_put(Scope::LOCAL, "pmix.x").unwrap_err(),
        Status::ERR_BAD_PARAM
    );
    assert!(check_put(Scope::LOCAL, "x").is_ok());
}

#[test]
fn p_02_put_with_an_unknown_scope_is_not_supported() {
    for scope in [Scope::LOCAL, Scope::REMOTE, Scope::GLOBAL, Scope::INTERNAL] {
        assert!(check_put(scope, "k").is_ok(), "{scope:?}");
    }
    assert_eq!(
        check_put(Scope(0), "k").unwrap_err(),
        Status::ERR_NOT_SUPPORTED
    );
    assert_eq!(
        check_put(Scope(77), "k").unwrap_err(),
        Status::ERR_NOT_SUPPORTED
    );
}

#[test]
fn p_04_a_put_that_was_not_committed_is_not_available() {
    let s = store();
    let ask =
        |info: &[Info]| server_get(&s, &p("job", 0), &p("job", 1), Some("k"), &dir(info), false);
    assert_eq!(ask(&[]), ServerStep::Wait);
    assert_eq!(
        reply_value(ask(&[Info::new(attr::IMMEDIATE, true)]), "k"),
        Err(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn p_08_store_internal_values_are_served_from_the_cache() {
    let mut c = cache();
    c.store(&p("job", 2), vec![kv("note", Value::Uint8(9))]);
    assert_eq!(
        client_get(&c, &p("job", 0), &p("job", 2), "note", &dir(&[])),
        ClientStep::Done(Ok(Value::Uint8(9)))
    );
}

#[test]
fn p_09_store_internal_may_cache_a_reserved_key() {
    // v5.0 §5.2 allows reserved keys here; the return-code list disagrees (SPEC_NOTES).
    let mut c = cache();
    c.store(
        &p("job", 2),
        vec![kv("pmix.hostname", Value::string("elsewhere"))],
    );
    assert_eq!(
        client_get(&c, &p("job", 0), &p("job", 2), "pmix.hostname", &dir(&[])),
        ClientStep::Done(Ok(Value::string("elsewhere")))
    );
}
