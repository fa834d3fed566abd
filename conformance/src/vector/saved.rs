//! Values a step keeps for later steps: a step with `save = "NAME"` keeps its value (a
//! string: a node map, a locality string), and a later step's argument `"$NAME"` stands for
//! it, in its call or in its expectation. The runners substitute the values before a step
//! travels to its caller, so a value one process produced can be handed to another (a
//! server's locality string to a client), or be what another step must observe.
//!
//! Saved values are JSON values: the harness presets numbers too (a server's pid, for a
//! `{ pid = "$pid_n0" }`). `"$NAME/rest"` appends to a saved string (a file in a server's
//! directory: `"$tmpdir_n0/pmix.n0.tool.vserver-n0"`).

use std::collections::BTreeMap;

use super::{Call, Step};

/// What the steps saved so far, by name.
pub type Saved = BTreeMap<String, serde_json::Value>;

/// A reference in a string argument: `$NAME` or `$NAME/rest`, as the name and the rest.
fn reference(s: &str) -> Option<(&str, &str)> {
    let body = s.strip_prefix('$')?;
    let end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    let (name, rest) = body.split_at(end);
    (!name.is_empty() && (rest.is_empty() || rest.starts_with('/'))).then_some((name, rest))
}

/// The names a step refers to with `"$NAME"`, in its call and its expectation.
pub(crate) fn step_refs(step: &Step) -> Vec<String> {
    let mut out = refs(&step.call);
    out.extend(refs(&step.expect));
    out
}

/// The names `x` refers to, wherever it holds a string.
fn refs<T: serde::Serialize>(x: &T) -> Vec<String> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.extend(reference(s).map(|(n, _)| n.to_owned())),
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(v) = serde_json::to_value(x) {
        walk(&v, &mut out);
    }
    out
}

/// `call` with every reference replaced by the value saved under its name.
fn with_saved(call: &Call, saved: &Saved) -> Result<Call, String> {
    substituted(call, saved)
}

/// `x` with every reference replaced by the value saved under its name.
fn substituted<T>(x: &T, saved: &Saved) -> Result<T, String>
where
    T: Clone + serde::Serialize + serde::de::DeserializeOwned,
{
    fn walk(v: &mut serde_json::Value, saved: &Saved) -> Result<(), String> {
        match v {
            serde_json::Value::String(s) => {
                if let Some((name, rest)) = reference(s) {
                    let value = saved
                        .get(name)
                        .ok_or_else(|| format!("no value was saved as {name}"))?;
                    *v = match (value, rest) {
                        (value, "") => value.clone(),
                        (serde_json::Value::String(text), rest) => {
                            serde_json::Value::String(format!("{text}{rest}"))
                        }
                        _ => return Err(format!("{name} is not a string to append {rest} to")),
                    };
                }
            }
            serde_json::Value::Array(a) => {
                for x in a {
                    walk(x, saved)?;
                }
            }
            serde_json::Value::Object(o) => {
                for x in o.values_mut() {
                    walk(x, saved)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
    if refs(x).is_empty() {
        return Ok(x.clone());
    }
    let mut v = serde_json::to_value(x).map_err(|e| e.to_string())?;
    walk(&mut v, saved)?;
    serde_json::from_value(v).map_err(|e| format!("with the saved values: {e}"))
}

impl Step {
    /// The step with every `"$NAME"` of its call and its expectation replaced by the value
    /// saved under NAME.
    pub fn with_saved(&self, saved: &Saved) -> Result<Step, String> {
        Ok(Step {
            call: with_saved(&self.call, saved)?,
            expect: substituted(&self.expect, saved)?,
            ..self.clone()
        })
    }
}

/// The values saved for the whole run before the first step: `affinity`, the processing
/// units the harness's process may run on as the kernel reports them, in hwloc's list form
/// (`0-3,8`). Every rank inherits it: the harness binds none. Empty where the kernel does
/// not say.
pub fn run_presets() -> Saved {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let affinity = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(str::trim)
        .unwrap_or_default();
    // The effective ids (the second of each line), which every rank runs with.
    let effective = |field: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|ids| ids.split_whitespace().nth(1))
            .and_then(|id| id.parse::<u32>().ok())
            .unwrap_or_default()
    };
    let (uid, gid) = (effective("Uid:"), effective("Gid:"));
    let (other_uid, other_gid) = other_ids(uid, gid);
    Saved::from([
        ("affinity".to_owned(), affinity.into()),
        ("uid".to_owned(), uid.into()),
        ("gid".to_owned(), gid.into()),
        ("other_uid".to_owned(), other_uid.into()),
        ("other_gid".to_owned(), other_gid.into()),
    ])
}

/// The user and group ids of the ranks of `setup.other_user`, given the harness's own: ids
/// other than those (`nobody`'s on Debian, 65534, or the one below it when that is ours).
pub(super) fn other_ids(uid: u32, gid: u32) -> (u32, u32) {
    let other = |id: u32| if id == 65534 { 65533 } else { 65534 };
    (other(uid), other(gid))
}

/// Keep the value of a step with `save` (a string) for the steps after it.
pub fn record_saved(step: &Step, result: &[(u32, crate::step::Observed)], saved: &mut Saved) {
    if let (Some(name), Some((_, o))) = (&step.save, result.first())
        && let Some(text) = o.value.as_ref().and_then(pmix::model::Value::as_str)
    {
        saved.insert(name.clone(), serde_json::Value::String(text.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(toml_text: &str) -> Call {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn saved_values_replace_their_names_anywhere_in_a_call() {
        let c = call(
            r#"
call = "server_register_nspace"
nspace = "mapped"
info = [{ key = "PMIX_NODE_MAP", value = { string = "$nodes" } }]
"#,
        );
        assert_eq!(refs(&c), vec!["nodes".to_owned()]);
        let saved = Saved::from([("nodes".to_owned(), "pmix[n[1:0-2]]".into())]);
        let Call::ServerRegisterNspace { info, .. } = with_saved(&c, &saved).unwrap() else {
            panic!("the call changed kind");
        };
        assert_eq!(
            info[0].value,
            super::super::ValueSpec::String("pmix[n[1:0-2]]".into())
        );
        let e = with_saved(&c, &Saved::new()).unwrap_err();
        assert!(e.contains("nodes"), "{e}");
    }

    #[test]
    fn saved_values_replace_their_names_in_an_expectation() {
        let step: Step = toml::from_str(
            r#"
proc = 0
call = "get_cpuset"
expect.value = { cpuset = { source = "hwloc", bitmap = "$affinity" } }
"#,
        )
        .unwrap();
        assert_eq!(step_refs(&step), vec!["affinity".to_owned()]);
        let saved = Saved::from([("affinity".to_owned(), "0-3".into())]);
        let Some(super::super::ValueSpec::Cpuset(c)) =
            step.with_saved(&saved).unwrap().expect.value
        else {
            panic!("the expectation changed kind");
        };
        assert_eq!(c.bitmap, "0-3");
        assert!(step.with_saved(&Saved::new()).is_err());
    }

    #[test]
    fn a_call_without_references_is_unchanged() {
        let c = call("call = \"get_relative_locality\"\nlocality1 = \"a\"\nlocality2 = \"$\"\n");
        assert!(refs(&c).is_empty(), "a lone `$` is text");
        let Call::GetRelativeLocality { locality2, .. } = with_saved(&c, &Saved::new()).unwrap()
        else {
            panic!("the call changed kind");
        };
        assert_eq!(locality2, "$");
    }

    #[test]
    fn numbers_replace_whole_references_and_strings_take_a_path() {
        let c = call(
            r#"
call = "tool_init"
info = [
  { key = "PMIX_SERVER_PIDINFO", value = { pid = "$pid_n0" } },
  { key = "PMIX_TOOL_ATTACHMENT_FILE", value = { string = "$tmpdir_n0/pmix.n0.tool.1" } },
  { key = "PMIX_HOSTNAME", value = { string = "$x-y" } },
]
"#,
        );
        assert_eq!(refs(&c), vec!["pid_n0".to_owned(), "tmpdir_n0".to_owned()]);
        let saved = Saved::from([
            ("pid_n0".to_owned(), 42.into()),
            ("tmpdir_n0".to_owned(), "/t".into()),
        ]);
        let Call::ToolInit { info, .. } = with_saved(&c, &saved).unwrap() else {
            panic!("the call changed kind");
        };
        assert_eq!(
            info[0].value,
            super::super::ValueSpec::Pid(super::super::value::NumberSpec::Number(42))
        );
        assert_eq!(
            info[1].value,
            super::super::ValueSpec::String("/t/pmix.n0.tool.1".into())
        );
        assert_eq!(
            info[2].value,
            super::super::ValueSpec::String("$x-y".into())
        );
        let wrong = Saved::from([
            ("pid_n0".to_owned(), 42.into()),
            ("tmpdir_n0".to_owned(), 7.into()),
        ]);
        assert!(with_saved(&c, &wrong).unwrap_err().contains("tmpdir_n0"));
    }

    #[test]
    fn another_users_ids_are_never_the_harnesss() {
        assert_eq!(other_ids(0, 0), (65534, 65534));
        assert_eq!(other_ids(65534, 1000), (65533, 65534));
        assert_eq!(other_ids(1000, 65534), (65534, 65533));
        let presets = run_presets();
        assert_ne!(presets["uid"], presets["other_uid"]);
        assert_ne!(presets["gid"], presets["other_gid"]);
    }
}
