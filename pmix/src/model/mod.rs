//! The standard's data types as Rust types (DESIGN §3.1).
//!
//! | module | contents |
//! |---|---|
//! | [`codes`] | open code sets: [`Status`], [`DataType`], scopes, ranges, states, bit sets |
//! | [`name`] | [`Nspace`], [`Rank`] with the special ranks, [`Proc`], [`Key`] |
//! | [`value`] | [`Value`], one variant per data type, with typed accessors and numeric conversion; the structures that hold values or infos: [`Info`], [`DataArray`], [`App`], [`Query`], [`PData`], [`Kval`], [`Fabric`] |
//! | [`info`] | what an [`Info`] does: its constructors and directive flags |
//! | [`structs`] | the structures that hold no value: [`Envar`], [`ByteObject`], [`ProcInfo`], [`RegAttr`], … |
//! | [`topology`] | cpusets, topologies, coordinates, geometry, endpoints, device distances |
//! | [`stats`] | process, disk, network and node statistics |
//! | [`attr`] | every attribute of the standard as a typed constant ([`attr::JOB_SIZE`], …) |
//! | [`strings`] | the standard's `*_string` functions |
//!
//! Nothing here does I/O. Constructors that take outside input validate it and return
//! [`Error::BadParam`](crate::Error::BadParam) instead of panicking.

pub mod attr;
pub mod codes;
mod generated;
pub mod info;
pub mod name;
pub mod regex;
pub mod stats;
pub mod strings;
pub mod structs;
pub mod text;
pub mod topology;
pub mod value;

pub use codes::*;
pub use generated::constants::{
    APP_WILDCARD, MAX_KEYLEN, MAX_NSLEN, NUMERIC_VERSION, VERSION_MAJOR, VERSION_MINOR,
    VERSION_RELEASE,
};
pub use name::{Key, Nspace, Proc, Rank};
pub use stats::{DiskStats, NetStats, NodeStats, ProcStats};
pub use structs::{Buffer, ByteObject, Envar, Pointer, ProcInfo, RegAttr, Time, Timeval};
pub use text::Text;
pub use topology::{Coord, Cpuset, DeviceDistance, Endpoint, Geometry, Topology};
pub use value::{App, DataArray, Fabric, Info, Kval, PData, Pid, Query, Value};
