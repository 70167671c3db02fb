//! Miss-ratio curves.
//!
//! [`lru_stack_distances`]: exact LRU stack distances in one pass, O(N log N): a Fenwick
//! tree over access times holds a 1 at the time of each key's most recent access; the
//! distance of an access at time t to a key last seen at p is the number of ones in
//! (p, t) — the distinct keys touched in between. LRU of size C hits iff distance < C.
//!
//! [`shards`]: SHARDS (Waldspurger et al., FAST 2015), fixed rate: only keys whose hash
//! falls below R·2^64 are tracked; their distances are scaled by 1/R, and the first
//! bucket is corrected for the sample's size (SHARDS-adj). Counts are in sampled units.

/// Histogram of LRU stack distances: `hist[d]` = accesses with distance d (distinct
/// keys since the previous access to the same key); `cold` = first accesses.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StackHist {
    pub hist: Vec<u64>,
    pub cold: u64,
    pub total: u64,
    /// SHARDS-adj correction added to the hits of every size ≥ 1 (0 when exact).
    pub adj_hits: i64,
}

impl StackHist {
    /// LRU misses at cache size `c` (objects).
    pub fn misses(&self, c: usize) -> u64 {
        let hits: u64 = self.hist.iter().take(c).sum();
        let adj = if c >= 1 { self.adj_hits } else { 0 };
        (self.total as i64 - hits as i64 - adj).clamp(0, self.total as i64) as u64
    }
    /// Miss ratio at each of `sizes` (one cumulative pass over sorted sizes).
    pub fn miss_ratios(&self, sizes: &[usize]) -> Vec<f64> {
        let mut cum = Vec::with_capacity(self.hist.len() + 1);
        let mut s = 0u64;
        cum.push(0u64);
        for &h in &self.hist {
            s += h;
            cum.push(s);
        }
        sizes
            .iter()
            .map(|&c| {
                let hits = cum[c.min(self.hist.len())] as i64 + if c >= 1 { self.adj_hits } else { 0 };
                if self.total == 0 {
                    0.0
                } else {
                    ((self.total as i64 - hits).clamp(0, self.total as i64)) as f64 / self.total as f64
                }
            })
            .collect()
    }
}

struct Fenwick {
    t: Vec<i32>,
}

impl Fenwick {
    fn new(n: usize) -> Self {
        Fenwick { t: vec![0; n + 1] }
    }
    #[inline(always)]
    fn add(&mut self, i: usize, v: i32) {
        let mut i = i + 1;
        while i < self.t.len() {
            self.t[i] += v;
            i += i & i.wrapping_neg();
        }
    }
    /// Sum over [0, i).
    #[inline(always)]
    fn prefix(&self, i: usize) -> i64 {
        let mut i = i;
        let mut s = 0i64;
        while i > 0 {
            s += self.t[i] as i64;
            i &= i - 1;
        }
        s
    }
}

/// Exact LRU stack-distance histogram of `keys` (dense ids < `nr_keys`).
pub fn lru_stack_distances(keys: &[u32], nr_keys: u32) -> StackHist {
    let n = keys.len();
    let mut fw = Fenwick::new(n);
    let mut last = vec![u32::MAX; nr_keys as usize];
    let mut hist: Vec<u64> = Vec::new();
    let mut cold = 0u64;
    let mut live = 0i64; // ones in the tree = distinct keys so far
    for (t, &k) in keys.iter().enumerate() {
        let p = last[k as usize];
        if p == u32::MAX {
            cold += 1;
            live += 1;
        } else {
            // ones in (p, t) = live - ones in [0, p]
            let d = (live - fw.prefix(p as usize + 1)) as usize;
            if d >= hist.len() {
                hist.resize(d + 1, 0);
            }
            hist[d] += 1;
            fw.add(p as usize, -1);
        }
        fw.add(t, 1);
        last[k as usize] = t as u32;
    }
    StackHist { hist, cold, total: n as u64, adj_hits: 0 }
}

#[inline(always)]
fn mix64(mut x: u64) -> u64 {
    // SplitMix64 finaliser: a good 64-bit hash of the key.
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// SHARDS fixed-rate sampled LRU histogram (distances scaled to the full trace; counts
/// scaled by 1/rate). `rate` in (0, 1]; 1 gives the exact histogram.
pub fn shards(keys: &[u32], nr_keys: u32, rate: f64) -> StackHist {
    shards_by(keys, nr_keys, rate, |k| k)
}

/// [`shards`] of a renumbered trace: `id(k)` is the trace's own id of key `k`, which the
/// sampling hashes (so the sample, and every figure, is the one of the original ids).
pub fn shards_by(keys: &[u32], nr_keys: u32, rate: f64, id: impl Fn(u32) -> u32) -> StackHist {
    assert!(rate > 0.0 && rate <= 1.0, "sample rate must be in (0, 1]");
    if rate >= 1.0 {
        return lru_stack_distances(keys, nr_keys);
    }
    let threshold = (rate * u64::MAX as f64) as u64;
    // Sampled sub-trace with its own dense ids.
    let mut remap = vec![u32::MAX; nr_keys as usize];
    let mut sub = Vec::with_capacity((keys.len() as f64 * rate * 1.2) as usize + 16);
    let mut nsub = 0u32;
    for &k in keys {
        if mix64(id(k) as u64) <= threshold {
            let r = &mut remap[k as usize];
            if *r == u32::MAX {
                *r = nsub;
                nsub += 1;
            }
            sub.push(*r);
        }
    }
    let h = lru_stack_distances(&sub, nsub);
    let scale = 1.0 / rate;
    let mut hist: Vec<u64> = Vec::new();
    for (d, &c) in h.hist.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let sd = (d as f64 * scale) as usize;
        if sd >= hist.len() {
            hist.resize(sd + 1, 0);
        }
        hist[sd] += c;
    }
    // SHARDS-adj: the sample holds h.total references where n·rate were expected (hot
    // keys in or out of the sample skew it); the difference is credited to distance 0.
    let expected = (keys.len() as f64 * rate).round() as i64;
    let adj_hits = expected - h.total as i64;
    StackHist { hist, cold: h.cold, total: expected.max(0) as u64, adj_hits }
}
