//! Transparent huge pages, memory compaction and NUMA placement (docs/thp.md).
//!
//! What lives here, by kernel source file:
//! - [`gfp`]: the gfp bits a THP fault uses and the `transparent_hugepage` sysfs modes;
//! - [`compaction`]: mm/compaction.c — the two scanners, `compact_zone`, suitability,
//!   deferral, `try_to_compact_pages`, the proactive fragmentation score;
//! - [`kcompactd`]: kcompactd per node, and what runs beside each kswapd step;
//! - [`migrate`]: mm/migrate.c — moving one page to a new frame (owner, PTE, LRU slot);
//! - [`split`]: `split_huge_page` and the deferred split queue (mm/huge_memory.c);
//! - [`policy`]: the THP allocation policies as named variants (`thp@4.20-rc4`,
//!   `thp+gfp-thisnode-v1`, `thp@5.4`, `thp@5.5`): gfp mask, node selection, the costly-order
//!   `__GFP_NORETRY` rule of `__alloc_pages_slowpath`;
//! - [`numa`]: `zone_statistics` (numa_hit/miss/foreign/local/other);
//!
//! The fault paths that allocate THPs are the machine's own (sim/huge_memory.rs,
//! sim/alloc.rs), and so is khugepaged, which walks the program's page tables
//! (sim/khugepaged.rs, mm/khugepaged.c). Seed 003's `thpscale` and
//! `usemem-stress-numa-compact` are workloads (scenario/thp.rs).
//!
//! The state the rest of the machine must see (counters, per-zone compaction state,
//! pageblock skip bits, the deferred split queue) sits in [`ThpState`] inside `Mm`.

pub mod compaction;
pub mod gfp;
pub mod kcompactd;
pub mod knobs;
pub mod migrate;
pub mod numa;
pub mod policy;
pub mod split;

use crate::mm::page_alloc::{Pfn, PAGEBLOCK_ORDER};
use crate::mm::Mm;

/// `HPAGE_PMD_ORDER`.
pub const HPAGE_PMD_ORDER: u8 = 9;
/// `HPAGE_PMD_NR`.
pub const HPAGE_PMD_NR: u32 = 1 << HPAGE_PMD_ORDER;

macro_rules! thp_events {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// THP, compaction, migration and NUMA event counters (`/proc/vmstat` names).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(usize)]
        pub enum Tc { $($variant),* }
        pub const TC_NAMES: &[&str] = &[$($name),*];
        pub const NR_TC: usize = TC_NAMES.len();
    };
}

thp_events! {
    ThpFaultAlloc => "thp_fault_alloc",
    ThpFaultFallback => "thp_fault_fallback",
    ThpFaultFallbackCharge => "thp_fault_fallback_charge",
    ThpCollapseAlloc => "thp_collapse_alloc",
    ThpCollapseAllocFailed => "thp_collapse_alloc_failed",
    ThpSplitPage => "thp_split_page",
    ThpSwpout => "thp_swpout",
    ThpSwpoutFallback => "thp_swpout_fallback",
    ThpSplitPageFailed => "thp_split_page_failed",
    ThpDeferredSplitPage => "thp_deferred_split_page",
    ThpSplitPmd => "thp_split_pmd",
    CompactMigrateScanned => "compact_migrate_scanned",
    CompactFreeScanned => "compact_free_scanned",
    CompactIsolated => "compact_isolated",
    CompactStall => "compact_stall",
    CompactFail => "compact_fail",
    CompactSuccess => "compact_success",
    CompactDaemonWake => "compact_daemon_wake",
    CompactDaemonMigrateScanned => "compact_daemon_migrate_scanned",
    CompactDaemonFreeScanned => "compact_daemon_free_scanned",
    PgmigrateSuccess => "pgmigrate_success",
    PgmigrateFail => "pgmigrate_fail",
    NumaHit => "numa_hit",
    NumaMiss => "numa_miss",
    NumaForeign => "numa_foreign",
    NumaInterleave => "numa_interleave",
    NumaLocal => "numa_local",
    NumaOther => "numa_other",
    NrPageTablePages => "nr_page_table_pages_allocated",
    NrSlabReclaimablePages => "nr_slab_reclaimable_allocated",
}

/// Map the THP at `head` over the 512 page ids from `first` (`set_pmd_at` +
/// `folio_add_lru_vma`): every subpage resident in its `PG_compound` frame of `memcg`
/// with `flags`, the head (`PG_head`) on the LRU for the folio of 512 pages (docs/thp.md,
/// "How a THP sits on the LRU"), and the pageblock marked huge. The caller has charged
/// the memcg.
pub fn map_huge<P: crate::policy::ReclaimPolicy>(mm: &mut Mm, policy: &mut P, first: u32, head: Pfn, memcg: u16, flags: u32) {
    use crate::mm::page::pg;
    for i in 0..HPAGE_PMD_NR {
        let (page, pfn) = (first + i, head + i);
        mm.pages.pte[page as usize] = pfn;
        // The accessed bit is the PMD's, kept at the head.
        let young = if i == 0 { flags } else { flags & !pg::YOUNG };
        mm.frames.install(pfn, page, memcg, young | pg::COMPOUND);
    }
    mm.frames.set(head, pg::HEAD);
    mm.thp.huge[(head >> PAGEBLOCK_ORDER) as usize] = true;
    // 6.12 (`__do_huge_pmd_anonymous_page`, `collapse_huge_page`): every new THP is
    // queued for the underused-THP check (`split_underused_thp`).
    split::deferred_split_folio(mm, head, false);
    policy.folio_add_lru(mm, head);
}

/// The counters of [`Tc`].
#[derive(Clone, Debug)]
pub struct ThpStat {
    ev: [u64; NR_TC],
}

impl Default for ThpStat {
    fn default() -> Self {
        ThpStat { ev: [0; NR_TC] }
    }
}

impl ThpStat {
    #[inline(always)]
    pub fn count(&mut self, e: Tc, n: u64) {
        self.ev[e as usize] += n;
    }
    #[inline(always)]
    pub fn get(&self, e: Tc) -> u64 {
        self.ev[e as usize]
    }
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        TC_NAMES.iter().copied().zip(self.ev.iter().copied())
    }
}

/// Per-zone compaction state (`struct zone`'s `compact_*` fields).
#[derive(Clone, Debug)]
pub struct ZoneCompact {
    /// `compact_considered`: allocations considered since the last failure.
    pub considered: u32,
    /// `compact_defer_shift`: skip 2^shift attempts after a failure.
    pub defer_shift: u32,
    /// `compact_order_failed`: lowest order that failed.
    pub order_failed: i32,
    /// `compact_cached_migrate_pfn[async, sync]`.
    pub cached_migrate_pfn: [Pfn; 2],
    /// `compact_cached_free_pfn`.
    pub cached_free_pfn: Pfn,
    /// `compact_blockskip_flush`: the scanners met; clear the skip bits next time.
    pub blockskip_flush: bool,
}

/// THP/compaction/NUMA state kept in `Mm` (so reclaim can split a THP it evicts).
#[derive(Default)]
pub struct ThpState {
    pub stat: ThpStat,
    pub zones: Vec<ZoneCompact>,
    /// `PB_migrate_skip` per pageblock.
    pub skip: Vec<bool>,
    /// Per pageblock: a PMD-mapped THP occupies it (head pfn = the pageblock start).
    pub huge: Vec<bool>,
    /// The deferred split queues, one per memcg.
    pub deferred_split: split::DeferredSplitQueues,
    /// Per pageblock: its THP is partially mapped (`folio_test_partially_mapped`).
    pub split_queued: Vec<bool>,
    /// The THP policy, whose kernel decides the compaction rules that changed between
    /// versions (`ThpPolicy::isolate_free_page_min_wmark`); `None`: v4.20's.
    pub policy: Option<&'static dyn policy::ThpPolicy>,
}

impl ThpState {
    /// Size the per-zone and per-pageblock state for `mm` (called once per machine).
    pub fn init(mm: &mut Mm) {
        let nr_pb = (mm.pfn_end as usize).div_ceil(1 << PAGEBLOCK_ORDER);
        let zones = mm
            .buddy
            .zones
            .iter()
            .map(|z| ZoneCompact {
                considered: 0,
                defer_shift: 0,
                order_failed: 0,
                cached_migrate_pfn: [z.start_pfn; 2],
                cached_free_pfn: compaction::pageblock_start(z.end_pfn().saturating_sub(1)),
                blockskip_flush: false,
            })
            .collect();
        let t = &mut mm.thp;
        t.zones = zones;
        t.skip = vec![false; nr_pb];
        t.huge = vec![false; nr_pb];
        t.split_queued = vec![false; nr_pb];
        t.deferred_split = split::DeferredSplitQueues::new(nr_pb);
    }

    /// Whether the pageblock of `pfn` holds a PMD-mapped (or queued partially mapped) THP.
    #[inline]
    pub fn is_huge(&self, pfn: Pfn) -> bool {
        self.huge.get((pfn >> PAGEBLOCK_ORDER) as usize).copied().unwrap_or(false)
    }
}
