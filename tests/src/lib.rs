//! Shared helpers for the workspace's integration tests (`tests/tests/*.rs`).

use std::path::PathBuf;

/// The workspace root, for tests that read committed data.
pub fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(PathBuf::from).unwrap_or(here)
}

/// `PMIx_Init` for a check program run by a launcher, printing the check's `FAIL init` line
/// when it fails.
pub fn init_client() -> Option<pmix::client::blocking::Client> {
    match pmix::client::blocking::Client::init() {
        Ok(c) => Some(c),
        Err(e) => {
            println!("FAIL init: {e}");
            None
        }
    }
}

/// The `PMIX_JOB_SIZE` of the caller's job, or 0 when it cannot be read.
pub fn job_size(client: &pmix::client::blocking::Client) -> u64 {
    let job = pmix::model::Proc::new(client.proc().nspace.clone(), pmix::model::Rank::WILDCARD);
    client
        .get(Some(&job), pmix::model::attr::JOB_SIZE.wire_key(), &[])
        .ok()
        .and_then(|v| v.to_u64())
        .unwrap_or(0)
}

pub mod capi;
pub mod launch;
pub mod openpmix;
pub mod slurm;
