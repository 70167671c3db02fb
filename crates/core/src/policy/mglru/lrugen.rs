//! Generations (include/linux/mm_inline.h, mm/vmscan.c v6.15; spec C.1–C.4): the
//! per-lruvec `lru_gen_folio` state, the folio's generation and reference bits, and the
//! primitives that move folios between generations while keeping `nr_pages` and the
//! compat active/inactive sizes (the two youngest generations count as active) right.
//!
//! Folio bits (in the policy-private part of `frames.flags`): `GEN` = gen + 1 (0 = not on
//! an MGLRU list, as `LRU_GEN_MASK`), `REFS` = the fd-access counter (`LRU_REFS_MASK`,
//! 2 bits), and `LIST` = the physical list the folio is linked on + 1. `GEN` and `LIST`
//! differ for a folio that aging promoted in place (`folio_update_gen` only rewrites the
//! bits; `sort_folio` moves it later), exactly as in the kernel.
//! Abstraction: one zone per node (`folios[gen][type]`), no unevictable folios.

use crate::mm::lists::ListHead;
use crate::mm::lruvec::{LruList, LruvecId, LRU_ACTIVE, LRU_FILE};
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;

pub const MIN_NR_GENS: u64 = 2;
pub const MAX_NR_GENS: u64 = 4;
pub const MAX_NR_TIERS: usize = 4;
pub const LRU_REFS_WIDTH: u32 = 2;
pub const MIN_LRU_BATCH: u64 = 64;
pub const MAX_LRU_BATCH: u64 = MIN_LRU_BATCH * 64;
/// `NR_HIST_GENS` without CONFIG_LRU_GEN_STATS.
pub const NR_HIST_GENS: u64 = 1;
/// `MAX_SWAPPINESS` (include/linux/swap.h) as MGLRU's `swappiness` arguments carry it;
/// above it (v6.15's `SWAPPINESS_ANON_ONLY`, proactive reclaim) file is not evictable.
pub const MAX_SWAPPINESS: u32 = crate::vmscan::MAX_SWAPPINESS as u32;
pub const LRU_GEN_ANON: usize = 0;
pub const LRU_GEN_FILE: usize = 1;
/// Lists per lruvec: 4 gens × 2 types, plus unevictable.
pub const NR_LISTS: u32 = (MAX_NR_GENS as u32) * 2 + 1;

const GEN_SHIFT: u32 = pg::POLICY_SHIFT;
const GEN_MASK: u32 = 0b111 << GEN_SHIFT;
const REFS_SHIFT: u32 = GEN_SHIFT + 3;
pub const REFS_MASK: u32 = 0b11 << REFS_SHIFT;
const LIST_SHIFT: u32 = REFS_SHIFT + LRU_REFS_WIDTH;
const LIST_MASK: u32 = 0b1111 << LIST_SHIFT;
/// `LRU_REFS_FLAGS` (v6.14+, "mm/mglru: rework workingset protection"): the refs counter
/// and PG_referenced. PG_workingset is not in it: `folio_inc_gen` keeps it, and only
/// reclaim or `lru_gen_clear_refs` takes it away. (Before v6.14 the flags were
/// PG_referenced | PG_workingset; spec C.1 still lists that definition.)
pub const LRU_REFS_FLAGS: u32 = REFS_MASK | pg::REFERENCED;

/// `struct lru_gen_folio` (spec C.2), NR_HIST_GENS = 1 so the `hist` index is dropped.
#[derive(Clone, Debug)]
pub struct LruGen {
    pub max_seq: u64,
    pub min_seq: [u64; 2],
    /// Birth of each generation on the simulated clock (ns).
    pub timestamps: [u64; MAX_NR_GENS as usize],
    /// Pages per generation and type by their `GEN` bits.
    pub nr_pages: [[i64; 2]; MAX_NR_GENS as usize],
    pub avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    pub avg_total: [[u64; MAX_NR_TIERS]; 2],
    pub protected: [[u64; MAX_NR_TIERS]; 2],
    pub evicted: [[u64; MAX_NR_TIERS]; 2],
    pub refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// First list head (gen * 2 + type; unevictable last).
    pub heads: ListHead,
    /// `lru_gen_mm_state.seq`: the last generation a page-table walk completed for.
    pub mm_state_seq: u64,
    /// Bloom filters of "PMDs" (512-page blocks of page ids) worth walking, by seq % 2;
    /// None = not yet created (walk everything).
    pub filters: [Option<Vec<u64>>; 2],
}

impl LruGen {
    /// `lru_gen_init_lruvec`: max_seq = MIN_NR_GENS + 1, min_seq = 0.
    pub fn new(heads: ListHead, now: u64) -> Self {
        LruGen {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0; 2],
            timestamps: [now; MAX_NR_GENS as usize],
            nr_pages: [[0; 2]; MAX_NR_GENS as usize],
            avg_refaulted: [[0; MAX_NR_TIERS]; 2],
            avg_total: [[0; MAX_NR_TIERS]; 2],
            protected: [[0; MAX_NR_TIERS]; 2],
            evicted: [[0; MAX_NR_TIERS]; 2],
            refaulted: [[0; MAX_NR_TIERS]; 2],
            heads,
            mm_state_seq: 0,
            filters: [None, None],
        }
    }

    #[inline]
    pub fn head(&self, gen: usize, ty: usize) -> ListHead {
        ListHead(self.heads.0 + (gen * 2 + ty) as u32)
    }

    /// `get_nr_gens`.
    #[inline]
    pub fn nr_gens(&self, ty: usize) -> u64 {
        self.max_seq - self.min_seq[ty] + 1
    }

    /// `lru_gen_is_active`: the two youngest generations.
    #[inline]
    pub fn is_active(&self, gen: usize) -> bool {
        gen == gen_from_seq(self.max_seq) || gen == gen_from_seq(self.max_seq - 1)
    }
}

#[inline]
pub fn gen_from_seq(seq: u64) -> usize {
    (seq % MAX_NR_GENS) as usize
}

/// `evictable_min_seq(min_seq, swappiness)`.
#[inline]
pub fn evictable_min_seq(min_seq: &[u64; 2], swappiness: u32) -> u64 {
    min_seq[(swappiness == 0) as usize].min(min_seq[(swappiness <= MAX_SWAPPINESS) as usize])
}

/// `for_each_evictable_type`: anon if swappiness > 0, file if swappiness <= MAX_SWAPPINESS.
#[inline]
pub fn evictable_types(swappiness: u32) -> std::ops::RangeInclusive<usize> {
    (swappiness == 0) as usize..=(swappiness <= MAX_SWAPPINESS) as usize
}

/// `order_base_2`.
#[inline]
pub fn order_base_2(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

/// `lru_tier_from_refs` (v6.14+): PG_workingset → tier 3, else order_base_2(refs).
#[inline]
pub fn lru_tier_from_refs(refs: u32, workingset: bool) -> usize {
    if workingset {
        MAX_NR_TIERS - 1
    } else {
        order_base_2(refs) as usize
    }
}

#[inline]
pub fn folio_type(mm: &Mm, pfn: Pfn) -> usize {
    mm.frames.is_file(pfn) as usize
}

/// `folio_lru_gen`: -1 when not on an MGLRU list.
#[inline]
pub fn folio_lru_gen(mm: &Mm, pfn: Pfn) -> Option<usize> {
    let g = (mm.frames.flags(pfn) & GEN_MASK) >> GEN_SHIFT;
    (g != 0).then(|| g as usize - 1)
}

/// Whether folio flags `flags` carry a generation (`folio_lru_gen(folio) != -1`).
#[inline(always)]
pub fn flags_on_lru_gen(flags: u32) -> bool {
    flags & GEN_MASK != 0
}

#[inline]
pub(super) fn set_gen_bits(mm: &mut Mm, pfn: Pfn, gen: Option<usize>) {
    let f = mm.frames.flags[pfn as usize] & !GEN_MASK;
    mm.frames.flags[pfn as usize] = f | gen.map_or(0, |g| ((g as u32) + 1) << GEN_SHIFT);
}

/// The physical list a folio is linked on.
#[inline]
fn folio_list(mm: &Mm, pfn: Pfn) -> Option<u32> {
    let l = (mm.frames.flags(pfn) & LIST_MASK) >> LIST_SHIFT;
    (l != 0).then(|| l - 1)
}

#[inline]
fn set_list_bits(mm: &mut Mm, pfn: Pfn, list: Option<u32>) {
    let f = mm.frames.flags[pfn as usize] & !LIST_MASK;
    mm.frames.flags[pfn as usize] = f | list.map_or(0, |l| (l + 1) << LIST_SHIFT);
}

/// The refs counter bits (0..3).
#[inline]
pub fn refs_counter(mm: &Mm, pfn: Pfn) -> u32 {
    (mm.frames.flags(pfn) & REFS_MASK) >> REFS_SHIFT
}

#[inline]
pub fn set_refs_counter(mm: &mut Mm, pfn: Pfn, v: u32) {
    let f = mm.frames.flags[pfn as usize] & !REFS_MASK;
    mm.frames.flags[pfn as usize] = f | ((v << REFS_SHIFT) & REFS_MASK);
}

/// `folio_lru_refs` (v6.14+): 0 without PG_referenced, else counter + 1.
#[inline]
pub fn folio_lru_refs(mm: &Mm, pfn: Pfn) -> u32 {
    if !mm.frames.test(pfn, pg::REFERENCED) {
        0
    } else {
        refs_counter(mm, pfn) + 1
    }
}

/// Link `pfn` on list `gen,ty` of `lv` (head or tail) and record it.
pub fn list_add(mm: &mut Mm, g: &LruGen, pfn: Pfn, gen: usize, ty: usize, tail: bool) {
    let h = g.head(gen, ty);
    if tail {
        mm.lists.add_tail(h, pfn);
    } else {
        mm.lists.add_head(h, pfn);
    }
    set_list_bits(mm, pfn, Some((gen * 2 + ty) as u32));
}

/// Unlink `pfn` from whichever list it is on.
pub fn list_del(mm: &mut Mm, g: &LruGen, pfn: Pfn) {
    let l = folio_list(mm, pfn).expect("folio on an MGLRU list");
    mm.lists.del(ListHead(g.heads.0 + l), pfn);
    set_list_bits(mm, pfn, None);
}

/// `lru_add_split_folio` (mm/huge_memory.c 6.12): a THP's tail, carrying the head's
/// generation bits, goes just before the head on the head's list.
pub fn list_add_split_tail(mm: &mut Mm, g: &LruGen, head: Pfn, tail: Pfn) {
    let l = folio_list(mm, head).expect("head on an MGLRU list");
    mm.lists.add_before(ListHead(g.heads.0 + l), head, tail);
    set_list_bits(mm, tail, Some(l));
}

/// `list_move` (head) / `list_move_tail` to list `gen,ty`.
pub fn list_move(mm: &mut Mm, g: &LruGen, pfn: Pfn, gen: usize, ty: usize, tail: bool) {
    list_del(mm, g, pfn);
    list_add(mm, g, pfn, gen, ty, tail);
}

/// `lru_gen_update_size`: move the folio's `delta` pages (`folio_nr_pages`) between
/// generations' counts and keep the compat active/inactive LRU sizes (None = not on a
/// list).
pub fn lru_gen_update_size(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, ty: usize, delta: i64, old_gen: Option<usize>, new_gen: Option<usize>) {
    if let Some(o) = old_gen {
        g.nr_pages[o][ty] -= delta;
    }
    if let Some(n) = new_gen {
        g.nr_pages[n][ty] += delta;
    }
    let lru = LRU_FILE * ty;
    let list = |active: bool| LruList::from_index(lru + active as usize * LRU_ACTIVE);
    match (old_gen, new_gen) {
        (None, Some(n)) => mm.update_lru_size(lv, list(g.is_active(n)), delta),
        (Some(o), None) => mm.update_lru_size(lv, list(g.is_active(o)), -delta),
        (Some(o), Some(n)) => {
            if !g.is_active(o) && g.is_active(n) {
                mm.update_lru_size(lv, list(false), -delta);
                mm.update_lru_size(lv, list(true), delta);
            }
            // demotion requires isolation (kernel VM_WARN)
            debug_assert!(!g.is_active(o) || g.is_active(n), "demotion without isolation");
        }
        (None, None) => unreachable!(),
    }
}

/// `lru_gen_folio_seq` (v6.14+, spec C.4).
pub fn lru_gen_folio_seq(mm: &Mm, g: &LruGen, pfn: Pfn, reclaiming: bool) -> u64 {
    let f = mm.frames.flags(pfn);
    let ty = folio_type(mm, pfn);
    let ws = (f & pg::WORKINGSET != 0) as u64;
    let gen = if f & pg::ACTIVE != 0 {
        MIN_NR_GENS - ws
    } else if reclaiming {
        MAX_NR_GENS
    } else if ty == LRU_GEN_ANON || (f & pg::RECLAIM != 0 && f & (pg::DIRTY | pg::WRITEBACK) != 0) {
        // anon not in the swap cache (the model never keeps one)
        MIN_NR_GENS
    } else {
        MAX_NR_GENS - ws
    };
    (g.max_seq + 1 - gen).max(g.min_seq[ty])
}

/// `lru_gen_add_folio`: to the generation `lru_gen_folio_seq` picks, clearing
/// PG_active; at the list tail when `reclaiming` (folio_rotate_reclaimable).
pub fn lru_gen_add_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, reclaiming: bool) {
    let seq = lru_gen_folio_seq(mm, g, pfn, reclaiming);
    lru_gen_add_folio_at(mm, g, lv, pfn, seq, reclaiming);
}

/// The part of `lru_gen_add_folio` every version shares once the sequence is chosen: set
/// the gen bits and clear PG_active, count the page, link it (tail when `reclaiming`).
pub fn lru_gen_add_folio_at(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, seq: u64, reclaiming: bool) {
    debug_assert!(folio_lru_gen(mm, pfn).is_none());
    let ty = folio_type(mm, pfn);
    let gen = gen_from_seq(seq);
    set_gen_bits(mm, pfn, Some(gen));
    mm.frames.clear(pfn, pg::ACTIVE);
    lru_gen_update_size(mm, g, lv, ty, mm.folio_nr_pages(pfn) as i64, None, Some(gen));
    list_add(mm, g, pfn, gen, ty, reclaiming);
    mm.frames.set(pfn, pg::LRU);
}

/// `lru_gen_del_folio`: unlink; PG_active set if it leaves an active generation not
/// for reclaim (folio_migrate_flags).
pub fn lru_gen_del_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, reclaiming: bool) {
    let gen = folio_lru_gen(mm, pfn).expect("on an MGLRU list");
    let ty = folio_type(mm, pfn);
    if !reclaiming && g.is_active(gen) {
        mm.frames.set(pfn, pg::ACTIVE);
    }
    set_gen_bits(mm, pfn, None);
    lru_gen_update_size(mm, g, lv, ty, mm.folio_nr_pages(pfn) as i64, Some(gen), None);
    list_del(mm, g, pfn);
    mm.frames.clear(pfn, pg::LRU);
}

/// `folio_inc_gen`: move the folio's bits to `min_seq + 1` (unless aging already
/// promoted it), clearing the reference bits `clear` (the version's mask); PG_reclaim
/// when `reclaiming`. Returns the new generation (the list move is the caller's).
pub fn folio_inc_gen(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, reclaiming: bool, clear: u32) -> usize {
    let ty = folio_type(mm, pfn);
    let old_gen = gen_from_seq(g.min_seq[ty]);
    let cur = folio_lru_gen(mm, pfn).expect("on an MGLRU list");
    if cur != old_gen {
        return cur;
    }
    let new_gen = (old_gen + 1) % MAX_NR_GENS as usize;
    mm.frames.clear(pfn, clear);
    set_gen_bits(mm, pfn, Some(new_gen));
    if reclaiming {
        mm.frames.set(pfn, pg::RECLAIM);
    }
    lru_gen_update_size(mm, g, lv, ty, mm.folio_nr_pages(pfn) as i64, Some(old_gen), Some(new_gen));
    new_gen
}

/// `folio_update_gen` (v6.14+): the two-strike rule for young PTEs. First sighting
/// (neither referenced nor workingset): set PG_referenced only. Otherwise promote the
/// bits to `gen`, set PG_workingset, clear PG_referenced and the counter. Returns the
/// old generation when the bits moved.
pub fn folio_update_gen(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, gen: usize) -> Option<usize> {
    if !mm.frames.test(pfn, pg::REFERENCED) && !mm.frames.test(pfn, pg::WORKINGSET) {
        set_refs_counter(mm, pfn, 0);
        mm.frames.set(pfn, pg::REFERENCED);
        return None;
    }
    let old = folio_lru_gen(mm, pfn)?;
    mm.frames.clear(pfn, LRU_REFS_FLAGS);
    mm.frames.set(pfn, pg::WORKINGSET);
    set_gen_bits(mm, pfn, Some(gen));
    if old != gen {
        // update_batch_size (applied at once)
        let ty = folio_type(mm, pfn);
        lru_gen_update_size(mm, g, lv, ty, mm.folio_nr_pages(pfn) as i64, Some(old), Some(gen));
    }
    Some(old)
}

/// `lru_gen_set_refs` (eviction/rmap path): first sighting sets PG_referenced and
/// returns false; otherwise PG_workingset replaces PG_referenced and returns true.
pub fn lru_gen_set_refs(mm: &mut Mm, pfn: Pfn) -> bool {
    if !mm.frames.test(pfn, pg::REFERENCED) && !mm.frames.test(pfn, pg::WORKINGSET) {
        set_refs_counter(mm, pfn, 0);
        mm.frames.set(pfn, pg::REFERENCED);
        return false;
    }
    mm.frames.clear(pfn, LRU_REFS_FLAGS);
    mm.frames.set(pfn, pg::WORKINGSET);
    true
}

/// `lru_gen_inc_refs` (v6.14+, spec C.3): an fd access. First: PG_referenced (counter
/// cleared); then the counter up to its maximum; then PG_workingset.
pub fn lru_gen_inc_refs(mm: &mut Mm, pfn: Pfn) {
    if mm.frames.test(pfn, pg::UNEVICTABLE) {
        return;
    }
    if !mm.frames.test(pfn, pg::REFERENCED) {
        set_refs_counter(mm, pfn, 0);
        mm.frames.set(pfn, pg::REFERENCED);
        return;
    }
    let c = refs_counter(mm, pfn);
    if c == (1 << LRU_REFS_WIDTH) - 1 {
        mm.frames.set(pfn, pg::WORKINGSET);
    } else {
        set_refs_counter(mm, pfn, c + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C.3: access N = 1..4 → tier order_base_2(N): 0,1,2,2; N ≥ 5 → PG_workingset, tier 3.
    #[test]
    fn tiers_from_fd_accesses() {
        assert_eq!((0..=4).map(order_base_2).collect::<Vec<_>>(), vec![0, 0, 1, 2, 2]);
        assert_eq!(lru_tier_from_refs(1, false), 0);
        assert_eq!(lru_tier_from_refs(2, false), 1);
        assert_eq!(lru_tier_from_refs(3, false), 2);
        assert_eq!(lru_tier_from_refs(4, false), 2);
        assert_eq!(lru_tier_from_refs(0, true), 3);
    }

    #[test]
    fn evictable_types_follow_swappiness() {
        assert_eq!(evictable_types(0), 1..=1);
        assert_eq!(evictable_types(60), 0..=1);
        assert_eq!(evictable_types(200), 0..=1);
        assert_eq!(evictable_types(201), 0..=0);
        let min_seq = [5, 7];
        assert_eq!(evictable_min_seq(&min_seq, 0), 7);
        assert_eq!(evictable_min_seq(&min_seq, 60), 5);
        assert_eq!(evictable_min_seq(&min_seq, 201), 5);
    }
}
