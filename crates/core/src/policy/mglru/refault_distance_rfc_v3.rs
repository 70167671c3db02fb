//! `mglru+refault-distance-rfc-v3` — Kairui Song's RFC "Refault distance update with
//! MGLRU support" v3 (21 Sep 2023, Message-ID
//! `<20230920190244.16839-1-ryncsn@gmail.com>`, <https://lwn.net/Articles/945266/>; not
//! merged), patch 6/6 `workingset, lru_gen: apply refault-distance based
//! re-activation`, on top of `mglru@6.15` (spec B.6).
//!
//! What the series says (cover letter, read in full): with MGLRU, "when the file page
//! workingset size exceeds total memory ... All file pages are stuck on the oldest
//! generation and getting read-in then evicted permutably, few get activated"; the fix
//! reworks "the refault distance based activation to better fit MGLRU" with "a unified
//! algorithm for both MGLRU and Inactive/Active LRU". The 6/6 diff itself is not in the
//! public index, so this model applies the unified algorithm of patches 1–2/6 (whose
//! text was read; see `classic::refault_distance_rfc_v3`) to MGLRU as the cover letter
//! and spec B.6 describe it:
//! - the lruvec's non-resident clock advances only on eviction;
//! - the shadow carries `refs | eviction timestamp` (2026 re-post layout) instead of
//!   `min_seq | refs`;
//! - a refault is re-activated when `lru_test_refault` says so, with MGLRU's compat
//!   sizes — the two oldest generations are the inactive list, the two youngest the
//!   active one — whether it faulted through a mapping or was read();
//! - the PID controller keeps its inputs: evictions and recent refaults per tier.
//!
//! Changed functions: `lru_gen_eviction`, `lru_gen_refault` (and `lru_gen_test_recent`,
//! replaced by the distance test). Everything else is mainline (`mglru@6.15`).

use super::lrugen::*;
use super::{mainline, MglruVariant};
use crate::mm::memcontrol::MemcgId;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::vmstat::Ev;
use crate::mm::workingset::{pack_shadow, unpack_shadow, EVICTION_MASK};
use crate::mm::Mm;
use crate::policy::classic::refault_distance_rfc_v3::rfc_refault_is_recent;

/// The RFC v3 variant of MGLRU: no state of its own (the clock is the lruvec's
/// `nonresident_age`).
pub struct RefaultDistanceRfcV3;

/// Bits of the eviction timestamp: the eviction field less the refs below it.
const TS_MASK: u64 = EVICTION_MASK >> LRU_REFS_WIDTH;

/// This reconstruction's eviction field: `(eviction timestamp << 2) | (refs − 1)`.
fn pack_token(refs: u32, clock: u64) -> u64 {
    ((clock & TS_MASK) << LRU_REFS_WIDTH) | refs.saturating_sub(1) as u64
}

/// (refs, eviction timestamp) of this reconstruction's eviction field.
fn unpack_token(token: u64) -> (u32, u64) {
    (mainline::token_refs(token), token >> LRU_REFS_WIDTH)
}

impl MglruVariant for RefaultDistanceRfcV3 {
    /// Changed from mainline: the token is `(eviction timestamp << 2) | (refs − 1)` and
    /// the eviction ages the lruvec's clock (the PID eviction count is kept).
    fn lru_gen_eviction(&mut self, mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn) -> u64 {
        lru_gen_eviction_clock(mm, lrugens, pfn, pack_token)
    }

    /// Changed from mainline: recent ⇔ the refault distance passes `lru_test_refault`
    /// on the compat active/inactive sizes; a recent refault is re-activated (PG_active,
    /// so it joins a young generation) in any context.
    fn lru_gen_refault(&mut self, mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn, shadow: u64) -> bool {
        lru_gen_refault_distance(mm, lrugens, pfn, shadow, unpack_token)
    }
}

/// `lru_gen_eviction` with an eviction-only clock, shared with the 2026 re-post
/// (`refault_distance_2026`), which lays the same two fields out the other way: count the
/// eviction for the PID, read the lruvec's clock into the token `pack(refs, clock)`,
/// then age the clock by the folio's pages up the hierarchy.
pub fn lru_gen_eviction_clock(mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn, pack: impl Fn(u32, u64) -> u64) -> u64 {
    let ty = folio_type(mm, pfn);
    let refs = folio_lru_refs(mm, pfn);
    let ws = mm.frames.test(pfn, pg::WORKINGSET);
    let lv = mm.folio_lruvec(pfn);
    let delta = mm.folio_nr_pages(pfn);
    lrugens[lv as usize].evicted[ty][lru_tier_from_refs(refs, ws)] += delta;
    let l = &mm.lruvecs[lv as usize];
    let (memcg, node, token) = (l.memcg, l.node, pack(refs, l.nonresident_age));
    mm.workingset_age_nonresident(lv, delta);
    pack_shadow(memcg, node, token, ws)
}

/// `lru_gen_refault` with the refault-distance test, shared with the 2026 re-post:
/// `unpack` gives the token's (refs, eviction timestamp). Only for the same lruvec;
/// count the refault; recent ⇔ `lru_test_refault(distance)` on the compat sizes (the two
/// oldest generations inactive); a recent refault feeds the PID's `refaulted`, gets
/// PG_active in any context, counts WORKINGSET_ACTIVATE and restores PG_workingset or
/// the refs counter (v6.15).
pub fn lru_gen_refault_distance(mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn, shadow: u64, unpack: impl Fn(u64) -> (u32, u64)) -> bool {
    let ty = folio_type(mm, pfn);
    let file = ty == LRU_GEN_FILE;
    let (memcgid, nid, token, ws) = unpack_shadow(shadow);
    let lv = mm.lruvec_id(memcgid as MemcgId, nid);
    if lv != mm.folio_lruvec(pfn) {
        return false;
    }
    mm.count_folio_events(pfn, Ev::by_type(Ev::WorkingsetRefaultAnon, file), 1);
    let (refs, eviction) = unpack(token);
    let l = &mm.lruvecs[lv as usize];
    let distance = l.nonresident_age.wrapping_sub(eviction) & TS_MASK;
    if !rfc_refault_is_recent(distance, file, &l.workingset_lists(), mm.can_reclaim_anon()) {
        return false;
    }
    lrugens[lv as usize].refaulted[ty][lru_tier_from_refs(refs, ws)] += 1;
    mm.frames.set(pfn, pg::ACTIVE);
    mm.count_workingset_activate(lv, file, 1);
    mainline::restore_workingset_or_refs(mm, pfn, file, refs, ws)
}
