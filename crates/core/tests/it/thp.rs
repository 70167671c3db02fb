//! THP, compaction, khugepaged and NUMA on the one machine, driven as a program
//! (sim/process.rs; crate::thp): numbers worked
//! out from mm/compaction.c, mm/huge_memory.c and mm/page_alloc.c rules.

use reclaimlab_core::mm::page::pg;
use reclaimlab_core::mm::page_alloc::{MigrateType, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER, ZONE_MOVABLE};
use reclaimlab_core::policy::ReclaimPolicy;
use reclaimlab_core::sim::engine::Machine;
use reclaimlab_core::sim::process::{program_machine, Fault};
use reclaimlab_core::sim::Engine;
use reclaimlab_core::thp::compaction::{self, CompactControl, CompactPriority, CompactResult, Compactor, MigrateMode};
use reclaimlab_core::thp::gfp::*;
use reclaimlab_core::thp::policy::{find, THP_POLICIES};
use reclaimlab_core::thp::{split, Tc};
use reclaimlab_core::SimConfig;

type M = Machine<Box<dyn ReclaimPolicy>>;

/// Free frames and those on the per-CPU lists: a freed order-0 frame goes to its CPU's
/// list first (mm/pcp.rs), so frees are counted here, not in `total_free_pages`.
fn free_or_pcp(m: &M) -> u64 {
    m.mm.total_free_pages() + m.mm.pcp.nr_pages_all()
}

fn cfg(mem: &str, nodes: u32, extra: &[(&str, &str)]) -> SimConfig {
    let mut c = SimConfig::default();
    c.set("machine.memory", mem).unwrap();
    c.set("machine.nodes", &nodes.to_string()).unwrap();
    c.set("swap.device", "none").unwrap();
    // Written after boot, as on a machine under 512 MiB, whose boot default is never.
    c.set("transparent_hugepage.enabled", "always").unwrap();
    for (k, v) in extra {
        c.set(k, v).unwrap();
    }
    c
}

/// 16 MiB, one node (4096 frames, 8 pageblocks), THP off: `n` anonymous base pages
/// faulted in order by one task. `vm.watermark_boost_factor = 0`: the first page-table
/// fallback would boost the zone by a pageblock (512 pages, min watermark 128 -> 640), and
/// with nothing reclaimable (no swap, no page cache) a zone this small could not fill
/// past that.
fn base_filled(n: u32) -> (M, usize, u32) {
    let mut m = program_machine(&cfg("16M", 1, &[("transparent_hugepage.enabled", "never")])).unwrap();
    m.mm.buddy.watermark_boost_factor = 0;
    let t = m.add_task(0);
    let v = m.mmap(n, false, false).unwrap();
    let start = m.procs.vmas[v].start;
    for p in start..start + n {
        assert_eq!(m.touch(t, p, true).unwrap().0, Fault::Base);
    }
    (m, t, start)
}

fn stat(m: &M, e: Tc) -> u64 {
    m.mm.thp.stat.get(e)
}

#[test]
fn compaction_migrates_pages_and_keeps_mappings() {
    // 3900 pages + 8 page tables of 4096 frames: the free tail is below an order-9 block.
    let (mut m, _, start) = base_filled(3900);
    // Free every other page: 1950 free singles, no order-9 block anywhere.
    for p in (start..start + 3900).step_by(2) {
        m.madv_dontneed(p, 1);
    }
    Engine::check_invariants(&m).unwrap();
    assert_eq!(m.mm.buddy.nr_free_by_order(0)[9..].iter().sum::<u64>(), 0);
    let resident: Vec<u32> = (start..start + 3900).skip(1).step_by(2).collect();
    let pfns_before: Vec<u32> = resident.iter().map(|&p| m.mm.pages.pte[p as usize]).collect();
    let free_before = free_or_pcp(&m);
    let mut cc = CompactControl::new(0, Some(9), MigrateMode::SyncLight, Compactor::Direct, &m.mm);
    let r = compaction::compact_zone(&mut m.mm, &mut cc);
    assert_eq!(r, CompactResult::Success, "a movable zone half free compacts to an order-9 block");
    // The migrate scanner emptied (at least) one pageblock: its 256 resident pages moved.
    assert!(cc.nr_migrated >= 256, "{}", cc.nr_migrated);
    assert_eq!(stat(&m, Tc::PgmigrateSuccess), cc.nr_migrated);
    // Every migrated page was isolated once, and a free page was isolated for it.
    assert!(stat(&m, Tc::CompactIsolated) >= 2 * cc.nr_migrated);
    assert_eq!(stat(&m, Tc::CompactMigrateScanned), cc.total_migrate_scanned);
    assert_eq!(stat(&m, Tc::CompactFreeScanned), cc.total_free_scanned);
    assert_eq!(free_or_pcp(&m), free_before, "migration conserves free pages");
    assert!(m.mm.buddy.nr_free_by_order(0)[9..].iter().any(|&n| n > 0));
    // Exactly the migrated pages changed frames; each PTE points at a frame it owns.
    let moved: Vec<(u32, u32)> = resident.iter().zip(&pfns_before).filter(|(&p, &f)| m.mm.pages.pte[p as usize] != f).map(|(&p, &f)| (f, m.mm.pages.pte[p as usize])).collect();
    assert_eq!(moved.len() as u64, cc.nr_migrated);
    for &p in &resident {
        let f = m.mm.pages.pte[p as usize];
        assert_eq!(m.mm.frames.page(f), p);
        assert!(m.mm.frames.test(f, pg::LRU | pg::SWAPBACKED));
    }
    // Migrate scanner from the bottom, free scanner from the top: targets are above sources.
    let highest_source = moved.iter().map(|x| x.0).max().unwrap();
    let lowest_target = moved.iter().map(|x| x.1).min().unwrap();
    assert!(highest_source < lowest_target, "{highest_source} {lowest_target}");
    assert!(cc.migrate_pfn < cc.free_pfn);
    Engine::check_invariants(&m).unwrap();
}

#[test]
fn async_direct_compaction_skips_unmovable_source_blocks() {
    let (mut m, _, start) = base_filled(3900);
    for p in (start..start + 3900).step_by(2) {
        m.madv_dontneed(p, 1);
    }
    // An unmovable allocation claims a half-free movable pageblock (free 256 >= 256);
    // its LRU pages must stay put in async direct compaction (suitable_migration_source).
    let u = m.mm.buddy.alloc(&mut m.mm.lists, &mut m.mm.frames.owner, 0, 0, MigrateType::Unmovable).unwrap();
    let pb = u / 512 * 512;
    assert_eq!(m.mm.buddy.pageblock_migratetype(pb), MigrateType::Unmovable);
    let lru_in_pb: Vec<u32> = (pb..pb + 512).filter(|&f| m.mm.frames.test(f, pg::LRU)).collect();
    assert!(!lru_in_pb.is_empty());
    let mut cc = CompactControl::new(0, Some(9), MigrateMode::Async, Compactor::Direct, &m.mm);
    compaction::compact_zone(&mut m.mm, &mut cc);
    assert!(cc.nr_migrated > 0);
    for &f in &lru_in_pb {
        assert!(m.mm.frames.test(f, pg::LRU), "pfn {f} of the unmovable block was migrated");
    }
}

#[test]
fn fully_fragmented_zone_fails_and_defers() {
    let mut m = program_machine(&cfg("16M", 1, &[("transparent_hugepage.enabled", "never")])).unwrap();
    // Pin one unmovable page at the start of every pageblock (page tables), free the rest.
    let n = m.mm.nr_frames;
    let mut all = vec![];
    while let Some(p) = m.mm.buddy.alloc(&mut m.mm.lists, &mut m.mm.frames.owner, 0, 0, MigrateType::Unmovable) {
        all.push(p);
    }
    assert_eq!(all.len() as u32, n);
    for &p in &all {
        if p % PAGEBLOCK_NR_PAGES != 0 {
            m.mm.buddy.free(&mut m.mm.lists, &mut m.mm.frames.owner, p, 0);
        }
    }
    let zones = [0usize];
    assert_eq!(compaction::fragmentation_index(&m.mm.buddy.nr_free_by_order(0), 9), 1000 - (1000 + (n as u64 - 8) * 1000 / 512) as i32 / (9 * 8));
    let (r, _) = compaction::try_to_compact_pages(&mut m.mm, &zones, 9, CompactPriority::SyncLight, 0);
    assert_eq!(r, CompactResult::Complete, "nothing movable: the scanners meet");
    let zc = &m.mm.thp.zones[0];
    assert_eq!((zc.defer_shift, zc.considered), (1, 0), "a failed sync run defers");
    // Next attempt: considered 1 >= 1 << 1? no -> deferred.
    let (r, _) = compaction::try_to_compact_pages(&mut m.mm, &zones, 9, CompactPriority::SyncLight, 0);
    assert_eq!(r, CompactResult::Deferred);
    // The one after runs again (considered reaches 2), fails, and the shift grows to 2.
    let (r, _) = compaction::try_to_compact_pages(&mut m.mm, &zones, 9, CompactPriority::SyncLight, 0);
    assert_eq!(r, CompactResult::Complete);
    assert_eq!(m.mm.thp.zones[0].defer_shift, 2);
    // Async failures never defer; SYNC_FULL ignores deferral.
    for _ in 0..3 {
        compaction::try_to_compact_pages(&mut m.mm, &zones, 9, CompactPriority::SyncFull, 0);
    }
    assert_eq!(m.mm.thp.zones[0].defer_shift, 5);
    for _ in 0..10 {
        compaction::try_to_compact_pages(&mut m.mm, &zones, 9, CompactPriority::SyncFull, 0);
    }
    assert_eq!(m.mm.thp.zones[0].defer_shift, compaction::COMPACT_MAX_DEFER_SHIFT);
    assert_eq!(stat(&m, Tc::PgmigrateSuccess), 0);
}

#[test]
fn defer_arithmetic_matches_the_kernel() {
    let mut zc = reclaimlab_core::thp::ZoneCompact { considered: 0, defer_shift: 0, order_failed: 0, cached_migrate_pfn: [0; 2], cached_free_pfn: 0, blockskip_flush: false };
    compaction::defer_compaction(&mut zc, 9);
    compaction::defer_compaction(&mut zc, 9);
    assert_eq!(zc.defer_shift, 2);
    // 1 << 2 = 4: three deferred attempts, the fourth runs.
    let runs: Vec<bool> = (0..5).map(|_| !compaction::compaction_deferred(&mut zc, 9)).collect();
    assert_eq!(runs, [false, false, false, true, true]);
    // An order below compact_order_failed (0 initially... set by a success at 9 → 10).
    compaction::compaction_defer_reset(&mut zc, 9, true);
    assert_eq!((zc.defer_shift, zc.considered, zc.order_failed), (0, 0, 10));
    compaction::defer_compaction(&mut zc, 9);
    assert_eq!(zc.order_failed, 9);
    assert!(compaction::compaction_deferred(&mut zc, 9));
    assert!(!compaction::compaction_deferred(&mut zc, 8), "orders below the failed one are never deferred");
}

#[test]
fn suitability_watermarks_and_fragmentation_index() {
    // All free: the allocation watermark holds -> SUCCESS (no compaction needed).
    let m = program_machine(&cfg("16M", 1, &[])).unwrap();
    assert_eq!(compaction::compaction_suitable(&m.mm, 0, Some(9), 1, 500), CompactResult::Success);
    // fragmentation_index: 10 free order-0 pages for an order-2 request: 1000 - (1000 + 10*1000/4)/10 = 650.
    let mut nr = [0u64; 11];
    nr[0] = 10;
    assert_eq!(compaction::fragmentation_index(&nr, 2), 650);
    nr[3] = 1;
    assert_eq!(compaction::fragmentation_index(&nr, 2), -1000);
    assert_eq!(compaction::fragmentation_index(&[0; 11], 9), 0);
    // extfrag_for_order: 10 singles + one order-9 block: 10 of 522 free pages unusable -> 1%.
    let mut nr = [0u64; 11];
    nr[0] = 10;
    nr[9] = 1;
    assert_eq!(compaction::extfrag_for_order(&nr, 9), 1);
    assert_eq!(compaction::fragmentation_score_wmark(20, true), 80);
    assert_eq!(compaction::fragmentation_score_wmark(20, false), 90);
    assert_eq!(compaction::fragmentation_score_wmark(100, true), 5);
}

#[test]
fn skipped_when_free_memory_is_below_low_wmark_plus_gap() {
    let (mut m, _, _) = base_filled(4096 - 200);
    let low = m.mm.buddy.zones[0].watermark[1];
    let free = m.mm.total_free_pages();
    assert!(free < low + compaction::compact_gap(9), "free {free}, low {low}");
    assert_eq!(compaction::compaction_suitable(&m.mm, 0, Some(9), 0, 500), CompactResult::Skipped);
    let (r, _) = compaction::try_to_compact_pages(&mut m.mm, &[0], 9, CompactPriority::SyncLight, 0);
    assert_eq!(r, CompactResult::Skipped);
    assert_eq!(m.mm.thp.zones[0].defer_shift, 0, "a skipped zone is not deferred");
}

/// Every (policy, defrag, madvised) gfp mask, as the kernel versions compute it.
#[test]
fn gfp_masks_per_defrag_mode_and_policy() {
    use ThpDefrag::*;
    let l = GFP_TRANSHUGE_LIGHT;
    let cases: &[(&str, ThpDefrag, bool, Gfp)] = &[
        ("thp@4.20-rc4", Always, true, GFP_TRANSHUGE),
        ("thp@4.20-rc4", Always, false, GFP_TRANSHUGE | __GFP_NORETRY),
        ("thp@4.20-rc4", Defer, false, l | __GFP_KSWAPD_RECLAIM | __GFP_THISNODE),
        ("thp@4.20-rc4", DeferMadvise, true, l | __GFP_DIRECT_RECLAIM),
        ("thp@4.20-rc4", DeferMadvise, false, l | __GFP_KSWAPD_RECLAIM | __GFP_THISNODE),
        ("thp@4.20-rc4", Madvise, true, l | __GFP_DIRECT_RECLAIM),
        ("thp@4.20-rc4", Madvise, false, l | __GFP_THISNODE),
        ("thp@4.20-rc4", Never, true, l | __GFP_THISNODE),
        ("thp+gfp-thisnode-v1", Always, true, GFP_TRANSHUGE | __GFP_THISNODE),
        ("thp+gfp-thisnode-v1", Madvise, true, l | __GFP_DIRECT_RECLAIM | __GFP_THISNODE),
        ("thp+gfp-thisnode-v1", Madvise, false, l | __GFP_THISNODE),
        ("thp+gfp-thisnode-v1", Defer, false, l | __GFP_KSWAPD_RECLAIM | __GFP_THISNODE),
        ("thp@5.4", Always, false, GFP_TRANSHUGE | __GFP_NORETRY),
        ("thp@5.4", Madvise, true, l | __GFP_DIRECT_RECLAIM),
        ("thp@5.4", Madvise, false, l),
        ("thp@5.4", DeferMadvise, false, l | __GFP_KSWAPD_RECLAIM),
        ("thp@5.4", Never, false, l),
        // v5.5 (cc638f329ef6) left alloc_hugepage_direct_gfpmask as v5.4 had it.
        ("thp@5.5", Always, false, GFP_TRANSHUGE | __GFP_NORETRY),
        ("thp@5.5", Always, true, GFP_TRANSHUGE),
        ("thp@5.5", Madvise, true, l | __GFP_DIRECT_RECLAIM),
        ("thp@5.5", Madvise, false, l),
        // 6.12's vma_thp_gfp_mask (mm/huge_memory.c) is the same function.
        ("thp@6.12", Always, false, GFP_TRANSHUGE | __GFP_NORETRY),
        ("thp@6.12", Always, true, GFP_TRANSHUGE),
        ("thp@6.12", Madvise, true, l | __GFP_DIRECT_RECLAIM),
        ("thp@6.12", Madvise, false, l),
        ("thp@6.12", DeferMadvise, false, l | __GFP_KSWAPD_RECLAIM),
    ];
    for &(name, d, madv, want) in cases {
        assert_eq!(find(name).unwrap().policy.gfp_mask(d, madv), want, "{name} {d:?} madvised={madv}");
    }
    assert!(find("thp@9.9").is_err());
    assert_eq!(THP_POLICIES.len(), 5);
}

/// The allocation attempts each policy makes for one THP fault (mm/mempolicy.c
/// `alloc_pages_vma`), recorded by an allocator that always fails, and the costly-order
/// give-up rule after the first compaction (mm/page_alloc.c `__alloc_pages_slowpath`).
#[test]
fn thp_policies_attempt_sequence_and_give_up_rule() {
    use reclaimlab_core::mm::page_alloc::Pfn;
    use reclaimlab_core::thp::policy::PageAllocator;
    struct Record(Vec<Gfp>);
    impl PageAllocator for Record {
        fn alloc_pages(&mut self, gfp: Gfp, order: u8, _node: u16) -> Option<Pfn> {
            assert_eq!(order, 9);
            self.0.push(gfp);
            None
        }
    }
    let attempts = |name: &str, madv: bool| {
        let p = find(name).unwrap().policy;
        let mut a = Record(Vec::new());
        assert!(p.alloc_hugepage_vma(&mut a, p.gfp_mask(ThpDefrag::Madvise, madv), 0).is_none());
        a.0
    };
    let l = GFP_TRANSHUGE_LIGHT;
    // v5.4 (76e654cc91bb): gfp | __GFP_THISNODE, then gfp | __GFP_NORETRY on every node.
    assert_eq!(attempts("thp@5.4", true), [l | __GFP_DIRECT_RECLAIM | __GFP_THISNODE, l | __GFP_DIRECT_RECLAIM | __GFP_NORETRY]);
    assert_eq!(attempts("thp@5.4", false), [l | __GFP_THISNODE]);
    // v5.5 (cc638f329ef6): gfp | __GFP_THISNODE | __GFP_NORETRY, then plain gfp everywhere.
    assert_eq!(attempts("thp@5.5", true), [l | __GFP_DIRECT_RECLAIM | __GFP_THISNODE | __GFP_NORETRY, l | __GFP_DIRECT_RECLAIM]);
    assert_eq!(attempts("thp@5.5", false), [l | __GFP_THISNODE | __GFP_NORETRY]);
    // 6.12's alloc_pages_mpol (mm/mempolicy.c): the same two attempts as v5.5.
    assert_eq!(attempts("thp@6.12", true), attempts("thp@5.5", true));
    assert_eq!(attempts("thp@6.12", false), attempts("thp@5.5", false));
    assert_eq!(attempts("thp@4.20-rc4", true), [l | __GFP_DIRECT_RECLAIM]);
    assert_eq!(attempts("thp+gfp-thisnode-v1", true), [l | __GFP_DIRECT_RECLAIM | __GFP_THISNODE]);
    use CompactResult::*;
    let gives_up = |name: &str, gfp: Gfp, r| find(name).unwrap().policy.costly_gives_up(gfp, 9, r);
    let madv = l | __GFP_DIRECT_RECLAIM;
    // v4.20: only a __GFP_NORETRY request whose compaction was deferred gives up.
    assert!(!gives_up("thp@4.20-rc4", madv, Skipped) && !gives_up("thp@4.20-rc4", madv, Deferred));
    assert!(gives_up("thp@4.20-rc4", madv | __GFP_NORETRY, Deferred) && !gives_up("thp@4.20-rc4", madv | __GFP_NORETRY, Skipped));
    // v5.4 and the Dec 2018 patch 2/2 (b39d0ee2632d): any pageblock-order request with
    // __GFP_IO whose first compaction was skipped or deferred, madvised or not.
    for name in ["thp@5.4", "thp+gfp-thisnode-v1"] {
        for gfp in [madv, madv | __GFP_NORETRY] {
            assert!(gives_up(name, gfp, Skipped) && gives_up(name, gfp, Deferred), "{name} {gfp:#x}");
            assert!(!gives_up(name, gfp, Complete) && !gives_up(name, gfp, PartialSkipped), "{name} {gfp:#x}");
        }
    }
    assert!(!gives_up("thp@5.4", madv | __GFP_RETRY_MAYFAIL, Skipped));
    // v5.5: skipped or deferred ends only a __GFP_NORETRY request; the all-node attempt
    // (no __GFP_NORETRY) goes on to reclaim.
    assert!(gives_up("thp@5.5", madv | __GFP_NORETRY, Skipped) && gives_up("thp@5.5", madv | __GFP_NORETRY, Deferred));
    assert!(!gives_up("thp@5.5", madv | __GFP_NORETRY, Complete));
    assert!(!gives_up("thp@5.5", madv, Skipped) && !gives_up("thp@5.5", madv, Deferred));
    // 6.12.75+ (9c9828d3ead6): the local __GFP_THISNODE | __GFP_NORETRY attempt also gives
    // up after a compaction that ran and failed; the all-node attempt is v5.5's.
    let local = madv | __GFP_THISNODE | __GFP_NORETRY;
    for r in [Skipped, Deferred, Complete, PartialSkipped, Contended] {
        assert!(gives_up("thp@6.12", local, r), "{r:?}");
    }
    assert!(gives_up("thp@5.5", local, Skipped) && !gives_up("thp@5.5", local, Complete));
    assert!(!gives_up("thp@6.12", madv | __GFP_NORETRY, Complete) && gives_up("thp@6.12", madv | __GFP_NORETRY, Deferred));
    assert!(!gives_up("thp@6.12", madv, Skipped) && !gives_up("thp@6.12", madv, Complete));
}

/// The fault path where v5.4 and v5.5 part: two 32 MiB nodes full of page cache (kswapd
/// keeps each near its high watermark, far below low + compact_gap(9) = 1024 pages more),
/// then one madvised THP fault on node 0. Every first compaction is SKIPPED. v5.4 gives up
/// on both its attempts (pageblock order, b39d0ee2632d) and falls back without reclaim;
/// v5.5's all-node attempt has no __GFP_NORETRY, so it reclaims directly, compacts and
/// maps a THP, as the v4.20 baseline does.
#[test]
fn v5_5_all_node_retry_reclaims_where_v5_4_falls_back() {
    use reclaimlab_core::mm::vmstat::Ev;
    let fault = |policy: &str| {
        let mut m = program_machine(&cfg("64M", 2, &[("thp.policy", policy)])).unwrap();
        // No boosting: the mapped file's page tables steal from movable pageblocks, and a
        // boosted kswapd would free a pageblock's worth more than the high watermark.
        m.mm.buddy.watermark_boost_factor = 0;
        let t = m.add_task(0);
        let t1 = m.add_task(1);
        // 7,750 page-cache pages read on each node (of 8,192 frames per node).
        let f = m.mmap(15_500, true, false).unwrap();
        let fs = m.procs.vmas[f].start;
        for p in fs..fs + 7_750 {
            m.touch(t, p, false).unwrap();
        }
        m.procs.tasks[t1].clock = m.procs.tasks[t].clock;
        for p in fs + 7_750..fs + 15_500 {
            m.touch(t1, p, false).unwrap();
        }
        m.procs.tasks[t].clock = m.procs.tasks[t1].clock + 1_000_000_000;
        m.run_until(m.procs.tasks[t].clock).unwrap();
        for n in 0..2 {
            let z = m.mm.nodes[n].zones[0];
            let zone = &m.mm.buddy.zones[z];
            assert!(m.mm.node_free_pages(n as u16) < zone.low_wmark_pages() + compaction::compact_gap(9), "node {n}");
        }
        let r = m.mmap(512, false, true).unwrap();
        let start = m.procs.vmas[r].start;
        let kind = m.touch(t, start, true).unwrap().0;
        Engine::check_invariants(&m).unwrap();
        (kind, m.mm.vmstat.get(Ev::AllocstallNormal))
    };
    assert_eq!(fault("thp@5.4"), (Fault::Base, 0));
    let (kind, stalls) = fault("thp@5.5");
    assert_eq!(kind, Fault::Huge);
    assert!(stalls >= 1, "v5.5 reached the page through direct reclaim");
    assert_eq!(fault("thp@4.20-rc4").0, Fault::Huge);
}

/// A node whose free memory is plentiful but in no order-9 block (one pinned unmovable
/// page per pageblock except pageblock 0, which is full of movable pages), then one THP
/// fault in a (non-)madvised region: what each defrag mode does.
fn fault_on_fragmented(defrag: &str, madvise: bool, policy: &str) -> M {
    fault_on_fragmented_with(defrag, madvise, policy, |_| {})
}

/// [`fault_on_fragmented`], with `before` applied to the machine just before the fault.
fn fault_on_fragmented_with(defrag: &str, madvise: bool, policy: &str, before: impl FnOnce(&mut M)) -> M {
    let mut m = program_machine(&cfg("16M", 1, &[("transparent_hugepage.defrag", defrag), ("thp.policy", policy)])).unwrap();
    let t = m.add_task(0);
    // Movable pages in every pageblock: fault base pages with THP off for this region.
    let v = m.mmap(4096 - 64, false, false).unwrap();
    m.procs.vmas[v].nohugepage = true;
    let start = m.procs.vmas[v].start;
    for p in start..start + 4096 - 600 {
        m.touch(t, p, true).unwrap();
    }
    // Free all but 64 pages of each pageblock's worth of the region: plenty free, no block.
    for p in start..start + 4096 - 600 {
        if (p - start) % 512 >= 64 {
            m.madv_dontneed(p, 1);
        }
    }
    let fr = m.mm.buddy.nr_free_by_order(0);
    assert_eq!(fr[9] + fr[10], 0, "no free order-9 block: {fr:?}");
    before(&mut m);
    let v2 = m.mmap(512, false, madvise).unwrap();
    let s2 = m.procs.vmas[v2].start;
    m.touch(t, s2, true).unwrap();
    Engine::check_invariants(&m).unwrap();
    m
}

#[test]
fn defrag_modes_decide_stall_wake_or_fallback() {
    use reclaimlab_core::mm::vmstat::Ev;
    for policy in ["thp@4.20-rc4", "thp@5.4"] {
        // madvise + MADV_HUGEPAGE: direct compaction succeeds (the region's pages move).
        let m = fault_on_fragmented("madvise", true, policy);
        assert_eq!(stat(&m, Tc::ThpFaultAlloc), 1, "{policy}");
        assert!(stat(&m, Tc::CompactStall) >= 1 && stat(&m, Tc::CompactSuccess) == 1);
        assert!(stat(&m, Tc::PgmigrateSuccess) > 0);
        // madvise without MADV_HUGEPAGE: no reclaim, no compaction, no kcompactd.
        let m = fault_on_fragmented("madvise", false, policy);
        assert_eq!((stat(&m, Tc::ThpFaultFallback), stat(&m, Tc::CompactStall), stat(&m, Tc::CompactDaemonWake)), (1, 0, 0), "{policy}");
        // defer: the fault falls back at once and wakes kswapd for order 9 (the node is
        // not balanced for it: no free block). With nothing it can reclaim (anon, no
        // swap) kswapd gives up and naps for order 0: no kcompactd (mm/vmscan.c 6.12
        // `kswapd`: `reclaim_order` is not below `alloc_order`, so the loop re-reads
        // `kswapd_order`, 0).
        let mut m = fault_on_fragmented("defer", false, policy);
        assert_eq!((stat(&m, Tc::ThpFaultFallback), stat(&m, Tc::CompactStall), stat(&m, Tc::CompactDaemonWake)), (1, 0, 0), "{policy}");
        assert!(m.kswapd[0].active, "{policy}: kswapd woken for the high order");
        let t = m.procs.tasks[0].clock;
        m.run_until(t + 2_000_000_000).unwrap();
        assert_eq!(stat(&m, Tc::CompactDaemonWake), 0, "{policy}");
        // With clean page cache to reclaim, kswapd reclaims compact_gap(9) = 1,024 pages
        // for order 9, balances for order 0 and wakes kcompactd for order 9 as it naps.
        let mut m = fault_on_fragmented_with("defer", false, policy, |m| {
            // No watermark boost (whose pass would wake kcompactd for pageblock_order).
            m.mm.buddy.watermark_boost_factor = 0;
            let f = m.mmap(1500, true, false).unwrap();
            for p in m.procs.vmas[f].start..m.procs.vmas[f].start + 1500 {
                m.touch(0, p, false).unwrap();
                let pfn = m.mm.pages.pte[p as usize];
                m.mm.frames.clear(pfn, pg::YOUNG | pg::MAPPED);
            }
        });
        let (steal, t) = (m.mm.vmstat.get(Ev::PgstealKswapd), m.procs.tasks[0].clock);
        assert!(m.kswapd[0].active && stat(&m, Tc::CompactDaemonWake) == 0, "{policy}");
        m.run_until(t + 2_000_000_000).unwrap();
        assert!(m.mm.vmstat.get(Ev::PgstealKswapd) - steal >= 1024, "{policy}: compact_gap(9) reclaimed");
        assert_eq!(stat(&m, Tc::CompactDaemonWake), 1, "{policy}");
        // never: nothing at all.
        let m = fault_on_fragmented("never", true, policy);
        assert_eq!((stat(&m, Tc::ThpFaultFallback), stat(&m, Tc::CompactStall), stat(&m, Tc::CompactDaemonWake)), (1, 0, 0));
        // always, not madvised: __GFP_NORETRY, still one direct compaction that succeeds.
        let m = fault_on_fragmented("always", false, policy);
        assert_eq!(stat(&m, Tc::ThpFaultAlloc), 1, "{policy}");
        assert_eq!(stat(&m, Tc::CompactStall), 1);
    }
}

#[test]
fn thp_fault_maps_512_pages_and_dontneed_defers_the_split() {
    let mut m = program_machine(&cfg("16M", 1, &[])).unwrap();
    let t = m.add_task(0);
    let v = m.mmap(1024, false, false).unwrap();
    let s = m.procs.vmas[v].start;
    let (f, lat) = m.touch(t, s + 5, true).unwrap();
    assert_eq!(f, Fault::Huge);
    // minor fault + clearing 512 pages.
    assert_eq!(lat, m.mm.cfg.cost.minor_fault_ns + 512 * m.mm.cfg.thp.clear_page_ns);
    let head = m.mm.pages.pte[s as usize];
    assert_eq!(head % 512, 0);
    for i in 0..512 {
        assert_eq!(m.mm.pages.pte[(s + i) as usize], head + i);
    }
    assert_eq!(m.touch(t, s + 300, false).unwrap().0, Fault::Hit);
    assert_eq!(stat(&m, Tc::ThpFaultAlloc), 1);
    // One page table was deposited.
    assert_eq!(stat(&m, Tc::NrPageTablePages), 1);
    // 6.12 queues every new THP for the underused check, not yet partially mapped.
    let memcg = m.mm.frames.memcg(head);
    assert_eq!(m.mm.thp.deferred_split.len(memcg), 1);
    assert_eq!(stat(&m, Tc::ThpDeferredSplitPage), 0);
    let free0 = free_or_pcp(&m);
    let lv = m.mm.folio_lruvec(head) as usize;
    let (usage0, lru0) = (m.mm.memcgs[memcg as usize].usage, m.mm.lruvecs[lv].lru_size.iter().sum::<u64>());
    m.madv_dontneed(s + 256, 256);
    assert_eq!((stat(&m, Tc::ThpSplitPmd), stat(&m, Tc::ThpDeferredSplitPage), stat(&m, Tc::ThpSplitPage)), (1, 1, 0));
    assert_eq!(free_or_pcp(&m), free0, "the unmapped half stays allocated until the split");
    assert_eq!(m.mm.thp.deferred_split.len(memcg), 1, "queued once");
    // The folio stays whole: one LRU entry of 512 pages, charged for 512, now mapped by
    // PTEs that took the PMD's young bit.
    assert!(m.mm.frames.test(head, pg::HEAD) && m.mm.folio_pte_mapped(head));
    assert_eq!(m.mm.folio_nr_pages(head), 512);
    assert_eq!((m.mm.memcgs[memcg as usize].usage, m.mm.lruvecs[lv].lru_size.iter().sum::<u64>()), (usage0, lru0));
    assert!(m.mm.frames.test(head + 255, pg::YOUNG) && !m.mm.frames.test(head + 256, pg::MAPPED));
    // DAMON's paddr ops find the folio from an unmapped subpage too (pfn_folio).
    assert_eq!(reclaimlab_core::damon::ops_paddr::damon_get_folio(&m.mm, (head + 300) as u64), Some(head));
    // A touch of a mapped subpage now sets its own PTE's young bit.
    m.mm.frames.clear(head, pg::YOUNG);
    m.mm.frames.clear(head + 100, pg::YOUNG);
    m.touch(t, s + 100, false).unwrap();
    assert!(m.mm.frames.test(head + 100, pg::YOUNG) && !m.mm.frames.test(head, pg::YOUNG));
    // A second unmap of part of it splits no PMD again.
    m.madv_dontneed(s + 200, 10);
    assert_eq!(stat(&m, Tc::ThpSplitPmd), 1);
    Engine::check_invariants(&m).unwrap();
    // The shrinker at DEF_PRIORITY: delta (1 >> 12) * 4 / 2 = 0, nothing scanned.
    reclaimlab_core::mm::shrinker::shrink_slab(&mut m.mm, &mut m.policy, 0, memcg, 12);
    assert_eq!(stat(&m, Tc::ThpSplitPage), 0);
    assert_eq!(split::deferred_split_scan(&mut m.mm, &mut m.policy, memcg, 128), Some(1));
    assert_eq!(m.mm.thp.deferred_split.len(memcg), 0);
    assert_eq!(stat(&m, Tc::ThpSplitPage), 1);
    // The split frees and uncharges the 266 unmapped subpages; the 246 mapped ones stay
    // on the LRU as base folios.
    assert_eq!(free_or_pcp(&m), free0 + 266);
    assert_eq!((m.mm.memcgs[memcg as usize].usage, m.mm.lruvecs[lv].lru_size.iter().sum::<u64>()), (usage0 - 266, lru0 - 266));
    assert!(!m.mm.frames.test(head, pg::COMPOUND) && !m.mm.frames.test(head, pg::HEAD));
    Engine::check_invariants(&m).unwrap();
}

/// Fault `n` THPs into a program machine of `mem` with zram swap of `swap`, touching
/// every page (so reclaim must evict some).
fn thps_under_reclaim(mem: &str, swap: &str, n: u32) -> (M, u32) {
    // In so small a machine the per-CPU lists' automatic high (up to an eighth of the zone
    // per CPU) would hold the frames zram needs for a whole THP: kept at its floor, 4 * batch.
    let pcp = ("vm.percpu_pagelist_high_fraction", "100000");
    let mut m = program_machine(&cfg(mem, 1, &[("transparent_hugepage.defrag", "never"), ("swap.device", "zram"), ("swap.size", swap), pcp])).unwrap();
    let t = m.add_task(0);
    let v = m.mmap(512 * n, false, false).unwrap();
    let s = m.procs.vmas[v].start;
    for k in 0..n {
        for i in 0..512 {
            m.touch(t, s + k * 512 + i, true).unwrap();
        }
    }
    (m, s)
}

#[test]
fn a_thp_is_one_lru_folio_aged_by_its_pmd() {
    let (mut m, s) = thps_under_reclaim("16M", "64M", 1);
    let head = m.mm.pages.pte[s as usize];
    assert!(m.mm.frames.test(head, pg::HEAD) && m.mm.frames.test(head, pg::LRU));
    assert_eq!(m.mm.folio_nr_pages(head), 512);
    // One list entry stands for 512 pages.
    let lv = m.mm.folio_lruvec(head) as usize;
    let entries: usize = (0..m.mm.pfn_end).filter(|&f| m.mm.frames.test(f, pg::LRU)).count();
    assert_eq!(entries, 1);
    assert_eq!(m.mm.lruvecs[lv].lru_size.iter().sum::<u64>(), 512);
    // A touch of any subpage sets the PMD's accessed bit, kept at the head.
    m.mm.frames.clear(head, pg::YOUNG);
    m.touch(0, s + 300, false).unwrap();
    assert!(m.mm.frames.test(head, pg::YOUNG) && !m.mm.frames.test(head + 300, pg::YOUNG));
    assert_eq!(m.mm.page_folio(head + 300), head);
    Engine::check_invariants(&m).unwrap();
}

#[test]
fn reclaim_swaps_a_thp_out_whole() {
    let (m, s) = thps_under_reclaim("24M", "64M", 16);
    let swpout = stat(&m, Tc::ThpSwpout);
    assert!(swpout >= 1, "no THP swapped out whole");
    assert_eq!((stat(&m, Tc::ThpSplitPage), stat(&m, Tc::ThpSwpoutFallback)), (0, 0));
    let pswpout = m.counters().into_iter().find(|(k, _)| k == "pswpout").unwrap().1;
    assert_eq!(pswpout, 512 * swpout, "only whole THPs were swapped");
    // A THP swapped out whole: all 512 pages out, one shadow in every slot.
    let k = (0..12).find(|k| !reclaimlab_core::mm::page::is_resident(m.mm.pages.pte[(s + k * 512) as usize])).unwrap();
    let first = s + k * 512;
    let shadow = m.mm.pages.shadow(first as usize);
    assert_ne!(shadow, 0);
    for i in 0..512 {
        assert!(!reclaimlab_core::mm::page::is_resident(m.mm.pages.pte[(first + i) as usize]));
        assert_eq!(m.mm.pages.shadow((first + i) as usize), shadow);
    }
    Engine::check_invariants(&m).unwrap();
}

#[test]
fn reclaim_splits_a_thp_without_a_free_swap_cluster() {
    // 1 MiB of swap is 256 slots: no SWAPFILE_CLUSTER of 512 fits. 17 MiB hold all but
    // about a hundred of the 8 THPs' pages.
    let (m, _) = thps_under_reclaim("17M", "1M", 8);
    assert!(stat(&m, Tc::ThpFaultAlloc) >= 1);
    assert_eq!(stat(&m, Tc::ThpSwpout), 0);
    assert!(stat(&m, Tc::ThpSwpoutFallback) >= 1, "add_to_swap of a THP without a cluster falls back");
    assert!(stat(&m, Tc::ThpSplitPage) >= stat(&m, Tc::ThpSwpoutFallback), "the fallback splits the THP");
    Engine::check_invariants(&m).unwrap();
}

/// Partially mapped THPs under reclaim: each is split once, by reclaim or by the
/// shrinker when reclaim's priority falls, and leaves its queue.
#[test]
fn reclaim_splits_partially_mapped_thps() {
    let (mut m, s) = thps_under_reclaim("16M", "64M", 4);
    for k in 0..4 {
        m.madv_dontneed(s + k * 512, 256);
    }
    assert_eq!((stat(&m, Tc::ThpDeferredSplitPage), stat(&m, Tc::ThpSplitPage)), (4, 0));
    let v = m.mmap(4096, false, false).unwrap();
    m.procs.vmas[v].nohugepage = true;
    let b = m.procs.vmas[v].start;
    for i in 0..4096 {
        m.touch(0, b + i, true).unwrap();
    }
    let c = |name: &str| m.counters().into_iter().find(|(k, _)| k == name).map_or(0, |(_, v)| v);
    assert!(c("pgscan_kswapd") + c("pgscan_direct") > 0, "reclaim ran");
    let split = stat(&m, Tc::ThpSplitPage);
    assert!(split >= 1, "reclaim split no partially mapped THP");
    // What reclaim split left the queue; the rest wait on it, still partially mapped.
    let memcg = m.mm.frames.memcg(m.mm.pages.pte[(b + 4095) as usize]);
    assert_eq!(m.mm.thp.deferred_split.len(memcg), 4 - split);
    Engine::check_invariants(&m).unwrap();
}

/// 6.12's `shrink_folio_list` splits a partially mapped THP as soon as reclaim takes it
/// ("We can free the unmapped pages without IO"): every subpage makes its own pass; the
/// mapped ones are swapped out, the unmapped ones get a swap slot that `swap_writepage`
/// drops again at once (`folio_free_swap`: no PTE holds the entry) — counted in
/// `nr_vmscan_write` and `nr_pageout` but neither swapped out nor stolen — and are freed
/// at putback. This is what the 6.12 guest's MGLRU thpscale count shows: 91,897
/// `nr_vmscan_write` for 46,551 `pswpout` (docs/validation.md).
#[test]
fn reclaim_frees_a_partially_mapped_thps_unmapped_half_without_io() {
    use reclaimlab_core::vmscan::{shrink_folio_list, Reclaimer, ScanControl};
    let (mut m, s) = thps_under_reclaim("16M", "64M", 1);
    // The first half goes, the head's own page with it (as thpscale punches).
    m.madv_dontneed(s, 256);
    let head = m.mm.pages.pte[(s + 256) as usize] - 256;
    assert!(m.mm.frames.test(head, pg::HEAD) && m.mm.frames.page(head) == reclaimlab_core::mm::page::NO_PAGE);
    for f in head..head + 512 {
        m.mm.frames.clear(f, pg::YOUNG | pg::REFERENCED);
    }
    assert!(m.policy.folio_isolate_lru(&mut m.mm, head));
    let memcg = m.mm.frames.memcg(head) as usize;
    let c = |m: &M, name: &str| m.counters().into_iter().find(|(k, _)| k == name).map_or(0, |(_, v)| v);
    let (steal0, swp0, write0, usage0) = (c(&m, "pgsteal_kswapd"), c(&m, "pswpout"), c(&m, "nr_vmscan_write"), m.mm.memcgs[memcg].usage);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
    let mut folios = vec![head];
    let r = shrink_folio_list(&mut m.mm, &mut m.policy, &mut folios, &mut sc);
    assert_eq!(stat(&m, Tc::ThpSplitPage), 1);
    assert_eq!((r.nr_reclaimed, r.nr_pageout, sc.nr_scanned), (256, 512, 512));
    assert_eq!((c(&m, "pgsteal_kswapd") - steal0, c(&m, "pswpout") - swp0, c(&m, "nr_vmscan_write") - write0), (256, 256, 512));
    assert_eq!(m.mm.memcgs[memcg].usage, usage0 - 512);
    assert!(folios.is_empty());
    Engine::check_invariants(&m).unwrap();
}

/// A THP mapped by PTEs is referenced through its mapping: classic reclaim's rmap walk
/// clears every young PTE of it and counts the mapping once (`pra->referenced` counts
/// VMAs, mm/rmap.c 6.12), so the folio is kept once with PG_referenced, then reclaimed —
/// split, its unmapped half freed — when no PTE was young again.
#[test]
fn a_pte_mapped_thp_counts_one_reference_per_mapping() {
    use reclaimlab_core::vmscan::{shrink_folio_list, Reclaimer, ScanControl};
    let (mut m, s) = thps_under_reclaim("16M", "64M", 1);
    m.madv_dontneed(s + 256, 256);
    let head = m.mm.pages.pte[s as usize];
    for f in head..head + 512 {
        m.mm.frames.clear(f, pg::YOUNG | pg::REFERENCED);
    }
    m.touch(0, s + 3, false).unwrap();
    m.touch(0, s + 7, false).unwrap();
    assert!(m.policy.folio_isolate_lru(&mut m.mm, head));
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
    let mut folios = vec![head];
    let r = shrink_folio_list(&mut m.mm, &mut m.policy, &mut folios, &mut sc);
    assert_eq!((r.nr_activate, r.nr_reclaimed, stat(&m, Tc::ThpSplitPage)), ([0, 0], 0, 0));
    assert_eq!(folios, vec![head]);
    assert!(m.mm.frames.test(head, pg::REFERENCED));
    assert!(!m.mm.frames.test(head + 3, pg::YOUNG) && !m.mm.frames.test(head + 7, pg::YOUNG), "both young bits consumed");
    // No PTE young the next time: reclaimed, the mapped half swapped.
    let r = shrink_folio_list(&mut m.mm, &mut m.policy, &mut folios, &mut sc);
    assert_eq!((r.nr_reclaimed, stat(&m, Tc::ThpSplitPage)), (256, 1));
    assert!(folios.is_empty());
    Engine::check_invariants(&m).unwrap();
}

#[test]
fn khugepaged_collapses_a_range_within_max_ptes_none() {
    let mut m =
        program_machine(&cfg("16M", 1, &[("transparent_hugepage.khugepaged.scan_sleep_millisecs", "1"), ("transparent_hugepage.khugepaged.max_ptes_none", "100")])).unwrap();
    let t = m.add_task(0);
    let v = m.mmap(1024, false, false).unwrap();
    let s = m.procs.vmas[v].start;
    // Base pages: pre-create the page tables by touching with THP off for this VMA, then allow THP.
    m.procs.vmas[v].nohugepage = true;
    for i in 0..450 {
        m.touch(t, s + i, true).unwrap(); // 62 none PTEs: collapsible
    }
    for i in 512..512 + 300 {
        m.touch(t, s + i, true).unwrap(); // 212 none: above max_ptes_none
    }
    m.procs.vmas[v].nohugepage = false;
    let old = m.mm.pages.pte[s as usize];
    m.procs.tasks[t].clock += 5_000_000;
    m.touch(t, s, false).unwrap(); // time passes: khugepaged runs
    assert_eq!(stat(&m, Tc::ThpCollapseAlloc), 1);
    let head = m.mm.pages.pte[s as usize];
    assert_ne!(head, old);
    assert!(m.mm.frames.test(head, pg::COMPOUND));
    // The range's none PTEs were filled by the collapse; the other range stays base pages.
    assert!(reclaimlab_core::mm::page::is_resident(m.mm.pages.pte[(s + 500) as usize]));
    assert!(!m.mm.frames.test(m.mm.pages.pte[(s + 512) as usize], pg::COMPOUND));
    Engine::check_invariants(&m).unwrap();
}

/// A machine whose khugepaged scans every millisecond, one task, a 1024-page anonymous
/// VMA whose first `n` pages are base pages: (machine, task, the VMA's first page).
fn base_pages_for_khugepaged(n: u32) -> (Machine<Box<dyn ReclaimPolicy>>, usize, u32) {
    let mut m = program_machine(&cfg("16M", 1, &[("transparent_hugepage.khugepaged.scan_sleep_millisecs", "1")])).unwrap();
    let t = m.add_task(0);
    let v = m.mmap(1024, false, false).unwrap();
    let s = m.procs.vmas[v].start;
    m.procs.vmas[v].nohugepage = true;
    for i in 0..n {
        m.touch(t, s + i, true).unwrap();
    }
    m.procs.vmas[v].nohugepage = false;
    (m, t, s)
}

/// Time passes (the task's next access, in the VMA's second range): khugepaged runs.
fn let_khugepaged_run(m: &mut Machine<Box<dyn ReclaimPolicy>>, t: usize, s: u32) {
    m.procs.tasks[t].clock += 5_000_000;
    m.touch(t, s + 600, false).unwrap();
}

/// A range whose PTEs are all old and whose folios are unreferenced (reclaim's
/// `folio_referenced` consumed the accessed bits) is not collapsed
/// (`SCAN_LACK_REFERENCED_PAGE`, mm/khugepaged.c 6.12); one young PTE is enough.
#[test]
fn khugepaged_leaves_a_range_no_access_marks() {
    for young in [false, true] {
        let (mut m, t, s) = base_pages_for_khugepaged(450);
        for i in 0..450 {
            let pfn = m.mm.pages.pte[(s + i) as usize];
            m.mm.frames.clear(pfn, pg::YOUNG | pg::REFERENCED);
        }
        if young {
            let pfn = m.mm.pages.pte[(s + 449) as usize];
            m.mm.frames.set(pfn, pg::YOUNG);
        }
        let_khugepaged_run(&mut m, t, s);
        assert_eq!(stat(&m, Tc::ThpCollapseAlloc), u64::from(young), "young: {young}");
        Engine::check_invariants(&m).unwrap();
    }
}

/// thpscale's holes: the first half of a touched 2 MiB range `munmap`ped splits the VMA, so
/// khugepaged passes the range by (no VMA spans it: `thp_vma_suitable_order`); the same
/// half dropped with `MADV_DONTNEED` leaves the VMA whole and the range is collapsed.
#[test]
fn khugepaged_passes_by_a_range_a_partial_munmap_split() {
    for split in [false, true] {
        let (mut m, t, s) = base_pages_for_khugepaged(512);
        if split {
            m.munmap_range(s, 256);
        } else {
            m.madv_dontneed(s, 256);
        }
        let_khugepaged_run(&mut m, t, s);
        assert_eq!(stat(&m, Tc::ThpCollapseAlloc), u64::from(!split), "split: {split}");
        Engine::check_invariants(&m).unwrap();
    }
}

#[test]
fn numa_counters_follow_zone_statistics() {
    // Two nodes of 8 MiB; a task on node 0 faults more than node 0 holds (THP off).
    let mut m = program_machine(&cfg("16M", 2, &[("transparent_hugepage.enabled", "never")])).unwrap();
    let t = m.add_task(0);
    let v = m.mmap(3000, false, false).unwrap();
    let s = m.procs.vmas[v].start;
    for p in s..s + 3000 {
        m.touch(t, p, true).unwrap();
    }
    let hit = stat(&m, Tc::NumaHit);
    let miss = stat(&m, Tc::NumaMiss);
    let per = m.pages_per_node(s, 3000);
    assert!(per[1] > 0, "node 0 overflowed to node 1: {per:?}");
    // Every allocation (pages + page tables) counted once: hit + miss.
    assert_eq!(hit + miss, 3000 + stat(&m, Tc::NrPageTablePages));
    assert_eq!(miss, stat(&m, Tc::NumaForeign));
    assert_eq!(stat(&m, Tc::NumaLocal), hit);
    assert_eq!(stat(&m, Tc::NumaOther), miss);
    assert!(miss >= per[1]);
    Engine::check_invariants(&m).unwrap();
}

#[test]
fn proactive_compaction_lowers_the_fragmentation_score() {
    let (mut m, _, start) = base_filled(3500);
    for p in (start..start + 3500).filter(|p| p % 3 != 0) {
        m.madv_dontneed(p, 1);
    }
    let before = compaction::fragmentation_score_node(&m.mm, 0);
    assert!(before > compaction::fragmentation_score_wmark(20, false), "score {before}");
    compaction::kcompactd_compact_zone(&mut m.mm, 0, None);
    let after = compaction::fragmentation_score_node(&m.mm, 0);
    assert!(after < before, "{before} -> {after}");
    assert!(stat(&m, Tc::CompactDaemonMigrateScanned) > 0);
    Engine::check_invariants(&m).unwrap();
}

/// kcompactd's timeout path on a machine left alone: 16 MiB, one node, 3500 anonymous base
/// pages of which two in three are unmapped again (every free page in a block below order
/// 9: score above the proactive watermark of `vm.compaction_proactiveness` = 20). With no
/// allocation at all for 3 s, `thp@6.12`'s kcompactd compacts proactively (v5.9) and the
/// node's fragmentation score falls; `thp@5.5`'s kernel has no proactive compaction.
/// kcompactd's proactive period and khugepaged's sleep are kernel timers: with
/// `sim.time_dilation` 10 they come 10 times sooner on the simulated clock, as kswapd's nap.
#[test]
fn daemon_timers_follow_the_time_dilation() {
    for (dilation, period, sleep) in [("1", 500_000_000, 10_000_000_000u64), ("10", 50_000_000, 1_000_000_000)] {
        let c = cfg("16M", 1, &[("sim.time_dilation", dilation)]);
        let mut m = program_machine(&c).unwrap();
        assert_eq!(m.kcompactd[0].next_proactive, period, "dilation {dilation}");
        // The first anonymous mapping (at time 0) registers the mm: the scan comes a sleep later.
        m.mmap(512, false, false).unwrap();
        assert_eq!(m.khugepaged.next_scan, sleep, "dilation {dilation}");
    }
}

#[test]
fn thp_6_12_compacts_proactively_where_5_5_does_not() {
    for (policy, proactive) in [("thp@6.12", true), ("thp@5.5", false)] {
        let c = cfg("16M", 1, &[("transparent_hugepage.enabled", "never"), ("thp.policy", policy)]);
        let mut m = program_machine(&c).unwrap();
        assert_eq!(m.proactive, proactive, "{policy}");
        m.mm.buddy.watermark_boost_factor = 0;
        let t = m.add_task(0);
        let v = m.mmap(3500, false, false).unwrap();
        let start = m.procs.vmas[v].start;
        for p in start..start + 3500 {
            m.touch(t, p, true).unwrap();
        }
        for p in (start..start + 3500).filter(|p| p % 3 != 0) {
            m.madv_dontneed(p, 1);
        }
        let now = m.procs.tasks[t].clock;
        m.run_until(now + 1).unwrap();
        let before = compaction::fragmentation_score_node(&m.mm, 0);
        assert!(before > compaction::fragmentation_score_wmark(20, false), "{policy}: score {before}");
        m.run_until(now + 3_000_000_000).unwrap();
        let after = compaction::fragmentation_score_node(&m.mm, 0);
        if proactive {
            assert!(after <= compaction::fragmentation_score_wmark(20, true), "{policy}: {before} -> {after}");
            assert!(stat(&m, Tc::PgmigrateSuccess) > 0 && stat(&m, Tc::CompactDaemonMigrateScanned) > 0);
        } else {
            assert_eq!(after, before, "{policy}");
            assert_eq!(stat(&m, Tc::PgmigrateSuccess), 0);
        }
        assert_eq!(stat(&m, Tc::CompactStall), 0, "{policy}: no allocation asked for compaction");
        Engine::check_invariants(&m).unwrap();
    }
}

/// 16 MiB, one node: one unmovable page pinned at the start of every pageblock, then
/// anonymous base pages (pageblocks claimed movable around their pinned page) of which
/// every other run of 8 is unmapped ([`refill`]). No pageblock can ever be freed whole: every order-9
/// compaction fails with the scanners met.
fn pinned_and_half_free(policy: &str) -> (M, usize, u32) {
    let c = cfg("16M", 1, &[("transparent_hugepage.enabled", "never"), ("thp.policy", policy)]);
    let mut m = program_machine(&c).unwrap();
    m.mm.buddy.watermark_boost_factor = 0;
    let mut all = vec![];
    while let Some(p) = m.mm.buddy.alloc(&mut m.mm.lists, &mut m.mm.frames.owner, 0, 0, MigrateType::Unmovable) {
        all.push(p);
    }
    for &p in &all {
        if p % PAGEBLOCK_NR_PAGES != 0 {
            m.mm.buddy.free(&mut m.mm.lists, &mut m.mm.frames.owner, p, 0);
        }
    }
    let t = m.add_task(0);
    let v = m.mmap(3000, false, false).unwrap();
    let start = m.procs.vmas[v].start;
    refill(&mut m, t, start);
    (m, t, start)
}

/// Unmap the region, fault its 3000 pages again and unmap every other run of 8 (so that
/// `__reset_isolation_pfn`'s sample of every 8th page sees both kinds): the pageblocks
/// hold LRU pages and free pages again, whatever compaction left (the skip bits stay).
fn refill(m: &mut M, t: usize, start: u32) {
    m.madv_dontneed(start, 3000);
    for p in start..start + 3000 {
        assert_eq!(m.touch(t, p, true).unwrap().0, Fault::Base);
    }
    for p in (start..start + 3000).step_by(16) {
        m.madv_dontneed(p, 8);
    }
}

/// One async direct compaction of zone 0 for order 9: (result, pages migrated).
fn compact_async(m: &mut M) -> (CompactResult, u64) {
    let mut cc = CompactControl::new(0, Some(9), MigrateMode::Async, Compactor::Direct, &m.mm);
    let r = compaction::compact_zone(&mut m.mm, &mut cc);
    (r, cc.nr_migrated)
}

/// Per pageblock marked skip: the frames on an LRU in it.
fn lru_of_marked(m: &M) -> Vec<(usize, Vec<u32>)> {
    (0..m.mm.thp.skip.len()).filter(|&b| m.mm.thp.skip[b]).map(|b| (b, (b as u32 * 512..b as u32 * 512 + 512).filter(|&f| m.mm.frames.test(f, pg::LRU)).collect())).collect()
}

/// Whether a compaction took a page from or put one into a pageblock of `marked`.
fn touched_marked(m: &M, marked: &[(usize, Vec<u32>)]) -> bool {
    marked.iter().any(|(b, lru)| {
        let now: Vec<u32> = (*b as u32 * 512..*b as u32 * 512 + 512).filter(|&f| m.mm.frames.test(f, pg::LRU)).collect();
        &now != lru
    })
}

/// The skip hints of 6.12 (v5.1's rules, mm/compaction.c): a failed direct compaction
/// marks the pageblocks it took pages from (`test_and_set_skip`) and those its free
/// scanner went through, and asks for a flush (`compact_blockskip_flush`). Nothing clears
/// the marks at the next compaction: after the memory under them changed, compaction still
/// leaves the marked pageblocks alone, until kswapd goes to sleep (`kswapd_try_to_sleep` →
/// `reset_isolation_suitable`) or compaction restarts after the longest deferral
/// (`compaction_restarting`) — and a restart clears nothing unless a flush is pending.
/// v4.20 marks only pageblocks where nothing could be isolated.
#[test]
fn skip_hints_persist_until_kswapd_sleeps_or_compaction_restarts() {
    use compaction::SkipHints;
    let (mut m, t, start) = pinned_and_half_free("thp@6.12");
    assert_eq!(compaction::skip_hints(&m.mm), SkipHints::V5_1);
    let frag = compaction::fragmentation_index(&m.mm.buddy.nr_free_by_order(0), 9);
    assert!(frag > 500, "fragmentation, not lack of memory: {frag}");
    let (r, migrated) = compact_async(&mut m);
    assert!(matches!(r, CompactResult::Complete | CompactResult::PartialSkipped), "{r:?}");
    assert!(migrated > 0);
    assert!(m.mm.thp.zones[0].blockskip_flush, "a direct compaction's scanners met");
    let nr_marked = m.mm.thp.skip.iter().filter(|&&b| b).count();
    assert!(nr_marked >= 4, "{nr_marked} of 8 pageblocks marked: {:?}", m.mm.thp.skip);
    // The marked pageblocks hold LRU and free pages again; compaction leaves them alone.
    refill(&mut m, t, start);
    for _ in 0..3 {
        let marked = lru_of_marked(&m);
        let (r, _) = compact_async(&mut m);
        assert!(r != CompactResult::Success, "{r:?}");
        assert!(!touched_marked(&m, &marked), "a marked pageblock was compacted");
        assert!(m.mm.thp.zones[0].blockskip_flush, "the flush waits for kswapd");
    }
    // kswapd goes to sleep: the marks of pageblocks with LRU or free pages go.
    let marked = lru_of_marked(&m);
    compaction::reset_isolation_suitable(&mut m.mm, 0);
    assert!(!m.mm.thp.zones[0].blockskip_flush);
    assert!(m.mm.thp.skip.iter().filter(|&&b| b).count() < marked.len());
    let (_, migrated) = compact_async(&mut m);
    assert!(migrated > 0 && touched_marked(&m, &marked), "after kswapd's reset compaction uses them again");
    // Marked again (and a flush pending); memory changes again.
    refill(&mut m, t, start);
    let restart = |m: &mut M| {
        let zc = &mut m.mm.thp.zones[0];
        zc.defer_shift = compaction::COMPACT_MAX_DEFER_SHIFT;
        zc.considered = 1 << compaction::COMPACT_MAX_DEFER_SHIFT;
        zc.order_failed = 0;
        let marked = lru_of_marked(m);
        compact_async(m);
        touched_marked(m, &marked)
    };
    // A restart with no flush pending clears nothing (6.12); with one, the marks go.
    assert!(m.mm.thp.skip.iter().any(|&b| b));
    m.mm.thp.zones[0].blockskip_flush = false;
    assert!(!restart(&mut m), "6.12: __reset_isolation_suitable needs compact_blockskip_flush");
    m.mm.thp.zones[0].blockskip_flush = true;
    assert!(restart(&mut m), "compaction_restarting cleared the marks");

    // v4.20: a pageblock compaction took pages from is not marked, so after the memory
    // changed the next compaction takes pages from it again, with no reset in between.
    let (mut m, t, start) = pinned_and_half_free("thp@4.20-rc4");
    assert_eq!(compaction::skip_hints(&m.mm), SkipHints::V4_20);
    let (_, first) = compact_async(&mut m);
    assert!(first > 0 && m.mm.thp.zones[0].blockskip_flush);
    assert!(m.mm.thp.skip.iter().filter(|&&b| b).count() < nr_marked);
    refill(&mut m, t, start);
    let (_, second) = compact_async(&mut m);
    assert!(second > 0, "v4.20 compacts the pageblocks it took pages from again");
    assert!(m.mm.thp.zones[0].blockskip_flush, "and no longer flushes at the next compaction");
}

#[test]
fn unmovable_page_tables_land_in_unmovable_pageblocks() {
    // Page tables (one per 512 pages) claim an unmovable pageblock and then come from it,
    // so they do not scatter over movable pageblocks (__rmqueue_claim/__rmqueue_smallest).
    let (m, _, _) = base_filled(3000);
    let tables: Vec<u32> = m.procs.pgtable.iter().copied().filter(|&p| p != u32::MAX).collect();
    assert_eq!(tables.len(), 6);
    for &p in &tables {
        assert_eq!(m.mm.buddy.pageblock_migratetype(p), MigrateType::Unmovable);
    }
    let blocks: std::collections::BTreeSet<u32> = tables.iter().map(|p| p / 512).collect();
    assert_eq!(blocks.len(), 1);
}

/// Seed 003's first table, thpscale with MADV_HUGEPAGE on two nodes, the seed's thread
/// counts run one after another on one machine per policy: the local-only patch gets
/// fewer huge pages than the baseline on the mean over thread counts and at most of them,
/// and a lower mean fault latency at most; every later design, whose all-node attempt can
/// compact (and reclaim) on the other node, gets more huge pages than the patch on the mean
/// (docs/thp.md has the figures). Since the skip bits persist until kswapd sleeps or
/// compaction restarts (as in the kernel), compaction fails often enough in every policy
/// that v5.4 no longer sits between the two at every count.
#[test]
fn thpscale_local_only_trades_success_for_latency() {
    use reclaimlab_core::scenario::thp::{thpscale, ThpscaleParams};
    let mut res = std::collections::BTreeMap::new();
    for p in THP_POLICIES {
        let c = cfg("1G", 2, &[("thp.policy", p.name), ("swap.device", "zram")]);
        let runs = thpscale(&c, &ThpscaleParams::default()).unwrap();
        let rows: Vec<(u32, f64, f64)> = runs
            .iter()
            .map(|r| {
                let all: Vec<f64> = r.fault_base_us.iter().chain(&r.fault_huge_us).copied().collect();
                (r.threads, r.huge_pct(), all.iter().sum::<f64>() / all.len() as f64)
            })
            .collect();
        res.insert(p.name, rows);
    }
    let (base, local) = (&res["thp@4.20-rc4"], &res["thp+gfp-thisnode-v1"]);
    let (mut fewer, mut lower_latency) = (0, 0);
    for (b, l) in base.iter().zip(local) {
        fewer += (l.1 < b.1) as usize;
        lower_latency += (l.2 < b.2) as usize;
    }
    let mean = |rows: &Vec<(u32, f64, f64)>| rows.iter().map(|r| r.1).sum::<f64>() / rows.len() as f64;
    assert!(mean(local) < mean(base), "{res:?}");
    assert!(fewer > base.len() / 2, "{fewer}: {res:?}");
    assert!(lower_latency > base.len() / 2, "{lower_latency}: {res:?}");
    for later in ["thp@5.4", "thp@5.5", "thp@6.12"] {
        assert!(mean(&res[later]) > mean(local), "{later}: {res:?}");
    }
}

#[test]
fn dontneed_of_whole_and_split_thps() {
    let mut m = program_machine(&cfg("16M", 1, &[])).unwrap();
    let t = m.add_task(0);
    let v = m.mmap(1024, false, false).unwrap();
    let s = m.procs.vmas[v].start;
    // A whole THP zapped: its deposited page table goes too, the next fault is huge again.
    assert_eq!(m.touch(t, s, true).unwrap().0, Fault::Huge);
    let free0 = free_or_pcp(&m);
    m.madv_dontneed(s, 512);
    assert_eq!(free_or_pcp(&m), free0 + 513);
    Engine::check_invariants(&m).unwrap();
    assert_eq!(m.touch(t, s, true).unwrap().0, Fault::Huge);
    // Part of it zapped (PMD split, deferred split), then the rest: all 512 frames are freed,
    // the PTE table stays (the PMD now points to it), so the refault is a base page.
    let free1 = free_or_pcp(&m);
    m.madv_dontneed(s + 100, 50);
    m.madv_dontneed(s, 512);
    assert_eq!(free_or_pcp(&m), free1 + 512);
    assert_eq!(stat(&m, Tc::ThpSplitPage), 0);
    Engine::check_invariants(&m).unwrap();
    assert_eq!(m.touch(t, s, true).unwrap().0, Fault::Base);
    // The freed THP left the queue; a new one joins it, and the scan takes it off without
    // splitting it (not partially mapped, not underused): SHRINK_STOP.
    assert_eq!(m.touch(t, s + 512, true).unwrap().0, Fault::Huge);
    let memcg = m.mm.frames.memcg(m.mm.pages.pte[(s + 512) as usize]);
    assert_eq!(m.mm.thp.deferred_split.len(memcg), 1);
    assert_eq!(split::deferred_split_scan(&mut m.mm, &mut m.policy, memcg, 128), None);
    assert_eq!(m.mm.thp.deferred_split.len(memcg), 0);
    assert!(m.mm.frames.test(m.mm.pages.pte[(s + 512) as usize], pg::COMPOUND));
    Engine::check_invariants(&m).unwrap();
}

#[test]
fn bad_thp_settings_are_named() {
    let mut c = SimConfig::default();
    let e = c.set("transparent_hugepage.defrag", "sometimes").unwrap_err().to_string();
    assert!(e.contains("transparent_hugepage.defrag") && e.contains("defer+madvise"), "{e}");
    assert!(c.set("transparent_hugepage.khugepaged.max_ptes_none", "512").is_err());
    c.set("thp.policy", "thp@9.9").unwrap();
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("thp.policy") && e.contains("thp@5.4"), "{e}");
    assert!(program_machine(&c).is_err());
    // 16 MiB: MAPSIZE = 3276 pages, 102 per thread at 32 threads, under one huge page.
    use reclaimlab_core::scenario::thp::{thpscale, ThpscaleParams};
    let e = thpscale(&cfg("16M", 1, &[]), &ThpscaleParams { threads: vec![1, 32], ..Default::default() }).unwrap_err().to_string();
    assert!(e.contains("machine.memory") && e.contains("32 threads"), "{e}");
}

#[test]
fn scenarios_are_deterministic_and_keep_invariants() {
    use reclaimlab_core::scenario::thp::{thpscale, usemem, ThpscaleParams, UsememParams};
    // (Debug builds check every structural invariant at the end of each scenario run.)
    let c = cfg("256M", 2, &[("thp.policy", "thp@4.20-rc4"), ("swap.device", "zram")]);
    let p = ThpscaleParams { threads: vec![5, 2], ..Default::default() };
    let (a, b) = (thpscale(&c, &p).unwrap(), thpscale(&c, &p).unwrap());
    for (a, b) in a.iter().zip(&b) {
        assert_eq!(a.fault_base_us, b.fault_base_us);
        assert_eq!(a.fault_huge_us, b.fault_huge_us);
        assert_eq!(a.counters, b.counters);
    }
    assert!(!a[0].fault_huge_us.is_empty());
    let mut c = cfg("256M", 2, &[("transparent_hugepage.defrag", "always"), ("swap.device", "zram")]);
    c.set("thp.policy", "thp+gfp-thisnode-v1").unwrap();
    let p = UsememParams { threads: 3, passes: 2, ..Default::default() };
    let (a, b) = (usemem(&c, &p).unwrap(), usemem(&c, &p).unwrap());
    assert_eq!(a.elapsed_s, b.elapsed_s);
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.pages_per_node, b.pages_per_node);
}

/// usemem's page cache as the validation guest fills it (guest/thp.c `reader`): one reader
/// per node loads its contiguous share of the file through the shared mapping, so the page
/// cache is clean (nothing dirtied or written back) and each node holds its reader's share.
/// The scenario used to store to every page, and to hand the readers alternate pages: on the
/// guest's sizes its reclaim then waited on writeback and swapped (docs/validation.md, THP).
#[test]
fn usemem_readers_load_their_share_of_the_page_cache() {
    use reclaimlab_core::scenario::thp::{usemem, UsememParams};
    let c = cfg("256M", 2, &[("transparent_hugepage.defrag", "always"), ("swap.device", "zram")]);
    // A region of 10 % and no passes: nothing is reclaimed, the fill stays as it was made.
    let r = usemem(&c, &UsememParams { threads: 1, cache_pct: 50, usemem_pct: 10, passes: 0 }).unwrap();
    let v = |k: &str| r.counters.iter().find(|(n, _)| n == k).unwrap().1;
    assert_eq!((v("nr_dirtied"), v("nr_written"), v("pgsteal_file")), (0, 0, 0));
    // Each node holds its reader's half, give or take the read-around window (128 KiB,
    // `ra_pages / 2` of it before the faulting page) reader 1 reads first, at its share's start.
    let file = 65536 / 2;
    assert_eq!(r.cache_pages_per_node.iter().sum::<u64>(), file);
    assert!(r.cache_pages_per_node.iter().all(|&n| n.abs_diff(file / 2) <= 32), "{:?}", r.cache_pages_per_node);
}

/// 256 MiB, one node, THP off, zram: a task's 20,000 anonymous pages and 30,000 pages of
/// clean page cache, balanced and kswapd asleep. 256 MiB: at DEF_PRIORITY a step scans
/// lru_size >> 12 pages, and a boosted step that reclaims nothing ends the pass, so the LRUs
/// must hold more than 4096 pages.
fn anon_and_clean_cache(extra: &[(&str, &str)]) -> (M, usize) {
    let mut m = program_machine(&cfg("256M", 1, &[&[("transparent_hugepage.enabled", "never"), ("swap.device", "zram")], extra].concat())).unwrap();
    let t = m.add_task(0);
    let a = m.mmap(20_000, false, false).unwrap();
    let f = m.mmap(30_000, true, false).unwrap();
    for p in m.procs.vmas[a].start..m.procs.vmas[a].start + 20_000 {
        m.touch(t, p, true).unwrap();
    }
    // Clean page cache (boosted reclaim does not write: `may_writepage =
    // !nr_boost_reclaim`) as read() leaves it: the mapping only filled it, so its pages
    // lose their PTEs' accessed bits and mappings (a first-scan mapped page is kept).
    for p in m.procs.vmas[f].start..m.procs.vmas[f].start + 30_000 {
        m.touch(t, p, false).unwrap();
        let pfn = m.mm.pages.pte[p as usize];
        m.mm.frames.clear(pfn, pg::YOUNG | pg::MAPPED);
    }
    assert!(m.mm.pgdat_balanced(0, 0, ZONE_MOVABLE) && !m.kswapd[0].active);
    (m, t)
}

/// MGLRU's root reclaim does nothing without `may_writepage` (`lru_gen_shrink_node`,
/// mm/vmscan.c 6.12: "Unmapped clean folios are already prioritized ... goto done"), which a
/// boosted kswapd pass clears ("Do not writeback or swap pages for boosted reclaim"). Two
/// identical machines, root reclaim's `shrink_node` four times at priority 4 with swap off:
/// with `may_writepage` it reclaims clean page cache, without it nothing is even scanned.
#[test]
fn mglru_root_reclaim_needs_may_writepage() {
    use reclaimlab_core::mm::vmstat::Ev;
    use reclaimlab_core::vmscan::{shrink_node, Reclaimer, ScanControl};
    let steal = |may_writepage: bool| {
        let (mut m, _) = anon_and_clean_cache(&[("policy", "mglru@6.12")]);
        let mut sc = ScanControl::new(Reclaimer::Direct, 1024);
        (sc.priority, sc.may_swap, sc.may_writepage) = (4, false, may_writepage);
        // The first calls age (the page cache sits in the youngest generation), the next evict.
        for _ in 0..4 {
            shrink_node(&mut m.mm, &mut m.policy, 0, &mut sc);
        }
        Engine::check_invariants(&m).unwrap();
        (m.mm.vmstat.get(Ev::PgscanDirect), sc.nr_reclaimed)
    };
    let (scanned, reclaimed) = steal(true);
    assert!(scanned > 0 && reclaimed > 0, "{scanned} {reclaimed}");
    assert_eq!(steal(false), (0, 0));
}

/// Watermark boosting (1c30844d2dfe, in the seed's mmots kernels and v5.0+): a boosted zone
/// wakes kswapd although the node is balanced; the boosted pass reclaims the boost without
/// swapping (`may_swap = !nr_boost_reclaim`), lowers the boost and asks kcompactd for
/// `pageblock_order` (balance_pgdat's `out:`). A node with a free pageblock at the min
/// watermark is not `kcompactd_node_suitable` (mm/compaction.c 6.12): kcompactd is not
/// woken and the request waits (a fragmented node wakes it:
/// `defrag_modes_decide_stall_wake_or_fallback`).
#[test]
fn boosted_watermark_wakes_kswapd_then_asks_kcompactd() {
    use reclaimlab_core::mm::vmstat::Ev;
    let (mut m, t) = anon_and_clean_cache(&[]);
    // Unboosted and balanced: wakeup_kswapd does nothing.
    m.kswapd[0].wakeup(&mut m.mm, m.procs.tasks[t].clock, 0, ZONE_MOVABLE, true);
    assert!(!m.kswapd[0].active);
    let z = m.mm.nodes[0].zones[0];
    m.mm.buddy.zones[z].watermark_boost = PAGEBLOCK_NR_PAGES as u64;
    m.kswapd[0].wakeup(&mut m.mm, m.procs.tasks[t].clock, 0, ZONE_MOVABLE, true);
    assert!(m.kswapd[0].active, "a boosted zone wakes kswapd on a balanced node");
    m.run_until(m.procs.tasks[t].clock + 10_000_000_000).unwrap();
    assert!(!m.kswapd[0].active);
    assert!(m.mm.vmstat.get(Ev::PgstealKswapd) >= PAGEBLOCK_NR_PAGES as u64, "reclaims the boost");
    assert_eq!(m.mm.vmstat.get(Ev::Pswpout), 0, "boosted reclaim does not swap");
    assert_eq!(m.mm.buddy.zones[z].watermark_boost, 0);
    let fr = m.mm.buddy.nr_free_by_order(z);
    assert!(fr[PAGEBLOCK_ORDER as usize..].iter().any(|&n| n > 0), "a free pageblock: {fr:?}");
    assert_eq!(m.kcompactd[0].max_order, PAGEBLOCK_ORDER, "kcompactd asked for pageblock_order");
    assert!(!m.kcompactd[0].active);
    assert_eq!(stat(&m, Tc::CompactDaemonWake), 0, "not woken: no zone needs compaction");
    Engine::check_invariants(&m).unwrap();
}

/// A 256 MiB machine with a 16 MiB ZONE_DMA (and `extra` keys) after a task read 80,000
/// pages of a mapped file once, their accessed bits cleared: more clean page cache than
/// memory, so reclaim makes room and the allocator spills into ZONE_DMA once Normal is low,
/// and both zones' folios sit on the inactive file list; the page-table and slab
/// allocations that fall back into DMA's movable pageblocks boost its watermark, which
/// wakes kswapd for DMA alone. Returns it 10 s later, kswapd asleep, with the time and the
/// DMA and Normal zones.
fn page_cache_in_both_zones(extra: &[(&str, &str)]) -> (M, u64, usize, usize) {
    use reclaimlab_core::mm::page_alloc::ZoneType;
    let mut m = program_machine(&cfg("256M", 1, &[&[("transparent_hugepage.enabled", "never"), ("machine.zone_dma", "16M")], extra].concat())).unwrap();
    let t = m.add_task(0);
    let f = m.mmap(80_000, true, false).unwrap();
    for p in m.procs.vmas[f].start..m.procs.vmas[f].start + 80_000 {
        m.touch(t, p, false).unwrap();
        let pfn = m.mm.pages.pte[p as usize];
        m.mm.frames.clear(pfn, pg::YOUNG | pg::MAPPED);
    }
    let now = m.procs.tasks[t].clock + 10_000_000_000;
    m.run_until(now).unwrap();
    assert!(!m.kswapd[0].active);
    let zone = |m: &M, ty: ZoneType| *m.mm.nodes[0].zones.iter().find(|&&z| m.mm.buddy.zones[z].zone_type == ty).unwrap();
    let (dma, normal) = (zone(&m, ZoneType::Dma), zone(&m, ZoneType::Normal));
    (m, now, dma, normal)
}

/// A wake-up that came while kswapd was running is still in `kswapd_highest_zoneidx` (it
/// is read after the next sleep, and a wake-up only raises it): one more pass for every
/// zone — Normal's boost — reads it, so that the next wake-up is alone. Returns the time
/// after it, the CPUs' lists drained.
fn read_the_wakeup_left(m: &mut M, now: u64, normal: usize) -> u64 {
    m.mm.buddy.zones[normal].watermark_boost = 32;
    m.kswapd[0].wakeup(&mut m.mm, now, 0, ZONE_MOVABLE, false);
    let now = now + 10_000_000_000;
    m.run_until(now).unwrap();
    assert!(!m.kswapd[0].active && m.mm.buddy.zones[normal].watermark_boost == 0);
    m.mm.drain_all_pages(None);
    now
}

/// kswapd woken for ZONE_DMA alone — `rmqueue` after a fallback boosted DMA's watermark
/// (`wakeup_kswapd(zone, 0, 0, zone_idx(zone))`, mm/page_alloc.c 6.12) — balances, boosts
/// and reclaims that zone only (`sc.reclaim_idx` 0): classic `isolate_lru_folios` passes
/// over every folio of the zone above (the model's node 0 is ZONE_DMA and one Normal
/// zone, which stands for the guest's DMA32), counting it in `pgscan_kswapd` and
/// `pgskip_normal` but not in `sc->nr_scanned`, and puts it back at the list's head;
/// only DMA frames are freed.
#[test]
fn kswapd_for_zone_dma_reclaims_it_alone_and_skips_the_zone_above() {
    use reclaimlab_core::mm::page_alloc::ZoneType;
    use reclaimlab_core::mm::vmstat::Ev;
    let (mut m, now, dma, normal) = page_cache_in_both_zones(&[]);
    let v = |m: &M, e| m.mm.vmstat.get(e);
    // (Whether the fallbacks' DMA-only wake-ups stay DMA-only depends on what wakes kswapd
    // before it runs and reads them; the explicit one below is.)
    let skipped = v(&m, Ev::PgskipNormal);
    assert_eq!(v(&m, Ev::PgskipDma) + v(&m, Ev::PgskipDma32), 0);
    // pgscan_kswapd counts the folios skipped besides those taken (≥ stolen).
    assert!(v(&m, Ev::PgscanKswapd) >= v(&m, Ev::PgstealKswapd) + skipped, "{} < {} + {skipped}", v(&m, Ev::PgscanKswapd), v(&m, Ev::PgstealKswapd));
    let on_lru_in = |m: &M, zone: usize| (0..m.mm.pfn_end).filter(|&pfn| m.mm.buddy.try_zone_of(pfn) == Some(zone) && m.mm.frames.test(pfn, pg::LRU)).count();
    let dma_lru = on_lru_in(&m, dma);
    assert!(dma_lru > 0 && on_lru_in(&m, normal) > 0, "both zones hold page cache");
    let now = read_the_wakeup_left(&mut m, now, normal);
    let normal_free = m.mm.buddy.zones[normal].free_pages;
    let stolen = v(&m, Ev::PgstealKswapd);
    // Balanced (for DMA's own class: no lowmem_reserve) and unboosted: ignored.
    m.kswapd[0].wakeup(&mut m.mm, now, 0, ZoneType::Dma as u8, false);
    assert!(!m.kswapd[0].active);
    // DMA below its high watermark: woken for DMA alone, kswapd reclaims it, lowering the
    // priority until `lru_size(DMA) >> priority` folios are worth a scan, and passes over
    // the Normal folios between them at the list's tail.
    let mut held = Vec::new();
    while m.mm.buddy.zones[dma].free_pages >= m.mm.buddy.zones[dma].high_wmark_pages() {
        held.push(m.mm.buddy.alloc(&mut m.mm.lists, &mut m.mm.frames.owner, dma, 0, MigrateType::Movable).unwrap());
    }
    let skipped = v(&m, Ev::PgskipNormal);
    m.kswapd[0].wakeup(&mut m.mm, now, 0, ZoneType::Dma as u8, false);
    assert!(m.kswapd[0].active, "an unbalanced DMA wakes kswapd");
    m.run_until(now + 10_000_000_000).unwrap();
    assert!(!m.kswapd[0].active);
    assert!(v(&m, Ev::PgstealKswapd) > stolen);
    assert!(on_lru_in(&m, dma) < dma_lru, "DMA's folios reclaimed");
    assert!(v(&m, Ev::PgskipNormal) > skipped, "Normal's folios skipped");
    assert!(m.mm.pgdat_balanced(0, 0, ZoneType::Dma as u8));
    m.mm.drain_all_pages(None);
    assert_eq!(m.mm.buddy.zones[normal].free_pages, normal_free, "no Normal frame was freed");
    for pfn in held {
        m.mm.free_block(pfn, 0);
    }
    Engine::check_invariants(&m).unwrap();
}

/// kswapd reads the wake-ups' zone and order when it runs, not when it is woken (mm/vmscan.c
/// 6.12 `kswapd()`: `kswapd_highest_zoneidx(pgdat, highest_zoneidx)` and `kswapd_order` are
/// read after `kswapd_try_to_sleep` returns; `wakeup_kswapd` only raises them, and once
/// `wake_up_interruptible` has taken kswapd off its wait queue a later wake-up returns at
/// `!waitqueue_active`). `rmqueue`'s wake-up for ZONE_DMA alone, overtaken before kswapd
/// runs (`cost.kswapd_wakeup_ns` later) by an allocation's wake-up for every zone, gives one
/// `balance_pgdat` over both zones: not a pass for DMA alone and then another (the model
/// before 28 Nov 2026, which read them at the wake-up). The same with the latency drawn from
/// a distribution (the guests' are spread: 1–3 ms here), each wake-up's from kswapd's own
/// generator, so that the same seed starts it at the same time.
#[test]
fn a_wakeup_overtaken_before_kswapd_runs_widens_its_pass() {
    let constant = overtaken_wakeup(&[("cost.kswapd_wakeup_ns", "2000000")]);
    assert_eq!(constant, 2_000_000);
    let spread = [("cost.kswapd_wakeup_ns", "1000000,1500000,2000000,3000000")];
    let drawn = overtaken_wakeup(&spread);
    assert!((1_000_000..=3_000_000).contains(&drawn), "{drawn}");
    assert_eq!(overtaken_wakeup(&spread), drawn, "same seed, same latency");
    let others: Vec<u64> = (2..6).map(|seed| overtaken_wakeup(&[spread[0], ("seed", &seed.to_string())])).collect();
    assert!(others.iter().any(|&x| x != drawn), "another seed draws another latency: {drawn} {others:?}");
}

/// [`a_wakeup_overtaken_before_kswapd_runs_widens_its_pass`] with `extra`'s keys; returns the
/// latency kswapd was woken with.
fn overtaken_wakeup(extra: &[(&str, &str)]) -> u64 {
    use reclaimlab_core::mm::page_alloc::ZoneType;
    use reclaimlab_core::mm::vmstat::Ev;
    let (mut m, now, dma, normal) = page_cache_in_both_zones(extra);
    let now = read_the_wakeup_left(&mut m, now, normal);
    // Both zones below their high watermark.
    let mut held = Vec::new();
    for z in [dma, normal] {
        while m.mm.buddy.zones[z].free_pages >= m.mm.buddy.zones[z].high_wmark_pages() {
            held.push(m.mm.buddy.alloc(&mut m.mm.lists, &mut m.mm.frames.owner, z, 0, MigrateType::Movable).unwrap());
        }
    }
    let v = |m: &M, e| m.mm.vmstat.get(e);
    let (runs, dma_passes, quickly) = (v(&m, Ev::Pageoutrun), m.kswapd[0].dma_passes, v(&m, Ev::KswapdHighWmarkHitQuickly));
    // rmqueue's wake-up for DMA alone (gfp 0: no direct reclaim) ...
    m.kswapd[0].wakeup(&mut m.mm, now, 0, ZoneType::Dma as u8, false);
    assert!(m.kswapd[0].active, "an unbalanced DMA wakes kswapd");
    let latency = m.kswapd[0].next_step().unwrap() - now;
    // ... and 0.9 ms later, before kswapd runs, a user page's for every zone.
    m.kswapd[0].wakeup(&mut m.mm, now + 900_000, 0, ZONE_MOVABLE, true);
    assert_eq!(m.kswapd[0].next_step(), Some(now + latency), "the later wake-up draws nothing");
    m.run_until(now + 10_000_000_000).unwrap();
    assert!(!m.kswapd[0].active);
    assert_eq!(m.kswapd[0].dma_passes, dma_passes, "no pass for DMA alone");
    assert_eq!(m.kswapd[0].highest_zoneidx(), ZONE_MOVABLE, "the pass balanced every zone");
    assert_eq!(v(&m, Ev::Pageoutrun), runs + 1, "one pass");
    assert_eq!(v(&m, Ev::KswapdHighWmarkHitQuickly), quickly, "not a second pass at once");
    assert!(m.mm.pgdat_balanced(0, 0, ZONE_MOVABLE));
    for pfn in held {
        m.mm.free_block(pfn, 0);
    }
    Engine::check_invariants(&m).unwrap();
    latency
}

/// Every `*_wmark_pages()` adds `watermark_boost` (spec A.5), and so do the checks built on
/// them: the allocation watermarks, `pgdat_balanced`, `compaction_suitable`. Only
/// `__isolate_free_page` differs by kernel: v5.1 made it ignore the boost.
/// 256 MiB, one zone of 65536 pages: min_free_kbytes = int_sqrt(262144 * 16) = 2048 KiB,
/// so min = 512 pages; delta = max(512 / 4, 65536 * 10 / 10000) = 128: low 640, high 768.
/// With a boost of 512: min 1024, low 1152, high 1280. 1000 free pages then meet the
/// unboosted high watermark but not the boosted min.
#[test]
fn watermark_boost_raises_every_watermark() {
    use reclaimlab_core::mm::page_alloc::{WMARK_HIGH, WMARK_LOW, WMARK_MIN};
    let mut m = program_machine(&cfg("256M", 1, &[("transparent_hugepage.enabled", "never")])).unwrap();
    m.add_task(0);
    let z = m.mm.nodes[0].zones[0];
    assert_eq!(m.mm.buddy.zones[z].watermark[..3], [512, 640, 768]);
    // Take every free page, then give back 1000 even pfns: single free pages whose buddies
    // stay allocated, so no free block of order > 0 exists.
    let mut even = Vec::new();
    while let Some(p) = m.mm.buddy.alloc(&mut m.mm.lists, &mut m.mm.frames.owner, z, 0, MigrateType::Movable) {
        if p % 2 == 0 {
            even.push(p);
        }
    }
    for p in even.drain(..1000) {
        m.mm.free_block(p, 0); // to the free lists directly, not a CPU's list
    }
    let no_reclaim = GFP_TRANSHUGE_LIGHT & !__GFP_KSWAPD_RECLAIM;
    // Unboosted: 1000 > high (768), and an order-0 request passes the low watermark.
    assert!(m.mm.pgdat_balanced(0, 0, ZONE_MOVABLE));
    let p = m.alloc_pages_node(no_reclaim, 0, 0, MigrateType::Movable).unwrap().expect("1000 free > low 640");
    m.mm.free_frame(p);
    m.mm.drain_all_pages(None); // the per-CPU refill's batch back to the free lists
    m.mm.buddy.zones[z].watermark_boost = 512;
    let zone = &m.mm.buddy.zones[z];
    assert_eq!((zone.wmark_pages(WMARK_MIN), zone.wmark_pages(WMARK_LOW), zone.wmark_pages(WMARK_HIGH)), (1024, 1152, 1280));
    assert!(!m.mm.pgdat_balanced(0, 0, ZONE_MOVABLE), "1000 free < boosted high 1280");
    assert_eq!(m.mm.node_high_wmark(0), 1280);
    // 1000 free pages <= boosted min 1024: without direct reclaim the request fails.
    assert_eq!(m.alloc_pages_node(no_reclaim, 0, 0, MigrateType::Movable).unwrap(), None);
    assert_eq!(m.mm.total_free_pages(), 1000);
    // Order 9 with 2000 free single pages: above low + compact_gap(9) = 640 + 1024 but below
    // the boosted 1152 + 1024, so the boost makes compaction SKIPPED. (Unboosted, the
    // fragmentation index is 1000 - (1000 + 2000 * 1000 / 512) / 2000 = 998 > 500.)
    for p in even.drain(..1000) {
        m.mm.free_block(p, 0); // to the free lists directly, not a CPU's list
    }
    assert_eq!(m.mm.total_free_pages(), 2000);
    assert_eq!(compaction::compaction_suitable(&m.mm, z, Some(9), WMARK_MIN, 500), CompactResult::Skipped);
    m.mm.buddy.zones[z].watermark_boost = 0;
    assert_ne!(compaction::compaction_suitable(&m.mm, z, Some(9), WMARK_MIN, 500), CompactResult::Skipped);
    m.mm.buddy.zones[z].watermark_boost = 512;
    // __isolate_free_page: min_wmark_pages (1024) on the 2018 kernels, _watermark[WMARK_MIN]
    // (512) on v5.4.
    let zone = &m.mm.buddy.zones[z];
    assert_eq!(find("thp@4.20-rc4").unwrap().policy.isolate_free_page_min_wmark(zone), 1024);
    assert_eq!(find("thp+gfp-thisnode-v1").unwrap().policy.isolate_free_page_min_wmark(zone), 1024);
    assert_eq!(find("thp@5.4").unwrap().policy.isolate_free_page_min_wmark(zone), 512);
}

/// `__alloc_pages_direct_compact` with every zone deferred: v4.20 (and 5.5) return before
/// counting anything (`<= COMPACT_INACTIVE`); 6.12 returns early only for
/// `COMPACT_SKIPPED`, so a deferred compaction counts a stall and, with no page, a
/// failure (mm/page_alloc.c 6.12).
#[test]
fn deferred_direct_compaction_counts_a_stall_only_in_6_12() {
    let fault = |policy: &str| {
        // defer_compaction at order 0 with the longest deferral: every order is deferred.
        let m = fault_on_fragmented_with("madvise", true, policy, |m| {
            for zc in m.mm.thp.zones.iter_mut() {
                (zc.considered, zc.defer_shift, zc.order_failed) = (0, 6, 0);
            }
        });
        (stat(&m, Tc::CompactStall), stat(&m, Tc::CompactFail), stat(&m, Tc::CompactSuccess))
    };
    let (stall, fail, success) = fault("thp@5.5");
    assert_eq!((stall, fail, success), (0, 0, 0));
    let (stall, fail, success) = fault("thp@6.12");
    assert!(stall > 0 && fail == stall && success == 0, "6.12: stall {stall} fail {fail} success {success}");
}

/// Reclaim/compaction mode (mm/vmscan.c 6.12): a costly-order direct reclaim skips a node
/// already ready for compaction (it returns 1 without scanning, and the stall still
/// counts), and otherwise goes round `shrink_node` again past `SWAP_CLUSTER_MAX` until
/// compaction could run (`should_continue_reclaim`), then stops.
#[test]
fn costly_direct_reclaim_stops_where_compaction_can_run() {
    use reclaimlab_core::mm::page_alloc::WMARK_MIN;
    use reclaimlab_core::mm::vmstat::Ev;
    use reclaimlab_core::vmscan::try_to_free_pages_order;
    let mut m = program_machine(&cfg("64M", 1, &[])).unwrap();
    let (r, _) = try_to_free_pages_order(&mut m.mm, &mut m.policy, &[0], 9);
    assert_eq!((r, m.mm.vmstat.get(Ev::PgscanDirect), m.mm.vmstat.get(Ev::AllocstallNormal)), (1, 0, 1), "free memory: ready");

    let mut m = program_machine(&cfg("64M", 1, &[])).unwrap();
    m.mm.buddy.watermark_boost_factor = 0;
    let t = m.add_task(0);
    let f = m.mmap(15_500, true, false).unwrap();
    let start = m.procs.vmas[f].start;
    for p in start..start + 15_500 {
        m.touch(t, p, false).unwrap();
        // Unmapped, no accessed bit: each page is reclaimed on its first scan.
        let pfn = m.mm.pages.pte[p as usize];
        if pfn < m.mm.pfn_end {
            m.mm.frames.clear(pfn, pg::YOUNG | pg::MAPPED);
        }
    }
    let z = m.mm.nodes[0].zones[0];
    let suitable = |m: &M| compaction::compaction_suitable(&m.mm, z, Some(9), WMARK_MIN, 500);
    assert_eq!(suitable(&m), CompactResult::Skipped, "free {}", m.mm.node_free_pages(0));
    let (r, _) = try_to_free_pages_order(&mut m.mm, &mut m.policy, &[0], 9);
    assert!(r > 32, "went round again: {r}");
    assert_ne!(suitable(&m), CompactResult::Skipped);
    // It stopped once compaction could run: low + compact_gap(9) free, plus at most the
    // last round's reclaim.
    let gap = m.mm.buddy.zones[z].low_wmark_pages() + compaction::compact_gap(9);
    assert!(m.mm.node_free_pages(0) < gap + r / 2, "free {} against {gap}, reclaimed {r}", m.mm.node_free_pages(0));
}

/// A task reads a 24 MiB mapped file on a 16 MiB machine until kswapd wakes, then works
/// `step` ns at a time, touching one resident page between steps, until kswapd sleeps
/// again. Returns (the task's clock advance over that phase, the work it did, kswapd's CPU
/// time in it).
fn kswapd_phase(cpus: &str) -> (u64, u64, u64) {
    let mut m = program_machine(&cfg("16M", 1, &[("transparent_hugepage.enabled", "never"), ("machine.cpus", cpus)])).unwrap();
    let t = m.add_task(0);
    let v = m.mmap(6144, true, false).unwrap();
    let start = m.procs.vmas[v].start;
    let mut p = start;
    while !m.kswapd[0].active {
        m.touch(t, p, false).unwrap();
        p += 1;
    }
    let (c0, k0) = (m.procs.tasks[t].clock, m.kswapd[0].cpu_ns);
    let step = 50_000;
    let mut work = 0;
    while m.kswapd[0].active {
        m.run_task(t, step);
        work += step;
        assert_eq!(m.touch(t, p - 1, false).unwrap().0, Fault::Hit);
        assert!(work < 10_000_000_000, "kswapd never slept");
    }
    (m.procs.tasks[t].clock - c0, work, m.kswapd[0].cpu_ns - k0)
}

#[test]
fn kswapd_on_the_tasks_only_cpu_takes_the_task_time() {
    // 6.12 binds kswapd to its node's CPUs (cpumask_of_node): with one CPU it shares the
    // task's, which waits for every ns of kswapd's CPU time; with two it runs beside it.
    let (shared, work, kswapd) = kswapd_phase("1");
    assert!(kswapd > 0);
    assert_eq!(shared, work + kswapd);
    let (beside, work, kswapd) = kswapd_phase("2");
    assert!(kswapd > 0);
    assert_eq!(beside, work);
}

/// kswapd on the task's one CPU, at a time dilation of 1000 (a 4 µs scheduler tick) and with
/// watermarks 10 % of memory apart (a long pass): the task reads a mapped file until kswapd
/// wakes, then works `step` ns between touches of a resident page until kswapd sleeps.
/// Returns (kswapd's CPU time within the first step, within the phase).
fn kswapd_turns(step: u64) -> (u64, u64) {
    let mut m =
        program_machine(&cfg("64M", 1, &[("transparent_hugepage.enabled", "never"), ("machine.cpus", "1"), ("sim.time_dilation", "1000"), ("vm.watermark_scale_factor", "1000")]))
            .unwrap();
    let t = m.add_task(0);
    let v = m.mmap(24576, true, false).unwrap();
    let mut p = m.procs.vmas[v].start;
    while !m.kswapd[0].active {
        m.touch(t, p, false).unwrap();
        p += 1;
    }
    let k0 = m.kswapd[0].cpu_ns;
    m.run_task(t, step);
    m.touch(t, p - 1, false).unwrap();
    let first = m.kswapd[0].cpu_ns - k0;
    while m.kswapd[0].active {
        m.run_task(t, step);
        m.touch(t, p - 1, false).unwrap();
    }
    (first, m.kswapd[0].cpu_ns - k0)
}

#[test]
fn kswapd_beside_a_long_task_event_takes_its_turns_within_it() {
    // CFS alternates two runnable tasks of one CPU slice by slice (kernel/sched/fair.c
    // 6.12), so a task event many ticks long — a THP's clearing, which cond_resched()s
    // between subpages (mm/memory.c process_huge_page), or a long direct reclaim — leaves
    // kswapd a turn in every other tick of it, not one turn per event.
    let tick = 4_000;
    let (first, total) = kswapd_turns(50 * tick);
    assert!(total > 8 * tick, "kswapd had work for several turns: {total} ns");
    assert!(first >= total.min(40 * tick) * 8 / 10, "within the first 50-tick step kswapd ran {first} ns of {total}");
    // Short task events: the same turns, one at a time between them.
    let (first, total) = kswapd_turns(tick / 4);
    assert!(first <= 2 * tick && total > 8 * tick, "{first} of {total}");
}

#[test]
fn tasks_on_one_cpu_run_one_at_a_time() {
    // Two tasks of node 0 fault a page each at clock 0: on one CPU the second starts when
    // the first is done; on two CPUs both start at 0.
    for (cpus, shared) in [("1", true), ("2", false)] {
        let mut m = program_machine(&cfg("16M", 1, &[("transparent_hugepage.enabled", "never"), ("machine.cpus", cpus)])).unwrap();
        let (a, b) = (m.add_task(0), m.add_task(0));
        assert_eq!((m.procs.tasks[a].cpu, m.procs.tasks[b].cpu), (0, if shared { 0 } else { 1 }));
        let v = m.mmap(2, false, false).unwrap();
        let start = m.procs.vmas[v].start;
        let (_, la) = m.touch(a, start, true).unwrap();
        let (_, lb) = m.touch(b, start + 1, true).unwrap();
        assert!(la > 0 && lb > 0);
        assert_eq!(m.procs.tasks[b].clock, if shared { la + lb } else { lb });
    }
}

#[test]
fn cpus_are_split_over_the_nodes_node_by_node() {
    use reclaimlab_core::mm::pcp::cpus_of_node;
    assert_eq!((0..2).map(|n| cpus_of_node(2, 2, n)).collect::<Vec<_>>(), [0..1, 1..2]);
    assert_eq!((0..2).map(|n| cpus_of_node(5, 2, n)).collect::<Vec<_>>(), [0..3, 3..5]);
    assert_eq!((0..3).map(|n| cpus_of_node(2, 3, n)).collect::<Vec<_>>(), [0..1, 1..2, 2..2]);
}

/// `drop_caches` (mm/truncate.c 6.12 `mapping_evict_folio`) leaves the page-cache pages a
/// live mapping maps, and the xarray's slab pages that hold them;
/// pages `MADV_DONTNEED` unmapped, and every page once the mapping is gone, are dropped. thpscale's file stays mapped from one
/// thread count to the next, so what a count mapped is still cached when the next begins.
#[test]
fn drop_caches_keeps_the_pages_a_live_mapping_maps() {
    use reclaimlab_core::mm::page::is_resident;
    let mut m = program_machine(&cfg("64M", 1, &[])).unwrap();
    let t = m.add_task(0);
    let f = m.mmap(4096, true, false).unwrap();
    let fs = m.procs.vmas[f].start;
    for p in fs..fs + 2048 {
        m.touch(t, p, false).unwrap();
    }
    m.run_until(m.procs.tasks[t].clock + 1_000_000_000).unwrap();
    let resident = |m: &M| (fs..fs + 4096).filter(|&p| is_resident(m.mm.pages.pte[p as usize])).collect::<Vec<_>>();
    // MADV_DONTNEED of the first 1,024: unmapped, they stay in the page cache.
    m.madv_dontneed(fs, 1024);
    let before = resident(&m);
    let flags = |m: &M, p: u32| m.mm.frames.flags(m.mm.pages.pte[p as usize]);
    let mapped = before.iter().filter(|&&p| flags(&m, p) & pg::MAPPED != 0).count();
    assert!(mapped >= 1024, "every page touched and not unmapped is mapped");
    // Mapped, or (the pages read ahead last) with their read still in flight.
    let stay: Vec<u32> = before.iter().copied().filter(|&p| flags(&m, p) & (pg::MAPPED | pg::INFLIGHT | pg::DIRTY | pg::WRITEBACK) != 0).collect();
    assert!(before.len() >= stay.len() + 1024, "the unmapped pages are cached");
    let slab = m.procs.slab_pages.len();
    let freed = m.drop_caches();
    assert_eq!(resident(&m), stay, "the mapped pages stay, the others go");
    let keep = stay.len().div_ceil(448);
    assert_eq!(m.procs.slab_pages.len(), keep);
    assert_eq!(freed as usize, before.len() - stay.len() + slab - keep);
    Engine::check_invariants(&m).unwrap();
    // munmap: nothing maps the file any more, so all but the reads in flight go.
    m.munmap(f);
    m.drop_caches();
    let left = resident(&m);
    assert!(left.iter().all(|&p| flags(&m, p) & pg::INFLIGHT != 0), "{left:?}");
    assert_eq!(m.procs.slab_pages.len(), left.len().div_ceil(448));
    Engine::check_invariants(&m).unwrap();
}

/// thpscale with the work file kept mapped from count to count (`file_stays_mapped`, as the
/// validation guest's guest/thp.c does): `drop_caches` leaves what the first count mapped,
/// so a second 1-thread count, reading the same quarter of the file, reads far less of it
/// from disk than when each count's process unmapped the file on exit (mmtests).
#[test]
fn thpscale_file_kept_mapped_survives_drop_caches() {
    use reclaimlab_core::scenario::thp::{thpscale, ThpscaleParams};
    let c = cfg("256M", 2, &[("swap.device", "zram")]);
    let pgpgin = |stays: bool| {
        let runs = thpscale(&c, &ThpscaleParams { threads: vec![1, 1], madvise: false, file_stays_mapped: stays, ..Default::default() }).unwrap();
        let get = |i: usize| runs[i].counters.iter().find(|(k, _)| k == "pgpgin").map_or(0, |&(_, v)| v);
        (get(0), get(1))
    };
    let (first, again) = pgpgin(false);
    assert!(first > 0 && again * 10 > first * 9, "every count reads the file anew: {first} then {again}");
    let (first, again) = pgpgin(true);
    assert!(again * 2 < first, "the pages the first count mapped are still cached: {first} then {again}");
}

/// What a thpscale count leaves to the next (`free_at_start`, as guest/thp.c's
/// `@@freelist countN`): the first count begins on a machine whose free memory is nearly
/// all in huge blocks; the second begins after the first punched holes, kept its work
/// file's pages mapped through `drop_caches` and freed its regions, so it has fewer pages
/// free, fewer in blocks of a THP's order, and the same pageblocks in all.
#[test]
fn thpscale_reports_the_free_memory_each_count_begins_with() {
    use reclaimlab_core::scenario::thp::{thpscale, ThpscaleParams};
    let c = cfg("256M", 2, &[("swap.device", "zram")]);
    let runs = thpscale(&c, &ThpscaleParams { threads: vec![1, 1], file_stays_mapped: true, ..Default::default() }).unwrap();
    let sum = |i: usize, min_order: usize| -> u64 { runs[i].free_at_start.iter().map(|z| z.nr_free.iter().enumerate().skip(min_order).map(|(o, &k)| k << o).sum::<u64>()).sum() };
    let blocks = |i: usize| -> u64 { runs[i].free_at_start.iter().map(|z| z.pageblocks.iter().sum::<u64>()).sum() };
    assert_eq!(runs[0].free_at_start.iter().map(|z| z.node).max(), Some(1), "both nodes' zones");
    let (free0, huge0, free1, huge1) = (sum(0, 0), sum(0, 9), sum(1, 0), sum(1, 9));
    assert!(huge0 * 10 > free0 * 9, "a fresh machine's free memory is in huge blocks: {huge0} of {free0}");
    assert!(free1 < free0 && huge1 * free0 < huge0 * free1, "the second count starts with less, more broken up: {huge1} of {free1}");
    assert_eq!(blocks(0), blocks(1));
}

/// `machine.node_memory`: nodes of a guest's unequal sizes (its reserved memory on one of
/// them), one after another; every frame belongs to the node whose range holds it, each node
/// starts with its own memory free, and sizes that do not sum to `machine.memory` are refused.
#[test]
fn nodes_of_unequal_size() {
    let c = cfg("40M", 2, &[("machine.node_memory", "16M,24M"), ("machine.zone_dma", "4M")]);
    let m = program_machine(&c).unwrap();
    let (n0, n1) = (&m.mm.nodes[0], &m.mm.nodes[1]);
    assert_eq!((n0.nr_pages, n1.nr_pages, n1.start_pfn), (4096, 6144, n0.start_pfn + 4096));
    assert_eq!(m.mm.nr_frames, 10240);
    for (pfn, node) in [(n0.start_pfn, 0), (n1.start_pfn - 1, 0), (n1.start_pfn, 1), (n1.start_pfn + 6143, 1)] {
        assert_eq!(m.mm.node_of(pfn), node, "pfn {pfn}");
    }
    assert!(m.mm.node_free_pages(1) > m.mm.node_free_pages(0) + 1024);
    let mut bad = cfg("40M", 2, &[("machine.node_memory", "16M,16M")]);
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("machine.node_memory") && e.contains("summing to machine.memory"), "{e}");
    bad.set("machine.node_memory", "even").unwrap();
    assert!(bad.validate().is_ok());
}
