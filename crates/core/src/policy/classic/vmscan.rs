//! The classic reclaim paths of mm/vmscan.c v6.15 (spec A.4, A.6–A.8):
//! `prepare_scan_control`, `get_scan_count`, `shrink_lruvec`, `shrink_list`,
//! `shrink_inactive_list`, `shrink_active_list`, `folio_check_references`,
//! `kswapd_age_node`.
//! Abstractions: no `VM_EXEC` or `VM_LOCKED` mappings (so active-list rotation of
//! executable file folios never happens), one mapping per page (`referenced_ptes` ≤ 1),
//! no offline memcgs.

use super::lru::{isolate_lru_folios, lruvec_lru_size, move_folios_to_lru, Isolated};
use super::{Classic, ClassicVariant};
use crate::mm::lruvec::{inactive_is_low, LruList, LruvecId, EVICTABLE_LRUS, LRU_ACTIVE, LRU_FILE};
use crate::mm::memcontrol::{protected_scan_size, ROOT_MEMCG};
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::vmscan::{
    shrink_folio_list, shrink_node_memcgs_from, FolioReferences, Reclaimer, ScanControl, DEACTIVATE_ANON, DEACTIVATE_FILE, DEF_PRIORITY, MAX_SWAPPINESS, SWAP_CLUSTER_MAX,
};

/// `folio_referenced` for the single mapping: rmap walk cost, test-and-clear young. A
/// THP mapped by PTEs has every young PTE cleared (`folio_referenced_one`'s
/// `page_vma_mapped_walk`) and counts once: `pra->referenced` counts mappings (VMAs)
/// with a young PTE, not PTEs (mm/rmap.c 6.12).
#[inline(always)]
fn folio_referenced(mm: &mut Mm, pfn: Pfn, sc: &mut ScanControl) -> u32 {
    if mm.frames.test(pfn, pg::HEAD) && mm.folio_pte_mapped(pfn) {
        return pte_mapped_thp_referenced(mm, pfn, sc);
    }
    if !mm.frames.test(pfn, pg::MAPPED) {
        return 0;
    }
    sc.cost_ns += mm.cfg.cost.rmap_ns;
    mm.frames.test_and_clear(pfn, pg::YOUNG) as u32
}

/// [`folio_referenced`] of a THP mapped by PTEs.
#[inline(never)]
#[cold]
fn pte_mapped_thp_referenced(mm: &mut Mm, head: Pfn, sc: &mut ScanControl) -> u32 {
    sc.cost_ns += mm.cfg.cost.rmap_ns;
    let subpages = head..head + crate::thp::HPAGE_PMD_NR;
    subpages.fold(false, |any, f| (mm.frames.test(f, pg::MAPPED) && mm.frames.test_and_clear(f, pg::YOUNG)) | any) as u32
}

/// `folio_check_references` (A.7).
pub fn folio_check_references(mm: &mut Mm, pfn: Pfn, sc: &mut ScanControl) -> FolioReferences {
    let referenced_ptes = folio_referenced(mm, pfn, sc);
    let referenced_folio = mm.frames.test_and_clear(pfn, pg::REFERENCED);
    if referenced_ptes > 0 {
        mm.frames.set(pfn, pg::REFERENCED);
        if referenced_folio || referenced_ptes > 1 {
            return FolioReferences::Activate;
        }
        return FolioReferences::Keep;
    }
    if referenced_folio && mm.frames.is_file(pfn) {
        return FolioReferences::ReclaimClean;
    }
    FolioReferences::Reclaim
}

/// `inactive_is_low(lruvec, inactive_lru)` on hierarchical sizes as `lruvec_page_state`
/// reads them (as of the last statistics flush).
pub fn lruvec_inactive_is_low(mm: &Mm, lv: LruvecId, inactive_lru: LruList) -> bool {
    let s = &mm.lruvecs[lv as usize].stat;
    inactive_is_low(s.size[inactive_lru as usize], s.size[inactive_lru as usize + LRU_ACTIVE])
}

/// `can_age_anon_pages`: swap is configured.
fn can_age_anon_pages(mm: &Mm) -> bool {
    mm.swap.total > 0
}

/// `prepare_scan_control` (A.6).
pub fn prepare_scan_control(mm: &Mm, node: u16, sc: &mut ScanControl) {
    let target_lv = mm.lruvec_id(sc.target_memcg.unwrap_or(ROOT_MEMCG), node);
    let t = &mm.lruvecs[target_lv as usize];
    sc.anon_cost = t.anon_cost;
    sc.file_cost = t.file_cost;
    if !sc.force_deactivate {
        for (file, bit, inactive) in [(0, DEACTIVATE_ANON, LruList::InactiveAnon), (1, DEACTIVATE_FILE, LruList::InactiveFile)] {
            // lruvec_page_state(WORKINGSET_ACTIVATE_*): as of the last statistics flush.
            if t.stat.workingset_activate[file] != t.refaults[file] || lruvec_inactive_is_low(mm, target_lv, inactive) {
                sc.may_deactivate |= bit;
            } else {
                sc.may_deactivate &= !bit;
            }
        }
    } else {
        sc.may_deactivate = DEACTIVATE_ANON | DEACTIVATE_FILE;
    }
    let file = t.stat.size[LruList::InactiveFile as usize];
    sc.cache_trim_mode = (file >> sc.priority) != 0 && sc.may_deactivate & DEACTIVATE_FILE == 0 && !sc.no_cache_trim_mode;
    if !sc.cgroup_reclaim() {
        let free = mm.node_free_pages(node);
        let file = mm.node_lru_pages(node, LruList::ActiveFile) + mm.node_lru_pages(node, LruList::InactiveFile);
        let anon = mm.node_lru_pages(node, LruList::InactiveAnon);
        sc.file_is_tiny = file + free <= mm.node_high_wmark(node) && sc.may_deactivate & DEACTIVATE_ANON == 0 && (anon >> sc.priority) != 0;
    }
}

/// `enum scan_balance`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanBalance {
    Equal,
    Fract,
    Anon,
    File,
}

/// The scan-balance decision of `get_scan_count` (A.6 steps 1–6), one branch per
/// kernel step even where two give the same answer.
#[allow(clippy::if_same_then_else)]
pub fn scan_balance(sc: &ScanControl, swappiness: u64, can_reclaim_anon: bool) -> ScanBalance {
    if !sc.may_swap || !can_reclaim_anon {
        ScanBalance::File
    } else if sc.cgroup_reclaim() && swappiness == 0 {
        ScanBalance::File
    } else if sc.priority == 0 && swappiness != 0 {
        ScanBalance::Equal
    } else if sc.file_is_tiny {
        ScanBalance::Anon
    } else if sc.cache_trim_mode {
        ScanBalance::File
    } else {
        ScanBalance::Fract
    }
}

/// `fraction[]` and `denominator` of SCAN_FRACT (A.6).
pub fn scan_fractions(anon_cost: u64, file_cost: u64, swappiness: u64) -> ([u64; 2], u64) {
    let total_cost = anon_cost + file_cost;
    let anon_cost = total_cost + anon_cost;
    let file_cost = total_cost + file_cost;
    let total_cost = anon_cost + file_cost;
    let ap = swappiness * (total_cost + 1) / (anon_cost + 1);
    let fp = (MAX_SWAPPINESS - swappiness) * (total_cost + 1) / (file_cost + 1);
    ([ap, fp], ap + fp)
}

/// `get_scan_count`: how many folios of each evictable list to scan.
pub fn get_scan_count<V: ClassicVariant>(c: &Classic<V>, mm: &Mm, lv: LruvecId, sc: &mut ScanControl) -> [u64; 4] {
    let swappiness = crate::vmscan::sc_swappiness(mm, sc) as u64;
    let balance = scan_balance(sc, swappiness, mm.can_reclaim_anon());
    let (fraction, denominator) = scan_fractions(sc.anon_cost, sc.file_cost, swappiness);
    let l = &mm.lruvecs[lv as usize];
    let memcg = &mm.memcgs[l.memcg as usize];
    // mem_cgroup_protection: none for the reclaim target itself or the root.
    let protected = l.memcg != ROOT_MEMCG && Some(l.memcg) != sc.target_memcg;
    let mut nr = [0u64; 4];
    for (i, lru) in EVICTABLE_LRUS.iter().enumerate() {
        let file = lru.is_file();
        let size = lruvec_lru_size(c, mm, lv, *lru, sc.reclaim_idx);
        let mut scan = if protected {
            let (s, low_skipped) = protected_scan_size(size, memcg.usage, memcg.min, memcg.low, sc.memcg_low_reclaim);
            sc.memcg_low_skipped |= low_skipped;
            s
        } else {
            size
        };
        scan >>= sc.priority;
        scan = match balance {
            ScanBalance::Equal => scan,
            ScanBalance::Fract => (scan as u128 * fraction[file as usize] as u128 / denominator.max(1) as u128) as u64,
            ScanBalance::File | ScanBalance::Anon => {
                if (balance == ScanBalance::File) != file {
                    0
                } else {
                    scan
                }
            }
        };
        nr[i] = scan;
    }
    nr
}

/// `shrink_inactive_list` (A.7).
fn shrink_inactive_list<V: ClassicVariant>(c: &mut Classic<V>, mm: &mut Mm, nr_to_scan: u64, lv: LruvecId, lru: LruList, sc: &mut ScanControl) -> u64 {
    let file = lru.is_file();
    let mut folios = std::mem::take(&mut c.isolated);
    let Isolated { taken: nr_taken, scanned: nr_scanned } = isolate_lru_folios(c, mm, lv, lru, nr_to_scan, sc.reclaim_idx, &mut folios);
    // mm/vmscan.c 6.12 shrink_inactive_list: the global event only outside cgroup
    // reclaim, the lruvec's memcg's always (PGSCAN_KSWAPD + reclaimer_offset()).
    let item = sc.pgscan_item();
    match sc.reclaimer {
        Reclaimer::Memcg => {}
        _ => mm.vmstat.count(item, nr_scanned),
    }
    mm.count_memcg_events(mm.lruvecs[lv as usize].memcg, item, nr_scanned);
    mm.vmstat.count(Ev::by_type(Ev::PgscanAnon, file), nr_scanned);
    if nr_taken == 0 {
        c.isolated = folios;
        return 0;
    }
    let stat = shrink_folio_list(mm, c, &mut folios, sc);
    move_folios_to_lru(c, mm, &folios);
    mm.lru_note_cost(lv, file, stat.nr_pageout, nr_scanned - stat.nr_reclaimed);
    // mm/vmscan.c 6.12: only unqueued dirty folios taken → the flushers are not doing
    // their job: wake them (cgroup v2 does not throttle here).
    if stat.nr_unqueued_dirty == nr_taken {
        mm.wakeup_flusher_threads(mm.now);
    }
    sc.nr.dirty += stat.nr_dirty;
    sc.nr.congested += stat.nr_congested;
    sc.nr.unqueued_dirty += stat.nr_unqueued_dirty;
    sc.nr.writeback += stat.nr_writeback;
    sc.nr.immediate += stat.nr_immediate;
    sc.nr.taken += nr_taken;
    if file {
        sc.nr.file_taken += nr_taken;
    }
    c.isolated = folios;
    stat.nr_reclaimed
}

/// `shrink_active_list` (A.8): every folio is deactivated (no VM_EXEC file folios in
/// the model); its young bit is harvested on the way.
pub fn shrink_active_list<V: ClassicVariant>(c: &mut Classic<V>, mm: &mut Mm, nr_to_scan: u64, lv: LruvecId, lru: LruList, sc: &mut ScanControl) {
    let file = lru.is_file();
    let mut folios = std::mem::take(&mut c.isolated);
    let nr_scanned = isolate_lru_folios(c, mm, lv, lru, nr_to_scan, sc.reclaim_idx, &mut folios).scanned;
    if !sc.cgroup_reclaim() {
        mm.vmstat.count(Ev::Pgrefill, nr_scanned);
    }
    mm.count_memcg_events(mm.lruvecs[lv as usize].memcg, Ev::Pgrefill, nr_scanned);
    let nr_rotated = 0;
    for &pfn in &folios {
        sc.cost_ns += mm.cfg.cost.scan_ns;
        if mm.frames.test(pfn, pg::UNEVICTABLE) {
            continue;
        }
        // Referenced or not, a folio that is not executable file cache is deactivated.
        let _referenced = folio_referenced(mm, pfn, sc);
        mm.frames.clear(pfn, pg::ACTIVE);
        mm.frames.set(pfn, pg::WORKINGSET);
    }
    let nr_deactivate = move_folios_to_lru(c, mm, &folios);
    mm.count_lruvec_events(lv, Ev::Pgdeactivate, nr_deactivate);
    if nr_rotated > 0 {
        mm.lru_note_cost(lv, file, 0, nr_rotated);
    }
    c.isolated = folios;
}

/// `shrink_list`.
fn shrink_list<V: ClassicVariant>(c: &mut Classic<V>, mm: &mut Mm, lru: LruList, nr_to_scan: u64, lv: LruvecId, sc: &mut ScanControl) -> u64 {
    if lru.is_active() {
        if sc.may_deactivate & (1 << lru.is_file() as u8) != 0 {
            shrink_active_list(c, mm, nr_to_scan, lv, lru, sc);
        } else {
            sc.skipped_deactivate = true;
        }
        return 0;
    }
    shrink_inactive_list(c, mm, nr_to_scan, lv, lru, sc)
}

/// Where a kswapd step that let the workload run at a batch boundary goes on (the
/// classic counterpart of MGLRU's `eviction::Resume`): `shrink_lruvec`'s scan counts,
/// targets and `nr_reclaimed`, the memcg walk's position, and `shrink_node`'s
/// `nr_reclaimed` when its reclaim/compaction loop began this round.
#[derive(Clone, Copy, Debug)]
pub struct Resume {
    memcg_pos: usize,
    nr: [u64; 4],
    targets: [u64; 4],
    nr_reclaimed: u64,
    node_reclaimed: u64,
}

/// `shrink_lruvec` (A.4): scan the targets in 32-folio chunks round-robin; once
/// `nr_to_reclaim` is met (except in proportional global direct reclaim at
/// DEF_PRIORITY), stop the smaller type and scale the other to the share done.
///
/// kswapd runs beside the workload on another CPU: at each round's `cond_resched()`
/// (mm/vmscan.c 6.12) a step whose clock has passed the workload's (`sc.preempt_at_ns`)
/// records its counts in `resume` and sets `sc.preempted`; the next step calls this
/// again with them and goes on with the same round.
pub fn shrink_lruvec<V: ClassicVariant>(c: &mut Classic<V>, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl, resume: &mut Option<Resume>) {
    let (mut nr, targets, mut nr_reclaimed, mut going_on) = match resume.take() {
        Some(r) => (r.nr, r.targets, r.nr_reclaimed, true),
        None => {
            let nr = get_scan_count(c, mm, lv, sc);
            (nr, nr, 0, false)
        }
    };
    let nr_to_reclaim = sc.nr_to_reclaim;
    let proportional_reclaim = !sc.cgroup_reclaim() && !sc.is_kswapd() && sc.priority == DEF_PRIORITY;
    const IA: usize = 0;
    const AA: usize = 1;
    const IF: usize = 2;
    const AF: usize = 3;
    while going_on || nr[IA] != 0 || nr[AF] != 0 || nr[IF] != 0 {
        if !std::mem::take(&mut going_on) {
            for (i, lru) in EVICTABLE_LRUS.iter().enumerate() {
                if nr[i] != 0 {
                    let nr_to_scan = nr[i].min(SWAP_CLUSTER_MAX);
                    nr[i] -= nr_to_scan;
                    nr_reclaimed += shrink_list(c, mm, *lru, nr_to_scan, lv, sc);
                }
            }
            // cond_resched_tasks_rcu_qs()
            if sc.cost_ns >= sc.preempt_at_ns {
                *resume = Some(Resume { memcg_pos: 0, nr, targets, nr_reclaimed, node_reclaimed: 0 });
                sc.preempted = true;
                return;
            }
        }
        if nr_reclaimed < nr_to_reclaim || proportional_reclaim {
            continue;
        }
        let nr_file = nr[IF] + nr[AF];
        let nr_anon = nr[IA] + nr[AA];
        if nr_file == 0 || nr_anon == 0 {
            break;
        }
        let (stop, percentage) = if nr_file > nr_anon { (0, nr_anon * 100 / (targets[IA] + targets[AA] + 1)) } else { (LRU_FILE, nr_file * 100 / (targets[IF] + targets[AF] + 1)) };
        nr[stop] = 0;
        nr[stop + LRU_ACTIVE] = 0;
        let other = if stop == LRU_FILE { 0 } else { LRU_FILE };
        for l in [other, other + LRU_ACTIVE] {
            let scanned = targets[l] - nr[l];
            nr[l] = targets[l] * (100 - percentage) / 100;
            nr[l] -= nr[l].min(scanned);
        }
    }
    sc.nr_reclaimed += nr_reclaimed;
    if can_age_anon_pages(mm) && lruvec_inactive_is_low(mm, lv, LruList::InactiveAnon) {
        shrink_active_list(c, mm, SWAP_CLUSTER_MAX, lv, LruList::ActiveAnon, sc);
    }
}

/// `shrink_node` body for the classic policy: `prepare_scan_control`, then every
/// memcg's lruvec on the node, again while reclaim/compaction wants more
/// (`should_continue_reclaim`). A kswapd step that stopped inside a `shrink_lruvec`
/// ([`Resume`]) goes on there, with the scan control as it was.
pub fn shrink_node<V: ClassicVariant>(c: &mut Classic<V>, mm: &mut Mm, node: u16, sc: &mut ScanControl) {
    let mut resume = if sc.is_kswapd() { c.kswapd_resume.get_mut(node as usize).and_then(Option::take) } else { None };
    loop {
        let nr_reclaimed = match resume {
            Some(r) => r.node_reclaimed,
            None => {
                sc.nr = Default::default();
                prepare_scan_control(mm, node, sc);
                sc.nr_reclaimed
            }
        };
        let memcg_pos = resume.map(|r| r.memcg_pos);
        let stopped = shrink_node_memcgs_from(mm, c, node, sc, memcg_pos, |c, mm, lv, sc| shrink_lruvec(c, mm, lv, sc, &mut resume));
        if let Some(memcg_pos) = stopped {
            let r = resume.as_mut().expect("set by shrink_lruvec");
            (r.memcg_pos, r.node_reclaimed) = (memcg_pos, nr_reclaimed);
            if c.kswapd_resume.len() <= node as usize {
                c.kswapd_resume.resize(node as usize + 1, None);
            }
            c.kswapd_resume[node as usize] = resume;
            return;
        }
        if sc.is_kswapd() {
            writeback_feedback(mm, node, sc);
        }
        if !crate::vmscan::reclaim_compaction::should_continue_reclaim(mm, node, sc.nr_reclaimed - nr_reclaimed, sc) {
            return;
        }
    }
}

/// kswapd's part of `shrink_node` after the memcgs (mm/vmscan.c 6.12): PGDAT_WRITEBACK when
/// every folio taken was under writeback, PGDAT_DIRTY when every file folio taken was
/// unqueued dirty (so the next pass may `pageout` them), and `reclaim_throttle(pgdat,
/// VMSCAN_THROTTLE_WRITEBACK)` when it met PG_reclaim folios still under writeback: sleep
/// until SWAP_CLUSTER_MAX more writes complete (`__acct_reclaim_writeback`'s wake-up), at
/// most HZ/10, counting nr_throttled_written (vmscan/throttle.rs). MGLRU's root reclaim returns before this, as in the kernel.
fn writeback_feedback(mm: &mut Mm, node: u16, sc: &mut ScanControl) {
    let n = &mut mm.nodes[node as usize];
    if sc.nr.writeback != 0 && sc.nr.writeback == sc.nr.taken {
        n.pgdat_writeback = true;
    }
    if sc.nr.unqueued_dirty == sc.nr.file_taken {
        n.pgdat_dirty = true;
    }
    if sc.nr.immediate != 0 {
        sc.throttle_ns += crate::vmscan::throttle::reclaim_throttle_ns(mm, node, crate::vmscan::throttle::Throttle::Writeback);
    }
}

/// `kswapd_age_node` (non-MGLRU): if the node's anon inactive list is low, deactivate
/// a batch of active anon in every memcg.
pub fn kswapd_age_node<V: ClassicVariant>(c: &mut Classic<V>, mm: &mut Mm, node: u16, sc: &mut ScanControl) {
    if !can_age_anon_pages(mm) {
        return;
    }
    let root = mm.lruvec_id(ROOT_MEMCG, node);
    if !lruvec_inactive_is_low(mm, root, LruList::InactiveAnon) {
        return;
    }
    for memcg in 0..mm.memcgs.len() as u16 {
        let lv = mm.lruvec_id(memcg, node);
        shrink_active_list(c, mm, SWAP_CLUSTER_MAX, lv, LruList::ActiveAnon, sc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A.6 worked by hand: anon_cost 100, file_cost 300, swappiness 60.
    /// total 400; a = 500, f = 700; T = 1200; ap = 60*1201/501 = 143; fp = 140*1201/701 = 239.
    #[test]
    fn scan_fractions_by_hand() {
        assert_eq!(scan_fractions(100, 300, 60), ([143, 239], 382));
        // no cost history: a = f = 0 → ap = 60, fp = 140 (swappiness's own ratio)
        assert_eq!(scan_fractions(0, 0, 60), ([60, 140], 200));
        // swappiness 200: file gets nothing
        assert_eq!(scan_fractions(5, 5, 200).0[1], 0);
        // swappiness 0: anon gets nothing
        assert_eq!(scan_fractions(5, 5, 0).0[0], 0);
        // a type that costs much more gets less than a third: anon cost 1000, file 0
        // total 1000; a = 2000, f = 1000; T = 3000; ap = 100*3001/2001 = 149; fp = 100*3001/1001 = 299
        assert_eq!(scan_fractions(1000, 0, 100), ([149, 299], 448));
    }

    #[test]
    fn scan_balance_order() {
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
        assert_eq!(scan_balance(&sc, 60, false), ScanBalance::File);
        assert_eq!(scan_balance(&sc, 60, true), ScanBalance::Fract);
        sc.cache_trim_mode = true;
        assert_eq!(scan_balance(&sc, 60, true), ScanBalance::File);
        sc.file_is_tiny = true;
        assert_eq!(scan_balance(&sc, 60, true), ScanBalance::Anon);
        sc.priority = 0;
        assert_eq!(scan_balance(&sc, 60, true), ScanBalance::Equal);
        assert_eq!(scan_balance(&sc, 0, true), ScanBalance::Anon);
        sc.target_memcg = Some(1);
        assert_eq!(scan_balance(&sc, 0, true), ScanBalance::File);
        sc.may_swap = false;
        assert_eq!(scan_balance(&sc, 60, true), ScanBalance::File);
    }
}
