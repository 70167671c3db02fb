//! Classic segmented LRU (Karedla, Love & Wherry, IEEE Computer 1994), with
//! libCacheSim's four segments: segment 0 is the probationary segment, 1–3 protected.
//!
//! - A miss always enters the head of the probationary segment (libCacheSim's `slru`
//!   fills the lowest segment with room, so during warm-up new objects land in protected
//!   segments); when the cache is full, the probationary segment's tail is evicted first.
//! - Protected segments hold at most trunc(c/4) objects each; the probationary segment
//!   holds whatever they leave (c − protected), as in the paper.
//! - A hit in segment i < 3 moves the object to the head of segment i+1; an overflowing
//!   protected segment demotes its tail to the head of the segment below. A hit in the
//!   top segment moves to its head.
//! - Objects are admitted only if c ≥ 4 (one per segment, as `slru`).
use crate::list::{Links, List};
use crate::Cache;

const NSEG: usize = 4;
const NONE: u8 = u8::MAX;

pub struct SlruPaper {
    cap: usize,
    seg_max: usize,
    links: Links,
    segs: [List; NSEG],
    seg: Vec<u8>,
    len: usize,
}

impl SlruPaper {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        SlruPaper {
            cap,
            seg_max: cap / NSEG,
            links: Links::new(nr_keys),
            segs: [List::default(); NSEG],
            seg: vec![NONE; nr_keys],
            len: 0,
        }
    }

    fn put(&mut self, s: usize, k: u32) {
        self.links.push_head(&mut self.segs[s], k);
        self.seg[k as usize] = s as u8;
    }
}

impl Cache for SlruPaper {
    fn name(&self) -> &'static str {
        "slru-paper"
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
                self.put(s + 1, k);
                let mut j = s + 1;
                while j > 0 && self.segs[j].len > self.seg_max {
                    let v = self.links.pop_tail(&mut self.segs[j]);
                    self.put(j - 1, v);
                    j -= 1;
                }
            }
            return true;
        }
        if self.cap < NSEG {
            return false;
        }
        if self.len == self.cap {
            // The protected segments hold at most 3c/4, so the probationary one is not empty.
            let v = self.links.pop_tail(&mut self.segs[0]);
            self.seg[v as usize] = NONE;
            self.len -= 1;
        }
        self.put(0, k);
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
