//! Behaviour of the machine under classic@6.15 (issue: core engine, "Tests that must
//! exist"): each test states the scenario, the kernel rule it exercises, and asserts
//! numbers that follow from it.

use crate::common::*;
use reclaimlab_core::policy::classic::{Classic, Mainline};
use reclaimlab_core::sim::engine::Machine;
use reclaimlab_core::sim::Engine;
use reclaimlab_trace::{generate, AccessKind, Pattern};

/// A cyclic read() loop 10% larger than memory thrashes: every pass refaults. Pages
/// only activate when their refault distance fits the workingset (B.3); with a hot
/// active file set beside the loop the distance (≈ loop − inactive) fits, and
/// activations appear; with no active set (workingset_size = 0) none can.
#[test]
fn loop_larger_than_memory_refaults_and_activates_when_distance_fits() {
    // 16 MiB machine, no swap: file only. Statistics flushed every 2 ms of simulated time
    // (sim.time_dilation 1000): the refault rule is tested, not the flush's timing.
    let cfg = config(&[("machine.memory", "16M"), ("swap.device", "none"), ("sim.time_dilation", "1000")]);
    let mem_pages = 16 * MIB;
    let looped = mem_pages + mem_pages / 10;
    // (a) loop alone
    let p = program(vec![region("loop", looped, AccessKind::FileRead)], vec![phase("loop", 10 * looped as u64, &[(0, Pattern::Sequential, 1.0)])]);
    let r = run_checked(&cfg, generate(p, 1).unwrap().as_mut(), 50_000);
    let refaults = vm(&r, "workingset_refault_file");
    // every access after the first pass misses (pure LRU-like behaviour on a loop):
    assert!(refaults >= 8 * looped as u64, "loop should refault every pass: {refaults}");
    eprintln!("loop-only: refault={} activate={} looped={}", refaults, vm(&r, "workingset_activate_file"), looped);
    assert_eq!(vm(&r, "workingset_activate_file"), 0, "no active list ⇒ workingset_size 0 ⇒ no activation");

    // (b) the same loop next to a hot file set half the memory size, read often enough
    // to be activated by folio_mark_accessed.
    let hot = mem_pages / 2;
    let p = program(
        vec![region("loop", looped, AccessKind::FileRead), region("hot", hot, AccessKind::FileRead)],
        vec![phase("mix", 20 * looped as u64, &[(0, Pattern::Sequential, 1.0), (1, Pattern::Uniform, 1.0)])],
    );
    let r = run_checked(&cfg, generate(p, 1).unwrap().as_mut(), 50_000);
    assert!(vm(&r, "workingset_refault_file") > looped as u64);
    let act = vm(&r, "workingset_activate_file");
    eprintln!("with hot: refault={} activate={act} restore={}", vm(&r, "workingset_refault_file"), vm(&r, "workingset_restore_file"));
    assert!(act > 0, "refault distance ≤ active file size must activate");
    assert!(act <= vm(&r, "workingset_refault_file"));
}

/// Classic's two-list design keeps a frequently used set through a one-time stream
/// (the point of the inactive list): streamed pages are read once, stay on the inactive
/// list and are reclaimed first; the hot set, activated by repeated reads, survives.
#[test]
fn hot_set_survives_a_one_time_scan() {
    let cfg = config(&[("machine.memory", "32M"), ("swap.device", "none")]);
    let hot = 8 * MIB; // a quarter of memory
    let stream = 96 * MIB; // 3× memory
    let regions = vec![region("hot", hot, AccessKind::FileRead), region("stream", stream, AccessKind::FileRead)];
    let warm = phase("warm", 20 * hot as u64, &[(0, Pattern::Uniform, 1.0)]);
    let scan = phase("scan", stream as u64, &[(1, Pattern::Sequential, 1.0)]);
    let check = phase("check", 4 * hot as u64, &[(0, Pattern::Uniform, 1.0)]);
    let mut m = Machine::new(&cfg, Classic::new(Mainline));
    let mut src = generate(program(regions, vec![warm.clone(), scan.clone(), check]), 3).unwrap();
    m.run(src.as_mut(), warm.accesses + scan.accesses).unwrap();
    let pgpgin_before = m.mm.vmstat.get(reclaimlab_core::mm::vmstat::Ev::Pgpgin);
    m.run(src.as_mut(), u64::MAX).unwrap();
    m.check_invariants().unwrap();
    let reads_after = (m.mm.vmstat.get(reclaimlab_core::mm::vmstat::Ev::Pgpgin) - pgpgin_before) / 4;
    // With the scan having evicted the hot set, the check phase would re-read ~all of it.
    eprintln!("hot reads after scan: {reads_after} of {hot}");
    assert!(reads_after < hot as u64 / 20, "hot set was evicted by the scan: {reads_after} of {hot} pages re-read");
    let scanned_reads = m.mm.vmstat.get(reclaimlab_core::mm::vmstat::Ev::Pgpgin) / 4;
    assert!(scanned_reads >= (stream + hot) as u64, "the stream itself must be read: {scanned_reads}");
}

/// memory.max is a hard limit (try_charge_memcg): usage never exceeds it, and limit
/// reclaim — not global reclaim — keeps it there, without pgscan_kswapd/direct events.
#[test]
fn memcg_never_exceeds_memory_max() {
    let cfg = config(&[("machine.memory", "64M"), ("cgroup.db.memory.max", "8M"), ("swap.device", "zram")]);
    let mut r0 = region("heap", 6 * MIB, AccessKind::AnonMapped);
    r0.cgroup = "db".into();
    let mut r1 = region("data", 16 * MIB, AccessKind::FileRead);
    r1.cgroup = "db".into();
    let p = program(vec![r0, r1], vec![phase("run", 400_000, &[(0, Pattern::Zipf { alpha: 0.9 }, 1.0), (1, Pattern::Zipf { alpha: 0.7 }, 1.0)])]);
    let mut m = Machine::new(&cfg, Classic::new(Mainline));
    let mut src = generate(p, 5).unwrap();
    let limit = 8 * MIB as u64;
    loop {
        let done = m.run(src.as_mut(), 997).unwrap();
        let db = m.mm.memcg_by_name("db").unwrap() as usize;
        assert!(m.mm.memcgs[db].usage <= limit, "usage {} > max {limit}", m.mm.memcgs[db].usage);
        if done {
            break;
        }
    }
    m.check_invariants().unwrap();
    let db = m.mm.memcg_by_name("db").unwrap() as usize;
    assert_eq!(m.mm.memcgs[db].peak, limit, "the cgroup fills up to its limit");
    assert!(m.mm.memcgs[db].events.max > 0);
    let r = Box::new(m).finish();
    assert!(vm(&r, "pgscan_file") > 0, "limit reclaim scanned");
    assert_eq!(vm(&r, "pgscan_kswapd") + vm(&r, "pgscan_direct"), 0, "no global reclaim: the machine has room");
    assert!(metric(&r, "memcg_reclaim_s") > 0.0);
    // memory.peak and memory.events as the cgroup files would show them
    assert_eq!(metric(&r, "memcg.db.memory.peak_bytes"), (8u64 << 20) as f64);
    assert!(metric(&r, "memcg.db.memory.current_bytes") <= (8u64 << 20) as f64);
    assert!(metric(&r, "memcg.db.memory.events.max") > 0.0);
    assert_eq!(metric(&r, "memcg.db.memory.events.oom"), 0.0);
}

/// zram keeps swapped pages compressed in RAM: the pool's frames are memory in use,
/// taken from the buddy allocator (1/ratio of the swapped pages).
#[test]
fn zram_pool_counts_as_used_memory() {
    let cfg = config(&[("machine.memory", "32M"), ("swap.device", "zram"), ("swap.zram.compression_ratio", "4.0")]);
    // 48 MiB of anon touched once then a hot 8 MiB: most of it must go to zram.
    let p = program(
        vec![region("cold", 40 * MIB, AccessKind::AnonMapped), region("hot", 8 * MIB, AccessKind::AnonMapped)],
        vec![phase("fill", 40 * MIB as u64, &[(0, Pattern::Sequential, 1.0)]), phase("hot", 200_000, &[(1, Pattern::Uniform, 1.0)])],
    );
    let mut m = Machine::new(&cfg, Classic::new(Mainline));
    m.run(generate(p, 1).unwrap().as_mut(), u64::MAX).unwrap();
    m.check_invariants().unwrap();
    let pool = m.mm.swap.zram_pool.len() as u64;
    // Pages stored, not the slots taken (the CPUs' caches hold some unused and freed).
    let stored = m.mm.swap.stored;
    assert!(stored > 4 * MIB as u64 && m.mm.swap.used >= stored, "anon was swapped out: {stored}");
    assert_eq!(pool, (stored * 1024).div_ceil(4096), "pool = ceil(stored * 4096/4 / 4096)");
    let lru: u64 = m.mm.lruvecs.iter().map(|l| l.lru_size.iter().sum::<u64>()).sum();
    // Frames on the per-CPU lists are not free (MemFree is NR_FREE_PAGES) and not in use.
    let pcp = m.mm.pcp.nr_pages_all();
    assert_eq!(m.mm.used_pages(), lru + pool + pcp, "used memory = LRU pages + zram pool + per-CPU lists");
    let r = Box::new(m).finish();
    assert_eq!(metric(&r, "zram_pool_bytes"), (pool * 4096) as f64);
    assert!(vm(&r, "pswpout") >= stored);
    // Every swap-out ends its writeback: NR_WRITTEN counts swap folios too (no file
    // writes here).
    assert_eq!(vm(&r, "nr_written"), vm(&r, "pswpout"));
}

/// machine.kernel_used: the frames the kernel holds from boot on leave the free lists (the
/// workload has memory − kernel_used before reclaim starts), are never reclaimed, and do not
/// move the watermarks, which the kernel computes at boot from the managed pages.
#[test]
fn kernel_used_memory_is_taken_at_boot_and_never_reclaimed() {
    let base = [("machine.memory", "32M"), ("swap.device", "none")];
    let used = [("machine.memory", "32M"), ("swap.device", "none"), ("machine.kernel_used", "24M")];
    let file = 12 * MIB; // read twice: fits 32 MiB, not the 8 MiB left beside 24 MiB
    let prog = || program(vec![region("f", file, AccessKind::FileRead)], vec![phase("p", 2 * file as u64, &[(0, Pattern::Sequential, 1.0)])]);
    let all = Machine::new(&config(&base), Classic::new(Mainline));
    let mut m = Machine::new(&config(&used), Classic::new(Mainline));
    assert_eq!(all.mm.total_free_pages() - m.mm.total_free_pages(), 24 * MIB as u64);
    assert_eq!(all.mm.buddy.zones[0].watermark, m.mm.buddy.zones[0].watermark);
    let r = run_checked(&config(&base), generate(prog(), 1).unwrap().as_mut(), 10_000);
    assert_eq!(vm(&r, "pgsteal_file"), 0, "12 MiB fit a 32 MiB machine");
    m.run(generate(prog(), 1).unwrap().as_mut(), u64::MAX).unwrap();
    m.check_invariants().unwrap();
    let lru: u64 = m.mm.lruvecs.iter().map(|l| l.lru_size.iter().sum::<u64>()).sum();
    let pcp = m.mm.pcp.nr_pages_all();
    assert_eq!(m.mm.used_pages(), lru + pcp + 24 * MIB as u64, "kernel-used frames stay in use");
    let r = Box::new(m).finish();
    assert!(vm(&r, "workingset_refault_file") >= file as u64 * 9 / 10, "the second pass refaults: {}", vm(&r, "workingset_refault_file"));
}

/// kswapd_try_to_sleep (mm/vmscan.c 6.12): after balancing a node kswapd naps HZ/10. A
/// workload that faults fast (80 µs per page read) falls below the low watermark within the
/// nap: kswapd is woken early (kswapd_low_wmark_hit_quickly). One that faults slowly (2 ms)
/// takes ~50 pages in the nap, about what a pass leaves above the high watermark, so most
/// naps end above low but below high (kswapd_high_wmark_hit_quickly). Every pass after the
/// first starts from one of the two or from a full sleep.
#[test]
fn kswapd_naps_before_sleeping_and_counts_watermarks_hit_quickly() {
    let file = 3 * 16 * MIB / 2; // a 24 MiB loop through a 16 MiB machine
    let prog = || program(vec![region("f", file, AccessKind::FileRead)], vec![phase("p", 2 * file as u64, &[(0, Pattern::Sequential, 1.0)])]);
    // Without readahead every page is a synchronous read at the given cost.
    let fast = run_checked(&config(&[("machine.memory", "16M"), ("swap.device", "none"), ("block.read_ahead_kb", "0")]), generate(prog(), 1).unwrap().as_mut(), 20_000);
    let slow = run_checked(
        &config(&[("machine.memory", "16M"), ("swap.device", "none"), ("block.read_ahead_kb", "0"), ("cost.file_read_ns", "2000000")]),
        generate(prog(), 1).unwrap().as_mut(),
        20_000,
    );
    for (name, r) in [("fast", &fast), ("slow", &slow)] {
        let (low, high, runs) = (vm(r, "kswapd_low_wmark_hit_quickly"), vm(r, "kswapd_high_wmark_hit_quickly"), vm(r, "pageoutrun"));
        eprintln!("{name}: low {low} high {high} pageoutrun {runs} pgsteal_kswapd {} allocstall {}", vm(r, "pgsteal_kswapd"), vm(r, "allocstall_normal"));
        assert!(runs >= 1 && low + high < runs, "{name}: each pass after a nap follows a hit: {low} + {high} < {runs}");
    }
    assert!(vm(&fast, "kswapd_low_wmark_hit_quickly") > 10 * vm(&fast, "kswapd_high_wmark_hit_quickly").max(1));
    assert!(vm(&slow, "kswapd_high_wmark_hit_quickly") > vm(&slow, "kswapd_low_wmark_hit_quickly"));
    assert!(vm(&slow, "kswapd_low_wmark_hit_quickly") > 0);
}

/// A file loop 1.5 × a 16 MiB machine, twice through, with kswapd woken at once and 20 ms
/// late (`cost.kswapd_wakeup_ns`).
fn kswapd_at_once_and_late() -> (reclaimlab_core::RunResult, reclaimlab_core::RunResult) {
    let file = 3 * 16 * MIB / 2;
    let prog = || program(vec![region("f", file, AccessKind::FileRead)], vec![phase("p", 2 * file as u64, &[(0, Pattern::Sequential, 1.0)])]);
    let kv = [("machine.memory", "16M"), ("swap.device", "none"), ("block.read_ahead_kb", "0")];
    let at_once = run_checked(&config(&kv), generate(prog(), 1).unwrap().as_mut(), 20_000);
    let late = run_checked(&config(&[&kv[..], &[("cost.kswapd_wakeup_ns", "20000000")]].concat()), generate(prog(), 1).unwrap().as_mut(), 20_000);
    (at_once, late)
}

/// cost.kswapd_wakeup_ns: kswapd starts that long after wakeup_kswapd. Woken at once it
/// keeps a fast file loop above the min watermark (no direct reclaim); started 20 ms later (250 page reads),
/// the loop's allocations meanwhile reach min and reclaim directly (allocstall), kswapd's
/// passes are fewer and it reclaims less of the total.
/// A pass that finds the node rebalanced by the task's direct reclaim counts PAGEOUTRUN and
/// scans nothing (`kswapd_empty_passes`, the guest's `@@vmpass` with no shrink call). Woken
/// at once, none does; late, with the pass begun when kswapd runs (6.12 `kswapd()`: the
/// wake-ups are read then), none of this loop's does either (0 of 29; 14 of 29 when the
/// model began the pass at the wake-up).
#[test]
fn a_late_kswapd_leaves_reclaim_to_the_allocator() {
    let (at_once, late) = kswapd_at_once_and_late();
    let total = |r: &reclaimlab_core::RunResult| vm(r, "pgsteal_kswapd") + vm(r, "pgsteal_direct");
    eprintln!(
        "at once: direct {} runs {}; late: direct {} runs {}",
        vm(&at_once, "pgsteal_direct"),
        vm(&at_once, "pageoutrun"),
        vm(&late, "pgsteal_direct"),
        vm(&late, "pageoutrun")
    );
    assert_eq!(vm(&at_once, "allocstall_normal"), 0);
    assert!(vm(&late, "allocstall_normal") > 0 && vm(&late, "pgsteal_direct") > 0);
    assert!(vm(&late, "pageoutrun") < vm(&at_once, "pageoutrun"));
    assert!(vm(&late, "pgsteal_kswapd") * total(&at_once) < vm(&at_once, "pgsteal_kswapd") * total(&late));
    let empty = |r: &reclaimlab_core::RunResult| r.metrics.iter().find(|(k, _)| k == "kswapd_empty_passes").map_or(0, |m| m.1 as u64);
    assert_eq!(empty(&at_once), 0);
    assert!(empty(&late) < vm(&late, "pageoutrun"), "late: {} empty of {}", empty(&late), vm(&late, "pageoutrun"));
}

/// `kswapd_shrinking_passes` and `kswapd_pass_*` (the guest's `@@vmpass` per pass): every
/// PAGEOUTRUN pass either shrank or found the node balanced, the passes' pages reclaimed add
/// up to `pgsteal_kswapd`. Woken at once kswapd carries the loop and some of its passes
/// take a second iteration (p90 116 pages, its `nr_to_reclaim` 56 twice and more); woken
/// 20 ms late it leaves the loop to direct reclaim and every pass is one (p90 = p50 = 56).
#[test]
fn kswapd_pass_figures_add_up_to_its_counters() {
    let (at_once, late) = kswapd_at_once_and_late();
    let got = |r: &reclaimlab_core::RunResult, k: &str| r.metrics.iter().find(|(n, _)| n == k).map_or(0.0, |m| m.1);
    for (name, r) in [("at once", &at_once), ("late", &late)] {
        let n = got(r, "kswapd_shrinking_passes");
        let (mean, p50, p90) = (got(r, "kswapd_pass_reclaimed_mean"), got(r, "kswapd_pass_reclaimed_p50"), got(r, "kswapd_pass_reclaimed_p90"));
        let prio = got(r, "kswapd_pass_min_priority_mean");
        eprintln!("{name}: {n} passes shrank, reclaimed mean {mean:.1} p50 {p50} p90 {p90}, lowest priority {prio:.2}");
        assert!(n >= 1.0);
        assert_eq!(n as u64 + got(r, "kswapd_empty_passes") as u64, vm(r, "pageoutrun"), "{name}");
        assert_eq!((mean * n).round() as u64, vm(r, "pgsteal_kswapd"), "{name}");
        assert!(p50 <= p90 && p50 > 0.0, "{name}");
        assert!((1.0..=12.0).contains(&prio), "{name}: {prio}");
    }
    assert!(got(&at_once, "kswapd_pass_reclaimed_p90") > got(&late, "kswapd_pass_reclaimed_p90"));
    assert_eq!(got(&late, "kswapd_pass_reclaimed_p90"), got(&late, "kswapd_pass_reclaimed_p50"));
}

/// `kswapd_wake_window_pages_*`: the pages allocated between a wake-up and kswapd's first
/// step (the guest's `@@kswapd_wake` PAGES). Woken at once, a window holds at most the
/// allocation that woke it and the refill it was part of; 20 ms late, the loop's reads meanwhile.
#[test]
fn kswapd_wake_windows_count_the_pages_allocated_before_kswapd_runs() {
    let (at_once, late) = kswapd_at_once_and_late();
    let (n_once, n_late) = (metric(&at_once, "kswapd_wake_windows"), metric(&late, "kswapd_wake_windows"));
    assert!(n_once >= 1.0 && n_late >= 1.0);
    assert!(n_late <= vm(&late, "pageoutrun") as f64);
    let (once, late_mean) = (metric(&at_once, "kswapd_wake_window_pages_mean"), metric(&late, "kswapd_wake_window_pages_mean"));
    eprintln!("window pages: at once {once} ({n_once} windows), 20 ms late {late_mean} ({n_late})");
    assert!(once <= 64.0, "at once: {once}");
    // 20 ms at 80 µs a read (cost.file_read_ns) is about 250 pages; direct reclaim slows it.
    assert!(late_mean > 4.0 * once.max(1.0) && late_mean <= 260.0, "late: {late_mean}");
    let (p50, p90, max) = (metric(&late, "kswapd_wake_window_pages_p50"), metric(&late, "kswapd_wake_window_pages_p90"), metric(&late, "kswapd_wake_window_pages_max"));
    assert!(p50 <= p90 && p90 <= max);
    // Woken at once the loop never reclaims directly; 20 ms late some windows end in it.
    let stalled = |r: &reclaimlab_core::RunResult| metric(r, "kswapd_wake_windows_stalled");
    assert_eq!(stalled(&at_once), 0.0);
    assert!(stalled(&late) > 0.0 && stalled(&late) <= n_late.min(vm(&late, "allocstall_normal") as f64));
}

/// machine.zone_dma: node 0's lowest 15 MiB are ZONE_DMA. Allocations take it last (the
/// zonelist runs highest zone first) and leave it its lowmem_reserve, 1/256 of the zone
/// above (setup_per_zone_lowmem_reserve, vm.lowmem_reserve_ratio 256): a file loop through
/// the whole machine allocates from DMA only down to min + reserve.
#[test]
fn zone_dma_is_used_last_and_keeps_its_lowmem_reserve() {
    let cfg = config(&[("machine.memory", "64M"), ("machine.zone_dma", "15M"), ("swap.device", "none")]);
    let mut m = Machine::new(&cfg, Classic::new(Mainline));
    let zones = m.mm.nodes[0].zones.clone();
    let (normal, dma) = (&m.mm.buddy.zones[zones[0]], &m.mm.buddy.zones[zones[1]]);
    assert_eq!((normal.managed_pages, dma.managed_pages), (49 * MIB as u64, 15 * MIB as u64));
    assert_eq!((dma.lowmem_reserve, normal.lowmem_reserve), (49 * MIB as u64 / 256, 0));
    let file = 96 * MIB;
    let p = program(vec![region("f", file, AccessKind::FileRead)], vec![phase("p", 2 * file as u64, &[(0, Pattern::Sequential, 1.0)])]);
    m.run(generate(p, 1).unwrap().as_mut(), u64::MAX).unwrap();
    m.check_invariants().unwrap();
    let dma = &m.mm.buddy.zones[zones[1]];
    // The watermark is checked for one page; rmqueue_bulk then takes the per-CPU batch
    // (at most batch << CONFIG_PCP_BATCH_SCALE_MAX; the DMA zone's batch is 1) unchecked.
    assert!(dma.free_pages + 32 >= dma.watermark[0] + dma.lowmem_reserve, "DMA free {} < min + reserve - 32", dma.free_pages);
    let r = Box::new(m).finish();
    let (a_dma, a_normal) = (vm(&r, "pgalloc_dma"), vm(&r, "pgalloc_normal"));
    assert!(a_dma > 10 * MIB as u64 && a_normal > a_dma, "DMA used after Normal: {a_dma} / {a_normal}");
    assert_eq!(a_dma + a_normal, 2 * file as u64, "every access of the loop allocates one page");
}

/// machine.zone_dma_lowmem_reserve: ZONE_DMA's lowmem_reserve as the booted kernel reports
/// it (/proc/zoneinfo's protection). 6.12 computes it at init (init_per_zone_wmark_min →
/// setup_per_zone_lowmem_reserve), before the init memory and initrd go to the zone above,
/// so a guest reports less than 1/256 of the managed pages it shows later (186 against 195
/// in the validation's 256 MiB guest). The same file loop takes DMA down to min + the
/// reserve given: a larger one (here 150 pages against the computed 49) leaves DMA fuller.
#[test]
fn zone_dma_lowmem_reserve_as_the_guest_reports_it() {
    let kv = [("machine.memory", "64M"), ("machine.zone_dma", "15M"), ("swap.device", "none")];
    let file = 96 * MIB;
    let prog = || program(vec![region("f", file, AccessKind::FileRead)], vec![phase("p", 2 * file as u64, &[(0, Pattern::Sequential, 1.0)])]);
    let mut dma_free = Vec::new();
    for reserve in [None, Some(150u64)] {
        let cfg = match reserve {
            None => config(&kv),
            Some(r) => config(&[&kv[..], &[("machine.zone_dma_lowmem_reserve", r.to_string().as_str())]].concat()),
        };
        let mut m = Machine::new(&cfg, Classic::new(Mainline));
        let dma = m.mm.nodes[0].zones[1];
        assert_eq!(m.mm.buddy.zones[dma].lowmem_reserve, reserve.unwrap_or(49 * MIB as u64 / 256), "auto: 1/256 of Normal's managed pages");
        m.run(generate(prog(), 1).unwrap().as_mut(), u64::MAX).unwrap();
        m.check_invariants().unwrap();
        let z = &m.mm.buddy.zones[dma];
        assert!(z.free_pages + 32 >= z.watermark[0] + z.lowmem_reserve, "DMA free {}", z.free_pages);
        dma_free.push(z.free_pages);
    }
    eprintln!("DMA free at the end, reserve 49 and 150: {dma_free:?}");
    assert!(dma_free[1] >= dma_free[0] + 50, "a larger reserve leaves DMA fuller: {dma_free:?}");
}

/// x86-64's ZONE_DMA manages pfns 0x100-0xfff: the first MiB is reserved, so the zone's
/// first pageblock holds only 256 of its pages (mm/mod.rs `dma_hole`). memmap_init_range
/// sets MIGRATE_MOVABLE at the pageblock-aligned pfns of a zone's memory only (mm/mm_init.c
/// 6.12), so that block stays MIGRATE_UNMOVABLE, its free pages on the unmovable lists, and
/// prep_move_freepages_block never lets another type claim it (it is not inside the zone).
/// A file loop that fills DMA takes DMA's movable pages, then falls back into that block
/// (`__rmqueue_fallback`); a fallback from order ≥ pageblock_order / 2 boosts DMA
/// (try_to_steal_block → boost_watermark) and the next rmqueue from DMA wakes kswapd for
/// DMA alone (mm/page_alloc.c 6.12 `rmqueue`: wakeup_kswapd(zone, 0, 0, zone_idx(zone))),
/// whose pass passes over Normal's folios (`pgskip_normal`). With every DMA pageblock
/// movable (the model before 27 Nov 2026) no allocation of a trace ever fell back, and no
/// pass was for DMA alone.
#[test]
fn zone_dma_first_pageblock_is_unmovable_and_its_fallbacks_wake_kswapd_for_dma_alone() {
    use reclaimlab_core::mm::page_alloc::{MigrateType, ZoneType};
    // One page a fault (no readahead): kswapd, woken for DMA at once, reads the wake-up's
    // zone before the task's next allocation can widen it (kswapd.rs `pending_wake`).
    let cfg = config(&[("machine.memory", "64M"), ("machine.zone_dma", "15M"), ("swap.device", "none"), ("block.read_ahead_kb", "0")]);
    let mut m = Machine::new(&cfg, Classic::new(Mainline));
    let dma = *m.mm.nodes[0].zones.iter().find(|&&z| m.mm.buddy.zones[z].zone_type == ZoneType::Dma).unwrap();
    let z = &m.mm.buddy.zones[dma];
    assert_eq!((z.start_pfn, z.end_pfn()), (256, 4096), "DMA ends at 16 MiB, its managed pages begin inside its first pageblock");
    assert_eq!(z.nr_pageblocks[MigrateType::Unmovable as usize], 1);
    assert_eq!(z.nr_pageblocks[MigrateType::Movable as usize], 7);
    assert_eq!(m.mm.buddy.pageblock_migratetype(z.start_pfn), MigrateType::Unmovable);
    let file = 96 * MIB;
    let p = program(vec![region("f", file, AccessKind::FileRead)], vec![phase("p", 2 * file as u64, &[(0, Pattern::Sequential, 1.0)])]);
    m.run(generate(p, 1).unwrap().as_mut(), u64::MAX).unwrap();
    m.check_invariants().unwrap();
    assert!(m.mm.buddy.stats.fallback_steals > 0, "movable allocations fell back into DMA's unmovable block");
    assert_eq!(m.mm.buddy.pageblock_migratetype(256), MigrateType::Unmovable, "never claimed");
    let r = Box::new(m).finish();
    assert!(vm(&r, "pgskip_normal") > 0, "a kswapd pass for DMA alone passed over Normal's folios");
}

/// Without swap, get_scan_count scans file only (SCAN_FILE, A.6 step 1): anon is never
/// scanned or reclaimed, however hot the file pages are.
#[test]
fn swap_off_never_reclaims_anon() {
    let cfg = config(&[("machine.memory", "32M"), ("swap.device", "none")]);
    let p = program(
        vec![region("heap", 12 * MIB, AccessKind::AnonMapped), region("data", 64 * MIB, AccessKind::FileRead)],
        vec![phase("run", 600_000, &[(0, Pattern::Uniform, 0.2), (1, Pattern::Zipf { alpha: 1.0 }, 1.0)])],
    );
    let r = run_checked(&cfg, generate(p, 2).unwrap().as_mut(), 100_000);
    assert!(vm(&r, "pgsteal_file") > 10_000, "file reclaim happened");
    assert_eq!(vm(&r, "pgscan_anon"), 0);
    assert_eq!(vm(&r, "pgsteal_anon"), 0);
    assert_eq!(vm(&r, "pswpout"), 0);
    assert_eq!(vm(&r, "workingset_refault_anon"), 0);
}

/// `sim.trace_pacing`: 2000 first touches of anon pages (a minor fault each, 1 µs), 10 µs
/// apart in a timed trace. With `gaps` the faults add to the gaps; with `schedule` each
/// access is due at the sum of the gaps, so a fault shorter than the think time after it
/// costs no time, and one longer than it delays the accesses until they are due again.
#[test]
fn a_paced_trace_absorbs_stalls_into_its_think_time() {
    let touch =
        |gap: u32| -> Vec<reclaimlab_trace::Access> { (0..2000).map(|page| reclaimlab_trace::Access { page, cgroup: 0, flags: reclaimlab_trace::flags::WRITE, gap }).collect() };
    let runtime = |pacing: &str, gap: u32| {
        let cfg = config(&[("machine.memory", "64M"), ("sim.trace_pacing", pacing), ("cost.minor_fault_ns", "1000")]);
        let r = run_checked(&cfg, &mut VecSource::new(touch(gap), vec![]).timed(1000), 1000);
        metric(&r, "runtime_s")
    };
    let (gaps, sched) = (runtime("gaps", 10_000), runtime("schedule", 10_000));
    assert!(gaps >= 2000.0 * 11e-6, "gaps: think time plus every fault ({gaps} s)");
    assert!((sched - 2000.0 * 10e-6).abs() <= 2e-6, "schedule: the think time alone ({sched} s)");
    // Think time shorter than a fault: the schedule cannot be kept, the faults set the pace.
    let (gaps, sched) = (runtime("gaps", 100), runtime("schedule", 100));
    assert!(sched >= 2000.0 * 1e-6 && sched < gaps, "{sched} vs {gaps}");
}

/// With swap, an anon working set larger than memory is paged through zram and
/// refaults are counted for anon (swap-cache shadows). The swap cache's xarray nodes are
/// charged to no memcg, so they sit on the root memcg's shadow-node list: memcg limit
/// reclaim never shrinks them (every swap-in finds its shadow), global reclaim does, down
/// to what the root memcg's own pages allow (mm/workingset.c 6.12 `count_shadow_nodes`),
/// and a swap-in whose node was reclaimed is no refault.
#[test]
fn anon_thrash_uses_swap_and_counts_anon_refaults() {
    let run = |kv: &[(&str, &str)], cgroup: &str| {
        let cfg = config(&[&[("swap.device", "zram")], kv].concat());
        let mut heap = region("heap", 20 * MIB, AccessKind::AnonMapped);
        heap.cgroup = cgroup.into();
        let p = program(vec![heap], vec![phase("loop", 6 * 20 * MIB as u64, &[(0, Pattern::Sequential, 1.0)])]);
        run_checked(&cfg, generate(p, 1).unwrap().as_mut(), 20_000)
    };
    for r in [run(&[("machine.memory", "64M"), ("cgroup.a.memory.max", "16M")], "a"), run(&[("machine.memory", "16M")], "a")] {
        assert!(vm(&r, "pswpout") > 4 * 20 * MIB as u64 / 2);
        assert!(vm(&r, "pswpin") <= vm(&r, "pswpout"));
        assert_eq!(vm(&r, "pgmajfault"), vm(&r, "pswpin"));
    }
    let limited = run(&[("machine.memory", "64M"), ("cgroup.a.memory.max", "16M")], "a");
    assert_eq!(vm(&limited, "pswpin"), vm(&limited, "workingset_refault_anon"), "every swap-in found a shadow");
    assert_eq!(vm(&limited, "workingset_nodereclaim"), 0);
    // Global reclaim with the workload in a child memcg: the root memcg has no pages of
    // its own, so its list keeps no node.
    let global = run(&[("machine.memory", "16M")], "a");
    assert!(vm(&global, "workingset_nodereclaim") > 0);
    assert!(vm(&global, "workingset_refault_anon") < vm(&global, "pswpin"), "dropped shadows are no refaults");
    // The same 4 MiB held before the workload, once as memory of no memcg and once as the
    // root memcg's own mlocked pages (unevictable LRU, counted by count_shadow_nodes): 1,024
    // pages allow 128 nodes, more than the ~80 the 5,120 swap slots need.
    let held = |mlocked: &str| run(&[("machine.memory", "16M"), ("machine.kernel_used", "4M"), ("machine.kernel_mlocked", mlocked)], "a");
    let (apart, owned) = (held("0"), held("4M"));
    assert!(vm(&apart, "workingset_nodereclaim") > 0);
    assert_eq!(vm(&owned, "workingset_nodereclaim"), 0);
    assert_eq!(vm(&owned, "pswpin"), vm(&owned, "workingset_refault_anon"), "every swap-in found a shadow");
}

/// A zram swap-in decompresses on the faulting task's CPU; an SSD swap-in waits for the
/// device (`swap.ssd.read_ns`) off it: `task_cpu_s` is the runtime less those waits (and
/// less `reclaim_throttle`'s sleeps), whichever reclaims.
#[test]
fn a_zram_swap_in_is_the_tasks_cpu_and_an_ssd_one_a_wait() {
    let run = |device: &str| {
        let cfg = config(&[("swap.device", device), ("machine.memory", "64M"), ("cgroup.a.memory.max", "16M")]);
        let mut heap = region("heap", 20 * MIB, AccessKind::AnonMapped);
        heap.cgroup = "a".into();
        let p = program(vec![heap], vec![phase("loop", 3 * 20 * MIB as u64, &[(0, Pattern::Sequential, 1.0)])]);
        (run_checked(&cfg, generate(p, 1).unwrap().as_mut(), 20_000), cfg.ssd_read_ns)
    };
    let off = |r: &reclaimlab_core::RunResult| metric(r, "runtime_s") - metric(r, "task_cpu_s") - metric(r, "reclaim_throttle_s");
    let (zram, _) = run("zram");
    assert!(vm(&zram, "pswpin") > 0);
    assert!(off(&zram).abs() < 1e-9, "zram: {} s off the CPU", off(&zram));
    let (ssd, read_ns) = run("ssd");
    let waits = vm(&ssd, "pgmajfault") as f64 * read_ns as f64 / 1e9;
    assert!(waits > 0.0);
    assert!((off(&ssd) - waits).abs() < 1e-6 * waits, "ssd: {} s off the CPU, {waits} s of reads", off(&ssd));
}

/// memory.low (shrink_node_memcgs, A.4/A.6): global reclaim skips a cgroup below its
/// low protection while others have reclaimable pages. A cgroup touching its set too
/// rarely for the LRU to keep it loses it to a streaming neighbour — unless protected.
#[test]
fn memory_low_protects_a_cgroup_from_a_streaming_neighbour() {
    let run_with = |low: &str| {
        // Fresh statistics (flushed every 2 ms): protection is tested, not flush timing.
        let cfg = config(&[
            ("machine.memory", "32M"),
            ("swap.device", "none"),
            ("cgroup.db.memory.low", low),
            ("cgroup.batch.memory.max", "max"),
            ("sim.time_dilation", "1000"),
            ("block.read_ahead_kb", "0"),
        ]);
        let mut db = region("db", 12 * MIB, AccessKind::FileRead);
        db.cgroup = "db".into();
        let mut batch = region("batch", 256 * MIB, AccessKind::FileRead);
        batch.cgroup = "batch".into();
        let p = program(
            vec![db, batch],
            vec![phase("load", 12 * MIB as u64, &[(0, Pattern::Sequential, 1.0)]), phase("mixed", 400_000, &[(0, Pattern::Uniform, 0.05), (1, Pattern::Sequential, 0.95)])],
        );
        run_checked(&cfg, generate(p, 7).unwrap().as_mut(), 50_000)
    };
    let unprotected = run_with("0");
    let protected = run_with("12M");
    let db_mib = |r: &reclaimlab_core::RunResult| metric(r, "memcg.db.memory.current_bytes") / (1 << 20) as f64;
    assert!(db_mib(&unprotected) < 6.0, "the stream should push db out: {} MiB left", db_mib(&unprotected));
    assert!(db_mib(&protected) >= 11.0, "memory.low should keep db resident: {} MiB left", db_mib(&protected));
    assert!(vm(&protected, "pgsteal_file") > 50_000, "the stream itself is reclaimed");
}

/// The background flusher (mm/page-writeback.c): with memory to spare, file pages written
/// once are cleaned after `dirty_expire_centisecs` by the periodic flusher, not left for
/// reclaim; a fast writer is held at the `dirty_background_ratio` threshold.
#[test]
fn flusher_writes_back_expired_and_excess_dirty_pages() {
    // 64 MiB machine; 8 MiB of file pages written at the start, then ~0.35 s of reads
    // elsewhere (2 M accesses; the whole run is ~0.5 s simulated).
    let cfg = config(&[("machine.memory", "64M"), ("swap.device", "none")]);
    let mut w = region("log", 8 * MIB, AccessKind::FileRead);
    w.write_ratio = 1.0;
    let reads = region("data", 8 * MIB, AccessKind::FileRead);
    // Scaled-down flusher timing for a short run: expire after 0.1 s, wake every 0.05 s.
    let cfg2 = {
        let mut c = cfg.clone();
        c.set("vm.dirty_expire_centisecs", "10").unwrap();
        c.set("vm.dirty_writeback_centisecs", "5").unwrap();
        c
    };
    let p =
        program(vec![w.clone(), reads.clone()], vec![phase("write", 8 * MIB as u64, &[(0, Pattern::Sequential, 1.0)]), phase("read", 2_000_000, &[(1, Pattern::Uniform, 1.0)])]);
    let r = run_checked(&cfg2, generate(p.clone(), 1).unwrap().as_mut(), 100_000);
    assert_eq!(vm(&r, "nr_dirtied"), 8 * MIB as u64);
    assert_eq!(vm(&r, "nr_written"), 8 * MIB as u64, "every written page was written back");
    assert_eq!(vm(&r, "nr_dirty"), 0);
    assert_eq!(vm(&r, "nr_vmscan_immediate_reclaim"), 0, "reclaim never met a dirty page");
    // Without the periodic flusher the background threshold still holds dirty pages at
    // 10% of dirtyable memory (~16384 pages of 64 MiB → at most 1638 + a wake's slack).
    let mut c3 = cfg.clone();
    c3.set("vm.dirty_writeback_centisecs", "0").unwrap();
    let r = run_checked(&c3, generate(p, 1).unwrap().as_mut(), 100_000);
    assert!(vm(&r, "nr_dirty") <= 1700, "nr_dirty {}", vm(&r, "nr_dirty"));
    assert!(vm(&r, "nr_written") >= 8 * MIB as u64 - 1700);
}

/// write() of whole pages (mm/filemap.c generic_perform_write, 6.12): a page not cached is
/// created without a read (`ext4_block_write_begin` reads only blocks a write covers
/// partly) — no `pgpgin`, no readahead — and FGP_WRITEBEGIN has no FGP_ACCESSED, so
/// writing a cached page again never activates it, where reading it does.
#[test]
fn write_creates_pages_without_reading_and_marks_nothing_accessed() {
    let cfg = config(&[("machine.memory", "64M"), ("swap.device", "none")]);
    let pages = 4 * MIB;
    let mut w = region("log", pages, AccessKind::FileRead);
    w.write_ratio = 1.0;
    let r_only = region("log", pages, AccessKind::FileRead);
    let run = |reg: reclaimlab_trace::Region| {
        let p = program(vec![reg], vec![phase("touch", 3 * pages as u64, &[(0, Pattern::Sequential, 1.0)])]);
        run_checked(&cfg, generate(p, 1).unwrap().as_mut(), 100_000)
    };
    let written = run(w);
    assert_eq!(vm(&written, "nr_dirtied"), pages as u64);
    assert_eq!(vm(&written, "pgpgin"), 0, "a whole-page write reads nothing");
    assert_eq!(vm(&written, "pgmajfault"), 0);
    assert_eq!(vm(&written, "pgactivate"), 0, "writes never mark a folio accessed");
    let read = run(r_only);
    assert_eq!(vm(&read, "pgpgin"), 4 * pages as u64, "the first pass reads every page");
    assert!(vm(&read, "pgactivate") >= pages as u64, "read twice, a page is activated: {}", vm(&read, "pgactivate"));
}
