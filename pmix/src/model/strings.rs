//! The standard's `*_string` functions (PMIx v5.0 §3.5): values as human-readable text.
//!
//! The texts are OpenPMIx 4.2.2's, byte for byte, so that logs and tools read the same under
//! either implementation; they were captured from `libpmix.so.2` into
//! `pmix/data/openpmix-4.2-strings.tsv` (see `pmix/tests/data/golden/`), which is compiled in.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::*;

/// OpenPMIx's text for each (function, argument) it was asked about.
fn table() -> &'static BTreeMap<(&'static str, i64), &'static str> {
    static TABLE: OnceLock<BTreeMap<(&'static str, i64), &'static str>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let text = include_str!("../../data/openpmix-4.2-strings.tsv");
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut cells = l.splitn(3, '\t');
                let (f, arg, out) = (cells.next()?, cells.next()?, cells.next()?);
                Some(((f, arg.parse().ok()?), out))
            })
            .collect()
    })
}

fn captured(function: &str, arg: i64) -> Option<&'static str> {
    table().get(&(function, arg)).copied()
}

/// `PMIx_Error_string`: the text of a status or event code.
pub fn error_string(status: Status) -> String {
    captured("PMIx_Error_string", i64::from(status.0))
        .map(str::to_string)
        .or_else(|| status.name().map(str::to_string))
        .unwrap_or_else(|| "ERROR STRING NOT FOUND".to_string())
}

macro_rules! string_fn {
    ($(#[$doc:meta])* $fn_name:ident, $c_name:literal, $t:ty, $fallback:literal) => {
        $(#[$doc])*
        pub fn $fn_name(value: $t) -> &'static str {
            captured($c_name, value.0 as i64).unwrap_or($fallback)
        }
    };
}

string_fn!(
    /// `PMIx_Proc_state_string`.
    proc_state_string, "PMIx_Proc_state_string", ProcState, "UNKNOWN STATE"
);
string_fn!(
    /// `PMIx_Scope_string`.
    scope_string, "PMIx_Scope_string", Scope, "UNKNOWN SCOPE"
);
string_fn!(
    /// `PMIx_Persistence_string`.
    persistence_string, "PMIx_Persistence_string", Persistence, "UNKNOWN PERSISTENCE"
);
string_fn!(
    /// `PMIx_Data_range_string`.
    data_range_string, "PMIx_Data_range_string", DataRange, "UNKNOWN RANGE"
);
string_fn!(
    /// `PMIx_Data_type_string`.
    data_type_string, "PMIx_Data_type_string", DataType, "UNKNOWN"
);
string_fn!(
    /// `PMIx_Alloc_directive_string`.
    alloc_directive_string, "PMIx_Alloc_directive_string", AllocDirective, "UNKNOWN"
);
string_fn!(
    /// `PMIx_Job_state_string`.
    job_state_string, "PMIx_Job_state_string", JobState, "UNKNOWN"
);
string_fn!(
    /// `PMIx_Link_state_string`.
    link_state_string, "PMIx_Link_state_string", LinkState, "UNKNOWN"
);

/// Join the names of the bits set in `bits`, from a table of (bit, text), OpenPMIx style.
fn bit_names(bits: u64, names: &[(u64, &str)], none: &str) -> String {
    let parts: Vec<&str> = names
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    if parts.is_empty() {
        none.to_string()
    } else {
        parts.join(":")
    }
}

/// `PMIx_Info_directives_string`: the names of the flags set.
pub fn info_directives_string(flags: InfoDirectives) -> String {
    if let Some(s) = captured("PMIx_Info_directives_string", i64::from(flags.0)) {
        return s.to_string();
    }
    let names: Vec<(u64, &str)> = [1u32, 2, 4, 8, 16]
        .iter()
        .filter_map(|b| {
            Some((
                u64::from(*b),
                captured("PMIx_Info_directives_string", i64::from(*b))?,
            ))
        })
        .collect();
    bit_names(u64::from(flags.0), &names, "UNSPECIFIED")
}

/// `PMIx_IOF_channel_string`: the names of the channels set.
pub fn iof_channel_string(channel: IofChannel) -> String {
    if let Some(s) = captured("PMIx_IOF_channel_string", i64::from(channel.0)) {
        return s.to_string();
    }
    let names: Vec<(u64, &str)> = [1u16, 2, 4, 8]
        .iter()
        .filter_map(|b| {
            Some((
                u64::from(*b),
                captured("PMIx_IOF_channel_string", i64::from(*b))?,
            ))
        })
        .collect();
    bit_names(u64::from(channel.0), &names, "NONE")
}

/// `PMIx_Device_type_string`.
pub fn device_type_string(device_type: DeviceType) -> String {
    i64::try_from(device_type.0)
        .ok()
        .and_then(|v| captured("PMIx_Device_type_string", v))
        .unwrap_or("UNKNOWN")
        .to_string()
}

/// `PMIx_Get_attribute_string`: the key string of an attribute named `PMIX_…`.
pub fn attribute_string(name: &str) -> Option<&'static str> {
    attr::by_name(name).map(|d| d.key)
}

/// `PMIx_Get_attribute_name`: the `PMIX_…` name of a key string.
pub fn attribute_name(key: &str) -> Option<&'static str> {
    attr::by_key(key).map(|d| d.name)
}
