//! Belady's MIN / OPT (libCacheSim `Belady.c`): offline; on a miss with a full cache,
//! evict the resident object whose next request is farthest in the future (never again
//! counts as infinitely far). The new object is always inserted (no bypass), as in
//! libCacheSim. Next-access times come from one backward pass over the trace.
use std::collections::BinaryHeap;

use crate::Cache;

pub struct Belady {
    cap: usize,
    next: Vec<i64>,
    t: usize,
    /// Next-access time of a resident key; `NOT_RES` otherwise.
    cur: Vec<i64>,
    heap: BinaryHeap<(i64, u32)>,
    len: usize,
}

const NOT_RES: i64 = i64::MIN;

impl Belady {
    pub fn new(cap: usize, keys: &[u32], nr_keys: u32) -> Self {
        let next = reclaimlab_trace::oracle::next_access(keys, nr_keys).into_iter().map(|n| if n < 0 { i64::MAX } else { n }).collect();
        Belady { cap, next, t: 0, cur: vec![NOT_RES; nr_keys as usize], heap: BinaryHeap::new(), len: 0 }
    }

    /// The next-access time of the request about to be made.
    pub(crate) fn upcoming(&self) -> i64 {
        self.next[self.t]
    }

    /// Skip the request about to be made (not admitted: Belady with bypass).
    pub(crate) fn skip(&mut self) {
        self.t += 1;
    }

    /// The farthest next-access time among resident objects (dropping stale heap entries).
    pub(crate) fn farthest(&mut self) -> i64 {
        while let Some(&(n, v)) = self.heap.peek() {
            if self.cur[v as usize] == n {
                return n;
            }
            self.heap.pop();
        }
        i64::MIN
    }

    pub(crate) fn is_resident(&self, k: u32) -> bool {
        self.cur[k as usize] != NOT_RES
    }

    #[cold]
    fn compact(&mut self) {
        let cur = &self.cur;
        let mut v: Vec<(i64, u32)> = std::mem::take(&mut self.heap).into_vec();
        v.retain(|&(n, k)| cur[k as usize] == n);
        self.heap = BinaryHeap::from(v);
    }
}

impl Cache for Belady {
    fn name(&self) -> &'static str {
        "belady"
    }
    /// `k` must be the trace's next key (the one the constructor saw at this position).
    #[inline]
    fn access(&mut self, k: u32) -> bool {
        let nx = self.next[self.t];
        self.t += 1;
        let ku = k as usize;
        if self.cur[ku] != NOT_RES {
            self.cur[ku] = nx;
            self.heap.push((nx, k));
            if self.heap.len() > 4 * self.cap + 1024 {
                self.compact();
            }
            return true;
        }
        if self.cap == 0 {
            return false;
        }
        if self.len >= self.cap {
            loop {
                let (n, v) = self.heap.pop().unwrap();
                if self.cur[v as usize] == n {
                    self.cur[v as usize] = NOT_RES;
                    self.len -= 1;
                    break;
                }
            }
        }
        self.cur[ku] = nx;
        self.heap.push((nx, k));
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
