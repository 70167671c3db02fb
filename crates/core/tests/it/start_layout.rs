//! `machine.start_layout` (mm/start_layout.rs): the machine starts with the free lists and
//! pageblock types a booted kernel reports in /proc/pagetypeinfo, and its allocations fall
//! back into the unmovable blocks' free pages as 6.12.117's do.

use crate::common::*;
use reclaimlab_core::mm::page_alloc::{MigrateType, ZoneType, NR_PAGE_ORDERS};
use reclaimlab_core::policy::classic::{Classic, Mainline};
use reclaimlab_core::sim::engine::Machine;

const TYPES: [MigrateType; 3] = [MigrateType::Unmovable, MigrateType::Movable, MigrateType::Reclaimable];

/// The 256 MiB validation guest at a whole-machine workload's start (`@@freelist start`,
/// `@@zoneblocks start` of its first seqloop boot, 27 Nov 2026): ZONE_DMA 3,840 managed
/// pages, DMA32 50,032; 1,423 of DMA32's free pages in its 12 unmovable and 2 reclaimable
/// pageblocks.
const GUEST: &str = "0 DMA blocks=1,7,0 unmovable=0,0,0,0,0,1,1,1,0,0,0 movable=0,0,0,0,0,0,0,0,0,1,3 reclaimable=0,0,0,0,0,0,0,0,0,0,0; \
    0 DMA32 blocks=12,106,2 unmovable=0,0,1,1,0,1,0,1,0,1,0 movable=0,1,1,1,4,3,3,4,2,1,37 reclaimable=1,1,0,0,0,1,1,1,0,1,0";

/// The 512 MiB guest of the memcg tables at a workload's start (the same day's first seqloop
/// boot): DMA32 manages 114,447 pages and lists 38 unmovable pageblocks with 9,147 pages in
/// use in the whole machine.
const GUEST_512: &str = "0 DMA blocks=1,7,0 unmovable=0,0,0,0,0,1,1,1,0,0,0 movable=0,0,0,0,0,0,0,0,0,1,3 reclaimable=0,0,0,0,0,0,0,0,0,0,0; \
    0 DMA32 blocks=38,208,2 unmovable=1,0,1,1,0,1,0,1,0,1,0 movable=1,1,0,0,0,1,0,0,0,1,101 reclaimable=0,0,1,0,0,1,0,1,0,1,0";

fn guest_config(layout: &str, kernel_used_kb: u64) -> reclaimlab_core::config::SimConfig {
    sized_config("215488K", layout, kernel_used_kb)
}

fn sized_config(memory: &str, layout: &str, kernel_used_kb: u64) -> reclaimlab_core::config::SimConfig {
    let used = format!("{kernel_used_kb}K");
    config(&[("machine.memory", memory), ("machine.zone_dma", "15360K"), ("swap.device", "none"), ("machine.kernel_used", used.as_str()), ("machine.start_layout", layout)])
}

fn parse(v: &str) -> [[[u64; NR_PAGE_ORDERS]; 3]; 2] {
    let mut out = [[[0; NR_PAGE_ORDERS]; 3]; 2];
    for (z, zone) in v.split(';').enumerate() {
        for w in zone.split_whitespace().filter_map(|w| w.split_once('=')) {
            if let Some(t) = ["unmovable", "movable", "reclaimable"].iter().position(|&n| n == w.0) {
                for (o, n) in w.1.split(',').enumerate() {
                    out[z][t][o] = n.parse().unwrap();
                }
            }
        }
    }
    out
}

/// Built from the guest's report, every zone has its free blocks per migrate type and order
/// exactly as listed, the listed pageblock types (DMA32's 106 movable blocks include reserved
/// memory the model's zone does not have: 98 pageblocks, 84 of them movable), and every other
/// frame in use outside the workload (53,872 − 45,021 free = 8,851 pages). The 512 MiB
/// guest's DMA32 lists 38 unmovable pageblocks for 9,082 pages in use: the model's 224
/// pageblocks keep 204 movable ones for its 104,985 free movable pages and 18 unmovable.
#[test]
fn start_layout_reproduces_the_guests_free_lists() {
    // (machine.memory, layout, pages in use, DMA32's pageblocks per type, DMA32's free pages)
    for (memory, layout, used, blocks, free) in [("215488K", GUEST, 8851, [12, 84, 2], 41213), ("473148K", GUEST_512, 9147, [18, 204, 2], 105332)] {
        let cfg = sized_config(memory, layout, used * 4);
        cfg.validate().unwrap();
        let m = Machine::new(&cfg, Classic::new(Mainline));
        m.mm.buddy.check_invariants(&m.mm.lists, &m.mm.frames.owner).unwrap();
        let want = parse(layout);
        let zones = &m.mm.nodes[0].zones; // highest first: DMA32 (the model's Normal), DMA
        let (dma32, dma) = (zones[0], zones[1]);
        assert_eq!(m.mm.buddy.zones[dma].zone_type, ZoneType::Dma);
        for (z, zi) in [(0, dma), (1, dma32)] {
            for (t, mt) in TYPES.iter().enumerate() {
                for (o, &n) in want[z][t].iter().enumerate() {
                    let got = m.mm.buddy.free_blocks_mt(&m.mm.lists, zi, o as u8, *mt);
                    assert_eq!(got, n, "{memory}: zone {zi} {mt:?} order {o}");
                }
            }
        }
        let pb = |zi: usize| {
            let n = m.mm.buddy.zones[zi].nr_pageblocks;
            [n[MigrateType::Unmovable as usize], n[MigrateType::Movable as usize], n[MigrateType::Reclaimable as usize]]
        };
        assert_eq!(pb(dma), [1, 7, 0]);
        assert_eq!(pb(dma32), blocks, "{memory}");
        assert_eq!((m.mm.buddy.zones[dma].free_pages, m.mm.buddy.zones[dma32].free_pages), (3808, free));
        assert_eq!(m.mm.nr_kernel_used, used);
    }
    let cfg = guest_config(GUEST, 8851 * 4);
    let dma32 = Machine::new(&cfg, Classic::new(Mainline)).mm.nodes[0].zones[0];
    // Without the layout the same machine holds kernel_used in whole unmovable blocks and
    // keeps no free page in them: the difference this key makes.
    let mut plain = cfg.clone();
    plain.set("machine.start_layout", "none").unwrap();
    let m = Machine::new(&plain, Classic::new(Mainline));
    let unmovable_free: u64 = (0..NR_PAGE_ORDERS).map(|o| m.mm.buddy.free_blocks_mt(&m.mm.lists, dma32, o as u8, MigrateType::Unmovable) << o).sum();
    assert!(unmovable_free < 512, "a fresh buddy less kernel_used keeps less than a pageblock free in unmovable blocks: {unmovable_free}");
}

/// A layout that does not fit the machine, or disagrees with machine.kernel_used, is refused
/// naming the key.
#[test]
fn start_layout_that_does_not_fit_is_refused() {
    let err = |layout: &str, used_kb: u64| guest_config(layout, used_kb).validate().unwrap_err().to_string();
    let e = err(GUEST, 8000 * 4);
    assert!(e.contains("machine.start_layout") && e.contains("35404K") && e.contains("machine.kernel_used is 32000K"), "{e}");
    let e = err(&GUEST.replace("blocks=12,106,2", "blocks=12,80,2"), 8851 * 4);
    assert!(e.contains("machine.start_layout") && e.contains("94 pageblocks listed, but the zone has 98"), "{e}");
    // 60 free order-10 blocks need 120 pageblocks of the 98.
    let e = err(&GUEST.replace("movable=0,1,1,1,4,3,3,4,2,1,37", "movable=0,1,1,1,4,3,3,4,2,1,60"), 0);
    assert!(e.contains("machine.start_layout") && e.contains("need more pageblocks than the zone's 98"), "{e}");
    let e = err(GUEST.split(';').next().unwrap(), 8851 * 4);
    assert!(e.contains("machine.start_layout") && e.contains("zone is not listed"), "{e}");
}

/// A 512 MiB guest of the DAMON_RECLAIM table (28 Nov 2026, a boot of its second set) with
/// 97 free order-10 blocks: the guest's DMA32 spans 248 pageblocks, the model's zone its
/// 114,448 managed pages (223.5), so movable is cut to what its free blocks need — which
/// must leave room to align the pairs of pageblocks and to skip the zone's partial last one.
#[test]
fn a_layout_of_many_order_10_blocks_fits_a_zone_that_ends_inside_a_pageblock() {
    let layout = "0 DMA blocks=1,7,0 unmovable=0,0,0,0,0,1,1,1,0,0,0 movable=0,0,0,0,0,0,0,0,0,1,3 reclaimable=0,0,0,0,0,0,0,0,0,0,0; \
        0 DMA32 blocks=40,206,2 unmovable=1,0,1,0,1,0,1,1,0,1,0 movable=1,1,1,1,0,1,1,1,0,0,97 reclaimable=0,1,0,0,1,0,0,1,0,1,0";
    let cfg =
        config(&[("machine.memory", "473152K"), ("machine.zone_dma", "15360K"), ("swap.device", "none"), ("machine.kernel_used", "54120K"), ("machine.start_layout", layout)]);
    cfg.validate().unwrap();
    let m = Machine::new(&cfg, Classic::new(Mainline));
    let free = m.mm.buddy.free_blocks_mt(&m.mm.lists, 1, 10, MigrateType::Movable);
    assert_eq!(free, 97, "every order-10 block of the guest's listed");
}

/// The THP guest (two nodes of 1 GiB, 29 Nov 2026, its first `thpscale` boot): node 0's
/// DMA32 manages 115,260 pages (226 pageblocks, the last partial) and lists 248 with 106,356
/// free movable pages, which need 208 movable pageblocks of whole frames; a movable run
/// ending in the partial pageblock holds 106,044. The layout fits with that pageblock
/// unmovable, and each node has its own size (`machine.node_memory`).
#[test]
fn a_zone_whose_free_movable_pages_fill_every_whole_pageblock_ends_in_an_unmovable_one() {
    let layout = "0 DMA blocks=1,7,0 unmovable=0,0,0,0,0,1,1,1,0,0,0 movable=0,0,0,0,0,0,0,0,0,1,3 reclaimable=0,0,0,0,0,0,0,0,0,0,0; \
        0 DMA32 blocks=36,208,4 unmovable=0,0,1,0,1,0,1,1,0,0,0 movable=0,0,1,0,1,1,1,0,1,1,103 reclaimable=1,1,0,0,1,0,1,2,2,2,0; \
        1 DMA32 blocks=15,239,2 unmovable=1,0,0,0,0,1,0,1,0,0,0 movable=0,1,1,1,0,1,1,0,1,1,116 reclaimable=0,2,1,1,0,1,3,1,1,0,0";
    let cfg = config(&[
        ("machine.memory", "989840K"),
        ("machine.nodes", "2"),
        ("machine.node_memory", "476400K,513440K"),
        ("machine.zone_dma", "15360K"),
        ("swap.device", "none"),
        ("machine.kernel_used", "59048K"),
        ("machine.start_layout", layout),
    ]);
    cfg.validate().unwrap();
    let m = Machine::new(&cfg, Classic::new(Mainline));
    let z = m.mm.nodes[0].zones[0]; // node 0's highest zone: DMA32 (the model's Normal)
    assert_eq!(m.mm.buddy.zones[z].nr_pageblocks[MigrateType::Movable as usize], 208);
    let last = m.mm.nodes[0].start_pfn + m.mm.nodes[0].nr_pages - 1;
    assert_eq!(m.mm.buddy.pageblock_migratetype(last), MigrateType::Unmovable);
    assert_eq!(m.mm.buddy.free_blocks_mt(&m.mm.lists, z, 10, MigrateType::Movable), 103);
    assert_eq!((m.mm.nodes[0].nr_pages, m.mm.nodes[1].nr_pages), (119_100, 128_360));
}

/// The root's tmpfs and a process's mlocked buffer, which the kernel allocated movable
/// before the workload, keep movable pageblocks in use: on a 512 MiB guest of the
/// DAMON_RECLAIM table (28 Nov 2026, a boot of its first set: DMA32 lists 248 pageblocks, the
/// model's zone has 224), movable is cut to its 100,733 free pages plus the 1,820 shmem and
/// 3,365 mlocked pages (207 pageblocks), unmovable takes the rest of the cut (22 → 15), and
/// every shmem page gets a frame in a movable pageblock — where cutting movable down to its
/// free blocks left 1,427 such frames and kept 393 shmem pages as a count reclaim never
/// takes (the guest's DAMON_RECLAIM paged out 1,758 of its 1,820).
#[test]
fn the_roots_shmem_and_mlocked_pages_keep_movable_pageblocks_in_use() {
    let layout = "0 DMA blocks=1,7,0 unmovable=0,0,0,0,0,1,1,1,0,0,0 movable=0,0,0,0,0,0,0,0,0,1,3 reclaimable=0,0,0,0,0,0,0,0,0,0,0; \
        0 DMA32 blocks=22,224,2 unmovable=1,0,1,0,0,0,0,0,3,0,0 movable=1,0,1,1,1,1,1,0,1,0,98 reclaimable=0,0,0,0,0,1,1,0,0,1,0";
    let machine = |shmem: &str, mlocked: &str| {
        let cfg = config(&[
            ("machine.memory", "473152K"),
            ("machine.zone_dma", "15360K"),
            ("swap.device", "none"),
            ("machine.kernel_used", "49464K"),
            ("machine.kernel_shmem", shmem),
            ("machine.kernel_mlocked", mlocked),
            ("machine.start_layout", layout),
        ]);
        cfg.validate().unwrap();
        Machine::new(&cfg, Classic::new(Mainline))
    };
    let m = machine("7280K", "13460K");
    m.mm.buddy.check_invariants(&m.mm.lists, &m.mm.frames.owner).unwrap();
    let dma32 = m.mm.nodes[0].zones[0];
    let n = m.mm.buddy.zones[dma32].nr_pageblocks;
    assert_eq!([n[MigrateType::Unmovable as usize], n[MigrateType::Movable as usize], n[MigrateType::Reclaimable as usize]], [15, 207, 2]);
    assert_eq!(m.mm.kernel_shmem_frames.len(), 1820, "a frame for every shmem page");
    for &pfn in &m.mm.kernel_shmem_frames {
        assert_eq!(m.mm.buddy.pageblock_migratetype(pfn), MigrateType::Movable);
        assert!(!m.mm.buddy.is_free(&m.mm.frames.owner, pfn));
    }
    // Nothing held movable: movable is cut down to what its free blocks need, as before.
    let m = machine("0", "0");
    let n = m.mm.buddy.zones[dma32].nr_pageblocks;
    assert_eq!([n[MigrateType::Unmovable as usize], n[MigrateType::Movable as usize], n[MigrateType::Reclaimable as usize]], [22, 200, 2]);
}

/// A 64 MiB machine whose 4 unmovable pageblocks hold the only free pages (movable lists
/// empty), as listed; a movable order-0 allocation then falls back (mm/page_alloc.c
/// 6.12.117 `__rmqueue`: `__rmqueue_claim`, then `__rmqueue_steal`).
fn fallback_machine(unmovable: &str, blocks: &str) -> Machine<Classic<Mainline>> {
    // 16,384 frames, 32 pageblocks; the free pages listed, the rest in use.
    let free: u64 = unmovable.split(',').enumerate().map(|(o, n)| n.parse::<u64>().unwrap() << o).sum();
    let layout = format!("0 Normal blocks={blocks} unmovable={unmovable}");
    let used = format!("{}K", (16384 - free) * 4);
    // (Not validated: machine.kernel_used leaves less than the 4M a run needs.)
    let cfg = config(&[("machine.memory", "64M"), ("swap.device", "none"), ("machine.kernel_used", used.as_str()), ("machine.start_layout", layout.as_str())]);
    let m = Machine::new(&cfg, Classic::new(Mainline));
    m.mm.buddy.check_invariants(&m.mm.lists, &m.mm.frames.owner).unwrap();
    m
}

/// 6.12.117's fallback for a movable page, from unmovable blocks with free pages:
/// - the largest fallback block of order ≥ pageblock_order / 2 is tried for a claim
///   (`try_to_steal_block`), which boosts the zone's watermark first (`boost_watermark`:
///   one pageblock, and ZONE_BOOSTED_WATERMARK, so `rmqueue` wakes kswapd) and claims the
///   block only if half of it is free (here 128 of 512 are not), then the page is stolen
///   from the *smallest* fallback block (`__rmqueue_steal`), the block keeping its type;
/// - with only blocks below order 4 there is no claim attempt and no boost;
/// - a block half free is claimed: it turns movable and serves the page.
#[test]
fn a_movable_fallback_into_unmovable_blocks_boosts_only_when_it_tries_a_claim() {
    // An order-7 block (pageblock 0) and an order-2 block (pageblock 1: the layout puts
    // each block in the unmovable pageblock with the fewest free pages so far).
    let mut m = fallback_machine("0,0,1,0,0,0,0,1,0,0,0", "4,28,0");
    let z = m.mm.nodes[0].zones[0];
    let pfn = m.mm.buddy.alloc(&mut m.mm.lists, &mut m.mm.frames.owner, z, 0, MigrateType::Movable).unwrap();
    assert_eq!(pfn >> 9, 1, "stolen from the order-2 block's pageblock, not split from the order-7 block");
    assert_eq!(m.mm.buddy.free_blocks_mt(&m.mm.lists, z, 7, MigrateType::Unmovable), 1, "the order-7 block is left whole");
    assert_eq!(m.mm.buddy.zones[z].watermark_boost, 512, "the claim attempt boosted the watermark by a pageblock");
    assert!(m.mm.buddy.take_boosted_watermark(z), "and asks rmqueue to wake kswapd");
    assert_eq!((m.mm.buddy.stats.fallback_claims, m.mm.buddy.stats.fallback_steals), (0, 1));
    assert_eq!(m.mm.buddy.zones[z].nr_pageblocks[MigrateType::Unmovable as usize], 4, "no block changed type");
    m.mm.buddy.check_invariants(&m.mm.lists, &m.mm.frames.owner).unwrap();

    // Orders 3 and 2 only: nothing to claim, the smallest is stolen without a boost.
    let mut m = fallback_machine("0,0,1,1,0,0,0,0,0,0,0", "4,28,0");
    let pfn = m.mm.buddy.alloc(&mut m.mm.lists, &mut m.mm.frames.owner, z, 0, MigrateType::Movable).unwrap();
    assert_eq!(m.mm.buddy.pageblock_migratetype(pfn), MigrateType::Unmovable);
    assert_eq!(m.mm.buddy.free_blocks_mt(&m.mm.lists, z, 3, MigrateType::Unmovable), 1, "the order-2 block served it");
    assert_eq!(m.mm.buddy.zones[z].watermark_boost, 0, "no claim attempt, no boost");
    assert!(!m.mm.buddy.take_boosted_watermark(z));

    // One unmovable pageblock with an order-8 and an order-7 block: 384 of 512 free, claimed.
    let mut m = fallback_machine("0,0,0,0,0,0,0,1,1,0,0", "1,31,0");
    let pfn = m.mm.buddy.alloc(&mut m.mm.lists, &mut m.mm.frames.owner, z, 0, MigrateType::Movable).unwrap();
    assert_eq!(m.mm.buddy.pageblock_migratetype(pfn), MigrateType::Movable, "the block was claimed for movable pages");
    assert_eq!(m.mm.buddy.zones[z].nr_pageblocks[MigrateType::Unmovable as usize], 0);
    assert_eq!(m.mm.buddy.stats.fallback_claims, 1);
    assert_eq!(m.mm.buddy.zones[z].watermark_boost, 512, "try_to_steal_block boosts before it claims");
    m.mm.buddy.check_invariants(&m.mm.lists, &m.mm.frames.owner).unwrap();
}

/// A run whose allocations fell back reports where its free pages are at the end, per
/// migrate type, as the guest's `@@freelist end` lists them (`free_pages_end_*`): together
/// every free page of the buddy lists (`nr_free_pages`), and the pageblocks per type
/// (`pageblocks_end_*`) together the zones' (DMA's 8 and DMA32's 98 here). A cyclic read()
/// of 256 MiB on the 256 MiB guest's layout reclaims, and its refills steal from the
/// unmovable pageblocks' free pages.
#[test]
fn the_free_pages_at_the_end_are_reported_per_migrate_type() {
    use reclaimlab_trace::{flags, Access, FileRange};
    let pages = 65_536u32;
    let recs: Vec<Access> = (0..2).flat_map(|_| 0..pages).map(|page| Access { page, cgroup: 0, flags: flags::FILE | flags::SYSCALL, gap: 0 }).collect();
    let files = vec![FileRange { name: "f".into(), first: 0, nr_pages: pages, advice: 0 }];
    let r = run_checked(&guest_config(GUEST, 8851 * 4), &mut VecSource::new(recs, files), 50_000);
    assert!(metric(&r, "extfrag_steals") > 0.0);
    let free: f64 = ["unmovable", "movable", "reclaimable"].iter().map(|t| metric(&r, &format!("free_pages_end_{t}"))).sum();
    assert_eq!(free, vm(&r, "nr_free_pages") as f64);
    assert!(metric(&r, "free_pages_end_unmovable") > 0.0, "the unmovable blocks keep free pages");
    let blocks: f64 = ["unmovable", "movable", "reclaimable"].iter().map(|t| metric(&r, &format!("pageblocks_end_{t}"))).sum();
    assert_eq!(blocks, 8.0 + 98.0);
}
