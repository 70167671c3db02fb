//! Splitting a THP (mm/huge_memory.c `split_huge_page_to_list`) and the deferred split
//! queue (`deferred_split_folio`, `deferred_split_scan`).
//!
//! A THP is 512 frames of one aligned pageblock flagged `PG_compound`; while it is one
//! folio its head (`PG_head`) stands on the LRU for all 512 pages (docs/thp.md). A split
//! has two halves here: [`split_folio_lru`] gives every tail its own LRU entry beside the
//! head (`lru_add_split_folio`), and [`split_huge_page`] clears `PG_compound` and frees
//! the subpages that were unmapped while the THP sat on the deferred split queue
//! (`MADV_DONTNEED` of part of it, which splits the LRU entry at once: docs/thp.md).

use super::Tc;
use crate::mm::page::{pg, NO_PAGE};
use crate::mm::page_alloc::{Pfn, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;

/// `SHRINK_BATCH`: THPs the deferred split shrinker splits per call.
pub const SHRINK_BATCH: usize = 128;

/// The LRU half of `__split_huge_page` (mm/huge_memory.c 6.12) for the THP whose head is
/// `head`: each tail takes the head's flags (`__split_huge_page_tail` copies the LRU,
/// generation and reference bits; the PMD's young and dirty bits go to every PTE) and,
/// with `list` (an isolated folio reclaim splits, `split_folio_to_list`), joins that list;
/// otherwise it follows the head on its LRU list (`lru_add_split_folio`). The head becomes
/// a folio of one page. No-op when `head` is not a THP's head.
pub fn split_folio_lru<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, head: Pfn, list: Option<&mut Vec<Pfn>>) {
    if !mm.frames.test(head, pg::HEAD) {
        return;
    }
    let f = mm.frames.flags(head) & !pg::HEAD;
    mm.frames.flags[head as usize] = f;
    let tails = head + 1..head + PAGEBLOCK_NR_PAGES;
    match list {
        Some(list) => {
            for t in tails {
                mm.frames.flags[t as usize] = f;
                list.push(t);
            }
        }
        None => {
            debug_assert!(f & pg::LRU != 0, "an isolated THP split without a list");
            for t in tails {
                mm.frames.flags[t as usize] = f;
                p.lru_add_split_folio(mm, head, t);
            }
        }
    }
}

/// `split_huge_page` of the THP containing `pfn`: its subpages become base pages; the
/// unmapped ones (owner `NO_PAGE`) go back to the allocator. No-op if there is no THP.
/// The LRU entry must have been split already ([`split_folio_lru`]).
pub fn split_huge_page(mm: &mut Mm, pfn: Pfn) {
    let head = super::compaction::pageblock_start(pfn);
    let pb = (head >> PAGEBLOCK_ORDER) as usize;
    if !mm.thp.huge.get(pb).copied().unwrap_or(false) {
        return;
    }
    debug_assert!(!mm.frames.test(head, pg::HEAD), "split_huge_page of a THP still one LRU folio");
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
