//! The per-CPU swap slots cache (mm/swap_slots.c 6.12).
//!
//! `folio_alloc_swap` of a page takes the next slot of its CPU's cache, refilled with up
//! to `SWAP_SLOTS_CACHE_SIZE` slots at once from the cluster allocator (`get_swap_pages`);
//! `free_swap_slot` parks a freed slot in the CPU's return cache, which goes back to the
//! device (`swapcache_free_entries`: the slot freed, its shadow cleared, zram's copy
//! dropped) only when 64 have gathered. The cache is on while free swap is above 5 × 64
//! slots a CPU and goes off, handing every CPU's slots back, below 64 a CPU
//! (`check_cache_active`). Large folios bypass it.

/// `SWAP_SLOTS_CACHE_SIZE` (= `SWAP_BATCH`).
pub const SWAP_SLOTS_CACHE_SIZE: usize = 64;
/// `THRESHOLD_ACTIVATE_SWAP_SLOTS_CACHE`, `THRESHOLD_DEACTIVATE_SWAP_SLOTS_CACHE`.
const THRESHOLD_ACTIVATE: u64 = 5 * SWAP_SLOTS_CACHE_SIZE as u64;
const THRESHOLD_DEACTIVATE: u64 = SWAP_SLOTS_CACHE_SIZE as u64;

/// One CPU's `struct swap_slots_cache`.
#[derive(Clone)]
struct CpuCache {
    slots: [u32; SWAP_SLOTS_CACHE_SIZE],
    cur: u8,
    nr: u8,
    slots_ret: [u32; SWAP_SLOTS_CACHE_SIZE],
    n_ret: u8,
}

pub struct SlotsCache {
    cpus: Vec<CpuCache>,
    /// `swap_slot_cache_active` (off until the first allocation finds enough free swap).
    active: bool,
}

impl SlotsCache {
    pub fn new(nr_cpus: u32) -> SlotsCache {
        let empty = CpuCache { slots: [0; SWAP_SLOTS_CACHE_SIZE], cur: 0, nr: 0, slots_ret: [0; SWAP_SLOTS_CACHE_SIZE], n_ret: 0 };
        SlotsCache { cpus: vec![empty; nr_cpus.max(1) as usize], active: false }
    }

    /// `check_cache_active()` with `nr_swap_pages` free slots: turns the cache on above the
    /// activation threshold, off (returning true: the caller drains every CPU's slots,
    /// [`Self::drain`]) below the deactivation one. Returns whether it is on, and whether
    /// it just went off.
    #[inline]
    pub fn check_active(&mut self, nr_swap_pages: u64) -> (bool, bool) {
        let cpus = self.cpus.len() as u64;
        if !self.active {
            if nr_swap_pages > cpus * THRESHOLD_ACTIVATE {
                self.active = true;
            }
            return (self.active, false);
        }
        if nr_swap_pages < cpus * THRESHOLD_DEACTIVATE {
            self.active = false;
            return (false, true);
        }
        (true, false)
    }

    /// The next cached slot of `cpu`, if any (`cache->slots[cache->cur++]`).
    #[inline]
    pub fn take(&mut self, cpu: u32) -> Option<u32> {
        let c = &mut self.cpus[cpu as usize];
        if c.nr == 0 {
            return None;
        }
        let slot = c.slots[c.cur as usize];
        c.cur += 1;
        c.nr -= 1;
        Some(slot)
    }

    /// Whether `cpu` holds a slot to hand out.
    #[inline]
    pub fn has_slot(&self, cpu: u32) -> bool {
        self.active && self.cpus[cpu as usize].nr != 0
    }

    /// `refill_swap_slots_cache`: `cpu`'s cache holds `slots` (at most
    /// [`SWAP_SLOTS_CACHE_SIZE`], from `get_swap_pages`).
    pub fn refill(&mut self, cpu: u32, slots: &[u32]) {
        let c = &mut self.cpus[cpu as usize];
        c.slots[..slots.len()].copy_from_slice(slots);
        (c.cur, c.nr) = (0, slots.len() as u8);
    }

    /// `free_swap_slot(entry)` on `cpu` with the cache on: the slot joins the return
    /// cache; a full one is handed to `release` first, in order.
    #[inline]
    pub fn free(&mut self, cpu: u32, slot: u32, release: &mut Vec<u32>) {
        let c = &mut self.cpus[cpu as usize];
        if c.n_ret as usize >= SWAP_SLOTS_CACHE_SIZE {
            release.extend_from_slice(&c.slots_ret[..c.n_ret as usize]);
            c.n_ret = 0;
        }
        c.slots_ret[c.n_ret as usize] = slot;
        c.n_ret += 1;
    }

    #[inline]
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// `__drain_swap_slots_cache(SLOTS_CACHE | SLOTS_CACHE_RET)`: every CPU's unused slots
    /// go to `unused`, its freed ones to `release`.
    pub fn drain(&mut self, unused: &mut Vec<u32>, release: &mut Vec<u32>) {
        for c in &mut self.cpus {
            unused.extend_from_slice(&c.slots[c.cur as usize..(c.cur + c.nr) as usize]);
            (c.cur, c.nr) = (0, 0);
            release.extend_from_slice(&c.slots_ret[..c.n_ret as usize]);
            c.n_ret = 0;
        }
    }
}
