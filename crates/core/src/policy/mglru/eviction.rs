//! Eviction (mm/vmscan.c v6.15, spec C.7, C.9): `lru_gen_shrink_node` (root reclaim
//! over every memcg), `lru_gen_shrink_lruvec` (memcg reclaim), `try_to_shrink_lruvec`,
//! `get_nr_to_scan` / `should_run_aging` (aging is triggered from here), `evict_folios`,
//! `isolate_folios`, `scan_folios`, `sort_folio`, `isolate_folio`, `try_to_inc_min_seq`,
//! `should_abort_scan`, `set_initial_priority`, the MGLRU branch of
//! `folio_check_references`, and kswapd's `lru_gen_age_node` (min_ttl).
//! Root reclaim's `shrink_many` and `shrink_one` walk the memcg LRU (`memcg_lru.rs`).
//! Dirty and writeback folios (v6.15 `sort_folio`, "waiting for writeback"): a dirty
//! file folio or one under writeback moves to `min_seq + 1` with PG_reclaim
//! (`folio_inc_gen(.., true)`), counted in `nr.file_taken`/`nr.unqueued_dirty`;
//! `try_to_shrink_lruvec` wakes the flushers when every file folio taken was unqueued
//! dirty; `folio_end_writeback` rotates it to the oldest generation's tail.

use super::aging::{folio_look_around, prefetch_isolated, try_to_inc_max_seq};
use super::host_time::{self, Path};
use super::lrugen::*;
use super::memcg_lru::{MemcgLruOp, MEMCG_NR_BINS};
use super::pid::reset_ctrl_pos;
use super::{Mglru, MglruVariant};
use crate::mm::lruvec::{LruList, LruvecId};
use crate::mm::memcontrol::ROOT_MEMCG;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::prefetch::prefetch;
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::vmscan::{shrink_folio_list, shrink_node_memcgs, FolioReferences, ScanControl, ScanNr, DEF_PRIORITY};

/// `get_swappiness`: 0 without `may_swap` or with fewer than MIN_LRU_BATCH free slots,
/// else `sc_swappiness` (a `memory.reclaim` write's `swappiness=`, mm/vmscan.c v6.12).
pub fn get_swappiness(mm: &Mm, sc: &ScanControl) -> u32 {
    if !sc.may_swap || mm.swap.nr_swap_pages() < MIN_LRU_BATCH {
        return 0;
    }
    crate::vmscan::sc_swappiness(mm, sc)
}

/// `should_run_aging`: (must or better age, evictable pages in the live generations).
pub fn should_run_aging(g: &LruGen, swappiness: u32) -> (bool, u64) {
    if evictable_min_seq(&g.min_seq, swappiness) + MIN_NR_GENS > g.max_seq {
        return (true, 0);
    }
    let mut size = 0u64;
    for ty in evictable_types(swappiness) {
        for seq in g.min_seq[ty]..=g.max_seq {
            size += g.nr_pages[gen_from_seq(seq)][ty].max(0) as u64;
        }
    }
    (evictable_min_seq(&g.min_seq, swappiness) + MIN_NR_GENS == g.max_seq, size)
}

/// `lruvec_is_sizable`.
fn lruvec_is_sizable(g: &LruGen, swappiness: u32, priority: i32) -> bool {
    let mut total = 0u64;
    for ty in evictable_types(swappiness) {
        for seq in g.min_seq[ty]..=g.max_seq {
            total += g.nr_pages[gen_from_seq(seq)][ty].max(0) as u64;
        }
    }
    total >> priority != 0
}

/// Where a kswapd step that let the workload run at a batch boundary goes on: the
/// position of `lru_gen_shrink_node`'s walk (`shrink_many`'s generation, bins and memcg,
/// `try_to_shrink_lruvec`'s swappiness and pages scanned) and kswapd's `nr_reclaimed`
/// before the call (`reclaimed`, added back at its end).
#[derive(Clone, Copy, Debug)]
pub struct Resume {
    gen: usize,
    bin: usize,
    first_bin: usize,
    lv: LruvecId,
    swappiness: u32,
    scanned: i64,
    reclaimed: u64,
}

/// `scan_folios`' tallies: pages scanned, sorted away (PGREFILL) and isolated, and the
/// folios left of its `MAX_LRU_BATCH` budget (spec C.7: that budget whatever
/// `get_nr_to_scan` asked for, v6.6, v6.12, v6.15; `min(nr_to_scan, MAX_LRU_BATCH)` came
/// after v6.15).
#[derive(Clone, Copy, Debug)]
struct ScanTally {
    scanned: u64,
    sorted: u64,
    isolated: u64,
    remaining: u64,
}

impl Default for ScanTally {
    fn default() -> Self {
        ScanTally { scanned: 0, sorted: 0, isolated: 0, remaining: MAX_LRU_BATCH }
    }
}

impl ScanTally {
    /// The batch ends: its budget spent, or MIN_LRU_BATCH pages isolated.
    #[inline(always)]
    fn done(&self) -> bool {
        self.remaining == 0 || self.isolated >= MIN_LRU_BATCH
    }
}

impl<V: MglruVariant> Mglru<V> {
    /// `get_nr_to_scan`: how many to scan, or −1 to rotate (aged / below min), 0 to stop.
    fn get_nr_to_scan(&mut self, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl, swappiness: u32) -> i64 {
        let memcg = mm.lruvecs[lv as usize].memcg;
        if Some(memcg) != sc.target_memcg && memcg != ROOT_MEMCG && mm.memcgs[memcg as usize].below_min() {
            return -1;
        }
        let g = &mut self.lrugens[lv as usize];
        let (success, nr_to_scan) = V::should_run_aging(g, swappiness);
        if !success || sc.priority == DEF_PRIORITY {
            return (nr_to_scan >> sc.priority) as i64;
        }
        let max_seq = g.max_seq;
        self.stats.aging += 1;
        self.stats.lruvec_aging[lv as usize] += 1;
        let before = sc.cost_ns;
        let aged = host_time::timed(Path::Aging, || try_to_inc_max_seq::<V>(mm, g, lv, max_seq, swappiness, false, sc));
        self.stats.aging_ns += sc.cost_ns - before;
        if aged {
            -1
        } else {
            0
        }
    }

    /// `try_to_shrink_lruvec`: evict in batches until the budget is met or
    /// `should_abort_scan`. Returns whether the lruvec should rotate.
    pub(super) fn try_to_shrink_lruvec(&mut self, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl) -> bool {
        let swappiness = get_swappiness(mm, sc);
        self.try_to_shrink_lruvec_from(mm, lv, sc, swappiness, 0)
    }

    /// `try_to_shrink_lruvec` with `scanned` pages already scanned (a kswapd step going
    /// on). At each batch boundary (`cond_resched()`, mm/vmscan.c 6.12) kswapd, which runs
    /// beside the workload on another CPU, lets the workload catch up once its step has
    /// used the time the workload ran ahead (`sc.preempt_at_ns`): it records where it
    /// stopped ([`Resume`]) and sets `sc.preempted`; the next step goes on from there, so
    /// `should_abort_scan`'s watermark test sees the workload's allocations of the step.
    fn try_to_shrink_lruvec_from(&mut self, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl, swappiness: u32, mut scanned: i64) -> bool {
        let mut nr_to_scan;
        loop {
            nr_to_scan = self.get_nr_to_scan(mm, lv, sc, swappiness);
            if nr_to_scan <= 0 {
                break;
            }
            let delta = host_time::timed(Path::Eviction, || self.evict_folios(mm, lv, sc, swappiness));
            if delta == 0 {
                break;
            }
            scanned += delta as i64;
            if scanned >= nr_to_scan || should_abort_scan::<V>(mm, lv, sc) {
                break;
            }
            if sc.cost_ns >= sc.preempt_at_ns {
                let node = mm.lruvecs[lv as usize].node as usize;
                // shrink_many and lru_gen_shrink_node fill in their part on the way out.
                self.kswapd_resume[node] = Some(Resume { lv, swappiness, scanned, gen: 0, bin: 0, first_bin: 0, reclaimed: 0 });
                sc.preempted = true;
                return false;
            }
        }
        // "If too many file cache in the coldest generation can't be evicted due to being
        // dirty, wake up the flusher" (mm/vmscan.c 6.12; cgroup v2 does not throttle).
        if V::WAKES_FLUSHERS && sc.nr.unqueued_dirty != 0 && sc.nr.unqueued_dirty == sc.nr.file_taken {
            mm.wakeup_flusher_threads(mm.now);
        }
        nr_to_scan < 0
    }

    /// `evict_folios`.
    fn evict_folios(&mut self, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl, swappiness: u32) -> u64 {
        let mut list = std::mem::take(&mut self.isolated);
        let (mut scanned, _ty) = self.isolate_folios(mm, lv, sc, swappiness, &mut list);
        let g = &mut self.lrugens[lv as usize];
        scanned += V::try_to_inc_min_seq(mm, g, swappiness) as u64;
        if evictable_min_seq(&g.min_seq, swappiness) + MIN_NR_GENS > g.max_seq {
            scanned = 0;
        }
        if list.is_empty() {
            self.isolated = list;
            return scanned;
        }
        let mut skip_retry = false;
        prefetch_isolated(mm, &list);
        loop {
            let stat = shrink_folio_list(mm, self, &mut list, sc);
            sc.nr_reclaimed += stat.nr_reclaimed;
            sc.nr.unqueued_dirty += stat.nr_unqueued_dirty;
            // Rejected folios: some get one retry; the rest are put back.
            let g = &self.lrugens[lv as usize];
            let mut clean = Vec::new();
            let mut kept = Vec::with_capacity(list.len());
            for &pfn in list.iter() {
                if V::rejected_folio(mm, g, pfn, skip_retry) {
                    clean.push(pfn);
                } else {
                    kept.push(pfn);
                }
            }
            // move_folios_to_lru
            for &pfn in &kept {
                let g = &mut self.lrugens[lv as usize];
                V::lru_gen_add_folio(mm, g, lv, pfn, false);
            }
            // (pgsteal_* are counted per folio by shrink_folio_list)
            if clean.is_empty() {
                break;
            }
            list.clear();
            list.extend_from_slice(&clean);
            skip_retry = true;
        }
        list.clear();
        self.isolated = list;
        scanned
    }

    /// `isolate_folios`: the type the PID controller picks, then the other.
    fn isolate_folios(&mut self, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl, swappiness: u32, list: &mut Vec<Pfn>) -> (u64, usize) {
        let g = &self.lrugens[lv as usize];
        let (mut ty, mut tier) = V::type_to_scan(g, swappiness);
        let mut last = ty;
        for _ in evictable_types(swappiness) {
            let g = &self.lrugens[lv as usize];
            let tier_idx = tier.take().unwrap_or_else(|| V::get_tier_idx(g, ty));
            last = ty;
            let scanned = self.scan_folios(mm, lv, sc, ty, tier_idx, list);
            if scanned != 0 {
                return (scanned, ty);
            }
            ty = 1 - ty;
        }
        (0, last)
    }

    /// `scan_folios`: from the tail of the oldest generation, zone by zone (the highest
    /// eligible first) when the node has several, sort or isolate up to a batch; pgscan
    /// counts the pages isolated, pgrefill the pages sorted.
    pub(super) fn scan_folios(&mut self, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl, ty: usize, tier: usize, list: &mut Vec<Pfn>) -> u64 {
        let g = &mut self.lrugens[lv as usize];
        if g.nr_gens(ty) == MIN_NR_GENS {
            return 0;
        }
        let node = mm.lruvecs[lv as usize].node;
        let ScanTally { scanned, sorted, isolated, remaining } = if mm.reclaim_skips_zones(node, sc.reclaim_idx) || mm.eligible_zones(node, sc.reclaim_idx).nth(1).is_some() {
            Self::scan_folios_by_zone(mm, g, lv, sc, ty, tier, list)
        } else {
            Self::scan_folios_batch(mm, g, lv, sc, ty, tier, list)
        };
        // mm/vmscan.c 6.12 scan_folios: global events outside cgroup reclaim, the
        // memcg's always.
        let item = sc.pgscan_item();
        if !sc.cgroup_reclaim() {
            mm.vmstat.count(item, isolated);
            mm.vmstat.count(Ev::Pgrefill, sorted);
        }
        let memcg = mm.lruvecs[lv as usize].memcg;
        mm.count_memcg_events(memcg, item, isolated);
        mm.count_memcg_events(memcg, Ev::Pgrefill, sorted);
        mm.vmstat.count(Ev::by_type(Ev::PgscanAnon, ty == LRU_GEN_FILE), isolated);
        if ty == LRU_GEN_FILE {
            sc.nr.file_taken += isolated;
        }
        // "There might not be eligible folios due to reclaim_idx. Check the remaining to
        // prevent livelock if it's not making progress."
        if isolated != 0 || remaining == 0 {
            scanned
        } else {
            0
        }
    }

    /// `scan_folios`' loop over the oldest generation of `ty` on a node with one zone, every
    /// zone eligible: from the tail, sort or isolate up to a batch.
    #[inline(always)]
    fn scan_folios_batch(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, sc: &mut ScanControl, ty: usize, tier: usize, list: &mut Vec<Pfn>) -> ScanTally {
        let head = g.head(gen_from_seq(g.min_seq[ty]), ty);
        let mut t = ScanTally::default();
        while let Some(pfn) = mm.lists.tail(head) {
            // Host-side: the folio before `pfn` is the next tail whether `pfn` is sorted
            // away or isolated; start loading its links and flags now.
            if let Some(next) = mm.lists.prev_of(head, pfn) {
                mm.lists.prefetch_links(next);
                prefetch(&mm.frames.flags, next as usize);
            }
            Self::scan_folio(mm, g, lv, sc, ty, tier, pfn, true, list, &mut t);
            if t.done() {
                break;
            }
        }
        t
    }

    /// `scan_folios` on a node of several zones (mm/vmscan.c 6.12). The kernel keeps a
    /// generation's folios on one list per zone (`lrugen->folios[gen][type][zone]`) and
    /// takes the zones in the order `(sc->reclaim_idx + i) % MAX_NR_ZONES`, i from
    /// MAX_NR_ZONES down: the eligible ones from `reclaim_idx` down to ZONE_DMA, each until
    /// the batch is full, so a lower zone's folios go only when the zones above it gave
    /// fewer than MIN_LRU_BATCH; then the zones above `reclaim_idx` (kswapd balancing a
    /// lower zone), whose folios `sort_folio` moves a generation up as ineligible
    /// (`folio_inc_gen`, to the next generation's tail; counted in PGREFILL). The model's
    /// generation list mixes zones, so it walks it once per eligible zone, highest first,
    /// taking that zone's folios in LRU order (the order of the kernel's list for the
    /// zone), then once for the others. *Abstractions:* the zones above `reclaim_idx` are
    /// walked together in LRU order; where `sort_folio` has the writeback step (v6.6,
    /// v6.15) the kernel tests ineligibility before it, the model after.
    #[cold]
    #[inline(never)]
    fn scan_folios_by_zone(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, sc: &mut ScanControl, ty: usize, tier: usize, list: &mut Vec<Pfn>) -> ScanTally {
        let head = g.head(gen_from_seq(g.min_seq[ty]), ty);
        let node = mm.lruvecs[lv as usize].node;
        let mut t = ScanTally::default();
        // The node's eligible zone indices as a bit mask, taken from reclaim_idx down.
        let eligible = mm.eligible_zones(node, sc.reclaim_idx).fold(0u32, |m, z| m | 1 << mm.zone_idx(z));
        for zone in (0..=sc.reclaim_idx).rev().filter(|&z| eligible & 1 << z != 0) {
            let mut next = mm.lists.tail(head);
            while let Some(pfn) = next {
                next = mm.lists.prev_of(head, pfn);
                if mm.folio_zonenum(pfn) != zone {
                    continue;
                }
                Self::scan_folio(mm, g, lv, sc, ty, tier, pfn, true, list, &mut t);
                if t.done() {
                    return t;
                }
            }
        }
        if !mm.reclaim_skips_zones(node, sc.reclaim_idx) {
            return t;
        }
        let mut next = mm.lists.tail(head);
        while let Some(pfn) = next {
            next = mm.lists.prev_of(head, pfn);
            if mm.folio_zonenum(pfn) <= sc.reclaim_idx {
                continue;
            }
            Self::scan_folio(mm, g, lv, sc, ty, tier, pfn, false, list, &mut t);
            if t.done() {
                return t;
            }
        }
        t
    }

    /// One folio of `scan_folios`: `sort_folio` sorts it away, else it is isolated onto
    /// `list` — or, of a zone above `sc->reclaim_idx` (not `eligible`), moved a generation
    /// up ("ineligible": `folio_inc_gen(lruvec, folio, false)`, `list_move_tail`). The
    /// batch counts pages (`delta = folio_nr_pages`) and folios (`remaining`).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn scan_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, sc: &mut ScanControl, ty: usize, tier: usize, pfn: Pfn, eligible: bool, list: &mut Vec<Pfn>, t: &mut ScanTally) {
        let delta = mm.folio_nr_pages(pfn);
        t.scanned += delta;
        sc.cost_ns += mm.cfg.cost.scan_ns;
        if V::sort_folio(mm, g, lv, pfn, tier, &mut sc.nr) {
            t.sorted += delta;
        } else if !eligible {
            let new_gen = folio_inc_gen(mm, g, lv, pfn, false, LRU_REFS_FLAGS);
            list_move(mm, g, pfn, new_gen, ty, false);
            t.sorted += delta;
        } else {
            V::isolate_folio(mm, g, lv, pfn);
            // Host-side: the owner (page id) is read next by prefetch_isolated.
            prefetch(&mm.frames.owner, pfn as usize);
            list.push(pfn);
            t.isolated += delta;
        }
        t.remaining -= 1;
    }

    /// `shrink_node` with MGLRU: root reclaim (global, or of the root memcg: a write to
    /// its `memory.reclaim`) walks the memcg LRU (`lru_gen_shrink_node` → `shrink_many`);
    /// memcg reclaim goes through
    /// `shrink_node_memcgs` to `lru_gen_shrink_lruvec`, which also rotates a memcg that
    /// aged to the young generation.
    pub(super) fn shrink_node(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl) {
        if !sc.root_reclaim() {
            shrink_node_memcgs(mm, self, node, sc, |s, mm, lv, sc| {
                if s.try_to_shrink_lruvec(mm, lv, sc) {
                    s.memcg_lru.rotate(lv, node, MemcgLruOp::Young);
                }
            });
            return;
        }
        // lru_gen_shrink_node (mm/vmscan.c 6.12, since v6.5's per-node memcg LRU; 6.15 the
        // same): "Unmapped clean folios are already prioritized. Scanning for more of them
        // is likely futile": without `may_writepage` or `may_unmap` — a boosted kswapd
        // pass ("Do not writeback or swap pages for boosted reclaim") — it goes straight to
        // `done`, reclaiming nothing (nor shrinking slab, which `shrink_one` does).
        if !sc.may_writepage || !sc.may_unmap {
            return;
        }
        if self.kswapd_resume.len() <= node as usize {
            self.kswapd_resume.resize(node as usize + 1, None);
        }
        // A kswapd step that let the workload run goes on where it stopped (a task's
        // reclaim in the meantime walks on its own).
        let resume = if sc.is_kswapd() { self.kswapd_resume[node as usize].take() } else { None };
        let reclaimed = match resume {
            Some(r) => r.reclaimed,
            None => {
                set_initial_priority(mm, node, sc, V::MIN_INITIAL_PRIORITY);
                let reclaimed = sc.nr_reclaimed;
                if sc.is_kswapd() {
                    sc.nr_reclaimed = 0;
                }
                reclaimed
            }
        };
        self.shrink_many(mm, node, sc, resume);
        if sc.preempted {
            self.kswapd_resume[node as usize].as_mut().expect("set by try_to_shrink_lruvec").reclaimed = reclaimed;
            return;
        }
        if sc.is_kswapd() {
            sc.nr_reclaimed += reclaimed;
        }
    }

    /// `shrink_many`: from a random bin of the old generation, each memcg in turn
    /// (`shrink_one`), applying its memcg-LRU operation once the walk has moved past it;
    /// stop when `should_abort_scan`, else try the other bins. With `resume`, a kswapd
    /// step going on at the memcg and bin where it let the workload run.
    fn shrink_many(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl, mut resume: Option<Resume>) {
        let (mut gen, first_bin) = match resume {
            Some(r) => (r.gen, r.first_bin),
            None => (self.memcg_lru.old_gen(node), self.memcg_lru.random_bin()),
        };
        let mut bin = resume.map_or(first_bin, |r| r.bin);
        loop {
            if V::SHRINK_MANY_REREADS_GEN && resume.is_none() {
                gen = self.memcg_lru.old_gen(node);
            }
            let mut going_on = resume.take();
            let mut next = going_on.map(|r| r.lv).or_else(|| self.memcg_lru.bin(node, gen, bin).first().copied());
            let mut pending = None;
            let mut aborted = false;
            while let Some(lv) = next {
                if let Some((p, op)) = pending.take() {
                    self.memcg_lru.rotate(p, node, op);
                }
                let op = match going_on.take() {
                    Some(r) => self.shrink_one_from(mm, lv, sc, r.swappiness, r.scanned),
                    None => self.shrink_one(mm, lv, sc),
                };
                if sc.preempted {
                    let r = self.kswapd_resume[node as usize].as_mut().expect("set by try_to_shrink_lruvec");
                    (r.gen, r.bin, r.first_bin) = (gen, bin, first_bin);
                    return;
                }
                pending = (op != MemcgLruOp::Nop).then_some((lv, op));
                if should_abort_scan::<V>(mm, lv, sc) {
                    aborted = true;
                    break;
                }
                let list = self.memcg_lru.bin(node, gen, bin);
                next = list.iter().position(|&x| x == lv).and_then(|i| list.get(i + 1).copied());
            }
            if let Some((p, op)) = pending {
                self.memcg_lru.rotate(p, node, op);
            }
            if aborted {
                return;
            }
            bin = (bin + 1) % MEMCG_NR_BINS;
            if bin == first_bin {
                return;
            }
        }
    }

    /// `shrink_one`: the memcg-LRU skips (`V::shrink_one_skip`), `try_to_shrink_lruvec`,
    /// `shrink_slab` (mm/vmscan.c 6.12; 6.6 the same), then the operation for the memcg
    /// (`V::shrink_one_op`).
    fn shrink_one(&mut self, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl) -> MemcgLruOp {
        self.stats.lruvec_shrink_one[lv as usize] += 1;
        let memcg = mm.lruvecs[lv as usize].memcg;
        let seg = self.memcg_lru.seg_of(lv);
        let m = &mm.memcgs[memcg as usize];
        let (below_min, below_low) = if memcg == ROOT_MEMCG { (false, false) } else { (m.below_min(), m.below_low()) };
        let swappiness = get_swappiness(mm, sc);
        let sizable = lruvec_is_sizable(&self.lrugens[lv as usize], swappiness, sc.priority);
        if let Some(op) = V::shrink_one_skip(sizable, seg, below_min, below_low) {
            return op;
        }
        if below_low {
            mm.memcgs[memcg as usize].events.low += 1;
        }
        self.shrink_one_from(mm, lv, sc, swappiness, 0)
    }

    /// `shrink_one` from `try_to_shrink_lruvec` on, with `scanned` pages already scanned
    /// (a kswapd step going on): nothing after it while the step lets the workload run.
    fn shrink_one_from(&mut self, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl, swappiness: u32, scanned: i64) -> MemcgLruOp {
        let seg = self.memcg_lru.seg_of(lv);
        let success = self.try_to_shrink_lruvec_from(mm, lv, sc, swappiness, scanned);
        if sc.preempted {
            return MemcgLruOp::Nop;
        }
        let memcg = mm.lruvecs[lv as usize].memcg;
        crate::mm::shrinker::shrink_slab(mm, self, mm.lruvecs[lv as usize].node, memcg, sc.priority);
        let sizable = lruvec_is_sizable(&self.lrugens[lv as usize], get_swappiness(mm, sc), sc.priority);
        V::shrink_one_op(success, sizable, seg)
    }

    /// kswapd's `lru_gen_age_node` (v6.7+): only the min_ttl check; if every memcg's
    /// generation `V::min_ttl_seq` is younger than min_ttl, invoke the OOM killer.
    pub(super) fn age_node(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl) {
        set_initial_priority(mm, node, sc, V::MIN_INITIAL_PRIORITY);
        let min_ttl_ns = mm.cfg.lru_gen_min_ttl_ms * 1_000_000;
        if min_ttl_ns == 0 {
            return;
        }
        let swappiness = get_swappiness(mm, sc);
        let reclaimable = (0..mm.memcgs.len() as u16).any(|memcg| {
            let g = &self.lrugens[mm.lruvec_id(memcg, node) as usize];
            let m = &mm.memcgs[memcg as usize];
            !(memcg != ROOT_MEMCG && m.below_min())
                && lruvec_is_sizable(g, swappiness, sc.priority)
                && g.timestamps[gen_from_seq(V::min_ttl_seq(g, swappiness))] + min_ttl_ns < mm.now
        });
        if !reclaimable {
            mm.oom = Some(format!("lru_gen.min_ttl_ms={}: every generation on node {node} is younger than min_ttl (working set protection)", mm.cfg.lru_gen_min_ttl_ms));
        }
    }
}

/// The MGLRU branch of `folio_check_references` (v6.14+, spec C.6): no young PTE →
/// reclaim; else the two-strike rule (`lru_gen_set_refs`), the PTE checked through
/// look-around.
pub fn check_references<V: MglruVariant>(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, sc: &mut ScanControl) -> FolioReferences {
    if !mm.folio_mapped(pfn) {
        return FolioReferences::Reclaim;
    }
    sc.cost_ns += mm.cfg.cost.rmap_ns;
    let walk = sc.has_mm_walk();
    if !folio_look_around::<V>(mm, g, lv, pfn, walk, sc) {
        return FolioReferences::Reclaim;
    }
    if lru_gen_set_refs(mm, pfn) {
        FolioReferences::Activate
    } else {
        FolioReferences::Keep
    }
}

/// `evict_folios`' rejected folios (v6.14+): clean, unmapped, inactive ones get one
/// retry; the rest must not land in the oldest generation again (PG_active).
pub fn rejected_folio(mm: &mut Mm, g: &LruGen, pfn: Pfn, skip_retry: bool) -> bool {
    let f = mm.frames.flags(pfn);
    if !skip_retry && f & (pg::ACTIVE | pg::DIRTY | pg::WRITEBACK) == 0 && !mm.folio_mapped(pfn) {
        return true;
    }
    let t = folio_type(mm, pfn);
    if lru_gen_folio_seq(mm, g, pfn, false) == g.min_seq[t] {
        mm.frames.clear(pfn, LRU_REFS_FLAGS);
        mm.frames.set(pfn, pg::ACTIVE);
    }
    false
}

/// `sort_folio`: true = not for reclaim now (moved to another generation or list).
pub fn sort_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, tier_idx: usize, nr: &mut ScanNr) -> bool {
    let gen = folio_lru_gen(mm, pfn).expect("on an MGLRU list");
    let ty = folio_type(mm, pfn);
    let refs = folio_lru_refs(mm, pfn);
    let ws = mm.frames.test(pfn, pg::WORKINGSET);
    let tier = lru_tier_from_refs(refs, ws);
    if sort_promoted(mm, g, pfn, gen, ty) {
        return true;
    }
    // protected by its tier, or the lazily promoted workingset
    let lazily = refs + ws as u32 == (1 << LRU_REFS_WIDTH) + 1;
    if tier > tier_idx || lazily {
        let new_gen = folio_inc_gen(mm, g, lv, pfn, false, LRU_REFS_FLAGS);
        list_move(mm, g, pfn, new_gen, ty, false);
        if !lazily {
            g.protected[ty][tier] += mm.folio_nr_pages(pfn);
        }
        return true;
    }
    sort_writeback(mm, g, lv, pfn, ty, Some(nr))
}

/// `sort_folio`'s "promoted" step (every version): a folio aging moved to another
/// generation goes to that generation's list.
pub(super) fn sort_promoted(mm: &mut Mm, g: &LruGen, pfn: Pfn, gen: usize, ty: usize) -> bool {
    if gen == gen_from_seq(g.min_seq[ty]) {
        return false;
    }
    list_move(mm, g, pfn, gen, ty, false);
    true
}

/// `sort_folio`'s "waiting for writeback" step (v6.6 – v6.15; 6.12.114 dropped it): a
/// folio under writeback or a dirty file folio goes to the head of `min_seq + 1` with
/// PG_reclaim (`folio_inc_gen(.., true)`), for `folio_end_writeback` to rotate back.
/// With `nr` (v6.15) a dirty file folio counts in `nr.file_taken` and, not yet under
/// writeback, in `nr.unqueued_dirty`. Returns whether it was sorted away.
pub(super) fn sort_writeback(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, ty: usize, nr: Option<&mut ScanNr>) -> bool {
    let f = mm.frames.flags(pfn);
    let (dirty, writeback) = (f & pg::DIRTY != 0, f & pg::WRITEBACK != 0);
    let file = ty == LRU_GEN_FILE;
    if let Some(nr) = nr {
        if file && dirty {
            nr.file_taken += 1;
            nr.unqueued_dirty += u64::from(!writeback);
        }
    }
    if !(writeback || (file && dirty)) {
        return false;
    }
    let new_gen = folio_inc_gen(mm, g, lv, pfn, true, LRU_REFS_FLAGS);
    list_move(mm, g, pfn, new_gen, ty, false);
    true
}

/// `isolate_folio`: clear the refs counter of an unreferenced folio and PG_reclaim,
/// take it off the list.
pub fn isolate_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn) {
    if !mm.frames.test(pfn, pg::REFERENCED) {
        set_refs_counter(mm, pfn, 0);
    }
    mm.frames.clear(pfn, pg::RECLAIM);
    lru_gen_del_folio(mm, g, lv, pfn, true);
}

/// `try_to_inc_min_seq`: advance each evictable type's `min_seq` past empty
/// generations, keeping anon and file from straddling `max_seq - MIN_NR_GENS`.
pub fn try_to_inc_min_seq(mm: &Mm, g: &mut LruGen, swappiness: u32) -> bool {
    let mut min_seq = g.min_seq;
    let mut inc = false;
    for ty in evictable_types(swappiness) {
        while min_seq[ty] + MIN_NR_GENS <= g.max_seq {
            if !mm.lists.is_empty(g.head(gen_from_seq(min_seq[ty]), ty)) {
                break;
            }
            min_seq[ty] += 1;
            inc = true;
        }
    }
    if !inc {
        return false;
    }
    if swappiness != 0 && swappiness <= MAX_SWAPPINESS {
        let seq = g.max_seq - MIN_NR_GENS;
        if min_seq[LRU_GEN_ANON] > seq && min_seq[LRU_GEN_FILE] < seq {
            min_seq[LRU_GEN_ANON] = seq;
        } else if min_seq[LRU_GEN_FILE] > seq && min_seq[LRU_GEN_ANON] < seq {
            min_seq[LRU_GEN_FILE] = seq;
        }
    }
    let mut success = false;
    for ty in evictable_types(swappiness) {
        if min_seq[ty] <= g.min_seq[ty] {
            continue;
        }
        reset_ctrl_pos(g, ty, true);
        g.min_seq[ty] = min_seq[ty];
        success = true;
    }
    success
}

/// `should_abort_scan` (root reclaim only): enough reclaimed, or (v6.7+) for kswapd
/// every eligible zone (up to `sc->reclaim_idx`) above `wmark_pages(zone, WMARK_HIGH)`
/// (the boost included) + MIN_LRU_BATCH, tested with the `lowmem_reserve` of
/// `sc->reclaim_idx`'s class (`zone_watermark_ok(zone, 0, size, sc->reclaim_idx, 0)`,
/// mm/vmscan.c 6.12).
pub(super) fn should_abort_scan<V: MglruVariant>(mm: &Mm, lv: LruvecId, sc: &ScanControl) -> bool {
    if !sc.root_reclaim() {
        return false;
    }
    if sc.nr_reclaimed >= sc.nr_to_reclaim.max(2 << sc.order) {
        return true;
    }
    if !V::KSWAPD_STOPS_AT_HIGH_WMARK || !sc.is_kswapd() || sc.order != 0 {
        return false;
    }
    let node = mm.lruvecs[lv as usize].node;
    mm.eligible_zones(node, sc.reclaim_idx).all(|z| mm.buddy.zone_watermark_ok_for(z, 0, mm.buddy.zones[z].high_wmark_pages() + MIN_LRU_BATCH, sc.reclaim_idx))
}

/// `set_initial_priority` (root reclaim): from the inactive size and `nr_to_reclaim`,
/// clamped to [`min`, 12] (min 6 since v6.10, 0 before).
fn set_initial_priority(mm: &Mm, node: u16, sc: &mut ScanControl, min: i32) {
    if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
        return;
    }
    let mut reclaimable = mm.node_lru_pages(node, LruList::InactiveFile);
    if mm.can_reclaim_anon() {
        reclaimable += mm.node_lru_pages(node, LruList::InactiveAnon);
    }
    let fls = |x: u64| 64 - x.leading_zeros() as i32;
    let priority = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
    sc.priority = priority.clamp(min, DEF_PRIORITY);
}
