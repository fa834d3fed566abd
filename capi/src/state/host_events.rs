//! Event handlers in a server process (v5.0 §10.1): a host registers handlers and raises
//! events with the same calls as a client (`PMIx_Register_event_handler`,
//! `PMIx_Notify_event`), which come here when this process runs a server and no client.
//!
//! The host's handlers hear the events it raises itself, in every range but
//! `PMIX_RANGE_CUSTOM`; the events reach the server's clients in every range but
//! `PMIX_RANGE_PROC_LOCAL`. The handlers stand in the crate's registry
//! (`pmix::events::Registry`), as a client's do: its placement directives
//! (`PMIX_EVENT_HDLR_FIRST`, `_BEFORE`, …), its filters (affected processes, source, range)
//! and `PMIX_EVENT_NON_DEFAULT` apply, the host being the server's identifier. A chain
//! walks one handler at a time on one of the server's threads; `PMIX_EVENT_ACTION_COMPLETE`
//! ends it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError, mpsc};

use pmix::events::{Event, HandlerId, Registration, Registry};
use pmix::model::{DataRange, Info, Nspace, Proc, Rank, Status, attr};

use crate::callbacks::{Completion, Delivery, run_handler};
use crate::types::NotificationFn;

/// The host's handlers: where each stands, and the C function and return object of each.
#[derive(Default)]
struct Handlers {
    registry: Registry,
    c: BTreeMap<HandlerId, (NotificationFn, Option<Info>)>,
}

static HANDLERS: LazyLock<Mutex<Handlers>> = LazyLock::new(Mutex::default);

fn handlers() -> MutexGuard<'static, Handlers> {
    // Each change is one registration or one removal: a panic elsewhere cannot tear it.
    HANDLERS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Register `handler` for `codes` (none: every event) with the registration's `info`
/// (placement, filters, name); `returned` is its `PMIX_EVENT_RETURN_OBJECT`. Its reference,
/// or the registry's refusal (`PMIX_ERR_EVENT_REGISTRATION` for a place taken).
pub(crate) fn register(
    codes: &[Status],
    info: &[Info],
    handler: NotificationFn,
    returned: Option<Info>,
) -> Result<HandlerId, Status> {
    let registration = Registration::new(codes, info)?;
    let mut h = handlers();
    let id = h.registry.register(registration)?;
    h.c.insert(id, (handler, returned));
    Ok(id)
}

/// Remove the handler `id`; `PMIX_ERR_BAD_PARAM` if there is none (§10.1.7).
pub(crate) fn deregister(id: HandlerId) -> Result<(), Status> {
    let mut h = handlers();
    h.registry.deregister(id)?;
    h.c.remove(&id);
    Ok(())
}

/// Run `work` on one of the server's threads (a registration's callback).
pub(crate) fn on_server_thread(work: impl FnOnce() + Send + 'static) -> Result<(), Status> {
    let (_, handle, _) = super::server::server()?;
    handle.spawn_blocking(work);
    Ok(())
}

/// Forget every handler, and end the chains still waiting for a handler's completion
/// (`PMIx_server_finalize`): their threads return.
pub(crate) fn clear() {
    *handlers() = Handlers::default();
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
    let (server, handle, _) = super::server::server()?;
    if range != DataRange::PROC_LOCAL {
        let (source, info) = (source.clone(), info.clone());
        handle
            .block_on(server.notify_event(status, source, range, info))
            .map_err(|e| e.status())?;
    }
    if range != DataRange::CUSTOM {
        let me = server.id().clone();
        let source = source.unwrap_or_else(|| Proc::new(Nspace::default(), Rank::UNDEF));
        let event = Event {
            status,
            source,
            range,
            info,
        };
        handle.spawn_blocking(move || walk_chain(&me, &event));
    }
    Ok(())
}

/// The server lost `proc`, a local client that had not finalized: the host's handlers hear
/// `PMIX_ERR_LOST_CONNECTION` from it in `PMIX_RANGE_PROC_LOCAL`, with the process as the
/// affected one, as OpenPMIx raises it (Slurm's `mpi/pmix` cancels the step on hearing it).
/// The clients hear nothing of it here.
pub(crate) fn client_lost(proc: Proc) -> Result<(), Status> {
    let (server, handle, _) = super::server::server()?;
    let me = server.id().clone();
    let info = vec![Info::new(attr::EVENT_AFFECTED_PROC, proc.clone())];
    let event = Event {
        status: Status::ERR_LOST_CONNECTION,
        source: proc,
        range: DataRange::PROC_LOCAL,
        info,
    };
    handle.spawn_blocking(move || walk_chain(&me, &event));
    Ok(())
}

/// Call the handlers `event` reaches in the host (`me`), one at a time, each after the one
/// before has completed.
fn walk_chain(me: &Proc, event: &Event) {
    let chain: Vec<(HandlerId, NotificationFn, Option<Info>)> = {
        let h = handlers();
        (h.registry.chain(me, event).into_iter())
            .filter_map(|id| h.c.get(&id).map(|(f, r)| (id, *f, r.clone())))
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
        let delivery = Delivery {
            handler: id,
            status: event.status,
            source: &event.source,
            info: &event.info,
            results: &results,
        };
        run_handler(handler, returned.as_ref(), &delivery, done);
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
