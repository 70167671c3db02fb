//! The virtual address space operations set (`mm/damon/vaddr.c`, spec D.4, D.6): one
//! target is the trace's page-id space (address = page id × PAGE_SIZE); its "VMAs" are
//! the maximal runs of pages the trace has touched. Initial regions and every
//! `ops_update_interval` come from the three-region layout (the two largest gaps between
//! VMAs are left out); sampling reads the page's frame through its `pte`.

use super::region::{align_up, damon_rand, damon_set_regions, damon_update_region_access_rate, damon_va_evenly_split_region, DamonRegion, DamonTarget};
use crate::mm::page::{is_resident, pg, NOT_PRESENT};
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;
use reclaimlab_trace::{Rng, PAGE_SHIFT};

/// The mapped ranges ("VMAs", bytes): runs of touched pages.
pub fn damon_va_vmas(mm: &Mm) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = Vec::new();
    let mut start = None;
    for (i, &pte) in mm.pages.pte[..mm.pages.trace_len()].iter().enumerate() {
        match (pte != NOT_PRESENT, start) {
            (true, None) => start = Some(i as u64),
            (false, Some(s)) => {
                v.push((s << PAGE_SHIFT, (i as u64) << PAGE_SHIFT));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        v.push((s << PAGE_SHIFT, (mm.pages.trace_len() as u64) << PAGE_SHIFT));
    }
    v
}

/// `__damon_va_three_regions`: the VMAs' span without its two largest gaps; None
/// (`-EINVAL`) when there are not two gaps.
pub fn damon_va_three_regions(vmas: &[(u64, u64)], min_region_sz: u64) -> Option<[(u64, u64); 3]> {
    let (first, last) = (vmas.first()?, vmas.last()?);
    let (mut g1, mut g2) = ((0u64, 0u64), (0u64, 0u64));
    for w in vmas.windows(2) {
        let gap = w[1].0 - w[0].1;
        if gap > g1.1 - g1.0 {
            g2 = g1;
            g1 = (w[0].1, w[1].0);
        } else if gap > g2.1 - g2.0 {
            g2 = (w[0].1, w[1].0);
        }
    }
    if g1.1 == g1.0 || g2.1 == g2.0 {
        return None;
    }
    if g1.0 > g2.0 {
        std::mem::swap(&mut g1, &mut g2);
    }
    let a = |x| align_up(x, min_region_sz);
    Some([(a(first.0), a(g1.0)), (a(g1.1), a(g2.0)), (a(g2.1), a(last.1))])
}

/// `__damon_va_init_regions`: the three regions, each evenly split into pieces of
/// `max(total / min_nr_regions, min)`.
pub fn damon_va_init_regions(t: &mut DamonTarget, vmas: &[(u64, u64)], min_nr_regions: u32, min_region_sz: u64) {
    let Some(three) = damon_va_three_regions(vmas, min_region_sz) else { return };
    let total: u64 = three.iter().map(|(s, e)| e - s).sum();
    let sz = (total / min_nr_regions.max(1) as u64).max(min_region_sz);
    for (s, e) in three {
        t.regions.push(DamonRegion::new(s, e));
        let i = t.regions.len() - 1;
        let _ = damon_va_evenly_split_region(t, i, (e - s) / sz, min_region_sz);
    }
}

/// `damon_va_update`: re-apply the three regions with `damon_set_regions`.
pub fn damon_va_update(t: &mut DamonTarget, vmas: &[(u64, u64)], min_region_sz: u64) {
    if let Some(three) = damon_va_three_regions(vmas, min_region_sz) {
        damon_set_regions(t, &three, min_region_sz);
    }
}

#[inline]
fn frame_of(mm: &Mm, addr: u64) -> Option<Pfn> {
    let pte = *mm.pages.pte.get((addr >> PAGE_SHIFT) as usize)?;
    is_resident(pte).then_some(pte)
}

/// `damon_va_prepare_access_checks`: sample and mkold (the PTE's DAMON view).
pub fn damon_va_prepare_access_checks(mm: &mut Mm, t: &mut DamonTarget, rng: &mut Rng) {
    for r in t.regions.iter_mut() {
        r.sampling_addr = damon_rand(rng, r.start, r.end);
        if let Some(pfn) = frame_of(mm, r.sampling_addr) {
            mm.frames.clear(pfn, pg::DAMON_ACCESSED);
        }
    }
}

/// `damon_va_check_accesses`.
pub fn damon_va_check_accesses(mm: &Mm, t: &mut DamonTarget, len_window: u32) -> u32 {
    let mut max_nr = 0;
    for r in t.regions.iter_mut() {
        let accessed = frame_of(mm, r.sampling_addr).is_some_and(|pfn| mm.frames.test(pfn, pg::DAMON_ACCESSED));
        damon_update_region_access_rate(r, accessed, len_window);
        max_nr = max_nr.max(r.nr_accesses);
    }
    max_nr
}

/// The resident folios mapped in `[start, end)`, in address order; a THP's (its head)
/// once per run of its pages.
pub fn damon_va_folios(mm: &Mm, start: u64, end: u64) -> impl Iterator<Item = Pfn> + '_ {
    let e = (end.div_ceil(1 << PAGE_SHIFT)).min(mm.pages.trace_len() as u64);
    let mut last = None;
    ((start >> PAGE_SHIFT)..e).filter_map(move |p| {
        let pte = mm.pages.pte[p as usize];
        if !is_resident(pte) {
            return None;
        }
        let folio = mm.page_folio(pte);
        (mm.frames.test(folio, pg::LRU) && last.replace(folio) != Some(folio)).then_some(folio)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three regions skip the two largest gaps (vaddr-kunit's
    /// damon_test_three_regions_in_vmas layout).
    #[test]
    fn three_regions() {
        let vmas = [(10, 20), (20, 25), (200, 210), (210, 220), (300, 305), (307, 330)];
        assert_eq!(damon_va_three_regions(&vmas, 1), Some([(10, 25), (200, 220), (300, 330)]));
        assert_eq!(damon_va_three_regions(&[(0, 10), (20, 30)], 1), None);
        let mut t = DamonTarget::default();
        damon_va_init_regions(&mut t, &vmas, 10, 1);
        // total 60 / 10 = 6 per piece: 15/6=2, 20/6=3, 30/6=5 pieces.
        assert_eq!(t.nr_regions(), 10);
        assert_eq!((t.regions[0].start, t.regions[1].end, t.regions[9].end), (10, 25, 330));
    }
}
