//! `PMIx_Data_print`: a value as text, for debugging (PMIx v5.0 §10.3.4).
//!
//! The standard leaves the format to the implementation. Ours names the data type and shows
//! the value, recursing into structures: `PMIX_UINT32: 4`,
//! `PMIX_INFO: pmix.job.size (flags 0x0) = PMIX_UINT32: 4`.

use std::fmt::Write as _;

use crate::model::strings::data_type_string;
use crate::model::{Info, Text, Value};

/// Print `value` after `prefix`.
pub fn print(prefix: &str, value: &Value) -> String {
    let mut out = String::from(prefix);
    write_value(&mut out, value);
    out
}

/// A C string for a person: `NULL`, or its bytes with those of another encoding as U+FFFD.
fn opt(s: &Option<Text>) -> std::borrow::Cow<'_, str> {
    s.as_ref().map_or("NULL".into(), Text::to_str_lossy)
}

fn write_info(out: &mut String, i: &Info) {
    let _ = write!(out, "{} (flags {:#x}) = ", i.key, i.flags.0);
    write_value(out, &i.value);
}

fn write_list<T>(out: &mut String, items: &[T], mut f: impl FnMut(&mut String, &T)) {
    out.push('[');
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        f(out, item);
    }
    out.push(']');
}

fn write_value(out: &mut String, value: &Value) {
    let _ = write!(out, "{}: ", data_type_string(value.data_type()));
    match value {
        Value::Undef => out.push_str("(undefined)"),
        Value::String(s) => match s {
            // Text for a person: bytes in another encoding show as U+FFFD.
            Some(s) => out.push_str(&s.to_str_lossy()),
            None => out.push_str("NULL"),
        },
        Value::Info(i) => write_info(out, i),
        Value::Value(v) => write_value(out, v),
        Value::DataArray(a) => {
            let _ = write!(out, "{} x {} ", a.len(), data_type_string(a.data_type));
            write_list(out, &a.elements, write_value);
        }
        Value::App(a) => {
            let _ = write!(
                out,
                "cmd {} argv {:?} maxprocs {} ",
                opt(&a.cmd),
                a.argv,
                a.maxprocs
            );
            write_list(out, &a.info, write_info);
        }
        Value::Query(q) => {
            let _ = write!(out, "keys {:?} qualifiers ", q.keys);
            write_list(out, &q.qualifiers, write_info);
        }
        Value::PData(p) => {
            let _ = write!(out, "{} {} = ", p.proc, p.key);
            write_value(out, &p.value);
        }
        Value::Kval(k) => {
            let _ = write!(out, "{} = ", k.key);
            write_value(out, &k.value);
        }
        Value::Proc(p) => {
            let _ = write!(out, "{p}");
        }
        Value::Rank(r) => {
            let _ = write!(out, "{r}");
        }
        Value::Status(s) => out.push_str(&crate::model::strings::error_string(*s)),
        Value::Bool(b) => {
            let _ = write!(out, "{}", if *b { "True" } else { "False" });
        }
        other => {
            // Scalars and the remaining structures: their Debug form is complete and clear.
            let text = format!("{other:?}");
            let inner = text
                .find('(')
                .map_or(text.as_str(), |i| &text[i + 1..text.len() - 1]);
            out.push_str(inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::attr;

    #[test]
    fn print_names_the_type_and_the_value() {
        assert_eq!(print("> ", &Value::Uint32(4)), "> PMIX_UINT32: 4");
        let info = Info::new(attr::JOB_SIZE, 4);
        assert_eq!(
            print("", &Value::Info(Box::new(info))),
            "PMIX_INFO: pmix.job.size (flags 0x0) = PMIX_UINT32: 4"
        );
        assert_eq!(print("", &Value::String(None)), "PMIX_STRING: NULL");
    }
}
