//! The multi-generational LRU (MGLRU, mm/vmscan.c + mm/workingset.c v6.15; spec C).
//!
//! - [`lrugen`]: generations, folio gen/refs bits, add/del/promote primitives.
//! - [`aging`]: producing generations; the page-table walk and look-around.
//! - [`eviction`]: the reclaim paths, `sort_folio`, the oldest-generation scan.
//! - [`pid`]: the PID controller choosing type and tiers.
//! - [`memcg_lru`]: the memcg LRU that orders root reclaim over memcgs.
//! - [`host_time`]: host time of aging and eviction (benchmark only, not in results).
//! - [`mainline`]: the workingset hooks of v6.15 (eviction token, refault test) —
//!   the points patches change; [`refault_distance_rfc_v3`] is Kairui Song's RFC (2023,
//!   reconstructed) and [`refault_distance_2026`] its 2026 re-post. A variant implements
//!   [`MglruVariant`] overriding only what its patch changes; everything else is mainline.
//! - [`v6_6`]: MGLRU as v6.6 had it (`mglru@6.6`), a second base: every
//!   [`MglruVariant`] hook with v6.6's function (no v6.15 default reaches it), the points
//!   later patches change as [`v6_6::V66Hooks`], and Yu Zhao's "fix underprotected page
//!   cache" as one override set of them.
//! - [`v6_12`]: MGLRU as 6.12 stable has it (`mglru@6.12`): one override set of
//!   [`v6_6::V66Hooks`] on the v6.6 base, every later patch that reached 6.12.114+.

pub mod aging;
pub mod eviction;
pub mod host_time;
pub mod lrugen;
pub mod mainline;
pub mod memcg_lru;
pub mod pid;
pub mod refault_distance_2026;
pub mod refault_distance_rfc_v3;
#[cfg(test)]
mod tests;
pub mod v6_12;
pub mod v6_6;

use crate::mm::lruvec::LruvecId;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;
use crate::vmscan::{FolioReferences, ScanControl};
use lrugen::*;
use memcg_lru::{MemcgLru, MemcgLruOp, Seg};

/// The hook points of the MGLRU family: the kernel functions whose code differs between
/// the modelled kernels and patches. Defaults are v6.15, so a type implementing this
/// trait is a patch on `mglru@6.15`; the v6.6 base ([`v6_6::V66`]) overrides every hook,
/// and patches on it override [`v6_6::V66Hooks`] instead. Hooks without `self` are
/// called as `V::hook(..)` (static dispatch on the hot paths).
pub trait MglruVariant: Sized + Send + 'static {
    /// The model this one overrides ([`crate::policy::Based`]); a kernel version says "".
    const BASE: &'static str = "mglru@6.15";
    /// `lru_gen_eviction`: returns the shadow.
    fn lru_gen_eviction(&mut self, mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn) -> u64 {
        mainline::lru_gen_eviction(mm, lrugens, pfn)
    }
    /// `lru_gen_refault`: returns whether PG_workingset was restored.
    fn lru_gen_refault(&mut self, mm: &mut Mm, lrugens: &mut [LruGen], pfn: Pfn, shadow: u64) -> bool {
        mainline::lru_gen_refault(mm, lrugens, pfn, shadow)
    }
    /// `folio_mark_accessed` with MGLRU (`lru_gen_inc_refs`).
    fn lru_gen_inc_refs(mm: &mut Mm, pfn: Pfn) {
        lru_gen_inc_refs(mm, pfn)
    }
    /// `lru_gen_add_folio`.
    fn lru_gen_add_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, reclaiming: bool) {
        lru_gen_add_folio(mm, g, lv, pfn, reclaiming)
    }
    /// `get_pfn_folio`'s test of the folio's flags: v6.14+ ("mm/mglru: rework workingset
    /// protection") takes only folios on a generation list, so isolated ones are skipped;
    /// `can_swap` (the walk's, or look-around's `!folio_is_file_lru` of the folio it runs
    /// for) is no longer passed ("mm/mglru: rework aging feedback").
    #[inline]
    fn get_pfn_folio_flags_ok(flags: u32, _can_swap: bool) -> bool {
        flags_on_lru_gen(flags)
    }
    /// What the page-table walk and look-around do with a young PTE's folio.
    fn walk_update_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, new_gen: usize, walk: bool) {
        aging::walk_update_folio(mm, g, lv, pfn, new_gen, walk)
    }
    /// `inc_min_seq` (retiring the oldest generation during aging).
    fn inc_min_seq(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, ty: usize, swappiness: u32) {
        aging::inc_min_seq(mm, g, lv, ty, swappiness)
    }
    /// `should_run_aging`: (age, evictable pages before the priority shift).
    fn should_run_aging(g: &LruGen, swappiness: u32) -> (bool, u64) {
        eviction::should_run_aging(g, swappiness)
    }
    /// `try_to_inc_min_seq`.
    fn try_to_inc_min_seq(mm: &Mm, g: &mut LruGen, swappiness: u32) -> bool {
        eviction::try_to_inc_min_seq(mm, g, swappiness)
    }
    /// The first type `isolate_folios` scans, with its tier index when the type choice
    /// computed one.
    fn type_to_scan(g: &LruGen, swappiness: u32) -> (usize, Option<usize>) {
        (pid::get_type_to_scan(g, swappiness), None)
    }
    /// `get_tier_idx`.
    fn get_tier_idx(g: &LruGen, ty: usize) -> usize {
        pid::get_tier_idx(g, ty)
    }
    /// `sort_folio`: true = not for reclaim now.
    fn sort_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, tier_idx: usize, nr: &mut crate::vmscan::ScanNr) -> bool {
        eviction::sort_folio(mm, g, lv, pfn, tier_idx, nr)
    }
    /// `isolate_folio`.
    fn isolate_folio(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn) {
        eviction::isolate_folio(mm, g, lv, pfn)
    }
    /// The MGLRU side of `folio_check_references` (and of `shrink_folio_list` before it).
    fn folio_check_references(mm: &mut Mm, g: &mut LruGen, lv: LruvecId, pfn: Pfn, sc: &mut ScanControl) -> FolioReferences {
        eviction::check_references::<Self>(mm, g, lv, pfn, sc)
    }
    /// `evict_folios` on a folio `shrink_folio_list` rejected: true = retry it once (clean,
    /// may have missed `folio_rotate_reclaimable`); otherwise fix its flags for putback.
    fn rejected_folio(mm: &mut Mm, g: &LruGen, pfn: Pfn, skip_retry: bool) -> bool {
        eviction::rejected_folio(mm, g, pfn, skip_retry)
    }
    /// `try_to_shrink_lruvec` wakes the flushers when every file folio it took was
    /// unqueued dirty (v6.12+: "mm/vmscan: wake up flushers conditionally to avoid cgroup OOM").
    const WAKES_FLUSHERS: bool = true;
    /// `should_abort_scan` stops kswapd once every zone is above high + MIN_LRU_BATCH
    /// ("mm/mglru: try to stop at high watermarks", v6.7).
    const KSWAPD_STOPS_AT_HIGH_WMARK: bool = true;
    /// `set_initial_priority`'s lower clamp (DEF_PRIORITY / 2 since v6.10; 0 before).
    const MIN_INITIAL_PRIORITY: i32 = crate::vmscan::DEF_PRIORITY / 2;
    /// `shrink_one` before reclaiming: the memcg-LRU operation that skips this memcg,
    /// or `None` to reclaim it (v6.7+: below min → young; below low → tail once).
    fn shrink_one_skip(_sizable: bool, seg: Seg, below_min: bool, below_low: bool) -> Option<MemcgLruOp> {
        memcg_lru::shrink_one_skip(seg, below_min, below_low)
    }
    /// `shrink_one` after reclaiming: aged → young; otherwise stay while sizable, else
    /// one retry at the tail, then young ("mm/mglru: reclaim offlined memcgs harder").
    fn shrink_one_op(success: bool, sizable: bool, seg: Seg) -> MemcgLruOp {
        memcg_lru::shrink_one_op(success, sizable, seg)
    }
    /// Whether `shrink_many` reads the old generation again before each bin (v6.6) or
    /// once on entry, skipping memcgs that left it (as 6.12 and v6.15 do).
    const SHRINK_MANY_REREADS_GEN: bool = false;
    /// `lruvec_is_reclaimable`: the sequence whose birth kswapd's min_ttl test reads
    /// (v6.14+: the oldest evictable one).
    fn min_ttl_seq(g: &LruGen, swappiness: u32) -> u64 {
        evictable_min_seq(&g.min_seq, swappiness)
    }
}

/// Mainline v6.15.
pub struct Mainline;
impl MglruVariant for Mainline {
    const BASE: &'static str = "";
}

/// Counters of MGLRU's own work (reported as `lru_gen.*` metrics).
#[derive(Clone, Debug, Default)]
pub struct MglruStats {
    /// `try_to_inc_max_seq` calls from the eviction path.
    pub aging: u64,
    /// Simulated CPU time of aging (page-table walks), ns — part of the reclaimers' time.
    pub aging_ns: u64,
    /// Per lruvec: `try_to_inc_max_seq` calls from the eviction path, and root
    /// reclaim's `shrink_one` visits (how often the memcg LRU let reclaim reach it).
    pub lruvec_aging: Vec<u64>,
    pub lruvec_shrink_one: Vec<u64>,
}

pub struct Mglru<V: MglruVariant> {
    pub variant: V,
    pub lrugens: Vec<LruGen>,
    pub stats: MglruStats,
    /// The memcg LRU of root reclaim (every node).
    pub memcg_lru: MemcgLru,
    isolated: Vec<Pfn>,
    /// The bin drawn for the memcg whose lruvecs are coming online.
    online_bin: usize,
    /// Per node: where kswapd's `lru_gen_shrink_node`, which let the workload run at a
    /// batch boundary, goes on (eviction.rs).
    kswapd_resume: Vec<Option<eviction::Resume>>,
}

impl<V: MglruVariant> Mglru<V> {
    pub fn new(variant: V) -> Self {
        Mglru {
            variant,
            lrugens: Vec::new(),
            stats: MglruStats::default(),
            memcg_lru: MemcgLru::new(0),
            isolated: Vec::with_capacity(MIN_LRU_BATCH as usize),
            online_bin: 0,
            kswapd_resume: Vec::new(),
        }
    }
}

impl<V: MglruVariant> crate::policy::Based for Mglru<V> {
    const BASE: &'static str = V::BASE;
}

impl<V: MglruVariant> ReclaimPolicy for Mglru<V> {
    fn init_lruvec(&mut self, mm: &mut Mm, lv: LruvecId) {
        debug_assert_eq!(lv as usize, self.lrugens.len());
        let heads = mm.lists.alloc_heads(NR_LISTS);
        self.lrugens.push(LruGen::new(heads, mm.now));
        self.stats.lruvec_aging.push(0);
        self.stats.lruvec_shrink_one.push(0);
        // lru_gen_online_memcg: one random bin per memcg, the same on every node.
        let node = mm.lruvecs[lv as usize].node;
        if lv == 0 {
            self.memcg_lru = MemcgLru::new(mm.cfg.seed);
        }
        if node == 0 {
            self.online_bin = self.memcg_lru.random_bin();
        }
        self.memcg_lru.online(lv, node, self.online_bin);
    }

    /// `folio_mark_accessed` with MGLRU: `lru_gen_inc_refs`.
    fn folio_mark_accessed(&mut self, mm: &mut Mm, pfn: Pfn) {
        V::lru_gen_inc_refs(mm, pfn);
        mm.frames.clear(pfn, pg::IDLE);
    }

    fn workingset_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: u64) -> bool {
        self.variant.lru_gen_refault(mm, &mut self.lrugens, pfn, shadow)
    }

    /// `folio_add_lru`: a folio faulted in through a mapping (`lru_gen_in_fault`) is
    /// added with PG_active; then `lru_gen_add_folio`.
    fn folio_add_lru(&mut self, mm: &mut Mm, pfn: Pfn) {
        if mm.lru_gen_in_fault(pfn) {
            mm.frames.set(pfn, pg::ACTIVE);
        }
        let lv = mm.folio_lruvec(pfn);
        V::lru_gen_add_folio(mm, &mut self.lrugens[lv as usize], lv, pfn, false);
    }

    fn workingset_eviction(&mut self, mm: &mut Mm, pfn: Pfn) -> u64 {
        self.variant.lru_gen_eviction(mm, &mut self.lrugens, pfn)
    }

    fn folio_check_references(&mut self, mm: &mut Mm, pfn: Pfn, sc: &mut ScanControl) -> FolioReferences {
        let lv = mm.folio_lruvec(pfn);
        V::folio_check_references(mm, &mut self.lrugens[lv as usize], lv, pfn, sc)
    }

    fn shrink_node(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl) {
        Mglru::shrink_node(self, mm, node, sc)
    }

    fn kswapd_age_node(&mut self, mm: &mut Mm, node: u16, sc: &mut ScanControl) {
        self.age_node(mm, node, sc)
    }

    /// `lru_gen.aging_runs` (aging from the eviction path), `lru_gen.aging_cpu_s` (its
    /// simulated CPU, included in kswapd/direct/memcg reclaim time), and the root memcg's
    /// generation window on node 0 (`lru_gen.max_seq`, `lru_gen.min_seq_anon/file`), and
    /// how often node 0's memcg LRU turned over (`lru_gen.memcg_lru_seq`, `memcg_lru.seq`).
    /// Per non-root cgroup, on node 0: `memcg.<name>.lru_gen.max_seq` (3 + how often it aged),
    /// `memcg.<name>.lru_gen.aging_runs`, `memcg.<name>.lru_gen.shrink_one` (root reclaim's
    /// visits: zero once the memcg LRU stops turning over and leaves it in the young
    /// generation) and `memcg.<name>.lru_gen.memcg_lru_young` (its moves to the young
    /// generation).
    fn metrics(&self, mm: &Mm) -> Vec<(String, f64)> {
        let g = &self.lrugens[mm.lruvec_id(crate::mm::memcontrol::ROOT_MEMCG, 0) as usize];
        let mut per_memcg = Vec::new();
        for (memcg, m) in mm.memcgs.iter().enumerate().skip(1) {
            let lv = mm.lruvec_id(memcg as crate::mm::memcontrol::MemcgId, 0) as usize;
            let name = &m.name;
            per_memcg.push((format!("memcg.{name}.lru_gen.max_seq"), self.lrugens[lv].max_seq as f64));
            per_memcg.push((format!("memcg.{name}.lru_gen.aging_runs"), self.stats.lruvec_aging[lv] as f64));
            per_memcg.push((format!("memcg.{name}.lru_gen.shrink_one"), self.stats.lruvec_shrink_one[lv] as f64));
            per_memcg.push((format!("memcg.{name}.lru_gen.memcg_lru_young"), self.memcg_lru.young_moves(lv as LruvecId) as f64));
        }
        let mut v = vec![
            ("lru_gen.aging_runs".into(), self.stats.aging as f64),
            ("lru_gen.aging_cpu_s".into(), self.stats.aging_ns as f64 / 1e9),
            ("lru_gen.max_seq".into(), g.max_seq as f64),
            ("lru_gen.min_seq_anon".into(), g.min_seq[LRU_GEN_ANON] as f64),
            ("lru_gen.min_seq_file".into(), g.min_seq[LRU_GEN_FILE] as f64),
            ("lru_gen.memcg_lru_seq".into(), self.memcg_lru.seq(0) as f64),
        ];
        v.extend(per_memcg);
        v
    }

    fn folio_isolate_lru(&mut self, mm: &mut Mm, pfn: Pfn) -> bool {
        if !mm.frames.test(pfn, pg::LRU) {
            return false;
        }
        let lv = mm.folio_lruvec(pfn);
        lru_gen_del_folio(mm, &mut self.lrugens[lv as usize], lv, pfn, false);
        true
    }

    fn folio_putback_lru(&mut self, mm: &mut Mm, pfn: Pfn) {
        let lv = mm.folio_lruvec(pfn);
        V::lru_gen_add_folio(mm, &mut self.lrugens[lv as usize], lv, pfn, false);
    }

    /// `lru_deactivate` with MGLRU: every folio counts as active; it is re-added
    /// (`lru_gen_add_folio`) with `PG_active`/`PG_referenced` cleared.
    fn folio_deactivate(&mut self, mm: &mut Mm, pfn: Pfn) {
        if !mm.frames.test(pfn, pg::LRU) || mm.frames.test(pfn, pg::UNEVICTABLE) {
            return;
        }
        let lv = mm.folio_lruvec(pfn);
        lru_gen_del_folio(mm, &mut self.lrugens[lv as usize], lv, pfn, false);
        mm.frames.clear(pfn, pg::ACTIVE | pg::REFERENCED);
        V::lru_gen_add_folio(mm, &mut self.lrugens[lv as usize], lv, pfn, false);
        mm.count_lruvec_events(lv, crate::mm::vmstat::Ev::Pgdeactivate, mm.folio_nr_pages(pfn));
    }

    /// `lru_move_tail` with MGLRU: `lru_gen_del_folio`, PG_active cleared,
    /// `lru_gen_add_folio(.., reclaiming)` — the oldest generation's tail; PGROTATED.
    fn folio_rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        if mm.frames.test(pfn, pg::UNEVICTABLE) {
            return;
        }
        let lv = mm.folio_lruvec(pfn);
        lru_gen_del_folio(mm, &mut self.lrugens[lv as usize], lv, pfn, false);
        mm.frames.clear(pfn, pg::ACTIVE);
        V::lru_gen_add_folio(mm, &mut self.lrugens[lv as usize], lv, pfn, true);
        mm.vmstat.count(crate::mm::vmstat::Ev::Pgrotated, mm.folio_nr_pages(pfn));
    }

    fn lru_add_split_folio(&mut self, mm: &mut Mm, head: Pfn, tail: Pfn) {
        let lv = mm.folio_lruvec(head);
        list_add_split_tail(mm, &self.lrugens[lv as usize], head, tail);
    }

    fn check_invariants(&self, mm: &Mm) -> Result<(), String> {
        for (lv, g) in self.lrugens.iter().enumerate() {
            for ty in 0..2 {
                let n = g.nr_gens(ty);
                if !(MIN_NR_GENS..=MAX_NR_GENS).contains(&n) {
                    return Err(format!("lruvec {lv} type {ty}: {n} generations (min_seq {}, max_seq {})", g.min_seq[ty], g.max_seq));
                }
                // lists of generations outside [min_seq, max_seq] are empty
                for gen in 0..MAX_NR_GENS as usize {
                    let live = (g.min_seq[ty]..=g.max_seq).any(|s| gen_from_seq(s) == gen);
                    if !live && !mm.lists.is_empty(g.head(gen, ty)) {
                        return Err(format!("lruvec {lv} type {ty}: folios on dead generation {gen}"));
                    }
                }
                for gen in 0..MAX_NR_GENS as usize {
                    // Pages by their GEN bits: a folio aging promoted in place still sits
                    // on its old generation's list.
                    let listed: i64 = (0..MAX_NR_GENS as usize)
                        .flat_map(|l| mm.lists.iter(g.head(l, ty)))
                        .filter(|&pfn| folio_lru_gen(mm, pfn) == Some(gen))
                        .map(|pfn| mm.folio_nr_pages(pfn) as i64)
                        .sum();
                    if listed != g.nr_pages[gen][ty] {
                        return Err(format!("lruvec {lv} type {ty} gen {gen}: {listed} pages listed, nr_pages {}", g.nr_pages[gen][ty]));
                    }
                }
                let counted: i64 = g.nr_pages.iter().map(|p| p[ty]).sum();
                // compat sizes: the two youngest generations are active
                let l = &mm.lruvecs[lv];
                let active: i64 = (0..MAX_NR_GENS as usize).filter(|&gen| g.is_active(gen)).map(|gen| g.nr_pages[gen][ty]).sum();
                if l.lru_size[2 * ty + 1] as i64 != active || (l.lru_size[2 * ty] + l.lru_size[2 * ty + 1]) as i64 != counted {
                    return Err(format!("lruvec {lv} type {ty}: lru sizes {:?} vs active {active} of {counted}", l.lru_size));
                }
            }
            for gen in 0..MAX_NR_GENS as usize {
                for ty in 0..2 {
                    for pfn in mm.lists.iter(g.head(gen, ty)) {
                        if !mm.frames.test(pfn, pg::LRU) || folio_lru_gen(mm, pfn).is_none() {
                            return Err(format!("pfn {pfn} on lruvec {lv} gen {gen} without LRU/gen bits"));
                        }
                        if folio_type(mm, pfn) != ty || mm.folio_lruvec(pfn) as usize != lv {
                            return Err(format!("pfn {pfn} on the wrong type/lruvec list"));
                        }
                        if mm.frames.test(pfn, pg::ACTIVE) {
                            return Err(format!("pfn {pfn} has PG_active on an MGLRU list"));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
