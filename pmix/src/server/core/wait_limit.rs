//! How many requests one connection may leave waiting in the server ([`WaitLimit`]): a limit
//! of this implementation's (`Limits::held_gets`), not a behaviour of the standard's.

use super::ConnId;

/// The gets one connection may have waiting unless the host says otherwise
/// (`Limits::held_gets`).
pub(crate) const HELD_GETS: usize = 4096;

/// The most requests of one kind a connection may have waiting; one more is refused (the
/// caller answers `PMIX_ERR_OUT_OF_RESOURCE`), and refusals are logged when their count
/// reaches a power of two, so that a peer that keeps asking fills no log.
#[derive(Debug)]
pub(super) struct WaitLimit {
    limit: usize,
    refused: u64,
}

impl WaitLimit {
    pub(super) fn new(limit: usize) -> Self {
        WaitLimit { limit, refused: 0 }
    }

    /// Whether a new request of `conn` must be refused, given the connections of those now
    /// waiting.
    pub(super) fn refuses(&mut self, conn: ConnId, waiting: impl Iterator<Item = ConnId>) -> bool {
        let mine = waiting.filter(|c| *c == conn).count();
        if mine < self.limit {
            return false;
        }
        self.refused += 1;
        if self.refused.is_power_of_two() {
            tracing::warn!(
                "refused a request of connection {conn}, which has {mine} waiting, the limit \
                 ({} refused so far)",
                self.refused
            );
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_is_refused_past_its_own_waiting_requests_only() {
        let mut limit = WaitLimit::new(2);
        assert!(!limit.refuses(1, [1, 2, 2].into_iter()));
        assert!(limit.refuses(1, [1, 2, 1].into_iter()));
        assert!(limit.refuses(2, [2, 2].into_iter()));
        assert!(!limit.refuses(3, [1, 1, 2, 2].into_iter()));
        assert_eq!(limit.refused, 2);
    }
}
