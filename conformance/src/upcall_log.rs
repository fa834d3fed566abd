//! What the cluster's host was handed: every upcall a node's server makes into
//! [`crate::cluster::ClusterHost`], recorded in arrival order under the standard's name of the
//! upcall (`pmix_server_fencenb_fn_t`), with the processes and infos it carried.
//!
//! A step's `expect.upcalls` is judged on the upcalls recorded from the step's start to its
//! completion (for a started call, from its start to its `await`): the runners take a
//! [`UpcallLog::mark`] before the call and read [`UpcallLog::since`] it after. The log is
//! append-only for the vector's life, so calls started earlier and still running do not
//! disturb a step's window, and a window may hold upcalls of calls that overlap it (an
//! expectation asks for upcalls that came, never for the absence of others).
//!
//! The host is the same for every target (this crate's servers call it in-process, a C
//! library's servers through the pipes of [`crate::libpmix_target`]), so one expectation
//! judges them all alike.

use std::sync::Mutex;
use std::time::Duration;

use pmix::model::{Info, Proc, Status};

use crate::step::lock;

/// One upcall the host received.
#[derive(Clone, Debug, PartialEq)]
pub struct HostUpcall {
    /// The node whose server made it.
    pub node: usize,
    /// The standard's name of the upcall's type (`pmix_server_fencenb_fn_t`).
    pub upcall: &'static str,
    /// The single process the upcall names: the requester (`proc` of abort, spawn, query,
    /// log, allocate, job control, monitor, credentials, fabric), the publisher or looker-up,
    /// the event's source, the process whose data a direct modex asks for, the client that
    /// connected or finalized.
    pub proc: Option<Proc>,
    /// The list of processes it carries: the participants of a fence, connect, disconnect
    /// or group, the processes to abort, the targets of a job control.
    pub procs: Vec<Proc>,
    /// Every info it was handed, in argument order: a fence's, connect's or group's
    /// directives, what a publish publishes, a spawn's job information then each app's, a
    /// log's data then its directives, a monitor's monitor then its directives, each query's
    /// qualifiers, a credential request's directives; and, after a stdin upcall's
    /// directives, the bytes it carried, under the harness's key `harness.stdin.data`
    /// (`STDIN_DATA_KEY` of the cluster host).
    pub info: Vec<Info>,
    /// The keys it asks about, in argument order: every query's keys, a lookup's or an
    /// unpublish's keys.
    pub asked: Vec<String>,
    /// The event codes it carries: those of an event registration or deregistration.
    pub codes: Vec<Status>,
    /// What else the upcall carried, for a reader of a diff (an operation, keys, a status).
    pub detail: String,
}

impl HostUpcall {
    /// An upcall of `node` with no processes, infos or detail yet.
    pub fn new(node: usize, upcall: &'static str) -> HostUpcall {
        HostUpcall {
            node,
            upcall,
            proc: None,
            procs: Vec::new(),
            info: Vec::new(),
            asked: Vec::new(),
            codes: Vec::new(),
            detail: String::new(),
        }
    }

    pub fn proc(mut self, proc: &Proc) -> HostUpcall {
        self.proc = Some(proc.clone());
        self
    }

    pub fn procs(mut self, procs: &[Proc]) -> HostUpcall {
        self.procs = procs.to_vec();
        self
    }

    pub fn info(mut self, info: &[Info]) -> HostUpcall {
        self.info.extend_from_slice(info);
        self
    }

    pub fn asked<S: AsRef<str>>(mut self, keys: &[S]) -> HostUpcall {
        self.asked
            .extend(keys.iter().map(|k| k.as_ref().to_owned()));
        self
    }

    pub fn codes(mut self, codes: &[Status]) -> HostUpcall {
        self.codes.extend_from_slice(codes);
        self
    }

    pub fn detail(mut self, detail: impl Into<String>) -> HostUpcall {
        self.detail = detail.into();
        self
    }

    /// Lines for a diff: the upcall, its node, processes and detail, then its infos and the
    /// keys it asks about.
    pub fn describe(&self) -> String {
        let mut out = format!("{} (node #{})", self.upcall, self.node);
        if let Some(p) = &self.proc {
            out.push_str(&format!(" proc {p:?}"));
        }
        if !self.procs.is_empty() {
            out.push_str(&format!(" procs {:?}", self.procs));
        }
        if !self.codes.is_empty() {
            out.push_str(&format!(" codes {:?}", self.codes));
        }
        if !self.detail.is_empty() {
            out.push_str(&format!(" {}", self.detail));
        }
        for i in &self.info {
            out.push_str(&format!("\n    info: {} = {:?}", i.key.as_str(), i.value));
        }
        for k in &self.asked {
            out.push_str(&format!("\n    asking: {k}"));
        }
        out
    }
}

/// The upcalls received so far, in arrival order.
#[derive(Debug, Default)]
pub struct UpcallLog {
    seen: Mutex<Vec<HostUpcall>>,
}

/// How long a step's judge waits past its completion for an upcall it expects: a server may
/// answer its client before it hands a request on (an event it already delivered locally,
/// a client's finalization), so the upcall can trail the call by a little.
const TRAILING: Duration = Duration::from_millis(1000);

impl UpcallLog {
    pub fn record(&self, upcall: HostUpcall) {
        lock(&self.seen).push(upcall);
    }

    /// Where the log stands now: the start of a step's window.
    pub fn mark(&self) -> usize {
        lock(&self.seen).len()
    }

    /// The upcalls received since `mark`, in arrival order.
    pub fn since(&self, mark: usize) -> Vec<HostUpcall> {
        lock(&self.seen).get(mark..).unwrap_or_default().to_vec()
    }

    /// The window of a step that began at `mark`: what has arrived since, once `complete`
    /// says the upcalls the step expects are there, or once the trailing time is over.
    pub async fn window(
        &self,
        mark: usize,
        complete: impl Fn(&[HostUpcall]) -> bool,
    ) -> Vec<HostUpcall> {
        const POLL: Duration = Duration::from_millis(10);
        let mut waited = Duration::ZERO;
        loop {
            let seen = self.since(mark);
            if complete(&seen) || waited >= TRAILING {
                return seen;
            }
            tokio::time::sleep(POLL).await;
            waited += POLL;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmix::model::{Nspace, Rank};

    fn proc(rank: u32) -> Proc {
        Proc::new(Nspace::new("vjob").expect("a namespace"), Rank(rank))
    }

    #[test]
    fn a_window_holds_what_came_after_its_mark_in_order() {
        let log = UpcallLog::default();
        log.record(HostUpcall::new(0, "pmix_server_fencenb_fn_t"));
        let mark = log.mark();
        log.record(HostUpcall::new(1, "pmix_server_publish_fn_t").proc(&proc(1)));
        log.record(HostUpcall::new(0, "pmix_server_lookup_fn_t").proc(&proc(0)));
        let names: Vec<_> = log.since(mark).iter().map(|u| u.upcall).collect();
        assert_eq!(
            names,
            ["pmix_server_publish_fn_t", "pmix_server_lookup_fn_t"]
        );
        assert_eq!(log.since(log.mark()), Vec::new());
        assert_eq!(
            log.since(99),
            Vec::new(),
            "a mark past the end is an empty window"
        );
    }

    #[test]
    fn a_description_names_the_upcall_its_processes_and_infos() {
        let u = HostUpcall::new(1, "pmix_server_abort_fn_t")
            .proc(&proc(0))
            .procs(&[proc(1)])
            .info(&[Info::new(pmix::model::attr::USERID, 7u32)])
            .detail("status -1");
        let text = u.describe();
        assert!(
            text.starts_with("pmix_server_abort_fn_t (node #1) proc "),
            "{text}"
        );
        assert!(text.contains("status -1"), "{text}");
        assert!(text.contains("info: pmix.euid = Uint32(7)"), "{text}");
    }
}
