//! The swap device's cluster allocator (mm/swapfile.c 6.12, `cluster_alloc_swap_entry`).
//!
//! Slots come in clusters of [`SWAPFILE_CLUSTER`]: each CPU takes slots in order from its
//! own current cluster (`percpu_cluster->next[order]`), and a CPU whose cluster is used up
//! takes the head of the free list, then clusters with freed slots (the nonfull list,
//! each moved to the frag list as it is tried), then the frag list; an order-0 slot may
//! finally come from a THP's partly freed cluster. A cluster emptied by frees goes to the
//! free list's tail; one that loses a slot while full joins the nonfull list. The free
//! list starts in the kernel's column order (`setup_clusters`: every 32nd cluster, one
//! swap address space apart), and the cluster holding the header page starts nonfull.
//!
//! Abstractions: no discard (the guest's `swapon` asks for none), no slot held by the swap
//! cache alone to reclaim (`vm_swap_full`'s `swap_reclaim_full_clusters`: the model frees a
//! slot at swap-in), and orders 0 and `PMD_ORDER` only (no mTHP size is enabled by default).

use super::swap::{SlotWord, USED};
use crate::thp::{HPAGE_PMD_NR, HPAGE_PMD_ORDER as PMD_ORDER};

/// `SWAPFILE_CLUSTER` with `CONFIG_THP_SWAP`: slots per swap cluster (`HPAGE_PMD_NR`).
pub const SWAPFILE_CLUSTER: u64 = HPAGE_PMD_NR as u64;
const CL: u32 = SWAPFILE_CLUSTER as u32;
/// `SWAP_NEXT_INVALID`: offset 0 is the header page, never a slot to hand out.
const SWAP_NEXT_INVALID: u32 = 0;
/// `SWAP_CLUSTER_COLS` on x86-64: max(64-byte lines / 24-byte `swap_cluster_info`,
/// `SWAP_ADDRESS_SPACE_PAGES` / `SWAPFILE_CLUSTER` = 16384 / 512).
const SWAP_CLUSTER_COLS: u32 = 32;

// `CLUSTER_FLAG_*` (include/linux/swap.h 6.12).
const FREE: u8 = 1;
const NONFULL: u8 = 2;
const FRAG: u8 = 4;
const FULL: u8 = 8;

const NIL: u32 = u32::MAX;
// Lists: free, full, then nonfull and frag per order (0, PMD_ORDER).
const L_FREE: usize = 0;
const L_FULL: usize = 1;
const NR_LISTS: usize = 6;

/// The two orders' index: 0 for order 0, 1 for `PMD_ORDER`.
#[inline(always)]
fn oi(order: u8) -> usize {
    debug_assert!(order == 0 || order == PMD_ORDER);
    (order != 0) as usize
}

fn l_nonfull(order: u8) -> usize {
    2 + oi(order)
}

fn l_frag(order: u8) -> usize {
    4 + oi(order)
}

/// Every cluster's `swap_cluster_info` (count, flags, order, list) and the lists, with
/// each CPU's `percpu_cluster`.
pub struct Clusters {
    /// `si->max`: the device's slots, the header's included.
    max: u32,
    count: Vec<u16>,
    flags: Vec<u8>,
    order: Vec<u8>,
    prev: Vec<u32>,
    next: Vec<u32>,
    head: [u32; NR_LISTS],
    tail: [u32; NR_LISTS],
    /// `si->frag_cluster_nr[order]`.
    frag_nr: [u32; 2],
    /// Per CPU, `percpu_cluster->next[order]` for order 0 and `PMD_ORDER`.
    cpu_next: Vec<[u32; 2]>,
}

impl Clusters {
    /// `setup_clusters` for a device of `max` slots on `nr_cpus` CPUs: the header page and
    /// the end of the last cluster beyond `max` are counted in use, their clusters go on
    /// the nonfull list, the rest on the free list in column order. The caller marks the
    /// header slot in use in its map.
    pub fn new(max: u64, nr_cpus: u32) -> Clusters {
        let max = u32::try_from(max).expect("swap device of at most 2^32 slots");
        let n = max.div_ceil(CL) as usize;
        let mut c = Clusters {
            max,
            count: vec![0; n],
            flags: vec![0; n],
            order: vec![0; n],
            prev: vec![NIL; n],
            next: vec![NIL; n],
            head: [NIL; NR_LISTS],
            tail: [NIL; NR_LISTS],
            frag_nr: [0; 2],
            cpu_next: vec![[SWAP_NEXT_INVALID; 2]; nr_cpus.max(1) as usize],
        };
        if n == 0 {
            return c;
        }
        c.count[0] += 1; // the header page
        c.count[n - 1] += (n as u32 * CL - max) as u16; // "the EOF part of the last cluster"
                                                        // `col` = si->cluster_next (1) / SWAPFILE_CLUSTER % SWAP_CLUSTER_COLS = 0.
        for j in 0..SWAP_CLUSTER_COLS {
            for i in 0..(n as u32).div_ceil(SWAP_CLUSTER_COLS) {
                let idx = (i * SWAP_CLUSTER_COLS + j) as usize;
                if idx >= n {
                    continue;
                }
                if c.count[idx] != 0 {
                    c.flags[idx] = NONFULL;
                    c.list_add_tail(idx, l_nonfull(0));
                } else {
                    c.flags[idx] = FREE;
                    c.list_add_tail(idx, L_FREE);
                }
            }
        }
        c
    }

    fn list_add_tail(&mut self, c: usize, l: usize) {
        self.prev[c] = self.tail[l];
        self.next[c] = NIL;
        match self.tail[l] {
            NIL => self.head[l] = c as u32,
            t => self.next[t as usize] = c as u32,
        }
        self.tail[l] = c as u32;
    }

    /// Unlink `c` from list `l`.
    fn list_del(&mut self, c: usize, l: usize) {
        let (p, x) = (self.prev[c], self.next[c]);
        match p {
            NIL => self.head[l] = x,
            p => self.next[p as usize] = x,
        }
        match x {
            NIL => self.tail[l] = p,
            x => self.prev[x as usize] = p,
        }
    }

    /// The list `c` is on, from its flags.
    fn list_of(&self, c: usize) -> usize {
        match self.flags[c] {
            FREE => L_FREE,
            FULL => L_FULL,
            NONFULL => l_nonfull(self.order[c]),
            FRAG => l_frag(self.order[c]),
            f => unreachable!("cluster {c} with flags {f} is on no list"),
        }
    }

    /// `list_move_tail(&ci->list, list)`.
    fn move_tail(&mut self, c: usize, l: usize) {
        self.list_del(c, self.list_of(c));
        self.list_add_tail(c, l);
    }

    /// `get_swap_pages`' loop of [`Self::alloc`] on `cpu`: up to `out.len()` slots (or
    /// clusters) into `out`, in order. Returns how many. A page slot in the word this CPU
    /// goes on from is taken here, as `alloc_swap_scan_cluster` would take it: the same
    /// result as calling [`Self::alloc`] for each (which does the rest), about 134 fewer
    /// instructions a swap-out (BENCHMARKS.md, "6.12's swap slot allocator").
    pub fn alloc_batch(&mut self, map: &mut [SlotWord], cpu: u32, order: u8, out: &mut [u32]) -> usize {
        let mut n = 0;
        while n < out.len() {
            let next = self.cpu_next[cpu as usize][0];
            if order == 0 && next != SWAP_NEXT_INVALID {
                let c = (next / CL) as usize;
                let end = (c as u32 * CL + CL).min(self.max);
                let w = next as usize / 64;
                let mut free = !map[w][USED] & (!0u64 << (next % 64));
                let first = n;
                // Each slot taken moves this CPU's next offset past it, so the next is the
                // word's next free bit.
                while free != 0 && n < out.len() && self.flags[c] != FREE {
                    let slot = w as u32 * 64 + free.trailing_zeros();
                    if slot >= end || self.count[c] as u32 >= CL {
                        break;
                    }
                    free &= free - 1;
                    map[w][USED] |= 1 << (slot % 64);
                    self.count[c] += 1;
                    out[n] = slot;
                    n += 1;
                    let full = self.count[c] as u32 == CL;
                    if full {
                        self.cluster_full(c);
                    }
                    self.cpu_next[cpu as usize][0] = if full || slot + 1 >= end { SWAP_NEXT_INVALID } else { slot + 1 };
                    if full {
                        break;
                    }
                }
                if n > first {
                    continue;
                }
            }
            match self.alloc(map, cpu, order) {
                Some(slot) => {
                    out[n] = slot;
                    n += 1;
                }
                None => break,
            }
        }
        n
    }

    /// `cluster_alloc_swap_entry(si, order, usage)` on `cpu`: a free slot (order 0) or
    /// a whole cluster (`PMD_ORDER`), marked in use in `map`, or `None`.
    pub fn alloc(&mut self, map: &mut [SlotWord], cpu: u32, order: u8) -> Option<u32> {
        let mut offset = self.cpu_next[cpu as usize][oi(order)];
        let found = 'done: {
            if offset != SWAP_NEXT_INVALID {
                let f;
                (f, offset) = self.scan_cluster(map, offset, order);
                if f.is_some() {
                    break 'done f;
                }
            }
            if self.head[L_FREE] != NIL {
                let c = self.head[L_FREE];
                let f;
                (f, offset) = self.scan_cluster(map, c * CL, order);
                debug_assert!(f.is_some(), "a free cluster gives any allocation");
                break 'done f;
            }
            let mut found = None;
            if order < PMD_ORDER {
                let mut frags = 0;
                while self.head[l_nonfull(order)] != NIL {
                    let c = self.head[l_nonfull(order)] as usize;
                    self.move_tail(c, l_frag(order));
                    self.flags[c] = FRAG;
                    self.frag_nr[oi(order)] += 1;
                    (found, offset) = self.scan_cluster(map, c as u32 * CL, order);
                    frags += 1;
                    if found.is_some() {
                        break;
                    }
                }
                if found.is_none() {
                    // "Nonfull clusters are moved to frag tail if we reached here, count
                    // them too, don't over scan the frag list."
                    while frags < self.frag_nr[oi(order)] {
                        let c = self.head[l_frag(order)] as usize;
                        self.move_tail(c, l_frag(order));
                        (found, offset) = self.scan_cluster(map, c as u32 * CL, order);
                        frags += 1;
                        if found.is_some() {
                            break;
                        }
                    }
                }
            }
            if found.is_some() || order != 0 {
                break 'done found;
            }
            // "Order 0 stealing from higher order": clusters here have a free slot.
            for l in [l_frag(PMD_ORDER), l_nonfull(PMD_ORDER)] {
                if self.head[l] != NIL {
                    (found, offset) = self.scan_cluster(map, self.head[l] * CL, 0);
                    debug_assert!(found.is_some(), "a cluster on a partial list has a free slot");
                    break 'done found;
                }
            }
            None
        };
        self.cpu_next[cpu as usize][oi(order)] = offset;
        found
    }

    /// `alloc_swap_scan_cluster(si, offset, &found, order, usage)`: from `offset` to the
    /// end of its cluster, the first run of `2^order` free slots, taken. Returns it and the
    /// offset this CPU tries next (`SWAP_NEXT_INVALID` when the cluster is used up).
    fn scan_cluster(&mut self, map: &mut [SlotWord], offset: u32, order: u8) -> (Option<u32>, u32) {
        let nr = 1u32 << order;
        let start = offset & !(CL - 1);
        let end = (start + CL).min(self.max);
        let c = (start / CL) as usize;
        if end < nr || self.count[c] as u32 + nr > CL {
            return (None, SWAP_NEXT_INVALID);
        }
        let last = end - nr;
        if order == 0 {
            return self.scan_cluster_page(map, c, offset, end);
        }
        let mut offset = offset;
        let mut found = None;
        while offset <= last {
            if range_free(map, offset, nr) {
                self.alloc_range(map, c, offset, order);
                found = Some(offset);
                if self.count[c] as u32 == CL {
                    return (found, SWAP_NEXT_INVALID);
                }
                offset += nr;
                break;
            }
            offset += nr;
        }
        (found, if offset > last { SWAP_NEXT_INVALID } else { offset })
    }

    /// [`Self::scan_cluster`] of order 0 in cluster `c`, from `offset` to `end`: the first
    /// free slot, found a map word at a time.
    #[inline]
    fn scan_cluster_page(&mut self, map: &mut [SlotWord], c: usize, offset: u32, end: u32) -> (Option<u32>, u32) {
        let mut w = offset as usize / 64;
        let mut free = !map[w][USED] & (!0u64 << (offset % 64));
        loop {
            if free != 0 {
                let slot = w as u32 * 64 + free.trailing_zeros();
                if slot >= end {
                    break;
                }
                self.alloc_range(map, c, slot, 0);
                let next = slot + 1;
                return (Some(slot), if self.count[c] as u32 == CL || next >= end { SWAP_NEXT_INVALID } else { next });
            }
            w += 1;
            if w as u32 * 64 >= end {
                break;
            }
            free = !map[w][USED];
        }
        (None, SWAP_NEXT_INVALID)
    }

    /// `cluster_alloc_range`: a free cluster joins the nonfull list of `order` (unless the
    /// allocation takes it whole), a cluster filled up the full list.
    fn alloc_range(&mut self, map: &mut [SlotWord], c: usize, start: u32, order: u8) {
        let nr = 1u32 << order;
        if self.flags[c] == FREE {
            self.order[c] = order;
            if nr < CL {
                self.move_tail(c, l_nonfull(order));
                self.flags[c] = NONFULL;
            }
        }
        for s in start..start + nr {
            map[s as usize / 64][USED] |= 1 << (s % 64);
        }
        self.count[c] += nr as u16;
        if self.count[c] as u32 == CL {
            self.cluster_full(c);
        }
    }

    /// Cluster `c` has no free slot left: to the full list.
    fn cluster_full(&mut self, c: usize) {
        if self.flags[c] == FRAG {
            self.frag_nr[oi(self.order[c])] -= 1;
        }
        self.move_tail(c, L_FULL);
        self.flags[c] = FULL;
    }

    /// `dec_cluster_info_page` for `nr` slots of `slot`'s cluster freed
    /// (`swap_entry_range_free`): an emptied cluster goes to the free list's tail
    /// (`free_cluster`), a full or frag one to the nonfull list of its order.
    pub fn dec(&mut self, slot: u32, nr: u32) {
        let c = (slot / CL) as usize;
        debug_assert!(self.count[c] as u32 >= nr && self.flags[c] != FREE);
        self.count[c] -= nr as u16;
        if self.count[c] == 0 {
            if self.flags[c] == FRAG {
                self.frag_nr[oi(self.order[c])] -= 1;
            }
            self.move_tail(c, L_FREE);
            self.flags[c] = FREE;
            self.order[c] = 0;
            return;
        }
        if self.flags[c] != NONFULL {
            if self.flags[c] == FRAG {
                self.frag_nr[oi(self.order[c])] -= 1;
            }
            self.move_tail(c, l_nonfull(self.order[c]));
            self.flags[c] = NONFULL;
        }
    }

    /// Each cluster's count against `map` (with the header and the end beyond `max`), its
    /// flags against the list it is linked on, and the frag counts.
    pub fn check(&self, map: &[SlotWord]) -> Result<(), String> {
        let n = self.count.len();
        let mut on = vec![NR_LISTS; n];
        for (l, &h) in self.head.iter().enumerate() {
            let (mut c, mut prev) = (h, NIL);
            while c != NIL {
                if on[c as usize] != NR_LISTS || self.prev[c as usize] != prev {
                    return Err(format!("swap cluster {c} linked twice or misplaced"));
                }
                on[c as usize] = l;
                (prev, c) = (c, self.next[c as usize]);
            }
            if self.tail[l] != prev {
                return Err(format!("swap cluster list {l}: tail {} but last {prev}", self.tail[l]));
            }
        }
        let mut frag = [0u32; 2];
        for c in 0..n {
            let start = c as u32 * CL;
            let end = (start + CL).min(self.max);
            let used = (start..end).filter(|&s| map.get(s as usize / 64).is_some_and(|w| w[USED] & (1 << (s % 64)) != 0)).count() as u32;
            // Before the first allocation the map is empty: the header is counted all the same.
            let used = used.max((c == 0 && map.is_empty()) as u32) + (start + CL - end);
            if used != self.count[c] as u32 {
                return Err(format!("swap cluster {c}: count {} but {used} slots in use", self.count[c]));
            }
            if on[c] != self.list_of(c) {
                return Err(format!("swap cluster {c}: flags {} but on list {}", self.flags[c], on[c]));
            }
            if self.flags[c] == FRAG {
                frag[oi(self.order[c])] += 1;
            }
        }
        if frag != self.frag_nr {
            return Err(format!("frag clusters {frag:?} but counted {:?}", self.frag_nr));
        }
        Ok(())
    }
}

/// Slots `start .. start + nr` are all free in `map` (`cluster_scan_range`; a slot held by
/// the swap cache alone does not occur in the model).
#[inline]
fn range_free(map: &[SlotWord], start: u32, nr: u32) -> bool {
    (start..start + nr).all(|s| map[s as usize / 64][USED] & (1 << (s % 64)) == 0)
}
