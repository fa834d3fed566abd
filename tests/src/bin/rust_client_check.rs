//! The Rust client's interoperability check: the same steps as `interop/c/client_check.c`,
//! through `pmix::client::blocking::Client`. Run it under any PMIx server (`pmixrun`, or the
//! C host embedding OpenPMIx's server); it prints `ok <step>` or `FAIL <step>: <reason>` and
//! exits non-zero if any step failed. With `--no-publish-upcall` (a host without the publish
//! upcalls, as Slurm's), publish and lookup must answer `PMIX_ERR_NOT_SUPPORTED` instead.

use std::process::ExitCode;

use pmix::client::blocking::Client;
use pmix::model::{Info, Proc, Rank, Scope, Status, Value, attr};

struct Check {
    failed: bool,
}

impl Check {
    fn step<T>(&mut self, name: &str, r: Result<T, String>) -> Option<T> {
        match r {
            Ok(v) => {
                println!("ok {name}");
                Some(v)
            }
            Err(why) => {
                println!("FAIL {name}: {why}");
                self.failed = true;
                None
            }
        }
    }
}

fn num(v: &Value) -> Result<u64, String> {
    v.to_u64().ok_or_else(|| format!("not a number: {v:?}"))
}

fn main() -> ExitCode {
    let mut c = Check { failed: false };
    let Some(client) = c.step("init", Client::init().map_err(|e| e.to_string())) else {
        return ExitCode::FAILURE;
    };
    let me = client.proc().clone();
    let ns = me.nspace.clone();
    let wildcard = Proc::new(ns.clone(), Rank::WILDCARD);
    let get = |p: &Proc, key: &str, info: &[Info]| {
        client.get(Some(p), key, info).map_err(|s| format!("{s:?}"))
    };

    let size = c
        .step(
            "job size",
            get(&wildcard, attr::JOB_SIZE.wire_key(), &[]).and_then(|v| num(&v)),
        )
        .unwrap_or(0);
    if let Some(expected) = std::env::var("CHECK_EXPECTED_SIZE")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        c.step(
            "job size is as launched",
            if size == expected {
                Ok(())
            } else {
                Err(format!("{size} != {expected}"))
            },
        );
    }
    let univ = c.step(
        "universe size",
        get(&wildcard, attr::UNIV_SIZE.wire_key(), &[]).and_then(|v| num(&v)),
    );
    let local_size = c
        .step(
            "local size",
            get(&wildcard, attr::LOCAL_SIZE.wire_key(), &[]).and_then(|v| num(&v)),
        )
        .unwrap_or(0);
    let peers = c.step(
        "local peers",
        get(&wildcard, attr::LOCAL_PEERS.wire_key(), &[])
            .and_then(|v| v.as_str().map(str::to_owned).ok_or("not a string".into())),
    );
    let local_rank = c.step(
        "local rank",
        get(&me, attr::LOCAL_RANK.wire_key(), &[]).and_then(|v| num(&v)),
    );
    let node_rank = c.step(
        "node rank",
        get(&me, attr::NODE_RANK.wire_key(), &[]).and_then(|v| num(&v)),
    );
    let nodeid = c.step(
        "node id",
        get(&me, attr::NODEID.wire_key(), &[]).and_then(|v| num(&v)),
    );
    let hostname = c.step(
        "hostname",
        get(&me, attr::HOSTNAME.wire_key(), &[])
            .and_then(|v| v.as_str().map(str::to_owned).ok_or("not a string".into())),
    );
    let peer_list: Vec<u64> = peers
        .as_deref()
        .unwrap_or("")
        .split(',')
        .filter_map(|r| r.trim().parse().ok())
        .collect();
    c.step(
        "local peers are consistent",
        if peer_list.contains(&u64::from(me.rank.0))
            && peer_list.len() as u64 == local_size
            && local_rank.is_some_and(|l| l < local_size)
        {
            Ok(())
        } else {
            Err(format!(
                "peers {peer_list:?}, local size {local_size}, local rank {local_rank:?}"
            ))
        },
    );
    println!(
        "info rank={} job_size={size} univ_size={univ:?} local_size={local_size} local_rank={local_rank:?} node_rank={node_rank:?} nodeid={nodeid:?} hostname={hostname:?} peers={peers:?}",
        me.rank.0
    );

    let r = me.rank.0;
    c.step(
        "put global",
        client
            .put(
                Scope::GLOBAL,
                "check.global",
                Value::string(format!("global-from-{r}")),
            )
            .map_err(|s| format!("{s:?}")),
    );
    c.step(
        "put local",
        client
            .put(Scope::LOCAL, "check.local", Value::Int32(1000 + r as i32))
            .map_err(|s| format!("{s:?}")),
    );
    c.step("commit", client.commit().map_err(|s| format!("{s:?}")));
    c.step(
        "fence with data",
        client
            .fence(&[], &[Info::new(attr::COLLECT_DATA, true)])
            .map_err(|s| format!("{s:?}")),
    );
    let timeout = [Info::new(attr::TIMEOUT, 10)];
    for peer in 0..size as u32 {
        let p = Proc::new(ns.clone(), Rank(peer));
        let want = Value::string(format!("global-from-{peer}"));
        c.step(
            &format!("get global of rank {peer}"),
            get(&p, "check.global", &timeout).and_then(|v| {
                if v == want {
                    Ok(())
                } else {
                    Err(format!("{v:?}"))
                }
            }),
        );
        if peer_list.contains(&u64::from(peer)) {
            c.step(
                &format!("get local of rank {peer}"),
                get(&p, "check.local", &timeout).and_then(|v| {
                    if v.to_i64() == Some(1000 + i64::from(peer)) {
                        Ok(())
                    } else {
                        Err(format!("{v:?}"))
                    }
                }),
            );
        }
    }
    let missing = get(
        &Proc::new(ns.clone(), Rank(0)),
        "check.missing",
        &[
            Info::new(attr::IMMEDIATE, true),
            Info::new(attr::TIMEOUT, 5),
        ],
    );
    c.step(
        "get of a missing key fails",
        match missing {
            Ok(v) => Err(format!("found {v:?}")),
            Err(why) => {
                println!("info missing key -> {why}");
                Ok(())
            }
        },
    );

    let no_publish = std::env::args().any(|a| a == "--no-publish-upcall");
    if no_publish {
        let refused = |what: &str, r: Result<(), Status>| match r {
            Err(Status::ERR_NOT_SUPPORTED) => Ok(()),
            other => Err(format!(
                "{what} answered {other:?}, not PMIX_ERR_NOT_SUPPORTED"
            )),
        };
        let info = [Info::with_key("check.port", Value::string("none")).expect("valid key")];
        let publish = client.publish(&info).map_err(|e| e.status());
        c.step("publish refused", refused("publish", publish));
        let lookup = client.lookup(&["check.port"], &[]).map(|_| ());
        c.step(
            "lookup refused",
            refused("lookup", lookup.map_err(|e| e.status())),
        );
    } else {
        let port = format!("port-of-{}", ns.as_str());
        if r == 0 {
            c.step(
                "publish",
                client
                    .publish(&[Info::with_key("check.port", Value::string(port.clone()))
                        .expect("valid key")])
                    .map_err(|s| format!("{s:?}")),
            );
        }
        c.step(
            "barrier",
            client.fence(&[], &[]).map_err(|s| format!("{s:?}")),
        );
        if r != 0 {
            let wait = [Info::new(attr::WAIT, 0), Info::new(attr::TIMEOUT, 10)];
            c.step(
                "lookup",
                client
                    .lookup(&["check.port"], &wait)
                    .map_err(|s| format!("{s:?}"))
                    .and_then(|d| match d.first() {
                        Some(pd) if pd.value == Value::string(port.clone()) => Ok(()),
                        other => Err(format!("{other:?}")),
                    }),
            );
        }
        c.step(
            "barrier after lookup",
            client.fence(&[], &[]).map_err(|s| format!("{s:?}")),
        );
        if r == 0 {
            match client
                .unpublish(&["check.port"], &[])
                .map_err(|e| e.status())
            {
                Ok(()) | Err(Status::ERR_NOT_SUPPORTED) => println!("ok unpublish"),
                Err(s) => c
                    .step::<()>("unpublish", Err(format!("{s:?}")))
                    .unwrap_or(()),
            }
        }
    }
    let fences: u32 = std::env::args()
        .skip_while(|a| a != "--fences")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    for i in 0..fences {
        if client.fence(&[], &[]).is_err() {
            c.step::<()>(&format!("fence loop {i}"), Err("fence failed".into()));
            break;
        }
    }
    c.step("finalize", client.finalize().map_err(|s| format!("{s:?}")));
    if c.failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
