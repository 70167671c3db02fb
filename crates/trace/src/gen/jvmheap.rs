//! A JVM heap as the page cache's neighbour sees it: where a Java program's large arrays
//! land in its address space, and how far the touched heap grows.
//!
//! HotSpot allocates by bumping a pointer through free heap ("bump-the-pointer",
//! *Memory Management in the Java HotSpot Virtual Machine*, Sun 2006, §"Fast
//! Allocation"); dead objects are reclaimed only by a collection, after which allocation
//! starts again at the bottom of the free space. The heap starts at `InitialHeapSize`
//! (without `-Xms`: 1/64 of physical memory) and grows towards `MaxHeapSize` (`-Xmx`):
//! the Parallel collector, the server default of JDK 8, grows a generation "in increments
//! of 20 %" of its size when it misses its goals (*Java Platform, Standard Edition HotSpot
//! Virtual Machine Garbage Collection Tuning Guide*, JDK 8, §6 "The Parallel Collector",
//! "Generation Size Adjustments"; throughput goal `-XX:GCTimeRatio=99`, 1 % of the time).
//!
//! The model (sizes in pages): a heap of `max` pages, `committed` of them in use;
//! [`JvmHeap::alloc`] places a buffer at the lowest address at or above the allocation
//! pointer that is clear of the live buffers and fits below `committed`; when none does,
//! a collection frees the dead buffers (those not live), the pointer returns to the
//! bottom and `committed` grows by 20 % (at least to fit, at most to `max`). Choices,
//! stated: the throughput goal is taken as missed at every collection (each one pauses
//! the job for a full-heap collection of GB-sized buffers; the heap then grows at every
//! collection until `max`); live buffers are never moved (G1 never moves humongous
//! objects; the Parallel collector would compact them), and young and old generations
//! are one space. So every page of the heap is rewritten once per collection cycle, the
//! oldest-written first — what makes a heap under swap pressure fault its own garbage
//! back in.

/// One JVM's heap: the allocation pointer, the committed size and the live buffers.
#[derive(Clone, Debug)]
pub struct JvmHeap {
    max: u32,
    committed: u32,
    top: u32,
    /// Live buffers as (offset, pages), unordered.
    live: Vec<(u32, u32)>,
    collections: u32,
}

/// `-XX:TenuredGenerationSizeIncrement` / `YoungGenerationSizeIncrement`: 20 %.
const GROW_PERCENT: u64 = 20;

impl JvmHeap {
    /// A heap of at most `max` pages, `init` committed at start (clamped to `1..=max`).
    pub fn new(init: u32, max: u32) -> JvmHeap {
        JvmHeap { max, committed: init.clamp(1.min(max), max), top: 0, live: Vec::new(), collections: 0 }
    }

    /// Committed pages (the part of the heap that has been or will be touched).
    pub fn committed(&self) -> u32 {
        self.committed
    }

    /// Collections so far.
    pub fn collections(&self) -> u32 {
        self.collections
    }

    /// The lowest offset ≥ `from` where `n` pages fit below `committed`, clear of the
    /// live buffers.
    fn fit(&self, from: u32, n: u32) -> Option<u32> {
        let mut live = self.live.clone();
        live.sort_unstable();
        let mut q = from as u64;
        for &(s, len) in &live {
            if (s + len) as u64 <= q {
                continue;
            }
            if q + n as u64 <= s as u64 {
                break;
            }
            q = (s + len) as u64;
        }
        (q + n as u64 <= self.committed as u64).then_some(q as u32)
    }

    /// Place a buffer of `n` pages; its offset in the heap. None if `n` cannot fit in
    /// `max` beside the live buffers (the caller's parameters prevent that).
    pub fn alloc(&mut self, n: u32) -> Option<u32> {
        if let Some(q) = self.fit(self.top, n) {
            self.top = q + n;
            self.live.push((q, n));
            return Some(q);
        }
        // A collection: the dead buffers go, allocation restarts at the bottom, and the
        // heap grows until the buffer fits.
        self.collections += 1;
        self.top = 0;
        loop {
            let grown = self.committed as u64 + (self.committed as u64 * GROW_PERCENT / 100).max(1);
            self.committed = grown.min(self.max as u64) as u32;
            if let Some(q) = self.fit(0, n) {
                self.top = q + n;
                self.live.push((q, n));
                return Some(q);
            }
            if self.committed == self.max {
                return None;
            }
        }
    }

    /// The buffer at `offset` is dead (its task finished).
    pub fn free(&mut self, offset: u32) {
        if let Some(i) = self.live.iter().position(|&(s, _)| s == offset) {
            self.live.swap_remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bumps_then_collects_and_grows_by_a_fifth() {
        let mut h = JvmHeap::new(100, 1000);
        assert_eq!((h.alloc(40), h.alloc(40)), (Some(0), Some(40)));
        h.free(0);
        // The dead buffer's space is reused only after a collection, which grows the heap.
        assert_eq!(h.alloc(40), Some(0));
        assert_eq!((h.collections(), h.committed()), (1, 120));
        assert_eq!(h.alloc(40), Some(80));
        // Three live buffers fill 120 pages: the next grows the heap twice (144, 172).
        assert_eq!(h.alloc(40), Some(120));
        assert_eq!((h.collections(), h.committed()), (2, 172));
    }

    #[test]
    fn never_beyond_max() {
        let mut h = JvmHeap::new(10, 50);
        assert_eq!(h.alloc(30), Some(0));
        assert_eq!(h.alloc(30), None, "30 + 30 live pages exceed the 50-page maximum");
        assert_eq!(h.committed(), 50);
        h.free(0);
        assert_eq!(h.alloc(30), Some(0));
        // The committed heap never exceeds the maximum.
        for _ in 0..100 {
            h.free(0);
            assert_eq!(h.alloc(30), Some(0));
        }
        assert_eq!(h.committed(), 50);
        assert!(JvmHeap::new(500, 50).committed() == 50);
    }
}
