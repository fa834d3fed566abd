//! The machine's network interfaces as one fabric (v5.0 ch. 15), as `PMIx_Fabric_register`
//! and `PMIx_Fabric_update` describe it.

use pmix::model::{DataArray, Info, LinkState, attr};

/// The machine's network interfaces as one fabric (`<hostname>-net`, index 0): each
/// interface but loopback from `/sys/class/net`, with its address, MTU, speed and state where
/// the kernel says them.
pub(super) fn machine_fabric() -> Vec<Info> {
    let host = hostname();
    let read = |dev: &str, what: &str| {
        std::fs::read_to_string(format!("/sys/class/net/{dev}/{what}"))
            .ok()
            .map(|s| s.trim().to_owned())
    };
    let mut names: Vec<String> = std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "lo")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let devices: Vec<Info> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut device = vec![
                Info::new(attr::FABRIC_DEVICE_NAME, name.clone()),
                Info::new(
                    attr::FABRIC_DEVICE_INDEX,
                    u32::try_from(i).unwrap_or(u32::MAX),
                ),
                Info::new(attr::HOSTNAME, host.clone()),
            ];
            if let Some(a) = read(name, "address") {
                device.push(Info::new(attr::FABRIC_DEVICE_ADDRESS, a));
            }
            if let Some(m) = read(name, "mtu").and_then(|m| m.parse::<usize>().ok()) {
                device.push(Info::new(attr::FABRIC_DEVICE_MTU, m));
            }
            // Mb/s; virtual interfaces have none (the read fails or says -1).
            if let Some(s) = read(name, "speed").and_then(|s| s.parse::<usize>().ok()) {
                device.push(Info::new(attr::FABRIC_DEVICE_SPEED, s));
            }
            let state = match read(name, "operstate").as_deref() {
                Some("up") => LinkState::UP,
                Some("down") => LinkState::DOWN,
                _ => LinkState::STATE_UNKNOWN,
            };
            device.push(Info::new(attr::FABRIC_DEVICE_STATE, state));
            Info::new(attr::FABRIC_DEVICE, DataArray::of_infos(device))
        })
        .collect();
    vec![
        Info::new(attr::FABRIC_INDEX, 0usize),
        Info::new(attr::FABRIC_IDENTIFIER, format!("{host}-net")),
        Info::new(attr::FABRIC_NUM_DEVICES, devices.len()),
        Info::new(attr::FABRIC_DEVICES, DataArray::of_infos(devices)),
    ]
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "localhost".to_owned())
}
