//! Helpers shared by the integration tests.
use reclaimlab_trace::Rng;

/// Skewed keys over `0..pages`: cubes of uniforms concentrate near 0.
pub fn skewed(n: usize, pages: u32, seed: u64) -> Vec<u32> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|_| {
            let u = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            ((u * u * u) * pages as f64) as u32 % pages
        })
        .collect()
}
