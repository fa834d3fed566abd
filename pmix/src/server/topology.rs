//! The server's topology calls (v5.0 §17.2.17, §17.2.18): locality and cpuset strings for the
//! host to give its clients as process information (`PMIX_LOCALITY_STRING`, `PMIX_CPUSET`),
//! and the topology shared with clients (`PMIX_SERVER_SHARE_TOPOLOGY`).

use std::sync::Arc;

use crate::Error;
use crate::model::{Cpuset, Info, attr, topology};
use crate::topology::{HWLOC_XML_V2, Machine};

use super::Server;

impl Server {
    /// The machine's topology: the one the host gave at init (`PMIX_TOPOLOGY2`), else this
    /// machine, discovered once on first use.
    pub fn topology(&self) -> Result<Arc<Machine>, Error> {
        self.machine
            .get_or_init(|| {
                let loaded = match &self.config.topology {
                    Some(t) => Machine::from_topology(t),
                    None => Machine::discover(),
                };
                loaded.map(Arc::new).inspect_err(|e| {
                    tracing::warn!("the server has no topology: {e}");
                })
            })
            .clone()
    }

    /// `PMIx_server_generate_locality_string`: the locality string of a process bound to
    /// `cpuset` on this server's machine (format: [`crate::topology`]).
    pub fn generate_locality_string(&self, cpuset: &Cpuset) -> Result<String, Error> {
        self.topology()?.locality_string(cpuset)
    }

    /// `PMIx_server_generate_cpuset_string`: `cpuset` as a `PMIX_CPUSET` string
    /// (`hwloc:0-3`).
    pub fn generate_cpuset_string(&self, cpuset: &Cpuset) -> Result<String, Error> {
        topology::cpuset_string(cpuset)
    }

    /// `info` with the shared topology added, when this server shares it and the host gave
    /// none of its own. The topology goes as hwloc XML in a string, which OpenPMIx clients
    /// read as well as this crate's.
    pub(super) fn with_shared_topology(&self, mut info: Vec<Info>) -> Vec<Info> {
        let given = info
            .iter()
            .any(|i| i.is(attr::TOPOLOGY2) || i.key.as_str() == HWLOC_XML_V2);
        if !self.config.share_topology || given {
            return info;
        }
        match self.topology().map(|m| m.to_topology()) {
            Ok(Ok(t)) => {
                if let Some(xml) = t.topology
                    && let Ok(shared) = Info::with_key(HWLOC_XML_V2, xml)
                {
                    info.push(shared);
                }
            }
            Ok(Err(e)) => tracing::warn!("the topology is not shared: {e}"),
            Err(_) => {}
        }
        info
    }
}
