//! Message framing: the 16-byte header in front of every message after the handshake.
//!
//! OpenPMIx 4.2 frames each message as `{int32 pindex; uint32 tag; uint32 nbytes; uint32
//! padding}` in network byte order, followed by `nbytes` of payload (WIRE.md §5.3). Requests
//! carry tags from [`Tag::FIRST_DYNAMIC`] upward and replies echo them; tags 0–2 are the
//! server's unsolicited pushes.
//!
//! [`FrameDecoder`] turns a byte stream into frames without doing I/O: feed it what the socket
//! gave, then drain [`FrameDecoder::next_frame`]. A header announcing more than the decoder's
//! limit is a protocol error that closes the connection (DESIGN §6); nothing is allocated for
//! it.

use crate::Error;
use crate::model::Status;

/// The size of a frame header on the wire.
pub const HEADER_LEN: usize = 16;

/// The default upper bound on one frame's payload. OpenPMIx has none; 256 MiB is far above any
/// job-info reply and keeps a forged header from reserving unbounded memory.
pub const DEFAULT_MAX_FRAME: usize = 256 << 20;

/// A message tag: which request a reply answers, or which unsolicited channel a push uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tag(pub u32);

impl Tag {
    /// Server-pushed event notifications (`PMIX_PTL_TAG_NOTIFY`).
    pub const NOTIFY: Tag = Tag(0);
    /// Heartbeats (`PMIX_PTL_TAG_HEARTBEAT`).
    pub const HEARTBEAT: Tag = Tag(1);
    /// Forwarded standard input/output (`PMIX_PTL_TAG_IOF`).
    pub const IOF: Tag = Tag(2);
    /// The first tag a client uses for its requests (`PMIX_PTL_TAG_DYNAMIC` + 1).
    pub const FIRST_DYNAMIC: Tag = Tag(101);

    /// Whether this tag names a request/reply pair rather than a push channel.
    pub fn is_dynamic(self) -> bool {
        self.0 > 100
    }
}

/// A frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The sender's peer index (the one the server assigned at handshake, or the server's own).
    pub pindex: i32,
    pub tag: Tag,
    /// The payload length in bytes.
    pub nbytes: u32,
}

impl Header {
    /// The header's 16 bytes in network order.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0..4].copy_from_slice(&self.pindex.to_be_bytes());
        out[4..8].copy_from_slice(&self.tag.0.to_be_bytes());
        out[8..12].copy_from_slice(&self.nbytes.to_be_bytes());
        out
    }

    /// Read a header from its 16 bytes (the padding is ignored).
    pub fn decode(bytes: &[u8; HEADER_LEN]) -> Header {
        let word = |i: usize| [bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]];
        Header {
            pindex: i32::from_be_bytes(word(0)),
            tag: Tag(u32::from_be_bytes(word(4))),
            nbytes: u32::from_be_bytes(word(8)),
        }
    }
}

/// One framed message: its header fields and payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub pindex: i32,
    pub tag: Tag,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The frame as bytes to write: header then payload.
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        let nbytes = u32::try_from(self.payload.len())
            .map_err(|_| Error::BadParam("a frame payload must be under 4 GiB".into()))?;
        let header = Header {
            pindex: self.pindex,
            tag: self.tag,
            nbytes,
        };
        let mut out = Vec::with_capacity(HEADER_LEN + self.payload.len());
        out.extend_from_slice(&header.encode());
        out.extend_from_slice(&self.payload);
        Ok(out)
    }
}

/// Splits a byte stream into frames (sans-IO).
#[derive(Debug)]
pub struct FrameDecoder {
    buffer: Vec<u8>,
    max_frame: usize,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        FrameDecoder::new(DEFAULT_MAX_FRAME)
    }
}

impl FrameDecoder {
    /// A decoder refusing payloads larger than `max_frame` bytes.
    pub fn new(max_frame: usize) -> Self {
        FrameDecoder {
            buffer: Vec::new(),
            max_frame,
        }
    }

    /// Append bytes read from the stream.
    ///
    /// The buffer grows by doubling, as a vector does, but never past the frame it holds:
    /// a frame's length comes from the peer, so nothing is reserved ahead of the bytes that
    /// arrive, and a frame of 128 MiB holds 128 MiB, not the 256 MiB of the next power of two.
    pub fn handle_bytes(&mut self, bytes: &[u8]) {
        let len = self.buffer.len();
        if let Some(total) = self.expected().map(|n| n + HEADER_LEN)
            && len + bytes.len() <= total
            && self.buffer.capacity() - len < bytes.len()
        {
            self.buffer
                .reserve_exact(len.max(bytes.len()).min(total - len));
        }
        self.buffer.extend_from_slice(bytes);
    }

    /// The payload length of the frame now arriving, once its header is in.
    pub fn expected(&self) -> Option<usize> {
        let head = self.buffer.first_chunk::<HEADER_LEN>()?;
        Some(Header::decode(head).nbytes as usize)
    }

    /// The next complete frame, `Ok(None)` when more bytes are needed, or an error when the
    /// stream announced an oversized frame (the connection must then be closed).
    pub fn next_frame(&mut self) -> Result<Option<Frame>, Error> {
        let Some(head) = self.buffer.first_chunk::<HEADER_LEN>() else {
            return Ok(None);
        };
        let header = Header::decode(head);
        let len = header.nbytes as usize;
        if len > self.max_frame {
            return Err(Error::decode(
                Status::ERR_BAD_PARAM,
                format!(
                    "frame of {len} bytes exceeds the limit of {} bytes",
                    self.max_frame
                ),
            ));
        }
        if self.buffer.len() < HEADER_LEN + len {
            return Ok(None);
        }
        let payload = self.buffer[HEADER_LEN..HEADER_LEN + len].to_vec();
        self.buffer.drain(..HEADER_LEN + len);
        Ok(Some(Frame {
            pindex: header.pindex,
            tag: header.tag,
            payload,
        }))
    }

    /// Bytes received that do not yet form a whole frame.
    pub fn pending(&self) -> usize {
        self.buffer.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_big_endian_as_captured() {
        // A REQ from the capture: pindex 0, tag 0x65 (101), 2 bytes.
        let h = Header {
            pindex: 0,
            tag: Tag(101),
            nbytes: 2,
        };
        assert_eq!(
            h.encode(),
            [0, 0, 0, 0, 0, 0, 0, 0x65, 0, 0, 0, 2, 0, 0, 0, 0]
        );
        assert_eq!(Header::decode(&h.encode()), h);
    }

    #[test]
    fn a_partial_frame_holds_no_more_than_its_length() {
        let frame = Frame {
            pindex: 1,
            tag: Tag(101),
            payload: vec![7; 3 << 20],
        };
        let bytes = frame.encode().unwrap();
        let mut decoder = FrameDecoder::default();
        decoder.handle_bytes(&bytes[..HEADER_LEN]);
        assert_eq!(decoder.expected(), Some(3 << 20));
        // Nothing is reserved on the header's word.
        assert!(decoder.buffer.capacity() < 1 << 10);
        for piece in bytes[HEADER_LEN..bytes.len() - 1].chunks(64 << 10) {
            decoder.handle_bytes(piece);
            assert!(decoder.buffer.capacity() <= bytes.len());
        }
        assert_eq!(decoder.next_frame().unwrap(), None);
        decoder.handle_bytes(&bytes[bytes.len() - 1..]);
        assert_eq!(decoder.next_frame().unwrap(), Some(frame));
    }

    #[test]
    fn decoder_waits_for_whole_frames_and_splits_coalesced_ones() {
        let a = Frame {
            pindex: 1,
            tag: Tag(101),
            payload: vec![2, 0],
        };
        let b = Frame {
            pindex: 1,
            tag: Tag(102),
            payload: vec![2, 5],
        };
        let mut bytes = a.encode().unwrap();
        bytes.extend(b.encode().unwrap());
        let mut d = FrameDecoder::default();
        d.handle_bytes(&bytes[..10]);
        assert_eq!(d.next_frame().unwrap(), None);
        d.handle_bytes(&bytes[10..]);
        assert_eq!(d.next_frame().unwrap(), Some(a));
        assert_eq!(d.next_frame().unwrap(), Some(b));
        assert_eq!(d.next_frame().unwrap(), None);
        assert_eq!(d.pending(), 0);
    }

    #[test]
    fn oversized_frame_is_refused_before_allocation() {
        let mut d = FrameDecoder::new(1024);
        let h = Header {
            pindex: 0,
            tag: Tag(101),
            nbytes: u32::MAX,
        };
        d.handle_bytes(&h.encode());
        assert_eq!(d.next_frame().unwrap_err().status(), Status::ERR_BAD_PARAM);
    }
}
