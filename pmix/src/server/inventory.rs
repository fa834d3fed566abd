//! A node's inventory (v5.0 §17.2.15, §17.2.16).
//!
//! The standard leaves the content to the implementation ("supported resources depend upon
//! the PMIx implementation, but may include the local node topology and fabric interfaces")
//! and where delivered inventory shows. This crate's choices:
//!
//! - **Collect** answers with what the server knows of its own node: `PMIX_HOSTNAME`, and,
//!   when it has a topology (the host's `PMIX_TOPOLOGY2` at init, else this machine),
//!   `PMIX_AVAIL_PHYS_MEMORY` and the topology itself as `PMIX_TOPOLOGY2`.
//! - **Deliver** stores the inventory as node information of the node it names (by
//!   `PMIX_HOSTNAME` or `PMIX_NODEID`), below any job's own registration, as
//!   `PMIx_server_register_resources` does: a process then reads a node's inventory with
//!   `PMIx_Get` and `PMIX_NODE_INFO`. A delivered inventory may also be a list of
//!   `PMIX_NODE_INFO_ARRAY`s, one per node, as a host gathers them from its daemons.

use crate::Error;
use crate::model::{Info, attr};
use crate::store::realm::{self, info_array, info_array_items};

use super::Server;

impl Server {
    /// `PMIx_server_collect_inventory`: this node's inventory (see the module's text). No
    /// directive is defined; any given is ignored.
    pub fn collect_inventory(&self, directives: &[Info]) -> Vec<Info> {
        if !directives.is_empty() {
            tracing::debug!("inventory directives ignored: {directives:?}");
        }
        let mut inventory = vec![Info::new(attr::HOSTNAME, self.config.hostname.clone())];
        inventory.extend(self.machine_inventory());
        inventory
    }

    /// The node's memory and topology, when the server has a topology.
    #[cfg(feature = "topology")]
    fn machine_inventory(&self) -> Vec<Info> {
        let Ok(machine) = self.topology() else {
            return Vec::new();
        };
        let mut found = vec![Info::new(attr::AVAIL_PHYS_MEMORY, machine.total_memory())];
        match machine.to_topology() {
            Ok(t) => found.push(Info::new(attr::TOPOLOGY2, t)),
            Err(e) => tracing::warn!("the inventory lacks the topology: {e}"),
        }
        found
    }

    /// Without hwloc the server knows no more of its machine than its name.
    #[cfg(not(feature = "topology"))]
    fn machine_inventory(&self) -> Vec<Info> {
        Vec::new()
    }

    /// `PMIx_server_deliver_inventory`: `inventory` becomes information of the node it names
    /// (see the module's text). `BadParam` when it names no node.
    pub async fn deliver_inventory(
        &self,
        inventory: Vec<Info>,
        directives: &[Info],
    ) -> Result<(), Error> {
        if !directives.is_empty() {
            tracing::debug!("inventory directives ignored: {directives:?}");
        }
        let nodes = as_node_information(inventory)?;
        self.register_resources(nodes).await
    }
}

/// An inventory as node information: each `PMIX_NODE_INFO_ARRAY` as it is, and the loose
/// items as one more node array, led by the hostname or node id they carry.
fn as_node_information(inventory: Vec<Info>) -> Result<Vec<Info>, Error> {
    let names_a_node = |items: &[Info]| {
        items
            .iter()
            .position(|i| i.is(attr::HOSTNAME) || i.is(attr::NODEID))
    };
    let (arrays, loose): (Vec<Info>, Vec<Info>) = inventory
        .into_iter()
        .partition(|i| i.is(attr::NODE_INFO_ARRAY));
    for a in &arrays {
        let named = info_array_items(&a.value).is_some_and(|items| names_a_node(&items).is_some());
        if !named {
            return Err(Error::BadParam(
                "an inventory's node array must be infos naming their node \
                 (PMIX_HOSTNAME or PMIX_NODEID)"
                    .into(),
            ));
        }
    }
    let mut nodes = arrays;
    if !loose.is_empty() {
        let Some(at) = names_a_node(&loose) else {
            return Err(Error::BadParam(
                "the inventory names no node (PMIX_HOSTNAME or PMIX_NODEID)".into(),
            ));
        };
        let mut items = loose;
        let name = items.remove(at);
        items.insert(0, name);
        nodes.push(realm::info(
            attr::NODE_INFO_ARRAY.wire_key(),
            info_array(items),
        ));
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Status;

    fn node_items(info: &Info) -> Vec<Info> {
        assert!(info.is(attr::NODE_INFO_ARRAY), "{info:?}");
        info_array_items(&info.value).expect("an info array")
    }

    #[test]
    fn loose_items_become_one_node_led_by_its_name() {
        let nodes = as_node_information(vec![
            Info::new(attr::AVAIL_PHYS_MEMORY, 1 << 30),
            Info::new(attr::HOSTNAME, "n3".to_owned()),
        ])
        .unwrap();
        assert_eq!(nodes.len(), 1);
        let items = node_items(&nodes[0]);
        assert_eq!(items[0].get(attr::HOSTNAME).as_deref(), Some("n3"));
        assert_eq!(items[1].get(attr::AVAIL_PHYS_MEMORY), Some(1 << 30));
    }

    #[test]
    fn node_arrays_pass_through_beside_the_loose_node() {
        let other = realm::info(
            attr::NODE_INFO_ARRAY.wire_key(),
            info_array(vec![
                Info::new(attr::NODEID, 7),
                Info::new(attr::AVAIL_PHYS_MEMORY, 5),
            ]),
        );
        let nodes = as_node_information(vec![
            other.clone(),
            Info::new(attr::NODEID, 2),
            Info::new(attr::AVAIL_PHYS_MEMORY, 9),
        ])
        .unwrap();
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[0], other);
        assert_eq!(node_items(&nodes[1])[0].get(attr::NODEID), Some(2));
    }

    #[test]
    fn an_inventory_that_names_no_node_is_refused() {
        let loose = as_node_information(vec![Info::new(attr::AVAIL_PHYS_MEMORY, 9)]);
        assert_eq!(loose.unwrap_err().status(), Status::ERR_BAD_PARAM);
        let unnamed_array = realm::info(
            attr::NODE_INFO_ARRAY.wire_key(),
            info_array(vec![Info::new(attr::AVAIL_PHYS_MEMORY, 5)]),
        );
        let array = as_node_information(vec![unnamed_array]);
        assert_eq!(array.unwrap_err().status(), Status::ERR_BAD_PARAM);
    }

    #[test]
    fn an_empty_inventory_stores_nothing() {
        assert!(as_node_information(Vec::new()).unwrap().is_empty());
    }
}
