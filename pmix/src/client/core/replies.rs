//! What the replies to the client's requests beyond data exchange mean to its caller: the
//! value a call returns or the error it fails with, read the same way by the async client
//! and the blocking one, and testable without a server.
//!
//! A reply of another kind than the request's is `PMIX_ERR_UNPACK_FAILURE`: the server
//! answered something else.

use crate::Error;
use crate::model::{ByteObject, Info, Kval, Nspace, Query, Status};
use crate::query::{self, Answered};
use crate::wire::op_reply::{JobData, OpReply};
use crate::wire::ops::Op;
use crate::wire::{Reply, Request};

fn unexpected() -> Error {
    Status::ERR_UNPACK_FAILURE.into()
}

/// A request answered by a status alone.
pub(crate) fn status(reply: Reply) -> Result<(), Error> {
    match reply {
        Reply::Status(s) | Reply::Op(OpReply::Status { status: s, .. }) if s == Status::SUCCESS => {
            Ok(())
        }
        Reply::Status(s) | Reply::Op(OpReply::Status { status: s, .. }) => Err(s.into()),
        _ => Err(unexpected()),
    }
}

/// A request answered by a status and infos (allocation, job control, monitoring,
/// credential validation): the infos of a success or a partial success.
pub(crate) fn infos(reply: Reply) -> Result<Vec<Info>, Error> {
    match reply {
        Reply::Op(OpReply::Infos { status, info, .. })
            if status == Status::SUCCESS || status == Status::ERR_PARTIAL_SUCCESS =>
        {
            Ok(info)
        }
        Reply::Op(OpReply::Infos { status, .. }) => Err(status.into()),
        Reply::Status(s) if s != Status::SUCCESS => Err(s.into()),
        _ => Err(unexpected()),
    }
}

/// A spawn's reply: the new namespace and its job information.
pub(crate) fn spawned(reply: Reply) -> Result<(Nspace, Vec<Kval>), Error> {
    match reply {
        Reply::Op(OpReply::Spawn {
            status,
            nspace: Some(ns),
            job_info,
        }) if status == Status::SUCCESS => {
            let nspace = Nspace::new(ns).map_err(|_| Status::ERR_BAD_PARAM)?;
            Ok((nspace, job_info))
        }
        Reply::Op(OpReply::Spawn { status, .. }) | Reply::Status(status) => {
            Err(if status == Status::SUCCESS {
                Error::BadParam("the server answered the spawn with no namespace".into())
            } else {
                Error::Status(status, "the spawn failed".into())
            })
        }
        _ => Err(unexpected()),
    }
}

/// A connect's reply: the job information of the set's other namespaces.
pub(crate) fn connected(reply: Reply) -> Result<Vec<JobData>, Error> {
    match reply {
        Reply::Op(OpReply::Connect { status, jobs }) if status == Status::SUCCESS => Ok(jobs),
        Reply::Op(OpReply::Connect { status, .. }) | Reply::Status(status) => Err(status.into()),
        _ => Err(unexpected()),
    }
}

/// A credential request's reply: the credential and what comes with it.
pub(crate) fn credential(reply: Reply) -> Result<(ByteObject, Vec<Info>), Error> {
    match reply {
        Reply::Op(OpReply::Credential {
            status,
            credential: Some(c),
            info,
        }) if status == Status::SUCCESS => Ok((c, info)),
        Reply::Op(OpReply::Credential { status, .. }) | Reply::Status(status) => {
            Err(if status == Status::SUCCESS {
                Error::decode(
                    Status::ERR_UNPACK_FAILURE,
                    "a credential reply without a credential",
                )
            } else {
                Error::Status(status, "no credential".into())
            })
        }
        _ => Err(unexpected()),
    }
}

/// A group construction's reply: its status (a success or a partial one, when members were
/// lost on the way), the context id the server assigned, and the members it names (a 5.0
/// or later server does; others name none).
pub(crate) fn group_constructed(
    reply: Reply,
) -> Result<(Status, Option<u64>, Vec<crate::model::Proc>), Error> {
    match reply {
        Reply::Op(OpReply::GroupConstruct {
            status,
            context_id,
            members,
        }) if status == Status::SUCCESS || status == Status::ERR_PARTIAL_SUCCESS => {
            Ok((status, context_id, members))
        }
        Reply::Op(OpReply::GroupConstruct { status, .. } | OpReply::Status { status, .. })
        | Reply::Status(status) => Err(status.into()),
        _ => Err(unexpected()),
    }
}

/// An invitation's or a join's reply: the group formed, as the server reports it, with
/// the status of a success or a partial one.
pub(crate) fn group_formed(reply: Reply) -> Result<(Status, Vec<Info>), Error> {
    match reply {
        Reply::Op(OpReply::Infos { status, info, .. })
            if status == Status::SUCCESS || status == Status::ERR_PARTIAL_SUCCESS =>
        {
            Ok((status, info))
        }
        Reply::Op(OpReply::Infos { status, .. } | OpReply::Status { status, .. })
        | Reply::Status(status) => Err(status.into()),
        _ => Err(unexpected()),
    }
}

/// A fabric registration's or update's reply: the fabric's information, on success only.
pub(crate) fn fabric(reply: Reply) -> Result<Vec<Info>, Error> {
    match reply {
        Reply::Op(OpReply::Infos { status, info, .. }) if status == Status::SUCCESS => Ok(info),
        Reply::Op(OpReply::Infos { status, .. } | OpReply::Status { status, .. })
        | Reply::Status(status) => Err(status.into()),
        _ => Err(unexpected()),
    }
}

/// A query in progress: what this library answers itself (the client and tool levels of
/// attribute support), and the queries it forwards to the server for the rest.
#[derive(Debug)]
pub(crate) struct QueryPlan {
    queries: Vec<Query>,
    answers: Vec<Vec<Info>>,
    /// For each forwarded query, the index of the query it came from.
    sent: Vec<usize>,
    forwarded: Vec<Query>,
}

impl QueryPlan {
    /// Check `queries` and answer what this library can.
    pub(crate) fn new(queries: &[Query]) -> Result<Self, Error> {
        query::check(queries)?;
        let answers = queries.iter().map(query::local_answers).collect();
        let (sent, forwarded) = (queries.iter().enumerate())
            .filter_map(|(i, q)| query::for_server(q).map(|f| (i, f)))
            .unzip();
        Ok(QueryPlan {
            queries: queries.to_vec(),
            answers,
            sent,
            forwarded,
        })
    }

    /// The request for the server, if anything is left for it.
    pub(crate) fn request(&self) -> Option<Request> {
        (!self.forwarded.is_empty()).then(|| {
            Request::Op(Op::Query {
                queries: self.forwarded.clone(),
            })
        })
    }

    /// The answer, given the server's reply to [`QueryPlan::request`] (none if nothing was
    /// asked of it). Keys nobody answered are `PMIX_ERR_NOT_FOUND`, or the server's error
    /// when it failed otherwise.
    pub(crate) fn answer(mut self, reply: Option<Result<Reply, Error>>) -> Result<Answered, Error> {
        let mut server_error = None;
        if let Some(reply) = reply {
            let (status, flat) = match reply {
                Ok(Reply::Op(OpReply::Infos { status, info, .. })) => (status, info),
                Ok(Reply::Status(s)) => (s, Vec::new()),
                Ok(_) => (Status::ERR_UNPACK_FAILURE, Vec::new()),
                Err(e) => (e.status(), Vec::new()),
            };
            if status != Status::SUCCESS
                && status != Status::ERR_PARTIAL_SUCCESS
                && status != Status::ERR_NOT_FOUND
            {
                server_error = Some(status);
            }
            let theirs: Vec<Vec<Info>> = if query::is_shaped(&flat) {
                (flat.iter())
                    .map(|r| query::answers_in(r).into_iter().cloned().collect())
                    .collect()
            } else {
                query::group(&self.forwarded, flat)
            };
            for (i, got) in self.sent.iter().copied().zip(theirs) {
                let mine = std::mem::take(&mut self.answers[i]);
                self.answers[i] = if query::is_attribute_support(&self.queries[i]) {
                    query::merge_support(mine, got)
                } else {
                    mine.into_iter().chain(got).collect()
                };
            }
        }
        match query::status_of(&self.queries, &self.answers) {
            Status::ERR_NOT_FOUND => Err(server_error.unwrap_or(Status::ERR_NOT_FOUND).into()),
            status => Ok(Answered {
                status,
                results: query::results(&self.queries, self.answers),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test helpers fail loudly by design

    use super::*;
    use crate::model::{Value, attr};
    use crate::wire::Command;

    fn failed<T: std::fmt::Debug>(r: Result<T, Error>) -> Status {
        r.unwrap_err().status()
    }

    fn infos_reply(status: Status, info: Vec<Info>) -> Reply {
        Reply::Op(OpReply::Infos {
            command: Command::QUERY,
            status,
            info,
        })
    }

    #[test]
    fn a_spawn_answers_its_namespace_or_why_not() {
        let ok = Reply::Op(OpReply::Spawn {
            status: Status::SUCCESS,
            nspace: Some("child".into()),
            job_info: Vec::new(),
        });
        assert_eq!(spawned(ok).unwrap().0.as_str(), "child");
        let nameless = Reply::Op(OpReply::Spawn {
            status: Status::SUCCESS,
            nspace: None,
            job_info: Vec::new(),
        });
        assert_eq!(failed(spawned(nameless)), Status::ERR_BAD_PARAM);
        let refused = Reply::Status(Status::ERR_JOB_EXE_NOT_FOUND);
        assert_eq!(failed(spawned(refused)), Status::ERR_JOB_EXE_NOT_FOUND);
        let other = infos_reply(Status::SUCCESS, Vec::new());
        assert_eq!(failed(spawned(other)), Status::ERR_UNPACK_FAILURE);
    }

    #[test]
    fn a_credential_reply_must_carry_the_credential() {
        let ok = Reply::Op(OpReply::Credential {
            status: Status::SUCCESS,
            credential: Some(ByteObject(b"sealed".to_vec())),
            info: Vec::new(),
        });
        assert_eq!(credential(ok).unwrap().0, ByteObject(b"sealed".to_vec()));
        let empty = Reply::Op(OpReply::Credential {
            status: Status::SUCCESS,
            credential: None,
            info: Vec::new(),
        });
        assert_eq!(failed(credential(empty)), Status::ERR_UNPACK_FAILURE);
        let refused = Reply::Status(Status::ERR_NOT_SUPPORTED);
        assert_eq!(failed(credential(refused)), Status::ERR_NOT_SUPPORTED);
    }

    #[test]
    fn infos_come_with_a_success_or_a_partial_one_and_statuses_alone_fail() {
        let some = vec![Info::new(attr::TIMEOUT, 3)];
        let partial = infos_reply(Status::ERR_PARTIAL_SUCCESS, some.clone());
        assert_eq!(infos(partial).unwrap(), some);
        let denied = infos_reply(Status::ERR_NO_PERMISSIONS, Vec::new());
        assert_eq!(failed(infos(denied)), Status::ERR_NO_PERMISSIONS);
        // A bare success carries no infos: not an answer to a request that wants them.
        assert_eq!(
            failed(infos(Reply::Status(Status::SUCCESS))),
            Status::ERR_UNPACK_FAILURE
        );
        assert_eq!(status(Reply::Status(Status::SUCCESS)), Ok(()));
        assert_eq!(
            failed(status(Reply::Status(Status::ERR_TIMEOUT))),
            Status::ERR_TIMEOUT
        );
    }

    #[test]
    fn groups_form_with_a_partial_success_and_fabrics_with_a_full_one() {
        let partial = Reply::Op(OpReply::GroupConstruct {
            status: Status::ERR_PARTIAL_SUCCESS,
            context_id: Some(4),
            members: vec![],
        });
        assert_eq!(
            group_constructed(partial),
            Ok((Status::ERR_PARTIAL_SUCCESS, Some(4), vec![]))
        );
        let lost = Reply::Op(OpReply::GroupConstruct {
            status: Status::ERR_PROC_TERM_WO_SYNC,
            context_id: None,
            members: vec![],
        });
        assert_eq!(
            failed(group_constructed(lost)),
            Status::ERR_PROC_TERM_WO_SYNC
        );
        let members = vec![Info::new(attr::TIMEOUT, 1)];
        let formed = infos_reply(Status::ERR_PARTIAL_SUCCESS, members.clone());
        assert_eq!(
            group_formed(formed),
            Ok((Status::ERR_PARTIAL_SUCCESS, members.clone()))
        );
        let partial_fabric = infos_reply(Status::ERR_PARTIAL_SUCCESS, members);
        assert_eq!(failed(fabric(partial_fabric)), Status::ERR_PARTIAL_SUCCESS);
    }

    fn namespaces_query() -> Query {
        Query {
            keys: vec![Some(attr::QUERY_NAMESPACES.wire_key().to_owned())],
            qualifiers: Vec::new(),
        }
    }

    #[test]
    fn a_query_goes_to_the_server_and_comes_back_as_one_result_per_query() {
        let plan = QueryPlan::new(&[namespaces_query()]).unwrap();
        let Some(Request::Op(Op::Query { queries })) = plan.request() else {
            panic!("the query goes to the server");
        };
        assert_eq!(queries, [namespaces_query()]);
        let found = vec![Info::new(attr::QUERY_NAMESPACES, "a,b".to_owned())];
        let answered = plan
            .answer(Some(Ok(infos_reply(Status::SUCCESS, found))))
            .unwrap();
        assert_eq!(answered.status, Status::SUCCESS);
        assert_eq!(answered.results.len(), 1);
    }

    #[test]
    fn a_query_nobody_answers_fails_with_the_servers_error_or_not_found() {
        let timed_out = QueryPlan::new(&[namespaces_query()])
            .unwrap()
            .answer(Some(Ok(infos_reply(Status::ERR_TIMEOUT, Vec::new()))));
        assert_eq!(failed(timed_out), Status::ERR_TIMEOUT);
        let lost = QueryPlan::new(&[namespaces_query()])
            .unwrap()
            .answer(Some(Err(Error::Status(
                Status::ERR_LOST_CONNECTION,
                String::new(),
            ))));
        assert_eq!(failed(lost), Status::ERR_LOST_CONNECTION);
        let none = QueryPlan::new(&[namespaces_query()])
            .unwrap()
            .answer(Some(Ok(infos_reply(Status::ERR_NOT_FOUND, Vec::new()))));
        assert_eq!(failed(none), Status::ERR_NOT_FOUND);
    }

    #[test]
    fn the_client_level_of_attribute_support_is_answered_without_the_server() {
        let query = Query {
            keys: vec![
                Some(attr::QUERY_ATTRIBUTE_SUPPORT.wire_key().to_owned()),
                Some("PMIx_Get".to_owned()),
            ],
            qualifiers: vec![Info::new(attr::CLIENT_ATTRIBUTES, true)],
        };
        let plan = QueryPlan::new(std::slice::from_ref(&query)).unwrap();
        assert!(plan.request().is_none(), "nothing is left for the server");
        let answered = plan.answer(None).unwrap();
        assert_eq!(answered.status, Status::SUCCESS);
        assert!(
            !matches!(
                answered.results.first().map(|i| &i.value),
                None | Some(Value::Undef)
            ),
            "{answered:?}"
        );
    }
}
