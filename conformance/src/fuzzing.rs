//! The entry point of the `vector_file` fuzz target in `fuzz/` (STYLE 17: the target is a
//! thin shell over this). A vector file comes from whoever wrote it, not from this project:
//! any bytes must either load as a vector every target can run or be refused with an error
//! naming the line or the field ([`crate::vector::parse`]), never panic the runner later.

use pmix::model::attr;

use crate::vector::{Vector, parse};

/// At most this many attributes of a vector are taken out of copies of it: each copy is a
/// reparse of the whole text.
const ABLATIONS: usize = 4;

/// Load `data` as a vector file; if it loads, resolve every step for each of its callers as
/// the runners do, and do the same for copies without the attributes it names
/// ([`crate::ablation::without`]). Errors are the expected answer to most inputs; a panic
/// is the failure.
pub fn vector_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(v) = parse(text, "fuzzed") else {
        return;
    };
    resolve_all(&v);
    let named = attr::V5_0
        .iter()
        .chain(attr::DRAFT)
        .filter(|d| text.contains(d.name) || text.contains(d.key))
        .take(ABLATIONS);
    for d in named {
        if let Ok(copy) = crate::ablation::without(&v, d.name) {
            resolve_all(&copy);
        }
    }
}

/// Every step of `v` resolved for each of its callers, as the `rust` and `libpmix.so`
/// targets resolve them before a call (the results are not judged: a step may name a value
/// an earlier step saves).
fn resolve_all(v: &Vector) {
    for step in &v.steps {
        if v.server_of(step).is_some() {
            let _ = crate::server_api::resolve(&step.call, &v.setup.nspace);
        } else if v.by_tool(step) {
            let _ = crate::tool_api::resolve(&step.call, &v.setup.nspace);
        } else {
            for rank in v.callers(step) {
                let _ = crate::prepare::prepare(v, step, rank);
                let _ = crate::prepare::get_args(v, step, rank);
            }
        }
    }
}
