//! O(1) Zipf sampler: rejection-inversion (Hörmann & Derflinger, "Rejection-inversion to
//! generate variates from monotone discrete distributions", ACM TOMACS 1996), the method
//! Apache Commons uses. No tables, so it works for any number of ranks; any exponent
//! `alpha > 0`, including exactly 1. Expected iterations per sample are close to 1.

use crate::rng::Rng;

/// Samples ranks `1..=n` with `P(k) ∝ k^-alpha`.
#[derive(Clone, Debug)]
pub struct Zipf {
    n_int: u64,
    alpha: f64,
    /// 1/(1-alpha) (infinite for alpha = 1, where it is never used).
    inv_1m_alpha: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl Zipf {
    /// `n >= 1` ranks, exponent `alpha > 0` (finite). Returns None otherwise.
    pub fn new(n: u64, alpha: f64) -> Option<Zipf> {
        if n == 0 || !alpha.is_finite() || alpha <= 0.0 {
            return None;
        }
        let mut z = Zipf { n_int: n, alpha, inv_1m_alpha: 1.0 / (1.0 - alpha), h_integral_x1: 0.0, h_integral_n: 0.0, s: 0.0 };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n as f64 + 0.5);
        z.s = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        Some(z)
    }

    pub fn n(&self) -> u64 {
        self.n_int
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// A rank in `1..=n` (1 is the most frequent).
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.next_f64() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            // Truncating cast = floor for positive values (f64::floor is a libm call on
            // baseline x86-64); NaN/negative saturate to 0 and are clamped to 1.
            let k = ((x + 0.5) as u64).clamp(1, self.n_int) as f64;
            // Cheap squeeze (no transcendental): accept when ∫_x^{k+½} h ≤ h(k) is implied
            // by (k+½-x)·h(x) ≤ h(k) and Bernoulli's (1+d/x)^-α ≥ 1-αd/x, d = k-x:
            // d·(x+α) ≤ x/2. This accepts almost all tail samples.
            let d = k - x;
            if d <= self.s || d * (x + self.alpha) <= 0.5 * x || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    /// H(x) = ∫ h = (x^(1-alpha) - 1) / (1 - alpha), continuous at alpha = 1 (= ln x).
    #[inline]
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = libm::log(x);
        helper2((1.0 - self.alpha) * log_x) * log_x
    }

    /// h(x) = x^-alpha.
    #[inline]
    fn h(&self, x: f64) -> f64 {
        libm::exp(-self.alpha * libm::log(x))
    }

    #[inline]
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let mut t = x * (1.0 - self.alpha);
        if t < -1.0 {
            // Limit rounding error when x is close to the lower bound.
            t = -1.0;
        }
        // exp(ln(1+t)/t · x); ln(1+t) directly (log1p is slower) unless t is
        // small enough for 1+t to lose precision.
        // Since t = x(1-alpha), ln(1+t)/t · x = ln(1+t) · 1/(1-alpha): no division.
        let e = if t.abs() > 1e-3 { libm::log(1.0 + t) * self.inv_1m_alpha } else { helper1(t) * x };
        libm::exp(e)
    }
}

/// ln(1+x)/x, accurate near 0.
#[inline]
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        libm::log1p(x) / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1)/x, accurate near 0.
#[inline]
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        libm::expm1(x) / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact probabilities for small n, compared with empirical frequencies.
    fn check(n: u64, alpha: f64) {
        let z = Zipf::new(n, alpha).unwrap();
        let mut rng = Rng::new(42);
        let draws = 400_000;
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            let k = z.sample(&mut rng);
            assert!((1..=n).contains(&k));
            counts[k as usize - 1] += 1;
        }
        let norm: f64 = (1..=n).map(|k| (k as f64).powf(-alpha)).sum();
        for k in 1..=n.min(5) {
            let p = (k as f64).powf(-alpha) / norm;
            let f = counts[k as usize - 1] as f64 / draws as f64;
            // 5 standard deviations of a binomial proportion.
            let tol = 5.0 * (p * (1.0 - p) / draws as f64).sqrt() + 1e-12;
            assert!((f - p).abs() < tol, "n={n} alpha={alpha} k={k}: freq {f} vs p {p}");
        }
    }

    #[test]
    fn matches_exact_distribution() {
        check(10, 1.0);
        check(10, 0.5);
        check(100, 1.2);
        check(1000, 0.8);
        check(1, 1.0);
        check(2, 3.0);
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(Zipf::new(0, 1.0).is_none());
        assert!(Zipf::new(10, 0.0).is_none());
        assert!(Zipf::new(10, -1.0).is_none());
        assert!(Zipf::new(10, f64::NAN).is_none());
    }
}
