//! `thp@6.12`: Linux 6.12 as Debian ships it (6.12.117, the validation guest's kernel);
//! base `thp@5.5`.
//!
//! - mm/huge_memory.c `vma_thp_gfp_mask` (6.12): the v5.4 masks, no `__GFP_THISNODE`
//!   (same as 5.5).
//! - mm/mempolicy.c `alloc_pages_mpol` (6.12), hugepage branch: `gfp | __GFP_THISNODE |
//!   __GFP_NORETRY` on the local node, then, with `__GFP_DIRECT_RECLAIM`, `gfp` on the
//!   zonelist (same as 5.5).
//! - mm/page_alloc.c `__alloc_pages_slowpath` (9c9828d3ead6 "mm, page_alloc, thp: prevent
//!   reclaim for __GFP_THISNODE THP allocations", Dec 2025, Cc: stable; in 6.12.75 per
//!   Debian's changelog): inside
//!   `if (costly_order && (gfp_mask & __GFP_NORETRY))`, after the skipped/deferred check,
//!   `if (gfp_mask & __GFP_THISNODE) goto nopage;` — the local attempt never reclaims,
//!   whatever its compaction returned. Differs from 5.5.
//! - mm/compaction.c (v5.9+, `sysctl_compaction_proactiveness = 20`): kcompactd's timeout
//!   path compacts proactively (`should_proactive_compact_node` →
//!   `proactive_compact_node`). Differs from 5.5.
//! - mm/page_alloc.c `__alloc_pages_direct_compact` (6.12): only `COMPACT_SKIPPED` returns
//!   before counting a stall, so an all-deferred compaction counts `compact_stall` and
//!   `compact_fail`. Differs from 5.5 (v4.20's `<= COMPACT_INACTIVE`).
//! - Skip hints and `__isolate_free_page`'s watermark: as 5.5 (v5.1 rules).

use super::{PageAllocator, ThpPolicy};
use crate::mm::page_alloc::{Pfn, Zone};
use crate::thp::compaction::{CompactResult, SkipHints};
use crate::thp::gfp::*;

pub struct V6_12;

impl ThpPolicy for V6_12 {
    fn gfp_mask(&self, defrag: ThpDefrag, vma_madvised: bool) -> Gfp {
        super::v5_5::V5_5.gfp_mask(defrag, vma_madvised)
    }

    fn alloc_hugepage_vma(&self, a: &mut dyn PageAllocator, gfp: Gfp, node: u16) -> Option<Pfn> {
        super::v5_5::V5_5.alloc_hugepage_vma(a, gfp, node)
    }

    fn costly_gives_up(&self, gfp: Gfp, order: u8, r: CompactResult) -> bool {
        // 9c9828d3ead6 (6.12.75): a __GFP_THISNODE | __GFP_NORETRY request gives up
        // after any failed first compaction.
        super::v5_5::V5_5.costly_gives_up(gfp, order, r) || (gfp & __GFP_NORETRY != 0 && gfp & __GFP_THISNODE != 0)
    }

    fn isolate_free_page_min_wmark(&self, z: &Zone) -> u64 {
        super::v5_5::V5_5.isolate_free_page_min_wmark(z)
    }

    fn skip_hints(&self) -> SkipHints {
        super::v5_5::V5_5.skip_hints()
    }

    fn proactive_compaction(&self) -> bool {
        // Nitin Gupta's "mm: proactive compaction" (v5.9); mm/compaction.c 6.12 kcompactd().
        true
    }

    fn compact_stall_when_deferred(&self) -> bool {
        // mm/page_alloc.c 6.12 __alloc_pages_direct_compact: `if (*compact_result ==
        // COMPACT_SKIPPED) return NULL;` then COMPACTSTALL.
        true
    }
}
