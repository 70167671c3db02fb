//! v6.6's MGLRU workingset hooks (mm/workingset.c v6.6; spec C.10 **\[version\]**): the
//! eviction token carries `refs` = counter + PG_workingset and the shadow's workingset
//! bit is `refs != 0`; a refault is recent only if it was evicted from the generation
//! that is still the oldest; every recent refault counts as an activation.

use super::super::lrugen::{folio_type, LruGen, LRU_GEN_FILE, LRU_REFS_WIDTH};
use super::lrugen::{folio_lru_refs, lru_tier_from_refs};
use super::V66Hooks;
use crate::mm::memcontrol::MemcgId;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::vmstat::Ev;
use crate::mm::workingset::{pack_shadow, unpack_shadow, EVICTION_MASK};
use crate::mm::Mm;

/// `lru_gen_eviction` (v6.6): token `(min_seq << 2) | max(refs − 1, 0)`, evicted counted
/// in tier order_base_2(refs + 1), shadow workingset bit = `refs != 0`.
pub fn lru_gen_eviction(mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn) -> u64 {
    let ty = folio_type(mm, pfn);
    let refs = folio_lru_refs(mm, pfn);
    let lv = mm.folio_lruvec(pfn);
    let g = &mut lrugens[lv as usize];
    let token = (g.min_seq[ty] << LRU_REFS_WIDTH) | refs.saturating_sub(1) as u64;
    g.evicted[ty][lru_tier_from_refs(refs)] += 1;
    let l = &mm.lruvecs[lv as usize];
    pack_shadow(l.memcg, l.node, token, refs != 0)
}

/// `lru_gen_test_recent` (v6.6): recent ⇔ the token's generation is the current
/// `min_seq` of the refaulting folio's type. Returns (eviction lruvec, token,
/// workingset, recent).
pub fn lru_gen_test_recent(mm: &Mm, lrugens: &[LruGen], shadow: u64, ty: usize) -> (u32, u64, bool, bool) {
    let (memcgid, nid, token, ws) = unpack_shadow(shadow);
    let lv = mm.lruvec_id(memcgid as MemcgId, nid);
    let min_seq = lrugens[lv as usize].min_seq[ty] & (EVICTION_MASK >> LRU_REFS_WIDTH);
    (lv, token, ws, token >> LRU_REFS_WIDTH == min_seq)
}

/// `lru_gen_refault` (v6.6): only for the same lruvec; count the refault; if recent,
/// `refs = (token & 3) + workingset`, feed `refaulted[tier]`, count the activation, and
/// let `H::lru_gen_refault_protect` decide the folio's protection. Returns whether it
/// was protected (WORKINGSET_RESTORE).
pub fn lru_gen_refault<H: V66Hooks>(mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn, shadow: u64) -> bool {
    let ty = folio_type(mm, pfn);
    let file = ty == LRU_GEN_FILE;
    let (lv, token, ws, recent) = lru_gen_test_recent(mm, lrugens, shadow, ty);
    if lv != mm.folio_lruvec(pfn) {
        return false;
    }
    mm.count_folio_events(pfn, Ev::by_type(Ev::WorkingsetRefaultAnon, file), 1);
    if !recent {
        return false;
    }
    let refs = (token & ((1 << LRU_REFS_WIDTH) - 1)) as u32 + ws as u32;
    lrugens[lv as usize].refaulted[ty][lru_tier_from_refs(refs)] += 1;
    mm.count_workingset_activate(lv, file, 1);
    // lru_gen_in_fault(): the access faulted through a mapping.
    let in_fault = mm.lru_gen_in_fault(pfn);
    let protected = H::lru_gen_refault_protect(mm, pfn, in_fault, refs);
    if protected {
        mm.count_folio_events(pfn, Ev::by_type(Ev::WorkingsetRestoreAnon, file), 1);
    }
    protected
}

/// v6.6's protection of a recent refault: a fault (hotter pages pushed out a hot page)
/// or `refs == BIT(LRU_REFS_WIDTH)` (accesses beyond the tiers' range) sets
/// PG_workingset.
pub fn refault_set_workingset(mm: &mut Mm, pfn: Pfn, in_fault: bool, refs: u32) -> bool {
    if in_fault || refs == 1 << LRU_REFS_WIDTH {
        mm.frames.set(pfn, pg::WORKINGSET);
        return true;
    }
    false
}
