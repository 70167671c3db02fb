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

const NSEG: usize = 4;
const NONE: u8 = u8::MAX;

/// `ON_DEMAND`: for an owner that evicts ([`crate::evict::Evict`]); `false`: libCacheSim's.
pub struct SlruOf<const ON_DEMAND: bool> {
    cap: usize,
    seg_max: usize,
    links: Links,
    segs: [List; NSEG],
    seg: Vec<u8>,
    len: usize,
    /// On demand: the size the segments' shares follow.
    run: crate::evict::RunSize,
}

/// libCacheSim's `SLRU` (`slru`).
pub type Slru = SlruOf<false>;

impl<const ON_DEMAND: bool> SlruOf<ON_DEMAND> {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        SlruOf {
            cap,
            seg_max: cap / NSEG,
            links: Links::new(nr_keys),
            segs: [List::default(); NSEG],
            seg: vec![NONE; nr_keys],
            len: 0,
            run: Default::default(),
        }
    }

    fn evict_lowest(&mut self) {
        for i in 0..NSEG {
            if self.segs[i].len > 0 {
                let v = self.links.pop_tail(&mut self.segs[i]);
                self.seg[v as usize] = NONE;
                self.len -= 1;
                return;
            }
        }
    }

    fn cool(&mut self, id: usize) {
        if id == 0 {
            self.evict_lowest();
            return;
        }
        let v = self.links.pop_tail(&mut self.segs[id]);
        self.links.push_head(&mut self.segs[id - 1], v);
        self.seg[v as usize] = (id - 1) as u8;
        // On demand, segment 0 may exceed its share: only the owner evicts.
        while self.segs[id - 1].len > self.seg_max && !(ON_DEMAND && id == 1) {
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
        let s = self.seg[k as usize];
        if s != NONE {
            let s = s as usize;
            if s == NSEG - 1 {
                self.links.move_to_head(&mut self.segs[s], k);
            } else {
                self.links.unlink(&mut self.segs[s], k);
                self.links.push_head(&mut self.segs[s + 1], k);
                self.seg[k as usize] = (s + 1) as u8;
                while self.segs[s + 1].len > self.seg_max {
                    self.cool(s + 1);
                }
            }
            return true;
        }
        if self.cap < 1 || self.seg_max < 1 {
            return false;
        }
        while self.len + 1 > self.cap {
            self.evict_lowest();
        }
        let mut nth = NSEG;
        for i in 0..NSEG {
            if self.segs[i].len < self.seg_max {
                nth = i;
                break;
            }
        }
        if nth == NSEG {
            while self.len + 1 > self.cap {
                self.evict_lowest();
            }
            nth = 0;
        }
        self.links.push_head(&mut self.segs[nth], k);
        self.seg[k as usize] = nth as u8;
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

/// SLRU for an owner that evicts (`cache:slru`).
pub type SlruOnDemand = SlruOf<true>;

/// On demand (docs/model.md §1.14): segment 0 has no limit (a hit's cooling never evicts
/// inside `access`); at each eviction every segment's share becomes max(1, trunc(c/4))
/// for c = the objects resident when this run of evictions began
/// ([`crate::evict::RunSize`]), and the tail of the lowest non-empty segment goes —
/// or, referenced since, is looked up as a hit (promoted one segment) and the next is tried.
impl crate::evict::Evict for SlruOf<true> {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        self.seg_max = (self.run.at_evict(self.len).0 / NSEG).max(1);
        loop {
            let i = (0..NSEG).find(|&i| self.segs[i].len > 0).unwrap();
            let v = self.segs[i].tail;
            if referenced(v) {
                self.access(v);
                continue;
            }
            self.evict_lowest();
            return Some(v);
        }
    }
    fn grow(&mut self, n: usize) {
        self.links.grow(n);
        if n > self.seg.len() {
            self.seg.resize(n, NONE);
        }
    }
}
