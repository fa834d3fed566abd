//! The library's state and queries: `PMIx_Initialized`, `PMIx_Get_version` and `PMIx_Progress`
//! (v5.0 chapter 4), `PMIx_Query_info` and `PMIx_Resolve_peers`/`_nodes` (chapter 7).

use super::*;
use crate::api::sorted_nodes;

/// Run `call`, a call of this chapter, through the library; any other is not one it
/// carries ([`NO_SUCH_CALL`]).
pub(super) fn run(l: &'static Lib, s: &Syms, call: ApiCall) -> Result<ApiOutput, Status> {
    Ok(match call {
        ApiCall::Initialized => {
            // SAFETY: no arguments.
            let yes = unsafe { need(s.initialized)?() } != 0;
            ApiOutput::value(Ok(Value::Bool(yes)))
        }
        ApiCall::GetVersion => ApiOutput::value(Ok(Value::string(l.version()))),
        ApiCall::Progress => {
            // SAFETY: no arguments.
            unsafe { need(s.progress)?() };
            ApiOutput::status(Status::SUCCESS)
        }
        ApiCall::Query { queries, nb } => {
            let mut keys: Vec<Argv> = queries
                .iter()
                .map(|q| {
                    let k: Vec<String> = q.keys.iter().flatten().cloned().collect();
                    Argv::new(&k)
                })
                .collect::<Result<_, _>>()?;
            let quals: Vec<CInfos> = queries
                .iter()
                .map(|q| l.infos_to_c(&q.qualifiers))
                .collect::<Result<_, _>>()?;
            let mut cq: Vec<CQuery> = keys
                .iter_mut()
                .zip(&quals)
                .map(|(k, q)| CQuery {
                    keys: k.ptr(),
                    qualifiers: q.ptr().cast_mut(),
                    nqual: q.v.len(),
                })
                .collect();
            let (qp, n) = (cq.as_mut_ptr(), cq.len());
            if nb {
                let f = need(s.query_nb)?;
                // SAFETY: queries built above, alive until the callback has run.
                info_nb(|cb, d| unsafe { f(qp, n, cb, d) })
            } else {
                let f = need(s.query)?;
                // SAFETY: as above; the results are released by results_of.
                results_of(l, |rp, rn| unsafe { f(qp, n, rp, rn) })
            }
        }
        ApiCall::ResolvePeers { node, nspace } => {
            let node = cstring(&node)?;
            let ns = cstring(&nspace)?;
            let nsp = if nspace.is_empty() {
                std::ptr::null()
            } else {
                ns.as_ptr()
            };
            let mut p: *mut CProc = std::ptr::null_mut();
            let mut n = 0usize;
            // SAFETY: NUL-terminated node and namespace (or NULL); the library allocates the
            // array it returns, freed below.
            let rc = unsafe { need(s.resolve_peers)?(node.as_ptr(), nsp, &mut p, &mut n) };
            let mut procs = Vec::new();
            if !p.is_null() {
                for i in 0..n {
                    // SAFETY: `p` holds `n` procs.
                    if let Ok(q) = proc_of(unsafe { *p.add(i) }) {
                        procs.push(q);
                    }
                }
                // SAFETY: the array came from the library's malloc (PMIX_PROC_FREE).
                unsafe { free(p.cast()) };
            }
            check(rc)?;
            ApiOutput::value(Ok(sorted_procs(procs)))
        }
        ApiCall::ResolveNodes { nspace } => {
            let ns = cstring(&nspace)?;
            let mut list: *mut c_char = std::ptr::null_mut();
            // SAFETY: a NUL-terminated namespace; the library mallocs the list, freed below.
            let rc = unsafe { need(s.resolve_nodes)?(ns.as_ptr(), &mut list) };
            let text = if list.is_null() {
                Vec::new()
            } else {
                // SAFETY: a NUL-terminated string from the library's malloc.
                let t = unsafe { CStr::from_ptr(list) }.to_bytes().to_vec();
                // SAFETY: as above.
                unsafe { free(list.cast()) };
                t
            };
            check(rc)?;
            ApiOutput::value(Ok(sorted_nodes(&text)))
        }
        _ => return Err(NO_SUCH_CALL),
    })
}
