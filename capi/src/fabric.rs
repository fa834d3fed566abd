//! Fabrics (v5.0 §15.4) for C callers: `PMIx_Fabric_register`, `PMIx_Fabric_update` and
//! `PMIx_Fabric_deregister`, with their `_nb` forms.
//!
//! A `pmix_fabric_t` the library fills holds the fabric's name, its index (the handle the
//! host gave it) and its information, in blocks of libc's allocator that stay the
//! library's: an update replaces them, a deregistration releases them and clears the
//! struct. The `module` pointer is left NULL: the name, index and information are all this
//! library needs to update a fabric.

use std::ffi::c_void;
use std::ptr;

use pmix::model::{Fabric, Info, Status};

use crate::boundary::{c_strdup, free, guard, read_cstr};
use crate::callbacks::{CbData, call_op};
use crate::state::client::client;
use crate::state::threads::detached;
use crate::types::{CFabric, CInfo, CStatus, OpCb};
use crate::values::{free_infos, read_infos, write_infos};

/// A fabric struct crossing to the thread that completes an `_nb` call.
#[derive(Clone, Copy)]
struct Handle(*mut CFabric);

// SAFETY: the caller keeps the struct valid and untouched until the callback, as the
// standard asks of every `_nb` argument.
unsafe impl Send for Handle {}

impl Handle {
    /// The pointer (a method: a closure then captures the `Send` wrapper).
    fn get(self) -> *mut CFabric {
        self.0
    }
}

/// The fabric a struct of this library describes.
///
/// # Safety
/// `f` was filled by this library (or zeroed by the caller).
unsafe fn read_fabric(f: &CFabric) -> Result<Fabric, Status> {
    Ok(Fabric {
        // SAFETY: NULL or a string of ours.
        name: unsafe { read_cstr(f.name) },
        index: f.index as u64,
        // SAFETY: `ninfo` infos of ours.
        info: unsafe { read_infos(f.info, f.ninfo)? },
    })
}

/// Release what the struct holds and clear it.
///
/// # Safety
/// `f` was filled by this library, or zeroed.
unsafe fn clear(f: &mut CFabric) {
    // SAFETY: blocks of ours, released once: the pointers are cleared below.
    unsafe {
        free(f.name);
        free_infos(f.info, f.ninfo);
    }
    *f = CFabric {
        name: ptr::null_mut(),
        index: 0,
        info: ptr::null_mut(),
        ninfo: 0,
        module: ptr::null_mut(),
    };
}

/// Fill the struct with `fabric`, releasing what it held when `release` says it is ours (a
/// registration overwrites whatever the caller's struct held, as it may not be constructed).
///
/// # Safety
/// With `release`, `f` was filled by this library, or zeroed.
unsafe fn write_fabric(fabric: &Fabric, f: &mut CFabric, release: bool) -> Result<(), Status> {
    let index = usize::try_from(fabric.index).map_err(|_| Status::ERR_BAD_PARAM)?;
    let name = match fabric.name.as_deref() {
        Some(n) => c_strdup(n)?,
        None => ptr::null_mut(),
    };
    let (info, ninfo) = match write_infos(&fabric.info) {
        Ok(written) => written,
        Err(s) => {
            // SAFETY: the string made above.
            unsafe { free(name) };
            return Err(s);
        }
    };
    if release {
        // SAFETY: the caller's promise.
        unsafe { clear(f) };
    }
    *f = CFabric {
        name,
        index,
        info,
        ninfo,
        module: ptr::null_mut(),
    };
    Ok(())
}

/// One fabric call on the client, on `fabric`'s struct.
#[derive(Clone, Copy)]
enum Op {
    Register,
    Update,
    Deregister,
}

/// Make the call `op` and write its outcome into the struct.
///
/// # Safety
/// `fabric` is the caller's struct, valid for the call.
unsafe fn run(
    c: &pmix::client::blocking::Client,
    op: Op,
    fabric: *mut CFabric,
    directives: &[Info],
) -> Result<(), Status> {
    // SAFETY: the caller's promise.
    let f = unsafe { fabric.as_mut() }.ok_or(Status::ERR_BAD_PARAM)?;
    match op {
        Op::Register => {
            let registered = c.fabric_register(directives).map_err(|e| e.status())?;
            // SAFETY: the caller's struct, overwritten.
            unsafe { write_fabric(&registered, f, false) }
        }
        Op::Update => {
            // SAFETY: a struct this library filled.
            let mut current = unsafe { read_fabric(f)? };
            c.fabric_update(&mut current).map_err(|e| e.status())?;
            // SAFETY: as above.
            unsafe { write_fabric(&current, f, true) }
        }
        Op::Deregister => {
            // SAFETY: a struct this library filled.
            let mut current = unsafe { read_fabric(f)? };
            c.fabric_deregister(&mut current).map_err(|e| e.status())?;
            // SAFETY: as above.
            unsafe { clear(f) };
            Ok(())
        }
    }
}

/// A blocking fabric call.
///
/// # Safety
/// As [`run`]; `directives` holds `ndirs` infos.
unsafe fn blocking(
    name: &str,
    op: Op,
    fabric: *mut CFabric,
    directives: *const CInfo,
    ndirs: usize,
) -> CStatus {
    guard(name, || {
        // SAFETY: the caller's promise.
        let directives = unsafe { read_infos(directives, ndirs)? };
        // SAFETY: the caller's promise.
        unsafe { run(&*client()?, op, fabric, &directives) }
    })
}

/// A fabric call completed on the library's thread, which then calls `cbfunc`.
///
/// # Safety
/// As [`run`], the struct valid until the callback; `directives` holds `ndirs` infos.
unsafe fn nonblocking(
    name: &str,
    op: Op,
    fabric: *mut CFabric,
    directives: *const CInfo,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard(name, || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        if fabric.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let directives = unsafe { read_infos(directives, ndirs)? };
        let (fabric, data) = (Handle(fabric), CbData(cbdata));
        detached(move |c| {
            // SAFETY: the caller keeps the struct until the callback.
            let outcome = unsafe { run(c, op, fabric.get(), &directives) };
            call_op(cbfunc, outcome.err().unwrap_or(Status::SUCCESS), data);
        })
    })
}

/// `PMIx_Fabric_register`: the fabric the directives name (the host's default without),
/// described in `fabric`.
///
/// # Safety
/// `fabric` is a writable `pmix_fabric_t`; `directives` holds `ndirs` infos.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Fabric_register(
    fabric: *mut CFabric,
    directives: *const CInfo,
    ndirs: usize,
) -> CStatus {
    // SAFETY: the caller's promise.
    unsafe {
        blocking(
            "PMIx_Fabric_register",
            Op::Register,
            fabric,
            directives,
            ndirs,
        )
    }
}

/// `PMIx_Fabric_register_nb`.
///
/// # Safety
/// As `PMIx_Fabric_register`, `fabric` valid until `cbfunc` is called.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Fabric_register_nb(
    fabric: *mut CFabric,
    directives: *const CInfo,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    // SAFETY: the caller's promise.
    unsafe {
        nonblocking(
            "PMIx_Fabric_register_nb",
            Op::Register,
            fabric,
            directives,
            ndirs,
            cbfunc,
            cbdata,
        )
    }
}

/// The blocking and `_nb` forms of a call on a fabric this library registered, which takes
/// no directives.
macro_rules! on_registered {
    ($(#[doc = $doc:literal])* $blocking:ident, $nb:ident, $op:expr) => {
        $(#[doc = $doc])*
        ///
        /// # Safety
        /// `fabric` was registered by this library.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $blocking(fabric: *mut CFabric) -> CStatus {
            // SAFETY: the caller's promise.
            unsafe { blocking(stringify!($blocking), $op, fabric, ptr::null(), 0) }
        }

        #[doc = concat!("`", stringify!($nb), "`.")]
        ///
        /// # Safety
        #[doc = concat!(
            "As `", stringify!($blocking), "`, `fabric` valid until `cbfunc` is called."
        )]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $nb(
            fabric: *mut CFabric,
            cbfunc: Option<OpCb>,
            cbdata: *mut c_void,
        ) -> CStatus {
            // SAFETY: the caller's promise.
            unsafe { nonblocking(stringify!($nb), $op, fabric, ptr::null(), 0, cbfunc, cbdata) }
        }
    };
}

on_registered!(
    /// `PMIx_Fabric_update`: the fabric's information as the host has it now.
    PMIx_Fabric_update,
    PMIx_Fabric_update_nb,
    Op::Update
);
on_registered!(
    /// `PMIx_Fabric_deregister`: the fabric is forgotten and the struct released and cleared.
    PMIx_Fabric_deregister,
    PMIx_Fabric_deregister_nb,
    Op::Deregister
);
