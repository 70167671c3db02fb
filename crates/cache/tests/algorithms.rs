//! Properties of the algorithms and curves that hold whatever libCacheSim says:
//! Belady is a lower bound, the stack-distance curve equals LRU simulated at every
//! size, sizes and capacities are respected, and hand-checked small answers.
use std::path::Path;

use reclaimlab_cache::algo::{self, belady::Belady};
use reclaimlab_cache::{mrc, run, Algo, Cache, ALGOS};
use reclaimlab_trace::{open, read_keys, Rng};

fn zipf_like(n: usize, pages: u32, seed: u64) -> Vec<u32> {
    // Skewed keys: squares of uniforms concentrate near 0.
    let mut r = Rng::new(seed);
    (0..n)
        .map(|_| {
            let u = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            ((u * u * u) * pages as f64) as u32 % pages
        })
        .collect()
}

fn lirs(name: &str) -> (Vec<u32>, u32) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/traces/lirs")
        .join(name);
    let mut src = open(&p, Some("lirs"), None).unwrap();
    read_keys(src.as_mut()).unwrap()
}

fn traces() -> Vec<(String, Vec<u32>, u32)> {
    let mut v = vec![];
    for n in [
        "sprite.trace.gz",
        "multi2.trace.gz",
        "loop.trace.gz",
        "2_pools.trace.gz",
    ] {
        let (k, nr) = lirs(n);
        v.push((n.to_string(), k, nr));
    }
    v.push(("skew".into(), zipf_like(200_000, 20_000, 7), 20_000));
    let lp: Vec<u32> = (0..50).flat_map(|_| 0..3000u32).collect();
    v.push(("loop3000".into(), lp, 3000));
    v
}

#[test]
fn belady_is_a_lower_bound_of_every_algorithm() {
    for (name, keys, nr) in traces() {
        for frac in [0.01, 0.1, 0.5] {
            let size = ((nr as f64 * frac) as usize).max(20);
            let opt = algo::simulate(Algo::Belady, size, &keys, nr);
            for a in ALGOS {
                let al = Algo::parse(a).unwrap();
                let st = algo::simulate(al, size, &keys, nr);
                assert_eq!(st.requests(), keys.len() as u64);
                assert!(
                    opt.misses <= st.misses,
                    "{name} size {size}: belady {} > {a} {}",
                    opt.misses,
                    st.misses
                );
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
            let st = algo::simulate(Algo::Lru, s, &keys, nr);
            assert_eq!(h.misses(s), st.misses, "{name} size {s}");
            assert!((ratios[i] - st.miss_ratio()).abs() < 1e-12);
        }
    }
}

#[test]
fn shards_at_rate_one_is_exact_and_sampled_is_close() {
    let keys = zipf_like(400_000, 50_000, 3);
    let exact = mrc::lru_stack_distances(&keys, 50_000);
    assert_eq!(mrc::shards(&keys, 50_000, 1.0), exact);
    let s = mrc::shards(&keys, 50_000, 0.1);
    let sizes = [500, 2000, 5000, 10_000, 25_000];
    let (a, b) = (exact.miss_ratios(&sizes), s.miss_ratios(&sizes));
    for i in 0..sizes.len() {
        assert!(
            (a[i] - b[i]).abs() < 0.02,
            "size {}: exact {} sampled {}",
            sizes[i],
            a[i],
            b[i]
        );
    }
}

#[test]
fn capacity_is_respected_and_hits_are_resident() {
    let keys = zipf_like(50_000, 5000, 11);
    for a in ALGOS {
        let al = Algo::parse(a).unwrap();
        for size in [0usize, 20, 100, 1000, 6000] {
            let mut c: Box<dyn Cache> = if al.offline() {
                Box::new(Belady::new(size, &keys, 5000))
            } else {
                algo::build(al, size, 5000)
            };
            assert_eq!(c.name(), a);
            for &k in &keys {
                c.access(k);
                assert!(c.len() <= size, "{a} size {size}: len {}", c.len());
            }
            if al != Algo::Belady {
                // Accessing the most recent key again is a hit (it was just inserted).
                if size >= 20 {
                    let last = *keys.last().unwrap();
                    assert!(
                        c.access(last),
                        "{a}: the key just requested must be resident"
                    );
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
        assert_eq!(
            algo::simulate(Algo::parse(a).unwrap(), 3, &keys, 4).hits,
            0,
            "{a}"
        );
    }
    // Belady: 0 1 2 3(evict 2) 0h 1h 2(evict 0 or 1: 1 next at 9, 0 at 8 → evict 1) 3h 0h 1(evict) 2h 3h
    assert_eq!(algo::simulate(Algo::Belady, 3, &keys, 4).hits, 6);
    // CLOCK gives a second chance: 0 1 0(h) 2 → evicts 1 (0's bit set), keeps 0.
    let mut c = algo::build(Algo::Clock, 2, 3);
    assert!(!c.access(0) && !c.access(1) && c.access(0) && !c.access(2));
    assert!(c.access(0) && !c.access(1));
    // LRU: same sequence evicts 1 too, by recency.
    let mut l = algo::build(Algo::Lru, 2, 3);
    assert!(
        !l.access(0) && !l.access(1) && l.access(0) && !l.access(2) && l.access(0) && !l.access(1)
    );
    let s = run(&mut *algo::build(Algo::Fifo, 2, 3), &[0, 1, 0, 2, 0]);
    assert_eq!((s.hits, s.misses), (1, 4));
}
