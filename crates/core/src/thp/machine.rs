//! A machine whose tasks map regions and fault them, with THP: the anonymous fault path
//! (`do_huge_pmd_anonymous_page` → `alloc_hugepage_direct_gfpmask` → `alloc_pages_vma`,
//! fallback to `do_anonymous_page`), page tables (`pte_alloc`, one unmovable page per
//! 512 pages mapped, deposited for a THP too), page-cache reads with their
//! slab-reclaimable xarray nodes, `MADV_DONTNEED` (PMD split + deferred split), and
//! `__alloc_pages` with its slow path (mm/page_alloc.c v4.20: wake kswapd, min watermark,
//! initial async compaction for costly orders, direct reclaim, direct compaction, the
//! `__GFP_NORETRY` and costly-order exits). kswapd, kcompactd and khugepaged run on their
//! own clocks and catch up with the task that runs next (the one with the earliest clock).
//!
//! Reclaim is the classic@6.15 model (`vmscan`); a THP's 512 subpages sit on the LRU as
//! base folios flagged `PG_compound` and reclaim splits the THP when it evicts one
//! (docs/thp.md). Contention: each node has one lock for its zone and LRU; a task's
//! reclaim/compaction work holds it for `thp.lock_share` of its duration, and a task
//! arriving while it is held waits (the wait is part of its fault latency).

use super::gfp::*;
use super::kcompactd::{self, Kcompactd};
use super::khugepaged::Khugepaged;
use super::policy::ThpPolicy;
use super::{split, Tc, ThpState, HPAGE_PMD_NR, HPAGE_PMD_ORDER};
use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::mm::page::{is_resident, nonres_pte, pg, pinfo, pte_info, NOT_PRESENT, NO_PAGE};
use crate::mm::page_alloc::{MigrateType, Pfn, DEFAULT_WATERMARK_BOOST_FACTOR, PAGEBLOCK_ORDER};
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;
use crate::sim::alloc::{self, AllocCtx};
use crate::vmscan::Kswapd;

/// No page-table page for this PMD slot.
const NO_PFN: Pfn = u32::MAX;
/// xarray nodes (576 bytes, `radix_tree_node_cachep`, `SLAB_RECLAIM_ACCOUNT`) hold 64
/// slots; 7 fit a 4 KiB slab page: one reclaimable slab page per 448 page-cache pages.
pub const FILE_PAGES_PER_SLAB_PAGE: u32 = 448;

/// A mapping (`vm_area_struct`): page ids `start..start + nr_pages`, `start` 512-aligned.
#[derive(Clone, Debug)]
pub struct Vma {
    pub start: u32,
    pub nr_pages: u32,
    pub file: bool,
    /// `VM_HUGEPAGE` (`MADV_HUGEPAGE`).
    pub hugepage: bool,
    /// `VM_NOHUGEPAGE`.
    pub nohugepage: bool,
    /// `munmap`ped: its page ids are never reused, and khugepaged skips it.
    pub unmapped: bool,
}

#[derive(Clone, Debug)]
pub struct Task {
    pub node: u16,
    pub clock: u64,
}

/// How a fault was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The page was resident.
    Hit,
    /// A base page (including THP fallback).
    Base,
    /// A THP was mapped.
    Huge,
}

pub struct ThpMachine {
    pub mm: Mm,
    /// The reclaim policy (`policy`), chosen by name at run time.
    pub policy: Box<dyn ReclaimPolicy>,
    pub kswapd: Vec<Kswapd>,
    pub kcompactd: Vec<Kcompactd>,
    pub khugepaged: Khugepaged,
    pub thp_policy: &'static dyn ThpPolicy,
    pub proactive: bool,
    pub vmas: Vec<Vma>,
    pub tasks: Vec<Task>,
    /// Per PMD slot (page id >> 9): the page-table page, or `NO_PFN`.
    pub pgtable: Vec<Pfn>,
    /// Per PMD slot: its VMA.
    pub pmd_vma: Vec<u32>,
    pub slab_pages: Vec<Pfn>,
    file_since_slab: u32,
    /// Running task and its stall so far in this fault.
    pub(crate) cur: usize,
    pub(crate) stall: u64,
    /// Per node: when its zone/LRU lock is free again.
    lock_free_at: Vec<u64>,
    next_page: u32,
    /// Σ reclaim+compaction stall of tasks (ns).
    pub stall_ns: u64,
}

impl ThpMachine {
    /// A machine for `cfg` with the reclaim policy named by `policy` (after
    /// `lru_gen.enabled`) and the THP allocation policy named by `thp.policy`.
    pub fn new(cfg: &SimConfig) -> Result<Self> {
        cfg.validate()?;
        let entry = super::policy::find(&cfg.thp.policy)?;
        let name = crate::policy::registry::resolve_lru_gen(&cfg.policy, cfg.lru_gen_enabled)?;
        let reclaim = crate::policy::registry::find(&name)?;
        let mut mm = Mm::new(cfg);
        // Watermark boosting (1c30844d2dfe): in the seed's mmots-20181130 kernels (its
        // "Fragmentation stalls" row is from the same series) and in v5.0+.
        mm.buddy.watermark_boost_factor = DEFAULT_WATERMARK_BOOST_FACTOR;
        ThpState::init(&mut mm);
        mm.thp.policy = Some(entry.policy);
        let mut policy = (reclaim.boxed)();
        for lv in 0..mm.lruvecs.len() as u32 {
            policy.init_lruvec(&mut mm, lv);
        }
        if !mm.lru_folios_migratable {
            // Unmapping, collapse and migration take folios off the LRU (folio_isolate_lru).
            return Err(Error::config("policy", format!("'{name}' cannot run the THP machine's scenarios: its folios cannot be taken off the LRU (folio_isolate_lru), which unmapping, collapse and compaction need")));
        }
        let n = mm.nr_nodes();
        Ok(ThpMachine {
            kswapd: (0..n as u16).map(Kswapd::new).collect(),
            kcompactd: (0..n as u16).map(Kcompactd::new).collect(),
            khugepaged: Khugepaged::new(cfg),
            thp_policy: entry.policy,
            // kcompactd's proactive compaction (v5.9+): the THP policy's kernel decides.
            proactive: entry.policy.proactive_compaction(),
            vmas: Vec::new(),
            tasks: Vec::new(),
            pgtable: Vec::new(),
            pmd_vma: Vec::new(),
            slab_pages: Vec::new(),
            file_since_slab: 0,
            cur: 0,
            stall: 0,
            lock_free_at: vec![0; n],
            next_page: 0,
            stall_ns: 0,
            mm,
            policy,
        })
    }

    pub fn add_task(&mut self, node: u16) -> usize {
        self.tasks.push(Task { node: node % self.mm.nr_nodes() as u16, clock: 0 });
        self.tasks.len() - 1
    }

    /// `mmap` of `nr_pages` (rounded up to a PMD), with `MADV_HUGEPAGE` if `hugepage`.
    pub fn mmap(&mut self, nr_pages: u32, file: bool, hugepage: bool) -> usize {
        let nr = nr_pages.div_ceil(HPAGE_PMD_NR) * HPAGE_PMD_NR;
        let start = self.next_page;
        self.next_page += nr;
        self.mm.pages.ensure(self.next_page as usize).expect("a THP scenario's own page ids fit");
        let slots = (self.next_page >> HPAGE_PMD_ORDER) as usize;
        self.pgtable.resize(slots, NO_PFN);
        self.pmd_vma.resize(slots, self.vmas.len() as u32);
        self.vmas.push(Vma { start, nr_pages: nr, file, hugepage, nohugepage: false, unmapped: false });
        self.vmas.len() - 1
    }

    // ------------------------------------------------------------------ time

    /// Run the daemons due before `t`.
    pub fn catch_up(&mut self, t: u64) {
        self.mm.flush_memcg_stats_due(t);
        for node in 0..self.kswapd.len() {
            while self.kswapd[node].active && self.kswapd[node].clock_ns <= t {
                kcompactd::kswapd_step(&mut self.mm, &mut self.policy, &mut self.kswapd[node], &mut self.kcompactd[node]);
            }
            let kswapd_active = self.kswapd[node].active;
            self.kcompactd[node].run_due(&mut self.mm, t, kswapd_active, self.proactive);
        }
        while self.khugepaged.next_scan <= t {
            self.mm.now = self.khugepaged.next_scan;
            super::khugepaged::khugepaged_scan(self);
        }
        self.mm.now = t;
    }

    #[inline]
    fn task_now(&self) -> u64 {
        self.tasks.get(self.cur).map_or(0, |t| t.clock) + self.stall
    }

    /// Charge `work` ns of reclaim/compaction on `node` to the running task, waiting for
    /// the node's lock first.
    fn charge_work(&mut self, node: u16, work: u64) {
        let t0 = self.task_now();
        let free_at = self.lock_free_at[node as usize];
        let wait = free_at.saturating_sub(t0);
        let held = (work as f64 * self.mm.cfg.thp.lock_share) as u64;
        self.lock_free_at[node as usize] = t0 + wait + held;
        self.stall += wait + work;
    }

    // ------------------------------------------------------------------ allocation

    /// `__alloc_pages_node(node, gfp, order)` (sim/alloc.rs).
    pub fn alloc_pages_mt(&mut self, gfp: Gfp, order: u8, node: u16, mt: MigrateType) -> Result<Option<Pfn>> {
        alloc::alloc_pages_node(self, gfp, order, node, mt)
    }

    // ------------------------------------------------------------------ faults

    /// Run task `t`'s access to page `page` at the task's clock; advances the clock by
    /// the fault's latency. Returns how it was served and the latency (ns).
    pub fn touch(&mut self, t: usize, page: u32, write: bool) -> Result<(Fault, u64)> {
        let start = self.tasks[t].clock;
        self.catch_up(start);
        self.cur = t;
        self.stall = 0;
        let pte = self.mm.pages.pte[page as usize];
        let kind = if is_resident(pte) {
            self.mm.frames.set(pte, pg::MAPPED | pg::YOUNG);
            if write && self.mm.frames.is_file(pte) {
                self.mm.frames.set(pte, pg::DIRTY);
            }
            Fault::Hit
        } else {
            let vma = &self.vmas[self.pmd_vma[(page >> HPAGE_PMD_ORDER) as usize] as usize];
            if vma.file {
                self.filemap_read(page)?;
                Fault::Base
            } else {
                self.anon_fault(page, pte_info(pte))?
            }
        };
        let lat = self.stall + self.fault_cost(kind);
        self.stall_ns += self.stall;
        self.stall = 0;
        self.tasks[t].clock = start + lat;
        Ok((kind, lat))
    }

    fn fault_cost(&self, kind: Fault) -> u64 {
        let c = &self.mm.cfg;
        match kind {
            Fault::Hit => 0,
            Fault::Base => c.cost.minor_fault_ns,
            Fault::Huge => c.cost.minor_fault_ns + HPAGE_PMD_NR as u64 * c.thp.clear_page_ns,
        }
    }

    /// `handle_pte_fault` / `__handle_mm_fault` for an anonymous page.
    fn anon_fault(&mut self, page: u32, info: u8) -> Result<Fault> {
        let slot = (page >> HPAGE_PMD_ORDER) as usize;
        let vma = self.vmas[self.pmd_vma[slot] as usize].clone();
        let pmd_none = self.pgtable[slot] == NO_PFN;
        let range_untouched = (0..HPAGE_PMD_NR).all(|i| self.mm.pages.pte[(slot as u32 * HPAGE_PMD_NR + i) as usize] == NOT_PRESENT);
        if pmd_none
            && range_untouched
            && vma_thp_enabled(self.mm.cfg.thp.enabled, vma.hugepage, vma.nohugepage)
            && self.do_huge_pmd_anonymous_page(slot as u32, vma.hugepage)?
        {
            return Ok(Fault::Huge);
        }
        self.do_anonymous_page(page, info)?;
        Ok(Fault::Base)
    }

    /// `do_huge_pmd_anonymous_page`: allocate a THP (the policy's sequence), deposit a
    /// page table, map all 512 subpages. False = fallback (`thp_fault_fallback`).
    fn do_huge_pmd_anonymous_page(&mut self, slot: u32, madvised: bool) -> Result<bool> {
        let node = self.tasks[self.cur].node;
        let gfp = self.thp_policy.gfp_mask(self.mm.cfg.thp.defrag, madvised);
        let policy = self.thp_policy;
        let page = policy.alloc_hugepage_vma(self, gfp, node);
        let Some(head) = page else {
            self.mm.thp.stat.count(Tc::ThpFaultFallback, 1);
            return Ok(false);
        };
        // pte_alloc_one: the deposited page table.
        self.pte_alloc(slot)?;
        self.install_huge(slot, head);
        self.mm.vmstat.count(Ev::Pgfault, 1);
        self.mm.thp.stat.count(Tc::ThpFaultAlloc, 1);
        Ok(true)
    }

    /// Map the THP at `head` over PMD slot `slot`: every subpage resident, on the LRU.
    pub(crate) fn install_huge(&mut self, slot: u32, head: Pfn) {
        self.mm.memcgs[0].usage += HPAGE_PMD_NR as u64;
        super::map_huge(&mut self.mm, &mut self.policy, slot * HPAGE_PMD_NR, head, 0, pg::SWAPBACKED | pg::MAPPED | pg::YOUNG | pg::DIRTY);
    }

    /// `pte_alloc`: a page-table page (unmovable, `GFP_PGTABLE_USER`) for the slot.
    fn pte_alloc(&mut self, slot: u32) -> Result<()> {
        if self.pgtable[slot as usize] != NO_PFN {
            return Ok(());
        }
        let node = self.tasks[self.cur].node;
        let pfn = self.alloc_order0(node, MigrateType::Unmovable)?;
        self.pgtable[slot as usize] = pfn;
        self.mm.thp.stat.count(Tc::NrPageTablePages, 1);
        Ok(())
    }

    fn alloc_order0(&mut self, node: u16, mt: MigrateType) -> Result<Pfn> {
        match self.alloc_pages_mt(GFP_HIGHUSER_MOVABLE, 0, node, mt)? {
            Some(p) => Ok(p),
            None => Err(Error::oom("order-0 allocation failed")),
        }
    }

    /// `do_anonymous_page` (or `do_swap_page` for a swapped-out page).
    fn do_anonymous_page(&mut self, page: u32, info: u8) -> Result<()> {
        let slot = page >> HPAGE_PMD_ORDER;
        self.pte_alloc(slot)?;
        let node = self.tasks[self.cur].node;
        let pfn = self.alloc_order0(node, MigrateType::Movable)?;
        let shadow = std::mem::take(&mut self.mm.pages.shadow[page as usize]);
        if info & pinfo::SWAPPED != 0 {
            self.mm.swap_free(page);
            self.mm.vmstat.count(Ev::Pswpin, 1);
            self.mm.vmstat.count(Ev::Pgmajfault, 1);
            self.stall += self.mm.cfg.zram_decompress_ns;
        }
        self.mm.vmstat.count(Ev::Pgfault, 1);
        self.mm.pages.pte[page as usize] = pfn;
        self.mm.frames.install(pfn, page, 0, pg::SWAPBACKED | pg::MAPPED | pg::YOUNG | pg::DIRTY);
        self.mm.memcgs[0].usage += 1;
        if shadow != 0 {
            self.policy.workingset_refault(&mut self.mm, pfn, shadow);
        }
        self.policy.folio_add_lru(&mut self.mm, pfn);
        Ok(())
    }

    /// A `read()` of a file page not in the page cache: a page-cache page (movable) and,
    /// per [`FILE_PAGES_PER_SLAB_PAGE`], a reclaimable slab page for the xarray.
    fn filemap_read(&mut self, page: u32) -> Result<()> {
        let node = self.tasks[self.cur].node;
        if self.file_since_slab == 0 {
            let s = self.alloc_order0(node, MigrateType::Reclaimable)?;
            self.slab_pages.push(s);
            self.mm.thp.stat.count(Tc::NrSlabReclaimablePages, 1);
        }
        self.file_since_slab = (self.file_since_slab + 1) % FILE_PAGES_PER_SLAB_PAGE;
        let pfn = self.alloc_order0(node, MigrateType::Movable)?;
        let shadow = std::mem::take(&mut self.mm.pages.shadow[page as usize]);
        self.mm.pages.pte[page as usize] = pfn;
        self.mm.frames.install(pfn, page, 0, 0);
        self.mm.memcgs[0].usage += 1;
        self.mm.vmstat.count(Ev::Pgpgin, 4);
        self.stall += self.mm.cfg.cost.file_read_ns;
        if shadow != 0 {
            self.policy.workingset_refault(&mut self.mm, pfn, shadow);
        }
        self.policy.folio_add_lru(&mut self.mm, pfn);
        self.policy.folio_mark_accessed(&mut self.mm, pfn);
        Ok(())
    }

    /// `MADV_DONTNEED` of pages `first..first + n` of the address space (anonymous): base
    /// pages are freed; a THP partly covered has its PMD split (`thp_split_pmd`), the
    /// covered subpages unmapped and the THP queued for deferred split; a THP fully
    /// covered is freed whole.
    pub fn madv_dontneed(&mut self, first: u32, n: u32) {
        let mut page = first;
        let end = first + n;
        while page < end {
            let pte = self.mm.pages.pte[page as usize];
            if !is_resident(pte) {
                if pte_info(pte) & pinfo::SWAPPED != 0 {
                    self.mm.swap_free(page);
                }
                self.mm.pages.pte[page as usize] = NOT_PRESENT;
                self.mm.pages.shadow[page as usize] = 0;
                page += 1;
                continue;
            }
            if self.mm.frames.test(pte, pg::COMPOUND) {
                let slot_start = page & !(HPAGE_PMD_NR - 1);
                let head = pte - (page - slot_start);
                let cover_end = end.min(slot_start + HPAGE_PMD_NR);
                if page == slot_start && cover_end == slot_start + HPAGE_PMD_NR {
                    // The whole THP goes (zap_huge_pmd, or the rest of a partly unmapped one).
                    let pb = (head >> PAGEBLOCK_ORDER) as usize;
                    if !self.mm.thp.split_queued[pb] {
                        // zap_huge_pmd → zap_deposited_table: the PMD is none again.
                        self.free_pgtable(slot_start >> HPAGE_PMD_ORDER);
                    }
                    self.mm.thp.huge[pb] = false;
                    self.mm.thp.split_queued[pb] = false;
                    for f in head..head + HPAGE_PMD_NR {
                        self.mm.frames.clear(f, pg::COMPOUND);
                        if self.mm.frames.page(f) == NO_PAGE {
                            self.mm.free_frame(f);
                        }
                    }
                    for p in slot_start..cover_end {
                        if is_resident(self.mm.pages.pte[p as usize]) {
                            self.zap_page(p);
                        }
                    }
                } else {
                    // __split_huge_pmd, then the unmapped subpages wait for the split.
                    self.mm.thp.stat.count(Tc::ThpSplitPmd, 1);
                    for p in page..cover_end {
                        let f = self.mm.pages.pte[p as usize];
                        if is_resident(f) {
                            self.policy.folio_isolate_lru(&mut self.mm, f);
                            self.mm.frames.install(f, NO_PAGE, 0, pg::COMPOUND);
                            self.mm.pages.pte[p as usize] = NOT_PRESENT;
                            self.mm.memcgs[0].usage -= 1;
                        }
                    }
                    if (head..head + HPAGE_PMD_NR).all(|f| self.mm.frames.page(f) == NO_PAGE) {
                        // The last mapping went: the folio's refcount drops to zero and it
                        // is freed whole, leaving the deferred split queue
                        // (folio_undo_large_rmappable); the PTE table stays.
                        let pb = (head >> PAGEBLOCK_ORDER) as usize;
                        self.mm.thp.huge[pb] = false;
                        self.mm.thp.split_queued[pb] = false;
                        for f in head..head + HPAGE_PMD_NR {
                            self.mm.frames.clear(f, pg::COMPOUND);
                            self.mm.free_frame(f);
                        }
                    } else {
                        split::deferred_split_folio(&mut self.mm, head);
                    }
                }
                page = cover_end;
                continue;
            }
            self.zap_page(page);
            page += 1;
        }
    }

    /// `munmap` of VMA `vma` (or `exit_mmap`): zap every page (`unmap_vmas`, as
    /// [`madv_dontneed`](Self::madv_dontneed)), then free the page tables of its PMD slots
    /// (`free_pgtables`; VMAs are PMD-aligned, so every slot is wholly inside). A file
    /// VMA's pages stay in the page cache (`filemap` pages outlive the mapping).
    pub fn munmap(&mut self, vma: usize) {
        let Vma { start, nr_pages, file, .. } = self.vmas[vma];
        if !file {
            self.madv_dontneed(start, nr_pages);
        }
        for slot in start >> HPAGE_PMD_ORDER..(start + nr_pages) >> HPAGE_PMD_ORDER {
            self.free_pgtable(slot);
        }
        self.vmas[vma].unmapped = true;
    }

    /// `echo 3 > /proc/sys/vm/drop_caches` (`drop_pagecache_sb` → `invalidate_mapping_pages`,
    /// then `drop_slab`) for every file VMA: every clean page-cache page is removed
    /// without a shadow entry (`remove_mapping(..., reclaimed = false)`), shadow
    /// entries of evicted pages are cleared (`clear_shadow_entry`), and the xarray's slab
    /// pages, now empty, are freed. Dirty pages stay (no `sync` first). Returns the pages
    /// freed. Abstractions: SLUB keeps up to `min_partial` (5) empty slabs per node; here
    /// all go. The kernel skips pages still mapped; file pages here keep `PG_mapped` after
    /// `munmap`, so they are not told apart: call it only when no task maps the files (as
    /// thpscale does, between thread counts).
    pub fn drop_caches(&mut self) -> u64 {
        let mut freed = 0;
        for v in 0..self.vmas.len() {
            let Vma { start, nr_pages, file, .. } = self.vmas[v];
            if !file {
                continue;
            }
            for page in start..start + nr_pages {
                let pte = self.mm.pages.pte[page as usize];
                if is_resident(pte) {
                    if self.mm.frames.test(pte, pg::DIRTY) {
                        continue;
                    }
                    self.zap_page(page);
                    freed += 1;
                }
                self.mm.pages.pte[page as usize] = NOT_PRESENT;
                self.mm.pages.shadow[page as usize] = 0;
            }
        }
        for s in std::mem::take(&mut self.slab_pages) {
            self.mm.free_frame(s);
            freed += 1;
        }
        self.file_since_slab = 0;
        freed
    }

    /// Free the page-table page of PMD slot `slot` (`pte_free`).
    fn free_pgtable(&mut self, slot: u32) {
        let t = std::mem::replace(&mut self.pgtable[slot as usize], NO_PFN);
        if t != NO_PFN {
            self.mm.free_frame(t);
        }
    }

    /// Unmap and free one resident base page.
    fn zap_page(&mut self, page: u32) {
        let pfn = self.mm.pages.pte[page as usize];
        self.policy.folio_isolate_lru(&mut self.mm, pfn);
        self.mm.pages.pte[page as usize] = NOT_PRESENT;
        self.mm.memcgs[0].usage -= 1;
        self.mm.free_frame(pfn);
    }

    /// Nodes the pages of `first..first + n` are on: counts per node.
    pub fn pages_per_node(&self, first: u32, n: u32) -> Vec<u64> {
        let mut v = vec![0; self.mm.nr_nodes()];
        for p in first..first + n {
            let pte = self.mm.pages.pte[p as usize];
            if is_resident(pte) {
                v[self.mm.node_of(pte) as usize] += 1;
            }
        }
        v
    }

    /// Every counter: vmstat, then THP/compaction/NUMA.
    pub fn counters(&self) -> Vec<(String, u64)> {
        self.mm.vmstat.iter().chain(self.mm.thp.stat.iter()).map(|(k, v)| (k.to_string(), v)).collect()
    }

    /// Structural checks (tests): allocator and lists, LRU sizes, owners and PTEs, THP
    /// flags, frame conservation.
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        self.mm.lists.check_invariants()?;
        self.mm.buddy.check_invariants(&self.mm.lists)?;
        self.policy.check_invariants(&self.mm)?;
        let resident = self.mm.pages.pte.iter().filter(|&&p| is_resident(p)).count() as u64;
        let lru: u64 = self.mm.lruvecs.iter().map(|l| l.lru_size.iter().sum::<u64>()).sum();
        if lru != resident {
            return Err(format!("{lru} folios on LRU lists, {resident} resident pages"));
        }
        for (page, &p) in self.mm.pages.pte.iter().enumerate() {
            if is_resident(p) && self.mm.frames.page(p) as usize != page {
                return Err(format!("page {page} maps pfn {p} owned by page {}", self.mm.frames.page(p)));
            }
            if !is_resident(p) && p != nonres_pte(pte_info(p)) {
                return Err(format!("page {page}: bad pte {p:#x}"));
            }
        }
        let tables = self.pgtable.iter().filter(|&&p| p != NO_PFN).count() as u64;
        let queued: u64 = (0..self.mm.nr_frames).filter(|&f| self.mm.frames.test(f, pg::COMPOUND) && self.mm.frames.page(f) == NO_PAGE).count() as u64;
        let free = self.mm.total_free_pages();
        let pool = self.mm.swap.zram_pool.len() as u64;
        let kernel = self.mm.nr_kernel_used;
        let total = free + resident + pool + tables + self.slab_pages.len() as u64 + queued + kernel;
        if total != self.mm.nr_frames as u64 {
            return Err(format!(
                "frames not conserved: {free} free + {resident} resident + {pool} zram + {tables} page tables + {} slab + {queued} unmapped THP subpages + {kernel} kernel-used != {}",
                self.slab_pages.len(),
                self.mm.nr_frames
            ));
        }
        for (pb, &h) in self.mm.thp.huge.iter().enumerate() {
            let head = (pb as u32) << PAGEBLOCK_ORDER;
            for f in head..(head + HPAGE_PMD_NR).min(self.mm.nr_frames) {
                if self.mm.frames.test(f, pg::COMPOUND) != h {
                    return Err(format!("pfn {f}: PG_compound {} but pageblock huge {h}", !h));
                }
            }
        }
        if self.mm.memcgs[0].usage != resident {
            return Err(format!("root usage {} != {resident} resident", self.mm.memcgs[0].usage));
        }
        Ok(())
    }
}

impl AllocCtx for ThpMachine {
    type P = Box<dyn ReclaimPolicy>;
    fn mm(&mut self) -> &mut Mm {
        &mut self.mm
    }
    fn mm_and_policy(&mut self) -> (&mut Mm, &mut Self::P) {
        (&mut self.mm, &mut self.policy)
    }
    fn task_now(&self) -> u64 {
        self.task_now()
    }
    fn local_node(&self, preferred: u16) -> u16 {
        self.tasks.get(self.cur).map_or(preferred, |t| t.node)
    }
    fn wakeup_kswapd(&mut self, node: u16) {
        let now = self.task_now();
        self.kswapd[node as usize].wakeup(&mut self.mm, now);
    }
    fn wakeup_kcompactd(&mut self, node: u16, order: u8) {
        let now = self.task_now();
        self.kcompactd[node as usize].wakeup(&mut self.mm, order, now);
    }
    fn charge_work(&mut self, node: u16, ns: u64, _reclaim: bool) {
        self.charge_work(node, ns);
    }
    fn catch_up(&mut self) -> Result<()> {
        let t = self.task_now();
        self.catch_up(t);
        Ok(())
    }
    fn oom(&mut self, order: u8) -> Error {
        Error::oom(format!("order-{order} allocation failed: {} free pages, reclaim made no progress", self.mm.total_free_pages()))
    }
}
