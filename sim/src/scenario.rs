//! Scenario files (`sim/scenarios/*.toml`): a cluster, a workload, liveness settings and a
//! fault schedule, read into a [`Config`]. The format is documented in `docs/simulation.md`;
//! every field but the cluster's size has a default, and an unknown field is an error (a typo
//! must not silently drop a fault).

use std::time::Duration;

use serde::Deserialize;

use crate::cluster::Layout;
use crate::faults::{Fault, FaultKind, Pick};
use crate::{Collective, Config, Liveness, Modex, Workload};

/// A scenario as read: its name, what it shows, and the run it describes (for any seed).
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub about: String,
    pub config: Config,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    about: String,
    cluster: ClusterFile,
    #[serde(default)]
    workload: WorkloadFile,
    #[serde(default)]
    liveness: Option<LivenessFile>,
    #[serde(default, rename = "fault")]
    faults: Vec<FaultFile>,
    #[serde(default = "default_limit")]
    limit_s: u64,
}

fn default_limit() -> u64 {
    60
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterFile {
    nodes: u32,
    #[serde(default)]
    racks: Option<u32>,
    #[serde(default = "default_clients")]
    clients: u32,
    #[serde(default = "default_fanout")]
    fanout: u32,
    #[serde(default)]
    modex: Option<String>,
    #[serde(default)]
    collective: Option<String>,
}

fn default_clients() -> u32 {
    4
}

fn default_fanout() -> u32 {
    8
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct WorkloadFile {
    #[serde(default)]
    fence_at_ms: u64,
    #[serde(default)]
    fence_timeout_s: Option<u32>,
    #[serde(default)]
    get_at_ms: u64,
    #[serde(default)]
    finalize_at_ms: u64,
    #[serde(default)]
    lookup_at_ms: Option<u64>,
    #[serde(default)]
    spawn_at_ms: Option<u64>,
    #[serde(default)]
    spawn_procs: Option<u32>,
    #[serde(default)]
    connect: bool,
    #[serde(default)]
    group_at_ms: Option<u64>,
    #[serde(default)]
    group_timeout_s: Option<u32>,
    #[serde(default)]
    group_leader_rank: Option<u32>,
    #[serde(default)]
    invite_at_ms: Option<u64>,
    #[serde(default)]
    group_notify_termination: bool,
    #[serde(default)]
    group_ft_collective: bool,
    #[serde(default)]
    fabric_at_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LivenessFile {
    heartbeat_ms: u64,
    reconnect_after_ms: u64,
    suspect_after_ms: u64,
    connect_timeout_ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultFile {
    kind: String,
    at_ms: u64,
    #[serde(default)]
    jitter_ms: u64,
    #[serde(default)]
    node: Option<Target>,
    #[serde(default)]
    rank: Option<Target>,
    #[serde(default)]
    rack: Option<Target>,
    #[serde(default)]
    racks: Option<[u32; 2]>,
    #[serde(default)]
    nodes: Option<[Target; 2]>,
    #[serde(default)]
    for_ms: Option<u64>,
    #[serde(default)]
    by_ms: Option<u64>,
}

/// A number, or `"random"`.
#[derive(Deserialize, Clone, Copy)]
#[serde(untagged)]
enum Target {
    Fixed(u32),
    Named(Random),
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Random {
    Random,
}

impl Target {
    fn pick(self) -> Pick {
        match self {
            Target::Fixed(n) => Pick::Fixed(n),
            Target::Named(Random::Random) => Pick::Random,
        }
    }
}

/// The default cluster of a `--nodes` count: 64 nodes per rack.
pub fn default_racks(nodes: u32) -> u32 {
    nodes.div_ceil(64).max(1)
}

/// The modex a cluster uses unless told: direct from a million (node, process) pairs, where
/// every node holding every process's data no longer fits one simulating process.
pub fn default_modex(layout: &Layout) -> Modex {
    if u64::from(layout.nodes) * u64::from(layout.job_size()) >= 1 << 20 {
        Modex::Direct
    } else {
        Modex::Full
    }
}

impl Scenario {
    /// Read a scenario from the text of its file.
    pub fn parse(text: &str) -> Result<Scenario, String> {
        let f: File = toml::from_str(text).map_err(|e| e.to_string())?;
        let c = &f.cluster;
        let racks = c.racks.unwrap_or_else(|| default_racks(c.nodes));
        let layout = Layout::new(c.nodes, racks, c.clients, c.fanout)?;
        let modex = match c.modex.as_deref() {
            None => default_modex(&layout),
            Some("full") => Modex::Full,
            Some("direct") => Modex::Direct,
            Some(other) => return Err(format!("modex is full or direct, not {other}")),
        };
        let collective = match c.collective.as_deref() {
            None | Some("tree") => Collective::Tree,
            Some("ring") => Collective::Ring,
            Some(other) => return Err(format!("collective is tree or ring, not {other}")),
        };
        let ms = Duration::from_millis;
        let w = &f.workload;
        let workload = Workload {
            fence_at: ms(w.fence_at_ms),
            fence_timeout_s: w.fence_timeout_s,
            get_at: ms(w.get_at_ms),
            finalize_at: ms(w.finalize_at_ms),
            lookup_at: w.lookup_at_ms.map(ms),
            spawn_at: w.spawn_at_ms.map(ms),
            spawn_procs: w.spawn_procs.unwrap_or(c.nodes.saturating_sub(1).max(1)),
            connect: w.connect,
            group_at: w.group_at_ms.map(ms),
            group_timeout_s: w.group_timeout_s,
            group_leader: w.group_leader_rank,
            invite_at: w.invite_at_ms.map(ms),
            group_notify: w.group_notify_termination,
            group_ft: w.group_ft_collective,
            fabric_at: w.fabric_at_ms.map(ms),
        };
        let liveness = match &f.liveness {
            None => Liveness::default(),
            Some(l) => Liveness {
                heartbeat: ms(l.heartbeat_ms),
                reconnect_after: ms(l.reconnect_after_ms),
                suspect_after: ms(l.suspect_after_ms),
                connect_timeout: ms(l.connect_timeout_ms),
            },
        };
        let faults = f
            .faults
            .iter()
            .enumerate()
            .map(|(i, x)| fault(x, &layout).map_err(|e| format!("fault {}: {e}", i + 1)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut config = Config::new(layout, 1, modex);
        config.collective = collective;
        config.limit = Duration::from_secs(f.limit_s);
        config.workload = workload;
        config.liveness = liveness;
        config.faults = faults;
        Ok(Scenario {
            name: f.name,
            about: f.about,
            config,
        })
    }

    /// Read a scenario file.
    pub fn load(path: &std::path::Path) -> Result<Scenario, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Scenario::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

fn fault(f: &FaultFile, layout: &Layout) -> Result<Fault, String> {
    let ms = Duration::from_millis;
    let need = |x: Option<Target>, what: &str| {
        x.map(Target::pick)
            .ok_or(format!("{} needs {what}", f.kind))
    };
    let span = || f.for_ms.map(ms).ok_or(format!("{} needs for_ms", f.kind));
    let by = || f.by_ms.map(ms).ok_or(format!("{} needs by_ms", f.kind));
    let racks = || {
        let [a, b] = f.racks.ok_or(format!("{} needs racks = [a, b]", f.kind))?;
        let n = layout.used_racks();
        if a == b || a >= n || b >= n {
            return Err(format!("racks {a} and {b}: two distinct racks below {n}"));
        }
        Ok((a, b))
    };
    let check_node = |p: Pick| match p {
        Pick::Fixed(n) if n >= layout.nodes => {
            Err(format!("node {n} does not exist (below {})", layout.nodes))
        }
        _ => Ok(p),
    };
    let nodes = || {
        let [a, b] = f.nodes.ok_or(format!("{} needs nodes = [a, b]", f.kind))?;
        Ok::<_, String>((check_node(a.pick())?, check_node(b.pick())?))
    };
    let bounded = |p: Pick, limit: u32, what: &str| match p {
        Pick::Fixed(n) if n >= limit => Err(format!("{what} {n} does not exist (below {limit})")),
        _ => Ok(p),
    };
    let kind = match f.kind.as_str() {
        "crash-node" => FaultKind::CrashNode(bounded(need(f.node, "node")?, layout.nodes, "node")?),
        "restart-node" => FaultKind::RestartNode {
            node: bounded(need(f.node, "node")?, layout.nodes, "node")?,
            after: span()?,
        },
        "crash-rack" => {
            FaultKind::CrashRack(bounded(need(f.rack, "rack")?, layout.used_racks(), "rack")?)
        }
        "kill-client" => {
            FaultKind::KillClient(bounded(need(f.rank, "rank")?, layout.job_size(), "rank")?)
        }
        "partition" => FaultKind::Partition {
            racks: racks()?,
            span: span()?,
        },
        "hold" => FaultKind::Hold {
            racks: racks()?,
            span: span()?,
        },
        "drop" => FaultKind::Drop {
            nodes: nodes()?,
            span: span()?,
        },
        "delay" => FaultKind::Delay {
            nodes: nodes()?,
            by: by()?,
            span: span()?,
        },
        "slow-node" => FaultKind::SlowNode {
            node: check_node(need(f.node, "node")?)?,
            by: by()?,
            span: span()?,
        },
        other => return Err(format!("unknown fault kind {other}")),
    };
    Ok(Fault {
        at: ms(f.at_ms),
        jitter: ms(f.jitter_ms),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenario_reads_with_its_defaults_and_refuses_typos() {
        let s = Scenario::parse(
            r#"
            name = "x"
            about = "y"
            [cluster]
            nodes = 8
            racks = 2
            [workload]
            fence_at_ms = 100
            fence_timeout_s = 2
            [[fault]]
            kind = "crash-node"
            at_ms = 120
            jitter_ms = 30
            node = "random"
            [[fault]]
            kind = "partition"
            at_ms = 90
            racks = [0, 1]
            for_ms = 500
            "#,
        )
        .expect("a valid scenario");
        assert_eq!(s.config.layout.clients, 4);
        assert_eq!(s.config.modex, Modex::Full);
        assert_eq!(s.config.workload.fence_timeout_s, Some(2));
        assert_eq!(s.config.faults.len(), 2);
        assert_eq!(s.config.faults[0].kind, FaultKind::CrashNode(Pick::Random));
        let bad = [
            "name = \"x\"\nabout = \"y\"\n[cluster]\nnodes = 8\nnodez = 2\n",
            "name = \"x\"\nabout = \"y\"\n[cluster]\nnodes = 8\n[[fault]]\nkind = \"crash-node\"\nat_ms = 1\n",
            "name = \"x\"\nabout = \"y\"\n[cluster]\nnodes = 8\n[[fault]]\nkind = \"crash-node\"\nat_ms = 1\nnode = 8\n",
            "name = \"x\"\nabout = \"y\"\n[cluster]\nnodes = 8\nracks = 2\n[[fault]]\nkind = \"partition\"\nat_ms = 1\nracks = [1, 1]\nfor_ms = 5\n",
            "name = \"x\"\nabout = \"y\"\n[cluster]\nnodes = 8\n[[fault]]\nkind = \"melt\"\nat_ms = 1\n",
        ];
        for text in bad {
            assert!(Scenario::parse(text).is_err(), "{text}");
        }
    }
}
