//! What a vector's nodes start from: each server's initialisation information, the job's
//! registration, and the servers of the Rust target.

use std::path::Path;
use std::sync::Arc;

use pmix::model::{DataArray, DataType, Info, Proc, Rank, Value, attr};
use pmix::server::Server;

use crate::step::{Problem, lock};
use crate::vector::Vector;

use super::{ClusterHost, NodeServer, Shared};

/// What the host passes `node`'s `PMIx_server_init`: the harness's own server identity
/// (`vserver-NODE`, rank 0), its temporary directory `tmpdir` as both the server's and the
/// system's, the node's name as `PMIX_HOSTNAME`, then the vector's `setup.server_info` (a key
/// given there replaces the harness's).
pub fn server_init_info(v: &Vector, node: &str, tmpdir: &Path) -> Result<Vec<Info>, String> {
    let tmpdir = tmpdir.display().to_string();
    let mut out = vec![
        info(
            attr::SERVER_TMPDIR.wire_key(),
            Value::string(tmpdir.clone()),
        ),
        info(attr::SYSTEM_TMPDIR.wire_key(), Value::string(tmpdir)),
        info(
            attr::SERVER_NSPACE.wire_key(),
            Value::string(format!("vserver-{node}")),
        ),
        info(attr::SERVER_RANK.wire_key(), Value::Rank(Rank(0))),
        info(attr::HOSTNAME.wire_key(), Value::string(node.to_owned())),
    ];
    for i in &v.setup.server_info {
        let i = i.to_info(&v.setup.nspace)?;
        out.retain(|o| o.key != i.key);
        out.push(i);
    }
    Ok(crate::ablation::harness_infos(v, out))
}

/// Start this crate's server for every node of the vector, in this process, with the job and
/// its ranks registered, and make them the cluster's node servers. `dir` gives a node's
/// temporary directory; `tcp` makes each listen on TCP loopback (what OpenPMIx clients use).
pub async fn start_rust_servers(
    v: &Vector,
    shared: &Arc<Shared>,
    dir: impl Fn(&str) -> Result<std::path::PathBuf, String>,
    tcp: bool,
) -> Result<Vec<Arc<Server>>, Problem> {
    use pmix::model::Nspace;
    use pmix::server::ServerConfig;
    let info = registration(v)?;
    let nspace = Nspace::new(&v.setup.nspace).map_err(|e| e.to_string())?;
    let mut servers = Vec::new();
    for (i, node) in v.setup.nodes.iter().enumerate() {
        let init = server_init_info(v, &node.name, &dir(&node.name)?)?;
        let mut config = ServerConfig::from_info(&init).map_err(|(status, e)| {
            Problem::Refused(format!("server of {} ({status:?}): {e}", node.name))
        })?;
        config.tcp = tcp;
        config.unix_socket = false;
        let host = ClusterHost {
            node: i,
            shared: shared.clone(),
        };
        let server = Server::start(config, host)
            .await
            .map_err(|e| format!("server of {}: {e}", node.name))?;
        server
            .register_nspace(nspace.clone(), info.clone())
            .await
            .map_err(|e| Problem::Refused(format!("register_nspace on {}: {e}", node.name)))?;
        for r in &node.ranks {
            let (uid, gid) = v.credentials(*r);
            server
                .register_client(Proc::new(nspace.clone(), Rank(*r)), uid, gid)
                .await
                .map_err(|e| Problem::Refused(format!("register_client: {e}")))?;
        }
        for (other, info) in v.jobs_on(&node.name)? {
            let other = Nspace::new(&other).map_err(|e| e.to_string())?;
            server.register_nspace(other, info).await.map_err(|e| {
                Problem::Refused(format!(
                    "register_nspace of another job on {}: {e}",
                    node.name
                ))
            })?;
        }
        servers.push(Arc::new(server));
    }
    *lock(&shared.servers) = servers
        .iter()
        .map(|s| Arc::new(s.clone()) as Arc<dyn NodeServer>)
        .collect();
    Ok(servers)
}

// ---- what the host registers ----

fn info(key: &str, value: Value) -> Info {
    Info::with_key(key, value).unwrap_or_else(|_| Info::new(attr::JOB_SIZE, 0u32))
}

fn array(infos: Vec<Info>) -> Value {
    let elements = infos
        .into_iter()
        .map(|i| Value::Info(Box::new(i)))
        .collect();
    match DataArray::new(DataType::INFO, elements) {
        Ok(a) => Value::DataArray(Box::new(a)),
        Err(_) => Value::Bool(false),
    }
}

/// The standard information (when asked for) and the vector's own, in that order.
pub fn registration(v: &Vector) -> Result<Vec<Info>, String> {
    let mut out = Vec::new();
    if v.setup.standard_info {
        out.extend(standard_info(v));
    }
    for i in &v.setup.info {
        out.push(i.to_info(&v.setup.nspace)?);
    }
    Ok(crate::ablation::harness_infos(v, out))
}

/// What a launcher registers for a job laid out as the vector's nodes: one application.
fn standard_info(v: &Vector) -> Vec<Info> {
    let ranks = v.ranks();
    let n = u32::try_from(ranks.len()).unwrap_or(u32::MAX);
    let hosts: Vec<&str> = v.setup.nodes.iter().map(|n| n.name.as_str()).collect();
    let num_nodes = u32::try_from(hosts.len()).unwrap_or(u32::MAX);
    let mut out = vec![
        info(
            attr::SESSION_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::SESSION_ID.wire_key(), Value::Uint32(1)),
                info(attr::UNIV_SIZE.wire_key(), Value::Uint32(n)),
            ]),
        ),
        info(
            attr::JOBID.wire_key(),
            Value::string(v.setup.nspace.clone()),
        ),
        info(attr::JOB_SIZE.wire_key(), Value::Uint32(n)),
        info(attr::MAX_PROCS.wire_key(), Value::Uint32(n)),
        info(attr::JOB_NUM_APPS.wire_key(), Value::Uint32(1)),
        info(attr::NUM_NODES.wire_key(), Value::Uint32(num_nodes)),
        info(attr::NODE_LIST.wire_key(), Value::string(hosts.join(","))),
        info(
            attr::APP_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::APPNUM.wire_key(), Value::Uint32(0)),
                info(attr::APP_SIZE.wire_key(), Value::Uint32(n)),
                info(attr::APPLDR.wire_key(), Value::Rank(Rank(0))),
            ]),
        ),
    ];
    for (id, node) in v.setup.nodes.iter().enumerate() {
        let mut local = node.ranks.clone();
        local.sort_unstable();
        let peers: Vec<String> = local.iter().map(u32::to_string).collect();
        let size = u32::try_from(local.len()).unwrap_or(u32::MAX);
        let nodeid = u32::try_from(id).unwrap_or(u32::MAX);
        out.push(info(
            attr::NODE_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::HOSTNAME.wire_key(), Value::string(node.name.clone())),
                info(attr::NODEID.wire_key(), Value::Uint32(nodeid)),
                info(attr::NODE_SIZE.wire_key(), Value::Uint32(size)),
                info(attr::LOCAL_PEERS.wire_key(), Value::string(peers.join(","))),
                info(attr::LOCAL_SIZE.wire_key(), Value::Uint32(size)),
                info(
                    attr::LOCALLDR.wire_key(),
                    Value::Rank(Rank(local.first().copied().unwrap_or(0))),
                ),
            ]),
        ));
        for (place, r) in local.iter().enumerate() {
            let place = u16::try_from(place).unwrap_or(u16::MAX);
            out.push(info(
                attr::PROC_INFO_ARRAY.wire_key(),
                array(vec![
                    info(attr::RANK.wire_key(), Value::Rank(Rank(*r))),
                    info(attr::LOCAL_RANK.wire_key(), Value::Uint16(place)),
                    info(attr::NODE_RANK.wire_key(), Value::Uint16(place)),
                    info(attr::APPNUM.wire_key(), Value::Uint32(0)),
                    info(attr::APP_RANK.wire_key(), Value::Rank(Rank(*r))),
                    info(attr::GLOBAL_RANK.wire_key(), Value::Rank(Rank(*r))),
                    info(attr::HOSTNAME.wire_key(), Value::string(node.name.clone())),
                    info(attr::NODEID.wire_key(), Value::Uint32(nodeid)),
                ]),
            ));
        }
    }
    out
}
