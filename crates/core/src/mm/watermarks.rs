//! Zone watermarks (kernel spec A.5), after `mm/page_alloc.c` v6.15:
//! `calculate_min_free_kbytes` / `init_per_zone_wmark_min` and `__setup_per_zone_wmarks`,
//! with the kernel's `int_sqrt` (lib/math/int_sqrt.c) and `mult_frac` (include/linux/math.h).
//!
//! Model notes: "highmem" does not exist in the model, so the lowmem zones are every zone but
//! `ZoneType::Movable`; managed == present pages; `lowmem_reserve` is kept for the highest
//! zone index only (every allocation of the model may use every zone of its node); there is
//! no `totalreserve_pages`. All arithmetic is integer, as in the kernel (`unsigned long` = u64).

use super::page_alloc::{Zone, ZoneType, NR_WMARK, WMARK_HIGH, WMARK_LOW, WMARK_MIN, WMARK_PROMO};

pub use crate::vmscan::SWAP_CLUSTER_MAX;
pub use reclaimlab_trace::PAGE_SHIFT;
/// `watermark_scale_factor` default (sysctl `vm.watermark_scale_factor`, range 1..=3000).
pub const DEFAULT_WATERMARK_SCALE_FACTOR: u64 = 10;
/// Bounds of the computed `min_free_kbytes` (`calculate_min_free_kbytes`).
pub const MIN_FREE_KBYTES_MIN: u64 = 128;
pub const MIN_FREE_KBYTES_MAX: u64 = 262144;

/// `int_sqrt`: floor of the square root, bit by bit (lib/math/int_sqrt.c).
pub fn int_sqrt(mut x: u64) -> u64 {
    if x <= 1 {
        return x;
    }
    // m = 1UL << (__fls(x) & ~1UL);
    let fls = 63 - x.leading_zeros() as u64;
    let mut m: u64 = 1 << (fls & !1);
    let mut y: u64 = 0;
    while m != 0 {
        let b = y + m;
        y >>= 1;
        if x >= b {
            x -= b;
            y += m;
        }
        m >>= 2;
    }
    y
}

/// `mult_frac(x, n, d)`: `x * n / d` computed as quotient and remainder so that `x * n` does
/// not overflow: `q = x / d; r = x % d; q * n + r * n / d`.
#[inline]
pub fn mult_frac(x: u64, n: u64, d: u64) -> u64 {
    let q = x / d;
    let r = x % d;
    q * n + r * n / d
}

/// `calculate_min_free_kbytes` for a given amount of lowmem:
/// `clamp(int_sqrt(lowmem_kbytes * 16), 128, 262144)` KiB.
pub fn calculate_min_free_kbytes(lowmem_kbytes: u64) -> u64 {
    int_sqrt(lowmem_kbytes * 16).clamp(MIN_FREE_KBYTES_MIN, MIN_FREE_KBYTES_MAX)
}

#[inline]
fn is_lowmem(z: &Zone) -> bool {
    // !is_highmem(zone) && zone_idx(zone) != ZONE_MOVABLE
    z.zone_type != ZoneType::Movable
}

/// `nr_free_buffer_pages`: Σ over zones ≤ ZONE_NORMAL of `managed - high_wmark_pages` (where
/// positive). Before watermarks are set this is the lowmem managed page count.
pub fn nr_free_buffer_pages(zones: &[Zone]) -> u64 {
    zones.iter().filter(|z| is_lowmem(z)).map(|z| z.managed_pages.saturating_sub(z.high_wmark_pages())).sum()
}

/// `init_per_zone_wmark_min` at boot: `calculate_min_free_kbytes` from
/// `nr_free_buffer_pages() * (PAGE_SIZE >> 10)`, then [`setup_per_zone_wmarks`]. Returns the
/// `min_free_kbytes` used. (A user-set `vm.min_free_kbytes` is applied by calling
/// [`setup_per_zone_wmarks`] with it directly, as `min_free_kbytes_sysctl_handler` does.)
pub fn init_per_zone_wmark_min(zones: &mut [Zone], watermark_scale_factor: u64) -> u64 {
    let lowmem_kbytes = nr_free_buffer_pages(zones) * (1 << (PAGE_SHIFT - 10));
    let min_free_kbytes = calculate_min_free_kbytes(lowmem_kbytes);
    setup_per_zone_wmarks(zones, min_free_kbytes, watermark_scale_factor);
    min_free_kbytes
}

/// `__setup_per_zone_wmarks`:
/// - `pages_min = min_free_kbytes >> (PAGE_SHIFT - 10)`;
/// - `lowmem_pages` = Σ managed pages of non-movable zones;
/// - per zone `tmp = (u64)pages_min * managed / lowmem_pages`; `WMARK_MIN = tmp`, except
///   movable zones: `clamp(managed / 1024, SWAP_CLUSTER_MAX, 128)`;
/// - `delta = max(tmp >> 2, mult_frac(managed, watermark_scale_factor, 10000))` (with the
///   unclamped `tmp` for movable zones too); `LOW = MIN + delta`, `HIGH = LOW + delta`,
///   `PROMO = HIGH + delta`; `watermark_boost = 0`.
pub fn setup_per_zone_wmarks(zones: &mut [Zone], min_free_kbytes: u64, watermark_scale_factor: u64) {
    let pages_min = min_free_kbytes >> (PAGE_SHIFT - 10);
    let lowmem_pages: u64 = zones.iter().filter(|z| is_lowmem(z)).map(|z| z.managed_pages).sum();
    for z in zones.iter_mut() {
        let managed = z.managed_pages;
        // tmp = (u64)pages_min * zone_managed_pages(zone); tmp = div64_ul(tmp, lowmem_pages);
        // (the kernel never has lowmem_pages == 0; the model guards it).
        let tmp = (pages_min * managed).checked_div(lowmem_pages).unwrap_or(0);
        z.watermark[WMARK_MIN] = if is_lowmem(z) { tmp } else { (managed / 1024).clamp(SWAP_CLUSTER_MAX, 128) };
        let delta = (tmp >> 2).max(mult_frac(managed, watermark_scale_factor, 10000));
        z.watermark_boost = 0;
        z.watermark[WMARK_LOW] = z.watermark[WMARK_MIN] + delta;
        z.watermark[WMARK_HIGH] = z.watermark[WMARK_LOW] + delta;
        z.watermark[WMARK_PROMO] = z.watermark[WMARK_HIGH] + delta;
    }
}

/// `sysctl_lowmem_reserve_ratio` defaults (mm/page_alloc.c 6.12): DMA and DMA32 256,
/// Normal 32, Movable 0.
pub fn lowmem_reserve_ratio(t: ZoneType) -> u64 {
    match t {
        ZoneType::Dma | ZoneType::Dma32 => 256,
        ZoneType::Normal => 32,
        ZoneType::Movable => 0,
    }
}

/// `setup_per_zone_lowmem_reserve` (mm/page_alloc.c 6.12) for the highest zone index: a
/// zone keeps `Σ managed pages of the higher zones of its node / ratio` from allocations
/// that could use those zones (0 with ratio 0, for an empty zone and for a node's highest
/// zone).
pub fn setup_per_zone_lowmem_reserve(zones: &mut [Zone]) {
    let above: Vec<u64> = zones.iter().map(|z| zones.iter().filter(|u| u.node == z.node && u.zone_type > z.zone_type).map(|u| u.managed_pages).sum()).collect();
    for (z, above) in zones.iter_mut().zip(above) {
        let ratio = lowmem_reserve_ratio(z.zone_type);
        z.lowmem_reserve = if ratio == 0 || z.managed_pages == 0 { 0 } else { above / ratio };
    }
}

impl Zone {
    /// `wmark_pages(z, i)`: `_watermark[i] + watermark_boost`.
    #[inline]
    pub fn wmark_pages(&self, i: usize) -> u64 {
        debug_assert!(i < NR_WMARK);
        self.watermark[i] + self.watermark_boost
    }
    /// `min_wmark_pages`.
    #[inline]
    pub fn min_wmark_pages(&self) -> u64 {
        self.wmark_pages(WMARK_MIN)
    }
    /// `low_wmark_pages`.
    #[inline]
    pub fn low_wmark_pages(&self) -> u64 {
        self.wmark_pages(WMARK_LOW)
    }
    /// `high_wmark_pages`.
    #[inline]
    pub fn high_wmark_pages(&self) -> u64 {
        self.wmark_pages(WMARK_HIGH)
    }
    /// `promo_wmark_pages`.
    #[inline]
    pub fn promo_wmark_pages(&self) -> u64 {
        self.wmark_pages(WMARK_PROMO)
    }
}

#[cfg(test)]
mod tests {
    use super::super::page_alloc::ZoneSpec;
    use super::*;

    fn zone(zone_type: ZoneType, nr_pages: u32) -> Zone {
        Zone::detached(&ZoneSpec { node: 0, zone_type, start_pfn: 0, nr_pages })
    }

    /// One Normal zone of `pages` pages set up at boot; returns (min_free_kbytes, watermarks).
    fn single(pages: u32, wsf: u64) -> (u64, [u64; NR_WMARK]) {
        let mut zs = [zone(ZoneType::Normal, pages)];
        let mfk = init_per_zone_wmark_min(&mut zs, wsf);
        (mfk, zs[0].watermark)
    }

    #[test]
    fn int_sqrt_exact() {
        assert_eq!(int_sqrt(0), 0);
        assert_eq!(int_sqrt(1), 1);
        assert_eq!(int_sqrt(2), 1);
        assert_eq!(int_sqrt(3), 1);
        assert_eq!(int_sqrt(4), 2);
        for n in [2u64, 3, 10, 255, 256, 4095, 4096, 65535, 65536, 1 << 20, 185363, 4294967295] {
            let sq = n * n;
            assert_eq!(int_sqrt(sq), n, "sqrt({sq})");
            assert_eq!(int_sqrt(sq - 1), n - 1, "sqrt({sq} - 1)");
            assert_eq!(int_sqrt(sq + 1), n, "sqrt({sq} + 1)");
        }
        assert_eq!(int_sqrt(u64::MAX), 4294967295);
        // 185363^2 = 34359441769 <= 2^35 = 34359738368 < 185364^2 = 34359812496
        assert_eq!(int_sqrt(1 << 35), 185363);
        // Against a brute-force floor sqrt on a range.
        let mut r = 0u64;
        for x in 0..200_000u64 {
            while (r + 1) * (r + 1) <= x {
                r += 1;
            }
            assert_eq!(int_sqrt(x), r, "x = {x}");
        }
    }

    #[test]
    fn mult_frac_quotient_remainder() {
        assert_eq!(mult_frac(262144, 10, 10000), 262); // 26*10 + 2144*10/10000 = 260 + 2
        assert_eq!(mult_frac(7, 3, 2), 10); // 3*3 + 1*3/2
        assert_eq!(mult_frac(10, 3, 4), 7); // 2*3 + 2*3/4
                                            // no overflow where x * n would overflow
        assert_eq!(mult_frac(u64::MAX, 10, 10000), 18446744073709551);
    }

    #[test]
    fn min_free_kbytes_table() {
        // lowmem KiB -> int_sqrt(KiB * 16)
        assert_eq!(calculate_min_free_kbytes(262144), 2048); // 256 MiB: sqrt(4194304)
        assert_eq!(calculate_min_free_kbytes(1048576), 4096); // 1 GiB: sqrt(16777216)
        assert_eq!(calculate_min_free_kbytes(4194304), 8192); // 4 GiB: sqrt(67108864)
        assert_eq!(calculate_min_free_kbytes(16777216), 16384); // 16 GiB: sqrt(2^28)
        assert_eq!(calculate_min_free_kbytes(1 << 26), 32768); // 64 GiB: sqrt(2^30), unclamped
                                                               // 2 TiB = 2^31 KiB: sqrt(2^35) = 185363 -- still below the 262144 cap.
        assert_eq!(calculate_min_free_kbytes(1 << 31), 185363);
        // 4 TiB = 2^32 KiB: sqrt(2^36) = 262144, exactly the cap.
        assert_eq!(calculate_min_free_kbytes(1 << 32), 262144);
        // 8 TiB: sqrt(2^37) = 370727 -> clamped to 262144.
        assert_eq!(int_sqrt(1 << 37), 370727);
        assert_eq!(calculate_min_free_kbytes(1 << 33), 262144);
        // Tiny: 512 KiB -> sqrt(8192) = 90 -> clamped up to 128.
        assert_eq!(int_sqrt(8192), 90);
        assert_eq!(calculate_min_free_kbytes(512), 128);
        // Below 1 MiB lowmem everything clamps to 128; at 1 MiB sqrt(16384) = 128 exactly.
        assert_eq!(calculate_min_free_kbytes(1023), 128);
        assert_eq!(calculate_min_free_kbytes(1024), 128);
        assert_eq!(calculate_min_free_kbytes(1100), 132); // sqrt(17600) = 132.6
    }

    #[test]
    fn one_gib_normal_zone() {
        // 262144 pages; lowmem 1048576 KiB -> min_free_kbytes int_sqrt(16777216) = 4096
        // pages_min = 4096 >> 2 = 1024; min = 1024 * 262144 / 262144 = 1024
        // delta = max(1024 >> 2 = 256, mult_frac(262144, 10, 10000) = 262) = 262
        // low = 1286, high = 1548, promo = 1810
        assert_eq!(single(262144, 10), (4096, [1024, 1286, 1548, 1810]));
    }

    #[test]
    fn four_gib_normal_zone() {
        // 1048576 pages; 4194304 KiB -> sqrt(67108864) = 8192 KiB; pages_min = 2048
        // delta = max(512, mult_frac(1048576, 10, 10000) = 104*10 + 8576*10/10000 = 1048)
        assert_eq!(single(1048576, 10), (8192, [2048, 3096, 4144, 5192]));
    }

    #[test]
    fn sixteen_gib_normal_zone() {
        // 4194304 pages; 16777216 KiB -> sqrt(268435456) = 16384 KiB; pages_min = 4096
        // delta = max(1024, mult_frac(4194304, 10, 10000) = 419*10 + 4304*10/10000 = 4194)
        assert_eq!(single(4194304, 10), (16384, [4096, 8290, 12484, 16678]));
    }

    #[test]
    fn quarter_gib_normal_zone() {
        // 65536 pages; 262144 KiB -> sqrt(4194304) = 2048 KiB; pages_min = 512
        // delta = max(512 >> 2 = 128, mult_frac(65536, 10, 10000) = 6*10 + 5536*10/10000 = 65)
        assert_eq!(single(65536, 10), (2048, [512, 640, 768, 896]));
    }

    #[test]
    fn sixty_four_gib_normal_zone() {
        // 16777216 pages; 2^26 KiB -> sqrt(2^30) = 32768 KiB (< 262144: no clamp)
        // pages_min = 8192; delta = max(2048, mult_frac(16777216, 10, 10000)
        //   = 1677*10 + 7216*10/10000 = 16770 + 7 = 16777)
        assert_eq!(single(16777216, 10), (32768, [8192, 24969, 41746, 58523]));
    }

    #[test]
    fn two_and_eight_tib_detached_zones() {
        // 2 TiB = 2^29 pages (u32 nr_pages holds it); 2^31 KiB -> sqrt(2^35) = 185363 KiB
        // pages_min = 185363 >> 2 = 46340; delta = max(46340 >> 2 = 11585,
        //   mult_frac(536870912, 10, 10000) = 53687*10 + 912*10/10000 = 536870)
        assert_eq!(single(1 << 29, 10), (185363, [46340, 583210, 1120080, 1656950]));
        // 8 TiB = 2^31 pages; 2^33 KiB -> sqrt(2^37) = 370727 -> clamp 262144 KiB
        // pages_min = 65536; delta = max(16384, mult_frac(2147483648, 10, 10000)
        //   = 214748*10 + 3648*10/10000 = 2147483)
        assert_eq!(single(1 << 31, 10), (262144, [65536, 2213019, 4360502, 6507985]));
    }

    #[test]
    fn tiny_zone_clamps_up() {
        // 128 pages = 512 KiB -> sqrt(8192) = 90 -> 128 KiB; pages_min = 32
        // min = 32; delta = max(8, mult_frac(128, 10, 10000) = 0) = 8
        assert_eq!(single(128, 10), (128, [32, 40, 48, 56]));
    }

    #[test]
    fn scale_factor_1000() {
        // 1 GiB: min 1024; delta = max(256, mult_frac(262144, 1000, 10000)
        //   = 26*1000 + 2144*1000/10000 = 26000 + 214 = 26214)
        assert_eq!(single(262144, 1000), (4096, [1024, 27238, 53452, 79666]));
    }

    #[test]
    fn two_zones_share_pages_min_proportionally() {
        // DMA32 3 GiB (786432) + Normal 1 GiB (262144): lowmem 1048576 pages = 4194304 KiB
        // -> min_free_kbytes 8192, pages_min 2048
        // DMA32: min = 2048*786432/1048576 = 1536; delta = max(384, 78*10 + 6432*10/10000 = 786)
        // Normal: min = 2048*262144/1048576 = 512; delta = max(128, 262) = 262
        let mut zs = [zone(ZoneType::Dma32, 786432), zone(ZoneType::Normal, 262144)];
        assert_eq!(init_per_zone_wmark_min(&mut zs, 10), 8192);
        assert_eq!(zs[0].watermark, [1536, 2322, 3108, 3894]);
        assert_eq!(zs[1].watermark, [512, 774, 1036, 1298]);
        assert_eq!(zs[0].watermark[WMARK_MIN] + zs[1].watermark[WMARK_MIN], 2048);
    }

    #[test]
    fn uneven_split_rounds_down() {
        // min_free_kbytes 1000 -> pages_min 250; zones 1000 + 3000 pages
        // A: 250*1000/4000 = 62 (62.5); delta = max(15, mult_frac(1000,10,10000) = 1) = 15
        // B: 250*3000/4000 = 187 (187.5); delta = max(46, mult_frac(3000,10,10000) = 3) = 46
        let mut zs = [zone(ZoneType::Dma, 1000), zone(ZoneType::Normal, 3000)];
        setup_per_zone_wmarks(&mut zs, 1000, 10);
        assert_eq!(zs[0].watermark, [62, 77, 92, 107]);
        assert_eq!(zs[1].watermark, [187, 233, 279, 325]);
    }

    #[test]
    fn movable_zone_min_is_clamped_delta_is_not() {
        // Normal 1 GiB + Movable 4 GiB: lowmem = 262144 pages -> min_free_kbytes 4096 -> 1024
        // Normal: 1024 / 1286 / 1548 / 1810
        // Movable: tmp = 1024*1048576/262144 = 4096; min = clamp(1048576/1024 = 1024, 32, 128)
        //   = 128; delta = max(4096 >> 2 = 1024, mult_frac(1048576, 10, 10000) = 1048) = 1048
        let mut zs = [zone(ZoneType::Normal, 262144), zone(ZoneType::Movable, 1048576)];
        assert_eq!(init_per_zone_wmark_min(&mut zs, 10), 4096);
        assert_eq!(zs[0].watermark, [1024, 1286, 1548, 1810]);
        assert_eq!(zs[1].watermark, [128, 1176, 2224, 3272]);
        // A small movable zone: 16384/1024 = 16 -> clamped up to SWAP_CLUSTER_MAX.
        // tmp = 1024*16384/262144 = 64; delta = max(16, mult_frac(16384,10,10000) = 16) = 16
        let mut zs = [zone(ZoneType::Normal, 262144), zone(ZoneType::Movable, 16384)];
        setup_per_zone_wmarks(&mut zs, 4096, 10);
        assert_eq!(zs[1].watermark, [32, 48, 64, 80]);
    }

    #[test]
    fn lowmem_reserve_of_a_512m_x86_guest() {
        // 6.12.117 in a 512 MiB QEMU guest: DMA 3840 managed pages under DMA32 114447;
        // DMA keeps 114447 / 256 = 447 pages (the guest printed 438: its reserve was set at
        // boot, before the init memory was freed into DMA32). The highest zone keeps none.
        let mut zs = [zone(ZoneType::Dma, 3840), zone(ZoneType::Dma32, 114447)];
        setup_per_zone_lowmem_reserve(&mut zs);
        assert_eq!((zs[0].lowmem_reserve, zs[1].lowmem_reserve), (447, 0));
        // Normal's ratio is 32; zones of another node do not count.
        let mut zs = [zone(ZoneType::Normal, 1000), zone(ZoneType::Movable, 64000)];
        setup_per_zone_lowmem_reserve(&mut zs);
        assert_eq!(zs[0].lowmem_reserve, 2000);
        zs[1].node = 1;
        setup_per_zone_lowmem_reserve(&mut zs);
        assert_eq!(zs[0].lowmem_reserve, 0);
    }

    #[test]
    fn boost_reset_and_boosted_accessors() {
        let mut zs = [zone(ZoneType::Normal, 262144)];
        zs[0].watermark_boost = 777;
        setup_per_zone_wmarks(&mut zs, 4096, 10);
        assert_eq!(zs[0].watermark_boost, 0);
        assert_eq!(zs[0].high_wmark_pages(), 1548);
        zs[0].watermark_boost = 512;
        assert_eq!(zs[0].min_wmark_pages(), 1536);
        assert_eq!(zs[0].low_wmark_pages(), 1798);
        assert_eq!(zs[0].high_wmark_pages(), 2060);
        assert_eq!(zs[0].promo_wmark_pages(), 2322);
        // nr_free_buffer_pages subtracts the (boosted) high watermark.
        assert_eq!(nr_free_buffer_pages(&zs), 262144 - 2060);
    }
}
