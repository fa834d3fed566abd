//! C values to the crate's model and back.
//!
//! A C object of a data type is read from its address ([`read_object`], in `read`) and
//! written to one ([`write_object`], in `write`); a `pmix_value_t` holds scalars, strings, byte objects and environment
//! variables in its union and the larger structs behind a pointer ([`by_pointer`]). Every
//! block written for a caller comes from libc's allocator, and [`destruct_object`] (in
//! `release`) releases
//! what [`write_object`] (or a C caller, with the same allocator) put there.
//!
//! Cpusets and topologies are hwloc objects in C and text in the model: a bitmap in hwloc's
//! list form, a topology in hwloc's XML (`hwloc` converts them). Reading one
//! prints or exports its hwloc object; writing one makes a fresh hwloc object, which
//! [`destruct_object`] releases. Only hwloc's are understood: another source's object is
//! `PMIX_ERR_NOT_SUPPORTED`.
//!
//! The sizes of the types' C objects, processes, keys and byte objects are in `basic`;
//! fabric coordinates, geometries and endpoints and device distances in `fabric`; process,
//! disk, network and node statistics in `stats`; argv lists, attribute registrations and
//! data buffers in `records`, and the argv helpers' changes to such arrays in `argv`; each
//! structure's empty form and release, for the helpers' construct and destruct calls, in
//! `family`; what the fabric and distance calls hand out in
//! `fabric_calls`; the `PMIx_Data_*` calls' buffers and side-by-side objects in `buffer`; a
//! value's data as `PMIx_Value_unload` hands it out in `unload`. Applications and queries, which hold infos, are read, written
//! and released beside the values that hold them: a value, an info and an application
//! reach each other, so each direction is one file. A data buffer inside a value
//! (`PMIX_DATA_BUFFER`) carries its packed bytes, not where unpacking had got to: the copy
//! written for a caller is packed to its end and unpacks from its start.
//!
//! The deprecated internal buffer (`PMIX_BUFFER`) is not carried: it is refused with
//! `PMIX_ERR_NOT_SUPPORTED`, as is any type this library does not know.

mod argv;
mod basic;
mod buffer;
mod fabric;
mod fabric_calls;
mod family;
mod hwloc;
mod read;
mod records;
mod release;
mod stats;
mod unload;
mod write;

pub(crate) use argv::{argv_bytes, argv_insert, argv_replace};
pub(crate) use basic::{
    by_pointer, c_proc, empty_info, object_size, read_key, read_proc, read_procs, undef_value,
};
pub(crate) use buffer::{
    append, consume, print_object, read_objects, release_buffer, take_payload, unread,
    write_objects,
};
pub(crate) use fabric_calls::{
    clear_fabric, free_distances, read_fabric, write_distances, write_fabric,
};
/// For the helpers' tests, which mark an info persistent.
#[cfg(test)]
pub(crate) use family::INFO_PERSISTENT;
pub(crate) use family::{
    CTopology, Family, coords, create, create_data_array, elements, empty_fabric, free_array,
};
/// For the topology calls' tests, which make topologies to measure from.
#[cfg(test)]
pub(crate) use hwloc::c_topology;
pub(crate) use hwloc::{
    c_cpuset, destruct_cpuset, destruct_topology, is_hwloc, load_topology_into, read_cpuset,
    read_topology, sourced_source,
};
pub(crate) use read::{app_text, loaded, read_info, read_infos, read_object, read_value};
pub(crate) use records::{copy_regattr, free_argv, read_argv, write_argv};
pub(crate) use release::{destruct_array, destruct_object, destruct_value, free_infos};
pub(crate) use unload::{unload_allocated, unload_as_openpmix};
pub(crate) use write::{OwnedInfo, copy_object, write_infos, write_object, write_value};

#[cfg(test)]
mod tests;
