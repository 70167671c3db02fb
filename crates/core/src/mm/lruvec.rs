//! `struct lruvec`: the reclaim state of one (node, memcg) pair that every policy
//! shares — LRU sizes, the anon/file cost accumulators, the workingset clock and the
//! refault snapshot (spec A.1, B.2).
//!
//! Sizes come in two views as in the kernel: `lru_size` is the lruvec's own
//! (`lruvec_lru_size`, used by `get_scan_count`), `hier_size` includes descendant
//! memcgs (`lruvec_page_state`, used by `inactive_is_low` and the refault test).
//! Abstraction: a single zone per node for LRU sizes (spec A.9 allows it).

/// `enum lru_list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum LruList {
    InactiveAnon = 0,
    ActiveAnon = 1,
    InactiveFile = 2,
    ActiveFile = 3,
    Unevictable = 4,
}

pub const NR_LRU_LISTS: usize = 5;
/// `LRU_ACTIVE` offset.
pub const LRU_ACTIVE: usize = 1;
/// `LRU_FILE` base.
pub const LRU_FILE: usize = 2;
/// `for_each_evictable_lru` order.
pub const EVICTABLE_LRUS: [LruList; 4] = [LruList::InactiveAnon, LruList::ActiveAnon, LruList::InactiveFile, LruList::ActiveFile];

impl LruList {
    pub fn from_index(i: usize) -> LruList {
        match i {
            0 => LruList::InactiveAnon,
            1 => LruList::ActiveAnon,
            2 => LruList::InactiveFile,
            3 => LruList::ActiveFile,
            4 => LruList::Unevictable,
            _ => panic!("lru list index {i} out of range"),
        }
    }
    /// `is_file_lru`.
    pub fn is_file(self) -> bool {
        matches!(self, LruList::InactiveFile | LruList::ActiveFile)
    }
    /// `is_active_lru`.
    pub fn is_active(self) -> bool {
        matches!(self, LruList::ActiveAnon | LruList::ActiveFile)
    }
    /// The list of a type and activeness: `LRU_BASE + LRU_FILE*file + active`.
    pub fn of(file: bool, active: bool) -> LruList {
        LruList::from_index(LRU_FILE * file as usize + active as usize)
    }
}

pub type LruvecId = u32;

#[derive(Clone, Debug)]
pub struct Lruvec {
    pub node: u16,
    pub memcg: u16,
    /// The parent memcg's lruvec on the same node (None for the root memcg).
    pub parent: Option<LruvecId>,
    pub lru_size: [u64; NR_LRU_LISTS],
    pub hier_size: [u64; NR_LRU_LISTS],
    pub anon_cost: u64,
    pub file_cost: u64,
    /// `nonresident_age`: evictions + activations, in pages (B.2).
    pub nonresident_age: u64,
    /// `lruvec->refaults[ANON_AND_FILE]`, snapshot of WORKINGSET_ACTIVATE_* (A.1).
    pub refaults: [u64; 2],
    /// Hierarchical WORKINGSET_ACTIVATE_{ANON,FILE} state of this lruvec.
    pub workingset_activate: [u64; 2],
    /// What `lruvec_page_state` returns: the list sizes and WORKINGSET_ACTIVATE_* as of
    /// the last memcg statistics flush ([`crate::mm::Mm::flush_memcg_stats_due`]).
    pub stat: LruvecStat,
    /// `LRUVEC_CGROUP_CONGESTED`: cgroup reclaim of this (target) lruvec found every dirty
    /// folio it met under writeback and marked for immediate reclaim (mm/vmscan.c 6.12).
    pub cgroup_congested: bool,
    /// `LRUVEC_NODE_CONGESTED`: kswapd found the same on this node (set on the root lruvec).
    pub node_congested: bool,
    /// Bytes of the buffer heads of its folios (its NR_SLAB_RECLAIMABLE_B beside the
    /// xarray nodes: [`crate::mm::Mm::attach_buffers`]).
    pub buffer_heads_b: u64,
}

/// A lruvec's memcg statistics as reclaim reads them (`pn->lruvec_stats->state`), which
/// the rstat flush refreshes (mm/memcontrol.c).
#[derive(Clone, Copy, Debug, Default)]
pub struct LruvecStat {
    pub size: [u64; NR_LRU_LISTS],
    /// The lruvec's own list sizes (`lruvec_page_state_local`).
    pub size_local: [u64; NR_LRU_LISTS],
    /// Its own NR_SLAB_RECLAIMABLE_B: the xarray nodes charged to it (mm/workingset.rs)
    /// and its folios' buffer heads.
    pub slab_reclaimable_b: u64,
    pub workingset_activate: [u64; 2],
}

impl Lruvec {
    pub fn new(node: u16, memcg: u16, parent: Option<LruvecId>) -> Self {
        Lruvec {
            node,
            memcg,
            parent,
            lru_size: [0; NR_LRU_LISTS],
            hier_size: [0; NR_LRU_LISTS],
            anon_cost: 0,
            file_cost: 0,
            nonresident_age: 0,
            refaults: [0; 2],
            workingset_activate: [0; 2],
            stat: LruvecStat::default(),
            buffer_heads_b: 0,
            cgroup_congested: false,
            node_congested: false,
        }
    }

    /// Its hierarchical list sizes as the refault tests read them (`lruvec_page_state`:
    /// as of the last statistics flush).
    pub fn workingset_lists(&self) -> crate::mm::workingset::WorkingsetLists {
        crate::mm::workingset::WorkingsetLists {
            inactive_anon: self.stat.size[LruList::InactiveAnon as usize],
            active_anon: self.stat.size[LruList::ActiveAnon as usize],
            inactive_file: self.stat.size[LruList::InactiveFile as usize],
            active_file: self.stat.size[LruList::ActiveFile as usize],
        }
    }
}

/// `inactive_is_low` (mm/vmscan.c, spec A.6): with `gb` the list pair's size in GiB,
/// `inactive_ratio = gb ? int_sqrt(10 * gb) : 1`; low iff `inactive * ratio < active`.
pub fn inactive_is_low(inactive: u64, active: u64) -> bool {
    use super::watermarks::int_sqrt;
    let gb = (inactive + active) >> (30 - reclaimlab_trace::PAGE_SHIFT);
    let inactive_ratio = if gb != 0 { int_sqrt(10 * gb) } else { 1 };
    inactive * inactive_ratio < active
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 18; // pages

    /// The ratios of the source comment (spec A.6): 1 GB→3, 10 GB→10, 100 GB→31,
    /// 1 TB→101, 10 TB→320, below 1 GB → 1. With ratio r, a list pair is balanced when
    /// inactive * r >= active: check both sides of that boundary at each size.
    #[test]
    fn inactive_ratio_table() {
        for (gib, r) in [(0u64, 1u64), (1, 3), (10, 10), (100, 31), (1024, 101), (10240, 320)] {
            let total = if gib == 0 { GIB / 10 } else { gib * GIB };
            // largest inactive that is still low: inactive * r < total - inactive
            let boundary = total.div_ceil(r + 1);
            assert!(!inactive_is_low(boundary, total - boundary), "{gib} GiB at {boundary}");
            assert!(inactive_is_low(boundary - 1, total - boundary + 1), "{gib} GiB below {boundary}");
        }
    }

    #[test]
    fn inactive_is_low_boundaries() {
        // 100 MiB: ratio 1 → low iff inactive < active
        assert!(inactive_is_low(12799, 12801));
        assert!(!inactive_is_low(12800, 12800));
        // 4 GiB: gb = 4, ratio int_sqrt(40) = 6 → 1/7 inactive is the target
        let total = 4 * GIB;
        let inactive = total / 7; // 149796, active 898780: 149796*6 = 898776 < 898780
        assert!(inactive_is_low(inactive, total - inactive));
        assert!(!inactive_is_low(inactive + 1, total - inactive - 1));
    }
}
