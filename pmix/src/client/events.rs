//! The client's event handlers: the registry of [`crate::events`] driven on the client's
//! runtime.
//!
//! Events reach one task per client, in the order they arrive: notifications the server
//! pushes (tag 0), the process's own notifications, and `PMIX_ERR_LOST_CONNECTION` when the
//! server goes away. For each event the task builds the chain and calls its handlers one at a
//! time; a handler ends its turn by calling [`EventCompletion::complete`] (or by dropping
//! it, which lets the chain go on with no results), so a handler may finish its work on
//! another task before the next handler runs (§10.1.2's completion callback).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{mpsc, oneshot};

use crate::events::{Chain, Event, HandlerId, Registration, Registry};
use crate::model::{Info, Proc, Status};

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
pub struct EventCompletion(Option<oneshot::Sender<(Status, Vec<Info>)>>);

impl EventCompletion {
    /// Hand the chain on: `status` (`PMIX_EVENT_ACTION_COMPLETE` ends it) and results for the
    /// handlers after this one.
    pub fn complete(mut self, status: Status, results: Vec<Info>) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send((status, results));
        }
    }
}

/// An event handler: called on the client's runtime, it must not block.
pub type EventHandler = Arc<dyn Fn(EventNotice, EventCompletion) + Send + Sync>;

/// The handlers of one client and the queue of events waiting for them.
#[derive(Clone)]
pub(crate) struct Events {
    shared: Arc<Mutex<Handlers>>,
    queue: mpsc::UnboundedSender<Event>,
}

#[derive(Default)]
struct Handlers {
    registry: Registry,
    functions: BTreeMap<HandlerId, EventHandler>,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events").finish_non_exhaustive()
    }
}

impl Events {
    /// Start the delivery task for process `me`; events go in through [`Events::deliver`] or
    /// the returned sender.
    pub(crate) fn start(me: Proc) -> Events {
        let (queue, rx) = mpsc::unbounded_channel();
        let shared: Arc<Mutex<Handlers>> = Arc::default();
        tokio::spawn(deliver_all(me, shared.clone(), rx));
        Events { shared, queue }
    }

    fn handlers(&self) -> MutexGuard<'_, Handlers> {
        // Plain data, each change made in one step: a panic elsewhere leaves it whole.
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A sender for events arriving from elsewhere (the connection's reader).
    pub(crate) fn sender(&self) -> mpsc::UnboundedSender<Event> {
        self.queue.clone()
    }

    pub(crate) fn deliver(&self, event: Event) {
        let _ = self.queue.send(event);
    }

    pub(crate) fn register(
        &self,
        reg: Registration,
        handler: EventHandler,
    ) -> Result<HandlerId, Status> {
        let mut h = self.handlers();
        let id = h.registry.register(reg)?;
        h.functions.insert(id, handler);
        Ok(id)
    }

    pub(crate) fn deregister(&self, id: HandlerId) -> Result<Registration, Status> {
        let mut h = self.handlers();
        let reg = h.registry.deregister(id)?;
        h.functions.remove(&id);
        Ok(reg)
    }

    /// Drop every handler (at finalize, which also ends any cycle through a handler that
    /// holds the client).
    pub(crate) fn clear(&self) {
        *self.handlers() = Handlers::default();
    }
}

async fn deliver_all(
    me: Proc,
    shared: Arc<Mutex<Handlers>>,
    mut rx: mpsc::UnboundedReceiver<Event>,
) {
    let lock = || shared.lock().unwrap_or_else(PoisonError::into_inner);
    while let Some(event) = rx.recv().await {
        let ids = lock().registry.chain(&me, &event);
        let mut chain = Chain::new(event, ids);
        while let Some(id) = chain.next_handler() {
            // A handler deregistered while the chain ran is not called (§10.1.7).
            let found = {
                let h = lock();
                h.functions
                    .get(&id)
                    .cloned()
                    .map(|f| (f, h.registry.get(id).and_then(|r| r.name.clone())))
            };
            let Some((handler, name)) = found else {
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
            let (tx, done) = oneshot::channel();
            let completion = EventCompletion(Some(tx));
            // A handler that panics has ended its turn; the chain and later events go on.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                handler(notice, completion)
            }));
            // A dropped completion lets the chain go on with nothing to add.
            let (status, results) = done.await.unwrap_or((Status::SUCCESS, Vec::new()));
            chain.handler_done(status, results);
        }
    }
}
