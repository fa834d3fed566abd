//! The crates against their written-down findings, and the reading of the import graph.

use super::*;

#[test]
fn the_crates_keep_their_layers_as_written_down() {
    let mut failures = String::new();
    for (name, rules) in CRATES {
        let src = crate::workspace_root().join(name).join("src");
        let found = findings(&src, Some(rules)).expect("the crate's sources are readable");
        let against = Comparison::of(&found, &rules.listed());
        if !against.new.is_empty() || !against.gone.is_empty() {
            let _ = write!(
                failures,
                "{name}: new findings (untangle them):\n{}findings fixed (delete them \
                     from xtask/src/layers/{name}.txt):\n{}",
                lines(&against.new),
                lines(&against.gone)
            );
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

fn lines(v: &[String]) -> String {
    v.iter().map(|s| format!("  {s}\n")).collect()
}

#[test]
fn each_chapter_of_capi_is_a_side_and_its_own_files_are_one() {
    let path = |p: &str| -> Vec<String> { p.split("::").map(str::to_owned).collect() };
    assert_eq!(CAPI.side_of(&path("ops::spawn")), Some("ops"));
    assert_eq!(CAPI.side_of(&path("ops")), Some("ops"));
    assert_eq!(CAPI.side_of(&path("server::events")), Some("server"));
    assert_eq!(CAPI.side_of(&path("values::read")), None);
    assert_eq!(PMIX.side_of(&path("server::core::groups")), Some("server"));
    assert_eq!(PMIX.side_of(&path("events")), None);
}

#[test]
fn a_module_belongs_to_the_layer_of_its_longest_prefix() {
    let path = |p: &str| -> Vec<String> { p.split("::").map(str::to_owned).collect() };
    let name = |rules: &Rules, p: &str| rules.layers[rules.layer_of(&path(p))].0;
    assert_eq!(
        name(&PMIX, "server::core::groups"),
        "sans-IO server and client cores"
    );
    assert_eq!(name(&PMIX, "server::listener"), "drivers and the host kit");
    assert_eq!(name(&PMIX, "serverless"), "the crate's root");
    assert_eq!(name(&CAPI, "state::jobs"), "the process's state");
    assert_eq!(name(&CAPI, "fuzzing"), "the crate's root");
}

#[test]
fn only_a_new_finding_or_a_gone_one_fails_the_check() {
    let (found, listed) = (
        ["a -> b: x", "c -> d: y"].map(String::from),
        ["a -> b: x", "e -> f: z"].map(String::from),
    );
    let against = Comparison::of(&found, &listed);
    assert_eq!(against.known, ["a -> b: x"]);
    assert_eq!(against.new, ["c -> d: y"]);
    assert_eq!(against.gone, ["e -> f: z"]);
}

#[test]
fn every_crate_with_rules_has_them_by_name() {
    assert!(rules("pmix").is_some_and(|r| r.sides == ["client", "server", "tool"]));
    assert!(rules("capi").is_some_and(|r| r.sides == CAPI_CHAPTERS));
    assert!(rules("conformance").is_none());
}

#[test]
fn use_trees_expand_to_their_leaves() {
    let mut out = Vec::new();
    expand("crate::a::{b, c::{d, e as f}, self}", &[], &mut out);
    let joined: Vec<String> = out.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        joined,
        [
            "crate::a::b",
            "crate::a::c::d",
            "crate::a::c::e",
            "crate::a::self"
        ]
    );
}

#[test]
fn re_exports_of_every_visibility_are_read() {
    assert_eq!(reexported("\npub use a::b"), Some("a::b"));
    assert_eq!(
        reexported("pub(crate) use children::{T, U}"),
        Some("children::{T, U}")
    );
    assert_eq!(reexported("pub(super) use x::y"), Some("x::y"));
    assert_eq!(reexported("use a::b"), None);
}

#[test]
fn paths_through_a_child_module_count_and_visibilities_do_not() {
    let code = "pub(in crate::server::core) struct S { f: gets::Gets }\n\
                    fn g() { let x = std::mem::take(&mut y); super::shared::f(); Self::new(); }";
    let joined: Vec<String> = named_paths(code).iter().map(|p| p.join("::")).collect();
    assert_eq!(joined, ["gets::Gets", "std::mem::take", "super::shared::f"]);
}

#[test]
fn comments_literals_and_test_items_are_not_code() {
    let code = strip("let s = \"crate::x\"; // super::y\n/* self::z */ let c = '\"';");
    assert!(
        !code.contains("crate::x") && !code.contains("super::y"),
        "{code}"
    );
    assert!(!code.contains("self::z"), "{code}");
    let kept = without_tests("use a;\n#[cfg(test)]\nmod tests { use super::b; }\nuse c;");
    assert_eq!(kept, "use a;\n\nuse c;");
}

#[test]
fn super_paths_climb_from_the_module() {
    let module: Vec<String> = ["server", "core", "groups"].map(String::from).to_vec();
    let segs: Vec<String> = ["super", "super", "jobinfo", "x"]
        .map(String::from)
        .to_vec();
    assert_eq!(
        absolute(&module, &segs).unwrap().join("::"),
        "server::jobinfo::x"
    );
}

#[test]
fn circles_are_the_groups_that_reach_each_other() {
    let graph: BTreeMap<usize, BTreeSet<usize>> = [
        (0, BTreeSet::from([1])),
        (1, BTreeSet::from([0, 2])),
        (2, BTreeSet::from([3])),
    ]
    .into();
    assert_eq!(circles(&graph), vec![vec![0, 1]]);
}

#[test]
fn unsafe_is_found_but_not_the_attribute_every_export_carries() {
    assert!(holds_unsafe("fn f() { unsafe { g() } }"));
    assert!(holds_unsafe("pub unsafe extern \"C\" fn f() {}"));
    assert!(holds_unsafe("unsafe impl Send for X {}"));
    assert!(!holds_unsafe(
        "#[unsafe(no_mangle)]\npub extern \"C\" fn f() {}"
    ));
    assert!(!holds_unsafe("#[unsafe (no_mangle)] fn f() {}"));
    assert!(!holds_unsafe("fn not_unsafe_here() { let unsafely = 1; }"));
}
