//! I/O forwarding end to end (v5.0 §18.5): this crate's server and clients in one process,
//! with a host that agrees to forward output and records pushed input. The server's routing
//! rules are unit-tested in the server's core; these tests check what a client's handler
//! receives, and what the host is handed.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pmix::client::{IofHandler, IofOutput};
use pmix::model::{Info, IofChannel, Proc, Rank, Status};
use pmix::server::Host;

use common::{memory_clients, server_with};

/// A pull the host was asked for: processes, channels, and whether it is the stop.
type PullCall = (Vec<Proc>, IofChannel, bool);
/// Input pushed: by whom, to whom, what.
type PushCall = (Proc, Vec<Proc>, Option<Vec<u8>>);

/// A host that agrees to every pull and keeps what is pushed to it.
#[derive(Clone, Default)]
struct ForwardingHost {
    pulls: Arc<Mutex<Vec<PullCall>>>,
    pushed: Arc<Mutex<Vec<PushCall>>>,
}

impl Host for ForwardingHost {
    async fn iof_pull(
        &self,
        procs: Vec<Proc>,
        directives: Vec<Info>,
        channels: IofChannel,
    ) -> Result<(), Status> {
        let stop = (directives.iter()).any(|i| i.key.as_str() == pmix::host::IOF_STOP);
        self.pulls.lock().unwrap().push((procs, channels, stop));
        Ok(())
    }

    async fn push_stdin(
        &self,
        source: Proc,
        targets: Vec<Proc>,
        _directives: Vec<Info>,
        data: Option<Vec<u8>>,
    ) -> Result<(), Status> {
        self.pushed.lock().unwrap().push((source, targets, data));
        Ok(())
    }
}

/// A handler that keeps what it is given, and the means to wait for it.
fn collector() -> (IofHandler, Arc<Mutex<Vec<IofOutput>>>) {
    let seen: Arc<Mutex<Vec<IofOutput>>> = Arc::default();
    let keep = seen.clone();
    (Arc::new(move |o| keep.lock().unwrap().push(o)), seen)
}

async fn wait_for(seen: &Mutex<Vec<IofOutput>>, n: usize) -> Vec<IofOutput> {
    for _ in 0..500 {
        if seen.lock().unwrap().len() >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    seen.lock().unwrap().clone()
}

#[tokio::test]
async fn pulled_output_reaches_the_pulls_handler_with_its_source_and_channel() {
    let host = ForwardingHost::default();
    let (server, ns) = server_with(host.clone(), false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let rank1 = Proc::new(ns.clone(), Rank(1));
    let (handler, seen) = collector();
    let id = clients[0]
        .iof_pull(
            std::slice::from_ref(&rank1),
            IofChannel::STDERR_CHANNEL,
            &[],
            handler,
        )
        .await
        .unwrap();
    assert_eq!(
        host.pulls.lock().unwrap().clone(),
        [(vec![rank1.clone()], IofChannel::STDERR_CHANNEL, false)]
    );
    // Output of another channel and of another process is not this pull's.
    let deliver = |rank: u32, channel: IofChannel, data: &[u8]| {
        let source = Proc::new(ns.clone(), Rank(rank));
        server.iof_deliver(source, channel, data.to_vec(), vec![])
    };
    deliver(1, IofChannel::STDOUT_CHANNEL, b"out\n")
        .await
        .unwrap();
    deliver(0, IofChannel::STDERR_CHANNEL, b"own\n")
        .await
        .unwrap();
    deliver(1, IofChannel::STDERR_CHANNEL, b"err\n")
        .await
        .unwrap();
    let got = wait_for(&seen, 1).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        (
            got[0].handler,
            &got[0].source,
            got[0].channel,
            &got[0].data[..]
        ),
        (id, &rank1, IofChannel::STDERR_CHANNEL, &b"err\n"[..])
    );
    clients[0].iof_deregister(id, &[]).await.unwrap();
    assert!(host.pulls.lock().unwrap()[1].2, "the host is told to stop");
    assert_eq!(
        clients[0]
            .iof_deregister(id, &[])
            .await
            .unwrap_err()
            .status(),
        Status::ERR_BAD_PARAM,
        "a pull ends once"
    );
}

#[tokio::test]
async fn output_written_before_anyone_pulled_it_reaches_the_first_pull() {
    let (server, ns) = server_with(ForwardingHost::default(), false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let rank1 = Proc::new(ns.clone(), Rank(1));
    let early = b"before the pull\n".to_vec();
    server
        .iof_deliver(
            rank1.clone(),
            IofChannel::STDOUT_CHANNEL,
            early.clone(),
            vec![],
        )
        .await
        .unwrap();
    let (handler, seen) = collector();
    let wildcard = Proc::new(ns.clone(), Rank::WILDCARD);
    let channels = IofChannel(IofChannel::STDOUT_CHANNEL.0 | IofChannel::STDERR_CHANNEL.0);
    clients[0]
        .iof_pull(&[wildcard], channels, &[], handler)
        .await
        .unwrap();
    let got = wait_for(&seen, 1).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((&got[0].source, &got[0].data), (&rank1, &early));
}

#[tokio::test]
async fn stdin_cannot_be_pulled_and_pushed_input_reaches_the_host_from_its_pusher() {
    let host = ForwardingHost::default();
    let (server, ns) = server_with(host.clone(), false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    let rank1 = Proc::new(ns.clone(), Rank(1));
    let (handler, _) = collector();
    let refused = clients[0]
        .iof_pull(
            std::slice::from_ref(&rank1),
            IofChannel::STDIN_CHANNEL,
            &[],
            handler,
        )
        .await
        .unwrap_err();
    assert_eq!(refused.status(), Status::ERR_NOT_SUPPORTED);
    assert!(host.pulls.lock().unwrap().is_empty());
    clients[0]
        .iof_push(std::slice::from_ref(&rank1), Some(b"input"), &[])
        .await
        .unwrap();
    let rank0 = Proc::new(ns.clone(), Rank(0));
    assert_eq!(
        host.pushed.lock().unwrap().clone(),
        [(rank0, vec![rank1], Some(b"input".to_vec()))]
    );
}

#[tokio::test]
async fn finalize_lets_go_of_the_pulls_handlers() {
    let (server, ns) = server_with(ForwardingHost::default(), false, 2).await;
    let clients = memory_clients(&server, &ns, 2).await;
    // What a handler holds, as a handler that holds its own client would.
    let held = Arc::new(());
    let in_handler = held.clone();
    let handler: IofHandler = Arc::new(move |_| {
        let _ = &in_handler;
    });
    let rank1 = Proc::new(ns.clone(), Rank(1));
    (clients[0].iof_pull(&[rank1], IofChannel::STDOUT_CHANNEL, &[], handler))
        .await
        .unwrap();
    assert_eq!(Arc::strong_count(&held), 2);
    clients[0].finalize().await.unwrap();
    assert_eq!(Arc::strong_count(&held), 1, "the pull's handler is dropped");
}
