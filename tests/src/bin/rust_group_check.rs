//! Process groups under a real host (`pmixrun -n 4`): every rank constructs the group
//! `quad` of the whole job with a context id from the host, each posting its local id for it
//! (`PMIX_GROUP_LOCAL_CID`) and reading a peer's by the context id, exchanges data by a fence over
//! the group's id, and reads a peer's value; ranks 0 and 1 build `pair` and fence by its id
//! while ranks 2 and 3 do not take part; rank 0 invites ranks 1 to 3 into `invited` (each
//! waits for `PMIX_GROUP_INVITED`, rank 3 declines) and the group formed fences by its id;
//! rank 1 leaves it and rank 0 hears `PMIX_GROUP_LEFT`; `quad` is destructed. Run with
//! `pmixrun --pset quadset`, each rank also finds `quadset` among its `PMIX_PSET_NAMES` and
//! among the sets a `PMIX_QUERY_PSET_NAMES` query returns. Prints
//! `ok <step>` or `FAIL <step>: <reason>`; exits non-zero on a failure.

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use pmix::client::GroupAnswer;
use pmix::model::{Info, Proc, Query, Rank, Scope, Status, Value, attr};

fn group(name: &str) -> Vec<Proc> {
    vec![Proc::try_new(name, Rank::WILDCARD).expect("a valid group id")]
}

fn main() -> ExitCode {
    let Some(client) = pmix_tests::init_client() else {
        return ExitCode::FAILURE;
    };
    let me = client.proc().clone();
    let size = pmix_tests::job_size(&client);
    if size != 4 {
        println!("FAIL size: this check runs with 4 ranks, not {size}");
        return ExitCode::FAILURE;
    }
    let rank = me.rank.0;
    let peer = |r: u32| Proc::new(me.nspace.clone(), Rank(r));
    let step = |what: &str, r: Result<(), String>| match r {
        Ok(()) => {
            println!("ok {what}");
            true
        }
        Err(e) => {
            println!("FAIL {what}: {e}");
            false
        }
    };
    let (tx, rx) = mpsc::channel();
    let codes = [Status::GROUP_INVITED, Status::GROUP_LEFT];
    let registered = client.register_event_handler(&codes, &[], move |notice, done| {
        let _ = tx.send((notice.status, notice.source.clone()));
        done.complete(Status::SUCCESS, Vec::new());
    });
    if registered.is_err() {
        println!("FAIL register: {registered:?}");
        return ExitCode::FAILURE;
    }

    // The process set pmixrun defined at launch, as process information and by query.
    let names = client.get(Some(&me), attr::PSET_NAMES.wire_key(), &[]);
    let listed = |v: &Value| match v {
        Value::DataArray(a) => a.elements.iter().any(|e| e.as_str() == Some("quadset")),
        Value::String(Some(s)) => s.as_bytes().split(|&b| b == b',').any(|n| n == b"quadset"),
        _ => false,
    };
    let mut failed = !step(
        "pset names",
        match &names {
            Ok(v) if listed(v) => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
    let asked = [Query {
        keys: vec![Some(attr::QUERY_PSET_NAMES.wire_key().to_owned())],
        qualifiers: Vec::new(),
    }];
    let answered = client.query(&asked).map(|a| {
        a.results
            .first()
            .map(|r| pmix::query::answers_in(r).iter().any(|i| listed(&i.value)))
            .unwrap_or(false)
    });
    failed |= !step(
        "pset query",
        match answered {
            Ok(true) => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );

    // The whole job, with a context id.
    let all: Vec<Proc> = (0..4).map(peer).collect();
    let with_id = [
        Info::new(attr::GROUP_ASSIGN_CONTEXT_ID, true),
        Info::new(attr::GROUP_LOCAL_CID, 100 + rank as usize),
    ];
    let built = client.group_construct("quad", &all, &with_id);
    let context_id = (built.iter().flat_map(|formed| &formed.results))
        .find_map(|i| i.get(attr::GROUP_CONTEXT_ID));
    let ok = step(
        "construct quad",
        match (&built, context_id) {
            (Ok(_), Some(_)) => Ok(()),
            (other, _) => Err(format!("{other:?}, wanted a PMIX_GROUP_CONTEXT_ID")),
        },
    );
    let Some(context_id) = context_id.filter(|_| ok) else {
        return ExitCode::FAILURE;
    };
    // Each rank posted its own id for the group: a peer's is found by the peer's id and the
    // group's context id.
    let next = (rank + 1) % 4;
    let of_quad = [Info::new(attr::GROUP_CONTEXT_ID, context_id).qualifier()];
    let posted = client.get(
        Some(&peer(next)),
        attr::GROUP_LOCAL_CID.wire_key(),
        &of_quad,
    );
    failed |= !step(
        "local cid of a peer",
        match posted {
            Ok(Value::Size(v)) if v == u64::from(100 + next) => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
    let value = format!("from {rank}");
    let exchanged = client
        .put(Scope::GLOBAL, "grp.value", Value::string(value))
        .and_then(|()| client.commit())
        .and_then(|()| client.fence(&group("quad"), &[Info::new(attr::COLLECT_DATA, true)]));
    let got = exchanged.and_then(|()| client.get(Some(&peer(next)), "grp.value", &[]));
    failed |= !step(
        "fence by group id",
        match got {
            Ok(v) if v.as_str() == Some(format!("from {next}").as_str()) => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );

    // A group of two: ranks 2 and 3 are neither waited for nor let in.
    if rank < 2 {
        let pair = [peer(0), peer(1)];
        let r = client
            .group_construct("pair", &pair, &[])
            .map(drop)
            .and_then(|()| client.fence(&group("pair"), &[]))
            .and_then(|()| client.group_destruct("pair", &[]));
        failed |= !step("pair", r.map_err(|s| format!("{s:?}")));
    } else {
        let r = match client.fence(&group("pair"), &[]).map_err(|e| e.status()) {
            Err(Status::ERR_BAD_PARAM) => Ok(()),
            other => Err(format!("{other:?}, wanted PMIX_ERR_BAD_PARAM")),
        };
        failed |= !step("not in pair", r);
    }

    // An invitation: rank 3 declines, so the group is ranks 0, 1 and 2.
    let wait_for = |code: Status| loop {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok((s, source)) if s == code => break Ok(source),
            Ok(_) => continue,
            Err(e) => break Err(format!("no {code:?}: {e}")),
        }
    };
    let invited = if rank == 0 {
        let others: Vec<Proc> = (1..4).map(peer).collect();
        client
            .group_invite("invited", &others, &[])
            .map(|_| ())
            .map_err(|s| format!("{s:?}"))
    } else {
        let answer = if rank == 3 {
            GroupAnswer::Decline
        } else {
            GroupAnswer::Accept
        };
        wait_for(Status::GROUP_INVITED).and_then(|leader| {
            client
                .group_join("invited", &leader, answer, &[])
                .map(|_| ())
                .map_err(|s| format!("{s:?}"))
        })
    };
    failed |= !step("invitation", invited);
    if rank < 3 {
        let r = client.fence(&group("invited"), &[]);
        failed |= !step("fence by invited group", r.map_err(|s| format!("{s:?}")));
        let left = match rank {
            1 => client
                .group_leave("invited", &[])
                .map_err(|s| format!("{s:?}")),
            0 => wait_for(Status::GROUP_LEFT).and_then(|who| {
                if who == peer(1) {
                    Ok(())
                } else {
                    Err(format!("left: {who}"))
                }
            }),
            _ => Ok(()),
        };
        failed |= !step("leave", left);
    }

    let r = client.group_destruct("quad", &[]);
    failed |= !step("destruct quad", r.map_err(|s| format!("{s:?}")));
    let _ = client.finalize();
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
