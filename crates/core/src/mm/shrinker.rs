//! The slab shrinkers reclaim runs beside the LRUs (mm/shrinker.c v6.12, `shrink_slab`,
//! `do_shrink_slab`). The model has two:
//! - the workingset shadow-node shrinker (mm/workingset.c `workingset_shadow_shrinker`:
//!   SHRINKER_NUMA_AWARE | SHRINKER_MEMCG_AWARE, `seeks = 0`, default batch), whose
//!   objects are the xarray nodes holding only shadow entries
//!   ([`super::workingset::ShadowNodes`]). Later kernels (the torvalds/linux
//!   mm/workingset.c after list_lru's per-list locks) have the same `count_shadow_nodes`,
//!   `shadow_lru_isolate` and `seeks = 0`; only the locking changed;
//! - the THP deferred split shrinker (mm/huge_memory.c 6.12 `thp-deferred_split`:
//!   SHRINKER_NUMA_AWARE | SHRINKER_MEMCG_AWARE | SHRINKER_NONSLAB, `shrinker_alloc`'s
//!   `seeks = DEFAULT_SEEKS`, default batch), whose objects are the THPs on a memcg's
//!   deferred split queue ([`crate::thp::split::DeferredSplitQueues`]). Its queue is the
//!   memcg's whatever the node asked, as in the kernel.
//!
//! Callers (mm/vmscan.c 6.12): `shrink_node_memcgs` after each memcg's `shrink_lruvec`
//! (classic, and MGLRU's memcg reclaim), and MGLRU's `shrink_one` after
//! `try_to_shrink_lruvec` (root reclaim), both with the reclaim's `sc->priority`.
//! Abstraction: shrinking costs no simulated CPU time.

use super::memcontrol::MemcgId;
use super::vmstat::Ev;
use super::workingset::XA_CHUNK_SHIFT;
use super::Mm;
use reclaimlab_trace::PAGE_SHIFT;

/// `SHRINK_BATCH`.
pub const SHRINK_BATCH: u64 = 128;

/// `DEFAULT_SEEKS` (include/linux/shrinker.h), what `shrinker_alloc` gives a shrinker.
pub const DEFAULT_SEEKS: u64 = 2;

/// What one `do_shrink_slab` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShrinkResult {
    /// Objects asked of `scan_objects` (what SLABS_SCANNED counts).
    pub scanned: u64,
    /// Objects freed.
    pub freed: u64,
    /// The shrinker's `nr_deferred` afterwards.
    pub next_deferred: u64,
}

/// `do_shrink_slab` (mm/shrinker.c 6.12) for `freeable` > 0 objects (the count), the
/// deferred work `nr` taken from the shrinker (`xchg_nr_deferred`), `priority`, the
/// shrinker's `seeks` and batch: `delta` is `freeable / 2` for `seeks == 0`, else
/// `(freeable >> priority) * 4 / seeks`; `total_scan = (nr >> priority) + delta`, at most
/// `2 * freeable`, scanned in batches while `total_scan >= batch || total_scan >=
/// freeable`; what is left of `nr + delta` is deferred, at most `2 * freeable`. `scan`
/// is `scan_objects` with `nr_to_scan`, returning the objects freed, or `None` for
/// SHRINK_STOP (the batch is not counted as scanned).
pub fn do_shrink_slab(freeable: u64, nr: u64, priority: i32, seeks: u64, batch: u64, mut scan: impl FnMut(u64) -> Option<u64>) -> ShrinkResult {
    debug_assert!(freeable > 0);
    let delta = ((freeable >> priority) * 4).checked_div(seeks).unwrap_or(freeable / 2);
    let mut total_scan = ((nr >> priority) + delta).min(2 * freeable);
    let (mut scanned, mut freed) = (0, 0);
    while total_scan >= batch || total_scan >= freeable {
        let nr_to_scan = batch.min(total_scan);
        let Some(f) = scan(nr_to_scan) else { break };
        freed += f;
        total_scan -= nr_to_scan;
        scanned += nr_to_scan;
    }
    let next_deferred = (nr + delta).saturating_sub(scanned).min(2 * freeable);
    ShrinkResult { scanned, freed, next_deferred }
}

/// `count_shadow_nodes` (mm/workingset.c 6.12) for list `lv` (a memcg and node): None
/// for SHRINK_EMPTY, else the nodes above `max_nodes = pages >> (XA_CHUNK_SHIFT - 3)`,
/// where `pages` is the memcg's LRU pages on the node plus its slab pages (NR_SLAB_*_B >>
/// PAGE_SHIFT), both `lruvec_page_state_local` as of the last statistics flush. The
/// model's slab is the allocated xarray nodes alone (no dentries or inodes). With memcg enabled
/// `sc->memcg` is never NULL in reclaim (the root memcg for its own pages), so the
/// `node_present_pages` branch is not taken.
pub fn count_shadow_nodes(mm: &Mm, lv: u32) -> Option<u64> {
    let sn = &mm.shadow_nodes;
    let nodes = sn.list_len(lv);
    if nodes == 0 {
        return None;
    }
    let l = &mm.lruvecs[lv as usize];
    let pages = l.stat.size_local.iter().sum::<u64>() + (l.stat.slab_reclaimable_b >> PAGE_SHIFT);
    let max_nodes = pages >> (XA_CHUNK_SHIFT - 3);
    Some(nodes.saturating_sub(max_nodes))
}

/// `scan_shadow_nodes` → `list_lru_shrink_walk_irq` with `shadow_lru_isolate`: up to
/// `nr_to_scan` nodes from the head of list `lv`, each freed with its shadow entries
/// (`xa_delete_node`) and counted as WORKINGSET_NODERECLAIM on its lruvec
/// (`__inc_lruvec_kmem_state`: the global counter and the memcg's memory.stat). Returns
/// the nodes freed.
pub fn scan_shadow_nodes(mm: &mut Mm, lv: u32, nr_to_scan: u64) -> u64 {
    let memcg = mm.lruvecs[lv as usize].memcg;
    let mut freed = 0;
    while freed < nr_to_scan {
        let Some((slots, swap)) = mm.shadow_nodes.isolate_head(lv) else { break };
        if swap {
            // A swap-cache node's slots hold the shadows of the pages swapped out to them
            // (a free slot's is 0 already).
            mm.swap.clear_node_shadows((slots.start >> crate::mm::workingset::XA_CHUNK_SHIFT) as usize);
            mm.pages.clear_swap_shadows(slots);
        } else {
            for page in slots {
                mm.pages.set_shadow(page as usize, 0);
            }
            mm.obj_uncharge(lv, crate::mm::workingset::XA_NODE_CHARGED_BYTES);
        }
        mm.vmstat.count(Ev::WorkingsetNodereclaim, 1);
        mm.count_memcg_events(memcg, Ev::WorkingsetNodereclaim, 1);
        freed += 1;
    }
    freed
}

/// `shrink_slab(gfp, nid, memcg, priority)` (mm/shrinker.c 6.12): each shrinker for
/// (`memcg`, `nid`), whose `nr_deferred` is per memcg and node
/// (`xchg_nr_deferred_memcg`; the root's too, since `sc->memcg` is the root memcg there).
/// Counts SLABS_SCANNED.
pub fn shrink_slab<P: crate::policy::ReclaimPolicy>(mm: &mut Mm, p: &mut P, nid: u16, memcg: MemcgId, priority: i32) {
    let lv = mm.lruvec_id(memcg, nid);
    if let Some(freeable) = count_shadow_nodes(mm, lv).filter(|&f| f > 0) {
        let nr = std::mem::take(&mut mm.shadow_nodes.nr_deferred[lv as usize]);
        let r = do_shrink_slab(freeable, nr, priority, 0, SHRINK_BATCH, |n| Some(scan_shadow_nodes(mm, lv, n)));
        mm.vmstat.count(Ev::SlabsScanned, r.scanned);
        mm.shadow_nodes.nr_deferred[lv as usize] += r.next_deferred;
    }
    // deferred_split_count: the memcg's split_queue_len.
    let freeable = mm.thp.deferred_split.len(memcg);
    if freeable > 0 {
        let deferred = &mut mm.thp.deferred_split.nr_deferred;
        if deferred.len() <= lv as usize {
            deferred.resize(lv as usize + 1, 0);
        }
        let nr = std::mem::take(&mut deferred[lv as usize]);
        let r = do_shrink_slab(freeable, nr, priority, DEFAULT_SEEKS, SHRINK_BATCH, |n| crate::thp::split::deferred_split_scan(mm, p, memcg, n));
        mm.vmstat.count(Ev::SlabsScanned, r.scanned);
        mm.thp.deferred_split.nr_deferred[lv as usize] += r.next_deferred;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed `do_shrink_slab` runs of a `seeks = 0` shrinker with batch 128.
    #[test]
    fn do_shrink_slab_arithmetic() {
        let mut calls = Vec::new();
        // freeable 1000, nothing deferred, priority 12: delta 500, total_scan 500 →
        // batches 128, 128, 128, then 116 < 128 and < 1000 stops; scanned 384;
        // deferred 0 + 500 - 384 = 116.
        let r = do_shrink_slab(1000, 0, 12, 0, SHRINK_BATCH, |n| {
            calls.push(n);
            Some(n)
        });
        assert_eq!(calls, [128, 128, 128]);
        assert_eq!(r, ShrinkResult { scanned: 384, freed: 384, next_deferred: 116 });

        // Deferred work is shifted by the priority: nr 8192 at priority 4 → 512, plus
        // delta 50 (freeable 100) = 562, capped at 2 * freeable = 200: one batch of 128,
        // then 72 is below both the batch and freeable. Deferred 8192 + 50 - 128, capped
        // at 200.
        calls.clear();
        let r = do_shrink_slab(100, 8192, 4, 0, SHRINK_BATCH, |n| {
            calls.push(n);
            Some(n)
        });
        assert_eq!(calls, [128]);
        assert_eq!(r, ShrinkResult { scanned: 128, freed: 128, next_deferred: 200 });

        // Fewer objects than a batch: total_scan >= freeable scans them all at once.
        // freeable 10, nr 40 at priority 1 → 20 + 5 = 25, capped at 20 >= 10: scan 20,
        // then 0 stops; deferred 40 + 5 - 20 = 25, capped at 20.
        calls.clear();
        let r = do_shrink_slab(10, 40, 1, 0, SHRINK_BATCH, |n| {
            calls.push(n);
            Some(3)
        });
        assert_eq!(calls, [20]);
        assert_eq!(r, ShrinkResult { scanned: 20, freed: 3, next_deferred: 20 });

        // freeable 1 at DEF_PRIORITY: delta 0, total_scan 0 < 1: nothing; deferred 0.
        let r = do_shrink_slab(1, 0, 12, 0, SHRINK_BATCH, |_| unreachable!());
        assert_eq!(r, ShrinkResult { scanned: 0, freed: 0, next_deferred: 0 });

        // A seeks = 2 shrinker (the classic formula): freeable 1 << 16 at priority 12 →
        // delta (16 * 4) / 2 = 32 < 128: nothing scanned, all deferred.
        let r = do_shrink_slab(1 << 16, 0, 12, 2, SHRINK_BATCH, |_| unreachable!());
        assert_eq!(r, ShrinkResult { scanned: 0, freed: 0, next_deferred: 32 });

        // SHRINK_STOP ends the loop and its batch is not counted: freeable 400 at
        // priority 0 → delta 800, capped at 800; the first batch frees 5, the second stops.
        calls.clear();
        let r = do_shrink_slab(400, 0, 0, 2, SHRINK_BATCH, |n| {
            calls.push(n);
            (calls.len() == 1).then_some(5)
        });
        assert_eq!(calls, [128, 128]);
        assert_eq!(r, ShrinkResult { scanned: 128, freed: 5, next_deferred: 672 });
    }
}
