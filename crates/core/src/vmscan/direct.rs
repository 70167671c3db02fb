//! Direct reclaim (`try_to_free_pages`) and memcg limit reclaim
//! (`try_to_free_mem_cgroup_pages`), both through `do_try_to_free_pages`
//! (mm/vmscan.c v6.15, spec A.4): priority 12 down to 0, each node of the zonelist
//! once per priority, stop at `nr_to_reclaim`; if nothing was reclaimed, retry once
//! with `force_deactivate` (when deactivation was skipped) and once with
//! `memcg_low_reclaim` (when memory.low protection was honoured).
//!
//! A costly-order reclaim (a THP's, mm/vmscan.c 6.12) asks for `SWAP_CLUSTER_MAX` like
//! any other and skips the nodes where compaction is ready (`compaction_ready`, which
//! also ends the priority loop); the classic `shrink_node` repeats while
//! `should_continue_reclaim` (vmscan/reclaim_compaction.rs).
//!
//! A task's reclaim sleeps in `reclaim_throttle` (vmscan/throttle.rs): CONGESTED in
//! `shrink_node`, NOPROGRESS after a fruitless priority-1 round of global direct reclaim
//! (`consider_reclaim_throttle`); the time returned includes the sleeps. Cgroup reclaim
//! clears its `LRUVEC_CGROUP_CONGESTED` when it ends (6.12).
//!
//! `throttle_direct_reclaim`'s wait on `pfmemalloc_wait` (6.12) runs before, in the page
//! allocator's `direct_reclaim` (sim/alloc.rs), where kswapd can run while the task sleeps.

use super::reclaim_compaction::compaction_ready;
use super::throttle::{throttle_task, Throttle};
use super::{shrink_node, snapshot_refaults, Reclaimer, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::mm::memcontrol::MemcgId;
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;
use crate::thp::gfp::PAGE_ALLOC_COSTLY_ORDER;

fn do_try_to_free_pages<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, sc: &mut ScanControl, nodes: &[u16]) -> u64 {
    let initial_priority = sc.priority;
    loop {
        if !sc.cgroup_reclaim() {
            mm.vmstat.count(Ev::AllocstallNormal, 1);
        }
        loop {
            sc.nr_scanned = 0;
            shrink_zones(mm, p, sc, nodes);
            consider_reclaim_throttle(mm, p, nodes[0], sc);
            if sc.nr_reclaimed >= sc.nr_to_reclaim || sc.compaction_ready {
                break;
            }
            if sc.priority < DEF_PRIORITY - 2 {
                sc.may_writepage = true;
            }
            sc.priority -= 1;
            if sc.priority < 0 {
                break;
            }
        }
        for &node in nodes {
            snapshot_refaults(mm, sc.target_memcg, node);
            if let Some(memcg) = sc.target_memcg {
                let lv = mm.lruvec_id(memcg, node);
                mm.lruvecs[lv as usize].cgroup_congested = false;
            }
        }
        if sc.nr_reclaimed > 0 {
            return sc.nr_reclaimed;
        }
        // "Aborted reclaim to try compaction? don't OOM, then".
        if sc.compaction_ready {
            return 1;
        }
        if sc.skipped_deactivate {
            sc.priority = initial_priority;
            sc.force_deactivate = true;
            sc.skipped_deactivate = false;
            continue;
        }
        if sc.memcg_low_skipped {
            sc.priority = initial_priority;
            sc.force_deactivate = false;
            sc.memcg_low_reclaim = true;
            sc.memcg_low_skipped = false;
            continue;
        }
        return 0;
    }
}

/// `consider_reclaim_throttle(first_pgdat, sc)` (mm/vmscan.c 6.12) after each round of
/// `shrink_zones`: progress above 1/8 of the scanned wakes NOPROGRESS sleepers (none but
/// this task in the model); kswapd and cgroup reclaim never sleep here; global direct
/// reclaim sleeps when priority 1 has reclaimed nothing.
fn consider_reclaim_throttle<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, node: u16, sc: &mut ScanControl) {
    if sc.nr_reclaimed > sc.nr_scanned >> 3 || sc.is_kswapd() || sc.cgroup_reclaim() {
        return;
    }
    if sc.priority == 1 && sc.nr_reclaimed == 0 {
        throttle_task(mm, p, node, Throttle::Noprogress, sc);
    }
}

/// Global direct reclaim by a task allocating on `nodes[0]` (its zonelist order).
/// Returns (pages reclaimed, ns the task spent — the CPU and the `reclaim_throttle`
/// sleeps: its stall).
pub fn try_to_free_pages<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, nodes: &[u16]) -> (u64, u64) {
    let mut sc = ScanControl::new(Reclaimer::Direct, SWAP_CLUSTER_MAX);
    let r = do_try_to_free_pages(mm, p, &mut sc, nodes);
    (r, sc.cost_ns + sc.throttle_ns)
}

/// Global direct reclaim for an allocation of `order` (`try_to_free_pages(zonelist,
/// order, ...)`): `SWAP_CLUSTER_MAX` pages, with reclaim/compaction's rules for costly
/// orders (module doc). Returns (pages reclaimed, or 1 when it stopped because compaction
/// is ready; ns spent: CPU and sleeps).
pub fn try_to_free_pages_order<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, nodes: &[u16], order: u8) -> (u64, u64) {
    let mut sc = ScanControl::new(Reclaimer::Direct, SWAP_CLUSTER_MAX);
    sc.order = order;
    let r = do_try_to_free_pages(mm, p, &mut sc, nodes);
    (r, sc.cost_ns + sc.throttle_ns)
}

/// `shrink_zones`: each node of the zonelist once, but not, in global reclaim for a costly
/// order, a node whose zones are ready for compaction (`sc.compaction_ready`).
fn shrink_zones<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, sc: &mut ScanControl, nodes: &[u16]) {
    for &node in nodes {
        if !sc.cgroup_reclaim() && sc.order > PAGE_ALLOC_COSTLY_ORDER && compaction_ready(mm, node, sc.order) {
            sc.compaction_ready = true;
            continue;
        }
        shrink_node(mm, p, node, sc);
    }
}

/// memcg limit reclaim of at least `nr_pages` (`max(nr_pages, SWAP_CLUSTER_MAX)`),
/// with `MEMCG_RECLAIM_MAY_SWAP`. Returns (pages reclaimed, ns spent: CPU and sleeps).
pub fn try_to_free_mem_cgroup_pages<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, nr_pages: u64, nodes: &[u16]) -> (u64, u64) {
    try_to_free_mem_cgroup_pages_opts(mm, p, memcg, nr_pages, nodes, ReclaimOptions::default())
}

/// The `reclaim_options` and `swappiness` arguments of `try_to_free_mem_cgroup_pages`
/// (include/linux/swap.h v6.12 `MEMCG_RECLAIM_*`).
#[derive(Clone, Copy, Debug)]
pub struct ReclaimOptions {
    /// `MEMCG_RECLAIM_MAY_SWAP`.
    pub may_swap: bool,
    /// `MEMCG_RECLAIM_PROACTIVE`: a `memory.reclaim` write.
    pub proactive: bool,
    /// The write's `swappiness=` (`sc->proactive_swappiness`).
    pub swappiness: Option<u32>,
}

impl Default for ReclaimOptions {
    fn default() -> Self {
        ReclaimOptions { may_swap: true, proactive: false, swappiness: None }
    }
}

/// `try_to_free_mem_cgroup_pages(memcg, nr_pages, GFP_KERNEL, reclaim_options,
/// swappiness)` (mm/vmscan.c v6.12). Returns (pages reclaimed, ns spent: CPU and sleeps).
pub fn try_to_free_mem_cgroup_pages_opts<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, nr_pages: u64, nodes: &[u16], opts: ReclaimOptions) -> (u64, u64) {
    let mut sc = ScanControl::new(Reclaimer::Memcg, nr_pages.max(SWAP_CLUSTER_MAX));
    sc.target_memcg = Some(memcg);
    sc.may_swap = opts.may_swap;
    sc.proactive = opts.proactive;
    sc.proactive_swappiness = opts.swappiness;
    let r = do_try_to_free_pages(mm, p, &mut sc, nodes);
    (r, sc.cost_ns + sc.throttle_ns)
}
