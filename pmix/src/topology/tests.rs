use super::*;
use crate::model::topology::{parse_cpuset_string, relative_locality};
use crate::model::{Locality, Status};

fn cpus(list: &str) -> Cpuset {
    Cpuset {
        source: Some("hwloc".into()),
        bitmap: Some(list.into()),
    }
}

/// Two packages, each with its NUMA node and one core of two hardware threads; a network
/// device on a PCI bus below the second package, and a disk below the machine.
const TWO_PACKAGES: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" allowed_cpuset="0x0000000f" nodeset="0x00000003" complete_nodeset="0x00000003" allowed_nodeset="0x00000003" gp_index="1">
    <object type="Package" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2">
      <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3" local_memory="1073741824"/>
      <object type="Core" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4">
        <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
        <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="6"/>
      </object>
    </object>
    <object type="Package" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="7">
      <object type="NUMANode" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="8" local_memory="1073741824"/>
      <object type="Core" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="9">
        <object type="PU" os_index="2" cpuset="0x00000004" complete_cpuset="0x00000004" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="10"/>
        <object type="PU" os_index="3" cpuset="0x00000008" complete_cpuset="0x00000008" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="11"/>
      </object>
      <object type="Bridge" gp_index="12" bridge_type="0-1" depth="0" bridge_pci="0000:[01-01]">
        <object type="PCIDev" gp_index="13" pci_busid="0000:01:00.0" pci_type="0200 [8086:1572] [8086:0000] 01" pci_link_speed="0.000000">
          <object type="OSDev" gp_index="14" name="eth1" osdev_type="2"/>
        </object>
      </object>
    </object>
    <object type="Bridge" gp_index="15" bridge_type="0-1" depth="0" bridge_pci="0000:[00-00]">
      <object type="PCIDev" gp_index="16" pci_busid="0000:00:02.0" pci_type="0180 [1af4:1042] [1af4:1042] 01" pci_link_speed="0.000000">
        <object type="OSDev" gp_index="17" name="vda" osdev_type="0"/>
      </object>
    </object>
  </object>
</topology>
"#;

fn two_packages() -> Machine {
    Machine::from_xml(TWO_PACKAGES).expect("the fixture is hwloc XML")
}

#[test]
fn a_locality_string_names_every_level_the_cpuset_touches() {
    let m = two_packages();
    assert_eq!(
        m.locality_string(&cpus("0")).unwrap(),
        "hwloc:SK0:CR0:HT0:NM0"
    );
    assert_eq!(
        m.locality_string(&cpus("1-2")).unwrap(),
        "hwloc:SK0-1:CR0-1:HT1-2:NM0-1"
    );
}

#[test]
fn relative_locality_follows_what_two_bindings_share() {
    let m = two_packages();
    let at = |l: &str| m.locality_string(&cpus(l)).unwrap();
    let same_core = relative_locality(&at("0"), &at("1")).unwrap();
    assert_eq!(
        same_core.0,
        Locality::SHARE_NODE.0
            | Locality::SHARE_NUMA.0
            | Locality::SHARE_PACKAGE.0
            | Locality::SHARE_CORE.0
    );
    let same_thread = relative_locality(&at("0"), &at("0")).unwrap();
    assert_ne!(same_thread.0 & Locality::SHARE_HWTHREAD.0, 0);
    let other_package = relative_locality(&at("0"), &at("3")).unwrap();
    assert_eq!(other_package, Locality::SHARE_NODE);
}

#[test]
fn openpmix_locality_strings_without_a_source_are_read_as_hwloc() {
    // OpenPMIx 4.2's server writes no `hwloc:` prefix (measured on a one-package machine).
    let theirs = "SK0:L30:L20:L10:CR0:HT0:NM0";
    let ours = two_packages().locality_string(&cpus("0")).unwrap();
    let shared = relative_locality(theirs, &ours).unwrap();
    assert_eq!(
        shared.0,
        Locality::SHARE_NODE.0
            | Locality::SHARE_PACKAGE.0
            | Locality::SHARE_CORE.0
            | Locality::SHARE_HWTHREAD.0
            | Locality::SHARE_NUMA.0
    );
    assert_eq!(
        relative_locality("other:SK0", theirs).unwrap_err().status(),
        Status::ERR_NOT_SUPPORTED
    );
}

#[test]
fn cpusets_outside_the_machine_and_malformed_strings_are_bad_parameters() {
    let m = two_packages();
    for bad in ["", "9", "0-", "x", "3-1", "1,,2"] {
        let err = m.locality_string(&cpus(bad)).unwrap_err();
        assert_eq!(err.status(), Status::ERR_BAD_PARAM, "{bad:?}: {err}");
    }
    for bad in ["0-3", "hwloc", "hwloc:0-", "hwloc:a", "hwloc:99999999999"] {
        let err = parse_cpuset_string(bad).unwrap_err();
        assert_eq!(err.status(), Status::ERR_BAD_PARAM, "{bad:?}: {err}");
    }
    assert_eq!(
        parse_cpuset_string("other:0").unwrap_err().status(),
        Status::ERR_NOT_SUPPORTED
    );
    for bad in ["", "NM0", "hwloc:XX0", "hwloc:NM0-", "SK0:XX"] {
        let err = relative_locality(bad, "hwloc:NM0").unwrap_err();
        assert_eq!(err.status(), Status::ERR_BAD_PARAM, "{bad:?}: {err}");
    }
    let err = Machine::from_xml("<topology").unwrap_err();
    assert_eq!(err.status(), Status::ERR_BAD_PARAM);
}

#[test]
fn a_cpuset_string_round_trips_through_its_parse() {
    let parsed = parse_cpuset_string("HWLOC:8,0-3,2").unwrap();
    assert_eq!(parsed.bitmap.as_deref(), Some("0-3,8"));
    assert_eq!(
        crate::model::topology::cpuset_string(&parsed).unwrap(),
        "hwloc:0-3,8"
    );
}

#[test]
fn a_device_is_nearer_to_the_package_it_hangs_below() {
    let m = two_packages();
    let near = m.distances(&cpus("2-3"), DeviceType::NETWORK, &[]).unwrap();
    let far = m.distances(&cpus("0-1"), DeviceType::NETWORK, &[]).unwrap();
    assert_eq!(near.len(), 1);
    assert_eq!(near[0].osname.as_deref(), Some("eth1"));
    assert_eq!(near[0].uuid.as_deref(), Some("pci:0000:01:00.0:eth1"));
    assert!(near[0].maxdist < far[0].mindist, "{near:?} {far:?}");
    let wide = m.distances(&cpus("0-3"), DeviceType::NETWORK, &[]).unwrap();
    assert_eq!(
        (wide[0].mindist, wide[0].maxdist),
        (near[0].mindist, far[0].maxdist)
    );
}

#[test]
fn devices_are_chosen_by_type_and_by_name() {
    let m = two_packages();
    let every = m.distances(&cpus("0"), DeviceType::UNKNOWN, &[]).unwrap();
    let names: Vec<_> = every.iter().filter_map(|d| d.osname.as_deref()).collect();
    assert_eq!(names, ["eth1", "vda"]);
    let disks = m.distances(&cpus("0"), DeviceType::BLOCK, &[]).unwrap();
    assert_eq!(disks.len(), 1);
    assert_eq!(disks[0].device_type, DeviceType::BLOCK);
    let by_name = m
        .distances(&cpus("0"), DeviceType::UNKNOWN, &["vda".into()])
        .unwrap();
    assert_eq!(by_name.len(), 1);
    let none = m.distances(&cpus("0"), DeviceType::GPU, &[]).unwrap();
    assert!(none.is_empty());
}

#[test]
fn a_topology_crosses_as_xml_and_reads_back_the_same() {
    let m = two_packages();
    let t = m.to_topology().unwrap();
    assert_eq!(t.source.as_deref(), Some("hwloc"));
    let back = Machine::from_topology(&t).unwrap();
    assert_eq!(back.all(), m.all());
    assert_eq!(
        back.locality_string(&cpus("3")).unwrap(),
        m.locality_string(&cpus("3")).unwrap()
    );
    let other = Topology {
        source: Some("other".into()),
        topology: Some(String::new()),
    };
    assert_eq!(
        Machine::from_topology(&other).unwrap_err().status(),
        Status::ERR_NOT_SUPPORTED
    );
}

#[test]
fn a_synthetic_machine_is_the_same_everywhere() {
    let m = Machine::synthetic("pack:2 core:2 pu:2").unwrap();
    assert_eq!(m.all().bitmap.as_deref(), Some("0-7"));
    assert_eq!(
        m.locality_string(&cpus("5")).unwrap(),
        "hwloc:SK1:CR2:HT5:NM0"
    );
}

#[test]
fn this_process_is_bound_somewhere_on_this_machine() {
    let m = Machine::discover().unwrap();
    let bound = m.binding(false).unwrap();
    let all = crate::model::topology::cpuset_list(&m.all()).unwrap();
    let mine = crate::model::topology::cpuset_list(&bound).unwrap();
    assert!(mine.intersects(&all), "{bound:?} within {:?}", m.all());
}
