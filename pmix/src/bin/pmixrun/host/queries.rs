//! What the launcher answers to queries (v5.0 §7.1.2, §7.1.4), from what it knows of its
//! processes and of this machine.

use pmix::model::{
    DataArray, DataType, Info, Nspace, Proc, ProcInfo, ProcState, Query, Status, Value, attr,
};

use super::{HostState, lock};

impl HostState {
    /// The answer to one key of `q`, asked by `requester`, if the launcher has one (v5.0
    /// §7.1.2, §7.1.4): namespaces, job status and process tables, spawn and debugger
    /// support, memory use, queues and allocation status.
    pub(super) fn answer(&self, key: &str, q: &Query, requester: &Proc) -> Option<Value> {
        let nspace = &named_nspace(q).unwrap_or_else(|| requester.nspace.clone());
        let qualifier = |a: &str| q.qualifiers.iter().find(|i| i.key.as_str() == a);
        if key == attr::QUERY_SPAWN_SUPPORT.wire_key() {
            return Some(Value::string(SPAWN_SUPPORT.join(",")));
        }
        // No debugger directive is acted upon.
        if key == attr::QUERY_DEBUG_SUPPORT.wire_key() {
            return Some(Value::string(String::new()));
        }
        // The launcher schedules nothing: it has no queues.
        if key == attr::QUERY_QUEUE_LIST.wire_key() {
            return Some(Value::string(String::new()));
        }
        if key == attr::QUERY_ALLOC_STATUS.wire_key() {
            let id = qualifier(attr::ALLOC_ID.wire_key())
                .or_else(|| qualifier(attr::ALLOC_REQ_ID.wire_key()))
                .and_then(|i| i.value.as_str())?;
            let status = lock(&self.allocations).status(id)?;
            return Some(Value::string(status.to_owned()));
        }
        if key == attr::DAEMON_MEMORY.wire_key() {
            return rss_mb(std::process::id()).map(Value::Float);
        }
        if key == attr::CLIENT_AVG_MEMORY.wire_key() {
            return self.average_rss(&[Proc::new(nspace.clone(), pmix::model::Rank::WILDCARD)]);
        }
        if key == attr::QUERY_MEMORY_USAGE.wire_key() {
            let target = pmix::query::target(q, requester);
            let mut out = Vec::new();
            if let Some(mb) = rss_mb(std::process::id()) {
                out.push(Info::new(attr::DAEMON_MEMORY, mb));
            }
            if let Some(Value::Float(mb)) = self.average_rss(&[target]) {
                out.push(Info::new(attr::CLIENT_AVG_MEMORY, mb));
            }
            return Some(Value::DataArray(Box::new(DataArray::of_infos(out))));
        }
        let procs = lock(&self.procs);
        let of_job = || procs.iter().filter(|(p, _)| &p.nspace == nspace);
        if key == attr::QUERY_NAMESPACES.wire_key() {
            let mut names: Vec<&str> = procs.keys().map(|p| p.nspace.as_str()).collect();
            names.dedup();
            return Some(Value::string(names.join(",")));
        }
        // Each namespace with the command line of its (first) application (§7.1.4): an array
        // of infos, each holding the array of that namespace's infos, as OpenPMIx tools read.
        if key == attr::QUERY_NAMESPACE_INFO.wire_key() {
            let mut seen: Vec<&Nspace> = Vec::new();
            let mut out = Vec::new();
            for (p, r) in procs.iter() {
                if seen.contains(&&p.nspace) {
                    continue;
                }
                seen.push(&p.nspace);
                let entry = vec![
                    Info::new(attr::NSPACE, p.nspace.as_str().to_owned()),
                    Info::text(attr::CMD_LINE, r.command.clone()),
                ];
                out.push(Info::new(
                    attr::QUERY_NAMESPACE_INFO,
                    DataArray::of_infos(entry),
                ));
            }
            return Some(Value::DataArray(Box::new(DataArray::of_infos(out))));
        }
        if key == attr::QUERY_JOB_STATUS.wire_key() {
            let mut status = None;
            for (_, r) in of_job() {
                let s = match r.state {
                    ProcState::TERM_WO_SYNC => Status::ERR_JOB_TERM_WO_SYNC,
                    ProcState::TERM_NON_ZERO => Status::ERR_JOB_NON_ZERO_TERM,
                    _ => Status::SUCCESS,
                };
                if status.is_none_or(|x| x == Status::SUCCESS) {
                    status = Some(s);
                }
            }
            return status.map(Value::Status);
        }
        if key == attr::QUERY_PROC_TABLE.wire_key()
            || key == attr::QUERY_LOCAL_PROC_TABLE.wire_key()
        {
            let table: Vec<Value> = of_job()
                .map(|(p, r)| {
                    Value::ProcInfo(Box::new(ProcInfo {
                        proc: p.clone(),
                        hostname: Some(r.hostname.as_str().into()),
                        executable_name: Some(r.executable.clone()),
                        pid: r.pid,
                        exit_code: r.exit_code,
                        state: r.state,
                    }))
                })
                .collect();
            if table.is_empty() {
                return None;
            }
            return Some(Value::DataArray(Box::new(DataArray {
                data_type: DataType::PROC_INFO,
                elements: table,
            })));
        }
        None
    }

    /// The average resident memory of the running processes among `targets`, in megabytes.
    fn average_rss(&self, targets: &[Proc]) -> Option<Value> {
        let sizes: Vec<f32> = self
            .running(targets)
            .into_iter()
            .filter_map(|(_, pid)| rss_mb(u32::try_from(pid).ok()?))
            .collect();
        if sizes.is_empty() {
            return None;
        }
        // At most a few thousand processes on one machine: exact enough as f32.
        #[allow(clippy::cast_precision_loss)]
        let n = sizes.len() as f32;
        Some(Value::Float(sizes.iter().sum::<f32>() / n))
    }
}

/// The spawn directives the launcher acts on (`PMIX_QUERY_SPAWN_SUPPORT`): placement on this
/// machine, the working directory, and the requester's notifications of the job's life.
const SPAWN_SUPPORT: &[&str] = &[
    "pmix.host",
    "pmix.hostfile",
    "pmix.wdir",
    "pmix.notecomp",
    "pmix.note.jev",
];

/// The resident memory of process `pid` in megabytes (`VmRSS` of `/proc/<pid>/status`).
fn rss_mb(pid: u32) -> Option<f32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: f32 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The namespace a query names with `PMIX_NSPACE` (or in its `PMIX_PROCID`), if any.
pub(super) fn named_nspace(q: &Query) -> Option<Nspace> {
    q.qualifiers.iter().find_map(|i| {
        let k = i.key.as_str();
        if k == attr::NSPACE.wire_key() {
            i.value.as_str().and_then(|s| Nspace::new(s).ok())
        } else if k == attr::PROCID.wire_key() {
            i.value
                .as_proc()
                .filter(|p| !p.nspace.as_str().is_empty())
                .map(|p| p.nspace.clone())
        } else {
            None
        }
    })
}
