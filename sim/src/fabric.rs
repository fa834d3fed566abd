//! The simulated cluster's fabric, as the daemons describe it to `PMIx_Fabric_register`
//! (v5.0 §15): one NIC per node, one switch per rack, and a core switch joining the racks.
//!
//! - Each device (`PMIX_FABRIC_DEVICE`) is its node's NIC `simnic`, with the node's name, its
//!   rack's switch (`PMIX_FABRIC_SWITCH`) and its coordinates (`PMIX_FABRIC_DEVICE_COORDINATES`,
//!   logical view: rack, then slot in the rack).
//! - The fabric has two dimensions (`PMIX_FABRIC_DIMS`), its shape is racks × nodes per rack
//!   (`PMIX_FABRIC_SHAPE`, `PMIX_FABRIC_SHAPE_STRING`).
//! - Costs are the links a message crosses ([`cost`]): 0 to itself, 2 within a rack (up to the
//!   rack's switch and down), 4 across racks (through the core switch). The matrix
//!   (`PMIX_FABRIC_COST_MATRIX`) is a pointer in C, which no message can carry: here it
//!   travels as a data array of `uint16` costs, row by row, for fabrics of up to
//!   [`COST_MATRIX_LIMIT`] nodes (a larger one would outweigh every other message; its costs
//!   follow from the coordinates).

use pmix::model::{Coord, CoordView, DataArray, DataType, Geometry, Info, Value, attr};

use crate::cluster::Layout;

/// The fabric's identifier.
pub const FABRIC: &str = "simfabric";
/// Its vendor.
pub const VENDOR: &str = "pmix-rs-sim";
/// The name of each node's NIC.
pub const NIC: &str = "simnic";
/// The largest fabric whose cost matrix is sent.
pub const COST_MATRIX_LIMIT: u32 = 256;

/// The links between the NICs of nodes `a` and `b`.
pub fn cost(layout: &Layout, a: u32, b: u32) -> u16 {
    if a == b {
        0
    } else if layout.rack_of(a) == layout.rack_of(b) {
        2
    } else {
        4
    }
}

/// The name of rack `rack`'s switch.
pub fn switch_of(rack: u32) -> String {
    format!("{}-switch", Layout::rack_name(rack))
}

/// The fabric's description, as `PMIx_Fabric_register` returns it.
pub fn describe(layout: &Layout) -> Vec<Info> {
    let devices: Vec<Info> = (0..layout.nodes)
        .map(|node| {
            let rack = layout.rack_of(node);
            let at = Geometry {
                fabric: 0,
                uuid: Some(Layout::hostname(node)),
                osname: Some(NIC.to_owned()),
                coordinates: vec![Coord {
                    view: CoordView::LOGICAL_VIEW,
                    coord: vec![rack, u32::from(layout.slot_of(node))],
                }],
            };
            let device = vec![
                Info::new(attr::FABRIC_DEVICE_NAME, NIC.to_owned()),
                Info::new(attr::FABRIC_DEVICE_INDEX, node),
                Info::new(attr::HOSTNAME, Layout::hostname(node)),
                Info::new(attr::FABRIC_SWITCH, switch_of(rack)),
                Info::new(attr::FABRIC_DEVICE_COORDINATES, at),
            ];
            Info::new(attr::FABRIC_DEVICE, DataArray::of_infos(device))
        })
        .collect();
    let shape = DataArray {
        data_type: DataType::UINT32,
        elements: vec![
            Value::Uint32(layout.used_racks()),
            Value::Uint32(layout.per_rack()),
        ],
    };
    let mut out = vec![
        Info::new(attr::FABRIC_INDEX, 0usize),
        Info::new(attr::FABRIC_IDENTIFIER, FABRIC.to_owned()),
        Info::new(attr::FABRIC_VENDOR, VENDOR.to_owned()),
        Info::new(attr::FABRIC_NUM_DEVICES, devices.len()),
        Info::new(attr::FABRIC_DIMS, 2u32),
        Info::new(attr::FABRIC_SHAPE, shape),
        Info::new(
            attr::FABRIC_SHAPE_STRING,
            format!("{}x{}", layout.used_racks(), layout.per_rack()),
        ),
        Info::new(attr::FABRIC_DEVICES, DataArray::of_infos(devices)),
    ];
    if layout.nodes <= COST_MATRIX_LIMIT {
        let costs = DataArray {
            data_type: DataType::UINT16,
            elements: (0..layout.nodes)
                .flat_map(|a| (0..layout.nodes).map(move |b| Value::Uint16(cost(layout, a, b))))
                .collect(),
        };
        if let Ok(matrix) = Info::with_key(attr::FABRIC_COST_MATRIX.wire_key(), costs) {
            out.push(matrix);
        }
    }
    out
}

/// What a client checks of the description it was given, from node `me`: the device count,
/// its own NIC's coordinates and switch, and its row of the cost matrix. `None`: all hold.
pub fn check(layout: &Layout, me: u32, info: &[Info]) -> Option<String> {
    let num = info.iter().find_map(|i| i.get(attr::FABRIC_NUM_DEVICES));
    if num != Some(layout.nodes as usize) {
        return Some(format!("{num:?} devices for {} nodes", layout.nodes));
    }
    let devices = info.iter().find_map(|i| i.get(attr::FABRIC_DEVICES));
    let mine = devices.and_then(|d| {
        d.elements.into_iter().find_map(|e| match e {
            Value::Info(device) => {
                let Value::DataArray(a) = device.value else {
                    return None;
                };
                let fields: Vec<Info> = a
                    .elements
                    .into_iter()
                    .filter_map(|v| match v {
                        Value::Info(i) => Some(*i),
                        _ => None,
                    })
                    .collect();
                let index = fields.iter().find_map(|i| i.get(attr::FABRIC_DEVICE_INDEX));
                (index == Some(me)).then_some(fields)
            }
            _ => None,
        })
    });
    let Some(mine) = mine else {
        return Some(format!("no device of node {me}"));
    };
    let at = mine
        .iter()
        .find_map(|i| i.get(attr::FABRIC_DEVICE_COORDINATES));
    let want = vec![layout.rack_of(me), u32::from(layout.slot_of(me))];
    if at
        .as_ref()
        .and_then(|g| g.coordinates.first())
        .map(|c| &c.coord)
        != Some(&want)
    {
        return Some(format!("node {me} is at {at:?}, not {want:?}"));
    }
    let switch = mine.iter().find_map(|i| i.get(attr::FABRIC_SWITCH));
    if switch != Some(switch_of(layout.rack_of(me))) {
        return Some(format!("node {me} hangs on {switch:?}"));
    }
    if layout.nodes <= COST_MATRIX_LIMIT {
        let matrix = info
            .iter()
            .find(|i| i.key.as_str() == attr::FABRIC_COST_MATRIX.wire_key())
            .map(|i| i.value.clone());
        let Some(Value::DataArray(m)) = matrix else {
            return Some("no cost matrix".to_owned());
        };
        let n = layout.nodes as usize;
        let row = m.elements.get(me as usize * n..(me as usize + 1) * n);
        let expected: Vec<Value> = (0..layout.nodes)
            .map(|b| Value::Uint16(cost(layout, me, b)))
            .collect();
        if row != Some(&expected[..]) {
            return Some(format!("node {me}'s costs are {row:?}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_finds_itself_in_the_description_and_a_wrong_cost_is_caught() {
        let layout = Layout::new(10, 3, 1, 2).expect("a layout");
        let mut info = describe(&layout);
        for node in 0..layout.nodes {
            assert_eq!(check(&layout, node, &info), None, "node {node}");
        }
        assert_eq!(cost(&layout, 0, 1), 2);
        assert_eq!(cost(&layout, 0, 9), 4);
        let matrix = info
            .iter_mut()
            .find(|i| i.key.as_str() == attr::FABRIC_COST_MATRIX.wire_key())
            .expect("a small fabric has its matrix");
        if let Value::DataArray(m) = &mut matrix.value {
            m.elements[1] = Value::Uint16(9);
        }
        assert!(check(&layout, 0, &info).is_some());
        assert_eq!(check(&layout, 5, &info), None, "another row");
    }
}
