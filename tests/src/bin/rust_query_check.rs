//! Queries under a real host, the steps of `interop/python/query_check.py` for this crate's
//! client: the active namespaces and the job's process table in one `PMIx_Query_info`, each
//! answer in its own `PMIX_QUERY_RESULTS` (the table with this process's pid), a query pairing
//! `PMIX_PROCID` with `PMIX_RANK` refused, and the client level's supported attributes of
//! `PMIx_Get`. Prints `ok <step>` or `FAIL <step>: <reason>`; exits non-zero on a failure.

use std::process::ExitCode;

use pmix::model::{Info, Query, Rank, Status, Value, attr};

fn query(keys: &[&str], qualifiers: Vec<Info>) -> Query {
    Query {
        keys: keys.iter().map(|k| Some((*k).to_owned())).collect(),
        qualifiers,
    }
}

fn main() -> ExitCode {
    let Some(client) = pmix_tests::init_client() else {
        return ExitCode::FAILURE;
    };
    let me = client.proc().clone();
    let size = pmix_tests::job_size(&client);
    let mut failed = false;
    let mut fail = |line: String| {
        println!("{line}");
        failed = true;
    };

    let mine = vec![Info::new(attr::NSPACE, me.nspace.as_str().to_owned())];
    let asked = [
        query(&[attr::QUERY_NAMESPACES.wire_key()], Vec::new()),
        query(&[attr::QUERY_PROC_TABLE.wire_key()], mine),
    ];
    match client.query(&asked) {
        Ok(a) if a.status == Status::SUCCESS && a.results.len() == 2 => {
            let first = pmix::query::answers_in(&a.results[0]);
            let names = first.first().and_then(|i| i.value.as_str()).unwrap_or("");
            if names.split(',').any(|n| n == me.nspace.as_str()) {
                println!("ok namespaces");
            } else {
                fail(format!("FAIL namespaces: {names:?}"));
            }
            let second = pmix::query::answers_in(&a.results[1]);
            let table: Vec<_> = match second.first().map(|i| &i.value) {
                Some(Value::DataArray(t)) => t
                    .elements
                    .iter()
                    .filter_map(|v| match v {
                        Value::ProcInfo(p) => Some(p.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let ranks: Vec<u64> = table.iter().map(|p| u64::from(p.proc.rank.0)).collect();
            let own_pid = table.iter().find(|p| p.proc.rank == me.rank).map(|p| p.pid);
            if ranks == (0..size).collect::<Vec<_>>()
                && own_pid == i32::try_from(std::process::id()).ok()
            {
                println!("ok proc table of {} with my pid", table.len());
            } else {
                fail(format!("FAIL proc table: {table:?}"));
            }
        }
        other => fail(format!("FAIL query: {other:?}")),
    }

    let bad = vec![
        Info::new(attr::PROCID, me.clone()),
        Info::new(attr::RANK, Rank(0)),
    ];
    match client
        .query(&[query(&[attr::JOB_SIZE.wire_key()], bad)])
        .map_err(|e| e.status())
    {
        Err(Status::ERR_BAD_PARAM) => println!("ok procid with rank refused"),
        other => fail(format!("FAIL procid with rank: {other:?}")),
    }

    let support = query(
        &[attr::QUERY_ATTRIBUTE_SUPPORT.wire_key(), "PMIx_Get"],
        vec![Info::new(attr::CLIENT_ATTRIBUTES, true)],
    );
    match client.query(&[support]) {
        Ok(a) if format!("{:?}", a.results).contains("PMIX_TIMEOUT") => {
            println!("ok attribute support");
        }
        other => fail(format!("FAIL attribute support: {other:?}")),
    }

    if let Err(s) = client.finalize() {
        fail(format!("FAIL finalize: {s:?}"));
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
