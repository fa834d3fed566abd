//! Where the C form keeps OpenPMIx's behaviour rather than the standard's, and the switch
//! that turns that off.
//!
//! Programs written for OpenPMIx depend on behaviours the standard does not have
//! (`docs/capi.md` lists them): `PMIx_Put` of the standard's own attributes (Open MPI puts
//! `pmix.hname` and `pmix.cpuset`; rule P-01 refuses keys of the reserved namespace);
//! `PMIx_Query_info` answering one flat list keyed by the query keys (v5.0 §7.1.2: one
//! `PMIX_QUERY_RESULTS` per query); `PMIx_Value_unload` copying a number into the caller's
//! storage and handing out a byte object's own bytes (v5.0 §3.2.8: memory is allocated);
//! `PMIx_Info_directives_string` handing out a string the caller frees (v5.0 §3.5: a
//! `const char *`); and `PMIx_Deregister_event_handler` of an unknown reference succeeding
//! (v5.0 §10.1.7: `PMIX_ERR_BAD_PARAM`). The library keeps them by default, so those
//! programs run unchanged.
//!
//! `PMIX_RS_STRICT=1` in a process's environment makes its library follow the standard in
//! all of them, and says so in its version string (`PMIx_Get_version`: `pmix-rs 0.1.0
//! strict (…)`), so that a report, or a user, can tell which behaviour they measured. The
//! environment is read once, on first use.

use std::sync::OnceLock;

/// The environment variable that asks for the standard's behaviour.
pub(crate) const STRICT_VAR: &str = "PMIX_RS_STRICT";

/// Whether this process's library follows the standard where OpenPMIx 4.2 does not.
pub(crate) fn strict() -> bool {
    static STRICT: OnceLock<bool> = OnceLock::new();
    *STRICT.get_or_init(|| {
        let value = std::env::var(STRICT_VAR).unwrap_or_default();
        parse(&value).unwrap_or_else(|| {
            tracing::warn!("{STRICT_VAR}={value:?} is neither 1 nor 0: OpenPMIx 4.2's behaviour");
            false
        })
    })
}

/// `1` asks for the standard's behaviour, `0` or nothing for OpenPMIx 4.2's; anything else
/// is not understood.
fn parse(value: &str) -> Option<bool> {
    match value.trim() {
        "1" => Some(true),
        "" | "0" => Some(false),
        _ => None,
    }
}

/// The version string `PMIx_Get_version` answers: the crate's, marked when strict.
pub(crate) fn version(strict: bool) -> String {
    let version = pmix::client::VERSION;
    if !strict {
        return version.to_owned();
    }
    // "pmix-rs 0.1.0 (…)" becomes "pmix-rs 0.1.0 strict (…)".
    match version.split_once(" (") {
        Some((name, rest)) => format!("{name} strict ({rest}"),
        None => format!("{version} strict"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_and_zero_are_understood() {
        assert_eq!(parse("1"), Some(true));
        assert_eq!(parse(" 1\n"), Some(true));
        assert_eq!(parse("0"), Some(false));
        assert_eq!(parse(""), Some(false));
        assert_eq!(parse("yes"), None);
        assert_eq!(parse("2"), None);
    }

    #[test]
    fn the_strict_version_names_itself_before_the_parenthesis() {
        let plain = version(false);
        assert_eq!(plain, pmix::client::VERSION);
        let strict = version(true);
        let (name, rest) = plain
            .split_once(" (")
            .expect("the crate's version has a parenthesis");
        assert_eq!(strict, format!("{name} strict ({rest}"));
    }
}
