//! Loading vectors: what parses, what is refused and why.

use super::*;

#[test]
fn an_uninitialized_status_is_seen_as_any_status_but_success() {
    let listed = |seen: &str| ExpectedFailure {
        step: 1,
        seen: seen.to_owned(),
        kind: FailureKind::Departure,
        reason: "r".to_owned(),
        intermittent: false,
    };
    let garbage = listed("uninitialized: f returns a status nothing sets");
    assert!(garbage.sees("PMIX_OPERATION_SUCCEEDED") && garbage.sees("32"));
    assert!(!garbage.sees("PMIX_SUCCESS"));
    assert!(!garbage.sees("value: 3") && !garbage.sees("crashed"));
    let exact = listed("PMIX_OPERATION_SUCCEEDED");
    assert!(exact.sees("PMIX_OPERATION_SUCCEEDED") && !exact.sees("32"));
}

fn parse(text: &str) -> Result<Vector, String> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("vec-test-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let f = dir.join("t.toml");
    std::fs::write(&f, text).map_err(|e| e.to_string())?;
    load_file(&f, "t").map_err(|e| e.message)
}

const GOOD: &str = r#"
summary = "job size"
section = "v5.0 §6.1"
rules = ["RJ-01"]

[[step]]
proc = "all"
call = "get"
target = { rank = "wildcard" }
key = "PMIX_JOB_SIZE"
expect.value = { uint32 = 2 }
"#;

#[test]
fn a_vector_loads_with_defaults() {
    let v = parse(GOOD).unwrap();
    assert_eq!(v.id, "t");
    assert_eq!(v.ranks(), vec![0, 1]);
    assert_eq!(v.callers(&v.steps[0]), vec![0, 1]);
    assert_eq!(v.steps[0].call.api(), Some("PMIx_Get"));
    assert_eq!(
        v.steps[0].call.attributes(),
        vec!["PMIX_JOB_SIZE".to_owned()]
    );
}

/// A vector whose rank 1 starts at an `init` step, with `steps` after the setup.
fn late_start(steps: &str) -> Result<Vector, String> {
    parse(&format!(
        "summary = \"late\"\nsection = \"v5.0 §4.3\"\n\n[setup]\nstarted_by_step = [1]\n{steps}"
    ))
}

#[test]
fn a_rank_started_by_a_step_calls_only_after_its_init() {
    let init = "[[step]]\nproc = 1\ncall = \"init\"\n";
    let commit = "[[step]]\nproc = 1\ncall = \"commit\"\n";
    let v = late_start(&format!("{init}{commit}")).unwrap();
    assert_eq!(v.started(), vec![0], "rank 1 does not start with the job");
    assert_eq!(v.steps[0].call.api(), Some("PMIx_Init"));
    let early = late_start(&format!("{commit}{init}")).unwrap_err();
    assert!(early.contains("does not run a client"), "{early}");
    let twice = late_start(&format!("{init}{init}")).unwrap_err();
    assert!(twice.contains("started already"), "{twice}");
    let other = late_start("[[step]]\nproc = 0\ncall = \"init\"\n").unwrap_err();
    assert!(other.contains("started_by_step"), "{other}");
}

const API_CALLS: &str = r#"
summary = "events and a query"
section = "v5.0 §10.1"

[[step]]
proc = 0
call = "register_event_handler"
handler = "h"
codes = ["PMIX_MODEL_DECLARED"]

[[step]]
proc = 0
call = "query"
nb = true
queries = [{ keys = ["PMIX_QUERY_NAMESPACES"], qualifiers = [{ key = "PMIX_NSPACE", value = { string = "vjob" } }] }]

[[step]]
proc = 0
call = "events"
handler = "h"
count = 1
expect.events = [{ status = "PMIX_MODEL_DECLARED", source = { rank = 1 } }]
"#;

#[test]
fn api_calls_name_their_apis_and_attributes() {
    let v = parse(API_CALLS).unwrap();
    assert_eq!(v.steps[0].call.api(), Some("PMIx_Register_event_handler"));
    assert_eq!(v.steps[1].call.api(), Some("PMIx_Query_info_nb"));
    assert_eq!(
        v.steps[1].call.attributes(),
        vec!["PMIX_QUERY_NAMESPACES".to_owned(), "PMIX_NSPACE".to_owned()]
    );
    assert_eq!(v.steps[2].call.api(), None);
    let e =
        parse(&API_CALLS.replace("handler = \"h\"\ncount", "handler = \"x\"\ncount")).unwrap_err();
    assert!(
        e.contains("step 3") && e.contains("never registered"),
        "{e}"
    );
    let e = parse(&API_CALLS.replace("PMIX_QUERY_NAMESPACES", "PMIX_QUERY_NOPE")).unwrap_err();
    assert!(e.contains("PMIX_QUERY_NOPE"), "{e}");
}

#[test]
fn an_api_call_travels_to_a_child_unchanged() {
    // A library target's rank resolves the step it receives as JSON.
    let v = parse(API_CALLS).unwrap();
    let call = &v.steps[1].call;
    let json = serde_json::to_string(call).unwrap();
    let back: Call = serde_json::from_str(&json).unwrap();
    let here = crate::api::resolve(call, "vjob", 0).unwrap();
    let there = crate::api::resolve(&back, "vjob", 0).unwrap();
    assert_eq!(format!("{here:?}"), format!("{there:?}"));
    assert!(matches!(
        there,
        Some(crate::api::ApiCall::Query { nb: true, .. })
    ));
}

#[test]
fn a_started_call_is_awaited_by_its_one_caller() {
    let started = r#"
summary = "a lookup started before the publish"
section = "v5.0 §9.1.3"

[[step]]
proc = 1
call = "lookup"
start = "l"
keys = ["k"]

[[step]]
proc = 0
call = "publish"
info = [{ key = "k", value = { uint8 = 1 } }]

[[step]]
proc = 1
call = "await"
handle = "l"
"#;
    let v = parse(started).unwrap();
    assert_eq!(v.steps[0].start.as_deref(), Some("l"));
    let e = parse(&started.replace(
        "proc = 1\ncall = \"lookup\"",
        "proc = [0, 1]\ncall = \"lookup\"",
    ))
    .unwrap_err();
    assert!(e.contains("step 1") && e.contains("one caller"), "{e}");
    let e = parse(&started.replace(
        "start = \"l\"\n",
        "start = \"l\"\nexpect.status = \"PMIX_SUCCESS\"\n",
    ))
    .unwrap_err();
    assert!(e.contains("at its `await`"), "{e}");
    let vanish = started.replace(
        "call = \"lookup\"\nstart = \"l\"\nkeys = [\"k\"]",
        "call = \"vanish\"\nstart = \"l\"",
    );
    let e = parse(&vanish).unwrap_err();
    assert!(e.contains("only an API call"), "{e}");
}

#[test]
fn expected_upcalls_are_checked_where_they_are_written() {
    let fence = r#"
summary = "a fence reaches the host"
section = "v5.0 §5.2.1"

[[step]]
proc = "all"
call = "fence"
expect.upcalls = [{ upcall = "pmix_server_fencenb_fn_t", procs = [{ rank = "wildcard" }], info = [{ key = "PMIX_COLLECT_DATA" }], keys = ["PMIX_TIMEOUT"] }]
"#;
    let v = parse(fence).unwrap();
    let u = &v.steps[0].expect.upcalls[0];
    assert_eq!(u.upcall, "pmix_server_fencenb_fn_t");
    assert_eq!((u.procs.len(), u.info.len(), u.keys.len()), (1, 1, 1));
    let e = parse(&fence.replace("PMIX_TIMEOUT", "PMIX_NO_SUCH_KEY")).unwrap_err();
    assert!(
        e.contains("expect.upcalls") && e.contains("PMIX_NO_SUCH_KEY"),
        "{e}"
    );
    let e = parse(&fence.replace("procs = [", "prox = [")).unwrap_err();
    assert!(e.contains("prox"), "{e}");
    let started = fence.replace("call = \"fence\"", "call = \"fence\"\nstart = \"f\"");
    let e = parse(&started.replace("proc = \"all\"", "proc = 0")).unwrap_err();
    assert!(e.contains("expected at its `await`"), "{e}");
}

#[test]
fn bad_vectors_name_the_line_and_field() {
    let unknown_field = GOOD.replace("key = ", "kee = ");
    let e = parse(&unknown_field).unwrap_err();
    assert!(e.contains("line") && e.contains("kee"), "{e}");
    let bad_attr = GOOD.replace("PMIX_JOB_SIZE", "PMIX_JOB_SIZ");
    let e = parse(&bad_attr).unwrap_err();
    assert!(e.contains("step 1") && e.contains("PMIX_JOB_SIZ"), "{e}");
    let bad_rank = GOOD.replace("proc = \"all\"", "proc = 7");
    let e = parse(&bad_rank).unwrap_err();
    assert!(e.contains("field `proc`") && e.contains("rank 7"), "{e}");
    let bad_type = GOOD.replace("{ uint32 = 2 }", "{ uint33 = 2 }");
    let e = parse(&bad_type).unwrap_err();
    assert!(e.contains("line"), "{e}");
    let bad_status = format!("{GOOD}expect.status = \"PMIX_ERR_NOPE\"\n");
    let e = parse(&bad_status).unwrap_err();
    assert!(e.contains("PMIX_ERR_NOPE"), "{e}");
    let dangling = GOOD.replace("call = \"get\"", "call = \"await\"\nhandle = \"h\"");
    assert!(parse(&dangling).is_err());
}

/// An expected failure names what it saw: a wrong value, a timeout, a crash, a refusal or
/// missing upcalls by themselves are not enough.
#[test]
fn an_expected_failure_names_the_value_or_the_timeout_it_saw() {
    let listed = |seen: &str| {
        GOOD.replace(
                "[[step]]",
                &format!(
                    "[expected_failure]\nrust = {{ step = 1, seen = \"{seen}\", reason = \"r\" }}\n[[step]]"
                ),
            )
    };
    for bare in [
        "value",
        "timeout",
        "value: ",
        "timeout:  ",
        "crashed",
        "refused",
        "upcalls",
        "upcalls: ",
    ] {
        let e = parse(&listed(bare)).unwrap_err();
        assert!(e.contains("with what was seen"), "{bare}: {e}");
    }
    for named in [
        "value: Uint32(3)",
        "timeout: PMIx_Get incomplete after 10 s",
        "PMIX_ERR_NOT_FOUND",
        "crashed: rank 1 killed by SIGSEGV",
        "upcalls: fence_nb missing",
        "no such call",
    ] {
        assert!(parse(&listed(named)).is_ok(), "{named}");
    }
}

const SERVER_STEPS: &str = r#"
summary = "a server's step and a client's step use the value the server saved"
section = "v5.0 §16.2.17"

[[step]]
proc = "server:n0"
call = "server_generate_locality_string"
cpus = "0"
save = "here"

[[step]]
proc = 0
call = "get_relative_locality"
locality1 = "$here"
locality2 = "$here"
"#;

#[test]
fn servers_are_callers_of_their_own_calls() {
    let v = parse(SERVER_STEPS).unwrap();
    assert_eq!(v.server_of(&v.steps[0]), Some(0));
    assert_eq!(v.callers(&v.steps[0]), vec![SERVER_CALLER]);
    assert_eq!(caller_name(SERVER_CALLER), "server of node #0");
    assert_eq!(
        v.steps[0].call.api(),
        Some("PMIx_server_generate_locality_string")
    );
    assert_eq!(v.server_of(&v.steps[1]), None);

    let unknown_node = SERVER_STEPS.replace("server:n0", "server:n9");
    let e = parse(&unknown_node).unwrap_err();
    assert!(e.contains("step 1") && e.contains("server:n9"), "{e}");
    let client_makes_server_call = SERVER_STEPS.replacen("proc = \"server:n0\"", "proc = 0", 1);
    let e = parse(&client_makes_server_call).unwrap_err();
    assert!(e.contains("server:NODE"), "{e}");
    let server_makes_client_call = SERVER_STEPS.replace("proc = 0", "proc = \"server:n0\"");
    let e = parse(&server_makes_client_call).unwrap_err();
    assert!(
        e.contains("step 2") && e.contains("only the calls of a server"),
        "{e}"
    );
    let tool = "[[step]]\nproc = \"tool\"\ncall = \"tool_init\"\ninfo = [{ key = \"PMIX_SERVER_URI\", value = { string = \"$uri_n0\" } }]\n";
    let v = parse(&format!("{SERVER_STEPS}{tool}")).unwrap();
    assert!(v.by_tool(&v.steps[2]));
    assert_eq!(v.callers(&v.steps[2]), vec![TOOL_CALLER]);
    let e = parse(&format!("{SERVER_STEPS}{}", tool.replace("\"tool\"", "0"))).unwrap_err();
    assert!(e.contains("step 3") && e.contains("\"tool\""), "{e}");
    let unsaved = SERVER_STEPS.replace("save = \"here\"", "");
    let e = parse(&unsaved).unwrap_err();
    assert!(
        e.contains("step 2") && e.contains("no earlier step saves here"),
        "{e}"
    );
}

const SUPPORT: &str = r#"
summary = "a pack and its unpack"
section = "v5.0 §11.3.1, §11.3.2"
apis = ["PMIx_Data_unpack"]

[[step]]
proc = 0
call = "data_pack"
values = { array = { of = "PMIX_UINT32", items = [{ uint32 = 1 }] } }

[[step]]
proc = 0
call = "string"
function = "PMIx_Data_type_string"
arg = "PMIX_UINT32"
expect.starts_with = ""
"#;

#[test]
fn support_calls_name_every_api_they_make() {
    let v = parse(SUPPORT).unwrap();
    assert_eq!(v.steps[0].call.api(), Some("PMIx_Data_pack"));
    assert_eq!(v.steps[0].call.more_apis(), ["PMIx_Data_unpack"]);
    assert_eq!(v.steps[1].call.api(), Some("PMIx_Data_type_string"));
    let unnamed = SUPPORT.replace("apis = [\"PMIx_Data_unpack\"]\n", "");
    let e = parse(&unnamed).unwrap_err();
    assert!(
        e.contains("step 1") && e.contains("PMIx_Data_unpack"),
        "{e}"
    );
    let e = parse(&SUPPORT.replace("PMIx_Data_type_string", "PMIx_Nope_string")).unwrap_err();
    assert!(
        e.contains("step 2") && e.contains("PMIx_Nope_string"),
        "{e}"
    );
    let e = parse(&SUPPORT.replace("arg = \"PMIX_UINT32\"", "arg = \"PMIX_GLOBAL\"")).unwrap_err();
    assert!(e.contains("PMIX_GLOBAL"), "{e}");
    let e = parse(&SUPPORT.replace("PMIX_UINT32\", items", "PMIX_TOPO\", items")).unwrap_err();
    assert!(e.contains("step 1"), "{e}");
}
