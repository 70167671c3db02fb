//! "mm/mglru: reset page lru tier bits when activating" (upstream v6.13; in 6.12 stable
//! from 6.12.114), as 6.12.117's include/linux/mm_inline.h and mm/vmscan.c have it. An
//! activated folio starts again from tier 0 of its new generation instead of carrying
//! the fd-access count it had: its refs counter and PG_referenced go. PG_workingset
//! stays when the folio is added ("it can affect PSI accounting if the activation is
//! due to workingset refault"), but look-around clears it too before activating.

use super::super::lrugen::REFS_MASK;
use super::super::v6_6::lrugen::REFS_ALL;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;

/// `lru_gen_add_folio` of a folio with PG_active: `mask |= LRU_REFS_MASK |
/// BIT(PG_referenced) | BIT(PG_active)` — counter and PG_referenced cleared with
/// PG_active; PG_workingset kept. So a mapped refault that the fix's `lru_gen_refault`
/// saturated (refs 4, tier 3) joins `max_seq` at refs 1 (PG_workingset alone, tier 1).
pub fn lru_gen_add_active_refs(mm: &mut Mm, pfn: Pfn) {
    mm.frames.clear(pfn, REFS_MASK | pg::REFERENCED);
}

/// `folio_clear_lru_refs` (`LRU_REFS_MASK | LRU_REFS_FLAGS`: counter, PG_referenced,
/// PG_workingset), which `lru_gen_look_around` now calls before `folio_activate` of a
/// young neighbour in another generation.
pub fn folio_clear_lru_refs(mm: &mut Mm, pfn: Pfn) {
    mm.frames.clear(pfn, REFS_ALL);
}
