//! Queries: `PMIx_Query_info` and `PMIx_Query_info_nb`, answered by the library itself before
//! `PMIx_Init`.

use std::ffi::c_void;

use pmix::client::blocking::Client;
use pmix::model::{Info, Query, Status, attr};

use super::{Outcome, deliver_infos, hand_out, nb_infos, status_of};
use crate::args::{Array, Out};
use crate::boundary::guard;
use crate::callbacks::CbData;
use crate::state::client::client;
use crate::types::{CInfo, CQuery, CStatus, InfoCb};

/// The queries of a call: at least one.
fn read_queries(queries: Array<'_, CQuery>, n: usize) -> Result<Vec<Query>, Status> {
    if n == 0 {
        return Err(Status::ERR_BAD_PARAM);
    }
    queries.queries(n)
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
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Query_info(
    queries: Array<'_, CQuery>,
    nqueries: usize,
    results: Out<'_, *mut CInfo>,
    nresults: Out<'_, usize>,
) -> CStatus {
    guard("PMIx_Query_info", || {
        if results.is_null() || nresults.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let queries = read_queries(queries, nqueries)?;
        let (status, answers) = query(client().ok().as_deref(), &queries)?;
        hand_out(&answers, results, nresults)?;
        if status == Status::SUCCESS {
            Ok(())
        } else {
            Err(status)
        }
    })
}

/// `PMIx_Query_info_nb`: as `PMIx_Query_info`, the answers lent to `cbfunc`.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_Query_info_nb(
    queries: Array<'_, CQuery>,
    nqueries: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_Query_info_nb", || {
        let cbfunc = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        let queries = read_queries(queries, nqueries)?;
        if client().is_err() {
            // Before PMIx_Init there is no client thread: answer here what the library can.
            deliver_infos(cbfunc, query(None, &queries), CbData(cbdata));
            return Ok(());
        }
        nb_infos(move |c| query(Some(c), &queries), Some(cbfunc), cbdata)
    })
}
