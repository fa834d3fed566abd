//! Event handlers in a server process (v5.0 §10.1): a host registers handlers and raises
//! events with the same calls as a client (`PMIx_Register_event_handler`,
//! `PMIx_Notify_event`), which come here when this process runs a server and no client.
//!
//! The host's handlers hear the events it raises itself, in every range but
//! `PMIX_RANGE_CUSTOM`; the events reach the server's clients in every range but
//! `PMIX_RANGE_PROC_LOCAL`. A chain walks one handler at a time on one of the server's
//! threads: the handlers registered for the event's code first, then the default ones (no
//! codes), each in registration order; `PMIX_EVENT_ACTION_COMPLETE` ends it. The
//! registration's placement directives (`PMIX_EVENT_HDLR_FIRST`, `_BEFORE`, …), its filters
//! (affected processes, range) and `PMIX_EVENT_NON_DEFAULT` are not applied here yet: the
//! client's chain (`pmix::events`) does them, and this one should come to use it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, mpsc};

use pmix::model::{DataRange, Info, Nspace, Proc, Rank, Status};

use crate::events::{CHandler, Completion, Delivery, run_handler};

/// One registered handler.
struct Registration {
    id: usize,
    codes: Vec<Status>,
    handler: CHandler,
    /// The registration's `PMIX_EVENT_RETURN_OBJECT`, handed back with each event.
    returned: Option<Info>,
}

/// The host's handlers and the next reference to hand out.
struct Handlers {
    next: usize,
    registered: Vec<Registration>,
}

static HANDLERS: Mutex<Handlers> = Mutex::new(Handlers {
    next: 0,
    registered: Vec::new(),
});

fn handlers() -> MutexGuard<'static, Handlers> {
    // Each change is one push or one removal: a panic elsewhere cannot tear it.
    HANDLERS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Register `handler` for `codes` (none: every event); its reference.
pub(crate) fn register(codes: Vec<Status>, handler: CHandler, returned: Option<Info>) -> usize {
    let mut h = handlers();
    let id = h.next;
    h.next += 1;
    h.registered.push(Registration {
        id,
        codes,
        handler,
        returned,
    });
    id
}

/// Remove the handler `id`; `PMIX_ERR_NOT_FOUND` if there is none.
pub(crate) fn deregister(id: usize) -> Result<(), Status> {
    let mut h = handlers();
    let before = h.registered.len();
    h.registered.retain(|r| r.id != id);
    if h.registered.len() == before {
        return Err(Status::ERR_NOT_FOUND);
    }
    Ok(())
}

/// Run `work` on one of the server's threads (a registration's callback).
pub(crate) fn on_server_thread(work: impl FnOnce() + Send + 'static) -> Result<(), Status> {
    let (_, handle, _) = super::server()?;
    handle.spawn_blocking(work);
    Ok(())
}

/// Forget every handler, and end the chains still waiting for a handler's completion
/// (`PMIx_server_finalize`): their threads return.
pub(crate) fn clear() {
    handlers().registered.clear();
    waiting().clear();
}

/// Where each chain waits for its current handler's completion, by turn: dropping a sender
/// ends that chain's wait.
type Waiting = BTreeMap<u64, mpsc::Sender<(Status, Vec<Info>)>>;

static WAITING: Mutex<Waiting> = Mutex::new(BTreeMap::new());
static NEXT_TURN: AtomicU64 = AtomicU64::new(0);

fn waiting() -> MutexGuard<'static, Waiting> {
    // One insertion or removal at a time: a panic elsewhere cannot tear it.
    WAITING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `PMIx_Notify_event` in the server process: to the server's clients (through the
/// server) and to this process's own handlers, as `range` says. Returns once the clients'
/// notification is queued; the host's handlers run on one of the server's threads.
pub(crate) fn notify(
    status: Status,
    source: Option<Proc>,
    range: DataRange,
    info: Vec<Info>,
) -> Result<(), Status> {
    let (server, handle, _) = super::server()?;
    if range != DataRange::PROC_LOCAL {
        let (source, info) = (source.clone(), info.clone());
        handle
            .block_on(server.notify_event(status, source, range, info))
            .map_err(|e| e.status())?;
    }
    if range != DataRange::CUSTOM {
        let source = source.unwrap_or_else(|| Proc::new(Nspace::default(), Rank::UNDEF));
        handle.spawn_blocking(move || walk_chain(status, &source, &info));
    }
    Ok(())
}

/// Call the handlers of `status` one at a time, each after the one before has completed.
fn walk_chain(status: Status, source: &Proc, info: &[Info]) {
    let chain: Vec<(usize, CHandler, Option<Info>)> = {
        let h = handlers();
        let specific = (h.registered.iter()).filter(|r| r.codes.contains(&status));
        let default = (h.registered.iter()).filter(|r| r.codes.is_empty());
        specific
            .chain(default)
            .map(|r| (r.id, r.handler, r.returned.clone()))
            .collect()
    };
    let mut results: Vec<Info> = Vec::new();
    for (id, handler, returned) in chain {
        let (tx, rx) = mpsc::channel::<(Status, Vec<Info>)>();
        let turn = NEXT_TURN.fetch_add(1, Ordering::Relaxed);
        waiting().insert(turn, tx);
        let done: Completion = Box::new(move |s, r| {
            if let Some(tx) = waiting().remove(&turn) {
                let _ = tx.send((s, r));
            }
        });
        let event = Delivery {
            handler: id,
            status,
            source,
            info,
            results: &results,
        };
        run_handler(handler, returned.as_ref(), &event, done);
        // A handler that never completes holds its chain only (this thread is its own),
        // until `PMIx_server_finalize` ends the wait.
        let Ok((outcome, added)) = rx.recv() else {
            return;
        };
        results.extend(added);
        if outcome == Status::EVENT_ACTION_COMPLETE {
            return;
        }
    }
}
