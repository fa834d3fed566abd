//! The client calls beyond data exchange: spawn, connect and disconnect, queries, logging,
//! allocation, job control, monitoring, credentials and process groups, each in its blocking
//! and its `_nb` form. Both share one body, run on the calling thread or on one of the
//! client's threads (`nb.rs`).
//!
//! Results a blocking call returns (`pmix_info_t **results`) are arrays of libc's
//! allocator, released by the caller (`PMIX_INFO_FREE`). Results handed to an `_nb` callback
//! come with a release function the callback calls when it is done with them, as
//! `pmix_info_cbfunc_t` says.

use std::ffi::{c_char, c_int, c_void};

use pmix::client::blocking::Client;
use pmix::client::{GroupAnswer, GroupConstructed};
use pmix::model::{AllocDirective, App, Info, Proc, Query, Status, attr};

use crate::boundary::{c_bytes, guard, guard_or, read_cstr, slice_of, write_fixed};
use crate::client::client;
use crate::nb::{CbData, OpCallback, call_op, detached};
use crate::types::{CApp, CByteObject, CInfo, CProc, CQuery, CStatus};
use crate::values::{
    free_infos, read_infos, read_object, read_proc, read_procs, read_required_bytes, write_infos,
};

/// `pmix_release_cbfunc_t`.
type ReleaseCallback = unsafe extern "C" fn(*mut c_void);
/// `pmix_info_cbfunc_t`.
type InfoCallback = unsafe extern "C" fn(
    CStatus,
    *mut CInfo,
    usize,
    *mut c_void,
    Option<ReleaseCallback>,
    *mut c_void,
);
/// `pmix_spawn_cbfunc_t`.
type SpawnCallback = unsafe extern "C" fn(CStatus, *mut c_char, *mut c_void);
/// `pmix_credential_cbfunc_t`.
type CredentialCallback =
    unsafe extern "C" fn(CStatus, *mut CByteObject, *mut CInfo, usize, *mut c_void);
/// `pmix_validation_cbfunc_t`.
type ValidationCallback = unsafe extern "C" fn(CStatus, *mut CInfo, usize, *mut c_void);

/// What a call with results answers: its status (`PMIX_SUCCESS`, or a partial success that
/// comes with results) and the results.
type Outcome = Result<(Status, Vec<Info>), Status>;

/// The infos lent to an info callback until it calls the release function.
struct Lent(*mut CInfo, usize);

/// `pmix_release_cbfunc_t` for what `deliver_infos` lent.
///
/// # Safety
/// `cookie` is the one `deliver_infos` passed, released once.
unsafe extern "C" fn release_lent(cookie: *mut c_void) {
    guard_or("release callback", (), || {
        if !cookie.is_null() {
            // SAFETY: the box `deliver_infos` made, reclaimed once.
            let lent = unsafe { Box::from_raw(cookie.cast::<Lent>()) };
            // SAFETY: the array `deliver_infos` wrote.
            unsafe { free_infos(lent.0, lent.1) };
        }
    });
}

/// Call an info callback with `outcome`.
fn deliver_infos(cbfunc: InfoCallback, outcome: Outcome, data: CbData) {
    let (status, infos) = match outcome {
        Ok(r) => r,
        Err(s) => (s, Vec::new()),
    };
    let (status, array, n) = match write_infos(&infos) {
        Ok((array, n)) => (status, array, n),
        Err(s) => (s, std::ptr::null_mut(), 0),
    };
    let cookie = Box::into_raw(Box::new(Lent(array, n))).cast::<c_void>();
    guard_or("info callback", (), || {
        // SAFETY: the caller's callback and data, with infos valid until it releases them.
        unsafe { cbfunc(status.0, array, n, data.ptr(), Some(release_lent), cookie) }
    });
}

/// The outcome of a call without results, for an op callback.
fn op_status(r: Result<(), Status>) -> Status {
    r.err().unwrap_or(Status::SUCCESS)
}

/// Run `body` on the calling thread (the blocking form: its results through `results`) or,
/// with `cbfunc`, on one of the client's threads (the `_nb` form).
///
/// # Safety
/// `results` and `nresults` are NULL or writable.
unsafe fn blocking_infos(
    body: impl FnOnce(&Client) -> Outcome,
    results: *mut *mut CInfo,
    nresults: *mut usize,
) -> Result<(), Status> {
    let (status, infos) = body(&*client()?)?;
    // SAFETY: the caller's promise.
    unsafe { hand_out(&infos, results, nresults)? };
    if status == Status::SUCCESS {
        Ok(())
    } else {
        Err(status)
    }
}

/// The `_nb` form of a call with results.
fn nb_infos(
    body: impl FnOnce(&Client) -> Outcome + Send + 'static,
    cbfunc: Option<InfoCallback>,
    cbdata: *mut c_void,
) -> Result<(), Status> {
    let data = CbData(cbdata);
    detached(move |c| {
        let outcome = body(c);
        if let Some(f) = cbfunc {
            deliver_infos(f, outcome, data);
        }
    })
}

/// The `_nb` form of a call without results.
fn nb_op(
    body: impl FnOnce(&Client) -> Result<(), Status> + Send + 'static,
    cbfunc: Option<OpCallback>,
    cbdata: *mut c_void,
) -> Result<(), Status> {
    let data = CbData(cbdata);
    detached(move |c| {
        let status = op_status(body(c));
        if let Some(f) = cbfunc {
            call_op(f, status, data);
        }
    })
}

fn status_of(e: pmix::Error) -> Status {
    e.status()
}

/// Hand `infos` to the caller through `results` and `nresults` (NULL and 0 for none).
///
/// # Safety
/// `results` and `nresults` are NULL or writable.
unsafe fn hand_out(
    infos: &[Info],
    results: *mut *mut CInfo,
    nresults: *mut usize,
) -> Result<(), Status> {
    if results.is_null() || nresults.is_null() {
        return Ok(());
    }
    let (array, n) = if infos.is_empty() {
        (std::ptr::null_mut(), 0)
    } else {
        write_infos(infos)?
    };
    // SAFETY: writable (the caller's promise).
    unsafe {
        *results = array;
        *nresults = n;
    }
    Ok(())
}

/// A group call's outcome: a partial success is the call's answer, with its results.
fn group_outcome(r: Result<GroupConstructed, pmix::Error>) -> Outcome {
    let done = r.map_err(status_of)?;
    Ok((done.status, done.results))
}

/// # Safety
/// `grp` is NULL or a string.
unsafe fn group_name(grp: *const c_char) -> Result<String, Status> {
    // SAFETY: the caller's promise.
    unsafe { read_cstr(grp) }.ok_or(Status::ERR_BAD_PARAM)
}

/// # Safety
/// `apps` holds `napps` apps.
unsafe fn read_apps(apps: *const CApp, napps: usize) -> Result<Vec<App>, Status> {
    // SAFETY: the caller's promise.
    let apps = unsafe { slice_of(apps, napps)? };
    let mut out = Vec::with_capacity(apps.len());
    for a in apps {
        // SAFETY: each is an app.
        match unsafe { read_object(pmix::model::DataType::APP, (&raw const *a).cast()) }? {
            pmix::model::Value::App(app) => out.push(*app),
            _ => return Err(Status::ERR_BAD_PARAM),
        }
    }
    Ok(out)
}

/// # Safety
/// `queries` holds `nqueries` queries.
unsafe fn read_queries(queries: *const CQuery, nqueries: usize) -> Result<Vec<Query>, Status> {
    if nqueries == 0 {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: the caller's promise.
    let queries = unsafe { slice_of(queries, nqueries)? };
    let mut out = Vec::with_capacity(queries.len());
    for q in queries {
        // SAFETY: each is a query.
        match unsafe { read_object(pmix::model::DataType::QUERY, (&raw const *q).cast()) }? {
            pmix::model::Value::Query(q) => out.push(*q),
            _ => return Err(Status::ERR_BAD_PARAM),
        }
    }
    Ok(out)
}

/// The answer to queries as C callers read it: one flat list of the answers, each keyed by
/// its query key, as OpenPMIx 4.2 hands them (`pmix::query`'s module doc); the standard's
/// per-query `PMIX_QUERY_RESULTS` arrays are opened. When the standard's behaviour was asked
/// for (`departures`), the answer as the standard gives it.
fn flat(results: Vec<Info>) -> Vec<Info> {
    if crate::departures::strict() {
        return results;
    }
    let mut out = Vec::new();
    for r in results {
        if r.key.as_str() == attr::QUERY_RESULTS.wire_key() {
            out.extend(pmix::query::answers_in(&r).into_iter().cloned());
        } else {
            out.push(r);
        }
    }
    out
}

/// A query's outcome; before `PMIx_Init` only what the library answers itself (the ABI
/// versions, its own attribute support).
fn query(client: Option<&Client>, queries: &[Query]) -> Outcome {
    let answered = match client {
        Some(c) => c.query(queries).map_err(status_of)?,
        None => pmix::query::answer_locally(queries).ok_or(Status::ERR_INIT)??,
    };
    Ok((answered.status, flat(answered.results)))
}

/// `PMIx_Spawn`: start the applications; the new namespace is written to `nspace` (a
/// `pmix_nspace_t`, when not NULL).
///
/// # Safety
/// `job_info` holds `ninfo` infos, `apps` `napps` apps; `nspace` is NULL or 256 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Spawn(
    job_info: *const CInfo,
    ninfo: usize,
    apps: *const CApp,
    napps: usize,
    nspace: *mut c_char,
) -> CStatus {
    guard("PMIx_Spawn", || {
        // SAFETY: the caller's promise.
        let (job_info, apps) = unsafe { (read_infos(job_info, ninfo)?, read_apps(apps, napps)?) };
        let spawned = client()?.spawn(&job_info, &apps).map_err(status_of)?;
        if !nspace.is_null() {
            // SAFETY: `nspace` has room for a `pmix_nspace_t` (the caller's promise).
            let field = unsafe { std::slice::from_raw_parts_mut(nspace, 256) };
            write_fixed(field, spawned.as_str());
        }
        Ok(())
    })
}

/// `PMIx_Spawn_nb`: the callback receives the new namespace.
///
/// # Safety
/// As `PMIx_Spawn`; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Spawn_nb(
    job_info: *const CInfo,
    ninfo: usize,
    apps: *const CApp,
    napps: usize,
    cbfunc: Option<SpawnCallback>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Spawn_nb", || {
        // SAFETY: the caller's promise.
        let (job_info, apps) = unsafe { (read_infos(job_info, ninfo)?, read_apps(apps, napps)?) };
        let data = CbData(cbdata);
        detached(move |c| {
            let (status, mut nspace) = match c.spawn(&job_info, &apps) {
                Ok(ns) => {
                    let mut field = [0 as c_char; 256];
                    write_fixed(&mut field, ns.as_str());
                    (Status::SUCCESS, field)
                }
                Err(e) => (e.status(), [0 as c_char; 256]),
            };
            if let Some(f) = cbfunc {
                guard_or("spawn callback", (), || {
                    // SAFETY: the caller's callback and data, with a namespace valid for it.
                    unsafe { f(status.0, nspace.as_mut_ptr(), data.ptr()) }
                });
            }
        })
    })
}

macro_rules! procs_call {
    ($blocking:ident, $nb:ident, $method:ident) => {
        #[doc = concat!("`", stringify!($blocking), "`.")]
        ///
        /// # Safety
        /// `procs` holds `nprocs` procs and `info` `ninfo` infos.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $blocking(
            procs: *const CProc,
            nprocs: usize,
            info: *const CInfo,
            ninfo: usize,
        ) -> CStatus {
            guard(stringify!($blocking), || {
                // SAFETY: the caller's promise.
                let procs = unsafe { read_procs(procs, nprocs)? };
                // SAFETY: the caller's promise.
                let info = unsafe { read_infos(info, ninfo)? };
                client()?.$method(&procs, &info).map_err(status_of)
            })
        }

        #[doc = concat!("`", stringify!($nb), "`.")]
        ///
        /// # Safety
        /// As the blocking form; `cbfunc` is callable with `cbdata`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $nb(
            procs: *const CProc,
            nprocs: usize,
            info: *const CInfo,
            ninfo: usize,
            cbfunc: Option<OpCallback>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                // SAFETY: the caller's promise.
                let procs = unsafe { read_procs(procs, nprocs)? };
                // SAFETY: the caller's promise.
                let info = unsafe { read_infos(info, ninfo)? };
                nb_op(
                    move |c| c.$method(&procs, &info).map_err(status_of),
                    cbfunc,
                    cbdata,
                )
            })
        }
    };
}

procs_call!(PMIx_Connect, PMIx_Connect_nb, connect);
procs_call!(PMIx_Disconnect, PMIx_Disconnect_nb, disconnect);

/// `PMIx_Query_info`: the answers as one flat list, keyed by the query keys (OpenPMIx 4.2's
/// form; the standard's with `PMIX_RS_STRICT=1`). Before `PMIx_Init`, what the library
/// answers itself.
///
/// # Safety
/// `queries` holds `nqueries` queries; `results` and `nresults` are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Query_info(
    queries: *mut CQuery,
    nqueries: usize,
    results: *mut *mut CInfo,
    nresults: *mut usize,
) -> CStatus {
    guard("PMIx_Query_info", || {
        if results.is_null() || nresults.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let queries = unsafe { read_queries(queries, nqueries)? };
        let (status, answers) = query(client().ok().as_deref(), &queries)?;
        // SAFETY: the caller's promise.
        unsafe { hand_out(&answers, results, nresults)? };
        if status == Status::SUCCESS {
            Ok(())
        } else {
            Err(status)
        }
    })
}

/// `PMIx_Query_info_nb`.
///
/// # Safety
/// `queries` holds `nqueries` queries; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Query_info_nb(
    queries: *mut CQuery,
    nqueries: usize,
    cbfunc: Option<InfoCallback>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Query_info_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        let queries = unsafe { read_queries(queries, nqueries)? };
        if client().is_err() {
            // Before PMIx_Init there is no client thread: answer here what the library can.
            deliver_infos(cbfunc, query(None, &queries), CbData(cbdata));
            return Ok(());
        }
        nb_infos(move |c| query(Some(c), &queries), Some(cbfunc), cbdata)
    })
}

/// `PMIx_Log`.
///
/// # Safety
/// `data` holds `ndata` infos and `directives` `ndirs`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Log(
    data: *const CInfo,
    ndata: usize,
    directives: *const CInfo,
    ndirs: usize,
) -> CStatus {
    guard("PMIx_Log", || {
        // SAFETY: the caller's promise.
        let (data, directives) =
            unsafe { (read_infos(data, ndata)?, read_infos(directives, ndirs)?) };
        client()?.log(&data, &directives).map_err(status_of)
    })
}

/// `PMIx_Log_nb`.
///
/// # Safety
/// As `PMIx_Log`; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Log_nb(
    data: *const CInfo,
    ndata: usize,
    directives: *const CInfo,
    ndirs: usize,
    cbfunc: Option<OpCallback>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Log_nb", || {
        // SAFETY: the caller's promise.
        let (data, directives) =
            unsafe { (read_infos(data, ndata)?, read_infos(directives, ndirs)?) };
        nb_op(
            move |c| c.log(&data, &directives).map_err(status_of),
            cbfunc,
            cbdata,
        )
    })
}

/// A call with results in its two forms: the blocking one hands them out through `results`
/// and `nresults`, the `_nb` one lends them to `cbfunc`. Both read their C arguments with
/// `$read` (under the caller's promise) into `$args`, and make the call `$body` with them.
macro_rules! infos_call {
    (
        $(#[doc = $doc:literal])*
        $blocking:ident, $nb:ident ($($arg:ident: $ty:ty),* $(,)?);
        let $args:pat = $read:expr;
        |$c:ident| $body:expr $(,)?
    ) => {
        $(#[doc = $doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $blocking(
            $($arg: $ty,)*
            results: *mut *mut CInfo,
            nresults: *mut usize,
        ) -> CStatus {
            guard(stringify!($blocking), || {
                // SAFETY: the caller's promise.
                let $args = unsafe { $read };
                let body = |$c: &Client| $body;
                // SAFETY: the caller's promise.
                unsafe { blocking_infos(body, results, nresults) }
            })
        }

        #[doc = concat!("`", stringify!($nb), "`.")]
        ///
        /// # Safety
        #[doc = concat!(
            "As `", stringify!($blocking), "`; `cbfunc` is NULL or callable with `cbdata`."
        )]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $nb(
            $($arg: $ty,)*
            cbfunc: Option<InfoCallback>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                // SAFETY: the caller's promise.
                let $args = unsafe { $read };
                nb_infos(move |$c: &Client| $body, cbfunc, cbdata)
            })
        }
    };
}

fn allocate(c: &Client, directive: u8, info: &[Info]) -> Outcome {
    let got = (c.allocation_request(AllocDirective(directive), info)).map_err(status_of)?;
    Ok((Status::SUCCESS, got))
}

infos_call! {
    /// `PMIx_Allocation_request`.
    ///
    /// # Safety
    /// `info` holds `ninfo` infos; `results` and `nresults` are NULL or writable.
    PMIx_Allocation_request, PMIx_Allocation_request_nb(
        directive: u8,
        info: *mut CInfo,
        ninfo: usize,
    );
    let info = read_infos(info, ninfo)?;
    |c| allocate(c, directive, &info)
}

fn job_control(c: &Client, targets: &[Proc], directives: &[Info]) -> Outcome {
    let got = c.job_control(targets, directives).map_err(status_of)?;
    Ok((Status::SUCCESS, got))
}

infos_call! {
    /// `PMIx_Job_control`.
    ///
    /// # Safety
    /// `targets` holds `ntargets` procs, `directives` `ndirs` infos; `results` and `nresults`
    /// are NULL or writable.
    PMIx_Job_control, PMIx_Job_control_nb(
        targets: *const CProc,
        ntargets: usize,
        directives: *const CInfo,
        ndirs: usize,
    );
    let (targets, directives) = (read_procs(targets, ntargets)?, read_infos(directives, ndirs)?);
    |c| job_control(c, &targets, &directives)
}

fn monitor(c: &Client, monitor: &[Info], error: CStatus, directives: &[Info]) -> Outcome {
    let monitor = monitor.first().ok_or(Status::ERR_BAD_PARAM)?;
    let got = (c.process_monitor(monitor, Status(error), directives)).map_err(status_of)?;
    Ok((Status::SUCCESS, got))
}

/// The arguments of a monitoring request.
///
/// # Safety
/// `monitor` is NULL or an info; `directives` holds `ndirs` infos.
unsafe fn monitor_args(
    monitor: *const CInfo,
    directives: *const CInfo,
    ndirs: usize,
) -> Result<(Vec<Info>, Vec<Info>), Status> {
    if monitor.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: the caller's promise.
    unsafe { Ok((read_infos(monitor, 1)?, read_infos(directives, ndirs)?)) }
}

infos_call! {
    /// `PMIx_Process_monitor`.
    ///
    /// # Safety
    /// `monitor` is an info; `directives` holds `ndirs` infos; `results` and `nresults` are
    /// NULL or writable.
    PMIx_Process_monitor, PMIx_Process_monitor_nb(
        monitor_info: *const CInfo,
        error: CStatus,
        directives: *const CInfo,
        ndirs: usize,
    );
    let (m, directives) = monitor_args(monitor_info, directives, ndirs)?;
    |c| monitor(c, &m, error, &directives)
}

/// `PMIx_Get_credential`: the credential's bytes, in a block of libc's allocator the caller
/// releases (`PMIX_BYTE_OBJECT_DESTRUCT`).
///
/// # Safety
/// `info` holds `ninfo` infos; `credential` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Get_credential(
    info: *const CInfo,
    ninfo: usize,
    credential: *mut CByteObject,
) -> CStatus {
    guard("PMIx_Get_credential", || {
        if credential.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        // SAFETY: the caller's promise.
        let info = unsafe { read_infos(info, ninfo)? };
        let (cred, _) = client()?.get_credential(&info).map_err(status_of)?;
        let bytes = c_bytes(&cred.0)?;
        // SAFETY: writable (the caller's promise).
        unsafe {
            *credential = CByteObject {
                bytes,
                size: cred.0.len(),
            };
        }
        Ok(())
    })
}

/// `PMIx_Get_credential_nb`: the callback is lent the credential and what describes it.
///
/// # Safety
/// `info` holds `ninfo` infos; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Get_credential_nb(
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<CredentialCallback>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Get_credential_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        let info = unsafe { read_infos(info, ninfo)? };
        let data = CbData(cbdata);
        detached(move |c| {
            let (status, mut bytes, described) = match c.get_credential(&info) {
                Ok((cred, described)) => (Status::SUCCESS, cred.0, described),
                Err(e) => (e.status(), Vec::new(), Vec::new()),
            };
            let (array, n) = write_infos(&described).unwrap_or((std::ptr::null_mut(), 0));
            let mut cred = CByteObject {
                bytes: bytes.as_mut_ptr().cast(),
                size: bytes.len(),
            };
            guard_or("credential callback", (), || {
                // SAFETY: the caller's callback and data, with blocks valid for the call.
                unsafe { cbfunc(status.0, &raw mut cred, array, n, data.ptr()) }
            });
            // SAFETY: the array written above, no longer lent.
            unsafe { free_infos(array, n) };
        })
    })
}

fn validate(c: &Client, cred: &[u8], info: &[Info]) -> Outcome {
    let got = c.validate_credential(cred, info).map_err(status_of)?;
    Ok((Status::SUCCESS, got))
}

/// `PMIx_Validate_credential`.
///
/// # Safety
/// `cred` is a byte object; `info` holds `ninfo` infos; `results` and `nresults` are NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Validate_credential(
    cred: *const CByteObject,
    info: *const CInfo,
    ninfo: usize,
    results: *mut *mut CInfo,
    nresults: *mut usize,
) -> CStatus {
    guard("PMIx_Validate_credential", || {
        // SAFETY: the caller's promise.
        unsafe {
            let (bytes, info) = (read_required_bytes(cred)?, read_infos(info, ninfo)?);
            blocking_infos(|c| validate(c, &bytes, &info), results, nresults)
        }
    })
}

/// `PMIx_Validate_credential_nb`: the callback is lent what the credential proves.
///
/// # Safety
/// As `PMIx_Validate_credential`; `cbfunc` is callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Validate_credential_nb(
    cred: *const CByteObject,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<ValidationCallback>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Validate_credential_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        // SAFETY: the caller's promise.
        let (bytes, info) = unsafe { (read_required_bytes(cred)?, read_infos(info, ninfo)?) };
        let data = CbData(cbdata);
        detached(move |c| {
            let (status, proved) = validate(c, &bytes, &info).unwrap_or_else(|s| (s, Vec::new()));
            let (array, n) = write_infos(&proved).unwrap_or((std::ptr::null_mut(), 0));
            guard_or("validation callback", (), || {
                // SAFETY: the caller's callback and data, with infos valid for the call.
                unsafe { cbfunc(status.0, array, n, data.ptr()) }
            });
            // SAFETY: the array written above, no longer lent.
            unsafe { free_infos(array, n) };
        })
    })
}

macro_rules! group_of_procs {
    ($blocking:ident, $nb:ident, $method:ident) => {
        #[doc = concat!("`", stringify!($blocking), "`: its results, with the group's members and")]
        /// any context id, through `results`.
        ///
        /// # Safety
        /// `grp` is a string; `procs` holds `nprocs` procs and `info` `ninfo` infos;
        /// `results` and `nresults` are NULL or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $blocking(
            grp: *const c_char,
            procs: *const CProc,
            nprocs: usize,
            info: *const CInfo,
            ninfo: usize,
            results: *mut *mut CInfo,
            nresults: *mut usize,
        ) -> CStatus {
            guard(stringify!($blocking), || {
                // SAFETY: the caller's promise.
                unsafe {
                    let (grp, procs, info) = group_args(grp, procs, nprocs, info, ninfo)?;
                    let body = |c: &Client| group_outcome(c.$method(&grp, &procs, &info));
                    blocking_infos(body, results, nresults)
                }
            })
        }

        #[doc = concat!("`", stringify!($nb), "`.")]
        ///
        /// # Safety
        /// As the blocking form; `cbfunc` is NULL or callable with `cbdata`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $nb(
            grp: *const c_char,
            procs: *const CProc,
            nprocs: usize,
            info: *const CInfo,
            ninfo: usize,
            cbfunc: Option<InfoCallback>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                // SAFETY: the caller's promise.
                let (grp, procs, info) = unsafe { group_args(grp, procs, nprocs, info, ninfo)? };
                let body = move |c: &Client| group_outcome(c.$method(&grp, &procs, &info));
                nb_infos(body, cbfunc, cbdata)
            })
        }
    };
}

/// The arguments of a group call naming its processes.
///
/// # Safety
/// `grp` is NULL or a string; `procs` holds `nprocs` procs and `info` `ninfo` infos.
unsafe fn group_args(
    grp: *const c_char,
    procs: *const CProc,
    nprocs: usize,
    info: *const CInfo,
    ninfo: usize,
) -> Result<(String, Vec<Proc>, Vec<Info>), Status> {
    // SAFETY: the caller's promise.
    unsafe {
        Ok((
            group_name(grp)?,
            read_procs(procs, nprocs)?,
            read_infos(info, ninfo)?,
        ))
    }
}

group_of_procs!(
    PMIx_Group_construct,
    PMIx_Group_construct_nb,
    group_construct
);
group_of_procs!(PMIx_Group_invite, PMIx_Group_invite_nb, group_invite);

/// The answer of `PMIx_Group_join`: `PMIX_GROUP_ACCEPT` (1) or `PMIX_GROUP_DECLINE` (0).
fn join_answer(opt: c_int) -> Result<GroupAnswer, Status> {
    match opt {
        0 => Ok(GroupAnswer::Decline),
        1 => Ok(GroupAnswer::Accept),
        _ => Err(Status::ERR_BAD_PARAM),
    }
}

/// # Safety
/// `leader` is NULL or a proc.
unsafe fn leader_of(leader: *const CProc) -> Result<Proc, Status> {
    if leader.is_null() {
        return Err(Status::ERR_BAD_PARAM);
    }
    // SAFETY: the caller's promise.
    read_proc(unsafe { &*leader })
}

/// `PMIx_Group_join`.
///
/// # Safety
/// `grp` is a string; `leader` a proc; `info` holds `ninfo` infos; `results` and `nresult`
/// are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Group_join(
    grp: *const c_char,
    leader: *const CProc,
    opt: c_int,
    info: *const CInfo,
    ninfo: usize,
    results: *mut *mut CInfo,
    nresult: *mut usize,
) -> CStatus {
    guard("PMIx_Group_join", || {
        let answer = join_answer(opt)?;
        // SAFETY: the caller's promise.
        unsafe {
            let (grp, leader, info) = (
                group_name(grp)?,
                leader_of(leader)?,
                read_infos(info, ninfo)?,
            );
            let body = |c: &Client| group_outcome(c.group_join(&grp, &leader, answer, &info));
            blocking_infos(body, results, nresult)
        }
    })
}

/// `PMIx_Group_join_nb`.
///
/// # Safety
/// As `PMIx_Group_join`; `cbfunc` is NULL or callable with `cbdata`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PMIx_Group_join_nb(
    grp: *const c_char,
    leader: *const CProc,
    opt: c_int,
    info: *const CInfo,
    ninfo: usize,
    cbfunc: Option<InfoCallback>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Group_join_nb", || {
        let answer = join_answer(opt)?;
        // SAFETY: the caller's promise.
        let (grp, leader, info) = unsafe {
            (
                group_name(grp)?,
                leader_of(leader)?,
                read_infos(info, ninfo)?,
            )
        };
        let body = move |c: &Client| group_outcome(c.group_join(&grp, &leader, answer, &info));
        nb_infos(body, cbfunc, cbdata)
    })
}

macro_rules! group_end {
    ($blocking:ident, $nb:ident, $method:ident) => {
        #[doc = concat!("`", stringify!($blocking), "`.")]
        ///
        /// # Safety
        /// `grp` is a string; `info` holds `ninfo` infos.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $blocking(
            grp: *const c_char,
            info: *const CInfo,
            ninfo: usize,
        ) -> CStatus {
            guard(stringify!($blocking), || {
                // SAFETY: the caller's promise.
                let (grp, info) = unsafe { (group_name(grp)?, read_infos(info, ninfo)?) };
                client()?.$method(&grp, &info).map_err(status_of)
            })
        }

        #[doc = concat!("`", stringify!($nb), "`.")]
        ///
        /// # Safety
        /// As the blocking form; `cbfunc` is NULL or callable with `cbdata`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $nb(
            grp: *const c_char,
            info: *const CInfo,
            ninfo: usize,
            cbfunc: Option<OpCallback>,
            cbdata: *mut c_void,
        ) -> CStatus {
            guard(stringify!($nb), || {
                // SAFETY: the caller's promise.
                let (grp, info) = unsafe { (group_name(grp)?, read_infos(info, ninfo)?) };
                nb_op(
                    move |c| c.$method(&grp, &info).map_err(status_of),
                    cbfunc,
                    cbdata,
                )
            })
        }
    };
}

group_end!(PMIx_Group_leave, PMIx_Group_leave_nb, group_leave);
group_end!(PMIx_Group_destruct, PMIx_Group_destruct_nb, group_destruct);
