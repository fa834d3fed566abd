//! The conformance runner (DESIGN §5): the standard's behaviour, as data, run against an
//! implementation.
//!
//! This release holds the first half: [`inventory`] loads the standard's inventory from
//! `spec-vectors/inventory/` (every API, attribute, constant, struct and retrieval rule, for
//! v5.0 and the 5.1 draft) and [`coverage`] reports how much of it the behavioural vectors
//! cover. The vector format, the runner and its targets land with issue 4.

pub mod coverage;
pub mod inventory;
