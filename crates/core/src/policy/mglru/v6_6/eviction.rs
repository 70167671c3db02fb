//! v6.6's eviction-side functions (mm/vmscan.c v6.6, rmap's `folio_referenced_one`;
//! spec C.5, C.7 **\[version\]**) where their code differs from v6.15: `sort_folio`,
//! `isolate_folio`, the classic `folio_check_references` MGLRU ran through,
//! `evict_folios`' rejected folios, `should_run_aging`, `try_to_inc_min_seq`,
//! `inc_min_seq`, `shrink_one`'s memcg-LRU decisions.
//!
//! `protected[]`: v6.6 counts a protected folio of tier t in `protected[t − 1]` and
//! `read_ctrl_pos`/`reset_ctrl_pos` add `protected[t − 1]` to tier t's total; the model
//! stores it at `protected[t]`, where the shared v6.15 PID code reads it — the same
//! numbers (v6.6 never protects tier 0).
//!
//! v6.6's `for (type = !can_swap; type < ANON_AND_FILE; type++)` is
//! `evictable_types(swappiness)` over its swappiness range 0..=200.

use super::super::aging::folio_look_around;
use super::super::eviction::{sort_promoted, sort_writeback};
use super::super::lrugen::*;
use super::super::memcg_lru::{MemcgLruOp, Seg};
use super::super::pid::reset_ctrl_pos;
use super::super::MglruVariant;
use super::lrugen::{folio_lru_refs, lru_tier_from_refs, REFS_ALL};
use super::V66Hooks;
use crate::mm::lruvec::LruvecId;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;
use crate::vmscan::{FolioReferences, ScanControl};

/// `sort_folio` (v6.6): a folio aging promoted moves to its generation's list; a
/// protected one (`H::sort_folio_protects`: tier above `tier_idx`) goes to the tail of
/// `min_seq + 1` with its reference bits cleared and is counted; with
/// `H::SORT_FOLIO_WAITS_FOR_WRITEBACK` a dirty file folio or one under writeback goes to
/// `min_seq + 1` with PG_reclaim (`sort_writeback`); 6.12.114+ isolates it for
/// `shrink_folio_list` instead ("mm/mglru: use the common routine for dirty/writeback
/// reactivation").
pub fn sort_folio<H: V66Hooks>(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, tier_idx: usize) -> bool {
    let gen = folio_lru_gen(mm, pfn).expect("on an MGLRU list");
    let ty = folio_type(mm, pfn);
    let refs = folio_lru_refs(mm, pfn);
    let tier = lru_tier_from_refs(refs);
    if sort_promoted(mm, g, pfn, gen, ty) {
        return true;
    }
    // protected
    if H::sort_folio_protects(tier, tier_idx, refs) {
        let new_gen = folio_inc_gen(mm, g, lv, pfn, false, REFS_ALL);
        list_move(mm, g, pfn, new_gen, ty, true);
        g.protected[ty][tier] += mm.folio_nr_pages(pfn);
        return true;
    }
    H::SORT_FOLIO_WAITS_FOR_WRITEBACK && sort_writeback(mm, g, lv, pfn, ty, None)
}

/// `isolate_folio` (v6.6): a folio without PG_referenced loses its counter and
/// PG_workingset; PG_reclaim and PG_referenced are cleared; off the list.
pub fn isolate_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn) {
    if !mm.frames.test(pfn, pg::REFERENCED) {
        mm.frames.clear(pfn, REFS_ALL);
    }
    mm.frames.clear(pfn, pg::RECLAIM | pg::REFERENCED);
    lru_gen_del_folio(mm, g, lv, pfn, true);
}

/// `shrink_folio_list`'s MGLRU test and the classic `folio_check_references` (v6.6):
/// - a mapped folio with PG_referenced is kept ("folio_update_gen() tried to promote
///   this page?": a walk or look-around saw it young while it was isolated);
/// - rmap (`folio_referenced_one`): a young PTE runs `lru_gen_look_around`, which clears
///   it, updates the young neighbours and — this folio being off the lists — sets its
///   PG_referenced; it counts as a referenced PTE;
/// - then the classic rules: referenced PTEs with PG_referenced (always, here) →
///   activate; no referenced PTE → reclaim (clean if PG_referenced, file).
pub fn check_references<V: MglruVariant>(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, sc: &mut ScanControl) -> FolioReferences {
    let mapped = mm.folio_mapped(pfn);
    if mapped && mm.frames.test(pfn, pg::REFERENCED) {
        return FolioReferences::Keep;
    }
    let mut referenced_ptes = false;
    if mapped {
        sc.cost_ns += mm.cfg.cost.rmap_ns;
        if folio_look_around::<V>(mm, g, lv, pfn, sc.has_mm_walk(), sc) {
            mm.frames.set(pfn, pg::REFERENCED);
            referenced_ptes = true;
        }
    }
    let referenced_folio = mm.frames.test_and_clear(pfn, pg::REFERENCED);
    if referenced_ptes {
        mm.frames.set(pfn, pg::REFERENCED);
        return if referenced_folio { FolioReferences::Activate } else { FolioReferences::Keep };
    }
    if referenced_folio && mm.frames.is_file(pfn) {
        FolioReferences::ReclaimClean
    } else {
        FolioReferences::Reclaim
    }
}

/// `evict_folios`' rejected folios (v6.6): a dirty folio under PG_reclaim goes back as
/// it is (PG_referenced restored if PG_workingset); a clean, unmapped, inactive,
/// unreferenced one is retried once; every other one loses its reference bits and gets
/// PG_active — it returns to the youngest generation.
pub fn rejected_folio(mm: &mut Mm, pfn: Pfn, skip_retry: bool) -> bool {
    let f = mm.frames.flags(pfn);
    if f & pg::RECLAIM != 0 && f & (pg::DIRTY | pg::WRITEBACK) != 0 {
        if f & pg::WORKINGSET != 0 {
            mm.frames.set(pfn, pg::REFERENCED);
        }
        return false;
    }
    if skip_retry || f & (pg::ACTIVE | pg::REFERENCED | pg::DIRTY | pg::WRITEBACK) != 0 || mm.folio_mapped(pfn) {
        mm.frames.clear(pfn, REFS_ALL);
        mm.frames.set(pfn, pg::ACTIVE);
        return false;
    }
    true
}

/// `should_run_aging` (v6.6): must age when the oldest evictable generation is within
/// MIN_NR_GENS of `max_seq`; with exactly MIN_NR_GENS + 1 generations, age when the
/// youngest holds more than half the pages or the oldest less than a quarter. Returns
/// (age, evictable pages); the caller shifts by the priority.
pub fn should_run_aging(g: &LruGen, swappiness: u32) -> (bool, u64) {
    let can_swap = swappiness != 0;
    let min_seq = g.min_seq[!can_swap as usize];
    if min_seq + MIN_NR_GENS > g.max_seq {
        return (true, 0);
    }
    let (mut total, mut young, mut old) = (0u64, 0u64, 0u64);
    for ty in evictable_types(swappiness) {
        for seq in g.min_seq[ty]..=g.max_seq {
            let size = g.nr_pages[gen_from_seq(seq)][ty].max(0) as u64;
            total += size;
            if seq == g.max_seq {
                young += size;
            } else if seq + MIN_NR_GENS == g.max_seq {
                old += size;
            }
        }
    }
    if min_seq + MIN_NR_GENS < g.max_seq {
        return (false, total);
    }
    (young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total, total)
}

/// `try_to_inc_min_seq` (v6.6): advance past empty generations; with swap, anon's
/// `min_seq` may not pass file's, and file's only advances as far as anon's.
pub fn try_to_inc_min_seq(mm: &Mm, g: &mut LruGen, swappiness: u32) -> bool {
    let can_swap = swappiness != 0;
    let mut min_seq = g.min_seq;
    for ty in evictable_types(swappiness) {
        while min_seq[ty] + MIN_NR_GENS <= g.max_seq {
            if !mm.lists.is_empty(g.head(gen_from_seq(min_seq[ty]), ty)) {
                break;
            }
            min_seq[ty] += 1;
        }
    }
    if can_swap {
        min_seq[LRU_GEN_ANON] = min_seq[LRU_GEN_ANON].min(min_seq[LRU_GEN_FILE]);
        min_seq[LRU_GEN_FILE] = min_seq[LRU_GEN_ANON].max(g.min_seq[LRU_GEN_FILE]);
    }
    let mut success = false;
    for ty in evictable_types(swappiness) {
        if min_seq[ty] == g.min_seq[ty] {
            continue;
        }
        reset_ctrl_pos(g, ty, true);
        g.min_seq[ty] = min_seq[ty];
        success = true;
    }
    success
}

/// `inc_min_seq` (v6.6): move the oldest generation's folios to `min_seq + 1` (their
/// reference bits cleared, nothing counted as protected) unless it is anon and swap is
/// off; then `min_seq++`.
pub fn inc_min_seq(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, ty: usize, swappiness: u32) {
    if !(ty == LRU_GEN_ANON && swappiness == 0) {
        let head = g.head(gen_from_seq(g.min_seq[ty]), ty);
        while let Some(pfn) = mm.lists.tail(head) {
            let new_gen = folio_inc_gen(mm, g, lv, pfn, false, REFS_ALL);
            list_move(mm, g, pfn, new_gen, ty, true);
        }
    }
    reset_ctrl_pos(g, ty, true);
    g.min_seq[ty] += 1;
}

/// v6.6's `shrink_one` skips: a memcg too small to be helpful (`lruvec_is_sizable`) is
/// not reclaimed but moved to the tail, then young on the second attempt; then below
/// min → young, below low → tail once (the size test moved after reclaim in v6.7).
pub fn shrink_one_skip(sizable: bool, seg: Seg, below_min: bool, below_low: bool) -> Option<MemcgLruOp> {
    if !sizable {
        return Some(if seg != Seg::Tail { MemcgLruOp::Tail } else { MemcgLruOp::Young });
    }
    super::super::memcg_lru::shrink_one_skip(seg, below_min, below_low)
}

/// v6.6's `shrink_one` result: `success ? MEMCG_LRU_YOUNG : 0`.
pub fn shrink_one_op(success: bool) -> MemcgLruOp {
    if success {
        MemcgLruOp::Young
    } else {
        MemcgLruOp::Nop
    }
}
