//! The simulated machine's memory: what every reclaim policy sees and acts through.
//!
//! [`Mm`] owns the frames (buddy allocator over NUMA nodes and zones), the per-page
//! and per-frame state, the lruvecs (one per node × memcg), the memcgs, the swap
//! device and the vmstat counters. Policies keep their own list heads and private
//! state; they move folios through [`Mm`]'s helpers so LRU sizes, the workingset
//! clock and cost accounting stay consistent with the kernel's (`update_lru_size`,
//! `workingset_age_nonresident`, `lru_note_cost` walk the memcg hierarchy upwards).

pub mod lists;
pub mod lruvec;
pub mod memcontrol;
pub mod page;
pub mod page_alloc;
pub mod pcp;
pub mod prefetch;
pub mod readahead;
pub mod shadows;
pub mod shrinker;
pub mod start_layout;
pub mod swap;
pub mod swap_slots;
pub mod swapfile;
pub mod vmstat;
pub mod watermarks;
pub mod workingset;
pub mod writeback;

use crate::config::{CgroupConfig, SimConfig};
use lists::ListArena;
use lruvec::{LruList, Lruvec, LruvecId};
use memcontrol::{bytes_to_pages, Memcg, MemcgId, ROOT_MEMCG};
use page::{pg, Frames, Pages};
use page_alloc::{BuddyAllocator, MigrateType, Pfn, ZoneSpec, ZoneType};
use vmstat::{Ev, VmStat};

/// What one buffer head costs its memcg: `sizeof(struct buffer_head)`, 104 bytes on x86-64
/// (`KMEM_CACHE(buffer_head, SLAB_RECLAIM_ACCOUNT)`, fs/buffer.c 6.12), plus the
/// obj_cgroup pointer (`obj_full_size`).
pub const BH_CHARGED_BYTES: u64 = 104 + 8;

/// One NUMA node (`pglist_data`): a contiguous pfn range and its zones.
#[derive(Clone, Debug)]
pub struct Node {
    pub id: u16,
    pub start_pfn: Pfn,
    pub nr_pages: u32,
    /// Indices into `buddy.zones`, highest zone first (the order allocations try).
    pub zones: Vec<usize>,
    /// `pgdat->kswapd_failures`: kswapd passes in a row that reclaimed nothing.
    pub kswapd_failures: u32,
    /// Where the next partial memcg walk of direct reclaim starts.
    pub memcg_iter_cursor: u16,
    /// `PGDAT_DIRTY`: kswapd found only unqueued dirty file folios (it may then `pageout`).
    pub pgdat_dirty: bool,
    /// `PGDAT_WRITEBACK`: kswapd isolated only folios under writeback.
    pub pgdat_writeback: bool,
    /// `NR_ZONE_WRITE_PENDING` summed over the node's zones: its dirty file pages plus its
    /// pages under writeback (a page dirtied again under writeback counts in both).
    pub nr_write_pending: u64,
}

pub struct Mm {
    pub lists: ListArena,
    pub buddy: BuddyAllocator,
    /// The per-CPU page lists of every zone (pcp.rs): order-0 frames off the buddy lists.
    pub pcp: pcp::Pcp,
    pub nodes: Vec<Node>,
    pub pages: Pages,
    pub frames: Frames,
    pub lruvecs: Vec<Lruvec>,
    pub memcgs: Vec<Memcg>,
    pub swap: swap::Swap,
    pub vmstat: VmStat,
    /// Per-memcg event counters indexed by memcg id (`memcg->vmstats`' events and the
    /// lruvec event state memory.stat prints), counted where the kernel counts them
    /// against a memcg ([`Mm::count_memcg_events`]). The memcg hierarchy is flat, so a
    /// child's counts are its own; the root's slot holds what is charged to the root.
    pub memcg_vmstats: Vec<VmStat>,
    /// The machine's frames (`machine.memory`: every zone's managed pages).
    pub nr_frames: u32,
    /// Every node's frames when the nodes are of one size (`node_of` divides by it); 0 when
    /// they differ (`machine.node_memory`: `node_of` searches the nodes' starts).
    node_stride: u32,
    /// One past the highest pfn: `nr_frames` and the hole below ZONE_DMA ([`dma_hole`]),
    /// frames in no zone. Per-frame arrays and pfn walks span `0..pfn_end`.
    pub pfn_end: u32,
    /// Frames taken at boot for memory held outside the workload (`machine.kernel_used`).
    pub nr_kernel_used: u64,
    /// Per node: the root memcg's own LRU pages among them, which its statistics count
    /// (`flush_memcg_stats`) without folios: shmem on the inactive anon list
    /// (`machine.kernel_shmem`, until the engine makes them folios: sim/kernel_shmem.rs),
    /// mlocked pages on the unevictable list (`machine.kernel_mlocked`).
    root_kernel_lru: Vec<[u64; lruvec::NR_LRU_LISTS]>,
    /// `machine.kernel_shmem`'s frames, in use outside the workload until the engine gives
    /// them pages (sim/kernel_shmem.rs); empty after that.
    pub kernel_shmem_frames: Vec<Pfn>,
    /// The policy's `folio_isolate_lru` can take any LRU folio off its list, so
    /// compaction may migrate LRU folios (false for `cache:*`, whose lists live in its
    /// algorithm).
    pub lru_folios_migratable: bool,
    pub min_free_kbytes: u64,
    pub bucket_order: u32,
    pub cfg: SimConfig,
    /// Device time spent on asynchronous writes (swap-out to SSD, writeback), ns.
    pub io_write_ns: u64,
    /// Time tasks slept in `reclaim_throttle` (ns; kswapd's sleeps are on its own clock).
    pub reclaim_throttle_ns: u64,
    /// The clock of whoever is running now (the workload, or kswapd during its steps),
    /// ns: what the kernel reads as jiffies (MGLRU generation timestamps).
    pub now: u64,
    /// Set when a reclaimer invokes the OOM killer (MGLRU `min_ttl_ms` protection); the
    /// engine ends the run with this message.
    pub oom: Option<String>,
    /// Dirty page-cache tracking for the background flusher.
    pub wb: writeback::Writeback,
    /// THP, compaction and NUMA state and counters (crate::thp).
    pub thp: crate::thp::ThpState,
    /// `current->in_lru_fault` beyond the faulting folio itself: set while a mapped
    /// fault reads around it (`lru_gen_enter_fault`), so the folios readahead adds are
    /// added in fault too. See [`Mm::lru_gen_in_fault`].
    pub in_lru_fault: bool,
    /// When the periodic memcg statistics flush runs next (ns; [`Mm::flush_memcg_stats_due`]).
    pub next_stats_flush: u64,
    /// The page cache's xarray nodes and the `shadow_nodes` list_lru (mm/workingset.rs).
    pub shadow_nodes: workingset::ShadowNodes,
}

/// The zones of nodes of `node_pages` frames each, one after another: one Normal zone per
/// node, and with `dma_pages` > 0 a ZONE_DMA of that many frames at the start of node 0
/// (x86-64 has it below 16 MiB). Returns the specs, each node's zone indices (highest zone
/// first) and the hole below ZONE_DMA ([`dma_hole`]): node 0's frames start after it.
pub(crate) fn zone_specs(node_pages: &[u32], dma_pages: u32) -> (Vec<ZoneSpec>, Vec<Vec<usize>>, u32) {
    let hole = dma_hole(dma_pages);
    let mut specs = Vec::new();
    let mut node_zones = Vec::new();
    let mut start = hole;
    for (n, &per_node) in node_pages.iter().enumerate() {
        let n = n as u16;
        let dma = if n == 0 { dma_pages } else { 0 };
        let mut zones = Vec::new();
        if dma > 0 {
            specs.push(ZoneSpec { node: n, zone_type: ZoneType::Dma, start_pfn: start, nr_pages: dma });
            zones.push(specs.len() - 1);
        }
        specs.push(ZoneSpec { node: n, zone_type: ZoneType::Normal, start_pfn: start + dma, nr_pages: per_node - dma });
        zones.push(specs.len() - 1);
        zones.reverse();
        node_zones.push(zones);
        start += per_node;
    }
    (specs, node_zones, hole)
}

/// The machine's zones as [`zone_specs`] builds them from `cfg` (each node's frames:
/// [`SimConfig::node_pages`]), with the frames per node.
pub(crate) fn machine_zone_specs(cfg: &SimConfig) -> (Vec<ZoneSpec>, Vec<Vec<usize>>, u32, Vec<u32>) {
    let node_pages = cfg.node_pages();
    let (specs, node_zones, hole) = zone_specs(&node_pages, (cfg.zone_dma_bytes >> reclaimlab_trace::PAGE_SHIFT) as u32);
    (specs, node_zones, hole, node_pages)
}

/// The frames below ZONE_DMA that are no zone's: x86-64's DMA zone ends at 16 MiB, a pageblock
/// boundary, and its managed pages begin inside its first pageblock (the zone starts at pfn 1
/// and the first MiB is reserved, `reserve_real_mode`/`x86_reserve_low`, so a 6.12 guest's
/// DMA manages pfns 0x100-0xfff: 3,840 pages). The model keeps the managed frames and puts
/// the rest of that first pageblock before them, in no zone; that pageblock's first pfn is
/// then outside the zone's memory, so it stays `MIGRATE_UNMOVABLE` (page_alloc.rs,
/// `BuddyAllocator::new`), and its other type's pages can never be claimed
/// (`prep_move_freepages_block`: the block is not inside the zone). 0 when `dma_pages` is
/// a whole number of pageblocks.
pub fn dma_hole(dma_pages: u32) -> u32 {
    dma_pages.next_multiple_of(crate::mm::page_alloc::PAGEBLOCK_NR_PAGES) - dma_pages
}

/// Node `n`'s share of `pages` split evenly across `nr_nodes` nodes (the first ones take
/// the remainder): how the machine's memory held outside the workload is spread.
pub(crate) fn node_share(pages: u64, nr_nodes: u64, n: u64) -> u64 {
    pages / nr_nodes + u64::from(n < pages % nr_nodes)
}

impl Mm {
    pub fn new(cfg: &SimConfig) -> Mm {
        let (specs, node_zones, hole, node_pages) = machine_zone_specs(cfg);
        let nr_frames: u32 = node_pages.iter().sum();
        // node_of's division where the nodes are of one size (every machine but a guest's).
        let node_stride = if node_pages.iter().all(|&p| p == node_pages[0]) { node_pages[0] } else { 0 };
        let pfn_end = hole + nr_frames;
        let mut lists = ListArena::new(pfn_end);
        let mut frames = Frames::new(pfn_end);
        let mut buddy = BuddyAllocator::new(&specs, &mut lists, &mut frames.owner);
        buddy.watermark_boost_factor = cfg.watermark_boost_factor;
        let nodes = node_zones
            .into_iter()
            .enumerate()
            .map(|(n, zones)| Node {
                id: n as u16,
                // Where its lowest zone starts (zone_specs lays the nodes out).
                start_pfn: specs[zones[zones.len() - 1]].start_pfn,
                nr_pages: node_pages[n],
                zones,
                kswapd_failures: 0,
                memcg_iter_cursor: 0,
                pgdat_dirty: false,
                pgdat_writeback: false,
                nr_write_pending: 0,
            })
            .collect();
        let lowmem_kbytes = nr_frames as u64 * (reclaimlab_trace::PAGE_SIZE >> 10);
        let min_free_kbytes = cfg.min_free_kbytes.unwrap_or_else(|| watermarks::calculate_min_free_kbytes(lowmem_kbytes));
        watermarks::setup_per_zone_wmarks(&mut buddy.zones, min_free_kbytes, cfg.watermark_scale_factor as u64);
        watermarks::setup_per_zone_lowmem_reserve(&mut buddy.zones);
        if let Some(r) = cfg.zone_dma_lowmem_reserve {
            // As the booted kernel computed it (/proc/zoneinfo's protection): at init, from
            // the managed pages of that time (mm/page_alloc.c 6.12 init_per_zone_wmark_min).
            buddy.zones.iter_mut().filter(|z| z.zone_type == ZoneType::Dma).for_each(|z| z.lowmem_reserve = r);
        }
        let pcp = pcp::Pcp::new(&buddy.zones, cfg.nr_cpus, cfg.nr_nodes as u32, cfg.percpu_pagelist_high_fraction, cfg.pcp_rules);
        let mut mm = Mm {
            lists,
            buddy,
            pcp,
            nodes,
            pages: Pages::new(cfg.nr_nodes as usize),
            frames,
            lruvecs: Vec::new(),
            memcgs: Vec::new(),
            swap: swap::Swap::new(cfg),
            vmstat: VmStat::default(),
            memcg_vmstats: Vec::new(),
            nr_frames,
            node_stride,
            pfn_end,
            nr_kernel_used: 0,
            root_kernel_lru: Vec::new(),
            kernel_shmem_frames: Vec::new(),
            lru_folios_migratable: true,
            min_free_kbytes,
            bucket_order: workingset::bucket_order(nr_frames as u64),
            cfg: cfg.clone(),
            io_write_ns: 0,
            reclaim_throttle_ns: 0,
            now: 0,
            oom: None,
            wb: writeback::Writeback::new(if cfg.dirty_writeback_ns == 0 { u64::MAX } else { (cfg.dirty_writeback_ns as f64 / cfg.time_dilation) as u64 }),
            thp: crate::thp::ThpState::default(),
            in_lru_fault: false,
            next_stats_flush: 0,
            shadow_nodes: workingset::ShadowNodes::default(),
        };
        let slots = mm.swap.total;
        mm.shadow_nodes.set_swap_slots(slots);
        mm.pages.set_swap_slots(slots);
        // The periodic flusher runs since boot, at no particular phase relative to the
        // workload's start: the first flush falls at a point of its period drawn from the seed.
        let period = mm.timer_ns(memcontrol::FLUSH_TIME_NS);
        mm.next_stats_flush = reclaimlab_trace::Rng::new(cfg.seed ^ 0xF1_05A7_0000_0002).below(period.max(1)) + 1;
        // vmstat_update likewise (the per-CPU pagesets' decay).
        let period = mm.timer_ns(pcp::STAT_INTERVAL_NS);
        mm.pcp.next_update = reclaimlab_trace::Rng::new(cfg.seed ^ 0x7653_7A70_0000_0003).below(period.max(1)) + 1;
        let shmem = cfg.kernel_shmem_bytes >> reclaimlab_trace::PAGE_SHIFT;
        match &cfg.start_layout {
            Some(layout) => {
                mm.lay_out(&start_layout::plan(layout, &specs, cfg.kernel_movable_pages()).expect("SimConfig::validate checks machine.start_layout"));
                mm.kernel_shmem_frames = mm.used_movable_frames(shmem);
            }
            None => {
                mm.take_kernel_used((cfg.kernel_used_bytes >> reclaimlab_trace::PAGE_SHIFT) - shmem);
                mm.kernel_shmem_frames = mm.take_movable_frames(shmem);
                mm.nr_kernel_used += shmem;
            }
        }
        let per_node = |bytes: u64, i: usize| mm.node_share(bytes >> reclaimlab_trace::PAGE_SHIFT, i);
        mm.root_kernel_lru = (0..mm.nodes.len())
            .map(|i| {
                let mut lru = [0; lruvec::NR_LRU_LISTS];
                // Shmem sits on the anon LRU (shmem_add_to_page_cache → folio_add_lru);
                // mlocked folios on the unevictable one (mlock_folio, mm/mlock.c 6.12).
                lru[lruvec::LruList::InactiveAnon as usize] = per_node(cfg.kernel_shmem_bytes, i);
                lru[lruvec::LruList::Unevictable as usize] = per_node(cfg.kernel_mlocked_bytes, i);
                lru
            })
            .collect();
        mm.new_memcg(&CgroupConfig::new(""));
        for cg in &cfg.cgroups {
            mm.new_memcg(cg);
        }
        // The machine ran before the workload: its statistics were flushed with those pages.
        mm.flush_memcg_stats();
        mm
    }

    /// `machine.kernel_used`: what the kernel and everything but the workload hold when it
    /// starts (on a real machine MemTotal - MemFree just before it), taken from the free
    /// lists as unmovable order-0 frames, split evenly across nodes, from the highest zone
    /// down. They stay in use: not on an LRU, in no memcg, never reclaimed. Watermarks are
    /// computed before, from the managed pages, as the kernel computes them at boot.
    fn take_kernel_used(&mut self, pages: u64) {
        for n in 0..self.nodes.len() {
            for _ in 0..self.node_share(pages, n) {
                let zones = &self.nodes[n].zones;
                let pfn = zones.iter().find_map(|&z| self.buddy.alloc(&mut self.lists, &mut self.frames.owner, z, 0, MigrateType::Unmovable));
                pfn.expect("validate() leaves free frames");
            }
        }
        self.nr_kernel_used = pages;
    }

    /// `machine.start_layout`: every zone's free lists and pageblock types as the kernel
    /// reported them at the workload's start (start_layout.rs). The zone's frames are all
    /// taken off the free lists, its pageblocks get their types, the listed free blocks go
    /// back, in ascending pfn at the tail of their lists (as `memblock_free_all` leaves a
    /// zone's blocks), and every other frame stays in use outside the workload, as
    /// [`Self::take_kernel_used`]'s do. Nothing is counted as an allocation or a fallback.
    fn lay_out(&mut self, plans: &[start_layout::ZonePlan]) {
        for zp in plans {
            self.buddy.take_all_free(&mut self.lists, &mut self.frames.owner, zp.zone);
            for &(pfn, mt) in &zp.pageblocks {
                self.buddy.set_pageblock_type(pfn, mt);
            }
            for &(pfn, order, mt) in &zp.free {
                self.buddy.place_free_block(&mut self.lists, &mut self.frames.owner, zp.zone, pfn, order, mt);
            }
        }
        self.nr_kernel_used = plans.iter().map(|p| p.used).sum();
    }

    /// `machine.kernel_shmem`'s frames without a layout: `pages` order-0 movable frames
    /// from the free lists, split evenly across nodes, the highest zone first (the page cache
    /// of a tmpfs is movable: `mapping_gfp_mask` `GFP_HIGHUSER_MOVABLE`, mm/shmem.c 6.12).
    fn take_movable_frames(&mut self, pages: u64) -> Vec<Pfn> {
        let mut frames = Vec::with_capacity(pages as usize);
        for n in 0..self.nodes.len() {
            for _ in 0..self.node_share(pages, n) {
                let zones = &self.nodes[n].zones;
                let pfn = zones.iter().find_map(|&z| self.buddy.alloc(&mut self.lists, &mut self.frames.owner, z, 0, MigrateType::Movable));
                frames.push(pfn.expect("validate() leaves free frames"));
            }
        }
        frames
    }

    /// `machine.kernel_shmem`'s frames after [`Self::lay_out`]: `pages` frames in use
    /// outside the workload and in movable pageblocks, the highest zone's first and lowest
    /// pfn first within a zone (where the kernel put them is not recorded), split evenly
    /// across nodes; fewer if the layout has fewer. (No frame holds a page yet: every frame
    /// not free is the kernel's.)
    fn used_movable_frames(&self, pages: u64) -> Vec<Pfn> {
        let mut frames = Vec::with_capacity(pages as usize);
        for (n, node) in self.nodes.iter().enumerate() {
            let share = self.node_share(pages, n);
            let used = |&pfn: &Pfn| self.buddy.pageblock_migratetype(pfn) == MigrateType::Movable && !self.buddy.is_free(&self.frames.owner, pfn);
            // The highest zone first (`zones`' order), as a `GFP_HIGHUSER_MOVABLE` allocation
            // prefers it.
            let zone_frames = node.zones.iter().flat_map(|&z| self.buddy.zones[z].start_pfn..self.buddy.zones[z].end_pfn());
            frames.extend(zone_frames.filter(used).take(share as usize));
        }
        frames
    }

    /// Node `n`'s share of `pages` split evenly across the nodes ([`node_share`]).
    fn node_share(&self, pages: u64, n: usize) -> u64 {
        node_share(pages, self.nodes.len() as u64, n as u64)
    }

    pub fn nr_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// A kernel timer's period `ns` on the simulated clock (`sim.time_dilation`).
    pub fn timer_ns(&self, ns: u64) -> u64 {
        (ns as f64 / self.cfg.time_dilation) as u64
    }

    /// `vmstat_update` when due at `now`: every CPU's pagesets decay (`decay_pcp_high`),
    /// every `sysctl_stat_interval` (1 s) of the kernel's clock.
    pub fn vmstat_update_due(&mut self, now: u64) {
        if now < self.pcp.next_update {
            return;
        }
        let period = self.timer_ns(pcp::STAT_INTERVAL_NS).max(1);
        while self.pcp.next_update <= now {
            self.pcp.decay_pcp_high(&mut self.buddy, &mut self.lists, &mut self.frames.owner);
            self.pcp.next_update += period;
        }
    }

    /// `drain_all_pages(zone)` (every zone for None): the CPUs' lists back to the buddy lists.
    pub fn drain_all_pages(&mut self, zone: Option<usize>) {
        self.pcp.drain_all_pages(&mut self.buddy, &mut self.lists, &mut self.frames.owner, zone);
    }

    /// `drain_local_pages(zone)`: the running CPU's lists of `zone`.
    pub fn drain_local_pages(&mut self, zone: usize) {
        self.pcp.drain_local_pages(&mut self.buddy, &mut self.lists, &mut self.frames.owner, zone);
    }

    /// `flush_memcg_stats_dwork` when due at `now`: every lruvec's [`lruvec::LruvecStat`]
    /// takes the current sizes and WORKINGSET_ACTIVATE_* (`do_flush_stats`), and the next
    /// flush is due `FLUSH_TIME` later.
    pub fn flush_memcg_stats_due(&mut self, now: u64) {
        if now < self.next_stats_flush {
            return;
        }
        self.flush_memcg_stats();
        let period = self.timer_ns(memcontrol::FLUSH_TIME_NS).max(1);
        while self.next_stats_flush <= now {
            self.next_stats_flush += period;
        }
    }

    /// One of the root memcg's pages on `node` counted on `list` without a folio
    /// (`machine.kernel_shmem`, `machine.kernel_mlocked`) now has one (sim/kernel_shmem.rs).
    pub fn root_kernel_lru_take(&mut self, node: u16, list: LruList) {
        let n = &mut self.root_kernel_lru[node as usize][list as usize];
        *n = n.saturating_sub(1);
    }

    /// `NR_SHMEM`: the root's tmpfs pages in memory — those counted without a folio and
    /// `machine.kernel_shmem`'s folios not swapped out (`shmem_writepage` takes a folio it
    /// swaps out of the page cache and `NR_SHMEM` with it, `shmem_delete_from_page_cache`,
    /// mm/shmem.c 6.12). Read at report time: a scan of those few page ids.
    pub fn nr_shmem(&self) -> u64 {
        let counted: u64 = self.root_kernel_lru.iter().map(|l| l[LruList::InactiveAnon as usize]).sum();
        let folios = match self.pages.kernel_first {
            Some(first) => self.pages.pte[first..].iter().filter(|&&pte| page::is_resident(pte)).count() as u64,
            None => 0,
        };
        counted + folios
    }

    /// `do_flush_stats` (rstat flush of every memcg).
    pub fn flush_memcg_stats(&mut self) {
        for m in self.memcgs.iter_mut() {
            m.stat_nr_dirty = m.nr_dirty;
            m.stat_nr_writeback = m.nr_writeback;
        }
        for (lv, l) in self.lruvecs.iter_mut().enumerate() {
            let slab_reclaimable_b = self.shadow_nodes.allocated(lv as u32) * workingset::XA_NODE_CHARGED_BYTES + l.buffer_heads_b;
            l.stat = lruvec::LruvecStat { size: l.hier_size, size_local: l.lru_size, slab_reclaimable_b, workingset_activate: l.workingset_activate };
            if l.memcg == memcontrol::ROOT_MEMCG {
                for (local, kernel) in l.stat.size_local.iter_mut().zip(self.root_kernel_lru[l.node as usize]) {
                    *local += kernel;
                }
            }
        }
    }

    /// `lru_gen_in_fault()` while folio `pfn` is added or refaults: the task is in a
    /// page fault through a mapping (mm/memory.c `lru_gen_enter_fault`). A folio faulted
    /// through a mapping is installed mapped; the folios read around it are added while
    /// [`Mm::in_lru_fault`] is set.
    #[inline]
    pub fn lru_gen_in_fault(&self, pfn: Pfn) -> bool {
        self.in_lru_fault || self.frames.test(pfn, page::pg::MAPPED)
    }

    /// Create a memcg (child of the root) and its lruvecs; returns its id. The caller
    /// lets the policy initialise the new lruvecs.
    pub fn new_memcg(&mut self, cg: &CgroupConfig) -> MemcgId {
        let id = self.memcgs.len() as MemcgId;
        let parent = if cg.name.is_empty() { None } else { Some(ROOT_MEMCG) };
        let mut m = Memcg::new(&cg.name, parent);
        m.max = bytes_to_pages(cg.max);
        m.high = bytes_to_pages(cg.high);
        m.low = bytes_to_pages(cg.low);
        m.min = bytes_to_pages(cg.min);
        self.memcgs.push(m);
        self.memcg_vmstats.push(VmStat::default());
        for node in 0..self.nr_nodes() as u16 {
            let parent_lv = parent.map(|p| self.lruvec_id(p, node));
            self.lruvecs.push(Lruvec::new(node, id, parent_lv));
        }
        id
    }

    pub fn memcg_by_name(&self, name: &str) -> Option<MemcgId> {
        self.memcgs.iter().position(|m| m.name == name).map(|i| i as MemcgId)
    }

    /// `mem_cgroup_lruvec(memcg, pgdat)`.
    #[inline(always)]
    pub fn lruvec_id(&self, memcg: MemcgId, node: u16) -> LruvecId {
        memcg as u32 * self.nodes.len() as u32 + node as u32
    }

    #[inline(always)]
    pub fn node_of(&self, pfn: Pfn) -> u16 {
        if self.nodes.len() == 1 {
            0
        } else {
            match self.node_stride {
                0 => self.nodes.iter().rposition(|n| pfn >= n.start_pfn).unwrap_or(0) as u16,
                stride => (pfn.saturating_sub(self.nodes[0].start_pfn) / stride) as u16,
            }
        }
    }

    /// `folio_nr_pages` of the folio whose LRU entry is `pfn`: 512 for a THP's head
    /// (`PG_head`), else 1.
    #[inline(always)]
    pub fn folio_nr_pages(&self, pfn: Pfn) -> u64 {
        pg::nr_pages(self.frames.flags(pfn))
    }

    /// `page_folio`: the frame standing on the LRU for `pfn`'s folio (a THP's head while
    /// the THP is one folio; a THP is one aligned pageblock).
    #[inline]
    pub fn page_folio(&self, pfn: Pfn) -> Pfn {
        if self.frames.test(pfn, pg::COMPOUND) {
            let head = crate::thp::compaction::pageblock_start(pfn);
            if self.frames.test(head, pg::HEAD) {
                return head;
            }
        }
        pfn
    }

    /// Whether the THP whose head is `head` is mapped by PTEs: part of it was unmapped
    /// (`__split_huge_pmd`, then `PG_partially_mapped`), the only way a THP's PMD is split
    /// here. Its frames' `MAPPED` and `YOUNG` are then each its own PTE's.
    #[inline]
    pub fn folio_pte_mapped(&self, head: Pfn) -> bool {
        self.frames.test(head, pg::HEAD) && self.thp.split_queued[(head >> page_alloc::PAGEBLOCK_ORDER) as usize]
    }

    /// The frame whose `YOUNG` bit an access to `pfn` sets: the accessed bit of the PMD,
    /// kept at the head, for a PMD-mapped THP; `pfn`'s own PTE's otherwise.
    #[inline]
    pub fn young_frame(&self, pfn: Pfn) -> Pfn {
        let folio = self.page_folio(pfn);
        if self.folio_pte_mapped(folio) {
            pfn
        } else {
            folio
        }
    }

    /// `folio_mapped`: a PTE-mapped THP always is (its last unmap frees it); any other
    /// folio by its `MAPPED` bit.
    #[inline]
    pub fn folio_mapped(&self, pfn: Pfn) -> bool {
        self.frames.test(pfn, pg::MAPPED) || (self.frames.test(pfn, pg::HEAD) && self.folio_pte_mapped(pfn))
    }

    /// `__filemap_add_folio`'s `xas_store` of `page` ([`workingset::ShadowNodes::page_cache_insert`]),
    /// charging a node it allocates to `lv`'s memcg: a mapping's xarray is
    /// XA_FLAGS_ACCOUNT (fs/inode.c 6.12), so `xas_alloc` charges `current`'s memcg.
    #[inline]
    pub fn page_cache_insert(&mut self, page: u32, replaces_shadow: bool, lv: LruvecId) {
        if self.shadow_nodes.page_cache_insert(page, replaces_shadow, lv) {
            self.obj_charge(lv, workingset::XA_NODE_CHARGED_BYTES);
        }
    }

    /// `page_cache_delete` of `page`, leaving a shadow or not
    /// ([`workingset::ShadowNodes::page_cache_delete`]); a node it frees is uncharged.
    #[inline]
    pub fn page_cache_delete(&mut self, page: u32, shadow: bool) {
        if let Some(lv) = self.shadow_nodes.page_cache_delete(page, shadow) {
            self.obj_uncharge(lv, workingset::XA_NODE_CHARGED_BYTES);
        }
    }

    /// `clear_shadow_entry` of `page`'s slot; a node it frees is uncharged.
    pub fn clear_shadow_entry(&mut self, page: u32) {
        if let Some(lv) = self.shadow_nodes.clear_shadow_entry(page) {
            self.obj_uncharge(lv, workingset::XA_NODE_CHARGED_BYTES);
        }
    }

    /// Charge a slab object of `bytes` (its `obj_full_size`) to the memcg of lruvec `lv`
    /// (memcontrol.rs `Memcg::obj_charge`). The root memcg has no objcg, so nothing is
    /// charged to it (mm/memcontrol.c 6.12 `__get_obj_cgroup_from_memcg` stops there).
    #[inline]
    pub fn obj_charge(&mut self, lv: LruvecId, bytes: u64) {
        let memcg = self.lruvecs[lv as usize].memcg;
        if memcg != ROOT_MEMCG {
            self.memcgs[memcg as usize].obj_charge(bytes);
        }
    }

    /// Uncharge what [`Self::obj_charge`] charged.
    #[inline]
    pub fn obj_uncharge(&mut self, lv: LruvecId, bytes: u64) {
        let memcg = self.lruvecs[lv as usize].memcg;
        if memcg != ROOT_MEMCG {
            self.memcgs[memcg as usize].obj_uncharge(bytes);
        }
    }

    /// The buffer heads of a page-cache folio in bytes: `PAGE_SIZE / block.fs_block_size`
    /// of them.
    #[inline]
    pub fn folio_buffers_b(&self) -> u64 {
        match self.cfg.fs_block_size {
            0 => 0,
            b => (reclaimlab_trace::PAGE_SIZE / b) * BH_CHARGED_BYTES,
        }
    }

    /// A write to page-cache folio `pfn` without buffers attaches them: ext4's
    /// `ext4_block_write_begin` (write) and `block_page_mkwrite` (a write fault through a
    /// mapping) call `create_empty_buffers` (fs/ext4/inode.c, fs/buffer.c 6.12), whose
    /// `GFP_NOFS | __GFP_ACCOUNT` allocation charges the folio's memcg
    /// (`folio_alloc_buffers` sets it active). A read does not: `ext4_mpage_readpages`
    /// reads a page whose blocks are contiguous without them. `PG_private` marks them.
    #[inline]
    pub fn attach_buffers(&mut self, pfn: Pfn) {
        let bytes = self.folio_buffers_b();
        if bytes == 0 || self.frames.test(pfn, pg::PRIVATE) {
            return;
        }
        self.frames.set(pfn, pg::PRIVATE);
        let lv = self.folio_lruvec(pfn);
        self.lruvecs[lv as usize].buffer_heads_b += bytes;
        self.obj_charge(lv, bytes);
    }

    /// Folio `pfn` leaves the page cache: its buffers go first (`filemap_release_folio` →
    /// `try_to_free_buffers` in `shrink_folio_list`; `truncate_cleanup_folio` and
    /// `mapping_evict_folio` likewise), uncharged from its memcg.
    #[inline]
    pub fn release_buffers(&mut self, pfn: Pfn) {
        if !self.frames.test(pfn, pg::PRIVATE) {
            return;
        }
        self.frames.clear(pfn, pg::PRIVATE);
        let (lv, bytes) = (self.folio_lruvec(pfn), self.folio_buffers_b());
        self.lruvecs[lv as usize].buffer_heads_b -= bytes;
        self.obj_uncharge(lv, bytes);
    }

    /// `mem_cgroup_uncharge` of one frame's page.
    #[inline]
    pub fn uncharge_frame(&mut self, pfn: Pfn) {
        let memcg = self.frames.memcg(pfn) as usize;
        self.memcgs[memcg].usage -= 1;
    }

    /// `folio_lruvec`.
    #[inline(always)]
    pub fn folio_lruvec(&self, pfn: Pfn) -> LruvecId {
        self.lruvec_id(self.frames.memcg(pfn), self.node_of(pfn))
    }

    /// `update_lru_size`: local size of the lruvec, hierarchical sizes of it and its
    /// ancestors.
    #[inline]
    pub fn update_lru_size(&mut self, lv: LruvecId, lru: LruList, delta: i64) {
        let l = &mut self.lruvecs[lv as usize];
        l.lru_size[lru as usize] = l.lru_size[lru as usize].wrapping_add_signed(delta);
        let mut cur = Some(lv);
        while let Some(i) = cur {
            let l = &mut self.lruvecs[i as usize];
            l.hier_size[lru as usize] = l.hier_size[lru as usize].wrapping_add_signed(delta);
            cur = l.parent;
        }
    }

    /// `workingset_age_nonresident` (B.2): advance the clock of the lruvec and all
    /// its ancestors.
    #[inline]
    pub fn workingset_age_nonresident(&mut self, lv: LruvecId, nr_pages: u64) {
        let mut cur = Some(lv);
        while let Some(i) = cur {
            let l = &mut self.lruvecs[i as usize];
            l.nonresident_age += nr_pages;
            cur = l.parent;
        }
    }

    /// `lru_note_cost` (A.6): cost = nr_io * SWAP_CLUSTER_MAX + nr_rotated, added up
    /// the hierarchy, halving both costs when they exceed a quarter of the LRU pages.
    pub fn lru_note_cost(&mut self, lv: LruvecId, file: bool, nr_io: u64, nr_rotated: u64) {
        let cost = nr_io * crate::vmscan::SWAP_CLUSTER_MAX + nr_rotated;
        let mut cur = Some(lv);
        while let Some(i) = cur {
            let l = &mut self.lruvecs[i as usize];
            if file {
                l.file_cost += cost;
            } else {
                l.anon_cost += cost;
            }
            // Decay by the LRU size lruvec_page_state reads (as of the last flush).
            if l.file_cost + l.anon_cost > l.stat.size[..4].iter().sum::<u64>() / 4 {
                l.file_cost /= 2;
                l.anon_cost /= 2;
            }
            cur = l.parent;
        }
    }

    /// `__count_memcg_events(memcg, e, n)`: memcg `memcg`'s memory.stat event only.
    #[inline(always)]
    pub fn count_memcg_events(&mut self, memcg: MemcgId, e: Ev, n: u64) {
        self.memcg_vmstats[memcg as usize].count(e, n);
    }

    /// `count_vm_events` + `count_memcg_folio_events`: the global event and that of
    /// the memcg folio `pfn` is charged to.
    #[inline(always)]
    pub fn count_folio_events(&mut self, pfn: Pfn, e: Ev, n: u64) {
        self.vmstat.count(e, n);
        let memcg = self.frames.memcg(pfn);
        self.count_memcg_events(memcg, e, n);
    }

    /// `count_vm_events` + `__count_memcg_events(lruvec_memcg(lruvec), ..)`; also what
    /// `mod_lruvec_state` does for the WORKINGSET_* event items (node and memcg).
    #[inline(always)]
    pub fn count_lruvec_events(&mut self, lv: LruvecId, e: Ev, n: u64) {
        self.vmstat.count(e, n);
        let memcg = self.lruvecs[lv as usize].memcg;
        self.count_memcg_events(memcg, e, n);
    }

    /// `mod_lruvec_state(lruvec, WORKINGSET_*_BASE + file, n)` for the event counters
    /// that reclaim reads back per lruvec; also counts the global vmstat event and the
    /// lruvec's memcg's.
    pub fn count_workingset_activate(&mut self, lv: LruvecId, file: bool, n: u64) {
        self.count_lruvec_events(lv, Ev::by_type(Ev::WorkingsetActivateAnon, file), n);
        let mut cur = Some(lv);
        while let Some(i) = cur {
            let l = &mut self.lruvecs[i as usize];
            l.workingset_activate[file as usize] += n;
            cur = l.parent;
        }
    }

    /// Free pages of a node (`NR_FREE_PAGES` summed over its zones).
    pub fn node_free_pages(&self, node: u16) -> u64 {
        self.nodes[node as usize].zones.iter().map(|&z| self.buddy.zones[z].free_pages).sum()
    }

    pub fn total_free_pages(&self) -> u64 {
        self.buddy.zones.iter().map(|z| z.free_pages).sum()
    }

    /// Σ `high_wmark_pages` over a node's zones (boost included, spec A.5).
    pub fn node_high_wmark(&self, node: u16) -> u64 {
        self.nodes[node as usize].zones.iter().map(|&z| self.buddy.zones[z].high_wmark_pages()).sum()
    }

    /// `zone_idx(zone)`: its `enum zone_type` index.
    #[inline]
    pub fn zone_idx(&self, zone: usize) -> u8 {
        self.buddy.zones[zone].zone_type as u8
    }

    /// The CPUs of `node` (`cpumask_of_node`): `machine.cpus` split node by node
    /// ([`pcp::cpus_of_node`]).
    pub fn cpus_of_node(&self, node: u16) -> std::ops::Range<u32> {
        pcp::cpus_of_node(self.pcp.nr_cpus(), self.nr_nodes() as u32, node as u32)
    }

    /// `folio_zonenum(folio)`: the `enum zone_type` index of the zone holding `pfn`.
    #[inline]
    pub fn folio_zonenum(&self, pfn: Pfn) -> u8 {
        self.zone_idx(self.buddy.zone_of(pfn))
    }

    /// Whether a reclaim of the zones up to `reclaim_idx` (`sc->reclaim_idx`) meets folios
    /// of a zone above it on `node`: only kswapd's passes for a lower zone do.
    #[inline]
    pub fn reclaim_skips_zones(&self, node: u16, reclaim_idx: u8) -> bool {
        reclaim_idx < page_alloc::ZONE_MOVABLE && self.nodes[node as usize].zones.iter().any(|&z| self.zone_idx(z) > reclaim_idx)
    }

    /// The zones of `node` eligible for `highest_zoneidx` (`zone_idx` ≤ it).
    pub fn eligible_zones(&self, node: u16, highest_zoneidx: u8) -> impl Iterator<Item = usize> + '_ {
        eligible_zones(&self.nodes, &self.buddy, node, highest_zoneidx)
    }

    /// `set_reclaim_active` / `clear_reclaim_active(pgdat, highest_zoneidx)` (mm/vmscan.c
    /// 6.12): `ZONE_RECLAIM_ACTIVE` on `node`'s eligible zones (pcp.rs reads it).
    pub fn set_reclaim_active(&mut self, node: u16, highest_zoneidx: u8, active: bool) {
        self.pcp.set_reclaim_active(eligible_zones(&self.nodes, &self.buddy, node, highest_zoneidx), active);
    }

    /// `pgdat_balanced(pgdat, order, highest_zoneidx)` (mm/vmscan.c 6.12): some eligible
    /// zone meets `high_wmark_pages` (which adds `watermark_boost`, spec A.5); a node with
    /// no eligible zone is balanced.
    pub fn pgdat_balanced(&self, node: u16, order: u8, highest_zoneidx: u8) -> bool {
        let mut eligible = self.eligible_zones(node, highest_zoneidx).peekable();
        eligible.peek().is_none() || eligible.any(|z| self.buddy.zone_watermark_ok_for(z, order, self.buddy.zones[z].high_wmark_pages(), highest_zoneidx))
    }

    /// `get_nr_swap_pages() > 0` (memcgs have no swap limit in the model).
    #[inline]
    pub fn can_reclaim_anon(&self) -> bool {
        self.swap.has_free_slots()
    }

    /// Take one frame of a zone (no watermark check): `rmqueue` → `rmqueue_pcplist`, this
    /// CPU's list refilled from the free lists in a batch when empty.
    pub fn rmqueue(&mut self, zone: usize, mt: MigrateType) -> Option<Pfn> {
        let pfn = self.pcp.rmqueue(&mut self.buddy, &mut self.lists, &mut self.frames.owner, zone, mt)?;
        let ev = if self.buddy.zones[zone].zone_type == ZoneType::Dma { Ev::PgallocDma } else { Ev::PgallocNormal };
        self.vmstat.count(ev, 1);
        Some(pfn)
    }

    /// Give back a block of `2^order` frames that was allocated but never installed.
    pub fn free_block(&mut self, pfn: Pfn, order: u8) {
        self.buddy.free(&mut self.lists, &mut self.frames.owner, pfn, order);
        self.vmstat.count(Ev::Pgfree, 1 << order);
    }

    /// Free a frame (`free_unref_page`): onto this CPU's list, which gives frames back to
    /// the buddy allocator in batches.
    pub fn free_frame(&mut self, pfn: Pfn) {
        self.frames.release(pfn);
        self.pcp.free(&mut self.buddy, &mut self.lists, &mut self.frames.owner, pfn);
        self.vmstat.count(Ev::Pgfree, 1);
    }

    /// `swap_free` of a swapped-out page's entry `slot` on this CPU (`free_swap_slot`):
    /// parked in the CPU's slots cache; the slots whose release falls due are released
    /// ([`Self::swap_release_due`]).
    pub fn swap_free(&mut self, slot: u32) {
        // The shadow's value is dead from here (nothing reads a freed slot's); its entry
        // stays, for the node's count, until the slot is released.
        self.pages.set_swap_shadow(slot, 0);
        if self.swap.free_swap_slot(self.pcp.cpu, slot) {
            self.swap_release_due();
        }
    }

    /// `folio_alloc_swap` of a page on this CPU: a slot, or `None` when the device has
    /// none free (the caller checked [`swap::Swap::can_alloc`]).
    pub fn swap_alloc(&mut self) -> Option<u32> {
        let slot = self.swap.alloc_slot(self.pcp.cpu);
        if self.swap.release_due() {
            self.swap_release_due();
        }
        slot
    }

    /// `swapcache_free_entries` of the slots due: each slot is freed with the shadow it
    /// may still hold in the swap cache (`clear_shadow_from_swap_cache`, which frees a
    /// node it empties); on zram the compressed copy goes (`zram_slot_free_notify`) and
    /// the pool shrinks to what the rest needs.
    fn swap_release_due(&mut self) {
        let due = self.swap.take_released();
        for &slot in &due {
            if self.swap.release_stored(slot) {
                self.shadow_nodes.swap_node_emptied((slot >> workingset::XA_CHUNK_SHIFT) as usize);
            }
        }
        self.swap.put_released(due);
        self.zram_shrink_pool();
    }

    /// Free the zram pool's frames beyond what its stored pages need.
    pub fn zram_shrink_pool(&mut self) {
        if self.swap.is_zram() {
            let need = self.swap.zram_frames_for(self.swap.stored);
            while self.swap.zram_pool.len() as u64 > need {
                let pfn = self.swap.zram_pool.pop().expect("pool longer than need");
                self.free_frame(pfn);
            }
        }
    }

    /// `__delete_from_swap_cache(folio, entry, shadow)`: the swapped-out page's shadow goes
    /// into its slot `slot` of the swap cache; a node that was empty is allocated on list
    /// `lv`. Before the first batch (no nodes) a no-op.
    #[inline]
    pub fn swap_cache_store(&mut self, slot: u32, lv: u32) {
        if self.shadow_nodes.is_loaded() {
            let node = (slot >> workingset::XA_CHUNK_SHIFT) as usize;
            if self.swap.store_shadow(slot) {
                self.shadow_nodes.swap_node_filled(node, lv);
            } else {
                self.shadow_nodes.swap_node_refilled(node);
            }
        }
    }

    /// Pages on the LRU lists of a node (all memcgs), by list.
    pub fn node_lru_pages(&self, node: u16, lru: LruList) -> u64 {
        self.lruvecs[self.lruvec_id(ROOT_MEMCG, node) as usize].hier_size[lru as usize]
    }

    /// Frames in use (not free): LRU pages, zram pool, kernel-used, everything.
    pub fn used_pages(&self) -> u64 {
        self.nr_frames as u64 - self.total_free_pages()
    }

    /// Test helper: is the frame's folio on an LRU list.
    pub fn folio_test_lru(&self, pfn: Pfn) -> bool {
        self.frames.test(pfn, pg::LRU)
    }
}

/// The zones of `node` whose `zone_idx` is at most `highest_zoneidx` ([`Mm::eligible_zones`];
/// over the fields, so that a caller may hold another field of [`Mm`] mutably).
fn eligible_zones<'a>(nodes: &'a [Node], buddy: &'a BuddyAllocator, node: u16, highest_zoneidx: u8) -> impl Iterator<Item = usize> + 'a {
    nodes[node as usize].zones.iter().copied().filter(move |&z| buddy.zones[z].zone_type as u8 <= highest_zoneidx)
}
