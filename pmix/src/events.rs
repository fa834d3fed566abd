//! Event notification (PMIx v5.0 chapter 10): which processes an event reaches, which of a
//! process's handlers it reaches, and in what order they run. Sans-IO: the client's driver
//! (`client::events`) calls the handlers, the server uses [`Event::reaches`] to pick the
//! clients to forward an event to.
//!
//! The chain for one event (§10.1.2, §10.1.4):
//!
//! ```text
//!   global FIRST  →  single-code handlers  →  multi-code handlers  →  default handlers  →  global LAST
//!                    (each category: FIRST_IN_CATEGORY, then the list, then LAST_IN_CATEGORY)
//! ```
//!
//! A handler is in the chain when it was registered for the event's code (a default handler,
//! registered with no codes, for every code unless the event is `PMIX_EVENT_NON_DEFAULT`) and
//! its filters accept the event: `PMIX_EVENT_AFFECTED_PROC(S)` (the event must name one of
//! those processes as affected), `PMIX_EVENT_CUSTOM_RANGE` (the source must be one of those
//! processes) and `PMIX_RANGE` (the source must be within that range of the registrant).
//!
//! Placement within a category: the list starts empty; `PMIX_EVENT_HDLR_PREPEND` puts a handler
//! at its front, `PMIX_EVENT_HDLR_APPEND` (and no directive) at its end,
//! `PMIX_EVENT_HDLR_BEFORE`/`_AFTER` immediately next to the handler of that name in the same
//! category; after the chain's first handler (or before its last) is the front (or the end) of
//! the category's list, as OpenPMIx places it. There is one global first, one global last, and
//! one first and one last per category: a second claim fails with
//! `PMIX_ERR_EVENT_REGISTRATION`, as does naming a handler that neither the category holds
//! nor is the chain's first (for after) or last (for before) (the standard leaves both open;
//! refusing says so at once rather than placing the handler somewhere the caller did not ask
//! for).
//!
//! A chain (`Chain`, internal) walks the handlers in order, accumulating the results each returns for the
//! handlers after it; `PMIX_EVENT_ACTION_COMPLETE` ends it.

use std::collections::BTreeMap;

use crate::model::{DataRange, Info, Proc, Status, Value, attr};
use crate::wire::Notification;

/// The identifier `PMIx_Register_event_handler` returns.
pub type HandlerId = usize;

/// An event as delivered: its code, the process that raised it, its range and its infos.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub status: Status,
    pub source: Proc,
    pub range: DataRange,
    pub info: Vec<Info>,
}

impl Event {
    /// The processes the event names as affected (`PMIX_EVENT_AFFECTED_PROC` and
    /// `PMIX_EVENT_AFFECTED_PROCS`).
    pub fn affected(&self) -> Vec<Proc> {
        let mut out = Vec::new();
        for i in &self.info {
            if let Some(p) = i.get(attr::EVENT_AFFECTED_PROC) {
                out.push(p);
            }
            if i.is(attr::EVENT_AFFECTED_PROCS) {
                out.extend(procs_of(&i.value));
            }
        }
        out
    }

    /// The processes of `PMIX_EVENT_CUSTOM_RANGE`, when given.
    pub fn custom_range(&self) -> Option<Vec<Proc>> {
        self.info
            .iter()
            .find(|i| i.is(attr::EVENT_CUSTOM_RANGE))
            .map(|i| procs_of(&i.value))
    }

    /// `PMIX_EVENT_NON_DEFAULT`: default handlers do not see it (nor those of
    /// [`for_the_library`]'s codes).
    pub fn non_default(&self) -> bool {
        flag(&self.info, attr::EVENT_NON_DEFAULT)
    }

    /// `PMIX_EVENT_DO_NOT_CACHE`: the server does not keep it for later registrants.
    pub fn do_not_cache(&self) -> bool {
        flag(&self.info, attr::EVENT_DO_NOT_CACHE)
    }

    /// Whether the event's range includes `target` (§10.1.8): `PROC_LOCAL` only the source's
    /// own process, `NAMESPACE` the source's namespace (every namespace for an event of the
    /// host, whose source has none), `CUSTOM` the processes of `PMIX_EVENT_CUSTOM_RANGE`,
    /// `RM` none (the host alone), every other range anyone the deliverer can reach.
    pub fn reaches(&self, target: &Proc) -> bool {
        match self.range {
            DataRange::PROC_LOCAL => self.source == *target,
            DataRange::NAMESPACE => {
                self.source.nspace.is_empty() || self.source.nspace == target.nspace
            }
            DataRange::CUSTOM => self
                .custom_range()
                .is_some_and(|list| list.iter().any(|p| p.matches(target))),
            DataRange::RM | DataRange::INVALID => false,
            _ => true,
        }
    }

    /// Whether the event is well formed for `PMIx_Notify_event`: a known range, and the
    /// process list a custom range needs (`PMIX_ERR_BAD_PARAM` otherwise).
    pub fn check(&self) -> Result<(), Status> {
        if self.range.0 > DataRange::PROC_LOCAL.0 {
            return Err(Status::ERR_BAD_PARAM);
        }
        if self.range == DataRange::CUSTOM && self.custom_range().is_none_or(|l| l.is_empty()) {
            return Err(Status::ERR_BAD_PARAM);
        }
        Ok(())
    }
}

/// An event as the server pushes it (tag 0) and as the client receives it.
impl From<Notification> for Event {
    fn from(n: Notification) -> Event {
        Event {
            status: n.status,
            source: n.source,
            range: n.range,
            info: n.info,
        }
    }
}

impl From<&Event> for Notification {
    fn from(e: &Event) -> Notification {
        Notification {
            status: e.status,
            source: e.source.clone(),
            info: e.info.clone(),
            range: e.range,
        }
    }
}

pub(crate) fn procs_of(v: &Value) -> Vec<Proc> {
    match v {
        Value::Proc(p) => vec![p.clone()],
        Value::DataArray(a) => a
            .elements
            .iter()
            .filter_map(|e| e.as_proc().cloned())
            .collect(),
        _ => Vec::new(),
    }
}

fn flag(info: &[Info], a: attr::Attr<bool>) -> bool {
    info.iter()
        .any(|i| i.is(a) && i.value.as_bool().unwrap_or(true))
}

/// Where a registration asks to be placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    First,
    Last,
    FirstInCategory,
    LastInCategory,
    Before(String),
    After(String),
    Prepend,
    Append,
}

/// The three categories of §10.1.2, in chain order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    SingleCode,
    MultiCode,
    Default,
}

/// One handler's registration: its codes and what its infos asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct Registration {
    pub codes: Vec<Status>,
    /// `PMIX_EVENT_HDLR_NAME`.
    pub name: Option<String>,
    pub placement: Placement,
    /// `PMIX_EVENT_AFFECTED_PROC(S)`: only events affecting one of these.
    pub affected: Option<Vec<Proc>>,
    /// `PMIX_EVENT_CUSTOM_RANGE`: only events from one of these.
    pub sources: Option<Vec<Proc>>,
    /// `PMIX_RANGE`: only events whose source is within this range of the registrant.
    pub range: Option<DataRange>,
}

impl Registration {
    /// Read a registration's infos. Contradictory placements (two of first, last, before,
    /// after, …) are refused with `PMIX_ERR_BAD_PARAM`.
    pub fn new(codes: &[Status], info: &[Info]) -> Result<Registration, Status> {
        let mut codes = codes.to_vec();
        codes.sort_unstable_by_key(|c| c.0);
        codes.dedup();
        let mut name = None;
        let mut placements = Vec::new();
        let mut affected: Option<Vec<Proc>> = None;
        let mut sources = None;
        let mut range = None;
        let on = |i: &Info| i.value.as_bool().unwrap_or(true);
        for i in info {
            if i.is(attr::EVENT_HDLR_NAME) {
                name = i.value.as_str().map(str::to_owned);
            } else if i.is(attr::EVENT_HDLR_FIRST) && on(i) {
                placements.push(Placement::First);
            } else if i.is(attr::EVENT_HDLR_LAST) && on(i) {
                placements.push(Placement::Last);
            } else if i.is(attr::EVENT_HDLR_FIRST_IN_CATEGORY) && on(i) {
                placements.push(Placement::FirstInCategory);
            } else if i.is(attr::EVENT_HDLR_LAST_IN_CATEGORY) && on(i) {
                placements.push(Placement::LastInCategory);
            } else if i.is(attr::EVENT_HDLR_PREPEND) && on(i) {
                placements.push(Placement::Prepend);
            } else if i.is(attr::EVENT_HDLR_APPEND) && on(i) {
                placements.push(Placement::Append);
            } else if i.is(attr::EVENT_HDLR_BEFORE) || i.is(attr::EVENT_HDLR_AFTER) {
                let target = i.value.as_str().ok_or(Status::ERR_BAD_PARAM)?.to_owned();
                placements.push(if i.is(attr::EVENT_HDLR_BEFORE) {
                    Placement::Before(target)
                } else {
                    Placement::After(target)
                });
            } else if i.is(attr::EVENT_AFFECTED_PROC) || i.is(attr::EVENT_AFFECTED_PROCS) {
                affected
                    .get_or_insert_with(Vec::new)
                    .extend(procs_of(&i.value));
            } else if i.is(attr::EVENT_CUSTOM_RANGE) {
                sources = Some(procs_of(&i.value));
            } else if i.is(attr::RANGE) {
                range = Some(i.get(attr::RANGE).ok_or(Status::ERR_BAD_PARAM)?);
            }
        }
        if placements.len() > 1 {
            return Err(Status::ERR_BAD_PARAM);
        }
        Ok(Registration {
            codes,
            name,
            placement: placements.pop().unwrap_or(Placement::Append),
            affected,
            sources,
            range,
        })
    }

    pub fn category(&self) -> Category {
        match self.codes.len() {
            0 => Category::Default,
            1 => Category::SingleCode,
            _ => Category::MultiCode,
        }
    }

    /// Whether this handler is to see `event`, raised to the process `me`.
    pub fn accepts(&self, me: &Proc, event: &Event) -> bool {
        let code = if self.codes.is_empty() {
            !event.non_default() && !for_the_library(event.status)
        } else {
            self.codes.contains(&event.status)
        };
        let affected = self.affected.as_ref().is_none_or(|mine| {
            event
                .affected()
                .iter()
                .any(|a| mine.iter().any(|m| m.matches(a)))
        });
        let source = self
            .sources
            .as_ref()
            .is_none_or(|list| list.iter().any(|p| p.matches(&event.source)));
        let range = match self.range {
            Some(DataRange::PROC_LOCAL) => event.source == *me,
            Some(DataRange::NAMESPACE) => event.source.nspace == me.nspace,
            _ => true,
        };
        code && affected && source && range
    }
}

/// The handlers of one category in their order.
#[derive(Clone, Debug, Default)]
struct Lineup {
    first: Option<HandlerId>,
    middle: Vec<HandlerId>,
    last: Option<HandlerId>,
}

impl Lineup {
    fn ids(&self) -> impl Iterator<Item = HandlerId> + '_ {
        self.first
            .iter()
            .chain(self.middle.iter())
            .chain(self.last.iter())
            .copied()
    }

    fn remove(&mut self, id: HandlerId) {
        if self.first == Some(id) {
            self.first = None;
        }
        if self.last == Some(id) {
            self.last = None;
        }
        self.middle.retain(|h| *h != id);
    }
}

/// A process's registered handlers: where each stands in the chain, and which of them an
/// event reaches. The client keeps one; so does a process that registers handlers in C
/// with a server and no client (this project's `libpmix.so.2`).
#[derive(Clone, Debug, Default)]
pub struct Registry {
    next: HandlerId,
    entries: BTreeMap<HandlerId, Registration>,
    first: Option<HandlerId>,
    last: Option<HandlerId>,
    categories: BTreeMap<Category, Lineup>,
}

impl Registry {
    #[cfg(test)]
    pub(crate) fn new() -> Registry {
        Registry::default()
    }

    /// Place a handler; its identifier, or `PMIX_ERR_EVENT_REGISTRATION` when the place it
    /// asks for is taken or names no handler of its category. A refusal changes nothing.
    pub fn register(&mut self, reg: Registration) -> Result<HandlerId, Status> {
        let id = self.next;
        let taken = Err(Status::ERR_EVENT_REGISTRATION);
        let position = |line: &Lineup, name: &str| {
            line.middle
                .iter()
                .position(|h| self.entries.get(h).and_then(|r| r.name.as_deref()) == Some(name))
        };
        let name_of = |h: Option<HandlerId>| h.and_then(|h| self.entries.get(&h)?.name.clone());
        let line = self.categories.entry(reg.category()).or_default();
        match &reg.placement {
            Placement::First if self.first.is_some() => return taken,
            Placement::First => self.first = Some(id),
            Placement::Last if self.last.is_some() => return taken,
            Placement::Last => self.last = Some(id),
            Placement::FirstInCategory if line.first.is_some() => return taken,
            Placement::FirstInCategory => line.first = Some(id),
            Placement::LastInCategory if line.last.is_some() => return taken,
            Placement::LastInCategory => line.last = Some(id),
            Placement::Prepend => line.middle.insert(0, id),
            Placement::Append => line.middle.push(id),
            Placement::Before(name) => match position(line, name) {
                Some(at) => line.middle.insert(at, id),
                // Before the category's last, or the chain's: the end of its list.
                None if [line.last, self.last]
                    .iter()
                    .any(|h| name_of(*h).as_deref() == Some(name)) =>
                {
                    line.middle.push(id);
                }
                None => return taken,
            },
            Placement::After(name) => match position(line, name) {
                Some(at) => line.middle.insert(at + 1, id),
                // After the category's first, or the chain's: the front of its list.
                None if [line.first, self.first]
                    .iter()
                    .any(|h| name_of(*h).as_deref() == Some(name)) =>
                {
                    line.middle.insert(0, id);
                }
                None => return taken,
            },
        }
        self.entries.insert(id, reg);
        self.next += 1;
        Ok(id)
    }

    /// Remove a handler: its registration, or `PMIX_ERR_BAD_PARAM` for an identifier this
    /// registry does not hold (§10.1.7).
    pub fn deregister(&mut self, id: HandlerId) -> Result<Registration, Status> {
        let reg = self.entries.remove(&id).ok_or(Status::ERR_BAD_PARAM)?;
        if self.first == Some(id) {
            self.first = None;
        }
        if self.last == Some(id) {
            self.last = None;
        }
        for line in self.categories.values_mut() {
            line.remove(id);
        }
        Ok(reg)
    }

    pub fn get(&self, id: HandlerId) -> Option<&Registration> {
        self.entries.get(&id)
    }

    /// The handlers `event` reaches in process `me`, in the order they run.
    pub fn chain(&self, me: &Proc, event: &Event) -> Vec<HandlerId> {
        let ordered = self
            .first
            .into_iter()
            .chain(self.categories.values().flat_map(Lineup::ids))
            .chain(self.last);
        ordered
            .filter(|id| self.entries.get(id).is_some_and(|r| r.accepts(me, event)))
            .collect()
    }
}

/// One event's walk along its chain: hand out the next handler, take its completion.
#[derive(Clone, Debug)]
pub(crate) struct Chain {
    pub event: Event,
    handlers: Vec<HandlerId>,
    next: usize,
    /// The results the handlers so far returned, for the ones after them.
    pub results: Vec<Info>,
}

impl Chain {
    pub(crate) fn new(event: Event, handlers: Vec<HandlerId>) -> Chain {
        Chain {
            event,
            handlers,
            next: 0,
            results: Vec::new(),
        }
    }

    /// The next handler to call, or `None` when the chain is over.
    pub(crate) fn next_handler(&mut self) -> Option<HandlerId> {
        let h = self.handlers.get(self.next).copied();
        self.next += 1;
        h
    }

    /// A handler finished with `status` and `results`. `PMIX_EVENT_ACTION_COMPLETE` ends the
    /// chain; any other status lets it go on.
    pub(crate) fn handler_done(&mut self, status: Status, results: Vec<Info>) {
        self.results.extend(results);
        if status == Status::EVENT_ACTION_COMPLETE {
            self.next = self.handlers.len();
        }
    }
}

/// Codes whose events are the library's to act on, not the application's, so that a
/// default handler never sees them (a handler registered for the code still does): v5.0
/// §14.2.10, "the `PMIX_GROUP_INVITE_ACCEPTED` event is captured by the PMIx client library
/// of the inviting process – i.e., the application itself does not need to register for
/// this event". OpenPMIx's library passes none to a default handler either.
pub fn for_the_library(code: Status) -> bool {
    code == Status::GROUP_INVITE_ACCEPTED
}

#[cfg(test)]
mod tests;
