//! The simulator's invariants on small clusters, and its determinism: the same seed gives the
//! same trace, another seed another trace.

use std::time::Duration;

use sim::cluster::Layout;
use sim::{Config, Modex, Report};

fn run(nodes: u32, racks: u32, clients: u32, seed: u64, modex: Modex) -> Report {
    let config = Config {
        layout: Layout::new(nodes, racks, clients, 3).expect("a valid layout"),
        seed,
        modex,
        limit: Duration::from_secs(120),
        progress: false,
    };
    sim::run(&config)
}

#[test]
fn every_client_wires_up_with_the_fence_s_data() {
    let r = run(12, 3, 3, 1, Modex::Full);
    assert!(r.passed(), "{r:?}");
    assert_eq!(r.completed, 36);
    // One message up and one down per tree edge.
    assert_eq!(r.messages, 2 * 11);
}

#[test]
fn every_client_wires_up_by_direct_modex() {
    let r = run(12, 3, 3, 1, Modex::Direct);
    assert!(r.passed(), "{r:?}");
    // The fence's tree, then a request and an answer per rank, each to another node.
    assert_eq!(r.messages, 2 * 11 + 2 * 36);
}

#[test]
fn a_seed_replays_exactly_and_another_seed_differs() {
    for modex in [Modex::Full, Modex::Direct] {
        let a = run(9, 3, 2, 42, modex);
        let b = run(9, 3, 2, 42, modex);
        assert!(a.passed(), "{a:?}");
        assert_eq!(a, b, "same seed, different runs");
        let c = run(9, 3, 2, 43, modex);
        assert!(c.passed(), "{c:?}");
        assert_ne!(
            a.trace_hash, c.trace_hash,
            "the seed does not reach the run"
        );
    }
}
