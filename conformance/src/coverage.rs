//! How much of the standard the behavioural vectors cover, per version.
//!
//! A vector names the APIs it calls, the attributes it uses and the retrieval rules it
//! checks; an item is covered when at least one vector names it. Until the vectors of
//! issue 4 land, every count of covered items is zero, and the table says so.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::inventory::{Inventory, Version};

/// What the vectors cover: names of APIs and attributes, ids of retrieval rules.
#[derive(Debug, Default)]
pub struct Covered {
    pub apis: BTreeSet<String>,
    pub attributes: BTreeSet<String>,
    pub rules: BTreeSet<String>,
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
