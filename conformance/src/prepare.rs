//! A step's call resolved for one caller: its arguments read against the vector (the job's
//! namespace, the caller's rank, keys and infos), the same for every target. The `rust`
//! target makes the resolved call on this crate's client; the `libpmix.so` target sends it
//! to the rank's process.

use pmix::model::{Info, Proc, Rank, Value};

use crate::api::ApiCall;
use crate::vector::{Call, Step, Vector};

/// A step's call for one caller, with its arguments resolved against the vector.
#[derive(Clone, Debug)]
pub(crate) enum Prepared {
    Put(pmix::model::Scope, String, Value),
    StoreInternal(Proc, String, Value),
    Commit,
    Fence(Vec<Proc>, Vec<Info>),
    /// Target, key, infos, and whether to give no storage for a static value.
    Get(Option<Proc>, String, Vec<Info>, bool),
    Publish(Vec<Info>),
    Lookup(Vec<String>, Vec<Info>),
    Unpublish(Vec<String>, Vec<Info>),
    Finalize,
    /// A call of the other chapters.
    Api(ApiCall),
}

/// Resolve `step`'s arguments for caller `rank`.
pub(crate) fn prepare(v: &Vector, step: &Step, rank: u32) -> Result<Prepared, String> {
    use crate::vector::{key_string, scope_named};
    let ns = &v.setup.nspace;
    let infos = |list: &[crate::vector::InfoSpec]| -> Result<Vec<Info>, String> {
        list.iter().map(|i| i.to_info(ns)).collect()
    };
    let keys = |list: &[String]| -> Result<Vec<String>, String> {
        list.iter().map(|k| key_string(k)).collect()
    };
    Ok(match &step.call {
        Call::Put { scope, key, value } => {
            Prepared::Put(scope_named(scope)?, key_string(key)?, value.to_value(ns)?)
        }
        Call::StoreInternal { target, key, value } => {
            let me = Rank(rank);
            let target = match target {
                Some(t) => t.to_proc(ns, me)?,
                None => Proc::try_new(ns, me).map_err(|e| e.to_string())?,
            };
            Prepared::StoreInternal(target, key_string(key)?, value.to_value(ns)?)
        }
        Call::Commit => Prepared::Commit,
        Call::Fence {
            procs,
            info,
            nb: false,
        } => {
            let procs = procs
                .iter()
                .map(|p| p.to_proc(ns, Rank(rank)))
                .collect::<Result<Vec<_>, _>>()?;
            Prepared::Fence(procs, infos(info)?)
        }
        Call::Get { .. } => {
            let (t, k, i) = get_args(v, step, rank)?;
            let no_storage = matches!(
                step.call,
                Call::Get {
                    no_storage: true,
                    ..
                }
            );
            Prepared::Get(t, k, i, no_storage)
        }
        Call::Publish { info, nb: false } => Prepared::Publish(infos(info)?),
        Call::Lookup {
            keys: k,
            info,
            nb: false,
        } => Prepared::Lookup(keys(k)?, infos(info)?),
        Call::Unpublish {
            keys: k,
            info,
            nb: false,
        } => Prepared::Unpublish(keys(k)?, infos(info)?),
        Call::Finalize => Prepared::Finalize,
        Call::Await { .. } | Call::Vanish | Call::Init => {
            return Err("not a direct call".into());
        }
        other => Prepared::Api(
            crate::api::resolve(other, ns, rank)?.ok_or("a data-access call without its path")?,
        ),
    })
}

/// The target, key and infos of a `get` step for caller `rank`.
pub(crate) fn get_args(
    v: &Vector,
    step: &Step,
    rank: u32,
) -> Result<(Option<Proc>, String, Vec<Info>), String> {
    let Call::Get {
        target, key, info, ..
    } = &step.call
    else {
        return Err("not a get".into());
    };
    let ns = &v.setup.nspace;
    let target = target
        .as_ref()
        .map(|t| t.to_proc(ns, Rank(rank)))
        .transpose()?;
    let key = crate::vector::key_string(key)?;
    let info = info
        .iter()
        .map(|i| i.to_info(ns))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((target, key, info))
}
