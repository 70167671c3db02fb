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
//!
//! The segments themselves are libCacheSim's ([`super::slru::Segments`]).
use super::slru::{Segments, NSEG};
use crate::Cache;

pub struct SlruPaper {
    s: Segments,
}

impl SlruPaper {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        SlruPaper { s: Segments::new(cap, nr_keys) }
    }
}

impl Cache for SlruPaper {
    fn name(&self) -> &'static str {
        "slru-paper"
    }
    #[inline]
    fn access(&mut self, k: u32) -> bool {
        if let Some(up) = self.s.hit(k) {
            if let Some(mut j) = up {
                while j > 0 && self.s.segs[j].len > self.s.seg_max {
                    self.s.demote(j);
                    j -= 1;
                }
            }
            return true;
        }
        if self.s.cap < NSEG {
            return false;
        }
        if self.s.len == self.s.cap {
            // The protected segments hold at most 3c/4, so the probationary one is not empty.
            self.s.evict_tail(0);
        }
        self.s.insert(0, k);
        false
    }
    fn len(&self) -> usize {
        self.s.len
    }
    fn capacity(&self) -> usize {
        self.s.cap
    }
}
