//! khugepaged (mm/khugepaged.c): collapse PTE-mapped ranges into THPs in the background.
//!
//! Every `scan_sleep_millisecs` it scans `pages_to_scan` PTEs of THP-eligible anonymous
//! VMAs, one PMD range at a time from where it left off (`khugepaged_scan_mm_slot` →
//! `khugepaged_scan_pmd`). A range qualifies when it is not already a THP, at most
//! `max_ptes_none` of its PTEs are none (never touched or zapped), and none is swapped
//! out. `collapse_huge_page` then allocates a THP on the node holding most of the
//! range's pages (`khugepaged_find_target_node`) with
//! `alloc_hugepage_khugepaged_gfpmask() | __GFP_THISNODE` (`GFP_TRANSHUGE` with
//! `khugepaged/defrag`, else `GFP_TRANSHUGE_LIGHT`), copies the present pages into it,
//! zero-fills the none PTEs and frees the old pages: `thp_collapse_alloc`, or
//! `thp_collapse_alloc_failed` when the allocation fails.
//!
//! A range also needs a page some access still marks, a young PTE or a referenced folio
//! (`SCAN_LACK_REFERENCED_PAGE`).
//!
//! Abstractions: no `max_ptes_swap`/`max_ptes_shared` (swapped ranges are skipped, so the
//! rule for a range with swapped PTEs, half its pages referenced, never applies),
//! khugepaged's CPU time runs on its own clock but its allocations use the machine's
//! allocator as the current task.

use crate::config::SimConfig;
use crate::error::Result;
use crate::mm::memcontrol::ROOT_MEMCG;
use crate::mm::page::{is_resident, pg, pinfo, pte_info};
use crate::mm::page_alloc::MigrateType;
use crate::policy::ReclaimPolicy;
use crate::sim::engine::Machine;
use crate::sim::process::{Task, NO_CPU, NO_TASK};
use crate::thp::gfp::*;
use crate::thp::{Tc, HPAGE_PMD_NR, HPAGE_PMD_ORDER};

pub struct Khugepaged {
    /// When the next scan runs (ns); `u64::MAX` while no mm is registered.
    pub next_scan: u64,
    /// Next PMD slot to look at.
    pub cursor: u32,
    pub cpu_ns: u64,
    pub full_scans: u64,
    sleep_ns: u64,
}

impl Khugepaged {
    /// `scan_sleep_millisecs` is a kernel timer: on the simulated clock it is
    /// `sim.time_dilation` times shorter.
    pub fn new(cfg: &SimConfig) -> Self {
        let sleep_ns = (cfg.thp.scan_sleep_ms.saturating_mul(1_000_000) as f64 / cfg.time_dilation) as u64;
        Khugepaged { next_scan: u64::MAX, cursor: 0, cpu_ns: 0, full_scans: 0, sleep_ns: sleep_ns.max(1) }
    }

    /// `khugepaged_enter_vma` → `__khugepaged_enter`: the first anonymous mapping registers
    /// the mm and wakes khugepaged, which scans after its sleep.
    pub fn enter(&mut self, now: u64) {
        if self.next_scan == u64::MAX {
            self.next_scan = now + self.sleep_ns;
        }
    }
}

/// One wake-up of khugepaged: scan `pages_to_scan` PTEs, collapsing what qualifies. Its
/// allocations run as a task of its own on the target node, on khugepaged's clock.
pub fn khugepaged_scan<P: ReclaimPolicy>(m: &mut Machine<P>) -> Result<()> {
    let cfg = m.mm.cfg.thp.clone();
    let t = m.khugepaged.next_scan;
    // No re-entry from an allocation's catch-up while this scan runs.
    m.khugepaged.next_scan = u64::MAX;
    let (saved_cur, saved_now) = (m.procs.cur, m.now);
    let slots = m.procs.nr_slots();
    let enabled = m.thp_enabled;
    let mut budget = cfg.pages_to_scan;
    let mut cost = 0u64;
    let mut visited = 0;
    while budget > 0 && slots > 0 && visited < slots {
        let slot = m.khugepaged.cursor % slots;
        m.khugepaged.cursor = (slot + 1) % slots;
        if m.khugepaged.cursor == 0 {
            m.khugepaged.full_scans += 1;
        }
        visited += 1;
        let vma = &m.procs.vmas[m.procs.pmd_vma[slot as usize] as usize];
        // A range a partial munmap split lies in no one VMA (`thp_vma_suitable_order`).
        if vma.file || vma.unmapped || m.procs.pmd_split[slot as usize] || !vma_thp_enabled(enabled, vma.hugepage, vma.nohugepage) {
            continue;
        }
        budget = budget.saturating_sub(HPAGE_PMD_NR);
        cost += HPAGE_PMD_NR as u64 * cfg.compact_scan_ns;
        let base = slot * HPAGE_PMD_NR;
        let mut none = 0;
        let mut referenced = 0;
        let mut swapped = false;
        let mut huge = false;
        let mut per_node = vec![0u32; m.mm.nr_nodes()];
        for i in 0..HPAGE_PMD_NR {
            let pte = m.mm.pages.pte[(base + i) as usize];
            if is_resident(pte) {
                if m.mm.frames.test(pte, pg::COMPOUND) {
                    huge = true;
                    break;
                }
                per_node[m.mm.node_of(pte) as usize] += 1;
                // A young PTE or a referenced folio (hpage_collapse_scan_pmd, mm/khugepaged.c
                // 6.12; it reads the accessed bit without clearing it).
                referenced += u32::from(m.mm.frames.test(pte, pg::YOUNG | pg::REFERENCED));
            } else if pte_info(pte) & pinfo::SWAPPED != 0 {
                swapped = true;
            } else {
                none += 1;
            }
        }
        // SCAN_LACK_REFERENCED_PAGE: khugepaged collapses only a range some access still
        // marks (hpage_collapse_scan_pmd: `!referenced`, mm/khugepaged.c 6.12).
        if huge || swapped || none > cfg.max_ptes_none || none == HPAGE_PMD_NR || referenced == 0 {
            continue;
        }
        // khugepaged_find_target_node: the node with most pages (first on ties).
        let node = per_node.iter().enumerate().max_by_key(|&(i, &c)| (c, std::cmp::Reverse(i))).map(|(i, _)| i as u16).unwrap_or(0);
        let gfp = if cfg.khugepaged_defrag { GFP_TRANSHUGE } else { GFP_TRANSHUGE_LIGHT } | __GFP_THISNODE;
        let start = t + cost;
        m.procs.tasks.push(Task { node, clock: start, cpu: NO_CPU });
        m.procs.cur = m.procs.tasks.len() - 1;
        m.now = start;
        let head = crate::sim::alloc::alloc_pages_node(m, gfp, HPAGE_PMD_ORDER, node, MigrateType::Movable).ok().flatten();
        cost += m.now - start;
        m.procs.tasks.pop();
        m.procs.cur = NO_TASK;
        let Some(head) = head else {
            m.mm.thp.stat.count(Tc::ThpCollapseAllocFailed, 1);
            continue;
        };
        collapse(m, slot, head);
        cost += HPAGE_PMD_NR as u64 * cfg.migrate_page_ns;
        m.mm.thp.stat.count(Tc::ThpCollapseAlloc, 1);
    }
    m.procs.cur = saved_cur;
    m.now = saved_now;
    m.khugepaged.cpu_ns += cost;
    m.khugepaged.next_scan = t + cost + m.khugepaged.sleep_ns;
    Ok(())
}

/// `collapse_huge_page` after the allocation: replace the range's pages by the THP.
fn collapse<P: ReclaimPolicy>(m: &mut Machine<P>, slot: u32, head: u32) {
    let base = slot * HPAGE_PMD_NR;
    for i in 0..HPAGE_PMD_NR {
        if is_resident(m.mm.pages.pte[(base + i) as usize]) {
            m.zap_page(base + i);
        }
    }
    m.mm.memcgs[ROOT_MEMCG as usize].usage += HPAGE_PMD_NR as u64;
    m.install_huge(slot * HPAGE_PMD_NR, head, ROOT_MEMCG);
}
