//! `mglru+refault-distance-2026` — the refault-distance part of Kairui Song's "[PATCH RFC
//! 00/32] mm/mglru: MGLRU-FG and refault distance support" (1 May 2026, on mm-unstable;
//! lkml.iu.edu 2605.0/00922; not merged), on top of `mglru@6.15`.
//!
//! Patches taken (text read on the lkml.iu.edu mirror; what was readable is said):
//! - 22/32 `mm/workingset: simplify and use a more intuitive model` (1 May 2026,
//!   2605.0/00929; changelog): "The non-resident age counter (NA) is now incremented
//!   only on eviction". 23/32 (`rename the nonresistence age counter`, 2605.0/00955,
//!   diff read) renames it `evictions`: "How many evictions has happened".
//! - 27/32 `mm/workingset: move refault distance checking into a helper` (1 May 2026,
//!   2605.0/00956; changelog and first hunks): "There isn't any feature change";
//!   `lru_eviction()` reads the lruvec's eviction counter and advances it by the folio's
//!   pages; the distance test moves into a helper (the test of the 2023 v3 patch 2/6,
//!   `classic::refault_distance_rfc_v3::rfc_refault_is_recent`).
//! - 30/32 `mm/mglru, workingset: apply refault-distance based re-activation` (1 May
//!   2026, 2605.0/00944; changelog and the shadow-layout hunk, mm/workingset.c +81/−35):
//!   the MGLRU shadow becomes `|SC| refs|eviction timestamp|NID|MCID|W|1|` (was
//!   `|SC| seq number| refs|...`); "consider the last two generation as the inactive LRU
//!   and the first two generations as active LRU"; "make the refault-distance
//!   contributed to page tiering and PID refault detection of MGLRU"; "This also changed
//!   the meaning of workingset_* fields in /proc/vmstat".
//!
//! Patches left: 01–21 (MGLRU-FG: frequency-guided promotion, page-flag clean-ups; they
//! change tiering and promotion, a model of their own), 24–26, 28–29, 31–32 (their text
//! was not reachable here). The rest of 30/32's diff was not reachable either (queries:
//! "apply refault-distance based re-activation", "lkml 2605.0 lru_gen_refault ...",
//! "MGLRU-FG refault distance", the code index for its lines): where it is silent this
//! model keeps v6.15's `lru_gen_refault` around the new test (same-lruvec check, the
//! PID's `refaulted[type][tier]`, PG_workingset or refs restored), flagged below.
//!
//! Base: mm-unstable of spring 2026 differs from v6.15 in what 27/32 touches only by
//! per-type eviction bits (`LRU_EVICT_BITS_ANON`: anon shadows in the swap table carry a
//! swap count `SC` on top) and a per-type `bucket_order`; with this model's 36-bit clock
//! both change nothing below 2^34 evictions, so they are not modelled.
//!
//! Changed functions: `lru_gen_eviction`, `lru_gen_refault` (its recency test is the
//! refault distance). Everything else is mainline (`mglru@6.15`).

use super::lrugen::*;
use super::refault_distance_rfc_v3::{lru_gen_eviction_clock, lru_gen_refault_distance};
use super::MglruVariant;
use crate::mm::page_alloc::Pfn;
use crate::mm::workingset::EVICTION_SHIFT;
use crate::mm::Mm;

/// The 2026 variant: no state of its own (the eviction counter is the lruvec's
/// `nonresident_age`, which only evictions advance under this policy).
pub struct RefaultDistance2026;

/// Bits of the eviction timestamp in a 2026 MGLRU shadow: the eviction field less the
/// `refs` field above it (30/32: `refs|eviction timestamp`).
pub const TS_BITS: u32 = 64 - EVICTION_SHIFT - LRU_REFS_WIDTH;
pub const TS_MASK: u64 = (1 << TS_BITS) - 1;

/// The eviction field of a 2026 MGLRU shadow: `refs − 1` above the timestamp.
pub fn pack_token(refs: u32, timestamp: u64) -> u64 {
    ((refs.saturating_sub(1) as u64) << TS_BITS) | (timestamp & TS_MASK)
}

/// (refs, timestamp) of a 2026 eviction field.
pub fn unpack_token(token: u64) -> (u32, u64) {
    ((token >> TS_BITS) as u32 + 1, token & TS_MASK)
}

impl MglruVariant for RefaultDistance2026 {
    /// Changed from mainline: the shadow carries `refs | eviction timestamp` (30/32),
    /// the timestamp read from the lruvec's eviction counter, which the eviction then
    /// advances by the folio's pages up the hierarchy (27/32 `lru_eviction`). The PID's
    /// eviction count is kept.
    fn lru_gen_eviction(&mut self, mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn) -> u64 {
        lru_gen_eviction_clock(mm, lrugens, pfn, pack_token)
    }

    /// Changed from mainline: recent ⇔ the refault distance passes the helper's test
    /// (27/32) on the compat sizes, the two oldest generations inactive and the two
    /// youngest active (30/32); a recent refault is re-activated (PG_active: it joins
    /// `max_seq − 1`) whether faulted or read(), counted as WORKINGSET_ACTIVATE, and
    /// feeds the PID and the tier ("contributed to page tiering and PID refault
    /// detection"). Kept from v6.15 (30/32's hunks unread): the same-lruvec check and
    /// the restore of PG_workingset or the refs counter.
    fn lru_gen_refault(&mut self, mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn, shadow: u64) -> bool {
        lru_gen_refault_distance(mm, lrugens, pfn, shadow, unpack_token)
    }
}

#[cfg(test)]
mod tests {
    //! Worked by hand from 30/32's layout and 27/32's test (2023 v3 2/6's comparison).
    use super::*;
    use crate::mm::lruvec::LruList;
    use crate::mm::page::pg;
    use crate::mm::vmstat::Ev;
    use crate::mm::workingset::{pack_shadow, unpack_shadow};
    use crate::policy::mglru::Mglru;
    use crate::policy::ReclaimPolicy;

    fn machine() -> (Mm, Mglru<RefaultDistance2026>) {
        crate::policy::mglru::tests::machine_with(RefaultDistance2026)
    }

    /// A read() file page of the root memcg, on the LRU.
    fn file_page(mm: &mut Mm, p: &mut Mglru<RefaultDistance2026>, page: u32) -> Pfn {
        let pfn = mm.rmqueue(0, crate::mm::page_alloc::MigrateType::Movable).unwrap();
        mm.pages.pte[page as usize] = pfn;
        mm.frames.install(pfn, page, 0, 0);
        p.folio_add_lru(mm, pfn);
        pfn
    }

    /// The eviction field: 36 bits, refs − 1 in the top 2, the clock in the low 34.
    /// Clock 1000, refs 3 → (2 << 34) | 1000 = 34,359,739,368; the clock then reads 1001;
    /// the eviction counts in tier order_base_2(3) = 2.
    #[test]
    fn shadow_layout_refs_above_the_timestamp() {
        assert_eq!((TS_BITS, TS_MASK), (34, (1 << 34) - 1));
        let (mut mm, mut p) = machine();
        let f = file_page(&mut mm, &mut p, 2);
        for _ in 0..3 {
            lru_gen_inc_refs(&mut mm, f);
        }
        mm.lruvecs[0].nonresident_age = 1000;
        let shadow = p.variant.lru_gen_eviction(&mut mm, &mut p.lrugens, f);
        let (memcg, nid, token, ws) = unpack_shadow(shadow);
        assert_eq!((memcg, nid, token, ws), (0, 0, 34_359_739_368, false));
        assert_eq!(unpack_token(token), (3, 1000));
        assert_eq!(mm.lruvecs[0].nonresident_age, 1001);
        assert_eq!(p.lrugens[0].evicted[LRU_GEN_FILE][2], 1);
        // The 2023 reconstruction put refs below: (1000 << 2) | 2 = 4002.
        assert_ne!(token, 4002);
    }

    /// The timestamp wraps at 2^34: evicted at 2^34 − 1, refaulting at 2^34 + 2 is
    /// distance 3; refs 1 stores 0 above it.
    #[test]
    fn distance_wraps_at_the_timestamp_width() {
        let t = pack_token(1, (1 << 34) - 1);
        assert_eq!(t, (1 << 34) - 1);
        let (refs, ts) = unpack_token(t);
        assert_eq!(refs, 1);
        assert_eq!(((1u64 << 34) + 2).wrapping_sub(ts) & TS_MASK, 3);
        assert_eq!(pack_token(4, 5), (3 << 34) | 5);
    }

    /// A file page evicted at clock 0 refaults at clock `d` into lruvec 0 whose flushed
    /// sizes are `(inactive_file, active_file)`, no anon pages. Returns (activated, PG_active,
    /// WORKINGSET_ACTIVATE_FILE, PID refaulted tier 0).
    fn refault_at(d: u64, inactive_file: u64, active_file: u64) -> (bool, bool, u64, u64) {
        let (mut mm, mut p) = machine();
        let f = file_page(&mut mm, &mut p, 2);
        let shadow = pack_shadow(0, 0, pack_token(1, 0), false);
        mm.lruvecs[0].nonresident_age = d;
        mm.lruvecs[0].stat.size[LruList::InactiveFile as usize] = inactive_file;
        mm.lruvecs[0].stat.size[LruList::ActiveFile as usize] = active_file;
        let l = mm.lruvecs[0].workingset_lists();
        assert_eq!((l.inactive_anon, l.active_anon), (0, 0), "no anon pages: the anon terms are 0");
        let refaults = mm.vmstat.get(Ev::WorkingsetRefaultFile);
        p.variant.lru_gen_refault(&mut mm, &mut p.lrugens, f, shadow);
        assert_eq!(mm.vmstat.get(Ev::WorkingsetRefaultFile), refaults + 1, "every same-lruvec refault counts");
        let activated = mm.lruvecs[0].workingset_activate[1] == 1;
        (activated, mm.frames.test(f, pg::ACTIVE), mm.vmstat.get(Ev::WorkingsetActivateFile), p.lrugens[0].refaulted[LRU_GEN_FILE][0])
    }

    /// Active (the two youngest gens) 40 < inactive (the two oldest) 100: a file refault
    /// is recent iff distance < active + inactive_anon = 40 + 0. 39 → re-activated
    /// (PG_active, one activation, the PID's tier-0 refault); 40 → left alone.
    #[test]
    fn activation_below_active_plus_other_inactive() {
        assert_eq!(refault_at(39, 100, 40), (true, true, 1, 1));
        assert_eq!(refault_at(40, 100, 40), (false, false, 0, 0));
    }

    /// Active 300 ≥ inactive 100: recent iff distance < inactive = 100, however large the
    /// active set (mainline's `workingset_size` would allow up to 300).
    #[test]
    fn activation_capped_at_the_inactive_size() {
        assert_eq!(refault_at(99, 100, 300), (true, true, 1, 1));
        assert_eq!(refault_at(100, 100, 300), (false, false, 0, 0));
        assert!(!refault_at(250, 100, 300).0);
    }

    /// A re-activated read() refault joins max_seq − 1 (PG_active, `lru_gen_folio_seq`),
    /// not the oldest generation where mainline puts read() pages.
    #[test]
    fn reactivated_read_refault_joins_a_young_generation() {
        let (mut mm, mut p) = machine();
        let pfn = mm.rmqueue(0, crate::mm::page_alloc::MigrateType::Movable).unwrap();
        mm.pages.pte[5] = pfn;
        mm.frames.install(pfn, 5, 0, 0);
        mm.lruvecs[0].nonresident_age = 3;
        mm.lruvecs[0].stat.size[LruList::InactiveFile as usize] = 10;
        mm.lruvecs[0].stat.size[LruList::ActiveFile as usize] = 10;
        let shadow = pack_shadow(0, 0, pack_token(1, 0), false);
        p.workingset_refault(&mut mm, pfn, shadow);
        p.folio_add_lru(&mut mm, pfn);
        assert_eq!(folio_lru_gen(&mm, pfn), Some(gen_from_seq(p.lrugens[0].max_seq - 1)));
        p.check_invariants(&mm).unwrap();
    }
}
