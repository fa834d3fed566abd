//! The protocol between the `libpmix.so` target's harness and its child processes
//! ([`crate::libpmix_target`], [`crate::libpmix_child`]): one JSON line per message on the
//! children's stdin and stdout. Values, infos and lookup data inside the messages are packed
//! by this project's codec (non-described buffers, a count first: [`pack_list`]).

use std::collections::BTreeMap;

use pmix::codec::{BufferType, Codec, DataBuffer, Size};
use pmix::model::{Proc, Rank, Status};
use serde::{Deserialize, Serialize};

use crate::api::ApiOutput;
use crate::vector::Call;

/// A process identifier on the pipes.
pub type ProcId = (String, u32);

/// Harness to node server.
#[derive(Debug, Serialize, Deserialize)]
pub enum ToNode {
    Setup {
        nspace: String,
        /// The registration's infos, packed.
        info: Vec<u8>,
        ranks: Vec<u32>,
        uid: u32,
        gid: u32,
        /// The infos of `PMIx_server_init`, packed.
        server_info: Vec<u8>,
        /// The upcalls the host provides: fence, direct modex, publish/lookup/unpublish.
        caps: (bool, bool, bool),
        /// Other jobs to register (no local processes): namespace and packed infos.
        #[serde(default)]
        jobs: Vec<(String, Vec<u8>)>,
    },
    /// The host's answer to upcall `id`: the bytes of a [`pmix::server::HostResult`].
    HostReply { id: u64, answer: Vec<u8> },
    /// Ask the node's server for a local process's data (a direct modex from another node).
    Dmodex {
        id: u64,
        proc: ProcId,
        info: Vec<u8>,
    },
    /// Raise an event another node's process notified, for this node's processes; answered
    /// by [`FromNode::Done`].
    Notify {
        id: u64,
        status: i32,
        source: ProcId,
        range: u8,
        info: Vec<u8>,
    },
    /// Register a job the host started (a spawn) with the node's server, no process of it
    /// a client there; answered by [`FromNode::Done`].
    RegisterJob {
        id: u64,
        nspace: String,
        /// The job's infos, packed.
        info: Vec<u8>,
    },
    /// A server step's call, as the vector wrote it, resolved by the node against `nspace`
    /// (see [`crate::server_api`]).
    Call { id: u64, call: Call, nspace: String },
}

/// Node server to harness.
#[derive(Debug, Serialize, Deserialize)]
pub enum FromNode {
    Ready {
        status: i32,
        error: String,
        /// The environment of each rank, from `PMIx_server_setup_fork`.
        env: BTreeMap<u32, BTreeMap<String, String>>,
        version: String,
    },
    /// An upcall of the node's server: the bytes of a [`pmix::server::HostCall`].
    Upcall {
        id: u64,
        call: Vec<u8>,
    },
    DmodexDone {
        id: u64,
        status: i32,
        data: Vec<u8>,
    },
    /// The status of a [`ToNode::Notify`].
    Done {
        id: u64,
        status: i32,
    },
    /// The result of server step `id`.
    CallDone {
        id: u64,
        result: ClientResult,
    },
}

/// Harness to client: one API call.
#[derive(Debug, Serialize, Deserialize)]
pub enum ClientCall {
    Put {
        scope: u8,
        key: String,
        value: Vec<u8>,
    },
    StoreInternal {
        target: ProcId,
        key: String,
        value: Vec<u8>,
    },
    Commit,
    Fence {
        procs: Vec<ProcId>,
        info: Vec<u8>,
    },
    Get {
        target: Option<ProcId>,
        key: String,
        info: Vec<u8>,
        /// Start a `PMIx_Get_nb` under this name instead of a blocking get.
        handle: Option<String>,
        /// With `PMIX_GET_STATIC_VALUES`, pass no storage.
        #[serde(default)]
        no_storage: bool,
    },
    Await {
        handle: String,
    },
    /// Start `call` without waiting for it; an `Await` of `handle` collects its result.
    Start {
        handle: String,
        call: Box<ClientCall>,
    },
    Publish {
        info: Vec<u8>,
    },
    Lookup {
        keys: Vec<String>,
        info: Vec<u8>,
    },
    Unpublish {
        keys: Vec<String>,
        info: Vec<u8>,
    },
    Finalize,
    /// A call of the other chapters, as the vector wrote it, resolved by the client for
    /// `rank` of `nspace` (see [`crate::api`]).
    Api {
        call: Call,
        nspace: String,
        rank: u32,
    },
    /// A call of the vector's tool (see [`crate::tool_api`]); only a tool process makes it.
    Tool {
        call: Call,
        nspace: String,
    },
}

/// Client to harness: the result of init (first line) or of one call.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ClientResult {
    pub status: i32,
    /// A packed value.
    pub value: Option<Vec<u8>>,
    /// Packed lookup data.
    pub data: Option<Vec<u8>>,
    /// Packed result infos.
    #[serde(default)]
    pub results: Option<Vec<u8>>,
    /// Events seen.
    #[serde(default)]
    pub events: Vec<EventMsg>,
    /// The process has no function for the call (see [`ApiOutput::no_such_call`]).
    #[serde(default)]
    pub no_such_call: bool,
}

/// An event a handler saw: status, source, and the packed information it carried and
/// results handed on to the handler.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct EventMsg {
    pub status: i32,
    pub source: Option<ProcId>,
    pub info: Option<Vec<u8>>,
    pub results: Option<Vec<u8>>,
}

impl ClientResult {
    /// The result of an API call of the other chapters.
    pub fn from_api(o: ApiOutput) -> ClientResult {
        ClientResult {
            status: o.status.0,
            value: o.value.map(|v| pack_list(std::slice::from_ref(&v))),
            data: (!o.data.is_empty()).then(|| pack_list(&o.data)),
            results: (!o.results.is_empty()).then(|| pack_list(&o.results)),
            events: o
                .events
                .iter()
                .map(|e| EventMsg {
                    status: e.status.0,
                    source: e.source.as_ref().map(proc_id),
                    info: (!e.info.is_empty()).then(|| pack_list(&e.info)),
                    results: (!e.results.is_empty()).then(|| pack_list(&e.results)),
                })
                .collect(),
            no_such_call: o.no_such_call,
        }
    }
}

/// Pack a list with its count (the pipes' encoding).
pub fn pack_list<T: Codec>(values: &[T]) -> Vec<u8> {
    let mut b = DataBuffer::with_type(BufferType::NonDescribed);
    let packed = b.pack(&[Size(values.len() as u64)]).and_then(|()| {
        if values.is_empty() {
            Ok(())
        } else {
            b.pack(values)
        }
    });
    match packed {
        Ok(()) => b.unload(),
        // Values built by this process always pack; an empty list is the safe fallback.
        Err(_) => vec![0; 8],
    }
}

/// Unpack what [`pack_list`] packed.
pub fn unpack_list<T: Codec>(bytes: &[u8]) -> Result<Vec<T>, String> {
    let mut b = DataBuffer::load(bytes.to_vec(), BufferType::NonDescribed);
    let n = b
        .unpack::<Size>(1)
        .map_err(|e| e.to_string())?
        .pop()
        .map_or(0, |s| s.0);
    let n = usize::try_from(n).map_err(|e| e.to_string())?;
    if n > bytes.len() {
        return Err(format!("a list of {n} in {} bytes", bytes.len()));
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    b.unpack(n).map_err(|e| e.to_string())
}

pub fn proc_id(p: &Proc) -> ProcId {
    (p.nspace.as_str().to_owned(), p.rank.0)
}

pub fn from_id(p: &ProcId) -> Result<Proc, Status> {
    Proc::try_new(&p.0, Rank(p.1)).map_err(|_| Status::ERR_BAD_PARAM)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix::model::Info;

    #[test]
    fn lists_cross_the_pipes_unchanged() {
        let infos = vec![
            Info::new(pmix::model::attr::TIMEOUT, 3),
            Info::with_key("k", "v").expect("key"),
        ];
        assert_eq!(
            unpack_list::<Info>(&pack_list(&infos)).expect("infos"),
            infos
        );
        assert!(
            unpack_list::<Info>(&pack_list::<Info>(&[]))
                .expect("empty")
                .is_empty()
        );
        assert!(unpack_list::<Info>(&[1, 0, 0, 0, 0, 0, 0, 0]).is_err());
    }
}
