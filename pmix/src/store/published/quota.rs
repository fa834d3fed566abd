//! What published data may cost the host that keeps it ([`PublishLimits`]): a limit of this
//! implementation's, not a behaviour of the standard's. A process publishes a few port names
//! or addresses; one that publishes without end must not grow the host without bound.

use crate::model::{PData, Proc};

/// The bytes of published data one publisher and all of them together may hold; a publish
/// that would pass either is refused whole (`PMIX_ERR_OUT_OF_RESOURCE`) and nothing of it
/// is kept. An entry costs its struct, its key and its value as the wire carries it, and
/// the processes and ids of its range and permissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublishLimits {
    /// One process's data (any range, any persistence). 64 MiB: MPI publishes a port name
    /// of a few hundred bytes per service.
    pub per_publisher: usize,
    /// Every publisher's data together. 512 MiB, as the server's queued output.
    pub total: usize,
}

impl Default for PublishLimits {
    fn default() -> Self {
        PublishLimits {
            per_publisher: 64 << 20,
            total: 512 << 20,
        }
    }
}

/// What one published entry costs in memory (see [`PublishLimits`]): `data` published for
/// the processes `custom` and readable by `uids` and `gids`, in a struct of `overhead` bytes.
pub(super) fn cost(
    data: &PData,
    custom: &[Proc],
    uids: &[u32],
    gids: &[u32],
    overhead: usize,
) -> usize {
    let mut w = crate::codec::primitive::Writer::default();
    // A value that cannot be packed was not received from the wire either: its struct is
    // what it costs.
    let value = match crate::codec::types::encode_payload(&mut w, &data.value) {
        Ok(()) => w.into_bytes().len(),
        Err(_) => 0,
    };
    let proc = |p: &Proc| std::mem::size_of::<Proc>() + p.nspace.as_str().len();
    let ids = uids.len() + gids.len();
    overhead
        + proc(&data.proc)
        + data.key.as_str().len()
        + value
        + custom.iter().map(proc).sum::<usize>()
        + ids * std::mem::size_of::<u32>()
}

/// The limits and the refusals so far; refusals are logged when their count reaches a power
/// of two, so that a publisher that keeps trying fills no log (and the log stays the same
/// from run to run: no clock).
#[derive(Clone, Debug, Default)]
pub(super) struct Quota {
    limits: PublishLimits,
    refused: u64,
}

impl Quota {
    pub(super) fn new(limits: PublishLimits) -> Self {
        Quota { limits, refused: 0 }
    }

    /// Whether `publisher` may add `adding` bytes to the entries `held` (each its publisher
    /// and cost, its own and others').
    pub(super) fn admits<'a>(
        &mut self,
        publisher: &Proc,
        adding: usize,
        held: impl Iterator<Item = (&'a Proc, usize)>,
    ) -> bool {
        let (mut mine, mut all) = (0usize, 0usize);
        for (p, cost) in held {
            all = all.saturating_add(cost);
            if p == publisher {
                mine = mine.saturating_add(cost);
            }
        }
        self.admits_bytes(publisher, adding, mine, all)
    }

    /// Whether `adding` more bytes by `publisher` fit, given what it and everyone hold.
    fn admits_bytes(
        &mut self,
        publisher: &Proc,
        adding: usize,
        held_by_publisher: usize,
        held: usize,
    ) -> bool {
        let mine = held_by_publisher.saturating_add(adding);
        let all = held.saturating_add(adding);
        if mine <= self.limits.per_publisher && all <= self.limits.total {
            return true;
        }
        self.refused += 1;
        if self.refused.is_power_of_two() {
            tracing::warn!(
                "refused a publish of {adding} bytes by {publisher}, which holds \
                 {held_by_publisher} of {} (all publishers: {held} of {}); {} refused so far",
                self.limits.per_publisher,
                self.limits.total,
                self.refused
            );
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Key, Value};

    fn proc(rank: u32) -> Proc {
        Proc::try_new("job", crate::model::Rank(rank)).unwrap()
    }

    #[test]
    fn a_publish_fits_up_to_each_limit_and_not_a_byte_past() {
        let mut quota = Quota {
            limits: PublishLimits {
                per_publisher: 100,
                total: 150,
            },
            refused: 0,
        };
        assert!(quota.admits_bytes(&proc(0), 100, 0, 0));
        assert!(!quota.admits_bytes(&proc(0), 1, 100, 100));
        assert!(quota.admits_bytes(&proc(1), 50, 0, 100));
        assert!(!quota.admits_bytes(&proc(1), 51, 0, 100));
        assert!(!quota.admits_bytes(&proc(1), usize::MAX, 0, 0));
        assert_eq!(quota.refused, 3);
    }

    #[test]
    fn an_entry_costs_at_least_its_key_and_value_bytes() {
        let data = |bytes: usize| PData {
            proc: proc(0),
            key: Key::new("port").unwrap(),
            value: Value::string("x".repeat(bytes)),
        };
        let small = cost(&data(1), &[], &[], &[], 100);
        let large = cost(&data(1001), &[], &[], &[], 100);
        // The string and its length as the wire carries it.
        assert!((1000..1010).contains(&(large - small)), "{small} {large}");
        assert!(small > 100 + 4);
        let proc_cost = std::mem::size_of::<Proc>() + "job".len();
        assert_eq!(
            cost(&data(1), &[proc(1), proc(2)], &[1, 2], &[3], 100) - small,
            2 * proc_cost + 3 * 4
        );
    }

    #[test]
    fn a_publisher_is_held_to_its_own_entries_and_to_everyones() {
        let mut quota = Quota::new(PublishLimits {
            per_publisher: 10,
            total: 30,
        });
        let (a, b) = (proc(0), proc(1));
        let held = [(&a, 6), (&b, 9), (&b, 9)];
        assert!(quota.admits(&a, 4, held.iter().copied()));
        assert!(!quota.admits(&a, 5, held.iter().copied()));
        assert!(quota.admits(&proc(2), 6, held.iter().copied()));
        assert!(
            !quota.admits(&proc(2), 7, held.iter().copied()),
            "the total is reached"
        );
    }
}
