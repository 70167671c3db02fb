//! `shrink_folio_list` (mm/vmscan.c v6.15, spec A.7): try to evict isolated folios.
//!
//! For each folio, oldest first: the policy's `folio_check_references` decides
//! activate / keep / reclaim; reclaim of an anon folio needs a swap slot (and, on
//! zram, room in the compressed pool) and writes it out (`pageout`); mapped folios are
//! unmapped; dirty file folios and folios under writeback are marked `PG_reclaim` and
//! activated, for the flusher to write and `folio_end_writeback` to rotate back to the
//! tail (6.12's rules, which count `nr_vmscan_immediate_reclaim`, `nr_immediate` and the
//! PGDAT_DIRTY/PGDAT_WRITEBACK feedback; the file system, ext4, has no `->writepage`, so
//! reclaim writes no file folio itself); clean folios
//! are freed with a shadow entry (`__remove_mapping` → `workingset_eviction`).
//! Folios that survive stay in `folios` with `PG_active` set or not, for the policy's
//! putback (`move_folios_to_lru`).
//!
//! A THP (one folio of 512 pages, anonymous) is swapped out whole when a free swap
//! cluster takes it (`thp_swpout`, 6.12 with `CONFIG_THP_SWAP`); otherwise it is split
//! (`split_folio_to_list`, `thp_swpout_fallback`) and its pages are reclaimed one by one
//! in the same call; a partially mapped THP is split at once, its unmapped subpages
//! going through the same call without I/O. Counts are in pages, as the kernel's
//! `nr_pages` accounting.
//!
//! Abstractions: swap writes complete synchronously (true for zram; for SSD swap the
//! folio is freed in the same pass rather than after the writeback-completion rotate);
//! no lock contention, no demotion. Tails split off a THP are processed at the end of
//! the batch (the kernel takes them next).

use super::{FolioReferences, Reclaimer, ScanControl};
use crate::mm::page::{nonres_pte, pg, pinfo, swp_entry_to_pte, NO_PAGE};
use crate::mm::page_alloc::{MigrateType, Pfn};
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;

/// `struct reclaim_stat` (the fields the model fills).
#[derive(Clone, Copy, Debug, Default)]
pub struct ReclaimStat {
    pub nr_reclaimed: u64,
    /// Folios written out (`nr_pageout`), feeding `lru_note_cost`.
    pub nr_pageout: u64,
    pub nr_activate: [u64; 2],
    pub nr_dirty: u64,
    pub nr_unqueued_dirty: u64,
    pub nr_congested: u64,
    pub nr_writeback: u64,
    pub nr_immediate: u64,
}

/// Grow the zram pool to hold `nr` more compressed pages. Reclaimers run with
/// `PF_MEMALLOC`, so zsmalloc's allocation gets `ALLOC_NO_WATERMARKS` and may use the
/// reserves below the min watermark; it fails only when no frame is free at all.
fn zram_reserve(mm: &mut Mm, node: u16, nr: u64) -> bool {
    let need = mm.swap.zram_frames_for(mm.swap.stored + nr);
    let nr_zones = mm.buddy.zones.len();
    let first = mm.nodes[node as usize].zones[0];
    'grow: while need > mm.swap.zram_pool.len() as u64 {
        for i in 0..nr_zones {
            if let Some(pfn) = mm.rmqueue((first + i) % nr_zones, MigrateType::Movable) {
                mm.swap.zram_pool.push(pfn);
                continue 'grow;
            }
        }
        return false;
    }
    true
}

/// A subpage of a partially mapped THP that reclaim split onto its list (below) and that
/// no PTE maps (owner [`NO_PAGE`]): it holds only the list's reference and goes through
/// `shrink_folio_list` as any anonymous folio (mm/vmscan.c 6.12). No PTE references it,
/// so no young bit; `add_to_swap` gives it a slot and `pageout` calls `swap_writepage`,
/// whose `folio_free_swap` drops the slot again without I/O (the entry's swap count is
/// 0, mm/page_io.c): PAGE_SUCCESS, `nr_pageout` and NR_VMSCAN_WRITE counted, the folio
/// dirty again and kept. Without a free slot it is activated (`activate_locked_split`).
/// Either way its last reference goes when the survivors are put back
/// (`move_folios_to_lru`): freed and uncharged, never counted as stolen.
fn shrink_unmapped_subpage(mm: &mut Mm, pfn: Pfn, sc: &ScanControl, stat: &mut ReclaimStat, pgactivate: &mut u64) {
    let slot = if sc.may_swap && mm.swap.can_alloc(mm.pcp.cpu, 1) { mm.swap_alloc() } else { None };
    if let Some(slot) = slot {
        // folio_free_swap: the slot goes to this CPU's return cache (counted as stored
        // until released, a page's worth of zram pool at most a while).
        mm.swap_free(slot);
        mm.vmstat.count(Ev::NrVmscanWrite, 1);
        stat.nr_pageout += 1;
    } else {
        stat.nr_activate[0] += 1;
        *pgactivate += 1;
        let memcg = mm.frames.memcg(pfn);
        mm.count_memcg_events(memcg, Ev::Pgactivate, 1);
    }
    mm.uncharge_frame(pfn);
    mm.free_frame(pfn);
}

/// Count `nr` pages of a reclaim event (`item`: PGSCAN_*/PGSTEAL_* + reclaimer_offset,
/// `by_type` its anon or file counter) as shrink_inactive_list and evict_folios do
/// (mm/vmscan.c 6.12): globally outside cgroup reclaim, for `memcg` always; none for
/// reclaim_pages (DAMOS pageout).
#[inline]
fn count_reclaim_event(mm: &mut Mm, sc: &ScanControl, item: Ev, by_type: Ev, memcg: u16, nr: u64) {
    if sc.ignore_references {
        return;
    }
    if sc.reclaimer != Reclaimer::Memcg {
        mm.vmstat.count(item, nr);
    }
    mm.count_memcg_events(memcg, item, nr);
    mm.vmstat.count(by_type, nr);
}

/// Evict what can be evicted from `folios` (isolated, `PG_lru` clear). Returns the
/// stat; survivors remain in `folios` in their original order.
pub fn shrink_folio_list<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, folios: &mut Vec<Pfn>, sc: &mut ScanControl) -> ReclaimStat {
    let mut stat = ReclaimStat::default();
    let mut pgactivate = 0;
    let cost = mm_costs(mm);
    let mut kept = 0;
    let mut i = 0;
    // Tails of a THP split here are appended to `folios` and taken in this loop; after a
    // partially mapped THP's split some of them are unmapped.
    let mut split_unmapped = false;
    while i < folios.len() {
        let pfn = folios[i];
        i += 1;
        let mut nr_pages = mm.folio_nr_pages(pfn);
        sc.nr_scanned += nr_pages;
        sc.cost_ns += cost.scan_ns;
        if split_unmapped && mm.frames.page(pfn) == NO_PAGE {
            shrink_unmapped_subpage(mm, pfn, sc, &mut stat, &mut pgactivate);
            continue;
        }
        let file = mm.frames.is_file(pfn);
        let mut activate = false;
        // folio_check_dirty_writeback: only file folios count (anon is written by pageout).
        let f = mm.frames.flags(pfn);
        let (dirty, writeback) = (file && f & pg::DIRTY != 0, file && f & pg::WRITEBACK != 0);
        if dirty || writeback {
            stat.nr_dirty += nr_pages;
        }
        if dirty && !writeback {
            stat.nr_unqueued_dirty += nr_pages;
        }
        if writeback && f & pg::RECLAIM != 0 {
            stat.nr_congested += nr_pages;
        }
        let references = if writeback {
            // Under writeback (mm/vmscan.c 6.12): case 1, kswapd meeting a PG_reclaim folio
            // on a PGDAT_WRITEBACK node, counts nr_immediate; case 2 (cgroup v2's
            // writeback_throttling_sane) marks it PG_reclaim for rotation at completion.
            // Both activate it; case 3 (cgroup v1) is not modelled.
            if sc.is_kswapd() && f & pg::RECLAIM != 0 && mm.nodes[mm.node_of(pfn) as usize].pgdat_writeback {
                stat.nr_immediate += nr_pages;
            } else {
                mm.frames.set(pfn, pg::RECLAIM);
                stat.nr_writeback += nr_pages;
            }
            FolioReferences::Activate
        } else if sc.ignore_references {
            FolioReferences::Reclaim
        } else {
            p.folio_check_references(mm, pfn, sc)
        };
        match references {
            FolioReferences::Activate => activate = true,
            FolioReferences::Keep => {}
            FolioReferences::Reclaim | FolioReferences::ReclaimClean => {
                if dirty {
                    // A dirty file folio is unmapped first (try_to_unmap), then (6.12):
                    // unless it is kswapd meeting it again with PG_reclaim on a PGDAT_DIRTY
                    // node, it is marked PG_reclaim ("immediately reclaim when written
                    // back"), NR_VMSCAN_IMMEDIATE, and activated. Otherwise RECLAIM_CLEAN
                    // keeps it, and pageout finds no ->writepage (ext4): activated.
                    if mm.frames.test_and_clear(pfn, pg::MAPPED) {
                        mm.frames.clear(pfn, pg::YOUNG);
                        sc.cost_ns += cost.unmap_ns;
                    }
                    if !sc.is_kswapd() || f & pg::RECLAIM == 0 || !mm.nodes[mm.node_of(pfn) as usize].pgdat_dirty {
                        mm.vmstat.count(Ev::NrVmscanImmediate, 1);
                        mm.frames.set(pfn, pg::RECLAIM);
                        activate = true;
                    } else {
                        activate = references != FolioReferences::ReclaimClean && sc.may_writepage;
                    }
                } else if file {
                    evict(mm, p, pfn, None, sc, &mut stat, &cost);
                    continue;
                } else {
                    // "Split partially mapped folios right away. We can free the unmapped
                    // pages without IO." (mm/vmscan.c 6.12): `split_folio_to_list`; every
                    // tail makes its own pass, the unmapped ones too (above), and the
                    // scan count drops to the head's one page.
                    if nr_pages > 1 && mm.folio_pte_mapped(pfn) {
                        crate::thp::split::split_huge_page_to_list(mm, p, pfn, Some(folios));
                        sc.nr_scanned -= nr_pages - 1;
                        nr_pages = 1;
                        split_unmapped = true;
                        if mm.frames.page(pfn) == NO_PAGE {
                            shrink_unmapped_subpage(mm, pfn, sc, &mut stat, &mut pgactivate);
                            continue;
                        }
                    }
                    let mut cluster = None;
                    if nr_pages > 1 && can_swap_out(mm, pfn, nr_pages, sc) {
                        cluster = mm.swap.alloc_cluster(mm.pcp.cpu);
                        if cluster.is_none() {
                            // The pool grew for 512 pages that will not come.
                            mm.zram_shrink_pool();
                        }
                    }
                    if nr_pages > 1 && cluster.is_none() {
                        // add_to_swap of the THP failed: "fallback to swap normal pages"
                        // (mm/vmscan.c 6.12): split_folio_to_list, THP_SWPOUT_FALLBACK,
                        // and the scan count drops to the head's one page.
                        crate::thp::split::split_huge_page_to_list(mm, p, pfn, Some(folios));
                        mm.thp.stat.count(crate::thp::Tc::ThpSwpoutFallback, 1);
                        sc.nr_scanned -= nr_pages - 1;
                        nr_pages = 1;
                    }
                    if let Some(slot) = cluster.or_else(|| if can_swap_out(mm, pfn, 1, sc) { mm.swap_alloc() } else { None }) {
                        evict(mm, p, pfn, Some(slot), sc, &mut stat, &cost);
                        continue;
                    }
                    // add_to_swap failed: activate_locked_split.
                    activate = true;
                }
            }
        }
        if activate {
            mm.frames.set(pfn, pg::ACTIVE);
            stat.nr_activate[file as usize] += nr_pages;
            pgactivate += nr_pages;
            let memcg = mm.frames.memcg(pfn);
            mm.count_memcg_events(memcg, Ev::Pgactivate, nr_pages);
        }
        folios[kept] = pfn;
        kept += 1;
    }
    folios.truncate(kept);
    mm.vmstat.count(Ev::Pgactivate, pgactivate);
    stat
}

/// `add_to_swap` of `nr` pages can succeed: swap allowed, free slots, and on zram room
/// in the pool.
fn can_swap_out(mm: &mut Mm, pfn: Pfn, nr: u64, sc: &ScanControl) -> bool {
    let node = mm.node_of(pfn);
    sc.may_swap && mm.swap.can_alloc(mm.pcp.cpu, nr) && (!mm.swap.is_zram() || zram_reserve(mm, node, nr))
}

struct Costs {
    scan_ns: u64,
    unmap_ns: u64,
    free_ns: u64,
    zram_compress_ns: u64,
    ssd_write_ns: u64,
}

fn mm_costs(mm: &Mm) -> Costs {
    let c = &mm.cfg.cost;
    Costs { scan_ns: c.scan_ns, unmap_ns: c.unmap_ns, free_ns: c.free_ns, zram_compress_ns: mm.cfg.zram_compress_ns, ssd_write_ns: mm.cfg.ssd_write_ns }
}

/// pageout (anon, to the swap slots from `slot`) + try_to_unmap + `__remove_mapping` +
/// free, of the folio at `pfn` (a THP: its 512 pages at once, one shadow for all, as
/// `__delete_from_swap_cache` stores it in every slot).
#[inline(always)]
fn evict<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, pfn: Pfn, slot: Option<u32>, sc: &mut ScanControl, stat: &mut ReclaimStat, cost: &Costs) {
    let nr = mm.folio_nr_pages(pfn);
    let file = slot.is_none();
    let page = mm.frames.page(pfn);
    if !file {
        // swap_writepage: zram compresses on the reclaimer's CPU; an SSD write is
        // asynchronous device time. Counted in pages (count_swpout_vm_event).
        if mm.swap.is_zram() {
            sc.cost_ns += nr * cost.zram_compress_ns;
        } else {
            mm.io_write_ns += nr * cost.ssd_write_ns;
        }
        mm.vmstat.count(Ev::Pswpout, nr);
        mm.vmstat.count(Ev::Pgpgout, 4 * nr);
        mm.vmstat.count(Ev::NrVmscanWrite, nr);
        // The swap write ends (synchronously here) in folio_end_writeback, whose
        // __folio_end_writeback counts NR_WRITTEN for swap folios too (mm/page-writeback.c 6.12).
        mm.vmstat.count(Ev::NrWritten, nr);
        stat.nr_pageout += nr;
        if nr > 1 {
            mm.thp.stat.count(crate::thp::Tc::ThpSwpout, 1);
        }
    }
    if mm.frames.test(pfn, pg::MAPPED) {
        sc.cost_ns += cost.unmap_ns;
    }
    if file {
        // filemap_release_folio before __remove_mapping (the folio is clean here).
        mm.release_buffers(pfn);
    }
    let shadow = p.workingset_eviction(mm, pfn);
    let memcg = mm.frames.memcg(pfn) as usize;
    let root = mm.lruvec_id(crate::mm::memcontrol::ROOT_MEMCG, mm.node_of(pfn));
    for i in 0..nr as u32 {
        let page = (page + i) as usize;
        if file {
            mm.pages.pte[page] = nonres_pte(pinfo::TOUCHED | pinfo::FILE);
            mm.pages.set_shadow(page, shadow);
            // page_cache_delete stores the shadow in the xarray (workingset_update_node).
            mm.page_cache_delete(page as u32, shadow != 0);
        } else {
            // try_to_unmap_one leaves the swap entry in the PTE; __delete_from_swap_cache
            // stores the shadow at the slot, in a node no memcg is charged for. (A slot is
            // taken without a shadow: freeing one clears it.)
            let slot = slot.expect("anon has a slot") + i;
            mm.pages.pte[page] = swp_entry_to_pte(slot);
            if shadow != 0 {
                mm.pages.set_swap_shadow(slot, shadow);
                mm.swap_cache_store(slot, root);
            }
        }
    }
    mm.memcgs[memcg].usage -= nr;
    if nr == 1 {
        mm.free_frame(pfn);
    } else {
        // free_unref_folios: the THP goes back to the buddy allocator as one block.
        for f in pfn..pfn + nr as u32 {
            mm.frames.release(f);
        }
        crate::thp::split::folio_undo_large_rmappable(mm, (pfn >> crate::mm::page_alloc::PAGEBLOCK_ORDER) as usize);
        mm.free_block(pfn, crate::mm::page_alloc::PAGEBLOCK_ORDER);
    }
    sc.cost_ns += cost.free_ns;
    stat.nr_reclaimed += nr;
    count_reclaim_event(mm, sc, sc.pgsteal_item(), Ev::by_type(Ev::PgstealAnon, file), memcg as u16, nr);
}
