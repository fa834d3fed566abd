//! Proof by mutation for APIs and retrieval rules: the other half of *verified* (attributes
//! are proven by [`crate::ablation`]).
//!
//! `cargo xtask mutants` breaks `pmix` one small change at a time and runs the `rust` target's
//! vectors against each change; it keeps every outcome in `spec-vectors/mutation.tsv` (the
//! ledger). `spec-vectors/implemented-by.tsv` says which functions implement which API or
//! rule, and `spec-vectors/mutants.tsv` explains the survivors that no `rust` vector can
//! observe, each with its kind (`cargo xtask mutants` checks the kinds; this reads only which
//! mutants are explained). An item is *proven* when at least one mutant of its code was caught
//! and none of them survives unexplained: the vectors fail when that code is broken. A
//! mutant not yet measured proves nothing either way; [`Mutation::measured`] says how much of
//! the ledger is there.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

/// What the ledger says of one item's code.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ItemTally {
    /// Mutants caught (a vector failed, or did not finish).
    pub caught: usize,
    /// Survivors `spec-vectors/mutants.tsv` explains.
    pub explained: usize,
    /// Survivors nothing explains, by name (`file: change`).
    pub survived: Vec<String>,
}

impl ItemTally {
    /// The vectors fail when the item's code is broken, and every change they miss is
    /// explained.
    pub fn proven(&self) -> bool {
        self.caught > 0 && self.survived.is_empty()
    }
}

/// The ledger read against the attribution.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Mutation {
    /// Mutants in the ledger whose outcome is known (unviable ones included).
    pub measured: usize,
    /// Each attributed API or rule with a measured mutant.
    pub items: BTreeMap<String, ItemTally>,
    /// Every API or rule `implemented-by.tsv` attributes code to.
    pub attributed: std::collections::BTreeSet<String>,
}

impl Mutation {
    /// Whether `item` (an API name or a rule id) is proven.
    pub fn proves(&self, item: &str) -> bool {
        self.items.get(item).is_some_and(ItemTally::proven)
    }

    /// Why `item` is not proven (`None` when it is).
    pub fn why_not(&self, item: &str) -> Option<String> {
        if self.proves(item) {
            return None;
        }
        if !self.attributed.contains(item) {
            return Some(
                "no code of the mutated modules is attributed to it (spec-vectors/implemented-by.tsv)"
                    .to_owned(),
            );
        }
        Some(match self.items.get(item) {
            None => "no mutant of its code measured yet (cargo xtask mutants)".to_owned(),
            Some(t) if !t.survived.is_empty() => format!(
                "{} mutants of its code survive, such as `{}`",
                t.survived.len(),
                t.survived[0]
            ),
            Some(_) => "no mutant of its code caught yet".to_owned(),
        })
    }

    /// Read the three files of `spec_vectors` (the folder).
    pub fn load(spec_vectors: &Path) -> Result<Mutation, String> {
        let read = |name: &str| {
            let path = spec_vectors.join(name);
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
        };
        Mutation::from_texts(
            &read("mutation.tsv")?,
            &read("implemented-by.tsv")?,
            &read("mutants.tsv")?,
        )
    }

    /// The ledger, the attribution and the explanations, as text.
    pub fn from_texts(
        ledger: &str,
        attribution: &str,
        explained: &str,
    ) -> Result<Mutation, String> {
        let rows = attribution_rows(attribution)?;
        // `file: change`, with the occurrence when ` #N` names one.
        let explained: Vec<(&str, Option<&str>)> = data_lines(explained)
            .filter_map(|l| l.split_once('\t').map(|(m, _)| m))
            .map(|m| match m.rsplit_once(" #") {
                Some((bare, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                    (bare, Some(n))
                }
                _ => (m, None),
            })
            .collect();
        let is_explained = |bare: &str, n: &str| {
            (explained.iter()).any(|(b, o)| *b == bare && o.is_none_or(|o| o == n))
        };
        let mut out = Mutation {
            attributed: (rows.iter())
                .flat_map(|r| r.items.iter().map(|i| (*i).to_owned()))
                .collect(),
            ..Mutation::default()
        };
        for (i, line) in data_lines(ledger).enumerate() {
            let cols: Vec<&str> = line.split('\t').collect();
            let [outcome, _commit, bare, n, _position] = cols.as_slice() else {
                return Err(format!("mutation.tsv: line {}: not five columns", i + 1));
            };
            out.measured += 1;
            let Some((file, change)) = bare.split_once(": ") else {
                return Err(format!("mutation.tsv: {bare:?} names no file"));
            };
            let function = function_of(change).unwrap_or_default();
            for row in rows.iter().filter(|r| r.covers(file, function)) {
                for item in &row.items {
                    let t = out.items.entry((*item).to_owned()).or_default();
                    match *outcome {
                        "caught" | "timeout" => t.caught += 1,
                        "missed" if is_explained(bare, n) => t.explained += 1,
                        "missed" => t.survived.push((*bare).to_owned()),
                        "unviable" => {}
                        other => {
                            return Err(format!("mutation.tsv: {bare:?}: outcome {other:?}"));
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

/// One row of `implemented-by.tsv`.
struct Attribution<'a> {
    file: &'a str,
    /// `*`, a function's last segment, or its whole path.
    function: &'a str,
    items: Vec<&'a str>,
}

impl Attribution<'_> {
    fn covers(&self, file: &str, function: &str) -> bool {
        self.file == file
            && (self.function == "*"
                || function == self.function
                || function
                    .strip_suffix(self.function)
                    .is_some_and(|head| head.ends_with("::")))
    }
}

fn attribution_rows(text: &str) -> Result<Vec<Attribution<'_>>, String> {
    data_lines(text)
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            match cols.as_slice() {
                [file, function, items] => Ok(Attribution {
                    file,
                    function,
                    items: items.split_whitespace().collect(),
                }),
                _ => Err(format!("implemented-by.tsv: {l:?}: not three columns")),
            }
        })
        .collect()
}

fn data_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
}

/// The function a cargo-mutants change is in: `replace == with != in Event::reaches` →
/// `Event::reaches`; `replace Event::affected -> Vec<Proc> with vec![]` → `Event::affected`.
fn function_of(change: &str) -> Option<&str> {
    if let Some((_, f)) = change.rsplit_once(" in ") {
        return Some(f);
    }
    let rest = change.strip_prefix("replace ")?;
    let end = rest.find(" -> ").or_else(|| rest.find(" with "))?;
    Some(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    const ATTRIBUTION: &str = "# comment\n\
        a.rs\t*\tPMIx_A\n\
        b.rs\tjoin\tPMIx_B R-01\n";

    fn ledger(lines: &[(&str, &str)]) -> String {
        lines
            .iter()
            .enumerate()
            .map(|(i, (outcome, bare))| format!("{outcome}\tabc\t{bare}\t1\tx:{i}:1\n"))
            .collect()
    }

    #[test]
    fn the_function_of_a_change_is_after_in_or_the_replaced_one() {
        assert_eq!(
            function_of("replace == with != in GroupsAt<'_>::join_elsewhere"),
            Some("GroupsAt<'_>::join_elsewhere")
        );
        assert_eq!(
            function_of("replace Event::affected -> Vec<Proc> with vec![]"),
            Some("Event::affected")
        );
        assert_eq!(
            function_of("replace client_get with ()"),
            Some("client_get")
        );
    }

    #[test]
    fn an_item_is_proven_by_a_caught_mutant_and_no_unexplained_survivor() {
        let text = ledger(&[
            ("caught", "a.rs: replace f -> bool with true"),
            ("missed", "b.rs: replace == with != in S::join"),
            ("caught", "b.rs: delete ! in S::join"),
            ("missed", "b.rs: replace g -> u8 with 0"),
        ]);
        let m = Mutation::from_texts(&text, ATTRIBUTION, "").expect("parses");
        assert!(m.proves("PMIx_A"));
        // The survivor in `join` is not explained; the one in `g` is not attributed.
        assert!(!m.proves("PMIx_B") && !m.proves("R-01"));
        assert_eq!(
            m.items["R-01"].survived,
            ["b.rs: replace == with != in S::join"]
        );
        let explained = "b.rs: replace == with != in S::join\tequivalent: ...\n";
        let m = Mutation::from_texts(&text, ATTRIBUTION, explained).expect("parses");
        assert!(m.proves("PMIx_B") && m.proves("R-01"));
        assert_eq!(m.measured, 4);
    }

    #[test]
    fn an_explanation_naming_an_occurrence_covers_that_one_alone() {
        let text = "missed\tabc\tb.rs: delete ! in S::join\t1\tx:1:1\n\
                    missed\tabc\tb.rs: delete ! in S::join\t2\tx:2:1\n";
        let explained = "b.rs: delete ! in S::join #2\tequivalent: ...\n";
        let m = Mutation::from_texts(text, ATTRIBUTION, explained).expect("parses");
        assert_eq!(m.items["PMIx_B"].explained, 1);
        assert_eq!(m.items["PMIx_B"].survived, ["b.rs: delete ! in S::join"]);
    }

    #[test]
    fn a_function_is_matched_by_its_last_segment_not_a_suffix_of_it() {
        let text = ledger(&[("caught", "b.rs: delete ! in S::rejoin")]);
        let m = Mutation::from_texts(&text, ATTRIBUTION, "").expect("parses");
        assert!(!m.proves("PMIx_B"));
    }

    #[test]
    fn nothing_measured_proves_nothing() {
        let m = Mutation::from_texts("", ATTRIBUTION, "").expect("parses");
        assert!(!m.proves("PMIx_A"));
    }

    /// The committed files parse, and every attributed file is one the mutants run covers.
    #[test]
    fn the_committed_files_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec-vectors");
        Mutation::load(&dir).expect("the ledger, attribution and explanations parse");
        let text = std::fs::read_to_string(dir.join("implemented-by.tsv")).expect("reads");
        let inventory = crate::inventory::Inventory::load(&dir.join("inventory")).expect("loads");
        let v5 = crate::inventory::Version::V5_0;
        let known = |item: &str| {
            inventory.rules(v5).any(|r| r.get("id") == item)
                || inventory
                    .standard(v5)
                    .apis
                    .iter()
                    .any(|r| r.get("name") == item)
        };
        for row in attribution_rows(&text).expect("parses") {
            let path = dir.join("..").join(row.file);
            assert!(path.is_file(), "{}: no such file", row.file);
            for item in &row.items {
                assert!(known(item), "{}: {item} is no v5.0 API or rule", row.file);
            }
        }
    }
}
