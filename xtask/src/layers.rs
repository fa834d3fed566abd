//! `cargo xtask layers`: the import graph of `pmix`'s files against its layers.
//!
//! Each file of `pmix/src` is a module; a file imports another when its code names an item
//! of it (`use` trees and paths that start with `crate::`, `super::` or `self::`, followed
//! through `pub use` re-exports to the file that defines the item). A re-export itself is a
//! module's face, not a dependency of its code: a `mod.rs` that re-exports its children's
//! types does not import them. Test code is left out:
//! files named `tests.rs` or `*_tests.rs`, folders named `tests`, and `#[cfg(test)]` items.
//!
//! Three rules, from the project's architecture notes:
//!
//! - **Dependencies point down**: a file imports only from its own layer or below ([`LAYERS`]).
//! - **The sides stay apart**: the client, the server and the tool share the layers below
//!   them and import nothing of each other ([`SIDES`]).
//! - **No circles**: no two files import each other, directly or through others.
//!
//! The rules are checked by a test against the findings written down in
//! [`KNOWN`](known.txt): a finding not written there fails it, and so does one written there that is
//! gone (so that the list only shrinks, and says what is left to untangle).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// The layers of `pmix`, bottom first: a module belongs to the layer of the longest prefix
/// of its path listed here.
pub(crate) const LAYERS: &[(&str, &[&str])] = &[
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
            "server::fence",
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
];

/// The sides of the protocol, each a stack of its own above the shared layers: a module of
/// one side imports nothing of another.
pub(crate) const SIDES: &[&str] = &["client", "server", "tool"];

/// The findings still to untangle, one per line (`file -> file: why`), kept beside this
/// file and checked by its test.
#[cfg(test)]
const KNOWN: &str = include_str!("layers/known.txt");

/// One file of the crate, as a module.
struct Module {
    /// The module's path (`server::core::groups`); empty for the crate's root.
    path: Vec<String>,
    /// The file, relative to `pmix/src`.
    file: String,
    /// The code with comments, literals and test items removed.
    code: String,
}

/// `cargo xtask layers [--crate NAME] [--imports]`: the findings in `pmix` (or, for another
/// crate of the workspace, its circles: the layers are `pmix`'s), or every import.
pub(crate) fn run(root: &Path, name: &str, list_imports: bool) -> Result<(), String> {
    let src = root.join(name).join("src");
    if list_imports {
        let modules = load(&src)?;
        for (from, tos) in imports(&modules) {
            for to in tos {
                println!("{} -> {}", modules[from].file, modules[to].file);
            }
        }
        return Ok(());
    }
    let findings = if name == "pmix" {
        findings(&src)?
    } else {
        let modules = load(&src)?;
        circle_findings(&modules, &imports(&modules))
    };
    print!("{}", report(&findings));
    if findings.is_empty() {
        Ok(())
    } else {
        Err(format!("{} findings", findings.len()))
    }
}

/// The findings, as the lines `known.txt` holds.
pub(crate) fn findings(src: &Path) -> Result<Vec<String>, String> {
    let modules = load(src)?;
    let graph = imports(&modules);
    let mut out = Vec::new();
    for (from, tos) in &graph {
        for to in tos {
            let (lf, lt) = (layer_of(&modules[*from].path), layer_of(&modules[*to].path));
            let side = |m: &Module| {
                SIDES
                    .iter()
                    .find(|s| m.path.first().is_some_and(|f| f == *s))
            };
            if let (Some(a), Some(b)) = (side(&modules[*from]), side(&modules[*to]))
                && a != b
            {
                out.push(format!(
                    "{} -> {}: the {a} side imports from the {b} side",
                    modules[*from].file, modules[*to].file
                ));
            }
            if lt > lf {
                out.push(format!(
                    "{} -> {}: imports from a layer above ({} over {})",
                    modules[*from].file, modules[*to].file, LAYERS[lt].0, LAYERS[lf].0
                ));
            }
        }
    }
    out.extend(circle_findings(&modules, &graph));
    out.sort();
    Ok(out)
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

fn report(findings: &[String]) -> String {
    let mut s = String::new();
    for f in findings {
        let _ = writeln!(s, "{f}");
    }
    let _ = writeln!(s, "{} findings", findings.len());
    s
}

fn layer_of(path: &[String]) -> usize {
    let joined = path.join("::");
    let mut best = (0, LAYERS.len() - 1);
    for (i, (_, prefixes)) in LAYERS.iter().enumerate() {
        for p in *prefixes {
            let matches = p.is_empty()
                || joined == *p
                || joined.strip_prefix(p).is_some_and(|r| r.starts_with("::"));
            if matches && (p.len() + 1 > best.0) {
                best = (p.len() + 1, i);
            }
        }
    }
    best.1
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
mod tests {
    use super::*;

    #[test]
    fn the_crate_keeps_its_layers_as_written_down() {
        let src = crate::workspace_root().join("pmix/src");
        let found = findings(&src).expect("the crate's sources are readable");
        let known: Vec<String> = KNOWN
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(str::to_owned)
            .collect();
        let new: Vec<&String> = found.iter().filter(|f| !known.contains(f)).collect();
        let gone: Vec<&String> = known.iter().filter(|k| !found.contains(k)).collect();
        assert!(
            new.is_empty() && gone.is_empty(),
            "new findings (untangle them):\n{}\nfindings fixed (delete them from \
             xtask/src/layers/known.txt):\n{}",
            lines(&new),
            lines(&gone)
        );
    }

    fn lines(v: &[&String]) -> String {
        v.iter().map(|s| format!("  {s}\n")).collect()
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
}
