//! SLRU (libCacheSim `SLRU.c`, defaults: 4 segments of trunc(c/4) objects each).
//!
//! - Insert goes to the lowest segment with room; if none has room, evict (while the
//!   cache is full) and insert into segment 0 (which may then exceed its share).
//! - A hit in the top segment moves to its head; a hit in segment i moves to the head of
//!   segment i+1, and while segment j overflows its tail is demoted to the head of j−1
//!   ("cooling"); overflow of segment 0 evicts — so a hit can evict.
//! - Eviction takes the tail of the lowest non-empty segment.
//! - Objects are admitted only if the cache holds at least one per segment (c ≥ 4).
use crate::list::{Links, List};
use crate::Cache;

pub(crate) const NSEG: usize = 4;
const NONE: u8 = u8::MAX;

/// Four LRU segments over the keys, with a segment number per key: what libCacheSim's
/// `slru` and the paper's SLRU ([`super::slru_paper`]) share; they differ in where a miss
/// enters, what a full cache evicts and how an overflowing segment cools.
pub(crate) struct Segments {
    pub cap: usize,
    /// Objects per segment (trunc(c/4)).
    pub seg_max: usize,
    links: Links,
    pub segs: [List; NSEG],
    seg: Vec<u8>,
    pub len: usize,
}

impl Segments {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        Segments { cap, seg_max: cap / NSEG, links: Links::new(nr_keys), segs: [List::default(); NSEG], seg: vec![NONE; nr_keys], len: 0 }
    }
    /// A hit on `k`: true if resident. In the top segment it moves to the head; below,
    /// to the head of the next segment up, returned (which may now overflow).
    #[inline]
    pub fn hit(&mut self, k: u32) -> Option<Option<usize>> {
        let s = self.seg[k as usize];
        if s == NONE {
            return None;
        }
        let s = s as usize;
        if s == NSEG - 1 {
            self.links.move_to_head(&mut self.segs[s], k);
            return Some(None);
        }
        self.links.unlink(&mut self.segs[s], k);
        self.put(s + 1, k);
        Some(Some(s + 1))
    }
    /// A new object at the head of segment `s`.
    pub fn insert(&mut self, s: usize, k: u32) {
        self.put(s, k);
        self.len += 1;
    }
    /// Evict the tail of segment `s` (not empty) and return it.
    pub fn evict_tail(&mut self, s: usize) -> u32 {
        let v = self.links.pop_tail(&mut self.segs[s]);
        self.seg[v as usize] = NONE;
        self.len -= 1;
        v
    }
    /// Move the tail of segment `s` (> 0) to the head of segment `s - 1`.
    pub fn demote(&mut self, s: usize) {
        let v = self.links.pop_tail(&mut self.segs[s]);
        self.put(s - 1, v);
    }
    fn put(&mut self, s: usize, k: u32) {
        self.links.push_head(&mut self.segs[s], k);
        self.seg[k as usize] = s as u8;
    }
    pub fn grow(&mut self, n: usize) {
        self.links.grow(n);
        if n > self.seg.len() {
            self.seg.resize(n, NONE);
        }
    }
}

/// `ON_DEMAND`: for an owner that evicts ([`crate::evict::Evict`]); `false`: libCacheSim's.
pub struct SlruOf<const ON_DEMAND: bool> {
    s: Segments,
    /// On demand: the size the segments' shares follow.
    run: crate::evict::RunSize,
}

/// libCacheSim's `SLRU` (`slru`).
pub type Slru = SlruOf<false>;

impl<const ON_DEMAND: bool> SlruOf<ON_DEMAND> {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        SlruOf { s: Segments::new(cap, nr_keys), run: Default::default() }
    }

    fn evict_lowest(&mut self) {
        if let Some(i) = (0..NSEG).find(|&i| self.s.segs[i].len > 0) {
            self.s.evict_tail(i);
        }
    }

    fn cool(&mut self, id: usize) {
        if id == 0 {
            self.evict_lowest();
            return;
        }
        self.s.demote(id);
        // On demand, segment 0 may exceed its share: only the owner evicts.
        while self.s.segs[id - 1].len > self.s.seg_max && !(ON_DEMAND && id == 1) {
            self.cool(id - 1);
        }
    }
}

impl<const ON_DEMAND: bool> Cache for SlruOf<ON_DEMAND> {
    fn name(&self) -> &'static str {
        "slru"
    }
    #[inline]
    fn access(&mut self, k: u32) -> bool {
        if let Some(up) = self.s.hit(k) {
            if let Some(j) = up {
                while self.s.segs[j].len > self.s.seg_max {
                    self.cool(j);
                }
            }
            return true;
        }
        if self.s.cap < 1 || self.s.seg_max < 1 {
            return false;
        }
        while self.s.len + 1 > self.s.cap {
            self.evict_lowest();
        }
        let nth = match (0..NSEG).find(|&i| self.s.segs[i].len < self.s.seg_max) {
            Some(i) => i,
            None => {
                while self.s.len + 1 > self.s.cap {
                    self.evict_lowest();
                }
                0
            }
        };
        self.s.insert(nth, k);
        false
    }
    fn len(&self) -> usize {
        self.s.len
    }
    fn capacity(&self) -> usize {
        self.s.cap
    }
}

/// SLRU for an owner that evicts (`cache:slru`).
pub type SlruOnDemand = SlruOf<true>;

/// On demand (docs/model.md §1.14): segment 0 has no limit (a hit's cooling never evicts
/// inside `access`); at each eviction every segment's share becomes max(1, trunc(c/4))
/// for c = the objects resident when this run of evictions began
/// ([`crate::evict::RunSize`]), and the tail of the lowest non-empty segment goes —
/// or, referenced since, is looked up as a hit (promoted one segment) and the next is tried.
impl crate::evict::Evict for SlruOf<true> {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if self.s.len == 0 {
            return None;
        }
        self.s.seg_max = (self.run.at_evict(self.s.len).0 / NSEG).max(1);
        loop {
            let i = (0..NSEG).find(|&i| self.s.segs[i].len > 0).unwrap();
            let v = self.s.segs[i].tail;
            if referenced(v) {
                self.access(v);
                continue;
            }
            self.s.evict_tail(i);
            return Some(v);
        }
    }
    fn grow(&mut self, n: usize) {
        self.s.grow(n);
    }
}
