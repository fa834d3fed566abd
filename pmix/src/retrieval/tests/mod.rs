//! One test per retrieval rule the engine decides, named after the rule.
//! The rules' families have a file each; the coverage check below reads them all.

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

/// The whole job "job".
fn job_wild() -> Proc {
    Proc::try_new("job", Rank::WILDCARD).unwrap()
}

/// A client cache that knows the job of [`realms`].
fn cache() -> ClientCache {
    let mut c = ClientCache::default();
    c.realms.insert(Nspace::new("job").unwrap(), realms());
    c
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

/// A get from rank 0 of "job" at the server of [`store`], whose host does or does not
/// serve direct modex.
fn ask_server(target: &Proc, key: &str, info: &[Info], dmodex: bool) -> ServerStep {
    server_get(
        &store(),
        &p("job", 0),
        target,
        Some(key),
        &dir(info),
        dmodex,
    )
}

/// The value rank 0 of "job" gets for `key` of `rank` when the job's realms are `r`.
fn get_with(r: JobRealms, key: &str, rank: Rank, info: &[Info]) -> Option<Value> {
    let mut s = store();
    s.namespaces.insert(Nspace::new("job").unwrap(), r);
    let target = Proc::try_new("job", rank).unwrap();
    let step = server_get(&s, &p("job", 0), &target, Some(key), &dir(info), false);
    reply_value(step, key).ok()
}

/// The value rank 0 of "job" gets for `key` of `rank` (the realms of [`realms`]).
fn get_reserved(key: &str, rank: Rank, info: &[Info]) -> Option<Value> {
    get_with(realms(), key, rank, info)
}

mod contract;
mod group_values;
mod non_reserved;
mod realms;
mod reserved;
mod scopes;

/// Rules whose subject is not the engine's decision, with where they are checked instead.
const ELSEWHERE: &[(&str, &str)] = &[
    (
        "G-02",
        "C memory ownership of the returned value: the C ABI's concern (Rust returns owned values)",
    ),
    (
        "G-03",
        "PMIX_GET_POINTER_VALUES: C memory, the C ABI's concern",
    ),
    (
        "G-04",
        "PMIX_GET_STATIC_VALUES: C memory, the C ABI's concern",
    ),
    (
        "G-05",
        "PMIX_GET_STATIC_VALUES with NULL storage: a C-ABI parameter check",
    ),
    (
        "G-06",
        "PMIX_GET_STATIC_VALUES unsupported: a C-ABI decision",
    ),
    (
        "G-07",
        "PMIx_Get_nb's attribute list: a C-ABI signature fact",
    ),
    (
        "G-09",
        "PMIx_Get_nb's callback discipline: client API (client::blocking::Client::get_nb calls back exactly once by construction)",
    ),
    (
        "G-15",
        "C signatures of v5.0 and the errata: the C ABI's concern",
    ),
    (
        "P-03",
        "the Rust API takes the value by value; the C ABI copies it before returning",
    ),
    (
        "P-06",
        "draft/v4.x only; v5.0, the version implemented, dropped the rule",
    ),
    (
        "P-07",
        "PMIx_Commit's timing: client API; like OpenPMIx 4.2 the client waits for the server's acknowledgement",
    ),
    (
        "N-10",
        "about implementations that are not client/server; this one is",
    ),
    ("N-14", "guidance to users, no behaviour"),
    (
        "R-06",
        "server::core::host_tests::direct_modex_the_host_cannot_answer_ends_the_get_with_its_status",
    ),
    (
        "RJ-07",
        "vector realms/local-cpusets-follow-local-peers (the host's topology makes the strings)",
    ),
    (
        "RJ-08",
        "vector realms/spawned-job-command-line (the host builds a spawned job's information)",
    ),
    (
        "RN-07",
        "vector realms/fabric-keys-ignore-the-proc (the host's fabric answers)",
    ),
    (
        "DM-01",
        "server::core::host_tests::dmodex_request_waits_for_the_commit",
    ),
    (
        "DM-02",
        "server::core::host_tests::direct_modex_the_host_cannot_answer_ends_the_get_with_its_status",
    ),
    (
        "DM-03",
        "server::core::host_tests::dmodex_request_with_a_required_key_waits_for_that_key",
    ),
    (
        "DM-04",
        "server::core::host_tests::fence_with_remote_participants_goes_to_the_host_once_with_the_local_data",
    ),
];

/// A place named in [`ELSEWHERE`] exists: a test of the server's rules (they live in
/// `host_tests`) or a conformance vector that names the rule; other places are prose.
fn documented_place_exists(rule: &str, place: &str, host_tests: &str) -> bool {
    if let Some(rest) = place.strip_prefix("server::core::") {
        return rest
            .strip_prefix("host_tests::")
            .is_some_and(|name| host_tests.contains(&format!("fn {name}(")));
    }
    if let Some(rest) = place.strip_prefix("vector ") {
        let name = rest.split_whitespace().next().unwrap_or_default();
        let path = format!(
            "{}/../spec-vectors/vectors/{name}.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        return std::fs::read_to_string(path)
            .is_ok_and(|text| text.contains(&format!("\"{rule}\"")));
    }
    true
}

#[test]
fn every_retrieval_rule_has_a_test_or_a_documented_place() {
    let rules = include_str!("../../../../spec-vectors/inventory/retrieval_rules.tsv");
    let here = [
        include_str!("contract.rs"),
        include_str!("non_reserved.rs"),
        include_str!("realms.rs"),
        include_str!("reserved.rs"),
        include_str!("scopes.rs"),
    ]
    .concat();
    let host_tests = include_str!("../../server/core/host_tests.rs");
    let mut missing = Vec::new();
    for line in rules.lines().skip(1) {
        let Some(id) = line.split('\t').next().filter(|s| !s.is_empty()) else {
            continue;
        };
        let prefix = format!("fn {}_", id.to_lowercase().replace('-', "_"));
        let elsewhere = ELSEWHERE.iter().find(|(r, _)| *r == id);
        let ok = here.contains(&prefix)
            || elsewhere.is_some_and(|(_, place)| documented_place_exists(id, place, host_tests));
        if !ok {
            missing.push(id.to_owned());
        }
    }
    assert!(missing.is_empty(), "rules without a test: {missing:?}");
    assert_eq!(rules.lines().skip(1).filter(|l| !l.is_empty()).count(), 103);
}
