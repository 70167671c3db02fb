//! v6.6's choices of type and tier (mm/vmscan.c v6.6, `isolate_folios`,
//! `get_type_to_scan`, `get_tier_idx`; spec C.8 **\[version\]**). The controller's
//! arithmetic (`read_ctrl_pos` of one tier, `positive_ctrl_err`, `reset_ctrl_pos`) is
//! the shared v6.15 code, which is the same.

use super::super::lrugen::{LruGen, LRU_GEN_ANON, LRU_GEN_FILE, MAX_NR_TIERS, MAX_SWAPPINESS};
use super::super::pid::{positive_ctrl_err, read_ctrl_pos};

/// The highest tier `tier` of `ty` (with gain `pv_gain`) whose refault rate is not
/// above the set point's; tiers above it are protected.
fn tier_idx_against(g: &LruGen, sp: &super::super::pid::CtrlPos, ty: usize, pv_gain: u64) -> usize {
    let mut tier = 1;
    while tier < MAX_NR_TIERS {
        if !positive_ctrl_err(sp, &read_ctrl_pos(g, ty, tier, pv_gain)) {
            break;
        }
        tier += 1;
    }
    tier - 1
}

/// `get_tier_idx` (v6.6): each tier against tier 0 of the same type, gains 1 : 2.
pub fn get_tier_idx(g: &LruGen, ty: usize) -> usize {
    tier_idx_against(g, &read_ctrl_pos(g, ty, 0, 1), ty, 2)
}

/// `isolate_folios`' first type (v6.6): file without swappiness; anon when its
/// `min_seq` is older than file's; file at swappiness 1, anon at 200; otherwise
/// `get_type_to_scan` — file unless tier 0's refault rate (gains swappiness :
/// 200 − swappiness) is higher for file than for anon — which also returns the tier
/// index: the chosen type's tiers against the other type's tier 0.
pub fn type_to_scan(g: &LruGen, swappiness: u32) -> (usize, Option<usize>) {
    if swappiness == 0 {
        return (LRU_GEN_FILE, None);
    }
    if g.min_seq[LRU_GEN_ANON] < g.min_seq[LRU_GEN_FILE] {
        return (LRU_GEN_ANON, None);
    }
    if swappiness == 1 {
        return (LRU_GEN_FILE, None);
    }
    if swappiness == MAX_SWAPPINESS {
        return (LRU_GEN_ANON, None);
    }
    let gain = [swappiness as u64, (MAX_SWAPPINESS - swappiness) as u64];
    let sp = read_ctrl_pos(g, LRU_GEN_ANON, 0, gain[LRU_GEN_ANON]);
    let pv = read_ctrl_pos(g, LRU_GEN_FILE, 0, gain[LRU_GEN_FILE]);
    let ty = positive_ctrl_err(&sp, &pv) as usize;
    let sp = read_ctrl_pos(g, 1 - ty, 0, gain[1 - ty]);
    (ty, Some(tier_idx_against(g, &sp, ty, gain[ty])))
}
