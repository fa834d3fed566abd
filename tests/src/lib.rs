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
