//! v6.6's folio reference bits and generation moves (include/linux/mm_inline.h,
//! mm/swap.c, mm/vmscan.c v6.6; spec C.3, C.4, C.6 **\[version\]**).
//!
//! The refs representation before v6.14: an fd access sets PG_referenced, then
//! PG_workingset, then counts up the 2-bit counter; `folio_lru_refs` = counter +
//! PG_workingset (PG_referenced is not counted) and tier = order_base_2(refs + 1). A
//! young PTE promotes its folio at once (no two strikes).

use super::super::lrugen::{
    folio_lru_gen, folio_type, lru_gen_del_folio, lru_gen_update_size, order_base_2, refs_counter, set_gen_bits, set_refs_counter, LruGen, LRU_GEN_ANON, LRU_REFS_WIDTH, REFS_MASK,
};
use super::super::MglruVariant;
use super::{V66Hooks, V66};
use crate::mm::lruvec::LruvecId;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::vmstat::Ev;
use crate::mm::Mm;

/// What `folio_inc_gen`, `folio_update_gen` and `isolate_folio` clear in v6.6:
/// `LRU_REFS_MASK | LRU_REFS_FLAGS` (counter, PG_referenced, PG_workingset).
pub const REFS_ALL: u32 = REFS_MASK | pg::REFERENCED | pg::WORKINGSET;

/// `folio_lru_refs` (v6.1–v6.13): accesses beyond PG_referenced — the counter plus
/// PG_workingset (0..=4).
#[inline]
pub fn folio_lru_refs(mm: &Mm, pfn: Pfn) -> u32 {
    refs_counter(mm, pfn) + mm.frames.test(pfn, pg::WORKINGSET) as u32
}

/// `lru_tier_from_refs` (v6.1–v6.13): order_base_2(refs + 1); refs 0 → tier 0, 1 → 1,
/// 2–3 → 2, 4 → 3.
#[inline]
pub fn lru_tier_from_refs(refs: u32) -> usize {
    order_base_2(refs + 1) as usize
}

/// `folio_inc_refs` (mm/swap.c v6.6), `folio_mark_accessed` with MGLRU: PG_referenced
/// first, then PG_workingset, then the counter up to its maximum (3).
pub fn folio_inc_refs(mm: &mut Mm, pfn: Pfn) {
    if mm.frames.test(pfn, pg::UNEVICTABLE) {
        return;
    }
    if !mm.frames.test(pfn, pg::REFERENCED) {
        mm.frames.set(pfn, pg::REFERENCED);
        return;
    }
    if !mm.frames.test(pfn, pg::WORKINGSET) {
        mm.frames.set(pfn, pg::WORKINGSET);
        return;
    }
    let c = refs_counter(mm, pfn);
    if c < (1 << LRU_REFS_WIDTH) - 1 {
        set_refs_counter(mm, pfn, c + 1);
    }
}

/// `lru_gen_add_folio`'s placement in v6.6 (the `-` side of 081488051d28): PG_active →
/// `max_seq`; anon not in the swap cache (the model keeps none) or a dirty folio under
/// PG_reclaim → `min_seq + 1`; everything else — a clean page read with read(), a
/// rotated folio — the oldest generation `min_seq`. Unlike v6.12+ the refs bits of an
/// active folio are kept.
pub fn lru_gen_add_seq(mm: &Mm, g: &LruGen, pfn: Pfn, _reclaiming: bool) -> u64 {
    let f = mm.frames.flags(pfn);
    let ty = folio_type(mm, pfn);
    if f & pg::ACTIVE != 0 {
        g.max_seq
    } else if ty == LRU_GEN_ANON || (f & pg::RECLAIM != 0 && f & (pg::DIRTY | pg::WRITEBACK) != 0) {
        g.min_seq[ty] + 1
    } else {
        g.min_seq[ty]
    }
}

/// `folio_update_gen` (v6.6): a young PTE moves the folio's bits to `gen` at once and
/// clears counter, PG_referenced and PG_workingset. Returns the old generation. An
/// isolated folio (no generation) gets PG_referenced "for shrink_folio_list()".
pub fn folio_update_gen(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, gen: usize) -> Option<usize> {
    let Some(old) = folio_lru_gen(mm, pfn) else {
        mm.frames.set(pfn, pg::REFERENCED);
        return None;
    };
    mm.frames.clear(pfn, REFS_ALL);
    set_gen_bits(mm, pfn, Some(gen));
    if old != gen {
        // update_batch_size (applied at once)
        lru_gen_update_size(mm, g, lv, folio_type(mm, pfn), mm.folio_nr_pages(pfn) as i64, Some(old), Some(gen));
    }
    Some(old)
}

/// The young-PTE update of v6.6's `walk_pte_range` and `lru_gen_look_around`: with a walk
/// `folio_update_gen`; without one (direct reclaim's look-around) `folio_activate` of a
/// folio in another generation (after `H::look_around_before_activate`), which re-adds it
/// with PG_active (→ `max_seq`).
pub fn walk_update_folio<H: V66Hooks>(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, new_gen: usize, walk: bool) {
    if walk {
        folio_update_gen(mm, g, lv, pfn, new_gen);
        return;
    }
    match folio_lru_gen(mm, pfn) {
        None => mm.frames.set(pfn, pg::REFERENCED),
        Some(old) if old != new_gen => {
            H::look_around_before_activate(mm, pfn);
            lru_gen_del_folio(mm, g, lv, pfn, false);
            mm.frames.set(pfn, pg::ACTIVE);
            V66::<H>::lru_gen_add_folio(mm, g, lv, pfn, false);
            mm.count_lruvec_events(lv, Ev::Pgactivate, mm.folio_nr_pages(pfn));
        }
        Some(_) => {}
    }
}
