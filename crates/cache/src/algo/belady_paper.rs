//! Belady's MIN as the paper defines it (Belady, IBM Systems Journal 1966; Mattson et
//! al. 1970): on a miss with a full cache, the missed object competes with the residents
//! — if its own next request is the farthest (or never), it is not admitted (bypass);
//! otherwise the resident with the farthest next request is evicted. This is optimal
//! among caches that may bypass, so it never misses more than `belady` (libCacheSim's
//! always-admit variant). Offline: needs the trace up front.
use super::belady::Belady;
use crate::Cache;

pub struct BeladyPaper {
    inner: Belady,
}

impl BeladyPaper {
    pub fn new(cap: usize, keys: &[u32], nr_keys: u32) -> Self {
        BeladyPaper { inner: Belady::new(cap, keys, nr_keys) }
    }
}

impl Cache for BeladyPaper {
    fn name(&self) -> &'static str {
        "belady-paper"
    }
    /// `k` must be the trace's next key (the one the constructor saw at this position).
    #[inline]
    fn access(&mut self, k: u32) -> bool {
        let b = &mut self.inner;
        if !b.is_resident(k) && b.capacity() > 0 && b.len() >= b.capacity() {
            let nx = b.upcoming();
            if nx >= b.farthest() {
                b.skip();
                return false;
            }
        }
        b.access(k)
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn capacity(&self) -> usize {
        self.inner.capacity()
    }
}
