//! The vector format: one TOML file per behaviour of the standard (documented for authors in
//! `spec-vectors/README.md`).
//!
//! A vector names what it checks (section, retrieval rules, APIs, attributes, versions), sets
//! up a job (nodes and the ranks on each, what the host registers, what the host supports)
//! and scripts steps: each step is one API call by one or more processes, with the outcome
//! the standard requires. Values are typed: `{ uint32 = 4 }`, `{ string = "n0" }`.
//!
//! Loading checks everything a runner would otherwise trip over: unknown fields, unknown
//! attribute names, ranks outside the job, handles awaited before they exist. Every error
//! names the file and, where TOML gives one, the line and field.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use pmix::model::{Info, Nspace, Proc, Rank, Scope, Status, attr};
use serde::{Deserialize, Serialize};

mod call;
mod check;
mod cite;
mod expect;
mod saved;
mod value;
pub use call::{AppSpec, Call, CodeArg, QuerySpec};
pub use cite::check_citations;
pub use expect::{
    EventSpec, Expect, LookupSpec, OneOrMany, SUPPORT_LEVELS, SupportSpec, UpcallSpec,
};
pub(crate) use saved::step_refs;
pub use saved::{Saved, record_saved, run_presets};
pub(crate) use value::from_hex;
pub use value::{ArraySpec, CpusetSpec, EnvarSpec, GeometrySpec, ValueSpec};

/// A vector file, as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vector {
    /// Unique, and the file's path under `spec-vectors/vectors/` without `.toml`.
    #[serde(default)]
    pub id: String,
    /// What the vector shows, in one sentence.
    pub summary: String,
    /// The section of the standard, e.g. `v5.0 §6.2`.
    pub section: String,
    /// Retrieval rules checked (ids of `retrieval_rules.tsv`).
    #[serde(default)]
    pub rules: Vec<String>,
    /// APIs exercised beyond those the steps' calls imply.
    #[serde(default)]
    pub apis: Vec<String>,
    /// Versions of the standard the vector applies to (`v5.0`, `draft`).
    #[serde(default = "all_versions")]
    pub versions: Vec<String>,
    /// Per target (`rust`, `openpmix-4.2`, …): where and how the vector fails there, and why.
    #[serde(default)]
    pub expected_failure: BTreeMap<String, ExpectedFailure>,
    /// How long the whole vector may take, in seconds.
    #[serde(default = "default_timeout")]
    pub timeout_s: u64,
    #[serde(default)]
    pub setup: Setup,
    #[serde(rename = "step", default)]
    pub steps: Vec<Step>,
    /// The file's text, kept for [`crate::ablation`] (which runs a copy with an attribute
    /// taken out of it).
    #[serde(skip)]
    pub text: String,
    /// The attribute (by name) taken out of this copy: the harness leaves it out of what it
    /// registers and passes to `PMIx_server_init` too.
    #[serde(skip)]
    pub ablated: Option<String>,
}

/// A vector's known failure on one target: the step that fails, what that step sees there,
/// what kind of gap it is, and why. A run that fails anywhere else, or sees something else,
/// is a failure of its own, not this one.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExpectedFailure {
    /// The step that fails (1-based; 0 is the job's setup).
    pub step: usize,
    /// What that step sees: a status by name (`PMIX_ERR_NOT_FOUND`), or one of
    /// [`crate::outcome::Seen`]'s words (`value`, `timeout`, `crashed`, `refused`, `no such call`).
    pub seen: String,
    #[serde(default)]
    pub kind: FailureKind,
    pub reason: String,
    /// The failure comes in some runs and not in others (a race inside the target, as
    /// measured): a pass is then a pass, not a stale listing, the race may strike the listed
    /// step or a later one (that repeats the operation), and the baseline records the vector
    /// as `intermittent` so that neither outcome is a regression.
    #[serde(default)]
    pub intermittent: bool,
}

impl ExpectedFailure {
    /// Whether `seen`, what the listed step saw, is what this listing says: the same, or for
    /// a listing of an uninitialized status (`uninitialized: ...`), any status other than
    /// success.
    pub fn sees(&self, seen: &str) -> bool {
        if self.seen.starts_with("uninitialized: ") {
            let a_status = status_named(seen).is_ok() || seen.parse::<i32>().is_ok();
            return a_status && seen != "PMIX_SUCCESS";
        }
        self.seen == seen
    }
}

/// Why a target fails a vector: the parts of the report's departure table.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The implementation departs from the standard.
    #[default]
    Departure,
    /// The harness cannot yet drive this target through the vector (to be driven down to none).
    Harness,
    /// This crate does not implement the behaviour yet (the reason names the issue that
    /// brings it).
    Unimplemented,
    /// The target takes another path the standard allows (a library that watches
    /// heartbeats itself need not hand the host a monitor request): the vector checks one of
    /// the permitted behaviours, not a requirement.
    Allowed,
    /// The target's API has no call for what the vector does (the Rust API has no C
    /// structure helpers: its values own their data): not a departure from the standard's
    /// behaviour, which the target's other API (this crate's C ABI) is measured on.
    Inexpressible,
}

impl FailureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Departure => "departure",
            FailureKind::Harness => "harness",
            FailureKind::Unimplemented => "unimplemented",
            FailureKind::Allowed => "allowed",
            FailureKind::Inexpressible => "inexpressible",
        }
    }
}

fn all_versions() -> Vec<String> {
    vec!["v5.0".into(), "draft".into()]
}

fn default_timeout() -> u64 {
    10
}

/// The job a vector runs in.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// The job's namespace.
    #[serde(default = "default_nspace")]
    pub nspace: String,
    /// The nodes, each with its ranks; each node runs a server, each rank a client of it.
    #[serde(default = "default_nodes", rename = "node")]
    pub nodes: Vec<NodeSetup>,
    /// Register the usual job, node and process information (sizes, local peers, local and
    /// node ranks, hostnames, node ids, application 0), as a launcher would. `info` comes
    /// after it and wins on the same key.
    #[serde(default = "yes")]
    pub standard_info: bool,
    /// What the host registers with `PMIx_server_register_nspace`, beyond the standard info.
    #[serde(default)]
    pub info: Vec<InfoSpec>,
    #[serde(default)]
    pub host: HostSetup,
    /// Ranks that are registered but never start (their servers know them as local
    /// clients that have not connected).
    #[serde(default)]
    pub not_started: Vec<u32>,
    /// Ranks that start later: registered, and started by an `init` step of their own (their
    /// `PMIx_Init`), so that the step sees what connecting does.
    #[serde(default)]
    pub started_by_step: Vec<u32>,
    /// Ranks that run as another user: the user and group ids of
    /// `saved::other_ids` (`"$other_uid"`, `"$other_gid"`), with which the host registers
    /// them too. Only a target whose ranks' credentials the harness gives (this crate's, over
    /// its in-memory transport) can run them; a target of processes refuses the setup.
    #[serde(default)]
    pub other_user: Vec<u32>,
    /// Other jobs the host registers (no local processes): namespaces a client may ask
    /// about.
    #[serde(default, rename = "job")]
    pub jobs: Vec<JobSetup>,
    /// What the host passes every node's `PMIx_server_init`, beyond the harness's own
    /// (`PMIX_SERVER_TMPDIR`, `PMIX_SYSTEM_TMPDIR`, `PMIX_SERVER_NSPACE`, `PMIX_SERVER_RANK`,
    /// `PMIX_HOSTNAME`); a key given here wins.
    #[serde(default)]
    pub server_info: Vec<InfoSpec>,
}

/// Another job's namespace, registered after the vector's job with no local processes.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSetup {
    pub nspace: String,
    /// What the host registers for it (nothing but the namespace when empty).
    #[serde(default)]
    pub info: Vec<InfoSpec>,
    /// The nodes whose servers know it (every node when absent).
    #[serde(default)]
    pub nodes: Option<Vec<String>>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            nspace: default_nspace(),
            nodes: default_nodes(),
            standard_info: true,
            info: Vec::new(),
            host: HostSetup::default(),
            not_started: Vec::new(),
            started_by_step: Vec::new(),
            other_user: Vec::new(),
            jobs: Vec::new(),
            server_info: Vec::new(),
        }
    }
}

/// The values saved for `node` before the first step: its server's URI, temporary directory
/// and process id.
pub fn node_presets(node: &str, uri: &str, tmpdir: &str, pid: u32) -> Saved {
    Saved::from([
        (format!("uri_{node}"), uri.into()),
        (format!("tmpdir_{node}"), tmpdir.into()),
        (format!("pid_{node}"), pid.into()),
    ])
}

fn default_nspace() -> String {
    "vjob".into()
}

fn default_nodes() -> Vec<NodeSetup> {
    vec![NodeSetup {
        name: "n0".into(),
        ranks: vec![0, 1],
    }]
}

fn yes() -> bool {
    true
}

/// One node of the job.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSetup {
    pub name: String,
    pub ranks: Vec<u32>,
}

/// What the host environment supports.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSetup {
    /// The host answers direct-modex requests (`direct_modex` upcall).
    #[serde(default = "yes")]
    pub direct_modex: bool,
    /// The host completes fences that span nodes (`fence_nb` upcall).
    #[serde(default = "yes")]
    pub fence: bool,
    /// The host stores published data (`publish`, `lookup`, `unpublish` upcalls).
    #[serde(default = "yes")]
    pub publish: bool,
    /// Event codes the host does not carry to the other nodes' servers: its `notify_event`
    /// upcall answers `PMIX_ERR_UNREACH` for them, as a host whose network failed would.
    #[serde(default)]
    pub unrelayed: Vec<String>,
    /// Upcalls the host refuses, by their C type's name (one of [`REFUSABLE`]), each with the
    /// status it answers them.
    #[serde(default)]
    pub refuse: BTreeMap<String, String>,
    /// The host answers each group construction with its members (`PMIX_GROUP_MEMBERSHIP`,
    /// which v5.0 §17.3.29 lets it return): the processes it was handed, the job's wildcard
    /// spelled out, without those it knows have ended (ended by it, or vanished).
    #[serde(default)]
    pub group_membership: bool,
}

/// The upcalls a vector's host can be made to refuse (`setup.host.refuse`).
pub const REFUSABLE: [&str; 3] = [
    "pmix_server_register_events_fn_t",
    "pmix_server_iof_fn_t",
    "pmix_server_query_fn_t",
];

impl Default for HostSetup {
    fn default() -> Self {
        HostSetup {
            direct_modex: true,
            fence: true,
            publish: true,
            unrelayed: Vec::new(),
            refuse: BTreeMap::new(),
            group_membership: false,
        }
    }
}

/// An info: an attribute's name (`PMIX_JOB_SIZE`) or a key string, and a typed value.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct InfoSpec {
    pub key: String,
    #[serde(default = "true_value")]
    pub value: ValueSpec,
    /// Marked required (`PMIX_INFO_REQD`).
    #[serde(default)]
    pub required: bool,
}

fn true_value() -> ValueSpec {
    ValueSpec::Bool(true)
}

/// A rank as written in a vector.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RankSpec {
    Number(u32),
    Name(String),
}

/// One step of the script. (Unknown fields are refused by [`Call`]'s variants: serde cannot
/// deny them on a struct with a flattened field.)
#[derive(Clone, Debug, Deserialize)]
pub struct Step {
    /// Who calls: one rank, a list of ranks (they call at the same time), or `"all"`.
    #[serde(rename = "proc")]
    pub by: Callers,
    #[serde(flatten)]
    pub call: Call,
    /// Start the call and go on without waiting for it; an `await` step with this handle
    /// collects its outcome (for calls that complete only when another process acts, such
    /// as a group invitation and its joins).
    #[serde(default)]
    pub start: Option<String>,
    /// Keep the call's value (a string: a node map, a locality string) under this name; a
    /// later step's argument `"$NAME"` stands for it.
    #[serde(default)]
    pub save: Option<String>,
    /// The harness waits this many milliseconds before making the call: a vector that
    /// checks a call is held "as long as it takes" outlasts a target's own timer this way.
    #[serde(default)]
    pub delay_ms: u64,
    /// The outcome the standard requires, for every caller.
    #[serde(default)]
    pub expect: Expect,
}

/// The caller id of the server of the vector's node number `i` is `SERVER_CALLER + i`.
pub const SERVER_CALLER: u32 = 0xFFFF_0000;

/// The caller id of the vector's tool.
pub const TOOL_CALLER: u32 = 0xFFFE_0000;

/// How a caller is named in reports: `rank 3`, `server of node #0`, `tool`.
pub fn caller_name(id: u32) -> String {
    match id.checked_sub(SERVER_CALLER) {
        Some(node) => format!("server of node #{node}"),
        None if id == TOOL_CALLER => "tool".to_owned(),
        None => format!("rank {id}"),
    }
}

/// The callers of a step.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Callers {
    One(u32),
    Many(Vec<u32>),
    All(String),
}

/// A target process of a call: `{ rank = 3 }`, `{ rank = "wildcard" }`,
/// `{ nspace = "other", rank = 0 }`; `self` is the caller.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    #[serde(default)]
    pub nspace: Option<String>,
    pub rank: RankSpec,
}

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

impl Vector {
    /// The other jobs the server of `node` registers, with their infos.
    pub fn jobs_on(&self, node: &str) -> Result<Vec<(String, Vec<Info>)>, String> {
        self.setup
            .jobs
            .iter()
            .filter(|j| j.nodes.as_ref().is_none_or(|n| n.iter().any(|x| x == node)))
            .map(|j| {
                let info = j.info.iter().map(|i| i.to_info(&j.nspace));
                Ok((j.nspace.clone(), info.collect::<Result<Vec<_>, _>>()?))
            })
            .collect()
    }

    /// Every rank of the job, in order.
    pub fn ranks(&self) -> Vec<u32> {
        let mut r: Vec<u32> = self
            .setup
            .nodes
            .iter()
            .flat_map(|n| n.ranks.iter().copied())
            .collect();
        r.sort_unstable();
        r
    }

    /// The user and group ids rank `rank` runs as: the harness's own, or another user's for
    /// a rank of `setup.other_user`.
    pub fn credentials(&self, rank: u32) -> (u32, u32) {
        let (uid, gid) = pmix::transport::uid_gid();
        if self.setup.other_user.contains(&rank) {
            saved::other_ids(uid, gid)
        } else {
            (uid, gid)
        }
    }

    /// The ranks whose client starts with the job (not those that never start, nor those an
    /// `init` step starts).
    pub fn started(&self) -> Vec<u32> {
        self.ranks()
            .into_iter()
            .filter(|r| !self.setup.not_started.contains(r))
            .filter(|r| !self.setup.started_by_step.contains(r))
            .collect()
    }

    /// The callers of a step: ranks, or a node's server ([`SERVER_CALLER`] + its index).
    pub fn callers(&self, s: &Step) -> Vec<u32> {
        if let Some(i) = self.server_of(s) {
            return vec![SERVER_CALLER + u32::try_from(i).unwrap_or(0)];
        }
        if self.by_tool(s) {
            return vec![TOOL_CALLER];
        }
        match &s.by {
            Callers::One(r) => vec![*r],
            Callers::Many(v) => v.clone(),
            Callers::All(_) => self.started(),
        }
    }

    /// Whether the vector's tool makes the step's call (`proc = "tool"`).
    pub fn by_tool(&self, s: &Step) -> bool {
        matches!(&s.by, Callers::All(a) if a == "tool")
    }

    /// The index of the node whose server makes the step's call (`proc = "server:NODE"`).
    pub fn server_of(&self, s: &Step) -> Option<usize> {
        let Callers::All(a) = &s.by else {
            return None;
        };
        let name = a.strip_prefix("server:")?;
        self.setup.nodes.iter().position(|n| n.name == name)
    }
}

fn attribute(name: &str) -> Option<&'static attr::AttrDef> {
    attr::by_name(name)
}

/// The key string of `name`: an attribute's name (`PMIX_JOB_SIZE`) or a literal key.
pub fn key_string(name: &str) -> Result<String, String> {
    if name.starts_with("PMIX_") {
        return attribute(name)
            .map(|d| d.key.to_owned())
            .ok_or_else(|| format!("no attribute is named {name}"));
    }
    // Longer than PMIX_MAX_KEYLEN (511) is allowed: a vector may check that it is refused.
    if name.is_empty() || name.len() > 4096 || name.contains('\0') {
        return Err(format!("\"{name}\" is not a valid key"));
    }
    Ok(name.to_owned())
}

/// A status by its standard name, or by its number.
pub fn status_named(name: &str) -> Result<Status, String> {
    // A code outside the standard's constants (a user-defined event code) is written as its
    // number.
    if let Ok(code) = name.parse::<i32>() {
        return Ok(Status(code));
    }
    Status::from_name(name).ok_or_else(|| format!("no status is named {name}"))
}

/// A scope by name: `local`, `remote`, `global`, `internal`, `undef`, or a number.
pub fn scope_named(name: &str) -> Result<Scope, String> {
    Ok(match name {
        "undef" => Scope(0),
        "local" => Scope::LOCAL,
        "remote" => Scope::REMOTE,
        "global" => Scope::GLOBAL,
        "internal" => Scope::INTERNAL,
        other => Scope(
            other
                .parse()
                .map_err(|_| format!("\"{other}\" is not a scope"))?,
        ),
    })
}

impl RankSpec {
    /// The rank; `self_rank` stands for `"self"`.
    pub fn to_rank(&self, self_rank: Rank) -> Result<Rank, String> {
        match self {
            RankSpec::Number(n) => Ok(Rank(*n)),
            RankSpec::Name(n) => match n.as_str() {
                "wildcard" => Ok(Rank::WILDCARD),
                "undef" => Ok(Rank::UNDEF),
                "local_peers" => Ok(Rank::LOCAL_PEERS),
                "self" => Ok(self_rank),
                other => Err(format!("\"{other}\" is not a rank")),
            },
        }
    }
}

impl TargetSpec {
    /// The process named, relative to a caller of rank `self_rank` in `nspace`.
    pub fn to_proc(&self, nspace: &str, self_rank: Rank) -> Result<Proc, String> {
        let ns = self.nspace.as_deref().unwrap_or(nspace);
        let rank = self.rank.to_rank(self_rank)?;
        Proc::try_new(ns, rank).map_err(|e| e.to_string())
    }
}

impl InfoSpec {
    /// The info's key and the keys of the infos nested in its value (an info array, or a
    /// data array of infos), depth first.
    pub fn keys(&self) -> Vec<&str> {
        let mut out = vec![self.key.as_str()];
        let mut stack = vec![&self.value];
        while let Some(v) = stack.pop() {
            match v {
                ValueSpec::InfoArray(infos) => {
                    for i in infos {
                        out.push(&i.key);
                        stack.push(&i.value);
                    }
                }
                ValueSpec::Array(a) => stack.extend(&a.items),
                _ => {}
            }
        }
        out
    }

    pub fn to_info(&self, nspace: &str) -> Result<Info, String> {
        let key = key_string(&self.key)?;
        let mut info = Info::with_key(&key, self.value.to_value(nspace)?)
            .map_err(|e| format!("key \"{key}\": {e}"))?;
        if self.required {
            info.flags = pmix::model::InfoDirectives::REQD;
        }
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uninitialized_status_is_seen_as_any_status_but_success() {
        let listed = |seen: &str| ExpectedFailure {
            step: 1,
            seen: seen.to_owned(),
            kind: FailureKind::Departure,
            reason: "r".to_owned(),
            intermittent: false,
        };
        let garbage = listed("uninitialized: f returns a status nothing sets");
        assert!(garbage.sees("PMIX_OPERATION_SUCCEEDED") && garbage.sees("32"));
        assert!(!garbage.sees("PMIX_SUCCESS"));
        assert!(!garbage.sees("value: 3") && !garbage.sees("crashed"));
        let exact = listed("PMIX_OPERATION_SUCCEEDED");
        assert!(exact.sees("PMIX_OPERATION_SUCCEEDED") && !exact.sees("32"));
    }

    fn parse(text: &str) -> Result<Vector, String> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("vec-test-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let f = dir.join("t.toml");
        std::fs::write(&f, text).map_err(|e| e.to_string())?;
        load_file(&f, "t").map_err(|e| e.message)
    }

    const GOOD: &str = r#"
summary = "job size"
section = "v5.0 §6.1"
rules = ["RJ-01"]

[[step]]
proc = "all"
call = "get"
target = { rank = "wildcard" }
key = "PMIX_JOB_SIZE"
expect.value = { uint32 = 2 }
"#;

    #[test]
    fn a_vector_loads_with_defaults() {
        let v = parse(GOOD).unwrap();
        assert_eq!(v.id, "t");
        assert_eq!(v.ranks(), vec![0, 1]);
        assert_eq!(v.callers(&v.steps[0]), vec![0, 1]);
        assert_eq!(v.steps[0].call.api(), Some("PMIx_Get"));
        assert_eq!(
            v.steps[0].call.attributes(),
            vec!["PMIX_JOB_SIZE".to_owned()]
        );
    }

    /// A vector whose rank 1 starts at an `init` step, with `steps` after the setup.
    fn late_start(steps: &str) -> Result<Vector, String> {
        parse(&format!(
            "summary = \"late\"\nsection = \"v5.0 §4.3\"\n\n[setup]\nstarted_by_step = [1]\n{steps}"
        ))
    }

    #[test]
    fn a_rank_started_by_a_step_calls_only_after_its_init() {
        let init = "[[step]]\nproc = 1\ncall = \"init\"\n";
        let commit = "[[step]]\nproc = 1\ncall = \"commit\"\n";
        let v = late_start(&format!("{init}{commit}")).unwrap();
        assert_eq!(v.started(), vec![0], "rank 1 does not start with the job");
        assert_eq!(v.steps[0].call.api(), Some("PMIx_Init"));
        let early = late_start(&format!("{commit}{init}")).unwrap_err();
        assert!(early.contains("does not run a client"), "{early}");
        let twice = late_start(&format!("{init}{init}")).unwrap_err();
        assert!(twice.contains("started already"), "{twice}");
        let other = late_start("[[step]]\nproc = 0\ncall = \"init\"\n").unwrap_err();
        assert!(other.contains("started_by_step"), "{other}");
    }

    const API_CALLS: &str = r#"
summary = "events and a query"
section = "v5.0 §10.1"

[[step]]
proc = 0
call = "register_event_handler"
handler = "h"
codes = ["PMIX_MODEL_DECLARED"]

[[step]]
proc = 0
call = "query"
nb = true
queries = [{ keys = ["PMIX_QUERY_NAMESPACES"], qualifiers = [{ key = "PMIX_NSPACE", value = { string = "vjob" } }] }]

[[step]]
proc = 0
call = "events"
handler = "h"
count = 1
expect.events = [{ status = "PMIX_MODEL_DECLARED", source = { rank = 1 } }]
"#;

    #[test]
    fn api_calls_name_their_apis_and_attributes() {
        let v = parse(API_CALLS).unwrap();
        assert_eq!(v.steps[0].call.api(), Some("PMIx_Register_event_handler"));
        assert_eq!(v.steps[1].call.api(), Some("PMIx_Query_info_nb"));
        assert_eq!(
            v.steps[1].call.attributes(),
            vec!["PMIX_QUERY_NAMESPACES".to_owned(), "PMIX_NSPACE".to_owned()]
        );
        assert_eq!(v.steps[2].call.api(), None);
        let e = parse(&API_CALLS.replace("handler = \"h\"\ncount", "handler = \"x\"\ncount"))
            .unwrap_err();
        assert!(
            e.contains("step 3") && e.contains("never registered"),
            "{e}"
        );
        let e = parse(&API_CALLS.replace("PMIX_QUERY_NAMESPACES", "PMIX_QUERY_NOPE")).unwrap_err();
        assert!(e.contains("PMIX_QUERY_NOPE"), "{e}");
    }

    #[test]
    fn an_api_call_travels_to_a_child_unchanged() {
        // A library target's rank resolves the step it receives as JSON.
        let v = parse(API_CALLS).unwrap();
        let call = &v.steps[1].call;
        let json = serde_json::to_string(call).unwrap();
        let back: Call = serde_json::from_str(&json).unwrap();
        let here = crate::api::resolve(call, "vjob", 0).unwrap();
        let there = crate::api::resolve(&back, "vjob", 0).unwrap();
        assert_eq!(format!("{here:?}"), format!("{there:?}"));
        assert!(matches!(
            there,
            Some(crate::api::ApiCall::Query { nb: true, .. })
        ));
    }

    #[test]
    fn a_started_call_is_awaited_by_its_one_caller() {
        let started = r#"
summary = "a lookup started before the publish"
section = "v5.0 §9.1.3"

[[step]]
proc = 1
call = "lookup"
start = "l"
keys = ["k"]

[[step]]
proc = 0
call = "publish"
info = [{ key = "k", value = { uint8 = 1 } }]

[[step]]
proc = 1
call = "await"
handle = "l"
"#;
        let v = parse(started).unwrap();
        assert_eq!(v.steps[0].start.as_deref(), Some("l"));
        let e = parse(&started.replace(
            "proc = 1\ncall = \"lookup\"",
            "proc = [0, 1]\ncall = \"lookup\"",
        ))
        .unwrap_err();
        assert!(e.contains("step 1") && e.contains("one caller"), "{e}");
        let e = parse(&started.replace(
            "start = \"l\"\n",
            "start = \"l\"\nexpect.status = \"PMIX_SUCCESS\"\n",
        ))
        .unwrap_err();
        assert!(e.contains("at its `await`"), "{e}");
        let vanish = started.replace(
            "call = \"lookup\"\nstart = \"l\"\nkeys = [\"k\"]",
            "call = \"vanish\"\nstart = \"l\"",
        );
        let e = parse(&vanish).unwrap_err();
        assert!(e.contains("only an API call"), "{e}");
    }

    #[test]
    fn expected_upcalls_are_checked_where_they_are_written() {
        let fence = r#"
summary = "a fence reaches the host"
section = "v5.0 §5.2.1"

[[step]]
proc = "all"
call = "fence"
expect.upcalls = [{ upcall = "pmix_server_fencenb_fn_t", procs = [{ rank = "wildcard" }], info = [{ key = "PMIX_COLLECT_DATA" }], keys = ["PMIX_TIMEOUT"] }]
"#;
        let v = parse(fence).unwrap();
        let u = &v.steps[0].expect.upcalls[0];
        assert_eq!(u.upcall, "pmix_server_fencenb_fn_t");
        assert_eq!((u.procs.len(), u.info.len(), u.keys.len()), (1, 1, 1));
        let e = parse(&fence.replace("PMIX_TIMEOUT", "PMIX_NO_SUCH_KEY")).unwrap_err();
        assert!(
            e.contains("expect.upcalls") && e.contains("PMIX_NO_SUCH_KEY"),
            "{e}"
        );
        let e = parse(&fence.replace("procs = [", "prox = [")).unwrap_err();
        assert!(e.contains("prox"), "{e}");
        let started = fence.replace("call = \"fence\"", "call = \"fence\"\nstart = \"f\"");
        let e = parse(&started.replace("proc = \"all\"", "proc = 0")).unwrap_err();
        assert!(e.contains("expected at its `await`"), "{e}");
    }

    #[test]
    fn bad_vectors_name_the_line_and_field() {
        let unknown_field = GOOD.replace("key = ", "kee = ");
        let e = parse(&unknown_field).unwrap_err();
        assert!(e.contains("line") && e.contains("kee"), "{e}");
        let bad_attr = GOOD.replace("PMIX_JOB_SIZE", "PMIX_JOB_SIZ");
        let e = parse(&bad_attr).unwrap_err();
        assert!(e.contains("step 1") && e.contains("PMIX_JOB_SIZ"), "{e}");
        let bad_rank = GOOD.replace("proc = \"all\"", "proc = 7");
        let e = parse(&bad_rank).unwrap_err();
        assert!(e.contains("field `proc`") && e.contains("rank 7"), "{e}");
        let bad_type = GOOD.replace("{ uint32 = 2 }", "{ uint33 = 2 }");
        let e = parse(&bad_type).unwrap_err();
        assert!(e.contains("line"), "{e}");
        let bad_status = format!("{GOOD}expect.status = \"PMIX_ERR_NOPE\"\n");
        let e = parse(&bad_status).unwrap_err();
        assert!(e.contains("PMIX_ERR_NOPE"), "{e}");
        let dangling = GOOD.replace("call = \"get\"", "call = \"await\"\nhandle = \"h\"");
        assert!(parse(&dangling).is_err());
    }

    /// An expected failure names what it saw: a wrong value, a timeout, a crash, a refusal or
    /// missing upcalls by themselves are not enough.
    #[test]
    fn an_expected_failure_names_the_value_or_the_timeout_it_saw() {
        let listed = |seen: &str| {
            GOOD.replace(
                "[[step]]",
                &format!(
                    "[expected_failure]\nrust = {{ step = 1, seen = \"{seen}\", reason = \"r\" }}\n[[step]]"
                ),
            )
        };
        for bare in [
            "value",
            "timeout",
            "value: ",
            "timeout:  ",
            "crashed",
            "refused",
            "upcalls",
            "upcalls: ",
        ] {
            let e = parse(&listed(bare)).unwrap_err();
            assert!(e.contains("with what was seen"), "{bare}: {e}");
        }
        for named in [
            "value: Uint32(3)",
            "timeout: PMIx_Get incomplete after 10 s",
            "PMIX_ERR_NOT_FOUND",
            "crashed: rank 1 killed by SIGSEGV",
            "upcalls: fence_nb missing",
            "no such call",
        ] {
            assert!(parse(&listed(named)).is_ok(), "{named}");
        }
    }

    const SERVER_STEPS: &str = r#"
summary = "a server's step and a client's step use the value the server saved"
section = "v5.0 §16.2.17"

[[step]]
proc = "server:n0"
call = "server_generate_locality_string"
cpus = "0"
save = "here"

[[step]]
proc = 0
call = "get_relative_locality"
locality1 = "$here"
locality2 = "$here"
"#;

    #[test]
    fn servers_are_callers_of_their_own_calls() {
        let v = parse(SERVER_STEPS).unwrap();
        assert_eq!(v.server_of(&v.steps[0]), Some(0));
        assert_eq!(v.callers(&v.steps[0]), vec![SERVER_CALLER]);
        assert_eq!(caller_name(SERVER_CALLER), "server of node #0");
        assert_eq!(
            v.steps[0].call.api(),
            Some("PMIx_server_generate_locality_string")
        );
        assert_eq!(v.server_of(&v.steps[1]), None);

        let unknown_node = SERVER_STEPS.replace("server:n0", "server:n9");
        let e = parse(&unknown_node).unwrap_err();
        assert!(e.contains("step 1") && e.contains("server:n9"), "{e}");
        let client_makes_server_call = SERVER_STEPS.replacen("proc = \"server:n0\"", "proc = 0", 1);
        let e = parse(&client_makes_server_call).unwrap_err();
        assert!(e.contains("server:NODE"), "{e}");
        let server_makes_client_call = SERVER_STEPS.replace("proc = 0", "proc = \"server:n0\"");
        let e = parse(&server_makes_client_call).unwrap_err();
        assert!(
            e.contains("step 2") && e.contains("only the calls of a server"),
            "{e}"
        );
        let tool = "[[step]]\nproc = \"tool\"\ncall = \"tool_init\"\ninfo = [{ key = \"PMIX_SERVER_URI\", value = { string = \"$uri_n0\" } }]\n";
        let v = parse(&format!("{SERVER_STEPS}{tool}")).unwrap();
        assert!(v.by_tool(&v.steps[2]));
        assert_eq!(v.callers(&v.steps[2]), vec![TOOL_CALLER]);
        let e = parse(&format!("{SERVER_STEPS}{}", tool.replace("\"tool\"", "0"))).unwrap_err();
        assert!(e.contains("step 3") && e.contains("\"tool\""), "{e}");
        let unsaved = SERVER_STEPS.replace("save = \"here\"", "");
        let e = parse(&unsaved).unwrap_err();
        assert!(
            e.contains("step 2") && e.contains("no earlier step saves here"),
            "{e}"
        );
    }

    const SUPPORT: &str = r#"
summary = "a pack and its unpack"
section = "v5.0 §11.3.1, §11.3.2"
apis = ["PMIx_Data_unpack"]

[[step]]
proc = 0
call = "data_pack"
values = { array = { of = "PMIX_UINT32", items = [{ uint32 = 1 }] } }

[[step]]
proc = 0
call = "string"
function = "PMIx_Data_type_string"
arg = "PMIX_UINT32"
expect.starts_with = ""
"#;

    #[test]
    fn support_calls_name_every_api_they_make() {
        let v = parse(SUPPORT).unwrap();
        assert_eq!(v.steps[0].call.api(), Some("PMIx_Data_pack"));
        assert_eq!(v.steps[0].call.more_apis(), ["PMIx_Data_unpack"]);
        assert_eq!(v.steps[1].call.api(), Some("PMIx_Data_type_string"));
        let unnamed = SUPPORT.replace("apis = [\"PMIx_Data_unpack\"]\n", "");
        let e = parse(&unnamed).unwrap_err();
        assert!(
            e.contains("step 1") && e.contains("PMIx_Data_unpack"),
            "{e}"
        );
        let e = parse(&SUPPORT.replace("PMIx_Data_type_string", "PMIx_Nope_string")).unwrap_err();
        assert!(
            e.contains("step 2") && e.contains("PMIx_Nope_string"),
            "{e}"
        );
        let e =
            parse(&SUPPORT.replace("arg = \"PMIX_UINT32\"", "arg = \"PMIX_GLOBAL\"")).unwrap_err();
        assert!(e.contains("PMIX_GLOBAL"), "{e}");
        let e = parse(&SUPPORT.replace("PMIX_UINT32\", items", "PMIX_TOPO\", items")).unwrap_err();
        assert!(e.contains("step 1"), "{e}");
    }
}
