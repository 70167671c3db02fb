//! kcompactd (mm/compaction.c): one per node, woken for a high order by a failing
//! allocation (`wakeup_kcompactd`) or by kswapd after a boosted pass, and, with
//! `vm.compaction_proactiveness` (v5.9+), on its 500 ms timeout when the node's
//! fragmentation score is above the watermark. It runs on its own clock.
//!
//! Also here: what runs beside each kswapd step when huge pages and compaction are
//! modelled ([`kswapd_step`]).

use super::{compaction, Tc};
use crate::mm::page_alloc::{WMARK_MIN, ZONE_MOVABLE};
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;
use crate::vmscan::Kswapd;

/// `HPAGE_FRAG_CHECK_INTERVAL_MSEC`.
const HPAGE_FRAG_CHECK_INTERVAL_NS: u64 = 500_000_000;
/// Least time one kcompactd step takes.
const MIN_STEP_NS: u64 = 1_000;

/// kcompactd of one node.
pub struct Kcompactd {
    pub node: u16,
    pub active: bool,
    pub clock: u64,
    pub max_order: u8,
    /// `pgdat->kcompactd_highest_zoneidx`: the lowest zone index the wake-ups since the
    /// last work asked for; the work compacts the zones up to it.
    pub highest_zoneidx: u8,
    pub next_proactive: u64,
    pub proactive_defer: u32,
    pub cpu_ns: u64,
}

impl Kcompactd {
    /// kcompactd of `node`; its timeout (`HPAGE_FRAG_CHECK_INTERVAL_MSEC`) is a kernel
    /// timer, on the simulated clock `sim.time_dilation` times shorter ([`Mm::timer_ns`]).
    pub fn new(mm: &Mm, node: u16) -> Self {
        Kcompactd { node, active: false, clock: 0, max_order: 0, highest_zoneidx: ZONE_MOVABLE, next_proactive: Self::interval(mm), proactive_defer: 0, cpu_ns: 0 }
    }

    fn interval(mm: &Mm) -> u64 {
        mm.timer_ns(HPAGE_FRAG_CHECK_INTERVAL_NS).max(1)
    }

    /// `wakeup_kcompactd(pgdat, order, highest_zoneidx)` (mm/compaction.c 6.12): the
    /// order rises, the zone index falls to the lowest asked for; a running kcompactd
    /// reads them when its work ends (`!wq_has_sleeper`), a sleeping one is woken only if
    /// some zone needs and allows compaction for them (`kcompactd_node_suitable`). A
    /// request it was not woken for waits for its next timeout (`run_due`).
    pub fn wakeup(&mut self, mm: &mut Mm, order: u8, highest_zoneidx: u8, now: u64) {
        self.max_order = self.max_order.max(order);
        self.highest_zoneidx = self.highest_zoneidx.min(highest_zoneidx);
        if self.active || !self.node_suitable(mm) {
            return;
        }
        self.active = true;
        self.clock = self.clock.max(now);
    }

    /// `kcompactd_node_suitable`: a zone up to `highest_zoneidx` where an allocation of
    /// `max_order` fails at the min watermark and compaction may run
    /// (`compaction_suit_allocation_order` = COMPACT_CONTINUE).
    fn node_suitable(&self, mm: &Mm) -> bool {
        let th = mm.cfg.thp.extfrag_threshold as i32;
        mm.eligible_zones(self.node, self.highest_zoneidx)
            .any(|z| compaction::compaction_suitable(mm, z, Some(self.max_order), WMARK_MIN, th) == compaction::CompactResult::Continue)
    }

    /// Run the work due by `t`: `kcompactd_do_work` while woken, and with `proactive`
    /// the timeout path — which runs `kcompactd_do_work` instead when a request is
    /// pending (`kcompactd_work_requested` is tested once more as the wait times out;
    /// kcompactd() in mm/compaction.c 6.12). `kswapd_active`: the node's kswapd is running
    /// (proactive compaction waits for it).
    pub fn run_due(&mut self, mm: &mut Mm, t: u64, kswapd_active: bool, proactive: bool) {
        while self.active && self.clock <= t {
            self.do_work(mm);
        }
        if proactive && mm.cfg.thp.compaction_proactiveness > 0 {
            while self.next_proactive <= t {
                if self.max_order > 0 {
                    self.clock = self.clock.max(self.next_proactive);
                    self.next_proactive += Self::interval(mm);
                    self.do_work(mm);
                } else {
                    self.proactive_compact(mm, kswapd_active);
                }
            }
        }
    }

    /// `kcompactd_do_work`: compact the node's zones up to `highest_zoneidx` for
    /// `max_order`, then reset both (the zone index to the node's highest).
    fn do_work(&mut self, mm: &mut Mm) {
        let order = self.max_order;
        mm.thp.stat.count(Tc::CompactDaemonWake, 1);
        let mut cost = 0;
        for i in 0..mm.nodes[self.node as usize].zones.len() {
            let z = mm.nodes[self.node as usize].zones[i];
            if mm.zone_idx(z) <= self.highest_zoneidx {
                cost += compaction::kcompactd_compact_zone(mm, z, Some(order));
            }
        }
        self.clock += cost.max(MIN_STEP_NS);
        self.cpu_ns += cost;
        self.active = false;
        self.max_order = 0;
        self.highest_zoneidx = ZONE_MOVABLE;
    }

    /// kcompactd's timeout path (v5.9): `should_proactive_compact_node` →
    /// `proactive_compact_node`, deferred `1 << COMPACT_MAX_DEFER_SHIFT` intervals when
    /// the score did not improve.
    fn proactive_compact(&mut self, mm: &mut Mm, kswapd_active: bool) {
        self.next_proactive += Self::interval(mm);
        if self.proactive_defer > 0 {
            self.proactive_defer -= 1;
            return;
        }
        let pro = mm.cfg.thp.compaction_proactiveness;
        let prev = compaction::fragmentation_score_node(mm, self.node);
        if kswapd_active || prev <= compaction::fragmentation_score_wmark(pro, false) {
            return;
        }
        let mut cost = 0;
        for i in 0..mm.nodes[self.node as usize].zones.len() {
            let z = mm.nodes[self.node as usize].zones[i];
            cost += compaction::kcompactd_compact_zone(mm, z, None);
        }
        self.cpu_ns += cost;
        if compaction::fragmentation_score_node(mm, self.node) >= prev {
            self.proactive_defer = 1 << compaction::COMPACT_MAX_DEFER_SHIFT;
        }
    }
}

/// One kswapd step with what runs beside it: kcompactd woken after a boosted pass
/// (`balance_pgdat`: `wakeup_kcompactd(pgdat, pageblock_order, ...)`), and the
/// pageblock skip bits reset when kswapd goes back to sleep (`kswapd_try_to_sleep` →
/// `reset_isolation_suitable`).
#[inline]
pub fn kswapd_step<P: ReclaimPolicy>(mm: &mut Mm, policy: &mut P, k: &mut Kswapd, kc: &mut Kcompactd, until: u64) {
    mm.now = k.clock_ns;
    k.step(mm, policy, until);
    let order = std::mem::take(&mut k.kcompactd_order);
    if order > 0 {
        kc.wakeup(mm, order, k.highest_zoneidx(), k.clock_ns);
    }
    if !k.active {
        compaction::reset_isolation_suitable(mm, k.node);
    }
}
