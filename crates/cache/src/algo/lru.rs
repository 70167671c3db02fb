//! LRU (libCacheSim `LRU.c`): hit moves to the head; a miss evicts the tail when full.
//! A key is resident iff it is on the list ([`Links::on`]: no membership array).
use crate::list::{Links, List};
use crate::Cache;

pub struct Lru {
    cap: usize,
    links: Links,
    list: List,
}

impl Lru {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        Lru { cap, links: Links::new(nr_keys), list: List::default() }
    }
}

impl Cache for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }
    #[inline(always)]
    fn access(&mut self, k: u32) -> bool {
        if self.links.on(&self.list, k) {
            self.links.move_to_head(&mut self.list, k);
            return true;
        }
        if self.cap == 0 {
            return false;
        }
        if self.list.len >= self.cap {
            let t = self.links.pop_tail(&mut self.list);
            self.links.detach(t);
        }
        self.links.push_head(&mut self.list, k);
        false
    }
    fn len(&self) -> usize {
        self.list.len
    }
    fn capacity(&self) -> usize {
        self.cap
    }
    #[inline(always)]
    fn prefetch(&self, k: u32) {
        self.links.prefetch(k);
    }
    #[inline(always)]
    fn prefetch_neighbours(&self, k: u32) {
        self.links.prefetch_neighbours(k);
        self.links.prefetch_tail(&self.list);
    }
}

impl crate::evict::Evict for Lru {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        loop {
            let t = self.list.tail;
            if t == crate::list::NIL {
                return None;
            }
            if referenced(t) {
                self.links.move_to_head(&mut self.list, t);
                continue;
            }
            self.links.pop_tail(&mut self.list);
            self.links.detach(t);
            return Some(t);
        }
    }
    fn grow(&mut self, n: usize) {
        self.links.grow(n);
    }
}
