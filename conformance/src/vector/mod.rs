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

use pmix::model::{Info, Nspace, Rank, attr};
use serde::{Deserialize, Serialize};

mod call;
mod check;
mod cite;
mod expect;
mod load;
mod names;
mod saved;
mod value;
pub use call::{AppSpec, Call, CodeArg, QuerySpec};
pub use cite::check_citations;
pub use expect::{
    EventSpec, Expect, LookupSpec, OneOrMany, SUPPORT_LEVELS, SupportSpec, UpcallSpec,
};
pub use load::{VectorError, load_dir, load_file, parse};
use names::attribute;
pub use names::{key_string, scope_named, status_named};
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

#[cfg(test)]
mod tests;
