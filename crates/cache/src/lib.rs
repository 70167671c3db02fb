//! reclaimlab-cache: reference cache replacement algorithms over dense page ids, defined
//! as libCacheSim defines them (so miss ratios agree exactly), and miss-ratio curves.
//!
//! Every algorithm implements [`Cache`]; keys are dense page ids `0..nr_keys` (as the
//! trace readers hand them out), so per-key state lives in flat arrays and no access
//! hashes. Object size is 1: the cache size counts pages. See `docs/cachesim.md`.
//!
//! - [`algo`]: one algorithm per file; [`TABLE`] is the one list of them (names,
//!   constructors, minimum sizes, their `cache:*` policy form); [`parse`] finds a row.
//! - [`simulate`]: run a key sequence through one algorithm (monomorphised loop).
//! - [`evict`]: eviction on demand, for an owner (the simulated kernel) that decides
//!   when to evict.
//! - [`mrc`]: exact LRU miss-ratio curve from stack distances (Fenwick tree, one pass)
//!   and SHARDS-style sampled curves.

pub mod algo;
pub mod evict;
pub mod keys;
pub mod list;
pub mod mrc;

pub use algo::{build, parse, Algo, AlgoEntry, TABLE};

/// A cache replacement algorithm over dense keys (object size 1).
pub trait Cache {
    /// The algorithm's name as in [`TABLE`].
    fn name(&self) -> &'static str;
    /// One request: true on a hit. On a miss the key is inserted (evicting as needed).
    fn access(&mut self, key: u32) -> bool;
    /// Objects resident now.
    fn len(&self) -> usize;
    /// Capacity in objects.
    fn capacity(&self) -> usize;
    /// A hint that `key` will be requested soon: start loading its per-key state into
    /// the host CPU's cache ([`list::prefetch`]; changes nothing the algorithm sees).
    #[inline(always)]
    fn prefetch(&self, _key: u32) {}
    /// The second, nearer hint for `key`: its state is cached by now, so load what it
    /// points to (a list node's neighbours). Default: nothing.
    #[inline(always)]
    fn prefetch_neighbours(&self, _key: u32) {}
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Hits and misses of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
}

impl Stats {
    pub fn requests(&self) -> u64 {
        self.hits + self.misses
    }
    pub fn miss_ratio(&self) -> f64 {
        if self.requests() == 0 {
            0.0
        } else {
            self.misses as f64 / self.requests() as f64
        }
    }
}

/// Requests ahead of the current one whose per-key state [`run`] prefetches; at half
/// that distance it prefetches what that state points to.
const PREFETCH_AHEAD: usize = 16;

/// Run `keys` through `cache` (generic: the access inlines into the loop).
#[inline(never)]
pub fn run<C: Cache + ?Sized>(cache: &mut C, keys: &[u32]) -> Stats {
    let mut hits = 0u64;
    // All but the last PREFETCH_AHEAD requests, where both look-aheads exist: three
    // zipped iterators, so the loop has no bounds checks.
    let near = keys.get(PREFETCH_AHEAD / 2..).unwrap_or_default();
    let far = keys.get(PREFETCH_AHEAD..).unwrap_or_default();
    for ((&k, &near), &far) in keys.iter().zip(near).zip(far) {
        cache.prefetch(far);
        cache.prefetch_neighbours(near);
        hits += cache.access(k) as u64;
    }
    let bulk = far.len();
    for (i, &k) in keys.iter().enumerate().skip(bulk) {
        if let Some(&near) = keys.get(i + PREFETCH_AHEAD / 2) {
            cache.prefetch_neighbours(near);
        }
        hits += cache.access(k) as u64;
    }
    Stats { hits, misses: keys.len() as u64 - hits }
}

/// Errors of this crate (unknown algorithm, bad size).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Error {}

/// Simulate algorithm `name` with `size` objects on `keys` (dense ids < `nr_keys`).
pub fn simulate(name: &str, size: usize, keys: &[u32], nr_keys: u32) -> Result<Stats, Error> {
    Ok(algo::simulate(parse(name)?, size, keys, nr_keys))
}
