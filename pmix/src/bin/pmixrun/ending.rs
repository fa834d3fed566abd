//! How a process ended, and what the launcher tells of it: to the user on stderr, to the
//! processes and tools as the standard's events.
//!
//! A process ends in order when it exits with status 0 after `PMIx_Finalize` (or never
//! connected), or when a signal a request sent it ends it (`PMIx_Job_control`, an abort that
//! lists it: the job asked for that end); anything else is a failure: a non-zero status, a
//! signal (named, with a core dump if there was one), or an exit without finalizing after it
//! connected. The events
//! (v5.0 §10.1.8: the host raises them, naming the process as `PMIX_EVENT_AFFECTED_PROC`):
//!
//! - every end: `PMIX_EVENT_PROC_TERMINATED` with `PMIX_EXIT_CODE`, to the process's own job
//!   and the attached tools (a custom range, so that other jobs of the run, a spawned job's
//!   parent among them, do not hear of it). An orderly end is `PMIX_EVENT_NON_DEFAULT`: it
//!   reaches the handlers registered for the code, never a default handler, which runtimes
//!   such as Open MPI's treat as a fault to abort on;
//! - a failure also: `PMIX_ERR_PROC_TERM_WO_SYNC` when the process never finalized, and
//!   `PMIX_ERR_PROC_ABORTED`, which is what OpenPMIx programs wait for to learn that a peer
//!   is gone;
//! - the requester of a spawn hears of the processes of its job when it asked to
//!   (`PMIX_NOTIFY_PROC_TERMINATION`, or `PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION` for failures).

use std::process::ExitStatus;

use pmix::model::{DataArray, DataRange, Info, Proc, Status, attr};
use pmix::server::Server;

/// How one process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ending {
    /// The status a shell would report: the exit status, or 128 + the signal's number.
    pub(crate) code: u8,
    /// The signal that ended it, if one did.
    pub(crate) signal: Option<i32>,
    pub(crate) core_dumped: bool,
    /// It connected and ended without `PMIx_Finalize`.
    pub(crate) unsynced: bool,
    /// The signal that ended it is one a request sent it: that end was asked for.
    pub(crate) requested: bool,
}

impl Ending {
    /// The end `status` reports (an error waiting for the process counts as a failure).
    pub(crate) fn of(status: &std::io::Result<ExitStatus>, unsynced: bool) -> Ending {
        use std::os::unix::process::ExitStatusExt;
        let Ok(status) = status else {
            return Ending {
                code: 1,
                signal: None,
                core_dumped: false,
                unsynced,
                requested: false,
            };
        };
        let signal = status.signal();
        let code = match (status.code(), signal) {
            (Some(c), _) => u8::try_from(c.clamp(0, 255)).unwrap_or(1),
            (None, Some(s)) => u8::try_from((128 + s).clamp(1, 255)).unwrap_or(255),
            (None, None) => 1,
        };
        Ending {
            code,
            signal,
            core_dumped: status.core_dumped(),
            unsynced,
            requested: false,
        }
    }

    /// The same end, where `asked`: a request sent the process the signal that ended it.
    pub(crate) fn by_request(self, asked: bool) -> Ending {
        Ending {
            requested: asked && self.signal.is_some(),
            ..self
        }
    }

    pub(crate) fn failed(&self) -> bool {
        (self.code != 0 || self.unsynced) && !self.requested
    }

    /// What the user reads: "exited with status 1", "was killed by signal 11 (SIGSEGV),
    /// core dumped", with "without calling PMIx_Finalize" where that applies.
    pub(crate) fn describe(&self) -> String {
        let mut text = match self.signal {
            Some(s) => {
                let name = nix::sys::signal::Signal::try_from(s)
                    .map(|n| format!(" ({})", n.as_str()))
                    .unwrap_or_default();
                let core = if self.core_dumped {
                    ", core dumped"
                } else {
                    ""
                };
                let asked = if self.requested { " as requested" } else { "" };
                format!("was killed by signal {s}{name}{core}{asked}")
            }
            None => format!("exited with status {}", self.code),
        };
        if self.unsynced && self.failed() {
            text.push_str(" without calling PMIx_Finalize");
        }
        text
    }

    /// The events this end raises, each as (code, infos without the range), in order.
    pub(crate) fn events(&self, proc: &Proc) -> Vec<(Status, Vec<Info>)> {
        let mut info = vec![
            Info::new(attr::EVENT_AFFECTED_PROC, proc.clone()),
            Info::new(attr::EXIT_CODE, i32::from(self.code)),
        ];
        if !self.failed() {
            info.push(Info::new(attr::EVENT_NON_DEFAULT, true));
            return vec![(Status::EVENT_PROC_TERMINATED, info)];
        }
        let mut events = vec![(Status::EVENT_PROC_TERMINATED, info.clone())];
        if self.unsynced {
            events.push((Status::ERR_PROC_TERM_WO_SYNC, info.clone()));
        }
        events.push((Status::ERR_PROC_ABORTED, info));
        events
    }
}

/// Raise the events of `ending` to `audience` (a custom range: the process's job and the
/// tools, or a spawn's requester).
pub(crate) async fn announce(
    server: &Server,
    proc: &Proc,
    audience: &[Proc],
    events: impl IntoIterator<Item = (Status, Vec<Info>)>,
) {
    for (status, mut info) in events {
        info.push(Info::new(
            attr::EVENT_CUSTOM_RANGE,
            DataArray::of_procs(audience.to_vec()),
        ));
        let sent = server
            .notify_event(status, None, DataRange::CUSTOM, info)
            .await;
        if let Err(s) = sent {
            eprintln!("pmixrun: cannot announce the end of {proc}: {s:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn ended(raw: i32, unsynced: bool) -> Ending {
        Ending::of(&Ok(ExitStatus::from_raw(raw)), unsynced)
    }

    #[test]
    fn a_signal_is_reported_by_number_name_and_core_dump() {
        // Raw wait statuses: signal 11 with the core-dump bit, signal 6 without.
        let segv = ended(11 | 0x80, false);
        assert_eq!((segv.code, segv.signal), (139, Some(11)));
        assert_eq!(
            segv.describe(),
            "was killed by signal 11 (SIGSEGV), core dumped"
        );
        let abrt = ended(6, true);
        assert_eq!(abrt.code, 134);
        assert_eq!(
            abrt.describe(),
            "was killed by signal 6 (SIGABRT) without calling PMIx_Finalize"
        );
        assert!(segv.failed() && abrt.failed());
    }

    #[test]
    fn a_signal_a_request_sent_is_no_failure() {
        let asked = ended(15, true).by_request(true);
        assert!(!asked.failed());
        assert_eq!(
            asked.describe(),
            "was killed by signal 15 (SIGTERM) as requested"
        );
        // A process the request signalled that then exits badly by itself still failed.
        assert!(ended(1 << 8, false).by_request(true).failed());
    }

    #[test]
    fn an_orderly_end_reaches_no_default_handler_and_a_failure_says_aborted() {
        let p = Proc::try_new("job", 1).unwrap();
        let ok = ended(0, false);
        assert!(!ok.failed());
        let events = ok.events(&p);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].0, Status::EVENT_PROC_TERMINATED);
        assert!(Info::flag(&events[0].1, attr::EVENT_NON_DEFAULT));
        let bad = ended(1 << 8, true);
        assert_eq!(
            bad.describe(),
            "exited with status 1 without calling PMIx_Finalize"
        );
        let codes: Vec<Status> = bad.events(&p).into_iter().map(|(s, _)| s).collect();
        assert_eq!(
            codes,
            [
                Status::EVENT_PROC_TERMINATED,
                Status::ERR_PROC_TERM_WO_SYNC,
                Status::ERR_PROC_ABORTED
            ]
        );
        assert!(
            bad.events(&p)
                .iter()
                .all(|(_, i)| !Info::flag(i, attr::EVENT_NON_DEFAULT))
        );
    }
}
