//! What a run reports: vmstat counters (kernel names), derived metrics and a time
//! series sampled on the simulated clock.
//!
//! Metrics:
//! - `runtime_s`: simulated workload time; `baseline_runtime_s`: the same trace with
//!   unlimited memory (per-access CPU plus first-touch faults and cold file reads,
//!   accumulated in the same pass); `slowdown` = runtime / baseline.
//! - `mem_used_avg_bytes`, `mem_used_peak_bytes`: frames not free (LRU pages, zram
//!   pool), time-weighted; `rss_unlimited_bytes`: what the trace uses with unlimited
//!   memory (pages touched); `memory_saving` = 1 − avg / unlimited.
//! - `memstall_some_pct`: share of runtime the task stalled on memory, as PSI `some`
//!   counts it (direct and memcg reclaim, memory.high throttling, reading back folios
//!   that were in the workingset).
//! - `kswapd_cpu_s`, `direct_reclaim_s`, `memcg_reclaim_s`, `io_wait_s`, `io_write_s`,
//!   `task_cpu_s` (the task's time on its CPU, reclaim included: the runtime less its waits
//!   for storage, its sleeps and kswapd's runs on its CPU; a zram swap-in's decompression is
//!   CPU, as in the kernel; a trace's one task), `major_faults` (every access that waited for storage or swap, including read()
//!   misses that the kernel does not count as faults), `refaults_per_s`,
//!   `zram_pool_bytes`, `swap_used_bytes` (at the end of the run); `proactive_reclaim_s`
//!   (the CPU time of the trace's `memory.reclaim` writes); `kswapd_dma_passes` (kswapd
//!   passes for ZONE_DMA alone, `rmqueue`'s wake-up for a boosted DMA; only when some ran),
//!   `kswapd_empty_passes` (passes that found the node balanced before any shrink: the
//!   guest's `@@vmpass` lines with lowest priority 99; only when some ran);
//!   `kswapd_shrinking_passes`, and per such pass `kswapd_pass_reclaimed_{mean,p50,p90}` and
//!   `kswapd_pass_min_priority_mean` (pages reclaimed, the lowest priority it shrank at: the
//!   guest's `@@vmpass` RECLAIMED and MIN_PRIORITY; only when some ran),
//!   `kswapd_wake_windows` and `kswapd_wake_window_pages_{mean,p50,p90,max}` (per pass a
//!   wake-up started, the pages every task allocated, `pgalloc_*`, between the wake-up and
//!   kswapd's first step: the guest's `@@kswapd_wake` PAGES; only when kswapd was woken),
//!   `kswapd_wake_windows_stalled` (those windows with a direct reclaim in them, STALLS);
//!   `extfrag_claims`, `extfrag_steals` (allocations served by claiming another migrate
//!   type's pageblock, or by a page from it that keeps its type: the guest's
//!   `mm_page_alloc_extfrag` events) and `watermark_boosts` (`boost_watermark`'s boosts:
//!   claim attempts below `pageblock_order`; only when some allocation fell back) and
//!   `watermark_boosts_first` (those that left the boost at one pageblock: the guest's
//!   `@@claim` FIRST), with
//!   `pcp_refills`, `pcp_refill_frames`, `pcp_refills_stealing` (the per-CPU lists'
//!   `rmqueue_bulk` refills, their frames, those that stole: the guest's `@@refill`), and
//!   `free_pages_end_{unmovable,movable,reclaimable}` and `pageblocks_end_*` (the free lists
//!   and pageblocks per migrate type at the end: the guest's `@@freelist end`).
//! - Per cgroup whose `memory.reclaim` the trace wrote (the root's as `memcg..`):
//!   `memcg.<name>.memory.reclaim.{writes,eagain,requested_bytes,reclaimed_bytes}`.
//! - Per non-root cgroup: `memcg.<name>.memory.current_bytes` (at the end, and — for
//!   the first [`SERIES_MEMCGS`] — as a time-series column, 0 before the cgroup first
//!   charges a page),
//!   `memcg.<name>.memory.peak_bytes`, and `memcg.<name>.memory.events.{low,high,max,oom}`
//!   counted as the kernel counts them in `memory.events`; and `memcg.<name>.<key>` for
//!   each `memory.stat` key of 6.12 the model gives, under the kernel's name and unit
//!   (page states in bytes at the end of the run, events as counts: `Mm::memory_stat`).

use crate::config::SimConfig;
use crate::mm::lruvec::LruList;
use crate::mm::page_alloc::{MigrateType, MAX_PAGE_ORDER};
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::vmscan::Kswapd;

/// Columnar time series sampled on the simulated clock: the fixed columns, then per
/// non-root cgroup `memcg.<name>.memory.current_bytes`.
#[derive(Clone, Debug, Default)]
pub struct TimeSeries {
    pub columns: Vec<(String, Vec<f64>)>,
}

/// What a finished run reports.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub policy: String,
    /// vmstat counters under the kernel's names, in /proc/vmstat order.
    pub vmstat: Vec<(&'static str, u64)>,
    /// Derived metrics (runtime_s, slowdown, mem_used_avg_bytes, ...), then per cgroup
    /// `memcg.<name>.memory.{current,peak}_bytes` and `memcg.<name>.memory.events.*`.
    pub metrics: Vec<(String, f64)>,
    pub timeseries: TimeSeries,
}

const SERIES: &[&str] = &[
    "time_s",
    "accesses",
    "nr_free_pages",
    "nr_inactive_anon",
    "nr_active_anon",
    "nr_inactive_file",
    "nr_active_file",
    "zram_pool_pages",
    "mem_used_bytes",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "workingset_refault_anon",
    "workingset_refault_file",
    "pswpin",
    "pswpout",
    "pgmajfault",
    "memstall_s",
    "kswapd_cpu_s",
];

/// How many non-root cgroups get a `memory.current` time-series column (a trace may name
/// thousands; the series would grow with each).
pub const SERIES_MEMCGS: usize = 32;

pub struct Recorder {
    pub baseline_ns: u64,
    pub memstall_ns: u64,
    pub direct_reclaim_ns: u64,
    pub memcg_reclaim_ns: u64,
    /// CPU time of the trace's `memory.reclaim` writes.
    pub proactive_reclaim_ns: u64,
    pub io_wait_ns: u64,
    /// Time writers slept in `balance_dirty_pages`.
    pub dirty_throttle_ns: u64,
    /// The task's time off its CPU: waits for storage (a file read, an SSD swap-in),
    /// sleeps (dirty and `memory.high` throttling, a reclaim retry's wait), lock waits,
    /// and kswapd's runs on its CPU. `task_cpu_s` is the runtime less it and less
    /// `reclaim_throttle`'s sleeps (`Mm::reclaim_throttle_ns`).
    pub off_cpu_ns: u64,
    pub major_faults: u64,
    pub touched_pages: u64,
    mem_integral: u128,
    mem_last_t: u64,
    mem_peak: u64,
    pub next_sample: u64,
    interval: u64,
    series: Vec<Vec<f64>>,
    /// `memory.current` in bytes per memcg id (root's slot unused), one entry per sample.
    memcg_series: Vec<Vec<f64>>,
}

fn lru_total(mm: &Mm, lru: LruList) -> u64 {
    (0..mm.nr_nodes() as u16).map(|n| mm.node_lru_pages(n, lru)).sum()
}

impl Recorder {
    pub fn new(cfg: &SimConfig) -> Self {
        Recorder {
            baseline_ns: 0,
            memstall_ns: 0,
            direct_reclaim_ns: 0,
            memcg_reclaim_ns: 0,
            proactive_reclaim_ns: 0,
            io_wait_ns: 0,
            dirty_throttle_ns: 0,
            off_cpu_ns: 0,
            major_faults: 0,
            touched_pages: 0,
            mem_integral: 0,
            mem_last_t: 0,
            mem_peak: 0,
            next_sample: 0,
            interval: cfg.sample_interval_ns,
            series: vec![Vec::new(); SERIES.len()],
            memcg_series: Vec::new(),
        }
    }

    /// Integrate memory in use up to `now` (called on faults and samples).
    #[inline]
    pub fn account_mem(&mut self, mm: &Mm, now: u64) {
        let used = mm.used_pages();
        // A program's tasks run on their own clocks: the machine's clock may step back.
        self.mem_integral += used as u128 * now.saturating_sub(self.mem_last_t) as u128;
        self.mem_last_t = self.mem_last_t.max(now);
        self.mem_peak = self.mem_peak.max(used);
    }

    pub fn sample_due(&mut self, mm: &Mm, kswapd: &[Kswapd], now: u64, accesses: u64) {
        if now < self.next_sample {
            return;
        }
        self.account_mem(mm, now);
        self.sample(mm, kswapd, now, accesses);
        while self.next_sample <= now {
            self.next_sample += self.interval;
        }
    }

    fn sample(&mut self, mm: &Mm, kswapd: &[Kswapd], now: u64, accesses: u64) {
        let v = &mm.vmstat;
        let row = [
            now as f64 / 1e9,
            accesses as f64,
            mm.total_free_pages() as f64,
            lru_total(mm, LruList::InactiveAnon) as f64,
            lru_total(mm, LruList::ActiveAnon) as f64,
            lru_total(mm, LruList::InactiveFile) as f64,
            lru_total(mm, LruList::ActiveFile) as f64,
            mm.swap.zram_pool.len() as f64,
            (mm.used_pages() * reclaimlab_trace::PAGE_SIZE) as f64,
            v.get(Ev::PgscanKswapd) as f64,
            v.get(Ev::PgscanDirect) as f64,
            v.get(Ev::PgstealKswapd) as f64,
            v.get(Ev::PgstealDirect) as f64,
            v.get(Ev::WorkingsetRefaultAnon) as f64,
            v.get(Ev::WorkingsetRefaultFile) as f64,
            v.get(Ev::Pswpin) as f64,
            v.get(Ev::Pswpout) as f64,
            v.get(Ev::Pgmajfault) as f64,
            self.memstall_ns as f64 / 1e9,
            kswapd.iter().map(|k| k.cpu_ns).sum::<u64>() as f64 / 1e9,
        ];
        let earlier = self.series[0].len();
        for (col, x) in self.series.iter_mut().zip(row) {
            col.push(x);
        }
        // A memcg created since the last sample (a trace's new cgroup) had no pages before.
        self.memcg_series.resize_with(mm.memcgs.len().min(SERIES_MEMCGS + 1), || vec![0.0; earlier]);
        for (col, m) in self.memcg_series.iter_mut().zip(&mm.memcgs) {
            col.push((m.usage * reclaimlab_trace::PAGE_SIZE) as f64);
        }
    }

    pub fn finish(mut self, mm: &Mm, kswapd: &[Kswapd], now: u64, accesses: u64, policy: String) -> RunResult {
        self.account_mem(mm, now);
        if self.series[0].last() != Some(&(now as f64 / 1e9)) {
            self.sample(mm, kswapd, now, accesses);
        }
        let v = &mm.vmstat;
        let mut vmstat: Vec<(&'static str, u64)> = vec![
            ("nr_free_pages", mm.total_free_pages()),
            ("nr_inactive_anon", lru_total(mm, LruList::InactiveAnon)),
            ("nr_active_anon", lru_total(mm, LruList::ActiveAnon)),
            ("nr_inactive_file", lru_total(mm, LruList::InactiveFile)),
            ("nr_active_file", lru_total(mm, LruList::ActiveFile)),
            ("nr_unevictable", lru_total(mm, LruList::Unevictable)),
            ("nr_dirty", mm.wb.nr_dirty),
            ("nr_writeback", mm.wb.nr_writeback),
            ("nr_shmem", mm.nr_shmem()),
            ("workingset_nodes", mm.shadow_nodes.workingset_nodes),
        ];
        for (name, n) in v.iter() {
            vmstat.push((name, n));
            if name == "allocstall_normal" {
                // The pre-4.10 single counter, still what many scripts read.
                vmstat.push(("allocstall", n));
            }
        }
        // THP, compaction and NUMA events (/proc/vmstat names; the `nr_*_allocated`
        // tallies of a program's page tables and slab are not vmstat's).
        vmstat.extend(mm.thp.stat.iter().filter(|(name, _)| !name.starts_with("nr_")));
        let secs = |ns: u64| ns as f64 / 1e9;
        let runtime = secs(now);
        let avg_used = if now > 0 { (self.mem_integral / now as u128) as f64 * reclaimlab_trace::PAGE_SIZE as f64 } else { 0.0 };
        let unlimited = (self.touched_pages * reclaimlab_trace::PAGE_SIZE) as f64;
        let refaults = v.get(Ev::WorkingsetRefaultAnon) + v.get(Ev::WorkingsetRefaultFile);
        let per_s = |x: f64| if runtime > 0.0 { x / runtime } else { 0.0 };
        let mut metrics: Vec<(String, f64)> = vec![
            ("accesses", accesses as f64),
            ("runtime_s", runtime),
            ("baseline_runtime_s", secs(self.baseline_ns)),
            ("slowdown", if self.baseline_ns > 0 { now as f64 / self.baseline_ns as f64 } else { 1.0 }),
            ("mem_used_avg_bytes", avg_used),
            ("mem_used_peak_bytes", (self.mem_peak * reclaimlab_trace::PAGE_SIZE) as f64),
            ("rss_unlimited_bytes", unlimited),
            ("memory_saving", if unlimited > 0.0 { 1.0 - avg_used / unlimited } else { 0.0 }),
            ("memstall_some_pct", per_s(secs(self.memstall_ns)) * 100.0),
            ("memstall_s", secs(self.memstall_ns)),
            ("kswapd_cpu_s", secs(kswapd.iter().map(|k| k.cpu_ns).sum())),
            ("direct_reclaim_s", secs(self.direct_reclaim_ns)),
            ("memcg_reclaim_s", secs(self.memcg_reclaim_ns)),
            ("io_wait_s", secs(self.io_wait_ns)),
            ("io_write_s", secs(mm.io_write_ns)),
            ("dirty_throttle_s", secs(self.dirty_throttle_ns)),
            ("task_cpu_s", secs(now.saturating_sub(self.off_cpu_ns + mm.reclaim_throttle_ns))),
            // The task's sleeps in reclaim_throttle (part of memstall_s and of the direct,
            // memcg or proactive reclaim time).
            ("reclaim_throttle_s", secs(mm.reclaim_throttle_ns)),
            ("major_faults", self.major_faults as f64),
            ("refaults_per_s", per_s(refaults as f64)),
            ("zram_pool_bytes", (mm.swap.zram_pool.len() as u64 * reclaimlab_trace::PAGE_SIZE) as f64),
            ("swap_used_bytes", (mm.swap.used * reclaimlab_trace::PAGE_SIZE) as f64),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        // Allocations served from another migrate type's free lists, and the watermark
        // boosts their claim attempts made (the guest's mm_page_alloc_extfrag; only when some
        // fell back).
        let b = mm.buddy.stats;
        if b.fallback_claims + b.fallback_steals > 0 {
            metrics.push(("extfrag_claims".to_string(), b.fallback_claims as f64));
            metrics.push(("extfrag_steals".to_string(), b.fallback_steals as f64));
            metrics.push(("watermark_boosts".to_string(), b.watermark_boosts as f64));
            metrics.push(("watermark_boosts_first".to_string(), b.watermark_boosts_first as f64));
            metrics.push(("pcp_refills".to_string(), b.pcp_refills as f64));
            metrics.push(("pcp_refill_frames".to_string(), b.pcp_refill_frames as f64));
            metrics.push(("pcp_refills_stealing".to_string(), b.pcp_refills_stealing as f64));
            // Where the free pages are at the end, per migrate type over the zones (the
            // guest's /proc/pagetypeinfo after the workload, `@@freelist end`).
            for (name, mt) in [("unmovable", MigrateType::Unmovable), ("movable", MigrateType::Movable), ("reclaimable", MigrateType::Reclaimable)] {
                let free: u64 =
                    (0..mm.buddy.zones.len()).flat_map(|z| (0..=MAX_PAGE_ORDER).map(move |o| (z, o))).map(|(z, o)| mm.buddy.free_blocks_mt(&mm.lists, z, o, mt) << o).sum();
                let blocks: u64 = mm.buddy.zones.iter().map(|z| z.nr_pageblocks[mt as usize]).sum();
                metrics.push((format!("free_pages_end_{name}"), free as f64));
                metrics.push((format!("pageblocks_end_{name}"), blocks as f64));
            }
        }
        let dma_passes: u64 = kswapd.iter().map(|k| k.dma_passes).sum();
        if dma_passes > 0 {
            metrics.push(("kswapd_dma_passes".to_string(), dma_passes as f64));
        }
        let empty_passes: u64 = kswapd.iter().map(|k| k.empty_passes).sum();
        if empty_passes > 0 {
            metrics.push(("kswapd_empty_passes".to_string(), empty_passes as f64));
        }
        let reclaimed: Vec<u64> = kswapd.iter().flat_map(|k| k.pass_reclaimed.iter().map(|&r| u64::from(r))).collect();
        if !reclaimed.is_empty() {
            let n = reclaimed.len() as f64;
            metrics.push(("kswapd_shrinking_passes".to_string(), n));
            push_spread(&mut metrics, "kswapd_pass_reclaimed", reclaimed, &[("p50", 0.5), ("p90", 0.9)]);
            let prio: i64 = kswapd.iter().map(|k| k.pass_min_priority_sum).sum();
            metrics.push(("kswapd_pass_min_priority_mean".to_string(), prio as f64 / n));
        }
        let window: Vec<u64> = kswapd.iter().flat_map(|k| k.wake_window_pages.iter().copied()).collect();
        if !window.is_empty() {
            metrics.push(("kswapd_wake_windows".to_string(), window.len() as f64));
            metrics.push(("kswapd_wake_windows_stalled".to_string(), kswapd.iter().map(|k| k.wake_windows_stalled).sum::<u64>() as f64));
            push_spread(&mut metrics, "kswapd_wake_window_pages", window, &[("p50", 0.5), ("p90", 0.9), ("max", 1.0)]);
        }
        if mm.memcgs.iter().any(|m| m.reclaim.writes > 0) {
            metrics.push(("proactive_reclaim_s".to_string(), secs(self.proactive_reclaim_ns)));
        }
        for m in mm.memcgs.iter().filter(|m| m.parent.is_some()) {
            let bytes = |pages: u64| (pages * reclaimlab_trace::PAGE_SIZE) as f64;
            let e = &m.events;
            for (k, v) in [
                ("memory.current_bytes", bytes(m.usage)),
                ("memory.peak_bytes", bytes(m.peak)),
                ("memory.events.low", e.low as f64),
                ("memory.events.high", e.high as f64),
                ("memory.events.max", e.max as f64),
                ("memory.events.oom", e.oom as f64),
            ] {
                metrics.push((format!("memcg.{}.{k}", m.name), v));
            }
        }
        // The trace's memory.reclaim writes, per memcg written (the root included).
        for m in mm.memcgs.iter().filter(|m| m.reclaim.writes > 0) {
            let r = &m.reclaim;
            for (k, v) in [
                ("memory.reclaim.writes", r.writes as f64),
                ("memory.reclaim.eagain", r.eagain as f64),
                ("memory.reclaim.requested_bytes", (r.requested * reclaimlab_trace::PAGE_SIZE) as f64),
                ("memory.reclaim.reclaimed_bytes", (r.reclaimed * reclaimlab_trace::PAGE_SIZE) as f64),
            ] {
                metrics.push((format!("memcg.{}.{k}", m.name), v));
            }
        }
        // memory.stat of each cgroup the trace names (one pass over the pages: skipped
        // when there is none).
        let stats = if mm.memcgs.iter().any(|m| m.parent.is_some()) { mm.memory_stats() } else { Vec::new() };
        for (m, stat) in mm.memcgs.iter().zip(stats).filter(|(m, _)| m.parent.is_some()) {
            for (k, v) in stat {
                metrics.push((format!("memcg.{}.{k}", m.name), v as f64));
            }
        }
        let mut columns: Vec<(String, Vec<f64>)> = SERIES.iter().map(|c| c.to_string()).zip(self.series).collect();
        for (m, col) in mm.memcgs.iter().zip(self.memcg_series).filter(|(m, _)| m.parent.is_some()) {
            columns.push((format!("memcg.{}.memory.current_bytes", m.name), col));
        }
        RunResult { policy, vmstat, metrics, timeseries: TimeSeries { columns } }
    }
}

/// `{prefix}_mean` of `values` (not empty), then for each `(name, f)` `{prefix}_{name}`: the
/// value at fraction `f` of them sorted (nearest rank; 1.0 the largest).
fn push_spread(metrics: &mut Vec<(String, f64)>, prefix: &str, mut values: Vec<u64>, at: &[(&str, f64)]) {
    values.sort_unstable();
    metrics.push((format!("{prefix}_mean"), values.iter().sum::<u64>() as f64 / values.len() as f64));
    for &(name, f) in at {
        metrics.push((format!("{prefix}_{name}"), values[((values.len() - 1) as f64 * f).round() as usize] as f64));
    }
}
