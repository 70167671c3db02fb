//! A page-access mimic of seed 001's run: py-tpcc's STOCK_LEVEL transaction, 30 clients,
//! against a 3-member MongoDB (WiredTiger) replica set — the workload of Kairui Song's
//! refault-distance RFC. docs/scenarios.md derives every size.
//!
//! What the seed ran (github ryncsn/py-tpcc, Kairui Song's fork of apavlo/py-tpcc):
//! - `runtime/executor.py` `doOne` issues only STOCK_LEVEL: `w_id` uniform in the
//!   warehouses, `d_id` uniform in the 10 districts; `tpcc.py` forks `--clients=30`
//!   processes, each running transactions back to back.
//! - `drivers/mongodbdriver.py` connects with `pymongo.MongoClient(host, port)`: one
//!   mongod, the primary (read preference `primary`, the default) — the two secondaries
//!   serve no reads. Their WiredTiger caches, filled while the data was loaded and
//!   replicated, are idle anonymous memory for the whole run.
//! - `denormalize` defaults to True: ORDERS, ORDER_LINE and HISTORY rows are embedded in
//!   their CUSTOMER document. `loadConfig` creates single-field indexes (`create_index`
//!   per column of `TABLE_INDEXES`): CUSTOMER `C_ID`, `C_D_ID`, `C_W_ID`; STOCK `S_I_ID`,
//!   `S_W_ID`.
//! - `doStockLevel`: (1) DISTRICT(w, d).D_NEXT_O_ID = o; (2) `customer.find({C_W_ID: w,
//!   C_D_ID: d, "ORDERS.O_ID": {$lt: o, $gte: o−20}})` — MongoDB's planner takes the
//!   `C_W_ID` index (its scan reaches EOF first in the trial), so the query fetches and
//!   filters every CUSTOMER document of warehouse w; (3) `stock.find({S_W_ID: w, S_I_ID:
//!   {$in: items}, S_QUANTITY: {$lt: t}}).count()` over the ~200 distinct items of those
//!   20 orders' lines. With the `S_I_ID` plan ([`StockPlan::ItemIndex`]) that fetches
//!   every warehouse's STOCK document of each item; with the `S_W_ID` plan
//!   ([`StockPlan::WarehouseIndex`]) all of warehouse w's STOCK documents.
//! - A STOCK_LEVEL-only run writes nothing: D_NEXT_O_ID stays 3001 and the last 20
//!   orders of each district are the loader's (`runtime/loader.py`: OL_CNT uniform in
//!   5..15, OL_I_ID uniform in 1..100,000) — every transaction on (w, d) reads the same items.
//!
//! The page-level model: a leaf is a WiredTiger b-tree leaf page. A read that misses the
//! primary's WiredTiger cache ([`WtCache`]) reads the leaf's on-disk block with pread()
//! through the page cache (`block_pages` file pages: snappy-compressed collections,
//! uncompressed prefix-compressed indexes) and writes its in-memory image into the
//! evicted leaf's slot (anonymous); a hit reads the slot page(s) holding the documents.
//! The 30 clients share the one workload clock: a seeded scheduler picks a client
//! uniformly and runs `quantum` accesses of it, as `terasort` runs concurrent tasks.
//! The trace ends when the `transactions`-th transaction completes.
//!
//! The measured window starts at no particular point of each client's work
//! ([`ClientStart::Staggered`], the default): a client's first transaction starts at a
//! uniformly drawn step of its CUSTOMER and STOCK scans, as in a window cut from clients
//! running back to back. The scheduler is fair in accesses, not in time — a client waiting
//! for a read does not fall behind — so clients that all started a transaction at the same
//! instant ([`ClientStart::Lockstep`]) would sweep the same items in the same order for
//! their whole first transaction; at `--scale 4` and up that lockstep lasts past the first
//! memory-worth of reads and leaves no early page-cache reuse at all, which decides how
//! MGLRU's tiers start out (docs/scenarios.md, "Across scales").
//!
//! Everything is drawn from one xoshiro256** stream seeded by the seed, so the same
//! parameters and seed give the same records.

use super::chunk::Chunk;
use super::wiredtiger::WtCache;
use crate::rng::Rng;
use crate::{flags, Access, AccessSource, Error, FileRange, Result, TraceMeta, PAGE_SIZE};

/// TPC-C's ITEM cardinality (clause 4.2.2): the item range order lines draw from.
pub const TPCC_ITEMS: u32 = 100_000;

/// Which index MongoDB's planner chose for the STOCK count (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StockPlan {
    /// IXSCAN `S_I_ID` over the transaction's items: every warehouse's document per item.
    ItemIndex,
    /// IXSCAN `S_W_ID` = w: all of warehouse w's STOCK documents.
    WarehouseIndex,
}

/// Where each client is in its work when the trace starts (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientStart {
    /// Its first transaction starts at a uniformly drawn step (a window of a steady run).
    Staggered,
    /// Every client starts a fresh transaction at the first access.
    Lockstep,
}

/// The parameters of the STOCK_LEVEL mimic (bytes are BSON/on-disk estimates,
/// docs/scenarios.md).
#[derive(Clone, Debug, PartialEq)]
pub struct TpccParams {
    /// Replica-set members, each in its own cgroup `replica1..N` with its own WiredTiger cache.
    pub replicas: u32,
    /// Members serving reads (the first ones; 1 = the primary only, py-tpcc's connection).
    pub read_replicas: u32,
    /// Warehouses (py-tpcc `--warehouses`).
    pub warehouses: u32,
    /// Districts per warehouse (TPC-C: 10).
    pub districts: u32,
    /// Customers per district (TPC-C: 3,000; scaled).
    pub customers: u32,
    /// STOCK rows per warehouse (TPC-C: 100,000; scaled). Order lines of the scaled model
    /// keep a line with probability `items / TPCC_ITEMS`, so a transaction reads the same
    /// share of STOCK as at full size.
    pub items: u32,
    /// Orders whose lines a transaction reads (py-tpcc: the last 20).
    pub orders_per_txn: u32,
    /// Order lines per order, uniform in `ol_cnt_min..=ol_cnt_max` (TPC-C: 5..15).
    pub ol_cnt_min: u32,
    pub ol_cnt_max: u32,
    /// STOCK document: BSON bytes (in the WiredTiger cache) and snappy-compressed bytes on disk.
    pub stock_doc_bytes: u32,
    pub stock_disk_bytes: u32,
    /// CUSTOMER document with its embedded order, order lines and history entry.
    pub customer_doc_bytes: u32,
    pub customer_disk_bytes: u32,
    /// DISTRICT document (BSON); DISTRICT (5,000 documents at most) stays in the cache.
    pub district_doc_bytes: u32,
    /// Bytes per index entry (prefix-compressed key plus RecordId).
    pub index_entry_bytes: u32,
    /// WiredTiger `leaf_page_max`: collections 32 KiB (WT default), indexes 16 KiB (MongoDB).
    pub leaf_bytes: u32,
    pub index_leaf_bytes: u32,
    /// WiredTiger cache per member (anonymous, mapped), in 4 KiB pages.
    pub wt_cache_pages: u32,
    /// Which index the STOCK count uses.
    pub stock_plan: StockPlan,
    /// Concurrent clients (py-tpcc `--clients`).
    pub clients: u32,
    /// Where the clients are in their work when the trace starts.
    pub client_start: ClientStart,
    /// Accesses a client runs before the scheduler picks again.
    pub quantum: u32,
    /// Transactions the trace runs to completion (then it ends).
    pub transactions: u64,
}

impl Default for TpccParams {
    /// The seed's run at 1/32 scale (see docs/scenarios.md): 500 warehouses with 1/32 of
    /// their customers and items, 160 MiB WiredTiger caches, 30 clients.
    fn default() -> Self {
        TpccParams {
            replicas: 3,
            read_replicas: 1,
            warehouses: 500,
            districts: 10,
            customers: 94,
            items: 3_125,
            orders_per_txn: 20,
            ol_cnt_min: 5,
            ol_cnt_max: 15,
            stock_doc_bytes: 559,
            stock_disk_bytes: 375,
            customer_doc_bytes: 2_520,
            customer_disk_bytes: 1_180,
            district_doc_bytes: 240,
            index_entry_bytes: 9,
            leaf_bytes: 32 << 10,
            index_leaf_bytes: 16 << 10,
            wt_cache_pages: 160 * 256,
            stock_plan: StockPlan::ItemIndex,
            clients: 30,
            client_start: ClientStart::Staggered,
            quantum: 256,
            transactions: 900,
        }
    }
}

/// One b-tree's leaves in a member's files: leaf ids `first..first + leaves` of the
/// member's cache, file pages from `file_base`, `block_pages` per leaf on disk and
/// `image_pages` per leaf in the cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tree {
    pub first: u32,
    pub leaves: u32,
    pub file_base: u32,
    pub block_pages: u32,
    pub image_pages: u32,
}

/// The b-trees a member's reads use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trees {
    pub stock: Tree,
    pub customer: Tree,
    /// CUSTOMER `C_W_ID` index.
    pub customer_w: Tree,
    /// STOCK `S_I_ID` or `S_W_ID` index (by the plan).
    pub stock_index: Tree,
}

fn pages(bytes: u64) -> u32 {
    bytes.div_ceil(PAGE_SIZE) as u32
}

impl TpccParams {
    /// STOCK documents per collection leaf.
    pub fn stock_per_leaf(&self) -> u32 {
        (self.leaf_bytes / self.stock_doc_bytes).max(1)
    }
    /// CUSTOMER documents per collection leaf.
    pub fn customers_per_leaf(&self) -> u32 {
        (self.leaf_bytes / self.customer_doc_bytes).max(1)
    }
    /// Index entries per index leaf.
    pub fn entries_per_index_leaf(&self) -> u32 {
        (self.index_leaf_bytes / self.index_entry_bytes).max(1)
    }
    /// STOCK leaves of one warehouse (its documents are loaded together, item order).
    pub fn stock_leaves_per_warehouse(&self) -> u32 {
        self.items.div_ceil(self.stock_per_leaf())
    }
    /// CUSTOMER documents of one warehouse.
    pub fn customers_per_warehouse(&self) -> u32 {
        self.districts * self.customers
    }
    /// CUSTOMER leaves of one warehouse.
    pub fn customer_leaves_per_warehouse(&self) -> u32 {
        self.customers_per_warehouse().div_ceil(self.customers_per_leaf())
    }
    /// Pages at the start of each WiredTiger cache held by DISTRICT (always cached).
    pub fn district_pages(&self) -> u32 {
        pages(self.warehouses as u64 * self.districts as u64 * self.district_doc_bytes as u64)
    }
    /// Pages of one leaf's in-memory image (a cache slot).
    pub fn slot_pages(&self) -> u32 {
        pages(self.leaf_bytes as u64)
    }
    /// Leaf slots of each WiredTiger cache.
    pub fn slots(&self) -> u32 {
        self.wt_cache_pages.saturating_sub(self.district_pages()) / self.slot_pages()
    }

    /// The trees of a read-serving member, file pages from `file_base`.
    pub fn trees(&self, file_base: u32) -> Trees {
        let w = self.warehouses;
        let mut first = 0;
        let mut base = file_base;
        let mut tree = |leaves: u32, docs_per_leaf: u32, disk: u32, image_bytes: u32| {
            let t = Tree { first, leaves, file_base: base, block_pages: pages(docs_per_leaf as u64 * disk as u64), image_pages: pages(image_bytes as u64) };
            first += leaves;
            base += leaves * t.block_pages;
            t
        };
        let stock = tree(w * self.stock_leaves_per_warehouse(), self.stock_per_leaf(), self.stock_disk_bytes, self.leaf_bytes);
        let customer = tree(w * self.customer_leaves_per_warehouse(), self.customers_per_leaf(), self.customer_disk_bytes, self.leaf_bytes);
        let e = self.entries_per_index_leaf();
        let index_leaves = |entries: u64| entries.div_ceil(e as u64) as u32;
        let customer_w = tree(index_leaves(w as u64 * self.customers_per_warehouse() as u64), e, self.index_entry_bytes, self.index_leaf_bytes);
        let stock_index = tree(index_leaves(w as u64 * self.items as u64), e, self.index_entry_bytes, self.index_leaf_bytes);
        Trees { stock, customer, customer_w, stock_index }
    }

    /// Leaves of one read-serving member (all trees).
    pub fn leaves(&self) -> u32 {
        let t = self.trees(0);
        t.stock_index.first + t.stock_index.leaves
    }

    /// File pages of one read-serving member.
    pub fn member_file_pages(&self) -> u32 {
        let t = self.trees(0);
        t.stock_index.file_base + t.stock_index.leaves * t.stock_index.block_pages
    }

    /// First dense page id of member `r`'s WiredTiger cache (anonymous). Every cache comes
    /// first, then the files of the read-serving members.
    pub fn anon_base(&self, r: u32) -> u32 {
        r * self.wt_cache_pages
    }

    /// First dense page id of read-serving member `r`'s files.
    pub fn file_base(&self, r: u32) -> u32 {
        self.replicas * self.wt_cache_pages + r * self.member_file_pages()
    }

    /// File pages over all members (only read-serving members' files are modelled).
    pub fn file_pages(&self) -> u64 {
        self.read_replicas as u64 * self.member_file_pages() as u64
    }

    /// Anonymous pages over all members (the WiredTiger caches).
    pub fn anon_pages(&self) -> u64 {
        self.replicas as u64 * self.wt_cache_pages as u64
    }

    /// All pages.
    pub fn nr_pages(&self) -> u64 {
        self.anon_pages() + self.file_pages()
    }

    /// cgroup names: root, then `replica1..N` (`replica1` is the primary).
    /// The files of the read-serving members: one per b-tree (WiredTiger keeps each
    /// collection and index in a file of its own, opened with `POSIX_FADV_RANDOM`).
    pub fn files(&self) -> Vec<FileRange> {
        let t = self.trees(0);
        let mut v = Vec::new();
        for r in 0..self.read_replicas {
            for (name, tree) in [("stock", t.stock), ("customer", t.customer), ("customer_w_id", t.customer_w), ("stock_index", t.stock_index)] {
                let nr_pages = tree.leaves * tree.block_pages;
                if nr_pages > 0 {
                    v.push(FileRange { name: format!("replica{}/{name}.wt", r + 1), first: self.file_base(r) + tree.file_base, nr_pages, advice: FileRange::FADV_RANDOM });
                }
            }
        }
        v.sort_by_key(|f| f.first);
        v
    }

    pub fn cgroups(&self) -> Vec<String> {
        let mut v = vec![String::new()];
        v.extend((1..=self.replicas).map(|r| format!("replica{r}")));
        v
    }

    /// Check the parameters.
    pub fn validate(&self) -> Result<()> {
        let pos = [
            ("replicas", self.replicas),
            ("read_replicas", self.read_replicas),
            ("warehouses", self.warehouses),
            ("districts", self.districts),
            ("customers", self.customers),
            ("items", self.items),
            ("orders_per_txn", self.orders_per_txn),
            ("ol_cnt_min", self.ol_cnt_min),
            ("stock_doc_bytes", self.stock_doc_bytes),
            ("stock_disk_bytes", self.stock_disk_bytes),
            ("customer_doc_bytes", self.customer_doc_bytes),
            ("customer_disk_bytes", self.customer_disk_bytes),
            ("district_doc_bytes", self.district_doc_bytes),
            ("index_entry_bytes", self.index_entry_bytes),
            ("leaf_bytes", self.leaf_bytes),
            ("index_leaf_bytes", self.index_leaf_bytes),
            ("clients", self.clients),
            ("quantum", self.quantum),
        ];
        for (k, v) in pos {
            if v == 0 {
                return Err(Error::invalid(format!("tpcc: {k} must be at least 1")));
            }
        }
        if self.transactions == 0 {
            return Err(Error::invalid("tpcc: transactions must be at least 1"));
        }
        if self.read_replicas > self.replicas {
            return Err(Error::invalid(format!("tpcc: read_replicas {} exceeds replicas {}", self.read_replicas, self.replicas)));
        }
        if self.replicas > u16::MAX as u32 - 1 {
            return Err(Error::invalid("tpcc: too many replicas (cgroups)"));
        }
        if self.ol_cnt_max < self.ol_cnt_min {
            return Err(Error::invalid("tpcc: ol_cnt_max is below ol_cnt_min"));
        }
        if self.items > TPCC_ITEMS {
            return Err(Error::invalid(format!("tpcc: items {} exceeds TPC-C's {TPCC_ITEMS}", self.items)));
        }
        for (k, v) in [("stock_doc_bytes", self.stock_doc_bytes), ("customer_doc_bytes", self.customer_doc_bytes)] {
            if v > self.leaf_bytes {
                return Err(Error::invalid(format!("tpcc: {k} {v} exceeds leaf_bytes {}", self.leaf_bytes)));
            }
        }
        if self.index_entry_bytes > self.index_leaf_bytes {
            return Err(Error::invalid("tpcc: index_entry_bytes exceeds index_leaf_bytes"));
        }
        // Page counts in u64 before the u32 layout is computed (as in `trees`).
        let tree = |docs: u64, leaf: u32, doc: u32, disk: u32| -> u64 {
            let per_leaf = (leaf / doc).max(1) as u64;
            docs.div_ceil(per_leaf) * (per_leaf * disk as u64).div_ceil(PAGE_SIZE)
        };
        let (w, ix) = (self.warehouses as u64, self.index_entry_bytes);
        let customers = w * self.districts as u64 * self.customers as u64;
        let per_wh = self.districts as u64 * self.customers as u64;
        let files = w * tree(self.items as u64, self.leaf_bytes, self.stock_doc_bytes, self.stock_disk_bytes)
            + w * tree(per_wh, self.leaf_bytes, self.customer_doc_bytes, self.customer_disk_bytes)
            + tree(customers, self.index_leaf_bytes, ix, ix)
            + tree(w * self.items as u64, self.index_leaf_bytes, ix, ix);
        let total = self.replicas as u64 * self.wt_cache_pages as u64 + self.read_replicas as u64 * files;
        if total >= u32::MAX as u64 - 1 {
            return Err(Error::invalid("tpcc: the workload has more than 2^32-2 pages; use a smaller scale"));
        }
        if self.slots() == 0 {
            return Err(Error::invalid(format!(
                "tpcc: wt_cache_pages {} leaves no leaf slot (DISTRICT takes {} pages, a slot {})",
                self.wt_cache_pages,
                self.district_pages(),
                self.slot_pages()
            )));
        }
        Ok(())
    }
}

/// Where a client is in its transaction.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    /// Next: pick (w, d) and read DISTRICT.
    Start,
    /// Fetching warehouse w's CUSTOMER documents: leaf `k` of the warehouse next.
    Customer { k: u32 },
    /// STOCK by `S_I_ID`: item `j` of the transaction's list, warehouse `wi` next.
    StockByItem { j: u32, wi: u32 },
    /// STOCK by `S_W_ID`: leaf `k` of warehouse w's STOCK next.
    StockByWarehouse { k: u32 },
}

/// One py-tpcc client process.
#[derive(Clone, Debug)]
struct Client {
    replica: u32,
    w: u32,
    d: u32,
    step: Step,
    /// The index leaf this client's index scan is on (a new one is read when it moves on).
    index_leaf: u32,
    /// No transaction started yet (the first one may start part-way, [`ClientStart`]).
    fresh: bool,
}

const NONE: u32 = u32::MAX;

/// The STOCK_LEVEL trace as an [`AccessSource`].
pub struct TpccSource {
    p: TpccParams,
    trees: Trees,
    rng: Rng,
    /// One cache per read-serving member.
    caches: Vec<WtCache>,
    /// Distinct items (0-based, ascending) of district (w, d)'s last orders:
    /// `items[item_off[w·D + d]..item_off[w·D + d + 1]]`.
    items: Vec<u32>,
    item_off: Vec<u32>,
    clients: Vec<Client>,
    /// Next page of the load phase (every member's cache written once), then done.
    load_next: u64,
    completed: u64,
    chunk: Chunk,
    meta: TraceMeta,
}

impl TpccSource {
    pub fn new(p: TpccParams, seed: u64) -> Result<TpccSource> {
        p.validate()?;
        let mut rng = Rng::new(seed);
        let (items, item_off) = last_order_items(&p, &mut rng);
        let trees = p.trees(0);
        let caches = (0..p.read_replicas).map(|_| WtCache::new(p.leaves(), p.slots())).collect();
        let clients = (0..p.clients).map(|_| Client { replica: 0, w: 0, d: 0, step: Step::Start, index_leaf: NONE, fresh: true }).collect();
        let meta = TraceMeta {
            format: "gen:tpcc-stock-level".into(),
            nr_records: None,
            nr_pages: Some(p.nr_pages() as u32),
            cgroups: p.cgroups(),
            tick_ps: 0,
            files: p.files(),
            ops: Vec::new(),
        };
        Ok(TpccSource { trees, rng, caches, items, item_off, clients, load_next: 0, completed: 0, chunk: Chunk::with_capacity(p.quantum as usize + 64), meta, p })
    }

    pub fn params(&self) -> &TpccParams {
        &self.p
    }

    /// Transactions completed so far.
    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// The distinct items (0-based) a transaction on district (w, d) reads.
    pub fn district_items(&self, w: u32, d: u32) -> &[u32] {
        let i = (w * self.p.districts + d) as usize;
        &self.items[self.item_off[i] as usize..self.item_off[i + 1] as usize]
    }

    /// The load phase: every member's WiredTiger cache written once (the data loaded and
    /// replicated before the run fills each cache), members interleaved page by page.
    fn load(&mut self) {
        let total = self.p.anon_pages();
        let end = (self.load_next + 4096).min(total);
        let out = self.chunk.restart();
        for i in self.load_next..end {
            let r = (i % self.p.replicas as u64) as u32;
            let page = self.p.anon_base(r) + (i / self.p.replicas as u64) as u32;
            out.push(Access { page, cgroup: (r + 1) as u16, flags: flags::WRITE, gap: 0 });
        }
        self.load_next = end;
    }

    /// Read leaf `leaf` of `tree` through member `r`'s cache: on a hit the slot pages
    /// `touch` (a range of the leaf's image); on a miss pread() the block and write the
    /// image into the victim's slot.
    #[inline]
    fn visit(&mut self, r: u32, tree: Tree, leaf: u32, touch: std::ops::Range<u32>) {
        let p = &self.p;
        let cg = (r + 1) as u16;
        let (slot, hit) = self.caches[r as usize].lookup(tree.first + leaf);
        let slot_base = p.anon_base(r) + p.district_pages() + slot * p.slot_pages();
        let out = &mut self.chunk.pending;
        if hit {
            for i in touch {
                out.push(Access { page: slot_base + i, cgroup: cg, flags: 0, gap: 0 });
            }
        } else {
            let file = p.file_base(r) + tree.file_base + leaf * tree.block_pages;
            // One pread() of the whole block (WiredTiger reads a block in one call).
            for i in 0..tree.block_pages {
                let cont = if i > 0 { flags::READ_CONT } else { 0 };
                out.push(Access { page: file + i, cgroup: cg, flags: flags::FILE | flags::SYSCALL | cont, gap: 0 });
            }
            for i in 0..tree.image_pages {
                out.push(Access { page: slot_base + i, cgroup: cg, flags: flags::WRITE, gap: 0 });
            }
        }
    }

    /// Index scan of client `c` at entry `entry` of `tree`: reads the index leaf when the
    /// scan enters a new one.
    #[inline]
    fn index(&mut self, c: usize, tree: Tree, entry: u64) {
        let leaf = (entry / self.p.entries_per_index_leaf() as u64) as u32;
        if self.clients[c].index_leaf != leaf {
            self.clients[c].index_leaf = leaf;
            let r = self.clients[c].replica;
            self.visit(r, tree, leaf, 0..1);
        }
    }

    /// Advance client `c` by one step (one leaf and its index entry); true when its
    /// transaction completed.
    fn advance(&mut self, c: usize) -> bool {
        let Client { replica: r, w, d, step, .. } = self.clients[c].clone();
        let t = self.trees;
        match step {
            Step::Start => {
                let p = &self.p;
                let r = self.rng.below(p.read_replicas as u64) as u32;
                let w = self.rng.below(p.warehouses as u64) as u32;
                let d = self.rng.below(p.districts as u64) as u32;
                // 1. DISTRICT(w, d).D_NEXT_O_ID: a cached document.
                let at = (w * p.districts + d) as u64 * p.district_doc_bytes as u64;
                let page = p.anon_base(r) + (at / PAGE_SIZE) as u32;
                self.chunk.pending.push(Access { page, cgroup: (r + 1) as u16, flags: 0, gap: 0 });
                let fresh = self.clients[c].fresh;
                self.clients[c] = Client { replica: r, w, d, step: Step::Customer { k: 0 }, index_leaf: NONE, fresh: false };
                if fresh && p.client_start == ClientStart::Staggered {
                    self.clients[c].step = self.first_step(w, d);
                }
                false
            }
            Step::Customer { k } => {
                // 2. IXSCAN C_W_ID = w, FETCH each document (filtered on C_D_ID and
                //    ORDERS.O_ID): every leaf of warehouse w's CUSTOMER documents, read whole.
                let per = self.p.customer_leaves_per_warehouse();
                let entry = w as u64 * self.p.customers_per_warehouse() as u64 + (k * self.p.customers_per_leaf()) as u64;
                self.index(c, t.customer_w, entry);
                self.visit(r, t.customer, w * per + k, 0..t.customer.image_pages);
                if k + 1 < per {
                    self.clients[c].step = Step::Customer { k: k + 1 };
                    return false;
                }
                self.clients[c].index_leaf = NONE;
                // An empty $in (no order line kept by the scale-down) ends at once.
                if self.district_items(w, d).is_empty() {
                    self.clients[c].step = Step::Start;
                    return true;
                }
                self.clients[c].step = match self.p.stock_plan {
                    StockPlan::ItemIndex => Step::StockByItem { j: 0, wi: 0 },
                    StockPlan::WarehouseIndex => Step::StockByWarehouse { k: 0 },
                };
                false
            }
            Step::StockByItem { j, wi } => {
                // 3. IXSCAN S_I_ID $in items (entries ordered by item, then RecordId = load
                //    order = warehouse), FETCH each document: item i of every warehouse.
                let (warehouses, per_leaf, per_wh) = (self.p.warehouses, self.p.stock_per_leaf(), self.p.stock_leaves_per_warehouse());
                let item = self.district_items(w, d)[j as usize];
                self.index(c, t.stock_index, item as u64 * warehouses as u64 + wi as u64);
                let leaf = wi * per_wh + item / per_leaf;
                let page = (item % per_leaf) * t.stock.image_pages / per_leaf;
                self.visit(r, t.stock, leaf, page..page + 1);
                let n = self.district_items(w, d).len() as u32;
                let (j, wi) = if wi + 1 < warehouses { (j, wi + 1) } else { (j + 1, 0) };
                if j == n {
                    self.clients[c].step = Step::Start;
                    return true;
                }
                self.clients[c].step = Step::StockByItem { j, wi };
                false
            }
            Step::StockByWarehouse { k } => {
                // 3'. IXSCAN S_W_ID = w, FETCH each document: warehouse w's STOCK, read whole.
                let per = self.p.stock_leaves_per_warehouse();
                let entry = w as u64 * self.p.items as u64 + (k * self.p.stock_per_leaf()) as u64;
                self.index(c, t.stock_index, entry);
                self.visit(r, t.stock, w * per + k, 0..t.stock.image_pages);
                if k + 1 == per {
                    self.clients[c].step = Step::Start;
                    return true;
                }
                self.clients[c].step = Step::StockByWarehouse { k: k + 1 };
                false
            }
        }
    }

    /// [`ClientStart::Staggered`]: a uniformly drawn step of transaction (w, d) — one of
    /// its CUSTOMER leaves, or one (item, warehouse) of its `S_I_ID` scan (one leaf of its
    /// `S_W_ID` scan) — where the client's first transaction starts.
    fn first_step(&mut self, w: u32, d: u32) -> Step {
        let p = &self.p;
        let customer = p.customer_leaves_per_warehouse() as u64;
        let items = self.district_items(w, d).len() as u64;
        let stock = match p.stock_plan {
            StockPlan::ItemIndex => items * p.warehouses as u64,
            StockPlan::WarehouseIndex if items == 0 => 0,
            StockPlan::WarehouseIndex => p.stock_leaves_per_warehouse() as u64,
        };
        let (warehouses, plan) = (p.warehouses as u64, p.stock_plan);
        let u = self.rng.below(customer + stock);
        if u < customer {
            return Step::Customer { k: u as u32 };
        }
        let u = u - customer;
        match plan {
            StockPlan::ItemIndex => Step::StockByItem { j: (u / warehouses) as u32, wi: (u % warehouses) as u32 },
            StockPlan::WarehouseIndex => Step::StockByWarehouse { k: u as u32 },
        }
    }

    /// Run one scheduling quantum into the chunk; false when the trace is over.
    fn step(&mut self) -> bool {
        if self.load_next < self.p.anon_pages() {
            self.load();
            return true;
        }
        self.chunk.restart();
        if self.completed == self.p.transactions {
            return false;
        }
        let c = self.rng.below(self.p.clients as u64) as usize;
        while self.chunk.pending.len() < self.p.quantum as usize {
            if self.advance(c) {
                self.completed += 1;
                if self.completed == self.p.transactions {
                    break;
                }
            }
        }
        true
    }
}

/// The distinct items of every district's last `orders_per_txn` orders, as the loader
/// wrote them (OL_CNT uniform in ol_cnt_min..=ol_cnt_max, OL_I_ID uniform); a line is
/// kept with probability items / TPCC_ITEMS in a scaled-down model.
fn last_order_items(p: &TpccParams, rng: &mut Rng) -> (Vec<u32>, Vec<u32>) {
    let keep = p.items as f64 / TPCC_ITEMS as f64;
    let pairs = (p.warehouses * p.districts) as usize;
    let mut items = Vec::new();
    let mut off = Vec::with_capacity(pairs + 1);
    off.push(0u32);
    for _ in 0..pairs {
        let start = items.len();
        for _ in 0..p.orders_per_txn {
            let ol_cnt = p.ol_cnt_min + rng.below((p.ol_cnt_max - p.ol_cnt_min + 1) as u64) as u32;
            for _ in 0..ol_cnt {
                if keep >= 1.0 || rng.chance(keep) {
                    items.push(rng.below(p.items as u64) as u32);
                }
            }
        }
        // py-tpcc collects the items in a set (`ol_ids`); the index scan visits them in order.
        items[start..].sort_unstable();
        let mut n = start;
        for i in start..items.len() {
            if i == start || items[i] != items[n - 1] {
                items[n] = items[i];
                n += 1;
            }
        }
        items.truncate(n);
        off.push(items.len() as u32);
    }
    (items, off)
}

impl AccessSource for TpccSource {
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    fn read_batch(&mut self, buf: &mut Vec<Access>, max: usize) -> Result<usize> {
        buf.clear();
        buf.reserve(max.min(1 << 20));
        while buf.len() < max {
            if self.chunk.is_spent() && !self.step() {
                break;
            }
            self.chunk.drain_into(buf, max);
        }
        Ok(buf.len())
    }

    fn nr_pages_seen(&self) -> u32 {
        self.meta.nr_pages.unwrap_or(0)
    }

    fn progress(&self) -> Option<f64> {
        Some(self.completed as f64 / self.p.transactions as f64)
    }
}

/// The STOCK_LEVEL trace for `params` and `seed` (validated first).
pub fn tpcc_stock_level(params: TpccParams, seed: u64) -> Result<Box<dyn AccessSource>> {
    Ok(Box::new(TpccSource::new(params, seed)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 20 warehouses of 10 districts, 30 customers per district, 2,000 items (kept lines
    /// 2%), 32 transactions by 4 clients.
    fn small() -> TpccParams {
        TpccParams { warehouses: 20, customers: 30, items: 2_000, wt_cache_pages: 2_000, clients: 4, quantum: 50, transactions: 32, ..TpccParams::default() }
    }

    fn all(p: TpccParams, seed: u64) -> Vec<Access> {
        let mut s = TpccSource::new(p, seed).unwrap();
        let mut out = Vec::new();
        let mut buf = Vec::new();
        // An odd batch size so quanta straddle batches.
        while s.read_batch(&mut buf, 1000).unwrap() > 0 {
            out.extend_from_slice(&buf);
        }
        assert_eq!(s.completed(), s.params().transactions);
        assert_eq!(s.progress(), Some(1.0));
        out
    }

    /// `ClientStart::Staggered`: each client's first transaction starts at a uniformly drawn
    /// step of its CUSTOMER and `S_I_ID` scans, so the clients are spread over their
    /// transactions from the first access (a window of a steady run); with `Lockstep` every
    /// client starts at its first CUSTOMER leaf. Later transactions start at the beginning
    /// either way.
    #[test]
    fn staggered_start_spreads_only_the_first_transactions() {
        let p = TpccParams { clients: 400, ..small() };
        for start in [ClientStart::Lockstep, ClientStart::Staggered] {
            let mut s = TpccSource::new(TpccParams { client_start: start, ..p.clone() }, 3).unwrap();
            let cust = p.customer_leaves_per_warehouse();
            let mut phases = Vec::new();
            for c in 0..p.clients as usize {
                assert!(!s.advance(c)); // Start: DISTRICT, then where the scans begin
                let Client { w, d, step, fresh, .. } = s.clients[c].clone();
                assert!(!fresh);
                let total = cust + s.district_items(w, d).len() as u32 * p.warehouses;
                let at = match step {
                    Step::Customer { k } => k,
                    Step::StockByItem { j, wi } => cust + j * p.warehouses + wi,
                    other => panic!("{other:?}"),
                };
                assert!(at < total);
                phases.push(at as f64 / total as f64);
            }
            let mean = phases.iter().sum::<f64>() / phases.len() as f64;
            let past_half = phases.iter().filter(|&&x| x >= 0.5).count() as f64 / phases.len() as f64;
            match start {
                ClientStart::Lockstep => assert!(phases.iter().all(|&x| x == 0.0)),
                ClientStart::Staggered => {
                    assert!((0.4..0.6).contains(&mean), "mean phase {mean}");
                    assert!((0.4..0.6).contains(&past_half), "share past half {past_half}");
                }
            }
            for c in 0..4 {
                while !s.advance(c) {}
                assert!(!s.advance(c));
                assert_eq!(s.clients[c].step, Step::Customer { k: 0 });
            }
        }
    }

    #[test]
    fn deterministic_in_the_seed() {
        assert_eq!(all(small(), 5), all(small(), 5));
        assert_ne!(all(small(), 5), all(small(), 6));
    }

    #[test]
    fn layout_from_document_sizes() {
        // Worked by hand from the defaults: 32 KiB leaves hold ⌊32768/559⌋ = 58 STOCK
        // documents, on disk ⌈58·375/4096⌉ = ⌈5.31⌉ = 6 pages; ⌊32768/2520⌋ = 13 CUSTOMER
        // documents, ⌈13·1180/4096⌉ = 4 pages; 16 KiB index leaves of ⌊16384/9⌋ = 1820
        // entries, ⌈1820·9/4096⌉ = 4 pages. Images are 8 pages (32 KiB) and 4 (16 KiB).
        let p = TpccParams::default();
        assert_eq!((p.stock_per_leaf(), p.customers_per_leaf(), p.entries_per_index_leaf()), (58, 13, 1820));
        let t = p.trees(0);
        assert_eq!((t.stock.block_pages, t.customer.block_pages, t.stock_index.block_pages), (6, 4, 4));
        assert_eq!((t.stock.image_pages, t.customer.image_pages, t.customer_w.image_pages), (8, 8, 4));
        // 500 warehouses × ⌈3125/58⌉ = 54 STOCK leaves; ⌈940/13⌉ = 73 CUSTOMER leaves.
        assert_eq!(t.stock.leaves, 500 * 54);
        assert_eq!(t.customer.leaves, 500 * 73);
        assert_eq!(t.customer.file_base, t.stock.leaves * 6);
        // DISTRICT: 5,000 × 240 B = 293 pages; the rest of 160 MiB is 32 KiB slots.
        assert_eq!(p.district_pages(), 293);
        assert_eq!(p.slots(), (40_960 - 293) / 8);
        // A document size that overflows the 32-bit page ids is an error, not a wrap.
        let e = TpccParams { stock_disk_bytes: 4_000_000, items: TPCC_ITEMS, ..p.clone() }.validate().unwrap_err();
        assert!(e.to_string().contains("2^32"), "{e}");
        // Files follow the three caches.
        assert_eq!(p.file_base(0), 3 * 40_960);
        assert_eq!(p.nr_pages(), 3 * 40_960 + p.member_file_pages() as u64);
    }

    #[test]
    fn load_phase_writes_every_cache_once_then_only_the_primary_is_read() {
        let p = small();
        let v = all(p.clone(), 1);
        let load = p.anon_pages() as usize;
        let mut seen = vec![0u32; load];
        for a in &v[..load] {
            assert!(a.is_write() && !a.is_file());
            let r = a.page / p.wt_cache_pages;
            assert_eq!(a.cgroup as u32, r + 1, "page {} written in the wrong cgroup", a.page);
            seen[a.page as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n == 1));
        // py-tpcc's connection reads from the primary only: the secondaries stay idle.
        for a in &v[load..] {
            assert_eq!(a.cgroup, 1);
            assert!(a.page < p.wt_cache_pages || a.page >= p.file_base(0), "page {} of a secondary", a.page);
        }
    }

    #[test]
    fn read_replicas_spread_transactions() {
        let p = TpccParams { read_replicas: 3, ..small() };
        let v = all(p.clone(), 1);
        let mut cgs = std::collections::BTreeSet::new();
        for a in &v[p.anon_pages() as usize..] {
            cgs.insert(a.cgroup);
            if a.is_file() {
                let r = (a.page - p.file_base(0)) / p.member_file_pages();
                assert_eq!(a.cgroup as u32, r + 1, "a member reads only its own files");
            }
        }
        assert_eq!(cgs.into_iter().collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn last_orders_hold_about_200_distinct_uniform_items() {
        // Full TPC-C item range: 20 orders × U[5,15] lines = 200 lines on average, drawn
        // uniformly from 100,000 items, so ~0.2 duplicates per district.
        let p = TpccParams { warehouses: 50, items: TPCC_ITEMS, ..TpccParams::default() };
        let s = TpccSource::new(p.clone(), 3).unwrap();
        let (mut total, mut lo, mut hi) = (0usize, usize::MAX, 0usize);
        for w in 0..p.warehouses {
            for d in 0..p.districts {
                let it = s.district_items(w, d);
                assert!(it.windows(2).all(|x| x[0] < x[1]), "sorted and distinct");
                assert!(it.iter().all(|&i| i < TPCC_ITEMS));
                total += it.len();
                lo = lo.min(it.len());
                hi = hi.max(it.len());
            }
        }
        let mean = total as f64 / 500.0;
        assert!((198.0..202.0).contains(&mean), "mean {mean}");
        // Σ of 20 uniform 5..15 lies in 100..300; its sd is √(20·10) ≈ 14.
        assert!(lo >= 100 && hi <= 300 && hi - lo > 40, "{lo}..{hi}");
        // Scaled down, a line is kept with probability items / 100,000.
        let q = TpccParams::default();
        let s = TpccSource::new(q.clone(), 3).unwrap();
        let n: usize = (0..q.warehouses).flat_map(|w| (0..10).map(move |d| (w, d))).map(|(w, d)| s.district_items(w, d).len()).sum();
        let mean = n as f64 / 5000.0;
        let expect = 200.0 * 3125.0 / 100_000.0;
        assert!((mean - expect).abs() < 0.2, "mean {mean} vs {expect}");
    }

    /// The file pages of one transaction run by a single client: its CUSTOMER warehouse
    /// and the STOCK leaves it read.
    fn one_client_transactions(p: &TpccParams, seed: u64) -> Vec<(u32, Vec<u32>)> {
        // Whole transactions from the first access on (no part-way first transaction).
        let q = TpccParams { clients: 1, quantum: 1, client_start: ClientStart::Lockstep, ..p.clone() };
        let v = all(q.clone(), seed);
        let t = q.trees(q.file_base(0));
        let mut out: Vec<(u32, Vec<u32>)> = Vec::new();
        let mut in_stock = false;
        for a in &v[q.anon_pages() as usize..] {
            if !a.is_file() {
                continue;
            }
            assert!(a.is_syscall(), "data files are read with pread()");
            let cust = t.customer.file_base..t.customer.file_base + t.customer.leaves * t.customer.block_pages;
            let stock = t.stock.file_base..t.stock.file_base + t.stock.leaves * t.stock.block_pages;
            if cust.contains(&a.page) {
                let w = (a.page - cust.start) / t.customer.block_pages / q.customer_leaves_per_warehouse();
                if in_stock || out.is_empty() || out.last().unwrap().0 != w {
                    out.push((w, Vec::new()));
                }
                in_stock = false;
            } else if stock.contains(&a.page) && (a.page - stock.start) % t.stock.block_pages == 0 {
                in_stock = true;
                out.last_mut().expect("CUSTOMER comes first").1.push((a.page - stock.start) / t.stock.block_pages);
            }
        }
        out
    }

    #[test]
    fn a_transaction_scans_its_warehouse_customers_then_each_item_in_every_warehouse() {
        // A cache of one leaf slot: every leaf read misses, so every leaf shows in the file.
        let p = TpccParams { transactions: 12, ..small() };
        let p = TpccParams { wt_cache_pages: p.district_pages() + 8, ..p };
        let s = TpccSource::new(p.clone(), 4).unwrap();
        let per_wh = p.stock_leaves_per_warehouse();
        for (w, leaves) in one_client_transactions(&p, 4) {
            // The item blocks read are those of one district of w, in every warehouse, item
            // by item (index order), warehouse by warehouse within an item.
            let blocks = |l: &u32| l % per_wh;
            let d = (0..p.districts)
                .find(|&d| {
                    let mut want: Vec<u32> = Vec::new();
                    for &i in s.district_items(w, d) {
                        for wi in 0..p.warehouses {
                            want.push(wi * per_wh + i / p.stock_per_leaf());
                        }
                    }
                    // Consecutive fetches of one leaf are one read (the slot stays cached).
                    want.dedup();
                    want == leaves
                })
                .unwrap_or_else(|| panic!("warehouse {w}: STOCK leaves {:?} match no district", leaves.iter().map(blocks).collect::<Vec<_>>()));
            assert!(d < p.districts);
        }
    }

    #[test]
    fn warehouse_plan_reads_the_whole_warehouse_stock() {
        let p = TpccParams { stock_plan: StockPlan::WarehouseIndex, transactions: 8, ..small() };
        let p = TpccParams { wt_cache_pages: p.district_pages() + 8, ..p };
        let per_wh = p.stock_leaves_per_warehouse();
        let txns = one_client_transactions(&p, 2);
        assert_eq!(txns.len(), 8);
        for (w, leaves) in txns {
            assert_eq!(leaves, (w * per_wh..(w + 1) * per_wh).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_miss_reads_the_block_and_rewrites_a_slot_a_hit_reads_the_slot() {
        let p = small();
        let v = all(p.clone(), 7);
        let t = p.trees(p.file_base(0));
        let slots = p.district_pages()..p.wt_cache_pages;
        let mut i = p.anon_pages() as usize;
        let (mut misses, mut hits) = (0, 0);
        while i < v.len() {
            let a = v[i];
            if a.is_file() {
                let tree =
                    [t.stock, t.customer, t.customer_w, t.stock_index].into_iter().find(|x| (x.file_base..x.file_base + x.leaves * x.block_pages).contains(&a.page)).unwrap();
                assert_eq!((a.page - tree.file_base) % tree.block_pages, 0, "a block starts at its first page");
                let n = tree.block_pages as usize;
                assert!(v[i..i + n].iter().enumerate().all(|(k, b)| b.is_file() && b.page == a.page + k as u32));
                let img = &v[i + n..i + n + tree.image_pages as usize];
                assert!(img.iter().all(|b| b.is_write() && !b.is_file() && slots.contains(&b.page)));
                assert_eq!(img[0].page % 8, (p.district_pages() % 8), "an image starts a slot");
                misses += 1;
                i += n + tree.image_pages as usize;
            } else {
                if slots.contains(&a.page) && !a.is_write() {
                    hits += 1;
                }
                i += 1;
            }
        }
        assert!(misses > 100 && hits > 100, "{misses} misses, {hits} hits");
    }

    #[test]
    fn clients_interleave() {
        // With 4 clients in quanta of 50 accesses, consecutive CUSTOMER reads switch
        // warehouse far more often than 32 transactions would alone.
        let p = small();
        let v = all(p.clone(), 9);
        let t = p.trees(p.file_base(0));
        let cust = t.customer.file_base..t.customer.file_base + t.customer.leaves * t.customer.block_pages;
        let per = t.customer.block_pages * p.customer_leaves_per_warehouse();
        let ws: Vec<u32> = v.iter().filter(|a| cust.contains(&a.page)).map(|a| (a.page - cust.start) / per).collect();
        let switches = ws.windows(2).filter(|x| x[0] != x[1]).count();
        assert!(switches > 40, "{switches} warehouse switches");
    }

    #[test]
    fn invalid_parameters_are_errors() {
        let e = TpccParams { wt_cache_pages: 10, ..TpccParams::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("wt_cache_pages"), "{e}");
        let e = TpccParams { warehouses: 0, ..TpccParams::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("warehouses"), "{e}");
        let e = TpccParams { read_replicas: 4, ..TpccParams::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("read_replicas"), "{e}");
        let e = TpccParams { items: 200_000, ..TpccParams::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("items"), "{e}");
        let e = TpccParams { customer_doc_bytes: 40_000, ..TpccParams::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("customer_doc_bytes"), "{e}");
        let e = TpccParams { transactions: 0, ..TpccParams::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("transactions"), "{e}");
    }
}
