//! Buddy page allocator: zones of 4 KiB frames, free lists per order (0..=MAX_PAGE_ORDER)
//! and migrate type, pageblocks with migrate types and fallback stealing.
//!
//! Model of `mm/page_alloc.c` as of Linux v6.15 (function names cited at each step):
//!
//! - **Free lists** are the kernel's `zone->free_area[order].free_list[migratetype]`. They are
//!   intrusive lists in the shared [`ListArena`] (a frame is on a buddy free list *or* an LRU
//!   list, never both, like `page->lru`/`page->buddy_list`); only the first frame of a free
//!   block is linked. Heads: `zones × NR_PAGE_ORDERS × MIGRATE_TYPES`, allocated in
//!   [`BuddyAllocator::new`].
//! - **Per-frame state** is none of the allocator's own: the buddy order at the head frame
//!   of a free block (`PageBuddy` + `buddy_order()`), `NOT_BUDDY` otherwise, is kept in
//!   the frame's owner word ([`Owner`], mm/page.rs), which a frame without a page does not
//!   otherwise use (as the kernel keeps it in `page->private` and `PageBuddy` in
//!   `page->page_type`, fields a free page does not use); so the allocator's functions
//!   take the owner words beside the list arena. Per pageblock (order 9, 512
//!   frames) one byte of migrate type (`get/set_pageblock_migratetype`). The zone of a pfn is
//!   found by binary search over the (few) zones, so no per-frame zone id is stored.
//! - **Allocation** (`__rmqueue`, single-page mode `RMQUEUE_NORMAL`): `__rmqueue_smallest`,
//!   then `__rmqueue_claim` (largest fallback block first; claim a whole pageblock via
//!   `try_to_claim_block`), then `__rmqueue_steal` (smallest fallback block, pageblock type left
//!   alone). This is the v6.15 split of the older `__rmqueue_fallback`. A per-CPU list's
//!   refill (`rmqueue_bulk`) remembers a steal and steals the rest (`RMQUEUE_STEAL`).
//! - **Freeing**: `__free_pages_ok` → `free_one_page` → `split_large_buddy` →
//!   `__free_one_page` with buddy merging and the `buddy_merge_likely` tail placement.
//! - **Watermark check**: `__zone_watermark_ok` (`lowmem_reserve` of the highest zone index, no highatomic/CMA
//!   reserves in the model). Watermarks are *not* checked inside [`BuddyAllocator::alloc`]; the
//!   caller checks [`BuddyAllocator::zone_watermark_ok`] first, as `get_page_from_freelist`
//!   does.
//!
//! The per-CPU page lists (`rmqueue_pcplist`/`free_unref_page`) are pcp.rs's. Omitted: CMA,
//! page isolation (`MIGRATE_ISOLATE`), the `MIGRATE_HIGHATOMIC` reserve (the free lists exist
//! but nothing reserves pageblocks into them; a `HighAtomic` request only looks at its own,
//! empty, lists),
//! free-page shuffling (`CONFIG_SHUFFLE_PAGE_ALLOCATOR`, off by default), debug guard pages,
//! page reporting, compaction capture, memory hotplug, and the `defrag_mode` sysctl (v6.15 new,
//! default off; callers can still pass [`ALLOC_NOFRAGMENT`] to [`BuddyAllocator::rmqueue`]).

use super::lists::{BootRun, ListArena, ListHead};
use super::page::{Owner, OWNER_TAGS};

pub type Pfn = u32;
pub const MAX_PAGE_ORDER: u8 = 10;
pub const NR_PAGE_ORDERS: usize = MAX_PAGE_ORDER as usize + 1;
pub const PAGEBLOCK_ORDER: u8 = 9;
/// `pageblock_nr_pages`.
pub const PAGEBLOCK_NR_PAGES: u32 = 1 << PAGEBLOCK_ORDER;

/// Host bits per frame used by the allocator itself: none (the buddy order is in the
/// frame's owner word, counted in `Frames::BYTES_PER_FRAME`). Plus one byte per 512-frame
/// pageblock for its migrate type, i.e. 1/512 byte per frame, and a fixed per-zone
/// amount. The free-list links are counted in `ListArena::BYTES_PER_FRAME`.
pub const BITS_PER_FRAME: usize = 0;

/// Per-frame marker: this frame is not the head of a free buddy block (`!PageBuddy`).
const NOT_BUDDY: u8 = 0xE;
/// Added to a buddy order (or `NOT_BUDDY`) written to a free frame's owner word, so that
/// no written value is 0 (a word never written since set-up).
const ORDER_BIAS: u8 = 1;
/// The owner word of a frame with no page that heads no free block (`NOT_BUDDY` as
/// written): what [`super::page::Frames`] writes when a frame loses its page.
pub const OWNER_NOT_BUDDY: Owner = (NOT_BUDDY + ORDER_BIAS) as Owner;
const _: () = assert!(OWNER_NOT_BUDDY < OWNER_TAGS && MAX_PAGE_ORDER < NOT_BUDDY);

/// `watermark_boost_factor` default (sysctl `vm.watermark_boost_factor`).
pub const DEFAULT_WATERMARK_BOOST_FACTOR: u64 = 15000;

/// `ALLOC_NOFRAGMENT` (mm/internal.h): don't fall back into foreign pageblocks below
/// `pageblock_order` and never steal single pages (`__rmqueue_claim` min order, no
/// `__rmqueue_steal`). The caller retries without it, like `get_page_from_freelist`.
pub const ALLOC_NOFRAGMENT: u32 = 0x100;
/// `ALLOC_KSWAPD` (== `__GFP_KSWAPD_RECLAIM`): a watermark boost also sets
/// [`Zone::boosted_watermark`] (`ZONE_BOOSTED_WATERMARK`) so the caller wakes kswapd.
pub const ALLOC_KSWAPD: u32 = 0x800;

/// `MIGRATE_TYPES` of a kernel built with CMA and memory isolation (6); only used for the
/// `page_group_by_mobility_disabled` threshold of `build_all_zonelists`.
const KERNEL_MIGRATE_TYPES: u64 = 6;

#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrateType {
    Unmovable = 0,
    Movable = 1,
    Reclaimable = 2,
    HighAtomic = 3,
}
pub const MIGRATE_PCPTYPES: usize = 3;
pub const MIGRATE_TYPES: usize = 4;

impl MigrateType {
    pub const ALL: [MigrateType; MIGRATE_TYPES] = [MigrateType::Unmovable, MigrateType::Movable, MigrateType::Reclaimable, MigrateType::HighAtomic];

    /// Inverse of `as u8`; panics on values `>= MIGRATE_TYPES`.
    #[inline]
    pub fn from_u8(v: u8) -> MigrateType {
        match v {
            0 => MigrateType::Unmovable,
            1 => MigrateType::Movable,
            2 => MigrateType::Reclaimable,
            3 => MigrateType::HighAtomic,
            _ => panic!("bad migrate type {v}"),
        }
    }
}

/// `fallbacks[MIGRATE_PCPTYPES][MIGRATE_PCPTYPES - 1]` (mm/page_alloc.c).
const FALLBACKS: [[u8; MIGRATE_PCPTYPES - 1]; MIGRATE_PCPTYPES] = [
    /* UNMOVABLE   */ [MigrateType::Reclaimable as u8, MigrateType::Movable as u8],
    /* MOVABLE     */ [MigrateType::Reclaimable as u8, MigrateType::Unmovable as u8],
    /* RECLAIMABLE */ [MigrateType::Unmovable as u8, MigrateType::Movable as u8],
];

/// `migratetype_is_mergeable`: only the pcp types merge across pageblocks of other types.
#[inline]
fn migratetype_is_mergeable(mt: u8) -> bool {
    (mt as usize) < MIGRATE_PCPTYPES
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ZoneType {
    Dma,
    Dma32,
    Normal,
    Movable,
}

/// `zone_idx()` of a ZONE_MOVABLE zone: the `highest_zoneidx` of a user page's
/// allocation (`gfp_zone(GFP_HIGHUSER_MOVABLE)`), for which every zone is eligible.
pub const ZONE_MOVABLE: u8 = ZoneType::Movable as u8;

/// `enum zone_watermarks`.
pub const WMARK_MIN: usize = 0;
pub const WMARK_LOW: usize = 1;
pub const WMARK_HIGH: usize = 2;
pub const WMARK_PROMO: usize = 3;
pub const NR_WMARK: usize = 4;

#[derive(Clone, Debug)]
pub struct ZoneSpec {
    pub node: u16,
    pub zone_type: ZoneType,
    pub start_pfn: Pfn,
    pub nr_pages: u32,
}

pub struct Zone {
    pub node: u16,
    pub zone_type: ZoneType,
    pub start_pfn: Pfn,
    /// Present == managed pages in the model.
    pub managed_pages: u64,
    pub free_pages: u64,
    pub watermark: [u64; NR_WMARK],
    pub watermark_boost: u64,
    /// `lowmem_reserve[highest_zoneidx]` for an allocation that may use every zone of the
    /// node (every allocation in the model is): pages of this zone such an allocation leaves
    /// to allocations that cannot go higher (`setup_per_zone_lowmem_reserve`, watermarks.rs).
    pub lowmem_reserve: u64,
    /// `ZONE_BOOSTED_WATERMARK`: set when a fallback allocation boosted the watermark
    /// (`boost_watermark`); the caller clears it and wakes kswapd (see `rmqueue`). Use
    /// [`BuddyAllocator::take_boosted_watermark`].
    pub boosted_watermark: bool,
    /// Number of pageblocks of each migrate type that intersect this zone (as
    /// `/proc/pagetypeinfo` "Number of blocks type"). A pageblock straddling two zones is
    /// counted in both; such blocks never change type (claims require a whole pageblock inside
    /// one zone, `prep_move_freepages_block`).
    pub nr_pageblocks: [u64; MIGRATE_TYPES],
    end_pfn: Pfn,
    free_area: ListHead,
    nr_free: [u64; NR_PAGE_ORDERS],
}

impl Zone {
    /// A zone with no free lists and no free pages, for watermark arithmetic only
    /// (`setup_per_zone_wmarks` on machines too large to instantiate). Never pass it to the
    /// allocator.
    pub fn detached(spec: &ZoneSpec) -> Zone {
        Zone {
            node: spec.node,
            zone_type: spec.zone_type,
            start_pfn: spec.start_pfn,
            managed_pages: spec.nr_pages as u64,
            free_pages: 0,
            watermark: [0; NR_WMARK],
            watermark_boost: 0,
            lowmem_reserve: 0,
            boosted_watermark: false,
            nr_pageblocks: [0; MIGRATE_TYPES],
            end_pfn: spec.start_pfn.saturating_add(spec.nr_pages),
            free_area: ListHead(u32::MAX),
            nr_free: [0; NR_PAGE_ORDERS],
        }
    }

    /// One past the last pfn (`zone_end_pfn`).
    #[inline]
    pub fn end_pfn(&self) -> Pfn {
        self.end_pfn
    }

    /// `zone_spans_pfn`.
    #[inline]
    pub fn spans(&self, pfn: Pfn) -> bool {
        self.start_pfn <= pfn && pfn < self.end_pfn
    }

    /// `free_area[order].nr_free`: number of free blocks of this order.
    #[inline]
    pub fn nr_free(&self, order: u8) -> u64 {
        self.nr_free[order as usize]
    }

    #[inline]
    pub fn nr_free_by_order(&self) -> [u64; NR_PAGE_ORDERS] {
        self.nr_free
    }

    /// `&zone->free_area[order].free_list[mt]`.
    #[inline(always)]
    fn free_list(&self, order: u8, mt: u8) -> ListHead {
        ListHead(self.free_area.0 + order as u32 * MIGRATE_TYPES as u32 + mt as u32)
    }
}

/// Event counters (the `PGALLOC_EXTFRAG`-style information of `trace_mm_page_alloc_extfrag`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuddyStats {
    /// Allocations served by `__rmqueue_claim` (a foreign pageblock was claimed).
    pub fallback_claims: u64,
    /// Allocations served by `__rmqueue_steal` (a page taken from a foreign pageblock that
    /// keeps its type: fragmentation).
    pub fallback_steals: u64,
    /// Pageblocks whose migrate type was changed by allocation fallbacks.
    pub pageblocks_claimed: u64,
    /// Watermark boosts (`boost_watermark` returning true: a claim attempt below
    /// `pageblock_order`).
    pub watermark_boosts: u64,
    /// Those that left the boost at one pageblock: the zone was unboosted, where its
    /// largest boost is more than a pageblock (the guest's `@@claim` FIRST).
    pub watermark_boosts_first: u64,
    /// The per-CPU lists' refills (`rmqueue_bulk` from `rmqueue_pcplist`, the guest's
    /// `@@refill`), the frames they took, and those that stole some (mm/pcp.rs).
    pub pcp_refills: u64,
    pub pcp_refill_frames: u64,
    pub pcp_refills_stealing: u64,
}

pub struct BuddyAllocator {
    pub zones: Vec<Zone>,
    /// `watermark_boost_factor` (0 disables boosting); default 15000.
    pub watermark_boost_factor: u64,
    pub stats: BuddyStats,
    /// `page_group_by_mobility_disabled`: set like `build_all_zonelists` when the machine has
    /// fewer than `pageblock_nr_pages * MIGRATE_TYPES` (512 × 6) pages.
    page_group_by_mobility_disabled: bool,
    /// Frames the allocator's zones cover (one past the highest pfn). A frame's buddy
    /// order is in its owner word, passed to each call ([`Self::order_at`]): 0 is "as set
    /// up" (the order of a block of a boot run, else `NOT_BUDDY`), the buddy order or
    /// `NOT_BUDDY` plus [`ORDER_BIAS`] once written, a page's word (≥ [`OWNER_TAGS`])
    /// `NOT_BUDDY`. So setting up the free lists writes no owner word.
    nr_frames: Pfn,
    /// The max-order blocks of each zone, freed at set-up as one [`BootRun`] each.
    boot: Vec<BootRun>,
    /// Per pageblock: migrate type.
    pageblock_mt: Vec<u8>,
    /// `(start, end, zone index)` of non-empty zones, sorted by start.
    zone_lookup: Vec<(Pfn, Pfn, u32)>,
}

#[inline]
fn mult_frac(x: u64, n: u64, d: u64) -> u64 {
    let q = x / d;
    let r = x % d;
    q * n + r * n / d
}

impl BuddyAllocator {
    /// Host bits per frame (see the module-level [`BITS_PER_FRAME`]).
    pub const BITS_PER_FRAME: usize = BITS_PER_FRAME;

    /// Build the zones and free all their memory into the buddy lists.
    ///
    /// Pageblocks start `MIGRATE_MOVABLE` (`memmap_init_range` → `init_pageblock_migratetype`),
    /// set at each pageblock-aligned pfn of a zone's memory (mm/mm_init.c 6.12: "if
    /// (pageblock_aligned(pfn)) set_pageblock_migratetype(page, migratetype)"); a pageblock
    /// whose first pfn is in no zone (a zone that begins inside it: ZONE_DMA after its hole,
    /// mm/mod.rs `dma_hole`) keeps the bitmap's 0, `MIGRATE_UNMOVABLE`.
    /// Memory is released like `memblock_free_all` → `__free_pages_memory`: from each zone's
    /// start, the largest naturally aligned block (≤ `MAX_PAGE_ORDER`) that fits, each freed
    /// with `FPI_TO_TAIL` (`__free_pages_core`), so free lists start in ascending pfn order.
    ///
    /// Model deviation: with `page_group_by_mobility_disabled` (tiny machines, < 3072 pages)
    /// pageblocks start `MIGRATE_UNMOVABLE` directly instead of being converted on first use
    /// (the kernel forces every request and every pageblock type change to UNMOVABLE then).
    pub fn new(zones: &[ZoneSpec], lists: &mut ListArena, owner: &mut [Owner]) -> Self {
        let max_end: u64 = zones.iter().map(|s| s.start_pfn as u64 + s.nr_pages as u64).max().unwrap_or(0);
        assert!(max_end <= lists.nr_frames() as u64, "zones end at pfn {max_end} but the list arena has {} frames", lists.nr_frames());
        assert!(max_end <= owner.len() as u64, "zones end at pfn {max_end} but there are {} owner words", owner.len());
        let total: u64 = zones.iter().map(|s| s.nr_pages as u64).sum();
        let disabled = total < PAGEBLOCK_NR_PAGES as u64 * KERNEL_MIGRATE_TYPES;
        let init_mt = if disabled { MigrateType::Unmovable } else { MigrateType::Movable } as u8;

        let mut lookup: Vec<(Pfn, Pfn, u32)> = zones.iter().enumerate().filter(|(_, s)| s.nr_pages > 0).map(|(i, s)| (s.start_pfn, s.start_pfn + s.nr_pages, i as u32)).collect();
        lookup.sort_unstable();
        for w in lookup.windows(2) {
            assert!(w[0].1 <= w[1].0, "zones {} and {} overlap", w[0].2, w[1].2);
        }

        let nr_pageblocks = ((max_end + PAGEBLOCK_NR_PAGES as u64 - 1) >> PAGEBLOCK_ORDER) as usize;
        let mut a = BuddyAllocator {
            zones: Vec::with_capacity(zones.len()),
            watermark_boost_factor: DEFAULT_WATERMARK_BOOST_FACTOR,
            stats: BuddyStats::default(),
            page_group_by_mobility_disabled: disabled,
            nr_frames: max_end as Pfn,
            boot: Vec::new(),
            pageblock_mt: vec![init_mt; nr_pageblocks],
            zone_lookup: lookup,
        };
        for pb in 0..nr_pageblocks {
            if a.try_zone_of((pb as Pfn) << PAGEBLOCK_ORDER).is_none() {
                a.pageblock_mt[pb] = MigrateType::Unmovable as u8;
            }
        }
        for s in zones {
            let mut z = Zone::detached(s);
            z.free_area = lists.alloc_heads((NR_PAGE_ORDERS * MIGRATE_TYPES) as u32);
            if s.nr_pages > 0 {
                let first_pb = s.start_pfn >> PAGEBLOCK_ORDER;
                let last_pb = (z.end_pfn - 1) >> PAGEBLOCK_ORDER;
                for pb in first_pb..=last_pb {
                    z.nr_pageblocks[a.pageblock_mt[pb as usize] as usize] += 1;
                }
            }
            a.zones.push(z);
        }
        // memblock_free_all -> __free_pages_memory(start, end), per zone.
        for zi in 0..a.zones.len() {
            let (mut start, end) = (a.zones[zi].start_pfn, a.zones[zi].end_pfn);
            while start < end {
                let mut order = if start != 0 { MAX_PAGE_ORDER.min(start.trailing_zeros() as u8) } else { MAX_PAGE_ORDER };
                while start as u64 + (1u64 << order) > end as u64 {
                    order -= 1;
                }
                if order == MAX_PAGE_ORDER {
                    // All the max-order blocks from here at once, as freeing each in turn
                    // would leave them (host: without touching their frames).
                    let n = (end - start) >> MAX_PAGE_ORDER;
                    a.free_boot_run(lists, zi, start, n);
                    start += n << MAX_PAGE_ORDER;
                    continue;
                }
                a.free_pages_ok(lists, owner, zi, start, order, true);
                start += 1 << order;
            }
        }
        a
    }

    /// What `free_pages_ok(.., MAX_PAGE_ORDER, to_tail)` of the `n` max-order blocks from
    /// `first` in ascending order leaves, on a zone with no free max-order block yet: each
    /// freed pageblock by pageblock, the second merging with the first
    /// (`split_large_buddy`, `__free_one_page`), the block at the tail of its list. Kept as
    /// a [`BootRun`] whose links and orders are implied until first written.
    fn free_boot_run(&mut self, lists: &mut ListArena, zone: usize, first: Pfn, n: u32) {
        let mt = self.pb_mt(first);
        let z = &mut self.zones[zone];
        z.free_pages += (n as u64) << MAX_PAGE_ORDER;
        z.nr_free[MAX_PAGE_ORDER as usize] += n as u64;
        let run = BootRun { head: z.free_list(MAX_PAGE_ORDER, mt), first, last: first + ((n - 1) << MAX_PAGE_ORDER), stride: 1 << MAX_PAGE_ORDER };
        lists.add_boot_run(run);
        self.boot.push(run);
    }

    /// Take every free block of `zone` off its free list, leaving the zone with no free page
    /// (machine construction: `machine.start_layout`, mm/start_layout.rs).
    pub(crate) fn take_all_free(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize) {
        for order in 0..=MAX_PAGE_ORDER {
            for mt in 0..MIGRATE_TYPES as u8 {
                while let Some(pfn) = lists.head(self.zones[zone].free_list(order, mt)) {
                    self.del_from_free_list(lists, owner, zone, pfn, order, mt);
                    self.zones[zone].free_pages -= 1u64 << order;
                }
            }
        }
    }

    /// Set the migrate type of the pageblock holding `pfn` (machine construction).
    pub(crate) fn set_pageblock_type(&mut self, pfn: Pfn, mt: MigrateType) {
        self.set_pageblock_migratetype(pfn, mt as u8);
    }

    /// Put a free block of `2^order` frames at `pfn` at the tail of `mt`'s list, without
    /// merging (machine construction: the caller places no two free buddies of one order).
    pub(crate) fn place_free_block(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, pfn: Pfn, order: u8, mt: MigrateType) {
        debug_assert!(self.order_at(owner, pfn) == NOT_BUDDY && !lists.is_linked(pfn), "pfn {pfn} is already free");
        debug_assert!(order >= PAGEBLOCK_ORDER || self.pb_mt(pfn) == mt as u8, "free block {pfn} on another type's list");
        self.add_to_free_list(lists, owner, zone, pfn, order, mt as u8, true);
        self.zones[zone].free_pages += 1u64 << order;
    }

    /// Whether mobility grouping is off (`page_group_by_mobility_disabled`).
    pub fn page_group_by_mobility_disabled(&self) -> bool {
        self.page_group_by_mobility_disabled
    }

    // ---------------------------------------------------------------- free-list primitives

    /// The frame's buddy order (`NOT_BUDDY` unless it heads a free block), from its owner
    /// word: a page's word (≥ [`OWNER_TAGS`]) reads as `NOT_BUDDY`.
    #[inline(always)]
    fn order_at(&self, owner: &[Owner], pfn: Pfn) -> u8 {
        match owner[pfn as usize] {
            0 => self.boot_order(pfn),
            w => (w - ORDER_BIAS as Owner).min(NOT_BUDDY as Owner) as u8,
        }
    }

    /// The order of a frame whose owner word was not written since set-up.
    #[cold]
    #[inline(never)]
    fn boot_order(&self, pfn: Pfn) -> u8 {
        if self.boot.iter().any(|r| r.contains(pfn)) {
            MAX_PAGE_ORDER
        } else {
            NOT_BUDDY
        }
    }

    #[inline(always)]
    fn set_order_at(&self, owner: &mut [Owner], pfn: Pfn, order: u8) {
        owner[pfn as usize] = (order + ORDER_BIAS) as Owner;
    }

    /// `__add_to_free_list` + `set_buddy_order`.
    #[allow(clippy::too_many_arguments)] // the list arena and the owner words beside the block
    #[inline(always)]
    fn add_to_free_list(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, pfn: Pfn, order: u8, mt: u8, tail: bool) {
        let z = &mut self.zones[zone];
        let h = z.free_list(order, mt);
        if tail {
            lists.add_tail(h, pfn);
        } else {
            lists.add_head(h, pfn);
        }
        z.nr_free[order as usize] += 1;
        self.set_order_at(owner, pfn, order);
    }

    /// `__del_page_from_free_list` (clears `PageBuddy`).
    #[inline(always)]
    fn del_from_free_list(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, pfn: Pfn, order: u8, mt: u8) {
        let z = &mut self.zones[zone];
        lists.del(z.free_list(order, mt), pfn);
        z.nr_free[order as usize] -= 1;
        self.set_order_at(owner, pfn, NOT_BUDDY);
    }

    /// `page_is_buddy` via `find_buddy_page_pfn`: free, same order, same zone.
    #[inline(always)]
    fn page_is_buddy(&self, owner: &[Owner], zone: usize, pfn: Pfn, order: u8) -> bool {
        self.zones[zone].spans(pfn) && self.order_at(owner, pfn) == order
    }

    // ---------------------------------------------------------------- pageblocks

    /// `get_pfnblock_migratetype` as a raw index.
    #[inline(always)]
    pub(crate) fn pb_mt(&self, pfn: Pfn) -> u8 {
        self.pageblock_mt[(pfn >> PAGEBLOCK_ORDER) as usize]
    }

    /// Migrate type of the pageblock containing `pfn` (`get_pageblock_migratetype`).
    pub fn pageblock_migratetype(&self, pfn: Pfn) -> MigrateType {
        MigrateType::from_u8(self.pb_mt(pfn))
    }

    /// `set_pageblock_migratetype` (forces UNMOVABLE for pcp types when mobility grouping is
    /// disabled), keeping the per-zone pageblock counts.
    fn set_pageblock_migratetype(&mut self, pfn: Pfn, mt: u8) {
        let mt = if self.page_group_by_mobility_disabled && migratetype_is_mergeable(mt) { MigrateType::Unmovable as u8 } else { mt };
        let pb = (pfn >> PAGEBLOCK_ORDER) as usize;
        let old = self.pageblock_mt[pb];
        if old == mt {
            return;
        }
        self.pageblock_mt[pb] = mt;
        let pb_start = (pb as u64) << PAGEBLOCK_ORDER;
        let pb_end = pb_start + PAGEBLOCK_NR_PAGES as u64;
        for z in self.zones.iter_mut() {
            if z.end_pfn > z.start_pfn && (z.start_pfn as u64) < pb_end && pb_start < z.end_pfn as u64 {
                z.nr_pageblocks[old as usize] -= 1;
                z.nr_pageblocks[mt as usize] += 1;
            }
        }
    }

    /// `change_pageblock_range`: set every pageblock of a block of `order ≥ pageblock_order`.
    fn change_pageblock_range(&mut self, pfn: Pfn, order: u8, mt: u8) {
        let n = 1u32 << (order - PAGEBLOCK_ORDER);
        for i in 0..n {
            self.set_pageblock_migratetype(pfn + i * PAGEBLOCK_NR_PAGES, mt);
        }
        self.stats.pageblocks_claimed += n as u64;
    }

    // ---------------------------------------------------------------- allocation

    /// Allocate `2^order` frames from `zone` for a request of migrate type `mt`
    /// (`__rmqueue` with `ALLOC_KSWAPD`, no `ALLOC_NOFRAGMENT`). Watermarks are not checked.
    /// O(MAX_PAGE_ORDER) list operations, no host allocation.
    #[inline]
    pub fn alloc(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, order: u8, mt: MigrateType) -> Option<Pfn> {
        self.rmqueue(lists, owner, zone, order, mt, ALLOC_KSWAPD)
    }

    /// `rmqueue_bulk` for order 0: up to `count` frames of `zone` for a per-CPU list of `mt`,
    /// each by `__rmqueue` (as [`Self::alloc`]) in turn, handed to `add` in that order
    /// (`list_add_tail`). Returns how many (fewer when the zone runs out).
    ///
    /// The refill remembers where `__rmqueue` found pages (`enum rmqueue_mode`, 6.12.117's
    /// mm/page_alloc.c, mainline's "speed up fallbacks in rmqueue_bulk()" of v6.15): once a
    /// page had to be stolen (`RMQUEUE_STEAL`), the rest of the refill is stolen too, without
    /// looking at `mt`'s own lists or trying to claim a pageblock again (the zone lock is
    /// held, so neither can have changed) — and so without boosting the watermark again for
    /// every page (`try_to_claim_block`'s `boost_watermark`); a claim returns it to
    /// `RMQUEUE_NORMAL`.
    #[inline]
    pub(crate) fn rmqueue_bulk(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, mt: MigrateType, count: u32, mut add: impl FnMut(Pfn)) -> u32 {
        let mut smallest_mt = mt as u8;
        if self.page_group_by_mobility_disabled && migratetype_is_mergeable(smallest_mt) {
            smallest_mt = MigrateType::Unmovable as u8;
        }
        let mut stealing = false;
        let mut i = 0;
        while i < count {
            if stealing {
                match self.rmqueue_steal(lists, owner, zone, 0, smallest_mt) {
                    Some(pfn) => {
                        add(pfn);
                        i += 1;
                        continue;
                    }
                    None => return i,
                }
            }
            // __rmqueue's first step, inlined; when it finds nothing (and changed nothing)
            // the rest of __rmqueue.
            let (pfn, n) = match self.rmqueue_smallest_run(lists, owner, zone, smallest_mt, count - i) {
                Some(run) => run,
                None => match self.rmqueue_fallback(lists, owner, zone, 0, smallest_mt, ALLOC_KSWAPD) {
                    Some((pfn, stolen)) => {
                        stealing = stolen;
                        (pfn, 1)
                    }
                    None => return i,
                },
            };
            for pfn in pfn..pfn + n {
                add(pfn);
            }
            i += n;
        }
        count
    }

    /// `__rmqueue_smallest` for order 0, called up to `max` times in a row. When the
    /// smallest free block of `mt` has order k, every order below holds nothing of `mt`, so
    /// `expand` puts the block's upper halves at the heads of those orders and the next
    /// 2^k − 1 calls take them back in pfn order, leaving the lists as they were without
    /// the block. Such a run is done as one `del_page_from_free_list` when `max` covers it;
    /// otherwise one frame is split off as the kernel does. Returns (first pfn, frames).
    #[inline(always)]
    fn rmqueue_smallest_run(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, mt: u8, max: u32) -> Option<(Pfn, u32)> {
        for current_order in 0..=MAX_PAGE_ORDER {
            let z = &self.zones[zone];
            if z.nr_free[current_order as usize] == 0 {
                continue;
            }
            if let Some(pfn) = lists.head(z.free_list(current_order, mt)) {
                let n = 1u32 << current_order;
                if n <= max {
                    self.del_from_free_list(lists, owner, zone, pfn, current_order, mt);
                    self.zones[zone].free_pages -= n as u64;
                    return Some((pfn, n));
                }
                self.page_del_and_expand(lists, owner, zone, pfn, 0, current_order, mt);
                return Some((pfn, 1));
            }
        }
        None
    }

    /// `__rmqueue` with explicit `alloc_flags` ([`ALLOC_NOFRAGMENT`], [`ALLOC_KSWAPD`]).
    ///
    /// Order of attempts (v6.15, `RMQUEUE_NORMAL` mode): `__rmqueue_smallest` on the requested
    /// type; `__rmqueue_claim`; unless `ALLOC_NOFRAGMENT`, `__rmqueue_steal`.
    pub fn rmqueue(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, order: u8, mt: MigrateType, alloc_flags: u32) -> Option<Pfn> {
        assert!(order <= MAX_PAGE_ORDER, "order {order} > MAX_PAGE_ORDER");
        let mut mt = mt as u8;
        // gfp_migratetype(): everything is UNMOVABLE without mobility grouping.
        if self.page_group_by_mobility_disabled && migratetype_is_mergeable(mt) {
            mt = MigrateType::Unmovable as u8;
        }
        if let Some(p) = self.rmqueue_smallest(lists, owner, zone, order, mt) {
            return Some(p);
        }
        self.rmqueue_fallback(lists, owner, zone, order, mt, alloc_flags).map(|(p, _)| p)
    }

    /// `__rmqueue` after `__rmqueue_smallest` found nothing of `mt` (already
    /// `gfp_migratetype`'s): `__rmqueue_claim`, then, unless `ALLOC_NOFRAGMENT`,
    /// `__rmqueue_steal`. Returns the block and whether it was stolen (`RMQUEUE_STEAL`).
    fn rmqueue_fallback(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, order: u8, mt: u8, alloc_flags: u32) -> Option<(Pfn, bool)> {
        if !migratetype_is_mergeable(mt) {
            // HighAtomic has no fallbacks (and no reserve in this model).
            return None;
        }
        if let Some(p) = self.rmqueue_claim(lists, owner, zone, order, mt, alloc_flags) {
            self.stats.fallback_claims += 1;
            return Some((p, false));
        }
        if alloc_flags & ALLOC_NOFRAGMENT == 0 {
            if let Some(p) = self.rmqueue_steal(lists, owner, zone, order, mt) {
                return Some((p, true));
            }
        }
        None
    }

    /// `__rmqueue_smallest`: first block of order ≥ `order` on the `mt` lists, split by
    /// `page_del_and_expand`.
    #[inline(always)]
    fn rmqueue_smallest(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, order: u8, mt: u8) -> Option<Pfn> {
        for current_order in order..=MAX_PAGE_ORDER {
            let z = &self.zones[zone];
            if z.nr_free[current_order as usize] == 0 {
                continue;
            }
            // get_page_from_free_area: list_first_entry_or_null.
            if let Some(pfn) = lists.head(z.free_list(current_order, mt)) {
                self.page_del_and_expand(lists, owner, zone, pfn, order, current_order, mt);
                return Some(pfn);
            }
        }
        None
    }

    /// `page_del_and_expand` + `account_freepages`.
    #[allow(clippy::too_many_arguments)] // the list arena and the owner words beside the block
    #[inline(always)]
    fn page_del_and_expand(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, pfn: Pfn, low: u8, high: u8, mt: u8) {
        self.del_from_free_list(lists, owner, zone, pfn, high, mt);
        let nr_added = self.expand(lists, owner, zone, pfn, low, high, mt);
        self.zones[zone].free_pages -= (1u64 << high) - nr_added as u64;
    }

    /// `expand`: keep the low half, put each high half back (at the list head) at decreasing
    /// orders. Returns the number of pages put back.
    #[allow(clippy::too_many_arguments)] // the list arena and the owner words beside the block
    #[inline]
    fn expand(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, pfn: Pfn, low: u8, mut high: u8, mt: u8) -> u32 {
        let mut size = 1u32 << high;
        let mut nr_added = 0;
        while high > low {
            high -= 1;
            size >>= 1;
            self.add_to_free_list(lists, owner, zone, pfn + size, high, mt, false);
            nr_added += size;
        }
        nr_added
    }

    /// `should_try_claim_block` (v6.15; `can_steal_fallback` before): claim the whole
    /// pageblock for orders ≥ `pageblock_order / 2`, for unmovable/reclaimable requests, or
    /// when mobility grouping is disabled.
    #[inline]
    fn should_try_claim_block(&self, order: u8, start_mt: u8) -> bool {
        order >= PAGEBLOCK_ORDER
            || order >= PAGEBLOCK_ORDER / 2
            || start_mt == MigrateType::Reclaimable as u8
            || start_mt == MigrateType::Unmovable as u8
            || self.page_group_by_mobility_disabled
    }

    /// `find_suitable_fallback`: first non-empty fallback list at `order`.
    #[inline]
    fn find_suitable_fallback(&self, lists: &ListArena, zone: usize, order: u8, start_mt: u8) -> Option<u8> {
        let z = &self.zones[zone];
        if z.nr_free[order as usize] == 0 {
            return None;
        }
        FALLBACKS[start_mt as usize].iter().copied().find(|&fmt| !lists.is_empty(z.free_list(order, fmt)))
    }

    /// `__rmqueue_claim`: from the largest order down, try to claim the pageblock of a
    /// fallback block. Since `should_try_claim_block` is monotone in the order, the loop stops
    /// at the first order too low to claim (the kernel's "Advanced into orders too low to
    /// claim, abort"; v6.15 scans on but cannot claim below it either, same result).
    fn rmqueue_claim(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, order: u8, start_mt: u8, alloc_flags: u32) -> Option<Pfn> {
        let min_order = if order < PAGEBLOCK_ORDER && alloc_flags & ALLOC_NOFRAGMENT != 0 { PAGEBLOCK_ORDER } else { order };
        let mut current_order = MAX_PAGE_ORDER;
        loop {
            if current_order < min_order || !self.should_try_claim_block(current_order, start_mt) {
                return None;
            }
            if let Some(fallback_mt) = self.find_suitable_fallback(lists, zone, current_order, start_mt) {
                let pfn = lists.head(self.zones[zone].free_list(current_order, fallback_mt)).unwrap();
                if let Some(p) = self.try_to_claim_block(lists, owner, zone, pfn, current_order, order, start_mt, fallback_mt, alloc_flags) {
                    return Some(p);
                }
            }
            if current_order == 0 {
                return None;
            }
            current_order -= 1;
        }
    }

    /// `try_to_claim_block` (v6.15; `steal_suitable_fallback` in ≤ v6.14, same rule):
    /// - a block of order ≥ `pageblock_order` is taken whole: its pageblocks change type
    ///   (`change_pageblock_range`) and the remainder is expanded onto the new type's lists;
    /// - otherwise the watermark is boosted (`boost_watermark`), and if the pageblock lies
    ///   inside the zone (`prep_move_freepages_block`) and
    ///   `free_pages + alike_pages >= pageblock_nr_pages / 2` (256 frames; or mobility grouping
    ///   is off), all its free blocks move to the new type (`__move_freepages_block`), the
    ///   pageblock changes type and the request is served by `__rmqueue_smallest`.
    ///   `alike_pages`: for a MOVABLE request, the block's movable pages (`PageLRU` — here:
    ///   allocated frames linked on a list of the shared arena, i.e. on an LRU list; a frame
    ///   on a per-CPU page list is not `PageLRU` and not counted); for an
    ///   UNMOVABLE/RECLAIMABLE request falling back to a MOVABLE block, the non-free,
    ///   non-movable pages; between UNMOVABLE and RECLAIMABLE, 0.
    #[allow(clippy::too_many_arguments)]
    fn try_to_claim_block(
        &mut self,
        lists: &mut ListArena,
        owner: &mut [Owner],
        zone: usize,
        pfn: Pfn,
        current_order: u8,
        order: u8,
        start_mt: u8,
        block_mt: u8,
        alloc_flags: u32,
    ) -> Option<Pfn> {
        if current_order >= PAGEBLOCK_ORDER {
            self.del_from_free_list(lists, owner, zone, pfn, current_order, block_mt);
            self.change_pageblock_range(pfn, current_order, start_mt);
            let nr_added = self.expand(lists, owner, zone, pfn, order, current_order, start_mt);
            self.zones[zone].free_pages -= (1u64 << current_order) - nr_added as u64;
            return Some(pfn);
        }

        if self.boost_watermark(zone) && alloc_flags & ALLOC_KSWAPD != 0 {
            self.zones[zone].boosted_watermark = true;
        }

        // prep_move_freepages_block
        let start = pfn & !(PAGEBLOCK_NR_PAGES - 1);
        let end = start as u64 + PAGEBLOCK_NR_PAGES as u64;
        let z = &self.zones[zone];
        if !z.spans(start) || !z.spans((end - 1) as Pfn) {
            return None;
        }
        let end = end as Pfn;
        let (mut free_pages, mut movable_pages) = (0u32, 0u32);
        let mut p = start;
        while p < end {
            let o = self.order_at(owner, p);
            if o != NOT_BUDDY {
                free_pages += 1 << o;
                p += 1 << o;
                continue;
            }
            // "PageLRU(page) || __PageMovable(page)": a frame on an LRU list (linked on
            // the arena). Frames on the per-CPU lists are neither free nor on an LRU, so
            // they count as neither (prep_move_freepages_block, mm/page_alloc.c 6.12).
            if lists.is_linked(p) {
                movable_pages += 1;
            }
            p += 1;
        }

        let alike_pages = if start_mt == MigrateType::Movable as u8 {
            movable_pages
        } else if block_mt == MigrateType::Movable as u8 {
            PAGEBLOCK_NR_PAGES - (free_pages + movable_pages)
        } else {
            0
        };

        if free_pages + alike_pages >= (1 << (PAGEBLOCK_ORDER - 1)) || self.page_group_by_mobility_disabled {
            self.move_freepages_block(lists, owner, zone, start, block_mt, start_mt);
            self.set_pageblock_migratetype(start, start_mt);
            self.stats.pageblocks_claimed += 1;
            return self.rmqueue_smallest(lists, owner, zone, order, start_mt);
        }
        None
    }

    /// `__move_freepages_block`: move every free block of the pageblock from the `old_mt` to
    /// the `new_mt` lists (`move_to_free_list` uses `list_move_tail`).
    fn move_freepages_block(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, start: Pfn, old_mt: u8, new_mt: u8) {
        let end = start + PAGEBLOCK_NR_PAGES;
        let z = &self.zones[zone];
        let mut p = start;
        while p < end {
            let o = self.order_at(owner, p);
            if o == NOT_BUDDY {
                p += 1;
                continue;
            }
            lists.del(z.free_list(o, old_mt), p);
            lists.add_tail(z.free_list(o, new_mt), p);
            p += 1 << o;
        }
    }

    /// `boost_watermark`: raise `watermark_boost` by a pageblock, up to
    /// `max(pageblock_nr_pages, mult_frac(high_wmark, watermark_boost_factor, 10000))`.
    /// Not on zones smaller than 4 pageblocks, nor before watermarks are set up.
    fn boost_watermark(&mut self, zone: usize) -> bool {
        let factor = self.watermark_boost_factor;
        let z = &mut self.zones[zone];
        if factor == 0 {
            return false;
        }
        if PAGEBLOCK_NR_PAGES as u64 * 4 > z.managed_pages {
            return false;
        }
        let max_boost = mult_frac(z.watermark[WMARK_HIGH], factor, 10000);
        if max_boost == 0 {
            return false;
        }
        let max_boost = max_boost.max(PAGEBLOCK_NR_PAGES as u64);
        z.watermark_boost = (z.watermark_boost + PAGEBLOCK_NR_PAGES as u64).min(max_boost);
        self.stats.watermark_boosts += 1;
        self.stats.watermark_boosts_first += u64::from(z.watermark_boost == PAGEBLOCK_NR_PAGES as u64);
        true
    }

    /// `__rmqueue_steal`: smallest fallback block of order ≥ `order`; split it on its own
    /// (foreign) type's lists, leaving the pageblock type alone. Counted where the kernel
    /// traces it (`mm_page_alloc_extfrag`).
    fn rmqueue_steal(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, order: u8, start_mt: u8) -> Option<Pfn> {
        for current_order in order..=MAX_PAGE_ORDER {
            if let Some(fallback_mt) = self.find_suitable_fallback(lists, zone, current_order, start_mt) {
                let pfn = lists.head(self.zones[zone].free_list(current_order, fallback_mt)).unwrap();
                self.page_del_and_expand(lists, owner, zone, pfn, order, current_order, fallback_mt);
                self.stats.fallback_steals += 1;
                return Some(pfn);
            }
        }
        None
    }

    /// Clear and return `ZONE_BOOSTED_WATERMARK` (the caller then wakes kswapd, as `rmqueue`
    /// does after a successful allocation).
    pub fn take_boosted_watermark(&mut self, zone: usize) -> bool {
        std::mem::replace(&mut self.zones[zone].boosted_watermark, false)
    }

    // ---------------------------------------------------------------- freeing

    /// Free a block of `2^order` frames at `pfn` (as returned by [`alloc`](Self::alloc) with the
    /// same order): `__free_pages_ok` → `free_one_page` → `split_large_buddy` →
    /// `__free_one_page`. O(MAX_PAGE_ORDER), no host allocation.
    #[inline]
    pub fn free(&mut self, lists: &mut ListArena, owner: &mut [Owner], pfn: Pfn, order: u8) {
        let zone = self.zone_of(pfn);
        debug_assert!(order <= MAX_PAGE_ORDER);
        debug_assert!(pfn & ((1u32 << order) - 1) == 0, "free of unaligned block {pfn} order {order}");
        debug_assert!(pfn as u64 + (1u64 << order) <= self.zones[zone].end_pfn as u64, "free of block {pfn} order {order} past its zone");
        debug_assert!(self.order_at(owner, pfn) == NOT_BUDDY, "double free of pfn {pfn}");
        debug_assert!(!lists.is_linked(pfn), "freeing pfn {pfn} that is still on a list");
        self.free_pages_ok(lists, owner, zone, pfn, order, false);
    }

    /// Whether `pfn` heads a free block (`PageBuddy`; invariant checks).
    pub(crate) fn is_free_block_head(&self, owner: &[Owner], pfn: Pfn) -> bool {
        self.order_at(owner, pfn) != NOT_BUDDY
    }

    /// `free_pcppages_bulk`'s `__free_one_page`: an order-0 frame of `zone` leaves a per-CPU
    /// page list for the buddy lists ([`Self::free`] without looking the zone up).
    #[inline(always)]
    pub(crate) fn free_pcp_frame(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, pfn: Pfn) {
        debug_assert_eq!(self.try_zone_of(pfn), Some(zone));
        debug_assert!(self.order_at(owner, pfn) == NOT_BUDDY, "double free of pfn {pfn}");
        debug_assert!(!lists.is_linked(pfn), "freeing pfn {pfn} that is still on a list");
        let mt = self.pb_mt(pfn);
        self.free_one_page(lists, owner, zone, pfn, 0, mt, false);
    }
    /// `split_large_buddy`: blocks above `pageblock_order` are freed pageblock by pageblock,
    /// each with its own pageblock's migrate type.
    fn free_pages_ok(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, pfn: Pfn, order: u8, to_tail: bool) {
        let end = pfn as u64 + (1u64 << order);
        let order = order.min(PAGEBLOCK_ORDER);
        let mut p = pfn;
        loop {
            let mt = self.pb_mt(p);
            self.free_one_page(lists, owner, zone, p, order, mt, to_tail);
            let next = p as u64 + (1u64 << order);
            if next == end {
                break;
            }
            p = next as Pfn;
        }
    }

    /// `__free_one_page`: merge with the buddy (`pfn ^ (1 << order)`) while it is free, in the
    /// zone and of the same order; at `order ≥ pageblock_order` a buddy of another type merges
    /// only if both types are mergeable (`migratetype_is_mergeable`), and its pageblock then
    /// takes our type. The result goes to the list head, or the tail if
    /// `buddy_merge_likely` (or `FPI_TO_TAIL`).
    #[allow(clippy::too_many_arguments)] // the list arena and the owner words beside the block
    #[inline(always)]
    fn free_one_page(&mut self, lists: &mut ListArena, owner: &mut [Owner], zone: usize, mut pfn: Pfn, mut order: u8, mt: u8, to_tail: bool) {
        self.zones[zone].free_pages += 1u64 << order; // account_freepages
        let mut buddy_pfn = 0;
        while order < MAX_PAGE_ORDER {
            let mut buddy_mt = mt;
            buddy_pfn = pfn ^ (1u32 << order);
            if !self.page_is_buddy(owner, zone, buddy_pfn, order) {
                break;
            }
            if order >= PAGEBLOCK_ORDER {
                buddy_mt = self.pb_mt(buddy_pfn);
                if mt != buddy_mt && (!migratetype_is_mergeable(mt) || !migratetype_is_mergeable(buddy_mt)) {
                    break;
                }
            }
            self.del_from_free_list(lists, owner, zone, buddy_pfn, order, buddy_mt);
            if buddy_mt != mt {
                // "Match buddy type. This ensures that an expand() down the line puts the
                // sub-blocks on the right freelists."
                self.set_pageblock_migratetype(buddy_pfn, mt);
            }
            pfn &= buddy_pfn;
            order += 1;
        }
        let to_tail = to_tail || self.buddy_merge_likely(owner, zone, pfn, buddy_pfn, order);
        self.add_to_free_list(lists, owner, zone, pfn, order, mt, to_tail);
    }

    /// `buddy_merge_likely`: is the buddy of the next-higher-order block free? Then this block
    /// will probably merge soon, so put it at the tail where it is less likely to be allocated.
    #[inline]
    fn buddy_merge_likely(&self, owner: &[Owner], zone: usize, pfn: Pfn, buddy_pfn: Pfn, order: u8) -> bool {
        if order >= MAX_PAGE_ORDER - 1 {
            return false;
        }
        let higher = buddy_pfn & pfn;
        // find_buddy_page_pfn(higher_page, ..., order + 1): page_is_buddy compares the zones of
        // higher_page and its buddy.
        self.zones[zone].spans(higher) && self.page_is_buddy(owner, zone, higher ^ (1u32 << (order + 1)), order + 1)
    }

    // ---------------------------------------------------------------- queries

    /// Zone containing `pfn`, or None for a hole.
    #[inline]
    pub fn try_zone_of(&self, pfn: Pfn) -> Option<usize> {
        let i = self.zone_lookup.partition_point(|z| z.0 <= pfn);
        if i == 0 {
            return None;
        }
        let (_, end, zi) = self.zone_lookup[i - 1];
        (pfn < end).then_some(zi as usize)
    }

    /// Zone containing `pfn` (`page_zone`); panics for a pfn in no zone.
    #[inline]
    pub fn zone_of(&self, pfn: Pfn) -> usize {
        match self.try_zone_of(pfn) {
            Some(z) => z,
            None => panic!("pfn {pfn} is in no zone"),
        }
    }

    /// `__zone_watermark_ok` for an allocation that may use every zone of the node (its
    /// `lowmem_reserve[highest_zoneidx]` is [`Zone::lowmem_reserve`], 0 in a node's highest
    /// zone) and no `ALLOC_RESERVES`/highatomic/CMA adjustments:
    /// `free_pages - ((1 << order) - 1) > mark + lowmem_reserve`, and for `order > 0` a free
    /// block of order ≥ `order` on an UNMOVABLE, MOVABLE or RECLAIMABLE list. Callers add
    /// `watermark_boost` to the mark themselves (`*_wmark_pages()`; see `Zone::*_wmark_pages`).
    #[inline]
    pub fn zone_watermark_ok(&self, zone: usize, order: u8, mark: u64) -> bool {
        self.watermark_ok_above(zone, order, mark, self.zones[zone].lowmem_reserve)
    }

    /// [`Self::zone_watermark_ok`] for an allocation whose highest eligible zone is
    /// `highest_zoneidx`: `lowmem_reserve[highest_zoneidx]` is 0 when that is the zone
    /// itself (or below it), else [`Zone::lowmem_reserve`] — the model's nodes have at
    /// most two zones, so there is no class in between.
    pub fn zone_watermark_ok_for(&self, zone: usize, order: u8, mark: u64, highest_zoneidx: u8) -> bool {
        let z = &self.zones[zone];
        let lowmem_reserve = if highest_zoneidx <= z.zone_type as u8 { 0 } else { z.lowmem_reserve };
        self.watermark_ok_above(zone, order, mark, lowmem_reserve)
    }

    /// `__zone_watermark_ok` with the class's `lowmem_reserve` given.
    #[inline(always)]
    fn watermark_ok_above(&self, zone: usize, order: u8, mark: u64, lowmem_reserve: u64) -> bool {
        let z = &self.zones[zone];
        // free_pages may go negative - that's OK
        let free_pages = z.free_pages as i64 - ((1i64 << order) - 1);
        if free_pages <= (mark + lowmem_reserve) as i64 {
            return false;
        }
        if order == 0 {
            return true;
        }
        // Free-list emptiness per type is not visible without the arena; nr_free counts blocks
        // on all lists, and MIGRATE_HIGHATOMIC lists are always empty in the model, so a
        // non-zero nr_free at some order ≥ `order` means a suitable pcp-type block exists.
        (order..=MAX_PAGE_ORDER).any(|o| z.nr_free[o as usize] != 0)
    }

    /// `free_area[order].nr_free` of `zone`: number of free blocks of that order.
    #[inline]
    pub fn free_blocks(&self, zone: usize, order: u8) -> u64 {
        self.zones[zone].nr_free[order as usize]
    }

    /// Number of free blocks of `order` on the `mt` list (`/proc/pagetypeinfo`).
    pub fn free_blocks_mt(&self, lists: &ListArena, zone: usize, order: u8, mt: MigrateType) -> u64 {
        lists.len(self.zones[zone].free_list(order, mt as u8))
    }

    /// Free blocks per order (`/proc/buddyinfo`), for fragmentation indices.
    #[inline]
    pub fn nr_free_by_order(&self, zone: usize) -> [u64; NR_PAGE_ORDERS] {
        self.zones[zone].nr_free
    }

    /// The list head of `free_area[order].free_list[mt]` (tests and inspection).
    pub fn free_list_head(&self, zone: usize, order: u8, mt: MigrateType) -> ListHead {
        self.zones[zone].free_list(order, mt as u8)
    }

    /// `Some(order)` if `pfn` is the first frame of a free block (`PageBuddy`).
    #[inline]
    pub fn buddy_order(&self, owner: &[Owner], pfn: Pfn) -> Option<u8> {
        if pfn < self.nr_frames {
            Some(self.order_at(owner, pfn)).filter(|&o| o != NOT_BUDDY)
        } else {
            None
        }
    }

    /// Whether frame `pfn` lies inside a free block (walks up the possible block heads:
    /// O(MAX_PAGE_ORDER)).
    pub fn is_free(&self, owner: &[Owner], pfn: Pfn) -> bool {
        let Some(zone) = self.try_zone_of(pfn) else {
            return false;
        };
        let z = &self.zones[zone];
        (0..=MAX_PAGE_ORDER).any(|o| {
            let head = pfn & !((1u32 << o) - 1);
            z.spans(head) && self.order_at(owner, head) != NOT_BUDDY && self.order_at(owner, head) >= o
        })
    }

    /// Σ free pages over all zones.
    pub fn nr_free_pages(&self) -> u64 {
        self.zones.iter().map(|z| z.free_pages).sum()
    }

    /// Σ managed pages over all zones.
    pub fn total_pages(&self) -> u64 {
        self.zones.iter().map(|z| z.managed_pages).sum()
    }

    /// Check the allocator's invariants: every linked free block has the matching order
    /// marker, is aligned and inside its zone, sits on the list of its pageblock(s)' type, and
    /// is fully merged (its buddy is not a free block of the same order); per-order counts and
    /// `free_pages` match the lists; no stray `PageBuddy` markers; interior frames of free
    /// blocks are neither markers nor linked; pageblock counts match the pageblock types.
    pub fn check_invariants(&self, lists: &ListArena, owner: &[Owner]) -> Result<(), String> {
        let mut total_blocks = 0u64;
        for (zi, z) in self.zones.iter().enumerate() {
            let mut free = 0u64;
            for order in 0..=MAX_PAGE_ORDER {
                let mut n = 0u64;
                for mt in 0..MIGRATE_TYPES as u8 {
                    for pfn in lists.iter(z.free_list(order, mt)) {
                        n += 1;
                        let size = 1u64 << order;
                        if !z.spans(pfn) || pfn as u64 + size > z.end_pfn as u64 {
                            return Err(format!("zone {zi}: free block {pfn} order {order} outside the zone"));
                        }
                        if pfn as u64 & (size - 1) != 0 {
                            return Err(format!("zone {zi}: free block {pfn} not aligned to order {order}"));
                        }
                        if self.order_at(owner, pfn) != order {
                            return Err(format!("zone {zi}: block {pfn} on order-{order} list has order marker {}", self.order_at(owner, pfn)));
                        }
                        let nr_pb = if order >= PAGEBLOCK_ORDER { 1u32 << (order - PAGEBLOCK_ORDER) } else { 1 };
                        for i in 0..nr_pb {
                            let pbt = self.pb_mt(pfn + i * PAGEBLOCK_NR_PAGES);
                            if pbt != mt {
                                return Err(format!("zone {zi}: block {pfn} order {order} on the type-{mt} list but pageblock {} has type {pbt}", (pfn >> PAGEBLOCK_ORDER) + i));
                            }
                        }
                        if order < MAX_PAGE_ORDER {
                            let b = pfn ^ (1u32 << order);
                            if self.page_is_buddy(owner, zi, b, order) && (order < PAGEBLOCK_ORDER || (migratetype_is_mergeable(mt) && migratetype_is_mergeable(self.pb_mt(b)))) {
                                return Err(format!("zone {zi}: free buddies {pfn} and {b} of order {order} not merged"));
                            }
                        }
                    }
                }
                if n != z.nr_free[order as usize] {
                    return Err(format!("zone {zi}: {n} blocks on order-{order} lists, nr_free says {}", z.nr_free[order as usize]));
                }
                free += n << order;
                total_blocks += n;
            }
            if free != z.free_pages {
                return Err(format!("zone {zi}: free blocks hold {free} pages, free_pages says {}", z.free_pages));
            }
            if free > z.managed_pages {
                return Err(format!("zone {zi}: {free} free pages > {} managed", z.managed_pages));
            }
            // Interior frames of free blocks.
            let mut p = z.start_pfn;
            while p < z.end_pfn {
                let o = self.order_at(owner, p);
                if o == NOT_BUDDY {
                    p += 1;
                    continue;
                }
                if o > MAX_PAGE_ORDER {
                    return Err(format!("zone {zi}: pfn {p} has order marker {o}"));
                }
                for q in p + 1..p + (1u32 << o) {
                    if self.order_at(owner, q) != NOT_BUDDY {
                        return Err(format!("zone {zi}: pfn {q} inside free block {p} order {o} is marked free"));
                    }
                    if lists.is_linked(q) {
                        return Err(format!("zone {zi}: pfn {q} inside free block {p} order {o} is on a list"));
                    }
                }
                p += 1 << o;
            }
            // Pageblock counts.
            let mut counts = [0u64; MIGRATE_TYPES];
            if z.end_pfn > z.start_pfn {
                for pb in (z.start_pfn >> PAGEBLOCK_ORDER)..=((z.end_pfn - 1) >> PAGEBLOCK_ORDER) {
                    counts[self.pageblock_mt[pb as usize] as usize] += 1;
                }
            }
            if counts != z.nr_pageblocks {
                return Err(format!("zone {zi}: pageblock counts {:?}, recorded {:?}", counts, z.nr_pageblocks));
            }
        }
        let marks = (0..self.nr_frames).filter(|&p| self.order_at(owner, p) != NOT_BUDDY).count() as u64;
        if marks != total_blocks {
            return Err(format!("{marks} frames marked as free-block heads, {total_blocks} blocks on the free lists"));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- compaction support

impl BuddyAllocator {
    /// `__isolate_free_page` for compaction's free scanner (mm/page_alloc.c): take the free
    /// block headed by `pfn` off its list and return its order. The caller has checked the
    /// watermark. "Set the pageblock if the isolated page is at least half of a pageblock":
    /// a mergeable pageblock of another type becomes MOVABLE with its other free blocks.
    pub fn isolate_free_block(&mut self, lists: &mut ListArena, owner: &mut [Owner], pfn: Pfn) -> u8 {
        let zone = self.zone_of(pfn);
        let order = self.order_at(owner, pfn);
        assert!(order != NOT_BUDDY, "pfn {pfn} is not the head of a free block");
        let mt = self.pb_mt(pfn);
        self.del_from_free_list(lists, owner, zone, pfn, order, mt);
        self.zones[zone].free_pages -= 1u64 << order;
        if order + 1 >= PAGEBLOCK_ORDER {
            let mov = MigrateType::Movable as u8;
            let n = 1u32 << order.saturating_sub(PAGEBLOCK_ORDER);
            for i in 0..n {
                let pb = (pfn & !(PAGEBLOCK_NR_PAGES - 1)) + i * PAGEBLOCK_NR_PAGES;
                let t = self.pb_mt(pb);
                let z = &self.zones[zone];
                if t != mov && migratetype_is_mergeable(t) && z.spans(pb) && z.spans(pb + PAGEBLOCK_NR_PAGES - 1) {
                    self.move_freepages_block(lists, owner, zone, pb, t, mov);
                    self.set_pageblock_migratetype(pb, mov);
                }
            }
        }
        order
    }

    /// Whether `free_area[order].free_list[mt]` of `zone` is empty.
    #[inline]
    pub fn free_list_empty(&self, lists: &ListArena, zone: usize, order: u8, mt: MigrateType) -> bool {
        lists.is_empty(self.zones[zone].free_list(order, mt as u8))
    }

    /// `find_suitable_fallback(area, order, migratetype, only_stealable=true)` as
    /// `__compact_finished` uses it: a fallback list at `order` is non-empty and the block
    /// there could be claimed (`should_try_claim_block`).
    pub fn has_claimable_fallback(&self, lists: &ListArena, zone: usize, order: u8, mt: MigrateType) -> bool {
        self.should_try_claim_block(order, mt as u8) && self.find_suitable_fallback(lists, zone, order, mt as u8).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(zone_type: ZoneType, start_pfn: Pfn, nr_pages: u32) -> ZoneSpec {
        ZoneSpec { node: 0, zone_type, start_pfn, nr_pages }
    }

    /// The allocator, its list arena and the frames' owner words (as `Frames` starts them).
    fn machine(specs: &[ZoneSpec]) -> (BuddyAllocator, ListArena, Vec<Owner>) {
        let end = specs.iter().map(|s| s.start_pfn + s.nr_pages).max().unwrap();
        let mut lists = ListArena::new(end);
        let mut owner = vec![0; end as usize];
        let a = BuddyAllocator::new(specs, &mut lists, &mut owner);
        a.check_invariants(&lists, &owner).unwrap();
        lists.check_invariants().unwrap();
        (a, lists, owner)
    }

    /// One Normal zone of `n` pages at pfn 0.
    fn one_zone(n: u32) -> (BuddyAllocator, ListArena, Vec<Owner>) {
        machine(&[spec(ZoneType::Normal, 0, n)])
    }

    fn check(a: &BuddyAllocator, l: &ListArena, o: &[Owner]) {
        a.check_invariants(l, o).unwrap();
        l.check_invariants().unwrap();
    }

    #[test]
    fn a_refill_hands_out_what_one_rmqueue_a_frame_would() {
        // The same fragmented zone twice: free blocks of orders 0 to 6 and the untouched
        // rest. rmqueue_bulk takes a smallest block whole when the count covers it.
        let fragmented = || {
            let (mut a, mut l, mut w) = one_zone(1 << 14);
            let got: Vec<Pfn> = (0..6000).map(|_| a.alloc(&mut l, &mut w, 0, 0, MigrateType::Movable).unwrap()).collect();
            for (i, &pfn) in got.iter().enumerate() {
                if i % 7 < 3 || (i / 64) % 3 == 0 {
                    a.free(&mut l, &mut w, pfn, 0);
                }
            }
            (a, l, w)
        };
        for count in [1, 2, 5, 31, 200, 3000] {
            let ((mut a, mut l, mut w), (mut b, mut m, mut p)) = (fragmented(), fragmented());
            let mut bulk = Vec::new();
            assert_eq!(a.rmqueue_bulk(&mut l, &mut w, 0, MigrateType::Movable, count, |pfn| bulk.push(pfn)), count);
            let each: Vec<Pfn> = (0..count).map(|_| b.alloc(&mut m, &mut p, 0, 0, MigrateType::Movable).unwrap()).collect();
            assert_eq!(bulk, each, "count {count}");
            check(&a, &l, &w);
            assert_eq!(a.zones[0].free_pages, b.zones[0].free_pages);
            for order in 0..=MAX_PAGE_ORDER {
                for mt in 0..MIGRATE_TYPES as u8 {
                    let (x, y): (Vec<Pfn>, Vec<Pfn>) = (l.iter(a.zones[0].free_list(order, mt)).collect(), m.iter(b.zones[0].free_list(order, mt)).collect());
                    assert_eq!(x, y, "count {count}: order {order} type {mt}");
                }
            }
        }
    }

    /// Set watermarks like `__setup_per_zone_wmarks` with min_free_kbytes 4096 for one zone.
    fn set_wmarks(a: &mut BuddyAllocator) {
        for z in a.zones.iter_mut() {
            z.watermark = [128, 160, 192, 224];
        }
    }

    const MOV: MigrateType = MigrateType::Movable;
    const UNMOV: MigrateType = MigrateType::Unmovable;

    #[test]
    fn initial_state_aligned_zone() {
        let (a, l, w) = one_zone(16 * 1024);
        let z = &a.zones[0];
        assert_eq!(z.free_pages, 16384);
        assert_eq!(z.managed_pages, 16384);
        let mut expect = [0u64; NR_PAGE_ORDERS];
        expect[10] = 16;
        assert_eq!(a.nr_free_by_order(0), expect);
        assert_eq!(z.nr_pageblocks, [0, 32, 0, 0]);
        // FPI_TO_TAIL: ascending pfn order from the head.
        let h = a.free_list_head(0, 10, MOV);
        assert_eq!(l.iter(h).collect::<Vec<_>>(), (0..16).map(|i| i * 1024).collect::<Vec<_>>());
        assert!(!a.page_group_by_mobility_disabled());
        assert_eq!(a.pageblock_migratetype(12345), MOV);
        assert_eq!(BuddyAllocator::BITS_PER_FRAME, 0);
        assert!(w.iter().all(|&x| x == 0), "setting up the free lists writes no owner word");
    }

    #[test]
    fn a_free_blocks_order_is_in_its_head_frames_owner_word() {
        let (mut a, mut l, mut w) = one_zone(4096);
        // Splitting the first max-order block for one frame: the frame taken is marked
        // not-a-buddy, the upper halves expand puts back carry their orders.
        assert_eq!(a.alloc(&mut l, &mut w, 0, 0, MOV), Some(0));
        assert_eq!(w[0], OWNER_NOT_BUDDY);
        for o in 0..MAX_PAGE_ORDER {
            assert_eq!(w[1 << o], o as Owner + 1, "the order-{o} half");
            assert_eq!(a.buddy_order(&w, 1 << o), Some(o));
        }
        assert_eq!(a.buddy_order(&w, 1024), Some(MAX_PAGE_ORDER), "an untouched block of the boot run");
        // A page's owner word (Frames::install: the page complemented) is no buddy; giving
        // the frame back (Frames::release) and freeing it merges the block whole again.
        w[0] = !7;
        assert_eq!(a.buddy_order(&w, 0), None);
        check(&a, &l, &w);
        w[0] = OWNER_NOT_BUDDY;
        a.free(&mut l, &mut w, 0, 0);
        assert_eq!(a.buddy_order(&w, 0), Some(MAX_PAGE_ORDER));
        assert_eq!(w[0], MAX_PAGE_ORDER as Owner + 1);
        assert!((1..1024).all(|p| a.buddy_order(&w, p).is_none()));
        check(&a, &l, &w);
    }

    #[test]
    fn odd_zone_edges_use_largest_aligned_blocks() {
        // Zone [3, 1003) (`__free_pages_memory`): pfn 3 order 0, 4 order 2, 8 order 3, ...,
        // 256 order 8; at 512 an order-9 block would end at 1024 > 1003, so 512 order 8,
        // 768 order 7, 896 order 6, 960 order 5, 992 order 3, 1000 order 1, 1002 order 0.
        let (a, l, w) = machine(&[spec(ZoneType::Dma, 3, 1000), spec(ZoneType::Dma32, 1003, 5000)]);
        let z0: Vec<(u32, u8)> = {
            let mut v = vec![];
            for p in 3..1003 {
                if let Some(o) = a.buddy_order(&w, p) {
                    v.push((p, o));
                }
            }
            v
        };
        assert_eq!(z0, vec![(3, 0), (4, 2), (8, 3), (16, 4), (32, 5), (64, 6), (128, 7), (256, 8), (512, 8), (768, 7), (896, 6), (960, 5), (992, 3), (1000, 1), (1002, 0)]);
        assert_eq!(a.zones[0].free_pages, 1000);
        assert_eq!(a.zones[1].free_pages, 5000);
        // pfn 1002 (zone 0) and 1003 (zone 1) are order-0 buddies in different zones: unmerged.
        assert_eq!(a.buddy_order(&w, 1003), Some(0));
        assert_eq!(a.zone_of(1002), 0);
        assert_eq!(a.zone_of(1003), 1);
        assert_eq!(a.try_zone_of(6003), None);
        assert_eq!(a.try_zone_of(0), None);
        // Pageblock 1 ([512,1024)) straddles both zones and is counted in both. Pageblock 0
        // begins at pfn 0, in no zone: memmap_init_range never marks it movable.
        assert_eq!(a.zones[0].nr_pageblocks, [1, 1, 0, 0]);
        assert_eq!(a.pageblock_migratetype(3), MigrateType::Unmovable);
        assert_eq!(a.zones[1].nr_pageblocks, [0, 11, 0, 0]); // pageblocks 1..=11
        check(&a, &l, &w);
    }

    #[test]
    fn odd_zone_alloc_everything_and_back() {
        let (mut a, mut l, mut w) = machine(&[spec(ZoneType::Dma, 3, 1000), spec(ZoneType::Dma32, 1003, 5000)]);
        let before: Vec<_> = (0..2).map(|z| a.nr_free_by_order(z)).collect();
        let mut got = vec![];
        while let Some(p) = a.alloc(&mut l, &mut w, 0, 0, MOV) {
            assert!((3..1003).contains(&p), "pfn {p} outside zone 0");
            got.push(p);
        }
        assert_eq!(got.len(), 1000);
        got.sort_unstable();
        got.dedup();
        assert_eq!(got.len(), 1000);
        assert_eq!(a.zones[0].free_pages, 0);
        assert!(!a.zone_watermark_ok(0, 0, 0));
        check(&a, &l, &w);
        for p in got.iter().rev() {
            a.free(&mut l, &mut w, *p, 0);
        }
        check(&a, &l, &w);
        assert_eq!(a.nr_free_by_order(0), before[0]);
        assert_eq!(a.nr_free_by_order(1), before[1]);
        // A hole between zones.
        let (mut a, mut l, mut w) = machine(&[spec(ZoneType::Dma32, 0, 1000), spec(ZoneType::Normal, 2048, 1952)]);
        assert_eq!(a.try_zone_of(1500), None);
        let p = a.alloc(&mut l, &mut w, 1, 10, MOV).unwrap();
        assert_eq!(p, 2048);
        a.free(&mut l, &mut w, p, 10);
        check(&a, &l, &w);
    }

    #[test]
    fn split_keeps_low_half_and_frees_high_halves() {
        let (mut a, l0, mut w) = one_zone(4096);
        let mut l = l0;
        let p = a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap();
        assert_eq!(p, 0);
        let mut expect = [1u64; NR_PAGE_ORDERS];
        expect[10] = 3;
        assert_eq!(a.nr_free_by_order(0), expect);
        for o in 0..10u8 {
            assert_eq!(a.buddy_order(&w, 1 << o), Some(o));
            assert_eq!(l.head(a.free_list_head(0, o, MOV)), Some(1 << o));
        }
        assert_eq!(a.zones[0].free_pages, 4095);
        check(&a, &l, &w);
        // order-3 request next: the order-3 block at 8 is taken unsplit.
        assert_eq!(a.alloc(&mut l, &mut w, 0, 3, MOV), Some(8));
        // order-2 next: 4.
        assert_eq!(a.alloc(&mut l, &mut w, 0, 2, MOV), Some(4));
        // order-2 again: split the order-4 block at 16 -> 16 kept, 20@2 freed.
        assert_eq!(a.alloc(&mut l, &mut w, 0, 2, MOV), Some(16));
        assert_eq!(a.buddy_order(&w, 20), Some(2));
        assert_eq!(a.zones[0].free_pages, 4096 - 1 - 8 - 4 - 4);
        check(&a, &l, &w);
    }

    #[test]
    fn buddy_merging_restores_max_order() {
        let (mut a, mut l, mut w) = one_zone(4096);
        let initial = a.nr_free_by_order(0);
        let p0 = a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap();
        let p1 = a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap();
        assert_eq!((p0, p1), (0, 1));
        a.free(&mut l, &mut w, p0, 0);
        // buddy 1 allocated: stays an order-0 block.
        assert_eq!(a.buddy_order(&w, 0), Some(0));
        check(&a, &l, &w);
        a.free(&mut l, &mut w, p1, 0);
        assert_eq!(a.buddy_order(&w, 0), Some(10));
        assert_eq!(a.buddy_order(&w, 1), None);
        assert_eq!(a.nr_free_by_order(0), initial);
        check(&a, &l, &w);
    }

    #[test]
    fn buddy_merge_likely_puts_block_at_tail() {
        let (mut a, mut l, mut w) = one_zone(4096);
        let pages: Vec<_> = (0..8).map(|_| a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap()).collect();
        assert_eq!(pages, (0..8).collect::<Vec<_>>());
        a.free(&mut l, &mut w, 7, 0); // buddy 6 busy; higher 6's order-1 buddy 4 busy -> head
        a.free(&mut l, &mut w, 2, 0); // buddy 3 busy; higher 2's order-1 buddy 0 busy -> head
        let h0 = a.free_list_head(0, 0, MOV);
        assert_eq!(l.iter(h0).collect::<Vec<_>>(), vec![2, 7]);
        a.free(&mut l, &mut w, 3, 0); // merges with 2 -> order-1 block at 2
        assert_eq!(a.buddy_order(&w, 2), Some(1));
        assert_eq!(l.iter(h0).collect::<Vec<_>>(), vec![7]);
        // free 0: buddy 1 busy, but the order-1 buddy of block [0,2) (= 2) is free -> tail.
        a.free(&mut l, &mut w, 0, 0);
        assert_eq!(l.iter(h0).collect::<Vec<_>>(), vec![7, 0]);
        check(&a, &l, &w);
        // and the next order-0 allocation takes 7, not 0
        assert_eq!(a.alloc(&mut l, &mut w, 0, 0, MOV), Some(7));
    }

    #[test]
    fn round_trip_mixed_orders_restores_initial() {
        let (mut a, mut l, mut w) = machine(&[spec(ZoneType::Dma32, 0, 8192), spec(ZoneType::Normal, 8192, 7000)]);
        let initial: Vec<_> = (0..2).map(|z| a.nr_free_by_order(z)).collect();
        let mut held = vec![];
        for i in 0..500u32 {
            let order = (i % 5) as u8;
            let mt = MigrateType::from_u8((i % 3) as u8);
            let zone = (i % 2) as usize;
            if let Some(p) = a.alloc(&mut l, &mut w, zone, order, mt) {
                held.push((p, order));
            }
        }
        check(&a, &l, &w);
        let used: u64 = held.iter().map(|&(_, o)| 1u64 << o).sum();
        assert_eq!(a.nr_free_pages() + used, 15192);
        // free in a scrambled order
        let n = held.len();
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by_key(|&i| (i * 7919) % n);
        for i in idx {
            let (p, o) = held[i];
            a.free(&mut l, &mut w, p, o);
        }
        check(&a, &l, &w);
        assert_eq!(a.nr_free_by_order(0), initial[0]);
        assert_eq!(a.nr_free_by_order(1), initial[1]);
        assert_eq!(a.nr_free_pages(), 15192);
    }

    #[test]
    fn unmovable_claims_whole_max_order_block() {
        let (mut a, mut l, mut w) = one_zone(8192);
        set_wmarks(&mut a);
        let p = a.alloc(&mut l, &mut w, 0, 0, UNMOV).unwrap();
        // __rmqueue_claim starts at MAX_PAGE_ORDER: the first order-10 block (pfn 0) is taken,
        // both its pageblocks become UNMOVABLE and the remainder goes to the UNMOVABLE lists.
        assert_eq!(p, 0);
        assert_eq!(a.pageblock_migratetype(0), UNMOV);
        assert_eq!(a.pageblock_migratetype(512), UNMOV);
        assert_eq!(a.pageblock_migratetype(1024), MOV);
        assert_eq!(a.zones[0].nr_pageblocks, [2, 14, 0, 0]);
        assert_eq!(a.free_blocks_mt(&l, 0, 9, UNMOV), 1);
        assert_eq!(a.free_blocks_mt(&l, 0, 9, MOV), 0);
        assert_eq!(a.stats.fallback_claims, 1);
        assert_eq!(a.stats.pageblocks_claimed, 2);
        // No boost for claims of whole pageblocks.
        assert_eq!(a.zones[0].watermark_boost, 0);
        // Further unmovable allocations come from that block.
        assert_eq!(a.alloc(&mut l, &mut w, 0, 0, UNMOV), Some(1));
        check(&a, &l, &w);
        // Freeing restores the orders; the pageblocks stay UNMOVABLE (as in the kernel).
        a.free(&mut l, &mut w, 0, 0);
        a.free(&mut l, &mut w, 1, 0);
        assert_eq!(a.nr_free_by_order(0)[10], 8);
        assert_eq!(a.free_blocks_mt(&l, 0, 10, UNMOV), 1);
        check(&a, &l, &w);
    }

    #[test]
    fn isolate_free_block_for_compaction_converts_half_pageblocks() {
        let (mut a, mut l, mut w) = one_zone(8192);
        set_wmarks(&mut a);
        // An unmovable allocation claims the order-10 block at 0 (pageblocks 0 and 1); the
        // remainder sits on the UNMOVABLE lists: 512@512 (order 9), 256@256, ..., 1@1.
        assert_eq!(a.alloc(&mut l, &mut w, 0, 0, UNMOV), Some(0));
        assert_eq!(a.zones[0].nr_pageblocks, [2, 14, 0, 0]);
        let free0 = a.zones[0].free_pages;
        // __isolate_free_page of the order-9 block: taken off its list; being at least half
        // a pageblock, its (mergeable) pageblock becomes MOVABLE.
        assert_eq!(a.isolate_free_block(&mut l, &mut w, 512), 9);
        assert_eq!(a.zones[0].free_pages, free0 - 512);
        assert_eq!(a.buddy_order(&w, 512), None);
        assert_eq!(a.pageblock_migratetype(512), MOV);
        assert_eq!(a.zones[0].nr_pageblocks, [1, 15, 0, 0]);
        check(&a, &l, &w);
        // The order-8 block at 256 is exactly half of pageblock 0: the pageblock and its other
        // free blocks (128@128 ... 1@1) move to MOVABLE.
        assert_eq!(a.isolate_free_block(&mut l, &mut w, 256), 8);
        assert_eq!(a.pageblock_migratetype(0), MOV);
        assert_eq!(a.free_blocks_mt(&l, 0, 7, MOV), 1);
        assert_eq!(a.free_blocks_mt(&l, 0, 7, UNMOV), 0);
        check(&a, &l, &w);
        // A smaller block leaves its pageblock's type alone.
        let u = a.alloc(&mut l, &mut w, 0, 0, UNMOV).unwrap();
        let pb = u & !(PAGEBLOCK_NR_PAGES - 1);
        assert_eq!(a.pageblock_migratetype(pb), UNMOV);
        let small = (pb..pb + PAGEBLOCK_NR_PAGES).find(|&p| matches!(a.buddy_order(&w, p), Some(o) if o < 8)).unwrap();
        a.isolate_free_block(&mut l, &mut w, small);
        assert_eq!(a.pageblock_migratetype(pb), UNMOV);
        check(&a, &l, &w);
        // Freed back, the isolated blocks merge again.
        a.free(&mut l, &mut w, 512, 9);
        a.free(&mut l, &mut w, 256, 8);
        check(&a, &l, &w);
    }

    #[test]
    fn claim_partial_pageblock_when_half_free() {
        let (mut a, mut l, mut w) = one_zone(4096);
        set_wmarks(&mut a);
        // Fill everything with movable order-0 pages (ascending pfns).
        let all: Vec<_> = (0..4096).map(|_| a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap()).collect();
        assert_eq!(all, (0..4096).collect::<Vec<_>>());
        assert!(a.alloc(&mut l, &mut w, 0, 0, MOV).is_none());
        // Free 300 pages of pageblock 0: 256@0, 32@256, 8@288, 4@296.
        for p in 0..300 {
            a.free(&mut l, &mut w, p, 0);
        }
        assert_eq!(a.buddy_order(&w, 0), Some(8));
        check(&a, &l, &w);
        // Unmovable request: claim from order 8 (pfn 0): free 300, alike = 512-300 = 212 -> claim.
        let p = a.alloc(&mut l, &mut w, 0, 0, UNMOV).unwrap();
        assert_eq!(a.pageblock_migratetype(0), UNMOV);
        assert_eq!(a.zones[0].nr_pageblocks, [1, 7, 0, 0]);
        // __rmqueue_smallest(UNMOVABLE) after the move: the order-2 block at 296 is the smallest.
        assert_eq!(p, 296);
        assert_eq!(a.free_blocks_mt(&l, 0, 8, UNMOV), 1);
        assert_eq!(a.free_blocks_mt(&l, 0, 8, MOV), 0);
        // boost_watermark: max_boost = max(512, mult_frac(192, 15000, 10000) = 288) = 512.
        assert_eq!(a.zones[0].watermark_boost, 512);
        assert_eq!((a.stats.watermark_boosts, a.stats.watermark_boosts_first), (1, 1));
        assert!(a.take_boosted_watermark(0));
        assert!(!a.take_boosted_watermark(0));
        check(&a, &l, &w);
    }

    #[test]
    fn boost_watermark_caps_the_boost_and_counts_the_first_from_unboosted() {
        // A 256 MiB guest's DMA32: high 642, so max_boost = mult_frac(642, 15000, 10000) = 963.
        let (mut a, _, _) = one_zone(60_000);
        a.zones[0].watermark[WMARK_HIGH] = 642;
        assert!(a.boost_watermark(0) && a.boost_watermark(0) && a.boost_watermark(0));
        assert_eq!(a.zones[0].watermark_boost, 963);
        assert_eq!((a.stats.watermark_boosts, a.stats.watermark_boosts_first), (3, 1));
        // balance_pgdat takes back what its pass snapshotted: the next boost is a first again.
        a.zones[0].watermark_boost = 0;
        assert!(a.boost_watermark(0));
        assert_eq!(a.stats.watermark_boosts_first, 2);
        a.watermark_boost_factor = 0;
        assert!(!a.boost_watermark(0), "vm.watermark_boost_factor 0 turns boosting off");
        assert_eq!(a.stats.watermark_boosts, 4);
    }

    #[test]
    fn movable_claim_counts_lru_pages_and_steal_without_claim() {
        // Pageblock 0 UNMOVABLE (claimed by an unmovable allocation), all else movable & used.
        let (mut a, mut l, mut w) = one_zone(4096);
        let lru = l.alloc_heads(1);
        let mut unmov: Vec<_> = (0..1024).map(|_| a.alloc(&mut l, &mut w, 0, 0, UNMOV).unwrap()).collect();
        unmov.sort_unstable();
        assert_eq!(unmov, (0..1024).collect::<Vec<_>>());
        for _ in 0..3072 {
            a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap();
        }
        assert_eq!(a.zones[0].free_pages, 0);
        // Free 16 unmovable pages: an order-4 block at 0 on the UNMOVABLE list.
        for p in 0..16 {
            a.free(&mut l, &mut w, p, 0);
        }
        assert_eq!(a.buddy_order(&w, 0), Some(4));
        // Movable request: claim attempt at order 4 fails (16 free + 0 LRU < 256), orders < 4
        // are too low to claim -> __rmqueue_steal takes pfn 0, pageblock stays UNMOVABLE and
        // the split remainders stay on the UNMOVABLE lists.
        let p = a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap();
        assert_eq!(p, 0);
        assert_eq!(a.pageblock_migratetype(0), UNMOV);
        assert_eq!(a.stats.fallback_steals, 1);
        assert_eq!(a.free_blocks_mt(&l, 0, 3, UNMOV), 1);
        check(&a, &l, &w);
        // With ALLOC_NOFRAGMENT no steal happens.
        assert_eq!(a.rmqueue(&mut l, &mut w, 0, 0, MOV, ALLOC_NOFRAGMENT), None);
        // Only orders >= pageblock_order / 2 = 4 may claim for a movable request: free 16..32
        // (an order-4 block). 15 + 16 = 31 free pages alone are not enough...
        for p in 16..32 {
            a.free(&mut l, &mut w, p, 0);
        }
        assert_eq!(a.buddy_order(&w, 16), Some(4));
        let q = a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap();
        assert_eq!(a.pageblock_migratetype(0), UNMOV);
        assert_eq!(a.stats.fallback_steals, 2);
        a.free(&mut l, &mut w, q, 0);
        // ...but with 300 allocated frames of pageblock 0 on an "LRU" list (PageLRU) a movable
        // claim sees 31 free + 300 movable >= 256 and claims the pageblock; the request is then
        // served by __rmqueue_smallest(MOVABLE): the order-0 block at pfn 1.
        for p in 100..400 {
            l.add_head(lru, p);
        }
        let p = a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap();
        assert_eq!(p, 1);
        assert_eq!(a.pageblock_migratetype(0), MOV);
        assert_eq!(a.stats.fallback_claims, 1 + 1); // the first unmovable alloc + this one
        check(&a, &l, &w);
    }

    #[test]
    fn a_refill_that_had_to_steal_steals_the_rest_without_boosting_again() {
        // Pageblocks 0-1 unmovable, everything allocated; then 64 unmovable frames free as one
        // order-6 block, and 8 more in order-0 blocks. No movable frame is free.
        let zone = || {
            let (mut a, mut l, mut w) = one_zone(4096);
            set_wmarks(&mut a);
            for mt in [UNMOV; 1024].into_iter().chain([MOV; 3072]) {
                a.alloc(&mut l, &mut w, 0, 0, mt).unwrap();
            }
            for p in (0..64).chain((100..116).step_by(2)) {
                a.free(&mut l, &mut w, p, 0);
            }
            assert_eq!(a.buddy_order(&w, 0), Some(6));
            let boosts = a.stats.watermark_boosts;
            (a, l, w, boosts)
        };
        // One refill of 31 (rmqueue_bulk, 6.12.117): the first frame tries to claim the order-6
        // block (a boost; 64 + 8 free + 0 on an LRU < 256) and is stolen from the smallest
        // unmovable block; the other 30 are stolen without another claim attempt.
        let (mut a, mut l, mut w, boosts) = zone();
        let mut bulk = Vec::new();
        assert_eq!(a.rmqueue_bulk(&mut l, &mut w, 0, MOV, 31, |pfn| bulk.push(pfn)), 31);
        assert_eq!(a.stats.watermark_boosts - boosts, 1);
        assert_eq!(a.stats.fallback_steals, 31);
        assert_eq!(a.pageblock_migratetype(0), UNMOV);
        check(&a, &l, &w);
        // The same 31 frames one __rmqueue each: a claim attempt, and a boost, every time
        // an order >= 4 unmovable block is left (the smallest-first steals keep the order-6
        // block whole for the first 8 frames and split it after).
        let (mut b, mut m, mut p, boosts) = zone();
        let each: Vec<Pfn> = (0..31).map(|_| b.alloc(&mut m, &mut p, 0, 0, MOV).unwrap()).collect();
        assert_eq!(bulk, each);
        assert!(b.stats.watermark_boosts - boosts > 20, "{} boosts", b.stats.watermark_boosts - boosts);
        // With nothing left to steal the refill ends short.
        let (mut c, mut n, mut q, _) = zone();
        assert_eq!(c.rmqueue_bulk(&mut n, &mut q, 0, MOV, 200, |_| ()), 72);
        check(&c, &n, &q);
    }

    #[test]
    fn unmovable_scatter_fragments_high_orders_and_freeing_heals() {
        let (mut a, mut l, mut w) = one_zone(16384);
        let initial = a.nr_free_by_order(0);
        assert_eq!(initial[10], 16);
        // Movable fills the first half; every 64th allocation is unmovable.
        let mut held = vec![];
        for i in 0..8192u32 {
            let mt = if i % 64 == 63 { UNMOV } else { MOV };
            held.push(a.alloc(&mut l, &mut w, 0, 0, mt).unwrap());
        }
        let after_alloc = a.nr_free_by_order(0)[10];
        assert!(after_alloc < 8, "order-10 blocks left: {after_alloc}");
        // Free all the movable pages: the pinned unmovable pages keep blocks from merging.
        for (i, &p) in held.iter().enumerate() {
            if i % 64 != 63 {
                a.free(&mut l, &mut w, p, 0);
            }
        }
        check(&a, &l, &w);
        let frag = a.nr_free_by_order(0)[10];
        assert!(frag < 16, "still {frag} order-10 blocks");
        assert!(a.zones[0].free_pages > 16384 - 200);
        // Freeing the unmovable pages heals it.
        for (i, &p) in held.iter().enumerate() {
            if i % 64 == 63 {
                a.free(&mut l, &mut w, p, 0);
            }
        }
        check(&a, &l, &w);
        assert_eq!(a.nr_free_by_order(0), initial);
    }

    #[test]
    fn movable_fragmentation_then_heal() {
        let (mut a, mut l, mut w) = one_zone(8192);
        let all: Vec<_> = (0..8192).map(|_| a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap()).collect();
        // Keep one page per pageblock: 8176 pages free, yet no order-9 or order-10 block.
        for &p in &all {
            if p % 512 != 0 {
                a.free(&mut l, &mut w, p, 0);
            }
        }
        assert_eq!(a.zones[0].free_pages, 8192 - 16);
        assert_eq!(a.nr_free_by_order(0)[10], 0);
        assert_eq!(a.nr_free_by_order(0)[9], 0);
        assert_eq!(a.nr_free_by_order(0)[8], 16);
        assert!(a.zone_watermark_ok(0, 8, 100));
        assert!(!a.zone_watermark_ok(0, 9, 100));
        for &p in &all {
            if p % 512 == 0 {
                a.free(&mut l, &mut w, p, 0);
            }
        }
        assert_eq!(a.nr_free_by_order(0)[10], 8);
        check(&a, &l, &w);
    }

    #[test]
    fn watermark_ok_boundaries() {
        let (mut a, mut l, mut w) = one_zone(4096);
        assert!(a.zone_watermark_ok(0, 0, 4095)); // 4096 > 4095
        assert!(!a.zone_watermark_ok(0, 0, 4096)); // free == mark fails
        assert!(a.zone_watermark_ok(0, 10, 4096 - 1024)); // 4096 - 1023 = 3073 > 3072
        assert!(!a.zone_watermark_ok(0, 10, 4096 - 1023)); // 3073 <= 3073
        let all: Vec<_> = (0..4096).map(|_| a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap()).collect();
        for p in [0, 2, 4] {
            a.free(&mut l, &mut w, all[p], 0);
        }
        assert_eq!(a.zones[0].free_pages, 3);
        assert!(a.zone_watermark_ok(0, 0, 2)); // 3 > 2
        assert!(!a.zone_watermark_ok(0, 0, 3)); // 3 == 3
                                                // order 1: 3 - 1 = 2 > 0, but no free block of order >= 1
        assert!(!a.zone_watermark_ok(0, 1, 0));
        a.free(&mut l, &mut w, all[1], 0); // 0+1 merge into an order-1 block
        assert_eq!(a.buddy_order(&w, 0), Some(1));
        assert!(a.zone_watermark_ok(0, 1, 2)); // 4 - 1 = 3 > 2, order-1 block present
        assert!(!a.zone_watermark_ok(0, 1, 3)); // 3 <= 3
        assert!(!a.zone_watermark_ok(0, 2, 0)); // no order-2 block
    }

    #[test]
    fn tiny_machine_disables_mobility_grouping() {
        let (mut a, mut l, mut w) = one_zone(2048); // < 512 * 6
        assert!(a.page_group_by_mobility_disabled());
        assert_eq!(a.pageblock_migratetype(0), UNMOV);
        assert_eq!(a.zones[0].nr_pageblocks, [4, 0, 0, 0]);
        let p = a.alloc(&mut l, &mut w, 0, 0, MOV).unwrap();
        assert_eq!(p, 0);
        assert_eq!(a.free_blocks_mt(&l, 0, 0, UNMOV), 1);
        a.free(&mut l, &mut w, p, 0);
        check(&a, &l, &w);
    }

    #[test]
    fn high_order_free_of_mixed_pageblocks_merges() {
        // Make pageblocks 0 and 1 of different types and free an order-10 block over them:
        // split_large_buddy frees each pageblock with its own type; the merge makes the
        // buddy's pageblock take the freeing block's type.
        let (mut a, mut l, mut w) = one_zone(4096);
        let p = a.alloc(&mut l, &mut w, 0, 10, MOV).unwrap();
        assert_eq!(p, 0);
        a.set_pageblock_migratetype(512, MigrateType::Reclaimable as u8);
        a.free(&mut l, &mut w, 0, 10);
        assert_eq!(a.buddy_order(&w, 0), Some(10));
        // pageblock 0 (MOVABLE) went first; pageblock 1 (RECLAIMABLE) merged into it and
        // the buddy (pageblock 0) took RECLAIMABLE.
        assert_eq!(a.pageblock_migratetype(0), MigrateType::Reclaimable);
        assert_eq!(a.pageblock_migratetype(512), MigrateType::Reclaimable);
        assert_eq!(a.free_blocks_mt(&l, 0, 10, MigrateType::Reclaimable), 1);
        check(&a, &l, &w);
    }

    #[test]
    fn highatomic_request_has_no_fallback() {
        let (mut a, mut l, mut w) = one_zone(4096);
        assert_eq!(a.alloc(&mut l, &mut w, 0, 0, MigrateType::HighAtomic), None);
        check(&a, &l, &w);
    }

    #[test]
    fn is_free_walks_block_heads() {
        let (mut a, mut l, mut w) = one_zone(4096);
        let p = a.alloc(&mut l, &mut w, 0, 3, MOV).unwrap();
        assert_eq!(p, 0);
        assert!(!a.is_free(&w, 0) && !a.is_free(&w, 7));
        assert!(a.is_free(&w, 8) && a.is_free(&w, 4095) && a.is_free(&w, 1500));
        assert!(!a.is_free(&w, 5000));
    }

    mod proptests {
        use super::*;
        use proptest::prelude::*;

        #[derive(Clone, Debug)]
        enum Op {
            Alloc { zone: usize, order: u8, mt: u8 },
            Free(usize),
        }

        fn op() -> impl Strategy<Value = Op> {
            let order = prop_oneof![6 => Just(0u8), 3 => 1u8..=3, 1 => 4u8..=MAX_PAGE_ORDER];
            prop_oneof![
                3 => (0usize..3, order, 0u8..3).prop_map(|(zone, order, mt)| Op::Alloc { zone, order, mt }),
                2 => any::<usize>().prop_map(Op::Free),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

            #[test]
            fn random_alloc_free_keeps_invariants(ops in proptest::collection::vec(op(), 1..400)) {
                // Odd start, unaligned boundary, a hole, odd end.
                let specs = [
                    spec(ZoneType::Dma, 1, 3000),
                    spec(ZoneType::Dma32, 3001, 5999),
                    spec(ZoneType::Normal, 9216, 5001),
                ];
                let (mut a, mut l, mut w) = machine(&specs);
                let initial: Vec<_> = (0..3).map(|z| a.nr_free_by_order(z)).collect();
                let total = a.total_pages();
                let mut busy = vec![false; l.nr_frames() as usize];
                let mut held: Vec<(Pfn, u8)> = vec![];
                let mut used = 0u64;
                for (i, op) in ops.into_iter().enumerate() {
                    match op {
                        Op::Alloc { zone, order, mt } => {
                            if let Some(p) = a.alloc(&mut l, &mut w, zone, order, MigrateType::from_u8(mt)) {
                                prop_assert_eq!(a.zone_of(p), zone);
                                prop_assert_eq!(p % (1 << order), 0);
                                for f in p..p + (1 << order) {
                                    prop_assert!(!busy[f as usize], "frame {} handed out twice", f);
                                    prop_assert!(!a.is_free(&w, f));
                                    busy[f as usize] = true;
                                }
                                held.push((p, order));
                                used += 1 << order;
                            } else {
                                // the fallbacks cover every pcp type: failure only if no
                                // free block of order >= `order` exists at all
                                prop_assert!((order..=MAX_PAGE_ORDER).all(|o| a.free_blocks(zone, o) == 0));
                            }
                        }
                        Op::Free(k) => {
                            if !held.is_empty() {
                                let (p, o) = held.swap_remove(k % held.len());
                                for f in p..p + (1 << o) {
                                    busy[f as usize] = false;
                                }
                                a.free(&mut l, &mut w, p, o);
                                used -= 1 << o;
                            }
                        }
                    }
                    prop_assert_eq!(a.nr_free_pages() + used, total, "step {}", i);
                    if let Err(e) = a.check_invariants(&l, &w) {
                        prop_assert!(false, "step {}: {}", i, e);
                    }
                }
                l.check_invariants().unwrap();
                for (p, o) in held.drain(..) {
                    a.free(&mut l, &mut w, p, o);
                }
                a.check_invariants(&l, &w).unwrap();
                for (z, init) in initial.iter().enumerate() {
                    prop_assert_eq!(&a.nr_free_by_order(z), init);
                }
            }
        }
    }
}
