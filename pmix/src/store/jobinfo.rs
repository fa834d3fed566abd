//! The job-info reply: what a client receives right after connecting, in the layout OpenPMIx
//! 4.2's `hash` store expects (WIRE.md §5.6, `captures/req_reply_hash.hex`).
//!
//! After the namespace come key-value pairs, one pack call each: the job-realm keys, then
//! `pmix.ssn.arr` (session id first), one `pmix.node.arr` per node (hostname and node id first),
//! one `pmix.app.arr` per application (its number first), and one `pmix.pblob` per process: a
//! byte object holding the rank (`PMIX_PROC_RANK`) and that process's key-value pairs. The
//! client files each under the realm the array names; loose keys go to the job realm.
//!
//! A get reply about another namespace carries the same information ([`get_reply_job_data`])
//! in the layout OpenPMIx 4.2's client files a get reply with: its hash store's handler of
//! fetched data knows the realm arrays and `pmix.pdata` (`PMIX_PROC_INFO_ARRAY`: an info
//! array whose first element is the rank) but keeps a `pmix.pblob` as an opaque value. So
//! there each process's values travel as `pmix.pdata`, and `pmix.bfrops.mod` (read only when
//! a client connects) is left out.

use super::JobRealms;
use super::realm::{info, info_array};
use crate::Error;
use crate::codec::{BufferType, DataBuffer};
use crate::model::{ByteObject, Info, Key, Kval, Proc, Rank, Value, attr};
use crate::wire::ProcData;

/// `PMIX_PROC_BLOB`: the per-process byte object of the job-info reply (OpenPMIx internal).
pub(crate) const PROC_BLOB_KEY: &str = "pmix.pblob";
/// `PMIX_BFROPS_MODULE`: OpenPMIx servers send their version under this key.
pub(crate) const BFROPS_MODULE_KEY: &str = "pmix.bfrops.mod";

/// The key-value pairs of a job-info reply for `realms`.
pub(crate) fn job_info_kvals(
    realms: &JobRealms,
    buffer_type: BufferType,
    version: &str,
) -> Result<Vec<Kval>, Error> {
    let mut out = realm_kvals(realms);
    out.insert(
        realms.job.len(),
        kval(BFROPS_MODULE_KEY, Value::string(version)),
    );
    for (rank, proc) in &realms.procs {
        let mut b = DataBuffer::with_type(buffer_type);
        b.pack(&[Rank(*rank)])?;
        for i in proc
            .iter()
            .filter(|i| i.key.as_str() != attr::RANK.wire_key())
        {
            b.pack(&[to_kval(i)])?;
        }
        out.push(kval(
            PROC_BLOB_KEY,
            Value::ByteObject(ByteObject(b.unload())),
        ));
    }
    Ok(out)
}

/// The job information of `realms` as the first entry of a get reply about that namespace
/// from a process of another one: the values of the namespace under its wildcard rank.
///
/// OpenPMIx 4.2's server answers a get of a process of another namespace this way (the job
/// data, then the process's values), and its client keeps all of it and answers that
/// namespace's keys from it afterwards. Its client never asks a server for a node-realm key
/// of a process, such as the `PMIX_HOSTNAME` of a rank: it looks that up in what it holds,
/// and fails if the namespace's process values are not there. So this server sends them
/// with a get of a wildcard-rank key too, which OpenPMIx's own answers with the key alone:
/// for a namespace registered at run time that is often a client's first get of it.
pub(crate) fn get_reply_job_data(realms: &JobRealms) -> ProcData {
    let mut kvals = realm_kvals(realms);
    for (rank, proc) in &realms.procs {
        let mut infos = vec![info(attr::RANK.wire_key(), Value::Rank(Rank(*rank)))];
        infos.extend(
            proc.iter()
                .filter(|i| i.key.as_str() != attr::RANK.wire_key())
                .cloned(),
        );
        kvals.push(kval(attr::PROC_INFO_ARRAY.wire_key(), info_array(infos)));
    }
    ProcData {
        proc: Proc::new(realms.nspace.clone(), Rank::WILDCARD),
        kvals,
    }
}

/// Whether the values a get reply carries for `data.proc` are a namespace's job information
/// ([`get_reply_job_data`], or OpenPMIx's) rather than the answer: values of a wildcard rank
/// that hold realm arrays.
pub(crate) fn is_job_data(data: &ProcData) -> bool {
    data.proc.rank == Rank::WILDCARD
        && data.kvals.iter().any(|k| {
            let key = k.key.as_str();
            key == attr::SESSION_INFO_ARRAY.wire_key()
                || key == attr::NODE_INFO_ARRAY.wire_key()
                || key == attr::APP_INFO_ARRAY.wire_key()
                || key == attr::PROC_INFO_ARRAY.wire_key()
        })
}

/// The job-realm keys, then the session, node and application arrays of `realms`.
fn realm_kvals(realms: &JobRealms) -> Vec<Kval> {
    let mut out: Vec<Kval> = realms.job.iter().map(to_kval).collect();

    let mut session = vec![info(
        attr::SESSION_ID.wire_key(),
        Value::Uint32(realms.session_id.unwrap_or(u32::MAX)),
    )];
    session.extend(realms.session.iter().cloned());
    out.push(kval(
        attr::SESSION_INFO_ARRAY.wire_key(),
        info_array(session),
    ));

    for node in &realms.nodes {
        if node.hostname.is_none() && node.nodeid.is_none() {
            // A node array must name its node (OpenPMIx 4.2's clients refuse one that does
            // not, and the rest of the job's information with it): keys of a node no one
            // named go loose, as they were registered.
            out.extend(node.info.iter().map(to_kval));
            continue;
        }
        let mut infos = Vec::new();
        if let Some(h) = &node.hostname {
            infos.push(info(attr::HOSTNAME.wire_key(), Value::string(h.clone())));
        }
        if let Some(id) = node.nodeid {
            infos.push(info(attr::NODEID.wire_key(), Value::Uint32(id)));
        }
        infos.extend(
            node.info
                .iter()
                .filter(|i| {
                    i.key.as_str() != attr::HOSTNAME.wire_key()
                        && i.key.as_str() != attr::NODEID.wire_key()
                })
                .cloned(),
        );
        out.push(kval(attr::NODE_INFO_ARRAY.wire_key(), info_array(infos)));
    }

    for (appnum, app) in &realms.apps {
        let mut infos = vec![info(attr::APPNUM.wire_key(), Value::Uint32(*appnum))];
        infos.extend(
            app.iter()
                .filter(|i| i.key.as_str() != attr::APPNUM.wire_key())
                .cloned(),
        );
        out.push(kval(attr::APP_INFO_ARRAY.wire_key(), info_array(infos)));
    }
    out
}

/// Rebuild realms from a job-info reply (the client side of [`job_info_kvals`] and of
/// [`get_reply_job_data`]).
pub(crate) fn realms_from_kvals(
    realms: &mut JobRealms,
    kvals: &[Kval],
    buffer_type: BufferType,
) -> Result<(), Error> {
    let mut loose = Vec::new();
    for kv in kvals {
        let key = kv.key.as_str();
        if key == PROC_BLOB_KEY {
            let Some(bytes) = kv.value.as_bytes() else {
                continue;
            };
            let mut b = DataBuffer::load(bytes.to_vec(), buffer_type);
            let rank: Rank = crate::wire::fields::one(&mut b, "blob rank")?;
            let mut infos = vec![info(attr::RANK.wire_key(), Value::Rank(rank))];
            while !b.is_exhausted() {
                for kv in b.unpack::<Kval>(usize::MAX)? {
                    infos.push(Info {
                        key: kv.key,
                        flags: crate::model::InfoDirectives(0),
                        value: kv.value,
                    });
                }
            }
            loose.push(info(attr::PROC_INFO_ARRAY.wire_key(), info_array(infos)));
        } else if key != BFROPS_MODULE_KEY {
            // Realm arrays go where their keys say; loose keys of a job-info reply belong to
            // the job (or their default realm).
            loose.push(Info {
                key: kv.key.clone(),
                flags: crate::model::InfoDirectives(0),
                value: kv.value.clone(),
            });
        }
    }
    realms.register(&loose);
    Ok(())
}

fn to_kval(i: &Info) -> Kval {
    Kval {
        key: i.key.clone(),
        value: i.value.clone(),
    }
}

fn kval(key: &str, value: Value) -> Kval {
    Kval {
        key: Key::from_checked(key.to_owned()),
        value,
    }
}
