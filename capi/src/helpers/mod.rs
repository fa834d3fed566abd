//! The support functions OpenPMIx 5.0 and 6.1 added to the C API, most of them in the 5.1
//! draft of the standard (its chapter 3's "support functions"): the headers of those
//! releases turn the `PMIX_*` macros programs use into calls of them (`PMIX_INFO_CREATE` is
//! `PMIx_Info_create`, `PMIX_LOAD_PROCID` is `PMIx_Load_procid`, …), so a program compiled
//! against them loads only a library that exports them.
//!
//! - `names`: keys, namespaces, ranks and process identifiers: load, compare, check;
//! - `argv`: NULL-terminated string arrays and environments;
//! - `structs`: each structure's construct, create, destruct and free (and load, xfer);
//! - `infos`: values and infos (flags, sizes, truth, numbers) and the info lists' new calls;
//! - `strings`: the new `*_string` calls and `PMIx_Error_code`;
//! - `runtime`: the new calls that reach a server or the library's state.
//!
//! Two of those releases' calls stand with their chapter: `PMIx_Data_buffer_load` and
//! `_unload` with the buffer calls (`crate::data`), `PMIx_server_generate_cpuset` with the
//! cpusets (`crate::topology`).
//!
//! Where the draft describes a function, it does what the draft says; where it is silent,
//! what OpenPMIx 6.1.0 does, with three choices made for programs of every release (each in
//! `docs/capi.md`): a NULL pointer is refused (or ignored, for a function that returns
//! nothing) instead of dereferenced; `*_free(p, 0)` frees `p` (6.1.0 leaks it, 5.0.9 frees
//! it); `PMIx_Info_create` leaves the last element's `PMIX_INFO_ARRAY_END` unset, as 6.1.0
//! does (4.2's macro set it). Memory handed to the caller is libc's, as everywhere in this
//! library.

pub mod argv;
pub mod infos;
pub mod names;
pub mod runtime;
pub mod strings;
pub mod structs;
