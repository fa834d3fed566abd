//! The child processes of the `libpmix.so` target, seen from the harness: starting a node's
//! server, a rank's client and the vector's tool, the JSON lines to and from each, and the
//! host upcalls a node's server forwards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pmix::events::Event;
use pmix::model::{Info, Nspace, PData, Proc, Status, Value};
use pmix::server::{HostCall, HostResult};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};

use crate::api::SeenEvent;
use crate::cluster::{ClusterHost, ModexFuture, NodeServer, Shared, StatusFuture, registration};
use crate::pipes::{
    ClientCall, ClientResult, FromNode, ToNode, from_id, pack_list, proc_id, unpack_list,
};
use crate::step::{Observed, Problem, lock};
use crate::vector::{Call, Vector};

/// Start a library server process per node and set each up; returns every rank's environment.
pub(super) async fn c_nodes(
    v: &Vector,
    exe: &Path,
    lib: &str,
    rust_clients: bool,
    tmp: &Path,
    shared: &Arc<Shared>,
    nodes: &mut Vec<NodeProc>,
) -> Result<Envs, Problem> {
    let mut node_servers: Vec<Arc<dyn NodeServer>> = Vec::new();
    for i in 0..v.setup.nodes.len() {
        let name = &v.setup.nodes[i].name;
        let n = NodeProc::start(exe, lib, (i, name), shared.clone(), rust_clients, tmp)?;
        node_servers.push(Arc::new(n.handle.clone()));
        nodes.push(n);
    }
    *lock(&shared.servers) = node_servers;
    let info = pack_list(&registration(v)?);
    let (uid, gid) = pmix::transport::uid_gid();
    let mut envs = Envs::new();
    for (n, spec) in nodes.iter_mut().zip(&v.setup.nodes) {
        let dir = tmp.join(&spec.name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        n.handle.send(&ToNode::Setup {
            nspace: v.setup.nspace.clone(),
            info: info.clone(),
            ranks: spec.ranks.clone(),
            uid,
            gid,
            server_info: pack_list(&crate::cluster::server_init_info(v, &spec.name, &dir)?),
            caps: (
                v.setup.host.fence,
                v.setup.host.direct_modex,
                v.setup.host.publish,
            ),
            jobs: v
                .jobs_on(&spec.name)?
                .into_iter()
                .map(|(ns, info)| (ns, pack_list(&info)))
                .collect(),
        });
        let ready = n
            .ready
            .take()
            .ok_or("node started twice")?
            .await
            .map_err(|_| format!("the server of {} exited during setup", spec.name))?;
        if ready.0 != 0 {
            return Err(Problem::Refused(format!(
                "the server of {}: {} answered {}",
                spec.name,
                ready.1,
                crate::outcome::status_word(Status(ready.0))
            )));
        }
        envs.extend(ready.2);
    }
    Ok(envs)
}

/// The environment of each rank.
pub(super) type Envs = BTreeMap<u32, BTreeMap<String, String>>;

pub(super) fn observed(r: ClientResult) -> Result<Observed, String> {
    let value = match r.value {
        Some(b) => unpack_list::<Value>(&b)?.pop(),
        None => None,
    };
    let data = match r.data {
        Some(b) => unpack_list::<PData>(&b)?,
        None => Vec::new(),
    };
    let results = match r.results {
        Some(b) => unpack_list::<Info>(&b)?,
        None => Vec::new(),
    };
    let events = r
        .events
        .iter()
        .map(|e| {
            let infos = |b: &Option<Vec<u8>>| match b {
                Some(b) => unpack_list::<Info>(b),
                None => Ok(Vec::new()),
            };
            Ok(SeenEvent {
                status: Status(e.status),
                source: e
                    .source
                    .as_ref()
                    .map(from_id)
                    .transpose()
                    .map_err(|s| format!("event source: {s:?}"))?,
                info: infos(&e.info)?,
                results: infos(&e.results)?,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(Observed {
        status: Status(r.status),
        value,
        data,
        results,
        events,
        no_such_call: r.no_such_call,
    })
}

/// The vector's tool: a process of its own (`conformance __libpmix-tool LIB` or
/// `__rust-tool`), started at its first step.
#[derive(Default)]
pub(crate) struct ToolProcess(Option<ClientProc>);

impl ToolProcess {
    /// Run a tool step's `call` in the tool process, started with `args` if it is not yet.
    pub(crate) async fn call(
        &mut self,
        exe: &Path,
        args: Vec<String>,
        call: &Call,
        nspace: &str,
    ) -> Result<Observed, Problem> {
        if self.0.is_none() {
            let env = match call {
                Call::ToolInit { env, .. } => env.clone(),
                _ => BTreeMap::new(),
            };
            let mut tool = ClientProc::start(exe, &args, 0, &env).await?;
            tool.who = "the tool".to_owned();
            self.0 = Some(tool);
        }
        let t = self.0.as_ref().ok_or("no tool process")?;
        let msg = ClientCall::Tool {
            call: call.clone(),
            nspace: nspace.to_owned(),
        };
        Ok(observed(t.judged_call(msg).await?)?)
    }

    pub(crate) async fn kill(&mut self) {
        if let Some(t) = self.0.as_mut() {
            t.kill().await;
        }
    }
}

/// A directory for the servers' rendezvous files, removed with the run.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new() -> Result<TempDir, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "pmix-conformance-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn child_stderr() -> Stdio {
    if std::env::var_os("PMIX_CONFORMANCE_DEBUG").is_some() {
        Stdio::inherit()
    } else {
        Stdio::null()
    }
}

/// Where a node's answers go while the harness waits for them.
type Setup = (i32, String, BTreeMap<u32, BTreeMap<String, String>>);

/// The harness's side of one node's server process.
pub(super) struct NodeProc {
    pub(super) child: Arc<tokio::sync::Mutex<Child>>,
    /// The server process's id, as it started (presets name it).
    pub(super) pid: Option<u32>,
    pub(super) handle: NodeHandle,
    ready: Option<oneshot::Receiver<Setup>>,
}

/// Where a direct-modex answer from a node goes.
type ModexWaiter = oneshot::Sender<Result<Vec<u8>, Status>>;

/// Where the status of an event raised at a node goes.
type DoneWaiter = oneshot::Sender<Result<(), Status>>;

/// Sending to a node and awaiting its direct-modex answers; cheap to clone.
#[derive(Clone)]
pub(super) struct NodeHandle {
    tx: mpsc::UnboundedSender<String>,
    modex: Arc<Mutex<BTreeMap<u64, ModexWaiter>>>,
    /// Events raised at the node, waiting for their status.
    done: Arc<Mutex<BTreeMap<u64, DoneWaiter>>>,
    /// Server steps waiting for their results.
    calls: Arc<Mutex<BTreeMap<u64, oneshot::Sender<ClientResult>>>>,
    next: Arc<AtomicU64>,
    /// The node's name, as a crash names its server.
    name: String,
    child: Arc<tokio::sync::Mutex<Child>>,
}

impl NodeHandle {
    fn send(&self, msg: &ToNode) {
        if let Ok(line) = serde_json::to_string(msg) {
            let _ = self.tx.send(line);
        }
    }

    /// A fresh id, and where its [`FromNode::Done`] will arrive.
    fn await_done(&self) -> (u64, oneshot::Receiver<Result<(), Status>>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.done).insert(id, tx);
        (id, rx)
    }

    /// Make a server step's call on the node and wait for its result: a crash when its
    /// server process died under the call.
    pub(super) async fn call(&self, call: Call, nspace: String) -> Result<ClientResult, Problem> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.calls).insert(id, tx);
        self.send(&ToNode::Call { id, call, nspace });
        match rx.await {
            Ok(r) => Ok(r),
            Err(_) => Err(Problem::Crashed(format!(
                "the server of {} {}",
                self.name,
                how_it_ended(&self.child).await
            ))),
        }
    }
}

impl NodeServer for NodeHandle {
    fn dmodex(&self, proc: Proc, info: Vec<Info>) -> ModexFuture {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.modex).insert(id, tx);
        self.send(&ToNode::Dmodex {
            id,
            proc: proc_id(&proc),
            info: pack_list(&info),
        });
        Box::pin(async move { rx.await.unwrap_or(Err(Status::ERR_LOST_CONNECTION)) })
    }

    /// Made by the node with `PMIx_server_register_nspace`, where the library allows it (see
    /// [`crate::libpmix_child`]).
    fn register_job(&self, nspace: Nspace, info: Vec<Info>) -> StatusFuture {
        let (id, rx) = self.await_done();
        self.send(&ToNode::RegisterJob {
            id,
            nspace: nspace.as_str().to_owned(),
            info: pack_list(&info),
        });
        Box::pin(async move { rx.await.unwrap_or(Err(Status::ERR_LOST_CONNECTION)) })
    }

    fn notify(&self, event: Event) -> StatusFuture {
        let (id, rx) = self.await_done();
        self.send(&ToNode::Notify {
            id,
            status: event.status.0,
            source: proc_id(&event.source),
            range: event.range.0,
            info: pack_list(&event.info),
        });
        Box::pin(async move { rx.await.unwrap_or(Err(Status::ERR_LOST_CONNECTION)) })
    }
}

impl NodeProc {
    fn start(
        exe: &Path,
        lib: &str,
        (node, name): (usize, &str),
        shared: Arc<Shared>,
        rust_clients: bool,
        tmp: &Path,
    ) -> Result<NodeProc, String> {
        let mut command = Command::new(exe);
        // OpenPMIx 5.0 and 6.1 keep a job's information in a shared-memory file of their gds
        // `shmem2` store, in the job's PMIX_NSDIR or else in $TMPDIR (else /tmp), and remove
        // it at PMIx_server_finalize; the harness kills its servers, so the files go into the
        // run's directory, which it removes, not into the machine's /tmp.
        command.env("TMPDIR", tmp);
        if rust_clients {
            // This crate's client implements OpenPMIx's hash store, not its shared-memory one.
            command.env("PMIX_MCA_gds", "hash");
        }
        let mut child = command
            .args(["__libpmix-node", lib])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(child_stderr())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start a node server: {e}"))?;
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(i), Some(o)) => (i, o),
            _ => return Err("a node server without pipes".into()),
        };
        let (tx, rx) = mpsc::unbounded_channel::<String>();
        tokio::spawn(write_lines(stdin, rx));
        let pid = child.id();
        let child = Arc::new(tokio::sync::Mutex::new(child));
        let handle = NodeHandle {
            name: name.to_owned(),
            child: child.clone(),
            tx,
            modex: Arc::new(Mutex::new(BTreeMap::new())),
            done: Arc::new(Mutex::new(BTreeMap::new())),
            calls: Arc::new(Mutex::new(BTreeMap::new())),
            next: Arc::new(AtomicU64::new(0)),
        };
        let (ready_tx, ready_rx) = oneshot::channel();
        let reader = handle.clone();
        tokio::spawn(async move {
            let host = Arc::new(ClusterHost { node, shared });
            let mut ready_tx = Some(ready_tx);
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                match serde_json::from_str::<FromNode>(&line) {
                    Ok(FromNode::Ready {
                        status, error, env, ..
                    }) => {
                        if let Some(t) = ready_tx.take() {
                            let _ = t.send((status, error, env));
                        }
                    }
                    Ok(FromNode::DmodexDone { id, status, data }) => {
                        if let Some(t) = lock(&reader.modex).remove(&id) {
                            let _ = t.send(if status == 0 {
                                Ok(data)
                            } else {
                                Err(Status(status))
                            });
                        }
                    }
                    Ok(FromNode::Done { id, status }) => {
                        if let Some(t) = lock(&reader.done).remove(&id) {
                            let _ = t.send(if status == 0 {
                                Ok(())
                            } else {
                                Err(Status(status))
                            });
                        }
                    }
                    Ok(FromNode::CallDone { id, result }) => {
                        if let Some(t) = lock(&reader.calls).remove(&id) {
                            let _ = t.send(result);
                        }
                    }
                    Ok(FromNode::Upcall { id, call }) => {
                        let host = host.clone();
                        let to = reader.clone();
                        tokio::spawn(async move {
                            let answer = serve_upcall(&host, &call).await;
                            to.send(&ToNode::HostReply { id, answer });
                        });
                    }
                    Err(_) => {} // not ours: ignore stray output
                }
            }
            // The node's process is gone: what waits on it learns so now, not at the timeout.
            lock(&reader.calls).clear();
            lock(&reader.modex).clear();
            lock(&reader.done).clear();
        });
        Ok(NodeProc {
            child,
            pid,
            handle,
            ready: Some(ready_rx),
        })
    }

    pub(super) async fn kill(&mut self) {
        let _ = self.child.lock().await.kill().await;
    }
}

/// A vector that ends early (an error, its timeout) drops its processes without `kill`:
/// they are ended here. `kill_on_drop` alone is not enough, as the child is shared (with the
/// node's handle, the host's list of ranks) and may outlive the vector; a leaked OpenPMIx
/// server can spin on its closed connections for the rest of the run.
impl Drop for NodeProc {
    fn drop(&mut self) {
        end_on_drop(&self.child);
    }
}

async fn write_lines(mut to: tokio::process::ChildStdin, mut rx: mpsc::UnboundedReceiver<String>) {
    while let Some(mut line) = rx.recv().await {
        line.push('\n');
        if to.write_all(line.as_bytes()).await.is_err() || to.flush().await.is_err() {
            break;
        }
    }
}

type CallTx = mpsc::UnboundedSender<(ClientCall, oneshot::Sender<Result<ClientResult, String>>)>;

/// The harness's side of one rank's process.
pub(super) struct ClientProc {
    /// Shared with the host, which may end the process (see [`Children`]).
    pub(super) child: Arc<tokio::sync::Mutex<Child>>,
    pub(super) tx: CallTx,
    /// Which process it is, as a crash names it: `rank 1`, `the tool`.
    who: String,
}

/// The ranks' processes, which the host ends with a signal.
#[derive(Default)]
pub(super) struct Children(pub(super) Mutex<BTreeMap<u32, Arc<tokio::sync::Mutex<Child>>>>);

impl crate::cluster::RankEnder for Children {
    fn end(
        &self,
        rank: u32,
        signal: i32,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send>> {
        let child = lock(&self.0).remove(&rank);
        Box::pin(async move {
            let Some(child) = child else {
                return false;
            };
            let mut child = child.lock().await;
            // Gone already: nothing to end.
            let Some(pid) = child.id() else {
                return false;
            };
            let Ok(pid) = i32::try_from(pid) else {
                return false;
            };
            let Ok(signal) = nix::sys::signal::Signal::try_from(signal) else {
                return false;
            };
            if nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).is_err() {
                return false;
            }
            child.wait().await.is_ok()
        })
    }
}

impl ClientProc {
    /// A rank started with the job: its `PMIx_Init` failing is the target's refusal of the
    /// setup.
    pub(super) async fn start(
        exe: &Path,
        args: &[String],
        rank: u32,
        env: &BTreeMap<String, String>,
    ) -> Result<ClientProc, Problem> {
        Self::launch(exe, args, rank, env).await?.map_err(|s| {
            let s = crate::outcome::status_word(s);
            Problem::Refused(format!("rank {rank}: PMIx_Init answered {s}"))
        })
    }

    /// Start the rank's process and wait for its `PMIx_Init`: the outer error is the
    /// harness's (or a crash), the inner the status `PMIx_Init` answered.
    pub(super) async fn launch(
        exe: &Path,
        args: &[String],
        rank: u32,
        env: &BTreeMap<String, String>,
    ) -> Result<Result<ClientProc, Status>, Problem> {
        let mut child = Command::new(exe)
            .args(args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(child_stderr())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start rank {rank}: {e}"))?;
        let (mut stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(i), Some(o)) => (i, o),
            _ => return Err("a client without pipes".into()),
        };
        let mut lines = BufReader::new(stdout).lines();
        let first = next_result(&mut lines)
            .await
            .map_err(|e| format!("rank {rank} during PMIx_Init: {e}"))?;
        if first.status != 0 {
            let _ = child.kill().await;
            return Ok(Err(Status(first.status)));
        }
        let (tx, mut rx) =
            mpsc::unbounded_channel::<(ClientCall, oneshot::Sender<Result<ClientResult, String>>)>(
            );
        tokio::spawn(async move {
            while let Some((call, answer)) = rx.recv().await {
                let r = async {
                    let mut line = serde_json::to_string(&call).map_err(|e| e.to_string())?;
                    line.push('\n');
                    stdin
                        .write_all(line.as_bytes())
                        .await
                        .map_err(|e| e.to_string())?;
                    stdin.flush().await.map_err(|e| e.to_string())?;
                    next_result(&mut lines).await
                };
                let _ = answer.send(r.await);
            }
        });
        Ok(Ok(ClientProc {
            child: Arc::new(tokio::sync::Mutex::new(child)),
            tx,
            who: format!("rank {rank}"),
        }))
    }

    pub(super) async fn call(&self, call: ClientCall) -> Result<ClientResult, String> {
        Self::call_on(&self.tx, call).await
    }

    pub(super) async fn call_on(tx: &CallTx, call: ClientCall) -> Result<ClientResult, String> {
        let (answer, rx) = oneshot::channel();
        tx.send((call, answer))
            .map_err(|_| "the rank's process is gone".to_owned())?;
        rx.await
            .map_err(|_| "the rank's process is gone".to_owned())?
    }

    pub(super) async fn kill(&mut self) {
        let _ = self.child.lock().await.kill().await;
    }
}

impl Drop for ClientProc {
    fn drop(&mut self) {
        end_on_drop(&self.child);
    }
}

/// Start ending `child` from a destructor: at once when no one holds it, else as soon as its
/// holder lets go (a task on the runtime, which every process of a run lives within).
fn end_on_drop(child: &Arc<tokio::sync::Mutex<Child>>) {
    if let Ok(mut c) = child.try_lock() {
        let _ = c.start_kill();
        return;
    }
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let child = child.clone();
        runtime.spawn(async move {
            let _ = child.lock().await.start_kill();
        });
    }
}

/// What a call learns when the rank's process died under it.
const EXITED: &str = "the process exited (crashed or killed)";

impl ClientProc {
    /// A failed call as a problem: the target's when the process died under it (which one
    /// and how it ended), else the harness's.
    pub(super) async fn problem(&self, message: String) -> Problem {
        if message == EXITED {
            Problem::Crashed(format!("{} {}", self.who, how_it_ended(&self.child).await))
        } else {
            Problem::Harness(message)
        }
    }

    /// Make the call, a failure being [`ClientProc::problem`]'s.
    pub(super) async fn judged_call(&self, call: ClientCall) -> Result<ClientResult, Problem> {
        match self.call(call).await {
            Ok(r) => Ok(r),
            Err(e) => Err(self.problem(e).await),
        }
    }
}

/// How a process that closed its output ended, as a crash names it: `killed by SIGSEGV`,
/// `exited with status 1`, or that it closed its output and did not end within a few seconds.
pub(super) async fn how_it_ended(child: &tokio::sync::Mutex<Child>) -> String {
    use std::os::unix::process::ExitStatusExt;
    let mut child = child.lock().await;
    match tokio::time::timeout(std::time::Duration::from_secs(5), child.wait()).await {
        Ok(Ok(status)) => match status.signal() {
            Some(n) => nix::sys::signal::Signal::try_from(n).map_or_else(
                |_| format!("killed by signal {n}"),
                |s| format!("killed by {s}"),
            ),
            None => format!("exited with status {}", status.code().unwrap_or(-1)),
        },
        Ok(Err(e)) => format!("ended, its status unknown ({e})"),
        Err(_) => "closed its output and did not end".to_owned(),
    }
}

async fn next_result(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
) -> Result<ClientResult, String> {
    loop {
        match lines.next_line().await {
            Ok(Some(l)) => {
                if let Ok(r) = serde_json::from_str::<ClientResult>(&l) {
                    return Ok(r);
                }
                // Anything else the library printed is not a result.
            }
            Ok(None) => return Err(EXITED.into()),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Answer the bytes of a node's upcall with the cluster host: the call the C library's
/// server made, read back into the crate's [`HostCall`] and made of the same host the
/// Rust target's servers call. Bytes that are no call, or an answer with no byte form,
/// answer the library with the status of the failure, which the step then shows.
async fn serve_upcall(host: &ClusterHost, call: &[u8]) -> Vec<u8> {
    let answer = match HostCall::from_bytes(call) {
        Ok(call) => call.call(host).await,
        Err(e) => HostResult::Status(e.status()),
    };
    (answer.to_bytes())
        .or_else(|e| HostResult::Status(e.status()).to_bytes())
        .unwrap_or_default()
}
