//! The names vectors write for the model's values: attributes and keys, statuses, scopes,
//! ranks and processes, and infos.

use pmix::model::{Info, Proc, Rank, Scope, Status, attr};

use super::{InfoSpec, RankSpec, TargetSpec, ValueSpec};

pub(super) fn attribute(name: &str) -> Option<&'static attr::AttrDef> {
    attr::by_name(name)
}

/// The key string of `name`: an attribute's name (`PMIX_JOB_SIZE`) or a literal key.
pub fn key_string(name: &str) -> Result<String, String> {
    if name.starts_with("PMIX_") {
        return attribute(name)
            .map(|d| d.key.to_owned())
            .ok_or_else(|| format!("no attribute is named {name}"));
    }
    // Longer than PMIX_MAX_KEYLEN (511) is allowed: a vector may check that it is refused.
    if name.is_empty() || name.len() > 4096 || name.contains('\0') {
        return Err(format!("\"{name}\" is not a valid key"));
    }
    Ok(name.to_owned())
}

/// A status by its standard name, or by its number.
pub fn status_named(name: &str) -> Result<Status, String> {
    // A code outside the standard's constants (a user-defined event code) is written as its
    // number.
    if let Ok(code) = name.parse::<i32>() {
        return Ok(Status(code));
    }
    Status::from_name(name).ok_or_else(|| format!("no status is named {name}"))
}

/// A scope by name: `local`, `remote`, `global`, `internal`, `undef`, or a number.
pub fn scope_named(name: &str) -> Result<Scope, String> {
    Ok(match name {
        "undef" => Scope(0),
        "local" => Scope::LOCAL,
        "remote" => Scope::REMOTE,
        "global" => Scope::GLOBAL,
        "internal" => Scope::INTERNAL,
        other => Scope(
            other
                .parse()
                .map_err(|_| format!("\"{other}\" is not a scope"))?,
        ),
    })
}

impl RankSpec {
    /// The rank; `self_rank` stands for `"self"`.
    pub fn to_rank(&self, self_rank: Rank) -> Result<Rank, String> {
        match self {
            RankSpec::Number(n) => Ok(Rank(*n)),
            RankSpec::Name(n) => match n.as_str() {
                "wildcard" => Ok(Rank::WILDCARD),
                "undef" => Ok(Rank::UNDEF),
                "local_peers" => Ok(Rank::LOCAL_PEERS),
                "self" => Ok(self_rank),
                other => Err(format!("\"{other}\" is not a rank")),
            },
        }
    }
}

impl TargetSpec {
    /// The process named, relative to a caller of rank `self_rank` in `nspace`.
    pub fn to_proc(&self, nspace: &str, self_rank: Rank) -> Result<Proc, String> {
        let ns = self.nspace.as_deref().unwrap_or(nspace);
        let rank = self.rank.to_rank(self_rank)?;
        Proc::try_new(ns, rank).map_err(|e| e.to_string())
    }
}

impl InfoSpec {
    /// The info's key and the keys of the infos nested in its value (an info array, or a
    /// data array of infos), depth first.
    pub fn keys(&self) -> Vec<&str> {
        let mut out = vec![self.key.as_str()];
        let mut stack = vec![&self.value];
        while let Some(v) = stack.pop() {
            match v {
                ValueSpec::InfoArray(infos) => {
                    for i in infos {
                        out.push(&i.key);
                        stack.push(&i.value);
                    }
                }
                ValueSpec::Array(a) => stack.extend(&a.items),
                _ => {}
            }
        }
        out
    }

    pub fn to_info(&self, nspace: &str) -> Result<Info, String> {
        let key = key_string(&self.key)?;
        let mut info = Info::with_key(&key, self.value.to_value(nspace)?)
            .map_err(|e| format!("key \"{key}\": {e}"))?;
        if self.required {
            info.flags = pmix::model::InfoDirectives::REQD;
        }
        Ok(info)
    }
}
