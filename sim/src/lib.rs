//! Deterministic simulation of PMIx clusters (DESIGN §4).
//!
//! The simulator runs the real `pmix` server and client code under `turmoil`, with many
//! virtual nodes per turmoil host, injected faults and invariants checked on every run. It
//! lands with issue 6; until then this crate only pins the shape of the workspace and holds
//! the determinism rules that every sim-reachable module must follow:
//!
//! - no iteration over `HashMap`/`HashSet` with random state (`clippy.toml` bans them);
//! - no `std::time`: time arrives as a `now` argument;
//! - no threads, randomness only from a seeded generator handed in;
//! - `select!` with `biased;`.

/// The `pmix` version this simulator drives.
pub fn pmix_version() -> &'static str {
    pmix::model::strings::data_type_string(pmix::model::DataType::UINT32);
    env!("CARGO_PKG_VERSION")
}
