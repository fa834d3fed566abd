//! The five data realms of reserved keys (PMIx v5.0 §6.1) and what a namespace registered with
//! the server knows in each.
//!
//! A host registers a namespace with an array of infos (`PMIx_server_register_nspace`, v5.0
//! §17.2.3): loose keys, each belonging to its key's default realm, and the arrays
//! `PMIX_SESSION_INFO_ARRAY`, `PMIX_JOB_INFO_ARRAY`, `PMIX_APP_INFO_ARRAY` (identified by
//! `PMIX_APPNUM`), `PMIX_NODE_INFO_ARRAY` (identified by `PMIX_HOSTNAME` or `PMIX_NODEID`) and
//! `PMIX_PROC_INFO_ARRAY` (identified by `PMIX_RANK`), nested to any depth (rule DM-05).
//! [`JobRealms::register`] sorts them into realms; [`JobRealms::lookup`] answers a reserved
//! key following the realm rules RG/RS/RJ/RA/RP/RN of `retrieval_rules.tsv`.

use std::collections::BTreeMap;

use crate::model::{DataType, DeviceType, Info, Key, Nspace, Rank, Status, Value, attr};

/// A data realm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Realm {
    Session,
    Job,
    Application,
    Node,
    Process,
}

/// Keys whose default realm is the session (v5.0 §6.1.1).
const SESSION_KEYS: &[&str] = &[
    attr::CLUSTER_ID.wire_key(),
    attr::UNIV_SIZE.wire_key(),
    attr::TMPDIR.wire_key(),
    attr::TDIR_RMCLEAN.wire_key(),
    attr::HOSTNAME_KEEP_FQDN.wire_key(),
    attr::RM_NAME.wire_key(),
    attr::RM_VERSION.wire_key(),
];

/// Keys whose default realm is the application (v5.0 §6.1.3).
const APP_KEYS: &[&str] = &[
    attr::APPLDR.wire_key(),
    attr::APP_SIZE.wire_key(),
    attr::APP_ARGV.wire_key(),
    attr::APP_MAP_TYPE.wire_key(),
    attr::APP_MAP_REGEX.wire_key(),
    attr::WDIR.wire_key(),
    attr::PSET_NAME.wire_key(),
];

/// Keys whose default realm is the node (v5.0 §6.1.5).
const NODE_KEYS: &[&str] = &[
    attr::HOSTNAME.wire_key(),
    attr::HOSTNAME_ALIASES.wire_key(),
    attr::NODEID.wire_key(),
    attr::NODE_SIZE.wire_key(),
    attr::AVAIL_PHYS_MEMORY.wire_key(),
    attr::LOCAL_PROCS.wire_key(),
    attr::NODE_OVERSUBSCRIBED.wire_key(),
    // The node's fabric devices ("node fabric keys", rule RN-01; v5.0 §15.3 retrieves them
    // with a node qualifier). OpenPMIx's server also files them under the node.
    attr::FABRIC_DEVICES.wire_key(),
    attr::FABRIC_DEVICE.wire_key(),
    attr::FABRIC_DEVICE_INDEX.wire_key(),
    attr::FABRIC_DEVICE_NAME.wire_key(),
    attr::FABRIC_DEVICE_VENDOR.wire_key(),
    attr::FABRIC_DEVICE_BUS_TYPE.wire_key(),
    attr::FABRIC_DEVICE_VENDORID.wire_key(),
    attr::FABRIC_DEVICE_DRIVER.wire_key(),
    attr::FABRIC_DEVICE_FIRMWARE.wire_key(),
    attr::FABRIC_DEVICE_ADDRESS.wire_key(),
    attr::FABRIC_DEVICE_COORDINATES.wire_key(),
    attr::FABRIC_DEVICE_MTU.wire_key(),
    attr::FABRIC_DEVICE_SPEED.wire_key(),
    attr::FABRIC_DEVICE_STATE.wire_key(),
    attr::FABRIC_DEVICE_TYPE.wire_key(),
    attr::FABRIC_DEVICE_PCI_DEVID.wire_key(),
];

/// Job-realm keys that describe the caller's node (rules RJ-02, RN-04): v4.x and OpenPMIx
/// register them inside the node's `PMIX_NODE_INFO_ARRAY`, v5.0 lists them in the job realm.
const LOCAL_JOB_KEYS: &[&str] = &[
    attr::LOCAL_PEERS.wire_key(),
    attr::LOCALLDR.wire_key(),
    attr::LOCAL_CPUSETS.wire_key(),
    attr::LOCAL_SIZE.wire_key(),
];

/// Keys whose default realm is the process (v5.0 §6.1.4, rule RP-05).
const PROC_KEYS: &[&str] = &[
    attr::APPNUM.wire_key(),
    attr::RANK.wire_key(),
    attr::NSPACE.wire_key(),
    attr::SESSION_ID.wire_key(),
    attr::GLOBAL_RANK.wire_key(),
    attr::APP_RANK.wire_key(),
    attr::PARENT_ID.wire_key(),
    attr::EXIT_CODE.wire_key(),
    attr::PROCID.wire_key(),
    attr::LOCAL_RANK.wire_key(),
    attr::NODE_RANK.wire_key(),
    attr::PACKAGE_RANK.wire_key(),
    attr::PROC_PID.wire_key(),
    attr::PROCDIR.wire_key(),
    attr::CPUSET.wire_key(),
    attr::CPUSET_BITMAP.wire_key(),
    attr::CREDENTIAL.wire_key(),
    attr::SPAWNED.wire_key(),
    attr::REINCARNATION.wire_key(),
    attr::LOCALITY_STRING.wire_key(),
];

/// The realm a reserved key belongs to when no directive says otherwise. Keys of no list
/// (including the multi-realm keys of rule RG-01) default to the job realm.
pub fn default_realm(key: &str) -> Realm {
    if SESSION_KEYS.contains(&key) {
        Realm::Session
    } else if APP_KEYS.contains(&key) {
        Realm::Application
    } else if NODE_KEYS.contains(&key) {
        Realm::Node
    } else if PROC_KEYS.contains(&key) {
        Realm::Process
    } else {
        Realm::Job
    }
}

/// Whether a key is reserved: it starts with `pmix` (rule K-01).
pub fn is_reserved(key: &str) -> bool {
    key.starts_with("pmix")
}

/// The node-realm data of one node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeRealm {
    pub hostname: Option<String>,
    pub nodeid: Option<u32>,
    pub info: Vec<Info>,
}

/// Where to look up a reserved key: the directives and qualifiers of a get (v5.0 §6.1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Qualifiers {
    /// The realm forced by `PMIX_*_INFO`, if any.
    pub realm: Option<Realm>,
    pub session_id: Option<u32>,
    pub appnum: Option<u32>,
    pub hostname: Option<String>,
    pub nodeid: Option<u32>,
    /// `PMIX_GROUP_CONTEXT_ID`: a value posted for the group of this context id (latest draft
    /// §14.2.5), not a realm.
    pub context_id: Option<u64>,
    /// `PMIX_DEVICE_TYPE`: the device types (a mask) whose distances are asked for.
    pub device_type: Option<DeviceType>,
    /// `PMIX_DEVICE_ID`: the device (UUID or OS name) whose distances are asked for.
    pub device_id: Option<String>,
}

impl Qualifiers {
    /// The realm directives and qualifiers found in a get's info array.
    pub fn from_info(info: &[Info]) -> Qualifiers {
        let mut q = Qualifiers::default();
        for i in info {
            let k = i.key.as_str();
            let on = i.value.as_bool().unwrap_or(true);
            if k == attr::SESSION_INFO.wire_key() && on {
                q.realm = Some(Realm::Session);
            } else if k == attr::JOB_INFO.wire_key() && on {
                q.realm = Some(Realm::Job);
            } else if k == attr::APP_INFO.wire_key() && on {
                q.realm = Some(Realm::Application);
            } else if k == attr::NODE_INFO.wire_key() && on {
                q.realm = Some(Realm::Node);
            } else if k == attr::PROC_INFO.wire_key() && on {
                q.realm = Some(Realm::Process);
            } else if k == attr::SESSION_ID.wire_key() {
                q.session_id = i.value.to_u64().and_then(|v| u32::try_from(v).ok());
            } else if k == attr::APPNUM.wire_key() {
                q.appnum = i.value.to_u64().and_then(|v| u32::try_from(v).ok());
            } else if k == attr::HOSTNAME.wire_key() {
                q.hostname = i.value.to_name_lossy();
            } else if k == attr::NODEID.wire_key() {
                q.nodeid = i.value.to_u64().and_then(|v| u32::try_from(v).ok());
            } else if k == attr::GROUP_CONTEXT_ID.wire_key() {
                q.context_id = i.value.to_u64();
            } else if k == attr::DEVICE_TYPE.wire_key() {
                q.device_type = match i.value {
                    Value::DevType(t) => Some(t),
                    _ => i.value.to_u64().map(DeviceType),
                };
            } else if k == attr::DEVICE_ID.wire_key() {
                q.device_id = i.value.to_name_lossy();
            }
        }
        q
    }

    /// Whether a get narrows its answer: it names a realm or a target within one (a realm
    /// directive, a session, an application or a node: rules RG-02, RS-03, RA-01, RN-02), or
    /// selects devices (§12.4.11). Its answer need not be the key's value for the process
    /// named.
    pub fn narrows(&self) -> bool {
        self.realm.is_some()
            || self.session_id.is_some()
            || self.appnum.is_some()
            || self.hostname.is_some()
            || self.nodeid.is_some()
            || self.device_type.is_some()
            || self.device_id.is_some()
    }

    /// The answer to a get of `key` found as `value`: for `PMIX_DEVICE_DISTANCES` asked with
    /// `PMIX_DEVICE_TYPE` (a mask of device types) or `PMIX_DEVICE_ID` (a device's UUID or
    /// OS name), the distances to the devices named only (PMIx v5.0 §12.4.11); any other
    /// value as found.
    pub fn answer(&self, key: &str, value: Value) -> Value {
        if key != attr::DEVICE_DISTANCES.wire_key()
            || (self.device_type.is_none() && self.device_id.is_none())
        {
            return value;
        }
        let Value::DataArray(mut array) = value else {
            return value;
        };
        array.elements.retain(|e| match e {
            Value::DeviceDist(d) => {
                let of_type = self
                    .device_type
                    .is_none_or(|mask| d.device_type.0 & mask.0 != 0);
                let named = self.device_id.as_deref().is_none_or(|id| {
                    d.uuid.as_deref() == Some(id) || d.osname.as_deref() == Some(id)
                });
                of_type && named
            }
            _ => true,
        });
        Value::DataArray(array)
    }
}

/// Everything registered about one namespace, sorted by realm.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRealms {
    pub nspace: Nspace,
    pub session_id: Option<u32>,
    pub session: Vec<Info>,
    pub job: Vec<Info>,
    /// Application info by application number.
    pub apps: BTreeMap<u32, Vec<Info>>,
    /// The nodes; the first is the one the loose node keys are filed under when
    /// `loose_node` says there is one.
    pub nodes: Vec<NodeRealm>,
    /// Process info by rank.
    pub procs: BTreeMap<u32, Vec<Info>>,
    /// Whether `nodes[0]` holds the node keys registered outside any node array (the
    /// registering server's node, v5.0 §17.2.3), which need not be the first node named.
    loose_node: bool,
}

impl JobRealms {
    pub fn new(nspace: Nspace) -> Self {
        JobRealms {
            nspace,
            session_id: None,
            session: Vec::new(),
            job: Vec::new(),
            apps: BTreeMap::new(),
            nodes: Vec::new(),
            procs: BTreeMap::new(),
            loose_node: false,
        }
    }

    /// These realms over `base`: what `self` holds wins, what only `base` holds is added
    /// (the resources a host registers apart from any namespace, v5.0 §17.2.5).
    pub fn over(&self, base: &JobRealms) -> JobRealms {
        let mut out = base.clone();
        out.nspace = self.nspace.clone();
        if self.session_id.is_some() {
            out.session_id = self.session_id;
        }
        for i in &self.session {
            upsert(&mut out.session, i.clone());
        }
        for i in &self.job {
            upsert(&mut out.job, i.clone());
        }
        for (n, infos) in &self.apps {
            let slot = out.apps.entry(*n).or_default();
            for i in infos {
                upsert(slot, i.clone());
            }
        }
        for node in &self.nodes {
            let slot = out.node_entry(node.hostname.clone(), node.nodeid);
            for i in &node.info {
                upsert(&mut slot.info, i.clone());
            }
        }
        for (r, infos) in &self.procs {
            let slot = out.procs.entry(*r).or_default();
            for i in infos {
                upsert(slot, i.clone());
            }
        }
        out
    }

    /// Sort a registration's infos into realms (rule DM-05).
    pub fn register(&mut self, info: &[Info]) {
        for i in info {
            self.register_one(i, None);
        }
    }

    fn register_one(&mut self, i: &Info, inside: Option<Realm>) {
        let k = i.key.as_str();
        if let Some(infos) = info_array_items(&i.value) {
            if k == attr::SESSION_INFO_ARRAY.wire_key() {
                for j in &infos {
                    if j.key.as_str() == attr::SESSION_ID.wire_key() {
                        self.session_id = j.value.to_u64().and_then(|v| u32::try_from(v).ok());
                    } else {
                        self.register_one(j, Some(Realm::Session));
                    }
                }
                return;
            }
            if k == attr::JOB_INFO_ARRAY.wire_key() {
                for j in &infos {
                    self.register_one(j, Some(Realm::Job));
                }
                return;
            }
            if k == attr::APP_INFO_ARRAY.wire_key() {
                let appnum = find_u32(&infos, attr::APPNUM.wire_key()).unwrap_or(0);
                let slot = self.apps.entry(appnum).or_default();
                for j in infos {
                    upsert(slot, j);
                }
                return;
            }
            if k == attr::NODE_INFO_ARRAY.wire_key() {
                let hostname = infos
                    .iter()
                    .find(|j| j.key.as_str() == attr::HOSTNAME.wire_key())
                    .and_then(|j| j.value.to_name_lossy());
                let nodeid = find_u32(&infos, attr::NODEID.wire_key());
                let node = self.node_entry(hostname, nodeid);
                for j in infos {
                    upsert(&mut node.info, j);
                }
                return;
            }
            if k == attr::PROC_INFO_ARRAY.wire_key() {
                let rank = infos
                    .iter()
                    .find(|j| j.key.as_str() == attr::RANK.wire_key())
                    .and_then(|j| j.value.to_u64())
                    .and_then(|r| u32::try_from(r).ok());
                if let Some(rank) = rank {
                    let slot = self.procs.entry(rank).or_default();
                    for j in infos {
                        upsert(slot, j);
                    }
                }
                return;
            }
        }
        if k == attr::SESSION_ID.wire_key() && inside.is_none() {
            self.session_id = i.value.to_u64().and_then(|v| u32::try_from(v).ok());
            return;
        }
        let realm = inside.unwrap_or_else(|| default_realm(k));
        match realm {
            Realm::Session => upsert(&mut self.session, i.clone()),
            Realm::Application => upsert(self.apps.entry(0).or_default(), i.clone()),
            // A loose node key describes the node of the registering server (v5.0 §17.2.3);
            // a loose `PMIX_HOSTNAME` or `PMIX_NODEID` names it (Slurm registers its node's
            // id this way).
            Realm::Node if inside.is_none() => {
                let node = self.node_entry(None, None);
                if k == attr::HOSTNAME.wire_key() {
                    node.hostname = i.value.to_name_lossy().or(node.hostname.take());
                } else if k == attr::NODEID.wire_key() {
                    let id = i.value.to_u64().and_then(|v| u32::try_from(v).ok());
                    node.nodeid = id.or(node.nodeid);
                }
                upsert(&mut node.info, i.clone());
            }
            _ => upsert(&mut self.job, i.clone()),
        }
    }

    /// The node named by `hostname` or `nodeid`, added when there is none; with neither, the
    /// node of the loose keys, kept first (a node array registered before them is another
    /// node's).
    fn node_entry(&mut self, hostname: Option<String>, nodeid: Option<u32>) -> &mut NodeRealm {
        if hostname.is_none() && nodeid.is_none() {
            if !self.loose_node {
                self.nodes.insert(0, NodeRealm::default());
                self.loose_node = true;
            }
            return &mut self.nodes[0];
        }
        let pos = self.nodes.iter().position(|n| {
            (hostname.is_some() && n.hostname == hostname)
                || (nodeid.is_some() && n.nodeid == nodeid)
        });
        let idx = match pos {
            Some(p) => p,
            None => {
                self.nodes.push(NodeRealm::default());
                self.nodes.len() - 1
            }
        };
        let node = &mut self.nodes[idx];
        if hostname.is_some() {
            node.hostname = hostname;
        }
        if nodeid.is_some() {
            node.nodeid = nodeid;
        }
        node
    }

    /// Name the node the loose node keys were filed under `hostname`, the registering
    /// server's own (v5.0 §17.2.3), if it has no name yet; if a node of that name is
    /// registered too, the two are one and merge (the loose keys win, being explicit both).
    /// Node maps and node arrays that name the host then join it, and no node is left
    /// without a name in what clients are sent: OpenPMIx 4.2's clients refuse a
    /// `PMIX_NODE_INFO_ARRAY` with neither `PMIX_HOSTNAME` nor `PMIX_NODEID` and drop the
    /// rest of the job's information with it.
    pub fn name_local_node(&mut self, hostname: &str) {
        // Loose node keys are filed under the first node (`node_entry(None, None)`).
        let anonymous = 0;
        if !self.loose_node || self.nodes[anonymous].hostname.is_some() {
            return;
        }
        let named = (self.nodes.iter()).position(|n| n.hostname.as_deref() == Some(hostname));
        match named {
            None => self.nodes[anonymous].hostname = Some(hostname.to_owned()),
            Some(named) => {
                let loose = self.nodes.remove(anonymous);
                self.loose_node = false;
                let named = if named > anonymous { named - 1 } else { named };
                let node = &mut self.nodes[named];
                node.nodeid = node.nodeid.or(loose.nodeid);
                for i in loose.info {
                    upsert(&mut node.info, i);
                }
            }
        }
    }

    /// Fill in what a node map and a proc map imply (a host may register only
    /// `PMIX_NODE_MAP` and `PMIX_PROC_MAP`, as PRRTE does), never overriding what was
    /// registered explicitly: `nodes[i]` runs the ranks `ppn[i]`.
    ///
    /// Per node: its hostname and node id (its index in the map), `PMIX_LOCAL_PEERS`,
    /// `PMIX_LOCAL_SIZE`, `PMIX_LOCALLDR`. Per process: `PMIX_HOSTNAME`, `PMIX_NODEID`,
    /// `PMIX_LOCAL_RANK` and `PMIX_NODE_RANK` (its place on the node; one job per node is
    /// assumed, as OpenPMIx does). Job: `PMIX_NUM_NODES`, `PMIX_NODE_LIST`, `PMIX_JOB_SIZE`.
    /// Maps of different lengths, or a rank on two nodes, are `PMIX_ERR_BAD_PARAM`.
    pub fn apply_maps(&mut self, nodes: &[String], ppn: &[Vec<u32>]) -> Result<(), Status> {
        if nodes.len() != ppn.len() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let mut seen = std::collections::BTreeSet::new();
        if !ppn.iter().flatten().all(|r| seen.insert(*r)) {
            return Err(Status::ERR_BAD_PARAM);
        }
        let num = |n: usize| u32::try_from(n).map_err(|_| Status::ERR_BAD_PARAM);
        for (i, (host, ranks)) in nodes.iter().zip(ppn).enumerate() {
            let nodeid = num(i)?;
            let node = self.node_entry(Some(host.clone()), None);
            if node.nodeid.is_none() {
                node.nodeid = Some(nodeid);
            }
            let nodeid = node.nodeid.unwrap_or(nodeid);
            let peers: Vec<String> = ranks.iter().map(u32::to_string).collect();
            add_absent(
                &mut node.info,
                Info::new(attr::LOCAL_PEERS, peers.join(",")),
            );
            add_absent(
                &mut node.info,
                Info::new(attr::LOCAL_SIZE, num(ranks.len())?),
            );
            if let Some(ldr) = ranks.iter().min() {
                add_absent(&mut node.info, Info::new(attr::LOCALLDR, Rank(*ldr)));
            }
            for (place, rank) in ranks.iter().enumerate() {
                let place = u16::try_from(place).map_err(|_| Status::ERR_BAD_PARAM)?;
                let slot = self.procs.entry(*rank).or_default();
                add_absent(slot, Info::new(attr::RANK, Rank(*rank)));
                add_absent(slot, Info::new(attr::HOSTNAME, host.clone()));
                add_absent(slot, Info::new(attr::NODEID, nodeid));
                add_absent(slot, Info::new(attr::LOCAL_RANK, place));
                add_absent(slot, Info::new(attr::NODE_RANK, place));
            }
        }
        add_absent(&mut self.job, Info::new(attr::NUM_NODES, num(nodes.len())?));
        add_absent(&mut self.job, Info::new(attr::NODE_LIST, nodes.join(",")));
        add_absent(&mut self.job, Info::new(attr::JOB_SIZE, num(seen.len())?));
        Ok(())
    }

    /// The number of processes in the job (`PMIX_JOB_SIZE`), if registered.
    pub fn job_size(&self) -> Option<u32> {
        find_u32(&self.job, attr::JOB_SIZE.wire_key())
    }

    /// The application number of a process, from its process info.
    pub fn appnum_of(&self, rank: u32) -> Option<u32> {
        self.procs
            .get(&rank)
            .and_then(|p| find_u32(p, attr::APPNUM.wire_key()))
    }

    /// The node a process runs on, from its process info.
    fn node_of(&self, rank: u32) -> Option<&NodeRealm> {
        let p = self.procs.get(&rank)?;
        if let Some(id) = find_u32(p, attr::NODEID.wire_key())
            && let Some(n) = self.nodes.iter().find(|n| n.nodeid == Some(id))
        {
            return Some(n);
        }
        let host = p
            .iter()
            .find(|i| i.key.as_str() == attr::HOSTNAME.wire_key())
            .and_then(|i| i.value.to_name_lossy())?;
        self.nodes
            .iter()
            .find(|n| n.hostname.as_deref() == Some(host.as_str()))
    }

    /// Look a reserved key up following the realm rules.
    ///
    /// `rank` is the target's rank (wildcard for job-level requests); `caller` identifies the
    /// requesting process when it belongs to this namespace (for rule RA-03); `local_host` is
    /// the node the lookup is made on (rule RN-01). A key the standard declares equivalent to
    /// another in the realm (see `equivalents`) answers with the other's value when only
    /// that one is registered.
    pub fn lookup(
        &self,
        key: &str,
        rank: Rank,
        q: &Qualifiers,
        caller: Option<Rank>,
        local_host: Option<&str>,
    ) -> Option<&Value> {
        let realm = q.realm.unwrap_or_else(|| {
            // Node qualifiers select the node realm (rule RN-02).
            if q.hostname.is_some() || q.nodeid.is_some() {
                Realm::Node
            } else {
                default_realm(key)
            }
        });
        self.lookup_in(realm, key, rank, q, caller, local_host)
            .or_else(|| {
                (equivalents(key, realm).iter())
                    .find_map(|k| self.lookup_in(realm, k, rank, q, caller, local_host))
            })
    }

    /// [`JobRealms::lookup`] in `realm`.
    fn lookup_in(
        &self,
        realm: Realm,
        key: &str,
        rank: Rank,
        q: &Qualifiers,
        caller: Option<Rank>,
        local_host: Option<&str>,
    ) -> Option<&Value> {
        // RN-03: PMIX_LOCAL_PROCS always describes this node, whatever the proc.
        let rank = if key == attr::LOCAL_PROCS.wire_key() {
            Rank::WILDCARD
        } else {
            rank
        };
        match realm {
            // Rules RS-01..RS-06: the proc is ignored.
            Realm::Session => find(&self.session, key),
            Realm::Application => {
                // Rules RA-01..RA-04.
                let appnum = q.appnum.or_else(|| {
                    if rank.is_valid() {
                        self.appnum_of(rank.0)
                    } else {
                        caller.and_then(|c| self.appnum_of(c.0))
                    }
                });
                self.apps
                    .get(&appnum.unwrap_or(0))
                    .and_then(|a| find(a, key))
            }
            Realm::Node => {
                // Rules RN-01, RN-02: the qualified node, else the target's, else this node.
                let node = if let Some(h) = &q.hostname {
                    self.nodes.iter().find(|n| n.hostname.as_deref() == Some(h))
                } else if let Some(id) = q.nodeid {
                    self.nodes.iter().find(|n| n.nodeid == Some(id))
                } else {
                    let by_rank = rank.is_valid().then(|| self.node_of(rank.0)).flatten();
                    by_rank.or_else(|| {
                        local_host
                            .and_then(|h| {
                                self.nodes.iter().find(|n| n.hostname.as_deref() == Some(h))
                            })
                            .or(self.nodes.first())
                    })
                };
                let found = node.and_then(|n| find(&n.info, key));
                // A process-level value of a node key (e.g. its hostname) also answers.
                found.or_else(|| {
                    rank.is_valid()
                        .then(|| self.procs.get(&rank.0).and_then(|p| find(p, key)))
                        .flatten()
                })
            }
            Realm::Process => {
                if !rank.is_valid() {
                    return None;
                }
                self.procs.get(&rank.0).and_then(|p| find(p, key))
            }
            Realm::Job => {
                // Rule RG-03: with a real rank and no directive, a process-level value wins.
                if q.realm.is_none()
                    && rank.is_valid()
                    && let Some(v) = self.procs.get(&rank.0).and_then(|p| find(p, key))
                {
                    return Some(v);
                }
                if key == attr::NPROC_OFFSET.wire_key() && find(&self.job, key).is_none() {
                    // RJ-04: the offset is the global rank of the job's rank 0.
                    return self
                        .procs
                        .get(&0)
                        .and_then(|p| find(p, attr::GLOBAL_RANK.wire_key()));
                }
                find(&self.job, key).or_else(|| {
                    // Rule RN-04: registered per node (the v4.x placement, OpenPMIx's), they
                    // answer for the caller's node.
                    if !LOCAL_JOB_KEYS.contains(&key) {
                        return None;
                    }
                    let node = caller
                        .and_then(|c| self.node_of(c.0))
                        .or_else(|| {
                            local_host.and_then(|h| {
                                self.nodes.iter().find(|n| n.hostname.as_deref() == Some(h))
                            })
                        })
                        .or_else(|| (self.nodes.len() == 1).then(|| &self.nodes[0]))?;
                    find(&node.info, key)
                })
            }
        }
    }
}

/// The keys the standard declares equivalent to `key` in `realm`, in the order to try them:
/// `PMIX_NUM_SLOTS` is "the equivalent to `PMIX_MAX_PROCS`" in every realm that has them, and
/// `PMIX_UNIV_SIZE` "is equivalent to the `PMIX_MAX_PROCS` attribute for the session realm"
/// (v5.0 §6.1.1, rule RS-04).
fn equivalents(key: &str, realm: Realm) -> &'static [&'static str] {
    const MAX_PROCS: &str = attr::MAX_PROCS.wire_key();
    const NUM_SLOTS: &str = attr::NUM_SLOTS.wire_key();
    const UNIV_SIZE: &str = attr::UNIV_SIZE.wire_key();
    match (realm, key) {
        (Realm::Process, _) => &[],
        (Realm::Session, k) if k == UNIV_SIZE => &[MAX_PROCS, NUM_SLOTS],
        (Realm::Session, k) if k == MAX_PROCS => &[UNIV_SIZE, NUM_SLOTS],
        (Realm::Session, k) if k == NUM_SLOTS => &[MAX_PROCS, UNIV_SIZE],
        (_, k) if k == MAX_PROCS => &[NUM_SLOTS],
        (_, k) if k == NUM_SLOTS => &[MAX_PROCS],
        _ => &[],
    }
}

fn find<'a>(infos: &'a [Info], key: &str) -> Option<&'a Value> {
    infos
        .iter()
        .find(|i| i.key.as_str() == key)
        .map(|i| &i.value)
}

fn find_u32(infos: &[Info], key: &str) -> Option<u32> {
    find(infos, key)
        .and_then(Value::to_u64)
        .and_then(|v| u32::try_from(v).ok())
}

/// Add `info` unless its key is already there.
fn add_absent(list: &mut Vec<Info>, info: Info) {
    if !list.iter().any(|i| i.key == info.key) {
        list.push(info);
    }
}

/// Insert or replace the info with the same key.
fn upsert(list: &mut Vec<Info>, info: Info) {
    match list.iter_mut().find(|i| i.key == info.key) {
        Some(slot) => *slot = info,
        None => list.push(info),
    }
}

/// An info with a key from the inventory.
#[allow(dead_code)] // used by the server's registration, behind the `runtime` feature
pub(crate) fn info(key: &str, value: impl Into<Value>) -> Info {
    Info {
        key: Key::from_checked(key.to_owned()),
        flags: crate::model::InfoDirectives(0),
        value: value.into(),
    }
}

/// The infos of an info array (a data array of `PMIX_INFO`); `None` for any other value.
pub fn info_array_items(v: &Value) -> Option<Vec<Info>> {
    let array = v
        .as_data_array()
        .filter(|a| a.data_type == DataType::INFO)?;
    Some(
        (array.elements.iter())
            .filter_map(|e| match e {
                Value::Info(i) => Some((**i).clone()),
                _ => None,
            })
            .collect(),
    )
}

/// An info array value (`PMIX_DATA_ARRAY` of `PMIX_INFO`).
pub fn info_array(infos: Vec<Info>) -> Value {
    Value::DataArray(Box::new(crate::model::DataArray {
        data_type: DataType::INFO,
        elements: infos
            .into_iter()
            .map(|i| Value::Info(Box::new(i)))
            .collect(),
    }))
}
