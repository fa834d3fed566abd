//! How much of the standard the behavioural vectors cover, per version and per target, in
//! four measures:
//!
//! - **named**: a vector names the item (calls the API or lists it under `apis`, uses the
//!   attribute as a key, directive, qualifier or registered value, names the rule);
//! - **passing**: a vector that passes on the target names it;
//! - **forwarded**: a vector that passes on the target sees a host handed the item: an upcall
//!   it expects, an attribute such an upcall carries;
//! - **verified**: a vector that passes on the target *observes* the item's effect, and for
//!   an attribute (or an attribute × API pair) [`crate::ablation`] proved it: the vector
//!   fails there once the attribute is taken away; for an API (upcalls included) or a
//!   retrieval rule, [`crate::mutation`] proved it: a mutant of its code was caught and none
//!   survives unexplained. Below, what a vector is credited with. A step
//!   observes when its expectation goes beyond success: a value, a lookup's data, results, a
//!   query's answers, events, the host's upcalls, a locality's bits, a text's prefix, or a
//!   status other than `PMIX_SUCCESS` (a `value_type` alone does not count, nor does a text
//!   only required to be non-empty). An observing step verifies its API, the attributes it uses
//!   and those its expectation names, the upcalls it expects, and the earlier steps whose
//!   effect it observes: a get verifies the puts, commits, fences and namespace
//!   (de)registrations before it, a server's direct-modex request the commits and client
//!   deregistrations, a server call the server's finalization, a lookup the publishes and
//!   unpublishes of its keys, an `events` step its handler's registration, the notifications
//!   before it whose status it expects and the source's call that raises the event (a group
//!   invitation, join or leave),
//!   an `await` the call it collects, and any step the earlier step whose value it uses
//!   (`"$NAME"` of a `save = "NAME"`), each in turn with the steps whose effect *it* sees (a
//!   get sees a namespace registered with a saved node map, and so the step that made the map);
//!   and the calls the harness makes to set every vector's job up (see [`SETUP_APIS`]), whose
//!   effect every observed value depends on. The generated `attribute-types/` vectors are only
//!   a type's round trip: they name and pass, never verify. The retrieval rules a vector names
//!   are verified when it passes and observes anything.
//!
//! Beyond single items, the standard lists for many APIs the attributes an implementation
//! is *required* to support with them (the inventory's `required_for` column). Such a pair
//! is named when a vector passes the attribute to that API, or to its blocking or
//! non-blocking twin (`PMIx_Fence` and `PMIx_Fence_nb` share their description of the
//! attribute), and verified when an observing step does. Registration counts as
//! `PMIx_server_register_nspace`: every key the harness registers for a vector's jobs,
//! nested arrays included, verified where a step of the vector observes that key's value (an
//! array, such as `PMIX_NODE_INFO_ARRAY`, where it observes a key the array carries).
//! `PMIx_server_init` pairs are the harness's infos and the vector's `server_info`, the
//! latter verified when the vector observes anything. Pairs whose API is a host upcall or a
//! structure are not counted here: they are the host's side, like the upcalls line. Nor are
//! `PMIX_USERID` and `PMIX_GRPID`: the standard requires the *library* to add the
//! requester's ids to what it passes the host (Log, Query, credentials), so they are seen by
//! a host, not passed by a caller.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::ablation::Proof;
use crate::inventory::{Inventory, Standard, Version};
use crate::mutation::Mutation;
use crate::outcome::Outcome;
use crate::outcome::Row;
use crate::vector::{Call, RankSpec, Step, Vector};

/// A set of items of the standard: names of APIs (host upcalls included) and attributes,
/// ids of retrieval rules, and (API, attribute) pairs.
#[derive(Debug, Default, Clone)]
pub struct Covered {
    pub apis: BTreeSet<String>,
    pub attributes: BTreeSet<String>,
    pub rules: BTreeSet<String>,
    /// (API, attribute name): the attribute passed to the API.
    pub pairs: BTreeSet<(String, String)>,
}

impl Covered {
    fn extend(&mut self, other: &Covered) {
        self.apis.extend(other.apis.iter().cloned());
        self.attributes.extend(other.attributes.iter().cloned());
        self.rules.extend(other.rules.iter().cloned());
        self.pairs.extend(other.pairs.iter().cloned());
    }

    /// The items of one step: its API, the upcalls it expects the host to be handed, the
    /// attributes it uses, and each (API, attribute).
    fn add_step(&mut self, step: &Step) {
        for u in &step.expect.upcalls {
            self.apis.insert(u.upcall.clone());
            self.apis.extend(
                HOST_ANSWERS
                    .iter()
                    .filter(|(upcall, _)| *upcall == u.upcall)
                    .map(|(_, api)| (*api).to_owned()),
            );
        }
        let used = step.call.attributes();
        // A composite step (a pack with its unpack, an unload with its load) makes each of
        // its calls, and what it observes depends on all of them.
        self.apis
            .extend(step.call.more_apis().into_iter().map(str::to_owned));
        // A compression's `restored` result is what decompressing it gave back.
        if matches!(step.call, Call::DataCompress { .. })
            && step.expect.results.iter().any(|i| i.key == "restored")
        {
            self.apis.insert("PMIx_Data_decompress".to_owned());
        }
        if let Some(api) = step.call.api() {
            self.apis.insert(api.to_owned());
            for a in &used {
                self.pairs.insert((api.to_owned(), a.clone()));
            }
        }
        self.attributes.extend(used);
    }
}

/// What one vector names, what it sees forwarded to a host, and what it verifies when it
/// passes. Its verified attributes and pairs are *credited* only: [`crate::ablation`] proves
/// them per target.
#[derive(Debug, Default)]
pub struct Items {
    pub named: Covered,
    pub forwarded: Covered,
    pub verified: Covered,
}

/// The calls the harness makes on every target to set a vector's job up, before its first
/// step: each node's server is initialised, registers the job and its clients and sets up
/// each client's environment, and each rank initialises from that environment (on `rust`
/// too: its in-memory clients take their identity and buffer type from it).
pub const SETUP_APIS: [&str; 5] = [
    "PMIx_server_init",
    "PMIx_server_register_nspace",
    "PMIx_server_register_client",
    "PMIx_server_setup_fork",
    "PMIx_Init",
];

/// Upcalls the harness's host answers, on every target, with a call to a server: the
/// direct-modex request for a process of another node is answered with that node's
/// `PMIx_server_dmodex_request`, so a step that expects the upcall and observes the value
/// fetched sees that call's effect.
pub const HOST_ANSWERS: [(&str, &str); 1] =
    [("pmix_server_dmodex_req_fn_t", "PMIx_server_dmodex_request")];

/// Whether a step's expectation observes more than success (see the module's doc).
pub fn observes(step: &Step) -> bool {
    let e = &step.expect;
    let status_beyond_success = e
        .status
        .as_ref()
        .is_some_and(|s| s.to_vec().iter().any(|n| n != "PMIX_SUCCESS"));
    e.value.is_some()
        || !e.value_any.is_empty()
        || !e.data.is_empty()
        || !e.results.is_empty()
        || !e.result_keys.is_empty()
        || !e.supports.is_empty()
        || e.events.as_ref().is_some_and(|ev| !ev.is_empty())
        || !e.upcalls.is_empty()
        // A text's prefix is observed; "any text that is not empty" is not.
        || e.starts_with.as_ref().is_some_and(|s| !s.is_empty())
        || !e.bits_set.is_empty()
        || e.any_error
        || status_beyond_success
}

/// The attribute names a step's expectation names: its results, a query's answer keys, the
/// information events carry and the results handed on with them, the infos of an
/// info-array value.
fn expected_attributes(step: &Step) -> Vec<String> {
    let e = &step.expect;
    let mut keys: Vec<&str> = Vec::new();
    keys.extend(e.results.iter().flat_map(|i| i.keys()));
    keys.extend(e.result_keys.iter().map(String::as_str));
    for sp in &e.supports {
        keys.push(&sp.level);
        keys.extend(sp.attributes.iter().map(String::as_str));
    }
    for ev in e.events.iter().flatten() {
        keys.extend(ev.results.iter().flat_map(|i| i.keys()));
        keys.extend(ev.info.iter().flat_map(|i| i.keys()));
    }
    for d in &e.data {
        keys.push(&d.key);
    }
    for u in &e.upcalls {
        keys.extend(u.info.iter().flat_map(|i| i.keys()));
        keys.extend(u.keys.iter().map(String::as_str));
        keys.extend(u.asked.iter().map(String::as_str));
    }
    keys.into_iter()
        .filter_map(pmix::model::attr::by_name)
        .map(|d| d.name.to_owned())
        .collect()
}

/// The earlier steps whose effect step `at` sees directly (see the module's doc).
fn producers(v: &Vector, at: usize) -> Vec<usize> {
    let step = &v.steps[at];
    let before = 0..at;
    // A step that uses a value an earlier step saved sees that step's output.
    let refs = crate::vector::step_refs(step);
    let mut out: Vec<usize> = before
        .clone()
        .filter(|&i| v.steps[i].save.as_ref().is_some_and(|n| refs.contains(n)))
        .collect();
    out.extend(before.clone().filter(|&i| sees(step, &v.steps[i])));
    // What the tool does reaches the servers its connection steps left it with (v5.0
    // §18.5): the servers it lists (which do not depend on which one is primary), and
    // whether its calls find a primary server.
    if v.by_tool(step) {
        let lists = matches!(step.call, Call::ToolGetServers);
        out.extend(before.filter(|&i| {
            v.by_tool(&v.steps[i])
                && match v.steps[i].call {
                    Call::ToolAttachToServer { .. }
                    | Call::ToolConnectToServer { .. }
                    | Call::ToolDisconnect => true,
                    Call::ToolSetServer { .. } => !lists,
                    _ => false,
                }
        }));
    }
    // An expected event whose source is the caller of an earlier step that raises it.
    if let Some(events) = &step.expect.events {
        for ev in events {
            let Some(rank) = ev.source.as_ref().and_then(|s| match (&s.nspace, &s.rank) {
                (None, RankSpec::Number(r)) => Some(*r),
                _ => None,
            }) else {
                continue;
            };
            out.extend((0..at).filter(|&i| {
                let earlier = &v.steps[i];
                raises(&earlier.call).contains(&ev.status.as_str())
                    && v.callers(earlier).contains(&rank)
            }));
        }
    }
    out
}

/// The events the standard has a call raise at other processes (v5.0 §14.2): an invitation
/// `PMIX_GROUP_INVITED` at the invitees, a join the leader's `PMIX_GROUP_INVITE_ACCEPTED` or
/// `_DECLINED`, a leave `PMIX_GROUP_LEFT` at the other members.
fn raises(call: &Call) -> &'static [&'static str] {
    match call {
        Call::GroupInvite { .. } => &["PMIX_GROUP_INVITED"],
        Call::GroupJoin { .. } => &["PMIX_GROUP_INVITE_ACCEPTED", "PMIX_GROUP_INVITE_DECLINED"],
        Call::GroupLeave { .. } => &["PMIX_GROUP_LEFT"],
        _ => &[],
    }
}

/// Whether `call` sees the effect of the earlier step `earlier`: a get the data put,
/// committed, fenced, registered, deregistered or delivered as inventory before it, a server's direct-modex request
/// the data committed or purged with the client's deregistration, a lookup the publishes and
/// unpublishes of its keys, an `events` step its handler's registration and the
/// notifications, an `iof_output` step its pull, its deregistration and the output
/// delivered, an `await` the call it collects, a server's call its finalization.
fn sees(step: &Step, earlier: &Step) -> bool {
    let call = &step.call;
    // A server's call after its finalization sees that finalization.
    if matches!(earlier.call, Call::ServerFinalize)
        && call.api().is_some_and(|a| a.starts_with("PMIx_server"))
    {
        return true;
    }
    match call {
        Call::Get { .. } => matches!(
            earlier.call,
            Call::Put { .. }
                | Call::StoreInternal { .. }
                | Call::Commit
                | Call::Fence { .. }
                | Call::ServerRegisterNspace { .. }
                | Call::ServerDeregisterNspace { .. }
                | Call::ServerRegisterResources { .. }
                | Call::ServerDeregisterResources { .. }
                | Call::ServerDeliverInventory { .. }
        ),
        Call::ServerDmodexRequest { .. } => matches!(
            earlier.call,
            Call::Put { .. } | Call::Commit | Call::ServerDeregisterClient { .. }
        ),
        Call::Lookup { keys, .. } => match &earlier.call {
            Call::Publish { info, .. } => info.iter().any(|p| keys.contains(&p.key)),
            Call::Unpublish { keys: gone, .. } => {
                gone.is_empty() || gone.iter().any(|k| keys.contains(k))
            }
            _ => false,
        },
        // A notification is seen by the events step that expects its status.
        Call::Events { handler, .. } => match &earlier.call {
            Call::RegisterEventHandler { handler: h, .. } => h == handler,
            Call::NotifyEvent { status, .. } => {
                (step.expect.events.iter().flatten()).any(|e| &e.status == status)
            }
            _ => false,
        },
        // The output a pull was handed: its pull, its deregistration (which stops what
        // follows), and the output the host delivered.
        Call::IofOutput { handler, .. } => match &earlier.call {
            Call::IofPull { handler: h, .. } | Call::IofDeregister { handler: h } => h == handler,
            Call::ServerIofDeliver { .. } => true,
            _ => false,
        },
        Call::Await { handle } => {
            earlier.start.as_deref() == Some(handle.as_str())
                || matches!(&earlier.call, Call::Get { handle: Some(h), .. } if h == handle)
        }
        _ => false,
    }
}

/// The observing step `at` and every earlier step whose effect it sees, directly or
/// through a step it sees (a get sees a registration that uses a saved node map, and so the
/// step that made the map).
fn seen_through(v: &Vector, at: usize) -> BTreeSet<usize> {
    let mut seen = BTreeSet::from([at]);
    let mut todo = vec![at];
    while let Some(i) = todo.pop() {
        for p in producers(v, i) {
            if seen.insert(p) {
                todo.push(p);
            }
        }
    }
    seen
}

/// The items `v` names, and those it verifies when it passes.
pub fn items(v: &Vector) -> Items {
    let mut named = Covered::default();
    named.rules.extend(v.rules.iter().cloned());
    named.apis.extend(v.apis.iter().cloned());
    named.apis.extend(SETUP_APIS.map(str::to_owned));
    for s in &v.steps {
        named.add_step(s);
    }
    let mut registered = Vec::new();
    if let Ok(infos) = crate::cluster::registration(v) {
        registered.extend(infos);
    }
    for job in &v.setup.jobs {
        registered.extend(job.info.iter().filter_map(|i| i.to_info(&job.nspace).ok()));
    }
    let registered_infos = registered;
    let registered = nested_names(&registered_infos);
    for name in &registered {
        named
            .pairs
            .insert(("PMIx_server_register_nspace".to_owned(), (*name).to_owned()));
    }
    // Every node's server is initialised with the harness's infos and the vector's.
    if let Ok(infos) = crate::cluster::server_init_info(v, "n", std::path::Path::new("/")) {
        for name in nested_names(&infos) {
            named
                .pairs
                .insert(("PMIx_server_init".to_owned(), name.to_owned()));
            named.attributes.insert(name.to_owned());
        }
    }
    let jobs = v.setup.jobs.iter().flat_map(|j| &j.info);
    for i in v.setup.info.iter().chain(jobs) {
        if pmix::model::attr::by_name(&i.key).is_some() {
            named.attributes.insert(i.key.clone());
        }
    }

    let mut verified = Covered::default();
    let mut forwarded = Covered::default();
    if v.id.starts_with("attribute-types/") {
        return Items {
            named,
            forwarded,
            verified,
        };
    }
    // What a host is seen to receive: the upcalls expected, and the attributes they carry.
    for s in &v.steps {
        for u in &s.expect.upcalls {
            forwarded.apis.insert(u.upcall.clone());
            let keys = (u.info.iter().flat_map(|i| i.keys()))
                .chain(u.keys.iter().map(String::as_str))
                .chain(u.asked.iter().map(String::as_str));
            forwarded.attributes.extend(
                keys.filter_map(pmix::model::attr::by_name)
                    .map(|d| d.name.to_owned()),
            );
        }
    }
    let observing: Vec<usize> = (0..v.steps.len())
        .filter(|&i| observes(&v.steps[i]))
        .collect();
    let mut seen_steps = BTreeSet::new();
    for &i in &observing {
        seen_steps.extend(seen_through(v, i));
        verified.attributes.extend(expected_attributes(&v.steps[i]));
    }
    for &i in &seen_steps {
        verified.add_step(&v.steps[i]);
    }
    if !observing.is_empty() {
        verified.rules.extend(v.rules.iter().cloned());
        verified.apis.extend(SETUP_APIS.map(str::to_owned));
        // An array registered for a realm (`PMIX_NODE_INFO_ARRAY`) is observed through the
        // keys it carries.
        for name in arrays_holding(&registered_infos, &verified.attributes) {
            verified.attributes.insert(name.to_owned());
        }
        for name in &registered {
            if verified.attributes.contains(*name) {
                verified
                    .pairs
                    .insert(("PMIx_server_register_nspace".to_owned(), (*name).to_owned()));
            }
        }
        for i in &v.setup.server_info {
            if let Some(d) = pmix::model::attr::by_name(&i.key) {
                verified.attributes.insert(d.name.to_owned());
                verified
                    .pairs
                    .insert(("PMIx_server_init".to_owned(), d.name.to_owned()));
            }
        }
    }
    Items {
        named,
        forwarded,
        verified,
    }
}

/// The attribute names of the info arrays among `infos` (nested ones included) that carry,
/// at any depth, an attribute of `observed`.
fn arrays_holding(infos: &[pmix::model::Info], observed: &BTreeSet<String>) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut stack: Vec<pmix::model::Info> = infos.to_vec();
    while let Some(i) = stack.pop() {
        let Some(inner) = pmix::store::realm::info_array_items(&i.value) else {
            continue;
        };
        let carries = nested_names(&inner).iter().any(|n| observed.contains(*n));
        if carries && let Some(d) = pmix::model::attr::by_key(i.key.as_str()) {
            out.push(d.name);
        }
        stack.extend(inner);
    }
    out
}

/// The attribute names of `infos` and of the infos nested in their arrays.
pub(crate) fn nested_names(infos: &[pmix::model::Info]) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut stack: Vec<&pmix::model::Info> = infos.iter().collect();
    while let Some(i) = stack.pop() {
        if let Some(d) = pmix::model::attr::by_key(i.key.as_str()) {
            out.push(d.name);
        }
        if let pmix::model::Value::DataArray(a) = &i.value {
            for e in &a.elements {
                if let pmix::model::Value::Info(inner) = e {
                    stack.push(inner);
                }
            }
        }
    }
    out
}

/// What proves the items passing vectors observe: for attributes and pairs the ablation, per
/// target it ran on; for APIs (upcalls included) and retrieval rules the mutation ledger.
#[derive(Debug, Default)]
pub struct Evidence {
    pub ablation: BTreeMap<String, Proof>,
    pub mutation: Mutation,
}

/// The measures over a run: named by any vector, and per target passing, forwarded and
/// verified. A target's verified attributes and pairs are those ablation proved there (a
/// target without a proof has none: `ablated` lists the targets with one); its verified APIs
/// and rules are those a passing vector observes there and mutation proves. `unproven` holds,
/// per target, the APIs and rules observed there that mutation does not prove.
#[derive(Debug, Default)]
pub struct Tally {
    pub named: Covered,
    pub passing: BTreeMap<String, Covered>,
    pub forwarded: BTreeMap<String, Covered>,
    pub verified: BTreeMap<String, Covered>,
    pub unproven: BTreeMap<String, Covered>,
    pub ablated: BTreeSet<String>,
}

/// Tally `vectors` against the outcomes of `rows` (every target of the run) and the
/// `evidence`.
pub fn tally(vectors: &[Vector], rows: &[Row], evidence: &Evidence) -> Tally {
    let proofs = &evidence.ablation;
    let mut t = Tally {
        ablated: proofs.keys().cloned().collect(),
        ..Tally::default()
    };
    let per_vector: BTreeMap<&str, Items> =
        vectors.iter().map(|v| (v.id.as_str(), items(v))).collect();
    for i in per_vector.values() {
        t.named.extend(&i.named);
    }
    for r in rows {
        let target = r.target.clone();
        t.passing.entry(target.clone()).or_default();
        t.forwarded.entry(target.clone()).or_default();
        t.verified.entry(target.clone()).or_default();
        if !matches!(r.outcome, Outcome::Pass) {
            continue;
        }
        let Some(i) = per_vector.get(r.id.as_str()) else {
            continue;
        };
        t.passing
            .entry(target.clone())
            .or_default()
            .extend(&i.named);
        t.forwarded
            .entry(target.clone())
            .or_default()
            .extend(&i.forwarded);
        let mut verified = i.verified.clone();
        let proven = proofs
            .get(&target)
            .map(|p| p.of_vector(&r.id))
            .unwrap_or_default();
        verified.attributes.retain(|a| proven.contains(a.as_str()));
        verified.pairs.retain(|(_, a)| proven.contains(a.as_str()));
        t.verified.entry(target).or_default().extend(&verified);
    }
    let mutation = &evidence.mutation;
    for (target, verified) in &mut t.verified {
        let unproven = t.unproven.entry(target.clone()).or_default();
        unproven.apis = (verified.apis.iter())
            .filter(|a| !mutation.proves(a))
            .cloned()
            .collect();
        unproven.rules = (verified.rules.iter())
            .filter(|r| !mutation.proves(r))
            .cloned()
            .collect();
        verified.apis.retain(|a| mutation.proves(a));
        verified.rules.retain(|r| mutation.proves(r));
    }
    t
}

/// One kind of item on one target: how many pass and how many are verified.
#[derive(Debug, PartialEq, Eq)]
pub struct TargetCount {
    pub target: String,
    pub passing: usize,
    pub forwarded: usize,
    /// `None` for attributes and pairs on a target the ablation did not run on.
    pub verified: Option<usize>,
}

/// One line of the coverage table.
#[derive(Debug, PartialEq, Eq)]
pub struct Line {
    pub version: Version,
    pub what: String,
    pub total: usize,
    pub named: usize,
    pub targets: Vec<TargetCount>,
}

/// Why a `PMIx_*_string` function is not verified: its vectors check a non-empty text.
const UNFIXED_TEXT: &str = "v5.0 §3.5 asks for a string representation of the value and \
     fixes no text, so its vectors only check that there is one";

/// v5.0 APIs whose effect the standard leaves to the implementation, so that no vector can
/// observe one without inventing it: the report lists them apart, with the reason, and they
/// stay out of *verified*.
pub const NOTHING_DEFINED_TO_OBSERVE: [(&str, &str); 18] = [
    (
        "PMIx_Get_version",
        "v5.0 §4.2 returns a statically defined version string whose format it does not fix",
    ),
    (
        "PMIx_Progress",
        "v5.0 §4.5 lets the caller progress the library; it matters only to a library \
         initialised with PMIX_EXTERNAL_PROGRESS, and this one progresses itself",
    ),
    (
        "PMIx_Fabric_deregister",
        "v5.0 §15.4.5 lets the library release what it holds for the fabric object, whose \
         contents are invalid afterwards; it names no status for a later use of it",
    ),
    (
        "PMIx_Fabric_deregister_nb",
        "v5.0 §15.4.6, as PMIx_Fabric_deregister: the library's own state is released",
    ),
    ("PMIx_Alloc_directive_string", UNFIXED_TEXT),
    ("PMIx_Data_range_string", UNFIXED_TEXT),
    ("PMIx_Data_type_string", UNFIXED_TEXT),
    ("PMIx_Device_type_string", UNFIXED_TEXT),
    ("PMIx_Error_string", UNFIXED_TEXT),
    ("PMIx_IOF_channel_string", UNFIXED_TEXT),
    ("PMIx_Info_directives_string", UNFIXED_TEXT),
    ("PMIx_Job_state_string", UNFIXED_TEXT),
    ("PMIx_Link_state_string", UNFIXED_TEXT),
    ("PMIx_Persistence_string", UNFIXED_TEXT),
    ("PMIx_Proc_state_string", UNFIXED_TEXT),
    ("PMIx_Scope_string", UNFIXED_TEXT),
    (
        "PMIx_server_setup_application",
        "v5.0 §17.2.11 leaves what it returns to the library's subsystems (environment \
         variables, fabric configuration, security credentials; harvesting them is optional \
         for implementers) and this library has none: it completes with no data. A \
         `PMIX_ALLOC_FABRIC` request would need a fabric allocator, which no issue brings yet",
    ),
    (
        "PMIx_server_setup_local_support",
        "v5.0 §17.2.13 defines it as the node's application-specific preparation from what \
         `PMIx_server_setup_application` returned, which here is nothing",
    ),
];

/// The kinds of API the table counts, as (line, the inventory's `kind`).
pub const API_KINDS: [(&str, &str); 5] = [
    ("client APIs", "client"),
    ("server APIs", "server"),
    ("tool APIs", "tool"),
    ("support APIs", "support"),
    ("host upcalls", "upcall"),
];

/// One line of a table: `count` gives the items a set covers and the total; `by_ablation`
/// marks attributes and pairs, which a target without a proof has not verified.
fn line(
    t: &Tally,
    version: Version,
    what: String,
    by_ablation: bool,
    count: &dyn Fn(&Covered) -> (usize, usize),
) -> Line {
    let (named, total) = count(&t.named);
    let targets = t
        .passing
        .iter()
        .map(|(target, passing)| TargetCount {
            target: target.clone(),
            passing: count(passing).0,
            forwarded: t.forwarded.get(target).map_or(0, |v| count(v).0),
            verified: (!by_ablation || t.ablated.contains(target))
                .then(|| t.verified.get(target).map_or(0, |v| count(v).0)),
        })
        .collect();
    Line {
        version,
        what,
        total,
        named,
        targets,
    }
}

/// The coverage of `inventory` by the tally, per version: client, server, tool and support
/// APIs, host upcalls, attributes, required attribute × API pairs, retrieval rules.
pub fn table(inventory: &Inventory, t: &Tally) -> Vec<Line> {
    let mut lines = Vec::new();
    for version in Version::ALL {
        let std = inventory.standard(version);
        let line = |what: &'static str, count: &dyn Fn(&Covered) -> (usize, usize)| {
            let by_ablation = matches!(what, "attributes" | "required attributes × API");
            line(t, version, what.to_owned(), by_ablation, count)
        };
        for (what, kind) in API_KINDS {
            let names: Vec<&str> = std
                .apis
                .iter()
                .filter(|r| r.get("kind") == kind)
                .map(|r| r.get("name"))
                .collect();
            lines.push(line(what, &|c: &Covered| {
                let n = names.iter().filter(|n| c.apis.contains(**n)).count();
                (n, names.len())
            }));
        }
        lines.push(line("attributes", &|c: &Covered| {
            let n = std
                .attributes
                .iter()
                .filter(|r| c.attributes.contains(r.get("name")))
                .count();
            (n, std.attributes.len())
        }));
        lines.push(line("required attributes × API", &|c: &Covered| {
            let (hit, all) = required_pairs(std, c);
            (hit.len(), all.len())
        }));
        let rules: Vec<&str> = inventory.rules(version).map(|r| r.get("id")).collect();
        lines.push(line("retrieval rules", &|c: &Covered| {
            let n = rules.iter().filter(|id| c.rules.contains(**id)).count();
            (n, rules.len())
        }));
    }
    lines
}

/// An API's name without its `_nb` suffix: the pair of a blocking and a non-blocking form.
fn family(api: &str) -> &str {
    api.strip_suffix("_nb").unwrap_or(api)
}

/// Pairs of an API family (its name without `_nb`) and an attribute name.
pub type Pairs<'a> = BTreeSet<(&'a str, &'a str)>;

/// The (API family, attribute) pairs the standard requires that `covered` holds, and all of
/// them, for the client, server and tool APIs of `std`.
pub fn required_pairs<'a>(std: &'a Standard, covered: &Covered) -> (Pairs<'a>, Pairs<'a>) {
    let kinds: BTreeSet<&str> = std
        .apis
        .iter()
        .filter(|r| matches!(r.get("kind"), "client" | "server" | "tool"))
        .map(|r| family(r.get("name")))
        .collect();
    let done: BTreeSet<(&str, &str)> = covered
        .pairs
        .iter()
        .map(|(api, a)| (family(api), a.as_str()))
        .collect();
    let mut all = BTreeSet::new();
    for row in &std.attributes {
        if matches!(row.get("name"), "PMIX_USERID" | "PMIX_GRPID") {
            continue;
        }
        for api in row.list("required_for") {
            if kinds.contains(family(api)) {
                all.insert((family(api), row.get("name")));
            }
        }
    }
    let hit = all.iter().filter(|p| done.contains(p)).copied().collect();
    (hit, all)
}

/// The v5.0 coverage per chapter of the standard: its APIs (of every kind) and its
/// attributes, by the section the inventory gives each.
pub fn chapters(inventory: &Inventory, t: &Tally) -> Vec<Line> {
    let std = inventory.standard(Version::V5_0);
    let chapter = |section: &str| section.split('.').next().unwrap_or_default().to_owned();
    let titles: BTreeMap<String, &str> = std
        .sections
        .iter()
        .filter(|r| !r.get("section").contains('.'))
        .map(|r| (r.get("section").to_owned(), r.get("title")))
        .collect();
    let mut numbers: Vec<String> = (std.apis.iter().chain(&std.attributes))
        .map(|r| chapter(r.get("section")))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    numbers.sort_by_key(|n| n.parse::<u32>().unwrap_or(u32::MAX));
    let mut lines = Vec::new();
    for n in numbers {
        let title = titles.get(&n).copied().unwrap_or_default();
        let apis: Vec<&str> = (std.apis.iter())
            .filter(|r| chapter(r.get("section")) == n)
            .map(|r| r.get("name"))
            .collect();
        let attributes: Vec<&str> = (std.attributes.iter())
            .filter(|r| chapter(r.get("section")) == n)
            .map(|r| r.get("name"))
            .collect();
        for (what, names, by_ablation) in
            [("APIs", &apis, false), ("attributes", &attributes, true)]
        {
            if names.is_empty() {
                continue;
            }
            lines.push(line(
                t,
                Version::V5_0,
                format!("§{n} {title}: {what}"),
                by_ablation,
                &|c: &Covered| {
                    let set = if by_ablation { &c.attributes } else { &c.apis };
                    (
                        names.iter().filter(|x| set.contains(**x)).count(),
                        names.len(),
                    )
                },
            ));
        }
    }
    lines
}

/// The table as Markdown: per target verified first, then forwarded and passing; then named
/// and the total.
pub fn markdown(lines: &[Line]) -> String {
    let targets: Vec<&str> = lines
        .first()
        .map(|l| l.targets.iter().map(|t| t.target.as_str()).collect())
        .unwrap_or_default();
    let mut out = String::from("| standard | items | total | named |");
    let mut rule = String::from("|---|---|---:|---:|");
    for t in &targets {
        let _ = write!(out, " verified `{t}` | forwarded `{t}` | passing `{t}` |");
        rule.push_str("---:|---:|---:|");
    }
    let _ = writeln!(out, "\n{rule}");
    for l in lines {
        let _ = write!(
            out,
            "| {} | {} | {} | {} |",
            l.version, l.what, l.total, l.named
        );
        for t in &l.targets {
            match t.verified {
                Some(v) => {
                    let _ = write!(out, " **{v}** ({}) |", percent(v, l.total));
                }
                None => out.push_str(" not ablated |"),
            }
            let _ = write!(out, " {} | {} |", t.forwarded, t.passing);
        }
        out.push('\n');
    }
    out
}

fn percent(n: usize, total: usize) -> String {
    if total == 0 {
        "–".into()
    } else {
        format!("{:.0} %", 100.0 * n as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::read_tsv;

    fn standard(apis: &str, attributes: &str) -> Standard {
        let dir = std::env::temp_dir().join(format!("pmix-coverage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let (a, b) = (dir.join("apis.tsv"), dir.join("attributes.tsv"));
        std::fs::write(&a, apis).expect("write");
        std::fs::write(&b, attributes).expect("write");
        let std = Standard {
            version: Version::V5_0,
            apis: read_tsv(&a, &["name", "kind"]).expect("apis"),
            attributes: read_tsv(&b, &["name", "required_for"]).expect("attributes"),
            constants: Vec::new(),
            structs: Vec::new(),
            sections: Vec::new(),
        };
        let _ = std::fs::remove_dir_all(&dir);
        std
    }

    #[test]
    fn a_pair_is_covered_through_either_twin_and_host_side_pairs_are_not_counted() {
        let std = standard(
            "name\tkind\nPMIx_Fence\tclient\nPMIx_Fence_nb\tclient\nPMIx_Log\tclient\n",
            "name\trequired_for\n\
             PMIX_COLLECT_DATA\tPMIx_Fence,PMIx_Fence_nb,pmix_server_fencenb_fn_t\n\
             PMIX_LOG_ONCE\tPMIx_Log\n\
             PMIX_USERID\tPMIx_Log\n",
        );
        let mut covered = Covered::default();
        covered
            .pairs
            .insert(("PMIx_Fence_nb".into(), "PMIX_COLLECT_DATA".into()));
        let (hit, all) = required_pairs(&std, &covered);
        // The upcall and PMIX_USERID are the host's side; the twins are one pair.
        assert_eq!(
            all.into_iter().collect::<Vec<_>>(),
            [
                ("PMIx_Fence", "PMIX_COLLECT_DATA"),
                ("PMIx_Log", "PMIX_LOG_ONCE")
            ]
        );
        assert_eq!(
            hit.into_iter().collect::<Vec<_>>(),
            [("PMIx_Fence", "PMIX_COLLECT_DATA")]
        );
    }

    fn vector(id: &str, steps: &str) -> Vector {
        let text = format!("summary = \"s\"\nsection = \"v5.0 §5.4\"\nrules = [\"G-01\"]\n{steps}");
        let mut v: Vector = toml::from_str(&text).expect("a vector");
        v.id = id.to_owned();
        v
    }

    const PUT_GET: &str = r#"
[[step]]
proc = 0
call = "put"
scope = "global"
key = "k"
value = { uint8 = 1 }

[[step]]
proc = 0
call = "commit"

[[step]]
proc = 1
call = "fence"
info = [{ key = "PMIX_COLLECT_DATA" }]

[[step]]
proc = 1
call = "get"
target = { rank = 0 }
key = "k"
info = [{ key = "PMIX_TIMEOUT", value = { int32 = 5 } }]
"#;

    #[test]
    fn a_tools_list_of_servers_sees_its_connections_but_not_its_choice_of_primary() {
        let steps = r#"
[setup]
[[setup.node]]
name = "n0"
ranks = [0]

[[step]]
proc = "tool"
call = "tool_init"

[[step]]
proc = "tool"
call = "tool_attach_to_server"
info = [{ key = "PMIX_SERVER_URI", value = { string = "u" } }]

[[step]]
proc = "tool"
call = "tool_set_server"

[[step]]
proc = "tool"
call = "tool_get_servers"

[[step]]
proc = "tool"
call = "tool_disconnect"
"#;
        let v = vector("tools/x", steps);
        // The list sees the attach, not the set-server; the disconnect sees both.
        assert_eq!(producers(&v, 3), [1]);
        assert_eq!(producers(&v, 4), [1, 2]);
    }

    #[test]
    fn a_success_only_vector_names_but_verifies_nothing() {
        let i = items(&vector("data-access/x", PUT_GET));
        assert!(i.named.apis.contains("PMIx_Get") && i.named.apis.contains("PMIx_Fence"));
        assert!(i.named.attributes.contains("PMIX_TIMEOUT"));
        assert!(i.named.rules.contains("G-01"));
        assert!(i.verified.apis.is_empty() && i.verified.attributes.is_empty());
        assert!(i.verified.rules.is_empty());
    }

    #[test]
    fn an_observed_value_verifies_the_get_and_what_produced_it() {
        let observed = format!("{PUT_GET}expect.value = {{ uint8 = 1 }}\n");
        let i = items(&vector("data-access/x", &observed));
        for api in ["PMIx_Get", "PMIx_Put", "PMIx_Commit", "PMIx_Fence"] {
            assert!(i.verified.apis.contains(api), "{api}");
        }
        assert!(i.verified.attributes.contains("PMIX_TIMEOUT"));
        assert!(
            i.verified
                .pairs
                .contains(&("PMIx_Fence".to_owned(), "PMIX_COLLECT_DATA".to_owned()))
        );
        assert!(i.verified.rules.contains("G-01"));
        // A generated type round trip never verifies.
        let generated = items(&vector("attribute-types/x", &observed));
        assert!(generated.verified.apis.is_empty());
        assert!(generated.named.apis.contains("PMIx_Get"));
    }

    #[test]
    fn a_named_error_status_observes_but_value_type_does_not() {
        let status = format!("{PUT_GET}expect.status = \"PMIX_ERR_NOT_FOUND\"\n");
        let v = vector("x", &status);
        assert!(observes(&v.steps[3]));
        let typed = format!("{PUT_GET}expect.value_type = \"PMIX_UINT8\"\n");
        let v = vector("x", &typed);
        assert!(!observes(&v.steps[3]));
    }

    #[test]
    fn a_saved_value_credits_the_step_that_made_it_through_the_steps_that_use_it() {
        let chain = r#"
[[step]]
proc = "server:n0"
call = "generate_regex"
input = "n0,n1"
save = "nodes"

[[step]]
proc = "server:n0"
call = "generate_ppn"
input = "0;1"
save = "unused"

[[step]]
proc = "server:n0"
call = "server_register_nspace"
nspace = "mapped"
info = [{ key = "PMIX_NODE_MAP", value = { string = "$nodes" } }]

[[step]]
proc = 0
call = "get"
target = { nspace = "mapped", rank = "wildcard" }
key = "PMIX_NODE_LIST"
expect.value = { string = "n0,n1" }
"#;
        let i = items(&vector("server/x", chain));
        for api in [
            "PMIx_generate_regex",
            "PMIx_server_register_nspace",
            "PMIx_Get",
        ] {
            assert!(i.verified.apis.contains(api), "{api}");
        }
        // A saved value no observing step uses verifies nothing.
        assert!(!i.verified.apis.contains("PMIx_generate_ppn"));
        assert!(i.named.apis.contains("PMIx_generate_ppn"));
    }

    #[test]
    fn an_expected_event_credits_the_call_of_its_source_that_raises_it() {
        let leave = r#"
[[step]]
proc = 0
call = "register_event_handler"
handler = "left"
codes = ["PMIX_GROUP_LEFT"]

[[step]]
proc = 0
call = "group_leave"
nb = true
group = "g"

[[step]]
proc = 1
call = "group_leave"
group = "g"

[[step]]
proc = 0
call = "events"
handler = "left"
count = 1
expect.events = [{ status = "PMIX_GROUP_LEFT", source = { rank = 1 } }]
"#;
        let i = items(&vector("groups/x", leave));
        assert!(i.verified.apis.contains("PMIx_Group_leave"));
        // Rank 0's own leave is not the source of the event observed.
        assert!(!i.verified.apis.contains("PMIx_Group_leave_nb"));
        assert!(i.named.apis.contains("PMIx_Group_leave_nb"));
    }

    #[test]
    fn a_registered_array_is_verified_through_the_keys_it_carries() {
        let node = r#"
[[setup.info]]
key = "PMIX_NODE_INFO_ARRAY"
value = { info_array = [{ key = "PMIX_HOSTNAME", value = { string = "n0" } }, { key = "PMIX_MAX_PROCS", value = { uint32 = 8 } }] }

[[step]]
proc = 0
call = "get"
target = { rank = "wildcard" }
key = "PMIX_MAX_PROCS"
"#;
        let success = items(&vector("realms/x", node));
        assert!(!success.verified.attributes.contains("PMIX_NODE_INFO_ARRAY"));
        let observed = format!("{node}expect.value = {{ uint32 = 8 }}\n");
        let i = items(&vector("realms/x", &observed));
        assert!(i.verified.attributes.contains("PMIX_NODE_INFO_ARRAY"));
        assert!(i.verified.pairs.contains(&(
            "PMIx_server_register_nspace".to_owned(),
            "PMIX_NODE_INFO_ARRAY".to_owned()
        )));
    }

    #[test]
    fn attributes_count_verified_only_where_ablation_proved_them() {
        let observed = format!("{PUT_GET}expect.value = {{ uint8 = 1 }}\n");
        let v = vector("data-access/x", &observed);
        let row = Row::passing(&v.id, "rust");
        let vectors = [v];
        let none = tally(&vectors, std::slice::from_ref(&row), &Evidence::default());
        let rust = &none.verified["rust"];
        assert!(rust.attributes.is_empty() && rust.pairs.is_empty());
        let mut proof = Proof::default();
        proof.attributes.insert(
            "PMIX_COLLECT_DATA".into(),
            BTreeSet::from(["data-access/x".to_owned()]),
        );
        let evidence = Evidence {
            ablation: BTreeMap::from([("rust".to_owned(), proof)]),
            ..Evidence::default()
        };
        let proven = tally(&vectors, &[row], &evidence);
        let rust = &proven.verified["rust"];
        assert_eq!(
            rust.attributes.iter().collect::<Vec<_>>(),
            ["PMIX_COLLECT_DATA"]
        );
        assert!(
            rust.pairs
                .contains(&("PMIx_Fence".to_owned(), "PMIX_COLLECT_DATA".to_owned()))
        );
        assert!(proven.ablated.contains("rust") && none.ablated.is_empty());
    }

    #[test]
    fn apis_and_rules_count_verified_only_where_mutation_proved_them() {
        let observed = format!("{PUT_GET}expect.value = {{ uint8 = 1 }}\n");
        let v = vector("data-access/x", &observed);
        let row = Row::passing(&v.id, "rust");
        let vectors = [v];
        let none = tally(&vectors, std::slice::from_ref(&row), &Evidence::default());
        assert!(none.verified["rust"].apis.is_empty() && none.verified["rust"].rules.is_empty());
        assert!(none.unproven["rust"].apis.contains("PMIx_Get"));
        assert!(none.unproven["rust"].rules.contains("G-01"));
        let ledger =
            "caught\tabc\tr.rs: replace get_target -> Proc with Default::default()\t1\tr.rs:1:1\n";
        let evidence = Evidence {
            mutation: Mutation::from_texts(ledger, "r.rs\tget_target\tPMIx_Get G-01\n", "")
                .expect("parses"),
            ..Evidence::default()
        };
        let proven = tally(&vectors, &[row], &evidence);
        assert!(proven.verified["rust"].apis.contains("PMIx_Get"));
        assert!(proven.verified["rust"].rules.contains("G-01"));
        assert!(!proven.verified["rust"].apis.contains("PMIx_Put"));
        assert!(proven.unproven["rust"].apis.contains("PMIx_Put"));
    }
}
