//! The shipped scenarios (`sim/scenarios/`): each one holds its invariants on a few seeds,
//! and each gives the same report twice for the same seed (the determinism test of issue 6).
//! The thousand-seed sweeps run in `.ci/run`, in release.

use std::path::PathBuf;

use sim::scenario::Scenario;

fn scenarios() -> Vec<(String, Scenario)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("sim/scenarios is there") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let s = Scenario::load(&path).expect("every shipped scenario parses");
            let file = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            out.push((file, s));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_scenario_is_named_after_its_file_and_says_what_it_shows() {
    let all = scenarios();
    assert!(all.len() >= 5, "{} scenarios", all.len());
    for (file, s) in &all {
        assert_eq!(&s.name, file);
        assert!(s.about.len() > 80, "{file}: say what it shows");
    }
}

#[test]
fn every_small_scenario_holds_and_replays_exactly() {
    for (file, s) in scenarios() {
        if s.config.layout.nodes > 64 {
            continue; // the scale run is in the heavy group
        }
        for seed in [1, 2, 3] {
            let mut config = s.config.clone();
            config.seed = seed;
            let a = sim::run(&config);
            assert!(a.passed(), "{file} seed {seed}: {:?}", a.violations);
            assert!(!a.faults.is_empty(), "{file}: no fault was carried out");
            let b = sim::run(&config);
            assert_eq!(a, b, "{file} seed {seed}: two runs differ");
            // The same faults with ring collectives hold the invariants too.
            config.collective = sim::Collective::Ring;
            let r = sim::run(&config);
            assert!(r.passed(), "{file} seed {seed}, ring: {:?}", r.violations);
        }
    }
}

fn shipped(name: &str) -> Scenario {
    scenarios()
        .into_iter()
        .find(|(f, _)| f == name)
        .expect("the scenario is shipped")
        .1
}

/// A scenario of 16 nodes on 4 racks, 2 clients each, with `rest` (workload and faults).
fn inline(rest: &str) -> Scenario {
    let text = format!(
        "name = \"inline\"\nabout = \"a test\"\nlimit_s = 30\n\
         [cluster]\nnodes = 16\nracks = 4\nclients = 2\nfanout = 2\nmodex = \"full\"\n{rest}"
    );
    Scenario::parse(&text).expect("a valid scenario")
}

/// The fault kinds no shipped scenario uses hold the invariants too: a crashed rack (every
/// node of it noticed, level by level), a node restarting during the fence (taken back as a
/// new incarnation), held links (the fence completes late), dropped heartbeats (the link is
/// renewed, nobody declared down), delays and a slow node.
#[test]
fn every_other_fault_kind_keeps_the_invariants() {
    let cases = [
        (
            "crash-rack",
            "[workload]\nfence_at_ms = 50\nfinalize_at_ms = 7000\n\
             [[fault]]\nkind = \"crash-rack\"\nrack = \"random\"\nat_ms = 40\njitter_ms = 60\n",
        ),
        (
            "hold",
            "[workload]\nfence_at_ms = 100\nfinalize_at_ms = 2000\n\
             [[fault]]\nkind = \"hold\"\nracks = [0, 1]\nat_ms = 90\nfor_ms = 300\n",
        ),
        (
            "drop",
            "[workload]\nfence_at_ms = 1200\nfinalize_at_ms = 3000\n\
             [[fault]]\nkind = \"drop\"\nnodes = [0, 1]\nat_ms = 100\nfor_ms = 700\n",
        ),
        (
            "delay",
            "[workload]\nfence_at_ms = 100\nfinalize_at_ms = 2000\n\
             [[fault]]\nkind = \"delay\"\nnodes = [0, \"random\"]\nat_ms = 90\nfor_ms = 400\nby_ms = 60\n",
        ),
        (
            "restart-node",
            "[workload]\nfence_at_ms = 50\nfinalize_at_ms = 3000\n\
             [[fault]]\nkind = \"restart-node\"\nnode = \"random\"\nat_ms = 40\njitter_ms = 80\nfor_ms = 30\n",
        ),
        (
            "slow-node",
            "[workload]\nfence_at_ms = 100\nfinalize_at_ms = 2000\n\
             [[fault]]\nkind = \"slow-node\"\nnode = \"random\"\nat_ms = 50\nfor_ms = 400\nby_ms = 80\n",
        ),
    ];
    for (kind, rest) in cases {
        let s = inline(rest);
        for seed in [1, 2] {
            let mut config = s.config.clone();
            config.seed = seed;
            config.record = true;
            let r = sim::run(&config);
            assert!(
                r.passed(),
                "{kind} seed {seed}: {:?} {:?}",
                r.faults,
                r.violations
            );
            assert!(!r.faults.is_empty(), "{kind}: no fault was carried out");
            let fenced_ok = r.trace.iter().filter(|l| l.ends_with("fenced 0")).count();
            match kind {
                "restart-node" => {
                    assert!(r.trace.iter().any(|l| l.contains("back as incarnation 1")));
                }
                "crash-rack" => {
                    // Four nodes down, each heard of by every live client.
                    let downs = r.trace.iter().filter(|l| l.contains("event -231")).count();
                    assert!(downs >= 4 * 24, "{kind}: {downs} node-down events");
                }
                "drop" => {
                    assert!(r.trace.iter().any(|l| l.contains("renew the link")));
                    assert!(!r.trace.iter().any(|l| l.contains("down (detected")));
                    assert_eq!(fenced_ok, 32, "{kind}");
                }
                _ => assert_eq!(fenced_ok, 32, "{kind}: the fence must complete"),
            }
        }
    }
}

#[test]
fn a_recorded_trace_names_what_happened() {
    let s = shipped("node-crash-during-fence");
    let mut config = s.config;
    config.record = true;
    let r = sim::run(&config);
    assert_eq!(r.trace.len() as u64, r.trace_events);
    assert!(r.trace.iter().any(|l| l.contains("fault crash node")));
    assert!(
        r.trace.iter().any(|l| l.contains("event -231")),
        "no NODE_DOWN event"
    );
}

/// The scale scenario at a quarter of its size: unoptimised test builds are many times slower
/// than the release build `.ci/run` runs the whole of it with.
#[test]
fn heavy_sim_the_wire_up_at_scale_completes_at_a_quarter_size() {
    let mut config = shipped("wire-up-at-scale").config;
    config.layout =
        sim::cluster::Layout::new(1024, 16, 4, config.layout.fanout).expect("a valid layout");
    let r = sim::run(&config);
    assert!(r.passed(), "{:?}", r.violations);
    assert_eq!(r.completed, 1024 * 4);
}

/// Every rank registers the fabric: its node's daemon describes the cluster's racks,
/// switches, coordinates and costs, the same from every node (checked by each rank against
/// the layout; a mismatch is a violation).
#[test]
fn every_rank_sees_the_racks_switches_and_costs_of_the_fabric() {
    let s = inline("[workload]\nfabric_at_ms = 100\nfinalize_at_ms = 600\n");
    let r = sim::run(&s.config);
    assert!(r.passed(), "{:?}", r.violations);
}
