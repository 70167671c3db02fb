//! Splitting a THP (mm/huge_memory.c `split_huge_page_to_list`) and the deferred split
//! queues (`deferred_split_folio`, `deferred_split_scan`; the shrinker that calls the
//! scan is in mm/shrinker.rs).
//!
//! A THP is 512 frames of one aligned pageblock flagged `PG_compound`; while it is one
//! folio its head (`PG_head`) stands on the LRU for all 512 pages (docs/thp.md). A split
//! has two halves here: [`split_folio_lru`] gives every tail its own LRU entry beside the
//! head (`lru_add_split_folio`), and [`split_huge_page`] clears `PG_compound` and frees
//! the subpages that were unmapped while the THP sat on the deferred split queue
//! (`MADV_DONTNEED` of part of it, which splits the LRU entry at once: docs/thp.md).

use super::Tc;
use crate::mm::lists::{ListArena, ListHead};
use crate::mm::page::{pg, NO_PAGE};
use crate::mm::page_alloc::{Pfn, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;

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
/// The LRU entry must have been split already ([`split_folio_lru`]). Returns the pages
/// freed.
pub fn split_huge_page(mm: &mut Mm, pfn: Pfn) -> u64 {
    let head = super::compaction::pageblock_start(pfn);
    let pb = (head >> PAGEBLOCK_ORDER) as usize;
    if !mm.thp.huge.get(pb).copied().unwrap_or(false) {
        return 0;
    }
    let mut freed = 0;
    debug_assert!(!mm.frames.test(head, pg::HEAD), "split_huge_page of a THP still one LRU folio");
    folio_undo_large_rmappable(mm, pb);
    for p in head..head + PAGEBLOCK_NR_PAGES {
        if !mm.frames.test(p, pg::COMPOUND) {
            continue;
        }
        mm.frames.clear(p, pg::COMPOUND);
        if mm.frames.page(p) == NO_PAGE {
            mm.free_frame(p);
            freed += 1;
        }
    }
    mm.thp.stat.count(Tc::ThpSplitPage, 1);
    freed
}

/// The deferred split queues (mm/huge_memory.c 6.12 `struct deferred_split`), one per
/// memcg (`get_deferred_split_queue`: a charged folio's is its memcg's): lists of THP
/// heads linked through their pageblocks (`folio->_deferred_list`, a [`ListArena`] of its
/// own over pageblocks), oldest first. Since 6.12 every anonymous THP joins its queue
/// when mapped (`deferred_split_folio(folio, false)`, `split_underused_thp` on by
/// default) and a partial unmap marks it `PG_partially_mapped`, so the shrinker's count
/// is every queued THP.
pub struct DeferredSplitQueues {
    lists: ListArena,
    /// Per memcg: its queue's head, once it has had a THP.
    heads: Vec<Option<ListHead>>,
    /// Per pageblock: the memcg whose queue holds it (meaningful while linked; the THP's
    /// frames may be released before it leaves the queue).
    queue_of: Vec<u16>,
    /// The shrinker's `nr_deferred` per lruvec (memcg and node).
    pub nr_deferred: Vec<u64>,
}

impl Default for DeferredSplitQueues {
    fn default() -> Self {
        Self::new(0)
    }
}

impl DeferredSplitQueues {
    /// Size for `nr_pageblocks` pageblocks.
    pub fn new(nr_pageblocks: usize) -> Self {
        DeferredSplitQueues { lists: ListArena::new(nr_pageblocks as u32), heads: Vec::new(), queue_of: vec![0; nr_pageblocks], nr_deferred: Vec::new() }
    }

    /// `split_queue_len` of `memcg`'s queue.
    pub fn len(&self, memcg: u16) -> u64 {
        self.head(memcg).map_or(0, |h| self.lists.len(h))
    }

    fn head(&self, memcg: u16) -> Option<ListHead> {
        self.heads.get(memcg as usize).copied().flatten()
    }

    /// Whether pageblock `pb`'s THP is on a queue.
    pub fn is_queued(&self, pb: usize) -> bool {
        self.lists.is_linked(pb as u32)
    }

    /// `list_add_tail` onto `memcg`'s queue (the pageblock is on none).
    fn push_back(&mut self, memcg: u16, pb: usize) {
        let m = memcg as usize;
        if self.heads.len() <= m {
            self.heads.resize(m + 1, None);
        }
        let h = *self.heads[m].get_or_insert_with(|| self.lists.alloc_heads(1));
        self.lists.add_tail(h, pb as u32);
        self.queue_of[pb] = memcg;
    }

    /// `list_del_init` of pageblock `pb` from its queue, if it is on one.
    pub fn remove(&mut self, pb: usize) {
        if self.is_queued(pb) {
            let h = self.head(self.queue_of[pb]).expect("a queued pageblock's memcg has a queue");
            self.lists.del(h, pb as u32);
        }
    }

    /// Each queue is well linked and holds THPs (`huge`) of its memcg (`memcg_of` a
    /// pageblock's head), its length its `split_queue_len`.
    pub fn check(&self, huge: &[bool], memcg_of: impl Fn(usize) -> u16) -> Result<(), String> {
        self.lists.check_invariants()?;
        for (m, h) in self.heads.iter().enumerate() {
            for pb in h.iter().flat_map(|&h| self.lists.iter(h)).map(|pb| pb as usize) {
                if self.queue_of[pb] as usize != m || !huge[pb] || memcg_of(pb) as usize != m {
                    return Err(format!("deferred split queue of memcg {m}: pageblock {pb} misplaced"));
                }
            }
        }
        Ok(())
    }

    /// The first (oldest) pageblock on `memcg`'s queue.
    fn first(&self, memcg: u16) -> Option<usize> {
        self.head(memcg).and_then(|h| self.lists.head(h)).map(|pb| pb as usize)
    }
}

/// `deferred_split_folio(folio, partially_mapped)` (mm/huge_memory.c 6.12): mark the THP
/// at `head` `PG_partially_mapped` (counting THP_DEFERRED_SPLIT_PAGE the first time) if
/// asked, and put it on its memcg's queue if it is on none.
pub fn deferred_split_folio(mm: &mut Mm, head: Pfn, partially_mapped: bool) {
    let pb = (head >> PAGEBLOCK_ORDER) as usize;
    if partially_mapped && !mm.thp.split_queued[pb] {
        mm.thp.split_queued[pb] = true;
        mm.thp.stat.count(Tc::ThpDeferredSplitPage, 1);
    }
    if !mm.thp.deferred_split.is_queued(pb) {
        let memcg = mm.frames.memcg(head);
        mm.thp.deferred_split.push_back(memcg, pb);
    }
}

/// `folio_undo_large_rmappable` when the THP of pageblock `pb` is freed whole or split:
/// off its deferred split queue, `PG_partially_mapped` cleared, no THP there any more.
pub fn folio_undo_large_rmappable(mm: &mut Mm, pb: usize) {
    mm.thp.huge[pb] = false;
    mm.thp.split_queued[pb] = false;
    mm.thp.deferred_split.remove(pb);
}

/// `deferred_split_scan(shrink, sc)` of `memcg`'s queue: up to `nr_to_scan` THPs from its
/// head; a partially mapped one is split (its unmapped subpages freed), any other leaves
/// the queue (`thp_underused` is false: the model has no page contents, and with the
/// default `max_ptes_none` of 511 the kernel's test returns false at once). Splits never
/// fail here (no folio is locked or pinned). `None` is SHRINK_STOP: nothing split and the
/// queue empty.
pub fn deferred_split_scan(mm: &mut Mm, memcg: u16, nr_to_scan: u64) -> Option<u64> {
    let mut split = 0;
    for _ in 0..nr_to_scan {
        let Some(pb) = mm.thp.deferred_split.first(memcg) else { break };
        if mm.thp.split_queued[pb] {
            split_huge_page(mm, (pb as Pfn) << PAGEBLOCK_ORDER);
            split += 1;
        } else {
            mm.thp.deferred_split.remove(pb);
        }
    }
    if split == 0 && mm.thp.deferred_split.len(memcg) == 0 {
        return None;
    }
    Some(split)
}
