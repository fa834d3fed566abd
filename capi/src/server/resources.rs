//! What a C host tells its server of the machine, apart from any job (v5.0 §17.2.5, §17.2.6,
//! §17.2.9, §17.2.10): resources (`PMIx_server_register_resources`, and their
//! deregistration), and the node inventory it collects here and delivers elsewhere
//! (`PMIx_server_collect_inventory`, `PMIx_server_deliver_inventory`), and the strings it
//! generates about a cpuset of this machine (§17.2.17, §17.2.18).

use std::ffi::{c_char, c_void};

use pmix::model::{Cpuset, Status};

use super::{run_op, server, status_of};
use crate::args::{Array, In, Out};
use crate::boundary::{c_strdup, guard};
use crate::callbacks::{CbData, call_info};
use crate::types::{CInfo, CSourced, CStatus, InfoCb, OpCb};

/// `PMIx_server_register_resources`: information not tied to a job (nodes, fabrics, …), part
/// of every job's information where the job's own registration does not say otherwise.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_register_resources(
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_register_resources", || {
        let info = info.infos(ninfo)?;
        let (server, handle, _) = server()?;
        let work = async move { server.register_resources(info).await.map_err(status_of) };
        run_op(work, &handle, cbfunc, cbdata)
    })
}

/// `PMIx_server_deregister_resources`: forget the resources `info` names.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_deregister_resources(
    info: Array<'_, CInfo>,
    ninfo: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_deregister_resources", || {
        let info = info.infos(ninfo)?;
        let (server, handle, _) = server()?;
        let work = async move { server.deregister_resources(info).await.map_err(status_of) };
        run_op(work, &handle, cbfunc, cbdata)
    })
}

/// `PMIx_server_collect_inventory`: this node's inventory (its name, memory and topology),
/// handed to `cbfunc` on one of the server's threads; the infos are lent until the host
/// calls the release function it is given.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_collect_inventory(
    directives: Array<'_, CInfo>,
    ndirs: usize,
    cbfunc: Option<InfoCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_collect_inventory", || {
        let f = cbfunc.ok_or(Status::ERR_BAD_PARAM)?;
        let directives = directives.infos(ndirs)?;
        let (server, handle, _) = server()?;
        let data = CbData(cbdata);
        handle.spawn_blocking(move || {
            let inventory = server.collect_inventory(&directives);
            call_info(f, Status::SUCCESS, &inventory, data);
        });
        Ok(())
    })
}

/// `PMIx_server_deliver_inventory`: an inventory collected on another node becomes that
/// node's information here.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_deliver_inventory(
    info: Array<'_, CInfo>,
    ninfo: usize,
    directives: Array<'_, CInfo>,
    ndirs: usize,
    cbfunc: Option<OpCb>,
    cbdata: *mut c_void,
) -> CStatus {
    guard("PMIx_server_deliver_inventory", || {
        let (info, directives) = (info.infos(ninfo)?, directives.infos(ndirs)?);
        let (server, handle, _) = server()?;
        let work =
            async move { (server.deliver_inventory(info, &directives).await).map_err(status_of) };
        run_op(work, &handle, cbfunc, cbdata)
    })
}

/// A string of this server's about `cpuset`, in a block the host frees.
fn cpuset_text(
    name: &str,
    cpuset: In<'_, CSourced>,
    out: Out<'_, *mut c_char>,
    make: impl FnOnce(&pmix::server::Server, &Cpuset) -> Result<String, pmix::Error>,
) -> CStatus {
    guard(name, || {
        if out.is_null() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let cpuset = cpuset.cpuset()?.ok_or(Status::ERR_BAD_PARAM)?;
        let (server, _, _) = server()?;
        let text = make(&server, &cpuset).map_err(status_of)?;
        out.set(c_strdup(&text)?);
        Ok(())
    })
}

/// `PMIx_server_generate_locality_string`: the locality string (`PMIX_LOCALITY_STRING`) of
/// a process bound to `cpuset` on this machine.
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_generate_locality_string(
    cpuset: In<'_, CSourced>,
    locality: Out<'_, *mut c_char>,
) -> CStatus {
    let name = "PMIx_server_generate_locality_string";
    cpuset_text(name, cpuset, locality, |s, c| s.generate_locality_string(c))
}

/// `PMIx_server_generate_cpuset_string`: `cpuset` as a `PMIX_CPUSET` string (`hwloc:0-3`).
#[unsafe(no_mangle)]
pub extern "C" fn PMIx_server_generate_cpuset_string(
    cpuset: In<'_, CSourced>,
    cpuset_string: Out<'_, *mut c_char>,
) -> CStatus {
    let name = "PMIx_server_generate_cpuset_string";
    cpuset_text(name, cpuset, cpuset_string, |s, c| {
        s.generate_cpuset_string(c)
    })
}
