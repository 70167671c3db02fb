//! Reclaim/compaction mode (mm/vmscan.c 6.12): how reclaim for a costly order (a THP's)
//! knows it has freed enough for compaction. `compaction_ready` lets `shrink_zones` skip a
//! node (and end the priority loop); `should_continue_reclaim` makes the classic
//! `shrink_node` go round again (`goto again`). MGLRU's root reclaim
//! (`lru_gen_shrink_node`) returns before that loop, as in the kernel.

use super::{ScanControl, DEF_PRIORITY};
use crate::mm::lruvec::LruList;
use crate::mm::page_alloc::WMARK_MIN;
use crate::mm::Mm;
use crate::thp::compaction::{compact_gap, compaction_suitable, CompactResult};
use crate::thp::gfp::PAGE_ALLOC_COSTLY_ORDER;

/// `compaction_ready` (mm/vmscan.c 6.12) for a node's zones: the allocation can already
/// succeed, or compaction can run and there is a buffer of `high_wmark +
/// compact_gap(order)` free pages for it.
pub(crate) fn compaction_ready(mm: &Mm, node: u16, order: u8) -> bool {
    let th = mm.cfg.thp.extfrag_threshold as i32;
    mm.nodes[node as usize].zones.iter().any(|&z| match compaction_suitable(mm, z, Some(order), WMARK_MIN, th) {
        CompactResult::Success => true,
        CompactResult::Skipped => false,
        _ => mm.buddy.zone_watermark_ok(z, 0, mm.buddy.zones[z].high_wmark_pages() + compact_gap(order)),
    })
}

/// `should_continue_reclaim` (mm/vmscan.c 6.12): only in reclaim/compaction mode (a
/// costly order, or any order once the priority fell below `DEF_PRIORITY - 2`); stop when
/// the last round reclaimed nothing, when a zone could already allocate or compact, and
/// when the inactive lists hold no more than `compact_gap(order)`.
pub(crate) fn should_continue_reclaim(mm: &Mm, node: u16, nr_reclaimed: u64, sc: &ScanControl) -> bool {
    let in_reclaim_compaction = sc.order > 0 && (sc.order > PAGE_ALLOC_COSTLY_ORDER || sc.priority < DEF_PRIORITY - 2);
    if !in_reclaim_compaction || nr_reclaimed == 0 {
        return false;
    }
    let th = mm.cfg.thp.extfrag_threshold as i32;
    if mm.nodes[node as usize].zones.iter().any(|&z| compaction_suitable(mm, z, Some(sc.order), WMARK_MIN, th) != CompactResult::Skipped) {
        return false;
    }
    let mut inactive = mm.node_lru_pages(node, LruList::InactiveFile);
    if sc.may_swap && mm.can_reclaim_anon() {
        inactive += mm.node_lru_pages(node, LruList::InactiveAnon);
    }
    inactive > compact_gap(sc.order)
}
