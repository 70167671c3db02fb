//! `cache:<algo>` policies: the reference cache algorithms as the machine's reclaim
//! policy, driven by kswapd / direct reclaim and `shrink_folio_list`.
//! Exact answers where the algorithm's answer does not depend on when reclaim runs
//! (a loop larger than memory, a working set that fits), the young-bit path, and a
//! reclaim-heavy run with invariants checked throughout.
use crate::common::*;
use reclaimlab_trace::{generate, AccessKind, Pattern};

/// The `cache:*` policy rows: one per algorithm of crates/cache that evicts on demand.
fn cache_policies() -> Vec<&'static str> {
    reclaimlab_core::policies().into_iter().map(|p| p.name).filter(|n| n.starts_with("cache:")).collect()
}

#[test]
fn the_cache_rows_are_the_tables_on_demand_algorithms() {
    let mut rows: Vec<&str> = cache_policies().iter().map(|p| p.strip_prefix("cache:").unwrap()).collect();
    let mut algos: Vec<&str> = reclaimlab_cache::TABLE.iter().filter(|a| a.reclaim.is_some()).map(|a| a.name).collect();
    rows.sort_unstable();
    algos.sort_unstable();
    assert_eq!(rows, algos);
    assert!(rows.contains(&"lru") && !rows.contains(&"belady"), "{rows:?}");
}

/// Readahead and fault-around off: the reference algorithms see exactly the pages the
/// trace asks for, as in the standalone cache simulator the tests compare with.
fn machine(policy: &str, swap: &str) -> reclaimlab_core::config::SimConfig {
    config(&[("policy", policy), ("machine.memory", "8M"), ("swap.device", swap), ("block.read_ahead_kb", "0"), ("fault_around_bytes", "4096")])
}

fn file_loop(pages: u32, passes: u64) -> reclaimlab_trace::Program {
    program(vec![region("f", pages, AccessKind::FileRead)], vec![phase("loop", passes * pages as u64, &[(0, Pattern::Sequential, 1.0)])])
}

/// A cyclic read of 16 MiB through 8 MiB: LRU, FIFO, CLOCK, SIEVE, ARC, CAR, LFU and 2Q
/// (whose A1out holds half the memory's keys, so the loop never refaults from it) miss
/// every request of a loop at any size below it (checked on the standalone simulator), so
/// whatever sizes and moments reclaim picks, every read must fault. S3-FIFO keeps part of
/// a loop in its main queue, LIRS and CLOCK-Pro their LIR / hot pages, SLRU its upper
/// segments, so those must fault less (as each misses less standalone).
#[test]
fn a_loop_larger_than_memory_faults_on_every_read_as_in_the_simulator() {
    let pages = 4 * 1024;
    let keys: Vec<u32> = (0..3 * pages).map(|i| i % pages).collect();
    for policy in cache_policies() {
        let algo = policy.strip_prefix("cache:").unwrap();
        let sim = reclaimlab_cache::simulate(algo, 2 * 1024, &keys, pages).unwrap();
        let r = run_checked(&machine(policy, "none"), generate(file_loop(pages, 3), 1).unwrap().as_mut(), 4096);
        let faults = metric(&r, "major_faults") as u64;
        assert_eq!(metric(&r, "accesses") as u64, keys.len() as u64);
        if sim.misses < keys.len() as u64 {
            assert!(faults < keys.len() as u64, "{policy}: {faults} (simulator {})", sim.misses);
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
    for policy in cache_policies() {
        let r = run(&machine(policy, "none"), generate(file_loop(1024, 3), 1).unwrap().as_mut());
        assert_eq!(metric(&r, "major_faults") as u64, 1024, "{policy}");
        assert_eq!(vm(&r, "pgsteal_kswapd") + vm(&r, "pgsteal_direct"), 0, "{policy}");
    }
}

/// Mapped anon pages are only seen through the accessed bit at scan time: LRU (which
/// acts on it) must keep a skewed working set better than FIFO (which ignores it).
#[test]
fn the_accessed_bit_reaches_the_algorithm() {
    let prog = program(vec![region("anon", 3 * 1024, AccessKind::AnonMapped)], vec![phase("zipf", 200_000, &[(0, Pattern::Zipf { alpha: 1.0 }, 1.0)])]);
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
        vec![phase("mix", 120_000, &[(0, Pattern::Zipf { alpha: 0.9 }, 0.5), (1, Pattern::Zipf { alpha: 0.7 }, 0.5)]), phase("burst", 60_000, &[(2, Pattern::Sequential, 1.0)])],
    );
    for policy in cache_policies() {
        let cfg = config(&[("policy", policy), ("machine.memory", "12M"), ("swap.device", "zram"), ("cgroup.a.memory.max", "4M"), ("vm.watermark_scale_factor", "1")]);
        let r = run_checked(&cfg, generate(prog.clone(), 5).unwrap().as_mut(), 5000);
        assert!(vm(&r, "pgsteal_kswapd") > 0, "{policy}: kswapd reclaimed nothing");
        assert!(vm(&r, "pswpout") > 0, "{policy}: no anon was swapped out");
        assert!(metric(&r, "memcg.a.memory.events.max") > 0.0, "{policy}: no memcg limit reclaim {:?}", r.metrics);
        assert!(vm(&r, "pgsteal_direct") > 0 && vm(&r, "allocstall") > 0, "{policy}: no direct reclaim");
    }
}

/// Scan resistance. A hot set H (4 MiB) is read at random, half the reads, while a cold
/// stream of pages read once makes up the other half (8 MiB of memory: reclaim runs
/// throughout, and H's pages are re-read while the cold ones never are). Then one
/// sequential read of 16 MiB of fresh pages, then one pass over H. Under LRU the scan
/// (twice memory) pushes every page of H out, so the last pass faults on all 1024
/// pages; LIRS (H is its LIR set, the scan's pages enter as resident HIR blocks and go
/// first), 2Q (H lives in Am, the scan passes through A1in), SLRU (H sits in the upper
/// segments) and CLOCK-Pro (H is hot, the scan's pages are cold) keep H: the last pass
/// faults on under a tenth of it.
#[test]
fn lirs_2q_slru_and_clockpro_keep_a_hot_set_through_a_one_time_scan_where_lru_does_not() {
    let hot_pages = 1024u32;
    let prog = |with_last_pass: bool| {
        let mut phases = vec![phase("mix", 40_000, &[(0, Pattern::Uniform, 0.5), (1, Pattern::Sequential, 0.5)]), phase("scan", 4096, &[(2, Pattern::Sequential, 1.0)])];
        if with_last_pass {
            phases.push(phase("hot", hot_pages as u64, &[(0, Pattern::Sequential, 1.0)]));
        }
        program(vec![region("hot", hot_pages, AccessKind::FileRead), region("cold", 24_000, AccessKind::FileRead), region("scan", 4096, AccessKind::FileRead)], phases)
    };
    let last_pass_faults = |policy: &str| {
        let faults = |p: bool| metric(&run(&machine(policy, "none"), generate(prog(p), 7).unwrap().as_mut()), "major_faults") as u64;
        faults(true) - faults(false)
    };
    assert_eq!(last_pass_faults("cache:lru"), hot_pages as u64);
    for policy in ["cache:lirs", "cache:2q", "cache:slru", "cache:clockpro"] {
        let f = last_pass_faults(policy);
        assert!(f < hot_pages as u64 / 10, "{policy}: the last pass over H faulted {f} times");
    }
}
