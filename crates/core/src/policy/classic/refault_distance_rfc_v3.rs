//! `classic+refault-distance-rfc-v3` — Kairui Song's RFC "Refault distance update with
//! MGLRU support", v3, as it applies to the classic (active/inactive) LRU (spec B.6).
//!
//! - Series: `[RFC PATCH v3 0/6] Refault distance update with MGLRU support`, Kairui Song
//!   <kasong@tencent.com>, 21 Sep 2023, Message-ID
//!   `<20230920190244.16839-1-ryncsn@gmail.com>`, <https://lwn.net/Articles/945266/>.
//!   Not merged.
//! - Patches modelled: 1/6 `workingset: simplify and use a more intuitive model` and
//!   2/6 `workingset: move refault distance checking into to a helper` (2/6 is "no
//!   feature change": it moves the 1/6 test into `lru_test_refault()`). Patches 3–6 are
//!   initialisation clean-ups and the MGLRU part; they do not touch the classic LRU.
//! - Base kernel: mm-stable of September 2023 (~v6.6-rc); modelled here on top of
//!   `classic@6.15`, whose workingset code is the same in the parts the patch changes.
//! - Source of the rule below: the text of patch 2/6 (Message-ID
//!   `<20230920190244.16839-3-ryncsn@gmail.com>`, linux-kernel archive, read through
//!   the code index), whose `-` lines are `workingset_test_recent()` exactly as 1/6
//!   leaves it and whose `+` lines are the same test moved into `lru_test_refault()`:
//!
//!   ```c
//!   active = lruvec_page_state(lruvec, NR_ACTIVE_FILE);
//!   inactive_file = lruvec_page_state(lruvec, NR_INACTIVE_FILE);
//!   if (mem_cgroup_get_nr_swap_pages(memcg) > 0) {
//!           active += lruvec_page_state(lruvec, NR_ACTIVE_ANON);
//!           inactive_anon = lruvec_page_state(lruvec, NR_INACTIVE_ANON);
//!   } else {
//!           inactive_anon = 0;
//!   }
//!   if (active >= inactive_anon + inactive_file)
//!           return distance < inactive_anon + inactive_file;
//!   else
//!           return distance < active + (file ? inactive_anon : inactive_file);
//!   ```
//!
//!   The clock rule — `nonresident_age` advances only on eviction — is from the 1/6
//!   changelog ("This basically removed workingset_activation and reduced calls to
//!   workingset_age_nonresident"), its 2026 re-post (`[PATCH RFC 22/32]
//!   mm/workingset: simplify and use a more intuitive model`, lkml.iu.edu 2605.0/00929:
//!   "The non-resident age counter (NA) is now incremented only on eviction"), and the
//!   2/6 context lines (eviction still reads the clock, then `workingset_age_nonresident`
//!   by the folio's pages). The 1/6 diff hunks for `mm/swap.c`, `mm/vmscan.c` and
//!   `workingset_refault()` themselves were not found in the public index; removing the
//!   three non-eviction aging calls is inferred from that text (spec B.6 rule (i)).
//!
//! Changed functions (each override below starts "Changed from mainline"):
//! - `workingset_test_recent` / `workingset_refault`: the comparison above (strict `<`,
//!   throttled to the inactive size when the active lists are at least as large), and
//!   no `workingset_age_nonresident` on an activated refault;
//! - `workingset_activation`: removed (a `folio_mark_accessed` activation no longer
//!   ages the clock);
//! - `move_folios_to_lru` (`putback_active`): a folio put back on an active list no
//!   longer ages the clock.
//!
//! Everything else is mainline (`classic@6.15`): the eviction shadow (clock read before
//! the eviction ages it by the folio's pages), the distance modulo `EVICTION_MASK`, the
//! `PG_workingset` restore and `lru_note_cost_refault`, the counters, and all of reclaim.
//!
//! Note on what the rule implies: when the active lists are smaller than the inactive
//! ones, a *file* refault competes with `active_file (+ active_anon + inactive_anon with
//! swap)` — the same set as mainline's `workingset_size` — so for a file-only workload
//! with an empty active list the RFC, like mainline, never activates a refault. The
//! difference lies in the clock (evictions only, so distances are not inflated by
//! activations) and in the cap at the inactive size once the active lists dominate.

use super::mainline;
use super::ClassicVariant;
use crate::mm::lruvec::LruvecId;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::vmstat::Ev;
use crate::mm::workingset::WorkingsetLists;
use crate::mm::Mm;

/// The RFC v3 variant: no state of its own.
pub struct RefaultDistanceRfcV3;

/// `lru_test_refault` of patch 2/6 (= `workingset_test_recent` after 1/6): is a
/// refault at `distance` recent, given the eviction lruvec's list sizes?
/// `swap_available` is `mem_cgroup_get_nr_swap_pages(memcg) > 0`.
pub fn rfc_refault_is_recent(distance: u64, file: bool, l: &WorkingsetLists, swap_available: bool) -> bool {
    let mut active = l.active_file;
    let inactive_file = l.inactive_file;
    let inactive_anon = if swap_available {
        active += l.active_anon;
        l.inactive_anon
    } else {
        0
    };
    if active >= inactive_anon + inactive_file {
        distance < inactive_anon + inactive_file
    } else {
        distance < active + if file { inactive_anon } else { inactive_file }
    }
}

/// `workingset_test_recent` with the RFC comparison: (recent, workingset bit).
pub fn workingset_test_recent(mm: &Mm, shadow: u64, file: bool) -> (bool, bool) {
    let (distance, lists, workingset) = mainline::refault_distance_of(mm, shadow);
    (rfc_refault_is_recent(distance, file, &lists, mm.can_reclaim_anon()), workingset)
}

impl ClassicVariant for RefaultDistanceRfcV3 {
    /// Changed from mainline: the recency test is `lru_test_refault` of the RFC
    /// (distance `<` inactive size when active ≥ inactive, else `<` active + the other
    /// type's inactive), and an activated refault no longer ages `nonresident_age`.
    fn workingset_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: u64) -> bool {
        let file = mm.frames.is_file(pfn);
        let lv = mm.folio_lruvec(pfn);
        mm.count_folio_events(pfn, Ev::by_type(Ev::WorkingsetRefaultAnon, file), 1);
        let (recent, workingset) = workingset_test_recent(mm, shadow, file);
        if !recent {
            return false;
        }
        mm.frames.set(pfn, pg::ACTIVE);
        mm.count_workingset_activate(lv, file, 1);
        if workingset {
            mm.frames.set(pfn, pg::WORKINGSET);
            mm.lru_note_cost(lv, file, 1, 0);
            mm.count_folio_events(pfn, Ev::by_type(Ev::WorkingsetRestoreAnon, file), 1);
        }
        workingset
    }

    /// Changed from mainline: `workingset_activation` is removed; a
    /// `folio_mark_accessed` activation does not age the clock.
    fn workingset_activation(&mut self, _mm: &mut Mm, _lv: LruvecId, _nr_pages: u64) {}

    /// Changed from mainline: `move_folios_to_lru` no longer calls
    /// `workingset_age_nonresident` for folios put back on an active list.
    fn putback_active(&mut self, _mm: &mut Mm, _lv: LruvecId, _nr_pages: u64) {}
}

// The eviction hook is mainline; referenced so the diff against mainline.rs is explicit.
#[allow(dead_code)]
const _EVICTION_IS_MAINLINE: fn(&mut Mm, Pfn) -> u64 = mainline::workingset_eviction;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SimConfig;
    use crate::mm::workingset::{pack_shadow, unpack_shadow};

    fn mm(swap: &str) -> Mm {
        let mut c = SimConfig::default();
        c.set("machine.memory", "16M").unwrap();
        c.set("swap.device", swap).unwrap();
        Mm::new(&c)
    }

    fn lists(ia: u64, aa: u64, inf: u64, af: u64) -> WorkingsetLists {
        WorkingsetLists { inactive_anon: ia, active_anon: aa, inactive_file: inf, active_file: af }
    }

    /// The activation decision on hand-set sizes, worked from the patch text.
    #[test]
    fn activation_decision_on_hand_set_sizes() {
        // Active small (inactive_anon 100, active_anon 200, inactive_file 400,
        // active_file 300). With swap: active = 300+200 = 500 < inactive 100+400 = 500?
        // No: 500 >= 500, so the throttled branch: distance < 500.
        let l = lists(100, 200, 400, 300);
        for file in [true, false] {
            assert!(rfc_refault_is_recent(499, file, &l, true));
            assert!(!rfc_refault_is_recent(500, file, &l, true), "strict <");
        }
        // Without swap: active = 300 < inactive 400 (anon ignored). File competes with
        // active + inactive_anon(0) = 300; anon with active + inactive_file = 700.
        assert!(rfc_refault_is_recent(299, true, &l, false));
        assert!(!rfc_refault_is_recent(300, true, &l, false));
        assert!(rfc_refault_is_recent(699, false, &l, false));
        assert!(!rfc_refault_is_recent(700, false, &l, false));
        // Active smaller than inactive, with swap: (100, 50, 800, 150): active 200 <
        // inactive 900. File: < 200 + 100 = 300 (mainline: <= 150+50+100 = 300).
        // Anon: < 200 + 800 = 1000 (mainline: <= 150+800+50 = 1000).
        let l = lists(100, 50, 800, 150);
        assert!(rfc_refault_is_recent(299, true, &l, true));
        assert!(!rfc_refault_is_recent(300, true, &l, true));
        assert!(rfc_refault_is_recent(999, false, &l, true));
        assert!(!rfc_refault_is_recent(1000, false, &l, true));
        // Active lists dominate (0, 0, 100, 900), no swap: capped at the inactive size
        // 100, where mainline would accept up to active_file = 900.
        let l = lists(0, 0, 100, 900);
        assert!(rfc_refault_is_recent(99, true, &l, false));
        assert!(!rfc_refault_is_recent(100, true, &l, false));
        assert!(!rfc_refault_is_recent(500, true, &l, false));
        assert!(crate::mm::workingset::workingset_size(true, &l, false) >= 500);
        // File-only with an empty active list: nothing to compete with, never recent.
        let l = lists(0, 0, 4096, 0);
        assert!(!rfc_refault_is_recent(0, true, &l, false));
        assert!(!rfc_refault_is_recent(0, true, &l, true));
    }

    /// The same decisions through the shadow and the lruvec clock.
    #[test]
    fn test_recent_through_shadow_and_clock() {
        let mut m = mm("none");
        let lv = m.lruvec_id(0, 0) as usize;
        m.lruvecs[lv].hier_size = [0, 0, 100, 900, 0];
        m.flush_memcg_stats();
        m.lruvecs[lv].nonresident_age = 10_000;
        for (distance, recent) in [(0, true), (99, true), (100, false), (900, false)] {
            let shadow = pack_shadow(0, 0, 10_000 - distance, true);
            assert_eq!(workingset_test_recent(&m, shadow, true), (recent, true), "distance={distance}");
        }
        // Wrapped clock: distance modulo EVICTION_MASK as mainline.
        m.lruvecs[lv].nonresident_age = (1u64 << 36) + 5;
        let shadow = pack_shadow(0, 0, (1u64 << 36) - 10, false);
        assert_eq!(workingset_test_recent(&m, shadow, true), (true, false));
    }

    /// The clock advances only on eviction: activation via folio_mark_accessed, putback
    /// onto an active list and an activated refault leave it alone; eviction ages it
    /// by one after storing the old value.
    #[test]
    fn clock_advances_only_on_eviction() {
        let mut m = mm("none");
        let lv = m.lruvec_id(0, 0);
        m.lruvecs[lv as usize].nonresident_age = 41;
        let mut v = RefaultDistanceRfcV3;
        v.workingset_activation(&mut m, lv, 1);
        v.putback_active(&mut m, lv, 1);
        assert_eq!(m.lruvecs[lv as usize].nonresident_age, 41);
        // An activated refault: file page, active lists dominate, distance 0.
        m.lruvecs[lv as usize].hier_size = [0, 0, 100, 900, 0];
        m.flush_memcg_stats();
        m.frames.install(7, 0, 0, 0);
        assert!(m.frames.is_file(7));
        let shadow = pack_shadow(0, 0, 41, false);
        v.workingset_refault(&mut m, 7, shadow);
        assert!(m.frames.test(7, pg::ACTIVE), "distance 0 < inactive 100 activates");
        assert_eq!(m.lruvecs[lv as usize].nonresident_age, 41, "activated refault does not age");
        // Mainline, for contrast, ages on each of those.
        let mut mainline = super::super::Mainline;
        mainline.workingset_activation(&mut m, lv, 1);
        mainline.putback_active(&mut m, lv, 1);
        assert_eq!(m.lruvecs[lv as usize].nonresident_age, 43);
        // Eviction (mainline hook, unchanged): stores 43, ages to 44.
        let s = v.workingset_eviction(&mut m, 7);
        assert_eq!(unpack_shadow(s).2, 43);
        assert_eq!(m.lruvecs[lv as usize].nonresident_age, 44);
    }
}
