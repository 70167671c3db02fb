//! Workingset detection (mm/workingset.c v6.15, spec B): shadow entries and the
//! refault-distance test of the non-MGLRU path.
//!
//! A shadow is packed as the kernel packs it (`pack_shadow`, B.1):
//! `[ eviction | memcg id (16) | node id (NODES_SHIFT=10) | workingset (1) ]`, then
//! `xa_mk_value` (shifted left by one with bit 0 set, so a shadow is never 0 and 0 means
//! "no shadow"). With 64-bit longs that leaves 36 bits of eviction clock; the modular
//! distance `(refault - eviction) & EVICTION_MASK` tolerates wrap-around exactly as the
//! kernel does. `bucket_order` is computed from the machine size as at boot.
//! Abstraction: shadows are never reclaimed (no shadow-node shrinker, B.4), so
//! `workingset_nodereclaim` is not reported.

pub const MEM_CGROUP_ID_SHIFT: u32 = 16;
pub const NODES_SHIFT: u32 = 10;
pub const WORKINGSET_SHIFT: u32 = 1;
/// `BITS_PER_LONG - BITS_PER_XA_VALUE` = 1.
const XA_VALUE_SHIFT: u32 = 1;
pub const EVICTION_SHIFT: u32 = XA_VALUE_SHIFT + WORKINGSET_SHIFT + NODES_SHIFT + MEM_CGROUP_ID_SHIFT;
pub const EVICTION_MASK: u64 = !0u64 >> EVICTION_SHIFT;

/// `bucket_order` as `workingset_init` computes it for `totalram_pages`.
pub fn bucket_order(totalram_pages: u64) -> u32 {
    let timestamp_bits = 64 - EVICTION_SHIFT;
    let max_order = 64 - (totalram_pages.saturating_sub(1)).leading_zeros(); // fls_long
    max_order.saturating_sub(timestamp_bits)
}

/// `pack_shadow` + `xa_mk_value`.
pub fn pack_shadow(memcgid: u16, nid: u16, eviction: u64, workingset: bool) -> u64 {
    let mut e = eviction & EVICTION_MASK;
    e = (e << MEM_CGROUP_ID_SHIFT) | memcgid as u64;
    e = (e << NODES_SHIFT) | nid as u64;
    e = (e << WORKINGSET_SHIFT) | workingset as u64;
    (e << 1) | 1
}

/// `unpack_shadow`: (memcg id, node id, eviction, workingset).
pub fn unpack_shadow(shadow: u64) -> (u16, u16, u64, bool) {
    debug_assert!(shadow & 1 == 1, "not an xarray value entry");
    let mut e = shadow >> 1;
    let workingset = e & 1 != 0;
    e >>= WORKINGSET_SHIFT;
    let nid = (e & ((1 << NODES_SHIFT) - 1)) as u16;
    e >>= NODES_SHIFT;
    let memcgid = (e & ((1 << MEM_CGROUP_ID_SHIFT) - 1)) as u16;
    e >>= MEM_CGROUP_ID_SHIFT;
    (memcgid, nid, e, workingset)
}

/// `(refault - eviction) & EVICTION_MASK`.
#[inline]
pub fn refault_distance(refault: u64, eviction: u64) -> u64 {
    refault.wrapping_sub(eviction) & EVICTION_MASK
}

/// LRU sizes of the eviction lruvec (hierarchical, `lruvec_page_state`).
#[derive(Clone, Copy, Debug, Default)]
pub struct WorkingsetLists {
    pub inactive_anon: u64,
    pub active_anon: u64,
    pub inactive_file: u64,
    pub active_file: u64,
}

/// `workingset_size` of `workingset_test_recent` (B.3): the memory a refaulting page
/// competes for besides the inactive list it was evicted from.
pub fn workingset_size(file: bool, l: &WorkingsetLists, swap_available: bool) -> u64 {
    let mut size = l.active_file;
    if !file {
        size += l.inactive_file;
    }
    if swap_available {
        size += l.active_anon;
        if file {
            size += l.inactive_anon;
        }
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadow_round_trips_with_36_bit_clock() {
        assert_eq!(EVICTION_SHIFT, 28);
        assert_eq!(EVICTION_MASK, (1u64 << 36) - 1);
        for &(m, n, e, w) in &[(0u16, 0u16, 0u64, false), (65535, 1023, EVICTION_MASK, true), (7, 3, 123456789, true)] {
            let s = pack_shadow(m, n, e, w);
            assert_ne!(s, 0);
            assert_eq!(unpack_shadow(s), (m, n, e, w));
        }
        // the clock is truncated to 36 bits like the kernel's
        let (_, _, e, _) = unpack_shadow(pack_shadow(1, 0, (1u64 << 36) + 5, false));
        assert_eq!(e, 5);
    }

    #[test]
    fn distance_is_modular() {
        assert_eq!(refault_distance(1000, 400), 600);
        // the clock wrapped past 2^36 since eviction
        assert_eq!(refault_distance(10, EVICTION_MASK - 9), 20);
    }

    #[test]
    fn bucket_order_is_zero_below_2_pow_36_pages() {
        assert_eq!(bucket_order(1 << 18), 0); // 1 GiB
        assert_eq!(bucket_order(1 << 36), 0); // fls(2^36 - 1) = 36
        assert_eq!(bucket_order((1 << 36) + 1), 1);
    }

    /// B.3: file refault competes with active file + all anon (with swap);
    /// anon refault with all file + active anon.
    #[test]
    fn workingset_size_composition() {
        let l = WorkingsetLists { inactive_anon: 1, active_anon: 10, inactive_file: 100, active_file: 1000 };
        assert_eq!(workingset_size(true, &l, true), 1000 + 10 + 1);
        assert_eq!(workingset_size(true, &l, false), 1000);
        assert_eq!(workingset_size(false, &l, true), 1000 + 100 + 10);
        assert_eq!(workingset_size(false, &l, false), 1100);
    }
}
