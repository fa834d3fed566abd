//! Shared helpers for the workspace's integration tests (`tests/tests/*.rs`).

use std::path::PathBuf;

/// The workspace root, for tests that read committed data.
pub fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(PathBuf::from).unwrap_or(here)
}
