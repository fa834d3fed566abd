//! The process's server, which `PMIx_server_init` starts on a runtime of its own, and who a
//! call that clients and hosts both make acts for.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pmix::model::{Key, Proc, Status, Value};
use pmix::server::Server;

/// The running server of this process.
pub(crate) struct Running {
    pub(crate) runtime: tokio::runtime::Runtime,
    pub(crate) server: Arc<Server>,
    pub(crate) objects: ServerObjects,
}

/// What the host gave `PMIx_server_register_client` for each client, handed back in the
/// upcalls about it.
pub(crate) type ServerObjects = Arc<Mutex<BTreeMap<Proc, usize>>>;

static SERVER: Mutex<Option<Running>> = Mutex::new(None);

pub(crate) fn running() -> MutexGuard<'static, Option<Running>> {
    // Replaced whole under the lock: a panic elsewhere cannot tear it.
    SERVER.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The server and a handle on its runtime, or `PMIX_ERR_INIT` before `PMIx_server_init`.
pub(crate) fn server() -> Result<(Arc<Server>, tokio::runtime::Handle, ServerObjects), Status> {
    let state = running();
    let r = state.as_ref().ok_or(Status::ERR_INIT)?;
    Ok((
        r.server.clone(),
        r.runtime.handle().clone(),
        r.objects.clone(),
    ))
}

/// Who a call that clients and hosts both make acts for.
pub(crate) enum Caller {
    /// This process's client (`PMIx_Init` ran).
    Client(Arc<pmix::client::blocking::Client>),
    /// A host: this process runs a server and no client. Its client calls (`PMIx_Get`,
    /// `PMIx_Store_internal`, the event calls) then reach its own server.
    Host,
}

/// The caller of such a call, taking the client's lock once (a cached `PMIx_Get` is on the
/// hot path); `PMIX_ERR_INIT` when the process has neither a client nor a server.
pub(crate) fn caller() -> Result<Caller, Status> {
    match super::client::client() {
        Ok(c) => Ok(Caller::Client(c)),
        Err(_) if running().is_some() => Ok(Caller::Host),
        Err(s) => Err(s),
    }
}

/// `PMIx_Get` in a host: what its server holds (`Server::get`); a NULL process is
/// `PMIX_ERR_BAD_PARAM`, as a host has no identity of its own here.
pub(crate) fn host_get(target: Option<Proc>, key: &str) -> Result<Value, Status> {
    let target = target.ok_or(Status::ERR_BAD_PARAM)?;
    let (server, handle, _) = server()?;
    handle
        .block_on(server.get(target, key))
        .map_err(|e| e.status())
}

/// `PMIx_Store_internal` in a host (`Server::store_internal`).
pub(crate) fn host_store(proc: Proc, key: &str, value: Value) -> Result<(), Status> {
    let key = Key::new(key).map_err(|e| e.status())?;
    let (server, handle, _) = server()?;
    handle
        .block_on(server.store_internal(proc, key, value))
        .map_err(|e| e.status())
}
