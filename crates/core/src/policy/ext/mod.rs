//! Bring your own policy: cache_ext's hooks (SOSP '25, "cache_ext: Customizing the Page
//! Cache with eBPF") as the reclaim policy of the simulated machine, with the eviction
//! decisions delegated to an out-of-tree policy ([`CacheExtOps`]: Rust, or Python through
//! the bindings' bridge). docs/plugins.md is the user's guide.
//!
//! Followed version: the `artifact` branch of github.com/cache-ext/linux-cache-ext
//! (7442a9276, Aug 2025; the SOSP '25 artifact): `struct cache_ext_ops` in
//! include/linux/mm_types.h, `__cache_ext_isolate_and_reclaim` and its call in
//! `shrink_lruvec` (mm/vmscan.c), the hooks in mm/filemap.c and mm/swap.c.
//!
//! What this file owns: [`ExtPolicy`] ([`abi`] is the C ABI of policies in a shared
//! library), a [`ReclaimPolicy`] built like `cache:*`
//! (policy/cache/): one policy instance per lruvec (memcg × node), every folio of the
//! lruvec in its set, the kernel's machinery unchanged (fault path, watermarks, kswapd,
//! direct and memcg reclaim with the `shrink_node_memcgs` walk, `shrink_folio_list`).
//! The hooks, named as in cache_ext and said when they run:
//! - `init` — a lruvec is created (machine build, or a trace naming a new cgroup).
//! - `folio_added` — a folio joins the LRU (`folio_add_lru`; cache_ext: `__filemap_add_folio`).
//! - `folio_accessed` — what the kernel sees: `folio_mark_accessed` (a `read()` of a
//!   resident page; not the one `filemap_read` does on the folio it just added, which is
//!   part of the miss, as for `cache:*`), and a PTE accessed bit or `PG_referenced`
//!   harvested by reclaim (`folio_referenced`, with its rmap cost) from a candidate the
//!   policy or the fallback LRU named; such a candidate is kept, not evicted (second
//!   chance), and the policy is asked again.
//! - `folio_removed` — the folio left the policy's set: reclaim isolated it (cache_ext:
//!   `folio_evicted` when it leaves the page cache). A folio `shrink_folio_list` could not
//!   free (dirty, no swap slot) comes back through `folio_added`, as `cache:*` re-adds it.
//! - `admit_folio` — before `folio_added`; false keeps the folio out of the policy's set
//!   (cache_ext's return value is the inverse: true bypasses the cache). A refused folio
//!   is still read into memory (the simulator has no direct I/O path) but is reclaimed
//!   first, before the policy is asked (a drop-behind folio).
//! - `evict_folios` — reclaim wants `request_nr_folios_to_evict` (≤ 32, cache_ext's
//!   `folios_to_evict[32]`) folios of this lruvec; the policy names candidates.
//!
//! Batched delivery: `folio_added`/`folio_accessed`/`folio_removed` are appended to a flat
//! per-lruvec buffer and handed over in order by [`CacheExtOps::events`] just before each
//! `evict_folios` or `admit_folio` call (and when the buffer holds [`EVENTS_MAX`]), so a
//! Python policy costs one call per batch, not one per access. As cache_ext skips a NULL
//! hook, a policy without `admit_folio` is not asked (nor handed the buffer at each
//! fault), and one without `folio_accessed` gets no access events
//! ([`CacheExtOps::has_admit_folio`], [`CacheExtOps::has_folio_accessed`]).
//!
//! Fallback (cache_ext `shrink_lruvec`, artifact branch): the policy's pass runs in
//! batches of 32 while the scan budget lasts and reclaim is short; if the pages it
//! reclaimed are at most 80 % of what this lruvec was asked for (`threshold_pct = 80`),
//! the kernel's default order reclaims the rest of the budget. Here that default is an
//! LRU of the lruvec's folios kept beside the policy (second chance on the accessed bit,
//! as `cache:lru`); cache_ext falls back to the active/inactive lists. An `evict_folios`
//! call naming nothing ends the policy's pass. The pages each path reclaimed are
//! reported as the metrics `ext.policy_reclaimed_pages` and `ext.fallback_reclaimed_pages`.
//!
//! Errors, where cache_ext skips silently (`valid_folios_exists_unlocked`, isolation
//! failure): a candidate not in the lruvec's set ("not offered"), named twice in one
//! call, more than 32 candidates, or a hook failing (a Python exception) stop the run
//! with one line naming the hook and the folio. From that moment the user's policy is
//! not called again; the fallback LRU keeps the machine consistent until the run loop
//! returns the error ([`ReclaimPolicy::take_error`]).
//!
//! Not modelled, as for `cache:*`: no active/inactive split (`nr_active_*` stay 0), no
//! shadow entries (no `workingset_*` refaults), no isolation for DAMOS or compaction.
pub mod abi;

use reclaimlab_cache::list::{Links, List, NIL};

use crate::error::Error;
use crate::mm::lruvec::LruvecId;
use crate::mm::page::pg;
use crate::mm::page_alloc::Pfn;
use crate::mm::Mm;
use crate::policy::cache::{check_lru_accounting, folio_referenced_at_scan, lru_add, lru_isolate, reclaim_batch, scan_budget};
use crate::policy::ReclaimPolicy;
use crate::vmscan::{shrink_node_memcgs, FolioReferences, ScanControl, SWAP_CLUSTER_MAX};

/// A folio as a policy sees it: the trace's page id of its head page. Stable while the
/// page is evicted and read back (a policy can keep ghost entries by it, as cache_ext
/// policies key them by (mapping, index)).
pub type Folio = u32;

/// cache_ext's `ARRAY_SIZE(ctx->folios_to_evict)`: the most candidates one call names.
pub const EVICT_CTX_MAX: usize = 32;

/// Events buffered per lruvec before they are handed over unasked.
pub const EVENTS_MAX: usize = 1 << 16;

/// One buffered hook call: `folio << 2 | kind` (the layout the Python bridge passes on
/// as bytes of little-endian u64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Event(pub u64);

/// What an [`Event`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    Added = 0,
    Accessed = 1,
    Removed = 2,
}

impl Event {
    pub fn new(kind: EventKind, folio: Folio) -> Self {
        Event((folio as u64) << 2 | kind as u64)
    }
    pub fn kind(self) -> EventKind {
        match self.0 & 3 {
            0 => EventKind::Added,
            1 => EventKind::Accessed,
            _ => EventKind::Removed,
        }
    }
    pub fn folio(self) -> Folio {
        (self.0 >> 2) as Folio
    }
}

/// The lruvec a policy instance serves (`init`'s `struct mem_cgroup *memcg`).
#[derive(Clone, Debug)]
pub struct LruvecInfo {
    /// The memcg's name (`""` is the root).
    pub memcg: String,
    pub node: u16,
}

/// `struct cache_ext_eviction_ctx`: the request, and the candidates the policy names.
#[derive(Debug, Default)]
pub struct EvictionCtx {
    /// Input: how many folios reclaim wants from this lruvec (1..=32).
    pub request_nr_folios_to_evict: usize,
    /// Output: candidates, best first (at most [`EVICT_CTX_MAX`]).
    pub folios_to_evict: Vec<Folio>,
}

/// A reclaim policy written against cache_ext's hooks. One instance per lruvec (made by
/// the factory given to [`ExtPolicy::new`]); hooks run on the simulated kernel's
/// clock, never concurrently. A hook's `Err` stops the run with that message.
pub trait CacheExtOps: Send {
    /// `init(memcg)`: the instance is attached to a new lruvec.
    fn init(&mut self, _lruvec: &LruvecInfo) -> Result<(), String> {
        Ok(())
    }
    /// `evict_folios(ctx, memcg)`: name up to `ctx.request_nr_folios_to_evict` folios of
    /// this lruvec to evict (more are ignored once the request is met; at most 32).
    fn evict_folios(&mut self, ctx: &mut EvictionCtx) -> Result<(), String>;
    /// `folio_added(folio)`: a folio joined the lruvec.
    fn folio_added(&mut self, _folio: Folio) {}
    /// `folio_accessed(folio)`: `folio_mark_accessed` or a harvested accessed bit.
    fn folio_accessed(&mut self, _folio: Folio) {}
    /// `folio_removed(folio)`: the folio left the policy's set (reclaim took it).
    fn folio_removed(&mut self, _folio: Folio) {}
    /// `admit_folio`: true to track the folio (the default), false to have it reclaimed
    /// first without the policy hearing of it.
    fn admit_folio(&mut self, _folio: Folio) -> Result<bool, String> {
        Ok(true)
    }
    /// Whether `admit_folio` is implemented: if not, the engine neither calls it nor
    /// hands over the buffered hooks before it (cache_ext skips a NULL hook). The Python
    /// bridge answers from the class.
    fn has_admit_folio(&self) -> bool {
        true
    }
    /// Whether `folio_accessed` is implemented: if not, those events are not buffered.
    fn has_folio_accessed(&self) -> bool {
        true
    }
    /// The buffered hooks, in order. The default calls the three hooks one by one; the
    /// Python bridge overrides it to cross into Python once per batch. An error names
    /// the hook and the folio (`folio_accessed: folio 12: ...`).
    fn events(&mut self, events: &[Event]) -> Result<(), String> {
        for e in events {
            match e.kind() {
                EventKind::Added => self.folio_added(e.folio()),
                EventKind::Accessed => self.folio_accessed(e.folio()),
                EventKind::Removed => self.folio_removed(e.folio()),
            }
        }
        Ok(())
    }
}

/// Makes the policy instance for each lruvec.
pub type OpsFactory = Box<dyn FnMut(&LruvecInfo) -> Result<Box<dyn CacheExtOps>, String> + Send>;

/// Where a page stands with this policy.
const UNTRACKED: u8 = 0;
/// In the policy's set (and on the fallback LRU).
const TRACKED: u8 = 1;
/// Refused by `admit_folio`: on the drop-behind list only.
const REFUSED: u8 = 2;
/// Isolated by reclaim (until freed or put back).
const ISOLATED: u8 = 3;
/// Named by the `evict_folios` call being checked.
const CHECKED: u8 = 4;

struct Lv {
    ops: Option<Box<dyn CacheExtOps>>,
    /// `ops` implements `admit_folio`, `folio_accessed`.
    admit: bool,
    accessed: bool,
    /// The fallback order: head = most recently added or referenced.
    lru: List,
    /// Folios `admit_folio` refused, reclaimed first.
    refused: List,
    events: Vec<Event>,
}

pub struct ExtPolicy {
    /// The name the run reports (`python:mypol:MRU`, ...).
    name: String,
    factory: OpsFactory,
    lvs: Vec<Lv>,
    links: Links,
    /// Page id → its state (UNTRACKED...) and its frame while resident.
    state: Vec<u8>,
    pfn_of: Vec<Pfn>,
    /// Page id → the lruvec it was last added to.
    lv_of: Vec<LruvecId>,
    isolated: Vec<Pfn>,
    ctx: EvictionCtx,
    /// The folio `folio_add_lru` just added, until the next `folio_mark_accessed`.
    added: Option<Pfn>,
    error: Option<String>,
    policy_reclaimed: u64,
    fallback_reclaimed: u64,
    evict_calls: u64,
    evict_calls_empty: u64,
}

impl ExtPolicy {
    pub fn new(name: impl Into<String>, factory: OpsFactory) -> Self {
        ExtPolicy {
            name: name.into(),
            factory,
            lvs: Vec::new(),
            links: Links::new(0),
            state: Vec::new(),
            pfn_of: Vec::new(),
            lv_of: Vec::new(),
            isolated: Vec::with_capacity(SWAP_CLUSTER_MAX as usize),
            ctx: EvictionCtx { request_nr_folios_to_evict: 0, folios_to_evict: Vec::with_capacity(EVICT_CTX_MAX) },
            added: None,
            error: None,
            policy_reclaimed: 0,
            fallback_reclaimed: 0,
            evict_calls: 0,
            evict_calls_empty: 0,
        }
    }

    fn ensure_keys(&mut self, k: usize) {
        if k >= self.state.len() {
            let n = (k + 1).max(2 * self.state.len()).max(1 << 12);
            self.state.resize(n, UNTRACKED);
            self.pfn_of.resize(n, 0);
            self.lv_of.resize(n, LruvecId::MAX);
            self.links.grow(n);
        }
    }

    /// Record the first failure (later ones follow from it); the user's policy is not
    /// called again.
    fn fail(&mut self, hook: &str, msg: String) {
        if self.error.is_none() {
            let hook = if hook.is_empty() { String::new() } else { format!("{hook}: ") };
            self.error = Some(format!("policy {}: {hook}{msg}", self.name));
            for lv in &mut self.lvs {
                lv.ops = None;
                lv.events.clear();
            }
        }
    }

    fn push_event(&mut self, lv: LruvecId, kind: EventKind, k: Folio) {
        let l = &mut self.lvs[lv as usize];
        if l.ops.is_none() {
            return;
        }
        l.events.push(Event::new(kind, k));
        if l.events.len() >= EVENTS_MAX {
            self.flush(lv);
        }
    }

    /// Hand the buffered hooks of `lv` to its policy.
    fn flush(&mut self, lv: LruvecId) {
        let l = &mut self.lvs[lv as usize];
        let Some(ops) = l.ops.as_mut() else { return };
        if l.events.is_empty() {
            return;
        }
        let r = ops.events(&l.events);
        l.events.clear();
        if let Err(e) = r {
            // The error names the hook and the folio ([`CacheExtOps::events`]).
            self.fail("", e);
        }
    }

    /// The folio at `pfn` joining lruvec `lv`: its page id, with room made for it.
    fn key(&mut self, mm: &Mm, lv: LruvecId, pfn: Pfn) -> Folio {
        let k = mm.frames.page(pfn);
        self.ensure_keys(k as usize);
        self.pfn_of[k as usize] = pfn;
        self.lv_of[k as usize] = lv;
        k
    }

    /// Put a folio on the LRU: into the policy's set (after `admit_folio`), or on the
    /// drop-behind list if refused.
    fn add(&mut self, mm: &mut Mm, pfn: Pfn, ask_admission: bool) {
        let lv = mm.folio_lruvec(pfn);
        let k = self.key(mm, lv, pfn);
        let mut admit = true;
        if ask_admission && self.lvs[lv as usize].admit {
            self.flush(lv);
            if let Some(ops) = self.lvs[lv as usize].ops.as_mut() {
                match ops.admit_folio(k) {
                    Ok(a) => admit = a,
                    Err(e) => self.fail("admit_folio", format!("folio {k}: {e}")),
                }
            }
        }
        let l = &mut self.lvs[lv as usize];
        if admit {
            self.state[k as usize] = TRACKED;
            self.links.push_head(&mut l.lru, k);
            self.push_event(lv, EventKind::Added, k);
        } else {
            self.state[k as usize] = REFUSED;
            self.links.push_head(&mut l.refused, k);
        }
        lru_add(mm, lv, pfn);
    }

    /// A reference the kernel saw: the policy hears it, the fallback LRU moves it up.
    fn referenced_folio(&mut self, lv: LruvecId, k: Folio) {
        if self.state[k as usize] == TRACKED {
            self.links.move_to_head(&mut self.lvs[lv as usize].lru, k);
            if self.lvs[lv as usize].accessed {
                self.push_event(lv, EventKind::Accessed, k);
            }
        }
    }

    /// Take folio `k` off the LRU into `out` (isolation); returns its pages.
    fn isolate_one(&mut self, mm: &mut Mm, lv: LruvecId, k: Folio, out: &mut Vec<Pfn>) -> u64 {
        let pfn = self.pfn_of[k as usize];
        let l = &mut self.lvs[lv as usize];
        match self.state[k as usize] {
            TRACKED => {
                self.links.unlink(&mut l.lru, k);
                self.state[k as usize] = ISOLATED;
                self.push_event(lv, EventKind::Removed, k);
            }
            _ => {
                self.links.unlink(&mut l.refused, k);
                self.state[k as usize] = ISOLATED;
            }
        }
        out.push(pfn);
        lru_isolate(mm, lv, pfn)
    }

    /// From the tail of a kernel-kept list until `nr` pages were taken: the refused
    /// folios (oldest first, no second look), or the fallback LRU (the kernel's default
    /// order: second chance on a reference, which the policy hears).
    fn isolate_list(&mut self, mm: &mut Mm, lv: LruvecId, nr: u64, sc: &mut ScanControl, out: &mut Vec<Pfn>, refused: bool) -> u64 {
        let mut taken = 0;
        while taken < nr {
            let l = &self.lvs[lv as usize];
            let k = if refused { l.refused.tail } else { l.lru.tail };
            if k == NIL {
                break;
            }
            if !refused && folio_referenced_at_scan(mm, self.pfn_of[k as usize], sc) {
                self.referenced_folio(lv, k);
                continue;
            }
            taken += self.isolate_one(mm, lv, k, out);
        }
        taken
    }

    /// Ask the policy for candidates until `nr` pages were taken or it names nothing:
    /// `evict_folios` with the request, each candidate checked (an error names it), a
    /// referenced one kept (the policy hears `folio_accessed`), the others isolated.
    fn isolate_policy(&mut self, mm: &mut Mm, lv: LruvecId, nr: u64, sc: &mut ScanControl, out: &mut Vec<Pfn>) -> u64 {
        let mut taken = 0;
        while taken < nr {
            self.flush(lv);
            let mut ctx = std::mem::take(&mut self.ctx);
            ctx.request_nr_folios_to_evict = (nr - taken).min(EVICT_CTX_MAX as u64) as usize;
            ctx.folios_to_evict.clear();
            let Some(ops) = self.lvs[lv as usize].ops.as_mut() else {
                self.ctx = ctx;
                break;
            };
            self.evict_calls += 1;
            let r = ops.evict_folios(&mut ctx);
            let named = ctx.folios_to_evict.len();
            let checked = match r {
                Err(e) => Err(e),
                Ok(()) if named > EVICT_CTX_MAX => Err(format!("returned {named} folios; the eviction context holds {EVICT_CTX_MAX}")),
                Ok(()) => self.check_candidates(lv, &ctx.folios_to_evict),
            };
            if let Err(e) = checked {
                self.ctx = ctx;
                self.fail("evict_folios", e);
                break;
            }
            if named == 0 {
                self.evict_calls_empty += 1;
                self.ctx = ctx;
                break;
            }
            for &k in &ctx.folios_to_evict {
                if taken >= nr {
                    break;
                }
                if folio_referenced_at_scan(mm, self.pfn_of[k as usize], sc) {
                    self.referenced_folio(lv, k);
                    continue;
                }
                taken += self.isolate_one(mm, lv, k, out);
            }
            self.ctx = ctx;
        }
        taken
    }

    /// Every candidate is a folio in the lruvec's set, named once.
    fn check_candidates(&mut self, lv: LruvecId, folios: &[Folio]) -> Result<(), String> {
        let mut res = Ok(());
        let mut marked = 0;
        for (i, &k) in folios.iter().enumerate() {
            let here = self.lv_of.get(k as usize) == Some(&lv);
            match self.state.get(k as usize) {
                Some(&TRACKED) if here => {
                    // Marked while checking, so a repeat is caught; undone below.
                    self.state[k as usize] = CHECKED;
                    marked = i + 1;
                }
                Some(&CHECKED) if here => {
                    res = Err(format!("returned folio {k} twice"));
                    break;
                }
                _ => {
                    res = Err(format!("returned folio {k}, which it was not offered (not in this lruvec's set)"));
                    break;
                }
            }
        }
        for &k in &folios[..marked] {
            if self.state[k as usize] == CHECKED {
                self.state[k as usize] = TRACKED;
            }
        }
        res
    }

    /// `shrink_lruvec`: refused folios, then the policy's pass in batches of
    /// `SWAP_CLUSTER_MAX`, then cache_ext's fallback, each until `nr_to_reclaim` is met or
    /// `lru_size >> priority` pages were taken (at least one batch).
    fn shrink_lruvec(&mut self, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl) {
        let budget0 = scan_budget(mm, lv, sc);
        let want = budget0.min(sc.nr_to_reclaim.saturating_sub(sc.nr_reclaimed));
        let mut budget = budget0;
        let mut from_policy = 0;
        for pass in [Pass::Refused, Pass::Policy, Pass::Fallback] {
            if pass == Pass::Fallback {
                // cache_ext: reclaim_pct > threshold_pct (80) ends shrink_lruvec.
                if 100 * from_policy > 80 * want {
                    break;
                }
                budget = budget0.saturating_sub(from_policy);
            }
            let reclaimed = self.reclaim_pass(mm, lv, sc, pass, &mut budget);
            match pass {
                Pass::Refused => {}
                Pass::Policy => {
                    from_policy = reclaimed;
                    self.policy_reclaimed += reclaimed;
                }
                Pass::Fallback => self.fallback_reclaimed += reclaimed,
            }
        }
    }

    /// One pass of isolate + `shrink_folio_list` batches; returns the pages reclaimed.
    fn reclaim_pass(&mut self, mm: &mut Mm, lv: LruvecId, sc: &mut ScanControl, pass: Pass, budget: &mut u64) -> u64 {
        let mut folios = std::mem::take(&mut self.isolated);
        let mut reclaimed = 0;
        while *budget > 0 && sc.nr_reclaimed < sc.nr_to_reclaim {
            folios.clear();
            let nr = (*budget).min(SWAP_CLUSTER_MAX);
            let n = match pass {
                Pass::Refused => self.isolate_list(mm, lv, nr, sc, &mut folios, true),
                Pass::Policy => self.isolate_policy(mm, lv, nr, sc, &mut folios),
                Pass::Fallback => self.isolate_list(mm, lv, nr, sc, &mut folios, false),
            };
            if n == 0 {
                break;
            }
            *budget = budget.saturating_sub(n);
            reclaimed += reclaim_batch(mm, self, lv, n, &mut folios, sc);
            for &pfn in &folios {
                // Not freed: back on the LRU, a new folio for the policy.
                let k = mm.frames.page(pfn);
                self.state[k as usize] = UNTRACKED;
                self.add(mm, pfn, false);
            }
        }
        self.isolated = folios;
        reclaimed
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Refused,
    Policy,
    Fallback,
}

impl ReclaimPolicy for ExtPolicy {
    fn init_lruvec(&mut self, mm: &mut Mm, lv: LruvecId) {
        debug_assert_eq!(lv as usize, self.lvs.len());
        // folio_isolate_lru fails here (as for cache:*), so compaction cannot move an
        // LRU folio behind the policy's back.
        mm.lru_folios_migratable = false;
        let l = &mm.lruvecs[lv as usize];
        let info = LruvecInfo { memcg: mm.memcgs[l.memcg as usize].name.clone(), node: l.node };
        self.lvs.push(Lv { ops: None, admit: false, accessed: false, lru: List::default(), refused: List::default(), events: Vec::new() });
        if self.error.is_some() {
            return;
        }
        let ops = (self.factory)(&info).and_then(|mut ops| ops.init(&info).map(|()| ops));
        match ops {
            Ok(ops) => {
                let l = &mut self.lvs[lv as usize];
                (l.admit, l.accessed) = (ops.has_admit_folio(), ops.has_folio_accessed());
                l.ops = Some(ops);
            }
            Err(e) => self.fail("init", format!("memcg '{}' node {}: {e}", info.memcg, info.node)),
        }
    }

    fn folio_mark_accessed(&mut self, mm: &mut Mm, pfn: Pfn) {
        if self.added.take() != Some(pfn) && mm.frames.test(pfn, pg::LRU) {
            let lv = mm.folio_lruvec(pfn);
            self.referenced_folio(lv, mm.frames.page(pfn));
        }
        mm.frames.clear(pfn, pg::IDLE);
    }

    fn workingset_refault(&mut self, _mm: &mut Mm, _pfn: Pfn, _shadow: u64) -> bool {
        false
    }

    fn folio_add_lru(&mut self, mm: &mut Mm, pfn: Pfn) {
        self.add(mm, pfn, true);
        self.added = Some(pfn);
    }

    fn workingset_eviction(&mut self, mm: &mut Mm, pfn: Pfn) -> u64 {
        let k = mm.frames.page(pfn) as usize;
        if k < self.state.len() {
            self.state[k] = UNTRACKED;
        }
        0
    }

    /// The candidate's references were consumed when it was chosen.
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
        self.add(mm, pfn, false)
    }

    fn folio_deactivate(&mut self, _mm: &mut Mm, _pfn: Pfn) {}

    /// `lru_add_split_folio`: the tail becomes a folio of its own, just added.
    fn lru_add_split_folio(&mut self, mm: &mut Mm, head: Pfn, tail: Pfn) {
        let lv = mm.folio_lruvec(head);
        let k = self.key(mm, lv, tail);
        let h = mm.frames.page(head);
        if self.state[h as usize] == REFUSED {
            self.state[k as usize] = REFUSED;
            self.links.push_head(&mut self.lvs[lv as usize].refused, k);
        } else {
            self.state[k as usize] = TRACKED;
            self.links.push_head(&mut self.lvs[lv as usize].lru, k);
            self.push_event(lv, EventKind::Added, k);
        }
    }

    fn check_invariants(&self, mm: &Mm) -> Result<(), String> {
        let lvs = &self.lvs;
        check_lru_accounting(mm, "the extension policy", |lv| (lvs[lv].lru.len + lvs[lv].refused.len) as u64, lvs.len())?;
        for (lv, l) in self.lvs.iter().enumerate() {
            for (list, want) in [(&l.lru, TRACKED), (&l.refused, REFUSED)] {
                let mut k = list.head;
                while k != NIL {
                    let pfn = self.pfn_of[k as usize];
                    if self.state[k as usize] != want || self.lv_of[k as usize] != lv as LruvecId {
                        return Err(format!("lruvec {lv}: folio {k} on a list in state {}", self.state[k as usize]));
                    }
                    if !mm.frames.test(pfn, pg::LRU) || mm.frames.page(pfn) != k {
                        return Err(format!("lruvec {lv}: folio {k} listed but pfn {pfn} is not it on the LRU"));
                    }
                    k = self.links.next(k);
                }
            }
        }
        Ok(())
    }

    fn metrics(&self, _mm: &Mm) -> Vec<(String, f64)> {
        vec![
            ("ext.policy_reclaimed_pages".into(), self.policy_reclaimed as f64),
            ("ext.fallback_reclaimed_pages".into(), self.fallback_reclaimed as f64),
            ("ext.evict_folios_calls".into(), self.evict_calls as f64),
            ("ext.evict_folios_empty".into(), self.evict_calls_empty as f64),
        ]
    }

    fn take_error(&mut self) -> Option<Error> {
        self.error.take().map(Error::invalid)
    }
}
