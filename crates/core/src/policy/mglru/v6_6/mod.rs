//! `mglru@6.6` — MGLRU as v6.6 had it, before Yu Zhao's December 2023 fixes: a base of
//! its own. [`V66`] implements every [`MglruVariant`] hook with v6.6's function (spec C
//! **\[version\]** notes), calling the shared code (generations, lists, the page-table
//! walk, look-around's window, the PID arithmetic, scan_folios, memcg iteration) where
//! both kernels have the same; no v6.15 default reaches it. A patch on v6.6 implements
//! [`V66Hooks`] (defaults: v6.6 as released) overriding only what it changes, and runs
//! as `V66<Patch>`.
//!
//! - [`lrugen`]: the pre-v6.14 reference bits (`folio_inc_refs`, `folio_lru_refs` =
//!   counter + PG_workingset, tier = order_base_2(refs + 1)), `lru_gen_add_folio`'s
//!   placement, the one-strike `folio_update_gen`.
//! - [`eviction`]: `sort_folio`, `isolate_folio`, the classic `folio_check_references`
//!   with look-around, `evict_folios`' rejected folios, `should_run_aging`,
//!   `try_to_inc_min_seq`, `inc_min_seq`.
//! - [`pid`]: `get_tier_idx` (gains 1 : 2) and the type choice (older `min_seq` first).
//! - [`workingset`]: `lru_gen_eviction`, `lru_gen_test_recent` (token == `min_seq`),
//!   `lru_gen_refault`.
//! - [`fix_underprotected_page_cache`]: upstream 081488051d28 on top of this model.
//! - [`V66Hooks`]: the points later patches change on this code path; 6.12 stable
//!   (`mglru@6.12`, [`super::v6_12`]) is one override set of them.
//!
//! Sources: a complete mm/vmscan.c of v6.8 (the MGLRU code is v6.6's plus the four
//! December 2023 fixes, whose diffs were read to undo them); the `-` side of
//! `[PATCH 6.1 085/106] mm/mglru: fix underprotected page cache` (v6.6's
//! `lru_gen_add_folio`, `sort_folio` test, `lru_gen_refault`); the `-` side of
//! `[PATCH mm-unstable v3 6/6] mm/mglru: rework workingset protection` (v6.13's refs,
//! look-around, `folio_check_references`, `isolate_folio`, `evict_folios`); a
//! v6.6-era mm/workingset.c; rmap's v6.6 `folio_referenced_one`. See docs/model.md §1.12.

pub mod eviction;
pub mod fix_underprotected_page_cache;
pub mod lrugen;
pub mod pid;
#[cfg(test)]
mod tests;
pub mod workingset;

use super::lrugen::LruGen;
use super::memcg_lru::{MemcgLruOp, Seg};
use super::MglruVariant;
use crate::mm::lruvec::LruvecId;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;
use crate::vmscan::{FolioReferences, ScanControl};
use std::marker::PhantomData;

/// The points later patches change on the v6.6 code path; the defaults are v6.6 as
/// released. "mm/mglru: fix underprotected page cache" changes the first three; the
/// other three December 2023 fixes, v6.10's priority clamp and 6.12-stable's "reset page
/// lru tier bits when activating" the rest (`mglru@6.12`, [`super::v6_12`]).
pub trait V66Hooks: Send + 'static {
    /// The model this one overrides ([`crate::policy::Based`]): a type implementing this
    /// trait is a patch on `mglru@6.6`; v6.6 as released says "".
    const BASE: &'static str = "mglru@6.6";
    /// `lru_gen_add_folio`: the sequence a folio being added joins.
    fn lru_gen_add_seq(mm: &Mm, g: &LruGen, pfn: Pfn, reclaiming: bool) -> u64 {
        lrugen::lru_gen_add_seq(mm, g, pfn, reclaiming)
    }
    /// `sort_folio`'s "protected" test.
    fn sort_folio_protects(tier: usize, tier_idx: usize, _refs: u32) -> bool {
        tier > tier_idx
    }
    /// `lru_gen_refault` on a recent refault with `refs` (counter + workingset from the
    /// token): protect it? Returns whether it did (counted as WORKINGSET_RESTORE).
    fn lru_gen_refault_protect(mm: &mut Mm, pfn: Pfn, in_fault: bool, refs: u32) -> bool {
        workingset::refault_set_workingset(mm, pfn, in_fault, refs)
    }
    /// `lru_gen_add_folio` of a folio with PG_active: what happens to its reference bits
    /// besides PG_active being cleared. v6.6 keeps them.
    fn lru_gen_add_active_refs(_mm: &mut Mm, _pfn: Pfn) {}
    /// `lru_gen_look_around` without a walk, before `folio_activate` of a young neighbour
    /// in another generation. v6.6 does nothing else.
    fn look_around_before_activate(_mm: &mut Mm, _pfn: Pfn) {}
    /// `should_abort_scan`'s kswapd stop above the high watermarks. v6.6's was only
    /// `nr_reclaimed >= nr_to_reclaim` (the stop came with 5095a2b23987).
    const KSWAPD_STOPS_AT_HIGH_WMARK: bool = false;
    /// `set_initial_priority`'s lower clamp: v6.6 clamps to [0, DEF_PRIORITY].
    const MIN_INITIAL_PRIORITY: i32 = 0;
    /// `shrink_one` before reclaiming (v6.6: a memcg too small to help is not reclaimed).
    fn shrink_one_skip(sizable: bool, seg: Seg, below_min: bool, below_low: bool) -> Option<MemcgLruOp> {
        eviction::shrink_one_skip(sizable, seg, below_min, below_low)
    }
    /// `shrink_one` after reclaiming (v6.6: `success ? MEMCG_LRU_YOUNG : 0`).
    fn shrink_one_op(success: bool, _sizable: bool, _seg: Seg) -> MemcgLruOp {
        eviction::shrink_one_op(success)
    }
    /// `shrink_many` reads `get_memcg_gen(seq)` again at each `restart` (v6.6).
    const SHRINK_MANY_REREADS_GEN: bool = true;
    /// `sort_folio` moves dirty and writeback folios to `min_seq + 1` with PG_reclaim
    /// (v6.6 – v6.15; dropped by 6.12.114's "use the common routine for dirty/writeback
    /// reactivation").
    const SORT_FOLIO_WAITS_FOR_WRITEBACK: bool = true;
    /// `try_to_shrink_lruvec` wakes the flushers (not in v6.6).
    const WAKES_FLUSHERS: bool = false;
}

/// v6.6 as released.
pub struct Released;
impl V66Hooks for Released {
    const BASE: &'static str = "";
}

/// The v6.6 base with the override set `H` (`Released`: none).
pub struct V66<H: V66Hooks>(PhantomData<H>);

impl<H: V66Hooks> V66<H> {
    pub fn new() -> Self {
        V66(PhantomData)
    }
}

impl<H: V66Hooks> Default for V66<H> {
    fn default() -> Self {
        Self::new()
    }
}

/// `mglru@6.6`.
pub type Mglru66 = V66<Released>;
/// `mglru+fix-underprotected-page-cache`.
pub type Mglru66Fix = V66<fix_underprotected_page_cache::FixUnderprotectedPageCache>;

impl<H: V66Hooks> MglruVariant for V66<H> {
    const BASE: &'static str = H::BASE;
    fn lru_gen_eviction(&mut self, mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn) -> u64 {
        workingset::lru_gen_eviction(mm, lrugens, pfn)
    }
    fn lru_gen_refault(&mut self, mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn, shadow: u64) -> bool {
        workingset::lru_gen_refault::<H>(mm, lrugens, pfn, shadow)
    }
    fn lru_gen_inc_refs(mm: &mut Mm, pfn: Pfn) {
        lrugen::folio_inc_refs(mm, pfn)
    }
    fn lru_gen_add_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, reclaiming: bool) {
        let seq = H::lru_gen_add_seq(mm, g, pfn, reclaiming);
        if mm.frames.test(pfn, pg::ACTIVE) {
            H::lru_gen_add_active_refs(mm, pfn);
        }
        super::lrugen::lru_gen_add_folio_at(mm, g, lv, pfn, seq, reclaiming);
    }
    /// v6.6 and 6.12's `get_pfn_folio` does not test the generation: look-around and the
    /// walk also clear the young bit of an isolated folio (and set its PG_referenced). It
    /// drops an anon folio without `can_swap` ("file VMAs can contain anon pages from
    /// COW"): the look-around of a file folio leaves its anon neighbours alone.
    #[inline]
    fn get_pfn_folio_flags_ok(flags: u32, can_swap: bool) -> bool {
        can_swap || flags & pg::SWAPBACKED == 0
    }
    fn walk_update_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, new_gen: usize, walk: bool) {
        lrugen::walk_update_folio::<H>(mm, g, lv, pfn, new_gen, walk)
    }
    fn inc_min_seq(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, ty: usize, swappiness: u32) {
        eviction::inc_min_seq(mm, g, lv, ty, swappiness)
    }
    fn should_run_aging(g: &LruGen, swappiness: u32) -> (bool, u64) {
        eviction::should_run_aging(g, swappiness)
    }
    fn try_to_inc_min_seq(mm: &Mm, g: &mut LruGen, swappiness: u32) -> bool {
        eviction::try_to_inc_min_seq(mm, g, swappiness)
    }
    fn type_to_scan(g: &LruGen, swappiness: u32) -> (usize, Option<usize>) {
        pid::type_to_scan(g, swappiness)
    }
    fn get_tier_idx(g: &LruGen, ty: usize) -> usize {
        pid::get_tier_idx(g, ty)
    }
    fn sort_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, tier_idx: usize, _nr: &mut crate::vmscan::ScanNr) -> bool {
        eviction::sort_folio::<H>(mm, g, lv, pfn, tier_idx)
    }
    fn isolate_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn) {
        eviction::isolate_folio(mm, g, lv, pfn)
    }
    fn folio_check_references(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, sc: &mut ScanControl) -> FolioReferences {
        eviction::check_references::<Self>(mm, g, lv, pfn, sc)
    }
    fn rejected_folio(mm: &mut Mm, _g: &LruGen, pfn: Pfn, skip_retry: bool) -> bool {
        eviction::rejected_folio(mm, pfn, skip_retry)
    }
    // The three other December 2023 fixes and v6.10's clamp: v6.6's unless `H` has them.
    const KSWAPD_STOPS_AT_HIGH_WMARK: bool = H::KSWAPD_STOPS_AT_HIGH_WMARK;
    const MIN_INITIAL_PRIORITY: i32 = H::MIN_INITIAL_PRIORITY;
    fn shrink_one_skip(sizable: bool, seg: Seg, below_min: bool, below_low: bool) -> Option<MemcgLruOp> {
        H::shrink_one_skip(sizable, seg, below_min, below_low)
    }
    fn shrink_one_op(success: bool, sizable: bool, seg: Seg) -> MemcgLruOp {
        H::shrink_one_op(success, sizable, seg)
    }
    const SHRINK_MANY_REREADS_GEN: bool = H::SHRINK_MANY_REREADS_GEN;
    const WAKES_FLUSHERS: bool = H::WAKES_FLUSHERS;
    /// `lruvec_is_reclaimable` (v6.6 and 6.12): the birth of file's `min_seq` ("see the
    /// comment on lru_gen_folio").
    fn min_ttl_seq(g: &LruGen, _swappiness: u32) -> u64 {
        g.min_seq[super::lrugen::LRU_GEN_FILE]
    }
}
