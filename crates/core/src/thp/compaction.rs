//! Memory compaction (mm/compaction.c, v4.20 structure; proactive compaction as in v5.9).
//!
//! - `compact_zone`: the migrate scanner walks pageblocks up from the zone start
//!   (`isolate_migratepages` → `isolate_migratepages_block`, up to `COMPACT_CLUSTER_MAX`
//!   LRU pages), the free scanner walks pageblocks down from the zone end
//!   (`isolate_freepages` → `isolate_freepages_block`), `migrate_pages` moves each isolated
//!   page to an isolated free page ([`super::migrate`]); the run ends when a free block of
//!   the requested order exists (`__compact_finished`) or the scanners meet (`COMPLETE` /
//!   `PARTIAL_SKIPPED`). Positions persist in `compact_cached_*_pfn`; pageblocks where
//!   nothing could be isolated get their skip bit (`update_pageblock_skip`).
//! - Modes: `MIGRATE_ASYNC` scans only MOVABLE source pageblocks (`suitable_migration_source`)
//!   and, when a page of an order-aligned block cannot be migrated, skips the rest of the
//!   block; `MIGRATE_SYNC_LIGHT`/`MIGRATE_SYNC` scan every source block.
//!   `COMPACT_PRIO_SYNC_FULL` ignores the skip hints (`ignore_skip_hint`).
//! - Suitability: `__compaction_suitable` (allocation watermark already met → `SUCCESS`;
//!   free pages below `low_wmark + compact_gap(order)` → `SKIPPED`) and, for costly orders,
//!   the fragmentation index against `vm.extfrag_threshold` (`NOT_SUITABLE_ZONE`, reported
//!   as `SKIPPED`).
//! - Deferral: `defer_compaction` / `compaction_deferred` / `compaction_defer_reset` with
//!   `compact_considered`, `compact_defer_shift` (≤ `COMPACT_MAX_DEFER_SHIFT` = 6) and
//!   `compact_order_failed`.
//! - Skip hints ([`SkipHints`], per THP policy's kernel): when the scanners set
//!   `PB_migrate_skip` and when `__reset_isolation_suitable` clears it — only when kswapd
//!   goes to sleep (`kswapd_try_to_sleep` → `reset_isolation_suitable`, [`super::kcompactd`])
//!   and when compaction restarts after a deferral (`compaction_restarting` in
//!   `compact_zone`), in every kernel modelled.
//! - `try_to_compact_pages`: every zone of the allocation's zonelist, deferred zones skipped
//!   unless `COMPACT_PRIO_SYNC_FULL`, stop at the first `SUCCESS`, defer a zone after a
//!   failed synchronous run.
//! - Proactive compaction (v5.9 `fragmentation_score_*`, `vm.compaction_proactiveness`).
//!
//! Abstractions (docs/thp.md): isolated pages stay linked on their LRU list while they are
//! isolated (migration is immediate, nothing else runs in between), and keep their LRU
//! position when migrated; no lock contention aborts (`COMPACT_CONTENDED` only when the free
//! scanner runs dry); dirty or writeback pages migrate like clean ones; no compaction
//! capture; no per-CPU list draining.

use super::migrate::migrate_folio;
use super::{Tc, ZoneCompact};
use crate::mm::page::pg;
use crate::mm::page_alloc::{MigrateType, Pfn, MAX_PAGE_ORDER, NR_PAGE_ORDERS, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER, WMARK_MIN};
use crate::mm::Mm;

/// `COMPACT_MAX_DEFER_SHIFT`.
pub const COMPACT_MAX_DEFER_SHIFT: u32 = 6;
/// `COMPACT_CLUSTER_MAX` (= `SWAP_CLUSTER_MAX`).
pub const COMPACT_CLUSTER_MAX: usize = 32;
/// `COMPACTION_HPAGE_ORDER`.
pub const COMPACTION_HPAGE_ORDER: u8 = 9;

/// `enum compact_result`, in the kernel's order (callers compare with `<=`/`max`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CompactResult {
    NotSuitableZone,
    Skipped,
    Deferred,
    NoSuitablePage,
    Continue,
    Complete,
    PartialSkipped,
    Contended,
    Success,
}

/// `enum compact_priority` (lower value = more effort).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CompactPriority {
    SyncFull = 0,
    SyncLight = 1,
    Async = 2,
}
pub const MIN_COMPACT_PRIORITY: CompactPriority = CompactPriority::SyncFull;
pub const DEF_COMPACT_PRIORITY: CompactPriority = CompactPriority::SyncLight;
pub const INIT_COMPACT_PRIORITY: CompactPriority = CompactPriority::Async;

/// `enum migrate_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrateMode {
    Async,
    SyncLight,
    Sync,
}

/// The pageblock skip-hint rules of a kernel (`ThpPolicy::skip_hints`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipHints {
    /// v4.20 (mm/compaction.c): a scanner marks a pageblock it scanned to the end without
    /// isolating anything (`update_pageblock_skip`), never under `ignore_skip_hint`.
    /// `__reset_isolation_suitable` clears every bit but those of THP pageblocks
    /// (`pageblock_skip_persistent`); kswapd calls it only if a direct compaction's
    /// scanners met since (`compact_blockskip_flush`), `compaction_restarting` always.
    V4_20,
    /// Mel Gorman's v5.1 compaction series, unchanged in 6.12 (mm/compaction.c): the
    /// migrate scanner marks a pageblock as soon as it isolates from it (`test_and_set_skip`,
    /// e380bebe4771 "keep migration source private to a single compaction instance") and
    /// checks the bit only at a pageblock's start; the free scanner marks every pageblock
    /// it scans to the end (`isolate_freepages`); both also under `ignore_skip_hint` (only
    /// `no_set_skip_hint` stops them). `__reset_isolation_suitable` returns at once unless
    /// `compact_blockskip_flush` is set — for a restart too — and then clears only
    /// pageblocks where a sample of every 8th page finds an LRU or a free page
    /// (`__reset_isolation_pfn`, e332f741a8dd "be selective about what pageblocks to clear
    /// skip hints"), restarting the scanners at the first such pageblocks. `compact_zone`
    /// starts a `whole_zone` run (proactive, `COMPACT_PRIO_SYNC_FULL`) at the zone's ends.
    V5_1,
}

/// The skip-hint rules of the machine's THP policy (v4.20's without one).
#[inline]
pub fn skip_hints(mm: &Mm) -> SkipHints {
    mm.thp.policy.map_or(SkipHints::V4_20, |p| p.skip_hints())
}

/// Who runs compaction (selects the kcompactd counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compactor {
    Direct,
    Kcompactd,
    Proactive,
}

/// Costs on the simulated clock.
#[derive(Clone, Copy, Debug)]
pub struct CompactCosts {
    /// Per pfn examined by either scanner.
    pub scan_ns: u64,
    /// Per page migrated (unmap, copy 4 KiB, remap).
    pub migrate_ns: u64,
}

/// `struct compact_control`.
pub struct CompactControl {
    pub zone: usize,
    /// Requested order; `None` = the whole zone (`order == -1`: proactive, `compact_node`).
    pub order: Option<u8>,
    pub mode: MigrateMode,
    pub ignore_skip_hint: bool,
    pub whole_zone: bool,
    /// The kernel's skip-hint rules (from the THP policy).
    pub skip_hints: SkipHints,
    pub who: Compactor,
    /// Watermark of the allocation (`cc->alloc_flags & ALLOC_WMARK_MASK`).
    pub alloc_wmark: usize,
    pub migrate_pfn: Pfn,
    pub free_pfn: Pfn,
    pub migratepages: Vec<Pfn>,
    pub freepages: Vec<Pfn>,
    pub total_migrate_scanned: u64,
    pub total_free_scanned: u64,
    pub nr_migrated: u64,
    pub cost_ns: u64,
    /// `vm.extfrag_threshold`.
    pub extfrag_threshold: i32,
    /// `vm.compaction_proactiveness` (proactive runs).
    pub proactiveness: u32,
    pub costs: CompactCosts,
}

impl CompactControl {
    pub fn new(zone: usize, order: Option<u8>, mode: MigrateMode, who: Compactor, mm: &Mm) -> Self {
        let t = &mm.cfg.thp;
        CompactControl {
            zone,
            order,
            mode,
            ignore_skip_hint: false,
            whole_zone: false,
            skip_hints: skip_hints(mm),
            who,
            alloc_wmark: WMARK_MIN,
            migrate_pfn: 0,
            free_pfn: 0,
            migratepages: Vec::with_capacity(COMPACT_CLUSTER_MAX),
            freepages: Vec::with_capacity(COMPACT_CLUSTER_MAX),
            total_migrate_scanned: 0,
            total_free_scanned: 0,
            nr_migrated: 0,
            cost_ns: 0,
            extfrag_threshold: t.extfrag_threshold as i32,
            proactiveness: t.compaction_proactiveness,
            costs: CompactCosts { scan_ns: t.compact_scan_ns, migrate_ns: t.migrate_page_ns },
        }
    }
}

/// `pageblock_start_pfn`.
#[inline]
pub fn pageblock_start(pfn: Pfn) -> Pfn {
    pfn & !(PAGEBLOCK_NR_PAGES - 1)
}

/// `compact_gap(order)`: free pages compaction needs as migration targets.
#[inline]
pub fn compact_gap(order: u8) -> u64 {
    2u64 << order
}

/// `struct contig_page_info` from `fill_contig_page_info` (mm/vmstat.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContigPageInfo {
    pub free_pages: u64,
    pub free_blocks_total: u64,
    pub free_blocks_suitable: u64,
}

pub fn fill_contig_page_info(nr_free: &[u64; NR_PAGE_ORDERS], suitable_order: u8) -> ContigPageInfo {
    let mut info = ContigPageInfo { free_pages: 0, free_blocks_total: 0, free_blocks_suitable: 0 };
    for (order, &blocks) in nr_free.iter().enumerate() {
        info.free_blocks_total += blocks;
        info.free_pages += blocks << order;
        if order as u8 >= suitable_order {
            info.free_blocks_suitable += blocks << (order as u8 - suitable_order);
        }
    }
    info
}

/// `__fragmentation_index` (mm/vmstat.c): −1000 if the request could succeed; towards 0
/// a failure is for lack of memory, towards 1000 for fragmentation.
pub fn fragmentation_index(nr_free: &[u64; NR_PAGE_ORDERS], order: u8) -> i32 {
    let info = fill_contig_page_info(nr_free, order);
    let requested = 1u64 << order;
    if info.free_blocks_total == 0 {
        return 0;
    }
    if info.free_blocks_suitable != 0 {
        return -1000;
    }
    1000 - ((1000 + info.free_pages * 1000 / requested) / info.free_blocks_total) as i32
}

/// `extfrag_for_order`: percentage of free memory not in blocks of ≥ `order`.
pub fn extfrag_for_order(nr_free: &[u64; NR_PAGE_ORDERS], order: u8) -> u64 {
    let info = fill_contig_page_info(nr_free, order);
    if info.free_pages == 0 {
        return 0;
    }
    (info.free_pages - (info.free_blocks_suitable << order)) * 100 / info.free_pages
}

/// `compaction_suitable` (v4.20): `SUCCESS` if the allocation's watermark is met at
/// `order`; `SKIPPED` if free pages are below `low_wmark + compact_gap(order)` (costly
/// orders; `min` otherwise), or, for costly orders, the fragmentation index is in
/// `0..=extfrag_threshold` (lack of memory, not fragmentation); `CONTINUE` otherwise.
pub fn compaction_suitable(mm: &Mm, zone: usize, order: Option<u8>, alloc_wmark: usize, extfrag_threshold: i32) -> CompactResult {
    let Some(order) = order else { return CompactResult::Continue };
    let z = &mm.buddy.zones[zone];
    // wmark_pages(), low_wmark_pages(), min_wmark_pages(): boost included (spec A.5).
    if mm.buddy.zone_watermark_ok(zone, order, z.wmark_pages(alloc_wmark)) {
        return CompactResult::Success;
    }
    let mark = if order > super::gfp::PAGE_ALLOC_COSTLY_ORDER { z.low_wmark_pages() } else { z.min_wmark_pages() };
    if !mm.buddy.zone_watermark_ok(zone, 0, mark + compact_gap(order)) {
        return CompactResult::Skipped;
    }
    if order > super::gfp::PAGE_ALLOC_COSTLY_ORDER {
        let fragindex = fragmentation_index(&mm.buddy.nr_free_by_order(zone), order);
        if (0..=extfrag_threshold).contains(&fragindex) {
            // COMPACT_NOT_SUITABLE_ZONE is reported as COMPACT_SKIPPED.
            return CompactResult::Skipped;
        }
    }
    CompactResult::Continue
}

/// `defer_compaction`.
pub fn defer_compaction(zc: &mut ZoneCompact, order: u8) {
    zc.considered = 0;
    zc.defer_shift = (zc.defer_shift + 1).min(COMPACT_MAX_DEFER_SHIFT);
    if (order as i32) < zc.order_failed {
        zc.order_failed = order as i32;
    }
}

/// `compaction_deferred`: true while fewer than 2^defer_shift attempts were considered.
pub fn compaction_deferred(zc: &mut ZoneCompact, order: u8) -> bool {
    let defer_limit = 1u32 << zc.defer_shift;
    if (order as i32) < zc.order_failed {
        return false;
    }
    zc.considered += 1;
    if zc.considered >= defer_limit {
        zc.considered = defer_limit;
        return false;
    }
    true
}

/// `compaction_defer_reset`: after a success (`alloc_success`: the allocation got its page).
/// With `alloc_success` it also does what its one caller of that kind,
/// `__alloc_pages_direct_compact`, does beside it (v4.20 and 6.12): `zone->
/// compact_blockskip_flush = false`, since the zone just produced a page.
pub fn compaction_defer_reset(zc: &mut ZoneCompact, order: u8, alloc_success: bool) {
    if alloc_success {
        zc.blockskip_flush = false;
        zc.considered = 0;
        zc.defer_shift = 0;
    }
    if order as i32 >= zc.order_failed {
        zc.order_failed = order as i32 + 1;
    }
}

/// `compaction_restarting`: the maximum deferral ran out.
pub fn compaction_restarting(zc: &ZoneCompact, order: u8) -> bool {
    if (order as i32) < zc.order_failed {
        return false;
    }
    zc.defer_shift == COMPACT_MAX_DEFER_SHIFT && zc.considered >= 1 << zc.defer_shift
}

/// `reset_cached_positions`.
fn reset_cached_positions(mm: &mut Mm, zone: usize) {
    let (start, end) = (mm.buddy.zones[zone].start_pfn, mm.buddy.zones[zone].end_pfn());
    let zc = &mut mm.thp.zones[zone];
    zc.cached_migrate_pfn = [start; 2];
    zc.cached_free_pfn = pageblock_start(end - 1);
}

/// `reset_isolation_suitable(pgdat)`: what kswapd does for the node's zones when it goes
/// to sleep. v4.20 calls `__reset_isolation_suitable` only for a zone with
/// `compact_blockskip_flush`; v5.1+ calls it for every zone and it checks the flag itself.
pub fn reset_isolation_suitable(mm: &mut Mm, node: u16) {
    for i in 0..mm.nodes[node as usize].zones.len() {
        let z = mm.nodes[node as usize].zones[i];
        if mm.thp.zones[z].blockskip_flush {
            __reset_isolation_suitable(mm, z);
        }
    }
}

/// `__reset_isolation_suitable` ([`SkipHints`]): v4.20 clears the zone's skip bits but those
/// of THP pageblocks and resets the cached positions; v5.1+ does nothing unless
/// `compact_blockskip_flush` is set, then clears selectively.
pub fn __reset_isolation_suitable(mm: &mut Mm, zone: usize) {
    let (start, end) = (mm.buddy.zones[zone].start_pfn, mm.buddy.zones[zone].end_pfn());
    match skip_hints(mm) {
        SkipHints::V4_20 => {
            mm.thp.zones[zone].blockskip_flush = false;
            for pb in (start >> PAGEBLOCK_ORDER)..=((end - 1) >> PAGEBLOCK_ORDER) {
                if !mm.thp.huge[pb as usize] {
                    mm.thp.skip[pb as usize] = false;
                }
            }
            reset_cached_positions(mm, zone);
        }
        SkipHints::V5_1 => {
            // "Only flush if a full compaction finished recently"
            if !mm.thp.zones[zone].blockskip_flush {
                return;
            }
            mm.thp.zones[zone].blockskip_flush = false;
            let (mut migrate_pfn, mut free_pfn) = (start, end - 1);
            let (mut reset_migrate, mut reset_free) = (free_pfn, migrate_pfn);
            let (mut source_set, mut free_set) = (false, false);
            while migrate_pfn < free_pfn {
                if reset_isolation_pfn(mm, zone, migrate_pfn, true, source_set) && migrate_pfn < reset_migrate {
                    source_set = true;
                    reset_migrate = migrate_pfn;
                    mm.thp.zones[zone].cached_migrate_pfn = [reset_migrate; 2];
                }
                if reset_isolation_pfn(mm, zone, free_pfn, free_set, true) && free_pfn > reset_free {
                    free_set = true;
                    reset_free = free_pfn;
                    mm.thp.zones[zone].cached_free_pfn = reset_free;
                }
                migrate_pfn += PAGEBLOCK_NR_PAGES;
                free_pfn = free_pfn.saturating_sub(PAGEBLOCK_NR_PAGES);
            }
            // "Leave no distance if no suitable block was reset"
            if reset_migrate >= reset_free {
                let zc = &mut mm.thp.zones[zone];
                zc.cached_migrate_pfn = [migrate_pfn; 2];
                zc.cached_free_pfn = free_pfn;
            }
        }
    }
}

/// `__reset_isolation_pfn` (v5.1+): clear the skip bit of `pfn`'s pageblock if a sample of
/// every `1 << PAGE_ALLOC_COSTLY_ORDER`th page finds an LRU page (`check_source`) or a
/// free page (`check_target`; a non-movable pageblock is no first target). A THP's
/// pageblock keeps its bit (`pageblock_skip_persistent`). Returns whether the pageblock is
/// a restart point.
fn reset_isolation_pfn(mm: &mut Mm, zone: usize, pfn: Pfn, check_source: bool, check_target: bool) -> bool {
    let pb = (pfn >> PAGEBLOCK_ORDER) as usize;
    if mm.thp.huge[pb] {
        return false;
    }
    if check_source && check_target && !mm.thp.skip[pb] {
        return true;
    }
    let (zstart, zend) = (mm.buddy.zones[zone].start_pfn, mm.buddy.zones[zone].end_pfn());
    let block = pageblock_start(pfn).max(zstart);
    if !check_source && check_target && mm.buddy.pageblock_migratetype(block) != MigrateType::Movable {
        return false;
    }
    let last = (pageblock_start(pfn) + PAGEBLOCK_NR_PAGES - 1).min(zend - 1);
    let mut p = block;
    while p <= last {
        if (check_source && mm.frames.flags(p) & pg::LRU != 0) || (check_target && mm.buddy.buddy_order(&mm.frames.owner, p).is_some()) {
            mm.thp.skip[pb] = false;
            return true;
        }
        p += 1 << super::gfp::PAGE_ALLOC_COSTLY_ORDER;
    }
    false
}

#[inline]
fn scanners_met(cc: &CompactControl) -> bool {
    (cc.free_pfn >> PAGEBLOCK_ORDER) <= (cc.migrate_pfn >> PAGEBLOCK_ORDER)
}

#[inline]
fn isolation_suitable(mm: &Mm, cc: &CompactControl, pfn: Pfn) -> bool {
    cc.ignore_skip_hint || !mm.thp.skip[(pfn >> PAGEBLOCK_ORDER) as usize]
}

/// `update_pageblock_skip` at the end of a fully scanned pageblock: v4.20 marks it if
/// nothing was isolated and the skip hints are not ignored; v5.1+ marks a migration
/// source that yielded nothing and every free-scanner pageblock, `ignore_skip_hint` or
/// not (mm/compaction.c 6.12: `isolate_migratepages_block`'s end, `isolate_freepages`).
fn update_pageblock_skip(mm: &mut Mm, cc: &CompactControl, pfn: Pfn, nr_isolated: usize, migrate_scanner: bool) {
    let mark = match cc.skip_hints {
        SkipHints::V4_20 => !cc.ignore_skip_hint && nr_isolated == 0,
        SkipHints::V5_1 => !migrate_scanner || nr_isolated == 0,
    };
    if !mark {
        return;
    }
    mm.thp.skip[(pfn >> PAGEBLOCK_ORDER) as usize] = true;
    let zc = &mut mm.thp.zones[cc.zone];
    if migrate_scanner {
        zc.cached_migrate_pfn[0] = zc.cached_migrate_pfn[0].max(pfn);
        if cc.mode != MigrateMode::Async {
            zc.cached_migrate_pfn[1] = zc.cached_migrate_pfn[1].max(pfn);
        }
    } else if pfn < zc.cached_free_pfn {
        zc.cached_free_pfn = pfn;
    }
}

/// `fragmentation_score_zone` (v5.9: weighted by the zone's share of its node).
pub fn fragmentation_score_zone(mm: &Mm, zone: usize) -> u64 {
    let z = &mm.buddy.zones[zone];
    let node_pages: u64 = mm.nodes[z.node as usize].zones.iter().map(|&i| mm.buddy.zones[i].managed_pages).sum();
    z.managed_pages * extfrag_for_order(&mm.buddy.nr_free_by_order(zone), COMPACTION_HPAGE_ORDER) / (node_pages + 1)
}

/// `fragmentation_score_node`.
pub fn fragmentation_score_node(mm: &Mm, node: u16) -> u64 {
    mm.nodes[node as usize].zones.iter().map(|&z| fragmentation_score_zone(mm, z)).sum()
}

/// `fragmentation_score_wmark(low)`.
pub fn fragmentation_score_wmark(proactiveness: u32, low: bool) -> u64 {
    let wmark_low = 100u64.saturating_sub(proactiveness as u64).max(5);
    if low {
        wmark_low
    } else {
        (wmark_low + 10).min(100)
    }
}

/// `__compact_finished`.
fn compact_finished(mm: &mut Mm, cc: &CompactControl) -> CompactResult {
    if scanners_met(cc) {
        reset_cached_positions(mm, cc.zone);
        if cc.who == Compactor::Direct {
            mm.thp.zones[cc.zone].blockskip_flush = true;
        }
        return if cc.whole_zone { CompactResult::Complete } else { CompactResult::PartialSkipped };
    }
    if cc.who == Compactor::Proactive {
        let score = fragmentation_score_zone(mm, cc.zone);
        return if score > fragmentation_score_wmark(cc.proactiveness, true) { CompactResult::Continue } else { CompactResult::Success };
    }
    let Some(order) = cc.order else { return CompactResult::Continue };
    // Direct compactor: is a suitable page free?
    for o in order..=MAX_PAGE_ORDER {
        if !mm.buddy.free_list_empty(&mm.lists, cc.zone, o, MigrateType::Movable) {
            return CompactResult::Success;
        }
        if mm.buddy.has_claimable_fallback(&mm.lists, cc.zone, o, MigrateType::Movable) && (cc.mode == MigrateMode::Async || cc.migrate_pfn % PAGEBLOCK_NR_PAGES == 0) {
            return CompactResult::Success;
        }
    }
    CompactResult::Continue
}

/// A frame the migrate scanner can isolate: on an LRU (of a policy whose
/// `folio_isolate_lru` works), not part of a THP.
#[inline]
fn migratable(mm: &Mm, pfn: Pfn) -> bool {
    let f = mm.frames.flags(pfn);
    f & pg::LRU != 0 && f & pg::COMPOUND == 0 && mm.lru_folios_migratable
}

/// `isolate_migratepages_block`: returns where the scan stopped.
fn isolate_migratepages_block(mm: &mut Mm, cc: &mut CompactControl, mut low_pfn: Pfn, end_pfn: Pfn) -> Pfn {
    let mut nr_scanned = 0u64;
    let mut nr_isolated = 0usize;
    // v5.1+ `test_and_set_skip`: a scan that starts at the pageblock's start (`valid_page`)
    // marks it at its first isolation, so no other compaction scans it until a reset.
    let block = pageblock_start(low_pfn);
    let valid_page = low_pfn == block || low_pfn == mm.buddy.zones[cc.zone].start_pfn;
    let mut claim = cc.skip_hints == SkipHints::V5_1 && !cc.ignore_skip_hint && valid_page;
    while low_pfn < end_pfn {
        nr_scanned += 1;
        if let Some(o) = mm.buddy.buddy_order(&mm.frames.owner, low_pfn) {
            low_pfn += 1 << o;
            continue;
        }
        if mm.frames.test(low_pfn, pg::COMPOUND) {
            // PageCompound: skip the whole compound page.
            low_pfn = (low_pfn | (super::HPAGE_PMD_NR - 1)) + 1;
            continue;
        }
        if migratable(mm, low_pfn) {
            if std::mem::take(&mut claim) {
                mm.thp.skip[(block >> PAGEBLOCK_ORDER) as usize] = true;
            }
            cc.migratepages.push(low_pfn);
            nr_isolated += 1;
            if cc.migratepages.len() == COMPACT_CLUSTER_MAX {
                low_pfn += 1;
                break;
            }
        }
        low_pfn += 1;
    }
    cc.total_migrate_scanned += nr_scanned;
    // v5.1+ marks at the end only a pageblock whose scan began at its start (`valid_page`).
    let may_mark = cc.skip_hints == SkipHints::V4_20 || valid_page;
    end_block_scan(mm, cc, low_pfn, end_pfn, nr_scanned, nr_isolated, true, may_mark)
}

/// The common end of both scanners' block scans: clamp the stop pfn to the block, set the
/// skip bit of a fully scanned block that yielded nothing, charge the scan, count
/// `compact_isolated`. Returns the stop pfn.
#[allow(clippy::too_many_arguments)]
fn end_block_scan(mm: &mut Mm, cc: &mut CompactControl, pfn: Pfn, end_pfn: Pfn, nr_scanned: u64, nr_isolated: usize, migrate_scanner: bool, may_mark: bool) -> Pfn {
    let pfn = pfn.min(end_pfn);
    if pfn == end_pfn && may_mark {
        update_pageblock_skip(mm, cc, pageblock_start(end_pfn - 1), nr_isolated, migrate_scanner);
    }
    cc.cost_ns += nr_scanned * cc.costs.scan_ns;
    mm.thp.stat.count(Tc::CompactIsolated, nr_isolated as u64);
    pfn
}

/// `isolate_migratepages`: the first suitable pageblock from `migrate_pfn` with
/// something to isolate. Returns whether pages were isolated.
fn isolate_migratepages(mm: &mut Mm, cc: &mut CompactControl) -> bool {
    let zstart = mm.buddy.zones[cc.zone].start_pfn;
    let mut low_pfn = cc.migrate_pfn;
    let mut block_end = pageblock_start(low_pfn) + PAGEBLOCK_NR_PAGES;
    while block_end <= cc.free_pfn {
        let block_start = pageblock_start(low_pfn).max(zstart);
        let suitable_source = cc.mode != MigrateMode::Async || cc.who != Compactor::Direct || mm.buddy.pageblock_migratetype(block_start) == MigrateType::Movable;
        // v5.1+: "Only check the pageblock once" — at its start; the rest of a pageblock
        // this compaction marked itself is still scanned.
        let check_skip = cc.skip_hints == SkipHints::V4_20 || low_pfn == block_start;
        if (!check_skip || isolation_suitable(mm, cc, block_start)) && suitable_source {
            // Either pages were isolated and migration proceeds, or compact_zone decides
            // whether to go on.
            low_pfn = isolate_migratepages_block(mm, cc, low_pfn, block_end);
            cc.migrate_pfn = low_pfn;
            return !cc.migratepages.is_empty();
        }
        low_pfn = block_end;
        block_end += PAGEBLOCK_NR_PAGES;
    }
    cc.migrate_pfn = low_pfn;
    !cc.migratepages.is_empty()
}

/// `suitable_migration_target`: not a free block of ≥ pageblock order, and a MOVABLE
/// pageblock.
fn suitable_migration_target(mm: &Mm, pfn: Pfn) -> bool {
    if let Some(o) = mm.buddy.buddy_order(&mm.frames.owner, pfn) {
        if o >= PAGEBLOCK_ORDER {
            return false;
        }
    }
    mm.buddy.pageblock_migratetype(pfn) == MigrateType::Movable
}

/// `isolate_freepages_block` (non-strict): returns where the scan stopped.
fn isolate_freepages_block(mm: &mut Mm, cc: &mut CompactControl, mut pfn: Pfn, end_pfn: Pfn) -> Pfn {
    let mut nr_scanned = 0u64;
    let mut total_isolated = 0usize;
    while pfn < end_pfn {
        nr_scanned += 1;
        let Some(order) = mm.buddy.buddy_order(&mm.frames.owner, pfn) else {
            pfn += 1;
            continue;
        };
        // __isolate_free_page's watermark check: min + (1 << order) at order 0, with or
        // without the boost depending on the kernel (the THP policy's).
        let z = &mm.buddy.zones[cc.zone];
        let min = mm.thp.policy.map_or(z.min_wmark_pages(), |p| p.isolate_free_page_min_wmark(z));
        if !mm.buddy.zone_watermark_ok(cc.zone, 0, min + (1u64 << order)) {
            break;
        }
        mm.buddy.isolate_free_block(&mut mm.lists, &mut mm.frames.owner, pfn);
        let n = 1u32 << order;
        cc.freepages.extend(pfn..pfn + n);
        total_isolated += n as usize;
        pfn += n;
        if cc.migratepages.len() <= cc.freepages.len() {
            break;
        }
    }
    cc.total_free_scanned += nr_scanned;
    end_block_scan(mm, cc, pfn, end_pfn, nr_scanned, total_isolated, false, true)
}

/// `isolate_freepages`: pageblocks from `free_pfn` down to the migrate scanner's block.
fn isolate_freepages(mm: &mut Mm, cc: &mut CompactControl) {
    let zend = mm.buddy.zones[cc.zone].end_pfn();
    let mut isolate_start = cc.free_pfn;
    let mut block_start = pageblock_start(cc.free_pfn);
    let low_pfn = pageblock_start(cc.migrate_pfn) + PAGEBLOCK_NR_PAGES;
    loop {
        if block_start < low_pfn {
            break;
        }
        let block_end = (block_start + PAGEBLOCK_NR_PAGES).min(zend);
        if suitable_migration_target(mm, block_start) && isolation_suitable(mm, cc, block_start) {
            let stopped = isolate_freepages_block(mm, cc, isolate_start.max(block_start), block_end);
            isolate_start = stopped;
            if cc.freepages.len() >= cc.migratepages.len() {
                if isolate_start >= block_end {
                    isolate_start = block_start.saturating_sub(PAGEBLOCK_NR_PAGES);
                }
                break;
            } else if isolate_start < block_end {
                break;
            }
        }
        if block_start < PAGEBLOCK_NR_PAGES {
            isolate_start = 0;
            break;
        }
        block_start -= PAGEBLOCK_NR_PAGES;
        isolate_start = block_start;
    }
    cc.free_pfn = isolate_start;
}

/// `migrate_pages` with `compaction_alloc`: move each isolated page to an isolated free
/// page. Returns false on `-ENOMEM` (the free scanner found nothing more).
fn migrate_pages(mm: &mut Mm, cc: &mut CompactControl) -> bool {
    let mut ok = true;
    let mut i = 0;
    while i < cc.migratepages.len() {
        if cc.freepages.is_empty() {
            isolate_freepages(mm, cc);
        }
        let Some(dst) = cc.freepages.pop() else {
            ok = false;
            break;
        };
        migrate_folio(mm, cc.migratepages[i], dst);
        cc.nr_migrated += 1;
        cc.cost_ns += cc.costs.migrate_ns;
        mm.thp.stat.count(Tc::PgmigrateSuccess, 1);
        i += 1;
    }
    // Migrated pages are gone; the rest are put back (they never left their LRU).
    cc.migratepages.clear();
    ok
}

/// `compact_zone`.
pub fn compact_zone(mm: &mut Mm, cc: &mut CompactControl) -> CompactResult {
    let zone = cc.zone;
    let (start, end) = (mm.buddy.zones[zone].start_pfn, mm.buddy.zones[zone].end_pfn());
    let sync = (cc.mode != MigrateMode::Async) as usize;
    if cc.who != Compactor::Proactive {
        let ret = compaction_suitable(mm, zone, cc.order, cc.alloc_wmark, cc.extfrag_threshold);
        if ret == CompactResult::Success || ret == CompactResult::Skipped {
            return ret;
        }
    }
    if let Some(order) = cc.order {
        // "Clear pageblock skip if there were failures recently and compaction is about to
        // be retried after being deferred." (v5.1+: only after a flush was asked for.)
        if compaction_restarting(&mm.thp.zones[zone], order) {
            __reset_isolation_suitable(mm, zone);
        }
    }
    let zc = &mut mm.thp.zones[zone];
    if cc.whole_zone && cc.skip_hints == SkipHints::V5_1 {
        cc.migrate_pfn = start;
        cc.free_pfn = pageblock_start(end - 1);
    } else {
        cc.migrate_pfn = zc.cached_migrate_pfn[sync];
        cc.free_pfn = zc.cached_free_pfn;
        if cc.free_pfn < start || cc.free_pfn >= end {
            cc.free_pfn = pageblock_start(end - 1);
            zc.cached_free_pfn = cc.free_pfn;
        }
        if cc.migrate_pfn < start || cc.migrate_pfn >= end {
            cc.migrate_pfn = start;
            zc.cached_migrate_pfn = [start; 2];
        }
        if cc.migrate_pfn == start {
            cc.whole_zone = true;
        }
    }
    let mut ret;
    // The pageblock of the last isolation (`last_migrated_pfn`, 0 in the kernel for none).
    let mut last_migrated_pfn: Option<Pfn> = None;
    loop {
        ret = compact_finished(mm, cc);
        if ret != CompactResult::Continue {
            break;
        }
        if isolate_migratepages(mm, cc) {
            last_migrated_pfn = Some(start.max(pageblock_start(cc.migrate_pfn - 1)));
            // migrate_pages() -ENOMEM before the scanners met: COMPACT_CONTENDED.
            if !migrate_pages(mm, cc) && !scanners_met(cc) {
                ret = CompactResult::Contended;
                break;
            }
        }
        // check_drain: the migrated pages' frames went to this CPU's list; once the
        // migration scanner leaves their cc->order block, drain them so they merge.
        if let (Some(order), Some(last)) = (cc.order, last_migrated_pfn) {
            if order > 0 && last < cc.migrate_pfn & !((1u32 << order) - 1) {
                mm.drain_local_pages(zone); // lru_add_drain_cpu_zone
                last_migrated_pfn = None;
            }
        }
    }
    // Release free pages; the free scanner restarts from the highest one released.
    if let Some(&max_free) = cc.freepages.iter().max() {
        for &p in &cc.freepages {
            mm.buddy.free(&mut mm.lists, &mut mm.frames.owner, p, 0);
        }
        cc.freepages.clear();
        let free_pfn = pageblock_start(max_free);
        let zc = &mut mm.thp.zones[zone];
        if free_pfn > zc.cached_free_pfn {
            zc.cached_free_pfn = free_pfn;
        }
    }
    let (m, f) = if cc.who == Compactor::Direct { (Tc::CompactMigrateScanned, Tc::CompactFreeScanned) } else { (Tc::CompactDaemonMigrateScanned, Tc::CompactDaemonFreeScanned) };
    // The daemon's scans also count in the global scanner counters (count_compact_events).
    mm.thp.stat.count(Tc::CompactMigrateScanned, cc.total_migrate_scanned);
    mm.thp.stat.count(Tc::CompactFreeScanned, cc.total_free_scanned);
    if m != Tc::CompactMigrateScanned {
        mm.thp.stat.count(m, cc.total_migrate_scanned);
        mm.thp.stat.count(f, cc.total_free_scanned);
    }
    ret
}

/// `try_to_compact_pages` over `zones` (the zonelist, preferred first) at `prio`.
/// Returns the best result and the CPU time spent.
pub fn try_to_compact_pages(mm: &mut Mm, zones: &[usize], order: u8, prio: CompactPriority, alloc_wmark: usize) -> (CompactResult, u64) {
    let mut rc = CompactResult::Skipped;
    let mut cost = 0;
    for &zone in zones {
        if prio > MIN_COMPACT_PRIORITY && compaction_deferred(&mut mm.thp.zones[zone], order) {
            rc = rc.max(CompactResult::Deferred);
            continue;
        }
        let mode = if prio == CompactPriority::Async { MigrateMode::Async } else { MigrateMode::SyncLight };
        let mut cc = CompactControl::new(zone, Some(order), mode, Compactor::Direct, mm);
        cc.ignore_skip_hint = prio == MIN_COMPACT_PRIORITY;
        // v5.1+ `.whole_zone = (prio == MIN_COMPACT_PRIORITY)`.
        cc.whole_zone = prio == MIN_COMPACT_PRIORITY && cc.skip_hints == SkipHints::V5_1;
        cc.alloc_wmark = alloc_wmark;
        let status = compact_zone(mm, &mut cc);
        cost += cc.cost_ns;
        rc = rc.max(status);
        if status == CompactResult::Success {
            compaction_defer_reset(&mut mm.thp.zones[zone], order, false);
            break;
        }
        if prio != CompactPriority::Async && (status == CompactResult::Complete || status == CompactResult::PartialSkipped) {
            defer_compaction(&mut mm.thp.zones[zone], order);
        }
    }
    (rc, cost)
}

/// Whole-zone synchronous compaction run by kcompactd for `order` (`kcompactd_do_work`),
/// or proactively (`proactive_compact_node`, `order == None`). Returns CPU time.
pub fn kcompactd_compact_zone(mm: &mut Mm, zone: usize, order: Option<u8>) -> u64 {
    match order {
        Some(order) => {
            if compaction_deferred(&mut mm.thp.zones[zone], order) {
                return 0;
            }
            let th = mm.cfg.thp.extfrag_threshold as i32;
            if compaction_suitable(mm, zone, Some(order), WMARK_MIN, th) != CompactResult::Continue {
                return 0;
            }
            let mut cc = CompactControl::new(zone, Some(order), MigrateMode::SyncLight, Compactor::Kcompactd, mm);
            cc.ignore_skip_hint = false;
            let status = compact_zone(mm, &mut cc);
            if status == CompactResult::Success {
                compaction_defer_reset(&mut mm.thp.zones[zone], order, false);
            } else if status == CompactResult::PartialSkipped || status == CompactResult::Complete {
                // "Buddy pages may become stranded on pcps that could otherwise coalesce
                // on the zone's free area for order >= cc.order."
                mm.drain_all_pages(Some(zone));
                defer_compaction(&mut mm.thp.zones[zone], order);
            }
            cc.cost_ns
        }
        None => {
            let mut cc = CompactControl::new(zone, None, MigrateMode::SyncLight, Compactor::Proactive, mm);
            cc.ignore_skip_hint = true;
            cc.whole_zone = true;
            compact_zone(mm, &mut cc);
            cc.cost_ns
        }
    }
}
