//! Resource statistics as C objects (`pmix_*_stats_t`, data types 61–64): a process's, a
//! disk's, a network interface's and a node's samples, which monitoring queries answer. Each
//! is held behind a pointer in a value and side by side in a data array. A node's sample
//! holds its disks' and interfaces' samples in arrays of its own, NULL when empty as
//! `PMIX_DISK_STATS_CREATE` and `PMIX_NET_STATS_CREATE` leave them for a count of 0.

use std::ffi::c_char;
use std::ptr;

use pmix::model::{DiskStats, NetStats, NodeStats, ProcStats, Status, Timeval};

use super::basic::{c_proc, opt_strdup, read_proc};
use crate::boundary::{calloc_array, free, read_text, slice_of};
use crate::types::{CDiskStats, CNetStats, CNodeStats, CProcStats, CTimeval};

fn read_timeval(tv: CTimeval) -> Timeval {
    Timeval {
        sec: tv.sec,
        usec: tv.usec,
    }
}

fn c_timeval(tv: Timeval) -> CTimeval {
    CTimeval {
        sec: tv.sec,
        usec: tv.usec,
    }
}

/// A `pmix_proc_stats_t`.
///
/// # Safety
/// Its strings are NULL or strings.
pub(super) unsafe fn read_proc_stats(s: &CProcStats) -> Result<ProcStats, Status> {
    Ok(ProcStats {
        // SAFETY: the caller's promise, field by field.
        node: unsafe { read_text(s.node) },
        proc: read_proc(&s.proc)?,
        pid: s.pid,
        // SAFETY: as above.
        cmd: unsafe { read_text(s.cmd) },
        state: s.state as u8,
        time: read_timeval(s.time),
        percent_cpu: s.percent_cpu,
        priority: s.priority,
        num_threads: s.num_threads,
        pss: s.pss,
        vsize: s.vsize,
        rss: s.rss,
        peak_vsize: s.peak_vsize,
        processor: s.processor,
        sample_time: read_timeval(s.sample_time),
    })
}

/// A `pmix_disk_stats_t`.
///
/// # Safety
/// Its name is NULL or a string.
pub(super) unsafe fn read_disk_stats(d: &CDiskStats) -> DiskStats {
    DiskStats {
        // SAFETY: the caller's promise.
        disk: unsafe { read_text(d.disk) },
        num_reads_completed: d.num_reads_completed,
        num_reads_merged: d.num_reads_merged,
        num_sectors_read: d.num_sectors_read,
        milliseconds_reading: d.milliseconds_reading,
        num_writes_completed: d.num_writes_completed,
        num_writes_merged: d.num_writes_merged,
        num_sectors_written: d.num_sectors_written,
        milliseconds_writing: d.milliseconds_writing,
        num_ios_in_progress: d.num_ios_in_progress,
        milliseconds_io: d.milliseconds_io,
        weighted_milliseconds_io: d.weighted_milliseconds_io,
    }
}

/// A `pmix_net_stats_t`.
///
/// # Safety
/// Its interface name is NULL or a string.
pub(super) unsafe fn read_net_stats(n: &CNetStats) -> NetStats {
    NetStats {
        // SAFETY: the caller's promise.
        net_interface: unsafe { read_text(n.net_interface) },
        num_bytes_recvd: n.num_bytes_recvd,
        num_packets_recvd: n.num_packets_recvd,
        num_recv_errs: n.num_recv_errs,
        num_bytes_sent: n.num_bytes_sent,
        num_packets_sent: n.num_packets_sent,
        num_send_errs: n.num_send_errs,
    }
}

/// A `pmix_node_stats_t`.
///
/// # Safety
/// Its name is NULL or a string; `n.diskstats` holds `n.ndiskstats` disk samples and
/// `n.netstats` `n.nnetstats` interface samples (or the count is 0), each as
/// [`read_disk_stats`] and [`read_net_stats`] read them.
pub(super) unsafe fn read_node_stats(n: &CNodeStats) -> Result<NodeStats, Status> {
    // SAFETY: the caller's promise.
    let disks = unsafe { slice_of(n.diskstats.cast_const(), n.ndiskstats)? };
    // SAFETY: as above.
    let interfaces = unsafe { slice_of(n.netstats.cast_const(), n.nnetstats)? };
    Ok(NodeStats {
        // SAFETY: as above.
        node: unsafe { read_text(n.node) },
        la: n.la,
        la5: n.la5,
        la15: n.la15,
        total_mem: n.total_mem,
        free_mem: n.free_mem,
        buffers: n.buffers,
        cached: n.cached,
        swap_cached: n.swap_cached,
        swap_total: n.swap_total,
        swap_free: n.swap_free,
        mapped: n.mapped,
        sample_time: read_timeval(n.sample_time),
        // SAFETY: as above, for each sample.
        diskstats: disks
            .iter()
            .map(|d| unsafe { read_disk_stats(d) })
            .collect(),
        // SAFETY: as above, for each sample.
        netstats: interfaces
            .iter()
            .map(|i| unsafe { read_net_stats(i) })
            .collect(),
    })
}

/// A `pmix_proc_stats_t` of `s`, its strings in blocks of libc's allocator.
pub(super) fn c_proc_stats(s: &ProcStats) -> Result<CProcStats, Status> {
    let node = opt_strdup(s.node.as_ref())?;
    let cmd = match opt_strdup(s.cmd.as_ref()) {
        Ok(p) => p,
        Err(status) => {
            // SAFETY: the string made above.
            unsafe { free(node) };
            return Err(status);
        }
    };
    Ok(CProcStats {
        node,
        proc: c_proc(&s.proc),
        pid: s.pid,
        cmd,
        state: s.state as c_char,
        time: c_timeval(s.time),
        percent_cpu: s.percent_cpu,
        priority: s.priority,
        num_threads: s.num_threads,
        pss: s.pss,
        vsize: s.vsize,
        rss: s.rss,
        peak_vsize: s.peak_vsize,
        processor: s.processor,
        sample_time: c_timeval(s.sample_time),
    })
}

/// A `pmix_disk_stats_t` of `d`, its name in a block of libc's allocator.
pub(super) fn c_disk_stats(d: &DiskStats) -> Result<CDiskStats, Status> {
    Ok(CDiskStats {
        disk: opt_strdup(d.disk.as_ref())?,
        num_reads_completed: d.num_reads_completed,
        num_reads_merged: d.num_reads_merged,
        num_sectors_read: d.num_sectors_read,
        milliseconds_reading: d.milliseconds_reading,
        num_writes_completed: d.num_writes_completed,
        num_writes_merged: d.num_writes_merged,
        num_sectors_written: d.num_sectors_written,
        milliseconds_writing: d.milliseconds_writing,
        num_ios_in_progress: d.num_ios_in_progress,
        milliseconds_io: d.milliseconds_io,
        weighted_milliseconds_io: d.weighted_milliseconds_io,
    })
}

/// A `pmix_net_stats_t` of `n`, its interface name in a block of libc's allocator.
pub(super) fn c_net_stats(n: &NetStats) -> Result<CNetStats, Status> {
    Ok(CNetStats {
        net_interface: opt_strdup(n.net_interface.as_ref())?,
        num_bytes_recvd: n.num_bytes_recvd,
        num_packets_recvd: n.num_packets_recvd,
        num_recv_errs: n.num_recv_errs,
        num_bytes_sent: n.num_bytes_sent,
        num_packets_sent: n.num_packets_sent,
        num_send_errs: n.num_send_errs,
    })
}

/// A `pmix_node_stats_t` of `n`, its name and its disks' and interfaces' samples in blocks
/// of libc's allocator (each array NULL when it has no sample).
pub(super) fn c_node_stats(n: &NodeStats) -> Result<CNodeStats, Status> {
    let mut c = CNodeStats {
        node: ptr::null_mut(),
        la: n.la,
        la5: n.la5,
        la15: n.la15,
        total_mem: n.total_mem,
        free_mem: n.free_mem,
        buffers: n.buffers,
        cached: n.cached,
        swap_cached: n.swap_cached,
        swap_total: n.swap_total,
        swap_free: n.swap_free,
        mapped: n.mapped,
        sample_time: c_timeval(n.sample_time),
        diskstats: ptr::null_mut(),
        ndiskstats: 0,
        netstats: ptr::null_mut(),
        nnetstats: 0,
    };
    // Zeroed samples hold nothing, so each array is counted whole as soon as it is made and
    // a failure part-way releases it whole.
    let filled = (|| {
        c.node = opt_strdup(n.node.as_ref())?;
        if !n.diskstats.is_empty() {
            c.diskstats = calloc_array(n.diskstats.len())?;
            c.ndiskstats = n.diskstats.len();
            for (i, d) in n.diskstats.iter().enumerate() {
                let written = c_disk_stats(d)?;
                // SAFETY: the array has `ndiskstats` slots; slot `i` is in it.
                unsafe { c.diskstats.add(i).write(written) };
            }
        }
        if !n.netstats.is_empty() {
            c.netstats = calloc_array(n.netstats.len())?;
            c.nnetstats = n.netstats.len();
            for (i, s) in n.netstats.iter().enumerate() {
                let written = c_net_stats(s)?;
                // SAFETY: the array has `nnetstats` slots; slot `i` is in it.
                unsafe { c.netstats.add(i).write(written) };
            }
        }
        Ok(())
    })();
    if let Err(s) = filled {
        // SAFETY: every pointer of `c` is NULL or a block written above.
        unsafe { destruct_node_stats(&mut c) };
        return Err(s);
    }
    Ok(c)
}

/// Release the strings of a process's sample and leave them NULL
/// (`PMIX_PROC_STATS_DESTRUCT`).
///
/// # Safety
/// As [`super::destruct_object`].
pub(super) unsafe fn destruct_proc_stats(s: &mut CProcStats) {
    // SAFETY: the caller's promise.
    unsafe {
        free(s.node);
        free(s.cmd);
    }
    s.node = ptr::null_mut();
    s.cmd = ptr::null_mut();
}

/// # Safety
/// As [`super::destruct_object`].
pub(super) unsafe fn destruct_disk_stats(d: &mut CDiskStats) {
    // SAFETY: the caller's promise.
    unsafe { free(d.disk) };
    d.disk = ptr::null_mut();
}

/// # Safety
/// As [`super::destruct_object`].
pub(super) unsafe fn destruct_net_stats(n: &mut CNetStats) {
    // SAFETY: the caller's promise.
    unsafe { free(n.net_interface) };
    n.net_interface = ptr::null_mut();
}

/// Release a node's sample: its name, and its disks' and interfaces' samples with their
/// arrays (`PMIX_NODE_STATS_DESTRUCT`).
///
/// # Safety
/// As [`super::destruct_object`], for the samples in its arrays too.
pub(super) unsafe fn destruct_node_stats(n: &mut CNodeStats) {
    // SAFETY: the caller's promise.
    unsafe {
        free(n.node);
        if !n.diskstats.is_null() {
            for i in 0..n.ndiskstats {
                destruct_disk_stats(&mut *n.diskstats.add(i));
            }
            free(n.diskstats);
        }
        if !n.netstats.is_null() {
            for i in 0..n.nnetstats {
                destruct_net_stats(&mut *n.netstats.add(i));
            }
            free(n.netstats);
        }
    }
    n.node = ptr::null_mut();
    n.diskstats = ptr::null_mut();
    n.ndiskstats = 0;
    n.netstats = ptr::null_mut();
    n.nnetstats = 0;
}
