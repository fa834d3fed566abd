//! `cargo xtask layers`: the import graph of a crate's files against the crate's layers.
//!
//! Each file of a crate's `src` is a module; a file imports another when its code names an
//! item of it (`use` trees and paths that start with `crate::`, `super::` or `self::`,
//! followed through `pub use` re-exports to the file that defines the item). A re-export
//! itself is a module's face, not a dependency of its code: a `mod.rs` that re-exports its
//! children's types does not import them. Test code is left out: files named `tests.rs` or
//! `*_tests.rs`, folders named `tests`, and `#[cfg(test)]` items.
//!
//! Three rules, from the project's architecture notes:
//!
//! - **Dependencies point down**: a file imports only from its own layer or below.
//! - **The sides stay apart**: stacks that share the layers below them import nothing of
//!   each other.
//! - **No circles**: no two files import each other, directly or through others.
//!
//! The layers and the sides are each crate's own ([`Rules`], chosen by name by [`rules`]):
//!
//! - `pmix` ([`PMIX`]): the model, the codec, the wire, the store, retrieval, events and
//!   queries, the sans-IO cores, the transports, the drivers and the crate's root; its sides
//!   are the client, the server and the tool.
//! - `capi` ([`CAPI`]): the C boundary, C values and callbacks, the process's state, the
//!   chapters' entry points and the crate's root; each chapter is a side of its own
//!   ([`CAPI_CHAPTERS`]): a file of one chapter imports nothing of another, while the files
//!   inside one (`ops.rs` and `ops/spawn.rs`, `server/mod.rs` and `server/upcalls.rs`) may
//!   import each other.
//!
//! A crate without rules (`--crate conformance`) is held to the last rule only: its circles
//! are its findings, and any fails the command.
//!
//! The findings still to untangle in a crate with rules are written down beside this file,
//! one per line (`layers/pmix.txt`, `layers/capi.txt`). The test and the command hold the
//! crate to them: a finding not written there fails, and so does one written there that is
//! gone (so that the list only shrinks, and says what is left to untangle). Without
//! `--crate`, the command checks every crate with rules ([`CRATES`]) and prints each
//! finding as known or new.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// A crate's rules: its layers, its sides, and the findings still to untangle.
#[derive(Debug)]
pub(crate) struct Rules {
    /// The layers, bottom first: a module belongs to the layer of the longest prefix of its
    /// path listed here (a module no prefix names, to the top one).
    pub(crate) layers: &'static [(&'static str, &'static [&'static str])],
    /// The sides, each a stack of its own above the shared layers: a module belongs to the
    /// side its path begins with, and a module of one side imports nothing of another.
    pub(crate) sides: &'static [&'static str],
    /// What a side is called in a finding (`the client side imports from the server side`).
    pub(crate) side: &'static str,
    /// The findings still to untangle, one per line (`file -> file: why`), with `#` comments.
    pub(crate) known: &'static str,
    /// The modules that may hold `unsafe` (blocks, functions, impls), when the crate keeps it
    /// to a few: `unsafe` anywhere else is a finding. The attribute `#[unsafe(no_mangle)]`,
    /// which every exported function carries, is not counted.
    pub(crate) unsafe_in: Option<&'static [&'static str]>,
}

/// `pmix`'s rules: its layers from the model up to the drivers, and the sides of the
/// protocol.
pub(crate) const PMIX: Rules = Rules {
    layers: &[
        ("model", &["model", "error", "topology"]),
        ("codec", &["codec"]),
        ("wire", &["wire"]),
        ("store", &["store"]),
        ("retrieval", &["retrieval"]),
        ("events and queries", &["events", "query"]),
        (
            "sans-IO server and client cores",
            &[
                "server::core",
                "server::env",
                "server::credential",
                "client::core",
            ],
        ),
        ("transports", &["transport"]),
        (
            "drivers and the host kit",
            &["server", "client", "host", "tool"],
        ),
        ("the crate's root", &[""]),
    ],
    sides: &["client", "server", "tool"],
    side: "side",
    known: include_str!("layers/pmix.txt"),
    // `pmix` forbids `unsafe` outright (`#![forbid(unsafe_code)]`).
    unsafe_in: None,
};

/// The chapters of `capi`: the modules of the C API's entry points, each a side of its own.
pub(crate) const CAPI_CHAPTERS: &[&str] = &[
    "client",
    "nb",
    "events",
    "data",
    "ops",
    "server",
    "tool",
    "topology",
    "fabric",
    "iof",
    "support",
    "info_list",
    "helpers",
];

/// `capi`'s rules: its layers from the C boundary up to the chapters' entry points, and
/// the chapters apart.
pub(crate) const CAPI: Rules = Rules {
    layers: &[
        ("the C boundary", &["boundary", "types", "departures"]),
        ("C values and callbacks", &["values", "callbacks", "args"]),
        ("the process's state", &["state"]),
        ("the chapters' entry points", CAPI_CHAPTERS),
        ("the crate's root", &["", "fuzzing", "test_fixtures"]),
    ],
    sides: CAPI_CHAPTERS,
    side: "chapter",
    known: include_str!("layers/capi.txt"),
    // Reading and writing C memory, calling the caller's functions, and the harness that
    // plays a C caller; the chapters' entry points take typed arguments (`args`) instead.
    unsafe_in: Some(&[
        "boundary",
        "args",
        "values",
        "callbacks",
        "server::upcalls",
        "server::lend",
        "fuzzing",
    ]),
};

/// The crates with rules, by the name of their folder: `cargo xtask layers` without
/// `--crate` checks each.
pub(crate) const CRATES: &[(&str, Rules)] = &[("pmix", PMIX), ("capi", CAPI)];

/// The rules of the crate in the folder `name`, if it has any.
pub(crate) fn rules(name: &str) -> Option<&'static Rules> {
    CRATES.iter().find(|(n, _)| *n == name).map(|(_, r)| r)
}

impl Rules {
    /// The index in [`Rules::layers`] of the layer the module at `path` belongs to.
    fn layer_of(&self, path: &[String]) -> usize {
        let mut best = (0, self.layers.len() - 1);
        for (i, (_, prefixes)) in self.layers.iter().enumerate() {
            for p in *prefixes {
                if under(path, p) && (p.len() + 1 > best.0) {
                    best = (p.len() + 1, i);
                }
            }
        }
        best.1
    }

    /// The side the module at `path` belongs to, if any.
    fn side_of(&self, path: &[String]) -> Option<&'static str> {
        self.sides.iter().copied().find(|s| under(path, s))
    }

    /// The findings the crate's written-down list holds: its lines other than blanks and
    /// comments.
    fn listed(&self) -> Vec<String> {
        self.known
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(str::to_owned)
            .collect()
    }
}

/// Whether the module at `path` is the module `prefix` (`server::core`) or inside it; every
/// module is inside the empty prefix, the crate's root.
fn under(path: &[String], prefix: &str) -> bool {
    let joined = path.join("::");
    prefix.is_empty()
        || joined == prefix
        || joined
            .strip_prefix(prefix)
            .is_some_and(|r| r.starts_with("::"))
}

/// One file of the crate, as a module.
struct Module {
    /// The module's path (`server::core::groups`); empty for the crate's root.
    path: Vec<String>,
    /// The file, relative to the crate's `src`.
    file: String,
    /// The code with comments, literals and test items removed.
    code: String,
}

/// `cargo xtask layers [--crate NAME] [--imports]`: every crate with rules checked against
/// its written-down findings; with `--crate`, one crate (one without rules: its circles);
/// with `--imports`, every import of the crate (`pmix` when none is named).
pub(crate) fn run(root: &Path, name: Option<&str>, list_imports: bool) -> Result<(), String> {
    let src = |name: &str| root.join(name).join("src");
    if list_imports {
        let modules = load(&src(name.unwrap_or("pmix")))?;
        for (from, tos) in imports(&modules) {
            for to in tos {
                println!("{} -> {}", modules[from].file, modules[to].file);
            }
        }
        return Ok(());
    }
    let Some(name) = name else {
        let failures: Vec<String> = CRATES
            .iter()
            .filter_map(|(name, rules)| check(&src(name), name, rules).err())
            .collect();
        return if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("; "))
        };
    };
    if let Some(rules) = rules(name) {
        return check(&src(name), name, rules);
    }
    let found = findings(&src(name), None)?;
    for f in &found {
        println!("{f}");
    }
    println!("{} findings", found.len());
    if found.is_empty() {
        Ok(())
    } else {
        Err(format!("{} findings", found.len()))
    }
}

/// Checks the crate `name` at `src` against its rules and its written-down findings,
/// printing each finding as known or new and each written-down one that is gone; fails on
/// a new one or a gone one.
fn check(src: &Path, name: &str, rules: &Rules) -> Result<(), String> {
    let found = findings(src, Some(rules))?;
    let against = Comparison::of(&found, &rules.listed());
    print!("{}", against.report(name));
    if against.new.is_empty() && against.gone.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{name}: {} new findings, {} listed findings gone",
            against.new.len(),
            against.gone.len()
        ))
    }
}

/// A crate's findings against the ones written down for it.
#[derive(Debug, Default)]
struct Comparison {
    /// Found and written down: still to untangle.
    known: Vec<String>,
    /// Found and not written down: to untangle now.
    new: Vec<String>,
    /// Written down and not found: to delete from the list.
    gone: Vec<String>,
}

impl Comparison {
    fn of(found: &[String], listed: &[String]) -> Self {
        let (known, new) = found.iter().cloned().partition(|f| listed.contains(f));
        let gone = listed
            .iter()
            .filter(|l| !found.contains(l))
            .cloned()
            .collect();
        Self { known, new, gone }
    }

    /// The findings of the crate `name` by kind, each kind under a heading, and a count.
    fn report(&self, name: &str) -> String {
        let list = format!("xtask/src/layers/{name}.txt");
        let mut s = String::new();
        for (heading, findings) in [
            (format!("known (listed in {list}):"), &self.known),
            ("new (untangle them):".to_owned(), &self.new),
            (format!("gone (delete them from {list}):"), &self.gone),
        ] {
            if findings.is_empty() {
                continue;
            }
            let _ = writeln!(s, "{heading}");
            for f in findings {
                let _ = writeln!(s, "  {f}");
            }
        }
        let _ = writeln!(
            s,
            "{name}: {} findings ({} known, {} new), {} listed findings gone",
            self.known.len() + self.new.len(),
            self.known.len(),
            self.new.len(),
            self.gone.len()
        );
        s
    }
}

/// The findings in the crate at `src`, sorted, as its written-down list holds them: with
/// `rules`, those of each rule; without, its circles.
pub(crate) fn findings(src: &Path, rules: Option<&Rules>) -> Result<Vec<String>, String> {
    let modules = load(src)?;
    let graph = imports(&modules);
    let mut out = circle_findings(&modules, &graph);
    if let Some(rules) = rules {
        out.extend(rule_findings(rules, &modules, &graph));
        out.extend(unsafe_findings(rules, &modules));
    }
    out.sort();
    Ok(out)
}

/// The imports that break `rules`: across sides, and from a layer above.
fn rule_findings(
    rules: &Rules,
    modules: &[Module],
    graph: &BTreeMap<usize, BTreeSet<usize>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (&from, tos) in graph {
        let from = &modules[from];
        for &to in tos {
            let to = &modules[to];
            if let (Some(a), Some(b)) = (rules.side_of(&from.path), rules.side_of(&to.path))
                && a != b
            {
                let side = rules.side;
                out.push(format!(
                    "{} -> {}: the {a} {side} imports from the {b} {side}",
                    from.file, to.file
                ));
            }
            let (lf, lt) = (rules.layer_of(&from.path), rules.layer_of(&to.path));
            if lt > lf {
                out.push(format!(
                    "{} -> {}: imports from a layer above ({} over {})",
                    from.file, to.file, rules.layers[lt].0, rules.layers[lf].0
                ));
            }
        }
    }
    out
}

/// The modules that hold `unsafe` though the rules keep it to others.
fn unsafe_findings(rules: &Rules, modules: &[Module]) -> Vec<String> {
    let Some(allowed) = rules.unsafe_in else {
        return Vec::new();
    };
    modules
        .iter()
        .filter(|m| !allowed.iter().any(|a| under(&m.path, a)) && holds_unsafe(&m.code))
        .map(|m| format!("{}: unsafe outside {}", m.file, allowed.join(", ")))
        .collect()
}

/// Whether `code` uses the keyword `unsafe` other than in `#[unsafe(no_mangle)]`.
fn holds_unsafe(code: &str) -> bool {
    let bytes = code.as_bytes();
    code.match_indices("unsafe").any(|(i, word)| {
        let end = i + word.len();
        let alone =
            (i == 0 || !is_ident(bytes[i - 1])) && bytes.get(end).is_none_or(|b| !is_ident(*b));
        let attribute = code[end..].trim_start().starts_with("(no_mangle)");
        alone && !attribute
    })
}

fn circle_findings(modules: &[Module], graph: &BTreeMap<usize, BTreeSet<usize>>) -> Vec<String> {
    circles(graph)
        .iter()
        .map(|circle| {
            let files: Vec<&str> = circle.iter().map(|&m| modules[m].file.as_str()).collect();
            format!("{}: import each other", files.join(" <-> "))
        })
        .collect()
}

fn is_test_path(file: &str) -> bool {
    file.split('/').any(|part| {
        let stem = part.strip_suffix(".rs").unwrap_or(part);
        stem == "tests" || stem.ends_with("_tests")
    })
}

fn load(src: &Path) -> Result<Vec<Module>, String> {
    let mut files = Vec::new();
    walk(src, src, &mut files)?;
    files.sort();
    let mut modules = Vec::new();
    for file in files {
        if file.starts_with("bin/") || is_test_path(&file) {
            continue;
        }
        let text = std::fs::read_to_string(src.join(&file))
            .map_err(|e| format!("cannot read {file}: {e}"))?;
        let stem = file.strip_suffix(".rs").unwrap_or(&file);
        let mut path: Vec<String> = stem.split('/').map(str::to_owned).collect();
        if matches!(path.last().map(String::as_str), Some("mod" | "lib")) {
            path.pop();
        }
        modules.push(Module {
            path,
            file,
            code: without_tests(&strip(&text)),
        });
    }
    Ok(modules)
}

fn walk(src: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.is_dir() {
            walk(src, &p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(src).map_err(|e| e.to_string())?;
            out.push(rel.to_string_lossy().into_owned());
        }
    }
    Ok(())
}

/// The code without comments, and with string and character literals emptied.
fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(i + k).copied().unwrap_or('\0');
        if at(0) == '/' && at(1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if at(0) == '/' && at(1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if at(0) == 'r'
            && (at(1) == '"' || (at(1) == '#' && matches!(at(2), '"' | '#')))
            && !c
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            let mut hashes = 0;
            i += 1;
            while i < c.len() && c[i] == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            while i < c.len() {
                if c[i] == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else if at(0) == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if at(0) == '\'' && (at(1) == '\\' || at(2) == '\'') {
            i += 1;
            while i < c.len() && c[i] != '\'' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The code without the items under `#[cfg(test)]`.
fn without_tests(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at + "#[cfg(test)]".len()..];
        // The item ends at its first `;` outside braces, or with its braced body.
        let mut depth = 0usize;
        let mut end = rest.len();
        for (k, ch) in rest.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The paths a module names: every leaf of its `use` trees, and the paths in its code that
/// begin with `crate`, `super` or `self`, or with a lowercase name followed by `::` (a child
/// module named without a `use`, as `gets::Gets::new()`; the graph keeps those that name
/// one). Each is a list of segments, as written.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let word_at = |i: usize, w: &str| {
        code[i..].starts_with(w)
            && (i == 0 || !is_ident(bytes[i - 1]))
            && !code[i + w.len()..].bytes().next().is_some_and(is_ident)
    };
    let mut i = 0;
    while i < code.len() {
        if word_at(i, "use") {
            let end = code[i..].find(';').map_or(code.len(), |e| i + e);
            if !is_reexport(&code[..i]) {
                expand(&code[i + 3..end], &[], &mut out);
            }
            i = end;
        } else if child_path_at(code, i)
            || (["crate", "super", "self"].iter().any(|w| word_at(i, w))
                // A visibility (`pub(in crate::server)`) names no dependency.
                && !code[..i].trim_end().ends_with("(in"))
        {
            let len = code[i..]
                .find(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == ':'))
                .unwrap_or(code.len() - i);
            let segs: Vec<String> = code[i..i + len]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            if segs.len() > 1 {
                out.push(segs);
            }
            i += len.max(1);
        } else {
            i += 1;
        }
    }
    out
}

/// Whether a path that may start with a child module's name begins at `i`: a lowercase
/// identifier other than `crate`, `super` and `self`, not itself the tail of a path or of
/// another word, followed by `::`.
fn child_path_at(code: &str, i: usize) -> bool {
    let bytes = code.as_bytes();
    if !bytes[i].is_ascii_lowercase() || (i > 0 && (is_ident(bytes[i - 1]) || bytes[i - 1] == b':'))
    {
        return false;
    }
    let end = code[i..]
        .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        .map_or(code.len(), |e| i + e);
    !["crate", "super", "self"].contains(&&code[i..end]) && code[end..].starts_with("::")
}

/// Whether the `use` after `before` is a re-export (`pub use`, `pub(crate) use`): a module's
/// face, which names its children's items for others, not a dependency of its code.
fn is_reexport(before: &str) -> bool {
    let before = before.trim_end();
    let before = match before.strip_suffix(')') {
        Some(b) => b.rfind('(').map_or(b, |k| &b[..k]).trim_end(),
        None => before,
    };
    before.ends_with("pub")
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// What a re-export (`pub use`, `pub(crate) use`, `pub(super) use`) names: the statement
/// after its `use`.
fn reexported(stmt: &str) -> Option<&str> {
    ["pub use ", "pub(crate) use ", "pub(super) use "]
        .iter()
        .find_map(|p| stmt.find(p).map(|at| &stmt[at + p.len()..]))
}

/// The leaves of a use tree (`a::{b, c::{d, e}}`), each with `prefix` before it.
fn expand(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    let (head, group) = match tree.find('{') {
        Some(open) => (
            &tree[..open],
            Some(&tree[open + 1..tree.rfind('}').unwrap_or(tree.len())]),
        ),
        None => (tree, None),
    };
    let head = head.split(" as ").next().unwrap_or(head);
    let mut path = prefix.to_vec();
    path.extend(
        head.split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    );
    match group {
        None => out.push(path),
        Some(inner) => {
            for part in split_top(inner) {
                expand(part, &path, out);
            }
        }
    }
}

/// `inner` split at its commas outside braces.
fn split_top(inner: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (k, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.retain(|p| !p.trim().is_empty());
    parts
}

/// `segs` as an absolute path from the crate's root, as written in `module`.
fn absolute(module: &[String], segs: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = module.to_vec();
    let mut rest = segs;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("super" | "self") => {
            while let Some(s) = rest.first() {
                match s.as_str() {
                    "super" => {
                        base.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    base.extend(rest.iter().filter(|s| s.as_str() != "self").cloned());
    Some(base)
}

/// Each module's imports, as indices into `modules`, with re-exports followed to the file
/// that defines the item.
fn imports(modules: &[Module]) -> BTreeMap<usize, BTreeSet<usize>> {
    let index: BTreeMap<Vec<String>, usize> = modules
        .iter()
        .enumerate()
        .map(|(i, m)| (m.path.clone(), i))
        .collect();
    // The file a path names: the longest prefix that is a module.
    let owner = |path: &[String]| -> Option<(usize, usize)> {
        (0..=path.len())
            .rev()
            .find_map(|n| index.get(&path[..n]).map(|&m| (m, n)))
    };
    let defined: Vec<BTreeSet<String>> = modules.iter().map(|m| definitions(&m.code)).collect();
    // What each module re-exports: the name, and the absolute path it stands for; and the
    // modules whose items it re-exports all of (`pub use codes::*`).
    let mut reexports: BTreeMap<usize, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut globs: BTreeMap<usize, Vec<Vec<String>>> = BTreeMap::new();
    for (i, m) in modules.iter().enumerate() {
        for stmt in m.code.split(';') {
            let Some(body) = reexported(stmt) else {
                continue;
            };
            let mut leaves = Vec::new();
            expand(body, &[], &mut leaves);
            for leaf in leaves {
                let leaf = if leaf
                    .first()
                    .is_some_and(|s| s == "crate" || s == "super" || s == "self")
                {
                    absolute(&m.path, &leaf)
                } else {
                    let mut p = m.path.clone();
                    p.extend(leaf);
                    Some(p)
                };
                match leaf {
                    Some(mut p) if p.last().is_some_and(|l| l == "*") => {
                        p.pop();
                        globs.entry(i).or_default().push(p);
                    }
                    Some(p) => {
                        if let Some(name) = p.last() {
                            reexports
                                .entry(i)
                                .or_default()
                                .insert(name.clone(), p.clone());
                        }
                    }
                    None => {}
                }
            }
        }
    }
    let resolve = |mut path: Vec<String>| -> Option<usize> {
        for _ in 0..8 {
            let (m, n) = owner(&path)?;
            let Some(name) = path.get(n) else {
                return Some(m);
            };
            if defined[m].contains(name) {
                return Some(m);
            }
            // A name defined nowhere we can see (made by a macro) is taken to come through
            // the module's first glob.
            let through_glob = || {
                let all = globs.get(&m).map(Vec::as_slice).unwrap_or_default();
                let named = all.iter().find_map(|g| {
                    let (gm, _) = owner(g)?;
                    let holds = defined[gm].contains(name)
                        || reexports.get(&gm).is_some_and(|r| r.contains_key(name));
                    holds.then_some(g)
                });
                named.or(all.first()).map(|g| {
                    let mut p = g.clone();
                    p.push(name.clone());
                    p
                })
            };
            let target = reexports
                .get(&m)
                .and_then(|r| r.get(name))
                .cloned()
                .or_else(through_glob);
            match target {
                Some(target) if target != path[..n + 1] => {
                    let mut next = target;
                    next.extend(path[n + 1..].iter().cloned());
                    path = next;
                }
                _ => return Some(m),
            }
        }
        owner(&path).map(|(m, _)| m)
    };
    let mut graph: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for (i, m) in modules.iter().enumerate() {
        let mut relative: Vec<Vec<String>> = Vec::new();
        for segs in named_paths(&m.code) {
            let Some(abs) = absolute(&m.path, &segs) else {
                // A use of a child module by its name (`use fencing::X` in a `mod.rs`).
                if let Some(first) = segs.first() {
                    let mut child = m.path.clone();
                    child.push(first.clone());
                    if index.contains_key(&child) {
                        let mut p = m.path.clone();
                        p.extend(segs.iter().cloned());
                        relative.push(p);
                    }
                }
                continue;
            };
            relative.push(abs);
        }
        for abs in relative {
            if let Some(to) = resolve(abs)
                && to != i
                && !modules[to].path.is_empty()
            {
                graph.entry(i).or_default().insert(to);
            }
        }
    }
    graph
}

/// The names of the items a module defines (types, functions, constants, traits, macros).
fn definitions(code: &str) -> BTreeSet<String> {
    const KINDS: &[&str] = &[
        "struct",
        "enum",
        "fn",
        "const",
        "static",
        "type",
        "trait",
        "union",
        "macro_rules!",
    ];
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .filter(|w| KINDS.contains(&w[0]))
        .map(|w| w[1].to_owned())
        .collect()
}

/// The circles of the graph: its strongly connected components of more than one module,
/// each sorted.
fn circles(graph: &BTreeMap<usize, BTreeSet<usize>>) -> Vec<Vec<usize>> {
    let nodes: BTreeSet<usize> = graph
        .iter()
        .flat_map(|(a, bs)| std::iter::once(*a).chain(bs.iter().copied()))
        .collect();
    let reach = |from: usize| -> BTreeSet<usize> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for &m in graph.get(&n).into_iter().flatten() {
                if seen.insert(m) {
                    todo.push(m);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<usize, BTreeSet<usize>> = nodes.iter().map(|&n| (n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for &n in &nodes {
        if done.contains(&n) {
            continue;
        }
        let comp: Vec<usize> = nodes
            .iter()
            .copied()
            .filter(|&m| m == n || (reaches[&n].contains(&m) && reaches[&m].contains(&n)))
            .collect();
        done.extend(comp.iter().copied());
        if comp.len() > 1 {
            out.push(comp);
        }
    }
    out
}

#[cfg(test)]
mod tests;
