//! ARC (libCacheSim `ARC.c`; Megiddo & Modha, FAST 2003). T1/T2 hold data, B1/B2 ghosts;
//! `p` (target size of T1) is a float as in libCacheSim (the paper's pseudo-code uses
//! integer δ; libCacheSim follows the paper's float arithmetic).
//!
//! - Hit in T1 → head of T2; hit in T2 → head of T2.
//! - Ghost hit in B1: p = min(p + max(|B2|/|B1|, 1), c); in B2: p = max(p − max(|B1|/|B2|, 1), 0);
//!   the key leaves the ghost; while the cache is full REPLACE runs; insert at T2's head.
//! - Complete miss, cache full: if |T1|+|B1|+1 > c: if B1 non-empty drop B1's LRU and
//!   REPLACE, else evict T1's LRU without a ghost; otherwise, if |T1|+|B1|+|T2|+|B2| ≥ 2c
//!   drop B2's LRU (if any), then REPLACE. Insert at T1's head.
//! - REPLACE: if (|T1| > 0 and (|T1| > p or (|T1| = p and the request hit B2))) or
//!   |T2| = 0: T1's LRU → B1's head, else T2's LRU → B2's head.
use crate::list::{Links, List};
use crate::Cache;

const T1: u8 = 1;
const T2: u8 = 2;
const B1: u8 = 3;
const B2: u8 = 4;

pub struct Arc {
    cap: usize,
    links: Links,
    t1: List,
    t2: List,
    b1: List,
    b2: List,
    p: f64,
    state: Vec<u8>,
}

impl Arc {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        Arc { cap, links: Links::new(nr_keys), t1: List::default(), t2: List::default(), b1: List::default(), b2: List::default(), p: 0.0, state: vec![0; nr_keys] }
    }

    /// Current target size of T1.
    pub fn p(&self) -> f64 {
        self.p
    }

    #[inline]
    fn replace(&mut self, in_b2: bool) {
        let t1 = self.t1.len as f64;
        if (self.t1.len > 0 && (t1 > self.p || (t1 == self.p && in_b2))) || self.t2.len == 0 {
            let v = self.links.pop_tail(&mut self.t1);
            self.links.push_head(&mut self.b1, v);
            self.state[v as usize] = B1;
        } else {
            let v = self.links.pop_tail(&mut self.t2);
            self.links.push_head(&mut self.b2, v);
            self.state[v as usize] = B2;
        }
    }

    #[inline(never)]
    fn miss(&mut self, k: u32, st: u8) {
        let c = self.cap;
        let ghost_hit = st == B1 || st == B2;
        if st == B1 {
            let delta = (self.b2.len as f64 / self.b1.len as f64).max(1.0);
            self.p = (self.p + delta).min(c as f64);
            self.links.unlink(&mut self.b1, k);
        } else if st == B2 {
            let delta = (self.b1.len as f64 / self.b2.len as f64).max(1.0);
            self.p = (self.p - delta).max(0.0);
            self.links.unlink(&mut self.b2, k);
        }
        self.state[k as usize] = 0;
        if c == 0 {
            return;
        }
        while self.t1.len + self.t2.len + 1 > c {
            if ghost_hit {
                self.replace(st == B2);
            } else if self.t1.len + self.b1.len + 1 > c {
                if self.b1.len > 0 {
                    let g = self.links.pop_tail(&mut self.b1);
                    self.state[g as usize] = 0;
                    self.replace(false);
                } else {
                    let v = self.links.pop_tail(&mut self.t1);
                    self.state[v as usize] = 0;
                }
            } else {
                if self.t1.len + self.b1.len + self.t2.len + self.b2.len >= 2 * c && self.b2.len > 0 {
                    let g = self.links.pop_tail(&mut self.b2);
                    self.state[g as usize] = 0;
                }
                self.replace(false);
            }
        }
        if ghost_hit {
            self.links.push_head(&mut self.t2, k);
            self.state[k as usize] = T2;
        } else {
            self.links.push_head(&mut self.t1, k);
            self.state[k as usize] = T1;
        }
    }
}

impl Cache for Arc {
    fn name(&self) -> &'static str {
        "arc"
    }
    #[inline(always)]
    fn access(&mut self, k: u32) -> bool {
        let st = self.state[k as usize];
        if st == T2 {
            self.links.move_to_head(&mut self.t2, k);
            return true;
        }
        if st == T1 {
            self.links.unlink(&mut self.t1, k);
            self.links.push_head(&mut self.t2, k);
            self.state[k as usize] = T2;
            return true;
        }
        self.miss(k, st);
        false
    }
    fn len(&self) -> usize {
        self.t1.len + self.t2.len
    }
    fn capacity(&self) -> usize {
        self.cap
    }
    #[inline(always)]
    fn prefetch(&self, k: u32) {
        crate::list::prefetch(&self.state, k as usize);
        self.links.prefetch(k);
    }
    #[inline(always)]
    fn prefetch_neighbours(&self, k: u32) {
        self.links.prefetch_neighbours(k);
    }
}

/// On demand: first the directory bound of a complete miss on a full cache (drop B1's
/// LRU if |T1|+|B1| ≥ c, else B2's if the four lists hold ≥ 2c), then REPLACE; a
/// referenced candidate is a hit (to T2's head) and REPLACE looks again.
impl crate::evict::Evict for Arc {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if self.t1.len + self.t2.len == 0 {
            return None;
        }
        let c = self.cap;
        if self.t1.len + self.b1.len >= c && self.b1.len > 0 {
            let g = self.links.pop_tail(&mut self.b1);
            self.state[g as usize] = 0;
        } else if self.t1.len + self.b1.len + self.t2.len + self.b2.len >= 2 * c && self.b2.len > 0 {
            let g = self.links.pop_tail(&mut self.b2);
            self.state[g as usize] = 0;
        }
        loop {
            let t1 = self.t1.len as f64;
            let from_t1 = (self.t1.len > 0 && t1 > self.p) || self.t2.len == 0;
            let v = if from_t1 { self.t1.tail } else { self.t2.tail };
            if referenced(v) {
                self.access(v);
                continue;
            }
            self.replace(false);
            return Some(v);
        }
    }
    fn grow(&mut self, n: usize) {
        self.links.grow(n);
        if n > self.state.len() {
            self.state.resize(n, 0);
        }
    }
}
