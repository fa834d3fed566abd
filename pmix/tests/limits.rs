//! The server's resource limits (`pmix::server::Limits`) against peers that hold its memory:
//! one that never reads, one whose frame trickles in, several holding half frames. Each is
//! stopped or closed, nothing it was sent is lost while it reads, and what it held is given
//! back.

#![allow(clippy::unwrap_used)] // test helpers fail loudly by design

use std::time::Duration;

use pmix::model::Status;
use pmix::server::{Held, Limits, NoHost, Server};
use pmix::wire::{Frame, Header, Tag};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

mod common;

use common::{server_configured, uid_gid};

/// A frame of a command no server knows: answered with `PMIX_ERR_NOT_SUPPORTED` in a frame of
/// the same size.
fn unknown_command() -> Vec<u8> {
    Frame {
        pindex: 0,
        tag: Tag(101),
        payload: vec![2, 200],
    }
    .encode()
    .unwrap()
}

async fn limited(limits: Limits) -> Server {
    let (server, _) = server_configured(NoHost, false, 4, |c| {
        c.unix_socket = true;
        c.limits = limits;
    })
    .await;
    server
}

/// A connection of rank `rank` of the test's job, its handshake answered.
async fn connect(server: &Server, rank: u32) -> UnixStream {
    let (uid, gid) = uid_gid();
    let hello = pmix::wire::handshake::ConnectRequest::simple_client(
        pmix::model::Proc::try_new("testjob", rank).unwrap(),
        uid,
        gid,
        pmix::codec::BufferType::NonDescribed,
    )
    .encode()
    .unwrap();
    let mut s = UnixStream::connect(server.unix_socket().unwrap())
        .await
        .unwrap();
    s.write_all(&hello).await.unwrap();
    // A client's handshake reply: its status and its index, four bytes each.
    let mut reply = [0u8; 8];
    s.read_exact(&mut reply).await.unwrap();
    assert_eq!(&reply[..4], &Status::SUCCESS.0.to_be_bytes());
    s
}

/// Wait (up to a minute, for a loaded machine) until `held` says yes.
async fn until(server: &Server, what: &str, held: impl Fn(Held) -> bool) -> Held {
    for _ in 0..6000 {
        let now = server.held();
        if held(now) {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what}: the server holds {:?}", server.held());
}

#[tokio::test]
async fn a_peer_that_does_not_read_stops_being_read_and_loses_nothing_when_it_reads() {
    let limits = Limits {
        pause_at: 64 << 10,
        ..Limits::default()
    };
    let server = limited(limits.clone()).await;
    let s = connect(&server, 0).await;
    let (mut rx, mut tx) = s.into_split();
    // 2 MiB of requests, ten times what a Unix socket buffers each way.
    let request = unknown_command();
    let count = (2 << 20) / request.len();
    let sender = tokio::spawn(async move {
        let all = request.repeat(count);
        tx.write_all(&all).await.unwrap();
        tx
    });
    // The server answers until the peer's backlog reaches the pause mark, then stops reading.
    until(&server, "no backlog", |h| h.queued > limits.pause_at / 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let held = server.held();
    // A paused reader holds at most the mark plus one read's worth of requests and replies.
    assert!(
        held.queued + held.inbound <= limits.pause_at + 2 * (64 << 10),
        "{held:?}"
    );
    assert!(!sender.is_finished(), "the server read every request");
    // Reading every reply lets the rest of the requests in; none is lost.
    let mut replies = vec![0u8; count * unknown_command().len()];
    tokio::time::timeout(Duration::from_secs(120), rx.read_exact(&mut replies))
        .await
        .expect("every reply arrives")
        .unwrap();
    let answer = [2, (Status::ERR_NOT_SUPPORTED.0 * -2 - 1) as u8];
    for reply in replies.chunks(unknown_command().len()) {
        assert_eq!(&reply[16..], &answer);
    }
    let _tx = sender.await.unwrap();
    until(&server, "memory given back", |h| h == Held::default()).await;
}

#[tokio::test]
async fn a_peer_past_its_backlog_is_closed_and_others_are_served() {
    let server = limited(Limits {
        pause_at: 1 << 30,
        backlog: 32 << 10,
        ..Limits::default()
    })
    .await;
    let s = connect(&server, 0).await;
    let (mut rx, mut tx) = s.into_split();
    let request = unknown_command();
    let count = (2 << 20) / request.len();
    let sender = tokio::spawn(async move {
        // The server closes the connection part way: the write fails.
        let _ = tx.write_all(&request.repeat(count)).await;
    });
    until(&server, "a backlog", |h| h.queued > 0).await;
    // Closed: the reader sees the end of its stream before every reply.
    let mut replies = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), rx.read_to_end(&mut replies))
        .await
        .expect("the connection is closed")
        .unwrap();
    assert!(replies.len() < count * unknown_command().len());
    sender.await.unwrap();
    until(&server, "memory given back", |h| h == Held::default()).await;
    // Another rank is served.
    let mut other = connect(&server, 1).await;
    other.write_all(&unknown_command()).await.unwrap();
    let mut reply = vec![0u8; unknown_command().len()];
    other.read_exact(&mut reply).await.unwrap();
}

#[tokio::test]
async fn a_frame_that_arrives_too_slowly_is_dropped_with_its_connection() {
    let server = limited(Limits {
        frame_grace: Duration::from_secs(1),
        ..Limits::default()
    })
    .await;
    let mut s = connect(&server, 0).await;
    let header = Header {
        pindex: 0,
        tag: Tag(101),
        nbytes: 1000,
    };
    s.write_all(&header.encode()).await.unwrap();
    s.write_all(&[2; 10]).await.unwrap();
    until(&server, "a partial frame", |h| h.partial > 0).await;
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut rest))
        .await
        .expect("the slow frame's connection is closed")
        .unwrap();
    assert!(rest.is_empty());
    until(&server, "memory given back", |h| h == Held::default()).await;
}

#[tokio::test]
async fn partial_frames_are_limited_over_all_connections() {
    let server = limited(Limits {
        total_partial: 100 << 10,
        ..Limits::default()
    })
    .await;
    let header = Header {
        pindex: 0,
        tag: Tag(101),
        nbytes: 80 << 10,
    }
    .encode();
    let mut first = connect(&server, 0).await;
    first.write_all(&header).await.unwrap();
    first.write_all(&[0; 60 << 10]).await.unwrap();
    until(&server, "the first half frame", |h| h.partial >= 60 << 10).await;
    let mut second = connect(&server, 1).await;
    second.write_all(&header).await.unwrap();
    // The second half frame passes the total: its connection is closed.
    let _ = second.write_all(&[0; 60 << 10]).await;
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), second.read_to_end(&mut rest))
        .await
        .expect("the connection past the total is closed")
        .unwrap();
    until(&server, "the second's bytes given back", |h| {
        h.partial < 100 << 10
    })
    .await;
    // The first is still being read: its frame completes and is answered (a frame of zeros
    // does not parse, so the server closes it after reading it whole).
    first.write_all(&[0; 20 << 10]).await.unwrap();
    until(&server, "the first frame whole", |h| h.partial == 0).await;
}
