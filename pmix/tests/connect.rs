//! Connect and disconnect end to end: the Rust server and clients in one process. The
//! tracker is unit-tested in the server core; these tests check the collective as clients
//! see it, concurrently, and its failure paths.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

mod common;

use pmix::model::{Info, Proc, Rank, Status, attr};

use common::{memory_clients, server};

#[tokio::test]
async fn every_process_of_the_set_connects_and_disconnects_once() {
    let (server, ns) = server(false, 3).await;
    let clients = memory_clients(&server, &ns, 3).await;
    let job = [Proc::new(ns.clone(), Rank::WILDCARD)];
    let connects: Vec<_> = clients.iter().map(|c| c.connect_nb(&job, &[])).collect();
    for c in connects {
        assert_eq!(c.await, Ok(()));
    }
    let disconnects: Vec<_> = clients.iter().map(|c| c.disconnect_nb(&job, &[])).collect();
    for d in disconnects {
        assert_eq!(d.await, Ok(()));
    }
    // Disconnected already: an invalid operation, answered at once.
    assert_eq!(
        clients[0]
            .disconnect(&job, &[])
            .await
            .map_err(|e| e.status()),
        Err(Status::ERR_INVALID_OPERATION)
    );
    // A set the caller is not in is a bad parameter.
    let others = [
        Proc::new(ns.clone(), Rank(1)),
        Proc::new(ns.clone(), Rank(2)),
    ];
    assert_eq!(
        clients[0]
            .connect(&others, &[])
            .await
            .map_err(|e| e.status()),
        Err(Status::ERR_BAD_PARAM)
    );
}

#[tokio::test]
async fn a_connect_someone_never_joins_ends_at_its_timeout() {
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let pair = [
        Proc::new(ns.clone(), Rank(0)),
        Proc::new(ns.clone(), Rank(1)),
    ];
    let timeout = [Info::new(attr::TIMEOUT, 1i32)];
    assert_eq!(
        clients[0]
            .connect(&pair, &timeout)
            .await
            .map_err(|e| e.status()),
        Err(Status::ERR_TIMEOUT)
    );
    // The set is not connected, and the next connect of it starts afresh.
    assert_eq!(
        clients[0]
            .disconnect(&pair, &[])
            .await
            .map_err(|e| e.status()),
        Err(Status::ERR_INVALID_OPERATION)
    );
    let (a, b) = tokio::join!(
        clients[0].connect(&pair, &[]),
        clients[1].connect(&pair, &[])
    );
    assert_eq!((a, b), (Ok(()), Ok(())));
}
