//! The client APIs beyond data access (events, process management, query, logging, job
//! management, credentials, groups, I/O forwarding, fabric, topology) and the support
//! functions a rank makes ([`support`]): a step's call resolved for one caller
//! ([`ApiCall`]), what a caller observed ([`ApiOutput`]), and how this crate's client runs
//! them ([`run_rust`]). The library side is [`crate::ffi::run_api`].
//!
//! Steps travel to a target's child process as the vector wrote them (the
//! [`Call`](crate::vector::Call) with the job's namespace and the caller's rank) and are
//! resolved there with [`resolve`], so both sides read a vector the same way.

use std::collections::BTreeMap;

use pmix::client::{EventCompletion, EventNotice};
use pmix::events::HandlerId;
use pmix::model::{
    AllocDirective, App, DataArray, DataRange, DataType, Info, IofChannel, Nspace, PData, Proc,
    Query, Status, Value,
};

/// A call resolved for one caller.
#[derive(Clone, Debug)]
pub enum ApiCall {
    /// The non-blocking forms of the data-access calls (the blocking ones have their own
    /// path).
    FenceNb {
        procs: Vec<Proc>,
        info: Vec<Info>,
    },
    PublishNb {
        info: Vec<Info>,
    },
    LookupNb {
        keys: Vec<String>,
        info: Vec<Info>,
    },
    UnpublishNb {
        keys: Vec<String>,
        info: Vec<Info>,
    },
    Initialized,
    GetVersion,
    Progress,
    Abort {
        status: Status,
        message: String,
        procs: Vec<Proc>,
    },
    RegisterEventHandler {
        handler: String,
        codes: Vec<Status>,
        info: Vec<Info>,
        /// How the handler ends its turn: a status and results for later handlers.
        complete: Status,
        results: Vec<Info>,
    },
    DeregisterEventHandler {
        handler: String,
    },
    Events {
        handler: String,
        count: usize,
        wait_ms: u64,
    },
    NotifyEvent {
        status: Status,
        range: DataRange,
        info: Vec<Info>,
    },
    Log {
        data: Vec<Info>,
        directives: Vec<Info>,
        nb: bool,
    },
    Query {
        queries: Vec<Query>,
        nb: bool,
    },
    Spawn {
        job_info: Vec<Info>,
        apps: Vec<App>,
        nb: bool,
    },
    Connect {
        procs: Vec<Proc>,
        info: Vec<Info>,
        nb: bool,
    },
    Disconnect {
        procs: Vec<Proc>,
        info: Vec<Info>,
        nb: bool,
    },
    ResolvePeers {
        node: String,
        nspace: String,
    },
    ResolveNodes {
        nspace: String,
    },
    AllocationRequest {
        directive: AllocDirective,
        info: Vec<Info>,
        nb: bool,
    },
    JobControl {
        targets: Vec<Proc>,
        directives: Vec<Info>,
        nb: bool,
    },
    ProcessMonitor {
        monitor: Info,
        error: Status,
        directives: Vec<Info>,
        nb: bool,
    },
    GetCredential {
        info: Vec<Info>,
        nb: bool,
    },
    ValidateCredential {
        /// `None`: the caller's last credential.
        credential: Option<Vec<u8>>,
        /// Change its last byte first (a credential tampered with on the way).
        altered: bool,
        info: Vec<Info>,
        nb: bool,
    },
    GroupConstruct {
        group: String,
        procs: Vec<Proc>,
        info: Vec<Info>,
        nb: bool,
    },
    GroupDestruct {
        group: String,
        info: Vec<Info>,
        nb: bool,
    },
    GroupInvite {
        group: String,
        procs: Vec<Proc>,
        info: Vec<Info>,
        nb: bool,
    },
    GroupJoin {
        group: String,
        leader: Proc,
        accept: bool,
        info: Vec<Info>,
        nb: bool,
    },
    GroupLeave {
        group: String,
        info: Vec<Info>,
        nb: bool,
    },
    IofPull {
        handler: String,
        procs: Vec<Proc>,
        channels: IofChannel,
        info: Vec<Info>,
    },
    IofDeregister {
        handler: String,
    },
    IofOutput {
        handler: String,
        bytes: usize,
        wait_ms: u64,
    },
    IofPush {
        targets: Vec<Proc>,
        data: Option<Vec<u8>>,
        info: Vec<Info>,
    },
    FabricRegister {
        info: Vec<Info>,
        nb: bool,
    },
    FabricUpdate {
        nb: bool,
    },
    FabricDeregister {
        nb: bool,
    },
    GetCpuset {
        thread: bool,
    },
    GetRelativeLocality {
        locality1: String,
        locality2: String,
    },
    ComputeDistances {
        /// Where to measure from (`None`: the caller's cpuset).
        from: Option<pmix::model::Cpuset>,
        info: Vec<Info>,
        nb: bool,
    },
    /// A support function (chapters 3, 11 and §12.4), see [`support`].
    Support(support::SupportCall),
}

/// What one caller observed: the status, a value, result infos, events seen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ApiOutput {
    pub status: Status,
    pub value: Option<Value>,
    /// What a lookup found.
    pub data: Vec<PData>,
    pub results: Vec<Info>,
    pub events: Vec<SeenEvent>,
    /// The target has no such call: this crate lacks the API. The harness never answers in
    /// the implementation's place, so this is reported as not supported whatever the step
    /// expects.
    pub no_such_call: bool,
}

/// An event as a handler saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct SeenEvent {
    pub status: Status,
    pub source: Option<Proc>,
    /// The information the event carries (`PMIX_EVENT_AFFECTED_PROC`, …).
    pub info: Vec<Info>,
    /// The results the handlers before it handed on.
    pub results: Vec<Info>,
}

impl ApiOutput {
    /// The target has no function for the call.
    pub fn no_such_call() -> ApiOutput {
        ApiOutput {
            status: Status::ERR_NOT_SUPPORTED,
            no_such_call: true,
            ..ApiOutput::default()
        }
    }

    /// The outcome of a call that returned `status` (or an error that reports it).
    pub fn status(status: impl Into<Status>) -> ApiOutput {
        ApiOutput {
            status: status.into(),
            ..ApiOutput::default()
        }
    }

    pub fn value(r: Result<Value, Status>) -> ApiOutput {
        match r {
            Ok(v) => ApiOutput {
                status: Status::SUCCESS,
                value: Some(v),
                ..ApiOutput::default()
            },
            Err(s) => ApiOutput::status(s),
        }
    }

    pub fn results(r: Result<Vec<Info>, Status>) -> ApiOutput {
        match r {
            Ok(results) => ApiOutput {
                status: Status::SUCCESS,
                results,
                ..ApiOutput::default()
            },
            Err(s) => ApiOutput::status(s),
        }
    }
}

mod resolve;
pub mod support;

pub(crate) use resolve::iof_channels;
pub use resolve::resolve;

/// A list of processes as the value a vector compares: a `PMIX_PROC` array sorted by
/// namespace and rank (the standard fixes no order for resolved peers).
pub fn sorted_procs(mut procs: Vec<Proc>) -> Value {
    procs.sort_by(|a, b| (a.nspace.as_str(), a.rank.0).cmp(&(b.nspace.as_str(), b.rank.0)));
    Value::DataArray(Box::new(DataArray {
        data_type: DataType::PROC,
        elements: procs.into_iter().map(Value::Proc).collect(),
    }))
}

/// A credential tampered with: its last byte changed (nothing to change in an empty one).
pub fn alter(credential: &mut [u8]) {
    if let Some(last) = credential.last_mut() {
        *last ^= 0x01;
    }
}

/// A comma-separated node list, sorted (the standard fixes no order).
pub fn sorted_nodes(list: &[u8]) -> Value {
    let mut nodes: Vec<&[u8]> = list
        .split(|&b| b == b',')
        .filter(|n| !n.is_empty())
        .collect();
    nodes.sort_unstable();
    Value::string(nodes.join(&b','))
}

fn strs(keys: &[String]) -> Vec<&str> {
    keys.iter().map(String::as_str).collect()
}

/// What one process of this crate's client keeps between steps: its event handlers by the
/// vector's names and the events each has seen.
#[derive(Debug, Default)]
pub struct RustProc {
    handlers: std::sync::Mutex<BTreeMap<String, HandlerId>>,
    seen: std::sync::Mutex<BTreeMap<HandlerId, Vec<SeenEvent>>>,
    changed: tokio::sync::Notify,
    /// The last credential `get_credential` returned.
    credential: std::sync::Mutex<Option<Vec<u8>>>,
    /// The last fabric `fabric_register` returned.
    fabric: std::sync::Mutex<Option<pmix::model::Fabric>>,
    /// Its pulls of output by the vector's names, and what each was handed, in order.
    pulls: std::sync::Mutex<BTreeMap<String, u64>>,
    output: std::sync::Mutex<BTreeMap<u64, Vec<u8>>>,
}

impl RustProc {
    fn handler(&self, name: &str) -> Option<HandlerId> {
        lock(&self.handlers).get(name).copied()
    }

    fn seen(&self, id: HandlerId) -> Vec<SeenEvent> {
        lock(&self.seen).get(&id).cloned().unwrap_or_default()
    }

    /// Until `enough` holds, re-checked whenever a handler was handed something, for
    /// `wait_ms` at most (what was handed by then is the step's answer either way).
    async fn wait_until(&self, enough: impl Fn() -> bool, wait_ms: u64) {
        let waited = async {
            loop {
                let changed = self.changed.notified();
                if enough() {
                    return;
                }
                changed.await;
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_millis(wait_ms), waited).await;
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A result of this crate's client, as the status the report compares.
pub(crate) fn st<T>(r: Result<T, pmix::Error>) -> Result<T, Status> {
    r.map_err(Status::from)
}

/// Run `call` on this crate's async client, whose per-process state is `me`.
pub async fn run_rust(
    c: &pmix::client::Client,
    me: &std::sync::Arc<RustProc>,
    call: ApiCall,
) -> ApiOutput {
    let unit = |r: Result<(), pmix::Error>| {
        ApiOutput::status(r.err().map_or(Status::SUCCESS, |e| e.status()))
    };
    // A group formed: its status (a partial success too) and the results the call returned.
    let formed = |r: Result<pmix::client::GroupConstructed, pmix::Error>| match r {
        Ok(g) => ApiOutput {
            status: g.status,
            results: g.results,
            ..ApiOutput::default()
        },
        Err(s) => ApiOutput::status(s),
    };
    match call {
        ApiCall::FenceNb { procs, info } => unit(c.fence_nb(&procs, &info).await),
        ApiCall::PublishNb { info } => unit(c.publish_nb(&info).await),
        ApiCall::LookupNb { keys, info } => match c.lookup_nb(&strs(&keys), &info).await {
            Ok(data) => ApiOutput {
                status: PData::lookup_status(&keys, &data),
                data,
                ..ApiOutput::default()
            },
            Err(s) => ApiOutput::status(s),
        },
        ApiCall::UnpublishNb { keys, info } => unit(c.unpublish_nb(&strs(&keys), &info).await),
        ApiCall::Initialized => ApiOutput::value(Ok(Value::Bool(c.initialized()))),
        ApiCall::GetVersion => ApiOutput::value(Ok(Value::string(
            pmix::client::Client::version().to_owned(),
        ))),
        ApiCall::Progress => {
            c.progress();
            ApiOutput::status(Status::SUCCESS)
        }
        ApiCall::Abort {
            status,
            message,
            procs,
        } => ApiOutput::status(
            c.abort(status, &message, &procs)
                .await
                .err()
                .map_or(Status::SUCCESS, |e| e.status()),
        ),
        ApiCall::RegisterEventHandler {
            handler,
            codes,
            info,
            complete,
            results,
        } => {
            let book = me.clone();
            let record = move |notice: EventNotice, done: EventCompletion| {
                let seen = SeenEvent {
                    status: notice.status,
                    source: Some(notice.source),
                    info: notice.info,
                    results: notice.results,
                };
                lock(&book.seen)
                    .entry(notice.handler)
                    .or_default()
                    .push(seen);
                book.changed.notify_waiters();
                done.complete(complete, results.clone());
            };
            match c.register_event_handler(&codes, &info, record).await {
                Ok(id) => {
                    lock(&me.handlers).insert(handler, id);
                    ApiOutput::status(Status::SUCCESS)
                }
                Err(s) => ApiOutput::status(s),
            }
        }
        // The name keeps its identifier, so a second deregistration asks about an identifier
        // the client no longer holds, and the events step still reads what it saw.
        ApiCall::DeregisterEventHandler { handler } => match me.handler(&handler) {
            Some(id) => unit(c.deregister_event_handler(id).await),
            None => ApiOutput::status(Status::ERR_BAD_PARAM),
        },
        ApiCall::Events {
            handler,
            count,
            wait_ms,
        } => {
            let Some(id) = me.handler(&handler) else {
                return ApiOutput::status(Status::ERR_BAD_PARAM);
            };
            me.wait_until(|| me.seen(id).len() >= count, wait_ms).await;
            ApiOutput {
                events: me.seen(id),
                ..ApiOutput::status(Status::SUCCESS)
            }
        }
        ApiCall::NotifyEvent {
            status,
            range,
            info,
        } => unit(c.notify_event(status, None, range, &info).await),
        ApiCall::Spawn { job_info, apps, nb } => {
            let spawned = if nb {
                c.spawn_nb(&job_info, &apps).await
            } else {
                c.spawn(&job_info, &apps).await
            };
            ApiOutput::value(st(spawned.map(|ns| Value::string(ns.as_str().to_owned()))))
        }
        ApiCall::Log {
            data,
            directives,
            nb,
        } => unit(if nb {
            c.log_nb(&data, &directives).await
        } else {
            c.log(&data, &directives).await
        }),
        ApiCall::AllocationRequest {
            directive,
            info,
            nb,
        } => ApiOutput::results(st(if nb {
            c.allocation_request_nb(directive, &info).await
        } else {
            c.allocation_request(directive, &info).await
        })),
        ApiCall::JobControl {
            targets,
            directives,
            nb,
        } => ApiOutput::results(st(if nb {
            c.job_control_nb(&targets, &directives).await
        } else {
            c.job_control(&targets, &directives).await
        })),
        ApiCall::ProcessMonitor {
            monitor,
            error,
            directives,
            nb,
        } => ApiOutput::results(st(if nb {
            c.process_monitor_nb(&monitor, error, &directives).await
        } else {
            c.process_monitor(&monitor, error, &directives).await
        })),
        ApiCall::GetCredential { info, nb } => {
            let got = if nb {
                c.get_credential_nb(&info).await
            } else {
                c.get_credential(&info).await
            };
            match got {
                Ok((credential, _)) => {
                    *lock(&me.credential) = Some(credential.0.clone());
                    ApiOutput::value(Ok(Value::ByteObject(credential)))
                }
                Err(s) => ApiOutput::status(s),
            }
        }
        ApiCall::ValidateCredential {
            credential,
            altered,
            info,
            nb,
        } => {
            let Some(mut bytes) = credential.or_else(|| lock(&me.credential).clone()) else {
                return ApiOutput::status(Status::ERR_BAD_PARAM);
            };
            if altered {
                alter(&mut bytes);
            }
            ApiOutput::results(st(if nb {
                c.validate_credential_nb(&bytes, &info).await
            } else {
                c.validate_credential(&bytes, &info).await
            }))
        }
        ApiCall::Connect { procs, info, nb } => unit(if nb {
            c.connect_nb(&procs, &info).await
        } else {
            c.connect(&procs, &info).await
        }),
        ApiCall::Disconnect { procs, info, nb } => unit(if nb {
            c.disconnect_nb(&procs, &info).await
        } else {
            c.disconnect(&procs, &info).await
        }),
        ApiCall::FabricRegister { info, nb } => {
            let registered = if nb {
                c.fabric_register_nb(&info).await
            } else {
                c.fabric_register(&info).await
            };
            match registered {
                Ok(f) => {
                    let results = f.info.clone();
                    *lock(&me.fabric) = Some(f);
                    ApiOutput::results(Ok(results))
                }
                Err(s) => ApiOutput::status(s),
            }
        }
        ApiCall::FabricUpdate { nb } => {
            let Some(mut f) = lock(&me.fabric).clone() else {
                return ApiOutput::status(Status::ERR_BAD_PARAM);
            };
            let updated = if nb {
                c.fabric_update_nb(f).await
            } else {
                c.fabric_update(&mut f).await.map(|()| f)
            };
            match updated {
                Ok(f) => {
                    let results = f.info.clone();
                    *lock(&me.fabric) = Some(f);
                    ApiOutput::results(Ok(results))
                }
                Err(s) => ApiOutput::status(s),
            }
        }
        ApiCall::FabricDeregister { nb } => {
            let Some(mut f) = lock(&me.fabric).take() else {
                return ApiOutput::status(Status::ERR_BAD_PARAM);
            };
            unit(if nb {
                c.fabric_deregister_nb(f).await
            } else {
                c.fabric_deregister(&mut f).await
            })
        }
        ApiCall::GroupConstruct {
            group,
            procs,
            info,
            nb,
        } => formed(if nb {
            c.group_construct_nb(&group, &procs, &info).await
        } else {
            c.group_construct(&group, &procs, &info).await
        }),
        ApiCall::GroupDestruct { group, info, nb } => unit(if nb {
            c.group_destruct_nb(&group, &info).await
        } else {
            c.group_destruct(&group, &info).await
        }),
        ApiCall::GroupInvite {
            group,
            procs,
            info,
            nb,
        } => formed(if nb {
            c.group_invite_nb(&group, &procs, &info).await
        } else {
            c.group_invite(&group, &procs, &info).await
        }),
        ApiCall::GroupJoin {
            group,
            leader,
            accept,
            info,
            nb,
        } => {
            let answer = if accept {
                pmix::client::GroupAnswer::Accept
            } else {
                pmix::client::GroupAnswer::Decline
            };
            formed(if nb {
                c.group_join_nb(&group, &leader, answer, &info).await
            } else {
                c.group_join(&group, &leader, answer, &info).await
            })
        }
        ApiCall::GroupLeave { group, info, nb } => unit(if nb {
            c.group_leave_nb(&group, &info).await
        } else {
            c.group_leave(&group, &info).await
        }),
        ApiCall::Query { queries, nb } => {
            let answered = if nb {
                match c.query_nb(&queries) {
                    Ok(pending) => pending.await,
                    Err(s) => Err(s),
                }
            } else {
                c.query(&queries).await
            };
            match answered {
                Ok(a) => ApiOutput {
                    status: a.status,
                    results: a.results,
                    ..ApiOutput::default()
                },
                Err(s) => ApiOutput::status(s),
            }
        }
        ApiCall::GetCpuset { thread } => ApiOutput::value(st(c
            .get_cpuset(thread)
            .await
            .map(|cs| Value::ProcCpuset(Box::new(cs))))),
        ApiCall::GetRelativeLocality {
            locality1,
            locality2,
        } => ApiOutput::value(
            pmix::model::topology::relative_locality(&locality1, &locality2)
                .map(Value::LocType)
                .map_err(|e| e.status()),
        ),
        ApiCall::Support(call) => support::run_rust(c, call).await,
        ApiCall::ComputeDistances { from, info, nb } => {
            // As the C harness does: the loaded topology, and the caller's cpuset unless the
            // step names one.
            let from = match (c.load_topology().await, from) {
                (Ok(m), Some(cs)) => Ok((m, cs)),
                (Ok(m), None) => c.get_cpuset(false).await.map(|cs| (m, cs)),
                (Err(s), _) => Err(s),
            };
            let distances = match from {
                Ok((m, cs)) if nb => pmix::client::Client::compute_distances_nb(m, cs, info).await,
                Ok((m, cs)) => pmix::client::Client::compute_distances(&m, &cs, &info),
                Err(s) => Err(s),
            };
            ApiOutput::value(st(distances.map(|d| Value::Size(d.len() as u64))))
        }
        // An empty namespace: every namespace at once.
        ApiCall::ResolvePeers { node, nspace } if nspace.is_empty() => ApiOutput::value(st(c
            .resolve_peers_of_every_job(Some(&node))
            .await
            .map(sorted_procs))),
        ApiCall::ResolvePeers { node, nspace } => match Nspace::new(&nspace) {
            Ok(ns) => ApiOutput::value(st(c
                .resolve_peers(Some(&node), &ns)
                .await
                .map(sorted_procs))),
            Err(_) => ApiOutput::status(Status::ERR_BAD_PARAM),
        },
        ApiCall::ResolveNodes { nspace } => match Nspace::new(&nspace) {
            Ok(ns) => ApiOutput::value(st(c
                .resolve_nodes(&ns)
                .await
                .map(|l| sorted_nodes(l.as_bytes())))),
            Err(_) => ApiOutput::status(Status::ERR_BAD_PARAM),
        },
        ApiCall::IofPull {
            handler,
            procs,
            channels,
            info,
        } => {
            let book = me.clone();
            let keep = move |o: pmix::client::IofOutput| {
                lock(&book.output)
                    .entry(o.handler)
                    .or_default()
                    .extend_from_slice(&o.data);
                book.changed.notify_waiters();
            };
            match c
                .iof_pull(&procs, channels, &info, std::sync::Arc::new(keep))
                .await
            {
                Ok(id) => {
                    lock(&me.pulls).insert(handler, id);
                    ApiOutput::status(Status::SUCCESS)
                }
                Err(e) => ApiOutput::status(e),
            }
        }
        // The name keeps its id, so a second deregistration asks the client about an id it
        // no longer holds, and the output step still reads what the pull was handed.
        ApiCall::IofDeregister { handler } => {
            let id = lock(&me.pulls).get(&handler).copied();
            match id {
                Some(id) => unit(c.iof_deregister(id, &[]).await),
                None => ApiOutput::status(Status::ERR_BAD_PARAM),
            }
        }
        ApiCall::IofOutput {
            handler,
            bytes,
            wait_ms,
        } => {
            let Some(id) = lock(&me.pulls).get(&handler).copied() else {
                return ApiOutput::status(Status::ERR_BAD_PARAM);
            };
            let handed = || lock(&me.output).get(&id).cloned().unwrap_or_default();
            me.wait_until(|| handed().len() >= bytes, wait_ms).await;
            ApiOutput::value(Ok(Value::ByteObject(pmix::model::ByteObject(handed()))))
        }
        ApiCall::IofPush {
            targets,
            data,
            info,
        } => unit(c.iof_push(&targets, data.as_deref(), &info).await),
    }
}
