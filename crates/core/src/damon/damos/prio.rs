//! Regions prioritization (`mm/damon/ops-common.c` scores and the histogram of
//! `damos_adjust_quota`, spec E.5): hot/cold scores in 0..=99 from access frequency and
//! age, and the minimum score whose regions fill the effective quota.

use super::super::attrs::DamonAttrs;
use super::super::region::DamonRegion;
use super::quota::DamosQuota;
use super::scheme::DamosAction;

pub const DAMOS_MAX_SCORE: u32 = 99;
pub const DAMON_MAX_SUBSCORE: i64 = 100;
pub const DAMON_MAX_AGE_IN_LOG: i64 = 32;

/// `damon_hot_score` (E.5).
pub fn damon_hot_score(attrs: &DamonAttrs, r: &DamonRegion, q: &DamosQuota) -> u32 {
    let (fw, aw) = (q.weight_nr_accesses as i64, q.weight_age as i64);
    let freq_subscore = r.nr_accesses as i64 * DAMON_MAX_SUBSCORE / attrs.max_nr_accesses().max(1) as i64;
    let mut age_in_sec = (r.age as u64 * attrs.aggr_interval / 1_000_000) as u32;
    let mut age_in_log = 0i64;
    while age_in_log < DAMON_MAX_AGE_IN_LOG && age_in_sec != 0 {
        age_in_log += 1;
        age_in_sec >>= 1;
    }
    if freq_subscore == 0 {
        age_in_log = -age_in_log;
    }
    age_in_log += DAMON_MAX_AGE_IN_LOG;
    let age_subscore = age_in_log * DAMON_MAX_SUBSCORE / DAMON_MAX_AGE_IN_LOG / 2;
    let mut hotness = fw * freq_subscore + aw * age_subscore;
    if fw + aw != 0 {
        hotness /= fw + aw;
    }
    (hotness * DAMOS_MAX_SCORE as i64 / DAMON_MAX_SUBSCORE) as u32
}

/// `damon_cold_score`: `99 - hot`.
pub fn damon_cold_score(attrs: &DamonAttrs, r: &DamonRegion, q: &DamosQuota) -> u32 {
    DAMOS_MAX_SCORE - damon_hot_score(attrs, r, q)
}

/// `ops.get_scheme_score` of paddr (vaddr gives the cold score for PAGEOUT only, which
/// is what [`DamosAction::Pageout`] and [`DamosAction::Cold`] get here too).
pub fn damon_scheme_score(attrs: &DamonAttrs, r: &DamonRegion, action: DamosAction, q: &DamosQuota) -> u32 {
    match action {
        DamosAction::Pageout | DamosAction::LruDeprio | DamosAction::Cold => damon_cold_score(attrs, r, q),
        DamosAction::LruPrio => damon_hot_score(attrs, r, q),
        DamosAction::Stat => DAMOS_MAX_SCORE,
    }
}

/// The histogram walk of `damos_adjust_quota`: from the highest score down, sum region
/// sizes until they reach `esz` (or score 0); that score is `min_score`.
pub fn damos_min_score(histogram: &[u64; DAMOS_MAX_SCORE as usize + 1], max_score: u32, esz: u64) -> u32 {
    let mut cumulated = 0u64;
    let mut score = max_score;
    loop {
        cumulated += histogram[score as usize];
        if cumulated >= esz || score == 0 {
            return score;
        }
        score -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(w_nr: u32, w_age: u32) -> DamosQuota {
        DamosQuota { weight_nr_accesses: w_nr, weight_age: w_age, ..Default::default() }
    }

    /// E.5 worked by hand with the default attrs (max_nr_accesses 20, aggr 100 ms).
    #[test]
    fn scores() {
        let a = DamonAttrs::default();
        // Never accessed, age 1200 windows = 120 s: age_in_log = bits(120) = 7 → −7;
        // age_sub = (−7+32)*100/32/2 = 39; hot = 39*99/100 = 38; cold = 61.
        let r = DamonRegion { age: 1200, ..DamonRegion::new(0, 4096) };
        assert_eq!(damon_hot_score(&a, &r, &q(0, 1)), 38);
        assert_eq!(damon_cold_score(&a, &r, &q(0, 1)), 61);
        // Older is colder: 600 s → bits(600)=10 → (22)*100/64 = 34 → hot 33 → cold 66.
        let old = DamonRegion { age: 6000, ..r };
        assert_eq!(damon_cold_score(&a, &old, &q(0, 1)), 66);
        // Accessed 10 of 20 samples, age 2 s (bits 2): freq 50, age_sub (34)*100/64 = 53;
        // weights 1/1: (50+53)/2 = 51 → 50.
        let hot = DamonRegion { nr_accesses: 10, age: 20, ..r };
        assert_eq!(damon_hot_score(&a, &hot, &q(1, 1)), 50);
        // Both weights 0 (no prioritization): hot 0, every region scores 99 cold.
        assert_eq!(damon_cold_score(&a, &old, &q(0, 0)), 99);
        assert_eq!(damon_cold_score(&a, &hot, &q(0, 0)), 99);
    }

    #[test]
    fn min_score_fills_the_quota() {
        let mut h = [0u64; 100];
        h[70] = 4 << 20;
        h[65] = 8 << 20;
        h[10] = 100 << 20;
        assert_eq!(damos_min_score(&h, 70, 4 << 20), 70);
        assert_eq!(damos_min_score(&h, 70, 5 << 20), 65);
        assert_eq!(damos_min_score(&h, 70, 12 << 20), 65);
        assert_eq!(damos_min_score(&h, 70, 13 << 20), 10);
        assert_eq!(damos_min_score(&h, 70, 1 << 30), 0);
    }
}
