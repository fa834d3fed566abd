//! The client's event handlers, driven on the client's runtime: their functions and the
//! task that calls them along the chain the client's core builds (`core/events.rs`).
//!
//! The same task hands the output the server forwards to the handlers of the process's pulls
//! of output, which are kept here (the calls that make them are in `iof.rs`).
//!
//! Events reach one task per client, in the order they arrive: notifications the server
//! pushes (tag 0), the process's own notifications (and, for a handler just registered, the
//! earlier ones it accepts, to it alone), and `PMIX_ERR_LOST_CONNECTION` when the server
//! goes away. For each event, in that order, the task builds the chain and starts a
//! task that calls its handlers; a handler ends its turn by calling
//! [`EventCompletion::complete`] (or by dropping it, which lets the chain go on with no
//! results), so a handler may finish its work on another task before the next handler of
//! the chain runs (§10.1.2's completion callback). Handlers are called one at a time, but a
//! chain waiting for a completion does not hold up the next event's: a handler that never
//! completes (as python3-pmix 4.2's do not) stalls its own event only, as with OpenPMIx.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{mpsc, oneshot};

use crate::events::{Chain, Event, HandlerId};
use crate::model::{Info, IofChannel, Proc, Status};
use crate::wire::Request;
use crate::wire::ops::IofDelivery;

use super::core::{ClientCore, Pushed, lock};

/// What a handler is told of an event.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct EventNotice {
    /// The identifier its registration returned.
    pub handler: HandlerId,
    /// Its `PMIX_EVENT_HDLR_NAME`.
    pub name: Option<String>,
    pub status: Status,
    pub source: Proc,
    pub info: Vec<Info>,
    /// What the handlers before it in the chain returned.
    pub results: Vec<Info>,
}

/// A handler's way to end its turn (`pmix_event_notification_cbfunc_fn_t`).
#[derive(Debug)]
pub struct EventCompletion {
    done: Option<oneshot::Sender<(Status, Vec<Info>)>>,
    returned: Option<oneshot::Sender<()>>,
}

impl EventCompletion {
    /// Hand the chain on: `status` (`PMIX_EVENT_ACTION_COMPLETE` ends it) and results for the
    /// handlers after this one.
    pub fn complete(mut self, status: Status, results: Vec<Info>) {
        if let Some(tx) = self.done.take() {
            let _ = tx.send((status, results));
        }
    }

    /// For a handler that does its work on another thread (as the C library's handlers run
    /// on threads of their own): until the returned guard is dropped, the handler counts as
    /// still in its call. Whoever raised an event for its own process waits until the chain
    /// has run as far as it goes at once ([`super::Client::notify_event`]): a handler that
    /// completes before the guard is dropped lets that wait go on to the next handler.
    pub fn in_call(&mut self) -> HandlerInCall {
        HandlerInCall {
            _returned: self.returned.take(),
        }
    }
}

/// The guard of [`EventCompletion::in_call`]: dropped when the handler's call has returned.
#[derive(Debug)]
pub struct HandlerInCall {
    _returned: Option<oneshot::Sender<()>>,
}

/// An event handler: called on the client's runtime, it must not block.
pub type EventHandler = Arc<dyn Fn(EventNotice, EventCompletion) + Send + Sync>;

/// The functions of one client's handlers, and the queue of events waiting for them. Which
/// handlers there are and the chain an event walks are the client's core's
/// (`core/events.rs`).
#[derive(Clone)]
pub(crate) struct Events {
    core: Arc<Mutex<ClientCore>>,
    functions: Arc<Mutex<Functions>>,
    queue: mpsc::UnboundedSender<Pushed>,
    /// The process's pulls of forwarded output ([`super::iof`]).
    pub(crate) pulls: Arc<Mutex<Pulls>>,
    /// The callers waiting for the chains of their own events to be walked.
    walked: Arc<Mutex<Walked>>,
}

/// Who waits for the walk of an event this process raised for itself, by ticket.
#[derive(Default)]
struct Walked {
    next: u64,
    waiting: BTreeMap<u64, oneshot::Sender<()>>,
}

fn lock_walked(walked: &Mutex<Walked>) -> MutexGuard<'_, Walked> {
    walked.lock().unwrap_or_else(PoisonError::into_inner)
}

type Functions = BTreeMap<HandlerId, EventHandler>;

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events").finish_non_exhaustive()
    }
}

/// The queue events wait in: its sender, and the receiver the delivery task takes.
pub(crate) type EventQueue = (
    mpsc::UnboundedSender<Pushed>,
    mpsc::UnboundedReceiver<Pushed>,
);

/// The queue events wait in, made before the connection that feeds it.
pub(crate) fn queue() -> EventQueue {
    mpsc::unbounded_channel()
}

/// Lock the handlers' functions: plain data, each change made in one step, so a panic
/// elsewhere leaves it whole. Taken before the core's lock when both are held.
fn lock_functions(functions: &Mutex<Functions>) -> MutexGuard<'_, Functions> {
    functions.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Events {
    /// Start the task that delivers the events of `rx` (fed through `queue`) to the handlers
    /// registered in `core`.
    pub(crate) fn start(core: Arc<Mutex<ClientCore>>, (queue, rx): EventQueue) -> Events {
        let functions: Arc<Mutex<Functions>> = Arc::default();
        let pulls: Arc<Mutex<Pulls>> = Arc::default();
        let walked: Arc<Mutex<Walked>> = Arc::default();
        tokio::spawn(deliver_all(
            core.clone(),
            functions.clone(),
            pulls.clone(),
            walked.clone(),
            rx,
        ));
        Events {
            core,
            functions,
            queue,
            pulls,
            walked,
        }
    }

    /// Hand an event this process raised for itself to `handlers`, the chain the core
    /// decided on when it was raised. The answer is ready once the chain has been walked as
    /// far as it goes at once: to its end, or to a handler that returned without completing
    /// its turn (it may complete later, from another thread). OpenPMIx's library calls the
    /// notifier's callback at that point too, so a program that waits for it before it
    /// finalizes has seen its own handlers run.
    pub(crate) fn deliver_own(
        &self,
        event: Event,
        handlers: Vec<HandlerId>,
    ) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        let ticket = {
            let mut walked = lock_walked(&self.walked);
            walked.next += 1;
            let ticket = walked.next;
            walked.waiting.insert(ticket, tx);
            ticket
        };
        if self
            .queue
            .send(Pushed::Own(event, handlers, Some(ticket)))
            .is_err()
        {
            lock_walked(&self.walked).waiting.remove(&ticket);
        }
        rx
    }

    /// Register `handler`: its identifier and the request that tells the server.
    pub(crate) fn register(
        &self,
        codes: &[Status],
        info: &[Info],
        handler: EventHandler,
    ) -> Result<(HandlerId, Request), Status> {
        // The functions' lock is held until the handler is whole, so the delivery task never
        // finds a registered handler without its function.
        let mut functions = lock_functions(&self.functions);
        let (id, request) = lock(&self.core).register_events(codes, info)?;
        functions.insert(id, handler);
        Ok((id, request))
    }

    /// Hand the handler `id`, just registered, the events this process raised for itself
    /// before it that it accepts (`core/events.rs`), each to it alone.
    pub(crate) fn hand_kept_events(&self, id: HandlerId) {
        for event in lock(&self.core).kept_events_for(id) {
            let _ = self.queue.send(Pushed::Own(event, vec![id], None));
        }
    }

    /// The server refused the registration of `id`.
    pub(crate) fn refused(&self, id: HandlerId) {
        let mut functions = lock_functions(&self.functions);
        lock(&self.core).registration_refused(id);
        functions.remove(&id);
    }

    /// Deregister `id`: the request that tells the server.
    pub(crate) fn deregister(&self, id: HandlerId) -> Result<Request, Status> {
        let mut functions = lock_functions(&self.functions);
        let request = lock(&self.core).deregister_events(id)?;
        functions.remove(&id);
        Ok(request)
    }

    /// Drop every handler, the pulls' too (at finalize, which also ends any cycle through a
    /// handler that holds the client).
    pub(crate) fn clear(&self) {
        // Taken out under the locks, dropped after them: a handler's drop may reach back here.
        let functions = {
            let mut functions = lock_functions(&self.functions);
            lock(&self.core).clear_handlers();
            std::mem::take(&mut *functions)
        };
        let pulls = std::mem::take(&mut lock_pulls(&self.pulls).by_id);
        drop((functions, pulls));
    }
}

/// Output forwarded to a pull.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct IofOutput {
    /// The id [`super::Client::iof_pull`] returned.
    pub handler: u64,
    /// The process that wrote it.
    pub source: Proc,
    /// The one channel it was written on.
    pub channel: IofChannel,
    /// What came with it (`PMIX_IOF_COMPLETE` at its end, …).
    pub info: Vec<Info>,
    pub data: Vec<u8>,
}

/// A pull's handler (`pmix_iof_cbfunc_t`): called on the client's runtime, one at a time
/// with the event handlers, in the order the output arrived; it must not block.
pub type IofHandler = Arc<dyn Fn(IofOutput) + Send + Sync>;

/// The process's pulls of output (`iof.rs`): each one's handler and the server's id for it.
#[derive(Default)]
pub(crate) struct Pulls {
    next: u64,
    pub(super) by_id: BTreeMap<u64, (IofHandler, Option<u64>)>,
}

impl Pulls {
    /// Number the pulls to come from past `base` (a tool's connections each have their own).
    pub(super) fn start_after(&mut self, base: u64) {
        self.next = self.next.max(base);
    }

    pub(super) fn add(&mut self, handler: IofHandler) -> u64 {
        // Id 0 is OpenPMIx's default handler's: pulls start at 1.
        self.next += 1;
        self.by_id.insert(self.next, (handler, None));
        self.next
    }
}

pub(super) fn lock_pulls(pulls: &Mutex<Pulls>) -> MutexGuard<'_, Pulls> {
    pulls.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Hand `output` to the pull it names. None does: the pull ended while the output was on
/// its way, and the output is dropped (OpenPMIx's library writes it to its own stdout or
/// stderr, which, in a tool that runs under the launcher it pulls from, comes back to it as
/// output again).
fn hand_over(pulls: &Mutex<Pulls>, output: IofDelivery) {
    let handler = lock_pulls(pulls)
        .by_id
        .get(&output.remote_id)
        .map(|(h, _)| h.clone());
    let Some(handler) = handler else {
        tracing::debug!("output for pull {} which has ended", output.remote_id);
        return;
    };
    let out = IofOutput {
        handler: output.remote_id,
        source: output.source,
        channel: output.channel,
        info: output.info,
        data: output.data.0,
    };
    // A handler that panics has seen its output; later output still flows.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(out)));
}

async fn deliver_all(
    core: Arc<Mutex<ClientCore>>,
    functions: Arc<Mutex<Functions>>,
    pulls: Arc<Mutex<Pulls>>,
    walked: Arc<Mutex<Walked>>,
    mut rx: mpsc::UnboundedReceiver<Pushed>,
) {
    // Handlers are called one at a time, each event's chain in its own task: a handler that
    // has not yet completed holds up its event's chain only, never the events after it.
    // Forwarded output is handed over here, in the order it came.
    let calling = Arc::new(Mutex::new(()));
    while let Some(pushed) = rx.recv().await {
        let mut waiter = None;
        let chain = match pushed {
            Pushed::Event(event) => lock(&core).event_chain(event),
            Pushed::Own(event, handlers, ticket) => {
                waiter = ticket.and_then(|t| lock_walked(&walked).waiting.remove(&t));
                Chain::new(event, handlers)
            }
            Pushed::Output(output) => {
                let _one_at_a_time = calling.lock().unwrap_or_else(PoisonError::into_inner);
                hand_over(&pulls, output);
                continue;
            }
        };
        let (core, functions, calling) = (core.clone(), functions.clone(), calling.clone());
        tokio::spawn(walk(chain, core, functions, calling, waiter));
    }
}

/// Call the handlers of one event's chain, each after the one before it completed; tell
/// `waiter` when the chain is walked as far as it goes at once (`Events::deliver_own`).
async fn walk(
    mut chain: Chain,
    core: Arc<Mutex<ClientCore>>,
    functions: Arc<Mutex<Functions>>,
    calling: Arc<Mutex<()>>,
    mut waiter: Option<oneshot::Sender<()>>,
) {
    while let Some(id) = chain.next_handler() {
        // A handler deregistered while the chain ran is not called (§10.1.7).
        let Some(name) = lock(&core).handler_name(id).map(|n| n.map(str::to_owned)) else {
            continue;
        };
        let Some(handler) = lock_functions(&functions).get(&id).cloned() else {
            continue;
        };
        let notice = EventNotice {
            handler: id,
            name,
            status: chain.event.status,
            source: chain.event.source.clone(),
            info: chain.event.info.clone(),
            results: chain.results.clone(),
        };
        let (tx, mut done) = oneshot::channel();
        let (in_call, mut returned) = oneshot::channel();
        let completion = EventCompletion {
            done: Some(tx),
            returned: Some(in_call),
        };
        {
            let _one_at_a_time = calling.lock().unwrap_or_else(PoisonError::into_inner);
            // A handler that panics has ended its turn; the chain and later events go on.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                handler(notice, completion)
            }));
        }
        // Its completion if it came within the handler's call (which ends when the handler
        // returns, or drops the guard of `in_call`); a dropped completion lets the chain go
        // on with nothing to add.
        let within_call = tokio::select! {
            biased;
            turn = &mut done => Some(turn.unwrap_or((Status::SUCCESS, Vec::new()))),
            _ = &mut returned => match done.try_recv() {
                Ok(turn) => Some(turn),
                Err(oneshot::error::TryRecvError::Closed) => Some((Status::SUCCESS, Vec::new())),
                Err(oneshot::error::TryRecvError::Empty) => None,
            },
        };
        let (status, results) = match within_call {
            Some(turn) => turn,
            None => {
                // The handler completes later: the walk goes no further at once.
                if let Some(w) = waiter.take() {
                    let _ = w.send(());
                }
                done.await.unwrap_or((Status::SUCCESS, Vec::new()))
            }
        };
        chain.handler_done(status, results);
    }
    if let Some(w) = waiter.take() {
        let _ = w.send(());
    }
}
