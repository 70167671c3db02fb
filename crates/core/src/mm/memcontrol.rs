//! Memory cgroups (mm/memcontrol.c): usage charged in pages, `memory.max/high/low/min`,
//! effective protection, and the events the kernel counts in `memory.events`.
//!
//! The hierarchy is flat: every configured cgroup is a child of the root, for which
//! the kernel's effective protection (`emin`/`elow`) equals the configured value
//! (`mem_cgroup_calculate_protection` for children of the root). The root has no limit.

pub type MemcgId = u16;
pub const ROOT_MEMCG: MemcgId = 0;

/// `FLUSH_TIME` (mm/memcontrol.c 6.12: `2UL*HZ`): the period of `flush_memcg_stats_dwork`,
/// the only flush of the statistics reclaim reads. Reclaim itself calls
/// `mem_cgroup_flush_stats_ratelimited`, which flushes only when that worker is a whole
/// period late (`prepare_scan_control`, `workingset_test_recent`), so what reclaim reads
/// through `lruvec_page_state` — list sizes for `inactive_is_low` and the workingset
/// size, WORKINGSET_ACTIVATE_* for the refault snapshot — is up to 2 s old.
pub const FLUSH_TIME_NS: u64 = 2_000_000_000;

#[derive(Clone, Debug, Default)]
pub struct MemcgEvents {
    pub low: u64,
    pub high: u64,
    pub max: u64,
    pub oom: u64,
}

#[derive(Clone, Debug)]
pub struct Memcg {
    pub name: String,
    pub parent: Option<MemcgId>,
    /// `memory.current` in pages (LRU pages charged to it).
    pub usage: u64,
    pub peak: u64,
    /// Limits in pages (u64::MAX = max).
    pub max: u64,
    pub high: u64,
    pub low: u64,
    pub min: u64,
    pub events: MemcgEvents,
}

impl Memcg {
    pub fn new(name: &str, parent: Option<MemcgId>) -> Self {
        Memcg { name: name.into(), parent, usage: 0, peak: 0, max: u64::MAX, high: u64::MAX, low: 0, min: 0, events: MemcgEvents::default() }
    }

    /// `mem_cgroup_below_min`: usage within the hard protection.
    pub fn below_min(&self) -> bool {
        self.min > 0 && self.usage <= self.min
    }

    /// `mem_cgroup_below_low`.
    pub fn below_low(&self) -> bool {
        self.low > 0 && self.usage <= self.low
    }
}

/// Bytes (from the config) to pages, keeping "max".
pub fn bytes_to_pages(b: u64) -> u64 {
    if b == u64::MAX {
        u64::MAX
    } else {
        b >> reclaimlab_trace::PAGE_SHIFT
    }
}

/// `apply_proportional_protection` inside `get_scan_count` (spec A.6): scale the list
/// size by the unprotected share of the cgroup, floor `SWAP_CLUSTER_MAX`.
/// `use_low` is `!sc->memcg_low_reclaim && low > min`.
pub fn protected_scan_size(lruvec_size: u64, usage: u64, min: u64, low: u64, memcg_low_reclaim: bool) -> (u64, bool) {
    if min == 0 && low == 0 {
        return (lruvec_size, false);
    }
    let (protection, low_skipped) = if !memcg_low_reclaim && low > min { (low, true) } else { (min, false) };
    let cgroup_size = usage.max(protection);
    let scan = lruvec_size - (lruvec_size as u128 * protection as u128 / (cgroup_size as u128 + 1)) as u64;
    (scan.max(crate::vmscan::SWAP_CLUSTER_MAX), low_skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn proportional_protection() {
        // 1000-page list, cgroup of 4000 pages protected by 3000 (low): scan 1000 - 1000*3000/4001 = 251
        assert_eq!(protected_scan_size(1000, 4000, 0, 3000, false), (251, true));
        // in low reclaim only min counts: 1000 - 1000*1000/4001 = 751
        assert_eq!(protected_scan_size(1000, 4000, 1000, 3000, true), (751, false));
        // fully protected: floor at SWAP_CLUSTER_MAX
        assert_eq!(protected_scan_size(1000, 2000, 5000, 0, false).0, 32);
        assert_eq!(protected_scan_size(1000, 4000, 0, 0, false), (1000, false));
    }
}
