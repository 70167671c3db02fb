//! `reclaimlab._core` DAMON primitives for `reclaimlab.damon`: the region and
//! accounting functions of `reclaimlab_core::damon` under the kernel's names, on plain
//! Python values, so the kernel's kunit vectors run against the simulator's own code.
//!
//! A region is a dict `{"start", "end", "nr_accesses", "nr_accesses_bp", "age",
//! "last_nr_accesses", "sampling_addr"}` (missing counters are 0; a `(start, end)` tuple
//! also works); a target is a list of regions. Functions return new lists instead of
//! mutating (Python callers get the kernel's result, not an in-place edit).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use reclaimlab_core::damon::attrs::{self as dattrs, damon_valid_attrs, DamonAttrs, DamonIntervalsGoal};
use reclaimlab_core::damon::damos::filter::{damos_filter_match as filter_match, damos_set_filters_default_reject as set_default_reject, DamosFilter, DamosFilterType};
use reclaimlab_core::damon::damos::goal::{damon_feed_loop_next_input as feed_loop, GoalInputs};
use reclaimlab_core::damon::damos::prio::{damon_cold_score as cold, damon_hot_score as hot, damos_min_score as min_score};
use reclaimlab_core::damon::damos::quota::{damos_set_effective_quota as set_esz, DamosQuota};
use reclaimlab_core::damon::damos::wmarks::{damos_wmark_wait_us as wmark_wait, DamosWatermarks, DamosWmarkMetric};
use reclaimlab_core::damon::ops_vaddr::damon_va_three_regions as three_regions;
use reclaimlab_core::damon::region::{self as reg, DamonRegion, DamonTarget};
use reclaimlab_trace::Rng;

use crate::error::invalid;

fn region_of(o: &Bound<'_, PyAny>) -> PyResult<DamonRegion> {
    if let Ok(t) = o.cast::<PyTuple>() {
        let (s, e): (u64, u64) = t.extract()?;
        if e < s {
            return Err(invalid(format!("region [{s}, {e}) ends before it starts")));
        }
        return Ok(DamonRegion::new(s, e));
    }
    let d = o.cast::<PyDict>().map_err(|_| invalid("a region is a dict with start/end (or a (start, end) tuple)"))?;
    let get = |k: &str| -> PyResult<u64> {
        Ok(match d.get_item(k)? {
            Some(v) => v.extract()?,
            None => 0,
        })
    };
    let (start, end) = (get("start")?, get("end")?);
    if end < start {
        return Err(invalid(format!("region [{start}, {end}) ends before it starts")));
    }
    let u32_of = |k: &str| -> PyResult<u32> { u32::try_from(get(k)?).map_err(|_| invalid(format!("region {k} out of range"))) };
    Ok(DamonRegion {
        start,
        end,
        sampling_addr: get("sampling_addr")?,
        nr_accesses: u32_of("nr_accesses")?,
        nr_accesses_bp: u32_of("nr_accesses_bp")?,
        age: u32_of("age")?,
        last_nr_accesses: u32_of("last_nr_accesses")?,
    })
}

fn target_of(regions: &Bound<'_, PyAny>) -> PyResult<DamonTarget> {
    let mut t = DamonTarget::default();
    for o in regions.try_iter()? {
        t.regions.push(region_of(&o?)?);
    }
    Ok(t)
}

fn targets_of(targets: &Bound<'_, PyAny>) -> PyResult<Vec<DamonTarget>> {
    targets.try_iter()?.map(|t| target_of(&t?)).collect()
}

fn region_dict<'py>(py: Python<'py>, r: &DamonRegion) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("start", r.start)?;
    d.set_item("end", r.end)?;
    d.set_item("nr_accesses", r.nr_accesses)?;
    d.set_item("nr_accesses_bp", r.nr_accesses_bp)?;
    d.set_item("age", r.age)?;
    d.set_item("last_nr_accesses", r.last_nr_accesses)?;
    d.set_item("sampling_addr", r.sampling_addr)?;
    Ok(d)
}

fn regions_list<'py>(py: Python<'py>, t: &DamonTarget) -> PyResult<Vec<Bound<'py, PyDict>>> {
    t.regions.iter().map(|r| region_dict(py, r)).collect()
}

fn targets_list<'py>(py: Python<'py>, ts: &[DamonTarget]) -> PyResult<Vec<Vec<Bound<'py, PyDict>>>> {
    ts.iter().map(|t| regions_list(py, t)).collect()
}

fn index(t: &DamonTarget, i: usize) -> PyResult<usize> {
    if i < t.regions.len() {
        Ok(i)
    } else {
        Err(invalid(format!("region index {i} out of range ({} regions)", t.regions.len())))
    }
}

fn attrs(sample_interval: u64, aggr_interval: u64) -> DamonAttrs {
    DamonAttrs { sample_interval, aggr_interval, aggr_samples: aggr_interval / sample_interval.max(1), ..DamonAttrs::default() }
}

/// `damon_split_region_at(t, r, sz)`: region `index` becomes `[start, start+sz)`.
#[pyfunction]
fn damon_split_region_at<'py>(py: Python<'py>, regions: &Bound<'py, PyAny>, index: usize, sz: u64) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut t = target_of(regions)?;
    let i = self::index(&t, index)?;
    if sz == 0 || sz >= t.regions[i].size() {
        return Err(invalid(format!("split size {sz} must be inside the region")));
    }
    reg::damon_split_region_at(&mut t, i, sz);
    regions_list(py, &t)
}

/// `damon_merge_two_regions(t, l, r)` with `r = l + 1`.
#[pyfunction]
fn damon_merge_two_regions<'py>(py: Python<'py>, regions: &Bound<'py, PyAny>, l: usize, r: usize) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut t = target_of(regions)?;
    index(&t, r)?;
    if r != l + 1 {
        return Err(invalid("merge needs adjacent indices l, l + 1"));
    }
    reg::damon_merge_two_regions(&mut t, l, r);
    regions_list(py, &t)
}

/// `damon_merge_regions_of(t, thres, sz_limit[, count_age])`.
#[pyfunction]
#[pyo3(signature = (regions, thres, sz_limit, count_age = true))]
fn damon_merge_regions_of<'py>(py: Python<'py>, regions: &Bound<'py, PyAny>, thres: u32, sz_limit: u64, count_age: bool) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut t = target_of(regions)?;
    reg::damon_merge_regions_of(&mut t, thres, sz_limit, count_age);
    regions_list(py, &t)
}

/// `damon_split_regions_of(t, nr_subs, min_region_sz)` with a seeded RNG.
#[pyfunction]
#[pyo3(signature = (regions, nr_subs, min_region_sz = 1, seed = 1))]
fn damon_split_regions_of<'py>(py: Python<'py>, regions: &Bound<'py, PyAny>, nr_subs: u32, min_region_sz: u64, seed: u64) -> PyResult<Vec<Bound<'py, PyDict>>> {
    if nr_subs == 0 || nr_subs > 9 || min_region_sz == 0 {
        return Err(invalid("nr_subs must be 1..9 and min_region_sz > 0"));
    }
    let mut t = target_of(regions)?;
    reg::damon_split_regions_of(&mut t, nr_subs, min_region_sz, &mut Rng::new(seed));
    regions_list(py, &t)
}

/// `kdamond_split_regions(ctx)` over `targets` (lists of regions); returns (targets,
/// last_nr_regions).
#[pyfunction]
#[pyo3(signature = (targets, max_nr_regions, min_region_sz = 1, last_nr_regions = 0, seed = 1))]
fn kdamond_split_regions<'py>(
    py: Python<'py>,
    targets: &Bound<'py, PyAny>,
    max_nr_regions: u32,
    min_region_sz: u64,
    last_nr_regions: usize,
    seed: u64,
) -> PyResult<(Vec<Vec<Bound<'py, PyDict>>>, usize)> {
    let mut ts = targets_of(targets)?;
    let (mut last, mut off) = (last_nr_regions, 0);
    reg::kdamond_split_regions(&mut ts, max_nr_regions, min_region_sz.max(1), &mut last, &mut off, &mut Rng::new(seed));
    Ok((targets_list(py, &ts)?, last))
}

/// `kdamond_merge_regions(ctx, threshold, sz_limit)`.
#[pyfunction]
fn kdamond_merge_regions<'py>(
    py: Python<'py>,
    targets: &Bound<'py, PyAny>,
    threshold: u32,
    sz_limit: u64,
    max_nr_regions: u32,
    max_thres: u32,
) -> PyResult<Vec<Vec<Bound<'py, PyDict>>>> {
    let mut ts = targets_of(targets)?;
    reg::kdamond_merge_regions(&mut ts, threshold, sz_limit, max_nr_regions, max_thres);
    targets_list(py, &ts)
}

/// `kdamond_reset_aggregated(ctx)`.
#[pyfunction]
fn kdamond_reset_aggregated<'py>(py: Python<'py>, targets: &Bound<'py, PyAny>) -> PyResult<Vec<Vec<Bound<'py, PyDict>>>> {
    let mut ts = targets_of(targets)?;
    reg::kdamond_reset_aggregated(&mut ts);
    targets_list(py, &ts)
}

/// `damon_set_regions(t, ranges, min_region_sz)`.
#[pyfunction]
#[pyo3(signature = (regions, ranges, min_region_sz = 1))]
fn damon_set_regions<'py>(py: Python<'py>, regions: &Bound<'py, PyAny>, ranges: Vec<(u64, u64)>, min_region_sz: u64) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut t = target_of(regions)?;
    reg::damon_set_regions(&mut t, &ranges, min_region_sz.max(1));
    regions_list(py, &t)
}

/// `damon_apply_min_nr_regions(ctx)`: returns (max_region_sz, targets).
#[pyfunction]
fn damon_apply_min_nr_regions<'py>(py: Python<'py>, targets: &Bound<'py, PyAny>, min_nr_regions: u32, min_region_sz: u64) -> PyResult<(u64, Vec<Vec<Bound<'py, PyDict>>>)> {
    let mut ts = targets_of(targets)?;
    let sz = reg::damon_apply_min_nr_regions(&mut ts, min_nr_regions, min_region_sz.max(1));
    Ok((sz, targets_list(py, &ts)?))
}

/// `damon_va_evenly_split_region(t, r, nr_pieces)`; raises on `-EINVAL`.
#[pyfunction]
#[pyo3(signature = (regions, index, nr_pieces, min_region_sz = 1))]
fn damon_va_evenly_split_region<'py>(py: Python<'py>, regions: &Bound<'py, PyAny>, index: usize, nr_pieces: u64, min_region_sz: u64) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut t = target_of(regions)?;
    let i = self::index(&t, index)?;
    reg::damon_va_evenly_split_region(&mut t, i, nr_pieces, min_region_sz.max(1)).map_err(|m| invalid(format!("-EINVAL: {m}")))?;
    regions_list(py, &t)
}

/// `__damon_va_three_regions(vmas)`: three (start, end) ranges, or None (`-EINVAL`).
#[pyfunction]
#[pyo3(signature = (vmas, min_region_sz = 1))]
fn damon_va_three_regions(vmas: Vec<(u64, u64)>, min_region_sz: u64) -> Option<Vec<(u64, u64)>> {
    three_regions(&vmas, min_region_sz.max(1)).map(|r| r.to_vec())
}

#[pyfunction]
fn damon_moving_sum(mvsum: u32, nomvsum: u32, len_window: u32, new_value: u32) -> u32 {
    reg::damon_moving_sum(mvsum, nomvsum, len_window, new_value)
}

#[pyfunction]
fn damon_mvsum(current: u64, last: u64, left_window_bp: u64) -> u64 {
    reg::damon_mvsum(current, last, left_window_bp)
}

/// `damon_nr_accesses_mvsum(r, ctx)` from the context's sample counters.
#[pyfunction]
fn damon_nr_accesses_mvsum(region: &Bound<'_, PyAny>, passed_sample_intervals: u64, next_aggregation_sis: u64, sample_interval: u64, aggr_interval: u64) -> PyResult<u32> {
    Ok(reg::damon_nr_accesses_mvsum(&region_of(region)?, passed_sample_intervals, next_aggregation_sis, sample_interval, aggr_interval))
}

#[pyfunction]
fn damon_nr_accesses_to_accesses_bp(nr_accesses: u32, sample_interval: u64, aggr_interval: u64) -> u32 {
    reg::damon_nr_accesses_to_accesses_bp(nr_accesses, sample_interval, aggr_interval)
}

#[pyfunction]
fn damon_max_nr_accesses(sample_interval: u64, aggr_interval: u64) -> u64 {
    reg::damon_max_nr_accesses(sample_interval, aggr_interval)
}

/// `damon_update_region_access_rate(r, accessed, attrs)`.
#[pyfunction]
fn damon_update_region_access_rate<'py>(py: Python<'py>, region: &Bound<'py, PyAny>, accessed: bool, sample_interval: u64, aggr_interval: u64) -> PyResult<Bound<'py, PyDict>> {
    let mut r = region_of(region)?;
    let len = if sample_interval != 0 { reg::damon_max_nr_accesses(sample_interval, aggr_interval) as u32 } else { 1 };
    reg::damon_update_region_access_rate(&mut r, accessed, len);
    region_dict(py, &r)
}

/// `damon_update_monitoring_result(r, old, new, aggregating)`; attrs as
/// (sample_interval, aggr_interval).
#[pyfunction]
fn damon_update_monitoring_result<'py>(py: Python<'py>, region: &Bound<'py, PyAny>, old: (u64, u64), new: (u64, u64), aggregating: bool) -> PyResult<Bound<'py, PyDict>> {
    let mut r = region_of(region)?;
    dattrs::damon_update_monitoring_result(&mut r, &attrs(old.0, old.1), &attrs(new.0, new.1), aggregating);
    region_dict(py, &r)
}

/// `damon_set_attrs(ctx, attrs)`'s checks: 0 or -22 (`-EINVAL`).
#[pyfunction]
#[pyo3(signature = (sample_interval, aggr_interval, min_nr_regions, max_nr_regions, intervals_goal = None))]
fn damon_set_attrs(sample_interval: u64, aggr_interval: u64, min_nr_regions: u32, max_nr_regions: u32, intervals_goal: Option<(u64, u64, u64, u64)>) -> i32 {
    let g = intervals_goal.map_or(DamonIntervalsGoal::default(), |(access_bp, aggrs, min_sample_us, max_sample_us)| DamonIntervalsGoal {
        access_bp,
        aggrs,
        min_sample_us,
        max_sample_us,
    });
    let a = DamonAttrs { min_nr_regions, max_nr_regions, intervals_goal: g, ..attrs(sample_interval, aggr_interval) };
    if damon_valid_attrs(&a).is_ok() {
        0
    } else {
        -22
    }
}

/// `kdamond_tune_intervals`: (sample_interval, aggr_interval) after one tuning step.
#[pyfunction]
fn kdamond_tune_intervals(targets: &Bound<'_, PyAny>, sample_interval: u64, aggr_interval: u64, intervals_goal: (u64, u64, u64, u64)) -> PyResult<(u64, u64)> {
    let ts = targets_of(targets)?;
    let (access_bp, aggrs, min_sample_us, max_sample_us) = intervals_goal;
    let a = DamonAttrs { intervals_goal: DamonIntervalsGoal { access_bp, aggrs, min_sample_us, max_sample_us }, ..attrs(sample_interval, aggr_interval) };
    let n = dattrs::kdamond_tune_intervals(&a, &ts);
    Ok((n.sample_interval, n.aggr_interval))
}

#[pyfunction]
fn damon_feed_loop_next_input(last_input: u64, score: u64) -> u64 {
    feed_loop(last_input, score)
}

fn filter_of(d: &Bound<'_, PyDict>) -> PyResult<DamosFilter> {
    let ty: String = d.get_item("type")?.ok_or_else(|| invalid("filter needs a type"))?.extract()?;
    let ty = DamosFilterType::parse(&ty).ok_or_else(|| invalid(format!("unknown filter type '{ty}'")))?;
    let b = |k: &str, dflt: bool| -> PyResult<bool> {
        Ok(match d.get_item(k)? {
            Some(v) => v.extract()?,
            None => dflt,
        })
    };
    let mut f = DamosFilter::new(ty, b("matching", true)?, b("allow", false)?);
    if let Some(v) = d.get_item("addr_range")? {
        f.addr_range = v.extract()?;
    }
    if let Some(v) = d.get_item("target_idx")? {
        f.target_idx = v.extract()?;
    }
    if let Some(v) = d.get_item("memcg_id")? {
        f.memcg_id = v.extract()?;
    }
    if let Some(v) = d.get_item("sz_range")? {
        f.sz_range = v.extract()?;
    }
    Ok(f)
}

/// `damos_filter_match(ctx, t, r, filter, min_region_sz)` for core filters: returns
/// (matched, regions after any split).
#[pyfunction]
#[pyo3(signature = (regions, index, filter, min_region_sz = 1, target_idx = 0))]
fn damos_filter_match<'py>(
    py: Python<'py>,
    regions: &Bound<'py, PyAny>,
    index: usize,
    filter: &Bound<'py, PyDict>,
    min_region_sz: u64,
    target_idx: usize,
) -> PyResult<(bool, Vec<Bound<'py, PyDict>>)> {
    let mut t = target_of(regions)?;
    let i = self::index(&t, index)?;
    let f = filter_of(filter)?;
    let m = filter_match(&mut t, target_idx, i, &f, min_region_sz.max(1));
    Ok((m, regions_list(py, &t)?))
}

/// `damos_set_filters_default_reject(s)`: (core_filters_default_reject,
/// ops_filters_default_reject) for the scheme's filters in order.
#[pyfunction]
fn damos_set_filters_default_reject(filters: Vec<Bound<'_, PyDict>>) -> PyResult<(bool, bool)> {
    let fs: Vec<DamosFilter> = filters.iter().map(filter_of).collect::<PyResult<_>>()?;
    let (core, ops): (Vec<_>, Vec<_>) = fs.into_iter().partition(|f| !reclaimlab_core::damon::damos::filter::damos_filter_for_ops(f.ty));
    Ok(set_default_reject(&core, &ops))
}

fn quota_weights(w: (u32, u32, u32)) -> DamosQuota {
    DamosQuota { weight_sz: w.0, weight_nr_accesses: w.1, weight_age: w.2, ..Default::default() }
}

/// `damon_hot_score(ctx, r, s)`; weights = (sz, nr_accesses, age).
#[pyfunction]
fn damon_hot_score(region: &Bound<'_, PyAny>, sample_interval: u64, aggr_interval: u64, weights: (u32, u32, u32)) -> PyResult<u32> {
    Ok(hot(&attrs(sample_interval, aggr_interval), &region_of(region)?, &quota_weights(weights)))
}

/// `damon_cold_score(ctx, r, s)`.
#[pyfunction]
fn damon_cold_score(region: &Bound<'_, PyAny>, sample_interval: u64, aggr_interval: u64, weights: (u32, u32, u32)) -> PyResult<u32> {
    Ok(cold(&attrs(sample_interval, aggr_interval), &region_of(region)?, &quota_weights(weights)))
}

/// The histogram walk of `damos_adjust_quota`: `histogram[score]` = bytes (100 entries).
#[pyfunction]
fn damos_min_score(histogram: Vec<u64>, max_score: u32, esz: u64) -> PyResult<u32> {
    let h: [u64; 100] = histogram.try_into().map_err(|_| invalid("the histogram has 100 entries (scores 0..99)"))?;
    if max_score > 99 {
        return Err(invalid("max_score is at most 99"));
    }
    Ok(min_score(&h, max_score, esz))
}

/// `damos_set_effective_quota(quota)`: returns (esz, esz_bp).
#[pyfunction]
#[pyo3(signature = (ms = 0, sz = 0, total_charged_sz = 0, total_charged_ns = 0, esz_bp = 0, goal_scores = Vec::new()))]
fn damos_set_effective_quota(ms: u64, sz: u64, total_charged_sz: u64, total_charged_ns: u64, esz_bp: u64, goal_scores: Vec<(u64, u64)>) -> (u64, u64) {
    use reclaimlab_core::damon::damos::goal::{DamosQuotaGoal, DamosQuotaGoalMetric};
    let goals =
        goal_scores.into_iter().map(|(current, target)| DamosQuotaGoal { current_value: current, ..DamosQuotaGoal::new(DamosQuotaGoalMetric::UserInput, target) }).collect();
    let mut q = DamosQuota { ms, sz, total_charged_sz, total_charged_ns, esz_bp, goals, ..Default::default() };
    set_esz(&mut q, &GoalInputs::default());
    (q.esz, q.esz_bp)
}

/// `damos_wmark_wait_us(s)` for FREE_MEM_RATE marks: returns (wait_us, activated).
#[pyfunction]
fn damos_wmark_wait_us(metric: u64, high: u64, mid: u64, low: u64, interval: u64, activated: bool) -> (u64, bool) {
    let mut w = DamosWatermarks { metric: DamosWmarkMetric::FreeMemRate, interval, high, mid, low, activated };
    let wait = wmark_wait(&mut w, metric);
    (wait, w.activated)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let d = PyModule::new(m.py(), "damon")?;
    for f in [
        wrap_pyfunction!(damon_split_region_at, &d)?,
        wrap_pyfunction!(damon_merge_two_regions, &d)?,
        wrap_pyfunction!(damon_merge_regions_of, &d)?,
        wrap_pyfunction!(damon_split_regions_of, &d)?,
        wrap_pyfunction!(kdamond_split_regions, &d)?,
        wrap_pyfunction!(kdamond_merge_regions, &d)?,
        wrap_pyfunction!(kdamond_reset_aggregated, &d)?,
        wrap_pyfunction!(damon_set_regions, &d)?,
        wrap_pyfunction!(damon_apply_min_nr_regions, &d)?,
        wrap_pyfunction!(damon_va_evenly_split_region, &d)?,
        wrap_pyfunction!(damon_va_three_regions, &d)?,
        wrap_pyfunction!(damon_moving_sum, &d)?,
        wrap_pyfunction!(damon_mvsum, &d)?,
        wrap_pyfunction!(damon_nr_accesses_mvsum, &d)?,
        wrap_pyfunction!(damon_nr_accesses_to_accesses_bp, &d)?,
        wrap_pyfunction!(damon_max_nr_accesses, &d)?,
        wrap_pyfunction!(damon_update_region_access_rate, &d)?,
        wrap_pyfunction!(damon_update_monitoring_result, &d)?,
        wrap_pyfunction!(damon_set_attrs, &d)?,
        wrap_pyfunction!(kdamond_tune_intervals, &d)?,
        wrap_pyfunction!(damon_feed_loop_next_input, &d)?,
        wrap_pyfunction!(damos_filter_match, &d)?,
        wrap_pyfunction!(damos_set_filters_default_reject, &d)?,
        wrap_pyfunction!(damon_hot_score, &d)?,
        wrap_pyfunction!(damon_cold_score, &d)?,
        wrap_pyfunction!(damos_min_score, &d)?,
        wrap_pyfunction!(damos_set_effective_quota, &d)?,
        wrap_pyfunction!(damos_wmark_wait_us, &d)?,
    ] {
        d.add_function(f)?;
    }
    register_parsec(&d)?;
    m.add_submodule(&d)?;
    Ok(())
}

/// One configuration: (time quota label, prioritization, [(key, value)] settings).
type ParsecConfig = (&'static str, bool, Vec<(&'static str, String)>);

/// The configurations of `damon-reclaim-parsec`'s table (the DAMON_RECLAIM RFC's), in
/// order.
#[pyfunction]
fn parsec_configs() -> Vec<ParsecConfig> {
    use reclaimlab_core::scenario::parsec::{parsec_config_settings, PARSEC_CONFIGS};
    PARSEC_CONFIGS.iter().map(|&(label, ms, prio)| (label, prio, parsec_config_settings(ms, prio).to_vec())).collect()
}

/// The 24 profile names of `damon-reclaim-parsec`.
#[pyfunction]
fn parsec_workloads() -> Vec<&'static str> {
    reclaimlab_core::scenario::parsec::PARSEC_PROFILES.iter().map(|p| p.0).collect()
}

pub fn register_parsec(d: &Bound<'_, PyModule>) -> PyResult<()> {
    d.add_function(wrap_pyfunction!(parsec_configs, d)?)?;
    d.add_function(wrap_pyfunction!(parsec_workloads, d)?)?;
    Ok(())
}
