//! `thp@5.4`: the design merged in 2019 (Linux v5.4).
//!
//! - mm/huge_memory.c `alloc_hugepage_direct_gfpmask` (the consolidation of 89c83fb539f9,
//!   reverted and re-applied in 2019): no `__GFP_THISNODE` in the mask at all.
//! - mm/mempolicy.c `alloc_pages_vma`, hugepage branch (76e654cc91bb "mm, page_alloc:
//!   allow hugepage fallback to remote nodes when madvised"): "First, try to allocate THP
//!   only on local node, but don't reclaim unnecessarily, just compact" —
//!   `gfp | __GFP_THISNODE | __GFP_NORETRY`; then, if the mask allows direct reclaim
//!   (madvised, or defrag=always), the same request on the whole zonelist with reclaim and
//!   compaction.
//! - mm/page_alloc.c `__alloc_pages_slowpath` (v5.4; b39d0ee2632d "mm, page_alloc: avoid
//!   expensive reclaim when compaction may not succeed", folded into the `__GFP_NORETRY`
//!   check): a costly `__GFP_NORETRY` request gives up after the first compaction if it was
//!   `COMPACT_SKIPPED` (below the watermarks: reclaim would be needed) or
//!   `COMPACT_DEFERRED`, otherwise it reclaims once and compacts asynchronously.

use super::{PageAllocator, ThpPolicy};
use crate::mm::page_alloc::Pfn;
use crate::thp::compaction::CompactResult;
use crate::thp::gfp::*;
use crate::thp::HPAGE_PMD_ORDER;

pub struct V5_4;

impl ThpPolicy for V5_4 {
    fn gfp_mask(&self, defrag: ThpDefrag, vma_madvised: bool) -> Gfp {
        thp_gfp_mask(defrag, vma_madvised)
    }

    fn alloc_hugepage_vma(&self, a: &mut dyn PageAllocator, gfp: Gfp, node: u16) -> Option<Pfn> {
        let page = a.alloc_pages(gfp | __GFP_THISNODE | __GFP_NORETRY, HPAGE_PMD_ORDER, node);
        if page.is_none() && gfp & __GFP_DIRECT_RECLAIM != 0 {
            return a.alloc_pages(gfp, HPAGE_PMD_ORDER, node);
        }
        page
    }

    fn costly_gives_up(&self, gfp: Gfp, _order: u8, r: CompactResult) -> bool {
        gfp & __GFP_NORETRY != 0 && (r == CompactResult::Skipped || r == CompactResult::Deferred)
    }
}
