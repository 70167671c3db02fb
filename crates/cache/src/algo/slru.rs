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

pub struct Slru {
    cap: usize,
    seg_max: usize,
    links: Links,
    segs: [List; NSEG],
    seg: Vec<u8>,
    len: usize,
}

impl Slru {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        Slru {
            cap,
            seg_max: cap / NSEG,
            links: Links::new(nr_keys),
            segs: [List::default(); NSEG],
            seg: vec![NONE; nr_keys],
            len: 0,
        }
    }

    fn evict(&mut self) {
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
            self.evict();
            return;
        }
        let v = self.links.pop_tail(&mut self.segs[id]);
        self.links.push_head(&mut self.segs[id - 1], v);
        self.seg[v as usize] = (id - 1) as u8;
        while self.segs[id - 1].len > self.seg_max {
            self.cool(id - 1);
        }
    }
}

impl Cache for Slru {
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
            self.evict();
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
                self.evict();
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
