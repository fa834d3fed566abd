//! The server APIs a host calls (v5.0 chapter 16 and §17.2), as steps of a node's server
//! (`proc = "server:NODE"`): a step's call resolved ([`ServerCall`]), and how this crate's
//! [`Server`] runs them ([`run_rust`]). The library side is [`crate::ffi::run_server`].
//!
//! Like the client calls of [`crate::api`], a server step travels to a target's node process
//! as the vector wrote it and is resolved there, so both sides read a vector the same way.

use pmix::model::{DataRange, DataType, Info, IofChannel, Nspace, Proc, Rank, Status, Value, attr};
use pmix::server::Server;

use crate::api::ApiOutput;
use crate::vector::{Call, InfoSpec, TargetSpec};

/// A server call resolved against the vector's job.
#[derive(Clone, Debug)]
pub enum ServerCall {
    RegisterNspace {
        nspace: String,
        nlocal: u32,
        info: Vec<Info>,
    },
    DeregisterNspace {
        nspace: String,
    },
    RegisterClient {
        proc: Proc,
    },
    DeregisterClient {
        proc: Proc,
    },
    SetupFork {
        proc: Proc,
    },
    DmodexRequest {
        proc: Proc,
    },
    SetupApplication {
        nspace: String,
        info: Vec<Info>,
    },
    SetupLocalSupport {
        nspace: String,
        info: Vec<Info>,
    },
    IofDeliver {
        source: Proc,
        channel: IofChannel,
        data: Vec<u8>,
        info: Vec<Info>,
    },
    CollectInventory {
        info: Vec<Info>,
    },
    DeliverInventory {
        info: Vec<Info>,
    },
    DefineProcessSet {
        name: String,
        members: Vec<Proc>,
    },
    DeleteProcessSet {
        name: String,
    },
    NotifyEvent {
        status: Status,
        range: DataRange,
        info: Vec<Info>,
    },
    RegisterResources {
        info: Vec<Info>,
    },
    DeregisterResources {
        info: Vec<Info>,
    },
    GenerateRegex {
        input: String,
    },
    GeneratePpn {
        input: String,
    },
    /// The processing units as an hwloc list (`0-1`).
    GenerateLocalityString {
        cpus: String,
    },
    GenerateCpusetString {
        cpus: String,
    },
    RegisterAttributes {
        function: String,
        /// Name, key and declared type of each attribute.
        attributes: Vec<(String, String, DataType)>,
    },
    Finalize,
}

/// Resolve a server step's call for the vector's job `nspace`; an error names the field.
pub fn resolve(call: &Call, nspace: &str) -> Result<ServerCall, String> {
    let infos = |list: &[InfoSpec]| -> Result<Vec<Info>, String> {
        list.iter()
            .map(|i| i.to_info(nspace))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("field `info`: {e}"))
    };
    // A server is no process of the job: `self` has no meaning here, rank 0 stands in.
    let proc = |t: &TargetSpec| t.to_proc(nspace, Rank(0));
    let named = |n: &str| -> Result<String, String> {
        Nspace::new(n).map_err(|e| format!("field `nspace`: {e}"))?;
        Ok(n.to_owned())
    };
    // Absent: the vector's job.
    let ns = |n: &Option<String>| named(n.as_deref().unwrap_or(nspace));
    let cpus = |c: &str| -> Result<String, String> {
        let ok = !c.is_empty()
            && c.chars()
                .all(|ch| ch.is_ascii_digit() || ch == ',' || ch == '-');
        if ok {
            Ok(c.to_owned())
        } else {
            Err(format!(
                "field `cpus`: \"{c}\" is not a list of processing units (`0-1,4`)"
            ))
        }
    };
    Ok(match call {
        Call::ServerRegisterNspace {
            nspace: n,
            nlocal,
            info,
        } => ServerCall::RegisterNspace {
            nspace: named(n)?,
            nlocal: *nlocal,
            info: infos(info)?,
        },
        Call::ServerDeregisterNspace { nspace: n } => {
            ServerCall::DeregisterNspace { nspace: named(n)? }
        }
        Call::ServerRegisterClient { target } => ServerCall::RegisterClient {
            proc: proc(target)?,
        },
        Call::ServerDeregisterClient { target } => ServerCall::DeregisterClient {
            proc: proc(target)?,
        },
        Call::ServerSetupFork { target } => ServerCall::SetupFork {
            proc: proc(target)?,
        },
        Call::ServerDmodexRequest { target } => ServerCall::DmodexRequest {
            proc: proc(target)?,
        },
        Call::ServerSetupApplication { nspace: n, info } => ServerCall::SetupApplication {
            nspace: ns(n)?,
            info: infos(info)?,
        },
        Call::ServerSetupLocalSupport { nspace: n, info } => ServerCall::SetupLocalSupport {
            nspace: ns(n)?,
            info: infos(info)?,
        },
        Call::ServerIofDeliver {
            source,
            channel,
            data,
            info,
        } => ServerCall::IofDeliver {
            source: proc(source)?,
            channel: crate::api::iof_channels(std::slice::from_ref(channel))?,
            data: data.as_bytes().to_vec(),
            info: infos(info)?,
        },
        Call::ServerCollectInventory { info } => {
            ServerCall::CollectInventory { info: infos(info)? }
        }
        Call::ServerDeliverInventory { info } => {
            ServerCall::DeliverInventory { info: infos(info)? }
        }
        Call::ServerDefineProcessSet { name, members } => ServerCall::DefineProcessSet {
            name: name.clone(),
            members: members.iter().map(proc).collect::<Result<_, _>>()?,
        },
        Call::ServerDeleteProcessSet { name } => {
            ServerCall::DeleteProcessSet { name: name.clone() }
        }
        Call::ServerNotifyEvent {
            status,
            range,
            info,
        } => ServerCall::NotifyEvent {
            status: crate::vector::status_named(status)?,
            range: DataRange::from_name(range)
                .ok_or_else(|| format!("field `range`: no range is named {range}"))?,
            info: infos(info)?,
        },
        Call::ServerRegisterResources { info } => {
            ServerCall::RegisterResources { info: infos(info)? }
        }
        Call::ServerDeregisterResources { info } => {
            ServerCall::DeregisterResources { info: infos(info)? }
        }
        Call::GenerateRegex { input } => ServerCall::GenerateRegex {
            input: input.clone(),
        },
        Call::GeneratePpn { input } => ServerCall::GeneratePpn {
            input: input.clone(),
        },
        Call::ServerGenerateLocalityString { cpus: c } => {
            ServerCall::GenerateLocalityString { cpus: cpus(c)? }
        }
        Call::ServerGenerateCpusetString { cpus: c } => {
            ServerCall::GenerateCpusetString { cpus: cpus(c)? }
        }
        Call::RegisterAttributes {
            function,
            attributes,
        } => ServerCall::RegisterAttributes {
            function: function.clone(),
            attributes: attributes
                .iter()
                .map(|a| {
                    let d = attr::by_name(a)
                        .ok_or_else(|| format!("field `attributes`: no attribute is named {a}"))?;
                    Ok((
                        d.name.to_owned(),
                        d.openpmix_key.unwrap_or(d.key).to_owned(),
                        d.data_type.unwrap_or(DataType::UNDEF),
                    ))
                })
                .collect::<Result<_, String>>()?,
        },
        Call::ServerFinalize => ServerCall::Finalize,
        other => return Err(format!("`{}` is not a call of a server", other.name())),
    })
}

/// Resolve a server step's call and run it on this crate's server.
pub async fn run_step(server: &Server, call: &Call, nspace: &str) -> Result<ApiOutput, String> {
    Ok(run_rust(server, resolve(call, nspace)?).await)
}

/// Run `call` on this crate's server. What the crate lacks (I/O forwarding, inventory) is
/// `no such call`: the harness never answers for it.
pub async fn run_rust(server: &Server, call: ServerCall) -> ApiOutput {
    let unit = |r: Result<(), pmix::Error>| {
        ApiOutput::status(r.err().map_or(Status::SUCCESS, |e| e.status()))
    };
    let nspace = |n: &str| Nspace::new(n).map_err(|_| Status::ERR_BAD_PARAM);
    match call {
        ServerCall::RegisterNspace {
            nspace: n, info, ..
        } => match nspace(&n) {
            Ok(n) => unit(server.register_nspace(n, info).await),
            Err(s) => ApiOutput::status(s),
        },
        ServerCall::DeregisterNspace { nspace: n } => match nspace(&n) {
            Ok(n) => unit(server.deregister_nspace(n).await),
            Err(s) => ApiOutput::status(s),
        },
        ServerCall::RegisterClient { proc } => {
            let (uid, gid) = pmix::transport::uid_gid();
            unit(server.register_client(proc, uid, gid).await)
        }
        ServerCall::DeregisterClient { proc } => unit(server.deregister_client(proc).await),
        ServerCall::SetupFork { proc } => ApiOutput::results(
            server
                .setup_fork(&proc)
                .into_iter()
                .map(|(k, v)| Info::with_key(&k, v).map_err(|_| Status::ERR_BAD_PARAM))
                .collect(),
        ),
        ServerCall::DmodexRequest { proc } => ApiOutput::value(
            server
                .dmodex_request(proc, Vec::new())
                .await
                .map(|d| Value::ByteObject(d.into()))
                .map_err(Status::from),
        ),
        ServerCall::SetupApplication { nspace: n, info } => match nspace(&n) {
            Ok(n) => ApiOutput::results(server.setup_application(&n, &info).map_err(Status::from)),
            Err(s) => ApiOutput::status(s),
        },
        ServerCall::SetupLocalSupport { nspace: n, info } => match nspace(&n) {
            Ok(n) => ApiOutput::status(
                server
                    .setup_local_support(&n, &info)
                    .err()
                    .map_or(Status::SUCCESS, |e| e.status()),
            ),
            Err(s) => ApiOutput::status(s),
        },
        ServerCall::GenerateRegex { input } => {
            ApiOutput::value(pmix::model::regex::generate_regex(&input).map(Value::string))
        }
        ServerCall::GeneratePpn { input } => {
            ApiOutput::value(pmix::model::regex::generate_ppn(&input).map(Value::string))
        }
        ServerCall::RegisterAttributes {
            function,
            attributes,
        } => {
            let attrs = attributes
                .into_iter()
                .map(|(name, key, data_type)| pmix::model::RegAttr {
                    name: Some(name),
                    string: Some(key),
                    data_type,
                    description: Vec::new(),
                })
                .collect();
            ApiOutput::status(
                server
                    .register_attributes(&function, attrs)
                    .await
                    .err()
                    .map_or(Status::SUCCESS, |e| e.status()),
            )
        }
        ServerCall::Finalize => {
            server.shutdown();
            ApiOutput::status(Status::SUCCESS)
        }
        ServerCall::DefineProcessSet { name, members } => ApiOutput::status(
            server
                .define_process_set(&name, members)
                .await
                .err()
                .map_or(Status::SUCCESS, |e| e.status()),
        ),
        ServerCall::DeleteProcessSet { name } => ApiOutput::status(
            server
                .delete_process_set(&name)
                .await
                .err()
                .map_or(Status::SUCCESS, |e| e.status()),
        ),
        ServerCall::NotifyEvent {
            status,
            range,
            info,
        } => unit(server.notify_event(status, None, range, info).await),
        ServerCall::IofDeliver {
            source,
            channel,
            data,
            info,
        } => unit(server.iof_deliver(source, channel, data, info).await),
        ServerCall::CollectInventory { info } => {
            ApiOutput::results(Ok(server.collect_inventory(&info)))
        }
        ServerCall::DeliverInventory { info } => unit(server.deliver_inventory(info, &[]).await),
        ServerCall::RegisterResources { info } => unit(server.register_resources(info).await),
        ServerCall::DeregisterResources { info } => unit(server.deregister_resources(info).await),
        ServerCall::GenerateLocalityString { cpus } => ApiOutput::value(
            server
                .generate_locality_string(&hwloc_cpus(cpus))
                .map(Value::string)
                .map_err(Status::from),
        ),
        ServerCall::GenerateCpusetString { cpus } => ApiOutput::value(
            server
                .generate_cpuset_string(&hwloc_cpus(cpus))
                .map(Value::string)
                .map_err(Status::from),
        ),
    }
}

/// An hwloc cpuset of the processing units `cpus` (`0-1`).
fn hwloc_cpus(cpus: String) -> pmix::model::Cpuset {
    pmix::model::Cpuset {
        source: Some("hwloc".into()),
        bitmap: Some(cpus),
    }
}
