//! Event notification end to end: the Rust server and clients in one process. The ordering
//! rules themselves are unit-tested in `pmix::events`; these tests check what only the whole
//! path shows: handlers run one after another with the results of those before them, the
//! server's cache reaches later registrants, the host's events reach clients, and a client
//! learns that its server went away.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pmix::client::{Client, EventCompletion, EventNotice};
use pmix::model::{DataRange, Info, Nspace, Proc, Rank, Status, attr};
use tokio::sync::mpsc;

use common::{memory_clients, server};

const CODE: Status = Status(5001);

/// A handler that reports each call on `tx` as (its name, the results it was given) and ends
/// its turn with `status` and one result naming itself.
fn reporter(
    name: &'static str,
    status: Status,
    tx: &mpsc::UnboundedSender<(String, Vec<String>)>,
) -> impl Fn(EventNotice, EventCompletion) + Send + Sync + 'static {
    let tx = tx.clone();
    move |notice, done| {
        let given = notice
            .results
            .iter()
            .filter_map(|i| i.value.as_str().map(str::to_owned))
            .collect();
        let _ = tx.send((name.to_owned(), given));
        let mine = Info::new(attr::EVENT_TEXT_MESSAGE, name.to_owned());
        done.complete(status, vec![mine]);
    }
}

async fn next<T>(rx: &mut mpsc::UnboundedReceiver<T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("an event within 10 s")
        .expect("the sender is alive")
}

/// Nothing more arrives for a while (the quiet a negative check needs).
async fn quiet<T: std::fmt::Debug>(rx: &mut mpsc::UnboundedReceiver<T>) {
    let more = tokio::time::timeout(Duration::from_millis(300), rx.recv()).await;
    assert!(more.is_err(), "unexpected {more:?}");
}

async fn register(
    c: &Client,
    codes: &[Status],
    info: Vec<Info>,
    handler: impl Fn(EventNotice, EventCompletion) + Send + Sync + 'static,
) -> usize {
    c.register_event_handler(codes, &info, handler)
        .await
        .unwrap()
}

#[tokio::test]
async fn handlers_run_in_order_pass_results_on_and_action_complete_stops_the_chain() {
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let c = &clients[0];
    let first = Info::new(attr::EVENT_HDLR_FIRST, true);
    register(c, &[], vec![], reporter("default", Status::SUCCESS, &tx)).await;
    register(c, &[CODE], vec![], reporter("single", Status::SUCCESS, &tx)).await;
    register(
        c,
        &[CODE],
        vec![first],
        reporter("first", Status::SUCCESS, &tx),
    )
    .await;
    clients[1]
        .notify_event(CODE, None, DataRange::NAMESPACE, &[])
        .await
        .unwrap();
    assert_eq!(next(&mut rx).await, ("first".into(), vec![]));
    assert_eq!(next(&mut rx).await, ("single".into(), vec!["first".into()]));
    let results = vec!["first".into(), "single".into()];
    assert_eq!(next(&mut rx).await, ("default".into(), results));

    // A handler ending with PMIX_EVENT_ACTION_COMPLETE: nobody after it runs.
    let (tx2, mut rx2) = mpsc::unbounded_channel();
    let code = Status(5002);
    let done = reporter("stopper", Status::EVENT_ACTION_COMPLETE, &tx2);
    register(c, &[code], vec![], done).await;
    let later = reporter("multi", Status::SUCCESS, &tx2);
    register(c, &[code, CODE], vec![], later).await;
    clients[1]
        .notify_event(code, None, DataRange::NAMESPACE, &[])
        .await
        .unwrap();
    assert_eq!(next(&mut rx2).await.0, "stopper");
    // Neither the multi-code handler nor the default one of the first round runs.
    quiet(&mut rx2).await;
    quiet(&mut rx).await;
    server.shutdown();
}

#[tokio::test]
async fn the_server_hands_cached_events_to_later_registrants_unless_told_not_to() {
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let kept = Status(5003);
    let dropped = Status(5004);
    let no_cache = Info::new(attr::EVENT_DO_NOT_CACHE, true);
    clients[1]
        .notify_event(dropped, None, DataRange::NAMESPACE, &[no_cache])
        .await
        .unwrap();
    clients[1]
        .notify_event(kept, None, DataRange::NAMESPACE, &[])
        .await
        .unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    register(&clients[0], &[kept, dropped], vec![], move |n, done| {
        let _ = tx.send((n.status, n.source.clone()));
        drop(done);
    })
    .await;
    assert_eq!(next(&mut rx).await, (kept, clients[1].proc().clone()));
    quiet(&mut rx).await;
    server.shutdown();
}

#[tokio::test]
async fn a_declared_model_reaches_the_handlers_registered_before_and_after_it() {
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let c = &clients[0];
    let model = |name: &str| {
        vec![
            Info::new(attr::PROGRAMMING_MODEL, name.to_owned()),
            Info::new(attr::EVENT_TEXT_MESSAGE, "not a model attribute".to_owned()),
        ]
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let heard = |who: &'static str| {
        let tx = tx.clone();
        move |n: EventNotice, done: EventCompletion| {
            let keys: Vec<String> = n.info.iter().map(|i| i.key.as_str().to_owned()).collect();
            let model = n.info.iter().find_map(|i| {
                (i.key.as_str() == attr::PROGRAMMING_MODEL.wire_key())
                    .then(|| i.value.as_str().map(str::to_owned))
                    .flatten()
            });
            let _ = tx.send((who, n.status, n.source.clone(), model, keys));
            drop(done);
        }
    };
    // A default handler never hears it (PMIX_EVENT_NON_DEFAULT).
    register(c, &[], vec![], heard("default")).await;
    assert!(c.declare_model(&model("MPI")).await.unwrap());
    assert!(!c.declare_model(&[]).await.unwrap(), "nothing to declare");
    // The first runtime registers after its own declaration, and hears it.
    register(c, &[Status::MODEL_DECLARED], vec![], heard("mpi")).await;
    let (who, status, source, model_name, keys) = next(&mut rx).await;
    assert_eq!(
        (who, status, &source),
        ("mpi", Status::MODEL_DECLARED, c.proc())
    );
    assert_eq!(model_name.as_deref(), Some("MPI"));
    let non_default = attr::EVENT_NON_DEFAULT.wire_key().to_owned();
    assert_eq!(
        keys,
        [attr::PROGRAMMING_MODEL.wire_key().to_owned(), non_default]
    );
    // A second runtime declares: the first hears it at once; registering, it hears both.
    c.declare_model(&model("OpenMP")).await.unwrap();
    let (who, _, _, model_name, _) = next(&mut rx).await;
    assert_eq!((who, model_name.as_deref()), ("mpi", Some("OpenMP")));
    register(c, &[Status::MODEL_DECLARED], vec![], heard("openmp")).await;
    let mut second = [next(&mut rx).await, next(&mut rx).await];
    second.sort_by(|a, b| a.3.cmp(&b.3));
    let names: Vec<_> = second.iter().map(|h| (h.0, h.3.as_deref())).collect();
    assert_eq!(names, [("openmp", Some("MPI")), ("openmp", Some("OpenMP"))]);
    quiet(&mut rx).await;
    // The other process heard nothing: the range is this process.
    let (tx1, mut rx1) = mpsc::unbounded_channel();
    register(
        &clients[1],
        &[Status::MODEL_DECLARED],
        vec![],
        move |n, done| {
            let _ = tx1.send(n.status);
            drop(done);
        },
    )
    .await;
    quiet(&mut rx1).await;
    server.shutdown();
}

#[tokio::test]
async fn host_events_reach_registered_clients_and_bad_ranges_are_refused() {
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let code = Status::ERR_PROC_ABORTED;
    for c in &clients {
        let tx = tx.clone();
        let me = c.proc().clone();
        register(c, &[code], vec![], move |n, _| {
            let _ = tx.send((me.clone(), n.source.clone()));
        })
        .await;
    }
    // Only rank 1 is in the custom range; the source is the host itself.
    let only_1 = Info::new(
        attr::EVENT_CUSTOM_RANGE,
        pmix::model::DataArray {
            data_type: pmix::model::DataType::PROC,
            elements: vec![Proc::new(ns.clone(), Rank(1)).into()],
        },
    );
    server
        .notify_event(code, None, DataRange::CUSTOM, vec![only_1])
        .await
        .unwrap();
    let (to, from) = next(&mut rx).await;
    assert_eq!(to, Proc::new(ns.clone(), Rank(1)));
    assert_eq!(from, Proc::new(Nspace::default(), Rank::UNDEF));
    quiet(&mut rx).await;

    let no_list = server
        .notify_event(code, None, DataRange::CUSTOM, vec![])
        .await;
    assert_eq!(no_list.map_err(|e| e.status()), Err(Status::ERR_BAD_PARAM));
    let invalid = clients[0]
        .notify_event(code, None, DataRange::INVALID, &[])
        .await;
    assert_eq!(invalid.map_err(|e| e.status()), Err(Status::ERR_BAD_PARAM));
    // The server still serves.
    clients[0]
        .notify_event(code, None, DataRange::NAMESPACE, &[])
        .await
        .unwrap();
    assert_eq!(next(&mut rx).await.0, Proc::new(ns, Rank(1)));
    server.shutdown();
}

#[tokio::test]
async fn a_deregistered_handler_is_not_called_and_an_unknown_id_is_a_bad_param() {
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let calls = Arc::new(Mutex::new(0));
    let counted = calls.clone();
    let id = register(&clients[0], &[CODE], vec![], move |_, _| {
        *counted.lock().unwrap() += 1;
    })
    .await;
    clients[0].deregister_event_handler(id).await.unwrap();
    let again = clients[0].deregister_event_handler(id).await;
    assert_eq!(again.map_err(|e| e.status()), Err(Status::ERR_BAD_PARAM));
    // A handler still registered shows when the event has been through.
    let (tx, mut rx) = mpsc::unbounded_channel();
    register(&clients[0], &[CODE], vec![], move |_, _| {
        let _ = tx.send(());
    })
    .await;
    clients[1]
        .notify_event(CODE, None, DataRange::NAMESPACE, &[])
        .await
        .unwrap();
    next(&mut rx).await;
    assert_eq!(*calls.lock().unwrap(), 0);
    server.shutdown();
}

#[tokio::test]
async fn a_client_whose_server_goes_away_gets_lost_connection() {
    let (server, ns) = server(false, 1).await;
    let clients = memory_clients(&server, &ns, 1).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let lost = Status::ERR_LOST_CONNECTION;
    register(&clients[0], &[lost], vec![], move |n, _| {
        let _ = tx.send(n.status);
    })
    .await;
    server.shutdown();
    assert_eq!(next(&mut rx).await, lost);
}
