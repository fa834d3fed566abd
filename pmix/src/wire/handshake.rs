//! The connect handshake: the first message a peer sends, and the server's answer.
//!
//! Unlike every later message, the connect message's 16-byte header is in the *sender's host
//! byte order* (pindex −1, tag `0xFFFFFFFF`, payload length), and its payload is a fixed
//! sequence of raw fields rather than packed values (WIRE.md §5.2):
//!
//! ```text
//!   psec module\0 | u32be credential length | credential | u8 peer type | identity
//!   | version\0 | bfrops module\0 | u8 buffer type | gds modules\0 | [optional info]
//! ```
//!
//! The identity is `nspace\0 u32be rank` for a simple client, `u32be uid u32be gid` for tools
//! and launchers, followed by `nspace\0 u32be rank` for those that bring their own identifier.
//! OpenPMIx 4.2 clients end the message with one stray `0x00` byte (a size over-count, gone in
//! 5.0: 6.1 `ptl_base_fns.c:458-470`); it is tolerated, not reproduced. OpenPMIx 5.0 and 6.1
//! servers read any byte after the storage modules as a packed info count: a tool's
//! connection is refused when the info then missing cannot be read, and a client's is served
//! after a `PMIX ERROR` on the server's stderr (4.2's server ignores what follows for a
//! client). So this library's peers end the message at the storage module's NUL.
//!
//! Beside 4.2's peer types, 5.0 and 6.1 send flag 10, a scheduler with its own identifier
//! (`ptl_base_handshake.h:58`), and name their encoding `v51` or `v61` where 4.2 said `v41`.
//! Those encode every type 4.2 knows as `v41` does (they share OpenPMIx's base pack
//! functions), so a server that speaks `v41` serves them ([`speaks_v41`]).
//!
//! The server answers a simple client with two raw big-endian `u32`s: the status, then the
//! peer index the client puts in its later headers. Tools get the status, an assigned
//! identifier when they asked for one, the server's identifier (fixed 256-byte namespace
//! fields) and a security status.

use crate::Error;
use crate::codec::{BufferType, DataBuffer, Size};
use crate::model::{Info, Nspace, Proc, Rank, Status};

/// The largest connect payload a server accepts (`PMIX_MAX_CRED_SIZE` in OpenPMIx).
pub const MAX_CONNECT_PAYLOAD: usize = 128 * 1024;

/// The size of a namespace field in the tool handshake reply (`PMIX_MAX_NSLEN + 1`).
pub const NSPACE_FIELD_LEN: usize = 256;

/// The version string OpenPMIx 4.2.2 sends; peers parse its major/minor/release.
pub const OPENPMIX_VERSION: &str = "4.2.2rc2";

/// What kind of peer is connecting (the handshake's flag byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PeerType(pub u8);

impl PeerType {
    pub const SIMPLE_CLIENT: PeerType = PeerType(0);
    pub const LEGACY_TOOL: PeerType = PeerType(1);
    pub const LEGACY_LAUNCHER: PeerType = PeerType(2);
    pub const TOOL_NEEDS_ID: PeerType = PeerType(3);
    pub const TOOL_GIVEN_ID: PeerType = PeerType(4);
    pub const TOOL_CLIENT: PeerType = PeerType(5);
    pub const LAUNCHER_NEEDS_ID: PeerType = PeerType(6);
    pub const LAUNCHER_GIVEN_ID: PeerType = PeerType(7);
    pub const LAUNCHER_CLIENT: PeerType = PeerType(8);
    pub const SINGLETON_CLIENT: PeerType = PeerType(9);
    /// OpenPMIx 5.0 and later: a scheduler that brings its own identifier.
    pub const SCHEDULER_WITH_ID: PeerType = PeerType(10);
    /// The largest flag any OpenPMIx release sends.
    pub const LAST: PeerType = PeerType::SCHEDULER_WITH_ID;

    /// Whether the identity field starts with the peer's uid and gid.
    pub fn sends_uid_gid(self) -> bool {
        self != PeerType::SIMPLE_CLIENT
    }

    /// Whether the identity field carries a process identifier.
    pub fn sends_proc(self) -> bool {
        matches!(self.0, 0 | 4 | 5 | 7 | 8 | 9 | 10)
    }

    /// Whether the server must assign the peer an identifier.
    pub fn needs_id(self) -> bool {
        matches!(self.0, 3 | 6)
    }

    /// Whether the server admits the peer as a tool and answers with the tool form of the
    /// reply: every peer but a simple client (OpenPMIx 4.2 handles legacy tools and
    /// singletons on the tool path too). A singleton of 5.0 or later reads the client form
    /// instead ([`super::Dialect::singleton_reads_client_reply`]).
    pub fn gets_tool_reply(self) -> bool {
        self != PeerType::SIMPLE_CLIENT
    }

    /// A tool (`PMIX_PROC_TOOL`) rather than a launcher: legacy tools and flags 3 to 5.
    pub fn is_tool(self) -> bool {
        matches!(self.0, 1 | 3 | 4 | 5)
    }

    /// A launcher (`PMIX_PROC_LAUNCHER`): legacy launchers and flags 6 to 8.
    pub fn is_launcher(self) -> bool {
        matches!(self.0, 2 | 6 | 7 | 8)
    }

    /// A scheduler (`PMIX_PROC_SCHEDULER`, flag 10).
    pub fn is_scheduler(self) -> bool {
        self == PeerType::SCHEDULER_WITH_ID
    }
}

/// Whether an encoding module's name (a comma-separated list of names, as OpenPMIx's
/// servers accept) includes one that encodes every type 4.2 knows as `v41` does: `v41`,
/// 4.0's `v4` (a subset of its types), and 5.0's and 6.1's `v51` and `v61` (supersets,
/// sharing OpenPMIx's base pack functions: 6.1 `mca/bfrops/v61/bfrop_pmix61.c`). The older
/// `v3`, `v21`, `v20` and `v12` encode differently.
pub fn speaks_v41(bfrops: &str) -> bool {
    (bfrops.split(','))
        .map(str::trim)
        .any(|name| matches!(name, "v41" | "v4" | "v51" | "v61"))
}

/// The connect message.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectRequest {
    /// The security module (`native`, `none`, `munge`).
    pub psec: String,
    /// The credential bytes; for `native` the peer's uid and gid in host order.
    pub credential: Vec<u8>,
    pub peer_type: PeerType,
    /// The uid and gid a tool or launcher declared in its identity field.
    pub uid_gid: Option<(u32, u32)>,
    /// The process the peer says it is (absent for tools that need an identifier).
    pub proc: Option<Proc>,
    /// The peer's library version, e.g. `4.2.2rc2`.
    pub version: String,
    /// The peer's encoding module, e.g. `v41`.
    pub bfrops: String,
    pub buffer_type: BufferType,
    /// The storage modules the peer can use, e.g. `hash` or `ds21,hash`.
    pub gds: String,
    /// Optional info sent after the fixed fields (tools); clients send none.
    pub info: Vec<Info>,
}

impl ConnectRequest {
    /// The connect message of a simple client as an OpenPMIx 4.2 client sends it.
    pub fn simple_client(proc: Proc, uid: u32, gid: u32, buffer_type: BufferType) -> Self {
        ConnectRequest {
            psec: "native".into(),
            credential: native_credential(uid, gid),
            peer_type: PeerType::SIMPLE_CLIENT,
            uid_gid: None,
            proc: Some(proc),
            version: OPENPMIX_VERSION.into(),
            bfrops: "v41".into(),
            buffer_type,
            gds: "hash".into(),
            info: Vec::new(),
        }
    }

    /// The connect message of a tool: with its own identifier (`TOOL_GIVEN_ID`) or asking
    /// the server for one (`TOOL_NEEDS_ID`); the uid and gid are stated in the identity too.
    pub fn tool(proc: Option<Proc>, uid: u32, gid: u32, buffer_type: BufferType) -> Self {
        ConnectRequest {
            psec: "native".into(),
            credential: native_credential(uid, gid),
            peer_type: if proc.is_some() {
                PeerType::TOOL_GIVEN_ID
            } else {
                PeerType::TOOL_NEEDS_ID
            },
            uid_gid: Some((uid, gid)),
            proc,
            version: OPENPMIX_VERSION.into(),
            bfrops: "v41".into(),
            buffer_type,
            gds: "hash".into(),
            info: Vec::new(),
        }
    }

    /// The whole message: host-order header and payload.
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        let mut p = Vec::new();
        put_cstr(&mut p, &self.psec)?;
        let cred_len = u32::try_from(self.credential.len())
            .map_err(|_| Error::BadParam("credential too long".into()))?;
        p.extend_from_slice(&cred_len.to_be_bytes());
        p.extend_from_slice(&self.credential);
        p.push(self.peer_type.0);
        if self.peer_type.sends_uid_gid() {
            let (uid, gid) = self.uid_gid.ok_or_else(|| {
                Error::BadParam("tools and launchers must declare a uid and gid".into())
            })?;
            p.extend_from_slice(&uid.to_be_bytes());
            p.extend_from_slice(&gid.to_be_bytes());
        }
        if self.peer_type.sends_proc() {
            let proc = self
                .proc
                .as_ref()
                .ok_or_else(|| Error::BadParam("this peer type must name its process".into()))?;
            put_cstr(&mut p, proc.nspace.as_str())?;
            p.extend_from_slice(&proc.rank.0.to_be_bytes());
        }
        put_cstr(&mut p, &self.version)?;
        put_cstr(&mut p, &self.bfrops)?;
        p.push(self.buffer_type.wire_value());
        put_cstr(&mut p, &self.gds)?;
        // Without info the message ends here: no stray byte (see the module's doc).
        if !self.info.is_empty() {
            let mut buf = DataBuffer::with_type(self.buffer_type);
            buf.pack(&[Size(self.info.len() as u64)])?;
            buf.pack(&self.info)?;
            p.extend_from_slice(buf.bytes());
        }
        if p.len() > MAX_CONNECT_PAYLOAD {
            return Err(Error::BadParam("connect message too large".into()));
        }
        let mut out = Vec::with_capacity(16 + p.len());
        out.extend_from_slice(&(-1i32).to_ne_bytes());
        out.extend_from_slice(&u32::MAX.to_ne_bytes());
        out.extend_from_slice(&(p.len() as u32).to_ne_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&p);
        Ok(out)
    }

    /// The payload length announced by a connect header, checked against the limit.
    pub fn payload_len(header: &[u8; 16]) -> Result<usize, Error> {
        let nbytes = u32::from_ne_bytes([header[8], header[9], header[10], header[11]]) as usize;
        if nbytes > MAX_CONNECT_PAYLOAD {
            return Err(Error::decode(
                Status::ERR_BAD_PARAM,
                format!("connect message of {nbytes} bytes exceeds {MAX_CONNECT_PAYLOAD}"),
            ));
        }
        Ok(nbytes)
    }

    /// Parse a connect payload (what follows the header).
    pub fn decode(payload: &[u8]) -> Result<Self, Error> {
        let mut r = RawReader { bytes: payload };
        let psec = r.cstr("security module")?;
        let cred_len = r.u32be("credential length")? as usize;
        let credential = r.take(cred_len, "credential")?.to_vec();
        let peer_type = PeerType(r.u8("peer type")?);
        if peer_type > PeerType::LAST {
            return Err(Error::decode(
                Status::ERR_BAD_PARAM,
                format!("unknown peer type {}", peer_type.0),
            ));
        }
        let uid_gid = if peer_type.sends_uid_gid() {
            Some((r.u32be("uid")?, r.u32be("gid")?))
        } else {
            None
        };
        let proc = if peer_type.sends_proc() {
            let nspace = Nspace::new(r.cstr("namespace")?)
                .map_err(|e| Error::decode(Status::ERR_BAD_PARAM, e.to_string()))?;
            Some(Proc::new(nspace, Rank(r.u32be("rank")?)))
        } else {
            None
        };
        let version = r.cstr("version")?;
        let bfrops = r.cstr("bfrops module")?;
        let buffer_type = BufferType::from_wire(r.u8("buffer type")?)
            .ok_or_else(|| Error::decode(Status::ERR_BAD_PARAM, "unknown buffer type"))?;
        let gds = r.cstr("gds module")?;
        // Optional info: tolerate the stray byte clients send, and anything undecodable.
        let info = decode_optional_info(r.bytes, buffer_type);
        Ok(ConnectRequest {
            psec,
            credential,
            peer_type,
            uid_gid,
            proc,
            version,
            bfrops,
            buffer_type,
            gds,
            info,
        })
    }

    /// The uid and gid asserted by a `native` credential, if it is one.
    pub fn native_uid_gid(&self) -> Option<(u32, u32)> {
        if self.psec != "native" || self.credential.len() != 8 {
            return None;
        }
        let c = &self.credential;
        Some((
            u32::from_ne_bytes([c[0], c[1], c[2], c[3]]),
            u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
        ))
    }
}

/// A `native` credential: uid then gid, in host order.
pub fn native_credential(uid: u32, gid: u32) -> Vec<u8> {
    let mut c = uid.to_ne_bytes().to_vec();
    c.extend_from_slice(&gid.to_ne_bytes());
    c
}

fn decode_optional_info(rest: &[u8], buffer_type: BufferType) -> Vec<Info> {
    if rest.len() <= 1 {
        return Vec::new();
    }
    let mut buf = DataBuffer::load(rest.to_vec(), buffer_type);
    let Ok(n) = buf.unpack::<Size>(1) else {
        return Vec::new();
    };
    let n = n.first().map_or(0, |s| s.0) as usize;
    if n == 0 {
        return Vec::new();
    }
    buf.unpack::<Info>(n).unwrap_or_default()
}

/// The server's answer to a simple client: status, then the peer index.
pub fn encode_client_reply(status: Status, pindex: u32) -> [u8; 8] {
    let mut out = [0u8; 8];
    out[0..4].copy_from_slice(&(status.0 as u32).to_be_bytes());
    out[4..8].copy_from_slice(&pindex.to_be_bytes());
    out
}

/// Parse the status word of a handshake reply.
pub fn decode_status(word: [u8; 4]) -> Status {
    Status(u32::from_be_bytes(word) as i32)
}

/// The server's answer to a tool or launcher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolReply {
    pub status: Status,
    /// The identifier assigned to a peer that asked for one.
    pub assigned: Option<Proc>,
    /// The server's own identifier.
    pub server: Proc,
    /// The outcome of credential validation.
    pub security_status: Status,
}

impl ToolReply {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.status.0 as u32).to_be_bytes());
        if let Some(p) = &self.assigned {
            put_fixed_proc(&mut out, p);
        }
        put_fixed_proc(&mut out, &self.server);
        out.extend_from_slice(&(self.security_status.0 as u32).to_be_bytes());
        out
    }

    /// The reply's length when it carries an assigned identifier (`with_id`) or not.
    pub fn encoded_len(with_id: bool) -> usize {
        let proc = NSPACE_FIELD_LEN + 4;
        4 + if with_id { 2 * proc } else { proc } + 4
    }

    /// Parse a successful reply; `with_id` says whether the peer asked for an identifier.
    pub fn decode(bytes: &[u8], with_id: bool) -> Result<ToolReply, Error> {
        let mut r = RawReader { bytes };
        let status = Status(r.u32be("tool reply status")? as i32);
        let assigned = if with_id {
            Some(r.fixed_proc("assigned identifier")?)
        } else {
            None
        };
        let server = r.fixed_proc("server identifier")?;
        let security_status = Status(r.u32be("security status")? as i32);
        Ok(ToolReply {
            status,
            assigned,
            server,
            security_status,
        })
    }
}

fn put_fixed_proc(out: &mut Vec<u8>, p: &Proc) {
    let mut field = [0u8; NSPACE_FIELD_LEN];
    let ns = p.nspace.as_str().as_bytes();
    // Namespaces are at most 255 bytes (Nspace enforces it), so the NUL always fits.
    let n = ns.len().min(NSPACE_FIELD_LEN - 1);
    field[..n].copy_from_slice(&ns[..n]);
    out.extend_from_slice(&field);
    out.extend_from_slice(&p.rank.0.to_be_bytes());
}

fn put_cstr(out: &mut Vec<u8>, s: &str) -> Result<(), Error> {
    if s.as_bytes().contains(&0) {
        return Err(Error::BadParam(format!("{s:?} holds a NUL byte")));
    }
    out.extend_from_slice(s.as_bytes());
    out.push(0);
    Ok(())
}

/// A reader of the handshake's raw (unpacked) fields.
struct RawReader<'a> {
    bytes: &'a [u8],
}

impl<'a> RawReader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        if self.bytes.len() < n {
            return Err(Error::read_past_end(what));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    fn u8(&mut self, what: &str) -> Result<u8, Error> {
        Ok(self.take(1, what)?[0])
    }

    fn fixed_proc(&mut self, what: &str) -> Result<Proc, Error> {
        let field = self.take(NSPACE_FIELD_LEN, what)?;
        let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
        let nspace = std::str::from_utf8(&field[..end])
            .map_err(|_| Error::BadParam(format!("{what}: namespace is not UTF-8")))?;
        let rank = self.u32be(what)?;
        Proc::try_new(nspace, rank)
    }

    fn u32be(&mut self, what: &str) -> Result<u32, Error> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn cstr(&mut self, what: &str) -> Result<String, Error> {
        let end = self
            .bytes
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| Error::read_past_end(what))?;
        let s = std::str::from_utf8(&self.bytes[..end])
            .map_err(|_| Error::decode(Status::ERR_BAD_PARAM, format!("{what} is not UTF-8")))?
            .to_owned();
        self.bytes = &self.bytes[end + 1..];
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 66-byte connect message of rank 0 in `captures/basic_n2_socket.txt`.
    const CAPTURED_DS21: &str = "ffffffffffffffff32000000000000006e617469766500000000080000000000000000007273\
                                 6a6f620000000000342e322e32726332007634310001647332310000";

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn captured_client_connect_decodes_and_reencodes_byte_exact() {
        let bytes = hex(CAPTURED_DS21);
        let header: [u8; 16] = bytes[..16].try_into().unwrap();
        assert_eq!(ConnectRequest::payload_len(&header).unwrap(), 50);
        let req = ConnectRequest::decode(&bytes[16..]).unwrap();
        assert_eq!(req.psec, "native");
        assert_eq!(req.native_uid_gid(), Some((0, 0)));
        assert_eq!(req.peer_type, PeerType::SIMPLE_CLIENT);
        assert_eq!(req.proc, Some(Proc::try_new("rsjob", 0).unwrap()));
        assert_eq!(req.version, "4.2.2rc2");
        assert_eq!(req.bfrops, "v41");
        assert_eq!(req.buffer_type, BufferType::NonDescribed);
        assert_eq!(req.gds, "ds21");
        // This library sends the same message without 4.2's stray last byte, and a header
        // that counts one byte less.
        let mut without = bytes.clone();
        without.pop();
        without[8..12].copy_from_slice(&49u32.to_ne_bytes());
        assert_eq!(req.encode().unwrap(), without);
    }

    #[test]
    fn client_reply_is_two_big_endian_words() {
        assert_eq!(
            encode_client_reply(Status::SUCCESS, 1),
            [0, 0, 0, 0, 0, 0, 0, 1]
        );
        assert_eq!(decode_status([0xff, 0xff, 0xff, 0xd2]), Status(-46));
    }

    #[test]
    fn tool_connect_round_trips() {
        let req = ConnectRequest {
            psec: "none".into(),
            credential: vec![],
            peer_type: PeerType::TOOL_GIVEN_ID,
            uid_gid: Some((1000, 100)),
            proc: Some(Proc::try_new("tool", 0).unwrap()),
            version: OPENPMIX_VERSION.into(),
            bfrops: "v41".into(),
            buffer_type: BufferType::FullyDescribed,
            gds: "hash".into(),
            info: vec![Info::with_key("pmix.tool.nocon", true).unwrap()],
        };
        let bytes = req.encode().unwrap();
        assert_eq!(ConnectRequest::decode(&bytes[16..]).unwrap(), req);
    }

    #[test]
    fn tool_reply_is_status_ids_in_fixed_fields_and_security_status() {
        let reply = ToolReply {
            status: Status::SUCCESS,
            assigned: Some(Proc::try_new("job.tool.1", 0).unwrap()),
            server: Proc::try_new("srv", 3).unwrap(),
            security_status: Status::SUCCESS,
        };
        let bytes = reply.encode();
        assert_eq!(bytes.len(), ToolReply::encoded_len(true));
        assert_eq!(bytes.len(), 4 + 2 * (256 + 4) + 4);
        // The assigned namespace, NUL-padded to 256 bytes, then the rank in network order.
        assert_eq!(&bytes[4..14], b"job.tool.1");
        assert!(bytes[14..260].iter().all(|&b| b == 0));
        assert_eq!(&bytes[260..264], &[0, 0, 0, 0]);
        assert_eq!(&bytes[520..524], &[0, 0, 0, 3]);
        assert_eq!(ToolReply::decode(&bytes, true).unwrap(), reply);
        let without = ToolReply {
            assigned: None,
            ..reply
        };
        let bytes = without.encode();
        assert_eq!(bytes.len(), ToolReply::encoded_len(false));
        assert_eq!(ToolReply::decode(&bytes, false).unwrap(), without);
        for cut in 0..bytes.len() {
            assert!(ToolReply::decode(&bytes[..cut], false).is_err());
        }
    }

    /// The payload ends at the storage module's NUL: OpenPMIx 5.0 and 6.1 servers refuse a
    /// tool whose message goes on with a byte that is no packed info, and log an error for a
    /// client's.
    #[test]
    fn peers_without_info_send_no_stray_byte() {
        let me = Proc::try_new("tool", 0).unwrap();
        for proc in [None, Some(me)] {
            let req = ConnectRequest::tool(proc, 1000, 100, BufferType::NonDescribed);
            let bytes = req.encode().unwrap();
            assert!(bytes.ends_with(b"v41\0\x01hash\0"), "{bytes:?}");
            let header: [u8; 16] = bytes[..16].try_into().unwrap();
            assert_eq!(
                ConnectRequest::payload_len(&header).unwrap(),
                bytes.len() - 16
            );
            assert_eq!(ConnectRequest::decode(&bytes[16..]).unwrap(), req);
        }
        let client = ConnectRequest::simple_client(
            Proc::try_new("job", 0).unwrap(),
            0,
            0,
            BufferType::NonDescribed,
        );
        let bytes = client.encode().unwrap();
        assert!(bytes.ends_with(b"v41\0\x01hash\0"), "{bytes:?}");
    }

    /// A 6.1 scheduler's connect message: flag 10 with uid, gid and its identifier, and the
    /// `v61` encoding, which this server speaks as `v41`.
    #[test]
    fn a_scheduler_and_the_encodings_of_5_0_and_6_1_are_understood() {
        let sched = Proc::try_new("sched", 0).unwrap();
        let req = ConnectRequest {
            peer_type: PeerType::SCHEDULER_WITH_ID,
            version: "6.1.0".into(),
            bfrops: "v61".into(),
            ..ConnectRequest::tool(Some(sched.clone()), 5, 6, BufferType::NonDescribed)
        };
        let bytes = req.encode().unwrap();
        let mut identity = vec![10];
        identity.extend_from_slice(&5u32.to_be_bytes());
        identity.extend_from_slice(&6u32.to_be_bytes());
        identity.extend_from_slice(b"sched\0\0\0\0\0");
        assert!(bytes.windows(identity.len()).any(|w| w == identity));
        let back = ConnectRequest::decode(&bytes[16..]).unwrap();
        assert_eq!((back.uid_gid, back.proc), (Some((5, 6)), Some(sched)));
        assert!(back.peer_type.gets_tool_reply() && back.peer_type.is_scheduler());
        let mut eleven = bytes[16..].to_vec();
        let at = eleven.iter().position(|&b| b == 10).unwrap();
        eleven[at] = 11;
        assert!(ConnectRequest::decode(&eleven).is_err());
        for name in ["v41", "v4", "v51", "v61", "v20,v41"] {
            assert!(speaks_v41(name), "{name}");
        }
        for name in ["v3", "v21", "v20", "v12", "", "v62"] {
            assert!(!speaks_v41(name), "{name}");
        }
    }

    #[test]
    fn every_peer_but_a_simple_client_gets_the_tool_reply() {
        assert!(!PeerType::SIMPLE_CLIENT.gets_tool_reply());
        for t in 1..=10 {
            assert!(PeerType(t).gets_tool_reply(), "flag {t}");
        }
        assert!(PeerType::TOOL_NEEDS_ID.needs_id() && PeerType::LAUNCHER_NEEDS_ID.needs_id());
        assert!(PeerType::TOOL_CLIENT.is_tool() && PeerType::LAUNCHER_CLIENT.is_launcher());
    }

    #[test]
    fn truncated_and_garbage_connects_are_errors_not_panics() {
        let bytes = hex(CAPTURED_DS21);
        for cut in 16..bytes.len() - 1 {
            let _ = ConnectRequest::decode(&bytes[16..cut]);
        }
        assert!(ConnectRequest::decode(b"native\0\xff\xff\xff\xff").is_err());
        let mut big = [0u8; 16];
        big[8..12].copy_from_slice(&(1u32 << 20).to_ne_bytes());
        assert!(ConnectRequest::payload_len(&big).is_err());
    }
}
