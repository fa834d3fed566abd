//! The server's core driven by a sequence of steps read from arbitrary bytes: connects (of
//! the job's ranks and of any connect message), frames (any bytes, or requests built from a
//! template so that deeper states are reached), disconnects, the host's answers of any kind
//! and the timers' expiry, and the host's own calls. After each step the core's actions are
//! drained and checked:
//!
//! - nothing panics (the fuzzer's own check);
//! - every reply to a request of a known command decodes as that command's reply, every
//!   event and every forwarded output decodes;
//! - what the core sends stays within a bounded multiple of what it was given (a fence of
//!   the job's four ranks fans each contribution out to each of them; nothing more), and the
//!   actions of one step are bounded.
//!
//! Each step starts with a byte choosing its kind; the bytes after it are read as the kind
//! needs, and a step cut short by the input's end is not taken.

use std::collections::BTreeMap;

use crate::codec::BufferType;
use crate::model::{DataRange, Info, Key, Kval, Nspace, Proc, Rank, Scope, Status, Value, attr};
use crate::server::core::{Action, ConnId, HostResult, PeerCred, ServerCore};
use crate::wire::Command;
use crate::wire::frame::{Frame, Tag};
use crate::wire::handshake::ConnectRequest;
use crate::wire::message::{CommitBucket, Notification, Reply, Request};
use crate::wire::ops::IofDelivery;

/// The ranks of the job the server hosts.
const SIZE: u32 = 4;
/// The user the kernel vouches for.
const UID: u32 = 1000;
/// Held gets per connection: small, so that the limit is met.
const HELD_GETS: usize = 8;
/// What the core may send per byte it was given, and the slack for answers to nothing but a
/// header (a job-info request answers with the job's registered data).
const FAN_OUT: usize = 64;
const SLACK: usize = 256 * 1024;
/// Actions one step may cause at most.
const ACTIONS_PER_STEP: usize = 10_000;

/// The bytes of the input, read front to back.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*first)
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.byte()?, self.byte()?]))
    }

    /// Up to `n` bytes (fewer where the input ends).
    fn bytes(&mut self, n: usize) -> &[u8] {
        let (taken, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        taken
    }
}

/// A connection the driver believes open, and how its replies are read (`None`: opened by
/// a connect message of the fuzzer's, whose replies are not decoded).
struct Open {
    conn: ConnId,
    buffer_type: Option<BufferType>,
}

struct Driver {
    core: ServerCore,
    open: Vec<Open>,
    next_conn: ConnId,
    next_tag: u32,
    /// The command of each request sent on a connection whose replies are read, by tag.
    asked: BTreeMap<(ConnId, u32), Command>,
    host_ops: Vec<u64>,
    timers: Vec<u64>,
    given: usize,
    sent: usize,
    /// Replies, events and output decoded and found well formed.
    read: usize,
}

fn rank(r: u32) -> Proc {
    Proc::new(Nspace::from_checked("job".into()), Rank(r % SIZE))
}

/// A request from a template: `which` picks it, `param` fills it in.
fn template(which: u8, param: u8) -> Request {
    let key = format!("k{}", param % 8);
    let peer = rank(u32::from(param));
    match which % 10 {
        0 => Request::Fence {
            procs: vec![],
            info: vec![Info::new(attr::COLLECT_DATA, param & 1 == 1)],
        },
        1 => Request::Commit {
            buckets: vec![CommitBucket {
                scope: Scope::GLOBAL,
                kvals: vec![Kval {
                    key: Key::new(&key).expect("a short key"),
                    value: Value::string(vec![param.max(1); usize::from(param % 32)]),
                }],
            }],
        },
        2 => Request::Get {
            nspace: peer.nspace.as_str().to_owned(),
            rank: peer.rank,
            info: if param & 0x80 == 0 {
                vec![]
            } else {
                vec![Info::new(attr::TIMEOUT, i32::from(param & 3))]
            },
            key: Some(key),
        },
        3 => Request::Finalize,
        4 => Request::JobInfo,
        5 => Request::Publish {
            uid: UID,
            info: vec![Info::with_key(&key, Value::Uint8(param)).expect("a short key")],
        },
        6 => Request::Lookup {
            uid: UID,
            keys: vec![key],
            info: vec![],
        },
        7 => Request::RegisterEvents {
            codes: vec![Status(-i32::from(param))],
            info: vec![],
        },
        8 => Request::Notify {
            status: Status(-i32::from(param)),
            range: DataRange(param % 8),
            info: vec![],
        },
        _ => Request::Fence {
            procs: vec![peer, rank(u32::from(param) + 1)],
            info: vec![],
        },
    }
}

/// A host answer of the kind `kind` says, with `bytes` where it carries data.
fn host_answer(kind: u8, bytes: &[u8]) -> HostResult {
    let status = Status(-i32::from(kind >> 3));
    match kind % 6 {
        0 => HostResult::Status(Status::SUCCESS),
        1 => HostResult::Status(status),
        2 => HostResult::Data(Ok(bytes.to_vec())),
        3 => HostResult::Data(Err(status)),
        4 => HostResult::Infos(Ok(vec![])),
        _ => HostResult::Lookup(Ok(vec![])),
    }
}

impl Driver {
    fn new() -> Self {
        let mut core = ServerCore::new(Some("n0".into()), true, "4.2.2")
            .with_tool_uids(vec![UID])
            .with_held_gets(HELD_GETS);
        let size = vec![Info::new(attr::JOB_SIZE, SIZE)];
        core.register_nspace(Nspace::from_checked("job".into()), &size)
            .expect("the job registers");
        for r in 0..SIZE {
            core.register_client(rank(r), UID, UID);
        }
        Driver {
            core,
            open: Vec::new(),
            next_conn: 1,
            next_tag: Tag::FIRST_DYNAMIC.0,
            asked: BTreeMap::new(),
            host_ops: Vec::new(),
            timers: Vec::new(),
            given: 0,
            sent: 0,
            read: 0,
        }
    }

    fn fresh_conn(&mut self) -> ConnId {
        self.next_conn += 1;
        self.next_conn
    }

    /// One step; `None` when the input ended inside it.
    fn step(&mut self, input: &mut Input<'_>) -> Option<()> {
        match input.byte()? % 8 {
            0 => {
                let (r, flags) = (input.byte()?, input.byte()?);
                let buffer_type = if flags & 1 == 1 {
                    BufferType::FullyDescribed
                } else {
                    BufferType::NonDescribed
                };
                let req = ConnectRequest::simple_client(rank(u32::from(r)), UID, UID, buffer_type);
                let conn = self.fresh_conn();
                self.open.push(Open {
                    conn,
                    buffer_type: Some(buffer_type),
                });
                self.core
                    .handle_hello(conn, &req, Some(PeerCred::new(UID, UID)));
            }
            1 => {
                let n = usize::from(input.u16()?);
                let bytes = input.bytes(n);
                self.given += bytes.len();
                if let Ok(req) = ConnectRequest::decode(bytes) {
                    let conn = self.fresh_conn();
                    self.open.push(Open {
                        conn,
                        buffer_type: None,
                    });
                    let peer = (n & 1 == 0).then(|| PeerCred::new(UID, UID));
                    self.core.handle_hello(conn, &req, peer);
                }
            }
            2 => {
                let which = input.byte()?;
                let n = usize::from(input.u16()?);
                let payload = input.bytes(n).to_vec();
                self.given += payload.len() + 16;
                self.frame(which, payload);
            }
            3 => {
                let (which, kind, param) = (input.byte()?, input.byte()?, input.byte()?);
                if self.open.is_empty() {
                    return Some(());
                }
                let open = &self.open[usize::from(which) % self.open.len()];
                let bt = open.buffer_type.unwrap_or(BufferType::NonDescribed);
                let payload = template(kind, param)
                    .encode(bt)
                    .expect("a template encodes");
                self.given += payload.len() + 16;
                self.frame(which, payload);
            }
            4 => {
                let which = input.byte()?;
                if !self.open.is_empty() {
                    let gone = self.open.swap_remove(usize::from(which) % self.open.len());
                    self.core.handle_closed(gone.conn);
                }
            }
            5 => {
                let (which, kind) = (input.byte()?, input.byte()?);
                let n = usize::from(input.byte()?);
                let bytes = input.bytes(n).to_vec();
                self.given += bytes.len() + 16;
                if !self.host_ops.is_empty() {
                    let op = self
                        .host_ops
                        .swap_remove(usize::from(which) % self.host_ops.len());
                    self.core.handle_host(op, host_answer(kind, &bytes));
                }
            }
            6 => {
                let which = input.byte()?;
                if !self.timers.is_empty() {
                    let op = self
                        .timers
                        .swap_remove(usize::from(which) % self.timers.len());
                    self.core.handle_timeout(op);
                }
            }
            _ => {
                let (which, param) = (input.byte()?, input.byte()?);
                self.given += 16;
                self.host_call(which, param);
            }
        }
        Some(())
    }

    fn frame(&mut self, which: u8, payload: Vec<u8>) {
        if self.open.is_empty() {
            return;
        }
        let open = &self.open[usize::from(which) % self.open.len()];
        let (conn, buffer_type) = (open.conn, open.buffer_type);
        let tag = self.next_tag;
        self.next_tag += 1;
        if let Some(bt) = buffer_type
            && let Ok(req) = Request::decode(&payload, bt)
        {
            self.asked.insert((conn, tag), req.command());
        }
        self.core.handle_frame(
            conn,
            Frame {
                pindex: 0,
                tag: Tag(tag),
                payload,
            },
        );
    }

    /// One of the host's own calls into the server.
    fn host_call(&mut self, which: u8, param: u8) {
        let other = Nspace::from_checked(format!("other{}", param % 2));
        match which % 6 {
            0 => {
                let info = vec![Info::new(attr::JOB_SIZE, u32::from(param % 4))];
                let _ = self.core.register_nspace(other, &info);
            }
            1 => self.core.deregister_nspace(other.as_str()),
            2 => self.core.deregister_client(&rank(u32::from(param))),
            3 => self.core.register_client(rank(u32::from(param)), UID, UID),
            4 => {
                // Its answer comes as an action, checked with the others.
                self.core.dmodex_request(rank(u32::from(param)), &[]);
            }
            _ => self.core.store_internal(
                rank(u32::from(param)),
                Key::new("internal").expect("a short key"),
                Value::Uint8(param),
            ),
        }
    }

    /// Drain the core's actions and check each.
    fn drain(&mut self) {
        let mut count = 0;
        while let Some(action) = self.core.poll_action() {
            count += 1;
            assert!(
                count <= ACTIONS_PER_STEP,
                "one step caused over {ACTIONS_PER_STEP} actions"
            );
            match action {
                Action::Send { conn, tag, payload } => {
                    self.sent += payload.len();
                    self.check_sent(conn, tag, &payload);
                }
                Action::Handshake {
                    conn,
                    reply,
                    refused,
                } => {
                    self.sent += reply.len();
                    if refused.is_some() {
                        self.close(conn);
                    }
                }
                Action::Close { conn, .. } => self.close(conn),
                Action::Host { op, .. } => self.host_ops.push(op),
                Action::Timer { op, .. } => self.timers.push(op),
                Action::DmodexReply { result, .. } => {
                    self.sent += result.map_or(0, |b| b.len());
                }
            }
        }
        assert!(
            self.sent <= FAN_OUT * self.given + SLACK,
            "the core sent {} bytes for {} given",
            self.sent,
            self.given
        );
    }

    fn close(&mut self, conn: ConnId) {
        self.open.retain(|o| o.conn != conn);
        self.core.handle_closed(conn);
    }

    fn check_sent(&mut self, conn: ConnId, tag: Tag, payload: &[u8]) {
        let Some(bt) = self
            .open
            .iter()
            .find(|o| o.conn == conn)
            .and_then(|o| o.buffer_type)
        else {
            return;
        };
        if tag == Tag::NOTIFY {
            if let Err(e) = Notification::decode(payload, bt) {
                panic!("an event the core sent does not decode: {e}");
            }
        } else if tag == Tag::IOF {
            if let Err(e) = IofDelivery::decode(payload, bt) {
                panic!("output the core forwarded does not decode: {e}");
            }
        } else if let Some(command) = self.asked.get(&(conn, tag.0)).copied() {
            if let Err(e) = Reply::decode(command, payload, bt) {
                panic!("the reply to {command:?} does not decode: {e}");
            }
        } else {
            return;
        }
        self.read += 1;
    }
}

/// Drive a server core through the steps `data` describes (see the module's text).
pub fn server_core(data: &[u8]) {
    let mut driver = Driver::new();
    let mut input = Input(data);
    driver.drain();
    while driver.step(&mut input).is_some() {
        driver.drain();
    }
}

/// The client's core driven by a sequence of steps read from arbitrary bytes: requests from
/// templates, puts and commits, gets through its cache, any bytes from the server, replies of
/// any payload to the requests waiting, and the loss of the connection. After each step:
/// every frame the client writes decodes as a request, the replies it completes are handed
/// to the get that waits for one, and what it holds (replies, events, output not yet taken)
/// stays within what it was given.
#[cfg(feature = "runtime")]
pub fn client_core(data: &[u8]) {
    drive_client(data);
}

/// What a run of [`client_core`] saw: requests written, gets finished with a reply.
#[cfg(feature = "runtime")]
#[derive(Debug, Default)]
struct ClientRun {
    requests: usize,
    gets_finished: usize,
}

#[cfg(feature = "runtime")]
fn drive_client(data: &[u8]) -> ClientRun {
    use crate::client::core::{ClientCore, GetStart};
    use crate::wire::frame::FrameDecoder;

    let me = rank(0);
    let buffer_type = BufferType::NonDescribed;
    let mut core = ClientCore::new(me.clone(), buffer_type, 0);
    // The key each waiting get asked for, by tag.
    let mut gets: BTreeMap<u32, String> = BTreeMap::new();
    let mut waiting: Vec<u32> = Vec::new();
    let mut written = FrameDecoder::new(1 << 24);
    let mut given = 0usize;
    let mut run = ClientRun::default();
    let mut input = Input(data);
    while let (Some(kind), Some(param)) = (input.byte(), input.byte()) {
        match kind % 7 {
            0 => {
                if let Ok(tag) = core.send_request(&template(param, param.rotate_left(3))) {
                    waiting.push(tag.0);
                }
            }
            1 => {
                let Some(n) = input.u16() else { break };
                let bytes = input.bytes(usize::from(n));
                given += bytes.len();
                core.handle_bytes(bytes);
            }
            2 => {
                let Some(n) = input.u16() else { break };
                let payload = input.bytes(usize::from(n)).to_vec();
                given += payload.len() + 16;
                let tag = if waiting.is_empty() {
                    Tag(u32::from(param))
                } else {
                    Tag(waiting.swap_remove(usize::from(param) % waiting.len()))
                };
                let frame = Frame {
                    pindex: 0,
                    tag,
                    payload,
                };
                if let Ok(bytes) = frame.encode() {
                    core.handle_bytes(&bytes);
                }
            }
            3 => {
                let value = Value::string(vec![param.max(1); usize::from(param % 16)]);
                let _ = core.put(Scope::GLOBAL, &format!("k{}", param % 4), value);
            }
            4 => {
                if let Some(commit) = core.take_commit() {
                    let _ = core.send_oneway(&commit);
                }
            }
            5 => core.handle_lost(),
            _ => {
                let key = format!("k{}", param % 4);
                match core.get_start(&rank(u32::from(param >> 2)), &key, &[]) {
                    GetStart::Done(_) => {}
                    GetStart::Ask(req) => {
                        if let Ok(tag) = core.send_request(&req) {
                            gets.insert(tag.0, key);
                            waiting.push(tag.0);
                        }
                    }
                }
            }
        }
        for frame in core.drain_transmit() {
            written.handle_bytes(&frame);
            while let Ok(Some(f)) = written.next_frame() {
                if f.tag != Tag::HEARTBEAT
                    && let Err(e) =
                        Request::decode_for(&f.payload, buffer_type, core.server_dialect())
                {
                    panic!("the client wrote a request it cannot read: {e}");
                }
                run.requests += 1;
            }
            assert_eq!(written.pending(), 0, "the client wrote part of a frame");
        }
        let mut held = 0usize;
        while let Some((tag, reply)) = core.poll_reply() {
            held += 1;
            if let Some(key) = gets.remove(&tag.0) {
                let _ = core.get_finish(&key, &[], reply);
                run.gets_finished += 1;
            }
        }
        while core.poll_event().is_some() {
            held += 1;
        }
        while core.poll_output().is_some() {
            held += 1;
        }
        assert!(
            held <= given / 8 + waiting.len() + 2,
            "{held} items from {given} bytes"
        );
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes of a step that connects rank `r`.
    fn connect(r: u8) -> [u8; 3] {
        [0, r, 0]
    }

    #[test]
    fn four_ranks_fence_and_get_through_templates() {
        let mut steps = Vec::new();
        for r in 0..4 {
            steps.extend(connect(r));
        }
        for c in 0..4 {
            // Commit, then a collecting fence.
            steps.extend([3, c, 1, c]);
            steps.extend([3, c, 0, 1]);
        }
        // The host's fence answer, then a get of rank 2's key.
        steps.extend([5, 0, 2, 0]);
        steps.extend([3, 0, 2, 2]);
        let mut driver = Driver::new();
        let mut input = Input(&steps);
        while driver.step(&mut input).is_some() {
            driver.drain();
        }
        assert_eq!(driver.open.len(), 4, "the ranks stay connected");
        assert_eq!(driver.asked.len(), 9, "eight requests and a get");
        // The four commits' replies, the four fences' once the host answered, the get's.
        assert_eq!(driver.read, 9, "replies read");
    }

    #[test]
    fn odd_inputs_end_without_a_panic() {
        for input in [
            &[][..],
            &[0],
            &[2, 0, 0xff, 0xff],
            &[7; 64],
            &[1, 3, 0, 1, 2, 3],
        ] {
            server_core(input);
            #[cfg(feature = "runtime")]
            client_core(input);
        }
    }

    #[cfg(feature = "runtime")]
    #[test]
    fn a_client_puts_commits_and_reads_any_reply_to_its_get() {
        let mut steps = vec![3, 1, 4, 0, 6, 4];
        // A reply of junk to the get, a lost connection, then requests that fail at once.
        steps.extend([2, 0, 3, 0, 1, 2, 3, 5, 0, 0, 0, 6, 5]);
        let run = drive_client(&steps);
        assert_eq!(run.requests, 2, "the commit and the get: {run:?}");
        assert_eq!(run.gets_finished, 1, "{run:?}");
    }
}
