//! Entry points for the fuzz targets in `fuzz/`, one per parser of what comes from outside
//! (STYLE 17: each target is a thin shell over one of these). Each takes arbitrary bytes;
//! none may panic, allocate more than its input justifies, or hang, and what this crate
//! writes of a decoded message must read back as what it writes the same. The value codec's
//! own entry is [`crate::codec::fuzzing::unpack`].
//!
//! Inputs that choose how to read the rest start with a byte of flags: bit 0 a fully
//! described buffer, bits 1–2 the peer's release series (4, 5, 6; 3 reads as 4).

mod stateful;

#[cfg(feature = "runtime")]
pub use stateful::client_core;
pub use stateful::server_core;

use crate::codec::BufferType;
use crate::wire::Command;
use crate::wire::frame::{FrameDecoder, HEADER_LEN};
use crate::wire::handshake::{ConnectRequest, ToolReply};
use crate::wire::message::{Notification, Reply, Request};
use crate::wire::ops::IofDelivery;
use crate::wire::version::{Dialect, PeerVersion};

/// The buffer type and dialect a flags byte chooses.
fn flags(byte: u8) -> (BufferType, Dialect) {
    let buffer_type = if byte & 1 == 1 {
        BufferType::FullyDescribed
    } else {
        BufferType::NonDescribed
    };
    let dialect = match (byte >> 1) & 3 {
        1 => Dialect::V5,
        2 => Dialect::V6,
        _ => Dialect::V4,
    };
    (buffer_type, dialect)
}

/// What this crate writes of a decoded message, it reads back as a message it writes the
/// same: the decoder may accept more than the encoder writes (a peer's extra field after a
/// failure, say), but never reads this crate's own bytes as something else.
fn settles<T>(
    decoded: &T,
    encode: impl Fn(&T) -> Result<Vec<u8>, crate::Error>,
    decode: impl Fn(&[u8]) -> Result<T, crate::Error>,
    what: &str,
) {
    let bytes = encode(decoded).unwrap_or_else(|e| panic!("a decoded {what} encodes: {e}"));
    let again = decode(&bytes).unwrap_or_else(|e| panic!("a {what} this crate wrote: {e}"));
    let twice = encode(&again).unwrap_or_else(|e| panic!("a {what} read back encodes: {e}"));
    assert_eq!(
        twice, bytes,
        "{what}: this crate's bytes read back as another {what}"
    );
}

/// A stream of frames, fed in pieces of the size byte 0 says (1–256 bytes): each frame
/// re-encodes to the bytes it came from (but the header's padding), and the decoder holds no
/// more than it was fed.
pub fn frames(data: &[u8]) {
    let [piece, stream @ ..] = data else {
        return;
    };
    let piece = usize::from(*piece) + 1;
    let mut decoder = FrameDecoder::new(1 << 16);
    let mut consumed = 0;
    for (i, chunk) in stream.chunks(piece).enumerate() {
        decoder.handle_bytes(chunk);
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => {
                    let bytes = frame.encode().expect("a decoded frame encodes");
                    let came = &stream[consumed..consumed + bytes.len()];
                    // The header's last word is padding: read by no one, written as zeros.
                    assert_eq!(bytes[..12], came[..12]);
                    assert_eq!(bytes[HEADER_LEN..], came[HEADER_LEN..]);
                    consumed += bytes.len();
                }
                Ok(None) => break,
                // An oversized frame ends the stream, as it ends the connection.
                Err(_) => return,
            }
        }
        let fed = (i * piece + chunk.len()).min(stream.len());
        assert_eq!(consumed + decoder.pending(), fed);
    }
}

/// A connect message's payload, and the answers a tool reads.
pub fn handshake(data: &[u8]) {
    if let Ok(request) = ConnectRequest::decode(data) {
        settles(
            &request,
            ConnectRequest::encode,
            |b| ConnectRequest::decode(b.get(HEADER_LEN..).unwrap_or_default()),
            "connect message",
        );
    }
    let _ = ToolReply::decode(data, true);
    let _ = ToolReply::decode(data, false);
    if let Some(word) = data.first_chunk::<4>() {
        let _ = crate::wire::handshake::decode_status(*word);
    }
}

/// A request payload, read as the flags byte says.
pub fn request(data: &[u8]) {
    let [f, payload @ ..] = data else {
        return;
    };
    let (buffer_type, dialect) = flags(*f);
    let Ok(request) = Request::decode_for(payload, buffer_type, dialect) else {
        return;
    };
    settles(
        &request,
        |r| r.encode_for(buffer_type, dialect),
        |b| Request::decode_for(b, buffer_type, dialect),
        "request",
    );
}

/// A reply payload to the command of byte 1, read as the flags byte says.
pub fn reply(data: &[u8]) {
    let [f, command, payload @ ..] = data else {
        return;
    };
    let (buffer_type, dialect) = flags(*f);
    let command = Command(*command);
    let Ok(reply) = Reply::decode_for(command, payload, buffer_type, dialect) else {
        return;
    };
    settles(
        &reply,
        |r| r.encode_for(buffer_type, dialect),
        |b| Reply::decode_for(command, b, buffer_type, dialect),
        "reply",
    );
}

/// What a server pushes: an event notification (tag 0) and forwarded output (tag 2).
pub fn pushed(data: &[u8]) {
    let [f, payload @ ..] = data else {
        return;
    };
    let (buffer_type, _) = flags(*f);
    if let Ok(event) = Notification::decode(payload, buffer_type) {
        settles(
            &event,
            |e| e.encode(buffer_type),
            |b| Notification::decode(b, buffer_type),
            "event",
        );
    }
    if let Ok(output) = IofDelivery::decode(payload, buffer_type) {
        settles(
            &output,
            |o| o.encode(buffer_type),
            |b| IofDelivery::decode(b, buffer_type),
            "output",
        );
    }
}

/// The texts a peer or a host hands over: node and process maps, cpusets and processing-unit
/// lists, a server URI, a version.
pub fn texts(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = crate::model::regex::parse_regex(text);
    let _ = crate::model::regex::parse_ppn(text);
    if let Ok(list) = crate::model::topology::PuList::parse(text) {
        let again = crate::model::topology::PuList::parse(&list.to_string())
            .expect("a list prints as a list");
        assert_eq!(again, list);
    }
    let _ = crate::model::topology::parse_cpuset_string(text);
    let _ = crate::wire::uri::parse_uri(text);
    let _ = PeerVersion::parse(text);
}

/// A credential presented to a server: never valid unless this server's key sealed it.
pub fn credential(data: &[u8]) {
    let key = [7u8; 32];
    assert!(
        crate::server::credential::validate(&key, data).is_err(),
        "bytes nobody sealed pass for a credential"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::frame::Frame;

    #[test]
    fn each_entry_survives_odd_inputs() {
        let frame = Frame {
            pindex: 1,
            tag: crate::wire::Tag(101),
            payload: vec![2, 5],
        }
        .encode()
        .unwrap();
        let mut stream = vec![3];
        stream.extend_from_slice(&frame);
        stream.extend_from_slice(&frame[..7]);
        for input in [&[][..], &[0], &[1, 2], &[0xff; 40], &stream] {
            frames(input);
            handshake(input);
            request(input);
            reply(input);
            pushed(input);
            texts(input);
            credential(input);
        }
        texts(b"node[2:1-3],other");
        texts(b"0-3,8");
        texts(b"hwloc:0-3");
    }
}
