//! hwloc topologies the unit tests share, in hwloc 2's XML: one small machine, alone or with
//! network devices. Each is built from the same pieces, so the machine is written once.

/// The start of a topology: one machine holding one package, one core, one PU and one
/// NUMA node, left open for the objects that follow them.
macro_rules! one_pu_machine {
    () => {
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" allowed_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001" gp_index="1">
    <object type="Package" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2">
      <object type="Core" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4">
        <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
      </object>
    </object>
    <object type="NUMANode" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3" local_memory="1073741824"/>
"#
    };
}

/// The end of a topology: the machine closed.
macro_rules! machine_end {
    () => {
        "  </object>
</topology>
"
    };
}

/// One machine, one package, one core, one PU and one NUMA node.
pub(crate) const ONE_PU: &str = concat!(one_pu_machine!(), machine_end!());

/// `ONE_PU` and, behind a PCI bridge, two network devices.
pub(crate) const TWO_NICS: &str = concat!(
    one_pu_machine!(),
    r#"    <object type="Bridge" gp_index="6" bridge_type="0-1" depth="0" bridge_pci="0000:[00-00]">
      <object type="PCIDev" gp_index="7" pci_busid="0000:00:03.0" pci_type="0200 [8086:100e] [8086:001e] 02" pci_link_speed="0.000000">
        <object type="OSDev" gp_index="8" name="vnet0" osdev_type="2">
          <info name="Address" value="52:54:00:00:00:01"/>
        </object>
      </object>
      <object type="PCIDev" gp_index="9" pci_busid="0000:00:04.0" pci_type="0200 [8086:100e] [8086:001e] 02" pci_link_speed="0.000000">
        <object type="OSDev" gp_index="10" name="vnet1" osdev_type="2">
          <info name="Address" value="52:54:00:00:00:02"/>
        </object>
      </object>
    </object>
"#,
    machine_end!()
);
