//! The blocking client, which reads and writes its socket on the calling threads
//! (`client/blocking_io.rs`), against this crate's server over its Unix socket: several
//! threads with calls in flight at once, events pushed while no call is, and a server that
//! goes away under a waiting call.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::sync::mpsc;
use std::time::Duration;

use pmix::client::ClientConfig;
use pmix::client::blocking::Client;
use pmix::model::{DataRange, Proc, Rank, Scope, Status, Value};
use pmix::server::{NoHost, Server};

mod common;

use common::server_configured;

/// Long enough for any step on a loaded machine; a hang fails the test instead of the run.
const PATIENCE: Duration = Duration::from_secs(60);

/// A server with a job of `n` on a Unix socket, on a runtime of its own; and the
/// configuration each rank's process would find in its environment.
fn server(n: u32) -> (tokio::runtime::Runtime, Server, Vec<ClientConfig>) {
    server_also_on_tcp(n, false)
}

/// [`server`], listening on loopback TCP too when `tcp`.
fn server_also_on_tcp(n: u32, tcp: bool) -> (tokio::runtime::Runtime, Server, Vec<ClientConfig>) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (server, ns) = runtime.block_on(server_configured(NoHost, tcp, n, |c| {
        c.unix_socket = true;
    }));
    let configs = (0..n)
        .map(|r| {
            let env = server.setup_fork(&Proc::new(ns.clone(), Rank(r)));
            ClientConfig::from_vars(|k| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
                .unwrap()
        })
        .collect();
    (runtime, server, configs)
}

/// A client of `config`, started on a plain thread, with a handler that sends the status of
/// every `code` event it hears to the receiver.
fn client_hearing(config: ClientConfig, code: Status) -> (Client, mpsc::Receiver<Status>) {
    let (tx, rx) = mpsc::channel();
    let client = on_thread(move || {
        let c = Client::init_with(&config).unwrap();
        c.register_event_handler(&[code], &[], move |notice, done| {
            let _ = tx.send(notice.status);
            drop(done);
        })
        .unwrap();
        c
    });
    (client, rx)
}

/// Run `f` on a plain thread (a blocking client must live outside any runtime) and wait for
/// it at most [`PATIENCE`].
fn on_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(PATIENCE)
        .expect("the thread finished in time")
}

#[test]
fn threads_of_one_client_wait_for_their_own_replies_at_once() {
    let (_rt, server, configs) = server(2);
    let [c0, c1] = <[ClientConfig; 2]>::try_from(configs).unwrap();
    let reader = on_thread(move || Client::init_with(&c0).unwrap());
    let writer = on_thread(move || Client::init_with(&c1).unwrap());
    let of_writer = writer.proc().clone();
    let reader = std::sync::Arc::new(reader);
    // Four threads of rank 0 ask for keys rank 1 has not put: the server holds every get,
    // so four calls are in flight on one socket, and whoever reads must hand the others
    // their replies.
    let (tx, rx) = mpsc::channel();
    let getters: Vec<_> = (0..4u32)
        .map(|k| {
            let (c, p, tx) = (reader.clone(), of_writer.clone(), tx.clone());
            std::thread::spawn(move || {
                let _ = tx.send((k, c.get(Some(&p), &format!("key{k}"), &[])));
            })
        })
        .collect();
    // Puts in the reverse order, each committed alone: the replies come back out of order.
    let writer = on_thread(move || {
        for k in (0..4u32).rev() {
            writer
                .put(Scope::GLOBAL, &format!("key{k}"), Value::Uint32(10 + k))
                .unwrap();
            writer.commit().unwrap();
        }
        writer
    });
    let mut got: Vec<_> = (0..4)
        .map(|_| rx.recv_timeout(PATIENCE).expect("every get answered"))
        .collect();
    got.sort_by_key(|(k, _)| *k);
    let want: Vec<_> = (0..4u32).map(|k| (k, Ok(Value::Uint32(10 + k)))).collect();
    assert_eq!(got, want);
    // The socket is still shared correctly afterwards: a fence of both completes. A getter
    // thread may still hold its clone of the client a moment after it sent its answer.
    for getter in getters {
        getter.join().unwrap();
    }
    let reader = std::sync::Arc::try_unwrap(reader).unwrap();
    let fence_w = std::thread::spawn(move || (writer.fence(&[], &[]), writer));
    let (fence_r, reader) = on_thread(move || (reader.fence(&[], &[]), reader));
    let (fence_w, writer) = fence_w.join().unwrap();
    assert_eq!((fence_r, fence_w), (Ok(()), Ok(())));
    on_thread(move || {
        assert_eq!(reader.finalize(), Ok(()));
        assert_eq!(writer.finalize(), Ok(()));
    });
    server.shutdown();
}

#[test]
fn an_event_pushed_while_no_call_is_in_flight_reaches_its_handler() {
    let (rt, server, configs) = server(1);
    let (client, rx) = client_hearing(configs[0].clone(), Status(5101));
    // The client makes no call from here on: only its background thread reads the socket.
    rt.block_on(server.notify_event(Status(5101), None, DataRange::SESSION, vec![]))
        .unwrap();
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(Status(5101)));
    on_thread(move || assert_eq!(client.finalize(), Ok(())));
    server.shutdown();
}

#[test]
fn a_server_that_goes_away_fails_the_waiting_call_and_tells_the_process() {
    let (rt, server, configs) = server(2);
    let (client, rx) = client_hearing(configs[0].clone(), Status::ERR_LOST_CONNECTION);
    // A fence rank 1 never joins: the call waits, reading the socket, until the server ends.
    let fence = std::thread::spawn(move || (client.fence(&[], &[]), client));
    std::thread::sleep(Duration::from_millis(100));
    server.shutdown();
    drop(rt);
    let (result, client) = fence.join().unwrap();
    assert_eq!(
        result.map_err(|e| e.status()),
        Err(Status::ERR_LOST_CONNECTION)
    );
    assert_eq!(rx.recv_timeout(PATIENCE), Ok(Status::ERR_LOST_CONNECTION));
    // Later calls fail at once.
    on_thread(move || {
        client.put(Scope::GLOBAL, "late", Value::Uint32(1)).unwrap();
        assert_eq!(
            client.commit().map_err(|e| e.status()),
            Err(Status::ERR_LOST_CONNECTION)
        );
    });
}

#[test]
fn finalize_from_another_thread_ends_a_call_waiting_on_the_socket() {
    let (_rt, server, configs) = server(2);
    let (client, rx) = client_hearing(configs[0].clone(), Status::ERR_LOST_CONNECTION);
    let client = std::sync::Arc::new(client);
    // A fence rank 1 never joins: this thread reads the socket, waiting.
    let (done_tx, done_rx) = mpsc::channel();
    let waiting = client.clone();
    std::thread::spawn(move || {
        let _ = done_tx.send(waiting.fence(&[], &[]).map_err(|e| e.status()));
    });
    std::thread::sleep(Duration::from_millis(100));
    // Another thread finalizes: the fence ends instead of reading a closed socket for ever,
    // and the process hears of no lost connection, since it closed the connection itself.
    let finalizing = client.clone();
    assert_eq!(on_thread(move || finalizing.finalize()), Ok(()));
    assert_eq!(
        done_rx.recv_timeout(PATIENCE),
        Ok(Err(Status::ERR_LOST_CONNECTION))
    );
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
    on_thread(move || drop(client));
    server.shutdown();
}

#[test]
fn a_client_whose_socket_file_is_gone_joins_through_the_servers_tcp_uri() {
    // A process that ends may clean the folder the socket is in (Open MPI's spawned
    // children do); the server still listens on the TCP address its URI gives.
    let (_rt, server, configs) = server_also_on_tcp(1, true);
    let config = configs[0].clone();
    let socket = config
        .unix_socket
        .clone()
        .expect("the server hands out its socket");
    std::fs::remove_file(&socket).unwrap();
    let client = on_thread(move || Client::init_with(&config));
    let client = client.expect("the client joins over TCP");
    assert_eq!(client.proc(), &configs[0].proc);
    on_thread(move || assert_eq!(client.finalize(), Ok(())));
    server.shutdown();
}
