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
use crate::algo::{arc::Arc, car::Car, clock::Clock, fifo::Fifo, lfu::Lfu, lru::Lru, s3fifo::S3Fifo, sieve::Sieve, Algo};
use crate::Cache;

pub trait Evict: Cache + Send {
    /// Remove one resident key by the algorithm's eviction rule (keeping its ghost
    /// history, if it has one) and return it; `None` if nothing is resident.
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32>;
    /// Make room for keys `< nr_keys`.
    fn grow(&mut self, nr_keys: usize);
}

/// The algorithms that can evict on demand.
pub const EVICT_ALGOS: [Algo; 8] =
    [Algo::Lru, Algo::Fifo, Algo::Clock, Algo::Sieve, Algo::Arc, Algo::Car, Algo::S3Fifo, Algo::Lfu];

/// Build `algo` for eviction on demand, or `None` if it cannot (see [`EVICT_ALGOS`]).
pub fn build_evict(algo: Algo, cap: usize, nr_keys: usize) -> Option<Box<dyn Evict>> {
    Some(match algo {
        Algo::Lru => Box::new(Lru::new(cap, nr_keys)),
        Algo::Fifo => Box::new(Fifo::new(cap, nr_keys)),
        Algo::Clock => Box::new(Clock::new(cap, nr_keys)),
        Algo::Arc => Box::new(Arc::new(cap, nr_keys)),
        Algo::S3Fifo => Box::new(S3Fifo::new(cap, nr_keys)),
        Algo::Sieve => Box::new(Sieve::new(cap, nr_keys)),
        Algo::Car => Box::new(Car::new(cap, nr_keys)),
        Algo::Lfu => Box::new(Lfu::new(cap, nr_keys)),
        _ => return None,
    })
}
