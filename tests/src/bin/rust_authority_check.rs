//! What a process may ask its launcher to do to others (run by the security test):
//!
//! 1. a cleanup of a file this user owns (the first argument) is registered; one of a path
//!    another user owns (the second argument) is refused with `PMIX_ERR_NO_PERMISSIONS`;
//! 2. a job this one spawns (this program again, as `child`) may not signal its parent's
//!    job: its `PMIx_Job_control` is refused with `PMIX_ERR_NO_PERMISSIONS`, and the parent
//!    is still there to hear the child's job end.
//!
//! Prints `ok <step>` or `FAIL <step>: <reason>`; exits non-zero on a failure.

use std::process::ExitCode;
use std::time::Duration;

use pmix::client::blocking::Client;
use pmix::model::{App, Info, Proc, Rank, Status, Text, attr};

fn main() -> ExitCode {
    let Some(client) = pmix_tests::init_client() else {
        return ExitCode::FAILURE;
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("child") => child(&client),
        _ => parent(&client, &args),
    };
    let _ = client.finalize();
    result
}

/// Print the step's verdict; whether it passed.
fn report(step: &str, r: Result<(), String>) -> bool {
    match r {
        Ok(()) => {
            println!("ok {step}");
            true
        }
        Err(why) => {
            println!("FAIL {step}: {why}");
            false
        }
    }
}

fn parent(client: &Client, args: &[String]) -> ExitCode {
    let (Some(mine), Some(theirs)) = (args.first(), args.get(1)) else {
        println!("FAIL arguments: a path of mine and one of another user");
        return ExitCode::FAILURE;
    };
    let cleanup = |path: &str| {
        let ask = [Info::new(attr::REGISTER_CLEANUP, path.to_owned())];
        client.job_control(&[], &ask).map(|_| ())
    };
    let own = cleanup(mine).map_err(|s| format!("{s:?}"));
    let other = match cleanup(theirs).map_err(|e| e.status()) {
        Err(Status::ERR_NO_PERMISSIONS) => Ok(()),
        other => Err(format!("{other:?}")),
    };
    let verdicts = [
        report("cleanup of my own file", own),
        report("cleanup of another user's file refused", other),
        report("spawned job ended, parent untouched", spawn_child(client)),
    ];
    if verdicts.iter().all(|v| *v) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Spawn this program as a child job and wait for its end.
fn spawn_child(client: &Client) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    client
        .register_event_handler(&[Status::EVENT_JOB_END], &[], move |notice, done| {
            let _ = tx.send(notice.info.clone());
            done.complete(Status::SUCCESS, Vec::new());
        })
        .map_err(|s| format!("register: {s:?}"))?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let me = Text::from(me.as_os_str().as_encoded_bytes());
    let app = App {
        cmd: Some(me.clone()),
        argv: vec![Some(me), Some("child".into())],
        maxprocs: 1,
        ..App::default()
    };
    let job_info = [Info::new(attr::NOTIFY_COMPLETION, true)];
    client
        .spawn(&job_info, &[app])
        .map_err(|s| format!("spawn: {s:?}"))?;
    let info = rx
        .recv_timeout(Duration::from_secs(60))
        .map_err(|_| "no PMIX_EVENT_JOB_END".to_owned())?;
    match info.iter().find_map(|i| i.get(attr::JOB_TERM_STATUS)) {
        Some(Status::SUCCESS) => Ok(()),
        other => Err(format!("the child's job ended with {other:?}")),
    }
}

/// The spawned job: try to terminate the parent's job, which must be refused.
fn child(client: &Client) -> ExitCode {
    let parent = client
        .get(None, attr::PARENT_ID.wire_key(), &[])
        .ok()
        .and_then(|v| v.as_proc().cloned());
    let Some(parent) = parent else {
        println!("FAIL child: no PMIX_PARENT_ID");
        return ExitCode::FAILURE;
    };
    let job = Proc::new(parent.nspace, Rank::WILDCARD);
    let ask = [Info::new(attr::JOB_CTRL_TERMINATE, true)];
    match client.job_control(&[job], &ask).map_err(|e| e.status()) {
        Err(Status::ERR_NO_PERMISSIONS) => {
            println!("ok child may not terminate its parent's job");
            ExitCode::SUCCESS
        }
        other => {
            println!("FAIL child terminating its parent's job: {other:?}");
            ExitCode::FAILURE
        }
    }
}
