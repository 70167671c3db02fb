//! The classic LRU lists (include/linux/mm_inline.h, mm/swap.c v6.15; spec A.1–A.3):
//! list membership from folio flags, add at the head, isolate from the tail, putback
//! preserving the batch's order, and `folio_mark_accessed`.
//! Sizes and events count pages: a THP is one entry of `folio_nr_pages` 512.
//! Abstraction: no per-CPU add/activate batches — adds and activations are immediate.

use super::{Classic, ClassicVariant};
use crate::mm::lruvec::{LruList, LruvecId};
use crate::mm::page::pg;
use crate::mm::page_alloc::{Pfn, ZONE_MOVABLE};
use crate::mm::vmstat::Ev;
use crate::mm::Mm;

/// `folio_lru_list`: unevictable, else the type's inactive/active list by `PG_active`.
#[inline]
pub fn folio_lru_list(mm: &Mm, pfn: Pfn) -> LruList {
    lru_list_of(mm.frames.flags(pfn))
}

/// [`folio_lru_list`] of a folio whose flags are already loaded.
#[inline(always)]
fn lru_list_of(f: u32) -> LruList {
    if f & pg::UNEVICTABLE != 0 {
        return LruList::Unevictable;
    }
    LruList::of(f & pg::SWAPBACKED == 0, f & pg::ACTIVE != 0)
}

/// `lruvec_add_folio`: head of the folio's list.
#[inline]
pub fn lruvec_add_folio<V: ClassicVariant>(c: &Classic<V>, mm: &mut Mm, lv: LruvecId, pfn: Pfn) {
    let f = mm.frames.flags(pfn);
    let lru = lru_list_of(f);
    mm.lists.add_head(c.head(lv, lru as usize), pfn);
    mm.update_lru_size(lv, lru, pg::nr_pages(f) as i64);
    mm.frames.set(pfn, pg::LRU);
}

/// `lruvec_del_folio`.
#[inline]
pub fn lruvec_del_folio<V: ClassicVariant>(c: &Classic<V>, mm: &mut Mm, lv: LruvecId, pfn: Pfn) {
    let f = mm.frames.flags(pfn);
    let lru = lru_list_of(f);
    mm.lists.del(c.head(lv, lru as usize), pfn);
    mm.update_lru_size(lv, lru, -(pg::nr_pages(f) as i64));
    mm.frames.clear(pfn, pg::LRU);
}

/// `isolate_lru_folios`: take folios from the tail of `lru` into `out` (oldest first)
/// until `nr_to_scan` pages were scanned (`scan += nr_pages`: one THP may take the whole
/// budget). Returns the pages scanned, all taken.
pub fn isolate_lru_folios<V: ClassicVariant>(c: &Classic<V>, mm: &mut Mm, lv: LruvecId, lru: LruList, nr_to_scan: u64, reclaim_idx: u8, out: &mut Vec<Pfn>) -> Isolated {
    out.clear();
    let h = c.head(lv, lru as usize);
    if mm.reclaim_skips_zones(mm.lruvecs[lv as usize].node, reclaim_idx) {
        return isolate_lru_folios_skipping(mm, h, lv, lru, nr_to_scan, reclaim_idx, out);
    }
    let mut n = 0;
    while n < nr_to_scan {
        let Some(pfn) = mm.lists.tail(h) else { break };
        mm.lists.del(h, pfn);
        let f = mm.frames.flags(pfn);
        mm.frames.clear(pfn, pg::LRU);
        n += pg::nr_pages(f);
        out.push(pfn);
    }
    mm.update_lru_size(lv, lru, -(n as i64));
    Isolated { taken: n, scanned: n }
}

/// `lruvec_lru_size(lruvec, lru, zone_idx)` (mm/vmscan.c 6.12): the pages of `lru` in
/// zones up to `zone_idx`. The kernel keeps per-zone counts (`lru_zone_size`); the model
/// keeps the lruvec's total and counts a lower zone's share by walking the list, which
/// only kswapd's passes for a lower zone ask for.
pub fn lruvec_lru_size<V: ClassicVariant>(c: &Classic<V>, mm: &Mm, lv: LruvecId, lru: LruList, zone_idx: u8) -> u64 {
    let total = mm.lruvecs[lv as usize].lru_size[lru as usize];
    if !mm.reclaim_skips_zones(mm.lruvecs[lv as usize].node, zone_idx) {
        return total;
    }
    let h = c.head(lv, lru as usize);
    mm.lists.iter(h).filter(|&pfn| mm.folio_zonenum(pfn) <= zone_idx).map(|pfn| pg::nr_pages(mm.frames.flags(pfn))).sum()
}

/// What [`isolate_lru_folios`] took and scanned (`nr_taken`, `*nr_scanned`: the taken
/// pages and those skipped for a zone above `sc->reclaim_idx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Isolated {
    pub taken: u64,
    pub scanned: u64,
}

/// `isolate_lru_folios` for a reclaim that may not take every zone's folios (kswapd
/// balancing a lower zone, mm/vmscan.c 6.12): a folio of a zone above `reclaim_idx`
/// counts in `total_scan` and PGSCAN_SKIP, not in `scan`, and is spliced back at the
/// list's head with the others skipped, in their order ("this disrupts the LRU order
/// when reclaiming for lower zones").
#[cold]
#[inline(never)]
fn isolate_lru_folios_skipping(mm: &mut Mm, h: crate::mm::lists::ListHead, lv: LruvecId, lru: LruList, nr_to_scan: u64, reclaim_idx: u8, out: &mut Vec<Pfn>) -> Isolated {
    let (mut scan, mut total_scan) = (0, 0);
    let mut skipped: Vec<Pfn> = Vec::new();
    let mut nr_skipped = [0u64; ZONE_MOVABLE as usize + 1];
    while scan < nr_to_scan {
        let Some(pfn) = mm.lists.tail(h) else { break };
        mm.lists.del(h, pfn);
        let nr_pages = pg::nr_pages(mm.frames.flags(pfn));
        total_scan += nr_pages;
        let zid = mm.folio_zonenum(pfn);
        if zid > reclaim_idx {
            nr_skipped[zid as usize] += nr_pages;
            skipped.push(pfn);
            continue;
        }
        scan += nr_pages;
        mm.frames.clear(pfn, pg::LRU);
        out.push(pfn);
    }
    // list_splice(&folios_skipped, src): the first skipped ends next to the old head.
    for &pfn in &skipped {
        mm.lists.add_head(h, pfn);
    }
    for (zid, &n) in nr_skipped.iter().enumerate() {
        if n > 0 {
            mm.vmstat.count(Ev::pgskip(zid as u8), n);
        }
    }
    mm.update_lru_size(lv, lru, -(scan as i64));
    Isolated { taken: scan, scanned: total_scan }
}

/// `move_folios_to_lru`: put survivors back at the heads of their lists, oldest first
/// (so the batch keeps its relative order); folios landing on an active list age the
/// workingset clock (a variant hook). Returns the pages moved.
pub fn move_folios_to_lru<V: ClassicVariant>(c: &mut Classic<V>, mm: &mut Mm, folios: &[Pfn]) -> u64 {
    let mut nr_moved = 0;
    for &pfn in folios {
        let lv = mm.folio_lruvec(pfn);
        let f = mm.frames.flags(pfn);
        lruvec_add_folio(c, mm, lv, pfn);
        let nr_pages = pg::nr_pages(f);
        nr_moved += nr_pages;
        if f & pg::ACTIVE != 0 {
            c.variant.putback_active(mm, lv, nr_pages);
        }
    }
    nr_moved
}

/// `folio_mark_accessed` (A.3): unreferenced → referenced; referenced inactive →
/// activate (PGACTIVATE), clear referenced, `workingset_activation`.
pub fn folio_mark_accessed<V: ClassicVariant>(c: &mut Classic<V>, mm: &mut Mm, pfn: Pfn) {
    let f = mm.frames.flags(pfn);
    if f & pg::REFERENCED == 0 {
        mm.frames.set(pfn, pg::REFERENCED);
    } else if f & pg::UNEVICTABLE != 0 {
    } else if f & pg::ACTIVE == 0 {
        let lv = mm.folio_lruvec(pfn);
        if f & pg::LRU != 0 {
            // folio_activate → lru_activate
            lruvec_del_folio(c, mm, lv, pfn);
            mm.frames.set(pfn, pg::ACTIVE);
            lruvec_add_folio(c, mm, lv, pfn);
            mm.count_lruvec_events(lv, Ev::Pgactivate, mm.folio_nr_pages(pfn));
        } else {
            mm.frames.set(pfn, pg::ACTIVE);
        }
        mm.frames.clear(pfn, pg::REFERENCED);
        c.variant.workingset_activation(mm, lv, mm.folio_nr_pages(pfn));
    }
    mm.frames.clear(pfn, pg::IDLE);
}

/// `lru_deactivate` (mm/swap.c): an evictable active or referenced folio on the LRU is
/// moved to the head of the inactive list with `PG_active` and `PG_referenced` cleared;
/// PGDEACTIVATE.
pub fn lru_deactivate<V: ClassicVariant>(c: &Classic<V>, mm: &mut Mm, pfn: Pfn) {
    let f = mm.frames.flags(pfn);
    if f & pg::LRU == 0 || f & pg::UNEVICTABLE != 0 || f & (pg::ACTIVE | pg::REFERENCED) == 0 {
        return;
    }
    let lv = mm.folio_lruvec(pfn);
    lruvec_del_folio(c, mm, lv, pfn);
    mm.frames.clear(pfn, pg::ACTIVE | pg::REFERENCED);
    lruvec_add_folio(c, mm, lv, pfn);
    mm.count_lruvec_events(lv, Ev::Pgdeactivate, mm.folio_nr_pages(pfn));
}

/// `lru_move_tail` (mm/swap.c 6.12, from `folio_rotate_reclaimable`): an evictable folio
/// goes to the tail of its inactive list, `PG_active` cleared; PGROTATED.
pub fn lru_move_tail<V: ClassicVariant>(c: &Classic<V>, mm: &mut Mm, pfn: Pfn) {
    if mm.frames.test(pfn, pg::UNEVICTABLE) {
        return;
    }
    let lv = mm.folio_lruvec(pfn);
    lruvec_del_folio(c, mm, lv, pfn);
    mm.frames.clear(pfn, pg::ACTIVE);
    let lru = folio_lru_list(mm, pfn);
    mm.lists.add_tail(c.head(lv, lru as usize), pfn);
    let nr_pages = mm.folio_nr_pages(pfn);
    mm.update_lru_size(lv, lru, nr_pages as i64);
    mm.frames.set(pfn, pg::LRU);
    mm.vmstat.count(Ev::Pgrotated, nr_pages);
}

/// `lru_add_split_folio` (mm/huge_memory.c 6.12): a THP's tail goes just before its
/// head on the head's list; the page was counted with the head.
pub fn lru_add_split_folio<V: ClassicVariant>(c: &Classic<V>, mm: &mut Mm, head: Pfn, tail: Pfn) {
    let lv = mm.folio_lruvec(head);
    let lru = folio_lru_list(mm, head);
    mm.lists.add_before(c.head(lv, lru as usize), head, tail);
}
