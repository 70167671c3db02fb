//! LFU (libCacheSim `LFU.c`): evict from the lowest frequency; among objects of equal
//! frequency, the one that reached it first (each frequency is a FIFO). A new object has
//! frequency 1; frequencies are forgotten on eviction (no history, no aging).
use crate::list::{Links, List};
use crate::Cache;

pub struct Lfu {
    cap: usize,
    links: Links,
    /// `buckets[f]`: objects with frequency f (head = newest arrival).
    buckets: Vec<List>,
    freq: Vec<u32>,
    min_freq: usize,
    max_freq: usize,
    len: usize,
}

impl Lfu {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        Lfu { cap, links: Links::new(nr_keys), buckets: vec![List::default(); 2], freq: vec![0; nr_keys], min_freq: 1, max_freq: 1, len: 0 }
    }

    fn update_min_freq(&mut self) {
        let mut f = self.min_freq + 1;
        while f <= self.max_freq {
            if self.buckets[f].len > 0 {
                self.min_freq = f;
                break;
            }
            f += 1;
        }
    }
}

impl Lfu {
    /// Evict the oldest object of the lowest frequency; `referenced(k)` is asked for the
    /// candidate first (on-demand eviction) and a set answer counts as a hit.
    #[inline]
    fn evict_one(&mut self, referenced: &mut impl FnMut(u32) -> bool) -> u32 {
        loop {
            let m = self.min_freq;
            let v = self.buckets[m].tail;
            if referenced(v) {
                self.access(v);
                continue;
            }
            self.links.pop_tail(&mut self.buckets[m]);
            self.freq[v as usize] = 0;
            self.len -= 1;
            if self.buckets[m].len == 0 {
                self.update_min_freq();
            }
            return v;
        }
    }
}

impl Cache for Lfu {
    fn name(&self) -> &'static str {
        "lfu"
    }
    #[inline]
    fn access(&mut self, k: u32) -> bool {
        let ku = k as usize;
        let f = self.freq[ku] as usize;
        if f != 0 {
            let nf = f + 1;
            if nf >= self.buckets.len() {
                self.buckets.resize(nf + 1, List::default());
            }
            self.freq[ku] = nf as u32;
            if nf > self.max_freq {
                self.max_freq = nf;
            }
            self.links.unlink(&mut self.buckets[f], k);
            self.links.push_head(&mut self.buckets[nf], k);
            if self.min_freq == f && self.buckets[f].len == 0 {
                self.update_min_freq();
            }
            return true;
        }
        if self.cap < 1 {
            return false;
        }
        while self.len + 1 > self.cap {
            self.evict_one(&mut |_| false);
        }
        self.min_freq = 1;
        self.links.push_head(&mut self.buckets[1], k);
        self.freq[ku] = 1;
        self.len += 1;
        false
    }
    fn len(&self) -> usize {
        self.len
    }
    fn capacity(&self) -> usize {
        self.cap
    }
}

impl crate::evict::Evict for Lfu {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        Some(self.evict_one(&mut |k| referenced(k)))
    }
    fn grow(&mut self, n: usize) {
        self.links.grow(n);
        if n > self.freq.len() {
            self.freq.resize(n, 0);
        }
    }
}
