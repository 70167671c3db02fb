//! Per-CPU page lists (`struct per_cpu_pages`, mm/page_alloc.c 6.12): order-0 frames a CPU
//! took from the buddy lists in a batch, or freed, kept off the zone's free lists. Frames on
//! a pcp list are neither free (`NR_FREE_PAGES`, which every watermark check reads) nor in
//! use, so kswapd stops when the buddy lists reach the high watermark while the CPUs still
//! hold pages, and an allocating CPU drops the zone's free count by a whole batch at once.
//!
//! Followed from 6.12 (cited at each function): `rmqueue_pcplist` / `nr_pcp_alloc` /
//! `rmqueue_bulk` (the allocation batch doubles, `alloc_factor`, while a CPU only
//! allocates, up to `batch << CONFIG_PCP_BATCH_SCALE_MAX`), `free_unref_page_commit` /
//! `nr_pcp_high` / `nr_pcp_free` / `free_pcppages_bulk`, the automatic `pcp->high` between
//! `high_min` and `high_max` (`zone_set_pageset_high_and_batch`: the low watermark, and an
//! eighth of the zone, split over the node's CPUs; `vm.percpu_pagelist_high_fraction` fixes
//! it), `ZONE_BELOW_HIGH` (set by `get_page_from_freelist`, cleared by a bulk free that
//! leaves the zone above its high watermark), `ZONE_RECLAIM_ACTIVE` (set while kswapd's
//! `balance_pgdat` runs: a CPU then keeps at most `batch * 4`), `decay_pcp_high` (every
//! `vmstat_update`, 1 s), `drain_pages_zone` / `drain_all_pages` / `drain_local_pages`.
//!
//! Versions (`machine.pcp_lists`, [`PcpRules`]): this file is 6.12's; `pcp/v5_13.rs` is the
//! one-level diff to the rules every kernel up to 5.13 ran (fixed `high`, fixed batches);
//! `none` is the model without lists (every frame straight to and from the free lists).
//!
//! Abstractions: only order-0 lists (the kernel also keeps orders 1..3 and THP-sized
//! frees there; the model frees those to the buddy lists directly); two CPUs do the work —
//! the workload's ([`TASK_CPU`]) and the one kswapd and the other kernel threads run on
//! ([`Pcp::daemon_cpu`]); the others' lists stay empty but count in the split of `high`.
//!
//! Host layout: each list is a ring buffer of frame numbers ([`PcpList`]), not a list
//! through the frames' links as the kernel's `page->pcp_list` is: the kernel uses both
//! ends (a free and an allocation at the head, a refill and a bulk free at the tail), which
//! a deque keeps in the same order without touching any per-frame word.

mod v5_13;

use std::collections::VecDeque;

use super::lists::ListArena;
use super::page::Owner;
use super::page_alloc::{BuddyAllocator, MigrateType, Pfn, Zone, MIGRATE_PCPTYPES};

/// Whose per-CPU page list rules a machine runs (`machine.pcp_lists`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcpRules {
    /// No lists: every order-0 frame straight from and to the buddy lists.
    None,
    /// Up to v5.13 (`v5_13.rs`).
    V5_13,
    /// v6.12 (this file; v6.7's automatic `high` and v6.8's `free_count`).
    V6_12,
}

impl PcpRules {
    pub fn parse(v: &str) -> Result<PcpRules, String> {
        [PcpRules::V6_12, PcpRules::V5_13, PcpRules::None].into_iter().find(|r| r.name() == v).ok_or_else(|| format!("expected 6.12, 5.13 or none, got '{v}'"))
    }

    pub fn name(self) -> &'static str {
        match self {
            PcpRules::None => "none",
            PcpRules::V5_13 => "5.13",
            PcpRules::V6_12 => "6.12",
        }
    }
}

/// `CONFIG_PCP_BATCH_SCALE_MAX` (mm/Kconfig, default 5).
pub const PCP_BATCH_SCALE_MAX: u32 = 5;
/// `MIN_PERCPU_PAGELIST_HIGH_FRACTION`: `high_max` is an eighth of the zone.
pub const MIN_PERCPU_PAGELIST_HIGH_FRACTION: u64 = 8;
/// `vmstat_update`'s period, `sysctl_stat_interval` = HZ (ns).
pub const STAT_INTERVAL_NS: u64 = 1_000_000_000;
/// The CPU the workload runs on at the start (`machine.task_cpus` may move it).
pub const TASK_CPU: u32 = 0;

/// The CPUs of `node` when `nr_cpus` are split evenly over `nr_nodes` (the first
/// `nr_cpus % nr_nodes` nodes one more), numbered node by node; empty for a node without
/// CPUs. A program's tasks run on their node's CPUs (sim/process.rs), its kswapd on them
/// too (sim/daemons.rs).
pub fn cpus_of_node(nr_cpus: u32, nr_nodes: u32, node: u32) -> std::ops::Range<u32> {
    let (per, extra) = (nr_cpus / nr_nodes.max(1), nr_cpus % nr_nodes.max(1));
    let first = node * per + node.min(extra);
    first..first + per + u32::from(node < extra)
}

/// One `pcp->lists[]` entry: the head is the back of the deque (`list_add`,
/// `list_first_entry`), the tail its front (`list_add_tail`, `list_last_entry`).
#[derive(Clone, Debug, Default)]
struct PcpList(VecDeque<Pfn>);

impl PcpList {
    /// `list_add`.
    #[inline(always)]
    fn add_head(&mut self, pfn: Pfn) {
        self.0.push_back(pfn);
    }

    /// `list_add_tail`.
    #[inline(always)]
    fn add_tail(&mut self, pfn: Pfn) {
        self.0.push_front(pfn);
    }

    /// `list_first_entry` + `list_del`.
    #[inline(always)]
    fn take_head(&mut self) -> Option<Pfn> {
        self.0.pop_back()
    }

    /// `list_last_entry` + `list_del`.
    #[inline(always)]
    fn take_tail(&mut self) -> Option<Pfn> {
        self.0.pop_front()
    }

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Head to tail.
    fn iter(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.0.iter().rev().copied()
    }
}

/// The kernel's `clamp(v, lo, hi)`: `min(max(v, lo), hi)`, which (unlike `Ord::clamp`)
/// takes `lo > hi` and then gives `hi`.
#[inline(always)]
fn kclamp(v: u32, lo: u32, hi: u32) -> u32 {
    v.max(lo).min(hi)
}

/// One CPU's pageset of one zone.
#[derive(Clone, Debug)]
struct PerCpuPages {
    count: u32,
    high: u32,
    high_min: u32,
    high_max: u32,
    batch: u32,
    alloc_factor: u32,
    free_count: u32,
    /// The `MIGRATE_PCPTYPES` order-0 lists (`pcp->lists[order_to_pindex(mt, 0)]`).
    lists: [PcpList; MIGRATE_PCPTYPES],
}

impl PerCpuPages {
    /// `rmqueue_pcplist`'s refill of empty list `mt`: `rmqueue_bulk` of `nr_pcp_alloc`
    /// frames (5.13: one `batch`), each added at the tail.
    #[allow(clippy::too_many_arguments)] // the list arena and the owner words beside the block
    #[inline(never)]
    fn refill(&mut self, buddy: &mut BuddyAllocator, lists: &mut ListArena, owner: &mut [Owner], zone: usize, mt: MigrateType, rules: PcpRules, below_high: bool) {
        let batch = if rules == PcpRules::V5_13 { self.batch } else { self.nr_pcp_alloc(below_high) };
        let list = &mut self.lists[mt as usize];
        list.0.reserve(batch as usize);
        let steals = buddy.stats.fallback_steals;
        let n = buddy.rmqueue_bulk(lists, owner, zone, mt, batch, |pfn| list.add_tail(pfn));
        self.count += n;
        let s = &mut buddy.stats;
        (s.pcp_refills, s.pcp_refill_frames) = (s.pcp_refills + 1, s.pcp_refill_frames + n as u64);
        s.pcp_refills_stealing += (s.fallback_steals > steals) as u64;
    }

    /// `nr_pcp_alloc` for order 0.
    fn nr_pcp_alloc(&mut self, below_high: bool) -> u32 {
        let base = self.batch as i64;
        let mut high = kclamp(self.high, self.high_min, self.high_max) as i64;
        self.high = high as u32;
        // "Check for PCP disabled or boot pageset"
        if high < base {
            return 1;
        }
        let mut batch = base << self.alloc_factor;
        // "If we had larger pcp->high, we could avoid to allocate from zone."
        if self.high_min != self.high_max && !below_high {
            high = (high + batch).min(self.high_max as i64);
            self.high = high as u32;
        }
        let max_nr_alloc = (high - self.count as i64 - base).max(base);
        // "Double the number of pages allocated each time there is subsequent allocation
        // of order-0 pages without any freeing."
        if batch <= max_nr_alloc && self.alloc_factor < PCP_BATCH_SCALE_MAX {
            self.alloc_factor += 1;
        }
        batch = batch.min(max_nr_alloc);
        if batch > 1 {
            batch = batch.max(2);
        }
        batch as u32
    }

    /// `nr_pcp_high` (not `free_high`: order 0 only).
    fn nr_pcp_high(&mut self, reclaim_active: bool, below_high: bool) -> u32 {
        let high = kclamp(self.high, self.high_min, self.high_max);
        self.high = high;
        if high == 0 {
            return 0;
        }
        let batch = self.batch;
        // "If reclaim is active, limit the number of pages that can be stored on pcp lists"
        if reclaim_active {
            let free_count = self.free_count.max(batch);
            self.high = high.saturating_sub(free_count).max(self.high_min);
            return (batch << 2).min(self.high);
        }
        if self.high_min == self.high_max {
            return high;
        }
        if below_high {
            let free_count = self.free_count.max(batch);
            self.high = high.saturating_sub(free_count).max(self.high_min);
            return self.count.max(self.high_min);
        }
        if self.count >= high {
            // "pcp->high should be large enough to hold batch freed pages"
            let need_high = self.free_count + batch;
            if self.high < need_high {
                self.high = kclamp(need_high, self.high_min, self.high_max);
            }
        }
        high
    }

    /// `nr_pcp_free` (not `free_high`).
    fn nr_pcp_free(&self, high: u32) -> u32 {
        let batch = self.batch as i64;
        let high = high as i64;
        // "Check for PCP disabled or boot pageset"
        if high < batch {
            return 1;
        }
        // clamp_t(int, pcp->free_count, min_nr_free, max_nr_free) = min(max(v, lo), hi)
        (self.free_count as i64).max(batch).min(high - batch) as u32
    }
}

/// Every zone's pagesets, and the zone flags they read.
pub struct Pcp {
    rules: PcpRules,
    /// Zone-major: `sets[zone * nr_cpus + cpu]`.
    sets: Vec<PerCpuPages>,
    nr_cpus: u32,
    /// Per zone: the flags the lists read.
    zone_flags: Vec<ZoneFlags>,
    /// The CPU the running code is on (`smp_processor_id()`).
    pub cpu: u32,
    /// The CPU a trace's task runs on (`TASK_CPU`, or where `machine.task_cpus` moved it).
    pub task_cpu: u32,
    /// When `vmstat_update` next decays the pagesets (ns, simulated clock).
    pub next_update: u64,
}

/// The zone flags the lists read (`zone->flags`).
#[derive(Clone, Copy, Default)]
struct ZoneFlags {
    /// `ZONE_BELOW_HIGH`.
    below_high: bool,
    /// `ZONE_RECLAIM_ACTIVE`.
    reclaim_active: bool,
}

/// The list a freed frame joins: its pageblock's migrate type, "We only track unmovable,
/// reclaimable and movable on pcp lists" (`free_unref_page`).
#[inline(always)]
fn pcp_migratetype(buddy: &BuddyAllocator, pfn: Pfn) -> usize {
    let mt = buddy.pb_mt(pfn) as usize;
    if mt >= MIGRATE_PCPTYPES {
        MigrateType::Movable as usize
    } else {
        mt
    }
}

/// `zone_batchsize`.
fn zone_batchsize(managed: u64) -> u32 {
    // "The number of pages to batch allocate is either ~0.1% of the zone or 1MB, whichever is smaller."
    let mut batch = (managed >> 10).min((1 << 20) / reclaimlab_trace::PAGE_SIZE) / 4;
    batch = batch.max(1);
    // rounddown_pow_of_two(batch + batch/2) - 1
    let b = batch + batch / 2;
    ((1u64 << (63 - b.leading_zeros())) - 1) as u32
}

/// `zone_highsize(zone, batch, 0, high_fraction)`: `nr_split_cpus` are the CPUs of the
/// zone's node (all CPUs for a node that has none).
fn zone_highsize(z: &Zone, batch: u32, nr_split_cpus: u32, high_fraction: u64) -> u32 {
    let total = z.managed_pages.checked_div(high_fraction).unwrap_or_else(|| z.low_wmark_pages());
    let high = total / nr_split_cpus.max(1) as u64;
    // "Ensure high is at least batch*4."
    high.max((batch as u64) << 2) as u32
}

impl Pcp {
    /// The pagesets of `zones` (watermarks already set) on a machine of `nr_cpus` CPUs split
    /// evenly over `nr_nodes` nodes; `high_fraction` is `vm.percpu_pagelist_high_fraction`
    /// (5.13's `vm.percpu_pagelist_fraction` under its rules).
    pub fn new(zones: &[Zone], nr_cpus: u32, nr_nodes: u32, high_fraction: u64, rules: PcpRules) -> Pcp {
        let nr_cpus = nr_cpus.max(1);
        let mut sets = Vec::with_capacity(zones.len() * nr_cpus as usize);
        for z in zones {
            let node_cpus = cpus_of_node(nr_cpus, nr_nodes, z.node as u32).len() as u32;
            let split = if node_cpus == 0 { nr_cpus } else { node_cpus };
            // zone_set_pageset_high_and_batch
            let (batch, high_min, high_max) = if rules == PcpRules::V5_13 {
                let (high, batch) = v5_13::high_and_batch(z.managed_pages, high_fraction);
                (batch, high, high)
            } else {
                let batch = zone_batchsize(z.managed_pages).max(1);
                if high_fraction != 0 {
                    let h = zone_highsize(z, batch, split, high_fraction);
                    (batch, h, h)
                } else {
                    (batch, zone_highsize(z, batch, split, 0), zone_highsize(z, batch, split, MIN_PERCPU_PAGELIST_HIGH_FRACTION))
                }
            };
            for _ in 0..nr_cpus {
                sets.push(PerCpuPages { count: 0, high: 0, high_min, high_max, batch, alloc_factor: 0, free_count: 0, lists: Default::default() });
            }
        }
        Pcp { rules, sets, nr_cpus, zone_flags: vec![ZoneFlags::default(); zones.len()], cpu: TASK_CPU, task_cpu: TASK_CPU, next_update: 0 }
    }

    /// CPUs with per-CPU lists.
    pub fn nr_cpus(&self) -> u32 {
        self.nr_cpus
    }

    /// The CPU kswapd, kcompactd, khugepaged, kdamond and the flusher run on: another
    /// CPU than the workload's when there is one (the next one up, wrapping).
    pub fn daemon_cpu(&self) -> u32 {
        if self.nr_cpus < 2 {
            0
        } else {
            (self.task_cpu + 1) % self.nr_cpus
        }
    }

    /// A trace's task now runs on `cpu` (`machine.task_cpus`): its allocations and frees
    /// use that CPU's lists, the daemons the next one up ([`Self::daemon_cpu`]). Called in
    /// the task's context.
    pub fn move_task(&mut self, cpu: u32) {
        (self.task_cpu, self.cpu) = (cpu, cpu);
    }

    /// Run on the daemons' CPU; returns the CPU to go back to.
    pub fn enter_daemon(&mut self) -> u32 {
        let daemon = self.daemon_cpu();
        std::mem::replace(&mut self.cpu, daemon)
    }

    #[inline]
    fn set(&mut self, zone: usize, cpu: u32) -> &mut PerCpuPages {
        &mut self.sets[zone * self.nr_cpus as usize + cpu as usize]
    }

    /// Pages on every CPU's lists of `zone`.
    pub fn nr_pages(&self, zone: usize) -> u64 {
        let n = self.nr_cpus as usize;
        self.sets[zone * n..(zone + 1) * n].iter().map(|p| p.count as u64).sum()
    }

    /// Pages on every CPU's lists of every zone: frames neither free nor in use.
    pub fn nr_pages_all(&self) -> u64 {
        self.sets.iter().map(|p| p.count as u64).sum()
    }

    /// `get_page_from_freelist`: the zone failed its high watermark (`ZONE_BELOW_HIGH`).
    pub fn set_below_high(&mut self, zone: usize) {
        self.zone_flags[zone].below_high = true;
    }

    pub fn below_high(&self, zone: usize) -> bool {
        self.zone_flags[zone].below_high
    }

    /// `set_reclaim_active` / `clear_reclaim_active` (mm/vmscan.c 6.12) for `zones`.
    pub fn set_reclaim_active(&mut self, zones: impl IntoIterator<Item = usize>, active: bool) {
        for z in zones {
            self.zone_flags[z].reclaim_active = active;
        }
    }

    /// `rmqueue_pcplist` → `__rmqueue_pcplist`: an order-0 frame of `zone` from this CPU's
    /// list for `mt`, refilled by `rmqueue_bulk` when empty. None when the zone has no
    /// free frame.
    pub fn rmqueue(&mut self, buddy: &mut BuddyAllocator, lists: &mut ListArena, owner: &mut [Owner], zone: usize, mt: MigrateType) -> Option<Pfn> {
        let rules = self.rules;
        if rules == PcpRules::None {
            return buddy.alloc(lists, owner, zone, 0, mt);
        }
        let p = &mut self.sets[zone * self.nr_cpus as usize + self.cpu as usize];
        // "On allocation, reduce the number of pages that are batch freed."
        p.free_count >>= 1;
        if p.lists[mt as usize].is_empty() {
            p.refill(buddy, lists, owner, zone, mt, rules, self.zone_flags[zone].below_high);
        }
        let pfn = p.lists[mt as usize].take_head()?;
        p.count -= 1;
        Some(pfn)
    }

    /// `free_unref_page` → `free_unref_page_commit` for an order-0 frame on this CPU.
    pub fn free(&mut self, buddy: &mut BuddyAllocator, lists: &mut ListArena, owner: &mut [Owner], pfn: Pfn) {
        match self.rules {
            PcpRules::None => return buddy.free(lists, owner, pfn, 0),
            PcpRules::V5_13 => return v5_13::free_unref_page_commit(self, buddy, lists, owner, pfn),
            PcpRules::V6_12 => {}
        }
        let (zone, mt) = (buddy.zone_of(pfn), pcp_migratetype(buddy, pfn));
        let (flags, cpu) = (self.zone_flags[zone], self.cpu);
        let p = self.set(zone, cpu);
        // "On freeing, reduce the number of pages that are batch allocated."
        p.alloc_factor >>= 1;
        p.lists[mt].add_head(pfn);
        p.count += 1;
        if p.free_count < p.batch << PCP_BATCH_SCALE_MAX {
            p.free_count += 1;
        }
        let high = p.nr_pcp_high(flags.reclaim_active, flags.below_high);
        if p.count >= high {
            self.free_high(buddy, lists, owner, zone, cpu, high, mt);
        }
    }

    /// `free_unref_page_commit` once the list reached `high`: `nr_pcp_free` frames back
    /// from `pindex` on, and `ZONE_BELOW_HIGH` cleared when the zone is above its high
    /// watermark again.
    #[allow(clippy::too_many_arguments)] // the list arena and the owner words beside the block
    #[cold]
    #[inline(never)]
    fn free_high(&mut self, buddy: &mut BuddyAllocator, lists: &mut ListArena, owner: &mut [Owner], zone: usize, cpu: u32, high: u32, pindex: usize) {
        let n = self.set(zone, cpu).nr_pcp_free(high);
        self.free_pcppages_bulk(buddy, lists, owner, zone, cpu, n, pindex);
        if self.zone_flags[zone].below_high && buddy.zone_watermark_ok(zone, 0, buddy.zones[zone].high_wmark_pages()) {
            self.zone_flags[zone].below_high = false;
        }
    }

    /// `free_pcppages_bulk`: `count` frames back to the buddy lists, from the tails of the
    /// lists in turn starting at `pindex`, each list emptied (or `count` reached) before
    /// the next.
    #[allow(clippy::too_many_arguments)] // the list arena and the owner words beside the block
    fn free_pcppages_bulk(&mut self, buddy: &mut BuddyAllocator, lists: &mut ListArena, owner: &mut [Owner], zone: usize, cpu: u32, count: u32, pindex: usize) {
        let p = self.set(zone, cpu);
        let mut count = count.min(p.count);
        let mut pindex = pindex + MIGRATE_PCPTYPES - 1;
        while count > 0 {
            let list = loop {
                pindex = (pindex + 1) % MIGRATE_PCPTYPES;
                if !p.lists[pindex].is_empty() {
                    break &mut p.lists[pindex];
                }
            };
            while count > 0 {
                let Some(pfn) = list.take_tail() else { break };
                count -= 1;
                p.count -= 1;
                buddy.free_pcp_frame(lists, owner, zone, pfn);
            }
        }
    }

    /// `drain_pages_zone(cpu, zone)`.
    fn drain_pages_zone(&mut self, buddy: &mut BuddyAllocator, lists: &mut ListArena, owner: &mut [Owner], zone: usize, cpu: u32) {
        loop {
            let p = self.set(zone, cpu);
            let count = p.count;
            if count == 0 {
                return;
            }
            let to_drain = count.min(p.batch << PCP_BATCH_SCALE_MAX);
            self.free_pcppages_bulk(buddy, lists, owner, zone, cpu, to_drain, 0);
        }
    }

    /// `drain_all_pages(zone)`; every zone when `zone` is None.
    pub fn drain_all_pages(&mut self, buddy: &mut BuddyAllocator, lists: &mut ListArena, owner: &mut [Owner], zone: Option<usize>) {
        let zones = match zone {
            Some(z) => z..z + 1,
            None => 0..self.zone_flags.len(),
        };
        for z in zones {
            for cpu in 0..self.nr_cpus {
                self.drain_pages_zone(buddy, lists, owner, z, cpu);
            }
        }
    }

    /// `drain_local_pages(zone)`: this CPU's lists of `zone`.
    pub fn drain_local_pages(&mut self, buddy: &mut BuddyAllocator, lists: &mut ListArena, owner: &mut [Owner], zone: usize) {
        let cpu = self.cpu;
        self.drain_pages_zone(buddy, lists, owner, zone, cpu);
    }

    /// Every pageset's `count` is the length of its lists; every frame on a list is in the
    /// list's zone, on no other list (pcp, buddy or LRU) and not free.
    pub fn check_invariants(&self, buddy: &BuddyAllocator, lists: &ListArena, owner: &[Owner]) -> Result<(), String> {
        let n = self.nr_cpus as usize;
        let mut seen = std::collections::HashSet::new();
        for (i, p) in self.sets.iter().enumerate() {
            let (zone, cpu) = (i / n, i % n);
            let len: usize = p.lists.iter().map(|l| l.0.len()).sum();
            if len != p.count as usize {
                return Err(format!("pcp zone {zone} cpu {cpu}: count {} but {len} frames on its lists", p.count));
            }
            for pfn in p.lists.iter().flat_map(|l| l.iter()) {
                if buddy.try_zone_of(pfn) != Some(zone) {
                    return Err(format!("pcp zone {zone} cpu {cpu}: pfn {pfn} is in zone {:?}", buddy.try_zone_of(pfn)));
                }
                if !seen.insert(pfn) || lists.is_linked(pfn) || buddy.is_free_block_head(owner, pfn) {
                    return Err(format!("pcp zone {zone} cpu {cpu}: pfn {pfn} is also on another list or free"));
                }
            }
        }
        Ok(())
    }

    /// `vmstat_update` → `refresh_cpu_vm_stats` → `decay_pcp_high` on every CPU and zone:
    /// `high` falls by an eighth towards `high_min` and what exceeds it goes back in
    /// batches.
    pub fn decay_pcp_high(&mut self, buddy: &mut BuddyAllocator, lists: &mut ListArena, owner: &mut [Owner]) {
        for zone in 0..self.zone_flags.len() {
            for cpu in 0..self.nr_cpus {
                let p = self.set(zone, cpu);
                if p.high > p.high_min {
                    let scaled = p.count.saturating_sub(p.batch << PCP_BATCH_SCALE_MAX);
                    p.high = scaled.max(p.high - (p.high >> 3)).max(p.high_min);
                }
                let mut to_drain = p.count.saturating_sub(p.high);
                let batch = p.batch;
                while to_drain > 0 {
                    let n = to_drain.min(batch);
                    self.free_pcppages_bulk(buddy, lists, owner, zone, cpu, n, 0);
                    to_drain -= n;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::page_alloc::{ZoneSpec, ZoneType};
    use crate::mm::watermarks;

    const MOV: MigrateType = MigrateType::Movable;

    /// A zone's allocator, list arena and owner words.
    fn zone_of(pages: u32) -> (BuddyAllocator, ListArena, Vec<Owner>) {
        let mut lists = ListArena::new(pages);
        let mut owner = vec![0; pages as usize];
        let mut buddy = BuddyAllocator::new(&[ZoneSpec { node: 0, zone_type: ZoneType::Normal, start_pfn: 0, nr_pages: pages }], &mut lists, &mut owner);
        watermarks::setup_per_zone_wmarks(&mut buddy.zones, 1845, 10);
        (buddy, lists, owner)
    }

    #[test]
    fn batch_and_high_of_a_256m_guest() {
        // 6.12.117 in a 256 MiB guest, 2 vCPUs: DMA32 about 50,000 managed pages.
        assert_eq!(zone_batchsize(50_000), 15);
        assert_eq!(zone_batchsize(1 << 20), 63);
        let (buddy, _lists, _owner) = zone_of(50_000);
        let pcp = Pcp::new(&buddy.zones, 2, 1, 0, PcpRules::V6_12);
        let p = &pcp.sets[0];
        assert_eq!(p.batch, 15);
        assert_eq!(p.high_min as u64, buddy.zones[0].low_wmark_pages() / 2);
        assert_eq!(p.high_max as u64, 50_000 / 8 / 2);
        let fixed = Pcp::new(&buddy.zones, 2, 1, 1_000_000, PcpRules::V6_12);
        assert_eq!((fixed.sets[0].high_min, fixed.sets[0].high_max), (60, 60), "high is at least batch * 4");
    }

    #[test]
    fn an_allocating_cpu_takes_growing_batches_and_a_free_shrinks_them() {
        let (mut buddy, mut lists, mut owner) = zone_of(50_000);
        let mut pcp = Pcp::new(&buddy.zones, 2, 1, 0, PcpRules::V6_12);
        let free0 = buddy.zones[0].free_pages;
        pcp.rmqueue(&mut buddy, &mut lists, &mut owner, 0, MOV).unwrap();
        assert_eq!(free0 - buddy.zones[0].free_pages, 15, "the first refill is one batch");
        let mut refills = vec![];
        for _ in 0..2000 {
            let before = buddy.zones[0].free_pages;
            pcp.rmqueue(&mut buddy, &mut lists, &mut owner, 0, MOV).unwrap();
            if buddy.zones[0].free_pages != before {
                refills.push(before - buddy.zones[0].free_pages);
            }
        }
        // batch << alloc_factor: 30, 60, 120, ... while high grows by each batch.
        assert_eq!(&refills[..3], &[30, 60, 120]);
        assert!(refills.iter().all(|&r| r <= 15 << PCP_BATCH_SCALE_MAX));
        // Counted as the guest's @@refill: every refill and its frames, none stealing.
        let s = buddy.stats;
        assert_eq!((s.pcp_refills, s.pcp_refill_frames, s.pcp_refills_stealing), (1 + refills.len() as u64, 15 + refills.iter().sum::<u64>(), 0));
        let factor = pcp.sets[0].alloc_factor;
        let pfn = pcp.rmqueue(&mut buddy, &mut lists, &mut owner, 0, MOV).unwrap();
        pcp.free(&mut buddy, &mut lists, &mut owner, pfn);
        assert_eq!(pcp.sets[0].alloc_factor, factor >> 1);
        assert_eq!(pcp.rmqueue(&mut buddy, &mut lists, &mut owner, 0, MOV), Some(pfn), "a freed page is reused first (list head)");
    }

    #[test]
    fn frees_under_reclaim_keep_at_most_four_batches_and_drains_return_everything() {
        let (mut buddy, mut lists, mut owner) = zone_of(50_000);
        let mut pcp = Pcp::new(&buddy.zones, 2, 1, 0, PcpRules::V6_12);
        let free0 = buddy.zones[0].free_pages;
        let got: Vec<Pfn> = (0..500).map(|_| pcp.rmqueue(&mut buddy, &mut lists, &mut owner, 0, MOV).unwrap()).collect();
        pcp.drain_all_pages(&mut buddy, &mut lists, &mut owner, None);
        pcp.cpu = pcp.daemon_cpu();
        pcp.set_reclaim_active([0], true);
        for (i, &pfn) in got.iter().enumerate() {
            pcp.free(&mut buddy, &mut lists, &mut owner, pfn);
            assert!(pcp.sets[1].count <= 60, "after {i} frees the daemon CPU holds {}", pcp.sets[1].count);
        }
        assert_eq!(pcp.nr_pages(0), pcp.sets[1].count as u64);
        pcp.drain_all_pages(&mut buddy, &mut lists, &mut owner, Some(0));
        assert_eq!(pcp.nr_pages(0), 0);
        assert_eq!(buddy.zones[0].free_pages, free0);
        lists.check_invariants().unwrap();
        pcp.check_invariants(&buddy, &lists, &owner).unwrap();
    }

    /// Head to tail, the frames of `cpu`'s list `mt` of zone 0.
    fn listed(pcp: &Pcp, cpu: usize, mt: MigrateType) -> Vec<Pfn> {
        pcp.sets[cpu].lists[mt as usize].iter().collect()
    }

    #[test]
    fn the_lists_use_the_kernels_ends() {
        // high fixed at 60 (4 batches of 15): every refill is one batch.
        let (mut buddy, mut lists, mut owner) = zone_of(50_000);
        let mut pcp = Pcp::new(&buddy.zones, 2, 1, 1_000_000, PcpRules::V6_12);
        // What rmqueue_bulk's __rmqueue calls hand out, in order, on an identical zone.
        let (mut buddy2, mut lists2, mut owner2) = zone_of(50_000);
        let e: Vec<Pfn> = (0..15).map(|_| buddy2.alloc(&mut lists2, &mut owner2, 0, 0, MOV).unwrap()).collect();
        // rmqueue_bulk adds at the tail (list_add_tail), __rmqueue_pcplist takes the head.
        let a = pcp.rmqueue(&mut buddy, &mut lists, &mut owner, 0, MOV).unwrap();
        assert_eq!(a, e[0]);
        assert_eq!(listed(&pcp, 0, MOV), e[1..]);
        // free_unref_page_commit adds at the head (list_add).
        let b = pcp.rmqueue(&mut buddy, &mut lists, &mut owner, 0, MOV).unwrap();
        assert_eq!(b, e[1]);
        pcp.free(&mut buddy, &mut lists, &mut owner, a);
        pcp.free(&mut buddy, &mut lists, &mut owner, b);
        assert_eq!(listed(&pcp, 0, MOV), [&[b, a], &e[2..]].concat());
        pcp.check_invariants(&buddy, &lists, &owner).unwrap();
        // free_pcppages_bulk takes from the tail (list_last_entry).
        pcp.free_pcppages_bulk(&mut buddy, &mut lists, &mut owner, 0, 0, 3, MOV as usize);
        assert_eq!(listed(&pcp, 0, MOV), [&[b, a], &e[2..12]].concat());
        assert_eq!(pcp.sets[0].count, 12);
        // An UNMOVABLE list (its refill claims a pageblock), then a bulk free of more than
        // the MOVABLE list holds: that list is emptied first, then the next in turn
        // (pindex wraps from MOVABLE to UNMOVABLE), again from the tail.
        let u = pcp.rmqueue(&mut buddy, &mut lists, &mut owner, 0, MigrateType::Unmovable).unwrap();
        let unmovable = listed(&pcp, 0, MigrateType::Unmovable);
        assert_eq!(unmovable.len(), 14);
        assert!(!unmovable.contains(&u));
        pcp.free_pcppages_bulk(&mut buddy, &mut lists, &mut owner, 0, 0, 12 + 4, MOV as usize);
        assert!(listed(&pcp, 0, MOV).is_empty());
        assert_eq!(listed(&pcp, 0, MigrateType::Unmovable), unmovable[..10]);
        pcp.check_invariants(&buddy, &lists, &owner).unwrap();
        pcp.drain_all_pages(&mut buddy, &mut lists, &mut owner, None);
        pcp.check_invariants(&buddy, &lists, &owner).unwrap();
        assert_eq!(pcp.nr_pages_all(), 0);
    }

    #[test]
    fn decay_lowers_high_towards_high_min_and_frees_the_excess() {
        let (mut buddy, mut lists, mut owner) = zone_of(50_000);
        let mut pcp = Pcp::new(&buddy.zones, 2, 1, 0, PcpRules::V6_12);
        let got: Vec<Pfn> = (0..3000).map(|_| pcp.rmqueue(&mut buddy, &mut lists, &mut owner, 0, MOV).unwrap()).collect();
        for &pfn in &got {
            pcp.free(&mut buddy, &mut lists, &mut owner, pfn);
        }
        let (high_min, before) = (pcp.sets[0].high_min, pcp.sets[0].count);
        assert!(pcp.sets[0].high > high_min && before > high_min, "frees alone grow high: {} {}", pcp.sets[0].high, before);
        for _ in 0..100 {
            pcp.decay_pcp_high(&mut buddy, &mut lists, &mut owner);
        }
        assert_eq!(pcp.sets[0].high, high_min);
        assert!(pcp.sets[0].count <= high_min);
        pcp.check_invariants(&buddy, &lists, &owner).unwrap();
    }
}
