//! Scopes (SC-*): who sees a value put with each scope.

use super::*;

#[test]
fn sc_04_remote_scope_is_visible_on_other_nodes() {
    // Rank 2 is on n1, this server on n0: its REMOTE value reached us through a fence.
    let mut s = store();
    commit(&mut s, &p("job", 2), Scope::REMOTE, "r", Value::Uint8(4));
    let step = server_get(&s, &p("job", 0), &p("job", 2), Some("r"), &dir(&[]), false);
    assert_eq!(reply_value(step, "r"), Ok(Value::Uint8(4)));
}

#[test]
fn sc_05_global_is_visible_everywhere_and_internal_only_to_its_poster() {
    let mut s = store();
    commit(&mut s, &p("job", 1), Scope::GLOBAL, "g", Value::Uint8(1));
    commit(&mut s, &p("job", 2), Scope::GLOBAL, "g", Value::Uint8(2));
    for (t, v) in [(1, 1), (2, 2)] {
        let step = server_get(&s, &p("job", 0), &p("job", t), Some("g"), &dir(&[]), false);
        assert_eq!(reply_value(step, "g"), Ok(Value::Uint8(v)));
    }
    // An internal value lives in its poster's cache only: never in the server's store.
    let mut c = cache();
    c.store(&p("job", 0), vec![kv("mine", Value::Uint8(5))]);
    assert_eq!(
        client_get(&c, &p("job", 0), &p("job", 0), "mine", &dir(&[])),
        ClientStep::Done(Ok(Value::Uint8(5)))
    );
    assert!(!s.modex.has_data(&p("job", 0)));
}

#[test]
fn sc_06_a_key_outside_the_requesters_scope_is_reported_without_waiting() {
    let mut s = store();
    commit(&mut s, &p("job", 1), Scope::REMOTE, "r", Value::Uint8(1));
    let step = server_get(&s, &p("job", 0), &p("job", 1), Some("r"), &dir(&[]), false);
    assert_eq!(
        reply_value(step, "r"),
        Err(Status::ERR_EXISTS_OUTSIDE_SCOPE)
    );
}

#[test]
fn sc_07_data_scope_restricts_the_search_to_that_scope() {
    let mut s = store();
    commit(&mut s, &p("job", 1), Scope::LOCAL, "l", Value::Uint8(1));
    commit(&mut s, &p("job", 1), Scope::GLOBAL, "g", Value::Uint8(2));
    let ask = |key: &str, scope: Scope| {
        let step = server_get(
            &s,
            &p("job", 0),
            &p("job", 1),
            Some(key),
            &dir(&[Info::new(attr::DATA_SCOPE, scope)]),
            false,
        );
        reply_value(step, key)
    };
    assert_eq!(ask("l", Scope::LOCAL), Ok(Value::Uint8(1)));
    assert_eq!(ask("g", Scope::GLOBAL), Ok(Value::Uint8(2)));
    assert_eq!(ask("l", Scope::GLOBAL), Err(Status::ERR_NOT_FOUND));
    assert_eq!(ask("g", Scope::LOCAL), Err(Status::ERR_NOT_FOUND));
    // The client does not answer a scoped get of a peer from its cache (which has no scopes).
    let mut c = cache();
    c.store(&p("job", 1), vec![kv("l", Value::Uint8(1))]);
    let step = client_get(
        &c,
        &p("job", 0),
        &p("job", 1),
        "l",
        &dir(&[Info::new(attr::DATA_SCOPE, Scope::GLOBAL)]),
    );
    assert_eq!(
        step,
        ClientStep::AskServer {
            add_immediate: false
        }
    );
}
