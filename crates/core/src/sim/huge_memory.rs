//! Anonymous THP faults (mm/huge_memory.c 6.12 `do_huge_pmd_anonymous_page` →
//! `vma_thp_gfp_mask` → `vma_alloc_folio` → `__do_huge_pmd_anonymous_page`), for a
//! trace and a program alike.
//!
//! Page ids stand for one address space: the 512 page ids of an aligned range share a
//! PMD entry. When `transparent_hugepage.enabled` allows it for the mapping
//! (`vma_thp_enabled`: a program's VMA, or a trace's range after its madvise ops, may be
//! `VM_HUGEPAGE` or `VM_NOHUGEPAGE`) the first fault of an
//! anonymous page whose range is still `pmd_none` (no page of it ever faulted, no file
//! page in it) asks for a THP with the fault's gfp mask (`defrag`, madvised or not),
//! through the THP policy's allocation sequence (`thp.policy`) and `__alloc_pages`
//! (sim/alloc.rs), then charges the memcg 512 pages with the same gfp (sim/charge.rs
//! `try_charge_memcg`). Either failing falls back to a base page (`thp_fault_fallback`,
//! `thp_fault_fallback_charge`). A program's mapping deposits a page table with the THP
//! (sim/process.rs). A THP maps all 512 pages and is one folio on the LRU, its head
//! (docs/thp.md, "How a THP sits on the LRU"). The boot default of `enabled` is `ThpConfig::enabled_on`
//! (`hugepage_init`'s 512 MiB rule).

use super::engine::Machine;
use crate::error::Result;
use crate::mm::memcontrol::MemcgId;
use crate::mm::page::{pg, PTRS_PER_PTE};
use crate::mm::page_alloc::{Pfn, PAGEBLOCK_ORDER};
use crate::mm::vmstat::Ev;
use crate::policy::ReclaimPolicy;
use crate::thp::gfp::vma_thp_enabled;
use crate::thp::{Tc, HPAGE_PMD_NR};
use reclaimlab_trace::Access;

impl<P: ReclaimPolicy> Machine<P> {
    /// The PMD entry of `page` is none and covers 512 anonymous page ids of the trace
    /// (`thp_vma_suitable_order` + `pmd_none`). A range with a file page is marked
    /// populated the first time it is asked about.
    fn pmd_none_anon(&mut self, page: u32) -> bool {
        let slot = page as usize / PTRS_PER_PTE;
        if self.mm.pages.pmd_populated[slot] || (slot + 1) * PTRS_PER_PTE > self.mm.pages.len() {
            return false;
        }
        let first = (slot * PTRS_PER_PTE) as u32;
        if self.filemap.overlaps(first, first + HPAGE_PMD_NR) {
            self.mm.pages.pmd_populated[slot] = true;
            return false;
        }
        true
    }

    /// `do_huge_pmd_anonymous_page` for the first fault of anonymous page `a.page`,
    /// charged to `memcg`. False: no THP (not suitable, or a fallback); the caller maps a
    /// base page.
    pub(super) fn do_huge_pmd_anonymous_page(&mut self, a: Access, memcg: MemcgId) -> Result<bool> {
        // A program's VMA, or a trace's one mapping as its madvise ops left it.
        let (hugepage, nohugepage) = self.procs.vma_of(a.page).map_or_else(|| self.procs.trace_thp_flags(a.page), |v| (v.hugepage, v.nohugepage));
        if !vma_thp_enabled(self.thp_enabled, hugepage, nohugepage) || !self.pmd_none_anon(a.page) {
            return Ok(false);
        }
        let Some(thp) = self.mm.thp.policy else { return Ok(false) };
        let gfp = thp.gfp_mask(self.mm.cfg.thp.defrag, hugepage);
        let node = self.zonelist_nodes(memcg)[0];
        let Some(head) = thp.alloc_hugepage_vma(self, gfp, node) else {
            self.mm.thp.stat.count(Tc::ThpFaultFallback, 1);
            return Ok(false);
        };
        // mem_cgroup_charge with the fault's mask: a costly order fails, never OOMs.
        if !self.try_charge_memcg(memcg, HPAGE_PMD_NR as u64, gfp)? {
            self.mm.free_block(head, PAGEBLOCK_ORDER);
            self.mm.thp.stat.count(Tc::ThpFaultFallback, 1);
            self.mm.thp.stat.count(Tc::ThpFaultFallbackCharge, 1);
            return Ok(false);
        }
        // pte_alloc_one: the table deposited with the THP (a program's mappings).
        if let Err(e) = self.pte_alloc(a.page) {
            self.mm.free_block(head, PAGEBLOCK_ORDER);
            return Err(e);
        }
        self.install_huge(a.page, head, memcg);
        self.count_fault(a, Ev::Pgfault);
        self.mm.thp.stat.count(Tc::ThpFaultAlloc, 1);
        // folio_zero_user: 512 pages cleared.
        let latency = self.mm.cfg.cost.minor_fault_ns + HPAGE_PMD_NR as u64 * self.mm.cfg.thp.clear_page_ns;
        self.fault_done(memcg, latency, false, false, true)?;
        Ok(true)
    }

    /// Map the THP at `head` over the PMD range of `page`: every subpage resident, the
    /// folio on the LRU, young (the PMD's accessed bit), charged to `memcg`.
    pub(crate) fn install_huge(&mut self, page: u32, head: Pfn, memcg: MemcgId) {
        let slot = page as usize / PTRS_PER_PTE;
        let flags = pg::DAMON_ACCESSED | pg::SWAPBACKED | pg::MAPPED | pg::YOUNG;
        crate::thp::map_huge(&mut self.mm, &mut self.policy, (slot * PTRS_PER_PTE) as u32, head, memcg, flags);
        self.mm.pages.pmd_populated[slot] = true;
        self.rec.touched_pages += HPAGE_PMD_NR as u64;
    }
}
