//! A host's own event handlers (a process with a server and no client): the chain an event
//! walks follows the registrations' placement directives, and `PMIX_EVENT_NON_DEFAULT`
//! keeps the default handlers out of it, as in a client. Called through the library's C
//! entry points, in this process.

#![allow(clippy::unwrap_used)] // a test fails loudly

use std::ffi::{CString, c_void};
use std::sync::Mutex;
use std::time::Duration;

use pmix::model::Status;
use pmix_capi::args::{Array, Data, In, Out, Str};
use pmix_capi::events::{PMIx_Notify_event, PMIx_Register_event_handler};
use pmix_capi::server::{PMIx_server_finalize, PMIx_server_init};
use pmix_capi::support::PMIx_Info_load;
use pmix_capi::types::{CInfo, CProc, CServerModule, CStatus, EventNotificationCb, NotificationFn};

/// The handlers' names, in the order they ran.
static RAN: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

macro_rules! handler {
    ($name:ident) => {
        unsafe extern "C" fn $name(
            _id: usize,
            _status: CStatus,
            _source: *const CProc,
            _info: *mut CInfo,
            _ninfo: usize,
            _results: *mut CInfo,
            _nresults: usize,
            done: Option<EventNotificationCb>,
            cbdata: *mut c_void,
        ) {
            RAN.lock().unwrap().push(stringify!($name));
            let done = done.expect("the library hands every handler its completion");
            // SAFETY: the library's completion for this turn, called once.
            unsafe {
                done(
                    Status::SUCCESS.0,
                    std::ptr::null_mut(),
                    0,
                    None,
                    std::ptr::null_mut(),
                    cbdata,
                )
            };
        }
    };
}

handler!(first_default);
handler!(last_default);
handler!(for_the_code);

const CODE: CStatus = -12_345;

/// An info of `key` holding a bool, in C.
fn flag(key: &str) -> CInfo {
    // SAFETY: a zeroed info is an empty one (PMIX_INFO_CONSTRUCT).
    let mut info: CInfo = unsafe { std::mem::zeroed() };
    let key = CString::new(key).unwrap();
    let yes = true;
    // SAFETY: an info of ours, a key string and a bool alive for the call.
    let (out, key, data) = unsafe {
        (
            Out::new(&raw mut info),
            Str::new(key.as_ptr()),
            Data::new(std::ptr::from_ref(&yes).cast()),
        )
    };
    let rc = PMIx_Info_load(out, key, data, 1 /* PMIX_BOOL */);
    assert_eq!(rc, Status::SUCCESS.0);
    info
}

fn register(codes: &mut [CStatus], info: Vec<CInfo>, f: NotificationFn) {
    // SAFETY: codes and infos alive for the call; no callback, so the reference returns.
    let (array, infos) = unsafe { (Array::new(codes.as_ptr()), Array::new(info.as_ptr())) };
    let none = std::ptr::null_mut();
    let id =
        PMIx_Register_event_handler(array, codes.len(), infos, info.len(), Some(f), None, none);
    assert!(id >= 0, "registration refused: {id}");
}

/// Raise `CODE` in this process only, with `info`, and wait for `n` handlers to have run.
fn notify(info: Vec<CInfo>, n: usize) -> Vec<&'static str> {
    RAN.lock().unwrap().clear();
    // SAFETY: infos alive for the call, which blocks until the notification is raised.
    let infos = unsafe { Array::new(info.as_ptr()) };
    let local = 1; // PMIX_RANGE_PROC_LOCAL
    let none = std::ptr::null_mut();
    let rc = PMIx_Notify_event(CODE, In::null(), local, infos, info.len(), None, none);
    assert_eq!(rc, Status::SUCCESS.0);
    // The chain runs on one of the server's threads: wait for it to end (a minute at most).
    for _ in 0..12_000 {
        if RAN.lock().unwrap().len() >= n {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Long enough for a handler that should not run to have run.
    std::thread::sleep(Duration::from_millis(100));
    RAN.lock().unwrap().clone()
}

#[test]
fn a_hosts_handlers_run_in_the_order_their_registrations_ask_for() {
    let module = CServerModule::default();
    // SAFETY: a module of ours, no infos.
    let rc = PMIx_server_init(unsafe { In::new(&raw const module) }, Array::null(), 0);
    assert_eq!(rc, Status::SUCCESS.0);

    // Registered last-first: the chain's order comes from the placements, not the calls.
    register(&mut [], vec![flag("pmix.evlast")], last_default);
    register(&mut [CODE], Vec::new(), for_the_code);
    register(&mut [], vec![flag("pmix.evfirst")], first_default);

    assert_eq!(
        notify(Vec::new(), 3),
        ["first_default", "for_the_code", "last_default"]
    );
    // A non-default event reaches the handlers registered for its code only.
    assert_eq!(notify(vec![flag("pmix.evnondef")], 1), ["for_the_code"]);

    assert_eq!(PMIx_server_finalize(), Status::SUCCESS.0);
}
