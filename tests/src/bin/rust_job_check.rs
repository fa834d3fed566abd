//! Job control, spawn notifications and launcher queries under a real host, from one process:
//!
//! 1. a checkpoint requested by event reaches the process's `PMIX_JCTRL_CHECKPOINT` handler
//!    with the checkpoint's id;
//! 2. a cleanup of the file named by the first argument, registered under a request id, is
//!    withdrawn by cancelling that id (the test checks the file outlives the job), and a
//!    second cancel of it finds nothing; a restart from a checkpoint is not supported;
//! 3. a job spawned with `PMIX_NOTIFY_COMPLETION` (this program again, as `child`) ends with
//!    `PMIX_EVENT_JOB_END` to its parent, naming the job and its status;
//! 4. the host answers spawn support and memory use.
//!
//! Prints `ok <step>` or `FAIL <step>: <reason>`; exits non-zero on a failure.

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use pmix::client::blocking::Client;
use pmix::model::{App, Info, Proc, Query, Rank, Status, Text, Value, attr};

fn main() -> ExitCode {
    let Some(client) = pmix_tests::init_client() else {
        return ExitCode::FAILURE;
    };
    if std::env::args().nth(1).as_deref() == Some("child") {
        return match client.finalize() {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        };
    }
    let keep = std::env::args().nth(1).unwrap_or_default();
    let steps: [(&str, Step); 4] = [
        ("checkpoint by event", |c, _| checkpoint(c)),
        ("cancel and restart", cancel_and_restart),
        ("spawned job's end", |c, _| spawned_job_end(c)),
        ("queries", |c, _| queries(c)),
    ];
    let mut failed = false;
    for (name, step) in steps {
        match step(&client, &keep) {
            Ok(()) => println!("ok {name}"),
            Err(why) => {
                println!("FAIL {name}: {why}");
                failed = true;
            }
        }
    }
    let _ = client.finalize();
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// One step of the check: the client, and the path of the file whose cleanup is cancelled.
type Step = fn(&Client, &str) -> Result<(), String>;

/// Wait for the first event a handler for `codes` sees, with its info.
fn handler(client: &Client, codes: &[Status]) -> Result<mpsc::Receiver<Vec<Info>>, String> {
    let (tx, rx) = mpsc::channel();
    client
        .register_event_handler(codes, &[], move |notice, done| {
            let _ = tx.send(notice.info.clone());
            done.complete(Status::SUCCESS, Vec::new());
        })
        .map_err(|s| format!("register: {s:?}"))?;
    Ok(rx)
}

fn checkpoint(client: &Client) -> Result<(), String> {
    let heard = handler(client, &[Status::JCTRL_CHECKPOINT])?;
    let me = client.proc().clone();
    let ask = [
        Info::new(attr::JOB_CTRL_CHECKPOINT, "ckpt-7".to_owned()),
        Info::new(attr::JOB_CTRL_CHECKPOINT_EVENT, true),
    ];
    client
        .job_control(&[me], &ask)
        .map_err(|s| format!("job control: {s:?}"))?;
    let info = heard
        .recv_timeout(Duration::from_secs(30))
        .map_err(|_| "no PMIX_JCTRL_CHECKPOINT event".to_owned())?;
    let id = info.iter().find_map(|i| i.get(attr::JOB_CTRL_CHECKPOINT));
    if id.as_deref() != Some("ckpt-7") {
        return Err(format!("the event names checkpoint {id:?}"));
    }
    Ok(())
}

fn cancel_and_restart(client: &Client, keep: &str) -> Result<(), String> {
    std::fs::write(keep, b"kept").map_err(|e| format!("cannot write {keep:?}: {e}"))?;
    let register = [
        Info::new(attr::JOB_CTRL_ID, "cleanup-1".to_owned()),
        Info::new(attr::REGISTER_CLEANUP, keep.to_owned()),
    ];
    let cancel = [Info::new(attr::JOB_CTRL_CANCEL, "cleanup-1".to_owned())];
    client
        .job_control(&[], &register)
        .map_err(|s| format!("register cleanup: {s:?}"))?;
    client
        .job_control(&[], &cancel)
        .map_err(|s| format!("cancel: {s:?}"))?;
    match client.job_control(&[], &cancel).map_err(|e| e.status()) {
        Err(Status::ERR_NOT_FOUND) => {}
        other => return Err(format!("a second cancel answered {other:?}")),
    }
    let restart = [Info::new(attr::JOB_CTRL_RESTART, "ckpt-7".to_owned())];
    match client.job_control(&[], &restart).map_err(|e| e.status()) {
        Err(Status::ERR_NOT_SUPPORTED) => {}
        other => return Err(format!("restart answered {other:?}")),
    }
    Ok(())
}

fn spawned_job_end(client: &Client) -> Result<(), String> {
    let ended = handler(client, &[Status::EVENT_JOB_END])?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let me = Text::from(me.as_os_str().as_encoded_bytes());
    let app = App {
        cmd: Some(me.clone()),
        argv: vec![Some(me), Some("child".into())],
        maxprocs: 2,
        ..App::default()
    };
    let job_info = [Info::new(attr::NOTIFY_COMPLETION, true)];
    let child = client
        .spawn(&job_info, &[app])
        .map_err(|s| format!("spawn: {s:?}"))?;
    let info = ended
        .recv_timeout(Duration::from_secs(60))
        .map_err(|_| "no PMIX_EVENT_JOB_END".to_owned())?;
    let affected = info.iter().find_map(|i| i.get(attr::EVENT_AFFECTED_PROC));
    if affected != Some(Proc::new(child.clone(), Rank::WILDCARD)) {
        return Err(format!("the end names {affected:?}, not {child}"));
    }
    let status = info.iter().find_map(|i| i.get(attr::JOB_TERM_STATUS));
    if status != Some(Status::SUCCESS) {
        return Err(format!("job status {status:?}"));
    }
    if !info.iter().any(|i| i.is(attr::EVENT_TIMESTAMP)) {
        return Err("no PMIX_EVENT_TIMESTAMP".into());
    }
    Ok(())
}

fn queries(client: &Client) -> Result<(), String> {
    let query = |key: &str| Query {
        keys: vec![Some(key.to_owned())],
        qualifiers: Vec::new(),
    };
    let asked = [
        query(attr::QUERY_SPAWN_SUPPORT.wire_key()),
        query(attr::QUERY_MEMORY_USAGE.wire_key()),
    ];
    let a = client.query(&asked).map_err(|s| format!("query: {s:?}"))?;
    if a.results.len() != 2 {
        return Err(format!("{} results for 2 queries", a.results.len()));
    }
    let spawn = pmix::query::answers_in(&a.results[0]);
    let listed = spawn
        .iter()
        .find_map(|i| i.value.as_str())
        .unwrap_or_default();
    if !listed
        .split(',')
        .any(|k| k == attr::NOTIFY_COMPLETION.wire_key())
    {
        return Err(format!("spawn support lists {listed:?}"));
    }
    let memory = pmix::query::answers_in(&a.results[1]);
    let Some(Value::DataArray(usage)) = memory.first().map(|i| &i.value) else {
        return Err(format!("memory usage: {memory:?}"));
    };
    let rss = usage.elements.iter().find_map(|v| match v {
        Value::Info(i) => i.get(attr::CLIENT_AVG_MEMORY),
        _ => None,
    });
    if !rss.is_some_and(|mb| mb > 0.0) {
        return Err(format!("client memory {rss:?}"));
    }
    Ok(())
}
