//! What daemons send each other, and how it is framed: a kind, the sender, its incarnation,
//! a key, one word and the data; launch orders and data-server requests packed inside.

use super::*;

/// What one daemon tells another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Body {
    /// A subtree's contribution to collective `key`: its data, or the error that makes the
    /// collective fail.
    Contrib {
        key: u64,
        status: i32,
        data: Vec<u8>,
    },
    /// The outcome of collective `key`.
    Release {
        key: u64,
        status: i32,
        data: Vec<u8>,
    },
    /// To the root: the sender lost its parent after sending its part up; send it the outcome.
    AskRoot {
        key: u64,
    },
    /// To the root: every participant of collective `key` on your node is dead, so your
    /// server will never join it; `data` packs its processes, for you to check and end it.
    RootLost {
        key: u64,
        data: Vec<u8>,
    },
    /// To a child of a root that is down: the outcome, if it reached you.
    AskPeer {
        key: u64,
    },
    /// The answer to `AskPeer` from a node the outcome never reached.
    Unknown {
        key: u64,
    },
    /// Direct modex: the data rank `rank` committed (request `key`).
    Fetch {
        key: u64,
        rank: u32,
    },
    /// To the data server: rank `rank` publishes the packed infos in `data`.
    Publish {
        key: u64,
        rank: u32,
        data: Vec<u8>,
    },
    /// To the data server: rank `rank` looks up the packed keys and directives in `data`.
    Lookup {
        key: u64,
        rank: u32,
        data: Vec<u8>,
    },
    /// To the data server: rank `rank` unpublishes the packed keys and directives in `data`.
    Unpublish {
        key: u64,
        rank: u32,
        data: Vec<u8>,
    },
    /// Start the local processes of a spawned job (request `key`): `data` packs its
    /// namespace, the requester and the node of each of its ranks.
    Launch {
        key: u64,
        data: Vec<u8>,
    },
    /// Stop the local processes of the spawned job named in `data` (its launch failed);
    /// request `key`.
    Halt {
        key: u64,
        data: Vec<u8>,
    },
    /// Let the local processes of the spawned job named in `data` run (every node launched);
    /// request `key`.
    Go {
        key: u64,
        data: Vec<u8>,
    },
    /// To the root of a collective that goes on without lost members
    /// ([`super::tolerant`]): the sender's part.
    Part {
        key: u64,
        data: Vec<u8>,
    },
    /// The outcome of such a collective.
    Outcome {
        key: u64,
        status: i32,
        data: Vec<u8>,
    },
    /// An event raised on the sender's node for processes here (request `key`): its status,
    /// and its source, range and information packed by [`pack_event`].
    Event {
        key: u64,
        status: i32,
        data: Vec<u8>,
    },
    /// The answer to request `key` (a fetch, publish, lookup, unpublish or launch).
    Reply {
        key: u64,
        status: i32,
        data: Vec<u8>,
    },
    Heartbeat,
    /// Incarnation `incarnation` of node `node` is down.
    NodeDown {
        node: u32,
        incarnation: u32,
    },
    ProcDown {
        rank: u32,
    },
}

/// A message, the node that sent it and that node's incarnation (0 until it restarts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Msg {
    pub from: u32,
    pub incarnation: u32,
    pub body: Body,
}

impl Body {
    /// The number of a request that expects a `Reply` (and may be sent again until one comes).
    pub(super) fn request_key(&self) -> Option<u64> {
        match self {
            Body::Fetch { key, .. }
            | Body::Publish { key, .. }
            | Body::Lookup { key, .. }
            | Body::Unpublish { key, .. }
            | Body::Launch { key, .. }
            | Body::Halt { key, .. }
            | Body::Go { key, .. }
            | Body::Event { key, .. } => Some(*key),
            _ => None,
        }
    }
}

impl Msg {
    pub(super) fn encode(&self) -> Vec<u8> {
        let (kind, key, word, data): (u8, u64, u32, &[u8]) = match &self.body {
            Body::Contrib { key, status, data } => (1, *key, status.cast_unsigned(), data),
            Body::Release { key, status, data } => (2, *key, status.cast_unsigned(), data),
            Body::AskRoot { key } => (3, *key, 0, &[]),
            Body::RootLost { key, data } => (17, *key, 0, data),
            Body::AskPeer { key } => (4, *key, 0, &[]),
            Body::Unknown { key } => (5, *key, 0, &[]),
            Body::Fetch { key, rank } => (6, *key, *rank, &[]),
            Body::Reply { key, status, data } => (7, *key, status.cast_unsigned(), data),
            Body::Publish { key, rank, data } => (11, *key, *rank, data),
            Body::Lookup { key, rank, data } => (12, *key, *rank, data),
            Body::Unpublish { key, rank, data } => (13, *key, *rank, data),
            Body::Launch { key, data } => (14, *key, 0, data),
            Body::Halt { key, data } => (15, *key, 0, data),
            Body::Go { key, data } => (16, *key, 0, data),
            Body::Event { key, status, data } => (18, *key, status.cast_unsigned(), data),
            Body::Part { key, data } => (19, *key, 0, data),
            Body::Outcome { key, status, data } => (20, *key, status.cast_unsigned(), data),
            Body::Heartbeat => (8, 0, 0, &[]),
            Body::NodeDown { node, incarnation } => (9, u64::from(*incarnation), *node, &[]),
            Body::ProcDown { rank } => (10, 0, *rank, &[]),
        };
        let mut out = Vec::with_capacity(21 + data.len());
        out.push(kind);
        out.extend_from_slice(&self.from.to_le_bytes());
        out.extend_from_slice(&self.incarnation.to_le_bytes());
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&word.to_le_bytes());
        out.extend_from_slice(data);
        out
    }

    pub(super) fn decode(b: &[u8]) -> Option<Msg> {
        let kind = *b.first()?;
        let from = u32::from_le_bytes(b.get(1..5)?.try_into().ok()?);
        let incarnation = u32::from_le_bytes(b.get(5..9)?.try_into().ok()?);
        let key = u64::from_le_bytes(b.get(9..17)?.try_into().ok()?);
        let word = u32::from_le_bytes(b.get(17..21)?.try_into().ok()?);
        let data = b.get(21..)?.to_vec();
        let status = word.cast_signed();
        let body = match kind {
            1 => Body::Contrib { key, status, data },
            2 => Body::Release { key, status, data },
            3 => Body::AskRoot { key },
            17 => Body::RootLost { key, data },
            4 => Body::AskPeer { key },
            5 => Body::Unknown { key },
            6 => Body::Fetch { key, rank: word },
            7 => Body::Reply { key, status, data },
            11 => Body::Publish {
                key,
                rank: word,
                data,
            },
            12 => Body::Lookup {
                key,
                rank: word,
                data,
            },
            13 => Body::Unpublish {
                key,
                rank: word,
                data,
            },
            14 => Body::Launch { key, data },
            15 => Body::Halt { key, data },
            16 => Body::Go { key, data },
            18 => Body::Event { key, status, data },
            19 => Body::Part { key, data },
            20 => Body::Outcome { key, status, data },
            8 => Body::Heartbeat,
            9 => Body::NodeDown {
                node: word,
                incarnation: u32::try_from(key).ok()?,
            },
            10 => Body::ProcDown { rank: word },
            _ => return None,
        };
        Some(Msg {
            from,
            incarnation,
            body,
        })
    }
}

/// A spawned job's launch order: its namespace, the requester, the node of each rank.
pub(super) fn pack_launch(nspace: &Nspace, parent: &Proc, placement: &[u32]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in [nspace.as_str(), parent.nspace.as_str()] {
        out.extend_from_slice(&u32::try_from(s.len()).unwrap_or(0).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(&parent.rank.0.to_le_bytes());
    for n in placement {
        out.extend_from_slice(&n.to_le_bytes());
    }
    out
}

pub(super) fn unpack_launch(b: Vec<u8>) -> Option<(Nspace, Proc, Vec<u32>)> {
    fn word(b: &[u8], at: &mut usize) -> Option<u32> {
        let w = u32::from_le_bytes(b.get(*at..at.checked_add(4)?)?.try_into().ok()?);
        *at += 4;
        Some(w)
    }
    let mut at = 0usize;
    let mut names = Vec::new();
    for _ in 0..2 {
        let len = word(&b, &mut at)? as usize;
        let s = std::str::from_utf8(b.get(at..at.checked_add(len)?)?).ok()?;
        at += len;
        names.push(Nspace::new(s).ok()?);
    }
    let rank = word(&b, &mut at)?;
    let mut placement = Vec::new();
    while at < b.len() {
        placement.push(word(&b, &mut at)?);
    }
    let parent = Proc::new(names.pop()?, Rank(rank));
    Some((names.pop()?, parent, placement))
}

/// An event's source, range and information, for [`Body::Event`].
pub(super) fn pack_event(
    source: &Proc,
    range: DataRange,
    info: &[Info],
) -> Result<Vec<u8>, Status> {
    let mut b = DataBuffer::new();
    b.pack(std::slice::from_ref(source))
        .map_err(|_| Status::ERR_BAD_PARAM)?;
    b.pack(info).map_err(|_| Status::ERR_BAD_PARAM)?;
    let mut out = vec![range.0];
    out.extend_from_slice(&b.unload());
    Ok(out)
}

pub(super) fn unpack_event(data: &[u8]) -> Option<(Proc, DataRange, Vec<Info>)> {
    let (range, rest) = data.split_first()?;
    let mut b = DataBuffer::load(rest.to_vec(), BufferType::NonDescribed);
    let source = b.unpack::<Proc>(1).ok()?.pop()?;
    let info = b.unpack::<Info>(usize::MAX).ok()?;
    Some((source, DataRange(*range), info))
}

/// Keys and directives of a lookup or unpublish, packed for the data server.
pub(super) fn pack_procs(procs: &[Proc]) -> Vec<u8> {
    let mut b = DataBuffer::new();
    // Packing into memory fails only for values that cannot be encoded, which procs never are.
    let _ = b.pack(procs);
    b.unload()
}

pub(super) fn unpack_procs(data: Vec<u8>) -> Option<Vec<Proc>> {
    DataBuffer::load(data, BufferType::NonDescribed)
        .unpack::<Proc>(usize::MAX)
        .ok()
}

pub(super) fn pack_keys(keys: &[String], info: &[Info]) -> Result<Vec<u8>, Status> {
    let mut b = DataBuffer::new();
    b.pack(keys).map_err(|_| Status::ERR_BAD_PARAM)?;
    b.pack(info).map_err(|_| Status::ERR_BAD_PARAM)?;
    Ok(b.unload())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_survives_its_encoding() {
        let bodies = [
            Body::Contrib {
                key: 7,
                status: -61,
                data: b"abc".to_vec(),
            },
            Body::Release {
                key: u64::MAX,
                status: 0,
                data: Vec::new(),
            },
            Body::AskRoot { key: 1 },
            Body::RootLost {
                key: 5,
                data: vec![1],
            },
            Body::AskPeer { key: 2 },
            Body::Unknown { key: 3 },
            Body::Fetch { key: 4, rank: 9 },
            Body::Reply {
                key: 5,
                status: -46,
                data: vec![0; 3],
            },
            Body::Publish {
                key: 8,
                rank: 1,
                data: vec![1, 2],
            },
            Body::Lookup {
                key: 9,
                rank: 2,
                data: Vec::new(),
            },
            Body::Unpublish {
                key: 10,
                rank: 3,
                data: vec![9],
            },
            Body::Launch {
                key: 11,
                data: vec![1],
            },
            Body::Halt {
                key: 8,
                data: vec![2, 3],
            },
            Body::Go {
                key: 9,
                data: vec![4],
            },
            Body::Heartbeat,
            Body::NodeDown {
                node: 12,
                incarnation: 1,
            },
            Body::ProcDown { rank: 40 },
            Body::Event {
                key: 12,
                status: -157,
                data: vec![5, 6],
            },
            Body::Part {
                key: 13,
                data: vec![7],
            },
            Body::Outcome {
                key: 14,
                status: -61,
                data: vec![8, 9],
            },
        ];
        for body in bodies {
            let m = Msg {
                from: 3,
                incarnation: 2,
                body,
            };
            assert_eq!(Msg::decode(&m.encode()), Some(m));
        }
        assert_eq!(Msg::decode(&[99; 21]), None);
        let ns = Nspace::new("a.spawn.1").unwrap();
        let parent = Proc::new(Nspace::new("a").unwrap(), Rank(4));
        let order = pack_launch(&ns, &parent, &[3, 5, 3]);
        assert_eq!(
            unpack_launch(order.clone()),
            Some((ns, parent.clone(), vec![3, 5, 3]))
        );
        assert_eq!(unpack_launch(order[..order.len() - 2].to_vec()), None);
        assert_eq!(unpack_launch(vec![200, 0, 0, 0, 1]), None);
        assert_eq!(Msg::decode(&[1, 2, 3]), None);
        let info = vec![Info::new(attr::GROUP_ID, "g".to_owned())];
        let event = pack_event(&parent, DataRange::CUSTOM, &info).unwrap();
        assert_eq!(
            unpack_event(&event),
            Some((parent, DataRange::CUSTOM, info))
        );
        assert_eq!(unpack_event(&event[..event.len() - 1]), None);
        assert_eq!(unpack_event(&[]), None);
    }
}
