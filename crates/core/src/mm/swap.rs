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
//! Slots: a swapped-out page holds one slot, whose offset indexes the swap cache's xarray
//! where its shadow entry lives (mm/workingset.rs `ShadowNodes`; the shadows themselves
//! per slot in mm/page.rs `Pages`, the page's slot beside its PTE there). Slots are taken by a
//! next-fit scan from where the last one was taken, wrapping at the end, the order the
//! kernel's per-CPU cluster allocator (mm/swapfile.c 6.12) gives one reclaimer filling
//! free clusters; several reclaimers on several CPUs, each with its own cluster, are not
//! modelled. A THP swapped out whole takes a wholly free aligned cluster of 512 slots
//! ([`Swap::alloc_cluster`]); the kernel's per-order lists of partly used clusters are
//! not modelled (no mTHP orders between 0 and 9 are enabled by default).
//!
//! Abstractions: a fixed compression ratio for every page; zsmalloc size classes and
//! fragmentation are not modelled — the pool holds exactly `ceil(stored * csize / 4096)`
//! frames and shrinks as soon as that drops (no zs_compact lag). Swap slots of SSD swap
//! are freed at swap-in too (no swap cache retained; as with `vm_swap_full()`); the
//! per-CPU swap slots cache that returns freed slots in batches is not modelled.

use crate::config::{SimConfig, SwapDevice};
use crate::mm::page_alloc::Pfn;

/// `SWAPFILE_CLUSTER` with `CONFIG_THP_SWAP`: slots per swap cluster (`HPAGE_PMD_NR`).
pub const SWAPFILE_CLUSTER: u64 = 512;

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
    /// Per 64 slots: which are in use and which hold a shadow entry in the swap cache
    /// (a [`SlotWord`]); a zeroed allocation, so slots the cursor never reached cost no
    /// host memory.
    map: Vec<SlotWord>,
    /// Where the next slot search starts.
    cursor: u64,
}

/// 64 slots: in use (`swap_map[offset] != 0`, one bit each: `[USED]`), and holding a
/// shadow entry (the swap cache's xarray leaf node of these 64 offsets, mm/workingset.rs
/// `ShadowNodes`: `[SHADOW]`). Together in one cache line, since a swap-in clears a bit
/// of each (16 bytes at 16-byte offsets, in one line as glibc aligns its blocks to 16).
/// An array of integers, so `vec![[0; 2]; n]` is a zeroed allocation (a struct's is not).
type SlotWord = [u64; 2];
const USED: usize = 0;
const SHADOW: usize = 1;

impl Swap {
    pub fn new(cfg: &SimConfig) -> Self {
        let zram_page_bytes = (reclaimlab_trace::PAGE_SIZE as f64 / cfg.zram_compression_ratio).ceil() as u64;
        Swap { device: cfg.swap_device, total: cfg.swap_pages(), used: 0, zram_page_bytes, zram_pool: Vec::new(), map: Vec::new(), cursor: 0 }
    }

    /// `folio_alloc_swap` for a page (the caller checked [`Self::has_free_slots`]): the
    /// first free slot from the cursor on. Returns its offset (the caller keeps it with
    /// the page).
    pub fn alloc_slot(&mut self) -> u32 {
        debug_assert!(self.has_free_slots());
        if self.map.is_empty() {
            self.map = vec![[0; 2]; self.total.div_ceil(64) as usize];
        }
        let words = self.map.len();
        let mut w = (self.cursor / 64) as usize;
        // The cursor's own word: only the bits at and after it.
        let mut free = !self.map[w][USED] & (!0u64 << (self.cursor % 64));
        for _ in 0..=words {
            let valid = if w + 1 == words && self.total % 64 != 0 { (1u64 << (self.total % 64)) - 1 } else { !0 };
            free &= valid;
            if free != 0 {
                break;
            }
            w = (w + 1) % words;
            free = !self.map[w][USED];
        }
        let slot = w as u64 * 64 + free.trailing_zeros() as u64;
        debug_assert!(slot < self.total && self.map[w][USED] & (1 << (slot % 64)) == 0, "no free slot found");
        self.map[w][USED] |= 1 << (slot % 64);
        self.cursor = if slot + 1 == self.total { 0 } else { slot + 1 }; // no division per swap-out
        self.used += 1;
        slot as u32
    }

    /// `folio_alloc_swap` of a THP (6.12 with `CONFIG_THP_SWAP`: `get_swap_pages` of order
    /// 9 takes a whole free cluster, `SWAPFILE_CLUSTER` = 512 slots, mm/swapfile.c) for a
    /// THP's 512 pages: the next wholly free cluster from the cursor on, or `None` (then
    /// reclaim splits the THP: `thp_swpout_fallback`). Returns its first slot (the caller
    /// keeps each page's slot with the page).
    pub fn alloc_cluster(&mut self) -> Option<u32> {
        const WORDS: usize = SWAPFILE_CLUSTER as usize / 64;
        let nr = (self.total / SWAPFILE_CLUSTER) as usize;
        if nr == 0 || self.total - self.used < SWAPFILE_CLUSTER {
            return None;
        }
        if self.map.is_empty() {
            self.map = vec![[0; 2]; self.total.div_ceil(64) as usize];
        }
        let start = (self.cursor / SWAPFILE_CLUSTER) as usize;
        let c = (0..nr).map(|k| (start + k) % nr).find(|&c| self.map[c * WORDS..(c + 1) * WORDS].iter().all(|w| w[USED] == 0))?;
        for w in &mut self.map[c * WORDS..(c + 1) * WORDS] {
            w[USED] = !0;
        }
        let slot = c as u64 * SWAPFILE_CLUSTER;
        self.cursor = (slot + SWAPFILE_CLUSTER) % self.total;
        self.used += SWAPFILE_CLUSTER;
        Some(slot as u32)
    }

    /// Release `slot` (`swap_entry_range_free`) with the shadow it may still hold
    /// (`clear_shadow_from_swap_cache`). Returns whether that emptied its swap-cache node
    /// (its 64 slots hold no shadow any more, and held one before).
    #[inline]
    pub fn release_slot(&mut self, slot: u32) -> bool {
        let w = &mut self.map[slot as usize / 64];
        let bit = 1u64 << (slot % 64);
        debug_assert!(w[USED] & bit != 0);
        w[USED] &= !bit;
        let had = w[SHADOW];
        w[SHADOW] &= !bit;
        self.used -= 1;
        had != 0 && w[SHADOW] == 0
    }

    /// `__delete_from_swap_cache` leaves a shadow entry at `slot`. Returns whether its
    /// swap-cache node was empty before (so is allocated now).
    #[inline]
    pub fn store_shadow(&mut self, slot: u32) -> bool {
        let w = &mut self.map[slot as usize / 64];
        let was = w[SHADOW];
        debug_assert!(was & (1 << (slot % 64)) == 0);
        w[SHADOW] = was | 1 << (slot % 64);
        was == 0
    }

    /// The shadow entries of slots `64 * node ..` (one bit each).
    pub fn node_shadows(&self, node: usize) -> u64 {
        self.map.get(node).map_or(0, |w| w[SHADOW])
    }

    /// Drop every shadow entry of swap-cache node `node` (`shadow_lru_isolate`).
    pub fn clear_node_shadows(&mut self, node: usize) {
        self.map[node][SHADOW] = 0;
    }

    /// Host prefetch hint for the word of `slot`'s bits (no simulated effect).
    #[inline(always)]
    pub fn prefetch_slot(&self, slot: u32) {
        crate::mm::prefetch::prefetch(&self.map, slot as usize / 64);
    }

    /// Whether `slot` is in use.
    pub fn is_used(&self, slot: u32) -> bool {
        self.map.get(slot as usize / 64).is_some_and(|w| w[USED] & (1 << (slot % 64)) != 0)
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

    /// Next fit: slots are taken in order from the last one taken, a freed slot is reused
    /// only when the search wraps around to it.
    #[test]
    fn slots_are_taken_next_fit_and_wrap() {
        let mut cfg = SimConfig::default();
        cfg.set("swap.device", "zram").unwrap();
        cfg.set("swap.size", "520K").unwrap(); // 130 slots: the last word is partial
        let mut s = Swap::new(&cfg);
        assert_eq!(s.total, 130);
        for p in 0..130 {
            assert_eq!(s.alloc_slot(), p);
        }
        assert!(!s.has_free_slots());
        s.release_slot(5);
        s.release_slot(100);
        assert_eq!((s.used, s.is_used(5), s.is_used(6)), (128, false, true));
        // The cursor wrapped to 0: the next free slots are 5, then 100.
        assert_eq!(s.alloc_slot(), 5);
        assert_eq!(s.alloc_slot(), 100);
        s.release_slot(5);
        s.release_slot(129);
        // From after 100: 129 comes before 5.
        assert_eq!(s.alloc_slot(), 129);
        assert_eq!(s.alloc_slot(), 5);
    }

    /// A slot's shadow bit lives with its used bit: storing the first shadow of 64 slots
    /// allocates their node, freeing a slot drops its shadow, and the node is emptied only
    /// by the last one; a slot that never held a shadow empties nothing.
    #[test]
    fn shadow_bits_follow_the_slots() {
        let mut cfg = SimConfig::default();
        cfg.set("swap.device", "zram").unwrap();
        cfg.set("swap.size", "520K").unwrap();
        let mut s = Swap::new(&cfg);
        for _ in 0..130 {
            s.alloc_slot();
        }
        assert!(s.store_shadow(64));
        assert!(!s.store_shadow(70));
        assert!(s.store_shadow(128));
        assert_eq!((s.node_shadows(1), s.node_shadows(2)), (1 << 0 | 1 << 6, 1));
        assert!(!s.release_slot(65)); // no shadow there
        assert!(!s.release_slot(64));
        assert!(s.release_slot(70));
        assert_eq!(s.node_shadows(1), 0);
        assert!(s.is_used(66) && !s.is_used(70));
        s.clear_node_shadows(2);
        assert!(!s.release_slot(128)); // the shrinker took it already
        assert_eq!(s.used, 126);
    }
}
