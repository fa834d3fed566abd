//! Reading vector files: every `*.toml` of a folder, one file, or a file's text, each checked
//! as it is read (an error names the file and, where TOML gives one, the line).

use std::fmt;
use std::path::{Path, PathBuf};

use super::Vector;

/// A vector file that cannot be used, with where and why.
#[derive(Debug)]
pub struct VectorError {
    pub file: PathBuf,
    pub message: String,
}

impl fmt::Display for VectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

impl std::error::Error for VectorError {}

/// Load every `*.toml` under `dir`, sorted by id; the id is the path below `dir`.
pub fn load_dir(dir: &Path) -> Result<Vec<Vector>, Vec<VectorError>> {
    let mut files = Vec::new();
    collect(dir, &mut files);
    files.sort();
    let mut vectors = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        let id = f
            .strip_prefix(dir)
            .unwrap_or(&f)
            .with_extension("")
            .to_string_lossy()
            .into_owned();
        match load_file(&f, &id) {
            Ok(v) => vectors.push(v),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(vectors)
    } else {
        Err(errors)
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

/// Load one vector file, giving it `id` unless the file names its own (which must agree).
pub fn load_file(path: &Path, id: &str) -> Result<Vector, VectorError> {
    let err = |message: String| VectorError {
        file: path.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read: {e}")))?;
    parse(&text, id).map_err(err)
}

/// Read a vector from the text of its file, giving it `id` unless the text names its own
/// (which must agree), and check everything a runner relies on: any text either gives a
/// vector every target can run or an error naming the line or the field.
pub fn parse(text: &str, id: &str) -> Result<Vector, String> {
    let mut v: Vector = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
    if v.id.is_empty() {
        v.id = id.to_owned();
    } else if v.id != id {
        return Err(format!(
            "field `id`: \"{}\" differs from the file's path \"{id}\"",
            v.id
        ));
    }
    v.check()?;
    v.text = text.to_owned();
    Ok(v)
}

/// A TOML error as `line N: message`.
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().to_owned();
    match e.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            format!("line {line}: {msg}")
        }
        None => msg,
    }
}
