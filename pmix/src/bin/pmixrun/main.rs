//! `pmixrun -n N [--] PROGRAM [ARGS...]`: run N copies of a program on this machine under a
//! PMIx server of this crate.
//!
//! It starts a server, registers one job with complete job, node, application and process
//! information, forks the processes with the environment their PMIx client needs (and what
//! MPI runtimes look for to recognise a direct launch), lets their output through, and returns
//! the worst exit status. A process that connects but exits without `PMIx_Finalize` is
//! reported and fails the run. As the host (`host.rs`) it answers publish/lookup/unpublish,
//! abort and queries (`PMIX_QUERY_NAMESPACES`, `PMIX_QUERY_JOB_STATUS` and the process table
//! with real pids, states and exit codes), and raises events: `PMIX_EVENT_PROC_TERMINATED`
//! (and `PMIX_ERR_PROC_TERM_WO_SYNC` for a process that never finalized) as each process
//! ends, `PMIX_EVENT_JOB_END` when the job is over.

mod host;

use std::process::ExitCode;
use std::time::Duration;

use pmix::model::{DataRange, Info, Nspace, Proc, Rank, Status, Value, attr};
use pmix::server::{Server, ServerConfig, regex};
use tokio::process::Command;

use host::{RunHost, lock, uid_gid};

const USAGE: &str = "usage: pmixrun -n N [--timeout SECONDS] [--] PROGRAM [ARGS...]";

struct Options {
    n: u32,
    timeout_s: Option<u64>,
    program: String,
    args: Vec<String>,
}

fn parse_args() -> Result<Options, String> {
    let mut n = 1;
    let mut timeout_s = None;
    let mut args = std::env::args().skip(1);
    let mut rest = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-n" | "-np" | "--np" => {
                n = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|v| *v > 0)
                    .ok_or("-n needs a positive number")?;
            }
            "--timeout" => {
                timeout_s = Some(
                    args.next()
                        .and_then(|v| v.parse().ok())
                        .ok_or("--timeout needs a number of seconds")?,
                );
            }
            "-h" | "--help" => return Err(USAGE.into()),
            "--" => {
                rest.extend(args.by_ref());
                break;
            }
            _ => {
                rest.push(a);
                rest.extend(args.by_ref());
                break;
            }
        }
    }
    let mut rest = rest.into_iter();
    let program = rest.next().ok_or(USAGE)?;
    Ok(Options {
        n,
        timeout_s,
        program,
        args: rest.collect(),
    })
}

fn info(key: &str, value: impl Into<Value>) -> Info {
    Info::with_key(key, value).expect("inventory keys are valid")
}

fn array(infos: Vec<Info>) -> Value {
    Value::DataArray(Box::new(
        pmix::model::DataArray::new(
            pmix::model::DataType::INFO,
            infos
                .into_iter()
                .map(|i| Value::Info(Box::new(i)))
                .collect(),
        )
        .expect("all elements are infos"),
    ))
}

/// Everything the job's processes can ask about themselves, in the realms of v5.0 §6.1.
fn job_info(nspace: &Nspace, n: u32, host: &str, opts: &Options, tmpdir: &str) -> Vec<Info> {
    let peers: Vec<String> = (0..n).map(|r| r.to_string()).collect();
    let peers = peers.join(",");
    let argv = std::iter::once(opts.program.clone())
        .chain(opts.args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    // One node; the maps in the format both implementations' servers read.
    let node_map = regex::generate_regex(host).unwrap_or_else(|_| format!("raw:{host}"));
    let proc_map = regex::generate_ppn(&peers).unwrap_or_else(|_| format!("raw:{peers}"));
    let mut out = vec![
        info(attr::NODE_MAP.wire_key(), Value::string(node_map)),
        info(attr::PROC_MAP.wire_key(), Value::string(proc_map)),
        info(
            attr::SESSION_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::SESSION_ID.wire_key(), Value::Uint32(0)),
                info(attr::UNIV_SIZE.wire_key(), Value::Uint32(n)),
                info(attr::TMPDIR.wire_key(), Value::string(tmpdir)),
            ]),
        ),
        info(attr::JOBID.wire_key(), Value::string(nspace.as_str())),
        info(attr::JOB_SIZE.wire_key(), Value::Uint32(n)),
        info(attr::MAX_PROCS.wire_key(), Value::Uint32(n)),
        info(attr::JOB_NUM_APPS.wire_key(), Value::Uint32(1)),
        info(attr::NUM_NODES.wire_key(), Value::Uint32(1)),
        info(attr::NUM_SLOTS.wire_key(), Value::Uint32(n)),
        info(attr::NPROC_OFFSET.wire_key(), Value::Rank(Rank(0))),
        info(attr::NODE_LIST.wire_key(), Value::string(host)),
        info(attr::LOCAL_PEERS.wire_key(), Value::string(peers.clone())),
        info(attr::LOCAL_SIZE.wire_key(), Value::Uint32(n)),
        info(attr::LOCALLDR.wire_key(), Value::Rank(Rank(0))),
        info(attr::NSDIR.wire_key(), Value::string(tmpdir)),
        info(
            attr::NODE_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::HOSTNAME.wire_key(), Value::string(host)),
                info(attr::NODEID.wire_key(), Value::Uint32(0)),
                info(attr::NODE_SIZE.wire_key(), Value::Uint32(n)),
                info(attr::LOCAL_PEERS.wire_key(), Value::string(peers)),
                info(attr::LOCALLDR.wire_key(), Value::Rank(Rank(0))),
                info(attr::LOCAL_SIZE.wire_key(), Value::Uint32(n)),
            ]),
        ),
        info(
            attr::APP_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::APPNUM.wire_key(), Value::Uint32(0)),
                info(attr::APP_SIZE.wire_key(), Value::Uint32(n)),
                info(attr::APPLDR.wire_key(), Value::Rank(Rank(0))),
                info(attr::APP_ARGV.wire_key(), Value::string(argv)),
            ]),
        ),
    ];
    for r in 0..n {
        out.push(info(
            attr::PROC_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::RANK.wire_key(), Value::Rank(Rank(r))),
                info(attr::LOCAL_RANK.wire_key(), Value::Uint16(r as u16)),
                info(attr::NODE_RANK.wire_key(), Value::Uint16(r as u16)),
                info(attr::APPNUM.wire_key(), Value::Uint32(0)),
                info(attr::APP_RANK.wire_key(), Value::Rank(Rank(r))),
                info(attr::GLOBAL_RANK.wire_key(), Value::Rank(Rank(r))),
                info(attr::HOSTNAME.wire_key(), Value::string(host)),
                info(attr::NODEID.wire_key(), Value::Uint32(0)),
            ]),
        ));
    }
    out
}

/// Variables MPI runtimes check to decide they were direct-launched by a resource manager.
///
/// Debian's Open MPI 4.1 starts as a singleton unless one of its launch-detection components
/// recognises the environment; its Flux detection needs only `FLUX_JOB_ID`, and then it takes
/// everything else (rank, size, peers, locality) from the PMIx server. Measured: without it,
/// every rank is rank 0 of 1; with it alone, a 4-rank ring runs.
fn launcher_env(nspace: &Nspace) -> Vec<(String, String)> {
    vec![("FLUX_JOB_ID".into(), nspace.as_str().to_owned())]
}

async fn run(opts: Options) -> Result<u8, String> {
    let pid = std::process::id();
    let tmpdir = std::env::temp_dir().join(format!("pmixrun.{pid}"));
    std::fs::create_dir_all(&tmpdir)
        .map_err(|e| format!("cannot create {}: {e}", tmpdir.display()))?;
    let host = RunHost::default();
    // The server's own defaults otherwise: its pid-named identity, the kernel's host name.
    let tmp = tmpdir.display().to_string();
    let init = [Info::new(attr::SERVER_TMPDIR, tmp.clone())];
    let mut config =
        ServerConfig::from_info(&init).map_err(|(_, e)| format!("server configuration: {e}"))?;
    let host_name = config.hostname.clone();
    // Tools attach with `--pid <pmixrun's pid>` or `--uri`.
    config.tool_rendezvous = true;
    let server = Server::start(config, host.clone())
        .await
        .map_err(|e| format!("cannot start the PMIx server: {e}"))?;
    let nspace = Nspace::new(format!("pmixrun.{pid}")).map_err(|e| e.to_string())?;
    *lock(&host.nspace) = Some(nspace.clone());
    server
        .register_nspace(
            nspace.clone(),
            job_info(&nspace, opts.n, &host_name, &opts, &tmp),
        )
        .await
        .map_err(|e| e.to_string())?;
    let (uid, gid) = uid_gid();
    let mut children = Vec::new();
    for r in 0..opts.n {
        let proc = Proc::new(nspace.clone(), Rank(r));
        server
            .register_client(proc.clone(), uid, gid)
            .await
            .map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&opts.program);
        cmd.args(&opts.args)
            .envs(server.setup_fork(&proc))
            .envs(launcher_env(&nspace))
            .kill_on_drop(true);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", opts.program))?;
        let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        host.started(proc, pid, &opts.program, &host_name);
        children.push((r, child));
    }

    // Each child's exit arrives as it happens, so the others hear of it at once.
    let (exits_tx, mut exits) = tokio::sync::mpsc::unbounded_channel();
    for (r, mut child) in children {
        let tx = exits_tx.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            let _ = tx.send((r, status));
        });
    }
    drop(exits_tx);
    let deadline = async {
        match opts.timeout_s {
            Some(t) => tokio::time::sleep(Duration::from_secs(t)).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let mut worst: u8 = 0;
    let mut first_failure: Option<(Proc, i32)> = None;
    // The job's PMIX_JOB_TERM_STATUS: what ended it first.
    let mut term = Status::SUCCESS;
    let mut left = opts.n;
    while left > 0 {
        tokio::select! {
            biased;
            () = host.abort_requested.notified() => {
                let (proc, status, message) = lock(&host.abort).clone().unwrap_or((Proc::new(nspace.clone(), Rank(0)), Status(1), None));
                eprintln!(
                    "pmixrun: rank {} called PMIx_Abort with status {}{}",
                    proc.rank.0,
                    status.0,
                    message.map(|m| format!(": {m}")).unwrap_or_default()
                );
                worst = u8::try_from(status.0.unsigned_abs().clamp(1, 255)).unwrap_or(1);
                first_failure.get_or_insert((proc, status.0));
                term = Status::ERR_JOB_ABORTED;
                break;
            }
            exit = exits.recv() => {
                let Some((r, status)) = exit else { break };
                left -= 1;
                let code = match status {
                    Ok(s) => s.code().map_or(128u8.saturating_add(1), |c| u8::try_from(c.clamp(0, 255)).unwrap_or(1)),
                    Err(_) => 1,
                };
                let proc = Proc::new(nspace.clone(), Rank(r));
                let unsynced = lock(&host.connected).contains(&proc)
                    && !lock(&host.finalized).contains(&proc);
                if unsynced {
                    eprintln!("pmixrun: rank {r} exited (status {code}) without calling PMIx_Finalize");
                    worst = worst.max(1);
                }
                if code != 0 || unsynced {
                    first_failure.get_or_insert((proc.clone(), i32::from(code)));
                }
                if term == Status::SUCCESS && unsynced {
                    term = Status::ERR_JOB_TERM_WO_SYNC;
                } else if term == Status::SUCCESS && code != 0 {
                    term = Status::ERR_JOB_NON_ZERO_TERM;
                }
                worst = worst.max(code);
                host.ended(&proc, i32::from(code), unsynced);
                announce_exit(&server, &proc, code, unsynced).await;
            }
            () = &mut deadline => {
                eprintln!("pmixrun: timed out after {} s; killing the job", opts.timeout_s.unwrap_or(0));
                worst = 124;
                first_failure.get_or_insert((Proc::new(nspace.clone(), Rank::WILDCARD), 124));
                term = Status::ERR_TIMEOUT;
                break;
            }
        }
    }
    announce_job_end(&server, &nspace, term, first_failure).await;
    server.shutdown();
    let _ = std::fs::remove_dir_all(&tmpdir);
    Ok(worst)
}

/// Tell the job's processes (and attached tools) that `proc` ended (v5.0 §10.1.8: host
/// events carry the affected process): `PMIX_EVENT_PROC_TERMINATED` with its exit code, and
/// `PMIX_ERR_PROC_TERM_WO_SYNC` too when it connected and never finalized.
async fn announce_exit(server: &Server, proc: &Proc, code: u8, unsynced: bool) {
    let info = vec![
        Info::new(attr::EVENT_AFFECTED_PROC, proc.clone()),
        Info::new(attr::EXIT_CODE, i32::from(code)),
    ];
    let mut codes = vec![Status::EVENT_PROC_TERMINATED];
    if unsynced {
        codes.push(Status::ERR_PROC_TERM_WO_SYNC);
    }
    for status in codes {
        let sent = server
            .notify_event(status, None, DataRange::NAMESPACE, info.clone())
            .await;
        if let Err(s) = sent {
            eprintln!(
                "pmixrun: cannot announce the end of rank {}: {s:?}",
                proc.rank.0
            );
        }
    }
}

/// `PMIX_EVENT_JOB_END` for whoever is still listening (tools): the job's status and, when
/// a process failed, the first one and its exit code.
async fn announce_job_end(
    server: &Server,
    nspace: &Nspace,
    status: Status,
    first_failure: Option<(Proc, i32)>,
) {
    let mut info = vec![
        Info::new(
            attr::EVENT_AFFECTED_PROC,
            Proc::new(nspace.clone(), Rank::WILDCARD),
        ),
        Info::new(attr::JOB_TERM_STATUS, status),
    ];
    if let Some((proc, code)) = first_failure {
        info.push(Info::new(attr::PROCID, proc));
        info.push(Info::new(attr::EXIT_CODE, code));
    }
    let sent = server
        .notify_event(Status::EVENT_JOB_END, None, DataRange::SESSION, info)
        .await;
    if let Err(s) = sent {
        eprintln!("pmixrun: cannot announce the end of the job: {s:?}");
    }
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{msg}");
            return ExitCode::from(2);
        }
    };
    // Warnings (refused or closed connections) always go to stderr; PMIXRUN_LOG=debug says more.
    let level = match std::env::var("PMIXRUN_LOG").as_deref() {
        Ok("debug") => tracing::Level::DEBUG,
        Ok("info") => tracing::Level::INFO,
        _ => tracing::Level::WARN,
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_target(false)
        .init();
    // One thread: a request crosses reader, core and writer tasks, and on one thread those
    // hand-offs cost no cross-thread wake-ups (measured by `cargo xtask bench core`).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("pmixrun: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(opts)) {
        Ok(code) => ExitCode::from(code),
        Err(msg) => {
            eprintln!("pmixrun: {msg}");
            ExitCode::from(1)
        }
    }
}
