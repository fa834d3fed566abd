//! Values a step keeps for later steps: a step with `save = "NAME"` keeps its value (a
//! string: a node map, a locality string), and a later step's argument `"$NAME"` stands for
//! it. The runners substitute the values before a step travels to its caller, so a value one
//! process produced can be handed to another (a server's locality string to a client).

use std::collections::BTreeMap;

use super::{Call, Step};

/// The strings `"$NAME"` a call uses, for the values saved by earlier steps.
pub(super) fn saved_refs(call: &Call) -> Vec<String> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) if s.len() > 1 && s.starts_with('$') => {
                out.push(s[1..].to_owned());
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(v) = serde_json::to_value(call) {
        walk(&v, &mut out);
    }
    out
}

/// `call` with every `"$NAME"` replaced by the value saved under NAME.
fn with_saved(call: &Call, saved: &BTreeMap<String, String>) -> Result<Call, String> {
    fn walk(v: &mut serde_json::Value, saved: &BTreeMap<String, String>) -> Result<(), String> {
        match v {
            serde_json::Value::String(s) if s.len() > 1 && s.starts_with('$') => {
                let value = saved
                    .get(&s[1..])
                    .ok_or_else(|| format!("no value was saved as {}", &s[1..]))?;
                *s = value.clone();
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
    if saved_refs(call).is_empty() {
        return Ok(call.clone());
    }
    let mut v = serde_json::to_value(call).map_err(|e| e.to_string())?;
    walk(&mut v, saved)?;
    serde_json::from_value(v).map_err(|e| e.to_string())
}

impl Step {
    /// The step with every `"$NAME"` of its call replaced by the value saved under NAME.
    pub fn with_saved(&self, saved: &BTreeMap<String, String>) -> Result<Step, String> {
        Ok(Step {
            call: with_saved(&self.call, saved)?,
            ..self.clone()
        })
    }
}

/// Keep the value of a step with `save` (a string) for the steps after it.
pub fn record_saved(
    step: &Step,
    result: &[(u32, crate::rust_target::Observed)],
    saved: &mut BTreeMap<String, String>,
) {
    if let (Some(name), Some((_, o))) = (&step.save, result.first())
        && let Some(pmix::model::Value::String(Some(text))) = &o.value
    {
        saved.insert(name.clone(), text.clone());
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
        assert_eq!(saved_refs(&c), vec!["nodes".to_owned()]);
        let saved = BTreeMap::from([("nodes".to_owned(), "pmix[n[1:0-2]]".to_owned())]);
        let Call::ServerRegisterNspace { info, .. } = with_saved(&c, &saved).unwrap() else {
            panic!("the call changed kind");
        };
        assert_eq!(
            info[0].value,
            super::super::ValueSpec::String("pmix[n[1:0-2]]".into())
        );
        let e = with_saved(&c, &BTreeMap::new()).unwrap_err();
        assert!(e.contains("nodes"), "{e}");
    }

    #[test]
    fn a_call_without_references_is_unchanged() {
        let c = call("call = \"get_relative_locality\"\nlocality1 = \"a\"\nlocality2 = \"$\"\n");
        assert!(saved_refs(&c).is_empty(), "a lone `$` is text");
        let Call::GetRelativeLocality { locality2, .. } = with_saved(&c, &BTreeMap::new()).unwrap()
        else {
            panic!("the call changed kind");
        };
        assert_eq!(locality2, "$");
    }
}
