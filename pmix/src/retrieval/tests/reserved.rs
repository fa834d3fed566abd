//! The reserved keys (R-*): where the client and the server look, and when they stop.

use super::*;

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
    let immediate = [Info::new(attr::IMMEDIATE, true)];
    let step = ask_server(&p("other", 0), "pmix.job.size", &immediate, true);
    assert_eq!(
        reply_value(step, "pmix.job.size"),
        Err(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn r_05_unknown_namespace_goes_to_a_host_with_direct_modex() {
    let step = ask_server(&p("other", 0), "pmix.job.size", &[], true);
    assert_eq!(step, ServerStep::AskHost);
}

#[test]
fn r_07_unknown_namespace_without_direct_modex_is_not_found() {
    let step = ask_server(&p("other", 0), "pmix.job.size", &[], false);
    assert_eq!(
        reply_value(step, "pmix.job.size"),
        Err(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn r_08_reserved_keys_never_wait() {
    let step = ask_server(&p("job", 1), "pmix.not.provided", &[], true);
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
fn group_names_are_asked_of_the_server_whatever_the_cache_holds() {
    // v5.0 §14.2.5: a process's groups change after it started.
    let mut c = cache();
    let names = Value::DataArray(Box::new(crate::model::DataArray {
        data_type: crate::model::DataType::STRING,
        elements: vec![Value::string("old")],
    }));
    c.store(&p("job", 0), vec![kv(attr::GROUP_NAMES.wire_key(), names)]);
    assert_eq!(
        client_get(
            &c,
            &p("job", 0),
            &p("job", 0),
            attr::GROUP_NAMES.wire_key(),
            &dir(&[])
        ),
        ClientStep::AskServer {
            add_immediate: true
        }
    );
}
