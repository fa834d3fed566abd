//! Process monitoring under a real host. Rank 0 asks the host to watch its heartbeat (a
//! one-second period, one drop allowed), sends one beat, then falls silent; the host must
//! raise `PMIX_MONITOR_HEARTBEAT_ALERT` with rank 0 as the affected process. Then it asks the
//! host to watch a file it never touches; the host must raise `PMIX_MONITOR_FILE_ALERT`.
//! Prints `ok <step>` or `FAIL <step>: <reason>`; exits non-zero on a failure.

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use pmix::model::{Info, Status, Value, attr};

fn main() -> ExitCode {
    let Some(client) = pmix_tests::init_client() else {
        return ExitCode::FAILURE;
    };
    let me = client.proc().clone();
    let mut failed = false;
    if me.rank.0 == 0 {
        let (tx, rx) = mpsc::channel();
        let registered = client.register_event_handler(
            &[Status::MONITOR_HEARTBEAT_ALERT, Status::MONITOR_FILE_ALERT],
            &[],
            move |notice, done| {
                let affected = notice
                    .info
                    .iter()
                    .find_map(|i| i.get(attr::EVENT_AFFECTED_PROC));
                let _ = tx.send((notice.status, affected));
                done.complete(Status::SUCCESS, Vec::new());
            },
        );
        if let Err(s) = registered {
            println!("FAIL register: {s:?}");
            return ExitCode::FAILURE;
        }
        let watch = Info::new(attr::MONITOR_HEARTBEAT, Value::Undef);
        let every_second = [
            Info::new(attr::MONITOR_HEARTBEAT_TIME, 1u32),
            Info::new(attr::MONITOR_HEARTBEAT_DROPS, 1u32),
        ];
        let alert = Status::MONITOR_HEARTBEAT_ALERT;
        let started = client
            .process_monitor(&watch, alert, &every_second)
            .map(drop);
        match started.and_then(|()| client.heartbeat()) {
            Ok(()) => println!("ok monitor and one beat"),
            Err(s) => {
                println!("FAIL monitor: {s:?}");
                return ExitCode::FAILURE;
            }
        }
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok((Status::MONITOR_HEARTBEAT_ALERT, Some(p))) if p == me => {
                println!("ok alert for a silent process");
            }
            other => {
                println!("FAIL alert: {other:?}");
                failed = true;
            }
        }
        let cancel = [Info::new(attr::MONITOR_CANCEL, String::new())];
        let _ = client.process_monitor(&watch, alert, &cancel);
        let file = std::env::temp_dir().join(format!("monitor-check.{}", std::process::id()));
        let file_watch = Info::new(attr::MONITOR_FILE, file.display().to_string());
        let every_second = [Info::new(attr::MONITOR_FILE_CHECK_TIME, 1u32)];
        let started = std::fs::write(&file, "still")
            .map_err(|_| Status::ERROR)
            .and_then(|()| {
                client
                    .process_monitor(&file_watch, Status::MONITOR_FILE_ALERT, &every_second)
                    .map_err(|e| e.status())
            });
        if let Err(s) = started {
            println!("FAIL file monitor: {s:?}");
            failed = true;
        } else {
            // A heartbeat alert of the cancelled monitor may still be in flight: skip it.
            for attempt in 0..3 {
                match rx.recv_timeout(Duration::from_secs(60)) {
                    Ok((Status::MONITOR_FILE_ALERT, Some(p))) if p == me => {
                        println!("ok alert for an untouched file");
                        break;
                    }
                    Ok((Status::MONITOR_HEARTBEAT_ALERT, _)) if attempt < 2 => {}
                    other => {
                        println!("FAIL file alert: {other:?}");
                        failed = true;
                        break;
                    }
                }
            }
        }
        let _ = std::fs::remove_file(&file);
    }
    if let Err(s) = client.finalize() {
        println!("FAIL finalize: {s:?}");
        failed = true;
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
