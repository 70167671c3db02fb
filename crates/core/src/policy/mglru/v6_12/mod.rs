//! `mglru@6.12` — MGLRU as the 6.12 stable kernel has it from 6.12.114 on: the v6.6
//! base ([`super::v6_6`]) plus one override set, [`Stable612`], whose [`V66Hooks`]
//! points are every later patch on that code path that 6.12 stable carries (no other
//! layer: what it does not override is v6.6's):
//!
//! - the four December 2023 fixes (v6.7; 6.12 has them all):
//!   - "mm/mglru: fix underprotected page cache" (081488051d28): the three hooks of
//!     [`FixUnderprotectedPageCache`], unchanged;
//!   - "mm/mglru: try to stop at high watermarks" (5095a2b23987): `should_abort_scan`
//!     stops kswapd once every zone is above high + MIN_LRU_BATCH;
//!   - "mm/mglru: respect min_ttl_ms with memcgs" and "mm/mglru: reclaim offlined memcgs
//!     harder": `shrink_one` reclaims a memcg whatever its size and then keeps it (not
//!     aged, still sizable) or retries it once at the tail; `shrink_many` reads the old
//!     memcg generation once; `lru_gen_age_node` sets the initial priority and tests every
//!     memcg (the shared code);
//! - v6.10's `set_initial_priority` clamp to [DEF_PRIORITY / 2, DEF_PRIORITY];
//! - 6.12.114's backport of v6.13's "mm/mglru: reset page lru tier bits when activating"
//!   ([`reset_lru_tier_bits`]).
//!
//! Source: Debian's `linux-source-6.12` 6.12.117-1~deb12u1 (mm/vmscan.c, mm/swap.c,
//! include/linux/mm_inline.h, mm/workingset.c), read against the v6.6 model; its
//! changelog dates the backports (6.12.114: the tier bits, "use the common routine for
//! dirty/writeback reactivation", "fix and remove redundant unevictable folio handling").
//! What 6.12 has that the model does not: docs/model.md §1.15.

pub mod reset_lru_tier_bits;
#[cfg(test)]
mod tests;

use super::lrugen::LruGen;
use super::memcg_lru::{self, MemcgLruOp, Seg};
use super::v6_6::fix_underprotected_page_cache::FixUnderprotectedPageCache;
use super::v6_6::{V66Hooks, V66};
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;
use crate::vmscan::DEF_PRIORITY;

/// The 6.12.114+ points of the v6.6 code path: the override set of `mglru@6.12`.
pub struct Stable612;

/// `mglru@6.12`.
pub type Mglru612 = V66<Stable612>;

impl V66Hooks for Stable612 {
    fn lru_gen_add_seq(mm: &Mm, g: &LruGen, pfn: Pfn, reclaiming: bool) -> u64 {
        FixUnderprotectedPageCache::lru_gen_add_seq(mm, g, pfn, reclaiming)
    }
    fn sort_folio_protects(tier: usize, tier_idx: usize, refs: u32) -> bool {
        FixUnderprotectedPageCache::sort_folio_protects(tier, tier_idx, refs)
    }
    fn lru_gen_refault_protect(mm: &mut Mm, pfn: Pfn, in_fault: bool, refs: u32) -> bool {
        FixUnderprotectedPageCache::lru_gen_refault_protect(mm, pfn, in_fault, refs)
    }
    fn lru_gen_add_active_refs(mm: &mut Mm, pfn: Pfn) {
        reset_lru_tier_bits::lru_gen_add_active_refs(mm, pfn)
    }
    fn look_around_before_activate(mm: &mut Mm, pfn: Pfn) {
        reset_lru_tier_bits::folio_clear_lru_refs(mm, pfn)
    }
    /// 5095a2b23987 (spec C.7): kswapd, order 0, stops once every zone is above
    /// `high_wmark + MIN_LRU_BATCH`.
    const KSWAPD_STOPS_AT_HIGH_WMARK: bool = true;
    /// v6.10: "cap it to prevent overshoots of shrinker objects by large margins".
    const MIN_INITIAL_PRIORITY: i32 = DEF_PRIORITY / 2;
    /// 6.12's `shrink_one`: below min → young, below low → tail once; no size test
    /// before reclaim.
    fn shrink_one_skip(_sizable: bool, seg: Seg, below_min: bool, below_low: bool) -> Option<MemcgLruOp> {
        memcg_lru::shrink_one_skip(seg, below_min, below_low)
    }
    /// 6.12's `shrink_one` after reclaim: aged → young; else stay while sizable; else
    /// one retry at the tail, then young.
    fn shrink_one_op(success: bool, sizable: bool, seg: Seg) -> MemcgLruOp {
        memcg_lru::shrink_one_op(success, sizable, seg)
    }
    /// 6.12's `shrink_many` reads `get_memcg_gen` once and skips memcgs that left it.
    const SHRINK_MANY_REREADS_GEN: bool = false;
    /// 6.12.114's "mm/mglru: use the common routine for dirty/writeback reactivation":
    /// `sort_folio` no longer sorts dirty/writeback folios; `scan_folios` counts the file
    /// folios it isolates in `nr.file_taken` and `shrink_folio_list` the unqueued dirty.
    const SORT_FOLIO_WAITS_FOR_WRITEBACK: bool = false;
    /// 6.12 `try_to_shrink_lruvec` wakes the flushers when every file folio taken was
    /// unqueued dirty.
    const WAKES_FLUSHERS: bool = true;
}
