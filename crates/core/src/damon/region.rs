//! DAMON regions and targets and the region primitives of `mm/damon/core.c` (spec D.2,
//! D.4–D.6), under the kernel's function names so the kernel's kunit vectors run against
//! them (`reclaimlab.damon`).
//!
//! A target's regions are an address-ordered `Vec` of non-overlapping half-open ranges
//! (gaps allowed) — the kernel's list, with indices for pointers. Split and merge
//! rebuild the vector in one pass per aggregation, never per sample.
//!
//! Version: core.c @004ded6b (v6.17-era, `nr_accesses_bp` kept) with the newer region-count
//! rules of spec D.10 — `damon_apply_min_nr_regions` and the split that keeps making
//! progress above `max_nr_regions / 2` — and D.10's `count_age` (ages advance only on the
//! first pass of the merge loop). `min_region_sz` is passed explicitly (D.10), so the kunit
//! vectors (min 1) and the simulator (PAGE_SIZE) call the same code.

use reclaimlab_trace::Rng;

/// `struct damon_region`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DamonRegion {
    pub start: u64,
    pub end: u64,
    pub sampling_addr: u64,
    pub nr_accesses: u32,
    pub nr_accesses_bp: u32,
    pub age: u32,
    pub last_nr_accesses: u32,
}

impl DamonRegion {
    /// `damon_new_region`: all counters zero.
    pub fn new(start: u64, end: u64) -> Self {
        DamonRegion { start, end, ..Default::default() }
    }
    /// `damon_sz_region`.
    #[inline]
    pub fn size(&self) -> u64 {
        self.end - self.start
    }
}

/// `struct damon_target`: its regions, address-ordered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DamonTarget {
    pub regions: Vec<DamonRegion>,
}

impl DamonTarget {
    /// `damon_nr_regions`.
    pub fn nr_regions(&self) -> usize {
        self.regions.len()
    }
    /// Sum of region sizes.
    pub fn total_size(&self) -> u64 {
        self.regions.iter().map(|r| r.size()).sum()
    }
}

#[inline]
pub fn align_down(x: u64, a: u64) -> u64 {
    x / a * a
}
#[inline]
pub fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// `damon_rand(l, r)`: uniform in `[l, r)` from the context's seeded RNG (D.9; the
/// kernel uses `get_random_u32_below`).
#[inline]
pub fn damon_rand(rng: &mut Rng, l: u64, r: u64) -> u64 {
    if r <= l {
        return l;
    }
    l + rng.below(r - l)
}

/// `damon_split_region_at(t, r, sz)`: `r` becomes `[start, start+sz)`, a new region
/// `[start+sz, end)` inheriting every counter follows it (D.6).
pub fn damon_split_region_at(t: &mut DamonTarget, i: usize, sz: u64) {
    let r = t.regions[i];
    debug_assert!(sz > 0 && sz < r.size());
    let mut n = r;
    n.start = r.start + sz;
    t.regions[i].end = n.start;
    t.regions.insert(i + 1, n);
}

/// `damon_merge_two_regions(t, l, r)`: size-weighted averages of `nr_accesses` and
/// `age`, `nr_accesses_bp = nr_accesses * 10000`, `l.end = r.end`, `r` removed (D.5).
/// `r` must be `l + 1`.
pub fn damon_merge_two_regions(t: &mut DamonTarget, l: usize, r: usize) {
    debug_assert_eq!(r, l + 1);
    let rr = t.regions.remove(r);
    merge_into(&mut t.regions[l], &rr);
}

fn merge_into(l: &mut DamonRegion, r: &DamonRegion) {
    let (sl, sr) = (l.size(), r.size());
    l.nr_accesses = ((l.nr_accesses as u64 * sl + r.nr_accesses as u64 * sr) / (sl + sr)) as u32;
    l.nr_accesses_bp = l.nr_accesses * 10000;
    l.age = ((l.age as u64 * sl + r.age as u64 * sr) / (sl + sr)) as u32;
    l.end = r.end;
}

/// `damon_merge_regions_of(t, thres, sz_limit, count_age)` (D.5): one left-to-right pass;
/// with `count_age` a region's age restarts when its `nr_accesses` moved more than `thres`
/// from the last window's, else grows; adjacent regions whose access counts differ by at
/// most `thres` merge while the result stays within `sz_limit`.
pub fn damon_merge_regions_of(t: &mut DamonTarget, thres: u32, sz_limit: u64, count_age: bool) {
    let mut out: Vec<DamonRegion> = Vec::with_capacity(t.regions.len());
    for mut r in t.regions.drain(..) {
        if count_age {
            if r.nr_accesses.abs_diff(r.last_nr_accesses) > thres {
                r.age = 0;
            } else {
                r.age = r.age.saturating_add(1);
            }
        }
        if let Some(prev) = out.last_mut() {
            if prev.end == r.start && prev.nr_accesses.abs_diff(r.nr_accesses) <= thres && prev.size() + r.size() <= sz_limit {
                merge_into(prev, &r);
                continue;
            }
        }
        out.push(r);
    }
    t.regions = out;
}

/// `damon_split_regions_of(t, nr_subs, min_region_sz)` (D.6): each region is split up
/// to `nr_subs - 1` times at a random 10%..90% point (aligned down), the left piece being
/// split again.
pub fn damon_split_regions_of(t: &mut DamonTarget, nr_subs: u32, min_region_sz: u64, rng: &mut Rng) {
    let mut out: Vec<DamonRegion> = Vec::with_capacity(t.regions.len() * nr_subs as usize);
    for r in t.regions.drain(..) {
        // Pieces are produced right to left (the left one keeps being split).
        let mut left = r;
        let mut rights: [DamonRegion; 8] = [DamonRegion::default(); 8];
        let mut nr_rights = 0;
        let mut sz_region = left.size();
        let mut i = 0;
        while i < nr_subs - 1 && sz_region > 2 * min_region_sz {
            let sz_sub = align_down(damon_rand(rng, 1, 10) * sz_region / 10, min_region_sz);
            i += 1;
            if sz_sub == 0 || sz_sub >= sz_region {
                continue;
            }
            let mut right = left;
            right.start = left.start + sz_sub;
            left.end = right.start;
            if nr_rights < rights.len() {
                rights[nr_rights] = right;
                nr_rights += 1;
            }
            sz_region = sz_sub;
        }
        out.push(left);
        for k in (0..nr_rights).rev() {
            out.push(rights[k]);
        }
    }
    t.regions = out;
}

/// `damon_region_sz_limit` (004ded6b): `max(Σ sizes / min_nr_regions, min_region_sz)`.
pub fn damon_region_sz_limit(targets: &[DamonTarget], min_nr_regions: u32, min_region_sz: u64) -> u64 {
    let sz: u64 = targets.iter().map(|t| t.total_size()).sum();
    let sz = if min_nr_regions > 0 { sz / min_nr_regions as u64 } else { sz };
    sz.max(min_region_sz)
}

/// `damon_apply_min_nr_regions(ctx)` (D.10): `max_region_sz = ALIGN(max(total /
/// min_nr_regions, min_region_sz), min_region_sz)`; every larger region is cut into
/// chunks of that size. Returns `max_region_sz`.
pub fn damon_apply_min_nr_regions(targets: &mut [DamonTarget], min_nr_regions: u32, min_region_sz: u64) -> u64 {
    let max_region_sz = align_up(damon_region_sz_limit(targets, min_nr_regions, min_region_sz), min_region_sz);
    for t in targets.iter_mut() {
        if t.regions.iter().all(|r| r.size() <= max_region_sz) {
            continue;
        }
        let mut out = Vec::with_capacity(t.regions.len());
        for r in t.regions.drain(..) {
            let mut cur = r;
            while cur.size() > max_region_sz {
                let mut left = cur;
                left.end = cur.start + max_region_sz;
                out.push(left);
                cur.start = left.end;
            }
            out.push(cur);
        }
        t.regions = out;
    }
    max_region_sz
}

/// `kdamond_split_regions` (D.6 with the D.10 rule above half): at most doubling (or
/// tripling when the count did not change since last time and is below a third of the
/// maximum); above `max/2`, one region in every `max/(max-n)` is split in two, starting at
/// a rotating offset. `last_nr_regions` and `offset` are the function's statics.
pub fn kdamond_split_regions(targets: &mut [DamonTarget], max_nr_regions: u32, min_region_sz: u64, last_nr_regions: &mut usize, offset: &mut usize, rng: &mut Rng) {
    let n: usize = targets.iter().map(|t| t.nr_regions()).sum();
    let max = max_nr_regions as usize;
    if n >= max {
        return;
    }
    if n > max / 2 {
        let every = (max / (max - n)).max(1);
        let mut idx = 0usize;
        for t in targets.iter_mut() {
            let mut out = Vec::with_capacity(t.regions.len() + t.regions.len() / every + 1);
            for r in t.regions.drain(..) {
                if (idx + *offset) % every == 0 && r.size() > 2 * min_region_sz {
                    let mut tt = DamonTarget { regions: vec![r] };
                    damon_split_regions_of(&mut tt, 2, min_region_sz, rng);
                    out.extend(tt.regions);
                } else {
                    out.push(r);
                }
                idx += 1;
            }
            t.regions = out;
        }
        *offset = (*offset + 1) % every;
        *last_nr_regions = n;
        return;
    }
    let mut nr_subs = 2;
    if *last_nr_regions == n && n < max / 3 {
        nr_subs = 3;
    }
    for t in targets.iter_mut() {
        damon_split_regions_of(t, nr_subs, min_region_sz, rng);
    }
    *last_nr_regions = n;
}

/// `kdamond_merge_regions(ctx, threshold, sz_limit)` (D.5): merge with a doubling
/// threshold until the count fits `max_nr_regions` (ages counted on the first pass only).
pub fn kdamond_merge_regions(targets: &mut [DamonTarget], threshold: u32, sz_limit: u64, max_nr_regions: u32, max_thres: u32) {
    let mut threshold = threshold;
    let mut count_age = true;
    loop {
        let mut nr = 0;
        for t in targets.iter_mut() {
            damon_merge_regions_of(t, threshold, sz_limit, count_age);
            nr += t.nr_regions();
        }
        count_age = false;
        threshold = (threshold * 2).max(1);
        if nr <= max_nr_regions as usize || threshold / 2 >= max_thres {
            break;
        }
    }
}

/// `kdamond_reset_aggregated`: `last_nr_accesses = nr_accesses; nr_accesses = 0`.
pub fn kdamond_reset_aggregated(targets: &mut [DamonTarget]) {
    for t in targets.iter_mut() {
        for r in t.regions.iter_mut() {
            r.last_nr_accesses = r.nr_accesses;
            r.nr_accesses = 0;
            r.nr_accesses_bp = r.last_nr_accesses.saturating_mul(10000);
        }
    }
}

/// `damon_set_regions(t, ranges, min_region_sz)` (D.6): drop regions intersecting no
/// range; per range, insert a new region if none intersects, else stretch the first and
/// last intersecting regions to the (aligned) range and fill the holes between them.
pub fn damon_set_regions(t: &mut DamonTarget, ranges: &[(u64, u64)], min_region_sz: u64) {
    let intersects = |r: &DamonRegion, (s, e): (u64, u64)| r.start < e && s < r.end;
    t.regions.retain(|r| ranges.iter().any(|&rg| intersects(r, rg)));
    for &(s, e) in ranges {
        let hits: Vec<usize> = (0..t.regions.len()).filter(|&i| intersects(&t.regions[i], (s, e))).collect();
        if hits.is_empty() {
            let nr = DamonRegion::new(align_down(s, min_region_sz), align_up(e, min_region_sz));
            let pos = t.regions.iter().position(|r| r.start >= nr.end).unwrap_or(t.regions.len());
            t.regions.insert(pos, nr);
            continue;
        }
        let (first, last) = (hits[0], *hits.last().unwrap());
        t.regions[first].start = align_down(s, min_region_sz);
        t.regions[last].end = align_up(e, min_region_sz);
        // Fill the holes between consecutive intersecting regions (from the right, so
        // indices stay valid).
        for k in (first..last).rev() {
            let (a, b) = (t.regions[k].end, t.regions[k + 1].start);
            if a < b {
                t.regions.insert(k + 1, DamonRegion::new(a, b));
            }
        }
    }
}

/// `damon_max_nr_accesses(attrs)`: `min(aggr / sample, UINT_MAX)`.
pub fn damon_max_nr_accesses(sample_interval: u64, aggr_interval: u64) -> u64 {
    if sample_interval == 0 {
        return 1;
    }
    (aggr_interval / sample_interval).min(u32::MAX as u64)
}

/// `damon_nr_accesses_to_accesses_bp(nr, attrs)`: `nr * 10000 / max_nr_accesses`.
pub fn damon_nr_accesses_to_accesses_bp(nr: u32, sample_interval: u64, aggr_interval: u64) -> u32 {
    let max = damon_max_nr_accesses(sample_interval, aggr_interval).max(1);
    (nr as u64 * 10000 / max) as u32
}

/// `damon_moving_sum(mvsum, nomvsum, len_window, new_value)` (D.4): the previous
/// window's total assumed spread evenly.
pub fn damon_moving_sum(mvsum: u32, nomvsum: u32, len_window: u32, new_value: u32) -> u32 {
    mvsum.wrapping_sub(nomvsum / len_window.max(1)).wrapping_add(new_value)
}

/// `damon_mvsum(current, last, left_window_bp)` (D.10): `current + last * left/10000`.
pub fn damon_mvsum(current: u64, last: u64, left_window_bp: u64) -> u64 {
    current + last * left_window_bp / 10000
}

/// `damon_nr_accesses_mvsum(r, ctx)` (D.10): the moving sum from the window's remaining
/// share, `(next_aggregation_sis - passed) / (aggr / sample)`. With the whole window
/// left (at the boundary, before `nr_accesses` is reset) it is `last_nr_accesses`.
pub fn damon_nr_accesses_mvsum(r: &DamonRegion, passed_sample_intervals: u64, next_aggregation_sis: u64, sample_interval: u64, aggr_interval: u64) -> u32 {
    let len = damon_max_nr_accesses(sample_interval, aggr_interval).max(1);
    let left = next_aggregation_sis.saturating_sub(passed_sample_intervals).min(len);
    if left == len {
        return r.last_nr_accesses;
    }
    damon_mvsum(r.nr_accesses as u64, r.last_nr_accesses as u64, left * 10000 / len) as u32
}

/// `damon_update_region_access_rate(r, accessed, attrs)` (D.4).
#[inline]
pub fn damon_update_region_access_rate(r: &mut DamonRegion, accessed: bool, len_window: u32) {
    r.nr_accesses_bp = damon_moving_sum(r.nr_accesses_bp, r.last_nr_accesses.saturating_mul(10000), len_window, if accessed { 10000 } else { 0 });
    if accessed {
        r.nr_accesses += 1;
    }
}

/// `damon_va_evenly_split_region` (vaddr.c): exactly `nr_pieces` pieces of
/// `ALIGN_DOWN(size / nr_pieces, min)`, the last reaching the original end. Errors
/// (`-EINVAL`) when `nr_pieces` is 0 or the piece size aligns to 0.
pub fn damon_va_evenly_split_region(t: &mut DamonTarget, i: usize, nr_pieces: u64, min_region_sz: u64) -> Result<(), &'static str> {
    if nr_pieces == 0 {
        return Err("no pieces");
    }
    if nr_pieces == 1 {
        return Ok(());
    }
    let r = t.regions[i];
    let sz_piece = align_down(r.size() / nr_pieces, min_region_sz);
    if sz_piece == 0 {
        return Err("a piece aligns to 0");
    }
    let orig_end = r.end;
    t.regions[i].end = r.start + sz_piece;
    let mut pieces = Vec::with_capacity(nr_pieces as usize - 1);
    let mut start = r.start + sz_piece;
    for k in 1..nr_pieces {
        let end = if k == nr_pieces - 1 { orig_end } else { start + sz_piece };
        pieces.push(DamonRegion { start, end, ..r });
        start = end;
    }
    t.regions.splice(i + 1..i + 1, pieces);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(v: &[(u64, u64, u32)]) -> DamonTarget {
        DamonTarget { regions: v.iter().map(|&(s, e, n)| DamonRegion { nr_accesses: n, ..DamonRegion::new(s, e) }).collect() }
    }
    fn ranges(t: &DamonTarget) -> Vec<(u64, u64)> {
        t.regions.iter().map(|r| (r.start, r.end)).collect()
    }

    /// mm/damon/tests/core-kunit.h (C) damon_test_merge_regions_of, with the derived ages of
    /// the vectors file (kunit.rs has the rest of the kernel's cases).
    #[test]
    fn merge_regions_of_kunit() {
        let mut t = target(&[(0, 100, 0), (100, 112, 0), (114, 122, 10), (122, 130, 10), (130, 156, 20), (156, 170, 30), (170, 184, 1), (184, 230, 2), (230, 10170, 5)]);
        damon_merge_regions_of(&mut t, 9, 9999, true);
        assert_eq!(ranges(&t), vec![(0, 112), (114, 130), (130, 156), (156, 170), (170, 230), (230, 10170)]);
        assert_eq!(t.regions.iter().map(|r| r.nr_accesses).collect::<Vec<_>>(), vec![0, 10, 20, 30, 1, 5]);
        assert_eq!(t.regions.iter().map(|r| r.age).collect::<Vec<_>>(), vec![1, 0, 0, 0, 1, 1]);
    }

    #[test]
    fn split_keeps_bounds_and_alignment() {
        let mut rng = Rng::new(7);
        for _ in 0..200 {
            let mut t = target(&[(0, 220 * 4096, 3), (300 * 4096, 400 * 4096, 0)]);
            damon_split_regions_of(&mut t, 3, 4096, &mut rng);
            assert!(t.nr_regions() <= 6);
            assert_eq!(t.total_size(), 320 * 4096);
            for w in t.regions.windows(2) {
                assert!(w[0].end <= w[1].start);
            }
            assert!(t.regions.iter().all(|r| r.start % 4096 == 0 && r.end % 4096 == 0 && r.size() > 0));
        }
    }

    /// mm/damon/tests/core-kunit.h (C) damon_test_split_above_half_progresses.
    #[test]
    fn split_above_half_progresses() {
        let mut t =
            DamonTarget { regions: (0..760).map(|i| DamonRegion { nr_accesses: if i % 2 == 1 { 0 } else { 100 }, age: 5, ..DamonRegion::new(i * 100, i * 100 + 100) }).collect() };
        let (mut last, mut off) = (0, 0);
        let mut ts = [std::mem::take(&mut t)];
        kdamond_split_regions(&mut ts, 1500, 1, &mut last, &mut off, &mut Rng::new(1));
        let n = ts[0].nr_regions();
        assert!(n > 760 && n <= 1500, "{n}");
    }
}
