//! Memory cgroups (mm/memcontrol.c): usage charged in pages, `memory.max/high/low/min`,
//! effective protection, and the events the kernel counts in `memory.events`.
//!
//! Usage counts LRU pages and the pages behind the slab objects charged to the memcg
//! (`obj_cgroup_charge`: the page cache's xarray nodes and buffer heads). Abstractions:
//! one object stock per memcg where the kernel has one per CPU; the objects take no
//! frames of their own (the kernel's slab pages hold them), and a charge that takes
//! usage over `memory.max` is forced, the next page charge reclaiming the excess.
//!
//! The hierarchy is flat: every configured cgroup is a child of the root, for which
//! the kernel's effective protection (`emin`/`elow`) equals the configured value
//! (`mem_cgroup_calculate_protection` for children of the root). The root has no limit.

use super::vmstat::{Ev, EV_NAMES};

pub type MemcgId = u16;
pub const ROOT_MEMCG: MemcgId = 0;

/// `FLUSH_TIME` (mm/memcontrol.c 6.12: `2UL*HZ`): the period of `flush_memcg_stats_dwork`,
/// the only flush of the statistics reclaim reads. Reclaim itself calls
/// `mem_cgroup_flush_stats_ratelimited`, which flushes only when that worker is a whole
/// period late (`prepare_scan_control`, `workingset_test_recent`), so what reclaim reads
/// through `lruvec_page_state` — list sizes for `inactive_is_low` and the workingset
/// size, WORKINGSET_ACTIVATE_* for the refault snapshot — is up to 2 s old.
pub const FLUSH_TIME_NS: u64 = 2_000_000_000;

#[derive(Clone, Debug, Default)]
pub struct MemcgEvents {
    pub low: u64,
    pub high: u64,
    pub max: u64,
    pub oom: u64,
}

/// What the trace's writes to a memcg's `memory.reclaim` did (the kernel keeps no
/// counter: a writer sees each write's return value, `-EAGAIN` when the loop gave up).
#[derive(Clone, Debug, Default)]
pub struct MemoryReclaimStats {
    /// Writes performed.
    pub writes: u64,
    /// Writes that returned `-EAGAIN` (reclaim made no progress `MAX_RECLAIM_RETRIES + 1`
    /// times in a row before the request was met).
    pub eagain: u64,
    /// Pages requested (`bytes / PAGE_SIZE`, summed).
    pub requested: u64,
    /// Pages the writes' reclaim loops reclaimed (may exceed a request: each round reclaims
    /// at least `SWAP_CLUSTER_MAX`).
    pub reclaimed: u64,
}

#[derive(Clone, Debug)]
pub struct Memcg {
    pub name: String,
    pub parent: Option<MemcgId>,
    /// `memory.current` in pages (LRU pages charged to it).
    pub usage: u64,
    pub peak: u64,
    /// Limits in pages (u64::MAX = max).
    pub max: u64,
    pub high: u64,
    pub low: u64,
    pub min: u64,
    pub events: MemcgEvents,
    /// Its `NR_FILE_DIRTY` and `NR_WRITEBACK` (folios charged to it), which
    /// `mem_cgroup_wb_stats` gives its writeback domain (mm/writeback.rs).
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    /// `nr_dirty` and `nr_writeback` as of the last statistics flush: what
    /// `memcg_page_state` returns to `mem_cgroup_wb_stats` (mm/memcontrol.c 6.12).
    pub stat_nr_dirty: u64,
    pub stat_nr_writeback: u64,
    /// Its `memory.reclaim` writes.
    pub reclaim: MemoryReclaimStats,
    /// Bytes of slab objects charged to it (`NR_SLAB_RECLAIMABLE_B` summed over its
    /// nodes: each object's `obj_full_size`), and the bytes left of the pages charged for
    /// them (`memcg_stock`'s `nr_bytes`): together a whole number of pages within `usage`.
    pub slab_reclaimable_b: u64,
    pub obj_stock_b: u64,
}

impl Memcg {
    pub fn new(name: &str, parent: Option<MemcgId>) -> Self {
        Memcg {
            name: name.into(),
            parent,
            usage: 0,
            peak: 0,
            max: u64::MAX,
            high: u64::MAX,
            low: 0,
            min: 0,
            events: MemcgEvents::default(),
            nr_dirty: 0,
            nr_writeback: 0,
            stat_nr_dirty: 0,
            stat_nr_writeback: 0,
            reclaim: MemoryReclaimStats::default(),
            slab_reclaimable_b: 0,
            obj_stock_b: 0,
        }
    }

    /// `obj_cgroup_charge(objcg, gfp, size)` (mm/memcontrol.c 6.12): take `size` bytes
    /// from the stock (`consume_obj_stock`), else charge the pages the rest needs and keep
    /// what is left of them (`obj_cgroup_charge_pages`, `refill_obj_stock`). Forced: see
    /// the module comment.
    pub fn obj_charge(&mut self, size: u64) {
        if self.obj_stock_b >= size {
            self.obj_stock_b -= size;
        } else {
            let pages = (size - self.obj_stock_b).div_ceil(reclaimlab_trace::PAGE_SIZE);
            self.usage += pages;
            self.peak = self.peak.max(self.usage);
            self.obj_stock_b = self.obj_stock_b + (pages << reclaimlab_trace::PAGE_SHIFT) - size;
        }
        self.slab_reclaimable_b += size;
    }

    /// `obj_cgroup_uncharge` → `refill_obj_stock`: the bytes go back to the stock, which
    /// uncharges its whole pages once it holds more than one.
    pub fn obj_uncharge(&mut self, size: u64) {
        self.slab_reclaimable_b -= size;
        self.obj_stock_b += size;
        if self.obj_stock_b > reclaimlab_trace::PAGE_SIZE {
            self.usage -= self.obj_stock_b >> reclaimlab_trace::PAGE_SHIFT;
            self.obj_stock_b &= reclaimlab_trace::PAGE_SIZE - 1;
        }
    }

    /// The pages of `usage` that back slab objects.
    pub fn kmem_pages(&self) -> u64 {
        (self.slab_reclaimable_b + self.obj_stock_b) >> reclaimlab_trace::PAGE_SHIFT
    }

    /// `mem_cgroup_below_min`: usage within the hard protection.
    pub fn below_min(&self) -> bool {
        self.min > 0 && self.usage <= self.min
    }

    /// `mem_cgroup_below_low`.
    pub fn below_low(&self) -> bool {
        self.low > 0 && self.usage <= self.low
    }
}

/// The per-memcg events memory.stat prints (6.12 `memcg_stat_format`: the
/// WORKINGSET_* items of `memory_stats[]`, then `pgscan`/`pgsteal` — sums over
/// reclaimers — then `memcg_vm_event_stat[]`), in its order, for the ones the model
/// counts. Left out because the model never produces them: `workingset_nodereclaim`,
/// `pgdemote_*`, `pgscan_khugepaged`, `pgsteal_khugepaged`, `pglazyfree(d)`,
/// `swpin_zero`/`swpout_zero`, `zswpin`/`zswpout`/`zswpwb` (zram is a block device, not
/// zswap), `thp_*`, the NUMA balancing events. 6.12 has no per-memcg `pswpin`/`pswpout`,
/// `pgscan_anon/file`, `pgsteal_anon/file`, `pgrotated` or `nr_dirtied`/`nr_written`.
pub const MEMORY_STAT_EVENTS: &[Ev] = &[
    Ev::WorkingsetRefaultAnon,
    Ev::WorkingsetRefaultFile,
    Ev::WorkingsetActivateAnon,
    Ev::WorkingsetActivateFile,
    Ev::WorkingsetRestoreAnon,
    Ev::WorkingsetRestoreFile,
    Ev::WorkingsetNodereclaim,
    Ev::PgscanKswapd,
    Ev::PgscanDirect,
    Ev::PgstealKswapd,
    Ev::PgstealDirect,
    Ev::Pgfault,
    Ev::Pgmajfault,
    Ev::Pgrefill,
    Ev::Pgactivate,
    Ev::Pgdeactivate,
];

impl super::Mm {
    /// `memory.stat` of every memcg (by id) as 6.12 prints it (mm/memcontrol.c
    /// `memcg_stat_format`), for the keys the model gives: the page-state items in bytes —
    /// `anon` (NR_ANON_MAPPED), `file` (NR_FILE_PAGES; no swap cache in the model),
    /// `file_mapped`, `file_dirty`, `file_writeback`, the LRU lists — then the events
    /// ([`MEMORY_STAT_EVENTS`]) with `pgscan` and `pgsteal` after the WORKINGSET_* ones.
    /// The page states are counted from the pages in one pass (report time only).
    pub fn memory_stats(&self) -> Vec<Vec<(&'static str, u64)>> {
        use super::lruvec::LruList;
        use super::page::{is_resident, pg};
        // anon, file, file_mapped, file_dirty, file_writeback per memcg, in pages.
        let mut st = vec![[0u64; 5]; self.memcgs.len()];
        for &pfn in &self.pages.pte {
            if !is_resident(pfn) {
                continue;
            }
            let (f, s) = (self.frames.flags(pfn), &mut st[self.frames.memcg(pfn) as usize]);
            if f & pg::SWAPBACKED != 0 {
                s[0] += u64::from(f & pg::MAPPED != 0);
            } else {
                s[1] += 1;
                s[2] += u64::from(f & pg::MAPPED != 0);
                s[3] += u64::from(f & pg::DIRTY != 0);
                s[4] += u64::from(f & pg::WRITEBACK != 0);
            }
        }
        let page = reclaimlab_trace::PAGE_SIZE;
        (0..self.memcgs.len())
            .map(|memcg| {
                let lru = |l: LruList| (0..self.nr_nodes() as u16).map(|n| self.lruvecs[self.lruvec_id(memcg as MemcgId, n) as usize].lru_size[l as usize]).sum::<u64>() * page;
                let s = st[memcg];
                let mut out = vec![
                    ("anon", s[0] * page),
                    ("file", s[1] * page),
                    ("file_mapped", s[2] * page),
                    ("file_dirty", s[3] * page),
                    ("file_writeback", s[4] * page),
                    ("inactive_anon", lru(LruList::InactiveAnon)),
                    ("active_anon", lru(LruList::ActiveAnon)),
                    ("inactive_file", lru(LruList::InactiveFile)),
                    ("active_file", lru(LruList::ActiveFile)),
                    ("unevictable", lru(LruList::Unevictable)),
                    ("slab_reclaimable", self.memcgs[memcg].slab_reclaimable_b),
                ];
                let ev = &self.memcg_vmstats[memcg];
                for &e in MEMORY_STAT_EVENTS {
                    if e == Ev::PgscanKswapd {
                        out.push(("pgscan", ev.get(Ev::PgscanKswapd) + ev.get(Ev::PgscanDirect)));
                        out.push(("pgsteal", ev.get(Ev::PgstealKswapd) + ev.get(Ev::PgstealDirect)));
                    }
                    out.push((EV_NAMES[e as usize], ev.get(e)));
                }
                out
            })
            .collect()
    }
}

/// Bytes (from the config) to pages, keeping "max".
pub fn bytes_to_pages(b: u64) -> u64 {
    if b == u64::MAX {
        u64::MAX
    } else {
        b >> reclaimlab_trace::PAGE_SHIFT
    }
}

/// `apply_proportional_protection` inside `get_scan_count` (spec A.6): scale the list
/// size by the unprotected share of the cgroup, floor `SWAP_CLUSTER_MAX`.
/// `use_low` is `!sc->memcg_low_reclaim && low > min`.
pub fn protected_scan_size(lruvec_size: u64, usage: u64, min: u64, low: u64, memcg_low_reclaim: bool) -> (u64, bool) {
    if min == 0 && low == 0 {
        return (lruvec_size, false);
    }
    let (protection, low_skipped) = if !memcg_low_reclaim && low > min { (low, true) } else { (min, false) };
    let cgroup_size = usage.max(protection);
    let scan = lruvec_size - (lruvec_size as u128 * protection as u128 / (cgroup_size as u128 + 1)) as u64;
    (scan.max(crate::vmscan::SWAP_CLUSTER_MAX), low_skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn proportional_protection() {
        // 1000-page list, cgroup of 4000 pages protected by 3000 (low): scan 1000 - 1000*3000/4001 = 251
        assert_eq!(protected_scan_size(1000, 4000, 0, 3000, false), (251, true));
        // in low reclaim only min counts: 1000 - 1000*1000/4001 = 751
        assert_eq!(protected_scan_size(1000, 4000, 1000, 3000, true), (751, false));
        // fully protected: floor at SWAP_CLUSTER_MAX
        assert_eq!(protected_scan_size(1000, 2000, 5000, 0, false).0, 32);
        assert_eq!(protected_scan_size(1000, 4000, 0, 0, false), (1000, false));
    }
}
