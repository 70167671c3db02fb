//! CAR, CLOCK with Adaptive Replacement (Bansal & Modha, FAST 2004), as the paper's
//! Figure 2 states it. The `libcachesim` package does not ship CAR (libCacheSim's C
//! `CAR.c` discards ghosts under different conditions), so this is the paper's definition.
//!
//! Two clocks T1 (seen once recently) and T2 (seen at least twice) hold the pages, each
//! with a reference bit; two LRU ghost lists B1/B2 remember pages evicted from them;
//! `p` is the adaptive target size of T1 (a float, as in ARC here).
//! - Hit: set the page's reference bit (nothing moves).
//! - Miss, cache full: REPLACE; then, if the page is in neither ghost, discard B1's LRU
//!   if |T1|+|B1| = c, else B2's LRU if |T1|+|T2|+|B1|+|B2| = 2c.
//! - Miss, not in a ghost: insert at T1's tail (behind the hand), bit clear. In B1:
//!   p = min(p + max(1, |B2|/|B1|), c); in B2: p = max(p − max(1, |B1|/|B2|), 0); then the
//!   page leaves the ghost and is inserted at T2's tail, bit clear.
//! - REPLACE: repeat { if |T1| ≥ max(1, p): T1's head (the hand) with bit clear → MRU
//!   of B1, done; with bit set → clear it, to T2's tail. Else: T2's head with bit clear →
//!   MRU of B2, done; with bit set → clear it, to T2's tail }.
//!
//! A clock is a FIFO whose head is under the hand, so T1/T2 are intrusive lists: `tail`
//! of a [`List`] is the clock head (oldest), `head` the clock tail (newest).
use crate::list::{Links, List};
use crate::Cache;

const T1: u8 = 1;
const T2: u8 = 2;
const B1: u8 = 3;
const B2: u8 = 4;

pub struct Car {
    cap: usize,
    links: Links,
    t1: List,
    t2: List,
    b1: List,
    b2: List,
    p: f64,
    state: Vec<u8>,
    refbit: Vec<bool>,
}

impl Car {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        Car {
            cap,
            links: Links::new(nr_keys),
            t1: List::default(),
            t2: List::default(),
            b1: List::default(),
            b2: List::default(),
            p: 0.0,
            state: vec![0; nr_keys],
            refbit: vec![false; nr_keys],
        }
    }

    /// Current target size of T1.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// REPLACE; `referenced(k)` is asked for each page under a hand before its bit is
    /// looked at (on-demand eviction: a set answer sets the bit). Returns the page that
    /// went to a ghost list.
    #[inline]
    fn replace(&mut self, referenced: &mut impl FnMut(u32) -> bool) -> u32 {
        loop {
            // `|| T2 empty`: only on demand (a cache below c can have |T1| < p and an
            // empty T2); a full cache with an empty T2 has |T1| = c ≥ p anyway.
            let from_t1 = self.t1.len as f64 >= self.p.max(1.0) || self.t2.len == 0;
            let h = if from_t1 { self.links.pop_tail(&mut self.t1) } else { self.links.pop_tail(&mut self.t2) };
            if !self.refbit[h as usize] && !referenced(h) {
                let (ghost, st) = if from_t1 { (&mut self.b1, B1) } else { (&mut self.b2, B2) };
                self.links.push_head(ghost, h);
                self.state[h as usize] = st;
                return h;
            }
            self.refbit[h as usize] = false;
            self.links.push_head(&mut self.t2, h);
            self.state[h as usize] = T2;
        }
    }

    fn drop_lru(&mut self, which: u8) {
        let l = if which == B1 { &mut self.b1 } else { &mut self.b2 };
        let g = self.links.pop_tail(l);
        self.state[g as usize] = 0;
    }

    #[inline(never)]
    fn miss(&mut self, k: u32) {
        let c = self.cap;
        if c == 0 {
            return;
        }
        let st = self.state[k as usize];
        let in_ghost = st == B1 || st == B2;
        if self.t1.len + self.t2.len == c {
            self.replace(&mut |_| false);
            if !in_ghost {
                if self.t1.len + self.b1.len == c {
                    self.drop_lru(B1);
                } else if self.t1.len + self.t2.len + self.b1.len + self.b2.len == 2 * c {
                    self.drop_lru(B2);
                }
            }
        }
        // The ghost lengths are read after REPLACE, as in the paper's line order.
        match st {
            B1 => {
                let d = (self.b2.len as f64 / self.b1.len as f64).max(1.0);
                self.p = (self.p + d).min(c as f64);
                self.links.unlink(&mut self.b1, k);
            }
            B2 => {
                let d = (self.b1.len as f64 / self.b2.len as f64).max(1.0);
                self.p = (self.p - d).max(0.0);
                self.links.unlink(&mut self.b2, k);
            }
            _ => {}
        }
        self.refbit[k as usize] = false;
        if in_ghost {
            self.links.push_head(&mut self.t2, k);
            self.state[k as usize] = T2;
        } else {
            self.links.push_head(&mut self.t1, k);
            self.state[k as usize] = T1;
        }
    }
}

impl Cache for Car {
    fn name(&self) -> &'static str {
        "car"
    }
    #[inline(always)]
    fn access(&mut self, k: u32) -> bool {
        let st = self.state[k as usize];
        if st == T1 || st == T2 {
            self.refbit[k as usize] = true;
            return true;
        }
        self.miss(k);
        false
    }
    fn len(&self) -> usize {
        self.t1.len + self.t2.len
    }
    fn capacity(&self) -> usize {
        self.cap
    }
}

/// On demand: REPLACE, then the directory bound the paper applies after it for a page
/// in no ghost (the coming fault's ghost state is not known yet).
impl crate::evict::Evict for Car {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if self.t1.len + self.t2.len == 0 {
            return None;
        }
        let v = self.replace(&mut |k| referenced(k));
        let c = self.cap;
        if self.t1.len + self.b1.len >= c && self.b1.len > 0 {
            self.drop_lru(B1);
        } else if self.t1.len + self.t2.len + self.b1.len + self.b2.len >= 2 * c && self.b2.len > 0 {
            self.drop_lru(B2);
        }
        Some(v)
    }
    fn grow(&mut self, n: usize) {
        self.links.grow(n);
        if n > self.state.len() {
            self.state.resize(n, 0);
            self.refbit.resize(n, false);
        }
    }
}
