//! Job control and process monitoring requests (PMIx v5.0 §13.2, §13.3) read into what a
//! host must do, so that every host (`pmixrun`, the conformance harness, the simulator)
//! reads the standard's directives the same way; and who may ask for it ([`Authority`]).
//! Sans-IO: acting is the host's business.

use std::collections::BTreeMap;

use crate::model::{AllocDirective, DataArray, Info, Nspace, Proc, Rank, Status, attr};

/// One thing a `PMIx_Job_control` request asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Control {
    /// `PMIX_JOB_CTRL_SIGNAL`: send this signal.
    Signal(i32),
    /// `PMIX_JOB_CTRL_PAUSE` (SIGSTOP on Unix).
    Pause,
    /// `PMIX_JOB_CTRL_RESUME` (SIGCONT).
    Resume,
    /// `PMIX_JOB_CTRL_KILL` (SIGKILL).
    Kill,
    /// `PMIX_JOB_CTRL_TERMINATE`: end the processes cleanly (SIGTERM).
    Terminate,
    /// `PMIX_REGISTER_CLEANUP` or `PMIX_REGISTER_CLEANUP_DIR`: remove this path when the job
    /// ends, with the directory options of §13.2.5.
    Cleanup(Cleanup),
    /// `PMIX_JOB_CTRL_CHECKPOINT`: ask the processes to checkpoint under this id, by the
    /// signal `PMIX_JOB_CTRL_CHECKPOINT_SIGNAL` names, or by the `PMIX_JCTRL_CHECKPOINT`
    /// event (`PMIX_JOB_CTRL_CHECKPOINT_EVENT`, and the way when no signal is named).
    Checkpoint {
        id: String,
        signal: Option<i32>,
        event: bool,
    },
    /// `PMIX_JOB_CTRL_CANCEL`: withdraw the requester's earlier request of this
    /// `PMIX_JOB_CTRL_ID`, or all of its requests (`None`: the standard's NULL id).
    Cancel(Option<String>),
    /// `PMIX_JOB_CTRL_PREEMPTIBLE`: whether the targets may be preempted.
    Preemptible(bool),
    /// `PMIX_JOB_CTRL_RESTART`: restart the processes from this checkpoint id.
    Restart(String),
    /// `PMIX_JOB_CTRL_PROVISION`: provision the nodes this regular expression names, with
    /// the image `PMIX_JOB_CTRL_PROVISION_IMAGE` names.
    Provision {
        nodes: String,
        image: Option<String>,
    },
}

impl Control {
    /// The id of a checkpoint to request by the `PMIX_JCTRL_CHECKPOINT` event: one asked for
    /// with `PMIX_JOB_CTRL_CHECKPOINT_EVENT`, or naming no signal.
    pub fn checkpoint_by_event(&self) -> Option<&str> {
        match self {
            Control::Checkpoint { id, signal, event } if *event || signal.is_none() => Some(id),
            _ => None,
        }
    }
}

/// The information of the `PMIX_JCTRL_CHECKPOINT` event asking `procs` to checkpoint under
/// `id` (v5.0 §13.2.4): a custom range of exactly those processes, named as the affected ones.
pub fn checkpoint_event(procs: Vec<Proc>, id: &str) -> Vec<Info> {
    let procs = DataArray::of_procs(procs);
    vec![
        Info::new(attr::EVENT_CUSTOM_RANGE, procs.clone()),
        Info::new(attr::EVENT_AFFECTED_PROCS, procs),
        Info::new(attr::JOB_CTRL_CHECKPOINT, id.to_owned()),
    ]
}

/// A path to remove when the job ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cleanup {
    pub path: String,
    pub dir: bool,
    /// `PMIX_CLEANUP_RECURSIVE`: everything below the directory too.
    pub recursive: bool,
    /// `PMIX_CLEANUP_EMPTY`: only empty directories.
    pub empty_only: bool,
    /// `PMIX_CLEANUP_IGNORE`: names (with `*` wildcards) to leave in place.
    pub ignore: Vec<String>,
    /// `PMIX_CLEANUP_LEAVE_TOPDIR`: remove what the directory holds, not the directory.
    pub leave_topdir: bool,
}

/// Read a job-control request. `PMIX_JOB_CTRL_ID` names the request and asks nothing (see
/// [`request_id`]); a signal that is not a number is `PMIX_ERR_BAD_PARAM`, and so is a request
/// that asks nothing. Whether a host can do what is asked is the host's to say.
pub fn job_control(directives: &[Info]) -> Result<Vec<Control>, Status> {
    let is = |i: &Info, a: &str| i.key.as_str() == a;
    let on = |i: &Info| i.value.as_bool().unwrap_or(true);
    let text = |a: &str| {
        directives
            .iter()
            .find(|i| is(i, a))
            .and_then(|i| i.value.as_str())
    };
    let flag = |a: &str| directives.iter().any(|i| is(i, a) && on(i));
    let mut out = Vec::new();
    for i in directives {
        let k = i.key.as_str();
        if k == attr::JOB_CTRL_SIGNAL.wire_key() {
            let n = i.value.to_i64().ok_or(Status::ERR_BAD_PARAM)?;
            out.push(Control::Signal(
                i32::try_from(n).map_err(|_| Status::ERR_BAD_PARAM)?,
            ));
        } else if k == attr::JOB_CTRL_PAUSE.wire_key() && on(i) {
            out.push(Control::Pause);
        } else if k == attr::JOB_CTRL_RESUME.wire_key() && on(i) {
            out.push(Control::Resume);
        } else if k == attr::JOB_CTRL_KILL.wire_key() && on(i) {
            out.push(Control::Kill);
        } else if k == attr::JOB_CTRL_TERMINATE.wire_key() && on(i) {
            out.push(Control::Terminate);
        } else if k == attr::REGISTER_CLEANUP.wire_key()
            || k == attr::REGISTER_CLEANUP_DIR.wire_key()
        {
            let path = i.value.as_str().ok_or(Status::ERR_BAD_PARAM)?.to_owned();
            out.push(Control::Cleanup(Cleanup {
                path,
                dir: k == attr::REGISTER_CLEANUP_DIR.wire_key(),
                recursive: flag(attr::CLEANUP_RECURSIVE.wire_key()),
                empty_only: flag(attr::CLEANUP_EMPTY.wire_key()),
                ignore: text(attr::CLEANUP_IGNORE.wire_key())
                    .map(|t| t.split(',').map(str::to_owned).collect())
                    .unwrap_or_default(),
                leave_topdir: flag(attr::CLEANUP_LEAVE_TOPDIR.wire_key()),
            }));
        } else if k == attr::JOB_CTRL_CHECKPOINT.wire_key() {
            let signal = directives
                .iter()
                .find(|d| is(d, attr::JOB_CTRL_CHECKPOINT_SIGNAL.wire_key()))
                .map(|d| d.value.to_i64().and_then(|n| i32::try_from(n).ok()))
                .map(|n| n.ok_or(Status::ERR_BAD_PARAM))
                .transpose()?;
            out.push(Control::Checkpoint {
                id: i.value.as_str().unwrap_or_default().to_owned(),
                signal,
                event: flag(attr::JOB_CTRL_CHECKPOINT_EVENT.wire_key()),
            });
        } else if k == attr::JOB_CTRL_CANCEL.wire_key() {
            let id = i.value.as_str().filter(|id| !id.is_empty());
            out.push(Control::Cancel(id.map(str::to_owned)));
        } else if k == attr::JOB_CTRL_PREEMPTIBLE.wire_key() {
            out.push(Control::Preemptible(on(i)));
        } else if k == attr::JOB_CTRL_RESTART.wire_key() {
            let id = i.value.as_str().ok_or(Status::ERR_BAD_PARAM)?;
            out.push(Control::Restart(id.to_owned()));
        } else if k == attr::JOB_CTRL_PROVISION.wire_key() {
            let nodes = i.value.as_str().ok_or(Status::ERR_BAD_PARAM)?.to_owned();
            let image = text(attr::JOB_CTRL_PROVISION_IMAGE.wire_key()).map(str::to_owned);
            out.push(Control::Provision { nodes, image });
        }
    }
    if out.is_empty() {
        return Err(Status::ERR_BAD_PARAM);
    }
    Ok(out)
}

/// The request's own name, `PMIX_JOB_CTRL_ID`, by which a later `PMIX_JOB_CTRL_CANCEL`
/// names it.
pub fn request_id(directives: &[Info]) -> Option<String> {
    directives
        .iter()
        .find(|i| i.key.as_str() == attr::JOB_CTRL_ID.wire_key())
        .and_then(|i| i.value.as_str())
        .map(str::to_owned)
}

/// Who may act on which job, for a host whose jobs all run as one user (a launcher such as
/// `pmixrun`). The standard leaves authorization to the host; the library gives it the
/// requester's identifier and the `PMIX_USERID` the kernel vouched for (see
/// the server core's connect rules). The rules:
///
/// - a tool of a user the host admitted may act on every job: it attached to all of them;
/// - a process may act on its own job and on the jobs it or its job spawned, down the
///   generations, never on its parent's job or a sibling's: a spawned job cannot signal the
///   job that started it;
/// - a path is removed for a requester only if the requester's uid owns it
///   ([`Authority::may_remove`]): a job cannot have its launcher delete another user's file.
///
/// Each refusal is `PMIX_ERR_NO_PERMISSIONS`.
#[derive(Clone, Debug, Default)]
pub struct Authority {
    /// The job that spawned each job, by namespace.
    parents: BTreeMap<Nspace, Nspace>,
    /// The processes that connected as tools.
    tools: Vec<Proc>,
}

impl Authority {
    /// `child` was spawned by a process of `parent`.
    pub fn spawned(&mut self, child: Nspace, parent: Nspace) {
        self.parents.insert(child, parent);
    }

    /// `tool` connected as a tool (the identifier the host gave it, or its own).
    pub fn tool(&mut self, tool: Proc) {
        self.tools.push(tool);
    }

    /// The tools connected so far.
    pub fn tools(&self) -> &[Proc] {
        &self.tools
    }

    /// Whether `requester` may act on the processes of `target`.
    pub fn may_act_on(&self, requester: &Proc, target: &Nspace) -> bool {
        if self.tools.contains(requester) {
            return true;
        }
        let mut job = Some(target);
        // Namespaces are made fresh for each spawn, so the lineage is a tree; the bound
        // only keeps a corrupted map from looping.
        for _ in 0..=self.parents.len() {
            match job {
                Some(j) if *j == requester.nspace => return true,
                Some(j) => job = self.parents.get(j),
                None => return false,
            }
        }
        false
    }

    /// `PMIX_ERR_NO_PERMISSIONS` unless `requester` may act on every target (a wildcard rank
    /// stands for its job).
    pub fn check(&self, requester: &Proc, targets: &[Proc]) -> Result<(), Status> {
        match targets
            .iter()
            .find(|t| !self.may_act_on(requester, &t.nspace))
        {
            Some(t) => {
                tracing::warn!("{requester} may not act on {t}: not its job or a job it spawned");
                Err(Status::ERR_NO_PERMISSIONS)
            }
            None => Ok(()),
        }
    }

    /// Whether a path owned by `owner_uid` may be removed for a requester whose verified
    /// `PMIX_USERID` is `requester_uid` (`None`: the library sent none, so nothing is).
    pub fn may_remove(requester_uid: Option<u32>, owner_uid: u32) -> bool {
        requester_uid == Some(owner_uid)
    }

    /// The requester's verified uid, as the library added it to a request's directives.
    pub fn requester_uid(directives: &[Info]) -> Option<u32> {
        directives.iter().rev().find_map(|i| i.get(attr::USERID))
    }

    /// The job of `requester` as a target: its whole namespace.
    pub fn own_job(requester: &Proc) -> Proc {
        Proc::new(requester.nspace.clone(), Rank::WILDCARD)
    }
}

/// Whether `name` matches a `PMIX_CLEANUP_IGNORE` pattern (`*` matches any run of
/// characters).
pub fn ignored(name: &str, patterns: &[String]) -> bool {
    patterns.iter().any(|p| glob(p.trim(), name))
}

fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len()).any(|i| tail.is_char_boundary(i) && glob(rest, &tail[i..]))
        }
    }
}

/// What a `PMIx_Process_monitor` request asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Monitor {
    /// `PMIX_MONITOR_HEARTBEAT`: expect a heartbeat every `period_s` seconds and raise the
    /// request's status after `drops` missed in a row.
    Heartbeat { period_s: u32, drops: u32 },
    /// `PMIX_SEND_HEARTBEAT`: a heartbeat.
    Beat,
    /// `PMIX_MONITOR_FILE`: check the file every `period_s` seconds and raise the request's
    /// status after `drops` checks in a row found no sign of life: no change of its size
    /// (`PMIX_MONITOR_FILE_SIZE`), access time (`PMIX_MONITOR_FILE_ACCESS`) or modification
    /// time (`PMIX_MONITOR_FILE_MODIFY`; the default when none is named).
    File(FileWatch),
    /// `PMIX_MONITOR_CANCEL`: end the monitors of the requester (of this id, if given).
    Cancel(Option<String>),
}

/// What a host can give to a new allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    pub nodes: u64,
    /// The cpus a request may ask for (`None`: not checked).
    pub cpus: Option<u64>,
}

/// The allocations a host granted (§13.1): each with its `PMIX_ALLOC_ID` and the
/// requester's `PMIX_ALLOC_REQ_ID`, if any.
#[derive(Clone, Debug, Default)]
pub struct Allocations {
    granted: Vec<Granted>,
}

#[derive(Clone, Debug)]
struct Granted {
    id: String,
    req_id: Option<String>,
    released: bool,
}

impl Allocations {
    /// Answer an allocation request. A new allocation within `capacity` (default: one node,
    /// one cpu) is granted the id `<prefix>.alloc<k>`; more than the host has is
    /// `PMIX_ERR_OUT_OF_RESOURCE`. Extending, releasing or reacquiring names a granted
    /// allocation by `PMIX_ALLOC_ID` or by the `PMIX_ALLOC_REQ_ID` it was asked with, else
    /// `PMIX_ERR_NOT_FOUND`. The answer is the allocation's `PMIX_ALLOC_ID`; a released one is
    /// `released` for [`Allocations::status`] until it is reacquired.
    pub fn request(
        &mut self,
        prefix: &str,
        capacity: Capacity,
        directive: AllocDirective,
        info: &[Info],
    ) -> Result<Vec<Info>, Status> {
        let value = |a: &str| info.iter().find(|i| i.key.as_str() == a).map(|i| &i.value);
        let number = |a: &str| value(a).and_then(crate::model::Value::to_u64);
        let text = |a: &str| value(a).and_then(|v| v.as_str().map(str::to_owned));
        let req_id = text(attr::ALLOC_REQ_ID.wire_key());
        if directive == AllocDirective::NEW {
            let nodes = number(attr::ALLOC_NUM_NODES.wire_key()).unwrap_or(1);
            let cpus = number(attr::ALLOC_NUM_CPUS.wire_key()).unwrap_or(1);
            if nodes > capacity.nodes || capacity.cpus.is_some_and(|c| cpus > c) {
                return Err(Status::ERR_OUT_OF_RESOURCE);
            }
            let id = format!("{prefix}.alloc{}", self.granted.len() + 1);
            self.granted.push(Granted {
                id: id.clone(),
                req_id,
                released: false,
            });
            return Ok(vec![Info::new(attr::ALLOC_ID, id)]);
        }
        let named = text(attr::ALLOC_ID.wire_key());
        let g = self
            .granted
            .iter_mut()
            .find(|g| named.as_ref() == Some(&g.id) || (g.req_id.is_some() && g.req_id == req_id))
            .ok_or(Status::ERR_NOT_FOUND)?;
        if directive == AllocDirective::RELEASE {
            g.released = true;
        } else if directive == AllocDirective::REAQUIRE {
            g.released = false;
        }
        Ok(vec![Info::new(attr::ALLOC_ID, g.id.clone())])
    }

    /// The status of the allocation named by its `PMIX_ALLOC_ID` or `PMIX_ALLOC_REQ_ID`, as
    /// `PMIX_QUERY_ALLOC_STATUS` reports it: `active` or `released`.
    pub fn status(&self, id: &str) -> Option<&'static str> {
        self.granted
            .iter()
            .find(|g| g.id == id || g.req_id.as_deref() == Some(id))
            .map(|g| if g.released { "released" } else { "active" })
    }
}

/// What a file monitor watches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileWatch {
    pub path: String,
    pub size: bool,
    pub access: bool,
    pub modify: bool,
    pub period_s: u32,
    pub drops: u32,
}

/// Read a process-monitor request. A heartbeat monitor needs `PMIX_MONITOR_HEARTBEAT_TIME`
/// (a period of at least a second; `PMIX_ERR_BAD_PARAM` otherwise); `PMIX_MONITOR_HEARTBEAT_DROPS`
/// defaults to 1, and so do a file monitor's (`PMIX_MONITOR_FILE_CHECK_TIME`,
/// `PMIX_MONITOR_FILE_DROPS`). Other monitors are `PMIX_ERR_NOT_SUPPORTED`.
pub fn monitor(monitor: &Info, directives: &[Info]) -> Result<Monitor, Status> {
    let k = monitor.key.as_str();
    let number = |a: &str| {
        directives
            .iter()
            .find(|i| i.key.as_str() == a)
            .and_then(|i| i.value.to_u64())
            .and_then(|v| u32::try_from(v).ok())
    };
    if let Some(c) = directives
        .iter()
        .find(|i| i.key.as_str() == attr::MONITOR_CANCEL.wire_key())
    {
        return Ok(Monitor::Cancel(c.value.as_str().map(str::to_owned)));
    }
    if k == attr::SEND_HEARTBEAT.wire_key() {
        Ok(Monitor::Beat)
    } else if k == attr::MONITOR_FILE.wire_key() {
        let path = monitor
            .value
            .as_str()
            .ok_or(Status::ERR_BAD_PARAM)?
            .to_owned();
        let period_s = number(attr::MONITOR_FILE_CHECK_TIME.wire_key())
            .filter(|t| *t > 0)
            .ok_or(Status::ERR_BAD_PARAM)?;
        let drops = number(attr::MONITOR_FILE_DROPS.wire_key())
            .unwrap_or(1)
            .max(1);
        let named = |a: &str| directives.iter().any(|i| i.key.as_str() == a);
        let size = named(attr::MONITOR_FILE_SIZE.wire_key());
        let access = named(attr::MONITOR_FILE_ACCESS.wire_key());
        let modify = named(attr::MONITOR_FILE_MODIFY.wire_key()) || !(size || access);
        Ok(Monitor::File(FileWatch {
            path,
            size,
            access,
            modify,
            period_s,
            drops,
        }))
    } else if k == attr::MONITOR_HEARTBEAT.wire_key() {
        let period_s = number(attr::MONITOR_HEARTBEAT_TIME.wire_key())
            .filter(|t| *t > 0)
            .ok_or(Status::ERR_BAD_PARAM)?;
        let drops = number(attr::MONITOR_HEARTBEAT_DROPS.wire_key())
            .unwrap_or(1)
            .max(1);
        Ok(Monitor::Heartbeat { period_s, drops })
    } else {
        Err(Status::ERR_NOT_SUPPORTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Value;

    fn job(name: &str) -> Nspace {
        Nspace::new(name).unwrap()
    }

    #[test]
    fn a_process_acts_on_its_job_and_its_descendants_and_a_tool_on_all() {
        let mut a = Authority::default();
        a.spawned(job("run.1"), job("run"));
        a.spawned(job("run.1.1"), job("run.1"));
        a.spawned(job("run.2"), job("run"));
        let parent = Proc::try_new("run", 0).unwrap();
        let child = Proc::try_new("run.1", 3).unwrap();
        assert!(a.may_act_on(&parent, &job("run")));
        assert!(a.may_act_on(&parent, &job("run.1.1")));
        assert!(a.may_act_on(&child, &job("run.1.1")));
        // Not its parent's job, nor a sibling's, nor one the host never started.
        assert!(!a.may_act_on(&child, &job("run")));
        assert!(!a.may_act_on(&child, &job("run.2")));
        assert!(!a.may_act_on(&parent, &job("elsewhere")));
        let targets = [Authority::own_job(&parent)];
        assert_eq!(a.check(&child, &targets), Err(Status::ERR_NO_PERMISSIONS));
        let tool = Proc::try_new("run.tool.1", 0).unwrap();
        assert!(!a.may_act_on(&tool, &job("run")));
        a.tool(tool.clone());
        assert_eq!(a.check(&tool, &targets), Ok(()));
    }

    #[test]
    fn a_path_goes_only_for_the_uid_that_owns_it() {
        assert!(Authority::may_remove(Some(1000), 1000));
        assert!(!Authority::may_remove(Some(0), 1000));
        assert!(!Authority::may_remove(None, 1000));
        let d = [Info::new(attr::USERID, 1000u32)];
        assert_eq!(Authority::requester_uid(&d), Some(1000));
    }

    #[test]
    fn job_control_directives_become_actions() {
        let d = [
            Info::new(attr::JOB_CTRL_ID, "req".to_owned()),
            Info::new(attr::JOB_CTRL_SIGNAL, 10),
            Info::new(attr::JOB_CTRL_PAUSE, true),
            Info::new(attr::JOB_CTRL_KILL, false),
            Info::new(attr::REGISTER_CLEANUP_DIR, "/tmp/x".to_owned()),
            Info::new(attr::CLEANUP_RECURSIVE, true),
            Info::new(attr::CLEANUP_IGNORE, "keep.*,log".to_owned()),
        ];
        let got = job_control(&d).unwrap();
        assert_eq!(got[0], Control::Signal(10));
        assert_eq!(got[1], Control::Pause);
        let Control::Cleanup(c) = &got[2] else {
            panic!("{got:?}");
        };
        assert!(c.dir && c.recursive && !c.empty_only && !c.leave_topdir);
        assert!(ignored("keep.me", &c.ignore) && ignored("log", &c.ignore));
        assert!(!ignored("other", &c.ignore));
        assert_eq!(request_id(&d).as_deref(), Some("req"));
        assert_eq!(
            job_control(&[Info::new(attr::JOB_CTRL_RESTART, "x".to_owned())]),
            Ok(vec![Control::Restart("x".into())])
        );
        let cancel_all = [
            Info::new(attr::JOB_CTRL_CANCEL, String::new()),
            Info::new(attr::JOB_CTRL_PREEMPTIBLE, true),
        ];
        assert_eq!(
            job_control(&cancel_all),
            Ok(vec![Control::Cancel(None), Control::Preemptible(true)])
        );
        let ckpt = [
            Info::new(attr::JOB_CTRL_CHECKPOINT, "c1".to_owned()),
            Info::new(attr::JOB_CTRL_CHECKPOINT_SIGNAL, 12),
        ];
        assert_eq!(
            job_control(&ckpt),
            Ok(vec![Control::Checkpoint {
                id: "c1".into(),
                signal: Some(12),
                event: false
            }])
        );
        assert_eq!(
            job_control(&[Info::new(attr::JOB_CTRL_ID, "only a name".to_owned())]),
            Err(Status::ERR_BAD_PARAM)
        );
    }

    #[test]
    fn allocations_are_granted_within_capacity_and_found_again_by_their_ids() {
        let mut a = Allocations::default();
        let one = Capacity {
            nodes: 1,
            cpus: Some(2),
        };
        let two_nodes = [Info::new(attr::ALLOC_NUM_NODES, 2u64)];
        assert_eq!(
            a.request("job", one, AllocDirective::NEW, &two_nodes),
            Err(Status::ERR_OUT_OF_RESOURCE)
        );
        let asked = [Info::new(attr::ALLOC_REQ_ID, "r".to_owned())];
        let got = a.request("job", one, AllocDirective::NEW, &asked).unwrap();
        assert_eq!(got, [Info::new(attr::ALLOC_ID, "job.alloc1".to_owned())]);
        assert_eq!(
            a.request("job", one, AllocDirective::EXTEND, &asked),
            Ok(got)
        );
        let unknown = [Info::new(attr::ALLOC_ID, "other".to_owned())];
        assert_eq!(
            a.request("job", one, AllocDirective::RELEASE, &unknown),
            Err(Status::ERR_NOT_FOUND)
        );
        assert_eq!(a.status("job.alloc1"), Some("active"));
        a.request("job", one, AllocDirective::RELEASE, &asked)
            .unwrap();
        assert_eq!(a.status("r"), Some("released"));
        a.request("job", one, AllocDirective::REAQUIRE, &asked)
            .unwrap();
        assert_eq!(a.status("job.alloc1"), Some("active"));
        assert_eq!(a.status("other"), None);
    }

    #[test]
    fn monitor_requests_are_read_with_their_period() {
        let hb = Info::new(attr::MONITOR_HEARTBEAT, Value::Undef);
        let d = [
            Info::new(attr::MONITOR_HEARTBEAT_TIME, 5u32),
            Info::new(attr::MONITOR_HEARTBEAT_DROPS, 2u32),
        ];
        assert_eq!(
            monitor(&hb, &d),
            Ok(Monitor::Heartbeat {
                period_s: 5,
                drops: 2
            })
        );
        assert_eq!(monitor(&hb, &[]), Err(Status::ERR_BAD_PARAM));
        let beat = Info::new(attr::SEND_HEARTBEAT, Value::Undef);
        assert_eq!(monitor(&beat, &[]), Ok(Monitor::Beat));
        let file = Info::new(attr::MONITOR_FILE, "/tmp/f".to_owned());
        assert_eq!(monitor(&file, &[]), Err(Status::ERR_BAD_PARAM));
        let every = [
            Info::new(attr::MONITOR_FILE_CHECK_TIME, 2u32),
            Info::new(attr::MONITOR_FILE_SIZE, true),
        ];
        assert_eq!(
            monitor(&file, &every),
            Ok(Monitor::File(FileWatch {
                path: "/tmp/f".into(),
                size: true,
                access: false,
                modify: false,
                period_s: 2,
                drops: 1
            }))
        );
        let other = Info::with_key("pmix.monitor.other", Value::Undef).unwrap();
        assert_eq!(monitor(&other, &[]), Err(Status::ERR_NOT_SUPPORTED));
    }
}
