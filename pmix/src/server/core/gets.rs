//! Gets the store cannot answer yet, and direct modex both ways (PMIx v5.0 §5.1.5, rules
//! G-* and DM-* of `retrieval_rules.tsv`).
//!
//! A client's `PMIx_Get` is decided by the get rules (`retrieval::server_get`): answered
//! now, held until the data comes (a commit, a fence, the end of its owner), or asked of the
//! host's `direct_modex` when its owner runs on another node. A host's
//! `PMIx_server_dmodex_request` for a local client's data waits here in the same way until
//! that client commits it. `PMIX_TIMEOUT` bounds either wait.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Info, Proc, Rank, Status, attr};
use crate::retrieval::{Directives, ServerStep, server_get};
use crate::store::jobinfo::get_reply_job_data;
use crate::store::{Found, is_reserved};
use crate::wire::{Reply, Tag};

use super::interface::{Action, ConnId};
use super::shared::Shared;
use super::upcall::{HostCall, HostResult};
use super::wait_limit::{HELD_GETS, WaitLimit};

/// A client's get, waiting or about to be decided.
#[derive(Clone, Debug)]
pub(super) struct HeldGet {
    /// The op of its timer, once it waits.
    op: u64,
    conn: ConnId,
    tag: Tag,
    requester: Proc,
    pub(super) target: Proc,
    pub(super) key: Option<String>,
    pub(super) directives: Directives,
}

impl HeldGet {
    /// The get of `key` (none: all of `target`'s data) that `requester` sent as `tag` on
    /// `conn`, with its directives.
    pub(super) fn new(
        conn: ConnId,
        tag: Tag,
        requester: Proc,
        target: Proc,
        key: Option<String>,
        info: &[Info],
    ) -> Self {
        HeldGet {
            op: 0,
            conn,
            tag,
            requester,
            target,
            key,
            directives: Directives::from_info(info),
        }
    }

    /// What the get rules decide for this get now, from what the store holds; `ask_host`
    /// says whether the host may be asked for another node's data.
    fn decide(&self, cx: &Shared, ask_host: bool) -> ServerStep {
        server_get(
            &cx.store,
            &self.requester,
            &self.target,
            self.key.as_deref(),
            &self.directives,
            ask_host,
        )
    }
}

/// A host's `PMIx_server_dmodex_request` waiting for a local client's data (DM-01, DM-03).
#[derive(Clone, Debug)]
struct HeldDmodex {
    op: u64,
    proc: Proc,
    required_key: Option<String>,
}

/// The gets and direct-modex requests of this server that wait.
#[derive(Debug)]
pub(super) struct Gets {
    held: Vec<HeldGet>,
    held_dmodex: Vec<HeldDmodex>,
    /// Whether the host answers `direct_modex`: without it, a get of a remote process's data
    /// waits for a fence to bring it.
    host_has_dmodex: bool,
    /// The gets the host's `direct_modex` is fetching for, by the op of its call.
    at_host: BTreeMap<u64, HeldGet>,
    /// The most gets one connection may have waiting (set by the core's builder:
    /// `Limits::held_gets`).
    pub(super) limit: WaitLimit,
}

impl Gets {
    pub(super) fn new(host_has_dmodex: bool) -> Self {
        Gets {
            held: Vec::new(),
            held_dmodex: Vec::new(),
            host_has_dmodex,
            at_host: BTreeMap::new(),
            limit: WaitLimit::new(HELD_GETS),
        }
    }

    /// A client's get: decide it by the get rules.
    pub(super) fn request(&mut self, cx: &mut Shared, get: HeldGet) {
        let step = get.decide(cx, self.host_has_dmodex);
        self.answer(cx, get, step);
    }

    /// Carry out what the get rules decided for `get`.
    pub(super) fn answer(&mut self, cx: &mut Shared, mut get: HeldGet, step: ServerStep) {
        match step {
            ServerStep::Reply { status, mut data } => {
                // A found answer about another namespace comes after that namespace's job
                // information, which OpenPMIx 4.2's client needs in hand (see
                // `get_reply_job_data`).
                if status == Status::SUCCESS
                    && get.target.nspace != get.requester.nspace
                    && let Some(realms) = cx.store.job_view(get.target.nspace.as_str())
                {
                    data.insert(0, get_reply_job_data(&realms));
                }
                cx.send(get.conn, get.tag, &Reply::Get { status, data });
            }
            ServerStep::Wait => {
                if self
                    .limit
                    .refuses(get.conn, self.held.iter().map(|h| h.conn))
                {
                    let status = Status::ERR_OUT_OF_RESOURCE;
                    let data = Vec::new();
                    cx.send(get.conn, get.tag, &Reply::Get { status, data });
                    return;
                }
                get.op = cx.op();
                if let Some(after_s) = get.directives.timeout_s {
                    cx.push(Action::Timer {
                        op: get.op,
                        after_s,
                    });
                }
                self.held.push(get);
            }
            ServerStep::AskHost => {
                let mut info = Vec::new();
                if get.directives.refresh_cache {
                    // N-01: a refresh takes what the owner has now and never waits for more.
                    info.push(Info::new(attr::IMMEDIATE, true));
                } else if let Some(k) = get.key.as_deref().filter(|k| !is_reserved(k)) {
                    // DM-03: the owning server answers once this key is there.
                    info.push(Info::new(attr::REQUIRED_KEY, k.to_owned()));
                }
                if let Some(t) = get.directives.timeout_s {
                    info.push(Info::new(
                        attr::TIMEOUT,
                        i32::try_from(t).unwrap_or(i32::MAX),
                    ));
                }
                let call = HostCall::DirectModex {
                    proc: get.target.clone(),
                    info,
                };
                let op = cx.call_host(call);
                self.at_host.insert(op, get);
            }
        }
    }

    /// Whether the host call `op` is a direct modex of these gets'.
    pub(super) fn awaits_host(&self, op: u64) -> bool {
        self.at_host.contains_key(&op)
    }

    /// The host's `direct_modex` answered: store what it brought and decide the get again.
    pub(super) fn host_answered(&mut self, cx: &mut Shared, op: u64, result: HostResult) {
        let Some(get) = self.at_host.remove(&op) else {
            return;
        };
        let status = match result.output::<Vec<u8>>() {
            Ok(blob) => match cx.store.modex.store_blob(&blob, |_| false) {
                Ok(()) => Status::SUCCESS,
                Err(e) => e.status(),
            },
            Err(s) => s,
        };
        if status != Status::SUCCESS {
            cx.send(get.conn, get.tag, &Reply::Status(status));
            return;
        }
        // Decide again with what the host brought; never ask it twice.
        let step = get.decide(cx, false);
        self.answer(cx, get, step);
    }

    /// `PMIx_server_dmodex_request`: see `ServerCore::dmodex_request`.
    pub(super) fn dmodex_request(&mut self, cx: &mut Shared, proc: Proc, info: &[Info]) -> u64 {
        let op = cx.op();
        let required_key = info
            .iter()
            .find(|i| i.key.as_str() == attr::REQUIRED_KEY.wire_key())
            .and_then(|i| i.value.as_str().map(str::to_owned));
        let directives = Directives::from_info(info);
        let held = HeldDmodex {
            op,
            proc,
            required_key,
        };
        if !try_answer_dmodex(cx, &held) {
            if directives.immediate {
                cx.push(Action::DmodexReply {
                    op,
                    result: Err(Status::ERR_NOT_FOUND),
                });
                return op;
            }
            if let Some(after_s) = directives.timeout_s {
                cx.push(Action::Timer { op, after_s });
            }
            self.held_dmodex.push(held);
        }
        op
    }

    /// The timer `op` bounded a get or a direct-modex request: end it with
    /// `PMIX_ERR_TIMEOUT`. Whether it did.
    pub(super) fn timed_out(&mut self, cx: &mut Shared, op: u64) -> bool {
        if let Some(i) = self.held_dmodex.iter().position(|d| d.op == op) {
            self.held_dmodex.remove(i);
            cx.push(Action::DmodexReply {
                op,
                result: Err(Status::ERR_TIMEOUT),
            });
            return true;
        }
        if let Some(i) = self.held.iter().position(|h| h.op == op) {
            let h = self.held.remove(i);
            // G-11: a held get ends with PMIX_ERR_TIMEOUT.
            cx.send(h.conn, h.tag, &Reply::Status(Status::ERR_TIMEOUT));
            return true;
        }
        false
    }

    /// The gets of a closed connection are nobody's.
    pub(super) fn conn_closed(&mut self, conn: ConnId) {
        self.held.retain(|h| h.conn != conn);
    }

    /// New data (or the end of it) for `proc`: decide its held gets and direct-modex
    /// requests again.
    pub(super) fn wake(&mut self, cx: &mut Shared, proc: &Proc) {
        let waiting: Vec<HeldDmodex> = std::mem::take(&mut self.held_dmodex);
        for d in waiting {
            if d.proc != *proc || !try_answer_dmodex(cx, &d) {
                self.held_dmodex.push(d);
            }
        }
        let (mine, rest): (Vec<HeldGet>, Vec<HeldGet>) =
            std::mem::take(&mut self.held).into_iter().partition(|h| {
                h.target == *proc
                    || (h.target.rank == Rank::UNDEF && h.target.nspace == proc.nspace)
            });
        self.held = rest;
        for get in mine {
            match get.decide(cx, self.host_has_dmodex) {
                // Still waiting: keep the original entry (and its timer).
                ServerStep::Wait => self.held.push(get),
                other => self.answer(cx, get, other),
            }
        }
    }

    /// New data for anyone (a fence brought it): decide every held get again.
    pub(super) fn wake_all(&mut self, cx: &mut Shared) {
        let targets: BTreeSet<Proc> = self.held.iter().map(|h| h.target.clone()).collect();
        for t in targets {
            self.wake(cx, &t);
        }
    }
}

/// Answer a direct-modex request if it can be: returns whether it was answered.
fn try_answer_dmodex(cx: &mut Shared, d: &HeldDmodex) -> bool {
    let modex = &cx.store.modex;
    let ready = modex.has_data(&d.proc)
        && d.required_key.as_deref().is_none_or(|k| {
            matches!(modex.find(&d.proc, k, false), Found::Value(_))
                || matches!(modex.find(&d.proc, k, true), Found::Value(_))
        });
    let result = if ready {
        modex
            .encode_blob(std::slice::from_ref(&d.proc))
            .map_err(|e| e.status())
    } else if !cx.store.is_local(&d.proc) || cx.store.gone.contains(&d.proc) {
        Err(Status::ERR_NOT_FOUND)
    } else {
        return false;
    };
    cx.push(Action::DmodexReply { op: d.op, result });
    true
}
