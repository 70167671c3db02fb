//! Splitting a THP (mm/huge_memory.c `split_huge_page_to_list`) and the deferred split
//! queue (`deferred_split_folio`, `deferred_split_scan`).
//!
//! A PMD-mapped THP is 512 frames of one aligned pageblock flagged `PG_compound`, each
//! carrying its own subpage on the LRU (docs/thp.md). Splitting clears the flag, so the
//! subpages become ordinary base pages where they are; subpages that were unmapped while
//! the THP sat on the deferred split queue (`MADV_DONTNEED` of part of it) are freed then.

use super::Tc;
use crate::mm::page::{pg, NO_PAGE};
use crate::mm::page_alloc::{Pfn, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use crate::mm::Mm;

/// `SHRINK_BATCH`: THPs the deferred split shrinker splits per call.
pub const SHRINK_BATCH: usize = 128;

/// `split_huge_page` of the THP containing `pfn`: its subpages become base pages; the
/// unmapped ones (owner `NO_PAGE`) go back to the allocator. No-op if there is no THP.
pub fn split_huge_page(mm: &mut Mm, pfn: Pfn) {
    let head = super::compaction::pageblock_start(pfn);
    let pb = (head >> PAGEBLOCK_ORDER) as usize;
    if !mm.thp.huge.get(pb).copied().unwrap_or(false) {
        return;
    }
    mm.thp.huge[pb] = false;
    mm.thp.split_queued[pb] = false;
    for p in head..head + PAGEBLOCK_NR_PAGES {
        if !mm.frames.test(p, pg::COMPOUND) {
            continue;
        }
        mm.frames.clear(p, pg::COMPOUND);
        if mm.frames.page(p) == NO_PAGE {
            mm.free_frame(p);
        }
    }
    mm.thp.stat.count(Tc::ThpSplitPage, 1);
}

/// `deferred_split_folio`: queue a partially unmapped THP.
pub fn deferred_split_folio(mm: &mut Mm, head: Pfn) {
    let pb = (head >> PAGEBLOCK_ORDER) as usize;
    if !mm.thp.split_queued[pb] {
        mm.thp.split_queued[pb] = true;
        mm.thp.deferred_split.push_back(head);
        mm.thp.stat.count(Tc::ThpDeferredSplitPage, 1);
    }
}

/// `deferred_split_scan` (the shrinker, run from reclaim): split up to [`SHRINK_BATCH`]
/// queue entries, oldest first. Returns the number of THPs split.
pub fn deferred_split_scan(mm: &mut Mm) -> usize {
    let n = mm.thp.deferred_split.len().min(SHRINK_BATCH);
    let mut split = 0;
    for _ in 0..n {
        let head = mm.thp.deferred_split.pop_front().expect("queue length checked");
        // Entries of THPs split or freed meanwhile are stale.
        if mm.thp.split_queued[(head >> PAGEBLOCK_ORDER) as usize] {
            split_huge_page(mm, head);
            split += 1;
        }
    }
    split
}
