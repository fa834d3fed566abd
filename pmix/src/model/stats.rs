//! Resource statistics (OpenPMIx 4.2's `pmix_*_stats_t`, data types 61–64), reported by
//! monitoring queries. Fields as in OpenPMIx's `pmix_common.h`; sizes in MBytes where noted.

use super::{Proc, Text, Timeval};

/// `pmix_proc_stats_t`: one sample of a process's resource use.
#[derive(Clone, Debug, Default, PartialEq, PartialOrd)]
pub struct ProcStats {
    pub node: Option<Text>,
    pub proc: Proc,
    pub pid: i32,
    pub cmd: Option<Text>,
    /// The process state letter as `ps` reports it (`R`, `S`, …).
    pub state: u8,
    pub time: Timeval,
    pub percent_cpu: f32,
    pub priority: i32,
    pub num_threads: u16,
    pub pss: f32,
    pub vsize: f32,
    pub rss: f32,
    pub peak_vsize: f32,
    pub processor: u16,
    pub sample_time: Timeval,
}

/// `pmix_disk_stats_t`: one sample of a disk's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DiskStats {
    pub disk: Option<Text>,
    pub num_reads_completed: u64,
    pub num_reads_merged: u64,
    pub num_sectors_read: u64,
    pub milliseconds_reading: u64,
    pub num_writes_completed: u64,
    pub num_writes_merged: u64,
    pub num_sectors_written: u64,
    pub milliseconds_writing: u64,
    pub num_ios_in_progress: u64,
    pub milliseconds_io: u64,
    pub weighted_milliseconds_io: u64,
}

/// `pmix_net_stats_t`: one sample of a network interface's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NetStats {
    pub net_interface: Option<Text>,
    pub num_bytes_recvd: u64,
    pub num_packets_recvd: u64,
    pub num_recv_errs: u64,
    pub num_bytes_sent: u64,
    pub num_packets_sent: u64,
    pub num_send_errs: u64,
}

/// `pmix_node_stats_t`: one sample of a node's load, memory, disks and interfaces.
#[derive(Clone, Debug, Default, PartialEq, PartialOrd)]
pub struct NodeStats {
    pub node: Option<Text>,
    pub la: f32,
    pub la5: f32,
    pub la15: f32,
    pub total_mem: f32,
    pub free_mem: f32,
    pub buffers: f32,
    pub cached: f32,
    pub swap_cached: f32,
    pub swap_total: f32,
    pub swap_free: f32,
    pub mapped: f32,
    pub sample_time: Timeval,
    pub diskstats: Vec<DiskStats>,
    pub netstats: Vec<NetStats>,
}
