//! Quota goals and the feedback loop (`mm/damon/core.c` v6.17-era, spec E.4):
//! `damon_feed_loop_next_input` and the goal metrics a quota can aim at.

/// `enum damos_quota_goal_metric` (the ones the model measures).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DamosQuotaGoalMetric {
    /// The user writes `current_value` (DAMON_RECLAIM's `quota_autotune_feedback`).
    UserInput,
    /// System "some" memory PSI, stall µs per reset interval.
    SomeMemPsiUs,
    /// (total − free) / total of a node, in basis points.
    NodeMemUsedBp,
    /// free / total of a node, in basis points.
    NodeMemFreeBp,
}

/// `struct damos_quota_goal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DamosQuotaGoal {
    pub metric: DamosQuotaGoalMetric,
    pub target_value: u64,
    pub current_value: u64,
    /// SOME_MEM_PSI_US: the PSI total at the last measurement.
    pub last_psi_total: u64,
    pub nid: u16,
}

impl DamosQuotaGoal {
    /// `damos_new_quota_goal(metric, target_value)`.
    pub fn new(metric: DamosQuotaGoalMetric, target_value: u64) -> Self {
        DamosQuotaGoal { metric, target_value, current_value: 0, last_psi_total: 0, nid: 0 }
    }
}

/// What goal metrics are measured from, sampled when a charge window starts.
#[derive(Clone, Copy, Debug, Default)]
pub struct GoalInputs {
    /// Cumulative "some" memory stall time, µs.
    pub psi_some_total_us: u64,
    pub node_free_pages: u64,
    pub node_total_pages: u64,
}

/// `damos_set_quota_goal_current_value`.
pub fn damos_set_quota_goal_current_value(g: &mut DamosQuotaGoal, inp: &GoalInputs) {
    match g.metric {
        DamosQuotaGoalMetric::UserInput => {}
        DamosQuotaGoalMetric::SomeMemPsiUs => {
            g.current_value = inp.psi_some_total_us - g.last_psi_total;
            g.last_psi_total = inp.psi_some_total_us;
        }
        DamosQuotaGoalMetric::NodeMemUsedBp => {
            g.current_value = (inp.node_total_pages - inp.node_free_pages) * 10000 / inp.node_total_pages.max(1);
        }
        DamosQuotaGoalMetric::NodeMemFreeBp => {
            g.current_value = inp.node_free_pages * 10000 / inp.node_total_pages.max(1);
        }
    }
}

/// `damos_quota_score`: the highest `current * 10000 / target` over the goals (the least
/// aggressive goal wins).
pub fn damos_quota_score(goals: &mut [DamosQuotaGoal], inp: &GoalInputs) -> u64 {
    let mut highest = 0;
    for g in goals.iter_mut() {
        damos_set_quota_goal_current_value(g, inp);
        highest = highest.max(g.current_value.saturating_mul(10000) / g.target_value.max(1));
    }
    highest
}

/// `damon_feed_loop_next_input(last_input, score)` (E.4): goal 10000, minimum input
/// 10000; the input moves by `last * |goal − score| / goal` toward meeting the goal.
pub fn damon_feed_loop_next_input(last_input: u64, score: u64) -> u64 {
    const GOAL: u64 = 10000;
    const MIN_INPUT: u64 = 10000;
    if score == GOAL {
        return last_input;
    }
    if score >= GOAL * 2 {
        return MIN_INPUT;
    }
    let over = score > GOAL;
    let diff = if over { score - GOAL } else { GOAL - score };
    let comp = if last_input < u64::MAX / diff { last_input * diff / GOAL } else { last_input / GOAL * diff };
    if over {
        return last_input.saturating_sub(comp).max(MIN_INPUT);
    }
    if last_input < u64::MAX - comp {
        last_input + comp
    } else {
        u64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mm/damon/tests/core-kunit.h (A) damon_test_feed_loop_next_input, plus exact steps
    /// from E.4's formula.
    #[test]
    fn feed_loop_steps() {
        let last = 900_000;
        assert!(damon_feed_loop_next_input(last, 200) > last);
        assert!(damon_feed_loop_next_input(last, 250_000_000) < last);
        assert!(damon_feed_loop_next_input(last, 200) > damon_feed_loop_next_input(last, 2000));
        // score 5000 (half the goal): +50 %; 15000: −50 %; on goal: unchanged; ≥ 2×: floor.
        assert_eq!(damon_feed_loop_next_input(20_000, 5_000), 30_000);
        assert_eq!(damon_feed_loop_next_input(20_000, 15_000), 10_000);
        assert_eq!(damon_feed_loop_next_input(40_000, 15_000), 20_000);
        assert_eq!(damon_feed_loop_next_input(40_000, 10_000), 40_000);
        assert_eq!(damon_feed_loop_next_input(40_000, 20_000), 10_000);
        assert_eq!(damon_feed_loop_next_input(10_000, 0), 20_000);
    }

    #[test]
    fn goal_score_is_the_highest() {
        let inp = GoalInputs { psi_some_total_us: 5_000, node_free_pages: 300, node_total_pages: 1000 };
        let mut goals = [DamosQuotaGoal::new(DamosQuotaGoalMetric::NodeMemFreeBp, 2000), DamosQuotaGoal::new(DamosQuotaGoalMetric::SomeMemPsiUs, 10_000)];
        // free 30 % vs target 20 % → 15000; PSI 5000 µs of 10000 → 5000.
        assert_eq!(damos_quota_score(&mut goals, &inp), 15_000);
        assert_eq!(goals[1].last_psi_total, 5_000);
        let inp2 = GoalInputs { psi_some_total_us: 25_000, ..inp };
        let mut psi = [goals[1]];
        assert_eq!(damos_quota_score(&mut psi, &inp2), 20_000);
    }
}
