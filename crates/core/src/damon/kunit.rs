//! The kernel's DAMON kunit vectors for the region primitives (`mm/damon/tests/core-kunit.h`)
//! and the virtual address operations (`mm/damon/tests/vaddr-kunit.h`), run against the
//! functions kdamond uses. Case names are the kernel's; each cites its source, the
//! versions of ../shared/spec/damon-kunit-vectors.md G.0:
//! - core (A): torvalds/linux @6867849aac96 (~v6.8–v6.10; the cases 6.12 still has);
//! - core (C): torvalds/linux @0250dbe08c73 (newer cases: mvsum, apply_min_nr_regions, ...);
//! - vaddr: torvalds/linux @0a63a0e7570b.
//!
//! Values marked "derived" are the vectors file's, computed from the kernel's formulas,
//! not asserted by the kernel. The kunit cases on attrs, filters, the feed loop and
//! quotas sit beside their code: `attrs.rs` (damon_test_update_monitoring_result,
//! damon_test_set_attrs), `damos/filter.rs` (damos_test_filter_out,
//! damon_test_set_filters_default_reject), `damos/goal.rs`
//! (damon_test_feed_loop_next_input), `region.rs` (damon_test_merge_regions_of (C),
//! damon_test_split_above_half_progresses).

use super::ops_vaddr::damon_va_three_regions;
use super::region::*;
use reclaimlab_trace::Rng;

/// A target of `(start, end, nr_accesses)` regions (`nr_accesses_bp` = nr × 10000, as
/// the kernel's cases set both).
fn target(v: &[(u64, u64, u32)]) -> DamonTarget {
    DamonTarget { regions: v.iter().map(|&(s, e, n)| DamonRegion { nr_accesses: n, nr_accesses_bp: n * 10000, ..DamonRegion::new(s, e) }).collect() }
}

fn ranges(t: &DamonTarget) -> Vec<(u64, u64)> {
    t.regions.iter().map(|r| (r.start, r.end)).collect()
}

fn of_ranges(v: &[(u64, u64)]) -> DamonTarget {
    DamonTarget { regions: v.iter().map(|&(s, e)| DamonRegion::new(s, e)).collect() }
}

/// core-kunit.h (A) damon_test_regions: a new region's counters are zero; a target holds
/// it, then (set to no ranges) holds none.
#[test]
fn damon_test_regions() {
    let r = DamonRegion::new(1, 2);
    assert_eq!((r.start, r.end, r.nr_accesses), (1, 2, 0));
    let mut t = DamonTarget::default();
    assert_eq!(t.nr_regions(), 0);
    t.regions.push(r);
    assert_eq!(t.nr_regions(), 1);
    damon_set_regions(&mut t, &[], 1);
    assert_eq!(t.nr_regions(), 0);
}

/// core-kunit.h (A) damon_test_aggregate: `kdamond_reset_aggregated` zeroes every
/// region's nr_accesses (and keeps the last window's as last_nr_accesses: derived).
#[test]
fn damon_test_aggregate() {
    let saddr = [[10, 20, 30], [5, 42, 49], [13, 33, 55]];
    let eaddr = [[15, 27, 40], [31, 45, 55], [23, 44, 66]];
    let accesses = [[42, 95, 84], [10, 20, 30], [0, 1, 2]];
    let mut ts: Vec<DamonTarget> = (0..3).map(|i| target(&(0..3).map(|j| (saddr[i][j], eaddr[i][j], accesses[i][j])).collect::<Vec<_>>())).collect();
    kdamond_reset_aggregated(&mut ts);
    for (t, before) in ts.iter().zip(accesses) {
        assert_eq!(t.nr_regions(), 3);
        assert!(t.regions.iter().all(|r| r.nr_accesses == 0));
        assert_eq!(t.regions.iter().map(|r| r.last_nr_accesses).collect::<Vec<_>>(), before);
    }
}

/// core-kunit.h (A) damon_test_split_at: `[0, 100)` split at 25; both pieces keep the
/// counters.
#[test]
fn damon_test_split_at() {
    let mut t = DamonTarget { regions: vec![DamonRegion { nr_accesses: 42, last_nr_accesses: 15, nr_accesses_bp: 420000, age: 10, ..DamonRegion::new(0, 100) }] };
    damon_split_region_at(&mut t, 0, 25);
    assert_eq!(ranges(&t), vec![(0, 25), (25, 100)]);
    let (a, b) = (t.regions[0], t.regions[1]);
    assert_eq!((a.nr_accesses, a.last_nr_accesses, a.nr_accesses_bp, a.age), (b.nr_accesses, b.last_nr_accesses, b.nr_accesses_bp, b.age));
}

/// core-kunit.h (A) damon_test_merge_two: size-weighted nr_accesses (16) and age (17).
#[test]
fn damon_test_merge_two() {
    let mut t = DamonTarget {
        regions: vec![
            DamonRegion { nr_accesses: 10, nr_accesses_bp: 100000, age: 9, ..DamonRegion::new(0, 100) },
            DamonRegion { nr_accesses: 20, nr_accesses_bp: 200000, age: 21, ..DamonRegion::new(100, 300) },
        ],
    };
    damon_merge_two_regions(&mut t, 0, 1);
    assert_eq!(ranges(&t), vec![(0, 300)]);
    assert_eq!((t.regions[0].nr_accesses, t.regions[0].age, t.regions[0].nr_accesses_bp), (16, 17, 160000));
}

/// core-kunit.h (A) damon_test_merge_regions_of: threshold 9, size limit 9999 (the (C)
/// form with a ninth region is `region.rs`'s merge_regions_of_kunit).
#[test]
fn damon_test_merge_regions_of() {
    let sa = [0, 100, 114, 122, 130, 156, 170, 184];
    let ea = [100, 112, 122, 130, 156, 170, 184, 230];
    let nr = [0, 0, 10, 10, 20, 30, 1, 2];
    let mut t = target(&(0..8).map(|i| (sa[i], ea[i], nr[i])).collect::<Vec<_>>());
    damon_merge_regions_of(&mut t, 9, 9999, true);
    assert_eq!(ranges(&t), vec![(0, 112), (114, 130), (130, 156), (156, 170), (170, 230)]);
    // derived: nr_accesses and ages (last_nr_accesses 0)
    assert_eq!(t.regions.iter().map(|r| r.nr_accesses).collect::<Vec<_>>(), vec![0, 10, 20, 30, 1]);
    assert_eq!(t.regions.iter().map(|r| r.age).collect::<Vec<_>>(), vec![1, 0, 0, 0, 1]);
}

/// core-kunit.h (A) damon_test_split_regions_of: at most `nr_subs` pieces per region,
/// over 20 random seeds; plus (spec D.6, stronger than the kernel's check) pieces aligned
/// to the minimum size that cover the input exactly.
#[test]
fn damon_test_split_regions_of() {
    for seed in 1..=20 {
        let mut rng = Rng::new(seed);
        let mut t = of_ranges(&[(0, 22)]);
        damon_split_regions_of(&mut t, 2, 1, &mut rng);
        assert!(t.nr_regions() <= 2, "seed {seed}");
        let mut t = of_ranges(&[(0, 220)]);
        damon_split_regions_of(&mut t, 4, 1, &mut rng);
        assert!(t.nr_regions() <= 4, "seed {seed}");
        let mut t = of_ranges(&[(0, 220), (300, 400), (500, 700)]);
        damon_split_regions_of(&mut t, 4, 5, &mut rng);
        assert!(t.nr_regions() <= 12, "seed {seed}");
        assert!(t.regions.iter().all(|r| r.start % 5 == 0 && r.end % 5 == 0), "seed {seed}: {:?}", ranges(&t));
        assert_eq!(t.total_size(), 220 + 100 + 200, "seed {seed}");
    }
}

/// core-kunit.h (C) damon_test_set_regions (its five cases): the old regions clipped to
/// the new ranges, gaps inside a range filled, ranges no region touches added.
#[test]
fn damon_test_set_regions() {
    type Case = (&'static [(u64, u64)], &'static [(u64, u64)], &'static [(u64, u64)]);
    let cases: [Case; 5] = [
        (&[(4, 16), (24, 32)], &[(8, 28)], &[(8, 16), (16, 24), (24, 28)]),
        (&[], &[(5, 15), (15, 25)], &[(5, 15), (15, 25)]),
        (&[(4, 16), (24, 32)], &[(18, 23)], &[(18, 23)]),
        (&[(0, 4), (4, 17)], &[(0, 15), (25, 40)], &[(0, 4), (4, 15), (25, 40)]),
        (&[(0, 4), (42, 52)], &[(0, 15), (25, 40), (44, 50)], &[(0, 15), (25, 40), (44, 50)]),
    ];
    for (old, new, expect) in cases {
        let mut t = of_ranges(old);
        damon_set_regions(&mut t, new, 1);
        assert_eq!(ranges(&t), expect, "{old:?} set to {new:?}");
    }
}

/// core-kunit.h (C) damon_test_commit_target_regions: an empty source keeps the
/// destination's regions, any other is `damon_set_regions` of its ranges.
#[test]
fn damon_test_commit_target_regions() {
    let mut t = of_ranges(&[(3, 8), (8, 10)]);
    damon_set_regions(&mut t, &[(4, 6)], 1);
    assert_eq!(ranges(&t), vec![(4, 6)]);
}

/// core-kunit.h (C) damon_test_apply_min_nr_regions: (size, min_sz, min_nr) →
/// (max region size, regions after).
#[test]
fn damon_test_apply_min_nr_regions() {
    for (sz, min_sz, min_nr, max_sz, nr) in [(10, 1, 10, 1, 10), (10, 1, 15, 1, 10), (10, 2, 2, 6, 2), (10, 2, 10, 2, 5)] {
        let mut ts = [of_ranges(&[(0, sz)])];
        assert_eq!(damon_apply_min_nr_regions(&mut ts, min_nr, min_sz), max_sz, "{sz} {min_sz} {min_nr}");
        assert_eq!(ts[0].nr_regions(), nr, "{sz} {min_sz} {min_nr}");
    }
}

/// core-kunit.h (C) damon_test_is_last_region: each range added at the end is the last
/// region.
#[test]
fn damon_test_is_last_region() {
    let mut t = DamonTarget::default();
    for i in 0..4u64 {
        let mut want = ranges(&t);
        want.push((2 * i, 2 * i + 2));
        damon_set_regions(&mut t, &want, 1);
        assert_eq!(ranges(&t).last(), Some(&(2 * i, 2 * i + 2)));
    }
}

/// core-kunit.h (A) damon_test_nr_accesses_to_accesses_bp: a window of 2^32 samples
/// saturates max_nr_accesses at UINT_MAX, and 123 accesses of it round to 0 bp.
#[test]
fn damon_test_nr_accesses_to_accesses_bp() {
    assert_eq!(damon_nr_accesses_to_accesses_bp(123, 10, (1u64 << 32) * 10), 0);
    assert_eq!(damon_max_nr_accesses(10, (1u64 << 32) * 10), u32::MAX as u64);
}

/// core-kunit.h (A) damon_test_moving_sum.
#[test]
fn damon_test_moving_sum() {
    let (mut mvsum, nomvsum, window) = (50000, 50000, 10);
    let new = [10000, 0, 10000, 0, 0, 0, 10000, 0, 0, 0];
    let expects = [55000, 50000, 55000, 50000, 45000, 40000, 45000, 40000, 35000, 30000];
    for (n, e) in new.into_iter().zip(expects) {
        mvsum = damon_moving_sum(mvsum, nomvsum, window, n);
        assert_eq!(mvsum, e);
    }
}

/// core-kunit.h (C) damon_test_mvsum: (current, last, left_window_bp) → sum.
#[test]
fn damon_test_mvsum() {
    for (cur, last, left, expect) in [(0, 49, 10000, 49), (3, 10, 7000, 10), (3, 10, 5000, 8), (32, 100, 1000, 42), (42, 49, 0, 42)] {
        assert_eq!(damon_mvsum(cur, last, left), expect, "{cur} {last} {left}");
    }
}

/// core-kunit.h (C) damon_test_nr_accesses_mvsum: (passed, next_aggregation_sis,
/// nr_accesses, last_nr_accesses) → the moving sum, 10 samples per window.
#[test]
fn damon_test_nr_accesses_mvsum() {
    for (passed, next_aggr, nr, last, expect) in [(0, 10, 5, 3, 3), (0, 10, 0, 7, 7), (5, 10, 3, 10, 8), (8, 10, 3, 10, 5), (10, 10, 42, 49, 42)] {
        let r = DamonRegion { nr_accesses: nr, last_nr_accesses: last, ..DamonRegion::new(0, 4096) };
        assert_eq!(damon_nr_accesses_mvsum(&r, passed, next_aggr, 1, 10), expect, "{passed} {next_aggr} {nr} {last}");
    }
}

/// vaddr-kunit.h damon_test_three_regions_in_vmas: the span without its two largest gaps.
#[test]
fn damon_test_three_regions_in_vmas() {
    let vmas = [(10, 20), (20, 25), (200, 210), (210, 220), (300, 305), (307, 330)];
    assert_eq!(damon_va_three_regions(&vmas, 1), Some([(10, 25), (200, 220), (300, 330)]));
}

/// vaddr-kunit.h damon_test_split_evenly_succ: `n` pieces of `size / n`, the last
/// reaching the end.
#[test]
fn damon_test_split_evenly_succ() {
    for (start, end, n) in [(0u64, 100u64, 10u64), (5, 59, 5), (4, 6, 1)] {
        let mut t = of_ranges(&[(start, end)]);
        damon_va_evenly_split_region(&mut t, 0, n, 1).unwrap();
        assert_eq!(t.nr_regions() as u64, n);
        let piece = (end - start) / n;
        for (i, r) in t.regions.iter().enumerate() {
            let i = i as u64;
            assert_eq!((r.start, r.end), (start + i * piece, if i == n - 1 { end } else { start + (i + 1) * piece }));
        }
    }
}

/// vaddr-kunit.h damon_test_split_evenly_fail: no pieces, or pieces smaller than the
/// minimum, is -EINVAL and leaves the region as it was.
#[test]
fn damon_test_split_evenly_fail() {
    for (start, end, n) in [(0, 100, 0), (5, 6, 2)] {
        let mut t = of_ranges(&[(start, end)]);
        assert!(damon_va_evenly_split_region(&mut t, 0, n, 1).is_err(), "{start} {end} {n}");
        assert_eq!(ranges(&t), vec![(start, end)]);
    }
}
