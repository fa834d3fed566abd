//! A host's published data shared by its upcalls (`publish`, `lookup`, `unpublish`): the
//! sans-IO store of [`crate::store::published`] and the wake-up of lookups waiting for data
//! with `PMIX_WAIT`, bounded by their `PMIX_TIMEOUT`.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

use crate::model::{Info, Nspace, PData, Proc, Status, attr};
use crate::store::published::{Published, Topology};

/// Published data and the lookups waiting for it.
#[derive(Debug, Default)]
pub struct PublishBoard {
    store: Mutex<Published>,
    changed: Notify,
}

impl PublishBoard {
    fn store(&self) -> MutexGuard<'_, Published> {
        // A poisoned lock only means another task panicked while holding plain data.
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `publish` by `proc` (see [`Published::publish`]); waiting lookups look again.
    pub fn publish(&self, proc: &Proc, info: &[Info]) -> Result<(), Status> {
        self.store().publish(proc, info)?;
        self.changed.notify_waiters();
        Ok(())
    }

    /// `lookup` by `proc` (see [`Published::try_lookup`]): with `PMIX_WAIT`, until every key
    /// is published or `PMIX_TIMEOUT` (seconds) passes, which is `PMIX_ERR_TIMEOUT`.
    pub async fn lookup(
        &self,
        proc: &Proc,
        keys: &[String],
        info: &[Info],
        topology: &impl Topology,
    ) -> Result<Vec<PData>, Status> {
        let timeout = info
            .iter()
            .find(|i| i.key.as_str() == attr::TIMEOUT.wire_key())
            .and_then(|i| i.value.to_u64())
            .filter(|t| *t > 0)
            .map(Duration::from_secs);
        let search = async {
            loop {
                let notified = self.changed.notified();
                let answer = self.store().try_lookup(proc, keys, info, topology);
                if let Some(answer) = answer {
                    return answer;
                }
                notified.await;
            }
        };
        match timeout {
            Some(t) => tokio::time::timeout(t, search)
                .await
                .unwrap_or(Err(Status::ERR_TIMEOUT)),
            None => search.await,
        }
    }

    /// `unpublish` (see [`Published::unpublish`]).
    pub fn unpublish(&self, proc: &Proc, keys: &[String], info: &[Info]) {
        self.store().unpublish(proc, keys, info);
    }

    /// See [`Published::process_ended`].
    pub fn process_ended(&self, proc: &Proc) {
        self.store().process_ended(proc);
    }

    /// See [`Published::job_ended`].
    pub fn job_ended(&self, nspace: &Nspace) {
        self.store().job_ended(nspace);
    }
}
