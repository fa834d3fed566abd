//! The standard's inventory as committed in `spec-vectors/inventory/`.
//!
//! Files are tab-separated with a header row. A malformed file is an error that names the
//! file, the line and the column, never a panic.

use std::fmt;
use std::path::{Path, PathBuf};

/// A standard version the inventory covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    V5_0,
    Draft,
}

impl Version {
    pub const ALL: [Version; 2] = [Version::V5_0, Version::Draft];

    pub fn folder(self) -> &'static str {
        match self {
            Version::V5_0 => "v5.0",
            Version::Draft => "draft",
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Version::V5_0 => "v5.0",
            Version::Draft => "5.1 draft",
        })
    }
}

/// An error in an inventory file: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryError {
    pub file: PathBuf,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for InventoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

impl std::error::Error for InventoryError {}

/// One row of a TSV file, with its header for access by column name.
#[derive(Debug, Clone)]
pub struct Row {
    pub line: usize,
    cells: Vec<String>,
    header: std::rc::Rc<Vec<String>>,
}

impl Row {
    /// The cell of `column`; every row has every column (checked when the file is read).
    pub fn get(&self, column: &str) -> &str {
        self.header
            .iter()
            .position(|h| h == column)
            .map_or("", |i| &self.cells[i])
    }

    /// A comma-separated list cell (`-` for none).
    pub fn list(&self, column: &str) -> Vec<&str> {
        match self.get(column) {
            "-" | "" => Vec::new(),
            s => s.split(',').collect(),
        }
    }
}

/// Read a TSV file whose header must contain `columns`.
pub fn read_tsv(path: &Path, columns: &[&str]) -> Result<Vec<Row>, InventoryError> {
    let err = |line, message: String| InventoryError {
        file: path.to_path_buf(),
        line,
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(0, e.to_string()))?;
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .ok_or_else(|| err(1, "empty file".into()))?
        .split('\t')
        .map(String::from)
        .collect();
    if let Some(missing) = columns.iter().find(|c| !header.iter().any(|h| h == *c)) {
        return Err(err(1, format!("missing column `{missing}`")));
    }
    let header = std::rc::Rc::new(header);
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let cells: Vec<String> = line.split('\t').map(String::from).collect();
        if cells.len() != header.len() {
            return Err(err(
                i + 2,
                format!("{} cells, the header has {}", cells.len(), header.len()),
            ));
        }
        if let Some((c, _)) = header.iter().zip(&cells).find(|(_, v)| v.is_empty()) {
            return Err(err(i + 2, format!("empty `{c}`")));
        }
        rows.push(Row {
            line: i + 2,
            cells,
            header: header.clone(),
        });
    }
    Ok(rows)
}

/// The inventory of one version of the standard.
#[derive(Debug)]
pub struct Standard {
    pub version: Version,
    pub apis: Vec<Row>,
    pub attributes: Vec<Row>,
    pub constants: Vec<Row>,
    pub structs: Vec<Row>,
    /// The table of contents: every numbered heading.
    pub sections: Vec<Row>,
}

/// The whole inventory.
#[derive(Debug)]
pub struct Inventory {
    pub standards: Vec<Standard>,
    pub retrieval_rules: Vec<Row>,
    pub openpmix_constants: Vec<Row>,
}

impl Inventory {
    /// Load `dir` (normally `spec-vectors/inventory`).
    pub fn load(dir: &Path) -> Result<Self, InventoryError> {
        let mut standards = Vec::new();
        for version in Version::ALL {
            let d = dir.join(version.folder());
            standards.push(Standard {
                version,
                apis: read_tsv(
                    &d.join("apis.tsv"),
                    &["name", "kind", "status", "section", "since"],
                )?,
                attributes: read_tsv(
                    &d.join("attributes.tsv"),
                    &[
                        "name",
                        "key",
                        "openpmix_key",
                        "type",
                        "status",
                        "section",
                        "section_title",
                        "required_for",
                        "optional_for",
                    ],
                )?,
                constants: read_tsv(
                    &d.join("constants.tsv"),
                    &[
                        "name",
                        "category",
                        "spec_value",
                        "openpmix_value",
                        "status",
                        "section",
                    ],
                )?,
                structs: read_tsv(
                    &d.join("structs.tsv"),
                    &["name", "status", "section", "definition"],
                )?,
                sections: read_tsv(&d.join("sections.tsv"), &["section", "title"])?,
            });
        }
        Ok(Inventory {
            standards,
            retrieval_rules: read_tsv(
                &dir.join("retrieval_rules.tsv"),
                &[
                    "id",
                    "applies_to",
                    "area",
                    "precondition",
                    "expected",
                    "cite",
                ],
            )?,
            openpmix_constants: read_tsv(
                &dir.join("openpmix-4.2/constants.tsv"),
                &["name", "value", "rust_type", "deprecated"],
            )?,
        })
    }

    pub fn standard(&self, version: Version) -> &Standard {
        self.standards
            .iter()
            .find(|s| s.version == version)
            .expect("both versions are loaded")
    }

    /// The retrieval rules that apply to `version`.
    pub fn rules(&self, version: Version) -> impl Iterator<Item = &Row> {
        let tag = match version {
            Version::V5_0 => "v5.0",
            Version::Draft => "draft",
        };
        self.retrieval_rules
            .iter()
            .filter(move |r| r.get("applies_to").split(", ").any(|v| v == tag))
    }
}
