//! classic@6.15 — the workingset hooks as mm/workingset.c v6.15 has them (spec B.2,
//! B.3). Variants (e.g. the refault-distance RFC) override some of these in their own
//! files; this file is the mainline side of that diff.

use crate::mm::lruvec::LruvecId;
use crate::mm::memcontrol::MemcgId;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::vmstat::Ev;
use crate::mm::workingset::{pack_shadow, refault_distance, unpack_shadow, workingset_size, WorkingsetLists};
use crate::mm::Mm;

/// `workingset_eviction`: the shadow stores the folio's lruvec clock *before* this
/// eviction advances it, the memcg and node ids, and `PG_workingset`.
pub fn workingset_eviction(mm: &mut Mm, pfn: Pfn) -> u64 {
    let lv = mm.folio_lruvec(pfn);
    let l = &mm.lruvecs[lv as usize];
    let (memcg, node) = (l.memcg, l.node);
    let eviction = l.nonresident_age >> mm.bucket_order;
    mm.workingset_age_nonresident(lv, 1);
    pack_shadow(memcg, node, eviction, mm.frames.test(pfn, pg::WORKINGSET))
}

/// `workingset_test_recent` (non-MGLRU): (recent, workingset bit of the shadow).
pub fn workingset_test_recent(mm: &Mm, shadow: u64, file: bool) -> (bool, bool) {
    let (memcgid, nid, eviction, workingset) = unpack_shadow(shadow);
    let eviction = eviction << mm.bucket_order;
    let eviction_lv = mm.lruvec_id(memcgid as MemcgId, nid);
    let l = &mm.lruvecs[eviction_lv as usize];
    let distance = refault_distance(l.nonresident_age, eviction);
    let lists = WorkingsetLists {
        inactive_anon: l.hier_size[0],
        active_anon: l.hier_size[1],
        inactive_file: l.hier_size[2],
        active_file: l.hier_size[3],
    };
    (distance <= workingset_size(file, &lists, mm.can_reclaim_anon()), workingset)
}

/// `workingset_refault` (B.3): count the refault on the folio's new lruvec; if the
/// refault distance fits the workingset, activate, age the clock, count the
/// activation, and — if it was active before eviction — restore `PG_workingset` and
/// charge `lru_note_cost_refault`.
pub fn workingset_refault(mm: &mut Mm, pfn: Pfn, shadow: u64) -> bool {
    let file = mm.frames.is_file(pfn);
    let lv = mm.folio_lruvec(pfn);
    mm.vmstat.count(Ev::by_type(Ev::WorkingsetRefaultAnon, file), 1);
    let (recent, workingset) = workingset_test_recent(mm, shadow, file);
    if !recent {
        return false;
    }
    mm.frames.set(pfn, pg::ACTIVE);
    mm.workingset_age_nonresident(lv, 1);
    mm.count_workingset_activate(lv, file, 1);
    if workingset {
        mm.frames.set(pfn, pg::WORKINGSET);
        mm.lru_note_cost(lv, file, 1, 0);
        mm.vmstat.count(Ev::by_type(Ev::WorkingsetRestoreAnon, file), 1);
    }
    workingset
}

/// `workingset_activation`: an activation through `folio_mark_accessed` ages the clock.
pub fn workingset_activation(mm: &mut Mm, lv: LruvecId, nr_pages: u64) {
    mm.workingset_age_nonresident(lv, nr_pages);
}

/// `move_folios_to_lru`: a folio put back on an active list ages the clock.
pub fn putback_active(mm: &mut Mm, lv: LruvecId, nr_pages: u64) {
    mm.workingset_age_nonresident(lv, nr_pages);
}
