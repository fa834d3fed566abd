//! What one peer may hold of the server's memory, and what all of them may hold together.
//!
//! A peer is trusted with its own job's data, not with the server's memory: a client that
//! pipelines requests and never reads the replies, a frame that trickles in a byte at a time,
//! or many connections each holding half a frame must not grow the server without bound.
//! The driver enforces these limits; each is named here with the reason for its size, and
//! every limit hit is logged, at most once per [`LOG_EVERY`] for each kind, with how many
//! were not logged since.
//!
//! | What | Per connection | In total |
//! |---|---|---|
//! | Replies and pushes queued for a peer that does not read | stop reading it past [`Limits::pause_at`]; close it past [`Limits::backlog`] | [`Limits::total_backlog`]: past it, a non-reading peer that is sent more is closed |
//! | A frame's payload | [`Limits::max_frame`] | [`Limits::total_partial`] of partial frames: past it, the connection that adds to it is closed |
//! | A frame's arrival | within [`Limits::frame_grace`] plus its length at [`Limits::min_rate`] | — |
//! | Gets waiting for data not yet there | [`Limits::held_gets`], then `PMIX_ERR_OUT_OF_RESOURCE` | — |

use std::time::Duration;

use crate::wire::frame::DEFAULT_MAX_FRAME;

/// How often a limit hit of one kind is logged at most; the others are counted and told in
/// the next line of that kind.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// The server's resource limits ([`crate::server::ServerConfig::limits`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// A connection whose queued output and requests not yet handled pass this many bytes
    /// (a request counted at what it costs in memory, struct and allocation with its bytes)
    /// is no longer read until it holds a quarter of it: a peer that does not read its
    /// replies stops being served. 1 MiB: a client that reads keeps its queue near empty,
    /// and this is what the server holds per non-reading peer.
    pub pause_at: usize,
    /// A connection whose queued output already passes this many bytes when the server has
    /// more to send it (events, output it forwards, which do not wait for the peer's
    /// requests) is closed. One message is always sent whatever its size. 64 MiB.
    pub backlog: usize,
    /// Output queued for all connections together; past it, a connection past
    /// [`Limits::pause_at`] that is sent more is closed, while those that read are served.
    /// 512 MiB.
    pub total_backlog: usize,
    /// The largest frame payload a peer may send (the connection is closed otherwise).
    /// 256 MiB, [`DEFAULT_MAX_FRAME`].
    pub max_frame: usize,
    /// Bytes of frames not yet whole, over all connections; the connection whose bytes pass
    /// it is closed. 1 GiB.
    pub total_partial: usize,
    /// The time a frame may take to arrive whatever its length, from the read that started
    /// it. 30 s.
    pub frame_grace: Duration,
    /// The slowest a frame's bytes may arrive past [`Limits::frame_grace`], in bytes per
    /// second: a 128 MiB frame has 30 s + 128 s. 1 MiB/s.
    pub min_rate: usize,
    /// The gets one connection may have waiting for data not yet there; one more is
    /// answered `PMIX_ERR_OUT_OF_RESOURCE`. 4096: an MPI rank waits for a few keys at a
    /// time, a tool for one per process it watches.
    pub held_gets: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            pause_at: 1 << 20,
            backlog: 64 << 20,
            total_backlog: 512 << 20,
            max_frame: DEFAULT_MAX_FRAME,
            total_partial: 1 << 30,
            frame_grace: Duration::from_secs(30),
            min_rate: 1 << 20,
            held_gets: super::core::HELD_GETS,
        }
    }
}

impl Limits {
    /// How long a frame of `len` payload bytes may take to arrive.
    pub fn frame_time(&self, len: usize) -> Duration {
        let secs = len / self.min_rate.max(1);
        self.frame_grace + Duration::from_secs(secs as u64)
    }
}

/// What a server's connections hold now, in bytes ([`crate::server::Server::held`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Held {
    /// Output queued for peers and not yet written to them.
    pub queued: usize,
    /// Frames received and not yet handled.
    pub inbound: usize,
    /// Frames still arriving.
    pub partial: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_may_take_the_grace_and_its_length_at_the_slowest_rate() {
        let limits = Limits::default();
        assert_eq!(limits.frame_time(0), Duration::from_secs(30));
        assert_eq!(limits.frame_time(128 << 20), Duration::from_secs(30 + 128));
    }
}
