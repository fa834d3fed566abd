//! Values posted for a group (latest draft §14.2.5, provisional): no rule of the table, both
//! ends' steps for a get qualified by `PMIX_GROUP_CONTEXT_ID` and for one that is not.

use super::*;
use crate::store::qualified::QUALIFIED_VALUE;

fn of_group(id: usize) -> Info {
    Info::new(attr::GROUP_CONTEXT_ID, id).qualifier()
}

/// [`store`], where rank 1 posted `key` = 1235 for the group of context id 42.
fn store_with_posted(key: &str) -> ServerStore {
    let mut s = store();
    let value = Info::with_key(key, Value::Size(1235)).unwrap();
    s.group_values.post(&p("job", 1), 42, &[value]);
    s
}

/// The value of a server's answer read as this crate's client reads it.
fn answered(step: ServerStep, key: &str, context_id: Option<u64>) -> Result<Value, Status> {
    match step {
        ServerStep::Reply { status, data } if status == Status::SUCCESS => (data.iter())
            .flat_map(|d| d.kvals.iter())
            .find_map(|k| crate::store::qualified::value_for(k, key, context_id))
            .ok_or(Status::ERR_NOT_FOUND),
        ServerStep::Reply { status, .. } => Err(status),
        other => panic!("expected a reply, got {other:?}"),
    }
}

#[test]
fn a_get_qualified_by_a_context_id_goes_to_the_server_and_never_waits_there() {
    let key = attr::GROUP_LOCAL_CID.wire_key();
    let d = dir(&[of_group(42)]);
    assert_eq!(d.qualifiers.context_id, Some(42));
    // A reserved key of the caller's own job, which the cache would otherwise answer.
    let step = client_get(&cache(), &p("job", 0), &p("job", 1), key, &d);
    assert_eq!(
        step,
        ClientStep::AskServer {
            add_immediate: true
        }
    );
    // Marked required, the qualifier is understood (G-13).
    let reqd = Info {
        flags: InfoDirectives::REQD,
        ..of_group(42)
    };
    assert_eq!(dir(&[reqd]).unsupported_required, None);
}

#[test]
fn the_server_answers_a_qualified_get_from_the_posted_values_only() {
    let s = store_with_posted("app.lclid");
    let get = |key: &str, info: &[Info]| {
        server_get(&s, &p("job", 0), &p("job", 1), Some(key), &dir(info), true)
    };
    let found = get("app.lclid", &[of_group(42)]);
    let ServerStep::Reply { data, .. } = &found else {
        panic!("answered at once: {found:?}");
    };
    assert_eq!(data[0].kvals[0].key.as_str(), QUALIFIED_VALUE);
    assert_eq!(
        answered(found, "app.lclid", Some(42)),
        Ok(Value::Size(1235))
    );
    // Another group's id: not found, where an unqualified get of a non-reserved key of a
    // live local process would wait (N-07).
    assert_eq!(
        get("app.lclid", &[of_group(41)]),
        ServerStep::status(Status::ERR_NOT_FOUND)
    );
    assert_eq!(
        get("app.other", &[of_group(42)]),
        ServerStep::status(Status::ERR_NOT_FOUND)
    );
}

#[test]
fn an_unqualified_get_finds_a_posted_value_only_where_nothing_else_is_found() {
    let key = attr::GROUP_LOCAL_CID.wire_key();
    let s = store_with_posted(key);
    let step = server_get(&s, &p("job", 0), &p("job", 1), Some(key), &dir(&[]), false);
    assert_eq!(answered(step, key, None), Ok(Value::Size(1235)));
    // Rank 0 posted none: the reserved rules' answer stands.
    let step = server_get(&s, &p("job", 0), &p("job", 0), Some(key), &dir(&[]), false);
    assert_eq!(step, ServerStep::status(Status::ERR_NOT_FOUND));
    // A value the process committed under the same key wins over the one it posted.
    let mut s = store_with_posted("app.lclid");
    commit(
        &mut s,
        &p("job", 1),
        Scope::GLOBAL,
        "app.lclid",
        Value::Uint32(7),
    );
    let step = server_get(
        &s,
        &p("job", 0),
        &p("job", 1),
        Some("app.lclid"),
        &dir(&[]),
        false,
    );
    assert_eq!(reply_value(step, "app.lclid"), Ok(Value::Uint32(7)));
}
