//! Unit tests of MGLRU's bookkeeping against numbers worked out from spec C.

use super::lrugen::*;
use super::{aging, mainline, Mainline, Mglru};
use crate::config::SimConfig;
use crate::mm::lruvec::LruList;
use crate::mm::page::pg;
use crate::mm::workingset::unpack_shadow;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;

fn machine() -> (Mm, Mglru<Mainline>) {
    machine_with(Mainline)
}

/// A 16 MiB machine with 64 trace pages and `variant`'s lruvecs online.
pub(super) fn machine_with<V: super::MglruVariant>(variant: V) -> (Mm, Mglru<V>) {
    machine_of(variant, &[("machine.memory", "16M")], 64)
}

/// A machine of `settings` with `pages` trace pages and `variant`'s lruvecs online.
fn machine_of<V: super::MglruVariant>(variant: V, settings: &[(&str, &str)], pages: usize) -> (Mm, Mglru<V>) {
    let mut c = SimConfig::default();
    for (k, v) in settings {
        c.set(k, v).unwrap();
    }
    let mut mm = Mm::new(&c);
    mm.pages.ensure(pages).unwrap();
    let mut p = Mglru::new(variant);
    for lv in 0..mm.lruvecs.len() as u32 {
        p.init_lruvec(&mut mm, lv);
    }
    (mm, p)
}

/// A 64 MiB machine with a 16 MiB ZONE_DMA, 256 trace pages; its zones lowest first.
fn machine_with_dma() -> (Mm, Mglru<Mainline>, [usize; 2]) {
    let (mm, p) = machine_of(Mainline, &[("machine.memory", "64M"), ("machine.zone_dma", "16M")], 256);
    let mut zones = mm.nodes[0].zones.clone();
    zones.sort_by_key(|&z| mm.zone_idx(z));
    (mm, p, [zones[0], zones[1]])
}

/// Allocate a frame for page `page` (root memcg), install it with `flags`, then
/// folio_add_lru. Returns the frame.
fn fault_in(mm: &mut Mm, p: &mut Mglru<Mainline>, page: u32, flags: u32) -> u32 {
    let pfn = mm.rmqueue(0, crate::mm::page_alloc::MigrateType::Movable).unwrap();
    mm.pages.pte[page as usize] = pfn;
    mm.frames.install(pfn, page, 0, flags);
    p.folio_add_lru(mm, pfn);
    pfn
}

/// C.4 on a fresh lruvec (max_seq 3, min_seq 0): a mapped fault (PG_active) joins
/// max_seq − 1 = gen 2, an active workingset refault max_seq = gen 3, a read() file
/// page the oldest gen 0 (max_seq − 3 clamped to min_seq), a read() workingset page
/// max_seq − 2 = gen 1. The two youngest gens (3, 2) count as active.
#[test]
fn generation_of_new_folios() {
    let (mut mm, mut p) = machine();
    let g = &p.lrugens[0];
    assert_eq!((g.max_seq, g.min_seq), (3, [0, 0]));
    assert_eq!(g.nr_gens(0), 4);
    let pfns = [
        fault_in(&mut mm, &mut p, 0, pg::SWAPBACKED | pg::MAPPED | pg::YOUNG),
        fault_in(&mut mm, &mut p, 1, pg::SWAPBACKED | pg::MAPPED | pg::WORKINGSET),
        fault_in(&mut mm, &mut p, 2, 0),
        fault_in(&mut mm, &mut p, 3, pg::WORKINGSET),
    ];
    assert_eq!(pfns.map(|pfn| folio_lru_gen(&mm, pfn).unwrap()), [2, 3, 0, 1]);
    assert!(pfns.iter().all(|&pfn| !mm.frames.test(pfn, pg::ACTIVE)), "PG_active is cleared on an MGLRU list");
    let l = &mm.lruvecs[0];
    assert_eq!((l.lru_size[LruList::ActiveAnon as usize], l.lru_size[LruList::InactiveFile as usize]), (2, 2));
    p.check_invariants(&mm).unwrap();
}

/// C.5: inc_max_seq with MAX_NR_GENS live gens retires the oldest: its three file folios
/// move to min_seq + 1, counted as protected (tier 0) and at once folded into the EMA by
/// reset_ctrl_pos(carryover): avg_total = (0 + 3) / 2 = 1, protected cleared;
/// min_seq 0 → 1, max_seq 3 → 4; gen 2 (was max_seq − 1) turns inactive, so the anon
/// folio moves to the inactive size.
#[test]
fn inc_max_seq_retires_the_oldest_generation() {
    let (mut mm, mut p) = machine();
    fault_in(&mut mm, &mut p, 0, pg::SWAPBACKED | pg::MAPPED);
    let files = [2, 3, 4].map(|page| fault_in(&mut mm, &mut p, page, 0));
    let g = &mut p.lrugens[0];
    assert!(aging::inc_max_seq::<Mainline>(&mut mm, g, 0, 3, 60));
    assert_eq!((g.max_seq, g.min_seq), (4, [1, 1]));
    assert!(files.iter().all(|&f| folio_lru_gen(&mm, f) == Some(1)));
    assert_eq!((g.protected[LRU_GEN_FILE][0], g.avg_total[LRU_GEN_FILE][0]), (0, 1));
    let l = &mm.lruvecs[0];
    assert_eq!((l.lru_size[LruList::ActiveAnon as usize], l.lru_size[LruList::InactiveAnon as usize]), (0, 1));
    // a stale seq is refused
    assert!(!aging::inc_max_seq::<Mainline>(&mut mm, &mut p.lrugens[0], 0, 3, 60));
    p.check_invariants(&mm).unwrap();
}

/// C.3: fd accesses N = 1..=4 give refs N (tiers 0,1,2,2); the 5th sets PG_workingset.
#[test]
fn fd_accesses_count_up_to_workingset() {
    let (mut mm, mut p) = machine();
    let f = fault_in(&mut mm, &mut p, 0, 0);
    let mut tiers = Vec::new();
    for _ in 0..5 {
        lru_gen_inc_refs(&mut mm, f);
        tiers.push((folio_lru_refs(&mm, f), lru_tier_from_refs(folio_lru_refs(&mm, f), mm.frames.test(f, pg::WORKINGSET))));
    }
    assert_eq!(tiers, vec![(1, 0), (2, 1), (3, 2), (4, 2), (4, 3)]);
}

/// v6.14+ `folio_inc_gen` clears `LRU_REFS_FLAGS` = counter | PG_referenced and keeps
/// PG_workingset (the v6.14 rework: "after PG_workingset is set on a folio, it remains
/// until this folio is either reclaimed, or deactivated"). A folio accessed five times
/// through fds (counter 3, PG_referenced, PG_workingset) retired by aging moves to
/// min_seq + 1 with refs 0 and PG_workingset — still tier 3.
#[test]
fn folio_inc_gen_keeps_pg_workingset() {
    let (mut mm, mut p) = machine();
    let f = fault_in(&mut mm, &mut p, 2, 0);
    for _ in 0..5 {
        lru_gen_inc_refs(&mut mm, f);
    }
    assert!(mm.frames.test(f, pg::WORKINGSET) && folio_lru_refs(&mm, f) == 4);
    let g = &mut p.lrugens[0];
    assert!(aging::inc_max_seq::<Mainline>(&mut mm, g, 0, 3, 60));
    assert_eq!(folio_lru_gen(&mm, f), Some(1));
    assert!(mm.frames.test(f, pg::WORKINGSET), "PG_workingset survives folio_inc_gen");
    assert!(!mm.frames.test(f, pg::REFERENCED) && refs_counter(&mm, f) == 0);
    assert_eq!(lru_tier_from_refs(folio_lru_refs(&mm, f), true), 3);
    // The lazily promoted folio (refs + workingset == 5) is not counted as protected.
    assert_eq!(g.avg_total[LRU_GEN_FILE], [0; 4]);
    p.check_invariants(&mm).unwrap();
}

/// C.6: two strikes for a young PTE — the first sighting only sets PG_referenced, the
/// second promotes to the youngest gen with PG_workingset.
#[test]
fn folio_update_gen_two_strikes() {
    let (mut mm, mut p) = machine();
    let f = fault_in(&mut mm, &mut p, 2, 0);
    let g = &mut p.lrugens[0];
    assert_eq!(folio_update_gen(&mut mm, g, 0, f, 3), None);
    assert!(mm.frames.test(f, pg::REFERENCED) && folio_lru_gen(&mm, f) == Some(0));
    assert_eq!(folio_update_gen(&mut mm, g, 0, f, 3), Some(0));
    assert_eq!(folio_lru_gen(&mm, f), Some(3));
    assert!(mm.frames.test(f, pg::WORKINGSET) && !mm.frames.test(f, pg::REFERENCED));
    assert_eq!(mm.lruvecs[0].lru_size[LruList::ActiveFile as usize], 1);
    p.check_invariants(&mm).unwrap();
}

/// C.10: token = (min_seq << 2) | (refs − 1): min_seq 5, refs 3 → 22, evicted counted in
/// tier 2. Recent iff |max_seq − 5| < 4.
#[test]
fn eviction_token_and_recency() {
    let (mut mm, mut p) = machine();
    let f = fault_in(&mut mm, &mut p, 2, 0);
    for _ in 0..3 {
        lru_gen_inc_refs(&mut mm, f);
    }
    p.lrugens[0].min_seq[LRU_GEN_FILE] = 5;
    let shadow = mainline::lru_gen_eviction(&mut mm, &mut p.lrugens, f);
    let (memcg, nid, token, ws) = unpack_shadow(shadow);
    assert_eq!((memcg, nid, token, ws), (0, 0, 22, false));
    assert_eq!(p.lrugens[0].evicted[LRU_GEN_FILE][2], 1);
    for (max_seq, recent) in [(5, true), (8, true), (9, false), (2, true), (1, false)] {
        p.lrugens[0].max_seq = max_seq;
        assert_eq!(mainline::lru_gen_test_recent(&mm, &p.lrugens, shadow).3, recent, "max_seq {max_seq}");
    }
}

/// C.7: `scan_folios` works from a budget of MAX_LRU_BATCH folios whatever
/// `get_nr_to_scan` asked for (v6.6 to v6.15), so one batch isolates MIN_LRU_BATCH = 64
/// clean file folios of the oldest generation even when nr_to_scan is 200 >> 2 = 50; then
/// scanned 64 ≥ 50 ends `try_to_shrink_lruvec`. (With `min(nr_to_scan, MAX_LRU_BATCH)`,
/// a later kernel's rule, it would isolate 50.)
#[test]
fn scan_folios_batch_ignores_nr_to_scan() {
    use crate::mm::vmstat::Ev;
    use crate::vmscan::{Reclaimer, ScanControl};
    let (mut mm, mut p) = machine();
    mm.pages.ensure(200).unwrap();
    for page in 0..200 {
        fault_in(&mut mm, &mut p, page, 0);
    }
    // Charged as the fault path's try_charge would: reclaim uncharges what it frees.
    mm.memcgs[0].usage += 200;
    assert_eq!(p.lrugens[0].nr_pages[0][LRU_GEN_FILE], 200);
    let mut sc = ScanControl::new(Reclaimer::Direct, 32);
    sc.priority = 2;
    p.try_to_shrink_lruvec(&mut mm, 0, &mut sc);
    assert_eq!(mm.vmstat.get(Ev::PgscanFile), MIN_LRU_BATCH);
    assert_eq!(mm.vmstat.get(Ev::PgscanDirect), MIN_LRU_BATCH);
    assert_eq!(sc.nr_reclaimed, MIN_LRU_BATCH);
    p.check_invariants(&mm).unwrap();
}

/// Fault in `n` mapped pages from `first`, the first `young` of them with a young PTE.
fn map_pages(mm: &mut Mm, p: &mut Mglru<Mainline>, first: u32, n: u32, young: u32) {
    for page in first..first + n {
        let flags = pg::SWAPBACKED | pg::MAPPED | if page < first + young { pg::YOUNG } else { 0 };
        fault_in(mm, p, page, flags);
    }
}

/// C.6, `walk_pte_range` (mm/vmscan.c v6.6–v6.15): `total++` precedes `get_pte_pfn`, so
/// every PTE of the range counts, present or not, and the PMD is carried into the next
/// round's Bloom filter when `young * 8 >= total`. 600 pages: PMD 0 is a full 512-PTE
/// table with 100 present PTEs, 63 of them young: 63 * 8 = 504 < 512, left out (counting
/// only present PTEs, 504 >= 100, it would go in). PMD 1 is pages 512..600, 88 PTEs,
/// 30 present, 11 young: 11 * 8 = 88 >= 88, carried over.
#[test]
fn walk_pte_range_counts_every_pte_of_the_range() {
    use crate::vmscan::{Reclaimer, ScanControl};
    let (mut mm, mut p) = machine();
    mm.pages.ensure(600).unwrap();
    map_pages(&mut mm, &mut p, 0, 100, 63);
    map_pages(&mut mm, &mut p, 512, 30, 11);
    let mut sc = ScanControl::new(Reclaimer::Direct, 32);
    let g = &mut p.lrugens[0];
    assert!(aging::try_to_inc_max_seq::<Mainline>(&mut mm, g, 0, 3, 60, false, &mut sc));
    assert_eq!(g.max_seq, 4);
    assert!(!aging::bloom_test(g, 4, 0), "63 young of 512 PTEs: not dense");
    assert!(aging::bloom_test(g, 4, 1), "11 young of 88 PTEs: dense");
    // The walk cleared the young PTEs it counted.
    assert!((0..600).filter_map(|page| mm.pages.pte.get(page)).all(|&pte| !crate::mm::page::is_resident(pte) || !mm.frames.test(pte, pg::YOUNG)));
}

/// C.6, `lru_gen_look_around` (6.12 and v6.15 `young = 1` after clearing the folio's own
/// PTE; v6.6 counts that PTE in its loop): the window around page 0 of a 512-page PMD is
/// MIN_LRU_BATCH = 64 PTEs, so `suitable_to_scan(64, young)` needs young >= 8: the folio
/// itself and 7 young neighbours feed the Bloom filter of `max_seq`; 6 do not.
#[test]
fn look_around_counts_the_folio_itself_as_young() {
    use crate::vmscan::{Reclaimer, ScanControl};
    for (neighbours, dense) in [(7, true), (6, false)] {
        let (mut mm, mut p) = machine();
        mm.pages.ensure(512).unwrap();
        map_pages(&mut mm, &mut p, 0, 64, 1 + neighbours);
        let g = &mut p.lrugens[0];
        g.filters[(g.max_seq % 2) as usize] = Some(Vec::new());
        let trigger = mm.pages.pte[0];
        let mut sc = ScanControl::new(Reclaimer::Direct, 32);
        assert!(aging::lru_gen_look_around::<Mainline>(&mut mm, g, 0, trigger, false, &mut sc));
        assert_eq!(aging::bloom_test(g, g.max_seq, 0), dense, "{neighbours} young neighbours");
    }
}

/// 6.12's `should_abort_scan` for kswapd: every zone up to `sc->reclaim_idx` above
/// `wmark_pages(zone, WMARK_HIGH)` — its boost included — plus MIN_LRU_BATCH. A pass for
/// ZONE_DMA alone stops once DMA is there, whatever the zone above holds; a boosted zone
/// keeps it going.
#[test]
fn kswapd_aborts_on_the_eligible_zones_boosts_included() {
    use super::eviction::should_abort_scan;
    use crate::mm::page_alloc::{MigrateType, ZONE_MOVABLE};
    use crate::vmscan::{Reclaimer, ScanControl};
    let (mut mm, _, [dma, top]) = machine_with_dma();
    let dma_idx = mm.zone_idx(dma);
    // The zone above DMA below its high watermark + MIN_LRU_BATCH, DMA well above it.
    let keep = mm.buddy.zones[top].high_wmark_pages() + MIN_LRU_BATCH - 10;
    while mm.buddy.zones[top].free_pages > keep {
        mm.buddy.alloc(&mut mm.lists, &mut mm.frames.owner, top, 0, MigrateType::Movable).unwrap();
    }
    let mut sc = ScanControl::new(Reclaimer::Kswapd, u64::MAX);
    sc.reclaim_idx = ZONE_MOVABLE;
    assert!(!should_abort_scan::<Mainline>(&mm, 0, &sc), "a full pass goes on while the top zone is short");
    sc.reclaim_idx = dma_idx;
    assert!(should_abort_scan::<Mainline>(&mm, 0, &sc), "a pass for DMA alone stops on DMA");
    let free = mm.buddy.zones[dma].free_pages;
    mm.buddy.zones[dma].watermark_boost = free;
    assert!(!should_abort_scan::<Mainline>(&mm, 0, &sc), "DMA's boost is part of its high watermark");
}

/// Pages `0..n` as clean read() file folios added to the LRU in order (the first is the
/// oldest generation's tail), page `i` allocated from zone `zone_of(i)`.
fn add_file_pages(mm: &mut Mm, p: &mut Mglru<Mainline>, n: u32, zone_of: impl Fn(u32) -> usize) -> Vec<crate::mm::page_alloc::Pfn> {
    (0..n)
        .map(|page| {
            let pfn = mm.buddy.alloc(&mut mm.lists, &mut mm.frames.owner, zone_of(page), 0, crate::mm::page_alloc::MigrateType::Movable).unwrap();
            mm.pages.pte[page as usize] = pfn;
            mm.frames.install(pfn, page, 0, 0);
            p.folio_add_lru(mm, pfn);
            pfn
        })
        .collect()
}

/// 6.12's `scan_folios` for kswapd balancing ZONE_DMA alone: the eligible zone's folios
/// are isolated, and when they give fewer than MIN_LRU_BATCH the other zones' folios of
/// the oldest generation are moved a generation up as ineligible (PGREFILL), not taken.
/// With every zone eligible the zone above DMA comes first, in LRU order.
#[test]
fn dma_only_scan_takes_dma_and_ages_the_rest() {
    use crate::mm::page_alloc::ZONE_MOVABLE;
    use crate::mm::vmstat::Ev;
    use crate::vmscan::{Reclaimer, ScanControl};
    for reclaim_idx in [None, Some(ZONE_MOVABLE)] {
        let (mut mm, mut p, [dma, top]) = machine_with_dma();
        // 200 clean read() file pages: 190 from the zone above DMA, then 10 from DMA
        // (the oldest generation; the first added is the list's tail).
        let pfns = add_file_pages(&mut mm, &mut p, 200, |page| if page < 190 { top } else { dma });
        assert!(pfns.iter().all(|&pfn| folio_lru_gen(&mm, pfn) == Some(0)));
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 1 << 20);
        sc.reclaim_idx = reclaim_idx.unwrap_or(mm.zone_idx(dma));
        let mut list = Vec::new();
        let refill = mm.vmstat.get(Ev::Pgrefill);
        p.scan_folios(&mut mm, 0, &mut sc, LRU_GEN_FILE, 0, &mut list);
        let sorted = mm.vmstat.get(Ev::Pgrefill) - refill;
        if reclaim_idx.is_none() {
            assert_eq!(list, pfns[190..], "DMA's 10 folios, tail first");
            assert_eq!(sorted, 190, "the zone above: ineligible, a generation up");
            assert!(pfns[..190].iter().all(|&pfn| folio_lru_gen(&mm, pfn) == Some(1)));
        } else {
            assert_eq!(list.len() as u64, MIN_LRU_BATCH, "a batch in LRU order");
            assert_eq!(list[0], pfns[0]);
            assert_eq!(sorted, 0);
        }
    }
}

/// 6.12's `scan_folios` keeps a generation's folios on one list per zone and takes the
/// eligible zones from `sc->reclaim_idx` down (`(reclaim_idx + i) % MAX_NR_ZONES`): with
/// ZONE_DMA's folios at the tail of the oldest generation, a batch takes the zone above's
/// folios first and DMA's only once those gave fewer than MIN_LRU_BATCH. (In LRU order
/// DMA's would go first and ZONE_DMA, refilled, would take the next allocations that
/// fall back to it: the guest's `tpcc1` with MGLRU allocates 2,697 pages from ZONE_DMA,
/// the model in LRU order 113,608, in zone order 2,761; docs/validation.md.)
#[test]
fn scan_takes_the_highest_eligible_zone_first() {
    use crate::mm::page_alloc::ZONE_MOVABLE;
    use crate::vmscan::{Reclaimer, ScanControl};
    let (mut mm, mut p, [dma, top]) = machine_with_dma();
    // 100 clean read() file pages of the oldest generation: 20 from DMA first (the
    // list's tail), then 80 from the zone above.
    let pfns = add_file_pages(&mut mm, &mut p, 100, |page| if page < 20 { dma } else { top });
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 1 << 20);
    sc.reclaim_idx = ZONE_MOVABLE;
    let mut list = Vec::new();
    p.scan_folios(&mut mm, 0, &mut sc, LRU_GEN_FILE, 0, &mut list);
    assert_eq!(list, pfns[20..20 + MIN_LRU_BATCH as usize], "the zone above's folios, tail first");
    list.clear();
    p.scan_folios(&mut mm, 0, &mut sc, LRU_GEN_FILE, 0, &mut list);
    let expect: Vec<_> = pfns[20 + MIN_LRU_BATCH as usize..].iter().chain(&pfns[..20]).copied().collect();
    assert_eq!(list, expect, "then DMA's, once the zone above gave fewer than a batch");
}
