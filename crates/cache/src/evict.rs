//! Eviction on demand: an algorithm driven by an owner that decides *when* to evict —
//! the simulated kernel's reclaim (`reclaimlab-core`'s `cache:` policies) — while the
//! algorithm decides *what*.
//!
//! The owner builds the algorithm with a capacity no resident set can reach (so
//! [`Cache::access`] never evicts by itself), reports faults and accesses it sees as
//! `access(k)`, and asks for victims with [`Evict::evict`]. Accesses the owner does not
//! see one by one (a mapped page's hardware accessed bit) reach the algorithm through
//! `referenced(k)`: the algorithm asks it for each candidate it is about to act on, and
//! a true answer is applied as a hit on that key right then, before the decision.
//! Algorithms whose partitions follow the cache size (LIRS, 2Q, SLRU, CLOCK-Pro) size
//! them from the objects resident at each run of evictions ([`RunSize`]). Which algorithms
//! can, and how each is built for it: [`crate::algo::TABLE`]'s `reclaim` column
//! ([`crate::algo::AlgoEntry::build_evict`]).
use crate::Cache;

pub trait Evict: Cache + Send {
    /// Remove one resident key by the algorithm's eviction rule (keeping its ghost
    /// history, if it has one) and return it; `None` if nothing is resident.
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32>;
    /// Make room for keys `< nr_keys`.
    fn grow(&mut self, nr_keys: usize);
}

/// The sizes an on-demand algorithm sizes its partitions from (2Q's A1in, SLRU's
/// segments, CLOCK-Pro's m: the objects resident when the owner began the current run
/// of evictions; LIRS's LIR set: those left when the previous run ended). A run is a
/// series of evictions with no insert between them; within one the sizes stay put, so a
/// batch of evictions does not shrink the partitions one object at a time, which would
/// let the next newcomers into the protected part.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunSize {
    start: usize,
    prev_end: usize,
    after: usize,
}

impl RunSize {
    /// At an eviction with `len` objects resident: (resident when this run began,
    /// resident when the previous run ended — or when this one began, for the first).
    pub fn at_evict(&mut self, len: usize) -> (usize, usize) {
        if len != self.after {
            self.prev_end = if self.start == 0 { len } else { self.after };
            self.start = len;
        }
        self.after = len.saturating_sub(1);
        (self.start, self.prev_end)
    }
}
