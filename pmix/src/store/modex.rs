//! Committed data of processes: what `PMIx_Put` + `PMIx_Commit` posted, by scope (v5.0 §5.2).
//!
//! A client commits its values in buckets: `PMIX_LOCAL` values (visible on its node) and
//! `PMIX_REMOTE` values (visible on other nodes); `PMIX_GLOBAL` values are in both, as
//! OpenPMIx 4.2 clients send them. Data of processes on other nodes, received through a fence
//! or direct modex, is stored whole and visible to every local requester.

use std::collections::BTreeMap;

use crate::Error;
use crate::codec::{BufferType, DataBuffer};
use crate::model::{ByteObject, Kval, Proc, Scope, Value};
use crate::wire::CommitBucket;

/// Values in the order they were first posted. A process with few keys (most of them) is
/// searched in place, which keeps a server that holds every process of a large job small (a
/// map per process would cost a node allocation each); past `INDEX_FROM` keys an index by
/// key keeps a commit of one key O(log n) however many the process posted before (OpenPMIx
/// clients resend every key on every commit).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct KvList {
    items: Vec<Kval>,
    index: Option<BTreeMap<String, usize>>,
}

/// How many keys a process posts before its list is indexed.
const INDEX_FROM: usize = 16;

impl KvList {
    /// Insert `kv`, replacing the value of a key posted before (in its place).
    pub(crate) fn upsert(&mut self, kv: Kval) {
        match self.position(kv.key.as_str()) {
            Some(i) => self.items[i] = kv,
            None => {
                if let Some(index) = &mut self.index {
                    index.insert(kv.key.as_str().to_owned(), self.items.len());
                } else if self.items.len() + 1 >= INDEX_FROM {
                    let mut index: BTreeMap<String, usize> = self
                        .items
                        .iter()
                        .enumerate()
                        .map(|(i, k)| (k.key.as_str().to_owned(), i))
                        .collect();
                    index.insert(kv.key.as_str().to_owned(), self.items.len());
                    self.index = Some(index);
                }
                self.items.push(kv);
            }
        }
    }

    fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.items.iter().position(|k| k.key.as_str() == key),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Kval> {
        self.position(key).map(|i| &self.items[i])
    }

    pub(crate) fn as_slice(&self) -> &[Kval] {
        &self.items
    }
}

/// The committed values of one process.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ProcModex {
    /// Values visible to processes on the same node (local and global scope).
    pub(crate) local: KvList,
    /// Values visible to processes on other nodes (remote and global scope).
    pub(crate) remote: KvList,
}

/// What a search of committed data found.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Found {
    Value(Value),
    /// The key exists but in a scope that excludes the requester (rules SC-02, SC-03, SC-06).
    OutsideScope,
    Missing,
}

/// Committed data of every process this server knows, local or not.
#[derive(Clone, Debug, Default)]
pub(crate) struct ModexStore {
    procs: BTreeMap<Proc, ProcModex>,
}

impl ModexStore {
    /// Merge a commit: a key posted again takes its new value (rule P-05).
    pub(crate) fn commit(&mut self, proc: &Proc, buckets: Vec<CommitBucket>) {
        let entry = self.procs.entry(proc.clone()).or_default();
        for bucket in buckets {
            let (to_local, to_remote) = match bucket.scope {
                Scope::LOCAL => (true, false),
                Scope::REMOTE => (false, true),
                _ => (true, true),
            };
            for kv in bucket.kvals {
                match (to_local, to_remote) {
                    (true, true) => {
                        entry.local.upsert(kv.clone());
                        entry.remote.upsert(kv);
                    }
                    (true, false) => entry.local.upsert(kv),
                    _ => entry.remote.upsert(kv),
                }
            }
        }
    }

    /// Store the whole data of a process on another node (from a fence or direct modex).
    pub(crate) fn store_remote(&mut self, proc: &Proc, kvals: Vec<Kval>) {
        let entry = self.procs.entry(proc.clone()).or_default();
        for kv in kvals {
            entry.local.upsert(kv.clone());
            entry.remote.upsert(kv);
        }
    }

    /// Whether the process has committed (or its data has arrived) at least once.
    pub(crate) fn has_data(&self, proc: &Proc) -> bool {
        self.procs.contains_key(proc)
    }

    /// The values of `proc` a requester may see: on the same node or not.
    pub(crate) fn visible(&self, proc: &Proc, same_node: bool) -> Option<&[Kval]> {
        self.procs.get(proc).map(|m| {
            if same_node {
                m.local.as_slice()
            } else {
                m.remote.as_slice()
            }
        })
    }

    /// Search one key of one process.
    pub(crate) fn find(&self, proc: &Proc, key: &str, same_node: bool) -> Found {
        let Some(m) = self.procs.get(proc) else {
            return Found::Missing;
        };
        let (mine, other) = if same_node {
            (&m.local, &m.remote)
        } else {
            (&m.remote, &m.local)
        };
        if let Some(kv) = mine.get(key) {
            return Found::Value(kv.value.clone());
        }
        if other.get(key).is_some() {
            return Found::OutsideScope;
        }
        Found::Missing
    }

    /// The scope `key` was posted with, as far as the buckets tell: local only, remote only,
    /// or both (global).
    pub(crate) fn posted_scope(&self, proc: &Proc, key: &str) -> Option<Scope> {
        let m = self.procs.get(proc)?;
        match (m.local.get(key).is_some(), m.remote.get(key).is_some()) {
            (true, true) => Some(Scope::GLOBAL),
            (true, false) => Some(Scope::LOCAL),
            (false, true) => Some(Scope::REMOTE),
            (false, false) => None,
        }
    }

    /// The processes of a namespace that posted `key` (for gets with `PMIX_RANK_UNDEF`).
    pub(crate) fn owner_of(
        &self,
        nspace: &str,
        key: &str,
        same_node: bool,
    ) -> Option<(Proc, Value)> {
        self.procs.iter().find_map(|(p, _)| {
            if p.nspace.as_str() != nspace {
                return None;
            }
            match self.find(p, key, same_node) {
                Found::Value(v) => Some((p.clone(), v)),
                _ => None,
            }
        })
    }

    /// Forget the data of one process (`PMIx_server_deregister_client`).
    pub(crate) fn remove_proc(&mut self, proc: &Proc) {
        self.procs.remove(proc);
    }

    /// Forget the data of a namespace (`PMIx_server_deregister_nspace`).
    pub(crate) fn remove_nspace(&mut self, nspace: &str) {
        self.procs.retain(|p, _| p.nspace.as_str() != nspace);
    }

    /// Encode the data of some processes as the blob exchanged through the host (fence and
    /// direct modex). The host treats it as opaque bytes; only PMIx servers read it.
    pub(crate) fn encode_blob(&self, procs: &[Proc]) -> Result<Vec<u8>, Error> {
        let mut b = DataBuffer::with_type(BufferType::NonDescribed);
        for p in procs {
            if let Some(m) = self.procs.get(p) {
                b.pack(std::slice::from_ref(p))?;
                let mut inner = DataBuffer::with_type(BufferType::NonDescribed);
                for kv in m.remote.as_slice() {
                    inner.pack(std::slice::from_ref(kv))?;
                }
                b.pack(&[ByteObject(inner.unload())])?;
            }
        }
        Ok(b.unload())
    }

    /// Read a blob made by [`ModexStore::encode_blob`] (possibly several concatenated, as a
    /// host returns them) and store each process's data.
    pub(crate) fn store_blob(
        &mut self,
        blob: &[u8],
        skip: impl Fn(&Proc) -> bool,
    ) -> Result<(), Error> {
        let mut b = DataBuffer::load(blob.to_vec(), BufferType::NonDescribed);
        while !b.is_exhausted() {
            let proc: Proc = crate::wire::fields::one(&mut b, "modex process")?;
            let bo: ByteObject = crate::wire::fields::one(&mut b, "modex data")?;
            let kvals = unpack_kvals(bo.0, BufferType::NonDescribed)?;
            if !skip(&proc) {
                self.store_remote(&proc, kvals);
            }
        }
        Ok(())
    }
}

/// Unpack a buffer holding one `PMIX_KVAL` per pack call.
pub(crate) fn unpack_kvals(bytes: Vec<u8>, buffer_type: BufferType) -> Result<Vec<Kval>, Error> {
    let mut b = DataBuffer::load(bytes, buffer_type);
    let mut out = Vec::new();
    while !b.is_exhausted() {
        out.extend(b.unpack::<Kval>(usize::MAX)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Key;

    fn kv(key: &str, n: u32) -> Kval {
        Kval {
            key: Key::new(key).unwrap(),
            value: Value::Uint32(n),
        }
    }

    #[test]
    fn keys_keep_their_first_place_whether_searched_or_indexed() {
        let mut l = KvList::default();
        for i in 0..40u32 {
            l.upsert(kv(&format!("k{i}"), i));
            // A replaced value stays in its key's place, before and after the index exists.
            l.upsert(kv("k0", 1000 + i));
        }
        assert_eq!(l.as_slice().len(), 40);
        assert_eq!(l.as_slice()[0].value, Value::Uint32(1039));
        assert_eq!(l.get("k39").map(|k| &k.value), Some(&Value::Uint32(39)));
        assert_eq!(l.get("k7").map(|k| &k.value), Some(&Value::Uint32(7)));
        assert!(l.get("k40").is_none());
        let order: Vec<&str> = l.as_slice().iter().map(|k| k.key.as_str()).collect();
        let want: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
        assert_eq!(order, want);
    }
}
