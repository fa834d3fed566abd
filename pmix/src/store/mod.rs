//! What a server knows: the realms of each registered namespace, the resources registered
//! apart from any namespace, the committed data of processes, the values processes posted
//! for their groups, and which processes are its local clients. Sans-IO.

pub(crate) mod jobinfo;
pub(crate) mod modex;
pub mod published;
pub(crate) mod qualified;
pub mod realm;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

pub(crate) use modex::{Found, ModexStore};
pub(crate) use qualified::GroupValues;
pub use realm::{JobRealms, Qualifiers, Realm, default_realm, is_reserved};

use crate::model::{Info, Nspace, Proc, Rank, Value};

/// The server's data: namespaces, committed values, local clients.
#[derive(Clone, Debug, Default)]
pub(crate) struct ServerStore {
    pub(crate) namespaces: BTreeMap<Nspace, JobRealms>,
    /// What the host registered with `PMIx_server_register_resources`: information not tied
    /// to a namespace, part of every job's job-level information where the job's own
    /// registration does not say otherwise (v5.0 §17.2.5).
    pub(crate) resources: Vec<Info>,
    pub(crate) modex: ModexStore,
    /// What the host stored for processes with `PMIx_Store_internal`: read by the host's own
    /// gets only, never sent to clients or to other nodes (OpenPMIx keeps it inside the
    /// server too).
    pub(crate) internal: BTreeMap<Proc, modex::KvList>,
    /// What processes posted for the groups they constructed, by context id.
    pub(crate) group_values: GroupValues,
    /// The processes on this node: registered as clients (`PMIx_server_register_client`) or
    /// listed in their namespace's `PMIX_LOCAL_PEERS` for this node. A fence waits for all of
    /// them, even for those whose client registration has not happened yet.
    pub(crate) local: BTreeSet<Proc>,
    /// Local clients that finalized or disconnected: they will post nothing more.
    pub(crate) gone: BTreeSet<Proc>,
    /// The name of the node this server runs on.
    pub(crate) hostname: Option<String>,
}

impl ServerStore {
    pub(crate) fn realms(&self, nspace: &str) -> Option<&JobRealms> {
        self.namespaces
            .iter()
            .find(|(n, _)| n.as_str() == nspace)
            .map(|(_, r)| r)
    }

    /// The realms of `nspace` as its processes see them: its own registration over the
    /// resources registered apart from any namespace.
    pub(crate) fn job_view(&self, nspace: &str) -> Option<Cow<'_, JobRealms>> {
        let own = self.realms(nspace)?;
        if self.resources.is_empty() {
            return Some(Cow::Borrowed(own));
        }
        Some(Cow::Owned(
            own.over(&self.resource_realms(own.nspace.clone())),
        ))
    }

    /// The resources as realms of their own, for `nspace`.
    pub(crate) fn resource_realms(&self, nspace: Nspace) -> JobRealms {
        let mut r = JobRealms::new(nspace);
        r.register(&self.resources);
        r
    }

    /// `PMIx_server_register_resources`: a key registered again replaces its value; an
    /// array (a node's, an application's) is added beside those before it.
    pub(crate) fn register_resources(&mut self, info: &[Info]) {
        for i in info {
            let is_array = matches!(i.value, Value::DataArray(_));
            match self.resources.iter_mut().find(|r| r.key == i.key) {
                Some(slot) if !is_array => *slot = i.clone(),
                _ => self.resources.push(i.clone()),
            }
        }
    }

    /// `PMIx_server_deregister_resources`: only keys count (v5.0 §17.2.6). A plain key goes
    /// with its value; an array names, by its first element (a node's hostname or id, an
    /// application's number), which registered array loses the keys it lists after that.
    pub(crate) fn deregister_resources(&mut self, info: &[Info]) {
        for i in info {
            let Some(asked) = realm::info_array_items(&i.value) else {
                self.resources.retain(|r| r.key != i.key);
                continue;
            };
            let Some((id, keys)) = asked.split_first() else {
                continue;
            };
            self.resources.retain_mut(|r| {
                if r.key != i.key {
                    return true;
                }
                let Some(held) = realm::info_array_items(&r.value) else {
                    return true;
                };
                if held
                    .first()
                    .is_none_or(|h| h.key != id.key || h.value != id.value)
                {
                    return true;
                }
                let kept: Vec<Info> = (held.iter().skip(1))
                    .filter(|h| keys.iter().all(|k| k.key != h.key))
                    .cloned()
                    .collect();
                if kept.is_empty() || keys.is_empty() {
                    return false;
                }
                let mut all = vec![held[0].clone()];
                all.extend(kept);
                r.value = realm::info_array(all);
                true
            });
        }
    }

    /// Whether a process is a client of this server (on this node).
    pub(crate) fn is_local(&self, proc: &Proc) -> bool {
        self.local.contains(proc)
    }

    /// Record the local peers a namespace's registration lists for this node.
    pub(crate) fn add_registered_local_peers(&mut self, nspace: &Nspace) {
        let Some(realms) = self.namespaces.get(nspace) else {
            return;
        };
        let peers = realms.lookup(
            crate::model::attr::LOCAL_PEERS.wire_key(),
            Rank::WILDCARD,
            &Qualifiers::default(),
            None,
            self.hostname.as_deref(),
        );
        let Some(list) = peers.and_then(crate::model::Value::as_str) else {
            return;
        };
        let ranks: Vec<u32> = list
            .split(',')
            .filter_map(|r| r.trim().parse().ok())
            .collect();
        for r in ranks {
            self.local
                .insert(Proc::new(nspace.clone(), crate::model::Rank(r)));
        }
    }

    /// The participants of `procs` that run on this node.
    pub(crate) fn local_participants(&self, procs: &[Proc]) -> BTreeSet<Proc> {
        let mut local = BTreeSet::new();
        for p in procs {
            if p.rank == Rank::WILDCARD {
                local.extend(self.local_ranks(p.nspace.as_str()));
            } else if self.is_local(p) {
                local.insert(p.clone());
            }
        }
        local
    }

    /// Whether every participant of `procs` runs on this node. A whole namespace this server
    /// does not hold is not local: it runs elsewhere (a job spawned onto other nodes), and
    /// only the host knows where.
    pub(crate) fn all_local(&self, procs: &[Proc]) -> bool {
        procs.iter().all(|p| {
            if p.rank == Rank::WILDCARD {
                let Some(realms) = self.realms(p.nspace.as_str()) else {
                    return false;
                };
                let local = self.local_ranks(p.nspace.as_str()).len();
                realms.job_size().is_none_or(|s| s as usize <= local)
            } else {
                self.is_local(p)
            }
        })
    }

    /// The local processes of a namespace, in rank order.
    pub(crate) fn local_ranks(&self, nspace: &str) -> Vec<Proc> {
        self.local
            .iter()
            .filter(|p| p.nspace.as_str() == nspace)
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Rank, attr};
    use crate::store::realm::{info, info_array};

    fn value_of(s: &ServerStore, key: &str) -> Option<Value> {
        let view = s.job_view("job")?;
        view.lookup(key, Rank::WILDCARD, &Qualifiers::default(), None, None)
            .cloned()
    }

    #[test]
    fn resources_are_every_jobs_unless_its_registration_says_otherwise() {
        let mut s = ServerStore::default();
        let mut own = JobRealms::new(Nspace::new("job").unwrap());
        own.register(&[info(attr::RM_NAME.wire_key(), Value::string("own rm"))]);
        s.namespaces.insert(Nspace::new("job").unwrap(), own);
        s.register_resources(&[
            info(attr::CLUSTER_ID.wire_key(), Value::string("c1")),
            info(attr::RM_NAME.wire_key(), Value::string("resource rm")),
        ]);
        let cluster = attr::CLUSTER_ID.wire_key();
        assert_eq!(value_of(&s, cluster), Some(Value::string("c1")));
        // §17.2.5: the namespace's own registration wins for that namespace.
        assert_eq!(
            value_of(&s, attr::RM_NAME.wire_key()),
            Some(Value::string("own rm"))
        );
        // A key registered again replaces its value.
        s.register_resources(&[info(cluster, Value::string("c2"))]);
        assert_eq!(value_of(&s, cluster), Some(Value::string("c2")));
        s.deregister_resources(&[info(cluster, Value::Undef)]);
        assert_eq!(value_of(&s, cluster), None);
    }

    /// A registration as Slurm 22.05's `mpi/pmix` plugin makes it: its node's id and size
    /// loose, the maps, and no node array.
    #[test]
    fn loose_node_keys_join_the_mapped_node_of_the_servers_host() {
        let mut realms = JobRealms::new(Nspace::new("slurm.0").unwrap());
        realms.register(&[
            info(attr::NODEID.wire_key(), Value::Uint32(0)),
            info(attr::NODE_SIZE.wire_key(), Value::Uint32(2)),
        ]);
        realms.name_local_node("vm");
        realms
            .apply_maps(&["vm".to_owned()], &[vec![0, 1]])
            .unwrap();
        assert_eq!(realms.nodes.len(), 1, "{:?}", realms.nodes);
        let data = jobinfo::get_reply_job_data(&realms);
        let arrays: Vec<_> = (data.kvals.iter())
            .filter(|k| k.key.as_str() == attr::NODE_INFO_ARRAY.wire_key())
            .map(|k| realm::info_array_items(&k.value).unwrap())
            .collect();
        assert_eq!(arrays.len(), 1);
        let value = |key: &str| {
            (arrays[0].iter())
                .find(|i| i.key.as_str() == key)
                .map(|i| i.value.clone())
        };
        assert_eq!(value(attr::HOSTNAME.wire_key()), Some(Value::string("vm")));
        assert_eq!(value(attr::NODEID.wire_key()), Some(Value::Uint32(0)));
        assert_eq!(value(attr::NODE_SIZE.wire_key()), Some(Value::Uint32(2)));
    }

    /// Loose node keys registered after another node's array describe the server's node,
    /// not the node registered first.
    #[test]
    fn loose_node_keys_after_another_nodes_array_stay_apart_from_it() {
        let mut realms = JobRealms::new(Nspace::new("job").unwrap());
        let other = info_array(vec![
            info(attr::HOSTNAME.wire_key(), Value::string("other")),
            info(attr::NODEID.wire_key(), Value::Uint32(9)),
        ]);
        realms.register(&[
            info(attr::NODE_INFO_ARRAY.wire_key(), other),
            info(attr::NODEID.wire_key(), Value::Uint32(7)),
            info(attr::NODE_SIZE.wire_key(), Value::Uint32(2)),
        ]);
        realms.name_local_node("here");
        let ids: Vec<_> = (realms.nodes.iter())
            .map(|n| (n.hostname.as_deref(), n.nodeid))
            .collect();
        assert_eq!(ids, [(Some("here"), Some(7)), (Some("other"), Some(9))]);
        let size = attr::NODE_SIZE.wire_key();
        assert!(realms.nodes[1].info.iter().all(|i| i.key.as_str() != size));
    }

    #[test]
    fn a_node_no_one_named_is_sent_as_loose_keys_not_as_an_array() {
        let mut realms = JobRealms::new(Nspace::new("job").unwrap());
        realms.register(&[info(attr::NODE_SIZE.wire_key(), Value::Uint32(2))]);
        let data = jobinfo::get_reply_job_data(&realms);
        let keys: Vec<&str> = data.kvals.iter().map(|k| k.key.as_str()).collect();
        assert!(
            !keys.contains(&attr::NODE_INFO_ARRAY.wire_key()),
            "{keys:?}"
        );
        assert!(keys.contains(&attr::NODE_SIZE.wire_key()), "{keys:?}");
    }

    #[test]
    fn deregistering_a_node_array_key_keeps_the_nodes_other_keys() {
        let mut s = ServerStore::default();
        let host = attr::HOSTNAME.wire_key();
        let node = |keys: Vec<Info>| {
            let mut all = vec![info(host, Value::string("n0"))];
            all.extend(keys);
            info(attr::NODE_INFO_ARRAY.wire_key(), info_array(all))
        };
        let mem = attr::AVAIL_PHYS_MEMORY.wire_key();
        let aliases = attr::HOSTNAME_ALIASES.wire_key();
        s.register_resources(&[node(vec![
            info(mem, Value::Uint64(64)),
            info(aliases, Value::string("a0")),
        ])]);
        s.deregister_resources(&[node(vec![info(mem, Value::Undef)])]);
        let held = realm::info_array_items(&s.resources[0].value).unwrap();
        assert!(held.iter().all(|i| i.key.as_str() != mem));
        assert!(held.iter().any(|i| i.key.as_str() == aliases));
        // Naming the node alone removes all of it.
        s.deregister_resources(&[node(Vec::new())]);
        assert!(s.resources.is_empty());
    }
}
