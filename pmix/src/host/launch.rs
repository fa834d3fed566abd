//! What a host needs to launch a job on one node, shared by `pmixrun` and the conformance
//! harness: the checks that decide whether a spawn request can start at all (v5.0 §12.2.1's
//! job-failure statuses), and the job information to register for the new namespace
//! (§6.1, with `PMIX_PARENT_ID` and `PMIX_SPAWNED` for a spawned job, §12.2).
//!
//! The checks look at the file system (executables, working directories, host files), so this
//! module belongs to the drivers' layer; the job information itself is plain data.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::model::{App, DataArray, DataType, Info, Nspace, Proc, Rank, Status, Text, Value, attr};

use crate::model::regex;

/// One application of a job as launched: its command line and how many processes run it.
#[derive(Clone, Debug, PartialEq)]
pub struct AppLaunch {
    /// The resolved executable.
    pub exe: PathBuf,
    /// The command line, bytes as the spawner gave them (a C string need not be UTF-8).
    pub argv: Vec<OsString>,
    /// `NAME=value` entries to add to the environment.
    pub env: Vec<OsString>,
    /// The working directory (`PMIX_WDIR`), if one was asked for.
    pub cwd: Option<PathBuf>,
    pub nprocs: u32,
    /// The process set its processes form (the app's `PMIX_PSET_NAME`), if one was named.
    pub pset: Option<String>,
}

impl AppLaunch {
    /// The environment entries as names and values (an entry without `=` is left out).
    pub fn env_pairs(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.env.iter().filter_map(|e| {
            let bytes = e.as_bytes();
            let eq = bytes.iter().position(|&b| b == b'=')?;
            Some((
                OsStr::from_bytes(&bytes[..eq]),
                OsStr::from_bytes(&bytes[eq + 1..]),
            ))
        })
    }

    /// The command line as one string, its words separated by spaces.
    pub fn command_line(&self) -> Text {
        let words: Vec<&[u8]> = self.argv.iter().map(|a| a.as_bytes()).collect();
        Text::from(words.join(&b' '))
    }
}

/// A C string as an operating-system string, byte for byte.
fn os(t: &Text) -> OsString {
    OsString::from_vec(t.as_bytes().to_vec())
}

/// A job ready to start on one node.
#[derive(Clone, Debug, PartialEq)]
pub struct JobLaunch {
    pub nspace: Nspace,
    pub hostname: String,
    pub apps: Vec<AppLaunch>,
    /// The process that asked for the job, for a spawned one.
    pub parent: Option<Proc>,
    /// The session's temporary directory (`PMIX_TMPDIR`); each job's own (`PMIX_NSDIR`) is
    /// the folder named after its namespace under it.
    pub tmpdir: String,
    /// Where each process runs on the node, by rank (empty: not described).
    pub placement: Vec<Placement>,
    /// The node runs more processes than it has processors for them
    /// (`PMIX_NODE_OVERSUBSCRIBED`, node realm): runtimes should yield when idle rather than
    /// poll. The host decides, counting its other jobs' processes too.
    pub oversubscribed: bool,
}

/// Where a process runs on its node, as process information (§12.4.2.4): its `PMIX_CPUSET`
/// and `PMIX_LOCALITY_STRING`, which the host makes with the server's
/// `generate_cpuset_string` and `generate_locality_string`, and the distances from where it
/// starts to the node's devices (`PMIX_DEVICE_DISTANCES`, §12.4.11; none: not given).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    pub cpuset: String,
    pub locality: String,
    pub distances: Vec<crate::model::DeviceDistance>,
}

impl JobLaunch {
    /// The number of processes of the job.
    pub fn size(&self) -> u32 {
        self.apps.iter().map(|a| a.nprocs).sum()
    }

    /// The process sets its apps name, each with its members in rank order (apps naming the
    /// same set share it).
    pub fn psets(&self) -> Vec<(String, Vec<Proc>)> {
        let mut sets: Vec<(String, Vec<Proc>)> = Vec::new();
        for (proc, app) in self.procs() {
            let Some(name) = &self.apps[app].pset else {
                continue;
            };
            match sets.iter_mut().find(|(n, _)| n == name) {
                Some((_, members)) => members.push(proc),
                None => sets.push((name.clone(), vec![proc])),
            }
        }
        sets
    }

    /// Each process of the job in rank order, with its application's index.
    pub fn procs(&self) -> Vec<(Proc, usize)> {
        let mut out = Vec::new();
        let mut rank = 0;
        for (i, a) in self.apps.iter().enumerate() {
            for _ in 0..a.nprocs {
                out.push((Proc::new(self.nspace.clone(), Rank(rank)), i));
                rank += 1;
            }
        }
        out
    }
}

/// Decide whether a spawn request can start on `hostname` and resolve it, or give the
/// standard's status for why not (§12.2.1):
///
/// - no application, or one with no processes: `PMIX_ERR_BAD_PARAM`;
/// - an executable not found (on `PATH` when the command has no `/`):
///   `PMIX_ERR_JOB_EXE_NOT_FOUND`; found but not executable: `PMIX_ERR_JOB_APP_NOT_EXECUTABLE`;
/// - a `PMIX_WDIR` that is not a directory: `PMIX_ERR_JOB_WDIR_NOT_FOUND`;
/// - a `PMIX_HOST` or `PMIX_HOSTFILE` (in the app's or the job's info) that names no host, or
///   only hosts other than this one: `PMIX_ERR_JOB_FAILED_TO_MAP`.
pub fn plan(
    nspace: Nspace,
    hostname: &str,
    parent: Option<Proc>,
    job_info: &[Info],
    apps: &[App],
    tmpdir: &str,
) -> Result<JobLaunch, Status> {
    if apps.is_empty() {
        return Err(Status::ERR_BAD_PARAM);
    }
    let mut out = Vec::with_capacity(apps.len());
    for app in apps {
        let nprocs = u32::try_from(app.maxprocs).map_err(|_| Status::ERR_BAD_PARAM)?;
        if nprocs == 0 {
            return Err(Status::ERR_BAD_PARAM);
        }
        let directive = |a: &str| {
            app.info
                .iter()
                .chain(job_info)
                .find(|i| i.key.as_str() == a)
                .map(|i| &i.value)
        };
        for key in [attr::HOST.wire_key(), attr::HOSTFILE.wire_key()] {
            if let Some(v) = directive(key) {
                let hosts = if key == attr::HOST.wire_key() {
                    v.as_str().unwrap_or("").to_owned()
                } else {
                    let file = v.as_str().unwrap_or("");
                    std::fs::read_to_string(file).map_err(|_| Status::ERR_JOB_FAILED_TO_MAP)?
                };
                if !names_this_host(&hosts, hostname) {
                    return Err(Status::ERR_JOB_FAILED_TO_MAP);
                }
            }
        }
        let cwd = match directive(attr::WDIR.wire_key()) {
            Some(v) => {
                let dir = PathBuf::from(v.as_str().unwrap_or(""));
                if !dir.is_dir() {
                    return Err(Status::ERR_JOB_WDIR_NOT_FOUND);
                }
                Some(dir)
            }
            None => app.cwd.as_ref().map(|d| PathBuf::from(os(d))),
        };
        let cmd = app
            .cmd
            .clone()
            .or_else(|| app.argv.first().cloned().flatten())
            .ok_or(Status::ERR_BAD_PARAM)?;
        let cmd = os(&cmd);
        let exe = resolve(&cmd, cwd.as_deref())?;
        let mut argv: Vec<OsString> = app.argv.iter().flatten().map(os).collect();
        if argv.is_empty() {
            argv.push(cmd);
        }
        // Only the app's own information names its set: a job-level name would put every
        // app of the job in one set.
        let pset = app
            .info
            .iter()
            .find(|i| i.key.as_str() == attr::PSET_NAME.wire_key())
            .map(|i| {
                i.value
                    .as_str()
                    .map(str::to_owned)
                    .ok_or(Status::ERR_BAD_PARAM)
            })
            .transpose()?
            .filter(|n| !n.is_empty());
        out.push(AppLaunch {
            exe,
            argv,
            env: app.env.iter().flatten().map(os).collect(),
            cwd,
            nprocs,
            pset,
        });
    }
    Ok(JobLaunch {
        nspace,
        hostname: hostname.to_owned(),
        apps: out,
        parent,
        tmpdir: tmpdir.to_owned(),
        placement: Vec::new(),
        oversubscribed: false,
    })
}

/// Whether a host list (comma, space or line separated; host-file lines may carry `slots=`)
/// names this host.
fn names_this_host(list: &str, hostname: &str) -> bool {
    list.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty() && !w.contains('='))
        .any(|h| h == hostname || h == "localhost")
}

/// The executable a command names: a path as it is (relative to `cwd`), a bare name on
/// `PATH`.
fn resolve(cmd: &OsStr, cwd: Option<&Path>) -> Result<PathBuf, Status> {
    use std::os::unix::fs::PermissionsExt;
    let candidates: Vec<PathBuf> = if cmd.as_bytes().contains(&b'/') {
        let p = PathBuf::from(cmd);
        vec![match cwd {
            Some(d) if p.is_relative() => d.join(p),
            _ => p,
        }]
    } else {
        std::env::var_os("PATH")
            .map(|path| std::env::split_paths(&path).map(|d| d.join(cmd)).collect())
            .unwrap_or_default()
    };
    let mut found_but_not_executable = false;
    for c in candidates {
        if let Ok(m) = std::fs::metadata(&c)
            && m.is_file()
        {
            if m.permissions().mode() & 0o111 != 0 {
                return Ok(c);
            }
            found_but_not_executable = true;
        }
    }
    Err(if found_but_not_executable {
        Status::ERR_JOB_APP_NOT_EXECUTABLE
    } else {
        Status::ERR_JOB_EXE_NOT_FOUND
    })
}

fn info(key: &str, value: impl Into<Value>) -> Info {
    Info::with_key(key, value).expect("the inventory's keys are valid")
}

fn array(infos: Vec<Info>) -> Value {
    Value::DataArray(Box::new(DataArray {
        data_type: DataType::INFO,
        elements: infos
            .into_iter()
            .map(|i| Value::Info(Box::new(i)))
            .collect(),
    }))
}

/// The information to register for the job (`PMIx_server_register_nspace`): session, job,
/// node, application and process realms for a job whose processes all run on this node,
/// with `PMIX_PARENT_ID` and `PMIX_SPAWNED` in each process's realm for a spawned job.
pub fn job_info(job: &JobLaunch) -> Vec<Info> {
    let n = job.size();
    let host = job.hostname.as_str();
    let peers = (0..n).map(|r| r.to_string()).collect::<Vec<_>>().join(",");
    let node_map = regex::generate_regex(host).unwrap_or_else(|_| format!("raw:{host}"));
    let proc_map = regex::generate_ppn(&peers).unwrap_or_else(|_| format!("raw:{peers}"));
    let cmd_line = job
        .apps
        .iter()
        .map(|a| a.command_line().into_bytes())
        .collect::<Vec<_>>()
        .join(&b':');
    let num_apps = u32::try_from(job.apps.len()).unwrap_or(u32::MAX);
    let mut out = vec![
        info(attr::NODE_MAP.wire_key(), Value::string(node_map)),
        info(attr::PROC_MAP.wire_key(), Value::string(proc_map)),
        info(
            attr::SESSION_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::SESSION_ID.wire_key(), Value::Uint32(0)),
                info(attr::UNIV_SIZE.wire_key(), Value::Uint32(n)),
                info(attr::TMPDIR.wire_key(), Value::string(job.tmpdir.clone())),
            ]),
        ),
        info(attr::JOBID.wire_key(), Value::string(job.nspace.as_str())),
        info(attr::JOB_SIZE.wire_key(), Value::Uint32(n)),
        info(attr::MAX_PROCS.wire_key(), Value::Uint32(n)),
        info(attr::JOB_NUM_APPS.wire_key(), Value::Uint32(num_apps)),
        info(attr::NUM_NODES.wire_key(), Value::Uint32(1)),
        info(attr::NUM_SLOTS.wire_key(), Value::Uint32(n)),
        info(attr::NPROC_OFFSET.wire_key(), Value::Rank(Rank(0))),
        info(attr::NODE_LIST.wire_key(), Value::string(host)),
        info(attr::LOCAL_PEERS.wire_key(), Value::string(peers.clone())),
        info(attr::LOCAL_SIZE.wire_key(), Value::Uint32(n)),
        info(attr::LOCALLDR.wire_key(), Value::Rank(Rank(0))),
        // The job's own directory, under the session's (v5.0 §6.1.2): jobs that shared one
        // shared their processes' directories too (Open MPI names them by rank in it), so a
        // spawned job ending removed the directory of a rank of the next one starting.
        info(
            attr::NSDIR.wire_key(),
            Value::string(format!("{}/{}", job.tmpdir, job.nspace.as_str())),
        ),
        Info::text(attr::CMD_LINE, cmd_line),
        info(
            attr::NODE_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::HOSTNAME.wire_key(), Value::string(host)),
                info(attr::NODEID.wire_key(), Value::Uint32(0)),
                info(attr::NODE_SIZE.wire_key(), Value::Uint32(n)),
                info(attr::LOCAL_PEERS.wire_key(), Value::string(peers)),
                // The node's processes as processes (v5.0 §6.1.5), which OpenPMIx 6.1's
                // client example reads beside the peers' ranks.
                info(
                    attr::LOCAL_PROCS.wire_key(),
                    Value::DataArray(Box::new(DataArray {
                        data_type: DataType::PROC,
                        elements: (0..n)
                            .map(|r| Value::Proc(Proc::new(job.nspace.clone(), Rank(r))))
                            .collect(),
                    })),
                ),
                info(attr::LOCALLDR.wire_key(), Value::Rank(Rank(0))),
                info(attr::LOCAL_SIZE.wire_key(), Value::Uint32(n)),
                info(
                    attr::NODE_OVERSUBSCRIBED.wire_key(),
                    Value::Bool(job.oversubscribed),
                ),
            ]),
        ),
    ];
    let mut first = 0u32;
    for (i, a) in job.apps.iter().enumerate() {
        let appnum = u32::try_from(i).unwrap_or(u32::MAX);
        out.push(info(
            attr::APP_INFO_ARRAY.wire_key(),
            array(vec![
                info(attr::APPNUM.wire_key(), Value::Uint32(appnum)),
                info(attr::APP_SIZE.wire_key(), Value::Uint32(a.nprocs)),
                info(attr::APPLDR.wire_key(), Value::Rank(Rank(first))),
                Info::text(attr::APP_ARGV, a.command_line()),
            ]),
        ));
        first += a.nprocs;
    }
    for (proc, app) in job.procs() {
        let r = proc.rank.0;
        let appnum = u32::try_from(app).unwrap_or(u32::MAX);
        let app_first: u32 = job.apps[..app].iter().map(|a| a.nprocs).sum();
        let small = u16::try_from(r).unwrap_or(u16::MAX);
        let mut realm = vec![
            info(attr::RANK.wire_key(), Value::Rank(Rank(r))),
            info(attr::LOCAL_RANK.wire_key(), Value::Uint16(small)),
            info(attr::NODE_RANK.wire_key(), Value::Uint16(small)),
            info(attr::APPNUM.wire_key(), Value::Uint32(appnum)),
            info(attr::APP_RANK.wire_key(), Value::Rank(Rank(r - app_first))),
            info(attr::GLOBAL_RANK.wire_key(), Value::Rank(Rank(r))),
            info(attr::HOSTNAME.wire_key(), Value::string(host)),
            info(attr::NODEID.wire_key(), Value::Uint32(0)),
        ];
        if let Some(p) = job.placement.get(r as usize) {
            realm.push(Info::new(attr::CPUSET, p.cpuset.clone()));
            realm.push(Info::new(attr::LOCALITY_STRING, p.locality.clone()));
            if !p.distances.is_empty() {
                let distances = DataArray {
                    data_type: DataType::DEVICE_DIST,
                    elements: (p.distances.iter())
                        .map(|d| Value::DeviceDist(Box::new(d.clone())))
                        .collect(),
                };
                realm.push(Info::new(attr::DEVICE_DISTANCES, distances));
            }
        }
        // The sets it belongs to (§14.1: a process's PMIX_PSET_NAMES).
        if let Some(set) = &job.apps[app].pset {
            let names = DataArray {
                data_type: DataType::STRING,
                elements: vec![Value::string(set.clone())],
            };
            realm.push(Info::new(attr::PSET_NAMES, names));
        }
        // Both are process-realm attributes (§6.1.4).
        if let Some(parent) = &job.parent {
            realm.push(Info::new(attr::PARENT_ID, parent.clone()));
            realm.push(Info::new(attr::SPAWNED, true));
        }
        out.push(info(attr::PROC_INFO_ARRAY.wire_key(), array(realm)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(cmd: &str, n: i32, info: Vec<Info>) -> App {
        App {
            cmd: Some(cmd.into()),
            argv: vec![Some(cmd.into()), Some("x".into())],
            maxprocs: n,
            info,
            ..App::default()
        }
    }

    fn plan_of(apps: &[App], job_info: &[Info]) -> Result<JobLaunch, Status> {
        let parent = Proc::try_new("parent", 3).unwrap();
        plan(
            Nspace::new("child").unwrap(),
            "n0",
            Some(parent),
            job_info,
            apps,
            "/tmp",
        )
    }

    #[test]
    fn a_request_that_cannot_start_gets_the_standards_job_status() {
        let wdir = |d: &str| vec![Info::new(attr::WDIR, d.to_owned())];
        let plain = std::env::temp_dir().join(format!("pmix-launch-test-{}", std::process::id()));
        std::fs::write(&plain, "not a program").unwrap();
        let plain_file = plain.display().to_string();
        let cases = [
            (vec![], Status::ERR_BAD_PARAM),
            (vec![app("/bin/sh", 0, vec![])], Status::ERR_BAD_PARAM),
            (
                vec![app("/nonexistent/exe", 1, vec![])],
                Status::ERR_JOB_EXE_NOT_FOUND,
            ),
            (
                vec![app("no-such-program-on-path", 1, vec![])],
                Status::ERR_JOB_EXE_NOT_FOUND,
            ),
            (
                vec![app(&plain_file, 1, vec![])],
                Status::ERR_JOB_APP_NOT_EXECUTABLE,
            ),
            (
                vec![app("/bin/sh", 1, wdir("/nonexistent/dir"))],
                Status::ERR_JOB_WDIR_NOT_FOUND,
            ),
            (
                vec![app(
                    "/bin/sh",
                    1,
                    vec![Info::new(attr::HOSTFILE, "/dev/null".to_owned())],
                )],
                Status::ERR_JOB_FAILED_TO_MAP,
            ),
            (
                vec![app(
                    "/bin/sh",
                    1,
                    vec![Info::new(attr::HOST, "elsewhere".to_owned())],
                )],
                Status::ERR_JOB_FAILED_TO_MAP,
            ),
        ];
        for (apps, want) in cases {
            assert_eq!(plan_of(&apps, &[]).err(), Some(want), "{apps:?}");
        }
        let _ = std::fs::remove_file(&plain);
        // A job-level directive applies to every app.
        let job_wdir = wdir("/nonexistent/dir");
        assert_eq!(
            plan_of(&[app("/bin/sh", 1, vec![])], &job_wdir).err(),
            Some(Status::ERR_JOB_WDIR_NOT_FOUND)
        );
    }

    #[test]
    fn an_oversubscribed_node_says_so_in_its_realm() {
        let node = |job: &JobLaunch| {
            let info = job_info(job);
            let node = info.into_iter().find(|i| i.is(attr::NODE_INFO_ARRAY));
            let Some(Value::DataArray(node)) = node.map(|i| i.value) else {
                panic!("no node realm");
            };
            node.elements.into_iter().find_map(|v| match v {
                Value::Info(i) => i.get(attr::NODE_OVERSUBSCRIBED),
                _ => None,
            })
        };
        let mut job = plan_of(&[app("sh", 2, vec![])], &[]).unwrap();
        assert_eq!(node(&job), Some(false));
        job.oversubscribed = true;
        assert_eq!(node(&job), Some(true));
    }

    #[test]
    fn a_spawned_jobs_information_names_its_parent_and_its_command_line() {
        let here = vec![Info::new(attr::HOST, "n0,n1".to_owned())];
        let job = plan_of(&[app("sh", 2, here), app("/bin/true", 1, vec![])], &[]).unwrap();
        assert_eq!(job.size(), 3);
        assert_eq!(job.apps[0].exe.file_name().unwrap(), "sh");
        let procs = job.procs();
        assert_eq!(procs[2], (Proc::try_new("child", 2).unwrap(), 1));
        let info = job_info(&job);
        let find = |key: &str| info.iter().find(|i| i.key.as_str() == key);
        assert_eq!(
            find(attr::CMD_LINE.wire_key()).and_then(|i| i.value.as_str()),
            Some("sh x:/bin/true x")
        );
        // The job's directory is its own, under the session's.
        assert_eq!(
            find(attr::NSDIR.wire_key()).and_then(|i| i.value.as_str()),
            Some("/tmp/child")
        );
        // The parent is in each process's realm, with PMIX_SPAWNED.
        let realms: Vec<&Info> = info
            .iter()
            .filter(|i| i.key.as_str() == attr::PROC_INFO_ARRAY.wire_key())
            .collect();
        assert_eq!(realms.len(), 3);
        let Value::DataArray(last) = &realms[2].value else {
            panic!("not an array");
        };
        let has = |key: &str, want: &Value| {
            last.elements
                .iter()
                .any(|v| matches!(v, Value::Info(i) if i.key.as_str() == key && &i.value == want))
        };
        let parent = Value::Proc(Proc::try_new("parent", 3).unwrap());
        assert!(has(attr::PARENT_ID.wire_key(), &parent));
        assert!(has(attr::SPAWNED.wire_key(), &Value::Bool(true)));
        assert!(has(attr::APP_RANK.wire_key(), &Value::Rank(Rank(0))));
    }

    #[test]
    fn apps_name_their_process_sets_and_each_process_lists_its_own() {
        let set = |n: &str| vec![Info::new(attr::PSET_NAME, n.to_owned())];
        let apps = [
            app("/bin/true", 2, set("ocean")),
            app("/bin/true", 1, vec![]),
            app("/bin/true", 1, set("ocean")),
        ];
        let job = plan_of(&apps, &[]).unwrap();
        let p = |r| Proc::try_new("child", r).unwrap();
        assert_eq!(
            job.psets(),
            vec![("ocean".to_owned(), vec![p(0), p(1), p(3)])]
        );
        let info = job_info(&job);
        let names_of = |realm: &Value| {
            let Value::DataArray(items) = realm else {
                return None;
            };
            items.elements.iter().find_map(|v| match v {
                Value::Info(i) if i.key.as_str() == attr::PSET_NAMES.wire_key() => {
                    Some(i.value.clone())
                }
                _ => None,
            })
        };
        let listed: Vec<Option<Value>> = info
            .iter()
            .filter(|i| i.key.as_str() == attr::PROC_INFO_ARRAY.wire_key())
            .map(|i| names_of(&i.value))
            .collect();
        let ocean = Some(Value::from(DataArray {
            data_type: DataType::STRING,
            elements: vec![Value::string("ocean")],
        }));
        assert_eq!(listed, vec![ocean.clone(), ocean.clone(), None, ocean]);
        // A name that is not a string is refused.
        let number = Info::with_key(attr::PSET_NAME.wire_key(), Value::Uint32(3)).unwrap();
        let odd = app("/bin/true", 1, vec![number]);
        assert_eq!(plan_of(&[odd], &[]), Err(Status::ERR_BAD_PARAM));
    }
}
