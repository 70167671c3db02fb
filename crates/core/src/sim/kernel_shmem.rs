//! The root memcg's tmpfs pages at the workload's start (`machine.kernel_shmem`: an
//! initramfs root on tmpfs, /proc/meminfo `Shmem`) as folios reclaim can take.
//!
//! Shmem folios are swap-backed page cache on the anon LRU (`shmem_add_to_page_cache` →
//! `folio_add_lru`, mm/shmem.c 6.12), dirty from the write that filled them, and not mapped
//! unless a process maps the file. Whole-machine reclaim swaps them out like anon folios
//! (`shrink_folio_list` → `shmem_writepage` → the swap cache), each leaving a shadow in the
//! swap cache's xarray; and every one swapped out leaves the root memcg's own LRU, whose
//! size bounds the shadow nodes the root may keep (`count_shadow_nodes`, mm/workingset.c
//! 6.12): the validation guest's initramfs went from 7.3 MB resident to under 1 MB during an
//! anon workload, and with it the swap cache's shadows (docs/validation.md).
//!
//! Abstractions: the folios get page ids after the trace's own (from the next page-table
//! boundary; DAMON's virtual address space stops below them), which no record names, so
//! they are never touched again (the guest's shell touches a few); their frames are the
//! ones `Mm::new` set aside (mm/mod.rs). A trace whose page ids are not known up front
//! (text formats), or whose unbounded file could reach those ids, keeps them counted
//! statically as the root memcg's unreclaimable LRU pages, as before.

use super::engine::Machine;
use crate::mm::lruvec::LruList;
use crate::mm::memcontrol::ROOT_MEMCG;
use crate::mm::page::{pg, PTRS_PER_PTE};
use crate::policy::ReclaimPolicy;
use crate::Result;

/// A tmpfs folio a `write()` filled: swap-backed, dirty, `PG_referenced`
/// (`shmem_get_folio_gfp` for `SGP_WRITE`, mm/shmem.c 6.12), and young to DAMON: an
/// unmapped folio is young while `PG_idle` is clear (`damon_folio_young`, mm/damon/paddr.c
/// 6.12), which only DAMON's own mkold sets.
const SHMEM_FLAGS: u32 = pg::SWAPBACKED | pg::DIRTY | pg::REFERENCED | pg::DAMON_ACCESSED;

impl<P: ReclaimPolicy> Machine<P> {
    /// Give `machine.kernel_shmem`'s frames pages after the trace's page ids (`nr_pages`,
    /// None when not known up front): unmapped tmpfs folios ([`SHMEM_FLAGS`]) of the
    /// root memcg on its anon LRU. Nothing is counted as a fault, an allocation or a footprint:
    /// they were there before the workload. Runs once, at the first batch (the caller's
    /// `kernel_shmem_frames` is not empty).
    pub(super) fn place_kernel_shmem(&mut self, nr_pages: Option<u32>) -> Result<()> {
        let frames = std::mem::take(&mut self.mm.kernel_shmem_frames);
        // From a page-table boundary on: no PTE table (look-around, the aging walk) holds
        // both the trace's pages and these.
        let Some(first) = nr_pages.map(|n| (n as u64).max(self.filemap.files_end()).next_multiple_of(PTRS_PER_PTE as u64)) else {
            return Ok(());
        };
        let end = first + frames.len() as u64;
        if end > u32::MAX as u64 || self.filemap.overlaps(first as u32, end as u32) {
            return Ok(());
        }
        self.mm.pages.ensure(end as usize)?;
        self.mm.pages.kernel_first = Some(first as usize);
        for (page, &pfn) in (first as u32..).zip(&frames) {
            self.mm.memcgs[ROOT_MEMCG as usize].usage += 1;
            self.mm.pages.pte[page as usize] = pfn;
            self.mm.frames.install(pfn, page, ROOT_MEMCG, SHMEM_FLAGS);
            self.policy.folio_add_lru(&mut self.mm, pfn);
            let node = self.mm.node_of(pfn);
            self.mm.root_kernel_lru_take(node, LruList::InactiveAnon);
        }
        self.mm.nr_kernel_used -= frames.len() as u64;
        self.mm.flush_memcg_stats();
        Ok(())
    }
}
