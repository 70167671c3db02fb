//! LIRS (libCacheSim `LIRS.c`; Jiang & Zhang, SIGMETRICS 2002), reproduced operation by
//! operation so that miss ratios agree exactly.
//!
//! libCacheSim builds LIRS from three LRU lists: S (the LIRS stack: LIR blocks, resident
//! and non-resident HIR blocks), Q (resident HIR blocks) and NH (non-resident HIR blocks
//! still in S, oldest first, used to bound S). Sizes: HIR limit = max(1, trunc(0.01·c)),
//! LIR limit = c − HIR limit. S is bounded to 2c entries by dropping the oldest
//! non-resident HIR entries (after every request). A key may be in S, Q and NH at once;
//! each list here is its own intrusive list over the key space, its links kept with the
//! others and the key's flags in one record per key (`Rec`).
//!
//! Compared with the paper: the 1% HIR share and the warm-up (every block is LIR until
//! the LIR set is full) are the paper's; bounding S to 2c by dropping the oldest
//! non-resident HIR entries is libCacheSim's choice (the paper leaves the bound open).
//! See docs/cachesim.md.
use crate::list::{self, List, Node, NIL};
use crate::Cache;

/// The lists' numbers in a [`Rec`].
const S: usize = 0;
const Q: usize = 1;
const NH: usize = 2;

/// All LIRS keeps per key: its links on S, Q and NH and its flags, in one record (25
/// bytes, aligned to 32 so that a record never straddles two cache lines): a request
/// reads one line for its key where separate arrays cost four.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Rec {
    pn: [[u32; 2]; 3],
    st: u8,
}

const EMPTY: Rec = Rec { pn: [[NIL, NIL]; 3], st: 0 };

impl Node for Rec {
    #[inline(always)]
    fn pn(&self, l: usize) -> [u32; 2] {
        self.pn[l]
    }
    #[inline(always)]
    fn pn_mut(&mut self, l: usize) -> &mut [u32; 2] {
        &mut self.pn[l]
    }
}

const S_IN: u8 = 1;
const S_LIR: u8 = 2;
const S_RES: u8 = 4;
const Q_IN: u8 = 8;
const NH_IN: u8 = 16;

pub struct Lirs {
    cap: usize,
    lirs_limit: usize,
    hirs_limit: usize,
    lirs_count: usize,
    hirs_count: usize,
    occupied: usize,
    /// Per key: links and flags.
    r: Vec<Rec>,
    s: List,
    q: List,
    nh: List,
    /// On demand: the size the LIR limit follows.
    run: crate::evict::RunSize,
}

impl Lirs {
    pub fn new(cap: usize, nr_keys: usize) -> Self {
        let hirs_limit = ((0.01 * cap as f64) as usize).max(1);
        let lirs_limit = cap.saturating_sub(hirs_limit);
        Lirs {
            cap,
            lirs_limit,
            hirs_limit,
            lirs_count: 0,
            hirs_count: 0,
            occupied: 0,
            r: list::per_key(nr_keys, EMPTY),
            s: List::default(),
            q: List::default(),
            nh: List::default(),
            run: Default::default(),
        }
    }

    #[inline]
    fn nh_remove(&mut self, k: u32) {
        if self.r[k as usize].st & NH_IN != 0 {
            list::unlink(&mut self.r, NH, &mut self.nh, k);
            self.r[k as usize].st &= !NH_IN;
        }
    }

    #[inline]
    fn s_remove(&mut self, k: u32) {
        list::unlink(&mut self.r, S, &mut self.s, k);
        self.r[k as usize].st &= !(S_IN | S_LIR | S_RES);
    }

    /// Drop HIR entries from the bottom of S until an LIR block is at the bottom
    /// (stops at a single entry, as libCacheSim's loop does).
    #[inline(always)]
    fn prune(&mut self) {
        let t = self.s.tail;
        if t == self.s.head || self.r[t as usize].st & S_LIR != 0 {
            return;
        }
        self.prune_slow();
    }

    #[inline(never)]
    fn prune_slow(&mut self) {
        loop {
            let t = self.s.tail;
            if t == self.s.head {
                break;
            }
            let f = self.r[t as usize].st;
            if f & S_LIR != 0 {
                break;
            }
            if f & S_RES == 0 {
                self.nh_remove(t);
            }
            self.s_remove(t);
        }
    }

    /// Evict the resident HIR block at the bottom of Q.
    fn evict_hir(&mut self) {
        let v = list::pop_tail(&mut self.r, Q, &mut self.q);
        self.r[v as usize].st &= !Q_IN;
        self.hirs_count -= 1;
        if self.r[v as usize].st & S_IN != 0 {
            self.r[v as usize].st &= !S_RES;
            list::push_head(&mut self.r, NH, &mut self.nh, v);
            self.r[v as usize].st |= NH_IN;
        }
        self.occupied -= 1;
    }

    /// Demote the LIR block at the bottom of S to a resident HIR block in Q; prune.
    fn evict_lir(&mut self) {
        let v = self.s.tail;
        self.lirs_count -= 1;
        self.s_remove(v);
        self.occupied -= 1;
        if 1 <= self.hirs_limit {
            while self.hirs_count + 1 > self.hirs_limit {
                self.evict_hir();
            }
            list::push_head(&mut self.r, Q, &mut self.q, v);
            self.r[v as usize].st |= Q_IN;
            self.hirs_count += 1;
            self.occupied += 1;
        }
        self.prune();
    }

    #[inline(always)]
    fn limit_stack(&mut self) {
        if self.s.len > 2 * self.cap {
            self.limit_stack_slow();
        }
    }

    #[inline(never)]
    fn limit_stack_slow(&mut self) {
        while self.s.len > 2 * self.cap {
            let t = self.nh.tail;
            if t == NIL {
                break;
            }
            self.s_remove(t);
            list::pop_tail(&mut self.r, NH, &mut self.nh);
            self.r[t as usize].st &= !NH_IN;
        }
    }

    /// The lookup with promotion; true on a hit.
    #[inline(always)]
    fn find(&mut self, k: u32) -> bool {
        let f = self.r[k as usize].st;
        if f & S_IN != 0 {
            list::move_to_head(&mut self.r, S, &mut self.s, k);
        }
        if f & Q_IN != 0 {
            list::move_to_head(&mut self.r, Q, &mut self.q, k);
        }
        if f & S_IN != 0 {
            if f & S_LIR != 0 {
                self.prune();
                true
            } else if f & S_RES != 0 {
                // hit_RD_HIRinS
                if f & Q_IN != 0 {
                    self.hirs_count -= 1;
                    list::unlink(&mut self.r, Q, &mut self.q, k);
                    self.r[k as usize].st &= !Q_IN;
                    self.occupied -= 1;
                }
                while self.lirs_count + 1 > self.lirs_limit {
                    self.evict_lir();
                }
                self.r[k as usize].st |= S_LIR;
                self.lirs_count += 1;
                self.occupied += 1;
                true
            } else {
                false
            }
        } else if f & Q_IN != 0 {
            // hit_RD_HIRinQ
            while self.lirs_count + 1 > self.lirs_limit {
                self.evict_lir();
            }
            list::push_head(&mut self.r, S, &mut self.s, k);
            self.r[k as usize].st = (self.r[k as usize].st & !S_LIR) | S_IN | S_RES;
            true
        } else {
            false
        }
    }

    #[inline(never)]
    fn miss(&mut self, k: u32) {
        if self.cap < 1 {
            return;
        }
        // can_insert
        let f = self.r[k as usize].st;
        let nr_hir_in_s = f & S_IN != 0 && f & S_LIR == 0 && f & S_RES == 0;
        if nr_hir_in_s {
            while self.lirs_count + 1 > self.lirs_limit {
                self.evict_lir();
            }
            self.nh_remove(k);
        } else if f & (S_IN | Q_IN) == 0 {
            if 1 > self.lirs_limit || 1 > self.hirs_limit {
                return;
            }
            if self.lirs_count + 1 > self.lirs_limit && self.hirs_count + 1 > self.hirs_limit {
                while self.hirs_count + 1 > self.hirs_limit {
                    self.evict_hir();
                }
            }
        } else {
            unreachable!("LIRS: miss on a key in Q");
        }
        // evict while full
        while self.occupied + 1 > self.cap {
            let f = self.r[k as usize].st;
            let mut progressed = false;
            if f & S_IN != 0 && f & S_LIR == 0 && f & S_RES == 0 {
                while self.hirs_count >= self.hirs_limit {
                    self.evict_hir();
                }
                self.evict_lir();
                progressed = true;
            }
            let f = self.r[k as usize].st;
            if f & (S_IN | Q_IN) == 0 && self.lirs_count + 1 > self.lirs_limit && self.hirs_count + 1 > self.hirs_limit {
                self.evict_hir();
                progressed = true;
            }
            if !progressed {
                // libCacheSim would spin here; never seen with object size 1.
                unreachable!("LIRS: eviction made no progress");
            }
        }
        // insert
        let f = self.r[k as usize].st;
        if f & S_IN != 0 && f & S_LIR == 0 && f & S_RES == 0 {
            self.r[k as usize].st |= S_LIR | S_RES;
            self.lirs_count += 1;
            self.occupied += 1;
        } else if f & (S_IN | Q_IN) == 0 {
            if self.lirs_count < self.lirs_limit {
                list::push_head(&mut self.r, S, &mut self.s, k);
                self.r[k as usize].st |= S_IN | S_LIR | S_RES;
                self.lirs_count += 1;
            } else {
                list::push_head(&mut self.r, S, &mut self.s, k);
                list::push_head(&mut self.r, Q, &mut self.q, k);
                self.r[k as usize].st = (self.r[k as usize].st & !S_LIR) | S_IN | S_RES | Q_IN;
                self.hirs_count += 1;
            }
            self.occupied += 1;
        }
    }
}

impl Cache for Lirs {
    fn name(&self) -> &'static str {
        "lirs"
    }
    #[inline(always)]
    fn access(&mut self, k: u32) -> bool {
        let hit = self.find(k);
        if !hit {
            self.miss(k);
        }
        self.limit_stack();
        hit
    }
    fn len(&self) -> usize {
        self.occupied
    }
    fn capacity(&self) -> usize {
        self.cap
    }
    #[inline(always)]
    fn prefetch(&self, k: u32) {
        list::prefetch(&self.r, k as usize);
    }
    #[inline(always)]
    fn prefetch_neighbours(&self, k: u32) {
        list::prefetch_neighbours(&self.r, S, k);
    }
}

/// On demand (docs/model.md §1.14): the cache is as large as the owner lets it be. The
/// HIR limit is lifted, so nothing in `access` evicts (a demoted LIR block just joins Q).
/// At the first eviction of a run the LIR limit becomes max(1, c − max(1, trunc(0.01·c)))
/// for c = the blocks left when the previous run ended ([`crate::evict::RunSize`]: the
/// blocks faulted in since are the resident HIR blocks the run will evict). Each
/// eviction demotes the LIR blocks over the limit from the bottom of S to Q, then takes
/// Q's bottom (the oldest resident HIR block) — or, referenced since, looks it up as a
/// hit (in S: it becomes LIR; only in Q: it rejoins S and Q's top) and tries the next. A
/// run that empties Q demotes and evicts the bottom LIR block and lowers the limit to
/// the LIR blocks left.
impl Lirs {
    pub fn on_demand(cap: usize, nr_keys: usize) -> Self {
        let mut l = Lirs::new(cap, nr_keys);
        l.hirs_limit = usize::MAX / 2;
        l
    }
}

impl crate::evict::Evict for Lirs {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if self.occupied == 0 {
            return None;
        }
        let (start, c) = self.run.at_evict(self.occupied);
        if self.occupied == start {
            self.lirs_limit = c.saturating_sub(((0.01 * c as f64) as usize).max(1)).max(2);
        }
        while self.lirs_count > self.lirs_limit {
            self.evict_lir();
        }
        loop {
            if self.q.len == 0 {
                if self.lirs_count == 1 {
                    return Some(self.evict_last());
                }
                // The run outgrew Q: demote the bottom LIR block, and keep the LIR set
                // at what is left, so that newcomers are HIR blocks.
                self.evict_lir();
                self.lirs_limit = self.lirs_count.max(2);
                continue;
            }
            let v = self.q.tail;
            if referenced(v) {
                self.find(v);
                self.limit_stack();
                continue;
            }
            self.evict_hir();
            return Some(v);
        }
    }
    fn grow(&mut self, n: usize) {
        if n > self.r.len() {
            self.r.resize(n, EMPTY);
        }
    }
}

impl Lirs {
    /// On demand: evict the one resident block (the only LIR block, Q empty) and empty
    /// S — the stack of an empty cache. (An LIR limit of at least 2 keeps one LIR block
    /// while any other is resident, so S's bottom stays an LIR block; libCacheSim's prune
    /// stops at a lone non-LIR entry, which `evict_lir` would take for one.)
    fn evict_last(&mut self) -> u32 {
        let mut victim = NIL;
        while self.s.tail != NIL {
            let t = self.s.tail;
            if self.r[t as usize].st & S_LIR != 0 {
                victim = t;
            }
            self.nh_remove(t);
            self.s_remove(t);
        }
        debug_assert_ne!(victim, NIL, "LIRS: no LIR block with lirs_count 1");
        self.lirs_count = 0;
        self.occupied = 0;
        victim
    }
}
