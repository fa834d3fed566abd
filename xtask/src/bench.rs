//! `cargo xtask bench`: placeholder replaced below.
use std::path::Path;
pub(crate) fn run(_root: &Path, _args: &[String]) -> Result<(), String> {
    Err("bench: not yet written".into())
}
