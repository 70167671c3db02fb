//! The per-CPU page lists as every kernel up to v5.13 ran them (mm/page_alloc.c v5.13), as
//! a diff against 6.12's (pcp.rs): `high` is fixed at six batches
//! (`zone_set_pageset_high_and_batch`), an empty list is refilled with one `batch`
//! (`rmqueue_pcplist` → `rmqueue_bulk(zone, 0, pcp->batch, ...)`, in `Pcp::rmqueue`), a list
//! that reaches `high` gives one `batch` back (`free_unref_page_commit`). Nothing limits the
//! lists while kswapd runs (`ZONE_RECLAIM_ACTIVE` is v5.14's) and nothing decays them
//! (`decay_pcp_high` is v6.7's; with `high_min == high_max` 6.12's decay does nothing).
//! v5.14 split `high` over the node's CPUs from the low watermark (`zone_highsize`); the
//! kernels between v5.14 and v6.6 are not modelled.

use super::{pcp_migratetype, zone_batchsize, Pcp, PerCpuPages};
use crate::mm::lists::ListArena;
use crate::mm::page::Owner;
use crate::mm::page_alloc::{BuddyAllocator, Pfn};

/// `zone_set_pageset_high_and_batch` (v5.13): `(high, batch)` of every CPU's pageset.
/// `fraction` is `vm.percpu_pagelist_fraction` (0 = unset): `high` a fraction of the zone
/// for each CPU, `batch` a quarter of it, at most `PAGE_SHIFT * 8`.
pub(super) fn high_and_batch(managed: u64, fraction: u64) -> (u32, u32) {
    if let Some(high) = managed.checked_div(fraction) {
        let batch = (high / 4).clamp(1, reclaimlab_trace::PAGE_SHIFT as u64 * 8);
        (high as u32, batch as u32)
    } else {
        let batch = zone_batchsize(managed).max(1);
        (6 * batch, batch)
    }
}

/// `free_unref_page_commit` (v5.13): onto the head of this CPU's list; at `high`, one
/// `batch` goes back to the buddy lists (`free_pcppages_bulk`).
pub(super) fn free_unref_page_commit(pcp: &mut Pcp, buddy: &mut BuddyAllocator, lists: &mut ListArena, owner: &mut [Owner], pfn: Pfn) {
    let (zone, mt, cpu) = (buddy.zone_of(pfn), pcp_migratetype(buddy, pfn), pcp.cpu);
    let p: &mut PerCpuPages = pcp.set(zone, cpu);
    p.lists[mt].add_head(pfn);
    p.count += 1;
    if p.count >= p.high_max {
        let batch = p.batch;
        pcp.free_pcppages_bulk(buddy, lists, owner, zone, cpu, batch, mt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::page_alloc::{MigrateType, ZoneSpec, ZoneType};
    use crate::mm::pcp::PcpRules;
    use crate::mm::watermarks;

    #[test]
    fn six_batches_of_high_and_one_batch_in_and_out() {
        let mut lists = ListArena::new(50_000);
        let mut owner = vec![0; 50_000];
        let mut buddy = BuddyAllocator::new(&[ZoneSpec { node: 0, zone_type: ZoneType::Normal, start_pfn: 0, nr_pages: 50_000 }], &mut lists, &mut owner);
        watermarks::setup_per_zone_wmarks(&mut buddy.zones, 1845, 10);
        let mut pcp = Pcp::new(&buddy.zones, 2, 1, 0, PcpRules::V5_13);
        assert_eq!((pcp.sets[0].high_max, pcp.sets[0].batch), (90, 15));
        assert_eq!(high_and_batch(1 << 20, 8), (1 << 17, 96), "a fraction: batch at most PAGE_SHIFT * 8");
        let free0 = buddy.zones[0].free_pages;
        let mut got = vec![];
        for i in 0..200 {
            got.push(pcp.rmqueue(&mut buddy, &mut lists, &mut owner, 0, MigrateType::Movable).unwrap());
            // refills are always one batch: never more than 15 frames ahead of the allocations
            assert_eq!((free0 - buddy.zones[0].free_pages) as usize, (i / 15 + 1) * 15);
        }
        for (i, &pfn) in got.iter().enumerate() {
            pcp.free(&mut buddy, &mut lists, &mut owner, pfn);
            assert!(pcp.sets[0].count < 90, "after {} frees the list holds {}", i + 1, pcp.sets[0].count);
        }
        // 200 frees onto the 10 left over: at 90, 15 go back, each time
        assert_eq!(pcp.nr_pages(0), 10 + 200 - 15 * ((10 + 200 - 90) / 15 + 1) as u64);
        pcp.drain_all_pages(&mut buddy, &mut lists, &mut owner, None);
        assert_eq!(buddy.zones[0].free_pages, free0);
        lists.check_invariants().unwrap();
        pcp.check_invariants(&buddy, &lists, &owner).unwrap();
    }
}
