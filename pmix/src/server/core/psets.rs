//! Process sets the host defines (v5.0 ch. 14, §16.2.19–20): named, immutable lists of
//! processes. The server announces each definition and deletion to its local clients
//! (`PMIX_PROCESS_SET_DEFINE` with `PMIX_PSET_NAME` and `PMIX_PSET_MEMBERS`,
//! `PMIX_PROCESS_SET_DELETE` with `PMIX_PSET_NAME`) and answers the process-set queries from
//! what it was told (`PMIX_QUERY_NUM_PSETS`, `PMIX_QUERY_PSET_NAMES`, and
//! `PMIX_QUERY_PSET_MEMBERSHIP` qualified by `PMIX_PSET_NAME`). Keeping that knowledge
//! consistent across servers is the host's part (§16.2.19, advice to hosts).

use std::collections::BTreeMap;

use crate::model::{DataArray, Info, Proc, Query, Status, Value, attr};
use crate::query as q;

/// The process sets the host defined, by name.
#[derive(Debug, Default)]
pub(super) struct ProcessSets(BTreeMap<String, Vec<Proc>>);

impl ProcessSets {
    /// Define `name`: the event's information, or why not.
    pub(super) fn define(&mut self, name: &str, members: Vec<Proc>) -> Result<Vec<Info>, Status> {
        if name.is_empty() || members.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        if self.0.contains_key(name) {
            return Err(Status::ERR_EXISTS);
        }
        self.0.insert(name.to_owned(), members.clone());
        Ok(vec![
            Info::new(attr::PSET_NAME, name.to_owned()),
            Info::new(attr::PSET_MEMBERS, DataArray::of_procs(members)),
        ])
    }

    /// Delete `name`: the event's information, or why not.
    pub(super) fn delete(&mut self, name: &str) -> Result<Vec<Info>, Status> {
        if self.0.remove(name).is_none() {
            return Err(Status::ERR_NOT_FOUND);
        }
        Ok(vec![Info::new(attr::PSET_NAME, name.to_owned())])
    }

    /// The process-set keys of `query` this server can answer.
    pub(super) fn answers(&self, query: &Query) -> Vec<Info> {
        let mut out = Vec::new();
        for key in q::asked(query) {
            if key == attr::QUERY_NUM_PSETS.wire_key() {
                out.push(Info::new(attr::QUERY_NUM_PSETS, self.0.len()));
            } else if key == attr::QUERY_PSET_NAMES.wire_key() {
                // OpenPMIx 4.2's form (its header: "comma-delimited list"), which Open MPI
                // splits and OpenPMIx programs print as a string; v5.0 says an array of
                // strings, which this crate's client makes of it (`query::standard_form`).
                let names: Vec<&str> = self.0.keys().map(String::as_str).collect();
                let names = Value::string(names.join(","));
                out.push(Info::with_key(key, names).expect("a key of the standard"));
            } else if key == attr::QUERY_PSET_MEMBERSHIP.wire_key() {
                let members = query
                    .qualifiers
                    .iter()
                    .find_map(|i| i.get(attr::PSET_NAME))
                    .and_then(|name| self.0.get(&name));
                if let Some(m) = members {
                    let m = DataArray::of_procs(m.clone());
                    out.push(Info::new(attr::QUERY_PSET_MEMBERSHIP, m));
                }
            }
        }
        out
    }
}
