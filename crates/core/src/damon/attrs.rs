//! Monitoring attributes (`struct damon_attrs`, spec D.1), their validation
//! (`damon_set_attrs`), the conversion of monitoring results when they change
//! (`damon_update_monitoring_result`, D.7) and the interval auto-tuning
//! (`kdamond_tune_intervals`, D.8). Intervals are in microseconds as in the kernel.

use super::damos::goal::damon_feed_loop_next_input;
use super::region::{damon_max_nr_accesses, DamonRegion, DamonTarget};

/// `struct damon_intervals_goal` (D.8): all zero = disabled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DamonIntervalsGoal {
    pub access_bp: u64,
    pub aggrs: u64,
    pub min_sample_us: u64,
    pub max_sample_us: u64,
}

/// `struct damon_attrs` with `damon_new_ctx`'s defaults (D.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DamonAttrs {
    pub sample_interval: u64,
    pub aggr_interval: u64,
    pub ops_update_interval: u64,
    pub min_nr_regions: u32,
    pub max_nr_regions: u32,
    pub intervals_goal: DamonIntervalsGoal,
    /// `aggr_samples` (private): aggregation interval in samples.
    pub aggr_samples: u64,
}

impl Default for DamonAttrs {
    fn default() -> Self {
        DamonAttrs {
            sample_interval: 5_000,
            aggr_interval: 100_000,
            ops_update_interval: 60_000_000,
            min_nr_regions: 10,
            max_nr_regions: 1000,
            intervals_goal: DamonIntervalsGoal::default(),
            aggr_samples: 20,
        }
    }
}

impl DamonAttrs {
    /// `damon_max_nr_accesses(attrs)`.
    pub fn max_nr_accesses(&self) -> u64 {
        damon_max_nr_accesses(self.sample_interval, self.aggr_interval)
    }
}

/// The checks of `damon_set_attrs` (D.1): `Err` names the rule (`-EINVAL` in the kernel).
pub fn damon_valid_attrs(a: &DamonAttrs) -> Result<(), String> {
    let g = &a.intervals_goal;
    if g.aggrs != 0 && (g.min_sample_us > g.max_sample_us || a.sample_interval < g.min_sample_us || a.sample_interval > g.max_sample_us) {
        return Err("intervals_goal: min_sample_us..max_sample_us must contain sample_interval".into());
    }
    if a.min_nr_regions < 3 {
        return Err(format!("min_nr_regions {} must be at least 3", a.min_nr_regions));
    }
    if a.min_nr_regions > a.max_nr_regions {
        return Err(format!("min_nr_regions {} is above max_nr_regions {}", a.min_nr_regions, a.max_nr_regions));
    }
    if a.sample_interval > a.aggr_interval {
        return Err(format!("sample_interval {} us is above aggr_interval {} us", a.sample_interval, a.aggr_interval));
    }
    Ok(())
}

/// `damon_accesses_bp_to_nr_accesses` / `..._to_accesses_bp` through basis points (D.7).
fn conv(nr: u32, old: &DamonAttrs, new: &DamonAttrs) -> u32 {
    let bp = nr as u64 * 10000 / old.max_nr_accesses().max(1);
    (bp * new.max_nr_accesses() / 10000) as u32
}

/// `damon_update_monitoring_result(r, old, new, aggregating)` (D.7).
pub fn damon_update_monitoring_result(r: &mut DamonRegion, old: &DamonAttrs, new: &DamonAttrs, aggregating: bool) {
    if old.sample_interval == 0 || old.aggr_interval == 0 || new.sample_interval == 0 || new.aggr_interval == 0 {
        return;
    }
    if !aggregating {
        r.nr_accesses = conv(r.nr_accesses, old, new);
        r.nr_accesses_bp = r.nr_accesses.saturating_mul(10000);
    } else {
        r.last_nr_accesses = conv(r.last_nr_accesses, old, new);
        r.nr_accesses_bp = r.last_nr_accesses.saturating_mul(10000);
        r.nr_accesses = 0;
    }
    r.age = (r.age as u64 * old.aggr_interval / new.aggr_interval) as u32;
}

/// `kdamond_tune_intervals` (D.8): the sample interval `new` should have so that the
/// observed access events approach `access_bp` of the maximum (aggr_samples kept).
pub fn kdamond_tune_intervals(attrs: &DamonAttrs, targets: &[DamonTarget]) -> DamonAttrs {
    let g = &attrs.intervals_goal;
    let (mut max_events, mut events) = (0u128, 0u128);
    for t in targets {
        for r in &t.regions {
            max_events += r.size() as u128 * attrs.aggr_samples as u128;
            events += r.size() as u128 * r.nr_accesses as u128;
        }
    }
    let target = (max_events * g.access_bp as u128 / 10000).max(1);
    let score_bp = (events * 10000 / target).min(u64::MAX as u128) as u64;
    let mut adapt_bp = damon_feed_loop_next_input(100_000_000, score_bp) / 10000;
    if adapt_bp <= 10000 {
        adapt_bp = 5000 + adapt_bp / 2;
    }
    let mut new = *attrs;
    if adapt_bp == 10000 {
        return new;
    }
    let sample = (attrs.sample_interval * adapt_bp / 10000).clamp(g.min_sample_us, g.max_sample_us);
    new.sample_interval = sample;
    new.aggr_interval = sample * attrs.aggr_samples;
    new
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(sample: u64, aggr: u64) -> DamonAttrs {
        DamonAttrs { sample_interval: sample, aggr_interval: aggr, ..Default::default() }
    }

    /// mm/damon/tests/core-kunit.h (A) damon_test_update_monitoring_result.
    #[test]
    fn update_monitoring_result_kunit() {
        let old = attrs(10, 1000);
        let mut r = DamonRegion { nr_accesses: 15, age: 20, ..DamonRegion::new(3, 7) };
        damon_update_monitoring_result(&mut r, &old, &attrs(100, 10000), false);
        assert_eq!((r.nr_accesses, r.age), (15, 2));
        damon_update_monitoring_result(&mut r, &old, &attrs(1, 1000), false);
        assert_eq!((r.nr_accesses, r.age), (150, 2));
        damon_update_monitoring_result(&mut r, &old, &attrs(1, 100), false);
        assert_eq!((r.nr_accesses, r.age), (150, 20));
    }

    /// D.8: nothing observed → intervals grow ×2 (score 0 → the feed loop doubles its
    /// input); far above the goal → shrink to half (the ×0.5 floor).
    #[test]
    fn interval_tuning_steps() {
        let mut a = attrs(5_000, 100_000);
        a.intervals_goal = DamonIntervalsGoal { access_bp: 400, aggrs: 3, min_sample_us: 1_000, max_sample_us: 10_000_000 };
        let mut t = DamonTarget { regions: vec![DamonRegion::new(0, 1 << 20)] };
        let n = kdamond_tune_intervals(&a, std::slice::from_ref(&t));
        assert_eq!((n.sample_interval, n.aggr_interval), (10_000, 200_000));
        // 8% of samples saw access: score 20000 bp → next input 10000 → adapt 5000+0 → ×0.5.
        // 2 of 20 samples = 10 %, score 25000 bp ≥ 2× goal: feed loop returns its floor
        // 10000 → adapt_bp 1 → 5000 + 0 → ×0.5.
        t.regions[0].nr_accesses = 2;
        let n = kdamond_tune_intervals(&a, std::slice::from_ref(&t));
        assert_eq!(n.sample_interval, 2_500);
        assert_eq!(n.aggr_interval, n.sample_interval * 20);
    }

    /// mm/damon/tests/core-kunit.h (A) damon_test_set_attrs.
    #[test]
    fn set_attrs_kunit() {
        let valid = DamonAttrs { min_nr_regions: 10, max_nr_regions: 1000, sample_interval: 5000, aggr_interval: 100000, ..Default::default() };
        assert!(damon_valid_attrs(&valid).is_ok());
        assert!(damon_valid_attrs(&DamonAttrs { min_nr_regions: 1, ..valid }).is_err());
        assert!(damon_valid_attrs(&DamonAttrs { max_nr_regions: 9, ..valid }).is_err());
        assert!(damon_valid_attrs(&DamonAttrs { aggr_interval: 4999, ..valid }).is_err());
    }
}
