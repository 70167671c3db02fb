//! The classic (non-MGLRU) active/inactive LRU policy family (spec A, B).
//!
//! - [`lru`]: the four LRU lists plus unevictable per lruvec, add/del/isolate/putback.
//! - [`vmscan`]: `prepare_scan_control`, `get_scan_count`, `shrink_lruvec`,
//!   `shrink_active_list`, `shrink_inactive_list`, `folio_check_references`.
//! - [`mainline`]: the workingset hooks of v6.15 (`workingset_refault`,
//!   `workingset_eviction`, `workingset_activation`, aging on putback) — the points
//!   patches change. A variant implements [`ClassicVariant`] overriding only what its
//!   patch changes; everything else is mainline.

pub mod lru;
pub mod mainline;
pub mod refault_distance_rfc_v3;
pub mod vmscan;

use crate::mm::lists::ListHead;
use crate::mm::lruvec::{LruvecId, NR_LRU_LISTS};
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;
use crate::vmscan::{FolioReferences, ScanControl};

/// The hook points of the classic family that patches change. Default methods are
/// the mainline (v6.15) behaviour, in [`mainline`]: a type implementing this trait is a
/// patch on `classic@6.15`.
pub trait ClassicVariant: Send + 'static {
    /// The model this one overrides ([`crate::policy::Based`]); mainline itself says "".
    const BASE: &'static str = "classic@6.15";
    /// `workingset_refault` (B.3). Returns whether `PG_workingset` was restored.
    fn workingset_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: u64) -> bool {
        mainline::workingset_refault(mm, pfn, shadow)
    }
    /// `workingset_eviction` (B.1/B.2): returns the shadow.
    fn workingset_eviction(&mut self, mm: &mut Mm, pfn: Pfn) -> u64 {
        mainline::workingset_eviction(mm, pfn)
    }
    /// `workingset_activation`: a `folio_mark_accessed` activation (B.2 item 2).
    fn workingset_activation(&mut self, mm: &mut Mm, lv: LruvecId, nr_pages: u64) {
        mainline::workingset_activation(mm, lv, nr_pages)
    }
    /// `move_folios_to_lru` put a folio back on an active list (B.2 item 3).
    fn putback_active(&mut self, mm: &mut Mm, lv: LruvecId, nr_pages: u64) {
        mainline::putback_active(mm, lv, nr_pages)
    }
}

/// Mainline v6.15: every hook as the kernel has it.
pub struct Mainline;
impl ClassicVariant for Mainline {
    const BASE: &'static str = "";
}

pub struct Classic<V: ClassicVariant> {
    pub variant: V,
    /// First list head of each lruvec (its five lists follow).
    heads: Vec<ListHead>,
    /// Reused isolation buffer (no allocation per reclaim batch).
    isolated: Vec<Pfn>,
    /// Per node: where kswapd's `shrink_node` stopped to let the workload run.
    kswapd_resume: Vec<Option<vmscan::Resume>>,
}

impl<V: ClassicVariant> Classic<V> {
    pub fn new(variant: V) -> Self {
        Classic { variant, heads: Vec::new(), isolated: Vec::with_capacity(crate::vmscan::SWAP_CLUSTER_MAX as usize), kswapd_resume: Vec::new() }
    }

    #[inline(always)]
    pub(crate) fn head(&self, lv: LruvecId, lru: usize) -> ListHead {
        ListHead(self.heads[lv as usize].0 + lru as u32)
    }
}

impl<V: ClassicVariant> crate::policy::Based for Classic<V> {
    const BASE: &'static str = V::BASE;
}

impl<V: ClassicVariant> ReclaimPolicy for Classic<V> {
    fn init_lruvec(&mut self, mm: &mut Mm, lv: LruvecId) {
        debug_assert_eq!(lv as usize, self.heads.len());
        self.heads.push(mm.lists.alloc_heads(NR_LRU_LISTS as u32));
    }

    fn folio_mark_accessed(&mut self, mm: &mut Mm, pfn: Pfn) {
        lru::folio_mark_accessed(self, mm, pfn)
    }

    fn workingset_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: u64) -> bool {
        self.variant.workingset_refault(mm, pfn, shadow)
    }

    fn folio_add_lru(&mut self, mm: &mut Mm, pfn: Pfn) {
        let lv = mm.folio_lruvec(pfn);
        lru::lruvec_add_folio(self, mm, lv, pfn);
    }

    fn workingset_eviction(&mut self, mm: &mut Mm, pfn: Pfn) -> u64 {
        self.variant.workingset_eviction(mm, pfn)
    }

    fn folio_check_references(&mut self, mm: &mut Mm, pfn: Pfn, sc: &mut ScanControl) -> FolioReferences {
        vmscan::folio_check_references(mm, pfn, sc)
    }

    fn shrink_node(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl) {
        vmscan::shrink_node(self, mm, node, sc)
    }

    fn kswapd_age_node(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl) {
        vmscan::kswapd_age_node(self, mm, node, sc)
    }

    fn folio_isolate_lru(&mut self, mm: &mut Mm, pfn: Pfn) -> bool {
        if !mm.frames.test(pfn, pg::LRU) {
            return false;
        }
        let lv = mm.folio_lruvec(pfn);
        lru::lruvec_del_folio(self, mm, lv, pfn);
        true
    }

    fn folio_putback_lru(&mut self, mm: &mut Mm, pfn: Pfn) {
        let lv = mm.folio_lruvec(pfn);
        lru::lruvec_add_folio(self, mm, lv, pfn);
    }

    fn folio_deactivate(&mut self, mm: &mut Mm, pfn: Pfn) {
        lru::lru_deactivate(self, mm, pfn)
    }

    fn folio_rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        lru::lru_move_tail(self, mm, pfn)
    }

    fn lru_add_split_folio(&mut self, mm: &mut Mm, head: Pfn, tail: Pfn) {
        lru::lru_add_split_folio(self, mm, head, tail)
    }

    fn check_invariants(&self, mm: &Mm) -> Result<(), String> {
        for (lv, _) in self.heads.iter().enumerate() {
            for lru in 0..NR_LRU_LISTS {
                let h = self.head(lv as LruvecId, lru);
                let pages: u64 = mm.lists.iter(h).map(|pfn| mm.folio_nr_pages(pfn)).sum();
                if pages != mm.lruvecs[lv].lru_size[lru] {
                    return Err(format!("lruvec {lv} list {lru}: {pages} pages linked, lru_size {}", mm.lruvecs[lv].lru_size[lru]));
                }
                for pfn in mm.lists.iter(h) {
                    if !mm.frames.test(pfn, pg::LRU) {
                        return Err(format!("pfn {pfn} on lruvec {lv} list {lru} without PG_lru"));
                    }
                    if lru::folio_lru_list(mm, pfn) as usize != lru {
                        return Err(format!("pfn {pfn} on list {lru} but its flags say {:?}", lru::folio_lru_list(mm, pfn)));
                    }
                    if mm.folio_lruvec(pfn) as usize != lv {
                        return Err(format!("pfn {pfn} on lruvec {lv} but charged to lruvec {}", mm.folio_lruvec(pfn)));
                    }
                }
            }
        }
        Ok(())
    }
}
