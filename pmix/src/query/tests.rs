use super::*;
use crate::model::{Key, Nspace};

fn q(keys: &[&str], qualifiers: Vec<Info>) -> Query {
    Query {
        keys: keys.iter().map(|k| Some((*k).to_owned())).collect(),
        qualifiers,
    }
}

fn me() -> Proc {
    Proc::new(Nspace::new("job").unwrap(), 3u32)
}

fn answer(key: &str, v: &str) -> Info {
    Info::with_key(key, v.to_owned()).unwrap()
}

#[test]
fn procid_with_nspace_or_rank_is_a_bad_param() {
    let procid = Info::new(attr::PROCID, Proc::new(Nspace::new("job").unwrap(), 0u32));
    let nspace = Info::new(attr::NSPACE, "job".to_owned());
    let rank = Info::new(attr::RANK, Rank(0));
    let ok = q(&["PMIX_JOB_SIZE"], vec![procid.clone()]);
    assert_eq!(check(std::slice::from_ref(&ok)), Ok(()));
    for other in [nspace, rank] {
        let bad = q(&["pmix.job.size"], vec![procid.clone(), other]);
        assert_eq!(check(&[ok.clone(), bad]), Err(Status::ERR_BAD_PARAM));
    }
    assert_eq!(check(&[]), Err(Status::ERR_BAD_PARAM));
    assert_eq!(check(&[q(&[], vec![])]), Err(Status::ERR_BAD_PARAM));
}

#[test]
fn the_target_comes_from_the_qualifiers_or_is_the_requester() {
    let other = Nspace::new("other").unwrap();
    assert_eq!(target(&q(&["k"], vec![]), &me()), me());
    let by_id = q(
        &["k"],
        vec![Info::new(attr::PROCID, Proc::new(Nspace::default(), 1u32))],
    );
    assert_eq!(target(&by_id, &me()), Proc::new(me().nspace, 1u32));
    let by_name = q(
        &["k"],
        vec![
            Info::new(attr::NSPACE, "other".to_owned()),
            Info::new(attr::RANK, Rank(2)),
        ],
    );
    assert_eq!(target(&by_name, &me()), Proc::new(other.clone(), 2u32));
    let whole = q(&["k"], vec![Info::new(attr::NSPACE, "other".to_owned())]);
    assert_eq!(target(&whole, &me()), Proc::new(other, Rank::WILDCARD));
}

#[test]
fn status_counts_the_keys_answered() {
    let qs = [q(&["a", "b"], vec![]), q(&["c"], vec![])];
    let none: Vec<Vec<Info>> = vec![vec![], vec![]];
    assert_eq!(status_of(&qs, &none), Status::ERR_NOT_FOUND);
    let some = vec![vec![answer("a", "1")], vec![]];
    assert_eq!(status_of(&qs, &some), Status::ERR_PARTIAL_SUCCESS);
    let all = vec![
        vec![answer("a", "1"), answer("b", "2")],
        vec![answer("c", "3")],
    ];
    assert_eq!(status_of(&qs, &all), Status::SUCCESS);
}

#[test]
fn flat_answers_are_shaped_one_result_per_query_with_qualifiers_first() {
    let qual = Info::new(attr::NSPACE, "job".to_owned());
    let qs = [q(&["a", "b"], vec![]), q(&["a"], vec![qual.clone()])];
    // Duplicate keys get duplicate answers, in query order; an answer nobody asked for is
    // kept with the last query.
    let flat = vec![
        answer("a", "first"),
        answer("x", "extra"),
        answer("a", "second"),
        answer("b", "bee"),
    ];
    let grouped = group(&qs, flat);
    assert_eq!(grouped[0], vec![answer("a", "first"), answer("b", "bee")]);
    assert_eq!(
        grouped[1],
        vec![answer("a", "second"), answer("x", "extra")]
    );

    let shaped = results(&qs, grouped);
    assert_eq!(shaped.len(), 2);
    assert!(is_shaped(&shaped));
    let Value::DataArray(second) = &shaped[1].value else {
        panic!("not an array: {:?}", shaped[1].value);
    };
    let Value::Info(first_entry) = &second.elements[0] else {
        panic!("not an info");
    };
    assert_eq!(first_entry.key.as_str(), attr::QUERY_QUALIFIERS.wire_key());
    let keys: Vec<&str> = answers_in(&shaped[1])
        .iter()
        .map(|i| i.key.as_str())
        .collect();
    assert_eq!(keys, ["a", "x"]);
    assert!(!is_shaped(&[answer("a", "1")]));
}

#[test]
fn attribute_support_answers_each_function_per_level_and_undef_for_none() {
    let query = q(
        &["PMIX_QUERY_ATTRIBUTE_SUPPORT", "PMIx_Get", "PMIx_tool_init"],
        vec![
            Info::new(attr::CLIENT_ATTRIBUTES, true),
            Info::new(attr::TOOL_ATTRIBUTES, true),
            Info::new(attr::SERVER_ATTRIBUTES, false),
        ],
    );
    // The query key is spelled as the wire spells it.
    let query = Query {
        keys: std::iter::once(Some(attr::QUERY_ATTRIBUTE_SUPPORT.wire_key().to_owned()))
            .chain(query.keys.into_iter().skip(1))
            .collect(),
        ..query
    };
    assert!(is_attribute_support(&query));
    assert_eq!(
        asks(&query),
        [Ask::Attributes(Level::Client), Ask::Attributes(Level::Tool)]
    );
    assert_eq!(asked(&query), ["PMIx_Get", "PMIx_tool_init"]);
    let out = attribute_support(&query, |ask, function| {
        let table = match ask.level() {
            Level::Client => CLIENT,
            Level::Tool => TOOL,
            _ => return None,
        };
        let names = table
            .iter()
            .find(|(f, _)| Some(*f) == function)
            .map_or(&[][..], |(_, a)| *a);
        Some(level_entry(ask.level(), regattrs(names)).value.clone())
    });
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].key.as_str(), "PMIx_Get");
    let Value::DataArray(levels) = &out[0].value else {
        panic!("not an array");
    };
    let Value::Info(client) = &levels.elements[0] else {
        panic!("not an info");
    };
    assert_eq!(client.key.as_str(), attr::CLIENT_ATTRIBUTES.wire_key());
    let Value::DataArray(attrs) = &client.value else {
        panic!("no attributes");
    };
    assert!(attrs.elements.iter().any(|v| matches!(v,
        Value::RegAttr(r) if r.name.as_deref() == Some("PMIX_TIMEOUT"))));
    // The tool library supports nothing for PMIx_Get: PMIX_UNDEF.
    let Value::Info(t) = &levels.elements[1] else {
        panic!("not an info");
    };
    assert_eq!(t.value, Value::Undef);
    // PMIx_tool_init's attributes, at the tool level.
    let Value::DataArray(tool) = &out[1].value else {
        panic!("not an array");
    };
    let Value::Info(t) = &tool.elements[1] else {
        panic!("not an info");
    };
    let Value::DataArray(attrs) = &t.value else {
        panic!("no attributes");
    };
    assert!(attrs.elements.iter().any(|v| matches!(v,
        Value::RegAttr(r) if r.name.as_deref() == Some("PMIX_TOOL_NSPACE"))));
    assert_eq!(status_of(&[query], &[out]), Status::SUCCESS);
}

#[test]
fn no_level_named_asks_for_every_level_and_the_function_lists() {
    let query = q(&[attr::QUERY_ATTRIBUTE_SUPPORT.wire_key()], vec![]);
    assert_eq!(asks(&query).len(), 8);
    let asked = asked(&query);
    assert!(asked.contains(&attr::CLIENT_FUNCTIONS.wire_key()));
    assert!(!asked.contains(&attr::CLIENT_ATTRIBUTES.wire_key()));
    // The standard's colliding keys are read as the server's functions and the tool's
    // attributes.
    let standard = q(
        &[attr::QUERY_ATTRIBUTE_SUPPORT.wire_key()],
        vec![
            Info {
                key: Key::new("pmix.srvr.fns").unwrap(),
                flags: crate::model::InfoDirectives(0),
                value: Value::Bool(true),
            },
            Info {
                key: Key::new("pmix.setup.env").unwrap(),
                flags: crate::model::InfoDirectives(0),
                value: Value::Bool(true),
            },
        ],
    );
    assert_eq!(
        asks(&standard),
        [Ask::Functions(Level::Server), Ask::Attributes(Level::Tool)]
    );
}

#[test]
fn merging_puts_both_parties_levels_under_one_function() {
    let client = vec![
        Info::with_key(
            "PMIx_Get",
            infos(vec![level_entry(
                Level::Client,
                regattrs(&["PMIX_TIMEOUT"]),
            )]),
        )
        .unwrap(),
    ];
    let server = vec![
        Info::with_key(
            "PMIx_Get",
            infos(vec![level_entry(Level::Server, Vec::new())]),
        )
        .unwrap(),
    ];
    let merged = merge_support(client, server);
    assert_eq!(merged.len(), 1);
    let Value::DataArray(levels) = &merged[0].value else {
        panic!("not an array");
    };
    assert_eq!(levels.elements.len(), 2);
}

#[test]
fn support_tables_name_real_functions_and_attributes() {
    let apis = include_str!("../../../spec-vectors/inventory/v5.0/apis.tsv");
    let known: Vec<&str> = apis
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .collect();
    for (function, attrs) in CLIENT.iter().chain(SERVER).chain(TOOL) {
        assert!(known.contains(function), "{function} is not a v5.0 API");
        for a in *attrs {
            assert!(
                attr::by_name(a).is_some(),
                "{a} ({function}) is not an attribute"
            );
        }
        assert_eq!(regattrs(attrs).len(), attrs.len());
    }
    assert_eq!(host_function("PMIx_Allocation_request_nb"), "allocate");
    assert_eq!(host_function("allocate"), "allocate");
}

#[test]
fn the_abi_versions_are_answered_by_the_library_and_the_rest_goes_to_the_server() {
    let stable = attr::QUERY_STABLE_ABI_VERSION.wire_key();
    let provisional = attr::QUERY_PROVISIONAL_ABI_VERSION.wire_key();
    let namespaces = attr::QUERY_NAMESPACES.wire_key();
    let local = q(&[stable, provisional], Vec::new());
    assert_eq!(for_server(&local), None);
    let answered = answer_locally(std::slice::from_ref(&local))
        .expect("nothing is the server's")
        .unwrap();
    assert_eq!(answered.status, Status::SUCCESS);
    let got: Vec<Info> = answers_in(&answered.results[0])
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(got, [answer(stable, "0.0"), answer(provisional, "0.0")]);
    // A query mixing both: the server is asked only what the library cannot answer.
    let mixed = q(&[stable, namespaces], Vec::new());
    assert_eq!(for_server(&mixed), Some(q(&[namespaces], Vec::new())));
    assert_eq!(local_answers(&mixed), [answer(stable, "0.0")]);
    assert!(answer_locally(&[mixed]).is_none());
}
