//! Replays traffic captured between unmodified OpenPMIx 4.2.2 clients and a server
//! (`tests/data/captures/`, strace of the socket calls) through the wire layer: every connect
//! message, request and reply decodes into a typed message that re-encodes to the same bytes
//! (a connect message without the stray last byte 4.2's clients add: `wire::handshake`).

use std::collections::BTreeMap;

use pmix::codec::BufferType;
use pmix::wire::{Command, ConnectRequest, Frame, FrameDecoder, Reply, Request, Tag};

/// One socket call of a capture: process id, call name, file descriptor and the byte strings
/// it carried (for `writev`, one per iovec).
struct Call {
    pid: u32,
    name: String,
    fd: u32,
    data: Vec<Vec<u8>>,
}

fn parse_capture(text: &str) -> Vec<Call> {
    let mut calls = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let (Some(pid), Some(_time), Some(rest)) = (words.next(), words.next(), words.next())
        else {
            continue;
        };
        let Some((name, args)) = rest.split_once('(') else {
            continue;
        };
        let fd = args.trim_end_matches(',').parse().unwrap_or(u32::MAX);
        let mut data = Vec::new();
        // Byte strings are written as "\xNN\xNN…".
        for piece in line.split('"').skip(1).step_by(2) {
            if piece.is_empty() || !piece.starts_with("\\x") {
                continue;
            }
            let bytes: Vec<u8> = piece
                .split("\\x")
                .filter(|h| !h.is_empty())
                .map(|h| u8::from_str_radix(h, 16).expect("capture bytes are hex"))
                .collect();
            data.push(bytes);
        }
        calls.push(Call {
            pid: pid.parse().expect("pid"),
            name: name.to_owned(),
            fd,
            data,
        });
    }
    calls
}

struct Replayed {
    connects: usize,
    requests: usize,
    replies: usize,
    commands: BTreeMap<String, usize>,
}

fn replay(text: &str) -> Replayed {
    let calls = parse_capture(text);
    let mut out = Replayed {
        connects: 0,
        requests: 0,
        replies: 0,
        commands: BTreeMap::new(),
    };
    // Connect messages, sent by clients with `sendto`: host-order header, then the payload.
    let mut server_pid = None;
    for c in &calls {
        if c.name == "sendto" && c.data.first().is_some_and(|d| d.starts_with(&[0xff; 8])) {
            let bytes = &c.data[0];
            let header: [u8; 16] = bytes[..16].try_into().expect("header");
            let n = ConnectRequest::payload_len(&header).expect("length");
            let req = ConnectRequest::decode(&bytes[16..16 + n]).expect("connect decodes");
            // 4.2's clients end with a stray zero this library does not send.
            assert_eq!(bytes.last(), Some(&0), "the stray byte");
            let mut without = bytes[..bytes.len() - 1].to_vec();
            without[8..12].copy_from_slice(&((n - 1) as u32).to_ne_bytes());
            assert_eq!(
                req.encode().expect("encodes"),
                without,
                "connect re-encodes"
            );
            out.connects += 1;
        }
        if c.name == "sendto" && c.data.first().is_some_and(|d| d.len() == 4) {
            server_pid = Some(c.pid);
        }
    }
    let server_pid = server_pid.expect("the server answered a handshake");
    // Requests and replies: each `writev` is one whole frame (header iovec + payload iovec).
    let mut pending: BTreeMap<(i32, Tag), Command> = BTreeMap::new();
    let mut fd_peer: BTreeMap<u32, i32> = BTreeMap::new();
    for c in calls.iter().filter(|c| c.name == "writev") {
        let bytes: Vec<u8> = c.data.concat();
        let mut d = FrameDecoder::default();
        d.handle_bytes(&bytes);
        let frame: Frame = d.next_frame().expect("frame").expect("whole frame");
        assert_eq!(d.pending(), 0, "one frame per writev");
        let bt = BufferType::NonDescribed;
        if c.pid != server_pid {
            let req = Request::decode(&frame.payload, bt).expect("request decodes");
            assert_eq!(req.encode(bt).expect("encodes"), frame.payload, "{req:?}");
            pending.insert((frame.pindex, frame.tag), req.command());
            *out.commands
                .entry(format!("{:?}", req.command()))
                .or_default() += 1;
            out.requests += 1;
        } else {
            // Server fds map to client peer indices in accept order.
            let next = fd_peer.len() as i32;
            let peer = *fd_peer.entry(c.fd).or_insert(next);
            let command = pending
                .get(&(peer, frame.tag))
                .copied()
                .expect("a reply answers a request");
            let reply = Reply::decode(command, &frame.payload, bt).expect("reply decodes");
            assert_eq!(
                reply.encode(bt).expect("encodes"),
                frame.payload,
                "{reply:?}"
            );
            out.replies += 1;
        }
    }
    out
}

#[test]
fn hash_capture_replays_byte_for_byte() {
    let r = replay(include_str!("data/captures/basic_n2_hash_socket.txt"));
    assert_eq!(r.connects, 2);
    assert!(r.requests >= 20, "{} requests", r.requests);
    assert_eq!(r.requests, r.replies);
    for cmd in [
        "REQ",
        "COMMIT",
        "FENCENB",
        "GETNB",
        "PUBLISHNB",
        "LOOKUPNB",
        "FINALIZE",
    ] {
        assert!(
            r.commands.contains_key(cmd),
            "{cmd} missing from {:?}",
            r.commands
        );
    }
}

#[test]
fn ds21_capture_replays_byte_for_byte() {
    let r = replay(include_str!("data/captures/basic_n2_socket.txt"));
    assert_eq!(r.connects, 2);
    assert_eq!(r.requests, r.replies);
}

fn hex_file(text: &str) -> Vec<u8> {
    let s: String = text.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn job_info_replies_decode_into_the_realm_arrays() {
    for text in [
        include_str!("data/captures/req_reply.hex"),
        include_str!("data/captures/req_reply_hash.hex"),
    ] {
        let bytes = hex_file(text);
        let reply = Reply::decode(Command::REQ, &bytes, BufferType::NonDescribed).expect("decodes");
        assert_eq!(
            reply.encode(BufferType::NonDescribed).expect("encodes"),
            bytes
        );
        let Reply::JobInfo { nspace, kvals } = reply else {
            panic!("not a job-info reply")
        };
        assert_eq!(nspace.as_str(), "rsjob");
        let keys: Vec<&str> = kvals.iter().map(|k| k.key.as_str()).collect();
        for k in ["pmix.ssn.arr", "pmix.node.arr", "pmix.app.arr"] {
            assert!(keys.contains(&k), "{k} not in {keys:?}");
        }
    }
}
