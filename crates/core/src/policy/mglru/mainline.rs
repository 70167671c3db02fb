//! mglru@6.15 — MGLRU's workingset hooks as mm/workingset.c v6.15 has them (spec
//! C.10): the eviction token `(min_seq << 2) | (refs − 1)` and the generation-distance
//! refault test. Variants (the refault-distance RFC, "fix underprotected page cache")
//! override these in their own files.

use super::lrugen::*;
use crate::mm::memcontrol::MemcgId;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::vmstat::Ev;
use crate::mm::workingset::{pack_shadow, unpack_shadow, EVICTION_MASK};
use crate::mm::Mm;

/// `lru_gen_eviction`: count the eviction for the PID controller and return the shadow
/// carrying the token.
pub fn lru_gen_eviction(mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn) -> u64 {
    let ty = folio_type(mm, pfn);
    let refs = folio_lru_refs(mm, pfn);
    let ws = mm.frames.test(pfn, pg::WORKINGSET);
    let tier = lru_tier_from_refs(refs, ws);
    let lv = mm.folio_lruvec(pfn);
    let g = &mut lrugens[lv as usize];
    let min_seq = g.min_seq[ty];
    let token = (min_seq << LRU_REFS_WIDTH) | refs.saturating_sub(1) as u64;
    // atomic_long_add(delta, &lrugen->evicted[..]), delta = folio_nr_pages
    g.evicted[ty][tier] += mm.folio_nr_pages(pfn);
    let l = &mm.lruvecs[lv as usize];
    pack_shadow(l.memcg, l.node, token, ws)
}

/// `lru_gen_test_recent` (v6.14+): evicted from a generation within MAX_NR_GENS of the
/// current youngest. Returns (eviction lruvec, token, workingset, recent).
pub fn lru_gen_test_recent(mm: &Mm, lrugens: &[LruGen], shadow: u64) -> (u32, u64, bool, bool) {
    let (memcgid, nid, token, ws) = unpack_shadow(shadow);
    let lv = mm.lruvec_id(memcgid as MemcgId, nid);
    let max_seq = lrugens[lv as usize].max_seq & (EVICTION_MASK >> LRU_REFS_WIDTH);
    let recent = max_seq.abs_diff(token >> LRU_REFS_WIDTH) < MAX_NR_GENS;
    (lv, token, ws, recent)
}

/// `lru_gen_refault`: only for the same lruvec; count the refault; if recent, feed the
/// PID controller, count the activation (the fault adds the folio with PG_active),
/// restore PG_workingset or the refs counter. Returns whether PG_workingset was restored.
pub fn lru_gen_refault(mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn, shadow: u64) -> bool {
    let ty = folio_type(mm, pfn);
    let file = ty == LRU_GEN_FILE;
    let (lv, token, ws, recent) = lru_gen_test_recent(mm, lrugens, shadow);
    if lv != mm.folio_lruvec(pfn) {
        return false;
    }
    mm.count_folio_events(pfn, Ev::by_type(Ev::WorkingsetRefaultAnon, file), 1);
    if !recent {
        return false;
    }
    let refs = token_refs(token);
    lrugens[lv as usize].refaulted[ty][lru_tier_from_refs(refs, ws)] += 1;
    if mm.lru_gen_in_fault(pfn) {
        mm.count_workingset_activate(lv, file, 1);
    }
    restore_workingset_or_refs(mm, pfn, file, refs, ws)
}

/// The fd-access count a token carries: its refs field + 1.
pub fn token_refs(token: u64) -> u32 {
    (token & ((1 << LRU_REFS_WIDTH) - 1)) as u32 + 1
}

/// The end of a recent `lru_gen_refault` (v6.14+): PG_workingset from the shadow is
/// restored (counting WORKINGSET_RESTORE), else the refs counter bits to `refs − 1`.
/// Returns `ws`.
pub fn restore_workingset_or_refs(mm: &mut Mm, pfn: Pfn, file: bool, refs: u32, ws: bool) -> bool {
    if ws {
        mm.frames.set(pfn, pg::WORKINGSET);
        mm.count_folio_events(pfn, Ev::by_type(Ev::WorkingsetRestoreAnon, file), 1);
    } else {
        set_refs_counter(mm, pfn, refs - 1);
    }
    ws
}
