//! Splitting a THP (mm/huge_memory.c `split_huge_page_to_list_to_order`) and the deferred
//! split queues (`deferred_split_folio`, `deferred_split_scan`; the shrinker that calls
//! the scan is in mm/shrinker.rs).
//!
//! A THP is 512 frames of one aligned pageblock flagged `PG_compound`; while it is one
//! folio its head (`PG_head`) stands on the LRU for all 512 pages (docs/thp.md), also
//! after part of it was unmapped (`MADV_DONTNEED`, sim/process.rs): the unmapped
//! subpages stay in the folio, charged, owned by no page, until [`split_huge_page_to_list`]
//! gives every subpage its own folio and frees the unmapped ones: at once when the folio
//! was on its LRU (the deferred split shrinker), through `shrink_folio_list` when reclaim
//! split a folio it had isolated (mm/vmscan.c).

use super::Tc;
use crate::mm::lists::{ListArena, ListHead};
use crate::mm::page::{pg, NO_PAGE};
use crate::mm::page_alloc::{Pfn, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;

/// A PTE's bits of a frame: a PTE-mapped THP's subpages keep their own at a split.
const PTE_BITS: u32 = pg::MAPPED | pg::YOUNG;

/// `split_huge_page_to_list(head, list)` (mm/huge_memory.c 6.12 `__split_huge_page`) of
/// the THP whose head is `head`; no-op when `head` is not one. Every tail takes the
/// head's flags (`__split_huge_page_tail` copies the LRU, generation and reference bits;
/// a PMD-mapped THP's PMD young and dirty bits go to every PTE, a PTE-mapped one's
/// subpages keep their PTEs') and becomes a folio of one page:
/// - with `list` (reclaim splitting a folio it isolated, `split_folio_to_list`) each tail
///   joins the list holding a reference (`lru_add_page_tail`), so the unmapped ones
///   (owner [`NO_PAGE`]) survive the split and go through `shrink_folio_list`, which
///   frees them; the head stays the caller's;
/// - without, the folio is on its LRU: the tails follow the head on its list
///   (`lru_add_split_folio`), and the unmapped subpages lose their last reference
///   (`free_page_and_swap_cache`, and the caller's `folio_put` for the head): off the
///   LRU, uncharged, freed.
///
/// Then `PG_compound` is cleared and the THP leaves its deferred split queue. Returns the
/// pages freed.
pub fn split_huge_page_to_list<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, head: Pfn, mut list: Option<&mut Vec<Pfn>>) -> u64 {
    if !mm.frames.test(head, pg::HEAD) {
        return 0;
    }
    let pte_mapped = mm.folio_pte_mapped(head);
    let f = mm.frames.flags(head) & !pg::HEAD;
    mm.frames.flags[head as usize] = f;
    debug_assert!(list.is_some() || f & pg::LRU != 0, "an isolated THP split without a list");
    let tail_flags = |own: u32| if pte_mapped { (f & !PTE_BITS) | (own & PTE_BITS) } else { f };
    let mut unmapped = Vec::new();
    for t in head + 1..head + PAGEBLOCK_NR_PAGES {
        mm.frames.flags[t as usize] = tail_flags(mm.frames.flags(t));
        match list.as_deref_mut() {
            Some(list) => list.push(t),
            None => {
                p.lru_add_split_folio(mm, head, t);
                if mm.frames.page(t) == NO_PAGE {
                    unmapped.push(t);
                }
            }
        }
    }
    if list.is_none() && mm.frames.page(head) == NO_PAGE {
        unmapped.push(head);
    }
    let pb = (head >> PAGEBLOCK_ORDER) as usize;
    folio_undo_large_rmappable(mm, pb);
    for t in head..head + PAGEBLOCK_NR_PAGES {
        mm.frames.clear(t, pg::COMPOUND);
    }
    for &t in &unmapped {
        p.folio_isolate_lru(mm, t);
        mm.uncharge_frame(t);
        mm.free_frame(t);
    }
    mm.thp.stat.count(Tc::ThpSplitPage, 1);
    unmapped.len() as u64
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
/// fail here (no folio is locked or pinned, and the shrinker runs between reclaim's
/// batches, when no THP is isolated). `None` is SHRINK_STOP: nothing split and the queue
/// empty.
pub fn deferred_split_scan<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, memcg: u16, nr_to_scan: u64) -> Option<u64> {
    let mut split = 0;
    for _ in 0..nr_to_scan {
        let Some(pb) = mm.thp.deferred_split.first(memcg) else { break };
        if mm.thp.split_queued[pb] {
            split_huge_page_to_list(mm, p, (pb as Pfn) << PAGEBLOCK_ORDER, None);
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
