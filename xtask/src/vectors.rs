//! `cargo xtask vectors`: turn the reference inventory into the project's own data.
//!
//! Inputs (read-only reference material, not part of the product):
//! - `<shared>/spec/inventory/{v5.0,latest}/*.json`, `toc.txt` and `retrieval_rules.json`: the standard
//!   parsed into data;
//! - `<shared>/openpmix/abi/numeric_constants.md` and `string_constants.tsv`: OpenPMIx 4.2.2's
//!   numeric constants (grouped by C type) and attribute key strings.
//!
//! Outputs (committed):
//! - `spec-vectors/inventory/{v5.0,draft}/{apis,attributes,constants,structs,sections}.tsv`,
//!   `spec-vectors/inventory/retrieval_rules.tsv`,
//!   `spec-vectors/inventory/openpmix-4.2/{constants,attribute_keys}.tsv`;
//! - `pmix/src/model/generated/{attributes,constants}.rs`: the code's tables, generated from
//!   the TSV files above (never from `<shared>` directly), so the data has one source;
//! - `spec-vectors/vectors/attribute-types/*.toml`: a type check of every attribute, also
//!   from the TSV files (see `attribute_vectors`).
//!
//! `--check` regenerates everything in memory and fails, listing the files, when a committed
//! file differs. The `inventory_is_fresh` test runs that check.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::tables::{Output, Tsv};

/// The standard versions the inventory covers, as (source folder, our folder name).
const VERSIONS: [(&str, &str); 2] = [("v5.0", "v5.0"), ("latest", "draft")];

pub(crate) fn run(root: &Path, check: bool, shared: Option<PathBuf>) -> Result<(), String> {
    let shared = shared_dir(root, shared)?;
    let outputs = generate(&shared)?;
    if check {
        let stale = stale_outputs(root, &outputs);
        if stale.is_empty() {
            println!(
                "inventory: {} generated files are up to date",
                outputs.len()
            );
            return Ok(());
        }
        return Err(format!(
            "these committed files are stale (run `cargo xtask vectors`):\n  {}",
            stale.join("\n  ")
        ));
    }
    for gone in leftovers(root, &outputs) {
        fs::remove_file(root.join(&gone)).map_err(|e| format!("{}: {e}", gone.display()))?;
        println!("removed {}", gone.display());
    }
    for out in &outputs {
        let path = root.join(&out.path);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        fs::write(&path, &out.text).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {}", out.path.display());
    }
    Ok(())
}

/// Where the reference material lives: `--shared DIR`, `$PMIX_SHARED_DIR`, or `../shared`.
pub(crate) fn shared_dir(root: &Path, given: Option<PathBuf>) -> Result<PathBuf, String> {
    let given = given.or_else(|| std::env::var_os("PMIX_SHARED_DIR").map(PathBuf::from));
    let dir = given.unwrap_or_else(|| root.join("..").join("shared"));
    if dir.join("spec/inventory").is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "reference material not found at {} (pass --shared DIR or set PMIX_SHARED_DIR)",
            dir.display()
        ))
    }
}

/// Names of committed files whose content differs from `outputs`, and of files left in a
/// generated folder that are no longer generated.
pub(crate) fn stale_outputs(root: &Path, outputs: &[Output]) -> Vec<String> {
    let mut stale: Vec<String> = outputs
        .iter()
        .filter(|o| fs::read_to_string(root.join(&o.path)).ok().as_deref() != Some(&o.text))
        .map(|o| o.path.display().to_string())
        .collect();
    stale.extend(
        leftovers(root, outputs)
            .iter()
            .map(|p| format!("{} (no longer generated)", p.display())),
    );
    stale
}

/// Files in the folder of generated vectors that `outputs` does not contain.
fn leftovers(root: &Path, outputs: &[Output]) -> Vec<PathBuf> {
    let dir = Path::new(crate::attribute_vectors::DIR);
    let Ok(entries) = fs::read_dir(root.join(dir)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| dir.join(e.file_name()))
        .filter(|p| !outputs.iter().any(|o| &o.path == p))
        .collect();
    out.sort();
    out
}

/// Produce every output file, in memory.
pub(crate) fn generate(shared: &Path) -> Result<Vec<Output>, String> {
    let inv = shared.join("spec/inventory");
    let abi = shared.join("openpmix/abi");
    let openpmix = OpenPmix::read(&abi)?;
    let mut outputs = Vec::new();
    let dir = PathBuf::from("spec-vectors/inventory");

    for (source, ours) in VERSIONS {
        let v = inv.join(source);
        outputs.push(Output {
            path: dir.join(ours).join("apis.tsv"),
            text: apis_tsv(&read_json(&v.join("apis.json"))?)?,
        });
        outputs.push(Output {
            path: dir.join(ours).join("attributes.tsv"),
            text: attributes_tsv(&read_json(&v.join("attributes.json"))?, &openpmix)?,
        });
        outputs.push(Output {
            path: dir.join(ours).join("constants.tsv"),
            text: constants_tsv(&read_json(&v.join("constants.json"))?, &openpmix)?,
        });
        outputs.push(Output {
            path: dir.join(ours).join("structs.tsv"),
            text: structs_tsv(&read_json(&v.join("structs.json"))?)?,
        });
        outputs.push(Output {
            path: dir.join(ours).join("sections.tsv"),
            text: sections_tsv(&v.join("toc.txt"))?,
        });
    }
    outputs.push(Output {
        path: dir.join("retrieval_rules.tsv"),
        text: rules_tsv(&read_json(&inv.join("retrieval_rules.json"))?)?,
    });
    outputs.push(Output {
        path: dir.join("openpmix-4.2/constants.tsv"),
        text: openpmix.constants_tsv(),
    });
    outputs.push(Output {
        path: dir.join("openpmix-4.2/attribute_keys.tsv"),
        text: openpmix.keys_tsv(),
    });

    // The Rust tables are generated from the TSV text just produced, so that a hand edit of a
    // TSV file and the code can never drift apart unnoticed.
    let tsv = |p: &str| -> Result<Tsv, String> {
        let text = &outputs
            .iter()
            .find(|o| o.path == dir.join(p))
            .ok_or_else(|| format!("internal: {p} not generated"))?
            .text;
        Tsv::parse(text)
    };
    let attrs = [tsv("v5.0/attributes.tsv")?, tsv("draft/attributes.tsv")?];
    let openpmix_keys = tsv("openpmix-4.2/attribute_keys.tsv")?;
    let consts = [
        tsv("openpmix-4.2/constants.tsv")?,
        tsv("v5.0/constants.tsv")?,
        tsv("draft/constants.tsv")?,
    ];
    outputs.push(Output {
        path: PathBuf::from("pmix/src/model/generated/attributes.rs"),
        text: attributes_rs(&attrs)?,
    });
    outputs.push(Output {
        path: PathBuf::from("pmix/src/model/generated/constants.rs"),
        text: constants_rs(&consts)?,
    });
    outputs.extend(crate::attribute_vectors::generate(&attrs, &openpmix_keys)?);
    Ok(outputs)
}

/// The table of contents (`toc.txt`: one heading per line, indented, number then title) as
/// `number<TAB>title` rows, so that vectors can be checked to cite sections that exist.
fn sections_tsv(toc: &Path) -> Result<String, String> {
    let text = fs::read_to_string(toc).map_err(|e| format!("{}: {e}", toc.display()))?;
    let mut out = String::from("section\ttitle\n");
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (number, title) = line
            .split_once(' ')
            .ok_or_else(|| format!("{}:{}: no title after the number", toc.display(), i + 1))?;
        let _ = writeln!(out, "{}\t{}", number.trim_end_matches('.'), cell(title));
    }
    Ok(out)
}

fn read_json(path: &Path) -> Result<Json, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn str_field<'a>(item: &'a Json, field: &str) -> &'a str {
    item.get(field).and_then(Json::as_str).unwrap_or("")
}

/// Make a value safe for one TSV cell: no tabs, no newlines.
fn cell(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.is_empty() { "-".to_string() } else { s }
}

fn list_field(item: &Json, field: &str) -> String {
    let mut names: Vec<&str> = item
        .get(field)
        .and_then(Json::as_array)
        .map(|a| a.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        "-".into()
    } else {
        names.join(",")
    }
}

fn declared(doc: &Json) -> Result<&Vec<Json>, String> {
    doc.get("declared_in_chapters")
        .and_then(Json::as_array)
        .ok_or_else(|| "missing declared_in_chapters".to_string())
}

fn api_kind(category: &str) -> Option<&'static str> {
    Some(match category {
        "client" => "client",
        "server" => "server",
        "tool" => "tool",
        "support" => "support",
        "server_module_fn" => "upcall",
        "callback_typedef" => "callback",
        _ => return None,
    })
}

fn status_word(status: &str) -> &'static str {
    if status.starts_with("deprecated") || status.contains("DEPRECATED") {
        "deprecated"
    } else if status.starts_with("provisional") {
        "provisional"
    } else if status.starts_with("removed") {
        "removed"
    } else {
        "active"
    }
}

fn apis_tsv(doc: &Json) -> Result<String, String> {
    let items = doc.as_array().ok_or("apis.json: not a list")?;
    let mut rows = BTreeMap::new();
    for item in items {
        let Some(kind) = api_kind(str_field(item, "category")) else {
            continue;
        };
        let since = item.get("since").and_then(Json::as_str).unwrap_or("-");
        rows.insert(
            str_field(item, "name").to_string(),
            format!(
                "{}\t{kind}\t{}\t{}\t{since}",
                str_field(item, "name"),
                status_word(str_field(item, "status")),
                cell(str_field(item, "section")),
            ),
        );
    }
    let mut out = String::from("name\tkind\tstatus\tsection\tsince\n");
    for row in rows.values() {
        out.push_str(row);
        out.push('\n');
    }
    Ok(out)
}

fn attributes_tsv(doc: &Json, openpmix: &OpenPmix) -> Result<String, String> {
    let mut rows = BTreeMap::new();
    for item in declared(doc)? {
        let name = str_field(item, "name");
        let key = str_field(item, "string").trim_matches('"');
        let openpmix_key = openpmix.keys.get(name).map_or("-", String::as_str);
        let pmix_type = match str_field(item, "pmix_type") {
            t if t.starts_with("PMIX_") => t.to_string(),
            "(varies)" => "varies".into(),
            _ => "none".into(),
        };
        rows.insert(
            name.to_string(),
            format!(
                "{name}\t{key}\t{openpmix_key}\t{pmix_type}\t{}\t{}\t{}\t{}\t{}",
                status_word(str_field(item, "status")),
                cell(str_field(item, "section")),
                cell(str_field(item, "section_title")),
                list_field(item, "required_by"),
                list_field(item, "optional_for"),
            ),
        );
    }
    let mut out = String::from(
        "name\tkey\topenpmix_key\ttype\tstatus\tsection\tsection_title\trequired_for\toptional_for\n",
    );
    for row in rows.values() {
        out.push_str(row);
        out.push('\n');
    }
    Ok(out)
}

fn constants_tsv(doc: &Json, openpmix: &OpenPmix) -> Result<String, String> {
    let mut rows = BTreeMap::new();
    for item in declared(doc)? {
        let name = str_field(item, "name");
        let ours = openpmix
            .constants
            .get(name)
            .map_or("-".to_string(), |c| c.value.to_string());
        rows.insert(
            name.to_string(),
            format!(
                "{name}\t{}\t{}\t{ours}\t{}\t{}",
                str_field(item, "category"),
                cell(str_field(item, "value")),
                status_word(str_field(item, "status")),
                cell(str_field(item, "section")),
            ),
        );
    }
    let mut out = String::from("name\tcategory\tspec_value\topenpmix_value\tstatus\tsection\n");
    for row in rows.values() {
        out.push_str(row);
        out.push('\n');
    }
    Ok(out)
}

fn structs_tsv(doc: &Json) -> Result<String, String> {
    let items = doc.as_array().ok_or("structs.json: not a list")?;
    let mut rows = BTreeMap::new();
    for item in items {
        let name = str_field(item, "name");
        rows.insert(
            name.to_string(),
            format!(
                "{name}\t{}\t{}\t{}",
                status_word(str_field(item, "status")),
                cell(str_field(item, "section")),
                cell(str_field(item, "definition")),
            ),
        );
    }
    let mut out = String::from("name\tstatus\tsection\tdefinition\n");
    for row in rows.values() {
        out.push_str(row);
        out.push('\n');
    }
    Ok(out)
}

fn rules_tsv(doc: &Json) -> Result<String, String> {
    let items = doc.as_array().ok_or("retrieval_rules.json: not a list")?;
    let mut out = String::from("id\tapplies_to\tarea\tprecondition\texpected\tcite\tnote\n");
    for item in items {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}",
            str_field(item, "id"),
            cell(str_field(item, "applies_to")),
            cell(str_field(item, "area")),
            cell(str_field(item, "precondition")),
            cell(str_field(item, "expected")),
            cell(str_field(item, "cite")),
            cell(str_field(item, "note")),
        );
    }
    Ok(out)
}

/// One numeric constant of OpenPMIx 4.2.2's headers.
struct Constant {
    name: String,
    value: i64,
    /// The Rust type it belongs to (`Status`, `DataType`, …) or a plain integer kind.
    rust_type: &'static str,
    /// Declared in `pmix_deprecated.h` (marked † in the ABI table).
    deprecated: bool,
}

struct OpenPmix {
    constants: BTreeMap<String, Constant>,
    /// Constant order as in the headers, for stable alias resolution.
    order: Vec<String>,
    keys: BTreeMap<String, String>,
}

impl OpenPmix {
    fn read(abi: &Path) -> Result<Self, String> {
        let md_path = abi.join("numeric_constants.md");
        let md = fs::read_to_string(&md_path).map_err(|e| format!("{}: {e}", md_path.display()))?;
        let mut constants = BTreeMap::new();
        let mut order = Vec::new();
        let mut heading = String::new();
        for line in md.lines() {
            if let Some(h) = line.strip_prefix("#### ") {
                heading = h.to_string();
                continue;
            }
            if !line.starts_with("| `") {
                continue;
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            for pair in cells[1..].chunks(2) {
                let [name, value] = pair else { continue };
                if !name.starts_with('`') {
                    continue;
                }
                let deprecated = name.ends_with('†');
                let name = name.trim_end_matches('†').trim_matches('`').to_string();
                let value: i64 = value
                    .parse()
                    .map_err(|_| format!("{}: bad value for {name}", md_path.display()))?;
                let rust_type = classify(&heading, &name)
                    .ok_or_else(|| format!("{}: cannot classify {name}", md_path.display()))?;
                order.push(name.clone());
                constants.insert(
                    name.clone(),
                    Constant {
                        name,
                        value,
                        rust_type,
                        deprecated,
                    },
                );
            }
        }
        let keys_path = abi.join("string_constants.tsv");
        let keys_text =
            fs::read_to_string(&keys_path).map_err(|e| format!("{}: {e}", keys_path.display()))?;
        let mut keys = BTreeMap::new();
        for line in keys_text.lines() {
            let cells: Vec<&str> = line.split('\t').collect();
            if let [_, name, key] = cells[..] {
                keys.insert(name.to_string(), key.to_string());
            }
        }
        Ok(Self {
            constants,
            order,
            keys,
        })
    }

    fn constants_tsv(&self) -> String {
        let mut out = String::from("name\tvalue\trust_type\tdeprecated\n");
        for name in &self.order {
            let c = &self.constants[name];
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}",
                c.name, c.value, c.rust_type, c.deprecated
            );
        }
        out
    }

    fn keys_tsv(&self) -> String {
        let mut out = String::from("name\tkey\n");
        for (name, key) in &self.keys {
            let _ = writeln!(out, "{name}\t{key}");
        }
        out
    }
}

/// Which Rust type a constant of the ABI table belongs to, from its table and name.
fn classify(heading: &str, name: &str) -> Option<&'static str> {
    let t = heading.split_whitespace().next().unwrap_or("");
    Some(match t {
        "pmix_proc_state_t" => "ProcState",
        "pmix_job_state_t" => "JobState",
        "pmix_status_t" => "Status",
        "pmix_data_type_t" => "DataType",
        "pmix_scope_t" => "Scope",
        "pmix_data_range_t" => "DataRange",
        "pmix_persistence_t" => "Persistence",
        "pmix_iof_channel_t" => "IofChannel",
        "pmix_info_directives_t" if name == "PMIX_INFO_DIRECTIVES" => "DataType",
        "pmix_info_directives_t" => "InfoDirectives",
        "pmix_alloc_directive_t" if name == "PMIX_ALLOC_DIRECTIVE" => "DataType",
        "pmix_alloc_directive_t" => "AllocDirective",
        "Version" => "version",
        "Limits" if name.starts_with("PMIX_RANK_") => "Rank",
        "Limits" => "limit",
        "storage" if name.starts_with("PMIX_STORAGE_MEDIUM_") => "StorageMedium",
        "storage" if name.starts_with("PMIX_STORAGE_ACCESSIBILITY_") => "StorageAccessibility",
        "storage" if name.starts_with("PMIX_STORAGE_PERSISTENCE_") => "StoragePersistence",
        "storage" if name.starts_with("PMIX_STORAGE_ACCESS_") => "StorageAccessType",
        "coord" if name == "PMIX_LINK_STATE" => "DataType",
        "coord" if name.starts_with("PMIX_COORD_") => "CoordView",
        "coord" if name.starts_with("PMIX_LINK_") => "LinkState",
        "coord" if name.starts_with("PMIX_CPUBIND_") => "BindEnvelope",
        "coord" if name.starts_with("PMIX_LOCALITY_") => "Locality",
        "coord" if name.starts_with("PMIX_DEVTYPE_") => "DeviceType",
        _ => return None,
    })
}

/// The Rust type that carries an attribute's value, from its `PMIX_*` data type.
fn attr_rust_type(pmix_type: &str) -> &'static str {
    match pmix_type {
        "PMIX_BOOL" => "bool",
        "PMIX_STRING" => "String",
        "PMIX_INT" | "PMIX_INT32" => "i32",
        "PMIX_UINT16" => "u16",
        "PMIX_UINT32" => "u32",
        "PMIX_UINT64" => "u64",
        "PMIX_SIZE" => "usize",
        "PMIX_FLOAT" => "f32",
        "PMIX_DOUBLE" => "f64",
        "PMIX_PID" => "Pid",
        "PMIX_TIME" => "Time",
        "PMIX_TIMEVAL" => "Timeval",
        "PMIX_STATUS" => "Status",
        "PMIX_PROC" => "Proc",
        "PMIX_PROC_RANK" => "Rank",
        "PMIX_BYTE_OBJECT" => "ByteObject",
        "PMIX_DATA_ARRAY" => "DataArray",
        "PMIX_ENVAR" => "Envar",
        "PMIX_SCOPE" => "Scope",
        "PMIX_DATA_RANGE" => "DataRange",
        "PMIX_PERSIST" => "Persistence",
        "PMIX_PROC_STATE" => "ProcState",
        "PMIX_PROC_CPUSET" => "Cpuset",
        "PMIX_TOPO" => "Topology",
        "PMIX_GEOMETRY" => "Geometry",
        "PMIX_DEVTYPE" => "DeviceType",
        "PMIX_LINK_STATE" => "LinkState",
        "PMIX_POINTER" => "Pointer",
        "PMIX_STOR_MEDIUM" => "StorageMedium",
        "PMIX_STOR_ACCESS" => "StorageAccessibility",
        "PMIX_STOR_PERSIST" => "StoragePersistence",
        "PMIX_STOR_ACCESS_TYPE" => "StorageAccessType",
        // Presence-only flags and attributes whose type depends on use carry any value.
        _ => "Value",
    }
}

fn const_ident(name: &str) -> String {
    name.strip_prefix("PMIX_").unwrap_or(name).to_string()
}

const GENERATED_HEADER: &str =
    "// @generated by `cargo xtask vectors` from spec-vectors/inventory; do not edit.\n";

fn attributes_rs(versions: &[Tsv; 2]) -> Result<String, String> {
    struct Row {
        key: String,
        openpmix_key: String,
        ty: String,
        status: String,
        section: String,
        in_v50: bool,
        in_draft: bool,
        /// The draft's type, when it differs from v5.0's.
        draft_ty: Option<String>,
    }
    let mut all: BTreeMap<String, Row> = BTreeMap::new();
    for (i, tsv) in versions.iter().enumerate() {
        let [name, key, okey, ty, status, section] =
            ["name", "key", "openpmix_key", "type", "status", "section"].map(|c| tsv.col(c));
        let (name, key, okey, ty, status, section) = (name?, key?, okey?, ty?, status?, section?);
        for r in &tsv.rows {
            let row = all.entry(r[name].clone()).or_insert_with(|| Row {
                key: r[key].clone(),
                openpmix_key: r[okey].clone(),
                ty: r[ty].clone(),
                status: r[status].clone(),
                section: r[section].clone(),
                in_v50: false,
                in_draft: false,
                draft_ty: None,
            });
            // The v5.0 row wins for the fields; the draft only adds presence.
            if i == 0 {
                row.in_v50 = true;
            } else {
                row.in_draft = true;
                if row.in_v50 && row.ty != r[ty] {
                    row.draft_ty = Some(r[ty].clone());
                }
            }
        }
    }
    let mut out = String::from(GENERATED_HEADER);
    out.push_str(
        "//! Every attribute of the standard (v5.0 and the 5.1 draft) as a typed constant.\n\n\
         use crate::model::attr::{Attr, AttrDef, AttrStatus, Presence};\n\
         use crate::model::*;\n\n",
    );
    for (name, r) in &all {
        let presence = match (r.in_v50, r.in_draft) {
            (true, true) => "Presence::Both",
            (true, false) => "Presence::V5_0Only",
            _ => "Presence::DraftOnly",
        };
        let status = match r.status.as_str() {
            "provisional" => "AttrStatus::Provisional",
            "deprecated" => "AttrStatus::Deprecated",
            _ => "AttrStatus::Active",
        };
        let openpmix_key = if r.openpmix_key == "-" {
            "None".to_string()
        } else {
            format!("Some({:?})", r.openpmix_key)
        };
        let type_expr = |t: &str| {
            if t.starts_with("PMIX_") {
                format!("Some(DataType::{})", const_ident(t))
            } else {
                "None".to_string()
            }
        };
        let data_type = type_expr(&r.ty);
        let draft_data_type = r
            .draft_ty
            .as_deref()
            .map_or("None".to_string(), |t| format!("Some({})", type_expr(t)));
        let _ = writeln!(
            out,
            "/// `{name}` (`{key}`), §{section}.\npub const {ident}: Attr<{rt}> = Attr::new(&AttrDef {{\n    name: {name:?},\n    key: {key:?},\n    openpmix_key: {openpmix_key},\n    data_type: {data_type},\n    draft_data_type: {draft_data_type},\n    status: {status},\n    section: {section:?},\n    presence: {presence},\n}});\n",
            ident = const_ident(name),
            rt = attr_rust_type(&r.ty),
            key = r.key,
            section = r.section,
        );
    }
    for (table, want) in [("V5_0", true), ("DRAFT", false)] {
        let _ = writeln!(
            out,
            "/// Every attribute declared in {}.\npub static {table}: &[&AttrDef] = &[",
            if want {
                "PMIx Standard v5.0"
            } else {
                "the 5.1 draft"
            }
        );
        for (name, r) in &all {
            if (want && r.in_v50) || (!want && r.in_draft) {
                let _ = writeln!(out, "    {}.def(),", const_ident(name));
            }
        }
        out.push_str("];\n\n");
    }
    out.pop();
    Ok(out)
}

fn constants_rs(tsvs: &[Tsv; 3]) -> Result<String, String> {
    let [openpmix, v50, draft] = tsvs;
    let (name_c, value_c, type_c, dep_c) = (
        openpmix.col("name")?,
        openpmix.col("value")?,
        openpmix.col("rust_type")?,
        openpmix.col("deprecated")?,
    );
    // rust type -> (name, value, deprecated, note)
    let mut by_type: BTreeMap<String, Vec<(String, i64, bool, &str)>> = BTreeMap::new();
    let mut known: BTreeSet<String> = BTreeSet::new();
    for r in &openpmix.rows {
        let value: i64 = r[value_c]
            .parse()
            .map_err(|_| format!("bad value for {}", r[name_c]))?;
        known.insert(r[name_c].clone());
        by_type.entry(r[type_c].clone()).or_default().push((
            r[name_c].clone(),
            value,
            r[dep_c] == "true",
            "",
        ));
    }
    // Constants the standard declares but OpenPMIx 4.2 lacks: their numbers are the spec's.
    for (tsv, note) in [(v50, "v5.0"), (draft, "5.1 draft")] {
        let (n, cat, sv) = (
            tsv.col("name")?,
            tsv.col("category")?,
            tsv.col("spec_value")?,
        );
        for r in &tsv.rows {
            if known.contains(&r[n]) {
                continue;
            }
            let Ok(value) = r[sv].parse::<i64>() else {
                continue;
            };
            let rust_type = match r[cat].as_str() {
                "status_error" | "event" => "Status",
                "data_type" => "DataType",
                "enum:pmix_group_opt_t" => "GroupOpt",
                "enum:pmix_group_operation_t" => "GroupOperation",
                "enum:pmix_fabric_operation_t" => "FabricOperation",
                other => {
                    return Err(format!(
                        "spec-only constant {} of unknown kind {other}",
                        r[n]
                    ));
                }
            };
            known.insert(r[n].clone());
            let note = if note == "v5.0" {
                "standard v5.0 only"
            } else {
                "5.1 draft only"
            };
            by_type.entry(rust_type.to_string()).or_default().push((
                r[n].clone(),
                value,
                false,
                note,
            ));
        }
    }

    let repr = |t: &str| -> Option<&'static str> {
        Some(match t {
            "Status" | "GroupOpt" | "GroupOperation" | "FabricOperation" => "i32",
            "DataType" | "IofChannel" | "Locality" | "StorageAccessType" => "u16",
            "ProcState" | "JobState" | "Scope" | "DataRange" | "Persistence" | "AllocDirective"
            | "CoordView" | "LinkState" | "BindEnvelope" => "u8",
            "InfoDirectives" | "Rank" => "u32",
            "DeviceType" | "StorageMedium" | "StorageAccessibility" | "StoragePersistence" => "u64",
            _ => return None,
        })
    };
    let strip = |t: &str, name: &str| -> String {
        let prefixes: &[&str] = match t {
            "ProcState" => &["PMIX_PROC_STATE_"],
            "JobState" => &["PMIX_JOB_STATE_"],
            "Scope" => &["PMIX_SCOPE_", "PMIX_"],
            "DataRange" => &["PMIX_RANGE_"],
            "Persistence" => &["PMIX_PERSIST_"],
            "IofChannel" => &["PMIX_FWD_"],
            "InfoDirectives" => &["PMIX_INFO_"],
            "AllocDirective" => &["PMIX_ALLOC_"],
            "CoordView" => &["PMIX_COORD_"],
            "LinkState" => &["PMIX_LINK_"],
            "BindEnvelope" => &["PMIX_CPUBIND_"],
            "Locality" => &["PMIX_LOCALITY_"],
            "DeviceType" => &["PMIX_DEVTYPE_"],
            "StorageMedium" => &["PMIX_STORAGE_MEDIUM_"],
            "StorageAccessibility" => &["PMIX_STORAGE_ACCESSIBILITY_"],
            "StoragePersistence" => &["PMIX_STORAGE_PERSISTENCE_"],
            "StorageAccessType" => &["PMIX_STORAGE_ACCESS_"],
            "Rank" => &["PMIX_RANK_"],
            "GroupOpt" | "GroupOperation" => &["PMIX_GROUP_"],
            "FabricOperation" => &["PMIX_FABRIC_"],
            _ => &["PMIX_"],
        };
        let s = prefixes
            .iter()
            .find_map(|p| name.strip_prefix(p))
            .unwrap_or(name);
        if s.starts_with(|c: char| c.is_ascii_digit()) {
            format!("_{s}")
        } else {
            s.to_string()
        }
    };

    let mut out = String::from(GENERATED_HEADER);
    out.push_str(
        "//! Named values of the standard's open code sets, with OpenPMIx 4.2.2's numbers.\n\n\
         use crate::model::*;\n\n",
    );
    for (t, items) in &by_type {
        if repr(t).is_none() {
            continue;
        }
        let _ = writeln!(out, "impl {t} {{");
        for (name, value, deprecated, note) in items {
            let mut doc = format!("`{name}`");
            if *deprecated {
                doc.push_str(" (deprecated alias, from `pmix_deprecated.h`)");
            }
            if !note.is_empty() {
                let _ = write!(doc, " ({note}; number from the standard's text)");
            }
            let _ = writeln!(
                out,
                "    /// {doc}.\n    pub const {}: {t} = {t}({value});",
                strip(t, name)
            );
        }
        // The table is an associated item, so `codes.rs`, which defines the type, reads it
        // as `Self::NAMES` without importing this file (which imports the type).
        let _ = writeln!(
            out,
            "\n    /// Every named `{t}`: (C name, value, deprecated alias), in header order.\n    pub(crate) const NAMES: &'static [(&'static str, {t}, bool)] = &["
        );
        for (name, _, deprecated, _) in items {
            let _ = writeln!(
                out,
                "        ({name:?}, {t}::{}, {deprecated}),",
                strip(t, name)
            );
        }
        out.push_str("    ];\n}\n\n");
    }
    for kind in ["limit", "version"] {
        for (name, value, _, _) in by_type.get(kind).into_iter().flatten() {
            // A build setting of the C headers, not a value of the standard.
            if name == "PMIX_HAVE_VISIBILITY" {
                continue;
            }
            let ty = if *value > i64::from(u32::MAX) {
                "u64"
            } else {
                "u32"
            };
            let _ = writeln!(
                out,
                "/// `{name}`.\npub const {}: {ty} = {value};",
                const_ident(name)
            );
        }
    }
    out = out.trim_end().to_string();
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed inventory and generated tables are what `cargo xtask vectors` makes from
    /// the reference material. Fails (never skips) when that material is missing: set
    /// `PMIX_SHARED_DIR` to where it is.
    #[test]
    fn inventory_is_fresh() {
        let root = crate::workspace_root();
        let shared = shared_dir(&root, None).expect("reference material present");
        let outputs = generate(&shared).expect("generation succeeds");
        let stale = stale_outputs(&root, &outputs);
        assert!(
            stale.is_empty(),
            "stale, run `cargo xtask vectors`: {stale:?}"
        );
    }

    #[test]
    fn classify_puts_every_constant_in_a_type() {
        assert_eq!(
            classify("pmix_status_t (int)", "PMIX_ERR_NOT_FOUND"),
            Some("Status")
        );
        assert_eq!(
            classify("coord / link", "PMIX_LINK_STATE"),
            Some("DataType")
        );
        assert_eq!(classify("coord / link", "PMIX_LINK_UP"), Some("LinkState"));
        assert_eq!(classify("nonsense", "PMIX_X"), None);
    }
}
