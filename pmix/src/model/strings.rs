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

/// `PMIx_Error_string`: the text of a status or event code, as OpenPMIx 4.2 words it. Codes
/// it was never asked about (those only the standard's text numbers) are shown by name.
pub fn error_string(status: Status) -> String {
    captured("PMIx_Error_string", i64::from(status.0))
        .map(str::to_string)
        .or_else(|| status.name().map(str::to_string))
        .unwrap_or_else(|| NOT_FOUND.to_string())
}

const NOT_FOUND: &str = "ERROR STRING NOT FOUND";

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
    data_range_string, "PMIx_Data_range_string", DataRange, "UNKNOWN"
);
string_fn!(
    /// `PMIx_Data_type_string`.
    data_type_string, "PMIx_Data_type_string", DataType, "NOT INITIALIZED"
);
string_fn!(
    /// `PMIx_Alloc_directive_string`.
    alloc_directive_string, "PMIx_Alloc_directive_string", AllocDirective, "UNSPECIFIED"
);
string_fn!(
    /// `PMIx_Job_state_string`.
    job_state_string, "PMIx_Job_state_string", JobState, "UNKNOWN"
);
string_fn!(
    /// `PMIx_Link_state_string`.
    link_state_string, "PMIx_Link_state_string", LinkState, "UNKNOWN"
);

/// `PMIx_Info_directives_string`: `QUALIFIER` for a qualifier; otherwise `REQUIRED` or
/// `OPTIONAL`, then `:PROCESSED` and `:END` when those flags are set (OpenPMIx's format).
pub fn info_directives_string(flags: InfoDirectives) -> String {
    if flags.contains(InfoDirectives::QUALIFIER) {
        return "QUALIFIER".to_string();
    }
    let mut out = String::from(if flags.contains(InfoDirectives::REQD) {
        "REQUIRED"
    } else {
        "OPTIONAL"
    });
    if flags.contains(InfoDirectives::REQD_PROCESSED) {
        out.push_str(":PROCESSED");
    }
    if flags.contains(InfoDirectives::ARRAY_END) {
        out.push_str(":END");
    }
    out
}

/// `PMIx_IOF_channel_string`: each channel's name followed by a space, or `NONE`.
pub fn iof_channel_string(channel: IofChannel) -> String {
    let names = [
        (IofChannel::STDIN_CHANNEL, "STDIN "),
        (IofChannel::STDOUT_CHANNEL, "STDOUT "),
        (IofChannel::STDERR_CHANNEL, "STDERR "),
        (IofChannel::STDDIAG_CHANNEL, "STDDIAG "),
    ];
    let out: String = names
        .iter()
        .filter(|(c, _)| channel.0 & c.0 != 0)
        .map(|(_, n)| *n)
        .collect();
    if out.is_empty() {
        "NONE".to_string()
    } else {
        out
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text captured from OpenPMIx is what our function returns for that argument.
    #[test]
    fn every_captured_openpmix_text_is_reproduced() {
        let mut checked = 0;
        for (&(function, arg), &text) in table() {
            let ours = match function {
                "PMIx_Error_string" => error_string(Status(arg as i32)),
                "PMIx_Proc_state_string" => proc_state_string(ProcState(arg as u8)).to_string(),
                "PMIx_Scope_string" => scope_string(Scope(arg as u8)).to_string(),
                "PMIx_Persistence_string" => persistence_string(Persistence(arg as u8)).to_string(),
                "PMIx_Data_range_string" => data_range_string(DataRange(arg as u8)).to_string(),
                "PMIx_Info_directives_string" => info_directives_string(InfoDirectives(arg as u32)),
                "PMIx_Data_type_string" => data_type_string(DataType(arg as u16)).to_string(),
                "PMIx_Alloc_directive_string" => {
                    alloc_directive_string(AllocDirective(arg as u8)).to_string()
                }
                "PMIx_IOF_channel_string" => iof_channel_string(IofChannel(arg as u16)),
                "PMIx_Job_state_string" => job_state_string(JobState(arg as u8)).to_string(),
                "PMIx_Link_state_string" => link_state_string(LinkState(arg as u8)).to_string(),
                "PMIx_Device_type_string" => device_type_string(DeviceType(arg as u64)),
                other => panic!("no function {other}"),
            };
            assert_eq!(ours, text, "{function}({arg})");
            checked += 1;
        }
        assert!(checked > 300, "only {checked} texts");
    }

    #[test]
    fn unknown_values_get_openpmix_fallback_texts() {
        assert_eq!(error_string(Status(-123_456)), "ERROR STRING NOT FOUND");
        assert_eq!(scope_string(Scope(200)), "UNKNOWN SCOPE");
        assert_eq!(
            info_directives_string(InfoDirectives::REQD | InfoDirectives::ARRAY_END),
            "REQUIRED:END"
        );
        assert_eq!(iof_channel_string(IofChannel(5)), "STDIN STDERR ");
    }

    #[test]
    fn attribute_names_and_keys_map_both_ways() {
        assert_eq!(attribute_string("PMIX_JOB_SIZE"), Some("pmix.job.size"));
        assert_eq!(attribute_name("pmix.job.size"), Some("PMIX_JOB_SIZE"));
        assert_eq!(attribute_name("no.such.key"), None);
    }
}
