//! The Rust server and client together in one process, over the in-memory and TCP
//! transports: the core flows, and bad input that must close one connection and leave the
//! server serving everyone else (DESIGN §6).

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::time::Duration;

use pmix::codec::BufferType;
use pmix::model::{Info, Nspace, Proc, Rank, Scope, Status, Value, attr};
use pmix::server::Server;
use pmix::wire::handshake::ConnectRequest;
use pmix::wire::{Frame, Tag};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod common;

use common::{job_info, memory_clients, server, uid_gid};

#[tokio::test]
async fn non_blocking_get_and_fence_are_under_way_before_they_are_awaited() {
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let (a, b) = (&clients[0], &clients[1]);
    let p0 = Proc::new(ns.clone(), Rank(0));
    // b asks for a key a has not put yet: the server holds the request.
    let got = b.get_nb(Some(&p0), "late", &[]);
    // Both enter a fence without awaiting it; a's put and commit go out meanwhile.
    let fence_b = b.fence_nb(&[], &[]);
    a.put(Scope::GLOBAL, "late", Value::Uint32(7)).unwrap();
    a.commit().await.unwrap();
    let fence_a = a.fence_nb(&[], &[]);
    assert_eq!(got.await, Ok(Value::Uint32(7)));
    assert_eq!(fence_a.await, Ok(()));
    assert_eq!(fence_b.await, Ok(()));
    // Dropping a pending result does not cancel the operation: the fence still completes
    // for the partner, who would otherwise wait for ever.
    drop(a.fence_nb(&[], &[]));
    assert_eq!(b.fence(&[], &[]).await, Ok(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_blocking_calls_start_from_a_thread_outside_any_runtime() {
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let (a, b) = (clients[0].clone(), clients[1].clone());
    // A plain thread, as a C caller's: the calls run on the client's runtime.
    let outside = std::thread::spawn(move || {
        assert!(tokio::runtime::Handle::try_current().is_err());
        a.put(Scope::GLOBAL, "from-outside", Value::Uint32(3))
            .unwrap();
        let fence = a.fence_nb(&[], &[]);
        (a, fence)
    });
    let fence_b = b.fence_nb(&[], &[]);
    let (a, fence_a) = tokio::task::spawn_blocking(move || outside.join().unwrap())
        .await
        .unwrap();
    assert_eq!(fence_a.await, Ok(()));
    assert_eq!(fence_b.await, Ok(()));
    let p0 = Proc::new(ns.clone(), Rank(0));
    a.commit().await.unwrap();
    assert_eq!(
        b.get(Some(&p0), "from-outside", &[]).await,
        Ok(Value::Uint32(3))
    );
}

#[tokio::test]
async fn clients_exchange_data_through_fence_and_get() {
    let (server, ns) = server(false, 4).await;
    let clients = memory_clients(&server, &ns, 4).await;
    let wildcard = Proc::new(ns.clone(), Rank::WILDCARD);
    for c in &clients {
        assert_eq!(
            c.get(Some(&wildcard), attr::JOB_SIZE.wire_key(), &[]).await,
            Ok(Value::Uint32(4))
        );
        // The same, in the attribute's type; a string attribute as a string.
        assert_eq!(
            c.get_attr(Some(&wildcard), attr::JOB_SIZE, &[]).await,
            Ok(4)
        );
        let peers = c.get_attr(Some(&wildcard), attr::LOCAL_PEERS, &[]).await;
        assert_eq!(peers.as_deref(), Ok("0,1,2,3"));
        let r = c.proc().rank.0;
        c.put(Scope::GLOBAL, "k", Value::Uint32(r * 10)).unwrap();
        c.commit().await.unwrap();
    }
    let collect = [Info::new(attr::COLLECT_DATA, true)];
    let fences = clients.iter().map(|c| c.fence(&[], &collect));
    for r in join(fences).await {
        r.unwrap();
    }
    for c in &clients {
        for peer in 0..4u32 {
            let p = Proc::new(ns.clone(), Rank(peer));
            assert_eq!(
                c.get(Some(&p), "k", &[]).await,
                Ok(Value::Uint32(peer * 10))
            );
        }
    }
    for c in &clients {
        c.finalize().await.unwrap();
    }
    assert!(server.all_gone(ns).await.unwrap());
}

#[tokio::test]
async fn finalize_with_an_embedded_barrier_waits_for_the_job() {
    // v5.0 §4.4.1: PMIX_EMBED_BARRIER makes PMIx_Finalize fence first; without it finalize
    // never waits for the other processes.
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let (a, b) = (&clients[0], &clients[1]);
    let barrier = [Info::new(attr::EMBED_BARRIER, true)];
    let mut fin_a = Box::pin(a.finalize_with(&barrier));
    let early = tokio::time::timeout(Duration::from_millis(300), fin_a.as_mut()).await;
    assert!(
        early.is_err(),
        "finalize returned before the peer reached the barrier"
    );
    let (r_a, r_b) = tokio::join!(fin_a, b.finalize_with(&barrier));
    assert_eq!((r_a, r_b), (Ok(()), Ok(())));
    // Without the attribute finalize returns at once.
    let clients = memory_clients(&server, &ns, 2).await;
    let alone = tokio::time::timeout(Duration::from_secs(5), clients[0].finalize_with(&[]));
    assert_eq!(alone.await, Ok(Ok(())));
}

#[tokio::test]
async fn get_of_an_uncommitted_key_waits_for_the_commit() {
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let target = Proc::new(ns.clone(), Rank(1));
    let waiting = {
        let c = clients[0].clone();
        let t = target.clone();
        tokio::spawn(async move { c.get(Some(&t), "late", &[]).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        !waiting.is_finished(),
        "N-07: held until the target commits"
    );
    clients[1]
        .put(Scope::GLOBAL, "late", Value::string("here"))
        .unwrap();
    clients[1].commit().await.unwrap();
    assert_eq!(waiting.await.unwrap(), Ok(Value::string("here")));
}

#[tokio::test]
async fn get_with_timeout_of_a_key_never_posted_times_out() {
    let (server, ns) = server(false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let target = Proc::new(ns.clone(), Rank(1));
    let r = clients[0]
        .get(Some(&target), "never", &[Info::new(attr::TIMEOUT, 1)])
        .await;
    assert_eq!(r.map_err(|e| e.status()), Err(Status::ERR_TIMEOUT));
    let r = clients[0]
        .get(Some(&target), "never", &[Info::new(attr::IMMEDIATE, true)])
        .await;
    assert_eq!(r.map_err(|e| e.status()), Err(Status::ERR_NOT_FOUND));
}

#[tokio::test]
async fn client_disconnecting_mid_fence_fails_the_fence_and_the_server_keeps_serving() {
    let (server, ns) = server(false, 3).await;
    let mut clients = memory_clients(&server, &ns, 3).await;
    let lost = clients.pop().unwrap();
    let fences: Vec<_> = clients
        .iter()
        .map(|c| {
            let c = c.clone();
            tokio::spawn(async move { c.fence(&[], &[]).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(lost);
    for f in fences {
        assert_eq!(
            f.await.unwrap().map_err(|e| e.status()),
            Err(Status::ERR_LOST_CONNECTION)
        );
    }
    // The survivors still get answers.
    let wildcard = Proc::new(ns.clone(), Rank::WILDCARD);
    assert_eq!(
        clients[0]
            .get(Some(&wildcard), attr::JOB_SIZE.wire_key(), &[])
            .await,
        Ok(Value::Uint32(3))
    );
}

/// Connect over TCP, send `bytes`, and return what the server sent back before closing.
async fn raw(server: &Server, bytes: &[u8]) -> Vec<u8> {
    let uri = server.uri().unwrap();
    let (_, addr) = pmix::wire::uri::parse_uri(&uri).unwrap();
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(bytes).await.unwrap();
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut out)).await;
    assert!(
        read.is_ok(),
        "the server must close a bad connection, not hang"
    );
    out
}

fn hello(ns: &str, rank: u32, uid: u32, gid: u32) -> Vec<u8> {
    ConnectRequest::simple_client(
        Proc::try_new(ns, rank).unwrap(),
        uid,
        gid,
        BufferType::NonDescribed,
    )
    .encode()
    .unwrap()
}

#[tokio::test]
async fn bad_connections_are_refused_and_the_server_keeps_serving() {
    let (server, ns) = server(true, 2).await;
    let (uid, gid) = uid_gid();
    // An oversized connect message: closed without an answer.
    let mut big = vec![0xffu8; 8];
    big.extend_from_slice(&(1u32 << 30).to_ne_bytes());
    big.extend_from_slice(&[0; 4]);
    assert!(raw(&server, &big).await.is_empty());
    // Garbage in place of a connect payload.
    let mut garbage = vec![0xffu8; 8];
    garbage.extend_from_slice(&5u32.to_ne_bytes());
    garbage.extend_from_slice(&[0; 4]);
    garbage.extend_from_slice(b"\x01\x02\x03\x04\x05");
    assert!(raw(&server, &garbage).await.is_empty());
    // An unregistered namespace, and an unregistered rank: refused with PMIX_ERR_NOT_FOUND.
    let refused = |r: Vec<u8>| i32::from_be_bytes(r[..4].try_into().unwrap());
    assert_eq!(
        refused(raw(&server, &hello("intruder", 0, uid, gid)).await),
        Status::ERR_NOT_FOUND.0
    );
    assert_eq!(
        refused(raw(&server, &hello("testjob", 9, uid, gid)).await),
        Status::ERR_NOT_FOUND.0
    );
    // A uid that does not match the registration.
    assert_eq!(
        refused(raw(&server, &hello("testjob", 0, uid + 1, gid)).await),
        Status::ERR_INVALID_CRED.0
    );
    // A good handshake followed by an oversized frame, then by a malformed request.
    for tail in [
        pmix::wire::Header {
            pindex: 0,
            tag: Tag(101),
            nbytes: u32::MAX,
        }
        .encode()
        .to_vec(),
        Frame {
            pindex: 0,
            tag: Tag(101),
            payload: vec![2, 4, 0x7f],
        }
        .encode()
        .unwrap(),
    ] {
        let mut bytes = hello("testjob", 0, uid, gid);
        bytes.extend(tail);
        let back = raw(&server, &bytes).await;
        assert_eq!(&back[..4], &[0, 0, 0, 0], "accepted, then closed");
    }
    // An unknown command is answered, not fatal.
    let mut bytes = hello("testjob", 1, uid, gid);
    bytes.extend(
        Frame {
            pindex: 0,
            tag: Tag(101),
            payload: vec![2, 200],
        }
        .encode()
        .unwrap(),
    );
    let uri = server.uri().unwrap();
    let (_, addr) = pmix::wire::uri::parse_uri(&uri).unwrap();
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&bytes).await.unwrap();
    let mut reply = [0u8; 8 + 16 + 2];
    s.read_exact(&mut reply).await.unwrap();
    assert_eq!(
        &reply[8 + 16..],
        &[2, (Status::ERR_NOT_SUPPORTED.0 * -2 - 1) as u8]
    );
    drop(s);
    // After all that, real clients still work.
    let clients = memory_clients(&server, &ns, 2).await;
    let f = join(clients.iter().map(|c| c.fence(&[], &[]))).await;
    assert!(f.iter().all(Result::is_ok), "{f:?}");
}

async fn join<F: std::future::Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let handles: Vec<_> = futures.into_iter().collect();
    let mut out = Vec::new();
    // Poll all concurrently by pinning them into a single future set.
    let mut pinned: Vec<std::pin::Pin<Box<F>>> = handles.into_iter().map(Box::pin).collect();
    let mut results: Vec<Option<F::Output>> = (0..pinned.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in pinned.iter_mut().enumerate() {
            if results[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => results[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.extend(results.into_iter().flatten());
    out
}

#[tokio::test]
async fn client_disconnecting_in_the_middle_of_a_commit_fails_its_collectives_only() {
    let (server, ns) = server(true, 2).await;
    let (uid, gid) = uid_gid();
    // Rank 1 connects over TCP, starts a commit frame announcing 100 bytes, sends 10 and
    // goes away.
    let uri = server.uri().unwrap();
    let (_, addr) = pmix::wire::uri::parse_uri(&uri).unwrap();
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&hello("testjob", 1, uid, gid)).await.unwrap();
    let mut accepted = [0u8; 8];
    s.read_exact(&mut accepted).await.unwrap();
    assert_eq!(&accepted[..4], &[0, 0, 0, 0], "accepted");
    let mut partial = pmix::wire::Header {
        pindex: 0,
        tag: Tag(101),
        nbytes: 100,
    }
    .encode()
    .to_vec();
    partial.extend_from_slice(&[2, 2, 0, 0, 0, 0, 0, 0, 0, 3]);
    s.write_all(&partial).await.unwrap();
    // Rank 0 enters a fence that rank 1 can now never join.
    let rank0 = memory_clients(&server, &ns, 1).await.pop().unwrap();
    let fence = {
        let c = rank0.clone();
        tokio::spawn(async move { c.fence(&[], &[]).await })
    };
    drop(s);
    assert_eq!(
        fence.await.unwrap().map_err(|e| e.status()),
        Err(Status::ERR_LOST_CONNECTION)
    );
    // Half a commit stored nothing.
    let r = rank0
        .get(
            Some(&Proc::new(ns.clone(), Rank(1))),
            "anything",
            &[Info::new(attr::IMMEDIATE, true)],
        )
        .await;
    assert_eq!(r.map_err(|e| e.status()), Err(Status::ERR_NOT_FOUND));
    // Another job on the same server is served as before.
    let other = Nspace::new("otherjob").unwrap();
    server
        .register_nspace(other.clone(), job_info(2))
        .await
        .unwrap();
    for r in 0..2 {
        server
            .register_client(Proc::new(other.clone(), Rank(r)), uid, gid)
            .await
            .unwrap();
    }
    let clients = memory_clients(&server, &other, 2).await;
    clients[1].put(Scope::GLOBAL, "k", Value::Uint8(1)).unwrap();
    clients[1].commit().await.unwrap();
    let f = join(clients.iter().map(|c| c.fence(&[], &[]))).await;
    assert!(f.iter().all(Result::is_ok), "{f:?}");
    let v = clients[0]
        .get(Some(&Proc::new(other, Rank(1))), "k", &[])
        .await;
    assert_eq!(v, Ok(Value::Uint8(1)));
}

#[tokio::test]
async fn resolving_the_nodes_of_no_namespace_answers_those_of_every_known_one() {
    // The standard is silent on an empty namespace; OpenPMIx's clients answer the nodes of
    // every namespace they know, and OpenPMIx 6.1's resolve example relies on it.
    let (server, ns) = server(false, 1).await;
    let clients = memory_clients(&server, &ns, 1).await;
    let none = Nspace::new("").unwrap();
    assert_eq!(clients[0].resolve_nodes(&ns).await, Ok("testhost".into()));
    assert_eq!(clients[0].resolve_nodes(&none).await, Ok("testhost".into()));
}
