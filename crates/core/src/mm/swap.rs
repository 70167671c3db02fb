//! Swap devices: slots, and for zram the compressed pool that lives in RAM.
//!
//! - zram (`drivers/block/zram`): a swap-out compresses the page (CPU charged to the
//!   reclaimer) into a zsmalloc pool whose pages are frames taken from the buddy
//!   allocator, so swapped memory still costs RAM (1/ratio of it). Swap-in
//!   decompresses (CPU charged to the faulting task) and frees the slot (zram is
//!   `SWP_SYNCHRONOUS_IO`: `do_swap_page` skips the swap cache and frees the entry).
//! - ssd: a block device with read latency (stalls the fault) and write time
//!   (asynchronous; accounted as device time, not as a stall).
//!
//! Abstractions: a fixed compression ratio for every page; zsmalloc size classes and
//! fragmentation are not modelled — the pool holds exactly `ceil(stored * csize / 4096)`
//! frames and shrinks as soon as that drops (no zs_compact lag). Swap slots of SSD swap
//! are freed at swap-in too (no swap cache retained; as with `vm_swap_full()`).

use crate::config::{SimConfig, SwapDevice};
use crate::mm::page_alloc::Pfn;

pub struct Swap {
    pub device: SwapDevice,
    /// Slots (pages) of the device.
    pub total: u64,
    /// Slots in use.
    pub used: u64,
    /// Bytes one page takes in the zram pool.
    pub zram_page_bytes: u64,
    /// Frames held by the zram pool.
    pub zram_pool: Vec<Pfn>,
}

impl Swap {
    pub fn new(cfg: &SimConfig) -> Self {
        let zram_page_bytes = (reclaimlab_trace::PAGE_SIZE as f64 / cfg.zram_compression_ratio).ceil() as u64;
        Swap { device: cfg.swap_device, total: cfg.swap_pages(), used: 0, zram_page_bytes, zram_pool: Vec::new() }
    }

    /// `get_nr_swap_pages() > 0`: free slots exist.
    #[inline]
    pub fn has_free_slots(&self) -> bool {
        self.used < self.total
    }

    /// Pool frames the zram pool needs when it stores `stored` pages.
    pub fn zram_frames_for(&self, stored: u64) -> u64 {
        (stored * self.zram_page_bytes).div_ceil(reclaimlab_trace::PAGE_SIZE)
    }

    pub fn is_zram(&self) -> bool {
        self.device == SwapDevice::Zram
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn zram_pool_size_follows_the_ratio() {
        let mut cfg = SimConfig::default();
        cfg.set("swap.zram.compression_ratio", "3.0").unwrap();
        let s = Swap::new(&cfg);
        assert_eq!(s.zram_page_bytes, 1366); // ceil(4096/3)
        assert_eq!(s.zram_frames_for(0), 0);
        assert_eq!(s.zram_frames_for(1), 1);
        assert_eq!(s.zram_frames_for(3), 2); // 4098 bytes
        assert_eq!(s.zram_frames_for(3000), 1001); // 4098000/4096 = 1000.49 → 1001
        assert_eq!(s.total, (1u64 << 30) >> 12);
    }
}
