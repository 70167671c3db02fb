//! SIEVE (libCacheSim `Sieve.c`; Zhang et al., NSDI 2024): new objects enter at the head;
//! a hit sets the visited bit; eviction starts at the hand (the tail if no hand), clears
//! visited bits moving towards the head (wrapping to the tail), evicts the first
//! unvisited object and leaves the hand at its predecessor (towards the head).
use crate::list::{Links, List, NIL};
use crate::Cache;

pub struct Sieve {
    cap: usize,
    links: Links,
    list: List,
    hand: u32,
    /// Bit 0: resident; bit 1: visited.
    state: Vec<u8>,
}

impl Sieve {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        Sieve { cap, links: Links::new(nr_keys), list: List::default(), hand: NIL, state: vec![0; nr_keys] }
    }
}

impl Sieve {
    /// Move the hand to the first unvisited object (clearing visited bits, and asking
    /// `referenced` for each candidate first: on-demand eviction), unlink and return it.
    #[inline]
    fn evict_one(&mut self, referenced: &mut impl FnMut(u32) -> bool) -> u32 {
        let mut v = if self.hand == NIL { self.list.tail } else { self.hand };
        while self.state[v as usize] & 2 != 0 || referenced(v) {
            self.state[v as usize] = 1;
            v = self.links.prev(v);
            if v == NIL {
                v = self.list.tail;
            }
        }
        self.hand = self.links.prev(v);
        self.links.unlink(&mut self.list, v);
        self.state[v as usize] = 0;
        v
    }
}

impl Cache for Sieve {
    fn name(&self) -> &'static str {
        "sieve"
    }
    #[inline(always)]
    fn access(&mut self, k: u32) -> bool {
        let s = &mut self.state[k as usize];
        if *s & 1 != 0 {
            *s |= 2;
            return true;
        }
        if self.cap == 0 {
            return false;
        }
        if self.list.len >= self.cap {
            self.evict_one(&mut |_| false);
        }
        self.links.push_head(&mut self.list, k);
        self.state[k as usize] = 1;
        false
    }
    fn len(&self) -> usize {
        self.list.len
    }
    fn capacity(&self) -> usize {
        self.cap
    }
}

impl crate::evict::Evict for Sieve {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if self.list.len == 0 {
            return None;
        }
        Some(self.evict_one(&mut |k| referenced(k)))
    }
    fn grow(&mut self, n: usize) {
        self.links.grow(n);
        if n > self.state.len() {
            self.state.resize(n, 0);
        }
    }
}
