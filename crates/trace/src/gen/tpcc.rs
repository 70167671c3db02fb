//! A page-access mimic of py-tpcc's STOCK_LEVEL transaction against replicated MongoDB
//! (WiredTiger) servers — the workload of seed 001 (Kairui Song's refault-distance RFC).
//!
//! py-tpcc's `doStockLevel` (github apavlo/py-tpcc, MongoDB driver):
//! 1. read DISTRICT(w, d).D_NEXT_O_ID = o;
//! 2. fetch the ORDER_LINE rows of the district's last 20 orders (o−20 ≤ OL_O_ID < o,
//!    ~10 lines each ≈ 200 rows);
//! 3. count the STOCK rows (S_W_ID = w, S_I_ID among those items) below a threshold.
//!
//! with w uniform in the warehouses and d uniform in the 10 districts. The page-level
//! model, per transaction:
//! - one **replica** (memory cgroup `replicaN`) is chosen uniformly: the three mongod
//!   members serve the clients' reads alike;
//! - the **district** document: one access to the replica's WiredTiger cache (anonymous
//!   memory, always cached: district documents are tiny and hot);
//! - the **recent-orders tail**: the order lines of the district's last 20 orders live in
//!   `order_line_tail_pages` pages of the ORDER_LINE file, the same pages every time the
//!   district is picked (STOCK_LEVEL-only runs create no orders) — a small hot set;
//! - **200 STOCK point lookups** (`orders_per_txn × lines_per_order`) in warehouse `w`'s key
//!   range of the STOCK file, item ids drawn with TPC-C's NURand(8191, 1, 100000) as
//!   NEW_ORDER writes them onto order lines (one draw per lookup, standing in for orders
//!   that keep changing; a near-uniform spread with NURand's skew).
//!
//! Each leaf-page read (order-line tail page or STOCK page) goes through a model of the
//! replica's **WiredTiger cache**: `wt_cache_pages` of anonymous memory holding a hot part
//! (b-tree internal pages and district documents) and leaf slots managed with CLOCK (as
//! WiredTiger evicts by read generation). A lookup is always **two accesses**, so every
//! transaction has exactly [`TpccParams::accesses_per_txn`] accesses:
//! - WT cache hit: the b-tree internal page above the leaf (anon read), then the cached
//!   leaf slot (anon; a write with probability `wt_write_ratio`, WiredTiger updating page
//!   state);
//! - WT cache miss: the leaf's page of the data file read with pread() through the page
//!   cache (file-read), then its decompression into the CLOCK victim slot (anon write).
//!
//! Everything is drawn from one xoshiro256** stream seeded by the seed, so the same
//! parameters and seed give the same records.

use super::chunk::Chunk;
use crate::rng::Rng;
use crate::{flags, Access, AccessSource, Error, Result, TraceMeta};

const NONE: u32 = u32::MAX;

/// The parameters of the STOCK_LEVEL mimic (all sizes in 4 KiB pages).
#[derive(Clone, Debug, PartialEq)]
pub struct TpccParams {
    /// Database replicas, each in its own cgroup `replica1..N` with its own files and cache.
    pub replicas: u32,
    /// Warehouses (every replica holds all of them).
    pub warehouses: u32,
    /// Districts per warehouse (TPC-C: 10).
    pub districts: u32,
    /// STOCK rows (items) per warehouse (TPC-C: 100,000).
    pub items: u32,
    /// STOCK rows per 4 KiB page of the data file.
    pub stock_rows_per_page: u32,
    /// Orders whose lines a transaction reads (py-tpcc: the last 20).
    pub orders_per_txn: u32,
    /// Lines per order (TPC-C: 5..15, mean 10).
    pub lines_per_order: u32,
    /// Pages of the ORDER_LINE file holding one district's last `orders_per_txn` orders.
    pub order_line_tail_pages: u32,
    /// WiredTiger cache per replica (anonymous, mapped).
    pub wt_cache_pages: u32,
    /// Probability that a WiredTiger cache hit writes the page.
    pub wt_write_ratio: f64,
    /// Leaf pages under one b-tree internal page.
    pub btree_fanout: u32,
    /// District documents per 4 KiB page.
    pub districts_per_page: u32,
    /// Transactions the trace runs.
    pub transactions: u64,
}

impl Default for TpccParams {
    /// The seed's shape at 1/32 scale (see docs/scenarios.md): 3 replicas, 16 warehouses,
    /// a 160 MiB WiredTiger cache each.
    fn default() -> Self {
        TpccParams {
            replicas: 3,
            warehouses: 16,
            districts: 10,
            items: 100_000,
            stock_rows_per_page: 13,
            orders_per_txn: 20,
            lines_per_order: 10,
            order_line_tail_pages: 5,
            wt_cache_pages: 160 * 256,
            wt_write_ratio: 0.1,
            btree_fanout: 64,
            districts_per_page: 16,
            transactions: 40_000,
        }
    }
}

impl TpccParams {
    /// STOCK lookups per transaction.
    pub fn lookups_per_txn(&self) -> u64 {
        self.orders_per_txn as u64 * self.lines_per_order as u64
    }

    /// Accesses per transaction: the district document, then two per leaf read
    /// (recent-orders tail pages and STOCK lookups). Fixed, so accesses / this = transactions.
    pub fn accesses_per_txn(&self) -> u64 {
        1 + 2 * (self.order_line_tail_pages as u64 + self.lookups_per_txn())
    }

    /// Total accesses of the trace.
    pub fn nr_accesses(&self) -> u64 {
        self.transactions * self.accesses_per_txn()
    }

    /// STOCK file pages of one warehouse.
    pub fn stock_pages_per_warehouse(&self) -> u32 {
        self.items.div_ceil(self.stock_rows_per_page)
    }

    /// Leaf pages of one replica's data file (STOCK, then the ORDER_LINE tails).
    pub fn leaves_per_replica(&self) -> u32 {
        self.warehouses * self.stock_pages_per_warehouse()
            + self.warehouses * self.districts * self.order_line_tail_pages
    }

    /// Hot pages at the start of each WiredTiger cache: b-tree internal pages, then
    /// district documents.
    fn internal_pages(&self) -> u32 {
        self.leaves_per_replica().div_ceil(self.btree_fanout)
    }
    fn district_pages(&self) -> u32 {
        (self.warehouses * self.districts).div_ceil(self.districts_per_page)
    }
    fn hot_pages(&self) -> u32 {
        self.internal_pages() + self.district_pages()
    }

    /// Pages of one replica: its WiredTiger cache, then its data file.
    fn replica_pages(&self) -> u32 {
        self.wt_cache_pages + self.leaves_per_replica()
    }

    /// First dense page id of replica `r`'s WiredTiger cache (anonymous).
    pub fn anon_base(&self, r: u32) -> u32 {
        r * self.replica_pages()
    }

    /// First dense page id of replica `r`'s data file.
    pub fn file_base(&self, r: u32) -> u32 {
        self.anon_base(r) + self.wt_cache_pages
    }

    /// Dense page ids of warehouse `w`'s STOCK key range in replica `r`'s data file.
    pub fn stock_range(&self, r: u32, w: u32) -> std::ops::Range<u32> {
        let per = self.stock_pages_per_warehouse();
        let b = self.file_base(r) + w * per;
        b..b + per
    }

    /// Dense page ids of district (`w`, `d`)'s recent-orders tail in replica `r`.
    pub fn order_tail_range(&self, r: u32, w: u32, d: u32) -> std::ops::Range<u32> {
        let b = self.file_base(r)
            + self.warehouses * self.stock_pages_per_warehouse()
            + (w * self.districts + d) * self.order_line_tail_pages;
        b..b + self.order_line_tail_pages
    }

    /// File pages over all replicas (the data the workload reads through the page cache).
    pub fn file_pages(&self) -> u64 {
        self.replicas as u64 * self.leaves_per_replica() as u64
    }

    /// Anonymous pages over all replicas (the WiredTiger caches).
    pub fn anon_pages(&self) -> u64 {
        self.replicas as u64 * self.wt_cache_pages as u64
    }

    /// All pages.
    pub fn nr_pages(&self) -> u64 {
        self.replicas as u64 * self.replica_pages() as u64
    }

    /// cgroup names: root, then `replica1..N`.
    pub fn cgroups(&self) -> Vec<String> {
        let mut v = vec![String::new()];
        v.extend((1..=self.replicas).map(|r| format!("replica{r}")));
        v
    }

    /// Check the parameters.
    pub fn validate(&self) -> Result<()> {
        let pos = [
            ("replicas", self.replicas),
            ("warehouses", self.warehouses),
            ("districts", self.districts),
            ("items", self.items),
            ("stock_rows_per_page", self.stock_rows_per_page),
            ("orders_per_txn", self.orders_per_txn),
            ("lines_per_order", self.lines_per_order),
            ("order_line_tail_pages", self.order_line_tail_pages),
            ("btree_fanout", self.btree_fanout),
            ("districts_per_page", self.districts_per_page),
        ];
        for (k, v) in pos {
            if v == 0 {
                return Err(Error::invalid(format!("tpcc: {k} must be at least 1")));
            }
        }
        if self.replicas > u16::MAX as u32 {
            return Err(Error::invalid("tpcc: too many replicas (cgroups)"));
        }
        if !(0.0..=1.0).contains(&self.wt_write_ratio) {
            return Err(Error::invalid(format!("tpcc: wt_write_ratio {} is outside [0, 1]", self.wt_write_ratio)));
        }
        let leaves = self.warehouses as u64 * self.stock_pages_per_warehouse() as u64
            + self.warehouses as u64 * self.districts as u64 * self.order_line_tail_pages as u64;
        let per_replica = self.wt_cache_pages as u64 + leaves;
        if self.replicas as u64 * per_replica >= NONE as u64 {
            return Err(Error::invalid("tpcc: the workload has more than 2^32-2 pages; use a smaller scale"));
        }
        if self.wt_cache_pages <= self.hot_pages() {
            return Err(Error::invalid(format!(
                "tpcc: wt_cache_pages {} leaves no leaf slots (b-tree internal and district pages take {})",
                self.wt_cache_pages,
                self.hot_pages()
            )));
        }
        if self.transactions.checked_mul(self.accesses_per_txn()).is_none() {
            return Err(Error::invalid("tpcc: total number of accesses overflows u64"));
        }
        Ok(())
    }
}

/// One replica's WiredTiger cache: CLOCK over leaf slots.
struct WtCache {
    /// Slot holding each leaf, or NONE.
    slot_of: Vec<u32>,
    /// Leaf in each slot, or NONE.
    leaf_of: Vec<u32>,
    referenced: Vec<bool>,
    hand: u32,
}

impl WtCache {
    fn new(leaves: u32, slots: u32) -> WtCache {
        WtCache {
            slot_of: vec![NONE; leaves as usize],
            leaf_of: vec![NONE; slots as usize],
            referenced: vec![false; slots as usize],
            hand: 0,
        }
    }

    /// (slot, hit) for `leaf`; a miss installs it in the CLOCK victim's slot.
    #[inline]
    fn lookup(&mut self, leaf: u32) -> (u32, bool) {
        let s = self.slot_of[leaf as usize];
        if s != NONE {
            self.referenced[s as usize] = true;
            return (s, true);
        }
        let n = self.leaf_of.len() as u32;
        let victim = loop {
            let h = self.hand;
            self.hand = if h + 1 == n { 0 } else { h + 1 };
            if self.referenced[h as usize] {
                self.referenced[h as usize] = false;
            } else {
                break h;
            }
        };
        let old = self.leaf_of[victim as usize];
        if old != NONE {
            self.slot_of[old as usize] = NONE;
        }
        self.leaf_of[victim as usize] = leaf;
        self.slot_of[leaf as usize] = victim;
        self.referenced[victim as usize] = true;
        (victim, false)
    }
}

/// The STOCK_LEVEL trace as an [`AccessSource`].
pub struct TpccSource {
    p: TpccParams,
    rng: Rng,
    caches: Vec<WtCache>,
    /// NURand's run constant C for item ids (TPC-C 2.1.6).
    c_item: u32,
    /// The transaction being emitted.
    chunk: Chunk,
    txns_left: u64,
    meta: TraceMeta,
}

impl TpccSource {
    pub fn new(p: TpccParams, seed: u64) -> Result<TpccSource> {
        p.validate()?;
        let mut rng = Rng::new(seed);
        let c_item = rng.below(8192) as u32;
        let slots = p.wt_cache_pages - p.hot_pages();
        let caches = (0..p.replicas).map(|_| WtCache::new(p.leaves_per_replica(), slots)).collect();
        let meta = TraceMeta {
            format: "gen:tpcc-stock-level".into(),
            nr_records: Some(p.nr_accesses()),
            nr_pages: Some(p.nr_pages() as u32),
            cgroups: p.cgroups(),
            tick_ps: 0,
        };
        Ok(TpccSource {
            txns_left: p.transactions,
            chunk: Chunk::with_capacity(p.accesses_per_txn() as usize),
            p,
            rng,
            caches,
            c_item,
            meta,
        })
    }

    pub fn params(&self) -> &TpccParams {
        &self.p
    }

    /// TPC-C NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x.
    #[inline]
    fn nurand(&mut self, a: u32, x: u32, y: u32) -> u32 {
        let r1 = self.rng.below(a as u64 + 1) as u32;
        let r2 = x + self.rng.below((y - x + 1) as u64) as u32;
        ((r1 | r2).wrapping_add(self.c_item) % (y - x + 1)) + x
    }

    /// Append the two accesses of one leaf read (see the module doc).
    #[inline]
    fn leaf(&mut self, r: u32, leaf: u32) {
        let p = &self.p;
        let cg = (r + 1) as u16;
        let anon = p.anon_base(r);
        let hot = p.hot_pages();
        let (slot, hit) = self.caches[r as usize].lookup(leaf);
        let slot_page = anon + hot + slot;
        if hit {
            let internal = anon + leaf / p.btree_fanout;
            let write = self.rng.chance(p.wt_write_ratio);
            self.chunk.pending.push(Access { page: internal, cgroup: cg, flags: 0, gap: 0 });
            self.chunk.pending.push(Access { page: slot_page, cgroup: cg, flags: if write { flags::WRITE } else { 0 }, gap: 0 });
        } else {
            let file = p.file_base(r) + leaf;
            self.chunk.pending.push(Access { page: file, cgroup: cg, flags: flags::FILE | flags::SYSCALL, gap: 0 });
            self.chunk.pending.push(Access { page: slot_page, cgroup: cg, flags: flags::WRITE, gap: 0 });
        }
    }

    /// Generate the next transaction into the chunk.
    fn transaction(&mut self) {
        self.chunk.restart();
        let r = self.rng.below(self.p.replicas as u64) as u32;
        let w = self.rng.below(self.p.warehouses as u64) as u32;
        let d = self.rng.below(self.p.districts as u64) as u32;
        let cg = (r + 1) as u16;
        // 1. DISTRICT(w, d): a hot document in the WiredTiger cache.
        let dpage = self.p.anon_base(r) + self.p.internal_pages() + (w * self.p.districts + d) / self.p.districts_per_page;
        let write = self.rng.chance(self.p.wt_write_ratio);
        self.chunk.pending.push(Access { page: dpage, cgroup: cg, flags: if write { flags::WRITE } else { 0 }, gap: 0 });
        // 2. ORDER_LINE rows of the district's last orders.
        let stock_leaves = self.p.warehouses * self.p.stock_pages_per_warehouse();
        let tail0 = stock_leaves + (w * self.p.districts + d) * self.p.order_line_tail_pages;
        for i in 0..self.p.order_line_tail_pages {
            self.leaf(r, tail0 + i);
        }
        // 3. STOCK lookups for the order lines' items, in warehouse w's key range.
        let per = self.p.stock_pages_per_warehouse();
        let items = self.p.items;
        let a = 8191.min(items - 1);
        for _ in 0..self.p.lookups_per_txn() {
            let item = self.nurand(a, 1, items);
            let leaf = w * per + (item - 1) / self.p.stock_rows_per_page;
            self.leaf(r, leaf);
        }
        debug_assert_eq!(self.chunk.pending.len() as u64, self.p.accesses_per_txn());
        self.txns_left -= 1;
    }
}

impl AccessSource for TpccSource {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn read_batch(&mut self, buf: &mut Vec<Access>, max: usize) -> Result<usize> {
        buf.clear();
        buf.reserve(max.min(1 << 20));
        while buf.len() < max {
            if self.chunk.is_spent() {
                if self.txns_left == 0 {
                    break;
                }
                self.transaction();
            }
            self.chunk.drain_into(buf, max);
        }
        Ok(buf.len())
    }

    fn nr_pages_seen(&self) -> u32 {
        self.meta.nr_pages.unwrap_or(0)
    }

    fn progress(&self) -> Option<f64> {
        self.chunk.progress(self.meta.nr_records)
    }
}

/// The STOCK_LEVEL trace for `params` and `seed` (validated first).
pub fn tpcc_stock_level(params: TpccParams, seed: u64) -> Result<Box<dyn AccessSource>> {
    Ok(Box::new(TpccSource::new(params, seed)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> TpccParams {
        TpccParams { warehouses: 4, wt_cache_pages: 4000, transactions: 300, ..TpccParams::default() }
    }

    fn all(p: TpccParams, seed: u64) -> Vec<Access> {
        let mut s = TpccSource::new(p, seed).unwrap();
        let mut out = Vec::new();
        let mut buf = Vec::new();
        // An odd batch size so transactions straddle batches.
        while s.read_batch(&mut buf, 1000).unwrap() > 0 {
            out.extend_from_slice(&buf);
        }
        out
    }

    #[test]
    fn deterministic_in_the_seed() {
        assert_eq!(all(small(), 5), all(small(), 5));
        assert_ne!(all(small(), 5), all(small(), 6));
    }

    #[test]
    fn exact_transaction_count() {
        let p = small();
        assert_eq!(p.accesses_per_txn(), 1 + 2 * (5 + 200));
        let v = all(p.clone(), 1);
        assert_eq!(v.len() as u64, 300 * p.accesses_per_txn());
        assert_eq!(v.len() as u64, p.nr_accesses());
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut s = TpccSource::new(small(), 3).unwrap();
        let mut hist = vec![0u32; 100_001];
        for _ in 0..400_000 {
            let i = s.nurand(8191, 1, 100_000);
            assert!((1..=100_000).contains(&i));
            hist[i as usize] += 1;
        }
        let max = *hist.iter().max().unwrap();
        // Uniform would give ~4 per item; NURand's OR concentrates mass.
        assert!(max > 20, "max {max}");
    }

    #[test]
    fn wt_cache_clock_evicts_and_rehits() {
        let mut c = WtCache::new(10, 3);
        assert_eq!(c.lookup(0), (0, false));
        assert_eq!(c.lookup(1), (1, false));
        assert_eq!(c.lookup(2), (2, false));
        assert_eq!(c.lookup(1), (1, true));
        // All referenced: the hand clears 0,1,2 and takes slot 0.
        assert_eq!(c.lookup(3), (0, false));
        assert_eq!(c.slot_of[0], NONE);
        assert!(!c.lookup(0).1);
    }

    #[test]
    fn transactions_stay_in_one_replica_and_one_warehouse() {
        let p = small();
        let v = all(p.clone(), 9);
        let n = p.accesses_per_txn() as usize;
        let mut warehouses_seen = std::collections::BTreeSet::new();
        for (t, txn) in v.chunks(n).enumerate() {
            let cg = txn[0].cgroup;
            assert!((1..=3).contains(&cg));
            let r = cg as u32 - 1;
            let lo = p.anon_base(r);
            let hi = p.file_base(r) + p.leaves_per_replica();
            let mut wh = None;
            let mut tail_wh = None;
            for a in txn {
                assert_eq!(a.cgroup, cg, "txn {t} changes cgroup");
                assert!((lo..hi).contains(&a.page), "txn {t}: page {} outside replica {r}", a.page);
                if a.is_file() {
                    assert!(a.is_syscall(), "data files are read with read()");
                    let w = (0..p.warehouses).find(|&w| p.stock_range(r, w).contains(&a.page));
                    match w {
                        Some(w) => assert_eq!(*wh.get_or_insert(w), w, "txn {t} reads two warehouses' STOCK"),
                        None => {
                            let w = (0..p.warehouses)
                                .find(|&w| (0..p.districts).any(|d| p.order_tail_range(r, w, d).contains(&a.page)))
                                .expect("a file page is STOCK or an order-line tail");
                            assert_eq!(*tail_wh.get_or_insert(w), w);
                        }
                    }
                } else {
                    assert!(a.page < p.file_base(r), "anon pages are the WiredTiger cache");
                }
            }
            if let (Some(a), Some(b)) = (wh, tail_wh) {
                assert_eq!(a, b, "txn {t}: order lines and stock of different warehouses");
            }
            if let Some(w) = wh {
                warehouses_seen.insert(w);
            }
        }
        assert_eq!(warehouses_seen.len(), p.warehouses as usize);
    }

    #[test]
    fn stock_lookups_of_a_warehouse_cover_its_range() {
        // One warehouse, no WT cache hits to speak of: file reads spread over the range.
        let p = TpccParams { replicas: 1, warehouses: 1, wt_cache_pages: 200, transactions: 2000, ..TpccParams::default() };
        let v = all(p.clone(), 2);
        let range = p.stock_range(0, 0);
        let mut seen = vec![false; range.len()];
        for a in v.iter().filter(|a| a.is_file() && range.contains(&a.page)) {
            seen[(a.page - range.start) as usize] = true;
        }
        let frac = seen.iter().filter(|&&s| s).count() as f64 / seen.len() as f64;
        assert!(frac > 0.9, "only {frac} of warehouse 0's STOCK pages read");
    }

    #[test]
    fn invalid_parameters_are_errors() {
        let e = TpccParams { wt_cache_pages: 10, ..TpccParams::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("wt_cache_pages"), "{e}");
        let e = TpccParams { warehouses: 0, ..TpccParams::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("warehouses"), "{e}");
    }
}
