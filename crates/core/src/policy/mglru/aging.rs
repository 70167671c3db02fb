//! Aging (mm/vmscan.c v6.15, spec C.5–C.6): producing a new generation
//! (`try_to_inc_max_seq`, `inc_max_seq`, `inc_min_seq`) and harvesting accessed bits —
//! the page-table walk of a memcg's address space and the rmap-time look-around.
//!
//! Address space model: a trace page id is its virtual page; a "PMD" is a block of 512
//! consecutive page ids, the unit Bloom filters track and look-around stays within.
//! Abstractions: one walker and one mm per memcg (the mm list iteration collapses to
//! one walk per aging); the Bloom filters are exact sets of PMD blocks (no false
//! positives); walk batching and lock drops are not modelled; no VMA boundaries inside a
//! PMD, so a walked PMD's range is its whole block of page ids.

use super::lrugen::*;
use super::pid::reset_ctrl_pos;
use super::MglruVariant;
use crate::mm::lruvec::{LruList, LruvecId, LRU_ACTIVE, LRU_FILE};
use crate::mm::page::{is_resident, pg};
use crate::mm::page_alloc::Pfn;
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::vmscan::ScanControl;

/// Pages per PMD (x86-64).
pub const PMD_PAGES: usize = 512;

/// `suitable_to_scan`: at least one young PTE per cache line of PTEs on average —
/// `young * n >= total`, n = clamp(cache_line_size() / sizeof(pte_t), 2, 8) = 8 on x86.
#[inline]
fn suitable_to_scan(total: u64, young: u64) -> bool {
    young * 8 >= total
}

/// `test_bloom_filter`: no filter (the first round) lets every PMD through.
pub fn bloom_test(g: &LruGen, seq: u64, pmd: usize) -> bool {
    match &g.filters[(seq % 2) as usize] {
        None => true,
        Some(bits) => bits.get(pmd / 64).is_some_and(|w| w & (1 << (pmd % 64)) != 0),
    }
}

fn bloom_update(g: &mut LruGen, seq: u64, pmd: usize) {
    if let Some(bits) = &mut g.filters[(seq % 2) as usize] {
        if bits.len() <= pmd / 64 {
            bits.resize(pmd / 64 + 1, 0);
        }
        bits[pmd / 64] |= 1 << (pmd % 64);
    }
}

/// Is the page at `page` a present PTE of `memcg` on `node` mapping a folio that
/// `get_pfn_folio` takes (`get_pte_pfn` + `get_pfn_folio`; the variant says whether an
/// isolated one counts, and an anon one without `can_swap`)? Returns the PTE's frame
/// (whose `YOUNG` is the PTE's accessed bit) and the folio's: the same but for a THP
/// mapped by PTEs, whose folio is its head. A PMD-mapped THP is seen at its head's PTE
/// only (the PMD's accessed bit; its tails carry no LRU flags).
#[inline(always)]
fn pte_folio<V: MglruVariant>(mm: &Mm, page: usize, memcg: u16, node: u16, can_swap: bool) -> Option<(Pfn, Pfn)> {
    let pfn = mm.pages.pte[page];
    if !is_resident(pfn) {
        return None;
    }
    let mut f = mm.frames.flags(pfn);
    if f & pg::MAPPED == 0 {
        return None;
    }
    let mut folio = pfn;
    if f & pg::COMPOUND != 0 {
        (folio, f) = pte_mapped_thp_folio(mm, pfn, f);
    }
    if !V::get_pfn_folio_flags_ok(f, can_swap) || mm.node_of(pfn) != node {
        return None;
    }
    // With one memcg every folio is charged to it: skip the owner load.
    if mm.memcgs.len() > 1 && mm.frames.memcg(pfn) != memcg {
        return None;
    }
    Some((pfn, folio))
}

/// [`pte_folio`] for a THP's frame: the head and its flags if the THP is mapped by PTEs,
/// else the frame itself.
#[inline(never)]
#[cold]
fn pte_mapped_thp_folio(mm: &Mm, pfn: Pfn, f: u32) -> (Pfn, u32) {
    let folio = mm.page_folio(pfn);
    if mm.folio_pte_mapped(folio) {
        (folio, mm.frames.flags(folio))
    } else {
        (pfn, f)
    }
}

/// Bit `i` set when `ptes[i]` is a present PTE (up to 64 PTEs; a branch-free pass the
/// compiler vectorises, so the walks below touch only the present ones).
#[inline]
fn present_mask(ptes: &[u32]) -> u64 {
    debug_assert!(ptes.len() <= 64);
    ptes.iter().enumerate().fold(0u64, |m, (i, &pte)| m | ((is_resident(pte) as u64) << i))
}

/// Iterate the set bits of `m`, lowest (lowest address) first.
#[inline]
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i
        })
    })
}

/// `walk_update_folio`: with a walk (kswapd, aging) the two-strike `folio_update_gen`;
/// without one (direct reclaim look-around) `lru_gen_set_refs` and, on the second
/// strike, `folio_activate`.
pub fn walk_update_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, new_gen: usize, walk: bool) {
    if walk {
        folio_update_gen(mm, g, lv, pfn, new_gen);
    } else if lru_gen_set_refs(mm, pfn) {
        if let Some(old) = folio_lru_gen(mm, pfn) {
            if old != new_gen && !mm.frames.test(pfn, pg::ACTIVE) {
                // folio_activate → lru_activate
                lru_gen_del_folio(mm, g, lv, pfn, false);
                mm.frames.set(pfn, pg::ACTIVE);
                lru_gen_add_folio(mm, g, lv, pfn, false);
                mm.count_lruvec_events(lv, Ev::Pgactivate, mm.folio_nr_pages(pfn));
            }
        }
    }
}

/// Walk the memcg's page tables for generation `seq` (`walk_mm` over every "PMD"):
/// young PTEs are cleared and their folios promoted to `gen(max_seq)` on the second
/// strike; PMDs dense in young PTEs go into the Bloom filter for `seq + 1`.
fn walk_mm<V: MglruVariant>(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, seq: u64, swappiness: u32, force_scan: bool, sc: &mut ScanControl) {
    let (memcg, node) = (mm.lruvecs[lv as usize].memcg, mm.lruvecs[lv as usize].node);
    // iterate_mm_list: the first walker of a round resets the filter for seq + 1.
    g.filters[((seq + 1) % 2) as usize] = Some(Vec::new());
    let new_gen = gen_from_seq(g.max_seq);
    let nr_pages = mm.pages.len();
    let walk_pte_ns = mm.cfg.cost.walk_pte_ns;
    for pmd in 0..nr_pages.div_ceil(PMD_PAGES) {
        if !force_scan && !bloom_test(g, seq, pmd) {
            continue;
        }
        let (start, end) = (pmd * PMD_PAGES, ((pmd + 1) * PMD_PAGES).min(nr_pages));
        sc.cost_ns += walk_pte_ns * (end - start) as u64;
        // walk_pte_range: `total++` comes before `get_pte_pfn` drops a non-present or old
        // PTE, so `total` is every PTE of the range (mm/vmscan.c v6.6–v6.15).
        let total = (end - start) as u64;
        let mut young = 0u64;
        // The folio last updated: a THP mapped by PTEs is updated once for a run of its
        // young PTEs (6.12's per-PTE `folio_update_gen` is idempotent; v6.15 batches a
        // run of one folio's PTEs into one `walk_update_folio`).
        let mut last = Pfn::MAX;
        // The PTEs in address order; the non-present ones, which change nothing but
        // `total`, are skipped by mask, 64 at a time.
        for chunk in (start..end).step_by(64) {
            let present = present_mask(&mm.pages.pte[chunk..(chunk + 64).min(end)]);
            for page in bits(present).map(|i| chunk + i) {
                let Some((pfn, folio)) = pte_folio::<V>(mm, page, memcg, node, swappiness != 0) else { continue };
                // VMAs skipped by swappiness: anon when 0, file when anon-only. A block
                // of only these finds no young PTE, so it stays out of the filter, as a
                // PMD the kernel's walk never reaches does.
                let file = mm.frames.is_file(pfn);
                if (!file && swappiness == 0) || (file && swappiness > MAX_SWAPPINESS) {
                    continue;
                }
                if !mm.frames.test_and_clear(pfn, pg::YOUNG) {
                    continue;
                }
                young += 1;
                if folio != last {
                    V::walk_update_folio(mm, g, lv, folio, new_gen, true);
                    last = folio;
                }
            }
        }
        if suitable_to_scan(total, young) {
            bloom_update(g, seq + 1, pmd);
        }
    }
}

/// `try_to_inc_max_seq`: walk the page tables (once per generation), then
/// `inc_max_seq`. Returns false if another walker already produced this generation.
pub fn try_to_inc_max_seq<V: MglruVariant>(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, seq: u64, swappiness: u32, force_scan: bool, sc: &mut ScanControl) -> bool {
    debug_assert!(seq <= g.max_seq);
    if seq <= g.mm_state_seq {
        return false;
    }
    walk_mm::<V>(mm, g, lv, seq, swappiness, force_scan, sc);
    g.mm_state_seq = seq;
    inc_max_seq::<V>(mm, g, lv, seq, swappiness)
}

/// `inc_max_seq`: retire the oldest generation of any type that has MAX_NR_GENS, update
/// the compat active/inactive sizes, stamp the new generation's birth, `max_seq++`.
pub fn inc_max_seq<V: MglruVariant>(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, seq: u64, swappiness: u32) -> bool {
    if seq != g.max_seq {
        return false;
    }
    for ty in 0..2 {
        if g.nr_gens(ty) == MAX_NR_GENS {
            V::inc_min_seq(mm, g, lv, ty, swappiness);
        }
    }
    // Both sides of max_seq: max_seq - 1 turns inactive, max_seq + 1 active.
    let prev = gen_from_seq(g.max_seq - 1);
    let next = gen_from_seq(g.max_seq + 1);
    for ty in 0..2 {
        let delta = g.nr_pages[prev][ty] - g.nr_pages[next][ty];
        if delta != 0 {
            let lru = LRU_FILE * ty;
            mm.update_lru_size(lv, LruList::from_index(lru), delta);
            mm.update_lru_size(lv, LruList::from_index(lru + LRU_ACTIVE), -delta);
        }
    }
    for ty in 0..2 {
        reset_ctrl_pos(g, ty, false);
    }
    g.timestamps[next] = mm.now;
    g.max_seq += 1;
    true
}

/// `inc_min_seq`: move every folio of the oldest generation to the next (counting it as
/// protected unless lazily promoted) — skipped for a type that is not evictable under
/// this swappiness, whose oldest folios then wrap into the new youngest generation.
pub fn inc_min_seq(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, ty: usize, swappiness: u32) {
    let skip = (ty == LRU_GEN_FILE && swappiness > MAX_SWAPPINESS) || (ty == LRU_GEN_ANON && swappiness == 0);
    if !skip {
        let old_gen = gen_from_seq(g.min_seq[ty]);
        let head = g.head(old_gen, ty);
        while let Some(pfn) = mm.lists.tail(head) {
            let refs = folio_lru_refs(mm, pfn);
            let ws = mm.frames.test(pfn, pg::WORKINGSET);
            let new_gen = folio_inc_gen(mm, g, lv, pfn, false, LRU_REFS_FLAGS);
            list_move(mm, g, pfn, new_gen, ty, true);
            if refs + ws as u32 != (1 << LRU_REFS_WIDTH) + 1 {
                g.protected[ty][lru_tier_from_refs(refs, ws)] += mm.folio_nr_pages(pfn);
            }
        }
    }
    reset_ctrl_pos(g, ty, true);
    g.min_seq[ty] += 1;
}

/// The PTEs `lru_gen_look_around` scans for the page at `addr`: its PMD, narrowed to
/// MIN_LRU_BATCH PTEs around it (`[start, end)` page ids).
pub fn look_around_window(addr: usize, nr_pages: usize) -> (usize, usize) {
    let pmd = addr / PMD_PAGES;
    let (mut start, mut end) = (pmd * PMD_PAGES, ((pmd + 1) * PMD_PAGES).min(nr_pages));
    let batch = MIN_LRU_BATCH as usize;
    if end - start > batch {
        if addr - start < batch / 2 {
            end = start + batch;
        } else if end - addr < batch / 2 {
            start = end - batch;
        } else {
            start = addr - batch / 2;
            end = addr + batch / 2;
        }
    }
    (start, end)
}

/// Host-side prefetch (no simulated effect) for a batch of isolated folios about to go
/// through `shrink_folio_list`: each folio's PTE and its shadow or swap slot (written on eviction)
/// and, for a mapped folio whose PTE is young, the PTEs its look-around will read. (The
/// order-0 buddy's order, read when the frame is freed, is in the owner word beside the
/// folio's own, which this reads.)
pub fn prefetch_isolated(mm: &Mm, folios: &[Pfn]) {
    use crate::mm::prefetch::{prefetch, prefetch_range};
    for &pfn in folios {
        let page = mm.frames.page(pfn);
        if page == crate::mm::page::NO_PAGE {
            // The head of a THP mapped by PTEs, its own page unmapped.
            continue;
        }
        let page = page as usize;
        if mm.frames.flags(pfn) & (pg::MAPPED | pg::YOUNG) == pg::MAPPED | pg::YOUNG {
            let (start, end) = look_around_window(page, mm.pages.len());
            prefetch_range(&mm.pages.pte, start, end);
        } else {
            prefetch(&mm.pages.pte, page);
        }
        // What eviction writes besides the PTE: a file page's shadow (an anon page's swap
        // entry goes into the PTE).
        if mm.frames.is_file(pfn) {
            mm.pages.prefetch_shadow(page);
        }
    }
}

/// `folio_referenced`'s rmap walk of an isolated folio under MGLRU: each young PTE
/// mapping it runs `lru_gen_look_around` (`folio_referenced_one`); true if one did. A
/// THP mapped by PTEs is walked PTE by PTE in address order, a PTE already cleared by an
/// earlier look-around's window no longer young.
#[inline(always)]
pub fn folio_look_around<V: MglruVariant>(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, folio: Pfn, walk: bool, sc: &mut ScanControl) -> bool {
    if !mm.frames.test(folio, pg::HEAD) {
        return lru_gen_look_around::<V>(mm, g, lv, folio, walk, sc);
    }
    thp_look_around::<V>(mm, g, lv, folio, walk, sc)
}

/// [`folio_look_around`] of a THP: PMD-mapped, its head's PTE (the PMD's accessed bit);
/// mapped by PTEs, each young one in turn.
#[inline(never)]
fn thp_look_around<V: MglruVariant>(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, folio: Pfn, walk: bool, sc: &mut ScanControl) -> bool {
    if !mm.folio_pte_mapped(folio) {
        return lru_gen_look_around::<V>(mm, g, lv, folio, walk, sc);
    }
    let mut referenced = false;
    for f in folio..folio + crate::thp::HPAGE_PMD_NR {
        if mm.frames.flags(f) & (pg::MAPPED | pg::YOUNG) == pg::MAPPED | pg::YOUNG {
            referenced |= lru_gen_look_around::<V>(mm, g, lv, f, walk, sc);
        }
    }
    referenced
}

/// `lru_gen_look_around` for the young PTE of `pfn` found by rmap during eviction:
/// clear it, then harvest the young PTEs of up to MIN_LRU_BATCH neighbouring pages in
/// the same PMD (promoting their folios), and feed the PMD to the page-table walker's
/// Bloom filter when it is dense. Returns whether `pfn`'s own PTE was young.
pub fn lru_gen_look_around<V: MglruVariant>(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, walk: bool, sc: &mut ScanControl) -> bool {
    if !mm.frames.test_and_clear(pfn, pg::YOUNG) {
        return false;
    }
    let addr = mm.frames.page(pfn) as usize;
    let (memcg, node) = (mm.lruvecs[lv as usize].memcg, mm.lruvecs[lv as usize].node);
    let pmd = addr / PMD_PAGES;
    let (start, end) = look_around_window(addr, mm.pages.len());
    if end - start == 1 {
        return true;
    }
    sc.cost_ns += mm.cfg.cost.walk_pte_ns * (end - start) as u64;
    let new_gen = gen_from_seq(g.max_seq);
    // `can_swap = !folio_is_file_lru(folio)` (6.12, v6.6): see `get_pfn_folio_flags_ok`.
    let can_swap = !mm.frames.is_file(pfn);
    // `young` counts this folio's PTE too: 6.12 and v6.15 clear it first and start at
    // `young = 1`; v6.6 entered with it still young and counted it in the loop.
    let mut young = 1;
    // spec C.6: a PTE that is not young is skipped before its folio is looked up. First
    // the young bits of every present PTE of the window (independent loads), then the
    // young ones in address order: updating one folio changes no other's PTE or flags,
    // so this is the kernel's single pass.
    let ptes = &mm.pages.pte[start..end];
    let young_mask = bits(present_mask(ptes)).fold(0u64, |m, i| m | ((mm.frames.test(ptes[i], pg::YOUNG) as u64) << i));
    let mut last = Pfn::MAX;
    for page in bits(young_mask).map(|i| start + i) {
        let Some((nb, folio)) = pte_folio::<V>(mm, page, memcg, node, can_swap) else { continue };
        mm.frames.clear(nb, pg::YOUNG);
        young += 1;
        if folio != last {
            V::walk_update_folio(mm, g, lv, folio, new_gen, walk);
            last = folio;
        }
    }
    // `suitable_to_scan(i, young)`: `i` is the window's PTE count.
    if suitable_to_scan((end - start) as u64, young) {
        let max_seq = g.max_seq;
        bloom_update(g, max_seq, pmd);
    }
    true
}
