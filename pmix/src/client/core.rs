//! The client without I/O: what a client knows and decides, with bytes in and frames out.
//!
//! [`ClientCore`] holds the client's state — its cache of job information and fetched
//! values, the values put since the last commit, the requests in flight by tag — and applies
//! the standard's client-side rules to it: which gets are answered locally (the retrieval
//! rules of `crate::retrieval`), what a commit sends (only the values put since the previous
//! one), what a get's answer adds to the cache. It reads no socket and keeps no clock: a
//! driver hands it the bytes that arrive ([`ClientCore::handle_bytes`]) and the loss of the
//! connection ([`ClientCore::handle_lost`]), and takes from it the frames to write
//! ([`ClientCore::poll_transmit`]), the replies that completed ([`ClientCore::poll_reply`])
//! and the events and output the server pushed ([`ClientCore::poll_event`],
//! [`ClientCore::poll_output`]). It also keeps the
//! process's event registrations and builds the chain each event walks (`core/events.rs`).
//! The async
//! [`super::Client`] is such a driver; the core's unit tests (`core/tests.rs`) are another,
//! with no server at all.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::Error;
use crate::codec::BufferType;
use crate::codec::compress::decompress_string;
use crate::events::{Event, Registry};
use crate::model::{DataRange, Info, Key, Kval, Nspace, Proc, Scope, Status, Value, attr};
use crate::retrieval::{ClientCache, ClientStep, Directives, client_get};
use crate::store::JobRealms;
use crate::store::jobinfo::{is_job_data, realms_from_kvals};
use crate::store::qualified::{QUALIFIED_VALUE, value_for};
use crate::wire::ops::IofDelivery;
use crate::wire::{
    Command, CommitBucket, Dialect, Frame, FrameDecoder, Notification, Reply, Request, Tag,
};

/// What the server pushes to a process without being asked: events (tag 0) and forwarded
/// output (tag 2).
#[derive(Debug)]
pub(crate) enum Pushed {
    Event(Event),
    Output(IofDelivery),
    /// An event this process raised for itself, for the handlers that hear it: those
    /// registered when it was raised, or one registered later
    /// ([`ClientCore::kept_events_for`]); with the ticket of the caller that waits until
    /// the chain has been walked (the driver's).
    Own(Event, Vec<crate::events::HandlerId>, Option<u64>),
}

/// One client's state and protocol, without I/O.
#[derive(Debug)]
pub struct ClientCore {
    me: Proc,
    buffer_type: BufferType,
    /// The index the server gave this peer at the handshake, written in every frame.
    pindex: i32,
    /// The layouts the server reads and writes, from the version it stated
    /// ([`ClientCore::set_server_dialect`]).
    server: Dialect,
    /// The members of the groups this process formed, as the server named them: a 5.0 or
    /// later server wants them back in the destruct (`wire::version`).
    pub(crate) groups: BTreeMap<String, Vec<Proc>>,
    pub(crate) cache: ClientCache,
    /// Values put and not yet committed, by scope.
    staged: Vec<(Scope, Kval)>,
    pub(crate) finalized: bool,
    /// The indexes of the fabrics registered and not yet deregistered.
    pub(crate) fabrics: BTreeSet<u64>,
    /// The next tag to give a request.
    next_tag: u32,
    /// The requests waiting for their reply: tag, and the command a reply is decoded as.
    waiting: BTreeMap<u32, Command>,
    decoder: FrameDecoder,
    transmit: VecDeque<Vec<u8>>,
    replies: VecDeque<(Tag, Result<Reply, Status>)>,
    events: VecDeque<Event>,
    /// Output the server forwarded (tag 2), for the process's I/O-forwarding handlers.
    outputs: VecDeque<IofDelivery>,
    lost: bool,
    /// The event handlers this process registered (`core/events.rs`).
    handlers: Registry,
    /// The events this process raised for itself, for the handlers it registers later.
    kept_events: VecDeque<Kept>,
    /// Whether puts of reserved keys are accepted (`ClientConfig::accept_reserved_puts`).
    pub(crate) accept_reserved_puts: bool,
}

/// What a get does next: answered from the cache, or a request for the server.
#[derive(Debug)]
pub enum GetStart {
    Done(Result<Value, Status>),
    Ask(Request),
}

impl ClientCore {
    /// The state of a client that completed its handshake as `me`, with the index `pindex`
    /// the server gave it.
    pub fn new(me: Proc, buffer_type: BufferType, pindex: i32) -> Self {
        ClientCore {
            me,
            buffer_type,
            pindex,
            server: Dialect::V4,
            groups: BTreeMap::new(),
            cache: ClientCache::default(),
            staged: Vec::new(),
            finalized: false,
            fabrics: BTreeSet::new(),
            next_tag: Tag::FIRST_DYNAMIC.0,
            waiting: BTreeMap::new(),
            decoder: FrameDecoder::default(),
            transmit: VecDeque::new(),
            replies: VecDeque::new(),
            events: VecDeque::new(),
            outputs: VecDeque::new(),
            lost: false,
            handlers: Registry::default(),
            kept_events: VecDeque::new(),
            accept_reserved_puts: false,
        }
    }

    pub fn me(&self) -> &Proc {
        &self.me
    }

    pub fn buffer_type(&self) -> BufferType {
        self.buffer_type
    }

    /// Speak the layouts of a server of this dialect from now on (a server that stated no
    /// version is taken for a 4.x one, as this crate's own are).
    pub fn set_server_dialect(&mut self, dialect: Dialect) {
        self.server = dialect;
    }

    /// The layouts the server speaks.
    pub fn server_dialect(&self) -> Dialect {
        self.server
    }

    /// Accept puts of the standard's attributes (keys in the reserved `pmix` namespace) from
    /// now on, as OpenPMIx 4.2 does (see `ClientConfig::accept_reserved_puts`).
    pub fn accept_reserved_puts(&mut self, on: bool) {
        self.accept_reserved_puts = on;
    }

    /// Whether the connection is gone (every later request fails at once).
    pub fn is_lost(&self) -> bool {
        self.lost
    }

    // --- requests and replies ---

    /// Queue `req` for the server; its reply will come back under the returned tag.
    pub fn send_request(&mut self, req: &Request) -> Result<Tag, Status> {
        if self.lost {
            return Err(Status::ERR_LOST_CONNECTION);
        }
        let tag = self.tag();
        let payload = (req.encode_for(self.buffer_type, self.server)).map_err(|e| e.status())?;
        self.frame(tag, payload)?;
        self.waiting.insert(tag.0, req.command());
        Ok(tag)
    }

    /// Queue `req`, which the server does not answer.
    pub fn send_oneway(&mut self, req: &Request) -> Result<(), Status> {
        if self.lost {
            return Err(Status::ERR_LOST_CONNECTION);
        }
        let tag = self.tag();
        let payload = (req.encode_for(self.buffer_type, self.server)).map_err(|e| e.status())?;
        self.frame(tag, payload)
    }

    /// Queue a heartbeat: an empty frame under `PMIX_PTL_TAG_HEARTBEAT`, as OpenPMIx's clients
    /// send it and its servers' heartbeat sensor reads it. No reply.
    pub fn send_heartbeat(&mut self) -> Result<(), Status> {
        if self.lost {
            return Err(Status::ERR_LOST_CONNECTION);
        }
        self.frame(Tag::HEARTBEAT, Vec::new())
    }

    fn frame(&mut self, tag: Tag, payload: Vec<u8>) -> Result<(), Status> {
        let frame = Frame {
            pindex: self.pindex,
            tag,
            payload,
        }
        .encode()
        .map_err(|e| e.status())?;
        self.transmit.push_back(frame);
        Ok(())
    }

    fn tag(&mut self) -> Tag {
        let mut t = Tag(self.next_tag);
        // Past the last tag (or onto one still waiting): start again above the reserved ones.
        while !t.is_dynamic() || self.waiting.contains_key(&t.0) {
            t = if t.is_dynamic() && t.0 < u32::MAX {
                Tag(t.0 + 1)
            } else {
                Tag::FIRST_DYNAMIC
            };
        }
        self.next_tag = t.0.wrapping_add(1);
        t
    }

    /// The next frame to write, whole.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmit.pop_front()
    }

    /// Every frame there is to write, in order.
    pub fn drain_transmit(&mut self) -> Vec<Vec<u8>> {
        self.transmit.drain(..).collect()
    }

    /// Bytes the server sent: each complete frame is a reply to a waiting request (by its
    /// tag) or a pushed event. A stream that does not frame ends the connection.
    pub fn handle_bytes(&mut self, bytes: &[u8]) {
        self.decoder.handle_bytes(bytes);
        loop {
            match self.decoder.next_frame() {
                Ok(Some(frame)) => self.handle_frame(frame),
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!("the server's stream does not frame: {e}");
                    self.handle_lost();
                    break;
                }
            }
        }
    }

    fn handle_frame(&mut self, frame: Frame) {
        if frame.tag == Tag::NOTIFY {
            // A notification that does not decode is dropped: the server's bug must not end
            // the connection.
            match Notification::decode(&frame.payload, self.buffer_type) {
                Ok(n) => self.events.push_back(n.into()),
                Err(e) => tracing::warn!("an event notification that does not decode: {e}"),
            }
            return;
        }
        if frame.tag == Tag::IOF {
            match IofDelivery::decode(&frame.payload, self.buffer_type) {
                Ok(d) => self.outputs.push_back(d),
                Err(e) => tracing::warn!("forwarded output that does not decode: {e}"),
            }
            return;
        }
        let Some(command) = self.waiting.remove(&frame.tag.0) else {
            tracing::debug!(
                "a frame under tag {} that no request waits for",
                frame.tag.0
            );
            return;
        };
        let decoded = Reply::decode_for(command, &frame.payload, self.buffer_type, self.server);
        let reply = decoded.map_err(|e| {
            tracing::warn!("a reply to {command:?} that does not decode: {e}");
            e.status()
        });
        self.replies.push_back((frame.tag, reply));
    }

    /// The connection is gone: every waiting request completes with
    /// `PMIX_ERR_LOST_CONNECTION`, and the process hears that event (v5.0 §10.1).
    pub fn handle_lost(&mut self) {
        if self.lost {
            return;
        }
        self.lost = true;
        self.transmit.clear();
        for (tag, _) in std::mem::take(&mut self.waiting) {
            (self.replies).push_back((Tag(tag), Err(Status::ERR_LOST_CONNECTION)));
        }
        self.events.push_back(Event {
            status: Status::ERR_LOST_CONNECTION,
            source: self.me.clone(),
            range: DataRange::PROC_LOCAL,
            info: Vec::new(),
        });
    }

    /// A reply that completed: its request's tag and the reply.
    pub fn poll_reply(&mut self) -> Option<(Tag, Result<Reply, Status>)> {
        self.replies.pop_front()
    }

    /// An event the server pushed (or the loss of the connection).
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Output the server forwarded to this process (`PMIx_IOF_pull`).
    pub fn poll_output(&mut self) -> Option<IofDelivery> {
        self.outputs.pop_front()
    }

    /// Everything the server pushed, events first, in the order each kind arrived.
    pub(crate) fn drain_pushed(&mut self) -> Vec<Pushed> {
        let events = self.events.drain(..).map(Pushed::Event);
        let outputs = self.outputs.drain(..).map(Pushed::Output);
        events.chain(outputs).collect()
    }

    // --- the job's information ---

    /// The job-info reply the server sends after the handshake: the job's realms.
    pub fn job_info_received(&mut self, reply: Reply) -> Result<(), Error> {
        let Reply::JobInfo { nspace, kvals } = reply else {
            return Err(Error::Status(
                Status::ERR_UNPACK_FAILURE,
                "unexpected job-info reply".into(),
            ));
        };
        self.keep_job_info(&nspace, &kvals)
    }

    /// Keep a job's information (this job's, or another's from a spawn, a connect or a get
    /// reply) for local gets of its reserved keys.
    pub fn keep_job_info(&mut self, nspace: &Nspace, kvals: &[Kval]) -> Result<(), Error> {
        let mut realms = JobRealms::new(nspace.clone());
        realms_from_kvals(&mut realms, kvals, self.buffer_type)?;
        self.cache.realms.insert(nspace.clone(), realms);
        Ok(())
    }

    /// The realms of `nspace` this client holds.
    pub fn job_realms(&self, nspace: &str) -> Option<&JobRealms> {
        self.cache.realms(nspace)
    }

    // --- put, commit, get ---

    /// `PMIx_Put`: cache the value and stage it for the next commit (rules P-01..P-03; a
    /// reserved key that names a defined attribute only when
    /// [`ClientCore::accept_reserved_puts`] says so).
    pub fn put(&mut self, scope: Scope, key: &str, value: Value) -> Result<(), Status> {
        let key = if self.accept_reserved_puts {
            crate::retrieval::check_put_defined_allowed(scope, key)?
        } else {
            crate::retrieval::check_put(scope, key)?
        };
        let kv = Kval { key, value };
        let me = self.me.clone();
        self.cache.store(&me, vec![kv.clone()]);
        if scope != Scope::INTERNAL {
            self.staged.retain(|(_, k)| k.key != kv.key);
            self.staged.push((scope, kv));
        }
        Ok(())
    }

    /// `PMIx_Store_internal`: cache a value for this process only (rule P-08).
    pub fn store_internal(&mut self, proc: &Proc, key: &str, value: Value) -> Result<(), Status> {
        let key = Key::new(key).map_err(|_| Status::ERR_BAD_PARAM)?;
        self.cache.store(proc, vec![Kval { key, value }]);
        Ok(())
    }

    /// `PMIx_Commit`: the request that sends the values put since the last commit, each
    /// scope in its bucket (a global value in both); `None` when nothing was put.
    pub fn take_commit(&mut self) -> Option<Request> {
        let staged = std::mem::take(&mut self.staged);
        if staged.is_empty() {
            return None;
        }
        let (mut local, mut remote) = (Vec::new(), Vec::new());
        for (scope, kv) in staged {
            if scope != Scope::REMOTE {
                local.push(kv.clone());
            }
            if scope != Scope::LOCAL {
                remote.push(kv);
            }
        }
        let buckets = [(Scope::LOCAL, local), (Scope::REMOTE, remote)]
            .into_iter()
            .filter(|(_, kvals)| !kvals.is_empty())
            .map(|(scope, kvals)| CommitBucket { scope, kvals })
            .collect();
        Some(Request::Commit { buckets })
    }

    /// `PMIx_Get`, first half: the answer from the cache, or the request for the server.
    pub fn get_start(&self, target: &Proc, key: &str, info: &[Info]) -> GetStart {
        if Key::new(key).is_err() {
            return GetStart::Done(Err(Status::ERR_BAD_PARAM));
        }
        let d = Directives::from_info(info);
        let add_immediate = match client_get(&self.cache, &self.me, target, key, &d) {
            ClientStep::Done(r) => return GetStart::Done(r.map(inflate)),
            ClientStep::AskServer { add_immediate } => add_immediate,
        };
        let mut info = info.to_vec();
        if add_immediate && !d.immediate {
            info.push(Info::new(attr::IMMEDIATE, true));
        }
        GetStart::Ask(Request::Get {
            nspace: target.nspace.as_str().to_owned(),
            rank: target.rank,
            info,
            key: Some(key.to_owned()),
        })
    }

    /// `PMIx_Get`, second half: the server's reply to the request of [`Self::get_start`],
    /// filed in the cache; the value asked for.
    pub fn get_finish(
        &mut self,
        key: &str,
        info: &[Info],
        reply: Result<Reply, Status>,
    ) -> Result<Value, Status> {
        let Reply::Get { status, data } = reply? else {
            return Err(Status::ERR_UNPACK_FAILURE);
        };
        if status != Status::SUCCESS {
            return Err(status);
        }
        let d = Directives::from_info(info);
        let mut found = None;
        let context_id = d.qualifiers.context_id;
        for mut of_proc in data {
            // Another namespace's job information, sent ahead of the answer: kept for the
            // local gets of that namespace's reserved keys, as a spawn or connect's is.
            if is_job_data(&of_proc) && of_proc.proc.nspace != self.me.nspace {
                let nspace = of_proc.proc.nspace.clone();
                self.keep_job_info(&nspace, &of_proc.kvals)
                    .map_err(|e| e.status())?;
                continue;
            }
            if found.is_none() {
                found = (of_proc.kvals.iter()).find_map(|k| value_for(k, key, context_id));
            }
            // A value posted for a group comes in OpenPMIx's qualified form: handed to the
            // caller plain, and asked again next time (the cache keeps no qualifiers).
            of_proc.kvals.retain(|k| k.key.as_str() != QUALIFIED_VALUE);
            (self.cache).store_answer(&of_proc.proc, of_proc.kvals, key, &d.qualifiers);
        }
        found.map(inflate).ok_or(Status::ERR_NOT_FOUND)
    }
}

/// Lock a core its drivers share between threads. It is plain data changed by whole steps;
/// a panic elsewhere cannot leave it half-updated.
pub(crate) fn lock(core: &Mutex<ClientCore>) -> MutexGuard<'_, ClientCore> {
    core.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A request the core could not queue, as the caller hears of it.
pub(crate) fn cannot_send(s: Status, req: &Request) -> Error {
    Error::Status(s, format!("cannot send {:?}", req.command()))
}

/// OpenPMIx clients compress long strings on put; hand them back as strings.
fn inflate(v: Value) -> Value {
    match v {
        Value::CompressedString(bo) => decompress_string(&bo.0)
            .map(|s| Value::String(Some(s)))
            .unwrap_or(Value::CompressedString(bo)),
        other => other,
    }
}

mod events;
pub(crate) mod replies;

pub(crate) use events::Kept;
pub use events::{KEPT_EVENTS, Notify};
#[cfg(test)]
mod tests;
