//! DAMOS actions on folios (`mm/damon/paddr.c` v6.15 and vaddr's madvise paths, spec
//! E.1): they act on memory only through the primitives the kernel's DAMON uses, via
//! the policy's hooks, so they compose with every reclaim policy —
//! - `pageout`: clear `PG_referenced`, `folio_isolate_lru`, then `reclaim_pages` →
//!   `shrink_folio_list(ignore_references)`; survivors `folio_putback_lru`. paddr adds a
//!   temporary `{young, matching, reject}` ops filter unless the scheme has a young filter.
//! - `lru_prio`: `folio_mark_accessed`; `lru_deprio` and vaddr `cold`: `folio_deactivate`.
//! - `stat`: counts ops-filter-passed bytes (only when ops filters exist).
//!
//! Cost on kdamond's clock: `cost.damon_pfn_ns` per page frame of a paddr region (the
//! walk looks every pfn up, free or not), `cost.rmap_ns` + `cost.scan_ns` per folio
//! examined (the young check walks the rmap; isolation), plus what `shrink_folio_list`
//! charges.

use super::filter::{damos_folio_filter_match, DamosFilter, DamosFilterType};
use super::scheme::{Damos, DamosAction};
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;
use crate::vmscan::{shrink_folio_list, Reclaimer, ScanControl};
use reclaimlab_trace::PAGE_SIZE;

/// Which operations set applies the action (their pageout/cold paths differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpsKind {
    Paddr,
    Vaddr,
}

/// `damos_pa_filter_out(s, folio)`: ops filters on one folio (`extra` = paddr pageout's
/// temporary young filter, appended last).
fn damos_ops_filter_out(mm: &mut Mm, pfn: Pfn, s: &Damos, extra: Option<&DamosFilter>) -> bool {
    if s.core_filters_allowed {
        return false;
    }
    for f in s.ops_filters.iter().chain(extra) {
        if damos_folio_filter_match(mm, pfn, f) {
            return !f.allow;
        }
    }
    s.ops_filters_default_reject
}

/// `reclaim_pages(folio_list)`: `shrink_folio_list` ignoring references, survivors put
/// back. Returns (reclaimed pages, ns).
pub fn reclaim_pages<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, folios: &mut Vec<Pfn>) -> (u64, u64) {
    if folios.is_empty() {
        return (0, 0);
    }
    let mut sc = ScanControl::new(Reclaimer::Memcg, folios.len() as u64);
    sc.ignore_references = true;
    let stat = shrink_folio_list(mm, p, folios, &mut sc);
    for &pfn in folios.iter() {
        p.folio_putback_lru(mm, pfn);
    }
    folios.clear();
    (stat.nr_reclaimed, sc.cost_ns)
}

/// Apply `s.action` to the folios `folios` yields (in address order). Returns (bytes
/// applied, bytes passing the ops filters, ns).
pub fn damos_apply_folios<P: ReclaimPolicy>(
    mm: &mut Mm,
    p: &mut P,
    kind: OpsKind,
    s: &mut Damos,
    folios: impl Iterator<Item = Pfn>,
    buf: &mut Vec<Pfn>,
    region_sz: u64,
) -> (u64, u64, u64) {
    let per_folio = mm.cfg.cost.rmap_ns + mm.cfg.cost.scan_ns;
    let (mut applied, mut passed, mut ns) = (0u64, 0u64, 0u64);
    let young = DamosFilter::new(DamosFilterType::Young, true, false);
    let extra = (kind == OpsKind::Paddr && s.action == DamosAction::Pageout && !s.ops_filters.iter().any(|f| f.ty == DamosFilterType::Young)).then_some(&young);
    if s.action == DamosAction::Stat && s.ops_filters.is_empty() {
        return (0, 0, 0);
    }
    // damon_get_folio on every page frame of the region, folio or not (paddr).
    if kind == OpsKind::Paddr {
        ns += region_sz / PAGE_SIZE * mm.cfg.cost.damon_pfn_ns;
    }
    for pfn in folios {
        if s.last_applied == Some(pfn as u64) {
            continue;
        }
        ns += per_folio;
        let folio_sz = mm.folio_nr_pages(pfn) * PAGE_SIZE;
        if kind == OpsKind::Paddr || s.action == DamosAction::Stat {
            if damos_ops_filter_out(mm, pfn, s, extra) {
                continue;
            }
            passed += folio_sz;
        }
        match s.action {
            DamosAction::Stat => {}
            DamosAction::Pageout => {
                mm.frames.clear(pfn, pg::REFERENCED);
                if kind == OpsKind::Vaddr {
                    // madvise_pageout: the PTE is made old; an active folio keeps
                    // PG_workingset.
                    mm.frames.clear(pfn, pg::YOUNG);
                    if mm.frames.test(pfn, pg::ACTIVE) {
                        mm.frames.set(pfn, pg::WORKINGSET);
                    }
                }
                if !p.folio_isolate_lru(mm, pfn) {
                    continue;
                }
                if mm.frames.test(pfn, pg::UNEVICTABLE) {
                    p.folio_putback_lru(mm, pfn);
                } else {
                    buf.push(pfn);
                }
            }
            DamosAction::LruPrio => {
                p.folio_mark_accessed(mm, pfn);
                applied += folio_sz;
            }
            DamosAction::LruDeprio => {
                p.folio_deactivate(mm, pfn);
                applied += folio_sz;
            }
            DamosAction::Cold => {
                if kind == OpsKind::Paddr {
                    // paddr has no cold action (apply_scheme returns 0).
                    continue;
                }
                mm.frames.clear(pfn, pg::YOUNG | pg::REFERENCED);
                p.folio_deactivate(mm, pfn);
            }
        }
        s.last_applied = Some(pfn as u64);
    }
    if s.action == DamosAction::Pageout {
        let (reclaimed, cost) = reclaim_pages(mm, p, buf);
        ns += cost;
        applied = reclaimed * PAGE_SIZE;
    }
    if kind == OpsKind::Vaddr && matches!(s.action, DamosAction::Pageout | DamosAction::Cold) {
        // damos_madvise: a successful madvise applies to the whole region.
        applied = region_sz;
    }
    (applied, passed, ns)
}
