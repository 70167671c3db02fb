//! Renumbering a sparse trace's ids in order (`keys::Keys`) changes no figure: every
//! algorithm at several sizes, the exact LRU curve and SHARDS (which hashes the original
//! ids) give byte-identical results on the trace's own ids and on the renumbered ones;
//! and the id space's size (a header's page count past the largest id) changes nothing.
use reclaimlab_cache::keys::Keys;
use reclaimlab_cache::{algo, mrc};

use crate::common::skewed;

/// 60k requests over 4,000 ids spread across 0..2^21 (sparse: `Keys::new` renumbers),
/// skewed so that hits, misses and ties all occur.
fn sparse() -> Vec<u32> {
    let spread = |k: u32| (k.wrapping_mul(2_654_435_761) >> 11) & ((1 << 21) - 1);
    let mut ids: Vec<u32> = (0..4000).map(spread).collect();
    ids.sort_unstable();
    ids.dedup();
    skewed(60_000, ids.len() as u32, 3).into_iter().map(|k| ids[k as usize]).collect()
}

#[test]
fn a_sparse_trace_is_renumbered_in_order_and_a_dense_one_is_kept() {
    let keys = sparse();
    let k = Keys::new(keys.clone(), 1 << 21).unwrap();
    let orig = k.orig.as_ref().expect("sparse: renumbered");
    assert_eq!(k.nr_keys as usize, orig.len());
    assert!(orig.windows(2).all(|w| w[0] < w[1]), "in order");
    assert_eq!(k.original_keys().as_ref(), keys.as_slice());
    assert_eq!(k.distinct(), orig.len() as u64);
    // Dense: kept, the id space tightened to the largest id + 1.
    let dense = skewed(10_000, 500, 1);
    let d = Keys::new(dense.clone(), 4_000_000_000).unwrap();
    assert!(d.orig.is_none());
    assert_eq!(d.keys, dense);
    assert_eq!(d.nr_keys, dense.iter().max().unwrap() + 1);
    // 10 requests over 4e9 ids (the 158-byte trace of issue 24): 10 ids, not 4e9.
    let few = Keys::new(vec![3_999_999_999, 7, 3_999_999_999, 123_456_789], 4_000_000_000).unwrap();
    assert_eq!((few.keys.clone(), few.nr_keys), (vec![2, 0, 2, 1], 3));
}

#[test]
fn every_algorithm_gives_the_same_figures_on_renumbered_ids() {
    let keys = sparse();
    let nr = keys.iter().max().unwrap() + 1;
    let k = Keys::new(keys.clone(), nr).unwrap();
    assert!(k.orig.is_some());
    for name in algo::names() {
        let al = algo::parse(name).unwrap();
        for size in [al.min_size.max(1), 50, 400, 2000, 5000] {
            let own = algo::simulate(al, size, &keys, nr);
            let renumbered = algo::simulate(al, size, &k.keys, k.nr_keys);
            assert_eq!(own, renumbered, "{name} at {size}");
            // A larger id space (a header's page count) changes nothing either.
            assert_eq!(algo::simulate(al, size, &keys, nr + 12_345), own, "{name} at {size}, wider");
        }
    }
}

#[test]
fn lru_curves_exact_and_sampled_are_the_same_on_renumbered_ids() {
    let keys = sparse();
    let nr = keys.iter().max().unwrap() + 1;
    let k = Keys::new(keys.clone(), nr).unwrap();
    let sizes: Vec<usize> = (1..=40).map(|i| i * 100).collect();
    for rate in [1.0, 0.5, 0.1, 0.01] {
        let own = mrc::shards(&keys, nr, rate);
        let renumbered = mrc::shards_by(&k.keys, k.nr_keys, rate, |x| k.original(x));
        assert_eq!(own.miss_ratios(&sizes), renumbered.miss_ratios(&sizes), "rate {rate}");
        assert_eq!((own.cold, own.total, own.adj_hits), (renumbered.cold, renumbered.total, renumbered.adj_hits));
        if rate < 1.0 {
            // Hashing the renumbered ids instead would draw another sample: the test can fail.
            let wrong = mrc::shards(&k.keys, k.nr_keys, rate);
            assert_ne!(wrong.hist, own.hist, "rate {rate}: the sample must follow the original ids");
        }
    }
}
