//! `__alloc_pages(gfp, order, nodemask)` (mm/page_alloc.c) for every machine:
//! `get_page_from_freelist` against the low watermark, then `__alloc_pages_slowpath` in
//! v4.20's order of steps, which 6.12 keeps: wake kswapd (and kcompactd for a high order),
//! the min watermark, initial async compaction for costly orders with the THP policy's
//! give-up rule, then rounds of direct reclaim and direct compaction, the `__GFP_NORETRY`
//! and costly-order exits, and `should_reclaim_retry`'s `MAX_RECLAIM_RETRIES` rounds
//! without progress before an order-0 request OOMs.
//!
//! The machine supplies what differs between callers through [`AllocCtx`]: the
//! allocating task's clock, waking and running its daemons, and where a stall is charged.
//!
//! Abstractions: `should_reclaim_retry` is "no progress for `MAX_RECLAIM_RETRIES`
//! rounds" (no reclaimable-pages estimate); `should_compact_retry` is one compaction
//! per round.

use crate::error::{Error, Result};
use crate::mm::page_alloc::{MigrateType, Pfn, ZoneType, WMARK_LOW, WMARK_MIN, ZONE_MOVABLE};
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;
use crate::sim::engine::Zonelist;
use crate::thp::compaction::{self, CompactPriority, CompactResult, DEF_COMPACT_PRIORITY, INIT_COMPACT_PRIORITY};
use crate::thp::gfp::*;
use crate::thp::policy::PageAllocator;
use crate::thp::{numa, Tc};
use crate::vmscan::{self, MAX_RECLAIM_RETRIES};

/// What `__alloc_pages` needs from the machine it runs in.
pub(crate) trait AllocCtx {
    type P: ReclaimPolicy;
    fn mm(&mut self) -> &mut Mm;
    fn mm_and_policy(&mut self) -> (&mut Mm, &mut Self::P);
    /// The allocating task's clock, its stall so far included (ns).
    fn task_now(&self) -> u64;
    /// The node `zone_statistics` counts as local (the allocating task's).
    fn local_node(&self, preferred: u16) -> u16;
    /// `wakeup_kswapd` for an allocation of `order` that may use the zones up to
    /// `highest_zoneidx` and may reclaim directly or not (which then wakes kcompactd when
    /// kswapd has nothing to do).
    fn wakeup_kswapd(&mut self, node: u16, order: u8, highest_zoneidx: u8, direct_reclaim: bool);
    /// `wakeup_kcompactd` (machines without kcompactd ignore it).
    fn wakeup_kcompactd(&mut self, node: u16, order: u8, highest_zoneidx: u8);
    /// The task spent `ns` of CPU in direct reclaim (`reclaim`) or direct compaction for
    /// an allocation preferring `node`.
    fn charge_work(&mut self, node: u16, ns: u64, reclaim: bool);
    /// Let the daemons run up to the task's clock; an error when a reclaimer invoked the
    /// OOM killer.
    fn catch_up(&mut self) -> Result<()>;
    /// When `node`'s kswapd runs its next `balance_pgdat` step (None: asleep or napping).
    fn kswapd_next_step(&self, node: u16) -> Option<u64>;
    /// When `node`'s kswapd's last priority-loop iteration ended (None: one is under way).
    fn kswapd_step_end(&self, node: u16) -> Option<u64>;
    /// The task sleeps in direct reclaim until `t` on its clock (a memory stall).
    fn reclaim_sleep_until(&mut self, t: u64);
    /// The error of an order-`order` request that failed after every retry.
    fn oom(&mut self, order: u8) -> Error;
}

/// `get_page_from_freelist`: the first zone of `nodes` (in order) above `wmark` (boost
/// included, `wmark_pages()`) that has a free block of `order`. Counts `pgalloc_*` and
/// `zone_statistics`; a zone whose watermark boost was raised wakes its kswapd (`rmqueue`:
/// `ZONE_BOOSTED_WATERMARK`).
#[inline]
pub(crate) fn get_page_from_freelist<C: AllocCtx>(c: &mut C, nodes: &[u16], order: u8, wmark: usize, mt: MigrateType) -> Option<Pfn> {
    for &node in nodes {
        let mm = c.mm();
        for zi in 0..mm.nodes[node as usize].zones.len() {
            let z = mm.nodes[node as usize].zones[zi];
            // "Detect whether the number of free pages is below high watermark" (6.12):
            // the per-CPU lists stop growing and give back more on free (pcp.rs). A zone
            // above its high watermark is above every lower one: `goto try_this_zone`.
            let above_high = !mm.pcp.below_high(z) && mm.buddy.zone_watermark_ok(z, order, mm.buddy.zones[z].high_wmark_pages());
            if !above_high {
                mm.pcp.set_below_high(z);
                // check_alloc_wmark:
                let mark = mm.buddy.zones[z].wmark_pages(wmark);
                if !mm.buddy.zone_watermark_ok(z, order, mark) {
                    continue;
                }
            }
            // rmqueue: order 0 through this CPU's list (`rmqueue_pcplist`).
            let page = if order == 0 {
                mm.pcp.rmqueue(&mut mm.buddy, &mut mm.lists, &mut mm.frames.owner, z, mt)
            } else {
                mm.buddy.alloc(&mut mm.lists, &mut mm.frames.owner, z, order, mt)
            };
            if let Some(pfn) = page {
                let ev = if mm.buddy.zones[z].zone_type == ZoneType::Dma { Ev::PgallocDma } else { Ev::PgallocNormal };
                mm.vmstat.count(ev, 1 << order);
                let boosted = mm.buddy.take_boosted_watermark(z);
                let local = c.local_node(nodes[0]);
                numa::zone_statistics(c.mm(), nodes[0], node, local);
                if boosted {
                    // rmqueue: wakeup_kswapd(zone, 0, 0, zone_idx(zone)).
                    let zone_idx = c.mm().zone_idx(z);
                    c.wakeup_kswapd(node, 0, zone_idx, false);
                }
                return Some(pfn);
            }
        }
    }
    None
}

/// `__alloc_pages(gfp, order, nodes[0], nodemask)`: `nodes` is the zonelist (the
/// preferred node alone with `__GFP_THISNODE`). `Ok(None)`: the request failed and may
/// fall back (`__GFP_NORETRY`, no `__GFP_DIRECT_RECLAIM`, a costly order); `Err`: an
/// order-0 request found no memory after every retry.
pub(crate) fn alloc_pages<C: AllocCtx>(c: &mut C, gfp: Gfp, order: u8, nodes: &Zonelist, mt: MigrateType) -> Result<Option<Pfn>> {
    if let Some(p) = get_page_from_freelist(c, nodes, order, WMARK_LOW, mt) {
        return Ok(Some(p));
    }
    alloc_pages_slowpath(c, gfp, order, nodes, mt)
}

/// `__alloc_pages_node(node, gfp, order)` as the THP policies call it: `node` alone with
/// `__GFP_THISNODE`, else its zonelist.
pub(crate) fn alloc_pages_node<C: AllocCtx>(c: &mut C, gfp: Gfp, order: u8, node: u16, mt: MigrateType) -> Result<Option<Pfn>> {
    let nodes = if gfp & __GFP_THISNODE != 0 { Zonelist::single(node) } else { Zonelist::new(node, c.mm().nr_nodes() as u16) };
    alloc_pages(c, gfp, order, &nodes, mt)
}

/// Every machine is what a THP policy allocates from.
impl<C: AllocCtx> PageAllocator for C {
    /// A THP request never OOMs: an order-9 failure is a fallback.
    fn alloc_pages(&mut self, gfp: Gfp, order: u8, node: u16) -> Option<Pfn> {
        alloc_pages_node(self, gfp, order, node, MigrateType::Movable).ok().flatten()
    }
}

/// `__alloc_pages_slowpath`.
#[inline(never)]
pub(crate) fn alloc_pages_slowpath<C: AllocCtx>(c: &mut C, gfp: Gfp, order: u8, nodes: &Zonelist, mt: MigrateType) -> Result<Option<Pfn>> {
    if gfp & __GFP_KSWAPD_RECLAIM != 0 {
        wake_all_kswapds(c, gfp, order, nodes);
    }
    if let Some(p) = get_page_from_freelist(c, nodes, order, WMARK_MIN, mt) {
        return Ok(Some(p));
    }
    if gfp & __GFP_DIRECT_RECLAIM == 0 {
        return Ok(None);
    }
    let costly = order > PAGE_ALLOC_COSTLY_ORDER;
    let mut prio = DEF_COMPACT_PRIORITY;
    if costly {
        // "For costly allocations, try direct compaction first."
        let (p, r) = direct_compact(c, nodes, order, INIT_COMPACT_PRIORITY, mt);
        if p.is_some() {
            return Ok(p);
        }
        if c.mm().thp.policy.is_some_and(|t| t.costly_gives_up(gfp, order, r)) {
            return Ok(None);
        }
        if gfp & __GFP_NORETRY != 0 {
            // "sync compaction could be very expensive, so keep using async compaction"
            prio = INIT_COMPACT_PRIORITY;
        }
    }
    let mut no_progress_loops = 0;
    loop {
        if gfp & __GFP_KSWAPD_RECLAIM != 0 {
            wake_all_kswapds(c, gfp, order, nodes);
        }
        if let Some(p) = get_page_from_freelist(c, nodes, order, WMARK_MIN, mt) {
            return Ok(Some(p));
        }
        let (p, reclaimed) = direct_reclaim(c, nodes, order, mt)?;
        if p.is_some() {
            return Ok(p);
        }
        if order > 0 {
            let (p, _) = direct_compact(c, nodes, order, prio, mt);
            if p.is_some() {
                return Ok(p);
            }
        }
        if gfp & __GFP_NORETRY != 0 || (costly && gfp & __GFP_RETRY_MAYFAIL == 0) {
            return Ok(None);
        }
        if reclaimed == 0 {
            no_progress_loops += 1;
            if no_progress_loops > MAX_RECLAIM_RETRIES {
                c.mm().vmstat.count(Ev::OomKill, 1);
                return Err(c.oom(order));
            }
        } else {
            no_progress_loops = 0;
        }
        c.catch_up()?;
    }
}

/// `wake_all_kswapds`: `wakeup_kswapd` for every node of the zonelist.
fn wake_all_kswapds<C: AllocCtx>(c: &mut C, gfp: Gfp, order: u8, nodes: &[u16]) {
    for &n in nodes {
        // ac->highest_zoneidx: every zone (a user page's GFP_HIGHUSER_MOVABLE; the model's
        // kernel allocations have no zone above theirs either).
        c.wakeup_kswapd(n, order, ZONE_MOVABLE, gfp & __GFP_DIRECT_RECLAIM != 0);
    }
}

/// The zones of `nodes`, in order (into a stack buffer: no allocation per fault).
fn zones_of<'a>(mm: &Mm, nodes: &[u16], buf: &'a mut [usize; 64]) -> &'a [usize] {
    let mut k = 0;
    for &n in nodes {
        for &z in &mm.nodes[n as usize].zones {
            if k < buf.len() {
                buf[k] = z;
                k += 1;
            }
        }
    }
    &buf[..k]
}

/// `__alloc_pages_direct_compact`.
fn direct_compact<C: AllocCtx>(c: &mut C, nodes: &[u16], order: u8, prio: CompactPriority, mt: MigrateType) -> (Option<Pfn>, CompactResult) {
    let mut buf = [0usize; 64];
    let mm = c.mm();
    let zones = zones_of(mm, nodes, &mut buf);
    let (r, cost) = compaction::try_to_compact_pages(mm, zones, order, prio, WMARK_MIN);
    c.charge_work(nodes[0], cost, false);
    let stalls_when_deferred = c.mm().thp.policy.is_some_and(|t| t.compact_stall_when_deferred());
    if r < CompactResult::Deferred || (r == CompactResult::Deferred && !stalls_when_deferred) {
        return (None, r);
    }
    c.mm().thp.stat.count(Tc::CompactStall, 1);
    let page = get_page_from_freelist(c, nodes, order, WMARK_MIN, mt);
    let mm = c.mm();
    match page {
        Some(p) => {
            let z = mm.buddy.zone_of(p);
            compaction::compaction_defer_reset(&mut mm.thp.zones[z], order, true);
            mm.thp.stat.count(Tc::CompactSuccess, 1);
        }
        None => mm.thp.stat.count(Tc::CompactFail, 1),
    }
    (page, r)
}

/// `throttle_direct_reclaim` (mm/vmscan.c 6.12), first in `try_to_free_pages`: a task
/// entering global direct reclaim while the first node of its zonelist has no more free
/// pages than half its PFMEMALLOC reserve (`allow_direct_reclaim`: reclaimers' own
/// allocations below the min watermark, such as zram's pool, have eaten into it) counts
/// PGSCAN_DIRECT_THROTTLE and sleeps on `pfmemalloc_wait` — killable, without a timeout for
/// a `__GFP_FS` allocation — until kswapd, which the check wakes, wakes it: after a
/// `balance_pgdat` step that leaves the node allowing direct reclaim, or when it goes to
/// sleep. A node kswapd has given up on never throttles.
fn throttle_direct_reclaim<C: AllocCtx>(c: &mut C, node: u16) -> Result<()> {
    if vmscan::throttle::allow_direct_reclaim(c.mm(), node) {
        return Ok(());
    }
    c.mm().vmstat.count(Ev::PgscanDirectThrottle, 1);
    loop {
        // "kswapd must be awake if processes are being throttled".
        c.wakeup_kswapd(node, 0, ZONE_MOVABLE, true);
        let Some(t) = c.kswapd_next_step(node) else { return Ok(()) };
        c.reclaim_sleep_until(t);
        c.catch_up()?;
        // balance_pgdat wakes the waiters once a step leaves the node allowing direct
        // reclaim (at the end of a priority-loop iteration, not while one is under way).
        if vmscan::throttle::allow_direct_reclaim(c.mm(), node) {
            if let Some(end) = c.kswapd_step_end(node) {
                c.reclaim_sleep_until(end);
                return Ok(());
            }
        }
    }
}

/// `__alloc_pages_direct_reclaim`: the deferred split shrinker and `try_to_free_pages`
/// for the order (a costly order's reclaim/compaction rules are vmscan's:
/// vmscan/reclaim_compaction.rs). Then the daemons catch up with the stalled task and the
/// allocation is tried against the min watermark. Returns (page, pages reclaimed; 1 when
/// reclaim stopped because compaction is ready).
fn direct_reclaim<C: AllocCtx>(c: &mut C, nodes: &Zonelist, order: u8, mt: MigrateType) -> Result<(Option<Pfn>, u64)> {
    throttle_direct_reclaim(c, nodes[0])?;
    let now = c.task_now();
    let (mm, policy) = c.mm_and_policy();
    mm.now = now;
    let (reclaimed, cost) = vmscan::try_to_free_pages_order(mm, policy, nodes, order);
    c.charge_work(nodes[0], cost, true);
    c.catch_up()?;
    let mut page = get_page_from_freelist(c, nodes, order, WMARK_MIN, mt);
    if page.is_none() && reclaimed > 0 {
        // "If an allocation failed after direct reclaim, it could be because pages are
        // pinned on the per-cpu lists": drain_all_pages(NULL) and retry once.
        c.mm().drain_all_pages(None);
        page = get_page_from_freelist(c, nodes, order, WMARK_MIN, mt);
    }
    Ok((page, reclaimed))
}
