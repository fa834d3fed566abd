//! The process's state, owned here and nowhere else: the client, the tool and the server of
//! the process (one of each at most, as in C), the client's threads that run the
//! non-blocking calls and the callbacks, and a host's event handlers. The chapters' entry
//! points reach it through these modules' functions; each static is behind a lock that a
//! panic elsewhere cannot leave torn.

pub(crate) mod client;
pub(crate) mod host_events;
pub(crate) mod server;
pub(crate) mod threads;
pub(crate) mod tool;
