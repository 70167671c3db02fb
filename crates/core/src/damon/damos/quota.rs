//! DAMOS quotas (spec E.3): charge windows, the effective size quota from the time
//! quota's measured throughput and the goals' feedback loop, and the resume point.

use super::goal::{damon_feed_loop_next_input, damos_quota_score, DamosQuotaGoal, GoalInputs};

/// `struct damos_quota`. Times are simulated nanoseconds (the kernel's jiffies / ktime).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DamosQuota {
    /// `reset_interval` (ms): the charge window.
    pub reset_interval: u64,
    /// `ms`: time quota per window.
    pub ms: u64,
    /// `sz`: size quota per window (bytes).
    pub sz: u64,
    pub goals: Vec<DamosQuotaGoal>,
    pub weight_sz: u32,
    pub weight_nr_accesses: u32,
    pub weight_age: u32,
    // private
    pub esz: u64,
    pub esz_bp: u64,
    pub total_charged_sz: u64,
    pub total_charged_ns: u64,
    pub charged_sz: u64,
    /// Start of the current charge window (None before the first).
    pub charged_from: Option<u64>,
    /// Resume point: target index and address after the last charged region.
    pub charge_target_from: Option<usize>,
    pub charge_addr_from: u64,
    pub min_score: u32,
    /// Charge windows begun and the sum of their `esz` (what a run reports as
    /// `damon_quota_esz_bytes_avg`; not kernel state).
    pub nr_windows: u64,
    pub sum_esz: u64,
}

impl DamosQuota {
    /// A quota is set iff `ms || sz || goals`.
    pub fn is_set(&self) -> bool {
        self.ms != 0 || self.sz != 0 || !self.goals.is_empty()
    }
}

/// `damos_set_effective_quota` (E.3). The throughput is the scheme's lifetime one
/// (`total_charged_sz / total_charged_ns`) in every version: RFC v3, 6.12, mainline.
pub fn damos_set_effective_quota(q: &mut DamosQuota, inp: &GoalInputs) {
    if q.ms == 0 && q.goals.is_empty() {
        q.esz = q.sz;
        return;
    }
    let mut esz = u64::MAX;
    if !q.goals.is_empty() {
        let score = damos_quota_score(&mut q.goals, inp);
        q.esz_bp = damon_feed_loop_next_input(q.esz_bp.max(10000), score);
        esz = q.esz_bp / 10000;
    }
    if q.ms != 0 {
        // bytes per ms
        let throughput = if q.total_charged_ns != 0 { (q.total_charged_sz as u128 * 1_000_000 / q.total_charged_ns as u128) as u64 } else { reclaimlab_trace::PAGE_SIZE * 1024 };
        esz = esz.min(throughput.saturating_mul(q.ms));
    }
    if q.sz != 0 && q.sz < esz {
        esz = q.sz;
    }
    q.esz = esz;
}

/// The charge-window half of `damos_adjust_quota` (E.3): the first window starts at the
/// first call; a window that ended full counts a `qt_exceeds`. Returns whether a new
/// window started and whether the ending one was exceeded.
pub fn damos_charge_window(q: &mut DamosQuota, now_ns: u64, inp: &GoalInputs) -> (bool, bool) {
    if !q.is_set() {
        return (false, false);
    }
    // The first window gets its size at once, as RFC v3 (a new window on the first call)
    // and mainline since "mm/damon/core: set effective quota on first charge window"
    // (Sep 2025) do. 6.12.117 has only the preceding "set quota->charged_from to jiffies
    // at first charge window" backport: its first window keeps esz 0, no quota.
    if q.total_charged_sz == 0 && q.charged_from.is_none() {
        q.charged_from = Some(now_ns);
        damos_set_effective_quota(q, inp);
        q.nr_windows += 1;
        q.sum_esz = q.sum_esz.saturating_add(q.esz);
    }
    let from = q.charged_from.unwrap();
    if now_ns >= from + q.reset_interval * 1_000_000 {
        let exceeded = q.esz != 0 && q.charged_sz >= q.esz;
        q.total_charged_sz += q.charged_sz;
        q.charged_from = Some(now_ns);
        q.charged_sz = 0;
        damos_set_effective_quota(q, inp);
        q.nr_windows += 1;
        q.sum_esz = q.sum_esz.saturating_add(q.esz);
        return (true, exceeded);
    }
    (false, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::damon::damos::goal::DamosQuotaGoalMetric;

    /// E.3: the first window assumes 4 MiB/ms; then the measured throughput × ms, capped
    /// by sz.
    #[test]
    fn effective_quota_from_time_and_size() {
        let inp = GoalInputs::default();
        let mut q = DamosQuota { ms: 10, sz: 128 << 20, reset_interval: 1000, ..Default::default() };
        damos_set_effective_quota(&mut q, &inp);
        assert_eq!(q.esz, 40 << 20); // 4 MiB/ms × 10 ms < 128 MiB
                                     // 8 MiB charged in 4 ms → 2 MiB/ms × 10 ms = 20 MiB.
        q.total_charged_sz = 8 << 20;
        q.total_charged_ns = 4_000_000;
        damos_set_effective_quota(&mut q, &inp);
        assert_eq!(q.esz, 20 << 20);
        // Size quota below: it wins.
        q.sz = 1 << 20;
        damos_set_effective_quota(&mut q, &inp);
        assert_eq!(q.esz, 1 << 20);
        // No time quota, no goals: esz = sz (0 = unlimited).
        let mut q = DamosQuota { sz: 0, ..Default::default() };
        damos_set_effective_quota(&mut q, &inp);
        assert_eq!(q.esz, 0);
    }

    /// E.4: a goal-only quota starts at 1 byte (esz_bp floored to 10000) and doubles
    /// per window while the score is 0.
    #[test]
    fn goal_quota_grows_from_one_byte() {
        let inp = GoalInputs::default();
        let mut q = DamosQuota {
            reset_interval: 1000,
            goals: vec![DamosQuotaGoal { current_value: 0, ..DamosQuotaGoal::new(DamosQuotaGoalMetric::UserInput, 10000) }],
            ..Default::default()
        };
        let mut sizes = vec![];
        for _ in 0..4 {
            damos_set_effective_quota(&mut q, &inp);
            sizes.push(q.esz);
        }
        assert_eq!(sizes, vec![2, 4, 8, 16]);
    }

    #[test]
    fn windows_count_exceeds() {
        let inp = GoalInputs::default();
        let mut q = DamosQuota { sz: 1 << 20, reset_interval: 1000, ..Default::default() };
        assert_eq!(damos_charge_window(&mut q, 5_000_000, &inp), (false, false));
        assert_eq!(q.esz, 1 << 20);
        q.charged_sz = 1 << 20;
        assert_eq!(damos_charge_window(&mut q, 900_000_000, &inp), (false, false));
        assert_eq!(damos_charge_window(&mut q, 1_005_000_000, &inp), (true, true));
        assert_eq!((q.charged_sz, q.total_charged_sz), (0, 1 << 20));
        q.charged_sz = 4096;
        assert_eq!(damos_charge_window(&mut q, 2_005_000_000, &inp), (true, false));
    }
}
