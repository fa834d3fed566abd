//! The driver's accounting of [`Limits`]: what each connection and all of them hold, and
//! the throttled log of limits hit.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;
use tokio::time::Instant;

use super::limits::{Held, LOG_EVERY, Limits};
use crate::wire::frame::Frame;

/// What all of one server's connections hold, and its throttled log.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    pub(crate) limits: Limits,
    queued: AtomicUsize,
    inbound: AtomicUsize,
    partial: AtomicUsize,
    log: Mutex<Throttled>,
}

impl Budget {
    pub(crate) fn new(limits: Limits) -> Budget {
        Budget {
            limits,
            ..Budget::default()
        }
    }

    /// Bytes queued for all connections.
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// Bytes of partial frames over all connections.
    pub(crate) fn partial(&self) -> usize {
        self.partial.load(Ordering::Relaxed)
    }

    /// What the connections hold now.
    pub(crate) fn held(&self) -> Held {
        Held {
            queued: self.queued(),
            inbound: self.inbound.load(Ordering::Relaxed),
            partial: self.partial(),
        }
    }

    /// Account a connection's partial bytes going from `was` to `now`; whether the total
    /// is still within its limit.
    pub(crate) fn hold_partial(&self, was: usize, now: usize) -> bool {
        let total = if now >= was {
            self.partial.fetch_add(now - was, Ordering::Relaxed) + (now - was)
        } else {
            self.partial.fetch_sub(was - now, Ordering::Relaxed) - (was - now)
        };
        total <= self.limits.total_partial
    }

    /// Log a limit hit of `kind`, or count it when one of its kind was logged less than
    /// [`LOG_EVERY`] ago.
    pub(crate) fn limit_hit(&self, kind: LimitKind, what: &str) {
        let Ok(mut log) = self.log.lock() else {
            return;
        };
        let now = Instant::now();
        let slot = &mut log.kinds[kind as usize];
        match slot.last {
            Some(last) if now.duration_since(last) < LOG_EVERY => slot.unlogged += 1,
            _ => {
                let more = std::mem::take(&mut slot.unlogged);
                slot.last = Some(now);
                if more > 0 {
                    tracing::warn!("{what} ({more} more since the last such line)");
                } else {
                    tracing::warn!("{what}");
                }
            }
        }
    }
}

/// The kinds of limit hit, each logged on its own schedule.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LimitKind {
    Paused,
    Backlog,
    SlowFrame,
    Partial,
}

#[derive(Debug, Default)]
struct Throttled {
    kinds: [KindLog; 4],
}

#[derive(Debug, Default)]
struct KindLog {
    last: Option<Instant>,
    unlogged: u64,
}

/// What one connection holds of the server: its output its writer has yet to write, the
/// frames it sent that the driver has yet to handle (kept here, so that the driver takes
/// one frame of each connection in turn: a flood on one delays the others by a frame, not
/// by the flood), and the wakeup of a reader paused for them.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    bytes: AtomicUsize,
    inbound: AtomicUsize,
    frames: Mutex<Inbound>,
    drained: Notify,
}

/// A connection's frames not yet handled, and whether the driver has it on its list of
/// connections with frames to take.
#[derive(Debug, Default)]
struct Inbound {
    frames: VecDeque<Frame>,
    listed: bool,
}

/// What a frame kept for the driver costs in memory: its struct, its payload's allocation
/// and the allocator's bookkeeping of it (a flood of small frames costs several times their
/// bytes, and is paused by what it costs).
pub(crate) fn frame_cost(frame: &Frame) -> usize {
    const ALLOCATION: usize = 16;
    std::mem::size_of::<Frame>() + frame.payload.capacity() + ALLOCATION
}

impl Queue {
    fn inbound(&self) -> MutexGuard<'_, Inbound> {
        // A poisoned lock only means another task panicked while holding plain data.
        self.frames.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A frame the reader took from the peer, kept for the driver; `true` when the driver
    /// must be told that this connection has frames (it was not on its list).
    pub(crate) fn offer(&self, budget: &Budget, frame: Frame) -> bool {
        let mut inbound = self.inbound();
        self.received(budget, frame_cost(&frame));
        inbound.frames.push_back(frame);
        !std::mem::replace(&mut inbound.listed, true)
    }

    /// The next frame for the driver, and whether more wait behind it; with none behind it,
    /// the connection leaves the driver's list until the reader offers another.
    pub(crate) fn take(&self) -> Option<(Frame, bool)> {
        let mut inbound = self.inbound();
        let frame = inbound.frames.pop_front();
        let more = !inbound.frames.is_empty();
        inbound.listed = more;
        frame.map(|f| (f, more))
    }

    /// Bytes queued and not yet written.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Bytes of output and of frames not yet handled: what pauses the reader.
    pub(crate) fn held(&self) -> usize {
        self.bytes() + self.inbound.load(Ordering::Relaxed)
    }

    /// A frame costing `n` bytes ([`frame_cost`]) kept for the driver.
    pub(crate) fn received(&self, budget: &Budget, n: usize) {
        budget.inbound.fetch_add(n, Ordering::Relaxed);
        self.inbound.fetch_add(n, Ordering::Relaxed);
    }

    /// A frame costing `n` bytes handled by the driver.
    pub(crate) fn handled(&self, budget: &Budget, n: usize) {
        budget.inbound.fetch_sub(n, Ordering::Relaxed);
        self.inbound.fetch_sub(n, Ordering::Relaxed);
        self.wake_if_drained(budget);
    }

    /// `n` bytes queued; the backlog before them.
    pub(crate) fn push(&self, budget: &Budget, n: usize) -> usize {
        budget.queued.fetch_add(n, Ordering::Relaxed);
        self.bytes.fetch_add(n, Ordering::Relaxed)
    }

    /// `n` bytes written (or dropped with the connection); wakes a paused reader once the
    /// connection holds a quarter of the pause mark or less.
    pub(crate) fn pop(&self, budget: &Budget, n: usize) {
        budget.queued.fetch_sub(n, Ordering::Relaxed);
        self.bytes.fetch_sub(n, Ordering::Relaxed);
        self.wake_if_drained(budget);
    }

    fn wake_if_drained(&self, budget: &Budget) {
        if self.held() <= budget.limits.pause_at / 4 {
            self.drained.notify_one();
        }
    }

    /// Wait until what the connection holds is down to a quarter of the pause mark.
    pub(crate) async fn drained(&self, budget: &Budget) {
        while self.held() > budget.limits.pause_at / 4 {
            self.drained.notified().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_bytes_are_counted_over_connections_and_given_back() {
        let budget = Budget::new(Limits {
            total_partial: 100,
            ..Limits::default()
        });
        assert!(budget.hold_partial(0, 60));
        assert!(!budget.hold_partial(0, 60));
        assert_eq!(budget.partial(), 120);
        assert!(budget.hold_partial(60, 0));
        assert_eq!(budget.partial(), 60);
    }

    #[test]
    fn a_connection_is_listed_once_while_it_holds_frames() {
        let budget = Budget::default();
        let q = Queue::default();
        let frame = |tag| Frame {
            pindex: 0,
            tag: crate::wire::Tag(tag),
            payload: vec![0; 4],
        };
        assert!(q.offer(&budget, frame(101)), "the first frame lists it");
        assert!(!q.offer(&budget, frame(102)), "already listed");
        assert_eq!(q.held(), 2 * frame_cost(&frame(0)));
        let (first, more) = q.take().unwrap();
        assert_eq!((first.tag.0, more), (101, true));
        let (second, more) = q.take().unwrap();
        assert_eq!((second.tag.0, more), (102, false));
        assert!(q.take().is_none());
        assert!(q.offer(&budget, frame(103)), "empty, it is listed again");
    }

    #[test]
    fn queued_bytes_are_counted_per_connection_and_in_total() {
        let budget = Budget::default();
        let (a, b) = (Queue::default(), Queue::default());
        assert_eq!(a.push(&budget, 10), 0);
        assert_eq!(a.push(&budget, 5), 10);
        b.push(&budget, 7);
        assert_eq!((a.bytes(), b.bytes(), budget.queued()), (15, 7, 22));
        a.pop(&budget, 15);
        assert_eq!((a.bytes(), budget.queued()), (0, 7));
    }
}
