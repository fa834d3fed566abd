//! `libpmix.so.2`: the PMIx Standard's C API, built from the `pmix` crate, a drop-in for
//! OpenPMIx 4.2's library.
//!
//! Programs compiled against OpenPMIx's `pmix.h` load this library unchanged when its
//! directory comes first on the loader's path (`cargo xtask capi` builds it into
//! `target/release/capi/libpmix.so.2`; see `docs/capi.md`). It exports the 141 `PMIx_*` functions
//! of OpenPMIx 4.2.2 with their struct layouts (`types`), hands out memory from libc's
//! allocator as the header macros expect (`boundary`, `values`), and keeps every Rust panic
//! on its side of the boundary.
//!
//! - `types`: the C structs, with their sizes and offsets asserted: the `pmix-ctypes` crate,
//!   which the conformance harness shares;
//! - `boundary`: the panic boundary, libc memory, C strings, the process's environment;
//! - `args`: the pointers the entry points take, typed by what the C caller promises of
//!   them, read through checked methods;
//! - `values`: C values to the crate's model and back (hwloc's objects among them);
//! - `callbacks`: calling the caller's C functions: its callbacks of every shape, with what
//!   they are lent until they release it, output and event handlers;
//! - `state`: the process's state, owned there and nowhere else: its client, tool and
//!   server, the client's threads that run callbacks, a host's event handlers;
//! - `client`: the client calls (init, put, commit, fence, get, publish, resolving peers and
//!   nodes, …);
//! - `ops`: spawn, connect, queries, logging, job management, credentials, groups, a file
//!   each;
//! - `server`: the server calls for C hosts, their upcalls as the crate's `Host`;
//! - `nb`: the non-blocking forms of the data calls, their callbacks on the client's threads;
//! - `events`: event handlers written in C, and notifications;
//! - `data`: the `PMIx_Data_*` buffer calls, on the crate's codec;
//! - `topology`: topologies and cpusets as hwloc objects, locality;
//! - `fabric`: fabric registration, update and deregistration;
//! - `tool`: the tool calls: init, attaching to servers, the primary server;
//! - `iof`: I/O forwarding: pulling other processes' output, pushing to their input;
//! - `support`: the calls that need no server (strings, values, infos);
//! - `info_list`: the info lists, built an info at a time;
//! - `helpers`: the support functions OpenPMIx 5.0 and 6.1 added, which their headers'
//!   macros call (each structure's construct/create/destruct/free, argv, key and process
//!   helpers, flags, and the new calls that reach a server);
//! - `departures`: where the C form keeps OpenPMIx 4.2's behaviour, and `PMIX_RS_STRICT`,
//!   which asks for the standard's instead.
//!
//! The modules are layers: `boundary` and `types` at the bottom, then `values`, `args` and
//! `callbacks`, then `state`, then the chapters' entry points, which import only downward
//! and nothing of each other (`cargo xtask layers` checks it, with what is left to untangle
//! in `xtask/src/layers/capi.txt`).
//!
//! The entry points are safe functions: they take their pointers as the types of `args`,
//! each with a raw pointer's layout and the C caller's promise, made by Rust code only
//! through an `unsafe` constructor. `unsafe` stands only in `boundary`, `args`, `values`,
//! `callbacks`, the server's upcalls and what they lend the host, and `fuzzing` (`cargo
//! xtask layers` checks it); every block says what it relies on in a `// SAFETY:` comment.

#![allow(non_snake_case)] // the exported functions have the standard's C names
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

pub mod args;
mod boundary;
mod callbacks;
pub mod client;
pub mod data;
mod departures;
pub mod events;
pub mod fabric;
pub mod fuzzing;
pub mod helpers;
pub mod info_list;
pub mod iof;
pub mod nb;
pub mod ops;
pub mod server;
mod state;
pub mod support;
#[cfg(test)]
mod test_fixtures;
pub mod tool;
pub mod topology;
/// The C structs, defined in `pmix-ctypes`; `crate::types::CProc` and the like name them.
pub use pmix_ctypes as types;
mod values;
