//! The client's topology calls (v5.0 §12.4): load the machine's topology once, read this
//! process's binding, and measure device distances from it. The string functions that need
//! no topology are [`crate::model::topology::relative_locality`] (`PMIx_Get_relative_locality`)
//! and [`crate::model::topology::parse_cpuset_string`] (`PMIx_Parse_cpuset_string`).

use crate::Error;
use std::sync::Arc;

use crate::model::{Cpuset, DeviceDistance, Info, Proc, Rank, Status, Value, attr};
use crate::topology::{HWLOC_XML_V2, Machine};

use super::{Client, Pending};

impl Client {
    fn machine(&self) -> std::sync::MutexGuard<'_, Option<Arc<Machine>>> {
        (self.inner.machine.lock()).unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `PMIx_Load_topology`: this machine's topology, loaded once per client. The server's
    /// shared copy comes first (`PMIX_TOPOLOGY2` in the job's information, then the hwloc XML
    /// an OpenPMIx server shares), so that the processes of a node do not each rediscover
    /// it; without one, the client discovers the machine itself.
    pub async fn load_topology(&self) -> Result<Arc<Machine>, Error> {
        if let Some(m) = &*self.machine() {
            return Ok(Arc::clone(m));
        }
        let machine = Arc::new(match self.shared_topology().await {
            Some(m) => m,
            None => Machine::discover().map_err(|e| {
                tracing::warn!("PMIx_Load_topology: {e}");
                e.status()
            })?,
        });
        // Two loads at once both finish; the first one kept is the one every caller sees.
        Ok(Arc::clone(self.machine().get_or_insert(machine)))
    }

    /// `PMIx_Load_topology` with the `source` field set: the description must come from
    /// that implementation, else the call is `PMIX_ERR_NOT_SUPPORTED` (v5.0 §12.4.1). This
    /// crate's descriptions are hwloc's, so `"hwloc"` (compared without case, as the
    /// standard's `pmix_topology_t` says) is the one source available.
    pub async fn load_topology_of(&self, source: &str) -> Result<Arc<Machine>, Error> {
        if !source.eq_ignore_ascii_case("hwloc") {
            return Err(Status::ERR_NOT_SUPPORTED.into());
        }
        self.load_topology().await
    }

    /// The topology the server shares, when it shares one this client can read.
    async fn shared_topology(&self) -> Option<Machine> {
        let job = Proc::new(self.nspace().clone(), Rank::WILDCARD);
        let optional = [Info::new(attr::OPTIONAL, true)];
        let unreadable = |what: &str, e: crate::Error| {
            tracing::warn!("the server's topology ({what}) is unreadable, discovering: {e}");
            None
        };
        if let Ok(Value::Topo(t)) = self
            .get(Some(&job), attr::TOPOLOGY2.wire_key(), &optional)
            .await
        {
            match t.topology.as_deref().map(Machine::from_xml_of_this_machine) {
                Some(Ok(m)) => return Some(m),
                Some(Err(e)) => return unreadable("PMIX_TOPOLOGY2", e),
                None => {}
            }
        }
        match self.get(Some(&job), HWLOC_XML_V2, &optional).await {
            Ok(Value::String(Some(xml))) => {
                match xml.to_utf8().and_then(Machine::from_xml_of_this_machine) {
                    Ok(m) => Some(m),
                    Err(e) => unreadable(HWLOC_XML_V2, e),
                }
            }
            _ => None,
        }
    }

    /// `PMIx_Get_cpuset`: the processing units this process (or, with `thread`, the calling
    /// thread) is bound to.
    pub async fn get_cpuset(&self, thread: bool) -> Result<Cpuset, Error> {
        let machine = self.load_topology().await?;
        machine.binding(thread)
    }

    /// `PMIx_Compute_distances`: the distances from `cpuset` to the devices of `machine`
    /// that `directives` choose (`PMIX_DEVICE_TYPE`, `PMIX_DEVICE_ID`; none: every device).
    pub fn compute_distances(
        machine: &Machine,
        cpuset: &Cpuset,
        directives: &[Info],
    ) -> Result<Vec<DeviceDistance>, Error> {
        machine.compute_distances(cpuset, directives)
    }

    /// `PMIx_Compute_distances_nb` (see [`Client::compute_distances`]).
    pub fn compute_distances_nb(
        machine: Arc<Machine>,
        cpuset: Cpuset,
        directives: Vec<Info>,
    ) -> Pending<Vec<DeviceDistance>> {
        Pending(tokio::task::spawn_blocking(move || {
            Client::compute_distances(&machine, &cpuset, &directives)
        }))
    }
}
