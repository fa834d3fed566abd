//! The host's side of the server: the [`Host`] trait, one async method per upcall of the
//! standard's `pmix_server_module_t` (PMIx v5.0 §17.3), each defaulting to
//! `PMIX_ERR_NOT_SUPPORTED` or another harmless answer ([`defaults`]); and the kit a host reuses to implement them: starting a job on
//! one node ([`launch`]), job control and monitoring requests read into actions, with who may
//! ask for them ([`control`]), the library's own logging channels ([`log`]), published data
//! with waiting lookups ([`publish`]), and fabric names ([`fabric`]).
//!
//! A resource manager implements the upcalls it supports. The server calls them from its own
//! tasks, never while holding its state, so an upcall may take as long as it needs (a fence
//! across thousands of nodes) without stopping the server from serving other clients.
//! The upcalls are listed once, in the server's table ([`crate::for_each_upcall`]); the
//! trait, its [`defaults`] and `HostCall::call` are generated here from it.

pub mod control;
pub mod fabric;
pub mod launch;
pub mod log;
pub mod publish;

use std::future::Future;

use crate::model::{
    AllocDirective, App, DataRange, FabricOperation, GroupOperation, Info, IofChannel, Nspace,
    PData, Proc, Query, Status,
};

use crate::server::{HostCall, HostResult, IntoHost};
use log::write_local_now;

/// Generates the [`Host`] trait, its [`defaults`] and `HostCall::call` from the table of
/// upcalls.
macro_rules! host_trait {
    ($(
        $(#[$doc:meta])*
        $code:literal $Var:ident $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty
        [$(slot $slot:ident $c:literal)?]
        default $default:block
    )*) => {
        /// The resource manager's upcalls. Each defaults to what [`defaults`] answers.
        pub trait Host: Send + Sync + 'static {
            /// Whether [`Host::direct_modex`] is implemented (rules N-08, N-09, R-05, R-07).
            fn supports_direct_modex(&self) -> bool {
                false
            }

            $(
                $(#[$doc])*
                fn $name(&self, $($arg: $ty),*) -> impl Future<Output = $ret> + Send {
                    defaults::$name($($arg),*)
                }
            )*
        }

        /// What a host answers for an upcall it does not implement: `PMIX_ERR_NOT_SUPPORTED`,
        /// except that clients are let in and out, lost clients are not reported, and `log`
        /// writes to the local channels. A host that implements an upcall for some requests
        /// only can answer the others with these; the C library answers a NULL slot with them.
        pub mod defaults {
            use super::*;

            $(
                #[doc = concat!("What a host that does not implement [`Host::", stringify!($name), "`] answers.")]
                #[allow(unused_variables)]
                pub async fn $name($($arg: $ty),*) -> $ret $default
            )*
        }

        impl HostCall {
            /// Make this upcall of `host`: the method of the same name with the call's
            /// arguments.
            pub async fn call<H: Host>(self, host: &H) -> HostResult {
                match self {
                    $(HostCall::$Var { $($arg),* } => host.$name($($arg),*).await.into_host(),)*
                }
            }
        }
    };
}

crate::for_each_upcall!(host_trait);

pub use crate::wire::ops::IOF_STOP;

/// A host that supports nothing: every upcall answers `PMIX_ERR_NOT_SUPPORTED` (a server for
/// a single node, with fences completed locally).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHost;

impl Host for NoHost {}
