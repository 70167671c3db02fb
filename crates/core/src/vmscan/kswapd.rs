//! kswapd (`kswapd`, `balance_pgdat`, `kswapd_shrink_node`; mm/vmscan.c v6.15, spec
//! A.4) as a concurrent thread on its own simulated clock.
//!
//! Woken when an allocation finds a node below its low watermark; then it runs
//! `balance_pgdat` one priority-loop iteration (one `shrink_node`) per step, each step
//! advancing kswapd's clock by the reclaim work it did. A policy may end a step inside
//! the iteration, at a batch boundary once kswapd's clock has passed the workload's
//! (the `cond_resched()` between MGLRU's batches and classic's `shrink_lruvec` rounds,
//! [`ScanControl::preempted`](super::ScanControl)); the
//! workload runs, and the next step goes on with the iteration. The engine runs steps until
//! kswapd's clock catches up with the workload's, so a workload that faults faster than
//! kswapd frees memory falls to the min watermark and enters direct reclaim — as on a
//! real machine. kswapd's CPU time is accounted apart from the workload's.
//!
//! Per pass: priority 12..1; a step whose `nr_scanned` reached `nr_to_reclaim` keeps
//! the priority, otherwise (or when nothing was reclaimed) it drops by one; a pass that
//! reclaimed nothing counts a `kswapd_failures`, and after `MAX_RECLAIM_RETRIES` failures
//! kswapd stops being woken until some reclaim succeeds on the node. A fruitless pass
//! in cache-trim mode restarts once with `no_cache_trim_mode`.
//! Watermark boosting (v5.0 1c30844d2dfe; `vm.watermark_boost_factor`, 15000 by
//! default): a boosted zone wakes kswapd even
//! when balanced; a pass that starts boosted reclaims `Σ watermark_boost` pages without
//! swap or writeback (or, if the node is below its high watermark, normally), then
//! lowers the boosts and asks for `wakeup_kcompactd(pgdat, pageblock_order)`
//! ([`Kswapd::kcompactd_order`]).
//! `kswapd_try_to_sleep` (mm/vmscan.c 6.12 and v6.15): after each pass, a node that
//! `prepare_kswapd_sleep` finds balanced (or hopeless) makes kswapd nap `HZ/10`; a
//! `wakeup_kswapd` during the nap (an allocation below the low watermark) counts
//! KSWAPD_LOW_WMARK_HIT_QUICKLY and starts a pass, a nap that ends with the node below its
//! high watermark counts KSWAPD_HIGH_WMARK_HIT_QUICKLY and starts one, else kswapd sleeps
//! until woken. A pass that ends unbalanced goes round at once and counts
//! KSWAPD_HIGH_WMARK_HIT_QUICKLY. The nap is on the simulated clock.
//! A wake-up starts kswapd `cost.kswapd_wakeup_ns` after the allocation that woke it (the
//! scheduler's latency for a thread woken on another CPU; 0 by default; given as a
//! distribution, each wake-up draws its latency from kswapd's own generator), and only then
//! does it read the wake-ups' order and zone (mm/vmscan.c 6.12 `kswapd()`, after
//! `kswapd_try_to_sleep`): those that came meanwhile widen its pass.
//! `reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)` (see policy/classic/vmscan.rs
//! `writeback_feedback`) sleeps on kswapd's clock without CPU.
//! High orders (mm/vmscan.c 6.12 `kswapd`, `wakeup_kswapd`, `kswapd_try_to_sleep`): a
//! wake-up raises `pgdat->kswapd_order` and is ignored if the node is balanced *for that
//! order* (then, for an allocation that cannot reclaim directly, kcompactd is woken
//! instead); a pass balances for the order it read (`alloc_order`) until it has
//! reclaimed `compact_gap(order)` pages, then for order 0 (`kswapd_shrink_node`:
//! "Fragmentation may mean that the system cannot be rebalanced for high-order
//! allocations"); going to nap, kswapd wakes kcompactd for `alloc_order` ("We have freed
//! the memory, now we should compact it"). `highest_zoneidx` likewise (6.12
//! `kswapd_highest_zoneidx`): a wake-up raises `pgdat->kswapd_highest_zoneidx`, a pass
//! reads it (keeping its last one when no wake-up asked) and balances, boosts, marks
//! `ZONE_RECLAIM_ACTIVE` and reclaims (`sc.reclaim_idx`) only the zones up to it — every
//! zone for a user page's allocation, the zone alone when `rmqueue` wakes kswapd for a
//! boosted watermark. `pgdat_balanced` and `nr_to_reclaim` use `high_wmark_pages`,
//! which adds the boost (spec A.5).

use super::{shrink_node, snapshot_refaults, Reclaimer, ScanControl, DEF_PRIORITY, MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX};
use crate::mm::page_alloc::{PAGEBLOCK_ORDER, ZONE_MOVABLE};
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;

/// The least simulated time one step takes (loop overhead, `cond_resched`).
const MIN_STEP_NS: u64 = 1_000;
/// `schedule_timeout(HZ/10)` in `kswapd_try_to_sleep`.
pub const NAP_NS: u64 = 100_000_000;

pub struct Kswapd {
    pub node: u16,
    /// Running `balance_pgdat` (false = asleep).
    pub active: bool,
    /// kswapd's own clock (ns); steps run while it is behind the workload's.
    pub clock_ns: u64,
    /// CPU time kswapd spent reclaiming.
    pub cpu_ns: u64,
    sc: ScanControl,
    /// `nr_boost_reclaim` of the current pass (0: normal reclaim).
    nr_boost_reclaim: u64,
    /// Whether the current iteration of the priority loop reclaims for a boost, and
    /// `sc.nr_reclaimed` when it began (it may take several steps).
    iteration_boosting: bool,
    iteration_reclaimed: u64,
    /// `zone_boosts[]` of the current pass, per zone of the node (empty: not boosted).
    zone_boosts: Vec<u64>,
    /// The order kswapd asks kcompactd to compact for (`wakeup_kcompactd(pgdat, order)`;
    /// 0: none): `pageblock_order` after a boosted pass, `alloc_order` as it naps. The
    /// owner wakes kcompactd and clears it.
    pub kcompactd_order: u8,
    /// `pgdat->kswapd_order`: the highest order wake-ups asked for since kswapd last read it.
    kswapd_order: u8,
    /// The order the current `balance_pgdat` was asked for (`alloc_order`).
    alloc_order: u8,
    /// `pgdat->kswapd_highest_zoneidx`: the highest zone wake-ups asked for since kswapd
    /// last read it (None: `MAX_NR_ZONES`, nobody asked).
    kswapd_highest_zoneidx: Option<u8>,
    /// The zone the current `balance_pgdat` balances up to (`kswapd()`'s `highest_zoneidx`,
    /// kept from pass to pass).
    highest_zoneidx: u8,
    /// The order the last `balance_pgdat` balanced for (`reclaim_order`; below
    /// `alloc_order` when it fell back to order 0).
    reclaim_order: u8,
    /// In the nap, which ends at `clock_ns` (`active` stays set so that the owner steps it then).
    napping: bool,
    /// `balance_pgdat` passes for ZONE_DMA alone (`highest_zoneidx` 0: `rmqueue`'s wake-up for
    /// a boosted DMA), what the guest's `@@vmpass` lines show with zid 0.
    pub dma_passes: u64,
    /// `balance_pgdat` passes that found the node balanced before their first
    /// `kswapd_shrink_node` (PAGEOUTRUN counted, nothing scanned): the guest's `@@vmpass`
    /// lines with no shrink call (lowest priority 99).
    pub empty_passes: u64,
    /// Whether the current pass has called `kswapd_shrink_node`.
    shrunk: bool,
    /// Per pass that shrank: the pages it reclaimed (`sc.nr_reclaimed` at its end), and the
    /// sum over those passes of the lowest priority each reached: what the guest's
    /// `@@vmpass` RECLAIMED and MIN_PRIORITY say.
    pub pass_reclaimed: Vec<u32>,
    pub pass_min_priority_sum: i64,
    /// The lowest priority the current pass has shrunk at.
    min_priority: i32,
    /// When its last `balance_pgdat` step ended (`kswapd_shrink_node` done: tasks waiting on
    /// `pfmemalloc_wait` are woken then).
    step_end: u64,
    /// Draws the wake-up latencies of a `cost.kswapd_wakeup_ns` distribution (seeded by
    /// `seed` and the node; untouched for a single value).
    rng: reclaimlab_trace::Rng,
    /// Woken, not yet running (its first step reads the wake-ups' order and zone): `pgalloc_*`
    /// summed and `allocstall` at the wake-up. None: no wake-up pending.
    pending_wake: Option<(u64, u64)>,
    /// Per pass a wake-up started: the pages allocated (`pgalloc_*`, every task) between the
    /// wake-up and kswapd's first step, what the guest's `@@kswapd_wake` PAGES field counts
    /// (kmem's mm_page_alloc over the same window).
    pub wake_window_pages: Vec<u64>,
    /// Of those windows, how many saw a direct reclaim (`allocstall`; the guest's STALLS).
    pub wake_windows_stalled: u64,
}

/// `pgalloc_dma` + `pgalloc_normal` so far.
fn pgalloc(mm: &Mm) -> u64 {
    mm.vmstat.get(Ev::PgallocDma) + mm.vmstat.get(Ev::PgallocNormal)
}

impl Kswapd {
    /// kswapd of `node`; `seed` (the `seed` knob) seeds its wake-up latencies' draws.
    pub fn new(node: u16, seed: u64) -> Self {
        Kswapd {
            node,
            active: false,
            clock_ns: 0,
            cpu_ns: 0,
            sc: ScanControl::new(Reclaimer::Kswapd, 0),
            nr_boost_reclaim: 0,
            iteration_boosting: false,
            iteration_reclaimed: 0,
            zone_boosts: Vec::new(),
            kcompactd_order: 0,
            kswapd_order: 0,
            alloc_order: 0,
            kswapd_highest_zoneidx: None,
            highest_zoneidx: ZONE_MOVABLE,
            reclaim_order: 0,
            napping: false,
            step_end: 0,
            dma_passes: 0,
            empty_passes: 0,
            pass_reclaimed: Vec::new(),
            pass_min_priority_sum: 0,
            min_priority: DEF_PRIORITY,
            shrunk: false,
            rng: reclaimlab_trace::Rng::new(seed ^ 0x6B73_7761_7064_0000 ^ u64::from(node)),
            pending_wake: None,
            wake_window_pages: Vec::new(),
            wake_windows_stalled: 0,
        }
    }

    /// `prepare_kswapd_sleep(pgdat, order)`: the node is hopeless or balanced for `order`;
    /// a balanced node's PGDAT_DIRTY, PGDAT_WRITEBACK and its root lruvec's
    /// LRUVEC_*_CONGESTED are cleared (`clear_pgdat_congested`, 6.12).
    fn can_sleep(&self, mm: &mut Mm, order: u8) -> bool {
        if mm.nodes[self.node as usize].kswapd_failures >= MAX_RECLAIM_RETRIES {
            return true;
        }
        if !mm.pgdat_balanced(self.node, order, self.highest_zoneidx) {
            return false;
        }
        let n = &mut mm.nodes[self.node as usize];
        n.pgdat_dirty = false;
        n.pgdat_writeback = false;
        let root = mm.lruvec_id(crate::mm::memcontrol::ROOT_MEMCG, self.node) as usize;
        mm.lruvecs[root].node_congested = false;
        mm.lruvecs[root].cgroup_congested = false;
        true
    }

    /// The zone its current (or last) `balance_pgdat` balances up to.
    pub fn highest_zoneidx(&self) -> u8 {
        self.highest_zoneidx
    }

    /// When its last priority-loop iteration ended: None while one is under way (it
    /// let the workload run before the end of its `shrink_node`).
    pub fn step_end(&self) -> Option<u64> {
        (!self.sc.preempted).then_some(self.step_end)
    }

    /// When its next `balance_pgdat` step runs: None while it sleeps or naps.
    pub fn next_step(&self) -> Option<u64> {
        (self.active && !self.napping).then_some(self.clock_ns)
    }

    /// `wakeup_kswapd(zone, gfp, order, highest_zoneidx)` (mm/vmscan.c 6.12) at time
    /// `now` for an allocation of `order` that may use the zones up to `highest_zoneidx`
    /// and may (`direct_reclaim`) or may not reclaim itself. Returns the order to wake
    /// kcompactd for instead when the node needs no reclaim (0: none).
    pub fn wakeup(&mut self, mm: &mut Mm, now: u64, order: u8, highest_zoneidx: u8, direct_reclaim: bool) -> u8 {
        if self.kswapd_highest_zoneidx.map_or(true, |curr| curr < highest_zoneidx) {
            self.kswapd_highest_zoneidx = Some(highest_zoneidx);
        }
        self.kswapd_order = self.kswapd_order.max(order);
        if self.active && !self.napping {
            // !waitqueue_active: it is running and will read kswapd_order.
            return 0;
        }
        // "Hopeless node" or balanced and not boosted (pgdat_watermark_boosted).
        let boosted = mm.eligible_zones(self.node, highest_zoneidx).any(|z| mm.buddy.zones[z].watermark_boost > 0);
        if mm.nodes[self.node as usize].kswapd_failures >= MAX_RECLAIM_RETRIES || (mm.pgdat_balanced(self.node, order, highest_zoneidx) && !boosted) {
            // "There may be plenty of free memory available, but it's too fragmented for
            // high-order allocations. Wake up kcompactd".
            return if direct_reclaim { 0 } else { order };
        }
        if self.napping {
            // Woken before the nap's end (schedule_timeout returned time left): the
            // order the nap was for stands.
            self.napping = false;
            self.clock_ns = now;
            self.kswapd_order = self.kswapd_order.max(self.reclaim_order);
            mm.vmstat.count(Ev::KswapdLowWmarkHitQuickly, 1);
        }
        self.active = true;
        // wake_up_interruptible (mm/vmscan.c 6.12 wakeup_kswapd) makes kswapd runnable; it
        // starts `cost.kswapd_wakeup_ns` later (one draw of it a wake-up), and only then,
        // back in `kswapd()`'s loop after `kswapd_try_to_sleep`, reads `kswapd_order` and
        // `kswapd_highest_zoneidx`: the wake-ups until then (a Normal zone's after a
        // DMA-only one) widen the pass.
        self.clock_ns = self.clock_ns.max(now + mm.cfg.cost.kswapd_wakeup_ns.draw(&mut self.rng));
        self.pending_wake = Some((pgalloc(mm), mm.vmstat.get(Ev::AllocstallNormal)));
        0
    }

    /// The kswapd loop after `kswapd_try_to_sleep`: read and clear `kswapd_order` and
    /// `kswapd_highest_zoneidx` (`kswapd_highest_zoneidx()` keeps the last pass's zone
    /// when none was asked), run `balance_pgdat` for them.
    fn begin_balance(&mut self, mm: &mut Mm) {
        self.alloc_order = std::mem::take(&mut self.kswapd_order);
        self.highest_zoneidx = self.kswapd_highest_zoneidx.take().unwrap_or(self.highest_zoneidx);
        self.start_pass(mm, false);
    }

    /// Start `balance_pgdat` for `alloc_order` (counting PAGEOUTRUN), or its `restart:`
    /// with `no_cache_trim_mode` (not counted again).
    fn start_pass(&mut self, mm: &mut Mm, no_cache_trim_mode: bool) {
        self.sc = ScanControl::new(Reclaimer::Kswapd, 0);
        self.sc.order = self.alloc_order;
        self.sc.reclaim_idx = self.highest_zoneidx;
        self.sc.no_cache_trim_mode = no_cache_trim_mode;
        if !no_cache_trim_mode {
            mm.vmstat.count(Ev::Pageoutrun, 1);
            self.shrunk = false;
            self.min_priority = DEF_PRIORITY;
            self.dma_passes += u64::from(self.highest_zoneidx == crate::mm::page_alloc::ZoneType::Dma as u8);
            // set_reclaim_active(pgdat, highest_zoneidx): the CPUs keep fewer free pages
            // on those zones' lists (pcp.rs).
            mm.set_reclaim_active(self.node, self.highest_zoneidx, true);
            // balance_pgdat: account for the reclaim boost of the eligible zones.
            let idx = self.highest_zoneidx;
            self.zone_boosts.clear();
            self.zone_boosts.extend(mm.nodes[self.node as usize].zones.iter().map(|&z| if mm.zone_idx(z) <= idx { mm.buddy.zones[z].watermark_boost } else { 0 }));
            self.nr_boost_reclaim = self.zone_boosts.iter().sum();
            if self.nr_boost_reclaim == 0 {
                self.zone_boosts.clear();
            }
        }
    }

    /// One iteration of `balance_pgdat`'s priority loop, or its part until kswapd's clock
    /// passes `until` (the workload's clock) at a batch boundary of the policy's
    /// `shrink_node` (its `cond_resched()`; vmscan/mod.rs `ScanControl::preempted`): the
    /// workload then runs to kswapd's clock and the next step goes on with the iteration.
    /// kswapd and the workload run on different CPUs, so the workload's allocations during
    /// the step are what its batch-by-batch watermark tests see.
    pub fn step<P: ReclaimPolicy>(&mut self, mm: &mut Mm, p: &mut P, until: u64) {
        debug_assert!(self.active);
        if self.napping {
            self.end_nap(mm);
            return;
        }
        if let Some((pages, stalls)) = self.pending_wake.take() {
            self.wake_window_pages.push(pgalloc(mm) - pages);
            self.wake_windows_stalled += u64::from(mm.vmstat.get(Ev::AllocstallNormal) > stalls);
            self.begin_balance(mm);
        }
        let node = self.node;
        let cost_before = self.sc.cost_ns;
        if !self.sc.preempted && !self.begin_iteration(mm, p) {
            return;
        }
        self.sc.preempt_at_ns = cost_before + until.saturating_sub(self.clock_ns);
        self.shrunk = true;
        shrink_node(mm, p, node, &mut self.sc);
        // After the shrink: MGLRU's set_initial_priority sets sc->priority inside it, and
        // its evictions trace that one.
        self.min_priority = self.min_priority.min(self.sc.priority);
        // reclaim_throttle's sleep is on kswapd's clock, not its CPU.
        let slept = std::mem::take(&mut self.sc.throttle_ns);
        let spent = (self.sc.cost_ns - cost_before).max(MIN_STEP_NS);
        self.clock_ns += spent + slept;
        self.cpu_ns += spent;
        if self.sc.preempted {
            return;
        }
        self.step_end = self.clock_ns;
        let boosting = self.iteration_boosting;
        let sc = &mut self.sc;
        // "If twice the allocation size has been reclaimed then recheck watermarks only
        // at order-0 to prevent excessive reclaim."
        if sc.order > 0 && sc.nr_reclaimed >= crate::thp::compaction::compact_gap(sc.order) {
            sc.order = 0;
        }
        // "Limit the priority of boosting to avoid reclaim writeback."
        let raise_priority = sc.nr_scanned < sc.nr_to_reclaim && !(boosting && sc.priority == DEF_PRIORITY - 2);
        let nr_reclaimed = sc.nr_reclaimed - self.iteration_reclaimed;
        self.nr_boost_reclaim -= self.nr_boost_reclaim.min(nr_reclaimed);
        if boosting && nr_reclaimed == 0 {
            // "If reclaim made no progress for a boost, stop reclaim."
            if self.sc.nr_reclaimed == 0 {
                mm.nodes[node as usize].kswapd_failures += 1;
            }
            self.finish_pass(mm);
            return;
        }
        if raise_priority || nr_reclaimed == 0 {
            self.sc.priority -= 1;
        }
        if self.sc.priority < 1 {
            if self.sc.nr_reclaimed == 0 && !self.sc.no_cache_trim_mode && self.sc.cache_trim_mode_failed {
                self.start_pass(mm, true);
                return;
            }
            if self.sc.nr_reclaimed == 0 {
                mm.nodes[node as usize].kswapd_failures += 1;
            }
            self.finish_pass(mm);
        }
    }

    /// The top of `balance_pgdat`'s loop: finish the pass if the node is balanced (false),
    /// else set up `kswapd_shrink_node` (aging, `nr_to_reclaim`).
    fn begin_iteration<P: ReclaimPolicy>(&mut self, mm: &mut Mm, p: &mut P) -> bool {
        let node = self.node;
        let balanced = mm.pgdat_balanced(node, self.sc.order, self.highest_zoneidx);
        if !balanced && self.nr_boost_reclaim > 0 {
            // "If the pgdat is imbalanced then ignore boosting ... and restart."
            self.nr_boost_reclaim = 0;
            self.sc.priority = DEF_PRIORITY;
        }
        if balanced && self.nr_boost_reclaim == 0 {
            self.step_end = self.clock_ns;
            self.finish_pass(mm);
            return false;
        }
        self.iteration_boosting = self.nr_boost_reclaim > 0;
        let sc = &mut self.sc;
        // "Do not writeback or swap pages for boosted reclaim."
        sc.may_writepage = !self.iteration_boosting;
        sc.may_swap = !self.iteration_boosting;
        p.kswapd_age_node(mm, node, sc);
        sc.nr_scanned = 0;
        self.iteration_reclaimed = sc.nr_reclaimed;
        // kswapd_shrink_node: "Reclaim a number of pages proportional to the number of zones".
        sc.nr_to_reclaim = mm.eligible_zones(node, sc.reclaim_idx).map(|z| mm.buddy.zones[z].high_wmark_pages().max(SWAP_CLUSTER_MAX)).sum();
        true
    }

    /// End of `balance_pgdat` (it returns `sc.order` as `reclaim_order`): snapshot
    /// refaults; `kswapd_try_to_sleep` — for `alloc_order` and `reclaim_order` if the pass
    /// fell back to order 0, else for the order wake-ups asked since (the loop's top) —
    /// naps if balanced or hopeless, else goes around again.
    fn finish_pass(&mut self, mm: &mut Mm) {
        self.empty_passes += u64::from(!self.shrunk);
        if self.shrunk {
            self.pass_reclaimed.push(u32::try_from(self.sc.nr_reclaimed).unwrap_or(u32::MAX));
            self.pass_min_priority_sum += i64::from(self.min_priority);
        }
        if !self.zone_boosts.is_empty() {
            // out: "account for the reclaim done in this pass", then "as there is now
            // likely space, wakeup kcompactd to defragment pageblocks".
            for (i, &b) in self.zone_boosts.iter().enumerate() {
                let z = mm.nodes[self.node as usize].zones[i];
                let zb = &mut mm.buddy.zones[z].watermark_boost;
                *zb -= (*zb).min(b);
            }
            self.zone_boosts.clear();
            self.nr_boost_reclaim = 0;
            self.kcompactd_order = self.kcompactd_order.max(PAGEBLOCK_ORDER);
        }
        snapshot_refaults(mm, None, self.node);
        // clear_reclaim_active(pgdat, highest_zoneidx) at balance_pgdat's end.
        mm.set_reclaim_active(self.node, self.highest_zoneidx, false);
        self.reclaim_order = self.sc.order;
        if self.reclaim_order >= self.alloc_order {
            // The loop's top: alloc_order = reclaim_order = pgdat->kswapd_order,
            // highest_zoneidx = kswapd_highest_zoneidx(pgdat, highest_zoneidx) (read, not
            // cleared).
            self.alloc_order = self.kswapd_order;
            self.reclaim_order = self.kswapd_order;
            self.highest_zoneidx = self.kswapd_highest_zoneidx.unwrap_or(self.highest_zoneidx);
        }
        if self.can_sleep(mm, self.reclaim_order) {
            self.napping = true;
            self.kcompactd_order = self.kcompactd_order.max(self.alloc_order);
            self.clock_ns += mm.timer_ns(NAP_NS);
        } else {
            // kswapd_try_to_sleep: no nap, and still not balanced.
            mm.vmstat.count(Ev::KswapdHighWmarkHitQuickly, 1);
            self.begin_balance(mm);
        }
    }

    /// The nap ran its full `HZ/10`: sleep until woken if the node can sleep, else reclaim again.
    fn end_nap(&mut self, mm: &mut Mm) {
        self.napping = false;
        if self.can_sleep(mm, self.reclaim_order) {
            self.active = false;
        } else {
            mm.vmstat.count(Ev::KswapdHighWmarkHitQuickly, 1);
            self.begin_balance(mm);
        }
    }
}
