//! The v41 encoding of the fabric, topology and statistics structures.
//!
//! These go through OpenPMIx's generic field-by-field packing: strings as strings, counts
//! as `PMIX_SIZE`, fixed-width integers as varints, floats as text. Layouts are pinned by
//! the golden vectors in `tests/data/golden/golden_v41_extra.tsv`.

use super::primitive::{Reader, Writer};
use super::types::Codec;
use crate::Error;
use crate::model::*;

impl Codec for Coord {
    const DATA_TYPE: DataType = DataType::COORD;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.byte(self.view.0);
        w.size(self.coord.len() as u64);
        self.coord.iter().for_each(|c| w.varint(u64::from(*c)));
        Ok(())
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        let view = CoordView(r.byte("coord view")?);
        let n = r.size_count("coord dims", 1)?;
        let coord = (0..n)
            .map(|_| r.uint32("coord"))
            .collect::<Result<_, _>>()?;
        Ok(Coord { view, coord })
    }
}

impl Codec for Geometry {
    const DATA_TYPE: DataType = DataType::GEOMETRY;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.size(self.fabric);
        w.string(self.uuid.as_deref())?;
        w.string(self.osname.as_deref())?;
        w.size(self.coordinates.len() as u64);
        self.coordinates.iter().try_for_each(|c| c.encode(w))
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        let fabric = r.varint("geometry fabric")?;
        let uuid = r.string("geometry uuid")?;
        let osname = r.string("geometry osname")?;
        let n = r.size_count("geometry ncoords", 2)?;
        let coordinates = (0..n)
            .map(|_| Coord::decode(r, depth))
            .collect::<Result<_, _>>()?;
        Ok(Geometry {
            fabric,
            uuid,
            osname,
            coordinates,
        })
    }
}

impl Codec for DeviceDistance {
    const DATA_TYPE: DataType = DataType::DEVICE_DIST;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.string(self.uuid.as_deref())?;
        w.string(self.osname.as_deref())?;
        w.varint(self.device_type.0);
        w.varint(u64::from(self.mindist));
        w.varint(u64::from(self.maxdist));
        Ok(())
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        Ok(DeviceDistance {
            uuid: r.string("device uuid")?,
            osname: r.string("device osname")?,
            device_type: DeviceType(r.varint("device type")?),
            mindist: r.uint16("device mindist")?,
            maxdist: r.uint16("device maxdist")?,
        })
    }
}

impl Codec for Endpoint {
    const DATA_TYPE: DataType = DataType::ENDPOINT;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.string(self.uuid.as_deref())?;
        w.string(self.osname.as_deref())?;
        self.endpt.encode(w)
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        Ok(Endpoint {
            uuid: r.string("endpoint uuid")?,
            osname: r.string("endpoint osname")?,
            endpt: ByteObject::decode(r, depth)?,
        })
    }
}

impl Codec for RegAttr {
    const DATA_TYPE: DataType = DataType::REGATTR;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.string(self.name.as_deref())?;
        w.string(self.string.as_deref())?;
        w.data_type(self.data_type);
        w.length(self.description.len())?;
        self.description
            .iter()
            .try_for_each(|s| w.string(s.as_deref()))
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        let name = r.string("regattr name")?;
        let string = r.string("regattr key")?;
        let data_type = r.data_type("regattr type")?;
        let n = r.count("regattr description", 1)?;
        let description = (0..n)
            .map(|_| r.string("regattr description"))
            .collect::<Result<_, _>>()?;
        Ok(RegAttr {
            name,
            string,
            data_type,
            description,
        })
    }
}

/// `PMIX_PROC_CPUSET` travels as one string, the bitmap in hwloc's list form (`0-3,8`), or a
/// NULL string for an unbound process; the source is not sent, it is always hwloc. This is
/// OpenPMIx 4.2's layout (its hwloc support packs only the list string), so a cpuset from
/// another source cannot be sent (`NotSupported`, as OpenPMIx answers), and a decoded
/// cpuset's source is `"hwloc"`.
impl Codec for Cpuset {
    const DATA_TYPE: DataType = DataType::PROC_CPUSET;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        if let Some(source) = &self.source
            && !source
                .get(..5)
                .is_some_and(|s| s.eq_ignore_ascii_case("hwloc"))
        {
            return Err(Error::NotSupported(format!(
                "a cpuset from source \"{source}\" has no wire form (only hwloc's)"
            )));
        }
        w.string(self.bitmap.as_deref())
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        Ok(Cpuset {
            source: Some("hwloc".into()),
            bitmap: r.string("cpuset bitmap")?,
        })
    }
}

/// `PMIX_TOPO` travels as OpenPMIx 4.2 packs it (read in its source, facts only): the hwloc
/// XML as a string, then the raw bytes of hwloc's three support structures (discovery, CPU
/// binding, memory binding), one byte per flag in hwloc 2.9's field order (Debian's hwloc,
/// which both libraries link here). hwloc 2 writes the same flags into the XML as
/// `<support name="cpubind.set_thisproc_cpubind"/>` elements, so the bytes are made from
/// those on the way out and dropped on the way in. The source is not sent (it is always
/// hwloc, as for cpusets): another source is `NotSupported`, and a decoded topology's source
/// is `"hwloc"`. No topology is a NULL string alone.
impl Codec for Topology {
    const DATA_TYPE: DataType = DataType::TOPO;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        if let Some(source) = &self.source
            && !source.eq_ignore_ascii_case("hwloc")
        {
            return Err(Error::NotSupported(format!(
                "a topology from source \"{source}\" has no wire form (only hwloc's)"
            )));
        }
        w.string(self.topology.as_deref())?;
        if let Some(xml) = &self.topology {
            for (group, fields) in SUPPORT {
                for field in fields {
                    let element = format!("<support name=\"{group}.{field}\"");
                    w.byte(u8::from(xml.contains(&element)));
                }
            }
        }
        Ok(())
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        let topology = r.string("topology")?;
        if topology.is_some() {
            let n: usize = SUPPORT.iter().map(|(_, f)| f.len()).sum();
            r.raw(n, "topology support flags")?;
        }
        Ok(Topology {
            source: Some("hwloc".into()),
            topology,
        })
    }
}

/// `struct hwloc_topology_discovery_support`'s flags (hwloc 2.9).
const DISCOVERY_SUPPORT: &[&str] = &[
    "pu",
    "numa",
    "numa_memory",
    "disallowed_pu",
    "disallowed_numa",
    "cpukind_efficiency",
];

/// `struct hwloc_topology_cpubind_support`'s flags (hwloc 2.9).
const CPUBIND_SUPPORT: &[&str] = &[
    "set_thisproc_cpubind",
    "get_thisproc_cpubind",
    "set_proc_cpubind",
    "get_proc_cpubind",
    "set_thisthread_cpubind",
    "get_thisthread_cpubind",
    "set_thread_cpubind",
    "get_thread_cpubind",
    "get_thisproc_last_cpu_location",
    "get_proc_last_cpu_location",
    "get_thisthread_last_cpu_location",
];

/// `struct hwloc_topology_membind_support`'s flags (hwloc 2.9).
const MEMBIND_SUPPORT: &[&str] = &[
    "set_thisproc_membind",
    "get_thisproc_membind",
    "set_proc_membind",
    "get_proc_membind",
    "set_thisthread_membind",
    "get_thisthread_membind",
    "set_area_membind",
    "get_area_membind",
    "alloc_membind",
    "firsttouch_membind",
    "bind_membind",
    "interleave_membind",
    "nexttouch_membind",
    "migrate_membind",
    "get_area_memlocation",
];

/// The support structures in the order they travel, each with its XML group name.
const SUPPORT: [(&str, &[&str]); 3] = [
    ("discovery", DISCOVERY_SUPPORT),
    ("cpubind", CPUBIND_SUPPORT),
    ("membind", MEMBIND_SUPPORT),
];

impl Codec for ProcStats {
    const DATA_TYPE: DataType = DataType::PROC_STATS;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.text(self.node.as_ref().map(Text::as_bytes))?;
        self.proc.encode(w)?;
        w.varint(u64::from(self.pid as u32));
        w.text(self.cmd.as_ref().map(Text::as_bytes))?;
        w.byte(self.state);
        self.time.encode(w)?;
        self.percent_cpu.encode(w)?;
        self.priority.encode(w)?;
        self.num_threads.encode(w)?;
        for f in [self.pss, self.vsize, self.rss, self.peak_vsize] {
            f.encode(w)?;
        }
        self.processor.encode(w)?;
        self.sample_time.encode(w)
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        Ok(ProcStats {
            node: r.text("proc stats node")?,
            proc: Proc::decode(r, depth)?,
            pid: r.uint32("proc stats pid")? as i32,
            cmd: r.text("proc stats cmd")?,
            state: r.byte("proc stats state")?,
            time: Timeval::decode(r, depth)?,
            percent_cpu: f32::decode(r, depth)?,
            priority: i32::decode(r, depth)?,
            num_threads: u16::decode(r, depth)?,
            pss: f32::decode(r, depth)?,
            vsize: f32::decode(r, depth)?,
            rss: f32::decode(r, depth)?,
            peak_vsize: f32::decode(r, depth)?,
            processor: u16::decode(r, depth)?,
            sample_time: Timeval::decode(r, depth)?,
        })
    }
}

impl Codec for DiskStats {
    const DATA_TYPE: DataType = DataType::DISK_STATS;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.text(self.disk.as_ref().map(Text::as_bytes))?;
        for v in [
            self.num_reads_completed,
            self.num_reads_merged,
            self.num_sectors_read,
            self.milliseconds_reading,
            self.num_writes_completed,
            self.num_writes_merged,
            self.num_sectors_written,
            self.milliseconds_writing,
            self.num_ios_in_progress,
            self.milliseconds_io,
            self.weighted_milliseconds_io,
        ] {
            w.varint(v);
        }
        Ok(())
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        let disk = r.text("disk stats name")?;
        let mut v = [0u64; 11];
        for x in &mut v {
            *x = r.varint("disk stats counter")?;
        }
        let [a, b, c, d, e, f, g, h, i, j, k] = v;
        Ok(DiskStats {
            disk,
            num_reads_completed: a,
            num_reads_merged: b,
            num_sectors_read: c,
            milliseconds_reading: d,
            num_writes_completed: e,
            num_writes_merged: f,
            num_sectors_written: g,
            milliseconds_writing: h,
            num_ios_in_progress: i,
            milliseconds_io: j,
            weighted_milliseconds_io: k,
        })
    }
}

impl Codec for NetStats {
    const DATA_TYPE: DataType = DataType::NET_STATS;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.text(self.net_interface.as_ref().map(Text::as_bytes))?;
        for v in [
            self.num_bytes_recvd,
            self.num_packets_recvd,
            self.num_recv_errs,
            self.num_bytes_sent,
            self.num_packets_sent,
            self.num_send_errs,
        ] {
            w.varint(v);
        }
        Ok(())
    }
    fn decode(r: &mut Reader<'_>, _depth: u32) -> Result<Self, Error> {
        let net_interface = r.text("net stats interface")?;
        let mut v = [0u64; 6];
        for x in &mut v {
            *x = r.varint("net stats counter")?;
        }
        let [a, b, c, d, e, f] = v;
        Ok(NetStats {
            net_interface,
            num_bytes_recvd: a,
            num_packets_recvd: b,
            num_recv_errs: c,
            num_bytes_sent: d,
            num_packets_sent: e,
            num_send_errs: f,
        })
    }
}

impl Codec for NodeStats {
    const DATA_TYPE: DataType = DataType::NODE_STATS;
    fn encode(&self, w: &mut Writer) -> Result<(), Error> {
        w.text(self.node.as_ref().map(Text::as_bytes))?;
        for f in [
            self.la,
            self.la5,
            self.la15,
            self.total_mem,
            self.free_mem,
            self.buffers,
            self.cached,
            self.swap_cached,
            self.swap_total,
            self.swap_free,
            self.mapped,
        ] {
            f.encode(w)?;
        }
        self.sample_time.encode(w)?;
        w.size(self.diskstats.len() as u64);
        self.diskstats.iter().try_for_each(|d| d.encode(w))?;
        w.size(self.netstats.len() as u64);
        self.netstats.iter().try_for_each(|n| n.encode(w))
    }
    fn decode(r: &mut Reader<'_>, depth: u32) -> Result<Self, Error> {
        let node = r.text("node stats name")?;
        let mut f = [0f32; 11];
        for x in &mut f {
            *x = f32::decode(r, depth)?;
        }
        let sample_time = Timeval::decode(r, depth)?;
        let nd = r.size_count("node stats ndisks", 12)?;
        let diskstats = (0..nd)
            .map(|_| DiskStats::decode(r, depth))
            .collect::<Result<_, _>>()?;
        let nn = r.size_count("node stats nnets", 7)?;
        let netstats = (0..nn)
            .map(|_| NetStats::decode(r, depth))
            .collect::<Result<_, _>>()?;
        let [
            la,
            la5,
            la15,
            total_mem,
            free_mem,
            buffers,
            cached,
            swap_cached,
            swap_total,
            swap_free,
            mapped,
        ] = f;
        Ok(NodeStats {
            node,
            la,
            la5,
            la15,
            total_mem,
            free_mem,
            buffers,
            cached,
            swap_cached,
            swap_total,
            swap_free,
            mapped,
            sample_time,
            diskstats,
            netstats,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::DataBuffer;

    #[test]
    fn a_topology_travels_as_its_xml_then_one_byte_per_support_flag() {
        let xml = "<topology><support name=\"discovery.pu\"/>\
                   <support name=\"cpubind.get_thisproc_cpubind\"/>\
                   <support name=\"membind.get_area_memlocation\"/></topology>";
        let t = Topology {
            source: Some("hwloc".into()),
            topology: Some(xml.into()),
        };
        let mut buf = DataBuffer::new();
        buf.pack(std::slice::from_ref(&t)).unwrap();
        let bytes = buf.bytes().to_vec();
        let flags = &bytes[bytes.len() - 32..];
        let mut want = [0u8; 32];
        want[0] = 1; // discovery.pu
        want[6 + 1] = 1; // cpubind.get_thisproc_cpubind
        want[6 + 11 + 14] = 1; // membind.get_area_memlocation
        assert_eq!(flags, want);
        let mut read = DataBuffer::load(bytes, buf.buffer_type());
        let back: Vec<Topology> = read.unpack(1).unwrap();
        assert_eq!(back, vec![t]);
        // Nothing but the NULL string for no topology; another source has no wire form.
        let none = Topology::default();
        let mut buf = DataBuffer::new();
        buf.pack(std::slice::from_ref(&none)).unwrap();
        let mut read = DataBuffer::load(buf.bytes().to_vec(), buf.buffer_type());
        let back: Vec<Topology> = read.unpack(1).unwrap();
        assert_eq!(back[0].topology, None);
        let other = Topology {
            source: Some("other".into()),
            topology: None,
        };
        assert!(DataBuffer::new().pack(&[other]).is_err());
    }
}
