//! The run's trace: every event the simulation observes, folded into one hash in the order it
//! happened, so that two runs of the same seed and scenario can be compared by one number.
//!
//! The hash is FNV-1a (64 bits) with its fixed offset and prime: no per-process random state,
//! the same value on every machine and every run.

/// A running hash of the events seen, and how many there were.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    hash: u64,
    events: u64,
}

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

impl Default for Trace {
    fn default() -> Self {
        Trace {
            hash: OFFSET,
            events: 0,
        }
    }
}

impl Trace {
    /// Fold in one event: when it happened (simulated nanoseconds), where, and what.
    pub fn record(&mut self, at_ns: u128, node: u32, what: &[u8]) {
        self.bytes(&at_ns.to_le_bytes());
        self.bytes(&node.to_le_bytes());
        self.bytes(&(what.len() as u64).to_le_bytes());
        self.bytes(what);
        self.events += 1;
    }

    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.hash ^= u64::from(x);
            self.hash = self.hash.wrapping_mul(PRIME);
        }
    }

    pub fn hash(&self) -> u64 {
        self.hash
    }

    pub fn events(&self) -> u64 {
        self.events
    }
}

/// FNV-1a of `bytes` alone, for keys derived from data (collective signatures).
pub fn fnv(bytes: &[u8]) -> u64 {
    let mut t = Trace::default();
    t.bytes(bytes);
    t.hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_depends_on_every_field_and_on_order() {
        let run = |events: &[(u128, u32, &[u8])]| {
            let mut t = Trace::default();
            for (at, node, what) in events {
                t.record(*at, *node, what);
            }
            t.hash()
        };
        let a = run(&[(1, 0, b"x"), (2, 1, b"y")]);
        assert_eq!(a, run(&[(1, 0, b"x"), (2, 1, b"y")]));
        assert_ne!(a, run(&[(2, 1, b"y"), (1, 0, b"x")]));
        assert_ne!(a, run(&[(1, 0, b"x"), (3, 1, b"y")]));
        assert_ne!(a, run(&[(1, 0, b"x"), (2, 2, b"y")]));
        assert_ne!(a, run(&[(1, 0, b"x"), (2, 1, b"z")]));
        // The published FNV-1a value of the empty input and of "a".
        assert_eq!(fnv(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
