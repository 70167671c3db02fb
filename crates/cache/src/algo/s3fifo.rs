//! S3-FIFO (libCacheSim `S3FIFO.c`; Yang et al., SOSP 2023), defaults
//! `small-size-ratio=0.10, ghost-size-ratio=0.90, move-to-main-threshold=2`.
//!
//! Sizes: small = trunc(size × 0.1), main = size − small, ghost = trunc(size × 0.9) keys.
//! - Lookup: in small → freq += 1, hit. Else, if in the ghost, it is removed from the
//!   ghost and the coming insert goes to main. In main → freq += 1, hit.
//! - Insert (after eviction made room): a ghost hit goes to main; otherwise to small —
//!   except before the first eviction ever, when a full small queue sends newcomers to
//!   main (libCacheSim's variant). `s3fifo-paper` ([`S3FifoPaper`], libCacheSim's
//!   `S3FIFOv0`, "the original S3FIFO implementation used in" the paper) always inserts
//!   into small. New objects have freq 0.
//! - Evict: from main if main holds more than its share or small is empty, else from small.
//!   Small: pop the oldest; freq ≥ 2 → move to main (freq 0) and continue; else → ghost,
//!   done. Main: pop the oldest; freq ≥ 1 → reinsert with freq min(freq, 3) − 1
//!   (2-bit CLOCK); else evicted, done.
//! - The ghost is a FIFO of keys: inserting into a full ghost drops its oldest key.
use crate::list::{GhostFifo, Ring};
use crate::Cache;

const NONE: u8 = 0;
const SMALL: u8 = 1;
const MAIN: u8 = 2;

/// `PAPER`: the paper's insertion (always into small); `false`: libCacheSim's `S3FIFO`.
pub struct S3FifoOf<const PAPER: bool> {
    cap: usize,
    small_cap: usize,
    main_cap: usize,
    small: Ring,
    main: Ring,
    ghost: GhostFifo,
    loc: Vec<u8>,
    freq: Vec<u8>,
    has_evicted: bool,
}

/// libCacheSim's `S3FIFO` (`s3fifo`).
pub type S3Fifo = S3FifoOf<false>;
/// The paper's S3-FIFO, libCacheSim's `S3FIFOv0` (`s3fifo-paper`).
pub type S3FifoPaper = S3FifoOf<true>;

impl<const PAPER: bool> S3FifoOf<PAPER> {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        let small_cap = (cap as f64 * 0.10) as usize;
        let main_cap = cap - small_cap;
        let ghost_cap = (cap as f64 * 0.90) as usize;
        S3FifoOf {
            cap,
            small_cap,
            main_cap,
            small: Ring::new(small_cap.min(nr_keys) + 1),
            main: Ring::new(cap.min(nr_keys) + 1),
            ghost: GhostFifo::new(ghost_cap, nr_keys),
            loc: vec![NONE; nr_keys],
            freq: vec![0; nr_keys],
            has_evicted: false,
        }
    }

    /// Small's oldest: freq ≥ 2 → to main (freq 0), else → ghost and returned (`None`
    /// if small emptied into main). `referenced(k)` adds one to a candidate's freq first
    /// (eviction on demand; `|_| false` in `access`).
    #[inline]
    fn evict_small(&mut self, referenced: &mut impl FnMut(u32) -> bool) -> Option<u32> {
        while let Some(k) = self.small.pop() {
            if self.freq[k as usize].saturating_add(referenced(k) as u8) >= 2 {
                self.main.push(k);
                self.loc[k as usize] = MAIN;
                self.freq[k as usize] = 0;
            } else {
                self.loc[k as usize] = NONE;
                self.ghost.insert(k);
                return Some(k);
            }
        }
        None
    }

    /// Main's oldest: freq ≥ 1 → reinsert with min(freq, 3) − 1, else evicted and returned.
    #[inline]
    fn evict_main(&mut self, referenced: &mut impl FnMut(u32) -> bool) -> Option<u32> {
        while let Some(k) = self.main.pop() {
            let f = self.freq[k as usize].saturating_add(referenced(k) as u8);
            if f >= 1 {
                self.main.push(k);
                self.freq[k as usize] = f.min(3) - 1;
            } else {
                self.loc[k as usize] = NONE;
                return Some(k);
            }
        }
        None
    }

    /// One eviction step of a full cache (`None` when small only moved into main).
    #[inline]
    fn evict_step(&mut self, referenced: &mut impl FnMut(u32) -> bool) -> Option<u32> {
        self.has_evicted = true;
        if self.main.len() > self.main_cap || self.small.is_empty() {
            self.evict_main(referenced)
        } else {
            self.evict_small(referenced)
        }
    }
}

impl<const PAPER: bool> Cache for S3FifoOf<PAPER> {
    fn name(&self) -> &'static str {
        if PAPER {
            "s3fifo-paper"
        } else {
            "s3fifo"
        }
    }
    #[inline(always)]
    fn access(&mut self, k: u32) -> bool {
        let ku = k as usize;
        if self.loc[ku] != NONE {
            self.freq[ku] = self.freq[ku].saturating_add(1);
            return true;
        }
        let hit_on_ghost = self.ghost.remove(k);
        // can_insert: obj_size (1) <= small queue size.
        if self.small_cap < 1 {
            return false;
        }
        while self.small.len() + self.main.len() + 1 > self.cap {
            self.evict_step(&mut |_| false);
        }
        if hit_on_ghost {
            self.main.push(k);
            self.loc[ku] = MAIN;
        } else {
            // libCacheSim refuses objects as large as the small queue.
            if self.small_cap <= 1 {
                return false;
            }
            if !PAPER && !self.has_evicted && self.small.len() >= self.small_cap {
                self.main.push(k);
                self.loc[ku] = MAIN;
            } else {
                self.small.push(k);
                self.loc[ku] = SMALL;
            }
        }
        self.freq[ku] = 0;
        false
    }
    fn len(&self) -> usize {
        self.small.len() + self.main.len()
    }
    fn capacity(&self) -> usize {
        self.cap
    }
}

/// On demand: the eviction of a miss on a full cache, with each candidate's reference
/// (if any) counted as one more hit before its frequency is looked at.
impl<const PAPER: bool> crate::evict::Evict for S3FifoOf<PAPER> {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if self.len() == 0 {
            return None;
        }
        loop {
            if let Some(v) = self.evict_step(&mut |k| referenced(k)) {
                return Some(v);
            }
        }
    }
    fn grow(&mut self, n: usize) {
        self.ghost.grow(n);
        if n > self.loc.len() {
            self.loc.resize(n, NONE);
            self.freq.resize(n, 0);
        }
    }
}
