//! The shape of a virtual cluster: racks (turmoil hosts) of nodes, each node with its clients,
//! and the trees the daemons' collectives run on.
//!
//! Nodes are numbered `0..nodes` and laid out in contiguous blocks, one block per rack, so that
//! the collective tree keeps whole subtrees on one rack: inside a rack the nodes form a k-ary
//! tree under the rack's first node (its leader), and the leaders form a k-ary tree across
//! racks. Only leaders talk across racks, which keeps turmoil's links (one per pair of hosts)
//! few and its per-step cost low (DESIGN §4).

use std::collections::BTreeMap;

/// Port of the daemon of the node at `slot` (its place in its rack).
pub const DAEMON_PORT_BASE: u16 = 10_000;

/// The layout of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub nodes: u32,
    pub racks: u32,
    /// Client processes per node.
    pub clients: u32,
    /// The fan-out of the collective trees.
    pub fanout: u32,
}

impl Layout {
    /// A layout, or why it cannot be one (no nodes, more racks than nodes, no clients, a
    /// rack too large for its ports, a fan-out below 2).
    pub fn new(nodes: u32, racks: u32, clients: u32, fanout: u32) -> Result<Layout, String> {
        if nodes == 0 || clients == 0 {
            return Err("a cluster needs at least one node and one client per node".into());
        }
        if racks == 0 || racks > nodes {
            return Err(format!("{racks} racks for {nodes} nodes"));
        }
        if fanout < 2 {
            return Err("the tree's fan-out must be at least 2".into());
        }
        let layout = Layout {
            nodes,
            racks,
            clients,
            fanout,
        };
        if layout.per_rack() > u32::from(u16::MAX - DAEMON_PORT_BASE) {
            return Err(format!("{} nodes on one rack", layout.per_rack()));
        }
        Ok(layout)
    }

    /// Nodes on each rack (the last rack may hold fewer).
    pub fn per_rack(&self) -> u32 {
        self.nodes.div_ceil(self.racks)
    }

    pub fn rack_of(&self, node: u32) -> u32 {
        node / self.per_rack()
    }

    /// The node's place in its rack, which gives its daemon's port.
    pub fn slot_of(&self, node: u32) -> u16 {
        // Bounded by `Layout::new`.
        u16::try_from(node % self.per_rack()).unwrap_or(u16::MAX)
    }

    pub fn port_of(&self, node: u32) -> u16 {
        DAEMON_PORT_BASE.saturating_add(self.slot_of(node))
    }

    /// The nodes of rack `rack`.
    pub fn nodes_of(&self, rack: u32) -> std::ops::Range<u32> {
        let first = rack * self.per_rack();
        first..(first + self.per_rack()).min(self.nodes)
    }

    /// The racks that hold nodes (a large rack count with few nodes per rack may leave the
    /// last ones empty).
    pub fn used_racks(&self) -> u32 {
        self.nodes.div_ceil(self.per_rack())
    }

    pub fn rack_name(rack: u32) -> String {
        format!("rack{rack}")
    }

    pub fn hostname(node: u32) -> String {
        format!("node{node}")
    }

    pub fn job_size(&self) -> u32 {
        self.nodes * self.clients
    }

    /// The node a rank runs on (ranks are laid out by node: `clients` consecutive ranks each).
    pub fn node_of_rank(&self, rank: u32) -> u32 {
        rank / self.clients
    }

    pub fn ranks_of(&self, node: u32) -> std::ops::Range<u32> {
        node * self.clients..(node + 1) * self.clients
    }

    /// The node whose daemon keeps the job's published data: the last one.
    pub fn data_server(&self) -> u32 {
        self.nodes - 1
    }

    /// The collective tree over `participants` (sorted node ids).
    pub fn tree(&self, participants: &[u32]) -> Tree {
        Tree::build(participants, |n| self.rack_of(n), self.fanout)
    }
}

/// A collective's tree: each participant's parent and children.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    parent: BTreeMap<u32, u32>,
    children: BTreeMap<u32, Vec<u32>>,
    root: Option<u32>,
}

impl Tree {
    fn build(participants: &[u32], rack_of: impl Fn(u32) -> u32, k: u32) -> Tree {
        let mut groups: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for &n in participants {
            groups.entry(rack_of(n)).or_default().push(n);
        }
        let mut tree = Tree::default();
        let k = usize::try_from(k).unwrap_or(2).max(2);
        let link = |tree: &mut Tree, parent: u32, child: u32| {
            tree.parent.insert(child, parent);
            tree.children.entry(parent).or_default().push(child);
        };
        let leaders: Vec<u32> = groups.values().filter_map(|g| g.first().copied()).collect();
        for (i, &leader) in leaders.iter().enumerate().skip(1) {
            link(&mut tree, leaders[(i - 1) / k], leader);
        }
        for group in groups.values() {
            for (i, &n) in group.iter().enumerate().skip(1) {
                link(&mut tree, group[(i - 1) / k], n);
            }
        }
        for c in tree.children.values_mut() {
            c.sort_unstable();
        }
        tree.root = leaders.first().copied();
        tree
    }

    /// A ring through `participants` (sorted node ids), in order: each talks only to its
    /// neighbours, contributions travel around it to the first, and the outcome travels back.
    /// As a tree it is a chain (fan-out one), so the collective protocol, failures included,
    /// is the tree's. Nodes are laid out by rack, so the ring crosses each rack boundary once.
    pub fn ring(participants: &[u32]) -> Tree {
        let mut tree = Tree::default();
        for pair in participants.windows(2) {
            tree.parent.insert(pair[1], pair[0]);
            tree.children.insert(pair[0], vec![pair[1]]);
        }
        tree.root = participants.first().copied();
        tree
    }

    pub fn parent(&self, node: u32) -> Option<u32> {
        self.parent.get(&node).copied()
    }

    pub fn children(&self, node: u32) -> &[u32] {
        self.children.get(&node).map_or(&[], Vec::as_slice)
    }

    pub fn root(&self) -> Option<u32> {
        self.root
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_fill_racks_in_blocks_and_only_leaders_cross_racks() {
        let l = Layout::new(10, 3, 2, 2).unwrap();
        assert_eq!(l.per_rack(), 4);
        assert_eq!(l.nodes_of(2), 8..10);
        assert_eq!((l.rack_of(5), l.slot_of(5)), (1, 1));
        assert_eq!(l.node_of_rank(7), 3);
        let all: Vec<u32> = (0..10).collect();
        let t = l.tree(&all);
        assert_eq!(t.root(), Some(0));
        // Every edge joins two nodes of one rack, or two rack leaders.
        for n in 1..10 {
            let p = t.parent(n).expect("every node but the root has a parent");
            let leaders = [0, 4, 8];
            assert!(l.rack_of(p) == l.rack_of(n) || (leaders.contains(&p) && leaders.contains(&n)));
        }
        assert_eq!(t.children(0), &[1, 2, 4, 8]);
        // Every node reaches the root.
        for n in 0..10 {
            let mut at = n;
            for _ in 0..10 {
                match t.parent(at) {
                    Some(p) => at = p,
                    None => break,
                }
            }
            assert_eq!(at, 0);
        }
    }

    #[test]
    fn a_subset_gets_a_tree_of_its_own() {
        let l = Layout::new(8, 2, 1, 3).unwrap();
        let t = l.tree(&[1, 2, 6]);
        assert_eq!(t.root(), Some(1));
        assert_eq!(t.children(1), &[2, 6]);
        assert_eq!(t.parent(0), None);
    }

    #[test]
    fn a_ring_is_a_chain_in_node_order() {
        let t = Tree::ring(&[2, 5, 7]);
        assert_eq!(t.root(), Some(2));
        assert_eq!(
            (t.parent(5), t.parent(7), t.parent(2)),
            (Some(2), Some(5), None)
        );
        assert_eq!((t.children(2), t.children(7)), (&[5][..], &[][..]));
    }

    #[test]
    fn impossible_layouts_are_refused() {
        assert!(Layout::new(0, 1, 1, 2).is_err());
        assert!(Layout::new(4, 5, 1, 2).is_err());
        assert!(Layout::new(4, 1, 0, 2).is_err());
        assert!(Layout::new(4, 1, 1, 1).is_err());
        assert!(Layout::new(100_000, 1, 1, 2).is_err());
    }
}
