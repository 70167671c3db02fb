//! FIFO (libCacheSim `FIFO.c`): hits change nothing; a miss evicts the oldest when full.
use crate::list::Ring;
use crate::Cache;

pub struct Fifo {
    cap: usize,
    q: Ring,
    resident: Vec<bool>,
}

impl Fifo {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        Fifo { cap, q: Ring::new(cap.min(nr_keys.max(1))), resident: vec![false; nr_keys] }
    }
}

impl Cache for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }
    #[inline(always)]
    fn access(&mut self, k: u32) -> bool {
        if self.resident[k as usize] {
            return true;
        }
        if self.cap == 0 {
            return false;
        }
        if self.q.len() >= self.cap {
            let t = self.q.pop().unwrap();
            self.resident[t as usize] = false;
        }
        self.q.push(k);
        self.resident[k as usize] = true;
        false
    }
    fn len(&self) -> usize {
        self.q.len()
    }
    fn capacity(&self) -> usize {
        self.cap
    }
}

/// FIFO ignores references: the oldest key goes.
impl crate::evict::Evict for Fifo {
    fn evict(&mut self, _referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        let t = self.q.pop()?;
        self.resident[t as usize] = false;
        Some(t)
    }
    fn grow(&mut self, n: usize) {
        if n > self.resident.len() {
            self.resident.resize(n, false);
        }
    }
}
