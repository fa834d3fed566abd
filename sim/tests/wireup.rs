//! The simulator's invariants on small clusters, and its determinism: the same seed gives the
//! same trace, another seed another trace.

use sim::cluster::Layout;
use sim::{Collective, Config, Liveness, Modex, Report};

fn run(nodes: u32, racks: u32, clients: u32, seed: u64, modex: Modex) -> Report {
    let layout = Layout::new(nodes, racks, clients, 3).expect("a valid layout");
    sim::run(&Config::new(layout, seed, modex))
}

#[test]
fn every_client_wires_up_with_the_fence_s_data() {
    let r = run(12, 3, 3, 1, Modex::Full);
    assert!(r.passed(), "{r:?}");
    assert_eq!(r.completed, 36);
    // One message up and one down per tree edge, heartbeats apart.
    assert_eq!(r.messages, 2 * 11);
}

#[test]
fn every_client_wires_up_by_direct_modex() {
    let r = run(12, 3, 3, 1, Modex::Direct);
    assert!(r.passed(), "{r:?}");
    assert_eq!(r.completed, 36);
    // The fence's tree, then a request and an answer per rank, each to another node.
    assert_eq!(r.messages, 2 * 11 + 2 * 36);
}

#[test]
fn heartbeats_flow_while_clients_stay_and_stop_with_the_run() {
    let layout = Layout::new(6, 2, 1, 2).expect("a valid layout");
    let mut config = Config::new(layout, 5, Modex::Full);
    config.workload.finalize_at = std::time::Duration::from_millis(1000);
    let r = sim::run(&config);
    assert!(r.passed(), "{r:?}");
    // Five tree edges, both ways, about ten beats each in a simulated second.
    assert!((80..=110).contains(&r.heartbeats), "{}", r.heartbeats);
    config.liveness = Liveness {
        heartbeat: std::time::Duration::ZERO,
        ..Liveness::default()
    };
    let r = sim::run(&config);
    assert!(r.passed(), "{r:?}");
    assert_eq!(r.heartbeats, 0);
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

#[test]
fn a_spawned_job_runs_across_the_other_nodes_and_connects_to_its_parent() {
    let layout = Layout::new(8, 2, 2, 2).expect("a valid layout");
    let mut config = Config::new(layout, 3, Modex::Full);
    config.workload.spawn_at = Some(std::time::Duration::from_millis(50));
    config.workload.spawn_procs = 9;
    config.workload.connect = true;
    config.workload.finalize_at = std::time::Duration::from_millis(1500);
    config.record = true;
    let r = sim::run(&config);
    assert!(r.passed(), "{:?}", r.violations);
    assert!(
        r.trace
            .iter()
            .any(|l| l.ends_with("rank 0 spawned simjob.spawn.0.1"))
    );
    // Nine processes on the seven other nodes, each through its fence and exact get.
    let done = r
        .trace
        .iter()
        .filter(|l| l.contains("done, fence 0"))
        .count();
    assert_eq!(done, 9);
}

#[test]
fn a_ring_collective_wires_up_with_as_many_messages_as_the_tree() {
    let layout = Layout::new(12, 3, 3, 3).expect("a valid layout");
    let mut config = Config::new(layout, 1, Modex::Full);
    config.collective = Collective::Ring;
    config.record = true;
    let ring = sim::run(&config);
    assert!(ring.passed(), "{:?}", ring.violations);
    assert_eq!(ring.completed, 36);
    // Around the ring to the first node and back: two messages per link, as in the tree.
    assert_eq!(ring.messages, 2 * 11);
    // Every contribution comes from the next node: "<time> <node> contrib <key> from <n>: 0".
    let contribs: Vec<(u32, u32)> = ring
        .trace
        .iter()
        .filter(|l| l.contains(" contrib "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (
                w[1].parse().unwrap(),
                w[5].trim_end_matches(':').parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(contribs.len(), 11);
    assert!(
        contribs.iter().all(|(at, from)| *from == at + 1),
        "{contribs:?}"
    );
}

#[test]
fn a_spawn_places_nothing_on_a_node_that_restarted() {
    let layout = Layout::new(6, 2, 1, 2).expect("a valid layout");
    let mut config = Config::new(layout, 2, Modex::Full);
    config.faults = vec![sim::Fault {
        at: std::time::Duration::from_millis(20),
        jitter: std::time::Duration::ZERO,
        kind: sim::FaultKind::RestartNode {
            node: sim::Pick::Fixed(3),
            after: std::time::Duration::from_millis(30),
        },
    }];
    config.workload.spawn_at = Some(std::time::Duration::from_millis(500));
    config.workload.spawn_procs = 4;
    config.workload.finalize_at = std::time::Duration::from_millis(2500);
    config.record = true;
    let r = sim::run(&config);
    assert!(r.passed(), "{:?}", r.violations);
    let placed = r
        .trace
        .iter()
        .find(|l| l.contains(" spawn simjob.spawn.0.1 on "))
        .expect("the spawn was placed");
    assert!(placed.ends_with("on [1, 2, 4, 5]"), "{placed}");
    assert_eq!(
        r.trace
            .iter()
            .filter(|l| l.contains("done, fence 0"))
            .count(),
        4
    );
}
