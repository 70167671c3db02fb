//! Unit tests of `mglru@6.6` and `mglru+fix-underprotected-page-cache` against numbers
//! worked out from the v6.6 kernel code and the fix's diff.

use super::super::lrugen::*;
use super::super::{Mglru, MglruVariant};
use super::fix_underprotected_page_cache::FixUnderprotectedPageCache as Fix;
use super::lrugen::{folio_inc_refs, folio_lru_refs, lru_tier_from_refs};
use super::{workingset, Released, V66Hooks, V66};
use crate::config::SimConfig;
use crate::mm::page::pg;
use crate::mm::workingset::unpack_shadow;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;

fn machine<H: V66Hooks>() -> (Mm, Mglru<V66<H>>) {
    let mut c = SimConfig::default();
    c.set("machine.memory", "16M").unwrap();
    let mut mm = Mm::new(&c);
    mm.pages.ensure(64).unwrap();
    let mut p = Mglru::new(V66::<H>::new());
    for lv in 0..mm.lruvecs.len() as u32 {
        p.init_lruvec(&mut mm, lv);
    }
    (mm, p)
}

/// Install page `page` (root memcg) in a new frame with `flags`, then folio_add_lru.
fn fault_in<V: MglruVariant>(mm: &mut Mm, p: &mut Mglru<V>, page: u32, flags: u32) -> u32 {
    let pfn = mm.rmqueue(0, crate::mm::page_alloc::MigrateType::Movable).unwrap();
    mm.pages.pte[page as usize] = pfn;
    mm.frames.install(pfn, page, 0, flags);
    p.folio_add_lru(mm, pfn);
    pfn
}

const ANON: u32 = pg::SWAPBACKED;
const MAPPED_ANON: u32 = pg::SWAPBACKED | pg::MAPPED;
const READ_FILE: u32 = 0;

/// C.3 [version] v6.1–v6.13: fd access 1 sets PG_referenced (refs 0, tier 0), 2 sets
/// PG_workingset (refs 1 → order_base_2(2) = tier 1), 3 and 4 count the counter up (refs
/// 2, 3 → tiers 2, 2), 5 saturates it (refs 4 → order_base_2(5) = tier 3), 6 changes
/// nothing.
#[test]
fn tier_from_fd_access_count() {
    let (mut mm, mut p) = machine::<Released>();
    let f = fault_in(&mut mm, &mut p, 0, READ_FILE);
    let mut seen = Vec::new();
    for _ in 0..6 {
        p.folio_mark_accessed(&mut mm, f);
        let refs = folio_lru_refs(&mm, f);
        seen.push((refs, lru_tier_from_refs(refs)));
    }
    assert_eq!(seen, vec![(0, 0), (1, 1), (2, 2), (3, 2), (4, 3), (4, 3)]);
    assert!(mm.frames.test(f, pg::REFERENCED) && mm.frames.test(f, pg::WORKINGSET));
    assert_eq!(refs_counter(&mm, f), 3);
}

/// The sequence each kind of folio joins on a fresh lruvec (max_seq 3, min_seq 0: four
/// generations), from the two sides of 081488051d28's `lru_gen_add_folio` hunk:
///
/// | folio                           | v6.6            | fix                 |
/// |---------------------------------|-----------------|---------------------|
/// | mapped fault (PG_active)        | max_seq = 3     | max_seq = 3         |
/// | anon, not mapped, no swap cache | min_seq + 1 = 1 | max_seq − 1 = 2     |
/// | dirty file under PG_reclaim     | min_seq + 1 = 1 | max_seq − 1 = 2     |
/// | clean page read with read()     | min_seq = 0     | min_seq + 1 = 1     |
/// | rotated (reclaiming)            | min_seq = 0     | min_seq = 0         |
///
/// With only three generations (min_seq 1) the fix puts a read() page at min_seq = 1.
#[test]
fn placement_of_each_kind_of_folio() {
    fn place<H: V66Hooks>() -> (Vec<usize>, usize) {
        let (mut mm, mut p) = machine::<H>();
        let mut gens = Vec::new();
        for (page, flags) in [(0, MAPPED_ANON | pg::YOUNG), (1, ANON), (2, READ_FILE | pg::DIRTY | pg::RECLAIM), (3, READ_FILE)] {
            let f = fault_in(&mut mm, &mut p, page, flags);
            gens.push(folio_lru_gen(&mm, f).unwrap());
            assert!(!mm.frames.test(f, pg::ACTIVE), "PG_active is cleared on the lists");
        }
        let f = fault_in(&mut mm, &mut p, 4, READ_FILE);
        p.folio_isolate_lru(&mut mm, f);
        V66::<H>::lru_gen_add_folio(&mut mm, &mut p.lrugens[0], 0, f, true);
        gens.push(folio_lru_gen(&mm, f).unwrap());
        assert_eq!(mm.lists.tail(p.lrugens[0].head(0, LRU_GEN_FILE)), Some(f), "rotated folios go to the tail");
        p.check_invariants(&mm).unwrap();
        // three generations
        p.lrugens[0].min_seq = [1, 1];
        let f = fault_in(&mut mm, &mut p, 5, READ_FILE);
        (gens, folio_lru_gen(&mm, f).unwrap())
    }
    assert_eq!(place::<Released>(), (vec![3, 1, 1, 0, 0], 1));
    assert_eq!(place::<Fix>(), (vec![3, 2, 2, 1, 0], 1));
}

/// v6.6 keeps the refs bits of a folio added with PG_active (cleared only since
/// v6.12's "reset page lru tier bits when activating").
#[test]
fn activation_keeps_refs_bits() {
    let (mut mm, mut p) = machine::<Released>();
    let f = fault_in(&mut mm, &mut p, 0, READ_FILE);
    for _ in 0..3 {
        folio_inc_refs(&mut mm, f);
    }
    p.folio_isolate_lru(&mut mm, f);
    mm.frames.set(f, pg::ACTIVE);
    p.folio_putback_lru(&mut mm, f);
    assert_eq!((folio_lru_gen(&mm, f), folio_lru_refs(&mm, f)), (Some(3), 2));
}

/// sort_folio on a folio read five times (refs 4, tier 3) in the oldest generation with
/// tier_idx 3 (fresh PID counters: every tier is comparable, nothing protected by tier):
/// v6.6 leaves it for isolation; the fix protects it (`refs == BIT(LRU_REFS_WIDTH)`):
/// to the tail of min_seq + 1, reference bits cleared, counted in protected[tier 3].
#[test]
fn sort_folio_protects_a_five_access_folio_only_with_the_fix() {
    fn sort<H: V66Hooks>() -> (bool, Option<usize>, u32, u64) {
        let (mut mm, mut p) = machine::<H>();
        p.lrugens[0].min_seq = [0, 0];
        let f = fault_in(&mut mm, &mut p, 0, READ_FILE);
        let g = &mut p.lrugens[0];
        // the fix's placement put it at min_seq + 1: start both from the oldest gen
        if folio_lru_gen(&mm, f) != Some(0) {
            lru_gen_del_folio(&mut mm, g, 0, f, true);
            lru_gen_add_folio_at(&mut mm, g, 0, f, 0, false);
        }
        for _ in 0..5 {
            folio_inc_refs(&mut mm, f);
        }
        assert_eq!(lru_tier_from_refs(folio_lru_refs(&mm, f)), 3);
        let tier_idx = V66::<H>::get_tier_idx(g, LRU_GEN_FILE);
        assert_eq!(tier_idx, 3);
        let kept = V66::<H>::sort_folio(&mut mm, g, 0, f, tier_idx, &mut crate::vmscan::ScanNr::default());
        (kept, folio_lru_gen(&mm, f), folio_lru_refs(&mm, f), g.protected[LRU_GEN_FILE][3])
    }
    assert_eq!(sort::<Released>(), (false, Some(0), 4, 0));
    assert_eq!(sort::<Fix>(), (true, Some(1), 0, 1));
}

/// Eviction and refault of a folio read four times (counter 2 + PG_workingset: refs 3,
/// tier 2) at min_seq 2: token (2 << 2) | (3 − 1) = 10, shadow workingset = refs != 0.
/// Refaulted by read() while min_seq is still 2: recent, refs = (10 & 3) + 1 = 3,
/// refaulted[tier 2] and workingset_activate_file count it. v6.6 restores nothing
/// (refs != 4, not in a fault); the fix saturates the counter and sets PG_workingset
/// (refs 4, tier 3) and counts workingset_restore_file. A mapped refault with refs 0:
/// v6.6 sets PG_workingset only (refs 1), the fix counter + PG_workingset (refs 4).
#[test]
fn refault_restores_workingset_and_refs() {
    fn refault<H: V66Hooks>(flags: u32, accesses: u32) -> (u64, bool, bool, u32, u64, u64, u64) {
        let (mut mm, mut p) = machine::<H>();
        let f = fault_in(&mut mm, &mut p, 0, flags);
        for _ in 0..accesses {
            folio_inc_refs(&mut mm, f);
        }
        p.lrugens[0].min_seq = [2, 2];
        p.folio_isolate_lru(&mut mm, f);
        let shadow = p.workingset_eviction(&mut mm, f);
        let (_, _, token, ws) = unpack_shadow(shadow);
        let evicted_tier2 = p.lrugens[0].evicted[LRU_GEN_FILE][2];
        // the same frame comes back as a new folio
        mm.frames.install(f, 0, 0, flags);
        let restored = p.workingset_refault(&mut mm, f, shadow);
        let refaulted: u64 = p.lrugens[0].refaulted[LRU_GEN_FILE].iter().sum();
        let activate = mm.vmstat.get(crate::mm::vmstat::Ev::WorkingsetActivateFile);
        let restore = mm.vmstat.get(crate::mm::vmstat::Ev::WorkingsetRestoreFile);
        assert_eq!(evicted_tier2 + refaulted, if accesses == 4 { 2 } else { 1 });
        (token, ws, restored, folio_lru_refs(&mm, f), refaulted, activate, restore)
    }
    assert_eq!(refault::<Released>(READ_FILE, 4), (10, true, false, 0, 1, 1, 0));
    assert_eq!(refault::<Fix>(READ_FILE, 4), (10, true, true, 4, 1, 1, 1));
    // read five times: refs 4 (token 11); v6.6 sets PG_workingset (refs 1)
    assert!(refault::<Released>(READ_FILE, 5).2);
    // a mapped file page refaulting in a fault, never read: refs 0, token 8
    assert_eq!(refault::<Released>(pg::MAPPED, 0), (8, false, true, 1, 1, 1, 1));
    assert_eq!(refault::<Fix>(pg::MAPPED, 0), (8, false, true, 4, 1, 1, 1));
}

/// lru_gen_test_recent in v6.6: recent ⇔ the token's generation is the current
/// min_seq (v6.15: within MAX_NR_GENS of max_seq). Evicted at min_seq 5: recent while
/// min_seq is 5, whatever max_seq; not once min_seq is 6 or 4.
#[test]
fn test_recent_is_the_oldest_generation() {
    let (mut mm, mut p) = machine::<Released>();
    let f = fault_in(&mut mm, &mut p, 0, READ_FILE);
    p.lrugens[0].min_seq = [5, 5];
    p.lrugens[0].max_seq = 8;
    p.folio_isolate_lru(&mut mm, f);
    let shadow = p.workingset_eviction(&mut mm, f);
    for (min_seq, max_seq, recent) in [(5, 8, true), (5, 7, true), (6, 8, false), (4, 7, false)] {
        p.lrugens[0].min_seq[LRU_GEN_FILE] = min_seq;
        p.lrugens[0].max_seq = max_seq;
        assert_eq!(workingset::lru_gen_test_recent(&mm, &p.lrugens, shadow, LRU_GEN_FILE).3, recent, "min_seq {min_seq}");
    }
    // the v6.15 test calls min_seq 6 / max_seq 8 recent
    p.lrugens[0].min_seq[LRU_GEN_FILE] = 6;
    assert!(super::super::mainline::lru_gen_test_recent(&mm, &p.lrugens, shadow).3);
}

/// Every recent refault is an activation in v6.6 (WORKINGSET_ACTIVATE), a read() one
/// too; a non-recent one only a refault.
#[test]
fn every_recent_refault_counts_an_activation() {
    let (mut mm, mut p) = machine::<Released>();
    let f = fault_in(&mut mm, &mut p, 0, READ_FILE);
    p.folio_isolate_lru(&mut mm, f);
    let shadow = p.workingset_eviction(&mut mm, f);
    mm.frames.install(f, 0, 0, READ_FILE);
    p.workingset_refault(&mut mm, f, shadow);
    p.lrugens[0].min_seq[LRU_GEN_FILE] += 1;
    p.workingset_refault(&mut mm, f, shadow);
    use crate::mm::vmstat::Ev;
    assert_eq!((mm.vmstat.get(Ev::WorkingsetRefaultFile), mm.vmstat.get(Ev::WorkingsetActivateFile)), (2, 1));
}

/// The PID's v6.6 gains: get_tier_idx compares tier t (gain 2) with tier 0 (gain 1).
/// Tier 0 refaulted 100 of 1000, tier 1 150 of 1000: 150 * (1000 + 64) * 1 = 159,600 ≤
/// (100 + 1) * 1000 * 2 = 202,000 → comparable; tiers 2, 3 have < 64 refaults → idx 3.
/// At 200: 212,800 > 202,000 → tier 1 protected, idx 0. (v6.15's gains 2 : 3 call 150
/// not comparable: 319,200 > 303,000.)
#[test]
fn tier_idx_with_v6_6_gains() {
    let (_mm, p) = machine::<Released>();
    let mut g = p.lrugens[0].clone();
    g.evicted[LRU_GEN_FILE][0] = 1000;
    g.refaulted[LRU_GEN_FILE][0] = 100;
    g.evicted[LRU_GEN_FILE][1] = 1000;
    g.refaulted[LRU_GEN_FILE][1] = 150;
    assert_eq!(super::pid::get_tier_idx(&g, LRU_GEN_FILE), 3);
    assert_eq!(super::super::pid::get_tier_idx(&g, LRU_GEN_FILE), 0);
    g.refaulted[LRU_GEN_FILE][1] = 200;
    assert_eq!(super::pid::get_tier_idx(&g, LRU_GEN_FILE), 0);
}

/// isolate_folios' first type in v6.6: anon when its min_seq is older than file's,
/// whatever the refault rates; file at swappiness 0.
#[test]
fn older_min_seq_is_scanned_first() {
    let (_mm, p) = machine::<Fix>();
    let mut g = p.lrugens[0].clone();
    g.min_seq = [1, 2];
    g.refaulted[LRU_GEN_ANON][0] = 1000;
    g.evicted[LRU_GEN_ANON][0] = 1000;
    assert_eq!(super::pid::type_to_scan(&g, 60).0, LRU_GEN_ANON);
    assert_eq!(super::pid::type_to_scan(&g, 0).0, LRU_GEN_FILE);
    g.min_seq = [2, 2];
    // anon's tier-0 refault rate 100% against file's 0: file
    assert_eq!(super::pid::type_to_scan(&g, 60).0, LRU_GEN_FILE);
}

/// Look-around and an isolated neighbour (mm/vmscan.c v6.6 and 6.12): `get_pfn_folio`
/// does not test the generation, so direct reclaim's look-around from page 0 clears the
/// young bit of page 1's isolated folio and, as `folio_lru_gen` is −1, sets its
/// PG_referenced. From v6.14 `get_pfn_folio` skips it: mainline leaves it young.
#[test]
fn look_around_marks_an_isolated_neighbour_referenced() {
    use super::super::aging::lru_gen_look_around;
    use super::super::Mainline;
    use crate::vmscan::{Reclaimer, ScanControl};
    fn run<V: MglruVariant>(mut mm: Mm, mut p: Mglru<V>) -> (bool, bool) {
        let mapped_young = pg::MAPPED | pg::YOUNG;
        let a = fault_in(&mut mm, &mut p, 0, mapped_young);
        let b = fault_in(&mut mm, &mut p, 1, mapped_young);
        V::isolate_folio(&mut mm, &mut p.lrugens[0], 0, b);
        assert!(folio_lru_gen(&mm, b).is_none() && !mm.frames.test(b, pg::REFERENCED));
        let mut sc = ScanControl::new(Reclaimer::Direct, 32);
        assert!(lru_gen_look_around::<V>(&mut mm, &mut p.lrugens[0], 0, a, false, &mut sc));
        (mm.frames.test(b, pg::YOUNG), mm.frames.test(b, pg::REFERENCED))
    }
    let (mm, p) = machine::<Released>();
    assert_eq!(run(mm, p), (false, true));
    let (mm, p) = machine::<Fix>();
    assert_eq!(run(mm, p), (false, true));
    let mut c = SimConfig::default();
    c.set("machine.memory", "16M").unwrap();
    let mut mm = Mm::new(&c);
    mm.pages.ensure(64).unwrap();
    let mut p = Mglru::new(Mainline);
    p.init_lruvec(&mut mm, 0);
    assert_eq!(run(mm, p), (true, false));
}

/// `mglru@6.6` is a base, not a diff of v6.15: `V66` implements every [`MglruVariant`]
/// hook, so no v6.15 default reaches it or its patches. A hook added to the trait (its
/// default the current v6.15 code) fails here until `V66` gives v6.6's.
#[test]
fn v66_overrides_every_mglru_hook() {
    fn items(src: &str, from: &str) -> Vec<String> {
        let body = &src[src.find(from).expect(from)..];
        let body = &body[..body.find("\n}\n").unwrap()];
        let mut v: Vec<String> = body
            .lines()
            .filter_map(|l| l.strip_prefix("    fn ").or_else(|| l.strip_prefix("    const ")))
            .map(|l| l.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap().to_string())
            .collect();
        v.sort();
        v
    }
    let hooks = items(include_str!("../mod.rs"), "pub trait MglruVariant");
    let v66 = items(include_str!("mod.rs"), "impl<H: V66Hooks> MglruVariant for V66<H>");
    assert!(hooks.len() >= 20, "{hooks:?}");
    assert_eq!(hooks, v66);
}
