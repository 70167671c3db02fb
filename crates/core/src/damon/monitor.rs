//! kdamond: one DAMON context running on the simulated clock (`kdamond_fn`, spec D.3).
//!
//! The engine calls [`Kdamond::step`] whenever the workload clock passes
//! `next_ns`. One step ends a sample interval and starts the next, in the kernel's
//! order: check accesses → (aggregation boundary) merge → apply schemes → reset and
//! split → ops update → watermarks (`kdamond_wait_activation`: while every scheme is
//! inactive, nothing is sampled and kdamond sleeps the watermark interval) → prepare.
//!
//! DAMON's CPU time is kdamond's own (it is a kernel thread on another CPU): per sampled
//! region `2 × cost.rmap_ns` (mkold and the young check each walk the rmap), per region
//! per aggregation `cost.damon_region_ns` (merge, split, scheme matching), plus what
//! the actions cost ([`super::damos::action`]). It never runs on the workload's clock
//! and depends on the number of regions, not on memory size. The actions' time delays
//! kdamond's own next sample, as in `kdamond_fn`'s single loop, and lies outside the
//! sampling window: the next `prepare_access_checks` comes after it, so accesses while
//! kdamond works are not seen.

use super::attrs::{kdamond_tune_intervals, DamonAttrs};
use super::damos::action::{damos_apply_folios, OpsKind};
use super::damos::goal::GoalInputs;
use super::damos::scheme::{kdamond_apply_schemes, ApplyCtx, Damos, DamosOps};
use super::damos::wmarks::{damos_wmark_wait_us, free_mem_rate, DamosWmarkMetric};
use super::ops_paddr::{damon_pa_check_accesses, damon_pa_folios, damon_pa_prepare_access_checks};
use super::ops_vaddr::{damon_va_check_accesses, damon_va_folios, damon_va_prepare_access_checks, damon_va_update, damon_va_vmas};
use super::region::{damon_apply_min_nr_regions, kdamond_merge_regions, kdamond_reset_aggregated, kdamond_split_regions, DamonTarget};
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;
use reclaimlab_trace::{Rng, PAGE_SIZE};

/// `struct damon_ctx` plus kdamond's place on the simulated clock.
pub struct Kdamond {
    pub attrs: DamonAttrs,
    pub ops: OpsKind,
    pub targets: Vec<DamonTarget>,
    pub schemes: Vec<Damos>,
    pub min_region_sz: u64,
    pub passed_sample_intervals: u64,
    pub next_aggregation_sis: u64,
    pub next_ops_update_sis: u64,
    pub next_intervals_tune_sis: u64,
    /// `max_region_sz` from `damon_apply_min_nr_regions` (the merge size limit).
    pub sz_limit: u64,
    last_nr_regions: usize,
    split_offset: usize,
    rng: Rng,
    /// Simulated time of the next step (ns).
    pub next_ns: u64,
    /// A sample interval is in flight (prepared, not yet checked).
    sampling: bool,
    /// The iteration's work ends at `next_ns`; then `prepare_access_checks`.
    preparing: bool,
    /// kdamond's simulated CPU time (ns), and its parts.
    pub cpu_ns: u64,
    pub sample_cpu_ns: u64,
    pub aggr_cpu_ns: u64,
    pub action_cpu_ns: u64,
    pub nr_samples: u64,
    pub nr_aggregations: u64,
    pub nr_region_samples: u64,
    /// Running sum of nr_regions at each aggregation (for the average).
    pub sum_nr_regions: u64,
    /// Watermark checks that kept every scheme off because the metric was below the low
    /// mark / above the high mark (why a run may have sampled nothing).
    pub nr_wmarks_below_low: u64,
    pub nr_wmarks_above_high: u64,
    folios: Vec<Pfn>,
    buf: Vec<Pfn>,
}

/// The operations set bound to the machine for one apply round.
struct Ops<'a, P: ReclaimPolicy> {
    mm: &'a mut Mm,
    p: &'a mut P,
    kind: OpsKind,
    /// Reused buffers: the region's folios, and the pageout list.
    folios: &'a mut Vec<Pfn>,
    buf: &'a mut Vec<Pfn>,
}

impl<P: ReclaimPolicy> DamosOps for Ops<'_, P> {
    fn apply_scheme(&mut self, _target: usize, start: u64, end: u64, s: &mut Damos) -> (u64, u64, u64) {
        self.folios.clear();
        match self.kind {
            OpsKind::Paddr => self.folios.extend(damon_pa_folios(self.mm, start, end)),
            OpsKind::Vaddr => self.folios.extend(damon_va_folios(self.mm, start, end)),
        }
        damos_apply_folios(self.mm, self.p, self.kind, s, self.folios.iter().copied(), self.buf, end - start)
    }
}

impl Kdamond {
    /// A context over `targets` (regions already set), started at `now_ns` —
    /// `kdamond_fn`'s initialisation.
    pub fn new(attrs: DamonAttrs, ops: OpsKind, mut targets: Vec<DamonTarget>, mut schemes: Vec<Damos>, seed: u64, now_ns: u64) -> Self {
        let sample = attrs.sample_interval.max(1);
        let min_region_sz = PAGE_SIZE;
        let sz_limit = damon_apply_min_nr_regions(&mut targets, attrs.min_nr_regions, min_region_sz);
        let next_aggregation_sis = attrs.aggr_interval / sample;
        for s in schemes.iter_mut() {
            let iv = if s.apply_interval_us != 0 { s.apply_interval_us } else { attrs.aggr_interval };
            s.next_apply_sis = iv / sample;
        }
        Kdamond {
            attrs,
            ops,
            targets,
            schemes,
            min_region_sz,
            passed_sample_intervals: 0,
            next_aggregation_sis,
            next_ops_update_sis: if attrs.ops_update_interval != 0 { attrs.ops_update_interval / sample } else { u64::MAX },
            next_intervals_tune_sis: next_aggregation_sis * attrs.intervals_goal.aggrs,
            sz_limit,
            last_nr_regions: 0,
            split_offset: 0,
            rng: Rng::new(seed ^ 0xDA30_0000_0000_0001),
            next_ns: now_ns,
            sampling: false,
            preparing: false,
            cpu_ns: 0,
            sample_cpu_ns: 0,
            aggr_cpu_ns: 0,
            action_cpu_ns: 0,
            nr_samples: 0,
            nr_aggregations: 0,
            nr_region_samples: 0,
            sum_nr_regions: 0,
            nr_wmarks_below_low: 0,
            nr_wmarks_above_high: 0,
            folios: Vec::new(),
            buf: Vec::new(),
        }
    }

    pub fn nr_regions(&self) -> usize {
        self.targets.iter().map(|t| t.nr_regions()).sum()
    }

    /// One kdamond iteration at `now_ns` (== `next_ns`); sets the next wake time.
    pub fn step<P: ReclaimPolicy>(&mut self, mm: &mut Mm, p: &mut P, now_ns: u64, psi_some_total_us: u64) {
        // kdamond is one thread: the schemes' actions of this iteration run before its
        // next sleep, so they delay the next sample (`kdamond_fn`, mm/damon/core.c v6.12:
        // prepare → usleep → check → merge → apply → split). Sampling's own time is not
        // added (the model's per-region cost is an upper bound; see docs/damon.md).
        if self.preparing {
            // The loop's top once the work is done: the sampling window is the usleep.
            self.preparing = false;
            self.prepare_access_checks(mm);
            self.next_ns = now_ns + self.attrs.sample_interval.max(1) * 1000;
            return;
        }
        let action_before = self.action_cpu_ns;
        let rmap2 = 2 * mm.cfg.cost.rmap_ns;
        let region_ns = mm.cfg.cost.damon_region_ns;
        if self.sampling {
            self.passed_sample_intervals += 1;
            let len_window = self.attrs.max_nr_accesses().max(1) as u32;
            let mut max_nr = 0;
            for t in self.targets.iter_mut() {
                max_nr = max_nr.max(match self.ops {
                    OpsKind::Paddr => damon_pa_check_accesses(mm, t, len_window),
                    OpsKind::Vaddr => damon_va_check_accesses(mm, t, len_window),
                });
            }
            let n = self.nr_regions() as u64;
            self.nr_samples += 1;
            self.nr_region_samples += n;
            self.sample_cpu_ns += n * rmap2;
            let aggregating = self.passed_sample_intervals >= self.next_aggregation_sis;
            if aggregating {
                let max_thres = (self.attrs.aggr_interval / self.attrs.sample_interval.max(1)) as u32;
                kdamond_merge_regions(&mut self.targets, max_nr / 10, self.sz_limit, self.attrs.max_nr_regions, max_thres);
                self.sz_limit = damon_apply_min_nr_regions(&mut self.targets, self.attrs.min_nr_regions, self.min_region_sz);
            }
            if !self.schemes.is_empty() {
                let c = ApplyCtx {
                    attrs: &self.attrs,
                    passed_sample_intervals: self.passed_sample_intervals,
                    min_region_sz: self.min_region_sz,
                    now_ns,
                    goal_inputs: GoalInputs { psi_some_total_us, node_free_pages: mm.total_free_pages(), node_total_pages: mm.nr_frames as u64 },
                    charge_scale: mm.cfg.kdamond_slowdown,
                };
                let due = self.schemes.iter().any(|s| self.passed_sample_intervals >= s.next_apply_sis && s.wmarks.activated);
                let mut ops = Ops { mm, p, kind: self.ops, folios: &mut self.folios, buf: &mut self.buf };
                let ns = kdamond_apply_schemes(&c, &mut self.targets, &mut self.schemes, &mut ops);
                self.action_cpu_ns += ns;
                if due {
                    self.aggr_cpu_ns += self.nr_regions() as u64 * region_ns;
                }
            }
            if aggregating {
                let sample = self.attrs.sample_interval.max(1);
                if self.attrs.intervals_goal.aggrs != 0 && self.passed_sample_intervals >= self.next_intervals_tune_sis {
                    self.next_intervals_tune_sis += self.attrs.aggr_samples * self.attrs.intervals_goal.aggrs;
                    self.attrs = kdamond_tune_intervals(&self.attrs, &self.targets);
                }
                self.next_aggregation_sis += self.attrs.aggr_interval / sample;
                let n = self.nr_regions() as u64;
                self.nr_aggregations += 1;
                self.sum_nr_regions += n;
                self.aggr_cpu_ns += n * region_ns;
                kdamond_reset_aggregated(&mut self.targets);
                kdamond_split_regions(&mut self.targets, self.attrs.max_nr_regions, self.min_region_sz, &mut self.last_nr_regions, &mut self.split_offset, &mut self.rng);
            }
            if self.passed_sample_intervals >= self.next_ops_update_sis {
                self.next_ops_update_sis += self.attrs.ops_update_interval / self.attrs.sample_interval.max(1);
                if self.ops == OpsKind::Vaddr {
                    let vmas = damon_va_vmas(mm);
                    for t in self.targets.iter_mut() {
                        damon_va_update(t, &vmas, self.min_region_sz);
                    }
                }
                self.sz_limit = damon_apply_min_nr_regions(&mut self.targets, self.attrs.min_nr_regions, self.min_region_sz);
            }
        }
        self.cpu_ns = self.sample_cpu_ns + self.aggr_cpu_ns + self.action_cpu_ns;
        // kdamond_wait_activation (E.8)
        let metric = free_mem_rate(mm.total_free_pages(), mm.nr_frames as u64);
        let mut min_wait = 0u64;
        for s in self.schemes.iter_mut() {
            let m = if s.wmarks.metric == DamosWmarkMetric::None { 0 } else { metric };
            let w = damos_wmark_wait_us(&mut s.wmarks, m);
            if min_wait == 0 || w < min_wait {
                min_wait = w;
            }
        }
        let busy_ns = self.action_cpu_ns - action_before;
        if min_wait != 0 {
            if let Some(s) = self.schemes.iter().find(|s| s.wmarks.metric != DamosWmarkMetric::None) {
                if metric < s.wmarks.low {
                    self.nr_wmarks_below_low += 1;
                } else if metric > s.wmarks.high {
                    self.nr_wmarks_above_high += 1;
                }
            }
            self.sampling = false;
            self.next_ns = now_ns + busy_ns + min_wait * 1000;
            return;
        }
        if busy_ns > 0 {
            self.preparing = true;
            self.next_ns = now_ns + busy_ns;
            return;
        }
        self.prepare_access_checks(mm);
        self.next_ns = now_ns + self.attrs.sample_interval.max(1) * 1000;
    }

    /// `ops.prepare_access_checks`: a new sampling address per region, made old.
    fn prepare_access_checks(&mut self, mm: &mut Mm) {
        for t in self.targets.iter_mut() {
            match self.ops {
                OpsKind::Paddr => damon_pa_prepare_access_checks(mm, t, &mut self.rng),
                OpsKind::Vaddr => damon_va_prepare_access_checks(mm, t, &mut self.rng),
            }
        }
        self.sampling = true;
    }
}

/// What a run with kdamond reports: `damon_cpu_ns` and `damon_cpu_pct` (of one CPU over
/// the runtime), its parts, the average number of regions, the watermark checks that
/// kept the schemes off (free memory below `wmarks_low` / above `wmarks_high`), and
/// DAMON_RECLAIM's counters under their parameter names.
pub fn damon_metrics(d: &Kdamond, runtime_ns: u64) -> Vec<(String, f64)> {
    let pct = |ns: u64| if runtime_ns > 0 { ns as f64 * 100.0 / runtime_ns as f64 } else { 0.0 };
    let mut v: Vec<(String, f64)> = vec![
        ("damon_cpu_ns".into(), d.cpu_ns as f64),
        ("damon_cpu_pct".into(), pct(d.cpu_ns)),
        ("damon_monitor_cpu_pct".into(), pct(d.sample_cpu_ns + d.aggr_cpu_ns)),
        ("damon_action_cpu_pct".into(), pct(d.action_cpu_ns)),
        ("damon_nr_regions_avg".into(), if d.nr_aggregations > 0 { d.sum_nr_regions as f64 / d.nr_aggregations as f64 } else { d.nr_regions() as f64 }),
        ("damon_nr_samples".into(), d.nr_samples as f64),
        ("damon_wmarks_below_low".into(), d.nr_wmarks_below_low as f64),
        ("damon_wmarks_above_high".into(), d.nr_wmarks_above_high as f64),
    ];
    if let Some(s) = d.schemes.first() {
        for (k, x) in super::reclaim::damon_reclaim_counters(&s.stat) {
            v.push((k.into(), x as f64));
        }
        let q = &s.quota;
        if q.nr_windows > 0 {
            v.push(("damon_quota_esz_bytes_avg".into(), q.sum_esz as f64 / q.nr_windows as f64));
            v.push(("damon_quota_esz_bytes_last".into(), q.esz as f64));
        }
        if q.total_charged_ns > 0 {
            v.push(("damon_quota_bytes_per_ms".into(), q.total_charged_sz as f64 * 1e6 / q.total_charged_ns as f64));
        }
    }
    v
}
