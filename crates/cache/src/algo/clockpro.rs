//! CLOCK-Pro (Jiang, Chen & Zhang, USENIX ATC 2005) as the authors' own simulator
//! `clock-pro.c` (Song Jiang, 2005) runs it with its shipped parameters: a fixed cold
//! allocation of 5% of the memory (at least 2 pages; `ADAPTIVE_COLD_ALLOC` is off) and at
//! most m non-resident cold pages. The `libcachesim` package's `ClockPro` freezes once
//! its cold pages fill the cache (docs/cachesim.md), so this follows the authors' code.
//!
//! One circular list holds hot pages, resident cold pages and non-resident cold pages in
//! their test period. New pages go to the list head; the three hands move from the tail
//! (largest recency) towards the head: `hand_hot` at the hot page with the largest
//! recency, `hand_cold` at the last resident cold page, `hand_test` at the last cold page
//! in its test period.
//! - Hit: set the reference bit. A request for the page just requested is skipped (no
//!   bit set), as the simulator drops consecutive duplicate references.
//! - Warm-up: the first m − cold pages become hot, the next `cold` resident cold pages in
//!   their test period.
//! - Miss on a page not in the list: HAND_cold frees a frame; the page enters at the head
//!   as a resident cold page starting its test period.
//! - Miss on a non-resident page in its test period: HAND_cold frees a frame; if the page
//!   is still in the list, HAND_hot runs (demoting one hot page); unless HAND_hot swept
//!   the page out of its test period first, it becomes hot at the head.
//! - HAND_cold on an unreferenced cold page, or one out of its test period: evict it (it
//!   stays as non-resident while in its test period); referenced in its test period: run
//!   HAND_hot and promote it to hot at the head. (The paper's text keeps a referenced
//!   cold page out of its test period resident; the authors' code evicts it.)
//! - HAND_hot: a referenced hot page has its bit cleared, an unreferenced one becomes
//!   cold; either moves to the head. Cold pages it passes are left; stepping over
//!   HAND_test pushes HAND_test one step. HAND_test ends test periods (removing
//!   non-resident pages) and runs whenever more than m pages are non-resident.
//!
//! The simulator refuses memories under 5 pages; so does this (nothing is cached).
//!
//! Variants (const parameters of [`ClockProOf`]): [`ClockProPaper`] (`clockpro-paper`),
//! the paper's adaptive cold allocation as the simulator implements it under
//! `ADAPTIVE_COLD_ALLOC` (`adapt_cold`); [`ClockProOnDemand`], evicting
//! when an owner asks (`cache:clockpro`, the `Evict` impl at the end).
use crate::list::NIL;
use crate::Cache;

const RES: u8 = 1;
const HOT: u8 = 2;
const IN_CLOCK: u8 = 4;
const IN_TEST: u8 = 8;
const REF: u8 = 16;

/// HAND_hot's outcome when it met the cold page that triggered it.
#[derive(PartialEq, Eq)]
enum Met {
    No,
    Yes,
    YesAfterDemotion,
}

/// `ON_DEMAND`: for an owner that evicts ([`crate::evict::Evict`]); `false`: the
/// authors' simulator. `ADAPTIVE`: the paper's adaptive cold allocation (`clockpro-paper`).
pub struct ClockProOf<const ON_DEMAND: bool, const ADAPTIVE: bool = false> {
    cap: usize,
    /// The cold allocation (adaptive: its lower bound); warm-up leaves this many cold.
    cold_alloc: usize,
    /// Adaptive: the cold allocation's upper bound.
    cold_max: usize,
    /// Adaptive: the simulator's `ColdIncreaseCredits` (> 0: grow the cold allocation,
    /// < 0: shrink it).
    credits: i64,
    free: usize,
    nonres: usize,
    /// Bound on non-resident cold pages (m).
    nonres_max: usize,
    /// Hot pages now.
    hot: usize,
    /// The owner has evicted (on demand: the warm-up is over).
    evicted: bool,
    /// On demand: the size m follows.
    run: crate::evict::RunSize,
    /// `[prev, next]`: `next` goes towards the tail (larger recency), hands move by `prev`.
    pn: Vec<[u32; 2]>,
    fl: Vec<u8>,
    head: u32,
    hand_hot: u32,
    hand_cold: u32,
    hand_test: u32,
    last: u32,
}

/// The authors' simulator (`clockpro`).
pub type ClockPro = ClockProOf<false>;
/// The paper's adaptive cold allocation (`clockpro-paper`).
pub type ClockProPaper = ClockProOf<false, true>;
/// CLOCK-Pro for an owner that evicts (`cache:clockpro`).
pub type ClockProOnDemand = ClockProOf<true>;

/// The cold allocation of an m-page memory: 5%, at least 2 pages.
fn cold_alloc(m: usize) -> usize {
    ((0.05 * m as f64) as usize).max(2)
}

impl<const ON_DEMAND: bool, const ADAPTIVE: bool> ClockProOf<ON_DEMAND, ADAPTIVE> {
    /// The smallest memory the authors' simulator accepts.
    pub const MIN_SIZE: usize = 5;

    pub fn new(cap: usize, nr_keys: usize) -> Self {
        // Adaptive: the band [1%, 99%] of m, at least 2 (Caffeine's simulator defaults for
        // CLOCK-Pro; the authors' shipped band, 5% to 5%, leaves nothing to adapt).
        let band = |r: f64| ((r * cap as f64) as usize).max(2);
        ClockProOf {
            cap,
            cold_alloc: if ADAPTIVE { band(0.01) } else { cold_alloc(cap) },
            cold_max: if ADAPTIVE { band(0.99) } else { cold_alloc(cap) },
            credits: 0,
            free: cap,
            nonres: 0,
            nonres_max: cap,
            hot: 0,
            evicted: false,
            run: Default::default(),
            pn: vec![[NIL, NIL]; nr_keys],
            fl: vec![0; nr_keys],
            head: NIL,
            hand_hot: NIL,
            hand_cold: NIL,
            hand_test: NIL,
            last: NIL,
        }
    }

    #[inline(always)]
    fn prev(&self, k: u32) -> u32 {
        self.pn[k as usize][0]
    }
    #[inline(always)]
    fn next(&self, k: u32) -> u32 {
        self.pn[k as usize][1]
    }
    #[inline(always)]
    fn has(&self, k: u32, f: u8) -> bool {
        self.fl[k as usize] & f != 0
    }
    #[inline(always)]
    fn set(&mut self, k: u32, f: u8) {
        self.fl[k as usize] |= f;
    }
    #[inline(always)]
    fn clear(&mut self, k: u32, f: u8) {
        self.fl[k as usize] &= !f;
    }

    fn insert_head(&mut self, k: u32) {
        if self.head == NIL {
            self.pn[k as usize] = [k, k];
        } else {
            let h = self.head;
            let t = self.prev(h);
            self.pn[k as usize] = [t, h];
            self.pn[t as usize][1] = k;
            self.pn[h as usize][0] = k;
        }
        self.head = k;
        self.set(k, IN_CLOCK);
    }

    /// Unlink `k`; it loses its test period and reference bit (and, if `forget`, its
    /// residency: it becomes an out-of-clock cold page).
    fn remove(&mut self, k: u32, forget: bool) {
        let [p, n] = self.pn[k as usize];
        self.pn[p as usize][1] = n;
        self.pn[n as usize][0] = p;
        if self.head == k {
            self.head = if n == k { NIL } else { n };
        }
        if forget {
            // A page leaving the clock for good may be under another hand than the one
            // removing it. With a full cache that never happens; on demand the owner can
            // shrink the clock to a few pages, so step such a hand back as the remover
            // does (`prev`), or park it when the clock is empty.
            let back = if p == k { NIL } else { p };
            for hand in [&mut self.hand_hot, &mut self.hand_cold, &mut self.hand_test] {
                if *hand == k {
                    *hand = back;
                }
            }
        }
        self.pn[k as usize] = [NIL, NIL];
        self.clear(k, IN_CLOCK | IN_TEST | REF);
        if forget {
            self.clear(k, RES | HOT);
        }
    }

    /// Move HAND_test one step (ending the test period of a cold page under it) if
    /// `step`, then, while too many pages are non-resident, remove the next one.
    fn run_hand_test(&mut self, step: bool) {
        if step {
            let t = self.hand_test;
            if !self.has(t, HOT) {
                if ADAPTIVE && !self.has(t, RES) {
                    self.credits -= 1;
                }
                self.clear(t, IN_TEST | REF);
                self.hand_test = self.prev(t);
                if !self.has(t, RES) {
                    self.remove(t, true);
                    self.nonres -= 1;
                }
            } else {
                self.hand_test = self.prev(t);
            }
        }
        if self.nonres > self.nonres_max {
            while self.has(self.hand_test, RES) {
                let t = self.hand_test;
                if !self.has(t, HOT) {
                    self.clear(t, IN_TEST | REF);
                }
                self.hand_test = self.prev(t);
            }
            let t = self.hand_test;
            if ADAPTIVE {
                self.credits -= 1;
            }
            self.hand_test = self.prev(t);
            self.remove(t, true);
            self.nonres -= 1;
        }
    }

    /// Sweep HAND_hot until it has demoted one hot page (and stands on a hot page), or
    /// met `cold` (the page that triggered it). `referenced(k)`: a reference to hot page
    /// `k` the owner saw since (on demand; `|_| false` otherwise).
    fn run_hand_hot(&mut self, cold: u32, referenced: &mut impl FnMut(u32) -> bool) -> Met {
        let (mut done, mut met, mut demoted) = (false, false, false);
        // `hot > 0`: on demand reclaim can leave no hot page at all (a full cache always
        // has some); then HAND_hot stops where it met `cold`.
        while !done || (self.hot > 0 && !self.has(self.hand_hot, HOT)) {
            let h = self.hand_hot;
            if self.has(h, HOT) {
                if self.has(h, REF) || referenced(h) {
                    self.clear(h, REF);
                } else {
                    self.clear(h, HOT);
                    self.hot -= 1;
                    done = true;
                    demoted = true;
                }
                if self.hand_test == h {
                    self.hand_test = self.prev(h);
                }
                self.hand_hot = self.prev(h);
                self.remove(h, false);
                self.insert_head(h);
            } else {
                if h == cold {
                    done = true;
                    met = true;
                }
                self.hand_hot = self.prev(h);
            }
            if self.next(self.hand_hot) == self.hand_test {
                self.run_hand_test(true);
            }
        }
        match (met, demoted) {
            (false, _) => Met::No,
            (true, false) => Met::Yes,
            (true, true) => Met::YesAfterDemotion,
        }
    }

    /// Free one frame: HAND_cold evicts the first resident cold page that is
    /// unreferenced or out of its test period, promoting referenced ones on the way;
    /// returns it. `referenced(k)`: as for [`Self::run_hand_hot`], asked of resident
    /// cold pages in their test period only (the only ones whose bit counts).
    fn run_hand_cold(&mut self, referenced: &mut impl FnMut(u32) -> bool) -> u32 {
        loop {
            let c = self.hand_cold;
            debug_assert!(self.has(c, RES) && !self.has(c, HOT), "HAND_cold on {c}: flags {:#x}", self.fl[c as usize]);
            if !self.has(c, IN_TEST) || !(self.has(c, REF) || (self.has(c, RES) && referenced(c))) {
                self.clear(c, RES);
                self.free += 1;
                self.hand_cold = self.prev(c);
                if self.has(c, IN_TEST) {
                    self.nonres += 1;
                } else {
                    self.remove(c, true);
                }
                self.seek_cold();
                self.run_hand_test(false);
                return c;
            }
            if ADAPTIVE && self.adapt_cold(c, referenced) {
                continue;
            }
            let met = self.run_hand_hot(c, referenced);
            if met != Met::Yes {
                self.hand_cold = self.prev(c);
                self.remove(c, false);
                self.insert_head(c);
                self.set(c, HOT);
                self.hot += 1;
            }
            self.seek_cold();
        }
    }

    /// Adaptive: HAND_cold met `c`, referenced in its test period, with credits to
    /// spend (`check_adaptive_bound` first zeroes them at the band's edge). Credits < 0:
    /// promote `c` without running HAND_hot (the cold allocation shrinks by one).
    /// Credits > 0: HAND_hot demotes a hot page and `c` stays cold, moved to the head
    /// with a new test period (the allocation grows by one; "to compensate the accessed
    /// page" the simulator then sets the reference bit of HAND_cold's new page, not of
    /// `c` — kept, as the counts are the simulator's); if HAND_hot met `c` first, `c`
    /// loses its bit and is evicted next. Returns false with no credits (the fixed
    /// allocation's step: one promotion, one demotion).
    fn adapt_cold(&mut self, c: u32, referenced: &mut impl FnMut(u32) -> bool) -> bool {
        let cold = self.cap as i64 - self.hot as i64;
        if (self.credits > 0 && cold >= self.cold_max as i64) || (self.credits < 0 && cold <= self.cold_alloc as i64) {
            self.credits = 0;
        }
        if self.credits < 0 {
            self.hand_cold = self.prev(c);
            self.remove(c, false);
            self.set(c, HOT);
            self.hot += 1;
            self.insert_head(c);
            self.credits += 1;
        } else if self.credits > 0 {
            match self.run_hand_hot(c, referenced) {
                Met::No => {
                    let n = self.prev(c);
                    self.hand_cold = n;
                    self.remove(c, false);
                    self.set(n, REF);
                    self.insert_head(c);
                    self.set(c, IN_TEST);
                    self.credits -= 1;
                }
                met => {
                    self.clear(c, REF);
                    if met == Met::YesAfterDemotion {
                        self.credits -= 1;
                    }
                    return true;
                }
            }
        } else {
            return false;
        }
        self.seek_cold();
        true
    }

    /// Move HAND_cold to a cold page (on demand: a resident cold page, or NIL once it
    /// has gone round without finding one).
    #[inline]
    fn seek_cold(&mut self) {
        let start = self.hand_cold;
        while self.has(self.hand_cold, HOT) || (ON_DEMAND && !self.has(self.hand_cold, RES)) {
            self.hand_cold = self.prev(self.hand_cold);
            if ON_DEMAND && self.hand_cold == start {
                self.hand_cold = NIL;
                return;
            }
        }
    }

    /// Admit the faulted page `k` as a resident cold page in its test period.
    fn admit_cold(&mut self, k: u32) {
        if self.free == 0 {
            self.run_hand_cold(&mut |_| false);
        }
        self.set(k, RES);
        self.free -= 1;
        self.insert_head(k);
        self.set(k, IN_TEST);
    }

    #[inline(never)]
    fn miss(&mut self, k: u32) {
        if self.cap < Self::MIN_SIZE {
            return;
        }
        if self.free > self.cold_alloc && !(ON_DEMAND && self.evicted) {
            // Warm-up: a hot page.
            self.free -= 1;
            self.hot += 1;
            self.set(k, RES | HOT);
            if self.hand_hot == NIL {
                self.hand_hot = k;
                self.hand_test = k;
            }
            self.insert_head(k);
        } else if self.free > 0 && !self.has(k, IN_CLOCK) {
            // Warm-up (on demand: any page not in the clock): a resident cold page in
            // its test period.
            self.free -= 1;
            self.set(k, RES | IN_TEST);
            if self.hand_cold == NIL {
                self.hand_cold = k;
            }
            self.insert_head(k);
        } else if !self.has(k, IN_CLOCK) {
            self.admit_cold(k);
        } else {
            // A non-resident cold page in its test period: a short reuse distance.
            // (On demand the owner freed the frame already.)
            if !ON_DEMAND {
                self.run_hand_cold(&mut |_| false);
            }
            if !self.has(k, IN_CLOCK) {
                self.admit_cold(k);
            } else {
                match self.run_hand_hot(k, &mut |_| false) {
                    Met::Yes => self.admit_cold(k),
                    // HAND_test ended `k`'s test period and removed it while HAND_hot ran
                    // (on demand, with a small clock; never with a full cache): a newcomer.
                    Met::No if !self.has(k, IN_CLOCK) => self.admit_cold(k),
                    met => {
                        if met == Met::No {
                            if self.hand_test == k {
                                self.hand_test = self.prev(k);
                            }
                            self.remove(k, false);
                            self.nonres -= 1;
                        }
                        self.set(k, RES | HOT);
                        self.hot += 1;
                        if ADAPTIVE {
                            self.credits += 1;
                        }
                        self.free -= 1;
                        self.insert_head(k);
                    }
                }
            }
        }
        self.clear(k, REF);
    }
}

impl<const ON_DEMAND: bool, const ADAPTIVE: bool> Cache for ClockProOf<ON_DEMAND, ADAPTIVE> {
    fn name(&self) -> &'static str {
        if ADAPTIVE {
            "clockpro-paper"
        } else {
            "clockpro"
        }
    }
    #[inline]
    fn access(&mut self, k: u32) -> bool {
        if k == self.last && self.has(k, RES) {
            return true;
        }
        self.last = k;
        if self.has(k, RES) {
            self.set(k, REF);
            return true;
        }
        self.miss(k);
        false
    }
    fn len(&self) -> usize {
        if self.cap < Self::MIN_SIZE {
            0
        } else {
            self.cap - self.free
        }
    }
    fn capacity(&self) -> usize {
        self.cap
    }
}

/// On demand (docs/model.md §1.14): the memory m is the number of pages resident when
/// the owner began the current run of evictions ([`crate::evict::RunSize`]). Built with a capacity no resident set reaches, so a miss
/// never runs HAND_cold: until the first eviction new pages are hot (the warm-up), after
/// it they enter as resident cold pages in their test period, and a non-resident page in
/// its test period is promoted as usual (HAND_hot demoting one hot page). Each eviction
/// sets m, bounds non-resident pages to m, lets HAND_hot demote hot pages until at most
/// m − max(2, trunc(0.05·m)) are hot, then runs HAND_cold, whose victim is returned.
/// Memories under 5 pages are not evicted from (the simulator refuses them).
impl crate::evict::Evict for ClockProOf<true> {
    fn evict(&mut self, referenced: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if self.len() < Self::MIN_SIZE {
            return None;
        }
        let m = self.run.at_evict(self.len()).0;
        let mut referenced = |k: u32| referenced(k);
        self.evicted = true;
        self.nonres_max = m;
        // Demote to the cold allocation, and at least until a resident page is cold.
        while self.hot > m - cold_alloc(m) || self.hot >= self.len() {
            self.run_hand_hot(NIL, &mut referenced);
            if self.hand_cold == NIL {
                // No resident cold page was left (or the warm-up made none): start at
                // the first page demoted, at the head now.
                self.hand_cold = self.head;
            }
        }
        if self.hand_cold == NIL {
            // Cold pages demoted by promotions since: the latest is at the head.
            self.hand_cold = self.head;
        }
        self.seek_cold();
        Some(self.run_hand_cold(&mut referenced))
    }
    fn grow(&mut self, n: usize) {
        if n > self.fl.len() {
            self.pn.resize(n, [NIL, NIL]);
            self.fl.resize(n, 0);
        }
    }
}
