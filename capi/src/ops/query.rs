//! Queries: `PMIx_Query_info` and `PMIx_Query_info_nb`, answered by the library itself before
//! `PMIx_Init`.

use std::ffi::c_void;

use pmix::client::blocking::Client;
use pmix::model::{Info, Query, Status, attr};

use super::{Outcome, deliver_infos, hand_out, nb_infos, status_of};
use crate::boundary::{guard, slice_of};
use crate::callbacks::CbData;
use crate::state::client::client;
use crate::types::{CInfo, CQuery, CStatus, InfoCb};
use crate::values::read_object;

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
    cbfunc: Option<InfoCb>,
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
