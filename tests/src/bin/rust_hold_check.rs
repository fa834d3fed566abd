//! A job that stays up while the security test tries to get in: every rank posts a value and
//! fences, says `ready <rank>`, and waits until the file named by its first argument exists.
//! Then it fences again and reads the next rank's value — a rank whose connection an intruder
//! took over would hang or fail here — and says `ok after intruders`. Prints `FAIL <step>:
//! <reason>` and exits non-zero on a failure.

use std::process::ExitCode;
use std::time::Duration;

use pmix::model::{Info, Proc, Rank, Scope, Value, attr};

fn main() -> ExitCode {
    let Some(client) = pmix_tests::init_client() else {
        return ExitCode::FAILURE;
    };
    let me = client.proc().clone();
    let size = u32::try_from(pmix_tests::job_size(&client))
        .unwrap_or(0)
        .max(1);
    let marker = std::env::args().nth(1).unwrap_or_default();
    let collect = [Info::new(attr::COLLECT_DATA, true)];
    let posted = client
        .put(Scope::GLOBAL, "hold", Value::Uint32(me.rank.0))
        .and_then(|()| client.commit())
        .and_then(|()| client.fence(&[], &collect));
    if let Err(s) = posted {
        println!("FAIL first fence: {s:?}");
        return ExitCode::FAILURE;
    }
    println!("ready {}", me.rank.0);
    // Bounded by the launcher's --timeout.
    while !std::path::Path::new(&marker).exists() {
        std::thread::sleep(Duration::from_millis(100));
    }
    let next = Proc::new(me.nspace.clone(), Rank((me.rank.0 + 1) % size));
    let checked = client
        .fence(&[], &[])
        .and_then(|()| client.get(Some(&next), "hold", &[]));
    let result = match checked {
        Ok(Value::Uint32(r)) if r == next.rank.0 => {
            println!("ok after intruders");
            ExitCode::SUCCESS
        }
        other => {
            println!("FAIL after intruders: {other:?}");
            ExitCode::FAILURE
        }
    };
    let _ = client.finalize();
    result
}
