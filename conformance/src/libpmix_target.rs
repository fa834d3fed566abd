//! The `libpmix.so` target: a vector run on any implementation of the standard's C API.
//!
//! A PMIx library holds one server or one client per process, so the harness runs every part
//! of the job as a child process of its own, each loading the same library ([`crate::ffi`]):
//!
//! ```text
//!   harness (this process) ── the cluster host: fences, direct modex, publish table ──┐
//!     │  JSON lines on stdin/stdout                                                    │
//!     ├── node server per node: PMIx_server_init, register_nspace/client, setup_fork,  │
//!     │     host callbacks forwarded to the harness ◀──────────────────────────────────┘
//!     └── client per rank: PMIx_Init with setup_fork's environment, then one API call per
//!           step line, one result line back
//! ```
//!
//! Values, infos and lookup data travel between the processes packed by this project's codec
//! (non-described buffers); inside each child they cross into C through the library's own
//! `PMIx_Data_unpack`/`PMIx_Data_pack`. Every child is killed when the run ends or its time
//! runs out, so a hung or crashed library fails the vector, never the run.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use pmix::model::{Proc, Rank, Status, Value};
use tokio::process::Command;

use crate::cluster::{Shared, start_rust_servers};
use crate::outcome::has_expected_upcalls;
use crate::prepare::{Prepared, prepare};
use crate::step::{Observed, Problem, Side, StepResult, lock};
use crate::upcall_log::HostUpcall;
use crate::vector::{Call, Saved, Step, Vector, node_presets, record_saved, run_presets};

pub use crate::pipes::*;

mod children;

use children::{Children, ClientProc, Envs, NodeProc, c_nodes, observed};
pub(crate) use children::{TempDir, ToolProcess};

// ---- the harness ----

/// What the library calls itself, and the target name derived from it ("OpenPMIx 4.2.2 ..."
/// gives `openpmix-4.2`, "pmix-rs 0.1.0 strict (...)" `pmix-rs-0.1-strict`).
pub async fn identify(exe: &Path, lib: &str) -> Result<(String, String), String> {
    let out = Command::new(exe)
        .args(["__libpmix-version", lib])
        .stderr(Stdio::null())
        .output()
        .await
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || version.is_empty() {
        return Err(format!("{lib}: cannot be loaded as a PMIx library"));
    }
    Ok((target_name(&version), version))
}

/// The implementation's name, its major and minor release, and the words between the
/// release and the parenthesis (a library's mode), joined by dashes, in lower case.
fn target_name(version: &str) -> String {
    let head = version.split_once('(').map_or(version, |(head, _)| head);
    let mut words = head.split_whitespace();
    let mut parts = vec![words.next().unwrap_or("libpmix").to_lowercase()];
    if let Some(release) = words.next() {
        let major_minor: Vec<&str> = release.split('.').take(2).collect();
        if major_minor.len() == 2 {
            parts.push(major_minor.join("."));
        }
    }
    parts.extend(words.map(str::to_lowercase));
    parts.join("-")
}

/// Run the vector's steps with `servers` and `clients` (a library on either side, this crate
/// on at most one), calling `check` after each (see [`crate::rust_target::run`]). `exe` is
/// the conformance binary, which hosts the children.
pub async fn run<F>(
    v: &Vector,
    exe: &Path,
    servers: &Side,
    clients: &Side,
    mut check: F,
) -> Result<(), Problem>
where
    F: FnMut(usize, &Step, &StepResult, &[HostUpcall]) -> bool,
{
    if let Some(r) = v.setup.other_user.first() {
        // Its ranks are processes of the harness's user, and a library server takes their
        // credentials from the kernel.
        return Err(Problem::Refused(format!(
            "rank {r} as another user (the ranks are the harness's processes)"
        )));
    }
    let tmp = TempDir::new()?;
    let shared = match servers {
        Side::Library(_) => Arc::new(Shared::new(v).with_security_service()),
        Side::Rust => Arc::new(Shared::new(v)),
    };
    let mut nodes = Vec::new();
    let mut rust_servers = Vec::new();
    let envs = match servers {
        Side::Library(lib) => {
            let rust_clients = *clients == Side::Rust;
            c_nodes(v, exe, lib, rust_clients, &tmp.0, &shared, &mut nodes).await?
        }
        Side::Rust => rust_nodes(v, &tmp.0, &shared, &mut rust_servers).await?,
    };
    let client_args: Vec<String> = match clients {
        Side::Library(lib) => vec!["__libpmix-client".into(), lib.clone()],
        Side::Rust => vec!["__rust-client".into()],
    };
    let mut procs: BTreeMap<u32, ClientProc> = BTreeMap::new();
    let children = Arc::new(Children::default());
    for r in v.started() {
        let env = envs.get(&r).ok_or(format!("no environment for rank {r}"))?;
        let c = ClientProc::start(exe, &client_args, r, env).await?;
        lock(&children.0).insert(r, c.child.clone());
        procs.insert(r, c);
    }
    shared.set_ender(children.clone());

    let mut saved = presets(v, &envs, &rust_servers, &nodes, &tmp.0);
    let mut tool = ToolProcess::default();
    // Where the host's log stood when each started call began.
    let mut started_at: BTreeMap<String, usize> = BTreeMap::new();
    for (n, written) in v.steps.iter().enumerate() {
        let step = &written.with_saved(&saved)?;
        if step.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(step.delay_ms)).await;
        }
        let callers = v.callers(step);
        let mut mark = shared.upcalls.mark();
        if let Some(h) = step.start.clone().or_else(|| match &step.call {
            Call::Get { handle, .. } => handle.clone(),
            _ => None,
        }) {
            started_at.insert(h, mark);
        }
        if let Call::Await { handle } = &step.call {
            mark = started_at.remove(handle).unwrap_or(mark);
        }
        let result = match &step.call {
            call if v.by_tool(step) => {
                // The tool is a process of its own, on the clients' side.
                let args = match clients {
                    Side::Rust => vec!["__rust-tool".to_owned()],
                    Side::Library(lib) => vec!["__libpmix-tool".to_owned(), lib.clone()],
                };
                let got = tool.call(exe, args, call, &v.setup.nspace).await?;
                callers.iter().map(|c| (*c, got.clone())).collect()
            }
            _ if v.server_of(step).is_some() => {
                let i = v.server_of(step).unwrap_or(0);
                let got: Observed = match (nodes.get(i), rust_servers.get(i)) {
                    (Some(node), _) => observed(
                        node.handle
                            .call(step.call.clone(), v.setup.nspace.clone())
                            .await?,
                    )?,
                    (None, Some(server)) => {
                        crate::server_api::run_step(server, &step.call, &v.setup.nspace).await?
                    }
                    (None, None) => return Err(format!("no server for node #{i}").into()),
                };
                callers.iter().map(|c| (*c, got.clone())).collect()
            }
            Call::Init => {
                let r = callers.first().copied().unwrap_or(0);
                let env = envs.get(&r).ok_or(format!("no environment for rank {r}"))?;
                let o = match ClientProc::launch(exe, &client_args, r, env).await? {
                    Ok(c) => {
                        lock(&children.0).insert(r, c.child.clone());
                        procs.insert(r, c);
                        Observed::status(Status::SUCCESS)
                    }
                    Err(s) => Observed::status(s),
                };
                vec![(r, o)]
            }
            _ if step.start.is_some() => {
                let r = callers.first().copied().unwrap_or(0);
                let c = procs.get(&r).ok_or(format!("rank {r} has vanished"))?;
                let call = ClientCall::Start {
                    handle: step.start.clone().unwrap_or_default(),
                    call: Box::new(client_call(v, step, r)?),
                };
                c.judged_call(call).await?;
                Vec::new()
            }
            Call::Vanish => {
                for r in &callers {
                    if let Some(mut c) = procs.remove(r) {
                        c.kill().await;
                    }
                    shared.rank_gone(*r);
                }
                // Let the servers see the connections close.
                tokio::time::sleep(Duration::from_millis(100)).await;
                Vec::new()
            }
            Call::Await { handle } => {
                let r = callers.first().copied().unwrap_or(0);
                let c = procs.get(&r).ok_or(format!("rank {r} has vanished"))?;
                let res = c
                    .judged_call(ClientCall::Await {
                        handle: handle.clone(),
                    })
                    .await?;
                vec![(r, observed(res)?)]
            }
            Call::Get {
                handle: Some(h), ..
            } => {
                let r = callers.first().copied().unwrap_or(0);
                let c = procs.get(&r).ok_or(format!("rank {r} has vanished"))?;
                let mut call = to_call(prepare(v, step, r)?)?;
                if let ClientCall::Get { handle, .. } = &mut call {
                    *handle = Some(h.clone());
                }
                c.judged_call(call).await?;
                Vec::new()
            }
            _ => {
                let mut pending = Vec::new();
                for r in &callers {
                    let c = procs.get(r).ok_or(format!("rank {r} has vanished"))?;
                    let call = client_call(v, step, *r)?;
                    let tx = c.tx.clone();
                    pending.push(tokio::spawn(
                        async move { ClientProc::call_on(&tx, call).await },
                    ));
                }
                let mut out = Vec::new();
                for (r, p) in callers.iter().zip(pending) {
                    let res = match p.await.map_err(|e| e.to_string())? {
                        Ok(res) => res,
                        Err(e) => match procs.get(r) {
                            Some(c) => return Err(c.problem(e).await),
                            None => return Err(e.into()),
                        },
                    };
                    out.push((*r, observed(res)?));
                }
                out
            }
        };
        record_saved(step, &result, &mut saved);
        let me = callers.first().copied().unwrap_or(0);
        let upcalls = (shared.upcalls)
            .window(mark, has_expected_upcalls(step, &v.setup.nspace, me))
            .await;
        if !check(n, step, &result, &upcalls) {
            break;
        }
    }
    for (_, mut c) in procs.into_iter() {
        c.kill().await;
    }
    tool.kill().await;
    for mut n in nodes {
        n.kill().await;
    }
    for s in rust_servers {
        s.shutdown();
    }
    Ok(())
}

/// Start this crate's server per node, in this process, listening on TCP loopback (what
/// OpenPMIx clients use); returns every rank's environment from `setup_fork`.
async fn rust_nodes(
    v: &Vector,
    tmp: &Path,
    shared: &Arc<Shared>,
    servers: &mut Vec<Arc<pmix::server::Server>>,
) -> Result<Envs, Problem> {
    let dir = |node: &str| {
        let d = tmp.join(node);
        std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        Ok(d)
    };
    *servers = start_rust_servers(v, shared, dir, true).await?;
    let mut envs = Envs::new();
    for (server, node) in servers.iter().zip(&v.setup.nodes) {
        for r in &node.ranks {
            let p = Proc::try_new(&v.setup.nspace, Rank(*r)).map_err(|e| e.to_string())?;
            envs.insert(*r, server.setup_fork(&p).into_iter().collect());
        }
    }
    Ok(envs)
}

/// What is saved before the first step: the run's values ([`run_presets`]) and, for each
/// node ([`node_presets`]), the URI of its server, this crate's or what a library server's
/// `setup_fork` gave the node's first rank (the newest of OpenPMIx's `PMIX_SERVER_URI*`
/// variables; empty when the node has no rank to ask), the node's temporary directory, and
/// the pid of the process that runs the server.
fn presets(
    v: &Vector,
    envs: &Envs,
    rust_servers: &[Arc<pmix::server::Server>],
    nodes: &[NodeProc],
    tmp: &Path,
) -> Saved {
    let mut out = run_presets();
    for (i, node) in v.setup.nodes.iter().enumerate() {
        let from_env = || {
            let env = envs.get(node.ranks.first()?)?;
            [
                "PMIX_SERVER_URI41",
                "PMIX_SERVER_URI4",
                "PMIX_SERVER_URI3",
                "PMIX_SERVER_URI2",
            ]
            .iter()
            .find_map(|k| env.get(*k).cloned())
        };
        let (uri, pid) = match rust_servers.get(i) {
            Some(s) => (s.uri(), Some(std::process::id())),
            None => (from_env(), nodes.get(i).and_then(|n| n.pid)),
        };
        out.extend(node_presets(
            &node.name,
            &uri.unwrap_or_default(),
            &tmp.join(&node.name).display().to_string(),
            pid.unwrap_or(0),
        ));
    }
    out
}

fn to_call(p: Prepared) -> Result<ClientCall, String> {
    let value = |v: &Value| pack_list(std::slice::from_ref(v));
    Ok(match p {
        Prepared::Put(scope, key, v) => ClientCall::Put {
            scope: scope.0,
            key,
            value: value(&v),
        },
        Prepared::StoreInternal(target, key, v) => ClientCall::StoreInternal {
            target: proc_id(&target),
            key,
            value: value(&v),
        },
        Prepared::Commit => ClientCall::Commit,
        Prepared::Fence(procs, info) => ClientCall::Fence {
            procs: procs.iter().map(proc_id).collect(),
            info: pack_list(&info),
        },
        Prepared::Get(target, key, info, no_storage) => ClientCall::Get {
            target: target.as_ref().map(proc_id),
            key,
            info: pack_list(&info),
            handle: None,
            no_storage,
        },
        Prepared::Publish(info) => ClientCall::Publish {
            info: pack_list(&info),
        },
        Prepared::Lookup(keys, info) => ClientCall::Lookup {
            keys,
            info: pack_list(&info),
        },
        Prepared::Unpublish(keys, info) => ClientCall::Unpublish {
            keys,
            info: pack_list(&info),
        },
        Prepared::Finalize => ClientCall::Finalize,
        Prepared::Api(_) => return Err("an API call travels as its step".into()),
    })
}

/// The message for `step`'s call by `rank`.
fn client_call(v: &Vector, step: &Step, rank: u32) -> Result<ClientCall, String> {
    let nspace = &v.setup.nspace;
    if crate::api::resolve(&step.call, nspace, rank)?.is_some() {
        return Ok(ClientCall::Api {
            call: step.call.clone(),
            nspace: nspace.clone(),
            rank,
        });
    }
    to_call(prepare(v, step, rank)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_names_come_from_the_version_string() {
        assert_eq!(
            target_name(
                "OpenPMIx 4.2.2rc2 (PMIx Standard: 4.2, Stable ABI: 0.0, Provisional ABI: 0.0)"
            ),
            "openpmix-4.2"
        );
        assert_eq!(target_name("Other"), "other");
        assert_eq!(
            target_name("pmix-rs 0.1.0 (PMIx Standard 5.0, wire-compatible with OpenPMIx 4.2)"),
            "pmix-rs-0.1"
        );
        assert_eq!(
            target_name(
                "pmix-rs 0.1.0 strict (PMIx Standard 5.0, wire-compatible with OpenPMIx 4.2)"
            ),
            "pmix-rs-0.1-strict"
        );
    }
}
