//! Intrusive doubly linked lists over dense keys: `prev`/`next` arrays shared by several
//! list heads (a key is on at most one list at a time). `NIL` ends a list.
//! Head = most recently inserted, tail = oldest.

pub const NIL: u32 = u32::MAX;

pub use reclaimlab_trace::prefetch::prefetch;

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
        if let Some(&[p, n]) = self.pn.get(k as usize) {
            prefetch(&self.pn, p as usize);
            prefetch(&self.pn, n as usize);
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
        self.pn[k as usize] = [NIL, l.head];
        if l.head != NIL {
            self.pn[l.head as usize][0] = k;
        } else {
            l.tail = k;
        }
        l.head = k;
        l.len += 1;
    }

    #[inline(always)]
    pub fn unlink(&mut self, l: &mut List, k: u32) {
        let [p, n] = self.pn[k as usize];
        if p != NIL {
            self.pn[p as usize][1] = n;
        } else {
            l.head = n;
        }
        if n != NIL {
            self.pn[n as usize][0] = p;
        } else {
            l.tail = p;
        }
        l.len -= 1;
    }

    #[inline(always)]
    pub fn move_to_head(&mut self, l: &mut List, k: u32) {
        if l.head != k {
            self.unlink(l, k);
            self.push_head(l, k);
        }
    }

    /// Remove and return the tail (NIL if empty).
    #[inline(always)]
    pub fn pop_tail(&mut self, l: &mut List) -> u32 {
        let t = l.tail;
        if t != NIL {
            self.unlink(l, t);
        }
        t
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
