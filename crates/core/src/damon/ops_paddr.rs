//! The physical address space operations set (`mm/damon/paddr.c` v6.15, spec D.4):
//! addresses are `pfn * PAGE_SIZE`; a sample picks one random address per region, makes
//! its folio old for DAMON (`damon_pa_mkold`), and one sample interval later checks
//! whether it was accessed (`damon_pa_young`).
//!
//! DAMON's accessed state is its own folio bit, `pg::DAMON_ACCESSED`, which every access
//! sets beside the PTE young bit. mkold clears only that bit, so reclaim still sees the
//! reference — the effect of the kernel's mkold moving PTE young into `PG_young`, and of
//! `folio_mark_accessed` clearing `PG_idle`. Abstraction: the static "same folio" cache
//! of the last check is not kept (base pages only).

use super::region::{damon_rand, damon_update_region_access_rate, DamonTarget};
use crate::mm::page::{pg, NO_PAGE};
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;
use reclaimlab_trace::{Rng, PAGE_SHIFT};

/// `damon_get_folio(pfn)`: the LRU folio the frame belongs to (`page_folio`; a THP's
/// head), if any.
#[inline]
pub fn damon_get_folio(mm: &Mm, pfn: u64) -> Option<Pfn> {
    if pfn >= mm.frames.installed_end() as u64 {
        return None; // past the machine, or a frame never given a page (host: no read)
    }
    let pfn = pfn as Pfn;
    // A free or kernel frame; an unmapped subpage of a THP is still part of its folio.
    if mm.frames.page(pfn) == NO_PAGE && !mm.frames.test(pfn, pg::COMPOUND) {
        return None;
    }
    let folio = mm.page_folio(pfn);
    mm.frames.test(folio, pg::LRU).then_some(folio)
}

/// Where the accessed bit DAMON samples for `pfn`'s folio lives: a THP's is its PMD's,
/// kept at the head frame (`damon_folio_young_one` reads `pmd_young` for a PMD-mapped
/// folio); a base folio's is its own.
#[inline]
fn accessed_bit_frame(mm: &Mm, pfn: Pfn) -> Pfn {
    if mm.frames.test(pfn, pg::COMPOUND) {
        crate::thp::compaction::pageblock_start(pfn)
    } else {
        pfn
    }
}

/// `damon_pa_prepare_access_checks`: new sampling address per region, mkold its folio.
pub fn damon_pa_prepare_access_checks(mm: &mut Mm, t: &mut DamonTarget, rng: &mut Rng) {
    for r in t.regions.iter_mut() {
        r.sampling_addr = damon_rand(rng, r.start, r.end);
        if let Some(pfn) = damon_get_folio(mm, r.sampling_addr >> PAGE_SHIFT) {
            let f = accessed_bit_frame(mm, pfn);
            mm.frames.clear(f, pg::DAMON_ACCESSED);
        }
    }
}

/// `damon_pa_check_accesses`: update each region's access rate; returns the maximum
/// `nr_accesses`.
pub fn damon_pa_check_accesses(mm: &Mm, t: &mut DamonTarget, len_window: u32) -> u32 {
    let mut max_nr = 0;
    for r in t.regions.iter_mut() {
        let accessed = damon_get_folio(mm, r.sampling_addr >> PAGE_SHIFT).is_some_and(|pfn| mm.frames.test(accessed_bit_frame(mm, pfn), pg::DAMON_ACCESSED));
        damon_update_region_access_rate(r, accessed, len_window);
        max_nr = max_nr.max(r.nr_accesses);
    }
    max_nr
}

/// The LRU folios of `[start, end)` in address order (the paddr action walk), stepping
/// over a folio's pages once it is found (`addr += folio_size(folio)`). The kernel looks
/// every pfn up; the simulator steps over a free buddy block at once (no folio can be in
/// it) — the walk's cost is charged per pfn all the same.
pub fn damon_pa_folios(mm: &Mm, start: u64, end: u64) -> impl Iterator<Item = Pfn> + '_ {
    // Host: no folio past the highest frame ever given a page.
    let (mut pfn, e) = (start >> PAGE_SHIFT, end.div_ceil(1 << PAGE_SHIFT).min(mm.frames.installed_end() as u64));
    std::iter::from_fn(move || {
        while pfn < e {
            let p = pfn;
            if mm.frames.page(p as Pfn) == NO_PAGE && !mm.frames.test(p as Pfn, pg::COMPOUND) {
                pfn += mm.buddy.buddy_order(&mm.frames.owner, p as Pfn).map_or(1, |o| 1u64 << o);
                continue;
            }
            pfn += 1;
            if let Some(f) = damon_get_folio(mm, p) {
                pfn = pfn.max(f as u64 + mm.folio_nr_pages(f));
                return Some(f);
            }
        }
        None
    })
}

/// The largest "System RAM" resource: all of the machine's frames (the hole below ZONE_DMA included).
pub fn damon_pa_system_ram(mm: &Mm) -> (u64, u64) {
    (0, (mm.pfn_end as u64) << PAGE_SHIFT)
}
