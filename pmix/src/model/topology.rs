//! Topology, cpusets and fabric geometry (PMIx v5.0 §12.4 and §15.2).
//!
//! Cpusets and topologies cross the wire as text that hwloc produces and parses (a source
//! name and a bitmap list or an XML document). This layer keeps that text as it is; the
//! `topology` layer (issue 7) turns it into hwloc objects.

use super::{ByteObject, CoordView, DeviceType};

/// `pmix_cpuset_t`: a set of processing units, from a named source (`"hwloc"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cpuset {
    pub source: Option<String>,
    /// The bitmap in the source's text form (hwloc: a list such as `0-3,8`).
    pub bitmap: Option<String>,
}

/// `pmix_topology_t`: a machine topology, from a named source (`"hwloc"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Topology {
    pub source: Option<String>,
    /// The topology in the source's exchange form (hwloc: XML).
    pub topology: Option<String>,
}

/// `pmix_coord_t`: a fabric coordinate in one view (PMIx v5.0 §15.2.3).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Coord {
    pub view: CoordView,
    pub coord: Vec<u32>,
}

/// `pmix_geometry_t`: where a fabric device sits (PMIx v5.0 §15.2.5).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Geometry {
    pub fabric: u64,
    pub uuid: Option<String>,
    pub osname: Option<String>,
    pub coordinates: Vec<Coord>,
}

/// `pmix_device_distance_t`: the distance from a process to a device (PMIx v5.0 §12.4.9).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceDistance {
    pub uuid: Option<String>,
    pub osname: Option<String>,
    pub device_type: DeviceType,
    pub mindist: u16,
    pub maxdist: u16,
}

/// `pmix_endpoint_t`: a fabric endpoint of a device (PMIx v5.0 §15.2.1).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint {
    pub uuid: Option<String>,
    pub osname: Option<String>,
    pub endpt: ByteObject,
}
