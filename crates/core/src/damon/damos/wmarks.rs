//! DAMOS watermarks (spec E.8): activation by the free-memory rate with hysteresis,
//! `damos_wmark_wait_us`.

/// `enum damos_wmark_metric`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DamosWmarkMetric {
    None,
    /// `NR_FREE_PAGES * 1000 / totalram_pages` (per-mille).
    FreeMemRate,
}

/// `struct damos_watermarks` (interval in µs, marks per-mille).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DamosWatermarks {
    pub metric: DamosWmarkMetric,
    pub interval: u64,
    pub high: u64,
    pub mid: u64,
    pub low: u64,
    pub activated: bool,
}

impl Default for DamosWatermarks {
    fn default() -> Self {
        DamosWatermarks { metric: DamosWmarkMetric::None, interval: 0, high: 0, mid: 0, low: 0, activated: true }
    }
}

/// `damos_wmark_metric_value(FREE_MEM_RATE)`.
pub fn free_mem_rate(nr_free_pages: u64, totalram_pages: u64) -> u64 {
    nr_free_pages * 1000 / totalram_pages.max(1)
}

/// `damos_wmark_wait_us(s)` with the metric's current value: 0 = active now, else how
/// long to wait (µs) before checking again.
pub fn damos_wmark_wait_us(w: &mut DamosWatermarks, metric: u64) -> u64 {
    if w.metric == DamosWmarkMetric::None {
        return 0;
    }
    if metric > w.high || w.low > metric {
        w.activated = false;
        return w.interval;
    }
    if w.high >= metric && metric >= w.mid && !w.activated {
        return w.interval;
    }
    w.activated = true;
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DAMON_RECLAIM's marks 500/400/200: the E.8 state machine step by step.
    #[test]
    fn transitions() {
        let mut w = DamosWatermarks { metric: DamosWmarkMetric::FreeMemRate, interval: 5_000_000, high: 500, mid: 400, low: 200, activated: true };
        assert_eq!(damos_wmark_wait_us(&mut w, 900), 5_000_000); // above high: off
        assert!(!w.activated);
        assert_eq!(damos_wmark_wait_us(&mut w, 450), 5_000_000); // between mid and high: stays off
        assert_eq!(damos_wmark_wait_us(&mut w, 400), 5_000_000); // at mid: still off (inclusive)
        assert_eq!(damos_wmark_wait_us(&mut w, 399), 0); // below mid: on
        assert!(w.activated);
        assert_eq!(damos_wmark_wait_us(&mut w, 480), 0); // back between mid and high: stays on
        assert_eq!(damos_wmark_wait_us(&mut w, 500), 0); // at high: on
        assert_eq!(damos_wmark_wait_us(&mut w, 501), 5_000_000); // above high: off
        assert_eq!(damos_wmark_wait_us(&mut w, 300), 0);
        assert_eq!(damos_wmark_wait_us(&mut w, 199), 5_000_000); // below low: off (LRU reclaim's turn)
        assert!(!w.activated);
        assert_eq!(free_mem_rate(250, 1000), 250);
    }
}
