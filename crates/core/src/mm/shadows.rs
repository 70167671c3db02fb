//! Workingset shadow entries (mm/workingset.c 6.12 `pack_shadow`, an xarray value entry
//! of 64 bits) stored in 4 bytes while they fit. A 32-bit kernel's entry is that narrow
//! too, but rounds the eviction clock (`bucket_order`); here a value that does not fit
//! widens the array instead, so no entry loses a bit.
//!
//! A shadow is `[ eviction | memcg id (16) | node id (10) | workingset (1) | 1 ]`
//! (workingset.rs). While every shadow stored has memcg id 0 (the root), a node id below
//! `2^nid_bits` (enough for the machine's nodes) and an eviction value below
//! `2^(30 - nid_bits)`, the array holds `[ eviction | node id | workingset | 1 ]` in a
//! `u32` (0: none), which [`Shadows::get`] unpacks to the exact 64-bit entry. The first
//! shadow that does not fit (a child memcg's, or an eviction clock past 2^30, about a
//! billion evictions) widens the array to `u64` entries for the rest of the run: results
//! are identical either way, only host memory differs (4 or 8 bytes an entry). Both
//! arrays come from zeroed host memory, so entries never written cost none.

use super::workingset::EVICTION_SHIFT;

#[derive(Default)]
pub struct Shadows {
    /// The entries while narrow (`wide` false).
    narrow: Vec<u32>,
    /// The entries once widened.
    wide: Vec<u64>,
    is_wide: bool,
    /// Bits of node id a narrow entry holds.
    nid_bits: u32,
}

impl Shadows {
    /// `n` empty entries for a machine of `nr_nodes` nodes.
    pub fn new(n: usize, nr_nodes: usize) -> Self {
        let nid_bits = usize::BITS - nr_nodes.saturating_sub(1).leading_zeros();
        Shadows { narrow: vec![0; n], wide: Vec::new(), is_wide: false, nid_bits }
    }

    pub fn len(&self) -> usize {
        if self.is_wide {
            self.wide.len()
        } else {
            self.narrow.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Host bytes an entry takes now.
    pub fn entry_bytes(&self) -> usize {
        if self.is_wide {
            8
        } else {
            4
        }
    }

    /// Bits below a narrow entry's eviction field: the xarray value bit, workingset, node.
    #[inline(always)]
    fn low_bits(&self) -> u32 {
        2 + self.nid_bits
    }

    /// `shadow` as a narrow entry, if it fits.
    #[inline(always)]
    fn narrow_of(&self, shadow: u64) -> Option<u32> {
        let low = self.low_bits();
        let eviction = shadow >> EVICTION_SHIFT;
        // Between the node bits a narrow entry keeps and the eviction: zero (the node id's
        // high bits and the memcg id).
        let between = (shadow >> low) & ((1 << (EVICTION_SHIFT - low)) - 1);
        (between == 0 && eviction >> (32 - low) == 0).then(|| ((shadow & ((1 << low) - 1)) | (eviction << low)) as u32)
    }

    /// The 64-bit entry of narrow entry `e`.
    #[inline(always)]
    fn unpack(&self, e: u32) -> u64 {
        let low = self.low_bits();
        let e = e as u64;
        (e & ((1 << low) - 1)) | ((e >> low) << EVICTION_SHIFT)
    }

    /// The shadow at `i` (0: none).
    #[inline(always)]
    pub fn get(&self, i: usize) -> u64 {
        if self.is_wide {
            self.wide[i]
        } else {
            self.unpack(self.narrow[i])
        }
    }

    /// Store `shadow` (0: none) at `i`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, shadow: u64) {
        if !self.is_wide {
            if let Some(e) = self.narrow_of(shadow) {
                self.narrow[i] = e;
                return;
            }
            self.widen();
        }
        self.wide[i] = shadow;
    }

    /// The shadow at `i`, leaving none.
    #[inline(always)]
    pub fn take(&mut self, i: usize) -> u64 {
        let s = self.get(i);
        self.set(i, 0);
        s
    }

    /// Drop the entries of `range`.
    #[inline]
    pub fn clear(&mut self, range: std::ops::Range<usize>) {
        if self.is_wide {
            self.wide[range].fill(0);
        } else {
            self.narrow[range].fill(0);
        }
    }

    /// Grow to at least `n` entries, the new ones empty: a fresh zeroed allocation with the
    /// old entries copied in, never `resize`, which would write every entry; doubling keeps
    /// a trace that names its pages batch by batch from copying them each time.
    pub fn grow(&mut self, n: usize) {
        fn grow_zeroed<T: Copy + Default>(v: &mut Vec<T>, n: usize, zeroed: impl Fn(usize) -> Vec<T>) {
            if n > v.len() {
                let mut grown = zeroed(n.max(2 * v.len()));
                grown[..v.len()].copy_from_slice(v);
                *v = grown;
            }
        }
        if self.is_wide {
            grow_zeroed(&mut self.wide, n, |n| vec![0; n]);
        } else {
            grow_zeroed(&mut self.narrow, n, |n| vec![0; n]);
        }
    }

    /// From narrow to wide entries, once: only the entries held are written (the rest of
    /// the zeroed allocation stays unmapped on the host).
    #[cold]
    #[inline(never)]
    fn widen(&mut self) {
        let mut wide = vec![0u64; self.narrow.len()];
        for (i, &e) in self.narrow.iter().enumerate() {
            if e != 0 {
                wide[i] = self.unpack(e);
            }
        }
        self.wide = wide;
        self.narrow = Vec::new();
        self.is_wide = true;
    }

    /// Host prefetch hint for entry `i` (no simulated effect).
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        if self.is_wide {
            super::prefetch::prefetch(&self.wide, i);
        } else {
            super::prefetch::prefetch(&self.narrow, i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::workingset::pack_shadow;

    #[test]
    fn narrow_round_trip_and_widening() {
        let mut s = Shadows::new(8, 2);
        let a = pack_shadow(0, 1, (1 << 29) - 1, true);
        s.set(0, a);
        s.set(1, pack_shadow(0, 0, 7, false));
        assert_eq!((s.get(0), s.entry_bytes()), (a, 4));
        assert_eq!(s.get(2), 0);
        // A child memcg's shadow widens the array, keeping what it held.
        let b = pack_shadow(3, 1, 42, true);
        s.set(2, b);
        assert_eq!((s.get(0), s.get(1), s.get(2), s.entry_bytes()), (a, pack_shadow(0, 0, 7, false), b, 8));
        assert_eq!(s.take(2), b);
        assert_eq!(s.get(2), 0);
        // An eviction value past the narrow field widens too.
        let mut t = Shadows::new(4, 1);
        t.set(3, pack_shadow(0, 0, 1 << 30, false));
        assert_eq!((t.get(3), t.entry_bytes()), (pack_shadow(0, 0, 1 << 30, false), 8));
        // So does a node id past the machine's.
        let mut u = Shadows::new(4, 2);
        u.set(3, pack_shadow(0, 2, 1, false));
        assert_eq!(u.entry_bytes(), 8);
    }
}
