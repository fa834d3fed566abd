//! A vector's step read for one caller: its call, with the caller's namespace and rank put
//! in, as the [`ApiCall`] a target runs.

use pmix::model::{
    AllocDirective, App, DataRange, Info, IofChannel, Nspace, Proc, Query, Rank, Status,
};

use super::ApiCall;
use crate::vector::{Call, InfoSpec, TargetSpec, from_hex, key_string, status_named};

/// `call` resolved for the caller of rank `rank` in the job `nspace`; `None` for the calls of
/// the data-access chapter, which have their own path.
pub fn resolve(call: &Call, nspace: &str, rank: u32) -> Result<Option<ApiCall>, String> {
    let me = Rank(rank);
    let infos = |list: &[InfoSpec]| -> Result<Vec<Info>, String> {
        list.iter()
            .map(|i| i.to_info(nspace))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("field `info`: {e}"))
    };
    let procs = |list: &[TargetSpec]| -> Result<Vec<Proc>, String> {
        list.iter().map(|t| t.to_proc(nspace, me)).collect()
    };
    let status = |name: &str| status_named(name);
    let group = |g: &str| -> Result<String, String> {
        if g.is_empty() || g.len() > 255 {
            return Err(format!("field `group`: \"{g}\" is not a group name"));
        }
        Ok(g.to_owned())
    };
    let keys = |list: &[String]| -> Result<Vec<String>, String> {
        list.iter().map(|k| key_string(k)).collect()
    };
    let ns = |n: &Option<String>| -> Result<String, String> {
        let n = n.as_deref().unwrap_or(nspace);
        if !n.is_empty() {
            Nspace::new(n).map_err(|e| format!("field `nspace`: {e}"))?;
        }
        Ok(n.to_owned())
    };
    if let Some(support) = super::support::resolve(call, nspace)? {
        return Ok(Some(ApiCall::Support(support)));
    }
    Ok(Some(match call {
        Call::Put { .. }
        | Call::StoreInternal { .. }
        | Call::Commit
        | Call::Fence { nb: false, .. }
        | Call::Get { .. }
        | Call::Await { .. }
        | Call::Publish { nb: false, .. }
        | Call::Lookup { nb: false, .. }
        | Call::Unpublish { nb: false, .. }
        | Call::Init
        | Call::Finalize
        | Call::Vanish => return Ok(None),
        Call::Fence { procs: p, info, .. } => ApiCall::FenceNb {
            procs: procs(p)?,
            info: infos(info)?,
        },
        Call::Publish { info, .. } => ApiCall::PublishNb { info: infos(info)? },
        Call::Lookup { keys: k, info, .. } => ApiCall::LookupNb {
            keys: keys(k)?,
            info: infos(info)?,
        },
        Call::Unpublish { keys: k, info, .. } => ApiCall::UnpublishNb {
            keys: keys(k)?,
            info: infos(info)?,
        },
        Call::Initialized => ApiCall::Initialized,
        Call::GetVersion => ApiCall::GetVersion,
        Call::Progress => ApiCall::Progress,
        Call::Abort {
            status: s,
            message,
            procs: p,
        } => ApiCall::Abort {
            status: status(s)?,
            message: message.clone(),
            procs: procs(p)?,
        },
        Call::RegisterEventHandler {
            handler,
            codes,
            info,
            complete,
            results,
        } => ApiCall::RegisterEventHandler {
            handler: handler.clone(),
            codes: codes.iter().map(|c| status(c)).collect::<Result<_, _>>()?,
            info: infos(info)?,
            complete: complete.as_deref().map_or(Ok(Status::SUCCESS), status)?,
            results: infos(results)?,
        },
        Call::DeregisterEventHandler { handler } => ApiCall::DeregisterEventHandler {
            handler: handler.clone(),
        },
        Call::Events {
            handler,
            count,
            wait_ms,
        } => ApiCall::Events {
            handler: handler.clone(),
            count: *count,
            wait_ms: *wait_ms,
        },
        Call::NotifyEvent {
            status: s,
            range,
            info,
        } => ApiCall::NotifyEvent {
            status: status(s)?,
            range: DataRange::from_name(range)
                .ok_or_else(|| format!("field `range`: no range is named {range}"))?,
            info: infos(info)?,
        },
        Call::Log {
            data,
            directives,
            nb,
        } => ApiCall::Log {
            data: infos(data)?,
            directives: infos(directives)?,
            nb: *nb,
        },
        Call::Query { queries, nb } => ApiCall::Query {
            queries: queries
                .iter()
                .map(|q| {
                    Ok(Query {
                        keys: q
                            .keys
                            .iter()
                            .map(|k| key_string(k).map(Some))
                            .collect::<Result<_, String>>()?,
                        qualifiers: infos(&q.qualifiers)?,
                    })
                })
                .collect::<Result<_, String>>()?,
            nb: *nb,
        },
        Call::Spawn { job_info, apps, nb } => ApiCall::Spawn {
            job_info: infos(job_info)?,
            apps: apps
                .iter()
                .map(|a| {
                    Ok(App {
                        cmd: Some(a.cmd.as_str().into()),
                        argv: a.argv.iter().map(|s| Some(s.as_str().into())).collect(),
                        env: a.env.iter().map(|s| Some(s.as_str().into())).collect(),
                        cwd: a.cwd.as_deref().map(pmix::model::Text::from),
                        maxprocs: a.maxprocs,
                        info: infos(&a.info)?,
                    })
                })
                .collect::<Result<_, String>>()?,
            nb: *nb,
        },
        Call::Connect { procs: p, info, nb } => ApiCall::Connect {
            procs: procs(p)?,
            info: infos(info)?,
            nb: *nb,
        },
        Call::Disconnect { procs: p, info, nb } => ApiCall::Disconnect {
            procs: procs(p)?,
            info: infos(info)?,
            nb: *nb,
        },
        Call::ResolvePeers { node, nspace: n } => ApiCall::ResolvePeers {
            node: node.clone(),
            nspace: ns(n)?,
        },
        Call::ResolveNodes { nspace: n } => ApiCall::ResolveNodes { nspace: ns(n)? },
        Call::AllocationRequest {
            directive,
            info,
            nb,
        } => ApiCall::AllocationRequest {
            directive: AllocDirective::from_name(directive)
                .ok_or_else(|| format!("field `directive`: no directive is named {directive}"))?,
            info: infos(info)?,
            nb: *nb,
        },
        Call::JobControl {
            targets,
            directives,
            nb,
        } => ApiCall::JobControl {
            targets: procs(targets)?,
            directives: infos(directives)?,
            nb: *nb,
        },
        Call::ProcessMonitor {
            monitor,
            error,
            directives,
            nb,
        } => ApiCall::ProcessMonitor {
            monitor: monitor
                .to_info(nspace)
                .map_err(|e| format!("field `monitor`: {e}"))?,
            error: status(error)?,
            directives: infos(directives)?,
            nb: *nb,
        },
        Call::GetCredential { info, nb } => ApiCall::GetCredential {
            info: infos(info)?,
            nb: *nb,
        },
        Call::ValidateCredential {
            credential,
            altered,
            info,
            nb,
        } => ApiCall::ValidateCredential {
            credential: credential
                .as_deref()
                .map(from_hex)
                .transpose()
                .map_err(|e| format!("field `credential`: {e}"))?,
            altered: *altered,
            info: infos(info)?,
            nb: *nb,
        },
        Call::GroupConstruct {
            group: g,
            procs: p,
            info,
            nb,
        } => ApiCall::GroupConstruct {
            group: group(g)?,
            procs: procs(p)?,
            info: infos(info)?,
            nb: *nb,
        },
        Call::GroupDestruct { group: g, info, nb } => ApiCall::GroupDestruct {
            group: group(g)?,
            info: infos(info)?,
            nb: *nb,
        },
        Call::GroupInvite {
            group: g,
            procs: p,
            info,
            nb,
        } => ApiCall::GroupInvite {
            group: group(g)?,
            procs: procs(p)?,
            info: infos(info)?,
            nb: *nb,
        },
        Call::GroupJoin {
            group: g,
            leader,
            accept,
            info,
            nb,
        } => ApiCall::GroupJoin {
            group: group(g)?,
            leader: leader.to_proc(nspace, me)?,
            accept: *accept,
            info: infos(info)?,
            nb: *nb,
        },
        Call::GroupLeave { group: g, info, nb } => ApiCall::GroupLeave {
            group: group(g)?,
            info: infos(info)?,
            nb: *nb,
        },
        Call::IofPull {
            handler,
            procs: p,
            channels,
            info,
        } => ApiCall::IofPull {
            handler: handler.clone(),
            procs: procs(p)?,
            channels: iof_channels(channels)?,
            info: infos(info)?,
        },
        Call::IofOutput {
            handler,
            bytes,
            wait_ms,
        } => ApiCall::IofOutput {
            handler: handler.clone(),
            bytes: *bytes,
            wait_ms: *wait_ms,
        },
        Call::IofDeregister { handler } => ApiCall::IofDeregister {
            handler: handler.clone(),
        },
        Call::IofPush {
            targets,
            data,
            info,
        } => ApiCall::IofPush {
            targets: procs(targets)?,
            data: data.as_ref().map(|d| d.as_bytes().to_vec()),
            info: infos(info)?,
        },
        Call::FabricRegister { info, nb } => ApiCall::FabricRegister {
            info: infos(info)?,
            nb: *nb,
        },
        Call::FabricUpdate { nb } => ApiCall::FabricUpdate { nb: *nb },
        Call::FabricDeregister { nb } => ApiCall::FabricDeregister { nb: *nb },
        Call::GetCpuset { bind } => ApiCall::GetCpuset {
            thread: match bind.as_str() {
                "process" => false,
                "thread" => true,
                other => {
                    return Err(format!(
                        "field `bind`: \"{other}\" is neither process nor thread"
                    ));
                }
            },
        },
        Call::GetRelativeLocality {
            locality1,
            locality2,
        } => ApiCall::GetRelativeLocality {
            locality1: locality1.clone(),
            locality2: locality2.clone(),
        },
        Call::ComputeDistances { cpus, info, nb } => ApiCall::ComputeDistances {
            from: cpus.as_ref().map(|c| pmix::model::Cpuset {
                source: Some("hwloc".to_owned()),
                bitmap: Some(c.clone()),
            }),
            info: infos(info)?,
            nb: *nb,
        },
        other if other.by_server() || other.by_tool() => {
            return Err(format!(
                "`{}` is a call of a server or a tool",
                other.name()
            ));
        }
        other => return Err(format!("`{}` has no client form", other.name())),
    }))
}

/// Channel names (`stdin`, `stdout`, `stderr`, `stddiag`) as one `pmix_iof_channel_t`.
pub(crate) fn iof_channels(names: &[String]) -> Result<IofChannel, String> {
    let mut bits = 0u16;
    for n in names {
        bits |= match n.as_str() {
            "stdin" => IofChannel::STDIN_CHANNEL.0,
            "stdout" => IofChannel::STDOUT_CHANNEL.0,
            "stderr" => IofChannel::STDERR_CHANNEL.0,
            "stddiag" => IofChannel::STDDIAG_CHANNEL.0,
            other => return Err(format!("field `channels`: no channel is named {other}")),
        };
    }
    Ok(IofChannel(bits))
}
