//! `thp@5.4`: the design merged in 2019, as Linux v5.4 was released.
//!
//! - mm/huge_memory.c `alloc_hugepage_direct_gfpmask(vma)` (89c83fb539f9 re-applied in
//!   v5.4-rc1 by 92717d429b38): no `__GFP_THISNODE` in the mask at all.
//! - mm/mempolicy.c `alloc_pages_vma`, hugepage branch (v5.4, 76e654cc91bb "mm,
//!   page_alloc: allow hugepage fallback to remote nodes when madvised"):
//!   `page = __alloc_pages_node(hpage_node, gfp | __GFP_THISNODE, order);` then
//!   `if (!page && (gfp & __GFP_DIRECT_RECLAIM)) page = __alloc_pages_node(hpage_node,
//!   gfp | __GFP_NORETRY, order);` — local node first with the mask's own effort, then
//!   the whole zonelist as a `__GFP_NORETRY` request.
//! - mm/page_alloc.c `__alloc_pages_slowpath` (v5.4): after the initial async compaction,
//!   `if (order >= pageblock_order && (gfp_mask & __GFP_IO) && !(gfp_mask &
//!   __GFP_RETRY_MAYFAIL))` a `COMPACT_SKIPPED` or `COMPACT_DEFERRED` result is `goto
//!   nopage` (b39d0ee2632d, merged in v5.4-rc1, with the `__GFP_RETRY_MAYFAIL` exemption
//!   of its hugetlbfs fix-up); then `costly_order && __GFP_NORETRY` and `DEFERRED` →
//!   nopage, else async compaction for the rest. The pageblock rule applies to BOTH
//!   attempts: the all-node retry does not reclaim when compaction is skipped.
//!
//! What the model had before under this name — a `__GFP_THISNODE | __GFP_NORETRY` first
//! attempt, a plain `gfp` retry and the pageblock rule folded into the `__GFP_NORETRY`
//! check — is Vlastimil Babka's cc638f329ef6 "mm, thp: tweak reclaim/compaction effort of
//! local-only and all-node allocations" (posted 29 Oct 2019, merged for v5.5), not v5.4.

use super::{PageAllocator, ThpPolicy};
use crate::mm::page_alloc::{Pfn, Zone, PAGEBLOCK_ORDER, WMARK_MIN};
use crate::thp::compaction::{CompactResult, SkipHints};
use crate::thp::gfp::*;
use crate::thp::HPAGE_PMD_ORDER;

pub struct V5_4;

impl ThpPolicy for V5_4 {
    fn gfp_mask(&self, defrag: ThpDefrag, vma_madvised: bool) -> Gfp {
        thp_gfp_mask(defrag, vma_madvised)
    }

    fn alloc_hugepage_vma(&self, a: &mut dyn PageAllocator, gfp: Gfp, node: u16) -> Option<Pfn> {
        let page = a.alloc_pages(gfp | __GFP_THISNODE, HPAGE_PMD_ORDER, node);
        if page.is_none() && gfp & __GFP_DIRECT_RECLAIM != 0 {
            return a.alloc_pages(gfp | __GFP_NORETRY, HPAGE_PMD_ORDER, node);
        }
        page
    }

    fn costly_gives_up(&self, gfp: Gfp, order: u8, r: CompactResult) -> bool {
        // A THP fault's mask has __GFP_IO (GFP_USER) and never __GFP_RETRY_MAYFAIL.
        let skipped_or_deferred = r == CompactResult::Skipped || r == CompactResult::Deferred;
        (order >= PAGEBLOCK_ORDER && gfp & __GFP_RETRY_MAYFAIL == 0 && skipped_or_deferred) || (gfp & __GFP_NORETRY != 0 && r == CompactResult::Deferred)
    }

    fn isolate_free_page_min_wmark(&self, z: &Zone) -> u64 {
        // v5.1, Mel Gorman's "mm, compaction: Ignore the fragmentation avoidance boost for
        // isolation and compaction": `zone->_watermark[WMARK_MIN] + (1UL << order)`.
        z.watermark[WMARK_MIN]
    }

    fn skip_hints(&self) -> SkipHints {
        // Mel Gorman's v5.1 compaction series (e380bebe4771, e332f741a8dd), in v5.4.
        SkipHints::V5_1
    }
}
