//! How a server is set up: [`ServerConfig`], built in Rust or from the `pmix_info_t` array a
//! host hands `PMIx_server_init` (v5.0 §17.2.1 and the attributes of §17.1.3).

use std::path::PathBuf;

use super::limits::Limits;
use crate::model::{Info, Proc, Rank, Status, attr};
use crate::transport::{default_tmpdir, kernel_hostname};

/// How a server is set up.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The server's own identifier (clients see it in the URI; `PMIX_SERVER_NSPACE`,
    /// `PMIX_SERVER_RANK`).
    pub id: Proc,
    /// A directory private to this server (`PMIX_SERVER_TMPDIR`): its Unix socket and its
    /// tool rendezvous files live there.
    pub tmpdir: PathBuf,
    /// Where a system-level server leaves its rendezvous file (`PMIX_SYSTEM_TMPDIR`).
    pub system_tmpdir: PathBuf,
    /// The node's name (`PMIX_HOSTNAME`).
    pub hostname: String,
    /// Listen on TCP loopback (what OpenPMIx clients need).
    pub tcp: bool,
    /// Listen on a Unix socket in `tmpdir` as well.
    pub unix_socket: bool,
    /// Write the rendezvous files OpenPMIx tools search for (`PMIX_SERVER_TOOL_SUPPORT`):
    /// `pmix.<host>.tool.<pid>` and `pmix.<host>.tool.<server nspace>` in `tmpdir` (for a
    /// `hostname` with a domain, under its short name too), holding the URI, version, pid
    /// and `uid:gid`. Removed when the server stops.
    pub tool_rendezvous: bool,
    /// Act as the node's system-level server (`PMIX_SERVER_SYSTEM_SUPPORT`): write
    /// `pmix.sys.<host>` in `system_tmpdir`, where tools asking for the system server
    /// (`PMIX_CONNECT_TO_SYSTEM`, `PMIX_CONNECT_SYSTEM_FIRST`) look. Removed when the server
    /// stops.
    pub system_rendezvous: bool,
    /// The roles the host declares for this server.
    pub roles: Roles,
    /// The key that seals the server's credentials (`None`: a fresh one from the operating
    /// system's randomness). The simulator passes one drawn from its seed.
    pub credential_key: Option<CredentialKey>,
    /// The machine's topology as the host gives it (`PMIX_TOPOLOGY2`); `None`: the server
    /// discovers the machine when it first needs the topology.
    pub topology: Option<crate::model::Topology>,
    /// Share the topology with clients (`PMIX_SERVER_SHARE_TOPOLOGY`): every namespace
    /// registered gets the topology's hwloc XML in its job information, so that its
    /// processes load it instead of each discovering the machine again.
    pub share_topology: bool,
    /// The users whose tools and launchers may connect (default: the user this server runs
    /// as). Who a tool is comes from the kernel (see [`crate::transport`]), never from the
    /// tool; a tool may spawn, signal and query, so add a user here only if it may do that to
    /// every job of this server.
    pub tool_uids: Vec<u32>,
    /// What peers may hold of the server's memory (see [`Limits`]).
    pub limits: Limits,
}

/// A key for [`crate::server::credential`], kept out of debug output.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CredentialKey(pub [u8; 32]);

impl std::fmt::Debug for CredentialKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CredentialKey(..)")
    }
}

/// The roles a host declares for its server at init (§17.1.3). They describe the server to
/// its host's peers; the library's behaviour towards clients does not depend on them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Roles {
    /// `PMIX_SERVER_SESSION_SUPPORT`: the host is a session-level daemon that tools may
    /// attach to for the whole session.
    pub session: bool,
    /// `PMIX_SERVER_GATEWAY`: the server relays requests backend nodes cannot serve.
    pub gateway: bool,
    /// `PMIX_SERVER_SCHEDULER`: the server belongs to the system's scheduler.
    pub scheduler: bool,
}

impl ServerConfig {
    /// A server named after this process, on TCP loopback and a Unix socket in `tmpdir`.
    ///
    /// The namespace holds no dot: OpenPMIx 4.2's tools split the identifier of a URI they
    /// are given at its first dot (and the one of a rendezvous file at its last), so a dot
    /// in it made them name the server wrongly when they attached by URI.
    pub fn new(tmpdir: PathBuf, hostname: String) -> Self {
        let id = Proc::try_new(&format!("pmix-rs-server-{}", std::process::id()), 0)
            .expect("a short ASCII namespace is valid");
        ServerConfig {
            id,
            system_tmpdir: tmpdir.clone(),
            tmpdir,
            hostname,
            tcp: true,
            unix_socket: true,
            tool_rendezvous: false,
            system_rendezvous: false,
            roles: Roles::default(),
            credential_key: None,
            topology: None,
            share_topology: false,
            tool_uids: vec![crate::transport::uid_gid().0],
            limits: Limits::default(),
        }
    }

    // --- the builder: `ServerConfig::new(dir, host).tcp(false).share_topology(true)` ---

    /// The server's identifier.
    #[must_use]
    pub fn id(mut self, id: Proc) -> Self {
        self.id = id;
        self
    }

    /// Where a system-level server leaves its rendezvous file.
    #[must_use]
    pub fn system_tmpdir(mut self, dir: PathBuf) -> Self {
        self.system_tmpdir = dir;
        self
    }

    /// Listen on TCP loopback, or not.
    #[must_use]
    pub fn tcp(mut self, on: bool) -> Self {
        self.tcp = on;
        self
    }

    /// Listen on a Unix socket in `tmpdir`, or not.
    #[must_use]
    pub fn unix_socket(mut self, on: bool) -> Self {
        self.unix_socket = on;
        self
    }

    /// Write the tool rendezvous files (`PMIX_SERVER_TOOL_SUPPORT`).
    #[must_use]
    pub fn tool_rendezvous(mut self, on: bool) -> Self {
        self.tool_rendezvous = on;
        self
    }

    /// Act as the node's system-level server (`PMIX_SERVER_SYSTEM_SUPPORT`).
    #[must_use]
    pub fn system_rendezvous(mut self, on: bool) -> Self {
        self.system_rendezvous = on;
        self
    }

    /// The roles the host declares.
    #[must_use]
    pub fn roles(mut self, roles: Roles) -> Self {
        self.roles = roles;
        self
    }

    /// The key that seals the server's credentials.
    #[must_use]
    pub fn credential_key(mut self, key: CredentialKey) -> Self {
        self.credential_key = Some(key);
        self
    }

    /// The machine's topology as the host gives it (`PMIX_TOPOLOGY2`).
    #[must_use]
    pub fn topology(mut self, topology: crate::model::Topology) -> Self {
        self.topology = Some(topology);
        self
    }

    /// Share the topology with clients (`PMIX_SERVER_SHARE_TOPOLOGY`).
    #[must_use]
    pub fn share_topology(mut self, on: bool) -> Self {
        self.share_topology = on;
        self
    }

    /// The users whose tools and launchers may connect.
    #[must_use]
    pub fn tool_uids(mut self, uids: Vec<u32>) -> Self {
        self.tool_uids = uids;
        self
    }

    /// What peers may hold of the server's memory.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The configuration the attributes of `PMIx_server_init` describe: `PMIX_SERVER_NSPACE`
    /// and `PMIX_SERVER_RANK` (the server's identifier), `PMIX_SERVER_TMPDIR` and
    /// `PMIX_SYSTEM_TMPDIR` (default: `$TMPDIR`, else `/tmp`), `PMIX_HOSTNAME` (default: the
    /// kernel's host name), `PMIX_SERVER_TOOL_SUPPORT`, `PMIX_SERVER_SYSTEM_SUPPORT`,
    /// `PMIX_SERVER_SESSION_SUPPORT`, `PMIX_SERVER_GATEWAY`, `PMIX_SERVER_SCHEDULER`,
    /// `PMIX_USOCK_DISABLE`, `PMIX_TOPOLOGY2` and `PMIX_SERVER_SHARE_TOPOLOGY`. A flag given with no value is set, as the standard reads a
    /// boolean attribute. Other keys are left to the caller. An attribute of the wrong type is
    /// `PMIX_ERR_BAD_PARAM`, with the key named.
    pub fn from_info(info: &[Info]) -> Result<ServerConfig, (Status, String)> {
        let bad = |i: &Info| {
            (
                Status::ERR_BAD_PARAM,
                format!("{} has a value of the wrong type: {:?}", i.key, i.value),
            )
        };
        let mut config = ServerConfig::new(default_tmpdir(), kernel_hostname());
        let mut system_tmpdir = None;
        let (mut nspace, mut rank) = (None, Rank(0));
        for i in info {
            let flag = || match &i.value {
                crate::model::Value::Undef => Some(true),
                v => v.as_bool(),
            };
            if i.is(attr::SERVER_NSPACE) {
                nspace = Some(i.get(attr::SERVER_NSPACE).ok_or_else(|| bad(i))?);
            } else if i.is(attr::SERVER_RANK) {
                rank = i.get(attr::SERVER_RANK).ok_or_else(|| bad(i))?;
            } else if i.is(attr::SERVER_TMPDIR) {
                config.tmpdir = i.get(attr::SERVER_TMPDIR).ok_or_else(|| bad(i))?.into();
            } else if i.is(attr::SYSTEM_TMPDIR) {
                system_tmpdir = Some(PathBuf::from(
                    i.get(attr::SYSTEM_TMPDIR).ok_or_else(|| bad(i))?,
                ));
            } else if i.is(attr::HOSTNAME) {
                config.hostname = i.get(attr::HOSTNAME).ok_or_else(|| bad(i))?;
            } else if i.is(attr::SERVER_TOOL_SUPPORT) {
                config.tool_rendezvous = flag().ok_or_else(|| bad(i))?;
            } else if i.is(attr::SERVER_SYSTEM_SUPPORT) {
                config.system_rendezvous = flag().ok_or_else(|| bad(i))?;
            } else if i.is(attr::SERVER_SESSION_SUPPORT) {
                config.roles.session = flag().ok_or_else(|| bad(i))?;
            } else if i.is(attr::SERVER_GATEWAY) {
                config.roles.gateway = flag().ok_or_else(|| bad(i))?;
            } else if i.is(attr::SERVER_SCHEDULER) {
                config.roles.scheduler = flag().ok_or_else(|| bad(i))?;
            } else if i.is(attr::USOCK_DISABLE) {
                config.unix_socket = !flag().ok_or_else(|| bad(i))?;
            } else if i.is(attr::TOPOLOGY2) {
                config.topology = Some(i.get(attr::TOPOLOGY2).ok_or_else(|| bad(i))?);
            } else if i.is(attr::SERVER_SHARE_TOPOLOGY) {
                config.share_topology = flag().ok_or_else(|| bad(i))?;
            }
        }
        config.system_tmpdir = system_tmpdir.unwrap_or_else(default_tmpdir);
        if let Some(nspace) = nspace {
            config.id = Proc::try_new(&nspace, rank)
                .map_err(|e| (Status::ERR_BAD_PARAM, format!("PMIX_SERVER_NSPACE: {e}")))?;
        } else {
            config.id.rank = rank;
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Value;

    #[test]
    fn init_attributes_set_identity_directories_and_roles() {
        let info = [
            Info::new(attr::SERVER_NSPACE, "srv".to_owned()),
            Info::new(attr::SERVER_RANK, Rank(3)),
            Info::new(attr::SERVER_TMPDIR, "/a".to_owned()),
            Info::new(attr::SYSTEM_TMPDIR, "/b".to_owned()),
            Info::new(attr::HOSTNAME, "n7".to_owned()),
            Info::new(attr::SERVER_TOOL_SUPPORT, true),
            Info::with_key(attr::SERVER_SYSTEM_SUPPORT.def().key, Value::Undef).unwrap(),
            Info::new(attr::SERVER_GATEWAY, true),
            Info::new(attr::SERVER_SCHEDULER, false),
            Info::new(attr::SERVER_SESSION_SUPPORT, true),
        ];
        let c = ServerConfig::from_info(&info).unwrap();
        assert_eq!(c.id, Proc::try_new("srv", 3).unwrap());
        assert_eq!(
            (c.tmpdir.to_str(), c.system_tmpdir.to_str()),
            (Some("/a"), Some("/b"))
        );
        assert_eq!(c.hostname, "n7");
        assert!(
            c.tool_rendezvous && c.system_rendezvous,
            "a flag with no value is set"
        );
        assert_eq!(
            c.roles,
            Roles {
                session: true,
                gateway: true,
                scheduler: false
            }
        );
    }

    #[test]
    fn a_wrong_type_names_the_key() {
        let info = [Info::with_key(attr::SERVER_TOOL_SUPPORT.def().key, "yes").unwrap()];
        let (status, reason) = ServerConfig::from_info(&info).unwrap_err();
        assert_eq!(status, Status::ERR_BAD_PARAM);
        assert!(reason.contains("pmix.srvr.tool"), "{reason}");
    }

    #[test]
    fn a_rank_alone_keeps_the_default_namespace() {
        let c = ServerConfig::from_info(&[Info::new(attr::SERVER_RANK, Rank(2))]).unwrap();
        assert_eq!(c.id.rank, Rank(2));
        assert!(c.id.nspace.as_str().starts_with("pmix-rs-server-"));
        assert!(
            !c.id.nspace.as_str().contains('.'),
            "OpenPMIx's tools read up to a dot"
        );
    }
}
