//! The PID controller that picks which type and tiers to evict (mm/vmscan.c v6.15,
//! spec C.8): `read_ctrl_pos`, `positive_ctrl_err`, `get_tier_idx`, `get_type_to_scan`,
//! and `reset_ctrl_pos` (the EMA carry-over when `min_seq` advances).
//! NR_HIST_GENS = 1 (no CONFIG_LRU_GEN_STATS), so the history index is always 0.

use super::lrugen::{LruGen, LRU_GEN_ANON, LRU_GEN_FILE, MAX_NR_TIERS, MAX_SWAPPINESS, MIN_LRU_BATCH};

/// `struct ctrl_pos`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CtrlPos {
    pub refaulted: u64,
    pub total: u64,
    pub gain: u64,
}

/// `read_ctrl_pos`: tiers `tier % 4 ..= min(tier, 3)` (tier = MAX_NR_TIERS: all four).
pub fn read_ctrl_pos(g: &LruGen, ty: usize, tier: usize, gain: u64) -> CtrlPos {
    let mut pos = CtrlPos { gain, ..Default::default() };
    for i in tier % MAX_NR_TIERS..=tier.min(MAX_NR_TIERS - 1) {
        pos.refaulted += g.avg_refaulted[ty][i] + g.refaulted[ty][i];
        pos.total += g.avg_total[ty][i] + g.protected[ty][i] + g.evicted[ty][i];
    }
    pos
}

/// `positive_ctrl_err`: the PV has few refaults, or a refault rate (gain-weighted) not
/// above the SP's.
pub fn positive_ctrl_err(sp: &CtrlPos, pv: &CtrlPos) -> bool {
    pv.refaulted < MIN_LRU_BATCH || (pv.refaulted as u128) * (sp.total + MIN_LRU_BATCH) as u128 * sp.gain as u128 <= (sp.refaulted + 1) as u128 * pv.total as u128 * pv.gain as u128
}

/// `get_tier_idx`: the highest tier whose refault rate is comparable to tier 0's
/// (gains 2:3); tiers above it are protected in `sort_folio`.
pub fn get_tier_idx(g: &LruGen, ty: usize) -> usize {
    let sp = read_ctrl_pos(g, ty, 0, 2);
    let mut tier = 1;
    while tier < MAX_NR_TIERS {
        let pv = read_ctrl_pos(g, ty, tier, 3);
        if !positive_ctrl_err(&sp, &pv) {
            break;
        }
        tier += 1;
    }
    tier - 1
}

/// `get_type_to_scan` (v6.14+): file unless its refault rate, weighted by 200 −
/// swappiness against anon's by swappiness, is higher.
pub fn get_type_to_scan(g: &LruGen, swappiness: u32) -> usize {
    if swappiness <= 1 {
        return LRU_GEN_FILE;
    }
    if swappiness >= MAX_SWAPPINESS {
        return LRU_GEN_ANON;
    }
    let sp = read_ctrl_pos(g, LRU_GEN_ANON, MAX_NR_TIERS, swappiness as u64);
    let pv = read_ctrl_pos(g, LRU_GEN_FILE, MAX_NR_TIERS, (MAX_SWAPPINESS - swappiness) as u64);
    positive_ctrl_err(&sp, &pv) as usize
}

/// `reset_ctrl_pos(type, carryover)`: when `min_seq[type]` advances, fold the
/// generation's counters into the averages (smoothing 1/2) and clear them. With
/// NR_HIST_GENS = 1 the `max_seq` case (carryover = false) does nothing.
pub fn reset_ctrl_pos(g: &mut LruGen, ty: usize, carryover: bool) {
    if !carryover {
        return;
    }
    for tier in 0..MAX_NR_TIERS {
        g.avg_refaulted[ty][tier] = (g.avg_refaulted[ty][tier] + g.refaulted[ty][tier]) / 2;
        g.avg_total[ty][tier] = (g.avg_total[ty][tier] + g.protected[ty][tier] + g.evicted[ty][tier]) / 2;
        g.refaulted[ty][tier] = 0;
        g.evicted[ty][tier] = 0;
        g.protected[ty][tier] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::lists::ListHead;

    fn lrugen() -> LruGen {
        LruGen::new(ListHead(0), 0)
    }

    /// Hand-worked C.8: tier 0 of file evicted 1000 and refaulted 100 (10%); tier 1
    /// refaulted 300 of 1000 (30%). get_tier_idx compares tier 1 (gain 3) with tier 0
    /// (gain 2): 300 * (1000 + 64) * 2 = 638400 > (100 + 1) * 1000 * 3 = 303000 → not
    /// positive → tier 1 is protected, idx = 0. At 14% (140 refaults): 140*1064*2 = 297920
    /// ≤ 303000 → comparable → tier 1 evictable; tiers 2, 3 have < 64 refaults → idx 3.
    #[test]
    fn tier_index_by_hand() {
        let mut g = lrugen();
        g.evicted[1][0] = 1000;
        g.refaulted[1][0] = 100;
        g.evicted[1][1] = 1000;
        g.refaulted[1][1] = 300;
        assert_eq!(get_tier_idx(&g, 1), 0);
        g.refaulted[1][1] = 140;
        assert_eq!(get_tier_idx(&g, 1), 3);
        // tier 2 hot (many refaults) stops the scan at 2: idx = 1
        g.evicted[1][2] = 100;
        g.refaulted[1][2] = 90;
        assert_eq!(get_tier_idx(&g, 1), 1);
    }

    /// Type choice, swappiness 60: anon gain 60, file gain 140.
    /// anon refaulted 50/1000 of its total, file 400/1000: file's weighted rate
    /// 400 * (1000+64) * 60 = 25,536,000 vs (50+1) * 1000 * 140 = 7,140,000 → anon is
    /// scanned. With file at 100/1000: 100*1064*60 = 6,384,000 ≤ 7,140,000 → file.
    #[test]
    fn type_to_scan_by_hand() {
        let mut g = lrugen();
        g.evicted[0][0] = 1000;
        g.refaulted[0][0] = 50;
        g.evicted[1][0] = 1000;
        g.refaulted[1][0] = 400;
        assert_eq!(get_type_to_scan(&g, 60), LRU_GEN_ANON);
        g.refaulted[1][0] = 100;
        assert_eq!(get_type_to_scan(&g, 60), LRU_GEN_FILE);
        assert_eq!(get_type_to_scan(&g, 1), LRU_GEN_FILE);
        assert_eq!(get_type_to_scan(&g, 200), LRU_GEN_ANON);
        // few refaults (< MIN_LRU_BATCH) on file: always file
        g.refaulted[1][0] = 63;
        g.refaulted[0][0] = 0;
        assert_eq!(get_type_to_scan(&g, 100), LRU_GEN_FILE);
    }

    #[test]
    fn carryover_is_an_ema() {
        let mut g = lrugen();
        g.refaulted[1][2] = 100;
        g.evicted[1][2] = 300;
        g.protected[1][2] = 100;
        reset_ctrl_pos(&mut g, 1, true);
        assert_eq!((g.avg_refaulted[1][2], g.avg_total[1][2]), (50, 200));
        assert_eq!((g.refaulted[1][2], g.evicted[1][2], g.protected[1][2]), (0, 0, 0));
        g.refaulted[1][2] = 10;
        reset_ctrl_pos(&mut g, 1, true);
        assert_eq!((g.avg_refaulted[1][2], g.avg_total[1][2]), (30, 100));
    }
}
