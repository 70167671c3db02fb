//! `thp@5.5`: Vlastimil Babka's cc638f329ef6 "mm, thp: tweak reclaim/compaction effort of
//! local-only and all-node allocations" (posted 29 Oct 2019 on v5.4-rc, merged for v5.5).
//!
//! - mm/huge_memory.c `alloc_hugepage_direct_gfpmask`: unchanged from v5.4 (no
//!   `__GFP_THISNODE`).
//! - mm/mempolicy.c `alloc_pages_vma`, hugepage branch: "First, try to allocate THP only
//!   on local node, but don't reclaim unnecessarily, just compact":
//!   `__alloc_pages_node(hpage_node, gfp | __GFP_THISNODE | __GFP_NORETRY, order)`; then,
//!   with `__GFP_DIRECT_RECLAIM` (madvised or defrag=always), "retry allowing remote
//!   memory with both reclaim and compact as well": `__alloc_pages_node(hpage_node, gfp,
//!   order)` on the whole zonelist. The changelog names the v5.4 behaviour it fixes: the
//!   all-node attempt passed `__GFP_NORETRY`, and b39d0ee2632d's pageblock-order check
//!   affected it too, so it never reclaimed.
//! - mm/page_alloc.c `__alloc_pages_slowpath`: b39d0ee2632d's separate
//!   `order >= pageblock_order` block is gone; the skipped/deferred give-up moved inside
//!   `if (costly_order && (gfp_mask & __GFP_NORETRY))` ("fail immediately unless the
//!   allocator has requested compaction and reclaim retry"), followed by
//!   `compact_priority = INIT_COMPACT_PRIORITY`. A request without `__GFP_NORETRY`
//!   reclaims and compacts whatever its first compaction returned.
//! - `__isolate_free_page` ignores the boost, as in v5.4.

use super::{PageAllocator, ThpPolicy};
use crate::mm::page_alloc::{Pfn, Zone};
use crate::thp::compaction::{CompactResult, SkipHints};
use crate::thp::gfp::*;
use crate::thp::HPAGE_PMD_ORDER;

pub struct V5_5;

impl ThpPolicy for V5_5 {
    fn gfp_mask(&self, defrag: ThpDefrag, vma_madvised: bool) -> Gfp {
        super::v5_4::V5_4.gfp_mask(defrag, vma_madvised)
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

    fn isolate_free_page_min_wmark(&self, z: &Zone) -> u64 {
        super::v5_4::V5_4.isolate_free_page_min_wmark(z)
    }

    fn skip_hints(&self) -> SkipHints {
        super::v5_4::V5_4.skip_hints()
    }
}
