//! memcg charging (mm/memcontrol.c v6.15 `try_charge_memcg`,
//! `mem_cgroup_handle_over_high`): a charge over `memory.max` reclaims from the memcg
//! (stalling the task) and retries — without limit while reclaim makes progress, else
//! `MAX_RECLAIM_RETRIES` times — then OOMs. Usage above `memory.high` is reclaimed on
//! the way back to user space, and if reclaim cannot bring it down the task sleeps a
//! penalty growing with the square of the overage (`calculate_high_delay`, capped at
//! 2 s).
//!
//! Abstractions: no per-CPU charge stock, so limit reclaim starts exactly at
//! `memory.max` (the kernel charges 64-page batches into a per-CPU stock and may start
//! up to 63 pages earlier); over `memory.high` each fault still owes a whole
//! `MEMCG_CHARGE_BATCH` as in the kernel; `HZ` = 250 (Debian's config) for the
//! penalty's jiffies.

use super::engine::Machine;
use crate::error::{Error, Result};
use crate::mm::memcontrol::MemcgId;
use crate::mm::vmstat::Ev;
use crate::policy::ReclaimPolicy;
use crate::thp::gfp::{Gfp, __GFP_DIRECT_RECLAIM, __GFP_NORETRY, GFP_HIGHUSER_MOVABLE, PAGE_ALLOC_COSTLY_ORDER};
use crate::vmscan::{try_to_free_mem_cgroup_pages, try_to_free_mem_cgroup_pages_opts, ReclaimOptions, MAX_RECLAIM_RETRIES};

const HZ: u64 = 250;
const MEMCG_CHARGE_BATCH: u64 = 64;
const MEMCG_DELAY_PRECISION_SHIFT: u32 = 20;
const MEMCG_DELAY_SCALING_SHIFT: u32 = 14;
const MEMCG_MAX_HIGH_DELAY_JIFFIES: u64 = 2 * HZ;

/// `calculate_overage`: (usage - high) / high in 2^-20 units.
pub fn calculate_overage(usage: u64, high: u64) -> u64 {
    if usage <= high {
        return 0;
    }
    let high = high.max(1);
    ((usage - high) << MEMCG_DELAY_PRECISION_SHIFT) / high
}

/// `calculate_high_delay` in jiffies (before the 2 s clamp).
pub fn calculate_high_delay(nr_pages: u64, max_overage: u64) -> u64 {
    if max_overage == 0 {
        return 0;
    }
    let mut penalty = (max_overage as u128 * max_overage as u128 * HZ as u128) >> MEMCG_DELAY_PRECISION_SHIFT;
    penalty >>= MEMCG_DELAY_SCALING_SHIFT;
    (penalty * nr_pages as u128 / MEMCG_CHARGE_BATCH as u128) as u64
}

impl<P: ReclaimPolicy> Machine<P> {
    /// Charge one page to `memcg`.
    pub(crate) fn try_charge(&mut self, memcg: MemcgId) -> Result<()> {
        self.try_charge_memcg(memcg, 1, GFP_HIGHUSER_MOVABLE).map(|_| ())
    }

    /// Charge one readahead page (`readahead_gfp_mask` has `__GFP_NORETRY`): reclaim as
    /// for any charge, but give up after the drain retry's second round instead of
    /// retrying and OOMing. False: not charged.
    pub(crate) fn try_charge_noretry(&mut self, memcg: MemcgId) -> bool {
        matches!(self.try_charge_memcg(memcg, 1, GFP_HIGHUSER_MOVABLE | __GFP_NORETRY), Ok(true))
    }

    /// `try_charge_memcg(memcg, gfp, nr_pages)` (mm/memcontrol.c 6.12): charge when the
    /// margin holds `nr_pages`; a mask that may not block fails at once; else reclaim
    /// `nr_pages` and retry while the margin then holds them. After that, a charge that
    /// can give up (`__GFP_NORETRY`, or a costly order) gets one more round after
    /// `drain_all_stock` and then fails with `__GFP_NORETRY`; reclaim progress retries an
    /// order up to `PAGE_ALLOC_COSTLY_ORDER`; then `MAX_RECLAIM_RETRIES` rounds, and
    /// `mem_cgroup_oom`, which skips a costly order (the charge fails: a THP falls back)
    /// and otherwise ends the run. The model has no per-CPU charge stock, so an order-0
    /// charge that may retry has no separate drain round. False: not charged.
    pub(crate) fn try_charge_memcg(&mut self, memcg: MemcgId, nr_pages: u64, gfp: Gfp) -> Result<bool> {
        let costly = nr_pages > 1 << PAGE_ALLOC_COSTLY_ORDER;
        let noretry = gfp & __GFP_NORETRY != 0;
        let mut nr_retries = MAX_RECLAIM_RETRIES;
        let mut drained = false;
        loop {
            let m = &mut self.mm.memcgs[memcg as usize];
            if m.usage + nr_pages <= m.max {
                m.usage += nr_pages;
                m.peak = m.peak.max(m.usage);
                return Ok(true);
            }
            if gfp & __GFP_DIRECT_RECLAIM == 0 {
                return Ok(false);
            }
            m.events.max += 1;
            let nodes = self.zonelist_nodes(memcg);
            // Reclaim runs at the task's time (its throttle sleeps and the flusher it wakes).
            self.mm.now = self.now;
            let (reclaimed, cost) = try_to_free_mem_cgroup_pages(&mut self.mm, &mut self.policy, memcg, nr_pages, &nodes);
            self.rec.memcg_reclaim_ns += cost;
            self.memstall(cost);
            // The disk went on writing while the task reclaimed: what it completed by now
            // ends (rotating PG_reclaim folios) before the margin is checked and reclaim retried.
            self.end_writeback_due(self.now);
            let m = &self.mm.memcgs[memcg as usize];
            if m.usage + nr_pages <= m.max {
                continue;
            }
            if (noretry || costly) && !drained {
                drained = true;
                continue;
            }
            if noretry {
                return Ok(false);
            }
            if reclaimed > 0 && !costly {
                continue;
            }
            if nr_retries == 0 {
                if costly {
                    return Ok(false);
                }
                self.mm.memcgs[memcg as usize].events.oom += 1;
                self.mm.vmstat.count(Ev::OomKill, 1);
                let m = &self.mm.memcgs[memcg as usize];
                return Err(Error::oom(format!(
                    "cgroup '{}' cannot stay within memory.max = {} pages: reclaim made no progress at access #{} (swap {})",
                    m.name,
                    m.max,
                    self.accesses + 1,
                    self.swap_state()
                )));
            }
            nr_retries -= 1;
        }
    }

    /// `mem_cgroup_handle_over_high` after a fault charged one page.
    pub(crate) fn handle_over_high(&mut self, memcg: MemcgId) -> Result<()> {
        let m = &self.mm.memcgs[memcg as usize];
        if m.usage <= m.high {
            return Ok(());
        }
        // try_charge_memcg adds a whole charge batch to memcg_nr_pages_over_high for a
        // charge that leaves the memcg above memory.high; the return to user space then
        // reclaims and throttles for that many pages.
        let nr_pages = MEMCG_CHARGE_BATCH;
        let mut nr_retries = MAX_RECLAIM_RETRIES;
        loop {
            // reclaim_high
            let mut nr_reclaimed = 0;
            let m = &mut self.mm.memcgs[memcg as usize];
            if m.usage > m.high {
                m.events.high += 1;
                let nodes = self.zonelist_nodes(memcg);
                self.mm.now = self.now;
                let (r, cost) = try_to_free_mem_cgroup_pages(&mut self.mm, &mut self.policy, memcg, nr_pages, &nodes);
                nr_reclaimed = r;
                self.rec.memcg_reclaim_ns += cost;
                self.memstall(cost);
                self.end_writeback_due(self.now);
            }
            let m = &self.mm.memcgs[memcg as usize];
            let penalty = calculate_high_delay(nr_pages, calculate_overage(m.usage, m.high)).min(MEMCG_MAX_HIGH_DELAY_JIFFIES);
            if penalty <= HZ / 100 {
                return Ok(());
            }
            if nr_reclaimed > 0 || nr_retries > 0 {
                if nr_reclaimed == 0 {
                    nr_retries -= 1;
                }
                continue;
            }
            let sleep_ns = penalty * 1_000_000_000 / HZ;
            self.rec.off_cpu_ns += sleep_ns;
            self.memstall(sleep_ns);
            return Ok(());
        }
    }
}

impl<P: ReclaimPolicy> Machine<P> {
    /// A write of `bytes` (with `swappiness=` if given) to `memcg`'s `memory.reclaim`,
    /// as mm/memcontrol.c v6.12 `memory_reclaim()` performs it: `nr_to_reclaim = bytes /
    /// PAGE_SIZE`; while less was reclaimed, `try_to_free_mem_cgroup_pages` of a quarter of
    /// what is left (`batch_size`, which reclaim raises to `SWAP_CLUSTER_MAX`) with
    /// `MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE`; a round that reclaims nothing
    /// uses up one of `MAX_RECLAIM_RETRIES`, and one more with none left returns
    /// `-EAGAIN`. Returns false for `-EAGAIN`.
    ///
    /// `sc->proactive` (mm/vmscan.c v6.12): `swappiness=` replaces `vm.swappiness`
    /// (`sc_swappiness`), MGLRU's eviction has a page-table walker (`set_mm_walk(...,
    /// sc->proactive)`, so look-around updates generations), and `vmpressure` is not fed
    /// (not modelled). The scans count as memcg reclaim (`pgscan_direct`/`pgsteal_direct`
    /// in memory.stat, nothing global): 6.12 has no `pgscan_proactive`. Not modelled:
    /// `lru_add_drain_all()` before the last retry (the model has no per-CPU LRU batches:
    /// a folio is on its list at once) and `signal_pending` (-EINTR). The reclaim's CPU time
    /// is the writer's: the workload waits for it, as the guest's replayer does (it writes
    /// between two accesses); it is not a memory stall (no PSI accounting in the handler).
    pub fn memory_reclaim(&mut self, memcg: MemcgId, bytes: u64, swappiness: Option<u32>) -> bool {
        let nr_to_reclaim = bytes / reclaimlab_trace::PAGE_SIZE;
        let mut nr_reclaimed = 0;
        let mut nr_retries = MAX_RECLAIM_RETRIES;
        let opts = ReclaimOptions { may_swap: true, proactive: true, swappiness };
        let nodes = self.zonelist_nodes(memcg);
        let mut ok = true;
        while nr_reclaimed < nr_to_reclaim {
            self.mm.now = self.now;
            // "Will converge on zero, but reclaim enforces a minimum"
            let batch_size = (nr_to_reclaim - nr_reclaimed) / 4;
            let (reclaimed, cost) = try_to_free_mem_cgroup_pages_opts(&mut self.mm, &mut self.policy, memcg, batch_size, &nodes, opts);
            self.now += cost;
            self.rec.proactive_reclaim_ns += cost;
            if reclaimed == 0 {
                if nr_retries == 0 {
                    ok = false;
                    break;
                }
                nr_retries -= 1;
            }
            nr_reclaimed += reclaimed;
        }
        let r = &mut self.mm.memcgs[memcg as usize].reclaim;
        r.writes += 1;
        r.eagain += u64::from(!ok);
        r.requested += nr_to_reclaim;
        r.reclaimed += nr_reclaimed;
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn high_delay_grows_with_square_of_overage() {
        // 10% over: overage = (100 << 20) / 1000 = 104857;
        // 104857^2 * 250 = 2748747612250; >> 20 = 2621410; >> 14 = 159 jiffies for a
        // 64-page batch; 159 * 1 / 64 = 2 for one page.
        let o = calculate_overage(1100, 1000);
        assert_eq!(o, 104857);
        assert_eq!(calculate_high_delay(64, o), 159);
        assert_eq!(calculate_high_delay(1, o), 2);
        // 20% over: overage 209715, 209715^2 * 250 >> 34 = 639: four times as harsh.
        let o2 = calculate_overage(1200, 1000);
        assert_eq!(calculate_high_delay(64, o2), 639);
        assert_eq!(calculate_overage(900, 1000), 0);
    }
}
