//! Properties of the algorithms and curves that hold whatever libCacheSim says:
//! Belady is a lower bound, the stack-distance curve equals LRU simulated at every
//! size, sizes and capacities are respected, and hand-checked small answers.
use std::path::Path;

use reclaimlab_cache::algo::{self, belady::Belady, belady_paper::BeladyPaper};
use reclaimlab_cache::{mrc, run, Cache};
use reclaimlab_trace::{open, read_keys};

use crate::common::skewed;

fn lirs(name: &str) -> (Vec<u32>, u32) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/traces/lirs").join(name);
    let mut src = open(&p, Some("lirs"), None).unwrap();
    read_keys(src.as_mut()).unwrap()
}

fn traces() -> Vec<(String, Vec<u32>, u32)> {
    let mut v = vec![];
    for n in ["sprite.trace.gz", "multi2.trace.gz", "loop.trace.gz", "2_pools.trace.gz"] {
        let (k, nr) = lirs(n);
        v.push((n.to_string(), k, nr));
    }
    v.push(("skew".into(), skewed(200_000, 20_000, 7), 20_000));
    let lp: Vec<u32> = (0..50).flat_map(|_| 0..3000u32).collect();
    v.push(("loop3000".into(), lp, 3000));
    v
}

/// MIN with bypass (`belady-paper`) ≤ always-admit Belady (`belady`) ≤ every other
/// algorithm (all of them admit every missed object at these sizes).
#[test]
fn belady_is_a_lower_bound_of_every_algorithm() {
    for (name, keys, nr) in traces() {
        for frac in [0.01, 0.1, 0.5] {
            let size = ((nr as f64 * frac) as usize).max(20);
            let min = algo::simulate(algo::parse("belady-paper").unwrap(), size, &keys, nr);
            let opt = algo::simulate(algo::parse("belady").unwrap(), size, &keys, nr);
            assert!(min.misses <= opt.misses, "{name} size {size}");
            for a in algo::names().filter(|&a| a != "belady-paper") {
                let al = algo::parse(a).unwrap();
                let st = algo::simulate(al, size, &keys, nr);
                assert_eq!(st.requests(), keys.len() as u64);
                assert!(opt.misses <= st.misses, "{name} size {size}: belady {} > {a} {}", opt.misses, st.misses);
            }
        }
    }
}

#[test]
fn stack_distance_curve_equals_lru_at_every_size() {
    for (name, keys, nr) in traces() {
        let h = mrc::lru_stack_distances(&keys, nr);
        assert_eq!(h.total, keys.len() as u64);
        let distinct = keys.iter().collect::<std::collections::HashSet<_>>().len() as u64;
        assert_eq!(h.cold, distinct);
        let step = (nr as usize / 37).max(1);
        let mut sizes: Vec<usize> = (0..=nr as usize + 1).step_by(step).collect();
        sizes.extend([1, 2, 3, nr as usize - 1, nr as usize]);
        let ratios = h.miss_ratios(&sizes);
        for (i, &s) in sizes.iter().enumerate() {
            let st = algo::simulate(algo::parse("lru").unwrap(), s, &keys, nr);
            assert_eq!(h.misses(s), st.misses, "{name} size {s}");
            assert!((ratios[i] - st.miss_ratio()).abs() < 1e-12);
        }
    }
}

#[test]
fn shards_at_rate_one_is_exact_and_sampled_is_close() {
    let keys = skewed(400_000, 50_000, 3);
    let exact = mrc::lru_stack_distances(&keys, 50_000);
    assert_eq!(mrc::shards(&keys, 50_000, 1.0), exact);
    let s = mrc::shards(&keys, 50_000, 0.1);
    let sizes = [500, 2000, 5000, 10_000, 25_000];
    let (a, b) = (exact.miss_ratios(&sizes), s.miss_ratios(&sizes));
    for i in 0..sizes.len() {
        assert!((a[i] - b[i]).abs() < 0.02, "size {}: exact {} sampled {}", sizes[i], a[i], b[i]);
    }
}

#[test]
fn capacity_is_respected_and_hits_are_resident() {
    let keys = skewed(50_000, 5000, 11);
    for a in algo::names() {
        let al = algo::parse(a).unwrap();
        for size in [0usize, 20, 100, 1000, 6000] {
            let mut c: Box<dyn Cache> = if al.name == "belady-paper" {
                Box::new(BeladyPaper::new(size, &keys, 5000))
            } else if al.offline() {
                Box::new(Belady::new(size, &keys, 5000))
            } else {
                algo::build(al, size, 5000)
            };
            assert_eq!(c.name(), a);
            for &k in &keys {
                c.access(k);
                assert!(c.len() <= size, "{a} size {size}: len {}", c.len());
            }
            if !al.offline() {
                // Accessing the most recent key again is a hit (it was just inserted).
                if size >= 20 {
                    let last = *keys.last().unwrap();
                    assert!(c.access(last), "{a}: the key just requested must be resident");
                }
            }
        }
    }
}

#[test]
fn small_known_answers() {
    // Loop of 4 keys, 3 slots: LRU/FIFO/CLOCK always miss; OPT hits 1 in 3 after warm-up.
    let keys: Vec<u32> = (0..12).map(|i| i % 4).collect();
    for a in ["lru", "fifo", "clock"] {
        assert_eq!(algo::simulate(algo::parse(a).unwrap(), 3, &keys, 4).hits, 0, "{a}");
    }
    // Belady: 0 1 2 3(evict 2) 0h 1h 2(evict 0 or 1: 1 next at 9, 0 at 8 → evict 1) 3h 0h 1(evict) 2h 3h
    assert_eq!(algo::simulate(algo::parse("belady").unwrap(), 3, &keys, 4).hits, 6);
    // CLOCK gives a second chance: 0 1 0(h) 2 → evicts 1 (0's bit set), keeps 0.
    let mut c = algo::build(algo::parse("clock").unwrap(), 2, 3);
    assert!(!c.access(0) && !c.access(1) && c.access(0) && !c.access(2));
    assert!(c.access(0) && !c.access(1));
    // LRU: same sequence evicts 1 too, by recency.
    let mut l = algo::build(algo::parse("lru").unwrap(), 2, 3);
    assert!(!l.access(0) && !l.access(1) && l.access(0) && !l.access(2) && l.access(0) && !l.access(1));
    let s = run(&mut *algo::build(algo::parse("fifo").unwrap(), 2, 3), &[0, 1, 0, 2, 0]);
    assert_eq!((s.hits, s.misses), (1, 4));
}

#[test]
fn car_hand_checked() {
    // c = 2 on 0 1 0 2 1 2 0, following the paper's Figure 2 line by line:
    // 0,1 → T1=[0,1]; 0 hit sets its bit; 2: REPLACE moves 0 (bit set) to T2 and 1 to
    // B1; 1 (in B1): REPLACE sends 2 to B1, p = 0 + max(1, 0/2) = 1, 1 → T2;
    // 2 (in B1): |T1| = 0 < max(1, p) so T2's head 0 → B2, p = 1 + max(1, 1/1) = 2;
    // 0 (in B2): T2's head 1 → B2, p = 2 − max(1, 0/2) = 1.
    let mut c = reclaimlab_cache::algo::car::Car::new(2, 3);
    let hits: Vec<bool> = [0, 1, 0, 2, 1, 2, 0].iter().map(|&k| c.access(k)).collect();
    assert_eq!(hits, [false, false, true, false, false, false, false]);
    assert_eq!(c.p(), 1.0);
    assert_eq!(c.len(), 2);
    // Now T2 = [2, 0] (both bits clear): 2 and 0 hit, 1 (in B2) misses.
    assert!(c.access(2) && c.access(0) && !c.access(1));
}

/// Page faults of the CLOCK-Pro authors' simulator `clock-pro.c` (Song Jiang, 2005; its
/// shipped `clock-pro.h`: 5% fixed cold allocation, at least 2 cold pages, at most m
/// non-resident pages) on the LIRS paper's traces at 500, 1000 and 2000 pages, as
/// recorded in Caffeine's simulator test `ClockProReferenceTest.java`
/// (github.com/ben-manes/caffeine, simulator/src/test/.../policy/irr/).
#[test]
fn clockpro_faults_as_the_authors_simulator_on_the_lirs_traces() {
    let want: [(&str, [u64; 3]); 13] = [
        ("2_pools", [48_078, 45_665, 40_856]),
        ("backf", [6229, 751, 751]),
        ("cpp", [1269, 1226, 1223]),
        ("cs", [4873, 2903, 1409]),
        ("gli", [4098, 3004, 2529]),
        ("loop", [268_475, 31_450, 1011]),
        ("multi1", [7049, 5151, 2648]),
        ("multi2", [13_280, 11_389, 7841]),
        ("multi3", [18_060, 14_558, 11_600]),
        ("ps", [4557, 3607, 3083]),
        ("scan", [38_625, 27_225, 4425]),
        ("sprite", [31_061, 15_534, 10_384]),
        ("zigzag", [51_401, 50_776, 3115]),
    ];
    for (name, misses) in want {
        let (keys, nr) = lirs(&format!("{name}.trace.gz"));
        for (size, m) in [500, 1000, 2000].into_iter().zip(misses) {
            let st = algo::simulate(algo::parse("clockpro").unwrap(), size, &keys, nr);
            assert_eq!(st.misses, m, "{name} at {size} pages");
        }
    }
}

/// Misses of the LIRS authors' simulator `lirs.c` (Song Jiang, 2002, with its shipped
/// `lirs.h`: HIR share 1%, at least 2; stack bound 2500c) on the LIRS paper's traces at
/// 500, 1000 and 2000 blocks. Obtained by compiling that program (as distributed in
/// github.com/dcompiler/loca, policies/lirs/lirs-sim/) and running it on these traces
/// (blank and `*` lines dropped); docs/cachesim.md has the steps.
#[test]
fn lirs_paper_misses_as_the_authors_simulator_on_the_lirs_traces() {
    let want: [(&str, [u64; 3]); 13] = [
        ("2_pools", [48_043, 45_608, 40_810]),
        ("backf", [6229, 751, 751]),
        ("cpp", [1275, 1228, 1223]),
        ("cs", [4717, 2744, 1409]),
        ("gli", [3994, 2964, 2529]),
        ("loop", [258_495, 11_490, 1011]),
        ("multi1", [7033, 5011, 2631]),
        ("multi2", [12_930, 11_012, 7601]),
        ("multi3", [16_768, 15_255, 11_419]),
        ("ps", [4452, 3462, 3083]),
        ("scan", [38_145, 26_265, 2505]),
        ("sprite", [32_209, 16_589, 11_787]),
        ("zigzag", [51_901, 51_776, 2026]),
    ];
    for (name, misses) in want {
        let (keys, nr) = lirs(&format!("{name}.trace.gz"));
        for (size, m) in [500, 1000, 2000].into_iter().zip(misses) {
            let st = algo::simulate(algo::parse("lirs-paper").unwrap(), size, &keys, nr);
            assert_eq!(st.misses, m, "{name} at {size} blocks");
        }
    }
}

fn hits(a: &str, size: usize, nr: u32, keys: &[u32]) -> Vec<bool> {
    let mut c = algo::build(algo::parse(a).unwrap(), size, nr);
    keys.iter().map(|&k| c.access(k)).collect()
}

#[test]
fn paper_variants_differ_where_documented() {
    // S3-FIFO, 20 slots (small 2): a cold scan of 20 keys, then 10 new ones. libCacheSim
    // sends keys 2..19 to main once small is full before the first eviction, so the new
    // keys churn through small and 5 survives; the paper's S3-FIFO put all 20 in small and
    // evicted 0..9 in FIFO order (5 is then a ghost hit: a miss).
    let mut keys: Vec<u32> = (0..20).chain(100..110).collect();
    keys.extend([5, 15]);
    let tail = |a| hits(a, 20, 110, &keys)[30..].to_vec();
    assert_eq!(tail("s3fifo"), [true, true]);
    assert_eq!(tail("s3fifo-paper"), [false, true]);

    // SLRU, 4 slots (one per protected segment): the paper's inserts 0..3 on probation;
    // hits on 0 and 1 promote them (1 pushes 0 back down); 4 evicts the probationary
    // tail 2. libCacheSim's places 1, 2, 3 straight into protected segments, so 4 evicts
    // 0 from segment 0 and 2 still hits.
    let keys = [0, 1, 2, 3, 0, 1, 4, 2, 0, 3];
    let (f, t) = (false, true);
    assert_eq!(hits("slru-paper", 4, 5, &keys), [f, f, f, f, t, t, f, f, t, f]);
    assert_eq!(hits("slru", 4, 5, &keys)[..8], [f, f, f, f, t, t, f, t]);

    // Belady, 2 slots, 0 1 2 0 1: always-admit evicts 1 for 2 (never used again);
    // MIN bypasses 2 and hits both 0 and 1.
    let keys = [0, 1, 2, 0, 1];
    assert_eq!(algo::simulate(algo::parse("belady").unwrap(), 2, &keys, 3).hits, 1);
    assert_eq!(algo::simulate(algo::parse("belady-paper").unwrap(), 2, &keys, 3).hits, 2);
}

/// `clockpro-paper`: page faults of the authors' `clock-pro.c` with its adaptive cold
/// allocation turned on (`#define ADAPTIVE_COLD_ALLOC`) and the band the allocation
/// adapts in widened from the shipped 5%–5% (which leaves nothing to adapt) to
/// `MIN_COLD_ALLOC_RATE` 1.0, `MAX_COLD_ALLOC_RATE` 99.0 — obtained by running that
/// program so configured on these traces (docs/cachesim.md). Adapting helps where the
/// 5% cold allocation is too small for the loop (`loop` at 1000: 31,450 → 11,490;
/// `scan` at 2000: 4425 → 2505).
#[test]
fn clockpro_paper_faults_as_the_authors_simulator_with_adaptive_cold_allocation() {
    let want: [(&str, [u64; 3]); 13] = [
        ("2_pools", [48_076, 45_663, 40_842]),
        ("backf", [4870, 751, 751]),
        ("cpp", [1275, 1226, 1223]),
        ("cs", [4795, 2756, 1409]),
        ("gli", [4018, 2964, 2529]),
        ("loop", [258_495, 11_490, 1011]),
        ("multi1", [6986, 5027, 2632]),
        ("multi2", [13_221, 11_270, 7919]),
        ("multi3", [18_031, 14_553, 11_457]),
        ("ps", [4517, 3527, 3083]),
        ("scan", [38_145, 26_265, 2505]),
        ("sprite", [30_863, 14_876, 10_304]),
        ("zigzag", [51_901, 42_642, 2235]),
    ];
    for (name, misses) in want {
        let (keys, nr) = lirs(&format!("{name}.trace.gz"));
        for (size, m) in [500, 1000, 2000].into_iter().zip(misses) {
            let st = algo::simulate(algo::parse("clockpro-paper").unwrap(), size, &keys, nr);
            assert_eq!(st.misses, m, "{name} at {size} pages");
        }
    }
}
