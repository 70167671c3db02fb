//! Intrusive doubly-linked lists over page frames (the kernel's `struct list_head`
//! embedded in `struct page`, here as one flat array of `{prev, next}` pairs, so an unlink
//! reads one cache line per entry). An arena of its own may link other dense ids the same
//! way (the THP deferred split queues link pageblocks).
//!
//! Every frame has one `prev`/`next` pair, so a frame is on at most one list at a time:
//! an LRU list (reclaim) or a buddy free list (page allocator), exactly as `page->lru`
//! is shared in the kernel. List heads are sentinel slots appended after the frames, so
//! insertion and removal never branch on "empty list".
//!
//! Invariant: for every linked slot `x`, `next[prev[x]] == x` and `prev[next[x]] == x`;
//! an unlinked frame has `prev == next == NIL`. A link word of 0 is "as set up": `NIL`, or
//! for the slots of a [`BootRun`] (a machine's boot free lists) the neighbour in the run;
//! a written link is the slot with [`BIAS`] flipped, never 0. So the arena comes from zeroed
//! host memory, and setting up a machine's free lists touches none of its frames.

/// A slot index: a frame number (`< nr_frames`) or a sentinel (list head).
pub type Slot = u32;
/// Marks an unlinked frame.
pub const NIL: Slot = u32::MAX;

/// Index of a list head (its sentinel slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ListHead(pub Slot);

/// Flipped in a written link, so that 0 means "as set up": no slot is `BIAS` (frame
/// numbers stay below 2^32 - 2^20, config.rs) and `NIL ^ BIAS` is 1.
const BIAS: u32 = !1;

/// Slots `first, first + stride, ..., last`, linked in that order as the whole of list
/// `head` when it was set up (memblock frees a zone's max-order blocks in ascending pfn
/// order). Their links are implied until first written.
#[derive(Clone, Copy, Debug)]
pub struct BootRun {
    pub head: ListHead,
    pub first: Slot,
    pub last: Slot,
    pub stride: u32,
}

impl BootRun {
    #[inline]
    pub fn contains(&self, x: Slot) -> bool {
        x >= self.first && x <= self.last && (x - self.first) % self.stride == 0
    }

    #[allow(clippy::len_without_is_empty)] // a run holds at least its first block
    pub fn len(&self) -> u64 {
        ((self.last - self.first) / self.stride) as u64 + 1
    }
}

pub struct ListArena {
    /// `[prev, next]` per slot, each 0 (as set up) or `slot ^ BIAS`.
    links: Vec<[Slot; 2]>,
    /// The lists set up as runs (few: one per zone).
    boot: Vec<BootRun>,
    /// Number of entries on each list, indexed by `head - nr_frames`.
    len: Vec<u64>,
    nr_frames: u32,
}

impl ListArena {
    pub fn new(nr_frames: u32) -> Self {
        assert!(nr_frames < BIAS, "{nr_frames} frames: list slots must stay below {BIAS}");
        // Zeroed host memory, under huge pages where the host has them (list operations
        // read and write neighbours' links at random).
        let mut links = vec![[0; 2]; nr_frames as usize];
        reclaimlab_trace::mem::huge_pages(&mut links);
        ListArena { links, boot: Vec::new(), len: Vec::new(), nr_frames }
    }

    /// Link `x`'s side `dir` (0 prev, 1 next).
    #[inline(always)]
    fn link(&self, x: Slot, dir: usize) -> Slot {
        match self.links[x as usize][dir] {
            0 => self.boot_link(x, dir),
            l => l ^ BIAS,
        }
    }

    /// A link not written since set-up: the neighbour in its boot run, or `NIL`.
    #[cold]
    #[inline(never)]
    fn boot_link(&self, x: Slot, dir: usize) -> Slot {
        match self.boot.iter().find(|r| r.contains(x)) {
            Some(r) if dir == 0 => {
                if x == r.first {
                    r.head.0
                } else {
                    x - r.stride
                }
            }
            Some(r) => {
                if x == r.last {
                    r.head.0
                } else {
                    x + r.stride
                }
            }
            None => NIL,
        }
    }

    #[inline(always)]
    fn prev(&self, x: Slot) -> Slot {
        self.link(x, 0)
    }

    #[inline(always)]
    fn next(&self, x: Slot) -> Slot {
        self.link(x, 1)
    }

    #[inline(always)]
    fn set_prev(&mut self, x: Slot, p: Slot) {
        self.links[x as usize][0] = p ^ BIAS;
    }

    #[inline(always)]
    fn set_next(&mut self, x: Slot, n: Slot) {
        self.links[x as usize][1] = n ^ BIAS;
    }

    /// Set empty list `run.head` up as `run`'s slots, without touching them.
    pub fn add_boot_run(&mut self, run: BootRun) {
        assert!(self.is_empty(run.head) && run.last < self.nr_frames && run.stride > 0);
        self.set_next(run.head.0, run.first);
        self.set_prev(run.head.0, run.last);
        let i = self.idx(run.head);
        self.len[i] += run.len();
        self.boot.push(run);
    }

    pub fn nr_frames(&self) -> u32 {
        self.nr_frames
    }

    /// Append `n` new empty lists; returns the first head (the others follow).
    pub fn alloc_heads(&mut self, n: u32) -> ListHead {
        let first = self.links.len() as Slot;
        for i in 0..n {
            let s = first + i;
            assert!(s < BIAS, "list slots must stay below {BIAS}");
            self.links.push([s ^ BIAS; 2]);
            self.len.push(0);
        }
        ListHead(first)
    }

    #[inline(always)]
    fn idx(&self, h: ListHead) -> usize {
        (h.0 - self.nr_frames) as usize
    }

    #[inline(always)]
    pub fn len(&self, h: ListHead) -> u64 {
        self.len[self.idx(h)]
    }

    #[inline(always)]
    pub fn is_empty(&self, h: ListHead) -> bool {
        self.next(h.0) == h.0
    }

    #[inline(always)]
    pub fn is_linked(&self, x: Slot) -> bool {
        self.next(x) != NIL
    }

    #[inline(always)]
    fn link_between(&mut self, x: Slot, p: Slot, n: Slot) {
        self.links[x as usize] = [p ^ BIAS, n ^ BIAS];
        self.set_next(p, x);
        self.set_prev(n, x);
    }

    /// `list_add`: insert at the head (most recent end).
    #[inline(always)]
    pub fn add_head(&mut self, h: ListHead, x: Slot) {
        debug_assert!(!self.is_linked(x), "slot {x} already on a list");
        let n = self.next(h.0);
        self.link_between(x, h.0, n);
        let i = self.idx(h);
        self.len[i] += 1;
    }

    /// `list_add_tail`: insert at the tail (the end reclaim scans from).
    #[inline(always)]
    pub fn add_tail(&mut self, h: ListHead, x: Slot) {
        debug_assert!(!self.is_linked(x), "slot {x} already on a list");
        let p = self.prev(h.0);
        self.link_between(x, p, h.0);
        let i = self.idx(h);
        self.len[i] += 1;
    }

    /// `list_add_tail(x, at)`: insert `x` just before `at` (on its head side) on list `h`.
    #[inline]
    pub fn add_before(&mut self, h: ListHead, at: Slot, x: Slot) {
        debug_assert!(!self.is_linked(x) && self.is_linked(at), "slot {x} linked or {at} unlinked");
        let p = self.prev(at);
        self.link_between(x, p, at);
        let i = self.idx(h);
        self.len[i] += 1;
    }

    /// `list_del`: unlink `x` from list `h` (the caller knows which list it is on).
    #[inline(always)]
    pub fn del(&mut self, h: ListHead, x: Slot) {
        debug_assert!(self.is_linked(x), "slot {x} not on a list");
        let (p, n) = (self.prev(x), self.next(x));
        self.set_next(p, n);
        self.set_prev(n, p);
        self.links[x as usize] = [NIL ^ BIAS; 2];
        let i = self.idx(h);
        self.len[i] -= 1;
    }

    /// `list_replace`: `new` (unlinked) takes `old`'s place on its list; `old` ends
    /// unlinked. The list's length is unchanged (page migration keeps LRU position).
    #[inline]
    pub fn replace(&mut self, old: Slot, new: Slot) {
        debug_assert!(self.is_linked(old) && !self.is_linked(new));
        let (p, n) = (self.prev(old), self.next(old));
        self.link_between(new, p, n);
        self.links[old as usize] = [NIL ^ BIAS; 2];
    }

    /// Move `x` from list `from` to the head of list `to` (`list_move`).
    #[inline(always)]
    pub fn move_head(&mut self, from: ListHead, to: ListHead, x: Slot) {
        self.del(from, x);
        self.add_head(to, x);
    }

    /// First (most recently added) entry, if any.
    #[inline(always)]
    pub fn head(&self, h: ListHead) -> Option<Slot> {
        let n = self.next(h.0);
        (n != h.0).then_some(n)
    }

    /// Last entry (the one reclaim looks at first), if any.
    #[inline(always)]
    pub fn tail(&self, h: ListHead) -> Option<Slot> {
        let p = self.prev(h.0);
        (p != h.0).then_some(p)
    }

    /// Entry before `x` (towards the head), or None at the head.
    #[inline(always)]
    pub fn prev_of(&self, h: ListHead, x: Slot) -> Option<Slot> {
        let p = self.prev(x);
        (p != h.0).then_some(p)
    }

    /// Host-side hint (no effect on the lists): start loading `x`'s links, for a walk
    /// that will unlink or move it next.
    #[inline(always)]
    pub fn prefetch_links(&self, x: Slot) {
        super::prefetch::prefetch(&self.links, x as usize);
    }

    /// Iterate a list from head to tail (tests and invariant checks; not for hot paths).
    pub fn iter(&self, h: ListHead) -> impl Iterator<Item = Slot> + '_ {
        let mut cur = self.next(h.0);
        std::iter::from_fn(move || {
            if cur == h.0 {
                None
            } else {
                let x = cur;
                cur = self.next(x);
                Some(x)
            }
        })
    }

    /// Host bytes used per frame by the link arrays.
    pub const BYTES_PER_FRAME: usize = std::mem::size_of::<[Slot; 2]>();

    /// Check link symmetry and list lengths; returns a description of the first fault.
    pub fn check_invariants(&self) -> Result<(), String> {
        for h in self.nr_frames..self.links.len() as u32 {
            let head = ListHead(h);
            let mut n = 0u64;
            let mut cur = h;
            loop {
                let nx = self.next(cur);
                if nx == NIL || self.prev(nx) != cur {
                    return Err(format!("broken link after slot {cur} on list {h}"));
                }
                cur = nx;
                if cur == h {
                    break;
                }
                if cur >= self.nr_frames {
                    return Err(format!("list {h} reaches sentinel {cur}"));
                }
                n += 1;
                if n > self.nr_frames as u64 {
                    return Err(format!("list {h} has a cycle"));
                }
            }
            if n != self.len(head) {
                return Err(format!("list {h}: counted {n} entries, len says {}", self.len(head)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_keeps_position_and_length() {
        let mut l = ListArena::new(8);
        let h = l.alloc_heads(1);
        for x in [1, 2, 3] {
            l.add_tail(h, x);
        }
        l.replace(2, 7);
        assert_eq!(l.iter(h).collect::<Vec<_>>(), vec![1, 7, 3]);
        assert_eq!(l.len(h), 3);
        assert!(!l.is_linked(2));
        l.check_invariants().unwrap();
    }

    #[test]
    fn add_del_order_and_len() {
        let mut a = ListArena::new(8);
        let h = a.alloc_heads(2);
        let h2 = ListHead(h.0 + 1);
        a.add_head(h, 1);
        a.add_head(h, 2);
        a.add_tail(h, 3);
        assert_eq!(a.iter(h).collect::<Vec<_>>(), vec![2, 1, 3]);
        assert_eq!(a.tail(h), Some(3));
        assert_eq!(a.len(h), 3);
        a.move_head(h, h2, 1);
        assert_eq!(a.iter(h).collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(a.iter(h2).collect::<Vec<_>>(), vec![1]);
        a.del(h, 2);
        a.del(h, 3);
        assert!(a.is_empty(h));
        assert_eq!(a.tail(h), None);
        assert!(!a.is_linked(2));
        a.check_invariants().unwrap();
    }

    #[test]
    fn a_boot_run_behaves_as_the_list_linked_slot_by_slot() {
        let (mut lazy, mut eager) = (ListArena::new(32), ListArena::new(32));
        let (h, he) = (lazy.alloc_heads(2), eager.alloc_heads(2));
        lazy.add_boot_run(BootRun { head: h, first: 4, last: 28, stride: 8 });
        for x in [4, 12, 20, 28] {
            eager.add_tail(he, x);
        }
        let ops = |a: &mut ListArena, h: ListHead| {
            let h2 = ListHead(h.0 + 1);
            a.add_tail(h, 3);
            a.del(h, 12);
            a.move_head(h, h2, 28);
            a.add_before(h, 20, 13);
            a.replace(4, 5);
            assert!(!a.is_linked(4) && !a.is_linked(0) && !a.is_linked(12));
            (a.iter(h).collect::<Vec<_>>(), a.iter(h2).collect::<Vec<_>>(), a.len(h), a.tail(h), a.prev_of(h, 20))
        };
        assert_eq!(ops(&mut lazy, h), ops(&mut eager, he));
        assert_eq!(lazy.iter(h).collect::<Vec<_>>(), vec![5, 13, 20, 3]);
        lazy.check_invariants().unwrap();
    }
}
