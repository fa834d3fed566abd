//! The tool side (v5.0 ch. 18): how a tool finds a server, and the connections it keeps.
//!
//! A tool names the server it wants with one attribute (§18.1.1): its URI
//! (`PMIX_SERVER_URI`, `PMIX_TCP_URI`), a file holding it (`PMIX_TOOL_ATTACHMENT_FILE`), or
//! where the server left its rendezvous file: by the server's pid (`PMIX_SERVER_PIDINFO`),
//! its namespace (`PMIX_SERVER_NSPACE`), or the node's system-level server
//! (`PMIX_CONNECT_TO_SYSTEM`, `PMIX_CONNECT_SYSTEM_FIRST`). Servers write those files
//! (this crate's when asked, `ServerConfig::tool_rendezvous` and `system_rendezvous`, and
//! OpenPMIx's alike) in their temporary directory: `pmix.<host>.tool.<pid>`,
//! `pmix.<host>.tool.<nspace>` and `pmix.sys.<host>`, the server's URI on the first line.
//! A tool that names no server takes the one its environment names (a tool a server
//! launched), else the system server, else any server whose file it finds.
//!
//! [`Tool`] keeps the tool's connections, one blocking client each, and which of them is
//! the primary server, where the tool's calls go.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::Error;
use crate::codec::BufferType;
use crate::model::{Info, Proc, Rank, Status, attr};
use crate::transport::{default_tmpdir, kernel_hostname};
use crate::wire::PeerVersion;
use crate::wire::uri::parse_uri;

use super::blocking::Client;

/// Which server a tool asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Locator {
    /// By its URI (`PMIX_SERVER_URI` or `PMIX_TCP_URI`).
    Uri(String),
    /// The URI in this file (`PMIX_TOOL_ATTACHMENT_FILE`).
    File(PathBuf),
    /// The server of this pid (`PMIX_SERVER_PIDINFO`).
    Pid(i32),
    /// The server of this namespace (`PMIX_SERVER_NSPACE`).
    Nspace(String),
    /// The node's system-level server (`PMIX_CONNECT_TO_SYSTEM`).
    System,
    /// The system-level server if there is one, else any (`PMIX_CONNECT_SYSTEM_FIRST`).
    SystemFirst,
    /// None named: the environment's, else the system's, else any.
    Any,
}

/// A search for a server: what is asked for, and where rendezvous files are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    pub locator: Locator,
    /// Where servers leave their rendezvous files, searched in order: the attributes'
    /// `PMIX_SERVER_TMPDIR` and `PMIX_SYSTEM_TMPDIR`, else the tool's own, then the
    /// environment's (what a launcher gave the processes it started), then `$TMPDIR` or
    /// `/tmp`.
    pub dirs: Vec<PathBuf>,
    /// The node's name in the files' names (`PMIX_HOSTNAME`, else the kernel's).
    pub hostname: String,
}

impl Search {
    /// The server `info` asks for (`PMIx_tool_init`'s or `PMIx_tool_attach_to_server`'s
    /// attributes); where it says nothing of the directory or the host name, `base`'s (the
    /// tool's own) hold. Two URIs are `PMIX_ERR_BAD_PARAM`: the standard allows one.
    pub fn from_info(info: &[Info], base: Option<&Search>) -> Result<Search, Error> {
        let string = |a: attr::Attr<String>| info.iter().find(|i| i.is(a)).and_then(|i| i.get(a));
        let flag = |a: attr::Attr<bool>| {
            (info.iter()).any(|i| i.is(a) && i.value.as_bool().unwrap_or(true))
        };
        let locator = match (string(attr::SERVER_URI), string(attr::TCP_URI)) {
            (Some(_), Some(_)) => {
                return Err(Error::Status(
                    Status::ERR_BAD_PARAM,
                    "PMIX_SERVER_URI and PMIX_TCP_URI both given: name one server".into(),
                ));
            }
            (Some(uri), None) | (None, Some(uri)) => Locator::Uri(uri),
            (None, None) => {
                let pid = (info.iter().find(|i| i.is(attr::SERVER_PIDINFO)))
                    .and_then(|i| i.get(attr::SERVER_PIDINFO));
                if let Some(file) = string(attr::TOOL_ATTACHMENT_FILE) {
                    Locator::File(PathBuf::from(file))
                } else if let Some(pid) = pid {
                    Locator::Pid(pid)
                } else if let Some(nspace) = string(attr::SERVER_NSPACE) {
                    Locator::Nspace(nspace)
                } else if flag(attr::CONNECT_TO_SYSTEM) {
                    Locator::System
                } else if flag(attr::CONNECT_SYSTEM_FIRST) {
                    Locator::SystemFirst
                } else {
                    Locator::Any
                }
            }
        };
        let given: Vec<PathBuf> = [string(attr::SERVER_TMPDIR), string(attr::SYSTEM_TMPDIR)]
            .into_iter()
            .flatten()
            .map(PathBuf::from)
            .collect();
        let dirs = if !given.is_empty() {
            given
        } else if let Some(b) = base {
            b.dirs.clone()
        } else {
            let env = ["PMIX_SERVER_TMPDIR", "PMIX_SYSTEM_TMPDIR"]
                .iter()
                .filter_map(|k| std::env::var_os(k).filter(|v| !v.is_empty()))
                .map(PathBuf::from);
            let mut dirs: Vec<PathBuf> = Vec::new();
            for d in env.chain([default_tmpdir()]) {
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
            dirs
        };
        let hostname = (string(attr::HOSTNAME).or_else(|| base.map(|b| b.hostname.clone())))
            .unwrap_or_else(kernel_hostname);
        Ok(Search {
            locator,
            dirs,
            hostname,
        })
    }

    /// The URI of the server searched for: `PMIX_ERR_UNREACH` when there is none (the
    /// tests' shorthand for [`Self::server`]).
    #[cfg(test)]
    fn uri(&self) -> Result<String, Error> {
        self.server().map(|found| found.uri)
    }

    /// The server searched for: its URI, and its version when a rendezvous file gave it
    /// (`PMIX_ERR_UNREACH` when there is none).
    pub fn server(&self) -> Result<Rendezvous, Error> {
        let system = format!("pmix.sys.{}", self.hostname);
        let given = |uri: String| Rendezvous { uri, version: None };
        match &self.locator {
            Locator::Uri(uri) => Ok(given(uri.clone())),
            Locator::File(path) => read_rendezvous(path),
            Locator::Pid(pid) => self.file(&format!("pmix.{}.tool.{pid}", self.hostname)),
            Locator::Nspace(ns) => self.file(&format!("pmix.{}.tool.{ns}", self.hostname)),
            Locator::System => self.file(&system),
            Locator::SystemFirst => self.file(&system).or_else(|_| self.any_server()),
            Locator::Any => (environment_server().ok_or(()))
                .or_else(|()| self.file(&system))
                .or_else(|_| self.any_server()),
        }
    }

    /// The rendezvous file `name` of the first directory holding one.
    fn file(&self, name: &str) -> Result<Rendezvous, Error> {
        (self
            .dirs
            .iter()
            .find_map(|d| read_rendezvous(&d.join(name)).ok()))
        .ok_or_else(|| unreachable(format!("no rendezvous file {name} in {:?}", self.dirs)))
    }

    /// The first (by name) of the tool rendezvous files of this node, in the first
    /// directory that holds one.
    fn any_server(&self) -> Result<Rendezvous, Error> {
        let prefix = format!("pmix.{}.tool.", self.hostname);
        let in_dir = |dir: &PathBuf| {
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .ok()?
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .collect();
            files.sort();
            files.iter().find_map(|f| read_rendezvous(f).ok())
        };
        (self.dirs.iter().find_map(in_dir))
            .ok_or_else(|| unreachable(format!("no rendezvous file {prefix}* in {:?}", self.dirs)))
    }
}

/// A server found: its URI and, when its rendezvous file said, its library version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendezvous {
    pub uri: String,
    pub version: Option<PeerVersion>,
}

fn unreachable(why: String) -> Error {
    Error::Status(Status::ERR_UNREACH, why)
}

/// The server URI on a rendezvous file's first line, and its version on the second (as
/// OpenPMIx's servers and this crate's write them; OpenPMIx's tools read no more).
fn read_rendezvous(path: &Path) -> Result<Rendezvous, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| unreachable(format!("cannot read {}: {e}", path.display())))?;
    let mut lines = text.lines().map(str::trim);
    let uri = (lines.next())
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| unreachable(format!("{} holds no server URI", path.display())))?;
    let version = (lines.next())
        .filter(|l| !l.is_empty())
        .map(PeerVersion::parse);
    Ok(Rendezvous { uri, version })
}

/// The server a server put in the environment of a process it launched: its URI, and its
/// version (`PMIX_VERSION`).
fn environment_server() -> Option<Rendezvous> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let uri = ["PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3"]
        .iter()
        .find_map(|k| var(k))?;
    let version = var("PMIX_VERSION").map(|v| PeerVersion::parse(&v));
    Some(Rendezvous { uri, version })
}

/// A tool: its identifier, its connections to servers, and its primary server.
#[derive(Debug)]
pub struct Tool {
    /// Given (`PMIX_TOOL_NSPACE`, `PMIX_TOOL_RANK`), assigned by the first server, or, for a
    /// tool that starts unconnected without one, made up from its host and pid.
    me: Proc,
    base: Search,
    servers: Vec<(Proc, Arc<Client>)>,
    primary: Option<usize>,
    /// Connections made so far: each numbers its output pulls from its own base, so that a
    /// pull's reference is the tool's alone whichever server it was made with.
    connections: u64,
}

impl Tool {
    /// `PMIx_tool_init`: connect to the server `info` names, unless it says
    /// `PMIX_TOOL_DO_NOT_CONNECT`. Call it outside any tokio runtime.
    pub fn init(info: &[Info]) -> Result<Tool, Error> {
        let base = Search::from_info(info, None)?;
        let nspace =
            (info.iter().find(|i| i.is(attr::TOOL_NSPACE))).and_then(|i| i.get(attr::TOOL_NSPACE));
        let rank = (info.iter().find(|i| i.is(attr::TOOL_RANK)))
            .and_then(|i| {
                i.value
                    .as_rank()
                    .map(|r| r.0)
                    .or_else(|| i.get(attr::TOOL_RANK))
            })
            .unwrap_or(0);
        let given = match nspace {
            Some(ns) => Some(Proc::try_new(&ns, Rank(rank))?),
            None => None,
        };
        let connect = !(info.iter())
            .any(|i| i.is(attr::TOOL_DO_NOT_CONNECT) && i.value.as_bool().unwrap_or(true));
        if !connect {
            let me = match given {
                Some(p) => p,
                None => Proc::try_new(
                    &format!("{}.tool.{}", base.hostname, std::process::id()),
                    Rank(0),
                )?,
            };
            return Ok(Tool {
                me,
                base,
                servers: Vec::new(),
                primary: None,
                connections: 0,
            });
        }
        let found = base.server()?;
        let (client, server) = Client::connect_tool_at(
            &found.uri,
            found.version,
            given.as_ref(),
            BufferType::default(),
        )?;
        Ok(Tool {
            me: client.proc().clone(),
            base,
            servers: vec![(server, Arc::new(client))],
            primary: Some(0),
            connections: 1,
        })
    }

    /// The tool's identifier.
    pub fn proc(&self) -> &Proc {
        &self.me
    }

    /// `PMIx_tool_attach_to_server`: connect to the server `info` names, and make it the
    /// primary server with `PMIX_PRIMARY_SERVER` or when there is none yet. A server the
    /// tool is attached to already is not attached again (§18.5.4). Returns its identifier.
    pub fn attach(&mut self, info: &[Info]) -> Result<Proc, Error> {
        let search = Search::from_info(info, Some(&self.base))?;
        let primary =
            (info.iter()).any(|i| i.is(attr::PRIMARY_SERVER) && i.value.as_bool().unwrap_or(true));
        let found = search.server()?;
        let known = parse_uri(&found.uri).and_then(|(p, _)| self.index(&p));
        let at = match known {
            Some(at) => at,
            None => {
                let (client, server) = Client::connect_tool_at(
                    &found.uri,
                    found.version,
                    Some(&self.me),
                    BufferType::default(),
                )?;
                client.as_async().number_pulls_from(self.connections << 32);
                self.connections += 1;
                self.servers.push((server, Arc::new(client)));
                self.servers.len() - 1
            }
        };
        if primary || self.primary.is_none() {
            self.primary = Some(at);
        }
        Ok(self.servers[at].0.clone())
    }

    fn index(&self, server: &Proc) -> Option<usize> {
        self.servers.iter().position(|(p, _)| p == server)
    }

    /// `PMIx_tool_set_server`: make `server`, which the tool is attached to, its primary;
    /// `PMIX_ERR_NOT_FOUND` for another.
    pub fn set_server(&mut self, server: &Proc) -> Result<(), Error> {
        let at = self.index(server).ok_or_else(|| {
            Error::Status(
                Status::ERR_NOT_FOUND,
                format!("the tool is not attached to {server}"),
            )
        })?;
        self.primary = Some(at);
        Ok(())
    }

    /// `PMIx_tool_disconnect`: end the connection to `server`; the tool stays initialised.
    /// When it was the primary server, the first other one (if any) takes its place.
    pub fn disconnect(&mut self, server: &Proc) -> Result<(), Error> {
        let at = self.index(server).ok_or_else(|| {
            Error::Status(
                Status::ERR_NOT_FOUND,
                format!("the tool is not attached to {server}"),
            )
        })?;
        let (_, client) = self.servers.remove(at);
        self.primary = match self.primary {
            Some(p) if p == at => (!self.servers.is_empty()).then_some(0),
            Some(p) if p > at => Some(p - 1),
            other => other,
        };
        client.finalize()
    }

    /// `PMIx_tool_get_servers`: the servers the tool is attached to, in attachment order.
    pub fn servers(&self) -> Vec<Proc> {
        self.servers.iter().map(|(p, _)| p.clone()).collect()
    }

    /// The client of the primary server, where the tool's calls go.
    pub fn primary(&self) -> Option<Arc<Client>> {
        self.primary.map(|at| self.servers[at].1.clone())
    }

    /// `PMIx_tool_finalize`: end every connection. The first failure is returned, after all
    /// were ended.
    pub fn finalize(self) -> Result<(), Error> {
        let mut outcome = Ok(());
        for (_, client) in self.servers {
            let r = client.finalize();
            if outcome.is_ok() {
                outcome = r;
            }
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(a: attr::Attr<String>, v: &str) -> Info {
        Info::new(a, v.to_owned())
    }

    #[test]
    fn the_attribute_a_tool_gives_names_its_server() {
        let dir = [
            info(attr::SYSTEM_TMPDIR, "/run/x"),
            info(attr::HOSTNAME, "n0"),
        ];
        let search = |extra: Vec<Info>| {
            let all: Vec<Info> = extra.into_iter().chain(dir.iter().cloned()).collect();
            Search::from_info(&all, None).unwrap().locator
        };
        assert_eq!(
            search(vec![info(attr::SERVER_URI, "s.0;tcp4://127.0.0.1:5")]),
            Locator::Uri("s.0;tcp4://127.0.0.1:5".into())
        );
        assert_eq!(
            search(vec![Info::new(attr::SERVER_PIDINFO, 42)]),
            Locator::Pid(42)
        );
        assert_eq!(
            search(vec![info(attr::SERVER_NSPACE, "job")]),
            Locator::Nspace("job".into())
        );
        assert_eq!(
            search(vec![Info::new(attr::CONNECT_SYSTEM_FIRST, true)]),
            Locator::SystemFirst
        );
        assert_eq!(search(Vec::new()), Locator::Any);
        let both = [
            info(attr::SERVER_URI, "s.0;tcp4://127.0.0.1:5"),
            info(attr::TCP_URI, "s.0;tcp4://127.0.0.1:5"),
        ];
        let err = Search::from_info(&both, None).unwrap_err();
        assert_eq!(err.status(), Status::ERR_BAD_PARAM);
    }

    #[test]
    fn an_attach_keeps_the_tools_directory_and_host_unless_it_names_its_own() {
        let base = Search::from_info(
            &[
                info(attr::SYSTEM_TMPDIR, "/run/x"),
                info(attr::HOSTNAME, "n0"),
            ],
            None,
        )
        .unwrap();
        let same =
            Search::from_info(&[Info::new(attr::CONNECT_TO_SYSTEM, true)], Some(&base)).unwrap();
        assert_eq!(
            (same.dirs, same.hostname),
            (vec![PathBuf::from("/run/x")], "n0".into())
        );
        let own = Search::from_info(&[info(attr::SERVER_TMPDIR, "/srv")], Some(&base)).unwrap();
        assert_eq!(own.dirs, [PathBuf::from("/srv")]);
    }

    #[test]
    fn rendezvous_files_are_found_by_pid_namespace_system_and_any() {
        let dir = std::env::temp_dir().join(format!("pmix-tool-search-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, uri: &str| {
            std::fs::write(dir.join(name), format!("{uri}\n4.2.2\n1\n0:0\n")).unwrap();
        };
        write("pmix.n0.tool.77", "by-pid.0;tcp4://127.0.0.1:1");
        write("pmix.n0.tool.job", "by-ns.0;tcp4://127.0.0.1:2");
        // The files are in the second directory searched.
        let search = |locator| Search {
            locator,
            dirs: vec![dir.join("none"), dir.clone()],
            hostname: "n0".into(),
        };
        assert_eq!(
            search(Locator::Pid(77)).uri().unwrap(),
            "by-pid.0;tcp4://127.0.0.1:1"
        );
        assert_eq!(
            search(Locator::Nspace("job".into())).uri().unwrap(),
            "by-ns.0;tcp4://127.0.0.1:2"
        );
        // No system server: asking for it fails, asking for it first finds another.
        let missing = search(Locator::System).uri().unwrap_err();
        assert_eq!(missing.status(), Status::ERR_UNREACH);
        assert_eq!(
            search(Locator::SystemFirst).uri().unwrap(),
            "by-pid.0;tcp4://127.0.0.1:1"
        );
        write("pmix.sys.n0", "sys.0;tcp4://127.0.0.1:3");
        assert_eq!(
            search(Locator::SystemFirst).uri().unwrap(),
            "sys.0;tcp4://127.0.0.1:3"
        );
        // The second line is the server's version, whose layouts the tool then speaks.
        assert_eq!(
            search(Locator::Pid(77)).server().unwrap().version,
            Some(PeerVersion::parse("4.2.2"))
        );
        std::fs::write(
            dir.join("pmix.n0.tool.61"),
            "six.0;tcp4://127.0.0.1:4\nv6.1.0\n",
        )
        .unwrap();
        let six = search(Locator::Pid(61)).server().unwrap();
        assert_eq!(
            six.version.map(PeerVersion::dialect),
            Some(crate::wire::Dialect::V6)
        );
        assert!(search(Locator::Pid(78)).uri().is_err());
        let other_host = Search {
            hostname: "n1".into(),
            ..search(Locator::SystemFirst)
        };
        assert!(other_host.uri().is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
