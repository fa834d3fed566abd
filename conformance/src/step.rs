//! What a step yields, whichever target runs it: each caller's observations, the problems
//! that stop a vector, and the sides a target is made of. The targets (`rust_target.rs`,
//! `libpmix_target.rs`), the runner and the judge (`outcome.rs`) all speak these types, so
//! they live below all of them.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::api::ApiOutput;

/// What one caller got from one step: what the call returned, as every target reports it.
pub type Observed = ApiOutput;

/// A step's observations, one per caller, in caller order.
pub type StepResult = Vec<(u32, Observed)>;

/// Why a vector could not run its steps.
#[derive(Debug)]
pub enum Problem {
    /// The harness failed (a process did not start, a protocol error): the vector's outcome
    /// is an error, whatever the target.
    Harness(String),
    /// The target refused to set the job up as the vector registers it (its server's init or
    /// registration answered an error status): a departure of the target, judged as a
    /// failure of the setup, which an expected failure can name.
    Refused(String),
    /// A target process died during a step: a failure of that step.
    Crashed(String),
}

impl From<String> for Problem {
    fn from(message: String) -> Self {
        Problem::Harness(message)
    }
}

impl From<&str> for Problem {
    fn from(message: &str) -> Self {
        Problem::Harness(message.to_owned())
    }
}

/// One side of a process target: this crate or a `libpmix.so`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Side {
    /// This project's crate (servers in the harness, clients in child processes).
    Rust,
    /// A library through its C API, as given (a path or a name for the dynamic loader).
    Library(String),
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Side::Rust => f.write_str("this crate"),
            Side::Library(l) => f.write_str(l),
        }
    }
}

/// Lock a mutex of the harness, whose state stays whole if a holder panicked.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
