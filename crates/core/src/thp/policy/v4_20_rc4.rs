//! `thp@4.20-rc4`: Linux v4.20-rc4 as in mmots-20181130, seed 003's baseline.
//!
//! mm/huge_memory.c `alloc_hugepage_direct_gfpmask` (after 89c83fb539f9 "mm, thp:
//! consolidate THP gfp handling into alloc_hugepage_direct_gfpmask" and Andrea Arcangeli's
//! ac5b2c18911f "mm: thp: relax __GFP_THISNODE for MADV_HUGEPAGE mappings"):
//! `__GFP_THISNODE` is added only to masks without `__GFP_DIRECT_RECLAIM` ("If the defrag
//! mode and/or madvise hint requires the direct reclaim then we prefer to fallback to
//! other node rather than node reclaim"); the MPOL_BIND exception is not modelled (tasks
//! have the default policy). `alloc_pages_vma` makes one `__alloc_pages_nodemask` call.
//! mm/page_alloc.c `__alloc_pages_slowpath`: a costly `__GFP_NORETRY` request gives up
//! after the first compaction only if it was `COMPACT_DEFERRED`.

use super::{PageAllocator, ThpPolicy};
use crate::mm::page_alloc::{Pfn, Zone};
use crate::thp::compaction::CompactResult;
use crate::thp::gfp::*;
use crate::thp::HPAGE_PMD_ORDER;

pub struct V4_20Rc4;

impl ThpPolicy for V4_20Rc4 {
    fn gfp_mask(&self, defrag: ThpDefrag, vma_madvised: bool) -> Gfp {
        // Each branch of the v4.20 function ORs `this_node` into exactly the masks without
        // __GFP_DIRECT_RECLAIM.
        let gfp = thp_gfp_mask(defrag, vma_madvised);
        if gfp & __GFP_DIRECT_RECLAIM == 0 {
            gfp | __GFP_THISNODE
        } else {
            gfp
        }
    }

    fn alloc_hugepage_vma(&self, a: &mut dyn PageAllocator, gfp: Gfp, node: u16) -> Option<Pfn> {
        a.alloc_pages(gfp, HPAGE_PMD_ORDER, node)
    }

    fn costly_gives_up(&self, gfp: Gfp, _order: u8, r: CompactResult) -> bool {
        gfp & __GFP_NORETRY != 0 && r == CompactResult::Deferred
    }

    fn isolate_free_page_min_wmark(&self, z: &Zone) -> u64 {
        // mmots-20181130 has watermark boosting (1c30844d2dfe), and __isolate_free_page
        // still uses `min_wmark_pages(zone)`, which adds the boost.
        z.min_wmark_pages()
    }
}
