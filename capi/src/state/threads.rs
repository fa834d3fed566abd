//! The client's threads, on which the library runs the non-blocking calls and calls the
//! caller back: the work running there is counted, so that `PMIx_Finalize` waits for it to
//! end before it drops the client (and its runtime), and a callback knows it runs there.

use std::cell::Cell;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use pmix::client::blocking::Client;
use pmix::model::Status;

use super::client::client;

/// The work running on the client's threads: `PMIx_Finalize` waits for it to end before it
/// drops the client (and its runtime), so that no callback runs after it returns.
static IN_FLIGHT: Mutex<usize> = Mutex::new(0);
static IDLE: Condvar = Condvar::new();

thread_local! {
    /// Whether this thread runs work of [`run_counted`] (a callback may finalize).
    static ON_CLIENT_THREAD: Cell<bool> = const { Cell::new(false) };
}

fn in_flight() -> MutexGuard<'static, usize> {
    // A counter changed in one step: a panic elsewhere cannot tear it.
    IN_FLIGHT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Counts one piece of work out when it ends, even by a panic.
struct Counted;

impl Drop for Counted {
    fn drop(&mut self) {
        let mut n = in_flight();
        *n = n.saturating_sub(1);
        if *n == 0 {
            IDLE.notify_all();
        }
    }
}

/// Run `work` on one of `client`'s threads, counted.
pub(crate) fn run_counted(client: &Client, work: impl FnOnce() + Send + 'static) {
    *in_flight() += 1;
    client.run_detached(move || {
        ON_CLIENT_THREAD.set(true);
        let _counted = Counted;
        work();
    });
}

/// Whether the calling thread is one of the client's (running a callback).
pub(crate) fn on_client_thread() -> bool {
    ON_CLIENT_THREAD.get()
}

/// Wait until no counted work runs.
pub(crate) fn wait_idle() {
    let mut n = in_flight();
    while *n > 0 {
        n = IDLE.wait(n).unwrap_or_else(PoisonError::into_inner);
    }
}

/// Run `work` with the client on one of its threads; `PMIX_ERR_INIT` before `PMIx_Init`.
pub(crate) fn detached(work: impl FnOnce(&Client) + Send + 'static) -> Result<(), Status> {
    detached_on(client()?, work);
    Ok(())
}

/// [`detached`] with the client the caller already holds.
pub(crate) fn detached_on(client: Arc<Client>, work: impl FnOnce(&Client) + Send + 'static) {
    let held = client.clone();
    run_counted(&client, move || {
        work(&held);
        // Before the work counts out: the last reference is `PMIx_Finalize`'s to drop.
        drop(held);
    });
}
