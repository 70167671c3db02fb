//! Workingset detection (mm/workingset.c v6.15, spec B): shadow entries and the
//! refault-distance test of the non-MGLRU path.
//!
//! A shadow is packed as the kernel packs it (`pack_shadow`, B.1):
//! `[ eviction | memcg id (16) | node id (NODES_SHIFT=10) | workingset (1) ]`, then
//! `xa_mk_value` (shifted left by one with bit 0 set, so a shadow is never 0 and 0 means
//! "no shadow"). With 64-bit longs that leaves 36 bits of eviction clock; the modular
//! distance `(refault - eviction) & EVICTION_MASK` tolerates wrap-around exactly as the
//! kernel does. `bucket_order` is computed from the machine size as at boot.
//!
//! Shadow nodes (B.4): [`ShadowNodes`] keeps the page cache's xarray leaf nodes of every
//! file in the trace's file table, the `shadow_nodes` list_lru of the nodes that hold only
//! shadow entries (`workingset_update_node`), and its shrinker's count and scan
//! (`count_shadow_nodes`, `shadow_lru_isolate`); `mm/shrinker.rs` runs it from reclaim.

pub const MEM_CGROUP_ID_SHIFT: u32 = 16;
pub const NODES_SHIFT: u32 = 10;
pub const WORKINGSET_SHIFT: u32 = 1;
/// `BITS_PER_LONG - BITS_PER_XA_VALUE` = 1.
const XA_VALUE_SHIFT: u32 = 1;
pub const EVICTION_SHIFT: u32 = XA_VALUE_SHIFT + WORKINGSET_SHIFT + NODES_SHIFT + MEM_CGROUP_ID_SHIFT;
pub const EVICTION_MASK: u64 = !0u64 >> EVICTION_SHIFT;

/// `bucket_order` as `workingset_init` computes it for `totalram_pages`.
pub fn bucket_order(totalram_pages: u64) -> u32 {
    let timestamp_bits = 64 - EVICTION_SHIFT;
    let max_order = 64 - (totalram_pages.saturating_sub(1)).leading_zeros(); // fls_long
    max_order.saturating_sub(timestamp_bits)
}

/// `pack_shadow` + `xa_mk_value`.
pub fn pack_shadow(memcgid: u16, nid: u16, eviction: u64, workingset: bool) -> u64 {
    let mut e = eviction & EVICTION_MASK;
    e = (e << MEM_CGROUP_ID_SHIFT) | memcgid as u64;
    e = (e << NODES_SHIFT) | nid as u64;
    e = (e << WORKINGSET_SHIFT) | workingset as u64;
    (e << 1) | 1
}

/// `unpack_shadow`: (memcg id, node id, eviction, workingset).
pub fn unpack_shadow(shadow: u64) -> (u16, u16, u64, bool) {
    debug_assert!(shadow & 1 == 1, "not an xarray value entry");
    let mut e = shadow >> 1;
    let workingset = e & 1 != 0;
    e >>= WORKINGSET_SHIFT;
    let nid = (e & ((1 << NODES_SHIFT) - 1)) as u16;
    e >>= NODES_SHIFT;
    let memcgid = (e & ((1 << MEM_CGROUP_ID_SHIFT) - 1)) as u16;
    e >>= MEM_CGROUP_ID_SHIFT;
    (memcgid, nid, e, workingset)
}

/// `(refault - eviction) & EVICTION_MASK`.
#[inline]
pub fn refault_distance(refault: u64, eviction: u64) -> u64 {
    refault.wrapping_sub(eviction) & EVICTION_MASK
}

/// LRU sizes of the eviction lruvec (hierarchical, `lruvec_page_state`).
#[derive(Clone, Copy, Debug, Default)]
pub struct WorkingsetLists {
    pub inactive_anon: u64,
    pub active_anon: u64,
    pub inactive_file: u64,
    pub active_file: u64,
}

/// `workingset_size` of `workingset_test_recent` (B.3): the memory a refaulting page
/// competes for besides the inactive list it was evicted from.
pub fn workingset_size(file: bool, l: &WorkingsetLists, swap_available: bool) -> u64 {
    let mut size = l.active_file;
    if !file {
        size += l.inactive_file;
    }
    if swap_available {
        size += l.active_anon;
        if file {
            size += l.inactive_anon;
        }
    }
    size
}

/// `XA_CHUNK_SHIFT` (CONFIG_BASE_SMALL=n): a leaf node holds the 64 entries of indices
/// `index >> 6` (include/linux/xarray.h).
pub const XA_CHUNK_SHIFT: u32 = 6;
/// What a `radix_tree_node` costs its memcg's slab statistics: `s->size` (576 bytes on
/// x86-64) plus the obj_cgroup pointer (mm/memcontrol.c 6.12 `obj_full_size`). The cache is
/// SLAB_RECLAIM_ACCOUNT (lib/radix-tree.c), so it is NR_SLAB_RECLAIMABLE_B.
pub const XA_NODE_CHARGED_BYTES: u64 = 576 + 8;

/// End of a list / no node.
const NIL: u32 = u32::MAX;

/// Per node, a node or list id, [`NIL`] for none, stored complemented: a zeroed
/// allocation reads as `NIL` throughout, so a node never put on a list (most of a large
/// swap device's) costs no host memory.
#[derive(Default)]
struct NodeIds(Vec<u32>);

impl NodeIds {
    /// `n` entries, all `NIL`.
    fn new(n: usize) -> Self {
        NodeIds(vec![0; n])
    }

    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        !self.0[i]
    }

    #[inline(always)]
    fn set(&mut self, i: usize, id: u32) {
        self.0[i] = !id;
    }
}

/// The page cache's xarray leaf nodes of the trace's files and the `shadow_nodes`
/// list_lru (mm/workingset.c, lib/xarray.c, mm/list_lru.c 6.12; later kernels change only
/// list_lru's locking).
///
/// A file of the file table with more than one page (bounded) gets `ceil(nr_pages / 64)`
/// node slots, one per leaf node `(page - first) >> 6`, in one flat array. A node slot is
/// allocated while it holds an entry (`count > 0`): a resident page or a shadow. It is
/// charged to the memcg of the task that inserted its first entry (the xarray of a mapping
/// is XA_FLAGS_ACCOUNT, fs/inode.c, so `xas_alloc` charges `current`'s memcg) on the node
/// of that page; its list is that (memcg, node)'s, indexed like the lruvecs.
///
/// Abstractions: a file of one page has no node (the kernel keeps a lone index 0 in the
/// xarray's head, and that shadow is the inode shrinker's, which is not modelled), but a
/// larger file of which only index 0 was ever cached has one here where the kernel has
/// none; a file that runs to the end of the id space has no nodes;
/// interior nodes are not counted.
///
/// The swap cache's nodes come after the files' (one per 64 swap slots): a swapped-out
/// page's shadow sits at its slot (`__delete_from_swap_cache`), and zram's synchronous
/// swap-in bypasses the swap cache, so these nodes hold shadows only and are always on
/// their list. The swap address spaces' xarrays are not XA_FLAGS_ACCOUNT (mm/swap_state.c
/// 6.12 `init_swap_address_space`), so their nodes are charged to no memcg: they sit on
/// the root memcg's list of their node and count in no memcg's slab, and only reclaim
/// that shrinks the root's list (global reclaim, which walks every memcg) drops them,
/// limited by the root memcg's own pages (`count_shadow_nodes`).
///
/// Host memory: the per-node arrays come from zeroed allocations whose zero is a node's
/// state before first use (empty, on no list), and a swap node's slots follow from its
/// index, so setting up the nodes of a swap device writes nothing per node; a node costs
/// host memory from its first entry.
#[derive(Default)]
pub struct ShadowNodes {
    loaded: bool,
    /// Swap slots of the machine (set before `load`) and the first swap node. Which slots
    /// hold a shadow entry is kept with the slots (mm/swap.rs `Swap::store_shadow`).
    nr_swap_slots: u64,
    swap_base: usize,
    /// Files with nodes, sorted by first page id: first page, end page, first node slot.
    file_first: Vec<u32>,
    file_end: Vec<u32>,
    file_node: Vec<u32>,
    /// Per node: `node->count` (entries), `node->nr_values` (shadow entries).
    count: Vec<u8>,
    nr_values: Vec<u8>,
    /// Per node: on its list (`!list_empty(&node->private_list)`).
    on_list: Vec<bool>,
    /// Per file node: page id of its slot 0 and its number of slots within the file (a
    /// swap node's are its index's: [`Self::slots_of`]).
    start: Vec<u32>,
    slots: Vec<u8>,
    /// Per node while allocated: its list (lruvec id of its memcg and node).
    list: NodeIds,
    prev: NodeIds,
    next: NodeIds,
    /// Per list (lruvec id): head, tail, length, allocated nodes (slab objects), and the
    /// shrinker's `nr_deferred` for that (memcg, node).
    head: Vec<u32>,
    tail: Vec<u32>,
    len: Vec<u32>,
    allocated: Vec<u32>,
    pub nr_deferred: Vec<u64>,
    /// WORKINGSET_NODES summed over nodes: nodes on the lists.
    pub workingset_nodes: u64,
}

impl ShadowNodes {
    /// Take the trace's file table (once).
    pub fn load(&mut self, files: &[reclaimlab_trace::FileRange]) {
        if self.loaded {
            return;
        }
        self.loaded = true;
        let mut nodes = 0u32;
        for f in files.iter().filter(|f| f.nr_pages > 1 && f.nr_pages != u32::MAX) {
            self.file_first.push(f.first);
            self.file_end.push(f.first + f.nr_pages);
            self.file_node.push(nodes);
            let n = f.nr_pages.div_ceil(1 << XA_CHUNK_SHIFT);
            for k in 0..n {
                let start = f.first + (k << XA_CHUNK_SHIFT);
                self.start.push(start);
                self.slots.push((f.first + f.nr_pages - start).min(1 << XA_CHUNK_SHIFT) as u8);
            }
            nodes += n;
        }
        self.swap_base = nodes as usize;
        let n = self.swap_base + self.nr_swap_slots.div_ceil(1 << XA_CHUNK_SHIFT) as usize;
        self.count = vec![0; n];
        self.nr_values = vec![0; n];
        self.on_list = vec![false; n];
        self.list = NodeIds::new(n);
        self.prev = NodeIds::new(n);
        self.next = NodeIds::new(n);
    }

    /// Node `n`'s slots: page ids of a file node, swap slots of a swap node.
    #[inline]
    fn slots_of(&self, n: usize) -> std::ops::Range<u32> {
        if self.is_swap(n) {
            let start = ((n - self.swap_base) as u64) << XA_CHUNK_SHIFT;
            start as u32..(start + (1 << XA_CHUNK_SHIFT)).min(self.nr_swap_slots) as u32
        } else {
            self.start[n]..self.start[n] + self.slots[n] as u32
        }
    }

    /// The machine's swap slots (before [`Self::load`]).
    pub fn set_swap_slots(&mut self, nr: u64) {
        debug_assert!(!self.loaded);
        self.nr_swap_slots = nr;
    }

    /// Whether node `n` is a swap-cache node.
    #[inline]
    fn is_swap(&self, n: usize) -> bool {
        n >= self.swap_base
    }

    /// Whether the nodes exist (from the first batch on).
    #[inline]
    pub fn is_loaded(&self) -> bool {
        self.loaded
    }

    /// `__delete_from_swap_cache(folio, entry, shadow)` put the first shadow entry into
    /// swap-cache node `node` (slots `64 * node ..`): the node is allocated and, holding
    /// only shadows, goes on list `lv` (the root memcg's on the folio's node). A swap
    /// node's `count` and `nr_values` are the population count of its slots' shadow bits
    /// (`Swap::node_shadows`) and are not kept apart.
    #[inline]
    pub fn swap_node_filled(&mut self, node: usize, lv: u32) {
        let n = self.swap_base + node;
        self.ensure_list(lv);
        self.list.set(n, lv);
        self.list_add(n);
    }

    /// Another shadow entry went into swap-cache node `node`, which held shadows: the
    /// folio's `add_to_swap_cache` took the node off its list (it held a page) and
    /// `__delete_from_swap_cache` put it back at the tail (`workingset_update_node`,
    /// mm/swap_state.c 6.12 sets it as the xarray's update hook on both paths).
    #[inline]
    pub fn swap_node_refilled(&mut self, node: usize) {
        let n = self.swap_base + node;
        if self.tail[self.list.get(n) as usize] != n as u32 {
            self.list_del(n);
            self.list_add(n);
        }
    }

    /// `clear_shadow_from_swap_cache` took the last shadow entry of swap-cache node
    /// `node`: it is freed and leaves its list.
    #[inline]
    pub fn swap_node_emptied(&mut self, node: usize) {
        let n = self.swap_base + node;
        self.list_del(n);
        self.list.set(n, NIL);
    }

    /// The leaf node of `page`, if its file has nodes.
    #[inline]
    fn node_of(&self, page: u32) -> Option<usize> {
        let f = self.file_first.partition_point(|&x| x <= page).checked_sub(1)?;
        (page < self.file_end[f]).then(|| (self.file_node[f] + ((page - self.file_first[f]) >> XA_CHUNK_SHIFT)) as usize)
    }

    fn ensure_list(&mut self, lv: u32) {
        let n = lv as usize + 1;
        if self.head.len() < n {
            self.head.resize(n, NIL);
            self.tail.resize(n, NIL);
            self.len.resize(n, 0);
            self.allocated.resize(n, 0);
            self.nr_deferred.resize(n, 0);
        }
    }

    /// Nodes on list `lv` (`list_lru_count_one`).
    pub fn list_len(&self, lv: u32) -> u64 {
        self.len.get(lv as usize).copied().unwrap_or(0) as u64
    }

    /// Allocated nodes (slab objects) charged to list `lv`'s memcg and node.
    pub fn allocated(&self, lv: u32) -> u64 {
        self.allocated.get(lv as usize).copied().unwrap_or(0) as u64
    }

    /// `list_lru_add_obj`: at the tail.
    fn list_add(&mut self, n: usize) {
        let lv = self.list.get(n) as usize;
        self.prev.set(n, self.tail[lv]);
        self.next.set(n, NIL);
        match self.tail[lv] {
            NIL => self.head[lv] = n as u32,
            t => self.next.set(t as usize, n as u32),
        }
        self.tail[lv] = n as u32;
        self.len[lv] += 1;
        self.on_list[n] = true;
        self.workingset_nodes += 1;
    }

    /// `list_lru_del_obj` / `list_lru_isolate`.
    fn list_del(&mut self, n: usize) {
        let lv = self.list.get(n) as usize;
        let (p, x) = (self.prev.get(n), self.next.get(n));
        match p {
            NIL => self.head[lv] = x,
            p => self.next.set(p as usize, x),
        }
        match x {
            NIL => self.tail[lv] = p,
            x => self.prev.set(x as usize, p),
        }
        self.prev.set(n, NIL);
        self.next.set(n, NIL);
        self.len[lv] -= 1;
        self.on_list[n] = false;
        self.workingset_nodes -= 1;
    }

    /// `workingset_update_node` (mm/workingset.c 6.12): a node holding only shadow entries
    /// goes on its list (tail) if it is not there; any other node leaves it. A node
    /// already on the list keeps its place.
    #[inline]
    fn update_node(&mut self, n: usize) {
        let c = self.count[n];
        if c != 0 && c == self.nr_values[n] {
            if !self.on_list[n] {
                self.list_add(n);
            }
        } else if self.on_list[n] {
            self.list_del(n);
        }
    }

    /// A page enters the page cache (`__filemap_add_folio` → `xas_store`): it replaces the
    /// shadow in its slot (`nr_values - 1`) or fills an empty slot (`count + 1`, allocating
    /// the node for list `lv` — the inserting task's memcg, the folio's node — if it was
    /// empty). Pages outside the files with nodes are ignored. True: a node was allocated
    /// (the caller charges it: [`crate::mm::Mm::page_cache_insert`]).
    #[inline]
    pub fn page_cache_insert(&mut self, page: u32, replaces_shadow: bool, lv: u32) -> bool {
        let Some(n) = self.node_of(page) else { return false };
        let mut allocated = false;
        if replaces_shadow {
            debug_assert!(self.nr_values[n] > 0);
            self.nr_values[n] -= 1;
        } else {
            if self.count[n] == 0 {
                self.ensure_list(lv);
                self.list.set(n, lv);
                self.allocated[lv as usize] += 1;
                allocated = true;
            }
            self.count[n] += 1;
        }
        self.update_node(n);
        allocated
    }

    /// A page leaves the page cache (`page_cache_delete` → `xas_store(shadow)`): with a
    /// shadow the slot now holds a value (`nr_values + 1`); without one it is empty
    /// (`count - 1`), and an empty node is freed (`xas_delete_node`). Returns the freed
    /// node's list (the caller uncharges it).
    #[inline]
    pub fn page_cache_delete(&mut self, page: u32, shadow: bool) -> Option<u32> {
        let n = self.node_of(page)?;
        if shadow {
            self.nr_values[n] += 1;
        } else {
            self.count[n] -= 1;
        }
        self.update_node(n);
        (self.count[n] == 0).then(|| {
            let lv = self.list.get(n);
            self.allocated[lv as usize] -= 1;
            self.list.set(n, NIL);
            lv
        })
    }

    /// A shadow entry is erased (`clear_shadow_entry`, as `invalidate_mapping_pages` does
    /// for the value entries in its range): the slot is empty (`nr_values - 1`,
    /// `count - 1`), and an empty node is freed (returned as by [`Self::page_cache_delete`]).
    pub fn clear_shadow_entry(&mut self, page: u32) -> Option<u32> {
        let n = self.node_of(page)?;
        debug_assert!(self.nr_values[n] > 0);
        self.nr_values[n] -= 1;
        self.page_cache_delete(page, false)
    }

    /// `shadow_lru_isolate` of the node at the head of list `lv` (`list_lru_walk_one`
    /// restarts from the head after each LRU_REMOVED_RETRY, so a walk takes the nodes in
    /// list order): take it off the list and free it (`xa_delete_node`). Returns its
    /// slots, every one holding a shadow or empty: page ids of a file node, swap slots of
    /// a swap-cache node (the bool). The caller clears the pages' shadows, and a swap
    /// node's shadow bits.
    pub fn isolate_head(&mut self, lv: u32) -> Option<(std::ops::Range<u32>, bool)> {
        let n = *self.head.get(lv as usize)?;
        if n == NIL {
            return None;
        }
        let n = n as usize;
        self.list_del(n);
        self.list.set(n, NIL);
        let range = self.slots_of(n);
        let swap = self.is_swap(n);
        if !swap {
            debug_assert!(self.count[n] != 0 && self.count[n] == self.nr_values[n]);
            self.count[n] = 0;
            self.nr_values[n] = 0;
            self.allocated[lv as usize] -= 1;
        }
        Some((range, swap))
    }

    /// Invariants against the page slots (`shadow[p] != 0` for a non-resident page is a
    /// value entry, a resident page is a page entry): every node's count and nr_values,
    /// its list membership and memcg list, list lengths, WORKINGSET_NODES; a swap node
    /// against its slots' shadow bits (`swap_shadows(node)`).
    pub fn check(&self, resident: impl Fn(u32) -> bool, shadow: impl Fn(u32) -> bool, swap_shadows: impl Fn(usize) -> u64) -> Result<(), String> {
        let mut on = 0u64;
        let mut allocated = vec![0u32; self.allocated.len()];
        for n in 0..self.count.len() {
            let r = self.slots_of(n);
            if self.is_swap(n) {
                // count = nr_values = the word's population: allocated and listed iff not 0.
                let word = swap_shadows(n - self.swap_base);
                if self.on_list[n] != (word != 0) || (word != 0 && self.list.get(n) == NIL) {
                    return Err(format!("swap node {n}: on list {} with shadow word {word:#x}", self.on_list[n]));
                }
                on += (word != 0) as u64;
                continue;
            }
            let (pages, values) = (r.clone().filter(|&p| resident(p)).count(), r.filter(|&p| !resident(p) && shadow(p)).count());
            if (self.count[n] as usize, self.nr_values[n] as usize) != (pages + values, values) {
                return Err(format!("shadow node {n}: count/nr_values {}/{} but {} pages and {values} shadows", self.count[n], self.nr_values[n], pages));
            }
            let shadow_only = values != 0 && pages == 0;
            if self.on_list[n] != shadow_only {
                return Err(format!("shadow node {n}: on list {} but shadow-only {shadow_only}", self.on_list[n]));
            }
            on += shadow_only as u64;
            if self.count[n] != 0 {
                allocated[self.list.get(n) as usize] += 1;
            }
        }
        if on != self.workingset_nodes {
            return Err(format!("workingset_nodes {} but {on} shadow-only nodes", self.workingset_nodes));
        }
        if allocated != self.allocated {
            return Err(format!("allocated nodes per list {:?} but counted {allocated:?}", self.allocated));
        }
        for lv in 0..self.head.len() {
            let (mut n, mut k, mut prev) = (self.head[lv], 0u32, NIL);
            while n != NIL {
                if self.list.get(n as usize) as usize != lv || !self.on_list[n as usize] || self.prev.get(n as usize) != prev {
                    return Err(format!("shadow list {lv}: node {n} misplaced"));
                }
                (prev, n, k) = (n, self.next.get(n as usize), k + 1);
            }
            if k != self.len[lv] || self.tail[lv] != prev {
                return Err(format!("shadow list {lv}: {k} nodes linked, length {}", self.len[lv]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadow_round_trips_with_36_bit_clock() {
        assert_eq!(EVICTION_SHIFT, 28);
        assert_eq!(EVICTION_MASK, (1u64 << 36) - 1);
        for &(m, n, e, w) in &[(0u16, 0u16, 0u64, false), (65535, 1023, EVICTION_MASK, true), (7, 3, 123456789, true)] {
            let s = pack_shadow(m, n, e, w);
            assert_ne!(s, 0);
            assert_eq!(unpack_shadow(s), (m, n, e, w));
        }
        // the clock is truncated to 36 bits like the kernel's
        let (_, _, e, _) = unpack_shadow(pack_shadow(1, 0, (1u64 << 36) + 5, false));
        assert_eq!(e, 5);
    }

    /// Swap-cache nodes set up without a write per node: one never filled is on no list
    /// and its links read as none; a filled one goes on its list in order and the shrinker
    /// takes it back with its own slots (the last node's partial range included), behind
    /// a file's nodes.
    #[test]
    fn swap_nodes_are_set_up_lazily() {
        let mut s = ShadowNodes::default();
        s.set_swap_slots(200); // 4 swap nodes: 64, 64, 64, 8 slots
        s.load(&[reclaimlab_trace::FileRange { name: "f".into(), first: 10, nr_pages: 100, advice: 0 }]);
        assert_eq!((s.swap_base, s.count.len()), (2, 6));
        assert!((0..6).all(|n| !s.on_list[n] && s.list.get(n) == NIL && s.prev.get(n) == NIL && s.next.get(n) == NIL));
        assert_eq!((s.slots_of(1), s.slots_of(2), s.slots_of(5)), (74..110, 0..64, 192..200));
        s.swap_node_filled(3, 0);
        s.swap_node_filled(1, 0);
        assert_eq!((s.list_len(0), s.workingset_nodes), (2, 2));
        let bits = |node: usize| if node == 1 || node == 3 { 1 } else { 0 };
        assert_eq!(s.check(|_| false, |_| false, bits), Ok(()));
        assert_eq!(s.isolate_head(0), Some((192..200, true)));
        assert_eq!(s.isolate_head(0), Some((64..128, true)));
        assert_eq!((s.isolate_head(0), s.list_len(0)), (None, 0));
        assert!((0..6).all(|n| !s.on_list[n] && s.list.get(n) == NIL));
        // A node emptied in place leaves its list too.
        s.swap_node_filled(0, 0);
        s.swap_node_emptied(0);
        assert_eq!((s.list_len(0), s.workingset_nodes), (0, 0));
        assert_eq!(s.check(|_| false, |_| false, |_| 0), Ok(()));
    }

    /// A swap node that takes another shadow goes to its list's tail (the folio's
    /// `add_to_swap_cache` took it off, `__delete_from_swap_cache` put it back), so the
    /// shrinker takes the node least recently written first.
    #[test]
    fn a_swap_node_that_takes_a_shadow_goes_to_the_tail() {
        let mut s = ShadowNodes::default();
        s.set_swap_slots(256);
        s.load(&[]);
        for node in [0, 1, 2] {
            s.swap_node_filled(node, 0);
        }
        s.swap_node_refilled(0);
        s.swap_node_refilled(0); // already the tail: stays
        assert_eq!(s.check(|_| false, |_| false, |n| (n < 3) as u64), Ok(()));
        assert_eq!(s.isolate_head(0), Some((64..128, true)));
        assert_eq!(s.isolate_head(0), Some((128..192, true)));
        assert_eq!(s.isolate_head(0), Some((0..64, true)));
    }

    #[test]
    fn distance_is_modular() {
        assert_eq!(refault_distance(1000, 400), 600);
        // the clock wrapped past 2^36 since eviction
        assert_eq!(refault_distance(10, EVICTION_MASK - 9), 20);
    }

    #[test]
    fn bucket_order_is_zero_below_2_pow_36_pages() {
        assert_eq!(bucket_order(1 << 18), 0); // 1 GiB
        assert_eq!(bucket_order(1 << 36), 0); // fls(2^36 - 1) = 36
        assert_eq!(bucket_order((1 << 36) + 1), 1);
    }

    /// B.3: file refault competes with active file + all anon (with swap);
    /// anon refault with all file + active anon.
    #[test]
    fn workingset_size_composition() {
        let l = WorkingsetLists { inactive_anon: 1, active_anon: 10, inactive_file: 100, active_file: 1000 };
        assert_eq!(workingset_size(true, &l, true), 1000 + 10 + 1);
        assert_eq!(workingset_size(true, &l, false), 1000);
        assert_eq!(workingset_size(false, &l, true), 1000 + 100 + 10);
        assert_eq!(workingset_size(false, &l, false), 1100);
    }
}
