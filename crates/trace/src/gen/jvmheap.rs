//! A JVM heap as the page cache's neighbour sees it: where a Java program's large arrays
//! land in its address space, which heap pages are touched again, and how far the
//! committed heap grows — sized by the G1 collector's own policy.
//!
//! **Which collector.** The benchmark's JDK is not stated; Ubuntu 21.10 (the benchmark's
//! 5.15 era) installs OpenJDK 11 as `default-jdk`, whose default collector on a server-class
//! machine is G1 (JEP 248, JDK 9). Hadoop 3.3 runs on Java 11. So the heap follows G1 as
//! JDK 11 implements it (openjdk/jdk11u, `src/hotspot/share/gc/g1/`); the Parallel
//! collector (JDK 8's default, `GCTimeRatio=99`, grows a generation by 20 % when it misses
//! its throughput goal, and moves live arrays when it compacts) is not modelled.
//!
//! **G1, as modelled** (sizes in 4 KiB pages):
//! - The heap is an array of equal regions (`heapRegion.cpp`
//!   `HeapRegion::setup_heap_region_size`): the mean of `InitialHeapSize` and
//!   `MaxHeapSize` over 2048 regions, rounded down to a power of two, between 1 MiB and
//!   32 MiB. Regions `0..max_regions` are reserved; `InitialHeapSize` of them are
//!   committed at start, the lowest indices first.
//! - Every buffer the caller allocates (the tasks' `new byte[...]`) is placed as G1 places
//!   a *humongous* object (one larger than half a region: `g1CollectedHeap.cpp`
//!   `humongous_obj_allocate`): in the lowest run of contiguous free committed regions
//!   (`HeapRegionManager::find_contiguous_only_empty`, scanning from region 0); if there is
//!   none, in the lowest run of regions each free or uncommitted, which are committed for
//!   it — the heap expands *for the allocation*, without a collection ("Attempt heap
//!   expansion (humongous allocation request failed)"). So the heap grows only when live
//!   and not-yet-collected data leave no room, and a freed run is reused by the next
//!   buffer that fits, lowest address first.
//! - Before each such allocation G1 checks whether to start a concurrent cycle
//!   (`attempt_allocation_humongous` → `G1Policy::need_to_start_conc_mark`): when the
//!   old-generation occupancy (the regions of live and dead buffers) plus the request
//!   exceeds `InitiatingHeapOccupancyPercent` (45) % of the committed heap, an
//!   initial-mark young pause runs — unless the concurrent cycle an earlier one started is
//!   still running (`need_to_start_conc_mark` is false while
//!   `mark_or_rebuild_in_progress`): then the allocation goes ahead without a pause, so
//!   dead buffers stay and new ones go to free runs above them or expand the heap. At that pause dead humongous primitive arrays are
//!   reclaimed eagerly (`G1EagerReclaimHumongousObjects`, default on: JDK 11 GC tuning
//!   guide, "Garbage-First Garbage Collector Tuning", §"Humongous Objects"); a `byte[]`
//!   whose task finished is such an array. The model frees every dead buffer at the pause.
//! - After every young pause G1 may expand the heap by its GC-time goal
//!   (`g1HeapSizingPolicy.cpp` `G1HeapSizingPolicy::expansion_amount`): the target GC
//!   overhead is `100 / (1 + GCTimeRatio)` % with G1's `GCTimeRatio` = 12 (7.7 %), scaled
//!   down by `capacity / (max / 2)` (but not below 1 %) while the heap is at most half its
//!   maximum; once 4 of the last pauses (`MinOverThresholdForGrowth`) were over it, or the
//!   average of the last 10 is, the heap grows by `min(committed, 20 % of the uncommitted)`
//!   (`G1ExpandByPercentOfAvailable`), scaled by how far the overhead is over the target
//!   (×0.2 … ×2), at least one region; below `InitialHeapSize / 4` by half the distance
//!   to it. GC time is measured in the trace's own unit, accesses: a pause's work over the
//!   mutator's work since the previous pause ([`JvmHeap::tick`], [`JvmHeap::collect`]).
//!
//! **Choices, stated.** The model tracks only the buffers the caller allocates; a young
//! pause copies nothing the model knows of (humongous objects are never evacuated), so the
//! TeraSort generator passes a pause work of 0 and the GC-time rule never grows its heaps;
//! the small objects whose copying makes a real pause (records, the 8 MB stream buffers)
//! are not modelled. How long a concurrent cycle runs is the caller's
//! ([`JvmHeap::set_conc_cycle`], on the JVM's clock: [`JvmHeap::tick`]'s work over its
//! threads); 0 ends it before the next allocation, so at most one pause per allocation.
//! The IHOP is the static 45 %: JDK 11's adaptive IHOP uses it until 3 cycles have been
//! measured and then predicts from marking times the model does not have. The heap never shrinks: JDK 11 resizes by `MinHeapFreeRatio` (40) /
//! `MaxHeapFreeRatio` (70) only after a full collection, which the model never needs (the
//! caller sizes `-Xmx` for its buffers); uncommitting regions is not modelled. Young
//! (eden) regions, which G1 takes from the top of the committed free regions
//! (`HeapRegionManager::allocate_free_region(is_old = false)` removes from the free list's
//! tail), hold no modelled object.

use std::collections::VecDeque;

/// `InitiatingHeapOccupancyPercent` (G1's default).
pub const IHOP_PERCENT: u64 = 45;
/// G1's `GCTimeRatio` default (JDK 11 `G1Arguments::initialize`: 12, a 7.7 % GC-time goal).
pub const G1_GC_TIME_RATIO: f64 = 12.0;
/// `G1ExpandByPercentOfAvailable`.
const EXPAND_BY_PERCENT_OF_AVAILABLE: u64 = 20;
/// `G1HeapSizingPolicy::MinOverThresholdForGrowth`.
const MIN_OVER_THRESHOLD_FOR_GROWTH: u32 = 4;
/// Pauses G1Analytics keeps for the recent GC-time ratio (`NumPrevPausesForHeuristics`).
const NUM_PREV_PAUSES: usize = 10;
/// Region size bounds (`HeapRegionBounds`) and target count, in 4 KiB pages.
const MIN_REGION_PAGES: u64 = 256;
const MAX_REGION_PAGES: u64 = 8192;
const TARGET_REGIONS: u64 = 2048;

/// G1's region size for a heap of `init`..`max` pages.
pub fn region_pages(init: u32, max: u32) -> u32 {
    let avg = (init as u64 + max as u64) / 2;
    let r = (avg / TARGET_REGIONS).max(MIN_REGION_PAGES);
    let r = 1u64 << (63 - r.leading_zeros());
    r.clamp(MIN_REGION_PAGES, MAX_REGION_PAGES) as u32
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Region {
    Uncommitted,
    Free,
    /// Part of the buffer starting at this region index.
    Used(u32),
}

/// One JVM's G1 heap: regions, the buffers placed in them, and the sizing state.
#[derive(Clone, Debug)]
pub struct JvmHeap {
    region: u32,
    init_regions: u32,
    regions: Vec<Region>,
    committed: u32,
    /// Buffers as (first region, regions, live).
    buffers: Vec<(u32, u32, bool)>,
    collections: u32,
    /// Mutator work since the last pause.
    mutator: u64,
    /// The last pauses as (pause work, mutator work before it).
    history: VecDeque<(u64, u64)>,
    over_count: u32,
    over_sum: f64,
    pauses_since_start: usize,
    /// Pause work of each collection the heap starts itself (see the module comment).
    pause_work: u64,
    /// The JVM's elapsed time: its mutator work over the threads doing it.
    clock: f64,
    /// How long a concurrent cycle runs, on that clock (0: done before the next allocation).
    conc_cycle: f64,
    /// When the running concurrent cycle ends.
    marking_until: f64,
}

impl JvmHeap {
    /// A heap of at most `max` pages, `init` committed at start (clamped to `1..=max`),
    /// in G1 regions sized from both.
    pub fn new(init: u32, max: u32) -> JvmHeap {
        let region = region_pages(init, max);
        let max_regions = (max / region).max(1);
        let init_regions = init.div_ceil(region).clamp(1, max_regions);
        let mut regions = vec![Region::Uncommitted; max_regions as usize];
        regions[..init_regions as usize].fill(Region::Free);
        JvmHeap {
            region,
            init_regions,
            regions,
            committed: init_regions,
            buffers: Vec::new(),
            collections: 0,
            mutator: 0,
            history: VecDeque::new(),
            over_count: 0,
            over_sum: 0.0,
            pauses_since_start: 0,
            pause_work: 0,
            clock: 0.0,
            conc_cycle: 0.0,
            marking_until: 0.0,
        }
    }

    /// How long each concurrent cycle runs, in the units of [`JvmHeap::tick`]'s elapsed
    /// time (default 0: a cycle ends before the next allocation).
    pub fn set_conc_cycle(&mut self, t: f64) {
        self.conc_cycle = t;
    }

    /// Pages per region.
    pub fn region_pages(&self) -> u32 {
        self.region
    }

    /// Committed pages (regions that may be touched; an untouched committed region costs
    /// no memory).
    pub fn committed(&self) -> u32 {
        self.committed * self.region
    }

    /// The most pages the heap can commit (`max_regions` regions).
    pub fn max_pages(&self) -> u32 {
        self.regions.len() as u32 * self.region
    }

    /// Pages of the regions that hold live or dead (not yet collected) buffers.
    pub fn used(&self) -> u32 {
        self.regions.iter().filter(|r| matches!(r, Region::Used(_))).count() as u32 * self.region
    }

    /// Young pauses so far.
    pub fn collections(&self) -> u32 {
        self.collections
    }

    /// The pause work of the collections [`JvmHeap::alloc`] starts (default 0).
    pub fn set_pause_work(&mut self, work: u64) {
        self.pause_work = work;
    }

    /// `work` units of mutator work (accesses) ran in this JVM by `threads` threads at
    /// once: its clock advances by `work / threads`.
    pub fn tick(&mut self, work: u64, threads: u32) {
        self.mutator += work;
        self.clock += work as f64 / threads.max(1) as f64;
    }

    /// Whether a concurrent cycle is running (`G1CollectorState::mark_or_rebuild_in_progress`).
    pub fn marking(&self) -> bool {
        self.clock < self.marking_until
    }

    /// The GC-time target in percent for the current size (`expansion_amount`'s threshold).
    pub fn gc_overhead_threshold(&self) -> f64 {
        let goal = 100.0 / (1.0 + G1_GC_TIME_RATIO);
        let (cap, max) = (self.committed as f64, self.regions.len() as f64);
        if cap <= max / 2.0 {
            (goal * cap / (max / 2.0)).max(1.0)
        } else {
            goal
        }
    }

    /// A young pause of `pause` work units: dead buffers are reclaimed, then the heap may
    /// expand by G1's GC-time rule. Returns the regions it expanded by.
    pub fn collect(&mut self, pause: u64) -> u32 {
        self.collections += 1;
        for &(first, n, live) in &self.buffers {
            if !live {
                self.regions[first as usize..(first + n) as usize].fill(Region::Free);
            }
        }
        self.buffers.retain(|b| b.2);
        let mutator = std::mem::take(&mut self.mutator);
        self.history.push_back((pause, mutator));
        if self.history.len() > NUM_PREV_PAUSES {
            self.history.pop_front();
        }
        let grow = self.expansion_regions(pause, mutator);
        self.expand_by(grow);
        grow
    }

    /// `G1HeapSizingPolicy::expansion_amount`, in regions.
    fn expansion_regions(&mut self, pause: u64, mutator: u64) -> u32 {
        let ratio = |p: u64, m: u64| if p + m == 0 { 0.0 } else { 100.0 * p as f64 / (p + m) as f64 };
        let last = ratio(pause, mutator);
        let (p, m) = self.history.iter().fold((0, 0), |(p, m), &(a, b)| (p + a, m + b));
        let recent = ratio(p, m);
        let goal = 100.0 / (1.0 + G1_GC_TIME_RATIO);
        let threshold = self.gc_overhead_threshold();
        let max = self.regions.len() as u32;
        if last > threshold {
            self.over_count += 1;
            self.over_sum += last;
        }
        let filled = self.pauses_since_start == NUM_PREV_PAUSES;
        if self.over_count == MIN_OVER_THRESHOLD_FOR_GROWTH || (filled && recent > threshold) {
            let uncommitted = (max - self.committed) as f64;
            let committed = self.committed as f64;
            let mut scale = 1.0;
            let base = if self.committed < self.init_regions / 4 {
                (self.init_regions - self.committed) as f64 / 2.0
            } else {
                let delta = if filled { recent - threshold } else { self.over_sum / self.over_count as f64 - threshold };
                let (down_at, up_at, up_range) = (goal, goal * 1.5, goal * 2.0);
                if delta < down_at {
                    scale = (delta / down_at).max(0.2);
                } else if delta > up_at {
                    scale = (1.0 + (delta - up_at) / up_range).min(2.0);
                }
                (uncommitted * EXPAND_BY_PERCENT_OF_AVAILABLE as f64 / 100.0).min(committed)
            };
            self.over_count = 0;
            self.over_sum = 0.0;
            self.pauses_since_start = 0;
            // At least a region, at most what is uncommitted (none at the maximum).
            ((base * scale).ceil() as u32).max(1).min(max - self.committed)
        } else {
            if self.over_count > 0 {
                self.pauses_since_start += 1;
                if self.pauses_since_start > NUM_PREV_PAUSES {
                    self.over_count = 0;
                    self.over_sum = 0.0;
                    self.pauses_since_start = 0;
                }
            }
            0
        }
    }

    /// Commit `n` more regions, the lowest uncommitted first (`HeapRegionManager::expand_by`).
    fn expand_by(&mut self, n: u32) {
        let mut left = n;
        for r in self.regions.iter_mut() {
            if left == 0 {
                break;
            }
            if *r == Region::Uncommitted {
                *r = Region::Free;
                self.committed += 1;
                left -= 1;
            }
        }
    }

    /// The lowest run of `k` regions, each free (and, with `uncommitted`, each free or
    /// uncommitted).
    fn find_contiguous(&self, k: u32, uncommitted: bool) -> Option<u32> {
        let mut run = 0;
        for (i, r) in self.regions.iter().enumerate() {
            let ok = *r == Region::Free || (uncommitted && *r == Region::Uncommitted);
            run = if ok { run + 1 } else { 0 };
            if run == k {
                return Some(i as u32 + 1 - k);
            }
        }
        None
    }

    /// Place a buffer of `n` pages; its offset in the heap (region-aligned). None if no
    /// run of free or uncommitted regions fits it even after a collection (an
    /// OutOfMemoryError; the caller's parameters prevent that).
    pub fn alloc(&mut self, n: u32) -> Option<u32> {
        let k = n.div_ceil(self.region).max(1);
        let used = self.used() as u64;
        // `G1Policy::need_to_start_conc_mark` is false while a cycle runs.
        if !self.marking() && (used + n as u64) * 100 > IHOP_PERCENT * self.committed() as u64 {
            self.collect(self.pause_work);
            self.marking_until = self.clock + self.conc_cycle;
        }
        let first = match self.find_contiguous(k, false) {
            Some(f) => f,
            None => {
                let mut f = self.find_contiguous(k, true);
                if f.is_none() {
                    // A full collection: the dead buffers go (the model never moves the
                    // live ones), then the same search.
                    self.collect(self.pause_work);
                    f = self.find_contiguous(k, false).or_else(|| self.find_contiguous(k, true));
                }
                let f = f?;
                for r in &mut self.regions[f as usize..(f + k) as usize] {
                    if *r == Region::Uncommitted {
                        *r = Region::Free;
                        self.committed += 1;
                    }
                }
                f
            }
        };
        self.regions[first as usize..(first + k) as usize].fill(Region::Used(first));
        self.buffers.push((first, k, true));
        Some(first * self.region)
    }

    /// The buffer at `offset` is dead (its task finished); its regions are reclaimed at
    /// the next pause.
    pub fn free(&mut self, offset: u32) {
        let first = offset / self.region;
        if let Some(b) = self.buffers.iter_mut().find(|b| b.0 == first && b.2) {
            b.2 = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A heap of `init` regions committed, `max` reserved, of G1's smallest region
    /// (1 MiB, 256 pages).
    fn heap(init: u32, max: u32) -> JvmHeap {
        let h = JvmHeap::new(init * 256, max * 256);
        assert_eq!(h.region_pages(), 256);
        h
    }

    #[test]
    fn region_size_follows_g1() {
        // The benchmark: InitialHeapSize 4 GiB, -Xmx 22 GiB → 13 GiB / 2048 = 6.5 MiB → 4 MiB.
        assert_eq!(region_pages(4 << 18, 22 << 18), 1024);
        // At 1/8: 512 MiB / 2816 MiB → 0.8 MiB → the 1 MiB minimum.
        assert_eq!(region_pages(512 * 256, 2816 * 256), 256);
        // Large heaps stop at 32 MiB.
        assert_eq!(region_pages(1 << 30, 1 << 30), 8192);
    }

    #[test]
    fn buffers_reuse_the_lowest_freed_regions_and_the_heap_does_not_grow() {
        // 10 regions committed of 100; buffers of 2 regions.
        let mut h = heap(10, 100);
        assert_eq!(h.alloc(400), Some(0));
        // 2 + 2 regions ≤ 45 % of 10: no pause, the next run up.
        assert_eq!(h.alloc(512), Some(2 * 256));
        assert_eq!(h.collections(), 0);
        h.free(0);
        // 4 + 2 > 4.5 regions: a pause reclaims the dead buffer, whose regions are reused first.
        assert_eq!(h.alloc(512), Some(0));
        assert_eq!(h.collections(), 1);
        for _ in 0..50 {
            h.free(0);
            assert_eq!(h.alloc(512), Some(0));
        }
        assert_eq!(h.committed(), 10 * 256, "steady state: no growth beyond the initial heap");
        assert_eq!(h.used(), 4 * 256);
    }

    #[test]
    fn the_heap_expands_only_when_live_data_needs_it() {
        let mut h = heap(10, 100);
        // Four live buffers of 3 regions need 12 regions: the fourth expands the heap for
        // the allocation, by what it needs.
        for i in 0..4 {
            assert_eq!(h.alloc(3 * 256), Some(i * 3 * 256));
        }
        assert_eq!(h.committed(), 12 * 256);
        // One dies and is replaced, forever: the heap stays at 12 regions.
        for i in 0..40u32 {
            h.free((i % 4) * 3 * 256);
            assert_eq!(h.alloc(3 * 256), Some((i % 4) * 3 * 256));
        }
        assert_eq!(h.committed(), 12 * 256);
        // Never beyond the maximum: 34 live buffers of 3 regions do not fit in 100.
        let mut h = heap(10, 100);
        for _ in 0..33 {
            assert!(h.alloc(3 * 256).is_some());
        }
        assert_eq!(h.alloc(3 * 256), None);
        assert!(h.committed() <= 100 * 256);
    }

    #[test]
    fn no_growth_while_gc_overhead_is_under_target() {
        let mut h = heap(60, 100);
        // 60 % of the maximum: the target is G1's 100 / 13 = 7.7 %. Pauses of 5 % of the
        // time, many of them: no expansion.
        assert!((h.gc_overhead_threshold() - 100.0 / 13.0).abs() < 1e-9);
        for _ in 0..50 {
            h.tick(95, 1);
            assert_eq!(h.collect(5), 0);
        }
        assert_eq!(h.committed(), 60 * 256);
    }

    #[test]
    fn growth_when_gc_overhead_is_over_target() {
        let mut h = heap(60, 100);
        // Pauses of 20 % of the time: the fourth over the target expands the heap by
        // min(committed, 20 % of the 40 uncommitted regions) = 8, scaled by the excess:
        // 20 − 7.7 = 12.3 points over, above 1.5 × 7.7, so × (1 + (12.3 − 11.5) / 15.4).
        let grown: Vec<u32> = (0..4)
            .map(|_| {
                h.tick(80, 1);
                h.collect(20)
            })
            .collect();
        assert_eq!(&grown[..3], &[0, 0, 0]);
        assert_eq!(grown[3], 9);
        assert_eq!(h.committed(), 69 * 256);
        // A small heap scales the target down (here to 1 %), so it grows sooner.
        let h = heap(10, 100);
        assert!((h.gc_overhead_threshold() - 100.0 / 13.0 * 10.0 / 50.0).abs() < 1e-9);
        let h = heap(2, 100);
        assert_eq!(h.gc_overhead_threshold(), 1.0);
        // At the maximum there is nothing left to commit.
        let mut h = heap(100, 100);
        for _ in 0..20 {
            h.tick(50, 1);
            assert_eq!(h.collect(50), 0);
        }
        assert_eq!(h.committed(), 100 * 256);
    }

    #[test]
    fn no_pause_starts_while_a_concurrent_cycle_runs() {
        // 10 regions committed of 100, a cycle lasting 100 units of elapsed time.
        let mut h = heap(10, 100);
        h.set_conc_cycle(100.0);
        assert_eq!(h.alloc(3 * 256), Some(0));
        h.free(0);
        // 3 + 3 > 4.5 regions: a pause frees the dead buffer and starts a cycle.
        assert_eq!(h.alloc(3 * 256), Some(0));
        assert_eq!(h.collections(), 1);
        assert!(h.marking());
        // While it runs, dead buffers stay and the heap expands for the next ones.
        for i in 1..5u32 {
            h.free((i - 1) * 3 * 256);
            assert_eq!(h.alloc(3 * 256), Some(i * 3 * 256));
            h.tick(40, 2);
        }
        assert_eq!(h.collections(), 1);
        assert_eq!(h.committed(), 15 * 256);
        // 4 × 40 units over 2 threads = 80 < 100: still marking; 40 more end the cycle,
        // and the next allocation's pause reclaims the four dead buffers.
        assert!(h.marking());
        h.tick(40, 1);
        assert!(!h.marking());
        h.free(12 * 256);
        assert_eq!(h.alloc(3 * 256), Some(0));
        assert_eq!((h.collections(), h.used()), (2, 3 * 256));
    }

    #[test]
    fn dead_buffers_wait_for_a_pause_below_the_ihop() {
        // 100 regions committed: buffers of 10 regions, under 45 % no pause runs, so dead
        // buffers keep their regions and new ones go above them (old garbage stays cold).
        let mut h = heap(100, 100);
        assert_eq!(h.alloc(10 * 256), Some(0));
        h.free(0);
        assert_eq!(h.alloc(10 * 256), Some(10 * 256));
        h.free(10 * 256);
        assert_eq!(h.alloc(10 * 256), Some(20 * 256));
        assert_eq!(h.collections(), 0);
        // 30 + 10 regions ≤ 45: still none; then 40 + 10 > 45: a pause reclaims the three
        // dead buffers and the lowest run is reused.
        h.free(20 * 256);
        assert_eq!(h.alloc(10 * 256), Some(30 * 256));
        assert_eq!(h.alloc(10 * 256), Some(0));
        assert_eq!((h.collections(), h.used()), (1, 20 * 256));
    }
}
