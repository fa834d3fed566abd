//! Machine topology through hwloc (DESIGN §3, layer 7; v5.0 §12.4): load a topology, read a
//! process's binding, describe a cpuset as a locality string and measure how far devices are
//! from it.
//!
//! A [`Machine`] is one loaded hwloc topology: discovered on this machine (with its I/O
//! devices), or read from the XML another process exported, which is how a server shares
//! its topology with its clients (`PMIX_TOPOLOGY2`, v5.0 §17.1.3) so that none of them has to
//! rediscover it. The string forms that need no topology (cpuset strings, relative locality)
//! live in [`crate::model::topology`], so that they build and fuzz without hwloc.
//!
//! # Locality strings
//!
//! `hwloc:` (the standard requires the source as prefix, v5.0 §17.2.17) followed by one
//! `:`-separated field per level of the machine, in OpenPMIx 4.2's order
//! ([`LOCALITY_LEVELS`]: `SK` package, `L3`, `L2`, `L1` caches, `CR` core, `HT` hardware
//! thread, then `NM` NUMA node), each the level's tag and the logical indexes, in hwloc's list
//! form, of the objects of that level the cpuset touches: a process bound to PU 0 of a
//! one-package machine with one NUMA node is `hwloc:SK0:L30:L20:L10:CR0:HT0:NM0`. A level the
//! machine lacks is left out.
//! [`relative_locality`](crate::model::topology::relative_locality) reads them back.
//!
//! # Device distances
//!
//! A device's distance from a processing unit is the number of edges between the unit and the
//! device's locality (its first ancestor that is not an I/O object) in the topology tree: 0
//! when the device hangs below the unit, more the further up their common ancestor is. The
//! minimum and maximum run over the units of the cpuset. Distances compare only within one
//! device type, as the standard says (§12.4.9).

use hwlocality::Topology as Hwloc;
use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::cpu::cpuset::CpuSet;
use hwlocality::object::TopologyObject;
use hwlocality::object::types::{OSDeviceType, ObjectType};
use hwlocality::topology::builder::{BuildFlags, TypeFilter};
use hwlocality::topology::export::xml::XMLExportFlags;

use crate::Error;
use crate::model::topology::{LOCALITY_LEVELS, PuList, cpuset_list};
use crate::model::{Cpuset, DeviceDistance, DeviceType, Info, Topology, attr};

/// The key under which a server shares its topology as hwloc XML (version 2) in a job's
/// information: not one of the standard's attributes, but where an OpenPMIx 4.2 client looks
/// for it (with the job's wildcard rank) when it loads a topology, as
/// [`crate::client::Client::load_topology`] does after `PMIX_TOPOLOGY2`.
pub const HWLOC_XML_V2: &str = "pmix.hwlocxml2";

/// The hwloc object type of each level of a locality string, in [`LOCALITY_LEVELS`] order.
const LEVEL_TYPES: [ObjectType; 7] = [
    ObjectType::Package,
    ObjectType::L3Cache,
    ObjectType::L2Cache,
    ObjectType::L1Cache,
    ObjectType::Core,
    ObjectType::PU,
    ObjectType::NUMANode,
];

/// One loaded hwloc topology.
#[derive(Debug)]
pub struct Machine {
    hwloc: Hwloc,
}

/// Why hwloc refused: the standard's status for a failed topology operation.
fn hwloc_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Status(
        crate::model::Status::ERR_NOT_AVAILABLE,
        format!("{what}: {e}"),
    )
}

impl Machine {
    /// Discover this machine, its I/O devices included (what device distances need).
    pub fn discover() -> Result<Machine, Error> {
        let hwloc = Hwloc::builder()
            .with_io_type_filter(TypeFilter::KeepImportant)
            .map_err(|e| hwloc_error("keeping I/O devices", e))?
            .build()
            .map_err(|e| hwloc_error("discovering this machine's topology", e))?;
        Ok(Machine { hwloc })
    }

    /// The topology another process exported as hwloc XML. The text comes from outside
    /// (a server, a file), so anything hwloc cannot read is `BadParam`.
    pub fn from_xml(xml: &str) -> Result<Machine, Error> {
        Machine::read_xml(xml, false)
    }

    /// The topology of *this* machine, exported as XML by another process on it (a client's
    /// server shares its topology so): binding calls act on this machine as if it had been
    /// discovered here.
    pub fn from_xml_of_this_machine(xml: &str) -> Result<Machine, Error> {
        Machine::read_xml(xml, true)
    }

    fn read_xml(xml: &str, this_machine: bool) -> Result<Machine, Error> {
        let bad = |e: &dyn std::fmt::Display| {
            Error::BadParam(format!("the topology's XML is not hwloc's: {e}"))
        };
        let flags = if this_machine {
            BuildFlags::ASSUME_THIS_SYSTEM
        } else {
            BuildFlags::empty()
        };
        let builder = Hwloc::builder()
            .with_flags(flags)
            .map_err(|e| bad(&e))?
            .with_io_type_filter(TypeFilter::KeepImportant)
            .map_err(|e| bad(&e))?
            .from_xml(xml)
            .map_err(|e| bad(&e))?;
        Ok(Machine {
            hwloc: builder.build().map_err(|e| bad(&e))?,
        })
    }

    /// A synthetic topology in hwloc's description language (`"pack:2 core:2 pu:2"`): the
    /// same on every machine, for tests and the simulator.
    pub fn synthetic(description: &str) -> Result<Machine, Error> {
        let bad = |e: &dyn std::fmt::Display| {
            Error::BadParam(format!("synthetic topology {description:?}: {e}"))
        };
        let hwloc = Hwloc::builder()
            .from_synthetic(description)
            .map_err(|e| bad(&e))?
            .build()
            .map_err(|e| bad(&e))?;
        Ok(Machine { hwloc })
    }

    /// A `pmix_topology_t` as a machine: its source must be hwloc (or unnamed) and it must
    /// carry the XML.
    pub fn from_topology(topology: &Topology) -> Result<Machine, Error> {
        if let Some(source) = &topology.source
            && !source.eq_ignore_ascii_case("hwloc")
        {
            return Err(Error::NotSupported(format!(
                "a topology from source {source:?}: only hwloc's are understood"
            )));
        }
        match &topology.topology {
            Some(xml) => Machine::from_xml(xml),
            None => Err(Error::BadParam(
                "the topology carries no description".into(),
            )),
        }
    }

    /// This machine as a `pmix_topology_t`: source `hwloc` and hwloc's XML (version 2).
    pub fn to_topology(&self) -> Result<Topology, Error> {
        let xml = self
            .hwloc
            .export_xml(XMLExportFlags::empty())
            .map_err(|e| hwloc_error("exporting the topology", e))?;
        let text: &str = xml.as_ref();
        Ok(Topology {
            source: Some("hwloc".into()),
            topology: Some(text.to_owned()),
        })
    }

    /// The machine's physical memory in bytes, as hwloc counts it under its root.
    pub fn total_memory(&self) -> u64 {
        self.hwloc.root_object().total_memory()
    }

    /// Every processing unit of the machine that this process may use.
    pub fn all(&self) -> Cpuset {
        hwloc_cpuset(&self.hwloc.cpuset())
    }

    /// `PMIx_Get_cpuset`: the processing units the calling process (or, with `thread`, the
    /// calling thread) is bound to.
    pub fn binding(&self, thread: bool) -> Result<Cpuset, Error> {
        let flags = if thread {
            CpuBindingFlags::THREAD
        } else {
            CpuBindingFlags::PROCESS
        };
        let set = self
            .hwloc
            .cpu_binding(flags)
            .map_err(|e| hwloc_error("reading the CPU binding", e))?;
        Ok(hwloc_cpuset(&set))
    }

    /// The cpusets of the machine's cores (`per_thread`: of its hardware threads), in
    /// logical order: what a launcher binds processes to, one unit each, round robin.
    pub fn units(&self, per_thread: bool) -> Vec<Cpuset> {
        let ty = if per_thread {
            ObjectType::PU
        } else {
            ObjectType::Core
        };
        let allowed = self.hwloc.cpuset();
        self.hwloc
            .objects_with_type(ty)
            .filter_map(|o| o.cpuset())
            .filter(|c| c.intersects(&*allowed))
            .map(|c| hwloc_cpuset(&c))
            .collect()
    }

    /// Bind the calling thread to `cpuset`; a process it starts next inherits the binding.
    pub fn bind_this_thread(&self, cpuset: &Cpuset) -> Result<(), Error> {
        let set = self.set(cpuset)?;
        self.hwloc
            .bind_cpu(&set, CpuBindingFlags::THREAD)
            .map_err(|e| hwloc_error("binding the thread", e))
    }

    /// `PMIx_server_generate_locality_string`: where `cpuset` sits in this machine (the
    /// format is in the module's documentation). An empty cpuset, or one that touches no
    /// processing unit of the machine, is `BadParam`.
    pub fn locality_string(&self, cpuset: &Cpuset) -> Result<String, Error> {
        let set = self.set(cpuset)?;
        let mut out = String::from("hwloc:");
        for ((tag, _), ty) in LOCALITY_LEVELS.iter().zip(LEVEL_TYPES) {
            let touched: Vec<(u32, u32)> = self
                .hwloc
                .objects_with_type(ty)
                .filter(|o| o.cpuset().is_some_and(|c| c.intersects(&set)))
                .filter_map(|o| u32::try_from(o.logical_index()).ok())
                .map(|i| (i, i))
                .collect();
            if !touched.is_empty() {
                if !out.ends_with(':') {
                    out.push(':');
                }
                out.push_str(tag);
                out.push_str(&PuList::from_ranges(touched).to_string());
            }
        }
        if out.len() == "hwloc:".len() {
            return Err(Error::BadParam(format!(
                "cpuset {:?} touches no processing unit of this machine",
                cpuset.bitmap
            )));
        }
        Ok(out)
    }

    /// `PMIx_Compute_distances`: [`Machine::distances`] of the devices `directives` choose
    /// (`PMIX_DEVICE_TYPE`, a mask; `PMIX_DEVICE_ID`, one device, by name or identifier).
    pub fn compute_distances(
        &self,
        cpuset: &Cpuset,
        directives: &[Info],
    ) -> Result<Vec<DeviceDistance>, Error> {
        let types = directives
            .iter()
            .find_map(|i| i.get(attr::DEVICE_TYPE))
            .unwrap_or(DeviceType::UNKNOWN);
        let ids: Vec<String> = directives
            .iter()
            .filter_map(|i| i.get(attr::DEVICE_ID))
            .collect();
        self.distances(cpuset, types, &ids)
    }

    /// `PMIx_Compute_distances`: the distance from `cpuset` to each device of `types`
    /// (`DeviceType::UNKNOWN`: every type) whose name or identifier is one of `ids` (empty:
    /// any), in the topology's order.
    pub fn distances(
        &self,
        cpuset: &Cpuset,
        types: DeviceType,
        ids: &[String],
    ) -> Result<Vec<DeviceDistance>, Error> {
        let set = self.set(cpuset)?;
        let pus: Vec<&TopologyObject> = self
            .hwloc
            .objects_inside_cpuset_with_type(&set, ObjectType::PU)
            .collect();
        let mut out = Vec::new();
        for device in self.hwloc.os_devices() {
            let Some(device_type) = device_type(device) else {
                continue;
            };
            if types.0 != 0 && types.0 & device_type.0 == 0 {
                continue;
            }
            let osname = device.name().map(|n| n.to_string_lossy().into_owned());
            let uuid = device_uuid(device, osname.as_deref());
            if !ids.is_empty()
                && !ids
                    .iter()
                    .any(|id| Some(id) == osname.as_ref() || *id == uuid)
            {
                continue;
            }
            let Some(home) = device.first_non_io_ancestor() else {
                continue;
            };
            let hops: Vec<u16> = pus.iter().map(|pu| hops(pu, home)).collect();
            out.push(DeviceDistance {
                uuid: Some(uuid),
                osname,
                device_type,
                mindist: hops.iter().copied().min().unwrap_or(u16::MAX),
                maxdist: hops.iter().copied().max().unwrap_or(u16::MAX),
            });
        }
        Ok(out)
    }

    /// `cpuset` as an hwloc set of this machine's units (empty, or none of the machine's:
    /// `BadParam`).
    fn set(&self, cpuset: &Cpuset) -> Result<CpuSet, Error> {
        let list = cpuset_list(cpuset)?;
        let mut set = CpuSet::new();
        for &(lo, hi) in list.ranges() {
            set.set_range(lo as usize..=hi as usize);
        }
        if !set.intersects(&*self.hwloc.cpuset()) {
            return Err(Error::BadParam(format!(
                "cpuset {:?} holds no processing unit of this machine",
                cpuset.bitmap
            )));
        }
        Ok(set)
    }
}

/// An hwloc set as a `pmix_cpuset_t`.
fn hwloc_cpuset(set: &CpuSet) -> Cpuset {
    let ranges = set
        .iter_set()
        .filter_map(|i| u32::try_from(usize::from(i)).ok())
        .map(|i| (i, i))
        .collect();
    Cpuset {
        source: Some("hwloc".into()),
        bitmap: Some(PuList::from_ranges(ranges).to_string()),
    }
}

/// The standard's device type of an hwloc OS device (none for memory devices, which the
/// standard has no type for).
fn device_type(device: &TopologyObject) -> Option<DeviceType> {
    use hwlocality::object::attributes::ObjectAttributes;
    let Some(ObjectAttributes::OSDevice(attrs)) = device.attributes() else {
        return None;
    };
    Some(match attrs.device_type() {
        OSDeviceType::Storage => DeviceType::BLOCK,
        OSDeviceType::GPU => DeviceType::GPU,
        OSDeviceType::Network => DeviceType::NETWORK,
        OSDeviceType::OpenFabrics => DeviceType::OPENFABRICS,
        OSDeviceType::DMA => DeviceType::DMA,
        OSDeviceType::CoProcessor => DeviceType::COPROC,
        _ => return None,
    })
}

/// A device's identifier: the PCI address of the device it belongs to and its name
/// (`pci:0000:00:03.0:eth0`), or its name alone for a device hwloc sees on no PCI bus.
fn device_uuid(device: &TopologyObject, osname: Option<&str>) -> String {
    use hwlocality::object::attributes::ObjectAttributes;
    let name = osname.unwrap_or("unnamed");
    let pci = device.ancestors().find_map(|a| match a.attributes() {
        Some(ObjectAttributes::PCIDevice(p)) => Some(format!(
            "{:04x}:{:02x}:{:02x}.{:x}",
            p.domain(),
            p.bus_id(),
            p.bus_device(),
            p.function()
        )),
        _ => None,
    });
    match pci {
        Some(address) => format!("pci:{address}:{name}"),
        None => format!("os:{name}"),
    }
}

/// The number of edges between two objects of the tree.
fn hops(a: &TopologyObject, b: &TopologyObject) -> u16 {
    let depth = |o: &TopologyObject| o.ancestors().count();
    let common = if std::ptr::eq(a, b) || b.is_in_subtree(a) {
        Some(a)
    } else if a.is_in_subtree(b) {
        Some(b)
    } else {
        a.first_common_ancestor(b)
    };
    match common {
        Some(c) => {
            let edges = depth(a) + depth(b) - 2 * depth(c);
            u16::try_from(edges).unwrap_or(u16::MAX - 1)
        }
        None => u16::MAX,
    }
}

#[cfg(test)]
mod tests;
