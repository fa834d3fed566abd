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
        }
    }
}

#[test]
fn a_recorded_trace_names_what_happened() {
    let s = scenarios()
        .into_iter()
        .find(|(f, _)| f == "node-crash-during-fence")
        .expect("the scenario is shipped")
        .1;
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
    let s = scenarios()
        .into_iter()
        .find(|(f, _)| f == "wire-up-at-scale")
        .expect("the scenario is shipped")
        .1;
    let mut config = s.config;
    config.layout =
        sim::cluster::Layout::new(1024, 16, 4, config.layout.fanout).expect("a valid layout");
    let r = sim::run(&config);
    assert!(r.passed(), "{:?}", r.violations);
    assert_eq!(r.completed, 1024 * 4);
}
