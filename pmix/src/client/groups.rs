//! The client's process-group calls (v5.0 ch. 14): construct, destruct, invite, join and
//! leave, each one request of `wire::ops` that the local server serves (see the server's
//! `core/groups.rs` for what each does). A group's id can then stand for its members in a
//! fence: `Proc::new(group, Rank::WILDCARD)`.

use crate::Error;
use crate::model::{DataArray, Info, Proc, Query, Status, attr};
use crate::wire::Request;
use crate::wire::ops::{GROUP_JOIN_DECLINES, Op};

use super::core::replies;
use super::{Client, Pending};

/// A process's answer to an invitation (`pmix_group_opt_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupAnswer {
    Accept,
    Decline,
}

/// A group `PMIx_Group_construct`, `PMIx_Group_invite` or `PMIx_Group_join` formed (v5.0
/// §14.2.6, §14.2.10, §14.2.12): `status` is `PMIX_SUCCESS` when every proposed member took
/// part, and `PMIX_ERR_PARTIAL_SUCCESS` when, with `PMIX_GROUP_OPTIONAL`, some did not;
/// `results` are the call's (with the final membership, `PMIX_GROUP_MEMBERSHIP`, after a
/// partial construction and after every invitation and join). A call that formed no group
/// is an `Err`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct GroupConstructed {
    pub status: Status,
    pub results: Vec<Info>,
}

impl Client {
    /// `PMIx_Group_construct`: build the group `group` of `procs` with every other member
    /// (v5.0 §14.2.6), a collective. The results hold `PMIX_GROUP_CONTEXT_ID` when
    /// `PMIX_GROUP_ASSIGN_CONTEXT_ID` was asked for and the host assigned one. With
    /// `PMIX_GROUP_OPTIONAL` and a `PMIX_TIMEOUT`, members that never came are left out (the
    /// status is then `PMIX_ERR_PARTIAL_SUCCESS`), and with `PMIX_GROUP_NOTIFY_TERMINATION`
    /// members that terminated before calling it: then the results hold the members who
    /// formed the group (`PMIX_GROUP_MEMBERSHIP`), as the server's reply names them or, when
    /// it does not (OpenPMIx 4.2's), as it answers `PMIX_QUERY_GROUP_MEMBERSHIP` (a server
    /// that cannot answer leaves them out).
    pub async fn group_construct(
        &self,
        group: &str,
        procs: &[Proc],
        info: &[Info],
    ) -> Result<GroupConstructed, Error> {
        let req = Request::Op(Op::GroupConstruct {
            group: group.to_owned(),
            procs: procs.to_vec(),
            info: info.to_vec(),
        });
        let reply = self.inner.conn.request(&req).await?;
        let (status, context_id, members) = replies::group_constructed(reply)?;
        // Members may have been left out: optional ones that never came (a partial
        // success), or, with PMIX_GROUP_NOTIFY_TERMINATION, ones that terminated before
        // calling construct. A 5.0 or later server names the members (and wants them back
        // in the destruct); another is asked.
        let may_differ = status == Status::ERR_PARTIAL_SUCCESS
            || Info::flag(info, attr::GROUP_NOTIFY_TERMINATION);
        let members = if !members.is_empty() {
            members
        } else if may_differ {
            (self.group_members(group).await).unwrap_or_else(|| procs.to_vec())
        } else {
            procs.to_vec()
        };
        self.state()
            .groups
            .insert(group.to_owned(), members.clone());
        let mut results = Vec::new();
        if let Some(id) = context_id.and_then(|c| usize::try_from(c).ok()) {
            results.push(Info::new(attr::GROUP_CONTEXT_ID, id));
        }
        // v5.0 §14.2.5: then each member receives "an updated group membership (marked
        // with the PMIX_GROUP_MEMBERSHIP attribute) as part of the results array".
        if as_set(&members) != as_set(procs) {
            results.push(Info::new(
                attr::GROUP_MEMBERSHIP,
                DataArray::of_procs(members),
            ));
        }
        Ok(GroupConstructed { status, results })
    }

    /// The members of `group` as the server knows them (`PMIX_QUERY_GROUP_MEMBERSHIP`); none
    /// when it cannot say.
    async fn group_members(&self, group: &str) -> Option<Vec<Proc>> {
        let membership = Query {
            keys: vec![Some(attr::QUERY_GROUP_MEMBERSHIP.wire_key().to_owned())],
            qualifiers: vec![Info::new(attr::GROUP_ID, group.to_owned())],
        };
        let answered = match self.query(&[membership]).await {
            Ok(answered) => answered,
            Err(s) => {
                tracing::debug!("no membership of group {group} from the server ({s:?})");
                return None;
            }
        };
        (answered.results.iter())
            .flat_map(crate::query::answers_in)
            .find(|i| i.key.as_str() == attr::QUERY_GROUP_MEMBERSHIP.wire_key())
            .map(|i| crate::events::procs_of(&i.value))
    }

    /// `PMIx_Group_destruct`: end the group with every other member (§14.2.8), a
    /// collective. An unknown group is `PMIX_ERR_NOT_FOUND`. A 5.0 or later server is sent
    /// the members this process learned when the group formed (`wire::version`).
    pub async fn group_destruct(&self, group: &str, info: &[Info]) -> Result<(), Error> {
        let members = (self.state().groups.get(group).cloned()).unwrap_or_default();
        let req = Request::Op(Op::GroupDestruct {
            group: group.to_owned(),
            members,
            info: info.to_vec(),
        });
        self.status_of(&req).await?;
        self.state().groups.remove(group);
        Ok(())
    }

    /// `PMIx_Group_invite`: invite `procs` into `group`, led by this process (§14.2.10).
    /// Each invitee hears `PMIX_GROUP_INVITED`; this call ends once every one of them has
    /// answered, and the group is this process and those who accepted: the results hold its
    /// members (`PMIX_GROUP_MEMBERSHIP`) and any context id the host assigned. When the
    /// `PMIX_TIMEOUT` of `info` passes first, the status is `PMIX_ERR_PARTIAL_SUCCESS` with
    /// `PMIX_GROUP_OPTIONAL` (the group is formed of those who accepted), and it is
    /// `Err(PMIX_ERR_TIMEOUT)` without.
    pub async fn group_invite(
        &self,
        group: &str,
        procs: &[Proc],
        info: &[Info],
    ) -> Result<GroupConstructed, Error> {
        // The server leaves the caller out of the invited: it leads the group by its role.
        let req = Request::Op(Op::GroupInvite {
            group: group.to_owned(),
            procs: procs.to_vec(),
            info: info.to_vec(),
        });
        self.formed(&req).await
    }

    /// `PMIx_Group_join`: answer `leader`'s invitation into `group` (§14.2.12). Accepting
    /// ends when the group is formed, with its members (`PMIX_GROUP_MEMBERSHIP`) and any
    /// context id in the results; declining ends at once, with none.
    pub async fn group_join(
        &self,
        group: &str,
        leader: &Proc,
        answer: GroupAnswer,
        info: &[Info],
    ) -> Result<GroupConstructed, Error> {
        let mut info = info.to_vec();
        if answer == GroupAnswer::Decline {
            let decline = Info::with_key(GROUP_JOIN_DECLINES, crate::model::Value::Bool(true))
                .map_err(|_| Status::ERR_BAD_PARAM)?;
            info.push(decline);
        }
        let req = Request::Op(Op::GroupJoin {
            group: group.to_owned(),
            procs: vec![leader.clone()],
            info,
        });
        self.formed(&req).await
    }

    /// An invitation's or a join's outcome: the group formed, as the server reports it.
    async fn formed(&self, req: &Request) -> Result<GroupConstructed, Error> {
        let (status, results) = replies::group_formed(self.inner.conn.request(req).await?)?;
        let membership = (results.iter())
            .find(|i| i.is(attr::GROUP_MEMBERSHIP))
            .map(|i| crate::events::procs_of(&i.value));
        if let (Request::Op(Op::GroupInvite { group, .. } | Op::GroupJoin { group, .. }), Some(m)) =
            (req, membership)
        {
            self.state().groups.insert(group.clone(), m);
        }
        Ok(GroupConstructed { status, results })
    }

    /// `PMIx_Group_leave`: leave `group` at once (§14.2.14); the other members hear
    /// `PMIX_GROUP_LEFT`.
    pub async fn group_leave(&self, group: &str, info: &[Info]) -> Result<(), Error> {
        let req = Request::Op(Op::GroupLeave {
            group: group.to_owned(),
            info: info.to_vec(),
        });
        self.status_of(&req).await
    }

    /// `PMIx_Group_construct_nb` (see [`Client::group_construct`]).
    pub fn group_construct_nb(
        &self,
        group: &str,
        procs: &[Proc],
        info: &[Info],
    ) -> Pending<GroupConstructed> {
        let (c, g, p, i) = (
            self.clone(),
            group.to_owned(),
            procs.to_vec(),
            info.to_vec(),
        );
        Pending(self.run_nb(async move { c.group_construct(&g, &p, &i).await }))
    }

    /// `PMIx_Group_destruct_nb` (see [`Client::group_destruct`]).
    pub fn group_destruct_nb(&self, group: &str, info: &[Info]) -> Pending<()> {
        let (c, g, i) = (self.clone(), group.to_owned(), info.to_vec());
        Pending(self.run_nb(async move { c.group_destruct(&g, &i).await }))
    }

    /// `PMIx_Group_invite_nb` (see [`Client::group_invite`]).
    pub fn group_invite_nb(
        &self,
        group: &str,
        procs: &[Proc],
        info: &[Info],
    ) -> Pending<GroupConstructed> {
        let (c, g, p, i) = (
            self.clone(),
            group.to_owned(),
            procs.to_vec(),
            info.to_vec(),
        );
        Pending(self.run_nb(async move { c.group_invite(&g, &p, &i).await }))
    }

    /// `PMIx_Group_join_nb` (see [`Client::group_join`]).
    pub fn group_join_nb(
        &self,
        group: &str,
        leader: &Proc,
        answer: GroupAnswer,
        info: &[Info],
    ) -> Pending<GroupConstructed> {
        let (c, g, l, i) = (
            self.clone(),
            group.to_owned(),
            leader.clone(),
            info.to_vec(),
        );
        Pending(self.run_nb(async move { c.group_join(&g, &l, answer, &i).await }))
    }

    /// `PMIx_Group_leave_nb` (see [`Client::group_leave`]).
    pub fn group_leave_nb(&self, group: &str, info: &[Info]) -> Pending<()> {
        let (c, g, i) = (self.clone(), group.to_owned(), info.to_vec());
        Pending(self.run_nb(async move { c.group_leave(&g, &i).await }))
    }
}

/// The processes of `procs`, once each and in order, to compare two memberships.
fn as_set(procs: &[Proc]) -> std::collections::BTreeSet<&Proc> {
    procs.iter().collect()
}
