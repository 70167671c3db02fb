//! CLOCK (libCacheSim `Clock.c`, defaults `init-freq=0, n-bit-counter=1`): a FIFO whose
//! tail object, if its reference bit is set, has the bit cleared and is moved to the head
//! instead of being evicted (second chance). A hit sets the bit; an insert clears it.
//!
//! Implemented as the equivalent circular array with a hand: once the cache is full,
//! "move the tail to the head" is "advance the hand", and "evict the tail, insert the new
//! object at the head" is "overwrite the slot under the hand, advance".
//!
//! Eviction on demand ([`crate::evict::Evict`]) leaves the victim's slot empty; the next
//! new object takes the oldest empty slot (the frame-based CLOCK of a kernel: a page is
//! read into the frame that was freed), so the hand order stays that of the frames.
use crate::Cache;

pub struct Clock {
    cap: usize,
    slots: Vec<u32>,
    hand: usize,
    /// Bit 0: resident; bit 1: referenced.
    state: Vec<u8>,
    /// Slots emptied by on-demand eviction, oldest first (always empty in `cachesim`).
    holes: std::collections::VecDeque<u32>,
}

const HOLE: u32 = u32::MAX;

/// Slots ahead of the hand whose key's state the hand's sweep prefetches.
const HAND_AHEAD: usize = 8;

const RES: u8 = 1;
const REF: u8 = 2;

impl Clock {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        Clock { cap, slots: Vec::with_capacity(cap.min(nr_keys)), hand: 0, state: vec![0; nr_keys], holes: std::collections::VecDeque::new() }
    }
}

impl Cache for Clock {
    fn name(&self) -> &'static str {
        "clock"
    }
    #[inline(always)]
    fn access(&mut self, k: u32) -> bool {
        let s = &mut self.state[k as usize];
        if *s & RES != 0 {
            *s |= REF;
            return true;
        }
        if self.cap == 0 {
            return false;
        }
        if let Some(i) = self.holes.pop_front() {
            self.slots[i as usize] = k;
            self.state[k as usize] = RES;
            return false;
        }
        if self.slots.len() < self.cap {
            self.slots.push(k);
            self.state[k as usize] = RES;
            return false;
        }
        loop {
            // The hand visits keys in slot order, each at random in `state`: ask for
            // the state of the key HAND_AHEAD slots on at every step.
            if let Some(&a) = self.slots.get(self.hand + HAND_AHEAD) {
                crate::list::prefetch(&self.state, a as usize);
            }
            let v = self.slots[self.hand] as usize;
            if self.state[v] & REF == 0 {
                self.state[v] = 0;
                break;
            }
            self.state[v] = RES;
            self.hand += 1;
            if self.hand == self.cap {
                self.hand = 0;
            }
        }
        self.slots[self.hand] = k;
        self.state[k as usize] = RES;
        self.hand += 1;
        if self.hand == self.cap {
            self.hand = 0;
        }
        false
    }
    fn len(&self) -> usize {
        self.slots.len() - self.holes.len()
    }
    fn capacity(&self) -> usize {
        self.cap
    }
    #[inline(always)]
    fn prefetch(&self, k: u32) {
        crate::list::prefetch(&self.state, k as usize);
    }
}

impl crate::evict::Evict for Clock {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if self.len() == 0 {
            return None;
        }
        loop {
            if self.hand >= self.slots.len() {
                self.hand = 0;
            }
            let v = self.slots[self.hand];
            let here = self.hand;
            self.hand += 1;
            if v == HOLE {
                continue;
            }
            if self.state[v as usize] & REF != 0 || referenced(v) {
                self.state[v as usize] = RES;
                continue;
            }
            self.state[v as usize] = 0;
            self.slots[here] = HOLE;
            self.holes.push_back(here as u32);
            return Some(v);
        }
    }
    fn grow(&mut self, n: usize) {
        if n > self.state.len() {
            self.state.resize(n, 0);
        }
    }
}
