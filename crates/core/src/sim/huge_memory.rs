//! Anonymous THP faults in the trace engine (mm/huge_memory.c 6.12
//! `do_huge_pmd_anonymous_page` → `vma_thp_gfp_mask` → `vma_alloc_folio` →
//! `__do_huge_pmd_anonymous_page`).
//!
//! A trace's page ids stand for one address space: the 512 page ids of an aligned range
//! share a PMD entry. With `transparent_hugepage.enabled=always` the first fault of an
//! anonymous page whose range is still `pmd_none` (no page of it ever faulted, no file
//! page in it) asks for a THP with the fault's gfp mask (`defrag`; a trace carries no
//! `MADV_HUGEPAGE`, so `madvise` mode never maps one), through the THP policy's
//! allocation sequence (`thp.policy`) and `__alloc_pages` (sim/alloc.rs), then charges
//! the memcg 512 pages with the same gfp (sim/charge.rs `try_charge_memcg`). Either
//! failing falls back to a base page (`thp_fault_fallback`, `thp_fault_fallback_charge`).
//! A THP maps all 512 pages: each subpage is a base folio flagged `PG_compound` on the
//! LRU, and reclaim splits the THP when it evicts one (docs/thp.md, "How a THP sits on
//! the LRU").
//!
//! Like the kernel (`hugepage_init`), a machine with less than 512 MiB of memory boots
//! with THP off.

use super::engine::Machine;
use crate::error::Result;
use crate::mm::memcontrol::MemcgId;
use crate::mm::page::{pg, PTRS_PER_PTE};
use crate::mm::page_alloc::{Pfn, PAGEBLOCK_ORDER};
use crate::mm::vmstat::Ev;
use crate::policy::ReclaimPolicy;
use crate::thp::gfp::ThpEnabled;
use crate::thp::{Tc, HPAGE_PMD_NR};
use reclaimlab_trace::Access;

/// `hugepage_init`: "disable transparent hugepages on smaller systems", below 512 MiB of
/// `totalram_pages()`.
const THP_MIN_RAM_PAGES: u64 = 512 << (20 - reclaimlab_trace::PAGE_SHIFT);
/// `sizeof(struct page)` on x86-64: the memory map, reserved at boot and never part of
/// `totalram_pages()`, takes 64 bytes of every 4 KiB page.
const STRUCT_PAGE_BYTES: u64 = 64;

/// Whether anonymous faults of a machine with `cfg` map THPs: `enabled=always` and
/// `totalram_pages()` (`machine.memory` less its memory map) at least 512 MiB. A machine
/// of 512 MiB therefore boots with THP off, as Debian's kernel does.
pub(super) fn thp_faults_enabled(cfg: &crate::config::SimConfig) -> bool {
    let pages = cfg.memory_bytes >> reclaimlab_trace::PAGE_SHIFT;
    let totalram = pages - pages * STRUCT_PAGE_BYTES / reclaimlab_trace::PAGE_SIZE;
    cfg.thp.enabled == ThpEnabled::Always && totalram >= THP_MIN_RAM_PAGES
}

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
        if !self.pmd_none_anon(a.page) {
            return Ok(false);
        }
        let Some(thp) = self.mm.thp.policy else { return Ok(false) };
        // vma_thp_gfp_mask: a trace's mappings are never VM_HUGEPAGE.
        let gfp = thp.gfp_mask(self.mm.cfg.thp.defrag, false);
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
        self.install_huge(a.page, head, memcg);
        self.count_fault(a, Ev::Pgfault);
        self.mm.thp.stat.count(Tc::ThpFaultAlloc, 1);
        // folio_zero_user: 512 pages cleared.
        let latency = self.mm.cfg.cost.minor_fault_ns + HPAGE_PMD_NR as u64 * self.mm.cfg.thp.clear_page_ns;
        self.fault_done(memcg, latency, false, false, true)?;
        Ok(true)
    }

    /// Map the THP at `head` over the PMD range of `page`: every subpage resident and on
    /// the LRU, young (the PMD's accessed bit covers them all), charged to `memcg`.
    fn install_huge(&mut self, page: u32, head: Pfn, memcg: MemcgId) {
        let slot = page as usize / PTRS_PER_PTE;
        let flags = pg::DAMON_ACCESSED | pg::SWAPBACKED | pg::MAPPED | pg::YOUNG;
        crate::thp::map_huge(&mut self.mm, &mut self.policy, (slot * PTRS_PER_PTE) as u32, head, memcg, flags);
        self.mm.pages.pmd_populated[slot] = true;
        self.rec.touched_pages += HPAGE_PMD_NR as u64;
    }
}
