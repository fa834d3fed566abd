//! The process's client: one per process, as in C, counted by its `PMIx_Init` calls; in a
//! tool, the calls of a client go to the tool's primary server.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pmix::client::blocking::Client;
use pmix::model::Status;

/// The process's client and how many `PMIx_Init` calls it answers.
pub(crate) struct Connected {
    pub(crate) client: Arc<Client>,
    pub(crate) inits: usize,
}

static CLIENT: Mutex<Option<Connected>> = Mutex::new(None);

pub(crate) fn connected() -> MutexGuard<'static, Option<Connected>> {
    // The state is replaced whole under the lock; a panic elsewhere cannot tear it.
    CLIENT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The client, or `PMIX_ERR_INIT` before `PMIx_Init` (and after the last `PMIx_Finalize`);
/// in a tool, the client of its primary server.
pub(crate) fn client() -> Result<Arc<Client>, Status> {
    match connected().as_ref() {
        Some(c) => Ok(c.client.clone()),
        // A tool's calls go to its primary server.
        None => super::tool::primary(),
    }
}

/// Run `f` with the client under the process-wide lock, which `PMIx_Finalize` takes to
/// remove it: for work that must not hold a reference of its own (`f` must not block).
pub(crate) fn with_client<T>(f: impl FnOnce(&Client) -> T) -> Result<T, Status> {
    match connected().as_ref() {
        Some(c) => Ok(f(&c.client)),
        None => super::tool::with_primary(f),
    }
}
