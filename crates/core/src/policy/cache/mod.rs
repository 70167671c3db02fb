//! `cache:<algo>`: a reference cache replacement algorithm (`reclaimlab-cache`) as the
//! reclaim policy of the simulated machine — "what if the kernel evicted with ARC".
//!
//! The kernel's machinery stays: the fault path, watermarks, kswapd / direct / memcg
//! limit reclaim and their `shrink_node_memcgs` walk, and `shrink_folio_list` (dirty
//! file folios go to writeback, anon needs a swap slot, unmapping, freeing). What the
//! policy decides is which folios reclaim isolates: it asks the lruvec's algorithm for
//! victims one at a time ([`reclaimlab_cache::evict::Evict`]).
//!
//! How the algorithm sees the workload (docs/model.md, "Cache algorithms as the reclaim
//! policy"):
//! - A fault is a miss: the folio enters the algorithm when it joins the LRU
//!   (`folio_add_lru`); the algorithm's own ghost lists play the role of shadow entries.
//! - A `read()`/`write()` of a resident file page (`folio_mark_accessed`) is a hit. The
//!   `folio_mark_accessed` that `filemap_read` does right after faulting a folio in is
//!   part of that miss, not a second reference (it would make every page read once look
//!   reused: ARC's T2, LIRS's LIR set, CLOCK's reference bit).
//! - A mapped access only sets the PTE's accessed (young) bit, as hardware does; the
//!   algorithm learns of it when reclaim reaches that folio as a candidate: the young
//!   bit (or `PG_referenced`) is tested and cleared then (`folio_referenced`, with its
//!   rmap cost) and counts as one hit just before the algorithm decides.
//! - A folio `shrink_folio_list` could not free (dirty file folio sent to writeback,
//!   anon without swap space) re-enters the algorithm as a new reference (a ghost hit
//!   where the algorithm keeps ghosts), as the kernel re-activates such folios.
//! - One algorithm per lruvec (memcg × node), sized to the node's frames (a resident
//!   set cannot reach that, so the algorithm never evicts on its own).
//!
//! Not modelled: no active/inactive split (every folio is accounted on its type's
//! inactive list, so `nr_active_*` stay 0), no `kswapd_age_node`, no isolation for
//! DAMOS or compaction (`folio_isolate_lru` fails: compaction migrates no LRU folio), no shadow entries (so no
//! `workingset_*` refault counters or workingset PSI stalls).
use reclaimlab_cache::evict::Evict;
use reclaimlab_cache::Algo;

use crate::mm::lruvec::{LruList, LruvecId};
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;
use crate::vmscan::{shrink_folio_list, shrink_node_memcgs, FolioReferences, Reclaimer, ScanControl, SWAP_CLUSTER_MAX};

pub struct CachePolicy {
    algo: Algo,
    lruvecs: Vec<Box<dyn Evict>>,
    /// Keys (page ids) the algorithms have room for.
    nr_keys: usize,
    /// Page id → its frame while the page is resident.
    pfn_of: Vec<Pfn>,
    isolated: Vec<Pfn>,
    /// The folio `folio_add_lru` just added, until the next `folio_mark_accessed`.
    added: Option<Pfn>,
}

impl CachePolicy {
    /// `algo` must evict on demand (its `reclaim` form in [`reclaimlab_cache::TABLE`]).
    pub fn new(algo: Algo) -> Self {
        CachePolicy { algo, lruvecs: Vec::new(), nr_keys: 0, pfn_of: Vec::new(), isolated: Vec::with_capacity(SWAP_CLUSTER_MAX as usize), added: None }
    }

    fn ensure_keys(&mut self, k: usize) {
        if k >= self.nr_keys {
            self.nr_keys = (k + 1).max(2 * self.nr_keys).max(1 << 12);
            for a in &mut self.lruvecs {
                a.grow(self.nr_keys);
            }
            self.pfn_of.resize(self.nr_keys, 0);
        }
    }

    /// Put a folio on the LRU and into its lruvec's algorithm (a miss, or a reference
    /// of a folio reclaim could not free).
    fn add(&mut self, mm: &mut Mm, pfn: Pfn) {
        let lv = mm.folio_lruvec(pfn);
        let k = mm.frames.page(pfn);
        self.ensure_keys(k as usize);
        self.pfn_of[k as usize] = pfn;
        let hit = self.lruvecs[lv as usize].access(k);
        debug_assert!(!hit, "page {k} was already in lruvec {lv}'s algorithm");
        lru_add(mm, lv, pfn);
    }

    /// Isolate victims of lruvec `lv` into `out` (the algorithm's order) until `nr` pages
    /// were taken (a THP is one key of 512 pages); returns the pages taken.
    fn isolate(&mut self, mm: &mut Mm, lv: LruvecId, nr: u64, sc: &mut ScanControl, out: &mut Vec<Pfn>) -> u64 {
        out.clear();
        let a = &mut self.lruvecs[lv as usize];
        let pfn_of = &self.pfn_of;
        let mut taken = 0;
        while taken < nr {
            let mut referenced = |k: u32| folio_referenced_at_scan(mm, pfn_of[k as usize], sc);
            let Some(k) = a.evict(&mut referenced) else { break };
            let pfn = pfn_of[k as usize];
            out.push(pfn);
            taken += lru_isolate(mm, lv, pfn);
        }
        taken
    }

    /// `shrink_lruvec`: isolate and reclaim in batches of `SWAP_CLUSTER_MAX` until
    /// `nr_to_reclaim` is met or `lru_size >> priority` folios were scanned (at least one
    /// batch, so a small lruvec is reclaimable at any priority).
    fn shrink_lruvec(&mut self, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl) {
        let mut budget = scan_budget(mm, lv, sc);
        let mut folios = std::mem::take(&mut self.isolated);
        while budget > 0 && sc.nr_reclaimed < sc.nr_to_reclaim {
            let n = self.isolate(mm, lv, budget.min(SWAP_CLUSTER_MAX), sc, &mut folios);
            if n == 0 {
                break;
            }
            budget = budget.saturating_sub(n);
            reclaim_batch(mm, self, lv, n, &mut folios, sc);
            for &pfn in &folios {
                self.add(mm, pfn);
            }
        }
        self.isolated = folios;
    }
}

impl ReclaimPolicy for CachePolicy {
    fn init_lruvec(&mut self, mm: &mut Mm, lv: LruvecId) {
        debug_assert_eq!(lv as usize, self.lruvecs.len());
        // folio_isolate_lru fails here, so compaction's migrate scanner cannot isolate
        // (and move) an LRU folio.
        mm.lru_folios_migratable = false;
        let frames: u64 = mm.nodes.iter().map(|n| n.nr_pages as u64).sum();
        let mut a = self.algo.build_evict(frames as usize + 1, self.nr_keys).unwrap_or_else(|| panic!("cache:{} cannot evict on demand", self.algo.name));
        a.grow(self.nr_keys);
        self.lruvecs.push(a);
    }

    fn folio_mark_accessed(&mut self, mm: &mut Mm, pfn: Pfn) {
        if self.added.take() != Some(pfn) && mm.frames.test(pfn, pg::LRU) {
            let lv = mm.folio_lruvec(pfn);
            let k = mm.frames.page(pfn);
            self.lruvecs[lv as usize].access(k);
        }
        mm.frames.clear(pfn, pg::IDLE);
    }

    fn workingset_refault(&mut self, _mm: &mut Mm, _pfn: Pfn, _shadow: u64) -> bool {
        false
    }

    fn folio_add_lru(&mut self, mm: &mut Mm, pfn: Pfn) {
        self.add(mm, pfn);
        self.added = Some(pfn);
    }

    fn workingset_eviction(&mut self, _mm: &mut Mm, _pfn: Pfn) -> u64 {
        0
    }

    /// The algorithm consumed the folio's references when it chose it.
    fn folio_check_references(&mut self, _mm: &mut Mm, _pfn: Pfn, _sc: &mut ScanControl) -> FolioReferences {
        FolioReferences::Reclaim
    }

    fn shrink_node(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl) {
        shrink_node_memcgs(mm, self, node, sc, |s, mm, lv, sc| s.shrink_lruvec(mm, lv, sc));
    }

    fn kswapd_age_node(&mut self, _mm: &mut Mm, _node: u16, _sc: &mut ScanControl) {}

    fn folio_isolate_lru(&mut self, _mm: &mut Mm, _pfn: Pfn) -> bool {
        false
    }

    fn folio_putback_lru(&mut self, mm: &mut Mm, pfn: Pfn) {
        self.add(mm, pfn)
    }

    fn folio_deactivate(&mut self, _mm: &mut Mm, _pfn: Pfn) {}

    /// `lru_add_split_folio`: the tail becomes a key of its own (a new reference:
    /// the algorithm has no position beside the head to give it).
    fn lru_add_split_folio(&mut self, mm: &mut Mm, head: Pfn, tail: Pfn) {
        let lv = mm.folio_lruvec(head);
        let k = mm.frames.page(tail);
        self.ensure_keys(k as usize);
        self.pfn_of[k as usize] = tail;
        self.lruvecs[lv as usize].access(k);
    }

    fn check_invariants(&self, mm: &Mm) -> Result<(), String> {
        check_lru_accounting(mm, "the algorithm", |lv| self.lruvecs[lv].len() as u64, self.lruvecs.len())
    }
}

// ---- The kernel side of a policy that picks reclaim's victims itself (cache:*, policy/ext/) ----

/// The inactive list of the folio's type: all folios of such a policy are accounted there.
pub(crate) fn lru_of(mm: &Mm, pfn: Pfn) -> LruList {
    LruList::of(mm.frames.is_file(pfn), false)
}

/// `lruvec_add_folio` with no active list: on the LRU, accounted on its type's inactive list.
pub(crate) fn lru_add(mm: &mut Mm, lv: LruvecId, pfn: Pfn) {
    mm.frames.clear(pfn, pg::ACTIVE);
    mm.update_lru_size(lv, lru_of(mm, pfn), mm.folio_nr_pages(pfn) as i64);
    mm.frames.set(pfn, pg::LRU);
}

/// Isolation of a victim: off the LRU, its pages counted as scanned; returns them (a THP
/// is one folio of 512).
pub(crate) fn lru_isolate(mm: &mut Mm, lv: LruvecId, pfn: Pfn) -> u64 {
    mm.frames.clear(pfn, pg::LRU);
    let lru = lru_of(mm, pfn);
    let nr_pages = mm.folio_nr_pages(pfn);
    mm.update_lru_size(lv, lru, -(nr_pages as i64));
    mm.vmstat.count(Ev::by_type(Ev::PgscanAnon, lru.is_file()), nr_pages);
    nr_pages
}

/// `folio_referenced` (its rmap cost for a mapped folio) + `PG_referenced` on a
/// candidate: a reference since the last look, tested and cleared.
pub(crate) fn folio_referenced_at_scan(mm: &mut Mm, pfn: Pfn, sc: &mut ScanControl) -> bool {
    let mut young = false;
    if mm.frames.test(pfn, pg::MAPPED) {
        sc.cost_ns += mm.cfg.cost.rmap_ns;
        young = mm.frames.test_and_clear(pfn, pg::YOUNG);
    }
    mm.frames.test_and_clear(pfn, pg::REFERENCED) | young
}

/// The pages one `shrink_lruvec` may take: `lru_size >> priority`, and at least one
/// batch, so a small lruvec is reclaimable at any priority.
pub(crate) fn scan_budget(mm: &Mm, lv: LruvecId, sc: &ScanControl) -> u64 {
    let l = &mm.lruvecs[lv as usize];
    let size = l.lru_size[LruList::InactiveAnon as usize] + l.lru_size[LruList::InactiveFile as usize];
    (size >> sc.priority.max(0)).max(size.min(SWAP_CLUSTER_MAX))
}

/// A batch of `n` isolated pages: counted as scanned by `sc`'s reclaimer, then
/// `shrink_folio_list`; `folios` keeps those it could not free. Returns the pages freed.
pub(crate) fn reclaim_batch<P: ReclaimPolicy>(mm: &mut Mm, policy: &mut P, lv: LruvecId, n: u64, folios: &mut Vec<Pfn>, sc: &mut ScanControl) -> u64 {
    let item = sc.pgscan_item();
    if sc.reclaimer != Reclaimer::Memcg {
        mm.vmstat.count(item, n);
    }
    mm.count_memcg_events(mm.lruvecs[lv as usize].memcg, item, n);
    let stat = shrink_folio_list(mm, policy, folios, sc);
    sc.nr_reclaimed += stat.nr_reclaimed;
    stat.nr_reclaimed
}

/// Each of the `nr_lruvecs` lruvecs accounts, all on its inactive lists, the pages of the
/// `held(lv)` folios `who` holds (a THP's head stands for 512 pages).
pub(crate) fn check_lru_accounting(mm: &Mm, who: &str, held: impl Fn(usize) -> u64, nr_lruvecs: usize) -> Result<(), String> {
    let mut large = vec![0u64; nr_lruvecs];
    for pfn in 0..mm.pfn_end {
        if mm.frames.test(pfn, pg::LRU) && mm.frames.test(pfn, pg::HEAD) {
            large[mm.folio_lruvec(pfn) as usize] += mm.folio_nr_pages(pfn) - 1;
        }
    }
    for (lv, large) in large.iter().enumerate() {
        let l = &mm.lruvecs[lv];
        let accounted = l.lru_size[LruList::InactiveAnon as usize] + l.lru_size[LruList::InactiveFile as usize];
        let n = held(lv);
        if n + large != accounted {
            return Err(format!("lruvec {lv}: {who} holds {n} folios ({} pages), the LRU accounts {accounted}", n + large));
        }
        let active = l.lru_size[LruList::ActiveAnon as usize] + l.lru_size[LruList::ActiveFile as usize];
        if active != 0 {
            return Err(format!("lruvec {lv}: {active} folios accounted active"));
        }
    }
    Ok(())
}
