//! Proving that a passing vector depends on an attribute: run it again with the attribute
//! taken away, and see an observation differ.
//!
//! A vector credits an attribute when one of its observing steps sees the effect of a step
//! that uses it ([`crate::coverage`]). That credit is a claim about the vector, not about the
//! implementation: an implementation that ignores the attribute may pass the same. Ablation
//! settles it: the runner builds a copy of the vector without the attribute and runs the copy
//! on the same target. The attribute is *verified* there only if the copy does not pass.
//!
//! The copy leaves the attribute out of every input: each step's infos, directives,
//! qualifiers and key lists, the job's registration (the vector's `setup.info` and the infos
//! the harness adds, nested arrays included), `PMIx_server_init`'s infos and the other jobs'.
//! In a vector's own info lists it becomes an info every target ignores ([`PLACEHOLDER`]),
//! so that a call keeps as many directives as it had: a job control handed none fails for
//! that reason, which proves nothing about the attribute taken away.
//! It leaves the expectations as written, except that an expected upcall no longer needs to
//! carry the attribute: the host being handed what the caller passed is *forwarding*, which
//! the report counts apart. A copy that the harness cannot run (an error, not a failure)
//! proves nothing.

use std::collections::{BTreeMap, BTreeSet};

use pmix::model::{Info, Value};

use crate::coverage::items;
use crate::outcome::{Outcome, Row};
use crate::runner::{Target, run_many};
use pmix::model::attr::by_name as attribute;

use crate::vector::Vector;

/// A copy of `v` without the attribute `name` (see the module's doc).
pub fn without(v: &Vector, name: &str) -> Result<Vector, String> {
    let d = attribute(name).ok_or_else(|| format!("no attribute is named {name}"))?;
    if v.text.is_empty() {
        return Err(format!("{}: the vector's text was not kept", v.id));
    }
    let mut doc: toml::Table = toml::from_str(&v.text).map_err(|e| e.to_string())?;
    let names = |s: &str| s == d.name || s == d.key;
    for (field, value) in doc.iter_mut() {
        match field.as_str() {
            "setup" => strip(value, &names),
            "step" => {
                for step in value.as_array_mut().into_iter().flatten() {
                    strip_step(step, &names);
                }
            }
            _ => {}
        }
    }
    let text = toml::to_string(&doc).map_err(|e| e.to_string())?;
    let mut copy: Vector = toml::from_str(&text).map_err(|e| e.to_string())?;
    copy.id.clone_from(&v.id);
    copy.text = text;
    copy.ablated = Some(d.name.to_owned());
    Ok(copy)
}

/// An info the targets ignore, in the vectors' form.
fn placeholder() -> toml::Value {
    let mut value = toml::Table::new();
    value.insert("bool".into(), toml::Value::Boolean(true));
    let mut info = toml::Table::new();
    info.insert("key".into(), toml::Value::String(PLACEHOLDER.into()));
    info.insert("value".into(), toml::Value::Table(value));
    toml::Value::Table(info)
}

/// A step without the attribute in its inputs, and without it in the upcalls it expects.
fn strip_step(step: &mut toml::Value, names: &dyn Fn(&str) -> bool) {
    let Some(table) = step.as_table_mut() else {
        return;
    };
    for (field, value) in table.iter_mut() {
        if field != "expect" {
            strip(value, names);
            continue;
        }
        let upcalls = value
            .as_table_mut()
            .and_then(|e| e.get_mut("upcalls"))
            .and_then(toml::Value::as_array_mut);
        // An expected upcall no longer needs to carry it (nor the placeholder).
        for u in upcalls.into_iter().flatten() {
            let Some(u) = u.as_table_mut() else { continue };
            for list in ["info", "keys", "asked"] {
                if let Some(toml::Value::Array(items)) = u.get_mut(list) {
                    items.retain(|item| {
                        let key = item.as_str().or_else(|| {
                            item.as_table()
                                .and_then(|t| t.get("key"))
                                .and_then(toml::Value::as_str)
                        });
                        !key.is_some_and(names)
                    });
                }
            }
        }
    }
}

/// The key an ablated info becomes: not the standard's, so every target ignores it (v5.0
/// §3.2.7: an attribute a library does not recognise is ignored unless required).
pub const PLACEHOLDER: &str = "conformance.ablated";

/// Take the attribute out at any depth: an info (a table whose `key` names it) becomes an
/// info of [`PLACEHOLDER`], so that a list keeps its length (a call given no directive at all
/// fails for another reason than the attribute's absence); a key list (strings) loses it.
fn strip(value: &mut toml::Value, names: &dyn Fn(&str) -> bool) {
    match value {
        toml::Value::Array(items) => {
            items.retain(|item| !item.as_str().is_some_and(names));
            for item in items.iter_mut() {
                let is_it = item
                    .as_table()
                    .and_then(|t| t.get("key"))
                    .and_then(toml::Value::as_str)
                    .is_some_and(names);
                if is_it {
                    *item = placeholder();
                }
            }
            for item in items {
                strip(item, names);
            }
        }
        toml::Value::Table(t) => {
            for (_, v) in t.iter_mut() {
                strip(v, names);
            }
        }
        _ => {}
    }
}

/// `infos` without the attribute the vector's copy leaves out (nested arrays included): what
/// the harness registers and passes to `PMIx_server_init` for it.
pub fn harness_infos(v: &Vector, mut infos: Vec<Info>) -> Vec<Info> {
    if let Some(key) = v.ablated.as_deref().and_then(attribute).map(|d| d.key) {
        remove_key(&mut infos, key);
    }
    infos
}

fn remove_key(infos: &mut Vec<Info>, key: &str) {
    infos.retain(|i| i.key.as_str() != key);
    for i in infos {
        if let Value::DataArray(a) = &mut i.value {
            let mut inner: Vec<Info> = Vec::new();
            let mut others = Vec::new();
            for e in a.elements.drain(..) {
                match e {
                    Value::Info(x) => inner.push(*x),
                    other => others.push(other),
                }
            }
            remove_key(&mut inner, key);
            a.elements = others;
            a.elements
                .extend(inner.into_iter().map(|x| Value::Info(Box::new(x))));
        }
    }
}

/// The attributes ablation tries for `v`: those the coverage rules credit it with that it
/// can take away (that appear among its inputs or what the harness registers for it).
pub fn candidates(v: &Vector) -> BTreeSet<String> {
    let credited = items(v).verified.attributes;
    let mut inputs: BTreeSet<String> = BTreeSet::new();
    for s in &v.steps {
        inputs.extend(s.call.attributes());
    }
    let mut infos = crate::cluster::registration(v).unwrap_or_default();
    if let Ok(init) = crate::cluster::server_init_info(v, "n", std::path::Path::new("/")) {
        infos.extend(init);
    }
    for job in &v.setup.jobs {
        infos.extend(job.info.iter().filter_map(|i| i.to_info(&job.nspace).ok()));
    }
    inputs.extend(nested(&infos));
    credited.intersection(&inputs).cloned().collect()
}

/// The attribute names of `infos`, nested arrays included.
fn nested(infos: &[Info]) -> Vec<String> {
    (crate::coverage::nested_names(infos).into_iter())
        .map(str::to_owned)
        .collect()
}

/// What ablation proved on one target: each verified attribute with the vectors whose copy
/// without it failed, and how many copies were run.
#[derive(Debug, Default, Clone)]
pub struct Proof {
    pub attributes: BTreeMap<String, BTreeSet<String>>,
    pub runs: usize,
}

impl Proof {
    /// The attributes `v` was proven to depend on.
    pub fn of_vector(&self, id: &str) -> BTreeSet<&str> {
        self.attributes
            .iter()
            .filter(|(_, ids)| ids.contains(id))
            .map(|(a, _)| a.as_str())
            .collect()
    }
}

/// Ablate every candidate of every vector that passes on `target` in `rows` (a vector listed
/// as intermittent there is left out: its failures prove nothing), `parallel` copies at once.
pub async fn prove(vectors: &[Vector], rows: &[Row], target: &Target, parallel: usize) -> Proof {
    let passing: BTreeSet<&str> = rows
        .iter()
        .filter(|r| r.target == target.name() && r.outcome == Outcome::Pass)
        .map(|r| r.id.as_str())
        .collect();
    let mut copies = Vec::new();
    for v in vectors {
        let intermittent = v
            .expected_failure
            .get(target.name())
            .is_some_and(|e| e.intermittent);
        if !passing.contains(v.id.as_str()) || intermittent || v.id.starts_with("attribute-types/")
        {
            continue;
        }
        for a in candidates(v) {
            if let Ok(copy) = without(v, &a) {
                copies.push((a, copy));
            }
        }
    }
    let runs = copies.len();
    let (names, copies): (Vec<String>, Vec<Vector>) = copies.into_iter().unzip();
    let outcomes = run_many(&copies, target, parallel).await;
    let mut proof = Proof {
        runs,
        ..Proof::default()
    };
    for ((a, copy), outcome) in names.into_iter().zip(&copies).zip(outcomes) {
        if !matches!(outcome, Outcome::Pass | Outcome::Error { .. }) {
            proof
                .attributes
                .entry(a)
                .or_default()
                .insert(copy.id.clone());
        }
    }
    proof
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(text: &str) -> Vector {
        let mut v: Vector = toml::from_str(text).expect("a vector");
        v.id = "x".into();
        v.text = text.into();
        v
    }

    const TEXT: &str = r#"
summary = "s"
section = "v5.0 §5.4"

[[setup.info]]
key = "PMIX_NODE_INFO_ARRAY"
value = { info_array = [{ key = "PMIX_HOSTNAME", value = { string = "n0" } }, { key = "PMIX_MAX_PROCS", value = { uint32 = 8 } }] }

[[step]]
proc = 0
call = "get"
target = { rank = "wildcard" }
key = "PMIX_MAX_PROCS"
info = [{ key = "PMIX_TIMEOUT", value = { int32 = 5 } }, { key = "pmix.optional" }]
expect.value = { uint32 = 8 }
expect.upcalls = [{ upcall = "pmix_server_query_fn_t", keys = ["PMIX_TIMEOUT"], info = [{ key = "PMIX_TIMEOUT", value = { int32 = 5 } }] }]
"#;

    #[test]
    fn a_copy_leaves_the_attribute_out_of_inputs_and_upcalls_but_not_the_expectation() {
        let v = vector(TEXT);
        let copy = without(&v, "PMIX_TIMEOUT").expect("a copy");
        assert_eq!(copy.ablated.as_deref(), Some("PMIX_TIMEOUT"));
        assert!(
            !copy.steps[0]
                .call
                .attributes()
                .contains(&"PMIX_TIMEOUT".to_owned())
        );
        // The same attribute by its key is taken too; the others stay.
        let optional = without(&v, "PMIX_OPTIONAL").expect("a copy");
        assert!(optional.text.contains("PMIX_TIMEOUT") && !optional.text.contains("pmix.optional"));
        let u = &copy.steps[0].expect.upcalls[0];
        assert!(u.keys.is_empty() && u.info.is_empty());
        assert!(copy.steps[0].expect.value.is_some());
        // Nested in a registered array.
        let nested = without(&v, "PMIX_MAX_PROCS").expect("a copy");
        assert!(nested.text.contains("PMIX_HOSTNAME"));
        assert_eq!(
            nested.steps[0]
                .call
                .attributes()
                .first()
                .map(String::as_str),
            Some("PMIX_MAX_PROCS")
        );
        let registered = nested.setup.info[0].to_info("ns").expect("an info");
        assert!(!super::nested(&[registered]).contains(&"PMIX_MAX_PROCS".to_owned()));
    }

    #[test]
    fn the_harness_leaves_an_ablated_attribute_out_at_any_depth() {
        let mut v = vector(TEXT);
        v.ablated = Some("PMIX_MAX_PROCS".into());
        let infos = harness_infos(&v, crate::cluster::registration(&v).expect("infos"));
        assert!(!nested(&infos).contains(&"PMIX_MAX_PROCS".to_owned()));
        assert!(nested(&infos).contains(&"PMIX_HOSTNAME".to_owned()));
    }

    /// A copy without the registered job size fails to read it back; one without the get's
    /// timeout (the key is there at once) passes: only the first is proven.
    #[test]
    fn only_an_attribute_whose_absence_changes_an_observation_is_proven() {
        let text = r#"
summary = "s"
section = "x"
[[step]]
proc = 0
call = "get"
target = { rank = "wildcard" }
key = "PMIX_JOB_SIZE"
info = [{ key = "PMIX_TIMEOUT", value = { int32 = 5 } }]
expect.value = { uint32 = 2 }
"#;
        let v = vector(text);
        assert_eq!(
            candidates(&v),
            BTreeSet::from(["PMIX_JOB_SIZE".to_owned(), "PMIX_TIMEOUT".to_owned()])
        );
        let row = Row::passing(&v.id, "rust");
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let proof = rt.block_on(prove(std::slice::from_ref(&v), &[row], &Target::Rust, 2));
        assert_eq!(proof.runs, 2);
        assert_eq!(
            proof.attributes.keys().collect::<Vec<_>>(),
            ["PMIX_JOB_SIZE"]
        );
        assert_eq!(proof.of_vector("x"), BTreeSet::from(["PMIX_JOB_SIZE"]));
    }
}
