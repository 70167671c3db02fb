//! 2Q (libCacheSim `TwoQ.c`; Johnson & Shasha, VLDB 1994), defaults
//! `Ain-size-ratio=0.25, Aout-size-ratio=0.5`: A1in = trunc(0.25·c) (FIFO),
//! A1out = trunc(0.5·c) ghost keys (FIFO), Am = c − A1in (LRU).
//!
//! - Hit in A1in: nothing moves. A key in A1out is removed from it and the coming insert
//!   goes to Am (through Am's own `get`, which evicts Am's LRU if Am is full). Hit in Am:
//!   move to its head.
//! - A new key goes to A1in's head. Eviction (while the cache is full): if A1in holds more
//!   than its share, its oldest goes to A1out (as a ghost), else Am's LRU is evicted.
//! - Objects are admitted only if A1in's share is at least one object.
use crate::list::{GhostFifo, Links, List, Ring};
use crate::Cache;

const NONE: u8 = 0;
const AIN: u8 = 1;
const AM: u8 = 2;

pub struct TwoQ {
    cap: usize,
    ain_cap: usize,
    am_cap: usize,
    ain: Ring,
    aout: GhostFifo,
    links: Links,
    am: List,
    loc: Vec<u8>,
    /// On demand: the size A1in's share follows.
    run: crate::evict::RunSize,
}

impl TwoQ {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        let ain_cap = (cap as f64 * 0.25) as usize;
        let aout_cap = (cap as f64 * 0.5) as usize;
        TwoQ {
            cap,
            ain_cap,
            am_cap: cap - ain_cap,
            ain: Ring::new(ain_cap.min(nr_keys) + 1),
            aout: GhostFifo::new(aout_cap, nr_keys),
            links: Links::new(nr_keys),
            am: List::default(),
            loc: vec![NONE; nr_keys],
            run: Default::default(),
        }
    }
}

impl Cache for TwoQ {
    fn name(&self) -> &'static str {
        "2q"
    }
    #[inline]
    fn access(&mut self, k: u32) -> bool {
        let ku = k as usize;
        match self.loc[ku] {
            AIN => return true,
            AM => {
                self.links.move_to_head(&mut self.am, k);
                return true;
            }
            _ => {}
        }
        let hit_on_ghost = self.aout.remove(k);
        if self.ain_cap < 1 || self.cap < 1 {
            return false;
        }
        while self.ain.len() + self.am.len + 1 > self.cap {
            if self.ain.len() > self.ain_cap {
                let v = self.ain.pop().unwrap();
                self.aout.insert(v);
                self.loc[v as usize] = NONE;
            } else {
                let v = self.links.pop_tail(&mut self.am);
                self.loc[v as usize] = NONE;
            }
        }
        if hit_on_ghost {
            // Am->get(): Am's own LRU eviction at its share.
            if self.am_cap >= 1 {
                while self.am.len + 1 > self.am_cap {
                    let v = self.links.pop_tail(&mut self.am);
                    self.loc[v as usize] = NONE;
                }
                self.links.push_head(&mut self.am, k);
                self.loc[ku] = AM;
            }
        } else {
            self.ain.push(k);
            self.loc[ku] = AIN;
        }
        false
    }
    fn len(&self) -> usize {
        self.ain.len() + self.am.len
    }
    fn capacity(&self) -> usize {
        self.cap
    }
}

/// On demand (docs/model.md §1.14): Am has no limit of its own (a ghost hit never evicts
/// inside `access`); at each eviction A1in's share becomes max(1, trunc(0.25·c)) for c =
/// the objects resident when this run of evictions began ([`crate::evict::RunSize`]). If A1in holds more than that (or Am is empty) its oldest
/// goes to A1out — references to A1in are ignored, as in 2Q (the correlated-reference
/// period) — else Am's LRU goes, or, referenced since, moves to Am's head and the next
/// is tried.
impl TwoQ {
    pub fn on_demand(cap: usize, nr_keys: usize) -> Self {
        let mut q = TwoQ::new(cap, nr_keys);
        q.am_cap = usize::MAX;
        q
    }
}

impl crate::evict::Evict for TwoQ {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if self.len() == 0 {
            return None;
        }
        let c = self.run.at_evict(self.len()).0;
        self.ain_cap = ((c as f64 * 0.25) as usize).max(1);
        loop {
            if self.ain.len() > self.ain_cap || self.am.len == 0 {
                let v = self.ain.pop().unwrap();
                self.aout.insert(v);
                self.loc[v as usize] = NONE;
                return Some(v);
            }
            let v = self.am.tail;
            if referenced(v) {
                self.links.move_to_head(&mut self.am, v);
                continue;
            }
            self.links.pop_tail(&mut self.am);
            self.loc[v as usize] = NONE;
            return Some(v);
        }
    }
    fn grow(&mut self, n: usize) {
        self.aout.grow(n);
        self.links.grow(n);
        if n > self.loc.len() {
            self.loc.resize(n, NONE);
        }
    }
}
