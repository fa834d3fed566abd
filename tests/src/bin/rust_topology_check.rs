//! Topology and locality under a real host (`pmixrun --bind-to hwthread`): the server shares
//! the machine's topology and the client loads it; the process's `PMIX_CPUSET` is the binding
//! `PMIx_Get_cpuset` reads; the locality strings of this process and of every local peer give
//! a relative locality that says they share the node (and, with itself, the hardware thread);
//! device distances computed from the binding are the ones the host gave
//! (`PMIX_DEVICE_DISTANCES`). Prints `ok <step>` or
//! `FAIL <step>: <reason>`; exits non-zero on a failure.

use std::process::ExitCode;

use pmix::model::topology::{parse_cpuset_string, relative_locality};
use pmix::model::{Locality, Proc, Rank, Value, attr};

fn main() -> ExitCode {
    let Some(client) = pmix_tests::init_client() else {
        return ExitCode::FAILURE;
    };
    let mut failed = false;
    let mut step = |what: &str, r: Result<(), String>| match r {
        Ok(()) => println!("ok {what}"),
        Err(e) => {
            println!("FAIL {what}: {e}");
            failed = true;
        }
    };
    let me = client.proc().clone();
    let job = Proc::new(me.nspace.clone(), Rank::WILDCARD);
    let string_of = |proc: &Proc, key: &str| match client.get(Some(proc), key, &[]) {
        Ok(Value::String(Some(s))) => s.into_utf8().map_err(|e| format!("{key} of {proc}: {e}")),
        other => Err(format!("{key} of {proc}: {other:?}")),
    };

    step(
        "topology shared",
        string_of(&job, pmix::topology::HWLOC_XML_V2).map(|_| ()),
    );
    let machine = client.load_topology();
    step(
        "load topology",
        machine.as_ref().map(|_| ()).map_err(|s| format!("{s:?}")),
    );

    let bound = client.get_cpuset(false);
    let given = string_of(&me, attr::CPUSET.wire_key());
    step(
        "cpuset is the binding",
        match (&bound, &given) {
            (Ok(b), Ok(g)) => match parse_cpuset_string(g) {
                Ok(parsed) if parsed.bitmap == b.bitmap => Ok(()),
                other => Err(format!("PMIX_CPUSET {g:?} ({other:?}), bound to {b:?}")),
            },
            other => Err(format!("{other:?}")),
        },
    );

    let mine = string_of(&me, attr::LOCALITY_STRING.wire_key());
    step(
        "locality with itself",
        match mine.as_deref().map(|m| relative_locality(m, m)) {
            Ok(Ok(l)) if l.0 & Locality::SHARE_HWTHREAD.0 != 0 => Ok(()),
            other => Err(format!("{mine:?}: {other:?}")),
        },
    );
    let size = pmix_tests::job_size(&client);
    for r in (0..size).filter(|r| *r != u64::from(me.rank.0)) {
        let peer = Proc::new(me.nspace.clone(), Rank(r as u32));
        let theirs = string_of(&peer, attr::LOCALITY_STRING.wire_key());
        step(
            &format!("locality with rank {r}"),
            match (&mine, &theirs) {
                (Ok(a), Ok(b)) => match relative_locality(a, b) {
                    Ok(l) if l.0 & Locality::SHARE_NODE.0 != 0 => Ok(()),
                    other => Err(format!("{a:?} and {b:?}: {other:?}")),
                },
                other => Err(format!("{other:?}")),
            },
        );
    }

    step(
        "device distances",
        match (&machine, &bound) {
            (Ok(m), Ok(b)) => pmix::client::Client::compute_distances(m, b, &[])
                .map_err(|s| format!("{s:?}"))
                .and_then(|computed| {
                    // The host's, from where this process started, are the same.
                    let stored = client.get(Some(&me), attr::DEVICE_DISTANCES.wire_key(), &[]);
                    let stored: Vec<Value> = match stored {
                        Ok(Value::DataArray(a)) => a.elements,
                        _ => Vec::new(),
                    };
                    let computed: Vec<Value> = (computed.into_iter())
                        .map(|d| Value::DeviceDist(Box::new(d)))
                        .collect();
                    println!("{} devices", computed.len());
                    if stored == computed {
                        Ok(())
                    } else {
                        Err(format!(
                            "PMIX_DEVICE_DISTANCES {stored:?}, computed {computed:?}"
                        ))
                    }
                }),
            other => Err(format!("{other:?}")),
        },
    );
    let _ = client.finalize();
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
