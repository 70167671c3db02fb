//! DAMOS schemes (spec E.1, E.2, E.6): the access pattern, the scheme, and one apply
//! round — `kdamond_apply_schemes` → `damos_adjust_quota` (windows, histogram,
//! `min_score`) → per region × scheme `damon_do_apply_schemes`: quota check, the resume
//! point (`damos_skip_charged_region`), `damos_valid_target`, `damos_apply_scheme`
//! (quota cut by splitting, core filters, the action, charging by tried bytes, age
//! reset, stats).

use super::super::attrs::DamonAttrs;
use super::super::region::{align_down, damon_split_region_at, DamonRegion, DamonTarget};
use super::filter::{damos_filter_for_ops, damos_filter_match, damos_set_filters_default_reject, DamosFilter};
use super::goal::GoalInputs;
use super::prio::{damon_scheme_score, damos_min_score, DAMOS_MAX_SCORE};
use super::quota::{damos_charge_window, DamosQuota};
use super::stat::{damos_update_stat, DamosStat};
use super::wmarks::DamosWatermarks;

/// `enum damos_action` (the ones the model implements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DamosAction {
    /// vaddr MADV_COLD: deactivate.
    Cold,
    /// Reclaim through `reclaim_pages` → `shrink_folio_list(ignore_references)`.
    Pageout,
    /// `folio_mark_accessed`.
    LruPrio,
    /// `folio_deactivate`.
    LruDeprio,
    /// Count only.
    Stat,
}

impl DamosAction {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "cold" => Self::Cold,
            "pageout" => Self::Pageout,
            "lru_prio" => Self::LruPrio,
            "lru_deprio" => Self::LruDeprio,
            "stat" => Self::Stat,
            _ => return None,
        })
    }
}

/// `struct damos_access_pattern`: inclusive ranges; nr_accesses in samples per window,
/// age in aggregation intervals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DamosAccessPattern {
    pub min_sz_region: u64,
    pub max_sz_region: u64,
    pub min_nr_accesses: u32,
    pub max_nr_accesses: u32,
    pub min_age_region: u32,
    pub max_age_region: u32,
}

impl Default for DamosAccessPattern {
    fn default() -> Self {
        DamosAccessPattern { min_sz_region: 0, max_sz_region: u64::MAX, min_nr_accesses: 0, max_nr_accesses: u32::MAX, min_age_region: 0, max_age_region: u32::MAX }
    }
}

/// `struct damos`.
#[derive(Clone, Debug)]
pub struct Damos {
    pub pattern: DamosAccessPattern,
    pub action: DamosAction,
    /// 0 = the aggregation interval.
    pub apply_interval_us: u64,
    pub quota: DamosQuota,
    pub wmarks: DamosWatermarks,
    pub core_filters: Vec<DamosFilter>,
    pub ops_filters: Vec<DamosFilter>,
    pub core_filters_default_reject: bool,
    pub ops_filters_default_reject: bool,
    pub core_filters_allowed: bool,
    pub stat: DamosStat,
    pub next_apply_sis: u64,
    /// The last folio (pfn) acted on, so one spanning regions is not acted on twice.
    pub last_applied: Option<u64>,
}

impl Damos {
    /// `damon_new_scheme(pattern, action, apply_interval_us, quota, wmarks, nid)`.
    pub fn new(pattern: DamosAccessPattern, action: DamosAction, apply_interval_us: u64, quota: DamosQuota, wmarks: DamosWatermarks) -> Self {
        Damos {
            pattern,
            action,
            apply_interval_us,
            quota,
            wmarks,
            core_filters: Vec::new(),
            ops_filters: Vec::new(),
            core_filters_default_reject: false,
            ops_filters_default_reject: false,
            core_filters_allowed: false,
            stat: DamosStat::default(),
            next_apply_sis: 0,
            last_applied: None,
        }
    }

    /// `damos_add_filter`: to the core or ops list by type; defaults recomputed.
    pub fn add_filter(&mut self, f: DamosFilter) {
        if damos_filter_for_ops(f.ty) {
            self.ops_filters.push(f);
        } else {
            self.core_filters.push(f);
        }
        let (c, o) = damos_set_filters_default_reject(&self.core_filters, &self.ops_filters);
        self.core_filters_default_reject = c;
        self.ops_filters_default_reject = o;
    }
}

/// `__damos_valid_target`: the pattern, with nr_accesses from the moving sum.
pub fn __damos_valid_target(r: &DamonRegion, p: &DamosAccessPattern) -> bool {
    let sz = r.size();
    let nr = r.nr_accesses_bp / 10000;
    p.min_sz_region <= sz && sz <= p.max_sz_region && p.min_nr_accesses <= nr && nr <= p.max_nr_accesses && p.min_age_region <= r.age && r.age <= p.max_age_region
}

/// The operations set's side of applying a scheme (`ops.apply_scheme`).
pub trait DamosOps {
    /// Apply `s.action` to `[start, end)` of target `target`. Returns (bytes applied,
    /// bytes passing the ops filters, simulated ns spent).
    fn apply_scheme(&mut self, target: usize, start: u64, end: u64, s: &mut Damos) -> (u64, u64, u64);
}

/// What one apply round needs from the context.
pub struct ApplyCtx<'a> {
    pub attrs: &'a DamonAttrs,
    pub passed_sample_intervals: u64,
    pub min_region_sz: u64,
    pub now_ns: u64,
    pub goal_inputs: GoalInputs,
    /// `sim.kdamond_slowdown`: what an action's ns count for the time quota's throughput.
    pub charge_scale: f64,
}

/// `damos_adjust_quota` (E.3, E.5): charge window, then the score histogram and
/// `min_score`.
pub fn damos_adjust_quota(c: &ApplyCtx, targets: &[DamonTarget], s: &mut Damos) {
    let (_, exceeded) = damos_charge_window(&mut s.quota, c.now_ns, &c.goal_inputs);
    if exceeded {
        s.stat.qt_exceeds += 1;
    }
    if !s.quota.is_set() {
        return;
    }
    let mut histogram = [0u64; DAMOS_MAX_SCORE as usize + 1];
    let mut max_score = 0;
    for t in targets {
        for r in &t.regions {
            if !__damos_valid_target(r, &s.pattern) {
                continue;
            }
            let score = damon_scheme_score(c.attrs, r, s.action, &s.quota);
            histogram[score as usize] += r.size();
            max_score = max_score.max(score);
        }
    }
    s.quota.min_score = damos_min_score(&histogram, max_score, s.quota.esz);
}

/// `damos_skip_charged_region`: skip up to the resume point of the last full window.
/// May split region `*i` and move `*i` to the right piece. Returns true to skip.
fn damos_skip_charged_region(t: &mut DamonTarget, ti: usize, i: &mut usize, s: &mut Damos, min_region_sz: u64) -> bool {
    let q = &mut s.quota;
    let Some(from) = q.charge_target_from else { return false };
    if ti != from {
        return true;
    }
    if *i == t.regions.len() - 1 {
        q.charge_target_from = None;
        q.charge_addr_from = 0;
        return true;
    }
    let r = t.regions[*i];
    if q.charge_addr_from != 0 && r.end <= q.charge_addr_from {
        return true;
    }
    if q.charge_addr_from != 0 && r.start < q.charge_addr_from {
        let mut sz_to_skip = align_down(q.charge_addr_from - r.start, min_region_sz);
        if sz_to_skip == 0 {
            if r.size() <= min_region_sz {
                return true;
            }
            sz_to_skip = min_region_sz;
        }
        damon_split_region_at(t, *i, sz_to_skip);
        *i += 1;
    }
    q.charge_target_from = None;
    q.charge_addr_from = 0;
    false
}

/// `damos_valid_target`: the pattern, then — with a quota and scores — `score >=
/// min_score`.
fn damos_valid_target(c: &ApplyCtx, r: &DamonRegion, s: &Damos) -> bool {
    if !__damos_valid_target(r, &s.pattern) || s.quota.esz == 0 {
        return __damos_valid_target(r, &s.pattern);
    }
    damon_scheme_score(c.attrs, r, s.action, &s.quota) >= s.quota.min_score
}

/// `damos_filter_out`: the core filters on region `i`.
fn damos_filter_out(t: &mut DamonTarget, ti: usize, i: usize, s: &mut Damos, min_region_sz: u64) -> bool {
    s.core_filters_allowed = false;
    for k in 0..s.core_filters.len() {
        let f = s.core_filters[k];
        if damos_filter_match(t, ti, i, &f, min_region_sz) {
            if f.allow {
                s.core_filters_allowed = true;
            }
            return !f.allow;
        }
    }
    s.core_filters_default_reject
}

/// `damos_apply_scheme` (E.6). Returns the simulated ns the action took.
fn damos_apply_scheme<O: DamosOps>(c: &ApplyCtx, t: &mut DamonTarget, ti: usize, i: usize, s: &mut Damos, ops: &mut O) -> u64 {
    let mut sz = t.regions[i].size();
    let q = &s.quota;
    if q.esz != 0 && q.charged_sz + sz > q.esz {
        sz = align_down(q.esz - q.charged_sz, c.min_region_sz);
        if sz == 0 {
            damos_update_stat(&mut s.stat, sz, 0, 0);
            return 0;
        }
        damon_split_region_at(t, i, sz);
    }
    if damos_filter_out(t, ti, i, s, c.min_region_sz) {
        // An address filter may have split the region too.
        return 0;
    }
    let r = t.regions[i];
    let (sz_applied, sz_passed, ns) = ops.apply_scheme(ti, r.start, r.end, s);
    let q = &mut s.quota;
    q.total_charged_ns += if c.charge_scale == 1.0 { ns } else { (ns as f64 * c.charge_scale).round() as u64 };
    q.charged_sz += sz;
    if q.esz != 0 && q.charged_sz >= q.esz {
        q.charge_target_from = Some(ti);
        q.charge_addr_from = r.end + 1;
    }
    if s.action != DamosAction::Stat {
        t.regions[i].age = 0;
    }
    damos_update_stat(&mut s.stat, sz, sz_applied, sz_passed);
    ns
}

/// `kdamond_apply_schemes` (E.2): every scheme due and active adjusts its quota, then
/// each region of each target (address order) × each such scheme (E.6); due schemes get
/// their next apply time. Returns the simulated ns the actions took.
pub fn kdamond_apply_schemes<O: DamosOps>(c: &ApplyCtx, targets: &mut [DamonTarget], schemes: &mut [Damos], ops: &mut O) -> u64 {
    let due = |s: &Damos| c.passed_sample_intervals >= s.next_apply_sis;
    let mut any = false;
    for s in schemes.iter_mut() {
        if !due(s) || !s.wmarks.activated {
            continue;
        }
        any = true;
        damos_adjust_quota(c, targets, s);
    }
    let mut ns = 0;
    if any {
        for (ti, t) in targets.iter_mut().enumerate() {
            let mut i = 0;
            while i < t.regions.len() {
                // Splits only insert at or after `i`, so the next original region is
                // at `i + 1 + growth` (the kernel's `damon_for_each_region_safe`).
                let len_before = t.regions.len();
                let mut cur = i;
                for s in schemes.iter_mut() {
                    if !due(s) || !s.wmarks.activated {
                        continue;
                    }
                    let q = &s.quota;
                    if q.esz != 0 && q.charged_sz >= q.esz {
                        continue;
                    }
                    if damos_skip_charged_region(t, ti, &mut cur, s, c.min_region_sz) {
                        continue;
                    }
                    if !damos_valid_target(c, &t.regions[cur], s) {
                        continue;
                    }
                    ns += damos_apply_scheme(c, t, ti, cur, s, ops);
                }
                i += 1 + (t.regions.len() - len_before);
            }
        }
    }
    let sample = c.attrs.sample_interval.max(1);
    for s in schemes.iter_mut() {
        if !due(s) {
            continue;
        }
        let interval = if s.apply_interval_us != 0 { s.apply_interval_us } else { c.attrs.aggr_interval };
        s.next_apply_sis = c.passed_sample_intervals + interval / sample;
        s.last_applied = None;
    }
    ns
}
