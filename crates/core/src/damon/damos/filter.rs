//! DAMOS filters (spec E.7): core filters (address range, target) decided per region —
//! an address filter splits the region at the range boundary so the decision is exact —
//! and ops filters (anon, active, memcg, young, hugepage size, unmapped) decided per
//! folio inside the action. First match decides; otherwise the layer's default, which
//! rejects iff its last filter is an allow-filter.

use super::super::region::{align_down, damon_split_region_at, DamonTarget};
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;

/// `enum damos_filter_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DamosFilterType {
    Anon,
    Active,
    Memcg,
    Young,
    HugepageSize,
    Unmapped,
    Addr,
    Target,
}

impl DamosFilterType {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "anon" => Self::Anon,
            "active" => Self::Active,
            "memcg" => Self::Memcg,
            "young" => Self::Young,
            "hugepage_size" => Self::HugepageSize,
            "unmapped" => Self::Unmapped,
            "addr" => Self::Addr,
            "target" => Self::Target,
            _ => return None,
        })
    }
}

/// `struct damos_filter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DamosFilter {
    pub ty: DamosFilterType,
    pub matching: bool,
    pub allow: bool,
    pub memcg_id: u16,
    pub addr_range: (u64, u64),
    pub target_idx: usize,
    pub sz_range: (u64, u64),
}

impl DamosFilter {
    /// `damos_new_filter(type, matching, allow)`.
    pub fn new(ty: DamosFilterType, matching: bool, allow: bool) -> Self {
        DamosFilter { ty, matching, allow, memcg_id: 0, addr_range: (0, 0), target_idx: 0, sz_range: (0, 0) }
    }
}

/// `damos_filter_for_ops`: handled per folio by the operations set.
pub fn damos_filter_for_ops(ty: DamosFilterType) -> bool {
    !matches!(ty, DamosFilterType::Addr | DamosFilterType::Target)
}

/// `damos_filters_default_reject`: reject by default iff the last filter allows.
pub fn damos_filters_default_reject(filters: &[DamosFilter]) -> bool {
    filters.last().is_some_and(|f| f.allow)
}

/// `damos_set_filters_default_reject`: (core default, ops default). Core allows by
/// default whenever ops filters exist.
pub fn damos_set_filters_default_reject(core: &[DamosFilter], ops: &[DamosFilter]) -> (bool, bool) {
    let core_reject = if !ops.is_empty() { false } else { damos_filters_default_reject(core) };
    (core_reject, damos_filters_default_reject(ops))
}

/// `damos_filter_match(ctx, t, r, filter, min_region_sz)` for the core types: whether
/// region `i` of target `t` (index `target_idx`) has the property == `matching`. An
/// address filter overlapping the region's edge splits it first (the left piece is the
/// one decided). Ops types never match here.
pub fn damos_filter_match(t: &mut DamonTarget, target_idx: usize, i: usize, f: &DamosFilter, min_region_sz: u64) -> bool {
    let matched = match f.ty {
        DamosFilterType::Target => target_idx == f.target_idx,
        DamosFilterType::Addr => {
            let start = align_down(f.addr_range.0, min_region_sz);
            let end = align_down(f.addr_range.1, min_region_sz);
            let r = t.regions[i];
            if start <= r.start && r.end <= end {
                true
            } else if r.end <= start || end <= r.start {
                false
            } else if r.start < start {
                damon_split_region_at(t, i, start - r.start);
                false
            } else {
                damon_split_region_at(t, i, end - r.start);
                true
            }
        }
        _ => return false,
    };
    matched == f.matching
}

/// `damos_pa_filter_match(filter, folio)`: an ops filter on one folio (frame). A YOUNG
/// match also clears DAMON's accessed state (`damon_folio_mkold`).
pub fn damos_folio_filter_match(mm: &mut Mm, pfn: Pfn, f: &DamosFilter) -> bool {
    let flags = mm.frames.flags(pfn);
    let matched = match f.ty {
        DamosFilterType::Anon => flags & pg::SWAPBACKED != 0,
        DamosFilterType::Active => flags & pg::ACTIVE != 0,
        DamosFilterType::Memcg => mm.frames.memcg(pfn) == f.memcg_id,
        DamosFilterType::Young => {
            let young = flags & pg::DAMON_ACCESSED != 0;
            if young {
                mm.frames.clear(pfn, pg::DAMON_ACCESSED);
            }
            young
        }
        // Base pages only: a folio is 4 KiB.
        DamosFilterType::HugepageSize => (f.sz_range.0..=f.sz_range.1).contains(&reclaimlab_trace::PAGE_SIZE),
        DamosFilterType::Unmapped => !mm.folio_mapped(pfn),
        DamosFilterType::Addr | DamosFilterType::Target => false,
    };
    matched == f.matching
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::damon::region::DamonRegion;

    /// mm/damon/tests/core-kunit.h (A) damos_test_filter_out.
    #[test]
    fn addr_filter_splits() {
        let mut f = DamosFilter::new(DamosFilterType::Addr, true, false);
        f.addr_range = (2, 6);
        let mut t = DamonTarget { regions: vec![DamonRegion::new(3, 5)] };
        assert!(damos_filter_match(&mut t, 0, 0, &f, 1));
        t.regions[0] = DamonRegion::new(1, 2);
        assert!(!damos_filter_match(&mut t, 0, 0, &f, 1));
        t.regions[0] = DamonRegion::new(6, 8);
        assert!(!damos_filter_match(&mut t, 0, 0, &f, 1));
        assert_eq!(t.nr_regions(), 1);
        t.regions[0] = DamonRegion::new(1, 4);
        assert!(!damos_filter_match(&mut t, 0, 0, &f, 1));
        assert_eq!((t.regions[0].start, t.regions[0].end, t.regions[1].start, t.regions[1].end), (1, 2, 2, 4));
        t.regions.truncate(1);
        t.regions[0] = DamonRegion::new(2, 8);
        assert!(damos_filter_match(&mut t, 0, 0, &f, 1));
        assert_eq!((t.regions[0].start, t.regions[0].end, t.regions[1].start, t.regions[1].end), (2, 6, 6, 8));
    }

    /// mm/damon/tests/core-kunit.h (B) damon_test_set_filters_default_reject.
    #[test]
    fn default_reject() {
        let mut target = DamosFilter::new(DamosFilterType::Target, true, true);
        assert_eq!(damos_set_filters_default_reject(&[], &[]), (false, false));
        assert_eq!(damos_set_filters_default_reject(&[target], &[]), (true, false));
        target.allow = false;
        assert_eq!(damos_set_filters_default_reject(&[target], &[]), (false, false));
        let anon = DamosFilter::new(DamosFilterType::Anon, true, true);
        assert_eq!(damos_set_filters_default_reject(&[target], &[anon]), (false, true));
        target.allow = true;
        assert_eq!(damos_set_filters_default_reject(&[target], &[anon]), (false, true));
    }
}
