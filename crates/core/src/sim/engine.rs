//! The access loop and the fault path.
//!
//! Per access: advance the workload clock (the trace's gap, or `cost.access_ns`);
//! a resident page gets its PTE young bit set (mapped access) or goes through the
//! policy's `folio_mark_accessed` (read()/write() of a file page); a non-resident page
//! faults: charge the memcg (limit reclaim), allocate a frame (`__alloc_pages`,
//! sim/alloc.rs: fast path above low, wake kswapd, then min, then direct reclaim), read
//! it back (zram/SSD swap-in or a file read) or zero-fill it, consult the shadow entry
//! (`workingset_refault`), and add the folio to the LRU. The first fault of an anonymous
//! page may map a THP instead (sim/huge_memory.rs). kswapd and kcompactd run on their own
//! clocks and catch up whenever the workload clock passes them (checked once per access:
//! one compare in the hot loop).
//!
//! Hot-loop rule: dense page ids index flat arrays; no hashing or allocation per access.
//! Task placement: a trace's tasks of memcg `m` run on node `m % nr_nodes`, a program's
//! tasks on their own nodes (sim/process.rs); allocations try that node first, then the
//! others in order. khugepaged wakes on its own clock once a program maps anonymous
//! memory.

use super::process::Procs;
use super::results::Recorder;
use super::Engine;
use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::mm::lruvec::LruList;
use crate::mm::memcontrol::MemcgId;
use crate::mm::page::{is_resident, is_swap_pte, nonres_pte, pg, pinfo, pte_info, pte_swap_slot};
use crate::mm::page_alloc::{MigrateType, Pfn};
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::policy::ReclaimPolicy;
use crate::sim::alloc::{self, AllocCtx};
use crate::sim::khugepaged::Khugepaged;
use crate::sim::results::RunResult;
use crate::thp::gfp::{ThpEnabled, __GFP_NORETRY, GFP_HIGHUSER_MOVABLE};
use crate::thp::kcompactd::Kcompactd;
use crate::thp::{ThpState, HPAGE_PMD_NR};
use crate::vmscan::Kswapd;
use reclaimlab_trace::{flags, Access, AccessSource};

/// The nodes an allocation tries, home node first (`ZONELIST_FALLBACK` order by
/// distance; all remote nodes are equidistant in the model). A slice of a static
/// table: no allocation, no initialisation per allocation.
#[derive(Clone, Copy)]
pub(crate) struct Zonelist(&'static [u16]);

/// `MAX_NUMNODES` of the model (`machine.nodes` is 1..64).
const MAX_NUMNODES: usize = 64;

/// Row `n` holds `0..n` twice, so the nodes from `home` on, wrapping at `n`, are
/// `ZONELISTS[n][home..home + n]`.
static ZONELISTS: [[u16; 2 * MAX_NUMNODES]; MAX_NUMNODES + 1] = {
    let mut t = [[0u16; 2 * MAX_NUMNODES]; MAX_NUMNODES + 1];
    let mut n = 1;
    while n <= MAX_NUMNODES {
        let mut i = 0;
        while i < 2 * MAX_NUMNODES {
            t[n][i] = (i % n) as u16;
            i += 1;
        }
        n += 1;
    }
    t
};

impl Zonelist {
    pub(crate) fn new(home: u16, n: u16) -> Self {
        let (home, n) = (home as usize, n as usize);
        Zonelist(&ZONELISTS[n][home..home + n])
    }

    /// `__GFP_THISNODE`: the node alone.
    pub(crate) fn single(node: u16) -> Self {
        Zonelist(&ZONELISTS[MAX_NUMNODES][node as usize..node as usize + 1])
    }
}

impl std::ops::Deref for Zonelist {
    type Target = [u16];
    fn deref(&self) -> &[u16] {
        self.0
    }
}

/// Accesses decoded per batch.
const BATCH: usize = 1 << 16;

pub struct Machine<P: ReclaimPolicy> {
    pub mm: Mm,
    pub policy: P,
    pub kswapd: Vec<Kswapd>,
    /// kcompactd of each node (woken by high-order allocations and boosted kswapd passes).
    pub kcompactd: Vec<Kcompactd>,
    /// `transparent_hugepage/enabled` (after the boot default: `ThpConfig::enabled_on`).
    pub(crate) thp_enabled: ThpEnabled,
    /// kcompactd's proactive compaction (v5.9+): the THP policy's kernel decides.
    pub proactive: bool,
    /// khugepaged (crate::sim::khugepaged), dormant until a program maps anonymous memory.
    pub khugepaged: Khugepaged,
    /// A program's tasks and mappings (sim/process.rs); empty for a trace.
    pub procs: Procs,
    /// Workload clock, ns.
    pub now: u64,
    pub accesses: u64,
    pub(crate) rec: Recorder,
    /// trace cgroup id → memcg.
    pub(super) cgroup_map: Vec<MemcgId>,
    /// The trace's files and their readahead state (sim/filemap.rs).
    pub(super) filemap: super::filemap::Filemap,
    tick_ps: u64,
    access_ns: u64,
    /// `sim.trace_pacing=schedule` on a timed trace, and the time the next access is due.
    paced: bool,
    due: u64,
    pub(super) next_event: u64,
    pub(super) buf: Vec<Access>,
    /// The source's ops after its last record have run (reset by the next batch read).
    end_ops_done: bool,
    /// A source of tasks' clocks (sim/tasks.rs).
    pub(super) tasks: super::tasks::TaskClocks,
    /// The task of a source of tasks that runs now (`current`: its own
    /// `balance_dirty_pages` state, mm/writeback.rs); 0 for a trace.
    pub(super) current_task: usize,
    /// DAMON_RECLAIM's kdamond (`damon_reclaim.enabled`), on its own clock.
    pub damon: Option<crate::damon::Kdamond>,
    /// The monitoring-only kdamond of `sim.damon_record` and its snapshots.
    pub(crate) damon_rec: Option<super::damon_snapshots::DamonRecorder>,
    /// The moves of `machine.task_cpus` made so far.
    pub(super) task_cpu_moves: usize,
}

impl<P: ReclaimPolicy> Machine<P> {
    pub fn new(cfg: &SimConfig, mut policy: P) -> Self {
        let mut mm = Mm::new(cfg);
        ThpState::init(&mut mm);
        mm.thp.policy = crate::thp::policy::find(&cfg.thp.policy).ok().map(|e| e.policy);
        let proactive = mm.thp.policy.is_some_and(|p| p.proactive_compaction());
        for lv in 0..mm.lruvecs.len() as u32 {
            policy.init_lruvec(&mut mm, lv);
        }
        let kswapd = (0..mm.nr_nodes() as u16).map(|n| Kswapd::new(n, cfg.seed)).collect();
        let kcompactd = (0..mm.nr_nodes() as u16).map(|n| Kcompactd::new(&mm, n)).collect();
        // Where `machine.task_cpus` puts a trace's task at the start (its later moves are a
        // daemon's, sim/daemons.rs).
        let task_cpu_moves = cfg.task_cpus.iter().take_while(|&&(t, _)| t <= 0.0).count();
        if let Some(&(_, cpu)) = cfg.task_cpus[..task_cpu_moves].last() {
            mm.pcp.move_task(cpu);
        }
        let damon = cfg.damon_reclaim.enabled.then(|| cfg.damon_reclaim.on_clock(cfg.time_dilation).start(crate::damon::ops_paddr::damon_pa_system_ram(&mm), cfg.seed, 0));
        Machine {
            damon,
            damon_rec: super::damon_snapshots::DamonRecorder::new(cfg.damon_record, cfg.seed),
            rec: Recorder::new(cfg),
            mm,
            policy,
            kswapd,
            kcompactd,
            thp_enabled: cfg.thp.enabled_on(cfg.memory_bytes),
            proactive,
            khugepaged: Khugepaged::new(cfg),
            procs: Procs::new(cfg.nr_nodes as usize),
            now: 0,
            accesses: 0,
            cgroup_map: Vec::new(),
            filemap: super::filemap::Filemap::new(cfg.read_ahead_kb, cfg.fault_around_bytes, cfg.parallel_reads),
            tick_ps: 0,
            access_ns: cfg.cost.access_ns,
            paced: false,
            due: 0,
            next_event: 0,
            buf: Vec::with_capacity(BATCH),
            end_ops_done: false,
            tasks: Default::default(),
            current_task: 0,
            task_cpu_moves,
        }
    }

    /// Map the trace's new cgroup names to memcgs, creating unconfigured ones (no
    /// limits). Trace cgroup 0 is the root `""`, which is memcg 0.
    pub(super) fn sync_cgroups(&mut self, names: &[String]) {
        while self.cgroup_map.len() < names.len() {
            let name = &names[self.cgroup_map.len()];
            let id = match self.mm.memcg_by_name(name) {
                Some(id) => id,
                None => {
                    let id = self.mm.new_memcg(&crate::config::CgroupConfig::new(name));
                    for node in 0..self.mm.nr_nodes() as u16 {
                        let lv = self.mm.lruvec_id(id, node);
                        self.policy.init_lruvec(&mut self.mm, lv);
                    }
                    id
                }
            };
            self.cgroup_map.push(id);
        }
    }

    /// What `src` declares so far, before its records replay: its files (readahead state,
    /// shadow nodes), its page ids and its cgroups.
    pub(super) fn take_layout(&mut self, src: &dyn AccessSource) -> Result<()> {
        let files_end = self.filemap.load(&src.meta().files);
        self.mm.shadow_nodes.load(&src.meta().files);
        self.mm.pages.ensure((src.nr_pages_seen() as u64).max(files_end) as usize)?;
        self.sync_cgroups(src.cgroups_seen());
        if !self.mm.kernel_shmem_frames.is_empty() {
            self.place_kernel_shmem(src.meta().nr_pages)?;
        }
        Ok(())
    }

    /// The workload's own time before access `a`: a timed trace's gap (the time since the
    /// previous access; 0 is 0), or `cost.access_ns` for an untimed trace.
    #[inline(always)]
    pub(super) fn access_dt(&self, a: Access) -> u64 {
        if self.tick_ps != 0 {
            a.gap as u64 * self.tick_ps / 1000
        } else {
            self.access_ns
        }
    }

    /// Replay one access; `rest` is the rest of the batch (a read() of several pages
    /// continues there: [`Access::request_pages`]).
    #[inline(always)]
    pub(super) fn access(&mut self, a: Access, rest: &[Access]) -> Result<()> {
        let dt = self.access_dt(a);
        if self.paced {
            // sim.trace_pacing=schedule: the access is due at the sum of the gaps; a stall
            // before it only delays it until then (the program slept less).
            self.due += dt;
            self.now = self.now.max(self.due);
        } else {
            self.now += dt;
        }
        self.rec.baseline_ns += dt;
        self.access_page(a, rest)?;
        if self.now >= self.next_event {
            self.run_events()?;
        }
        Ok(())
    }

    /// [`Self::access`] after the clock: a hit or a fault, counted.
    #[inline(always)]
    pub(super) fn access_page(&mut self, a: Access, rest: &[Access]) -> Result<()> {
        let pfn = self.mm.pages.pte[a.page as usize];
        if is_resident(pfn) {
            let f = self.mm.frames.flags(pfn);
            if f & (pg::INFLIGHT | pg::READAHEAD) == 0 {
                self.touch_resident(a, pfn, f);
            } else {
                self.touch_readahead_page(a, pfn, f, rest);
            }
        } else {
            self.fault(a, pte_info(pfn), rest)?;
        }
        self.accesses += 1;
        Ok(())
    }

    /// Run the events due at the workload clock (a program's task switch).
    pub(super) fn catch_up_events(&mut self) -> Result<()> {
        if self.now >= self.next_event {
            self.run_events()?;
        }
        Ok(())
    }

    /// An access to a resident page: `folio_mark_accessed` for read() of a file page (a
    /// write() does not mark it: FGP_WRITEBEGIN has no FGP_ACCESSED, 6.12; [`Self::write_begin`]),
    /// else the PTE's accessed bit (a minor fault first if the page is not mapped); a
    /// write dirties it.
    #[inline(always)]
    pub(super) fn touch_resident(&mut self, a: Access, pfn: Pfn, f: u32) {
        if a.flags & flags::SYSCALL != 0 && f & pg::SWAPBACKED == 0 {
            if a.flags & flags::WRITE == 0 {
                self.filemap.last_read = a.page;
                self.policy.folio_mark_accessed(&mut self.mm, pfn);
            }
            self.mm.frames.set(pfn, pg::DAMON_ACCESSED);
        } else {
            if f & pg::MAPPED == 0 {
                // A cached page mapped for the first time: minor fault.
                if f & pg::SWAPBACKED == 0 {
                    self.map_cached_file_page(a, f);
                } else {
                    self.count_fault(a, Ev::Pgfault);
                    self.now += self.mm.cfg.cost.minor_fault_ns;
                }
            }
            if f & pg::COMPOUND == 0 {
                self.mm.frames.set(pfn, pg::MAPPED | pg::YOUNG | pg::DAMON_ACCESSED);
            } else {
                // A PMD-mapped THP's accessed bit is the PMD's, kept at its head (a THP is
                // one aligned pageblock): reclaim and aging test the folio there. A THP
                // mapped by PTEs since part of it was unmapped ages by its own PTEs.
                // DAMON reads the head either way.
                let young = self.mm.young_frame(pfn);
                self.mm.frames.set(pfn, pg::MAPPED | pg::DAMON_ACCESSED);
                self.mm.frames.set(young, pg::YOUNG);
                self.mm.frames.set(crate::thp::compaction::pageblock_start(pfn), pg::DAMON_ACCESSED);
            }
        }
        if a.flags & flags::WRITE != 0 && f & pg::DIRTY == 0 {
            self.mark_dirty(pfn);
        }
    }

    /// A write to a clean page: anon pages are dirty by nature; a file page gets its
    /// buffers (`Mm::attach_buffers`) and is accounted for the flusher, and the writer goes through `balance_dirty_pages` (which wakes
    /// the flusher above the background threshold and may pause the writer: mm/writeback.rs).
    #[inline(never)]
    pub(super) fn mark_dirty(&mut self, pfn: Pfn) {
        if !self.mm.frames.is_file(pfn) {
            self.mm.frames.set(pfn, pg::DIRTY);
            return;
        }
        // write_begin attaches the folio's buffers, write_end dirties it.
        self.mm.attach_buffers(pfn);
        self.mm.account_dirtied(pfn, self.now);
        let memcg = self.mm.frames.memcg(pfn);
        loop {
            let pause = self.mm.balance_dirty_pages(memcg, self.current_task, self.now);
            self.now += pause.ns;
            self.rec.dirty_throttle_ns += pause.ns;
            self.rec.off_cpu_ns += pause.ns;
            if !pause.again {
                break;
            }
            // Round the loop again: the writes completed and the statistics flushed
            // while it slept.
            self.end_writeback_due(self.now);
            self.mm.flush_memcg_stats_due(self.now);
        }
        // Writes were queued, or completed while the writer slept: see them at the end of
        // this access.
        self.next_event = self.next_event.min(self.now);
    }

    /// `folio_end_writeback` for every write the disk has completed by `now`, rotating
    /// PG_reclaim folios through the policy (`folio_rotate_reclaimable`).
    pub fn end_writeback_due(&mut self, now: u64) {
        while let Some((pfn, rotate)) = self.mm.folio_end_writeback_due(now) {
            if rotate {
                self.policy.folio_rotate_reclaimable(&mut self.mm, pfn);
            }
        }
    }

    /// A reclaimer invoked the OOM killer (MGLRU's min_ttl protection): end the run.
    pub(super) fn check_oom(&mut self) -> Result<()> {
        match self.mm.oom.take() {
            Some(why) => {
                self.mm.vmstat.count(Ev::OomKill, 1);
                Err(Error::oom(format!("{why} (at access #{})", self.accesses + 1)))
            }
            None => Ok(()),
        }
    }

    /// Nodes in allocation order for the running task (its home node first): a
    /// program's task runs on its own node, a trace's memcg `m` on node `m % nr_nodes`.
    #[inline]
    pub(crate) fn zonelist_nodes(&self, memcg: MemcgId) -> Zonelist {
        let n = self.mm.nr_nodes() as u16;
        let home = self.procs.cur_node().unwrap_or_else(|| if n == 1 { 0 } else { memcg % n });
        Zonelist::new(home, n)
    }

    /// The task's clock stalls on memory (direct/memcg reclaim, throttling).
    pub(crate) fn memstall(&mut self, ns: u64) {
        self.now += ns;
        self.rec.memstall_ns += ns;
    }

    /// `__alloc_pages` for one order-0 user page (sim/alloc.rs). With `noretry`
    /// (`__GFP_NORETRY`, readahead) the slow path gives up after one round of direct
    /// reclaim (None) instead of retrying and OOMing.
    #[inline]
    pub(crate) fn alloc_page_gfp(&mut self, memcg: MemcgId, noretry: bool) -> Result<Option<Pfn>> {
        let nodes = self.zonelist_nodes(memcg);
        let gfp = if noretry { GFP_HIGHUSER_MOVABLE | __GFP_NORETRY } else { GFP_HIGHUSER_MOVABLE };
        alloc::alloc_pages(self, gfp, 0, &nodes, MigrateType::Movable)
    }

    pub(crate) fn swap_state(&self) -> String {
        match self.mm.swap.device {
            crate::config::SwapDevice::None => "none".into(),
            _ if !self.mm.swap.has_free_slots() => format!("full ({} pages)", self.mm.swap.pages()),
            _ => format!("{} of {} pages used", self.mm.swap.used, self.mm.swap.pages()),
        }
    }

    /// A non-resident page is accessed: a file page is read (sim/filemap.rs); an anon
    /// page is swapped in or zero-filled.
    #[inline(never)]
    fn fault(&mut self, a: Access, info: u8, rest: &[Access]) -> Result<()> {
        self.kswapd_catch_up();
        self.check_oom()?;
        let page = a.page as usize;
        let first = info & pinfo::TOUCHED == 0;
        let file = if first { a.flags & flags::FILE != 0 } else { info & pinfo::FILE != 0 };
        if file {
            return self.file_fault(a, first, rest);
        }
        // A swap-in is charged to the memcg recorded at swap-out (swap_cgroup, kept in the
        // shadow). A first touch reads no other per-page array (docs/ARCHITECTURE.md).
        let shadow = if info & pinfo::SWAPPED != 0 { self.mm.pages.shadow(page) } else { 0 };
        let memcg = if shadow != 0 { crate::mm::workingset::unpack_shadow(shadow).0 } else { self.cgroup_map[a.cgroup as usize] };
        if first && self.thp_enabled != ThpEnabled::Never && self.do_huge_pmd_anonymous_page(a, memcg)? {
            return Ok(());
        }
        self.pte_alloc(a.page)?;
        let flags = pg::DAMON_ACCESSED | pg::SWAPBACKED | pg::MAPPED | pg::YOUNG;
        // The swap entry, read from the PTE before the fault maps the new folio there.
        let slot = (info & pinfo::SWAPPED != 0).then(|| self.mm.pages.swap_slot(page));
        let (_, restored) = self.add_folio(a.page, memcg, flags, a.flags & flags::WRITE != 0, false)?.expect("a retrying add returns a folio or an error");
        let (minor_ns, major_ns) = (self.mm.cfg.cost.minor_fault_ns, self.mm.cfg.cost.major_fault_ns);
        let (latency, major) = if let Some(slot) = slot {
            self.swap_in(slot);
            self.count_fault(a, Ev::Pgfault);
            self.count_fault(a, Ev::Pgmajfault);
            // zram decompresses on the faulting task's CPU; an SSD read is a wait.
            let dev = if self.mm.swap.is_zram() {
                self.mm.cfg.zram_decompress_ns
            } else {
                self.rec.off_cpu_ns += self.mm.cfg.ssd_read_ns;
                self.mm.cfg.ssd_read_ns
            };
            (major_ns + dev, true)
        } else {
            self.count_fault(a, Ev::Pgfault);
            (minor_ns, false)
        };
        self.fault_done(memcg, latency, major, restored, first)
    }

    /// The end of a fault that took `latency`: the task's clock, I/O wait for a `major`
    /// one, a PSI memory stall if it `restored` workingset folios (thrashing), the
    /// unlimited-memory baseline for a `first` touch, memory in use, and
    /// `mem_cgroup_handle_over_high` on the way back to user space.
    pub(super) fn fault_done(&mut self, memcg: MemcgId, latency: u64, major: bool, restored: bool, first: bool) -> Result<()> {
        self.now += latency;
        if major {
            self.rec.major_faults += 1;
            self.rec.io_wait_ns += latency;
        }
        if restored {
            self.rec.memstall_ns += latency;
        }
        if first {
            self.rec.baseline_ns += latency;
        }
        self.rec.account_mem(&self.mm, self.now);
        self.handle_over_high(memcg)
    }

    /// Swap-in from `slot`: count it, free the slot, and shrink the zram pool if it can.
    fn swap_in(&mut self, slot: u32) {
        let mm = &mut self.mm;
        mm.vmstat.count(Ev::Pswpin, 1);
        mm.vmstat.count(Ev::Pgpgin, 4);
        mm.swap_free(slot);
    }

    /// `count_vm_event(e)` + `count_memcg_event_mm(mm, e)` for a fault of the task
    /// replaying `a`: PGFAULT (`handle_mm_fault`) and PGMAJFAULT (`do_swap_page`,
    /// `filemap_fault`) go to the faulting task's memcg (mm/memory.c 6.12), which for a
    /// page charged elsewhere (a swap-in charged at swap-out) may differ from the folio's.
    #[inline]
    pub(super) fn count_fault(&mut self, a: Access, e: Ev) {
        self.mm.vmstat.count(e, 1);
        let memcg = self.cgroup_map[a.cgroup as usize];
        self.mm.count_memcg_events(memcg, e, 1);
    }
}

impl<P: ReclaimPolicy> AllocCtx for Machine<P> {
    type P = P;
    #[inline(always)]
    fn mm(&mut self) -> &mut Mm {
        &mut self.mm
    }
    fn mm_and_policy(&mut self) -> (&mut Mm, &mut P) {
        (&mut self.mm, &mut self.policy)
    }
    fn task_now(&self) -> u64 {
        self.now
    }
    /// The tasks of a memcg run on the first node of its zonelist.
    #[inline(always)]
    fn local_node(&self, preferred: u16) -> u16 {
        preferred
    }
    fn wakeup_kswapd(&mut self, node: u16, order: u8, highest_zoneidx: u8, direct_reclaim: bool) {
        let compact = self.kswapd[node as usize].wakeup(&mut self.mm, self.now, order, highest_zoneidx, direct_reclaim);
        if compact > 0 {
            self.wakeup_kcompactd(node, compact, highest_zoneidx);
        }
        self.next_event = self.next_event.min(self.now);
    }
    fn wakeup_kcompactd(&mut self, node: u16, order: u8, highest_zoneidx: u8) {
        self.kcompactd[node as usize].wakeup(&mut self.mm, order, highest_zoneidx, self.now);
        self.next_event = self.next_event.min(self.now);
    }
    /// The work holds `node`'s zone/LRU lock for `thp.lock_share` of it, after waiting for
    /// another task's hold to end (sim/process.rs; never for a trace's one task).
    fn charge_work(&mut self, node: u16, ns: u64, reclaim: bool) {
        if reclaim {
            self.rec.direct_reclaim_ns += ns;
        }
        let wait = self.procs.lock_wait(node, self.now, ns, self.mm.cfg.thp.lock_share);
        self.rec.off_cpu_ns += wait;
        self.memstall(wait + ns);
    }
    fn catch_up(&mut self) -> Result<()> {
        self.kswapd_catch_up();
        self.check_oom()
    }
    fn kswapd_next_step(&self, node: u16) -> Option<u64> {
        self.kswapd[node as usize].next_step()
    }
    fn kswapd_step_end(&self, node: u16) -> Option<u64> {
        self.kswapd[node as usize].step_end()
    }
    fn reclaim_sleep_until(&mut self, t: u64) {
        let ns = t.saturating_sub(self.now);
        self.rec.direct_reclaim_ns += ns;
        self.rec.off_cpu_ns += ns;
        self.memstall(ns);
    }
    fn oom(&mut self, order: u8) -> Error {
        let lru = |m: &Self, a: LruList, b: LruList| (0..m.mm.nr_nodes() as u16).map(|n| m.mm.node_lru_pages(n, a) + m.mm.node_lru_pages(n, b)).sum::<u64>();
        Error::oom(format!(
            "no free memory and reclaim made no progress at access #{}{} ({} free pages, {} anon and {} file pages on the LRU, swap {})",
            self.accesses + 1,
            if order > 0 { format!(", order-{order} allocation") } else { String::new() },
            self.mm.total_free_pages(),
            lru(self, LruList::ActiveAnon, LruList::InactiveAnon),
            lru(self, LruList::ActiveFile, LruList::InactiveFile),
            self.swap_state(),
        ))
    }
}

impl<P: ReclaimPolicy> Engine for Machine<P> {
    fn run(&mut self, src: &mut dyn AccessSource, max_accesses: u64) -> Result<bool> {
        self.tick_ps = src.meta().tick_ps;
        self.paced = self.mm.cfg.trace_pacing_schedule && self.tick_ps != 0;
        if src.tasks().is_some() {
            return self.run_tasks(src, max_accesses);
        }
        let mut done = 0u64;
        let mut buf = std::mem::take(&mut self.buf);
        let result = (|| {
            while done < max_accesses {
                let want = (max_accesses - done).min(BATCH as u64) as usize;
                let start = self.ops_position(src)?;
                let n = src.read_batch(&mut buf, want)?;
                if n == 0 {
                    // Ops after the last record, once (run() may be called again at the end).
                    if !self.end_ops_done {
                        self.end_ops_done = true;
                        self.sync_cgroups(src.cgroups_seen());
                        self.run_ops(&src.meta().ops, start, u64::MAX)?;
                    }
                    return self.policy.take_error().map_or(Ok(true), Err);
                }
                self.end_ops_done = false;
                self.take_layout(src)?;
                // The trace's ops (memory.reclaim writes) split the batch: each runs
                // before the record it names. No ops: one segment, the whole batch.
                let ops = &src.meta().ops;
                let mut lo = 0usize;
                while lo < n {
                    let hi = self.run_ops(ops, start + lo as u64, start + n as u64)?.map_or(n, |at| (at - start) as usize);
                    for (i, &a) in buf[lo..hi].iter().enumerate() {
                        let i = lo + i;
                        crate::mm::prefetch::prefetch_access(&self.mm, &buf[..n], i);
                        self.access(a, &buf[i + 1..n])?;
                    }
                    lo = hi;
                }
                done += n as u64;
                if let Some(e) = self.policy.take_error() {
                    return Err(e);
                }
            }
            Ok(false)
        })();
        self.buf = buf;
        result
    }

    fn accesses(&self) -> u64 {
        self.accesses
    }

    fn take_damon_snapshots(&mut self) -> Vec<super::damon_snapshots::DamonSnapshot> {
        Machine::take_damon_snapshots(self)
    }

    fn finish(self: Box<Self>) -> RunResult {
        let m = *self;
        let policy = m.policy_name();
        let mut r = m.rec.finish(&m.mm, &m.kswapd, m.now, m.accesses, policy);
        r.metrics.extend(m.policy.metrics(&m.mm));
        if let Some(d) = &m.damon {
            r.metrics.extend(crate::damon::monitor::damon_metrics(d, m.now));
        }
        r
    }

    fn check_invariants(&self) -> std::result::Result<(), String> {
        self.mm.lists.check_invariants()?;
        self.mm.buddy.check_invariants(&self.mm.lists, &self.mm.frames.owner)?;
        self.mm.pcp.check_invariants(&self.mm.buddy, &self.mm.lists, &self.mm.frames.owner)?;
        self.policy.check_invariants(&self.mm)?;
        let lru: u64 = self.mm.lruvecs.iter().map(|l| l.lru_size.iter().sum::<u64>()).sum();
        let resident = self.mm.pages.pte.iter().filter(|&&p| is_resident(p)).count() as u64;
        // Subpages of a THP partly unmapped (MADV_DONTNEED): still in the folio, on its
        // LRU and charged, until it is split.
        let unmapped_subpage = |f: Pfn| self.mm.frames.test(f, pg::COMPOUND) && self.mm.frames.page(f) == crate::mm::page::NO_PAGE;
        let queued = (0..self.mm.pfn_end).filter(|&f| unmapped_subpage(f)).count() as u64;
        if lru != resident + queued {
            return Err(format!("{lru} pages on LRU lists but {resident} resident pages and {queued} unmapped THP subpages"));
        }
        let free = self.mm.total_free_pages();
        let pool = self.mm.swap.zram_pool.len() as u64;
        let kernel = self.mm.nr_kernel_used;
        let procs = self.procs_frames();
        let pcp = self.mm.pcp.nr_pages_all();
        if free + pcp + resident + pool + kernel + procs + queued != self.mm.nr_frames as u64 {
            return Err(format!(
                "frames not conserved: {free} free + {pcp} on per-CPU lists + {resident} resident + {pool} zram + {kernel} kernel-used + {procs} page tables and slab + {queued} unmapped THP subpages != {}",
                self.mm.nr_frames
            ));
        }
        for (page, &p) in self.mm.pages.pte.iter().enumerate() {
            if is_resident(p) && self.mm.frames.page(p) as usize != page {
                return Err(format!("page {page} maps pfn {p} which belongs to page {}", self.mm.frames.page(p)));
            }
            if is_swap_pte(p) {
                if !self.mm.swap.is_used(pte_swap_slot(p)) {
                    return Err(format!("page {page}: swap pte {p:#x} names a free slot"));
                }
            } else if !is_resident(p) && p != nonres_pte(pte_info(p)) {
                return Err(format!("page {page}: bad non-resident pte {p:#x}"));
            }
        }
        for (i, m) in self.mm.memcgs.iter().enumerate() {
            let charged = self.mm.pages.pte.iter().filter(|&&p| is_resident(p) && self.mm.frames.memcg(p) as usize == i).count() as u64
                + (0..self.mm.pfn_end).filter(|&f| unmapped_subpage(f) && self.mm.frames.memcg(f) as usize == i).count() as u64;
            // The pages behind its slab objects: the xarray nodes and buffer heads charged
            // to it, and what is left of their pages (memcontrol.rs obj_charge).
            let lvs = || self.mm.lruvecs.iter().enumerate().filter(|(_, l)| l.memcg as usize == i);
            let xa = lvs().map(|(lv, _)| self.mm.shadow_nodes.allocated(lv as u32)).sum::<u64>() * crate::mm::workingset::XA_NODE_CHARGED_BYTES;
            let bh = lvs().map(|(_, l)| l.buffer_heads_b).sum::<u64>();
            let with_buffers = self.mm.pages.pte.iter().filter(|&&p| is_resident(p) && self.mm.frames.memcg(p) as usize == i && self.mm.frames.test(p, pg::PRIVATE)).count() as u64;
            let per_folio = self.mm.folio_buffers_b();
            let slab = if i == crate::mm::memcontrol::ROOT_MEMCG as usize { 0 } else { xa + bh };
            if bh != with_buffers * per_folio || m.slab_reclaimable_b != slab || (m.slab_reclaimable_b + m.obj_stock_b) % reclaimlab_trace::PAGE_SIZE != 0 {
                return Err(format!(
                    "memcg '{}': slab {} B (stock {} B) but {xa} B of xarray nodes and {bh} B of buffer heads ({with_buffers} folios with buffers)",
                    m.name, m.slab_reclaimable_b, m.obj_stock_b
                ));
            }
            if charged + m.kmem_pages() != m.usage {
                return Err(format!("memcg '{}' usage {} but {charged} resident pages and {} slab pages charged", m.name, m.usage, m.kmem_pages()));
            }
            let of_memcg = |flag: u32| {
                self.mm.pages.pte.iter().filter(|&&p| is_resident(p) && self.mm.frames.memcg(p) as usize == i && self.mm.frames.is_file(p) && self.mm.frames.test(p, flag)).count()
                    as u64
            };
            if (of_memcg(pg::DIRTY), of_memcg(pg::WRITEBACK)) != (m.nr_dirty, m.nr_writeback) {
                return Err(format!(
                    "memcg '{}' nr_dirty/nr_writeback {}/{} but {}/{} such pages",
                    m.name,
                    m.nr_dirty,
                    m.nr_writeback,
                    of_memcg(pg::DIRTY),
                    of_memcg(pg::WRITEBACK)
                ));
            }
        }
        let dirty = self.mm.pages.pte.iter().filter(|&&p| is_resident(p) && self.mm.frames.is_file(p) && self.mm.frames.test(p, pg::DIRTY)).count() as u64;
        if dirty != self.mm.wb.nr_dirty {
            return Err(format!("{dirty} dirty file pages but nr_dirty {}", self.mm.wb.nr_dirty));
        }
        let writeback = self.mm.pages.pte.iter().filter(|&&p| is_resident(p) && self.mm.frames.test(p, pg::WRITEBACK)).count() as u64;
        if writeback != self.mm.wb.nr_writeback {
            return Err(format!("{writeback} pages under writeback but nr_writeback {}", self.mm.wb.nr_writeback));
        }
        // A THP: an aligned pageblock whose 512 frames are PG_compound, one folio until
        // it is split, every frame mapped by the page of its PMD range at the same offset
        // or by none.
        for (pb, &huge) in self.mm.thp.huge.iter().enumerate() {
            let head = (pb as u32) << crate::mm::page_alloc::PAGEBLOCK_ORDER;
            if huge && !self.mm.frames.test(head, pg::HEAD) {
                return Err(format!("pageblock {pb}: a THP that is not one folio (no PG_head) but not split"));
            }
            for f in head..(head + HPAGE_PMD_NR).min(self.mm.pfn_end) {
                if self.mm.frames.test(f, pg::COMPOUND) != huge {
                    return Err(format!("pfn {f}: PG_compound {} but pageblock huge {huge}", !huge));
                }
                let page = self.mm.frames.page(f);
                if huge && page != crate::mm::page::NO_PAGE && page % HPAGE_PMD_NR != f - head {
                    return Err(format!("THP subpage pfn {f} maps page {page}, not offset {} of its PMD range", f - head));
                }
            }
        }
        self.mm.thp.deferred_split.check(&self.mm.thp.huge, |pb| self.mm.frames.memcg((pb as u32) << crate::mm::page_alloc::PAGEBLOCK_ORDER))?;
        for (pb, &partial) in self.mm.thp.split_queued.iter().enumerate() {
            if partial && !self.mm.thp.deferred_split.is_queued(pb) {
                return Err(format!("pageblock {pb}: a partially mapped THP on no deferred split queue"));
            }
        }
        let mm = &self.mm;
        mm.shadow_nodes.check(|p| is_resident(mm.pages.pte[p as usize]), |p| mm.pages.shadow(p as usize) != 0, |n| mm.swap.node_shadows(n))?;
        if self.mm.swap.used > self.mm.swap.pages() {
            return Err("swap over-committed".into());
        }
        self.mm.swap.check()
    }
}

impl<P: ReclaimPolicy> Machine<P> {
    /// The index of the source's next record, for a source with ops (0 otherwise: unused).
    fn ops_position(&self, src: &dyn AccessSource) -> Result<u64> {
        if src.meta().ops.is_empty() {
            return Ok(0);
        }
        src.position().ok_or_else(|| Error::invalid(format!("a {} source carries memory.reclaim ops but cannot tell its position", src.meta().format)))
    }

    /// Perform the ops at position `pos` (before record `pos`), in table order, each after
    /// kswapd has caught up with the workload's clock. Returns the position of the next op
    /// before record `end`, if any: the replay runs the records up to it, then calls again.
    fn run_ops(&mut self, ops: &[reclaimlab_trace::TraceOp], pos: u64, end: u64) -> Result<Option<u64>> {
        let mut k = ops.partition_point(|op| op.at < pos);
        while let Some(op) = ops.get(k).filter(|op| op.at == pos) {
            let memcg = *self.cgroup_map.get(op.cgroup as usize).ok_or_else(|| Error::invalid(format!("op names trace cgroup {} of {}", op.cgroup, self.cgroup_map.len())))?;
            self.kswapd_catch_up();
            match op.kind {
                reclaimlab_trace::OpKind::MemoryReclaim { bytes, swappiness } => {
                    self.memory_reclaim(memcg, bytes, swappiness.map(u32::from));
                }
                reclaimlab_trace::OpKind::Madvise { first, nr_pages, advice } => self.trace_madvise(first, nr_pages, advice)?,
            }
            self.next_event = self.next_event.min(self.now);
            k += 1;
        }
        Ok(ops.get(k).map(|op| op.at).filter(|&at| at < end))
    }

    fn policy_name(&self) -> String {
        self.mm.cfg.policy.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::Zonelist;

    #[test]
    fn a_zonelist_starts_at_home_and_wraps() {
        assert_eq!(&*Zonelist::new(0, 1), &[0]);
        assert_eq!(&*Zonelist::new(2, 4), &[2, 3, 0, 1]);
        assert_eq!(&*Zonelist::new(63, 64), &(0..64).map(|i| ((63 + i) % 64) as u16).collect::<Vec<_>>()[..]);
        for n in 1..=64u16 {
            for home in 0..n {
                let z = Zonelist::new(home, n);
                assert_eq!(z.len(), n as usize);
                assert!(z.iter().enumerate().all(|(i, &node)| node == (home + i as u16) % n), "home {home} of {n}");
            }
        }
        assert_eq!(&*Zonelist::single(5), &[5]);
        assert_eq!(&*Zonelist::single(63), &[63]);
    }
}
