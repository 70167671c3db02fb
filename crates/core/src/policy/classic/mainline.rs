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
    mm.workingset_age_nonresident(lv, mm.folio_nr_pages(pfn));
    pack_shadow(memcg, node, eviction, mm.frames.test(pfn, pg::WORKINGSET))
}

/// The first half of `workingset_test_recent`: unpack the shadow, and measure the
/// refault distance on the eviction lruvec's clock. Returns (distance, that lruvec's
/// list sizes, workingset bit of the shadow).
pub fn refault_distance_of(mm: &Mm, shadow: u64) -> (u64, WorkingsetLists, bool) {
    let (memcgid, nid, eviction, workingset) = unpack_shadow(shadow);
    let eviction = eviction << mm.bucket_order;
    let l = &mm.lruvecs[mm.lruvec_id(memcgid as MemcgId, nid) as usize];
    (refault_distance(l.nonresident_age, eviction), l.workingset_lists(), workingset)
}

/// `workingset_test_recent` (non-MGLRU): (recent, workingset bit of the shadow).
pub fn workingset_test_recent(mm: &Mm, shadow: u64, file: bool) -> (bool, bool) {
    let (distance, lists, workingset) = refault_distance_of(mm, shadow);
    (distance <= workingset_size(file, &lists, mm.can_reclaim_anon()), workingset)
}

/// `workingset_refault` (B.3): count the refault on the folio's new lruvec; if the
/// refault distance fits the workingset, activate, age the clock, count the
/// activation, and — if it was active before eviction — restore `PG_workingset` and
/// charge `lru_note_cost_refault`.
pub fn workingset_refault(mm: &mut Mm, pfn: Pfn, shadow: u64) -> bool {
    let file = mm.frames.is_file(pfn);
    let lv = mm.folio_lruvec(pfn);
    mm.count_folio_events(pfn, Ev::by_type(Ev::WorkingsetRefaultAnon, file), 1);
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
        mm.count_folio_events(pfn, Ev::by_type(Ev::WorkingsetRestoreAnon, file), 1);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SimConfig;

    fn mm(swap: &str) -> Mm {
        let mut c = SimConfig::default();
        c.set("machine.memory", "16M").unwrap();
        c.set("swap.device", swap).unwrap();
        Mm::new(&c)
    }

    /// B.3 on hand-set numbers: lists (inactive_anon 100, active_anon 200,
    /// inactive_file 400, active_file 800), clock at 10_000. A file refault competes
    /// with active file + all anon when swap exists (800+200+100 = 1100), else with
    /// active file only (800); an anon refault with all file + active anon (1400), or
    /// all file without swap (1200). Recent iff distance ≤ that size.
    #[test]
    fn refault_distance_decisions() {
        for (swap, file_ws, anon_ws) in [("zram", 1100u64, 1400u64), ("none", 800, 1200)] {
            let mut m = mm(swap);
            let lv = m.lruvec_id(0, 0) as usize;
            m.lruvecs[lv].hier_size = [100, 200, 400, 800, 0];
            m.flush_memcg_stats();
            m.lruvecs[lv].nonresident_age = 10_000;
            for (file, ws) in [(true, file_ws), (false, anon_ws)] {
                for (distance, recent) in [(0, true), (ws - 1, true), (ws, true), (ws + 1, false), (9_000, false)] {
                    let shadow = pack_shadow(0, 0, 10_000 - distance, true);
                    assert_eq!(workingset_test_recent(&m, shadow, file), (recent, true), "swap={swap} file={file} distance={distance}");
                }
            }
            // A clock that wrapped past 2^36 since the eviction still measures the
            // distance modulo EVICTION_MASK.
            m.lruvecs[lv].nonresident_age = (1u64 << 36) + 5;
            let shadow = pack_shadow(0, 0, (1u64 << 36) - 10, false);
            assert_eq!(workingset_test_recent(&m, shadow, true), (true, false));
        }
    }

    /// Eviction stores the clock *before* advancing it, on the folio's lruvec and its
    /// ancestors (B.2 item 1).
    #[test]
    fn eviction_stores_clock_then_ages_hierarchy() {
        let mut c = SimConfig::default();
        c.set("machine.memory", "16M").unwrap();
        c.set("cgroup.db.memory.max", "8M").unwrap();
        let mut m = Mm::new(&c);
        let db = m.memcg_by_name("db").unwrap();
        let (child, root) = (m.lruvec_id(db, 0) as usize, m.lruvec_id(0, 0) as usize);
        m.lruvecs[child].nonresident_age = 41;
        m.lruvecs[root].nonresident_age = 1000;
        m.frames.install(7, 0, db, 0);
        m.frames.set(7, pg::WORKINGSET);
        let shadow = workingset_eviction(&mut m, 7);
        assert_eq!(unpack_shadow(shadow), (db, 0, 41, true));
        assert_eq!(m.lruvecs[child].nonresident_age, 42);
        assert_eq!(m.lruvecs[root].nonresident_age, 1001);
    }
}
