//! The conformance runner (DESIGN §5): the standard's behaviour, as data, run against an
//! implementation.
//!
//! - [`inventory`] loads the standard's inventory from `spec-vectors/inventory/` (every API,
//!   attribute, constant, struct and retrieval rule, for v5.0 and the 5.1 draft);
//! - [`vector`] is the vector format (TOML, `spec-vectors/vectors/`) and its loader;
//! - [`cluster`] is the resource manager between a job's nodes, shared by every target, and
//!   [`upcall_log`] what it was handed (the upcalls a step expects);
//! - [`rust_target`] runs a vector in-process on this project's crate: one server per node,
//!   a host between them, a client per rank;
//! - [`libpmix_target`] runs it on any `libpmix.so`: a server process per node and a client
//!   process per rank ([`libpmix_child`]), each loading the library through [`ffi`] and
//!   speaking the line protocol of [`pipes`]; and the pairings, with this crate's servers or
//!   clients on one side;
//! - [`prepare`] resolves a rank's step for every target; [`api`], [`server_api`] and
//!   [`tool_api`] resolve the calls of a rank, a node's server and the vector's tool, and run
//!   them on this crate;
//!   [`runner`] picks the target and adds the timeout;
//! - [`outcome`] judges each step against the standard's expectation;
//! - [`report`] and [`coverage`] write the matrix, diffs, JUnit, JSON and the coverage table.
//!
//! ```text
//!   vectors/*.toml ──load──▶ Vector ──runner──▶ target (rust | libpmix) ──steps──▶ judge ──▶ Outcome
//!                                                                           │
//!                               inventory ──▶ coverage ◀── report ◀──────────┘
//! ```

pub mod ablation;
pub mod api;
pub mod cluster;
pub mod coverage;
pub mod ffi;
pub mod fuzzing;
pub mod inventory;
pub mod libpmix_child;
pub mod libpmix_target;
pub mod mutation;
pub mod outcome;
pub mod pipes;
pub mod prepare;
pub mod report;
pub mod runner;
pub mod rust_target;
pub mod server_api;
pub mod step;
pub mod tool_api;
pub mod upcall_log;
pub mod vector;
