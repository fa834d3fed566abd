//! What the generators share: the files they write, and the TSV tables of the inventory
//! they read.

use std::path::PathBuf;

/// One generated file: path relative to the workspace root, and its full text.
pub(crate) struct Output {
    pub(crate) path: PathBuf,
    pub(crate) text: String,
}

/// A parsed TSV file with a header row.
pub(crate) struct Tsv {
    pub(crate) header: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
}

impl Tsv {
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut lines = text.lines();
        let header: Vec<String> = lines
            .next()
            .ok_or("empty TSV")?
            .split('\t')
            .map(String::from)
            .collect();
        let mut rows = Vec::new();
        for (i, line) in lines.enumerate() {
            let row: Vec<String> = line.split('\t').map(String::from).collect();
            if row.len() != header.len() {
                return Err(format!(
                    "line {}: {} cells, header has {}",
                    i + 2,
                    row.len(),
                    header.len()
                ));
            }
            rows.push(row);
        }
        Ok(Self { header, rows })
    }

    pub(crate) fn col(&self, name: &str) -> Result<usize, String> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("no column {name}"))
    }
}
