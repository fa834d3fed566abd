//! The server's part in queries (PMIx v5.0 ch. 7) and in the host's registration of the
//! attributes it supports (§17.2.12).
//!
//! A query from a client is answered in three passes, each for the keys the one before left
//! open:
//!
//! 1. **What the server holds.** Attribute support at the server level (this library's
//!    table, [`crate::query::SERVER`]) and at the host level (what the host registered); the
//!    process sets the host defined (`PMIX_QUERY_NUM_PSETS`, `PMIX_QUERY_PSET_NAMES`,
//!    `PMIX_QUERY_PSET_MEMBERSHIP`); the process groups with a member here
//!    (`PMIX_QUERY_GROUP_NAMES`, `PMIX_QUERY_GROUP_MEMBERSHIP` of the `PMIX_GROUP_ID` asked);
//!    and any key the registered job information answers for the query's process, read
//!    with the get rules and the query's realm qualifiers (`PMIX_JOB_INFO`, `PMIX_NODE_INFO`
//!    with `PMIX_HOSTNAME`, …).
//! 2. **The host.** The remaining keys go to the host's `query` upcall, with the query's
//!    qualifiers plus the requester's `PMIX_USERID` and `PMIX_GRPID`, as §7.1.2 requires.
//! 3. **What the server can still say.** `PMIX_QUERY_NAMESPACES`, when the host did not
//!    answer it: the namespaces registered here.
//!
//! The reply is the flat list OpenPMIx clients read (see [`crate::query`] for the shape the
//! caller finally receives), with `PMIX_SUCCESS`, `PMIX_ERR_PARTIAL_SUCCESS` or
//! `PMIX_ERR_NOT_FOUND` as [`crate::query::status_of`] decides.

use std::collections::BTreeMap;

use crate::model::{Info, Proc, Query, RegAttr, Status, Value, attr};
use crate::query::{self as q, Ask, Level};
use crate::retrieval::{Directives, ServerStep, server_get};
use crate::wire::op_reply::OpReply;
use crate::wire::{Command, Reply, Tag};

use super::interface::ConnId;
use super::shared::Shared;
use super::upcall::{HostCall, HostResult};

/// A query waiting for the host.
#[derive(Clone, Debug)]
struct HeldQuery {
    conn: ConnId,
    tag: Tag,
    queries: Vec<Query>,
    /// What the server answered itself, one list per query.
    answers: Vec<Vec<Info>>,
    /// For each query sent to the host, the index of the query it came from.
    asked_host: Vec<usize>,
}

/// The attributes the host registered and the queries waiting for its answer.
#[derive(Debug, Default)]
pub(super) struct Queries {
    /// The attributes the host registered, by server-module function.
    host_attrs: BTreeMap<String, Vec<RegAttr>>,
    /// The queries the host is answering, by the op of its call.
    at_host: BTreeMap<u64, HeldQuery>,
}

impl Queries {
    /// `PMIx_Register_attributes`: the host declares the attributes `function` (a server-module
    /// function such as `"allocate"`) supports. A second registration for one function is
    /// `PMIX_ERR_REPEAT_ATTR_REGISTRATION`.
    pub(super) fn register_attributes(
        &mut self,
        function: &str,
        attrs: Vec<RegAttr>,
    ) -> Result<(), Status> {
        if function.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        if self.host_attrs.contains_key(function) {
            return Err(Status::ERR_REPEAT_ATTR_REGISTRATION);
        }
        self.host_attrs.insert(function.to_owned(), attrs);
        Ok(())
    }

    /// Answer `queries`, given what the process sets and groups answer for each (`others`).
    #[allow(clippy::too_many_arguments)] // the request's fields, as the wire gives them
    pub(super) fn request(
        &mut self,
        cx: &mut Shared,
        conn: ConnId,
        tag: Tag,
        me: &Proc,
        queries: Vec<Query>,
        others: Vec<Vec<Info>>,
    ) {
        if let Err(status) = q::check(&queries) {
            tracing::debug!("{me}: query refused: {status:?}");
            reply(cx, conn, tag, status, Vec::new());
            return;
        }
        let answers: Vec<Vec<Info>> = (queries.iter().zip(others))
            .map(|(x, others)| self.answer_here(cx, me, x, others))
            .collect();
        let mut to_host = Vec::new();
        let mut asked_host = Vec::new();
        for (i, query) in queries.iter().enumerate() {
            if q::is_attribute_support(query) {
                continue;
            }
            let open: Vec<Option<String>> = q::asked(query)
                .into_iter()
                .filter(|k| !answers[i].iter().any(|a| a.key.as_str() == *k))
                .map(|k| Some(k.to_owned()))
                .collect();
            if open.is_empty() {
                continue;
            }
            let mut qualifiers = query.qualifiers.clone();
            if let Some(r) = cx.clients.get(me) {
                qualifiers.push(Info::new(attr::USERID, r.uid));
                qualifiers.push(Info::new(attr::GRPID, r.gid));
            }
            to_host.push(Query {
                keys: open,
                qualifiers,
            });
            asked_host.push(i);
        }
        let held = HeldQuery {
            conn,
            tag,
            queries,
            answers,
            asked_host,
        };
        if to_host.is_empty() {
            finish(cx, held, None);
        } else {
            let call = HostCall::Query {
                proc: me.clone(),
                queries: to_host,
            };
            let op = cx.call_host(call);
            self.at_host.insert(op, held);
        }
    }

    /// Whether the host call `op` is one of these queries'.
    pub(super) fn awaits_host(&self, op: u64) -> bool {
        self.at_host.contains_key(&op)
    }

    /// The host answered the query it was asked with `op`.
    pub(super) fn host_answered(&mut self, cx: &mut Shared, op: u64, result: HostResult) {
        let Some(held) = self.at_host.remove(&op) else {
            return;
        };
        finish(cx, held, Some(result.output()));
    }

    /// What the server answers itself for one query.
    fn answer_here(&self, cx: &Shared, me: &Proc, query: &Query, others: Vec<Info>) -> Vec<Info> {
        if q::is_attribute_support(query) {
            return q::attribute_support(query, |ask, function| self.support(ask, function));
        }
        let target = q::target(query, me);
        let directives = Directives::from_info(&query.qualifiers);
        let mut out = others;
        for key in q::asked(query) {
            if out.iter().any(|a| a.key.as_str() == key) {
                continue;
            }
            if crate::model::Key::new(key).is_err() {
                continue;
            }
            let step = server_get(&cx.store, me, &target, Some(key), &directives, false);
            if let ServerStep::Reply { status, data } = step
                && status == Status::SUCCESS
                && let Some(kv) = data
                    .iter()
                    .flat_map(|d| &d.kvals)
                    .find(|kv| kv.key.as_str() == key)
            {
                out.push(Info {
                    key: kv.key.clone(),
                    flags: crate::model::InfoDirectives(0),
                    value: kv.value.clone(),
                });
            }
        }
        out
    }

    /// The server's and host's levels of attribute support; the client and tool levels are
    /// the caller's library's to answer.
    fn support(&self, ask: Ask, function: Option<&str>) -> Option<Value> {
        match ask {
            Ask::Attributes(Level::Server) => {
                let names = q::SERVER
                    .iter()
                    .find(|(f, _)| Some(*f) == function)
                    .map_or(&[][..], |(_, a)| *a);
                Some(q::level_entry(Level::Server, q::regattrs(names)).value)
            }
            Ask::Attributes(Level::Host) => {
                let registered = function
                    .map(q::host_function)
                    .and_then(|f| self.host_attrs.get(f))
                    .map(|attrs| attrs.iter().cloned().map(Box::new).map(Value::RegAttr))
                    .into_iter()
                    .flatten()
                    .collect();
                Some(q::level_entry(Level::Host, registered).value)
            }
            Ask::Functions(Level::Server) => Some(Value::string(
                q::SERVER
                    .iter()
                    .map(|(f, _)| *f)
                    .collect::<Vec<_>>()
                    .join(","),
            )),
            Ask::Functions(Level::Host) => Some(Value::string(
                self.host_attrs
                    .keys()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(","),
            )),
            Ask::Attributes(_) | Ask::Functions(_) => None,
        }
    }
}

/// Complete a query with the host's answer, if it was asked: the namespaces registered
/// here when nobody answered them, then the reply.
fn finish(cx: &mut Shared, mut held: HeldQuery, host: Option<Result<Vec<Info>, Status>>) {
    let mut host_error = None;
    match host {
        Some(Ok(infos)) => {
            let sent: Vec<Query> = held
                .asked_host
                .iter()
                .map(|&i| held.queries[i].clone())
                .collect();
            for (i, answers) in held.asked_host.iter().zip(q::group(&sent, infos)) {
                held.answers[*i].extend(answers);
            }
        }
        Some(Err(s)) if s != Status::ERR_NOT_SUPPORTED && s != Status::ERR_NOT_FOUND => {
            host_error = Some(s);
        }
        _ => {}
    }
    for (query, answers) in held.queries.iter().zip(held.answers.iter_mut()) {
        let namespaces = attr::QUERY_NAMESPACES.wire_key();
        if q::asked(query).contains(&namespaces)
            && !answers.iter().any(|a| a.key.as_str() == namespaces)
        {
            let list: Vec<&str> = cx.store.namespaces.keys().map(|n| n.as_str()).collect();
            answers.push(Info::new(attr::QUERY_NAMESPACES, list.join(",")));
        }
    }
    let mut status = q::status_of(&held.queries, &held.answers);
    if status == Status::ERR_NOT_FOUND
        && let Some(s) = host_error
    {
        status = s;
    }
    let flat = if status == Status::SUCCESS || status == Status::ERR_PARTIAL_SUCCESS {
        held.answers.into_iter().flatten().collect()
    } else {
        Vec::new()
    };
    reply(cx, held.conn, held.tag, status, flat);
}

fn reply(cx: &mut Shared, conn: ConnId, tag: Tag, status: Status, info: Vec<Info>) {
    let reply = Reply::Op(OpReply::Infos {
        command: Command::QUERY,
        status,
        info,
    });
    cx.send(conn, tag, &reply);
}
