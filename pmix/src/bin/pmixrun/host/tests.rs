//! The launcher's host answers, checked without a launched job.

use super::*;
use pmix::model::Value;

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(f)
}

fn proc(r: u32) -> Proc {
    Proc::try_new("job", r).expect("a valid name")
}

fn data(k: &str) -> Info {
    Info::with_key(k, Value::Uint8(1)).expect("a valid key")
}

#[test]
fn publish_is_all_or_nothing_and_unpublish_touches_only_the_callers_data() {
    block_on(async {
        let h = RunHost::default();
        h.publish(proc(0), vec![data("a"), data("b")])
            .await
            .unwrap();
        h.publish(proc(1), vec![data("c")]).await.unwrap();
        // "d" is new but "a" exists: nothing is published.
        assert_eq!(
            h.publish(proc(1), vec![data("d"), data("a")]).await,
            Err(Status::ERR_DUPLICATE_KEY)
        );
        let missing = h.lookup(proc(1), vec!["d".into()], vec![]).await;
        assert_eq!(missing.err(), Some(Status::ERR_NOT_FOUND));
        // Rank 1 cannot remove rank 0's "a"; with no keys it removes all of its own.
        h.unpublish(proc(1), vec!["a".into()], vec![])
            .await
            .unwrap();
        h.unpublish(proc(1), vec![], vec![]).await.unwrap();
        let left = h
            .lookup(proc(0), vec!["a".into(), "b".into()], vec![])
            .await
            .unwrap();
        assert_eq!(left.len(), 2);
        let gone = h.lookup(proc(0), vec!["c".into()], vec![]).await;
        assert_eq!(gone.err(), Some(Status::ERR_NOT_FOUND));
    });
}

#[test]
fn queries_answer_namespaces_status_and_the_proc_table() {
    block_on(async {
        let h = RunHost::default();
        h.started(proc(0), 100, ("prog".into(), "prog x".into()), "node");
        h.started(proc(1), 101, ("prog".into(), "prog x".into()), "node");
        h.ended(&proc(1), 3, false);
        let q = |key: &str| Query {
            keys: vec![Some(key.to_owned())],
            qualifiers: vec![Info::new(attr::NSPACE, "job".to_owned())],
        };
        let asked = vec![
            q(attr::QUERY_NAMESPACES.wire_key()),
            q(attr::QUERY_JOB_STATUS.wire_key()),
            q(attr::QUERY_PROC_TABLE.wire_key()),
            q("app.unknown"),
        ];
        let out = h.query(proc(0), asked).await.unwrap();
        assert_eq!(out.len(), 3, "{out:?}");
        assert_eq!(out[0].value.as_str(), Some("job"));
        assert_eq!(out[1].value, Value::Status(Status::ERR_JOB_NON_ZERO_TERM));
        let Value::DataArray(t) = &out[2].value else {
            panic!("not a table: {:?}", out[2].value);
        };
        let Value::ProcInfo(second) = &t.elements[1] else {
            panic!("not a proc info");
        };
        assert_eq!((second.pid, second.exit_code), (101, 3));
        assert_eq!(second.state, ProcState::TERM_NON_ZERO);
        // Each namespace once, with its command line.
        let asked = vec![q(attr::QUERY_NAMESPACE_INFO.wire_key())];
        let out = h.query(proc(0), asked).await.unwrap();
        let Value::DataArray(jobs) = &out[0].value else {
            panic!("not an array: {out:?}");
        };
        assert_eq!(jobs.elements.len(), 1);
        let Value::Info(job) = &jobs.elements[0] else {
            panic!("not an array of infos: {jobs:?}");
        };
        let Value::DataArray(job) = &job.value else {
            panic!("not an array: {job:?}");
        };
        let Value::Info(line) = &job.elements[1] else {
            panic!("not infos: {job:?}");
        };
        assert_eq!(line.get(attr::CMD_LINE).as_deref(), Some("prog x"));
    });
}

#[test]
fn queries_answer_allocations_queues_and_support() {
    block_on(async {
        let h = RunHost::default();
        let granted = h
            .allocate(proc(0), AllocDirective::NEW, vec![])
            .await
            .unwrap();
        let id = granted[0].value.as_str().unwrap().to_owned();
        let q = |key: &str, qualifiers: Vec<Info>| Query {
            keys: vec![Some(key.to_owned())],
            qualifiers,
        };
        let asked = vec![
            q(
                attr::QUERY_ALLOC_STATUS.wire_key(),
                vec![Info::new(attr::ALLOC_ID, id)],
            ),
            q(attr::QUERY_QUEUE_LIST.wire_key(), vec![]),
            q(attr::QUERY_DEBUG_SUPPORT.wire_key(), vec![]),
            q(attr::QUERY_SPAWN_SUPPORT.wire_key(), vec![]),
            q(
                attr::QUERY_ALLOC_STATUS.wire_key(),
                vec![Info::new(attr::ALLOC_ID, "other".to_owned())],
            ),
        ];
        let out = h.query(proc(0), asked).await.unwrap();
        let texts: Vec<&str> = out.iter().filter_map(|i| i.value.as_str()).collect();
        // An unknown allocation has no status: four answers for five keys.
        assert_eq!(texts.len(), 4, "{out:?}");
        assert_eq!(texts[..3], ["active", "", ""]);
        assert!(texts[3].split(',').any(|k| k == attr::WDIR.wire_key()));
    });
}

#[test]
fn cancel_withdraws_pending_requests_and_checkpoints_become_events() {
    block_on(async {
        let h = RunHost::default();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        *lock(&h.events) = Some(tx);
        // This test's own pid stands for a running rank: a checkpoint event signals nothing.
        let pid = i32::try_from(std::process::id()).unwrap();
        h.started(proc(0), pid, ("prog".into(), "prog x".into()), "node");
        let ctl = |d: Vec<Info>| h.job_control(proc(0), vec![], d);
        let named = |id: &str, what: Info| vec![Info::new(attr::JOB_CTRL_ID, id.to_owned()), what];
        ctl(named(
            "a",
            Info::new(attr::REGISTER_CLEANUP, "/nonexistent/a".to_owned()),
        ))
        .await
        .unwrap();
        ctl(named("b", Info::new(attr::JOB_CTRL_PREEMPTIBLE, true)))
            .await
            .unwrap();
        ctl(vec![Info::new(attr::JOB_CTRL_CANCEL, "a".to_owned())])
            .await
            .unwrap();
        assert!(lock(&h.cleanups).is_empty());
        assert_eq!(lock(&h.preemptible).len(), 1);
        assert_eq!(
            ctl(vec![Info::new(attr::JOB_CTRL_CANCEL, "a".to_owned())]).await,
            Err(Status::ERR_NOT_FOUND)
        );
        // Another requester cannot cancel this one's requests.
        let other = h.job_control(
            proc(1),
            vec![],
            vec![Info::new(attr::JOB_CTRL_CANCEL, "b".to_owned())],
        );
        assert_eq!(other.await, Err(Status::ERR_NOT_FOUND));
        ctl(vec![Info::new(attr::JOB_CTRL_CANCEL, String::new())])
            .await
            .unwrap();
        assert!(lock(&h.preemptible).is_empty());
        assert_eq!(
            ctl(vec![Info::new(attr::JOB_CTRL_RESTART, "c".to_owned())]).await,
            Err(Status::ERR_NOT_SUPPORTED)
        );

        ctl(vec![Info::new(attr::JOB_CTRL_CHECKPOINT, "c".to_owned())])
            .await
            .unwrap();
        let e = rx.try_recv().expect("a checkpoint event");
        assert_eq!(
            (e.status, e.range),
            (Status::JCTRL_CHECKPOINT, DataRange::CUSTOM)
        );
        let range = pmix::events::Event {
            status: e.status,
            source: proc(0),
            range: e.range,
            info: e.info,
        };
        assert!(range.reaches(&proc(0)) && !range.reaches(&proc(1)));
    });
}

#[test]
fn aborting_listed_processes_kills_them_and_leaves_the_job_running() {
    block_on(async {
        let h = RunHost::default();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let pid = i32::try_from(child.id()).unwrap();
        h.started(proc(1), pid, ("sleep".into(), "sleep x".into()), "node");
        h.abort(proc(0), Status(3), Some("enough".into()), vec![proc(1)])
            .await
            .unwrap();
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9));
        // Its end by SIGKILL was asked for; an end by another signal, or of another
        // process, was not.
        assert!(h.was_sent(&proc(1), status.signal()));
        assert!(!h.was_sent(&proc(1), Some(11)) && !h.was_sent(&proc(0), Some(9)));
        // Not the whole job: the run is not told to end.
        assert!(lock(&h.abort).is_none());
    });
}

#[test]
fn a_query_names_a_namespace_by_itself_or_in_a_process_id() {
    use pmix::model::{Nspace, Query};
    let query = |qualifiers: Vec<Info>| Query {
        keys: vec![Some("k".to_owned())],
        qualifiers,
    };
    let other = Nspace::new("other").expect("a valid name");
    let by_name = query(vec![Info::new(attr::NSPACE, "other".to_owned())]);
    assert_eq!(queries::named_nspace(&by_name), Some(other.clone()));
    let by_id = query(vec![Info::new(
        attr::PROCID,
        Proc::new(other.clone(), 1u32),
    )]);
    assert_eq!(queries::named_nspace(&by_id), Some(other));
    let own = query(vec![Info::new(
        attr::PROCID,
        Proc::new(Nspace::default(), 1u32),
    )]);
    assert_eq!(queries::named_nspace(&own), None);
}
