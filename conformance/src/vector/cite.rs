//! Checks of a vector against the standard's inventory: what it cites must exist.
//!
//! A vector's `section` names the text it follows (`v5.0 §9.6, §9.7`; several versions are
//! separated by `;`). Each section must be a heading of that version, and each API the vector
//! names in `apis` must be cited by its own section (or an enclosing one), so that a reader of
//! the report can go from a result to the sentence that decides it. Its `rules` must be ids of
//! `retrieval_rules.tsv`, its `apis` names of the inventory, and the upcalls its steps expect
//! (`expect.upcalls`) the inventory's APIs of kind `upcall`.

use std::collections::BTreeSet;

use super::Vector;
use crate::inventory::{Inventory, Version};

/// The sections a `section` field cites, per version; text in parentheses after a number is
/// a comment (`§6.2 (item 2)`).
fn cited(section: &str) -> Result<Vec<(Version, String)>, String> {
    let mut out = Vec::new();
    for part in section.split(';') {
        let part = part.trim();
        let (version, rest) = if let Some(r) = part.strip_prefix("v5.0 ") {
            (Version::V5_0, r)
        } else if let Some(r) = part.strip_prefix("draft ") {
            (Version::Draft, r)
        } else {
            return Err(format!(
                "field `section`: \"{part}\" does not start with `v5.0 ` or `draft `"
            ));
        };
        for number in rest.split('§').skip(1) {
            let number: String = number
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
                .collect();
            let number = number.trim_end_matches('.');
            if number.is_empty() {
                return Err(format!(
                    "field `section`: a `§` without a number in \"{part}\""
                ));
            }
            out.push((version, number.to_owned()));
        }
    }
    if out.is_empty() {
        return Err("field `section`: cites no `§` section".into());
    }
    Ok(out)
}

/// `inner` is `outer` or one of its subsections.
fn within(inner: &str, outer: &str) -> bool {
    inner == outer
        || inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Everything wrong with what `v` cites, one message per problem.
pub fn check_citations(v: &Vector, inventory: &Inventory) -> Vec<String> {
    let mut problems = Vec::new();
    let cites = match cited(&v.section) {
        Ok(c) => c,
        Err(e) => return vec![e],
    };
    for (version, number) in &cites {
        let std = inventory.standard(*version);
        if !std.sections.iter().any(|r| r.get("section") == number) {
            problems.push(format!(
                "field `section`: §{number} is not a section of {version}"
            ));
        }
    }
    for api in &v.apis {
        let mut named = false;
        for version in cites.iter().map(|(v, _)| *v).collect::<BTreeSet<_>>() {
            let Some(row) = inventory
                .standard(version)
                .apis
                .iter()
                .find(|r| r.get("name") == api)
            else {
                continue;
            };
            named = true;
            let own = row.get("section");
            let ok = cites.iter().any(|(cv, n)| *cv == version && within(own, n));
            if !ok {
                problems.push(format!(
                    "field `section`: names {api} in `apis` but does not cite its section, {version} §{own}"
                ));
            }
        }
        if !named
            && !inventory
                .standards
                .iter()
                .any(|s| s.apis.iter().any(|r| r.get("name") == api))
        {
            problems.push(format!("field `apis`: {api} is not an API of the standard"));
        }
    }
    for step in &v.steps {
        for u in &step.expect.upcalls {
            let known = inventory.standards.iter().any(|s| {
                s.apis
                    .iter()
                    .any(|r| r.get("name") == u.upcall && r.get("kind") == "upcall")
            });
            if !known {
                problems.push(format!(
                    "field `expect.upcalls`: {} is not a host upcall of the standard",
                    u.upcall
                ));
            }
        }
    }
    for rule in &v.rules {
        if !inventory
            .retrieval_rules
            .iter()
            .any(|r| r.get("id") == rule)
        {
            problems.push(format!("field `rules`: {rule} is not a retrieval rule"));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_per_version_and_comments_are_dropped() {
        let c = cited("v5.0 §7.2 (step 3), §6.2.1.1; draft §C.8.5.").expect("parses");
        assert_eq!(
            c,
            vec![
                (Version::V5_0, "7.2".to_owned()),
                (Version::V5_0, "6.2.1.1".to_owned()),
                (Version::Draft, "C.8.5".to_owned()),
            ]
        );
        assert!(cited("§5.4").is_err(), "a version is required");
        assert!(
            cited("v5.0 the whole chapter").is_err(),
            "a section is required"
        );
    }

    #[test]
    fn a_section_encloses_its_subsections_only() {
        assert!(within("9.6", "9.6"));
        assert!(within("17.2.12", "17.2"));
        assert!(!within("9.10", "9.1"), "9.10 is not inside 9.1");
        assert!(!within("9.1", "9.1.2"));
    }

    #[test]
    fn an_expected_upcall_must_be_an_upcall_of_the_standard() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let inventory =
            Inventory::load(&root.join("spec-vectors/inventory")).expect("the inventory loads");
        let vector = |upcall: &str| -> Vector {
            toml::from_str(&format!(
                "summary = \"s\"\nsection = \"v5.0 §5.2.1\"\n[[step]]\nproc = 0\ncall = \"commit\"\nexpect.upcalls = [{{ upcall = \"{upcall}\" }}]\n"
            ))
            .expect("a vector")
        };
        assert!(check_citations(&vector("pmix_server_fencenb_fn_t"), &inventory).is_empty());
        for wrong in ["pmix_server_fence_fn_t", "PMIx_Fence"] {
            let problems = check_citations(&vector(wrong), &inventory);
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert!(problems[0].contains("not a host upcall"), "{}", problems[0]);
        }
    }

    #[test]
    fn every_committed_vector_cites_real_sections_rules_and_apis() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let inventory =
            Inventory::load(&root.join("spec-vectors/inventory")).expect("the inventory loads");
        let vectors = super::super::load_dir(&root.join("spec-vectors/vectors"))
            .unwrap_or_else(|e| panic!("vectors load: {}", e[0]));
        let problems: Vec<String> = vectors
            .iter()
            .flat_map(|v| {
                check_citations(v, &inventory)
                    .into_iter()
                    .map(move |p| format!("{}: {p}", v.id))
            })
            .collect();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
