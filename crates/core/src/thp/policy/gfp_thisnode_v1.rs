//! `thp+gfp-thisnode-v1`: David Rientjes' two-patch series of December 2018 on top of
//! v4.20-rc4 (the `gfpthisnode-v1r1` kernel of seed 003).
//!
//! 1/2 "mm, thp: restore node-local hugepage allocations": `__GFP_THISNODE` in every mask
//! `alloc_hugepage_direct_gfpmask` returns, so a THP fault only ever uses its local node.
//! 2/2 "mm, page_alloc: avoid expensive reclaim when compaction may not succeed" (merged
//! later as b39d0ee2632d): in `__alloc_pages_slowpath`, a request of ≥ `pageblock_order`
//! (with `__GFP_IO`, without `__GFP_RETRY_MAYFAIL` — always so for a THP fault) whose first
//! compaction was `COMPACT_SKIPPED` or `COMPACT_DEFERRED` fails at once instead of
//! reclaiming; v4.20's `__GFP_NORETRY` check (`DEFERRED` → fail) follows it. Locality
//! and low latency first, at the cost of the huge-page success rate.

use super::{PageAllocator, ThpPolicy};
use crate::mm::page_alloc::{Pfn, Zone, PAGEBLOCK_ORDER};
use crate::thp::compaction::CompactResult;
use crate::thp::gfp::*;
use crate::thp::HPAGE_PMD_ORDER;

pub struct GfpThisnodeV1;

impl ThpPolicy for GfpThisnodeV1 {
    fn gfp_mask(&self, defrag: ThpDefrag, vma_madvised: bool) -> Gfp {
        // Patch 1/2: the v4.20 masks with __GFP_THISNODE always, instead of only without
        // __GFP_DIRECT_RECLAIM.
        __GFP_THISNODE | thp_gfp_mask(defrag, vma_madvised)
    }

    fn alloc_hugepage_vma(&self, a: &mut dyn PageAllocator, gfp: Gfp, node: u16) -> Option<Pfn> {
        a.alloc_pages(gfp, HPAGE_PMD_ORDER, node)
    }

    fn costly_gives_up(&self, gfp: Gfp, order: u8, r: CompactResult) -> bool {
        // Patch 2/2: "If allocating entire pageblock(s) and compaction failed because all
        // zones are below low watermarks or is prohibited because it recently failed at
        // this order, fail immediately" (no reclaim).
        let skipped_or_deferred = r == CompactResult::Skipped || r == CompactResult::Deferred;
        (order >= PAGEBLOCK_ORDER && skipped_or_deferred) || (gfp & __GFP_NORETRY != 0 && r == CompactResult::Deferred)
    }

    fn isolate_free_page_min_wmark(&self, z: &Zone) -> u64 {
        // The series sits on mmots-20181130, like the baseline.
        super::v4_20_rc4::V4_20Rc4.isolate_free_page_min_wmark(z)
    }
}
