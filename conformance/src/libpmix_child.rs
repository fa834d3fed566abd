//! The child processes of the `libpmix.so` target (see [`crate::libpmix_target`]): a node's
//! server and a rank's client, each driving the library through [`crate::ffi`] and speaking
//! JSON lines with the harness on stdin and stdout.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pmix::model::{DataRange, Info, PData, Proc, Rank, Scope, Status, Value};
use pmix::server::{HostCall, HostResult};

use crate::api::{ApiCall, ApiOutput};
use crate::ffi::{self, Completion};
use crate::libpmix_target::{
    ClientCall, ClientResult, FromNode, ToNode, from_id, pack_list, unpack_list,
};
use crate::step::lock;

/// One line of JSON to stdout, whole (several threads write).
fn emit<T: serde::Serialize>(out: &Mutex<std::io::Stdout>, msg: &T) {
    if let Ok(line) = serde_json::to_string(msg) {
        let mut o = lock(out);
        let _ = writeln!(o, "{line}");
        let _ = o.flush();
    }
}

/// `conformance __libpmix-version LIB`: print the library's version string.
pub fn version_main(lib: &str) -> ExitCode {
    match ffi::open(lib) {
        Ok(l) => {
            println!("{}", l.version());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Whether the host registers the jobs it starts with this library's server. Not with
/// OpenPMIx 4.2's: registering another job while its direct-modex upcall waits, then
/// answering the upcall, left the waiting `PMIx_Get` unanswered, past its `PMIX_TIMEOUT`, in
/// about a third of the runs (measured: 9 of 24), so a vector that needs it would pass or
/// fail by chance; its server answers `PMIX_ERR_NOT_SUPPORTED` instead. OpenPMIx 5.0 and 6.1
/// serve those gets every time (measured: the spawn vectors, 6 runs of each release).
fn registers_jobs(version: &str) -> bool {
    !version.starts_with("OpenPMIx 4.")
}

/// `conformance __libpmix-node LIB`: one node's server.
pub fn node_main(lib: &str) -> ExitCode {
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let l = match ffi::open(lib) {
        Ok(l) => l,
        Err(e) => {
            emit(&out, &ready_error(Status::ERR_INIT, e));
            return ExitCode::FAILURE;
        }
    };
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let Some(Ok(first)) = lines.next() else {
        return ExitCode::FAILURE;
    };
    let Ok(ToNode::Setup {
        nspace,
        info,
        ranks,
        uid,
        gid,
        server_info,
        caps,
        jobs,
    }) = serde_json::from_str::<ToNode>(&first)
    else {
        emit(&out, &ready_error(Status::ERR_BAD_PARAM, "no setup".into()));
        return ExitCode::FAILURE;
    };

    let pending: Arc<Mutex<BTreeMap<u64, Completion>>> = Arc::new(Mutex::new(BTreeMap::new()));
    let next = Arc::new(AtomicU64::new(0));
    let host = {
        let (out, pending, next) = (out.clone(), pending.clone(), next.clone());
        Box::new(move |call: HostCall, c: Completion| {
            let call = match call.to_bytes() {
                Ok(call) => call,
                // A value with no byte form (a pointer): the library hears why, from another
                // thread as every answer comes.
                Err(e) => {
                    std::thread::spawn(move || c.finish(HostResult::Status(e.status())));
                    return;
                }
            };
            let id = next.fetch_add(1, Ordering::Relaxed);
            lock(&pending).insert(id, c);
            emit(&out, &FromNode::Upcall { id, call });
        })
    };
    let caps = ffi::HostCaps {
        fence: caps.0,
        direct_modex: caps.1,
        publish: caps.2,
    };
    let setup = (|| -> Result<BTreeMap<u32, BTreeMap<String, String>>, (Status, String)> {
        let server_info: Vec<Info> = unpack_list(&server_info)
            .map_err(|e| (Status::ERR_BAD_PARAM, format!("server infos: {e}")))?;
        ffi::server_init(&server_info, caps, host).map_err(|s| (s, "PMIx_server_init".into()))?;
        let info: Vec<Info> =
            unpack_list(&info).map_err(|e| (Status::ERR_BAD_PARAM, format!("infos: {e}")))?;
        let n = u32::try_from(ranks.len()).unwrap_or(u32::MAX);
        ffi::register_nspace(&nspace, n, &info)
            .map_err(|s| (s, "PMIx_server_register_nspace".into()))?;
        let mut env = BTreeMap::new();
        for r in &ranks {
            let p = Proc::try_new(&nspace, Rank(*r))
                .map_err(|e| (Status::ERR_BAD_PARAM, e.to_string()))?;
            ffi::register_client(&p, uid, gid)
                .map_err(|s| (s, "PMIx_server_register_client".into()))?;
            env.insert(
                *r,
                ffi::setup_fork(&p).map_err(|s| (s, "PMIx_server_setup_fork".into()))?,
            );
        }
        for (other, info) in &jobs {
            let info: Vec<Info> =
                unpack_list(info).map_err(|e| (Status::ERR_BAD_PARAM, format!("infos: {e}")))?;
            ffi::register_nspace(other, 0, &info)
                .map_err(|s| (s, format!("PMIx_server_register_nspace of {other}")))?;
        }
        Ok(env)
    })();
    match setup {
        Ok(env) => emit(
            &out,
            &FromNode::Ready {
                status: 0,
                error: String::new(),
                env,
                version: l.version(),
            },
        ),
        Err((s, what)) => {
            emit(&out, &ready_error(s, what));
            return ExitCode::FAILURE;
        }
    }

    for line in lines {
        let Ok(line) = line else { break };
        match serde_json::from_str::<ToNode>(&line) {
            Ok(ToNode::HostReply { id, answer }) => {
                let Some(c) = lock(&pending).remove(&id) else {
                    continue;
                };
                let answer = HostResult::from_bytes(&answer)
                    .unwrap_or(HostResult::Status(Status::ERR_BAD_PARAM));
                c.finish(answer);
            }
            Ok(ToNode::Dmodex { id, proc, .. }) => {
                let out = out.clone();
                std::thread::spawn(move || {
                    let r = from_id(&proc).and_then(|p| ffi::dmodex_request(&p));
                    let (status, data) = match r {
                        Ok(d) => (0, d),
                        Err(s) => (s.0, Vec::new()),
                    };
                    emit(&out, &FromNode::DmodexDone { id, status, data });
                });
            }
            Ok(ToNode::Notify {
                id,
                status,
                source,
                range,
                info,
            }) => {
                let out = out.clone();
                std::thread::spawn(move || {
                    let r = (|| {
                        let info = unpack_list::<Info>(&info).map_err(|_| Status::ERR_BAD_PARAM)?;
                        let source = from_id(&source)?;
                        ffi::notify_for_host(Status(status), &source, DataRange(range), &info)
                    })();
                    let status = r.err().unwrap_or(Status::SUCCESS).0;
                    emit(&out, &FromNode::Done { id, status });
                });
            }
            Ok(ToNode::RegisterJob { id, nspace, info }) => {
                let out = out.clone();
                let registers = registers_jobs(&l.version());
                std::thread::spawn(move || {
                    let r = (|| {
                        if !registers {
                            return Err(Status::ERR_NOT_SUPPORTED);
                        }
                        let info = unpack_list::<Info>(&info).map_err(|_| Status::ERR_BAD_PARAM)?;
                        ffi::register_nspace(&nspace, 0, &info)
                    })();
                    let status = r.err().unwrap_or(Status::SUCCESS).0;
                    emit(&out, &FromNode::Done { id, status });
                });
            }
            Ok(ToNode::Call { id, call, nspace }) => {
                let out = out.clone();
                std::thread::spawn(move || {
                    let o = match crate::server_api::resolve(&call, &nspace) {
                        Ok(c) => ffi::run_server(c),
                        Err(_) => ApiOutput::status(Status::ERR_BAD_PARAM),
                    };
                    let result = ClientResult::from_api(o);
                    emit(&out, &FromNode::CallDone { id, result });
                });
            }
            Ok(ToNode::Setup { .. }) | Err(_) => {}
        }
    }
    ExitCode::SUCCESS
}

fn ready_error(s: Status, error: String) -> FromNode {
    FromNode::Ready {
        status: if s == Status::SUCCESS {
            Status::ERROR.0
        } else {
            s.0
        },
        error,
        env: BTreeMap::new(),
        version: String::new(),
    }
}

/// `conformance __libpmix-client LIB`: one rank, initialised from its environment.
pub fn client_main(lib: &str) -> ExitCode {
    let init = match ffi::open(lib) {
        Ok(_) => ffi::client_init().map(|_| Library),
        Err(e) => {
            eprintln!("{e}");
            Err(Status::ERR_INIT)
        }
    };
    serve_calls(init)
}

/// `conformance __libpmix-tool LIB`: the vector's tool. Its first step initialises it
/// (`PMIx_tool_init`), so it reports ready at once, then makes one tool call per line.
pub fn tool_main(lib: &str) -> ExitCode {
    let out = Mutex::new(std::io::stdout());
    if let Err(e) = ffi::open(lib) {
        eprintln!("{e}");
        emit(&out, &status_only(Err(Status::ERR_INIT)));
        return ExitCode::FAILURE;
    }
    emit(&out, &ClientResult::default());
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let result = match serde_json::from_str::<ClientCall>(&line) {
            Ok(ClientCall::Tool { call, nspace }) => match crate::tool_api::resolve(&call, &nspace)
            {
                Ok(c) => ClientResult::from_api(ffi::run_tool(c)),
                Err(_) => status_only(Err(Status::ERR_BAD_PARAM)),
            },
            _ => status_only(Err(Status::ERR_BAD_PARAM)),
        };
        emit(&out, &result);
    }
    ExitCode::SUCCESS
}

/// `conformance __rust-tool`: the vector's tool on this crate (the pairing
/// `c-server:rust-client`), as `__libpmix-tool` is the library's.
pub fn rust_tool_main() -> ExitCode {
    let out = Mutex::new(std::io::stdout());
    emit(&out, &ClientResult::default());
    let mut tool = crate::tool_api::RustTool::default();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let result = match serde_json::from_str::<ClientCall>(&line) {
            Ok(ClientCall::Tool { call, nspace }) => match crate::tool_api::resolve(&call, &nspace)
            {
                Ok(c) => ClientResult::from_api(tool.run(c)),
                Err(_) => status_only(Err(Status::ERR_BAD_PARAM)),
            },
            _ => status_only(Err(Status::ERR_BAD_PARAM)),
        };
        emit(&out, &result);
    }
    ExitCode::SUCCESS
}

/// Report init's result (the first line), then execute one call per line until stdin ends.
fn serve_calls<A: Api + Sync>(init: Result<A, Status>) -> ExitCode {
    let out = Mutex::new(std::io::stdout());
    let api = match init {
        Ok(api) => api,
        Err(s) => {
            emit(&out, &status_only(Err(s)));
            return ExitCode::FAILURE;
        }
    };
    emit(&out, &ClientResult::default());
    let mut handles: BTreeMap<String, ffi::GetSlot> = BTreeMap::new();
    // Calls started without waiting run on threads of their own; stdin's end does not wait
    // for them (the harness kills the process).
    std::thread::scope(|threads| {
        let api = &api;
        let mut started: BTreeMap<String, std::thread::ScopedJoinHandle<'_, ClientResult>> =
            BTreeMap::new();
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            let result = match serde_json::from_str::<ClientCall>(&line) {
                Ok(ClientCall::Start { handle, call }) => {
                    let run = move || execute(api, *call, &mut BTreeMap::new());
                    started.insert(handle, threads.spawn(run));
                    ClientResult::default()
                }
                Ok(ClientCall::Await { handle }) if started.contains_key(&handle) => {
                    match started
                        .remove(&handle)
                        .map(std::thread::ScopedJoinHandle::join)
                    {
                        Some(Ok(r)) => r,
                        // A panic in the call is the harness's fault, reported as an error.
                        _ => status_only(Err(Status::ERROR)),
                    }
                }
                Ok(call) => execute(api, call, &mut handles),
                Err(_) => status_only(Err(Status::ERR_BAD_PARAM)),
            };
            emit(&out, &result);
        }
        std::process::exit(0)
    })
}

fn status_only(r: Result<(), Status>) -> ClientResult {
    ClientResult {
        status: r.err().map_or(0, |s| s.0),
        ..ClientResult::default()
    }
}

fn with_value(r: Result<Value, Status>) -> ClientResult {
    match r {
        Ok(v) => ClientResult {
            value: Some(pack_list(std::slice::from_ref(&v))),
            ..ClientResult::default()
        },
        Err(s) => status_only(Err(s)),
    }
}

fn execute(
    api: &impl Api,
    call: ClientCall,
    handles: &mut BTreeMap<String, ffi::GetSlot>,
) -> ClientResult {
    let infos = |b: &[u8]| unpack_list::<Info>(b).map_err(|_| Status::ERR_BAD_PARAM);
    let value = |b: &[u8]| {
        unpack_list::<Value>(b)
            .ok()
            .and_then(|mut v| v.pop())
            .ok_or(Status::ERR_BAD_PARAM)
    };
    match call {
        ClientCall::Put {
            scope,
            key,
            value: v,
        } => status_only(value(&v).and_then(|v| api.put(Scope(scope), &key, &v))),
        ClientCall::StoreInternal {
            target,
            key,
            value: v,
        } => status_only(
            from_id(&target).and_then(|p| value(&v).and_then(|v| api.store_internal(&p, &key, &v))),
        ),
        ClientCall::Commit => status_only(api.commit()),
        ClientCall::Fence { procs, info } => status_only((|| {
            let procs = procs.iter().map(from_id).collect::<Result<Vec<_>, _>>()?;
            api.fence(&procs, &infos(&info)?)
        })()),
        ClientCall::Get {
            target,
            key,
            info,
            handle,
            no_storage,
        } => {
            let target = match target.as_ref().map(from_id).transpose() {
                Ok(t) => t,
                Err(s) => return status_only(Err(s)),
            };
            let info = match infos(&info) {
                Ok(i) => i,
                Err(s) => return status_only(Err(s)),
            };
            match handle {
                Some(h) => match api.get_nb(target.as_ref(), &key, &info) {
                    Ok(slot) => {
                        handles.insert(h, slot);
                        status_only(Ok(()))
                    }
                    Err(s) => {
                        // The failure to start is the get's result.
                        let slot = Arc::new((Mutex::new(Some(Err(s))), std::sync::Condvar::new()));
                        handles.insert(h, slot);
                        status_only(Ok(()))
                    }
                },
                None => with_value(api.get(target.as_ref(), &key, &info, no_storage)),
            }
        }
        ClientCall::Await { handle } => match handles.remove(&handle) {
            Some(slot) => with_value(ffi::wait(&slot)),
            None => status_only(Err(Status::ERR_BAD_PARAM)),
        },
        ClientCall::Publish { info } => status_only(infos(&info).and_then(|i| api.publish(&i))),
        ClientCall::Lookup { keys, info } => {
            match infos(&info).and_then(|i| api.lookup(&keys, &i)) {
                Ok((status, found)) => ClientResult {
                    status: status.0,
                    data: Some(pack_list(&found)),
                    ..ClientResult::default()
                },
                Err(s) => status_only(Err(s)),
            }
        }
        ClientCall::Unpublish { keys, info } => {
            status_only(infos(&info).and_then(|i| api.unpublish(&keys, &i)))
        }
        ClientCall::Finalize => status_only(api.finalize()),
        // Started calls are run by the caller's loop.
        ClientCall::Start { .. } => status_only(Err(Status::ERR_BAD_PARAM)),
        // A rank makes no tool calls (the vector's tool is a process of its own).
        ClientCall::Tool { .. } => status_only(Err(Status::ERR_BAD_PARAM)),
        ClientCall::Api { call, nspace, rank } => match crate::api::resolve(&call, &nspace, rank) {
            Ok(Some(call)) => ClientResult::from_api(api.api(call)),
            Ok(None) | Err(_) => status_only(Err(Status::ERR_BAD_PARAM)),
        },
    }
}

/// The client calls a step can make, on either implementation.
trait Api {
    fn put(&self, scope: Scope, key: &str, value: &Value) -> Result<(), Status>;
    fn store_internal(&self, target: &Proc, key: &str, value: &Value) -> Result<(), Status>;
    fn commit(&self) -> Result<(), Status>;
    fn fence(&self, procs: &[Proc], info: &[Info]) -> Result<(), Status>;
    fn get(
        &self,
        target: Option<&Proc>,
        key: &str,
        info: &[Info],
        no_storage: bool,
    ) -> Result<Value, Status>;
    fn get_nb(
        &self,
        target: Option<&Proc>,
        key: &str,
        info: &[Info],
    ) -> Result<ffi::GetSlot, Status>;
    fn publish(&self, info: &[Info]) -> Result<(), Status>;
    /// The status (success or partial success) and the data found.
    fn lookup(&self, keys: &[String], info: &[Info]) -> Result<(Status, Vec<PData>), Status>;
    fn unpublish(&self, keys: &[String], info: &[Info]) -> Result<(), Status>;
    fn finalize(&self) -> Result<(), Status>;
    /// A call of the other chapters.
    fn api(&self, call: ApiCall) -> ApiOutput;
}

/// The library opened by this process.
struct Library;

impl Api for Library {
    fn put(&self, scope: Scope, key: &str, value: &Value) -> Result<(), Status> {
        ffi::put(scope, key, value)
    }
    fn store_internal(&self, target: &Proc, key: &str, value: &Value) -> Result<(), Status> {
        ffi::store_internal(target, key, value)
    }
    fn commit(&self) -> Result<(), Status> {
        ffi::commit()
    }
    fn fence(&self, procs: &[Proc], info: &[Info]) -> Result<(), Status> {
        ffi::fence(procs, info)
    }
    fn get(
        &self,
        target: Option<&Proc>,
        key: &str,
        info: &[Info],
        no_storage: bool,
    ) -> Result<Value, Status> {
        ffi::get(target, key, info, no_storage)
    }
    fn get_nb(
        &self,
        target: Option<&Proc>,
        key: &str,
        info: &[Info],
    ) -> Result<ffi::GetSlot, Status> {
        ffi::get_nb(target, key, info)
    }
    fn publish(&self, info: &[Info]) -> Result<(), Status> {
        ffi::publish(info)
    }
    fn lookup(&self, keys: &[String], info: &[Info]) -> Result<(Status, Vec<PData>), Status> {
        ffi::lookup(keys, info)
    }
    fn unpublish(&self, keys: &[String], info: &[Info]) -> Result<(), Status> {
        ffi::unpublish(keys, info)
    }
    fn finalize(&self) -> Result<(), Status> {
        match ffi::finalize() {
            Status::SUCCESS => Ok(()),
            s => Err(s),
        }
    }
    fn api(&self, call: ApiCall) -> ApiOutput {
        ffi::run_api(call)
    }
}

/// This crate's blocking client.
struct RustClient(pmix::client::blocking::Client, Arc<crate::api::RustProc>);

impl Api for RustClient {
    fn put(&self, scope: Scope, key: &str, value: &Value) -> Result<(), Status> {
        self.0.put(scope, key, value.clone()).map_err(Status::from)
    }
    fn store_internal(&self, target: &Proc, key: &str, value: &Value) -> Result<(), Status> {
        self.0
            .store_internal(target, key, value.clone())
            .map_err(Status::from)
    }
    fn commit(&self) -> Result<(), Status> {
        self.0.commit().map_err(Status::from)
    }
    fn fence(&self, procs: &[Proc], info: &[Info]) -> Result<(), Status> {
        self.0.fence(procs, info).map_err(Status::from)
    }
    fn get(
        &self,
        target: Option<&Proc>,
        key: &str,
        info: &[Info],
        _no_storage: bool,
    ) -> Result<Value, Status> {
        // The crate's values are always the caller's: there is no storage to give.
        self.0.get(target, key, info).map_err(Status::from)
    }
    fn get_nb(
        &self,
        target: Option<&Proc>,
        key: &str,
        info: &[Info],
    ) -> Result<ffi::GetSlot, Status> {
        let slot: ffi::GetSlot = Arc::new((Mutex::new(None), std::sync::Condvar::new()));
        let done = slot.clone();
        self.0.get_nb(target, key, info, move |r| {
            *lock(&done.0) = Some(r.map_err(Status::from));
            done.1.notify_all();
        });
        Ok(slot)
    }
    fn publish(&self, info: &[Info]) -> Result<(), Status> {
        self.0.publish(info).map_err(Status::from)
    }
    fn lookup(&self, keys: &[String], info: &[Info]) -> Result<(Status, Vec<PData>), Status> {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let found = self.0.lookup(&keys, info)?;
        Ok((PData::lookup_status(&keys, &found), found))
    }
    fn unpublish(&self, keys: &[String], info: &[Info]) -> Result<(), Status> {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        self.0.unpublish(&keys, info).map_err(Status::from)
    }
    fn finalize(&self) -> Result<(), Status> {
        self.0.finalize().map_err(Status::from)
    }
    fn api(&self, call: ApiCall) -> ApiOutput {
        self.0
            .block_on(crate::api::run_rust(self.0.as_async(), &self.1, call))
    }
}

/// `conformance __rust-client`: one rank on this crate's client, initialised from its
/// environment (the pairing `c-server:rust-client`, and `rust-server` targets' clients).
pub fn rust_client_main() -> ExitCode {
    let init = pmix::client::blocking::Client::init().map_err(|e| {
        eprintln!("PMIx_Init: {e}");
        e.status()
    });
    serve_calls(init.map(|c| RustClient(c, Arc::default())))
}
