//! Intrusive doubly linked lists over dense keys: each key's `[prev, next]` links live in
//! a per-key record, shared by several list heads. `NIL` ends a list.
//! Head = most recently inserted, tail = oldest.
//!
//! [`Links`] holds one pair per key (a key is on at most one of its lists at a time).
//! An algorithm whose key can be on several lists at once (LIRS: S, Q and NH) keeps all
//! its pairs and its flags in one record of its own ([`Node`]), so that a request reads
//! one cache line for the key instead of one per list and one for the flags; the list
//! operations below work on either, for the pair numbered `list`.

pub const NIL: u32 = u32::MAX;

pub use reclaimlab_trace::prefetch::prefetch;

/// `vec![fill; n]` for per-key state read at random, under transparent huge pages where
/// the host has them (`MADV_HUGEPAGE` before the first touch; a hint, results unchanged).
/// With 4 KiB pages a million keys' 32-byte LIRS records span 8 K pages, far past the
/// TLB, and nearly every request's lines each cost a page walk (on a VM, a two-level
/// one); with 2 MiB pages they span 16. (Measured: LIRS zipf 6–16% faster; LRU's and
/// ARC's 8 MiB of links no faster, so they keep ordinary pages.)
pub fn per_key<T: Clone>(n: usize, fill: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    reclaimlab_trace::mem::huge_pages(&mut v);
    v.resize(n, fill);
    v
}

/// A per-key record holding the `[prev, next]` links of one or more lists, numbered from
/// 0 (a constant at every call site, so the choice costs nothing).
pub trait Node {
    fn pn(&self, list: usize) -> [u32; 2];
    fn pn_mut(&mut self, list: usize) -> &mut [u32; 2];
}

impl Node for [u32; 2] {
    #[inline(always)]
    fn pn(&self, _list: usize) -> [u32; 2] {
        *self
    }
    #[inline(always)]
    fn pn_mut(&mut self, _list: usize) -> &mut [u32; 2] {
        self
    }
}

/// Put `k` at the head of `l` (pair `list` of the records `nodes`).
#[inline(always)]
pub fn push_head<N: Node>(nodes: &mut [N], list: usize, l: &mut List, k: u32) {
    *nodes[k as usize].pn_mut(list) = [NIL, l.head];
    if l.head != NIL {
        nodes[l.head as usize].pn_mut(list)[0] = k;
    } else {
        l.tail = k;
    }
    l.head = k;
    l.len += 1;
}

/// Take `k` off `l` (its own links are left as they were).
#[inline(always)]
pub fn unlink<N: Node>(nodes: &mut [N], list: usize, l: &mut List, k: u32) {
    let [p, n] = nodes[k as usize].pn(list);
    if p != NIL {
        nodes[p as usize].pn_mut(list)[1] = n;
    } else {
        l.head = n;
    }
    if n != NIL {
        nodes[n as usize].pn_mut(list)[0] = p;
    } else {
        l.tail = p;
    }
    l.len -= 1;
}

#[inline(always)]
pub fn move_to_head<N: Node>(nodes: &mut [N], list: usize, l: &mut List, k: u32) {
    if l.head != k {
        unlink(nodes, list, l, k);
        push_head(nodes, list, l, k);
    }
}

/// Remove and return the tail of `l` (NIL if empty).
#[inline(always)]
pub fn pop_tail<N: Node>(nodes: &mut [N], list: usize, l: &mut List) -> u32 {
    let t = l.tail;
    if t != NIL {
        unlink(nodes, list, l, t);
    }
    t
}

/// Prefetch the records of `k`'s neighbours on list `list` (what unlinking `k` writes).
#[inline(always)]
pub fn prefetch_neighbours<N: Node>(nodes: &[N], list: usize, k: u32) {
    if let Some(r) = nodes.get(k as usize) {
        let [p, n] = r.pn(list);
        prefetch(nodes, p as usize);
        prefetch(nodes, n as usize);
    }
}

pub struct Links {
    /// `[prev, next]` of each key, side by side: one cache line per list operation.
    pn: Vec<[u32; 2]>,
}

#[derive(Clone, Copy, Debug)]
pub struct List {
    pub head: u32,
    pub tail: u32,
    pub len: usize,
}

impl Default for List {
    fn default() -> Self {
        List { head: NIL, tail: NIL, len: 0 }
    }
}

impl Links {
    pub fn new(n: usize) -> Self {
        Links { pn: vec![[NIL, NIL]; n] }
    }

    /// Make room for keys `< n`.
    pub fn grow(&mut self, n: usize) {
        if n > self.pn.len() {
            self.pn.resize(n, [NIL, NIL]);
        }
    }

    /// Prefetch `k`'s links.
    #[inline(always)]
    pub fn prefetch(&self, k: u32) {
        prefetch(&self.pn, k as usize);
    }

    /// Prefetch the links of `k`'s neighbours (what unlinking `k` writes).
    #[inline(always)]
    pub fn prefetch_neighbours(&self, k: u32) {
        prefetch_neighbours(&self.pn, 0, k);
    }

    /// Prefetch the links of the key next to `l`'s tail (towards the head): what taking
    /// the tail off writes. The tail's own links are cached already (written when the
    /// previous tail went), so this is one cached load; without it each eviction writes
    /// to a line still in memory, and the stores behind it wait.
    #[inline(always)]
    pub fn prefetch_tail(&self, l: &List) {
        if let Some(&[p, _]) = self.pn.get(l.tail as usize) {
            prefetch(&self.pn, p as usize);
        }
    }

    /// The neighbour towards the head (NIL at the head).
    #[inline(always)]
    pub fn prev(&self, k: u32) -> u32 {
        self.pn[k as usize][0]
    }

    /// The neighbour towards the tail (NIL at the tail).
    #[inline(always)]
    pub fn next(&self, k: u32) -> u32 {
        self.pn[k as usize][1]
    }

    #[inline(always)]
    pub fn push_head(&mut self, l: &mut List, k: u32) {
        push_head(&mut self.pn, 0, l, k);
    }

    #[inline(always)]
    pub fn unlink(&mut self, l: &mut List, k: u32) {
        unlink(&mut self.pn, 0, l, k);
    }

    #[inline(always)]
    pub fn move_to_head(&mut self, l: &mut List, k: u32) {
        move_to_head(&mut self.pn, 0, l, k);
    }

    /// Remove and return the tail (NIL if empty).
    #[inline(always)]
    pub fn pop_tail(&mut self, l: &mut List) -> u32 {
        pop_tail(&mut self.pn, 0, l)
    }

    /// Whether `k` is on `l`, for an owner with one list that calls [`Links::detach`] on
    /// every key it takes off: a key on no list has `[NIL, NIL]`, and of the keys on `l`
    /// only a lone one (its head) has. Saves a separate membership array, and with it a
    /// cache line per request.
    #[inline(always)]
    pub fn on(&self, l: &List, k: u32) -> bool {
        self.pn[k as usize] != [NIL, NIL] || l.head == k
    }

    /// Reset the links of `k`, just taken off its list (see [`Links::on`]).
    #[inline(always)]
    pub fn detach(&mut self, k: u32) {
        self.pn[k as usize] = [NIL, NIL];
    }
}

/// A fixed-capacity FIFO ring of keys (push back, pop front).
pub struct Ring {
    buf: Vec<u32>,
    head: usize,
    len: usize,
}

impl Ring {
    pub fn new(cap: usize) -> Self {
        Ring { buf: vec![0; cap.max(1).next_power_of_two()], head: 0, len: 0 }
    }
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline(always)]
    pub fn push(&mut self, k: u32) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let m = self.buf.len() - 1;
        self.buf[(self.head + self.len) & m] = k;
        self.len += 1;
    }
    #[inline(always)]
    pub fn pop(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let k = self.buf[self.head];
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        Some(k)
    }
    #[inline(always)]
    pub fn front(&self) -> Option<u32> {
        if self.len == 0 {
            None
        } else {
            Some(self.buf[self.head])
        }
    }
    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.buf);
        let m = old.len() - 1;
        let mut nb = vec![0u32; old.len() * 2];
        for i in 0..self.len {
            nb[i] = old[(self.head + i) & m];
        }
        self.buf = nb;
        self.head = 0;
    }
}

/// A FIFO of ghost keys (no data) with removal from the middle, as libCacheSim's ghost
/// FIFOs (`FIFO_init` caches used only for ids): inserting into a full ghost drops its
/// oldest live key. Removed keys leave stale queue entries, skipped lazily.
pub struct GhostFifo {
    cap: usize,
    q: std::collections::VecDeque<(u32, u32)>,
    live: usize,
    seq: u32,
    /// Sequence number of a key's live entry (0 = not in the ghost).
    gseq: Vec<u32>,
}

impl GhostFifo {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        GhostFifo { cap, q: std::collections::VecDeque::new(), live: 0, seq: 0, gseq: vec![0; nr_keys] }
    }
    #[inline(always)]
    pub fn contains(&self, k: u32) -> bool {
        self.gseq[k as usize] != 0
    }
    /// Make room for keys `< n`.
    pub fn grow(&mut self, n: usize) {
        if n > self.gseq.len() {
            self.gseq.resize(n, 0);
        }
    }
    /// Remove `k` if present; true if it was.
    #[inline(always)]
    pub fn remove(&mut self, k: u32) -> bool {
        if self.gseq[k as usize] != 0 {
            self.gseq[k as usize] = 0;
            self.live -= 1;
            true
        } else {
            false
        }
    }
    /// libCacheSim's `ghost->get(k)`: a no-op if present (or if the ghost has size 0),
    /// else drop the oldest while full and append `k`.
    #[inline]
    pub fn insert(&mut self, k: u32) {
        if self.cap == 0 || self.contains(k) {
            return;
        }
        while self.live + 1 > self.cap {
            let (g, s) = self.q.pop_front().unwrap();
            if self.gseq[g as usize] == s {
                self.gseq[g as usize] = 0;
                self.live -= 1;
            }
        }
        self.seq = self.seq.wrapping_add(1);
        if self.seq == 0 {
            self.seq = 1;
        }
        self.q.push_back((k, self.seq));
        self.gseq[k as usize] = self.seq;
        self.live += 1;
        while let Some(&(g, s)) = self.q.front() {
            if self.gseq[g as usize] == s {
                break;
            }
            self.q.pop_front();
        }
    }
    pub fn len(&self) -> usize {
        self.live
    }
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
}
