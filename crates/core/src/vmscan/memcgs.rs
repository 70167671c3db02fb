//! `shrink_node_memcgs` (mm/vmscan.c v6.15): walk the memcgs under the reclaim target
//! on one node, honouring `memory.min` (skip) and `memory.low` (skip unless the
//! reclaimer already retried with `memcg_low_reclaim`, then count a `low` event).
//!
//! Direct reclaimers do a partial walk that resumes where the last one stopped and
//! ends as soon as `nr_to_reclaim` is met; kswapd and memcg reclaim of a leaf walk it
//! all. The target memcg itself is never protected against its own reclaim. After each
//! memcg's `shrink_lruvec` comes its `shrink_slab` (mm/vmscan.c 6.12, mm/shrinker.rs).

use super::ScanControl;
use crate::mm::lruvec::LruvecId;
use crate::mm::memcontrol::{MemcgId, ROOT_MEMCG};
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;

pub fn shrink_node_memcgs<P: ReclaimPolicy>(mm: &mut Mm, p: &mut P, node: u16, sc: &mut ScanControl, mut shrink_lruvec: impl FnMut(&mut P, &mut Mm, LruvecId, &mut ScanControl)) {
    let target = sc.target_memcg.unwrap_or(ROOT_MEMCG);
    // The flat hierarchy: the root's subtree is every memcg; a child's is itself.
    let n = if target == ROOT_MEMCG { mm.memcgs.len() } else { 1 };
    let member = |k: usize| if target == ROOT_MEMCG { k as MemcgId } else { target };
    let partial = sc.reclaimer == super::Reclaimer::Direct;
    let start = if partial { mm.nodes[node as usize].memcg_iter_cursor as usize % n } else { 0 };
    for k in 0..n {
        let memcg = member((start + k) % n);
        if memcg != target {
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
        crate::mm::shrinker::shrink_slab(mm, p, node, memcg, sc.priority);
        if partial && sc.nr_reclaimed >= sc.nr_to_reclaim {
            mm.nodes[node as usize].memcg_iter_cursor = ((start + k + 1) % n) as u16;
            break;
        }
    }
}
