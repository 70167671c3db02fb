//! Unit tests of `mglru@6.12`: each point where 6.12.117's source differs from the fix
//! variant (v6.6 + 081488051d28), with numbers worked out from that source; each test
//! compares the two, so it fails if `Stable612` lost the change.

use super::super::lrugen::*;
use super::super::memcg_lru::{MemcgLruOp, Seg};
use super::super::v6_6::fix_underprotected_page_cache::FixUnderprotectedPageCache as Fix;
use super::super::v6_6::lrugen::{folio_inc_refs, folio_lru_refs, lru_tier_from_refs};
use super::super::v6_6::{Released, V66Hooks, V66};
use super::super::{Mainline, Mglru, MglruVariant};
use super::Stable612;
use crate::config::SimConfig;
use crate::mm::page::pg;
use crate::mm::page_alloc::{MigrateType, WMARK_HIGH};
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;
use crate::vmscan::{Reclaimer, ScanControl, DEF_PRIORITY};

fn machine_with<V: MglruVariant>(variant: V, kv: &[(&str, &str)]) -> (Mm, Mglru<V>) {
    let mut c = SimConfig::default();
    c.set("machine.memory", "16M").unwrap();
    for (k, v) in kv {
        c.set(k, v).unwrap();
    }
    let mut mm = Mm::new(&c);
    mm.pages.ensure(2048).unwrap();
    let mut p = Mglru::new(variant);
    for lv in 0..mm.lruvecs.len() as u32 {
        p.init_lruvec(&mut mm, lv);
    }
    (mm, p)
}

fn machine<H: V66Hooks>() -> (Mm, Mglru<V66<H>>) {
    machine_with(V66::<H>::new(), &[])
}

/// Install page `page` (root memcg) in a new frame with `flags`, then folio_add_lru.
fn fault_in<V: MglruVariant>(mm: &mut Mm, p: &mut Mglru<V>, page: u32, flags: u32) -> u32 {
    let pfn = mm.rmqueue(0, MigrateType::Movable).unwrap();
    mm.pages.pte[page as usize] = pfn;
    mm.frames.install(pfn, page, 0, flags);
    p.folio_add_lru(mm, pfn);
    pfn
}

/// (generation, refs, PG_referenced, PG_workingset) of a folio.
fn bits(mm: &Mm, f: u32) -> (Option<usize>, u32, bool, bool) {
    (folio_lru_gen(mm, f), folio_lru_refs(mm, f), mm.frames.test(f, pg::REFERENCED), mm.frames.test(f, pg::WORKINGSET))
}

/// 6.12 carries 081488051d28 unchanged: a page read with read() joins min_seq + 1 = 1 and
/// an unmapped anon page max_seq − 1 = 2 (v6.6: 0 and 1); a folio read five times (refs
/// 4) in the oldest generation is protected at tier_idx 3, to min_seq + 1 (v6.6 leaves
/// it for isolation).
#[test]
fn has_the_underprotected_page_cache_fix() {
    fn run<H: V66Hooks>() -> (Option<usize>, Option<usize>, bool) {
        let (mut mm, mut p) = machine::<H>();
        let read = fault_in(&mut mm, &mut p, 0, 0);
        let anon = fault_in(&mut mm, &mut p, 1, pg::SWAPBACKED);
        let placed = (folio_lru_gen(&mm, read), folio_lru_gen(&mm, anon));
        let g = &mut p.lrugens[0];
        lru_gen_del_folio(&mut mm, g, 0, read, true);
        lru_gen_add_folio_at(&mut mm, g, 0, read, 0, false);
        for _ in 0..5 {
            folio_inc_refs(&mut mm, read);
        }
        (placed.0, placed.1, V66::<H>::sort_folio(&mut mm, g, 0, read, 3, &mut crate::vmscan::ScanNr::default()))
    }
    assert_eq!(run::<Stable612>(), (Some(1), Some(2), true));
    assert_eq!(run::<Released>(), (Some(0), Some(1), false));
}

/// `lru_gen_add_folio` (mm_inline.h 6.12.114+): a folio read four times (PG_referenced,
/// PG_workingset, counter 2: refs 3, tier 2) put back with PG_active joins max_seq = 3
/// with counter and PG_referenced cleared, PG_workingset kept: refs 0 + 1 = 1 (tier 1).
/// The fix variant (v6.6) keeps refs 3.
#[test]
fn activation_resets_the_tier_but_keeps_workingset() {
    fn put_back_active<H: V66Hooks>() -> (Option<usize>, u32, bool, bool) {
        let (mut mm, mut p) = machine::<H>();
        let f = fault_in(&mut mm, &mut p, 0, 0);
        for _ in 0..4 {
            folio_inc_refs(&mut mm, f);
        }
        assert_eq!((folio_lru_refs(&mm, f), lru_tier_from_refs(folio_lru_refs(&mm, f))), (3, 2));
        p.folio_isolate_lru(&mut mm, f);
        mm.frames.set(f, pg::ACTIVE);
        p.folio_putback_lru(&mut mm, f);
        p.check_invariants(&mm).unwrap();
        bits(&mm, f)
    }
    assert_eq!(put_back_active::<Stable612>(), (Some(3), 1, false, true));
    assert_eq!(put_back_active::<Fix>(), (Some(3), 3, true, true));
}

/// A mapped file page evicted unread (refs 0, token (2 << 2) | 0 = 8) refaults in a fault
/// while min_seq is still 2: the fix's `lru_gen_refault` saturates the counter and sets
/// PG_workingset (refs 3 + 1 = 4, tier 3), then `folio_add_lru` adds it with PG_active.
/// 6.12.114+ clears the counter there: it joins max_seq at refs 1 (tier 1), which
/// `sort_folio` (tier_idx 3, fresh counters) no longer protects; the fix keeps refs 4,
/// which it protects (`refs == BIT(LRU_REFS_WIDTH)`) to min_seq + 1.
#[test]
fn a_mapped_refault_keeps_only_the_workingset_tier() {
    fn refault<H: V66Hooks>() -> (u32, bool, Option<usize>) {
        let (mut mm, mut p) = machine::<H>();
        let f = fault_in(&mut mm, &mut p, 0, pg::MAPPED);
        p.lrugens[0].min_seq = [2, 2];
        p.folio_isolate_lru(&mut mm, f);
        let shadow = p.workingset_eviction(&mut mm, f);
        mm.frames.install(f, 0, 0, pg::MAPPED);
        assert!(p.workingset_refault(&mut mm, f, shadow), "restored: in a fault");
        assert_eq!(folio_lru_refs(&mm, f), 4);
        p.folio_add_lru(&mut mm, f);
        let refs = folio_lru_refs(&mm, f);
        assert_eq!(folio_lru_gen(&mm, f), Some(3));
        // as if the folio were still in the oldest generation when eviction reaches it
        let g = &mut p.lrugens[0];
        lru_gen_del_folio(&mut mm, g, 0, f, true);
        lru_gen_add_folio_at(&mut mm, g, 0, f, 2, false);
        let tier_idx = V66::<H>::get_tier_idx(g, LRU_GEN_FILE);
        assert_eq!(tier_idx, 3);
        let kept = V66::<H>::sort_folio(&mut mm, g, 0, f, tier_idx, &mut crate::vmscan::ScanNr::default());
        (refs, kept, folio_lru_gen(&mm, f))
    }
    assert_eq!(refault::<Stable612>(), (1, false, Some(2)));
    assert_eq!(refault::<Fix>(), (4, true, Some(3)));
}

/// Direct reclaim's look-around (no walk) from page 0 finds page 1 young in generation 1
/// (read three times: PG_referenced, PG_workingset, counter 1: refs 2). 6.12.114+ calls
/// `folio_clear_lru_refs` before `folio_activate`: page 1 joins max_seq = 3 with no
/// reference bits (refs 0, tier 0). The fix variant keeps refs 2 and PG_referenced.
/// Both count one pgactivate.
#[test]
fn look_around_clears_the_refs_of_the_folio_it_activates() {
    fn look_around<H: V66Hooks>() -> ((Option<usize>, u32, bool, bool), u64) {
        use super::super::aging::lru_gen_look_around;
        let (mut mm, mut p) = machine::<H>();
        let young = pg::MAPPED | pg::YOUNG;
        let a = fault_in(&mut mm, &mut p, 0, young);
        let b = fault_in(&mut mm, &mut p, 1, young);
        let g = &mut p.lrugens[0];
        lru_gen_del_folio(&mut mm, g, 0, b, true);
        lru_gen_add_folio_at(&mut mm, g, 0, b, 1, false);
        for _ in 0..3 {
            folio_inc_refs(&mut mm, b);
        }
        assert_eq!(folio_lru_refs(&mm, b), 2);
        let mut sc = ScanControl::new(Reclaimer::Direct, 32);
        assert!(lru_gen_look_around::<V66<H>>(&mut mm, g, 0, a, false, &mut sc));
        p.check_invariants(&mm).unwrap();
        (bits(&mm, b), mm.vmstat.get(crate::mm::vmstat::Ev::Pgactivate))
    }
    assert_eq!(look_around::<Stable612>(), ((Some(3), 0, false, false), 1));
    assert_eq!(look_around::<Fix>(), ((Some(3), 2, true, true), 1));
}

/// 5095a2b23987's `should_abort_scan`: kswapd at order 0 with nothing reclaimed yet stops
/// once every zone has free > high + MIN_LRU_BATCH (`zone_watermark_ok`), and goes on
/// at free = high + 64. v6.6 (the fix variant) stops only on nr_reclaimed.
#[test]
fn kswapd_stops_above_the_high_watermarks() {
    use super::super::eviction::should_abort_scan;
    fn abort_at<V: MglruVariant>(variant: V, above: i64) -> bool {
        let (mut mm, _p) = machine_with(variant, &[]);
        let zones = mm.nodes[0].zones.clone();
        for &z in &zones {
            let target = (mm.buddy.zones[z].watermark[WMARK_HIGH] + MIN_LRU_BATCH) as i64 + above;
            while mm.buddy.zones[z].free_pages as i64 > target {
                // From the free lists directly: a per-CPU refill would take a batch.
                mm.buddy.alloc(&mut mm.lists, &mut mm.frames.owner, z, 0, MigrateType::Movable).unwrap();
            }
            assert_eq!(mm.buddy.zones[z].free_pages as i64, target);
        }
        let sc = ScanControl::new(Reclaimer::Kswapd, 1024);
        should_abort_scan::<V>(&mm, 0, &sc)
    }
    assert!(abort_at(V66::<Stable612>::new(), 1));
    assert!(!abort_at(V66::<Stable612>::new(), 0));
    assert!(!abort_at(V66::<Fix>::new(), 1));
}

/// v6.10's clamp in `set_initial_priority` (run by kswapd's `lru_gen_age_node`): 1,000
/// inactive file pages and nr_to_reclaim 64 give fls(1000) − 1 − fls(63) = 10 − 1 − 6 =
/// 3; 6.12 clamps it to DEF_PRIORITY / 2 = 6, v6.6 keeps 3.
#[test]
fn initial_priority_is_clamped_at_six() {
    fn priority<H: V66Hooks>() -> i32 {
        let (mut mm, mut p) = machine::<H>();
        for page in 0..1000 {
            fault_in(&mut mm, &mut p, page, 0);
        }
        assert_eq!(mm.node_lru_pages(0, crate::mm::lruvec::LruList::InactiveFile), 1000);
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 64);
        assert_eq!(sc.priority, DEF_PRIORITY);
        p.kswapd_age_node(&mut mm, 0, &mut sc);
        sc.priority
    }
    assert_eq!(priority::<Stable612>(), 6);
    assert_eq!(priority::<Fix>(), 3);
}

/// 6.12's `shrink_one` ("reclaim offlined memcgs harder", v6.7): a memcg too small to
/// help is reclaimed anyway (v6.6 skipped it to the tail); after a reclaim that did not
/// age it, a sizable memcg stays (0), a small one goes to the tail, and from the tail to
/// the young generation (v6.6: 0 either way). `shrink_many` reads the old generation once.
#[test]
fn shrink_one_reclaims_small_memcgs_then_retries_them_once() {
    type V612 = V66<Stable612>;
    type VFix = V66<Fix>;
    assert_eq!(V612::shrink_one_skip(false, Seg::Default, false, false), None);
    assert_eq!(VFix::shrink_one_skip(false, Seg::Default, false, false), Some(MemcgLruOp::Tail));
    assert_eq!(V612::shrink_one_skip(true, Seg::Default, true, false), Some(MemcgLruOp::Young));
    assert_eq!(V612::shrink_one_skip(true, Seg::Tail, false, true), None);
    let ops = |op: fn(bool, bool, Seg) -> MemcgLruOp| {
        [(true, false, Seg::Default), (false, true, Seg::Default), (false, false, Seg::Default), (false, false, Seg::Tail)].map(|(s, z, seg)| op(s, z, seg))
    };
    use MemcgLruOp::*;
    assert_eq!(ops(V612::shrink_one_op), [Young, Nop, Tail, Young]);
    assert_eq!(ops(VFix::shrink_one_op), [Young, Nop, Nop, Nop]);
    const { assert!(!V612::SHRINK_MANY_REREADS_GEN && VFix::SHRINK_MANY_REREADS_GEN) };
}

/// `lruvec_is_reclaimable` (6.12, as v6.6) reads the birth of file's min_seq. With swap,
/// anon at min_seq 0 born at 0 s and file at min_seq 1 born at 9.5 s, min_ttl 1 s, now
/// 10 s: 6.12 finds the lruvec younger than min_ttl and invokes the OOM killer; v6.15
/// reads the oldest evictable generation (anon's, 10 s old) and does not.
#[test]
fn min_ttl_reads_the_file_generation() {
    fn oom<V: MglruVariant>(variant: V) -> bool {
        let (mut mm, mut p) = machine_with(variant, &[("swap.device", "zram"), ("swap.size", "16M"), ("lru_gen.min_ttl_ms", "1000")]);
        fault_in(&mut mm, &mut p, 0, pg::SWAPBACKED | pg::MAPPED);
        fault_in(&mut mm, &mut p, 1, pg::MAPPED);
        let g = &mut p.lrugens[0];
        g.min_seq = [0, 1];
        g.timestamps = [0, 9_500_000_000, 9_500_000_000, 9_500_000_000];
        mm.now = 10_000_000_000;
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
        sc.priority = 0;
        p.kswapd_age_node(&mut mm, 0, &mut sc);
        mm.oom.is_some()
    }
    assert!(oom(V66::<Stable612>::new()));
    assert!(!oom(Mainline));
}

/// `get_pfn_folio(.., can_swap)` (6.12, as v6.6): `lru_gen_look_around` passes `can_swap =
/// !folio_is_file_lru(folio)`, so the look-around of a file folio (page 0) skips the
/// young anon neighbour (page 1; it stays young) and harvests the file one (page 2); an
/// anon folio's look-around harvests both kinds. v6.14 dropped the test: mainline
/// harvests page 1 too.
#[test]
fn a_file_folio_s_look_around_skips_anon_neighbours() {
    use super::super::aging::lru_gen_look_around;
    fn young_after<V: MglruVariant>(variant: V, trigger_anon: bool) -> [bool; 3] {
        let (mut mm, mut p) = machine_with(variant, &[]);
        let young = pg::MAPPED | pg::YOUNG;
        let trigger = if trigger_anon { pg::SWAPBACKED } else { 0 };
        let f = [fault_in(&mut mm, &mut p, 0, young | trigger), fault_in(&mut mm, &mut p, 1, young | pg::SWAPBACKED), fault_in(&mut mm, &mut p, 2, young)];
        let mut sc = ScanControl::new(Reclaimer::Direct, 32);
        assert!(lru_gen_look_around::<V>(&mut mm, &mut p.lrugens[0], 0, f[0], false, &mut sc));
        f.map(|pfn| mm.frames.test(pfn, pg::YOUNG))
    }
    assert_eq!(young_after(V66::<Stable612>::new(), false), [false, true, false]);
    assert_eq!(young_after(V66::<Stable612>::new(), true), [false, false, false]);
    assert_eq!(young_after(Mainline, false), [false, false, false]);
}

/// Root reclaim and an idle memcg (the tpcc-stock-level finding, docs/model.md §1.15):
/// 6.12's direct reclaim (`nr_to_reclaim` = SWAP_CLUSTER_MAX = 32 < MIN_LRU_BATCH, so
/// `set_initial_priority` leaves DEF_PRIORITY) finds a memcg of 3,000 pages too small to
/// help (`lruvec_is_sizable`: 3000 >> 12 = 0) and `get_nr_to_scan` gives it 3000 >> 12 = 0
/// to scan, so `shrink_one` evicts nothing and returns MEMCG_LRU_TAIL, then on the next
/// visit MEMCG_LRU_YOUNG. While the primary (8,192 read() pages, sizable, never aging)
/// keeps the old memcg generation from emptying, root reclaim at priority 6 no longer
/// reaches the idle memcg. Without those DEF_PRIORITY passes the same priority-6 pass
/// evicts 64 of its folios (3000 >> 6 = 46 to scan, one batch).
#[test]
fn def_priority_passes_move_a_small_idle_memcg_out_of_root_reclaim() {
    type V = V66<Stable612>;
    fn setup() -> (Mm, Mglru<V>, u32, u32) {
        let kv = [("machine.memory", "64M"), ("swap.device", "zram"), ("cgroup.primary.memory.max", "max"), ("cgroup.idle.memory.max", "max")];
        let (mut mm, mut p) = machine_with(V::new(), &kv);
        mm.pages.ensure(12000).unwrap();
        let (primary, idle) = (mm.memcg_by_name("primary").unwrap(), mm.memcg_by_name("idle").unwrap());
        let (lv_p, lv_i) = (mm.lruvec_id(primary, 0), mm.lruvec_id(idle, 0));
        let add = |mm: &mut Mm, p: &mut Mglru<V>, page: u32, memcg: u16, flags: u32| {
            let pfn = mm.rmqueue(0, MigrateType::Movable).unwrap();
            mm.pages.pte[page as usize] = pfn;
            mm.frames.install(pfn, page, memcg, flags);
            mm.memcgs[memcg as usize].usage += 1;
            p.folio_add_lru(mm, pfn);
        };
        // The idle memcg's anon, written once (PG_active at the fault: max_seq 3), then
        // aged twice with old PTEs: max_seq 5, its folios in seq 3 = max_seq − 2.
        for page in 0..3000 {
            add(&mut mm, &mut p, page, idle, pg::SWAPBACKED | pg::MAPPED);
        }
        let mut sc = ScanControl::new(Reclaimer::Direct, 32);
        for seq in [3, 4] {
            let g = &mut p.lrugens[lv_i as usize];
            assert!(super::super::aging::try_to_inc_max_seq::<V>(&mut mm, g, lv_i, seq, 60, false, &mut sc));
        }
        // The primary's page cache, read with read(): min_seq + 1.
        for page in 3000..11192 {
            add(&mut mm, &mut p, page, primary, 0);
        }
        let g = &p.lrugens[lv_i as usize];
        assert_eq!((g.max_seq, g.nr_pages[gen_from_seq(3)][LRU_GEN_ANON]), (5, 3000));
        (mm, p, lv_p, lv_i)
    }
    fn idle_pages(p: &Mglru<V>, lv_i: u32) -> i64 {
        p.lrugens[lv_i as usize].nr_pages.iter().map(|n| n[LRU_GEN_ANON]).sum()
    }
    // A priority-6 root pass large enough not to stop after the primary.
    fn pass_at_6(mm: &mut Mm, p: &mut Mglru<V>) {
        let mut sc = ScanControl::new(Reclaimer::Direct, 1024);
        sc.priority = 6;
        p.shrink_node(mm, 0, &mut sc);
    }

    // Without a DEF_PRIORITY pass: both memcgs in the old generation, the idle one loses a batch.
    let (mut mm, mut p, _, lv_i) = setup();
    pass_at_6(&mut mm, &mut p);
    assert_eq!(idle_pages(&p, lv_i), 3000 - 64);

    // Direct reclaim at DEF_PRIORITY until the idle memcg has been visited twice: tail,
    // then young, and not one of its folios evicted.
    let (mut mm, mut p, lv_p, lv_i) = setup();
    let mut segs = vec![p.memcg_lru.seg_of(lv_i)];
    for _ in 0..64 {
        let mut sc = ScanControl::new(Reclaimer::Direct, 32);
        p.shrink_node(&mut mm, 0, &mut sc);
        assert_eq!(sc.priority, DEF_PRIORITY);
        if segs.last() != Some(&p.memcg_lru.seg_of(lv_i)) {
            segs.push(p.memcg_lru.seg_of(lv_i));
        }
        if p.memcg_lru.gen_of(lv_i) != p.memcg_lru.old_gen(0) {
            break;
        }
    }
    assert_eq!(segs, [Seg::Default, Seg::Tail, Seg::Default]);
    assert_ne!(p.memcg_lru.gen_of(lv_i), p.memcg_lru.old_gen(0));
    assert_eq!(p.memcg_lru.gen_of(lv_p), p.memcg_lru.old_gen(0));
    assert_eq!(idle_pages(&p, lv_i), 3000);
    assert_eq!(p.lrugens[lv_i as usize].max_seq, 5);
    // The primary is reclaimed; the idle memcg is out of reach.
    let before = mm.lruvecs[lv_p as usize].lru_size.iter().sum::<u64>();
    pass_at_6(&mut mm, &mut p);
    assert!(mm.lruvecs[lv_p as usize].lru_size.iter().sum::<u64>() < before);
    assert_eq!(idle_pages(&p, lv_i), 3000);
}
