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
//! per slot in mm/page.rs `Pages`, the page's slot beside its PTE there). Slot 0 is the
//! header page. A page's slot comes from its CPU's slots cache (mm/swap_slots.rs), which
//! takes batches from that CPU's current cluster (mm/swapfile.rs), so kswapd and a task
//! reclaiming on two CPUs fill different clusters, 64 slots at a time; a freed slot is
//! released, its shadow and zram's copy with it, when its CPU has gathered 64. A THP
//! swapped out whole takes a wholly free cluster of 512 slots ([`Swap::alloc_cluster`]).
//!
//! Abstractions: a fixed compression ratio for every page; zsmalloc size classes and
//! fragmentation are not modelled — the pool holds exactly `ceil(stored * csize / 4096)`
//! frames and shrinks as soon as that drops (no zs_compact lag). Swap slots of SSD swap
//! are freed at swap-in too (no swap cache retained; as with `vm_swap_full()`). The
//! allocator is 6.12's for every kernel the model names.

use crate::config::{SimConfig, SwapDevice};
use crate::mm::page_alloc::Pfn;
use crate::mm::swap_slots::{SlotsCache, SWAP_SLOTS_CACHE_SIZE};
use crate::mm::swapfile::Clusters;
pub use crate::mm::swapfile::SWAPFILE_CLUSTER;
use crate::thp::HPAGE_PMD_ORDER;

/// `SWAP_BATCH`: the most `get_swap_pages` takes at once.
const SWAP_BATCH: u64 = 64;

pub struct Swap {
    pub device: SwapDevice,
    /// Slots of the device (`si->max`), the header page's included.
    pub total: u64,
    /// Slots taken from the device (`si->inuse_pages`): the pages swapped out, and the
    /// slots the CPUs' caches hold, unused or freed and not yet given back.
    pub used: u64,
    /// Pages stored on the device: taken by a page and not yet released (zram's
    /// compressed copies).
    pub stored: u64,
    /// Bytes one page takes in the zram pool.
    pub zram_page_bytes: u64,
    /// Frames held by the zram pool.
    pub zram_pool: Vec<Pfn>,
    /// Per 64 slots: which are in use and which hold a shadow entry in the swap cache
    /// (a [`SlotWord`]); a zeroed allocation, so slots never reached cost no host memory.
    map: Vec<SlotWord>,
    clusters: Clusters,
    cache: SlotsCache,
    /// Slots whose release is due (a CPU's return cache was full, or the caches were
    /// drained): the caller releases them with their shadows ([`Self::take_released`]).
    released: Vec<u32>,
}

/// 64 slots: in use (`swap_map[offset] != 0`, one bit each: `[USED]`), and holding a
/// shadow entry (the swap cache's xarray leaf node of these 64 offsets, mm/workingset.rs
/// `ShadowNodes`: `[SHADOW]`). Together in one cache line, since a release clears a bit
/// of each (16 bytes at 16-byte offsets, in one line as glibc aligns its blocks to 16).
/// An array of integers, so `vec![[0; 2]; n]` is a zeroed allocation (a struct's is not).
pub type SlotWord = [u64; 2];
pub const USED: usize = 0;
const SHADOW: usize = 1;

impl Swap {
    pub fn new(cfg: &SimConfig) -> Self {
        let zram_page_bytes = (reclaimlab_trace::PAGE_SIZE as f64 / cfg.zram_compression_ratio).ceil() as u64;
        let total = cfg.swap_pages();
        Swap {
            device: cfg.swap_device,
            total,
            used: 0,
            stored: 0,
            zram_page_bytes,
            zram_pool: Vec::new(),
            map: Vec::new(),
            clusters: Clusters::new(total, cfg.nr_cpus),
            cache: SlotsCache::new(cfg.nr_cpus),
            released: Vec::with_capacity(2 * SWAP_SLOTS_CACHE_SIZE),
        }
    }

    /// `si->pages`: the slots pages can take (all but the header).
    #[inline]
    pub fn pages(&self) -> u64 {
        self.total.saturating_sub(1)
    }

    /// `get_nr_swap_pages()`: slots neither in use nor in a CPU's cache.
    #[inline]
    pub fn nr_swap_pages(&self) -> u64 {
        self.pages() - self.used
    }

    /// The map, allocated (zeroed) at the first allocation, with the header page in use.
    fn map(&mut self) -> &mut [SlotWord] {
        if self.map.is_empty() {
            self.map = vec![[0; 2]; self.total.div_ceil(64) as usize];
            self.map[0][USED] = 1; // swap_map[0] = SWAP_MAP_BAD: "omit header page"
        }
        &mut self.map
    }

    /// `get_swap_pages(n_goal, ...)` of order `order` on `cpu` into `out`: at most
    /// `SWAP_BATCH` and what is free. Returns how many were taken.
    fn get_swap_pages(&mut self, cpu: u32, n_goal: u64, order: u8, out: &mut [u32]) -> usize {
        let n_goal = n_goal.min(SWAP_BATCH).min(self.nr_swap_pages() >> order) as usize;
        self.map();
        let n = self.clusters.alloc_batch(&mut self.map, cpu, order, &mut out[..n_goal]);
        self.used += (n as u64) << order;
        n
    }

    /// Whether `folio_alloc_swap` of `nr` pages (1, or a THP's 512) on `cpu` can have
    /// slots: its CPU's cache holds one, or the device has them free.
    #[inline]
    pub fn can_alloc(&self, cpu: u32, nr: u64) -> bool {
        (nr == 1 && self.cache.has_slot(cpu)) || self.nr_swap_pages() >= nr
    }

    /// `folio_alloc_swap` of a page on `cpu`: the next slot of the CPU's cache, refilled
    /// when empty, or with the cache off one slot from the allocator. Returns its offset
    /// (the caller keeps it with the page); slots the cache gave back on going off are
    /// due for release ([`Self::take_released`]).
    pub fn alloc_slot(&mut self, cpu: u32) -> Option<u32> {
        let (active, drained) = self.cache.check_active(self.nr_swap_pages());
        if drained {
            self.drain();
        }
        let mut slot = None;
        if active {
            slot = self.cache.take(cpu);
            if slot.is_none() {
                // refill_swap_slots_cache: get_swap_pages(SWAP_SLOTS_CACHE_SIZE) into the cache.
                let mut batch = [0u32; SWAP_SLOTS_CACHE_SIZE];
                let n = self.get_swap_pages(cpu, SWAP_SLOTS_CACHE_SIZE as u64, 0, &mut batch);
                self.cache.refill(cpu, &batch[..n]);
                slot = self.cache.take(cpu);
            }
        }
        if slot.is_none() {
            let mut one = [0u32; 1];
            slot = (self.get_swap_pages(cpu, 1, 0, &mut one) == 1).then_some(one[0]);
        }
        self.stored += slot.is_some() as u64;
        slot
    }

    /// `folio_alloc_swap` of a THP (6.12 with `CONFIG_THP_SWAP`: `get_swap_pages` of order
    /// 9, past the slots cache) on `cpu`: a wholly free cluster, or `None` (then reclaim
    /// splits the THP: `thp_swpout_fallback`). Returns its first slot (the caller keeps
    /// each page's slot with the page).
    pub fn alloc_cluster(&mut self, cpu: u32) -> Option<u32> {
        let mut one = [0u32; 1];
        let slot = (self.get_swap_pages(cpu, 1, HPAGE_PMD_ORDER, &mut one) == 1).then_some(one[0])?;
        self.stored += SWAPFILE_CLUSTER;
        Some(slot)
    }

    /// `free_swap_slot(entry)` on `cpu` of a page's slot: parked in the CPU's return cache
    /// while the cache is on, else due for release at once. Returns whether slots are due
    /// ([`Self::take_released`]).
    #[inline]
    pub fn free_swap_slot(&mut self, cpu: u32, slot: u32) -> bool {
        debug_assert!(self.is_used(slot));
        if self.cache.is_active() {
            self.cache.free(cpu, slot, &mut self.released);
        } else {
            self.released.push(slot);
        }
        !self.released.is_empty()
    }

    /// Whether slots are due for release ([`Self::take_released`]).
    #[inline]
    pub fn release_due(&self) -> bool {
        !self.released.is_empty()
    }

    /// The cache went off: its unused slots go back to the device (they hold no
    /// shadow), its freed ones are due for release.
    fn drain(&mut self) {
        let mut unused = Vec::new();
        self.cache.drain(&mut unused, &mut self.released);
        for slot in unused {
            let emptied = self.release_slot(slot);
            debug_assert!(!emptied, "an unused slot holds no shadow");
        }
    }

    /// The slots due for release (`swapcache_free_entries`), in order; the caller
    /// releases each ([`Self::release_stored`]) and clears the list.
    pub fn take_released(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.released)
    }

    /// Give the list [`Self::take_released`] returned back, emptied, to keep its buffer.
    pub fn put_released(&mut self, mut v: Vec<u32>) {
        v.clear();
        self.released = v;
    }

    /// Release a stored page's `slot` (`swap_entry_range_free`: zram's copy goes too).
    /// Returns whether that emptied its swap-cache node ([`Self::release_slot`]).
    #[inline]
    pub fn release_stored(&mut self, slot: u32) -> bool {
        self.stored -= 1;
        self.release_slot(slot)
    }

    /// Release `slot` (`swap_entry_range_free`: `dec_cluster_info_page`, `swap_range_free`)
    /// with the shadow it may still hold (`clear_shadow_from_swap_cache`). Returns whether
    /// that emptied its swap-cache node (its 64 slots hold no shadow any more, and held one
    /// before).
    #[inline]
    fn release_slot(&mut self, slot: u32) -> bool {
        let w = &mut self.map[slot as usize / 64];
        let bit = 1u64 << (slot % 64);
        debug_assert!(w[USED] & bit != 0);
        w[USED] &= !bit;
        let had = w[SHADOW];
        w[SHADOW] &= !bit;
        self.used -= 1;
        self.clusters.dec(slot, 1);
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
        self.nr_swap_pages() > 0
    }

    /// Pool frames the zram pool needs when it stores `stored` pages.
    pub fn zram_frames_for(&self, stored: u64) -> u64 {
        (stored * self.zram_page_bytes).div_ceil(reclaimlab_trace::PAGE_SIZE)
    }

    pub fn is_zram(&self) -> bool {
        self.device == SwapDevice::Zram
    }

    /// The clusters' counts and lists against the slots in use.
    pub fn check(&self) -> Result<(), String> {
        self.clusters.check(&self.map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(size: &str, cpus: u32) -> Swap {
        let mut cfg = SimConfig::default();
        cfg.set("swap.device", "zram").unwrap();
        cfg.set("swap.size", size).unwrap();
        cfg.set("machine.cpus", &cpus.to_string()).unwrap();
        Swap::new(&cfg)
    }

    /// Release what is due as `Mm::swap_release_due` does; returns the slots.
    fn release_due(s: &mut Swap) -> Vec<u32> {
        let due = s.take_released();
        for &slot in &due {
            s.release_stored(slot);
        }
        due
    }

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
        assert_eq!((s.total, s.pages()), ((1u64 << 30) >> 12, ((1u64 << 30) >> 12) - 1));
    }

    /// Each CPU fills its own cluster, 64 slots at a refill of its cache, and new clusters
    /// come in setup_clusters' column order: every 32nd, cluster 0 (the header's) last.
    #[test]
    fn each_cpu_takes_slots_from_its_own_cluster_a_cache_at_a_time() {
        let mut s = device("512M", 2); // 131,072 slots, 256 clusters
        assert_eq!(s.alloc_slot(0), Some(32 * 512));
        assert_eq!((s.used, s.stored, s.nr_swap_pages()), (64, 1, 131_071 - 64));
        for k in 1..64 {
            assert_eq!(s.alloc_slot(0), Some(32 * 512 + k));
        }
        assert_eq!(s.alloc_slot(1), Some(64 * 512), "CPU 1's cluster is the free list's next");
        assert_eq!(s.alloc_slot(0), Some(32 * 512 + 64), "CPU 0's next batch, from its cluster");
        assert_eq!(s.used, 192);
        s.check().unwrap();
        // CPU 0 uses its cluster up (8 batches), then takes the next free one.
        for _ in 0..(512 - 65) {
            s.alloc_slot(0).unwrap();
        }
        assert_eq!(s.alloc_slot(0), Some(96 * 512));
        s.check().unwrap();
    }

    /// A freed slot waits in its CPU's return cache (still in use, its shadow kept) until
    /// 64 have gathered; the 65th free releases the 64 in order, clearing their shadows
    /// and the node they emptied. A cluster so emptied goes to the free list's tail.
    #[test]
    fn freed_slots_are_released_64_at_a_time() {
        let mut s = device("512M", 2);
        let slots: Vec<u32> = (0..65).map(|_| s.alloc_slot(0).unwrap()).collect();
        for &slot in &slots {
            s.store_shadow(slot);
        }
        for &slot in &slots[..64] {
            s.free_swap_slot(1, slot);
        }
        assert!(release_due(&mut s).is_empty());
        assert_eq!((s.used, s.stored, s.node_shadows(32 * 8)), (128, 65, !0), "nothing released yet");
        s.free_swap_slot(1, slots[64]);
        assert_eq!(release_due(&mut s), slots[..64]);
        assert_eq!((s.used, s.stored, s.node_shadows(32 * 8), s.is_used(slots[0])), (64, 1, 0, false));
        s.check().unwrap();
    }

    /// With little free swap the cache goes off: every CPU's unused slots go back, the
    /// freed ones are due, and later allocations take one slot at a time.
    #[test]
    fn the_cache_goes_off_when_swap_runs_low() {
        let mut s = device("4M", 2); // 1,024 slots: 1,023 above the header, 2 clusters
        assert_eq!(s.alloc_slot(0), Some(512), "cluster 1, the free one");
        s.free_swap_slot(0, 512);
        let mut taken = 1;
        // On while free swap is at least 2 CPUs x 64.
        while s.nr_swap_pages() >= 128 {
            s.alloc_slot(taken % 2).unwrap();
            taken += 1;
        }
        assert!(s.cache.is_active());
        let before = s.used;
        s.alloc_slot(0).unwrap();
        assert!(!s.cache.is_active());
        assert_eq!(release_due(&mut s), [512], "the return cache's slot is due");
        assert!(s.used < before, "the caches' unused slots went back");
        let used = s.used;
        s.alloc_slot(1).unwrap();
        assert_eq!(s.used, used + 1, "one slot at a time");
        s.check().unwrap();
    }

    /// A THP takes a wholly free cluster past the cache; without one it gets none, and a
    /// page may then take a slot of a THP's partly freed cluster.
    #[test]
    fn a_thp_takes_a_free_cluster_and_a_page_may_steal_from_a_freed_one() {
        let mut s = device("1M", 1); // 256 slots: cluster 0 only (header, end beyond the device)
        assert_eq!(s.alloc_cluster(0), None);
        let mut s = device("4M", 1); // clusters 0 (header) and 1
        assert_eq!(s.alloc_cluster(0), Some(512));
        assert_eq!((s.used, s.stored), (512, 512));
        assert_eq!(s.alloc_cluster(0), None, "cluster 0 holds the header");
        // Pages fill cluster 0 (nonfull from the start).
        while s.nr_swap_pages() > 0 || s.cache.has_slot(0) {
            s.alloc_slot(0).unwrap();
        }
        assert_eq!(s.alloc_slot(0), None);
        s.free_swap_slot(0, 700);
        release_due(&mut s);
        s.check().unwrap();
        assert_eq!(s.alloc_slot(0), Some(700), "stolen from the THP's cluster");
        s.check().unwrap();
    }

    /// A slot's shadow bit lives with its used bit: storing the first shadow of 64 slots
    /// allocates their node, releasing a slot drops its shadow, and the node is emptied
    /// only by the last one; a slot that never held a shadow empties nothing.
    #[test]
    fn shadow_bits_follow_the_slots() {
        let mut s = device("512M", 1);
        let base = s.alloc_slot(0).unwrap();
        for _ in 0..127 {
            s.alloc_slot(0);
        }
        assert!(s.store_shadow(base + 64));
        assert!(!s.store_shadow(base + 70));
        let node = (base / 64 + 1) as usize;
        assert_eq!(s.node_shadows(node), 1 << 0 | 1 << 6);
        assert!(!s.release_stored(base + 65)); // no shadow there
        assert!(!s.release_stored(base + 64));
        assert!(s.release_stored(base + 70));
        assert_eq!(s.node_shadows(node), 0);
        assert!(s.store_shadow(base));
        s.clear_node_shadows(node - 1);
        assert!(!s.release_stored(base)); // the shrinker took it already
        assert_eq!(s.used, 124);
    }
}
