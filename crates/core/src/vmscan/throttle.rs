//! `reclaim_throttle` (mm/vmscan.c 6.12): a reclaimer sleeps on its node's wait queue for
//! one reason, until a timeout or a wake-up.
//!
//! - `VMSCAN_THROTTLE_WRITEBACK`, `HZ/10`: kswapd in `shrink_node` when it met folios it
//!   had marked for immediate reclaim still under writeback (`sc->nr.immediate`); woken by
//!   `__acct_reclaim_writeback` (from `folio_end_writeback`) once more than
//!   `SWAP_CLUSTER_MAX` × the throttled tasks' folios were written since the first slept,
//!   counting each folio written meanwhile in the node's NR_THROTTLED_WRITTEN
//!   (`/proc/vmstat` `nr_throttled_written`). The other callers are cgroup v1 only
//!   (`!writeback_throttling_sane`: `shrink_inactive_list`, MGLRU `try_to_shrink_lruvec`)
//!   or `do_writepages` on -ENOMEM, none of which the model has.
//! - `VMSCAN_THROTTLE_CONGESTED`, one jiffy: a task's reclaim (direct, memcg limit or
//!   proactive) in `shrink_node` whose target lruvec is flagged `LRUVEC_CGROUP_CONGESTED` (set
//!   by cgroup reclaim, cleared when its `do_try_to_free_pages` ends) or
//!   `LRUVEC_NODE_CONGESTED` (set by kswapd, cleared by `clear_pgdat_congested` when it goes
//!   to sleep on a balanced node); a flag is set when every dirty or writeback file folio the
//!   pass met was under writeback and already marked `PG_reclaim` (`nr.dirty ==
//!   nr.congested`). Only the classic LRU counts `nr.dirty`/`nr.congested`; MGLRU's
//!   `evict_folios` does not (and its root reclaim returns before this code), so under
//!   MGLRU it never fires.
//! - `VMSCAN_THROTTLE_NOPROGRESS`, one jiffy: global direct reclaim at priority 1 that has
//!   reclaimed nothing (`consider_reclaim_throttle` after `shrink_zones`); woken when any
//!   reclaimer makes progress, which in the single-task engine is nobody during the sleep.
//! - Both one-jiffy sleeps are skipped (`skip_throttle_noprogress`) when kswapd has given
//!   up on the node or the node's dirty + writeback pages are at most half its reclaimable
//!   pages.
//! - `VMSCAN_THROTTLE_ISOLATED` (`too_many_isolated` in `shrink_inactive_list`, `HZ/50`):
//!   needs more folios isolated from the node's inactive list than are left on it, by
//!   several reclaimers at once; the model's one task and kswapd never reclaim at the same
//!   time, so the isolated count the check reads is 0 and it never throttles.
//!
//! `schedule_timeout(1)` ends at the next timer tick: the model's ticks are at multiples of
//! one jiffy (`CONFIG_HZ=250`, scaled by `sim.time_dilation` as every kernel timer) on the
//! simulated clock. A task sleeps on its own clock (a memory stall: its reclaim runs inside
//! `psi_memstall_enter`), and the disk's completions due by the time it wakes are applied
//! first (PG_reclaim folios rotate to the tail), as they would have been while it slept.

use super::{ScanControl, MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX};
use crate::mm::lruvec::LruList;
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;

/// `enum vmscan_throttle_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Throttle {
    Writeback,
    Noprogress,
    Congested,
}

/// `HZ/10` (ns).
const HZ_10_NS: u64 = 100_000_000;
/// One jiffy at Debian's `CONFIG_HZ=250` (ns).
const JIFFY_NS: u64 = 4_000_000;

/// `skip_throttle_noprogress(pgdat)`: kswapd has given up on the node, or its dirty and
/// writeback pages (`NR_ZONE_WRITE_PENDING`) are at most half its reclaimable pages
/// (`zone_reclaimable_pages`: the file LRU, and the anon LRU while swap has room).
pub fn skip_throttle_noprogress(mm: &Mm, node: u16) -> bool {
    if mm.nodes[node as usize].kswapd_failures >= MAX_RECLAIM_RETRIES {
        return true;
    }
    2 * mm.nodes[node as usize].nr_write_pending <= reclaimable_pages(mm, node)
}

/// `zone_reclaimable_pages` summed over the node's zones: the file LRU, and the anon LRU
/// while swap has room.
fn reclaimable_pages(mm: &Mm, node: u16) -> u64 {
    let mut reclaimable = mm.node_lru_pages(node, LruList::InactiveFile) + mm.node_lru_pages(node, LruList::ActiveFile);
    if mm.can_reclaim_anon() {
        reclaimable += mm.node_lru_pages(node, LruList::InactiveAnon) + mm.node_lru_pages(node, LruList::ActiveAnon);
    }
    reclaimable
}

/// `allow_direct_reclaim(pgdat)` (mm/vmscan.c 6.12): whether the node's free pages are
/// above half its PFMEMALLOC reserve, the sum of the min watermarks of its zones up to
/// ZONE_NORMAL that have reclaimable pages; true when kswapd has given up on it or no
/// zone counts. Abstraction: the LRU is kept per node, so a zone counts when its node has
/// reclaimable pages.
pub fn allow_direct_reclaim(mm: &Mm, node: u16) -> bool {
    if mm.nodes[node as usize].kswapd_failures >= MAX_RECLAIM_RETRIES || reclaimable_pages(mm, node) == 0 {
        return true;
    }
    let (mut reserve, mut free) = (0, 0);
    for &z in &mm.nodes[node as usize].zones {
        let zone = &mm.buddy.zones[z];
        if zone.managed_pages > 0 && zone.zone_type != crate::mm::page_alloc::ZoneType::Movable {
            reserve += zone.min_wmark_pages();
            free += zone.free_pages;
        }
    }
    reserve == 0 || free > reserve / 2
}

/// How long `reclaim_throttle(pgdat, reason)` sleeps from `mm.now` (0: it returns at
/// once). A WRITEBACK sleep counts the node's folios written during it as
/// `nr_throttled_written`.
pub fn reclaim_throttle_ns(mm: &mut Mm, node: u16, reason: Throttle) -> u64 {
    match reason {
        Throttle::Writeback => {
            let timeout = mm.timer_ns(HZ_10_NS);
            let woken = mm.wb.nth_done(SWAP_CLUSTER_MAX as usize + 1).map(|t| t.saturating_sub(mm.now));
            let slept = woken.unwrap_or(timeout).min(timeout);
            let written = mm.wb.done_by(mm.now + slept).filter(|&pfn| mm.node_of(pfn) == node).count() as u64;
            mm.vmstat.count(Ev::NrThrottledWritten, written);
            slept
        }
        Throttle::Noprogress | Throttle::Congested => {
            if skip_throttle_noprogress(mm, node) {
                return 0;
            }
            let jiffy = mm.timer_ns(JIFFY_NS).max(1);
            jiffy - mm.now % jiffy
        }
    }
}

/// A task (not kswapd) throttled in reclaim: it sleeps, its clock (`mm.now`) moves on, the
/// writes completed meanwhile end (`folio_end_writeback`, rotating PG_reclaim folios through
/// the policy), and the sleep is added to `sc.throttle_ns` and `mm.reclaim_throttle_ns`.
pub fn throttle_task<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, node: u16, reason: Throttle, sc: &mut ScanControl) {
    debug_assert!(!sc.is_kswapd());
    let slept = reclaim_throttle_ns(mm, node, reason);
    if slept == 0 {
        return;
    }
    sc.throttle_ns += slept;
    mm.reclaim_throttle_ns += slept;
    mm.now += slept;
    while let Some((pfn, rotate)) = mm.folio_end_writeback_due(mm.now) {
        if rotate {
            p.folio_rotate_reclaimable(mm, pfn);
        }
    }
}
