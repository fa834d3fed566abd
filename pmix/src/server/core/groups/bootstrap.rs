//! Group construction by bootstrap (the standard's latest draft, §14.2.5, provisional): not
//! every participant knows the whole membership. Each *leader* calls `PMIx_Group_construct`
//! with only itself as `procs` and `PMIX_GROUP_BOOTSTRAP` set to the number of leaders, and
//! may list more members in `PMIX_GROUP_ADD_MEMBERS`; each of those calls it with no
//! `procs`. The construction completes once every leader and every member a leader listed
//! has called it; the group is the leaders, then the added members, each in process order.
//!
//! Here the bootstrap only gathers the membership: once it is complete, every participant's
//! call goes on as a collective construction of the whole group ([`super::groups`]), so the
//! group's directives (a context id, termination notices, `PMIX_TIMEOUT`) work as they do
//! there. An added member calling before any leader has called here passes
//! `PMIX_GROUP_BOOTSTRAP` too (any value); without it, and with no bootstrap of that group in
//! progress, an empty member list is `PMIX_ERR_BAD_PARAM` as in any construction.
//!
//! Bootstraps are served within one server: a listed member on another node, or more leaders
//! than this server serves processes, is `PMIX_ERR_NOT_SUPPORTED`. A member that terminates
//! before the membership is complete (or is listed once gone) ends it with
//! `PMIX_ERR_LOST_CONNECTION`, and its
//! `PMIX_TIMEOUT` (the first leader's) with `PMIX_ERR_TIMEOUT`.

use crate::events::procs_of;
use crate::model::{Info, Proc, Status, attr};
use crate::retrieval::Directives;

use super::super::collective::Waiter;
use super::group::{Kind, Roles, tolerates_losses};
use super::state::GroupsAt;
use crate::wire::Tag;

use super::super::interface::{Action, ConnId};

impl GroupsAt<'_> {
    /// Whether a construction from `procs` and `info` of `group` is by bootstrap.
    pub(in crate::server::core) fn is_bootstrap(
        &self,
        group: &str,
        procs: &[Proc],
        info: &[Info],
    ) -> bool {
        info.iter().any(|i| i.is(attr::GROUP_BOOTSTRAP))
            || (procs.is_empty() && self.groups.bootstraps.contains_key(group))
    }

    /// `PMIx_Group_construct` from `me` by bootstrap: as a leader (`procs` is `me` alone) or
    /// an added member (no `procs`).
    pub(in crate::server::core) fn bootstrap_construct(
        &mut self,
        conn: ConnId,
        me: &Proc,
        tag: Tag,
        group: String,
        procs: Vec<Proc>,
        info: &[Info],
    ) {
        let count = info.iter().find_map(|i| i.get(attr::GROUP_BOOTSTRAP));
        let leads = procs.len() == 1 && procs[0] == *me;
        let entry = self.groups.bootstraps.get(&group);
        // A leader states how many leaders there are, as the others did.
        let miscounted = leads
            && (count.is_none_or(|n| n == 0)
                || entry.is_some_and(|b| b.leaders_expected.is_some_and(|n| Some(n) != count)));
        let status = if group.is_empty() || !(leads || procs.is_empty()) || miscounted {
            Status::ERR_BAD_PARAM
        } else if self.group_name_taken(&group)
            || entry.is_some_and(|b| b.leaders.contains_key(me) || b.added.contains_key(me))
        {
            Status::ERR_EXISTS
        } else {
            Status::SUCCESS
        };
        if status != Status::SUCCESS {
            tracing::debug!("{me}: bootstrap construction of {group:?} refused: {status:?}");
            self.group_reply(Kind::Construct, conn, tag, status, (&[], None));
            return;
        }
        let timeout = Directives::from_info(info).timeout_s;
        let b = self.groups.bootstraps.entry(group.clone()).or_default();
        let waiter = Waiter { conn, tag: tag.0 };
        if leads {
            b.leaders_expected = count;
            b.leaders.insert(me.clone(), waiter);
            let listed = (info.iter())
                .filter(|i| i.is(attr::GROUP_ADD_MEMBERS))
                .flat_map(|i| procs_of(&i.value));
            b.listed.extend(listed);
            if b.info.is_empty() {
                b.info = info.to_vec();
            }
        } else {
            b.added.insert(me.clone(), waiter);
        }
        if let Some(after_s) = timeout.filter(|_| b.timer.is_none()) {
            let op = self.op();
            if let Some(b) = self.groups.bootstraps.get_mut(&group) {
                b.timer = Some(op);
            }
            self.cx.push(Action::Timer { op, after_s });
        }
        self.bootstrap_progress(&group);
    }

    /// End the bootstrap of `group` if its membership is complete, or cannot be here.
    fn bootstrap_progress(&mut self, group: &str) {
        let Some(b) = self.groups.bootstraps.get(group) else {
            return;
        };
        let gone = (b.listed.iter())
            .chain(b.leaders.keys())
            .chain(b.added.keys())
            .any(|p| self.is_gone(p));
        if gone {
            self.end_bootstrap(group, Status::ERR_LOST_CONNECTION);
            return;
        }
        let serves = self.cx.store.local.len();
        let elsewhere = b.listed.iter().any(|p| !self.cx.store.is_local(p))
            || b.leaders_expected.is_some_and(|n| n > serves);
        if elsewhere {
            tracing::warn!("bootstrap construction of {group:?} reaches beyond this node");
            self.end_bootstrap(group, Status::ERR_NOT_SUPPORTED);
            return;
        }
        let complete = b.leaders_expected == Some(b.leaders.len())
            && b.listed
                .iter()
                .all(|p| b.added.contains_key(p) || b.leaders.contains_key(p));
        if !complete {
            return;
        }
        let Some(b) = self.groups.bootstraps.remove(group) else {
            return;
        };
        let mut members: Vec<Proc> = b.leaders.keys().cloned().collect();
        members.extend(
            b.listed
                .iter()
                .filter(|p| !b.leaders.contains_key(*p))
                .cloned(),
        );
        // Whoever called without being listed is not a member.
        for (p, w) in b.added.iter().filter(|(p, _)| !b.listed.contains(*p)) {
            tracing::debug!("{p}: not listed by any leader of {group:?}");
            self.group_reply(
                Kind::Construct,
                w.conn,
                Tag(w.tag),
                Status::ERR_BAD_PARAM,
                (&[], None),
            );
        }
        let optional = Info::flag(&b.info, attr::GROUP_OPTIONAL);
        let roles = Roles {
            leader: b.leaders.keys().next().cloned(),
            notify: Info::flag(&b.info, attr::GROUP_NOTIFY_TERMINATION) && !optional,
            tolerant: tolerates_losses(&b.info) && !optional,
            excused: Vec::new(),
        };
        self.groups.roles.insert(group.to_owned(), roles);
        // Its timer is spent: the collective arms its own from the directives.
        let mut info = b.info.clone();
        info.retain(|i| !i.is(attr::TIMEOUT));
        let calls: Vec<(Proc, Waiter)> = (b.leaders.iter())
            .chain(b.added.iter().filter(|(p, _)| b.listed.contains(*p)))
            .map(|(p, w)| (p.clone(), *w))
            .collect();
        for (p, w) in calls {
            self.group_contribute(Kind::Construct, &p, w, group, &members, &info);
        }
    }

    /// End the bootstrap of `group` with `status` at everyone who called.
    fn end_bootstrap(&mut self, group: &str, status: Status) {
        let Some(b) = self.groups.bootstraps.remove(group) else {
            return;
        };
        let waiters: Vec<Waiter> = b.waiters().copied().collect();
        for w in waiters {
            self.group_reply(Kind::Construct, w.conn, Tag(w.tag), status, (&[], None));
        }
    }

    /// `proc` terminated: a bootstrap it took part in, or was listed in, cannot complete.
    pub(in crate::server::core) fn bootstrap_lost(&mut self, proc: &Proc) {
        let hit: Vec<String> = (self.groups.bootstraps.iter())
            .filter(|(_, b)| {
                b.leaders.contains_key(proc)
                    || b.added.contains_key(proc)
                    || b.listed.contains(proc)
            })
            .map(|(g, _)| g.clone())
            .collect();
        for g in hit {
            self.end_bootstrap(&g, Status::ERR_LOST_CONNECTION);
        }
    }

    /// The timer `op` bounded a bootstrap: end it. Whether it did.
    pub(in crate::server::core) fn bootstrap_timed_out(&mut self, op: u64) -> bool {
        let hit = (self.groups.bootstraps.iter())
            .find(|(_, b)| b.timer == Some(op))
            .map(|(g, _)| g.clone());
        match hit {
            Some(g) => {
                self.end_bootstrap(&g, Status::ERR_TIMEOUT);
                true
            }
            None => false,
        }
    }
}
