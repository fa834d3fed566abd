//! The process's tool: one per process, as in C, between `PMIx_tool_init` and
//! `PMIx_tool_finalize`; the client calls go to its primary server.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pmix::client::blocking::Client;
use pmix::client::tool::Tool;
use pmix::model::Status;

static TOOL: Mutex<Option<Tool>> = Mutex::new(None);

pub(crate) fn tool() -> MutexGuard<'static, Option<Tool>> {
    // Replaced whole under the lock: a panic elsewhere cannot tear it.
    TOOL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The client of the tool's primary server: `PMIX_ERR_INIT` when the process is no tool,
/// `PMIX_ERR_UNREACH` when the tool has no primary server (v5.0 §18.5.3: after it
/// disconnected from it, until it attaches again or names another).
pub(crate) fn primary() -> Result<Arc<Client>, Status> {
    primary_of(&tool())
}

/// Run `f` with the primary server's client under the tool's lock (as
/// `crate::client::with_client` does for a client).
pub(crate) fn with_primary<T>(f: impl FnOnce(&Client) -> T) -> Result<T, Status> {
    let state = tool();
    let client = primary_of(&state)?;
    Ok(f(&client))
}

fn primary_of(state: &Option<Tool>) -> Result<Arc<Client>, Status> {
    let tool = state.as_ref().ok_or(Status::ERR_INIT)?;
    tool.primary().ok_or(Status::ERR_UNREACH)
}

/// Whether `PMIx_tool_init` ran and `PMIx_tool_finalize` did not.
pub(crate) fn initialized() -> bool {
    tool().is_some()
}
