//! The cluster host's upcalls: what it does with each, and the records it keeps of them.

use std::collections::BTreeSet;
use std::sync::Arc;

use pmix::events::Event;
use pmix::host::fabric::FabricName;
use pmix::host::{Host, control, launch};
use pmix::model::{
    AllocDirective, App, DataArray, DataRange, FabricOperation, GroupOperation, Info, IofChannel,
    Nspace, PData, Proc, Query, Rank, Status, attr,
};
use pmix::server::credential;
use tokio::sync::oneshot;

use crate::step::lock;
use crate::upcall_log::HostUpcall;

use super::{ClusterHost, NodeServer};

impl Host for ClusterHost {
    fn supports_direct_modex(&self) -> bool {
        self.shared.direct_modex
    }

    async fn client_connected(&self, proc: Proc) -> Result<(), Status> {
        self.record(
            self.upcall("pmix_server_client_connected2_fn_t")
                .proc(&proc),
        );
        Ok(())
    }

    async fn client_finalized(&self, proc: Proc) -> Result<(), Status> {
        self.record(self.upcall("pmix_server_client_finalized_fn_t").proc(&proc));
        Ok(())
    }

    /// The listed processes of the vector's job are ended (SIGKILL) before the request is
    /// answered, and their termination announced (`ClusterHost::end`). A request that
    /// includes the requester (no processes: its whole job) is accepted without ending it:
    /// the harness must see its call return to judge it. Other jobs' processes run nowhere.
    async fn abort(
        &self,
        proc: Proc,
        status: Status,
        message: Option<String>,
        procs: Vec<Proc>,
    ) -> Result<(), Status> {
        let detail = format!("status {status:?} message {message:?}");
        self.record(
            self.upcall("pmix_server_abort_fn_t")
                .proc(&proc)
                .procs(&procs)
                .detail(detail),
        );
        let includes_requester = procs.is_empty()
            || procs.iter().any(|p| {
                p.nspace == proc.nspace && (p.rank == proc.rank || p.rank == Rank::WILDCARD)
            });
        if includes_requester {
            return Ok(());
        }
        self.end(&proc, &procs, SIGKILL).await
    }

    async fn fence_nb(
        &self,
        procs: Vec<Proc>,
        info: Vec<Info>,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, Status> {
        let detail = format!("{} bytes of data", data.len());
        self.record(
            self.upcall("pmix_server_fencenb_fn_t")
                .procs(&procs)
                .info(&info)
                .detail(detail),
        );
        if !self.shared.fence {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        self.collective("fence", &procs, data, local_failure(&info))
            .await
    }

    /// Start the job on the requester's node: checked and described by
    /// `pmix::host::launch`, registered with that node's server, its processes forked and
    /// reaped (they are not PMIx clients of the vector).
    async fn spawn(
        &self,
        proc: Proc,
        job_info: Vec<Info>,
        apps: Vec<App>,
    ) -> Result<Nspace, Status> {
        let mut seen = self
            .upcall("pmix_server_spawn_fn_t")
            .proc(&proc)
            .info(&job_info);
        for app in &apps {
            seen = seen.info(&app.info);
        }
        let cmds: Vec<_> = apps.iter().map(|a| (a.cmd.clone(), a.maxprocs)).collect();
        self.record(seen.detail(format!("apps {cmds:?}")));
        let host = self
            .shared
            .node_names
            .get(self.node)
            .cloned()
            .ok_or(Status::ERR_JOB_FAILED_TO_MAP)?;
        let k = {
            let mut n = lock(&self.shared.spawned);
            *n += 1;
            *n
        };
        let nspace = Nspace::new(format!("{}.spawn{k}", self.shared.nspace))
            .map_err(|_| Status::ERR_BAD_PARAM)?;
        let tmp = std::env::temp_dir().display().to_string();
        let job = launch::plan(nspace.clone(), &host, Some(proc), &job_info, &apps, &tmp)?;
        let server = lock(&self.shared.servers)
            .get(self.node)
            .cloned()
            .ok_or(Status::ERR_JOB_FAILED_TO_LAUNCH)?;
        server
            .register_job(nspace.clone(), launch::job_info(&job))
            .await?;
        lock(&self.shared.spawned_jobs).insert(nspace.as_str().to_owned());
        for (_, app) in job.procs() {
            let app = &job.apps[app];
            let mut cmd = tokio::process::Command::new(&app.exe);
            cmd.args(app.argv.iter().skip(1))
                .envs(app.env_pairs())
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null());
            if let Some(dir) = &app.cwd {
                cmd.current_dir(dir);
            }
            let mut child = cmd.spawn().map_err(|_| Status::ERR_JOB_FAILED_TO_LAUNCH)?;
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
        }
        Ok(nspace)
    }

    /// The security service's credential for `proc`: the user and group of the harness,
    /// whose processes all are.
    async fn get_credential(
        &self,
        proc: Proc,
        info: Vec<Info>,
    ) -> Result<(Vec<u8>, Vec<Info>), Status> {
        use std::os::unix::fs::MetadataExt;
        self.record(
            self.upcall("pmix_server_get_cred_fn_t")
                .proc(&proc)
                .info(&info),
        );
        let key = self
            .shared
            .credential_key
            .ok_or(Status::ERR_NOT_SUPPORTED)?;
        let me = std::fs::metadata("/proc/self").map_err(|_| Status::ERR_NOT_SUPPORTED)?;
        let who = credential::Identity {
            proc,
            uid: me.uid(),
            gid: me.gid(),
        };
        let info = vec![Info::new(attr::CRED_TYPE, credential::CRED_TYPE.to_owned())];
        Ok((credential::mint(&key, &who)?, info))
    }

    /// The security service checks a credential it minted.
    async fn validate_credential(
        &self,
        proc: Proc,
        cred: Vec<u8>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let seen = self.upcall("pmix_server_validate_cred_fn_t").proc(&proc);
        let detail = format!("{} bytes of credential", cred.len());
        self.record(seen.info(&directives).detail(detail));
        let key = self
            .shared
            .credential_key
            .ok_or(Status::ERR_NOT_SUPPORTED)?;
        let who = credential::validate(&key, &cred)?;
        Ok(credential::validated_info(&who))
    }

    /// The cluster answers the namespaces it registered (the vector's job, its other jobs,
    /// the jobs spawned so far), in name order; it knows nothing else a query may ask. A
    /// vector can have it refuse every query.
    async fn query(&self, proc: Proc, queries: Vec<Query>) -> Result<Vec<Info>, Status> {
        let mut seen = self.upcall("pmix_server_query_fn_t").proc(&proc);
        for q in &queries {
            seen = seen.info(&q.qualifiers);
        }
        let keys: Vec<&str> = queries
            .iter()
            .flat_map(|q| q.keys.iter().flatten())
            .map(String::as_str)
            .collect();
        self.record(seen.asked(&keys));
        self.refusal("pmix_server_query_fn_t")?;
        let namespaces = attr::QUERY_NAMESPACES.wire_key();
        let mut names: BTreeSet<String> = lock(&self.shared.spawned_jobs).clone();
        names.insert(self.shared.nspace.clone());
        names.extend(self.shared.other_jobs.keys().cloned());
        let list = names.into_iter().collect::<Vec<_>>().join(",");
        // One answer per query that asks, in query order.
        let answers: Vec<Info> = queries
            .iter()
            .filter(|q| q.keys.iter().flatten().any(|k| k == namespaces))
            .map(|_| Info::new(attr::QUERY_NAMESPACES, list.clone()))
            .collect();
        if answers.is_empty() {
            return Err(Status::ERR_NOT_FOUND);
        }
        Ok(answers)
    }

    /// The cluster is the vector's nodes: a new allocation of at most that many nodes is
    /// granted an id; extending, releasing or reacquiring names a granted one.
    async fn allocate(
        &self,
        proc: Proc,
        directive: AllocDirective,
        info: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let seen = self
            .upcall("pmix_server_alloc_fn_t")
            .proc(&proc)
            .info(&info);
        self.record(seen.detail(format!("directive {}", directive.0)));
        let capacity = control::Capacity {
            nodes: self.shared.nodes as u64,
            cpus: None,
        };
        lock(&self.shared.allocations).request(&self.shared.nspace, capacity, directive, &info)
    }

    /// A request the standard's directives allow, for ranks of the job, is accepted: a kill
    /// (SIGKILL), a termination (SIGTERM) or either signal asked for by number ends the
    /// targets other than the requester (`ClusterHost::end`); a checkpoint without a
    /// signal is the `PMIX_JCTRL_CHECKPOINT` event to its targets; other signals, pausing,
    /// resuming and cleanups are accepted and not carried out. Restarting from a checkpoint
    /// and provisioning need what the harness does not have.
    async fn job_control(
        &self,
        proc: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        use control::Control;
        let seen = self.upcall("pmix_server_job_control_fn_t").proc(&proc);
        self.record(seen.procs(&targets).info(&directives));
        let actions = control::job_control(&directives)?;
        if actions
            .iter()
            .any(|a| matches!(a, Control::Restart(_) | Control::Provision { .. }))
        {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let known = |p: &Proc| {
            p.nspace.as_str() == self.shared.nspace
                && (p.rank == Rank::WILDCARD || self.shared.node_of.contains_key(&p.rank.0))
        };
        if !targets.iter().all(known) {
            return Err(Status::ERR_NOT_FOUND);
        }
        let targets = if targets.is_empty() {
            vec![Proc::new(proc.nspace.clone(), Rank::WILDCARD)]
        } else {
            targets
        };
        for action in &actions {
            let signal = match action {
                Control::Kill => SIGKILL,
                Control::Terminate => SIGTERM,
                Control::Signal(s) if *s == SIGKILL || *s == SIGTERM => *s,
                _ => continue,
            };
            self.end(&proc, &targets, signal).await?;
        }
        for id in actions.iter().filter_map(Control::checkpoint_by_event) {
            let info = control::checkpoint_event(targets.clone(), id);
            let servers: Vec<Arc<dyn NodeServer>> = lock(&self.shared.servers).clone();
            for server in servers {
                let event = Event {
                    status: Status::JCTRL_CHECKPOINT,
                    source: Proc::new(Nspace::default(), Rank::UNDEF),
                    range: DataRange::CUSTOM,
                    info: info.clone(),
                };
                server.notify(event).await?;
            }
        }
        Ok(Vec::new())
    }

    /// Heartbeat monitors are watched (`ClusterHost::watch`) and beats counted; file
    /// monitors are accepted and not carried out.
    async fn monitor(
        &self,
        proc: Proc,
        monitor: Info,
        error: Status,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let seen = self.upcall("pmix_server_monitor_fn_t").proc(&proc);
        let seen = seen.info(std::slice::from_ref(&monitor)).info(&directives);
        self.record(seen.detail(format!("error {error:?}")));
        let mut beats = lock(&self.shared.heartbeats);
        match control::monitor(&monitor, &directives)? {
            control::Monitor::Heartbeat { period_s, drops } => {
                let watch = beats.entry(proc.clone()).or_insert((0, 0));
                watch.1 += 1;
                let generation = watch.1;
                let host = ClusterHost {
                    node: self.node,
                    shared: self.shared.clone(),
                };
                tokio::spawn(async move {
                    host.watch(proc, generation, period_s, drops, error).await;
                });
            }
            control::Monitor::Beat => {
                beats.get_mut(&proc).ok_or(Status::ERR_NOT_FOUND)?.0 += 1;
            }
            control::Monitor::Cancel(_) => {
                beats.remove(&proc);
            }
            // Accepted: the harness watches no files (`pmixrun` does).
            control::Monitor::File(_) => {}
        }
        Ok(Vec::new())
    }

    /// A collective of the participants' nodes; the set is then connected.
    async fn connect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        self.record(
            self.upcall("pmix_server_connect_fn_t")
                .procs(&procs)
                .info(&info),
        );
        self.collective("connect", &procs, Vec::new(), local_failure(&info))
            .await?;
        lock(&self.shared.connected).insert(sorted(procs));
        Ok(())
    }

    /// A collective of the participants' nodes, for a set connected before: the host
    /// refuses any other with `PMIX_ERR_INVALID_OPERATION` (v5.0 §12.3.3), as a library
    /// that leaves the check to its host (OpenPMIx 4.2) needs.
    async fn disconnect(&self, procs: Vec<Proc>, info: Vec<Info>) -> Result<(), Status> {
        self.record(
            self.upcall("pmix_server_disconnect_fn_t")
                .procs(&procs)
                .info(&info),
        );
        let set = sorted(procs);
        if !lock(&self.shared.connected).contains(&set) {
            return Err(Status::ERR_INVALID_OPERATION);
        }
        self.collective("disconnect", &set, Vec::new(), local_failure(&info))
            .await?;
        lock(&self.shared.connected).remove(&set);
        Ok(())
    }

    /// The harness's one fabric: `vfabric` of vendor `vvendor` on plane `10.0.0.0/8`, index
    /// 0, one device per node (`vnic` on each). A registration that names another fabric is
    /// `PMIX_ERR_NOT_FOUND`, as is an update of another index.
    async fn fabric(
        &self,
        proc: Proc,
        op: FabricOperation,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let seen = self
            .upcall("pmix_server_fabric_fn_t")
            .proc(&proc)
            .info(&directives);
        self.record(seen.detail(format!("operation {}", op.0)));
        const ID: &str = "vfabric";
        const VENDOR: &str = "vvendor";
        const PLANE: &str = "10.0.0.0/8";
        let name = FabricName {
            index: 0,
            identifier: ID,
            vendor: Some(VENDOR),
            plane: Some(PLANE),
        };
        let known = name.asked_by(op, &directives);
        if !known {
            return Err(Status::ERR_NOT_FOUND);
        }
        // Each device is a PMIX_FABRIC_DEVICE info of its own attributes (§15.3).
        let devices: Vec<Info> = self
            .shared
            .node_names
            .iter()
            .enumerate()
            .map(|(i, node)| {
                let device = vec![
                    Info::new(attr::FABRIC_DEVICE_NAME, "vnic".to_owned()),
                    Info::new(attr::FABRIC_DEVICE_INDEX, u32::try_from(i).unwrap_or(0)),
                    Info::new(attr::HOSTNAME, node.clone()),
                ];
                Info::new(attr::FABRIC_DEVICE, DataArray::of_infos(device))
            })
            .collect();
        Ok(vec![
            Info::new(attr::FABRIC_INDEX, 0usize),
            Info::new(attr::FABRIC_IDENTIFIER, ID.to_owned()),
            Info::new(attr::FABRIC_VENDOR, VENDOR.to_owned()),
            Info::new(attr::FABRIC_PLANE, PLANE.to_owned()),
            Info::new(attr::FABRIC_NUM_DEVICES, devices.len()),
            Info::new(attr::FABRIC_DEVICES, DataArray::of_infos(devices)),
        ])
    }

    /// A group operation is a collective of its members' nodes; a construction that asks for
    /// a context id gets the next one, the same at every node (forgotten at destruct, so a
    /// name used again gets a new one).
    async fn group(
        &self,
        op: GroupOperation,
        group: String,
        procs: Vec<Proc>,
        directives: Vec<Info>,
    ) -> Result<Vec<Info>, Status> {
        let seen = self
            .upcall("pmix_server_grp_fn_t")
            .procs(&procs)
            .info(&directives);
        self.record(seen.detail(format!("operation {} group {group}", op.0)));
        let kind = format!("group {} {group}", op.0);
        self.collective(&kind, &procs, Vec::new(), local_failure(&directives))
            .await?;
        let wants_id = Info::flag(&directives, attr::GROUP_ASSIGN_CONTEXT_ID);
        let mut ids = lock(&self.shared.context_ids);
        if op == GroupOperation::DESTRUCT {
            ids.1.remove(&group);
            return Ok(Vec::new());
        }
        let mut answer = Vec::new();
        if self.shared.group_membership {
            answer.push(Info::new(
                attr::GROUP_MEMBERSHIP,
                DataArray::of_procs(self.members_alive(&procs)),
            ));
        }
        if wants_id {
            let next = ids.0 + 1;
            let id = *ids.1.entry(group).or_insert(next);
            ids.0 = ids.0.max(id);
            answer.push(Info::new(attr::GROUP_CONTEXT_ID, id));
        }
        Ok(answer)
    }

    async fn direct_modex(&self, proc: Proc, info: Vec<Info>) -> Result<Vec<u8>, Status> {
        self.record(
            self.upcall("pmix_server_dmodex_req_fn_t")
                .proc(&proc)
                .info(&info),
        );
        if !self.shared.direct_modex {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        if proc.nspace.as_str() != self.shared.nspace {
            // Another job's information (rule R-05): registered with this node's server,
            // which then answers from it. Its processes run nowhere: no data of theirs to
            // fetch (rule R-06).
            let info = (self.shared.other_jobs.get(proc.nspace.as_str()))
                .filter(|_| proc.rank == Rank::WILDCARD)
                .ok_or(Status::ERR_NOT_FOUND)?;
            let server = lock(&self.shared.servers)
                .get(self.node)
                .cloned()
                .ok_or(Status::ERR_NOT_FOUND)?;
            server
                .register_job(proc.nspace.clone(), info.clone())
                .await?;
            return Ok(Vec::new());
        }
        let node = *self
            .shared
            .node_of
            .get(&proc.rank.0)
            .ok_or(Status::ERR_NOT_FOUND)?;
        let server = lock(&self.shared.servers)
            .get(node)
            .cloned()
            .ok_or(Status::ERR_NOT_FOUND)?;
        server.dmodex(proc, info).await
    }

    /// Accepted: the cluster raises the environmental events it knows of (a process's
    /// termination) to every job whatever was asked, and records the request.
    async fn register_events(&self, codes: Vec<Status>, info: Vec<Info>) -> Result<(), Status> {
        let seen = self.upcall("pmix_server_register_events_fn_t");
        self.record(seen.codes(&codes).info(&info));
        self.refusal("pmix_server_register_events_fn_t")
    }

    async fn deregister_events(&self, codes: Vec<Status>) -> Result<(), Status> {
        self.record(
            self.upcall("pmix_server_deregister_events_fn_t")
                .codes(&codes),
        );
        Ok(())
    }

    /// Relay a local process's event to every other node; each node's server picks the
    /// processes in range.
    async fn notify_event(
        &self,
        status: Status,
        source: Proc,
        range: DataRange,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let seen = self
            .upcall("pmix_server_notify_event_fn_t")
            .proc(&source)
            .info(&info);
        self.record(seen.detail(format!("status {status:?} range {}", range.0)));
        if self.shared.unrelayed.contains(&status) {
            return Err(Status::ERR_UNREACH);
        }
        let others: Vec<Arc<dyn NodeServer>> = lock(&self.shared.servers)
            .iter()
            .enumerate()
            .filter(|(n, _)| *n != self.node)
            .map(|(_, s)| s.clone())
            .collect();
        for server in others {
            let event = Event {
                status,
                source: source.clone(),
                range,
                info: info.clone(),
            };
            server.notify(event).await?;
        }
        Ok(())
    }

    /// The library's own logging to the local channels, as a host without channels of its
    /// own has it.
    async fn log(
        &self,
        proc: Proc,
        timestamp: i64,
        data: Vec<Info>,
        directives: Vec<Info>,
    ) -> Result<(), Status> {
        let seen = self.upcall("pmix_server_log_fn_t").proc(&proc).info(&data);
        self.record(
            seen.info(&directives)
                .detail(format!("timestamp {timestamp}")),
        );
        // The harness runs under tokio, never under the simulator.
        #[allow(clippy::disallowed_methods)]
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        pmix::host::log::write_local(&proc, timestamp, now, &data, &directives)
    }

    /// The cluster has no tool support: tools that bring their own identifier are left to
    /// the server, the others refused.
    async fn tool_connected(&self, info: Vec<Info>) -> Result<Proc, Status> {
        self.record(self.upcall("pmix_server_tool_connection_fn_t").info(&info));
        Err(Status::ERR_NOT_SUPPORTED)
    }

    async fn publish(&self, proc: Proc, info: Vec<Info>) -> Result<(), Status> {
        self.record(
            self.upcall("pmix_server_publish_fn_t")
                .proc(&proc)
                .info(&info),
        );
        if !self.shared.publish {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        self.shared.published.publish(&proc, &info)
    }

    async fn lookup(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<Vec<PData>, Status> {
        let seen = self
            .upcall("pmix_server_lookup_fn_t")
            .proc(&proc)
            .info(&info);
        self.record(seen.asked(&keys));
        if !self.shared.publish {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        let topology = self.shared.as_ref();
        self.shared
            .published
            .lookup(&proc, &keys, &info, topology)
            .await
    }

    async fn unpublish(
        &self,
        proc: Proc,
        keys: Vec<String>,
        info: Vec<Info>,
    ) -> Result<(), Status> {
        let seen = self
            .upcall("pmix_server_unpublish_fn_t")
            .proc(&proc)
            .info(&info);
        self.record(seen.asked(&keys));
        if !self.shared.publish {
            return Err(Status::ERR_NOT_SUPPORTED);
        }
        self.shared.published.unpublish(&proc, &keys, &info);
        Ok(())
    }

    /// Forwarding is agreed to: the output a vector's server delivers is all there is (the
    /// harness captures no process's output itself).
    async fn iof_pull(
        &self,
        procs: Vec<Proc>,
        directives: Vec<Info>,
        channels: IofChannel,
    ) -> Result<(), Status> {
        let seen = self.upcall("pmix_server_iof_fn_t").procs(&procs);
        let channels = pmix::model::strings::iof_channel_string(channels);
        self.record(
            seen.info(&directives)
                .detail(format!("channels {channels}")),
        );
        self.refusal("pmix_server_iof_fn_t")
    }

    /// Input is recorded and dropped: the vector's processes read no standard input. The
    /// bytes are recorded as the info `STDIN_DATA_KEY` after the directives, so that a
    /// vector can compare what reached the host with what was pushed.
    async fn push_stdin(
        &self,
        source: Proc,
        targets: Vec<Proc>,
        directives: Vec<Info>,
        data: Option<Vec<u8>>,
    ) -> Result<(), Status> {
        let seen = self.upcall("pmix_server_stdin_fn_t").proc(&source);
        let detail = match &data {
            Some(d) => format!("{} bytes", d.len()),
            None => "end of input".to_owned(),
        };
        let mut seen = seen.procs(&targets).info(&directives).detail(detail);
        if let Some(d) = data {
            seen = seen.info(&[stdin_data(d)]);
        }
        self.record(seen);
        Ok(())
    }
}

/// The key under which the host records the bytes a `pmix_server_stdin_fn_t` upcall carried:
/// not an attribute (the standard hands the data as the upcall's own argument), a name of
/// the harness's that no library sends.
const STDIN_DATA_KEY: &str = "harness.stdin.data";

fn stdin_data(bytes: Vec<u8>) -> Info {
    let value = pmix::model::Value::ByteObject(pmix::model::ByteObject(bytes));
    Info::with_key(STDIN_DATA_KEY, value).expect("a valid key")
}

/// The signals the host carries out (their numbers are the same on every Unix).
const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;

impl ClusterHost {
    /// An upcall of this node, to describe and [`ClusterHost::record`].
    fn upcall(&self, name: &'static str) -> HostUpcall {
        HostUpcall::new(self.node, name)
    }

    fn record(&self, upcall: HostUpcall) {
        self.shared.upcalls.record(upcall);
    }

    /// The answer to the upcall `name`: the status the vector has the host refuse it with,
    /// or success.
    fn refusal(&self, name: &str) -> Result<(), Status> {
        self.shared.refused.get(name).map_or(Ok(()), |s| Err(*s))
    }

    /// `procs` in their order, the job's wildcard spelled out, without the ranks the host
    /// knows have ended.
    fn members_alive(&self, procs: &[Proc]) -> Vec<Proc> {
        let gone = lock(&self.shared.gone).clone();
        let mut out: Vec<Proc> = Vec::new();
        for p in procs {
            let of_job = p.nspace.as_str() == self.shared.nspace;
            let ranks: Vec<u32> = if of_job && p.rank == Rank::WILDCARD {
                self.shared.node_of.keys().copied().collect()
            } else {
                vec![p.rank.0]
            };
            for r in ranks {
                let member = Proc::new(p.nspace.clone(), Rank(r));
                let ended = of_job && gone.contains(&r);
                if !ended && !out.contains(&member) {
                    out.push(member);
                }
            }
        }
        out
    }

    /// End the ranks of the vector's job that `targets` name (a wildcard: every rank), other
    /// than `requester`, with `signal`, each before the next; then announce each end to the
    /// job: `PMIX_EVENT_PROC_TERMINATED` naming it as `PMIX_EVENT_AFFECTED_PROC`, from the
    /// host, at every node (v5.0 §18.4.4.1: the event is the host's to give; this one gives it
    /// unasked). Ranks not running (never started, ended before) are left as they are.
    async fn end(&self, requester: &Proc, targets: &[Proc], signal: i32) -> Result<(), Status> {
        let job = Nspace::new(&self.shared.nspace).map_err(|_| Status::ERR_BAD_PARAM)?;
        let mut ranks = BTreeSet::new();
        for t in targets.iter().filter(|t| t.nspace == job) {
            if t.rank == Rank::WILDCARD {
                ranks.extend(self.shared.node_of.keys().copied());
            } else {
                ranks.insert(t.rank.0);
            }
        }
        if requester.nspace == job {
            ranks.remove(&requester.rank.0);
        }
        let Some(ender) = lock(&self.shared.ender).clone() else {
            return Ok(());
        };
        for rank in ranks {
            if !ender.end(rank, signal).await {
                continue;
            }
            self.shared.rank_gone(rank);
            let ended = Proc::new(job.clone(), Rank(rank));
            let audience = DataArray::of_procs(vec![Proc::new(job.clone(), Rank::WILDCARD)]);
            let info = vec![
                Info::new(attr::EVENT_CUSTOM_RANGE, audience),
                Info::new(attr::EVENT_AFFECTED_PROC, ended),
            ];
            let servers: Vec<Arc<dyn NodeServer>> = lock(&self.shared.servers).clone();
            for server in servers {
                let event = Event {
                    status: Status::EVENT_PROC_TERMINATED,
                    source: Proc::new(Nspace::default(), Rank::UNDEF),
                    range: DataRange::CUSTOM,
                    info: info.clone(),
                };
                server.notify(event).await?;
            }
        }
        Ok(())
    }

    /// Watch `proc`'s heartbeat under the request `generation`: every `period_s` seconds,
    /// look for a beat since the last look; after `drops` looks in a row without one (at
    /// least one), raise `error`, the request's status, to the job with the silent process as
    /// `PMIX_EVENT_AFFECTED_PROC` (v5.0 §13.3.1, §13.3.4), once. The watch ends then, or when
    /// it is cancelled or replaced.
    async fn watch(&self, proc: Proc, generation: u64, period_s: u32, drops: u32, error: Status) {
        let period = std::time::Duration::from_secs(u64::from(period_s.max(1)));
        let mut seen = 0;
        let mut missed = 0;
        while missed < drops.max(1) {
            tokio::time::sleep(period).await;
            let beats = match lock(&self.shared.heartbeats).get(&proc) {
                Some((beats, g)) if *g == generation => *beats,
                _ => return,
            };
            if beats > seen {
                seen = beats;
                missed = 0;
            } else {
                missed += 1;
            }
        }
        let audience = DataArray::of_procs(vec![Proc::new(proc.nspace.clone(), Rank::WILDCARD)]);
        let info = vec![
            Info::new(attr::EVENT_CUSTOM_RANGE, audience),
            Info::new(attr::EVENT_AFFECTED_PROC, proc.clone()),
        ];
        let servers: Vec<Arc<dyn NodeServer>> = lock(&self.shared.servers).clone();
        for server in servers {
            let event = Event {
                status: error,
                source: Proc::new(Nspace::default(), Rank::UNDEF),
                range: DataRange::CUSTOM,
                info: info.clone(),
            };
            if server.notify(event).await.is_err() {
                return;
            }
        }
    }

    /// One round of a collective among the nodes hosting `procs`: each node brings `data`,
    /// and all get every node's data, in node order. Rounds are counted per kind and set.
    /// Join the collective `kind` of `procs` with this node's `data` (and its server's local
    /// failure, if any); once every node involved has, each gets every node's data, or the
    /// first failure a node reported: hosts carry `PMIX_LOCAL_COLLECTIVE_STATUS` to all
    /// (v5.0 §17.3.6).
    async fn collective(
        &self,
        kind: &str,
        procs: &[Proc],
        data: Vec<u8>,
        failure: Option<Status>,
    ) -> Result<Vec<u8>, Status> {
        let mut sorted = procs.to_vec();
        sorted.sort();
        let key = format!("{kind} {sorted:?}");
        let expected = self.shared.nodes_of(procs);
        let rx = {
            let round = {
                let mut rounds = lock(&self.shared.rounds);
                let r = rounds.entry((key.clone(), self.node)).or_insert(0);
                *r += 1;
                *r
            };
            let mut fences = lock(&self.shared.fences);
            let f = fences.entry((key.clone(), round)).or_default();
            f.data.insert(self.node, data);
            f.failed = f.failed.or(failure);
            let (tx, rx) = oneshot::channel();
            f.waiters.push(tx);
            if expected.iter().all(|n| f.data.contains_key(n)) {
                let all: Vec<u8> = f.data.values().flatten().copied().collect();
                if let Some(done) = fences.remove(&(key, round)) {
                    let outcome = done.failed.map_or(Ok(all), Err);
                    for w in done.waiters {
                        let _ = w.send(outcome.clone());
                    }
                }
            }
            rx
        };
        rx.await.map_err(|_| Status::ERR_LOST_CONNECTION)?
    }
}

/// The failure a server reports with `PMIX_LOCAL_COLLECTIVE_STATUS`: a status other than
/// success.
fn local_failure(info: &[Info]) -> Option<Status> {
    info.iter()
        .find(|i| i.is(attr::LOCAL_COLLECTIVE_STATUS))
        .and_then(|i| match i.value {
            pmix::model::Value::Status(s) if s != Status::SUCCESS => Some(s),
            _ => None,
        })
}

/// `procs` in order, the form a connected set is recorded in.
fn sorted(mut procs: Vec<Proc>) -> Vec<Proc> {
    procs.sort();
    procs
}
