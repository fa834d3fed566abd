//! Queries (PMIx v5.0 ch. 7) without I/O: the checks a query must pass, the process it is
//! about, the answers the library gives itself (attribute support, §7.4), the status of a set
//! of answers, and the shape the caller receives.
//!
//! **Shape of the answer.** v5.0 §7.1.2 hands the caller one `PMIX_QUERY_RESULTS` info per
//! query, whose array starts with `PMIX_QUERY_QUALIFIERS` when the query had qualifiers and
//! then holds one info per key found. OpenPMIx 4.2 (and its later releases) instead put the
//! answers in one flat list, and MPI libraries read them that way. So the wire carries the
//! flat list, in query order, and this crate's client builds the standard's shape from it
//! with [`group`] and [`results`]: each query takes, key by key, the first answer not yet
//! taken that carries the key. A flat list that already holds `PMIX_QUERY_RESULTS` is taken
//! as given.
//!
//! **Status.** `PMIX_SUCCESS` when every key of every query was answered,
//! `PMIX_ERR_PARTIAL_SUCCESS` when some were, `PMIX_ERR_NOT_FOUND` when none was
//! ([`status_of`]). A key nobody supports counts as not found, never as an error of the call.
//!
//! **Attribute support.** A query whose first key is `PMIX_QUERY_ATTRIBUTE_SUPPORT` names
//! functions in its other keys and levels in its qualifiers (none: every level). Each level is
//! answered by whoever knows it: the client and tool levels by the caller's library, the
//! server level by the server's library, the host level by what the host registered with
//! `PMIx_Register_attributes`. The answer for a function is an info keyed by the function's
//! name whose array holds, per requested level, the level's key and an array of
//! `pmix_regattr_t` — or `PMIX_UNDEF` when that level supports nothing for it (§7.4). The
//! `*_FUNCTIONS` levels answer a comma-delimited list of function names under the level's key.
//! Every function asked about is answered: "supports nothing" is an answer.

mod support;
#[cfg(test)]
mod tests;

pub use support::{CLIENT, SERVER, Support, TOOL, host_function};

use crate::model::{
    DataArray, DataType, Info, Nspace, Proc, Query, Rank, RegAttr, Status, Value, attr,
};

/// The answer to `PMIx_Query_info`: `PMIX_SUCCESS` or `PMIX_ERR_PARTIAL_SUCCESS`, and one
/// `PMIX_QUERY_RESULTS` info per query (§7.1.2). When nothing was found the call fails with
/// `PMIX_ERR_NOT_FOUND` instead.
#[derive(Clone, Debug, PartialEq)]
pub struct Answered {
    pub status: Status,
    pub results: Vec<Info>,
}

/// A level of attribute support (§7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Client,
    Server,
    Host,
    Tool,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::Client, Level::Server, Level::Host, Level::Tool];

    /// The qualifier asking for this level's attributes.
    pub fn attributes_key(self) -> &'static str {
        match self {
            Level::Client => attr::CLIENT_ATTRIBUTES.wire_key(),
            Level::Server => attr::SERVER_ATTRIBUTES.wire_key(),
            Level::Host => attr::HOST_ATTRIBUTES.wire_key(),
            Level::Tool => attr::TOOL_ATTRIBUTES.wire_key(),
        }
    }

    /// The qualifier asking for this level's functions.
    pub fn functions_key(self) -> &'static str {
        match self {
            Level::Client => attr::CLIENT_FUNCTIONS.wire_key(),
            Level::Server => attr::SERVER_FUNCTIONS.wire_key(),
            Level::Host => attr::HOST_FUNCTIONS.wire_key(),
            Level::Tool => attr::TOOL_FUNCTIONS.wire_key(),
        }
    }
}

/// What a level is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ask {
    Attributes(Level),
    Functions(Level),
}

impl Ask {
    pub fn level(self) -> Level {
        match self {
            Ask::Attributes(l) | Ask::Functions(l) => l,
        }
    }

    /// The key of this ask, in a qualifier and in the answer.
    pub fn key(self) -> &'static str {
        match self {
            Ask::Attributes(l) => l.attributes_key(),
            Ask::Functions(l) => l.functions_key(),
        }
    }

    /// The ask a qualifier key names. The standard gives `PMIX_HOST_FUNCTIONS` the key of
    /// `PMIX_SERVER_FUNCTIONS` and `PMIX_TOOL_ATTRIBUTES` that of `PMIX_SETUP_APP_ENVARS`;
    /// OpenPMIx's keys (`pmix.host.fns`, `pmix.tool.attrs`) tell them apart, and the
    /// standard's colliding keys are read as the server's functions and the tool's attributes.
    fn of_key(key: &str) -> Option<Ask> {
        let standard = |a: crate::model::attr::Attr<bool>| a.def().key;
        for level in Level::ALL {
            if key == level.attributes_key() {
                return Some(Ask::Attributes(level));
            }
            if key == level.functions_key() {
                return Some(Ask::Functions(level));
            }
        }
        if key == standard(attr::TOOL_ATTRIBUTES) {
            return Some(Ask::Attributes(Level::Tool));
        }
        if key == standard(attr::SERVER_FUNCTIONS) {
            return Some(Ask::Functions(Level::Server));
        }
        None
    }
}

/// The keys of a query, without empty entries.
pub fn keys(q: &Query) -> impl Iterator<Item = &str> {
    q.keys.iter().flatten().map(String::as_str)
}

/// Whether `q` asks which attributes functions support.
pub fn is_attribute_support(q: &Query) -> bool {
    keys(q).next() == Some(attr::QUERY_ATTRIBUTE_SUPPORT.wire_key())
}

/// The keys a query asks to be answered: for an attribute-support query, the functions it
/// names (or, with none, the function lists it asks for).
pub fn asked(q: &Query) -> Vec<&str> {
    if is_attribute_support(q) {
        let functions: Vec<&str> = keys(q).skip(1).collect();
        if functions.is_empty() {
            return asks(q)
                .into_iter()
                .filter(|a| matches!(a, Ask::Functions(_)))
                .map(Ask::key)
                .collect();
        }
        return functions;
    }
    keys(q).collect()
}

/// The levels an attribute-support query asks for: those its qualifiers set to true, or every
/// level's attributes and functions when it names none.
pub fn asks(q: &Query) -> Vec<Ask> {
    let mut named = false;
    let mut out = Vec::new();
    for i in &q.qualifiers {
        if let Some(ask) = Ask::of_key(i.key.as_str()) {
            named = true;
            if i.value.as_bool().unwrap_or(true) && !out.contains(&ask) {
                out.push(ask);
            }
        }
    }
    if !named {
        for level in Level::ALL {
            out.push(Ask::Attributes(level));
            out.push(Ask::Functions(level));
        }
    }
    out
}

/// Refuse what the standard forbids before anything is asked (§7.1.2): no queries, a query
/// without keys, or `PMIX_PROCID` together with `PMIX_NSPACE` or `PMIX_RANK`.
pub fn check(queries: &[Query]) -> Result<(), Status> {
    if queries.is_empty() {
        return Err(Status::ERR_BAD_PARAM);
    }
    for q in queries {
        if keys(q).next().is_none() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let has = |a: &str| q.qualifiers.iter().any(|i| i.key.as_str() == a);
        if has(attr::PROCID.wire_key())
            && (has(attr::NSPACE.wire_key()) || has(attr::RANK.wire_key()))
        {
            return Err(Status::ERR_BAD_PARAM);
        }
    }
    Ok(())
}

/// The process a query is about: its `PMIX_PROCID`, or its `PMIX_NSPACE` and `PMIX_RANK`
/// (an absent rank: the whole namespace), or else the requester. An empty namespace in a
/// `PMIX_PROCID` is the requester's own (as a get's).
pub fn target(q: &Query, requester: &Proc) -> Proc {
    let mut nspace: Option<Nspace> = None;
    let mut rank: Option<Rank> = None;
    for i in &q.qualifiers {
        let k = i.key.as_str();
        if k == attr::PROCID.wire_key()
            && let Some(p) = i.value.as_proc()
        {
            let ns = if p.nspace.as_str().is_empty() {
                requester.nspace.clone()
            } else {
                p.nspace.clone()
            };
            return Proc::new(ns, p.rank);
        } else if k == attr::NSPACE.wire_key()
            && let Some(s) = i.value.as_str()
        {
            nspace = Nspace::new(s).ok();
        } else if k == attr::RANK.wire_key() {
            rank = i.value.as_rank();
        }
    }
    match (nspace, rank) {
        (Some(ns), r) => Proc::new(ns, r.unwrap_or(Rank::WILDCARD)),
        (None, Some(r)) => Proc::new(requester.nspace.clone(), r),
        (None, None) => requester.clone(),
    }
}

/// Attributes named as in the standard, as `pmix_regattr_t`s (unknown names are skipped).
pub fn regattrs(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .filter_map(|n| attr::by_name(n))
        .map(|d| {
            Value::RegAttr(Box::new(RegAttr {
                name: Some(d.name.to_owned()),
                string: Some(
                    d.openpmix_key
                        .map_or_else(|| d.key.to_owned(), str::to_owned),
                ),
                data_type: d.data_type.unwrap_or(DataType::UNDEF),
                description: vec![Some(format!("PMIx Standard v5.0 §{}", d.section))],
            }))
        })
        .collect()
}

/// One level's entry in a function's answer: the level's key with an array of regattrs, or
/// `PMIX_UNDEF` when the level supports nothing for the function.
pub fn level_entry(level: Level, attrs: Vec<Value>) -> Info {
    let value = if attrs.is_empty() {
        Value::Undef
    } else {
        Value::DataArray(Box::new(DataArray {
            data_type: DataType::REGATTR,
            elements: attrs,
        }))
    };
    info(level.attributes_key(), value)
}

/// The answer of an attribute-support query for the asks `answer` can give: per function, its
/// levels' entries; per `*_FUNCTIONS` ask, the list of functions. `answer(ask, function)`
/// returns `None` for asks it does not know (another party answers them) and, for
/// `Ask::Functions`, ignores `function`.
pub fn attribute_support(
    q: &Query,
    mut answer: impl FnMut(Ask, Option<&str>) -> Option<Value>,
) -> Vec<Info> {
    let asks = asks(q);
    let mut out = Vec::new();
    for ask in &asks {
        if let Ask::Functions(_) = ask
            && let Some(v) = answer(*ask, None)
        {
            out.push(info(ask.key(), v));
        }
    }
    for function in keys(q).skip(1) {
        let mut levels = Vec::new();
        for ask in &asks {
            if let Ask::Attributes(_) = ask
                && let Some(v) = answer(*ask, Some(function))
            {
                levels.push(info(ask.key(), v));
            }
        }
        // A name too long to be a key names no function of anyone's.
        if !levels.is_empty()
            && let Ok(key) = crate::model::Key::new(function)
        {
            out.push(Info {
                key,
                flags: crate::model::InfoDirectives(0),
                value: infos(levels),
            });
        }
    }
    out
}

/// Merge two attribute-support answers to the same query (the client's levels and the
/// server's): a function answered by both gets the entries of both, in level order.
pub fn merge_support(mut mine: Vec<Info>, theirs: Vec<Info>) -> Vec<Info> {
    for t in theirs {
        match mine.iter_mut().find(|m| m.key == t.key) {
            Some(m) => {
                if let (Value::DataArray(a), Value::DataArray(b)) = (&mut m.value, t.value) {
                    a.elements.extend(b.elements);
                }
            }
            None => mine.push(t),
        }
    }
    mine
}

/// The status of a set of answers, one list per query (§7.1.2).
pub fn status_of(queries: &[Query], answers: &[Vec<Info>]) -> Status {
    let mut asked = 0usize;
    let mut found = 0usize;
    for (q, a) in queries.iter().zip(answers) {
        for k in self::asked(q) {
            asked += 1;
            if a.iter().any(|i| i.key.as_str() == k) {
                found += 1;
            }
        }
    }
    if found == 0 {
        Status::ERR_NOT_FOUND
    } else if found < asked {
        Status::ERR_PARTIAL_SUCCESS
    } else {
        Status::SUCCESS
    }
}

/// Split a flat list of answers (as the wire carries them) into one list per query: each
/// query takes, for each key it asked, the first answer not yet taken with that key. Answers
/// no query asked for go to the last query, so nothing the server sent is lost.
pub fn group(queries: &[Query], flat: Vec<Info>) -> Vec<Vec<Info>> {
    let mut pool: Vec<Option<Info>> = flat.into_iter().map(standard_form).map(Some).collect();
    let mut out: Vec<Vec<Info>> = Vec::with_capacity(queries.len());
    for q in queries {
        let mut mine = Vec::new();
        for k in asked(q) {
            if let Some(slot) = pool
                .iter_mut()
                .find(|s| s.as_ref().is_some_and(|i| i.key.as_str() == k))
            {
                mine.extend(slot.take());
            }
        }
        out.push(mine);
    }
    if let Some(last) = out.last_mut() {
        last.extend(pool.into_iter().flatten());
    }
    out
}

/// An answer in the type the standard gives its key, where the OpenPMIx world sends another:
/// `PMIX_QUERY_PSET_NAMES` is a `pmix_data_array_t` of strings in v5.0 (§7.1.2), and a
/// comma-delimited string in OpenPMIx 4.2's header, PRRTE's and this crate's servers (what
/// Open MPI parses; see `server::core::psets`).
pub fn standard_form(answer: Info) -> Info {
    match (&answer.value, answer.is(attr::QUERY_PSET_NAMES)) {
        (Value::String(Some(names)), true) => {
            let names = DataArray {
                data_type: DataType::STRING,
                elements: names
                    .as_bytes()
                    .split(|&b| b == b',')
                    .filter(|n| !n.is_empty())
                    .map(Value::string)
                    .collect(),
            };
            Info::new(attr::QUERY_PSET_NAMES, names)
        }
        _ => answer,
    }
}

/// The caller's shape (§7.1.2): one `PMIX_QUERY_RESULTS` per query, whose array starts with
/// `PMIX_QUERY_QUALIFIERS` when the query had qualifiers. Queries with no answer keep their
/// place with only their qualifiers (or an empty array).
pub fn results(queries: &[Query], grouped: Vec<Vec<Info>>) -> Vec<Info> {
    queries
        .iter()
        .zip(grouped)
        .map(|(q, answers)| {
            let mut entries = Vec::with_capacity(answers.len() + 1);
            if !q.qualifiers.is_empty() {
                entries.push(info(
                    attr::QUERY_QUALIFIERS.wire_key(),
                    infos(q.qualifiers.clone()),
                ));
            }
            entries.extend(answers);
            info(attr::QUERY_RESULTS.wire_key(), infos(entries))
        })
        .collect()
}

/// The client library's own levels (client and tool) of attribute support; the server's
/// and host's are the server's to answer.
pub fn client_support(ask: Ask, function: Option<&str>) -> Option<Value> {
    let table = match ask.level() {
        Level::Client => CLIENT,
        Level::Tool => TOOL,
        Level::Server | Level::Host => return None,
    };
    match ask {
        Ask::Functions(_) => Some(Value::string(
            table.iter().map(|(f, _)| *f).collect::<Vec<_>>().join(","),
        )),
        Ask::Attributes(level) => {
            let names = table
                .iter()
                .find(|(f, _)| Some(*f) == function)
                .map_or(&[][..], |(_, a)| *a);
            Some(level_entry(level, regattrs(names)).value)
        }
    }
}

/// The answer the client library gives itself for `key`, from what it is: the versions of
/// the standard's stable and provisional C ABI it implements (§7.1.4). Its C form implements
/// OpenPMIx 4.2's ABI, which predates the standardised one: "0.0" for both, as OpenPMIx 4.2
/// answers.
pub fn local_answer(key: &str) -> Option<Value> {
    let abi = [
        attr::QUERY_STABLE_ABI_VERSION.wire_key(),
        attr::QUERY_PROVISIONAL_ABI_VERSION.wire_key(),
    ];
    abi.contains(&key).then(|| Value::string("0.0"))
}

/// What the client library answers itself of a query: attribute support at its own levels,
/// and the keys of [`local_answer`].
pub fn local_answers(q: &Query) -> Vec<Info> {
    if is_attribute_support(q) {
        return attribute_support(q, client_support);
    }
    keys(q)
        .filter_map(|k| local_answer(k).map(|v| info(k, v)))
        .collect()
}

/// The answer to `queries` when the client library can give all of it itself (no server
/// asked, as before `PMIx_Init`); `None` when some of it is the server's.
pub fn answer_locally(queries: &[Query]) -> Option<Result<Answered, Status>> {
    if let Err(s) = check(queries) {
        return Some(Err(s));
    }
    if queries.iter().any(|q| for_server(q).is_some()) {
        return None;
    }
    let answers: Vec<Vec<Info>> = queries.iter().map(local_answers).collect();
    Some(match status_of(queries, &answers) {
        Status::ERR_NOT_FOUND => Err(Status::ERR_NOT_FOUND),
        status => Ok(Answered {
            status,
            results: results(queries, answers),
        }),
    })
}

/// The query to send the server for what the caller's library cannot answer itself, if any:
/// an attribute-support query restricted to the server and host levels it asks for, or any
/// other query without the keys the library answers ([`local_answer`]).
pub fn for_server(q: &Query) -> Option<Query> {
    if !is_attribute_support(q) {
        let theirs: Vec<Option<String>> = (q.keys.iter())
            .filter(|k| k.as_deref().is_none_or(|k| local_answer(k).is_none()))
            .cloned()
            .collect();
        theirs.iter().flatten().next()?;
        return Some(Query {
            keys: theirs,
            qualifiers: q.qualifiers.clone(),
        });
    }
    let theirs: Vec<Info> = asks(q)
        .into_iter()
        .filter(|a| matches!(a.level(), Level::Server | Level::Host))
        .map(|a| info(a.key(), Value::Bool(true)))
        .collect();
    if theirs.is_empty() {
        return None;
    }
    Some(Query {
        keys: q.keys.clone(),
        qualifiers: theirs,
    })
}

/// Whether a flat answer is already in the standard's shape.
pub fn is_shaped(flat: &[Info]) -> bool {
    !flat.is_empty()
        && flat
            .iter()
            .all(|i| i.key.as_str() == attr::QUERY_RESULTS.wire_key())
}

/// The answers inside a shaped result (`PMIX_QUERY_RESULTS`), without the qualifiers.
pub fn answers_in(result: &Info) -> Vec<&Info> {
    match &result.value {
        Value::DataArray(a) => a
            .elements
            .iter()
            .filter_map(|v| match v {
                Value::Info(i) if i.key.as_str() != attr::QUERY_QUALIFIERS.wire_key() => Some(&**i),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn info(key: &str, value: Value) -> Info {
    Info {
        key: crate::model::Key::from_checked(key.to_owned()),
        flags: crate::model::InfoDirectives(0),
        value,
    }
}

fn infos(list: Vec<Info>) -> Value {
    Value::DataArray(Box::new(DataArray {
        data_type: DataType::INFO,
        elements: list.into_iter().map(|i| Value::Info(Box::new(i))).collect(),
    }))
}
