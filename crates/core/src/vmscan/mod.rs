//! The reclaim machinery shared by all policies (mm/vmscan.c v6.15, spec A.4, A.7):
//! `scan_control`, eviction (`shrink_folio_list`), the memcg walk with protection
//! (`shrink_node_memcgs`), and the three reclaim drivers — kswapd (`balance_pgdat`,
//! stepped on its own clock), direct reclaim (`do_try_to_free_pages`) and memcg limit
//! reclaim (`try_to_free_mem_cgroup_pages`).

mod direct;
mod kswapd;
mod memcgs;
pub(crate) mod reclaim_compaction;
mod shrink_folio_list;
pub mod throttle;

pub use direct::{try_to_free_mem_cgroup_pages, try_to_free_mem_cgroup_pages_opts, try_to_free_pages, try_to_free_pages_order, ReclaimOptions};
pub use kswapd::Kswapd;
pub use memcgs::{shrink_node_memcgs, shrink_node_memcgs_from};
pub use shrink_folio_list::{shrink_folio_list, ReclaimStat};

use crate::mm::memcontrol::MemcgId;
use crate::mm::page_alloc::ZONE_MOVABLE;
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;

pub const SWAP_CLUSTER_MAX: u64 = 32;
pub const DEF_PRIORITY: i32 = 12;
pub const MAX_RECLAIM_RETRIES: u32 = 16;
pub const MAX_SWAPPINESS: u64 = 200;
pub const DEACTIVATE_ANON: u8 = 1;
pub const DEACTIVATE_FILE: u8 = 2;

/// Who is reclaiming: selects the vmstat counters (`reclaimer_offset`) and whose
/// clock pays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reclaimer {
    Kswapd,
    /// Global direct reclaim by the allocating task.
    Direct,
    /// memcg limit reclaim (`cgroup_reclaim(sc)`): no global pgscan/pgsteal events.
    Memcg,
}

/// `enum folio_references`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FolioReferences {
    Reclaim,
    ReclaimClean,
    Keep,
    Activate,
}

/// `scan_control.nr`: what `shrink_folio_list` met during one `shrink_node`, read by its
/// dirty/writeback feedback (flusher wake-up, PGDAT_DIRTY/PGDAT_WRITEBACK, throttling).
#[derive(Clone, Copy, Debug, Default)]
pub struct ScanNr {
    pub dirty: u64,
    pub unqueued_dirty: u64,
    pub congested: u64,
    pub writeback: u64,
    pub immediate: u64,
    pub file_taken: u64,
    pub taken: u64,
}

/// `struct scan_control` (the fields the model uses).
#[derive(Clone, Debug)]
pub struct ScanControl {
    pub nr_to_reclaim: u64,
    pub priority: i32,
    pub target_memcg: Option<MemcgId>,
    pub reclaimer: Reclaimer,
    pub may_writepage: bool,
    pub may_unmap: bool,
    pub may_swap: bool,
    pub may_deactivate: u8,
    pub force_deactivate: bool,
    pub skipped_deactivate: bool,
    pub memcg_low_reclaim: bool,
    pub memcg_low_skipped: bool,
    pub cache_trim_mode: bool,
    pub cache_trim_mode_failed: bool,
    pub no_cache_trim_mode: bool,
    pub file_is_tiny: bool,
    pub anon_cost: u64,
    pub file_cost: u64,
    pub order: u8,
    /// `sc->reclaim_idx`: the highest zone (`enum zone_type` index) reclaim may take
    /// folios from; [`ZONE_MOVABLE`] (every zone) but in kswapd's passes for a lower zone.
    pub reclaim_idx: u8,
    /// `sc->compaction_ready`: a costly-order reclaim skipped a node ready for compaction.
    pub compaction_ready: bool,
    pub nr_scanned: u64,
    pub nr_reclaimed: u64,
    /// Simulated CPU time this reclaim spent (ns), charged to the reclaimer's clock.
    pub cost_ns: u64,
    /// `shrink_folio_list(..., ignore_references)`: `reclaim_pages` (DAMOS pageout).
    pub ignore_references: bool,
    pub nr: ScanNr,
    /// Time the reclaimer slept in `reclaim_throttle` (ns): on its clock, not CPU
    /// (vmscan/throttle.rs).
    pub throttle_ns: u64,
    /// `sc->proactive`: a `memory.reclaim` write (MEMCG_RECLAIM_PROACTIVE).
    pub proactive: bool,
    /// `sc->proactive_swappiness`: its `swappiness=` (read through [`sc_swappiness`]).
    pub proactive_swappiness: Option<u32>,
    /// kswapd's: the `cost_ns` at which its step lets the workload, which runs beside it,
    /// catch up at the next batch boundary (`u64::MAX`: never; vmscan/kswapd.rs).
    pub preempt_at_ns: u64,
    /// Set by a policy whose `shrink_node` stopped at such a boundary: the next
    /// [`shrink_node`] goes on where it stopped.
    pub preempted: bool,
    /// [`shrink_node`]'s `nr_reclaimed` on entry, kept while the call is preempted.
    shrink_node_reclaimed: u64,
}

impl ScanControl {
    pub fn new(reclaimer: Reclaimer, nr_to_reclaim: u64) -> Self {
        ScanControl {
            nr_to_reclaim,
            priority: DEF_PRIORITY,
            target_memcg: None,
            reclaimer,
            may_writepage: true,
            may_unmap: true,
            may_swap: true,
            may_deactivate: 0,
            force_deactivate: false,
            skipped_deactivate: false,
            memcg_low_reclaim: false,
            memcg_low_skipped: false,
            cache_trim_mode: false,
            cache_trim_mode_failed: false,
            no_cache_trim_mode: false,
            file_is_tiny: false,
            anon_cost: 0,
            file_cost: 0,
            order: 0,
            reclaim_idx: ZONE_MOVABLE,
            compaction_ready: false,
            nr_scanned: 0,
            nr_reclaimed: 0,
            cost_ns: 0,
            ignore_references: false,
            nr: ScanNr::default(),
            throttle_ns: 0,
            proactive: false,
            proactive_swappiness: None,
            preempt_at_ns: u64::MAX,
            preempted: false,
            shrink_node_reclaimed: 0,
        }
    }

    /// `cgroup_reclaim(sc)`.
    #[inline]
    pub fn cgroup_reclaim(&self) -> bool {
        self.target_memcg.is_some()
    }

    /// `PGSCAN_KSWAPD + reclaimer_offset()`: kswapd's or a task's (global direct or
    /// memcg reclaim: the memcg's memory.stat counts the latter as `pgscan_direct`).
    #[inline]
    pub fn pgscan_item(&self) -> Ev {
        if self.is_kswapd() {
            Ev::PgscanKswapd
        } else {
            Ev::PgscanDirect
        }
    }

    /// `PGSTEAL_KSWAPD + reclaimer_offset()`.
    #[inline]
    pub fn pgsteal_item(&self) -> Ev {
        if self.is_kswapd() {
            Ev::PgstealKswapd
        } else {
            Ev::PgstealDirect
        }
    }

    /// `current_is_kswapd()`.
    #[inline]
    pub fn is_kswapd(&self) -> bool {
        self.reclaimer == Reclaimer::Kswapd
    }

    /// `root_reclaim(sc)`: global reclaim, or memcg reclaim targeting the root memcg
    /// (a write to the root's `memory.reclaim`).
    #[inline]
    pub fn root_reclaim(&self) -> bool {
        !matches!(self.target_memcg, Some(m) if m != crate::mm::memcontrol::ROOT_MEMCG)
    }

    /// Whether the reclaimer has an MGLRU `lru_gen_mm_walk` while it evicts, which makes
    /// `lru_gen_look_around` update generations itself instead of `folio_activate`:
    /// kswapd's (`pgdat->mm_walk`) and proactive reclaim's (`set_mm_walk(pgdat,
    /// sc->proactive)` / `set_mm_walk(NULL, sc->proactive)`, mm/vmscan.c v6.12).
    #[inline]
    pub fn has_mm_walk(&self) -> bool {
        self.is_kswapd() || self.proactive
    }
}

/// `sc_swappiness` (mm/vmscan.c v6.12): a `memory.reclaim` write's `swappiness=`, else
/// `mem_cgroup_swappiness`, which on cgroup v2 is `vm.swappiness` for every memcg.
#[inline]
pub fn sc_swappiness(mm: &Mm, sc: &ScanControl) -> u32 {
    match sc.proactive_swappiness {
        Some(s) if sc.proactive => s,
        _ => mm.cfg.swappiness,
    }
}

/// The common epilogue around a policy's `shrink_node` (mm/vmscan.c `shrink_node`):
/// the congestion flags and a task's `reclaim_throttle(VMSCAN_THROTTLE_CONGESTED)`
/// (vmscan/throttle.rs); a node where anything was reclaimed resets `kswapd_failures`; a
/// fruitless pass in cache-trim mode marks `cache_trim_mode_failed`.
///
/// A call that stopped to let the workload run (`sc.preempted`, kswapd's) returns
/// before the epilogue; the next call goes on with it (same `sc.nr`, same `before`).
pub fn shrink_node<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, node: u16, sc: &mut ScanControl) {
    let before = if std::mem::take(&mut sc.preempted) {
        sc.shrink_node_reclaimed
    } else {
        sc.nr = ScanNr::default();
        sc.nr_reclaimed
    };
    p.shrink_node(mm, node, sc);
    if sc.preempted {
        sc.shrink_node_reclaimed = before;
        return;
    }
    // mm/vmscan.c 6.12: "Tag a node/memcg as congested if all the dirty pages were marked
    // for writeback and immediate reclaim" (cgroup v2: writeback_throttling_sane), then
    // stall a task's reclaim while its target lruvec is tagged. MGLRU's root reclaim
    // returns before this in the kernel; it never counts nr.dirty, so it tags nothing here.
    let target = mm.lruvec_id(sc.target_memcg.unwrap_or(crate::mm::memcontrol::ROOT_MEMCG), node) as usize;
    if sc.nr.dirty != 0 && sc.nr.dirty == sc.nr.congested {
        if sc.cgroup_reclaim() {
            mm.lruvecs[target].cgroup_congested = true;
        }
        if sc.is_kswapd() {
            mm.lruvecs[target].node_congested = true;
        }
    }
    if !sc.is_kswapd() && (mm.lruvecs[target].cgroup_congested || mm.lruvecs[target].node_congested) {
        throttle::throttle_task(mm, p, node, throttle::Throttle::Congested, sc);
    }
    if sc.nr_reclaimed > before {
        mm.nodes[node as usize].kswapd_failures = 0;
    } else if sc.cache_trim_mode {
        sc.cache_trim_mode_failed = true;
    }
}

/// `snapshot_refaults`: remember WORKINGSET_ACTIVATE_* of the target lruvec so the
/// next `prepare_scan_control` sees whether new refaults activated pages.
pub fn snapshot_refaults(mm: &mut Mm, target: Option<MemcgId>, node: u16) {
    let lv = mm.lruvec_id(target.unwrap_or(crate::mm::memcontrol::ROOT_MEMCG), node) as usize;
    let l = &mut mm.lruvecs[lv];
    l.refaults = l.stat.workingset_activate;
}
