//! How much of the standard the behavioural vectors cover, per version.
//!
//! A vector names the APIs it calls, the attributes it uses and the retrieval rules it
//! checks; an item is covered when at least one vector names it.
//!
//! Beyond single items, the standard lists for many APIs the attributes an implementation
//! is *required* to support with them (the inventory's `required_for` column). Such a pair
//! is covered when a vector passes the attribute to that API, or to its blocking or
//! non-blocking twin (`PMIx_Fence` and `PMIx_Fence_nb` share their description of the
//! attribute). Registration counts as `PMIx_server_register_nspace`: every key the harness
//! registers for a vector's jobs, nested arrays included. Pairs whose API is a host upcall
//! or a structure are not counted here: they are the host's side, like the upcalls line.
//! Nor are `PMIX_USERID` and `PMIX_GRPID`: the standard requires the *library* to add the
//! requester's ids to what it passes the host (Log, Query, credentials), so they are seen
//! by a host, not passed by a caller.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::inventory::{Inventory, Standard, Version};

/// What the vectors cover: names of APIs and attributes, ids of retrieval rules.
#[derive(Debug, Default)]
pub struct Covered {
    pub apis: BTreeSet<String>,
    pub attributes: BTreeSet<String>,
    pub rules: BTreeSet<String>,
    /// (API, attribute name): the attribute passed to the API by some vector.
    pub pairs: BTreeSet<(String, String)>,
}

/// One line of the coverage table.
#[derive(Debug, PartialEq, Eq)]
pub struct Line {
    pub version: Version,
    pub what: &'static str,
    pub covered: usize,
    pub total: usize,
}

/// The coverage of `inventory` by `covered`, per version: client, server, tool and support
/// APIs, attributes, retrieval rules.
pub fn table(inventory: &Inventory, covered: &Covered) -> Vec<Line> {
    let mut lines = Vec::new();
    for version in Version::ALL {
        let std = inventory.standard(version);
        for (what, kind) in [
            ("client APIs", "client"),
            ("server APIs", "server"),
            ("tool APIs", "tool"),
            ("support APIs", "support"),
            ("host upcalls", "upcall"),
        ] {
            let names: Vec<&str> = std
                .apis
                .iter()
                .filter(|r| r.get("kind") == kind)
                .map(|r| r.get("name"))
                .collect();
            lines.push(Line {
                version,
                what,
                covered: names.iter().filter(|n| covered.apis.contains(**n)).count(),
                total: names.len(),
            });
        }
        lines.push(Line {
            version,
            what: "attributes",
            covered: std
                .attributes
                .iter()
                .filter(|r| covered.attributes.contains(r.get("name")))
                .count(),
            total: std.attributes.len(),
        });
        let (covered_pairs, total_pairs) = required_pairs(std, covered);
        lines.push(Line {
            version,
            what: "required attributes × API",
            covered: covered_pairs.len(),
            total: total_pairs.len(),
        });
        let rules: Vec<&str> = inventory.rules(version).map(|r| r.get("id")).collect();
        lines.push(Line {
            version,
            what: "retrieval rules",
            covered: rules
                .iter()
                .filter(|id| covered.rules.contains(**id))
                .count(),
            total: rules.len(),
        });
    }
    lines
}

/// An API's name without its `_nb` suffix: the pair of a blocking and a non-blocking form.
fn family(api: &str) -> &str {
    api.strip_suffix("_nb").unwrap_or(api)
}

/// Pairs of an API family (its name without `_nb`) and an attribute name.
pub type Pairs<'a> = BTreeSet<(&'a str, &'a str)>;

/// The (API family, attribute) pairs the standard requires that the vectors cover, and all
/// of them, for the client, server and tool APIs of `std`.
pub fn required_pairs<'a>(std: &'a Standard, covered: &Covered) -> (Pairs<'a>, Pairs<'a>) {
    let kinds: BTreeSet<&str> = std
        .apis
        .iter()
        .filter(|r| matches!(r.get("kind"), "client" | "server" | "tool"))
        .map(|r| family(r.get("name")))
        .collect();
    let done: BTreeSet<(&str, &str)> = covered
        .pairs
        .iter()
        .map(|(api, a)| (family(api), a.as_str()))
        .collect();
    let mut all = BTreeSet::new();
    for row in &std.attributes {
        if matches!(row.get("name"), "PMIX_USERID" | "PMIX_GRPID") {
            continue;
        }
        for api in row.list("required_for") {
            if kinds.contains(family(api)) {
                all.insert((family(api), row.get("name")));
            }
        }
    }
    let hit = all.iter().filter(|p| done.contains(p)).copied().collect();
    (hit, all)
}

/// The table as Markdown.
pub fn markdown(lines: &[Line]) -> String {
    let mut out =
        String::from("| standard | items | covered | total | % |\n|---|---|---:|---:|---:|\n");
    for l in lines {
        let pct = if l.total == 0 {
            0.0
        } else {
            100.0 * l.covered as f64 / l.total as f64
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {pct:.0} |",
            l.version, l.what, l.covered, l.total
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::read_tsv;

    fn standard(apis: &str, attributes: &str) -> Standard {
        let dir = std::env::temp_dir().join(format!("pmix-coverage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let (a, b) = (dir.join("apis.tsv"), dir.join("attributes.tsv"));
        std::fs::write(&a, apis).expect("write");
        std::fs::write(&b, attributes).expect("write");
        let std = Standard {
            version: Version::V5_0,
            apis: read_tsv(&a, &["name", "kind"]).expect("apis"),
            attributes: read_tsv(&b, &["name", "required_for"]).expect("attributes"),
            constants: Vec::new(),
            structs: Vec::new(),
            sections: Vec::new(),
        };
        let _ = std::fs::remove_dir_all(&dir);
        std
    }

    #[test]
    fn a_pair_is_covered_through_either_twin_and_host_side_pairs_are_not_counted() {
        let std = standard(
            "name\tkind\nPMIx_Fence\tclient\nPMIx_Fence_nb\tclient\nPMIx_Log\tclient\n",
            "name\trequired_for\n\
             PMIX_COLLECT_DATA\tPMIx_Fence,PMIx_Fence_nb,pmix_server_fencenb_fn_t\n\
             PMIX_LOG_ONCE\tPMIx_Log\n\
             PMIX_USERID\tPMIx_Log\n",
        );
        let mut covered = Covered::default();
        covered
            .pairs
            .insert(("PMIx_Fence_nb".into(), "PMIX_COLLECT_DATA".into()));
        let (hit, all) = required_pairs(&std, &covered);
        // The upcall and PMIX_USERID are the host's side; the twins are one pair.
        assert_eq!(
            all.into_iter().collect::<Vec<_>>(),
            [
                ("PMIx_Fence", "PMIX_COLLECT_DATA"),
                ("PMIx_Log", "PMIX_LOG_ONCE")
            ]
        );
        assert_eq!(
            hit.into_iter().collect::<Vec<_>>(),
            [("PMIx_Fence", "PMIX_COLLECT_DATA")]
        );
    }
}
