//! LIRS as its authors' simulator `lirs.c` (Song Jiang, 2002; the program behind the
//! SIGMETRICS'02 paper's figures) runs it with its shipped `lirs.h`: HIR share 1% of the
//! cache (at least 2 blocks), LIRS stack S effectively unbounded (`MAX_S_LEN` = 2500c),
//! consecutive duplicate references skipped. `lirs` is libCacheSim's variant (S bounded
//! to 2c, HIR share at least 1, no duplicate skipping); see docs/cachesim.md.
//!
//! S is one recency list of every block referenced (top = most recent); a block is
//! logically in S (`IN_S`) while it is above the bottom LIR block: pruning just clears
//! `IN_S` on the HIR blocks below the bottom LIR block (they stay in the list until
//! re-referenced, as in the simulator). Q is the LRU list of resident HIR blocks.
//! - Miss with no free frame: evict Q's bottom (it stays in S as a non-resident HIR).
//!   While more than the HIR share of frames is free (warm-up), a missed block is LIR.
//! - Every reference moves the block to S's top. An HIR block that was in S becomes
//!   LIR, and the bottom LIR block becomes a resident HIR block on Q's top (pruning
//!   S); other HIR blocks go to Q's top.
//!
//! The simulator refuses caches under 10 blocks; so does this (nothing is cached).
use crate::list::{Links, List, NIL};
use crate::Cache;

const RES: u8 = 1;
const LIR: u8 = 2;
const IN_S: u8 = 4;
const IN_LIST: u8 = 8;

pub struct LirsPaper {
    cap: usize,
    hir_limit: usize,
    free: usize,
    nr_lir: usize,
    s_links: Links,
    q_links: Links,
    s: List,
    q: List,
    /// The LIR block with the largest recency (S's logical bottom).
    bottom: u32,
    fl: Vec<u8>,
    last: u32,
}

impl LirsPaper {
    /// The smallest cache the authors' simulator accepts.
    pub const MIN_SIZE: usize = 10;

    pub fn new(cap: usize, nr_keys: usize) -> Self {
        LirsPaper {
            cap,
            hir_limit: ((0.01 * cap as f64) as usize).max(2),
            free: cap,
            nr_lir: 0,
            s_links: Links::new(nr_keys),
            q_links: Links::new(nr_keys),
            s: List::default(),
            q: List::default(),
            bottom: NIL,
            fl: vec![0; nr_keys],
            last: NIL,
        }
    }

    #[inline(always)]
    fn has(&self, k: u32, f: u8) -> bool {
        self.fl[k as usize] & f != 0
    }

    /// Move `bottom` up past HIR blocks, which thereby leave S (the paper's pruning).
    fn find_bottom(&mut self) {
        while self.bottom != NIL && !self.has(self.bottom, LIR) {
            self.fl[self.bottom as usize] &= !IN_S;
            self.bottom = self.s_links.prev(self.bottom);
        }
    }

    #[inline]
    fn move_to_top(&mut self, k: u32) {
        if self.has(k, IN_LIST) {
            if k == self.s.head {
                return;
            }
            if k == self.bottom {
                self.bottom = self.s_links.prev(k);
                self.find_bottom();
            }
            self.s_links.unlink(&mut self.s, k);
        }
        if self.s.len == 0 {
            self.bottom = k;
        }
        self.s_links.push_head(&mut self.s, k);
        self.fl[k as usize] |= IN_LIST;
    }
}

impl Cache for LirsPaper {
    fn name(&self) -> &'static str {
        "lirs-paper"
    }
    #[inline]
    fn access(&mut self, k: u32) -> bool {
        if k == self.last && self.has(k, RES) {
            return true;
        }
        if self.cap < Self::MIN_SIZE {
            return false;
        }
        self.last = k;
        let ku = k as usize;
        let hit = self.has(k, RES);
        if !hit {
            if self.free == 0 {
                let v = self.q_links.pop_tail(&mut self.q);
                self.fl[v as usize] &= !RES;
                self.free += 1;
            } else if self.free > self.hir_limit {
                self.fl[ku] |= LIR;
                self.nr_lir += 1;
            }
            self.free -= 1;
        } else if !self.has(k, LIR) {
            self.q_links.unlink(&mut self.q, k);
        }
        self.move_to_top(k);
        self.fl[ku] |= RES;
        if !self.has(k, LIR) {
            if self.has(k, IN_S) {
                // A short reuse distance: LIR; the bottom LIR block is demoted.
                self.fl[ku] |= LIR;
                self.nr_lir += 1;
                if self.nr_lir > self.cap - self.hir_limit {
                    let b = self.bottom;
                    self.q_links.push_head(&mut self.q, b);
                    self.fl[b as usize] &= !(LIR | IN_S);
                    self.nr_lir -= 1;
                    self.find_bottom();
                }
            } else {
                self.q_links.push_head(&mut self.q, k);
            }
        }
        self.fl[ku] |= IN_S;
        hit
    }
    fn len(&self) -> usize {
        if self.cap < Self::MIN_SIZE {
            0
        } else {
            self.cap - self.free
        }
    }
    fn capacity(&self) -> usize {
        self.cap
    }
}
