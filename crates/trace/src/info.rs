//! [`info`]: summary statistics of a whole trace (streams it once).

use crate::{AccessSource, Result};

/// What [`info`] reports about a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceInfo {
    pub format: String,
    pub records: u64,
    /// Distinct page ids accessed.
    pub pages: u64,
    /// cgroup names by id (root `""` first).
    pub cgroups: Vec<String>,
    pub reads: u64,
    pub writes: u64,
    pub file: u64,
    pub anon: u64,
    pub syscall: u64,
    pub mapped: u64,
    /// Whether records carry time (tick_ps > 0).
    pub has_time: bool,
    /// Sum of all gaps, in ticks.
    pub total_gap_ticks: u64,
    pub tick_ps: u64,
    /// The trace's ops (`memory.reclaim` writes between records), in order.
    pub ops: Vec<crate::TraceOp>,
}

/// Stream all of `src` and summarise it.
pub fn info(src: &mut dyn AccessSource) -> Result<TraceInfo> {
    let mut seen: Vec<u64> = Vec::new();
    let mut t = TraceInfo { format: src.meta().format.clone(), tick_ps: src.meta().tick_ps, ops: src.meta().ops.clone(), ..Default::default() };
    let mut buf = Vec::with_capacity(crate::convert::BATCH);
    while src.read_batch(&mut buf, crate::convert::BATCH)? > 0 {
        for a in &buf {
            let (w, bit) = ((a.page >> 6) as usize, 1u64 << (a.page & 63));
            if w >= seen.len() {
                seen.resize((w + 1).next_power_of_two(), 0);
            }
            seen[w] |= bit;
            t.writes += a.is_write() as u64;
            t.file += a.is_file() as u64;
            t.syscall += a.is_syscall() as u64;
            t.total_gap_ticks += a.gap as u64;
        }
        t.records += buf.len() as u64;
    }
    t.reads = t.records - t.writes;
    t.anon = t.records - t.file;
    t.mapped = t.records - t.syscall;
    t.pages = seen.iter().map(|w| w.count_ones() as u64).sum();
    t.cgroups = src.cgroups_seen().to_vec();
    t.has_time = t.tick_ps != 0;
    Ok(t)
}
