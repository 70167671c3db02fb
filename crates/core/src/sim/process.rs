//! Tasks and their mappings: the process model that programmed workloads (thpscale and
//! usemem, crate::scenario::thp) drive on the one machine.
//!
//! A trace replays one stream on one clock; its ids are one mapping that its madvise ops
//! flag or unmap ([`Machine::trace_madvise`]). A program runs
//! tasks, each with its own clock and home node, over VMAs it maps ([`Machine::mmap`],
//! rounded to a PMD, `MADV_HUGEPAGE` or not) and unmaps ([`Machine::munmap`],
//! [`Machine::madv_dontneed`]), and each access goes through the engine's own fault path
//! ([`Machine::touch`]: sim/engine.rs, sim/filemap.rs, sim/huge_memory.rs) at the task's
//! clock and on its node. What a declared mapping adds:
//! - page tables (`pte_alloc`, mm/memory.c 6.12): one unmovable page per PMD slot a task
//!   faults in, deposited with a THP too; freed by `munmap` (`free_pgtables`) and by
//!   `zap_huge_pmd` (the deposited table);
//! - the mapped file's xarray nodes: one slab-reclaimable page per
//!   [`FILE_PAGES_PER_SLAB_PAGE`] pages entering its page cache, freed by `drop_caches`
//!   but for one per that many pages it leaves (those a live mapping maps);
//! - the VMA's `VM_HUGEPAGE`/`VM_NOHUGEPAGE` for the THP decision, and khugepaged's
//!   scan (crate::sim::khugepaged);
//! - per node, one zone/LRU lock: a task's direct reclaim and compaction hold it for
//!   `thp.lock_share` of their work, and a task arriving while another holds it waits
//!   (the wait is part of its fault's latency). One task never waits for itself, so a
//!   trace (one clock) is unaffected;
//! - CPUs: a task runs on its node's CPUs in turn (mm/pcp.rs `cpus_of_node`), and tasks on
//!   one CPU run one at a time, a task starting when the CPU is free ([`Machine::task_start`];
//!   the wait is not part of its fault's latency); a kswapd on the same CPU takes turns with
//!   them (sim/daemons.rs).
//!
//! The tasks run by the caller's schedule (the scenarios always run the task with the
//! earliest clock), so the machine's clock is the running task's. Abstractions: the slab
//! pages follow insertions rather than live xarray nodes; file pages keep `PG_mapped`
//! after `munmap`.

use super::engine::Machine;
use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::mm::memcontrol::ROOT_MEMCG;
use crate::mm::page::{is_resident, is_swap_pte, nonres_pte, pg, pinfo, pte_info, pte_swap_slot, NOT_PRESENT, NO_PAGE};
use crate::mm::page_alloc::{MigrateType, Pfn, PAGEBLOCK_ORDER};
use crate::policy::ReclaimPolicy;
use crate::sim::alloc;
use crate::thp::gfp::GFP_HIGHUSER_MOVABLE;
use crate::thp::{split, Tc, HPAGE_PMD_NR, HPAGE_PMD_ORDER};
use reclaimlab_trace::{flags, Access, FileRange};

/// No page-table page for this PMD slot.
pub const NO_PFN: Pfn = u32::MAX;
/// No task is running (a trace replays).
pub const NO_TASK: usize = usize::MAX;
/// [`Task::cpu`] of a kernel thread's stand-in task (khugepaged allocating as itself):
/// on no node's CPUs, so no kswapd takes turns with it.
pub const NO_CPU: u32 = u32::MAX;
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
    /// The CPU it runs on: its node's CPUs in turn (mm/pcp.rs `cpus_of_node`).
    pub cpu: u32,
}

/// How an access was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The page was resident.
    Hit,
    /// A base page (including THP fallback and a file page).
    Base,
    /// A THP was mapped.
    Huge,
}

/// The tasks and mappings of a program (empty for a trace).
#[derive(Default)]
pub struct Procs {
    pub tasks: Vec<Task>,
    pub vmas: Vec<Vma>,
    /// Per PMD slot (page id >> 9) of the mapped ids: its page-table page, or [`NO_PFN`].
    pub pgtable: Vec<Pfn>,
    /// Per PMD slot: its VMA.
    pub pmd_vma: Vec<u32>,
    /// Per PMD slot: a `munmap` of part of it split its VMA ([`Machine::munmap_range`]), so
    /// no VMA spans the whole 2 MiB any more.
    pub pmd_split: Vec<bool>,
    pub slab_pages: Vec<Pfn>,
    /// Page-cache insertions since the last slab page, and not yet accounted.
    file_since_slab: u32,
    pub(super) file_inserted: u32,
    /// The running task, or [`NO_TASK`].
    pub cur: usize,
    /// Per node: when its zone/LRU lock is free again.
    lock_free_at: Vec<u64>,
    /// Per CPU: when the task that last ran there (or a kswapd that took its turn,
    /// sim/daemons.rs) left it. Tasks on one CPU run one at a time.
    pub(super) cpu_free_at: Vec<u64>,
    next_page: u32,
    /// A trace's `MADV_HUGEPAGE`/`MADV_NOHUGEPAGE` ops, in order: `(first, end, advice)`
    /// (a trace declares no VMAs: its ids are one mapping that madvise splits).
    pub trace_madvise: Vec<(u32, u32, u8)>,
}

impl Procs {
    pub(super) fn new(nr_nodes: usize) -> Self {
        Procs { cur: NO_TASK, lock_free_at: vec![0; nr_nodes], ..Default::default() }
    }

    /// `(VM_HUGEPAGE, VM_NOHUGEPAGE)` of the mapping of a trace's PMD range of `page`
    /// after its madvise ops: a range one op covers whole takes its flag (a later op
    /// overrides an earlier one); a range an op covers in part is split between two VMAs,
    /// so no VMA holds the whole PMD (`thp_vma_suitable_order` fails): no THP there.
    pub fn trace_thp_flags(&self, page: u32) -> (bool, bool) {
        let first = page & !(HPAGE_PMD_NR - 1);
        let end = first as u64 + HPAGE_PMD_NR as u64;
        let mut flags = (false, false);
        for &(a, b, advice) in &self.trace_madvise {
            if (b as u64) <= first as u64 || a as u64 >= end {
                continue;
            }
            flags = if a <= first && b as u64 >= end { (advice == reclaimlab_trace::MADV_HUGEPAGE, advice == reclaimlab_trace::MADV_NOHUGEPAGE) } else { (false, true) };
        }
        flags
    }

    /// The VMA mapping `page`, if a program declared one.
    #[inline]
    pub fn vma_of(&self, page: u32) -> Option<&Vma> {
        let slot = (page >> HPAGE_PMD_ORDER) as usize;
        self.pmd_vma.get(slot).map(|&v| &self.vmas[v as usize])
    }

    /// The running task's home node.
    #[inline]
    pub fn cur_node(&self) -> Option<u16> {
        self.tasks.get(self.cur).map(|t| t.node)
    }

    /// `work` ns of reclaim or compaction on `node` starting at `now`: how long the task
    /// first waits for the node's lock (held meanwhile for `share` of `work`).
    pub(super) fn lock_wait(&mut self, node: u16, now: u64, work: u64, share: f64) -> u64 {
        let free_at = &mut self.lock_free_at[node as usize];
        let wait = free_at.saturating_sub(now);
        *free_at = now + wait + (work as f64 * share) as u64;
        wait
    }

    /// Mapped PMD slots, for khugepaged's cursor.
    pub fn nr_slots(&self) -> u32 {
        self.pgtable.len() as u32
    }

    /// Page `page` entered the page cache: counted for the xarray slab if it is the
    /// program's file's.
    #[inline]
    pub(super) fn page_cache_inserted(&mut self, page: u32) {
        if self.vma_of(page).is_some() {
            self.file_inserted += 1;
        }
    }
}

/// The one machine for a program, with the reclaim policy `policy` names (after
/// `lru_gen.enabled`) chosen at run time. A policy whose folios cannot be taken off the
/// LRU (`folio_isolate_lru`: the `cache:*` rows) cannot run a program, which unmaps.
pub fn program_machine(cfg: &SimConfig) -> Result<Machine<Box<dyn ReclaimPolicy>>> {
    cfg.validate()?;
    let name = crate::sim::registry::resolve_lru_gen(&cfg.policy, cfg.lru_gen_enabled)?;
    let entry = crate::sim::registry::find(&name)?;
    let mut cfg = cfg.clone();
    cfg.policy = name.clone();
    let mut m = Machine::new(&cfg, (entry.boxed)());
    if !m.mm.lru_folios_migratable {
        return Err(Error::config(
            "policy",
            format!("'{name}' cannot run a program's mappings: its folios cannot be taken off the LRU (folio_isolate_lru), which unmapping, collapse and compaction need"),
        ));
    }
    m.sync_cgroups(&[String::new()]);
    Ok(m)
}

impl<P: ReclaimPolicy> Machine<P> {
    /// A task on `node` (modulo the nodes), its clock at 0, on the next of the node's CPUs
    /// (any CPU for a node without one: its tasks are not bound).
    pub fn add_task(&mut self, node: u16) -> usize {
        let node = node % self.mm.nr_nodes() as u16;
        let nr_cpus = self.mm.pcp.nr_cpus();
        let cpus = self.mm.cpus_of_node(node);
        let nth = self.procs.tasks.iter().filter(|t| t.node == node).count() as u32;
        let cpu = if cpus.is_empty() { nth % nr_cpus } else { cpus.start + nth % cpus.len() as u32 };
        if self.procs.cpu_free_at.len() < nr_cpus as usize {
            self.procs.cpu_free_at.resize(nr_cpus as usize, 0);
        }
        self.procs.tasks.push(Task { node, clock: 0, cpu });
        self.procs.tasks.len() - 1
    }

    /// When task `t` can next run: at its clock, once its CPU is free.
    pub fn task_start(&self, t: usize) -> u64 {
        let task = &self.procs.tasks[t];
        task.clock.max(self.procs.cpu_free_at[task.cpu as usize])
    }

    /// Task `t` runs `ns` of its own work (no fault) from [`Self::task_start`].
    pub fn run_task(&mut self, t: usize, ns: u64) {
        let end = self.task_start(t) + ns;
        self.procs.tasks[t].clock = end;
        self.procs.cpu_free_at[self.procs.tasks[t].cpu as usize] = end;
    }

    /// `mmap` of `nr_pages` (rounded up to a PMD), with `MADV_HUGEPAGE` if `hugepage`. A
    /// file mapping is the program's one file (its page cache, readahead state and xarray
    /// nodes).
    pub fn mmap(&mut self, nr_pages: u32, file: bool, hugepage: bool) -> Result<usize> {
        let nr = nr_pages.div_ceil(HPAGE_PMD_NR) * HPAGE_PMD_NR;
        let start = self.procs.next_page;
        if file {
            if self.procs.vmas.iter().any(|v| v.file) {
                return Err(Error::invalid("a program maps one file"));
            }
            let f = [FileRange { name: "workfile".into(), first: start, nr_pages: nr, advice: FileRange::FADV_NORMAL }];
            self.filemap.load(&f);
            self.mm.shadow_nodes.load(&f);
        }
        self.procs.next_page += nr;
        self.mm.pages.ensure(self.procs.next_page as usize)?;
        let slots = (self.procs.next_page >> HPAGE_PMD_ORDER) as usize;
        self.procs.pgtable.resize(slots, NO_PFN);
        self.procs.pmd_vma.resize(slots, self.procs.vmas.len() as u32);
        self.procs.pmd_split.resize(slots, false);
        self.procs.vmas.push(Vma { start, nr_pages: nr, file, hugepage, nohugepage: false, unmapped: false });
        if !file {
            // khugepaged_enter_vma: the mm is registered for scanning.
            self.khugepaged.enter(self.now);
        }
        Ok(self.procs.vmas.len() - 1)
    }

    /// Run what is due up to `t` (a task about to unmap at its clock; a daemon woken
    /// from outside the fault path).
    pub fn run_until(&mut self, t: u64) -> Result<()> {
        self.procs.cur = NO_TASK;
        self.now = t;
        self.run_events()
    }

    /// Task `t`'s access to `page` (a store if `write`) at the task's clock, through the
    /// engine's fault path; advances the clock by the latency. Returns how it was served
    /// and the latency (ns).
    pub fn touch(&mut self, t: usize, page: u32, write: bool) -> Result<(Fault, u64)> {
        let start = self.task_start(t);
        self.procs.cur = t;
        self.now = start;
        self.catch_up_events()?;
        let file = self.procs.vma_of(page).is_some_and(|v| v.file);
        let resident = is_resident(self.mm.pages.pte[page as usize]);
        if !resident && file {
            // A mapped file fault maps the page: its PTE table first.
            self.pte_alloc(page)?;
        }
        let huge_before = self.mm.thp.stat.get(Tc::ThpFaultAlloc);
        let a = Access { page, cgroup: 0, flags: if file { flags::FILE } else { 0 } | if write { flags::WRITE } else { 0 }, gap: 0 };
        self.access_page(a, &[])?;
        self.account_file_slab()?;
        let kind = if resident {
            Fault::Hit
        } else if self.mm.thp.stat.get(Tc::ThpFaultAlloc) > huge_before {
            Fault::Huge
        } else {
            Fault::Base
        };
        let lat = self.now - start;
        self.procs.tasks[t].clock = self.now;
        self.procs.cpu_free_at[self.procs.tasks[t].cpu as usize] = self.now;
        Ok((kind, lat))
    }

    /// `__alloc_pages_node(node, gfp, order)` for migrate type `mt` (sim/alloc.rs), as the
    /// running task.
    pub fn alloc_pages_node(&mut self, gfp: crate::thp::gfp::Gfp, order: u8, node: u16, mt: MigrateType) -> Result<Option<Pfn>> {
        alloc::alloc_pages_node(self, gfp, order, node, mt)
    }

    /// `pte_alloc`: the page-table page (unmovable, `GFP_PGTABLE_USER`) of the PMD slot of
    /// `page`, if a program mapped it and it has none. No-op for a trace's ids.
    #[inline(always)]
    pub(super) fn pte_alloc(&mut self, page: u32) -> Result<()> {
        let slot = (page >> HPAGE_PMD_ORDER) as usize;
        if self.procs.pgtable.get(slot).map_or(true, |&p| p != NO_PFN) {
            return Ok(());
        }
        self.__pte_alloc(slot)
    }

    /// `__pte_alloc`: allocate the page-table page of PMD slot `slot`.
    #[cold]
    #[inline(never)]
    fn __pte_alloc(&mut self, slot: usize) -> Result<()> {
        let pfn = self.alloc_kernel_page(MigrateType::Unmovable)?;
        self.procs.pgtable[slot] = pfn;
        self.mm.thp.stat.count(Tc::NrPageTablePages, 1);
        Ok(())
    }

    fn alloc_kernel_page(&mut self, mt: MigrateType) -> Result<Pfn> {
        let nodes = self.zonelist_nodes(ROOT_MEMCG);
        match alloc::alloc_pages(self, GFP_HIGHUSER_MOVABLE, 0, &nodes, mt)? {
            Some(p) => Ok(p),
            None => Err(crate::sim::alloc::AllocCtx::oom(self, 0)),
        }
    }

    /// A reclaimable slab page for the xarray per [`FILE_PAGES_PER_SLAB_PAGE`] pages that
    /// entered the page cache.
    fn account_file_slab(&mut self) -> Result<()> {
        while self.procs.file_inserted > 0 {
            self.procs.file_inserted -= 1;
            if self.procs.file_since_slab == 0 {
                let s = self.alloc_kernel_page(MigrateType::Reclaimable)?;
                self.procs.slab_pages.push(s);
                self.mm.thp.stat.count(Tc::NrSlabReclaimablePages, 1);
            }
            self.procs.file_since_slab = (self.procs.file_since_slab + 1) % FILE_PAGES_PER_SLAB_PAGE;
        }
        Ok(())
    }

    /// A trace's `madvise(advice)` of pages `first..first + n`: `MADV_HUGEPAGE` and
    /// `MADV_NOHUGEPAGE` flag the range for later THP faults ([`Procs::trace_thp_flags`]);
    /// `MADV_DONTNEED` unmaps it ([`Self::madv_dontneed`], up to the ids seen so far),
    /// which a policy whose folios cannot be taken off the LRU (`cache:*`) refuses.
    pub fn trace_madvise(&mut self, first: u32, n: u32, advice: u8) -> Result<()> {
        if advice == reclaimlab_trace::MADV_DONTNEED {
            if !self.mm.lru_folios_migratable {
                return Err(Error::config(
                    "policy",
                    format!("'{}' cannot replay the trace's MADV_DONTNEED: its folios cannot be taken off the LRU (folio_isolate_lru), which unmapping needs", self.mm.cfg.policy),
                ));
            }
            let end = (first as u64 + n as u64).min(self.mm.pages.len() as u64);
            if end > first as u64 {
                self.madv_dontneed(first, (end - first as u64) as u32);
            }
        } else {
            self.procs.trace_madvise.push((first, first.saturating_add(n), advice));
        }
        Ok(())
    }

    /// `MADV_DONTNEED` of pages `first..first + n` of a mapping: anonymous base pages are
    /// freed (a swapped one's slot too), file pages unmapped and left in the page cache; a
    /// THP partly covered has its PMD split (`thp_split_pmd`), the covered
    /// subpages unmapped and the THP queued for deferred split; a THP fully covered is
    /// freed whole. A partly unmapped THP stays one folio of 512 pages on its LRU,
    /// charged whole, mapped by PTEs, until reclaim or the deferred split shrinker splits
    /// it (docs/thp.md).
    pub fn madv_dontneed(&mut self, first: u32, n: u32) {
        let mut page = first;
        let end = first + n;
        while page < end {
            let pte = self.mm.pages.pte[page as usize];
            if !is_resident(pte) && pte_info(pte) & pinfo::FILE != 0 {
                // Not mapped: the page cache's shadow stays.
                page += 1;
                continue;
            }
            if is_resident(pte) && self.mm.frames.is_file(pte) {
                // zap_pte_range of a file page: unmapped, it stays in the page cache.
                self.mm.frames.clear(pte, pg::MAPPED | pg::YOUNG);
                page += 1;
                continue;
            }
            if !is_resident(pte) {
                if is_swap_pte(pte) {
                    self.mm.swap_free(pte_swap_slot(pte));
                }
                self.mm.pages.pte[page as usize] = NOT_PRESENT;
                self.mm.pages.set_shadow(page as usize, 0);
                page += 1;
                continue;
            }
            if !self.mm.frames.test(pte, pg::COMPOUND) {
                self.zap_page(page);
                page += 1;
                continue;
            }
            let slot_start = page & !(HPAGE_PMD_NR - 1);
            let head = pte - (page - slot_start);
            let cover_end = end.min(slot_start + HPAGE_PMD_NR);
            let pb = (head >> PAGEBLOCK_ORDER) as usize;
            if page == slot_start && cover_end == slot_start + HPAGE_PMD_NR {
                // The whole THP goes (zap_huge_pmd, or the rest of a partly unmapped one).
                if !self.mm.thp.split_queued[pb] {
                    // zap_huge_pmd → zap_deposited_table: the PMD is none again.
                    self.free_pgtable(slot_start >> HPAGE_PMD_ORDER);
                }
                self.free_thp(head);
                for p in slot_start..cover_end {
                    if is_resident(self.mm.pages.pte[p as usize]) {
                        self.zap_page(p);
                    }
                }
            } else {
                if !self.mm.thp.split_queued[pb] {
                    // __split_huge_pmd_locked: the PMD becomes a PTE table, every PTE
                    // taking the PMD's young bit (kept at the head until now).
                    self.mm.thp.stat.count(Tc::ThpSplitPmd, 1);
                    if self.mm.frames.test(head, pg::YOUNG) {
                        for f in head + 1..head + HPAGE_PMD_NR {
                            self.mm.frames.set(f, pg::YOUNG);
                        }
                    }
                }
                // zap_pte_range: each covered subpage is unmapped and stays in the
                // folio, on the LRU and charged, until the folio is split or freed.
                for p in page..cover_end {
                    let f = self.mm.pages.pte[p as usize];
                    if is_resident(f) {
                        self.mm.frames.clear(f, pg::MAPPED | pg::YOUNG);
                        self.mm.frames.zap_owner(f);
                        self.mm.pages.pte[p as usize] = NOT_PRESENT;
                    }
                }
                if (head..head + HPAGE_PMD_NR).all(|f| self.mm.frames.page(f) == NO_PAGE) {
                    // The last mapping went: the folio's refcount drops to zero and it is
                    // freed whole; the PTE table stays.
                    self.free_thp(head);
                } else {
                    split::deferred_split_folio(&mut self.mm, head, true);
                }
            }
            page = cover_end;
        }
    }

    /// `munmap` of VMA `vma` (or `exit_mmap`): zap every page (`unmap_vmas`, as
    /// [`Self::madv_dontneed`]), then free the page tables of its PMD slots
    /// (`free_pgtables`; VMAs are PMD-aligned, so every slot is wholly inside). A file
    /// VMA's pages stay in the page cache (`filemap` pages outlive the mapping).
    pub fn munmap(&mut self, vma: usize) {
        let Vma { start, nr_pages, file, .. } = self.procs.vmas[vma];
        if !file {
            self.madv_dontneed(start, nr_pages);
        }
        for slot in start >> HPAGE_PMD_ORDER..(start + nr_pages) >> HPAGE_PMD_ORDER {
            self.free_pgtable(slot);
        }
        self.procs.vmas[vma].unmapped = true;
    }

    /// `munmap` of part of an anonymous VMA (`first..first + n`): its pages go as
    /// [`Self::madv_dontneed`] zaps them, and the VMA is split at the range's ends
    /// (`__split_vma`, mm/vma.c 6.12), so a PMD range the unmapped part only partly covers
    /// lies in no one VMA: khugepaged passes it by (`thp_vma_allowable_order` →
    /// `thp_vma_suitable_order`, mm/khugepaged.c 6.12). Its page table stays (it still maps
    /// the rest). Abstraction: the model keeps one VMA with a hole.
    pub fn munmap_range(&mut self, first: u32, n: u32) {
        self.madv_dontneed(first, n);
        let pmd = HPAGE_PMD_NR;
        for slot in first / pmd..(first + n).div_ceil(pmd) {
            let (lo, hi) = (slot * pmd, (slot + 1) * pmd);
            if first > lo || first + n < hi {
                self.procs.pmd_split[slot as usize] = true;
            }
        }
    }

    /// `echo 3 > /proc/sys/vm/drop_caches` (`drop_pagecache_sb` → `invalidate_mapping_pages`,
    /// then `drop_slab`) for the program's file: every clean, unlocked page-cache page no
    /// task maps is removed without a shadow entry (`remove_mapping(..., reclaimed =
    /// false)`), shadow entries of evicted pages are cleared (`clear_shadow_entry`), and the
    /// xarray's slab pages that no longer hold entries are freed. Dirty pages, pages under
    /// writeback, pages whose read is in flight (no `sync` first) and pages still mapped stay:
    /// 6.12's `mapping_evict_folio` (mm/truncate.c) gives up on a folio whose refcount a
    /// mapping raised, and `deactivate_file_folio` leaves a mapped folio where it is
    /// (`lru_deactivate_file`, mm/swap.c). A page is mapped while its VMA is (not
    /// `munmap`ped) and its frame has `PG_mapped` (a fault or fault-around mapped it; pages
    /// only read ahead have not). Returns the pages freed. Abstractions: the xarray keeps one
    /// slab page per [`FILE_PAGES_PER_SLAB_PAGE`] pages that stay (the kernel's depends on
    /// how they are spread); SLUB keeps up to `min_partial` (5) empty slabs per node, here
    /// all go.
    pub fn drop_caches(&mut self) -> u64 {
        self.end_writeback_due(self.now);
        let mut freed = 0;
        let mut kept = 0u32;
        for v in 0..self.procs.vmas.len() {
            let Vma { start, nr_pages, file, unmapped, .. } = self.procs.vmas[v];
            if !file {
                continue;
            }
            for page in start..start + nr_pages {
                let pte = self.mm.pages.pte[page as usize];
                if is_resident(pte) {
                    let flags = self.mm.frames.flags(pte);
                    if flags & (pg::DIRTY | pg::WRITEBACK | pg::INFLIGHT) != 0 || (!unmapped && flags & pg::MAPPED != 0) {
                        kept += 1;
                        continue;
                    }
                    self.mm.release_buffers(pte);
                    self.mm.page_cache_delete(page, false);
                    self.zap_page(page);
                    self.mm.pages.pte[page as usize] = nonres_pte(pinfo::TOUCHED | pinfo::FILE);
                    freed += 1;
                } else if self.mm.pages.take_shadow(page as usize) != 0 {
                    self.mm.clear_shadow_entry(page);
                }
            }
        }
        let keep = kept.div_ceil(FILE_PAGES_PER_SLAB_PAGE) as usize;
        let slab = std::mem::take(&mut self.procs.slab_pages);
        for &s in &slab[keep.min(slab.len())..] {
            self.mm.free_frame(s);
            freed += 1;
        }
        self.procs.slab_pages = slab;
        self.procs.slab_pages.truncate(keep);
        self.procs.file_since_slab = kept % FILE_PAGES_PER_SLAB_PAGE;
        freed
    }

    /// Free the page-table page of PMD slot `slot` (`pte_free`): the PMD is none again.
    fn free_pgtable(&mut self, slot: u32) {
        // A trace's mapping has no page tables.
        let t = self.procs.pgtable.get_mut(slot as usize).map_or(NO_PFN, |t| std::mem::replace(t, NO_PFN));
        if t != NO_PFN {
            self.mm.free_frame(t);
        }
        self.mm.pages.pmd_populated[slot as usize] = false;
    }

    /// Free the THP at `head` whole (`zap_huge_pmd`, or the last unmap of a partly
    /// unmapped one): off its LRU (one folio) and its deferred split queue
    /// (`folio_undo_large_rmappable`), no longer compound, the subpages unmapped earlier
    /// (charged until now) uncharged and freed; the caller zaps those still mapped.
    fn free_thp(&mut self, head: Pfn) {
        self.policy.folio_isolate_lru(&mut self.mm, head);
        self.mm.frames.clear(head, pg::HEAD);
        split::folio_undo_large_rmappable(&mut self.mm, (head >> PAGEBLOCK_ORDER) as usize);
        for f in head..head + HPAGE_PMD_NR {
            self.mm.frames.clear(f, pg::COMPOUND);
            if self.mm.frames.page(f) == NO_PAGE {
                self.mm.uncharge_frame(f);
                self.mm.free_frame(f);
            }
        }
    }

    /// Unmap and free one resident page (not a THP subpage).
    pub(crate) fn zap_page(&mut self, page: u32) {
        let pfn = self.mm.pages.pte[page as usize];
        self.policy.folio_isolate_lru(&mut self.mm, pfn);
        self.mm.uncharge_frame(pfn);
        self.mm.pages.pte[page as usize] = NOT_PRESENT;
        self.mm.free_frame(pfn);
    }

    /// Per node: resident pages of `first..first + n`.
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

    /// Frames a program's mappings hold outside the LRU: page tables and slab pages.
    pub(super) fn procs_frames(&self) -> u64 {
        self.procs.pgtable.iter().filter(|&&p| p != NO_PFN).count() as u64 + self.procs.slab_pages.len() as u64
    }
}
