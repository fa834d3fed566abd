//! Events under a real host: every rank registers for `PMIX_EVENT_PROC_TERMINATED`, the
//! ranks fence, and all but rank 0 finalize and exit. Rank 0 must then hear of each of them
//! from the host (`pmixrun`), with the rank as the affected process and exit code 0; rank 1
//! also notifies a code of its own to the namespace before leaving, which rank 0 must see with
//! rank 1 as its source. Prints `ok <step>` or `FAIL <step>: <reason>`; exits non-zero on a
//! failure.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use pmix::model::{DataRange, Rank, Status, attr};

/// An application's own event code (positive codes are the application's, §10.1.2).
const HELLO: Status = Status(4242);

fn main() -> ExitCode {
    let Some(client) = pmix_tests::init_client() else {
        return ExitCode::FAILURE;
    };
    let me = client.proc().clone();
    let size = pmix_tests::job_size(&client);
    let (tx, rx) = mpsc::channel();
    let registered = client.register_event_handler(
        &[Status::EVENT_PROC_TERMINATED, HELLO],
        &[],
        move |notice, done| {
            let affected = notice
                .info
                .iter()
                .find_map(|i| i.get(attr::EVENT_AFFECTED_PROC));
            let code = notice.info.iter().find_map(|i| i.get(attr::EXIT_CODE));
            let _ = tx.send((notice.status, notice.source.clone(), affected, code));
            done.complete(Status::SUCCESS, Vec::new());
        },
    );
    if let Err(s) = registered {
        println!("FAIL register: {s:?}");
        return ExitCode::FAILURE;
    }
    println!("ok register");
    if let Err(s) = client.fence(&[], &[]) {
        println!("FAIL fence: {s:?}");
        return ExitCode::FAILURE;
    }
    if me.rank.0 == 1
        && let Err(s) = client.notify_event(HELLO, None, DataRange::NAMESPACE, &[])
    {
        println!("FAIL notify: {s:?}");
        return ExitCode::FAILURE;
    }
    if me.rank.0 != 0 {
        let _ = client.finalize();
        println!("ok leave");
        return ExitCode::SUCCESS;
    }
    let mut ended = BTreeSet::new();
    let mut hello = false;
    let mut failed = false;
    while ended.len() + 1 < size as usize || (size > 1 && !hello) {
        let Ok((status, source, affected, code)) = rx.recv_timeout(Duration::from_secs(30)) else {
            println!("FAIL events: only {ended:?} ended and hello={hello} within 30 s");
            return ExitCode::FAILURE;
        };
        if status == HELLO {
            hello = source.rank == Rank(1);
            if !hello {
                println!("FAIL hello: from {source:?}");
                failed = true;
            }
            continue;
        }
        match (affected, code) {
            (Some(p), Some(0)) if p.nspace == me.nspace => {
                ended.insert(p.rank.0);
            }
            other => {
                println!("FAIL termination event: {other:?}");
                failed = true;
            }
        }
    }
    println!("ok events {} terminations and hello={hello}", ended.len());
    let _ = client.finalize();
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
