//! `cache:<algo>` policies: the reference cache algorithms as the machine's reclaim
//! policy, driven by kswapd / direct reclaim and `shrink_folio_list`.
//! Exact answers where the algorithm's answer does not depend on when reclaim runs
//! (a loop larger than memory, a working set that fits), the young-bit path, and a
//! reclaim-heavy run with invariants checked throughout.
mod common;
use common::*;
use reclaimlab_trace::{generate, AccessKind, Pattern};

const POLICIES: [&str; 8] = ["cache:lru", "cache:fifo", "cache:clock", "cache:sieve", "cache:arc", "cache:car", "cache:lfu", "cache:s3fifo"];

fn machine(policy: &str, swap: &str) -> reclaimlab_core::config::SimConfig {
    config(&[("policy", policy), ("machine.memory", "8M"), ("swap.device", swap)])
}

fn file_loop(pages: u32, passes: u64) -> reclaimlab_trace::Program {
    program(vec![region("f", pages, AccessKind::FileRead)], vec![phase("loop", passes * pages as u64, &[(0, Pattern::Sequential, 1.0)])])
}

/// A cyclic read of 16 MiB through 8 MiB: LRU, FIFO, CLOCK, SIEVE, ARC, CAR and LFU miss every
/// request of a loop at any size below it (checked on the standalone simulator), so whatever
/// sizes and moments reclaim picks, every read must fault. S3-FIFO keeps part of a loop
/// in its main queue, so it must fault less.
#[test]
fn a_loop_larger_than_memory_faults_on_every_read_as_in_the_simulator() {
    let pages = 4 * 1024;
    let keys: Vec<u32> = (0..3 * pages).map(|i| i % pages).collect();
    for (policy, algo) in POLICIES.iter().zip(["lru", "fifo", "clock", "sieve", "arc", "car", "lfu", "s3fifo"]) {
        let sim = reclaimlab_cache::simulate(algo, 2 * 1024, &keys, pages).unwrap();
        let r = run_checked(&machine(policy, "none"), generate(file_loop(pages, 3), 1).unwrap().as_mut(), 4096);
        let faults = metric(&r, "major_faults") as u64;
        assert_eq!(metric(&r, "accesses") as u64, keys.len() as u64);
        if algo == "s3fifo" {
            assert!(sim.misses < keys.len() as u64 && faults < keys.len() as u64, "{policy}: {faults}");
        } else {
            assert_eq!(sim.misses, keys.len() as u64, "{algo}");
            assert_eq!(faults, keys.len() as u64, "{policy}");
        }
        assert!(vm(&r, "pgsteal_kswapd") + vm(&r, "pgsteal_direct") > 0, "{policy}: nothing reclaimed");
    }
}

/// 4 MiB read three times in 8 MiB: only the first pass faults, nothing is reclaimed.
#[test]
fn a_working_set_that_fits_faults_once_per_page() {
    for policy in POLICIES {
        let r = run(&machine(policy, "none"), generate(file_loop(1024, 3), 1).unwrap().as_mut());
        assert_eq!(metric(&r, "major_faults") as u64, 1024, "{policy}");
        assert_eq!(vm(&r, "pgsteal_kswapd") + vm(&r, "pgsteal_direct"), 0, "{policy}");
    }
}

/// Mapped anon pages are only seen through the accessed bit at scan time: LRU (which
/// acts on it) must keep a skewed working set better than FIFO (which ignores it).
#[test]
fn the_accessed_bit_reaches_the_algorithm() {
    let prog = program(
        vec![region("anon", 3 * 1024, AccessKind::AnonMapped)],
        vec![phase("zipf", 200_000, &[(0, Pattern::Zipf { alpha: 1.0 }, 1.0)])],
    );
    let faults = |p: &str| {
        let r = run(&machine(p, "ssd"), generate(prog.clone(), 3).unwrap().as_mut());
        vm(&r, "pswpin")
    };
    let (lru, fifo, clock) = (faults("cache:lru"), faults("cache:fifo"), faults("cache:clock"));
    assert!(lru < fifo && clock < fifo, "swap-ins: lru {lru} clock {clock} fifo {fifo}");
}

/// Anon and file pages in two cgroups, one with a limit, zram swap, then a burst of
/// fresh anon pages faster than kswapd (watermark_scale_factor 1): kswapd, direct and
/// memcg limit reclaim all go through the algorithms; invariants hold throughout.
#[test]
fn reclaim_drivers_run_every_cache_policy() {
    let mut anon = region("anon", 2 * 1024, AccessKind::AnonMapped);
    anon.cgroup = "a".into();
    let file = region("file", 3 * 1024, AccessKind::FileRead);
    let burst = region("burst", 1024, AccessKind::AnonMapped);
    let prog = program(
        vec![anon, file, burst],
        vec![
            phase("mix", 120_000, &[(0, Pattern::Zipf { alpha: 0.9 }, 0.5), (1, Pattern::Zipf { alpha: 0.7 }, 0.5)]),
            phase("burst", 60_000, &[(2, Pattern::Sequential, 1.0)]),
        ],
    );
    for policy in POLICIES {
        let cfg = config(&[("policy", policy), ("machine.memory", "12M"), ("swap.device", "zram"), ("cgroup.a.memory.max", "4M"), ("vm.watermark_scale_factor", "1")]);
        let r = run_checked(&cfg, generate(prog.clone(), 5).unwrap().as_mut(), 5000);
        assert!(vm(&r, "pgsteal_kswapd") > 0, "{policy}: kswapd reclaimed nothing");
        assert!(vm(&r, "pswpout") > 0, "{policy}: no anon was swapped out");
        assert!(metric(&r, "memcg.a.memory.events.max") > 0.0, "{policy}: no memcg limit reclaim {:?}", r.metrics);
        assert!(vm(&r, "pgsteal_direct") > 0 && vm(&r, "allocstall") > 0, "{policy}: no direct reclaim");
    }
}
