//! Fabrics (v5.0 §15.4) for C callers: `PMIx_Fabric_register`, `PMIx_Fabric_update` and
//! `PMIx_Fabric_deregister`, with their `_nb` forms.
//!
//! A `pmix_fabric_t` the library fills holds the fabric's name, its index (the handle the
//! host gave it) and its information, in blocks of libc's allocator that stay the
//! library's: an update replaces them, a deregistration releases them and clears the
//! struct. The `module` pointer is left NULL: the name, index and information are all this
//! library needs to update a fabric.

use std::ffi::c_void;

use pmix::model::{Info, Status};

use crate::args::{Array, Held, InOut, Out};
use crate::boundary::guard;
use crate::callbacks::{CbData, call_op};
use crate::state::client::client;
use crate::state::threads::detached;
use crate::types::{CFabric, CInfo, CStatus, OpCb};

/// One fabric call on the client, on a fabric this library registered.
#[derive(Clone, Copy)]
enum Op {
    Update,
    Deregister,
}

/// Register the fabric `directives` name and describe it in `f`.
fn register(
    c: &pmix::client::blocking::Client,
    f: Out<'_, CFabric>,
    directives: &[Info],
) -> Result<(), Status> {
    let registered = c.fabric_register(directives).map_err(|e| e.status())?;
    f.set_fabric(&registered)
}

/// Make the call `op` and write its outcome into the struct.
fn run(c: &pmix::client::blocking::Client, op: Op, f: InOut<'_, CFabric>) -> Result<(), Status> {
    match op {
        Op::Update => {
            let mut current = f.fabric()?;
            c.fabric_update(&mut current).map_err(|e| e.status())?;
            f.update_fabric(&current)
        }
        Op::Deregister => {
            let mut current = f.fabric()?;
            c.fabric_deregister(&mut current).map_err(|e| e.status())?;
            f.clear_fabric()
        }
    }
}

/// A blocking fabric call on a fabric this library registered.
fn blocking(name: &str, op: Op, fabric: InOut<'_, CFabric>) -> CStatus {
    guard(name, || {
        if fabric.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        run(&*client()?, op, fabric)
    })
}

/// A fabric call completed on the library's thread, which then calls `cbfunc`: `op`, or
/// without one a registration with `directives`.
fn nonblocking(
    name: &str,
    op: Option<Op>,
    fabric: Held<CFabric>,
    directives: Array<'_, CInfo>,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard(name, || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        if fabric.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let directives = directives.infos(ndirs)?;
        let data = CbData(cbdata);
        let mut fabric = fabric;
        detached(move |c| {
            let outcome = match op {
                Some(op) => run(c, op, fabric.get()),
                None => register(c, fabric.out(), &directives),
            };
            call_op(cbfunc, outcome.err().unwrap_or(Status::SUCCESS), data);
        })
    })
}

/// `PMIx_Fabric_register`: the fabric the directives name (the host's default without),
/// described in `fabric` (whatever it held is overwritten: it may not be constructed).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Fabric_register(
    fabric: Out<'_, CFabric>,
    directives: Array<'_, CInfo>,
    ndirs: usize,
) -> CStatus {
    guard("PMIx_Fabric_register", || {
        if fabric.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let directives = directives.infos(ndirs)?;
        register(&*client()?, fabric, &directives)
    })
}

/// `PMIx_Fabric_register_nb`: as `PMIx_Fabric_register`, `fabric` kept by the caller until
/// `cbfunc` is called.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Fabric_register_nb(
    fabric: Held<CFabric>,
    directives: Array<'_, CInfo>,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    let name = "PMIx_Fabric_register_nb";
    nonblocking(name, None, fabric, directives, ndirs, cbfunc, cbdata)
}

/// The blocking and `_nb` forms of a call on a fabric this library registered, which takes
/// no directives.
macro_rules! on_registered {
    ($(#[doc = $doc:literal])* $blocking:ident, $nb:ident, $op:expr) => {
        $(#[doc = $doc])*
        #[unsafe(no_mangle)]
        pub extern "C" fn $blocking(fabric: InOut<'_, CFabric>) -> CStatus {
            blocking(stringify!($blocking), $op, fabric)
        }

        #[doc = concat!(
            "`", stringify!($nb), "`: as `", stringify!($blocking), "`, `fabric` kept by the ",
            "caller until `cbfunc` is called."
        )]
        #[unsafe(no_mangle)]
        pub extern "C" fn $nb(fabric: Held<CFabric>, cbfunc: Option<OpCb>, cbdata: *mut c_void) -> CStatus {
            nonblocking(stringify!($nb), Some($op), fabric, Array::null(), 0, cbfunc, cbdata)
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
