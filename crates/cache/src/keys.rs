//! A trace's page ids made ready for the algorithms, whatever its header claims.
//!
//! Every algorithm keeps per-key state in flat arrays of `nr_keys` entries. A trace's
//! page-id space (a native header's `nr_pages`, up to 2^32 − 1) can be far larger than
//! the pages it requests: 10 requests spread over 4·10^9 page ids would need 100 GB of
//! arrays. [`Keys::new`] bounds `nr_keys` by the requests: it is the largest id + 1,
//! and where that is still much larger than the requests (a sparse trace), the ids are
//! renumbered **in order** (the i-th smallest id requested becomes i). An order-preserving
//! renumbering changes nothing an algorithm sees (they compare and index keys, and
//! Belady breaks ties by key order, which is kept); SHARDS hashes the *original* id
//! ([`Keys::original`]), so its sample is the same too. Tests in `tests/it/keys.rs` check
//! that every algorithm and SHARDS give identical figures either way.

use reclaimlab_trace::mem;

/// Page ids with a bounded id space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    /// The requests, ids `< nr_keys`.
    pub keys: Vec<u32>,
    /// One more than the largest id (0 for no request).
    pub nr_keys: u32,
    /// For a renumbered trace, the original id of each id (sorted); `None` if the ids are
    /// the trace's own.
    pub orig: Option<Vec<u32>>,
}

/// Past this many ids per request (plus a fixed allowance), a trace is renumbered.
const SPARSE_FACTOR: u64 = 2;
const SPARSE_ALLOWANCE: u64 = 1 << 20;

impl Keys {
    /// Take `keys` (ids `< nr_keys`, as the trace's header bounds them); renumber if sparse.
    pub fn new(keys: Vec<u32>, _nr_keys: u32) -> Result<Keys, String> {
        let nr = keys.iter().copied().max().map_or(0, |m| m as u64 + 1);
        if nr <= SPARSE_FACTOR * keys.len() as u64 + SPARSE_ALLOWANCE {
            return Ok(Keys { keys, nr_keys: nr as u32, orig: None });
        }
        Self::renumbered(keys)
    }

    /// Renumber in order, whatever the density (what [`Keys::new`] does to a sparse trace).
    pub fn renumbered(mut keys: Vec<u32>) -> Result<Keys, String> {
        let what = || format!("renumbering the trace's {} requests", keys.len());
        let mut ids: Vec<u32> = Vec::new();
        mem::reserve(&mut ids, keys.len(), &what)?;
        ids.extend_from_slice(&keys);
        ids.sort_unstable();
        ids.dedup();
        ids.shrink_to_fit();
        for k in keys.iter_mut() {
            *k = ids.binary_search(k).expect("every key is in its own id list") as u32;
        }
        Ok(Keys { nr_keys: ids.len() as u32, keys, orig: Some(ids) })
    }

    /// The trace's own id of `k`.
    #[inline(always)]
    pub fn original(&self, k: u32) -> u32 {
        match &self.orig {
            Some(o) => o[k as usize],
            None => k,
        }
    }

    /// Distinct ids requested.
    pub fn distinct(&self) -> u64 {
        if let Some(o) = &self.orig {
            return o.len() as u64;
        }
        let mut seen = vec![0u64; (self.nr_keys as usize).div_ceil(64)];
        let mut n = 0u64;
        for &k in &self.keys {
            let (w, b) = (k as usize / 64, 1u64 << (k % 64));
            n += (seen[w] & b == 0) as u64;
            seen[w] |= b;
        }
        n
    }

    /// The requests with the trace's own ids (what `write_oracle` writes).
    pub fn original_keys(&self) -> std::borrow::Cow<'_, [u32]> {
        match &self.orig {
            Some(o) => self.keys.iter().map(|&k| o[k as usize]).collect::<Vec<_>>().into(),
            None => self.keys.as_slice().into(),
        }
    }
}
