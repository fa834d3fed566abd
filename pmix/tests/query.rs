//! Queries end to end: the Rust server and clients in one process, with a host that answers
//! one key of its own. The shaping and attribute-support rules are unit-tested in
//! `pmix::query`; these tests check the three passes of the server (what it holds, the host,
//! its own fallback), what the host is given, and attribute support across the client, server
//! and host levels.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

mod common;

use std::sync::{Arc, Mutex};

use pmix::model::{Info, Proc, Query, RegAttr, Status, Value, attr};
use pmix::query::answers_in;
use pmix::server::Host;

use common::{memory_clients, server, server_with, uid_gid};

/// A host that answers `app.color` and records the queries it was asked.
#[derive(Clone, Default)]
struct ColorHost {
    asked: Arc<Mutex<Vec<Query>>>,
}

impl Host for ColorHost {
    async fn query(&self, _proc: Proc, queries: Vec<Query>) -> Result<Vec<Info>, Status> {
        self.asked.lock().unwrap().extend(queries.iter().cloned());
        let mut out = Vec::new();
        for q in &queries {
            for k in pmix::query::keys(q) {
                if k == "app.color" {
                    out.push(Info::with_key(k, "blue".to_owned()).unwrap());
                }
            }
        }
        Ok(out)
    }
}

fn query(keys: &[&str], qualifiers: Vec<Info>) -> Query {
    Query {
        keys: keys.iter().map(|k| Some((*k).to_owned())).collect(),
        qualifiers,
    }
}

fn keys_of(result: &Info) -> Vec<String> {
    answers_in(result)
        .iter()
        .map(|i| i.key.as_str().to_owned())
        .collect()
}

#[tokio::test]
async fn the_server_answers_what_it_holds_the_host_the_rest_and_unknown_keys_are_not_found() {
    let host = ColorHost::default();
    let (server, ns) = server_with(host.clone(), false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let c = &clients[0];
    let asked = [
        query(
            &[attr::JOB_SIZE.wire_key(), "app.color"],
            vec![Info::new(attr::JOB_INFO, true)],
        ),
        query(&[attr::QUERY_NAMESPACES.wire_key(), "app.nothing"], vec![]),
    ];
    let a = c.query(&asked).await.unwrap();
    assert_eq!(a.status, Status::ERR_PARTIAL_SUCCESS);
    assert_eq!(a.results.len(), 2);
    // The first result starts with its qualifiers, then one answer per key found.
    assert_eq!(
        keys_of(&a.results[0]),
        [attr::JOB_SIZE.wire_key(), "app.color"]
    );
    let first = answers_in(&a.results[0]);
    assert_eq!(first[0].value.to_u64(), Some(2));
    assert_eq!(first[1].value.as_str(), Some("blue"));
    // The host did not answer the namespaces: the server lists those registered with it.
    let second = answers_in(&a.results[1]);
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].value.as_str(), Some(ns.as_str()));

    // The host saw only the keys the server could not answer, with the requester's ids.
    let seen = host.asked.lock().unwrap().clone();
    let host_keys: Vec<&str> = seen.iter().flat_map(pmix::query::keys).collect();
    assert_eq!(
        host_keys,
        [
            "app.color",
            attr::QUERY_NAMESPACES.wire_key(),
            "app.nothing"
        ]
    );
    let (uid, gid) = uid_gid();
    let q = &seen[0].qualifiers;
    assert!(q.iter().any(|i| i.get(attr::USERID) == Some(uid)));
    assert!(q.iter().any(|i| i.get(attr::GRPID) == Some(gid)));

    // Nothing found at all is PMIX_ERR_NOT_FOUND.
    let none = c.query(&[query(&["app.nothing"], vec![])]).await;
    assert_eq!(none.err().map(|e| e.status()), Some(Status::ERR_NOT_FOUND));
    // A bad query is refused by the client, in both forms, and the server keeps serving.
    let bad = query(
        &[attr::JOB_SIZE.wire_key()],
        vec![
            Info::new(attr::PROCID, c.proc().clone()),
            Info::new(attr::NSPACE, ns.as_str().to_owned()),
        ],
    );
    assert_eq!(
        c.query(std::slice::from_ref(&bad))
            .await
            .err()
            .map(|e| e.status()),
        Some(Status::ERR_BAD_PARAM)
    );
    assert_eq!(
        c.query_nb(&[bad]).err().map(|e| e.status()),
        Some(Status::ERR_BAD_PARAM)
    );
    let again = clients[1].query_nb(&asked).unwrap().await.unwrap();
    assert_eq!(again.status, Status::ERR_PARTIAL_SUCCESS);
}

#[tokio::test]
async fn a_query_naming_a_namespace_reads_its_job_realm() {
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let of_the_job = vec![
        Info::new(attr::JOB_INFO, true),
        Info::new(attr::NSPACE, ns.as_str().to_owned()),
    ];
    // Without a host, a key the server does not hold is simply not found.
    let a = clients[0]
        .query(&[query(&[attr::JOB_SIZE.wire_key(), "app.color"], of_the_job)])
        .await
        .unwrap();
    assert_eq!(a.status, Status::ERR_PARTIAL_SUCCESS);
    let found = answers_in(&a.results[0]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].value.to_u64(), Some(2));
}

fn level_attrs(result: &Info, function: &str, level: &str) -> Option<Value> {
    let f = answers_in(result)
        .into_iter()
        .find(|i| i.key.as_str() == function)?;
    let Value::DataArray(levels) = &f.value else {
        return None;
    };
    levels.elements.iter().find_map(|v| match v {
        Value::Info(i) if i.key.as_str() == level => Some(i.value.clone()),
        _ => None,
    })
}

fn regattr_names(v: &Value) -> Vec<String> {
    match v {
        Value::DataArray(a) => a
            .elements
            .iter()
            .filter_map(|e| match e {
                Value::RegAttr(r) => r.name.clone(),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[tokio::test]
async fn attribute_support_spans_the_client_the_server_and_what_the_host_registered() {
    let (server, ns) = server(false, 1).await;
    let alloc = RegAttr {
        name: Some("PMIX_ALLOC_NUM_NODES".into()),
        string: Some(attr::ALLOC_NUM_NODES.wire_key().into()),
        data_type: pmix::model::DataType::UINT64,
        description: vec![Some("nodes to allocate".into())],
    };
    server
        .register_attributes("allocate", vec![alloc.clone()])
        .await
        .unwrap();
    assert_eq!(
        (server.register_attributes("allocate", vec![alloc]).await).map_err(|e| e.status()),
        Err(Status::ERR_REPEAT_ATTR_REGISTRATION)
    );
    let clients = memory_clients(&server, &ns, 1).await;
    let every_level = query(
        &[
            attr::QUERY_ATTRIBUTE_SUPPORT.wire_key(),
            "PMIx_Get",
            "PMIx_Allocation_request",
        ],
        vec![],
    );
    let a = clients[0].query(&[every_level]).await.unwrap();
    assert_eq!(a.status, Status::SUCCESS);
    let r = &a.results[0];
    let client_get = level_attrs(r, "PMIx_Get", attr::CLIENT_ATTRIBUTES.wire_key()).unwrap();
    assert!(regattr_names(&client_get).contains(&"PMIX_TIMEOUT".to_owned()));
    let server_get = level_attrs(r, "PMIx_Get", attr::SERVER_ATTRIBUTES.wire_key()).unwrap();
    assert!(regattr_names(&server_get).contains(&"PMIX_IMMEDIATE".to_owned()));
    let host_get = level_attrs(r, "PMIx_Get", attr::HOST_ATTRIBUTES.wire_key()).unwrap();
    assert_eq!(host_get, Value::Undef);
    let host_alloc = level_attrs(
        r,
        "PMIx_Allocation_request",
        attr::HOST_ATTRIBUTES.wire_key(),
    )
    .unwrap();
    assert_eq!(regattr_names(&host_alloc), ["PMIX_ALLOC_NUM_NODES"]);
    // The function lists come too, the host's naming what it registered.
    let host_fns = answers_in(r)
        .into_iter()
        .find(|i| i.key.as_str() == attr::HOST_FUNCTIONS.wire_key())
        .map(|i| i.value.clone());
    assert_eq!(host_fns, Some(Value::string("allocate")));
}
