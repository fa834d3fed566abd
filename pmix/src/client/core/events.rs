//! The client's event handlers without I/O (v5.0 §10.1): which handlers this process has
//! registered, what the server is told of them, where a notification goes, and the chain an
//! event walks. The handlers' functions and the task that calls them are the driver's
//! (`client/events.rs`); this part decides.
//!
//! The events a process raises for itself are kept (up to [`KEPT_EVENTS`], oldest dropped
//! first, none that carries `PMIX_EVENT_DO_NOT_CACHE`), and a handler registered later is
//! handed the kept ones it accepts (each walks a chain of its own, as every event does, so
//! their order is not promised), as the server does with the events of other processes
//! (§10.1.8). The server never hands a process its own events
//! again, so without this a runtime that initialises after another would never hear the
//! model the first declared (§B.3.2: "cached locally and can then be read asynchronously
//! by other runtime systems using PMIx's Event Notification system").

use std::collections::{BTreeSet, VecDeque};

use crate::events::{Chain, Event, HandlerId, Registration};
use crate::model::{DataRange, Info, Proc, Status};
use crate::wire::Request;
use crate::wire::ops::Op;

use super::ClientCore;

/// How many of its own events a process keeps for handlers registered later.
pub const KEPT_EVENTS: usize = 64;

/// Where a notification of this process goes (`PMIx_Notify_event`).
#[derive(Debug, PartialEq)]
pub struct Notify {
    /// The request that hands it to the server, for every range but `PMIX_RANGE_PROC_LOCAL`.
    pub request: Option<Request>,
    /// The event for this process's own handlers, when its range holds this process.
    pub local: Option<Event>,
    /// The handlers that hear it now, in the chain's order (§10.1.2): those registered when
    /// it is raised. A handler registered later is handed it apart, if it was kept
    /// ([`ClientCore::kept_events_for`]).
    pub handlers: Vec<HandlerId>,
}

/// An event this process raised for itself, kept for the handlers it registers later, and
/// the handlers that have heard it (so none hears it twice).
#[derive(Debug)]
pub(crate) struct Kept {
    event: Event,
    heard_by: BTreeSet<HandlerId>,
}

impl ClientCore {
    /// `PMIx_Register_event_handler`, first half: place the handler for `codes` (every code
    /// when empty) as `info` asks, and the request that tells the server. The handler is in
    /// place before the server is asked, so an event the server replays right after accepting
    /// reaches it; [`Self::registration_refused`] takes it back.
    pub fn register_events(
        &mut self,
        codes: &[Status],
        info: &[Info],
    ) -> Result<(HandlerId, Request), Status> {
        let id = self.handlers.register(Registration::new(codes, info)?)?;
        let request = Request::RegisterEvents {
            codes: codes.to_vec(),
            info: info.to_vec(),
        };
        Ok((id, request))
    }

    /// The server refused the registration of `id`: it is never called.
    pub fn registration_refused(&mut self, id: HandlerId) {
        let _ = self.handlers.deregister(id);
    }

    /// `PMIx_Deregister_event_handler`: the handler is not called again, and the server is
    /// told with the returned request, which it does not answer. An identifier this process
    /// does not hold is `PMIX_ERR_BAD_PARAM` (§10.1.7).
    pub fn deregister_events(&mut self, id: HandlerId) -> Result<Request, Status> {
        let reg = self.handlers.deregister(id)?;
        Ok(Request::Op(Op::DeregisterEvents { codes: reg.codes }))
    }

    /// `PMIx_Notify_event`: raise `status` from `source` (this process when `None`) to the
    /// processes of `range` (§10.1.8). `PMIX_RANGE_PROC_LOCAL` stays in the process; every
    /// other range goes to the server, which passes it on, and to this process's own
    /// handlers when the range holds it.
    pub fn notify(
        &mut self,
        status: Status,
        source: Option<&Proc>,
        range: DataRange,
        info: &[Info],
    ) -> Result<Notify, Status> {
        let event = Event {
            status,
            source: source.cloned().unwrap_or_else(|| self.me.clone()),
            range,
            info: info.to_vec(),
        };
        event.check()?;
        let request = (range != DataRange::PROC_LOCAL).then(|| Request::Notify {
            status,
            range,
            info: info.to_vec(),
        });
        let local = (range == DataRange::PROC_LOCAL || event.reaches(&self.me)).then_some(event);
        let handlers = local
            .as_ref()
            .map(|e| self.handlers.chain(&self.me, e))
            .unwrap_or_default();
        if let Some(event) = local.as_ref().filter(|e| !e.do_not_cache()) {
            let heard_by = handlers.iter().copied().collect();
            let kept = Kept {
                event: event.clone(),
                heard_by,
            };
            keep(&mut self.kept_events, kept);
        }
        Ok(Notify {
            request,
            local,
            handlers,
        })
    }

    /// The kept events of this process the handler `id` accepts and has not heard, oldest
    /// first (the order they are queued in), now counted as heard: what a handler registered after them is handed (the
    /// module's doc).
    pub fn kept_events_for(&mut self, id: HandlerId) -> Vec<Event> {
        let mut out = Vec::new();
        for kept in &mut self.kept_events {
            if !kept.heard_by.contains(&id)
                && self.handlers.chain(&self.me, &kept.event).contains(&id)
            {
                kept.heard_by.insert(id);
                out.push(kept.event.clone());
            }
        }
        out
    }

    /// The chain `event` walks: the handlers that accept it, in the order of §10.1.2.
    pub(crate) fn event_chain(&self, event: Event) -> Chain {
        let ids = self.handlers.chain(&self.me, &event);
        Chain::new(event, ids)
    }

    /// Whether `id` is registered (a handler deregistered while a chain runs is skipped,
    /// §10.1.7), and its `PMIX_EVENT_HDLR_NAME`.
    pub fn handler_name(&self, id: HandlerId) -> Option<Option<&str>> {
        self.handlers.get(id).map(|r| r.name.as_deref())
    }

    /// Forget every handler (at finalize).
    pub fn clear_handlers(&mut self) {
        self.handlers = Default::default();
    }
}

/// Keep `event`, dropping the oldest kept when [`KEPT_EVENTS`] are.
fn keep(kept: &mut VecDeque<Kept>, event: Kept) {
    if kept.len() == KEPT_EVENTS {
        kept.pop_front();
    }
    kept.push_back(event);
}
