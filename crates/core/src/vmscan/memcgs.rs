//! `shrink_node_memcgs` (mm/vmscan.c v6.15): walk the memcgs under the reclaim target
//! on one node, honouring `memory.min` (skip) and `memory.low` (skip unless the
//! reclaimer already retried with `memcg_low_reclaim`, then count a `low` event).
//!
//! Direct reclaimers do a partial walk that resumes where the last one stopped and
//! ends as soon as `nr_to_reclaim` is met; kswapd and memcg reclaim of a leaf walk it
//! all. The target memcg itself is never protected against its own reclaim. After each
//! memcg's `shrink_lruvec` comes its `shrink_slab` (mm/vmscan.c 6.12, mm/shrinker.rs).
//! A kswapd walk whose `shrink_lruvec` let the workload run (`sc.preempted`, a batch
//! boundary's `cond_resched()`) returns its position; [`shrink_node_memcgs_from`] goes on
//! from it.

use super::ScanControl;
use crate::mm::lruvec::LruvecId;
use crate::mm::memcontrol::{MemcgId, ROOT_MEMCG};
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;

pub fn shrink_node_memcgs<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, node: u16, sc: &mut ScanControl, shrink_lruvec: impl FnMut(&mut P, &mut Mm, LruvecId, &mut ScanControl)) {
    shrink_node_memcgs_from(mm, p, node, sc, None, shrink_lruvec);
}

/// [`shrink_node_memcgs`], going on at the walk's position `resume` (a kswapd walk that
/// stopped there, its protection already checked). Returns the position where
/// `shrink_lruvec` set `sc.preempted` (the memcg's `shrink_slab` then comes when the
/// walk goes on), else None.
pub fn shrink_node_memcgs_from<P: ReclaimPolicy>(
    mm: &mut Mm,
    p: &mut P,
    node: u16,
    sc: &mut ScanControl,
    resume: Option<usize>,
    mut shrink_lruvec: impl FnMut(&mut P, &mut Mm, LruvecId, &mut ScanControl),
) -> Option<usize> {
    let target = sc.target_memcg.unwrap_or(ROOT_MEMCG);
    // The flat hierarchy: the root's subtree is every memcg; a child's is itself.
    let n = if target == ROOT_MEMCG { mm.memcgs.len() } else { 1 };
    let member = |k: usize| if target == ROOT_MEMCG { k as MemcgId } else { target };
    let partial = sc.reclaimer == super::Reclaimer::Direct;
    debug_assert!(resume.is_none() || !partial, "only kswapd's full walk stops and goes on");
    let start = if partial { mm.nodes[node as usize].memcg_iter_cursor as usize % n } else { 0 };
    for k in resume.unwrap_or(0)..n {
        let memcg = member((start + k) % n);
        if memcg != target && resume != Some(k) {
            let m = &mm.memcgs[memcg as usize];
            if m.below_min() {
                continue;
            }
            if m.below_low() {
                if !sc.memcg_low_reclaim {
                    sc.memcg_low_skipped = true;
                    continue;
                }
                mm.memcgs[memcg as usize].events.low += 1;
            }
        }
        let lv = mm.lruvec_id(memcg, node);
        shrink_lruvec(p, mm, lv, sc);
        if sc.preempted {
            return Some(k);
        }
        crate::mm::shrinker::shrink_slab(mm, p, node, memcg, sc.priority);
        if partial && sc.nr_reclaimed >= sc.nr_to_reclaim {
            mm.nodes[node as usize].memcg_iter_cursor = ((start + k + 1) % n) as u16;
            break;
        }
    }
    None
}
