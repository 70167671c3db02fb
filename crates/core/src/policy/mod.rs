//! Reclaim policy models behind one interface.
//!
//! A policy owns its list heads and private per-lruvec state and implements the
//! kernel's policy-specific hook points; the shared machinery (fault path, eviction in
//! `shrink_folio_list`, the reclaim drivers, memcg protection) lives in `vmscan` and
//! `sim`. Each hook says when it runs. Variants of a policy (patches) live in their
//! own files beside the mainline model and override only the hooks the patch changes.
//!
//! Kernel versions are bases; a patch is one override set against one of them: each base
//! has a hook trait whose defaults are that kernel's code (`classic::ClassicVariant` and
//! `mglru::MglruVariant`: v6.15; `mglru::v6_6::V66Hooks`: v6.6), and a patch implements
//! its base's trait overriding only what it changes. [`Based`] reads the base off the
//! type, so the registry row's base is the model the builder overrides.

pub mod cache;
pub mod classic;
pub mod ext;
pub mod mglru;

use crate::mm::lruvec::LruvecId;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;
use crate::vmscan::{FolioReferences, ScanControl};

/// The registry name of the model a policy type is a one-level diff against: the base
/// whose hook trait it implements, or "" for a kernel version (its own base).
pub trait Based {
    const BASE: &'static str;
}

pub trait ReclaimPolicy: Send + 'static {
    /// Set up list heads and private state for a new lruvec (machine build, and
    /// whenever a trace names a new cgroup).
    fn init_lruvec(&mut self, mm: &mut Mm, lv: LruvecId);

    /// A resident file page is read/written through a syscall:
    /// `folio_mark_accessed` (A.3). Mapped accesses never call this.
    fn folio_mark_accessed(&mut self, mm: &mut Mm, pfn: Pfn);

    /// A page is being read back in (page cache or swap) and its slot held a shadow:
    /// `workingset_refault` (B.3). Runs before [`Self::folio_add_lru`]. Returns true
    /// when the folio was active before eviction (`PG_workingset` restored), which
    /// makes the read count as a memory stall (PSI).
    fn workingset_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: u64) -> bool;

    /// A newly allocated folio joins the LRU (`folio_add_lru`, A.2).
    fn folio_add_lru(&mut self, mm: &mut Mm, pfn: Pfn);

    /// Eviction: `workingset_eviction` — advance the clock and return the shadow entry
    /// to store in the page's slot. Runs from `shrink_folio_list` before the frame is
    /// freed.
    fn workingset_eviction(&mut self, mm: &mut Mm, pfn: Pfn) -> u64;

    /// `folio_check_references` for an isolated folio in `shrink_folio_list` (A.7).
    fn folio_check_references(&mut self, mm: &mut Mm, pfn: Pfn, sc: &mut ScanControl) -> FolioReferences;

    /// Reclaim from one node on behalf of `sc` (the body of `shrink_node`, A.4): called
    /// by kswapd, direct reclaim and memcg reclaim through `vmscan::shrink_node`.
    fn shrink_node(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl);

    /// `kswapd_age_node`: kswapd's aging before each `shrink_node`.
    fn kswapd_age_node(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl);

    /// `folio_isolate_lru`: take a folio off its LRU list for an out-of-reclaim caller
    /// (DAMOS pageout). False when it is not on an LRU list.
    fn folio_isolate_lru(&mut self, mm: &mut Mm, pfn: Pfn) -> bool;

    /// `folio_putback_lru`: return an isolated folio to the LRU (`folio_add_lru` of a
    /// folio that keeps its flags).
    fn folio_putback_lru(&mut self, mm: &mut Mm, pfn: Pfn);

    /// `folio_deactivate` (`lru_deactivate`): an active or referenced folio moves to the
    /// inactive list, `PG_active`/`PG_referenced` cleared (DAMOS lru_deprio and cold).
    fn folio_deactivate(&mut self, mm: &mut Mm, pfn: Pfn);

    /// `folio_rotate_reclaimable` → `lru_move_tail` (mm/swap.c 6.12): a folio reclaim
    /// marked PG_reclaim finished writeback clean: to the tail of the inactive list (the
    /// oldest generation), PG_active cleared, PGROTATED. Called only for a folio on an
    /// LRU list. Reference-cache policies have no list order to change.
    fn folio_rotate_reclaimable(&mut self, _mm: &mut Mm, _pfn: Pfn) {}

    /// `lru_add_split_folio` (mm/huge_memory.c 6.12) for a THP split while its head is
    /// on the LRU: `tail`, which already carries the head's flags, goes just before the
    /// head on the head's list (`list_add_tail(&new_folio->lru, &folio->lru)`), so
    /// reclaim meets the head first. Its page was counted with the head's 512 already.
    fn lru_add_split_folio(&mut self, mm: &mut Mm, head: Pfn, tail: Pfn);

    /// Check the policy's list structure against `mm` (tests).
    fn check_invariants(&self, mm: &Mm) -> Result<(), String>;

    /// Metrics of the policy's own machinery, reported after the run's metrics.
    fn metrics(&self, _mm: &Mm) -> Vec<(String, f64)> {
        Vec::new()
    }

    /// A failure of an out-of-tree policy's hook (policy/ext/), taken by the run loop
    /// after each batch of accesses. Built-in policies never fail.
    #[inline(always)]
    fn take_error(&mut self) -> Option<crate::error::Error> {
        None
    }
}

/// A policy chosen by name at run time (a program's machine, sim/process.rs; a trace's
/// engine is monomorphised instead, so its hot loop inlines the hooks).
impl ReclaimPolicy for Box<dyn ReclaimPolicy> {
    fn init_lruvec(&mut self, mm: &mut Mm, lv: LruvecId) {
        (**self).init_lruvec(mm, lv)
    }
    fn folio_mark_accessed(&mut self, mm: &mut Mm, pfn: Pfn) {
        (**self).folio_mark_accessed(mm, pfn)
    }
    fn workingset_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: u64) -> bool {
        (**self).workingset_refault(mm, pfn, shadow)
    }
    fn folio_add_lru(&mut self, mm: &mut Mm, pfn: Pfn) {
        (**self).folio_add_lru(mm, pfn)
    }
    fn workingset_eviction(&mut self, mm: &mut Mm, pfn: Pfn) -> u64 {
        (**self).workingset_eviction(mm, pfn)
    }
    fn folio_check_references(&mut self, mm: &mut Mm, pfn: Pfn, sc: &mut ScanControl) -> FolioReferences {
        (**self).folio_check_references(mm, pfn, sc)
    }
    fn shrink_node(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl) {
        (**self).shrink_node(mm, node, sc)
    }
    fn kswapd_age_node(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl) {
        (**self).kswapd_age_node(mm, node, sc)
    }
    fn folio_isolate_lru(&mut self, mm: &mut Mm, pfn: Pfn) -> bool {
        (**self).folio_isolate_lru(mm, pfn)
    }
    fn folio_putback_lru(&mut self, mm: &mut Mm, pfn: Pfn) {
        (**self).folio_putback_lru(mm, pfn)
    }
    fn folio_deactivate(&mut self, mm: &mut Mm, pfn: Pfn) {
        (**self).folio_deactivate(mm, pfn)
    }
    fn folio_rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        (**self).folio_rotate_reclaimable(mm, pfn)
    }
    fn lru_add_split_folio(&mut self, mm: &mut Mm, head: Pfn, tail: Pfn) {
        (**self).lru_add_split_folio(mm, head, tail)
    }
    fn check_invariants(&self, mm: &Mm) -> Result<(), String> {
        (**self).check_invariants(mm)
    }
    fn metrics(&self, mm: &Mm) -> Vec<(String, f64)> {
        (**self).metrics(mm)
    }
    fn take_error(&mut self) -> Option<crate::error::Error> {
        (**self).take_error()
    }
}
