//! `mglru+fix-underprotected-page-cache` — Yu Zhao, "mm/mglru: fix underprotected page
//! cache" (upstream 081488051d28, December 2023, Link
//! `20231208061407.2125867-1-yuzhao@google.com`; read in full as the 6.1-stable backport
//! `[PATCH 6.1 085/106]`, Message-ID `20231218135058.709778525@linuxfoundation.org`), on
//! top of `mglru@6.6`. Exactly the patch's three changes:
//!
//! 1. `lru_gen_add_folio` (include/linux/mm_inline.h): anon not in the swap cache and
//!    dirty folios under PG_reclaim join `max_seq − 1` instead of `min_seq + 1`; other
//!    inactive folios join `min_seq + 1` instead of `min_seq`, unless the caller is
//!    reclaiming (`folio_rotate_reclaimable`) or only MIN_NR_GENS + 1 generations exist.
//! 2. `sort_folio` (mm/vmscan.c): also protects `refs == BIT(LRU_REFS_WIDTH)` — five or
//!    more accesses through file descriptors, beyond the tiers' tracking range.
//! 3. `lru_gen_refault` (mm/workingset.c): a refault in a fault, or with
//!    `refs >= BIT(LRU_REFS_WIDTH) − 1`, gets the refs counter saturated as well as
//!    PG_workingset (so change 2 protects it), instead of PG_workingset alone at
//!    `refs == BIT(LRU_REFS_WIDTH)`.

use super::super::lrugen::{folio_type, set_refs_counter, LruGen, LRU_GEN_ANON, LRU_REFS_WIDTH, MIN_NR_GENS};
use super::V66Hooks;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;

pub struct FixUnderprotectedPageCache;

impl V66Hooks for FixUnderprotectedPageCache {
    /// Change 1: four cases — hot (PG_active) → `max_seq`; can't be evicted at once →
    /// `max_seq − 1`; to be evicted first (rotated) or too few generations → `min_seq`;
    /// everything else → `min_seq + 1`.
    fn lru_gen_add_seq(mm: &Mm, g: &LruGen, pfn: Pfn, reclaiming: bool) -> u64 {
        let f = mm.frames.flags(pfn);
        let ty = folio_type(mm, pfn);
        if f & pg::ACTIVE != 0 {
            g.max_seq
        } else if ty == LRU_GEN_ANON || (f & pg::RECLAIM != 0 && f & (pg::DIRTY | pg::WRITEBACK) != 0) {
            g.max_seq - 1
        } else if reclaiming || g.min_seq[ty] + MIN_NR_GENS >= g.max_seq {
            g.min_seq[ty]
        } else {
            g.min_seq[ty] + 1
        }
    }

    /// Change 2: `tier > tier_idx || refs == BIT(LRU_REFS_WIDTH)`.
    fn sort_folio_protects(tier: usize, tier_idx: usize, refs: u32) -> bool {
        tier > tier_idx || refs == 1 << LRU_REFS_WIDTH
    }

    /// Change 3: `in_fault || refs >= BIT(LRU_REFS_WIDTH) − 1` → counter saturated and
    /// PG_workingset (`set_mask_bits(.., LRU_REFS_MASK | BIT(PG_workingset))`).
    fn lru_gen_refault_protect(mm: &mut Mm, pfn: Pfn, in_fault: bool, refs: u32) -> bool {
        if in_fault || refs >= (1 << LRU_REFS_WIDTH) - 1 {
            set_refs_counter(mm, pfn, (1 << LRU_REFS_WIDTH) - 1);
            mm.frames.set(pfn, pg::WORKINGSET);
            return true;
        }
        false
    }
}
