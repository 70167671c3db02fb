//! DAMON_RECLAIM (`mm/damon/reclaim.c` + `modules-common.h`, spec F): the module's
//! parameters with their kernel defaults, the one paddr scheme it builds
//! (`damon_reclaim_new_scheme`), and its read-only counters.
//!
//! Parameters are the `damon_reclaim.<param>` config keys, in kernel units (µs, ms,
//! bytes, per-mille). `quota_weight_{sz,nr_accesses,age}` are not module parameters: the
//! module hard-codes the scheme's prioritization weights 0/0/1; the keys exist so seed
//! 004's "without prioritization" configurations (all weights 0) can be run.
//! `commit_inputs` is implicit (parameters are read once when the machine is built);
//! `kdamond_pid` is not modelled.

use super::attrs::DamonAttrs;
use super::damos::action::OpsKind;
use super::damos::filter::{DamosFilter, DamosFilterType};
use super::damos::goal::{DamosQuotaGoal, DamosQuotaGoalMetric};
use super::damos::quota::DamosQuota;
use super::damos::scheme::{Damos, DamosAccessPattern, DamosAction};
use super::damos::stat::DamosStat;
use super::damos::wmarks::{DamosWatermarks, DamosWmarkMetric};
use super::monitor::Kdamond;
use super::region::{DamonRegion, DamonTarget};
use reclaimlab_trace::PAGE_SIZE;

/// `/sys/module/damon_reclaim/parameters/*` (spec F). The module's defaults live in one
/// place, the `damon_reclaim.*` knob rows (config.rs): `SimConfig::default().damon_reclaim`
/// has them; `Default` here is all zero, what a config starts from before its rows apply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DamonReclaimParams {
    pub enabled: bool,
    /// µs without access before a region is paged out.
    pub min_age: u64,
    pub quota_ms: u64,
    pub quota_sz: u64,
    pub quota_reset_interval_ms: u64,
    pub quota_mem_pressure_us: u64,
    pub quota_autotune_feedback: u64,
    pub wmarks_interval: u64,
    pub wmarks_high: u64,
    pub wmarks_mid: u64,
    pub wmarks_low: u64,
    pub sample_interval: u64,
    pub aggr_interval: u64,
    pub min_nr_regions: u64,
    pub max_nr_regions: u64,
    pub monitor_region_start: u64,
    pub monitor_region_end: u64,
    pub skip_anon: bool,
    pub quota_weight_sz: u32,
    pub quota_weight_nr_accesses: u32,
    pub quota_weight_age: u32,
}

impl DamonReclaimParams {
    /// The monitoring attributes.
    pub fn attrs(&self) -> DamonAttrs {
        DamonAttrs {
            sample_interval: self.sample_interval,
            aggr_interval: self.aggr_interval,
            ops_update_interval: 0,
            min_nr_regions: self.min_nr_regions as u32,
            max_nr_regions: self.max_nr_regions as u32,
            aggr_samples: self.aggr_interval / self.sample_interval.max(1),
            ..DamonAttrs::default()
        }
    }

    /// Cross-parameter checks (`damon_set_attrs`, `damon_reclaim_apply_parameters`):
    /// an error names the key.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let key = |k: &str| format!("damon_reclaim.{k}");
        if !self.enabled {
            return Ok(());
        }
        for (k, v) in [("min_nr_regions", self.min_nr_regions), ("max_nr_regions", self.max_nr_regions)] {
            if v > u32::MAX as u64 {
                return Err((key(k), format!("{v} is above {}", u32::MAX)));
            }
        }
        if let Err(m) = super::attrs::damon_valid_attrs(&self.attrs()) {
            let k = if m.contains("nr_regions") { "min_nr_regions" } else { "sample_interval" };
            return Err((key(k), m));
        }
        if self.sample_interval == 0 {
            return Err((key("sample_interval"), "must be > 0".into()));
        }
        if !(self.wmarks_high >= self.wmarks_mid && self.wmarks_mid >= self.wmarks_low) {
            return Err((key("wmarks_mid"), format!("watermarks must satisfy high ≥ mid ≥ low (got {}/{}/{})", self.wmarks_high, self.wmarks_mid, self.wmarks_low)));
        }
        if self.monitor_region_start > self.monitor_region_end {
            return Err((key("monitor_region_start"), "is above monitor_region_end".into()));
        }
        if self.quota_reset_interval_ms == 0 && (self.quota_ms != 0 || self.quota_sz != 0) {
            return Err((key("quota_reset_interval_ms"), "must be > 0 with a quota".into()));
        }
        Ok(())
    }

    /// `damon_reclaim_new_scheme` (spec F): page out regions ≥ 1 page, never accessed,
    /// at least `min_age` old — under the quota, with the watermarks.
    pub fn new_scheme(&self) -> Damos {
        let pattern = DamosAccessPattern {
            min_sz_region: PAGE_SIZE,
            max_sz_region: u64::MAX,
            min_nr_accesses: 0,
            max_nr_accesses: 0,
            min_age_region: (self.min_age / self.aggr_interval.max(1)).min(u32::MAX as u64) as u32,
            max_age_region: u32::MAX,
        };
        let mut goals = Vec::new();
        if self.quota_mem_pressure_us != 0 {
            goals.push(DamosQuotaGoal::new(DamosQuotaGoalMetric::SomeMemPsiUs, self.quota_mem_pressure_us));
        }
        if self.quota_autotune_feedback != 0 {
            goals.push(DamosQuotaGoal { current_value: self.quota_autotune_feedback, ..DamosQuotaGoal::new(DamosQuotaGoalMetric::UserInput, 10000) });
        }
        let quota = DamosQuota {
            reset_interval: self.quota_reset_interval_ms,
            ms: self.quota_ms,
            sz: self.quota_sz,
            goals,
            weight_sz: self.quota_weight_sz,
            weight_nr_accesses: self.quota_weight_nr_accesses,
            weight_age: self.quota_weight_age,
            ..Default::default()
        };
        let wmarks = DamosWatermarks {
            metric: DamosWmarkMetric::FreeMemRate,
            interval: self.wmarks_interval,
            high: self.wmarks_high,
            mid: self.wmarks_mid,
            low: self.wmarks_low,
            activated: true,
        };
        let mut s = Damos::new(pattern, DamosAction::Pageout, 0, quota, wmarks);
        if self.skip_anon {
            s.add_filter(DamosFilter::new(DamosFilterType::Anon, true, false));
        }
        s
    }

    /// The parameters on the simulated clock when the kernel's wall clock runs `dilation`
    /// times faster than the simulated work (`sim.time_dilation`, a guest under TCG): every
    /// interval, the pageout age and the time quota shrink by that factor, so that they
    /// span as much of the workload's progress as in the guest. Microsecond parameters keep
    /// their precision; the two millisecond ones (`quota_reset_interval_ms`, `quota_ms`)
    /// are rounded to whole milliseconds, at least 1 when set (docs/damon.md).
    pub fn on_clock(&self, dilation: f64) -> Self {
        if dilation == 1.0 {
            return self.clone();
        }
        let shrink = |v: u64| if v == 0 { 0 } else { ((v as f64 / dilation).round() as u64).max(1) };
        DamonReclaimParams {
            min_age: shrink(self.min_age),
            quota_ms: shrink(self.quota_ms),
            quota_reset_interval_ms: shrink(self.quota_reset_interval_ms),
            quota_mem_pressure_us: shrink(self.quota_mem_pressure_us),
            wmarks_interval: shrink(self.wmarks_interval),
            sample_interval: shrink(self.sample_interval),
            aggr_interval: shrink(self.aggr_interval),
            ..self.clone()
        }
    }

    /// The kdamond DAMON_RECLAIM starts: one paddr target over
    /// `[monitor_region_start, monitor_region_end)`, or all of System RAM when both are 0.
    pub fn start(&self, system_ram: (u64, u64), seed: u64, now_ns: u64) -> Kdamond {
        let (s, e) = if self.monitor_region_start == 0 && self.monitor_region_end == 0 { system_ram } else { (self.monitor_region_start, self.monitor_region_end) };
        let t = DamonTarget { regions: vec![DamonRegion::new(s, e.max(s + PAGE_SIZE))] };
        Kdamond::new(self.attrs(), OpsKind::Paddr, vec![t], vec![self.new_scheme()], seed, now_ns)
    }
}

/// The module's read-only counters under their parameter names.
pub fn damon_reclaim_counters(st: &DamosStat) -> [(&'static str, u64); 5] {
    [
        ("nr_reclaim_tried_regions", st.nr_tried),
        ("bytes_reclaim_tried_regions", st.sz_tried),
        ("nr_reclaimed_regions", st.nr_applied),
        ("bytes_reclaimed_regions", st.sz_applied),
        ("nr_quota_exceeds", st.qt_exceeds),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// spec F: the scheme DAMON_RECLAIM builds from its defaults.
    #[test]
    fn default_scheme() {
        let p = crate::SimConfig::default().damon_reclaim;
        let s = p.new_scheme();
        assert_eq!(s.pattern.min_age_region, 1200);
        assert_eq!((s.pattern.min_nr_accesses, s.pattern.max_nr_accesses), (0, 0));
        assert_eq!(s.pattern.min_sz_region, 4096);
        assert_eq!(s.action, DamosAction::Pageout);
        assert_eq!((s.quota.ms, s.quota.sz, s.quota.reset_interval), (10, 128 << 20, 1000));
        assert_eq!((s.quota.weight_sz, s.quota.weight_nr_accesses, s.quota.weight_age), (0, 0, 1));
        assert_eq!((s.wmarks.interval, s.wmarks.high, s.wmarks.mid, s.wmarks.low), (5_000_000, 500, 400, 200));
        assert!(s.ops_filters.is_empty() && s.quota.goals.is_empty());
        let p = DamonReclaimParams { skip_anon: true, quota_autotune_feedback: 5000, ..p };
        let s = p.new_scheme();
        assert_eq!(s.ops_filters[0], DamosFilter::new(DamosFilterType::Anon, true, false));
        assert_eq!(s.quota.goals[0].metric, DamosQuotaGoalMetric::UserInput);
        assert_eq!((s.quota.goals[0].target_value, s.quota.goals[0].current_value), (10000, 5000));
    }

    /// `sim.time_dilation` shrinks every time parameter, nothing else.
    #[test]
    fn dilated_clock_scales_times() {
        let p = DamonReclaimParams { min_age: 2_000_000, quota_ms: 10, ..crate::SimConfig::default().damon_reclaim };
        let d = p.on_clock(20.0);
        assert_eq!((d.min_age, d.sample_interval, d.aggr_interval, d.wmarks_interval), (100_000, 250, 5_000, 250_000));
        assert_eq!((d.quota_ms, d.quota_reset_interval_ms), (1, 50));
        assert_eq!((d.quota_sz, d.wmarks_high, d.max_nr_regions), (p.quota_sz, p.wmarks_high, p.max_nr_regions));
        // The scheme's age threshold in aggregation intervals is unchanged.
        assert_eq!(d.new_scheme().pattern.min_age_region, p.new_scheme().pattern.min_age_region);
        assert_eq!(p.on_clock(1.0), p);
    }

    /// Bad parameters are named (validate, then commit).
    #[test]
    fn bad_parameters_name_the_key() {
        let mut c = crate::config::SimConfig::default();
        c.set("damon_reclaim.wmarks_mid", "600").unwrap();
        assert!(c.validate().is_ok(), "checked only when enabled");
        c.set("damon_reclaim.enabled", "Y").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("damon_reclaim.wmarks_mid") && e.contains("high"), "{e}");
        let mut c = crate::config::SimConfig::default();
        c.set("damon_reclaim.enabled", "Y").unwrap();
        c.set("damon_reclaim.min_nr_regions", "2").unwrap();
        assert!(c.validate().unwrap_err().to_string().contains("damon_reclaim.min_nr_regions"));
        c.set("damon_reclaim.min_nr_regions", "10").unwrap();
        c.set("damon_reclaim.aggr_interval", "1000").unwrap();
        assert!(c.validate().unwrap_err().to_string().contains("damon_reclaim.sample_interval"));
        assert!(c.set("damon_reclaim.enabled", "maybe").unwrap_err().to_string().contains("expected Y or N"));
        assert!(c.set("damon_reclaim.quota_ms", "-1").is_err());
        assert_eq!(c.get("damon_reclaim.quota_sz").unwrap(), "134217728");
    }
}
