//! What a step must see: its status, value, data, results, events and the upcalls its host
//! is handed (the `expect` table of a step).

use serde::{Deserialize, Serialize};

use super::{InfoSpec, TargetSpec, ValueSpec};

/// The required outcome of a step.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The status, or a list of the statuses the standard allows; default `PMIX_SUCCESS`.
    #[serde(default)]
    pub status: Option<OneOrMany<String>>,
    /// Where the standard requires an error but names none: any error status passes (with
    /// those of `status`, if given). `PMIX_ERR_NOT_SUPPORTED` still reads as not supported.
    #[serde(default)]
    pub any_error: bool,
    /// The value a get returns (a list under `value_any` when several are allowed).
    #[serde(default)]
    pub value: Option<ValueSpec>,
    #[serde(default)]
    pub value_any: Vec<ValueSpec>,
    /// The data a lookup returns: key and value (the publisher is checked when given).
    #[serde(default)]
    pub data: Vec<LookupSpec>,
    /// The value's type, by its C name (`PMIX_STRING`), where the value itself varies.
    #[serde(default)]
    pub value_type: Option<String>,
    /// The value is a string that begins with this text and goes on after it (`""`: any
    /// string that is not empty), where the standard fixes part of a text or none of it.
    #[serde(default)]
    pub starts_with: Option<String>,
    /// Bits the value, a `PMIX_LOCTYPE`, must have set, by their names
    /// (`PMIX_LOCALITY_SHARE_NODE`); others may be set too: where the standard fixes some
    /// levels of a relative locality and the machine decides the rest (its caches, NUMA).
    #[serde(default)]
    pub bits_set: Vec<String>,
    /// Infos the call's results must hold (others may come too).
    #[serde(default)]
    pub results: Vec<InfoSpec>,
    /// Keys the call's results must hold, whatever their values: for a query, inside its
    /// `PMIX_QUERY_RESULTS`; for the other calls, in their flat list of results.
    #[serde(default)]
    pub result_keys: Vec<String>,
    /// Attributes an attribute-support query's answer must list (others may come too): in
    /// `PMIX_QUERY_RESULTS`, the function's entry at the level.
    #[serde(default)]
    pub supports: Vec<SupportSpec>,
    /// The events an `events` step must have seen, in order (and no others).
    #[serde(default)]
    pub events: Option<Vec<EventSpec>>,
    /// Upcalls the host must have received during the step (others may come too).
    #[serde(default)]
    pub upcalls: Vec<UpcallSpec>,
}

/// One upcall the host must receive during a step: its type's name in the standard
/// (`pmix_server_fencenb_fn_t`) and what it must carry (at least: more may come).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct UpcallSpec {
    pub upcall: String,
    /// The single process it names (the requester, publisher, source, …).
    #[serde(default)]
    pub proc: Option<TargetSpec>,
    /// Processes its list must hold (participants, targets, processes to abort).
    #[serde(default)]
    pub procs: Vec<TargetSpec>,
    /// Infos it must be handed, with their values.
    #[serde(default)]
    pub info: Vec<InfoSpec>,
    /// Keys of infos it must be handed, whatever their values (`PMIX_USERID`).
    #[serde(default)]
    pub keys: Vec<String>,
    /// Keys it must ask about: a query's keys (any of its queries), a lookup's or an
    /// unpublish's.
    #[serde(default)]
    pub asked: Vec<String>,
    /// Event codes it must carry, by name (`PMIX_EVENT_NODE_DOWN`): the codes of an event
    /// registration or deregistration.
    #[serde(default)]
    pub codes: Vec<String>,
}

/// One event a handler received: its status and, when given, its source.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    pub status: String,
    #[serde(default)]
    pub source: Option<TargetSpec>,
    /// Information the event must carry (others may come too).
    #[serde(default)]
    pub info: Vec<InfoSpec>,
    /// Results the handler must have been given by the handlers before it (others may come
    /// too).
    #[serde(default)]
    pub results: Vec<InfoSpec>,
}

/// Attributes a function supports at a level, as `PMIX_QUERY_ATTRIBUTE_SUPPORT` answers it
/// (v5.0 §7.4): one `pmix_regattr_t` per attribute, each found by its name.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SupportSpec {
    /// The function, as the query names it (`PMIx_Get`).
    pub function: String,
    /// `PMIX_CLIENT_ATTRIBUTES`, `PMIX_SERVER_ATTRIBUTES` or `PMIX_HOST_ATTRIBUTES`.
    pub level: String,
    /// Names of attributes (`PMIX_OPTIONAL`).
    pub attributes: Vec<String>,
}

/// The levels a [`SupportSpec`] may name: those whose key the standard and OpenPMIx spell
/// alike.
pub const SUPPORT_LEVELS: [&str; 3] = [
    "PMIX_CLIENT_ATTRIBUTES",
    "PMIX_SERVER_ATTRIBUTES",
    "PMIX_HOST_ATTRIBUTES",
];

/// One datum of a lookup's answer.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LookupSpec {
    pub key: String,
    pub value: ValueSpec,
    #[serde(default)]
    pub publisher: Option<u32>,
}

/// A single item or a list of them.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T: Clone> OneOrMany<T> {
    pub fn to_vec(&self) -> Vec<T> {
        match self {
            OneOrMany::One(t) => vec![t.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}
